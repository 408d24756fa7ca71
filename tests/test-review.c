// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Regression tests for the fixes from the code review ("Safety fixes from
 * review" and the guard follow-up). Each test would fail on the code before
 * the fix; each runs against the real kernel in sandbox cgroups, with
 * sentinels in the parent and a sibling of the target that must survive.
 *
 *  mount    the walk never crosses a mount point (a bind mount of another
 *           sandbox cgroup onto a child of the target)
 *  tasks    v1: a process is signalled only when its leader is in the
 *           target, not when one of its other threads is
 *  protect  a protected cgroup also protects its ancestors
 *  cgns     the self guard works inside a cgroup namespace ("/.." roots)
 *  dotdot   no ".." in paths relative to the v2 mount; cgk_cgroup_of_pid
 *           of a cgroup outside our cgroup namespace
 *  forever  wait_ms = UINT64_MAX means no deadline, not an overflow
 *  cli      "-w 5s" is a usage error; SIGINT ends a wait cleanly
 *  clamp    the loop backend clamps pids.max for SIGKILL only
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgkill.h"
#include "cmd.h"
#include "internal.h"
#include "sandbox.h"
#include "secutil.h"
#include "tap.h"

static char *box;		/* v2 sandbox */

static int kill_opts(const char *path, enum cgk_backend b, int sig, unsigned flags,
		     uint64_t wait_ms, const char *protected_file, struct cgk_report *rep)
{
	struct cgk_options o = CGK_OPTIONS_INIT;

	o.backend = b;
	o.signal = sig;
	o.flags = flags;
	o.wait_ms = wait_ms;
	o.protected_file = protected_file;
	return cgk_kill(path, &o, rep);
}

static const char *first_line(const char *s, char *buf, size_t size)
{
	snprintf(buf, size, "%.*s", (int)strcspn(s, "\n"), s);
	return buf;
}

/*
 * Run the command from inside a forked child (which may sit in namespaces
 * of its own, where the sandbox's tracked children do not reach): plain
 * fork, exec, waitpid with a deadline. Exit status or 128+signal, -1 on
 * timeout; stderr (truncated) into err.
 */
