/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cgkill: kill every process in a cgroup and its descendants. Options,
 * messages and exit codes; the work is done by libcgkill. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

enum { COL_PID, COL_STATE, COL_CGROUP, COL_COMM, COL_TARGET };
static const struct column proc_columns[] = {
	[COL_PID] = { .name = "PID", .right = true,
		      .help = "process ID; 0 outside our pid namespace" },
	[COL_STATE] = { .name = "STATE", .help = "state as in /proc/<pid>/stat: R, S, D, T, ..." },
	[COL_CGROUP] = { .name = "CGROUP", .help = "cgroup below the target; . for the target" },
	[COL_COMM] = { .name = "COMM", .help = "command name" },
	[COL_TARGET] = { .name = "TARGET", .help = "the target cgroup, as resolved", .extra = true },
	{ 0 },
};

enum { COL_MOUNT, COL_TYPE, COL_CONTROLLERS, COL_BACKENDS };
static const struct column hier_columns[] = {
	[COL_MOUNT] = { .name = "MOUNT", .help = "mount point" },
	[COL_TYPE] = { .name = "TYPE", .help = "v2 or v1" },
	[COL_CONTROLLERS] = { .name = "CONTROLLERS",
			      .help = "controllers of a v1 hierarchy; - for none" },
	[COL_BACKENDS] = { .name = "BACKENDS", .help = "the backends that can serve it" },
	{ 0 },
};

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

static void usage(FILE *out)
{
	fputs("Usage:\n"
	      " cgkill [options] <cgroup>...\n"
	      " cgkill [options] --pid <pid>...\n"
	      " cgkill [options] --unit <unit>...\n"
	      " cgkill -l [<signal>] | -L\n"
	      "\n"
	      "Kill every process in a cgroup and in all of its descendant cgroups.\n"
	      "<cgroup> is a path into a mounted cgroup hierarchy, or a path relative\n"
	      "to the cgroup v2 mount as /proc/<pid>/cgroup shows it.\n"
	      "\n"
	      "Options:\n"
	      " -s, --signal <signal>        signal to send (name or number; default KILL)\n"
	      " -b, --backend <name>         auto, kernel, freeze, v1-freeze or loop\n"
	      " -w, --wait[=<duration>]      wait until the tree is empty (default 10s)\n"
	      "     --no-wait                return once the signals are sent\n"
	      "     --timeout <duration> <signal>\n"
	      "                              after <duration>, send <signal> to what is left\n"
	      "     --reap                   after SIGKILL, release the memory at once\n"
	      "                              (process_mrelease, Linux 5.15)\n"
	      "     --pid <pid>              target the cgroup v2 that holds <pid>\n"
	      "     --unit <unit>            target the cgroup of a systemd unit\n"
	      "     --user-unit <unit>       the same, of the user's service manager\n"
	      " -p, --print                  list what would be signalled, change nothing\n"
	      " -n, --dry-run                same as --print\n"
	      " -j, --json                   write JSON to standard output (see cgkill(1))\n"
	      " -J                           same as --json\n"
	      " -o, --output <list>          the columns of the listings (see below)\n"
	      "     --noheadings             listings without a heading line\n"
	      " -r, --raw                    listings unaligned, values escaped\n"
	      " -f, --force                  override the self, PID 1 and protected guards\n"
	      " -i, --interactive            ask before signalling\n"
	      "     --protected <file>       protected-cgroup list (default /etc/cgkill/protected)\n"
	      "     --list-hierarchies       show the cgroup hierarchies and their backends\n"
	      " -l, --list[=<signal>]        list signal names, or convert one\n"
	      " -L, --table                  list signal names and numbers\n"
	      " -v, --verbose                report what is done and progress while waiting\n"
	      " -q, --quiet                  print errors only\n"
	      "\n"
	      " -h, --help                   display this help\n"
	      " -V, --version                display version\n",
	      out);
	fputs("\nAvailable output columns (--print, survivors):\n", out);
	for (const struct column *c = proc_columns; c->name; c++)
		fprintf(out, " %11s  %s\n", c->name, c->help);
	fputs("\nAvailable output columns (--list-hierarchies):\n", out);
	for (const struct column *c = hier_columns; c->name; c++)
		fprintf(out, " %11s  %s\n", c->name, c->help);
	fputs("\n"
	      "Exit status: 0 done and empty, 1 error, 2 usage, 3 timed out (survivors\n"
	      "listed), 4 refused by a guard rail.\n"
	      "\n"
	      "For more details see cgkill(1).\n",
	      out);
}

/* The one filter for text from the kernel or the user: cgroup paths and
 * names, command names, arguments, and messages that embed them. Whoever
 * owns a subtree picks its names; they must not drive the terminal. The
 * library's CGK_TEXT_SAFE: each control character (C0, DEL, C1 such as
 * U+009B CSI) and each byte that is not part of valid UTF-8 (a lone 0x9b
 * is CSI to an 8-bit terminal) becomes '?'; the rest passes as is. */
static void put_safe(FILE *out, const char *text)
{
	cgk_text_write(out, text, strlen(text), CGK_TEXT_SAFE);
}

/* A value of --raw output, escaped as util-linux does: blanks, a
 * backslash before an x, control characters and each byte of no valid
 * UTF-8 as \xHH, so that a line splits at single spaces. */
static void put_raw(FILE *out, const char *text)
{
	cgk_text_write(out, text, strlen(text), CGK_TEXT_RAW);
}

/* Columns that text takes as put_safe() writes it: one a character (a
 * wide one, CJK or emoji, takes two on a terminal and shifts its line). */
static size_t safe_width(const char *text)
{
	return cgk_text_width(text, strlen(text));
}

