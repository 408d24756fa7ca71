/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fork bomb, caught while it grows: ForkRate= forks a second, less the
 * execs or the exits (whichever are more), within one ForkWindow=,
 * counted in the kernel for the watched cgroup's whole subtree
 * (forkbpf.c). A bomb's processes fork on without exec and without
 * ending; a build's or a script's exec, or end soon (cgkilld.conf(5) has
 * the measurements).
 *
 * The counter is loaded when the first cgroup of a fork-rate rule is
 * armed (populated) and unloaded when the last is disarmed: while none
 * is, forks cost nothing; while some are, a fork costs a lookup per
 * level that holds a watched cgroup, and the daemon wakes only on a
 * record (once a window at most, per cgroup and rule).
 *
 * A fork-rate rule is a pids-max rule as well (config.c): where the
 * counter cannot be loaded (no bpf(2), no CAP_BPF and CAP_PERFMON, an
 * old kernel or its verifier), the rule acts on pids-max alone and the
 * log says so once; it never fails open. The same for a cgroup deeper
 * than FORK_LEVELS, or a fifth fork-rate rule on one cgroup.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "cgkilld.h"

static struct fork_counter *counter;
static struct src ring = { .fd = -1 };
static unsigned narmed;
static uint64_t cookies;
static char unavailable[512];	/* why the counter could not be loaded, "" if it could */

#define STR_(x) #x
#define STR(x) STR_(x)
static const char too_deep[] = "deeper than the " STR(FORK_LEVELS) " levels below the cgroup v2 root that the fork counter sees";

static uint64_t limit_of(const struct rule *r)
{
	return (uint64_t)r->fork_rate * r->fork_window_ms / 1000;
}

static struct cg *cg_of_cookie(uint64_t cookie)
{
	for (struct cg *c = D.cgs; c; c = c->next)
		if (c->fork_armed && c->fork_cookie == cookie)
			return c;
	return NULL;
}

static void on_record(const struct fork_record *rec, void *arg)
{
	struct cg *c = cg_of_cookie(rec->cookie);
	uint64_t gone, count, ms = rec->elapsed_ns / 1000000;
	char json[384], text[256];
	struct rule *r;

	(void)arg;
	if (!c || c->dead || c->fork_cgid != rec->cgid)
		return;	/* disarmed meanwhile */
	r = c->rule;
	gone = rec->execs > rec->exits ? rec->execs : rec->exits;
	count = rec->forks > gone ? rec->forks - gone : 0;
	snprintf(json, sizeof(json),
		 "\"type\": \"fork-rate\", \"hierarchy\": \"v2\", \"forks\": %llu, \"execs\": %llu, \"exits\": %llu, \"count\": %llu, "
		 "\"limit\": %llu, \"elapsed_ms\": %llu, \"fork_rate\": %u, \"window_ms\": %llu",
		 (unsigned long long)rec->forks, (unsigned long long)rec->execs, (unsigned long long)rec->exits,
		 (unsigned long long)count, (unsigned long long)limit_of(r), (unsigned long long)ms, r->fork_rate,
		 (unsigned long long)r->fork_window_ms);
	snprintf(text, sizeof(text),
		 "fork-rate: %llu forks, %llu execs, %llu exits in %llums (limit %llu in %llums: ForkRate=%u)",
		 (unsigned long long)rec->forks, (unsigned long long)rec->execs, (unsigned long long)rec->exits,
		 (unsigned long long)ms, (unsigned long long)limit_of(r), (unsigned long long)r->fork_window_ms,
		 r->fork_rate);
	act(c, "fork-rate", json, text);
}

static void ring_event(struct src *s)
{
	(void)s;
	if (counter)
		fork_counter_read(counter, on_record, NULL);
}

/* Loaded, and its ring buffer in the loop; false (said once) if not. */
static bool counter_open(void)
{
	uint64_t t = now_ms();
	int r;

	if (counter)
		return true;
	if (*unavailable)
		return false;
	r = fork_counter_open(&counter, unavailable, sizeof(unavailable));
	if (r == 0) {
		ring = (struct src){ .event = ring_event, .fd = dup(fork_counter_fd(counter)) };
		if (ring.fd < 0 || epoll_add(&ring, EPOLLIN) < 0) {
			snprintf(unavailable, sizeof(unavailable), "its ring buffer: %s", strerror(errno));
			if (ring.fd >= 0)
				close(ring.fd);
			ring.fd = -1;
			fork_counter_close(counter);
			counter = NULL;
			r = -1;
		}
	}
	if (r < 0) {
		log_msg(LOG_PRI_WARNING,
			"fork-rate: the kernel's fork counter cannot be loaded (%s): the fork-rate rules act on pids-max alone (said once)",
			unavailable);
		return false;
	}
	log_msg(LOG_PRI_INFO, "fork-rate: the kernel's fork counter is loaded (in %llums)",
		(unsigned long long)(now_ms() - t));
	return true;
}

static void counter_close(void)
{
	src_close(&ring);	/* its dup: out of the epoll set */
	fork_counter_close(counter);
	counter = NULL;
	log_msg(LOG_PRI_DEBUG, "fork-rate: no cgroup is counted: the fork counter is unloaded");
}

