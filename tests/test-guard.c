// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The guard rails around the big red button: the root of every hierarchy
 * (never, even with --force), the caller's own cgroup, PID 1 of the caller's
 * pid namespace, the protected list, and the interactive question.
 *
 * CAREFUL: a root-guard test that fails kills the machine. So the root tests
 * first check with the internal cgk_target_open() that the root is seen as
 * the root, then do a dry run, and bail out if either says otherwise; the
 * calls that are not dry runs force the kernel backend, which cannot act on
 * a hierarchy root at all (no cgroup.kill there; v1 is not its kind), so
 * even a broken guard could not signal anything through them.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgkill.h"
#include "internal.h"
#include "sandbox.h"
#include "secutil.h"
#include "tap.h"

static char *box;		/* v2 sandbox */
static char *v1box;		/* v1 freezer sandbox, or NULL */

static int kill_opts(const char *path, enum cgk_backend b, int sig, unsigned flags,
		     const char *protected_file, struct cgk_report *rep)
{
	struct cgk_options o = CGK_OPTIONS_INIT;

	o.backend = b;
	o.signal = sig;
	o.flags = flags;
	o.wait_ms = 3000;
	o.protected_file = protected_file;
	return cgk_kill(path, &o, rep);
}

/* ---- the root of every hierarchy ---- */

/* One spelling of a hierarchy root; version tells which. */
static void root_spelling(const char *path, int version)
{
	struct cgk_target t;
	struct cgk_report rep;
	struct sec_cli *cli;
	char msg[4608];
	bool root;
	int r;

	r = cgk_target_open(path, &t, msg, sizeof(msg));
	/* ".." in a path relative to the v2 mount is refused before any
	 * resolution: safer still. */
	if (r == -EINVAL && strstr(msg, "may not contain")) {
		ok(path[0] != '/' || strstr(path, "/..") != NULL,
		   "root '%s': refused before resolution (%s)", path, msg);
		return;
	}
	root = r == 0 && t.is_root;
	if (r == 0)
		cgk_target_close(&t);
	if (!ok(root, "root '%s': cgk_target_open sees the root of a hierarchy (%s)", path, msg))
		bail_out("the root of a hierarchy is not recognised: stopping before any kill");

	r = kill_opts(path, CGK_BACKEND_AUTO, SIGKILL, CGK_DRY_RUN | CGK_FORCE, NULL, &rep);
	if (!ok(r == -EPERM && rep.refused == CGK_GUARD_ROOT && rep.listed.n == 0,
		"root '%s': a forced dry run is refused by the root guard (%s)", path, rep.message))
		bail_out("the root guard does not refuse a dry run: stopping before any kill");
	cgk_report_free(&rep);

	/* Not a dry run, forced, but through the kernel backend only: it
	 * has no cgroup.kill to write at a v2 root and does not serve v1. */
	if (version == 2 && faccessat(AT_FDCWD, path, F_OK, 0) == 0) {
		char kill_file[4352];

		snprintf(kill_file, sizeof(kill_file), "%s/cgroup.kill", path);
		if (access(kill_file, F_OK) == 0) {
			skip("root '%s': this kernel has cgroup.kill at the root; no forced call", path);
			return;
		}
	}
	r = kill_opts(path, CGK_BACKEND_KERNEL, SIGKILL, CGK_FORCE, NULL, &rep);
	ok(r == -EPERM && rep.refused == CGK_GUARD_ROOT,
	   "root '%s': a forced kill is refused by the root guard", path);
	cgk_report_free(&rep);
	cli = sec_cli_run(NULL, "-f", "-b", "kernel", path, NULL);
	if (cli) {
		is_int(cli->status, 4, "root '%s': cgkill -f -b kernel exits 4", path);
		ok(strstr(cli->err, "root") != NULL, "root: cgkill says why: %.*s",
		   (int)strcspn(cli->err, "\n"), cli->err);
		free(cli);
	}
	cli = sec_cli_run(NULL, "-f", "-n", path, NULL);
	if (cli) {
		is_int(cli->status, 4, "root '%s': cgkill -f -n exits 4", path);
		free(cli);
	}
}

