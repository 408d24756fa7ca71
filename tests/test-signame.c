// SPDX-License-Identifier: LGPL-2.1-or-later
/* Unit tests of signal names (lib/signame.c) and durations (lib/parse.c). */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "support/tap.h"

/* s with control characters shown as '?', for test names. */
static const char *shown(const char *s)
{
	static char buf[64];
	size_t i;

	for (i = 0; s[i] && i < sizeof(buf) - 1; i++)
		buf[i] = (unsigned char)s[i] < 0x20 ? '?' : s[i];
	buf[i] = '\0';
	return buf;
}

static int sig_of(const char *name)
{
	int s = -12345;
	int r = cgk_signal_from_name(name, &s);

	return r < 0 ? r : s;
}

static void test_round_trips(void)
{
	char buf[32], lower[40], prefixed[40];
	int named = 0, bad = 0;

	/* every number with a name maps back to itself, in every spelling */
	for (int sig = 1; sig <= SIGRTMAX; sig++) {
		const char *name = cgk_signal_name(sig, buf, sizeof(buf));
		char num[16];

		snprintf(num, sizeof(num), "%d", sig);
		if (!name) {
			/* only the C library's reserved numbers lack a name */
			if (sig < 32 || sig >= SIGRTMIN || sig_of(num) != -EINVAL) {
				diag("signal %d has no name", sig);
				bad++;
			}
			continue;
		}
		named++;
		size_t i;
		for (i = 0; name[i] && i < sizeof(lower) - 1; i++)
			lower[i] = (char)((name[i] >= 'A' && name[i] <= 'Z') ? name[i] + 32 : name[i]);
		lower[i] = '\0';
		snprintf(prefixed, sizeof(prefixed), "SIG%s", name);
		if (strncmp(name, "SIG", 3) == 0 || sig_of(name) != sig ||
		    sig_of(lower) != sig || sig_of(prefixed) != sig || sig_of(num) != sig) {
			diag("round trip failed for %d (%s)", sig, name);
			bad++;
		}
	}
	is_int(bad, 0, "round trip name <-> number for 1..SIGRTMAX (%d)", SIGRTMAX);
	is_int(named, 31 + (SIGRTMAX - SIGRTMIN + 1), "31 standard signals and every RT one named");
}

