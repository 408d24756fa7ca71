/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Memory back after a kill, with and without process_mrelease (issue 18):
 * `make -C bench reap` (as root; `make` first).
 *
 *	reap --cgkill CGKILL --floor FLOOR [-n TRIALS] [-s MIB,MIB,...] [--busy HOGS]
 *
 * For each size (default 256, 1024 and 4096 MiB), TRIALS times (default
 * 15), a victim touches that much anonymous memory in a v1 memory cgroup
 * (memory.max on a v2-only machine) limited to the size plus 256 MiB, and
 * sits in a v2 cgroup, the target. Each contender is then started as a user
 * starts it (forked from this ordinary parent and exec'd fresh):
 *
 *	cgkill --reap T		cgkill PATH with the reap
 *	cgkill T		and without
 *	floor T			the kernel: "1" into cgroup.kill, wait for
 *				populated 0 (bench/floor.c, static)
 *	floor -m T		the same with process_mrelease after the write
 *
 * in turn within each trial (so a busy moment of the shared machine hits
 * all of them alike), and timed from just before the fork until the memory
 * cgroup's usage falls under 16 MiB (polled every 100 us), until the
 * command exits, and until MemAvailable is back within 64 MiB of what it
 * was before the victim touched its memory (the whole machine: other work
 * moves it, so it is the noisier of the two).
 *
 * Prints a markdown section: medians, 90th percentiles and worst of each,
 * and the ratio of cgkill without the reap to cgkill with it.
 *
 * --busy HOGS: the busy machine. Throughout each trial (all four
 * contenders), HOGS processes (make -C bench reap BUSY=1: 4, two a CPU on
 * this 2-CPU machine) spin on the CPU at nice 0, SCHED_OTHER, each in a v2
 * sandbox cgroup of their own (<v2>/cgkill-bench-reap.<pid>.busy, apart
 * from the target); started before the trial's first victim, killed at its
 * end through that cgroup's cgroup.kill only (then waited for, and the
 * cgroup emptied). They die with this program too (PR_SET_PDEATHSIG) and
 * stop by themselves after 10 minutes. Each sample also records the
 * machine's CPU use (/proc/stat) and the hogs' (their cgroup's cpu.stat)
 * from the start of the command until the memory was back.
 */
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIB (1ull << 20)
#define BACK_BYTES (16 * MIB)		/* "memory back": usage under this */
#define AVAIL_SLACK (64 * MIB)		/* MemAvailable within this of before */
#define LIMIT_EXTRA_MIB 256
#define POLL_US 100
#define DEADLINE_MS 60000
#define MAX_TRIALS 100
#define MAX_SIZES 8
#define MAX_HOGS 16
#define HOG_LIFE_S 600		/* a hog stops by itself after this */

enum { C_REAP, C_NOREAP, C_FLOOR, C_FLOOR_M, N_CONTENDERS };
static const char *const names[N_CONTENDERS] = {
	"cgkill --reap", "cgkill", "floor (cgroup.kill)", "floor -m (cgroup.kill + mrelease)",
};

static char v2[4096], mem[4096], target[4096], busy[4096];
static const char *usage_file, *limit_file;
static int n_hogs;			/* --busy */
static pid_t hogs[MAX_HOGS];
static int n_cpus = 1;

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static void die(const char *what)
{
	fprintf(stderr, "reap: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int put(const char *dir, const char *file, const char *text)
{
	char p[4200];
	int fd, r;

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	r = write(fd, text, strlen(text)) == (ssize_t)strlen(text) ? 0 : -1;
	close(fd);
	return r;
}

/* A number at the start of dir/file (dir NULL: file is a path). */
static unsigned long long number(const char *dir, const char *file)
{
	char p[4200], buf[64];
	int fd;
	ssize_t n;

	snprintf(p, sizeof(p), "%s%s%s", dir ? dir : "", dir ? "/" : "", file);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return strtoull(buf, NULL, 10);
}

static unsigned long long mem_available(void)
{
	char buf[4096], *p;
	int fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	p = strstr(buf, "MemAvailable:");
	return p ? strtoull(p + 13, NULL, 10) * 1024 : 0;
}

/* The mounts, from mountinfo: the v2 mount and the v1 memory hierarchy. */
static void find_mounts(char *v2mnt, char *memmnt)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[8192];

	*v2mnt = *memmnt = '\0';
	while (f && fgets(line, sizeof(line), f)) {
		char mp[4096], type[64], opts[1024];
		const char *sep = strstr(line, " - ");

		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", mp) != 1 ||
		    sscanf(sep + 3, "%63s %*s %1023s", type, opts) != 2)
			continue;
		if (!strcmp(type, "cgroup2") && !*v2mnt)
			strcpy(v2mnt, mp);
		if (!strcmp(type, "cgroup") && !*memmnt &&
		    (strstr(opts, ",memory") || !strncmp(opts, "memory", 6)))
			strcpy(memmnt, mp);
	}
	if (f)
		fclose(f);
}

static void loadavg(char *buf, size_t size)
{
	FILE *f = fopen("/proc/loadavg", "re");

	*buf = '\0';
	if (f && fgets(buf, (int)size, f))
		buf[strcspn(buf, "\n")] = '\0';
	if (f)
		fclose(f);
}

static void setup(void)
{
	char v2mnt[4096], memmnt[4096];

	find_mounts(v2mnt, memmnt);
	if (!*v2mnt) {
		fprintf(stderr, "reap: no cgroup v2 mount\n");
		exit(1);
	}
	snprintf(v2, sizeof(v2), "%s/cgkill-bench-reap.%d", v2mnt, (int)getpid());
	snprintf(target, sizeof(target), "%s/T", v2);
	if (mkdir(v2, 0755) < 0 || mkdir(target, 0755) < 0)
		die(v2);
	if (n_hogs) {
		snprintf(busy, sizeof(busy), "%s/cgkill-bench-reap.%d.busy", v2mnt, (int)getpid());
		if (mkdir(busy, 0755) < 0)
			die(busy);
	}
	if (*memmnt) {
		snprintf(mem, sizeof(mem), "%s/cgkill-bench-reap.%d", memmnt, (int)getpid());
		usage_file = "memory.usage_in_bytes";
		limit_file = "memory.limit_in_bytes";
		if (mkdir(mem, 0755) < 0)
			die(mem);
	} else {
		snprintf(mem, sizeof(mem), "%s/M", v2);
		usage_file = "memory.current";
		limit_file = "memory.max";
		if (put(v2, "cgroup.subtree_control", "+memory") < 0 || mkdir(mem, 0755) < 0) {
			fprintf(stderr, "reap: no v1 memory hierarchy and no v2 memory controller\n");
			exit(1);
		}
	}
}

/* The hogs die through their cgroup only: cgroup.kill, then our children
 * among them are waited for (never signalled by pid) and the cgroup must
 * empty. */
static void busy_stop(void)
{
	if (!*busy)
		return;
	put(busy, "cgroup.kill", "1");
	for (int i = 0; i < n_hogs; i++)
		if (hogs[i] > 0) {
			waitpid(hogs[i], NULL, 0);
			hogs[i] = 0;
		}
	for (int i = 0; i < 500; i++) {
		char p[4200], buf[256];
		int fd;
		ssize_t n;

		snprintf(p, sizeof(p), "%s/cgroup.events", busy);
		fd = open(p, O_RDONLY | O_CLOEXEC);
		n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
		if (fd >= 0)
			close(fd);
		buf[n > 0 ? n : 0] = '\0';
		if (n <= 0 || strstr(buf, "populated 0"))
			break;
		usleep(10000);
	}
}

/* n_hogs spinning children, each in the busy cgroup before it spins: nice
 * 0, SCHED_OTHER (set, not only inherited). Returns once all are in. */
static void busy_start(void)
{
	pid_t parent = getpid();

	for (int i = 0; i < n_hogs; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			struct sched_param sp = { 0 };
			volatile unsigned long x = 0;
			time_t end = time(NULL) + HOG_LIFE_S;

			if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent ||
			    put(busy, "cgroup.procs", "0") < 0 ||
			    sched_setscheduler(0, SCHED_OTHER, &sp) < 0 ||
			    setpriority(PRIO_PROCESS, 0, 0) < 0)
				_exit(1);
			for (;;) {
				for (int k = 0; k < 1 << 24; k++)
					x++;
				if (time(NULL) > end)
					_exit(0);
			}
		}
		if (pid < 0)
			die("fork (hog)");
		hogs[i] = pid;
	}
	for (int i = 0; i < 1000; i++) {
		char p[4200], buf[4096];
		int fd, lines = 0;
		ssize_t n;

		snprintf(p, sizeof(p), "%s/cgroup.procs", busy);
		fd = open(p, O_RDONLY | O_CLOEXEC);
		n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
		if (fd >= 0)
			close(fd);
		for (ssize_t k = 0; k < n; k++)
			lines += buf[k] == '\n';
		if (lines >= n_hogs)
			return;
		usleep(1000);
	}
	fprintf(stderr, "reap: the hogs did not all enter %s\n", busy);
	exit(1);
}

