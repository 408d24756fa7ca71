/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Issue 6's targets, checked against this run's medians, so that a
 * regression shows in the output of every run, not only to someone who
 * reads the tables; and issue 15's for the rows users meet. A quick run
 * checks them at its smaller sizes.
 */
#include <stdarg.h>
#include <string.h>

#include "bench.h"

#define RSS_LIMIT_MIB 8.0
#define LINEAR_SLACK 1.25	/* CPU may grow 1.25x the process count (noise) */

static unsigned targets_checked, targets_met;

/* met: 1 yes, 0 no, -1 nothing to check (a row for information). */
__attribute__((format(printf, 3, 4)))
static void target_row(const char *target, int met, const char *fmt, ...)
{
	char result[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(result, sizeof(result), fmt, ap);
	va_end(ap);
	if (met >= 0) {
		targets_checked++;
		targets_met += (unsigned)met;
	}
	out("| %s | %s | %s |\n", target, result, met < 0 ? "–" : met ? "yes" : "**no**");
}

/* Median time to empty of contender ci on workload wi over the floor's;
 * -1 if either has no run that emptied. */
static double ratio_to_floor(unsigned wi, size_t ci)
{
	double fl = median(&cells[wi][0], offsetof(struct run, empty_ms), true, NULL, NULL);
	double med = median(&cells[wi][ci], offsetof(struct run, empty_ms), true, NULL, NULL);

	return fl > 0 && med >= 0 ? med / fl : -1;
}

static void speed_target(const char *name, double limit)
{
	size_t ci = contender_index(name);
	const char *worst_row = "";
	double worst = 0;
	unsigned rows = 0, not_emptied = 0;
	char target[128];

	for (unsigned wi = 0; wi < n_workloads; wi++) {
		const struct cell *c = &cells[wi][ci];
		double r = ratio_to_floor(wi, ci);

		if (!c->n || !cells[wi][0].n || workloads[wi].plain)
			continue;
		rows++;
		for (unsigned i = 0; i < c->n; i++)
			not_emptied += !c->v[i].emptied;
		if (r > worst) {
			worst = r;
			worst_row = workloads[wi].name;
		}
	}
	if (!rows)
		return;	/* not in this run (quick runs leave the library out) */
	snprintf(target, sizeof(target), "`%s` within %.2f× of the floor", name, limit);
	target_row(target, worst <= limit && !not_emptied, "worst %.2f× (%s) over %u row%s%s",
		   worst, worst_row, rows, rows == 1 ? "" : "s",
		   not_emptied ? "; some runs did not empty" : "");
}

/* Every fork-bomb trial contained with 0 left; the bomb row's runs if no
 * trials ran. */
static void containment_target(void)
{
	const struct workload *bomb = find_workload("bomb");
	bool from_trials = trial_cells[0].n || trial_cells[1].n || trial_cells[2].n;
	char result[256] = "";
	size_t len = 0;
	bool all = true;

	for (unsigned k = 0; k < 3 && (from_trials || bomb); k++) {
		const struct contender *c = find_contender(bomb_backends[k]);
		const struct cell *cell = from_trials ? &trial_cells[k] :
					  &cells[bomb - workloads][c - contenders];
		unsigned ok = count_contained(cell);

		if (!cell->n)
			continue;
		all = all && ok == cell->n;
		len += (size_t)snprintf(result + len, sizeof(result) - len, "%s%s %u/%u",
					len ? ", " : "", cgk_backend_name(c->be), ok, cell->n);
	}
	if (!len)
		target_row("every fork bomb contained, 0 left", -1, "not run");
	else
		target_row("every fork bomb contained, 0 left", all, "%s (%s)", result,
			   from_trials ? "containment trials" : "bomb row");
}

/* Peak RSS of the command at the largest flat row, and its CPU from the
 * smallest to the largest: at most proportional to the processes. */
static void resource_targets(void)
{
	char rss_text[256] = "", cpu_text[256] = "", target[128];
	size_t rss_len = 0, cpu_len = 0;
	int lo = -1, hi = -1;
	bool rss_ok = true, cpu_ok = true;

	for (unsigned wi = 0; wi < n_workloads; wi++) {
		if (workloads[wi].type != W_FLAT || !cells[wi][0].n)
			continue;
		if (lo < 0 || workloads[wi].procs < workloads[lo].procs)
			lo = (int)wi;
		if (hi < 0 || workloads[wi].procs > workloads[hi].procs)
			hi = (int)wi;
	}
	snprintf(target, sizeof(target), "peak RSS under %.0f MiB", RSS_LIMIT_MIB);
	if (hi < 0) {
		target_row(target, -1, "no flat row run");
		return;
	}
	for (size_t ci = 0; ci < N_CONTENDERS; ci++) {
		const struct cell *big = &cells[hi][ci], *small = &cells[lo][ci];
		const char *be = cgk_backend_name(contenders[ci].be);
		long rss = peak_rss_kb(big);

		if (contenders[ci].kind != C_CMD || !big->n)
			continue;
		rss_ok = rss_ok && rss < RSS_LIMIT_MIB * 1024;
		rss_len += (size_t)snprintf(rss_text + rss_len, sizeof(rss_text) - rss_len, "%s%s %.2f",
					    rss_len ? ", " : "", be, (double)rss / 1024);
		if (lo != hi && small->n) {
			double growth = median(big, offsetof(struct run, cpu_ms), false, NULL, NULL) /
					median(small, offsetof(struct run, cpu_ms), false, NULL, NULL);

			cpu_ok = cpu_ok && growth <= LINEAR_SLACK * workloads[hi].procs / workloads[lo].procs;
			cpu_len += (size_t)snprintf(cpu_text + cpu_len, sizeof(cpu_text) - cpu_len,
						    "%s%s %.1f×", cpu_len ? ", " : "", be, growth);
		}
	}
	target_row(target, rss_len ? rss_ok : -1, "at %u processes: %s MiB", workloads[hi].procs,
		   rss_len ? rss_text : "not run");
	if (lo == hi)
		target_row("CPU grows at most linearly", -1, "needs two flat rows");
	else
		target_row("CPU grows at most linearly", cpu_len ? cpu_ok : -1,
			   "%u → %u processes (%u×): %s", workloads[lo].procs, workloads[hi].procs,
			   workloads[hi].procs / workloads[lo].procs, cpu_len ? cpu_text : "not run");
}

/* What people use today: how much slower, and how often a bomb got away. */
static void peer_row(const char *name)
{
	size_t ci = contender_index(name);
	double lo = 0, hi = 0;
	unsigned rows = 0, bomb_runs = 0, bomb_ok = 0;
	char target[128], bombs[96];

	for (unsigned wi = 0; wi < n_workloads; wi++) {
		const struct cell *c = &cells[wi][ci];
		double r = ratio_to_floor(wi, ci);

		if (forks(&workloads[wi])) {
			bomb_runs += c->n;
			bomb_ok += count_contained(c);
		}
		if (r < 0)
			continue;
		lo = rows && lo < r ? lo : r;
		hi = hi > r ? hi : r;
		rows++;
	}
	if (!rows)
		return;
	snprintf(target, sizeof(target), "`%s`, for comparison", name);
	snprintf(bombs, sizeof(bombs), "; fork bombs contained in %u of %u runs", bomb_ok, bomb_runs);
	target_row(target, -1, "%.2f–%.2f× the floor over %u row%s%s", lo, hi, rows,
		   rows == 1 ? "" : "s", bomb_runs ? bombs : "");
}

/* Runs of c over 2 s, or, in a row where the floor itself took over 2 s
 * (the kernel's own teardown of a big bomb on a small machine), over the
 * floor's slowest run: there a run over 2 s is no sign of a stall of ours,
 * and one slower than anything the kernel's own button took is. */
static unsigned over_limit(const struct cell *c, const struct tail *fl)
{
	unsigned over = 0;

	for (unsigned i = 0; i < c->n; i++)
		over += !c->v[i].emptied ||
			(fl->over2 ? c->v[i].empty_ms > fl->worst : c->v[i].stalled);
	return over;
}

/* Issue 15's targets for the rows users meet, per backend over every such
 * row: median and 99th percentile against the floor's of the same runs,
 * and no run over 2 s (over_limit()). */
static void plain_target(const char *name, double med_limit, double p99_limit)
{
	size_t ci = contender_index(name);
	double worst_med = 0, worst_p99 = 0;
	const char *med_row = "", *p99_row = "";
	unsigned rows = 0, runs = 0, over = 0, over2 = 0;
	char target[200];

	for (unsigned wi = 0; wi < n_workloads; wi++) {
		struct tail t, fl;

		if (!workloads[wi].plain || !cells[wi][ci].n || !cells[wi][0].n)
			continue;
		tail_of(&cells[wi][ci], &t);
		tail_of(&cells[wi][0], &fl);
		rows++;
		runs += t.n;
		over += over_limit(&cells[wi][ci], &fl);
		over2 += t.over2;
		if (t.med / fl.med > worst_med) {
			worst_med = t.med / fl.med;
			med_row = workloads[wi].name;
		}
		if (t.p99 / fl.p99 > worst_p99) {
			worst_p99 = t.p99 / fl.p99;
			p99_row = workloads[wi].name;
		}
	}
	if (!rows)
		return;
	snprintf(target, sizeof(target), "`%s` beside libc-sharing bombs: median ≤ %.1f×, p99 ≤ %.0f×, "
		 "none over 2 s (where the floor went over 2 s: none over its slowest)", name,
		 med_limit, p99_limit);
	target_row(target, worst_med <= med_limit && worst_p99 <= p99_limit && !over,
		   "median %.2f× (%s), p99 %.2f× (%s), %u of %u runs over the limit (%u over 2 s), "
		   "%u row%s", worst_med, med_row, worst_p99, p99_row, over, runs, over2, rows,
		   rows == 1 ? "" : "s");
}

/* The floor's own tail in those runs, for the reader: no target. */
static void floor_tail_row(void)
{
	for (unsigned wi = 0; wi < n_workloads; wi++) {
		struct tail fl;
		char row[80];

		if (!workloads[wi].plain || !cells[wi][0].n)
			continue;
		tail_of(&cells[wi][0], &fl);
		snprintf(row, sizeof(row), "the floor's own tail, %s", workloads[wi].name);
		target_row(row, -1, "median %.1f ms, p90 %.1f, p99 %.1f, worst %.1f; %u of %u over 2 s",
			   fl.med, fl.p90, fl.p99, fl.worst, fl.over2, fl.n);
	}
}

void check_targets(void)
{
	out("\n### Against the targets (issue 6: medians of the other rows; issue 15: the rows users meet)\n\n");
	out("| target | this run | met? |\n|---|---|---|\n");
	speed_target("cgkill -b kernel", 1.05);
	speed_target("cgkill -b freeze", 1.5);
	speed_target("cgkill -b v1-freeze", 2.0);
	speed_target("cgkill -b loop", 2.0);
	speed_target("lib freeze", 1.5);
	speed_target("lib v1-freeze", 2.0);
	speed_target("lib loop", 2.0);
	plain_target("cgkill -b kernel", 1.1, 3);
	plain_target("cgkill -b freeze", 1.5, 3);
	plain_target("cgkill -b v1-freeze", 1.5, 3);
	plain_target("cgkill -b loop", 1.5, 3);
	floor_tail_row();
	containment_target();
	resource_targets();
	peer_row("shell loop");
	peer_row("pkill --cgroup");
	out("\n%u of %u targets met in this run (ratios within about ±0.15 of each other\n"
	    "are noise on a small machine: see bench/RESULTS.md)\n", targets_met, targets_checked);
	if (targets_met < targets_checked)
		out("A ratio a little over its limit wants more runs of that row before it is\n"
		    "called a miss: make bench ARGS=\"--only ROW --reps 21\" (FULL=1 for the full sizes).\n");
}
