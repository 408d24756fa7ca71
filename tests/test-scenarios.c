// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The kill scenarios of the kernel's cgroup.kill selftests, and a few more,
 * run against the real kernel for every backend and hierarchy in rows[].
 * Every scenario has sentinel processes in the parent and in a sibling of the
 * target, which must be alive afterwards.
 *
 * Run one row: CGKILL_TEST_ROW=freeze/v2 (backend/hierarchy).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cgkill.h"
#include "support/cgfile.h"
#include "support/kill.h"
#include "support/sandbox.h"
#include "support/scene.h"
#include "support/spawn.h"
#include "support/tap.h"

#define EMPTY_MS 10000	/* for the tree to empty after the kill, idle (stretched) */
#define BOMB_PIDS_MAX 300
#define BOMB_ROUNDS 5

struct row {
	enum cgk_backend backend;
	enum sb_hier hier;
};

/* Adding a backend or hierarchy to the table is a one-line change. */
static const struct row rows[] = {
	{ CGK_BACKEND_KERNEL, SB_V2 },
	{ CGK_BACKEND_FREEZE, SB_V2 },
	{ CGK_BACKEND_V1_FREEZE, SB_V1_FREEZER },
	{ CGK_BACKEND_LOOP, SB_V1_PIDS },
	{ CGK_BACKEND_LOOP, SB_V2 },
};

struct ctx {
	const struct row *row;
	char name[64];		/* "freeze/v2" */
	char *box;		/* sandbox on the row's hierarchy */
	char *pidsbox;		/* v1 pids sandbox for fork-bomb limiters, or NULL */
	bool unsupported;	/* the backend said "not implemented" */
};

static bool not_implemented(int r)
{
	return r == -EOPNOTSUPP || r == -ENOSYS;
}

static int kill_target(struct ctx *c, const char *target, cgk_report **rep)
{
	int r = kill_opts(target, c->row->backend, SIGKILL, 0, KILL_WAIT_MS, NULL, rep);

	if (r < 0) {
		char state[64] = "";

		diag("%s: cgk_kill(%s) = %d (%s): %s", c->name, target, r,
		     strerrorname_np(-r) ?: "?", cgk_report_message(*rep));
		for (size_t i = 0; i < cgk_report_n_processes(*rep, CGK_LIST_SURVIVORS) && i < 10; i++) {
			const cgk_process *p = cgk_report_process(*rep, CGK_LIST_SURVIVORS, i);

			diag("  survivor %d state %c in '%s' (%s)", (int)cgk_process_pid(p),
			     cgk_process_state(p), cgk_process_cgroup(p), cgk_process_comm(p));
		}
		if (sb_read(target, "freezer.state", state, sizeof(state)) > 0 ||
		    sb_read(target, "cgroup.events", state, sizeof(state)) > 0)
			diag("  %s", state);
	}
	return r;
}

/* Never leave a cgroup frozen: v1 freezer.state THAWED, v2 cgroup.freeze 0. */
static bool thawed(const char *dir)
{
	char buf[64];

	if (sb_read(dir, "freezer.state", buf, sizeof(buf)) > 0)
		return strcmp(buf, "THAWED\n") == 0;
	if (sb_read(dir, "cgroup.freeze", buf, sizeof(buf)) > 0)
		return strcmp(buf, "0\n") == 0;
	return true;
}

/* The checks every kill must pass; returns true if all did. */
static bool check_killed(struct ctx *c, const char *scenario, const char *target,
			 int r, const cgk_report *rep)
{
	bool good = true;

	good &= is_int(r, 0, "%s %s: cgk_kill returns 0", c->name, scenario);
	good &= ok(cgk_report_emptied(rep), "%s %s: report says emptied (%llu ms)", c->name,
		   scenario, (unsigned long long)cgk_report_empty_ms(rep));
	good &= is_int(cgk_report_backend(rep), c->row->backend,
		       "%s %s: report names the forced backend", c->name, scenario);
	good &= is_int(sb_wait_empty(target, EMPTY_MS), 0,
		       "%s %s: the subtree is empty (own check, populated 0 / empty lists)",
		       c->name, scenario);
	good &= ok(thawed(target), "%s %s: the target is not left frozen", c->name, scenario);
	return good;
}

