// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The v1 freezer on the real kernel: which backend auto picks on v1 and
 * where v1-freeze refuses, cgroups left frozen by someone else (the target,
 * its descendants, an ancestor), what freezer state a non-KILL signal
 * leaves, and an escalation through the freezer and through the loop on v1
 * pids. Sentinels in the parent and in a sibling of every target must
 * survive.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgkill.h"
#include "support/cgfile.h"
#include "support/kill.h"
#include "support/sandbox.h"
#include "support/scene.h"
#include "support/spawn.h"
#include "support/tap.h"

static bool thawed(const char *dir)
{
	return sb_file_is(dir, "freezer.state", "THAWED");
}

static bool frozen(const char *dir)
{
	return sb_file_is(dir, "freezer.state", "FROZEN");
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
		cgk_report *rep = NULL;
		struct scene s;
		pid_t pid;
		int r;

		if (!refuse[i].box) {
			skip("%s: hierarchy missing", refuse[i].name);
			continue;
		}
		if (!scene_start_named(&s, refuse[i].box, "probe", refuse[i].name))
			goto next;
		pid = sb_sleeper(s.target);
		r = kill_wait(s.target, refuse[i].forced, SIGKILL, 1000, &rep);
		is_int(r, -EOPNOTSUPP, "%s: refused with EOPNOTSUPP", refuse[i].name);
		ok(strstr(cgk_report_message(rep), "v1-freeze") != NULL, "%s: message names the backend: %s",
		   refuse[i].name, cgk_report_message(rep));
		ok(sb_alive(pid), "%s: nothing signalled", refuse[i].name);
		rep = cgk_report_free(rep);
next:
		scene_end(&s);
	}
	for (size_t i = 0; i < sizeof(pick) / sizeof(pick[0]); i++) {
		cgk_report *rep = NULL;
		struct scene s;
		pid_t pid;
		int r;

		if (!pick[i].box) {
			skip("%s: hierarchy missing", pick[i].name);
			continue;
		}
		if (!scene_start_named(&s, pick[i].box, "auto", pick[i].name))
			goto next2;
		pid = sb_sleeper(s.target);
		r = kill_wait(s.target, CGK_BACKEND_AUTO, SIGKILL, KILL_WAIT_MS, &rep);
		is_int(r, 0, "%s: killed", pick[i].name);
		is_str(cgk_backend_name(cgk_report_backend(rep)), cgk_backend_name(pick[i].want),
		       "%s: picks %s", pick[i].name, cgk_backend_name(pick[i].want));
		ok(cgk_report_emptied(rep) && sb_killed_by(pid, SIGKILL, 5000), "%s: the sleeper died",
		   pick[i].name);
		rep = cgk_report_free(rep);
next2:
		scene_end(&s);
	}
}

/* ---- v1 freezer states ---- */

/* A target frozen by someone else: its tasks must still die, and the
 * cgroup must not be left frozen. */
static void test_user_frozen(const char *fz, enum cgk_backend b)
{
	enum { N = 5 };
	char name[64];
	cgk_report *rep = NULL;
	struct scene s;
	pid_t pids[N];
	int r;

	snprintf(name, sizeof(name), "frozen target (%s)", cgk_backend_name(b));
	if (!scene_start_named(&s, fz, "frozen", name))
		goto out;
	if (!is_int(sb_spawn_n(N, SB_SLEEP, NULL, s.target, pids), 0, "%s: spawn", name))
		goto out;
	if (!ok(sb_freeze_v1(s.target), "%s: someone else froze it", name))
		goto out;
	r = kill_wait(s.target, b, SIGKILL, KILL_WAIT_MS, &rep);
	is_int(r, 0, "%s: cgk_kill returns 0", name);
	is_int(cgk_report_backend(rep), CGK_BACKEND_V1_FREEZE, "%s: served by v1-freeze", name);
	ok(cgk_report_emptied(rep), "%s: emptied (%llu ms)", name,
	   (unsigned long long)cgk_report_empty_ms(rep));
	is_int(sb_count_killed(pids, N, SIGKILL, 5000), N, "%s: all %d died of SIGKILL", name, N);
	ok(thawed(s.target), "%s: not left frozen", name);
	rep = cgk_report_free(rep);
out:
	scene_end(&s);
}

