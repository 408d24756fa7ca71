/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Pressure: PSI triggers (memory, cpu, io; the cgroup's or the machine's)
 * and the v1 memory.pressure_level. (Swap: trigger-swap.c; the episodes
 * both keep: episode.c.)
 *
 * PSI: one kernel trigger per resource and watched cgroup, "some|full
 * STALL_us WINDOW_us" written to an open memory|cpu|io.pressure (or
 * /proc/pressure/<res>), EPOLLPRI when the stall in the trailing window
 * reached STALL, at most once per window. Without CAP_SYS_RESOURCE the
 * kernel takes only windows that are multiples of 2 s and checks them in
 * its averaging work, which runs every 2 s (PSI_FREQ): an event comes up to
 * about 2 s after the stall crossed the threshold.
 *
 * Episodes: one per source (each PSI resource, the v1 level, swap) and
 * watched cgroup, so that a trigger acts on its own events only. The first
 * event begins one; an event of the same source no later than the gap
 * (below) after the previous one continues it; a longer silence ends it
 * (seen at the next event: no timer runs). The first event attests one
 * window of stall, so the rule acts at the first event at which the
 * episode has lasted PressureDuration - PressureWindow (with duration ==
 * window: at the first event). With PressureNeedsReclaim=yes it acts only
 * if the reclaim counter rose since the episode's first event; if not it
 * says so once and the episode goes on.
 *
 * A matched cgroup does not opt out: where its owner turned its pressure
 * files off (cgroup.pressure 0), before it was watched or after, the
 * daemon turns them on, gives cgroup.pressure to root and arms at once.
 *
 * memory-pressure-level (v1): an eventfd registered through the v1
 * counterpart's cgroup.event_control with memory.pressure_level; each
 * wakeup is an event of the same kind of episode, whose events may be at
 * most PressureWindow apart, and which must last PressureDuration from
 * its first notification (which attests only its moment). It also stands in for memory-pressure where
 * the cgroup has no memory.pressure (PSI off) and a v1 counterpart exists.
 *
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <linux/magic.h>

#include "cgkilld.h"

/* the kernel's bounds of a trigger's window (kernel/sched/psi.c) */
#define WIN_MIN_MS 500
#define WIN_MAX_MS 10000
#define UNPRIV_MULTIPLE_MS 2000	/* without CAP_SYS_RESOURCE */
/* an unprivileged trigger is checked by the kernel's averaging work, every
 * 2 s (PSI_FREQ): an event due at a window after the previous one may come
 * one period later when the trailing window's growth, interpolated at one
 * period, is just short of the threshold and over it at the next */
#define AVGS_PERIOD_MS 2000
/* the daemon's own wakeups: under a memory stall it may be late too */
#define WAKE_SLACK_MS 500
/* how much earlier than due an event may be seen (wakeup jitter): at most
 * this, and at most a quarter of the window */
#define JITTER_MS 250

static const char *const res_name[PSI_NRES] = { "memory", "cpu", "io" };
static const unsigned res_trig[PSI_NRES] = { TRIG_MEMORY_PRESSURE, TRIG_CPU_PRESSURE, TRIG_IO_PRESSURE };
static const char *const level_name[] = { "low", "medium", "critical" };

static int privileged = -1;

static bool is_privileged(void)
{
	if (privileged < 0)
		privileged = has_cap_sys_resource();
	return privileged;
}

static const char *span(uint64_t ms, char *buf, size_t size)
{
	if (ms % 1000 == 0)
		snprintf(buf, size, "%llus", (unsigned long long)(ms / 1000));
	else
		snprintf(buf, size, "%llums", (unsigned long long)ms);
	return buf;
}

