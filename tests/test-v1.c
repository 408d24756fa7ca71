// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What is special about the v1-freeze and loop backends, on the real kernel:
 * cgroups left frozen by someone else, frozen descendants and ancestors,
 * what freezer state a non-KILL signal leaves, pids.max clamped and put back
 * (also when the backend fails half-way), fork bombs again and again, and
 * the loop on v1 pids and on v2. Sentinels in the parent and in a sibling
 * of every target must survive.
 *
 * Fork bombs run only under a v1 pids limit set before they start.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "sandbox.h"
#include "tap.h"

#define DEADLINE_MS 10000
#define BOMB_ROUNDS 10
#define BOMB_PIDS_MAX 200

/* ---- helpers ---- */

static int do_kill(const char *path, enum cgk_backend b, int sig, uint64_t wait_ms,
		   struct cgk_report *rep)
{
	struct cgk_options o = CGK_OPTIONS_INIT;
	int r;

	o.backend = b;
	o.signal = sig;
	o.wait_ms = wait_ms;
	r = cgk_kill(path, &o, rep);
	if (r < 0)
		note("cgk_kill(%s, %s) = %d: %s", path, cgk_backend_name(b), r, rep->message);
	return r;
}

/* The first line of dir/file, without its newline; "" on error. */
static const char *first_line(const char *dir, const char *file, char *buf, size_t size)
{
	if (sb_read(dir, file, buf, size) < 0)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static bool state_is(const char *dir, const char *want)
{
	char buf[64];

	return strcmp(first_line(dir, "freezer.state", buf, sizeof(buf)), want) == 0;
}

/* Freeze a v1 cgroup as "someone else" would, and wait (bounded) for it. */
static bool freeze_v1(const char *dir)
{
	uint64_t deadline = sb_now_ms() + 5000;

	if (sb_write(dir, "freezer.state", "FROZEN") < 0)
		return false;
	while (!state_is(dir, "FROZEN")) {
		if (sb_now_ms() > deadline)
			return false;
		sb_sleep_ms(5);
	}
	return true;
}

/* sb_spawn() returns once a child has joined its cgroups, before it sets up
 * its signal handling: wait (bounded) until sig is caught or ignored. */
static bool handles(pid_t pid, int sig)
{
	uint64_t deadline = sb_now_ms() + 5000;
	char dir[64], buf[4096];

	snprintf(dir, sizeof(dir), "/proc/%d", (int)pid);
	while (sb_now_ms() < deadline) {
		unsigned long long cgt = 0, ign = 0;
		char *p;

		if (sb_read(dir, "status", buf, sizeof(buf)) < 0)
			return false;
		if ((p = strstr(buf, "\nSigIgn:")))
			ign = strtoull(p + 8, NULL, 16);
		if ((p = strstr(buf, "\nSigCgt:")))
			cgt = strtoull(p + 8, NULL, 16);
		if ((cgt | ign) & (1ULL << (sig - 1)))
			return true;
		sb_sleep_ms(1);
	}
	return false;
}

/* sb_spawn_n() of n processes that handle SIGTERM, ready to get it. */
static int spawn_term(unsigned n, enum sb_behaviour what, const char *cg, pid_t *pids)
{
	int r = sb_spawn_n(n, what, NULL, cg, pids);

	for (unsigned i = 0; r == 0 && i < n; i++)
		if (!handles(pids[i], SIGTERM))
			r = -ETIMEDOUT;
	return r;
}

static unsigned count_killed(const pid_t *pids, unsigned n, int sig)
{
	unsigned k = 0;

	for (unsigned i = 0; i < n; i++)
		k += sb_killed_by(pids[i], sig, 5000);
	return k;
}

static unsigned count_exited0(const pid_t *pids, unsigned n)
{
	unsigned k = 0;

	for (unsigned i = 0; i < n; i++) {
		int st = sb_wait_reaped(pids[i], 5000);

		k += st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
	}
	return k;
}

static unsigned count_alive(const pid_t *pids, unsigned n)
{
	unsigned k = 0;

	for (unsigned i = 0; i < n; i++)
		k += sb_alive(pids[i]);
	return k;
}

/* What is left in dir (not recursive), and whether it has a SIGKILL
 * pending (signalled, dying slowly) or not (missed: escaped the kill).
 * Returns how many were missed. */
static unsigned dump_left(const char *dir)
{
	char buf[65536], *save = NULL;
	unsigned missed = 0;

	if (sb_read(dir, "cgroup.procs", buf, sizeof(buf)) < 0)
		return 0;
	for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char pdir[64], st[4096], stat[512], wchan[64] = "", *p, *q;
		unsigned long long pnd = 0, shd = 0;

		snprintf(pdir, sizeof(pdir), "/proc/%s", l);
		if (sb_read(pdir, "status", st, sizeof(st)) < 0 ||
		    sb_read(pdir, "stat", stat, sizeof(stat)) < 0)
			continue;
		if ((p = strstr(st, "\nSigPnd:")))
			pnd = strtoull(p + 8, NULL, 16);
		if ((p = strstr(st, "\nShdPnd:")))
			shd = strtoull(p + 8, NULL, 16);
		sb_read(pdir, "wchan", wchan, sizeof(wchan));
		q = strrchr(stat, ')');
		if (!((pnd | shd) & (1ULL << (SIGKILL - 1))))
			missed++;
		diag("left in %s: pid %s state %c wchan %s SIGKILL %s", dir, l, q ? q[2] : '?',
		     wchan, (pnd | shd) & (1ULL << (SIGKILL - 1)) ? "pending" : "NOT pending");
	}
	return missed;
}

