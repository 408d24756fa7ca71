// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Unit tests of lib/report.c: names, cgk_report_free and the JSON writer,
 * with hostile process names. The output is checked by Python's json module
 * (the reference parser), which also extracts fields for comparison.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "support/internals.h"
#include "support/json.h"
#include "support/tap.h"

/* Hostile comm values, and what Python must decode each to (as json.dumps
 * with ensure_ascii writes it). */
static const struct {
	const char *comm;
	size_t len;
	const char *want;
} comms[] = {
	{ "a\"b\\c", 5, "\"a\\\"b\\\\c\"" },
	{ "nl\ncr\rtab\t", 10, "\"nl\\ncr\\rtab\\t\"" },
	{ "\x01\x1f\x7f", 3, "\"\\u0001\\u001f\\u007f\"" },
	{ "ab\xc3", 3, "\"ab\\ufffd\"" },			/* truncated 2-byte */
	{ "\xe2\x82", 2, "\"\\ufffd\\ufffd\"" },		/* truncated 3-byte */
	{ "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9, "\"\\u00e9\\u20ac\\ud83d\\ude00\"" },
	{ "\xc0\xaf", 2, "\"\\ufffd\\ufffd\"" },		/* overlong '/' */
	{ "\xe0\x80\xaf", 3, "\"\\ufffd\\ufffd\\ufffd\"" },	/* overlong, 3 bytes */
	{ "\xf0\x80\x80\xaf", 4, "\"\\ufffd\\ufffd\\ufffd\\ufffd\"" }, /* overlong, 4 */
	{ "\xf0\x90\x80\x80", 4, "\"\\ud800\\udc00\"" },	/* U+10000, valid */
	{ "\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\"" },	/* surrogate */
	{ "\xf4\x90\x80\x80", 4, "\"\\ufffd\\ufffd\\ufffd\\ufffd\"" }, /* > U+10FFFF */
	{ "\x80\xbfz", 3, "\"\\ufffd\\ufffdz\"" },		/* stray continuations */
	{ "xxxxxxxxxxxxxxxx", 16, "\"xxxxxxxxxxxxxxxx\"" },	/* no NUL at all */
	{ "</script>", 9, "\"</script>\"" },
};
#define N_COMMS (sizeof(comms) / sizeof(comms[0]))
/* plus one process per byte 0x80..0xff, 15 bytes each: 8 more */
#define N_HIGH 9

/* Python prints one line per field we check; keys sorted, ASCII only. */
static const char extract[] =
	"import json,sys\n"
	"d=json.load(open(sys.argv[1],encoding=\"utf-8\"))\n"
	"j=lambda v: json.dumps(v,ensure_ascii=True,sort_keys=True)\n"
	"print(\"schema\",j(d[\"schema\"]))\n"
	"print(\"version\",j(d[\"version\"]))\n"
	"print(\"ntargets\",len(d[\"targets\"]))\n"
	"for i,t in enumerate(d[\"targets\"]):\n"
	" print(i,\"keys\",j(sorted(t.keys())))\n"
	" for k in (\"path\",\"hierarchy\",\"backend\",\"fell_back_from\",\"fallback_error\",\n"
	"  \"refused\",\"signals\",\"cgroups\",\"signalled\",\"unreachable\",\"not_permitted\",\n"
	"  \"waited\",\"emptied\",\"signal_ms\",\"empty_ms\",\"error\"):\n"
	"  print(i,k,j(t[k]))\n"
	" for k in (\"survivors\",\"listed\"):\n"
	"  for p in t[k]:\n"
	"   print(i,k,j(p))\n";

static bool has_line(const char *out, const char *line)
{
	size_t n = strlen(line);

	for (const char *s = out; s && *s;) {
		const char *eol = strchrnul(s, '\n');

		if ((size_t)(eol - s) == n && memcmp(s, line, n) == 0)
			return true;
		s = *eol ? eol + 1 : eol;
	}
	return false;
}