/* fprintf for messages that embed such text: the whole message goes through
 * put_safe(), a newline that ends fmt is kept. */
static void __attribute__((format(printf, 2, 0))) vsay(FILE *out, const char *fmt, va_list ap)
{
	size_t n = strlen(fmt);
	bool nl = n && fmt[n - 1] == '\n';
	char *text;
	int len = vasprintf(&text, fmt, ap);

	if (len < 0)
		return;
	if (nl)
		text[len - 1] = '\0';
	put_safe(out, text);
	if (nl)
		fputc('\n', out);
	free(text);
}

static void __attribute__((format(printf, 2, 3))) say(FILE *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(out, fmt, ap);
	va_end(ap);
}

static void __attribute__((noreturn, format(printf, 1, 2))) usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("cgkill: ", stderr);
	va_start(ap, fmt);
	vsay(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'cgkill --help' for more information.\n", stderr);
	exit(EXIT_USAGE);
}

/* getopt's own messages would echo the argument unfiltered (opterr is 0):
 * the same ones through the filter. arg is the element getopt stopped at,
 * which a long option always is. */
static void __attribute__((noreturn)) bad_option(const struct option *longopts, const char *arg)
{
	size_t len = strcspn(arg, "=");
	unsigned matches = 0;
	bool known = false;

	if (!optopt) {
		for (const struct option *o = longopts; o->name && len > 2; o++)
			matches += strncmp(o->name, arg + 2, len - 2) == 0;
		usage_error(matches > 1 ? "option '%s' is ambiguous" : "unrecognized option '%s'", arg);
	}
	for (const struct option *o = longopts; o->name; o++)
		known |= o->val == optopt;
	if (known && strncmp(arg, "--", 2) == 0) {
		if (strchr(arg, '='))
			usage_error("option '%.*s' doesn't allow an argument", (int)len, arg);
		usage_error("option '%s' requires an argument", arg);
	}
	if (known)
		usage_error("option requires an argument -- '%c'", optopt);
	usage_error("invalid option -- '%c'", optopt);
}

static int parse_signal(const char *text)
{
	int sig;

	if (cgk_signal_from_name(text, &sig) < 0)
		usage_error("unknown signal: %s", text);
	return sig;
}

/* A number that only lacks its unit: "1000", "1.5", "1min 30". */
static bool lacks_unit(const char *text)
{
	char buf[128];
	uint64_t ms;

	return snprintf(buf, sizeof(buf), "%ss", text) < (int)sizeof(buf) &&
	       cgk_parse_duration(buf, &ms) == 0;
}

/* opt is how the option was written before its argument: "--timeout ". */
static uint64_t parse_duration(const char *opt, const char *text)
{
	uint64_t ms;
	int r = cgk_parse_duration(text, &ms);

	/* kill --timeout takes milliseconds, systemd seconds: ask which. */
	if (r == -EINVAL && lacks_unit(text))
		usage_error("%s%s: a duration needs a unit (%sms? %ss?)", opt, text, text, text);
	if (r == -ERANGE)
		usage_error("invalid duration: %s (too long; infinity waits for ever)", text);
	if (r < 0)
		usage_error("invalid duration: %s (a number and a unit, as 500ms, 10s or "
			    "1min 30s, or infinity)", text);
	return ms;
}

/* -o: "A,B" picks the columns of set, "+A,B" adds them to its default
 * ones; names in any case. */
static void pick_columns(struct columns *cols, const struct column *set, const char *list)
{
	cols->set = set;
	cols->n = 0;
	if (!list || *list == '+')
		for (unsigned i = 0; set[i].name; i++)
			if (!set[i].extra)
				cols->id[cols->n++] = i;
	if (!list)
		return;
	for (const char *s = list + (*list == '+');; s++) {
		size_t len = strcspn(s, ",");
		unsigned i = 0;

		while (set[i].name &&
		       (strlen(set[i].name) != len || strncasecmp(set[i].name, s, len)))
			i++;
		if (!set[i].name)
			usage_error("unknown column: %.*s", (int)len, s);
		if (cols->n == MAX_COLUMNS)
			usage_error("too many columns: %s", list);
		cols->id[cols->n++] = i;
		s += len;
		if (!*s)
			break;
	}
}

/* The text of a cell: column col of row row; buf may hold it. */
typedef const char *cell_fn(const void *rows, size_t row, unsigned col, char *buf, size_t size);

static void pad(FILE *out, size_t n)
{
	while (n--)
		fputc(' ', out);
}

/* A listing: a heading unless --noheadings; the columns aligned, or with
 * --raw one space apart and escaped; each line after indent. Nothing at
 * all for no rows. */
static void print_table(FILE *out, const struct cli *cli, const char *indent, cell_fn *cell,
			const void *rows, size_t n_rows)
{
	const struct columns *cols = &cli->cols;
	size_t width[MAX_COLUMNS] = { 0 };
	char buf[4200];

	if (!n_rows)
		return;
	for (size_t c = 0; c < cols->n && !cli->raw; c++) {
		width[c] = cli->noheadings ? 0 : strlen(cols->set[cols->id[c]].name);
		for (size_t r = 0; r < n_rows; r++) {
			size_t w = safe_width(cell(rows, r, cols->id[c], buf, sizeof(buf)));

			if (w > width[c])
				width[c] = w;
		}
	}
	/* Line 0 is the heading. */
	for (size_t r = cli->noheadings ? 1 : 0; r <= n_rows; r++) {
		fputs(indent, out);
		for (size_t c = 0; c < cols->n; c++) {
			const struct column *col = &cols->set[cols->id[c]];
			const char *text = r ? cell(rows, r - 1, cols->id[c], buf, sizeof(buf)) :
					       col->name;
			size_t fill = cli->raw ? 0 : width[c] - safe_width(text);

			if (c)
				fputc(' ', out);
			if (col->right)
				pad(out, fill);
			if (cli->raw)
				put_raw(out, text);
			else
				put_safe(out, text);
			if (!col->right && c + 1 < cols->n)
				pad(out, fill);
		}
		fputc('\n', out);
	}
}

