// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Issue 19, item 3: the listings as lsblk and findmnt print them. -o picks
 * the columns (any case; +COL adds to the default ones), --noheadings
 * drops the heading, --raw prints one space between values and escapes
 * blanks, controls and stray bytes as \xHH; -J is -j. For the dry run
 * (one table for all targets), the survivors on stderr and
 * --list-hierarchies; and the combinations that are refused rather than
 * ignored.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

#define CMD_MS 60000

static char *box;

/* Does every line that starts with indent have a value at each column of
 * the heading (the first line with heads[0]): beginning where the heading
 * begins, after a blank, or for PID (aligned right) ending where it ends? */
static bool aligned(const char *text, const char *const *heads, size_t n, const char *indent)
{
	const char *head = strstr(text, heads[0]);
	size_t start[8], end[8];

	if (!head)
		return false;
	while (head > text && head[-1] != '\n')
		head--;
	for (size_t i = 0; i < n; i++) {
		const char *at = strstr(head, heads[i]);

		if (!at || (size_t)(at - head) > strcspn(head, "\n"))
			return false;
		start[i] = (size_t)(at - head);
		end[i] = start[i] + strlen(heads[i]);
	}
	for (const char *l = text; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != '\0')) {
		size_t len = strcspn(l, "\n");

		if (strncmp(l, indent, strlen(indent)))
			continue;
		for (size_t i = 0; i < n; i++) {
			bool right = strcmp(heads[i], "PID") == 0;
			size_t at = right ? end[i] - 1 : start[i];

			if (at >= len || l[at] == ' ' || (!right && at && l[at - 1] != ' ') ||
			    (right && at + 1 < len && l[at + 1] != ' '))
				return false;
		}
	}
	return true;
}

static void test_dry_run(void)
{
	static const char *const heads[] = { "PID", "STATE", "CGROUP", "COMM" };
	struct scene s;
	struct cmd c = { 0 };
	char *a = NULL, *b = NULL, *odd = NULL, row[256];
	pid_t pa, pb, po;

	if (!scene_start(&s, box, "dry"))
		goto out;
	a = sb_mkdir(s.target, "a b");
	b = sb_mkdir(s.target, "back\\xslash\\n");
	odd = sb_mkdir(s.target, "e\x1b[1m\x9b");
	pa = a ? sb_spawn(&(struct sb_proc){ .cgroups = { a }, .comm = "worker one" }) : -1;
	pb = b ? sb_spawn(&(struct sb_proc){ .cgroups = { b }, .comm = "w2" }) : -1;
	po = odd ? sb_spawn(&(struct sb_proc){ .cgroups = { odd }, .comm = "w\t3" }) : -1;
	if (!ok(pa > 0 && pb > 0 && po > 0, "dry: processes in 'a b', 'back\\xslash\\n' and 'e<ESC>[1m<9b>'"))
		goto out;

	/* The default: a heading, aligned columns, controls as '?'. */
	cmd_run(&c, CMD_MS, "-p", s.target, NULL);
	exit_is(&c, 0);
	is_int(count_lines_with(c.out, ""), 4, "dry: four lines");
	ok(strstr(c.out, "STATE CGROUP") && strstr(c.out, "STATE CGROUP") < strchr(c.out, '\n'),
	   "dry: the heading first");
	is_int(count_rows(c.out, "PID STATE CGROUP COMM"), 1, "dry: one heading");
	snprintf(row, sizeof(row), "%d S a b worker one", (int)pa);
	is_int(count_rows(c.out, row), 1, "dry: '%s'", row);
	snprintf(row, sizeof(row), "%d S back\\xslash\\n w2", (int)pb);
	is_int(count_rows(c.out, row), 1, "dry: '%s'", row);
	snprintf(row, sizeof(row), "%d S e?[1m? w?3", (int)po);
	is_int(count_rows(c.out, row), 1, "dry: controls and stray bytes as '?': '%s'", row);
	if (!ok(aligned(c.out, heads, 4, ""), "dry: columns aligned under their headings"))
		diag("stdout:\n%s", c.out);
	cmd_free(&c);

	cmd_run(&c, CMD_MS, "-p", "--noheadings", s.target, NULL);
	exit_is(&c, 0);
	is_int(count_lines_with(c.out, "PID"), 0, "--noheadings: no heading");
	is_int(count_lines_with(c.out, " S "), 3, "--noheadings: three rows");
	cmd_free(&c);

	/* -o, in any case, in any order */
	cmd_run(&c, CMD_MS, "-n", "-o", "comm,Pid", s.target, NULL);
	exit_is(&c, 0);
	is_int(count_rows(c.out, "COMM PID"), 1, "-o comm,Pid: the heading COMM PID");
	snprintf(row, sizeof(row), "w2 %d", (int)pb);
	is_int(count_rows(c.out, row), 1, "-o comm,Pid: '%s'", row);
	cmd_free(&c);

	/* +COL: the default ones, then these */
	cmd_run(&c, CMD_MS, "-p", "-o", "+TARGET,STATE", s.target, NULL);
	exit_is(&c, 0);
	is_int(count_rows(c.out, "PID STATE CGROUP COMM TARGET STATE"), 1, "-o +TARGET,STATE: heading");
	snprintf(row, sizeof(row), "%d S back\\xslash\\n w2 %s S", (int)pb, s.target);
	is_int(count_rows(c.out, row), 1, "-o +TARGET,STATE: '%s'", row);
	cmd_free(&c);

	/* --raw: one space apart; blanks, controls and a backslash before x
	 * escaped */
	cmd_run(&c, CMD_MS, "-p", "--raw", s.target, NULL);
	exit_is(&c, 0);
	{
		bool good = ok(strncmp(c.out, "PID STATE CGROUP COMM\n", 22) == 0,
			       "--raw: the heading, one space apart");

		snprintf(row, sizeof(row), "\n%d S a\\x20b worker\\x20one\n", (int)pa);
		good &= ok(strstr(c.out, row) != NULL, "--raw: blanks as \\x20");
		snprintf(row, sizeof(row), "\n%d S back\\x5cxslash\\n w2\n", (int)pb);
		good &= ok(strstr(c.out, row) != NULL,
			   "--raw: a backslash before x as \\x5c, others as they are");
		snprintf(row, sizeof(row), "\n%d S e\\x1b[1m\\x9b w\\x093\n", (int)po);
		good &= ok(strstr(c.out, row) != NULL, "--raw: controls and stray bytes as \\xHH");
		if (!good)
			diag("stdout:\n%s", c.out);
	}
	cmd_free(&c);

	cmd_run(&c, CMD_MS, "-p", "-r", "--noheadings", "-o", "PID", s.target, NULL);
	exit_is(&c, 0);
	snprintf(row, sizeof(row), "%d\n", (int)pa);
	ok(strstr(c.out, row) && count_lines_with(c.out, "") == 3 && !strchr(c.out, ' '),
	   "-r --noheadings -o PID: three pids, one a line");
	cmd_free(&c);

	/* Two targets: one table. */
	cmd_run(&c, CMD_MS, "-p", "-o", "pid,target", a, b, NULL);
	exit_is(&c, 0);
	is_int(count_rows(c.out, "PID TARGET"), 1, "two targets: one heading");
	snprintf(row, sizeof(row), "%d %s", (int)pb, b);
	is_int(count_rows(c.out, row), 1, "two targets: the second one's process, its target named");
	cmd_free(&c);

	ok(sb_alive(pa) && sb_alive(pb) && sb_alive(po), "dry: all alive");
out:
	free(a);
	free(b);
	free(odd);
	scene_end(&s);
}

