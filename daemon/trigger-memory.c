/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * OOM group kill: the kernel's OOM killer took a process of the cgroup
 * (oom_kill rose by OOMKills); the rule takes the rest. memory.oom.group
 * for v1 and for groups that did not set it.
 *
 * cgroup v2: memory.events notifies (EPOLLPRI), its oom_kill is read.
 * v1 memory hierarchy: its v1 counterpart, only where that belongs to it
 * alone or is shared by its owner's doing (counterpart.c: an outsider's
 * hog OOM-killed there is not the watched cgroup's, the owner's own
 * process is), checked again before acting;
 * an eventfd registered through cgroup.event_control with
 * memory.oom_control wakes us when the group is out of memory (and when it
 * is removed). The OOM killer may not have counted its kill yet at that
 * moment: then a timerfd re-reads oom_control every 10 ms, for 1 s at
 * most, and only while that wait lasts.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "cgkilld.h"

#define RECHECK_MS 10
#define RECHECKS 100

static bool read_oom_kills(struct cg *c, uint64_t *v)
{
	char buf[1024];

	if (read_at0(c->mem.fd, buf, sizeof(buf)) < 0)
		return false;
	return kv_get(buf, "oom_kill", v);
}

static void stop_recheck(struct cg *c)
{
	src_close(&c->recheck);
	c->rechecks = 0;
}

static void memory_disarm(struct cg *c);
static bool check(struct cg *c, bool *gone);

