/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroup v1 freezer: FROZEN into freezer.state of the target (the whole
 * subtree follows), wait, bounded, until it reads FROZEN, signal every
 * process once, THAWED. A frozen task can neither fork nor move itself, so a
 * pass over a settled freeze sees every process. SIGKILL also passes once
 * before the freeze, as on v2.
 *
 * Unlike v2, a v1-frozen task does not act on SIGKILL until it is thawed,
 * so the thaw comes after the signal, and cgroups frozen on their own below
 * the target (or the target itself, frozen by someone else) must be thawed
 * too, or their tasks never die.
 *
 * What is restored afterwards:
 * - SIGKILL: nothing stays frozen. Every cgroup of the subtree is thawed,
 *   also those a user had frozen: they hold only dying tasks, and a frozen
 *   cgroup left behind would freeze whatever enters it next.
 * - Any other signal: the user's freezer state is kept. A target frozen by
 *   someone else stays frozen, and descendants frozen on their own are not
 *   touched; their tasks find the signal pending when they are thawed.
 *
 * FREEZING can fail to settle (tasks in D state, or forking fast): the wait
 * is bounded; for signals other than SIGKILL the target is then thawed and
 * frozen again a few times. Then the passes go on over a partial freeze.
 * A partial freeze is not a complete listing, so after the thaw another
 * pass (and, if it found anything, another round) runs, and after SIGKILL
 * the passes go on while the killed processes leave (see backend-loop.c).
 */
#include <fcntl.h>
#include <string.h>

#include "internal.h"

#define MAX_ROUNDS 64		/* freeze, passes, thaw, check */
#define SETTLE_MS 500		/* wait for FROZEN, per attempt */
#define FREEZE_TRIES 3
#define POLL_MAX_MS 32

static int v1_probe(struct cgk_run *run, int sig)
{
	(void)sig;
	if (run->t->version != 1 || !cgk_has_controller(run->t->controllers, "freezer"))
		return -EOPNOTSUPP;
	if (faccessat(run->t->fd, "freezer.state", W_OK, 0) < 0)
		return -errno;
	return 0;
}

struct v1 {
	struct cgk_run *run;
	int sig;
	bool user_frozen;	/* the target was frozen before we came */
	bool touched;		/* we wrote FROZEN and have not thawed since */
	bool blocked;		/* signals blocked until the thaw; mask: the caller's */
	sigset_t mask;
};

/* THAWED into every cgroup of the subtree that is not THAWED, parents first
 * (once the target is thawed, only self-frozen descendants remain). Goes on
 * past failures, keeping the first. */
static int thaw_visit(struct cgk_run *run, int cgfd, const char *rel, void *arg)
{
	int *err = arg;
	int s = cgk_freezer_state(cgfd);

	(void)run;
	(void)rel;
	/* Removed meanwhile: nothing left to thaw there. */
	if (s == CGK_THAWED || cgk_removed(s))
		return 0;
	if (s >= 0)
		s = cgk_write_file_at(cgfd, "freezer.state", "THAWED");
	if (s < 0 && !cgk_removed(s) && *err == 0)
		*err = s;
	return 0;
}

static int thaw(struct v1 *v)
{
	int r = 0;

	if (!v->touched)
		return 0;
	if (v->sig == SIGKILL) {
		int w = cgk_tree_walk(v->run, thaw_visit, &r);

		if (r == 0)
			r = w;
	} else if (!v->user_frozen) {
		r = cgk_write_file_at(v->run->t->fd, "freezer.state", "THAWED");
	}
	/* The target went away with its tasks: nothing left frozen. */
	if (cgk_removed(r))
		r = 0;
	if (r == 0)
		v->touched = false;
	if (r == 0 && v->blocked) {
		cgk_mark_clear(v->run->t->fd, CGK_MARK_FROZEN);
		cgk_signals_restore(&v->mask);
		v->blocked = false;
	}
	return r;
}

static void v1_cleanup(struct v1 *v)
{
	(void)thaw(v);
	/* Not thawed: the mark stays for a later run to find. */
	if (v->blocked)
		cgk_signals_restore(&v->mask);
}

/* FROZEN into the target. No signal but SIGKILL may end us from here to the
 * thaw: the subtree would stay frozen, and so would whatever joins it later.
 * The mark, set first, tells the next run if SIGKILL did. */
static int write_frozen(struct v1 *v)
{
	int fd = v->run->t->fd;
	int r;

	if (!v->blocked) {
		cgk_signals_block(&v->mask);
		v->blocked = true;
	}
	if (!v->user_frozen)
		cgk_mark_set(fd, CGK_MARK_FROZEN, "1");
	r = cgk_write_file_at(fd, "freezer.state", "FROZEN");
	if (r < 0 && !v->user_frozen)
		cgk_mark_clear(fd, CGK_MARK_FROZEN);
	return r;
}

