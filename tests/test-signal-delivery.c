// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Any signal, delivered as the freeze backend promises, through the command
 * and the library: every process in the subtree at freeze time gets the
 * signal exactly once, from cgkill, then the tree is thawed; a child forked
 * after the thaw gets nothing; the kernel backend refuses anything but
 * SIGKILL; SIGSTOP and SIGCONT go through a freeze and a thaw.
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

#define MAX_RECS 256

static char *box;	/* the v2 sandbox */

/* ---- the freeze backend: a snapshot, each process exactly once ---- */

static void test_exactly_once_cli(void)
{
	enum { N = 7 };
	struct rec v[MAX_RECS];
	struct scene s;
	pid_t pids[N + 1], forker = 0, born = 0, sent[2];
	char *a = NULL, *b = NULL;
	unsigned np = 0, bad = 0;
	struct cmd c = { 0 };
	size_t n;

	if (!scene_start(&s, box, "once"))
		goto out;
	a = sb_mkdir(s.target, "a");
	b = sb_mkdir(s.target, "a/b");
	rec_drain();
	/* Recorders in the parent and the sibling: they must hear nothing. */
	sent[0] = recorder(s.parent, SIGUSR1);
	sent[1] = recorder(s.sibling, SIGUSR1);
	for (unsigned i = 0; i < N; i++) {
		/* Two of them with 3 more threads: one delivery per process. */
		pids[np] = sb_spawn(&(struct sb_proc){ .cgroups = { i < 3 ? s.target : i < 5 ? a : b },
							 .record = { SIGUSR1 },
							 .threads = i % 3 == 1 ? 3 : 0 });
		if (pids[np] > 0)
			np++;
	}
	forker = sb_spawn(&(struct sb_proc){ .cgroups = { a }, .record = { SIGUSR1 },
					       .fork_on_signal = true });
	if (!ok(np == N && forker > 0 && sent[0] > 0 && sent[1] > 0,
		"once: %d recorders in T, T/a, T/a/b (two multi-threaded), one that forks on the "
		"signal, two outside", N))
		goto out;
	pids[np++] = forker;

	cmd_run(&c, CMD_MS, "-j", "-s", "USR1", s.target, NULL);
	exit_is(&c, 0);
	json_is(&c, "d['targets'][0]['backend']", "freeze");
	json_is(&c, "d['targets'][0]['fell_back_from']", "null");
	json_is(&c, "d['targets'][0]['signals']", "[\"USR1\"]");
	json_is(&c, "d['targets'][0]['signalled']", "8");
	json_is(&c, "d['targets'][0]['cgroups']", "3");
	json_is(&c, "d['targets'][0]['waited']", "false");

	/* 8 deliveries and one birth; then 500 ms for any duplicate. */
	n = rec_collect(v, MAX_RECS, np + 1, 5000, 500);
	for (unsigned i = 0; i < np; i++) {
		unsigned k = rec_count(v, n, REC_SIG, pids[i], SIGUSR1);

		if (k != 1) {
			diag("pid %d got USR1 %u times", (int)pids[i], k);
			bad++;
		}
	}
	is_int(bad, 0, "once: each of the %u processes got USR1 exactly once", np);
	for (size_t i = 0; i < n; i++) {
		if (v[i].kind == REC_SIG && v[i].sender != c.pid)
			bad++;
		if (v[i].kind == REC_BORN)
			born = v[i].pid;
	}
	is_int(bad, 0, "once: every delivery came from the cgkill process");
	is_int(rec_count(v, n, REC_SIG, sent[0], 0) + rec_count(v, n, REC_SIG, sent[1], 0), 0,
	       "once: the recorders in the parent and the sibling got nothing");
	is_int(rec_count(v, n, REC_SIG, 0, 0), np, "once: %u deliveries in all", np);

	/* Observed: a child forked by the handler starts after the thaw, so it
	 * is not in the snapshot and gets nothing, not even a pending signal
	 * (fork() does not copy those). It stays in T/a. */
	if (ok(born > 0, "once: the forking recorder's child started (pid %d)", (int)born)) {
		is_int(rec_count(v, n, REC_SIG, born, 0), 0,
		       "once: its child (forked after the thaw) was not signalled");
		ok(sb_member(a, born), "once: its child lives on in T/a");
	}

	/* Thawed: nothing left frozen, at the target or below. */
	ok(sb_file_has(s.target, "cgroup.freeze", "0"), "once: cgroup.freeze of T is 0 again");
	ok(sb_file_has(s.target, "cgroup.events", "frozen 0"), "once: T: frozen 0");
	ok(sb_file_has(a, "cgroup.events", "frozen 0"), "once: T/a: frozen 0");
	ok(sb_file_has(b, "cgroup.events", "frozen 0"), "once: T/a/b: frozen 0");
	cmd_free(&c);

	/* What is left (the recorders and the child) goes with KILL. */
	cmd_run(&c, CMD_MS, "-j", s.target, NULL);
	exit_is(&c, 0);
	json_is(&c, "d['targets'][0]['emptied']", "true");
	is_int(sb_wait_empty(s.target, 5000), 0, "once: T is empty after KILL");
	for (unsigned i = 0; i < 2; i++)
		ok(sb_alive(sent[i]), "once: recorder outside the target %d alive", (int)sent[i]);
	rec_drain();
out:
	cmd_free(&c);
	free(a);
	free(b);
	scene_end(&s);
}

