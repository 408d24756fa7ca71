/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fork bomb: the "max" counter of pids.events (forks refused at pids.max)
 * rises by PidsMaxEvents within PidsWindow.
 *
 * cgroup v2 pids: pids.events notifies (EPOLLPRI); each wakeup re-reads it.
 * v1 pids hierarchy (hybrid layouts): the cgroup of the same path under the
 * v1 mount. Its pids.events sends no notification (checked on 6.18: neither
 * poll nor inotify wake), so it is read every PollInterval, and only while
 * the v2 cgroup is populated (cgroup.events notifies that): an idle or
 * empty cgroup costs no wakeup. The log says so when it starts.
 *
 * pids-current: pids.current stays at or above PidsCurrentAbove% of
 * pids.max (the cgroup's own limit, in the hierarchy of its pids.events)
 * for PidsCurrentFor. pids.current notifies on neither v1 nor v2 (only
 * pids.events' "max" does, on v2, at 100%), so it is read:
 *  - on every look at pids.events (each v1 poll tick; each v2 pids.events
 *    notification) and on each cgroup.events (populated) notification;
 *  - and, for lack of any notification as it rises below pids.max, every
 *    PollInterval while the cgroup is populated, with the same one timer
 *    as the v1 pids.events poll (on v2 too: the log says so once). An
 *    empty cgroup costs nothing; no timer runs while none is populated.
 * The duration is measured between those reads: the condition holds from
 * the first read at or above the percentage until a read below it (or the
 * cgroup empties); the trigger fires at the first read at least
 * PidsCurrentFor after it began, so up to one PollInterval late. Then the
 * duration starts again (a log or dry-run rule reports once per duration).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "cgkilld.h"

static bool read_max(struct cg *c, uint64_t *v)
{
	char buf[256];

	if (read_at0(c->pids.fd, buf, sizeof(buf)) < 0)
		return false;
	return pids_events_max(buf, v);
}

static void push(struct cg *c, uint64_t t, uint64_t v)
{
	unsigned newest = (c->sample_head + c->nsamples - 1) % PIDS_SAMPLES;

	/* samples closer than window/16 to the newest are not kept: the rise
	 * is then overestimated by at most what came in that time */
	if (c->nsamples && t - c->samples[newest].t < c->rule->pids_window_ms / 16 + 1)
		return;
	if (c->nsamples == PIDS_SAMPLES) {
		c->sample_head = (c->sample_head + 1) % PIDS_SAMPLES;
		c->nsamples--;
	}
	c->samples[(c->sample_head + c->nsamples) % PIDS_SAMPLES].t = t;
	c->samples[(c->sample_head + c->nsamples) % PIDS_SAMPLES].v = v;
	c->nsamples++;
}

static void reset(struct cg *c, uint64_t t, uint64_t v)
{
	c->nsamples = 0;
	c->sample_head = 0;
	push(c, t, v);
}

/* A file beside the pids.events in use: the v2 cgroup's, or its v1
 * counterpart's (which need not have the v2 cgroup's path). */
static uint64_t read_file_u64(struct cg *c, const char *name, bool *is_max)
{
	char path[4096], dir[4000];
	uint64_t v;

	*is_max = false;
	if (!counterpart_dir(c->pids.fd, dir, sizeof(dir)))
		return 0;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!read_number_at(AT_FDCWD, path, &v))
		return 0;
	*is_max = v == UINT64_MAX;
	return *is_max ? 0 : v;
}

/* A number from an open pids.current or pids.max: false if unreadable;
 * *unlimited for "max". */
static bool read_num(int fd, uint64_t *v, bool *unlimited)
{
	*unlimited = false;
	if (!read_number_fd(fd, v))
		return false;
	*unlimited = *v == UINT64_MAX;
	if (*unlimited)
		*v = 0;
	return true;
}

static void poll_update(void);
static void current_close(struct cg *c);

/* pids.current and pids.max of the cgroup directory dir: is it at its
 * numeric limit, or near it (within max/16 + 1: tasks exit while others
 * are refused)? */
static bool at_limit(const char *dir, uint64_t *cur, uint64_t *lim)
{
	char path[PATH_MAX + 16];
	bool cur_max = true, lim_max = true, ok;
	int cfd, lfd;

	snprintf(path, sizeof(path), "%s/pids.current", dir);
	cfd = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "%s/pids.max", dir);
	lfd = open(path, O_RDONLY | O_CLOEXEC);
	ok = read_num(cfd, cur, &cur_max) && read_num(lfd, lim, &lim_max) && !cur_max && !lim_max &&
	     *cur + *lim / 16 + 1 >= *lim;
	if (cfd >= 0)
		close(cfd);
	if (lfd >= 0)
		close(lfd);
	return ok;
}

