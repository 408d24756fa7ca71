/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sandbox: the cgroup hierarchies there are, a sandbox top in each
 * (cgkill-bench.PID, below our own cgroup), the cgroups of every run below
 * those tops, and their removal with whatever is in them. Nothing here
 * signals anything outside the sandbox.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

const char *const hname[H_N] = { "v2", "freezer", "pids", "memory", "cpu" };
static const char *const hctl[H_N] = { NULL, "freezer", "pids", "memory", "cpu" };
char mnt[H_N][PATH_MAX];
char top[H_N][PATH_MAX];
char cpu_home[PATH_MAX];

static void find_mounts(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[8192];

	if (!f)
		die("cannot read /proc/self/mountinfo");
	while (fgets(line, sizeof(line), f)) {
		char point[PATH_MAX], *sep = strstr(line, " - ");
		char fstype[64], source[256], opts[2048];

		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", point) != 1 ||
		    sscanf(sep + 3, "%63s %255s %2047s", fstype, source, opts) != 3)
			continue;
		if (strcmp(fstype, "cgroup2") == 0 && !mnt[H_V2][0])
			snprintf(mnt[H_V2], PATH_MAX, "%s", point);
		if (strcmp(fstype, "cgroup"))
			continue;
		for (int h = H_FRZ; h < H_N; h++) {
			char *tok, *save, o[2048];

			snprintf(o, sizeof(o), "%s", opts);
			for (tok = strtok_r(o, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
				if (strcmp(tok, hctl[h]) == 0 && !mnt[h][0])
					snprintf(mnt[h], PATH_MAX, "%s", point);
		}
	}
	fclose(f);
}

/* Our own cgroup in a v1 hierarchy, from /proc/self/cgroup. */
static void own_cgroup(const char *ctl, char *out, size_t size)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[4096];

	snprintf(out, size, "/");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;

		if (!b)
			continue;
		*b = '\0';
		b[strcspn(b + 1, "\n") + 1] = '\0';
		for (char *tok = strtok(a + 1, ","); tok; tok = strtok(NULL, ","))
			if (strcmp(tok, ctl) == 0)
				snprintf(out, size, "%s", b + 1);
	}
	fclose(f);
}

void sandbox_setup(void)
{
	find_mounts();
	if (!mnt[H_V2][0] || access(mnt[H_V2], W_OK) < 0)
		die("no writable cgroup v2 mount");
	if (mnt[H_CPU][0]) {
		char own[PATH_MAX];

		own_cgroup(hctl[H_CPU], own, sizeof(own));
		snprintf(cpu_home, sizeof(cpu_home), "%s%s", mnt[H_CPU], strcmp(own, "/") ? own : "");
	}
	for (int h = 0; h < H_N; h++) {
		char own[PATH_MAX] = "";

		if (!mnt[h][0])
			continue;
		if (h != H_V2)
			own_cgroup(hctl[h], own, sizeof(own));
		snprintf(top[h], PATH_MAX, "%s%s/cgkill-bench.%d", mnt[h],
			 strcmp(own, "/") ? own : "", getpid());
		if (mkdir(top[h], 0755) < 0) {
			fprintf(stderr, "bench: mkdir %s: %m; %s hierarchy not used\n", top[h], hname[h]);
			top[h][0] = mnt[h][0] = '\0';
		}
	}
	if (!top[H_PIDS][0])
		fprintf(stderr, "bench: no v1 pids hierarchy: fork-bomb rows skipped\n");
}

/* The harness and every contender it forks get a high cpu weight, as a
 * service manager gives its killer: a freshly forked contender must not
 * wait for a CPU behind a bomb before it can even exec. */
bool harness_priority(void)
{
	struct sched_param fifo = { .sched_priority = 1 };
	char dir[PATH_MAX];
	bool realtime;

	if (!bomb_cpu || !top[H_CPU][0])
		return false;
	snprintf(dir, sizeof(dir), "%s/harness", top[H_CPU]);
	if ((mkdir(dir, 0755) == 0 || errno == EEXIST) &&
	    (write_at(dir, "cpu.shares", "262144") < 0 || write_at(dir, "cgroup.procs", "0") < 0))
		fprintf(stderr, "bench: no high cpu weight for the harness: %m\n");
	/* Real-time priority too: with the weight alone a contender once went
	 * unscheduled for 60 s before its exec, and the watcher must read
	 * populated 0 when it happens. The group needs a real-time budget of
	 * its own first. */
	write_at(top[H_CPU], "cpu.rt_runtime_us", "900000");
	write_at(dir, "cpu.rt_runtime_us", "900000");
	realtime = sched_setscheduler(0, SCHED_FIFO, &fifo) == 0;
	if (!realtime)
		fprintf(stderr, "bench: no real-time priority for the harness: %m\n");
	return realtime;
}

