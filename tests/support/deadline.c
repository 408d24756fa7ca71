// SPDX-License-Identifier: LGPL-2.1-or-later
/* Deadlines scaled by the machine's load; see deadline.h. Plain C and
 * libc only: tests/helper/deadline.c links it alone. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "deadline.h"

/* CPUs this process may run on (its affinity), at least 1. */
static unsigned usable_cpus(void)
{
	cpu_set_t set;
	long n;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (unsigned)CPU_COUNT(&set);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

/* Runnable tasks: the 1-minute load average, or those runnable now (the
 * "R/T" field, ourselves not counted) when more: the average lags a load
 * that has just begun. 0 if /proc/loadavg cannot be read. */
static double load_now(void)
{
	double avg1 = 0;
	unsigned running = 0;
	FILE *f = fopen("/proc/loadavg", "re");

	if (!f)
		return 0;
	if (fscanf(f, "%lf %*f %*f %u/", &avg1, &running) != 2)
		avg1 = running = 0;
	fclose(f);
	return running > 1 && running - 1 > avg1 ? running - 1 : avg1;
}

/* $CGKILL_TEST_SLOW: a positive number, else 1. */
static double slow_env(void)
{
	const char *v = getenv("CGKILL_TEST_SLOW");
	char *end;
	double f;

	if (!v || !*v)
		return 1;
	f = strtod(v, &end);
	return *end == '\0' && f > 0 && f < 1e6 ? f : 1;
}

double sb_slowness(void)
{
	double per_cpu = load_now() / usable_cpus();
	double factor;

	if (per_cpu < 1)
		per_cpu = 1;
	if (per_cpu > SB_SLOW_LOAD_MAX)
		per_cpu = SB_SLOW_LOAD_MAX;
	factor = slow_env() * per_cpu;
	return factor < 1 ? 1 : factor;
}

unsigned sb_deadline_ms(unsigned base_ms)
{
	double ms = base_ms * sb_slowness();
	unsigned whole;

	if (ms >= UINT32_MAX)
		return UINT32_MAX;
	whole = (unsigned)ms;
	return whole < ms ? whole + 1 : whole;
}
