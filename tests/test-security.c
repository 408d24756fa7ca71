// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Adversarial targets: things that look like cgroups and are not, symlinks,
 * every spelling of a path, names that are not text, paths longer than
 * PATH_MAX, thousands of children, deep trees, and cgroups that vanish or
 * are replaced while they are being killed. Every scene has sentinels in
 * the parent and in a sibling of the target that must survive, and
 * recorders outside the target that tell if any signal reached them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgkill.h"
#include "internal.h"
#include "sandbox.h"
#include "secutil.h"
#include "tap.h"

#define DEADLINE_MS 10000

static char *box;		/* the v2 sandbox */
static struct sec_hits hits;	/* recorders outside the targets write here */

static const enum cgk_backend v2_backends[] = {
	CGK_BACKEND_KERNEL, CGK_BACKEND_FREEZE, CGK_BACKEND_LOOP,
};
#define N_V2_BACKENDS (sizeof(v2_backends) / sizeof(v2_backends[0]))

static int kill_opts(const char *path, enum cgk_backend b, int sig, unsigned flags,
		     uint64_t wait_ms, struct cgk_report *rep)
{
	struct cgk_options o = CGK_OPTIONS_INIT;

	o.backend = b;
	o.signal = sig;
	o.flags = flags;
	o.wait_ms = wait_ms;
	return cgk_kill(path, &o, rep);
}

static bool no_hits(const char *what)
{
	int last = 0;
	unsigned n;

	sb_sleep_ms(20);	/* a stray signal is delivered at once; be fair */
	n = sec_hits_take(&hits, &last);
	if (!is_int(n, 0, "%s: no recorder outside the target got a signal", what))
		diag("    last signal seen: %d", last);
	return n == 0;
}

static int write_file(const char *dir, const char *name, const char *text)
{
	char p[4352];
	int fd, r = 0;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		r = -EIO;
	close(fd);
	return r;
}

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
	good &= write_file(dir, "cgroup.procs", procs) == 0;
	good &= write_file(dir, "tasks", procs) == 0;
	good &= write_file(dir, "cgroup.kill", "") == 0;
	good &= write_file(dir, "cgroup.freeze", "0\n") == 0;
	good &= write_file(dir, "cgroup.events", "populated 1\nfrozen 0\n") == 0;
	good &= write_file(dir, "cgroup.type", "domain\n") == 0;
	good &= write_file(dir, "freezer.state", "THAWED\n") == 0;
	good &= write_file(dir, "pids.max", "max\n") == 0;
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
			struct cgk_report rep;
			int r = kill_opts(path, all[b], sigs[s], CGK_FORCE, 1000, &rep);

			total++;
			/* Refused as not a cgroup, or (a relative path) for its
			 * "..", before any resolution. */
			if (r == -EINVAL && (strstr(rep.message, "not a cgroup") ||
					     strstr(rep.message, "may not contain")))
				refused++;
			else
				diag("%s: backend %s: r=%d: %s", what, cgk_backend_name(all[b]), r,
				     rep.message);
			cgk_report_free(&rep);
		}
	is_int(refused, total, "%s: every backend and signal refused (EINVAL), even with force", what);
}

/* A directory on tmpfs with a cgroup.procs that lists PID 1, the test and a
 * recorder in the sibling cgroup. */
static void test_fake_tmpfs(void)
{
	struct sec_scene s;
	struct sec_cli *cli;
	struct statfs sfs;
	char dir[] = "/dev/shm/cgkill-fake.XXXXXX";
	char rel[4096], *up;
	struct cgk_target t;
	char msg[4608];
	pid_t rec;
	int r;

	if (!sec_scene_start(&s, box, "fake"))
		goto out;
	rec = sec_spawn(s.sibling, -1, &hits);
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

	r = cgk_target_open(dir, &t, msg, sizeof(msg));
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

	cli = sec_cli_run(NULL, dir, NULL);
	if (cli) {
		is_int(cli->status, 1, "fake: cgkill exits 1");
		ok(strstr(cli->err, "not a cgroup") != NULL, "fake: cgkill says why: %.*s",
		   (int)strcspn(cli->err, "\n"), cli->err);
		free(cli);
	}
	cli = sec_cli_run(NULL, "-f", "-s", "USR1", "-b", "loop", dir, NULL);
	if (cli) {
		is_int(cli->status, 1, "fake: cgkill -f -s USR1 -b loop exits 1");
		free(cli);
	}
	ok(fake_untouched(dir), "fake: cgroup.kill, cgroup.freeze, freezer.state, pids.max untouched");
	ok(sb_alive(rec), "fake: the recorder listed in the fake is alive");
	no_hits("fake");
cleanup:
	fake_remove(dir);
out:
	sec_scene_end(&s);
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
	struct cgk_report rep;
	struct sec_cli *cli;

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("cgkill-fake", a->target, "tmpfs", 0, "size=64k") < 0) {
		o->setup = -errno;
		return;
	}
	if (!fake_cgroup(a->target, a->victims, 2)) {
		o->setup = -EIO;
		return;
	}
	o->lib[0] = kill_opts(a->target, CGK_BACKEND_AUTO, SIGKILL, CGK_FORCE, 1000, &rep);
	snprintf(o->msg, sizeof(o->msg), "%.500s", rep.message);
	cgk_report_free(&rep);
	o->lib[1] = kill_opts(a->target, CGK_BACKEND_LOOP, SIGUSR1, CGK_FORCE, 1000, &rep);
	cgk_report_free(&rep);
	cli = sec_cli_run(NULL, "-f", a->target, NULL);
	o->cli = cli ? cli->status : -1;
	free(cli);
	o->untouched = fake_untouched(a->target);
}

static void test_fake_overmount(void)
{
	struct overmount_out o;
	struct overmount_arg a;
	struct sec_scene s;
	pid_t in_target;
	int r;

	if (!sec_scene_start(&s, box, "overmount"))
		goto out;
	in_target = sec_spawn(s.target, -1, &hits);
	a.target = s.target;
	a.victims[0] = sec_spawn(s.sibling, -1, &hits);
	a.victims[1] = in_target;
	if (!ok(in_target > 0 && a.victims[0] > 0, "overmount: recorders in the target and the sibling"))
		goto out;
	r = sec_child(overmount_child, &a, &o, sizeof(o), 60000, NULL);
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
	sec_scene_end(&s);
}

