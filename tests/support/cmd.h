/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Run the cgkill command (or another program) from a test and look into
 * what it printed.
 *
 *	struct cmd c;
 *	cmd_run(&c, CMD_MS, "-j", "-s", "TERM", path, NULL);
 *	exit_is(&c, 0);
 *	json_is(&c, "d['targets'][0]['backend']", "freeze");	(json.h)
 *	cmd_free(&c);
 *
 * The command is $CGKILL (set by make check), else ../cgkill beside the test
 * program. It runs as a tracked child (sb_fork), so the subreaper's reaping
 * does not lose its exit status; its output goes to memory files, so that
 * any amount of it is kept.
 */
#ifndef CGK_TEST_CMD_H
#define CGK_TEST_CMD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* A deadline for one run of the command (loaded CI machines), stretched
 * further by the load (cmd_finish() waits with sb_wait_reaped()). */
#define CMD_MS 60000

struct cmd {
	pid_t pid;
	int status;		/* exit code; 128+N if killed by N; -1 timed out */
	char *out, *err;	/* stdout and stderr, NUL-terminated */
	uint64_t start_ms, ms;	/* start (sb_now_ms) and run time */
	int out_fd, err_fd;
	char line[1024];	/* the command line, for messages */
};

/* How to run it; every field may be left out. */
struct cmd_opts {
	const char *input;	/* standard input; NULL: /dev/null */
	const char *join;	/* a cgroup to move into first (exit 121 if not) */
	uid_t uid;		/* run as this user and group (exit 120 if not) */
	const char *env[4];	/* "NAME=value" to set, "NAME" to unset */
	bool program;		/* argv[0] is the program, not the first argument */
};

const char *cmd_path(void);
/* Start the command with argv (NULL-terminated, without argv[0], unless
 * o->program). 0 or -errno. */
int cmd_startv(struct cmd *c, const struct cmd_opts *o, const char *const *argv);
int cmd_start(struct cmd *c, const struct cmd_opts *o, ...) __attribute__((sentinel));
/* Wait (bounded) for a started command and collect its output. */
int cmd_finish(struct cmd *c, unsigned timeout_ms);
/* cmd_start() + cmd_finish(); the status in c->status. */
int cmd_runv(struct cmd *c, const struct cmd_opts *o, unsigned timeout_ms,
	     const char *const *argv);
int cmd_run_opts(struct cmd *c, const struct cmd_opts *o, unsigned timeout_ms, ...)
	__attribute__((sentinel));
#define cmd_run(c, timeout_ms, ...) cmd_run_opts(c, NULL, timeout_ms, __VA_ARGS__)
void cmd_free(struct cmd *c);
/* Run the command, keep its standard error (truncated) in err: its status.
 * For children that hand results back (child_call()). */
int cmd_status(char *err, size_t size, unsigned timeout_ms, ...) __attribute__((sentinel));

/* One test point: the command's exit status (stderr shown if not). */
bool exit_is(const struct cmd *c, int want);
/* Is err a message of the command about arg: "cgkill: ... ARG ... (ERRNAME)"
 * as its first line? */
bool error_format(const char *err, const char *arg, const char *errname);
/* Two test points: cgkill ARG exits want, saying "cgkill: ARG: what failed
 * (ERRNAME)" (what names the case in the test points). */
bool cmd_error_is(const char *arg, const char *errname, int want, const char *what);
/* The first line of text, in buf. */
const char *first_line(const char *text, char *buf, size_t size);
/* Number of lines of text that contain needle. */
unsigned count_lines_with(const char *text, const char *needle);
/* Number of lines of text that are the row of a listing: the fields of row,
 * blanks around and between them ignored ("123 S . sleep"). */
unsigned count_rows(const char *text, const char *row);
/* The name the kernel gives the processes of this test program (comm). */
const char *self_comm(void);

#endif
