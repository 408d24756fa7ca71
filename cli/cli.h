/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The files of the cgkill command and what they share. Calls go one way,
 * down this list: a file calls only files on lines below its own (the
 * layering test reads this list, as it reads lib/internal.h's).
 *
 *	cgkill.c		main, parse_args(): the options, the kills, what they say
 *	unit.c output.c		--unit's systemctl; listings, tables and JSON documents
 *	say.c			messages through the text filter; usage errors
 *
 * Only libcgkill's public interface (cgkill.h) is used.
 */
#ifndef CGKILL_CLI_H
#define CGKILL_CLI_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cgkill.h"

enum {
	EXIT_DONE = 0,
	EXIT_ERROR = 1,
	EXIT_USAGE = 2,
	EXIT_TIMEOUT = 3,
	EXIT_REFUSED = 4,
};

/*
 * The columns of the listings (--print, the survivors, --list-hierarchies),
 * picked with -o, as lsblk(8) and findmnt(8) have them. Printed by a small
 * formatter of our own rather than libsmartcols: the command depends on
 * nothing beyond libc, and these tables need only headings, alignment and
 * the escapes of --raw.
 */
struct column {
	const char *name;
	const char *help;
	bool right;	/* numbers: aligned right */
	bool extra;	/* not in the default set */
};

/* The columns of a process listing and of --list-hierarchies (output.c),
 * each ending with an empty one. */
extern const struct column proc_columns[];
extern const struct column hier_columns[];

#define MAX_COLUMNS 32

/* The columns to print, in order: indexes into set. */
struct columns {
	const struct column *set;
	unsigned id[MAX_COLUMNS];
	size_t n;
};

struct cli {
	cgk_options *opts;
	int signal;		/* the first signal, for the confirm prompt */
	bool wait_set, verbose, quiet, json, print;
	bool reap;		/* --reap */
	const char *output;	/* -o, as given */
	bool noheadings, raw;
	struct columns cols;
};

/* ---- unit.c ---- */
/* The cgroup of a systemd unit (user: of the user's manager), as a name
 * relative to the v2 root; or exits with an error, before anything is
 * signalled. opt: the option, for messages. */
char *unit_cgroup(const char *opt, const char *arg, bool user);

/* ---- output.c ---- */
/* -o: "A,B" picks the columns of set, "+A,B" adds them to its default
 * ones; names in any case (a usage error otherwise). */
void pick_columns(struct columns *cols, const struct column *set, const char *list);
/* The survivors, or what a dry run listed, of n reports in one table. */
void print_processes(FILE *out, const struct cli *cli, const cgk_report *const *reps, size_t n,
		     bool survivors, const char *indent);
/* -l [SIGNAL], -L and --list-hierarchies, as text or JSON: the exit status. */
int list_signals(const char *arg, bool json);
int signal_table(bool json);
int list_hierarchies(const struct cli *cli);

/* ---- say.c ---- */
/* Text from the kernel or the user through the library's filter (see say.c). */
void put_safe(FILE *out, const char *text);
void put_raw(FILE *out, const char *text);
size_t safe_width(const char *text);
/* fprintf for messages that embed such text. */
void vsay(FILE *out, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
void say(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "cgkill: MESSAGE", the hint to --help, exit status 2. */
void usage_error(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* A signal's number from its name or number, or a usage error. */
int parse_signal(const char *text);

#endif