/* One process, one kill: tells whether the backend exists at all. */
static void scenario_probe(struct ctx *c)
{
	cgk_report *rep = NULL;
	struct scene s;
	pid_t pid;
	int r;

	if (!scene_start(&s, c->box, "probe"))
		goto out;
	pid = sb_sleeper(s.target);
	if (!ok(pid > 0, "%s probe: spawn a sleeper", c->name))
		goto out;
	r = kill_target(c, s.target, &rep);
	if (not_implemented(r) && cgk_report_refused(rep) == CGK_GUARD_NONE) {
		c->unsupported = true;
		skip("%s: the backend is not implemented here: %s", c->name, cgk_report_message(rep));
		rep = cgk_report_free(rep);
		goto out;
	}
	check_killed(c, "probe", s.target, r, rep);
	ok(sb_killed_by(pid, SIGKILL, 5000), "%s probe: the sleeper died of SIGKILL", c->name);
	rep = cgk_report_free(rep);
out:
	scene_end(&s);
}

static void scenario_simple(struct ctx *c)
{
	enum { N = 100 };
	cgk_report *rep = NULL;
	struct scene s;
	pid_t pids[N];
	int r;

	if (!scene_start(&s, c->box, "simple"))
		goto out;
	r = sb_spawn_n(N, SB_SLEEP, NULL, s.target, pids);
	if (!is_int(r, 0, "%s simple: spawn %d sleepers", c->name, N))
		goto out;
	is_int(sb_count(s.target, false), N, "%s simple: %d processes in the target", c->name, N);
	r = kill_target(c, s.target, &rep);
	check_killed(c, "simple", s.target, r, rep);
	if (c->row->backend != CGK_BACKEND_KERNEL)
		is_int(cgk_report_signalled(rep), N, "%s simple: report counts %d signalled", c->name, N);
	is_int(cgk_report_cgroups(rep), 1, "%s simple: report counts 1 cgroup", c->name);
	is_int(sb_count_killed(pids, N, SIGKILL, 5000), N, "%s simple: all %d died of SIGKILL", c->name, N);
	note("%s simple: %d processes, signals %llu ms, empty after %llu ms", c->name, N,
	     (unsigned long long)cgk_report_signal_ms(rep), (unsigned long long)cgk_report_empty_ms(rep));
	rep = cgk_report_free(rep);
out:
	scene_end(&s);
}

/*
 * The selftest's tree:      A
 *                        / / \ \
 *                       B  E  I K
 *                      /\  |
 *                     C  D F
 *                          |
 *                          G
 *                          |
 *                          H
 * one process in C, one in H, three in K; kill A.
 */
static void scenario_tree(struct ctx *c)
{
	static const char *const dirs[] = {
		"B/C", "B/D", "E/F/G/H", "I", "K",
	};
	static const char *const all[] = {
		"", "B", "B/C", "B/D", "E", "E/F", "E/F/G", "E/F/G/H", "I", "K",
	};
	static const struct { const char *where; unsigned n; } procs[] = {
		{ "B/C", 1 }, { "E/F/G/H", 1 }, { "K", 3 },
	};
	cgk_report *rep = NULL;
	struct scene s;
	pid_t pids[5];
	unsigned np = 0, empty = 0;
	int r;

	if (!scene_start(&s, c->box, "tree"))
		goto out;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		char *d = sb_mkdir(s.target, dirs[i]);

		if (!ok(d != NULL, "%s tree: mkdir A/%s", c->name, dirs[i]))
			goto out;
		free(d);
	}
	for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]); i++) {
		char *d = sb_path(s.target, procs[i].where);

		r = sb_spawn_n(procs[i].n, SB_SLEEP, NULL, d, pids + np);
		free(d);
		if (!is_int(r, 0, "%s tree: spawn %u in A/%s", c->name, procs[i].n, procs[i].where))
			goto out;
		np += procs[i].n;
	}
	r = kill_target(c, s.target, &rep);
	check_killed(c, "tree", s.target, r, rep);
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		char *d = sb_path(s.target, all[i]);

		empty += sb_count(d, false) == 0;
		free(d);
	}
	is_int(empty, 10, "%s tree: all 10 cgroups are empty", c->name);
	is_int(cgk_report_cgroups(rep), 10, "%s tree: report counts 10 cgroups", c->name);
	if (c->row->backend != CGK_BACKEND_KERNEL)
		is_int(cgk_report_signalled(rep), 5, "%s tree: report counts 5 signalled", c->name);
	is_int(sb_count_killed(pids, np, SIGKILL, 5000), 5, "%s tree: all 5 died of SIGKILL", c->name);
	rep = cgk_report_free(rep);
out:
	scene_end(&s);
}

