/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgkill benchmark driver.
 *
 *	bench [--full] [--reps N] [--trials N] [--only W,...] [--contenders C,...]
 *	      [--cgkill PATH] [--floor PATH] [--shell-loop PATH] [--results DIR]
 *	bench --hold WORKLOAD [--hier v2|freezer|pids]   (set up, print, wait)
 *
 * For every workload and every repetition, each contender in turn (the order
 * rotates from one repetition to the next) gets a freshly built workload in a
 * fresh sandbox cgroup and is timed from its start until the subtree is
 * empty, as seen by our own watcher (not by the contender's report).
 *
 * Safety: everything runs in a new pid namespace (and mount namespace with
 * its own /proc), so no pid any contender reads or kills can name a process
 * outside it, and the kernel kills whatever is left if the driver dies. The
 * outer process only creates the sandbox cgroups and removes them at the end
 * (thaw, cgroup.kill, rmdir with retries), whatever happened inside. Fork
 * bombs start only after their v1 pids cgroup has pids.max set.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <linux/sched.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgkill.h"

#define RUN_DEADLINE_NS (60ULL * 1000000000)	/* one timed kill, at most */
#define GRACE_NS (5ULL * 1000000000)	/* after a contender returns */
#define WATCH_NS 250000			/* watcher re-reads every 0.25 ms */
#define MAX_RUNS 256
#define STALL_NS (2ULL * 1000000000)	/* a run over 2 s is a stall */

/* ---------------------------------------------------------------- util */

static volatile sig_atomic_t stop;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("bench: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	n = n < 0 ? -errno : 0;
	close(fd);
	return (int)n;
}

static int write_at(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return write_file(path, text);
}

/* Small pseudo-file into buf; -errno or length. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return n;
}

static long long read_num(const char *dir, const char *name)
{
	char path[PATH_MAX], buf[64];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return -1;
	return strtoll(buf, NULL, 10);
}

/* Lines (processes) in dir/cgroup.procs, read to EOF; -1 if unreadable. */
static long count_procs(const char *dir)
{
	char path[PATH_MAX], buf[65536];
	long lines = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			lines += buf[i] == '\n';
	close(fd);
	return lines;
}

/* "populated" from an open cgroup.events: 1, 0 or -1. */
static int populated(int evfd)
{
	char buf[256];
	ssize_t n = pread(evfd, buf, sizeof(buf) - 1, 0);
	char *p;

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strstr(buf, "populated ");
	return p ? p[10] == '1' : -1;
}

/* Call fn on dir and every directory below it; children first if post. */
typedef void (*walk_fn)(const char *dir, void *arg);
static void walk(const char *dir, bool post, walk_fn fn, void *arg)
{
	DIR *d;
	struct dirent *de;

	if (!post)
		fn(dir, arg);
	d = opendir(dir);
	if (d) {
		while ((de = readdir(d))) {
			char sub[PATH_MAX];

			if (de->d_type != DT_DIR || de->d_name[0] == '.')
				continue;
			snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
			walk(sub, post, fn, arg);
		}
		closedir(d);
	}
	if (post)
		fn(dir, arg);
}

static void count_visit(const char *dir, void *arg)
{
	long n = count_procs(dir);

	if (n > 0)
		*(long *)arg += n;
}

static long count_tree(const char *dir)
{
	long n = 0;

	walk(dir, false, count_visit, &n);
	return n;
}

static void thaw_visit(const char *dir, void *arg)
{
	char path[PATH_MAX], buf[32];

	(void)arg;
	snprintf(path, sizeof(path), "%s/freezer.state", dir);
	if (read_small(path, buf, sizeof(buf)) > 0 && strncmp(buf, "THAWED", 6))
		write_file(path, "THAWED");
	snprintf(path, sizeof(path), "%s/cgroup.freeze", dir);
	if (read_small(path, buf, sizeof(buf)) > 0 && buf[0] == '1')
		write_file(path, "0");
}

static void rmdir_visit(const char *dir, void *arg)
{
	unsigned delay = 1;
	uint64_t deadline = now_ns() + 3000000000ULL;

	(void)arg;
	while (rmdir(dir) < 0 && errno == EBUSY && now_ns() < deadline) {
		sleep_ms(delay);
		if (delay < 64)
			delay *= 2;
	}
}

/* ------------------------------------------------------- hierarchies */

enum { H_V2, H_FRZ, H_PIDS, H_MEM, H_CPU, H_N };
static const char *const hname[H_N] = { "v2", "freezer", "pids", "memory", "cpu" };
static const char *const hctl[H_N] = { NULL, "freezer", "pids", "memory", "cpu" };
static char mnt[H_N][PATH_MAX];	/* mount points, "" if missing */
static char top[H_N][PATH_MAX];	/* sandbox tops */

static void find_mounts(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[8192];

	if (!f)
		die("cannot read /proc/self/mountinfo");
	while (fgets(line, sizeof(line), f)) {
		char point[PATH_MAX], *sep = strstr(line, " - ");
		char fstype[64], source[256], opts[2048];

		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", point) != 1 ||
		    sscanf(sep + 3, "%63s %255s %2047s", fstype, source, opts) != 3)
			continue;
		if (strcmp(fstype, "cgroup2") == 0 && !mnt[H_V2][0])
			snprintf(mnt[H_V2], PATH_MAX, "%s", point);
		if (strcmp(fstype, "cgroup"))
			continue;
		for (int h = H_FRZ; h < H_N; h++) {
			char *tok, *save, o[2048];

			snprintf(o, sizeof(o), "%s", opts);
			for (tok = strtok_r(o, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
				if (strcmp(tok, hctl[h]) == 0 && !mnt[h][0])
					snprintf(mnt[h], PATH_MAX, "%s", point);
		}
	}
	fclose(f);
}

/* Our own cgroup in a v1 hierarchy, from /proc/self/cgroup. */
static void own_cgroup(const char *ctl, char *out, size_t size)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[4096];

	snprintf(out, size, "/");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;

		if (!b)
			continue;
		*b = '\0';
		b[strcspn(b + 1, "\n") + 1] = '\0';
		for (char *tok = strtok(a + 1, ","); tok; tok = strtok(NULL, ","))
			if (strcmp(tok, ctl) == 0)
				snprintf(out, size, "%s", b + 1);
	}
	fclose(f);
}

/* --------------------------------------------------------- workloads */

/* W_BOMB: the static bomb (bomb.c); W_DBOMB: the same source linked
 * dynamically, so it shares libc with everything else; W_SHBOMB: bash's
 * own :(){ :|:& };: */
enum wtype { W_FLAT, W_THREADS, W_WIDE, W_DEEP, W_BOMB, W_STRESS, W_MEM, W_DBOMB, W_SHBOMB };

struct workload {
	char name[64];
	char title[128];
	enum wtype type;
	unsigned a, b;	/* see describe() */
	unsigned reps;
	unsigned procs;	/* processes (chart x axis) */
	/* The moment users meet: no cpu cgroup for the bomb, the contender
	 * forked from a SCHED_OTHER nice-0 parent and exec'd fresh. */
	bool plain;
};

/* The spec of one run: which hierarchies hold the tree. */
struct plan {
	const struct workload *w;
	char dir[H_N][PATH_MAX];	/* workload top per hierarchy, "" unused */
	bool tree[H_N];		/* structure built in this hierarchy */
	int readyfd;
};