/* T, T/a, T/a/b with b frozen on its own, and T/c frozen as well. */
static void test_frozen_descendant(const char *fz)
{
	static const struct { const char *where; unsigned n; } procs[] = {
		{ "", 2 }, { "a", 2 }, { "a/b", 3 }, { "c", 1 },
	};
	const char *name = "frozen descendants";
	char *b = NULL, *c = NULL, *a = NULL;
	cgk_report *rep = NULL;
	struct scene s;
	pid_t pids[8];
	unsigned np = 0;
	int r;

	if (!scene_start_named(&s, fz, "descendant", name))
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
	if (!ok(sb_freeze_v1(b) && sb_freeze_v1(c), "%s: T/a/b and T/c frozen by someone else", name))
		goto out;
	r = kill_wait(s.target, CGK_BACKEND_V1_FREEZE, SIGKILL, KILL_WAIT_MS, &rep);
	is_int(r, 0, "%s: cgk_kill returns 0", name);
	ok(cgk_report_emptied(rep), "%s: emptied", name);
	is_int(cgk_report_signalled(rep), np, "%s: %u signalled", name, np);
	is_int(sb_count_killed(pids, np, SIGKILL, 5000), np, "%s: all %u died of SIGKILL", name, np);
	ok(thawed(s.target) && thawed(a) && thawed(b) && thawed(c), "%s: nothing left frozen", name);
	rep = cgk_report_free(rep);
out:
	free(a);
	free(b);
	free(c);
	scene_end(&s);
}

/* Frozen from above the target: our thaw cannot undo it, so the tasks
 * cannot die yet; the backend says so instead of timing out. */
static void test_frozen_ancestor(const char *fz)
{
	enum { N = 3 };
	const char *name = "frozen ancestor";
	cgk_report *rep = NULL;
	struct scene s;
	pid_t pids[N];
	char *t = NULL;
	int r;

	if (!scene_start_named(&s, fz, "ancestor", name))
		goto out;
	t = sb_mkdir(s.target, "t");
	if (!t || !is_int(sb_spawn_n(N, SB_SLEEP, NULL, t, pids), 0, "%s: spawn", name))
		goto out;
	if (!ok(sb_freeze_v1(s.target), "%s: the parent of the target is frozen", name))
		goto out;
	r = kill_wait(t, CGK_BACKEND_V1_FREEZE, SIGKILL, 2000, &rep);
	is_int(r, -EBUSY, "%s: EBUSY", name);
	ok(strstr(cgk_report_message(rep), "ancestor") != NULL, "%s: message says why: %s", name, cgk_report_message(rep));
	ok(frozen(s.target), "%s: the ancestor is not thawed by us", name);
	sb_write(s.target, "freezer.state", "THAWED");
	is_int(sb_count_killed(pids, N, SIGKILL, 5000), N, "%s: once thawed, all %d die of SIGKILL",
	       name, N);
	rep = cgk_report_free(rep);
out:
	free(t);
	scene_end(&s);
}

/* SIGTERM keeps the user's freezer state: a frozen target stays frozen, a
 * frozen descendant stays frozen; the tasks find the signal on thaw. */