static void test_survivors(void)
{
	static const char *const heads[] = { "PID", "STATE", "CGROUP", "COMM" };
	struct scene s;
	struct cmd c = { 0 };
	char *sub = NULL, row[256];
	pid_t p, q;

	if (!scene_start(&s, box, "surv"))
		goto out;
	sub = sb_mkdir(s.target, "sub dir");
	p = sb_spawn(&(struct sb_proc){ .cgroups = { s.target }, .ignore = { SIGTERM }, .comm = "stays" });
	q = sub ? sb_spawn(&(struct sb_proc){ .cgroups = { sub }, .ignore = { SIGTERM }, .comm = "stays too" }) : -1;
	if (!ok(p > 0 && q > 0, "survivors: two TERM-ignorers"))
		goto out;
	cmd_run(&c, CMD_MS, "-s", "TERM", "--wait=300ms", s.target, NULL);
	exit_is(&c, 3);
	is_int(count_rows(c.err, "PID STATE CGROUP COMM"), 1, "survivors: a heading on stderr");
	snprintf(row, sizeof(row), "%d S sub dir stays too", (int)q);
	is_int(count_rows(c.err, row), 1, "survivors: '%s'", row);
	if (!ok(aligned(c.err, heads, 4, "  "), "survivors: aligned, indented"))
		diag("stderr:\n%s", c.err);
	ok(c.out[0] == '\0', "survivors: nothing on stdout");
	cmd_free(&c);

	cmd_run(&c, CMD_MS, "-s", "TERM", "--wait=300ms", "-r", "--noheadings", "-o", "CGROUP,COMM,PID",
		s.target, NULL);
	exit_is(&c, 3);
	snprintf(row, sizeof(row), "\nsub\\x20dir stays\\x20too %d\n", (int)q);
	if (!ok(strstr(c.err, row) != NULL, "survivors -r --noheadings -o: raw rows, no indent"))
		diag("stderr:\n%s", c.err);
	is_int(count_lines_with(c.err, "PID"), 0, "survivors --noheadings: no heading");
	cmd_free(&c);

	cmd_run(&c, CMD_MS, "-q", "-s", "TERM", "--wait=300ms", "-o", "PID", s.target, NULL);
	exit_is(&c, 3);
	is_int(count_lines_with(c.err, ""), 1, "survivors -q: the message only");
	cmd_free(&c);
out:
	free(sub);
	scene_end(&s);
}