int pressure_trigger_text(const struct rule *r, bool priv, char *buf, size_t size, char *why,
			  size_t whysize)
{
	uint64_t win_us = r->pressure_window_ms * 1000, stall_us = win_us * r->pressure_pct / 100;
	char w[32];

	span(r->pressure_window_ms, w, sizeof(w));
	if (r->pressure_window_ms < WIN_MIN_MS || r->pressure_window_ms > WIN_MAX_MS) {
		snprintf(why, whysize, "PressureWindow=%s: the kernel takes PSI trigger windows from 500ms to 10s", w);
		return -EINVAL;
	}
	if (!priv && r->pressure_window_ms % UNPRIV_MULTIPLE_MS) {
		snprintf(why, whysize,
			 "PressureWindow=%s: without CAP_SYS_RESOURCE the kernel takes only PSI trigger windows that are multiples of 2s (2s, 4s, 6s, 8s, 10s), and this process does not have it",
			 w);
		return -EINVAL;
	}
	if (stall_us < 1 || stall_us > win_us) {
		snprintf(why, whysize, "PressureLimit=%u%% of %s: the kernel wants a stall from 1us to the window",
			 r->pressure_pct, w);
		return -EINVAL;
	}
	if (buf)
		snprintf(buf, size, "%s %llu %llu", r->pressure_full ? "full" : "some",
			 (unsigned long long)stall_us, (unsigned long long)win_us);
	return 0;
}

/* ---- reading ---- */

/* The sum of the keys that exist in text; false if none. */
static bool kv_sum(const char *text, const char *const *keys, uint64_t *sum)
{
	bool any = false;
	uint64_t v;

	*sum = 0;
	for (; *keys; keys++)
		if (kv_get(text, *keys, &v)) {
			*sum += v;
			any = true;
		}
	return any;
}

/* The machine's reclaim scans: /proc/vmstat counts only global reclaim
 * (kswapd and direct), not that of a cgroup at its limit. */
static bool vmstat_pgscan(uint64_t *v)
{
	static const char *const keys[] = { "pgscan_kswapd", "pgscan_direct", "pgscan_khugepaged", NULL };
	char buf[16384];

	return read_small_at(AT_FDCWD, "/proc/vmstat", buf, sizeof(buf)) > 0 && kv_sum(buf, keys, v);
}

enum reclaim_src { RECLAIM_NONE, RECLAIM_V2, RECLAIM_V1, RECLAIM_MACHINE };

static const char *const reclaim_json[] = {
	[RECLAIM_NONE] = "none",
	[RECLAIM_V2] = "cgroup pgscan",
	[RECLAIM_V1] = "v1 failcnt and machine pgscan",
	[RECLAIM_MACHINE] = "machine pgscan",
};

/* The reclaim counter of c: the v2 memory.stat's pgscan (the cgroup's
 * reclaim, at its limit or the machine's); on a v1 memory counterpart,
 * whose memory.stat has no pgscan, its memory.failcnt (charges that met
 * the limit and reclaimed) plus the machine's pgscan (global reclaim,
 * which failcnt does not see); else, and for PressureOf=system, the
 * machine's pgscan alone. Both parts only grow (unless failcnt is reset
 * by hand: the caller takes a fall as no rise). */
static enum reclaim_src reclaim_read(struct cg *c, uint64_t *v, char *where, size_t size)
{
	static const char *const v2keys[] = { "pgscan_kswapd", "pgscan_direct", "pgscan_khugepaged", NULL };
	char path[PATH_MAX], buf[8192], *v1;
	uint64_t m = 0;

