// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Naming a signal to the command: -s in every spelling (the signal that
 * arrives is the one named, sent by cgkill), names that are refused before
 * anything is signalled, and the tables of -l and -L.
 *
 * Signals are observed, not assumed: the processes are recorders whose
 * SA_SIGINFO handlers write (pid, signal, sender) into a pipe
 * (support/record.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgkill.h"
#include "support/cmd.h"
#include "support/json.h"
#include "support/record.h"
#include "support/sandbox.h"
#include "support/scene.h"
#include "support/spawn.h"
#include "support/tap.h"

#define MAX_RECS 256

static char *box;	/* the v2 sandbox */

/* ---- -s: the signal that arrives is the one named ---- */

static char *box;	/* the v2 sandbox */

/* ---- -s: the signal that arrives is the one named ---- */

static void test_signal_spellings(void)
{
	static const struct {
		const char *arg;
		int sig;
		const char *json;
	} cases[] = {
		{ "TERM", SIGTERM, "[\"TERM\"]" },
		{ "SIGTERM", SIGTERM, "[\"TERM\"]" },
		{ "term", SIGTERM, "[\"TERM\"]" },
		{ "sigterm", SIGTERM, "[\"TERM\"]" },
		{ "15", SIGTERM, "[\"TERM\"]" },
		{ "USR2", SIGUSR2, "[\"USR2\"]" },
		{ "RTMIN+2", 0, "[\"RTMIN+2\"]" },	/* SIGRTMIN + 2 */
		{ "rtmax-1", -1, NULL },		/* SIGRTMAX - 1 */
	};
	struct scene s;

	if (!scene_start(&s, box, "spellings"))
		goto out;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int want = cases[i].sig == 0 ? SIGRTMIN + 2 : cases[i].sig < 0 ? SIGRTMAX - 1 : cases[i].sig;
		struct sb_proc spec = { .cgroups = { s.target },
					 .record = { SIGTERM, SIGUSR2, SIGRTMIN + 2, SIGRTMAX - 1 } };
		struct rec v[MAX_RECS];
		struct cmd c;
		size_t n;
		pid_t pid;

		rec_drain();
		pid = sb_spawn(&spec);
		if (!ok(pid > 0, "-s %s: spawn a recorder", cases[i].arg)) {
			diag("sb_spawn: %s", strerror(-pid));
			break;
		}
		cmd_run(&c, CMD_MS, "-j", "-s", cases[i].arg, s.target, NULL);
		exit_is(&c, 0);
		n = rec_collect(v, MAX_RECS, 1, 5000, 200);
		if (is_int(n, 1, "-s %s: exactly one signal arrived", cases[i].arg)) {
			is_int(v[0].sig, want, "-s %s: it is signal %d", cases[i].arg, want);
			is_int(v[0].sender, c.pid, "-s %s: sent by the cgkill process", cases[i].arg);
		}
		if (cases[i].json)
			json_is(&c, "d['targets'][0]['signals']", cases[i].json);
		ok(sb_alive(pid), "-s %s: the recorder handled it and lives", cases[i].arg);
		kill(pid, SIGKILL);
		sb_wait_reaped(pid, 5000);
		cmd_free(&c);
	}
out:
	scene_end(&s);
}

static void test_signal_invalid(void)
{
	static const char *const bad[] = {
		"FOO", "SIGFOO", "0", "65", "RTMIN+99", "RTMAX-99", "", "-1", "32", "TERM1", "9x",
	};
	struct rec v[MAX_RECS];
	struct scene s;
	pid_t pid;

	if (!scene_start(&s, box, "invalid"))
		goto out;
	rec_drain();
	pid = sb_spawn(&(struct sb_proc){ .cgroups = { s.target },
					    .record = { SIGTERM, SIGUSR1, SIGHUP } });
	if (!ok(pid > 0, "invalid signals: spawn a recorder"))
		goto out;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct cmd c;

		cmd_run(&c, CMD_MS, "-s", bad[i], s.target, NULL);
		exit_is(&c, 2);
		ok(strstr(c.err, "unknown signal") != NULL, "-s '%s': the message names the problem",
		   bad[i]);
		cmd_free(&c);
	}
	{
		struct cmd c;

		cmd_run(&c, CMD_MS, "--timeout", "1s", "BOGUS", s.target, NULL);
		exit_is(&c, 2);
		ok(strstr(c.err, "unknown signal: BOGUS") != NULL, "--timeout 1s BOGUS: message");
		cmd_free(&c);
	}
	is_int(rec_collect(v, MAX_RECS, 1, 300, 0), 0, "invalid signals: nothing was signalled");
	ok(sb_alive(pid), "invalid signals: the process is alive");
out:
	scene_end(&s);
}

/* ---- -l and -L ---- */

/* Does every line but the last hold n blank-separated words, the last at
 * most n? (32 and 33 have no name: counting by number leaves gaps.) */