static void cleanup(void)
{
	busy_stop();
	if (*busy)
		rmdir(busy);
	put(target, "cgroup.kill", "1");
	for (int i = 0; i < 100 && (rmdir(target) < 0 && errno == EBUSY); i++)
		usleep(10000);
	rmdir(mem);
	rmdir(v2);
}

static void on_signal(int sig)
{
	(void)sig;
	exit(1);	/* atexit: cleanup() */
}

/* Busy and total jiffies of all CPUs (the "cpu" line of /proc/stat). */
static void cpu_jiffies(unsigned long long *busy_j, unsigned long long *total_j)
{
	unsigned long long v[10] = { 0 };
	char buf[512];
	int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
	       &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
	*total_j = 0;
	for (int i = 0; i < 8; i++)	/* guest and guest_nice are in user */
		*total_j += v[i];
	*busy_j = *total_j - v[3] - v[4];
}

/* usage_usec of the hogs' cgroup (cpu.stat has it without the controller). */
static unsigned long long busy_usage_us(void)
{
	char p[4200], buf[1024], *u;
	int fd;
	ssize_t n;

	if (!*busy)
		return 0;
	snprintf(p, sizeof(p), "%s/cpu.stat", busy);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	u = strstr(buf, "usage_usec ");
	return u ? strtoull(u + 11, NULL, 10) : 0;
}

