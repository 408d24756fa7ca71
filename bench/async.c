/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kill driven from an event loop against the blocking call (issue 27):
 * `make -C bench async` (as root; `make` first).
 *
 *	async [-n TRIALS] [-p PROCESSES]
 *
 * Each trial (default 21) fills fresh v2 sandbox cgroups
 * (<v2>/cgkill-bench-async.<pid>/...) with PROCESSES (default 1,000)
 * sleeping processes and kills them, each way in turn within the trial (so
 * that a busy moment of the shared machine hits all alike):
 *
 *	blocking	cgk_kill(), SIGKILL, wait for empty (kernel and
 *			freeze backends)
 *	start/step	cgk_kill_start(), poll(2) on cgk_kill_op_fd(),
 *			cgk_kill_op_step() until it is over, cgk_kill_op_finish()
 *	two at once	two such cgroups killed from one epoll loop, against
 *			two cgk_kill() one after the other (kernel backend)
 *	beside a slow	cgroup A holds a process that ignores SIGTERM (TERM,
 *			then KILL after 1 s); cgroup B holds PROCESSES sleepers
 *			(KILL): B's time to empty when both are driven from one
 *			loop, and when cgk_kill(A) comes first
 *
 * Times are from the call until the kill is over (the subtree empty; each
 * waits up to 30 s; a trial with a kill that fails is run again and
 * counted), in ms; the start's own time is given too. The load
 * average at the start and the end is printed too. Prints a markdown section:
 * median and worst of each.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgkill.h"

#define MAX_TRIALS 101
#define ESCALATE_MS 1000
#define WAIT_MS 30000

enum row {
	KERNEL_BLOCKING, KERNEL_STEP, KERNEL_START,
	FREEZE_BLOCKING, FREEZE_STEP, FREEZE_START,
	TWO_SEQUENTIAL, TWO_LOOP,
	SLOW_SEQUENTIAL, SLOW_LOOP,
	N_ROWS
};
static const char *const row_names[N_ROWS] = {
	"kernel: cgk_kill()", "kernel: start/step to the end", "kernel: cgk_kill_start() alone",
	"freeze: cgk_kill()", "freeze: start/step to the end", "freeze: cgk_kill_start() alone",
	"two cgroups: cgk_kill() one after the other", "two cgroups: one epoll loop",
	"B beside a slow A: cgk_kill(A) then cgk_kill(B)", "B beside a slow A: one epoll loop",
};
static double samples[N_ROWS][MAX_TRIALS];
/* A kill of this trial failed (a dying process held past WAIT_MS on a
 * starved machine): the trial is run again, and counted. */
static bool trial_failed;

static char box[4096];
static unsigned n_procs = 1000;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noreturn, format(printf, 1, 2))) static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static int write_file(const char *dir, const char *file, const char *text)
{
	char path[4200];
	int fd, r = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) < 0)
		r = -errno;
	close(fd);
	return r;
}

static unsigned count_procs(const char *dir)
{
	char path[4200], line[32];
	unsigned n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	return n;
}

static void reap_all(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

/* n sleepers in dir (one of them ignoring SIGTERM if ignore_term), each a
 * child of this subreaper in the end; returns once the list shows them. */
static void fill(const char *dir, unsigned n, bool ignore_term)
{
	char me[32];
	pid_t pid;

	if (count_procs(dir)) {	/* a failed kill's leftovers */
		trial_failed = true;
		return;
	}
	pid = fork();

	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		snprintf(me, sizeof(me), "%d", (int)getpid());
		if (write_file(dir, "cgroup.procs", me) < 0)
			_exit(1);
		if (ignore_term)
			signal(SIGTERM, SIG_IGN);
		for (unsigned i = 1; i < n; i++)
			if (fork() == 0)
				break;
		for (;;)
			pause();
	}
	for (double end = now_ms() + 60000; count_procs(dir) < n; usleep(2000))
		if (now_ms() > end) {
			fprintf(stderr, "%s: %u of %u processes after 60 s\n", dir, count_procs(dir), n);
			trial_failed = true;
			return;
		}
}

static char *sub(const char *name)
{
	static char paths[4][4200];
	static unsigned next;
	char *p = paths[next++ % 4];

	snprintf(p, sizeof(paths[0]), "%s/%s", box, name);
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		die("mkdir %s: %s", p, strerror(errno));
	return p;
}

