/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Calling the library: options made in one call, a kill in one call, and
 * what a report says about one process.
 *
 *	cgk_report *rep = NULL;
 *	int r = kill_opts(path, CGK_BACKEND_FREEZE, SIGTERM, 0, 1000, NULL, &rep);
 *	is_int(r, 0, "... (%s)", cgk_report_message(rep));
 *	rep = cgk_report_free(rep);
 */
#ifndef CGK_TEST_KILL_H
#define CGK_TEST_KILL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgkill.h"
#include "deadline.h"

/* The backends that serve cgroup v2, each forced in turn by many tests. */
#define N_V2_BACKENDS 3
extern const enum cgk_backend v2_backends[N_V2_BACKENDS];

/* The default wait of the options (and of kill_opts() callers that take
 * it): where its end is a failure, 10 s on an idle machine, stretched by
 * the load now (deadline.h). The support code's own waits stretch their
 * timeouts themselves: give them idle-machine times, never this. */
#define KILL_WAIT_MS sb_deadline_ms(10000)

/* Options with these settings (protected_file NULL: the default list);
 * bails out if the library refuses one. Free with cgk_options_free(). */
cgk_options *opts_new(enum cgk_backend b, int sig, unsigned flags, uint64_t wait_ms,
		      const char *protected_file);
/* The same, with after_ms and sig2 as one escalation step. */
cgk_options *opts_escalate(enum cgk_backend b, int sig, uint64_t wait_ms, uint64_t after_ms,
			   int sig2);
/* cgk_kill(path) with those options; *rep gets the report (free it). */
int kill_opts(const char *path, enum cgk_backend b, int sig, unsigned flags, uint64_t wait_ms,
	      const char *protected_file, cgk_report **rep);

/* kill_opts() without flags or a protected list, its failure noted. */
int kill_wait(const char *path, enum cgk_backend b, int sig, uint64_t wait_ms, cgk_report **rep);

/* How many processes of a list of the report have pid (0 counts the
 * unreachable ones). */
unsigned rep_has_pid(const cgk_report *rep, enum cgk_list list, pid_t pid);
/* Signal i of the report (0 past the end), and its backend. */
int rep_signal(const cgk_report *rep, size_t i);
enum cgk_backend rep_signal_backend(const cgk_report *rep, size_t i);

#endif