/* Is the cgroup v2 mount's super option pids_localevents on
 * (/proc/self/mountinfo)? */
static bool v2_localevents(void)
{
	char line[4096], mnt[PATH_MAX];
	bool on = false;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	while (f && !on && fgets(line, sizeof(line), f)) {
		const char *sep = strstr(line, " - cgroup2 ");

		if (sep && sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1 && !strcmp(mnt, D.v2))
			on = strstr(sep, ",pids_localevents") || strstr(sep, " pids_localevents");
	}
	if (f)
		fclose(f);
	return on;
}

/* Before acting on a pids-max rise: did c's own limit refuse the forks?
 * v1 pids.events (and v2's with pids_localevents) counts the forks
 * refused to the cgroup's own tasks by ANY ancestor's limit: an outsider
 * who fills a shared ancestor's pids.max would make an innocent "a fork
 * bomb" (RT1 #3). So: its own pids.current at or near its pids.max, or an
 * ancestor's that belongs to c alone (counterpart.c). Else not acted on,
 * said once an episode. v2 pids.events.local (and pids.events before
 * 6.13) count the own limit only. */
static bool own_limit(struct cg *c)
{
	const char *mount = c->pids_v1 ? D.v1_pids : D.v2;
	char dir[PATH_MAX], why[PATH_MAX + 512] = "";
	size_t ml = mount ? strlen(mount) : 0;
	uint64_t cur, lim;

	if ((!c->pids_v1 && !v2_localevents()) || !counterpart_dir(c->pids.fd, dir, sizeof(dir)))
		return true;
	if (at_limit(dir, &cur, &lim))
		return true;
	for (char *slash; (slash = strrchr(dir, '/')) && (size_t)(slash - dir) > ml;) {
		*slash = '\0';
		if (!at_limit(dir, &cur, &lim))
			continue;
		if (c->pids_v1 && v1_alone(c->rel, mount, "pids", dir, why, sizeof(why)))
			return true;
		if (!c->pids_foreign_told)
			log_msg(LOG_PRI_NOTICE,
				"rule %s: %s/%s: pids-max: not acted on: the forks were refused by the pids.max of its ancestor %s (pids %llu of %llu), not by its own, and that ancestor is not its alone: %s",
				c->rule->name, D.v2, c->rel, dir, (unsigned long long)cur, (unsigned long long)lim,
				*why ? why : "it holds other cgroups than it");
		c->pids_foreign_told = true;
		return false;
	}
	if (!c->pids_foreign_told)
		log_msg(LOG_PRI_NOTICE,
			"rule %s: %s/%s: pids-max: not acted on (yet): neither its own pids.max nor an ancestor's is reached now, so the limit that refused the forks is not known to be its own",
			c->rule->name, D.v2, c->rel);
	c->pids_foreign_told = true;
	return false;
}

/* Before acting on a v1 counterpart: is it still c's alone? If not, the
 * pids triggers are dropped until the cgroup next becomes populated
 * (watch.c arms them again then, if it is c's own again). */
static bool still_own(struct cg *c, const char *what)
{
	if (!c->pids_v1 || counterpart_still_own(c, c->pids.fd, "pids", what))
		return true;
	src_close(&c->pids);
	current_close(c);
	c->pids_v1 = false;
	c->nsamples = 0;
	poll_update();
	return false;
}

/* pids-current: is the condition held long enough? Fires at most once a
 * duration. */