/*
 * A bind mount inside the target's subtree: the sibling cgroup mounted over
 * a child of the target (in a private mount namespace). Walking into it
 * would lead outside the target; the walk refuses to cross the mount.
 */
struct bindin_arg {
	const char *target, *child, *sibling;
};

struct bindin_out {
	int setup;
	int r[3], error[3];
	char msg[3][256];
};

static void bindin_child(void *argp, void *outp)
{
	struct bindin_arg *a = argp;
	struct bindin_out *o = outp;
	static const enum cgk_backend bs[] = { CGK_BACKEND_FREEZE, CGK_BACKEND_LOOP, CGK_BACKEND_KERNEL };

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount(a->sibling, a->child, NULL, MS_BIND, NULL) < 0) {
		o->setup = -errno;
		return;
	}
	for (int i = 0; i < 3; i++) {
		struct cgk_report rep;

		o->r[i] = kill_opts(a->target, bs[i], bs[i] == CGK_BACKEND_KERNEL ? SIGKILL : SIGUSR1,
				    0, 2000, &rep);
		o->error[i] = rep.error;
		snprintf(o->msg[i], sizeof(o->msg[i]), "%.250s", rep.message);
		cgk_report_free(&rep);
	}
}

static void test_bind_inside(void)
{
	struct sec_scene s;
	struct bindin_arg a;
	struct bindin_out o;
	char *child = NULL;
	pid_t rec, below;
	int r;

	if (!sec_scene_start(&s, box, "bindin"))
		goto out;
	child = sb_mkdir(s.target, "c");
	rec = sec_spawn(s.sibling, -1, &hits);
	below = child ? sb_sleeper(child) : -1;
	if (!ok(rec > 0 && below > 0, "bindin: a recorder in the sibling, a sleeper in T/c"))
		goto out;
	a = (struct bindin_arg){ .target = s.target, .child = child, .sibling = s.sibling };
	r = sec_child(bindin_child, &a, &o, sizeof(o), 60000, NULL);
	if (!is_int(r, 0, "bindin: the child in its own mount namespace reports"))
		goto out;
	if (o.setup < 0) {
		skip("bindin: cannot bind-mount a cgroup: %s", strerror(-o.setup));
		goto out;
	}
	is_int(o.r[0], -EXDEV, "bindin: freeze refuses to cross the mount (%s)", o.msg[0]);
	is_int(o.r[1], -EXDEV, "bindin: loop refuses to cross the mount (%s)", o.msg[1]);
	ok(o.r[2] == 0 && o.error[2] == 0,
	   "bindin: the kernel backend kills (cgroup.kill ignores mounts), no error reported (%s)",
	   o.msg[2]);
	ok(sb_alive(rec), "bindin: the recorder in the sibling (mounted inside T) is alive");
	no_hits("bindin");
	/* The kernel's own cgroup.kill ignores mounts: T/c is in T. */
	ok(!sb_alive(below) || sb_killed_by(below, SIGKILL, 3000),
	   "bindin: the sleeper in the real T/c died (kernel backend)");
out:
	free(child);
	sec_scene_end(&s);
}

/* Symlinks: to the target, to a directory above it, to the v2 root, and
 * the magic links of /proc. */
static void expect_eloop(const char *what, const char *path, const char *resolved)
{
	struct cgk_report rep;
	int r = kill_opts(path, CGK_BACKEND_AUTO, SIGKILL, CGK_FORCE | CGK_DRY_RUN, 0, &rep);

	is_int(r, -ELOOP, "%s: refused with ELOOP", what);
	if (resolved)
		ok(strstr(rep.message, resolved) != NULL, "%s: the message names the resolved path: %s",
		   what, rep.message);
	is_int(rep.listed.n, 0, "%s: nothing listed", what);
	cgk_report_free(&rep);
	r = kill_opts(path, CGK_BACKEND_AUTO, SIGKILL, CGK_FORCE, 1000, &rep);
	is_int(r, -ELOOP, "%s: a real kill is refused too", what);
	cgk_report_free(&rep);
}

static void test_symlinks(void)
{
	char link1[64], link2[64], link3[64], path[4352], *rootpath = NULL;
	struct sec_scene s;
	struct sec_cli *cli;
	pid_t rec, cwdproc = -1;

	snprintf(link1, sizeof(link1), "/dev/shm/cgkill-link.%d", (int)getpid());
	snprintf(link2, sizeof(link2), "/dev/shm/cgkill-dlink.%d", (int)getpid());
	snprintf(link3, sizeof(link3), "/dev/shm/cgkill-rlink.%d", (int)getpid());
	if (!sec_scene_start(&s, box, "symlink"))
		goto out;
	rec = sec_spawn(s.target, -1, &hits);
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

	cli = sec_cli_run(NULL, link1, NULL);
	if (cli) {
		is_int(cli->status, 1, "symlink: cgkill exits 1");
		ok(strstr(cli->err, s.target) && strstr(cli->err, "symlink"),
		   "symlink: cgkill names the resolved path: %.*s",
		   (int)strcspn(cli->err, "\n"), cli->err);
		free(cli);
	}

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
	sec_scene_end(&s);
}

/* Every spelling of one target resolves to it; other spellings name what
 * they really name. */