/* Processes with several threads: whole thread groups die. */
static void scenario_threads(struct ctx *c)
{
	enum { N = 5 };
	cgk_report *rep = NULL;
	struct scene s;
	pid_t pids[N];
	int r;

	if (!scene_start(&s, c->box, "threads"))
		goto out;
	r = sb_spawn_n(N, SB_THREADS, NULL, s.target, pids);
	if (!is_int(r, 0, "%s threads: spawn %d processes with 4 more threads each", c->name, N))
		goto out;
	r = kill_target(c, s.target, &rep);
	check_killed(c, "threads", s.target, r, rep);
	if (c->row->backend != CGK_BACKEND_KERNEL)
		is_int(cgk_report_signalled(rep), N, "%s threads: report counts %d processes signalled",
		       c->name, N);
	is_int(sb_count_killed(pids, N, SIGKILL, 5000), N, "%s threads: all %d died of SIGKILL", c->name, N);
	rep = cgk_report_free(rep);
out:
	scene_end(&s);
}

/*
 * Where the pids limit of a fork bomb in target goes: on the target itself if
 * its hierarchy has the pids controller there, else a fresh cgroup in the v1
 * pids hierarchy. Returns the limiter to join first (NULL: the target is its
 * own limiter) through *limiter; false if no limit can be set.
 */
static bool bomb_limit(struct ctx *c, const char *target, unsigned round, char **limiter,
		       const char **counted)
{
	char buf[32], rel[64];

	*limiter = NULL;
	snprintf(buf, sizeof(buf), "%d", BOMB_PIDS_MAX);
	if (sb_read(target, "pids.max", rel, sizeof(rel)) > 0) {
		if (sb_write(target, "pids.max", buf) < 0)
			return false;
		*counted = target;
		return true;
	}
	if (!c->pidsbox)
		return false;
	snprintf(rel, sizeof(rel), "bomb%u", round);
	*limiter = sb_mkdir(c->pidsbox, rel);
	if (!*limiter)
		return false;
	if (sb_write(*limiter, "pids.max", buf) < 0)
		return false;
	*counted = *limiter;
	return true;
}

static void scenario_forkbomb(struct ctx *c)
{
	struct scene s;

	if (!scene_start(&s, c->box, "forkbomb"))
		goto out;
	for (unsigned round = 1; round <= BOMB_ROUNDS; round++) {
		struct sb_proc bomb = { .what = SB_FORKBOMB };
		cgk_report *rep = NULL;
		char rel[32], *target, *limiter = NULL, name[64];
		const char *counted = NULL;
		pid_t pid;
		int r, n;

		snprintf(name, sizeof(name), "forkbomb %u/%u", round, BOMB_ROUNDS);
		snprintf(rel, sizeof(rel), "T/bomb%u", round);
		target = sb_mkdir(s.parent, rel);
		if (!target || !bomb_limit(c, target, round, &limiter, &counted)) {
			skip("%s %s: no pids limit can be set here, a fork bomb does not run",
			     c->name, name);
			free(target);
			free(limiter);
			break;
		}
		bomb.cgroups[0] = limiter ? limiter : target;
		bomb.cgroups[1] = limiter ? target : NULL;
		pid = sb_spawn(&bomb);
		if (!ok(pid > 0, "%s %s: start a fork bomb under pids.max=%d", c->name, name,
			BOMB_PIDS_MAX)) {
			free(target);
			free(limiter);
			break;
		}
		/* Let it fill up to (almost) its limit. */
		r = sb_wait_count(target, BOMB_PIDS_MAX * 9 / 10, 10000);
		n = sb_count(target, true);
		if (r < 0)
			diag("%s %s: the bomb reached only %d processes", c->name, name, n);
		r = kill_target(c, target, &rep);
		check_killed(c, name, target, r, rep);
		if (limiter)
			is_int(sb_wait_empty(limiter, EMPTY_MS), 0,
			       "%s %s: its pids limiter is empty too", c->name, name);
		ok(sb_killed_by(pid, SIGKILL, 5000), "%s %s: the bomb's first process died of SIGKILL",
		   c->name, name);
		note("%s %s: %d processes, signalled %u, signals %llu ms, empty after %llu ms",
		     c->name, name, n, cgk_report_signalled(rep), (unsigned long long)cgk_report_signal_ms(rep),
		     (unsigned long long)cgk_report_empty_ms(rep));
		if (counted == target && c->row->backend == CGK_BACKEND_LOOP) {
			char buf[32] = "";

			sb_read(target, "pids.max", buf, sizeof(buf));
			is_int(atoi(buf), BOMB_PIDS_MAX, "%s %s: pids.max restored", c->name, name);
		}
		rep = cgk_report_free(rep);
		sb_discard(target);
		sb_discard(limiter);
		sb_reap();
		if (r < 0)
			break;
	}
out:
	scene_end(&s);
}