static void test_roots(void)
{
	struct cgk_hierarchy *h = NULL;
	size_t n = 0;
	char buf[4400];
	const char *v2 = sb_mount(SB_V2);

	if (!is_int(cgk_list_hierarchies(&h, &n), 0, "roots: list the hierarchies") || !n) {
		free(h);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		root_spelling(h[i].path, h[i].version);
		snprintf(buf, sizeof(buf), "%s//", h[i].path);
		root_spelling(buf, h[i].version);
	}
	free(h);
	if (v2) {
		const char *base = strrchr(box, '/') + 1;

		snprintf(buf, sizeof(buf), "%s/.", v2);
		root_spelling(buf, 2);
		snprintf(buf, sizeof(buf), "%s/..", box);
		root_spelling(buf, 2);
		snprintf(buf, sizeof(buf), "%s/../", box);
		root_spelling(buf, 2);
		root_spelling("/", 2);		/* relative to the v2 mount */
		root_spelling(".", 2);
		snprintf(buf, sizeof(buf), "%s/..", base);
		root_spelling(buf, 2);
		snprintf(buf, sizeof(buf), "/%s/../", base);
		root_spelling(buf, 2);
	}
	if (v1box) {
		snprintf(buf, sizeof(buf), "%s/..", v1box);
		root_spelling(buf, 1);
	}
}

/* Without statmount(2) (before Linux 6.8, or filtered) mountinfo is the
 * only way to a target's mount. */
static bool statmount_missing(void)
{
	uint64_t req[3] = { 24, 0, 0 };

	return syscall(457, req, NULL, 0, 0) < 0 && (errno == ENOSYS || errno == EPERM);
}

/* Bind mounts and a cgroup namespace: the root is what the mount shows. */
struct mounts_arg {
	const char *target;	/* a sandbox cgroup with a sleeper */
	const char *nsroot;	/* a sandbox cgroup to root a cgroup namespace */
};

struct mounts_out {
	int setup;
	int sub_open, sub_root, sub_dry, sub_listed;	/* bind mount of a subtree */
	char sub_rel[4096];	/* ... named from the hierarchy root */
	int blind, blind_open, blind_relative;	/* mountinfo reads as empty */
	char blind_rel[4096];
	int root_open, root_root, root_dry, root_refused;	/* bind mount of the v2 root */
	int ns_open, ns_root, ns_dry, ns_refused;	/* cgroupns root, fresh mount */
	int def_refused[4];	/* default protected list, in the namespace */
};

static void mounts_child(void *argp, void *outp)
{
	struct mounts_arg *a = argp;
	struct mounts_out *o = outp;
	char d1[] = "/tmp/cgkill-bind.XXXXXX", d2[] = "/tmp/cgkill-bindroot.XXXXXX";
	char d3[] = "/tmp/cgkill-ns.XXXXXX", msg[4608], p[4400];
	struct cgk_target t;
	struct cgk_report rep;
	static const char *const defaults[] = { "system.slice", "init.scope", "user.slice",
						"machine.slice" };

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    !mkdtemp(d1) || !mkdtemp(d2) || !mkdtemp(d3) ||
	    mount(a->target, d1, NULL, MS_BIND, NULL) < 0 ||
	    mount(sb_mount(SB_V2), d2, NULL, MS_BIND, NULL) < 0) {
		o->setup = -errno;
		goto out;
	}
	o->sub_open = cgk_target_open(d1, &t, msg, sizeof(msg));
	o->sub_root = o->sub_open == 0 && t.is_root;
	if (o->sub_open == 0) {
		snprintf(o->sub_rel, sizeof(o->sub_rel), "%s", t.rel);
		cgk_target_close(&t);
	}
	o->sub_dry = kill_opts(d1, CGK_BACKEND_AUTO, SIGKILL, CGK_DRY_RUN, NULL, &rep);
	o->sub_listed = (int)rep.listed.n;
	cgk_report_free(&rep);

	o->root_open = cgk_target_open(d2, &t, msg, sizeof(msg));
	o->root_root = o->root_open == 0 && t.is_root;
	if (o->root_open == 0)
		cgk_target_close(&t);
	if (o->root_root) {
		o->root_dry = kill_opts(d2, CGK_BACKEND_AUTO, SIGKILL, CGK_DRY_RUN | CGK_FORCE, NULL, &rep);
		o->root_refused = rep.refused;
		cgk_report_free(&rep);
	}

	/* An empty file over our mountinfo: an absolute path still resolves
	 * (statmount, Linux 6.8), one relative to the v2 mount cannot. */
	snprintf(p, sizeof(p), "/proc/%d/mountinfo", (int)getpid());
	o->blind = mount("/dev/null", p, NULL, MS_BIND, NULL) < 0 ? -errno : 0;
	if (o->blind == 0) {
		o->blind_open = cgk_target_open(a->target, &t, msg, sizeof(msg));
		if (o->blind_open == 0) {
			snprintf(o->blind_rel, sizeof(o->blind_rel), "%s", t.rel);
			cgk_target_close(&t);
		}
		o->blind_relative = cgk_target_open(a->target + strlen(sb_mount(SB_V2)), &t, msg,
						    sizeof(msg));
		if (o->blind_relative == 0)
			cgk_target_close(&t);
		umount2(p, MNT_DETACH);
	}

	/* A cgroup namespace rooted at nsroot, and a cgroup2 mount made in it:
	 * the mount's root is nsroot, which the guard must treat as a root. */
	if (sb_join(a->nsroot) < 0 || unshare(CLONE_NEWCGROUP) < 0 ||
	    mount("cgroup2", d3, "cgroup2", 0, NULL) < 0) {
		o->setup = -errno;
		goto out;
	}
	o->ns_open = cgk_target_open(d3, &t, msg, sizeof(msg));
	o->ns_root = o->ns_open == 0 && t.is_root;
	if (o->ns_open == 0)
		cgk_target_close(&t);
	if (o->ns_root) {
		o->ns_dry = kill_opts(d3, CGK_BACKEND_AUTO, SIGKILL, CGK_DRY_RUN | CGK_FORCE, NULL, &rep);
		o->ns_refused = rep.refused;
		cgk_report_free(&rep);
	}
	/* The default protected list, matched against paths in the namespace:
	 * no protected file at all (the variable points at nothing). */
	setenv("CGKILL_PROTECTED", "/nonexistent/cgkill-protected", 1);
	for (int i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s/%s", d3, defaults[i]);
		mkdir(p, 0755);
		kill_opts(p, CGK_BACKEND_AUTO, SIGKILL, CGK_DRY_RUN, NULL, &rep);
		o->def_refused[i] = rep.refused;
		cgk_report_free(&rep);
	}
	for (int i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s/%s", d3, defaults[i]);
		rmdir(p);
	}