/* A scene: box/<name> holding a sentinel, its target T and a sibling S with
 * a sentinel. */
struct scene {
	char *parent, *target, *sibling;
	struct sb_sentinels sent;
};

static bool scene_start(struct scene *s, const char *box, const char *name)
{
	char rel[128];

	memset(s, 0, sizeof(*s));
	s->parent = sb_mkdir(box, name);
	snprintf(rel, sizeof(rel), "%s/T", name);
	s->target = sb_mkdir(box, rel);
	snprintf(rel, sizeof(rel), "%s/S", name);
	s->sibling = sb_mkdir(box, rel);
	if (!s->parent || !s->target || !s->sibling)
		return ok(false, "%s: create the cgroups: %m", name);
	return is_int(sb_sentinels_start(&s->sent, s->parent, s->sibling), 0,
		      "%s: start sentinels", name);
}

static void scene_end(struct scene *s, const char *name)
{
	if (s->sent.n)
		sb_sentinels_check(&s->sent, name);
	if (s->parent && sb_destroy(s->parent) < 0)
		diag("%s: cleanup of %s failed", name, s->parent);
	sb_reap();
	free(s->parent);
	free(s->target);
	free(s->sibling);
}

/* ---- probes and auto ---- */

static void test_probes(const char *fz, const char *pd, const char *v2)
{
	struct { const char *box; enum cgk_backend forced; const char *name; } refuse[] = {
		{ v2, CGK_BACKEND_V1_FREEZE, "v1-freeze on v2" },
		{ pd, CGK_BACKEND_V1_FREEZE, "v1-freeze on v1 pids" },
	};
	struct { const char *box; enum cgk_backend want; const char *name; } pick[] = {
		{ fz, CGK_BACKEND_V1_FREEZE, "auto on v1 freezer" },
		{ pd, CGK_BACKEND_LOOP, "auto on v1 pids" },
	};

	for (size_t i = 0; i < sizeof(refuse) / sizeof(refuse[0]); i++) {
		struct cgk_report rep;
		struct scene s;
		pid_t pid;
		int r;

		if (!refuse[i].box) {
			skip("%s: hierarchy missing", refuse[i].name);
			continue;
		}
		if (!scene_start(&s, refuse[i].box, "probe"))
			goto next;
		pid = sb_sleeper(s.target);
		r = do_kill(s.target, refuse[i].forced, SIGKILL, 1000, &rep);
		is_int(r, -EOPNOTSUPP, "%s: refused with EOPNOTSUPP", refuse[i].name);
		ok(strstr(rep.message, "v1-freeze") != NULL, "%s: message names the backend: %s",
		   refuse[i].name, rep.message);
		ok(sb_alive(pid), "%s: nothing signalled", refuse[i].name);
		cgk_report_free(&rep);
next:
		scene_end(&s, refuse[i].name);
	}
	for (size_t i = 0; i < sizeof(pick) / sizeof(pick[0]); i++) {
		struct cgk_report rep;
		struct scene s;
		pid_t pid;
		int r;

		if (!pick[i].box) {
			skip("%s: hierarchy missing", pick[i].name);
			continue;
		}
		if (!scene_start(&s, pick[i].box, "auto"))
			goto next2;
		pid = sb_sleeper(s.target);
		r = do_kill(s.target, CGK_BACKEND_AUTO, SIGKILL, DEADLINE_MS, &rep);
		is_int(r, 0, "%s: killed", pick[i].name);
		is_str(cgk_backend_name(rep.backend), cgk_backend_name(pick[i].want),
		       "%s: picks %s", pick[i].name, cgk_backend_name(pick[i].want));
		ok(rep.emptied && sb_killed_by(pid, SIGKILL, 5000), "%s: the sleeper died",
		   pick[i].name);
		cgk_report_free(&rep);
next2:
		scene_end(&s, pick[i].name);
	}
}

