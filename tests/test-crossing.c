// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Where a pid, a path or a cgroup name crosses from one namespace or one
 * moment to another, nothing outside the target is signalled:
 *
 * - cgkill inside a child pid namespace that still sees the parent's /proc
 *   (unshare --pid without --mount-proc, or a container that sees the
 *   host's /proc): a number /proc gives names another process in our
 *   namespace. The test makes it name a bystander in a sibling cgroup, by
 *   setting ns_last_pid, for the /proc search of the loop backend (v1 pids
 *   and v2), for --pid, and for the PID 1 guard;
 * - a target renamed (v1), or removed and made again under its name,
 *   while a kill runs: a cgroup that takes the old name is not hit;
 * - inside a cgroup namespace with the host's cgroupfs mounted: a name as
 *   /proc/PID/cgroup shows it is not resolved against that mount;
 * - --pid through a bind mount that shows another cgroup under the name.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgkill.h"
#include "cmd.h"
#include "internal.h"
#include "sandbox.h"
#include "secutil.h"
#include "tap.h"

/* What a run inside a new pid namespace saw, in shared memory. */
struct inside {
	int ready;		/* 1 once the setup worked, -errno else */
	pid_t victim;		/* the bystander, as the namespace numbers it */
	pid_t collide;		/* the number it was meant to get */
	int status;		/* the command's exit code, -1 if not run */
	bool victim_alive;	/* after the command */
	char out[8192];		/* the command's stdout and stderr */
};

struct ns_setup {
	const char *victim_cgroup;	/* the bystander joins this */
	pid_t collide;		/* give the bystander this number, or */
	const char *inner_target;	/* one of ours here: take its outer pid */
	bool init_joins;	/* the namespace's init joins inner_target */
	const char *argv[12];	/* the command's arguments, without argv[0];
				 * "@" stands for the bystander's pid */
	struct inside *res;
};

/* Give the next fork of this pid namespace the number pid. */
static int next_pid(pid_t pid)
{
	char buf[32];
	int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
	int n = snprintf(buf, sizeof(buf), "%d", pid - 1);
	bool ok_ = fd >= 0 && write(fd, buf, (size_t)n) == n;

	if (fd >= 0)
		close(fd);
	return ok_ ? 0 : -errno;
}

static pid_t sleeper_in(const char *cgroup, int report)
{
	pid_t pid = fork();

	if (pid == 0) {
		char self[32] = "";
		ssize_t n;

		if (cgroup && sb_join(cgroup) < 0)
			_exit(1);
		/* A target's process outlives TERM, so the search looks. */
		if (report >= 0)
			signal(SIGTERM, SIG_IGN);
		/* /proc is the parent namespace's: "self" is our outer pid. */
		n = readlink("/proc/self", self, sizeof(self) - 1);
		if (report >= 0 && write(report, self, n > 0 ? (size_t)n : 0) < 0)
			_exit(1);
		if (report >= 0)
			close(report);
		for (;;)
			pause();
	}
	return pid;
}

/* The command, with stdout and stderr into res->out; its exit code. */
static int run_cmd(const struct ns_setup *s, pid_t victim)
{
	const char *argv[16] = { sb_cgkill() };
	char pid[16];
	int fd = memfd_create("out", 0), st;
	pid_t c;

	snprintf(pid, sizeof(pid), "%d", victim);
	for (int i = 0; s->argv[i]; i++)
		argv[i + 1] = strcmp(s->argv[i], "@") ? s->argv[i] : pid;
	c = fork();
	if (c == 0) {
		/* Not in the cgroup of init (when it joins a target). */
		if (s->init_joins && sb_join(s->victim_cgroup) < 0)
			_exit(126);
		/* LeakSanitizer stops the world through /proc/self/task, which
		 * a /proc of the parent namespace does not give it. */
		setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
		dup2(fd, 1);
		dup2(fd, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	if (c < 0 || waitpid(c, &st, 0) != c)
		return -1;
	if (pread(fd, s->res->out, sizeof(s->res->out) - 1, 0) < 0)
		s->res->out[0] = '\0';
	close(fd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* pid 1 of the new namespace: set up, run the command, look. */
static void ns_init(const struct ns_setup *s)
{
	struct inside *res = s->res;
	pid_t collide = s->collide, victim;
	int p[2];

	if (s->inner_target) {
		char buf[32] = "";

		if (pipe(p) < 0 || sleeper_in(s->inner_target, p[1]) < 0)
			_exit(1);
		close(p[1]);
		if (read(p[0], buf, sizeof(buf) - 1) <= 0)
			_exit(1);
		collide = (pid_t)atoi(buf);
	}
	if (s->init_joins && sb_join(s->inner_target) < 0)
		_exit(1);
	res->collide = collide;
	if (next_pid(collide) < 0) {
		res->ready = -errno;
		_exit(1);
	}
	victim = sleeper_in(s->victim_cgroup, -1);
	res->victim = victim;
	/* Let it join before the command looks. */
	for (int i = 0; i < 400 && !sb_member(s->victim_cgroup, victim); i++)
		sb_sleep_ms(5);
	res->ready = 1;
	res->status = run_cmd(s, victim);
	res->victim_alive = kill(victim, 0) == 0 && waitpid(victim, NULL, WNOHANG) == 0;
	_exit(0);
}

static void ns_child(void *arg, void *out)
{
	const struct ns_setup *s = arg;
	pid_t g;
	int st;

	(void)out;
	if (unshare(CLONE_NEWPID) < 0) {
		s->res->ready = -errno;
		return;
	}
	g = fork();
	if (g == 0)
		ns_init(s);
	/* The namespace ends with its init: every process in it goes. */
	waitpid(g, &st, 0);
}

static bool run_in_pidns(struct ns_setup *s)
{
	char dummy;
	int st;

	s->res = mmap(NULL, sizeof(*s->res), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (s->res == MAP_FAILED)
		return false;
	memset(s->res, 0, sizeof(*s->res));
	s->res->status = -1;
	sec_child(ns_child, s, &dummy, 1, 60000, &st);
	if (s->res->ready != 1 || s->res->victim != s->res->collide) {
		diag("pid namespace setup: ready %d, bystander %d, meant %d", s->res->ready,
		     s->res->victim, s->res->collide);
		return false;
	}
	note("command exit %d, output:\n%s", s->res->status, s->res->out);
	return true;
}

/* The end of a test with a target t and a sibling s. */
static void end_pair(struct ns_setup *ns, char *t, char *s)
{
	if (ns->res && ns->res != MAP_FAILED)
		munmap(ns->res, sizeof(*ns->res));
	sb_destroy(t);
	sb_destroy(s);
	free(t);
	free(s);
}

/* F1: the default command on a v1 pids target from a nested pid namespace
 * without its own /proc. The target's process is outside the namespace
 * (listed as 0); the bystander, in a v2 sibling, has its number. */
static void test_foreign_proc_v1(const char *v1box, const char *v2box)
{
	char *t = sb_mkdir(v1box, "t"), *s = sb_mkdir(v2box, "s");
	pid_t target;
	struct ns_setup ns = { .victim_cgroup = s, .argv = { "-w1s", NULL } };

	ns.argv[1] = t;
	if (!t || !s || sb_write(v1box, "pids.max", "50") < 0 ||
	    (target = sb_sleeper(t)) < 0) {
		ok(false, "foreign /proc, v1: setup");
		goto out;
	}
	ns.collide = target;
	if (!ok(run_in_pidns(&ns), "foreign /proc, v1: a bystander has the target's number"))
		goto out;
	ok(ns.res->victim_alive, "foreign /proc, v1 pids, auto: the bystander in a sibling lives");
	ok(sb_alive(target), "foreign /proc, v1 pids: the target's process, outside our pid namespace, is out of reach");
	ok(ns.res->status == 3 && strstr(ns.res->out, "outside our pid namespace"),
	   "foreign /proc, v1 pids: no success claimed for what we cannot see (exit %d)", ns.res->status);
out:
	end_pair(&ns, t, s);
}

/* F1, all inside: the target's process is in the namespace too (and
 * ignores TERM), and the bystander has the number /proc gives it. */
static void test_foreign_proc_v2(const char *v2box)
{
	char *t = sb_mkdir(v2box, "t2"), *s = sb_mkdir(v2box, "s2");
	struct ns_setup ns = { .victim_cgroup = s, .inner_target = t,
			       .argv = { "-b", "loop", "-s", "TERM", "-w2s", "-j", NULL } };

	ns.argv[6] = t;
	if (!t || !s) {
		ok(false, "foreign /proc, v2: setup");
		goto out;
	}
	if (!ok(run_in_pidns(&ns), "foreign /proc, v2: a bystander has the number /proc gives the target's process"))
		goto out;
	ok(ns.res->victim_alive, "foreign /proc, v2, -b loop -s TERM: the bystander lives");
	ok(strstr(ns.res->out, "\"signalled\": 1,") != NULL, "foreign /proc, v2: one process signalled, the target's one");
	is_int(ns.res->status, 3, "foreign /proc, v2: the target's process, ignoring TERM, is reported left");
out:
	end_pair(&ns, t, s);
}

/* F1 by --pid: /proc/N/cgroup of a foreign /proc names the cgroup of
 * another process; the cgroup opened must list N itself. */
static void test_foreign_proc_pid(const char *v2box)
{
	char *t = sb_mkdir(v2box, "t3"), *s = sb_mkdir(v2box, "s3");
	pid_t target;
	struct ns_setup ns = { .victim_cgroup = s, .argv = { "-w1s", "--pid", "@", NULL } };

	if (!t || !s || (target = sb_sleeper(t)) < 0) {
		ok(false, "foreign /proc, --pid: setup");
		goto out;
	}
	ns.collide = target;
	if (!ok(run_in_pidns(&ns), "foreign /proc, --pid: our pid N is the number of a process elsewhere"))
		goto out;
	ok(sb_alive(target), "foreign /proc, --pid N: the process /proc/N names, in another cgroup, lives");
	ok(ns.res->victim_alive, "foreign /proc, --pid N: not killed through a cgroup that is not its own");
	ok(ns.res->status == 1 && strstr(ns.res->out, "not in this cgroup"),
	   "foreign /proc, --pid N: refused, saying why (exit %d)", ns.res->status);
out:
	end_pair(&ns, t, s);
}

/* Issue 15.3: the PID 1 guard with a foreign /proc: /proc/1 is not our
 * namespace's init. */
static void test_foreign_proc_init(const char *v2box)
{
	char *t = sb_mkdir(v2box, "t4"), *s = sb_mkdir(v2box, "s4");
	struct ns_setup ns = { .victim_cgroup = s, .inner_target = t, .init_joins = true,
			       .argv = { "-w1s", NULL } };

	ns.argv[1] = t;
	if (!t || !s) {
		ok(false, "foreign /proc, PID 1: setup");
		goto out;
	}
	if (!ok(run_in_pidns(&ns), "foreign /proc, PID 1: our init is in the target"))
		goto out;
	ok(ns.res->status == 4 && strstr(ns.res->out, "PID 1"),
	   "foreign /proc: a cgroup holding our namespace's PID 1 is refused (exit %d)", ns.res->status);
out:
	end_pair(&ns, t, s);
}

/* The same through nsenter -p, as an administrator would enter a
 * container's pid namespace: its init is in the target. */
static pid_t ns_init_of(const char *cgroup)
{
	char buf[256], name[64], st[4096];
	ssize_t n = sb_read(cgroup, "cgroup.procs", buf, sizeof(buf));

	for (char *l = n > 0 ? buf : NULL, *e; l && *l; l = e) {
		pid_t pid = (pid_t)strtol(l, &e, 10);

		if (e == l)
			break;
		snprintf(name, sizeof(name), "/proc/%d", pid);
		/* "NSpid:\tOUTER\t1": pid 1 of a namespace below ours. */
		if (sb_read(name, "status", st, sizeof(st)) > 0) {
			const char *ns = strstr(st, "NSpid:");
			const char *eol = ns ? strchr(ns, '\n') : NULL;

			if (eol && eol[-1] == '1' && eol[-2] == '\t')
				return pid;
		}
		while (*e == '\n')
			e++;
	}
	return -1;
}

static void test_nsenter_init(const char *v2box)
{
	char *t = sb_mkdir(v2box, "t5"), pid[16], *saved;
	const char *unshare[] = { "/usr/bin/unshare", "--pid", "--fork", "/bin/sleep", "300", NULL };
	struct sb_cmd res;
	pid_t holder = -1, init = -1;

	if (access("/usr/bin/nsenter", X_OK) || access(unshare[0], X_OK)) {
		skip("nsenter -p: util-linux's nsenter and unshare are missing");
		goto out;
	}
	holder = t ? sb_fork() : -1;
	if (holder == 0) {
		if (sb_join(t) == 0)
			execv(unshare[0], (char *const *)unshare);
		_exit(127);
	}
	for (int i = 0; i < 400 && (init = ns_init_of(t)) < 0; i++)
		sb_sleep_ms(5);
	if (!ok(init > 0, "nsenter -p: a pid namespace whose init is in the target"))
		goto out;
	snprintf(pid, sizeof(pid), "%d", init);
	const char *argv[] = { "/usr/bin/nsenter", "-t", pid, "-p", "--", sb_cgkill(), "-w1s", t, NULL };
	/* As in run_cmd(), for this child only. */
	saved = getenv("ASAN_OPTIONS") ? strdup(getenv("ASAN_OPTIONS")) : NULL;
	setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
	sb_run(&res, NULL, 20000, argv);
	if (saved)
		setenv("ASAN_OPTIONS", saved, 1);
	else
		unsetenv("ASAN_OPTIONS");
	free(saved);
	ok(res.exit_code == 4 && strstr(res.err, "PID 1"),
	   "nsenter -p, no /proc of its own: the target holding that namespace's init is refused (exit %d: %s)",
	   res.exit_code, res.err);
	ok(sb_alive(holder), "nsenter -p: the namespace is untouched");
out:
	sb_destroy(t);
	free(t);
}

static bool signal_pending(pid_t pid, int sig)
{
	char dir[32], buf[4096], *l;
	unsigned long long mask;

	snprintf(dir, sizeof(dir), "/proc/%d", pid);
	if (sb_read(dir, "status", buf, sizeof(buf)) <= 0)
		return false;
	l = strstr(buf, "ShdPnd:");
	return l && sscanf(l + 7, "%llx", &mask) == 1 && (mask & (1ULL << (sig - 1)));
}

/* F2, v1: during the grace period the target is renamed away and the
 * sibling takes its name; the SIGKILL step must not reach the sibling. The
 * target's process cannot die yet: it sits in a frozen v1 freezer cgroup. */
static void test_rename_v1(const char *pidsbox, const char *frzbox)
{
	char *t = sb_mkdir(pidsbox, "t"), *s = sb_mkdir(pidsbox, "s"), *f = sb_mkdir(frzbox, "f");
	char *old = sb_path(pidsbox, "t.old");
	struct sb_proc held = { .what = SB_SLEEP, .cgroups = { f, t, NULL } };
	pid_t target = -1, bystander = -1;
	struct cmd c;

	if (!t || !s || !f || (target = sb_spawn(&held)) < 0 || (bystander = sb_sleeper(s)) < 0 ||
	    sb_write(f, "freezer.state", "FROZEN") < 0) {
		ok(false, "rename, v1: setup");
		goto out;
	}
	cmd_start(&c, NULL, "-s", "TERM", "--timeout", "2s", "KILL", "-w1s", t, NULL);
	for (uint64_t end = sb_now_ms() + 5000; sb_now_ms() < end && !signal_pending(target, SIGTERM);)
		sb_sleep_ms(5);
	ok(signal_pending(target, SIGTERM), "rename, v1: TERM reached the held target process");
	ok(rename(t, old) == 0 && rename(s, t) == 0, "rename, v1: target renamed away, sibling renamed to its name");
	cmd_finish(&c, 20000);
	ok(sb_alive(bystander), "rename, v1: the sibling that took the target's name lives");
	ok(signal_pending(target, SIGKILL) || !sb_alive(target), "rename, v1: SIGKILL reached the renamed target");
	cmd_free(&c);
	rename(t, s);
	rename(old, t);
out:
	sb_write(f, "freezer.state", "THAWED");
	sb_destroy(t);
	sb_destroy(s);
	sb_destroy(f);
	free(t);
	free(s);
	free(f);
	free(old);
}

/* A run on target path as the backends see it, for the /proc search. */
struct probe_run {
	struct cgk_target t;
	struct cgk_report rep;
	struct cgk_options opts;
	struct cgk_run run;
};

static int probe_open(struct probe_run *p, const char *path)
{
	char msg[256];
	int r = cgk_target_open(path, &p->t, msg, sizeof(msg));

	if (r < 0)
		return r;
	p->opts = (struct cgk_options)CGK_OPTIONS_INIT;
	memset(&p->rep, 0, sizeof(p->rep));
	p->run = (struct cgk_run){ .opts = &p->opts, .rep = &p->rep, .t = &p->t, .self = getpid(),
				   .batch = 64 };
	p->run.procfd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	cgk_proc_check(&p->run);
	return 0;
}

static void probe_close(struct probe_run *p)
{
	cgk_pidset_free(&p->run.done);
	close(p->run.procfd);
	cgk_target_close(&p->t);
}

/* F2, v2: the /proc search after the target was removed and made again
 * under its name with a new process (a service restart). (v2 refuses to
 * rename a cgroup.) */
static void test_recreated_v2(const char *v2box)
{
	char *t = sb_mkdir(v2box, "rt"), *again = NULL;
	struct probe_run p;
	unsigned fresh = 99;
	pid_t bystander;

	if (!t || probe_open(&p, t) < 0 || rmdir(t) < 0 || !(again = sb_mkdir(v2box, "rt")) ||
	    (bystander = sb_sleeper(t)) < 0) {
		ok(false, "recreated, v2: setup");
		goto out;
	}
	ok(p.run.proc_ours, "our /proc is ours");
	is_int(cgk_signal_stragglers(&p.run, SIGTERM, &fresh), 0, "recreated, v2: the /proc search runs");
	is_int(fresh, 0, "recreated, v2: the new cgroup under the old name is not the target");
	ok(sb_alive(bystander), "recreated, v2: its process lives");
	probe_close(&p);
out:
	sb_destroy(t);
	free(t);
	free(again);
}

/* The /proc search still finds what it is for: a process in the subtree
 * that no list read reached (here: none was made), through its leads. */
static void test_scan_finds(const char *v2box)
{
	char *t = sb_mkdir(v2box, "ft/a/b");
	char *top = sb_path(v2box, "ft");
	struct probe_run p;
	unsigned fresh = 0;
	pid_t inside;

	if (!t || (inside = sb_sleeper(t)) < 0 || probe_open(&p, top) < 0) {
		ok(false, "scan: setup");
		goto out;
	}
	is_int(cgk_signal_stragglers(&p.run, SIGKILL, &fresh), 0, "scan: runs");
	is_int(fresh, 1, "scan: finds the process two levels below the target");
	ok(sb_killed_by(inside, SIGKILL, 5000), "scan: and kills it");
	probe_close(&p);
out:
	sb_destroy(top);
	free(t);
	free(top);
}

/* F3: in a cgroup namespace whose root is box/ns, with the host's cgroupfs
 * still mounted, "NAME/t" names box/ns/NAME/t; it must never reach the
 * host's /NAME/t (here: box/t, NAME being the box's own name). */
struct cgns_arg {
	const char *ns, *name;
	pid_t in_ns;
};
struct cgns_out {
	int r;
	char message[sizeof(((struct cgk_report *)0)->message)];
};

static void cgns_child(void *arg, void *out)
{
	const struct cgns_arg *a = arg;
	struct cgns_out *o = out;
	struct cgk_options opts = CGK_OPTIONS_INIT;
	struct cgk_report rep;
	char name[4096];

	if (sb_join(a->ns) < 0 || unshare(CLONE_NEWCGROUP) < 0) {
		o->r = -999;
		return;
	}
	opts.wait_ms = 2000;
	snprintf(name, sizeof(name), "%s/t", a->name);
	o->r = cgk_kill(name, &opts, &rep);
	snprintf(o->message, sizeof(o->message), "%s", rep.message);
	cgk_report_free(&rep);
}

static void test_cgroupns(const char *v2box)
{
	const char *name = strrchr(v2box, '/') + 1;
	char *host_t = sb_mkdir(v2box, "t"), *ns = sb_mkdir(v2box, "ns");
	char *ns_rel = NULL, *ns_t = NULL;
	struct cgns_arg a = { .ns = ns, .name = name };
	struct cgns_out o = { 0 };
	pid_t outside, inside;
	int st;

	if (asprintf(&ns_rel, "%s/t", name) < 0 || !host_t || !ns || !(ns_t = sb_mkdir(ns, ns_rel)) ||
	    (outside = sb_sleeper(host_t)) < 0 || (inside = sb_sleeper(ns_t)) < 0) {
		ok(false, "cgroup namespace: setup");
		goto out;
	}
	sec_child(cgns_child, &a, &o, sizeof(o), 20000, &st);
	if (!ok(o.r != -999, "cgroup namespace: entered"))
		goto out;
	ok(sb_alive(outside), "cgroup namespace: the host's cgroup of that name is not touched");
	ok(o.r == -EXDEV && strstr(o.message, "outside this cgroup namespace"),
	   "cgroup namespace: a name is not resolved against a mount from outside it (%d: %s)", o.r,
	   o.message);
out:
	sb_destroy(ns);
	sb_destroy(host_t);
	free(host_t);
	free(ns);
	free(ns_rel);
	free(ns_t);
}

/* F7: --pid through a bind mount that shows R/b under the name R/a. */
struct bind_arg {
	const char *a, *b;
	pid_t pid;
};

static void bind_child(void *arg, void *out)
{
	const struct bind_arg *b = arg;
	int *status = out;
	char pid[16];
	struct sb_cmd res;
	const char *argv[] = { sb_cgkill(), "-w1s", "--pid", pid, NULL };

	*status = -999;
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount(b->b, b->a, NULL, MS_BIND, NULL) < 0)
		return;
	snprintf(pid, sizeof(pid), "%d", b->pid);
	if (sb_run(&res, NULL, 20000, argv) == 0)
		*status = res.exit_code;
	if (*status != 1 || !strstr(res.err, "not in this cgroup"))
		diag("--pid through a bind mount: exit %d, stderr %s", *status, res.err);
}

static void test_bind_pid(const char *v2box)
{
	char *a = sb_mkdir(v2box, "R/a"), *b = sb_mkdir(v2box, "R/b");
	char *at = sb_mkdir(v2box, "R/a/t"), *bt = sb_mkdir(v2box, "R/b/t");
	char *r = sb_path(v2box, "R");
	struct bind_arg arg = { .a = a, .b = b };
	pid_t other;
	int status = -1, st;

	if (!a || !b || !at || !bt || (arg.pid = sb_sleeper(at)) < 0 || (other = sb_sleeper(bt)) < 0) {
		ok(false, "bind mount: setup");
		goto out;
	}
	sec_child(bind_child, &arg, &status, sizeof(status), 30000, &st);
	ok(sb_alive(other), "--pid through a bind mount: the cgroup shown under the name lives");
	ok(sb_alive(arg.pid), "--pid through a bind mount: the process itself is not reached either");
	is_int(status, 1, "--pid through a bind mount: refused as an error");
out:
	sb_destroy(r);
	free(a);
	free(b);
	free(at);
	free(bt);
	free(r);
}

/* --pid with a thread's id: named as such, nothing signalled. */
static void test_pid_thread(const char *v2box)
{
	char *t = sb_mkdir(v2box, "th"), dir[64], tid[16] = "";
	pid_t p = t ? sb_spawn(&(struct sb_proc){ .what = SB_THREADS, .cgroups = { t }, .threads = 2 }) : -1;
	struct dirent *de;
	struct cmd c;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/task", p);
	d = p > 0 ? opendir(dir) : NULL;
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.' && atoi(de->d_name) != p)
			snprintf(tid, sizeof(tid), "%d", atoi(de->d_name));
	if (d)
		closedir(d);
	if (!ok(*tid, "--pid TID: a process with threads"))
		goto out;
	cmd_run(&c, 20000, "-w1s", "--pid", tid, NULL);
	ok(c.status == 1 && strstr(c.err, "not a process ID"), "--pid TID: refused as not a process ID (exit %d: %s)",
	   c.status, c.err);
	ok(sb_alive(p), "--pid TID: nothing signalled");
	cmd_free(&c);
out:
	sb_destroy(t);
	free(t);
}

int main(void)
{
	char *v2, *pids, *frz;

	sb_init(240);
	sb_require_root();
	if (!sb_mount(SB_V2) || !sb_mount(SB_V1_PIDS) || !sb_mount(SB_V1_FREEZER))
		skip_all("needs cgroup v2 and the v1 pids and freezer hierarchies");
	v2 = sb_create(SB_V2);
	pids = sb_create(SB_V1_PIDS);
	frz = sb_create(SB_V1_FREEZER);
	if (!v2 || !pids || !frz)
		bail_out("cannot create the sandboxes");

	test_foreign_proc_v1(pids, v2);
	test_foreign_proc_v2(v2);
	test_foreign_proc_pid(v2);
	test_foreign_proc_init(v2);
	test_nsenter_init(v2);
	test_rename_v1(pids, frz);
	test_recreated_v2(v2);
	test_scan_finds(v2);
	test_cgroupns(v2);
	test_bind_pid(v2);
	test_pid_thread(v2);

	sb_cleanup_all();
	free(v2);
	free(pids);
	free(frz);
	return done_testing();
}