	if (!c->rule->pressure_system) {
		snprintf(path, sizeof(path), "%s/%s%smemory.stat", D.v2, c->rel, *c->rel ? "/" : "");
		if (read_small_at(AT_FDCWD, path, buf, sizeof(buf)) > 0 && (kv_get(buf, "pgscan", v) || kv_sum(buf, v2keys, v))) {
			snprintf(where, size, "pgscan of %s", path);
			return RECLAIM_V2;
		}
		v1 = v1_counterpart(c->rel, D.v1_memory, "memory", false, where, size);
		if (v1) {
			uint64_t f = 0;

			snprintf(path, sizeof(path), "%s/memory.failcnt", v1);
			free(v1);
			if (read_small_at(AT_FDCWD, path, buf, sizeof(buf)) > 0 && sscanf(buf, "%" SCNu64, &f) == 1) {
				vmstat_pgscan(&m);
				*v = f + m;
				snprintf(where, size, "%s (limit reclaim) and the machine's pgscan (/proc/vmstat)", path);
				return RECLAIM_V1;
			}
		}
	}
	if (vmstat_pgscan(&m)) {
		*v = m;
		snprintf(where, size, "the machine's pgscan (/proc/vmstat pgscan_kswapd, pgscan_direct)");
		return RECLAIM_MACHINE;
	}
	*v = 0;
	snprintf(where, size, "no reclaim counter");
	return RECLAIM_NONE;
}

/* ---- episodes (episode.c keeps them) ---- */

static uint64_t psi_gap_ms(const struct rule *r)
{
	uint64_t late = is_privileged() ? r->pressure_window_ms / 10 : AVGS_PERIOD_MS;

	return r->pressure_window_ms + late + WAKE_SLACK_MS;
}

/* The longest silence that continues an episode of source s. */
static uint64_t gap_ms(const struct rule *r, int s)
{
	return s == PSRC_LEVEL ? r->pressure_window_ms : psi_gap_ms(r);
}

/* The reclaim counter at an episode's start (episode.c). */
static void reclaim_at_start(struct cg *c, uint64_t *v, char *where, size_t size)
{
	reclaim_read(c, v, where, size);
}

/* An event of source s at t (a PSI resource or the v1 level). */
static void pressure_episode_event(struct cg *c, int s, uint64_t t)
{
	episode_event(c, s, t, gap_ms(c->rule, s),
		      c->rule->pressure_reclaim && s < PSI_NRES ? reclaim_at_start : NULL);
}

/* Has the episode of s lasted long enough? A PSI event attests the window
 * before it, so the first one counts for a window (and the events, a
 * window apart at best, may be seen a little early); a v1 level
 * notification attests only its moment. */
static bool episode_due(const struct cg *c, int s)
{
	const struct rule *r = c->rule;
	const struct episode *e = &c->ep[s];
	uint64_t need = r->pressure_duration_ms, jitter = 0;

	if (s < PSI_NRES) {
		need = need > r->pressure_window_ms ? need - r->pressure_window_ms : 0;
		jitter = r->pressure_window_ms / 4 < JITTER_MS ? r->pressure_window_ms / 4 : JITTER_MS;
	}
	return e->last - e->start + jitter >= need;
}

/* ---- PSI triggers ---- */

static void psi_path(const struct cg *c, int i, char *path, size_t size)
{
	if (c->rule->pressure_system)
		snprintf(path, size, "/proc/pressure/%s", res_name[i]);
	else
		snprintf(path, size, "%s/%s%s%s.pressure", D.v2, c->rel, *c->rel ? "/" : "", res_name[i]);
}

static bool level_arm(struct cg *c, bool quiet, bool fallback);
static void level_disarm(struct cg *c);

/* A matched cgroup does not opt out of a rule: where its pressure files
 * are off (cgroup.pressure 0, which the cgroup's owner may write), root
 * turns them on, and gives cgroup.pressure to root (0644) so that they
 * stay on: said once a cgroup. Through the cgroup's directory, opened
 * without following links and checked to be cgroup2's, and the file
 * opened from there. Called only where a pressure file is missing or
 * its trigger was dropped while the cgroup lives, so 1 is written
 * whatever cgroup.pressure reads: the kernel hides the files (and wakes
 * our trigger) before it sets the value, and our write waits for the
 * owner's to end. True if they were turned on. */
