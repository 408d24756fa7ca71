/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a user feels beside a fork storm (issue 29): the programs of
 * felt.sh, which makes the cgroups, runs the daemon and writes the report.
 *
 *	felt probe FILE
 *		Start /bin/true every 100 ms as a user's shell does (fork,
 *		exec, wait) until SIGTERM or SIGINT. One line a start in FILE:
 *		"START_US DURATION_US", the start on CLOCK_REALTIME (to match
 *		the storms), the duration on CLOCK_MONOTONIC. A start that
 *		ends past its next tick is followed at once by the next one.
 *
 *	felt storm [-p PIDSDIR] [-c CUTOFF_MS] CGDIR COMMAND...
 *		Start COMMAND (a fork bomb) in the v2 cgroup CGDIR, and first
 *		in the v1 pids cgroup PIDSDIR where the limit is there;
 *		refused unless that cgroup's pids.max is a number. Then wait
 *		for CGDIR to empty. At CUTOFF_MS (default 10,000) after the
 *		start, write 1 to its cgroup.kill and wait for it to empty
 *		(60 s at most). Prints "START_US EMPTY_US CAUGHT PEAK REFUSED":
 *		the start (before fork) and the empty time on CLOCK_REALTIME
 *		(the daemon's event log uses it too), 1 if it emptied before
 *		the cut-off, pids.peak and the "max" count of pids.events of
 *		the limiting cgroup ("-" where the file is missing).
 *		The watcher runs at SCHED_FIFO 10 (the command at SCHED_OTHER,
 *		nice 0), so that a bomb does not delay its clock.
 *
 *	felt run [-p PIDSDIR] [-o FILE] CGDIR COMMAND...
 *		Run COMMAND in CGDIR (and PIDSDIR) to its end, its output in
 *		FILE (default /dev/null); prints "exit N MS" or "signal N MS".
 *
 * COMMAND is started at nice 0 and SCHED_OTHER, its stdin /dev/null, its
 * stdout and stderr /dev/null or FILE (bash's bomb writes "fork: retry").
 * Exit status: 0, 1 on an error (said on stderr), 2 on bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "populated.h"

#define PROBE_PERIOD_NS 100000000LL
#define DRAIN_MS 60000

static const char *prog = "felt";

static int64_t clock_us(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int fail(const char *what, const char *path)
{
	fprintf(stderr, "%s: %s%s%s: %s\n", prog, what, path ? " " : "", path ? path : "", strerror(errno));
	return 1;
}

/* ---- the probe ---- */

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

/* One start of /bin/true, as a shell runs a command: its time in us. */
static int64_t one_start(void)
{
	int64_t t0 = clock_us(CLOCK_MONOTONIC);
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (pid < 0)
		return -1;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return clock_us(CLOCK_MONOTONIC) - t0;
}

static int probe(const char *out)
{
	struct sigaction sa = { .sa_handler = on_stop };	/* no SA_RESTART */
	FILE *f = fopen(out, "we");
	struct timespec tick;

	if (!f)
		return fail("cannot open", out);
	setvbuf(f, NULL, _IOLBF, 0);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	clock_gettime(CLOCK_MONOTONIC, &tick);
	while (!stop) {
		int64_t start = clock_us(CLOCK_REALTIME), took = one_start();
		struct timespec now;

		if (took < 0)
			return fail("fork", NULL);
		fprintf(f, "%lld %lld\n", (long long)start, (long long)took);
		tick.tv_nsec += PROBE_PERIOD_NS;
		if (tick.tv_nsec >= 1000000000L) {
			tick.tv_sec++;
			tick.tv_nsec -= 1000000000L;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > tick.tv_sec || (now.tv_sec == tick.tv_sec && now.tv_nsec > tick.tv_nsec))
			tick = now;	/* late: no burst to catch up */
		else
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &tick, NULL);
	}
	return fclose(f) ? fail("cannot write", out) : 0;
}

/* ---- a command in a cgroup ---- */

static int write_str(const char *dir, const char *file, const char *s)
{
	char path[4096];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (write(fd, s, strlen(s)) < 0)
		ret = -1;
	close(fd);
	return ret;
}

/* A number from the file, or its line "KEY N" when key is given; -1 if
 * there is none. */
static long long read_num(const char *dir, const char *file, const char *key)
{
	char path[4096], buf[512], *p = buf;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (key) {
		size_t k = strlen(key);

		/* the line that starts with "KEY " */
		while (strncmp(p, key, k) != 0 || p[k] != ' ') {
			p = strchr(p, '\n');
			if (!p)
				return -1;
			p++;
		}
		p += k + 1;
	}
	if (*p < '0' || *p > '9')
		return -1;
	return strtoll(p, NULL, 10);
}

/* The child: ordinary priority, into the cgroups, then COMMAND; what went
 * wrong before the exec goes to the parent through errfd. */
enum stage { JOIN, REDIRECT, EXEC };
static const char *const stage_msg[] = { "cannot move into", "cannot redirect stdio for", "cannot exec" };

static void child(const char *pidsdir, const char *cgdir, char **argv, const char *out, int errfd)
{
	struct sched_param other = { 0 };
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC), err[2], o;

	sched_setscheduler(0, SCHED_OTHER, &other);
	setpriority(PRIO_PROCESS, 0, 0);
	err[0] = JOIN;
	if ((pidsdir && write_str(pidsdir, "cgroup.procs", "0") < 0) ||
	    write_str(cgdir, "cgroup.procs", "0") < 0)
		goto out;
	err[0] = REDIRECT;
	o = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (null < 0 || o < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(o, STDOUT_FILENO) < 0 ||
	    dup2(o, STDERR_FILENO) < 0)
		goto out;
	err[0] = EXEC;
	execvp(argv[0], argv);
out:
	err[1] = errno;
	if (write(errfd, err, sizeof(err)) < 0)
		_exit(126);
	_exit(127);
}

/* Start COMMAND in the cgroups; its pid, or -1 (said) if it did not get
 * as far as its exec. */
static pid_t start_in(const char *pidsdir, const char *cgdir, char **argv, const char *out)
{
	int p[2], err[2];
	pid_t pid;
	ssize_t n;

	if (pipe2(p, O_CLOEXEC) < 0) {
		fail("pipe", NULL);
		return -1;
	}
	pid = fork();
	if (pid == 0)
		child(pidsdir, cgdir, argv, out, p[1]);
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		fail("fork", NULL);
		return -1;
	}
	/* end of file: the exec closed the pipe */
	while ((n = read(p[0], err, sizeof(err))) < 0 && errno == EINTR)
		;
	close(p[0]);
	if (n > 0) {
		waitpid(pid, NULL, 0);
		errno = err[1];
		fail(stage_msg[err[0]], err[0] == EXEC ? argv[0] : cgdir);
		return -1;
	}
	return pid;
}

