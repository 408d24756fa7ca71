// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The root guard: the root of every hierarchy is refused, in every
 * spelling, even with --force, through the library and the command; so is
 * what a bind mount or a cgroup namespace's own mount shows as a root, and
 * the default protected list applies to paths seen from inside a cgroup
 * namespace.
 *
 * CAREFUL: a root-guard test that fails kills the machine (every process of
 * it lives in the root cgroups). So each root is first checked with the
 * internal cgk_target_open() to be seen as the root, then a dry run must be
 * refused, and the test bails out or stops if either says otherwise; the
 * first calls that are not dry runs force a backend that cannot act on a
 * hierarchy root at all (no cgroup.kill there; v1 is not its kind), or a
 * harmless signal, so even a broken guard could not kill anything through
 * them. Only then, on v2, the real thing.
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
static char *v1pids;		/* v1 pids sandbox, or NULL */

/* ---- spellings of the root of every hierarchy ---- */

/* One spelling of a hierarchy root; version tells which. */
static void root_spelling(const char *path, int version)
{
	struct cgk_target t;
	cgk_report *rep = NULL;
	struct cmd cli;
	char msg[4608];
	bool root;
	int r;

	r = target_open(path, &t, msg, sizeof(msg));
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

	r = kill_opts(path, CGK_BACKEND_AUTO, SIGKILL, CGK_DRY_RUN | CGK_FORCE, 3000, NULL, &rep);
	if (!ok(r == -EPERM && cgk_report_refused(rep) == CGK_GUARD_ROOT && cgk_report_n_processes(rep, CGK_LIST_LISTED) == 0,
		"root '%s': a forced dry run is refused by the root guard (%s)", path, cgk_report_message(rep)))
		bail_out("the root guard does not refuse a dry run: stopping before any kill");
	rep = cgk_report_free(rep);

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
	r = kill_opts(path, CGK_BACKEND_KERNEL, SIGKILL, CGK_FORCE, 3000, NULL, &rep);
	ok(r == -EPERM && cgk_report_refused(rep) == CGK_GUARD_ROOT,
	   "root '%s': a forced kill is refused by the root guard", path);
	rep = cgk_report_free(rep);
	cmd_run(&cli, CMD_MS, "-f", "-b", "kernel", path, NULL);
	is_int(cli.status, 4, "root '%s': cgkill -f -b kernel exits 4", path);
	ok(strstr(cli.err, "root") != NULL, "root: cgkill says why: %.*s",
	   (int)strcspn(cli.err, "\n"), cli.err);
	cmd_free(&cli);
	cmd_run(&cli, CMD_MS, "-f", "-n", path, NULL);
	is_int(cli.status, 4, "root '%s': cgkill -f -n exits 4", path);
	cmd_free(&cli);
}

