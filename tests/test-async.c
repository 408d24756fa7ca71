// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The kill driven from an event loop (cgk_kill_start(), cgk_kill_op_*()):
 * the start returns while an escalation is pending; the fd is readable
 * when a step is due and not before (cgk_kill_op_timeout() says when);
 * step returns -EAGAIN, then the result, again and again; two ops run at
 * once and end independently; an op finished early sends nothing more
 * and leaves nothing frozen; the progress callback runs inside step; the
 * cancel flag ends a wait; CGK_REAP's wait is a phase on pidfds; a refused
 * target gives an op that is over at once. On v2 and on the v1 freezer and
 * pids hierarchies.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cgkill.h"
#include "support/cgfile.h"
#include "support/internals.h"
#include "support/kill.h"
#include "support/record.h"
#include "support/sandbox.h"
#include "support/scene.h"
#include "support/spawn.h"
#include "support/tap.h"

/* The escalation the tests wait out: long beside a start, which is a few
 * reads and one signal phase, even on a loaded machine. */
#define ESCALATE_MS 4000
/* How late a loaded machine may wake us: a bound, not a guess of speed. */
#define SLACK_MS 3000

static bool readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

/* Step op until it is over, waiting on its fd (bounded): the result, or
 * -ETIME if it did not end within limit_ms. */
static int drive(cgk_kill_op *op, unsigned limit_ms)
{
	uint64_t end = sb_now_ms() + limit_ms;
	int r;

	while ((r = cgk_kill_op_step(op)) == -EAGAIN) {
		if (sb_now_ms() > end)
			return -ETIME;
		readable(cgk_kill_op_fd(op), 1000);
	}
	return r;
}

/* ---- the start returns at once; the fd says when ---- */

/* v2, with no progress callback nor cancel flag: until the deadline that
 * cgk_kill_op_timeout() gives, the fd wakes only for a change of
 * cgroup.events (the thaw of a freeze backend shows there, late), each
 * step then -EAGAIN; after it, it is readable. */
static void quiet_until_deadline(cgk_kill_op *op, const char *what)
{
	uint64_t timeout = cgk_kill_op_timeout(op), end = sb_now_ms() + timeout;
	unsigned wakes = 0, ended = 0;

	while (sb_now_ms() + 500 < end) {
		if (!readable(cgk_kill_op_fd(op), (int)(end - sb_now_ms() - 500)))
			continue;
		wakes++;
		ended += cgk_kill_op_step(op) != -EAGAIN;
	}
	ok(timeout > 1000 && wakes <= 2 && !ended, "%s: the fd quiet until the deadline "
	   "(%llu ms): %u wakes, each a step under way", what, (unsigned long long)timeout,
	   wakes);
	ok(readable(cgk_kill_op_fd(op), 500 + SLACK_MS),
	   "%s: the fd is readable once the deadline passes", what);
}

