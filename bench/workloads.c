/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The workloads: the process trees (flat, threads, wide, deep, memory),
 * the fork bombs and stress-ng that a contender must kill, built by a
 * spawner process in a run's cgroups; and the plan, the rows of a quick
 * or a full run.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench.h"

struct workload workloads[MAX_WORKLOADS];
unsigned n_workloads;
char bomb_exe[PATH_MAX];	/* cgkb-bomb (bomb.c), beside this program */
char dbomb_exe[PATH_MAX];	/* cgkb-dbomb: bomb.c, dynamically linked */

bool is_bomb(const struct workload *w)
{
	return w->type == W_BOMB || w->type == W_DBOMB || w->type == W_SHBOMB;
}

bool forks(const struct workload *w)
{
	return is_bomb(w) || w->type == W_STRESS;
}

/* The harness may run at real-time priority (main): a workload never
 * does, nor a contender outside the bomb rows. */
void sched_other(void)
{
	struct sched_param other = { 0 };

	sched_setscheduler(0, SCHED_OTHER, &other);
}

/* An ordinary process: SCHED_OTHER, nice 0, in the cpu cgroup the machine's
 * own processes are in (not the harness's, which has a high weight). */
void ordinary(void)
{
	char path[PATH_MAX];

	sched_other();
	setpriority(PRIO_PROCESS, 0, 0);
	if (cpu_home[0]) {
		snprintf(path, sizeof(path), "%s/cgroup.procs", cpu_home);
		write_file(path, "0");
	}
}

static void sleeper(int readyfd)
{
	prctl(PR_SET_NAME, "cgkb-sleep");
	if (write(readyfd, "x", 1) < 0)
		_exit(3);
	for (;;)
		pause();
}

/* The process of a flat row: b is unused. */
static void flat_proc(unsigned b, int readyfd)
{
	(void)b;
	sleeper(readyfd);
}

static void *thread_pause(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void threads_proc(unsigned threads, int readyfd)
{
	pthread_attr_t attr;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (unsigned i = 1; i < threads; i++) {
		pthread_t t;

		while (pthread_create(&t, &attr, thread_pause, NULL) == EAGAIN)
			sleep_ms(1);
	}
	sleeper(readyfd);
}

static void mem_proc(unsigned mib, int readyfd)
{
	size_t len = (size_t)mib << 20;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		_exit(3);
	for (size_t i = 0; i < len; i += 4096)
		p[i] = 1;
	sleeper(readyfd);
}

/* fork, retrying briefly on EAGAIN; into cgfd (v2) if >= 0. */
static pid_t spawn(int cgfd)
{
	for (int tries = 0; tries < 1000; tries++) {
		pid_t pid;

		if (cgfd >= 0) {
			struct clone_args args = {
				.flags = CLONE_INTO_CGROUP,
				.exit_signal = SIGCHLD,
				.cgroup = (uint64_t)cgfd,
			};
			pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
		} else {
			pid = fork();
		}
		if (pid >= 0 || errno != EAGAIN)
			return pid;
		sleep_ms(1);
	}
	return -1;
}

static void join(const char *dir)
{
	if (write_at(dir, "cgroup.procs", "0") < 0)
		_exit(4);
}

/* Put the spawner (and so what it forks) into cgroup i of the structure:
 * v1 trees by moving itself, v2 by returning a fd for CLONE_INTO_CGROUP. */
static int enter(const struct plan *p, const char *sub)
{
	char path[PATH_MAX];
	int fd = -1;

	for (int h = H_FRZ; h < H_N; h++)
		if (p->tree[h]) {
			snprintf(path, sizeof(path), "%s/%s", p->dir[h], sub);
			join(path);
		}
	if (p->tree[H_V2]) {
		snprintf(path, sizeof(path), "%s/%s", p->dir[H_V2], sub);
		fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			_exit(4);
	}
	return fd;
}

void spawner(const struct plan *p)
{
	const struct workload *w = p->w;
	void (*proc)(unsigned b, int readyfd);
	char sub[PATH_MAX];
	int fd;

	if (w->plain)
		ordinary();
	else
		sched_other();

	/* Into the tops first: every process of the workload is in the v2 top,
	 * the pids top (limit) and any v1 top the run uses. */
	for (int h = 0; h < H_N; h++)
		if (p->dir[h][0])
			join(p->dir[h]);

	switch (w->type) {
	case W_FLAT:
	case W_THREADS:
	case W_MEM:
		/* a processes, each of them proc(b) */
		proc = w->type == W_THREADS ? threads_proc : w->type == W_MEM ? mem_proc : flat_proc;
		for (unsigned i = 1; i < w->a; i++)
			if (spawn(-1) == 0)
				proc(w->b, p->readyfd);
		proc(w->b, p->readyfd);
		break;
	case W_WIDE:
	case W_DEEP:
		sub[0] = '\0';
		for (unsigned i = 0; i < w->a; i++) {
			unsigned n = w->type == W_WIDE ? w->b : 1;
			bool last = i + 1 == w->a;

			if (w->type == W_WIDE)
				snprintf(sub, sizeof(sub), "c%u", i);
			else
				snprintf(sub + strlen(sub), sizeof(sub) - strlen(sub), "%sd", i ? "/" : "");
			fd = enter(p, sub);
			for (unsigned j = 0; j < n - last; j++)
				if (spawn(fd) == 0)
					sleeper(p->readyfd);
			if (fd >= 0)
				close(fd);
		}
		/* The spawner is the last process of the last cgroup. */
		if (p->tree[H_V2]) {
			char path[PATH_MAX];

			snprintf(path, sizeof(path), "%s/%s", p->dir[H_V2], sub);
			join(path);
		}
		sleeper(p->readyfd);
		break;
	case W_BOMB:
	case W_DBOMB:
	case W_SHBOMB:
		/* Refuse to start unless our pids cgroup has the limit. */
		if (read_num(p->dir[H_PIDS], "pids.max") != (long long)w->a)
			_exit(5);
		if (w->type == W_SHBOMB) {
			/* bash says "fork: retry" on every failed fork */
			int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);

			if (devnull >= 0) {
				dup2(devnull, STDIN_FILENO);
				dup2(devnull, STDOUT_FILENO);
				dup2(devnull, STDERR_FILENO);
			}
			execl("/bin/bash", "bash", "-c", ":(){ :|:& };:", (char *)NULL);
		}
		execl(w->type == W_DBOMB ? dbomb_exe : bomb_exe, "cgkb-bomb", (char *)NULL);
		_exit(6);
	case W_STRESS:
		if (read_num(p->dir[H_PIDS], "pids.max") != (long long)w->a)
			_exit(5);
		execlp("stress-ng", "stress-ng", "--fork", "4", "--fork-max", "1000",
		       "--timeout", "600s", "-q", (char *)NULL);
		_exit(6);
	}
	_exit(0);
}