out:
	umount2(d3, MNT_DETACH);
	umount2(d2, MNT_DETACH);
	umount2(d1, MNT_DETACH);
	rmdir(d1);
	rmdir(d2);
	rmdir(d3);
}

static void test_mount_roots(void)
{
	struct sec_scene s;
	struct mounts_out o;
	struct mounts_arg a;
	char *nsroot = NULL;
	const char *rel;
	pid_t p;
	int r;

	if (!sec_scene_start(&s, box, "mounts"))
		goto out;
	nsroot = sb_mkdir(s.parent, "ns");
	p = sb_sleeper(s.target);
	if (!ok(p > 0 && nsroot, "mounts: a sleeper in the target"))
		goto out;
	a.target = s.target;
	a.nsroot = nsroot;
	rel = s.target + strlen(sb_mount(SB_V2));
	r = sec_child(mounts_child, &a, &o, sizeof(o), 60000, NULL);
	if (!is_int(r, 0, "mounts: the child in its own mount namespace reports"))
		goto out;
	if (o.setup < 0) {
		skip("mounts: cannot set up bind mounts or a cgroup namespace: %s", strerror(-o.setup));
		goto out;
	}
	ok(o.sub_open == 0 && !o.sub_root, "mounts: a bind mount of a sandbox cgroup is not a root");
	ok(o.sub_dry == 0 && o.sub_listed == 1, "mounts: ... and its dry run lists its sleeper");
	is_str(o.sub_rel, rel, "mounts: ... and is named from the hierarchy root, not the mount's");
	if (o.blind < 0 || statmount_missing()) {
		skip("mounts: no mountinfo: %s", o.blind < 0 ? strerror(-o.blind) :
		     "statmount(2) is not on this kernel");
		skip("mounts: no mountinfo: statmount");
	} else {
		ok(o.blind_open == 0 && strcmp(o.blind_rel, rel) == 0,
		   "mounts: mountinfo empty: an absolute path resolves all the same (%d, %s)",
		   o.blind_open, o.blind_rel);
		ok(o.blind_relative == -ENOENT,
		   "mounts: mountinfo empty: a path relative to the v2 mount cannot (%d)",
		   o.blind_relative);
	}
	ok(o.root_open == 0 && o.root_root, "mounts: a bind mount of the v2 root is a root");
	ok(o.root_dry == -EPERM && o.root_refused == CGK_GUARD_ROOT,
	   "mounts: ... refused by the root guard even with force");
	ok(o.ns_open == 0 && o.ns_root, "mounts: the root of a cgroup namespace's own mount is a root");
	ok(o.ns_dry == -EPERM && o.ns_refused == CGK_GUARD_ROOT,
	   "mounts: ... refused by the root guard even with force");
	is_int(o.def_refused[0], CGK_GUARD_PROTECTED, "mounts: default list protects /system.slice");
	is_int(o.def_refused[1], CGK_GUARD_PROTECTED, "mounts: default list protects /init.scope");
	is_int(o.def_refused[2], CGK_GUARD_PROTECTED, "mounts: default list protects /user.slice");
	is_int(o.def_refused[3], CGK_GUARD_PROTECTED, "mounts: default list protects /machine.slice");
	ok(sb_alive(p), "mounts: the sleeper is alive");
out:
	free(nsroot);
	sec_scene_end(&s);
}

