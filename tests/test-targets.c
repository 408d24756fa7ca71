// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What the command is told to kill and what it says meanwhile: --pid (and
 * cgk_cgroup_of_pid), several targets at once (the exit status of the
 * worst, each done anyway), overlapping targets, the dry run (-p, -n) and
 * the progress and summary of -v.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgkill.h"
#include "support/cgfile.h"
#include "support/cmd.h"
#include "support/json.h"
#include "support/record.h"
#include "support/sandbox.h"
#include "support/scene.h"
#include "support/spawn.h"
#include "support/tap.h"

#define MAX_RECS 256

static char *box;

static char *pidstr(pid_t pid)
{
	static char buf[4][16];
	static unsigned i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%d", (int)pid);
	return buf[i];
}

/* ---- --pid ---- */

static void test_pid(void)
{
	struct scene s;
	struct cmd c = { 0 };
	char *inner = NULL, *cg = NULL, want[4200];
	pid_t p, q, p2;
	int r;

	if (!scene_start(&s, box, "pid"))
		goto out;
	inner = sb_mkdir(s.target, "inner");
	p = sb_sleeper(inner);
	q = sb_sleeper(s.target);	/* in the parent of p's cgroup */
	if (!ok(inner && p > 0 && q > 0, "--pid: a sleeper in T/inner, one in T"))
		goto out;

	r = cgk_cgroup_of_pid(p, &cg);
	is_int(r, 0, "library: cgk_cgroup_of_pid");
	is_str(cg, inner, "library: the cgroup of the pid is T/inner");
	free(cg);

	cmd_run(&c, CMD_MS, "-j", "--pid", pidstr(p), NULL);
	exit_is(&c, 0);
	json_is(&c, "d['targets'][0]['path']", inner);
	json_is(&c, "d['targets'][0]['emptied']", "true");
	cmd_free(&c);
	ok(sb_killed_by(p, SIGKILL, 5000), "--pid: the process died of KILL");
	ok(sb_alive(q), "--pid: the process in the parent cgroup lives");

	/* Two pids: two targets. */
	p = sb_sleeper(inner);
	p2 = sb_sleeper(s.target);
	cmd_run(&c, CMD_MS, "-j", "--pid", pidstr(p), "--pid", pidstr(p2), NULL);
	exit_is(&c, 0);
	snprintf(want, sizeof(want), "[\"%s\", \"%s\"]", inner, s.target);
	json_is(&c, "[t['path'] for t in d['targets']]", want);
	cmd_free(&c);
	ok(sb_killed_by(p, SIGKILL, 5000) && sb_killed_by(p2, SIGKILL, 5000) &&
	   sb_killed_by(q, SIGKILL, 5000), "--pid twice: all three died");

	/* Not a pid: usage. */
	static const char *const bad[] = { "abc", "0", "-5", "", "12x", "99999999999" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cmd_run(&c, CMD_MS, "--pid", bad[i], NULL);
		exit_is(&c, 2);
		ok(strstr(c.err, "invalid pid") != NULL, "--pid '%s': 'invalid pid'", bad[i]);
		cmd_free(&c);
	}
	/* No such process: an error. pid_max itself is never a pid. */
	{
		char pm[32] = "";

		sb_read("/proc/sys/kernel", "pid_max", pm, sizeof(pm));
		pm[strcspn(pm, "\n")] = '\0';
		cmd_run(&c, CMD_MS, "--pid", pm, NULL);
		exit_is(&c, 1);
		if (!ok(strstr(c.err, pm) && strstr(c.err, "ESRCH"),
			"--pid %s: the message names the pid and ESRCH", pm))
			diag("stderr: %s", c.err);
		cmd_free(&c);
	}
out:
	free(inner);
	scene_end(&s);
}

/* ---- several targets ---- */