static void test_term_keeps_state(const char *fz)
{
	enum { N = 3 };
	const char *name = "TERM keeps freezer state";
	cgk_report *rep = NULL;
	struct scene s;
	pid_t top[N], low[N];
	char *d = NULL;
	int r;

	if (!scene_start_named(&s, fz, "term", name))
		goto out;
	d = sb_mkdir(s.target, "d");
	if (!d || sb_spawn_n(N, SB_EXIT_ON_TERM, NULL, s.target, top) < 0 ||
	    sb_spawn_n(N, SB_EXIT_ON_TERM, NULL, d, low) < 0) {
		ok(false, "%s: spawn", name);
		goto out;
	}
	/* 1: target not frozen, descendant frozen by the user. */
	if (!ok(sb_freeze_v1(d), "%s: T/d frozen by someone else", name))
		goto out;
	r = kill_wait(s.target, CGK_BACKEND_V1_FREEZE, SIGTERM, 0, &rep);
	is_int(r, 0, "%s: TERM sent", name);
	is_int(cgk_report_signalled(rep), 2 * N, "%s: %d signalled", name, 2 * N);
	ok(thawed(s.target), "%s: the target is thawed again", name);
	ok(frozen(d), "%s: the user's frozen descendant stays frozen", name);
	is_int(sb_count_exited0(top, N, 5000), N, "%s: the target's %d exited on TERM", name, N);
	is_int(sb_count_alive(low, N), N, "%s: the frozen descendant's %d wait, frozen", name, N);
	sb_write(d, "freezer.state", "THAWED");
	is_int(sb_count_exited0(low, N, 5000), N, "%s: once thawed, they exit on TERM", name);
	rep = cgk_report_free(rep);

	/* 2: the target itself frozen by the user. */
	if (sb_spawn_n(N, SB_EXIT_ON_TERM, NULL, s.target, top) < 0 ||
	    !ok(sb_freeze_v1(s.target), "%s: target frozen by someone else", name))
		goto out;
	r = kill_wait(s.target, CGK_BACKEND_V1_FREEZE, SIGTERM, 0, &rep);
	is_int(r, 0, "%s: TERM sent to a frozen target", name);
	ok(frozen(s.target), "%s: the frozen target stays frozen", name);
	sb_sleep_ms(50);
	is_int(sb_count_alive(top, N), N, "%s: its %d are still there, frozen", name, N);
	sb_write(s.target, "freezer.state", "THAWED");
	is_int(sb_count_exited0(top, N, 5000), N, "%s: once thawed, they exit on TERM", name);
	rep = cgk_report_free(rep);
out:
	free(d);
	scene_end(&s);
}

/* TERM to processes that ignore it, then KILL after 200 ms. */
static void test_escalation(const char *box, enum cgk_backend b, const char *hier)
{
	enum { N = 4 };
	cgk_options *o = opts_escalate(b, SIGTERM, KILL_WAIT_MS, 200, SIGKILL);
	cgk_report *rep = NULL;
	struct scene s;
	char name[64];
	pid_t pids[N];
	int r;

	snprintf(name, sizeof(name), "%s/%s TERM then KILL", cgk_backend_name(b), hier);
	if (!scene_start_named(&s, box, "escalate", name))
		goto out;
	if (!is_int(sb_spawn_n(N, SB_IGNORE_TERM, NULL, s.target, pids), 0, "%s: spawn", name))
		goto out;
	r = cgk_kill(s.target, o, &rep);
	is_int(r, 0, "%s: cgk_kill returns 0", name);
	ok(cgk_report_n_signals(rep) == 2 && rep_signal(rep, 0) == SIGTERM &&
	   rep_signal(rep, 1) == SIGKILL, "%s: TERM, then KILL", name);
	ok(cgk_report_emptied(rep), "%s: emptied", name);
	is_int(sb_count_killed(pids, N, SIGKILL, 5000), N, "%s: all died of SIGKILL", name);
	if (b == CGK_BACKEND_V1_FREEZE)
		ok(thawed(s.target), "%s: not left frozen", name);
	rep = cgk_report_free(rep);
out:
	cgk_options_free(o);
	scene_end(&s);
}

int main(void)
{
	struct sb_boxes b;

	sb_start_v1(&b, 600);

	test_probes(b.fz, b.pd, b.v2);
	if (b.fz) {
		test_user_frozen(b.fz, CGK_BACKEND_V1_FREEZE);
		test_user_frozen(b.fz, CGK_BACKEND_AUTO);
		test_frozen_descendant(b.fz);
		test_frozen_ancestor(b.fz);
		test_term_keeps_state(b.fz);
		test_escalation(b.fz, CGK_BACKEND_V1_FREEZE, "v1-freezer");
	} else {
		skip("no v1 freezer hierarchy");
	}
	if (b.pd)
		test_escalation(b.pd, CGK_BACKEND_LOOP, "v1-pids");

	return sb_finish_v1(&b);
}
