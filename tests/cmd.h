/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Run the cgkill command from a test and look into what it printed.
 *
 *	struct cmd c;
 *	cmd_run(&c, 5000, "-j", "-s", "TERM", path, NULL);
 *	is_int(c.status, 0, "exit 0");
 *	char *v = json_eval(c.out, "d['targets'][0]['backend']");
 *	is_str(v, "freeze", "freeze backend");
 *	free(v);
 *	cmd_free(&c);
 *
 * The command is $CGKILL (set by make check), else build/cgkill. It runs as
 * a tracked child of the sandbox (sb_fork), so the subreaper's reaping does
 * not lose its exit status.
 */
#ifndef CGK_TEST_CMD_H
#define CGK_TEST_CMD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sandbox.h"

struct cmd {
	pid_t pid;
	int status;		/* exit code; 128+N if killed by N; -1 timed out */
	char *out, *err;	/* stdout and stderr, NUL-terminated */
	uint64_t start_ms, ms;	/* start (sb_now_ms) and run time */
	char out_path[64], err_path[64];
	char line[1024];	/* the command line, for messages */
};

const char *cmd_path(void);
/* Run the command as this user and group (tests of unprivileged use); 0:
 * as we are. */
extern uid_t cmd_uid;
extern gid_t cmd_gid;
/* Start the command with argv (NULL-terminated, without argv[0]); stdin is
 * input (NULL: /dev/null). 0 or -errno. */
int cmd_startv(struct cmd *c, const char *input, const char *const *argv);
int cmd_start(struct cmd *c, const char *input, ...) __attribute__((sentinel));
/* Wait (bounded) for a started command and collect its output. */
int cmd_finish(struct cmd *c, unsigned timeout_ms);
/* cmd_start() + cmd_finish(); the status in c->status. */
int cmd_run(struct cmd *c, unsigned timeout_ms, ...) __attribute__((sentinel));
int cmd_run_input(struct cmd *c, const char *input, unsigned timeout_ms, ...)
	__attribute__((sentinel));
void cmd_free(struct cmd *c);

/* Evaluate a Python expression over the JSON document d parsed from text
 * (strict: UTF-8, one document, no duplicate keys). A malloc'ed string:
 * the value (str as is, anything else as JSON), or "INVALID: why", or NULL
 * when python3 is missing. */
char *json_eval(const char *text, const char *expr);
/* Is text one valid JSON document? (false also when python3 is missing) */
bool json_valid(const char *text);
bool have_python(void);

/* One test point each: the command's exit status; a Python expression over
 * its JSON stdout against want (a skip without python3). */
bool exit_is(const struct cmd *c, int want);
bool json_is(const struct cmd *c, const char *expr, const char *want);
/* Does the cgroup file dir/file contain text? */
bool file_has(const char *dir, const char *file, const char *text);

/* <box>/<name> as the parent with a sentinel, <name>/T the target,
 * <name>/S a sibling with a sentinel. */
struct scene {
	char *parent, *target, *sibling;
	struct sb_sentinels sent;
	const char *name;
};
/* false (and a failed test point) if it cannot be set up. */
bool scene_start(struct scene *s, const char *box, const char *name);
/* Check the sentinels (test points), remove the cgroups, free. */
void scene_end(struct scene *s);

/* Number of lines of text that contain needle. */
unsigned count_lines_with(const char *text, const char *needle);
/* Number of lines of text that are the row of a listing: the fields of row,
 * blanks around and between them ignored ("123 S . sleep"). */
unsigned count_rows(const char *text, const char *row);

/*
 * Recording processes: each catches some signals with an SA_SIGINFO handler
 * that writes a record (its pid, the signal, the sender's pid) into a pipe
 * the test reads, which proves which signals arrived, how often, from whom.
 */
enum { REC_SIG = 1, REC_BORN = 2 };
struct rec {
	int kind;	/* REC_SIG: a signal arrived; REC_BORN: a child started */
	pid_t pid;	/* who writes */
	int sig;
	pid_t sender;	/* si_pid; for REC_BORN the parent */
};
struct rec_spec {
	const char *cgroup;
	int record[8];		/* signals to catch and record, 0-terminated */
	int ignore[8];		/* signals set to SIG_IGN, 0-terminated */
	bool exit_on_signal;	/* the handler then exits with status 0 */
	/* The handler then forks a child, which records REC_BORN, unblocks
	 * every signal (so any pending one shows) and sleeps. */
	bool fork_on_signal;
	const char *comm;	/* prctl(PR_SET_NAME) */
	uid_t uid;		/* after joining, become this user and group; 0: stay */
	unsigned threads;	/* extra threads, sleeping */
};
/* Create the record pipe; call once after sb_init(). */
void rec_init(void);
/* Spawn (sb_fork) a recording process; returns once its handlers are set:
 * its pid or -errno. */
pid_t rec_spawn(const struct rec_spec *s);
/* Read records until want have arrived and then quiet_ms passed without
 * more, or timeout_ms: the number read into v (at most max). */
size_t rec_collect(struct rec *v, size_t max, size_t want, unsigned timeout_ms,
		   unsigned quiet_ms);
/* Drop the records left over from earlier. */
void rec_drain(void);
/* A recorder of one signal; a process ignoring SIGTERM; one that exits 0
 * on it. (Not SB_IGNORE_TERM / SB_EXIT_ON_TERM: sb_spawn() returns before
 * those set their handler, so a TERM sent at once could kill them.) */
pid_t recorder(const char *cgroup, int sig);
pid_t term_ignorer(const char *cgroup);
pid_t term_exiter(const char *cgroup);
/* Records of kind from pid (0: anyone) with signal sig (0: any). */
unsigned rec_count(const struct rec *v, size_t n, int kind, pid_t pid, int sig);

/* State letter from /proc/PID/stat (R, S, T, Z, ...), 0 if gone. */
char proc_state(pid_t pid);
/* Wait (bounded) until pid is in state; true if it got there. */
bool wait_state(pid_t pid, char state, unsigned timeout_ms);

#endif
