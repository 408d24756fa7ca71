// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Signal names and numbers. Pure functions, fuzzed.
 *
 * The names are those of util-linux kill(1): the canonical one first for
 * each number, then its aliases. Numbers come from <signal.h>, so the table
 * is right on architectures where they differ (alpha, mips, sparc).
 *
 * Real-time signals are named relative to SIGRTMIN and SIGRTMAX as the C
 * library sees them at run time. The numbers between the last standard
 * signal and SIGRTMIN (32 and 33 with glibc) are reserved by the C library
 * for its own threads: they have no name, and they are not accepted as a
 * number either, so cgk_signal_from_name() accepts a number exactly when
 * cgk_signal_name() has a name for it.
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

struct signame {
	const char *name;
	int sig;
};

/* Canonical names come before aliases of the same number. */
static const struct signame signames[] = {
	{ "HUP", SIGHUP },
	{ "INT", SIGINT },
	{ "QUIT", SIGQUIT },
	{ "ILL", SIGILL },
	{ "TRAP", SIGTRAP },
	{ "ABRT", SIGABRT },
	{ "IOT", SIGIOT },
	{ "BUS", SIGBUS },
#ifdef SIGEMT
	{ "EMT", SIGEMT },
#endif
	{ "FPE", SIGFPE },
	{ "KILL", SIGKILL },
	{ "USR1", SIGUSR1 },
	{ "SEGV", SIGSEGV },
	{ "USR2", SIGUSR2 },
	{ "PIPE", SIGPIPE },
	{ "ALRM", SIGALRM },
	{ "TERM", SIGTERM },
#ifdef SIGSTKFLT
	{ "STKFLT", SIGSTKFLT },
#endif
	{ "CHLD", SIGCHLD },
#ifdef SIGCLD
	{ "CLD", SIGCLD },
#endif
	{ "CONT", SIGCONT },
	{ "STOP", SIGSTOP },
	{ "TSTP", SIGTSTP },
	{ "TTIN", SIGTTIN },
	{ "TTOU", SIGTTOU },
	{ "URG", SIGURG },
	{ "XCPU", SIGXCPU },
	{ "XFSZ", SIGXFSZ },
	{ "VTALRM", SIGVTALRM },
	{ "PROF", SIGPROF },
	{ "WINCH", SIGWINCH },
	{ "IO", SIGIO },
#ifdef SIGPOLL
	{ "POLL", SIGPOLL },
#endif
#ifdef SIGPWR
	{ "PWR", SIGPWR },
#endif
#ifdef SIGINFO
	{ "INFO", SIGINFO },
#endif
#ifdef SIGLOST
	{ "LOST", SIGLOST },
#endif
	{ "SYS", SIGSYS },
#ifdef SIGUNUSED
	{ "UNUSED", SIGUNUSED },	/* gone from glibc 2.26 on */
#endif
};

#define N_SIGNAMES (sizeof(signames) / sizeof(signames[0]))

static bool parse_uint(const char *s, unsigned long *v)
{
	unsigned long x = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		x = x * 10 + (unsigned long)(*s - '0');
		if (x > INT_MAX)
			return false;
	}
	*v = x;
	return true;
}

/* "RTMIN", "RTMIN+n", "RTMAX", "RTMAX-n" (already without "SIG"). */
static int rt_from_name(const char *s, int *sig)
{
	int min = SIGRTMIN, max = SIGRTMAX;
	bool from_min = strncasecmp(s, "RTMIN", 5) == 0;
	char sign = from_min ? '+' : '-';
	unsigned long off = 0;

	if (!from_min && strncasecmp(s, "RTMAX", 5) != 0)
		return -EINVAL;
	s += 5;
	if (*s == sign && !parse_uint(s + 1, &off))
		return -EINVAL;
	if ((*s && *s != sign) || off > (unsigned long)(max - min))
		return -EINVAL;
	*sig = from_min ? min + (int)off : max - (int)off;
	return 0;
}

static const char *table_name(int sig)
{
	for (size_t i = 0; i < N_SIGNAMES; i++)
		if (signames[i].sig == sig)
			return signames[i].name;
	return NULL;
}

CGK_EXPORT int cgk_signal_from_name(const char *name, int *signal)
{
	unsigned long n;

	if (!name || !signal)
		return -EINVAL;
	if (parse_uint(name, &n)) {
		if (n == 0 || n > (unsigned long)SIGRTMAX)
			return -EINVAL;
		if (!table_name((int)n) && (int)n < SIGRTMIN)
			return -EINVAL;	/* reserved by the C library */
		*signal = (int)n;
		return 0;
	}
	if (strncasecmp(name, "SIG", 3) == 0)
		name += 3;
	for (size_t i = 0; i < N_SIGNAMES; i++)
		if (strcasecmp(name, signames[i].name) == 0) {
			*signal = signames[i].sig;
			return 0;
		}
	return rt_from_name(name, signal);
}

CGK_EXPORT const char *cgk_signal_name(int sig, char *buf, size_t size)
{
	const char *name = table_name(sig);
	int r;

	if (name)
		return name;
	if (sig < SIGRTMIN || sig > SIGRTMAX)
		return NULL;
	if (!buf)
		return NULL;
	if (sig == SIGRTMIN)
		r = snprintf(buf, size, "RTMIN");
	else if (sig == SIGRTMAX)
		r = snprintf(buf, size, "RTMAX");
	else
		r = snprintf(buf, size, "RTMIN+%d", sig - SIGRTMIN);
	if (r < 0 || (size_t)r >= size)
		return NULL;
	return buf;
}
