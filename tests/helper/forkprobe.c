/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * forkprobe CGROUP [SECONDS]: the shape of a workload's forking, as
 * cgkilld's fork-rate trigger sees it. CGROUP (a cgroup v2 directory) is
 * counted by the daemon's own fork counter (daemon/forkbpf.c, with a
 * limit never reached) and sampled every millisecond from its first
 * fork, exec or exit until it is empty again (or SECONDS, default 600,
 * have passed). Then, for windows of 10, 50, 100 and 200 ms, the most
 * forks (of fresh processes) and the most of the trigger's count (those
 * forks less the execs or the exits, whichever are more) seen in any
 * one window (sliding), and the totals; and the most of the count seen in
 * the trigger's own windows (tumbling, in the kernel) of 100, 250 and
 * 500 ms, what the trigger compares with its limit.
 * For choosing ForkRate= and ForkWindow= (cgkilld.conf(5)).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../daemon/cgkilld.h"

/* The trigger's own windows, in slots 1.. of the counter. */
static const unsigned tumbling_ms[] = { 100, 250, 500 };
#define TUMBLING_N (sizeof(tumbling_ms) / sizeof(tumbling_ms[0]))

struct sample {
	uint64_t t_us;
	int64_t forks, score;	/* score: forks - max(execs, exits) */
};

static int64_t score_of(const struct fork_counts *c)
{
	return (int64_t)c->forks - (int64_t)(c->execs > c->exits ? c->execs : c->exits);
}

static uint64_t probe_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static int populated(const char *dir)
{
	char path[4096], buf[256];
	int fd, n;

	snprintf(path, sizeof(path), "%s/cgroup.events", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = (int)read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return strstr(buf, "populated 1") != NULL;
}

/* The most of (forks - execs) (or forks alone) over windows of w_us. */
static void report(const struct sample *s, size_t n, uint64_t w_us)
{
	int64_t best = 0, best_net = 0;
	size_t j = 0;

	for (size_t i = 0; i < n; i++) {
		while (s[i].t_us - s[j].t_us > w_us)
			j++;
		if (s[i].forks - s[j].forks > best)
			best = s[i].forks - s[j].forks;
		if (s[i].score - s[j].score > best_net)
			best_net = s[i].score - s[j].score;
	}
	printf("window %3llums: most forks %6lld (%7lld/s), count %6lld (%7lld/s)\n",
	       (unsigned long long)w_us / 1000, (long long)best, (long long)(best * 1000000 / (int64_t)w_us),
	       (long long)best_net, (long long)(best_net * 1000000 / (int64_t)w_us));
}

int main(int argc, char **argv)
{
	struct fork_limit never = { .limit = UINT64_MAX >> 1, .window_ns = UINT64_MAX >> 1, .cookie = 0 };
	struct sched_param sp = { .sched_priority = 10 };
	const char *dir = argc > 1 ? argv[1] : NULL;
	uint64_t secs = argc > 2 ? strtoull(argv[2], NULL, 10) : 600, id, end;
	struct fork_counts c = { 0 };
	struct fork_counter *fc;
	struct sample *s;
	size_t n = 0, cap;
	char why[512];
	unsigned level = 0;
	bool began = false;
	int64_t tumbling_best[TUMBLING_N] = { 0 };
	int fd;

	if (!dir) {
		fprintf(stderr, "usage: forkprobe CGROUP [SECONDS]\n");
		return 2;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fork_cgroup_id(fd, &id) < 0) {
		fprintf(stderr, "forkprobe: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	close(fd);
	/* its level: the components below the v2 mount (cgroup.controllers
	 * exists in every v2 cgroup, the mount's root included) */
	for (const char *p = dir + strlen(dir); p > dir; p--) {
		char up[4096];

		if (*p != '/')
			continue;
		snprintf(up, sizeof(up), "%.*s/cgroup.controllers", (int)(p - dir), dir);
		if (access(up, F_OK) < 0)
			break;
		level++;
	}
	if (fork_counter_open(&fc, why, sizeof(why)) < 0) {
		fprintf(stderr, "forkprobe: %s\n", why);
		return 1;
	}
	for (unsigned i = 0; i <= TUMBLING_N; i++) {
		struct fork_limit lim = never;

		if (i)
			lim.window_ns = tumbling_ms[i - 1] * 1000000ull;
		if (fork_counter_watch(fc, id, level, i, &lim) < 0) {
			fprintf(stderr, "forkprobe: %s at level %u: cannot watch it\n", dir, level);
			return 1;
		}
	}
	sched_setscheduler(0, SCHED_FIFO, &sp);
	cap = (size_t)secs * 1000 + 16;
	s = malloc(cap * sizeof(*s));
	if (!s)
		return 1;
	printf("forkprobe: %s (level %u): waiting for its first fork, exec or exit\n", dir, level);
	fflush(stdout);
	end = probe_now_us() + secs * 1000000;
	while (n < cap && probe_now_us() < end) {
		if (fork_counter_peek(fc, id, 0, &c) < 0)
			break;
		if (!began && (c.forks || c.execs || c.exits))
			began = true;
		if (began) {
			s[n++] = (struct sample){ probe_now_us(), (int64_t)c.forks, score_of(&c) };
			for (unsigned i = 0; i < TUMBLING_N; i++) {
				struct fork_counts t;

				if (fork_counter_peek(fc, id, i + 1, &t) == 0 && score_of(&t) > tumbling_best[i])
					tumbling_best[i] = score_of(&t);
			}
			if (n % 50 == 0 && populated(dir) == 0)
				break;
		}
		usleep(began ? 1000 : 5000);
	}
	if (n < 2) {
		printf("forkprobe: nothing seen\n");
		return 1;
	}
	printf("forkprobe: %llu forks, %llu execs, %llu exits in %.3f s\n", (unsigned long long)c.forks,
	       (unsigned long long)c.execs, (unsigned long long)c.exits, (double)(s[n - 1].t_us - s[0].t_us) / 1e6);
	report(s, n, 10000);
	report(s, n, 50000);
	report(s, n, 100000);
	report(s, n, 200000);
	for (unsigned i = 0; i < TUMBLING_N; i++)
		printf("the trigger's window %3ums: most count %6lld\n", tumbling_ms[i], (long long)tumbling_best[i]);
	free(s);
	fork_counter_close(fc);
	return 0;
}