static void test_start(const char *box, enum cgk_backend b, const char *what)
{
	cgk_options *o = opts_escalate(b, SIGTERM, KILL_WAIT_MS, ESCALATE_MS, SIGKILL);
	cgk_kill_op *op = NULL;
	cgk_report *rep = NULL;
	struct scene s;
	uint64_t t0, start_ms, timeout, done_ms;
	pid_t ign;
	int r;

	if (!scene_start(&s, box, what) || !ok((ign = term_ignorer(s.target)) > 0,
					       "%s: a process that ignores TERM", what))
		goto out;
	t0 = sb_now_ms();
	r = cgk_kill_start(s.target, o, &op);
	start_ms = sb_now_ms() - t0;
	if (!is_int(r, 0, "%s: cgk_kill_start", what) || !ok(op, "%s: an op", what))
		goto out;
	ok(start_ms < ESCALATE_MS / 2, "%s: the start returned in %llu ms, the escalation "
	   "pending (%u ms)", what, (unsigned long long)start_ms, ESCALATE_MS);
	ok(cgk_kill_op_fd(op) >= 0, "%s: an fd", what);
	timeout = cgk_kill_op_timeout(op);
	/* v1 polls with backoff: its fd wakes before the deadline, often. */
	ok(timeout <= ESCALATE_MS && (timeout > 0 || sb_version_of(s.target) == 1),
	   "%s: cgk_kill_op_timeout %llu ms, at most the escalation's", what,
	   (unsigned long long)timeout);
	is_int(cgk_kill_op_step(op), -EAGAIN, "%s: a step before the deadline: -EAGAIN", what);
	ok(sb_alive(ign), "%s: the TERM-ignorer lives during the escalation's wait", what);
	if (sb_version_of(s.target) == 2)
		quiet_until_deadline(op, what);
	r = drive(op, ESCALATE_MS + KILL_WAIT_MS + SLACK_MS);
	done_ms = sb_now_ms() - t0;
	is_int(r, 0, "%s: the kill ends with 0", what);
	ok(done_ms >= ESCALATE_MS, "%s: ... after the escalation (%llu ms)", what,
	   (unsigned long long)done_ms);
	ok(sb_killed_by(ign, SIGKILL, 5000), "%s: the ignorer died of the escalation's KILL", what);
	ok(readable(cgk_kill_op_fd(op), 0), "%s: the fd of an op that is over is readable", what);
	is_int(cgk_kill_op_timeout(op), 0, "%s: its timeout is 0", what);
	is_int(cgk_kill_op_step(op), 0, "%s: a later step says the same", what);
	is_int(cgk_kill_op_finish(op, &rep), 0, "%s: finish returns the result", what);
	op = NULL;
	ok(rep && cgk_report_n_signals(rep) == 2 && rep_signal(rep, 0) == SIGTERM &&
	   rep_signal(rep, 1) == SIGKILL && cgk_report_emptied(rep),
	   "%s: the report: TERM, KILL, emptied", what);
out:
	cgk_kill_op_finish(op, NULL);
	cgk_report_free(rep);
	cgk_options_free(o);
	scene_end(&s);
}

/* ---- two ops in one loop ---- */

static void test_two(const char *box)
{
	cgk_options *slow = opts_escalate(CGK_BACKEND_AUTO, SIGTERM, KILL_WAIT_MS, ESCALATE_MS,
					  SIGKILL);
	cgk_options *fast = opts_new(CGK_BACKEND_AUTO, SIGKILL, 0, KILL_WAIT_MS, NULL);
	cgk_kill_op *op[2] = { NULL, NULL };
	uint64_t t0, done[2] = { 0, 0 };
	int res[2] = { 1, 1 }, ep = epoll_create1(EPOLL_CLOEXEC);
	struct scene a, b;
	pid_t ign, pids[3];

	if (!scene_start(&a, box, "two-slow") | !scene_start(&b, box, "two-fast") ||
	    !ok((ign = term_ignorer(a.target)) > 0, "two: a TERM-ignorer in A") ||
	    !is_int(sb_spawn_n(3, SB_SLEEP, NULL, b.target, pids), 0, "two: 3 sleepers in B"))
		goto out;
	t0 = sb_now_ms();
	if (!is_int(cgk_kill_start(a.target, slow, &op[0]), 0, "two: start A (TERM, then KILL "
		    "after %u ms)", ESCALATE_MS) ||
	    !is_int(cgk_kill_start(b.target, fast, &op[1]), 0, "two: start B (KILL)"))
		goto out;
	for (int i = 0; i < 2; i++)
		epoll_ctl(ep, EPOLL_CTL_ADD, cgk_kill_op_fd(op[i]),
			  &(struct epoll_event){ .events = EPOLLIN, .data.u32 = i });
	while ((!done[0] || !done[1]) && sb_now_ms() - t0 < ESCALATE_MS + KILL_WAIT_MS + SLACK_MS) {
		struct epoll_event ev[2];
		int n = epoll_wait(ep, ev, 2, 1000);

		for (int k = 0; k < n; k++) {
			unsigned i = ev[k].data.u32;

			if (done[i] || (res[i] = cgk_kill_op_step(op[i])) == -EAGAIN)
				continue;
			done[i] = sb_now_ms() - t0;
			epoll_ctl(ep, EPOLL_CTL_DEL, cgk_kill_op_fd(op[i]), NULL);
		}
	}
	is_int(res[1], 0, "two: B's kill ends with 0");
	ok(done[1] && done[1] < ESCALATE_MS / 2, "two: B ended in %llu ms, A's escalation "
	   "(%u ms) pending", (unsigned long long)done[1], ESCALATE_MS);
	is_int(sb_count_killed(pids, 3, SIGKILL, 5000), 3, "two: B's sleepers died of KILL");
	is_int(res[0], 0, "two: A's kill ends with 0");
	ok(done[0] >= ESCALATE_MS, "two: A ended after its escalation (%llu ms)",
	   (unsigned long long)done[0]);
	ok(sb_killed_by(ign, SIGKILL, 5000), "two: A's ignorer died of KILL");
out:
	for (int i = 0; i < 2; i++)
		cgk_kill_op_finish(op[i], NULL);
	close(ep);
	cgk_options_free(slow);
	cgk_options_free(fast);
	scene_end(&a);
	scene_end(&b);
}

