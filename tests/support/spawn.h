/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Processes for the tests: forked, moved into sandbox cgroups, set up
 * (signal handlers, threads, a name, a user), and only then handed back
 * (a handshake through a pipe), with a behaviour: sleep, fork bomb,
 * migrate loop. The test process is a child subreaper (sb_init()), so
 * orphans of a killed tree come back to it; sb_reap() collects them and
 * remembers how the tracked processes ended.
 *
 * Every timeout_ms here is an idle machine's time: the wait lasts up to
 * sb_deadline_ms(timeout_ms) (deadline.h), and so does the handshake of
 * sb_spawn() (10 s idle).
 */
#ifndef CGK_TEST_SPAWN_H
#define CGK_TEST_SPAWN_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum sb_behaviour {
	SB_SLEEP,	/* pause() until killed */
	SB_FORKBOMB,	/* fork without end, children too; needs a pids limit */
	SB_MIGRATE,	/* move itself between migrate[0] and migrate[1] */
	SB_IGNORE_TERM,	/* sleep, ignoring SIGTERM */
	SB_EXIT_ON_TERM,	/* sleep, exit(0) on SIGTERM */
	SB_THREADS,	/* sleep with .threads extra threads (4 if 0) */
};

/* The signals a recorder of stray signals catches (.record = REC_STRAY). */
#define REC_STRAY { SIGUSR1, SIGUSR2, SIGTERM, SIGHUP, SIGINT, SIGALRM, 0 }

struct sb_proc {
	enum sb_behaviour what;
	/* Cgroup directories to join, in order (a limiter first, the target
	 * last); NULL-terminated. None: join the directory fd cgroup_fd. */
	const char *cgroups[4];
	int cgroup_fd;
	const char *migrate[2];	/* SB_MIGRATE */
	unsigned threads;	/* extra threads, sleeping */
	/* Signals to catch and record (record.h), 0-terminated; the handler
	 * then exits with status 0, or forks a child that records REC_BORN,
	 * unblocks every signal (so any pending one shows) and sleeps. */
	int record[8];
	bool exit_on_signal, fork_on_signal;
	int ignore[8];		/* signals set to SIG_IGN, 0-terminated */
	/* A handler of the test's own for handler_sig (sigaction flags). */
	int handler_sig, handler_flags;
	void (*handler)(int);
	const char *comm;	/* prctl(PR_SET_NAME) */
	uid_t uid;		/* after joining, become this user and group; 0: stay */
};

/* fork() for tests: the child ignores no signal, takes INT, TERM and HUP by
 * default, and has none of the cleanup duties of the parent. The pid is
 * tracked. */
pid_t sb_fork(void);
/* Fork a process that joins its cgroups and sets itself up; returns once it
 * has (or failed): its pid, or -errno. A fork bomb is refused (-EPERM)
 * unless one of its cgroups or an ancestor has pids.max set. */
pid_t sb_spawn(const struct sb_proc *p);
/* A sleeper in one cgroup (by path, or by an open directory fd). */
pid_t sb_sleeper(const char *cgroup);
pid_t sb_sleeper_at(int cgroup_fd);
/* n processes of behaviour what in one cgroup (plus an optional limiter,
 * may be NULL); pids[] gets them (may be NULL). Returns 0 or -errno. */
int sb_spawn_n(unsigned n, enum sb_behaviour what, const char *limiter,
	       const char *cgroup, pid_t *pids);

/*
 * Run fn in a forked child (sb_fork); it fills out (size bytes, zeroed
 * first), which comes back through a pipe. 0 if the child sent a full
 * result within timeout_ms, else -errno; *status (may be NULL) gets its
 * wait status if it ended, else -1.
 */
typedef void (*child_fn)(void *arg, void *out);
int child_call(child_fn fn, void *arg, void *out, size_t size, unsigned timeout_ms,
	       int *status);

/* Fork the PID 1 of a new pid namespace, with a mount namespace and a /proc
 * of its own (the caller's pid namespace for its children changes: call it
 * in a child, child_call()). Its pid in the caller, 0 in it, where *err is
 * 0 or -errno of the mounts; -errno if it could not be made. */
pid_t pidns_fork(int *err);
/* fn run as that PID 1, filling out (size bytes); the namespace ends with
 * it. 0, or -errno if the namespace could not be made. */
int pidns_call(child_fn fn, void *arg, void *out, size_t size);

/* Collect every exited child (never blocks); remember tracked statuses. */
void sb_reap(void);
/* Alive: not reaped, and kill(pid, 0) works, and not a zombie. */
bool sb_alive(pid_t pid);
/* Wait (bounded) until pid has been reaped; its wait status, or -ETIMEDOUT
 * (-ECHILD if it is not a tracked child). */
int sb_wait_reaped(pid_t pid, unsigned timeout_ms);
/* Did pid end from signal sig (waits up to timeout_ms for the reap)? */
bool sb_killed_by(pid_t pid, int sig, unsigned timeout_ms);
/* How many of pids[] ended from sig (each waited for up to timeout_ms;
 * those that did not are described with diag()); are alive; exited 0. */
unsigned sb_count_killed(const pid_t *pids, unsigned n, int sig, unsigned timeout_ms);
unsigned sb_count_alive(const pid_t *pids, unsigned n);
unsigned sb_count_exited0(const pid_t *pids, unsigned n, unsigned timeout_ms);

/* State letter from /proc/PID/stat (R, S, T, Z, ...), 0 if gone. */
char proc_state(pid_t pid);
/* Wait (bounded) until pid is in state; true if it got there. */
bool wait_state(pid_t pid, char state, unsigned timeout_ms);
/* A signal mask of /proc/PID/status ("SigPnd", "ShdPnd", "SigCgt", ...). */
bool proc_mask(pid_t pid, const char *field, unsigned long long *mask);
/* The id of a thread of pid other than its leader, 0 if none. */
pid_t proc_other_tid(pid_t pid);

#endif
