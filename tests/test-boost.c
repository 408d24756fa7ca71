// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Priorities: CGK_BOOST and CGK_BOOSTED in the library, and the command's
 * own boost from its first instruction. What a thread runs at is read where
 * the library hands control back (the confirm and progress callbacks run in
 * its waits), after the call, and for the command from /proc/PID/stat while
 * it is blocked writing to a full pipe or waiting out an escalation.
 *
 * Each library case runs in a child of its own (child_call()), whose
 * priority is set there and dies with it.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgkill.h"
#include "support/cgfile.h"
#include "support/cmd.h"
#include "support/kill.h"
#include "support/record.h"
#include "support/sandbox.h"
#include "support/scene.h"
#include "support/spawn.h"
#include "support/tap.h"

static char *box;	/* the v2 sandbox */

/* A thread's scheduling, as sched_getscheduler() gives it (reset-on-fork
 * included), with its real-time priority and its nice. */
struct sched {
	int policy, rtprio, nice;
};

static struct sched sched_now(void)
{
	struct sched_param p = { 0 };
	struct sched s = { .policy = sched_getscheduler(0) };

	sched_getparam(0, &p);
	s.rtprio = p.sched_priority;
	errno = 0;
	s.nice = getpriority(PRIO_PROCESS, 0);
	return s;
}

struct lib_case {
	const char *target;
	bool rr;		/* the caller comes at SCHED_RR 1, reset-on-fork */
	int nice;		/* the caller's nice */
	unsigned flags;
};

struct lib_seen {
	int r;
	bool confirmed;
	unsigned progress;	/* progress calls */
	struct sched in_confirm, in_wait, after;
	bool wait_varied;	/* not the same in every progress call */
};

static bool on_confirm(const char *path, unsigned processes, unsigned cgroups, void *data)
{
	struct lib_seen *seen = data;

	(void)path, (void)processes, (void)cgroups;
	seen->confirmed = true;
	seen->in_confirm = sched_now();
	return true;
}

static void on_progress(const char *path, unsigned left, uint64_t waited_ms, void *data)
{
	struct lib_seen *seen = data;
	struct sched s = sched_now();

	(void)path, (void)left, (void)waited_ms;
	if (seen->progress++ && memcmp(&s, &seen->in_wait, sizeof(s)))
		seen->wait_varied = true;
	seen->in_wait = s;
}

/* In a child: come at the case's priority, send TERM to a process that
 * ignores it, KILL after 700 ms (two progress calls in that wait). */
static void lib_child(void *arg, void *out)
{
	const struct lib_case *lc = arg;
	struct lib_seen *seen = out;
	struct sched_param rr = { .sched_priority = 1 };
	cgk_options *o = opts_escalate(CGK_BACKEND_AUTO, SIGTERM, KILL_WAIT_MS, 700, SIGKILL);
	cgk_report *rep = NULL;

	if (setpriority(PRIO_PROCESS, 0, lc->nice) < 0 ||
	    (lc->rr && sched_setscheduler(0, SCHED_RR | SCHED_RESET_ON_FORK, &rr) < 0)) {
		seen->r = -errno;
		return;
	}
	if (cgk_options_set_flags(o, lc->flags) < 0 ||
	    cgk_options_set_confirm(o, on_confirm, seen) < 0 ||
	    cgk_options_set_progress(o, on_progress, seen) < 0) {
		seen->r = -EINVAL;
		return;
	}
	seen->r = cgk_kill(lc->target, o, &rep);
	seen->after = sched_now();
	cgk_report_free(rep);
	cgk_options_free(o);
}