/* ---- an op finished early ---- */

static bool frozen(const char *dir)
{
	return sb_version_of(dir) == 2 ? sb_file_has(dir, "cgroup.freeze", "1") :
	       sb_file_has(dir, "freezer.state", "FROZEN") ||
	       sb_file_has(dir, "freezer.state", "FREEZING");
}

static void test_abandon(const char *box, enum cgk_backend b, const char *what)
{
	cgk_options *o = opts_escalate(b, SIGTERM, KILL_WAIT_MS, ESCALATE_MS / 2, SIGKILL);
	cgk_kill_op *op = NULL;
	cgk_report *rep = NULL;
	struct scene s;
	pid_t ign;
	int r;

	if (!scene_start(&s, box, what) || !ok((ign = term_ignorer(s.target)) > 0,
					       "%s: a process that ignores TERM", what))
		goto out;
	if (!is_int(cgk_kill_start(s.target, o, &op), 0, "%s: start", what))
		goto out;
	r = cgk_kill_op_finish(op, &rep);
	op = NULL;
	is_int(r, -ECANCELED, "%s: finish under way: -ECANCELED", what);
	ok(rep && cgk_report_error(rep) == -ECANCELED &&
	   strstr(cgk_report_message(rep), "abandoned"),
	   "%s: the report says so (%s)", what, rep ? cgk_report_message(rep) : "no report");
	ok(rep && cgk_report_n_signals(rep) == 1, "%s: one signal sent (TERM)", what);
	ok(!frozen(s.target), "%s: nothing frozen", what);
	sb_sleep_ms(ESCALATE_MS / 2 + 1000);
	ok(sb_alive(ign), "%s: the ignorer lives past the escalation's time: no KILL", what);
	ok(!frozen(s.target), "%s: still nothing frozen", what);
out:
	cgk_kill_op_finish(op, NULL);
	cgk_report_free(rep);
	cgk_options_free(o);
	scene_end(&s);
}

/* ---- callbacks: progress, cancel ---- */

struct seen {
	bool in_step;
	unsigned calls, outside;
	pid_t tid, other_tid;
};

static void on_progress(const char *path, unsigned left, uint64_t waited_ms, void *data)
{
	struct seen *seen = data;

	(void)path, (void)left, (void)waited_ms;
	seen->calls++;
	seen->outside += !seen->in_step;
	if ((pid_t)syscall(SYS_gettid) != seen->tid)
		seen->other_tid++;
}

