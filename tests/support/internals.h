/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The library's internals, for tests of one part of it (a backend's send(),
 * the /proc search): a run on a target, set up as cgk_kill() sets one up.
 */
#ifndef CGK_TEST_INTERNALS_H
#define CGK_TEST_INTERNALS_H

#include <stddef.h>

#include "internal.h"

/* cgk_target_open(), what went wrong written into msg as the report would
 * say it ("PATH: what"), "" if nothing did. */
int target_open(const char *path, struct cgk_target *t, char *msg, size_t size);

/* A process in a list of a report made by hand (tests of the JSON writer);
 * comm is comm_len bytes, without a NUL if 16. Bails out without memory. */
void report_add_process(struct cgk_report *rep, enum cgk_list list, pid_t pid, char state,
			const char *comm, size_t comm_len, const char *cgroup);

struct lib_run {
	struct cgk_target t;
	cgk_options *opts;
	struct cgk_run run;	/* .rep: a report of the target's path */
};
/* Open path as the target of a run that handles batch pidfds at once,
 * with default options and /proc checked: 0, or -errno (said with diag). */
int lib_run_open(struct lib_run *p, const char *path, size_t batch);
/* Why the run's latest call failed ("" if it did not say). */
const char *lib_run_why(const struct lib_run *p);
void lib_run_close(struct lib_run *p);

#endif