/* ---- v1 freezer states ---- */

/* A target frozen by someone else: its tasks must still die, and the
 * cgroup must not be left frozen. */
static void test_user_frozen(const char *fz, enum cgk_backend b)
{
	enum { N = 5 };
	char name[64];
	struct cgk_report rep;
	struct scene s;
	pid_t pids[N];
	int r;

	snprintf(name, sizeof(name), "frozen target (%s)", cgk_backend_name(b));
	if (!scene_start(&s, fz, "frozen"))
		goto out;
	if (!is_int(sb_spawn_n(N, SB_SLEEP, NULL, s.target, pids), 0, "%s: spawn", name))
		goto out;
	if (!ok(freeze_v1(s.target), "%s: someone else froze it", name))
		goto out;
	r = do_kill(s.target, b, SIGKILL, DEADLINE_MS, &rep);
	is_int(r, 0, "%s: cgk_kill returns 0", name);
	is_int(rep.backend, CGK_BACKEND_V1_FREEZE, "%s: served by v1-freeze", name);
	ok(rep.emptied, "%s: emptied (%llu ms)", name, (unsigned long long)rep.empty_ms);
	is_int(count_killed(pids, N, SIGKILL), N, "%s: all %d died of SIGKILL", name, N);
	ok(state_is(s.target, "THAWED"), "%s: not left frozen", name);
	cgk_report_free(&rep);
out:
	scene_end(&s, name);
}

/* T, T/a, T/a/b with b frozen on its own, and T/c frozen as well. */
static void test_frozen_descendant(const char *fz)
{
	static const struct { const char *where; unsigned n; } procs[] = {
		{ "", 2 }, { "a", 2 }, { "a/b", 3 }, { "c", 1 },
	};
	const char *name = "frozen descendants";
	char *b = NULL, *c = NULL, *a = NULL;
	struct cgk_report rep;
	struct scene s;
	pid_t pids[8];
	unsigned np = 0;
	int r;

	if (!scene_start(&s, fz, "descendant"))
		goto out;
	b = sb_mkdir(s.target, "a/b");
	c = sb_mkdir(s.target, "c");
	a = sb_path(s.target, "a");
	for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]); i++) {
		char *d = sb_path(s.target, procs[i].where);

		r = sb_spawn_n(procs[i].n, SB_SLEEP, NULL, d, pids + np);
		free(d);
		if (!is_int(r, 0, "%s: spawn %u in T/%s", name, procs[i].n, procs[i].where))
			goto out;
		np += procs[i].n;
	}
	if (!ok(freeze_v1(b) && freeze_v1(c), "%s: T/a/b and T/c frozen by someone else", name))
		goto out;
	r = do_kill(s.target, CGK_BACKEND_V1_FREEZE, SIGKILL, DEADLINE_MS, &rep);
	is_int(r, 0, "%s: cgk_kill returns 0", name);
	ok(rep.emptied, "%s: emptied", name);
	is_int(rep.signalled, np, "%s: %u signalled", name, np);
	is_int(count_killed(pids, np, SIGKILL), np, "%s: all %u died of SIGKILL", name, np);
	ok(state_is(s.target, "THAWED") && state_is(a, "THAWED") && state_is(b, "THAWED") &&
	   state_is(c, "THAWED"), "%s: nothing left frozen", name);
	cgk_report_free(&rep);
out:
	free(a);
	free(b);
	free(c);
	scene_end(&s, name);
}

/* Frozen from above the target: our thaw cannot undo it, so the tasks
 * cannot die yet; the backend says so instead of timing out. */
static void test_frozen_ancestor(const char *fz)
{
	enum { N = 3 };
	const char *name = "frozen ancestor";
	struct cgk_report rep;
	struct scene s;
	pid_t pids[N];
	char *t = NULL;
	int r;

	if (!scene_start(&s, fz, "ancestor"))
		goto out;
	t = sb_mkdir(s.target, "t");
	if (!t || !is_int(sb_spawn_n(N, SB_SLEEP, NULL, t, pids), 0, "%s: spawn", name))
		goto out;
	if (!ok(freeze_v1(s.target), "%s: the parent of the target is frozen", name))
		goto out;
	r = do_kill(t, CGK_BACKEND_V1_FREEZE, SIGKILL, 2000, &rep);
	is_int(r, -EBUSY, "%s: EBUSY", name);
	ok(strstr(rep.message, "ancestor") != NULL, "%s: message says why: %s", name, rep.message);
	ok(state_is(s.target, "FROZEN"), "%s: the ancestor is not thawed by us", name);
	sb_write(s.target, "freezer.state", "THAWED");
	is_int(count_killed(pids, N, SIGKILL), N, "%s: once thawed, all %d die of SIGKILL",
	       name, N);
	cgk_report_free(&rep);
out:
	free(t);
	scene_end(&s, name);
}

