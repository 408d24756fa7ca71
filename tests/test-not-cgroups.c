// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Paths that are not cgroups, through the library and the command: a
 * missing path, a regular file, a directory that only looks like a cgroup
 * (on tmpfs, and a tmpfs mounted over a real cgroup directory), symlinks to
 * a cgroup or on the way to one, the magic links of /proc. Every one is
 * refused with a message that names it, by every backend, even with force,
 * and nothing is signalled: sleepers and recorders next to (and inside)
 * each target are alive afterwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "cgkill.h"
#include "support/cgfile.h"
#include "support/cmd.h"
#include "support/internals.h"
#include "support/kill.h"
#include "support/record.h"
#include "support/sandbox.h"
#include "support/scene.h"
#include "support/spawn.h"
#include "support/tap.h"

static char *box;		/* the v2 sandbox */
static char *tmpdir;		/* scratch directory on tmpfs */

/* ---- paths that are not cgroups ---- */

static bool names(const char *message, const char *path)
{
	return message && path && strstr(message, path) != NULL;
}

/* All alive? One test point. */
static bool all_alive(const pid_t *pids, unsigned n, const char *fmt, const char *what)
{
	return is_int(sb_count_alive(pids, n), n, fmt, what);
}

static void lib_error(const char *path, int want, const char *what, const pid_t *alive,
		      unsigned n)
{
	cgk_report *rep = NULL;
	int r = cgk_kill(path, NULL, &rep);

	if (want)
		is_int(r, want, "%s: cgk_kill returns %s", what, strerrorname_np(-want));
	else
		ok(r < 0, "%s: cgk_kill fails (%d %s)", what, r, strerrorname_np(-r) ?: "?");
	if (!ok(names(cgk_report_message(rep), path), "%s: the message names the path", what))
		diag("message: %s", cgk_report_message(rep));
	is_int(cgk_report_signalled(rep), 0, "%s: nothing signalled", what);
	if (n)
		all_alive(alive, n, "%s: the processes nearby are alive", what);
	rep = cgk_report_free(rep);
}

static void test_paths(void)
{
	char *p = sb_mkdir(box, "paths"), *c = sb_mkdir(box, "paths/C");
	char *missing = NULL, *rel_missing = NULL, *file = NULL, *regular = NULL;
	char *fake = NULL, *link = NULL, *linkdir = NULL, *via_link = NULL;
	pid_t pids[3];
	char buf[64];

	if (!ok(p && c, "paths: create the cgroups"))
		goto out;
	pids[0] = sb_sleeper(p);
	pids[1] = sb_sleeper(c);
	pids[2] = sb_sleeper(c);

	missing = sb_path(box, "paths/nope");
	lib_error(missing, -ENOENT, "a missing path", NULL, 0);
	cmd_error_is(missing, "ENOENT", 1, "on a missing path");
	/* The form relative to the v2 mount. */
	rel_missing = strdup(missing + strlen(sb_mount(SB_V2)));
	lib_error(rel_missing, -ENOENT, "a missing v2-relative path", NULL, 0);
	lib_error(rel_missing + 1, -ENOENT, "a missing v2-relative path without /", NULL, 0);

	file = sb_path(c, "cgroup.procs");
	lib_error(file, -ENOTDIR, "a regular file in a cgroup", pids, 3);
	cmd_error_is(file, "ENOTDIR", 1, "on a regular file in a cgroup");
	regular = sb_path(tmpdir, "file");
	sb_put(tmpdir, "file", "");
	lib_error(regular, -ENOTDIR, "a regular file on tmpfs", NULL, 0);
	lib_error("", -EINVAL, "an empty path", NULL, 0);
	{
		cgk_report *rep = NULL;

		is_int(cgk_kill(NULL, NULL, &rep), -EINVAL, "a NULL path: -EINVAL");
		rep = cgk_report_free(rep);
	}

	/* A directory that looks like a cgroup, listing a live sleeper. */
	fake = sb_path(tmpdir, "fake");
	mkdir(fake, 0755);
	snprintf(buf, sizeof(buf), "%d\n", (int)pids[1]);
	sb_put(fake, "cgroup.procs", buf);
	sb_put(fake, "cgroup.type", "domain\n");
	sb_put(fake, "cgroup.events", "populated 1\nfrozen 0\n");
	sb_put(fake, "cgroup.kill", "");
	lib_error(fake, 0, "a tmpfs directory with a fake cgroup.procs", pids, 3);
	ok(sb_read(fake, "cgroup.kill", buf, sizeof(buf)) == 0,
	   "fake cgroup: nobody wrote to its cgroup.kill");
	cmd_error_is(fake, "EINVAL", 1, "on a tmpfs directory");
	all_alive(pids, 3, "%s: the processes nearby are alive", "cgkill on a fake cgroup");

	/* Symlinks: to the cgroup, and in the middle of the path. */
	link = sb_path(tmpdir, "link");
	linkdir = sb_path(tmpdir, "linkdir");
	via_link = sb_path(linkdir, "paths/C");
	ok(symlink(c, link) == 0 && symlink(box, linkdir) == 0, "create symlinks to the sandbox");
	lib_error(link, -ELOOP, "a symlink to a cgroup", pids, 3);
	lib_error(via_link, -ELOOP, "a path through a symlink", pids, 3);
	cmd_error_is(link, "ELOOP", 1, "on a symlink to a cgroup");
	all_alive(pids, 3, "%s: the processes nearby are alive", "cgkill on a symlink");
	is_int(sb_count(c, false), 2, "symlinks: both sleepers still in the cgroup");
out:
	if (p)
		sb_destroy(p);
	if (link)
		unlink(link);
	if (linkdir)
		unlink(linkdir);
	free(p);
	free(c);
	free(missing);
	free(rel_missing);
	free(file);
	free(regular);
	free(fake);
	free(link);
	free(linkdir);
	free(via_link);
}

