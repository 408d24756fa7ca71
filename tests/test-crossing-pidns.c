// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Where a pid crosses from one pid namespace to another, nothing outside
 * the target is signalled: cgkill inside a child pid namespace that still
 * sees the parent's /proc (unshare --pid without --mount-proc, or a
 * container that sees the host's /proc), where a number /proc gives names
 * another process in our namespace. The test makes it name a bystander in
 * a sibling cgroup, by setting ns_last_pid, for the /proc search of the
 * loop backend (v1 pids and v2), for --pid, and for the PID 1 guard; and
 * the PID 1 guard through nsenter -p, as an administrator would enter a
 * container's pid namespace.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgkill.h"
#include "support/cgfile.h"
#include "support/cmd.h"
#include "support/sandbox.h"
#include "support/spawn.h"
#include "support/tap.h"

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
	/* LeakSanitizer stops the world through /proc/self/task, which a
	 * /proc of the parent namespace does not give it. Not in the cgroup
	 * of init (when it joins a target). */
	struct cmd_opts o = { .env = { "ASAN_OPTIONS=detect_leaks=0" },
			      .join = s->init_joins ? s->victim_cgroup : NULL };
	const char *argv[16] = { NULL };
	char pid[16];
	struct cmd c;

	snprintf(pid, sizeof(pid), "%d", victim);
	for (int i = 0; s->argv[i]; i++)
		argv[i] = strcmp(s->argv[i], "@") ? s->argv[i] : pid;
	cmd_runv(&c, &o, 20000, argv);
	snprintf(s->res->out, sizeof(s->res->out), "%s%s", c.out, c.err);
	cmd_free(&c);
	return c.status;
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
	child_call(ns_child, s, &dummy, 1, 60000, &st);
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

/* ---- nsenter -p ---- */

/* The same through nsenter -p, as an administrator would enter a
 * container's pid namespace: its init is in the target. */
static pid_t ns_init_of(const char *cgroup)
{
	pid_t *v = NULL, init = -1;
	size_t n = 0;

	sb_list_pids(cgroup, &v, &n);
	for (size_t i = 0; i < n && init < 0; i++) {
		char name[64], st[4096];
		const char *ns, *eol;

		snprintf(name, sizeof(name), "/proc/%d", (int)v[i]);
		/* "NSpid:\tOUTER\t1": pid 1 of a namespace below ours. */
		if (sb_read(name, "status", st, sizeof(st)) <= 0 || !(ns = strstr(st, "NSpid:")))
			continue;
		eol = strchr(ns, '\n');
		if (eol && eol[-1] == '1' && eol[-2] == '\t')
			init = v[i];
	}
	free(v);
	return init;
}

static void test_nsenter_init(const char *v2box)
{
	char *t = sb_mkdir(v2box, "t5"), pid[16];
	const char *unshare[] = { "/usr/bin/unshare", "--pid", "--fork", "/bin/sleep", "300", NULL };
	/* As in run_cmd(). */
	struct cmd_opts o = { .env = { "ASAN_OPTIONS=detect_leaks=0" }, .program = true };
	struct cmd res;
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
	const char *argv[] = { "/usr/bin/nsenter", "-t", pid, "-p", "--", cmd_path(), "-w1s", t, NULL };
	cmd_runv(&res, &o, 20000, argv);
	ok(res.status == 4 && strstr(res.err, "PID 1"),
	   "nsenter -p, no /proc of its own: the target holding that namespace's init is refused "
	   "(exit %d: %s)", res.status, res.err);
	cmd_free(&res);
	ok(sb_alive(holder), "nsenter -p: the namespace is untouched");
out:
	sb_destroy(t);
	free(t);
}

int main(void)
{
	char *v2, *pids;

	sb_init(240);
	sb_require_root();
	if (!sb_mount(SB_V2) || !sb_mount(SB_V1_PIDS))
		skip_all("needs cgroup v2 and the v1 pids hierarchy");
	v2 = sb_create(SB_V2);
	pids = sb_create(SB_V1_PIDS);
	if (!v2 || !pids)
		bail_out("cannot create the sandboxes");

	test_foreign_proc_v1(pids, v2);
	test_foreign_proc_v2(v2);
	test_foreign_proc_pid(v2);
	test_foreign_proc_init(v2);
	test_nsenter_init(v2);

	sb_cleanup_all();
	free(v2);
	free(pids);
	return done_testing();
}