/* ---- the caller's own cgroup ---- */

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
	struct cgk_report rep;
	char sub[4400];

	if (sb_join(a->join) < 0) {
		o->r = 1;
		return;
	}
	if (a->prefix_only) {
		o->r_prefix = kill_opts(a->prefix_target, CGK_BACKEND_AUTO, SIGKILL, CGK_DRY_RUN, NULL,
					&rep);
		o->refused_prefix = rep.refused;
		cgk_report_free(&rep);
		return;
	}
	o->r = kill_opts(a->target, CGK_BACKEND_AUTO, SIGKILL, 0, NULL, &rep);
	o->refused = rep.refused;
	snprintf(o->msg, sizeof(o->msg), "%.500s", rep.message);
	cgk_report_free(&rep);
	snprintf(sub, sizeof(sub), "%s", a->join);
	o->r_sub = kill_opts(sub, CGK_BACKEND_FREEZE, SIGTERM, 0, NULL, &rep);
	o->refused_sub = rep.refused;
	cgk_report_free(&rep);
	if (a->v1join && sb_join(a->v1join) == 0) {
		o->r_v1 = kill_opts(a->v1target, CGK_BACKEND_AUTO, SIGKILL, 0, NULL, &rep);
		o->refused_v1 = rep.refused;
		cgk_report_free(&rep);
	}
}