static void test_exactly_once_lib(void)
{
	enum { N = 4 };
	cgk_report *rep = NULL;
	struct rec v[MAX_RECS];
	struct scene s;
	pid_t pids[N];
	char *x = NULL;
	unsigned np = 0, bad = 0;
	size_t n;
	int r;

	if (!scene_start(&s, box, "oncelib"))
		goto out;
	x = sb_mkdir(s.target, "x");
	rec_drain();
	for (unsigned i = 0; i < N; i++) {
		pids[np] = recorder(i % 2 ? x : s.target, SIGUSR2);
		if (pids[np] > 0)
			np++;
	}
	if (!is_int(np, N, "library: %d recorders", N))
		goto out;
	r = kill_opts(s.target, CGK_BACKEND_AUTO, SIGUSR2, 0, 0, NULL, &rep);
	is_int(r, 0, "library: cgk_kill(SIGUSR2) returns 0");
	is_int(cgk_report_backend(rep), CGK_BACKEND_FREEZE, "library: auto took the freeze backend");
	is_int(cgk_report_fell_back_from(rep), CGK_BACKEND_AUTO,
	       "library: no fallback (kernel does not apply)");
	is_int(cgk_report_n_signals(rep), 1, "library: one signal");
	is_int(rep_signal(rep, 0), SIGUSR2, "library: it is SIGUSR2");
	is_int(cgk_report_signalled(rep), N, "library: %d signalled", N);
	is_int(cgk_report_cgroups(rep), 2, "library: 2 cgroups");
	ok(!cgk_report_waited(rep), "library: wait_ms 0: did not wait");
	n = rec_collect(v, MAX_RECS, N, 5000, 300);
	for (unsigned i = 0; i < np; i++)
		bad += rec_count(v, n, REC_SIG, pids[i], SIGUSR2) != 1;
	is_int(bad, 0, "library: each got SIGUSR2 exactly once");
	is_int(rec_count(v, n, REC_SIG, getpid(), 0) + rec_count(v, n, REC_SIG, 0, 0), N,
	       "library: no other delivery");
	bad = 0;
	for (size_t i = 0; i < n; i++)
		bad += v[i].sender != getpid();
	is_int(bad, 0, "library: sent by this process");
	ok(sb_file_has(s.target, "cgroup.events", "frozen 0"), "library: thawed");
	rep = cgk_report_free(rep);

	/* The kernel backend cannot send anything but SIGKILL. */
	r = kill_opts(s.target, CGK_BACKEND_KERNEL, SIGTERM, 0, 0, NULL, &rep);
	is_int(r, -EOPNOTSUPP, "library: kernel backend with SIGTERM: EOPNOTSUPP");
	ok(strstr(cgk_report_message(rep), "SIGKILL only") != NULL, "library: the message says why: %s",
	   cgk_report_message(rep));
	is_int(cgk_report_signalled(rep), 0, "library: nothing signalled");
	is_int(cgk_report_n_signals(rep), 0, "library: no signal reported as sent");
	is_int(cgk_report_backend(rep), CGK_BACKEND_AUTO, "library: no backend reported");
	rep = cgk_report_free(rep);
	is_int(rec_collect(v, MAX_RECS, 1, 300, 0), 0, "library: no delivery from the refused kill");
out:
	free(x);
	scene_end(&s);
}

