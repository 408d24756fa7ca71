/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * swap: the machine's swap used at or above a share of SwapTotal for
 * PressureDuration=. No notification exists for swap use, so
 * /proc/meminfo is read every second by one timer for all watched
 * cgroups, only while the machine has swap; /proc/swaps (whose poll
 * reports swapon and swapoff) tells when that changes. Each watched
 * cgroup keeps an episode of its own (episode.c), as the pressure
 * triggers do.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "cgkilld.h"

#define SWAP_POLL_MS 1000
/* the daemon's own wakeups: under a memory stall it may be late */
#define WAKE_SLACK_MS 500
/* a swap episode ends at the first read under the share, or after a
 * silence of reads (no swap any more, or the machine was suspended) */
#define SWAP_GAP_MS (2 * SWAP_POLL_MS + WAKE_SLACK_MS)

static void swap_event(struct src *s);

static struct src swap_tick = { .event = swap_event, .fd = -1 };	/* every second, while there is swap */
static struct src swaps_file = { .event = swap_event, .fd = -1 };	/* /proc/swaps: swapon, swapoff */
static unsigned swap_users;
static uint64_t swap_total_kb;

static bool meminfo_swap(uint64_t *total, uint64_t *free_kb)
{
	char buf[8192];

	return read_small_at(AT_FDCWD, "/proc/meminfo", buf, sizeof(buf)) > 0 && kv_get(buf, "SwapTotal:", total) &&
	       kv_get(buf, "SwapFree:", free_kb);
}

static void swap_update(bool first)
{
	uint64_t total = 0, free_kb = 0;

	meminfo_swap(&total, &free_kb);
	if (total && swap_tick.fd < 0) {
		struct itimerspec its = {
			.it_value.tv_sec = SWAP_POLL_MS / 1000,
			.it_interval.tv_sec = SWAP_POLL_MS / 1000,
		};

		swap_tick.fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (swap_tick.fd < 0 || timerfd_settime(swap_tick.fd, 0, &its, NULL) < 0 ||
		    epoll_add(&swap_tick, EPOLLIN) < 0) {
			log_msg(LOG_PRI_ERR, "swap: cannot set up the timer: %s", strerror(errno));
			src_close(&swap_tick);
		} else {
			log_msg(LOG_PRI_INFO, "swap: %llu kB (SwapTotal): /proc/meminfo read every second for the swap trigger",
				(unsigned long long)total);
		}
	} else if (!total && (swap_tick.fd >= 0 || first)) {
		src_close(&swap_tick);
		log_msg(LOG_PRI_NOTICE,
			"swap: no swap (SwapTotal 0): the swap trigger waits, reading nothing, until swap is turned on (/proc/swaps tells)");
	}
	swap_total_kb = total;
}

static void swap_start(void)
{
	swaps_file.fd = open("/proc/swaps", O_RDONLY | O_CLOEXEC);
	/* its poll reports EPOLLPRI (and EPOLLERR) after swapon and swapoff */
	if (swaps_file.fd >= 0 && epoll_add(&swaps_file, EPOLLPRI) < 0)
		src_close(&swaps_file);
	if (swaps_file.fd < 0)
		log_msg(LOG_PRI_WARNING, "/proc/swaps: %s: swap turned on later is seen at a reload (SIGHUP)",
			strerror(errno));
	swap_update(true);
}

static void swap_stop(void)
{
	src_close(&swap_tick);
	src_close(&swaps_file);
	swap_total_kb = 0;
}