static void test_names(void)
{
	char buf[32];

	is_int(sig_of("TERM"), SIGTERM, "TERM");
	is_int(sig_of("SIGTERM"), SIGTERM, "SIGTERM");
	is_int(sig_of("term"), SIGTERM, "term");
	is_int(sig_of("sigTerm"), SIGTERM, "sigTerm");
	is_int(sig_of("KILL"), 9, "KILL is 9");
	is_int(sig_of("9"), 9, "9");
	is_int(sig_of("009"), 9, "leading zeros");
	is_int(sig_of("IOT"), SIGABRT, "IOT alias of ABRT");
	is_int(sig_of("POLL"), SIGIO, "POLL alias of IO");
	is_int(sig_of("CLD"), SIGCHLD, "CLD alias of CHLD");
	is_int(sig_of("sigcld"), SIGCHLD, "sigcld");
	is_int(sig_of("PWR"), SIGPWR, "PWR");
	is_int(sig_of("STKFLT"), SIGSTKFLT, "STKFLT");
	is_int(sig_of("WINCH"), SIGWINCH, "WINCH");

	is_str(cgk_signal_name(SIGTERM, buf, sizeof(buf)), "TERM", "name of 15");
	is_str(cgk_signal_name(SIGABRT, buf, sizeof(buf)), "ABRT", "canonical ABRT, not IOT");
	is_str(cgk_signal_name(SIGCHLD, buf, sizeof(buf)), "CHLD", "canonical CHLD");
	is_str(cgk_signal_name(SIGIO, buf, sizeof(buf)), "IO", "canonical IO");
	is_str(cgk_signal_name(SIGSYS, buf, sizeof(buf)), "SYS", "canonical SYS");
	is_str(cgk_signal_name(SIGKILL, NULL, 0), "KILL", "fixed names need no buffer");

	/* real-time signals */
	int span = SIGRTMAX - SIGRTMIN;

	is_int(sig_of("RTMIN"), SIGRTMIN, "RTMIN");
	is_int(sig_of("SIGRTMIN"), SIGRTMIN, "SIGRTMIN");
	is_int(sig_of("rtmin+0"), SIGRTMIN, "rtmin+0");
	is_int(sig_of("RTMIN+2"), SIGRTMIN + 2, "RTMIN+2");
	is_int(sig_of("sigrtmin+2"), SIGRTMIN + 2, "sigrtmin+2");
	is_int(sig_of("RTMAX"), SIGRTMAX, "RTMAX");
	is_int(sig_of("RTMAX-1"), SIGRTMAX - 1, "RTMAX-1");
	is_int(sig_of("SIGRTMAX-0"), SIGRTMAX, "SIGRTMAX-0");
	{
		char s[32];

		snprintf(s, sizeof(s), "RTMIN+%d", span);
		is_int(sig_of(s), SIGRTMAX, "RTMIN+%d is RTMAX", span);
		snprintf(s, sizeof(s), "RTMAX-%d", span);
		is_int(sig_of(s), SIGRTMIN, "RTMAX-%d is RTMIN", span);
		snprintf(s, sizeof(s), "RTMIN+%d", span + 1);
		is_int(sig_of(s), -EINVAL, "RTMIN+%d is out of range", span + 1);
		snprintf(s, sizeof(s), "RTMAX-%d", span + 1);
		is_int(sig_of(s), -EINVAL, "RTMAX-%d is out of range", span + 1);
		snprintf(s, sizeof(s), "%d", SIGRTMAX);
		is_int(sig_of(s), SIGRTMAX, "number SIGRTMAX accepted");
		snprintf(s, sizeof(s), "%d", SIGRTMAX + 1);
		is_int(sig_of(s), -EINVAL, "number SIGRTMAX+1 rejected");
	}
	is_str(cgk_signal_name(SIGRTMIN, buf, sizeof(buf)), "RTMIN", "name of SIGRTMIN");
	is_str(cgk_signal_name(SIGRTMIN + 3, buf, sizeof(buf)), "RTMIN+3", "name of SIGRTMIN+3");
	is_str(cgk_signal_name(SIGRTMAX, buf, sizeof(buf)), "RTMAX", "name of SIGRTMAX");
	ok(cgk_signal_name(SIGRTMIN + 3, buf, 4) == NULL, "RT name: small buffer gives NULL");
	ok(cgk_signal_name(SIGRTMIN + 3, NULL, 0) == NULL, "RT name: no buffer gives NULL");

	/* invalid numbers */
	ok(cgk_signal_name(0, buf, sizeof(buf)) == NULL, "no name for 0");
	ok(cgk_signal_name(-1, buf, sizeof(buf)) == NULL, "no name for -1");
	ok(cgk_signal_name(SIGRTMAX + 1, buf, sizeof(buf)) == NULL, "no name past SIGRTMAX");
	ok(cgk_signal_name(1000000, buf, sizeof(buf)) == NULL, "no name for 1000000");
	if (SIGRTMIN > 32)
		ok(cgk_signal_name(32, buf, sizeof(buf)) == NULL && sig_of("32") == -EINVAL,
		   "32 is reserved by the C library: no name, not accepted");
	else
		skip("SIGRTMIN is 32 here");

	static const char *const invalid[] = {
		"",	  "0",	     "-1",     "-9",	   "+9",      " 9",	"9 ",	  "65",
		"999999999999999999999", "SIG",	"SIG15",   "TERMX",  "XTERM",	"TER",
		"SIGSIGTERM", "RTMIN+",	"RTMIN-1", "RTMAX+1", "RTMAX-",	"RTMIN+x", "RTMIN+ 1",
		"RTMIN+-1", "RTMINX",	"RT",	  "RTMIN+1x", "KILL\n", "0x9",	"9.0",
	};
	for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
		int s = -12345, r;

		if (strcmp(invalid[i], "65") == 0 && SIGRTMAX >= 65)
			continue;
		r = cgk_signal_from_name(invalid[i], &s);
		ok(r == -EINVAL && s == -12345, "invalid signal '%s' rejected", shown(invalid[i]));
	}
	is_int(cgk_signal_from_name(NULL, &(int){ 0 }), -EINVAL, "NULL name");
}

