// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The loop backend on the real kernel: pids.max clamped while it runs and
 * put back (also when the backend fails half-way, as v1-freeze must thaw
 * when it does), clamped for SIGKILL only, the loop over trees on v1 pids
 * and on v2. Sentinels in the parent and in a sibling of every target must
 * survive.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgkill.h"
#include "support/cgfile.h"
#include "support/cmd.h"
#include "support/internals.h"
#include "support/kill.h"
#include "support/sandbox.h"
#include "support/scene.h"
#include "support/spawn.h"
#include "support/tap.h"

/* ---- pids.max ---- */

static void test_pids_restored(const char *pd)
{
	static const char *const limits[] = { "37", "max" };

	for (size_t i = 0; i < 2; i++) {
		enum { N = 6 };
		char name[64], buf[32];
		cgk_report *rep = NULL;
		struct scene s;
		pid_t pids[N];
		int r;

		snprintf(name, sizeof(name), "loop pids.max=%s", limits[i]);
		if (!scene_start_named(&s, pd, "pidsmax", name))
			goto out;
		if (!is_int(sb_write(s.target, "pids.max", limits[i]), 0, "%s: set", name) ||
		    !is_int(sb_spawn_n(N, SB_SLEEP, NULL, s.target, pids), 0, "%s: spawn", name))
			goto out;
		r = kill_wait(s.target, CGK_BACKEND_LOOP, SIGKILL, KILL_WAIT_MS, &rep);
		is_int(r, 0, "%s: cgk_kill returns 0", name);
		ok(cgk_report_emptied(rep), "%s: emptied", name);
		is_int(sb_count_killed(pids, N, SIGKILL, 5000), N, "%s: all died of SIGKILL", name);
		is_str(sb_first_line(s.target, "pids.max", buf, sizeof(buf)), limits[i],
		       "%s: pids.max restored", name);
		rep = cgk_report_free(rep);
out:
		scene_end(&s);
	}
}

/*
 * Run a backend's send() in a child process that has only two free file
 * descriptors left: the first pass fails with EMFILE after the backend has
 * clamped or frozen. Returns the child's exit status: -errno of send().
 */
