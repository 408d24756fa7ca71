// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Escalation, through the command (--timeout) and the library: TERM, then
 * KILL for what is left after the grace time (and only then), several
 * steps, no step when everything has gone; which backend sent each signal.
 *
 * Signals are observed, not assumed: the processes are recorders whose
 * SA_SIGINFO handlers write (pid, signal, sender) into a pipe
 * (support/record.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgkill.h"
#include "support/cgfile.h"
#include "support/cmd.h"
#include "support/deadline.h"
#include "support/json.h"
#include "support/kill.h"
#include "support/record.h"
#include "support/sandbox.h"
#include "support/scene.h"
#include "support/spawn.h"
#include "support/tap.h"

#define MAX_RECS 256

static char *box;	/* the v2 sandbox */

static bool has_cgroup_kill(const char *dir)
{
	char *p = sb_path(dir, "cgroup.kill");
	bool has = p && access(p, F_OK) == 0;

	free(p);
	return has;
}

/* Watch pids while the command runs; when[i] gets the ms after the start
 * at which pid i was reaped, status[i] its wait status. */
static void watch(struct cmd *c, const pid_t *pids, unsigned n, uint64_t *when, int *status,
		  unsigned timeout_ms)
{
	unsigned left = n;

	for (unsigned i = 0; i < n; i++)
		when[i] = UINT64_MAX;
	while (left && sb_now_ms() - c->start_ms < timeout_ms) {
		for (unsigned i = 0; i < n; i++) {
			int st;

			if (when[i] != UINT64_MAX)
				continue;
			st = sb_wait_reaped(pids[i], 0);
			if (st >= 0) {
				when[i] = sb_now_ms() - c->start_ms;
				status[i] = st;
				left--;
			}
		}
		sb_sleep_ms(5);
	}
	cmd_finish(c, CMD_MS);
}

static void test_escalation(void)
{
	struct scene s;
	pid_t pids[2];
	uint64_t when[2];
	int st[2] = { 0 };
	struct cmd c = { 0 };

	if (!scene_start(&s, box, "escalate"))
		goto out;
	pids[0] = term_ignorer(s.target);
	pids[1] = term_exiter(s.target);
	if (!ok(pids[0] > 0 && pids[1] > 0, "escalate: one process ignores TERM, one exits on it"))
		goto out;
	if (!ok(cmd_start(&c, NULL, "-j", "-s", "TERM", "--timeout", "1s", "KILL", s.target, NULL) == 0,
		"escalate: start cgkill -s TERM --timeout 1s KILL"))
		goto out;
	watch(&c, pids, 2, when, st, CMD_MS);
	exit_is(&c, 0);
	ok(WIFEXITED(st[1]) && WEXITSTATUS(st[1]) == 0 && when[1] < when[0],
	   "escalate: the second exited on TERM, before the KILL step (%llu ms)",
	   (unsigned long long)when[1]);
	ok(WIFSIGNALED(st[0]) && WTERMSIG(st[0]) == SIGKILL,
	   "escalate: the first died of KILL");
	ok(when[0] >= 950 && when[0] < sb_deadline_ms(8000), "escalate: ... after about 1 s (%llu ms)",
	   (unsigned long long)when[0]);
	ok(c.ms >= 1000 && c.ms < sb_deadline_ms(10000), "escalate: cgkill returned in %llu ms",
	   (unsigned long long)c.ms);
	json_is(&c, "d['targets'][0]['signals']", "[\"TERM\", \"KILL\"]");
	json_is(&c, "d['targets'][0]['emptied']", "true");
	json_is(&c, "d['targets'][0]['waited']", "true");
	json_is(&c, "d['targets'][0]['error']", "null");
	json_is(&c, "d['targets'][0]['survivors']", "[]");
	{
		char expr[96];

		/* The upper bounds are an idle machine's, stretched. */
		snprintf(expr, sizeof(expr), "1000 <= d['targets'][0]['signal_ms'] < %u",
			 sb_deadline_ms(8000));
		json_is(&c, expr, "true");
		snprintf(expr, sizeof(expr), "d['targets'][0]['signal_ms'] <= d['targets'][0]['empty_ms'] < %u",
			 sb_deadline_ms(10000));
		json_is(&c, expr, "true");
	}
	/* TERM through the freezer; KILL through cgroup.kill where the kernel
	 * has it. "backend" is the one of the last signal. */
	json_is(&c, "d['targets'][0]['backends']",
		has_cgroup_kill(s.target) ? "[\"freeze\", \"kernel\"]" : "[\"freeze\", \"freeze\"]");
	json_is(&c, "d['targets'][0]['backend']", has_cgroup_kill(s.target) ? "kernel" : "freeze");
	is_int(sb_wait_empty(s.target, 0), 0, "escalate: the cgroup is empty when cgkill returns");
out:
	cmd_free(&c);
	scene_end(&s);
}

/* TERM, then USR1 after 500 ms, then KILL after 500 ms more. */
static void test_escalation_steps(void)
{
	struct rec v[MAX_RECS];
	struct scene s;
	pid_t a, b;
	uint64_t when[2];
	int st[2] = { 0 };
	pid_t pids[2];
	struct cmd c = { 0 };
	size_t n;

	if (!scene_start(&s, box, "steps"))
		goto out;
	rec_drain();
	a = sb_spawn(&(struct sb_proc){ .cgroups = { s.target }, .record = { SIGTERM, SIGUSR1 } });
	b = sb_spawn(&(struct sb_proc){ .cgroups = { s.target }, .ignore = { SIGTERM, SIGUSR1 } });
	if (!ok(a > 0 && b > 0, "steps: a recorder of TERM and USR1, a process ignoring both"))
		goto out;
	pids[0] = a;
	pids[1] = b;
	cmd_start(&c, NULL, "-j", "-s", "TERM", "--timeout", "500ms", "USR1", "--timeout", "500ms",
		  "KILL", s.target, NULL);
	watch(&c, pids, 2, when, st, CMD_MS);
	exit_is(&c, 0);
	json_is(&c, "d['targets'][0]['signals']", "[\"TERM\", \"USR1\", \"KILL\"]");
	json_is(&c, "d['targets'][0]['emptied']", "true");
	json_is(&c, "d['targets'][0]['signal_ms'] >= 1000", "true");
	n = rec_collect(v, MAX_RECS, 2, 2000, 200);
	is_int(rec_count(v, n, REC_SIG, a, SIGTERM), 1, "steps: TERM arrived once");
	is_int(rec_count(v, n, REC_SIG, a, SIGUSR1), 1, "steps: USR1 arrived once");
	is_int(n, 2, "steps: nothing else was recorded");
	ok(WIFSIGNALED(st[0]) && WTERMSIG(st[0]) == SIGKILL && WIFSIGNALED(st[1]) &&
	   WTERMSIG(st[1]) == SIGKILL, "steps: both died of KILL");
	ok(when[0] >= 950 && when[1] >= 950 && when[0] < sb_deadline_ms(8000) &&
	   when[1] < sb_deadline_ms(8000),
	   "steps: after about 1 s (%llu, %llu ms)", (unsigned long long)when[0],
	   (unsigned long long)when[1]);
out:
	cmd_free(&c);
	scene_end(&s);
}

/* Everything exits on TERM: the KILL step is never needed. */
static void test_escalation_not_needed(void)
{
	struct scene s;
	pid_t pids[2];
	struct cmd c = { 0 };

	if (!scene_start(&s, box, "noescalate"))
		goto out;
	pids[0] = term_exiter(s.target);
	pids[1] = term_exiter(s.target);
	if (!ok(pids[0] > 0 && pids[1] > 0, "no escalation: two processes that exit on TERM"))
		goto out;
	cmd_run(&c, CMD_MS, "-j", "-s", "TERM", "--timeout", "5s", "KILL", s.target, NULL);
	exit_is(&c, 0);
	json_is(&c, "d['targets'][0]['signals']", "[\"TERM\"]");
	json_is(&c, "d['targets'][0]['emptied']", "true");
	ok(c.ms < 4500, "no escalation: returned well before the timeout (%llu ms)",
	   (unsigned long long)c.ms);
	for (int i = 0; i < 2; i++) {
		int st = sb_wait_reaped(pids[i], 5000);

		ok(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "no escalation: %d exited 0",
		   (int)pids[i]);
	}
out:
	cmd_free(&c);
	scene_end(&s);
}

static void test_escalation_lib(void)
{
	cgk_options *o = opts_escalate(CGK_BACKEND_AUTO, SIGTERM, KILL_WAIT_MS, 500, SIGKILL);
	cgk_report *rep = NULL;
	struct scene s;
	pid_t pids[2];
	int r;

	if (!scene_start(&s, box, "esclib"))
		goto out;
	pids[0] = term_ignorer(s.target);
	pids[1] = term_exiter(s.target);
	if (!ok(pids[0] > 0 && pids[1] > 0, "library escalation: spawn"))
		goto out;
	r = cgk_kill(s.target, o, &rep);
	is_int(r, 0, "library escalation: returns 0");
	is_int(cgk_report_n_signals(rep), 2, "library escalation: two signals");
	ok(rep_signal(rep, 0) == SIGTERM && rep_signal(rep, 1) == SIGKILL,
	   "library escalation: TERM, KILL");
	is_int(rep_signal_backend(rep, 0), CGK_BACKEND_FREEZE,
	       "library escalation: TERM via the freezer");
	is_int(rep_signal_backend(rep, 1),
	       has_cgroup_kill(s.target) ? CGK_BACKEND_KERNEL : CGK_BACKEND_FREEZE,
	       "library escalation: KILL via %s",
	       has_cgroup_kill(s.target) ? "cgroup.kill" : "the freezer");
	is_int(cgk_report_backend(rep), rep_signal_backend(rep, 1),
	       "library escalation: backend is that of the last signal");
	ok(cgk_report_waited(rep) && cgk_report_emptied(rep), "library escalation: waited, emptied");
	ok(cgk_report_signal_ms(rep) >= 500 && cgk_report_empty_ms(rep) >= cgk_report_signal_ms(rep),
	   "library escalation: signal_ms %llu >= 500, empty_ms %llu",
	   (unsigned long long)cgk_report_signal_ms(rep), (unsigned long long)cgk_report_empty_ms(rep));
	ok(sb_killed_by(pids[0], SIGKILL, 5000), "library escalation: the TERM-ignorer died of KILL");
	{
		int st = sb_wait_reaped(pids[1], 5000);

		if (!ok(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
			"library escalation: the other exited on TERM"))
			diag("wait status %#x", st);
	}
	rep = cgk_report_free(rep);
out:
	cgk_options_free(o);
	scene_end(&s);
}

int main(void)
{
	box = sb_start(300);

	test_escalation();
	test_escalation_steps();
	test_escalation_not_needed();
	test_escalation_lib();

	return sb_finish(box);
}