static long long dur(const char *s)
{
	uint64_t ms = 777777;
	int r = cgk_parse_duration(s, &ms);

	return r < 0 ? r : (long long)ms;
}

/* Every unit of systemd.time(7), and its length in ms. */
static const struct {
	const char *names[4];
	long long ms;
} units[] = {
	{ { "seconds", "second", "sec", "s" }, 1000 },
	{ { "minutes", "minute", "min", "m" }, 60000 },
	{ { "hours", "hour", "hr", "h" }, 3600000 },
	{ { "days", "day", "d" }, 86400000 },
	{ { "weeks", "week", "w" }, 604800000 },
	{ { "months", "month", "M" }, 2629800000 },	/* 30.44 days */
	{ { "years", "year", "y" }, 31557600000 },	/* 365.25 days */
	{ { "msec", "ms" }, 1 },
};

static void test_duration_units(void)
{
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		for (size_t k = 0; k < 4 && units[i].names[k]; k++) {
			char text[32];

			snprintf(text, sizeof(text), "2%s", units[i].names[k]);
			is_int(dur(text), 2 * units[i].ms, "%s", text);
		}
	/* microseconds round up to the next millisecond */
	is_int(dur("1000usec"), 1, "1000usec");
	is_int(dur("1000us"), 1, "1000us");
	is_int(dur("1000\xc2\xb5s"), 1, "1000 micro sign s");
	is_int(dur("1000\xce\xbcs"), 1, "1000 Greek mu s");
	is_int(dur("1001us"), 2, "1001us rounds up");
	is_int(dur("1us"), 1, "1us rounds up to 1 ms, never to 0");
	is_int(dur("0us"), 0, "0us");
	is_int(dur("18446744073709551615us"), 18446744073709552LL, "UINT64_MAX us");
}

static void test_duration_forms(void)
{
	is_int(dur("0"), 0, "a bare 0 needs no unit");
	is_int(dur("00"), 0, "00");
	is_int(dur("0.0"), 0, "0.0");
	is_int(dur(" 0 "), 0, "' 0 '");
	is_int(dur("0s"), 0, "0s");
	is_int(dur("250ms"), 250, "250ms");
	is_int(dur("10s"), 10000, "10s");
	is_int(dur("2m"), 120000, "2m is minutes");
	is_int(dur("2M"), 2 * 2629800000LL, "2M is months");
	is_int(dur("1h"), 3600000, "1h");
	is_int(dur("1.5s"), 1500, "1.5s");
	is_int(dur("0.25m"), 15000, "0.25m");
	is_int(dur("1.5h"), 5400000, "1.5h");
	is_int(dur("0.5d"), 43200000, "0.5d");
	is_int(dur("1.000000001y"), 31557600032LL, "1.000000001y: 31.5576 ms more, rounded up");
	is_int(dur("0.001s"), 1, "0.001s");
	is_int(dur("0.0001s"), 1, "0.0001s rounds up to 1 ms, never to 0");
	is_int(dur("1.5ms"), 2, "1.5ms rounds up");
	is_int(dur("0.000000000000000001s"), 1, "a tiny fraction past the microsecond still rounds up");
	is_int(dur("0.0000001y"), 3156, "0.0000001y is 3155.76 ms");
	is_int(dur("2.000000000000000000s"), 2000, "trailing zeros are exact");
	is_int(dur("007s"), 7000, "leading zeros");

	/* combined, with and without spaces, as systemd.time(7) writes them */
	is_int(dur("1s500ms"), 1500, "1s500ms");
	is_int(dur("1min 30s"), 90000, "1min 30s");
	is_int(dur("2h 5m"), 7500000, "2h 5m");
	is_int(dur("2h5m"), 7500000, "2h5m");
	is_int(dur("1y 12month"), 31557600000LL + 12 * 2629800000LL, "1y 12month");
	is_int(dur("55s500ms"), 55500, "55s500ms");
	is_int(dur("300ms20s 5day"), 300 + 20000 + 5 * 86400000LL, "300ms20s 5day");
	is_int(dur("2 h"), 7200000, "2 h: a space before the unit");
	is_int(dur("  1min\t30s\n"), 90000, "white space around and between");
	is_int(dur("1.5s 0.5s"), 2000, "1.5s 0.5s");
	is_int(dur("500us500us"), 1, "500us500us is exactly 1 ms");
	is_int(dur("1s1us"), 1001, "1s1us rounds up");
	is_int(dur("1m1m"), 120000, "a unit twice adds up");

	{
		uint64_t ms = 0;

		ok(cgk_parse_duration("infinity", &ms) == 0 && ms == UINT64_MAX,
		   "infinity is UINT64_MAX, no deadline");
		ms = 0;
		ok(cgk_parse_duration(" infinity\t", &ms) == 0 && ms == UINT64_MAX,
		   "infinity with white space around");
	}
}

