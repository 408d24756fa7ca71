// SPDX-License-Identifier: LGPL-2.1-or-later
/* cgkilld's configuration keys (daemon/config.c, included: the parser is
 * pure) against cgkilld.conf(5): the man page's KEYS table lists every key
 * of the code's table and no other, with the same section, default and
 * line of doc, and each key has its entry in the text of its section; the
 * defaults are values their keys accept, the page opens with the table
 * (its first section after NAME and SYNOPSIS), and --check -v prints each
 * key once, a default as the table writes it. */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../daemon/config.c"
#include "support/tap.h"

#define NKEYS (sizeof(keys) / sizeof(*keys))
#define MAX_ROWS 256

struct row {
	char name[64], section[16], def[64], doc[160];
	bool used;
};

/* The man page's text with its escapes (\-, \e, \(em) undone. */
static void unescape(char *s)
{
	char *o = s;

	while (*s) {
		if (!strncmp(s, "\\-", 2)) {
			*o++ = '-';
			s += 2;
		} else if (!strncmp(s, "\\e", 2)) {
			*o++ = '\\';
			s += 2;
		} else if (!strncmp(s, "\\(em", 4)) {
			s += 4;	/* "none" */
		} else {
			*o++ = *s++;
		}
	}
	*o = '\0';
}

static FILE *open_page(const char *argv0)
{
	const char *dir = getenv("CGKILL_SRCDIR");
	char path[4096], self[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/man/cgkilld.conf.5", dir ? dir : ".");
	f = fopen(path, "r");
	if (f || dir)
		return f;
	/* run from elsewhere: build/tests/test-conf-keys beside the tree */
	snprintf(self, sizeof(self), "%s", argv0);
	snprintf(path, sizeof(path), "%s/../../man/cgkilld.conf.5", dirname(self));
	return fopen(path, "r");
}

static void copy_field(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
	unescape(dst);
}

/* The rows of the table under .SH KEYS (after its heading row); the
 * entries ".B[IR] Key=" of each section, appended to entries as
 * "Section Key\n"; the first section after NAME and SYNOPSIS in first. */
static size_t read_page(FILE *f, struct row *rows, char *entries, size_t esize, char first[32])
{
	char line[1024], section[32] = "";
	size_t n = 0;
	int in_table = 0;	/* 1: the format line next, 2: the heading row, 3: rows */

	first[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, ".SH ", 4)) {
			snprintf(section, sizeof(section), "%.31s", line + 4);
			if (!first[0] && strcmp(section, "NAME") && strcmp(section, "SYNOPSIS"))
				snprintf(first, 32, "%s", section);
			continue;
		}
		if (!strcmp(section, "KEYS") && !strcmp(line, ".TS")) {
			in_table = 1;
			continue;
		}
		if (in_table && !strcmp(line, ".TE")) {
			in_table = 0;
			continue;
		}
		if (in_table == 1 || in_table == 2) {
			in_table++;
			continue;
		}
		if (in_table == 3 && n < MAX_ROWS) {
			char *save = NULL, *name = strtok_r(line, "\t", &save), *sec = strtok_r(NULL, "\t", &save),
			     *def = strtok_r(NULL, "\t", &save), *doc = strtok_r(NULL, "\t", &save);

			copy_field(rows[n].name, sizeof(rows[n].name), name);
			copy_field(rows[n].section, sizeof(rows[n].section), sec);
			copy_field(rows[n].def, sizeof(rows[n].def), def);
			copy_field(rows[n].doc, sizeof(rows[n].doc), doc);
			n++;
			continue;
		}
		if ((!strncmp(line, ".BI ", 4) || !strncmp(line, ".BR ", 4)) && strchr(line, '=') &&
		    (!strcmp(section, "[Daemon]") || !strcmp(section, "[Rule]"))) {
			size_t len = strlen(entries);

			*strchr(line, '=') = '\0';
			snprintf(entries + len, esize - len, "%s %s\n", section, line + 4);
		}
	}
	return n;
}

static const char *section_name(int section)
{
	return section == SEC_DAEMON ? "Daemon" : "Rule";
}