/* Processes that move themselves between two cgroups of the target while
 * it is killed, next to sleepers. None may escape. */
static void scenario_migrate(struct ctx *c)
{
	enum { MIGRATORS = 3, SLEEPERS = 3, ROUNDS = 3 };
	struct scene s;

	if (!scene_start(&s, c->box, "migrate"))
		goto out;
	for (unsigned round = 1; round <= ROUNDS; round++) {
		pid_t pids[MIGRATORS + SLEEPERS + 1];
		char *m1, *m2, rel[32], name[64];
		cgk_report *rep = NULL;
		unsigned np = 0;
		int r;

		snprintf(name, sizeof(name), "migrate %u/%u", round, ROUNDS);
		snprintf(rel, sizeof(rel), "M%u/a", round);
		m1 = sb_mkdir(s.target, rel);
		snprintf(rel, sizeof(rel), "M%u/b", round);
		m2 = sb_mkdir(s.target, rel);
		if (!ok(m1 && m2, "%s %s: create the two cgroups", c->name, name)) {
			free(m1);
			free(m2);
			break;
		}
		for (unsigned i = 0; i < MIGRATORS; i++) {
			struct sb_proc p = { .what = SB_MIGRATE, .cgroups = { m1 },
					     .migrate = { m1, m2 } };

			pids[np] = sb_spawn(&p);
			if (pids[np] > 0)
				np++;
		}
		r = sb_spawn_n(SLEEPERS, SB_SLEEP, NULL, s.target, pids + np);
		if (r == 0)
			np += SLEEPERS;
		pids[np] = sb_sleeper(m1);
		if (pids[np] > 0)
			np++;
		if (!is_int(np, MIGRATORS + SLEEPERS + 1, "%s %s: spawn %d migrators and %d sleepers",
			    c->name, name, MIGRATORS, SLEEPERS + 1)) {
			free(m1);
			free(m2);
			break;
		}
		sb_sleep_ms(100);	/* let them race */
		r = kill_target(c, s.target, &rep);
		check_killed(c, name, s.target, r, rep);
		is_int(sb_count_killed(pids, np, SIGKILL, 5000), np, "%s %s: all %u died of SIGKILL, none escaped",
		       c->name, name, np);
		rep = cgk_report_free(rep);
		free(m1);
		free(m2);
		if (r < 0)
			break;
	}
out:
	scene_end(&s);
}

static bool row_selected(const char *name)
{
	const char *only = getenv("CGKILL_TEST_ROW");

	return !only || !*only || strcmp(only, name) == 0;
}

static void run_row(const struct row *row)
{
	struct ctx c = { .row = row };

	snprintf(c.name, sizeof(c.name), "%s/%s", cgk_backend_name(row->backend),
		 sb_hier_name(row->hier));
	if (!row_selected(c.name))
		return;
	if (!sb_mount(row->hier)) {
		skip("%s: no %s hierarchy on this machine", c.name, sb_hier_name(row->hier));
		return;
	}
	c.box = sb_create(row->hier);
	if (!ok(c.box != NULL, "%s: create a sandbox on %s", c.name, sb_mount(row->hier)))
		return;
	if (sb_mount(SB_V1_PIDS) && row->hier != SB_V1_PIDS)
		c.pidsbox = sb_create(SB_V1_PIDS);
	note("%s: sandbox %s%s%s", c.name, c.box, c.pidsbox ? ", limiter " : "",
	     c.pidsbox ? c.pidsbox : "");

	scenario_probe(&c);
	if (!c.unsupported) {
		scenario_simple(&c);
		scenario_tree(&c);
		scenario_threads(&c);
		scenario_forkbomb(&c);
		scenario_migrate(&c);
	}
	ok(sb_destroy(c.box) == 0, "%s: sandbox removed", c.name);
	if (c.pidsbox)
		ok(sb_destroy(c.pidsbox) == 0, "%s: limiter sandbox removed", c.name);
	free(c.box);
	free(c.pidsbox);
}

int main(void)
{
	sb_init(600);
	sb_require_root();
	no_plan();
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		run_row(&rows[i]);
	return done_testing();
}

