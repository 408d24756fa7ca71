/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The results: every run kept per workload and contender, their medians
 * and tails, the markdown tables (to the results file and to stdout) and
 * the chart's data file.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

struct cell cells[MAX_WORKLOADS][N_CONTENDERS];
const char *const bomb_backends[3] = { "cgkill -b freeze", "cgkill -b v1-freeze",
				       "cgkill -b loop" };
struct cell trial_cells[3];

static FILE *md;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median of field off over the runs that emptied (all runs if !only_ok). */
double median(const struct cell *c, size_t off, bool only_ok, double *min, double *max)
{
	double v[MAX_RUNS];
	unsigned n = 0;

	for (unsigned i = 0; i < c->n; i++)
		if (!only_ok || c->v[i].emptied)
			v[n++] = *(const double *)((const char *)&c->v[i] + off);
	if (!n) {
		if (min)
			*min = 0;
		if (max)
			*max = 0;
		return -1;
	}
	qsort(v, n, sizeof(v[0]), cmp_double);
	if (min)
		*min = v[0];
	if (max)
		*max = v[n - 1];
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

long peak_rss_kb(const struct cell *c)
{
	long rss = 0;

	for (unsigned i = 0; i < c->n; i++)
		if (c->v[i].maxrss_kb > rss)
			rss = c->v[i].maxrss_kb;
	return rss;
}

/* Runs that emptied the subtree with nothing found outside it. */
unsigned count_contained(const struct cell *c)
{
	unsigned n = 0;

	for (unsigned i = 0; i < c->n; i++)
		n += c->v[i].emptied && !c->v[i].escaped;
	return n;
}

void out(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(md, fmt, ap);
	va_end(ap);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

static double rank(const double *v, unsigned n, double q)
{
	unsigned k = (unsigned)(q * n + 0.999999);

	return v[(k ? k : 1) - 1];
}

void tail_of(const struct cell *c, struct tail *t)
{
	double v[MAX_RUNS];

	*t = (struct tail){ .n = c->n };
	for (unsigned i = 0; i < c->n; i++) {
		v[i] = c->v[i].emptied ? c->v[i].empty_ms : INFINITY;
		t->emptied += c->v[i].emptied;
		t->over2 += c->v[i].stalled || !c->v[i].emptied;
	}
	t->contained = count_contained(c);
	if (!c->n)
		return;
	qsort(v, c->n, sizeof(v[0]), cmp_double);
	t->med = c->n % 2 ? v[c->n / 2] : (v[c->n / 2 - 1] + v[c->n / 2]) / 2;
	t->p90 = rank(v, c->n, 0.90);
	t->p99 = rank(v, c->n, 0.99);
	t->worst = v[c->n - 1];
}

static void ms_cell(char *buf, size_t size, double ms)
{
	if (isinf(ms))
		snprintf(buf, size, "> %u s", deadline_s);
	else
		snprintf(buf, size, "%.1f", ms);
}

static void machine(void)
{
	char buf[4096], model[256] = "?";
	struct utsname u;
	long long memkb = 0;
	FILE *f = fopen("/proc/cpuinfo", "re");
	time_t t = time(NULL);

	while (f && fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "model name : %255[^\n]", model) == 1)
			break;
	if (f)
		fclose(f);
	f = fopen("/proc/meminfo", "re");
	while (f && fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "MemTotal: %lld kB", &memkb) == 1)
			break;
	if (f)
		fclose(f);
	uname(&u);
	strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M %Z", localtime(&t));
	out("- date: %s\n- machine: %ld CPUs, %s, %.1f GiB RAM\n- kernel: %s %s\n", buf,
	    sysconf(_SC_NPROCESSORS_ONLN), model, (double)memkb / 1048576, u.sysname, u.release);
	if (read_small("/proc/loadavg", buf, sizeof(buf)) > 0)
		out("- load average at start: %s", buf);
}

/* Open the results file and say what was run, where and how. */
void report_begin(const char *path, bool full, bool realtime)
{
	md = fopen(path, "we");
	if (!md)
		die("%s: %m", path);
	out("## cgkill benchmark (%s mode)\n\n", full ? "full" : "quick");
	machine();
	out("- runs: median of %u per contender and workload, contenders interleaved\n",
	    n_workloads ? workloads[0].reps : 0);
	out("- time to empty: from the contender's start (fork) until our watcher reads `populated 0`\n"
	    "  in the workload's v2 `cgroup.events` (re-read on every notification and every 0.25 ms);\n"
	    "  for v1 contenders the v1 process lists were checked empty at that moment too\n");
	out("- scheduling: %s\n", realtime ?
	    "the harness runs SCHED_FIFO 1, and so do the contenders of the bomb and stress-ng rows;\n"
	    "  workloads and the other rows' contenders run SCHED_OTHER" :
	    "everything SCHED_OTHER (no real-time budget for the harness)");
	out("- rows users meet (\"users meet\"): the bomb has no cpu cgroup of its own and runs\n"
	    "  SCHED_OTHER nice 0 beside the machine's processes; each contender, the floor too,\n"
	    "  is forked by an ordinary process (SCHED_OTHER, nice 0, the machine's cpu cgroup)\n"
	    "  and exec'd; a run not empty after 2 s is a stall, logged with stacks in *-stalls.txt\n");
}

void report_end(void)
{
	char buf[256];

	if (read_small("/proc/loadavg", buf, sizeof(buf)) > 0)
		out("\n- load average at the end: %s", buf);
	fclose(md);
}