static void check_line(const char *out, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void check_line(const char *out, const char *what, const char *fmt, ...)
{
	char line[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (!ok(has_line(out, line), "%s", what))
		diag("    missing line: %s", line);
}

/* What Python prints for the fields of the two reports of test_json(). */
static const struct {
	const char *what, *line;
} first[] = {
	{ "not refused", "0 refused null" },
	{ "signals by name", "0 signals [\"TERM\", \"KILL\", \"RTMIN+1\"]" },
	{ "counters", "0 cgroups 7" },
	{ "signalled", "0 signalled 123" },
	{ "unreachable", "0 unreachable 2" },
	{ "not permitted", "0 not_permitted 1" },
	{ "waited", "0 waited true" },
	{ "emptied", "0 emptied false" },
	{ "signal_ms", "0 signal_ms 45" },
	{ "empty_ms null when not emptied", "0 empty_ms null" },
}, second[] = {
	{ "second target: hierarchy null", "1 hierarchy null" },
	{ "second target: backend null", "1 backend null" },
	{ "second target: no fallback", "1 fell_back_from null" },
	{ "second target: no fallback error", "1 fallback_error null" },
	{ "second target: refused self", "1 refused \"self\"" },
	{ "second target: no signals", "1 signals []" },
	{ "second target: empty_ms when emptied", "1 empty_ms 12" },
};

static void test_json(void)
{
	struct cgk_report *a = cgk_report_new("/sys/fs/cgroup/we\"ird\\ \x01/\xff");
	struct cgk_report *b = cgk_report_new("/sys/fs/cgroup/unified");
	const cgk_report *reps[2] = { a, b };
	char tmpl[] = "/tmp/cgkill-test-json.XXXXXX";
	char *out, *text = NULL;
	size_t textlen = 0;
	FILE *f, *mem;
	int fd, r;

	if (!a || !b)
		bail_out("out of memory");
	a->hierarchy = 2;
	cgk_report_add_signal(a, SIGTERM, CGK_BACKEND_FREEZE);
	cgk_report_add_signal(a, SIGKILL, CGK_BACKEND_FREEZE);
	cgk_report_add_signal(a, SIGRTMIN + 1, CGK_BACKEND_FREEZE);
	a->fell_back_from = CGK_BACKEND_KERNEL;
	a->fallback_errno = EACCES;
	a->cgroups = 7;
	a->signalled = 123;
	a->unreachable = 2;
	a->not_permitted = 1;
	a->waited = true;
	a->emptied = false;
	a->signal_ms = 45;
	a->empty_ms = 999;	/* must not show: not emptied */
	a->error = -ETIMEDOUT;
	if (asprintf(&a->message, "%s: timed out \"waiting\"", a->path) < 0)
		bail_out("out of memory");
	for (size_t i = 0; i < N_COMMS; i++)
		report_add_process(a, CGK_LIST_SURVIVORS, (pid_t)(100 + i), 'D', comms[i].comm,
				   comms[i].len, i == 0 ? "" : "sub/\"q\"\n");
	for (size_t i = 0; i < N_HIGH; i++) {
		char c[16];

		for (size_t k = 0; k < 15; k++) {
			unsigned v = 0x80 + (unsigned)(i * 15 + k);

			c[k] = (char)(v > 0xff ? 'z' : v);
		}
		c[15] = '\0';
		report_add_process(a, CGK_LIST_SURVIVORS, (pid_t)(200 + i), 'R', c, 16, "h");
	}

	b->refused = CGK_GUARD_SELF;
	b->error = -ENOENT;
	b->emptied = true;
	b->empty_ms = 12;
	report_add_process(b, CGK_LIST_LISTED, 0, 0, "", 0, "");	/* unreachable, no state */
	report_add_process(b, CGK_LIST_LISTED, 4194304, 'S', "sleep", 5, "a/b");

	/* also into memory, for checks that need no Python */
	mem = open_memstream(&text, &textlen);
	r = cgk_report_json(reps, 2, mem);
	fclose(mem);
	is_int(r, 0, "json to a memory stream");
	ok(text && textlen > 0 && text[textlen - 1] == '\n', "json ends with a newline");
	ok(text && strstr(text, "\"listed\": []"), "an empty listed array is there all the same");
	{
		bool clean = true;

		for (size_t i = 0; text && i < textlen; i++)
			if (((unsigned char)text[i] < 0x20 && text[i] != '\n') || text[i] == 0x7f)
				clean = false;
		ok(clean, "no raw control characters or DEL in the output");
	}

	fd = mkstemp(tmpl);
	if (fd < 0)
		bail_out("mkstemp: %m");
	f = fdopen(fd, "w");
	r = cgk_report_json(reps, 2, f);
	fclose(f);
	is_int(r, 0, "json to a file");

	out = text ? json_python(text, extract, NULL) : NULL;
	if (!out || !strncmp(out, "INVALID", 7)) {
		if (!out)
			skip("python3 not available to validate the JSON");
		else
			ok(false, "Python's json module accepts the output");
		diag("%s\noutput was:\n%s", out ? out : "", text ? text : "(none)");
		free(out);
		goto done;
	}
	ok(true, "Python's json module accepts the output");
	note("%s", out);

	check_line(out, "schema", "schema %d", CGK_JSON_SCHEMA);
	check_line(out, "version", "version \"%s\"", CGK_VERSION);
	check_line(out, "two targets", "ntargets 2");
	check_line(out, "path with quote, backslash, control, invalid byte",
		   "0 path \"/sys/fs/cgroup/we\\\"ird\\\\ \\u0001/\\ufffd\"");
	check_line(out, "hierarchy v2", "0 hierarchy \"v2\"");
	check_line(out, "backend", "0 backend \"freeze\"");
	check_line(out, "fell back from", "0 fell_back_from \"kernel\"");
	check_line(out, "fallback error",
		   "0 fallback_error {\"errno\": \"EACCES\", \"message\": \"%s\"}",
		   strerror(EACCES));
	for (size_t i = 0; i < sizeof(first) / sizeof(first[0]); i++)
		check_line(out, first[i].what, "%s", first[i].line);
	check_line(out, "error object with the report's message",
		   "0 error {\"errno\": \"ETIMEDOUT\", \"message\": "
		   "\"/sys/fs/cgroup/we\\\"ird\\\\ \\u0001/\\ufffd: timed out \\\"waiting\\\"\"}");
	check_line(out, "every key in a target, listed too when empty",
		   "0 keys [\"backend\", \"backends\", \"cgroups\", \"emptied\", \"empty_ms\", \"error\", "
		   "\"fallback_error\", \"fell_back_from\", \"hierarchy\", \"listed\", \"not_permitted\", "
		   "\"path\", \"reap\", \"refused\", \"signal_ms\", \"signalled\", \"signals\", "
		   "\"survivors\", \"unreachable\", \"waited\"]");
	for (size_t i = 0; i < N_COMMS; i++) {
		char what[64];

		snprintf(what, sizeof(what), "hostile comm %zu decodes as expected", i);
		check_line(out, what,
			   "0 survivors {\"cgroup\": \"%s\", \"comm\": %s, \"pid\": %zu, \"state\": \"D\"}",
			   i == 0 ? "" : "sub/\\\"q\\\"\\n", comms[i].want, 100 + i);
	}
	{
		/* bytes 0x80..0xff alone are never valid UTF-8: all U+FFFD */
		char want[512];
		size_t o = 0;

		for (size_t k = 0; k < 15; k++)
			o += (size_t)snprintf(want + o, sizeof(want) - o, "\\ufffd");
		check_line(out, "bytes 0x80..0x8e each become U+FFFD",
			   "0 survivors {\"cgroup\": \"h\", \"comm\": \"%s\", \"pid\": 200, \"state\": \"R\"}",
			   want);
		o = 0;
		for (size_t k = 0; k < 8; k++)
			o += (size_t)snprintf(want + o, sizeof(want) - o, "\\ufffd");
		o += (size_t)snprintf(want + o, sizeof(want) - o, "zzzzzzz");
		check_line(out, "bytes 0xf8..0xff each become U+FFFD",
			   "0 survivors {\"cgroup\": \"h\", \"comm\": \"%s\", \"pid\": 208, \"state\": \"R\"}",
			   want);
	}

	for (size_t i = 0; i < sizeof(second) / sizeof(second[0]); i++)
		check_line(out, second[i].what, "%s", second[i].line);
	check_line(out, "second target: error with strerror message",
		   "1 error {\"errno\": \"ENOENT\", \"message\": \"%s\"}",
		   strerror(ENOENT));
	check_line(out, "listed: PID 0 with null state",
		   "1 listed {\"cgroup\": \"\", \"comm\": \"\", \"pid\": 0, \"state\": null}");
	check_line(out, "listed: second entry",
		   "1 listed {\"cgroup\": \"a/b\", \"comm\": \"sleep\", \"pid\": 4194304, \"state\": \"S\"}");
	ok(strstr(out, "1 keys [\"backend\", \"backends\", \"cgroups\", \"emptied\", \"empty_ms\", \"error\", "
		       "\"fallback_error\", \"fell_back_from\", \"hierarchy\", \"listed\",") != NULL,
	   "listed present when non-empty");
	free(out);

done:
	unlink(tmpl);
	free(text);

	/* zero reports: still one document */
	text = NULL;
	mem = open_memstream(&text, &textlen);
	r = cgk_report_json(NULL, 0, mem);
	fclose(mem);
	ok(r == 0 && text && strcmp(text, "{\n  \"schema\": 1,\n  \"version\": \"" CGK_VERSION
				    "\",\n  \"targets\": []\n}\n") == 0,
	   "no reports: an empty targets array");
	free(text);

	/* a stream that fails */
	f = fopen("/dev/full", "we");
	if (f) {
		r = cgk_report_json(reps, 2, f);
		is_int(r, -ENOSPC, "write error reported (/dev/full)");
		fclose(f);
	} else {
		skip("/dev/full missing");
	}
	is_int(cgk_report_json(NULL, 1, stdout), -EINVAL, "NULL array with n > 0");
	{
		const cgk_report *holes[2] = { a, NULL };

		is_int(cgk_report_json(holes, 2, stdout), -EINVAL, "NULL report in the array");
	}

	/* an errno we have no name for */
	{
		struct cgk_report *c = cgk_report_new("");
		const cgk_report *one[1] = { c };

		c->error = -200;
		c->hierarchy = 1;
		c->backend = CGK_BACKEND_LOOP;
		text = NULL;
		mem = open_memstream(&text, &textlen);
		r = cgk_report_json(one, 1, mem);
		fclose(mem);
		ok(r == 0 && strstr(text, "\"errno\": \"E200\"") && !strstr(text, "\"code\"") &&
			   strstr(text, "\"hierarchy\": \"v1\"") && strstr(text, "\"backend\": \"loop\""),
		   "unknown errno as E200 (and no number beside it), v1, loop");
		free(text);
		cgk_report_free(c);
	}

	/* Freed with their lists (ASan and valgrind see a leak or a double
	 * free); NULL is fine. */
	ok(cgk_report_free(a) == NULL, "report_free frees survivors, returns NULL");
	ok(cgk_report_free(b) == NULL, "report_free frees listed, returns NULL");
	ok(cgk_report_free(NULL) == NULL, "report_free on NULL");
}

static void test_names(void)
{
	static const char *const names[] = { "auto", "kernel", "freeze", "v1-freeze", "loop" };
	enum cgk_backend be;
	bool good = true;

	for (int i = 0; i < CGK_BACKEND_COUNT; i++) {
		const char *n = cgk_backend_name((enum cgk_backend)i);

		good &= n && strcmp(n, names[i]) == 0 && cgk_backend_from_name(n, &be) == 0 &&
			be == (enum cgk_backend)i;
	}
	ok(good, "backend names round trip");
	ok(cgk_backend_name(CGK_BACKEND_COUNT) == NULL, "no name past the last backend");
	ok(cgk_backend_name((enum cgk_backend)-1) == NULL, "no name for -1");
	be = CGK_BACKEND_KERNEL;
	ok(cgk_backend_from_name("v1freeze", &be) == -EINVAL && be == CGK_BACKEND_KERNEL,
	   "unknown backend rejected");
	ok(cgk_backend_from_name("", &be) == -EINVAL, "empty backend rejected");

	is_str(cgk_guard_name(CGK_GUARD_NONE), "none", "guard none");
	is_str(cgk_guard_name(CGK_GUARD_ROOT), "root", "guard root");
	is_str(cgk_guard_name(CGK_GUARD_SELF), "self", "guard self");
	is_str(cgk_guard_name(CGK_GUARD_PID1), "pid1", "guard pid1");
	is_str(cgk_guard_name(CGK_GUARD_PROTECTED), "protected", "guard protected");
	is_str(cgk_guard_name(CGK_GUARD_DECLINED), "declined", "guard declined");
	ok(cgk_guard_name((enum cgk_guard)99) == NULL, "no name for an unknown guard");
}

int main(void)
{
	no_plan();
	test_names();
	test_json();
	return done_testing();
}