/* ---- directories that look like cgroups ---- */

static const char *const fake_files[] = {
	"cgroup.procs", "tasks", "cgroup.kill", "cgroup.freeze", "cgroup.events",
	"cgroup.type", "freezer.state", "pids.max",
};

/* Files that look like a cgroup's, listing PID 1, us and the victims. */
static bool fake_cgroup(const char *dir, const pid_t *victims, unsigned n)
{
	char procs[256];
	int len = snprintf(procs, sizeof(procs), "1\n%d\n", (int)getpid());
	bool good = true;

	for (unsigned i = 0; i < n; i++)
		len += snprintf(procs + len, sizeof(procs) - (size_t)len, "%d\n", (int)victims[i]);
	good &= sb_put(dir, "cgroup.procs", procs) == 0;
	good &= sb_put(dir, "tasks", procs) == 0;
	good &= sb_put(dir, "cgroup.kill", "") == 0;
	good &= sb_put(dir, "cgroup.freeze", "0\n") == 0;
	good &= sb_put(dir, "cgroup.events", "populated 1\nfrozen 0\n") == 0;
	good &= sb_put(dir, "cgroup.type", "domain\n") == 0;
	good &= sb_put(dir, "freezer.state", "THAWED\n") == 0;
	good &= sb_put(dir, "pids.max", "max\n") == 0;
	return good;
}

/* The files the library could have written to are as we left them. */
static bool fake_untouched(const char *dir)
{
	char buf[64];

	return sb_read(dir, "cgroup.kill", buf, sizeof(buf)) == 0 &&
	       sb_read(dir, "cgroup.freeze", buf, sizeof(buf)) == 2 && !strcmp(buf, "0\n") &&
	       sb_read(dir, "freezer.state", buf, sizeof(buf)) == 7 && !strcmp(buf, "THAWED\n") &&
	       sb_read(dir, "pids.max", buf, sizeof(buf)) == 4 && !strcmp(buf, "max\n");
}

static void fake_remove(const char *dir)
{
	char p[4352];

	for (size_t i = 0; i < sizeof(fake_files) / sizeof(fake_files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, fake_files[i]);
		unlink(p);
	}
	rmdir(dir);
}

