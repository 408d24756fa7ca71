// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Issue 3 against the real kernel: targets (--pid, several at once,
 * overlapping), the dry run (-p, -n), the JSON report (-j: every field,
 * arbitrary bytes in process and cgroup names, errors, refusals, a
 * fallback), progress (-v), and the same report from the library
 * (cgk_report_json).
 *
 * The JSON is checked with Python's json module, strictly: UTF-8, one
 * document, no duplicate keys (tests/cmd.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgkill.h"
#include "cmd.h"
#include "sandbox.h"
#include "tap.h"

#define CMD_MS 60000	/* deadline for one run of the command (loaded CI machines) */
#define MAX_RECS 256
#define NOBODY 65534

static char *box;

/* The path of dir relative to the v2 mount ("/cgkill-test.1.0/x/T"), as
 * the protected list and /proc/PID/cgroup spell it. */
static const char *rel_v2(const char *dir)
{
	return dir + strlen(sb_mount(SB_V2));
}

static char *pidstr(pid_t pid)
{
	static char buf[4][16];
	static unsigned i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%d", (int)pid);
	return buf[i];
}

static unsigned count_nl(const char *text)
{
	unsigned n = 0;

	for (; *text; text++)
		n += *text == '\n';
	return n;
}

/* ---- --pid ---- */

static void test_pid(void)
{
	struct scene s;
	struct cmd c = { 0 };
	char *inner = NULL, want[4200], buf[4096];
	pid_t p, q, p2;
	int r;

	if (!scene_start(&s, box, "pid"))
		goto out;
	inner = sb_mkdir(s.target, "inner");
	p = sb_sleeper(inner);
	q = sb_sleeper(s.target);	/* in the parent of p's cgroup */
	if (!ok(inner && p > 0 && q > 0, "--pid: a sleeper in T/inner, one in T"))
		goto out;

	r = cgk_cgroup_of_pid(p, buf, sizeof(buf));
	is_int(r, 0, "library: cgk_cgroup_of_pid");
	is_str(buf, inner, "library: the cgroup of the pid is T/inner");

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
	pid_t pa, pb, ign, pp, pcc;
	int fd;

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
	fd = mkostemp(protfile, O_CLOEXEC);
	if (fd >= 0) {
		dprintf(fd, "# test\n%s\n", rel_v2(b));
		close(fd);
	}
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
	p[0] = rec_spawn(&(struct rec_spec){ .cgroup = s.target, .record = { SIGTERM },
					     .comm = "worker-0" });
	p[1] = rec_spawn(&(struct rec_spec){ .cgroup = s.target, .record = { SIGTERM },
					     .comm = "worker-1" });
	p[2] = rec_spawn(&(struct rec_spec){ .cgroup = subdir, .record = { SIGTERM },
					     .comm = "worker-2" });
	if (!ok(subdir && p[0] > 0 && p[1] > 0 && p[2] > 0, "print: three recorders"))
		goto out;
	for (size_t o = 0; o < sizeof(opts) / sizeof(opts[0]); o++) {
		cmd_run(&c, CMD_MS, opts[o], "-s", "TERM", s.target, NULL);
		exit_is(&c, 0);
		is_int(count_nl(c.out), 4, "%s: a heading and three lines", opts[o]);
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
	ok(file_has(s.target, "cgroup.freeze", "0"), "dry runs: nothing frozen");

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

/* ---- -j: the fields ---- */

static void test_json_fields(void)
{
	static const char keys[] =
		"[\"backend\", \"backends\", \"cgroups\", \"emptied\", \"empty_ms\", \"error\", \"fallback_error\", "
		"\"fell_back_from\", \"hierarchy\", \"listed\", \"not_permitted\", \"path\", \"refused\", "
		"\"signal_ms\", \"signalled\", \"signals\", \"survivors\", \"unreachable\", \"waited\"]";
	struct scene s;
	struct cmd c = { 0 };
	pid_t a, b;
	char *x = NULL;

	if (!scene_start(&s, box, "fields"))
		goto out;
	x = sb_mkdir(s.target, "x");
	a = term_ignorer(s.target);
	b = term_exiter(x);
	if (!ok(x && a > 0 && b > 0, "fields: a TERM-ignorer and a TERM-exiter"))
		goto out;
	cmd_run(&c, CMD_MS, "-j", "-s", "TERM", "--timeout", "300ms", "KILL", s.target, NULL);
	exit_is(&c, 0);
	ok(json_valid(c.out), "fields: stdout is one valid JSON document");
	json_is(&c, "sorted(d.keys())", "[\"schema\", \"targets\", \"version\"]");
	json_is(&c, "d['schema']", "1");
	json_is(&c, "d['version']", CGK_VERSION);
	json_is(&c, "sorted(d['targets'][0].keys())", keys);
	json_is(&c, "d['targets'][0]['path']", s.target);
	json_is(&c, "d['targets'][0]['hierarchy']", "v2");
	json_is(&c, "d['targets'][0]['backend'] in ('freeze', 'kernel')", "true");
	json_is(&c, "d['targets'][0]['fell_back_from']", "null");
	json_is(&c, "d['targets'][0]['fallback_error']", "null");
	json_is(&c, "d['targets'][0]['refused']", "null");
	json_is(&c, "d['targets'][0]['signals']", "[\"TERM\", \"KILL\"]");
	json_is(&c, "d['targets'][0]['backends'][0]", "freeze");
	json_is(&c, "d['targets'][0]['backends'][1] == d['targets'][0]['backend']", "true");
	json_is(&c, "d['targets'][0]['cgroups']", "2");
	/* TERM reached both; KILL (kernel backend) is not counted, or
	 * (freeze) counts the one left. */
	json_is(&c, "d['targets'][0]['signalled'] in (2, 3)", "true");
	json_is(&c, "d['targets'][0]['unreachable']", "0");
	json_is(&c, "d['targets'][0]['not_permitted']", "0");
	json_is(&c, "d['targets'][0]['waited']", "true");
	json_is(&c, "d['targets'][0]['emptied']", "true");
	json_is(&c, "d['targets'][0]['survivors']", "[]");
	json_is(&c, "300 <= d['targets'][0]['signal_ms'] <= d['targets'][0]['empty_ms']", "true");
	json_is(&c, "d['targets'][0]['error']", "null");
	if (!ok(c.err[0] == '\0', "fields: nothing on stderr"))
		diag("stderr: %s", c.err);
	cmd_free(&c);
out:
	free(x);
	scene_end(&s);
}

/* ---- -j: arbitrary bytes in names ---- */

/* A comm with a quote, a backslash, control characters, DEL, an invalid
 * byte, a valid two-byte sequence, a truncated three-byte one, and the
 * parentheses /proc/PID/stat wraps comm in. 14 bytes: fits in comm. */
static const char weird_comm[] = "q\"\\\x01\n\x7f\xff\xc3\xa9\xe2\x82)(x";
/* As documented in lib/report.c: escapes for '"', '\\' and controls, valid
 * UTF-8 as is, U+FFFD for each byte of an invalid sequence. (Python's own
 * errors='replace' would merge \xe2\x82 into one U+FFFD.) */
static const char weird_expect[] = "'q\"\\\\\\x01\\n\\x7f\\ufffd\\u00e9\\ufffd\\ufffd)(x'";
/* Text output: control characters, DEL and each byte of an invalid
 * sequence as '?'; valid UTF-8 as it is. */
static const char weird_text[] = "q\"\\????\xc3\xa9?\?)(x";

static void test_json_comm(void)
{
	struct scene s;
	struct cmd c = { 0 };
	char *odd = NULL, expr[512], line[256];
	pid_t p, q;

	if (!scene_start(&s, box, "comm"))
		goto out;
	/* A cgroup name with a quote, a backslash, a space and UTF-8. */
	odd = sb_mkdir(s.target, "we\"ird\\ dir \xc3\xa9");
	rec_drain();
	p = rec_spawn(&(struct rec_spec){ .cgroup = s.target, .record = { SIGTERM },
					  .comm = weird_comm });
	q = odd ? term_ignorer(odd) : -1;
	if (!ok(p > 0 && q > 0, "comm: a process with a weird name, one in a weird cgroup"))
		goto out;
	{
		char st[512] = "", dir[64];

		snprintf(dir, sizeof(dir), "/proc/%d", (int)p);
		sb_read(dir, "stat", st, sizeof(st));
		ok(memmem(st, sizeof(st), weird_comm, strlen(weird_comm)) != NULL,
		   "comm: the kernel kept all 14 bytes");
	}

	cmd_run(&c, CMD_MS, "-p", "-j", s.target, NULL);
	exit_is(&c, 0);
	ok(json_valid(c.out), "comm: -p -j output is valid JSON");
	snprintf(expr, sizeof(expr), "[p['comm'] == %s for p in d['targets'][0]['listed'] if p['pid'] == %d]",
		 weird_expect, (int)p);
	json_is(&c, expr, "[true]");
	snprintf(expr, sizeof(expr), "[p['cgroup'] for p in d['targets'][0]['listed'] if p['pid'] == %d]",
		 (int)q);
	json_is(&c, expr, "[\"we\\\"ird\\\\ dir \\u00e9\"]");
	cmd_free(&c);

	/* The text listing: one line for it, no raw control characters. */
	cmd_run(&c, CMD_MS, "-p", s.target, NULL);
	exit_is(&c, 0);
	snprintf(line, sizeof(line), "%d S . %s", (int)p, weird_text);
	ok(count_rows(c.out, line) == 1, "comm: -p shows it on one line, controls as '?'");
	is_int(count_nl(c.out), 3, "comm: -p prints a heading and a line for each process");
	cmd_free(&c);

	/* As a survivor: in the JSON and on stderr. */
	cmd_run(&c, CMD_MS, "-j", "-s", "TERM", "--wait=300ms", s.target, NULL);
	exit_is(&c, 3);
	snprintf(expr, sizeof(expr), "[p['comm'] == %s for p in d['targets'][0]['survivors'] if p['pid'] == %d]",
		 weird_expect, (int)p);
	json_is(&c, expr, "[true]");
	snprintf(line, sizeof(line), "%d S . %s", (int)p, weird_text);
	ok(count_rows(c.err, line) == 1, "comm: the survivor on stderr, controls as '?'");
	cmd_free(&c);

	/* A target path with the same odd bytes. */
	cmd_run(&c, CMD_MS, "-j", odd, NULL);
	exit_is(&c, 0);
	json_is(&c, "d['targets'][0]['path'].endswith('/T/we\"ird\\\\ dir \\u00e9')", "true");
	cmd_free(&c);
	ok(sb_killed_by(q, SIGKILL, 5000), "comm: the process in the odd cgroup was killed");
out:
	free(odd);
	scene_end(&s);
}

/* ---- -j: errors and refusals ---- */

static void test_json_errors(void)
{
	struct scene s;
	struct cmd c = { 0 };
	char *nope = NULL, protfile[] = "/tmp/cgkill-test-prot.XXXXXX";
	pid_t p;
	int fd;

	if (!scene_start(&s, box, "errors"))
		goto out;
	nope = sb_path(s.target, "nope");
	cmd_run(&c, CMD_MS, "-j", nope, NULL);
	exit_is(&c, 1);
	ok(json_valid(c.out), "missing cgroup: valid JSON");
	json_is(&c, "d['targets'][0]['path']", nope);
	json_is(&c, "d['targets'][0]['error']['errno']", "ENOENT");
	json_is(&c, "sorted(d['targets'][0]['error'])", "[\"errno\", \"message\"]");
	json_is(&c, "'nope' in d['targets'][0]['error']['message']", "true");
	json_is(&c, "[d['targets'][0][k] for k in ('hierarchy', 'backend', 'refused', 'empty_ms')]",
		"[null, null, null, null]");
	json_is(&c, "[d['targets'][0][k] for k in ('signals', 'survivors', 'emptied', 'waited')]",
		"[[], [], false, false]");
	ok(strstr(c.err, "nope") != NULL, "missing cgroup: also told on stderr");
	cmd_free(&c);

	cmd_run(&c, CMD_MS, "-j", "/proc", NULL);
	exit_is(&c, 1);
	json_is(&c, "d['targets'][0]['error']['errno'] in ('EINVAL', 'ENOENT', 'ENOTDIR')", "true");
	cmd_free(&c);

	/* Refusals: the protected list, and a "no" from -i. */
	p = sb_sleeper(s.target);
	fd = mkostemp(protfile, O_CLOEXEC);
	if (!ok(p > 0 && fd >= 0, "refusals: a sleeper and a protected list"))
		goto out;
	dprintf(fd, "%s\n", rel_v2(s.parent));	/* a glob would work too */
	dprintf(fd, "%s/*\n", rel_v2(s.parent));
	close(fd);
	cmd_run(&c, CMD_MS, "-j", "--protected", protfile, s.target, NULL);
	exit_is(&c, 4);
	ok(json_valid(c.out), "protected: valid JSON");
	json_is(&c, "d['targets'][0]['refused']", "protected");
	json_is(&c, "d['targets'][0]['error']['errno']", "EPERM");
	json_is(&c, "'protected' in d['targets'][0]['error']['message']", "true");
	json_is(&c, "d['targets'][0]['signals']", "[]");
	cmd_free(&c);
	ok(sb_alive(p), "protected: the process lives");
	unlink(protfile);

	cmd_run_input(&c, "n\n", CMD_MS, "-j", "-i", s.target, NULL);
	exit_is(&c, 4);
	json_is(&c, "d['targets'][0]['refused']", "declined");
	json_is(&c, "d['targets'][0]['error']['errno']", "ECANCELED");
	if (!ok(strstr(c.err, "1 process(es)") != NULL, "-i: the question counts the processes"))
		diag("stderr: %s", c.err);
	cmd_free(&c);
	ok(sb_alive(p), "-i, answered n: the process lives");
	cmd_run_input(&c, "y\n", CMD_MS, "-j", "-i", s.target, NULL);
	exit_is(&c, 0);
	json_is(&c, "d['targets'][0]['refused']", "null");
	cmd_free(&c);
	ok(sb_killed_by(p, SIGKILL, 5000), "-i, answered y: killed");
out:
	free(nope);
	scene_end(&s);
}

/* ---- -j: a fallback, with why ---- */

/* As an unprivileged user in a subtree delegated to it: cgroup.kill is
 * not delegated (it stays root's), so the kernel backend fails with EACCES
 * and auto falls back to the freeze backend. */
static void test_json_fallback(void)
{
	static const char *const files[] = {
		"", "cgroup.procs", "cgroup.threads", "cgroup.subtree_control", "cgroup.freeze",
	};
	struct rec v[MAX_RECS];
	struct scene s;
	struct cmd c = { 0 };
	pid_t p;
	size_t n;

	if (!scene_start(&s, box, "fallback"))
		goto out;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *f = sb_path(s.target, files[i]);

		if (chown(f, NOBODY, NOBODY) < 0)
			diag("chown %s: %m", f);
		free(f);
	}
	rec_drain();
	p = rec_spawn(&(struct rec_spec){ .cgroup = s.target, .record = { SIGUSR1 }, .uid = NOBODY });
	if (!ok(p > 0, "fallback: a process of uid %d in a cgroup delegated to it", NOBODY))
		goto out;
	cmd_uid = NOBODY;
	cmd_gid = NOBODY;
	cmd_run(&c, CMD_MS, "-j", "-s", "USR1", s.target, NULL);
	exit_is(&c, 0);
	json_is(&c, "d['targets'][0]['backend']", "freeze");
	json_is(&c, "d['targets'][0]['fell_back_from']", "null");	/* kernel does not do USR1 */
	cmd_free(&c);
	n = rec_collect(v, MAX_RECS, 1, 5000, 200);
	is_int(rec_count(v, n, REC_SIG, p, SIGUSR1), 1, "fallback: USR1 arrived once");

	cmd_run(&c, CMD_MS, "-j", s.target, NULL);
	exit_is(&c, 0);
	json_is(&c, "d['targets'][0]['backend']", "freeze");
	json_is(&c, "d['targets'][0]['fell_back_from']", "kernel");
	json_is(&c, "d['targets'][0]['fallback_error']['errno']", "EACCES");
	/* Sent once, by the backend that took over. */
	json_is(&c, "[d['targets'][0]['signals'], d['targets'][0]['backends']]",
		"[[\"KILL\"], [\"freeze\"]]");
	json_is(&c, "d['targets'][0]['emptied']", "true");
	json_is(&c, "d['targets'][0]['error']", "null");
	cmd_free(&c);
	cmd_uid = 0;
	cmd_gid = 0;
	ok(sb_killed_by(p, SIGKILL, 5000), "fallback: the process died of KILL");
out:
	cmd_uid = 0;
	cmd_gid = 0;
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

/* ---- the library: the same report, as JSON ---- */

static void test_lib_json(void)
{
	struct cgk_options o = CGK_OPTIONS_INIT;
	struct cgk_report rep[3];
	const struct cgk_report *list[3] = { &rep[0], &rep[1], &rep[2] };
	struct scene s;
	char *nope = NULL, *text = NULL, expr[512], want[64];
	size_t len = 0;
	FILE *f;
	pid_t a, b;
	int r;

	memset(rep, 0, sizeof(rep));
	if (!scene_start(&s, box, "libjson"))
		goto out;
	nope = sb_path(s.target, "nope");
	a = rec_spawn(&(struct rec_spec){ .cgroup = s.target, .ignore = { SIGTERM }, .comm = "lib-a" });
	b = term_exiter(s.target);
	if (!ok(a > 0 && b > 0, "library json: two processes"))
		goto out;

	/* A dry run, a kill with escalation, a failure: one document. */
	o.flags = CGK_DRY_RUN;
	r = cgk_kill(s.target, &o, &rep[0]);
	is_int(r, 0, "library json: dry run");
	is_int(rep[0].listed.n, 2, "library json: two listed");
	o.flags = 0;
	o.signal = SIGTERM;
	o.n_escalations = 1;
	o.escalations[0] = (struct cgk_escalation){ .after_ms = 300, .signal = SIGKILL };
	r = cgk_kill(s.target, &o, &rep[1]);
	is_int(r, 0, "library json: kill with escalation");
	r = cgk_kill(nope, &o, &rep[2]);
	is_int(r, -ENOENT, "library json: a missing cgroup");

	f = open_memstream(&text, &len);
	r = f ? cgk_report_json(list, 3, f) : -ENOMEM;
	if (f)
		fclose(f);
	is_int(r, 0, "cgk_report_json returns 0");
	if (!text)
		goto out;
	{
		struct cmd c = { .out = text };

		snprintf(c.line, sizeof(c.line), "cgk_report_json");
		ok(json_valid(text), "library json: valid JSON");
		json_is(&c, "len(d['targets'])", "3");
		snprintf(expr, sizeof(expr), "sorted(p['comm'] for p in d['targets'][0]['listed'])");
		json_is(&c, expr, "[\"lib-a\", \"test-report\"]");
		json_is(&c, "d['targets'][1]['signals']", "[\"TERM\", \"KILL\"]");
		snprintf(want, sizeof(want), "%u", rep[1].signalled);
		json_is(&c, "d['targets'][1]['signalled']", want);
		snprintf(want, sizeof(want), "%llu", (unsigned long long)rep[1].signal_ms);
		json_is(&c, "d['targets'][1]['signal_ms']", want);
		snprintf(want, sizeof(want), "%llu", (unsigned long long)rep[1].empty_ms);
		json_is(&c, "d['targets'][1]['empty_ms']", want);
		json_is(&c, "d['targets'][1]['backend']", cgk_backend_name(rep[1].backend));
		json_is(&c, "d['targets'][1]['path']", s.target);
		json_is(&c, "d['targets'][2]['error']['errno']", "ENOENT");
		json_is(&c, "d['targets'][2]['error']['message']", rep[2].message);
	}
	ok(sb_killed_by(a, SIGKILL, 5000), "library json: the TERM-ignorer died of KILL");
out:
	for (int i = 0; i < 3; i++)
		cgk_report_free(&rep[i]);
	free(text);
	free(nope);
	scene_end(&s);
}

int main(void)
{
	sb_init(900);
	no_plan();
	rec_init();
	sb_require_root();
	if (!sb_mount(SB_V2))
		skip_all("no cgroup v2 mount");
	box = sb_create(SB_V2);
	if (!box)
		bail_out("cannot create a v2 sandbox: %m");
	/* The unprivileged test runs the command as nobody. */
	chmod(box, 0755);
	note("sandbox %s, command %s", box, cmd_path());
	if (!have_python())
		diag("python3 is missing: JSON checks are skipped");

	test_pid();
	test_targets();
	test_print();
	test_json_fields();
	test_json_comm();
	test_json_errors();
	test_json_fallback();
	test_verbose();
	test_lib_json();

	ok(sb_destroy(box) == 0, "sandbox removed");
	free(box);
	return done_testing();
}