static void test_spellings(void)
{
	struct sec_scene s;
	struct cgk_report rep;
	char *child = NULL, *rel, buf[8192];
	const char *mnt = sb_mount(SB_V2);
	pid_t p1, p2;
	int r;

	if (!sec_scene_start(&s, box, "spell"))
		goto out;
	child = sb_mkdir(s.target, "c");
	p1 = sb_sleeper(s.target);
	p2 = child ? sb_sleeper(child) : -1;
	if (!ok(p1 > 0 && p2 > 0, "spell: sleepers in the target and its child"))
		goto out;
	rel = s.target + strlen(mnt);	/* "/cgkill-test.../spell/T" */

	{
		char v[12][4400];
		unsigned n = 0, good = 0;

		snprintf(v[n++], sizeof(v[0]), "%s/", s.target);
		snprintf(v[n++], sizeof(v[0]), "%s//", s.target);
		snprintf(v[n++], sizeof(v[0]), "%s//T", s.parent);
		snprintf(v[n++], sizeof(v[0]), "%s/./T/.", s.parent);
		snprintf(v[n++], sizeof(v[0]), "%s/S/../T", s.parent);
		snprintf(v[n++], sizeof(v[0]), "%s/c/..", s.target);
		snprintf(v[n++], sizeof(v[0]), "%s//%s", mnt, rel + 1);
		snprintf(v[n++], sizeof(v[0]), "%s/../%s%s", mnt, strrchr(mnt, '/') + 1, rel);
		snprintf(v[n++], sizeof(v[0]), "%s", rel);		/* as /proc/PID/cgroup */
		snprintf(v[n++], sizeof(v[0]), "%s", rel + 1);	/* relative to the mount */
		snprintf(v[n++], sizeof(v[0]), "./%s//", rel + 1);
		for (unsigned i = 0; i < n; i++) {
			struct cgk_target t;
			char msg[4608];

			r = cgk_target_open(v[i], &t, msg, sizeof(msg));
			if (r == 0 && !strcmp(t.path, s.target) && !t.is_root && t.version == 2)
				good++;
			else
				diag("spelling '%s': r=%d path=%s %s", v[i], r, r ? "" : t.path, msg);
			if (r == 0)
				cgk_target_close(&t);
		}
		is_int(good, n, "spell: %u spellings (//, /./, /../, trailing /, relative) resolve to the target",
		       n);
		r = kill_opts(v[3], CGK_BACKEND_FREEZE, SIGKILL, 0, DEADLINE_MS, &rep);
		is_int(r, 0, "spell: kill through '%s'", v[3]);
		ok(!strcmp(rep.path, s.target), "spell: the report names the canonical path");
		cgk_report_free(&rep);
		ok(sb_killed_by(p1, SIGKILL, 5000) && sb_killed_by(p2, SIGKILL, 5000),
		   "spell: both sleepers died");
	}

	/* "T/.." is the parent, not T: the guard and listing see the parent. */
	{
		struct cgk_target t;
		char msg[4608];

		snprintf(buf, sizeof(buf), "%s/..", s.target);
		r = cgk_target_open(buf, &t, msg, sizeof(msg));
		ok(r == 0 && !strcmp(t.path, s.parent), "spell: '%s' is the parent", buf);
		if (r == 0)
			cgk_target_close(&t);
		r = kill_opts(buf, CGK_BACKEND_AUTO, SIGKILL, CGK_DRY_RUN, 0, &rep);
		ok(r == 0 && rep.listed.n == s.sent.n, "spell: a dry run of T/.. lists the %u sentinels",
		   s.sent.n);
		cgk_report_free(&rep);
	}

	/* Not directories, not there, not a name. */
	snprintf(buf, sizeof(buf), "%s/cgroup.procs", s.parent);
	r = kill_opts(buf, CGK_BACKEND_AUTO, SIGKILL, CGK_FORCE, 1000, &rep);
	is_int(r, -ENOTDIR, "spell: a cgroup file as the target: ENOTDIR (%s)", rep.message);
	cgk_report_free(&rep);
	snprintf(buf, sizeof(buf), "%s/nope", s.parent);
	r = kill_opts(buf, CGK_BACKEND_AUTO, SIGKILL, 0, 1000, &rep);
	is_int(r, -ENOENT, "spell: a missing cgroup: ENOENT");
	cgk_report_free(&rep);
	r = kill_opts("", CGK_BACKEND_AUTO, SIGKILL, 0, 1000, &rep);
	is_int(r, -EINVAL, "spell: an empty path: EINVAL");
	cgk_report_free(&rep);
	{
		char longname[300];

		memset(longname, 'x', 256);
		longname[256] = '\0';
		snprintf(buf, sizeof(buf), "%s/%s", s.parent, longname);
		r = kill_opts(buf, CGK_BACKEND_AUTO, SIGKILL, 0, 1000, &rep);
		ok(r == -ENAMETOOLONG || r == -ENOENT,
		   "spell: a component of 256 bytes: ENAMETOOLONG or ENOENT (%d)", r);
		cgk_report_free(&rep);
	}
	{
		char *huge = malloc(6001);

		if (huge) {
			size_t n = (size_t)snprintf(huge, 6001, "%s", s.parent);

			while (n + 2 < 6000) {
				huge[n++] = '/';
				huge[n++] = '.';
			}
			huge[n] = '\0';
			r = kill_opts(huge, CGK_BACKEND_AUTO, SIGKILL, 0, 1000, &rep);
			is_int(r, -ENAMETOOLONG, "spell: a path of 6000 bytes: ENAMETOOLONG");
			cgk_report_free(&rep);
			free(huge);
		}
	}
	{
		struct sec_cli *cli;

		snprintf(buf, sizeof(buf), "%s/cgroup.procs", s.parent);
		cli = sec_cli_run(NULL, "-f", buf, NULL);
		if (cli) {
			is_int(cli->status, 1, "spell: cgkill on a cgroup file exits 1");
			free(cli);
		}
	}
out:
	free(child);
	sec_scene_end(&s);
}

/* Names that are not text, start with a dot, hold ':' or terminal escapes. */
static const char *const odd_names[] = {
	"\xff\xfe", ".hidden", "..dots", "a:b:c", " space ", "-dash", "tab\there",
	"caf\xc3\xa9", "\x1b[7mbold", "*glob?[x]", "0::", "cgroup.procs.d",
};
#define N_ODD (sizeof(odd_names) / sizeof(odd_names[0]))