/* The rows users meet: tails, and each against the floor's of the same runs. */
static void print_plain_table(const struct workload *w, struct cell *cs)
{
	struct tail fl;

	tail_of(&cs[0], &fl);
	out("\n### %s\n\n", w->title);
	out("| contender | runs | median ms | p90 | p99 | worst | over 2 s | × floor median | p99 × floor p99 | p99 × floor median | CPU ms | emptied | contained |\n");
	out("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
	for (size_t i = 0; i < N_CONTENDERS; i++) {
		struct tail t;
		char m[32], a[32], b[32], c[32];

		if (!cs[i].n)
			continue;
		tail_of(&cs[i], &t);
		ms_cell(m, sizeof(m), t.med);
		ms_cell(a, sizeof(a), t.p90);
		ms_cell(b, sizeof(b), t.p99);
		ms_cell(c, sizeof(c), t.worst);
		out("| %s | %u | %s | %s | %s | %s | %u | %.2f | %.2f | %.2f | %.1f | %u/%u | %u/%u |\n",
		    contenders[i].name, t.n, m, a, b, c, t.over2, fl.n ? t.med / fl.med : 0,
		    fl.n ? t.p99 / fl.p99 : 0, fl.n ? t.p99 / fl.med : 0,
		    median(&cs[i], offsetof(struct run, cpu_ms), false, NULL, NULL), t.emptied, t.n,
		    t.contained, t.n);
	}
}

void print_table(const struct workload *w, struct cell *cs)
{
	double floor_med = median(&cs[0], offsetof(struct run, empty_ms), true, NULL, NULL);
	bool bomb = forks(w), mem = w->type == W_MEM;

	if (w->plain) {
		print_plain_table(w, cs);
		return;
	}
	out("\n### %s\n\n", w->title);
	out("| contender | median ms to empty | min–max | × floor | ms to return | CPU ms | peak RSS MiB | emptied |%s%s\n",
	    bomb ? " contained | left (max) |" : "", mem ? " ms to memory freed |" : "");
	out("|---|--:|--:|--:|--:|--:|--:|--:|%s%s\n", bomb ? "--:|--:|" : "", mem ? "--:|" : "");
	for (size_t i = 0; i < N_CONTENDERS; i++) {
		struct cell *c = &cs[i];
		double lo, hi, med, ret, cpu, fr;
		unsigned ok = 0, fails = 0;
		long left = 0;

		if (!c->n)
			continue;
		for (unsigned k = 0; k < c->n; k++) {
			ok += c->v[k].emptied;
			fails += c->v[k].status != 0;
			if (c->v[k].left > left)
				left = c->v[k].left;
		}
		med = median(c, offsetof(struct run, empty_ms), true, &lo, &hi);
		ret = median(c, offsetof(struct run, exit_ms), false, NULL, NULL);
		cpu = median(c, offsetof(struct run, cpu_ms), false, NULL, NULL);
		fr = median(c, offsetof(struct run, freed_ms), true, NULL, NULL);
		if (med < 0)
			out("| %s | – | – | – |", contenders[i].name);
		else
			out("| %s | %.2f | %.2f–%.2f | %.2f |", contenders[i].name, med, lo, hi,
			    floor_med > 0 ? med / floor_med : 0);
		out(" %.2f | %.2f | %.2f | %u/%u%s |", ret, cpu, (double)peak_rss_kb(c) / 1024, ok, c->n,
		    fails ? " ⚠" : "");
		if (bomb)
			out(" %u/%u | %ld |", count_contained(c), c->n, left);
		if (mem)
			out(" %.2f |", fr);
		out("\n");
	}
}

/* The fork-bomb trials of trial_cells[], planned per backend at pids.max
 * limit. */
void print_containment(unsigned planned, unsigned limit)
{
	struct cell *tc = trial_cells;

	out("\n### Fork-bomb containment: %u trials per backend planned (pids.max %u)\n\n", planned,
	    limit);
	out("| contender | trials | contained, 0 left | escaped | exit ≠ 0 | median ms to empty | max ms |\n");
	out("|---|--:|--:|--:|--:|--:|--:|\n");
	for (unsigned k = 0; k < 3; k++) {
		unsigned ok = count_contained(&tc[k]), fails = 0;
		long esc = 0;
		double lo, hi, med;

		if (!tc[k].n)
			continue;
		for (unsigned i = 0; i < tc[k].n; i++) {
			esc += tc[k].v[i].escaped;
			fails += tc[k].v[i].status != 0;
		}
		med = median(&tc[k], offsetof(struct run, empty_ms), true, &lo, &hi);
		out("| %s | %u | %u | %ld | %u | %.2f | %.2f |\n", bomb_backends[k], tc[k].n, ok, esc,
		    fails, med, hi);
	}
}

/* The chart's data: time to empty against process count, flat rows. */
void write_dat(const char *path)
{
	FILE *f = fopen(path, "we");
	unsigned blocks = 0;

	if (!f)
		die("%s: %m", path);
	fprintf(f, "# time to empty (ms) against process count, flat workloads; one block per contender\n");
	for (size_t i = 0; i < N_CONTENDERS; i++) {
		bool any = false;

		for (unsigned wi = 0; wi < n_workloads; wi++) {
			double lo, hi, med;

			if (workloads[wi].type != W_FLAT || !cells[wi][i].n)
				continue;
			med = median(&cells[wi][i], offsetof(struct run, empty_ms), true, &lo, &hi);
			if (med < 0)
				continue;
			if (!any)
				fprintf(f, "%s\"%s\" median min max\n", blocks++ ? "\n\n" : "",
					contenders[i].name);
			any = true;
			fprintf(f, "%u %.3f %.3f %.3f\n", workloads[wi].procs, med, lo, hi);
		}
	}
	fclose(f);
}