/* SIGTERM keeps the user's freezer state: a frozen target stays frozen, a
 * frozen descendant stays frozen; the tasks find the signal on thaw. */
static void test_term_keeps_state(const char *fz)
{
	enum { N = 3 };
	const char *name = "TERM keeps freezer state";
	struct cgk_report rep;
	struct scene s;
	pid_t top[N], low[N];
	char *d = NULL;
	int r;

	if (!scene_start(&s, fz, "term"))
		goto out;
	d = sb_mkdir(s.target, "d");
	if (!d || spawn_term(N, SB_EXIT_ON_TERM, s.target, top) < 0 ||
	    spawn_term(N, SB_EXIT_ON_TERM, d, low) < 0) {
		ok(false, "%s: spawn", name);
		goto out;
	}
	/* 1: target not frozen, descendant frozen by the user. */
	if (!ok(freeze_v1(d), "%s: T/d frozen by someone else", name))
		goto out;
	r = do_kill(s.target, CGK_BACKEND_V1_FREEZE, SIGTERM, 0, &rep);
	is_int(r, 0, "%s: TERM sent", name);
	is_int(rep.signalled, 2 * N, "%s: %d signalled", name, 2 * N);
	ok(state_is(s.target, "THAWED"), "%s: the target is thawed again", name);
	ok(state_is(d, "FROZEN"), "%s: the user's frozen descendant stays frozen", name);
	is_int(count_exited0(top, N), N, "%s: the target's %d exited on TERM", name, N);
	is_int(count_alive(low, N), N, "%s: the frozen descendant's %d wait, frozen", name, N);
	sb_write(d, "freezer.state", "THAWED");
	is_int(count_exited0(low, N), N, "%s: once thawed, they exit on TERM", name);
	cgk_report_free(&rep);

	/* 2: the target itself frozen by the user. */
	if (spawn_term(N, SB_EXIT_ON_TERM, s.target, top) < 0 ||
	    !ok(freeze_v1(s.target), "%s: target frozen by someone else", name))
		goto out;
	r = do_kill(s.target, CGK_BACKEND_V1_FREEZE, SIGTERM, 0, &rep);
	is_int(r, 0, "%s: TERM sent to a frozen target", name);
	ok(state_is(s.target, "FROZEN"), "%s: the frozen target stays frozen", name);
	sb_sleep_ms(50);
	is_int(count_alive(top, N), N, "%s: its %d are still there, frozen", name, N);
	sb_write(s.target, "freezer.state", "THAWED");
	is_int(count_exited0(top, N), N, "%s: once thawed, they exit on TERM", name);
	cgk_report_free(&rep);
out:
	free(d);
	scene_end(&s, name);
}

/* TERM to processes that ignore it, then KILL after 200 ms. */
static void test_escalation(const char *box, enum cgk_backend b, const char *hier)
{
	enum { N = 4 };
	struct cgk_options o = CGK_OPTIONS_INIT;
	struct cgk_report rep;
	struct scene s;
	char name[64];
	pid_t pids[N];
	int r;

	snprintf(name, sizeof(name), "%s/%s TERM then KILL", cgk_backend_name(b), hier);
	if (!scene_start(&s, box, "escalate"))
		goto out;
	if (!is_int(spawn_term(N, SB_IGNORE_TERM, s.target, pids), 0, "%s: spawn", name))
		goto out;
	o.backend = b;
	o.signal = SIGTERM;
	o.n_escalations = 1;
	o.escalations[0] = (struct cgk_escalation){ .after_ms = 200, .signal = SIGKILL };
	r = cgk_kill(s.target, &o, &rep);
	is_int(r, 0, "%s: cgk_kill returns 0", name);
	ok(rep.n_signals == 2 && rep.signals[0] == SIGTERM && rep.signals[1] == SIGKILL,
	   "%s: TERM, then KILL", name);
	ok(rep.emptied, "%s: emptied", name);
	is_int(count_killed(pids, N, SIGKILL), N, "%s: all died of SIGKILL", name);
	if (b == CGK_BACKEND_V1_FREEZE)
		ok(state_is(s.target, "THAWED"), "%s: not left frozen", name);
	cgk_report_free(&rep);
out:
	scene_end(&s, name);
}

