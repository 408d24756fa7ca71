/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * No freezer: signal what the process lists show, again and again, until a
 * pass finds nothing that has not been signalled. Works on any hierarchy
 * (v1 pids, name=systemd, ..., or v2) and with any signal.
 *
 * Where the target has pids.max (v1 pids hierarchy, or v2 with the pids
 * controller enabled above it) it is clamped to 0 while the passes run, so a
 * fork bomb cannot grow; the limit is hierarchical, so the clamp on the
 * target bounds the whole subtree. The old value is put back on every path.
 * The clamp is for SIGKILL only: a graceful signal must not break forks.
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
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define LOOP_BUDGET_MS 10000	/* the whole send */
#define MAX_PASSES 1000		/* passes that keep finding new processes */
#define STALL_MS 200		/* SIGKILL: no process left runs or leaves */
#define SETTLE_DELAY_MAX_MS 16

static int loop_probe(struct cgk_run *run, int sig)
{
	(void)run;
	(void)sig;
	return 0;
}

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

static int live_visit(struct cgk_run *run, int cgfd, const char *rel, void *arg)
{
	struct live *live = arg;
	struct cgk_pidvec pids = { 0 };
	int r = cgk_read_procs(cgfd, &pids);

	/* Vanished, or a threaded child: its domain lists its processes. */
	if (r == -ENOENT || (r == -EOPNOTSUPP && *rel))
		return 0;
	for (size_t i = 0; r >= 0 && i < pids.n; i++) {
		if (pids.v[i] == 0 || pids.v[i] == live->self)
			continue;
		live->n++;
		if (live->look && !live->running)
			live->running = is_running(run->procfd, pids.v[i]);
	}
	cgk_pidvec_free(&pids);
	return r;
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
		int r = cgk_tree_walk(run, live_visit, &live);

		if (r < 0)
			return cgk_fail(run, r, "cannot list the processes");
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

int cgk_loop_passes(struct cgk_run *run, int sig, uint64_t deadline, bool settle_kill)
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
		return cgk_fail(run, -EAGAIN, "processes kept appearing after %u passes", passes);
	if (sig == SIGKILL && settle_kill)
		return settle(run, sig, deadline);
	return 0;
}

struct clamp {
	struct cgk_run *run;
	bool active;		/* signals blocked until the restore; mask: the caller's */
	char old[32];
	sigset_t mask;
};

/* pids.max to 0, remembering the old value; no pids.max, no clamp. A clamp
 * that cannot be set is not fatal: the passes still do the work. */
static int clamp_set(struct clamp *c)
{
	_cleanup_free_ char *buf = NULL;
	int fd = c->run->t->fd;
	int r = cgk_read_file_at(fd, "pids.max", &buf, NULL);
	bool left;
	size_t n;

	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	n = strcspn(buf, "\n");
	if (n == 0 || n >= sizeof(c->old))
		return -EINVAL;
	memcpy(c->old, buf, n);
	c->old[n] = '\0';
	/* 0 with our mark: a run of ours clamped it and was killed before it
	 * put back the value the mark holds; ours to restore. Without the
	 * mark it is someone else's clamp: leave it be. */
	left = strcmp(c->old, "0") == 0;
	if (left && cgk_mark_get(fd, CGK_MARK_PIDS_MAX, c->old, sizeof(c->old)) < 0)
		return 0;
	/* No signal but SIGKILL may end us before the restore, and the old
	 * value is in the mark, set first, if SIGKILL does. */
	cgk_signals_block(&c->mask);
	if (!left) {
		cgk_mark_set(fd, CGK_MARK_PIDS_MAX, c->old);
		r = cgk_write_file_at(fd, "pids.max", "0");
		if (r < 0) {
			cgk_mark_clear(fd, CGK_MARK_PIDS_MAX);
			cgk_signals_restore(&c->mask);
			return r;
		}
	}
	c->active = true;
	return 0;
}

static int clamp_restore(struct clamp *c)
{
	int r;

	if (!c->active)
		return 0;
	r = cgk_write_file_at(c->run->t->fd, "pids.max", c->old);
	if (r == 0)
		cgk_mark_clear(c->run->t->fd, CGK_MARK_PIDS_MAX);
	/* Vanished with its cgroup: nothing left to restore. */
	if (cgk_removed(r))
		r = 0;
	if (r == 0) {
		c->active = false;
		cgk_signals_restore(&c->mask);
	}
	return r;
}

static void clamp_cleanup(struct clamp *c)
{
	/* Not restored: the mark stays for a later run to find. */
	if (clamp_restore(c) < 0)
		cgk_signals_restore(&c->mask);
}

static int loop_send(struct cgk_run *run, int sig)
{
	__attribute__((cleanup(clamp_cleanup))) struct clamp clamp = { .run = run };
	uint64_t deadline = cgk_now_ms() + LOOP_BUDGET_MS;
	int r;

	/* Only a kill needs the tree to stop growing; a HUP meant as a
	 * reload must not make the service's fork() fail meanwhile. */
	if (sig == SIGKILL)
		(void)clamp_set(&clamp);
	r = cgk_loop_passes(run, sig, deadline, true);
	int t = clamp_restore(&clamp);
	if (t < 0 && r >= 0)
		r = cgk_fail(run, t, "cannot restore pids.max to %s", clamp.old);
	return r;
}

const struct cgk_backend_ops cgk_backend_loop = {
	.id = CGK_BACKEND_LOOP,
	.probe = loop_probe,
	.send = loop_send,
};