static bool rows_of(const char *text, unsigned n)
{
	bool good = true;

	for (const char *l = text; *l;) {
		const char *end = strchr(l, '\n');
		unsigned words = 0;
		bool last;

		if (!end)
			return false;
		last = end[1] == '\0';
		for (const char *p = l; p < end; p++)
			words += *p != ' ' && (p == l || p[-1] == ' ');
		good &= last ? words <= n : words == n;
		l = end + 1;
	}
	return good;
}

static void test_list(void)
{
	static const struct {
		const char *arg, *want;
	} conv[] = {
		{ "9", "KILL\n" },	{ "KILL", "9\n" },	  { "137", "KILL\n" },
		{ "143", "TERM\n" },	{ "sigterm", "15\n" },	  { "15", "TERM\n" },
		{ "HUP", "1\n" },	{ "129", "HUP\n" },
	};
	char buf[32], want[64];
	struct cmd c;
	unsigned named = 0, missing = 0, wrong = 0;

	for (size_t i = 0; i < sizeof(conv) / sizeof(conv[0]); i++) {
		cmd_run(&c, CMD_MS, "-l", conv[i].arg, NULL);
		exit_is(&c, 0);
		is_str(c.out, conv[i].want, "-l %s", conv[i].arg);
		cmd_free(&c);
	}
	snprintf(want, sizeof(want), "%d\n", SIGRTMIN + 2);
	cmd_run(&c, CMD_MS, "-l", "RTMIN+2", NULL);
	is_str(c.out, want, "-l RTMIN+2");
	cmd_free(&c);
	snprintf(buf, sizeof(buf), "%d", SIGRTMIN + 2);
	cmd_run(&c, CMD_MS, "-l", buf, NULL);
	is_str(c.out, "RTMIN+2\n", "-l %s", buf);
	cmd_free(&c);
	cmd_run(&c, CMD_MS, "--list=KILL", NULL);
	is_str(c.out, "9\n", "--list=KILL");
	cmd_free(&c);
	cmd_run(&c, CMD_MS, "-l", "NOSUCH", NULL);
	exit_is(&c, 2);
	ok(strstr(c.err, "unknown signal") != NULL, "-l NOSUCH: message");
	cmd_free(&c);

	/* -l alone: every name, separated by blanks. */
	cmd_run(&c, CMD_MS, "-l", NULL);
	exit_is(&c, 0);
	for (int sig = 1; sig <= SIGRTMAX; sig++) {
		const char *name = cgk_signal_name(sig, buf, sizeof(buf));
		char *copy, *tok, *save = NULL;
		unsigned seen = 0;

		if (!name)
			continue;
		copy = strdup(c.out);
		for (tok = strtok_r(copy, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
			seen += strcmp(tok, name) == 0;
		free(copy);
		missing += seen != 1;
	}
	is_int(missing, 0, "-l lists every signal name once");
	ok(rows_of(c.out, 8), "-l: rows of 8 names, only the last one shorter");
	cmd_free(&c);

	/* -L: "NUM NAME" pairs, every signal from 1 to SIGRTMAX that has a
	 * name (32 and 33 are glibc's own), each with its number. */
	cmd_run(&c, CMD_MS, "-L", NULL);
	exit_is(&c, 0);
	{
		char *copy = strdup(c.out), *tok, *save = NULL;
		bool seen[256];
		unsigned pairs = 0;

		memset(seen, 0, sizeof(seen));
		for (tok = strtok_r(copy, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
			int num = atoi(tok);
			char *nm = strtok_r(NULL, " \n", &save);
			const char *exp = num > 0 && num <= SIGRTMAX ? cgk_signal_name(num, buf, sizeof(buf)) : NULL;

			pairs++;
			if (!nm || !exp || strcmp(nm, exp) != 0 || seen[num])
				wrong++;
			else
				seen[num] = true;
		}
		for (int sig = 1; sig <= SIGRTMAX; sig++) {
			if (cgk_signal_name(sig, buf, sizeof(buf))) {
				named++;
				if (!seen[sig])
					missing++;
			}
		}
		free(copy);
		is_int(wrong, 0, "-L: every entry is a number and its name");
		is_int(missing, 0, "-L: every named signal 1..SIGRTMAX (%d) is in the table", SIGRTMAX);
		is_int(pairs, named, "-L: %u entries", named);
		ok(rows_of(c.out, 14), "-L: rows of 7 entries, only the last one shorter");
		ok(named >= 31 + (unsigned)(SIGRTMAX - SIGRTMIN + 1) - 1,
		   "-L: the standard and all real-time signals have names (%u)", named);
	}
	cmd_free(&c);
}

int main(void)
{
	sb_init(300);
	no_plan();
	test_list();
	sb_require_root();
	if (!sb_mount(SB_V2))
		skip_all("no cgroup v2 mount");
	box = sb_create(SB_V2);
	if (!box)
		bail_out("cannot create a v2 sandbox: %m");
	note("sandbox %s, command %s", box, cmd_path());

	test_signal_spellings();
	test_signal_invalid();

	ok(sb_destroy(box) == 0, "sandbox removed");
	free(box);
	return done_testing();
}
