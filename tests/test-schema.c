// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Issue 19, item 2: the JSON of cgkill -j against its contract,
 * data/cgkill-report.schema.json ($CGKILL_SCHEMA to check an installed
 * copy), with Debian's python3-jsonschema: real output of a kill, a dry
 * run, an error, a refusal, a timeout with survivors, --list-hierarchies
 * and the signal lists, and a library report with every part filled. The
 * test's copy of the schema is closed (no key it does not name), so an
 * undocumented key fails too. Then what the schema cannot say: "listed"
 * on every report, the cgroups a dry run listed, errno names without
 * numbers, -j never ignored by a listing.
 *
 * The validator runs under /usr/bin/python3, which sees Debian's modules
 * (a python3 earlier on PATH, pyenv's, may not); without jsonschema the
 * validations are skipped, which CGKILL_TEST_NO_SKIP=1 makes failures.
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
#include "support/internals.h"
#include "support/json.h"
#include "support/kill.h"
#include "support/record.h"
#include "support/sandbox.h"
#include "support/scene.h"
#include "support/spawn.h"
#include "support/tap.h"

#define CMD_MS 60000
#define PYTHON "/usr/bin/python3"

static char *box;
static const char *schema;
static char script[64];
static bool have_jsonschema;

/* argv: schema, then "self" (the schema itself) or a document. The
 * document is checked against the branch its top-level key names too,
 * whose errors say more than oneOf's. */
static const char validator[] =
	"import json, sys\n"
	"from jsonschema import Draft202012Validator as V\n"
	"schema = json.load(open(sys.argv[1], encoding='utf-8'))\n"
	"V.check_schema(schema)\n"
	"def objects(s):\n"
	"    if isinstance(s, dict):\n"
	"        if 'properties' in s:\n"
	"            yield s\n"
	"        for v in s.values():\n"
	"            yield from objects(v)\n"
	"    elif isinstance(s, list):\n"
	"        for v in s:\n"
	"            yield from objects(v)\n"
	"if sys.argv[2] == 'self':\n"
	"    bad = [sorted(o['properties']) for o in objects(schema)\n"
	"           if sorted(o.get('required', [])) != sorted(o['properties'])]\n"
	"    print('\\n'.join('not every key required: %s' % b for b in bad))\n"
	"    sys.exit(1 if bad else 0)\n"
	"for o in objects(schema):\n"
	"    o['additionalProperties'] = False\n"
	"doc = json.loads(open(sys.argv[2], 'rb').read().decode('utf-8'))\n"
	"errors = list(V(schema).iter_errors(doc))\n"
	"for key, name in (('targets', 'report'), ('hierarchies', 'hierarchies'),\n"
	"                  ('signals', 'signals')):\n"
	"    if errors and key in doc:\n"
	"        errors += V({'$defs': schema['$defs'], '$ref': '#/$defs/' + name}).iter_errors(doc)\n"
	"for e in errors:\n"
	"    print('/'.join(map(str, e.absolute_path)) or '.', e.message[:300])\n"
	"sys.exit(1 if errors else 0)\n";

/* Run the validator on a document (or "self"): its exit code (-1 if it
 * did not run), and what it said in res. */
static int validate_file(const char *doc, struct cmd *res)
{
	const char *argv[] = { PYTHON, script, schema, doc, NULL };

	cmd_free(res);
	cmd_runv(res, &(struct cmd_opts){ .program = true }, CMD_MS, argv);
	return res->status;
}

/* One test point: the schema accepts text (or, !valid, rejects it). */
static bool check_doc(const char *text, bool valid, const char *what)
{
	static struct cmd res;
	char path[] = "/tmp/cgkill-test-schema.XXXXXX";
	size_t len = strlen(text);
	int fd, rc;

	if (!have_jsonschema) {
		skip("%s: no " PYTHON " with jsonschema (apt-get install python3-jsonschema)", what);
		return true;
	}
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
		if (fd >= 0)
			close(fd);
		return ok(false, "%s: cannot write %s: %m", what, path);
	}
	close(fd);
	rc = validate_file(path, &res);
	unlink(path);
	if (ok(valid ? rc == 0 : rc == 1, "%s: %s by %s", what, valid ? "valid" : "rejected",
	       schema)) {
		if (!valid)
			note("%s", res.out);
		return true;
	}
	diag("%s%s", res.out, res.err);
	diag("the document: %.3000s", text);
	return false;
}