static bool psi_turn_on(struct cg *c)
{
	struct rule *r = c->rule;
	char path[PATH_MAX];
	struct statfs sfs;
	int dir, fd = -1;
	bool on = false;

	snprintf(path, sizeof(path), "%s/%s", D.v2, c->rel);
	dir = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0 || fstatfs(dir, &sfs) < 0 || sfs.f_type != CGROUP2_SUPER_MAGIC)
		goto out;
	/* none: PSI is off for the whole machine, or Linux before 6.1 */
	fd = openat(dir, "cgroup.pressure", O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		goto out;
	if (pwrite(fd, "1", 1, 0) < 0) {
		/* ENODEV: the cgroup is being removed, nothing to turn on */
		if (errno != ENODEV && errno != ENOENT)
			log_msg(LOG_PRI_ERR, "rule %s: %s/cgroup.pressure: cannot turn its pressure files on: %s",
				r->name, path, strerror(errno));
		goto out;
	}
	on = true;
	if (fchown(fd, 0, 0) < 0 || fchmod(fd, 0644) < 0)
		log_msg(LOG_PRI_WARNING, "rule %s: %s/cgroup.pressure: cannot give it to root: %s", r->name, path,
			strerror(errno));
	if (!c->psi_turned_on)
		log_msg(LOG_PRI_NOTICE,
			"rule %s: %s: cgroup.pressure was 0 (its pressure files off): turned on, and given to root so that it stays on (a matched cgroup does not opt out of the rule; said once for this cgroup)",
			r->name, path);
	c->psi_turned_on = true;
out:
	if (fd >= 0)
		close(fd);
	if (dir >= 0)
		close(dir);
	return on;
}

static bool psi_arm(struct cg *c, int i, bool quiet)
{
	struct rule *r = c->rule;
	char path[PATH_MAX], text[64], why[512];
	int fd;

	if (pressure_trigger_text(r, is_privileged(), text, sizeof(text), why, sizeof(why)) < 0) {
		if (!quiet)
			log_msg(LOG_PRI_ERR, "rule %s: %s/%s: %s-pressure not armed: %s", r->name, D.v2, c->rel,
				res_name[i], why);
		return false;
	}
	psi_path(c, i, path, sizeof(path));
	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && !r->pressure_system && psi_turn_on(c))
		fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		if (e == ENOENT && i == PSI_MEMORY && !r->pressure_system && D.v1_memory) {
			if (c->plevel.fd >= 0)
				return false;	/* armed already */
			if (!level_arm(c, quiet, true))
				return false;
			log_msg(LOG_PRI_INFO,
				"rule %s: %s/%s: no memory.pressure (PSI is off: psi=0, or cgroup.pressure 0): memory-pressure stands on the v1 memory.pressure_level (%s) instead",
				r->name, D.v2, c->rel, level_name[r->pressure_level]);
			return true;
		}
		if (e != ENOENT)
			open_failed(path, e);
		else if (!quiet && r->told_unarmed++ == 0)
			log_msg(LOG_PRI_NOTICE,
				"rule %s: %s: no such file (PSI is off: psi=0 on the kernel's command line, CONFIG_PSI, or cgroup.pressure 0): %s-pressure not armed (said once for each rule)",
				r->name, path, res_name[i]);
		return false;
	}
	/* /proc/pressure/ takes the buffer's last byte for the NUL: give it
	 * one; the cgroup files take the text as it is */
	if (write(fd, text, strlen(text) + (r->pressure_system ? 1 : 0)) < 0) {
		int e = errno;

		log_msg(LOG_PRI_ERR, "rule %s: %s: the PSI trigger \"%s\" refused: %s%s", r->name, path, text,
			strerror(e),
			e == EINVAL ? " (the kernel takes windows from 500ms to 10s, multiples of 2s without CAP_SYS_RESOURCE, and a stall up to the window)"
			: e == EBUSY ? " (one trigger per open file)"
				     : "");
		close(fd);
		return false;
	}
	c->psi[i].fd = fd;
	if (epoll_add(&c->psi[i], EPOLLPRI) < 0) {
		src_close(&c->psi[i]);
		return false;
	}
	log_msg(LOG_PRI_DEBUG, "rule %s: %s/%s: %s-pressure: PSI trigger \"%s\" on %s", r->name, D.v2, c->rel,
		res_name[i], text, path);
	if (i == PSI_MEMORY && c->plevel_fallback) {
		/* memory.pressure is back (cgroup.pressure 1 again): the
		 * level no longer stands in, unless the rule has it too */
		if (r->triggers & TRIG_PRESSURE_LEVEL) {
			c->plevel_fallback = false;
		} else {
			level_disarm(c);
			episode_end(c, PSRC_LEVEL);
		}
		log_msg(LOG_PRI_INFO,
			"rule %s: %s/%s: memory.pressure is back: memory-pressure stands on its PSI trigger again, not on the v1 memory.pressure_level",
			r->name, D.v2, c->rel);
	}
	return true;
}