static void lib_case(const char *what, bool rr, int nice, unsigned flags, struct sched want_wait)
{
	struct scene s;
	struct lib_seen seen = { 0 };
	struct lib_case lc = { .rr = rr, .nice = nice, .flags = flags };
	struct sched came = { .policy = rr ? SCHED_RR | SCHED_RESET_ON_FORK : SCHED_OTHER,
			      .rtprio = rr ? 1 : 0, .nice = nice };

	if (!scene_start(&s, box, "boost"))
		goto out;
	lc.target = s.target;
	if (!ok(term_ignorer(s.target) > 0, "%s: a process that ignores TERM", what))
		goto out;
	if (!is_int(child_call(lib_child, &lc, &seen, sizeof(seen), 30000, NULL), 0,
		    "%s: the call ran in a child", what))
		goto out;
	if (rr && seen.r == -EPERM) {
		skip("%s: SCHED_RR is not permitted here", what);
		goto out;
	}
	if (!is_int(seen.r, 0, "%s: cgk_kill() succeeded", what))
		goto out;
	ok(seen.confirmed && !memcmp(&seen.in_confirm, &want_wait, sizeof(want_wait)),
	   "%s: confirm ran at policy %#x rtprio %d nice %d (got %#x %d %d)", what,
	   want_wait.policy, want_wait.rtprio, want_wait.nice, seen.in_confirm.policy,
	   seen.in_confirm.rtprio, seen.in_confirm.nice);
	ok(seen.progress >= 2 && !seen.wait_varied && !memcmp(&seen.in_wait, &want_wait, sizeof(want_wait)),
	   "%s: the waits ran at policy %#x rtprio %d nice %d (%u calls, last %#x %d %d)", what,
	   want_wait.policy, want_wait.rtprio, want_wait.nice, seen.progress, seen.in_wait.policy,
	   seen.in_wait.rtprio, seen.in_wait.nice);
	ok(!memcmp(&seen.after, &came, sizeof(came)),
	   "%s: after the call, what it came with (%#x %d %d, got %#x %d %d)", what, came.policy,
	   came.rtprio, came.nice, seen.after.policy, seen.after.rtprio, seen.after.nice);
out:
	scene_end(&s);
}

static void test_library(void)
{
	const struct sched other3 = { SCHED_OTHER, 0, 3 }, rr1 = { SCHED_RR | SCHED_RESET_ON_FORK, 1, 0 };
	cgk_options *o = NULL;

	is_int(cgk_options_new(&o), 0, "options");
	is_int(cgk_options_set_flags(o, CGK_BOOST | CGK_BOOSTED), 0, "CGK_BOOSTED is a known flag");
	cgk_options_free(o);

	/* The command's case: real-time from its start, handed over. */
	lib_case("RR 1 + BOOST + BOOSTED", true, 3, CGK_BOOST | CGK_BOOSTED, other3);
	/* A real-time caller that did not say so is left as it is. */
	lib_case("RR 1 + BOOST", true, 0, CGK_BOOST, rr1);
	lib_case("RR 1 + BOOSTED alone", true, 0, CGK_BOOSTED, rr1);
	/* An ordinary caller: dropped to its own, BOOSTED or not. */
	lib_case("OTHER + BOOST + BOOSTED", false, 3, CGK_BOOST | CGK_BOOSTED, other3);
	lib_case("OTHER + BOOST", false, 3, CGK_BOOST, other3);
}

/* /proc/PID/FILE into buf (sb_read()); false if it cannot be read. */
static bool proc_read(pid_t pid, const char *file, char *buf, size_t size)
{
	char dir[32];

	snprintf(dir, sizeof(dir), "/proc/%d", (int)pid);
	return sb_read(dir, file, buf, size) > 0;
}

/* policy (field 41) and rt_priority (field 40) of /proc/PID/stat. */
static bool stat_sched(pid_t pid, int *policy, int *rtprio, char *state)
{
	char buf[1024], *p;
	int field;

	if (!proc_read(pid, "stat", buf, sizeof(buf)))
		return false;
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return false;
	*state = p[2];
	for (field = 3, p += 2; field < 40 && (p = strchr(p, ' ')); field++)
		p++;
	return p && sscanf(p, "%d %d", rtprio, policy) == 2;
}

/* Is pid in write(2) on fd? (/proc/PID/syscall: number, then arguments.) */
static bool writing(pid_t pid, int fd)
{
	char buf[256], want[32];

	if (!proc_read(pid, "syscall", buf, sizeof(buf)))
		return false;
	snprintf(want, sizeof(want), "1 0x%x ", fd);
	return strncmp(buf, want, strlen(want)) == 0;
}