static void thaw_visit(const char *dir, void *arg)
{
	char path[PATH_MAX], buf[32];

	(void)arg;
	snprintf(path, sizeof(path), "%s/freezer.state", dir);
	if (read_small(path, buf, sizeof(buf)) > 0 && strncmp(buf, "THAWED", 6))
		write_file(path, "THAWED");
	snprintf(path, sizeof(path), "%s/cgroup.freeze", dir);
	if (read_small(path, buf, sizeof(buf)) > 0 && buf[0] == '1')
		write_file(path, "0");
}

static void rmdir_visit(const char *dir, void *arg)
{
	unsigned delay = 1;
	uint64_t deadline = now_ns() + 3000000000ULL;

	(void)arg;
	while (rmdir(dir) < 0 && errno == EBUSY && now_ns() < deadline) {
		sleep_ms(delay);
		if (delay < 64)
			delay *= 2;
	}
}

/* dirs: one directory per hierarchy ("" unused), the v2 one always set:
 * a run's cgroups or the sandbox tops. */
static void thaw_all(char (*dirs)[PATH_MAX])
{
	for (int h = 0; h < H_N; h++)
		if (dirs[h][0])
			walk(dirs[h], false, thaw_visit, NULL);
}

/* Thaw, then cgroup.kill the v2 subtree (thawing again, since a v1 freezer
 * may hold what was killed) until it is empty, 30 s at most. */
static void kill_all(char (*dirs)[PATH_MAX])
{
	uint64_t deadline = now_ns() + 30000000000ULL;
	char ev[PATH_MAX];
	int evfd;

	thaw_all(dirs);
	snprintf(ev, sizeof(ev), "%s/cgroup.events", dirs[H_V2]);
	evfd = open(ev, O_RDONLY | O_CLOEXEC);
	while (evfd >= 0 && populated(evfd) == 1 && now_ns() < deadline) {
		struct pollfd pfd = { .fd = evfd, .events = POLLPRI };

		write_at(dirs[H_V2], "cgroup.kill", "1");
		thaw_all(dirs);
		poll(&pfd, 1, 200);
	}
	if (evfd >= 0)
		close(evfd);
}

/* rmdir bottom-up, retrying while the kernel still frees a cgroup. */
static void remove_all(char (*dirs)[PATH_MAX])
{
	for (int h = H_N - 1; h >= 0; h--)
		if (dirs[h][0])
			walk(dirs[h], true, rmdir_visit, NULL);
}

/* Remove the sandbox, after the pid namespace (and so every process the
 * harness made) is gone. */
void sandbox_cleanup(void)
{
	kill_all(top);
	remove_all(top);
}

void mkdir_tree(const struct plan *p, int h)
{
	char path[PATH_MAX];
	const struct workload *w = p->w;

	if (mkdir(p->dir[h], 0755) < 0)
		die("mkdir %s: %m", p->dir[h]);
	if (!p->tree[h])
		return;
	if (w->type == W_WIDE)
		for (unsigned i = 0; i < w->a; i++) {
			snprintf(path, sizeof(path), "%s/c%u", p->dir[h], i);
			if (mkdir(path, 0755) < 0)
				die("mkdir %s: %m", path);
		}
	if (w->type == W_DEEP) {
		snprintf(path, sizeof(path), "%s", p->dir[h]);
		for (unsigned i = 0; i < w->a; i++) {
			strcat(path, "/d");
			if (mkdir(path, 0755) < 0)
				die("mkdir %s: %m", path);
		}
	}
}

/* Kill whatever is left of a run, thaw, reap, remove its cgroups. */
void run_cleanup(struct plan *p)
{
	uint64_t deadline;

	kill_all(p->dir);
	/* Reap: the workload's orphans are ours (we are pid 1 here). */
	deadline = now_ns() + 5000000000ULL;
	for (;;) {
		pid_t r = waitpid(-1, NULL, WNOHANG);

		if (r < 0 || now_ns() > deadline)
			break;
		if (r == 0)
			sleep_ms(1);
	}
	remove_all(p->dir);
}