static void psi_event(struct cg *c, int i)
{
	struct rule *r = c->rule;
	char buf[512], path[PATH_MAX], json[1024], text[2 * PATH_MAX + 1024], reclaim_j[160] = "",
	     reclaim_t[PATH_MAX + 256] = "";
	struct psi_line p = { 0 };
	uint64_t t = now_ms(), episode, attested, win_us = r->pressure_window_ms * 1000,
		 thr_us = win_us * r->pressure_pct / 100;
	enum reclaim_src rs = RECLAIM_NONE;
	struct episode *e = &c->ep[i];

	psi_path(c, i, path, sizeof(path));
	if (read_at0(c->psi[i].fd, buf, sizeof(buf)) < 0) {
		/* the cgroup is going away (or its PSI was turned off):
		 * EPOLLERR for ever; the trigger goes with the file */
		src_close(&c->psi[i]);
		/* cgroup.pressure 0 hides the file: turned on and armed again
		 * at once, the episode going on. Asked of cgroup.pressure, not
		 * of the file: the kernel wakes us while it is still hiding
		 * it, and our write of 1 waits for that to end. Where it
		 * cannot be turned on, memory-pressure stands on the v1 level
		 * meanwhile, where there is one */
		if (!r->pressure_system && (psi_turn_on(c) || (access(path, F_OK) < 0 && errno == ENOENT)) &&
		    psi_arm(c, i, true) && c->psi[i].fd >= 0) {
			log_msg(LOG_PRI_INFO, "rule %s: %s: its pressure files were turned off: %s-pressure armed again",
				r->name, path, res_name[i]);
			return;
		}
		log_msg(LOG_PRI_INFO,
			"rule %s: %s: gone: %s-pressure trigger dropped (armed again when the cgroup next becomes populated)",
			r->name, path, res_name[i]);
		episode_end(c, i);
		return;
	}
	psi_parse(buf, r->pressure_full, &p);
	pressure_episode_event(c, i, t);
	episode = e->last - e->start;
	attested = episode + r->pressure_window_ms;
	if (!episode_due(c, i)) {
		/* the stall attested (its first event counts for a window)
		 * against the configured duration: both as the rule says them */
		log_msg(LOG_PRI_DEBUG,
			"rule %s: %s: %s stall above %u%% of a %llums window (avg10 %.2f%%): %llums of PressureDuration=%llums (%u event(s) over %llums)",
			r->name, path, r->pressure_full ? "full" : "some", r->pressure_pct,
			(unsigned long long)r->pressure_window_ms, p.avg10, (unsigned long long)attested,
			(unsigned long long)r->pressure_duration_ms, e->events, (unsigned long long)episode);
		return;
	}
	if (r->pressure_reclaim) {
		char where[PATH_MAX + 128];
		uint64_t v = 0;

		rs = reclaim_read(c, &v, where, sizeof(where));
		if (v <= e->pgscan_base) {
			if (v < e->pgscan_base)
				e->pgscan_base = v;	/* reset by hand */
			if (!e->reclaim_told)
				log_msg(LOG_PRI_NOTICE,
					"rule %s: %s: %s stall above %u%% of each %llums window for %llums (avg10 %.2f%%), but no reclaim: %s did not rise since the episode began; not acted on (said once an episode)",
					r->name, path, r->pressure_full ? "full" : "some", r->pressure_pct,
					(unsigned long long)r->pressure_window_ms,
					(unsigned long long)attested, p.avg10, where);
			e->reclaim_told = true;
			return;
		}
		snprintf(reclaim_j, sizeof(reclaim_j), ", \"reclaim\": \"%s\", \"reclaim_rise\": %llu",
			 reclaim_json[rs], (unsigned long long)(v - e->pgscan_base));
		snprintf(reclaim_t, sizeof(reclaim_t), "; reclaim: %s rose by %llu", where,
			 (unsigned long long)(v - e->pgscan_base));
	}
	snprintf(json, sizeof(json),
		 "\"type\": \"%s-pressure\", \"of\": \"%s\", \"kind\": \"%s\", \"avg10\": %.2f, \"avg60\": %.2f, \"avg300\": %.2f, \"total_us\": %llu, \"threshold_us\": %llu, \"window_us\": %llu, \"duration_ms\": %llu, \"episode_ms\": %llu, \"events\": %u%s",
		 res_name[i], r->pressure_system ? "system" : "cgroup", r->pressure_full ? "full" : "some",
		 p.avg10, p.avg60, p.avg300, p.total,
		 (unsigned long long)thr_us, (unsigned long long)win_us,
		 (unsigned long long)r->pressure_duration_ms, (unsigned long long)attested, e->events,
		 reclaim_j);
	snprintf(text, sizeof(text),
		 "%s-pressure%s: %s stall at or above %u%% of each %llums window for %llums (%u trigger event(s) over %llums); %s avg10 %.2f%% avg60 %.2f%% avg300 %.2f%% total %lluus%s",
		 res_name[i], r->pressure_system ? " (the machine's)" : "", r->pressure_full ? "full" : "some",
		 r->pressure_pct, (unsigned long long)r->pressure_window_ms,
		 (unsigned long long)attested, e->events,
		 (unsigned long long)episode, path, p.avg10, p.avg60, p.avg300, p.total, reclaim_t);
	/* only this source's episode starts over: the others go on */
	episode_end(c, i);
	act(c, episode_src_name[i], json, text);
}