static void test_self(void)
{
	struct sec_scene s;
	char *sub = NULL, *prefix = NULL, *v1t = NULL, *v1sub = NULL;
	struct self_out o;
	struct self_arg a;
	pid_t p;
	int r;

	if (!sec_scene_start(&s, box, "self"))
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
	r = sec_child(self_child, &a, &o, sizeof(o), 30000, NULL);
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
	r = sec_child(self_child, &a, &o, sizeof(o), 30000, NULL);
	if (is_int(r, 0, "self: a child in T2 reports"))
		ok(o.r_prefix == 0 && o.refused_prefix == CGK_GUARD_NONE,
		   "self: a caller in T2 may dry-run T (a name prefix is not a parent)");
	ok(sb_alive(p), "self: nothing signalled so far");

	/* The command itself inside the target. */
	{
		struct sec_cli_opts co = { .join = sub };
		struct sec_cli *cli = sec_cli_run(&co, s.target, NULL);

		if (cli) {
			is_int(cli->status, 4, "self: cgkill inside its target exits 4");
			ok(strstr(cli->err, "cgkill itself") != NULL, "self: it says why: %.*s",
			   (int)strcspn(cli->err, "\n"), cli->err);
			free(cli);
		}
		ok(sb_alive(p), "self: the sleeper is alive");
		cli = sec_cli_run(&co, "-f", "-s", "TERM", "-b", "freeze", s.target, NULL);
		if (cli) {
			is_int(cli->status, 1, "self: cgkill -f -b freeze on its own cgroup: an error, "
			       "the freezer would freeze cgkill itself");
			ok(strstr(cli->err, "freeze cgkill itself") != NULL, "self: it says why: %.*s",
			   (int)strcspn(cli->err, "\n"), cli->err);
			free(cli);
		}
		{
			char buf[16] = "";

			sb_read(s.target, "cgroup.freeze", buf, sizeof(buf));
			ok(buf[0] == '0' && sb_alive(p), "self: ... nothing frozen, nothing signalled");
		}
		cli = sec_cli_run(&co, "-f", "-s", "TERM", s.target, NULL);
		if (cli) {
			is_int(cli->status, 128 + SIGTERM,
			       "self: cgkill -f -s TERM (auto: not a freezer) signals itself last, ends by TERM");
			free(cli);
		}
		ok(sb_killed_by(p, SIGTERM, 3000), "self: the sleeper in the target died of TERM");
		p = sb_sleeper(s.target);
		cli = sec_cli_run(&co, "-f", "-b", "loop", s.target, NULL);
		if (cli) {
			is_int(cli->status, 128 + SIGKILL, "self: cgkill -f -b loop ends by its own KILL");
			free(cli);
		}
		ok(sb_killed_by(p, SIGKILL, 3000), "self: the sleeper died of KILL");
		p = sb_sleeper(s.target);
		cli = sec_cli_run(&co, "-f", s.target, NULL);
		if (cli) {
			is_int(cli->status, 128 + SIGKILL, "self: cgkill -f (kernel) dies with its target");
			free(cli);
		}
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
	sec_scene_end(&s);
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
	struct cgk_report rep;
	struct cgk_target t;
	char msg[4608];

	if (sb_join(a[0]) < 0 || unshare(CLONE_NEWCGROUP) < 0) {
		o->setup = -errno;
		return;
	}
	if (cgk_target_open(a[1], &t, msg, sizeof(msg)) == 0) {
		snprintf(o->rel, sizeof(o->rel), "%.250s", t.rel);
		cgk_target_close(&t);
	}
	o->r = kill_opts(a[1], CGK_BACKEND_AUTO, SIGKILL, 0, NULL, &rep);
	o->refused = rep.refused;
	snprintf(o->msg, sizeof(o->msg), "%.500s", rep.message);
	cgk_report_free(&rep);
	o->r_dry = kill_opts(a[1], CGK_BACKEND_AUTO, SIGKILL, CGK_DRY_RUN, NULL, &rep);
	o->refused_dry = rep.refused;
	cgk_report_free(&rep);
}

static void test_self_cgns(void)
{
	struct sec_scene s;
	struct cgns_out o;
	char *sub = NULL;
	const char *a[2];
	pid_t p;
	int r;

	if (!sec_scene_start(&s, box, "cgns"))
		goto out;
	sub = sb_mkdir(s.target, "sub");
	p = sb_sleeper(s.target);
	if (!ok(sub && p > 0, "cgns: a sleeper in the target"))
		goto out;
	a[0] = sub;
	a[1] = s.target;
	r = sec_child(cgns_child, a, &o, sizeof(o), 30000, NULL);
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
	sec_scene_end(&s);
}

/* ---- PID 1 of the caller's pid namespace ---- */

struct pid1_arg {
	const char *target, *ctl;
	int ghits;		/* G records the signals it gets here */
};

struct pid1_out {
	int setup;
	pid_t g_host;		/* G as our namespace sees it (set by the parent) */
	int r_plain, refused_plain;
	int r_dry, dry_listed, dry_has_1;
	int cli_plain, cli_term, cli_kill;
	bool k_dead_after_term;
	char msg[512], kill_err[512];
};

static void pid1_worker(const struct pid1_arg *a, struct pid1_out *o, pid_t k)
{
	struct cgk_report rep;
	struct sec_cli *cli;

	if (sb_join(a->ctl) < 0) {
		o->setup = -errno;
		return;
	}
	o->r_plain = kill_opts(a->target, CGK_BACKEND_AUTO, SIGKILL, 0, NULL, &rep);
	o->refused_plain = rep.refused;
	snprintf(o->msg, sizeof(o->msg), "%.500s", rep.message);
	cgk_report_free(&rep);
	o->r_dry = kill_opts(a->target, CGK_BACKEND_AUTO, SIGKILL, CGK_DRY_RUN | CGK_FORCE, NULL, &rep);
	o->dry_listed = (int)rep.listed.n;
	for (size_t i = 0; i < rep.listed.n; i++)
		o->dry_has_1 |= rep.listed.v[i].pid == 1;
	cgk_report_free(&rep);
	cli = sec_cli_run(NULL, a->target, NULL);
	o->cli_plain = cli ? cli->status : -1;
	free(cli);
	cli = sec_cli_run(NULL, "-f", "-s", "TERM", a->target, NULL);
	o->cli_term = cli ? cli->status : -1;
	free(cli);
	for (int i = 0; i < 300 && kill(k, 0) == 0; i++)
		usleep(10000);
	o->k_dead_after_term = kill(k, 0) < 0;
	cli = sec_cli_run(NULL, "-f", "--wait=1s", a->target, NULL);
	o->cli_kill = cli ? cli->status : -1;
	if (cli)
		snprintf(o->kill_err, sizeof(o->kill_err), "%.500s", cli->err);
	free(cli);
}

static void pid1_child(void *argp, void *outp)
{
	struct pid1_arg *a = argp;
	struct pid1_out *o = outp;
	int p[2];
	pid_t g;

	if (unshare(CLONE_NEWPID | CLONE_NEWNS) < 0 || pipe(p) < 0) {
		o->setup = -errno;
		return;
	}
	g = fork();
	if (g < 0) {
		o->setup = -errno;
		return;
	}
	if (g == 0) {
		/* PID 1 of the new namespace, in the target, with its own /proc. */
		struct pid1_out res = { 0 };
		pid_t k, w;

		close(p[0]);
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0 ||
		    sb_join(a->target) < 0) {
			res.setup = -errno;
			if (write(p[1], &res, sizeof(res)) < 0)
				_exit(1);
			_exit(1);
		}
		sec_hit_arm(a->ghits);
		k = fork();	/* another process in the target */
		if (k == 0) {
			signal(SIGTERM, SIG_DFL);
			for (;;)
				pause();
		}
		w = fork();
		if (w == 0) {
			signal(SIGTERM, SIG_DFL);
			pid1_worker(a, &res, k);
			if (write(p[1], &res, sizeof(res)) < 0)
				_exit(1);
			_exit(0);
		}
		close(p[1]);
		/* Reap, and stay alive as the namespace's init until killed
		 * from outside. */
		for (;;)
			if (wait(NULL) < 0 && errno == ECHILD)
				pause();
	}
	close(p[1]);
	{
		struct pollfd pfd = { .fd = p[0], .events = POLLIN };

		if (poll(&pfd, 1, 60000) <= 0 || read(p[0], o, sizeof(*o)) != sizeof(*o))
			o->setup = -ETIMEDOUT;
	}
	o->g_host = g;
}