static bool validates(const char *text, const char *what)
{
	return check_doc(text, true, what);
}

/* Every error object holds a name and a message, no number. */
static void errno_names(const struct cmd *c)
{
	json_is(c, "all(e['errno'][:1] == 'E' and sorted(e) == ['errno', 'message'] "
		   "for t in d['targets'] for e in (t['error'], t['fallback_error']) if e)", "true");
}

static void test_schema_itself(void)
{
	static struct cmd res;
	int rc;

	if (!have_jsonschema) {
		skip("the schema itself: no " PYTHON " with jsonschema");
		return;
	}
	rc = validate_file("self", &res);
	if (!ok(rc == 0, "the schema is valid draft 2020-12, and requires every key it names"))
		diag("%s%s", res.out, res.err);
	/* The checks can fail: a key the schema does not name, one missing,
	 * the errno number of before. */
	check_doc("{\"schema\": 1, \"version\": \"0\", \"targets\": [], \"extra\": 1}", false,
		  "a key the schema does not name");
	check_doc("{\"version\": \"0\", \"targets\": []}", false, "no schema key");
	check_doc("{\"schema\": 1, \"version\": \"0\", \"signals\": "
		  "[{\"number\": 1, \"name\": \"HUP\", \"code\": 1}]}", false,
		  "a signal with a key too many");
}

/* The scene name with a sleeper in T (*a) and one in T/sub (*b); false
 * (a failed test point) if it cannot be set up. */
static bool two_sleepers(struct scene *s, const char *name, const char *what, char **sub,
			 pid_t *a, pid_t *b)
{
	if (!scene_start(s, box, name))
		return false;
	*sub = sb_mkdir(s->target, "sub");
	*a = sb_sleeper(s->target);
	*b = *sub ? sb_sleeper(*sub) : -1;
	return ok(*a > 0 && *b > 0, "%s: a sleeper in T and one in T/sub", what);
}

static void test_kill(void)
{
	struct scene s;
	struct cmd c = { 0 };
	char *sub = NULL;
	pid_t a, b;

	if (!two_sleepers(&s, "kill", "kill", &sub, &a, &b))
		goto out;
	cmd_run(&c, CMD_MS, "-j", s.target, NULL);
	exit_is(&c, 0);
	validates(c.out, "a kill");
	json_is(&c, "d['schema']", "1");
	json_is(&c, "d['targets'][0]['listed']", "[]");
	json_is(&c, "d['targets'][0]['cgroups']", "2");
	errno_names(&c);
	cmd_free(&c);
	ok(sb_killed_by(a, SIGKILL, 5000) && sb_killed_by(b, SIGKILL, 5000), "kill: both died");
out:
	free(sub);
	scene_end(&s);
}

static void test_dry_run(void)
{
	struct scene s;
	struct cmd c = { 0 };
	char *sub = NULL;
	pid_t a, b;

	if (!two_sleepers(&s, "dry", "dry run", &sub, &a, &b))
		goto out;
	cmd_run(&c, CMD_MS, "-p", "-j", s.target, NULL);
	exit_is(&c, 0);
	validates(c.out, "a dry run");
	json_is(&c, "len(d['targets'][0]['listed'])", "2");
	/* the cgroups the listing walked, not 0 */
	json_is(&c, "d['targets'][0]['cgroups']", "2");
	json_is(&c, "[d['targets'][0][k] for k in ('signals', 'backends', 'survivors', 'backend')]",
		"[[], [], [], null]");
	cmd_free(&c);
	ok(sb_alive(a) && sb_alive(b), "dry run: both alive");
out:
	free(sub);
	scene_end(&s);
}

