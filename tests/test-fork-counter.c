// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cgkilld's fork counter (daemon/forkbpf.c) on the real kernel: its BPF
 * programs load, count the forks (not the threads) of fresh processes
 * (forked there, not exec'd since), the execs and the exits of the tasks
 * of a watched cgroup's subtree, sub-cgroups included, and not those of
 * an unwatched sibling; the exec or exit of a fresh process that moved
 * out counts where its fork did; a fork counts for the 4 watched cgroups
 * nearest the root, not a fifth; a record comes once per window when the
 * forks, less the execs or exits, reach the limit, never for forks whose
 * children exec or end, never for a rate below the limit; unwatched, a
 * cgroup is counted no more.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../daemon/cgkilld.h"
#include "support/sandbox.h"
#include "support/tap.h"

enum work {
	FORKS,		/* children that end at once */
	FORK_EXECS,	/* children that exec /bin/true */
	THREADS,
	HOLDS,		/* children that live until the worker ends */
	SLOW_HOLDS,	/* the same, 10ms apart */
	SUBSHELLS,	/* the worker execs sh, which forks subshells */
	MOVERS,		/* children that move to move_to and end there */
	MOVER_EXECS,	/* children that move to move_to and exec /bin/true there */
};

static const char *move_to;

static void *idle_thread(void *arg)
{
	return arg;
}

static void join(const char *dir)
{
	char path[4096], me[32];
	int fd;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	snprintf(me, sizeof(me), "%d", getpid());
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, me, strlen(me)) < 0)
		_exit(2);
	close(fd);
}

/* One of the work (the worker's child, if any, left running). */
static void one(enum work w, const int hold[2])
{
	pthread_t t;
	pid_t c;

	if (w == THREADS) {
		if (pthread_create(&t, NULL, idle_thread, NULL) || pthread_join(t, NULL))
			_exit(3);
		return;
	}
	if (w == SLOW_HOLDS)
		usleep(10000);
	c = fork();
	if (c == 0) {
		char b;

		if (w == MOVERS || w == MOVER_EXECS)
			join(move_to);
		if (w == FORK_EXECS || w == MOVER_EXECS)
			execl("/bin/true", "true", (char *)NULL);
		close(hold[1]);
		if (w == HOLDS || w == SLOW_HOLDS)
			while (read(hold[0], &b, 1) < 0 && errno == EINTR)
				;
		_exit(0);
	}
	if (c < 0 || (w != HOLDS && w != SLOW_HOLDS && waitpid(c, NULL, 0) != c))
		_exit(4);
}

/* The worker, forked in the cgroup (a fresh process: its forks count):
 * n of work; it ends when all its children ended. */
static void worker(enum work w, int n)
{
	int hold[2];

	if (w == SUBSHELLS) {
		char script[128];

		snprintf(script, sizeof(script), "i=0; while [ $i -lt %d ]; do ( : ); i=$((i + 1)); done", n);
		execl("/bin/sh", "sh", "-c", script, (char *)NULL);
		_exit(6);
	}
	if (pipe(hold) < 0)
		_exit(5);
	for (int i = 0; i < n; i++)
		one(w, hold);
	close(hold[1]);
	while (wait(NULL) > 0)
		;
	_exit(0);
}

/* A child of ours moves into the cgroup dir and forks the worker there,
 * of generation gen: 0 (that child itself, not fresh: ours were forked
 * outside), 1 (forked by that child: fresh, its forks count), 2... */