/* A victim holding mib MiB; its pid once touched. */
static pid_t victim(unsigned mib)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe2(p, O_CLOEXEC) < 0)
		die("pipe");
	pid = fork();
	if (pid == 0) {
		size_t len = (size_t)mib * MIB;
		char *m;

		if (put(mem, "cgroup.procs", "0") < 0 || put(target, "cgroup.procs", "0") < 0)
			_exit(1);
		m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			_exit(2);
		for (size_t off = 0; off < len; off += 4096)
			m[off] = 1;
		if (write(p[1], "x", 1) != 1)
			_exit(3);
		for (;;)
			pause();
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &c, 1) != 1) {
		fprintf(stderr, "reap: the victim did not start\n");
		exit(1);
	}
	close(p[0]);
	return pid;
}

struct sample {
	double mem_ms, exit_ms, avail_ms;	/* < 0: not within the deadline */
	/* from the start until the memory was back: the share of all CPUs
	 * busy (/proc/stat), and the CPUs' worth the hogs had */
	double machine_busy, hogs_cpus;
};

/* Start contender c on the target and time it. */
static struct sample run(int c, const char *cgkill, const char *floor_, unsigned long long avail0)
{
	struct sample s = { -1, -1, -1, -1, -1 };
	unsigned long long b0, j0, b1, j1, h0 = busy_usage_us();
	uint64_t t0, t;
	int status;
	pid_t pid;

	cpu_jiffies(&b0, &j0);
	t0 = now_us();
	pid = fork();

