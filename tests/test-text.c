// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Unit tests of the one text filter (lib/text.c, libcgkill 1.3): what
 * cgkill prints (CGK_TEXT_SAFE), its --raw columns (CGK_TEXT_RAW), and
 * JSON strings (CGK_TEXT_JSON) of hostile names: terminal escapes, CR,
 * C1 controls (U+009B) and a lone 0x9b, invalid UTF-8, with valid UTF-8
 * kept. Each JSON string is also read back by Python's strict parser from
 * bytes that must be valid UTF-8. The buffer form cuts at whole pieces.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgkill.h"
#include "support/tap.h"

/* ESC [ 31m, CR, a lone 8-bit CSI, U+009B as UTF-8, truncated and stray
 * sequences, a surrogate, then é and € that must stay. */
#define HOSTILE "a\x1b[31m\rb\x9b" "c\xc2\x9b" "d\xe2\x82" "e\x80\xed\xa0\x80" "f\xc3\xa9\xe2\x82\xac"

static const struct {
	const char *name, *text;
	size_t len;
	const char *safe, *raw, *json;
	size_t width;
} cases[] = {
	{ "plain", "abc", 3, "abc", "abc", "\"abc\"", 3 },
	{ "hostile", HOSTILE, sizeof(HOSTILE) - 1,
	  "a?[31m?b?c?d??e????f\xc3\xa9\xe2\x82\xac",
	  "a\\x1b[31m\\x0db\\x9bc\\xc2\\x9bd\\xe2\\x82e\\x80\\xed\\xa0\\x80f\xc3\xa9\xe2\x82\xac",
	  "\"a\\u001b[31m\\rb\\ufffdc\\u009bd\\ufffd\\ufffde\\ufffd\\ufffd\\ufffd\\ufffdf\xc3\xa9\xe2\x82\xac\"",
	  22 },
	{ "quotes, backslash, newline, tab, DEL", "q\"\\\n\t\x7f", 6, "q\"\\???",
	  "q\"\\\\x0a\\x09\\x7f", "\"q\\\"\\\\\\n\\t\\u007f\"", 6 },
	{ "blank and backslash-x", "a b\\x", 5, "a b\\x", "a\\x20b\\x5cx", "\"a b\\\\x\"", 5 },
	{ "NUL inside len", "a\0b", 3, "a?b", "a\\x00b", "\"a\\u0000b\"", 3 },
	{ "overlong and above U+10FFFF", "\xc0\xaf\xf4\x90\x80\x80", 6, "??????",
	  "\\xc0\\xaf\\xf4\\x90\\x80\\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\"", 6 },
	{ "4-byte character kept", "\xf0\x9f\x98\x80", 4, "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80",
	  "\"\xf0\x9f\x98\x80\"", 1 },
	{ "empty", "", 0, "", "", "\"\"", 0 },
};
#define N_CASES (sizeof(cases) / sizeof(cases[0]))

/* text written in form through a stream, as a NUL-ended malloc'ed string */
static char *written(const char *text, size_t len, enum cgk_text_form form, int *ret)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	if (!f)
		return NULL;
	*ret = cgk_text_write(f, text, len, form);
	fclose(f);
	return buf;
}

/* No byte that drives a terminal: C0 but none, DEL, 0x9b, ESC. */
static bool clean(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f || *p == 0x9b)
			return false;
	return true;
}

