/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The command's listings: tables of processes and hierarchies (aligned,
 * or --raw), the signals, and the JSON documents other than the report. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

enum { COL_PID, COL_STATE, COL_CGROUP, COL_COMM, COL_TARGET };
const struct column proc_columns[] = {
	[COL_PID] = { .name = "PID", .right = true,
		      .help = "process ID; 0 outside our pid namespace" },
	[COL_STATE] = { .name = "STATE", .help = "state as in /proc/<pid>/stat: R, S, D, T, ..." },
	[COL_CGROUP] = { .name = "CGROUP", .help = "cgroup below the target; . for the target" },
	[COL_COMM] = { .name = "COMM", .help = "command name" },
	[COL_TARGET] = { .name = "TARGET", .help = "the target cgroup, as resolved", .extra = true },
	{ 0 },
};

enum { COL_MOUNT, COL_TYPE, COL_CONTROLLERS, COL_BACKENDS };
const struct column hier_columns[] = {
	[COL_MOUNT] = { .name = "MOUNT", .help = "mount point" },
	[COL_TYPE] = { .name = "TYPE", .help = "v2 or v1" },
	[COL_CONTROLLERS] = { .name = "CONTROLLERS",
			      .help = "controllers of a v1 hierarchy; - for none" },
	[COL_BACKENDS] = { .name = "BACKENDS", .help = "the backends that can serve it" },
	{ 0 },
};

void pick_columns(struct columns *cols, const struct column *set, const char *list)
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

void print_processes(FILE *out, const struct cli *cli, const cgk_report *const *reps,
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

int list_signals(const char *arg, bool json)
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

int signal_table(bool json)
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

int list_hierarchies(const struct cli *cli)
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
