// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The protected list: globs whose leading components match the target name
 * a protected cgroup below it; slips in an entry ("//", "/./", a trailing
 * '/', no leading '/', an inline comment) do not make it match nothing; what
 * cannot be understood (a NUL byte, a ".." component) fails closed, naming
 * the line; a target outside the caller's cgroup namespace, whose path no
 * entry can match, is refused while there is a list.
 *
 * Every case builds <box>/<case>/{T,S} with sentinels in <case> and S, a
 * sleeper in T and one in T/precious, and kills T for real with a list that
 * protects T/precious: the list must stop it. Only sandbox cgroups are ever
 * targeted.
 *
 * Then the format of the list (comments, blank lines, blanks around an
 * entry, CR LF), the option and the variable that name it, -f, a missing
 * list file, and the ancestors of a protected cgroup, protected too.
 */
#include <errno.h>
#include <locale.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgkill.h"
#include "support/cgfile.h"
#include "support/cmd.h"
#include "support/internals.h"
#include "support/kill.h"
#include "support/sandbox.h"
#include "support/scene.h"
#include "support/spawn.h"
#include "support/tap.h"

static char *box;		/* v2 sandbox */
static const char *boxrel;	/* ... as a path from the hierarchy root */

/* tmpl with @B the sandbox's path from the hierarchy root, @b the same
 * without its leading '/', @C the case's name, @0 a NUL byte: its length. */
static size_t expand(const char *tmpl, const char *name, char *out, size_t size)
{
	size_t n = 0;

	for (const char *t = tmpl; *t && n + 1 < size; t++) {
		const char *put = NULL;
		size_t len;

		if (t[0] == '@' && t[1] == 'B')
			put = boxrel;
		else if (t[0] == '@' && t[1] == 'b')
			put = boxrel + 1;
		else if (t[0] == '@' && t[1] == 'C')
			put = name;
		else if (t[0] == '@' && t[1] == '0')
			put = "";
		if (!put) {
			out[n++] = *t;
			continue;
		}
		t++;
		len = strlen(put) + !*put;	/* "" stands for one NUL */
		if (n + len >= size)
			break;
		memcpy(out + n, put, len);
		n += len;
	}
	out[n] = '\0';
	return n;
}

/* The library with the list file (NULL: the built-in list) and flags. */
static int kill_list(const char *path, unsigned flags, const char *list, cgk_report **rep)
{
	return kill_opts(path, CGK_BACKEND_AUTO, SIGKILL, flags, 3000, list, rep);
}

enum want { REFUSED, BAD_LINE, ALLOWED };

struct pcase {
	const char *name, *what, *list;
	enum want want;
	unsigned line;		/* BAD_LINE: the line the message names */
	const char *keep;	/* the protected child of T; "precious" if NULL */
};