static void test_targets(void)
{
	struct scene s;
	struct cmd c = { 0 };
	char *a = NULL, *b = NULL, *nope = NULL, *pc = NULL, protfile[] = "/tmp/cgkill-test-prot.XXXXXX";
	char list[4200];
	pid_t pa, pb, ign, pp, pcc;

	if (!scene_start(&s, box, "targets"))
		goto out;
	a = sb_mkdir(s.target, "A");
	b = sb_mkdir(s.target, "B");
	nope = sb_path(s.target, "nope");
	pc = sb_mkdir(s.target, "P/C");

	/* Two good ones. */
	pa = sb_sleeper(a);
	pb = sb_sleeper(b);
	cmd_run(&c, CMD_MS, "-j", a, b, NULL);
	exit_is(&c, 0);
	json_is(&c, "len(d['targets'])", "2");
	json_is(&c, "[t['emptied'] for t in d['targets']]", "[true, true]");
	cmd_free(&c);
	ok(sb_killed_by(pa, SIGKILL, 5000) && sb_killed_by(pb, SIGKILL, 5000), "A B: both killed");

	/* A good one and a missing one: 1, and the good one is done anyway. */
	pa = sb_sleeper(a);
	cmd_run(&c, CMD_MS, "-j", nope, a, NULL);
	exit_is(&c, 1);
	json_is(&c, "[t['error'] and t['error']['errno'] for t in d['targets']]", "[\"ENOENT\", null]");
	ok(strstr(c.err, "nope") != NULL, "missing target: named on stderr");
	cmd_free(&c);
	ok(sb_killed_by(pa, SIGKILL, 5000), "missing + A: A was killed");

	/* Timed out (3) beats error (1). */
	ign = term_ignorer(a);
	cmd_run(&c, CMD_MS, "-s", "TERM", "--wait=500ms", a, nope, NULL);
	exit_is(&c, 3);
	cmd_free(&c);
	cmd_run(&c, CMD_MS, "-s", "TERM", "--wait=500ms", nope, a, NULL);
	exit_is(&c, 3);
	cmd_free(&c);
	ok(sb_alive(ign), "TERM-ignorer still alive");

	/* Refused (4) beats timed out (3) and success. */
	snprintf(list, sizeof(list), "# test\n%s\n", sb_rel_v2(b));
	if (!sb_temp_file(protfile, list, strlen(list)))
		diag("cannot write %s: %m", protfile);
	pb = sb_sleeper(b);
	cmd_run(&c, CMD_MS, "-j", "--protected", protfile, "-s", "TERM", "--wait=500ms", a, b, NULL);
	exit_is(&c, 4);
	json_is(&c, "[t['refused'] for t in d['targets']]", "[null, \"protected\"]");
	cmd_free(&c);
	ok(sb_alive(pb), "protected target: its process lives");
	cmd_run(&c, CMD_MS, "--protected", protfile, b, a, NULL);
	exit_is(&c, 4);
	cmd_free(&c);
	ok(sb_killed_by(ign, SIGKILL, 5000), "refused + A: A was killed all the same");
	ok(sb_alive(pb), "refused + A: the protected one lives");
	kill(pb, SIGKILL);
	unlink(protfile);

	/* Overlapping: P and its descendant P/C, either order. */
	for (int order = 0; order < 2; order++) {
		char *p = sb_path(s.target, "P");

		pp = sb_sleeper(p);
		pcc = sb_sleeper(pc);
		if (order == 0)
			cmd_run(&c, CMD_MS, "-j", p, pc, NULL);
		else
			cmd_run(&c, CMD_MS, "-j", pc, p, NULL);
		exit_is(&c, 0);
		json_is(&c, "[t['error'] for t in d['targets']]", "[null, null]");
		json_is(&c, "[t['emptied'] for t in d['targets']]", "[true, true]");
		cmd_free(&c);
		ok(sb_killed_by(pp, SIGKILL, 5000) && sb_killed_by(pcc, SIGKILL, 5000),
		   "overlap (%s): both processes killed", order ? "P/C P" : "P P/C");
		free(p);
	}
	/* The same with a graceful signal: the second target finds the tree
	 * already empty and signals nothing. */
	{
		char *p = sb_path(s.target, "P");

		pp = term_exiter(p);
		pcc = term_exiter(pc);
		cmd_run(&c, CMD_MS, "-j", "-s", "TERM", "--timeout", "5s", "KILL", p, pc, NULL);
		exit_is(&c, 0);
		json_is(&c, "[t['signalled'] for t in d['targets']]", "[2, 0]");
		json_is(&c, "[t['signals'] for t in d['targets']]", "[[\"TERM\"], [\"TERM\"]]");
		json_is(&c, "[t['emptied'] for t in d['targets']]", "[true, true]");
		cmd_free(&c);
		free(p);
	}
out:
	free(a);
	free(b);
	free(nope);
	free(pc);
	scene_end(&s);
}

/* ---- -p / -n ---- */