static void test_pid1(void)
{
	struct sec_scene s;
	struct sec_hits ghits = { -1, -1 };
	struct pid1_out o;
	struct pid1_arg a;
	char *ctl = NULL;
	int r, last = 0;

	if (sec_hits_open(&ghits) < 0 || !sec_scene_start(&s, box, "pid1"))
		goto out;
	ctl = sb_mkdir(s.parent, "C");
	a = (struct pid1_arg){ .target = s.target, .ctl = ctl, .ghits = ghits.wr };
	r = sec_child(pid1_child, &a, &o, sizeof(o), 90000, NULL);
	if (!is_int(r, 0, "pid1: the namespace reports"))
		goto out;
	if (o.setup < 0) {
		skip("pid1: cannot make a pid namespace with its own /proc: %s", strerror(-o.setup));
		goto out;
	}
	ok(o.r_plain == -EPERM && o.refused_plain == CGK_GUARD_PID1,
	   "pid1: from inside the namespace, a target holding its PID 1 is refused (%s)", o.msg);
	ok(o.r_dry == 0 && o.dry_listed == 2 && o.dry_has_1,
	   "pid1: a forced dry run lists PID 1 and the other process (%d listed)", o.dry_listed);
	is_int(o.cli_plain, 4, "pid1: cgkill exits 4");
	is_int(o.cli_term, 0, "pid1: cgkill -f -s TERM proceeds");
	is_int(sec_hits_take(&ghits, &last), 1, "pid1: PID 1 got the TERM (it has a handler)");
	is_int(last, SIGTERM, "pid1: ... and it was TERM");
	ok(o.k_dead_after_term, "pid1: the other process in the target died of TERM");
	/* The kernel never lets a namespace's own members SIGKILL its init,
	 * not even through cgroup.kill: cgkill reports it as a survivor. */
	is_int(o.cli_kill, 3, "pid1: cgkill -f (KILL) from inside: PID 1 survives, exit 3 (%.*s)",
	       (int)strcspn(o.kill_err, "\n"), o.kill_err);
	{
		bool listed = false;

		/* a row of the survivors' table that starts with PID 1 */
		for (const char *l = o.kill_err; l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
			int pid;

			listed |= *l == ' ' && sscanf(l, "%d", &pid) == 1 && pid == 1;
		}
		ok(listed, "pid1: ... and PID 1 is listed as the survivor");
	}
	ok(o.g_host > 0 && sb_alive(o.g_host), "pid1: the namespace's init is alive");
	{
		struct cgk_report rep;

		r = kill_opts(s.target, CGK_BACKEND_AUTO, SIGKILL, 0, NULL, &rep);
		is_int(r, 0, "pid1: from the parent namespace the kill of the target works");
		cgk_report_free(&rep);
		/* Not our tracked child (it was reparented to us): poll. */
		for (int i = 0; i < 500 && sb_alive(o.g_host); i++)
			sb_sleep_ms(10);
		ok(!sb_alive(o.g_host), "pid1: the namespace's init died");
	}
out:
	free(ctl);
	sec_scene_end(&s);
}

/* ---- the protected list ---- */