static void sleeper(int readyfd)
{
	prctl(PR_SET_NAME, "cgkb-sleep");
	if (write(readyfd, "x", 1) < 0)
		_exit(3);
	for (;;)
		pause();
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

static char bomb_exe[PATH_MAX];	/* cgkb-bomb (bomb.c), beside this program */
static char dbomb_exe[PATH_MAX];	/* cgkb-dbomb: bomb.c, dynamically linked */
static char cpu_home[PATH_MAX];	/* our v1 cpu cgroup before the harness moved */

static bool is_bomb(const struct workload *w)
{
	return w->type == W_BOMB || w->type == W_DBOMB || w->type == W_SHBOMB;
}

/* The fork bombs and stress-ng: workloads that fork all the time. */
static bool forks(const struct workload *w)
{
	return is_bomb(w) || w->type == W_STRESS;
}

/* The harness may run at real-time priority (main): a workload never
 * does, nor a contender outside the bomb rows. */
static void sched_other(void)
{
	struct sched_param other = { 0 };

	sched_setscheduler(0, SCHED_OTHER, &other);
}

/* An ordinary process: SCHED_OTHER, nice 0, in the cpu cgroup the machine's
 * own processes are in (not the harness's, which has a high weight). */
static void ordinary(void)
{
	char path[PATH_MAX];

	sched_other();
	setpriority(PRIO_PROCESS, 0, 0);
	if (cpu_home[0]) {
		snprintf(path, sizeof(path), "%s/cgroup.procs", cpu_home);
		write_file(path, "0");
	}
}

static void spawner(const struct plan *p)
{
	const struct workload *w = p->w;
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
		for (unsigned i = 1; i < w->a; i++)
			if (spawn(-1) == 0)
				sleeper(p->readyfd);
		sleeper(p->readyfd);
		break;
	case W_THREADS:
		for (unsigned i = 1; i < w->a; i++)
			if (spawn(-1) == 0)
				threads_proc(w->b, p->readyfd);
		threads_proc(w->b, p->readyfd);
		break;
	case W_MEM:
		for (unsigned i = 1; i < w->a; i++)
			if (spawn(-1) == 0)
				mem_proc(w->b, p->readyfd);
		mem_proc(w->b, p->readyfd);
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

/* -------------------------------------------------------- contenders */

/* C_LIBRUN: the library in a process that was running before the bomb
 * started (a daemon), told to kill through a pipe. */
enum ckind { C_FLOOR, C_FLOOR_MREL, C_CMD, C_LIB, C_SHELL, C_PKILL, C_CMD2, C_LIBRUN, C_CMD3,
	     C_FLOOR_DYN };

struct contender {
	const char *name;
	enum ckind kind;
	enum cgk_backend be;
	int hier;	/* the hierarchy it targets */
};

static const struct contender contenders[] = {
	{ "floor", C_FLOOR, CGK_BACKEND_AUTO, H_V2 },
	{ "cgkill -b kernel", C_CMD, CGK_BACKEND_KERNEL, H_V2 },
	{ "cgkill -b freeze", C_CMD, CGK_BACKEND_FREEZE, H_V2 },
	{ "cgkill -b v1-freeze", C_CMD, CGK_BACKEND_V1_FREEZE, H_FRZ },
	{ "cgkill -b loop", C_CMD, CGK_BACKEND_LOOP, H_PIDS },
	{ "lib kernel", C_LIB, CGK_BACKEND_KERNEL, H_V2 },
	{ "lib freeze", C_LIB, CGK_BACKEND_FREEZE, H_V2 },
	{ "lib v1-freeze", C_LIB, CGK_BACKEND_V1_FREEZE, H_FRZ },
	{ "lib loop", C_LIB, CGK_BACKEND_LOOP, H_PIDS },
	{ "shell loop", C_SHELL, CGK_BACKEND_AUTO, H_V2 },
	{ "pkill --cgroup", C_PKILL, CGK_BACKEND_AUTO, H_V2 },
	{ "floor + mrelease", C_FLOOR_MREL, CGK_BACKEND_AUTO, H_V2 },
	/* --cgkill2: a second build of the command, to compare a change. */
	{ "cgkill2 -b kernel", C_CMD2, CGK_BACKEND_KERNEL, H_V2 },
	{ "cgkill2 -b freeze", C_CMD2, CGK_BACKEND_FREEZE, H_V2 },
	{ "cgkill2 -b v1-freeze", C_CMD2, CGK_BACKEND_V1_FREEZE, H_FRZ },
	{ "cgkill2 -b loop", C_CMD2, CGK_BACKEND_LOOP, H_PIDS },
	{ "lib kernel (running)", C_LIBRUN, CGK_BACKEND_KERNEL, H_V2 },
	{ "lib freeze (running)", C_LIBRUN, CGK_BACKEND_FREEZE, H_V2 },
	{ "lib v1-freeze (running)", C_LIBRUN, CGK_BACKEND_V1_FREEZE, H_FRZ },
	{ "lib loop (running)", C_LIBRUN, CGK_BACKEND_LOOP, H_PIDS },
	/* --cgkill3: a third build, for an A/B/C in the same runs. */
	{ "cgkill3 -b kernel", C_CMD3, CGK_BACKEND_KERNEL, H_V2 },
	{ "cgkill3 -b freeze", C_CMD3, CGK_BACKEND_FREEZE, H_V2 },
	{ "cgkill3 -b v1-freeze", C_CMD3, CGK_BACKEND_V1_FREEZE, H_FRZ },
	{ "cgkill3 -b loop", C_CMD3, CGK_BACKEND_LOOP, H_PIDS },
	/* The rows users meet take the static floor as "floor" (the least
	 * work: one write, and no dynamic loader to wait in beside a bomb
	 * that shares libc); this is the usual, dynamic one beside it. */
	{ "floor (dynamic)", C_FLOOR_DYN, CGK_BACKEND_AUTO, H_V2 },
};
#define N_CONTENDERS (sizeof(contenders) / sizeof(contenders[0]))

static const char *cgkill2_path, *cgkill3_path;
static unsigned unboosted;	/* --unboosted=2,3: those builds run without CAP_SYS_NICE */
static bool quick_mode;

static bool applies(const struct contender *c, const struct workload *w)
{
	bool one_cgroup = w->type != W_WIDE && w->type != W_DEEP;

	if ((c->kind == C_CMD2 && !cgkill2_path) || (c->kind == C_CMD3 && !cgkill3_path))
		return false;
	/* The rows users meet: the floor, the command, a running library. */
	if (w->plain)
		return (c->kind == C_FLOOR || c->kind == C_CMD || c->kind == C_CMD2 ||
			c->kind == C_CMD3 || c->kind == C_LIBRUN || c->kind == C_FLOOR_DYN) &&
		       mnt[c->hier][0];
	if (c->kind == C_LIBRUN || c->kind == C_FLOOR_DYN)
		return false;

	/* pkill stalls on a fork bomb's /proc files until the 60 s limit:
	 * measured in the full run, skipped in the quick one. */
	if (c->kind == C_PKILL)
		return one_cgroup && !(quick_mode && w->type == W_BOMB);
	if (c->kind == C_FLOOR_MREL)
		return w->type == W_MEM;
	if (!mnt[c->hier][0])
		return false;
	return true;
}

static const char *cgkill_path = "build/cgkill";
static const char *floor_path = "build/bench/floor";
static char floor_static_path[PATH_MAX];	/* floor-static beside floor_path */
static const char *shell_path = "bench/killloop.sh";
static char contender_filter[1024];
static char workload_filter[1024];

static bool in_list(const char *list, const char *name)
{
	char copy[1024];

	if (!list[0])
		return true;
	snprintf(copy, sizeof(copy), "%s", list);
	for (char *save, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (strcmp(tok, name) == 0)
			return true;
	return false;
}

/* A name in a --contenders or --only list that names nothing is a typo:
 * a run without it would look complete. */
static void check_list(const char *list, const char *what, bool (*known)(const char *))
{
	char copy[1024];

	snprintf(copy, sizeof(copy), "%s", list);
	for (char *save, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (!known(tok))
			die("no %s named \"%s\"", what, tok);
}

static const struct contender *find_contender(const char *name)
{
	for (size_t i = 0; i < N_CONTENDERS; i++)
		if (strcmp(contenders[i].name, name) == 0)
			return &contenders[i];
	return NULL;
}

/* Its column in cells[][] (names are the fixed ones of contenders[]). */
static size_t contender_index(const char *name)
{
	return (size_t)(find_contender(name) - contenders);
}

static bool is_contender(const char *name)
{
	return find_contender(name) != NULL;
}

static void exec_contender(const struct contender *c, const char *target, const char *v2rel)
{
	char bname[32];
	int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);

	if (devnull >= 0)
		dup2(devnull, STDOUT_FILENO);
	switch (c->kind) {
	case C_FLOOR:
		execl(floor_path, "floor", target, (char *)NULL);
		break;
	case C_FLOOR_MREL:
		execl(floor_path, "floor", "-m", target, (char *)NULL);
		break;
	case C_CMD:
		snprintf(bname, sizeof(bname), "%s", cgk_backend_name(c->be));
		execl(cgkill_path, "cgkill", "-q", "-b", bname, "--wait=30s", target, (char *)NULL);
		break;
	case C_CMD2:
	case C_CMD3:
		snprintf(bname, sizeof(bname), "%s", cgk_backend_name(c->be));
		execl(c->kind == C_CMD2 ? cgkill2_path : cgkill3_path, "cgkill", "-q", "-b", bname,
		      "--wait=30s", target, (char *)NULL);
		break;
	case C_SHELL:
		execl("/bin/sh", "sh", shell_path, target, (char *)NULL);
		break;
	case C_PKILL:
		execlp("pkill", "pkill", "-9", "--cgroup", v2rel, (char *)NULL);
		break;
	case C_LIBRUN:	/* started before the workload: lib_running() */
	case C_FLOOR_DYN:	/* the rows users meet only: launcher() */
		break;
	case C_LIB: {
		struct cgk_options o = CGK_OPTIONS_INIT;
		struct cgk_report rep;
		int r;

		o.backend = c->be;
		o.wait_ms = 30000;
		r = cgk_kill(target, &o, &rep);
		if (r < 0)
			fprintf(stderr, "bench: lib %s: %s\n", cgk_backend_name(c->be), rep.message);
		cgk_report_free(&rep);
		_exit(r < 0 ? 1 : 0);
	}
	}
	fprintf(stderr, "bench: cannot run %s: %m\n", c->name);
	_exit(127);
}

/* ------------------------------------------------------------ one run */

struct run {
	double empty_ms;	/* start -> subtree empty (our watcher) */
	double exit_ms;		/* start -> contender returned */
	double freed_ms;	/* start -> memory usage below 5% (memory only) */
	double cpu_ms;		/* user + system of the contender */
	long maxrss_kb;
	int status;		/* exit status of the contender, -1 killed */
	bool emptied;
	bool v1_lagged;		/* v1 lists still showed tasks at populated 0 */
	long left;		/* processes left when the watch ended */
	long escaped;		/* bomb processes found outside the sandbox */
	long at_start;		/* processes (pids.current) when the kill began */
	bool stalled;		/* not empty after 2 s */
};

static unsigned seq;
static bool bomb_cpu = true;
static bool realtime;	/* the harness runs SCHED_FIFO */

static void mkdir_tree(const struct plan *p, int h)
{
	char path[PATH_MAX];
	const struct workload *w = p->w;

	if (mkdir(p->dir[h], 0755) < 0)
		die("mkdir %s: %m", p->dir[h]);
	if (!p->tree[h])
		return;
	if (w->type == W_WIDE)
		for (unsigned i = 0; i < w->a; i++) {
			snprintf(path, sizeof(path), "%s/c%u", p->dir[h], i);
			if (mkdir(path, 0755) < 0)
				die("mkdir %s: %m", path);
		}
	if (w->type == W_DEEP) {
		snprintf(path, sizeof(path), "%s", p->dir[h]);
		for (unsigned i = 0; i < w->a; i++) {
			strcat(path, "/d");
			if (mkdir(path, 0755) < 0)
				die("mkdir %s: %m", path);
		}
	}
}

/* Kill whatever is left of a run, thaw, reap, remove its cgroups. */
static void run_cleanup(struct plan *p)
{
	uint64_t deadline = now_ns() + 30000000000ULL;
	char ev[PATH_MAX];
	int evfd;

	for (int h = 0; h < H_N; h++)
		if (p->dir[h][0])
			walk(p->dir[h], false, thaw_visit, NULL);
	snprintf(ev, sizeof(ev), "%s/cgroup.events", p->dir[H_V2]);
	evfd = open(ev, O_RDONLY | O_CLOEXEC);
	while (evfd >= 0 && populated(evfd) == 1 && now_ns() < deadline) {
		struct pollfd pfd = { .fd = evfd, .events = POLLPRI };

		write_at(p->dir[H_V2], "cgroup.kill", "1");
		for (int h = 0; h < H_N; h++)
			if (p->dir[h][0])
				walk(p->dir[h], false, thaw_visit, NULL);
		poll(&pfd, 1, 200);
	}
	if (evfd >= 0)
		close(evfd);
	/* Reap: the workload's orphans are ours (we are pid 1 here). */
	deadline = now_ns() + 5000000000ULL;
	for (;;) {
		pid_t r = waitpid(-1, NULL, WNOHANG);

		if (r < 0 || now_ns() > deadline)
			break;
		if (r == 0)
			sleep_ms(1);
	}
	for (int h = H_N - 1; h >= 0; h--)
		if (p->dir[h][0])
			walk(p->dir[h], true, rmdir_visit, NULL);
}

/* Wait until the workload is in place: a byte from every process, or, for
 * a bomb, pids.current at the limit. */
static int wait_ready(const struct plan *p, unsigned want)
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

static unsigned expected(const struct workload *w)
{
	switch (w->type) {
	case W_WIDE:
		return w->a * w->b;
	default:
		return w->a;
	}
}

static void scan_escapes(struct run *out)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	char rel[PATH_MAX];

	snprintf(rel, sizeof(rel), "0::%s/", top[H_V2] + strlen(mnt[H_V2]));
	if (!d)
		return;
	while ((de = readdir(d))) {
		char path[PATH_MAX], buf[4096];

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		if (read_small(path, buf, sizeof(buf)) <= 0 ||
		    (strncmp(buf, "cgkb-bomb", 9) && strcmp(buf, "bash\n")))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cgroup", de->d_name);
		if (read_small(path, buf, sizeof(buf)) > 0 && !strstr(buf, rel))
			out->escaped++;
	}
	closedir(d);
}

/* The library in a process that was already running when the bomb
 * started, as a daemon is: it has made one call (a dry run of the still
 * empty target), then waits for the word. */
/* What a launcher or a running library tells the harness: the pid that
 * works, and the moment it was started or called (CLOCK_MONOTONIC). */
struct started {
	pid_t pid;
	uint64_t t0;
};

static void lib_running(const struct contender *c, const char *target, int gofd, int pidfd)
{
	struct cgk_options o = CGK_OPTIONS_INIT;
	struct cgk_report rep;
	struct started st;
	char b;
	int r;

	ordinary();
	o.backend = c->be;
	o.flags = CGK_DRY_RUN;
	cgk_kill(target, &o, &rep);
	cgk_report_free(&rep);
	st = (struct started){ 0, 0 };	/* ready */
	if (write(pidfd, &st, sizeof(st)) < 0 || read(gofd, &b, 1) != 1)
		_exit(3);
	o.flags = CGK_BOOST;
	o.wait_ms = 30000;
	st = (struct started){ getpid(), now_ns() };
	if (write(pidfd, &st, sizeof(st)) < 0)
		_exit(3);
	r = cgk_kill(target, &o, &rep);
	if (r < 0)
		fprintf(stderr, "bench: lib %s: %s\n", cgk_backend_name(c->be), rep.message);
	cgk_report_free(&rep);
	_exit(r < 0 ? 1 : 0);
}

/*
 * The rows users meet: the contender is started by an ordinary process
 * (SCHED_OTHER, nice 0, the machine's cpu cgroup), made before the bomb,
 * with posix_spawn() (a vfork: no copy of its address space) and exec'd
 * fresh; its pid goes back through pidfd, its status is ours. A fork()
 * here would measure the parent, not the contender: beside a libc-sharing
 * bomb the fork itself waits (dup_mmap links every file mapping, libc's
 * too, under that mapping's lock), and so does the exec that drops the
 * copy (see RESULTS.md, "Stalls beside a bomb").
 */
static void launcher(const struct contender *c, const char *target, int gofd, int pidfd)
{
	posix_spawn_file_actions_t fa;
	char bname[32], *argv[8], b;
	struct started st;
	const char *path = c->kind == C_CMD ? cgkill_path : c->kind == C_CMD2 ? cgkill2_path :
			   c->kind == C_CMD3 ? cgkill3_path : c->kind == C_FLOOR ? floor_static_path :
			   floor_path;
	int status, n = 0;
	pid_t pid;

	ordinary();
	/* A parent that has been running (a shell): its pages are mapped.
	 * A fork of ours has no file pages mapped, and would fault libc's in
	 * beside the bomb, in the middle of posix_spawn(). */
	mlockall(MCL_CURRENT);
	snprintf(bname, sizeof(bname), "%s", cgk_backend_name(c->be));
	argv[n++] = c->kind == C_FLOOR || c->kind == C_FLOOR_DYN ? "floor" : "cgkill";
	if (c->kind != C_FLOOR && c->kind != C_FLOOR_DYN) {
		argv[n++] = "-q";
		argv[n++] = "-b";
		argv[n++] = bname;
		argv[n++] = "--wait=30s";
	}
	argv[n++] = (char *)target;
	argv[n] = NULL;
	/* Without CAP_SYS_NICE (root gets its bounding set at exec), the
	 * command cannot raise its priority: cgkill as it was before. */
	if (((unboosted & 2 && c->kind == C_CMD2) || (unboosted & 4 && c->kind == C_CMD3)) &&
	    prctl(PR_CAPBSET_DROP, 23 /* CAP_SYS_NICE */, 0, 0, 0) < 0)
		_exit(125);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	st = (struct started){ 0, 0 };	/* ready */
	if (write(pidfd, &st, sizeof(st)) < 0 || read(gofd, &b, 1) != 1)
		_exit(126);
	/* The clock starts at the spawn: how long this parent waited for a
	 * CPU after the word is its own affair, as a shell's would be. */
	st.t0 = now_ns();
	if (posix_spawn(&pid, path, &fa, NULL, argv, environ) != 0)
		_exit(127);
	st.pid = pid;
	if (write(pidfd, &st, sizeof(st)) < 0)
		_exit(126);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			_exit(126);
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

static FILE *stall_log;

/* Where a contender that takes over 2 s waits: its kernel stack, its pc
 * and the mapping that holds it, and what the bomb's tasks are doing.
 * In a thread of its own: /proc/PID/maps waits for the mmap lock of a
 * process that may be stuck holding it, and the watcher must go on. */
struct capture {
	const struct workload *w;
	const struct contender *c;
	pid_t pid;
	double at_s;
};

static void *capture_stall(void *arg)
{
	struct capture *req = arg;
	const struct workload *w = req->w;
	const struct contender *c = req->c;
	pid_t pid = req->pid;
	double at_s = req->at_s;
	char *text = NULL;
	size_t text_len = 0;
	FILE *m = open_memstream(&text, &text_len);
	char path[64], buf[8192], line[512];
	unsigned long long pc = 0;
	unsigned state[128] = { 0 }, sampled = 0;
	struct { char fn[64]; unsigned n; } frames[16];
	unsigned n_top = 0;
	DIR *d;
	struct dirent *de;
	FILE *f;

	fprintf(m, "stall: %s, %s, pid %d, not empty after %.0f s\n", w->name, c->name, (int)pid, at_s);
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_small(path, buf, sizeof(buf)) > 0 && strrchr(buf, ')'))
		fprintf(m, "  state %c\n", strrchr(buf, ')')[2]);
	snprintf(path, sizeof(path), "/proc/%d/stack", (int)pid);
	if (read_small(path, buf, sizeof(buf)) > 0)
		fprintf(m, "  kernel stack:\n%s", buf);
	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	if (read_small(path, buf, sizeof(buf)) > 0) {
		char *last = strrchr(buf, ' ');

		buf[strcspn(buf, "\n")] = '\0';
		fprintf(m, "  /proc/PID/syscall: %s\n", buf);
		if (last)
			pc = strtoull(last + 1, NULL, 16);
	}
	/* The bomb: task states, and the top frame of up to 500 in D. */
	d = opendir("/proc");
	while (d && (de = readdir(d))) {
		char comm[32];

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		if (read_small(path, comm, sizeof(comm)) <= 0 ||
		    (strncmp(comm, "cgkb-bomb", 9) && strcmp(comm, "bash\n")))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		if (read_small(path, buf, sizeof(buf)) <= 0 || !strrchr(buf, ')'))
			continue;
		state[(unsigned char)strrchr(buf, ')')[2] & 127]++;
		if (strrchr(buf, ')')[2] != 'D' || sampled >= 500)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stack", de->d_name);
		if (read_small(path, buf, sizeof(buf)) <= 0)
			continue;
		sampled++;
		/* the first frame that is not a scheduler or lock primitive */
		for (char *save, *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			char fn[64];
			unsigned k;

			if (sscanf(l, "[<%*[^>]>] %63[^+]", fn) != 1 || strstr(fn, "schedule") ||
			    strstr(fn, "rwsem") || strstr(fn, "wait_bit") || strstr(fn, "io_schedule") ||
			    strstr(fn, "mutex") || strstr(fn, "lock"))
				continue;
			for (k = 0; k < n_top && strcmp(frames[k].fn, fn); k++)
				;
			if (k == n_top && n_top < 16)
				snprintf(frames[n_top++].fn, sizeof(frames[0].fn), "%s", fn);
			if (k < n_top)
				frames[k].n++;
			break;
		}
	}
	if (d)
		closedir(d);
	fprintf(m, "  bomb tasks: R %u, S %u, D %u, Z %u; in D (%u sampled), first frame past the lock:",
		  state['R'], state['S'], state['D'], state['Z'], sampled);
	for (unsigned k = 0; k < n_top; k++)
		fprintf(m, " %s %u%s", frames[k].fn, frames[k].n, k + 1 < n_top ? "," : "");
	fprintf(m, "\n");
	/* Last: it waits while the contender holds its mmap lock. */
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = pc ? fopen(path, "re") : NULL;
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi;

		if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && pc >= lo && pc < hi) {
			fprintf(m, "  pc %#llx in %s", pc, line);
			break;
		}
	}
	if (f)
		fclose(f);

	fclose(m);
	fputs(text, stderr);
	if (stall_log) {
		fputs(text, stall_log);
		fflush(stall_log);
	}
	free(text);
	free(req);
	return NULL;
}

