/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The memory protection the kernel grants a cgroup (memory.low), for the
 * victim choice (victim.c): pure, unit-tested by tests/test-victim-low.c.
 *
 * A delegatee writes memory.low on the cgroups it makes (max, say), but
 * the kernel bounds a child's protection by its parent's, which the
 * delegatee does not set: mm/memcontrol.c, effective_protection(). Only
 * what the kernel grants may lower a candidate's figure, or a hog that
 * claims all its memory as protected would score 0 and a neighbour go.
 */
#include "cgkilld.h"

/* effective_protection() of the kernel, without memory_recursiveprot (the
 * parent's unclaimed protection handed down to children that claim none:
 * granted by whoever set the parent's, it is left out, which can only
 * make a candidate's figure larger, never shield it):
 *  - a cgroup claims its setting, at most its usage;
 *  - where it and its siblings claim more than their parent is granted,
 *    each gets its claim's share of the parent's.
 * siblings: the sum of min(usage, memory.low) over the parent's children,
 * itself included (the parent's children_low_usage); files read one after
 * the other may disagree, so it is never taken below the cgroup's own
 * claim. The watched cgroup, the top: parent_elow UINT64_MAX, siblings 0. */
uint64_t low_effective(uint64_t usage, uint64_t low, uint64_t parent_elow, uint64_t siblings)
{
	uint64_t claim = usage < low ? usage : low;

	if (siblings < claim)
		siblings = claim;
	if (siblings > parent_elow)
		return (uint64_t)((unsigned __int128)claim * parent_elow / siblings);
	return claim;
}