static const struct pcase cases[] = {
	/* Globs above the target. */
	{ "g-star", "'*' for the target", "@B/@C/*/precious\n", REFUSED, 0, NULL },
	{ "g-bracket", "'[T]' for the target", "@B/@C/[T]/precious\n", REFUSED, 0, NULL },
	{ "g-qmark", "'?' for the target", "@B/@C/?/precious\n", REFUSED, 0, NULL },
	{ "g-parent", "'*' for the target's parent", "@B/*/T/precious\n", REFUSED, 0, NULL },
	{ "g-box", "'*' for the sandbox", "/*/@C/T/precious\n", REFUSED, 0, NULL },
	{ "g-all", "'*' for every component above", "/*/*/*/precious\n", REFUSED, 0, NULL },
	{ "g-below", "a glob above and a pattern below the target", "@B/@C/[ST]/*\n", REFUSED, 0,
	  NULL },
	/* Slips. */
	{ "s-trail", "a trailing '/'", "@B/@C/T/precious/\n", REFUSED, 0, NULL },
	{ "s-double", "'//'", "@B//@C/T//precious\n", REFUSED, 0, NULL },
	{ "s-dot", "'/./'", "@B/./@C/T/./precious/.\n", REFUSED, 0, NULL },
	{ "s-lead", "no leading '/'", "@b/@C/T/precious\n", REFUSED, 0, NULL },
	{ "s-comment", "an inline '# comment'", "@B/@C/T/precious   # the database\n", REFUSED, 0,
	  NULL },
	{ "s-tabcomment", "an inline '#comment' after a tab, CR LF", "@B/@C/T/precious\t#db\r\n",
	  REFUSED, 0, NULL },
	{ "s-blanks", "a name that ends in a blank", "@B/@C/T/keep \n", REFUSED, 0, "keep " },
	/* Entries that cannot be understood. */
	{ "s-nul", "a NUL byte", "# protected\n/elsewhere\n/x@0y\n@B/@C/T/precious\n", BAD_LINE, 3,
	  NULL },
	{ "s-nul-comment", "a NUL byte in a comment", "@B/@C/S\n# a@0b\n", BAD_LINE, 2, NULL },
	{ "s-dotdot", "a '..' component", "# protected\n@B/@C/S/../T/precious\n", BAD_LINE, 2, NULL },
	/* Negative controls. */
	{ "n-other", "unrelated globs and an absent name below",
	  "@B/@C/*/elsewhere\n@B/@C/S/*\n@B/@C/T/precious/absent\n@B/*/S\n", ALLOWED, 0, NULL },
	{ "n-comments", "comments only", "# @B/@C/T/precious\n\n   # @B/@C/*/precious\n\t\n", ALLOWED, 0,
	  NULL },
	{ "n-hash", "a '#' not after a blank is part of the name", "@B/@C/T/precious#1\n", ALLOWED, 0,
	  NULL },
};

static void run_case(const struct pcase *c)
{
	char file[] = "/tmp/cgkill-protected.XXXXXX", text[8192], needle[64], buf[512];
	const char *keep = c->keep ?: "precious";
	struct scene s;
	cgk_report *rep = NULL;
	struct cmd cli;
	char *protect = NULL;
	pid_t pt = -1, pp = -1;
	size_t len;
	int r;

	if (!scene_start(&s, box, c->name))
		goto out;
	protect = sb_mkdir(s.target, keep);
	pt = sb_sleeper(s.target);
	pp = protect ? sb_sleeper(protect) : -1;
	len = expand(c->list, c->name, text, sizeof(text));
	if (!ok(pt > 0 && pp > 0 && sb_temp_file(file, text, len),
		"%s: sleepers in T and T/%s, a list file", c->name, keep))
		goto out;
	snprintf(needle, sizeof(needle), "%s:%u:", file, c->line);

	/* Dry runs: T/keep itself, the case's parent, and forced. */
	if (c->want != ALLOWED) {
		r = kill_list(protect, CGK_DRY_RUN, file, &rep);
		if (c->want == REFUSED)
			ok(r == -EPERM && cgk_report_refused(rep) == CGK_GUARD_PROTECTED,
			   "%s: %s: a dry run of T/%s is refused (%s)", c->name, c->what, keep, cgk_report_message(rep));
		else
			ok(r == -EINVAL && strstr(cgk_report_message(rep), needle) && strstr(cgk_report_message(rep), "fail closed"),
			   "%s: %s: a dry run of T/%s fails, naming the line (%s)", c->name, c->what, keep,
			   cgk_report_message(rep));
		rep = cgk_report_free(rep);
		r = kill_list(s.parent, CGK_DRY_RUN, file, &rep);
		ok(r < 0 && (cgk_report_refused(rep) == CGK_GUARD_PROTECTED || c->want == BAD_LINE),
		   "%s: a dry run of T's parent is stopped too (%s)", c->name, cgk_report_message(rep));
		rep = cgk_report_free(rep);
		r = kill_list(s.target, CGK_DRY_RUN | CGK_FORCE, file, &rep);
		ok(r == 0 && cgk_report_refused(rep) == CGK_GUARD_NONE && cgk_report_n_processes(rep, CGK_LIST_LISTED) == 2,
		   "%s: a forced dry run of T proceeds (%d: %s)", c->name, r, cgk_report_message(rep));
		rep = cgk_report_free(rep);
	}

	/* The real thing, through the library and the command. */
	r = kill_list(s.target, 0, file, &rep);
	switch (c->want) {
	case REFUSED:
		ok(r == -EPERM && cgk_report_refused(rep) == CGK_GUARD_PROTECTED,
		   "%s: %s: cgk_kill of T is refused (%s)", c->name, c->what, cgk_report_message(rep));
		break;
	case BAD_LINE:
		ok(r == -EINVAL && cgk_report_refused(rep) == CGK_GUARD_NONE && strstr(cgk_report_message(rep), needle),
		   "%s: %s: cgk_kill of T fails closed, naming the line (%s)", c->name, c->what,
		   cgk_report_message(rep));
		break;
	case ALLOWED:
		ok(r == 0 && cgk_report_refused(rep) == CGK_GUARD_NONE && cgk_report_emptied(rep),
		   "%s: %s: cgk_kill of T proceeds (%d: %s)", c->name, c->what, r, cgk_report_message(rep));
		break;
	}
	rep = cgk_report_free(rep);
	if (c->want == ALLOWED) {
		ok(sb_killed_by(pt, SIGKILL, 3000) && sb_killed_by(pp, SIGKILL, 3000),
		   "%s: the sleepers in T and T/%s died of KILL", c->name, keep);
		goto out;
	}
	cmd_run(&cli, CMD_MS, "--protected", file, s.target, NULL);
	if (c->want == REFUSED)
		is_int(cli.status, 4, "%s: cgkill --protected FILE T exits 4 (%s)", c->name,
		       first_line(cli.err, buf, sizeof(buf)));
	else
		ok(cli.status == 1 && strstr(cli.err, needle),
		   "%s: cgkill --protected FILE T exits 1, naming the line (%d: %s)", c->name,
		   cli.status, first_line(cli.err, buf, sizeof(buf)));
	cmd_free(&cli);
	ok(sb_alive(pt) && sb_alive(pp), "%s: the sleepers in T and T/%s are alive", c->name, keep);
out:
	unlink(file);
	free(protect);
	scene_end(&s);
}