/* Run the command with fd (1 or 2) on a full pipe: it blocks at its first
 * write there, where its priority is read. */
static void cmd_blocked(const char *what, int fd, const char *const *args, int want_policy,
			int want_rtprio)
{
	const char *argv[16] = { "cgkill" };
	int pfd[2], policy = -1, rtprio = -1, st;
	char state = '?', junk[4096];
	bool blocked = false;
	pid_t pid;
	size_t n = 1;

	for (; *args && n < 15; args++)
		argv[n++] = *args;
	if (!ok(pipe2(pfd, O_CLOEXEC | O_NONBLOCK) == 0, "%s: a pipe", what))
		return;
	while (write(pfd[1], junk, sizeof(junk)) > 0)
		;
	fcntl(pfd[1], F_SETFL, 0);
	pid = sb_fork();
	if (pid == 0) {
		dup2(pfd[1], fd);
		execv(cmd_path(), (char *const *)argv);
		_exit(127);
	}
	close(pfd[1]);
	for (uint64_t end = sb_now_ms() + 10000; pid > 0 && sb_now_ms() < end && !blocked;) {
		sb_sleep_ms(10);
		blocked = writing(pid, fd) && stat_sched(pid, &policy, &rtprio, &state);
	}
	ok(blocked, "%s: the command blocked writing to fd %d", what, fd);
	ok(policy == want_policy && rtprio == want_rtprio,
	   "%s: ... at policy %d rtprio %d (got %d %d)", what, want_policy, want_rtprio, policy,
	   rtprio);
	fcntl(pfd[0], F_SETFL, O_NONBLOCK);
	for (uint64_t end = sb_now_ms() + 10000; sb_now_ms() < end;) {
		ssize_t r = read(pfd[0], junk, sizeof(junk));

		if (r == 0)
			break;
		if (r < 0)
			sb_sleep_ms(5);
	}
	close(pfd[0]);
	st = sb_wait_reaped(pid, 10000);
	ok(st >= 0 && WIFEXITED(st), "%s: the command ended (status %#x)", what, st);
}

static void test_command(void)
{
	struct scene s;
	struct cmd c = { 0 };
	int policy = -1, rtprio = -1, seen_policy = -1;
	char state;

	/* Before any call of the library: a usage error, on a full stderr. */
	cmd_blocked("start-up", 2, (const char *[]){ "--no-such-option", NULL }, SCHED_RR, 1);
	if (!scene_start(&s, box, "cmdboost"))
		goto out;
	/* A dry run has nothing to hurry for: back to SCHED_OTHER. */
	if (!ok(sb_sleeper(s.target) > 0, "dry run: a process to list"))
		goto out;
	cmd_blocked("dry run", 1, (const char *[]){ "-n", "-p", s.target, NULL }, SCHED_OTHER, 0);
	/* In an escalation's wait: SCHED_OTHER (the library's drop of the
	 * command's boost), not the real time it started with; the sleeper
	 * goes at TERM. */
	if (!ok(term_ignorer(s.target) > 0, "escalation: a process that ignores TERM"))
		goto out;
	if (!ok(cmd_start(&c, NULL, "-s", "TERM", "--timeout", "2s", "KILL", s.target, NULL) == 0,
		"escalation: cgkill -s TERM --timeout 2s KILL"))
		goto out;
	for (uint64_t end = sb_now_ms() + 1500; sb_now_ms() < end;) {
		sb_sleep_ms(50);
		if (sb_now_ms() - c.start_ms > 500 && stat_sched(c.pid, &policy, &rtprio, &state) &&
		    state == 'S' && seen_policy != SCHED_RR)
			seen_policy = policy;
	}
	cmd_finish(&c, CMD_MS);
	exit_is(&c, 0);
	is_int(seen_policy, SCHED_OTHER, "escalation: the command waited at SCHED_OTHER");
out:
	cmd_free(&c);
	scene_end(&s);
}

int main(void)
{
	box = sb_start(300);

	test_library();
	test_command();

	return sb_finish(box);
}
