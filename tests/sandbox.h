/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Sandbox cgroups for the tests, which kill real processes.
 *
 * Every cgroup a test touches is created below <mount>/cgkill-test.<pid>.<n>
 * on the v2 mount or on a v1 hierarchy, and removed again: by sb_destroy(),
 * by an atexit handler, and, if the test dies or hangs, by a watchdog
 * process started by sb_init() that kills the test after its time limit and
 * sweeps whatever cgkill-test.<pid>.* directories are left.
 *
 * Processes are spawned into sandbox cgroups with a behaviour (sleep, fork
 * bomb, migrate loop, ...). The test process is a child subreaper, so that
 * orphans of a killed tree come back to it; sb_reap() collects them and
 * remembers how the tracked processes ended.
 */
#ifndef CGK_SANDBOX_H
#define CGK_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum sb_hier {
	SB_V2,		/* the cgroup v2 mount */
	SB_V1_FREEZER,	/* the v1 hierarchy with the freezer controller */
	SB_V1_PIDS,	/* the v1 hierarchy with the pids controller */
	SB_HIER_COUNT_
};

/* Start the watchdog (time limit in seconds; $CGKILL_TEST_TIMEOUT overrides),
 * become a child subreaper, find the cgroup mounts. Call first in main(). */
void sb_init(unsigned timeout_s);
/* skip_all() unless running as root. */
void sb_require_root(void);
/* Mount point of a hierarchy, or NULL if there is none on this machine. */
const char *sb_mount(enum sb_hier h);
const char *sb_hier_name(enum sb_hier h);
/* Version (1 or 2) of the hierarchy that holds path, 0 if unknown. */
int sb_version_of(const char *path);

/* Create a fresh sandbox <mount>/cgkill-test.<pid>.<n>: a malloc'ed path, or
 * NULL with errno set. Registered for cleanup at exit. */
char *sb_create(enum sb_hier h);
/* mkdir -p base/rel ("A/B/C"): a malloc'ed path, or NULL with errno set. */
char *sb_mkdir(const char *base, const char *rel);
/* base/rel as a malloc'ed string (no mkdir). */
char *sb_path(const char *base, const char *rel);
/* Kill everything in the subtree, thaw it, rmdir it bottom-up (bounded).
 * 0, or -errno if something could not be removed. */
int sb_destroy(const char *path);
/* Destroy every sandbox created by sb_create() (also run at exit). */
void sb_cleanup_all(void);

/* Small file helpers on cgroup files: 0 or -errno; sb_read returns the
 * length read (to EOF, NUL-terminated, truncated to size-1). */
int sb_write(const char *dir, const char *file, const char *text);
ssize_t sb_read(const char *dir, const char *file, char *buf, size_t size);
/* Move the calling process into dir (writes "0" to cgroup.procs). */
int sb_join(const char *dir);
/* Processes listed in dir (or in its whole subtree), 0 entries included;
 * -errno on error. */
int sb_count(const char *dir, bool recursive);
/* Is pid listed in the cgroup.procs of dir? */
bool sb_member(const char *dir, pid_t pid);

enum sb_behaviour {
	SB_SLEEP,	/* pause() until killed */
	SB_FORKBOMB,	/* fork without end, children too; needs a pids limit */
	SB_MIGRATE,	/* move itself between migrate[0] and migrate[1] */
	SB_IGNORE_TERM,	/* sleep, ignoring SIGTERM */
	SB_EXIT_ON_TERM,	/* sleep, exit(0) on SIGTERM */
	SB_THREADS,	/* sleep with .threads extra threads */
};

struct sb_proc {
	enum sb_behaviour what;
	/* Cgroup directories to join, in order (a limiter first, the target
	 * last); NULL-terminated. */
	const char *cgroups[4];
	const char *migrate[2];	/* SB_MIGRATE */
	unsigned threads;	/* SB_THREADS */
};

/* Fork a process that joins its cgroups and starts its behaviour; returns
 * once it has joined (or failed): its pid, or -errno. A fork bomb is refused
 * (-EPERM) unless one of its cgroups or an ancestor has pids.max set. */
pid_t sb_spawn(const struct sb_proc *p);
/* A sleeper in one cgroup. */
pid_t sb_sleeper(const char *cgroup);
/* n processes of behaviour what in one cgroup (plus an optional limiter,
 * may be NULL); pids[] gets them. Returns 0 or -errno. */
int sb_spawn_n(unsigned n, enum sb_behaviour what, const char *limiter,
	       const char *cgroup, pid_t *pids);
/* fork() for tests: the child runs with default signal handlers and without
 * the cleanup duties of the parent. */
pid_t sb_fork(void);

/* Collect every exited child (never blocks); remember tracked statuses. */
void sb_reap(void);
/* Alive: not reaped, and kill(pid, 0) works, and not a zombie. */
bool sb_alive(pid_t pid);
/* Wait (bounded) until pid has been reaped; its wait status, or -ETIMEDOUT
 * (-ECHILD if it is not a tracked child). */
int sb_wait_reaped(pid_t pid, unsigned timeout_ms);
/* Did pid end from signal sig (waits up to timeout_ms for the reap)? */
bool sb_killed_by(pid_t pid, int sig, unsigned timeout_ms);

/* Wait until the subtree of dir is empty: v2 by `populated 0` in
 * cgroup.events (poll POLLPRI, re-read after every wakeup), v1 by polling
 * the process lists. 0, or -ETIMEDOUT when the deadline passes. */
int sb_wait_empty(const char *dir, unsigned timeout_ms);
/* Wait until the subtree of dir holds at least n processes. */
int sb_wait_count(const char *dir, unsigned n, unsigned timeout_ms);

/* Sentinels: sleepers in the parent and in a sibling of a target. */
struct sb_sentinels {
	pid_t pid[4];
	const char *where[4];
	unsigned n;
};
/* Start one sleeper in each non-NULL cgroup; 0 or -errno. */
int sb_sentinels_start(struct sb_sentinels *s, const char *parent,
		       const char *sibling);
/* One TAP test point per sentinel: alive. Returns true if all are. */
bool sb_sentinels_check(const struct sb_sentinels *s, const char *scenario);

/* The command under test: $CGKILL, else build/cgkill. */
const char *sb_cgkill(void);

struct sb_cmd {
	int status;		/* wait status; -1 if not collected */
	int exit_code;		/* exit status; -1 if it did not exit */
	bool timed_out;		/* killed after the deadline */
	uint64_t ms;
	char out[16384];	/* standard output (truncated), NUL-terminated */
	char err[16384];	/* standard error (truncated), NUL-terminated */
};
/* Run argv[0] (a path) with argv, stdin from /dev/null, output captured;
 * the child first joins the cgroup join if not NULL. Killed after
 * timeout_ms. 0, or -errno if it could not be run or collected. */
int sb_run(struct sb_cmd *res, const char *join, unsigned timeout_ms,
	   const char *const argv[]);

uint64_t sb_now_ms(void);
void sb_sleep_ms(unsigned ms);

#endif