/* Python's json.loads on the bytes decoded as strict UTF-8: 0 if accepted. */
static int python_accepts(const char *json)
{
	char path[] = "/tmp/cgk-text.XXXXXX", cmd[256];
	int fd = mkstemp(path), r;
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (!f)
		return -1;
	fputs(json, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import json,sys; json.loads(open(sys.argv[1],\"rb\").read().decode(\"utf-8\",\"strict\"))' %s",
		 path);
	r = system(cmd);
	unlink(path);
	return r;
}

static void test_forms(void)
{
	static const enum cgk_text_form forms[] = { CGK_TEXT_SAFE, CGK_TEXT_RAW, CGK_TEXT_JSON };
	static const char *const form_names[] = { "safe", "raw", "json" };

	for (size_t i = 0; i < N_CASES; i++) {
		for (size_t k = 0; k < 3; k++) {
			const char *want = k == 0 ? cases[i].safe : k == 1 ? cases[i].raw : cases[i].json;
			char buf[512];
			int ret = -1;
			char *got = written(cases[i].text, cases[i].len, forms[k], &ret);
			size_t n = cgk_text_format(buf, sizeof(buf), cases[i].text, cases[i].len, forms[k]);

			is_str(got, want, "%s: %s written", cases[i].name, form_names[k]);
			is_int(ret, 0, "%s: %s: cgk_text_write returns 0", cases[i].name, form_names[k]);
			is_str(buf, want, "%s: %s formatted", cases[i].name, form_names[k]);
			is_int((long long)n, (long long)strlen(want), "%s: %s: its length", cases[i].name,
			       form_names[k]);
			ok(got && clean(got), "%s: %s: no control byte", cases[i].name, form_names[k]);
			if (k == 2)
				is_int(python_accepts(got ? got : ""), 0,
				       "%s: Python's strict UTF-8 and json accept it", cases[i].name);
			free(got);
		}
		is_int((long long)cgk_text_width(cases[i].text, cases[i].len), (long long)cases[i].width,
		       "%s: width", cases[i].name);
	}
}

/* A short buffer: whole characters and escapes only, and a JSON string
 * always closed; the return value is the whole length, as snprintf. */
static void test_cut(void)
{
	char buf[16];
	size_t n;

	n = cgk_text_format(buf, 6, "ab\xc3\xa9" "cd", 6, CGK_TEXT_SAFE);
	is_str(buf, "ab\xc3\xa9" "c", "cut at 5 bytes keeps whole characters");
	is_int((long long)n, 6, "and returns the whole length");
	cgk_text_format(buf, 4, "ab\xc3\xa9", 4, CGK_TEXT_SAFE);
	is_str(buf, "ab", "a character that does not fit is left out whole");
	n = cgk_text_format(buf, 8, "ab\x1b" "cd", 5, CGK_TEXT_JSON);
	is_str(buf, "\"ab\"", "JSON: an escape that does not fit is left out, the quote stays");
	is_int((long long)n, (long long)strlen("\"ab\\u001bcd\""), "JSON: the whole length");
	ok(python_accepts(buf) == 0, "JSON cut short is still a JSON string");
	n = cgk_text_format(NULL, 0, "a\x1b", 2, CGK_TEXT_SAFE);
	is_int((long long)n, 2, "NULL, 0: only the length");
	buf[0] = 'x';
	cgk_text_format(buf, 1, "abc", 3, CGK_TEXT_SAFE);
	is_str(buf, "", "size 1: empty");
	cgk_text_format(buf, 2, "abc", 3, CGK_TEXT_JSON);
	is_str(buf, "", "JSON in 2 bytes: empty, not half a string");
}

static void test_errors(void)
{
	char buf[8] = "x";

	is_int(cgk_text_write(NULL, "a", 1, CGK_TEXT_SAFE), -EINVAL, "no stream: EINVAL");
	is_int(cgk_text_write(stdout, "a", 1, (enum cgk_text_form)99), -EINVAL, "unknown form: EINVAL");
	is_int((long long)cgk_text_format(buf, sizeof(buf), "a", 1, (enum cgk_text_form)99), 0,
	       "unknown form: nothing formatted");
	is_str(buf, "", "and the buffer emptied");
	is_int((long long)cgk_text_width(NULL, 0), 0, "NULL text: width 0");
}

int main(void)
{
	test_forms();
	test_cut();
	test_errors();
	return done_testing();
}
