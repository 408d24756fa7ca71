// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Fork bombs again and again against the backends that walk: v1-freeze
 * (also with FREEZING never waited for, and against a bomb of 1000 that
 * keeps a plain freeze from settling), and the loop on v1 pids and on v2.
 * Nothing may be left without a SIGKILL pending once the kill returns.
 *
 * Fork bombs run only under a v1 pids limit set before they start.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgkill.h"
#include "support/cgfile.h"
#include "support/internals.h"
#include "support/kill.h"
#include "support/sandbox.h"
#include "support/scene.h"
#include "support/spawn.h"
#include "support/tap.h"

#define BOMB_ROUNDS 10
#define BOMB_PIDS_MAX 200

/* What is left in dir (not recursive), and whether it has a SIGKILL
 * pending (signalled, dying slowly) or not (missed: escaped the kill).
 * Returns how many were missed. */
static unsigned dump_left(const char *dir)
{
	unsigned long long kill_bit = 1ULL << (SIGKILL - 1);
	unsigned missed = 0;
	pid_t *v = NULL;
	size_t n = 0;

	sb_list_pids(dir, &v, &n);
	for (size_t i = 0; i < n; i++) {
		unsigned long long pnd = 0, shd = 0;
		char pdir[64], wchan[64] = "";

		if (!proc_mask(v[i], "SigPnd", &pnd) || !proc_mask(v[i], "ShdPnd", &shd))
			continue;
		snprintf(pdir, sizeof(pdir), "/proc/%d", (int)v[i]);
		sb_read(pdir, "wchan", wchan, sizeof(wchan));
		missed += !((pnd | shd) & kill_bit);
		diag("left in %s: pid %d state %c wchan %s SIGKILL %s", dir, (int)v[i],
		     proc_state(v[i]) ?: '?', wchan, (pnd | shd) & kill_bit ? "pending" : "NOT pending");
	}
	free(v);
	return missed;
}

enum bomb_kind { BOMB_V1_FREEZE, BOMB_V1_UNSETTLED, BOMB_LOOP_V1_PIDS, BOMB_LOOP_V2 };

/*
 * SIGKILL as the command and cgkilld send it, with CGK_BOOST: the signal
 * phase is bounded (10 s), and a killer at nice 0 beside a bomb and a busy
 * machine's other work gets so little of the CPU that one pass of the loop
 * over 200 processes outlasted it (EAGAIN, with load averages of 700).
 */
static int kill_bomb(const char *path, enum cgk_backend b, cgk_report **rep)
{
	int r = kill_opts(path, b, SIGKILL, CGK_BOOST, KILL_WAIT_MS, NULL, rep);

	if (r < 0)
		note("cgk_kill(%s, %s) = %d: %s", path, cgk_backend_name(b), r, cgk_report_message(*rep));
	return r;
}

/*
 * v1-freeze with no wait at all for FROZEN: every freeze counts as one that
 * did not settle, so the thaw-and-retry, the passes over a partial freeze,
 * the post-thaw passes and the settling after SIGKILL all run. Then the
 * library's own wait (v1: polling the lists).
 */
static int kill_unsettled(const char *path, int sig, cgk_report **rep)
{
	struct lib_run p;
	int r = lib_run_open(&p, path, 1024);

	if (r < 0)
		return r;
	r = cgk_v1_freeze_send(&p.run, sig, 0);
	if (r == 0) {
		p.run.rep->waited = true;
		r = cgk_wait_empty(&p.run, cgk_now_ms() + KILL_WAIT_MS);
		p.run.rep->emptied = r == 0;
	}
	if (r < 0)
		note("v1-freeze unsettled on %s: %d %s", path, r, lib_run_why(&p));
	*rep = p.run.rep;
	p.run.rep = NULL;
	lib_run_close(&p);
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
	cgk_report *rep = NULL;
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
		r = kill_bomb(target, b, &rep);
	good = is_int(r, 0, "%s: cgk_kill returns 0", name);
	good &= ok(cgk_report_emptied(rep), "%s: %d processes, emptied in %llu ms (signalled %u)",
		   name, n, (unsigned long long)(sb_now_ms() - t0), cgk_report_signalled(rep));
	/* Right away, before the check below gives them more time. */
	good &= is_int(dump_left(target), 0, "%s: nothing left without a SIGKILL pending", name);
	good &= is_int(sb_wait_empty(target, 1000), 0, "%s: target empty (own check)", name);
	if (limiter)
		good &= is_int(sb_wait_empty(limiter, 1000), 0, "%s: limiter empty", name);
	if (kind == BOMB_LOOP_V1_PIDS)
		good &= is_str(sb_first_line(target, "pids.max", buf, sizeof(buf)), lim,
			       "%s: pids.max restored", name);
	if (b == CGK_BACKEND_V1_FREEZE)
		good &= ok(sb_file_is(target, "freezer.state", "THAWED"), "%s: not left frozen", name);
out:
	rep = cgk_report_free(rep);
	sb_discard(target);
	sb_discard(limiter);
	sb_reap();
	return good;
}