static void capture_async(const struct workload *w, const struct contender *c, pid_t pid,
			  double at_s)
{
	struct capture *k = malloc(sizeof(*k));
	pthread_attr_t attr;
	pthread_t t;

	if (!k)
		return;
	*k = (struct capture){ w, c, pid, at_s };
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, capture_stall, k) != 0)
		free(k);
	pthread_attr_destroy(&attr);
}

static unsigned deadline_s = 60;

static int run_one(const struct workload *w, const struct contender *c, struct run *out,
		   bool hold)
{
	struct plan p = { .w = w };
	int pipefd[2], evfd = -1;
	char path[PATH_MAX], v2rel[PATH_MAX];
	long long mem0 = 0, memthr = 0;
	uint64_t t0, deadline, exit_at = 0, empty_at = 0;
	pid_t spawner_pid, cpid, daemon_pid = -1, inner_pid = -1;
	struct rusage ru = { 0 };
	bool exited = false, freed = false;
	int status = 0, r = 0, gofd[2] = { -1, -1 }, pidfd[2] = { -1, -1 };
	unsigned captures = 0;
	static const unsigned capture_at[] = { 2, 5, 10, 30 };

	*out = (struct run){ .status = -1 };
	seq++;
	for (int h = 0; h < H_N; h++) {
		/* A fork bomb gets a cpu cgroup of its own, as a service manager
		 * gives each service: else the killer competes with thousands of
		 * spinning tasks of equal weight. */
		bool used = h == H_V2 || h == H_PIDS || h == c->hier ||
			    (h == H_MEM && w->type == W_MEM) ||
			    (h == H_CPU && bomb_cpu && forks(w) && !w->plain);

		if (used && top[h][0])
			snprintf(p.dir[h], PATH_MAX, "%s/w%u", top[h], seq);
	}
	p.tree[c->hier] = true;
	for (int h = 0; h < H_N; h++)
		if (p.dir[h][0])
			mkdir_tree(&p, h);
	if (forks(w)) {
		char lim[32];

		snprintf(lim, sizeof(lim), "%u", w->a);
		if (!p.dir[H_PIDS][0] || write_at(p.dir[H_PIDS], "pids.max", lim) < 0 ||
		    read_num(p.dir[H_PIDS], "pids.max") != (long long)w->a) {
			fprintf(stderr, "bench: cannot set pids.max: no fork bomb\n");
			run_cleanup(&p);
			return -1;
		}
	}
	/* A running library, or the ordinary parent of the contender, starts
	 * before the bomb: nothing forks from us beside a libc-sharing bomb. */
	if (c->kind == C_LIBRUN || w->plain) {
		if (pipe2(gofd, O_CLOEXEC) < 0 || pipe2(pidfd, O_CLOEXEC) < 0)
			die("pipe: %m");
		daemon_pid = fork();
		if (daemon_pid < 0)
			die("fork: %m");
		if (daemon_pid == 0) {
			close(gofd[1]);
			close(pidfd[0]);
			if (c->kind == C_LIBRUN)
				lib_running(c, p.dir[c->hier], gofd[0], pidfd[1]);
			launcher(c, p.dir[c->hier], gofd[0], pidfd[1]);
		}
		close(gofd[0]);
		close(pidfd[1]);
		gofd[0] = pidfd[1] = -1;
		/* Ready (its pages in, its first call made) before the bomb. */
		{
			struct pollfd pfd = { .fd = pidfd[0], .events = POLLIN };
			struct started st;

			if (poll(&pfd, 1, 30000) != 1 || read(pidfd[0], &st, sizeof(st)) != sizeof(st))
				die("%s: the contender's parent did not get ready", c->name);
		}
		fcntl(pidfd[0], F_SETFL, O_NONBLOCK);
	}
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		die("pipe: %m");
	p.readyfd = pipefd[1];
	spawner_pid = fork();
	if (spawner_pid < 0)
		die("fork: %m");
	if (spawner_pid == 0) {
		close(pipefd[0]);
		fcntl(pipefd[1], F_SETFD, 0);
		spawner(&p);
	}
	close(pipefd[1]);
	p.readyfd = pipefd[0];
	if (wait_ready(&p, expected(w)) < 0) {
		fprintf(stderr, "bench: %s: workload did not come up\n", w->name);
		r = -1;
		goto out;
	}
	sleep_ms(is_bomb(w) || quick_mode ? 50 : 200);	/* settle */
	out->at_start = read_num(p.dir[H_PIDS], "pids.current");

	snprintf(path, sizeof(path), "%s/cgroup.events", p.dir[H_V2]);
	evfd = open(path, O_RDONLY | O_CLOEXEC);
	if (evfd < 0)
		die("%s: %m", path);
	if (p.dir[H_MEM][0]) {
		mem0 = read_num(p.dir[H_MEM], "memory.usage_in_bytes");
		memthr = mem0 / 20;
	}
	snprintf(v2rel, sizeof(v2rel), "%s", p.dir[H_V2] + strlen(mnt[H_V2]));

	if (hold) {
		printf("%s\n", p.dir[c->hier]);
		fflush(stdout);
		for (uint64_t end = now_ns() + 600000000000ULL; !stop && now_ns() < end;) {
			struct pollfd pfd = { .fd = evfd, .events = POLLPRI };

			if (populated(evfd) == 0)
				break;
			poll(&pfd, 1, 100);
		}
		goto out;
	}

	t0 = now_ns();
	if (daemon_pid > 0) {
		cpid = daemon_pid;
		if (write(gofd[1], "x", 1) != 1)
			die("pipe: %m");
	} else {
		cpid = fork();
	}
	if (cpid < 0)
		die("fork: %m");
	if (cpid == 0) {
		if (!forks(w))
			sched_other();
		exec_contender(c, p.dir[c->hier], v2rel);
	}
	inner_pid = daemon_pid > 0 ? -1 : cpid;
	deadline = t0 + (w->plain ? deadline_s * 1000000000ULL : RUN_DEADLINE_NS);
	for (;;) {
		struct timespec ts = { 0, WATCH_NS };
		struct pollfd pfd = { .fd = evfd, .events = POLLPRI };
		int pop = populated(evfd);
		uint64_t t = now_ns();

		if (pop == 0 && !out->emptied) {
			out->emptied = true;
			empty_at = t;
		}
		if (memthr && !freed && read_num(p.dir[H_MEM], "memory.usage_in_bytes") <= memthr) {
			freed = true;
			out->freed_ms = (double)(t - t0) / 1e6;
		}
		if (!exited && wait4(cpid, &status, WNOHANG, &ru) == cpid) {
			exited = true;
			exit_at = t;
		}
		/* Times count from the contender's start, told by its parent
		 * (it may be told after the subtree emptied: times are kept
		 * as moments until the end). */
		if (inner_pid < 0 && pidfd[0] >= 0) {
			struct started st;

			if (read(pidfd[0], &st, sizeof(st)) == sizeof(st)) {
				inner_pid = st.pid;
				if (st.t0 > t0)
					t0 = st.t0;
			}
		}
		if (!out->emptied && inner_pid > 0 && t - t0 > STALL_NS)
			out->stalled = true;
		/* Where it waits, at 2, 5, 10 and 30 s (rows users meet). */
		if (!out->emptied && !exited && captures < 4 && inner_pid > 0 &&
		    t - t0 > capture_at[captures] * 1000000000ULL) {
			if (w->plain)
				capture_async(w, c, inner_pid > 0 ? inner_pid : cpid,
					      (double)(t - t0) / 1e9);
			captures++;
		}
		if (out->emptied && exited && (!memthr || freed))
			break;
		if (exited && !out->emptied && t > exit_at + GRACE_NS)
			break;
		if (t > deadline || stop)
			break;
		ppoll(&pfd, 1, &ts, NULL);
	}
	if (!exited) {
		/* Where a contender that never returned is stuck, for the log. */
		char stack[4096], where[64];

		snprintf(where, sizeof(where), "/proc/%d/stack", inner_pid > 0 ? inner_pid : cpid);
		if (read_small(where, stack, sizeof(stack)) > 0)
			fprintf(stderr, "bench: %s did not return; kernel stack:\n%s", c->name, stack);
		if (inner_pid > 0 && inner_pid != cpid)
			kill(inner_pid, SIGKILL);
		kill(cpid, SIGKILL);
		wait4(cpid, &status, 0, &ru);
		daemon_pid = -1;
	} else {
		out->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	}
	if (out->emptied)
		out->empty_ms = (double)(empty_at - t0) / 1e6;
	if (exited)
		out->exit_ms = (double)(exit_at - t0) / 1e6;
	out->cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
		      (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	out->maxrss_kb = ru.ru_maxrss;

	/* v1 contenders: the v1 lists must be empty too; if the kernel ever
	 * showed tasks there after populated 0, time to the empty lists. */
	if (out->emptied && c->hier != H_V2) {
		uint64_t until = now_ns() + 2000000000ULL;

		while (count_tree(p.dir[c->hier]) > 0 && now_ns() < until) {
			out->v1_lagged = true;
			sleep_ms(1);
		}
		if (out->v1_lagged)
			out->empty_ms = (double)(now_ns() - t0) / 1e6;
	}
	if (!out->emptied)
		out->left = count_tree(p.dir[H_V2]);
	if (is_bomb(w))
		scan_escapes(out);
out:
	if (daemon_pid > 0 && !exited) {
		/* told nothing (the workload did not come up) or stuck */
		kill(daemon_pid, SIGKILL);
		waitpid(daemon_pid, NULL, 0);
	}
	for (int i = 0; i < 2; i++) {
		if (gofd[i] >= 0)
			close(gofd[i]);
		if (pidfd[i] >= 0)
			close(pidfd[i]);
	}
	if (evfd >= 0)
		close(evfd);
	close(pipefd[0]);
	run_cleanup(&p);
	return r;
}

/* ------------------------------------------------------------ results */

struct cell {
	unsigned n;
	struct run v[MAX_RUNS];
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median of field off over the runs that emptied (all runs if !only_ok). */
static double median(const struct cell *c, size_t off, bool only_ok, double *min, double *max)
{
	double v[MAX_RUNS];
	unsigned n = 0;

	for (unsigned i = 0; i < c->n; i++)
		if (!only_ok || c->v[i].emptied)
			v[n++] = *(const double *)((const char *)&c->v[i] + off);
	if (!n) {
		if (min)
			*min = 0;
		if (max)
			*max = 0;
		return -1;
	}
	qsort(v, n, sizeof(v[0]), cmp_double);
	if (min)
		*min = v[0];
	if (max)
		*max = v[n - 1];
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static long peak_rss_kb(const struct cell *c)
{
	long rss = 0;

	for (unsigned i = 0; i < c->n; i++)
		if (c->v[i].maxrss_kb > rss)
			rss = c->v[i].maxrss_kb;
	return rss;
}

/* Runs that emptied the subtree with nothing found outside it. */
static unsigned count_contained(const struct cell *c)
{
	unsigned n = 0;

	for (unsigned i = 0; i < c->n; i++)
		n += c->v[i].emptied && !c->v[i].escaped;
	return n;
}

static FILE *md;

static void out(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(md, fmt, ap);
	va_end(ap);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

/* Tails of the time to empty; a run that did not empty counts as the
 * slowest (it is the worst a user met). Nearest-rank percentiles. */
struct tail {
	unsigned n, emptied, over2, contained;
	double med, p90, p99, worst;	/* < 0: a run that did not empty */
};

static double rank(const double *v, unsigned n, double q)
{
	unsigned k = (unsigned)(q * n + 0.999999);

	return v[(k ? k : 1) - 1];
}

static void tail_of(const struct cell *c, struct tail *t)
{
	double v[MAX_RUNS];

	*t = (struct tail){ .n = c->n };
	for (unsigned i = 0; i < c->n; i++) {
		v[i] = c->v[i].emptied ? c->v[i].empty_ms : INFINITY;
		t->emptied += c->v[i].emptied;
		t->over2 += c->v[i].stalled || !c->v[i].emptied;
	}
	t->contained = count_contained(c);
	if (!c->n)
		return;
	qsort(v, c->n, sizeof(v[0]), cmp_double);
	t->med = c->n % 2 ? v[c->n / 2] : (v[c->n / 2 - 1] + v[c->n / 2]) / 2;
	t->p90 = rank(v, c->n, 0.90);
	t->p99 = rank(v, c->n, 0.99);
	t->worst = v[c->n - 1];
}

static void ms_cell(char *buf, size_t size, double ms)
{
	if (isinf(ms))
		snprintf(buf, size, "> %u s", deadline_s);
	else
		snprintf(buf, size, "%.1f", ms);
}

/* The rows users meet: tails, and each against the floor's of the same runs. */
static void print_plain_table(const struct workload *w, struct cell *cs)
{
	struct tail fl;

	tail_of(&cs[0], &fl);
	out("\n### %s\n\n", w->title);
	out("| contender | runs | median ms | p90 | p99 | worst | over 2 s | × floor median | p99 × floor p99 | p99 × floor median | CPU ms | emptied | contained |\n");
	out("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
	for (size_t i = 0; i < N_CONTENDERS; i++) {
		struct tail t;
		char m[32], a[32], b[32], c[32];

		if (!cs[i].n)
			continue;
		tail_of(&cs[i], &t);
		ms_cell(m, sizeof(m), t.med);
		ms_cell(a, sizeof(a), t.p90);
		ms_cell(b, sizeof(b), t.p99);
		ms_cell(c, sizeof(c), t.worst);
		out("| %s | %u | %s | %s | %s | %s | %u | %.2f | %.2f | %.2f | %.1f | %u/%u | %u/%u |\n",
		    contenders[i].name, t.n, m, a, b, c, t.over2, fl.n ? t.med / fl.med : 0,
		    fl.n ? t.p99 / fl.p99 : 0, fl.n ? t.p99 / fl.med : 0,
		    median(&cs[i], offsetof(struct run, cpu_ms), false, NULL, NULL), t.emptied, t.n,
		    t.contained, t.n);
	}
}

static void print_table(const struct workload *w, struct cell *cells)
{
	double floor_med = median(&cells[0], offsetof(struct run, empty_ms), true, NULL, NULL);
	bool bomb = forks(w), mem = w->type == W_MEM;

	if (w->plain) {
		print_plain_table(w, cells);
		return;
	}
	out("\n### %s\n\n", w->title);
	out("| contender | median ms to empty | min–max | × floor | ms to return | CPU ms | peak RSS MiB | emptied |%s%s\n",
	    bomb ? " contained | left (max) |" : "", mem ? " ms to memory freed |" : "");
	out("|---|--:|--:|--:|--:|--:|--:|--:|%s%s\n", bomb ? "--:|--:|" : "", mem ? "--:|" : "");
	for (size_t i = 0; i < N_CONTENDERS; i++) {
		struct cell *c = &cells[i];
		double lo, hi, med, ret, cpu, fr;
		unsigned ok = 0, fails = 0;
		long left = 0;

		if (!c->n)
			continue;
		for (unsigned k = 0; k < c->n; k++) {
			ok += c->v[k].emptied;
			fails += c->v[k].status != 0;
			if (c->v[k].left > left)
				left = c->v[k].left;
		}
		med = median(c, offsetof(struct run, empty_ms), true, &lo, &hi);
		ret = median(c, offsetof(struct run, exit_ms), false, NULL, NULL);
		cpu = median(c, offsetof(struct run, cpu_ms), false, NULL, NULL);
		fr = median(c, offsetof(struct run, freed_ms), true, NULL, NULL);
		if (med < 0)
			out("| %s | – | – | – |", contenders[i].name);
		else
			out("| %s | %.2f | %.2f–%.2f | %.2f |", contenders[i].name, med, lo, hi,
			    floor_med > 0 ? med / floor_med : 0);
		out(" %.2f | %.2f | %.2f | %u/%u%s |", ret, cpu, (double)peak_rss_kb(c) / 1024, ok, c->n,
		    fails ? " ⚠" : "");
		if (bomb)
			out(" %u/%u | %ld |", count_contained(c), c->n, left);
		if (mem)
			out(" %.2f |", fr);
		out("\n");
	}
}

/* ---------------------------------------------------------- the plan */

static struct workload workloads[16];
static unsigned n_workloads;
static unsigned trials;	/* extra fork-bomb containment trials */

static void add(const char *name, enum wtype t, unsigned a, unsigned b, unsigned reps,
		const char *fmt, ...)
{
	struct workload *w = &workloads[n_workloads];
	va_list ap;

	if (!in_list(workload_filter, name))
		return;
	*w = (struct workload){ .type = t, .a = a, .b = b, .reps = reps };
	snprintf(w->name, sizeof(w->name), "%s", name);
	va_start(ap, fmt);
	vsnprintf(w->title, sizeof(w->title), fmt, ap);
	va_end(ap);
	w->procs = t == W_WIDE ? a * b : a;
	n_workloads++;
}

static unsigned bomb_reps;	/* --bomb-reps: runs of the rows users meet */

/* A fork bomb that shares libc with the rest of the system, as users meet
 * it: no cpu cgroup of its own, the contender an ordinary exec. */
static void add_plain(const char *name, enum wtype t, unsigned limit, unsigned reps)
{
	unsigned n = n_workloads;

	add(name, t, limit, 0, reps, "users meet: %s, pids.max %u,%03u, no cpu cgroup, "
	    "contender forked from a SCHED_OTHER nice-0 parent",
	    t == W_SHBOMB ? "bash's `:(){ :|:& };:`" : "a dynamically linked `for (;;) fork();`",
	    limit / 1000, limit % 1000);
	if (n_workloads > n)
		workloads[n].plain = true;
}

static void make_plan(bool full, unsigned reps)
{
	if (full) {
		unsigned r = reps ?: 7;
		/* Runs of a few ms: more of them, so the medians hold still. */
		unsigned fast = reps ?: 11;

		unsigned br = bomb_reps ?: 200;

		/* The headline: bombs that share libc, as users meet them. */
		add_plain("dbomb-3000", W_DBOMB, 3000, br);
		add_plain("shbomb-3000", W_SHBOMB, 3000, br);
		add_plain("dbomb-10000", W_DBOMB, 10000, br);
		add_plain("shbomb-10000", W_SHBOMB, 10000, br);
		add("flat-100", W_FLAT, 100, 0, fast, "flat: 100 sleeping processes in one cgroup");
		add("flat-1000", W_FLAT, 1000, 0, r, "flat: 1,000 sleeping processes in one cgroup");
		add("flat-10000", W_FLAT, 10000, 0, r, "flat: 10,000 sleeping processes in one cgroup");
		add("threads", W_THREADS, 200, 50, r, "threads: 200 processes × 50 threads");
		add("wide", W_WIDE, 1000, 5, r, "wide tree: 1,000 cgroups × 5 processes");
		add("deep", W_DEEP, 100, 0, fast, "deep chain: 100 nested cgroups, a process in each");
		add("bomb", W_BOMB, 5000, 0, r, "favourable: a static fork bomb in a cpu cgroup of "
		    "its own at its pids.max of 5,000 (v1 pids), contender SCHED_FIFO");
		add("stress", W_STRESS, 5000, 0, fast,
		    "stress-ng --fork 4 --fork-max 1000 under pids.max 5,000");
		add("memory", W_MEM, 50, 100, r, "memory: 50 processes × 100 MiB touched");
	} else {
		/* Under 5 minutes on 2 cores, even while the machine is busy:
		 * smaller sizes, the commands only, 5 runs each. */
		unsigned r = reps ?: 5;

		add_plain("dbomb-3000", W_DBOMB, 3000, bomb_reps ?: r);
		add_plain("shbomb-3000", W_SHBOMB, 3000, bomb_reps ?: r);
		add("flat-100", W_FLAT, 100, 0, r, "flat: 100 sleeping processes in one cgroup");
		add("flat-1000", W_FLAT, 1000, 0, r, "flat: 1,000 sleeping processes in one cgroup");
		add("wide", W_WIDE, 50, 5, r, "wide tree: 50 cgroups × 5 processes");
		add("deep", W_DEEP, 50, 0, r, "deep chain: 50 nested cgroups, a process in each");
		add("bomb", W_BOMB, 1000, 0, r, "favourable: a static fork bomb in a cpu cgroup of "
		    "its own at its pids.max of 1,000 (v1 pids), contender SCHED_FIFO");
		add("memory", W_MEM, 5, 50, r, "memory: 5 processes × 50 MiB touched");
	}
}

static struct workload *find_workload(const char *name)
{
	for (unsigned i = 0; i < n_workloads; i++)
		if (strcmp(workloads[i].name, name) == 0)
			return &workloads[i];
	return NULL;
}

static bool is_planned(const char *name)
{
	return find_workload(name) != NULL;
}

static bool have_stress_ng(void)
{
	return system("command -v stress-ng >/dev/null 2>&1") == 0;
}

static struct cell cells[16][N_CONTENDERS];

static void bench_workload(unsigned wi)
{
	const struct workload *w = &workloads[wi];
	const struct contender *list[N_CONTENDERS];
	unsigned n = 0;

	for (size_t i = 0; i < N_CONTENDERS; i++)
		if (applies(&contenders[i], w) && in_list(contender_filter, contenders[i].name) &&
		    !(quick_mode && !contender_filter[0] && contenders[i].kind == C_LIB) &&
		    /* unasked, one running library: freeze, in full runs */
		    !(!contender_filter[0] && contenders[i].kind == C_LIBRUN &&
		      (quick_mode || contenders[i].be != CGK_BACKEND_FREEZE)))
			list[n++] = &contenders[i];
	for (unsigned rep = 0; rep < w->reps && !stop; rep++)
		for (unsigned k = 0; k < n && !stop; k++) {
			const struct contender *c = list[(k + rep) % n];
			struct cell *cell = &cells[wi][c - contenders];
			struct run r;

			if (run_one(w, c, &r, false) < 0 || cell->n >= MAX_RUNS)
				continue;
			cell->v[cell->n++] = r;
			fprintf(stderr, "%-10s %-20s rep %u: empty %s%.2f ms, return %.2f ms, cpu %.2f ms, rss %ld KiB%s%s\n",
				w->name, c->name, rep + 1, r.emptied ? "" : "NOT ", r.empty_ms, r.exit_ms,
				r.cpu_ms, r.maxrss_kb, r.status == -1 ? " (killed: did not return)" :
				r.status ? " (exit status != 0)" : "", r.stalled ? " STALL" : "");
		}
}

static const char *const bomb_backends[3] = { "cgkill -b freeze", "cgkill -b v1-freeze",
					       "cgkill -b loop" };
static struct cell trial_cells[3];	/* containment(), per bomb_backends[] */

/* 100 (FULL) fork-bomb trials for each freezing or looping backend, at
 * the size of the mode's bomb row (--trials N in quick mode: 1,000). */
static void containment(void)
{
	struct workload bomb = { .type = W_BOMB, .a = quick_mode ? 1000 : 5000, .reps = 1 };
	struct cell *tc = trial_cells;

	snprintf(bomb.name, sizeof(bomb.name), "bomb-trial");
	for (unsigned t = 0; t < trials && !stop; t++)
		for (unsigned k = 0; k < 3 && !stop; k++) {
			const struct contender *c = find_contender(bomb_backends[k]);
			struct run r;

			if (!c || !applies(c, &bomb) || run_one(&bomb, c, &r, false) < 0)
				continue;
			tc[k].v[tc[k].n++ % MAX_RUNS] = r;
			if (tc[k].n > MAX_RUNS)
				tc[k].n = MAX_RUNS;
			/* CPU and RSS tell a contender that never ran (a starved
			 * fork, under 1 MiB) from a cgkill that ran and hung. */
			fprintf(stderr, "trial %u %-20s: %s %.2f ms, left %ld, status %d, cpu %.2f ms, rss %ld KiB\n",
				t + 1, c->name, r.emptied ? "contained" : "NOT CONTAINED", r.empty_ms,
				r.left, r.status, r.cpu_ms, r.maxrss_kb);
		}
	out("\n### Fork-bomb containment: %u trials per backend planned (pids.max %u)\n\n", trials,
	    bomb.a);
	out("| contender | trials | contained, 0 left | escaped | exit ≠ 0 | median ms to empty | max ms |\n");
	out("|---|--:|--:|--:|--:|--:|--:|\n");
	for (unsigned k = 0; k < 3; k++) {
		unsigned ok = count_contained(&tc[k]), fails = 0;
		long esc = 0;
		double lo, hi, med;

		if (!tc[k].n)
			continue;
		for (unsigned i = 0; i < tc[k].n; i++) {
			esc += tc[k].v[i].escaped;
			fails += tc[k].v[i].status != 0;
		}
		med = median(&tc[k], offsetof(struct run, empty_ms), true, &lo, &hi);
		out("| %s | %u | %u | %ld | %u | %.2f | %.2f |\n", bomb_backends[k], tc[k].n, ok, esc,
		    fails, med, hi);
	}
}

/* ------------------------------------------------------- the targets */

/* Issue 6's targets, checked against this run's medians, so that a
 * regression shows in the output of every run, not only to someone who
 * reads the tables. A quick run checks them at its smaller sizes. */

#define RSS_LIMIT_MIB 8.0
#define LINEAR_SLACK 1.25	/* CPU may grow 1.25x the process count (noise) */

static unsigned targets_checked, targets_met;

/* met: 1 yes, 0 no, -1 nothing to check (a row for information). */
static void target_row(const char *target, int met, const char *fmt, ...)
{
	char result[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(result, sizeof(result), fmt, ap);
	va_end(ap);
	if (met >= 0) {
		targets_checked++;
		targets_met += (unsigned)met;
	}
	out("| %s | %s | %s |\n", target, result, met < 0 ? "–" : met ? "yes" : "**no**");
}

/* Median time to empty of contender ci on workload wi over the floor's;
 * -1 if either has no run that emptied. */
static double ratio_to_floor(unsigned wi, size_t ci)
{
	double fl = median(&cells[wi][0], offsetof(struct run, empty_ms), true, NULL, NULL);
	double med = median(&cells[wi][ci], offsetof(struct run, empty_ms), true, NULL, NULL);

	return fl > 0 && med >= 0 ? med / fl : -1;
}

static void speed_target(const char *name, double limit)
{
	size_t ci = contender_index(name);
	const char *worst_row = "";
	double worst = 0;
	unsigned rows = 0, not_emptied = 0;
	char target[128];

	for (unsigned wi = 0; wi < n_workloads; wi++) {
		const struct cell *c = &cells[wi][ci];
		double r = ratio_to_floor(wi, ci);

		if (!c->n || !cells[wi][0].n || workloads[wi].plain)
			continue;
		rows++;
		for (unsigned i = 0; i < c->n; i++)
			not_emptied += !c->v[i].emptied;
		if (r > worst) {
			worst = r;
			worst_row = workloads[wi].name;
		}
	}
	if (!rows)
		return;	/* not in this run (quick runs leave the library out) */
	snprintf(target, sizeof(target), "`%s` within %.2f× of the floor", name, limit);
	target_row(target, worst <= limit && !not_emptied, "worst %.2f× (%s) over %u row%s%s",
		   worst, worst_row, rows, rows == 1 ? "" : "s",
		   not_emptied ? "; some runs did not empty" : "");
}

/* Every fork-bomb trial contained with 0 left; the bomb row's runs if no
 * trials ran. */
static void containment_target(void)
{
	const struct workload *bomb = find_workload("bomb");
	bool from_trials = trial_cells[0].n || trial_cells[1].n || trial_cells[2].n;
	char result[256] = "";
	size_t len = 0;
	bool all = true;

	for (unsigned k = 0; k < 3 && (from_trials || bomb); k++) {
		const struct contender *c = find_contender(bomb_backends[k]);
		const struct cell *cell = from_trials ? &trial_cells[k] :
					  &cells[bomb - workloads][c - contenders];
		unsigned ok = count_contained(cell);

		if (!cell->n)
			continue;
		all = all && ok == cell->n;
		len += (size_t)snprintf(result + len, sizeof(result) - len, "%s%s %u/%u",
					len ? ", " : "", cgk_backend_name(c->be), ok, cell->n);
	}
	if (!len)
		target_row("every fork bomb contained, 0 left", -1, "not run");
	else
		target_row("every fork bomb contained, 0 left", all, "%s (%s)", result,
			   from_trials ? "containment trials" : "bomb row");
}

/* Peak RSS of the command at the largest flat row, and its CPU from the
 * smallest to the largest: at most proportional to the processes. */
static void resource_targets(void)
{
	char rss_text[256] = "", cpu_text[256] = "", target[128];
	size_t rss_len = 0, cpu_len = 0;
	int lo = -1, hi = -1;
	bool rss_ok = true, cpu_ok = true;

	for (unsigned wi = 0; wi < n_workloads; wi++) {
		if (workloads[wi].type != W_FLAT || !cells[wi][0].n)
			continue;
		if (lo < 0 || workloads[wi].procs < workloads[lo].procs)
			lo = (int)wi;
		if (hi < 0 || workloads[wi].procs > workloads[hi].procs)
			hi = (int)wi;
	}
	snprintf(target, sizeof(target), "peak RSS under %.0f MiB", RSS_LIMIT_MIB);
	if (hi < 0) {
		target_row(target, -1, "no flat row run");
		return;
	}
	for (size_t ci = 0; ci < N_CONTENDERS; ci++) {
		const struct cell *big = &cells[hi][ci], *small = &cells[lo][ci];
		const char *be = cgk_backend_name(contenders[ci].be);
		long rss = peak_rss_kb(big);

		if (contenders[ci].kind != C_CMD || !big->n)
			continue;
		rss_ok = rss_ok && rss < RSS_LIMIT_MIB * 1024;
		rss_len += (size_t)snprintf(rss_text + rss_len, sizeof(rss_text) - rss_len, "%s%s %.2f",
					    rss_len ? ", " : "", be, (double)rss / 1024);
		if (lo != hi && small->n) {
			double growth = median(big, offsetof(struct run, cpu_ms), false, NULL, NULL) /
					median(small, offsetof(struct run, cpu_ms), false, NULL, NULL);

			cpu_ok = cpu_ok && growth <= LINEAR_SLACK * workloads[hi].procs / workloads[lo].procs;
			cpu_len += (size_t)snprintf(cpu_text + cpu_len, sizeof(cpu_text) - cpu_len,
						    "%s%s %.1f×", cpu_len ? ", " : "", be, growth);
		}
	}
	target_row(target, rss_len ? rss_ok : -1, "at %u processes: %s MiB", workloads[hi].procs,
		   rss_len ? rss_text : "not run");
	if (lo == hi)
		target_row("CPU grows at most linearly", -1, "needs two flat rows");
	else
		target_row("CPU grows at most linearly", cpu_len ? cpu_ok : -1,
			   "%u → %u processes (%u×): %s", workloads[lo].procs, workloads[hi].procs,
			   workloads[hi].procs / workloads[lo].procs, cpu_len ? cpu_text : "not run");
}

/* What people use today: how much slower, and how often a bomb got away. */
static void peer_row(const char *name)
{
	size_t ci = contender_index(name);
	double lo = 0, hi = 0;
	unsigned rows = 0, bomb_runs = 0, bomb_ok = 0;
	char target[128], bombs[96];

	for (unsigned wi = 0; wi < n_workloads; wi++) {
		const struct cell *c = &cells[wi][ci];
		double r = ratio_to_floor(wi, ci);

		if (forks(&workloads[wi])) {
			bomb_runs += c->n;
			bomb_ok += count_contained(c);
		}
		if (r < 0)
			continue;
		lo = rows && lo < r ? lo : r;
		hi = hi > r ? hi : r;
		rows++;
	}
	if (!rows)
		return;
	snprintf(target, sizeof(target), "`%s`, for comparison", name);
	snprintf(bombs, sizeof(bombs), "; fork bombs contained in %u of %u runs", bomb_ok, bomb_runs);
	target_row(target, -1, "%.2f–%.2f× the floor over %u row%s%s", lo, hi, rows,
		   rows == 1 ? "" : "s", bomb_runs ? bombs : "");
}

/* Issue 15's targets for the rows users meet, per backend over every such
 * row: median and 99th percentile against the floor's of the same runs,
 * and no run over 2 s. */
static void plain_target(const char *name, double med_limit, double p99_limit)
{
	size_t ci = contender_index(name);
	double worst_med = 0, worst_p99 = 0;
	const char *med_row = "", *p99_row = "";
	unsigned rows = 0, runs = 0, over = 0;
	char target[160];

	for (unsigned wi = 0; wi < n_workloads; wi++) {
		struct tail t, fl;

		if (!workloads[wi].plain || !cells[wi][ci].n || !cells[wi][0].n)
			continue;
		tail_of(&cells[wi][ci], &t);
		tail_of(&cells[wi][0], &fl);
		rows++;
		runs += t.n;
		over += t.over2;
		if (t.med / fl.med > worst_med) {
			worst_med = t.med / fl.med;
			med_row = workloads[wi].name;
		}
		if (t.p99 / fl.p99 > worst_p99) {
			worst_p99 = t.p99 / fl.p99;
			p99_row = workloads[wi].name;
		}
	}
	if (!rows)
		return;
	snprintf(target, sizeof(target), "`%s` beside libc-sharing bombs: median ≤ %.1f×, p99 ≤ %.0f×, "
		 "none over 2 s", name, med_limit, p99_limit);
	target_row(target, worst_med <= med_limit && worst_p99 <= p99_limit && !over,
		   "median %.2f× (%s), p99 %.2f× (%s), %u of %u runs over 2 s, %u row%s", worst_med,
		   med_row, worst_p99, p99_row, over, runs, rows, rows == 1 ? "" : "s");
}

/* The floor's own tail in those runs, for the reader: no target. */
static void floor_tail_row(void)
{
	for (unsigned wi = 0; wi < n_workloads; wi++) {
		struct tail fl;
		char row[80];

		if (!workloads[wi].plain || !cells[wi][0].n)
			continue;
		tail_of(&cells[wi][0], &fl);
		snprintf(row, sizeof(row), "the floor's own tail, %s", workloads[wi].name);
		target_row(row, -1, "median %.1f ms, p90 %.1f, p99 %.1f, worst %.1f; %u of %u over 2 s",
			   fl.med, fl.p90, fl.p99, fl.worst, fl.over2, fl.n);
	}
}

static void check_targets(void)
{
	out("\n### Against the targets (issue 6: medians of the other rows; issue 15: the rows users meet)\n\n");
	out("| target | this run | met? |\n|---|---|---|\n");
	speed_target("cgkill -b kernel", 1.05);
	speed_target("cgkill -b freeze", 1.5);
	speed_target("cgkill -b v1-freeze", 2.0);
	speed_target("cgkill -b loop", 2.0);
	speed_target("lib freeze", 1.5);
	speed_target("lib v1-freeze", 2.0);
	speed_target("lib loop", 2.0);
	plain_target("cgkill -b kernel", 1.1, 3);
	plain_target("cgkill -b freeze", 1.5, 3);
	plain_target("cgkill -b v1-freeze", 1.5, 3);
	plain_target("cgkill -b loop", 1.5, 3);
	floor_tail_row();
	containment_target();
	resource_targets();
	peer_row("shell loop");
	peer_row("pkill --cgroup");
	out("\n%u of %u targets met in this run (ratios within about ±0.15 of each other\n"
	    "are noise on a small machine: see bench/RESULTS.md)\n", targets_met, targets_checked);
	if (targets_met < targets_checked)
		out("A ratio a little over its limit wants more runs of that row before it is\n"
		    "called a miss: make bench ARGS=\"--only ROW --reps 21\" (FULL=1 for the full sizes).\n");
}

static void write_dat(const char *path)
{
	FILE *f = fopen(path, "we");
	unsigned blocks = 0;

	if (!f)
		die("%s: %m", path);
	fprintf(f, "# time to empty (ms) against process count, flat workloads; one block per contender\n");
	for (size_t i = 0; i < N_CONTENDERS; i++) {
		bool any = false;

		for (unsigned wi = 0; wi < n_workloads; wi++) {
			double lo, hi, med;

			if (workloads[wi].type != W_FLAT || !cells[wi][i].n)
				continue;
			med = median(&cells[wi][i], offsetof(struct run, empty_ms), true, &lo, &hi);
			if (med < 0)
				continue;
			if (!any)
				fprintf(f, "%s\"%s\" median min max\n", blocks++ ? "\n\n" : "",
					contenders[i].name);
			any = true;
			fprintf(f, "%u %.3f %.3f %.3f\n", workloads[wi].procs, med, lo, hi);
		}
	}
	fclose(f);
}

static void machine(void)
{
	char buf[4096], model[256] = "?";
	struct utsname u;
	long long memkb = 0;
	FILE *f = fopen("/proc/cpuinfo", "re");
	time_t t = time(NULL);

	while (f && fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "model name : %255[^\n]", model) == 1)
			break;
	if (f)
		fclose(f);
	f = fopen("/proc/meminfo", "re");
	while (f && fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "MemTotal: %lld kB", &memkb) == 1)
			break;
	if (f)
		fclose(f);
	uname(&u);
	strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M %Z", localtime(&t));
	out("- date: %s\n- machine: %ld CPUs, %s, %.1f GiB RAM\n- kernel: %s %s\n", buf,
	    sysconf(_SC_NPROCESSORS_ONLN), model, (double)memkb / 1048576, u.sysname, u.release);
	if (read_small("/proc/loadavg", buf, sizeof(buf)) > 0)
		out("- load average at start: %s", buf);
}

/* ------------------------------------------------------- entry points */

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static struct {
	bool full;
	unsigned reps;
	const char *resdir;
	const char *hold;
	int hold_hier;
} cfg = { .resdir = "bench/results", .hold_hier = H_V2 };

/* Inside the new pid namespace, as its pid 1. */
static int inner(void)
{
	char stamp[64], mdpath[PATH_MAX], datpath[PATH_MAX], latest[PATH_MAX];
	time_t t = time(NULL);
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		die("cannot mount a private /proc: %m");
	/* The harness and every contender it forks get a high cpu weight, as
	 * a service manager gives its killer: a freshly forked contender must
	 * not wait for a CPU behind a bomb before it can even exec. */
	if (bomb_cpu && top[H_CPU][0]) {
		struct sched_param fifo = { .sched_priority = 1 };
		char dir[PATH_MAX];

		snprintf(dir, sizeof(dir), "%s/harness", top[H_CPU]);
		if ((mkdir(dir, 0755) == 0 || errno == EEXIST) &&
		    (write_at(dir, "cpu.shares", "262144") < 0 || write_at(dir, "cgroup.procs", "0") < 0))
			fprintf(stderr, "bench: no high cpu weight for the harness: %m\n");
		/* Real-time priority too: with the weight alone a contender
		 * once went unscheduled for 60 s before its exec, and the
		 * watcher must read populated 0 when it happens. The group
		 * needs a real-time budget of its own first. */
		write_at(top[H_CPU], "cpu.rt_runtime_us", "900000");
		write_at(dir, "cpu.rt_runtime_us", "900000");
		realtime = sched_setscheduler(0, SCHED_FIFO, &fifo) == 0;
		if (!realtime)
			fprintf(stderr, "bench: no real-time priority for the harness: %m\n");
	}

	if (cfg.hold) {
		struct workload *w = find_workload(cfg.hold);
		struct run r;
		const struct contender *c = &contenders[0];

		if (!w)
			die("no workload %s", cfg.hold);
		for (size_t i = 0; i < N_CONTENDERS; i++)
			if (contenders[i].hier == cfg.hold_hier)
				c = &contenders[i];
		return run_one(w, c, &r, true) < 0;
	}

	strftime(stamp, sizeof(stamp), "%Y-%m-%d-%H%M%S", localtime(&t));
	mkdir(cfg.resdir, 0755);
	snprintf(mdpath, sizeof(mdpath), "%s/%s-%s.md", cfg.resdir, stamp, cfg.full ? "full" : "quick");
	snprintf(datpath, sizeof(datpath), "%s/%s-%s.dat", cfg.resdir, stamp, cfg.full ? "full" : "quick");
	md = fopen(mdpath, "we");
	if (!md)
		die("%s: %m", mdpath);
	{
		char sp[PATH_MAX];

		snprintf(sp, sizeof(sp), "%s/%s-%s-stalls.txt", cfg.resdir, stamp, cfg.full ? "full" : "quick");
		stall_log = fopen(sp, "we");
	}
	out("## cgkill benchmark (%s mode)\n\n", cfg.full ? "full" : "quick");
	machine();
	out("- runs: median of %u per contender and workload, contenders interleaved\n",
	    n_workloads ? workloads[0].reps : 0);
	out("- time to empty: from the contender's start (fork) until our watcher reads `populated 0`\n"
	    "  in the workload's v2 `cgroup.events` (re-read on every notification and every 0.25 ms);\n"
	    "  for v1 contenders the v1 process lists were checked empty at that moment too\n");
	out("- scheduling: %s\n", realtime ?
	    "the harness runs SCHED_FIFO 1, and so do the contenders of the bomb and stress-ng rows;\n"
	    "  workloads and the other rows' contenders run SCHED_OTHER" :
	    "everything SCHED_OTHER (no real-time budget for the harness)");
	out("- rows users meet (\"users meet\"): the bomb has no cpu cgroup of its own and runs\n"
	    "  SCHED_OTHER nice 0 beside the machine's processes; each contender, the floor too,\n"
	    "  is forked by an ordinary process (SCHED_OTHER, nice 0, the machine's cpu cgroup)\n"
	    "  and exec'd; a run not empty after 2 s is a stall, logged with stacks in *-stalls.txt\n");

	for (unsigned wi = 0; wi < n_workloads && !stop; wi++) {
		if (workloads[wi].type == W_STRESS && !have_stress_ng()) {
			out("\n### %s\n\nskipped: stress-ng is not installed\n", workloads[wi].title);
			continue;
		}
		fprintf(stderr, "== %s\n", workloads[wi].title);
		bench_workload(wi);
		print_table(&workloads[wi], cells[wi]);
	}
	if (trials && !stop && in_list(workload_filter, "bomb"))
		containment();
	if (!stop)
		check_targets();
	{
		char buf[256];

		if (read_small("/proc/loadavg", buf, sizeof(buf)) > 0)
			out("\n- load average at the end: %s", buf);
	}
	fclose(md);
	write_dat(datpath);
	snprintf(latest, sizeof(latest), "%s/latest-%s.dat", cfg.resdir, cfg.full ? "full" : "quick");
	unlink(latest);
	if (symlink(strrchr(datpath, '/') + 1, latest) < 0)
		fprintf(stderr, "bench: symlink %s: %m\n", latest);
	fprintf(stderr, "bench: wrote %s and %s\n", mdpath, datpath);
	return stop ? 1 : 0;
}

static pid_t child;

static void forward(int sig)
{
	if (child > 0)
		kill(child, sig == SIGINT || sig == SIGTERM ? SIGTERM : sig);
}

/* Remove the sandbox: thaw, kill what is there, rmdir bottom-up. */
static void sandbox_cleanup(void)
{
	char ev[PATH_MAX];
	int evfd;
	uint64_t deadline = now_ns() + 30000000000ULL;

	for (int h = 0; h < H_N; h++)
		if (top[h][0])
			walk(top[h], false, thaw_visit, NULL);
	snprintf(ev, sizeof(ev), "%s/cgroup.events", top[H_V2]);
	evfd = open(ev, O_RDONLY | O_CLOEXEC);
	while (evfd >= 0 && populated(evfd) == 1 && now_ns() < deadline) {
		write_at(top[H_V2], "cgroup.kill", "1");
		for (int h = 0; h < H_N; h++)
			if (top[h][0])
				walk(top[h], false, thaw_visit, NULL);
		sleep_ms(50);
	}
	if (evfd >= 0)
		close(evfd);
	for (int h = H_N - 1; h >= 0; h--)
		if (top[h][0])
			walk(top[h], true, rmdir_visit, NULL);
}

static int find_bomb(void)
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

static void usage(void)
{
	fputs("usage: bench [--full] [--reps N] [--trials N] [--only W,...] [--contenders C,...]\n"
	      "             [--no-bomb-cpu] [--cgkill PATH] [--cgkill2 PATH] [--cgkill3 PATH] [--floor PATH] [--shell-loop PATH] [--results DIR]\n"
	      "             [--bomb-reps N] [--deadline SECONDS] [--cgkill3 PATH] [--unboosted[=2,3]]\n"
	      "       bench --hold WORKLOAD [--hier v2|freezer|pids]\n"
	      "workloads: dbomb-3000 shbomb-3000 dbomb-10000 shbomb-10000 (the rows users meet),\n"
	      "           flat-100 flat-1000 flat-10000 threads wide deep bomb stress memory\n",
	      stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "full", no_argument, NULL, 'F' },
		{ "reps", required_argument, NULL, 'r' },
		{ "trials", required_argument, NULL, 't' },
		{ "only", required_argument, NULL, 'o' },
		{ "contenders", required_argument, NULL, 'c' },
		{ "cgkill", required_argument, NULL, 'k' },
		{ "floor", required_argument, NULL, 'f' },
		{ "shell-loop", required_argument, NULL, 's' },
		{ "results", required_argument, NULL, 'R' },
		{ "hold", required_argument, NULL, 'H' },
		{ "hier", required_argument, NULL, 'h' },
		{ "no-bomb-cpu", no_argument, NULL, 'C' },
		{ "cgkill2", required_argument, NULL, '2' },
		{ "bomb-reps", required_argument, NULL, 'B' },
		{ "cgkill3", required_argument, NULL, '3' },
		{ "unboosted", optional_argument, NULL, 'U' },
		{ "deadline", required_argument, NULL, 'D' },
		{ NULL, 0, NULL, 0 },
	};
	struct sigaction sa = { .sa_handler = forward };
	struct rlimit nofile = { 65536, 65536 };
	int opt, status = 0;
	bool trials_set = false;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'F': cfg.full = true; break;
		case 'r': cfg.reps = (unsigned)atoi(optarg); break;
		case 't': trials = (unsigned)atoi(optarg); trials_set = true; break;
		case 'o': snprintf(workload_filter, sizeof(workload_filter), "%s", optarg); break;
		case 'c': snprintf(contender_filter, sizeof(contender_filter), "%s", optarg); break;
		case 'k': cgkill_path = optarg; break;
		case 'f': floor_path = optarg; break;
		case 's': shell_path = optarg; break;
		case 'R': cfg.resdir = optarg; break;
		case 'H': cfg.hold = optarg; break;
		case 'C': bomb_cpu = false; break;
		case '2': cgkill2_path = optarg; break;
		case '3': cgkill3_path = optarg; break;
		case 'U': unboosted = !optarg ? 2 : (strchr(optarg, '2') ? 2 : 0) | (strchr(optarg, '3') ? 4 : 0); break;
		case 'B': bomb_reps = (unsigned)atoi(optarg); break;
		case 'D': deadline_s = (unsigned)atoi(optarg) ?: 60; break;
		case 'h':
			for (int h = 0; h < H_PIDS + 1; h++)
				if (strcmp(optarg, hname[h]) == 0)
					cfg.hold_hier = h;
			break;
		default: usage();
		}
	}
	if (optind != argc)
		usage();
	if (geteuid() != 0)
		die("must run as root (it creates cgroups and kills inside them)");
	if (find_bomb() < 0)
		die("%s or %s: no fork bomb program (make -C bench builds them): %m", bomb_exe, dbomb_exe);
	if (cfg.reps > MAX_RUNS)
		cfg.reps = MAX_RUNS;
	if (trials > MAX_RUNS)
		trials = MAX_RUNS;
	if (bomb_reps > MAX_RUNS)
		bomb_reps = MAX_RUNS;
	snprintf(floor_static_path, sizeof(floor_static_path), "%s-static", floor_path);
	if (access(floor_static_path, X_OK) < 0)
		die("%s: no static floor (make -C bench builds it): %m", floor_static_path);
	quick_mode = !cfg.full;
	check_list(contender_filter, "contender", is_contender);
	make_plan(cfg.full || cfg.hold, cfg.reps);
	if (!cfg.hold) {
		check_list(workload_filter, cfg.full ? "workload" : "workload in a quick run",
			   is_planned);
	} else if (!find_workload(cfg.hold)) {
		/* hold any workload of either size */
		n_workloads = 0;
		make_plan(false, 1);
	}
	if (!trials_set)
		trials = cfg.full ? 100 : 0;

	find_mounts();
	if (!mnt[H_V2][0] || access(mnt[H_V2], W_OK) < 0)
		die("no writable cgroup v2 mount");
	if (mnt[H_CPU][0]) {
		char own[PATH_MAX];

		own_cgroup(hctl[H_CPU], own, sizeof(own));
		snprintf(cpu_home, sizeof(cpu_home), "%s%s", mnt[H_CPU], strcmp(own, "/") ? own : "");
	}
	for (int h = 0; h < H_N; h++) {
		char own[PATH_MAX] = "";

		if (!mnt[h][0])
			continue;
		if (h != H_V2)
			own_cgroup(hctl[h], own, sizeof(own));
		snprintf(top[h], PATH_MAX, "%s%s/cgkill-bench.%d", mnt[h],
			 strcmp(own, "/") ? own : "", getpid());
		if (mkdir(top[h], 0755) < 0) {
			fprintf(stderr, "bench: mkdir %s: %m; %s hierarchy not used\n", top[h], hname[h]);
			top[h][0] = mnt[h][0] = '\0';
		}
	}
	if (!top[H_PIDS][0])
		fprintf(stderr, "bench: no v1 pids hierarchy: fork-bomb rows skipped\n");
	setrlimit(RLIMIT_NOFILE, &nofile);
	fflush(NULL);

	if (unshare(CLONE_NEWPID | CLONE_NEWNS) < 0) {
		sandbox_cleanup();
		die("unshare(CLONE_NEWPID|CLONE_NEWNS): %m");
	}
	child = fork();
	if (child < 0) {
		sandbox_cleanup();
		die("fork: %m");
	}
	if (child == 0)
		_exit(inner());
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	/* The namespace is gone with its pid 1, and every process in it. */
	sandbox_cleanup();
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