/* A target outside the caller's cgroup namespace: a child moves into X,
 * unshares its cgroup namespace (rooted at X) and, through the host's
 * mount, sees its sibling T as "/../T", which no entry can match. */
struct ns_arg {
	const char *nsroot, *target, *list, *comments;
};

struct ns_out {
	int setup;
	char rel[256];
	int r_comments, refused_comments, listed_comments;
	int r_force, listed_force;
	int r_default, refused_default;
	int r, refused;
	char msg[512];
};

static void ns_child(void *argp, void *outp)
{
	struct ns_arg *a = argp;
	struct ns_out *o = outp;
	cgk_report *rep = NULL;
	struct cgk_target t;
	char msg[4608];

	if (sb_join(a->nsroot) < 0 || unshare(CLONE_NEWCGROUP) < 0) {
		o->setup = -errno;
		return;
	}
	if (target_open(a->target, &t, msg, sizeof(msg)) == 0) {
		snprintf(o->rel, sizeof(o->rel), "%.250s", t.rel);
		cgk_target_close(&t);
	}
	o->r_comments = kill_list(a->target, CGK_DRY_RUN, a->comments, &rep);
	o->refused_comments = cgk_report_refused(rep);
	o->listed_comments = (int)cgk_report_n_processes(rep, CGK_LIST_LISTED);
	rep = cgk_report_free(rep);
	o->r_force = kill_list(a->target, CGK_DRY_RUN | CGK_FORCE, a->list, &rep);
	o->listed_force = (int)cgk_report_n_processes(rep, CGK_LIST_LISTED);
	rep = cgk_report_free(rep);
	/* No file: the built-in list applies, and it has entries. */
	setenv("CGKILL_PROTECTED", "/nonexistent/cgkill-protected", 1);
	o->r_default = kill_list(a->target, CGK_DRY_RUN, NULL, &rep);
	o->refused_default = cgk_report_refused(rep);
	rep = cgk_report_free(rep);
	o->r = kill_list(a->target, 0, a->list, &rep);
	o->refused = cgk_report_refused(rep);
	snprintf(o->msg, sizeof(o->msg), "%.500s", cgk_report_message(rep));
	rep = cgk_report_free(rep);
}