static void test_print(void)
{
	struct rec v[MAX_RECS];
	struct scene s;
	struct cmd c = { 0 };
	char *subdir = NULL, line[128];
	pid_t p[3];
	const char *const opts[] = { "-p", "-n", "--print", "--dry-run" };

	if (!scene_start(&s, box, "print"))
		goto out;
	subdir = sb_mkdir(s.target, "sub");
	rec_drain();
	p[0] = sb_spawn(&(struct sb_proc){ .cgroups = { s.target }, .record = { SIGTERM },
					     .comm = "worker-0" });
	p[1] = sb_spawn(&(struct sb_proc){ .cgroups = { s.target }, .record = { SIGTERM },
					     .comm = "worker-1" });
	p[2] = sb_spawn(&(struct sb_proc){ .cgroups = { subdir }, .record = { SIGTERM },
					     .comm = "worker-2" });
	if (!ok(subdir && p[0] > 0 && p[1] > 0 && p[2] > 0, "print: three recorders"))
		goto out;
	for (size_t o = 0; o < sizeof(opts) / sizeof(opts[0]); o++) {
		cmd_run(&c, CMD_MS, opts[o], "-s", "TERM", s.target, NULL);
		exit_is(&c, 0);
		is_int(count_lines_with(c.out, ""), 4, "%s: a heading and three lines", opts[o]);
		is_int(count_rows(c.out, "PID STATE CGROUP COMM"), 1, "%s: the heading", opts[o]);
		for (int i = 0; i < 3; i++) {
			snprintf(line, sizeof(line), "%d S %s worker-%d", (int)p[i],
				 i < 2 ? "." : "sub", i);
			ok(count_rows(c.out, line) == 1, "%s: the line '%s'", opts[o], line);
		}
		cmd_free(&c);
	}
	/* Default signal KILL: still nothing happens. */
	cmd_run(&c, CMD_MS, "-p", s.target, NULL);
	exit_is(&c, 0);
	cmd_free(&c);
	is_int(rec_collect(v, MAX_RECS, 1, 300, 0), 0, "dry runs: nothing was signalled");
	ok(sb_alive(p[0]) && sb_alive(p[1]) && sb_alive(p[2]), "dry runs: all alive");
	ok(sb_file_has(s.target, "cgroup.freeze", "0"), "dry runs: nothing frozen");

	/* With -j: the same list in the report, nothing on stdout besides. */
	cmd_run(&c, CMD_MS, "-p", "-j", s.target, NULL);
	exit_is(&c, 0);
	{
		char want[256];

		snprintf(want, sizeof(want),
			 "[[%d, \"worker-0\", \"\", \"S\"], [%d, \"worker-1\", \"\", \"S\"], "
			 "[%d, \"worker-2\", \"sub\", \"S\"]]", (int)p[0], (int)p[1], (int)p[2]);
		json_is(&c, "sorted([p['pid'], p['comm'], p['cgroup'], p['state']] "
			    "for p in d['targets'][0]['listed'])", want);
	}
	json_is(&c, "d['targets'][0]['signalled']", "0");
	/* the cgroups the listing walked: T and T/sub */
	json_is(&c, "d['targets'][0]['cgroups']", "2");
	cmd_free(&c);
	ok(sb_alive(p[0]) && sb_alive(p[1]) && sb_alive(p[2]), "-p -j: all alive");
out:
	free(subdir);
	scene_end(&s);
}

/* ---- -v ---- */

/* Lines "... left after <digits>" (the final "left after waiting" is not
 * progress). */
static unsigned progress_lines(const char *err)
{
	static const char key[] = "left after ";
	unsigned n = 0;

	for (const char *l = strstr(err, key); l; l = strstr(l + 1, key))
		n += l[sizeof(key) - 1] >= '0' && l[sizeof(key) - 1] <= '9';
	return n;
}

static void test_verbose(void)
{
	struct scene s;
	struct cmd c = { 0 };
	char want[4200];
	pid_t p;

	if (!scene_start(&s, box, "verbose"))
		goto out;
	p = term_ignorer(s.target);
	if (!ok(p > 0, "-v: a TERM-ignorer"))
		goto out;
	cmd_run(&c, CMD_MS, "-v", "-s", "TERM", "--wait=1200ms", s.target, NULL);
	exit_is(&c, 3);
	snprintf(want, sizeof(want), "cgkill: %s: 1 process(es) left after ", s.target);
	{
		/* "... left after 250 ms" lines, the waited time going up; not
		 * the final "... left after waiting 1200 ms". */
		unsigned lines = 0;
		long last = -1;
		bool up = true;

		for (const char *l = strstr(c.err, want); l; l = strstr(l + 1, want)) {
			const char *num = l + strlen(want);

			if (*num < '0' || *num > '9')
				continue;
			lines++;
			up &= atol(num) > last;
			last = atol(num);
		}
		ok(lines >= 3, "-v: %u progress lines during the wait ('%s<N> ms')", lines, want);
		ok(up && last >= 500, "-v: the waited time grows (last %ld ms)", last);
	}
	cmd_free(&c);

	cmd_run(&c, CMD_MS, "-s", "TERM", "--wait=600ms", s.target, NULL);
	exit_is(&c, 3);
	is_int(progress_lines(c.err), 0, "without -v: no progress lines");
	cmd_free(&c);
	cmd_run(&c, CMD_MS, "-v", "-q", "-s", "TERM", "--wait=600ms", s.target, NULL);
	exit_is(&c, 3);
	is_int(progress_lines(c.err), 0, "-v -q: no progress lines");
	cmd_free(&c);

	/* A summary of what was done. */
	cmd_run(&c, CMD_MS, "-v", "-s", "TERM", "--timeout", "300ms", "KILL", s.target, NULL);
	exit_is(&c, 0);
	if (!ok(strstr(c.err, "TERM via freeze, then KILL via ") != NULL,
		"-v: the summary names each signal and its backend"))
		diag("stderr: %s", c.err);
	ok(strstr(c.err, "empty after") != NULL, "-v: ... and when it emptied");
	cmd_free(&c);
out:
	scene_end(&s);
}

int main(void)
{
	box = sb_start(300);

	test_pid();
	test_targets();
	test_print();
	test_verbose();

	return sb_finish(box);
}