/* The components of rel ("a/b/c": 3), its level below the v2 root. */
static unsigned level_of(const char *rel)
{
	unsigned n = *rel ? 1 : 0;

	for (const char *p = rel; *p; p++)
		n += *p == '/';
	return n;
}

/* A slot of c's cgroup no other armed rule uses; FORK_SLOTS if none. */
static unsigned free_slot(const struct cg *c, uint64_t cgid)
{
	unsigned used = 0, s = 0;

	for (const struct cg *o = D.cgs; o; o = o->next)
		if (o != c && o->fork_armed && o->fork_cgid == cgid)
			used |= 1u << o->fork_slot;
	while (s < FORK_SLOTS && (used & (1u << s)))
		s++;
	return s;
}

/* Not counted, why said once for the cgroup: pids-max stands in. */
static bool unarmed(struct cg *c, const char *why)
{
	if (c->fork_unarmed != why)
		log_msg(LOG_PRI_NOTICE, "rule %s: %s/%s: fork-rate: not counted: %s: pids-max alone acts on it",
			c->rule->name, D.v2, c->rel, why);
	c->fork_unarmed = why;
	return false;
}

static bool fork_arm(struct cg *c, bool quiet)
{
	struct fork_limit lim = { .limit = limit_of(c->rule), .window_ns = c->rule->fork_window_ms * 1000000 };
	uint64_t cgid;
	int dfd, r;

	(void)quiet;
	if (c->fork_armed)
		return false;
	if (!counter_open()) {
		c->fork_unarmed = "the kernel's fork counter cannot be loaded";
		return false;
	}
	c->fork_level = level_of(c->rel);
	if (c->fork_level > FORK_LEVELS)
		return unarmed(c, too_deep);
	dfd = cg_dir_open(c->rel);
	r = dfd < 0 ? dfd : fork_cgroup_id(dfd, &cgid);
	if (dfd >= 0)
		close(dfd);
	if (r < 0)
		return false;	/* gone: the inotify event follows */
	c->fork_slot = free_slot(c, cgid);
	if (c->fork_slot == FORK_SLOTS)
		return unarmed(c, "four other fork-rate rules count it already");
	lim.cookie = ++cookies;
	r = fork_counter_watch(counter, cgid, c->fork_level, c->fork_slot, &lim);
	if (r < 0) {
		log_msg(LOG_PRI_WARNING, "rule %s: %s/%s: fork-rate: not counted: %s: pids-max alone acts on it",
			c->rule->name, D.v2, c->rel, strerror(-r));
		c->fork_unarmed = "the fork counter refused it";
		if (!narmed)
			counter_close();
		return false;
	}
	c->fork_cgid = cgid;
	c->fork_cookie = lim.cookie;
	c->fork_armed = true;
	c->fork_unarmed = NULL;
	narmed++;
	return true;
}

static void fork_disarm(struct cg *c)
{
	if (!c->fork_armed)
		return;
	fork_counter_unwatch(counter, c->fork_cgid, c->fork_level, c->fork_slot);
	c->fork_armed = false;
	if (--narmed == 0)
		counter_close();
}

static void fork_dump(const struct cg *c, struct out *o)
{
	if (!c->fork_armed && !c->fork_unarmed)
		return;
	if (o->json) {
		out_open(o, NULL, '{');
		out_str(o, "trigger", "fork-rate");
		out_bool(o, "counted", c->fork_armed);
		out_u64(o, "acts_at", limit_of(c->rule));
		out_u64(o, "window_ms", c->rule->fork_window_ms);
		out_str(o, "why", c->fork_armed ? NULL : c->fork_unarmed);
		out_close(o, '}');
	} else if (c->fork_armed) {
		out_line(o, "  fork-rate: counted in the kernel (level %u, slot %u): %llu in %llums", c->fork_level,
			 c->fork_slot, (unsigned long long)limit_of(c->rule), (unsigned long long)c->rule->fork_window_ms);
	} else {
		out_line(o, "  fork-rate: not counted (%s%s%s): pids-max alone", c->fork_unarmed,
			 *unavailable ? ": " : "", unavailable);
	}
}

void fork_rate_check(const struct config *cfg)
{
	struct fork_counter *fc;
	char why[512];
	bool any = false;

	for (size_t i = 0; i < cfg->nrules; i++)
		any = any || (cfg->rules[i].triggers & TRIG_FORK_RATE);
	if (!any)
		return;
	if (fork_counter_open(&fc, why, sizeof(why)) < 0) {
		printf("fork-rate: the kernel's fork counter cannot be loaded here (%s): the fork-rate rules would act on pids-max alone\n",
		       why);
		return;
	}
	fork_counter_close(fc);
	printf("fork-rate: the kernel's fork counter loads here\n");
}

const struct trigger_ops trigger_fork_rate = {
	.name = "fork-rate",
	.triggers = TRIG_FORK_RATE,
	.arm = fork_arm,
	.event = ring_event,
	.disarm = fork_disarm,
	.dump = fork_dump,
	.from_watch = true,
};