static void test_outside_ns(void)
{
	char list[] = "/tmp/cgkill-protected.XXXXXX", comments[] = "/tmp/cgkill-protected.XXXXXX";
	char text[4500];
	struct scene s;
	struct ns_out o;
	struct ns_arg a;
	char *x = NULL;
	pid_t p = -1;
	int r;

	if (!scene_start(&s, box, "cgns"))
		goto out;
	x = sb_mkdir(s.parent, "X");
	p = sb_sleeper(s.target);
	snprintf(text, sizeof(text), "%s/cgns/T/precious\n", boxrel);
	if (!ok(x && p > 0 && sb_temp_file(list, text, strlen(text)) &&
		sb_temp_file(comments, "# nothing\n", 10), "cgns: a sleeper in T, list files"))
		goto out;
	a = (struct ns_arg){ .nsroot = x, .target = s.target, .list = list, .comments = comments };
	r = child_call(ns_child, &a, &o, sizeof(o), 60000, NULL);
	if (!is_int(r, 0, "cgns: a child in a cgroup namespace rooted at the sibling X reports"))
		goto out;
	if (o.setup < 0) {
		skip("cgns: cannot make a cgroup namespace: %s", strerror(-o.setup));
		goto out;
	}
	ok(!strncmp(o.rel, "/../", 4), "cgns: the child sees T as %s", o.rel);
	ok(o.r_comments == 0 && o.refused_comments == CGK_GUARD_NONE && o.listed_comments == 1,
	   "cgns: with a list of comments only, a dry run of T proceeds (%d)", o.r_comments);
	ok(o.r_force == 0 && o.listed_force == 1, "cgns: with the list and --force, too (%d)", o.r_force);
	ok(o.r_default == -EPERM && o.refused_default == CGK_GUARD_PROTECTED,
	   "cgns: with the built-in list, a dry run of T is refused (%d)", o.r_default);
	ok(o.r == -EPERM && o.refused == CGK_GUARD_PROTECTED && strstr(o.msg, "namespace"),
	   "cgns: with a list, cgk_kill of T is refused: the list cannot be checked (%s)", o.msg);
	ok(sb_alive(p), "cgns: the sleeper in T is alive");
out:
	unlink(list);
	unlink(comments);
	free(x);
	scene_end(&s);
}

/* A library caller in a UTF-8 locale: a cgroup name that is not UTF-8 is
 * still matched by a glob (glibc's fnmatch() falls back to bytes). */
static void test_locale(void)
{
	char *t = sb_mkdir(box, "loc/\xff"), file[] = "/tmp/cgkill-prot.XXXXXX", list[512];
	cgk_report *rep = NULL;
	pid_t p;
	int r;

	snprintf(list, sizeof(list), "%s/loc/*\n", boxrel);
	if (!t || (p = sb_sleeper(t)) < 0 || !sb_temp_file(file, list, strlen(list)) ||
	    !setlocale(LC_ALL, "C.UTF-8")) {
		skip("locale: C.UTF-8 or the setup is missing");
		free(t);
		return;
	}
	r = kill_list(t, 0, file, &rep);
	setlocale(LC_ALL, "C");
	ok(r == -EPERM && cgk_report_refused(rep) == CGK_GUARD_PROTECTED,
	   "locale: in C.UTF-8, a name that is not UTF-8 is matched by its glob (%d: %s)", r, cgk_report_message(rep));
	ok(sb_alive(p), "locale: its process lives");
	rep = cgk_report_free(rep);
	unlink(file);
	sb_destroy(t);
	free(t);
}

/* ---- the list file: its format, the option, the variable, -f ---- */