/* A process of a report's list, a row of a process listing. */
struct proc_row {
	const cgk_report *rep;
	const cgk_process *p;
};

static const char *proc_cell(const void *rows, size_t row, unsigned col, char *buf, size_t size)
{
	const struct proc_row *r = (const struct proc_row *)rows + row;

	switch (col) {
	case COL_PID:
		snprintf(buf, size, "%d", (int)cgk_process_pid(r->p));
		return buf;
	case COL_STATE:
		snprintf(buf, size, "%c", cgk_process_state(r->p) ?: '?');
		return buf;
	case COL_CGROUP:
		return *cgk_process_cgroup(r->p) ? cgk_process_cgroup(r->p) : ".";
	case COL_COMM:
		return cgk_process_comm(r->p);
	case COL_TARGET:
		return cgk_report_path(r->rep);
	}
	return "";
}

/* The survivors, or what a dry run listed, of n reports in one table. */
static void print_processes(FILE *out, const struct cli *cli, const cgk_report *const *reps,
			    size_t n, bool survivors, const char *indent)
{
	enum cgk_list which = survivors ? CGK_LIST_SURVIVORS : CGK_LIST_LISTED;
	struct proc_row *rows;
	size_t n_rows = 0;

	for (size_t i = 0; i < n; i++)
		n_rows += cgk_report_n_processes(reps[i], which);
	rows = calloc(n_rows ?: 1, sizeof(*rows));
	if (!rows) {
		fputs("cgkill: out of memory\n", stderr);
		return;
	}
	n_rows = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < cgk_report_n_processes(reps[i], which); k++)
			rows[n_rows++] = (struct proc_row){ reps[i], cgk_report_process(reps[i], which, k) };
	print_table(out, cli, indent, proc_cell, rows, n_rows);
	free(rows);
}

/*
 * The other documents of -j: the signals and the hierarchies, under the
 * same "schema" and "version" as the report (data/cgkill-report.schema.json).
 * Strings are escaped as the library's report escapes them (CGK_TEXT_JSON):
 * '"', '\\' and control characters (C1 too: JSON is read on terminals),
 * U+FFFD for each byte of no valid UTF-8.
 */
static void put_json(FILE *out, const char *text, size_t n)
{
	cgk_text_write(out, text, n, CGK_TEXT_JSON);
}

/* {"schema": 1, "version": "...", "<key>": [ ... */
static void json_begin(const char *key)
{
	printf("{\n  \"schema\": %d,\n  \"version\": \"%s\",\n  \"%s\": [", CGK_JSON_SCHEMA,
	       CGK_VERSION, key);
}

/* Before the i-th element of the array: one a line. */
static void json_next(size_t i)
{
	fputs(i ? ",\n    " : "\n    ", stdout);
}

static int json_end(size_t n)
{
	fputs(n ? "\n  ]\n}\n" : "]\n}\n", stdout);
	if (fflush(stdout) == EOF || ferror(stdout)) {
		fputs("cgkill: cannot write the JSON document\n", stderr);
		return EXIT_ERROR;
	}
	return EXIT_DONE;
}

/* The signals from first to last that have a name. */
static int signals_json(int first, int last)
{
	char buf[32];
	size_t n = 0;

	json_begin("signals");
	for (int sig = first; sig <= last; sig++) {
		const char *name = cgk_signal_name(sig, buf, sizeof(buf));

		if (!name)
			continue;
		json_next(n++);
		printf("{\"number\": %d, \"name\": ", sig);
		put_json(stdout, name, strlen(name));
		putchar('}');
	}
	return json_end(n);
}

static int list_signals(const char *arg, bool json)
{
	char buf[32];

	if (arg) {
		char *end;
		long num = strtol(arg, &end, 10);
		int sig;

		/* A number converts to its name (exit statuses above 128 too). */
		if (*arg && !*end) {
			const char *name;

			sig = (int)(num > 128 ? num - 128 : num);
			name = cgk_signal_name(sig, buf, sizeof(buf));
			if (!name)
				usage_error("unknown signal: %s", arg);
			if (json)
				return signals_json(sig, sig);
			puts(name);
			return EXIT_DONE;
		}
		sig = parse_signal(arg);
		if (json)
			return signals_json(sig, sig);
		printf("%d\n", sig);
		return EXIT_DONE;
	}
	if (json)
		return signals_json(1, SIGRTMAX);
	/* Count what is printed: 32 and 33 have no name, so sig % 8 would
	 * leave a short row. */
	for (int sig = 1, n = 0; sig <= SIGRTMAX; sig++) {
		const char *name = cgk_signal_name(sig, buf, sizeof(buf));

		if (name)
			printf("%s%c", name, ++n % 8 == 0 || sig == SIGRTMAX ? '\n' : ' ');
	}
	return EXIT_DONE;
}

static int signal_table(bool json)
{
	char buf[32];

	if (json)
		return signals_json(1, SIGRTMAX);
	for (int sig = 1, n = 0; sig <= SIGRTMAX; sig++) {
		const char *name = cgk_signal_name(sig, buf, sizeof(buf));

		if (name)
			printf("%2d %-8s%s", sig, name, ++n % 7 == 0 || sig == SIGRTMAX ? "\n" : " ");
	}
	return EXIT_DONE;
}

