// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Issue 3 against the real kernel, through the command and the library:
 * any signal (-s, -l, -L), the freeze backend's snapshot semantics (every
 * process in the subtree at freeze time gets the signal exactly once, then
 * the tree is thawed), SIGSTOP/SIGCONT, escalation (--timeout) and waiting
 * (-w, --no-wait).
 *
 * Signals are observed, not assumed: the processes are recorders whose
 * SA_SIGINFO handlers write (pid, signal, sender) into a pipe (tests/cmd.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgkill.h"
#include "cmd.h"
#include "sandbox.h"
#include "tap.h"

#define CMD_MS 60000	/* deadline for one run of the command (loaded CI machines) */
#define MAX_RECS 256

static char *box;	/* the v2 sandbox */

/* ---- -s: the signal that arrives is the one named ---- */

static void test_signal_spellings(void)
{
	static const struct {
		const char *arg;
		int sig;
		const char *json;
	} cases[] = {
		{ "TERM", SIGTERM, "[\"TERM\"]" },
		{ "SIGTERM", SIGTERM, "[\"TERM\"]" },
		{ "term", SIGTERM, "[\"TERM\"]" },
		{ "sigterm", SIGTERM, "[\"TERM\"]" },
		{ "15", SIGTERM, "[\"TERM\"]" },
		{ "USR2", SIGUSR2, "[\"USR2\"]" },
		{ "RTMIN+2", 0, "[\"RTMIN+2\"]" },	/* SIGRTMIN + 2 */
		{ "rtmax-1", -1, NULL },		/* SIGRTMAX - 1 */
	};
	struct scene s;

	if (!scene_start(&s, box, "spellings"))
		goto out;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int want = cases[i].sig == 0 ? SIGRTMIN + 2 : cases[i].sig < 0 ? SIGRTMAX - 1 : cases[i].sig;
		struct rec_spec spec = { .cgroup = s.target,
					 .record = { SIGTERM, SIGUSR2, SIGRTMIN + 2, SIGRTMAX - 1 } };
		struct rec v[MAX_RECS];
		struct cmd c;
		size_t n;
		pid_t pid;

		rec_drain();
		pid = rec_spawn(&spec);
		if (!ok(pid > 0, "-s %s: spawn a recorder", cases[i].arg)) {
			diag("rec_spawn: %s", strerror(-pid));
			break;
		}
		cmd_run(&c, CMD_MS, "-j", "-s", cases[i].arg, s.target, NULL);
		exit_is(&c, 0);
		n = rec_collect(v, MAX_RECS, 1, 5000, 200);
		if (is_int(n, 1, "-s %s: exactly one signal arrived", cases[i].arg)) {
			is_int(v[0].sig, want, "-s %s: it is signal %d", cases[i].arg, want);
			is_int(v[0].sender, c.pid, "-s %s: sent by the cgkill process", cases[i].arg);
		}
		if (cases[i].json)
			json_is(&c, "d['targets'][0]['signals']", cases[i].json);
		ok(sb_alive(pid), "-s %s: the recorder handled it and lives", cases[i].arg);
		kill(pid, SIGKILL);
		sb_wait_reaped(pid, 5000);
		cmd_free(&c);
	}
out:
	scene_end(&s);
}

static void test_signal_invalid(void)
{
	static const char *const bad[] = {
		"FOO", "SIGFOO", "0", "65", "RTMIN+99", "RTMAX-99", "", "-1", "32", "TERM1", "9x",
	};
	struct rec v[MAX_RECS];
	struct scene s;
	pid_t pid;

	if (!scene_start(&s, box, "invalid"))
		goto out;
	rec_drain();
	pid = rec_spawn(&(struct rec_spec){ .cgroup = s.target,
					    .record = { SIGTERM, SIGUSR1, SIGHUP } });
	if (!ok(pid > 0, "invalid signals: spawn a recorder"))
		goto out;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct cmd c;

		cmd_run(&c, CMD_MS, "-s", bad[i], s.target, NULL);
		exit_is(&c, 2);
		ok(strstr(c.err, "unknown signal") != NULL, "-s '%s': the message names the problem",
		   bad[i]);
		cmd_free(&c);
	}
	{
		struct cmd c;

		cmd_run(&c, CMD_MS, "--timeout", "1s", "BOGUS", s.target, NULL);
		exit_is(&c, 2);
		ok(strstr(c.err, "unknown signal: BOGUS") != NULL, "--timeout 1s BOGUS: message");
		cmd_free(&c);
	}
	is_int(rec_collect(v, MAX_RECS, 1, 300, 0), 0, "invalid signals: nothing was signalled");
	ok(sb_alive(pid), "invalid signals: the process is alive");