static void current_check(struct cg *c, uint64_t t)
{
	struct rule *r = c->rule;
	uint64_t cur, lim;
	bool cur_max, lim_max, holds;

	if (!c->pcur_open)
		return;
	holds = read_num(c->pcur_fd, &cur, &cur_max) && read_num(c->pmax_fd, &lim, &lim_max) &&
		!cur_max && !lim_max && lim > 0 && cur > 0 &&
		cur * 100 >= (uint64_t)r->pids_current_pct * lim;
	if (!holds) {
		if (c->high)
			log_msg(LOG_PRI_DEBUG, "rule %s: %s/%s: pids-current: below %u%% of pids.max again after %llums",
				r->name, D.v2, c->rel, r->pids_current_pct,
				(unsigned long long)(t - c->high_since));
		c->high = false;
		return;
	}
	if (!c->high) {
		c->high = true;
		c->high_since = t;
		log_msg(LOG_PRI_DEBUG,
			"rule %s: %s/%s: pids-current: pids.current %llu of %llu, at or above %u%%: acting if it stays for %llums",
			r->name, D.v2, c->rel, (unsigned long long)cur, (unsigned long long)lim,
			r->pids_current_pct, (unsigned long long)r->pids_current_for_ms);
		return;
	}
	if (t - c->high_since >= r->pids_current_for_ms) {
		char json[320], text[256];
		uint64_t held = t - c->high_since;

		if (!still_own(c, "pids-current"))
			return;

		c->high_since = t;	/* a new duration from now */
		snprintf(json, sizeof(json),
			 "\"type\": \"pids-current\", \"hierarchy\": \"v%d\", \"pids_current\": %llu, \"pids_max\": %llu, "
			 "\"percent\": %u, \"for_ms\": %llu, \"held_ms\": %llu",
			 c->pids_v1 ? 1 : 2, (unsigned long long)cur, (unsigned long long)lim,
			 r->pids_current_pct, (unsigned long long)r->pids_current_for_ms,
			 (unsigned long long)held);
		snprintf(text, sizeof(text),
			 "pids-current (v%d): pids.current %llu of pids.max %llu, at or above %u%% for %llums",
			 c->pids_v1 ? 1 : 2, (unsigned long long)cur, (unsigned long long)lim,
			 r->pids_current_pct, (unsigned long long)held);
		act(c, "pids-current", json, text);
	}
}

/* The counter at t - window: the newest sample not after it, or the
 * oldest we have (c has samples). */
static uint64_t window_base(const struct cg *c, uint64_t t)
{
	uint64_t base = c->samples[c->sample_head].v;

	for (unsigned i = 0; i < c->nsamples; i++) {
		unsigned k = (c->sample_head + i) % PIDS_SAMPLES;

		if (c->samples[k].t + c->rule->pids_window_ms <= t)
			base = c->samples[k].v;
	}
	return base;
}

static void sample(struct cg *c)
{
	uint64_t v, t = now_ms(), base, rise;
	struct rule *r = c->rule;

	if (!(r->triggers & TRIG_PIDS_MAX)) {
		current_check(c, t);
		return;
	}
	if (!read_max(c, &v))
		return;	/* going away: the inotify event follows */
	if (!c->nsamples) {
		reset(c, t, v);
		current_check(c, t);
		return;
	}
	base = window_base(c, t);
	if (v < base) {
		reset(c, t, v);
		current_check(c, t);
		return;
	}
	rise = v - base;
	if (rise >= r->pids_max_events) {
		char json[320], text[256], lims[32];
		bool cur_max, lim_max;
		uint64_t cur = read_file_u64(c, "pids.current", &cur_max);
		uint64_t lim = read_file_u64(c, "pids.max", &lim_max);

		if (!still_own(c, "pids-max") || !own_limit(c))
			return;
		c->pids_foreign_told = false;
		reset(c, t, v);
		if (lim_max)
			snprintf(lims, sizeof(lims), "\"max\"");
		else
			snprintf(lims, sizeof(lims), "%llu", (unsigned long long)lim);
		snprintf(json, sizeof(json),
			 "\"type\": \"pids-max\", \"hierarchy\": \"v%d\", \"max_events_total\": %llu, \"max_events_rise\": %llu, "
			 "\"window_ms\": %llu, \"pids_current\": %llu, \"pids_max\": %s",
			 c->pids_v1 ? 1 : 2, (unsigned long long)v, (unsigned long long)rise,
			 (unsigned long long)r->pids_window_ms, (unsigned long long)cur, lims);
		snprintf(text, sizeof(text),
			 "pids-max (v%d): pids.events max rose by %llu to %llu within %llums, pids %llu of %s",
			 c->pids_v1 ? 1 : 2, (unsigned long long)rise, (unsigned long long)v,
			 (unsigned long long)r->pids_window_ms, (unsigned long long)cur,
			 lim_max ? "max" : lims);
		act(c, "pids-max", json, text);
		c->high = false;	/* acted on: pids-current starts over */
		return;
	}
	c->pids_foreign_told = false;	/* the episode, if any, is over */
	push(c, t, v);
	current_check(c, t);
}

static void pids_event(struct src *s)
{
	sample(s->cg);
}