/* Every backend and two signals against a fake: refused, nothing touched. */
static void attack_fake(const char *what, const char *path)
{
	static const enum cgk_backend all[] = {
		CGK_BACKEND_AUTO, CGK_BACKEND_KERNEL, CGK_BACKEND_FREEZE,
		CGK_BACKEND_V1_FREEZE, CGK_BACKEND_LOOP,
	};
	static const int sigs[] = { SIGKILL, SIGUSR1 };
	unsigned refused = 0, total = 0;

	for (size_t b = 0; b < sizeof(all) / sizeof(all[0]); b++)
		for (size_t s = 0; s < 2; s++) {
			cgk_report *rep = NULL;
			int r = kill_opts(path, all[b], sigs[s], CGK_FORCE, 1000, NULL, &rep);

			total++;
			/* Refused as not a cgroup, or (a relative path) for its
			 * "..", before any resolution. */
			if (r == -EINVAL && (strstr(cgk_report_message(rep), "not a cgroup") ||
					     strstr(cgk_report_message(rep), "may not contain")))
				refused++;
			else
				diag("%s: backend %s: r=%d: %s", what, cgk_backend_name(all[b]), r,
				     cgk_report_message(rep));
			rep = cgk_report_free(rep);
		}
	is_int(refused, total, "%s: every backend and signal refused (EINVAL), even with force", what);
}

/* A directory on tmpfs with a cgroup.procs that lists PID 1, the test and a
 * recorder in the sibling cgroup. */
static void test_fake_tmpfs(void)
{
	struct scene s;
	struct cmd cli;
	struct statfs sfs;
	char dir[] = "/dev/shm/cgkill-fake.XXXXXX";
	char rel[4096], *up;
	struct cgk_target t;
	char msg[4608];
	pid_t rec;
	int r;

	if (!scene_start(&s, box, "fake"))
		goto out;
	rec = stray_recorder(s.sibling);
	if (!ok(rec > 0, "fake: a recorder in the sibling"))
		goto out;
	if (!mkdtemp(dir)) {
		strcpy(dir, "/tmp/cgkill-fake.XXXXXX");
		if (!ok(mkdtemp(dir) != NULL, "fake: make a directory"))
			goto out;
	}
	if (statfs(dir, &sfs) == 0)
		note("fake: %s is on %s", dir, sfs.f_type == TMPFS_MAGIC ? "tmpfs" : "not tmpfs");
	if (!ok(fake_cgroup(dir, &rec, 1), "fake: write cgroup.procs (PID 1, us, pid %d) and friends",
		(int)rec))
		goto cleanup;

	r = target_open(dir, &t, msg, sizeof(msg));
	is_int(r, -EINVAL, "fake: target_open refuses it");
	ok(strstr(msg, dir) && strstr(msg, "not a cgroup"), "fake: the message names it: %s", msg);
	if (r == 0)
		cgk_target_close(&t);
	attack_fake("fake on tmpfs", dir);

	/* The same directory reached through .. from the v2 mount, as a path
	 * relative to the mount and as an absolute one. */
	up = rel;
	for (const char *c = sb_mount(SB_V2); *c; c++)
		if (*c == '/')
			up += sprintf(up, "../");
	snprintf(up, sizeof(rel) - (size_t)(up - rel), "%s", dir + 1);
	attack_fake("fake via a relative ../ path", rel);
	{
		char abs[4352];

		snprintf(abs, sizeof(abs), "%s/%s", sb_mount(SB_V2), rel);
		attack_fake("fake via an absolute path through the v2 mount and ..", abs);
	}

	cmd_run(&cli, CMD_MS, dir, NULL);
	is_int(cli.status, 1, "fake: cgkill exits 1");
	ok(strstr(cli.err, "not a cgroup") != NULL, "fake: cgkill says why: %.*s",
	   (int)strcspn(cli.err, "\n"), cli.err);
	cmd_free(&cli);
	cmd_run(&cli, CMD_MS, "-f", "-s", "USR1", "-b", "loop", dir, NULL);
	is_int(cli.status, 1, "fake: cgkill -f -s USR1 -b loop exits 1");
	cmd_free(&cli);
	ok(fake_untouched(dir), "fake: cgroup.kill, cgroup.freeze, freezer.state, pids.max untouched");
	ok(sb_alive(rec), "fake: the recorder listed in the fake is alive");
	no_hits("fake");
cleanup:
	fake_remove(dir);
out:
	scene_end(&s);
}