/* ---- pids.max ---- */

static void test_pids_restored(const char *pd)
{
	static const char *const limits[] = { "37", "max" };

	for (size_t i = 0; i < 2; i++) {
		enum { N = 6 };
		char name[64], buf[32];
		struct cgk_report rep;
		struct scene s;
		pid_t pids[N];
		int r;

		snprintf(name, sizeof(name), "loop pids.max=%s", limits[i]);
		if (!scene_start(&s, pd, "pidsmax"))
			goto out;
		if (!is_int(sb_write(s.target, "pids.max", limits[i]), 0, "%s: set", name) ||
		    !is_int(sb_spawn_n(N, SB_SLEEP, NULL, s.target, pids), 0, "%s: spawn", name))
			goto out;
		r = do_kill(s.target, CGK_BACKEND_LOOP, SIGKILL, DEADLINE_MS, &rep);
		is_int(r, 0, "%s: cgk_kill returns 0", name);
		ok(rep.emptied, "%s: emptied", name);
		is_int(count_killed(pids, N, SIGKILL), N, "%s: all died of SIGKILL", name);
		is_str(first_line(s.target, "pids.max", buf, sizeof(buf)), limits[i],
		       "%s: pids.max restored", name);
		cgk_report_free(&rep);
out:
		scene_end(&s, name);
	}
}

/*
 * Run a backend's send() in a child process that has only two free file
 * descriptors left: the first pass fails with EMFILE after the backend has
 * clamped or frozen. Returns the child's exit status: -errno of send().
 */