/* "kernel,freeze,loop" from a set of backend bits. */
static const char *backend_list(unsigned set, char *buf, size_t size)
{
	size_t len = 0;

	*buf = '\0';
	for (int b = CGK_BACKEND_KERNEL; cgk_backend_name(b) && len < size; b++)
		if (set & (1u << b))
			len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? "," : "",
						cgk_backend_name(b));
	return buf;
}

/* rows: the cgk_hierarchies; row: its index. */
static const char *hier_cell(const void *rows, size_t row, unsigned col, char *buf, size_t size)
{
	const cgk_hierarchies *h = rows;
	const char *controllers = cgk_hierarchies_controllers(h, row);

	switch (col) {
	case COL_MOUNT:
		return cgk_hierarchies_path(h, row);
	case COL_TYPE:
		return cgk_hierarchies_version(h, row) == 2 ? "v2" : "v1";
	case COL_CONTROLLERS:
		return *controllers ? controllers : "-";
	case COL_BACKENDS:
		return backend_list(cgk_hierarchies_backends(h, row), buf, size);
	}
	return "";
}

static int hierarchies_json(const cgk_hierarchies *h)
{
	size_t n = cgk_hierarchies_count(h);

	json_begin("hierarchies");
	for (size_t i = 0; i < n; i++) {
		const char *path = cgk_hierarchies_path(h, i);
		const char *first = cgk_hierarchies_controllers(h, i), *c = first;
		unsigned backends = cgk_hierarchies_backends(h, i);

		json_next(i);
		fputs("{\"mount\": ", stdout);
		put_json(stdout, path, strlen(path));
		printf(", \"type\": \"%s\", \"controllers\": [",
		       cgk_hierarchies_version(h, i) == 2 ? "v2" : "v1");
		/* "cpu,cpuacct": one string each */
		while (*c) {
			size_t len = strcspn(c, ",");

			if (c != first)
				fputs(", ", stdout);
			put_json(stdout, c, len);
			c += len + (c[len] == ',');
		}
		fputs("], \"backends\": [", stdout);
		for (int b = CGK_BACKEND_KERNEL, k = 0; cgk_backend_name(b); b++)
			if (backends & (1u << b))
				printf("%s\"%s\"", k++ ? ", " : "", cgk_backend_name(b));
		fputs("]}", stdout);
	}
	return json_end(n);
}

static int list_hierarchies(const struct cli *cli)
{
	cgk_hierarchies *h = NULL;
	int r = cgk_hierarchies_read(&h);

	if (r < 0) {
		fprintf(stderr, "cgkill: cannot read /proc/self/mountinfo (%s)\n", strerrorname_np(-r));
		return EXIT_ERROR;
	}
	if (cli->json) {
		r = hierarchies_json(h);
	} else {
		print_table(stdout, cli, "", hier_cell, h, cgk_hierarchies_count(h));
		r = EXIT_DONE;
	}
	cgk_hierarchies_free(h);
	return r;
}

static bool confirm(const char *path, unsigned procs, unsigned cgroups, void *userdata)
{
	const struct cli *cli = userdata;
	char answer[16], buf[32];

	say(stderr, "cgkill: send %s to %u process(es) in %u cgroup(s) under %s? [y/N] ",
		cgk_signal_name(cli->signal, buf, sizeof(buf)) ?: "?", procs, cgroups, path);
	fflush(stderr);
	if (!fgets(answer, sizeof(answer), stdin))
		return false;
	answer[strcspn(answer, "\n")] = '\0';
	return strcasecmp(answer, "y") == 0 || strcasecmp(answer, "yes") == 0;
}

static void progress(const char *path, unsigned left, uint64_t waited_ms, void *userdata)
{
	(void)userdata;
	say(stderr, "cgkill: %s: %u process(es) left after %llu ms\n", path, left,
		(unsigned long long)waited_ms);
}

static int exit_status(const cgk_report *rep, int r)
{
	if (r >= 0)
		return EXIT_DONE;
	if (cgk_report_refused(rep) != CGK_GUARD_NONE)
		return EXIT_REFUSED;
	if (r == -ETIMEDOUT && cgk_report_waited(rep) && !cgk_report_emptied(rep))
		return EXIT_TIMEOUT;
	return EXIT_ERROR;
}

