/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kill as a state machine (the op): cgk_kill_start() resolves the
 * target, checks the guard rails, asks the confirm callback and sends the
 * first signal; what would block after that becomes a phase that
 * cgk_kill_op_step() serves when the op's epoll fd says so: a wait for the
 * subtree to empty (cgroup.events, or a v1 poll on the op's timer) before
 * each escalation and after the last signal, and CGK_REAP's wait for the
 * killed processes that free their memory themselves (their pidfds).
 * cgk_kill() and the other blocking entry points drive an op to its end.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>

#include "internal.h"

enum op_phase {
	OP_REAP,	/* killed processes finishing their exit (CGK_REAP) */
	OP_ESCALATE,	/* waiting to empty before escalation next_esc */
	OP_FINAL,	/* waiting to empty after the last signal */
	OP_DONE,
};

struct cgk_kill_op {
	struct cgk_target t;
	struct cgk_run run;
	struct cgk_boost boost;
	/* A blocking entry point's op: the boost lasts from start to finish,
	 * dropped in the waits, as a blocking call's did. Otherwise each
	 * start or step hands the caller's priority back. */
	bool blocking;
	enum op_phase phase;
	int result;		/* OP_DONE: what the kill returns */
	size_t next_esc;	/* escalations sent */
	int sent;		/* OP_REAP: how the signal phase ended */
	uint64_t start;		/* cgk_now_ms at the first signal */
	uint64_t reap_deadline;
	uint64_t next;		/* the timer's deadline, cgk_now_ms */
	struct cgk_wait wait;	/* OP_ESCALATE, OP_FINAL */
	int epfd, timerfd;
};

/* ---- the phases ---- */

static void op_done(cgk_kill_op *op, int r)
{
	struct cgk_run *run = &op->run;

	if (op->wait.events_fd >= 0)
		epoll_ctl(op->epfd, EPOLL_CTL_DEL, op->wait.events_fd, NULL);
	cgk_wait_end(&op->wait);
	cgk_pins_close(&run->exiting, op->epfd);
	cgk_kill_cleanup(run);
	if (r < 0)
		cgk_report_fail(run->rep, r, &run->err);
	cgk_error_free(&run->err);
	op->result = r;
	op->phase = OP_DONE;
}

static void wait_begin(cgk_kill_op *op, enum op_phase phase, uint64_t ms)
{
	cgk_wait_begin(&op->run, &op->wait, cgk_deadline_after(ms));
	if (op->wait.events_fd >= 0) {
		struct epoll_event ev = { .events = EPOLLPRI, .data.fd = op->wait.events_fd };

		/* Without the watch, the op's timer still looks at its deadline. */
		(void)epoll_ctl(op->epfd, EPOLL_CTL_ADD, op->wait.events_fd, &ev);
	}
	op->phase = phase;
}

static int wait_look(cgk_kill_op *op)
{
	int r = cgk_wait_look(&op->run, &op->wait);

	if (r == -EAGAIN)
		return r;
	if (op->wait.events_fd >= 0)
		epoll_ctl(op->epfd, EPOLL_CTL_DEL, op->wait.events_fd, NULL);
	cgk_wait_end(&op->wait);
	return cgk_kill_waited(&op->run, r);
}

/* The signals are over (r: how): the final wait, or the end. */
static void signals_done(cgk_kill_op *op, int r)
{
	struct cgk_run *run = &op->run;
	struct cgk_report *rep = run->rep;

	rep->signal_ms = cgk_now_ms() - op->start;
	cgk_kill_count_cgroups(run);
	if (r < 0)
		return op_done(op, r);
	if (rep->not_permitted)
		return op_done(op, cgk_error_set(&run->err, -EPERM, "%u process(es) could not be "
						 "signalled: not permitted (%u signalled)",
						 rep->not_permitted, rep->signalled));
	/* With --force on our own cgroup: we go last, like everyone else. */
	if (run->self_seen) {
		op_done(op, 0);
		kill(run->self, rep->signals[rep->n_signals - 1].signal);
		return;
	}
	if (!rep->emptied && run->opts->wait_ms)
		return wait_begin(op, OP_FINAL, run->opts->wait_ms);
	if (rep->emptied)
		rep->empty_ms = cgk_now_ms() - op->start;
	op_done(op, 0);
}

/* A signal phase ended (r: how): the escalation's wait, or the end. A
 * process that refused one signal refuses the next: no escalation, no
 * wait for what cannot go. */
static void signal_sent(cgk_kill_op *op, int r)
{
	struct cgk_run *run = &op->run;
	const struct cgk_options *opts = run->opts;

	if (r >= 0 && !run->self_seen && !run->rep->not_permitted &&
	    op->next_esc < opts->n_escalations)
		return wait_begin(op, OP_ESCALATE, opts->escalations[op->next_esc].after_ms);
	signals_done(op, r);
}

/* Send sig; with CGK_REAP, then wait for the killed processes that were
 * freeing their memory themselves (the reap lost the race to their exit),
 * so that the memory is back when the kill goes on. */
static void send(cgk_kill_op *op, int sig)
{
	struct cgk_run *run = &op->run;
	int r = cgk_kill_send(run, &op->boost, sig);

	if (!run->exiting.n || cgk_reap_watch(run, op->epfd) < 0) {
		cgk_pins_close(&run->exiting, op->epfd);
		return signal_sent(op, r);
	}
	op->sent = r;
	op->reap_deadline = cgk_deadline_after(CGK_SEND_BUDGET_MS);
	op->phase = OP_REAP;
}

static int step_reap(cgk_kill_op *op)
{
	struct cgk_run *run = &op->run;
	bool left = cgk_reap_left(run, op->epfd) > 0;
	bool cancelled = left && run->opts->cancel && *run->opts->cancel;
	int r = op->sent;

	if (left && !cancelled && cgk_now_ms() < op->reap_deadline)
		return -EAGAIN;
	cgk_pins_close(&run->exiting, op->epfd);
	if (r >= 0 && cancelled)
		r = cgk_error_set(&run->err, -ECANCELED, "interrupted while the killed processes exit");
	signal_sent(op, r);
	return 0;
}

static int step_escalate(cgk_kill_op *op)
{
	struct cgk_run *run = &op->run;
	int r = wait_look(op);

	if (r == -EAGAIN)
		return r;
	if (r == 0)
		signals_done(op, 0);
	else if (r == -ETIMEDOUT)
		send(op, run->opts->escalations[op->next_esc++].signal);
	else
		signals_done(op, cgk_error_wrap(&run->err, r, "cannot wait"));
	return 0;
}

static int step_final(cgk_kill_op *op)
{
	struct cgk_run *run = &op->run;
	int r = wait_look(op);

	if (r == -EAGAIN)
		return r;
	if (r == -ETIMEDOUT)
		r = cgk_kill_survivors(run, r);
	else if (r < 0)
		r = cgk_error_wrap(&run->err, r, "cannot wait for the cgroup to empty");
	if (run->rep->emptied)
		run->rep->empty_ms = cgk_now_ms() - op->start;
	op_done(op, r);
	return 0;
}

/* Phases until one has to wait (-EAGAIN) or the op is done. */
static int op_run(cgk_kill_op *op)
{
	for (;;) {
		int r;

		switch (op->phase) {
		case OP_REAP:
			r = step_reap(op);
			break;
		case OP_ESCALATE:
			r = step_escalate(op);
			break;
		case OP_FINAL:
			r = step_final(op);
			break;
		default:
			return op->result;
		}
		if (r == -EAGAIN)
			return r;
	}
}

/* ---- the timer: when the next step is due ---- */

static uint64_t op_next(const cgk_kill_op *op)
{
	const struct cgk_run *run = &op->run;
	uint64_t next;

	switch (op->phase) {
	case OP_REAP:
		next = op->reap_deadline;
		if (run->opts->cancel && cgk_now_ms() + CGK_REAP_SLICE_MS < next)
			next = cgk_now_ms() + CGK_REAP_SLICE_MS;
		return next;
	case OP_ESCALATE:
	case OP_FINAL:
		return cgk_wait_next(run, &op->wait);
	default:
		return 0;	/* done: readable at once, for good */
	}
}

/* Arm the timer for the next deadline: the fd is readable when it passes
 * (at once if it has: a time in the past), and not before, the timer's
 * expirations being cleared by the setting. */
static void op_arm(cgk_kill_op *op)
{
	uint64_t next = op_next(op);
	struct itimerspec its = { 0 };	/* disarmed */

	op->next = next;
	if (next != UINT64_MAX) {
		its.it_value.tv_sec = (time_t)(next / 1000);
		/* 0 would disarm it: 1 ns is as past as 0 */
		its.it_value.tv_nsec = (long)(next % 1000) * 1000000 + !next;
	}
	timerfd_settime(op->timerfd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* ---- the start ---- */

static void op_free(cgk_kill_op *op)
{
	cgk_closep(&op->timerfd);
	cgk_closep(&op->epfd);
	free(op);
}

/* The op's epoll set, with its timer in it: 0 or -errno. */
static int op_fds(cgk_kill_op *op)
{
	struct epoll_event ev = { .events = EPOLLIN };

	op->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (op->epfd < 0)
		return -errno;
	op->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (op->timerfd < 0)
		return -errno;
	ev.data.fd = op->timerfd;
	return epoll_ctl(op->epfd, EPOLL_CTL_ADD, op->timerfd, &ev) < 0 ? -errno : 0;
}

static int op_new(const char *shown, const cgk_options *opts, bool blocking, cgk_kill_op **ret)
{
	cgk_kill_op *op = calloc(1, sizeof(*op));
	int r;

	*ret = NULL;
	if (!op)
		return -ENOMEM;
	op->t = (struct cgk_target){ .fd = -1 };
	op->run = (struct cgk_run){ .opts = opts ?: &cgk_default_options, .t = &op->t,
				    .self = getpid(), .procfd = -1 };
	op->wait.events_fd = op->epfd = op->timerfd = -1;
	op->blocking = blocking;
	op->phase = OP_FINAL;	/* not done until op_done() */
	r = op_fds(op);
	if (r >= 0 && !(op->run.rep = cgk_report_new(shown)))
		r = -ENOMEM;
	if (r < 0) {
		op_free(op);
		return r;
	}
	*ret = op;
	return 0;
}

/* On the target resolved (r, how that went): the guard rails, the
 * confirm callback, the first signal; then the timer armed. */
static int op_begin(cgk_kill_op *op, int r)
{
	struct cgk_run *run = &op->run;

	if (r >= 0)
		r = cgk_kill_prepare(run);
	if (r >= 0)
		r = cgk_kill_confirm(run, &op->boost);
	if (r != 0) {
		op_done(op, r > 0 ? 0 : r);
	} else {
		op->start = cgk_now_ms();
		send(op, run->opts->signal);
		op_run(op);
	}
	if (!op->blocking)
		cgk_boost_end(&op->boost);
	op_arm(op);
	return 0;
}

static int start_path(const char *path, const cgk_options *opts, bool blocking,
		      cgk_kill_op **ret)
{
	int r = op_new(path, opts, blocking, ret);

	if (r < 0)
		return r;
	(*ret)->boost = cgk_boost_start(opts, true);
	return op_begin(*ret, cgk_target_open(path, &(*ret)->t, &(*ret)->run.err));
}

static int start_fd(int cgroup_dirfd, const cgk_options *opts, bool blocking,
		    cgk_kill_op **ret)
{
	char shown[32];
	int r;

	snprintf(shown, sizeof(shown), "fd %d", cgroup_dirfd);
	r = op_new(shown, opts, blocking, ret);
	if (r < 0)
		return r;
	(*ret)->boost = cgk_boost_start(opts, true);
	return op_begin(*ret, cgk_target_from_fd(cgroup_dirfd, &(*ret)->t, &(*ret)->run.err));
}

static int start_pid(pid_t pid, const cgk_options *opts, bool blocking, cgk_kill_op **ret)
{
	char shown[32];
	int r;

	snprintf(shown, sizeof(shown), "pid %d", (int)pid);
	r = op_new(shown, opts, blocking, ret);
	if (r < 0)
		return r;
	return op_begin(*ret, cgk_kill_resolve_pid(&(*ret)->run, pid, &(*ret)->boost));
}

CGK_EXPORT int cgk_kill_start(const char *path, const cgk_options *opts, cgk_kill_op **ret)
{
	return ret ? start_path(path, opts, false, ret) : -EINVAL;
}

CGK_EXPORT int cgk_kill_start_fd(int cgroup_dirfd, const cgk_options *opts, cgk_kill_op **ret)
{
	return ret ? start_fd(cgroup_dirfd, opts, false, ret) : -EINVAL;
}

CGK_EXPORT int cgk_kill_start_pid(pid_t pid, const cgk_options *opts, cgk_kill_op **ret)
{
	return ret ? start_pid(pid, opts, false, ret) : -EINVAL;
}

/* ---- stepping and the end ---- */

CGK_EXPORT int cgk_kill_op_fd(const cgk_kill_op *op)
{
	return op ? op->epfd : -EINVAL;
}

CGK_EXPORT uint64_t cgk_kill_op_timeout(const cgk_kill_op *op)
{
	uint64_t now = cgk_now_ms();

	if (!op || op->phase == OP_DONE)
		return 0;
	if (op->next == UINT64_MAX)
		return UINT64_MAX;
	return op->next > now ? op->next - now : 0;
}

CGK_EXPORT int cgk_kill_op_step(cgk_kill_op *op)
{
	int r;

	if (!op)
		return -EINVAL;
	if (op->phase == OP_DONE)
		return op->result;
	/* A wait's looks run at the caller's ordinary priority, as in
	 * cgk_kill(); only an escalation's signal is raised. */
	if (!op->blocking) {
		op->boost = cgk_boost_start(op->run.opts, false);
		cgk_boost_drop(&op->boost);
	}
	r = op_run(op);
	if (!op->blocking)
		cgk_boost_end(&op->boost);
	op_arm(op);
	return r;
}

/* An op not over yet, abandoned: no further signal, no wait. The freezer
 * backends thaw within their signal phase, so nothing is left frozen. */
static void op_abandon(cgk_kill_op *op)
{
	struct cgk_run *run = &op->run;
	const char *what = op->phase == OP_REAP ? "the killed processes exit" :
			   "waiting for the cgroup to empty";

	if (op->phase != OP_REAP)
		run->rep->waited = true;
	if (op->phase != OP_FINAL) {
		run->rep->signal_ms = cgk_now_ms() - op->start;
		cgk_kill_count_cgroups(run);
	}
	op_done(op, cgk_error_set(&run->err, -ECANCELED, "abandoned while %s", what));
}

CGK_EXPORT int cgk_kill_op_finish(cgk_kill_op *op, cgk_report **report)
{
	int r;

	if (report)
		*report = NULL;
	if (!op)
		return -EINVAL;
	if (op->phase != OP_DONE)
		op_abandon(op);
	cgk_boost_end(&op->boost);
	r = op->result;
	if (report)
		*report = op->run.rep;
	else
		cgk_report_free(op->run.rep);
	op_free(op);
	return r;
}

/* ---- the blocking entry points: an op driven to its end ---- */

static int run_blocking(int r, cgk_kill_op *op, cgk_report **report)
{
	if (r < 0) {
		if (report)
			*report = NULL;
		return r;
	}
	while (cgk_kill_op_step(op) == -EAGAIN) {
		struct pollfd pfd = { .fd = op->epfd, .events = POLLIN };
		uint64_t ms = cgk_kill_op_timeout(op);

		poll(&pfd, 1, ms > INT32_MAX ? -1 : (int)ms);
	}
	return cgk_kill_op_finish(op, report);
}

CGK_EXPORT int cgk_kill(const char *path, const cgk_options *opts, cgk_report **ret)
{
	cgk_kill_op *op;
	int r = start_path(path, opts, true, &op);

	return run_blocking(r, op, ret);
}

CGK_EXPORT int cgk_kill_fd(int cgroup_dirfd, const cgk_options *opts, cgk_report **ret)
{
	cgk_kill_op *op;
	int r = start_fd(cgroup_dirfd, opts, true, &op);

	return run_blocking(r, op, ret);
}

CGK_EXPORT int cgk_kill_pid(pid_t pid, const cgk_options *opts, cgk_report **ret)
{
	cgk_kill_op *op;
	int r = start_pid(pid, opts, true, &op);

	return run_blocking(r, op, ret);
}
