/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One timed run: a fresh workload in fresh cgroups, one contender, timed
 * from its start until our own watcher reads the subtree empty (not by the
 * contender's report); and where a contender that takes over 2 s waits.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

FILE *stall_log;
static unsigned seq;

/* Whether the /proc entry name is a task of a bomb: cgkb-bomb, or bash
 * (bash's own bomb). */
static bool bomb_task(const char *name)
{
	char path[64], comm[32];

	if (name[0] < '1' || name[0] > '9')
		return false;
	snprintf(path, sizeof(path), "/proc/%s/comm", name);
	return read_small(path, comm, sizeof(comm)) > 0 &&
	       (!strncmp(comm, "cgkb-bomb", 9) || !strcmp(comm, "bash\n"));
}

/* Where a contender that takes over 2 s waits: its kernel stack, its pc
 * and the mapping that holds it, and what the bomb's tasks are doing.
 * In a thread of its own: /proc/PID/maps waits for the mmap lock of a
 * process that may be stuck holding it, and the watcher must go on. */
struct capture {
	const struct workload *w;
	const struct contender *c;
	pid_t pid;
	double at_s;
};

static void *capture_stall(void *arg)
{
	struct capture *req = arg;
	const struct workload *w = req->w;
	const struct contender *c = req->c;
	pid_t pid = req->pid;
	double at_s = req->at_s;
	char *text = NULL;
	size_t text_len = 0;
	FILE *m = open_memstream(&text, &text_len);
	char path[64], buf[8192], line[512];
	unsigned long long pc = 0;
	unsigned state[128] = { 0 }, sampled = 0;
	struct { char fn[64]; unsigned n; } frames[16];
	unsigned n_top = 0;
	DIR *d;
	struct dirent *de;
	FILE *f;

	fprintf(m, "stall: %s, %s, pid %d, not empty after %.0f s\n", w->name, c->name, (int)pid, at_s);
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_small(path, buf, sizeof(buf)) > 0 && strrchr(buf, ')'))
		fprintf(m, "  state %c\n", strrchr(buf, ')')[2]);
	snprintf(path, sizeof(path), "/proc/%d/stack", (int)pid);
	if (read_small(path, buf, sizeof(buf)) > 0)
		fprintf(m, "  kernel stack:\n%s", buf);
	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	if (read_small(path, buf, sizeof(buf)) > 0) {
		char *last = strrchr(buf, ' ');

		buf[strcspn(buf, "\n")] = '\0';
		fprintf(m, "  /proc/PID/syscall: %s\n", buf);
		if (last)
			pc = strtoull(last + 1, NULL, 16);
	}
	/* The bomb: task states, and the top frame of up to 500 in D. */
	d = opendir("/proc");
	while (d && (de = readdir(d))) {
		if (!bomb_task(de->d_name))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		if (read_small(path, buf, sizeof(buf)) <= 0 || !strrchr(buf, ')'))
			continue;
		state[(unsigned char)strrchr(buf, ')')[2] & 127]++;
		if (strrchr(buf, ')')[2] != 'D' || sampled >= 500)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stack", de->d_name);
		if (read_small(path, buf, sizeof(buf)) <= 0)
			continue;
		sampled++;
		/* the first frame that is not a scheduler or lock primitive */
		for (char *save, *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			char fn[64];
			unsigned k;

			if (sscanf(l, "[<%*[^>]>] %63[^+]", fn) != 1 || strstr(fn, "schedule") ||
			    strstr(fn, "rwsem") || strstr(fn, "wait_bit") || strstr(fn, "io_schedule") ||
			    strstr(fn, "mutex") || strstr(fn, "lock"))
				continue;
			for (k = 0; k < n_top && strcmp(frames[k].fn, fn); k++)
				;
			if (k == n_top && n_top < 16)
				snprintf(frames[n_top++].fn, sizeof(frames[0].fn), "%s", fn);
			if (k < n_top)
				frames[k].n++;
			break;
		}
	}
	if (d)
		closedir(d);
	fprintf(m, "  bomb tasks: R %u, S %u, D %u, Z %u; in D (%u sampled), first frame past the lock:",
		  state['R'], state['S'], state['D'], state['Z'], sampled);
	for (unsigned k = 0; k < n_top; k++)
		fprintf(m, " %s %u%s", frames[k].fn, frames[k].n, k + 1 < n_top ? "," : "");
	fprintf(m, "\n");
	/* Last: it waits while the contender holds its mmap lock. */
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = pc ? fopen(path, "re") : NULL;
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi;

		if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && pc >= lo && pc < hi) {
			fprintf(m, "  pc %#llx in %s", pc, line);
			break;
		}
	}
	if (f)
		fclose(f);

	fclose(m);
	fputs(text, stderr);
	if (stall_log) {
		fputs(text, stall_log);
		fflush(stall_log);
	}
	free(text);
	free(req);
	return NULL;
}