static void swap_check(void)
{
	uint64_t total = 0, free_kb = 0, used, t = now_ms();

	if (!meminfo_swap(&total, &free_kb) || !total) {
		swap_update(false);
		return;
	}
	used = total > free_kb ? total - free_kb : 0;
	for (struct cg *c = D.cgs; c; c = c->next) {
		struct rule *r = c->rule;
		char json[512], text[512];
		struct episode *e = &c->ep[PSRC_SWAP];

		if (!c->swap_armed)
			continue;
		if (used * 100 < (uint64_t)r->swap_pct * total) {
			if (e->start)
				log_msg(LOG_PRI_DEBUG,
					"rule %s: %s/%s: the pressure episode (swap) ended after %llums: swap used %.1f%%",
					r->name, D.v2, c->rel, (unsigned long long)(e->last - e->start),
					100.0 * (double)used / (double)total);
			episode_end(c, PSRC_SWAP);
			continue;
		}
		episode_event(c, PSRC_SWAP, t, SWAP_GAP_MS, NULL);
		/* the reads are a second apart, give or take a little */
		if (e->last - e->start + SWAP_POLL_MS / 10 < r->pressure_duration_ms)
			continue;
		snprintf(json, sizeof(json),
			 "\"type\": \"swap\", \"swap_total_kb\": %llu, \"swap_used_kb\": %llu, \"used_pct\": %.1f, \"limit_pct\": %u, \"duration_ms\": %llu, \"for_ms\": %llu",
			 (unsigned long long)total, (unsigned long long)used, 100.0 * (double)used / (double)total,
			 r->swap_pct, (unsigned long long)r->pressure_duration_ms,
			 (unsigned long long)(e->last - e->start));
		snprintf(text, sizeof(text),
			 "swap: %llu of %llu kB used (%.1f%%), at or above %u%% for %llums", (unsigned long long)used,
			 (unsigned long long)total, 100.0 * (double)used / (double)total, r->swap_pct,
			 (unsigned long long)(e->last - e->start));
		episode_end(c, PSRC_SWAP);
		act(c, episode_src_name[PSRC_SWAP], json, text);
	}
}

static void swap_event(struct src *s)
{
	uint64_t n;

	if (s->fd < 0)
		return;
	if (s == &swap_tick) {
		if (read(s->fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
			return;
		swap_check();
	} else {
		char buf[4096];
		uint64_t before = swap_total_kb;

		/* a read of the file is not needed to clear the event (its
		 * poll does), but costs nothing */
		if (read_at0(s->fd, buf, sizeof(buf)) < 0)
			return;
		swap_update(false);
		if (before != swap_total_kb)
			log_msg(LOG_PRI_INFO, "swap: SwapTotal %llu kB -> %llu kB", (unsigned long long)before,
				(unsigned long long)swap_total_kb);
	}
}

static bool swap_arm(struct cg *c, bool quiet)
{
	(void)quiet;
	if (c->swap_armed)
		return false;
	c->swap_armed = true;
	episode_end(c, PSRC_SWAP);
	if (swap_users++ == 0)
		swap_start();
	return true;
}

static void swap_disarm(struct cg *c)
{
	if (c->swap_armed) {
		c->swap_armed = false;
		if (--swap_users == 0)
			swap_stop();
	}
	episode_end(c, PSRC_SWAP);
}

static void swap_dump(const struct cg *c, struct out *o)
{
	const struct rule *r = c->rule;
	const struct episode *e = &c->ep[PSRC_SWAP];
	bool under_way = episode_under_way(c, PSRC_SWAP, now_ms());
	char ep[128] = "no episode";

	if (!c->swap_armed)
		return;
	if (o->json) {
		out_open(o, NULL, '{');
		out_str(o, "trigger", "swap");
		out_str(o, "source", episode_name(c, PSRC_SWAP));
		out_u64(o, "used_above_pct", r->swap_pct);
		out_u64(o, "swap_total_kb", swap_total_kb);
		out_u64(o, "duration_ms", r->pressure_duration_ms);
		episode_json(o, e, under_way);
		out_close(o, '}');
		return;
	}
	if (under_way)
		snprintf(ep, sizeof(ep), "episode %llums, %u event(s)", (unsigned long long)(e->last - e->start),
			 e->events);
	out_line(o, "pressure %s/%s (rule %s): %s: used at or above %u%% of SwapTotal (%llu kB)%s; %s", D.v2, c->rel,
		 r->name, episode_name(c, PSRC_SWAP), r->swap_pct, (unsigned long long)swap_total_kb,
		 swap_tick.fd < 0 ? ", not read: no swap" : "", ep);
}

const struct trigger_ops trigger_swap = {
	.name = "swap",
	.triggers = TRIG_SWAP,
	.arm = swap_arm,
	.event = swap_event,
	.disarm = swap_disarm,
	.dump = swap_dump,
};
