// SPDX-License-Identifier: LGPL-2.1-or-later
/* JSON read with python3; see json.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cmd.h"
#include "json.h"
#include "tap.h"

/* Strict: bytes must be UTF-8, one document, no duplicate keys. */
static const char py_eval[] =
	"import json, sys\n"
	"def pairs(kv):\n"
	"    keys = [k for k, _ in kv]\n"
	"    if len(keys) != len(set(keys)):\n"
	"        raise ValueError('duplicate key')\n"
	"    return dict(kv)\n"
	"try:\n"
	"    d = json.loads(open(sys.argv[1], 'rb').read().decode('utf-8'),\n"
	"                   object_pairs_hook=pairs)\n"
	"except Exception as e:\n"
	"    print('INVALID:', e)\n"
	"    sys.exit(0)\n"
	"v = eval(sys.argv[2])\n"
	"sys.stdout.write(v if isinstance(v, str) else json.dumps(v))\n";

bool have_python(void)
{
	static int have = -1;

	if (have < 0) {
		have = system("python3 -c '' >/dev/null 2>&1") == 0;
		if (!have)
			diag("python3 is missing: JSON checks are skipped");
	}
	return have;
}

char *json_python(const char *text, const char *script, const char *arg)
{
	/* A memory file python3 inherits and opens as its own /proc/self/fd/N. */
	int fd = memfd_create("json", 0);
	size_t len = strlen(text);
	char path[64], *res;
	struct cmd c;

	if (!have_python())
		return NULL;
	if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
		if (fd >= 0)
			close(fd);
		return strdup("INVALID: cannot write a memory file");
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	{
		const char *argv[] = { "python3", "-c", script, path, arg, NULL };

		cmd_runv(&c, &(struct cmd_opts){ .program = true }, 60000, argv);
	}
	close(fd);
	if (c.status != 0) {
		if (asprintf(&res, "INVALID: python3 failed (status %d): %s%s", c.status, c.out,
			     c.err) < 0)
			res = NULL;
	} else {
		res = c.out;
		c.out = NULL;
	}
	cmd_free(&c);
	return res;
}

char *json_eval(const char *text, const char *expr)
{
	return json_python(text, py_eval, expr);
}

const char *json_str(const char *text, const char *expr, char *buf, size_t size)
{
	char *v = json_eval(text, expr);

	snprintf(buf, size, "%s", v && strncmp(v, "INVALID", 7) ? v : "");
	free(v);
	return buf;
}

long long json_num(const char *text, const char *expr)
{
	char buf[64], *end;
	long long n;

	json_str(text, expr, buf, sizeof(buf));
	if (!strcmp(buf, "true") || !strcmp(buf, "false"))
		return buf[0] == 't';
	n = strtoll(buf, &end, 10);
	return end == buf || *end ? -1 : n;
}

bool json_valid(const char *text)
{
	char *v = json_eval(text, "'valid'");
	bool good = v && strcmp(v, "valid") == 0;

	if (v && !good)
		diag("%s", v);
	free(v);
	return good;
}

bool json_is(const struct cmd *c, const char *expr, const char *want)
{
	char *v = json_eval(c->out, expr);
	bool good;

	if (!v) {
		skip("python3 is not available to check %s", expr);
		return true;
	}
	good = is_str(v, want, "%s: %s", c->line, expr);
	if (!good && strncmp(v, "INVALID", 7) == 0)
		diag("stdout was: %s", c->out);
	free(v);
	return good;
}