static void test_progress(const char *box)
{
	cgk_options *o = opts_escalate(CGK_BACKEND_AUTO, SIGTERM, KILL_WAIT_MS, 1200, SIGKILL);
	struct seen seen = { .tid = (pid_t)syscall(SYS_gettid) };
	cgk_kill_op *op = NULL;
	struct scene s;
	unsigned after_start;
	int r = -EAGAIN;

	if (!scene_start(&s, box, "progress") || !ok(term_ignorer(s.target) > 0,
						     "progress: a TERM-ignorer"))
		goto out;
	cgk_options_set_progress(o, on_progress, &seen);
	if (!is_int(cgk_kill_start(s.target, o, &op), 0, "progress: start"))
		goto out;
	after_start = seen.calls;
	for (uint64_t end = sb_now_ms() + 1200 + KILL_WAIT_MS + SLACK_MS;
	     r == -EAGAIN && sb_now_ms() < end;) {
		readable(cgk_kill_op_fd(op), 1000);
		seen.in_step = true;
		r = cgk_kill_op_step(op);
		seen.in_step = false;
	}
	is_int(r, 0, "progress: the kill ends with 0");
	ok(seen.calls >= 3 && after_start == 0, "progress: called %u times in a 1.2 s wait, "
	   "none in the start", seen.calls);
	ok(seen.outside == 0 && seen.other_tid == 0,
	   "progress: every call from within a step, in the caller's thread");
out:
	cgk_kill_op_finish(op, NULL);
	cgk_options_free(o);
	scene_end(&s);
}

static void test_cancel(const char *box)
{
	cgk_options *o = opts_escalate(CGK_BACKEND_AUTO, SIGTERM, KILL_WAIT_MS, 30000, SIGKILL);
	volatile sig_atomic_t stop = 0;
	cgk_kill_op *op = NULL;
	cgk_report *rep = NULL;
	struct scene s;
	uint64_t t0;
	pid_t ign;
	int r = -EAGAIN;

	if (!scene_start(&s, box, "cancel") || !ok((ign = term_ignorer(s.target)) > 0,
						   "cancel: a TERM-ignorer"))
		goto out;
	cgk_options_set_cancel(o, &stop);
	if (!is_int(cgk_kill_start(s.target, o, &op), 0, "cancel: start"))
		goto out;
	sb_sleep_ms(300);
	is_int(cgk_kill_op_step(op), -EAGAIN, "cancel: under way before the flag");
	stop = 1;
	t0 = sb_now_ms();
	/* The op's timer looks at the flag: the fd wakes the loop for it. */
	ok(readable(cgk_kill_op_fd(op), 1000 + SLACK_MS), "cancel: the fd wakes for the flag");
	while (r == -EAGAIN && sb_now_ms() - t0 < 10000) {
		r = cgk_kill_op_step(op);
		if (r == -EAGAIN)
			readable(cgk_kill_op_fd(op), 1000);
	}
	is_int(r, -ECANCELED, "cancel: the step returns -ECANCELED");
	ok(sb_now_ms() - t0 < 1000 + SLACK_MS, "cancel: within %llu ms of the flag, not the "
	   "escalation's 30 s", (unsigned long long)(sb_now_ms() - t0));
	is_int(cgk_kill_op_finish(op, &rep), -ECANCELED, "cancel: finish says the same");
	op = NULL;
	ok(rep && strstr(cgk_report_message(rep), "interrupted"), "cancel: the report: %s",
	   rep ? cgk_report_message(rep) : "none");
	ok(sb_alive(ign), "cancel: no KILL sent");
out:
	cgk_kill_op_finish(op, NULL);
	cgk_report_free(rep);
	cgk_options_free(o);
	scene_end(&s);
}

/* ---- CGK_REAP's wait: a phase on pidfds ---- */

/* The phase's pieces on a run: an exiting process's pidfd is watched in
 * an epoll set, which wakes when it exits and forgets it once looked at. */