/* ---- the v1 memory.pressure_level ---- */

static bool level_arm(struct cg *c, bool quiet, bool fallback)
{
	struct rule *r = c->rule;
	char why[PATH_MAX + 512], *v1 = v1_counterpart(c->rel, D.v1_memory, "memory", false, why, sizeof(why)),
	     path[PATH_MAX], line[96];
	int ctl = -1, e = 0;

	if (!v1 && *why) {
		counterpart_refused(c, "memory",
				    fallback ? "memory-pressure (for lack of memory.pressure)" : "memory-pressure-level",
				    why);
		return false;
	}
	if (!v1) {
		if (!quiet && r->told_unarmed++ == 0)
			log_msg(LOG_PRI_NOTICE, "rule %s: %s/%s has no v1 memory counterpart yet: %s (said once for each rule)",
				r->name, D.v2, c->rel,
				fallback ? "memory-pressure, without memory.pressure (PSI off), not armed"
					 : "memory-pressure-level armed once there is one");
		return false;
	}
	snprintf(path, sizeof(path), "%s/memory.pressure_level", v1);
	c->plevel_file = open(path, O_RDONLY | O_CLOEXEC);
	if (c->plevel_file < 0) {
		if (errno != ENOENT)
			open_failed(path, errno);
		free(v1);
		return false;
	}
	c->plevel.fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	snprintf(path, sizeof(path), "%s/cgroup.event_control", v1);
	ctl = open(path, O_WRONLY | O_CLOEXEC);
	if (c->plevel.fd < 0 || ctl < 0) {
		e = errno;
	} else {
		/* "hierarchy": told of the pressure below too, even where a
		 * descendant has a listener of its own (Linux 4.9+) */
		snprintf(line, sizeof(line), "%d %d %s,hierarchy", c->plevel.fd, c->plevel_file,
			 level_name[r->pressure_level]);
		if (write(ctl, line, strlen(line)) < 0) {
			snprintf(line, sizeof(line), "%d %d %s", c->plevel.fd, c->plevel_file,
				 level_name[r->pressure_level]);
			if (write(ctl, line, strlen(line)) < 0)
				e = errno;
		}
		if (!e && epoll_add(&c->plevel, EPOLLIN) < 0)
			e = errno;
	}
	if (ctl >= 0)
		close(ctl);
	if (e) {
		log_msg(LOG_PRI_WARNING, "rule %s: cannot register for memory pressure level notifications in %s: %s",
			r->name, v1, strerror(e));
		src_close(&c->plevel);
		close(c->plevel_file);
		c->plevel_file = -1;
		free(v1);
		return false;
	}
	c->plevel_fallback = fallback;
	counterpart_used(c, "memory");
	log_msg(LOG_PRI_DEBUG, "rule %s: %s/%s: memory-pressure-level: %s on %s/memory.pressure_level%s", r->name,
		D.v2, c->rel, level_name[r->pressure_level], v1, fallback ? " (for memory-pressure)" : "");
	free(v1);
	return true;
}