static cgk_options *options(enum cgk_backend b, int sig, uint64_t escalate_ms)
{
	cgk_options *o = NULL;

	/* A loaded machine (another's bomb) may hold a dying process for
	 * seconds: the rows measure the call, not a timeout. */
	if (cgk_options_new(&o) < 0 || cgk_options_set_backend(o, b) < 0 ||
	    cgk_options_set_wait(o, WAIT_MS) < 0 ||
	    cgk_options_set_signal(o, sig) < 0 ||
	    (escalate_ms && cgk_options_add_escalation(o, escalate_ms, SIGKILL) < 0))
		die("options");
	return o;
}

static void check(int r, cgk_report *rep, const char *what)
{
	if (r < 0) {
		fprintf(stderr, "%s: %s\n", what, rep ? cgk_report_message(rep) : strerror(-r));
		trial_failed = true;
	}
	cgk_report_free(rep);
	reap_all();
}

static double blocking(const char *dir, const cgk_options *o)
{
	cgk_report *rep = NULL;
	double t0 = now_ms();
	int r = cgk_kill(dir, o, &rep);
	double t = now_ms() - t0;

	check(r, rep, "cgk_kill");
	return t;
}

static double stepped(const char *dir, const cgk_options *o, double *start_ms)
{
	cgk_kill_op *op = NULL;
	cgk_report *rep = NULL;
	double t0 = now_ms(), t;
	int r = cgk_kill_start(dir, o, &op);

	*start_ms = now_ms() - t0;
	if (r < 0)
		die("cgk_kill_start: %s", strerror(-r));
	while (cgk_kill_op_step(op) == -EAGAIN) {
		struct pollfd p = { .fd = cgk_kill_op_fd(op), .events = POLLIN };

		poll(&p, 1, -1);
	}
	r = cgk_kill_op_finish(op, &rep);
	t = now_ms() - t0;
	check(r, rep, "cgk_kill_op");
	return t;
}

/* Both from one epoll loop; done[i] the time op i was over. */
static void loop2(const char *a, const cgk_options *oa, const char *b, const cgk_options *ob,
		  double *done)
{
	cgk_kill_op *op[2];
	int ep = epoll_create1(EPOLL_CLOEXEC), left = 2;
	double t0 = now_ms();

	if (cgk_kill_start(a, oa, &op[0]) < 0 || cgk_kill_start(b, ob, &op[1]) < 0)
		die("cgk_kill_start");
	for (int i = 0; i < 2; i++)
		epoll_ctl(ep, EPOLL_CTL_ADD, cgk_kill_op_fd(op[i]),
			  &(struct epoll_event){ .events = EPOLLIN, .data.u32 = i });
	while (left) {
		struct epoll_event ev[2];
		int n = epoll_wait(ep, ev, 2, -1);

		for (int k = 0; k < n; k++) {
			unsigned i = ev[k].data.u32;
			cgk_report *rep = NULL;

			if (cgk_kill_op_step(op[i]) == -EAGAIN)
				continue;
			done[i] = now_ms() - t0;
			epoll_ctl(ep, EPOLL_CTL_DEL, cgk_kill_op_fd(op[i]), NULL);
			check(cgk_kill_op_finish(op[i], &rep), rep, "loop");
			left--;
		}
	}
	close(ep);
}

/* Each step of a trial, which ends at the first failure. */
#define STEP(x) do { x; if (trial_failed) goto out; } while (0)

static void trial(unsigned t, unsigned attempt)
{
	cgk_options *kernel = options(CGK_BACKEND_KERNEL, SIGKILL, 0);
	cgk_options *freeze = options(CGK_BACKEND_FREEZE, SIGKILL, 0);
	cgk_options *slow = options(CGK_BACKEND_AUTO, SIGTERM, ESCALATE_MS);
	char na[32], nb[32], *a, *b;
	double done[2], t0;

	/* Fresh cgroups for each attempt: a failed one's leftovers stay apart. */
	snprintf(na, sizeof(na), "a.%u", attempt);
	snprintf(nb, sizeof(nb), "b.%u", attempt);
	a = sub(na);
	b = sub(nb);

	STEP(fill(a, n_procs, false));
	STEP(samples[KERNEL_BLOCKING][t] = blocking(a, kernel));
	STEP(fill(a, n_procs, false));
	STEP(samples[KERNEL_STEP][t] = stepped(a, kernel, &samples[KERNEL_START][t]));
	STEP(fill(a, n_procs, false));
	STEP(samples[FREEZE_BLOCKING][t] = blocking(a, freeze));
	STEP(fill(a, n_procs, false));
	STEP(samples[FREEZE_STEP][t] = stepped(a, freeze, &samples[FREEZE_START][t]));

	STEP(fill(a, n_procs, false); fill(b, n_procs, false));
	t0 = now_ms();
	STEP(blocking(a, kernel); blocking(b, kernel));
	samples[TWO_SEQUENTIAL][t] = now_ms() - t0;
	STEP(fill(a, n_procs, false); fill(b, n_procs, false));
	STEP(loop2(a, kernel, b, kernel, done));
	samples[TWO_LOOP][t] = done[0] > done[1] ? done[0] : done[1];

	STEP(fill(a, 1, true); fill(b, n_procs, false));
	t0 = now_ms();
	STEP(blocking(a, slow); blocking(b, kernel));
	samples[SLOW_SEQUENTIAL][t] = now_ms() - t0;
	STEP(fill(a, 1, true); fill(b, n_procs, false));
	STEP(loop2(a, slow, b, kernel, done));
	samples[SLOW_LOOP][t] = done[1];
	fprintf(stderr, "trial %u done\n", t + 1);
out:
	cgk_options_free(kernel);
	cgk_options_free(freeze);
	cgk_options_free(slow);
}