struct overmount_arg {
	const char *target;
	pid_t victims[2];
};

struct overmount_out {
	int setup;		/* 0, or -errno of the mount */
	int lib[2];		/* cgk_kill: KILL auto, USR1 loop */
	int cli;		/* exit status of cgkill */
	bool untouched;
	char msg[512];
};

/* In a private mount namespace: a tmpfs mounted over a real cgroup
 * directory, so the path is inside the cgroup mount but the directory is
 * not a cgroup. */
static void overmount_child(void *argp, void *outp)
{
	struct overmount_arg *a = argp;
	struct overmount_out *o = outp;
	cgk_report *rep = NULL;
	struct cmd cli;

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("cgkill-fake", a->target, "tmpfs", 0, "size=64k") < 0) {
		o->setup = -errno;
		return;
	}
	if (!fake_cgroup(a->target, a->victims, 2)) {
		o->setup = -EIO;
		return;
	}
	o->lib[0] = kill_opts(a->target, CGK_BACKEND_AUTO, SIGKILL, CGK_FORCE, 1000, NULL, &rep);
	snprintf(o->msg, sizeof(o->msg), "%.500s", cgk_report_message(rep));
	rep = cgk_report_free(rep);
	o->lib[1] = kill_opts(a->target, CGK_BACKEND_LOOP, SIGUSR1, CGK_FORCE, 1000, NULL, &rep);
	rep = cgk_report_free(rep);
	cmd_run(&cli, CMD_MS, "-f", a->target, NULL);
	o->cli = cli.status;
	cmd_free(&cli);
	o->untouched = fake_untouched(a->target);
}

static void test_fake_overmount(void)
{
	struct overmount_out o;
	struct overmount_arg a;
	struct scene s;
	pid_t in_target;
	int r;

	if (!scene_start(&s, box, "overmount"))
		goto out;
	in_target = stray_recorder(s.target);
	a.target = s.target;
	a.victims[0] = stray_recorder(s.sibling);
	a.victims[1] = in_target;
	if (!ok(in_target > 0 && a.victims[0] > 0, "overmount: recorders in the target and the sibling"))
		goto out;
	r = child_call(overmount_child, &a, &o, sizeof(o), 60000, NULL);
	if (!is_int(r, 0, "overmount: the child in its own mount namespace reports"))
		goto out;
	if (o.setup < 0) {
		skip("overmount: cannot mount a tmpfs over a cgroup directory: %s", strerror(-o.setup));
		goto out;
	}
	is_int(o.lib[0], -EINVAL, "overmount: tmpfs over a cgroup directory: cgk_kill refuses (%s)",
	       o.msg);
	is_int(o.lib[1], -EINVAL, "overmount: the loop backend with USR1 refuses too");
	is_int(o.cli, 1, "overmount: cgkill -f exits 1");
	ok(o.untouched, "overmount: the fake files are untouched");
	ok(sb_alive(in_target) && sb_alive(a.victims[0]),
	   "overmount: the recorders under the real cgroup and in the sibling are alive");
	no_hits("overmount");
out:
	scene_end(&s);
}

/* ---- symlinks ---- */

/* Symlinks: to the target, to a directory above it, to the v2 root, and
 * the magic links of /proc. */