static void test_odd_names(void)
{
	struct sec_scene s;

	if (!sec_scene_start(&s, box, "odd"))
		goto out;
	for (size_t b = 0; b < N_V2_BACKENDS; b++) {
		const char *bn = cgk_backend_name(v2_backends[b]);
		pid_t pids[N_ODD + 1];
		unsigned np = 0, killed = 0;
		struct cgk_report rep;
		int r;

		pids[np] = sb_sleeper(s.target);
		np += pids[np] > 0;
		for (size_t i = 0; i < N_ODD; i++) {
			char *d = sb_mkdir(s.target, odd_names[i]);

			pids[np] = d ? sb_sleeper(d) : -1;
			np += pids[np] > 0;
			free(d);
		}
		if (!is_int(np, N_ODD + 1, "odd %s: a sleeper in the target and in each of %zu odd children",
			    bn, N_ODD))
			break;
		r = kill_opts(s.target, v2_backends[b], SIGKILL, 0, 3000, &rep);
		is_int(r, 0, "odd %s: cgk_kill returns 0 (%s)", bn, rep.message);
		is_int(rep.cgroups, N_ODD + 1, "odd %s: the report counts %zu cgroups", bn, N_ODD + 1);
		for (unsigned i = 0; i < np; i++)
			killed += sb_killed_by(pids[i], SIGKILL, 3000);
		is_int(killed, np, "odd %s: every sleeper died, also under .hidden", bn);
		cgk_report_free(&rep);
	}

	/* The target itself has an odd name; the JSON report stays JSON and
	 * the listing does not carry terminal escapes. */
	{
		char *odd = sb_mkdir(s.target, "\xff\x1b]0;owned\x07:T");
		/* ESC sequences, and CSI as a C1 control in UTF-8 (U+009B). */
		char *child = odd ? sb_mkdir(odd, "\x1b[2J\x1b[31mred\xc2\x9b" "1m") : NULL;
		struct sec_cli *cli;
		pid_t p = child ? sb_sleeper(child) : -1;

		if (!ok(p > 0, "odd: a sleeper below a target with an escape sequence in its name"))
			goto free_odd;
		cli = sec_cli_run(NULL, "-n", odd, NULL);
		if (cli) {
			bool clean = true;

			for (const char *c = cli->out; *c; c++)
				if (((unsigned char)*c < 0x20 && *c != '\n' && *c != '\t') ||
				    ((unsigned char)c[0] == 0xc2 && (unsigned char)c[1] >= 0x80 &&
				     (unsigned char)c[1] <= 0x9f))
					clean = false;
			is_int(cli->status, 0, "odd: cgkill -n exits 0");
			ok(clean, "odd: the listing holds no control characters, C0 or C1 (terminal escapes)");
			free(cli);
		}
		cli = sec_cli_run(NULL, "-j", odd, NULL);
		if (cli) {
			is_int(cli->status, 0, "odd: cgkill -j exits 0");
			is_int(sec_json_num(cli->out, "emptied"), 1, "odd: the JSON report says emptied");
			ok(!strchr(cli->out, '\x1b') && !strchr(cli->out, '\xff'),
			   "odd: the JSON holds no raw escape or invalid UTF-8 byte");
			free(cli);
		}
		ok(sb_killed_by(p, SIGKILL, 3000), "odd: the sleeper died");
free_odd:
		free(odd);
		free(child);
	}
out:
	sec_scene_end(&s);
}

/* The same walk on a v1 hierarchy: dot names are cgroups there too. */
static void test_odd_names_v1(void)
{
	static const enum cgk_backend bs[] = { CGK_BACKEND_V1_FREEZE, CGK_BACKEND_LOOP };
	char *v1box = sb_mount(SB_V1_FREEZER) ? sb_create(SB_V1_FREEZER) : NULL;
	struct sec_scene s;

	if (!v1box) {
		skip("odd v1: no v1 freezer hierarchy");
		return;
	}
	if (!sec_scene_start(&s, v1box, "odd"))
		goto out;
	for (size_t b = 0; b < 2; b++) {
		const char *bn = cgk_backend_name(bs[b]);
		pid_t pids[N_ODD];
		unsigned np = 0, killed = 0;
		struct cgk_report rep;
		int r;

		for (size_t i = 0; i < N_ODD; i++) {
			char *d = sb_mkdir(s.target, odd_names[i]);

			pids[np] = d ? sb_sleeper(d) : -1;
			np += pids[np] > 0;
			free(d);
		}
		if (!is_int(np, N_ODD, "odd v1 %s: a sleeper in each of %zu odd children", bn, N_ODD))
			break;
		r = kill_opts(s.target, bs[b], SIGKILL, 0, 3000, &rep);
		is_int(r, 0, "odd v1 %s: cgk_kill returns 0 (%s)", bn, rep.message);
		for (unsigned i = 0; i < np; i++)
			killed += sb_killed_by(pids[i], SIGKILL, 3000);
		is_int(killed, np, "odd v1 %s: every sleeper died, also under .hidden", bn);
		cgk_report_free(&rep);
	}
out:
	sec_scene_end(&s);
	ok(sb_destroy(v1box) == 0, "odd v1: sandbox removed");
	free(v1box);
}

/*
 * Paths near and beyond PATH_MAX: a chain of 20 cgroups with 255-byte names
 * below the target, made and used through directory fds.
 */
#define LONG_LEVELS 20

struct selfguard_arg {
	int join_fd, target_fd;
	const char *target;
};

struct selfguard_out {
	int r_fd, r_path, cgroup_read;
	int refused_fd, refused_path;
	char msg[512];
};

/* cgkill sits in a cgroup whose path is longer than PATH_MAX, inside the
 * target: /proc/self/cgroup cannot show it. The guard must still see it. */
static void selfguard_child(void *argp, void *outp)
{
	struct selfguard_arg *a = argp;
	struct selfguard_out *o = outp;
	struct cgk_options opts = CGK_OPTIONS_INIT;
	struct cgk_report rep;
	char *buf = NULL;

	if (sec_join_fd(a->join_fd) < 0) {
		o->r_fd = 1;
		return;
	}
	o->cgroup_read = cgk_read_file_at(AT_FDCWD, "/proc/self/cgroup", &buf, NULL);
	free(buf);
	opts.flags = CGK_DRY_RUN;
	o->r_fd = cgk_kill_fd(a->target_fd, &opts, &rep);
	o->refused_fd = rep.refused;
	snprintf(o->msg, sizeof(o->msg), "%.500s", rep.message);
	cgk_report_free(&rep);
	o->r_path = cgk_kill(a->target, &opts, &rep);
	o->refused_path = rep.refused;
	cgk_report_free(&rep);
}