static void test_reap_phase(const char *box)
{
	char *dir = sb_mkdir(box, "reap-phase");
	pid_t v = dir ? sb_sleeper(dir) : -1;
	int ep = epoll_create1(EPOLL_CLOEXEC), pidfd = -1;
	struct epoll_event ev;
	struct lib_run p;

	if (!ok(v > 0, "reap phase: a sleeper") || lib_run_open(&p, dir, 64) < 0)
		goto out;
	pidfd = (int)syscall(SYS_pidfd_open, v, 0);
	p.run.exiting.fd = malloc(sizeof(int));
	p.run.exiting.fd[0] = pidfd;
	p.run.exiting.n = p.run.exiting.cap = 1;
	is_int(cgk_reap_watch(&p.run, ep), 0, "reap phase: the pidfd watched");
	is_int(cgk_reap_left(&p.run, ep), 1, "reap phase: one process left while it lives");
	is_int(epoll_wait(ep, &ev, 1, 300), 0, "reap phase: the set is quiet while it lives");
	kill(v, SIGKILL);
	is_int(epoll_wait(ep, &ev, 1, 5000 + SLACK_MS), 1, "reap phase: its exit wakes the set");
	is_int(cgk_reap_left(&p.run, ep), 0, "reap phase: none left once it exited");
	is_int(epoll_wait(ep, &ev, 1, 0), 0, "reap phase: the set forgot it");
	cgk_pins_close(&p.run.exiting, ep);
	lib_run_close(&p);
out:
	close(ep);
	sb_discard(dir);
}

static void test_reap(const char *box)
{
	cgk_options *o = opts_new(CGK_BACKEND_AUTO, SIGKILL, CGK_REAP, KILL_WAIT_MS, NULL);
	cgk_kill_op *op = NULL;
	cgk_report *rep = NULL;
	struct scene s;
	pid_t pids[4];
	int r;

	if (!scene_start(&s, box, "reap") ||
	    !is_int(sb_spawn_n(4, SB_SLEEP, NULL, s.target, pids), 0, "reap: 4 sleepers") ||
	    !is_int(cgk_kill_start(s.target, o, &op), 0, "reap: start with CGK_REAP"))
		goto out;
	r = drive(op, KILL_WAIT_MS + SLACK_MS);
	is_int(r, 0, "reap: the kill ends with 0");
	cgk_kill_op_finish(op, &rep);
	op = NULL;
	ok(rep && cgk_report_reaped(rep) + cgk_report_reap_gone(rep) == 4 &&
	   cgk_report_emptied(rep), "reap: 4 released or gone (%u, %u), emptied",
	   rep ? cgk_report_reaped(rep) : 0, rep ? cgk_report_reap_gone(rep) : 0);
out:
	cgk_kill_op_finish(op, NULL);
	cgk_report_free(rep);
	cgk_options_free(o);
	scene_end(&s);
}

/* ---- by fd and by pid ---- */