static void test_error(void)
{
	struct scene s;
	struct cmd c = { 0 };
	char *nope = NULL;

	if (!scene_start(&s, box, "error"))
		goto out;
	nope = sb_path(s.target, "nope");
	if (!nope)
		goto out;
	cmd_run(&c, CMD_MS, "-j", nope, NULL);
	exit_is(&c, 1);
	validates(c.out, "an error");
	json_is(&c, "d['targets'][0]['error']['errno']", "ENOENT");
	json_is(&c, "[d['targets'][0][k] for k in ('hierarchy', 'listed', 'empty_ms')]", "[null, [], null]");
	errno_names(&c);
	cmd_free(&c);
out:
	free(nope);
	scene_end(&s);
}

static void test_refusal(void)
{
	char prot[] = "/tmp/cgkill-test-schema-prot.XXXXXX";
	struct scene s;
	struct cmd c = { 0 };
	pid_t p;
	int fd = -1;

	if (!scene_start(&s, box, "refusal"))
		goto out;
	p = sb_sleeper(s.target);
	fd = mkostemp(prot, O_CLOEXEC);
	if (!ok(p > 0 && fd >= 0, "refusal: a sleeper and a protected list"))
		goto out;
	dprintf(fd, "%s\n", s.target + strlen(sb_mount(SB_V2)));
	close(fd);
	cmd_run(&c, CMD_MS, "-j", "--protected", prot, s.target, NULL);
	exit_is(&c, 4);
	validates(c.out, "a refusal");
	json_is(&c, "[d['targets'][0]['refused'], d['targets'][0]['error']['errno']]",
		"[\"protected\", \"EPERM\"]");
	errno_names(&c);
	cmd_free(&c);
	ok(sb_alive(p), "refusal: the process lives");
out:
	if (fd >= 0)
		unlink(prot);
	scene_end(&s);
}

static void test_timeout(void)
{
	struct scene s;
	struct cmd c = { 0 };
	char want[64];
	pid_t p;

	if (!scene_start(&s, box, "timeout"))
		goto out;
	p = term_ignorer(s.target);
	if (!ok(p > 0, "timeout: a TERM-ignorer"))
		goto out;
	cmd_run(&c, CMD_MS, "-j", "-s", "TERM", "--wait=300ms", s.target, NULL);
	exit_is(&c, 3);
	validates(c.out, "a timeout with survivors");
	snprintf(want, sizeof(want), "[%d]", (int)p);
	json_is(&c, "[p['pid'] for p in d['targets'][0]['survivors']]", want);
	json_is(&c, "[d['targets'][0][k] for k in ('listed', 'empty_ms', 'emptied')]", "[[], null, false]");
	json_is(&c, "d['targets'][0]['error']['errno']", "ETIMEDOUT");
	errno_names(&c);
	cmd_free(&c);
out:
	scene_end(&s);
}

/* What the command rarely shows: a fallback and its error, an errno without
 * a name, a process with no state, names of any bytes. */
static void test_library(void)
{
	struct cgk_report *a = cgk_report_new("/sys/fs/cgroup/x\x01");
	const cgk_report *reps[1] = { a };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct cmd c = { .out = NULL };

	if (!a)
		bail_out("out of memory");
	a->hierarchy = 1;
	a->fell_back_from = CGK_BACKEND_V1_FREEZE;
	a->fallback_errno = EACCES;
	cgk_report_add_signal(a, SIGTERM, CGK_BACKEND_V1_FREEZE);
	cgk_report_add_signal(a, SIGRTMIN + 3, CGK_BACKEND_LOOP);
	a->waited = true;
	a->error = -200;
	for (int l = CGK_LIST_LISTED; l <= CGK_LIST_SURVIVORS; l++) {
		report_add_process(a, (enum cgk_list)l, 0, 0, "", 0, "");
		report_add_process(a, (enum cgk_list)l, 42, 'D', "\x1b\xff\xc3\xa9\"\\", 6,
				   "a/\x9b b");
	}
	if (!f || cgk_report_json(reps, 1, f) < 0) {
		ok(false, "library: cgk_report_json to memory");
		if (f)
			fclose(f);
		free(text);
		cgk_report_free(a);
		return;
	}
	fclose(f);
	cgk_report_free(a);
	validates(text, "a library report with a fallback, E200 and odd names");
	c.out = text;
	snprintf(c.line, sizeof(c.line), "cgk_report_json");
	json_is(&c, "[d['targets'][0]['fallback_error']['errno'], d['targets'][0]['error']['errno']]",
		"[\"EACCES\", \"E200\"]");
	errno_names(&c);
	free(text);
}