static void capture_async(const struct workload *w, const struct contender *c, pid_t pid,
			  double at_s)
{
	struct capture *k = malloc(sizeof(*k));
	pthread_attr_t attr;
	pthread_t t;

	if (!k)
		return;
	*k = (struct capture){ w, c, pid, at_s };
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, capture_stall, k) != 0)
		free(k);
	pthread_attr_destroy(&attr);
}

static void scan_escapes(struct run *out)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	char rel[PATH_MAX];

	snprintf(rel, sizeof(rel), "0::%s/", top[H_V2] + strlen(mnt[H_V2]));
	if (!d)
		return;
	while ((de = readdir(d))) {
		char path[PATH_MAX], buf[4096];

		if (!bomb_task(de->d_name))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cgroup", de->d_name);
		if (read_small(path, buf, sizeof(buf)) > 0 && !strstr(buf, rel))
			out->escaped++;
	}
	closedir(d);
}

int run_one(const struct workload *w, const struct contender *c, struct run *out, bool hold)
{
	struct plan p = { .w = w };
	int pipefd[2], evfd = -1;
	char path[PATH_MAX], v2rel[PATH_MAX];
	long long mem0 = 0, memthr = 0;
	uint64_t t0, deadline, exit_at = 0, empty_at = 0;
	pid_t spawner_pid, cpid, daemon_pid = -1, inner_pid = -1;
	struct rusage ru = { 0 };
	bool exited = false, freed = false;
	int status = 0, r = 0, gofd[2] = { -1, -1 }, pidfd[2] = { -1, -1 };
	unsigned captures = 0;
	static const unsigned capture_at[] = { 2, 5, 10, 30 };
	cgk_options *lib_opts = NULL;

	*out = (struct run){ .status = -1 };
	seq++;
	for (int h = 0; h < H_N; h++) {
		/* A fork bomb gets a cpu cgroup of its own, as a service manager
		 * gives each service: else the killer competes with thousands of
		 * spinning tasks of equal weight. */
		bool used = h == H_V2 || h == H_PIDS || h == c->hier ||
			    (h == H_MEM && w->type == W_MEM) ||
			    (h == H_CPU && bomb_cpu && forks(w) && !w->plain);

		if (used && top[h][0])
			snprintf(p.dir[h], PATH_MAX, "%s/w%u", top[h], seq);
	}
	p.tree[c->hier] = true;
	for (int h = 0; h < H_N; h++)
		if (p.dir[h][0])
			mkdir_tree(&p, h);
	if (forks(w)) {
		char lim[32];

		snprintf(lim, sizeof(lim), "%u", w->a);
		if (!p.dir[H_PIDS][0] || write_at(p.dir[H_PIDS], "pids.max", lim) < 0 ||
		    read_num(p.dir[H_PIDS], "pids.max") != (long long)w->a) {
			fprintf(stderr, "bench: cannot set pids.max: no fork bomb\n");
			run_cleanup(&p);
			return -1;
		}
	}
	/* A running library, or the ordinary parent of the contender, starts
	 * before the bomb: nothing forks from us beside a libc-sharing bomb. */
	if (c->kind == C_LIBRUN || w->plain) {
		if (pipe2(gofd, O_CLOEXEC) < 0 || pipe2(pidfd, O_CLOEXEC) < 0)
			die("pipe: %m");
		daemon_pid = fork();
		if (daemon_pid < 0)
			die("fork: %m");
		if (daemon_pid == 0) {
			close(gofd[1]);
			close(pidfd[0]);
			if (c->kind == C_LIBRUN)
				lib_running(c, p.dir[c->hier], gofd[0], pidfd[1]);
			launcher(c, p.dir[c->hier], gofd[0], pidfd[1]);
		}
		close(gofd[0]);
		close(pidfd[1]);
		gofd[0] = pidfd[1] = -1;
		/* Ready (its pages in, its first call made) before the bomb. */
		{
			struct pollfd pfd = { .fd = pidfd[0], .events = POLLIN };
			struct started st;

			if (poll(&pfd, 1, 30000) != 1 || read(pidfd[0], &st, sizeof(st)) != sizeof(st))
				die("%s: the contender's parent did not get ready", c->name);
		}
		fcntl(pidfd[0], F_SETFL, O_NONBLOCK);
	}
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		die("pipe: %m");
	p.readyfd = pipefd[1];
	spawner_pid = fork();
	if (spawner_pid < 0)
		die("fork: %m");
	if (spawner_pid == 0) {
		close(pipefd[0]);
		fcntl(pipefd[1], F_SETFD, 0);
		spawner(&p);
	}
	close(pipefd[1]);
	p.readyfd = pipefd[0];
	if (wait_ready(&p, expected(w)) < 0) {
		fprintf(stderr, "bench: %s: workload did not come up\n", w->name);
		r = -1;
		goto out;
	}
	sleep_ms(is_bomb(w) || quick_mode ? 50 : 200);	/* settle */
	out->at_start = read_num(p.dir[H_PIDS], "pids.current");

	snprintf(path, sizeof(path), "%s/cgroup.events", p.dir[H_V2]);
	evfd = open(path, O_RDONLY | O_CLOEXEC);
	if (evfd < 0)
		die("%s: %m", path);
	if (p.dir[H_MEM][0]) {
		mem0 = read_num(p.dir[H_MEM], "memory.usage_in_bytes");
		memthr = mem0 / 20;
	}
	snprintf(v2rel, sizeof(v2rel), "%s", p.dir[H_V2] + strlen(mnt[H_V2]));

	if (hold) {
		printf("%s\n", p.dir[c->hier]);
		fflush(stdout);
		for (uint64_t end = now_ns() + 600000000000ULL; !stop && now_ns() < end;) {
			struct pollfd pfd = { .fd = evfd, .events = POLLPRI };

			if (populated(evfd) == 0)
				break;
			poll(&pfd, 1, 100);
		}
		goto out;
	}

	lib_opts = lib_options(c);
	t0 = now_ns();
	if (daemon_pid > 0) {
		cpid = daemon_pid;
		if (write(gofd[1], "x", 1) != 1)
			die("pipe: %m");
	} else {
		cpid = fork();
	}
	if (cpid < 0)
		die("fork: %m");
	if (cpid == 0) {
		if (!forks(w))
			sched_other();
		exec_contender(c, p.dir[c->hier], v2rel, lib_opts);
	}
	inner_pid = daemon_pid > 0 ? -1 : cpid;
	deadline = t0 + (w->plain ? deadline_s * 1000000000ULL : RUN_DEADLINE_NS);
	for (;;) {
		struct timespec ts = { 0, WATCH_NS };
		struct pollfd pfd = { .fd = evfd, .events = POLLPRI };
		int pop = populated(evfd);
		uint64_t t = now_ns();

		if (pop == 0 && !out->emptied) {
			out->emptied = true;
			empty_at = t;
		}
		if (memthr && !freed && read_num(p.dir[H_MEM], "memory.usage_in_bytes") <= memthr) {
			freed = true;
			out->freed_ms = (double)(t - t0) / 1e6;
		}
		if (!exited && wait4(cpid, &status, WNOHANG, &ru) == cpid) {
			exited = true;
			exit_at = t;
		}
		/* Times count from the contender's start, told by its parent
		 * (it may be told after the subtree emptied: times are kept
		 * as moments until the end). */
		if (inner_pid < 0 && pidfd[0] >= 0) {
			struct started st;

			if (read(pidfd[0], &st, sizeof(st)) == sizeof(st)) {
				inner_pid = st.pid;
				if (st.t0 > t0)
					t0 = st.t0;
			}
		}
		if (!out->emptied && inner_pid > 0 && t - t0 > STALL_NS)
			out->stalled = true;
		/* Where it waits, at 2, 5, 10 and 30 s (rows users meet). */
		if (!out->emptied && !exited && captures < 4 && inner_pid > 0 &&
		    t - t0 > capture_at[captures] * 1000000000ULL) {
			if (w->plain)
				capture_async(w, c, inner_pid > 0 ? inner_pid : cpid,
					      (double)(t - t0) / 1e9);
			captures++;
		}
		if (out->emptied && exited && (!memthr || freed))
			break;
		if (exited && !out->emptied && t > exit_at + GRACE_NS)
			break;
		if (t > deadline || stop)
			break;
		ppoll(&pfd, 1, &ts, NULL);
	}
	if (!exited) {
		/* Where a contender that never returned is stuck, for the log. */
		char stack[4096], where[64];

		snprintf(where, sizeof(where), "/proc/%d/stack", inner_pid > 0 ? inner_pid : cpid);
		if (read_small(where, stack, sizeof(stack)) > 0)
			fprintf(stderr, "bench: %s did not return; kernel stack:\n%s", c->name, stack);
		if (inner_pid > 0 && inner_pid != cpid)
			kill(inner_pid, SIGKILL);
		kill(cpid, SIGKILL);
		wait4(cpid, &status, 0, &ru);
		daemon_pid = -1;
	} else {
		out->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	}
	if (out->emptied)
		out->empty_ms = (double)(empty_at - t0) / 1e6;
	if (exited)
		out->exit_ms = (double)(exit_at - t0) / 1e6;
	out->cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
		      (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	out->maxrss_kb = ru.ru_maxrss;

	/* v1 contenders: the v1 lists must be empty too; if the kernel ever
	 * showed tasks there after populated 0, time to the empty lists. */
	if (out->emptied && c->hier != H_V2) {
		uint64_t until = now_ns() + 2000000000ULL;

		while (count_tree(p.dir[c->hier]) > 0 && now_ns() < until) {
			out->v1_lagged = true;
			sleep_ms(1);
		}
		if (out->v1_lagged)
			out->empty_ms = (double)(now_ns() - t0) / 1e6;
	}
	if (!out->emptied)
		out->left = count_tree(p.dir[H_V2]);
	if (is_bomb(w))
		scan_escapes(out);
out:
	cgk_options_free(lib_opts);
	if (daemon_pid > 0 && !exited) {
		/* told nothing (the workload did not come up) or stuck */
		kill(daemon_pid, SIGKILL);
		waitpid(daemon_pid, NULL, 0);
	}
	for (int i = 0; i < 2; i++) {
		if (gofd[i] >= 0)
			close(gofd[i]);
		if (pidfd[i] >= 0)
			close(pidfd[i]);
	}
	if (evfd >= 0)
		close(evfd);
	close(pipefd[0]);
	run_cleanup(&p);
	return r;
}