out:
	scene_end(&s);
}

/* ---- -l and -L ---- */

/* Does every line but the last hold n blank-separated words, the last at
 * most n? (32 and 33 have no name: counting by number leaves gaps.) */
static bool rows_of(const char *text, unsigned n)
{
	bool good = true;

	for (const char *l = text; *l;) {
		const char *end = strchr(l, '\n');
		unsigned words = 0;
		bool last;

		if (!end)
			return false;
		last = end[1] == '\0';
		for (const char *p = l; p < end; p++)
			words += *p != ' ' && (p == l || p[-1] == ' ');
		good &= last ? words <= n : words == n;
		l = end + 1;
	}
	return good;
}

static void test_list(void)
{
	static const struct {
		const char *arg, *want;
	} conv[] = {
		{ "9", "KILL\n" },	{ "KILL", "9\n" },	  { "137", "KILL\n" },
		{ "143", "TERM\n" },	{ "sigterm", "15\n" },	  { "15", "TERM\n" },
		{ "HUP", "1\n" },	{ "129", "HUP\n" },
	};
	char buf[32], want[64];
	struct cmd c;
	unsigned named = 0, missing = 0, wrong = 0;

	for (size_t i = 0; i < sizeof(conv) / sizeof(conv[0]); i++) {
		cmd_run(&c, CMD_MS, "-l", conv[i].arg, NULL);
		exit_is(&c, 0);
		is_str(c.out, conv[i].want, "-l %s", conv[i].arg);
		cmd_free(&c);
	}
	snprintf(want, sizeof(want), "%d\n", SIGRTMIN + 2);
	cmd_run(&c, CMD_MS, "-l", "RTMIN+2", NULL);
	is_str(c.out, want, "-l RTMIN+2");
	cmd_free(&c);
	snprintf(buf, sizeof(buf), "%d", SIGRTMIN + 2);
	cmd_run(&c, CMD_MS, "-l", buf, NULL);
	is_str(c.out, "RTMIN+2\n", "-l %s", buf);
	cmd_free(&c);
	cmd_run(&c, CMD_MS, "--list=KILL", NULL);
	is_str(c.out, "9\n", "--list=KILL");
	cmd_free(&c);
	cmd_run(&c, CMD_MS, "-l", "NOSUCH", NULL);
	exit_is(&c, 2);
	ok(strstr(c.err, "unknown signal") != NULL, "-l NOSUCH: message");
	cmd_free(&c);

	/* -l alone: every name, separated by blanks. */
	cmd_run(&c, CMD_MS, "-l", NULL);
	exit_is(&c, 0);
	for (int sig = 1; sig <= SIGRTMAX; sig++) {
		const char *name = cgk_signal_name(sig, buf, sizeof(buf));
		char *copy, *tok, *save = NULL;
		unsigned seen = 0;

		if (!name)
			continue;
		copy = strdup(c.out);
		for (tok = strtok_r(copy, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
			seen += strcmp(tok, name) == 0;
		free(copy);
		missing += seen != 1;
	}
	is_int(missing, 0, "-l lists every signal name once");
	ok(rows_of(c.out, 8), "-l: rows of 8 names, only the last one shorter");
	cmd_free(&c);

	/* -L: "NUM NAME" pairs, every signal from 1 to SIGRTMAX that has a
	 * name (32 and 33 are glibc's own), each with its number. */
	cmd_run(&c, CMD_MS, "-L", NULL);
	exit_is(&c, 0);
	{
		char *copy = strdup(c.out), *tok, *save = NULL;
		bool seen[256];
		unsigned pairs = 0;

		memset(seen, 0, sizeof(seen));
		for (tok = strtok_r(copy, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
			int num = atoi(tok);
			char *nm = strtok_r(NULL, " \n", &save);
			const char *exp = num > 0 && num <= SIGRTMAX ? cgk_signal_name(num, buf, sizeof(buf)) : NULL;

			pairs++;
			if (!nm || !exp || strcmp(nm, exp) != 0 || seen[num])
				wrong++;
			else
				seen[num] = true;
		}
		for (int sig = 1; sig <= SIGRTMAX; sig++) {
			if (cgk_signal_name(sig, buf, sizeof(buf))) {
				named++;
				if (!seen[sig])
					missing++;
			}
		}
		free(copy);
		is_int(wrong, 0, "-L: every entry is a number and its name");
		is_int(missing, 0, "-L: every named signal 1..SIGRTMAX (%d) is in the table", SIGRTMAX);
		is_int(pairs, named, "-L: %u entries", named);
		ok(rows_of(c.out, 14), "-L: rows of 7 entries, only the last one shorter");
		ok(named >= 31 + (unsigned)(SIGRTMAX - SIGRTMIN + 1) - 1,
		   "-L: the standard and all real-time signals have names (%u)", named);
	}
	cmd_free(&c);
}

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
		pids[np] = rec_spawn(&(struct rec_spec){ .cgroup = i < 3 ? s.target : i < 5 ? a : b,
							 .record = { SIGUSR1 },
							 .threads = i % 3 == 1 ? 3 : 0 });
		if (pids[np] > 0)
			np++;
	}
	forker = rec_spawn(&(struct rec_spec){ .cgroup = a, .record = { SIGUSR1 },
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
	ok(file_has(s.target, "cgroup.freeze", "0"), "once: cgroup.freeze of T is 0 again");
	ok(file_has(s.target, "cgroup.events", "frozen 0"), "once: T: frozen 0");
	ok(file_has(a, "cgroup.events", "frozen 0"), "once: T/a: frozen 0");
	ok(file_has(b, "cgroup.events", "frozen 0"), "once: T/a/b: frozen 0");
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
	struct cgk_options o = CGK_OPTIONS_INIT;
	struct cgk_report rep;
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
	o.signal = SIGUSR2;
	o.wait_ms = 0;
	r = cgk_kill(s.target, &o, &rep);
	is_int(r, 0, "library: cgk_kill(SIGUSR2) returns 0");
	is_int(rep.backend, CGK_BACKEND_FREEZE, "library: auto took the freeze backend");
	is_int(rep.fell_back_from, CGK_BACKEND_AUTO, "library: no fallback (kernel does not apply)");
	is_int(rep.n_signals, 1, "library: one signal");
	is_int(rep.signals[0], SIGUSR2, "library: it is SIGUSR2");
	is_int(rep.signalled, N, "library: %d signalled", N);
	is_int(rep.cgroups, 2, "library: 2 cgroups");
	ok(!rep.waited, "library: wait_ms 0: did not wait");
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
	ok(file_has(s.target, "cgroup.events", "frozen 0"), "library: thawed");
	cgk_report_free(&rep);

	/* The kernel backend cannot send anything but SIGKILL. */
	o.backend = CGK_BACKEND_KERNEL;
	o.signal = SIGTERM;
	r = cgk_kill(s.target, &o, &rep);
	is_int(r, -EOPNOTSUPP, "library: kernel backend with SIGTERM: EOPNOTSUPP");
	ok(strstr(rep.message, "SIGKILL only") != NULL, "library: the message says why: %s",
	   rep.message);
	is_int(rep.signalled, 0, "library: nothing signalled");
	is_int(rep.n_signals, 0, "library: no signal reported as sent");
	is_int(rep.backend, CGK_BACKEND_AUTO, "library: no backend reported");
	cgk_report_free(&rep);
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
	ok(file_has(s.target, "cgroup.freeze", "0"), "-b kernel -s TERM: not frozen");
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
	ok(file_has(s.target, "cgroup.events", "frozen 0"), "STOP: the cgroup is thawed");
	ok(file_has(c1, "cgroup.events", "frozen 0"), "STOP: the child cgroup is thawed");
	sb_sleep_ms(300);
	is_int(count_state(pids, N, 'T', 0), N, "STOP: still stopped 300 ms later");

	cmd_run(&c, CMD_MS, "-s", "CONT", s.target, NULL);
	exit_is(&c, 0);
	cmd_free(&c);
	is_int(count_state(pids, N, 'S', 3000), N, "CONT: all running again (state S)");
	ok(file_has(s.target, "cgroup.events", "frozen 0"), "CONT: thawed");

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

/* ---- escalation ---- */

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
	ok(when[0] >= 950 && when[0] < 8000, "escalate: ... after about 1 s (%llu ms)",
	   (unsigned long long)when[0]);
	ok(c.ms >= 1000 && c.ms < 10000, "escalate: cgkill returned in %llu ms",
	   (unsigned long long)c.ms);
	json_is(&c, "d['targets'][0]['signals']", "[\"TERM\", \"KILL\"]");
	json_is(&c, "d['targets'][0]['emptied']", "true");
	json_is(&c, "d['targets'][0]['waited']", "true");
	json_is(&c, "d['targets'][0]['error']", "null");
	json_is(&c, "d['targets'][0]['survivors']", "[]");
	json_is(&c, "1000 <= d['targets'][0]['signal_ms'] < 8000", "true");
	json_is(&c, "d['targets'][0]['signal_ms'] <= d['targets'][0]['empty_ms'] < 10000", "true");
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
	a = rec_spawn(&(struct rec_spec){ .cgroup = s.target, .record = { SIGTERM, SIGUSR1 } });
	b = rec_spawn(&(struct rec_spec){ .cgroup = s.target, .ignore = { SIGTERM, SIGUSR1 } });
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
	ok(when[0] >= 950 && when[1] >= 950 && when[0] < 8000 && when[1] < 8000,
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
	struct cgk_options o = CGK_OPTIONS_INIT;
	struct cgk_report rep;
	struct scene s;
	pid_t pids[2];
	int r;

	if (!scene_start(&s, box, "esclib"))
		goto out;
	pids[0] = term_ignorer(s.target);
	pids[1] = term_exiter(s.target);
	if (!ok(pids[0] > 0 && pids[1] > 0, "library escalation: spawn"))
		goto out;
	o.signal = SIGTERM;
	o.n_escalations = 1;
	o.escalations[0] = (struct cgk_escalation){ .after_ms = 500, .signal = SIGKILL };
	r = cgk_kill(s.target, &o, &rep);
	is_int(r, 0, "library escalation: returns 0");
	is_int(rep.n_signals, 2, "library escalation: two signals");
	ok(rep.signals[0] == SIGTERM && rep.signals[1] == SIGKILL, "library escalation: TERM, KILL");
	is_int(rep.backends[0], CGK_BACKEND_FREEZE, "library escalation: TERM via the freezer");
	is_int(rep.backends[1], has_cgroup_kill(s.target) ? CGK_BACKEND_KERNEL : CGK_BACKEND_FREEZE,
	       "library escalation: KILL via %s", has_cgroup_kill(s.target) ? "cgroup.kill" : "the freezer");
	is_int(rep.backend, rep.backends[1], "library escalation: backend is that of the last signal");
	ok(rep.waited && rep.emptied, "library escalation: waited, emptied");
	ok(rep.signal_ms >= 500 && rep.empty_ms >= rep.signal_ms,
	   "library escalation: signal_ms %llu >= 500, empty_ms %llu",
	   (unsigned long long)rep.signal_ms, (unsigned long long)rep.empty_ms);
	ok(sb_killed_by(pids[0], SIGKILL, 5000), "library escalation: the TERM-ignorer died of KILL");
	{
		int st = sb_wait_reaped(pids[1], 5000);

		if (!ok(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
			"library escalation: the other exited on TERM"))
			diag("wait status %#x", st);
	}
	cgk_report_free(&rep);
out:
	scene_end(&s);
}

/* ---- waiting ---- */

static void test_waiting(void)
{
	struct scene s;
	pid_t pids[2], ign;
	struct cmd c = { 0 };
	char pidtxt[16];

	if (!scene_start(&s, box, "wait"))
		goto out;

	/* KILL waits by default: empty when cgkill returns. */
	if (!is_int(sb_spawn_n(2, SB_SLEEP, NULL, s.target, pids), 0, "wait: spawn 2 sleepers"))
		goto out;
	cmd_run(&c, CMD_MS, "-j", s.target, NULL);
	exit_is(&c, 0);
	json_is(&c, "d['targets'][0]['waited']", "true");
	json_is(&c, "d['targets'][0]['emptied']", "true");
	json_is(&c, "isinstance(d['targets'][0]['empty_ms'], int)", "true");
	ok(file_has(s.target, "cgroup.events", "populated 0"),
	   "KILL waits by default: populated 0 as soon as cgkill returns");
	cmd_free(&c);
	sb_reap();

	/* --no-wait: back once the signal is sent. */
	sb_spawn_n(2, SB_SLEEP, NULL, s.target, pids);
	cmd_run(&c, CMD_MS, "-j", "--no-wait", s.target, NULL);
	exit_is(&c, 0);
	json_is(&c, "d['targets'][0]['waited']", "false");
	json_is(&c, "d['targets'][0]['emptied']", "false");
	json_is(&c, "d['targets'][0]['empty_ms']", "null");
	cmd_free(&c);
	ok(sb_killed_by(pids[0], SIGKILL, 5000) && sb_killed_by(pids[1], SIGKILL, 5000),
	   "--no-wait: the processes died anyway");
	is_int(sb_wait_empty(s.target, 5000), 0, "--no-wait: the cgroup empties");

	/* -s TERM alone does not wait: a TERM-ignorer does not hold it up. */
	ign = term_ignorer(s.target);
	if (!ok(ign > 0, "wait: spawn a process that ignores TERM"))
		goto out;
	cmd_run(&c, CMD_MS, "-j", "-s", "TERM", s.target, NULL);
	exit_is(&c, 0);
	json_is(&c, "d['targets'][0]['waited']", "false");
	/* Waiting would take the default 10 s and exit 3. */
	ok(c.ms < 8000, "-s TERM: returned at once (%llu ms)", (unsigned long long)c.ms);
	ok(sb_alive(ign), "-s TERM: the ignorer lives");
	cmd_free(&c);

	/* --timeout waits by default. */
	cmd_run(&c, CMD_MS, "-j", "-s", "TERM", "--timeout", "300ms", "KILL", s.target, NULL);
	exit_is(&c, 0);
	json_is(&c, "d['targets'][0]['waited']", "true");
	json_is(&c, "d['targets'][0]['emptied']", "true");
	cmd_free(&c);
	ok(sb_killed_by(ign, SIGKILL, 5000), "--timeout: the ignorer died of KILL");

	/* --wait=2s with an ignorer: exit 3 after about 2 s, survivors told. */
	ign = term_ignorer(s.target);
	if (!ok(ign > 0, "wait: spawn another TERM-ignorer"))
		goto out;
	snprintf(pidtxt, sizeof(pidtxt), "%d", (int)ign);
	cmd_run(&c, CMD_MS, "-j", "-s", "TERM", "--wait=2s", s.target, NULL);
	exit_is(&c, 3);
	ok(c.ms >= 1900 && c.ms < 9000, "--wait=2s: gave up after about 2 s (%llu ms)",
	   (unsigned long long)c.ms);
	json_is(&c, "d['targets'][0]['waited']", "true");
	json_is(&c, "d['targets'][0]['emptied']", "false");
	json_is(&c, "d['targets'][0]['error']['errno']", "ETIMEDOUT");
	{
		char want[64];

		snprintf(want, sizeof(want), "[[%d, \"S\"]]", (int)ign);
		json_is(&c, "[[p['pid'], p['state']] for p in d['targets'][0]['survivors']]", want);
	}
	json_is(&c, "d['targets'][0]['survivors'][0]['comm']", "test-signals");
	/* On stderr: the message, then one line a survivor with its pid,
	 * state and comm. */
	ok(strstr(c.err, "left after waiting") != NULL, "--wait=2s: stderr says processes are left");
	{
		char line[64];

		snprintf(line, sizeof(line), "%s S . test-signals", pidtxt);
		is_int(count_rows(c.err, line), 1, "--wait=2s: the survivor on stderr: '%s'", line);
	}
	cmd_free(&c);

	/* The short form with an attached duration. */
	cmd_run(&c, CMD_MS, "-s", "TERM", "-w1s", s.target, NULL);
	exit_is(&c, 3);
	ok(c.ms >= 900 && c.ms < 8000, "-w1s: gave up after about 1 s (%llu ms)",
	   (unsigned long long)c.ms);
	cmd_free(&c);
	ok(sb_alive(ign), "--wait=2s: the ignorer is still alive (TERM only)");
out:
	cmd_free(&c);
	scene_end(&s);
}

int main(void)
{
	sb_init(900);
	no_plan();
	rec_init();
	test_list();
	sb_require_root();
	if (!sb_mount(SB_V2)) {
		skip_all("no cgroup v2 mount");
	}
	box = sb_create(SB_V2);
	if (!box)
		bail_out("cannot create a v2 sandbox: %m");
	note("sandbox %s, command %s", box, cmd_path());
	if (!have_python())
		diag("python3 is missing: JSON checks are skipped");

	test_signal_spellings();
	test_signal_invalid();
	test_exactly_once_cli();
	test_exactly_once_lib();
	test_kernel_backend_term();
	test_stop_cont();
	test_escalation();
	test_escalation_steps();
	test_escalation_not_needed();
	test_escalation_lib();
	test_waiting();

	ok(sb_destroy(box) == 0, "sandbox removed");
	free(box);
	return done_testing();
}