/* Wait until cgdir's cgroup.events says "populated 0", at most until
 * deadline (CLOCK_MONOTONIC us): 0 when empty, 1 at the deadline, -1 on
 * an error. Every notification is followed by a read (they coalesce). */
static int wait_empty(int events, int64_t deadline)
{
	for (;;) {
		struct pollfd pfd = { .fd = events, .events = POLLPRI };
		int64_t left = deadline - clock_us(CLOCK_MONOTONIC);
		int pop = populated(events);

		if (pop <= 0)
			return pop;
		if (left <= 0)
			return 1;
		/* a second at most: a read now and then costs nothing */
		if (poll(&pfd, 1, left > 1000000 ? 1000 : (int)(left / 1000) + 1) < 0 && errno != EINTR)
			return -1;
	}
}

static void realtime_watcher(void)
{
	struct sched_param fifo = { .sched_priority = 10 };

	if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &fifo) < 0)
		fprintf(stderr, "%s: SCHED_FIFO: %s (the clock may lag beside a bomb)\n", prog, strerror(errno));
}

static void print_num(long long v)
{
	if (v < 0)
		printf(" -");
	else
		printf(" %lld", v);
}

static int storm(const char *pidsdir, const char *cgdir, long cutoff_ms, char **argv)
{
	const char *limited = pidsdir ? pidsdir : cgdir;
	long long max = read_num(limited, "pids.max", NULL);
	char path[4096];
	int64_t start, t0, empty;
	int events, ret, caught = 1;
	pid_t pid;

	/* a bomb only under a limit */
	if (max <= 0) {
		fprintf(stderr, "%s: %s/pids.max is not a limit: no bomb started\n", prog, limited);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/cgroup.events", cgdir);
	events = open(path, O_RDONLY | O_CLOEXEC);
	if (events < 0)
		return fail("cannot open", path);
	realtime_watcher();
	start = clock_us(CLOCK_REALTIME);
	t0 = clock_us(CLOCK_MONOTONIC);
	pid = start_in(pidsdir, cgdir, argv, "/dev/null");
	if (pid < 0)
		return 1;
	ret = wait_empty(events, t0 + (int64_t)cutoff_ms * 1000);
	if (ret == 1) {
		caught = 0;
		if (write_str(cgdir, "cgroup.kill", "1") < 0)
			return fail("cannot write 1 to cgroup.kill of", cgdir);
		ret = wait_empty(events, clock_us(CLOCK_MONOTONIC) + DRAIN_MS * 1000LL);
	}
	empty = clock_us(CLOCK_REALTIME);
	close(events);
	if (ret != 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, cgdir, ret > 0 ? "not empty 60 s after cgroup.kill" :
			"cannot read cgroup.events");
		return 1;
	}
	waitpid(pid, NULL, 0);
	printf("%lld %lld %d", (long long)start, (long long)empty, caught);
	print_num(read_num(limited, "pids.peak", NULL));
	print_num(read_num(limited, "pids.events", "max"));
	printf("\n");
	return 0;
}

