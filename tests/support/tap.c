// SPDX-License-Identifier: LGPL-2.1-or-later
/* TAP output for the test programs; see tap.h. Not thread-safe: call from
 * the main thread only. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"

static int tap_planned = -1;	/* -1: no plan yet, -2: no_plan */
static int tap_run;
static int tap_fails;

bool tap_no_skip(void)
{
	const char *v = getenv("CGKILL_TEST_NO_SKIP");

	return v && *v && strcmp(v, "0") != 0;
}

void plan(int n)
{
	tap_planned = n;
	printf("1..%d\n", n);
	fflush(stdout);
}

void no_plan(void)
{
	tap_planned = -2;
}

static bool vok(bool cond, const char *fmt, va_list ap)
{
	tap_run++;
	if (!cond)
		tap_fails++;
	printf("%sok %d - ", cond ? "" : "not ", tap_run);
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	return cond;
}

bool ok(bool cond, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vok(cond, fmt, ap);
	va_end(ap);
	return cond;
}

bool is_int(long long got, long long want, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vok(got == want, fmt, ap);
	va_end(ap);
	if (got != want)
		diag("    got: %lld, expected: %lld", got, want);
	return got == want;
}

bool is_str(const char *got, const char *want, const char *fmt, ...)
{
	bool same = got && want ? strcmp(got, want) == 0 : got == want;
	va_list ap;

	va_start(ap, fmt);
	vok(same, fmt, ap);
	va_end(ap);
	if (!same)
		diag("    got: '%s', expected: '%s'", got ? got : "(null)",
		     want ? want : "(null)");
	return same;
}

static void vcomment(FILE *f, const char *fmt, va_list ap)
{
	char buf[4096];
	char *line, *save = NULL;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	fflush(stdout);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		fprintf(f, "# %s\n", line);
	fflush(f);
}

void diag(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vcomment(stderr, fmt, ap);
	va_end(ap);
}

void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vcomment(stdout, fmt, ap);
	va_end(ap);
}

/* The message of the variadic function this is used in, into buf. */
#define FORMAT(buf, fmt)                                                      \
	do {                                                                  \
		va_list ap_;                                                  \
		va_start(ap_, fmt);                                           \
		vsnprintf(buf, sizeof(buf), fmt, ap_);                        \
		va_end(ap_);                                                  \
	} while (0)

/* A skip under CGKILL_TEST_NO_SKIP=1: test point n fails. */
static void skip_fails(int n, const char *why)
{
	tap_fails++;
	printf("not ok %d - skipped, but CGKILL_TEST_NO_SKIP=1: %s\n", n, why);
}

void skip(const char *fmt, ...)
{
	char buf[1024];

	FORMAT(buf, fmt);
	tap_run++;
	if (tap_no_skip()) {
		skip_fails(tap_run, buf);
	} else {
		printf("ok %d # skip %s\n", tap_run, buf);
	}
	fflush(stdout);
}

void skip_all(const char *fmt, ...)
{
	char buf[1024];

	FORMAT(buf, fmt);
	if (tap_no_skip()) {
		if (tap_planned == -1 || tap_planned == -2)
			printf("1..%d\n", tap_run + 1);
		skip_fails(tap_run + 1, buf);
		fflush(stdout);
		exit(1);
	}
	if (tap_run == 0 && tap_planned < 0)
		printf("1..0 # SKIP %s\n", buf);
	else
		printf("# skipping the rest: %s\n", buf);
	fflush(stdout);
	exit(tap_fails ? 1 : 0);
}

void bail_out(const char *fmt, ...)
{
	char buf[1024];

	FORMAT(buf, fmt);
	printf("Bail out! %s\n", buf);
	fflush(stdout);
	exit(255);
}

int done_testing(void)
{
	if (tap_planned < 0)
		printf("1..%d\n", tap_run);
	else if (tap_planned != tap_run) {
		diag("planned %d tests but ran %d", tap_planned, tap_run);
		fflush(stdout);
		return 255;
	}
	fflush(stdout);
	return tap_fails ? 1 : 0;
}

int tap_failed(void)
{
	return tap_fails;
}