static void test_fd_pid(const char *box)
{
	cgk_options *o = opts_new(CGK_BACKEND_AUTO, SIGKILL, 0, KILL_WAIT_MS, NULL);
	cgk_kill_op *op = NULL;
	cgk_report *rep = NULL;
	struct scene s;
	pid_t pids[2];
	int fd = -1;

	if (!scene_start(&s, box, "fd-pid") ||
	    !is_int(sb_spawn_n(2, SB_SLEEP, NULL, s.target, pids), 0, "fd-pid: 2 sleepers"))
		goto out;
	fd = open(s.target, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (!is_int(cgk_kill_start_fd(fd, o, &op), 0, "fd-pid: cgk_kill_start_fd"))
		goto out;
	is_int(drive(op, KILL_WAIT_MS + SLACK_MS), 0, "fd-pid: by fd, the kill ends with 0");
	cgk_kill_op_finish(op, &rep);
	op = NULL;
	ok(rep && cgk_report_emptied(rep) && sb_count_killed(pids, 2, SIGKILL, 5000) == 2,
	   "fd-pid: by fd, both killed, emptied");
	rep = cgk_report_free(rep);
	if (!is_int(sb_spawn_n(2, SB_SLEEP, NULL, s.target, pids), 0, "fd-pid: 2 more sleepers") ||
	    !is_int(cgk_kill_start_pid(pids[1], o, &op), 0, "fd-pid: cgk_kill_start_pid"))
		goto out;
	is_int(drive(op, KILL_WAIT_MS + SLACK_MS), 0, "fd-pid: by pid, the kill ends with 0");
	cgk_kill_op_finish(op, &rep);
	op = NULL;
	ok(rep && !strcmp(cgk_report_path(rep), s.target) &&
	   sb_count_killed(pids, 2, SIGKILL, 5000) == 2,
	   "fd-pid: by pid, its cgroup's processes killed (%s)", rep ? cgk_report_path(rep) : "");
out:
	if (fd >= 0)
		close(fd);
	cgk_kill_op_finish(op, NULL);
	cgk_report_free(rep);
	cgk_options_free(o);
	scene_end(&s);
}

/* ---- an op over at once ---- */

static void test_refused(void)
{
	/* A dry run, so that even a broken guard would signal nothing. */
	cgk_options *o = opts_new(CGK_BACKEND_AUTO, SIGKILL, CGK_DRY_RUN, KILL_WAIT_MS, NULL);
	const char *root = sb_mount(SB_V2);
	cgk_kill_op *op = NULL;
	cgk_report *rep = NULL;
	uint64_t t0;

	is_int(cgk_kill_start(root, o, NULL), -EINVAL, "refused: NULL ret: -EINVAL");
	is_int(cgk_kill_op_finish(NULL, &rep), -EINVAL, "refused: finish(NULL): -EINVAL");
	if (!is_int(cgk_kill_start(root, o, &op), 0, "refused: start on the root cgroup: an op"))
		goto out;
	t0 = sb_now_ms();
	ok(readable(cgk_kill_op_fd(op), 0), "refused: the fd is readable at once");
	is_int(cgk_kill_op_timeout(op), 0, "refused: timeout 0");
	is_int(cgk_kill_op_step(op), -EPERM, "refused: the first step returns -EPERM");
	ok(sb_now_ms() - t0 < 1000, "refused: at once");
	is_int(cgk_kill_op_finish(op, &rep), -EPERM, "refused: finish returns -EPERM");
	op = NULL;
	ok(rep && cgk_report_refused(rep) == CGK_GUARD_ROOT && cgk_report_n_signals(rep) == 0,
	   "refused: the report names the root guard; nothing sent");
	rep = cgk_report_free(rep);
	is_int(cgk_kill_start("/nonexistent-cgkill-test", o, &op), 0,
	       "refused: start on a path that is no cgroup: an op");
	is_int(cgk_kill_op_finish(op, &rep), -ENOENT, "refused: its result -ENOENT");
	op = NULL;
	ok(rep && cgk_report_error(rep) == -ENOENT, "refused: the report says so");
out:
	cgk_kill_op_finish(op, NULL);
	cgk_report_free(rep);
	cgk_options_free(o);
}

int main(void)
{
	struct sb_boxes b;

	sb_start_v1(&b, 900);
	if (!b.v2)
		bail_out("no cgroup v2 sandbox");
	test_refused();
	test_start(b.v2, CGK_BACKEND_FREEZE, "v2-freeze");
	test_start(b.v2, CGK_BACKEND_LOOP, "v2-loop");
	test_two(b.v2);
	test_abandon(b.v2, CGK_BACKEND_FREEZE, "abandon-freeze");
	test_progress(b.v2);
	test_cancel(b.v2);
	test_reap_phase(b.v2);
	test_reap(b.v2);
	test_fd_pid(b.v2);
	if (b.fz) {
		test_start(b.fz, CGK_BACKEND_V1_FREEZE, "v1-freezer");
		test_abandon(b.fz, CGK_BACKEND_V1_FREEZE, "abandon-v1-freezer");
	} else {
		skip("no v1 freezer hierarchy");
	}
	if (b.pd)
		test_start(b.pd, CGK_BACKEND_LOOP, "v1-pids");
	else
		skip("no v1 pids hierarchy");
	return sb_finish_v1(&b);
}
