/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A tiny TAP producer for the test programs (implementation in tap.c).
 *
 *	plan(3);                      or no_plan();
 *	ok(r == 0, "kill %s", path);
 *	is_int(r, -ENOENT, "missing path");
 *	return done_testing();
 *
 * With CGKILL_TEST_NO_SKIP=1 in the environment (CI), skip() and skip_all()
 * report a failure instead of a skip: a test that cannot run must not pass.
 */
#ifndef CGK_TAP_H
#define CGK_TAP_H

#include <stdbool.h>

#define TAP_PRINTF(a, b) __attribute__((format(printf, a, b)))

void plan(int n);
void no_plan(void);
/* Returns cond, so callers can write: if (!ok(...)) return; */
bool ok(bool cond, const char *fmt, ...) TAP_PRINTF(2, 3);
bool is_int(long long got, long long want, const char *fmt, ...) TAP_PRINTF(3, 4);
bool is_str(const char *got, const char *want, const char *fmt, ...) TAP_PRINTF(3, 4);
/* Comment lines on stderr ("# ..."), shown by prove -v and on failure. */
void diag(const char *fmt, ...) TAP_PRINTF(1, 2);
/* Comment lines on stdout ("# ..."), shown only by prove -v. */
void note(const char *fmt, ...) TAP_PRINTF(1, 2);
/* One skipped test point (a failure under CGKILL_TEST_NO_SKIP=1). */
void skip(const char *fmt, ...) TAP_PRINTF(1, 2);
/* Skip the whole program: exits 0 (or 1 under CGKILL_TEST_NO_SKIP=1). */
__attribute__((noreturn)) void skip_all(const char *fmt, ...) TAP_PRINTF(1, 2);
/* Abort the whole program: "Bail out!", exit 255 (atexit handlers run). */
__attribute__((noreturn)) void bail_out(const char *fmt, ...) TAP_PRINTF(1, 2);
/* Print the plan if no_plan(), check the count; the exit code for main(). */
int done_testing(void);
/* Number of failed test points so far. */
int tap_failed(void);
/* True when CGKILL_TEST_NO_SKIP=1 is set. */
bool tap_no_skip(void);

#endif