static void test_list_format(void)
{
	struct scene s;
	char file[] = "/tmp/cgkill-protected.XXXXXX", *rel, text[8192];
	const char *names[] = { "exact", "exact/child", "glob-a", "glob-a/x", "trail", "cr",
				"# not a comment", "other" };
	enum { EXACT, EXACT_CHILD, GLOB, GLOB_CHILD, TRAIL, CR, HASH, OTHER, N_NAMES };
	char *dirs[N_NAMES] = { 0 };
	pid_t pids[N_NAMES];

	if (!scene_start(&s, box, "protect"))
		goto out;
	rel = s.target + strlen(sb_mount(SB_V2));
	for (int i = 0; i < N_NAMES; i++) {
		dirs[i] = sb_mkdir(s.target, names[i]);
		pids[i] = dirs[i] ? sb_sleeper(dirs[i]) : -1;
	}
	snprintf(text, sizeof(text),
		 "# cgkill protected cgroups\n"
		 "\n"
		 "   %s/exact\n"
		 "\t%s/glob-*\n"
		 "%s/trail   \n"
		 "%s/cr\r\n"
		 "#%s/other\n",
		 rel, rel, rel, rel, rel);
	if (!ok(sb_temp_file(file, text, strlen(text)) && pids[OTHER] > 0,
		"protect: a list file and sleepers"))
		goto out;

	{
		static const struct { int i; enum cgk_guard want; const char *what; } entries[] = {
			{ EXACT, CGK_GUARD_PROTECTED, "an exact entry with leading blanks" },
			{ EXACT_CHILD, CGK_GUARD_NONE, "a descendant of an exact entry" },
			{ GLOB, CGK_GUARD_PROTECTED, "a glob" },
			{ GLOB_CHILD, CGK_GUARD_NONE, "below a glob ('*' does not cross '/')" },
			{ TRAIL, CGK_GUARD_PROTECTED, "an entry with trailing blanks" },
			{ CR, CGK_GUARD_PROTECTED, "an entry ending in CR LF" },
			{ OTHER, CGK_GUARD_NONE, "a commented-out entry" },
		};

		for (size_t c = 0; c < sizeof(entries) / sizeof(entries[0]); c++) {
			cgk_report *rep = NULL;
			const char *d = dirs[entries[c].i];
			int r = kill_list(d, CGK_DRY_RUN, file, &rep);

			is_int(cgk_report_refused(rep), entries[c].want, "protect (option): %s: %s", entries[c].what,
			       entries[c].want ? "refused" : "allowed");
			if (entries[c].want)
				is_int(r, -EPERM, "protect: ... with EPERM");
			rep = cgk_report_free(rep);
		}
	}

	/* A cgroup that contains a protected one is protected too. */
	{
		cgk_report *rep = NULL;
		int r = kill_list(s.target, CGK_DRY_RUN, file, &rep);

		ok(r == -EPERM && cgk_report_refused(rep) == CGK_GUARD_PROTECTED,
		   "protect: an ancestor of a protected cgroup is refused (%s)", cgk_report_message(rep));
		rep = cgk_report_free(rep);
		r = kill_list(s.parent, CGK_DRY_RUN, file, &rep);
		ok(r == -EPERM && cgk_report_refused(rep) == CGK_GUARD_PROTECTED,
		   "protect: ... and its parent");
		rep = cgk_report_free(rep);
	}

	/* Through the command: the option and the variable; -f overrides. */
	{
		char opt[128];
		struct cmd_opts env = { .env = { NULL } };
		struct cmd cli;

		snprintf(opt, sizeof(opt), "CGKILL_PROTECTED=%s", file);
		env.env[0] = opt;
		cmd_run(&cli, CMD_MS, "--protected", file, dirs[EXACT], NULL);
		is_int(cli.status, 4, "protect: cgkill --protected FILE on a protected cgroup exits 4");
		ok(strstr(cli.err, "protected") != NULL, "protect: it says why: %.*s",
		   (int)strcspn(cli.err, "\n"), cli.err);
		cmd_free(&cli);
		cmd_run_opts(&cli, &env, CMD_MS, dirs[GLOB], NULL);
		is_int(cli.status, 4, "protect: CGKILL_PROTECTED=FILE: exits 4 on a glob match");
		cmd_free(&cli);
		ok(sb_alive(pids[EXACT]) && sb_alive(pids[GLOB]), "protect: the protected sleepers are alive");
		cmd_run_opts(&cli, &env, CMD_MS, dirs[EXACT_CHILD], NULL);
		is_int(cli.status, 0, "protect: a descendant of a protected cgroup is killed (exit 0)");
		cmd_free(&cli);
		ok(sb_killed_by(pids[EXACT_CHILD], SIGKILL, 3000), "protect: ... its sleeper died");
		ok(sb_alive(pids[EXACT]), "protect: ... and the protected parent's sleeper is alive");
		cmd_run_opts(&cli, &env, CMD_MS, "-f", dirs[GLOB], NULL);
		is_int(cli.status, 0, "protect: -f overrides the list (exit 0)");
		cmd_free(&cli);
		ok(sb_killed_by(pids[GLOB], SIGKILL, 3000), "protect: ... the sleeper died");
		cmd_run(&cli, CMD_MS, "--protected", "/nonexistent/cgkill-list", dirs[OTHER], NULL);
		is_int(cli.status, 1, "protect: a --protected file that is missing is an error (exit 1)");
		cmd_free(&cli);
		ok(sb_alive(pids[OTHER]), "protect: ... and nothing was signalled");
	}
	unlink(file);
out:
	for (int i = 0; i < N_NAMES; i++)
		free(dirs[i]);
	scene_end(&s);
}

