// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cgk_protected_list(): the protected list as the guard reads it, for
 * those who check against it (cgkilld). Its entries as globs and as
 * written, with their lines; a '#' starts a comment only first or after
 * a blank; an entry with trailing blanks given with and without them; a
 * NUL byte or a ".." component fails with EINVAL naming the line; the
 * built-in list where the default file is missing, an error where a named
 * one is. No cgroup is touched.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgkill.h"
#include "support/tap.h"

static char dir[] = "/tmp/cgkill-test-protected-list.XXXXXX";

struct seen {
	char text[2048];
	unsigned calls;
	unsigned stop_at;	/* 0: never stop */
};

/* "glob|entry|line;" for each entry */
static int collect(const char *glob, const char *entry, const char *list, unsigned line, void *userdata)
{
	struct seen *s = userdata;
	size_t n = strlen(s->text);

	(void)list;
	snprintf(s->text + n, sizeof(s->text) - n, "%s|%s|%u;", glob, entry, line);
	return ++s->calls == s->stop_at ? 7 : 0;
}

static const char *list_file(const char *name, const char *text, size_t len)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fwrite(text, 1, len, f) != len || fclose(f))
		bail_out("cannot write %s", path);
	return path;
}

static int walk(const char *file, struct seen *s, char *why, size_t size)
{
	memset(s->text, 0, sizeof(s->text));
	s->calls = 0;
	why[0] = '\0';
	return cgk_protected_list(file, collect, s, why, size);
}

static void test_entries(void)
{
	static const char text[] = "# a comment\n\n  /a/b  # after a blank\r\nc#d\n/e//f/./ \n ; x\n/g*/h\n";
	struct seen s = { 0 };
	char why[256];
	const char *f = list_file("entries", text, sizeof(text) - 1);

	is_int(walk(f, &s, why, sizeof(why)), 0, "a list of entries: 0");
	/* "./ ": "." then " ", a name; ';' starts no comment here */
	is_str(s.text, "/a/b|/a/b|3;/c#d|c#d|4;/e/f|/e//f/./|5;/e/f/ |/e//f/./|5;/; x|; x|6;/g*/h|/g*/h|7;",
	       "globs normalised, '#' inside a name kept, comments cut, trailing blanks twice");
	s.stop_at = 2;
	is_int(walk(f, &s, why, sizeof(why)), 7, "fn's non-zero return stops the walk and is returned");
	is_int(s.calls, 2, "no entry after the stop");
}

static void test_faults(void)
{
	static const char nul[] = "/a\n/b\0/c\n";
	static const char dotdot[] = "/a\n/x/../y\n";
	struct seen s = { 0 };
	char why[256], want[512];
	const char *f = list_file("nul", nul, sizeof(nul) - 1);

	is_int(walk(f, &s, why, sizeof(why)), -EINVAL, "a NUL byte in a line: EINVAL");
	snprintf(want, sizeof(want), "%s:2: a NUL byte in the line", f);
	is_str(why, want, "why names the file and the line");
	f = list_file("dotdot", dotdot, sizeof(dotdot) - 1);
	is_int(walk(f, &s, why, sizeof(why)), -EINVAL, "a \"..\" component: EINVAL");
	snprintf(want, sizeof(want), "%s:2: a \"..\" component in the entry", f);
	is_str(why, want, "why names the file and the line");
	is_int(cgk_protected_list(f, collect, &s, NULL, 0), -EINVAL, "why may be left out (size 0)");
	is_int(cgk_protected_list(f, NULL, &s, why, sizeof(why)), -EINVAL, "no fn: EINVAL");
}

static void test_missing(void)
{
	struct seen s = { 0 };
	char why[256], missing[256];

	snprintf(missing, sizeof(missing), "%s/none", dir);
	is_int(walk(missing, &s, why, sizeof(why)), -ENOENT, "a named list that does not exist: ENOENT");
	ok(strstr(why, "cannot read the protected list") && strstr(why, missing), "why says which: %s", why);
	setenv("CGKILL_PROTECTED", missing, 1);
	is_int(walk(NULL, &s, why, sizeof(why)), 0, "the default list missing: the built-in list");
	is_str(s.text, "/init.scope|/init.scope|1;/system.slice|/system.slice|2;/user.slice|/user.slice|3;"
	       "/machine.slice|/machine.slice|4;", "the built-in list's entries");
	setenv("CGKILL_PROTECTED", list_file("env", "/from/env\n", 10), 1);
	is_int(walk(NULL, &s, why, sizeof(why)), 0, "$CGKILL_PROTECTED names the default list");
	is_str(s.text, "/from/env|/from/env|1;", "its entries");
	unsetenv("CGKILL_PROTECTED");
}

int main(void)
{
	if (!mkdtemp(dir))
		bail_out("mkdtemp");
	test_entries();
	test_faults();
	test_missing();
	for (const char *n = "entries\0nul\0dotdot\0env\0"; *n; n += strlen(n) + 1) {
		char p[256];

		snprintf(p, sizeof(p), "%s/%s", dir, n);
		unlink(p);
	}
	rmdir(dir);
	return done_testing();
}