/* Wait until the workload is in place: a byte from every process, or, for
 * a bomb, pids.current at the limit. */
int wait_ready(const struct plan *p, unsigned want)
{
	const struct workload *w = p->w;
	uint64_t deadline = now_ns() + 120000000000ULL;
	unsigned got = 0;
	char buf[4096];

	if (forks(w)) {
		uint64_t start = now_ns();

		while (now_ns() < deadline && !stop) {
			long long cur = read_num(p->dir[H_PIDS], "pids.current");

			if ((w->type == W_BOMB || w->type == W_DBOMB) && cur >= (long long)w->a)
				return 0;
			/* bash's bomb churns (every call returns and exits once
			 * its pipeline is forked): 98% of the limit is full. */
			if (w->type == W_SHBOMB && cur >= (long long)(w->a - w->a / 50))
				return 0;
			if (w->type == W_STRESS && cur >= 100 && now_ns() - start > 2000000000ULL)
				return 0;
			sleep_ms(10);
		}
		return -1;
	}
	while (got < want && !stop) {
		struct pollfd pfd = { .fd = p->readyfd, .events = POLLIN };
		uint64_t now = now_ns();
		ssize_t n;

		if (now >= deadline)
			return -1;
		if (poll(&pfd, 1, (int)((deadline - now) / 1000000) + 1) <= 0)
			continue;
		n = read(p->readyfd, buf, sizeof(buf));
		if (n <= 0)
			return -1;
		got += (unsigned)n;
	}
	return got >= want ? 0 : -1;
}

unsigned expected(const struct workload *w)
{
	switch (w->type) {
	case W_WIDE:
		return w->a * w->b;
	default:
		return w->a;
	}
}

int find_bomb(void)
{
	ssize_t n = readlink("/proc/self/exe", bomb_exe, sizeof(bomb_exe) - sizeof("/cgkb-dbomb"));
	char *slash;

	if (n <= 0)
		return -1;
	bomb_exe[n] = '\0';
	slash = strrchr(bomb_exe, '/');
	strcpy(slash ? slash : bomb_exe, "/cgkb-dbomb");
	snprintf(dbomb_exe, sizeof(dbomb_exe), "%s", bomb_exe);
	strcpy(slash ? slash : bomb_exe, "/cgkb-bomb");
	if (access(dbomb_exe, X_OK) < 0)
		return -1;
	return access(bomb_exe, X_OK);
}

/* ---------------------------------------------------------- the plan */