static int run(const char *pidsdir, const char *cgdir, const char *out, char **argv)
{
	int64_t t0 = clock_us(CLOCK_MONOTONIC);
	pid_t pid = start_in(pidsdir, cgdir, argv, out);
	int st;

	if (pid < 0)
		return 1;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return fail("waitpid", NULL);
	printf("%s %d %lld\n", WIFSIGNALED(st) ? "signal" : "exit", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st),
	       (long long)((clock_us(CLOCK_MONOTONIC) - t0) / 1000));
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: %s probe FILE\n"
		"       %s storm [-p PIDSDIR] [-c CUTOFF_MS] CGDIR COMMAND...\n"
		"       %s run [-p PIDSDIR] [-o FILE] CGDIR COMMAND...\n", prog, prog, prog);
	return 2;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "", *pidsdir = NULL, *out = "/dev/null";
	long cutoff_ms = 10000;
	char *end;
	int opt;

	if (!strcmp(cmd, "probe"))
		return argc == 3 ? probe(argv[2]) : usage();
	if (strcmp(cmd, "storm") != 0 && strcmp(cmd, "run") != 0)
		return usage();
	argv++;
	argc--;
	/* + : stop at the first operand (the command's own options follow) */
	while ((opt = getopt(argc, argv, "+p:c:o:")) != -1) {
		switch (opt) {
		case 'p':
			pidsdir = optarg;
			break;
		case 'o':
			if (!strcmp(cmd, "storm"))
				return usage();
			out = optarg;
			break;
		case 'c':
			errno = 0;
			cutoff_ms = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || cutoff_ms <= 0 || !strcmp(cmd, "run")) {
				fprintf(stderr, "%s: -c %s: not a cut-off in ms for a storm\n", prog, optarg);
				return 2;
			}
			break;
		default:
			return usage();
		}
	}
	if (argc - optind < 2)
		return usage();
	if (!strcmp(cmd, "storm"))
		return storm(pidsdir, argv[optind], cutoff_ms, argv + optind + 1);
	return run(pidsdir, argv[optind], out, argv + optind + 1);
}