static void test_listings(void)
{
	struct cmd c = { 0 }, t = { 0 };
	char expr[4400], want[16];

	cmd_run(&c, CMD_MS, "--list-hierarchies", "-j", NULL);
	exit_is(&c, 0);
	validates(c.out, "--list-hierarchies -j");
	snprintf(expr, sizeof(expr), "[h['type'] for h in d['hierarchies'] if h['mount'] == '%s']",
		 sb_mount(SB_V2));
	json_is(&c, expr, "[\"v2\"]");
	/* the same mounts as the text listing */
	cmd_run(&t, CMD_MS, "--list-hierarchies", "--raw", "--noheadings", "-o", "MOUNT", NULL);
	exit_is(&t, 0);
	json_is(&c, "''.join(h['mount'] + '\\n' for h in d['hierarchies'])", t.out);
	cmd_free(&t);
	cmd_free(&c);

	cmd_run(&c, CMD_MS, "-J", "--list-hierarchies", NULL);
	exit_is(&c, 0);
	validates(c.out, "-J --list-hierarchies (-J before it)");
	cmd_free(&c);

	cmd_run(&c, CMD_MS, "-L", "-j", NULL);
	exit_is(&c, 0);
	validates(c.out, "-L -j");
	json_is(&c, "[s for s in d['signals'] if s['number'] in (9, 15)]",
		"[{\"number\": 9, \"name\": \"KILL\"}, {\"number\": 15, \"name\": \"TERM\"}]");
	json_is(&c, "[s['name'] for s in d['signals'] if s['number'] == 34]", "[\"RTMIN\"]");
	snprintf(want, sizeof(want), "%d", SIGRTMAX - 2);
	json_is(&c, "len(d['signals'])", want);	/* 32 and 33 have no name */
	cmd_run(&t, CMD_MS, "-l", "-j", NULL);
	exit_is(&t, 0);
	ok(strcmp(c.out, t.out) == 0, "-l -j: the same document as -L -j");
	cmd_free(&t);
	cmd_free(&c);

	cmd_run(&c, CMD_MS, "-l", "TERM", "-j", NULL);
	exit_is(&c, 0);
	validates(c.out, "-l TERM -j");
	json_is(&c, "d['signals']", "[{\"number\": 15, \"name\": \"TERM\"}]");
	cmd_free(&c);
	cmd_run(&c, CMD_MS, "-J", "-l", "143", NULL);
	exit_is(&c, 0);
	json_is(&c, "d['signals']", "[{\"number\": 15, \"name\": \"TERM\"}]");
	cmd_free(&c);
}

int main(void)
{
	const char *path = getenv("CGKILL_SCHEMA");
	const char *argv[] = { PYTHON, "-c", "import jsonschema", NULL };
	struct cmd res;
	int fd;

	sb_init(300);
	no_plan();
	rec_init();
	sb_require_root();
	if (!sb_mount(SB_V2))
		skip_all("no cgroup v2 mount");
	schema = path && *path ? path : "data/cgkill-report.schema.json";
	if (access(schema, R_OK) < 0)
		bail_out("cannot read the schema %s: %m", schema);
	cmd_runv(&res, &(struct cmd_opts){ .program = true }, CMD_MS, argv);
	have_jsonschema = res.status == 0;
	cmd_free(&res);
	snprintf(script, sizeof(script), "/tmp/cgkill-test-schema.%d.py", (int)getpid());
	fd = open(script, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, validator, strlen(validator)) != (ssize_t)strlen(validator))
		bail_out("cannot write %s: %m", script);
	close(fd);
	box = sb_create(SB_V2);
	if (!box)
		bail_out("cannot create a v2 sandbox: %m");
	note("sandbox %s, command %s, schema %s", box, cmd_path(), schema);

	test_schema_itself();
	test_kill();
	test_dry_run();
	test_error();
	test_refusal();
	test_timeout();
	test_library();
	test_listings();

	unlink(script);
	sb_cleanup_all();
	return done_testing();
}