static void test_bombs(enum bomb_kind kind, const char *box, const char *pd, const char *label)
{
	struct scene s;

	if (!box || !pd) {
		skip("%s: needs its hierarchy and a v1 pids hierarchy for the limit", label);
		return;
	}
	if (!scene_start_named(&s, box, "bombs", label))
		goto out;
	for (unsigned round = 1; round <= BOMB_ROUNDS; round++)
		if (!bomb_round(kind, s.target, pd, round, BOMB_PIDS_MAX, label))
			break;
out:
	scene_end(&s);
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
	cgk_report *rep = NULL;
	struct scene s;
	uint64_t t0;
	unsigned settled = 0, tries = 5, worst = 0;
	pid_t pid;
	int r;

	if (!fz || !pd) {
		skip("%s: needs v1 freezer and pids", name);
		return;
	}
	if (!scene_start_named(&s, fz, "freezing", name))
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
		while (!sb_file_is(s.target, "freezer.state", "FROZEN") && sb_now_ms() < until)
			sb_sleep_ms(1);
		if (sb_file_is(s.target, "freezer.state", "FROZEN")) {
			settled++;
			if (sb_now_ms() - t0 > worst)
				worst = (unsigned)(sb_now_ms() - t0);
		}
		sb_write(s.target, "freezer.state", "THAWED");
		sb_sleep_ms(50);
	}
	note("%s: a plain freeze settled %u/%u times within 500 ms (slowest %u ms)", name,
	     settled, tries, worst);
	r = kill_bomb(s.target, CGK_BACKEND_V1_FREEZE, &rep);
	is_int(r, 0, "%s: cgk_kill returns 0", name);
	is_int(dump_left(s.target), 0, "%s: nothing left without a SIGKILL pending", name);
	ok(cgk_report_emptied(rep), "%s: emptied, %u signalled, sent in %llu ms, empty after %llu ms", name,
	   cgk_report_signalled(rep), (unsigned long long)cgk_report_signal_ms(rep), (unsigned long long)cgk_report_empty_ms(rep));
	is_int(sb_wait_empty(lim, 1000), 0, "%s: limiter empty", name);
	ok(sb_file_is(s.target, "freezer.state", "THAWED"), "%s: not left frozen", name);
out:
	rep = cgk_report_free(rep);
	if (lim)
		sb_destroy(lim);
	free(lim);
	scene_end(&s);
}

int main(void)
{
	struct sb_boxes b;

	sb_start_v1(&b, 600);
	if (!b.pd)
		skip_all("no cgroup v1 pids hierarchy for the fork bombs' limits");

	test_bombs(BOMB_V1_FREEZE, b.fz, b.pd, "v1-freeze bomb");
	test_bombs(BOMB_V1_UNSETTLED, b.fz, b.pd, "v1-freeze bomb, FREEZING never waited for");
	test_bombs(BOMB_LOOP_V1_PIDS, b.pd, b.pd, "loop/v1-pids bomb");
	test_bombs(BOMB_LOOP_V2, b.v2, b.pd, "loop/v2 bomb");
	test_freezing_bomb(b.fz, b.pd);

	return sb_finish_v1(&b);
}
