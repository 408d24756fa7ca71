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
#include "internal.h"
#include "sandbox.h"
#include "secutil.h"
#include "tap.h"

static char *box;		/* v2 sandbox */
static const char *boxrel;	/* ... as a path from the hierarchy root */

static int kill_opts(const char *path, unsigned flags, const char *protected_file,
		     struct cgk_report *rep)
{
	struct cgk_options o = CGK_OPTIONS_INIT;

	o.flags = flags;
	o.wait_ms = 3000;
	o.protected_file = protected_file;
	return cgk_kill(path, &o, rep);
}

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

/* A list file holding text[0..len); false if it cannot be written. */
static bool write_list(char *file, const char *text, size_t len)
{
	int fd = mkstemp(file);
	bool done;

	if (fd < 0)
		return false;
	done = write(fd, text, len) == (ssize_t)len;
	close(fd);
	return done;
}

static const char *line1(const char *s, char *buf, size_t size)
{
	snprintf(buf, size, "%.*s", (int)strcspn(s, "\n"), s);
	return buf;
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
	struct sec_scene s;
	struct cgk_report rep;
	struct sec_cli *cli;
	char *protect = NULL;
	pid_t pt = -1, pp = -1;
	size_t len;
	int r;

	if (!sec_scene_start(&s, box, c->name))
		goto out;
	protect = sb_mkdir(s.target, keep);
	pt = sb_sleeper(s.target);
	pp = protect ? sb_sleeper(protect) : -1;
	len = expand(c->list, c->name, text, sizeof(text));
	if (!ok(pt > 0 && pp > 0 && write_list(file, text, len),
		"%s: sleepers in T and T/%s, a list file", c->name, keep))
		goto out;
	snprintf(needle, sizeof(needle), "%s:%u:", file, c->line);

	/* Dry runs: T/keep itself, the case's parent, and forced. */
	if (c->want != ALLOWED) {
		r = kill_opts(protect, CGK_DRY_RUN, file, &rep);
		if (c->want == REFUSED)
			ok(r == -EPERM && rep.refused == CGK_GUARD_PROTECTED,
			   "%s: %s: a dry run of T/%s is refused (%s)", c->name, c->what, keep, rep.message);
		else
			ok(r == -EINVAL && strstr(rep.message, needle) && strstr(rep.message, "fail closed"),
			   "%s: %s: a dry run of T/%s fails, naming the line (%s)", c->name, c->what, keep,
			   rep.message);
		cgk_report_free(&rep);
		r = kill_opts(s.parent, CGK_DRY_RUN, file, &rep);
		ok(r < 0 && (rep.refused == CGK_GUARD_PROTECTED || c->want == BAD_LINE),
		   "%s: a dry run of T's parent is stopped too (%s)", c->name, rep.message);
		cgk_report_free(&rep);
		r = kill_opts(s.target, CGK_DRY_RUN | CGK_FORCE, file, &rep);
		ok(r == 0 && rep.refused == CGK_GUARD_NONE && rep.listed.n == 2,
		   "%s: a forced dry run of T proceeds (%d: %s)", c->name, r, rep.message);
		cgk_report_free(&rep);
	}

	/* The real thing, through the library and the command. */
	r = kill_opts(s.target, 0, file, &rep);
	switch (c->want) {
	case REFUSED:
		ok(r == -EPERM && rep.refused == CGK_GUARD_PROTECTED,
		   "%s: %s: cgk_kill of T is refused (%s)", c->name, c->what, rep.message);
		break;
	case BAD_LINE:
		ok(r == -EINVAL && rep.refused == CGK_GUARD_NONE && strstr(rep.message, needle),
		   "%s: %s: cgk_kill of T fails closed, naming the line (%s)", c->name, c->what,
		   rep.message);
		break;
	case ALLOWED:
		ok(r == 0 && rep.refused == CGK_GUARD_NONE && rep.emptied,
		   "%s: %s: cgk_kill of T proceeds (%d: %s)", c->name, c->what, r, rep.message);
		break;
	}
	cgk_report_free(&rep);
	if (c->want == ALLOWED) {
		ok(sb_killed_by(pt, SIGKILL, 3000) && sb_killed_by(pp, SIGKILL, 3000),
		   "%s: the sleepers in T and T/%s died of KILL", c->name, keep);
		goto out;
	}
	cli = sec_cli_run(NULL, "--protected", file, s.target, NULL);
	if (cli) {
		if (c->want == REFUSED)
			is_int(cli->status, 4, "%s: cgkill --protected FILE T exits 4 (%s)", c->name,
			       line1(cli->err, buf, sizeof(buf)));
		else
			ok(cli->status == 1 && strstr(cli->err, needle),
			   "%s: cgkill --protected FILE T exits 1, naming the line (%d: %s)", c->name,
			   cli->status, line1(cli->err, buf, sizeof(buf)));
		free(cli);
	}
	ok(sb_alive(pt) && sb_alive(pp), "%s: the sleepers in T and T/%s are alive", c->name, keep);
out:
	unlink(file);
	free(protect);
	sec_scene_end(&s);
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
	struct cgk_report rep;
	struct cgk_target t;
	char msg[4608];

	if (sb_join(a->nsroot) < 0 || unshare(CLONE_NEWCGROUP) < 0) {
		o->setup = -errno;
		return;
	}
	if (cgk_target_open(a->target, &t, msg, sizeof(msg)) == 0) {
		snprintf(o->rel, sizeof(o->rel), "%.250s", t.rel);
		cgk_target_close(&t);
	}
	o->r_comments = kill_opts(a->target, CGK_DRY_RUN, a->comments, &rep);
	o->refused_comments = rep.refused;
	o->listed_comments = (int)rep.listed.n;
	cgk_report_free(&rep);
	o->r_force = kill_opts(a->target, CGK_DRY_RUN | CGK_FORCE, a->list, &rep);
	o->listed_force = (int)rep.listed.n;
	cgk_report_free(&rep);
	/* No file: the built-in list applies, and it has entries. */
	setenv("CGKILL_PROTECTED", "/nonexistent/cgkill-protected", 1);
	o->r_default = kill_opts(a->target, CGK_DRY_RUN, NULL, &rep);
	o->refused_default = rep.refused;
	cgk_report_free(&rep);
	o->r = kill_opts(a->target, 0, a->list, &rep);
	o->refused = rep.refused;
	snprintf(o->msg, sizeof(o->msg), "%.500s", rep.message);
	cgk_report_free(&rep);
}