	if (pid == 0) {
		const char *argv[5];
		int n = 0;

		argv[n++] = c == C_FLOOR || c == C_FLOOR_M ? floor_ : cgkill;
		if (c == C_REAP)
			argv[n++] = "--reap";
		if (c == C_FLOOR_M)
			argv[n++] = "-m";
		argv[n++] = target;
		argv[n] = NULL;
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	if (pid < 0)
		die("fork");
	while ((t = now_us()) - t0 < DEADLINE_MS * 1000ull) {
		if (s.mem_ms < 0 && number(mem, usage_file) < BACK_BYTES) {
			s.mem_ms = (double)(t - t0) / 1000;
			cpu_jiffies(&b1, &j1);
			s.machine_busy = j1 > j0 ? (double)(b1 - b0) / (double)(j1 - j0) : -1;
			s.hogs_cpus = *busy && t > t0 ?
				(double)(busy_usage_us() - h0) / (double)(now_us() - t0) : -1;
		}
		if (s.avail_ms < 0 && mem_available() + AVAIL_SLACK >= avail0)
			s.avail_ms = (double)(t - t0) / 1000;
		if (s.exit_ms < 0 && waitpid(pid, &status, WNOHANG) == pid) {
			s.exit_ms = (double)(t - t0) / 1000;
			if (!WIFEXITED(status) || WEXITSTATUS(status))
				fprintf(stderr, "reap: %s exited with status %d\n", names[c], status);
		}
		if (s.mem_ms >= 0 && s.exit_ms >= 0 && s.avail_ms >= 0)
			break;
		/* Other work on the machine may keep MemAvailable down: give
		 * it 2 s after the rest, then count it missed. */
		if (s.mem_ms >= 0 && s.exit_ms >= 0 &&
		    t - t0 > (uint64_t)((s.mem_ms > s.exit_ms ? s.mem_ms : s.exit_ms) * 1000) + 2000000)
			break;
		usleep(POLL_US);
	}
	if (s.exit_ms < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	return s;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median, 90th percentile (nearest rank) and worst of v[0..n); misses (< 0)
 * counted apart. */
static void stats(double *v, int n, double *med, double *p90, double *max, int *missed)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		if (v[i] >= 0)
			v[k++] = v[i];
	*missed = n - k;
	qsort(v, (size_t)k, sizeof(*v), cmp);
	*med = k ? (k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2) : -1;
	*p90 = k ? v[(9 * k + 9) / 10 - 1] : -1;
	*max = k ? v[k - 1] : -1;
}

int main(int argc, char **argv)
{
	const char *cgkill = NULL, *floor_ = NULL;
	unsigned sizes[MAX_SIZES] = { 256, 1024, 4096 }, n_sizes = 3;
	int trials = 15;
	char load0[128], load1[128];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--cgkill") && i + 1 < argc)
			cgkill = argv[++i];
		else if (!strcmp(argv[i], "--floor") && i + 1 < argc)
			floor_ = argv[++i];
		else if (!strcmp(argv[i], "-n") && i + 1 < argc)
			trials = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--busy") && i + 1 < argc)
			n_hogs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-s") && i + 1 < argc) {
			char *s = argv[++i], *tok, *save = NULL;

			n_sizes = 0;
			for (tok = strtok_r(s, ",", &save); tok && n_sizes < MAX_SIZES;
			     tok = strtok_r(NULL, ",", &save))
				sizes[n_sizes++] = (unsigned)atoi(tok);
		} else {
			fprintf(stderr, "usage: reap --cgkill CGKILL --floor FLOOR [-n TRIALS] "
					"[-s MIB,...] [--busy HOGS]\n");
			return 2;
		}
	}
	if (!cgkill || !floor_ || trials < 1 || trials > MAX_TRIALS || n_hogs < 0 ||
	    n_hogs > MAX_HOGS) {
		fprintf(stderr, "reap: --cgkill and --floor are needed; 1 to %d trials; 0 to %d "
			"hogs\n", MAX_TRIALS, MAX_HOGS);
		return 2;
	}
	n_cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (n_cpus < 1)
		n_cpus = 1;
	for (unsigned i = 0; i < n_sizes; i++)
		if (sizes[i] < 16 || sizes[i] + LIMIT_EXTRA_MIB > 4608) {
			fprintf(stderr, "reap: %u MiB: sizes are 16 to 4352 MiB (limit 4.5 GiB)\n",
				sizes[i]);
			return 2;
		}
	setup();
	atexit(cleanup);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	loadavg(load0, sizeof(load0));
	printf("## Memory back after a kill: process_mrelease (issue 18)%s\n\n",
	       n_hogs ? ": busy machine" : "");
	printf("- %d trials a size; contenders in turn within each trial; memory cgroup %s "
	       "(%s), limit the size + %d MiB; target %s\n", trials, mem, usage_file,
	       LIMIT_EXTRA_MIB, target);
	if (n_hogs)
		printf("- busy machine: %d CPU hogs (spinning, nice 0, SCHED_OTHER) on %d CPUs "
		       "throughout each trial, in their own cgroup %s (started before the "
		       "trial's first victim, killed through its cgroup.kill at its end)\n",
		       n_hogs, n_cpus, busy);
	printf("- load average at start: %s\n\n", load0);
	fflush(stdout);

