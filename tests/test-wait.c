// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Waiting for the tree to empty: KILL waits by default, --no-wait, a TERM
 * alone does not wait, --timeout does, --wait with survivors (exit 3, the
 * survivors told), a wait for ever (UINT64_MAX, "infinity"), "-w 5s" as a
 * usage error, and SIGINT ending a wait cleanly.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgkill.h"
#include "support/cgfile.h"
#include "support/cmd.h"
#include "support/deadline.h"
#include "support/json.h"
#include "support/kill.h"
#include "support/record.h"
#include "support/sandbox.h"
#include "support/scene.h"
#include "support/spawn.h"
#include "support/tap.h"

static char *box;	/* the v2 sandbox */

static void test_waiting(void)
{
	struct scene s;
	pid_t pids[2], ign;
	struct cmd c = { 0 };
	char pidtxt[16];

	if (!scene_start(&s, box, "wait"))
		goto out;

	/* KILL waits by default: empty when cgkill returns. */
	if (!is_int(sb_spawn_n(2, SB_SLEEP, NULL, s.target, pids), 0, "wait: spawn 2 sleepers"))
		goto out;
	cmd_run(&c, CMD_MS, "-j", s.target, NULL);
	exit_is(&c, 0);
	json_is(&c, "d['targets'][0]['waited']", "true");
	json_is(&c, "d['targets'][0]['emptied']", "true");
	json_is(&c, "isinstance(d['targets'][0]['empty_ms'], int)", "true");
	ok(sb_file_has(s.target, "cgroup.events", "populated 0"),
	   "KILL waits by default: populated 0 as soon as cgkill returns");
	cmd_free(&c);
	sb_reap();

	/* --no-wait: back once the signal is sent. */
	sb_spawn_n(2, SB_SLEEP, NULL, s.target, pids);
	cmd_run(&c, CMD_MS, "-j", "--no-wait", s.target, NULL);
	exit_is(&c, 0);
	json_is(&c, "d['targets'][0]['waited']", "false");
	json_is(&c, "d['targets'][0]['emptied']", "false");
	json_is(&c, "d['targets'][0]['empty_ms']", "null");
	cmd_free(&c);
	ok(sb_killed_by(pids[0], SIGKILL, 5000) && sb_killed_by(pids[1], SIGKILL, 5000),
	   "--no-wait: the processes died anyway");
	is_int(sb_wait_empty(s.target, 5000), 0, "--no-wait: the cgroup empties");

	/* -s TERM alone does not wait: a TERM-ignorer does not hold it up. */
	ign = term_ignorer(s.target);
	if (!ok(ign > 0, "wait: spawn a process that ignores TERM"))
		goto out;
	cmd_run(&c, CMD_MS, "-j", "-s", "TERM", s.target, NULL);
	exit_is(&c, 0);
	json_is(&c, "d['targets'][0]['waited']", "false");
	/* Waiting would take the default 10 s and exit 3. */
	ok(c.ms < 8000, "-s TERM: returned at once (%llu ms)", (unsigned long long)c.ms);
	ok(sb_alive(ign), "-s TERM: the ignorer lives");
	cmd_free(&c);

	/* --timeout waits by default. */
	cmd_run(&c, CMD_MS, "-j", "-s", "TERM", "--timeout", "300ms", "KILL", s.target, NULL);
	exit_is(&c, 0);
	json_is(&c, "d['targets'][0]['waited']", "true");
	json_is(&c, "d['targets'][0]['emptied']", "true");
	cmd_free(&c);
	ok(sb_killed_by(ign, SIGKILL, 5000), "--timeout: the ignorer died of KILL");

	/* --wait=2s with an ignorer: exit 3 after about 2 s, survivors told. */
	ign = term_ignorer(s.target);
	if (!ok(ign > 0, "wait: spawn another TERM-ignorer"))
		goto out;
	snprintf(pidtxt, sizeof(pidtxt), "%d", (int)ign);
	cmd_run(&c, CMD_MS, "-j", "-s", "TERM", "--wait=2s", s.target, NULL);
	exit_is(&c, 3);
	ok(c.ms >= 1900 && c.ms < sb_deadline_ms(9000), "--wait=2s: gave up after about 2 s (%llu ms)",
	   (unsigned long long)c.ms);
	json_is(&c, "d['targets'][0]['waited']", "true");
	json_is(&c, "d['targets'][0]['emptied']", "false");
	json_is(&c, "d['targets'][0]['error']['errno']", "ETIMEDOUT");
	{
		char want[64];

		snprintf(want, sizeof(want), "[[%d, \"S\"]]", (int)ign);
		json_is(&c, "[[p['pid'], p['state']] for p in d['targets'][0]['survivors']]", want);
	}
	json_is(&c, "d['targets'][0]['survivors'][0]['comm']", self_comm());
	/* On stderr: the message, then one line a survivor with its pid,
	 * state and comm. */
	ok(strstr(c.err, "left after waiting") != NULL, "--wait=2s: stderr says processes are left");
	{
		char line[64];

		snprintf(line, sizeof(line), "%s S . %s", pidtxt, self_comm());
		is_int(count_rows(c.err, line), 1, "--wait=2s: the survivor on stderr: '%s'", line);
	}
	cmd_free(&c);

	/* The short form with an attached duration. */
	cmd_run(&c, CMD_MS, "-s", "TERM", "-w1s", s.target, NULL);
	exit_is(&c, 3);
	ok(c.ms >= 900 && c.ms < sb_deadline_ms(8000), "-w1s: gave up after about 1 s (%llu ms)",
	   (unsigned long long)c.ms);
	cmd_free(&c);
	ok(sb_alive(ign), "--wait=2s: the ignorer is still alive (TERM only)");
out:
	cmd_free(&c);
	scene_end(&s);
}