static void level_disarm(struct cg *c)
{
	src_close(&c->plevel);
	if (c->plevel_file >= 0)
		close(c->plevel_file);
	c->plevel_file = -1;
	c->plevel_fallback = false;
}

static void level_event(struct cg *c)
{
	struct rule *r = c->rule;
	uint64_t n = 0, t = now_ms(), episode;
	char buf[8], json[512], text[512];

	if (read(c->plevel.fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return;
	/* the file has no read handler (EINVAL): anything else means that
	 * the cgroup is gone, and the kernel signalled the eventfd for that */
	if (pread(c->plevel_file, buf, sizeof(buf), 0) < 0 && errno != EINVAL) {
		log_msg(LOG_PRI_INFO, "rule %s: %s/%s: the v1 memory counterpart is gone: memory-pressure-level dropped",
			r->name, D.v2, c->rel);
		level_disarm(c);
		episode_end(c, PSRC_LEVEL);
		return;
	}
	if (!n)
		return;
	pressure_episode_event(c, PSRC_LEVEL, t);
	c->plevel_count += n;
	episode = c->ep[PSRC_LEVEL].last - c->ep[PSRC_LEVEL].start;
	if (!episode_due(c, PSRC_LEVEL)) {
		log_msg(LOG_PRI_DEBUG,
			"rule %s: %s/%s: memory pressure level %s (%llu notification(s)): %llums of PressureDuration=%llums",
			r->name, D.v2, c->rel, level_name[r->pressure_level], (unsigned long long)n,
			(unsigned long long)episode, (unsigned long long)r->pressure_duration_ms);
		return;
	}
	if (!counterpart_still_own(c, c->plevel_file, "memory", episode_src_name[PSRC_LEVEL])) {
		/* armed again when the cgroup next becomes populated */
		level_disarm(c);
		episode_end(c, PSRC_LEVEL);
		return;
	}
	snprintf(json, sizeof(json),
		 "\"type\": \"memory-pressure-level\", \"hierarchy\": \"v1\", \"level\": \"%s\", \"for\": \"%s\", \"notifications\": %llu, \"events\": %u, \"window_ms\": %llu, \"duration_ms\": %llu, \"episode_ms\": %llu",
		 level_name[r->pressure_level], c->plevel_fallback ? "memory-pressure" : "memory-pressure-level",
		 (unsigned long long)c->plevel_count, c->ep[PSRC_LEVEL].events, (unsigned long long)r->pressure_window_ms,
		 (unsigned long long)r->pressure_duration_ms, (unsigned long long)episode);
	snprintf(text, sizeof(text),
		 "memory-pressure-level%s: the v1 memory pressure level reached %s: %llu notification(s) in %u wakeup(s) over %llums, none more than %llums apart",
		 c->plevel_fallback ? " (for memory-pressure: no PSI)" : "", level_name[r->pressure_level],
		 (unsigned long long)c->plevel_count, c->ep[PSRC_LEVEL].events, (unsigned long long)episode,
		 (unsigned long long)r->pressure_window_ms);
	episode_end(c, PSRC_LEVEL);
	act(c, episode_src_name[PSRC_LEVEL], json, text);
}

/* ---- the interface ---- */

static bool pressure_arm(struct cg *c, bool quiet)
{
	struct rule *r = c->rule;
	bool armed = false;

	for (int i = 0; i < PSI_NRES; i++) {
		c->psi[i].event = trigger_pressure.event;
		c->psi[i].close_later = true;
		c->psi[i].cg = c;
		if ((r->triggers & res_trig[i]) && c->psi[i].fd < 0)
			armed |= psi_arm(c, i, quiet);
	}
	c->plevel.cg = c;
	c->plevel.event = trigger_pressure.event;
	if ((r->triggers & TRIG_PRESSURE_LEVEL) && c->plevel.fd < 0)
		armed |= level_arm(c, quiet, false);
	return armed;
}

static void pressure_event(struct src *s)
{
	struct cg *c = s->cg;

	if (s->fd < 0)
		return;
	if (s == &c->plevel) {
		level_event(c);
		return;
	}
	for (int i = 0; i < PSI_NRES; i++)
		if (s == &c->psi[i])
			psi_event(c, i);
}

static void pressure_dump(const struct cg *c, struct out *o)
{
	const struct rule *r = c->rule;
	char trig[64] = "?", why[512];
	uint64_t t = now_ms();

	pressure_trigger_text(r, is_privileged(), trig, sizeof(trig), why, sizeof(why));
	for (int s = 0; s <= PSRC_LEVEL; s++) {
		const struct episode *e = &c->ep[s];
		int fd = s < PSI_NRES ? c->psi[s].fd : c->plevel_file;
		char link[64], path[PATH_MAX] = "?", what[PATH_MAX + 128], ep[128] = "no episode";
		bool under_way = episode_under_way(c, s, t);
		ssize_t n;

		if (fd < 0)
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, path, sizeof(path) - 1);
		if (n > 0)
			path[n] = '\0';
		if (o->json) {
			out_open(o, NULL, '{');
			out_str(o, "trigger", s < PSI_NRES ? "pressure" : "memory-pressure-level");
			out_str(o, "source", episode_name(c, s));
			out_str(o, "file", path);
			out_str(o, "kernel_trigger", s < PSI_NRES ? trig : level_name[r->pressure_level]);
			out_u64(o, "duration_ms", r->pressure_duration_ms);
			episode_json(o, e, under_way);
			out_close(o, '}');
			continue;
		}
		if (s < PSI_NRES)
			snprintf(what, sizeof(what), "PSI trigger \"%s\" on %s", trig, path);
		else
			snprintf(what, sizeof(what), "%s on %s", level_name[r->pressure_level], path);
		if (under_way)
			snprintf(ep, sizeof(ep), "episode %llums, %u event(s)",
				 (unsigned long long)(e->last - e->start), e->events);
		out_line(o, "pressure %s/%s (rule %s): %s: %s; %s", D.v2, c->rel, r->name, episode_name(c, s), what, ep);
	}
}

static void pressure_disarm(struct cg *c)
{
	for (int i = 0; i < PSI_NRES; i++)
		src_close(&c->psi[i]);
	level_disarm(c);
	for (int s = 0; s <= PSRC_LEVEL; s++)
		episode_end(c, s);
}

const struct trigger_ops trigger_pressure = {
	.name = "pressure",
	.triggers = TRIG_PSI | TRIG_PRESSURE_LEVEL,
	.arm = pressure_arm,
	.event = pressure_event,
	.disarm = pressure_disarm,
	.dump = pressure_dump,
	.late = "pressure trigger(s) armed (cgroup populated)",
};
