// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The self guard: a target that holds the caller (its own cgroup, or an
 * ancestor of it) is refused, on v2 and v1, through the library and the
 * command; a name that only starts like the caller's cgroup is not a
 * parent; with --force the command signals itself last; and the guard
 * still finds the caller from inside a cgroup namespace, where paths cannot
 * be compared ("/.." roots). Nothing outside is signalled.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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
static char *v1box;		/* v1 freezer sandbox, or NULL */

/* ---- the caller's own cgroup and its ancestors ---- */

/* What a child inside target/sub got from cgk_kill of target and of sub. */
struct self_result {
	int r;
	enum cgk_guard refused;
	unsigned signalled;
	char message[512];
};

static void self_result_child(void *argp, void *outp)
{
	const char *const *targets = argp;	/* { target, sub } */
	struct self_result *res = outp;

	if (sb_join(targets[1]) < 0) {
		res[0].r = res[1].r = 1;
		return;
	}
	for (int i = 0; i < 2; i++) {
		cgk_report *rep = NULL;

		res[i].r = cgk_kill(targets[i], NULL, &rep);
		res[i].refused = cgk_report_refused(rep);
		res[i].signalled = cgk_report_signalled(rep);
		snprintf(res[i].message, sizeof(res[i].message), "%s", cgk_report_message(rep));
		cgk_report_free(rep);
	}
}

/* A child moves itself into target/sub and asks to kill target, then sub. */
static void test_self_refused(enum sb_hier h, const char *box_h)
{
	char *p, *t, *sub, *s, name[64];
	struct self_result res[2];
	struct sb_sentinels sent;
	pid_t sleepers[3];
	struct cmd cmd;
	int st;

	if (!box_h)
		return;
	snprintf(name, sizeof(name), "self (%s)", sb_hier_name(h));
	p = sb_mkdir(box_h, "self-ancestor");
	t = sb_mkdir(box_h, "self-ancestor/T");
	sub = sb_mkdir(box_h, "self-ancestor/T/sub");
	s = sb_mkdir(box_h, "self-ancestor/S");
	if (!ok(p && t && sub && s, "%s: create the cgroups", name))
		goto out;
	sb_sentinels_start(&sent, p, s);
	sb_spawn_n(2, SB_SLEEP, NULL, t, sleepers);
	sleepers[2] = sb_sleeper(sub);
	{
		const char *targets[2] = { t, sub };

		if (child_call(self_result_child, targets, res, sizeof(res), 20000, &st) < 0)
			ok(false, "%s: the child reports back", name);
	}
	ok(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "%s: the child was not killed and exited 0 (status %#x)", name, st);
	for (int i = 0; i < 2; i++) {
		const char *tg = i ? "its own cgroup" : "an ancestor of its cgroup";

		is_int(res[i].r, -EPERM, "%s: cgk_kill of %s is refused with -EPERM", name, tg);
		is_int(res[i].refused, CGK_GUARD_SELF, "%s: ... by the self guard", name);
		is_int(res[i].signalled, 0, "%s: ... and nothing signalled", name);
		if (!ok(strstr(res[i].message, i ? sub : t), "%s: ... and the message names it", name))
			diag("message: %s", res[i].message);
	}
	is_int(sb_count_alive(sleepers, 3), 3, "%s: the sleepers beside the caller are alive", name);
	/* The same through the command, run from inside the subtree. */
	cmd_run_opts(&cmd, &(struct cmd_opts){ .join = sub }, 30000, t, NULL);
	is_int(cmd.status, 4, "%s: cgkill run from inside the target: exit status 4", name);
	cmd_free(&cmd);
	is_int(sb_count_alive(sleepers, 3), 3, "%s: the sleepers are alive after cgkill", name);
	sb_sentinels_check(&sent, name);
out:
	if (p)
		sb_destroy(p);
	free(p);
	free(t);
	free(sub);
	free(s);
}

/* ---- the command and the library inside their target ---- */

struct self_arg {
	const char *join, *target, *v1join, *v1target, *prefix_target;
	bool prefix_only;	/* the child is not in the target: dry runs only */
};

struct self_out {
	int r, refused, r_sub, refused_sub, r_prefix, refused_prefix, r_v1, refused_v1;
	char msg[512];
};