static void tell(const struct cli *cli, const cgk_report *rep, int r)
{
	char buf[32];

	if (r < 0) {
		fputs("cgkill: ", stderr);
		put_safe(stderr, rep ? cgk_report_message(rep) : strerror(-r));
		fputc('\n', stderr);
		if (!cli->quiet && rep)
			print_processes(stderr, cli, &rep, 1, true, cli->raw ? "" : "  ");
		return;
	}
	if (cli->reap && cgk_report_reap_errno(rep) && !cli->quiet)
		say(stderr, "cgkill: %s: --reap: cannot release the memory (%s%s): it is freed as "
			"the processes exit\n", cgk_report_path(rep),
			strerrorname_np(cgk_report_reap_errno(rep)) ?: "?",
			cgk_report_reap_errno(rep) == ENOSYS ? ": no process_mrelease before Linux 5.15" : "");
	if (!cli->verbose || cli->quiet || cli->print)
		return;
	say(stderr, "cgkill: %s:", cgk_report_path(rep));
	for (size_t i = 0; i < cgk_report_n_signals(rep); i++) {
		enum cgk_backend b = CGK_BACKEND_AUTO;
		int sig = cgk_report_signal(rep, i, &b);

		fprintf(stderr, "%s %s via %s", i ? ", then" : "",
			cgk_signal_name(sig, buf, sizeof(buf)) ?: "?", cgk_backend_name(b));
	}
	if (cgk_report_fell_back_from(rep) != CGK_BACKEND_AUTO)
		fprintf(stderr, " (fell back from %s: %s)",
			cgk_backend_name(cgk_report_fell_back_from(rep)),
			strerrorname_np(cgk_report_fallback_errno(rep)) ?: "?");
	fprintf(stderr, ", %u cgroup(s)", cgk_report_cgroups(rep));
	if (cgk_report_backend(rep) != CGK_BACKEND_KERNEL)
		fprintf(stderr, ", %u process(es) signalled", cgk_report_signalled(rep));
	if (cgk_report_unreachable(rep))
		fprintf(stderr, ", %u outside our pid namespace", cgk_report_unreachable(rep));
	if (cgk_report_not_permitted(rep))
		fprintf(stderr, ", %u not permitted", cgk_report_not_permitted(rep));
	if (cli->reap) {
		fprintf(stderr, ", %u address space(s) released", cgk_report_reaped(rep));
		if (cgk_report_reap_gone(rep) || cgk_report_reap_shared(rep))
			fprintf(stderr, " (%u already gone, %u shared)", cgk_report_reap_gone(rep),
				cgk_report_reap_shared(rep));
	}
	fprintf(stderr, ", signals sent in %llu ms", (unsigned long long)cgk_report_signal_ms(rep));
	if (cgk_report_emptied(rep))
		fprintf(stderr, ", empty after %llu ms", (unsigned long long)cgk_report_empty_ms(rep));
	fputc('\n', stderr);
}

/* Every target string is owned: --pid ones are made here. */
static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
	interrupted = sig;
}

/* Ctrl-C, SIGTERM or SIGHUP end a wait early; the freeze and signal phase
 * of a target runs to its end, so nothing is left frozen or clamped. */
static void catch_interrupts(void)
{
	struct sigaction sa = { .sa_handler = on_interrupt };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* The library opens pidfds in batches of up to half the soft fd limit, and
 * a batch may need one more read of the list to confirm membership: fewer,
 * larger batches on big cgroups. This process uses no select(2), so the hard
 * limit is safe to take. */
static void raise_fd_limit(void)
{
	struct rlimit nofile;

	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
}

/*
 * From the first instruction of the program (a constructor, before main)
 * at SCHED_RR 1 where permitted, and handed to the library as its boost
 * (CGK_BOOSTED): beside a fork bomb a process of ordinary priority that
 * used up its slice waits a round of the scheduler, hundreds of ms (seen
 * between the start of main and the library's call, and at a switch back
 * to SCHED_OTHER before it; bench/RESULTS.md, "Start-up before the
 * signal"). Only from SCHED_OTHER; reset-on-fork, so --unit's systemctl
 * does not inherit it.
 */
static bool boosted;

__attribute__((constructor)) static void boost_from_start(void)
{
	struct sched_param rr = { .sched_priority = 1 };

	boosted = sched_getscheduler(0) == SCHED_OTHER &&
		  sched_setscheduler(0, SCHED_RR | SCHED_RESET_ON_FORK, &rr) == 0;
}

/* Back to SCHED_OTHER (the nice is kept): when there is nothing to hurry. */
static void boost_end(void)
{
	struct sched_param other = { 0 };

	if (boosted)
		sched_setscheduler(0, SCHED_OTHER, &other);
	boosted = false;
}

/*
 * --unit and --user-unit: the cgroup of a systemd unit, as its service
 * manager tells it. "systemctl show" is run without a shell and with a
 * clean environment, its output captured and its time bounded; no
 * libsystemd. The answer is the cgroup as /proc/PID/cgroup shows it, which
 * the library resolves against the v2 mount.
 */
#define SYSTEMCTL_TIMEOUT_MS 10000

static void __attribute__((noreturn, format(printf, 1, 2))) unit_fail(const char *fmt, ...)
{
	va_list ap;

	fputs("cgkill: ", stderr);
	va_start(ap, fmt);
	vsay(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_ERROR);
}

/* The name systemctl would use: the characters systemd allows, and
 * ".service" added to a name without a unit type, as systemctl does. */
static char *unit_name(const char *opt, const char *arg)
{
	static const char *const types[] = {
		"service", "socket", "target", "device", "mount", "automount", "swap",
		"timer", "path", "slice", "scope",
	};
	const char *dot = strrchr(arg, '.');
	char *name;

	if (!*arg || strlen(arg) > 255 || strspn(arg, "abcdefghijklmnopqrstuvwxyz"
		"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:-_.\\@") != strlen(arg))
		usage_error("%s: invalid unit name: %s", opt, arg);
	for (size_t i = 0; dot && i < sizeof(types) / sizeof(*types); i++)
		if (dot > arg && strcmp(dot + 1, types[i]) == 0)
			return strdup(arg);
	if (asprintf(&name, "%s.service", arg) < 0)
		return NULL;
	return name;
}

static uint64_t unit_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* systemctl from a fixed place, never found on the caller's PATH: cgkill
 * runs as root, from scripts and through sudo with a PATH that may not be
 * root's own, and the first "systemctl" on it would run as root. */
static const char *const systemctl_paths[] = { "/usr/bin/systemctl", "/bin/systemctl" };
#define SYSTEMCTL_WHERE "/usr/bin or /bin"

static const char *systemctl_path(void)
{
	for (size_t i = 0; i < sizeof(systemctl_paths) / sizeof(*systemctl_paths); i++)
		if (faccessat(AT_FDCWD, systemctl_paths[i], X_OK, AT_EACCESS) == 0)
			return systemctl_paths[i];
	return NULL;
}

/* Run systemctl with argv, stdin from /dev/null, and collect up to size - 1
 * bytes of each output (more sets *overflow). Its wait status; -ENOENT if
 * there is no systemctl, -ETIMEDOUT if it was killed at the deadline. */
static int run_systemctl(char *const argv[], char *const envp[], char *out, size_t out_size,
			 char *err, size_t err_size, bool *overflow)
{
	int outp[2] = { -1, -1 }, errp[2] = { -1, -1 }, st = 0, r;
	uint64_t deadline = unit_now_ms() + SYSTEMCTL_TIMEOUT_MS;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, all;
	size_t len[2] = { 0, 0 };
	const char *path;
	pid_t pid;

	*overflow = false;
	if (pipe2(outp, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		r = -errno;
		if (outp[0] >= 0) {
			close(outp[0]);
			close(outp[1]);
		}
		return r;
	}
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, outp[1], 1);
	posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	path = systemctl_path();
	r = path ? -posix_spawn(&pid, path, &fa, &attr, argv, envp) : -ENOENT;
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(outp[1]);
	close(errp[1]);

	struct pollfd pfd[2] = {
		{ .fd = r ? -1 : outp[0], .events = POLLIN },
		{ .fd = r ? -1 : errp[0], .events = POLLIN },
	};
	char *buf[2] = { out, err };
	size_t size[2] = { out_size, err_size };

	while (pfd[0].fd >= 0 || pfd[1].fd >= 0) {
		uint64_t now = unit_now_ms();

		if (now >= deadline || (poll(pfd, 2, (int)(deadline - now)) < 0 && errno != EINTR))
			break;
		for (int i = 0; i < 2; i++) {
			char chunk[4096];
			ssize_t n;

			if (pfd[i].fd < 0 || !pfd[i].revents)
				continue;
			n = read(pfd[i].fd, chunk, sizeof(chunk));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				pfd[i].fd = -1;
				continue;
			}
			if (len[i] + (size_t)n >= size[i]) {
				n = (ssize_t)(size[i] - 1 - len[i]);
				if (i == 0)
					*overflow = true;
			}
			memcpy(buf[i] + len[i], chunk, (size_t)n);
			len[i] += (size_t)n;
		}
	}
	close(outp[0]);
	close(errp[0]);
	out[len[0]] = '\0';
	err[len[1]] = '\0';
	if (r)
		return r;
	/* Its outputs are closed; it may still be on its way out. */
	while ((r = waitpid(pid, &st, WNOHANG)) == 0 && unit_now_ms() < deadline)
		usleep(1000);
	if (r == pid)
		return st;
	if (r < 0)
		return -errno;
	/* Not reaped yet, so the pid is still that child's. */
	kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return -ETIMEDOUT;
}