static void test_duration_limits(void)
{
	uint64_t ms = 0;

	ok(cgk_parse_duration("18446744073709551615ms", &ms) == 0 && ms == UINT64_MAX,
	   "UINT64_MAX ms");
	ok(cgk_parse_duration("5124095576030h", &ms) == 0 && ms == 5124095576030ULL * 3600000,
	   "the largest number of hours that fits");
	ok(cgk_parse_duration("18446744073709551.615s", &ms) == 0 && ms == UINT64_MAX,
	   "UINT64_MAX ms written as seconds with a fraction");
	ok(cgk_parse_duration("18446744073709551.6151s", &ms) == -ERANGE,
	   "rounding the fraction up past UINT64_MAX overflows");
	ok(cgk_parse_duration("18446744073709551614ms 1ms", &ms) == 0 && ms == UINT64_MAX,
	   "a sum that reaches UINT64_MAX");
	is_int(dur("18446744073709551615ms 1ms"), -ERANGE, "a sum past UINT64_MAX overflows");
	is_int(dur("18446744073709551615ms 1us"), -ERANGE, "a microsecond past UINT64_MAX ms overflows");
	is_int(dur("18446744073709551616ms"), -ERANGE, "UINT64_MAX+1 ms overflows");
	is_int(dur("18446744073709551615s"), -ERANGE, "huge seconds overflow");
	is_int(dur("99999999999999999999999h"), -ERANGE, "huge hours overflow");
	is_int(dur("5124095576031h"), -ERANGE, "hours just past the limit overflow");
	is_int(dur("2562047788015h"), 2562047788015LL * 3600000, "large hours fit");
	is_int(dur("584542047y"), -ERANGE, "584542047 years overflow");
	ok(cgk_parse_duration("584542046y", &ms) == 0 && ms == 584542046ULL * 31557600000ULL,
	   "584542046 years fit");
}

static void test_duration_errors(void)
{
	static const char *const invalid[] = {
		/* a bare number has no unit: which did it mean? */
		"1", "10", "1000", "1.5", "0.5", "1s 30", "30 1s", "1 2s", "0 1s", "1s 0",
		/* not a span */
		"", " ", "-1", "-1s", "+1s", "-0", "s", "ms", ".5s", "1.s", "1..5s", "1.5.2s",
		"1x", "1S", "1secs", "1mins", "1ms5", "1e3", "1e3s", "0x10", "1,5s", "1s,2s",
		"inf", "nan", "Infinity", "infinity1", "infinity 1s", "1s infinity", "1 infinity",
		"1m-1s", "1s\x01", "1\xc2s", "1\xb5s", "1 Ms",
	};

	for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
		uint64_t ms = 777777;
		int r = cgk_parse_duration(invalid[i], &ms);

		ok(r == -EINVAL && ms == 777777, "invalid duration '%s' rejected", shown(invalid[i]));
	}
	is_int(cgk_parse_duration(NULL, &(uint64_t){ 0 }), -EINVAL, "NULL duration");
	is_int(cgk_parse_duration("1s", NULL), -EINVAL, "NULL result");
}

int main(void)
{
	no_plan();
	test_round_trips();
	test_names();
	test_duration_units();
	test_duration_forms();
	test_duration_limits();
	test_duration_errors();
	return done_testing();
}