static void test_kernel_backend_term(void)
{
	struct rec v[MAX_RECS];
	struct scene s;
	struct cmd c;
	pid_t pid;

	if (!scene_start(&s, box, "kernterm"))
		goto out;
	rec_drain();
	pid = recorder(s.target, SIGTERM);
	if (!ok(pid > 0, "-b kernel -s TERM: spawn a recorder"))
		goto out;
	cmd_run(&c, CMD_MS, "-b", "kernel", "-s", "TERM", s.target, NULL);
	exit_is(&c, 1);
	ok(strstr(c.err, "kernel backend") && strstr(c.err, "SIGKILL only"),
	   "-b kernel -s TERM: the message says the kernel backend sends SIGKILL only");
	note("message: %s", c.err);
	cmd_free(&c);
	is_int(rec_collect(v, MAX_RECS, 1, 300, 0), 0, "-b kernel -s TERM: nothing signalled");
	ok(sb_alive(pid), "-b kernel -s TERM: the process lives");
	ok(sb_file_has(s.target, "cgroup.freeze", "0"), "-b kernel -s TERM: not frozen");
	cmd_run(&c, CMD_MS, "-j", "-b", "kernel", "-s", "TERM", s.target, NULL);
	exit_is(&c, 1);
	/* Nothing was sent, so no signal and no backend in the report. */
	json_is(&c, "[d['targets'][0][k] for k in ('signals', 'backends', 'backend')]", "[[], [], null]");
	json_is(&c, "d['targets'][0]['error']['errno']", "EOPNOTSUPP");
	cmd_free(&c);

	/* And forced freeze works with any signal. */
	cmd_run(&c, CMD_MS, "-j", "-b", "freeze", "-s", "TERM", s.target, NULL);
	exit_is(&c, 0);
	json_is(&c, "d['targets'][0]['backend']", "freeze");
	is_int(rec_collect(v, MAX_RECS, 1, 5000, 200), 1, "-b freeze -s TERM: one delivery");
	cmd_free(&c);
out:
	scene_end(&s);
}

/* ---- SIGSTOP / SIGCONT through a freeze and a thaw ---- */

static unsigned count_state(const pid_t *pids, unsigned n, char state, unsigned timeout_ms)
{
	unsigned k = 0;

	for (unsigned i = 0; i < n; i++)
		k += wait_state(pids[i], state, timeout_ms);
	return k;
}

static void test_stop_cont(void)
{
	enum { N = 3 };
	struct scene s;
	pid_t pids[N];
	char *c1 = NULL;
	struct cmd c;

	if (!scene_start(&s, box, "stop"))
		goto out;
	c1 = sb_mkdir(s.target, "c");
	pids[0] = sb_sleeper(s.target);
	pids[1] = sb_sleeper(s.target);
	pids[2] = sb_sleeper(c1);
	if (!ok(pids[0] > 0 && pids[1] > 0 && pids[2] > 0, "STOP: spawn 3 sleepers"))
		goto out;

	cmd_run(&c, CMD_MS, "-j", "-s", "STOP", s.target, NULL);
	exit_is(&c, 0);
	json_is(&c, "d['targets'][0]['backend']", "freeze");
	cmd_free(&c);
	is_int(count_state(pids, N, 'T', 3000), N, "STOP: all stopped (state T) after the thaw");
	ok(sb_file_has(s.target, "cgroup.events", "frozen 0"), "STOP: the cgroup is thawed");
	ok(sb_file_has(c1, "cgroup.events", "frozen 0"), "STOP: the child cgroup is thawed");
	sb_sleep_ms(300);
	is_int(count_state(pids, N, 'T', 0), N, "STOP: still stopped 300 ms later");

	cmd_run(&c, CMD_MS, "-s", "CONT", s.target, NULL);
	exit_is(&c, 0);
	cmd_free(&c);
	is_int(count_state(pids, N, 'S', 3000), N, "CONT: all running again (state S)");
	ok(sb_file_has(s.target, "cgroup.events", "frozen 0"), "CONT: thawed");

	/* Stopped processes die on KILL, by both backends that can send it. */
	cmd_run(&c, CMD_MS, "-s", "SIGSTOP", s.target, NULL);
	cmd_free(&c);
	is_int(count_state(pids, N, 'T', 3000), N, "STOP again: all stopped");
	cmd_run(&c, CMD_MS, "-j", "-b", "freeze", pids[2] ? c1 : s.target, NULL);
	exit_is(&c, 0);
	json_is(&c, "d['targets'][0]['emptied']", "true");
	cmd_free(&c);
	ok(sb_killed_by(pids[2], SIGKILL, 5000), "KILL (freeze backend): the stopped process died");
	cmd_run(&c, CMD_MS, "-j", s.target, NULL);
	exit_is(&c, 0);
	json_is(&c, "d['targets'][0]['emptied']", "true");
	cmd_free(&c);
	ok(sb_killed_by(pids[0], SIGKILL, 5000) && sb_killed_by(pids[1], SIGKILL, 5000),
	   "KILL (auto): both stopped processes died");
out:
	free(c1);
	scene_end(&s);
}

int main(void)
{
	box = sb_start(300);

	test_exactly_once_cli();
	test_exactly_once_lib();
	test_kernel_backend_term();
	test_stop_cont();

	return sb_finish(box);
}