/* The cgroup of a unit, as a name relative to the v2 root, or exits with
 * an error (before anything is signalled). */
static char *unit_cgroup(const char *opt, const char *arg, bool user)
{
	char out[8192] = "", err[1024] = "", *env[5], *name, *cgroup;
	const char *vars[] = { "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS" };
	const char *manager = user ? "systemd user service manager" : "systemd service manager";
	size_t n_env = 0;
	bool overflow;
	int st;

	name = unit_name(opt, arg);
	if (!name)
		unit_fail("%s %s: out of memory", opt, arg);
	/* sd_booted(): the system manager is systemd only if this exists. */
	if (!user && access("/run/systemd/system", F_OK) < 0)
		unit_fail("%s %s: no %s here", opt, arg, manager);
	if (user && !secure_getenv(vars[0]) && !secure_getenv(vars[1]))
		unit_fail("%s %s: no %s here (neither %s nor %s is set)", opt, arg, manager,
			  vars[0], vars[1]);
	/* The user manager is found through these, and only these are passed. */
	env[n_env++] = "LC_ALL=C";
	env[n_env++] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
	for (size_t i = 0; user && i < sizeof(vars) / sizeof(*vars); i++) {
		const char *v = secure_getenv(vars[i]);

		if (v && asprintf(&env[n_env], "%s=%s", vars[i], v) >= 0)
			n_env++;
	}
	env[n_env] = NULL;

	char *argv[] = { "systemctl", user ? "--user" : "--system", "show", "--no-pager",
			 "--property=ControlGroup", "--value", "--", name, NULL };

	struct sigaction dfl = { .sa_handler = SIG_DFL }, old;

	/* An inherited SIG_IGN would reap systemctl before its status is read. */
	sigaction(SIGCHLD, &dfl, &old);
	st = run_systemctl(argv, env, out, sizeof(out), err, sizeof(err), &overflow);
	sigaction(SIGCHLD, &old, NULL);
	for (size_t i = 2; i < n_env; i++)
		free(env[i]);
	err[strcspn(err, "\n")] = '\0';
	if (st == -ENOENT)
		unit_fail("%s %s: no %s here (no systemctl in " SYSTEMCTL_WHERE ")", opt, arg, manager);
	if (st == -ETIMEDOUT)
		unit_fail("%s %s: systemctl did not answer within %d s", opt, name,
			  SYSTEMCTL_TIMEOUT_MS / 1000);
	if (st < 0)
		unit_fail("%s %s: cannot run systemctl (%s)", opt, name, strerrorname_np(-st) ?: "?");
	/* Whatever the cause, a failure to reach the manager starts so. */
	if (WIFEXITED(st) && WEXITSTATUS(st) && strncmp(err, "Failed to connect to bus", 24) == 0)
		unit_fail("%s %s: no %s here (systemctl: %s)", opt, arg, manager, err);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		unit_fail("%s %s: systemctl failed (%s %d)%s%s", opt, name,
			  WIFEXITED(st) ? "exit status" : "signal",
			  WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), *err ? ": " : "", err);
	if (strlen(out) && out[strlen(out) - 1] == '\n')
		out[strlen(out) - 1] = '\0';
	if (!*out)
		unit_fail("%s %s: the unit has no cgroup (not running?)", opt, name);
	if (overflow || out[0] != '/' || strchr(out, '\n'))
		unit_fail("%s %s: unexpected answer from systemctl: %s", opt, name, out);
	cgroup = strdup(out);
	if (!cgroup)
		unit_fail("%s %s: out of memory", opt, name);
	free(name);
	return cgroup;
}