/* ---- wait_ms = UINT64_MAX ---- */

static void slow_exit(int sig)
{
	struct timespec ts = { 0, 300 * 1000000L };

	(void)sig;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	_exit(0);
}

/* A process in cg that exits 0 300 ms after a TERM. */
static pid_t slow_dier(const char *cg)
{
	return sb_spawn(&(struct sb_proc){ .cgroups = { cg }, .handler_sig = SIGTERM,
					   .handler = slow_exit });
}

static bool exited_zero(pid_t pid)
{
	return sb_count_exited0(&pid, 1, 5000) == 1;
}

static void test_forever(void)
{
	struct scene s;
	pid_t p;

	if (!scene_start(&s, box, "forever"))
		goto out;
	p = slow_dier(s.target);
	if (ok(p > 0, "forever: a process that exits 300 ms after TERM")) {
		cgk_report *rep = NULL;
		int r = kill_opts(s.target, CGK_BACKEND_AUTO, SIGTERM, 0, UINT64_MAX, NULL, &rep);

		ok(r == 0 && cgk_report_emptied(rep),
		   "forever: wait_ms = UINT64_MAX returns 0, emptied (r=%d: %s)", r,
		   cgk_report_message(rep));
		ok(exited_zero(p), "forever: the process exited by itself");
		rep = cgk_report_free(rep);
	}
	p = slow_dier(s.target);
	if (ok(p > 0, "forever: another one")) {
		cgk_options *o = opts_escalate(CGK_BACKEND_AUTO, SIGTERM, UINT64_MAX, UINT64_MAX,
					       SIGKILL);
		cgk_report *rep = NULL;
		int r = cgk_kill(s.target, o, &rep);

		ok(r == 0 && cgk_report_emptied(rep) && cgk_report_n_signals(rep) == 1,
		   "forever: an escalation after UINT64_MAX ms is never due (r=%d, %zu signals)", r,
		   cgk_report_n_signals(rep));
		ok(exited_zero(p), "forever: ... the process exited by itself, no KILL");
		rep = cgk_report_free(rep);
		cgk_options_free(o);
	}
	for (int i = 0; i < 2; i++) {
		static const char *const waits[] = { "--wait=18446744073709551615ms",
						     "--wait=infinity" };
		struct cmd cli;

		p = slow_dier(s.target);
		if (!ok(p > 0, "forever: a %s one", i ? "fourth" : "third"))
			continue;
		cmd_run(&cli, CMD_MS, "-s", "TERM", waits[i], s.target, NULL);
		is_int(cli.status, 0, "forever: cgkill %s exits 0", waits[i]);
		cmd_free(&cli);
		ok(exited_zero(p), "forever: ... the process exited by itself");
	}
out:
	scene_end(&s);
}

/* ---- "-w 5s", and SIGINT during the wait ---- */

static void test_cli(void)
{
	struct scene s;
	char buf[16] = "";
	pid_t p, rec;

	if (!scene_start(&s, box, "cli"))
		goto out;
	p = sb_sleeper(s.target);
	if (ok(p > 0, "cli: a sleeper in the target")) {
		struct cmd cli;

		cmd_run(&cli, CMD_MS, "-w", "5s", s.target, NULL);
		is_int(cli.status, 2, "cli: 'cgkill -w 5s CG' is a usage error (exit 2)");
		ok(strstr(cli.err, "-w5s") && strstr(cli.err, "--wait=5s"),
		   "cli: it says how to write it: %.*s", (int)strcspn(cli.err, "\n"), cli.err);
		cmd_free(&cli);
		ok(sb_alive(p), "cli: ... and nothing was signalled");
		kill(p, SIGKILL);
		sb_killed_by(p, SIGKILL, 3000);
	}

	rec_drain();
	rec = recorder(s.target, SIGTERM);	/* records TERM, lives on */
	if (ok(rec > 0, "cli: a process in the target that survives TERM")) {
		struct rec v[4];
		struct cmd c;
		uint64_t t0;

		if (cmd_start(&c, NULL, "-s", "TERM", "--wait=30s", s.target, NULL) < 0) {
			ok(false, "cli: start cgkill");
			goto out;
		}
		ok(rec_collect(v, 4, 1, 10000, 10) >= 1, "cli: the TERM arrived");
		sb_sleep_ms(300);	/* now it waits */
		t0 = sb_now_ms();
		kill(c.pid, SIGINT);
		cmd_finish(&c, 10000);
		ok(sb_now_ms() - t0 < 1500, "cli: SIGINT ends the wait within ~1 s (%llu ms)",
		   (unsigned long long)(sb_now_ms() - t0));
		is_int(c.status, 130, "cli: exit status 130");
		ok(c.err && strstr(c.err, "interrupted"), "cli: it says 'interrupted': %.*s",
		   c.err ? (int)strcspn(c.err, "\n") : 0, c.err ? c.err : "");
		sb_read(s.target, "cgroup.freeze", buf, sizeof(buf));
		ok(buf[0] == '0', "cli: the target is not left frozen");
		ok(sb_alive(rec), "cli: the TERM survivor is alive");
		cmd_free(&c);
	}
out:
	scene_end(&s);
}

int main(void)
{
	box = sb_start(300);

	test_waiting();
	test_forever();
	test_cli();

	return sb_finish(box);
}
