/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgkill benchmark driver.
 *
 *	bench [--full] [--reps N] [--trials N] [--only W,...] [--contenders C,...]
 *	      [--cgkill PATH] [--floor PATH] [--shell-loop PATH] [--results DIR]
 *	bench --hold WORKLOAD [--hier v2|freezer|pids]   (set up, print, wait)
 *
 * For every workload and every repetition, each contender in turn (the order
 * rotates from one repetition to the next) gets a freshly built workload in a
 * fresh sandbox cgroup and is timed from its start until the subtree is
 * empty, as seen by our own watcher (not by the contender's report).
 *
 * Safety: everything runs in a new pid namespace (and mount namespace with
 * its own /proc), so no pid any contender reads or kills can name a process
 * outside it, and the kernel kills whatever is left if the driver dies. The
 * outer process only creates the sandbox cgroups and removes them at the end
 * (thaw, cgroup.kill, rmdir with retries), whatever happened inside. Fork
 * bombs start only after their v1 pids cgroup has pids.max set.
 *
 * This file: the options, and the loop over workloads, repetitions and
 * contenders; bench.h says where the rest is.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

volatile sig_atomic_t stop;
bool quick_mode;
bool bomb_cpu = true;
unsigned deadline_s = 60;
unsigned bomb_reps;
unsigned unboosted;
const char *cgkill_path = "build/cgkill";
const char *cgkill2_path, *cgkill3_path;
const char *floor_path = "build/bench/floor";
char floor_static_path[PATH_MAX];
const char *shell_path = "bench/killloop.sh";
char contender_filter[1024];
char workload_filter[1024];

static unsigned trials;	/* extra fork-bomb containment trials */

static struct {
	bool full;
	unsigned reps;
	const char *resdir;
	const char *hold;
	int hold_hier;
} cfg = { .resdir = "bench/results", .hold_hier = H_V2 };

static void bench_workload(unsigned wi)
{
	const struct workload *w = &workloads[wi];
	const struct contender *list[N_CONTENDERS];
	unsigned n = 0;

	for (size_t i = 0; i < N_CONTENDERS; i++)
		if (applies(&contenders[i], w) && in_list(contender_filter, contenders[i].name) &&
		    !(quick_mode && !contender_filter[0] && contenders[i].kind == C_LIB) &&
		    /* unasked, one running library: freeze, in full runs */
		    !(!contender_filter[0] && contenders[i].kind == C_LIBRUN &&
		      (quick_mode || contenders[i].be != CGK_BACKEND_FREEZE)))
			list[n++] = &contenders[i];
	for (unsigned rep = 0; rep < w->reps && !stop; rep++)
		for (unsigned k = 0; k < n && !stop; k++) {
			const struct contender *c = list[(k + rep) % n];
			struct cell *cell = &cells[wi][c - contenders];
			struct run r;

			if (run_one(w, c, &r, false) < 0 || cell->n >= MAX_RUNS)
				continue;
			cell->v[cell->n++] = r;
			fprintf(stderr, "%-10s %-20s rep %u: empty %s%.2f ms, return %.2f ms, cpu %.2f ms, rss %ld KiB%s%s\n",
				w->name, c->name, rep + 1, r.emptied ? "" : "NOT ", r.empty_ms, r.exit_ms,
				r.cpu_ms, r.maxrss_kb, r.status == -1 ? " (killed: did not return)" :
				r.status ? " (exit status != 0)" : "", r.stalled ? " STALL" : "");
		}
}

/* 100 (FULL) fork-bomb trials for each freezing or looping backend, at
 * the size of the mode's bomb row (--trials N in quick mode: 1,000). */
static void containment(void)
{
	struct workload bomb = { .type = W_BOMB, .a = quick_mode ? 1000 : 5000, .reps = 1 };
	struct cell *tc = trial_cells;

	snprintf(bomb.name, sizeof(bomb.name), "bomb-trial");
	for (unsigned t = 0; t < trials && !stop; t++)
		for (unsigned k = 0; k < 3 && !stop; k++) {
			const struct contender *c = find_contender(bomb_backends[k]);
			struct run r;

			if (!c || !applies(c, &bomb) || run_one(&bomb, c, &r, false) < 0)
				continue;
			tc[k].v[tc[k].n++ % MAX_RUNS] = r;
			if (tc[k].n > MAX_RUNS)
				tc[k].n = MAX_RUNS;
			/* CPU and RSS tell a contender that never ran (a starved
			 * fork, under 1 MiB) from a cgkill that ran and hung. */
			fprintf(stderr, "trial %u %-20s: %s %.2f ms, left %ld, status %d, cpu %.2f ms, rss %ld KiB\n",
				t + 1, c->name, r.emptied ? "contained" : "NOT CONTAINED", r.empty_ms,
				r.left, r.status, r.cpu_ms, r.maxrss_kb);
		}
	print_containment(trials, bomb.a);
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* Inside the new pid namespace, as its pid 1. */
static int inner(void)
{
	char stamp[64], mdpath[PATH_MAX], datpath[PATH_MAX], latest[PATH_MAX], sp[PATH_MAX];
	time_t t = time(NULL);
	struct sigaction sa = { .sa_handler = on_signal };
	const char *mode = cfg.full ? "full" : "quick";
	bool realtime;	/* the harness runs SCHED_FIFO */

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		die("cannot mount a private /proc: %m");
	realtime = harness_priority();

	if (cfg.hold) {
		struct workload *w = find_workload(cfg.hold);
		struct run r;
		const struct contender *c = &contenders[0];

		if (!w)
			die("no workload %s", cfg.hold);
		for (size_t i = 0; i < N_CONTENDERS; i++)
			if (contenders[i].hier == cfg.hold_hier)
				c = &contenders[i];
		return run_one(w, c, &r, true) < 0;
	}

	strftime(stamp, sizeof(stamp), "%Y-%m-%d-%H%M%S", localtime(&t));
	mkdir(cfg.resdir, 0755);
	snprintf(mdpath, sizeof(mdpath), "%s/%s-%s.md", cfg.resdir, stamp, mode);
	snprintf(datpath, sizeof(datpath), "%s/%s-%s.dat", cfg.resdir, stamp, mode);
	snprintf(sp, sizeof(sp), "%s/%s-%s-stalls.txt", cfg.resdir, stamp, mode);
	report_begin(mdpath, cfg.full, realtime);
	stall_log = fopen(sp, "we");

	for (unsigned wi = 0; wi < n_workloads && !stop; wi++) {
		if (workloads[wi].type == W_STRESS && !have_stress_ng()) {
			out("\n### %s\n\nskipped: stress-ng is not installed\n", workloads[wi].title);
			continue;
		}
		fprintf(stderr, "== %s\n", workloads[wi].title);
		bench_workload(wi);
		print_table(&workloads[wi], cells[wi]);
	}
	if (trials && !stop && in_list(workload_filter, "bomb"))
		containment();
	if (!stop)
		check_targets();
	report_end();
	write_dat(datpath);
	snprintf(latest, sizeof(latest), "%s/latest-%s.dat", cfg.resdir, mode);
	unlink(latest);
	if (symlink(strrchr(datpath, '/') + 1, latest) < 0)
		fprintf(stderr, "bench: symlink %s: %m\n", latest);
	fprintf(stderr, "bench: wrote %s and %s\n", mdpath, datpath);
	return stop ? 1 : 0;
}

static pid_t child;

static void forward(int sig)
{
	if (child > 0)
		kill(child, sig == SIGINT || sig == SIGTERM ? SIGTERM : sig);
}

static void usage(void)
{
	fputs("usage: bench [--full] [--reps N] [--trials N] [--only W,...] [--contenders C,...]\n"
	      "             [--no-bomb-cpu] [--cgkill PATH] [--cgkill2 PATH] [--cgkill3 PATH] [--floor PATH] [--shell-loop PATH] [--results DIR]\n"
	      "             [--bomb-reps N] [--deadline SECONDS] [--unboosted[=2,3]]\n"
	      "       bench --hold WORKLOAD [--hier v2|freezer|pids]\n"
	      "workloads: dbomb-3000 shbomb-3000 dbomb-10000 shbomb-10000 (the rows users meet),\n"
	      "           flat-100 flat-1000 flat-10000 threads wide deep bomb stress memory\n",
	      stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "full", no_argument, NULL, 'F' },
		{ "reps", required_argument, NULL, 'r' },
		{ "trials", required_argument, NULL, 't' },
		{ "only", required_argument, NULL, 'o' },
		{ "contenders", required_argument, NULL, 'c' },
		{ "cgkill", required_argument, NULL, 'k' },
		{ "floor", required_argument, NULL, 'f' },
		{ "shell-loop", required_argument, NULL, 's' },
		{ "results", required_argument, NULL, 'R' },
		{ "hold", required_argument, NULL, 'H' },
		{ "hier", required_argument, NULL, 'h' },
		{ "no-bomb-cpu", no_argument, NULL, 'C' },
		{ "cgkill2", required_argument, NULL, '2' },
		{ "bomb-reps", required_argument, NULL, 'B' },
		{ "cgkill3", required_argument, NULL, '3' },
		{ "unboosted", optional_argument, NULL, 'U' },
		{ "deadline", required_argument, NULL, 'D' },
		{ NULL, 0, NULL, 0 },
	};
	struct sigaction sa = { .sa_handler = forward };
	struct rlimit nofile = { 65536, 65536 };
	int opt, status = 0;
	bool trials_set = false;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'F': cfg.full = true; break;
		case 'r': cfg.reps = (unsigned)atoi(optarg); break;
		case 't': trials = (unsigned)atoi(optarg); trials_set = true; break;
		case 'o': snprintf(workload_filter, sizeof(workload_filter), "%s", optarg); break;
		case 'c': snprintf(contender_filter, sizeof(contender_filter), "%s", optarg); break;
		case 'k': cgkill_path = optarg; break;
		case 'f': floor_path = optarg; break;
		case 's': shell_path = optarg; break;
		case 'R': cfg.resdir = optarg; break;
		case 'H': cfg.hold = optarg; break;
		case 'C': bomb_cpu = false; break;
		case '2': cgkill2_path = optarg; break;
		case '3': cgkill3_path = optarg; break;
		case 'U': unboosted = !optarg ? 2 : (strchr(optarg, '2') ? 2 : 0) | (strchr(optarg, '3') ? 4 : 0); break;
		case 'B': bomb_reps = (unsigned)atoi(optarg); break;
		case 'D': deadline_s = (unsigned)atoi(optarg) ?: 60; break;
		case 'h':
			for (int h = 0; h < H_PIDS + 1; h++)
				if (strcmp(optarg, hname[h]) == 0)
					cfg.hold_hier = h;
			break;
		default: usage();
		}
	}
	if (optind != argc)
		usage();
	if (geteuid() != 0)
		die("must run as root (it creates cgroups and kills inside them)");
	if (find_bomb() < 0)
		die("%s or %s: no fork bomb program (make -C bench builds them): %m", bomb_exe, dbomb_exe);
	if (cfg.reps > MAX_RUNS)
		cfg.reps = MAX_RUNS;
	if (trials > MAX_RUNS)
		trials = MAX_RUNS;
	if (bomb_reps > MAX_RUNS)
		bomb_reps = MAX_RUNS;
	snprintf(floor_static_path, sizeof(floor_static_path), "%s-static", floor_path);
	if (access(floor_static_path, X_OK) < 0)
		die("%s: no static floor (make -C bench builds it): %m", floor_static_path);
	quick_mode = !cfg.full;
	check_list(contender_filter, "contender", is_contender);
	make_plan(cfg.full || cfg.hold, cfg.reps);
	if (!cfg.hold) {
		check_list(workload_filter, cfg.full ? "workload" : "workload in a quick run",
			   is_planned);
	} else if (!find_workload(cfg.hold)) {
		/* hold any workload of either size */
		n_workloads = 0;
		make_plan(false, 1);
	}
	if (!trials_set)
		trials = cfg.full ? 100 : 0;

	sandbox_setup();
	setrlimit(RLIMIT_NOFILE, &nofile);
	fflush(NULL);

	if (unshare(CLONE_NEWPID | CLONE_NEWNS) < 0) {
		sandbox_cleanup();
		die("unshare(CLONE_NEWPID|CLONE_NEWNS): %m");
	}
	child = fork();
	if (child < 0) {
		sandbox_cleanup();
		die("fork: %m");
	}
	if (child == 0)
		_exit(inner());
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	/* The namespace is gone with its pid 1, and every process in it. */
	sandbox_cleanup();
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