static void work_in_gen(const char *dir, enum work w, int n, int gen)
{
	pid_t pid = fork();
	int status = -1;

	if (pid == 0) {
		pid_t c;

		join(dir);
		for (int g = 0; g < gen; g++) {
			c = fork();
			if (c == 0)
				continue;
			_exit(c > 0 && waitpid(c, &status, 0) == c && WIFEXITED(status) ? WEXITSTATUS(status) : 7);
		}
		worker(w, n);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		bail_out("the worker in %s failed (status %d)", dir, status);
}

static void work_in(const char *dir, enum work w, int n)
{
	work_in_gen(dir, w, n, 1);
}

static uint64_t id_of(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	uint64_t id = 0;

	if (fd < 0 || fork_cgroup_id(fd, &id) < 0)
		bail_out("no id for %s", dir);
	close(fd);
	return id;
}

struct seen {
	unsigned n;
	struct fork_record last;
	unsigned cookie_n[8];
};

static void on_record(const struct fork_record *rec, void *arg)
{
	struct seen *s = arg;

	s->n++;
	s->last = *rec;
	if (rec->cookie < 8)
		s->cookie_n[rec->cookie]++;
}

static void expect_counts(struct fork_counter *fc, uint64_t id, unsigned slot, uint64_t forks, uint64_t execs,
			  uint64_t exits, const char *what)
{
	struct fork_counts n = { 0 };

	is_int(fork_counter_peek(fc, id, slot, &n), 0, "%s: the counter is there", what);
	ok(n.forks == forks && n.execs == execs && n.exits == exits,
	   "%s: forks %llu (want %llu), execs %llu (%llu), exits %llu (%llu)", what, (unsigned long long)n.forks,
	   (unsigned long long)forks, (unsigned long long)n.execs, (unsigned long long)execs,
	   (unsigned long long)n.exits, (unsigned long long)exits);
}

/* Five nested watched cgroups: a fork in the deepest counts for the four
 * nearest the root, and so do the exits of the processes it made; the
 * fifth counts nothing (its window starts at a fork counted). */
static void nested(struct fork_counter *fc, const char *box, const struct fork_limit *never)
{
	char rel[64] = "n1", *dir[5];
	uint64_t id[5];

	for (int i = 0; i < 5; i++) {
		if (i)
			snprintf(rel + strlen(rel), sizeof(rel) - strlen(rel), "/n%d", i + 1);
		dir[i] = sb_mkdir(box, rel);
		if (!dir[i])
			bail_out("cannot make %s below %s", rel, box);
		id[i] = id_of(dir[i]);
		is_int(fork_counter_watch(fc, id[i], (unsigned)i + 2, 0, never), 0, "box/%s watched", rel);
	}
	work_in(dir[4], FORKS, 10);
	for (int i = 0; i < 5; i++)
		expect_counts(fc, id[i], 0, i < 4 ? 10 : 0, 0, i < 4 ? 12 : 0,
			      i < 4 ? "10 forks in box/n1/../n5" : "10 forks in box/n1/../n5, for n5 the fifth");
	for (int i = 4; i >= 0; i--) {
		is_int(fork_counter_unwatch(fc, id[i], (unsigned)i + 2, 0), 0, "box/n1/../n%d unwatched", i + 1);
		free(dir[i]);
	}
}

int main(void)
{
	struct fork_limit never = { .limit = 1000000000, .window_ns = 3600000000000ull, .cookie = 1 };
	struct fork_counter *fc;
	struct bpf_insn *insns;
	char *box = sb_start(120), *a, *b, *c, why[512];
	uint64_t ida, idc;
	struct seen seen = { 0 };
	size_t n;
	int r;

	r = fork_counter_open(&fc, why, sizeof(why));
	if (r < 0)
		skip_all("no fork counter here: %s", why);
	ok(1, "the programs load and attach");
	n = fork_prog_build(fc, FORK_TP_FORK, &insns);
	free(insns);
	ok(n > FORK_LEVELS * FORK_SLOTS && n < 65536, "the fork program: %zu instructions", n);
	a = sb_mkdir(box, "a");
	b = sb_mkdir(box, "a/b");
	c = sb_mkdir(box, "c");
	if (!a || !b || !c)
		bail_out("cannot make the cgroups below %s", box);
	ida = id_of(a);
	idc = id_of(c);

	/* box/a is at level 2 (cgkill-test.X/a); the exits of each worker
	 * and of the one that forked it count, their forks do not */
	is_int(fork_counter_watch(fc, ida, 2, 0, &never), 0, "box/a watched");
	work_in(a, FORKS, 40);
	expect_counts(fc, ida, 0, 40, 0, 42, "40 forks in box/a");
	work_in(b, FORKS, 25);
	expect_counts(fc, ida, 0, 65, 0, 69, "25 more in its child box/a/b count for box/a");
	work_in(b, THREADS, 10);
	expect_counts(fc, ida, 0, 65, 0, 71, "10 threads are no forks, their ends no exits");
	work_in(b, FORK_EXECS, 5);
	expect_counts(fc, ida, 0, 70, 5, 78, "5 forks that exec");
	work_in(b, SUBSHELLS, 20);
	expect_counts(fc, ida, 0, 70, 6, 100, "an exec'd shell's 20 subshells: not fresh, its forks do not count");
	work_in_gen(b, FORKS, 10, 0);
	expect_counts(fc, ida, 0, 70, 6, 111, "10 forks of a process forked outside: not fresh, not counted");
	move_to = c;
	work_in(a, MOVERS, 15);
	expect_counts(fc, ida, 0, 85, 6, 128, "15 children that end in box/c: their exits count for box/a");
	work_in(a, MOVER_EXECS, 15);
	expect_counts(fc, ida, 0, 100, 21, 130, "15 that exec in box/c: their execs count for box/a");
	work_in(c, FORKS, 40);
	expect_counts(fc, ida, 0, 100, 21, 130, "40 forks in the unwatched sibling box/c do not count for box/a");
	is_int(fork_counter_peek(fc, idc, 0, &(struct fork_counts){ 0 }), -ENOENT, "box/c has no counter");
	is_int(fork_counter_read(fc, on_record, &seen), 0, "no record below the limit");

	struct fork_limit hour = { .limit = 20, .window_ns = 3600000000000ull, .cookie = 2 };
	struct fork_limit fast = { .limit = 20, .window_ns = 50000000, .cookie = 3 };

	is_int(fork_counter_watch(fc, ida, 2, 1, &hour), 0, "slot 1: 20 forks, less execs or exits (the more), in 1h");
	is_int(fork_counter_watch(fc, ida, 2, 2, &fast), 0, "slot 2: 20 in 50ms");
	work_in(b, FORKS, 40);
	is_int(fork_counter_read(fc, on_record, &seen), 0, "40 forks whose children end at once: no record");
	work_in(b, FORK_EXECS, 40);
	is_int(fork_counter_read(fc, on_record, &seen), 0, "40 forks that exec: no record");
	work_in(b, SLOW_HOLDS, 40);
	fork_counter_read(fc, on_record, &seen);
	is_int(seen.cookie_n[3], 0, "40 children that live, born 10ms apart: no record for 20 in 50ms");
	ok(seen.cookie_n[2] == 1 && seen.n == 1, "but one for 20 in 1h");

	struct fork_limit again = { .limit = 20, .window_ns = 3600000000000ull, .cookie = 5 };

	is_int(fork_counter_watch(fc, ida, 2, 2, &again), 0, "slot 2 again: 20 in 1h, counted from now");
	work_in(a, HOLDS, 25);
	fork_counter_read(fc, on_record, &seen);
	ok(seen.cookie_n[5] == 1 && seen.last.cookie == 5 && seen.last.cgid == ida && seen.last.forks == 20 &&
		   !seen.last.execs && !seen.last.exits,
	   "a record for box/a as the limit is reached: forks %llu, execs %llu, exits %llu, after %llu us",
	   (unsigned long long)seen.last.forks, (unsigned long long)seen.last.execs,
	   (unsigned long long)seen.last.exits, (unsigned long long)seen.last.elapsed_ns / 1000);
	work_in(b, HOLDS, 30);
	is_int(fork_counter_read(fc, on_record, &seen), 0, "no second record in the same window");

	for (unsigned s = 0; s < 3; s++)
		is_int(fork_counter_unwatch(fc, ida, 2, s), 0, "slot %u unwatched", s);
	is_int(fork_counter_peek(fc, ida, 0, &(struct fork_counts){ 0 }), -ENOENT, "box/a has no counter any more");
	is_int(fork_counter_unwatch(fc, ida, 2, 0), -ENOENT, "unwatched twice: ENOENT");
	is_int(fork_counter_watch(fc, ida, FORK_LEVELS + 1, 0, &never), -EINVAL, "a level too deep: EINVAL");
	nested(fc, box, &never);
	fork_counter_close(fc);
	free(a);
	free(b);
	free(c);
	return sb_finish(box);
}