static int cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

static void find_v2(char *out, size_t size)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096], mnt[4096], type[256];

	*out = '\0';
	while (f && fgets(line, sizeof(line), f)) {
		const char *dash = strstr(line, " - ");

		if (dash && sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1 &&
		    sscanf(dash, " - %255s", type) == 1 && strcmp(type, "cgroup2") == 0) {
			snprintf(out, size, "%s", mnt);
			break;
		}
	}
	if (f)
		fclose(f);
}

/* Empty and remove the sandbox: only cgroups this program made (a.N, b.N). */
static unsigned attempts;

static void cleanup(void)
{
	char path[4200];

	for (unsigned n = 0; n <= attempts; n++) {
		for (const char *k = "ab"; *k; k++) {
			snprintf(path, sizeof(path), "%s/%c.%u", box, *k, n);
			write_file(path, "cgroup.kill", "1");
			for (int i = 0; i < 12000 && count_procs(path); i++) {
				reap_all();
				usleep(10000);
			}
			rmdir(path);
		}
	}
	reap_all();
	rmdir(box);
}

static void print_load(const char *when)
{
	char line[256] = "";
	FILE *f = fopen("/proc/loadavg", "re");

	if (f && fgets(line, sizeof(line), f))
		line[strcspn(line, "\n")] = '\0';
	if (f)
		fclose(f);
	printf("load average at the %s: %s\n\n", when, line);
}

int main(int argc, char *argv[])
{
	char v2[4096];
	unsigned trials = 21, failed = 0;
	int c;

	while ((c = getopt(argc, argv, "n:p:")) != -1) {
		if (c == 'n')
			trials = (unsigned)atoi(optarg);
		else if (c == 'p')
			n_procs = (unsigned)atoi(optarg);
		else
			die("usage: async [-n TRIALS] [-p PROCESSES]");
	}
	if (!trials || trials > MAX_TRIALS || !n_procs)
		die("usage: async [-n TRIALS (1-%d)] [-p PROCESSES]", MAX_TRIALS);
	find_v2(v2, sizeof(v2));
	if (!*v2)
		die("no cgroup v2 mount");
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	snprintf(box, sizeof(box), "%s/cgkill-bench-async.%d", v2, (int)getpid());
	if (mkdir(box, 0755) < 0)
		die("mkdir %s: %s", box, strerror(errno));
	atexit(cleanup);

	print_load("start");
	for (unsigned t = 0, tries = 0; t < trials; tries++) {
		if (tries >= 2 * trials) {
			trials = t;	/* what succeeded */
			break;
		}
		trial_failed = false;
		attempts = tries;
		trial(t, tries);
		if (trial_failed)
			failed++;
		else
			t++;
	}
	print_load("end");
	if (failed)
		printf("%u trial(s) run again: a kill did not empty its cgroup within %u s\n\n",
		       failed, WAIT_MS / 1000);

	if (!trials)
		die("no trial succeeded");
	printf("| %u processes, %u trials (ms) | median | worst |\n|---|---:|---:|\n", n_procs,
	       trials);
	for (int r = 0; r < N_ROWS; r++) {
		qsort(samples[r], trials, sizeof(double), cmp);
		printf("| %s | %.1f | %.1f |\n", row_names[r], samples[r][trials / 2],
		       samples[r][trials - 1]);
	}
	return 0;
}