static void check_key(const struct key *k, struct row *rows, size_t nrows, const char *entries)
{
	char entry[128];
	struct row *row = NULL;

	for (size_t i = 0; i < nrows && !row; i++)
		if (!strcmp(rows[i].name, k->name) && !strcmp(rows[i].section, section_name(k->section)))
			row = &rows[i];
	if (!ok(row != NULL, "%s= of [%s] has a row in the KEYS table", k->name, section_name(k->section))) {
		skip("no row: no default to compare");
		skip("no row: no doc to compare");
	} else {
		row->used = true;
		is_str(row->def, k->def ? k->def : "", "%s=: the table's default is the code's", k->name);
		is_str(row->doc, k->doc, "%s=: the table's line of doc is the code's", k->name);
	}
	snprintf(entry, sizeof(entry), "[%s] %s\n", section_name(k->section), k->name);
	ok(strstr(entries, entry) != NULL, "%s= has an entry in the [%s] section of the page", k->name,
	   section_name(k->section));
}

static void check_defaults(void)
{
	struct config cfg;
	struct ctx x = { .cfg = &cfg, .file = "test" };
	struct rule r = { 0 };

	conf_init(&cfg);
	is_int(cfg.errors, 0, "the [Daemon] defaults are values their keys accept");
	set_defaults(&x, SEC_RULE, &r);
	is_int(cfg.errors, 0, "the [Rule] defaults are values their keys accept");
	ok(r.sig == SIGKILL && r.wait_ms == 10000 && r.pressure_full && r.pressure_pct == 60 && r.reap == -1 &&
	   r.backend == CGK_BACKEND_AUTO && r.victim == VICTIM_SELF,
	   "a rule's defaults are set from the table");
	rule_free(&r);
	conf_free(&cfg);
}

/* How many lines of text are "Key=..." (or, with value, "Key=value"). */
static int lines_of(const char *text, const char *key, const char *value)
{
	char want[256];
	int n = 0;

	snprintf(want, sizeof(want), "%s=%s", key, value ? value : "");
	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		size_t len = strcspn(l, "\n");

		n += value ? len == strlen(want) && !strncmp(l, want, len) : !strncmp(l, want, strlen(want));
	}
	return n;
}

/* conf_print() (--check -v): every key once in its section, each default
 * as the table writes it (what the parser reads back to the same value). */
static void check_printed(void)
{
	static const char text[] = "[Rule]\nName=r\nMatch=a/b\nTrigger=pids-max\n";
	struct config cfg;
	char *out = NULL, *rule_part;
	size_t size = 0;
	FILE *f = open_memstream(&out, &size);

	if (!f)
		bail_out("open_memstream");
	conf_init(&cfg);
	conf_parse_text(&cfg, "test", text, strlen(text), NULL, NULL);
	conf_print(f, &cfg);
	fclose(f);
	rule_part = out ? strstr(out, "\n[Rule]\n") : NULL;
	if (!ok(rule_part != NULL, "--check -v prints a [Daemon] and a [Rule]"))
		return;
	*rule_part++ = '\0';
	for (size_t i = 0; i < NKEYS; i++) {
		const struct key *k = &keys[i];
		const char *part = k->section == SEC_DAEMON ? out : rule_part;

		is_int(lines_of(part, k->name, NULL), 1, "--check -v prints %s= once in [%s]", k->name,
		       section_name(k->section));
		if (k->def)
			is_int(lines_of(part, k->name, k->def), 1, "... as its default, %s", k->def);
	}
	free(out);
	conf_free(&cfg);
}

int main(int argc, char **argv)
{
	static struct row rows[MAX_ROWS];
	static char entries[16384];
	char first[32];
	FILE *f = open_page(argc > 0 ? argv[0] : ".");
	size_t nrows;

	if (!f)
		bail_out("cannot find man/cgkilld.conf.5 (set CGKILL_SRCDIR to the source tree)");
	nrows = read_page(f, rows, entries, sizeof(entries), first);
	fclose(f);
	ok(nrows > 0, "cgkilld.conf(5) has a KEYS table (%zu rows)", nrows);
	is_str(first, "KEYS", "the page opens with it: its first section after NAME and SYNOPSIS");
	for (size_t i = 0; i < NKEYS; i++)
		check_key(&keys[i], rows, nrows, entries);
	for (size_t i = 0; i < nrows; i++)
		ok(rows[i].used, "the table's %s= of [%s] is a key of the code", rows[i].name, rows[i].section);
	is_int((long long)nrows, (long long)NKEYS, "as many rows as keys");
	check_defaults();
	check_printed();
	return done_testing();
}