static void test_outside_ns(void)
{
	char list[] = "/tmp/cgkill-protected.XXXXXX", comments[] = "/tmp/cgkill-protected.XXXXXX";
	char text[4500];
	struct sec_scene s;
	struct ns_out o;
	struct ns_arg a;
	char *x = NULL;
	pid_t p = -1;
	int r;

	if (!sec_scene_start(&s, box, "cgns"))
		goto out;
	x = sb_mkdir(s.parent, "X");
	p = sb_sleeper(s.target);
	snprintf(text, sizeof(text), "%s/cgns/T/precious\n", boxrel);
	if (!ok(x && p > 0 && write_list(list, text, strlen(text)) &&
		write_list(comments, "# nothing\n", 10), "cgns: a sleeper in T, list files"))
		goto out;
	a = (struct ns_arg){ .nsroot = x, .target = s.target, .list = list, .comments = comments };
	r = sec_child(ns_child, &a, &o, sizeof(o), 60000, NULL);
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
	sec_scene_end(&s);
}

/* A library caller in a UTF-8 locale: a cgroup name that is not UTF-8 is
 * still matched by a glob (glibc's fnmatch() falls back to bytes). */
static void test_locale(void)
{
	char *t = sb_mkdir(box, "loc/\xff"), file[] = "/tmp/cgkill-prot.XXXXXX", list[512];
	struct cgk_report rep;
	pid_t p;
	int r;

	snprintf(list, sizeof(list), "%s/loc/*\n", boxrel);
	if (!t || (p = sb_sleeper(t)) < 0 || !write_list(file, list, strlen(list)) ||
	    !setlocale(LC_ALL, "C.UTF-8")) {
		skip("locale: C.UTF-8 or the setup is missing");
		free(t);
		return;
	}
	r = kill_opts(t, 0, file, &rep);
	setlocale(LC_ALL, "C");
	ok(r == -EPERM && rep.refused == CGK_GUARD_PROTECTED,
	   "locale: in C.UTF-8, a name that is not UTF-8 is matched by its glob (%d: %s)", r, rep.message);
	ok(sb_alive(p), "locale: its process lives");
	cgk_report_free(&rep);
	unlink(file);
	sb_destroy(t);
	free(t);
}

int main(void)
{
	sb_init(600);
	sb_require_root();
	no_plan();
	if (!sb_mount(SB_V2))
		skip_all("no cgroup v2 mount");
	box = sb_create(SB_V2);
	if (!box)
		bail_out("cannot create a sandbox: %s", strerror(errno));
	boxrel = box + strlen(sb_mount(SB_V2));
	note("sandbox %s", box);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
	test_outside_ns();
	test_locale();

	ok(sb_destroy(box) == 0, "sandbox removed");
	free(box);
	return done_testing();
}