static void test_protected(void)
{
	struct sec_scene s;
	char file[] = "/tmp/cgkill-protected.XXXXXX", *rel, text[8192];
	const char *names[] = { "exact", "exact/child", "glob-a", "glob-a/x", "trail", "cr",
				"# not a comment", "other" };
	enum { EXACT, EXACT_CHILD, GLOB, GLOB_CHILD, TRAIL, CR, HASH, OTHER, N_NAMES };
	char *dirs[N_NAMES] = { 0 };
	pid_t pids[N_NAMES];
	int fd;

	if (!sec_scene_start(&s, box, "protect"))
		goto out;
	rel = s.target + strlen(sb_mount(SB_V2));
	for (int i = 0; i < N_NAMES; i++) {
		dirs[i] = sb_mkdir(s.target, names[i]);
		pids[i] = dirs[i] ? sb_sleeper(dirs[i]) : -1;
	}
	fd = mkstemp(file);
	if (!ok(fd >= 0 && pids[OTHER] > 0, "protect: a list file and sleepers"))
		goto out;
	snprintf(text, sizeof(text),
		 "# cgkill protected cgroups\n"
		 "\n"
		 "   %s/exact\n"
		 "\t%s/glob-*\n"
		 "%s/trail   \n"
		 "%s/cr\r\n"
		 "#%s/other\n",
		 rel, rel, rel, rel, rel);
	if (write(fd, text, strlen(text)) < 0)
		diag("protect: write: %m");
	close(fd);

	{
		static const struct { int i; enum cgk_guard want; const char *what; } cases[] = {
			{ EXACT, CGK_GUARD_PROTECTED, "an exact entry with leading blanks" },
			{ EXACT_CHILD, CGK_GUARD_NONE, "a descendant of an exact entry" },
			{ GLOB, CGK_GUARD_PROTECTED, "a glob" },
			{ GLOB_CHILD, CGK_GUARD_NONE, "below a glob ('*' does not cross '/')" },
			{ TRAIL, CGK_GUARD_PROTECTED, "an entry with trailing blanks" },
			{ CR, CGK_GUARD_PROTECTED, "an entry ending in CR LF" },
			{ OTHER, CGK_GUARD_NONE, "a commented-out entry" },
		};

		for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
			struct cgk_report rep;
			const char *d = dirs[cases[c].i];
			int r = kill_opts(d, CGK_BACKEND_AUTO, SIGKILL, CGK_DRY_RUN, file, &rep);

			is_int(rep.refused, cases[c].want, "protect (option): %s: %s", cases[c].what,
			       cases[c].want ? "refused" : "allowed");
			if (cases[c].want)
				is_int(r, -EPERM, "protect: ... with EPERM");
			cgk_report_free(&rep);
		}
	}

	/* A cgroup that contains a protected one is protected too. */
	{
		struct cgk_report rep;
		int r = kill_opts(s.target, CGK_BACKEND_AUTO, SIGKILL, CGK_DRY_RUN, file, &rep);

		ok(r == -EPERM && rep.refused == CGK_GUARD_PROTECTED,
		   "protect: an ancestor of a protected cgroup is refused (%s)", rep.message);
		cgk_report_free(&rep);
		r = kill_opts(s.parent, CGK_BACKEND_AUTO, SIGKILL, CGK_DRY_RUN, file, &rep);
		ok(r == -EPERM && rep.refused == CGK_GUARD_PROTECTED,
		   "protect: ... and its parent");
		cgk_report_free(&rep);
	}

	/* Through the command: the option and the variable; -f overrides. */
	{
		char opt[128];
		struct sec_cli_opts env = { .env = { NULL } };
		struct sec_cli *cli;

		snprintf(opt, sizeof(opt), "CGKILL_PROTECTED=%s", file);
		env.env[0] = opt;
		cli = sec_cli_run(NULL, "--protected", file, dirs[EXACT], NULL);
		if (cli) {
			is_int(cli->status, 4, "protect: cgkill --protected FILE on a protected cgroup exits 4");
			ok(strstr(cli->err, "protected") != NULL, "protect: it says why: %.*s",
			   (int)strcspn(cli->err, "\n"), cli->err);
			free(cli);
		}
		cli = sec_cli_run(&env, dirs[GLOB], NULL);
		if (cli) {
			is_int(cli->status, 4, "protect: CGKILL_PROTECTED=FILE: exits 4 on a glob match");
			free(cli);
		}
		ok(sb_alive(pids[EXACT]) && sb_alive(pids[GLOB]), "protect: the protected sleepers are alive");
		cli = sec_cli_run(&env, dirs[EXACT_CHILD], NULL);
		if (cli) {
			is_int(cli->status, 0, "protect: a descendant of a protected cgroup is killed (exit 0)");
			free(cli);
		}
		ok(sb_killed_by(pids[EXACT_CHILD], SIGKILL, 3000), "protect: ... its sleeper died");
		ok(sb_alive(pids[EXACT]), "protect: ... and the protected parent's sleeper is alive");
		cli = sec_cli_run(&env, "-f", dirs[GLOB], NULL);
		if (cli) {
			is_int(cli->status, 0, "protect: -f overrides the list (exit 0)");
			free(cli);
		}
		ok(sb_killed_by(pids[GLOB], SIGKILL, 3000), "protect: ... the sleeper died");
		cli = sec_cli_run(NULL, "--protected", "/nonexistent/cgkill-list", dirs[OTHER], NULL);
		if (cli) {
			is_int(cli->status, 1, "protect: a --protected file that is missing is an error (exit 1)");
			free(cli);
		}
		ok(sb_alive(pids[OTHER]), "protect: ... and nothing was signalled");
	}
	unlink(file);
out:
	for (int i = 0; i < N_NAMES; i++)
		free(dirs[i]);
	sec_scene_end(&s);
}