static int child_cli(const char *const *args, char *err, size_t size)
{
	const char *argv[16];
	int p[2], st = 0;
	size_t n = 0, len = 0;
	uint64_t deadline = sb_now_ms() + 30000;
	pid_t pid;

	argv[n++] = sec_cgkill();
	for (; args[n - 1] && n < 15; n++)
		argv[n] = args[n - 1];
	argv[n] = NULL;
	err[0] = '\0';
	if (pipe2(p, O_CLOEXEC) < 0)
		return -2;
	pid = fork();
	if (pid < 0)
		return -2;
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		dup2(null, 0);
		dup2(null, 1);
		dup2(p[1], 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	for (;;) {
		struct pollfd pfd = { .fd = p[0], .events = POLLIN };
		uint64_t now = sb_now_ms();
		ssize_t r;

		if (now >= deadline || poll(&pfd, 1, (int)(deadline - now)) <= 0)
			break;
		r = read(p[0], err + len, size - 1 - len);
		if (r <= 0)
			break;
		len += (size_t)r;
		err[len] = '\0';
		if (len + 1 >= size)
			break;
	}
	close(p[0]);
	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (sb_now_ms() >= deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		sb_sleep_ms(5);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* ---- 1. the walk never crosses a mount point ---- */

struct mount_arg {
	const char *target, *child, *other;
};

struct mount_out {
	int setup;
	int r_dry, r_freeze, r_loop, r_kernel;
	int dry_listed;
	int cli_loop, cli_dry;
	char msg_dry[512], msg_freeze[512], msg_loop[512], err_loop[512], err_dry[512];
};

static void mount_child(void *argp, void *outp)
{
	struct mount_arg *a = argp;
	struct mount_out *o = outp;
	struct cgk_report rep;

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount(a->other, a->child, NULL, MS_BIND, NULL) < 0) {
		o->setup = -errno;
		return;
	}
	o->r_dry = kill_opts(a->target, CGK_BACKEND_AUTO, SIGKILL, CGK_DRY_RUN, 0, NULL, &rep);
	o->dry_listed = (int)rep.listed.n;
	snprintf(o->msg_dry, sizeof(o->msg_dry), "%.500s", rep.message);
	cgk_report_free(&rep);
	o->r_freeze = kill_opts(a->target, CGK_BACKEND_FREEZE, SIGTERM, 0, 1000, NULL, &rep);
	snprintf(o->msg_freeze, sizeof(o->msg_freeze), "%.500s", rep.message);
	cgk_report_free(&rep);
	o->r_loop = kill_opts(a->target, CGK_BACKEND_LOOP, SIGKILL, 0, 1000, NULL, &rep);
	snprintf(o->msg_loop, sizeof(o->msg_loop), "%.500s", rep.message);
	cgk_report_free(&rep);
	{
		const char *args[] = { "-b", "loop", a->target, NULL };

		o->cli_loop = child_cli(args, o->err_loop, sizeof(o->err_loop));
	}
	{
		const char *args[] = { "-n", a->target, NULL };

		o->cli_dry = child_cli(args, o->err_dry, sizeof(o->err_dry));
	}
	/* cgroup.kill acts on the kernel's tree, which the bind mount does not
	 * change: it must not fail, and cannot reach the other cgroup. */
	o->r_kernel = kill_opts(a->target, CGK_BACKEND_KERNEL, SIGKILL, 0, 1000, NULL, &rep);
	cgk_report_free(&rep);
	umount2(a->child, MNT_DETACH);
}

static bool crossing_refused(const char *msg)
{
	return strstr(msg, "child cgroup c (a mount point") != NULL;
}

static void test_mount(void)
{
	struct sec_scene s;
	struct mount_out o;
	struct mount_arg a;
	char *other = NULL, *c = NULL, buf[16] = "", line[256];
	pid_t pb = -1, ps = -1;
	int r;

	if (!sec_scene_start(&s, box, "mount"))
		goto out;
	other = sb_mkdir(s.parent, "B");
	c = sb_mkdir(s.target, "c");
	pb = other ? sb_sleeper(other) : -1;
	ps = sb_sleeper(s.target);
	if (!ok(c && pb > 0 && ps > 0, "mount: target S with a sleeper and an empty child c; B with a sleeper"))
		goto out;
	a = (struct mount_arg){ .target = s.target, .child = c, .other = other };
	r = sec_child(mount_child, &a, &o, sizeof(o), 120000, NULL);
	if (!is_int(r, 0, "mount: the child in its own mount namespace reports"))
		goto out;
	if (o.setup < 0) {
		skip("mount: cannot bind-mount in a private mount namespace: %s", strerror(-o.setup));
		goto out;
	}
	ok(o.r_dry == -EXDEV && crossing_refused(o.msg_dry),
	   "mount: a dry run fails with EXDEV naming the mount point (r=%d, %d listed: %s)", o.r_dry,
	   o.dry_listed, o.msg_dry);
	ok(o.r_freeze == -EXDEV && crossing_refused(o.msg_freeze),
	   "mount: -b freeze -s TERM fails with EXDEV naming the mount point (r=%d: %s)", o.r_freeze,
	   o.msg_freeze);
	ok(o.r_loop == -EXDEV && crossing_refused(o.msg_loop),
	   "mount: -b loop fails with EXDEV naming the mount point (r=%d: %s)", o.r_loop, o.msg_loop);
	ok(o.cli_loop == 1 && strstr(o.err_loop, "mount point"),
	   "mount: cgkill -b loop in the namespace exits 1 and names the mount point (%d: %s)",
	   o.cli_loop, first_line(o.err_loop, line, sizeof(line)));
	ok(o.cli_dry == 1 && strstr(o.err_dry, "mount point"),
	   "mount: cgkill -n in the namespace exits 1 and names the mount point (%d)", o.cli_dry);
	is_int(o.r_kernel, 0, "mount: -b kernel (cgroup.kill, the kernel's tree) works");
	ok(sb_alive(pb), "mount: the sleeper in B (mounted on S/c) is alive");
	/* S's own sleeper: the target is visited before its children, so the
	 * freeze and loop runs signal it before they meet the mount, and the
	 * kernel run kills it anyway. Only that it is gone in the end is
	 * asserted. */
	ok(sb_killed_by(ps, SIGTERM, 3000) || sb_killed_by(ps, SIGKILL, 3000) || !sb_alive(ps),
	   "mount: S's own sleeper is gone (signalled before the walk met the mount)");
	sb_read(s.target, "cgroup.freeze", buf, sizeof(buf));
	ok(buf[0] == '0', "mount: S is not left frozen");
out:
	if (pb > 0)
		kill(pb, SIGKILL);
	free(other);
	free(c);
	sec_scene_end(&s);
}

/* ---- 2. v1: membership by the leader's tid ---- */

static void test_tasks_on(enum sb_hier h, const enum cgk_backend *bs, unsigned nb)
{
	char *v1box = sb_create(h), name[64], buf[16];
	struct sec_scene s;

	snprintf(name, sizeof(name), "tasks %s", sb_hier_name(h));
	if (!v1box) {
		ok(false, "%s: create a sandbox: %s", name, strerror(errno));
		return;
	}
	if (!sec_scene_start(&s, v1box, "thr"))
		goto out;
	for (unsigned b = 0; b < nb; b++) {
		const char *bn = cgk_backend_name(bs[b]);
		struct sb_proc p = { .what = SB_THREADS, .threads = 3, .cgroups = { s.sibling } };
		struct cgk_report rep;
		char task[64], tid[32] = "";
		pid_t pid = sb_spawn(&p);
		DIR *d;
		int r;

		if (!ok(pid > 0, "%s %s: a process with 3 more threads in the sibling A", name, bn))
			break;
		snprintf(task, sizeof(task), "/proc/%d/task", (int)pid);
		d = opendir(task);
		for (struct dirent *e; d && (e = readdir(d));)
			if (e->d_name[0] != '.' && atoi(e->d_name) != pid)
				snprintf(tid, sizeof(tid), "%.20s", e->d_name);
		if (d)
			closedir(d);
		if (!ok(tid[0] && sb_write(s.target, "tasks", tid) == 0,
			"%s %s: one non-leader thread (%s) moved into the target B", name, bn, tid))
			break;
		ok(sb_member(s.target, pid) && sb_member(s.sibling, pid),
		   "%s %s: v1 cgroup.procs of both A and B list the process", name, bn);

		r = kill_opts(s.target, bs[b], SIGKILL, CGK_DRY_RUN, 0, NULL, &rep);
		note("%s %s: a dry run returns %d and lists %zu process(es) (it goes by cgroup.procs)",
		     name, bn, r, rep.listed.n);
		cgk_report_free(&rep);

		r = kill_opts(s.target, bs[b], SIGKILL, 0, 300, NULL, &rep);
		note("%s %s: cgk_kill returns %d, %u signalled: %s", name, bn, r, rep.signalled,
		     rep.message);
		ok(r == 0 || r == -ETIMEDOUT, "%s %s: cgk_kill returns 0 or ETIMEDOUT (%d)", name, bn, r);
		is_int(rep.signalled, 0, "%s %s: nothing signalled", name, bn);
		cgk_report_free(&rep);
		sb_sleep_ms(100);
		sb_reap();
		ok(sb_alive(pid), "%s %s: the process whose leader is in A is alive", name, bn);
		{
			struct sec_cli *cli = sec_cli_run(NULL, "-b", bn, "--wait=300ms", s.target, NULL);

			if (cli) {
				ok(cli->status == 0 || cli->status == 3,
				   "%s %s: cgkill -b %s exits 0 or 3 (%d)", name, bn, bn, cli->status);
				free(cli);
			}
		}
		sb_sleep_ms(100);
		sb_reap();
		ok(sb_alive(pid), "%s %s: ... and the command left it alive too", name, bn);
		if (h == SB_V1_FREEZER) {
			sb_read(s.target, "freezer.state", buf, sizeof(buf));
			ok(strncmp(buf, "THAWED", 6) == 0, "%s %s: B is thawed (%.*s)", name, bn,
			   (int)strcspn(buf, "\n"), buf);
		}
		kill(pid, SIGKILL);
		sb_killed_by(pid, SIGKILL, 3000);
	}
out:
	sec_scene_end(&s);
	ok(sb_destroy(v1box) == 0, "%s: sandbox removed", name);
	free(v1box);
}

static void test_tasks(void)
{
	static const enum cgk_backend pids_bs[] = { CGK_BACKEND_LOOP };
	static const enum cgk_backend frz_bs[] = { CGK_BACKEND_V1_FREEZE, CGK_BACKEND_LOOP };

	if (sb_mount(SB_V1_PIDS))
		test_tasks_on(SB_V1_PIDS, pids_bs, 1);
	else
		skip("tasks: no v1 pids hierarchy");
	if (sb_mount(SB_V1_FREEZER))
		test_tasks_on(SB_V1_FREEZER, frz_bs, 2);
	else
		skip("tasks: no v1 freezer hierarchy");
}

/* ---- 3a. the protected list protects ancestors ---- */

static void test_protect(void)
{
	struct sec_scene s;
	char file[] = "/tmp/cgkill-review-prot.XXXXXX", glob[4400], text[4500];
	char *keep = NULL;
	pid_t pk = -1, pt = -1;
	int fd = -1;

	if (!sec_scene_start(&s, box, "protect"))
		goto out;
	keep = sb_mkdir(s.target, "a/keep");
	pk = keep ? sb_sleeper(keep) : -1;
	pt = sb_sleeper(s.target);
	fd = mkstemp(file);
	if (!ok(pk > 0 && pt > 0 && fd >= 0, "protect: T/a/keep and T with a sleeper each, a list file"))
		goto out;
	snprintf(glob, sizeof(glob), "%s/a/keep", s.target + strlen(sb_mount(SB_V2)));
	snprintf(text, sizeof(text), "# review\n%s\n", glob);
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		diag("protect: short write");
	close(fd);

	{
		struct cgk_report rep;
		int r = kill_opts(s.target, CGK_BACKEND_AUTO, SIGKILL, 0, 3000, file, &rep);

		ok(r == -EPERM && rep.refused == CGK_GUARD_PROTECTED && strstr(rep.message, glob),
		   "protect: cgk_kill of the parent of a protected cgroup is refused, naming the glob (%s)",
		   rep.message);
		cgk_report_free(&rep);
		r = kill_opts(s.parent, CGK_BACKEND_AUTO, SIGKILL, CGK_DRY_RUN, 0, file, &rep);
		ok(r == -EPERM && rep.refused == CGK_GUARD_PROTECTED,
		   "protect: a dry run two levels up is refused too");
		cgk_report_free(&rep);
	}
	{
		struct sec_cli *cli = sec_cli_run(NULL, "--protected", file, s.target, NULL);

		if (cli) {
			is_int(cli->status, 4, "protect: cgkill --protected FILE on the parent exits 4");
			ok(strstr(cli->err, glob) != NULL, "protect: the message names the glob: %.*s",
			   (int)strcspn(cli->err, "\n"), cli->err);
			free(cli);
		}
		ok(sb_alive(pk) && sb_alive(pt), "protect: both sleepers are alive");
		cli = sec_cli_run(NULL, "-f", "--protected", file, s.target, NULL);
		if (cli) {
			is_int(cli->status, 0, "protect: with -f it proceeds (exit 0)");
			free(cli);
		}
		ok(sb_killed_by(pk, SIGKILL, 3000) && sb_killed_by(pt, SIGKILL, 3000),
		   "protect: ... and both sleepers died of KILL");
	}
out:
	if (fd >= 0)
		unlink(file);
	free(keep);
	sec_scene_end(&s);
}

/* ---- 3b. the self guard inside a cgroup namespace ---- */

struct cgns_arg {
	const char *target;
};

struct cgns_out {
	int setup;
	bool dotdot_root;
	int r, refused, r_dry, refused_dry, cli;
	char msg[512], err[512];
};

static void cgns_child(void *argp, void *outp)
{
	struct cgns_arg *a = argp;
	struct cgns_out *o = outp;
	struct cgk_mount *mounts = NULL;
	struct cgk_report rep;
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
	o->refused_dry = rep.refused;
	cgk_report_free(&rep);
	o->r = kill_opts(a->target, CGK_BACKEND_AUTO, SIGKILL, 0, 3000, NULL, &rep);
	o->refused = rep.refused;
	snprintf(o->msg, sizeof(o->msg), "%.500s", rep.message);
	cgk_report_free(&rep);
	{
		const char *args[] = { a->target, NULL };

		o->cli = child_cli(args, o->err, sizeof(o->err));
	}
}

static void test_cgns(void)
{
	struct sec_scene s;
	struct cgns_out o;
	struct cgns_arg a;
	pid_t p[2] = { -1, -1 };
	char buf[256];
	int r;

	if (!sec_scene_start(&s, box, "cgns"))
		goto out;
	p[0] = sb_sleeper(s.target);
	p[1] = sb_sleeper(s.target);
	if (!ok(p[0] > 0 && p[1] > 0, "cgns: two sleepers in the target S"))
		goto out;
	a.target = s.target;
	r = sec_child(cgns_child, &a, &o, sizeof(o), 60000, NULL);
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
	sec_scene_end(&s);
}

/* ---- 4. ".." in v2-relative paths; cgroups outside our namespace ---- */

static void refuse_dotdot(const char *path, bool dry, enum cgk_backend b)
{
	struct cgk_report rep;
	int r = kill_opts(path, b, SIGKILL, dry ? CGK_DRY_RUN : 0, 1000, NULL, &rep);

	ok(r == -EINVAL && strstr(rep.message, "may not contain \"..\"") && rep.n_signals == 0,
	   "dotdot: '%s'%s is refused with EINVAL (r=%d: %s)", path, dry ? " (dry run)" : "", r,
	   rep.message);
	cgk_report_free(&rep);
}

struct of_pid_arg {
	const char *nsroot;
	pid_t pid;
};

struct of_pid_out {
	int setup, r, cli;
	char buf[4096], err[512];
};

static void of_pid_child(void *argp, void *outp)
{
	struct of_pid_arg *a = argp;
	struct of_pid_out *o = outp;
	char pid[32];

	if (sb_join(a->nsroot) < 0 || unshare(CLONE_NEWCGROUP) < 0) {
		o->setup = -errno;
		return;
	}
	o->r = cgk_cgroup_of_pid(a->pid, o->buf, sizeof(o->buf));
	snprintf(pid, sizeof(pid), "%d", (int)a->pid);
	{
		const char *args[] = { "--pid", pid, NULL };

		o->cli = child_cli(args, o->err, sizeof(o->err));
	}
}

static void test_dotdot(void)
{
	const char *v2 = sb_mount(SB_V2), *v1 = sb_mount(SB_V1_FREEZER);
	const char *base = strrchr(box, '/') + 1;
	char *v1box = NULL, *v1t = NULL, *y = NULL, path[4400], buf[256];
	struct sec_scene s;
	pid_t pt = -1, pv1 = -1;

	if (!sec_scene_start(&s, box, "dotdot"))
		goto out;
	pt = sb_sleeper(s.target);
	if (!ok(pt > 0, "dotdot: a sleeper in the target"))
		goto out;

	/* Paths that lead into the sandbox: real kills, nothing may die. */
	snprintf(path, sizeof(path), "%s/dotdot/T/../S", base);
	refuse_dotdot(path, false, CGK_BACKEND_AUTO);
	snprintf(path, sizeof(path), "/%s/dotdot/T/..", base);
	refuse_dotdot(path, false, CGK_BACKEND_LOOP);
	/* Out of the v2 mount into the v1 freezer hierarchy, if they are
	 * mounted side by side (/sys/fs/cgroup/unified and .../freezer). */
	if (v1 && (v1box = sb_create(SB_V1_FREEZER))) {
		const char *v2s = strrchr(v2, '/'), *v1s = strrchr(v1, '/');

		v1t = sb_mkdir(v1box, "T");
		pv1 = v1t ? sb_sleeper(v1t) : -1;
		if (pv1 > 0 && v2s && v1s && v2s - v2 == v1s - v1 && !strncmp(v2, v1, (size_t)(v2s - v2))) {
			snprintf(path, sizeof(path), "..%s%s/T", v1s, v1box + strlen(v1));
			refuse_dotdot(path, false, CGK_BACKEND_AUTO);
			snprintf(path, sizeof(path), "..%s", v1s);
			refuse_dotdot(path, true, CGK_BACKEND_KERNEL);
		} else {
			skip("dotdot: the v1 freezer is not mounted next to the v2 mount");
		}
	}
	/* Paths that lead out of the cgroup mounts: dry runs. */
	refuse_dotdot("x/../..", true, CGK_BACKEND_AUTO);
	snprintf(path, sizeof(path), "%s/../..", base);
	refuse_dotdot(path, true, CGK_BACKEND_AUTO);
	refuse_dotdot("..", true, CGK_BACKEND_KERNEL);
	{
		struct sec_cli *cli;

		snprintf(path, sizeof(path), "%s/dotdot/T/../S", base);
		cli = sec_cli_run(NULL, path, NULL);
		if (cli) {
			ok(cli->status == 1 && strstr(cli->err, "may not contain"),
			   "dotdot: cgkill '%s' exits 1 and says why (%d: %s)", path, cli->status,
			   first_line(cli->err, buf, sizeof(buf)));
			free(cli);
		}
	}
	ok(sb_alive(pt), "dotdot: the sleeper in the target is alive");
	if (pv1 > 0)
		ok(sb_alive(pv1), "dotdot: the sleeper in the v1 freezer sandbox is alive");

	/* A process in T seen from a cgroup namespace rooted at the sibling
	 * cgroup Y: its /proc/PID/cgroup line is "0::/../T". */
	y = sb_mkdir(s.parent, "Y");
	if (y) {
		struct of_pid_arg a = { .nsroot = y, .pid = pt };
		struct of_pid_out o;
		int r = sec_child(of_pid_child, &a, &o, sizeof(o), 60000, NULL);

		if (is_int(r, 0, "dotdot: a child in a cgroup namespace rooted at Y reports")) {
			if (o.setup < 0) {
				skip("dotdot: no cgroup namespace: %s", strerror(-o.setup));
			} else {
				is_int(o.r, -EXDEV, "dotdot: cgk_cgroup_of_pid of a process outside the "
				       "namespace (\"/..\" path) is EXDEV (%s)", o.r == 0 ? o.buf : "-");
				is_int(o.cli, 1, "dotdot: cgkill --pid of it in the namespace exits 1 (%s)",
				       first_line(o.err, buf, sizeof(buf)));
			}
		}
		ok(sb_alive(pt), "dotdot: ... and the process is alive");
	}
out:
	free(y);
	free(v1t);
	if (v1box) {
		ok(sb_destroy(v1box) == 0, "dotdot: v1 sandbox removed");
		free(v1box);
	}
	sec_scene_end(&s);
}

/* ---- 5. wait_ms = UINT64_MAX ---- */

static void slow_exit(int sig)
{
	struct timespec ts = { 0, 300 * 1000000L };

	(void)sig;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	_exit(0);
}

/* A process in cg with handler installed for sig before this returns. */
static pid_t handler_process(const char *cg, int sig, void (*handler)(int), int flags)
{
	int p[2], err = 0;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = sb_fork();
	if (pid == 0) {
		struct sigaction sa = { .sa_handler = handler, .sa_flags = flags };

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		sigemptyset(&sa.sa_mask);
		err = sb_join(cg);
		if (!err && sigaction(sig, &sa, NULL) < 0)
			err = -errno;
		if (write(p[1], &err, sizeof(err)) < 0 || err)
			_exit(2);
		for (;;)
			pause();
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &err, sizeof(err)) != sizeof(err) || err) {
		close(p[0]);
		if (pid > 0)
			kill(pid, SIGKILL);
		return -EIO;
	}
	close(p[0]);
	return pid;
}

/* A process in cg that exits 0 300 ms after a TERM. */
static pid_t slow_dier(const char *cg)
{
	return handler_process(cg, SIGTERM, slow_exit, 0);
}

static bool exited_zero(pid_t pid)
{
	int st = sb_wait_reaped(pid, 5000);

	return st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static void test_forever(void)
{
	struct sec_scene s;
	pid_t p;

	if (!sec_scene_start(&s, box, "forever"))
		goto out;
	p = slow_dier(s.target);
	if (ok(p > 0, "forever: a process that exits 300 ms after TERM")) {
		struct cgk_options o = CGK_OPTIONS_INIT;
		struct cgk_report rep;
		int r;

		o.signal = SIGTERM;
		o.wait_ms = UINT64_MAX;
		r = cgk_kill(s.target, &o, &rep);
		ok(r == 0 && rep.emptied, "forever: wait_ms = UINT64_MAX returns 0, emptied (r=%d: %s)", r,
		   rep.message);
		ok(exited_zero(p), "forever: the process exited by itself");
		cgk_report_free(&rep);
	}
	p = slow_dier(s.target);
	if (ok(p > 0, "forever: another one")) {
		struct cgk_options o = CGK_OPTIONS_INIT;
		struct cgk_report rep;
		int r;

		o.signal = SIGTERM;
		o.wait_ms = UINT64_MAX;
		o.n_escalations = 1;
		o.escalations[0] = (struct cgk_escalation){ .after_ms = UINT64_MAX, .signal = SIGKILL };
		r = cgk_kill(s.target, &o, &rep);
		ok(r == 0 && rep.emptied && rep.n_signals == 1,
		   "forever: an escalation after UINT64_MAX ms is never due (r=%d, %u signals)", r,
		   rep.n_signals);
		ok(exited_zero(p), "forever: ... the process exited by itself, no KILL");
		cgk_report_free(&rep);
	}
	p = slow_dier(s.target);
	if (ok(p > 0, "forever: a third one")) {
		struct sec_cli *cli = sec_cli_run(NULL, "-s", "TERM", "--wait=18446744073709551615ms",
						  s.target, NULL);

		if (cli) {
			is_int(cli->status, 0, "forever: cgkill --wait=18446744073709551615ms exits 0");
			free(cli);
		}
		ok(exited_zero(p), "forever: ... the process exited by itself");
	}
	p = slow_dier(s.target);
	if (ok(p > 0, "forever: a fourth one")) {
		struct sec_cli *cli = sec_cli_run(NULL, "-s", "TERM", "--wait=infinity", s.target, NULL);

		if (cli) {
			is_int(cli->status, 0, "forever: cgkill --wait=infinity exits 0");
			free(cli);
		}
		ok(exited_zero(p), "forever: ... the process exited by itself");
	}
out:
	sec_scene_end(&s);
}

/* ---- 6. the command: "-w 5s", and SIGINT during the wait ---- */

static void test_cli(void)
{
	struct sec_scene s;
	char buf[16] = "";
	pid_t p, rec;

	if (!sec_scene_start(&s, box, "cli"))
		goto out;
	p = sb_sleeper(s.target);
	if (ok(p > 0, "cli: a sleeper in the target")) {
		struct sec_cli *cli = sec_cli_run(NULL, "-w", "5s", s.target, NULL);

		if (cli) {
			is_int(cli->status, 2, "cli: 'cgkill -w 5s CG' is a usage error (exit 2)");
			ok(strstr(cli->err, "-w5s") && strstr(cli->err, "--wait=5s"),
			   "cli: it says how to write it: %.*s", (int)strcspn(cli->err, "\n"), cli->err);
			free(cli);
		}
		ok(sb_alive(p), "cli: ... and nothing was signalled");
		kill(p, SIGKILL);
		sb_killed_by(p, SIGKILL, 3000);
	}

	rec_drain();
	rec = recorder(s.target, SIGTERM);	/* records TERM, lives on */
	if (ok(rec > 0, "cli: a process in the target that survives TERM")) {
		struct rec v[4];
		struct cmd c;
		uint64_t t0;

		if (cmd_start(&c, NULL, "-s", "TERM", "--wait=30s", s.target, NULL) < 0) {
			ok(false, "cli: start cgkill");
			goto out;
		}
		ok(rec_collect(v, 4, 1, 10000, 10) >= 1, "cli: the TERM arrived");
		sb_sleep_ms(300);	/* now it waits */
		t0 = sb_now_ms();
		kill(c.pid, SIGINT);
		cmd_finish(&c, 10000);
		ok(sb_now_ms() - t0 < 1500, "cli: SIGINT ends the wait within ~1 s (%llu ms)",
		   (unsigned long long)(sb_now_ms() - t0));
		is_int(c.status, 130, "cli: exit status 130");
		ok(c.err && strstr(c.err, "interrupted"), "cli: it says 'interrupted': %.*s",
		   c.err ? (int)strcspn(c.err, "\n") : 0, c.err ? c.err : "");
		sb_read(s.target, "cgroup.freeze", buf, sizeof(buf));
		ok(buf[0] == '0', "cli: the target is not left frozen");
		ok(sb_alive(rec), "cli: the TERM survivor is alive");
		cmd_free(&c);
	}
out:
	sec_scene_end(&s);
}

/* ---- 7. the pids clamp is for SIGKILL only ---- */

struct fork_result {
	pid_t pid;
	int err;
};

static int fork_res_fd = -1;

static void fork_on_hup(int sig)
{
	struct fork_result res = { .pid = getpid() };
	pid_t c;

	(void)sig;
	c = fork();
	if (c == 0) {
		/* HUP is blocked here (we are in its handler): ignore it for good. */
		signal(SIGHUP, SIG_IGN);
		for (;;)
			pause();
	}
	res.err = c < 0 ? errno : 0;
	if (write(fork_res_fd, &res, sizeof(res)) < 0)
		_exit(5);
}

static pid_t hup_forker(const char *cg)
{
	return handler_process(cg, SIGHUP, fork_on_hup, SA_RESTART);
}

/* Polls pids.max of the target while cgkill runs: a clamp shows as "0". */
struct watch {
	int fd;
	volatile int stop;
	unsigned reads, zeros;
};

static void *watch_pids_max(void *arg)
{
	struct watch *w = arg;
	char b[32];

	while (!w->stop) {
		ssize_t n = pread(w->fd, b, sizeof(b) - 1, 0);

		w->reads++;
		if (n > 0 && b[0] == '0')
			w->zeros++;
	}
	return NULL;
}

static void test_clamp(void)
{
	enum { FORKERS = 6, IGNORERS = 200 };
	char *v1box = sb_mount(SB_V1_PIDS) ? sb_create(SB_V1_PIDS) : NULL;
	struct sec_scene s;
	int fds[2] = { -1, -1 };
	char buf[32];

	if (!v1box) {
		skip("clamp: no v1 pids hierarchy");
		return;
	}
	if (!sec_scene_start(&s, v1box, "clamp") || pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0)
		goto out;
	fork_res_fd = fds[1];
	{
		pid_t f[FORKERS];
		unsigned started = 0, forked = 0, failed = 0, got = 0;
		uint64_t deadline;
		struct sec_cli *cli;

		struct watch w = { .fd = -1 };
		pthread_t th;
		bool watching;

		for (int i = 0; i < FORKERS; i++)
			started += (f[i] = hup_forker(s.target)) > 0;
		if (!is_int(started, FORKERS, "clamp: %d processes that fork on HUP in a v1 pids cgroup",
			    FORKERS))
			goto out;
		/* Listed after the forkers: the pass that signalled the forkers
		 * is still busy while they fork. */
		for (int i = 0; i < IGNORERS; i++)
			if (rec_spawn(&(struct rec_spec){ .cgroup = s.target, .ignore = { SIGHUP } }) < 0) {
				ok(false, "clamp: start %d processes that ignore HUP", IGNORERS);
				goto out;
			}
		{
			char *pm = sb_path(s.target, "pids.max");

			w.fd = pm ? open(pm, O_RDONLY | O_CLOEXEC) : -1;
			free(pm);
		}
		watching = w.fd >= 0 && pthread_create(&th, NULL, watch_pids_max, &w) == 0;
		cli = sec_cli_run(NULL, "-b", "loop", "-s", "HUP", s.target, NULL);
		if (cli) {
			is_int(cli->status, 0, "clamp: cgkill -b loop -s HUP exits 0");
			free(cli);
		}
		if (watching) {
			w.stop = 1;
			pthread_join(th, NULL);
			is_int(w.zeros, 0, "clamp: pids.max never read 0 during the HUP run (%u reads)",
			       w.reads);
		}
		if (w.fd >= 0)
			close(w.fd);
		deadline = sb_now_ms() + 5000;
		while (got < FORKERS && sb_now_ms() < deadline) {
			struct fork_result res;

			if (read(fds[0], &res, sizeof(res)) == (ssize_t)sizeof(res)) {
				got++;
				if (res.err)
					failed++, diag("clamp: the fork of %d failed: %s", (int)res.pid,
						       strerror(res.err));
				else
					forked++;
			} else {
				sb_sleep_ms(10);
			}
		}
		is_int(got, FORKERS, "clamp: every process got the HUP and reported its fork");
		is_int(forked, FORKERS, "clamp: every fork in the HUP handler succeeded (no pids clamp)");
		sb_read(s.target, "pids.max", buf, sizeof(buf));
		ok(!strncmp(buf, "max", 3), "clamp: pids.max is still max (%.*s)", (int)strcspn(buf, "\n"),
		   buf);
		for (int i = 0; i < FORKERS; i++)
			ok(sb_alive(f[i]), "clamp: forker %d is alive", i);
	}
	/* SIGKILL still contains a fork bomb (it lives under pids.max = 64). */
	{
		struct sb_proc bomb = { .what = SB_FORKBOMB, .cgroups = { s.target } };
		struct sec_cli *cli;
		pid_t b;

		if (!ok(sb_write(s.target, "pids.max", "64") == 0, "clamp: pids.max = 64 on the target"))
			goto out;
		b = sb_spawn(&bomb);
		if (!ok(b > 0, "clamp: a fork bomb under pids.max"))
			goto out;
		sb_wait_count(s.target, 60, 3000);
		cli = sec_cli_run(NULL, "-b", "loop", "-s", "KILL", "--wait=10s", s.target, NULL);
		if (cli) {
			is_int(cli->status, 0, "clamp: cgkill -b loop -s KILL on the bomb exits 0 (%.*s)",
			       (int)strcspn(cli->err, "\n"), cli->err);
			free(cli);
		}
		is_int(sb_wait_empty(s.target, 5000), 0, "clamp: the bomb's cgroup is empty");
		sb_read(s.target, "pids.max", buf, sizeof(buf));
		ok(!strncmp(buf, "64\n", 3), "clamp: pids.max is back to 64 (%.*s)",
		   (int)strcspn(buf, "\n"), buf);
	}
out:
	if (fds[0] >= 0) {
		close(fds[0]);
		close(fds[1]);
	}
	fork_res_fd = -1;
	sec_scene_end(&s);
	ok(sb_destroy(v1box) == 0, "clamp: v1 sandbox removed");
	free(v1box);
}

int main(void)
{
	sb_init(600);
	sb_require_root();
	rec_init();
	no_plan();
	if (!sb_mount(SB_V2))
		skip_all("no cgroup v2 mount");
	box = sb_create(SB_V2);
	if (!box)
		bail_out("cannot create a sandbox: %s", strerror(errno));
	note("sandbox %s", box);

	test_mount();
	test_tasks();
	test_protect();
	test_cgns();
	test_dotdot();
	test_forever();
	test_cli();
	test_clamp();

	ok(sb_destroy(box) == 0, "sandbox removed");
	free(box);
	return done_testing();
}