static int send_starved(const char *path, const struct cgk_backend_ops *ops, int sig)
{
	pid_t pid = sb_fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct lib_run p;
		struct rlimit rl;
		int fd, r;

		if (lib_run_open(&p, path, 16) < 0)
			_exit(200);
		if (ops->probe(&p.run, sig) < 0)
			_exit(201);
		/* Fill every free descriptor up to 64 or more, then allow two more. */
		do
			fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		while (fd >= 0 && fd < 64);
		if (fd < 0 || getrlimit(RLIMIT_NOFILE, &rl) < 0)
			_exit(202);
		rl.rlim_cur = (rlim_t)fd + 3;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			_exit(203);
		r = ops->send(&p.run, sig);
		_exit(r < 0 && -r < 200 ? -r : r < 0 ? 199 : 0);
	}
	st = sb_wait_reaped(pid, 30000);
	return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_error_paths(const char *fz, const char *pd)
{
	enum { N = 4 };
	char buf[32];
	struct scene s;
	pid_t pids[N];
	int r;

	if (pd && scene_start_named(&s, pd, "err-loop", "loop fails half-way")) {
		const char *name = "loop fails half-way";

		if (is_int(sb_write(s.target, "pids.max", "41"), 0, "%s: pids.max=41", name) &&
		    is_int(sb_spawn_n(N, SB_SLEEP, NULL, s.target, pids), 0, "%s: spawn", name)) {
			r = send_starved(s.target, &cgk_backend_loop, SIGKILL);
			is_int(r, EMFILE, "%s: send fails with EMFILE", name);
			is_str(sb_first_line(s.target, "pids.max", buf, sizeof(buf)), "41",
			       "%s: pids.max restored", name);
		}
		scene_end(&s);
	} else if (!pd) {
		skip("no v1 pids hierarchy");
	}

	if (!fz) {
		skip("no v1 freezer hierarchy");
		return;
	}
	static const struct { int sig; bool user_frozen; const char *want; } cases[] = {
		{ SIGKILL, false, "THAWED" },
		{ SIGKILL, true, "THAWED" },
		{ SIGTERM, false, "THAWED" },
		{ SIGTERM, true, "FROZEN" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char name[96];

		snprintf(name, sizeof(name), "v1-freeze fails half-way (%s, %s)",
			 cases[i].sig == SIGKILL ? "KILL" : "TERM",
			 cases[i].user_frozen ? "target frozen by someone else" : "target thawed");
		if (!scene_start_named(&s, fz, "err-v1", name))
			goto next;
		if (!is_int(sb_spawn_n(N, SB_SLEEP, NULL, s.target, pids), 0, "%s: spawn", name))
			goto next;
		if (cases[i].user_frozen && !ok(sb_freeze_v1(s.target), "%s: frozen", name))
			goto next;
		r = send_starved(s.target, &cgk_backend_v1_freeze, cases[i].sig);
		is_int(r, EMFILE, "%s: send fails with EMFILE", name);
		is_str(sb_first_line(s.target, "freezer.state", buf, sizeof(buf)), cases[i].want,
		       "%s: freezer.state is %s", name, cases[i].want);
next:
		scene_end(&s);
	}
}

/* ---- loop: trees with sentinels ---- */

static void test_loop_tree(const char *box, const char *hier)
{
	static const char *const where[] = { "", "a", "a/b", "c" };
	cgk_report *rep = NULL;
	struct scene s;
	char name[64];
	pid_t pids[12];
	unsigned np = 0;
	int r;

	snprintf(name, sizeof(name), "loop/%s tree", hier);
	if (!box) {
		skip("%s: hierarchy missing", name);
		return;
	}
	if (!scene_start_named(&s, box, "looptree", name))
		goto out;
	for (size_t i = 0; i < 4; i++) {
		char *d = *where[i] ? sb_mkdir(s.target, where[i]) : strdup(s.target);

		r = d ? sb_spawn_n(3, SB_SLEEP, NULL, d, pids + np) : -ENOMEM;
		free(d);
		if (!is_int(r, 0, "%s: 3 in T/%s", name, where[i]))
			goto out;
		np += 3;
	}
	r = kill_wait(s.target, CGK_BACKEND_LOOP, SIGKILL, KILL_WAIT_MS, &rep);
	is_int(r, 0, "%s: cgk_kill returns 0", name);
	ok(cgk_report_emptied(rep), "%s: emptied", name);
	is_int(cgk_report_signalled(rep), np, "%s: %u signalled", name, np);
	is_int(cgk_report_cgroups(rep), 4, "%s: 4 cgroups", name);
	is_int(sb_count_killed(pids, np, SIGKILL, 5000), np, "%s: all died of SIGKILL", name);
	rep = cgk_report_free(rep);

	/* TERM: signalled once each, pids.max (if any) back as it was. */
	if (sb_spawn_n(4, SB_EXIT_ON_TERM, NULL, s.target, pids) == 0) {
		r = kill_wait(s.target, CGK_BACKEND_LOOP, SIGTERM, KILL_WAIT_MS, &rep);
		is_int(r, 0, "%s: TERM: cgk_kill returns 0", name);
		is_int(cgk_report_signalled(rep), 4, "%s: TERM: 4 signalled", name);
		is_int(sb_count_exited0(pids, 4, 5000), 4, "%s: TERM: all exited on TERM", name);
		rep = cgk_report_free(rep);
	}
out:
	scene_end(&s);
}

/* ---- the pids clamp is for SIGKILL only ---- */

struct fork_result {
	pid_t pid;
	int err;
};

static int fork_res_fd = -1;

static void fork_on_hup(int sig)
{
	struct fork_result res = { .pid = getpid() };
	pid_t c;

	(void)sig;
	c = fork();
	if (c == 0) {
		/* HUP is blocked here (we are in its handler): ignore it for good. */
		signal(SIGHUP, SIG_IGN);
		for (;;)
			pause();
	}
	res.err = c < 0 ? errno : 0;
	if (write(fork_res_fd, &res, sizeof(res)) < 0)
		_exit(5);
}

/* Polls pids.max of the target while cgkill runs: a clamp shows as "0". */
struct watch {
	int fd;
	volatile int stop;
	unsigned reads, zeros;
};

static void *watch_pids_max(void *arg)
{
	struct watch *w = arg;
	char b[32];

	while (!w->stop) {
		ssize_t n = pread(w->fd, b, sizeof(b) - 1, 0);

		w->reads++;
		if (n > 0 && b[0] == '0')
			w->zeros++;
	}
	return NULL;
}

/* The loop backend clamps pids.max for SIGKILL only: other signals may
 * make processes fork (a HUP handler), and must not make that fail. */
static void test_clamp(const char *v1box)
{
	enum { FORKERS = 6, IGNORERS = 200 };
	struct scene s;
	int fds[2] = { -1, -1 };
	char buf[32];

	if (!v1box) {
		skip("clamp: no v1 pids hierarchy");
		return;
	}
	if (!scene_start(&s, v1box, "clamp") || pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0)
		goto out;
	fork_res_fd = fds[1];
	{
		struct sb_proc hup_forker = { .cgroups = { s.target }, .handler_sig = SIGHUP,
					      .handler = fork_on_hup, .handler_flags = SA_RESTART };
		pid_t f[FORKERS];
		unsigned started = 0, forked = 0, failed = 0, got = 0;
		uint64_t deadline;
		struct cmd cli;
		struct watch w = { .fd = -1 };
		pthread_t th;
		bool watching;

		for (int i = 0; i < FORKERS; i++)
			started += (f[i] = sb_spawn(&hup_forker)) > 0;
		if (!is_int(started, FORKERS, "clamp: %d processes that fork on HUP in a v1 pids cgroup",
			    FORKERS))
			goto out;
		/* Listed after the forkers: the pass that signalled the forkers
		 * is still busy while they fork. */
		for (int i = 0; i < IGNORERS; i++)
			if (sb_spawn(&(struct sb_proc){ .cgroups = { s.target }, .ignore = { SIGHUP } }) < 0) {
				ok(false, "clamp: start %d processes that ignore HUP", IGNORERS);
				goto out;
			}
		{
			char *pm = sb_path(s.target, "pids.max");

			w.fd = pm ? open(pm, O_RDONLY | O_CLOEXEC) : -1;
			free(pm);
		}
		watching = w.fd >= 0 && pthread_create(&th, NULL, watch_pids_max, &w) == 0;
		cmd_run(&cli, CMD_MS, "-b", "loop", "-s", "HUP", s.target, NULL);
		is_int(cli.status, 0, "clamp: cgkill -b loop -s HUP exits 0");
		cmd_free(&cli);
		if (watching) {
			w.stop = 1;
			pthread_join(th, NULL);
			is_int(w.zeros, 0, "clamp: pids.max never read 0 during the HUP run (%u reads)",
			       w.reads);
		}
		if (w.fd >= 0)
			close(w.fd);
		deadline = sb_now_ms() + 5000;
		while (got < FORKERS && sb_now_ms() < deadline) {
			struct fork_result res;

			if (read(fds[0], &res, sizeof(res)) == (ssize_t)sizeof(res)) {
				got++;
				if (res.err)
					failed++, diag("clamp: the fork of %d failed: %s", (int)res.pid,
						       strerror(res.err));
				else
					forked++;
			} else {
				sb_sleep_ms(10);
			}
		}
		is_int(got, FORKERS, "clamp: every process got the HUP and reported its fork");
		is_int(forked, FORKERS, "clamp: every fork in the HUP handler succeeded (no pids clamp)");
		sb_read(s.target, "pids.max", buf, sizeof(buf));
		ok(!strncmp(buf, "max", 3), "clamp: pids.max is still max (%.*s)", (int)strcspn(buf, "\n"),
		   buf);
		for (int i = 0; i < FORKERS; i++)
			ok(sb_alive(f[i]), "clamp: forker %d is alive", i);
	}
	/* SIGKILL still contains a fork bomb (it lives under pids.max = 64). */
	{
		struct sb_proc bomb = { .what = SB_FORKBOMB, .cgroups = { s.target } };
		struct cmd cli;
		pid_t b;

		if (!ok(sb_write(s.target, "pids.max", "64") == 0, "clamp: pids.max = 64 on the target"))
			goto out;
		b = sb_spawn(&bomb);
		if (!ok(b > 0, "clamp: a fork bomb under pids.max"))
			goto out;
		sb_wait_count(s.target, 60, 3000);
		cmd_run(&cli, CMD_MS, "-b", "loop", "-s", "KILL", "--wait=10s", s.target, NULL);
		is_int(cli.status, 0, "clamp: cgkill -b loop -s KILL on the bomb exits 0 (%.*s)",
		       (int)strcspn(cli.err, "\n"), cli.err);
		cmd_free(&cli);
		is_int(sb_wait_empty(s.target, 5000), 0, "clamp: the bomb's cgroup is empty");
		sb_read(s.target, "pids.max", buf, sizeof(buf));
		ok(!strncmp(buf, "64\n", 3), "clamp: pids.max is back to 64 (%.*s)",
		   (int)strcspn(buf, "\n"), buf);
	}
out:
	if (fds[0] >= 0) {
		close(fds[0]);
		close(fds[1]);
	}
	fork_res_fd = -1;
	scene_end(&s);
}

int main(void)
{
	struct sb_boxes b;

	sb_start_v1(&b, 600);

	if (b.pd)
		test_pids_restored(b.pd);
	test_error_paths(b.fz, b.pd);
	test_loop_tree(b.pd, "v1-pids");
	test_loop_tree(b.v2, "v2");
	test_clamp(b.pd);

	return sb_finish_v1(&b);
}