static void self_child(void *argp, void *outp)
{
	struct self_arg *a = argp;
	struct self_out *o = outp;
	cgk_report *rep = NULL;
	char sub[4400];

	if (sb_join(a->join) < 0) {
		o->r = 1;
		return;
	}
	if (a->prefix_only) {
		o->r_prefix = kill_opts(a->prefix_target, CGK_BACKEND_AUTO, SIGKILL, CGK_DRY_RUN, 3000,
					NULL, &rep);
		o->refused_prefix = cgk_report_refused(rep);
		rep = cgk_report_free(rep);
		return;
	}
	o->r = kill_opts(a->target, CGK_BACKEND_AUTO, SIGKILL, 0, 3000, NULL, &rep);
	o->refused = cgk_report_refused(rep);
	snprintf(o->msg, sizeof(o->msg), "%.500s", cgk_report_message(rep));
	rep = cgk_report_free(rep);
	snprintf(sub, sizeof(sub), "%s", a->join);
	o->r_sub = kill_opts(sub, CGK_BACKEND_FREEZE, SIGTERM, 0, 3000, NULL, &rep);
	o->refused_sub = cgk_report_refused(rep);
	rep = cgk_report_free(rep);
	if (a->v1join && sb_join(a->v1join) == 0) {
		o->r_v1 = kill_opts(a->v1target, CGK_BACKEND_AUTO, SIGKILL, 0, 3000, NULL, &rep);
		o->refused_v1 = cgk_report_refused(rep);
		rep = cgk_report_free(rep);
	}
}

static void test_self(void)
{
	struct scene s;
	char *sub = NULL, *prefix = NULL, *v1t = NULL, *v1sub = NULL;
	struct self_out o;
	struct self_arg a;
	pid_t p;
	int r;

	if (!scene_start(&s, box, "self"))
		goto out;
	sub = sb_mkdir(s.target, "sub");
	prefix = sb_mkdir(s.parent, "T2");	/* "T" is a prefix of its name */
	if (v1box) {
		v1t = sb_mkdir(v1box, "self/T");
		v1sub = v1t ? sb_mkdir(v1t, "sub") : NULL;
	}
	p = sb_sleeper(s.target);
	if (!ok(p > 0 && sub && prefix, "self: a sleeper in the target"))
		goto out;

	a = (struct self_arg){ .join = sub, .target = s.target, .v1join = v1sub, .v1target = v1t,
			       .prefix_target = s.target };
	/* For the prefix check the child sits in T2 and targets T. */
	r = child_call(self_child, &a, &o, sizeof(o), 30000, NULL);
	if (is_int(r, 0, "self: a child inside the target reports")) {
		ok(o.r == -EPERM && o.refused == CGK_GUARD_SELF,
		   "self: cgk_kill of a target holding the caller is refused (%s)", o.msg);
		ok(o.r_sub == -EPERM && o.refused_sub == CGK_GUARD_SELF,
		   "self: also the caller's own cgroup, with another backend and signal");
		if (v1sub)
			ok(o.r_v1 == -EPERM && o.refused_v1 == CGK_GUARD_SELF,
			   "self: also on the v1 freezer hierarchy");
	}
	a.join = prefix;
	a.prefix_only = true;
	r = child_call(self_child, &a, &o, sizeof(o), 30000, NULL);
	if (is_int(r, 0, "self: a child in T2 reports"))
		ok(o.r_prefix == 0 && o.refused_prefix == CGK_GUARD_NONE,
		   "self: a caller in T2 may dry-run T (a name prefix is not a parent)");
	ok(sb_alive(p), "self: nothing signalled so far");

	/* The command itself inside the target. */
	{
		struct cmd_opts co = { .join = sub };
		struct cmd cli;

		cmd_run_opts(&cli, &co, CMD_MS, s.target, NULL);
		is_int(cli.status, 4, "self: cgkill inside its target exits 4");
		ok(strstr(cli.err, "cgkill itself") != NULL, "self: it says why: %.*s",
		   (int)strcspn(cli.err, "\n"), cli.err);
		cmd_free(&cli);
		ok(sb_alive(p), "self: the sleeper is alive");
		cmd_run_opts(&cli, &co, CMD_MS, "-f", "-s", "TERM", "-b", "freeze", s.target, NULL);
		is_int(cli.status, 1, "self: cgkill -f -b freeze on its own cgroup: an error, "
		       "the freezer would freeze cgkill itself");
		ok(strstr(cli.err, "freeze cgkill itself") != NULL, "self: it says why: %.*s",
		   (int)strcspn(cli.err, "\n"), cli.err);
		cmd_free(&cli);
		{
			char buf[16] = "";

			sb_read(s.target, "cgroup.freeze", buf, sizeof(buf));
			ok(buf[0] == '0' && sb_alive(p), "self: ... nothing frozen, nothing signalled");
		}
		cmd_run_opts(&cli, &co, CMD_MS, "-f", "-s", "TERM", s.target, NULL);
		is_int(cli.status, 128 + SIGTERM,
		       "self: cgkill -f -s TERM (auto: not a freezer) signals itself last, ends by TERM");
		cmd_free(&cli);
		ok(sb_killed_by(p, SIGTERM, 3000), "self: the sleeper in the target died of TERM");
		p = sb_sleeper(s.target);
		cmd_run_opts(&cli, &co, CMD_MS, "-f", "-b", "loop", s.target, NULL);
		is_int(cli.status, 128 + SIGKILL, "self: cgkill -f -b loop ends by its own KILL");
		cmd_free(&cli);
		ok(sb_killed_by(p, SIGKILL, 3000), "self: the sleeper died of KILL");
		p = sb_sleeper(s.target);
		cmd_run_opts(&cli, &co, CMD_MS, "-f", s.target, NULL);
		is_int(cli.status, 128 + SIGKILL, "self: cgkill -f (kernel) dies with its target");
		cmd_free(&cli);
		ok(sb_killed_by(p, SIGKILL, 3000), "self: the sleeper died of KILL");
		is_int(sb_wait_empty(s.target, 5000), 0, "self: the target is empty");
	}
out:
	free(sub);
	free(prefix);
	if (v1t) {
		char *v1self = sb_path(v1box, "self");

		sb_destroy(v1self);
		free(v1self);
	}
	free(v1t);
	free(v1sub);
	scene_end(&s);
}

