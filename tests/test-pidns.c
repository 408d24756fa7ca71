// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * PID namespaces, both ways round.
 *
 * - A target holding processes that live in a pid namespace of their own
 *   (their pids are visible to us): every backend kills them.
 * - cgkill running inside a child pid namespace (with its own /proc)
 *   against a cgroup whose processes are outside it: cgroup.procs lists
 *   them as 0. The fallback backends must count them as unreachable and
 *   never pass 0 to kill(2) (that would signal cgkill's own process group:
 *   this test leads its own group and records SIGUSR1 to catch it); the
 *   error names the backend that would reach them; the kernel backend
 *   kills them. On cgroup v1 such processes are not listed at all.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgkill.h"
#include "support/cgfile.h"
#include "support/cmd.h"
#include "support/json.h"
#include "support/kill.h"
#include "support/record.h"
#include "support/sandbox.h"
#include "support/scene.h"
#include "support/spawn.h"
#include "support/tap.h"

static char *box;
/* ---- processes in a namespace of their own, inside the target ---- */

/* X unshares, G (pid 1 there) joins the target and forks C; X reports G's
 * and C's pids as we see them, then waits for G. */
static pid_t inner_ns(const char *target, pid_t *c_out)
{
	int p[2];
	pid_t x, pids[2] = { -1, -1 };

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	x = sb_fork();
	if (x == 0) {
		pid_t g;

		/* X is outside the target: a canary */
		rec_arm((const int[])REC_STRAY, false, false);
		if (unshare(CLONE_NEWPID) < 0)
			_exit(1);
		g = fork();
		if (g == 0) {
			pid_t c;

			signal(SIGUSR1, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
			if (sb_join(target) < 0)
				_exit(1);
			c = fork();
			if (c == 0) {
				for (;;)
					pause();
			}
			for (;;)
				pause();
		}
		pids[0] = g;
		if (write(p[1], pids, sizeof(pids)) < 0)
			_exit(1);
		for (;;) {
			int st;

			if (waitpid(g, &st, 0) == g)
				_exit(0);
		}
	}
	close(p[1]);
	if (x < 0 || read(p[0], pids, sizeof(pids)) != sizeof(pids)) {
		close(p[0]);
		return -EIO;
	}
	close(p[0]);
	/* C: the other process listed in the target. */
	*c_out = -1;
	for (int i = 0; i < 200 && *c_out < 0; i++) {
		pid_t *v = NULL;
		size_t n = 0;

		sb_list_pids(target, &v, &n);
		for (size_t k = 0; k < n; k++)
			if (v[k] != pids[0] && v[k] > 0)
				*c_out = v[k];
		free(v);
		if (*c_out < 0)
			sb_sleep_ms(5);
	}
	return pids[0];
}

static void test_inner(void)
{
	static const enum cgk_backend backends[] = {
		CGK_BACKEND_KERNEL, CGK_BACKEND_FREEZE, CGK_BACKEND_LOOP,
	};
	struct scene s;

	if (!scene_start(&s, box, "inner"))
		goto out;
	for (size_t b = 0; b < 3; b++) {
		const char *bn = cgk_backend_name(backends[b]);
		cgk_report *rep = NULL;
		pid_t g, c = -1;
		int r;

		g = inner_ns(s.target, &c);
		if (!ok(g > 0 && c > 0, "inner %s: PID 1 and PID 2 of a new namespace in the target (%d, %d)",
			bn, (int)g, (int)c))
			break;
		r = kill_opts(s.target, backends[b], SIGKILL, 0, 5000, NULL, &rep);
		is_int(r, 0, "inner %s: cgk_kill returns 0 (%s)", bn, cgk_report_message(rep));
		is_int(cgk_report_unreachable(rep), 0, "inner %s: nothing unreachable: their pids are visible to us", bn);
		if (backends[b] != CGK_BACKEND_KERNEL)
			/* C may already be gone with its init when its turn comes. */
			ok(cgk_report_signalled(rep) >= 1 && cgk_report_signalled(rep) <= 2, "inner %s: %u signalled (PID 1 first)",
			   bn, cgk_report_signalled(rep));
		ok(cgk_report_emptied(rep), "inner %s: emptied", bn);
		for (int i = 0; i < 300 && (sb_alive(g) || sb_alive(c)); i++)
			sb_sleep_ms(10);
		ok(!sb_alive(g) && !sb_alive(c), "inner %s: both are gone", bn);
		rep = cgk_report_free(rep);
		sb_reap();
	}
	is_int(rec_take(NULL), 0, "inner: the namespaces' parents outside got no signal");
out:
	scene_end(&s);
}

/* ---- cgkill inside a child namespace, its targets outside it ---- */

struct outer_arg {
	const char *target, *v1target;
	unsigned n;		/* processes in each target */
	int pidfds[8];		/* of the target's processes: poll tells if alive */
};

struct outer_out {
	int setup;
	int r_freeze, r_loop, r_wait, r_kernel, r_v1;
	unsigned unr_freeze, unr_loop, unr_wait, sig_freeze, sig_loop;
	unsigned zero_survivors, v1_listed, v1_unreachable, v1_signalled;
	bool v1_emptied, kill_steps;
	unsigned hits_before_kill, alive_before_kernel;
	int cli_loop, cli_freeze;
	long long cli_unreachable;
	char wait_msg[512];
};

static void outer_runner(const struct outer_arg *a, struct outer_out *o)
{
	cgk_report *rep = NULL;
	struct cmd cli;

	/* USR1 first: a kill(0, USR1) would be caught by the recorders. */
	o->r_freeze = kill_opts(a->target, CGK_BACKEND_FREEZE, SIGUSR1, 0, 0, NULL, &rep);
	o->unr_freeze = cgk_report_unreachable(rep);
	o->sig_freeze = cgk_report_signalled(rep);
	rep = cgk_report_free(rep);
	o->r_loop = kill_opts(a->target, CGK_BACKEND_LOOP, SIGUSR1, 0, 0, NULL, &rep);
	o->unr_loop = cgk_report_unreachable(rep);
	o->sig_loop = cgk_report_signalled(rep);
	rep = cgk_report_free(rep);
	cmd_run(&cli, CMD_MS, "-b", "loop", "-s", "USR1", a->target, NULL);
	o->cli_loop = cli.status;
	cmd_free(&cli);
	if (a->v1target) {
		o->r_v1 = kill_opts(a->v1target, CGK_BACKEND_V1_FREEZE, SIGUSR1, 0, 500, NULL, &rep);
		o->v1_unreachable = cgk_report_unreachable(rep);
		o->v1_signalled = cgk_report_signalled(rep);
		o->v1_emptied = cgk_report_emptied(rep);
		rep = cgk_report_free(rep);
		kill_opts(a->v1target, CGK_BACKEND_AUTO, SIGKILL, CGK_DRY_RUN, 0, NULL, &rep);
		o->v1_listed = (unsigned)cgk_report_n_processes(rep, CGK_LIST_LISTED);
		rep = cgk_report_free(rep);
	}
	sb_sleep_ms(50);
	o->hits_before_kill = rec_take(NULL);
	if (o->hits_before_kill)
		return;		/* a stray signal: no SIGKILL experiments */
	o->kill_steps = true;

	o->r_wait = kill_opts(a->target, CGK_BACKEND_FREEZE, SIGKILL, 0, 800, NULL, &rep);
	o->unr_wait = cgk_report_unreachable(rep);
	o->zero_survivors = rep_has_pid(rep, CGK_LIST_SURVIVORS, 0);
	snprintf(o->wait_msg, sizeof(o->wait_msg), "%.500s", cgk_report_message(rep));
	rep = cgk_report_free(rep);
	cmd_run(&cli, CMD_MS, "-j", "-b", "freeze", "--wait=300ms", a->target, NULL);
	o->cli_freeze = cli.status;
	o->cli_unreachable = json_num(cli.out, "d['targets'][0]['unreachable']");
	cmd_free(&cli);

	/* A pidfd polls readable once its process has exited; that works
	 * across pid namespaces, signalling through it would not. */
	for (unsigned i = 0; i < a->n; i++) {
		struct pollfd pfd = { .fd = a->pidfds[i], .events = POLLIN };

		o->alive_before_kernel += a->pidfds[i] >= 0 && poll(&pfd, 1, 0) == 0;
	}
	o->r_kernel = kill_opts(a->target, CGK_BACKEND_AUTO, SIGKILL, 0, 5000, NULL, &rep);
	rep = cgk_report_free(rep);
}

/* outer_runner() as PID 1 of a pid namespace with a /proc of its own. */
static void outer_init(void *argp, void *outp)
{
	outer_runner(argp, outp);
}

static void outer_child(void *argp, void *outp)
{
	struct outer_out *o = outp;
	int r = pidns_call(outer_init, argp, outp, sizeof(*o));

	if (r < 0)
		o->setup = r;
}

static void test_outer(void)
{
	enum { N = 3 };
	struct scene s;
	struct outer_arg a;
	struct outer_out o;
	char *v1t = NULL, *v1box = NULL;
	pid_t pids[N], v1pids[N];
	unsigned dead = 0;
	int r;

	memset(&a, 0, sizeof(a));
	for (int i = 0; i < 8; i++)
		a.pidfds[i] = -1;
	if (!scene_start(&s, box, "outer"))
		goto out;
	for (int i = 0; i < N; i++)
		pids[i] = sb_sleeper(s.target);
	if (!ok(pids[0] > 0 && pids[N - 1] > 0, "outer: %d processes in the target", N))
		goto out;
	/* Their USR1 is recorded: they are in the target, so they may get it;
	 * what matters is that the namespace cannot reach them but the
	 * test's process group (recorded below) gets nothing either. */
	if (sb_mount(SB_V1_FREEZER) && (v1box = sb_create(SB_V1_FREEZER)) &&
	    (v1t = sb_mkdir(v1box, "T"))) {
		for (int i = 0; i < N; i++)
			v1pids[i] = sb_sleeper(v1t);
	}
	a.target = s.target;
	a.v1target = v1t;
	a.n = N;
	for (int i = 0; i < N; i++)
		a.pidfds[i] = (int)syscall(SYS_pidfd_open, pids[i], 0);
	r = child_call(outer_child, &a, &o, sizeof(o), 120000, NULL);
	if (!is_int(r, 0, "outer: the runner in a child pid namespace reports"))
		goto out;
	if (o.setup < 0) {
		skip("outer: cannot make a pid namespace with its own /proc: %s", strerror(-o.setup));
		goto out;
	}
	is_int(o.r_freeze, 0, "outer freeze USR1: returns 0");
	is_int(o.unr_freeze, N, "outer freeze USR1: %d unreachable (listed as 0)", N);
	is_int(o.sig_freeze, 0, "outer freeze USR1: none signalled");
	is_int(o.r_loop, 0, "outer loop USR1: returns 0");
	is_int(o.unr_loop, N, "outer loop USR1: %d unreachable", N);
	is_int(o.sig_loop, 0, "outer loop USR1: none signalled");
	is_int(o.cli_loop, 0, "outer: cgkill -b loop -s USR1 exits 0");
	is_int(o.hits_before_kill, 0, "outer: no USR1 reached the test's process group (no kill(0))");
	is_int(o.alive_before_kernel, N,
	       "outer: the processes outside the namespace were alive until the kernel backend ran");
	if (v1t) {
		/* v1 leaves tasks invisible to the reader out of its lists. */
		is_int(o.v1_listed, 0, "outer v1: cgroup v1 does not list processes outside the namespace");
		is_int(o.v1_signalled, 0, "outer v1: none signalled");
		note("outer v1: unreachable %u, emptied %d: v1 gives no way to see them (a limitation)",
		     o.v1_unreachable, o.v1_emptied);
		ok(sb_alive(v1pids[0]) && sb_alive(v1pids[N - 1]), "outer v1: the v1 processes are alive");
	}
	if (!ok(o.kill_steps, "outer: the SIGKILL steps ran"))
		goto out;
	is_int(o.r_wait, -ETIMEDOUT, "outer freeze KILL: they survive: ETIMEDOUT");
	is_int(o.unr_wait, N, "outer freeze KILL: %d unreachable", N);
	is_int(o.zero_survivors, N, "outer freeze KILL: %d survivors listed as pid 0", N);
	ok(strstr(o.wait_msg, "pid namespace") && strstr(o.wait_msg, "kernel"),
	   "outer freeze KILL: the error says only the kernel backend reaches them: %s", o.wait_msg);
	is_int(o.cli_freeze, 3, "outer: cgkill -j -b freeze exits 3");
	is_int(o.cli_unreachable, N, "outer: JSON unreachable = %d", N);
	is_int(o.r_kernel, 0, "outer kernel: cgk_kill from inside the namespace returns 0");
	for (int i = 0; i < N; i++)
		dead += sb_killed_by(pids[i], SIGKILL, 3000);
	is_int(dead, N, "outer kernel: the %d processes outside the namespace died", N);
out:
	for (int i = 0; i < N; i++)
		if (a.pidfds[i] >= 0)
			close(a.pidfds[i]);
	is_int(rec_take(NULL), 0, "outer: no signal reached the test's process group");
	if (v1box) {
		ok(sb_destroy(v1box) == 0, "outer: v1 sandbox removed");
		free(v1box);
	}
	free(v1t);
	scene_end(&s);
}

int main(void)
{
	box = sb_start(300);
	/* Our own process group: a kill(0, sig) from a namespace we start
	 * hits us and our children only, and the recorder shows it. */
	setpgid(0, 0);
	rec_init();
	rec_arm((const int[]){ SIGUSR1, SIGUSR2, 0 }, false, false);

	test_inner();
	test_outer();

	return sb_finish(box);
}