static void expect_eloop(const char *what, const char *path, const char *resolved)
{
	cgk_report *rep = NULL;
	int r = kill_opts(path, CGK_BACKEND_AUTO, SIGKILL, CGK_FORCE | CGK_DRY_RUN, 0, NULL, &rep);

	is_int(r, -ELOOP, "%s: refused with ELOOP", what);
	if (resolved)
		ok(strstr(cgk_report_message(rep), resolved) != NULL,
		   "%s: the message names the resolved path: %s", what, cgk_report_message(rep));
	is_int(cgk_report_n_processes(rep, CGK_LIST_LISTED), 0, "%s: nothing listed", what);
	rep = cgk_report_free(rep);
	r = kill_opts(path, CGK_BACKEND_AUTO, SIGKILL, CGK_FORCE, 1000, NULL, &rep);
	is_int(r, -ELOOP, "%s: a real kill is refused too", what);
	rep = cgk_report_free(rep);
}

static void test_symlinks(void)
{
	char link1[64], link2[64], link3[64], path[4352], *rootpath = NULL;
	struct scene s;
	struct cmd cli;
	pid_t rec, cwdproc = -1;

	snprintf(link1, sizeof(link1), "/dev/shm/cgkill-link.%d", (int)getpid());
	snprintf(link2, sizeof(link2), "/dev/shm/cgkill-dlink.%d", (int)getpid());
	snprintf(link3, sizeof(link3), "/dev/shm/cgkill-rlink.%d", (int)getpid());
	if (!scene_start(&s, box, "symlink"))
		goto out;
	rec = stray_recorder(s.target);
	if (!ok(rec > 0, "symlink: a recorder in the target"))
		goto out;
	if (!ok(symlink(s.target, link1) == 0 && symlink(s.parent, link2) == 0 &&
		symlink(sb_mount(SB_V2), link3) == 0, "symlink: make the links in /dev/shm"))
		goto out;

	expect_eloop("symlink to the target", link1, s.target);
	snprintf(path, sizeof(path), "%s/T", link2);
	expect_eloop("symlink as a middle component", path, s.target);
	expect_eloop("symlink to the v2 root", link3, sb_mount(SB_V2));
	snprintf(path, sizeof(path), "%s/", link1);
	expect_eloop("symlink with a trailing slash", path, NULL);

	cmd_run(&cli, CMD_MS, link1, NULL);
	is_int(cli.status, 1, "symlink: cgkill exits 1");
	ok(strstr(cli.err, s.target) && strstr(cli.err, "symlink"),
	   "symlink: cgkill names the resolved path: %.*s", (int)strcspn(cli.err, "\n"), cli.err);
	cmd_free(&cli);

	/* /proc/PID/cwd and /proc/PID/root are magic links. */
	cwdproc = sb_fork();
	if (cwdproc == 0) {
		if (chdir(s.target) < 0)
			_exit(1);
		for (;;)
			pause();
	}
	sb_sleep_ms(50);
	snprintf(path, sizeof(path), "/proc/%d/cwd", (int)cwdproc);
	expect_eloop("/proc/PID/cwd (a magic link into the cgroup)", path, NULL);
	if (asprintf(&rootpath, "/proc/%d/root%s", (int)cwdproc, s.target) > 0)
		expect_eloop("/proc/PID/root/... (a magic link on the way)", rootpath, NULL);
	snprintf(path, sizeof(path), "/proc/self/root%s", s.target);
	expect_eloop("/proc/self/root/... (/proc/self is a symlink)", path, NULL);

	ok(sb_alive(rec), "symlink: the recorder in the target is alive");
	no_hits("symlink");
out:
	if (cwdproc > 0) {
		kill(cwdproc, SIGKILL);
		sb_wait_reaped(cwdproc, 2000);
	}
	free(rootpath);
	unlink(link1);
	unlink(link2);
	unlink(link3);
	scene_end(&s);
}

int main(void)
{
	char tmpl[] = "/tmp/cgkill-test.XXXXXX";

	box = sb_start(300);
	rec_init();
	tmpdir = mkdtemp(tmpl);
	if (!tmpdir)
		bail_out("mkdtemp: %m");
	note("sandbox %s, scratch %s", box, tmpdir);

	test_paths();
	test_fake_tmpfs();
	test_fake_overmount();
	test_symlinks();

	{
		char cmd[256];

		snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", tmpdir);
		if (system(cmd) != 0)
			diag("cannot remove %s", tmpdir);
	}
	return sb_finish(box);
}