/* cgkill in a cgroup namespace rooted inside the target, using the host's
 * mount: /proc/self/cgroup says "/", the mount's root is outside the
 * namespace ("/.." paths), so paths cannot be compared. The guard must
 * still find cgkill in the subtree. */
struct cgns_out {
	int setup, r, refused, r_dry, refused_dry;
	char rel[256], msg[512];
};

static void cgns_child(void *argp, void *outp)
{
	const char *const *a = argp;	/* { join, target } */
	struct cgns_out *o = outp;
	cgk_report *rep = NULL;
	struct cgk_target t;
	char msg[4608];

	if (sb_join(a[0]) < 0 || unshare(CLONE_NEWCGROUP) < 0) {
		o->setup = -errno;
		return;
	}
	if (target_open(a[1], &t, msg, sizeof(msg)) == 0) {
		snprintf(o->rel, sizeof(o->rel), "%.250s", t.rel);
		cgk_target_close(&t);
	}
	o->r = kill_opts(a[1], CGK_BACKEND_AUTO, SIGKILL, 0, 3000, NULL, &rep);
	o->refused = cgk_report_refused(rep);
	snprintf(o->msg, sizeof(o->msg), "%.500s", cgk_report_message(rep));
	rep = cgk_report_free(rep);
	o->r_dry = kill_opts(a[1], CGK_BACKEND_AUTO, SIGKILL, CGK_DRY_RUN, 3000, NULL, &rep);
	o->refused_dry = cgk_report_refused(rep);
	rep = cgk_report_free(rep);
}

static void test_self_cgns(void)
{
	struct scene s;
	struct cgns_out o;
	char *sub = NULL;
	const char *a[2];
	pid_t p;
	int r;

	if (!scene_start(&s, box, "cgns"))
		goto out;
	sub = sb_mkdir(s.target, "sub");
	p = sb_sleeper(s.target);
	if (!ok(sub && p > 0, "cgns: a sleeper in the target"))
		goto out;
	a[0] = sub;
	a[1] = s.target;
	r = child_call(cgns_child, a, &o, sizeof(o), 30000, NULL);
	if (!is_int(r, 0, "cgns: a child in a cgroup namespace below the target reports"))
		goto out;
	if (o.setup < 0) {
		skip("cgns: cannot make a cgroup namespace: %s", strerror(-o.setup));
		goto out;
	}
	note("cgns: the target as seen from the namespace: %s", o.rel);
	ok(o.r == -EPERM && o.refused == CGK_GUARD_SELF,
	   "cgns: the self guard still refuses (%s)", o.msg);
	is_int(o.refused_dry, CGK_GUARD_SELF, "cgns: ... a dry run too");
	ok(sb_alive(p), "cgns: the sleeper is alive");
out:
	free(sub);
	scene_end(&s);
}