static int send_starved(const char *path, const struct cgk_backend_ops *ops, int sig)
{
	pid_t pid = sb_fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct cgk_options o = CGK_OPTIONS_INIT;
		struct cgk_report rep = { 0 };
		struct cgk_target t;
		struct rlimit rl;
		char msg[512];
		int fd, r;

		if (cgk_target_open(path, &t, msg, sizeof(msg)) < 0)
			_exit(200);
		struct cgk_run run = { .opts = &o, .rep = &rep, .t = &t, .self = getpid(),
				       .batch = 16 };
		run.procfd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
		snprintf(rep.path, sizeof(rep.path), "%s", t.path);
		if (run.procfd < 0 || ops->probe(&run, sig) < 0)
			_exit(201);
		/* Fill every free descriptor up to 64 or more, then allow two more. */
		do
			fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		while (fd >= 0 && fd < 64);
		if (fd < 0 || getrlimit(RLIMIT_NOFILE, &rl) < 0)
			_exit(202);
		rl.rlim_cur = (rlim_t)fd + 3;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			_exit(203);
		r = ops->send(&run, sig);
		_exit(r < 0 && -r < 200 ? -r : r < 0 ? 199 : 0);
	}
	st = sb_wait_reaped(pid, 30000);
	return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_error_paths(const char *fz, const char *pd)
{
	enum { N = 4 };
	char buf[32];
	struct scene s;
	pid_t pids[N];
	int r;

	if (pd && scene_start(&s, pd, "err-loop")) {
		const char *name = "loop fails half-way";

		if (is_int(sb_write(s.target, "pids.max", "41"), 0, "%s: pids.max=41", name) &&
		    is_int(sb_spawn_n(N, SB_SLEEP, NULL, s.target, pids), 0, "%s: spawn", name)) {
			r = send_starved(s.target, &cgk_backend_loop, SIGKILL);
			is_int(r, EMFILE, "%s: send fails with EMFILE", name);
			is_str(first_line(s.target, "pids.max", buf, sizeof(buf)), "41",
			       "%s: pids.max restored", name);
		}
		scene_end(&s, name);
	} else if (!pd) {
		skip("no v1 pids hierarchy");
	}

	if (!fz) {
		skip("no v1 freezer hierarchy");
		return;
	}
	static const struct { int sig; bool user_frozen; const char *want; } cases[] = {
		{ SIGKILL, false, "THAWED" },
		{ SIGKILL, true, "THAWED" },
		{ SIGTERM, false, "THAWED" },
		{ SIGTERM, true, "FROZEN" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char name[96];

		snprintf(name, sizeof(name), "v1-freeze fails half-way (%s, %s)",
			 cases[i].sig == SIGKILL ? "KILL" : "TERM",
			 cases[i].user_frozen ? "target frozen by someone else" : "target thawed");
		if (!scene_start(&s, fz, "err-v1"))
			goto next;
		if (!is_int(sb_spawn_n(N, SB_SLEEP, NULL, s.target, pids), 0, "%s: spawn", name))
			goto next;
		if (cases[i].user_frozen && !ok(freeze_v1(s.target), "%s: frozen", name))
			goto next;
		r = send_starved(s.target, &cgk_backend_v1_freeze, cases[i].sig);
		is_int(r, EMFILE, "%s: send fails with EMFILE", name);
		is_str(first_line(s.target, "freezer.state", buf, sizeof(buf)), cases[i].want,
		       "%s: freezer.state is %s", name, cases[i].want);
next:
		scene_end(&s, name);
	}
}

/* ---- fork bombs ---- */

enum bomb_kind { BOMB_V1_FREEZE, BOMB_V1_UNSETTLED, BOMB_LOOP_V1_PIDS, BOMB_LOOP_V2 };

/*
 * v1-freeze with no wait at all for FROZEN: every freeze counts as one that
 * did not settle, so the thaw-and-retry, the passes over a partial freeze,
 * the post-thaw passes and the settling after SIGKILL all run. Then the
 * library's own wait (v1: polling the lists).
 */
static int kill_unsettled(const char *path, int sig, struct cgk_report *rep)
{
	struct cgk_options o = CGK_OPTIONS_INIT;
	struct cgk_target t;
	int r;

	*rep = (struct cgk_report){ 0 };
	r = cgk_target_open(path, &t, rep->message, sizeof(rep->message));
	if (r < 0)
		return r;
	struct cgk_run run = { .opts = &o, .rep = rep, .t = &t, .self = getpid(), .batch = 1024 };
	snprintf(rep->path, sizeof(rep->path), "%s", t.path);
	run.procfd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	r = run.procfd < 0 ? -errno : cgk_v1_freeze_send(&run, sig, 0);
	if (r == 0) {
		rep->waited = true;
		r = cgk_wait_empty(&run, cgk_now_ms() + DEADLINE_MS);
		rep->emptied = r == 0;
	}
	if (r < 0)
		note("v1-freeze unsettled on %s: %d %s", path, r, rep->message);
	cgk_pidset_free(&run.done);
	if (run.procfd >= 0)
		close(run.procfd);
	cgk_target_close(&t);
	return r;
}

/*
 * One fork bomb, killed: the target is on the backend's hierarchy; the bomb
 * is limited by a v1 pids cgroup (the target itself for loop on v1 pids).
 */
static bool bomb_round(enum bomb_kind kind, const char *box, const char *pd, unsigned round,
		       unsigned pids_max, const char *label)
{
	struct sb_proc bomb = { .what = SB_FORKBOMB };
	enum cgk_backend b = kind == BOMB_V1_FREEZE || kind == BOMB_V1_UNSETTLED ?
		CGK_BACKEND_V1_FREEZE : CGK_BACKEND_LOOP;
	char name[96], rel[32], lim[16], buf[32];
	char *target = NULL, *limiter = NULL;
	struct cgk_report rep = { 0 };
	bool good = false;
	uint64_t t0;
	pid_t pid;
	int r, n;

	snprintf(name, sizeof(name), "%s %u/%u", label, round, BOMB_ROUNDS);
	snprintf(rel, sizeof(rel), "bomb%u", round);
	snprintf(lim, sizeof(lim), "%u", pids_max);
	target = sb_mkdir(box, rel);
	if (kind != BOMB_LOOP_V1_PIDS)
		limiter = sb_mkdir(pd, rel);
	if (!target || (kind != BOMB_LOOP_V1_PIDS && !limiter) ||
	    sb_write(limiter ? limiter : target, "pids.max", lim) < 0) {
		ok(false, "%s: set up a pids limit", name);
		goto out;
	}
	bomb.cgroups[0] = limiter ? limiter : target;
	bomb.cgroups[1] = limiter ? target : NULL;
	pid = sb_spawn(&bomb);
	if (!ok(pid > 0, "%s: fork bomb under pids.max=%u", name, pids_max))
		goto out;
	sb_wait_count(target, pids_max * 9 / 10, 10000);
	n = sb_count(target, true);
	t0 = sb_now_ms();
	if (kind == BOMB_V1_UNSETTLED)
		r = kill_unsettled(target, SIGKILL, &rep);
	else
		r = do_kill(target, b, SIGKILL, DEADLINE_MS, &rep);
	good = is_int(r, 0, "%s: cgk_kill returns 0", name);
	good &= ok(rep.emptied, "%s: %d processes, emptied in %llu ms (signalled %u)", name, n,
		   (unsigned long long)(sb_now_ms() - t0), rep.signalled);
	/* Right away, before the check below gives them more time. */
	good &= is_int(dump_left(target), 0, "%s: nothing left without a SIGKILL pending", name);
	good &= is_int(sb_wait_empty(target, 1000), 0, "%s: target empty (own check)", name);
	if (limiter)
		good &= is_int(sb_wait_empty(limiter, 1000), 0, "%s: limiter empty", name);
	if (kind == BOMB_LOOP_V1_PIDS)
		good &= is_str(first_line(target, "pids.max", buf, sizeof(buf)), lim,
			       "%s: pids.max restored", name);
	if (b == CGK_BACKEND_V1_FREEZE)
		good &= ok(state_is(target, "THAWED"), "%s: not left frozen", name);
out:
	cgk_report_free(&rep);
	if (target)
		sb_destroy(target);
	if (limiter)
		sb_destroy(limiter);
	sb_reap();
	free(target);
	free(limiter);
	return good;
}

static void test_bombs(enum bomb_kind kind, const char *box, const char *pd, const char *label)
{
	struct scene s;

	if (!box || !pd) {
		skip("%s: needs its hierarchy and a v1 pids hierarchy for the limit", label);
		return;
	}
	if (!scene_start(&s, box, "bombs"))
		goto out;
	for (unsigned round = 1; round <= BOMB_ROUNDS; round++)
		if (!bomb_round(kind, s.target, pd, round, BOMB_PIDS_MAX, label))
			break;
out:
	scene_end(&s, label);
}

/*
 * A bigger bomb against v1-freeze: freezer.state can stay FREEZING while it
 * forks. Observe how long a plain freeze takes to settle, then check the
 * backend's kill is complete either way, within its own time budget (over
 * it, cgk_kill fails). How fast is for the benchmark.
 */
static void test_freezing_bomb(const char *fz, const char *pd)
{
	const char *name = "v1-freeze, bomb of 1000";
	struct sb_proc bomb = { .what = SB_FORKBOMB };
	char *lim = NULL;
	struct cgk_report rep = { 0 };
	struct scene s;
	uint64_t t0;
	unsigned settled = 0, tries = 5, worst = 0;
	pid_t pid;
	int r;

	if (!fz || !pd) {
		skip("%s: needs v1 freezer and pids", name);
		return;
	}
	if (!scene_start(&s, fz, "freezing"))
		goto out;
	lim = sb_mkdir(pd, "freezing");
	if (!lim || !is_int(sb_write(lim, "pids.max", "1000"), 0, "%s: limit", name))
		goto out;
	bomb.cgroups[0] = lim;
	bomb.cgroups[1] = s.target;
	pid = sb_spawn(&bomb);
	if (!ok(pid > 0, "%s: started", name))
		goto out;
	sb_wait_count(s.target, 900, 10000);
	for (unsigned i = 0; i < tries; i++) {
		uint64_t until;

		t0 = sb_now_ms();
		until = t0 + 500;
		sb_write(s.target, "freezer.state", "FROZEN");
		while (!state_is(s.target, "FROZEN") && sb_now_ms() < until)
			sb_sleep_ms(1);
		if (state_is(s.target, "FROZEN")) {
			settled++;
			if (sb_now_ms() - t0 > worst)
				worst = (unsigned)(sb_now_ms() - t0);
		}
		sb_write(s.target, "freezer.state", "THAWED");
		sb_sleep_ms(50);
	}
	note("%s: a plain freeze settled %u/%u times within 500 ms (slowest %u ms)", name,
	     settled, tries, worst);
	r = do_kill(s.target, CGK_BACKEND_V1_FREEZE, SIGKILL, DEADLINE_MS, &rep);
	is_int(r, 0, "%s: cgk_kill returns 0", name);
	is_int(dump_left(s.target), 0, "%s: nothing left without a SIGKILL pending", name);
	ok(rep.emptied, "%s: emptied, %u signalled, sent in %llu ms, empty after %llu ms", name,
	   rep.signalled, (unsigned long long)rep.signal_ms, (unsigned long long)rep.empty_ms);
	is_int(sb_wait_empty(lim, 1000), 0, "%s: limiter empty", name);
	ok(state_is(s.target, "THAWED"), "%s: not left frozen", name);
out:
	cgk_report_free(&rep);
	if (lim)
		sb_destroy(lim);
	free(lim);
	scene_end(&s, name);
}

/* ---- loop: trees with sentinels ---- */

static void test_loop_tree(const char *box, const char *hier)
{
	static const char *const where[] = { "", "a", "a/b", "c" };
	struct cgk_report rep;
	struct scene s;
	char name[64];
	pid_t pids[12];
	unsigned np = 0;
	int r;

	snprintf(name, sizeof(name), "loop/%s tree", hier);
	if (!box) {
		skip("%s: hierarchy missing", name);
		return;
	}
	if (!scene_start(&s, box, "looptree"))
		goto out;
	for (size_t i = 0; i < 4; i++) {
		char *d = *where[i] ? sb_mkdir(s.target, where[i]) : strdup(s.target);

		r = d ? sb_spawn_n(3, SB_SLEEP, NULL, d, pids + np) : -ENOMEM;
		free(d);
		if (!is_int(r, 0, "%s: 3 in T/%s", name, where[i]))
			goto out;
		np += 3;
	}
	r = do_kill(s.target, CGK_BACKEND_LOOP, SIGKILL, DEADLINE_MS, &rep);
	is_int(r, 0, "%s: cgk_kill returns 0", name);
	ok(rep.emptied, "%s: emptied", name);
	is_int(rep.signalled, np, "%s: %u signalled", name, np);
	is_int(rep.cgroups, 4, "%s: 4 cgroups", name);
	is_int(count_killed(pids, np, SIGKILL), np, "%s: all died of SIGKILL", name);
	cgk_report_free(&rep);

	/* TERM: signalled once each, pids.max (if any) back as it was. */
	if (spawn_term(4, SB_EXIT_ON_TERM, s.target, pids) == 0) {
		r = do_kill(s.target, CGK_BACKEND_LOOP, SIGTERM, DEADLINE_MS, &rep);
		is_int(r, 0, "%s: TERM: cgk_kill returns 0", name);
		is_int(rep.signalled, 4, "%s: TERM: 4 signalled", name);
		is_int(count_exited0(pids, 4), 4, "%s: TERM: all exited on TERM", name);
		cgk_report_free(&rep);
	}
out:
	scene_end(&s, name);
}

int main(void)
{
	const char *fz, *pd, *v2;
	char *fzbox = NULL, *pdbox = NULL, *v2box = NULL;

	sb_init(600);
	sb_require_root();
	no_plan();
	if (sb_mount(SB_V1_FREEZER))
		fzbox = sb_create(SB_V1_FREEZER);
	if (sb_mount(SB_V1_PIDS))
		pdbox = sb_create(SB_V1_PIDS);
	if (sb_mount(SB_V2))
		v2box = sb_create(SB_V2);
	fz = fzbox;
	pd = pdbox;
	v2 = v2box;
	if (!fz && !pd)
		skip_all("no cgroup v1 freezer or pids hierarchy on this machine");
	note("sandboxes: %s %s %s", fz ?: "-", pd ?: "-", v2 ?: "-");

	test_probes(fz, pd, v2);
	if (fz) {
		test_user_frozen(fz, CGK_BACKEND_V1_FREEZE);
		test_user_frozen(fz, CGK_BACKEND_AUTO);
		test_frozen_descendant(fz);
		test_frozen_ancestor(fz);
		test_term_keeps_state(fz);
		test_escalation(fz, CGK_BACKEND_V1_FREEZE, "v1-freezer");
	} else {
		skip("no v1 freezer hierarchy");
	}
	if (pd) {
		test_pids_restored(pd);
		test_escalation(pd, CGK_BACKEND_LOOP, "v1-pids");
	}
	test_error_paths(fz, pd);
	test_loop_tree(pd, "v1-pids");
	test_loop_tree(v2, "v2");
	test_bombs(BOMB_V1_FREEZE, fz, pd, "v1-freeze bomb");
	test_bombs(BOMB_V1_UNSETTLED, fz, pd, "v1-freeze bomb, FREEZING never waited for");
	test_bombs(BOMB_LOOP_V1_PIDS, pd, pd, "loop/v1-pids bomb");
	test_bombs(BOMB_LOOP_V2, v2, pd, "loop/v2 bomb");
	test_freezing_bomb(fz, pd);

	ok(!fzbox || sb_destroy(fzbox) == 0, "v1 freezer sandbox removed");
	ok(!pdbox || sb_destroy(pdbox) == 0, "v1 pids sandbox removed");
	ok(!v2box || sb_destroy(v2box) == 0, "v2 sandbox removed");
	free(fzbox);
	free(pdbox);
	free(v2box);
	return done_testing();
}
