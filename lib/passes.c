/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Signalling passes for whatever no settled freeze covers: the loop
 * backend's whole work, and the freezer backends' when a freeze does not
 * settle or has been thawed.
 *
 * A walk reads one list at a time: a process that keeps moving itself
 * between cgroups of the subtree can be missed by every pass. So when the
 * lists show nothing new, /proc is searched too (cgk_signal_stragglers).
 *
 * Without a freezer a SIGKILLed process can finish a fork it had started
 * after its pass read the list, and the child shows up in cgroup.procs a
 * little later (the kernel's cgroup.kill closes this race with kill_seq; we
 * cannot). So with SIGKILL the passes go on while the killed processes
 * are still there and running (see settle()).
 */
#include <limits.h>

#include "internal.h"

#define MAX_PASSES 1000		/* passes that keep finding new processes */
#define STALL_MS 200		/* SIGKILL: no process left runs or leaves */
#define SETTLE_DELAY_MAX_MS 16

struct live {
	pid_t self;
	unsigned n;		/* listed, reachable, not us */
	bool running;		/* one of them is runnable */
	bool look;		/* look for a runnable one */
};

/* 'R' in /proc/PID/stat: "pid (comm) R ...", comm may hold ')' */
static bool is_running(int procfd, pid_t pid)
{
	struct cgk_process p;

	return cgk_proc_stat(procfd, pid, &p, NULL) == 0 && p.state == 'R';
}

static int live_visit(struct cgk_run *run, int cgfd, const char *rel,
		      const struct cgk_pidvec *pids, void *arg)
{
	struct live *live = arg;

	(void)cgfd, (void)rel;
	for (size_t i = 0; i < pids->n; i++) {
		if (pids->v[i] == 0 || pids->v[i] == live->self)
			continue;
		live->n++;
		if (live->look && !live->running)
			live->running = is_running(run->procfd, pids->v[i]);
	}
	return 0;
}

/*
 * After SIGKILL: re-list while the killed processes go, signalling any child
 * that a dying parent still managed to add. A parent can do that only while
 * it exists and runs, so this goes on while the count falls or one of them
 * is runnable (a killed process waiting for a CPU on a loaded machine), and
 * stops when nothing reachable is left, when for STALL_MS none left and
 * none ran (D state, frozen from above, kernel threads, EPERM: the
 * caller's wait reports those), or at the deadline.
 */
static int settle(struct cgk_run *run, int sig, uint64_t deadline)
{
	uint64_t now = cgk_now_ms(), stall_since = now;
	unsigned last = UINT_MAX, delay = 1;

	for (;;) {
		/* A process we may not signal could run for ever: then only
		 * the count says whether anything is still happening. */
		struct live live = { .self = run->self,
				     .look = run->rep->not_permitted == 0 && run->proc_ours };
		unsigned fresh;
		int r = cgk_tree_walk_procs(run, live_visit, &live);

		if (r < 0)
			return cgk_error_wrap(&run->err, r, "cannot list the processes");
		now = cgk_now_ms();
		if (now >= deadline)
			return 0;
		if (live.n == 0) {
			r = cgk_signal_stragglers(run, sig, &fresh);
			if (r < 0 || !fresh)
				return r;
			last = UINT_MAX;
			delay = 1;
			continue;
		}
		bool falling = live.n < last;

		if (falling || live.running) {
			last = live.n;
			stall_since = now;
		} else if (now - stall_since >= STALL_MS) {
			return 0;
		}
		cgk_sleep_ms(delay);
		if (delay < SETTLE_DELAY_MAX_MS)
			delay *= 2;
		/* While the count falls, the killed processes are leaving and
		 * the lists tell what is left: /proc (every process of the
		 * machine, 60 ms with 3,000 zombies) waits until it stops. */
		r = cgk_signal_pass(run, sig, &fresh);
		if (r >= 0 && !fresh && !falling)
			r = cgk_signal_stragglers(run, sig, &fresh);
		if (r < 0)
			return r;
		if (fresh) {
			last = UINT_MAX;
			delay = 1;
		}
	}
}

int cgk_passes(struct cgk_run *run, int sig, uint64_t deadline, bool settle_kill)
{
	unsigned fresh = 0, passes = 0;
	int r;

	/* No pause between passes: a pass that found something is followed at
	 * once by another, which catches children forked meanwhile. Measured
	 * on 2 CPUs against 200-process bombs: mean time to empty 249 ms with
	 * no pause, 273 ms with 1 ms, over 1 s with 5 ms (the bomb refills);
	 * 1 to 4 passes. The time goes to competing with the bomb for a CPU. */
	for (;;) {
		r = cgk_signal_pass(run, sig, &fresh);
		/* Nothing new in the lists: look for what moved past them,
		 * unless settle() will, once the killed processes are gone. */
		if (r >= 0 && !fresh && !(sig == SIGKILL && settle_kill))
			r = cgk_signal_stragglers(run, sig, &fresh);
		if (r < 0 || !fresh || ++passes >= MAX_PASSES || cgk_now_ms() >= deadline)
			break;
	}
	if (r < 0)
		return r;
	if (fresh)
		return cgk_error_set(&run->err, -EAGAIN, "processes kept appearing after %u passes", passes);
	if (sig == SIGKILL && settle_kill)
		return settle(run, sig, deadline);
	return 0;
}