/* cgkill in a cgroup namespace rooted at the target, using the host's mount
 * (its root shows as "/.."), names the target by its absolute path. */
struct cgns_abs_arg {
	const char *target;
};

struct cgns_abs_out {
	int setup;
	bool dotdot_root;
	int r, refused, r_dry, refused_dry, cli;
	char msg[512], err[512];
};

static void cgns_abs_child(void *argp, void *outp)
{
	struct cgns_abs_arg *a = argp;
	struct cgns_abs_out *o = outp;
	struct cgk_mount *mounts = NULL;
	cgk_report *rep = NULL;
	size_t n = 0;

	if (sb_join(a->target) < 0 || unshare(CLONE_NEWCGROUP) < 0) {
		o->setup = -errno;
		return;
	}
	/* No fresh mount: the inherited one shows its root from outside. */
	if (cgk_mounts_read(&mounts, &n) == 0)
		for (size_t i = 0; i < n; i++)
			if (mounts[i].version == 2 && !strncmp(mounts[i].root, "/..", 3))
				o->dotdot_root = true;
	free(mounts);
	o->r_dry = kill_opts(a->target, CGK_BACKEND_AUTO, SIGKILL, CGK_DRY_RUN, 0, NULL, &rep);
	o->refused_dry = cgk_report_refused(rep);
	rep = cgk_report_free(rep);
	o->r = kill_opts(a->target, CGK_BACKEND_AUTO, SIGKILL, 0, 3000, NULL, &rep);
	o->refused = cgk_report_refused(rep);
	snprintf(o->msg, sizeof(o->msg), "%.500s", cgk_report_message(rep));
	rep = cgk_report_free(rep);
	o->cli = cmd_status(o->err, sizeof(o->err), 30000, a->target, NULL);
}

static void test_cgns_abs(void)
{
	struct scene s;
	struct cgns_abs_out o;
	struct cgns_abs_arg a;
	pid_t p[2] = { -1, -1 };
	char buf[256];
	int r;

	if (!scene_start(&s, box, "cgns"))
		goto out;
	p[0] = sb_sleeper(s.target);
	p[1] = sb_sleeper(s.target);
	if (!ok(p[0] > 0 && p[1] > 0, "cgns: two sleepers in the target S"))
		goto out;
	a.target = s.target;
	r = child_call(cgns_abs_child, &a, &o, sizeof(o), 60000, NULL);
	if (!is_int(r, 0, "cgns: the child in S and in its own cgroup namespace reports (alive)"))
		goto out;
	if (o.setup < 0) {
		skip("cgns: cannot join S or unshare the cgroup namespace: %s", strerror(-o.setup));
		goto out;
	}
	ok(o.dotdot_root, "cgns: the inherited v2 mount shows a \"/..\" root in the namespace");
	ok(o.r_dry == -EPERM && o.refused_dry == CGK_GUARD_SELF, "cgns: a dry run of S is refused (self)");
	ok(o.r == -EPERM && o.refused == CGK_GUARD_SELF,
	   "cgns: cgk_kill of S by its absolute path is refused (self): %s", o.msg);
	ok(o.cli == 4 && strstr(o.err, "cgkill itself"),
	   "cgns: the command in the namespace exits 4 and says why (%d: %s)", o.cli,
	   first_line(o.err, buf, sizeof(buf)));
	ok(sb_alive(p[0]) && sb_alive(p[1]), "cgns: the sleepers in S are alive");
out:
	scene_end(&s);
}

int main(void)
{
	box = sb_start(600);
	if (sb_mount(SB_V1_FREEZER))
		v1box = sb_create(SB_V1_FREEZER);

	test_self_refused(SB_V2, box);
	test_self_refused(SB_V1_FREEZER, v1box);
	test_self();
	test_self_cgns();
	test_cgns_abs();

	if (v1box)
		ok(sb_destroy(v1box) == 0, "v1 sandbox removed");
	free(v1box);
	return sb_finish(box);
}