/* v1: the count was not there yet at the notification: read again */
static void recheck_event(struct src *s)
{
	struct cg *c = s->cg;
	uint64_t n;
	bool gone;

	if (read(s->fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return;
	if (c->recheck.fd >= 0 && !check(c, &gone) && (gone || ++c->rechecks >= RECHECKS))
		stop_recheck(c);
}

/* true if the count rose (and the rule was told); *gone if the file
 * cannot be read (the cgroup is being removed: its eventfd fires then) */
static bool check(struct cg *c, bool *gone)
{
	uint64_t v;
	char json[256], text[256];

	*gone = !read_oom_kills(c, &v);
	if (*gone)
		return false;
	if (v < c->oom_base) {
		c->oom_base = v;
		return false;
	}
	if (v - c->oom_base < c->rule->oom_kills)
		return false;
	if (c->mem_v1 && !counterpart_still_own(c, c->mem.fd, "memory", "oom-kill")) {
		/* armed again when the cgroup next becomes populated */
		memory_disarm(c);
		return true;
	}
	snprintf(json, sizeof(json),
		 "\"type\": \"oom-kill\", \"hierarchy\": \"v%d\", \"oom_kill_total\": %llu, \"oom_kill_rise\": %llu",
		 c->mem_v1 ? 1 : 2, (unsigned long long)v, (unsigned long long)(v - c->oom_base));
	snprintf(text, sizeof(text), "oom-kill (v%d): the OOM killer took %llu process(es) (oom_kill %llu)",
		 c->mem_v1 ? 1 : 2, (unsigned long long)(v - c->oom_base), (unsigned long long)v);
	c->oom_base = v;
	stop_recheck(c);
	act(c, "oom-kill", json, text);
	return true;
}

static void memory_event(struct src *s)
{
	bool gone;

	check(s->cg, &gone);
}

/* v1: the eventfd of memory.oom_control */
static void oom_notified(struct src *s)
{
	struct cg *c = s->cg;
	uint64_t n;
	bool gone;

	if (read(s->fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return;
	if (check(c, &gone) || gone || c->recheck.fd >= 0)
		return;
	/* out of memory, not counted yet: look again shortly */
	c->recheck.event = recheck_event;
	c->recheck.fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (c->recheck.fd >= 0) {
		struct itimerspec its = {
			.it_value.tv_nsec = RECHECK_MS * 1000000L,
			.it_interval.tv_nsec = RECHECK_MS * 1000000L,
		};

		if (timerfd_settime(c->recheck.fd, 0, &its, NULL) < 0 || epoll_add(&c->recheck, EPOLLIN) < 0)
			stop_recheck(c);
		c->rechecks = 0;
	}
}

static bool memory_open(struct cg *c, bool quiet)
{
	int fd = cg_file_open(D.v2, c->rel, "memory.events", O_RDONLY | O_NONBLOCK), ctl;
	char line[64], *v1, why[PATH_MAX + 512];
	uint64_t v = 0;

	c->mem.event = memory_event;
	c->efd.event = oom_notified;
	if (fd >= 0) {
		c->mem.fd = fd;
		c->mem_v1 = false;
		read_oom_kills(c, &v);
		c->oom_base = v;
		if (epoll_add(&c->mem, EPOLLPRI) < 0)
			src_close(&c->mem);
		return true;
	}
	v1 = v1_counterpart(c->rel, D.v1_memory, "memory", false, why, sizeof(why));
	fd = v1 ? cg_file_open(v1, "", "memory.oom_control", O_RDONLY) : -1;
	if (fd < 0) {
		if (v1 && errno != ENOENT)
			open_failed(v1, errno);
		else if (*why)
			counterpart_refused(c, "memory", "oom-kill", why);
		else if (!quiet && c->rule->told_unarmed++ == 0)
			log_msg(LOG_PRI_NOTICE,
				"rule %s: %s/%s has no memory.events (v2) and no v1 memory counterpart yet: oom-kill armed once there is one%s",
				c->rule->name, D.v2, c->rel, " (said once for each rule)");
		free(v1);
		return false;
	}
	c->mem.fd = fd;
	c->mem_v1 = true;
	counterpart_used(c, "memory");
	read_oom_kills(c, &v);
	c->oom_base = v;
	c->efd.fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ctl = cg_file_open(v1, "", "cgroup.event_control", O_WRONLY);
	snprintf(line, sizeof(line), "%d %d", c->efd.fd, c->mem.fd);
	if (c->efd.fd < 0 || ctl < 0 || write(ctl, line, strlen(line)) < 0 ||
	    epoll_add(&c->efd, EPOLLIN) < 0) {
		log_msg(LOG_PRI_WARNING, "rule %s: cannot register for OOM notifications in %s: %s",
			c->rule->name, v1, strerror(errno));
		src_close(&c->efd);
		src_close(&c->mem);
	} else {
		log_msg(LOG_PRI_DEBUG, "rule %s: %s/%s: oom-kill on %s", c->rule->name, D.v2, c->rel, v1);
	}
	if (ctl >= 0)
		close(ctl);
	free(v1);
	return c->mem.fd >= 0;
}

static void memory_disarm(struct cg *c)
{
	stop_recheck(c);
	src_close(&c->efd);
	src_close(&c->mem);
}

/* Counted on from its last count when the file is the same. */
static bool memory_arm(struct cg *c, bool quiet)
{
	uint64_t base = c->oom_base, id[2];

	if (c->mem.fd >= 0 || !memory_open(c, quiet))
		return false;
	file_id(c->mem.fd, id);
	c->mem_hier = c->mem_v1 ? 1 : 2;
	if (same_file(c->mem_file, id) && base < c->oom_base) {
		bool gone;

		c->oom_base = base;
		check(c, &gone);
	}
	memcpy(c->mem_file, id, sizeof(id));
	return true;
}

/* The live figure: the oom_kill counter its rise is counted from. */
static void memory_dump(const struct cg *c, struct out *o)
{
	const char *where = c->mem_v1 ? "memory.oom_control" : "memory.events";

	if (o->json) {
		out_open(o, NULL, '{');
		out_str(o, "trigger", "oom-kill");
		out_str(o, "file", c->mem.fd >= 0 || c->mem_hier ? where : NULL);
		out_u64(o, "oom_kill", c->oom_base);
		out_u64(o, "acts_at", c->rule->oom_kills);
		out_close(o, '}');
	} else if (c->mem.fd >= 0) {
		out_line(o, "oom-kill %s/%s (rule %s): %s oom_kill %llu (acts on a rise of %u)", D.v2, c->rel,
			 c->rule->name, where, (unsigned long long)c->oom_base, c->rule->oom_kills);
	}
}

const struct trigger_ops trigger_memory = {
	.name = "oom-kill",
	.triggers = TRIG_OOM_KILL,
	.arm = memory_arm,
	.event = memory_event,
	.disarm = memory_disarm,
	.dump = memory_dump,
	.late = "oom-kill armed (v1 counterpart found)",
	.counts = true,
};