/* The poll timer runs while at least one polled cgroup is populated. */
static void poll_update(void)
{
	bool need = false;
	struct itimerspec its = { 0 };

	for (struct cg *c = D.cgs; c && !need; c = c->next)
		need = cg_polled(c);
	if (need == D.v1poll_armed)
		return;
	if (need) {
		its.it_value.tv_sec = (time_t)(D.cfg.poll_ms / 1000);
		its.it_value.tv_nsec = (long)(D.cfg.poll_ms % 1000) * 1000000;
		its.it_interval = its.it_value;
	}
	if (timerfd_settime(D.v1poll.fd, 0, &its, NULL) < 0)
		log_msg(LOG_PRI_ERR, "pids poll timer: %s", strerror(errno));
	D.v1poll_armed = need;
	log_msg(LOG_PRI_DEBUG, "pids poll %s", need ? "started" : "stopped");
}

/* The v2 cgroup's populated state changed (watch.c read it). */
static void pids_populated(struct cg *c)
{
	if (c->pids.fd < 0)
		return;
	if (c->populated)
		sample(c);
	else
		c->high = false;	/* emptied: the condition ends */
	poll_update();
}

void pids_poll_tick(struct src *s)
{
	uint64_t ticks;

	if (read(s->fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		log_msg(LOG_PRI_DEBUG, "v1 poll timer: %s", strerror(errno));
	for (struct cg *c = D.cgs; c; c = c->next)
		if (cg_polled(c))
			sample(c);
}

/* pids-current: pids.current and pids.max beside the pids.events just
 * opened in dir (the v2 cgroup or its v1 counterpart). */
static void current_open(struct cg *c, const char *dir)
{
	if (!(c->rule->triggers & TRIG_PIDS_CURRENT) || c->pcur_open)
		return;
	c->pcur_fd = cg_file_open(dir, "", "pids.current", O_RDONLY | O_NONBLOCK);
	c->pmax_fd = c->pcur_fd >= 0 ? cg_file_open(dir, "", "pids.max", O_RDONLY | O_NONBLOCK) : -1;
	if (c->pmax_fd < 0) {
		if (errno != ENOENT)
			open_failed(dir, errno);
		if (c->pcur_fd >= 0)
			close(c->pcur_fd);
		return;
	}
	c->pcur_open = true;
	c->high = false;
	if (!D.pcur_poll_logged) {
		log_msg(LOG_PRI_NOTICE,
			"pids.current gives no notification (v1 or v2): reading it every %llums in the cgroups watched by pids-current rules while they are populated",
			(unsigned long long)D.cfg.poll_ms);
		D.pcur_poll_logged = true;
	}
}

static void current_close(struct cg *c)
{
	if (!c->pcur_open)
		return;
	close(c->pcur_fd);
	close(c->pmax_fd);
	c->pcur_open = false;
	c->high = false;
}

/* Quietly: false if there is nothing to arm yet (watch.c tries again
 * when the cgroup becomes populated). */
static bool pids_open(struct cg *c, bool quiet)
{
	int dfd = cg_file_open(D.v2, c->rel, "", O_RDONLY | O_NONBLOCK), fd = -ENOENT;
	char *v1, why[PATH_MAX + 512];
	const char *name = "pids.events";

	if (dfd >= 0) {
		fd = pids_events_open(dfd, &name);
		close(dfd);
	}
	c->pids.event = pids_event;
	if (fd >= 0) {
		char dir[4096];

		c->pids.fd = fd;
		c->pids_v1 = false;
		if (epoll_add(&c->pids, EPOLLPRI) < 0) {
			src_close(&c->pids);
			return true;
		}
		snprintf(dir, sizeof(dir), "%s/%s", D.v2, c->rel);
		current_open(c, dir);
		sample(c);
		poll_update();
		return true;
	}
	v1 = v1_counterpart(c->rel, D.v1_pids, "pids", false, why, sizeof(why));
	dfd = v1 ? cg_file_open(v1, "", "", O_RDONLY | O_NONBLOCK) : -1;
	fd = dfd >= 0 ? pids_events_open(dfd, &name) : v1 ? -errno : -ENOENT;
	if (dfd >= 0)
		close(dfd);
	if (fd < 0) {
		if (v1 && fd != -ENOENT)
			open_failed(v1, -fd);
		else if (*why)
			counterpart_refused(c, "pids", "pids triggers", why);
		else if (!quiet && c->rule->told_unarmed++ == 0)
			log_msg(LOG_PRI_NOTICE,
				"rule %s: %s/%s has no pids.events (v2) and no v1 pids counterpart yet: its pids triggers are armed once there is one%s",
				c->rule->name, D.v2, c->rel, " (said once for each rule)");
		free(v1);
		return false;
	}
	c->pids.fd = fd;
	c->pids_v1 = true;
	counterpart_used(c, "pids");
	if (c->rule->triggers & TRIG_PIDS_MAX && !D.v1_poll_logged) {
		log_msg(LOG_PRI_NOTICE,
			"v1 pids.events gives no notification: reading it every %llums in the watched cgroups while they are populated",
			(unsigned long long)D.cfg.poll_ms);
		D.v1_poll_logged = true;
	}
	current_open(c, v1);
	log_msg(LOG_PRI_DEBUG, "rule %s: %s/%s: pids triggers on %s/%s", c->rule->name, D.v2, c->rel, v1, name);
	free(v1);
	sample(c);
	poll_update();
	return true;
}

static void pids_disarm(struct cg *c)
{
	bool was = c->pids.fd >= 0 && c->populated && (c->pids_v1 || c->pcur_open);

	src_close(&c->pids);
	current_close(c);
	c->pids_v1 = false;
	if (was) {
		c->populated = false;	/* for poll_update(); watch.c closes cgroup.events */
		poll_update();
	}
}

/* Counted on from the samples of its last arming when the file is the
 * same (what rose meanwhile counts now, once), else from now. */
static bool pids_arm(struct cg *c, bool quiet)
{
	char saved[sizeof(c->samples)];
	unsigned n = c->nsamples, head = c->sample_head;
	uint64_t id[2];

	if (c->pids.fd >= 0)
		return false;
	memcpy(saved, c->samples, sizeof(saved));
	c->nsamples = 0;	/* pids_open() samples from now: nothing fires on old samples */
	if (!pids_open(c, quiet)) {
		memcpy(c->samples, saved, sizeof(saved));
		c->nsamples = n;
		c->sample_head = head;
		return false;
	}
	file_id(c->pids.fd, id);
	c->pids_hier = c->pids_v1 ? 1 : 2;
	if (n && same_file(c->pids_file, id) && c->pids.fd >= 0) {
		memcpy(c->samples, saved, sizeof(saved));
		c->nsamples = n;
		c->sample_head = head;
		sample(c);
	}
	memcpy(c->pids_file, id, sizeof(id));
	return true;
}

/* The live figures: pids.events max as last read and its rise in the
 * window; how long pids.current has been high. */
static void pids_dump(const struct cg *c, struct out *o)
{
	const struct rule *r = c->rule;
	uint64_t t = now_ms();
	bool seen = c->nsamples > 0;
	uint64_t v = seen ? c->samples[(c->sample_head + c->nsamples - 1) % PIDS_SAMPLES].v : 0;
	uint64_t rise = seen ? v - window_base(c, t) : 0, high = c->high ? t - c->high_since : 0;

	if (r->triggers & TRIG_PIDS_MAX) {
		if (o->json) {
			out_open(o, NULL, '{');
			out_str(o, "trigger", "pids-max");
			if (seen)
				out_u64(o, "max_events", v);
			else
				out_raw(o, "max_events", NULL);
			out_u64(o, "rise", rise);
			out_u64(o, "window_ms", r->pids_window_ms);
			out_u64(o, "acts_at", r->pids_max_events);
			out_close(o, '}');
		} else if (seen) {
			out_line(o, "pids-max %s/%s (rule %s): pids.events max %llu, risen %llu within %llums (acts at %u)",
				 D.v2, c->rel, r->name, (unsigned long long)v, (unsigned long long)rise,
				 (unsigned long long)r->pids_window_ms, r->pids_max_events);
		}
	}
	if (!(r->triggers & TRIG_PIDS_CURRENT))
		return;
	if (o->json) {
		out_open(o, NULL, '{');
		out_str(o, "trigger", "pids-current");
		out_bool(o, "high", c->high);
		out_u64(o, "high_for_ms", high);
		out_u64(o, "above_pct", r->pids_current_pct);
		out_u64(o, "for_ms", r->pids_current_for_ms);
		out_close(o, '}');
	} else if (c->high) {
		out_line(o, "pids-current %s/%s (rule %s): at or above %u%% of pids.max for %llums (acts at %llums)",
			 D.v2, c->rel, r->name, r->pids_current_pct, (unsigned long long)high,
			 (unsigned long long)r->pids_current_for_ms);
	}
}

const struct trigger_ops trigger_pids = {
	.name = "pids",
	.triggers = TRIG_PIDS,
	.arm = pids_arm,
	.event = pids_event,
	.disarm = pids_disarm,
	.dump = pids_dump,
	.late = "pids triggers armed (v1 counterpart found)",
	.counts = true,
	.populated = pids_populated,
};