static void free_targets(char ***targets)
{
	for (char **t = *targets; t && *t; t++)
		free(*t);
	free(*targets);
}

static void free_pids(pid_t **pids)
{
	free(*pids);
}

static void free_options(cgk_options **opts)
{
	cgk_options_free(*opts);
}

/* A setter can fail only without memory: every value was checked. */
static void need(int r)
{
	if (r < 0) {
		fprintf(stderr, "cgkill: %s\n", strerror(-r));
		exit(EXIT_ERROR);
	}
}

enum {
	OPT_NO_WAIT = 0x100,
	OPT_TIMEOUT,
	OPT_PID,
	OPT_PROTECTED,
	OPT_LIST_HIERARCHIES,
	OPT_UNIT,
	OPT_USER_UNIT,
	OPT_NOHEADINGS,
	OPT_REAP,
};

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "signal", required_argument, NULL, 's' },
		{ "backend", required_argument, NULL, 'b' },
		{ "wait", optional_argument, NULL, 'w' },
		{ "no-wait", no_argument, NULL, OPT_NO_WAIT },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "reap", no_argument, NULL, OPT_REAP },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "unit", required_argument, NULL, OPT_UNIT },
		{ "user-unit", required_argument, NULL, OPT_USER_UNIT },
		{ "print", no_argument, NULL, 'p' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "output", required_argument, NULL, 'o' },
		{ "noheadings", no_argument, NULL, OPT_NOHEADINGS },
		{ "raw", no_argument, NULL, 'r' },
		{ "force", no_argument, NULL, 'f' },
		{ "interactive", no_argument, NULL, 'i' },
		{ "protected", required_argument, NULL, OPT_PROTECTED },
		{ "list-hierarchies", no_argument, NULL, OPT_LIST_HIERARCHIES },
		{ "list", optional_argument, NULL, 'l' },
		{ "table", no_argument, NULL, 'L' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	struct cli cli = { .signal = SIGKILL };
	cgk_options *opts __attribute__((cleanup(free_options))) = NULL;
	unsigned flags = 0;
	size_t n_escalations = 0;
	bool kill_escalation = false;	/* an escalation sends SIGKILL */
	char **targets __attribute__((cleanup(free_targets))) = calloc((size_t)argc + 1, sizeof(char *));
	/* pids[i] > 0: targets[i] is that --pid, resolved by the library,
	 * which checks the cgroup it opens holds the pid. */
	pid_t *pids __attribute__((cleanup(free_pids))) = calloc((size_t)argc + 1, sizeof(pid_t));
	size_t n_targets = 0;
	/* -l, -L or --list-hierarchies: done once every option is read, so
	 * that -j and the column options count wherever they stand. */
	int listing = 0;
	const char *signal_arg = NULL;
	int c;

	if (!targets || !pids || cgk_options_new(&opts) < 0)
		return EXIT_ERROR;
	cli.opts = opts;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "s:b:w::pnjJo:rfil::LvqhV", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			cli.signal = parse_signal(optarg);
			need(cgk_options_set_signal(opts, cli.signal));
			break;
		case 'b': {
			enum cgk_backend b;

			if (cgk_backend_from_name(optarg, &b) < 0)
				usage_error("unknown backend: %s (auto, kernel, freeze, v1-freeze, loop)", optarg);
			need(cgk_options_set_backend(opts, b));
			break;
		}
		case 'w': {
			uint64_t ms, wait_ms;

			/* "-w 5s" would make 5s a cgroup to kill: say how to write it. */
			if (!optarg && optind < argc && cgk_parse_duration(argv[optind], &ms) == 0)
				usage_error("a duration goes with the option: -w%s or --wait=%s",
					    argv[optind], argv[optind]);
			if (!optarg && optind < argc && lacks_unit(argv[optind]))
				usage_error("-w %s: a duration goes with the option and needs a unit "
					    "(-w%sms? -w%ss?)", argv[optind], argv[optind], argv[optind]);
			cli.wait_set = true;
			wait_ms = !optarg ? 10000 :
				parse_duration(strncmp(argv[optind - 1], "--", 2) ? "-w" : "--wait=", optarg);
			if (!wait_ms)
				usage_error("--wait needs a duration above 0; use --no-wait not to wait");
			need(cgk_options_set_wait(opts, wait_ms));
			break;
		}
		case OPT_NO_WAIT:
			cli.wait_set = true;
			need(cgk_options_set_wait(opts, 0));
			break;
		case OPT_TIMEOUT: {
			uint64_t after_ms;
			int sig;

			if (optind >= argc)
				usage_error("--timeout needs a duration and a signal");
			after_ms = parse_duration("--timeout ", optarg);
			sig = parse_signal(argv[optind++]);
			need(cgk_options_add_escalation(opts, after_ms, sig));
			kill_escalation = kill_escalation || sig == SIGKILL;
			n_escalations++;
			break;
		}
		case OPT_REAP:
			cli.reap = true;
			flags |= CGK_REAP;
			break;
		case OPT_PID: {
			char *end;
			long pid = strtol(optarg, &end, 10);

			if (!isdigit((unsigned char)*optarg) || *end || pid <= 0 || pid > INT32_MAX)
				usage_error("invalid pid: %s", optarg);
			pids[n_targets] = (pid_t)pid;
			targets[n_targets++] = strdup(optarg);
			break;
		}
		/* Asked now: a unit that cannot be resolved stops the run
		 * before anything is signalled. */
		case OPT_UNIT:
		case OPT_USER_UNIT:
			targets[n_targets++] = unit_cgroup(c == OPT_UNIT ? "--unit" : "--user-unit",
							   optarg, c == OPT_USER_UNIT);
			break;
		case 'p':
		case 'n':
			cli.print = true;
			flags |= CGK_DRY_RUN;
			break;
		case 'j':
		case 'J':
			cli.json = true;
			break;
		case 'o':
			cli.output = optarg;
			break;
		case OPT_NOHEADINGS:
			cli.noheadings = true;
			break;
		case 'r':
			cli.raw = true;
			break;
		case 'f':
			flags |= CGK_FORCE;
			break;
		case 'i':
			need(cgk_options_set_confirm(opts, confirm, &cli));
			break;
		case OPT_PROTECTED:
			need(cgk_options_set_protected_file(opts, optarg));
			break;
		case OPT_LIST_HIERARCHIES:
		case 'l':
		case 'L':
			if (listing && listing != c)
				usage_error("--list, --table and --list-hierarchies "
					    "are mutually exclusive");
			listing = c;
			if (c == 'l' && !optarg && optind < argc && argv[optind][0] != '-')
				optarg = argv[optind++];
			signal_arg = optarg;
			break;
		case 'v':
			cli.verbose = true;
			break;
		case 'q':
			cli.quiet = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_DONE;
		case 'V':
			printf("cgkill %s\n", CGK_VERSION);
			return EXIT_DONE;
		default:
			bad_option(longopts, argv[optind - 1]);
		}
	}
	/* Text or JSON: options of one are never silently dropped by the other. */
	if (cli.json && (cli.output || cli.noheadings || cli.raw))
		usage_error("--json does not go with --output, --noheadings or --raw");
	if ((listing == 'l' || listing == 'L') && (cli.output || cli.noheadings || cli.raw))
		usage_error("--output, --noheadings and --raw are for listings of processes "
			    "and hierarchies, not of signals");
	pick_columns(&cli.cols, listing == OPT_LIST_HIERARCHIES ? hier_columns : proc_columns,
		     cli.output);
	if (listing || (flags & CGK_DRY_RUN))
		boost_end();
	if (listing) {
		if (n_targets || optind < argc)
			usage_error("--list, --table and --list-hierarchies take no target");
		return listing == 'l' ? list_signals(signal_arg, cli.json) :
		       listing == 'L' ? signal_table(cli.json) : list_hierarchies(&cli);
	}
	while (optind < argc)
		targets[n_targets++] = strdup(argv[optind++]);
	for (size_t i = 0; i < n_targets; i++)
		if (!targets[i])
			return EXIT_ERROR;
	if (!n_targets)
		usage_error("no cgroup specified");
	/* process_mrelease frees the memory of a process with SIGKILL pending,
	 * of no other: a reap with no SIGKILL would silently do nothing. */
	if (cli.reap && cli.signal != SIGKILL && !kill_escalation)
		usage_error("--reap releases memory after SIGKILL only: use it with -s KILL (the "
			    "default) or an escalation to KILL (--timeout <duration> KILL)");
	/* Waiting is the default for KILL and for escalations; a graceful
	 * signal alone returns once it is sent unless --wait asks. */
	if (!cli.wait_set && cli.signal != SIGKILL && !n_escalations)
		need(cgk_options_set_wait(opts, 0));
	if (cli.verbose && !cli.quiet)
		need(cgk_options_set_progress(opts, progress, NULL));

	cgk_report **reports = calloc(n_targets, sizeof(*reports));
	int worst = EXIT_DONE;
	size_t handled = 0;

	if (!reports)
		return EXIT_ERROR;
	catch_interrupts();
	raise_fd_limit();
	need(cgk_options_set_cancel(opts, &interrupted));
	/* Signal at real-time priority where permitted, back to ours before
	 * any wait: beside a fork bomb an ordinary process gets a sliver of
	 * the CPU (bench/RESULTS.md, "Stalls beside a bomb"). */
	need(cgk_options_set_flags(opts, flags | CGK_BOOST | (boosted ? CGK_BOOSTED : 0)));
	for (size_t i = 0; i < n_targets && !interrupted; i++, handled++) {
		int r = pids[i] ? cgk_kill_pid(pids[i], opts, &reports[i]) :
				  cgk_kill(targets[i], opts, &reports[i]);
		int status = exit_status(reports[i], r);

		/* Not even a report: out of memory. */
		if (!reports[i])
			return EXIT_ERROR;
		tell(&cli, reports[i], r);
		if (status > worst)
			worst = status;
	}
	boost_end();
	/* One table for every target's dry run: one heading, columns aligned
	 * across them. */
	if (cli.print && !cli.json)
		print_processes(stdout, &cli, (const cgk_report *const *)reports, handled, false, "");
	if (cli.json && cgk_report_json((const cgk_report *const *)reports, handled, stdout) < 0) {
		fprintf(stderr, "cgkill: cannot write the JSON report\n");
		worst = EXIT_ERROR;
	}
	for (size_t i = 0; i < handled; i++)
		cgk_report_free(reports[i]);
	if (interrupted)
		worst = 128 + interrupted;
	free(reports);
	return worst;
}
