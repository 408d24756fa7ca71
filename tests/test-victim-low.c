// SPDX-License-Identifier: LGPL-2.1-or-later
/* Unit tests of the memory protection the victim choice subtracts
 * (daemon/protection.c, included: pure): only what the kernel grants
 * counts, a child's protection bounded by its parent's
 * (effective_protection() in mm/memcontrol.c), so a memory.low that a
 * delegatee writes on its own cgroup cannot shrink its figure. A real
 * kernel test needs the v2 memory controller (a pure v2 host): hybrid
 * layouts have no memory.low. */
#include <stdint.h>

#include "../daemon/protection.c"
#include "support/tap.h"

#define MiB (UINT64_C(1) << 20)
#define TOP UINT64_MAX	/* the watched cgroup's parent_elow */

/* The effective low of each of n siblings (usage u[i], memory.low l[i])
 * below a parent granted parent_elow, into e[]. */
static void level(const uint64_t *u, const uint64_t *l, uint64_t *e, int n, uint64_t parent_elow)
{
	uint64_t siblings = 0;

	for (int i = 0; i < n; i++)
		siblings += u[i] < l[i] ? u[i] : l[i];
	for (int i = 0; i < n; i++)
		e[i] = low_effective(u[i], l[i], parent_elow, siblings);
}

static void test_top(void)
{
	is_int((long long)low_effective(100 * MiB, 30 * MiB, TOP, 0), (long long)(30 * MiB),
	       "the watched cgroup: its memory.low");
	is_int((long long)low_effective(100 * MiB, UINT64_MAX, TOP, 0), (long long)(100 * MiB),
	       "the watched cgroup: memory.low max is at most its usage");
	is_int((long long)low_effective(100 * MiB, 0, TOP, 0), 0, "the watched cgroup: no memory.low, none");
}

static void test_bounded_by_parent(void)
{
	/* the attack: the hog's memory.low is max, the watched cgroup's 0 */
	is_int((long long)low_effective(900 * MiB, UINT64_MAX, 0, 900 * MiB), 0,
	       "memory.low max below a parent granted nothing: nothing");
	is_int((long long)low_effective(900 * MiB, UINT64_MAX, 0, 0), 0,
	       "the same with the siblings' claims read as 0 (a snapshot)");
	is_int((long long)low_effective(900 * MiB, UINT64_MAX, 200 * MiB, 900 * MiB), (long long)(200 * MiB),
	       "memory.low max alone below a parent granted 200 MiB: 200 MiB");
	is_int((long long)low_effective(100 * MiB, 50 * MiB, 1000 * MiB, 80 * MiB), (long long)(50 * MiB),
	       "a claim within the parent's: granted whole");
	is_int((long long)low_effective(30 * MiB, 50 * MiB, 1000 * MiB, 30 * MiB), (long long)(30 * MiB),
	       "a claim above usage: the usage");
}

static void test_overcommit(void)
{
	uint64_t u[2] = { 900 * MiB, 100 * MiB }, l[2] = { UINT64_MAX, 100 * MiB }, e[2];

	level(u, l, e, 2, 200 * MiB);
	is_int((long long)e[0], (long long)(180 * MiB), "overcommitted: the hog (claims 900 of 1000) gets 900/1000 of 200 MiB");
	is_int((long long)e[1], (long long)(20 * MiB), "and its neighbour (claims 100) gets 100/1000");
	ok(e[0] + e[1] <= 200 * MiB, "together no more than the parent's");

	u[0] = u[1] = 100 * MiB;
	l[0] = l[1] = 100 * MiB;
	level(u, l, e, 2, 100 * MiB);
	ok(e[0] == 50 * MiB && e[1] == 50 * MiB, "two equal claims of 100 MiB below 100 MiB: 50 each");
}

/* A path from the watched cgroup down: the minimum along it at most. */
static void test_path(void)
{
	uint64_t w = low_effective(1000 * MiB, 300 * MiB, TOP, 0);
	uint64_t u1[2] = { 800 * MiB, 200 * MiB }, l1[2] = { UINT64_MAX, 0 }, e1[2];
	uint64_t u2[1] = { 800 * MiB }, l2[1] = { UINT64_MAX }, e2[1];

	is_int((long long)w, (long long)(300 * MiB), "the watched cgroup: 300 MiB of 1000");
	level(u1, l1, e1, 2, w);
	is_int((long long)e1[0], (long long)(300 * MiB), "its child claiming max (800 MiB used): 300 MiB, the parent's");
	is_int((long long)e1[1], 0, "its sibling claiming nothing: nothing");
	level(u2, l2, e2, 1, e1[0]);
	is_int((long long)e2[0], (long long)(300 * MiB), "a grandchild claiming max: still 300 MiB");
	w = low_effective(1000 * MiB, 0, TOP, 0);
	level(u1, l1, e1, 2, w);
	level(u2, l2, e2, 1, e1[0]);
	ok(e1[0] == 0 && e2[0] == 0, "below a watched cgroup without memory.low, nothing at any depth");
}

static void test_bounds(void)
{
	uint64_t x = 12345;
	int bad = 0;

	ok(low_effective(UINT64_MAX / 2, UINT64_MAX, UINT64_MAX - 1, UINT64_MAX) == UINT64_MAX / 2 - 1,
	   "huge figures do not overflow");
	/* any figures: never above the usage, the setting, or the parent's */
	for (int i = 0; i < 100000; i++) {
		uint64_t u, l, p, s, e;

		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		u = x >> (x & 31);
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		l = (x & 7) == 0 ? UINT64_MAX : x >> (x & 31);
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		p = x >> (x & 31);
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		s = x >> (x & 31);
		e = low_effective(u, l, p, s);
		bad += e > u || e > l || e > p;
	}
	is_int(bad, 0, "100000 draws: never above usage, memory.low or the parent's");
}

int main(void)
{
	no_plan();
	test_top();
	test_bounded_by_parent();
	test_overcommit();
	test_path();
	test_bounds();
	return done_testing();
}