/* The end of a message about a 4000-byte path is the part worth showing. */
static const char *tail(const char *msg)
{
	size_t n = strlen(msg);

	return n > 120 ? msg + n - 120 : msg;
}

static void test_long_paths(void)
{
	int fds[LONG_LEVELS + 1];
	char names[LONG_LEVELS + 1][256];
	size_t abslen[LONG_LEVELS + 1];
	unsigned k_ok = 0, k_over = 0;
	struct sec_scene s;
	char *path_ok = NULL, *path_over = NULL;
	pid_t pids[4];
	int r;

	for (int i = 0; i <= LONG_LEVELS; i++)
		fds[i] = -1;
	if (!sec_scene_start(&s, box, "long"))
		goto out;
	fds[0] = open(s.target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	abslen[0] = strlen(s.target);
	for (int i = 1; i <= LONG_LEVELS; i++) {
		memset(names[i], 'a' + i % 26, 255);
		names[i][255] = '\0';
		if (mkdirat(fds[i - 1], names[i], 0755) < 0)
			break;
		fds[i] = openat(fds[i - 1], names[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fds[i] < 0)
			break;
		abslen[i] = abslen[i - 1] + 256;
		if (abslen[i] < 4000)
			k_ok = (unsigned)i;
		else if (!k_over && abslen[i] >= 4096)
			k_over = (unsigned)i;
	}
	if (!ok(fds[LONG_LEVELS] >= 0, "long: a chain of %d cgroups with 255-byte names (%zu bytes deep)",
		LONG_LEVELS, abslen[LONG_LEVELS]))
		goto out;
	path_ok = malloc(abslen[k_ok] + 1);
	path_over = malloc(abslen[k_over] + 1);
	if (!path_ok || !path_over)
		goto out;
	strcpy(path_ok, s.target);
	for (unsigned i = 1; i <= k_over; i++) {
		if (i == k_ok + 1)
			strcpy(path_over, path_ok);
		strcat(i <= k_ok ? path_ok : path_over, "/");
		strcat(i <= k_ok ? path_ok : path_over, names[i]);
	}
	note("long: level %u is %zu bytes, level %u is %zu bytes", k_ok, strlen(path_ok), k_over,
	     strlen(path_over));

	/* Just below PATH_MAX: a path the library takes as it is. */
	{
		struct cgk_target t;
		char msg[4608];

		r = cgk_target_open(path_ok, &t, msg, sizeof(msg));
		ok(r == 0 && !strcmp(t.path, path_ok), "long: a %zu-byte target path resolves (%s)",
		   strlen(path_ok), tail(msg));
		if (r == 0)
			cgk_target_close(&t);
		r = cgk_target_open(path_over, &t, msg, sizeof(msg));
		is_int(r, -ENAMETOOLONG, "long: a %zu-byte path: ENAMETOOLONG, clean error (%s)",
		       strlen(path_over), tail(msg));
		if (r == 0)
			cgk_target_close(&t);
	}

	for (int round = 0; round < 4; round++) {
		static const char *const what[] = { "deep target, freeze", "short target, freeze",
						    "short target, loop", "short target, kernel" };
		enum cgk_backend b = round == 3 ? CGK_BACKEND_KERNEL :
				     round == 2 ? CGK_BACKEND_LOOP : CGK_BACKEND_FREEZE;
		const char *target = round == 0 ? path_ok : s.target;
		unsigned first = round == 0 ? k_ok : 0;
		unsigned levels[4] = { first, k_over, k_over + 2, LONG_LEVELS };
		unsigned killed = 0, expect_cgroups = LONG_LEVELS - first + 1;
		struct cgk_report rep;

		for (int i = 0; i < 4; i++)
			pids[i] = sec_spawn(NULL, fds[levels[i]], NULL);
		if (!ok(pids[0] > 0 && pids[1] > 0 && pids[2] > 0 && pids[3] > 0,
			"long %s: sleepers at levels %u, %u, %u and %u", what[round], levels[0],
			levels[1], levels[2], levels[3]))
			break;
		if (round == 0) {
			char p[64], *buf = NULL;

			snprintf(p, sizeof(p), "/proc/%d/cgroup", (int)pids[3]);
			r = cgk_read_file_at(AT_FDCWD, p, &buf, NULL);
			note("long: /proc/PID/cgroup of the deepest sleeper: %s",
			     r < 0 ? strerrorname_np(-r) : "readable");
			free(buf);

			/* The over-long level named by its fd: a clean error. */
			struct cgk_options o = CGK_OPTIONS_INIT;

			r = cgk_kill_fd(fds[k_over], &o, &rep);
			ok(r < 0, "long: cgk_kill_fd on a cgroup beyond PATH_MAX fails cleanly (%s)",
			   tail(rep.message));
			cgk_report_free(&rep);
			ok(sb_alive(pids[2]) && sb_alive(pids[3]), "long: ... and signals nothing");
		}
		r = kill_opts(target, b, SIGKILL, 0, DEADLINE_MS, &rep);
		is_int(r, 0, "long %s: cgk_kill returns 0 (%s)", what[round], tail(rep.message));
		is_int(rep.cgroups, expect_cgroups, "long %s: the report counts %u cgroups", what[round],
		       expect_cgroups);
		for (int i = 0; i < 4; i++)
			killed += sb_killed_by(pids[i], SIGKILL, 3000);
		is_int(killed, 4, "long %s: all 4 sleepers died, also those beyond PATH_MAX", what[round]);
		cgk_report_free(&rep);
	}

	/* The self guard when cgkill's own cgroup is beyond PATH_MAX. */
	{
		struct selfguard_arg a = { .join_fd = fds[LONG_LEVELS], .target_fd = fds[1],
					   .target = s.target };
		struct selfguard_out o;
		pid_t other = sec_spawn(NULL, fds[2], NULL);

		r = sec_child(selfguard_child, &a, &o, sizeof(o), 30000, NULL);
		if (is_int(r, 0, "long: a child in the deepest cgroup reports")) {
			note("long: its /proc/self/cgroup: %s",
			     o.cgroup_read < 0 ? strerrorname_np(-o.cgroup_read) : "readable");
			is_int(o.refused_fd, CGK_GUARD_SELF,
			       "long: the self guard refuses a target holding cgkill beyond PATH_MAX (by fd: %s)",
			       tail(o.msg));
			is_int(o.refused_path, CGK_GUARD_SELF, "long: ... and by path");
		}
		ok(sb_alive(other), "long: nothing was signalled by the dry runs");
	}

	{
		struct sec_cli *cli = sec_cli_run(NULL, "-n", path_ok, NULL);

		if (cli) {
			is_int(cli->status, 0, "long: cgkill -n on the %zu-byte path exits 0",
			       strlen(path_ok));
			free(cli);
		}
	}
out:
	for (int i = LONG_LEVELS; i >= 0; i--)
		if (fds[i] >= 0)
			close(fds[i]);
	if (s.target) {
		int tfd = open(s.target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (tfd >= 0) {
			memset(names[1], 'a' + 1, 255);
			names[1][255] = '\0';
			ok(sec_rmtree_at(tfd, names[1], 0) == 0, "long: the chain is removed");
			close(tfd);
		}
	}
	free(path_ok);
	free(path_over);
	sec_scene_end(&s);
}

/* A target with thousands of child cgroups. */
static void test_many_children(void)
{
	enum { CHILDREN = 3000, EVERY = 10 };
	struct sec_scene s;
	int tfd = -1;
	unsigned made = 0;
	pid_t *pids = calloc(CHILDREN / EVERY, sizeof(pid_t));

	if (!pids || !sec_scene_start(&s, box, "many"))
		goto out;
	tfd = open(s.target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (unsigned i = 0; tfd >= 0 && i < CHILDREN; i++) {
		char name[16];

		snprintf(name, sizeof(name), "c%u", i);
		made += mkdirat(tfd, name, 0755) == 0;
	}
	if (!is_int(made, CHILDREN, "many: %d child cgroups", CHILDREN))
		goto out;
	for (size_t b = 0; b < N_V2_BACKENDS; b++) {
		const char *bn = cgk_backend_name(v2_backends[b]);
		unsigned np = 0, killed = 0;
		struct cgk_report rep;
		uint64_t t0;
		int r;

		for (unsigned i = 0; i < CHILDREN; i += EVERY) {
			char name[16];
			int cfd;

			snprintf(name, sizeof(name), "c%u", i);
			cfd = openat(tfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			pids[np] = cfd >= 0 ? sec_spawn(NULL, cfd, NULL) : -1;
			np += pids[np] > 0;
			if (cfd >= 0)
				close(cfd);
		}
		if (!is_int(np, CHILDREN / EVERY, "many %s: %d sleepers spread over the children", bn,
			    CHILDREN / EVERY))
			break;
		if (b == 0) {
			r = kill_opts(s.target, CGK_BACKEND_AUTO, SIGKILL, CGK_DRY_RUN, 0, &rep);
			ok(r == 0 && rep.listed.n == np, "many: a dry run lists %u processes (%zu)", np,
			   rep.listed.n);
			cgk_report_free(&rep);
		}
		t0 = sb_now_ms();
		r = kill_opts(s.target, v2_backends[b], SIGKILL, 0, DEADLINE_MS, &rep);
		is_int(r, 0, "many %s: cgk_kill returns 0 (%s)", bn, rep.message);
		is_int(rep.cgroups, CHILDREN + 1, "many %s: the report counts %d cgroups", bn,
		       CHILDREN + 1);
		if (v2_backends[b] != CGK_BACKEND_KERNEL)
			is_int(rep.signalled, np, "many %s: %u signalled", bn, np);
		for (unsigned i = 0; i < np; i++)
			killed += sb_killed_by(pids[i], SIGKILL, 3000);
		is_int(killed, np, "many %s: all %u died", bn, np);
		note("many %s: %d cgroups, %u processes: %llu ms", bn, CHILDREN + 1, np,
		     (unsigned long long)(sb_now_ms() - t0));
		cgk_report_free(&rep);
	}
out:
	if (tfd >= 0)
		close(tfd);
	free(pids);
	sec_scene_end(&s);
}

/* Depth up to 200 levels (or cgroup.max.depth if lower). */
static void test_deep(void)
{
	enum { WANT = 200 };
	struct sec_scene s;
	int *fds = calloc(WANT + 1, sizeof(int));
	unsigned depth = 0;
	char buf[64];

	if (!fds || !sec_scene_start(&s, box, "deep"))
		goto out;
	/* Respect a depth limit set on the way down (none here normally). */
	if (sb_read(s.target, "cgroup.max.depth", buf, sizeof(buf)) > 0 && strncmp(buf, "max", 3))
		note("deep: cgroup.max.depth of the target is %s", buf);
	fds[0] = open(s.target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (unsigned i = 1; fds[0] >= 0 && i <= WANT; i++) {
		if (mkdirat(fds[i - 1], "d", 0755) < 0) {
			note("deep: mkdir at depth %u: %s", i, strerror(errno));
			break;
		}
		fds[i] = openat(fds[i - 1], "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fds[i] < 0)
			break;
		depth = i;
	}
	if (!ok(depth >= 100, "deep: a chain of %u nested cgroups below the target", depth))
		goto out;
	for (size_t b = 0; b < N_V2_BACKENDS; b++) {
		const char *bn = cgk_backend_name(v2_backends[b]);
		unsigned levels[] = { 0, 1, depth / 4, depth / 2, depth - 1, depth };
		pid_t pids[6];
		unsigned killed = 0;
		struct cgk_report rep;
		int r;

		for (int i = 0; i < 6; i++)
			pids[i] = sec_spawn(NULL, fds[levels[i]], NULL);
		if (!ok(pids[0] > 0 && pids[5] > 0, "deep %s: sleepers at 6 levels down to %u", bn, depth))
			break;
		r = kill_opts(s.target, v2_backends[b], SIGKILL, 0, DEADLINE_MS, &rep);
		is_int(r, 0, "deep %s: cgk_kill returns 0 (%s)", bn, rep.message);
		is_int(rep.cgroups, depth + 1, "deep %s: the report counts %u cgroups", bn, depth + 1);
		for (int i = 0; i < 6; i++)
			killed += sb_killed_by(pids[i], SIGKILL, 3000);
		is_int(killed, 6, "deep %s: all 6 died, down to the deepest", bn);
		cgk_report_free(&rep);
	}
out:
	if (fds) {
		for (unsigned i = depth + 1; i-- > 0;)
			if (fds[i] > 0)
				close(fds[i]);
		free(fds);
	}
	if (s.target) {
		int tfd = open(s.target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (tfd >= 0) {
			ok(sec_rmtree_at(tfd, "d", 0) == 0, "deep: the chain is removed");
			close(tfd);
		}
	}
	sec_scene_end(&s);
}

/*
 * Child cgroups removed and recreated by another process while the tree is
 * being killed: the kill ends cleanly, signals only the target.
 */
static void test_removed_halfway(const char *where, const char *sbox,
				 const enum cgk_backend *bs, unsigned nb)
{
	enum { CHILDREN = 300, POPULATED = 60, ROUNDS = 8 };
	struct sec_scene s;
	volatile int *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t racer = -1, rec = -1;
	unsigned failures = 0, survivors = 0, rounds = 0;

	if (shared == MAP_FAILED || !sec_scene_start(&s, sbox, where))
		goto out;
	for (unsigned i = 0; i < CHILDREN; i++) {
		char name[16], *d;

		snprintf(name, sizeof(name), "c%u", i);
		d = sb_mkdir(s.target, name);
		free(d);
	}
	rec = sec_spawn(s.sibling, -1, &hits);
	racer = sb_fork();
	if (racer == 0) {
		/* rmdir and mkdir every child over and over; the populated
		 * ones go as soon as their processes are dead. */
		int tfd = open(s.target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		while (tfd >= 0 && !shared[0]) {
			for (unsigned i = 0; i < CHILDREN && !shared[0]; i++) {
				char name[16];

				if (!shared[1]) {
					usleep(500);
					continue;
				}
				snprintf(name, sizeof(name), "c%u", i);
				if (unlinkat(tfd, name, AT_REMOVEDIR) == 0) {
					shared[2]++;
					mkdirat(tfd, name, 0755);
				}
			}
		}
		_exit(0);
	}
	if (!ok(racer > 0 && rec > 0, "%s: a racer process and a recorder in the sibling", where))
		goto out;
	for (unsigned round = 0; round < ROUNDS * nb; round++) {
		enum cgk_backend b = bs[round % nb];
		/* USR1 (recorded if it strays) and KILL in turn; the kernel
		 * backend sends KILL only. */
		int sig = b == CGK_BACKEND_KERNEL || (round / nb) % 2 ? SIGKILL : SIGUSR1;
		pid_t pids[POPULATED];
		unsigned np = 0;
		struct cgk_report rep;
		int r;

		shared[1] = 0;	/* the racer pauses while the victims move in */
		sb_sleep_ms(2);
		for (unsigned i = 0; i < POPULATED; i++) {
			char name[16], *d;

			snprintf(name, sizeof(name), "c%u", i * (CHILDREN / POPULATED));
			d = sb_path(s.target, name);
			for (int tries = 0; tries < 20; tries++) {
				mkdir(d, 0755);
				pids[np] = sb_sleeper(d);
				if (pids[np] > 0) {
					np++;
					break;
				}
			}
			free(d);
		}
		shared[1] = 1;
		sb_sleep_ms(5);
		r = kill_opts(s.target, b, sig, 0, DEADLINE_MS, &rep);
		rounds++;
		if (r != 0) {
			failures++;
			diag("%s round %u (%s): r=%d: %s", where, round, cgk_backend_name(b), r, rep.message);
		}
		for (unsigned i = 0; i < np; i++)
			if (!sb_killed_by(pids[i], sig, 3000))
				survivors++;
		cgk_report_free(&rep);
	}
	shared[0] = 1;
	note("%s: the racer removed %d child cgroups during the kills", where, shared[2]);
	is_int(failures, 0, "%s: %u kills while children vanish end cleanly", where, rounds);
	is_int(survivors, 0, "%s: every victim died of the signal", where);
	ok(shared[2] > 0, "%s: children did vanish during the kills", where);
	ok(sb_alive(rec), "%s: the recorder in the sibling is alive", where);
	no_hits(where);
out:
	if (racer > 0) {
		kill(racer, SIGKILL);
		sb_wait_reaped(racer, 5000);
	}
	if (shared != MAP_FAILED)
		munmap((void *)shared, 4096);
	sec_scene_end(&s);
}

/*
 * The target is removed and a new cgroup is made under the same name while
 * cgkill waits for it to empty. The new one and what runs there are not the
 * target: nothing may be signalled there, not even by an escalation.
 */
struct recreate {
	const char *target, *sibling;
	pid_t hold, innocents[3];
	bool done;
	int err;
};

static void recreate_progress(const char *path, unsigned left, uint64_t waited, void *data)
{
	struct recreate *c = data;
	char pid[32];
	int r;

	(void)path;
	(void)left;
	(void)waited;
	if (c->done)
		return;
	c->done = true;
	/* The last process leaves (moved by a third party), the cgroup goes,
	 * and a new one takes its name. */
	snprintf(pid, sizeof(pid), "%d", (int)c->hold);
	r = sb_write(c->sibling, "cgroup.procs", pid);
	if (r == 0)
		r = sb_wait_empty(c->target, 5000);
	for (int tries = 0; r == 0 && rmdir(c->target) < 0; tries++) {
		if (errno != EBUSY || tries > 200) {
			r = -errno;
			break;
		}
		sb_reap();
		sb_sleep_ms(5);
	}
	if (r == 0 && mkdir(c->target, 0755) < 0)
		r = -errno;
	for (int i = 0; r == 0 && i < 3; i++) {
		c->innocents[i] = sec_spawn(c->target, -1, &hits);
		if (c->innocents[i] < 0)
			r = c->innocents[i];
	}
	c->err = r;
}

static void test_recreated(void)
{
	static const enum cgk_backend backends[] = { CGK_BACKEND_FREEZE, CGK_BACKEND_LOOP };
	struct sec_scene s;

	if (!sec_scene_start(&s, box, "recreate"))
		goto out;
	for (size_t b = 0; b < 2; b++) {
		const char *bn = cgk_backend_name(backends[b]);
		struct recreate c = { .target = s.target, .sibling = s.sibling };
		struct sb_proc hold = { .what = SB_IGNORE_TERM, .cgroups = { s.target } };
		struct cgk_options o = CGK_OPTIONS_INIT;
		struct cgk_report rep;
		pid_t dying[3];
		unsigned alive = 0;
		int r;

		if (access(s.target, F_OK) < 0)
			mkdir(s.target, 0755);
		c.hold = sb_spawn(&hold);
		r = sb_spawn_n(3, SB_SLEEP, NULL, s.target, dying);
		if (!ok(c.hold > 0 && r == 0, "recreate %s: a TERM-ignoring holder and 3 sleepers", bn))
			break;
		o.backend = backends[b];
		o.signal = SIGTERM;
		o.n_escalations = 1;
		o.escalations[0] = (struct cgk_escalation){ .after_ms = 1500, .signal = SIGKILL };
		o.wait_ms = 3000;
		o.progress = recreate_progress;
		o.userdata = &c;
		r = cgk_kill(s.target, &o, &rep);
		if (!ok(c.done && c.err == 0, "recreate %s: target removed and made again during the wait (%s)",
			bn, c.err ? strerror(-c.err) : "ok")) {
			cgk_report_free(&rep);
			break;
		}
		is_int(r, 0, "recreate %s: cgk_kill ends cleanly (%s)", bn, rep.message);
		ok(rep.emptied, "recreate %s: the report says the (old) target emptied", bn);
		is_int(rep.n_signals, 1, "recreate %s: no escalation was sent", bn);
		for (int i = 0; i < 3; i++)
			alive += sb_alive(c.innocents[i]);
		is_int(alive, 3, "recreate %s: the processes in the new cgroup of that name are alive", bn);
		ok(sb_alive(c.hold), "recreate %s: the holder moved out is alive (TERM ignored)", bn);
		ok(sb_killed_by(dying[0], SIGTERM, 3000), "recreate %s: the old target's sleepers died of TERM",
		   bn);
		no_hits(bn);
		cgk_report_free(&rep);
		/* Clear the new target and the moved holder for the next round. */
		sb_destroy(s.target);
		kill(c.hold, SIGKILL);
		sb_wait_reaped(c.hold, 3000);
		sb_reap();
	}
out:
	sec_scene_end(&s);
}

/* A process whose threads, the leader included, sit in a threaded child of
 * the target, where cgroup.procs cannot be read: the domain lists it. */
static void test_threaded(void)
{
	struct sec_scene s;
	char *th = NULL;

	if (!sec_scene_start(&s, box, "threaded"))
		goto out;
	for (size_t b = 0; b < N_V2_BACKENDS; b++) {
		const char *bn = cgk_backend_name(v2_backends[b]);
		struct sb_proc p = { .what = SB_THREADS, .threads = 4, .cgroups = { s.target } };
		struct cgk_report rep;
		char task[64], tids[64];
		unsigned moved = 0;
		pid_t pid;
		DIR *d;
		int r;

		if (!th) {
			th = sb_mkdir(s.target, "th");
			if (!ok(th && sb_write(th, "cgroup.type", "threaded") == 0,
				"threaded: a threaded child cgroup"))
				break;
		}
		pid = sb_spawn(&p);
		if (!ok(pid > 0, "threaded %s: a process with 4 more threads in the target", bn))
			break;
		snprintf(task, sizeof(task), "/proc/%d/task", (int)pid);
		d = opendir(task);
		for (struct dirent *e; d && (e = readdir(d));) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(tids, sizeof(tids), "%.20s", e->d_name);
			moved += sb_write(th, "cgroup.threads", tids) == 0;
		}
		if (d)
			closedir(d);
		is_int(moved, 5, "threaded %s: all 5 threads moved into the threaded child", bn);
		r = kill_opts(s.target, v2_backends[b], SIGKILL, 0, DEADLINE_MS, &rep);
		is_int(r, 0, "threaded %s: cgk_kill returns 0 (%s)", bn, rep.message);
		ok(sb_killed_by(pid, SIGKILL, 3000), "threaded %s: the process died", bn);
		cgk_report_free(&rep);
	}
	{
		struct cgk_report rep;
		int r = th ? kill_opts(th, CGK_BACKEND_AUTO, SIGKILL, 0, 1000, &rep) : 0;

		if (th) {
			is_int(r, -EOPNOTSUPP, "threaded: the threaded child itself is refused: %s",
			       rep.message);
			cgk_report_free(&rep);
		}
	}
out:
	free(th);
	sec_scene_end(&s);
}

int main(void)
{
	sb_init(900);
	sb_require_root();
	no_plan();
	if (!sb_mount(SB_V2))
		skip_all("no cgroup v2 mount");
	box = sb_create(SB_V2);
	if (!box || sec_hits_open(&hits) < 0)
		bail_out("cannot create a sandbox: %s", strerror(errno));
	note("sandbox %s", box);

	test_fake_tmpfs();
	test_fake_overmount();
	test_bind_inside();
	test_symlinks();
	test_spellings();
	test_odd_names();
	test_odd_names_v1();
	test_long_paths();
	test_many_children();
	test_deep();
	test_removed_halfway("vanish v2", box, v2_backends, N_V2_BACKENDS);
	{
		static const enum cgk_backend v1f[] = { CGK_BACKEND_V1_FREEZE, CGK_BACKEND_LOOP };
		static const enum cgk_backend v1p[] = { CGK_BACKEND_LOOP };
		char *v1box;

		if (sb_mount(SB_V1_FREEZER) && (v1box = sb_create(SB_V1_FREEZER))) {
			test_removed_halfway("vanish v1-freezer", v1box, v1f, 2);
			ok(sb_destroy(v1box) == 0, "v1 freezer sandbox removed");
			free(v1box);
		}
		if (sb_mount(SB_V1_PIDS) && (v1box = sb_create(SB_V1_PIDS))) {
			test_removed_halfway("vanish v1-pids", v1box, v1p, 1);
			ok(sb_destroy(v1box) == 0, "v1 pids sandbox removed");
			free(v1box);
		}
	}
	test_recreated();
	test_threaded();

	ok(sb_destroy(box) == 0, "sandbox removed");
	free(box);
	return done_testing();
}
