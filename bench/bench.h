/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgkill benchmark driver: what its modules share.
 *
 *	bench.c		main(), the options, the loop over workloads and runs
 *	util.c		the clock, dying, small files, walking a cgroup subtree
 *	sandbox.c	the cgroup hierarchies, the sandbox, each run's cgroups
 *	workloads.c	the process trees and fork bombs, and the plan of rows
 *	contenders.c	floor, command, library, shell loop, pkill: how each runs
 *	run.c		one timed run, watched until the subtree is empty
 *	report.c	statistics, the tables, the chart data
 *	targets.c	this run's medians against the issues' targets
 */
#ifndef BENCH_H
#define BENCH_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "cgkill.h"
#include "populated.h"

#define RUN_DEADLINE_NS (60ULL * 1000000000)	/* one timed kill, at most */
#define GRACE_NS (5ULL * 1000000000)	/* after a contender returns */
#define WATCH_NS 250000			/* watcher re-reads every 0.25 ms */
#define MAX_RUNS 256
#define STALL_NS (2ULL * 1000000000)	/* a run over 2 s is a stall */
#define MAX_WORKLOADS 16
#define N_CONTENDERS 25		/* entries of contenders[] (checked there) */

/* ---- util.c ---- */
uint64_t now_ns(void);
void sleep_ms(unsigned ms);
__attribute__((format(printf, 1, 2), noreturn)) void die(const char *fmt, ...);
int write_file(const char *path, const char *text);
int write_at(const char *dir, const char *name, const char *text);
/* Small pseudo-file into buf; -errno or length. */
ssize_t read_small(const char *path, char *buf, size_t size);
long long read_num(const char *dir, const char *name);
/* Processes in dir and every cgroup below it. */
long count_tree(const char *dir);
/* Call fn on dir and every directory below it; children first if post. */
typedef void (*walk_fn)(const char *dir, void *arg);
void walk(const char *dir, bool post, walk_fn fn, void *arg);

/* ---- sandbox.c ---- */
enum { H_V2, H_FRZ, H_PIDS, H_MEM, H_CPU, H_N };
extern const char *const hname[H_N];
extern char mnt[H_N][PATH_MAX];	/* mount points, "" if missing */
extern char top[H_N][PATH_MAX];	/* sandbox tops */
extern char cpu_home[PATH_MAX];	/* our v1 cpu cgroup before the harness moved */
/* Mounts, and a sandbox top in every hierarchy there is; dies without v2. */
void sandbox_setup(void);
void sandbox_cleanup(void);
/* The harness's high cpu weight and SCHED_FIFO: true if real-time. */
bool harness_priority(void);

/* The spec of one run: which hierarchies hold the tree. */
struct plan {
	const struct workload *w;
	char dir[H_N][PATH_MAX];	/* workload top per hierarchy, "" unused */
	bool tree[H_N];		/* structure built in this hierarchy */
	int readyfd;
};

/* A run's cgroups, and their removal with all that is in them. */
void mkdir_tree(const struct plan *p, int h);
void run_cleanup(struct plan *p);

/* ---- workloads.c ---- */
/* W_BOMB: the static bomb (bomb.c); W_DBOMB: the same source linked
 * dynamically, so it shares libc with everything else; W_SHBOMB: bash's
 * own :(){ :|:& };: */
enum wtype { W_FLAT, W_THREADS, W_WIDE, W_DEEP, W_BOMB, W_STRESS, W_MEM, W_DBOMB, W_SHBOMB };

struct workload {
	char name[64];
	char title[256];
	enum wtype type;
	unsigned a, b;	/* sizes: see rows[] (workloads.c) */
	unsigned reps;
	unsigned procs;	/* processes (chart x axis) */
	/* The moment users meet: no cpu cgroup for the bomb, the contender
	 * forked from a SCHED_OTHER nice-0 parent and exec'd fresh. */
	bool plain;
};

extern struct workload workloads[MAX_WORKLOADS];
extern unsigned n_workloads;
extern char bomb_exe[PATH_MAX], dbomb_exe[PATH_MAX];

bool is_bomb(const struct workload *w);
/* The fork bombs and stress-ng: workloads that fork all the time. */
bool forks(const struct workload *w);
void sched_other(void);
void ordinary(void);
__attribute__((noreturn)) void spawner(const struct plan *p);
unsigned expected(const struct workload *w);
int wait_ready(const struct plan *p, unsigned want);
int find_bomb(void);
void make_plan(bool full, unsigned reps);
struct workload *find_workload(const char *name);
bool is_planned(const char *name);
bool have_stress_ng(void);

/* ---- contenders.c ---- */
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

/* What a launcher or a running library tells the harness: the pid that
 * works, and the moment it was started or called (CLOCK_MONOTONIC). */
struct started {
	pid_t pid;
	uint64_t t0;
};

extern const struct contender contenders[];

bool applies(const struct contender *c, const struct workload *w);
bool in_list(const char *list, const char *name);
void check_list(const char *list, const char *what, bool (*known)(const char *));
const struct contender *find_contender(const char *name);
size_t contender_index(const char *name);
bool is_contender(const char *name);
/* The library contender's options, made before the clock starts; NULL for
 * every other kind. */
cgk_options *lib_options(const struct contender *c);
__attribute__((noreturn)) void exec_contender(const struct contender *c, const char *target,
					      const char *v2rel, const cgk_options *lib_opts);
__attribute__((noreturn)) void lib_running(const struct contender *c, const char *target,
					   int gofd, int pidfd);
__attribute__((noreturn)) void launcher(const struct contender *c, const char *target, int gofd,
					int pidfd);

/* ---- run.c ---- */
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

extern FILE *stall_log;
int run_one(const struct workload *w, const struct contender *c, struct run *out, bool hold);

/* ---- report.c ---- */
struct cell {
	unsigned n;
	struct run v[MAX_RUNS];
};

/* Tails of the time to empty; a run that did not empty counts as the
 * slowest (it is the worst a user met). Nearest-rank percentiles. */
struct tail {
	unsigned n, emptied, over2, contained;
	double med, p90, p99, worst;	/* < 0: a run that did not empty */
};

extern struct cell cells[MAX_WORKLOADS][N_CONTENDERS];
extern const char *const bomb_backends[3];
extern struct cell trial_cells[3];	/* containment(), per bomb_backends[] */

double median(const struct cell *c, size_t off, bool only_ok, double *min, double *max);
long peak_rss_kb(const struct cell *c);
unsigned count_contained(const struct cell *c);
void tail_of(const struct cell *c, struct tail *t);
/* To the results file and to stdout. */
__attribute__((format(printf, 1, 2))) void out(const char *fmt, ...);
void report_begin(const char *path, bool full, bool realtime);
void report_end(void);
void print_table(const struct workload *w, struct cell *cs);
void print_containment(unsigned planned, unsigned limit);
void write_dat(const char *path);

/* ---- targets.c ---- */
void check_targets(void);

/* ---- bench.c: the options ---- */
extern volatile sig_atomic_t stop;
extern bool quick_mode;
extern bool bomb_cpu;
extern unsigned deadline_s;	/* --deadline: of a run of the rows users meet */
extern unsigned bomb_reps;	/* --bomb-reps: runs of the rows users meet */
extern unsigned unboosted;	/* --unboosted=2,3: those builds run without CAP_SYS_NICE */
extern const char *cgkill_path, *cgkill2_path, *cgkill3_path, *floor_path, *shell_path;
extern char floor_static_path[PATH_MAX];	/* floor-static beside floor_path */
extern char workload_filter[1024], contender_filter[1024];

#endif