/* ---- -i, --interactive ---- */

static bool decline(const char *path, unsigned procs, unsigned cgroups, void *data)
{
	unsigned *seen = data;

	(void)path;
	seen[0] = procs;
	seen[1] = cgroups;
	return false;
}

static void test_interactive(void)
{
	static const struct { const char *input; bool yes; } answers[] = {
		{ "y\n", true }, { "yes\n", true }, { "Y\n", true }, { "YES\n", true },
		{ "yes", true }, { "n\n", false }, { "no\n", false }, { "\n", false },
		{ NULL, false }, { "yess\n", false }, { " y\n", false }, { "y es\n", false },
		{ "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\n", false }, { "\x1b[A\n", false },
	};
	struct sec_scene s;
	char *sub = NULL;

	if (!sec_scene_start(&s, box, "ask"))
		goto out;
	sub = sb_mkdir(s.target, "sub");
	if (!ok(sub != NULL, "ask: a child cgroup"))
		goto out;
	for (size_t i = 0; i < sizeof(answers) / sizeof(answers[0]); i++) {
		struct sec_cli_opts co = { .input = answers[i].input };
		const char *shown = answers[i].input ? answers[i].input : "(EOF)";
		pid_t p[3];
		struct sec_cli *cli;
		unsigned dead = 0;

		p[0] = sb_sleeper(s.target);
		p[1] = sb_sleeper(sub);
		p[2] = sb_sleeper(sub);
		cli = sec_cli_run(&co, "-i", s.target, NULL);
		if (!cli)
			continue;
		for (int k = 0; k < 3; k++)
			dead += answers[i].yes ? sb_killed_by(p[k], SIGKILL, 3000) : !sb_alive(p[k]);
		if (i == 0)
			ok(strstr(cli->err, "3 process(es) in 2 cgroup(s)") != NULL,
			   "ask: the question counts 3 processes in 2 cgroups: %.*s",
			   (int)strcspn(cli->err, "\n"), cli->err);
		if (answers[i].yes) {
			ok(cli->status == 0 && dead == 3, "ask: answer '%.*s' kills all (exit %d)",
			   (int)strcspn(shown, "\n"), shown, cli->status);
		} else {
			ok(cli->status == 4 && dead == 0, "ask: answer '%.*s' signals nothing, exit 4 (exit %d)",
			   (int)strcspn(shown, "\n"), shown, cli->status);
			for (int k = 0; k < 3; k++)
				kill(p[k], SIGKILL);
			sb_wait_empty(s.target, 3000);
		}
		free(cli);
		sb_reap();
	}
	/* The library: a confirm callback that says no. */
	{
		struct cgk_options o = CGK_OPTIONS_INIT;
		struct cgk_report rep;
		unsigned seen[2] = { 0, 0 };
		pid_t p = sb_sleeper(sub);
		int r;

		o.confirm = decline;
		o.userdata = seen;
		r = cgk_kill(s.target, &o, &rep);
		ok(r == -ECANCELED && rep.refused == CGK_GUARD_DECLINED,
		   "ask: a confirm callback that declines: ECANCELED, refused=declined");
		ok(seen[0] == 1 && seen[1] == 2, "ask: it was shown 1 process in 2 cgroups (%u, %u)", seen[0],
		   seen[1]);
		ok(sb_alive(p), "ask: the sleeper is alive");
		cgk_report_free(&rep);
	}
	/* Two targets, two answers. */
	{
		struct sec_cli_opts co = { .input = "n\ny\n" };
		char *t2 = sb_mkdir(s.parent, "T2");
		pid_t a = sb_sleeper(sub), b = t2 ? sb_sleeper(t2) : -1;
		struct sec_cli *cli = sec_cli_run(&co, "-i", s.target, t2, NULL);

		if (cli) {
			is_int(cli->status, 4, "ask: two targets, 'n' then 'y': exit 4 (the worst)");
			ok(sb_alive(a) && sb_killed_by(b, SIGKILL, 3000),
			   "ask: ... the first is spared, the second killed");
			free(cli);
		}
		free(t2);
	}
out:
	free(sub);
	sec_scene_end(&s);
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
	if (sb_mount(SB_V1_FREEZER))
		v1box = sb_create(SB_V1_FREEZER);
	note("sandbox %s%s%s", box, v1box ? ", " : "", v1box ? v1box : "");

	test_roots();
	test_mount_roots();
	test_self();
	test_self_cgns();
	test_pid1();
	test_protected();
	test_interactive();

	ok(sb_destroy(box) == 0, "sandbox removed");
	if (v1box)
		ok(sb_destroy(v1box) == 0, "v1 sandbox removed");
	free(box);
	free(v1box);
	return done_testing();
}
