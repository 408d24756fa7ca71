// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The JSON report (-j) against the real kernel: every field of a kill with
 * escalation, arbitrary bytes in process and cgroup names, errors and
 * refusals, a fallback with its reason, and the same report from the
 * library (cgk_report_json).
 *
 * The JSON is checked with Python's json module, strictly: UTF-8, one
 * document, no duplicate keys (support/json.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgkill.h"
#include "support/cgfile.h"
#include "support/cmd.h"
#include "support/json.h"
#include "support/kill.h"
#include "support/record.h"
#include "support/sandbox.h"
#include "support/scene.h"
#include "support/spawn.h"
#include "support/tap.h"

#define MAX_RECS 256
#define NOBODY 65534

static char *box;

/* ---- -j: the fields ---- */

static void test_json_fields(void)
{
	static const char keys[] =
		"[\"backend\", \"backends\", \"cgroups\", \"emptied\", \"empty_ms\", \"error\", \"fallback_error\", "
		"\"fell_back_from\", \"hierarchy\", \"listed\", \"not_permitted\", \"path\", \"reap\", \"refused\", "
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
	p = sb_spawn(&(struct sb_proc){ .cgroups = { s.target }, .record = { SIGTERM },
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
	is_int(count_lines_with(c.out, ""), 3, "comm: -p prints a heading and a line for each process");
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
	char *nope = NULL, protfile[] = "/tmp/cgkill-test-prot.XXXXXX", list[8500];
	pid_t p;

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
	/* The parent, and a glob for what is below it (either would do). */
	snprintf(list, sizeof(list), "%s\n%s/*\n", sb_rel_v2(s.parent), sb_rel_v2(s.parent));
	if (!ok(p > 0 && sb_temp_file(protfile, list, strlen(list)),
		"refusals: a sleeper and a protected list"))
		goto out;
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

	cmd_run_opts(&c, &(struct cmd_opts){ .input = "n\n" }, CMD_MS, "-j", "-i", s.target, NULL);
	exit_is(&c, 4);
	json_is(&c, "d['targets'][0]['refused']", "declined");
	json_is(&c, "d['targets'][0]['error']['errno']", "ECANCELED");
	if (!ok(strstr(c.err, "1 process(es)") != NULL, "-i: the question counts the processes"))
		diag("stderr: %s", c.err);
	cmd_free(&c);
	ok(sb_alive(p), "-i, answered n: the process lives");
	cmd_run_opts(&c, &(struct cmd_opts){ .input = "y\n" }, CMD_MS, "-j", "-i", s.target, NULL);
	exit_is(&c, 0);
	json_is(&c, "d['targets'][0]['refused']", "null");
	cmd_free(&c);
	ok(sb_killed_by(p, SIGKILL, 5000), "-i, answered y: killed");
out:
	free(nope);
	scene_end(&s);
}

/* As an unprivileged user in a subtree delegated to it: cgroup.kill is
 * not delegated (it stays root's), so the kernel backend fails with EACCES
 * and auto falls back to the freeze backend. */
static void test_json_fallback(void)
{
	static const char *const files[] = {
		"", "cgroup.procs", "cgroup.threads", "cgroup.subtree_control", "cgroup.freeze",
	};
	struct cmd_opts nobody = { .uid = NOBODY };
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
	p = sb_spawn(&(struct sb_proc){ .cgroups = { s.target }, .record = { SIGUSR1 },
					 .uid = NOBODY });
	if (!ok(p > 0, "fallback: a process of uid %d in a cgroup delegated to it", NOBODY))
		goto out;
	cmd_run_opts(&c, &nobody, CMD_MS, "-j", "-s", "USR1", s.target, NULL);
	exit_is(&c, 0);
	json_is(&c, "d['targets'][0]['backend']", "freeze");
	json_is(&c, "d['targets'][0]['fell_back_from']", "null");	/* kernel does not do USR1 */
	cmd_free(&c);
	n = rec_collect(v, MAX_RECS, 1, 5000, 200);
	is_int(rec_count(v, n, REC_SIG, p, SIGUSR1), 1, "fallback: USR1 arrived once");

	cmd_run_opts(&c, &nobody, CMD_MS, "-j", s.target, NULL);
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
	ok(sb_killed_by(p, SIGKILL, 5000), "fallback: the process died of KILL");
out:
	scene_end(&s);
}

/* ---- the library: the same report, as JSON ---- */

static void test_lib_json(void)
{
	cgk_options *dry = opts_new(CGK_BACKEND_AUTO, SIGKILL, CGK_DRY_RUN, KILL_WAIT_MS, NULL);
	cgk_options *o = opts_escalate(CGK_BACKEND_AUTO, SIGTERM, KILL_WAIT_MS, 300, SIGKILL);
	cgk_report *rep[3] = { NULL, NULL, NULL };
	struct scene s;
	char *nope = NULL, *text = NULL, expr[512], want[64];
	size_t len = 0;
	FILE *f;
	pid_t a, b;
	int r;

	if (!scene_start(&s, box, "libjson"))
		goto out;
	nope = sb_path(s.target, "nope");
	a = sb_spawn(&(struct sb_proc){ .cgroups = { s.target }, .ignore = { SIGTERM },
					.comm = "lib-a" });
	b = term_exiter(s.target);
	if (!ok(a > 0 && b > 0, "library json: two processes"))
		goto out;

	/* A dry run, a kill with escalation, a failure: one document. */
	r = cgk_kill(s.target, dry, &rep[0]);
	is_int(r, 0, "library json: dry run");
	is_int(cgk_report_n_processes(rep[0], CGK_LIST_LISTED), 2, "library json: two listed");
	r = cgk_kill(s.target, o, &rep[1]);
	is_int(r, 0, "library json: kill with escalation");
	r = cgk_kill(nope, o, &rep[2]);
	is_int(r, -ENOENT, "library json: a missing cgroup");

	f = open_memstream(&text, &len);
	r = f ? cgk_report_json((const cgk_report *const *)rep, 3, f) : -ENOMEM;
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
		snprintf(want, sizeof(want), "[\"lib-a\", \"%s\"]", self_comm());
		json_is(&c, expr, want);
		json_is(&c, "d['targets'][1]['signals']", "[\"TERM\", \"KILL\"]");
		snprintf(want, sizeof(want), "%u", cgk_report_signalled(rep[1]));
		json_is(&c, "d['targets'][1]['signalled']", want);
		snprintf(want, sizeof(want), "%llu", (unsigned long long)cgk_report_signal_ms(rep[1]));
		json_is(&c, "d['targets'][1]['signal_ms']", want);
		snprintf(want, sizeof(want), "%llu", (unsigned long long)cgk_report_empty_ms(rep[1]));
		json_is(&c, "d['targets'][1]['empty_ms']", want);
		json_is(&c, "d['targets'][1]['backend']", cgk_backend_name(cgk_report_backend(rep[1])));
		json_is(&c, "d['targets'][1]['path']", s.target);
		json_is(&c, "d['targets'][2]['error']['errno']", "ENOENT");
		json_is(&c, "d['targets'][2]['error']['message']", cgk_report_message(rep[2]));
	}
	ok(sb_killed_by(a, SIGKILL, 5000), "library json: the TERM-ignorer died of KILL");
out:
	for (int i = 0; i < 3; i++)
		cgk_report_free(rep[i]);
	cgk_options_free(dry);
	cgk_options_free(o);
	free(text);
	free(nope);
	scene_end(&s);
}

int main(void)
{
	box = sb_start(300);
	/* The unprivileged test runs the command as nobody. */
	chmod(box, 0755);

	test_json_fields();
	test_json_comm();
	test_json_errors();
	test_json_fallback();
	test_lib_json();

	return sb_finish(box);
}