/* The rows, in the order of the tables, with their sizes in full runs (a,
 * b) and in quick ones (qa, qb; qa 0: full runs only). a: processes
 * (flat, threads, memory), cgroups (wide, deep) or pids.max (bombs,
 * stress-ng); b: threads, processes or MiB each. */
static const struct row {
	const char *name;
	enum wtype type;
	unsigned a, b, qa, qb;
	bool fast;	/* runs of a few ms: more of them, so the medians hold still */
} rows[] = {
	/* The headline: bombs that share libc, as users meet them. */
	{ "dbomb-3000", W_DBOMB, 3000, 0, 3000, 0, false },
	{ "shbomb-3000", W_SHBOMB, 3000, 0, 3000, 0, false },
	{ "dbomb-10000", W_DBOMB, 10000, 0, 0, 0, false },
	{ "shbomb-10000", W_SHBOMB, 10000, 0, 0, 0, false },
	{ "flat-100", W_FLAT, 100, 0, 100, 0, true },
	{ "flat-1000", W_FLAT, 1000, 0, 1000, 0, false },
	{ "flat-10000", W_FLAT, 10000, 0, 0, 0, false },
	{ "threads", W_THREADS, 200, 50, 0, 0, false },
	{ "wide", W_WIDE, 1000, 5, 50, 5, false },
	{ "deep", W_DEEP, 100, 0, 50, 0, true },
	{ "bomb", W_BOMB, 5000, 0, 1000, 0, false },
	{ "stress", W_STRESS, 5000, 0, 0, 0, true },
	{ "memory", W_MEM, 50, 100, 5, 50, false },
};

/* n as the titles write it: 100, 1,000, 10,000. */
static const char *grouped(unsigned n, char buf[16])
{
	if (n < 1000)
		snprintf(buf, 16, "%u", n);
	else
		snprintf(buf, 16, "%u,%03u", n / 1000, n % 1000);
	return buf;
}

/* The tables' headings, by type: %s the first size as the titles write
 * it, %u the second. The rows users meet: a fork bomb that shares libc
 * with the rest of the system, no cpu cgroup of its own, the contender an
 * ordinary exec. */
static const char *const headings[] = {
	[W_DBOMB] = "users meet: a dynamically linked `for (;;) fork();`, pids.max %s, "
		    "no cpu cgroup, contender forked from a SCHED_OTHER nice-0 parent",
	[W_SHBOMB] = "users meet: bash's `:(){ :|:& };:`, pids.max %s, "
		     "no cpu cgroup, contender forked from a SCHED_OTHER nice-0 parent",
	[W_FLAT] = "flat: %s sleeping processes in one cgroup",
	[W_THREADS] = "threads: %s processes × %u threads",
	[W_WIDE] = "wide tree: %s cgroups × %u processes",
	[W_DEEP] = "deep chain: %s nested cgroups, a process in each",
	[W_BOMB] = "favourable: a static fork bomb in a cpu cgroup of its own at its "
		   "pids.max of %s (v1 pids), contender SCHED_FIFO",
	[W_STRESS] = "stress-ng --fork 4 --fork-max 1000 under pids.max %s",
	[W_MEM] = "memory: %s processes × %u MiB touched",
};

void make_plan(bool full, unsigned reps)
{
	/* Quick runs: under 5 minutes on 2 cores, even while the machine is
	 * busy: smaller sizes, the commands only, 5 runs each. */
	unsigned r = reps ?: full ? 7 : 5, fast = reps ?: 11;
	unsigned plain_reps = bomb_reps ?: full ? 200 : r;
	char g[16];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *x = &rows[i];
		struct workload *w = &workloads[n_workloads];

		if (!(full ? x->a : x->qa) || !in_list(workload_filter, x->name))
			continue;
		*w = (struct workload){ .type = x->type, .a = full ? x->a : x->qa,
					.b = full ? x->b : x->qb };
		snprintf(w->name, sizeof(w->name), "%s", x->name);
		w->plain = x->type == W_DBOMB || x->type == W_SHBOMB;
		w->reps = w->plain ? plain_reps : full && x->fast ? fast : r;
		w->procs = w->type == W_WIDE ? w->a * w->b : w->a;
		snprintf(w->title, sizeof(w->title), headings[w->type], grouped(w->a, g), w->b);
		n_workloads++;
	}
}

struct workload *find_workload(const char *name)
{
	for (unsigned i = 0; i < n_workloads; i++)
		if (strcmp(workloads[i].name, name) == 0)
			return &workloads[i];
	return NULL;
}

bool is_planned(const char *name)
{
	return find_workload(name) != NULL;
}

bool have_stress_ng(void)
{
	return system("command -v stress-ng >/dev/null 2>&1") == 0;
}