/* ---- a protected cgroup protects its ancestors ---- */

static void test_protect_ancestors(void)
{
	struct scene s;
	char file[] = "/tmp/cgkill-protected.XXXXXX", glob[4400], text[4500];
	char *keep = NULL;
	pid_t pk = -1, pt = -1;
	bool written = false;

	if (!scene_start(&s, box, "protect"))
		goto out;
	keep = sb_mkdir(s.target, "a/keep");
	pk = keep ? sb_sleeper(keep) : -1;
	pt = sb_sleeper(s.target);
	snprintf(glob, sizeof(glob), "%s/a/keep", sb_rel_v2(s.target));
	snprintf(text, sizeof(text), "# review\n%s\n", glob);
	written = sb_temp_file(file, text, strlen(text));
	if (!ok(pk > 0 && pt > 0 && written,
		"protect: T/a/keep and T with a sleeper each, a list file"))
		goto out;

	{
		cgk_report *rep = NULL;
		int r = kill_list(s.target, 0, file, &rep);

		ok(r == -EPERM && cgk_report_refused(rep) == CGK_GUARD_PROTECTED &&
		   strstr(cgk_report_message(rep), glob),
		   "protect: cgk_kill of the parent of a protected cgroup is refused, naming the glob (%s)",
		   cgk_report_message(rep));
		rep = cgk_report_free(rep);
		r = kill_list(s.parent, CGK_DRY_RUN, file, &rep);
		ok(r == -EPERM && cgk_report_refused(rep) == CGK_GUARD_PROTECTED,
		   "protect: a dry run two levels up is refused too");
		rep = cgk_report_free(rep);
	}
	{
		struct cmd cli;

		cmd_run(&cli, CMD_MS, "--protected", file, s.target, NULL);
		is_int(cli.status, 4, "protect: cgkill --protected FILE on the parent exits 4");
		ok(strstr(cli.err, glob) != NULL, "protect: the message names the glob: %.*s",
		   (int)strcspn(cli.err, "\n"), cli.err);
		cmd_free(&cli);
		ok(sb_alive(pk) && sb_alive(pt), "protect: both sleepers are alive");
		cmd_run(&cli, CMD_MS, "-f", "--protected", file, s.target, NULL);
		is_int(cli.status, 0, "protect: with -f it proceeds (exit 0)");
		cmd_free(&cli);
		ok(sb_killed_by(pk, SIGKILL, 3000) && sb_killed_by(pt, SIGKILL, 3000),
		   "protect: ... and both sleepers died of KILL");
	}
out:
	if (written)
		unlink(file);
	free(keep);
	scene_end(&s);
}

int main(void)
{
	box = sb_start(600);
	boxrel = sb_rel_v2(box);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
	test_outside_ns();
	test_locale();
	test_list_format();
	test_protect_ancestors();

	return sb_finish(box);
}