static void test_roots(void)
{
	cgk_hierarchies *h = NULL;
	char buf[4400];
	const char *v2 = sb_mount(SB_V2);

	if (!is_int(cgk_hierarchies_read(&h), 0, "roots: list the hierarchies") ||
	    !cgk_hierarchies_count(h)) {
		cgk_hierarchies_free(h);
		return;
	}
	for (size_t i = 0; i < cgk_hierarchies_count(h); i++) {
		root_spelling(cgk_hierarchies_path(h, i), cgk_hierarchies_version(h, i));
		snprintf(buf, sizeof(buf), "%s//", cgk_hierarchies_path(h, i));
		root_spelling(buf, cgk_hierarchies_version(h, i));
	}
	cgk_hierarchies_free(h);
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

/* ---- roots that mounts show ---- */

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
	cgk_report *rep = NULL;
	static const char *const defaults[] = { "system.slice", "init.scope", "user.slice",
						"machine.slice" };

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    !mkdtemp(d1) || !mkdtemp(d2) || !mkdtemp(d3) ||
	    mount(a->target, d1, NULL, MS_BIND, NULL) < 0 ||
	    mount(sb_mount(SB_V2), d2, NULL, MS_BIND, NULL) < 0) {
		o->setup = -errno;
		goto out;
	}
	o->sub_open = target_open(d1, &t, msg, sizeof(msg));
	o->sub_root = o->sub_open == 0 && t.is_root;
	if (o->sub_open == 0) {
		snprintf(o->sub_rel, sizeof(o->sub_rel), "%s", t.rel);
		cgk_target_close(&t);
	}
	o->sub_dry = kill_opts(d1, CGK_BACKEND_AUTO, SIGKILL, CGK_DRY_RUN, 3000, NULL, &rep);
	o->sub_listed = (int)cgk_report_n_processes(rep, CGK_LIST_LISTED);
	rep = cgk_report_free(rep);

	o->root_open = target_open(d2, &t, msg, sizeof(msg));
	o->root_root = o->root_open == 0 && t.is_root;
	if (o->root_open == 0)
		cgk_target_close(&t);
	if (o->root_root) {
		o->root_dry = kill_opts(d2, CGK_BACKEND_AUTO, SIGKILL, CGK_DRY_RUN | CGK_FORCE, 3000,
					NULL, &rep);
		o->root_refused = cgk_report_refused(rep);
		rep = cgk_report_free(rep);
	}

	/* An empty file over our mountinfo: an absolute path still resolves
	 * (statmount, Linux 6.8), one relative to the v2 mount cannot. */
	snprintf(p, sizeof(p), "/proc/%d/mountinfo", (int)getpid());
	o->blind = mount("/dev/null", p, NULL, MS_BIND, NULL) < 0 ? -errno : 0;
	if (o->blind == 0) {
		o->blind_open = target_open(a->target, &t, msg, sizeof(msg));
		if (o->blind_open == 0) {
			snprintf(o->blind_rel, sizeof(o->blind_rel), "%s", t.rel);
			cgk_target_close(&t);
		}
		o->blind_relative = target_open(a->target + strlen(sb_mount(SB_V2)), &t, msg,
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
	o->ns_open = target_open(d3, &t, msg, sizeof(msg));
	o->ns_root = o->ns_open == 0 && t.is_root;
	if (o->ns_open == 0)
		cgk_target_close(&t);
	if (o->ns_root) {
		o->ns_dry = kill_opts(d3, CGK_BACKEND_AUTO, SIGKILL, CGK_DRY_RUN | CGK_FORCE, 3000,
				      NULL, &rep);
		o->ns_refused = cgk_report_refused(rep);
		rep = cgk_report_free(rep);
	}
	/* The default protected list, matched against paths in the namespace:
	 * no protected file at all (the variable points at nothing). */
	setenv("CGKILL_PROTECTED", "/nonexistent/cgkill-protected", 1);
	for (int i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s/%s", d3, defaults[i]);
		mkdir(p, 0755);
		kill_opts(p, CGK_BACKEND_AUTO, SIGKILL, CGK_DRY_RUN, 3000, NULL, &rep);
		o->def_refused[i] = cgk_report_refused(rep);
		rep = cgk_report_free(rep);
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
	struct scene s;
	struct mounts_out o;
	struct mounts_arg a;
	char *nsroot = NULL;
	const char *rel;
	pid_t p;
	int r;

	if (!scene_start(&s, box, "mounts"))
		goto out;
	nsroot = sb_mkdir(s.parent, "ns");
	p = sb_sleeper(s.target);
	if (!ok(p > 0 && nsroot, "mounts: a sleeper in the target"))
		goto out;
	a.target = s.target;
	a.nsroot = nsroot;
	rel = s.target + strlen(sb_mount(SB_V2));
	r = child_call(mounts_child, &a, &o, sizeof(o), 60000, NULL);
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
	scene_end(&s);
}

/* ---- the root guard, step by step ---- */

/* Is path the root of its hierarchy according to the library? Also
 * checks that a sandbox next to it is not. */
static bool gate_is_root(const char *path, const char *sandbox)
{
	struct cgk_target tgt;
	char msg[512];
	bool root = false, not_root = false;
	int r = target_open(path, &tgt, msg, sizeof(msg));

	if (r == 0) {
		root = tgt.is_root;
		cgk_target_close(&tgt);
	}
	ok(r == 0 && root, "root %s: cgk_target_open says is_root", path);
	r = target_open(sandbox, &tgt, msg, sizeof(msg));
	if (r == 0) {
		not_root = !tgt.is_root;
		cgk_target_close(&tgt);
	}
	ok(r == 0 && not_root, "root: the sandbox %s is not a root", sandbox);
	return root && not_root;
}

static bool root_call(const char *path, const char *resolved, enum cgk_backend b, int sig,
		      unsigned flags, const char *what)
{
	cgk_report *rep = NULL;
	bool good = true;
	int r = kill_opts(path, b, sig, flags, KILL_WAIT_MS, NULL, &rep);

	good &= ok(r < 0, "root %s (%s): cgk_kill fails (%d)", path, what, r);
	good &= is_int(cgk_report_refused(rep), CGK_GUARD_ROOT,
		       "root %s (%s): refused by the root guard", path, what);
	good &= is_int(cgk_report_signalled(rep), 0, "root %s (%s): nothing signalled", path, what);
	good &= is_int(cgk_report_n_processes(rep, CGK_LIST_LISTED), 0,
		       "root %s (%s): nothing listed", path, what);
	if (!ok(strstr(cgk_report_message(rep), path) || strstr(cgk_report_message(rep), resolved),
		"root %s (%s): the message names it", path, what))
		diag("message: %s", cgk_report_message(rep));
	rep = cgk_report_free(rep);
	return good;
}

static void test_root(enum sb_hier h, const char *sandbox, enum cgk_backend harmless)
{
	const char *m = sb_mount(h);
	struct cmd res;
	char *dotdot;

	if (!m || !sandbox)
		return;
	/* Step by step; stop at the first doubt. */
	if (!gate_is_root(m, sandbox)) {
		diag("the library does not see %s as a root: not calling cgk_kill on it", m);
		return;
	}
	if (!root_call(m, m, harmless, SIGKILL, CGK_DRY_RUN, "dry run"))
		return;
	/* A backend that has nothing to write at a root, then a harmless signal. */
	if (!root_call(m, m, harmless, SIGKILL, 0, cgk_backend_name(harmless)))
		return;
	if (!root_call(m, m, CGK_BACKEND_AUTO, SIGCONT, 0, "auto, SIGCONT"))
		return;
	cmd_run(&res, 30000, "-b", cgk_backend_name(harmless), m, NULL);
	is_int(res.status, 4, "cgkill -b %s %s: exit status 4", cgk_backend_name(harmless), m);
	if (!ok(strstr(res.err, m) != NULL, "cgkill on %s: stderr names it", m))
		diag("stderr: %s", res.err);
	cmd_free(&res);
	if (res.status != 4)
		return;
	/* A different spelling of the same root. */
	if (asprintf(&dotdot, "%s/..", sandbox) > 0) {
		if (gate_is_root(dotdot, sandbox))
			root_call(dotdot, m, harmless, SIGKILL, 0, "spelled sandbox/..");
		free(dotdot);
	}
	if (h != SB_V2)
		return;
	/* The real thing, on v2 only, now that the guard proved itself. */
	if (!root_call(m, m, CGK_BACKEND_AUTO, SIGKILL, 0, "auto, SIGKILL"))
		return;
	root_call("/", m, CGK_BACKEND_AUTO, SIGKILL, 0, "v2-relative /");
	cmd_run(&res, 30000, m, NULL);
	is_int(res.status, 4, "cgkill %s: exit status 4", m);
	cmd_free(&res);
}

int main(void)
{
	box = sb_start(600);
	if (sb_mount(SB_V1_FREEZER))
		v1box = sb_create(SB_V1_FREEZER);
	if (sb_mount(SB_V1_PIDS))
		v1pids = sb_create(SB_V1_PIDS);

	test_roots();
	test_mount_roots();
	/* Step by step on each hierarchy, the real thing on v2 last. */
	test_root(SB_V1_FREEZER, v1box, CGK_BACKEND_V1_FREEZE);
	test_root(SB_V1_PIDS, v1pids, CGK_BACKEND_V1_FREEZE);
	test_root(SB_V2, box, CGK_BACKEND_KERNEL);

	if (v1box)
		ok(sb_destroy(v1box) == 0, "v1 sandbox removed");
	if (v1pids)
		ok(sb_destroy(v1pids) == 0, "v1 pids sandbox removed");
	free(v1box);
	free(v1pids);
	return sb_finish(box);
}