static void test_hierarchies(void)
{
	static const char *const heads[] = { "MOUNT", "TYPE", "CONTROLLERS", "BACKENDS" };
	struct cmd c = { 0 };
	char row[4200];

	cmd_run(&c, CMD_MS, "--list-hierarchies", NULL);
	exit_is(&c, 0);
	is_int(count_rows(c.out, "MOUNT TYPE CONTROLLERS BACKENDS"), 1, "--list-hierarchies: heading");
	if (!ok(aligned(c.out, heads, 4, "/"), "--list-hierarchies: aligned"))
		diag("stdout:\n%s", c.out);
	cmd_free(&c);

	cmd_run(&c, CMD_MS, "--list-hierarchies", "--raw", "--noheadings", "-o", "type,mount", NULL);
	exit_is(&c, 0);
	snprintf(row, sizeof(row), "v2 %s", sb_mount(SB_V2));
	is_int(count_rows(c.out, row), 1, "--list-hierarchies -r --noheadings -o type,mount: '%s'", row);
	is_int(count_lines_with(c.out, "MOUNT"), 0, "--list-hierarchies --noheadings: no heading");
	cmd_free(&c);

	cmd_run(&c, CMD_MS, "--list-hierarchies", "-o", "+TYPE", NULL);
	exit_is(&c, 0);
	is_int(count_rows(c.out, "MOUNT TYPE CONTROLLERS BACKENDS TYPE"), 1,
	       "--list-hierarchies -o +TYPE: the default columns and TYPE");
	cmd_free(&c);

	/* process columns are not hierarchy columns */
	cmd_run(&c, CMD_MS, "--list-hierarchies", "-o", "PID", NULL);
	exit_is(&c, 2);
	ok(strstr(c.err, "unknown column: PID") != NULL, "--list-hierarchies -o PID: unknown column");
	cmd_free(&c);
}

/* Usage errors: a bad column list, and options that would be ignored. */
static void test_refused(void)
{
	static const struct {
		const char *args[6];
		const char *says;
	} cases[] = {
		{ { "-p", "-o", "PID,NOPE", "/x" }, "unknown column: NOPE" },
		{ { "-p", "-o", "", "/x" }, "unknown column: " },
		{ { "-p", "-o", "PID,", "/x" }, "unknown column: " },
		{ { "-p", "-o", "MOUNT", "/x" }, "unknown column: MOUNT" },
		{ { "-p", "-j", "-o", "PID", "/x" }, "--json does not go with" },
		{ { "-p", "-J", "--raw", "/x" }, "--json does not go with" },
		{ { "-j", "--noheadings", "/x" }, "--json does not go with" },
		{ { "-L", "-o", "PID" }, "not of signals" },
		{ { "-l", "--raw" }, "not of signals" },
		{ { "-L", "/x" }, "take no target" },
		{ { "--list-hierarchies", "/x" }, "take no target" },
		{ { "-L", "--list-hierarchies" }, "mutually exclusive" },
	};
	char many[512] = "PID";
	struct cmd c = { 0 };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *const *a = cases[i].args;

		cmd_run(&c, CMD_MS, a[0], a[1], a[2], a[3], a[4], NULL);
		exit_is(&c, 2);
		if (!ok(strstr(c.err, cases[i].says) && c.out[0] == '\0', "%s: '%s', nothing on stdout",
			c.line, cases[i].says))
			diag("stderr: %s", c.err);
		cmd_free(&c);
	}
	for (int i = 0; i < 32; i++)
		strcat(many, ",PID");
	cmd_run(&c, CMD_MS, "-p", "-o", many, "/x", NULL);
	exit_is(&c, 2);
	ok(strstr(c.err, "too many columns") != NULL, "33 columns: too many");
	cmd_free(&c);
}

static void test_help(void)
{
	static const char *const names[] = { "PID", "STATE", "CGROUP", "COMM", "TARGET",
					     "MOUNT", "TYPE", "CONTROLLERS", "BACKENDS" };
	struct cmd c = { 0 };

	cmd_run(&c, CMD_MS, "--help", NULL);
	exit_is(&c, 0);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char want[32];

		snprintf(want, sizeof(want), "\n %11s  ", names[i]);
		ok(strstr(c.out, want) != NULL, "--help lists the column %s", names[i]);
	}
	ok(strstr(c.out, "\n -J  ") != NULL, "--help lists -J");
	cmd_free(&c);
}

int main(void)
{
	box = sb_start(300);
	rec_init();

	test_dry_run();
	test_survivors();
	test_hierarchies();
	test_refused();
	test_help();

	return sb_finish(box);
}
