/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Pressure episodes: one per source (each PSI resource, the v1 level,
 * swap) and watched cgroup, kept for the pressure and swap triggers. The
 * first event begins one; an event of the same source no later than its
 * gap after the previous one continues it; a longer silence ends it (seen
 * at the next event: no timer runs). Each episode holds its own gap, set
 * by the trigger that feeds it, so that whether another source's episode
 * is under way is known here.
 */
#include <limits.h>
#include <stdio.h>

#include "cgkilld.h"

const char *const episode_src_name[PSRC_N] = {
	[PSRC_MEMORY] = "memory-pressure",
	[PSRC_CPU] = "cpu-pressure",
	[PSRC_IO] = "io-pressure",
	[PSRC_LEVEL] = "memory-pressure-level",
	[PSRC_SWAP] = "swap",
};

bool episode_under_way(const struct cg *c, int s, uint64_t t)
{
	const struct episode *e = &c->ep[s];

	return e->start && t - e->last <= e->gap_ms;
}

/* Is an episode of c, of another source than s, under way at t? */
static bool episode_other(const struct cg *c, int s, uint64_t t)
{
	for (int o = 0; o < PSRC_N; o++)
		if (o != s && episode_under_way(c, o, t))
			return true;
	return false;
}

const char *episode_name(const struct cg *c, int s)
{
	return s == PSRC_LEVEL && c->plevel_fallback ? "memory-pressure-level, for memory-pressure"
						     : episode_src_name[s];
}

void episode_end(struct cg *c, int s)
{
	c->ep[s] = (struct episode){ 0 };
	if (s == PSRC_LEVEL)
		c->plevel_count = 0;
}

/* The growth of Victim=memory-growth is measured from the start of the
 * first episode that began while c had none under way. */
void episode_event(struct cg *c, int s, uint64_t t, uint64_t gap_ms, reclaim_fn *reclaim)
{
	struct rule *r = c->rule;
	struct episode *e = &c->ep[s];

	if (e->start && t - e->last > e->gap_ms) {
		log_msg(LOG_PRI_DEBUG,
			"rule %s: %s/%s: the pressure episode (%s) ended after %llums, %u event(s) (no event for %llums)",
			r->name, D.v2, c->rel, episode_name(c, s), (unsigned long long)(e->last - e->start), e->events,
			(unsigned long long)(t - e->last));
		episode_end(c, s);
	}
	if (!e->start) {
		bool others = episode_other(c, s, t);

		episode_end(c, s);
		e->start = t;
		if (reclaim) {
			char where[PATH_MAX + 128];

			reclaim(c, &e->pgscan_base, where, sizeof(where));
			log_msg(LOG_PRI_DEBUG,
				"rule %s: %s/%s: a pressure episode began (%s)%s; reclaim read from %s (%llu)",
				r->name, D.v2, c->rel, episode_name(c, s), others ? " beside another" : "", where,
				(unsigned long long)e->pgscan_base);
		} else {
			log_msg(LOG_PRI_DEBUG, "rule %s: %s/%s: a pressure episode began (%s)%s", r->name, D.v2,
				c->rel, episode_name(c, s), others ? " beside another" : "");
		}
		if (!others)
			victim_episode_start(c);
	}
	e->gap_ms = gap_ms;
	e->last = t;
	e->events++;
}

void episode_json(struct out *o, const struct episode *e, bool under_way)
{
	if (!under_way) {
		out_raw(o, "episode", NULL);
		return;
	}
	out_open(o, "episode", '{');
	out_u64(o, "elapsed_ms", e->last - e->start);
	out_u64(o, "events", e->events);
	out_close(o, '}');
}