	for (unsigned z = 0; z < n_sizes; z++) {
		static double v[5][N_CONTENDERS][MAX_TRIALS];
		char limit[32];

		snprintf(limit, sizeof(limit), "%llu",
			 (unsigned long long)(sizes[z] + LIMIT_EXTRA_MIB) * MIB);
		if (put(mem, limit_file, limit) < 0)
			die(limit_file);
		for (int t = 0; t < trials; t++) {
			if (n_hogs)
				busy_start();
			for (int c = 0; c < N_CONTENDERS; c++) {
				/* rotate the order from trial to trial */
				int k = (c + t) % N_CONTENDERS;
				unsigned long long avail0;
				struct sample s;
				pid_t pid;

				usleep(200000);	/* let the last one's aftermath settle */
				avail0 = mem_available();
				pid = victim(sizes[z]);
				s = run(k, cgkill, floor_, avail0);
				waitpid(pid, NULL, 0);
				v[0][k][t] = s.mem_ms;
				v[1][k][t] = s.exit_ms;
				v[2][k][t] = s.avail_ms;
				v[3][k][t] = s.machine_busy * 100;
				v[4][k][t] = s.hogs_cpus;
				fprintf(stderr, "reap: %u MiB trial %d %-34s memory %8.1f ms, exit %8.1f ms, "
					"MemAvailable %8.1f ms, CPUs busy %5.1f%%, hogs %.2f CPUs\n",
					sizes[z], t + 1, names[k], s.mem_ms, s.exit_ms, s.avail_ms,
					s.machine_busy * 100, s.hogs_cpus);
			}
			if (n_hogs)
				busy_stop();
		}
		printf("### %u MiB touched, limit %u MiB\n\n", sizes[z], sizes[z] + LIMIT_EXTRA_MIB);
		printf("| contender | memory back: median | p90 | worst | command exit: median | "
		       "p90 | worst | MemAvailable back: median | p90 | worst |\n");
		printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
		double med[N_CONTENDERS];

		for (int c = 0; c < N_CONTENDERS; c++) {
			printf("| %s", names[c]);
			for (int m = 0; m < 3; m++) {
				double md, p9, mx;
				int missed;

				stats(v[m][c], trials, &md, &p9, &mx, &missed);
				if (m == 0)
					med[c] = md;
				printf(" | %.1f | %.1f | %.1f%s", md, p9, mx,
				       missed ? " (some missed)" : "");
			}
			printf(" |\n");
		}
		printf("\nms from the start of the command; memory back: usage under %llu MiB. "
		       "cgkill without the reap / with it (medians, memory back): %.2fx; "
		       "floor / floor -m: %.2fx.\n\n", BACK_BYTES / MIB,
		       med[C_REAP] > 0 ? med[C_NOREAP] / med[C_REAP] : 0,
		       med[C_FLOOR_M] > 0 ? med[C_FLOOR] / med[C_FLOOR_M] : 0);
		printf("Load from the start of the command until the memory was back (median / "
		       "lowest / highest over the trials): share of all %d CPUs busy (/proc/stat)%s\n\n",
		       n_cpus, n_hogs ? "; CPUs' worth the hogs got (their cgroup's cpu.stat)" : "");
		printf("| contender | CPUs busy %% |%s\n|---|---|%s\n", n_hogs ? " hogs' CPUs |" : "",
		       n_hogs ? "---|" : "");
		for (int c = 0; c < N_CONTENDERS; c++) {
			printf("| %s", names[c]);
			for (int m = 3; m < 3 + (n_hogs ? 2 : 1); m++) {
				double md, p9, mx;
				int missed;

				stats(v[m][c], trials, &md, &p9, &mx, &missed);
				printf(m == 3 ? " | %.0f / %.0f / %.0f" : " | %.2f / %.2f / %.2f",
				       md, v[m][c][0], mx);
			}
			printf(" |\n");
		}
		printf("\n");
		fflush(stdout);
	}
	loadavg(load1, sizeof(load1));
	printf("- load average at the end: %s\n", load1);
	return 0;
}
