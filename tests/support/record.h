/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Recording processes: each catches some signals with an SA_SIGINFO handler
 * that writes a record (its pid, the signal, the sender's pid) into a pipe
 * the test reads, which proves which signals arrived, how often, from whom.
 * Processes are made recorders by sb_spawn() (.record in struct sb_proc),
 * or make themselves one with rec_arm(); there is one pipe per test process.
 */
#ifndef CGK_TEST_RECORD_H
#define CGK_TEST_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum { REC_SIG = 1, REC_BORN = 2 };
struct rec {
	int kind;	/* REC_SIG: a signal arrived; REC_BORN: a child started */
	pid_t pid;	/* who writes (getpid() in its own pid namespace) */
	int sig;
	pid_t sender;	/* si_pid; for REC_BORN the parent */
};

/* Create the record pipe (once; sb_spawn() of a recorder does it too). */
void rec_init(void);
/* In the calling process: record the signals sigs (0-terminated, at most
 * 8); the handler then exits 0 or forks (see struct sb_proc). 0 or -errno. */
int rec_arm(const int *sigs, bool exit_on_signal, bool fork_on_signal);
/* Read records until want have arrived and then quiet_ms passed without
 * more, or timeout_ms: the number read into v (at most max). */
size_t rec_collect(struct rec *v, size_t max, size_t want, unsigned timeout_ms,
		   unsigned quiet_ms);
/* Drop the records left over from earlier. */
void rec_drain(void);
/* The signals recorded so far (drains them); *last (may be NULL) gets the
 * last one seen. */
unsigned rec_take(int *last);
/* One test point: after a moment for a stray signal to arrive, no signal
 * was recorded ("WHAT: no recorder outside the target got a signal"). */
bool no_hits(const char *what);
/* Records of kind from pid (0: anyone) with signal sig (0: any). */
unsigned rec_count(const struct rec *v, size_t n, int kind, pid_t pid, int sig);

/* A recorder of one signal; a process ignoring SIGTERM; one that exits 0
 * on it (its handlers set when these return); a recorder of REC_STRAY. */
pid_t recorder(const char *cgroup, int sig);
pid_t term_ignorer(const char *cgroup);
pid_t term_exiter(const char *cgroup);
pid_t stray_recorder(const char *cgroup);

#endif