/* Poll freezer.state with backoff until FROZEN (1) or the deadline (0). */
static int state_frozen(int cgfd, uint64_t deadline)
{
	unsigned delay = 1;

	for (;;) {
		int s = cgk_freezer_state(cgfd);

		if (s < 0)
			return s;
		if (s == CGK_FROZEN)
			return 1;
		if (cgk_now_ms() >= deadline)
			return 0;
		cgk_sleep_ms(delay);
		if (delay < POLL_MAX_MS)
			delay *= 2;
	}
}

/* Freeze the target; *settled tells whether FROZEN was reached. When it
 * stays FREEZING, thaw, let the tasks run a moment, retry (not for SIGKILL);
 * in the end leave it freezing (most tasks stopped is better than none). */
static int freeze(struct v1 *v, unsigned settle_ms, uint64_t deadline, bool *settled)
{
	int fd = v->run->t->fd;

	*settled = false;
	for (unsigned try = 0; try < FREEZE_TRIES; try++) {
		uint64_t until = cgk_now_ms() + settle_ms;
		int r = write_frozen(v);

		if (r < 0)
			return r;
		v->touched = true;
		r = state_frozen(fd, until < deadline ? until : deadline);
		if (r != 0) {
			*settled = r > 0;
			return r < 0 ? r : 0;
		}
		/* SIGKILL makes do with a partial freeze (passes, thaw, passes):
		 * a thaw to retry would set a fork bomb free again. */
		if (v->sig == SIGKILL || try + 1 == FREEZE_TRIES || cgk_now_ms() >= deadline)
			break;
		r = cgk_write_file_at(fd, "freezer.state", "THAWED");
		if (r < 0)
			return r;
		cgk_sleep_ms(2u << try);
	}
	return 0;
}

int cgk_v1_freeze_send(struct cgk_run *run, int sig, unsigned settle_ms)
{
	__attribute__((cleanup(v1_cleanup))) struct v1 v = { .run = run, .sig = sig };
	uint64_t deadline = cgk_now_ms() + CGK_SEND_BUDGET_MS;
	bool settled = false;
	unsigned rounds = 0;
	int r = cgk_freezer_self_freezing(run->t->fd);

	if (r < 0)
		return cgk_error_set(&run->err, r, "cannot read freezer.state");
	/* Frozen with our mark: left by a run of ours that was killed before
	 * its thaw, so ours to thaw, not the user's. */
	v.user_frozen = r && !cgk_marked(run->t->fd, CGK_MARK_FROZEN);
	/* A killed task stays killed: the first pass need not wait for the
	 * freeze. One that has not died yet freezes on its way out and dies
	 * at the thaw, which after SIGKILL covers the whole subtree on every
	 * path, a failed pass included. */
	if (sig == SIGKILL) {
		v.touched = true;
		r = cgk_signal_pass(run, SIGKILL, NULL);
		if (r < 0)
			return r;
	}

	for (;;) {
		unsigned fresh;

		r = freeze(&v, settle_ms, deadline, &settled);
		/* Emptied by the first pass and removed by its manager. */
		if (sig == SIGKILL && cgk_removed(r))
			return 0;
		if (r < 0)
			return cgk_error_set(&run->err, r, "cannot write FROZEN to freezer.state");
		/* Frozen, nothing forks or moves itself: one pass sees all. */
		r = settled ? cgk_signal_pass(run, sig, NULL) :
			      cgk_passes(run, sig, deadline, false);
		if (r < 0)
			return r;
		r = thaw(&v);
		if (r < 0)
			return cgk_error_wrap(&run->err, r, "cannot write THAWED to freezer.state");
		/* A settled freeze listed everything. Killed tasks fork no more;
		 * what a handler forks after the thaw is new, as with the v2
		 * freezer: not signalled. */
		if (settled)
			break;
		r = cgk_signal_pass(run, sig, &fresh);
		if (r < 0)
			return r;
		if (!fresh)
			break;
		if (++rounds >= MAX_ROUNDS || cgk_now_ms() >= deadline)
			return cgk_error_set(&run->err, -EAGAIN, "processes kept appearing after %u rounds",
					rounds);
	}
	/* Thawed after a partial freeze: catch what dying parents still fork. */
	if (!settled && sig == SIGKILL) {
		r = cgk_passes(run, sig, deadline, true);
		if (r < 0)
			return r;
	}
	if (sig == SIGKILL) {
		_cleanup_free_ char *buf = NULL;

		/* Our thaw cannot undo a freeze from above the target, and v1-frozen
		 * tasks do not die: say so instead of timing out mutely. */
		if (cgk_read_file_at(run->t->fd, "freezer.parent_freezing", &buf, NULL) == 0 &&
		    buf[0] == '1')
			return cgk_error_set(&run->err, -EBUSY,
					"signalled, but an ancestor cgroup is frozen; "
					"its tasks die only once it is thawed");
	}
	return 0;
}

static int v1_send(struct cgk_run *run, int sig)
{
	return cgk_v1_freeze_send(run, sig, SETTLE_MS);
}

const struct cgk_backend_ops cgk_backend_v1_freeze = {
	.id = CGK_BACKEND_V1_FREEZE,
	.probe = v1_probe,
	.send = v1_send,
};
