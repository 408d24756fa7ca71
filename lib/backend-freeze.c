/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroup v2 freezer (Linux 5.2+): freeze the subtree, signal every process
 * once, thaw. A frozen task cannot fork or move itself, so a pass over the
 * frozen tree sees every process; frozen tasks still die from SIGKILL.
 *
 * Freezing thousands of runnable tasks takes as long as giving each a CPU
 * once, so SIGKILL does not wait for it: a first pass runs before the
 * freeze write, more run while the freeze spreads (a killed task forks no
 * more), until the subtree is empty, or is frozen and a pass after that
 * finds nothing new. Other signals wait for the freeze (bounded), then one
 * pass sees everything. A freeze that does not settle in time is no error:
 * passes go on, and go on after the thaw.
 */
#include <fcntl.h>
#include <poll.h>
#include <string.h>

#include "internal.h"

#define FREEZE_WAIT_MS 1000

static int freeze_probe(struct cgk_run *run, int sig)
{
	(void)sig;
	if (run->t->version != 2)
		return -EOPNOTSUPP;
	if (faccessat(run->t->fd, "cgroup.freeze", W_OK, 0) < 0)
		return -errno;
	return 0;
}

/* Wait, bounded, for "frozen 1"; tasks in D state or forking can delay it. */
static bool events_frozen(int evfd)
{
	uint64_t deadline = cgk_now_ms() + FREEZE_WAIT_MS;
	int frozen;

	while ((frozen = cgk_events_value(evfd, "frozen")) == 0) {
		struct pollfd pfd = { .fd = evfd, .events = POLLPRI };
		uint64_t now = cgk_now_ms();

		if (now >= deadline)
			return false;
		poll(&pfd, 1, (int)(deadline - now));
	}
	return frozen == 1;
}

/*
 * SIGKILL while the freeze spreads. True once settled: the subtree was
 * empty, or frozen before a pass that found nothing new (a frozen task
 * neither forks nor moves). Passes follow each other while they find new
 * processes. After one that finds none, every process it listed has
 * SIGKILL pending and cannot fork any more (fork fails with a fatal signal
 * pending): what is left dies or freezes, and cgroup.events says when, so
 * the next pass waits for "frozen 1" instead of walking the tree again and
 * again (a twentieth of a second a walk for 1,000 cgroups). False if for
 * FREEZE_WAIT_MS nothing new was found and cgroup.events did not change (a
 * task in D state, or one that dodges the walk without being frozen), or
 * at the deadline: the caller then thaws and goes on with loop passes.
 */
static bool kill_freezing(struct cgk_run *run, int evfd, uint64_t deadline, int *r)
{
	uint64_t now = cgk_now_ms(), quiet_since = now;
	bool pass_due = true;

	for (;;) {
		int frozen = cgk_events_value(evfd, "frozen");
		int populated = cgk_events_value(evfd, "populated");
		struct pollfd pfd = { .fd = evfd, .events = POLLPRI };
		uint64_t until;

		/* ENODEV through our fd: removed, which only an empty cgroup can be. */
		if (populated == 0 || populated == -ENODEV)
			return true;
		if (pass_due || frozen == 1) {
			unsigned fresh = 0;

			*r = cgk_signal_pass(run, SIGKILL, &fresh);
			if (*r < 0 || (frozen == 1 && !fresh))
				return *r >= 0;
			pass_due = fresh > 0;
			now = cgk_now_ms();
			if (fresh)
				quiet_since = now;
		}
		until = quiet_since + FREEZE_WAIT_MS < deadline ? quiet_since + FREEZE_WAIT_MS :
								   deadline;
		if (now >= until)
			return false;
		/* A change means tasks still leave or freeze: not stuck. */
		if (poll(&pfd, 1, pass_due ? 1 : (int)(until - now)) > 0)
			quiet_since = cgk_now_ms();
		now = cgk_now_ms();
	}
}

static int freeze_send(struct cgk_run *run, int sig)
{
	int r = cgk_freeze_value(run->t->fd);
	/* Frozen with our mark: left by a run of ours that was killed before
	 * its thaw (SIGKILL cannot wait), so ours to thaw, not the user's. */
	bool was_frozen = r == 1 && !cgk_marked(run->t->fd, CGK_MARK_FROZEN);
	uint64_t deadline = cgk_now_ms() + CGK_SEND_BUDGET_MS;
	_cleanup_close_ int evfd = -1;
	sigset_t mask;
	bool settled;

	if (r < 0)
		return cgk_error_set(&run->err, r, "cannot read cgroup.freeze");
	if (!was_frozen) {
		/* A killed task stays killed, so SIGKILL need not wait for the
		 * freeze write, which wakes every task (73 ms for 10,000) and
		 * takes 2.7 ms on a 100-level chain. What forks meanwhile, the
		 * passes under the freeze find. */
		if (sig == SIGKILL && (r = cgk_signal_pass(run, SIGKILL, NULL)) < 0)
			return r;
		/* No signal but SIGKILL may end us between freeze and thaw:
		 * the subtree would stay frozen, and so would whatever joins
		 * it later. The mark, set first, tells the next run if SIGKILL
		 * did. */
		cgk_signals_block(&mask);
		cgk_mark_set(run->t->fd, CGK_MARK_FROZEN, "1");
		r = cgk_write_file_at(run->t->fd, "cgroup.freeze", "1");
		if (r < 0) {
			cgk_mark_clear(run->t->fd, CGK_MARK_FROZEN);
			cgk_signals_restore(&mask);
		}
		/* Emptied by that pass and removed by its manager. */
		if (sig == SIGKILL && cgk_removed(r))
			return 0;
		if (r < 0)
			return cgk_error_set(&run->err, r, "cannot freeze the cgroup");
	}
	evfd = openat(run->t->fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
	if (evfd < 0) {
		settled = false;
		r = cgk_passes(run, sig, deadline, false);
	} else if (sig == SIGKILL) {
		settled = kill_freezing(run, evfd, deadline, &r);
	} else {
		/* Nothing in a frozen subtree forks or moves itself: one pass
		 * sees every process, as the kernel's own single walk does. */
		settled = events_frozen(evfd);
		r = settled ? cgk_signal_pass(run, sig, NULL) :
			      cgk_passes(run, sig, deadline, false);
	}

	/* Thaw on every path; a cgroup the user had frozen stays frozen. A
	 * cgroup already removed (emptied by SIGKILL while frozen, then
	 * rmdir'ed by its manager) has nothing left to thaw. */
	if (!was_frozen) {
		int t = cgk_write_file_at(run->t->fd, "cgroup.freeze", "0");

		if (t == 0)
			cgk_mark_clear(run->t->fd, CGK_MARK_FROZEN);
		cgk_signals_restore(&mask);
		if (cgk_removed(t))
			t = 0;
		if (t < 0 && r >= 0)
			r = cgk_error_set(&run->err, t, "cannot thaw the cgroup");
	}
	/* Not all frozen: a dying parent may have forked after its pass. */
	if (r >= 0 && !settled)
		r = cgk_passes(run, sig, deadline, true);
	return r;
}

const struct cgk_backend_ops cgk_backend_freeze = {
	.id = CGK_BACKEND_FREEZE,
	.probe = freeze_probe,
	.send = freeze_send,
};
