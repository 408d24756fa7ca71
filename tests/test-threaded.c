// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Threads and threaded cgroups: a threaded cgroup is refused as a target
 * (EOPNOTSUPP, a clear message) and nothing is signalled; its domain is
 * killed, also a process whose threads, the leader included, sit in a
 * threaded child (whose cgroup.procs cannot be read: the domain lists it);
 * and on v1, a process is signalled only when its leader is in the target,
 * not when one of its other threads is.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgkill.h"
#include "support/cgfile.h"
#include "support/cmd.h"
#include "support/kill.h"
#include "support/sandbox.h"
#include "support/scene.h"
#include "support/spawn.h"
#include "support/tap.h"

static char *box;		/* the v2 sandbox */

/* name, name/S (a sibling for a sentinel), name/X (the threaded domain) and
 * name/X/T (left for the caller to make threaded). */
struct threaded_tree {
	char *p, *s, *x, *t;
};

static bool threaded_tree_make(const char *name, struct threaded_tree *tt)
{
	char sub[64];

	tt->p = sb_mkdir(box, name);
	snprintf(sub, sizeof(sub), "%s/S", name);
	tt->s = sb_mkdir(box, sub);
	snprintf(sub, sizeof(sub), "%s/X", name);
	tt->x = sb_mkdir(box, sub);
	snprintf(sub, sizeof(sub), "%s/X/T", name);
	tt->t = sb_mkdir(box, sub);
	return tt->p && tt->s && tt->x && tt->t;
}

static void threaded_tree_drop(struct threaded_tree *tt)
{
	if (tt->p)
		sb_destroy(tt->p);
	free(tt->p);
	free(tt->s);
	free(tt->x);
	free(tt->t);
}

static void test_threaded(void)
{
	static const enum cgk_backend backends[] = {
		CGK_BACKEND_AUTO, CGK_BACKEND_KERNEL, CGK_BACKEND_FREEZE,
	};
	struct threaded_tree tt;
	bool made = threaded_tree_make("threaded", &tt);
	char *p = tt.p, *s = tt.s, *x = tt.x, *t = tt.t;
	struct sb_proc mt = { .what = SB_THREADS, .cgroups = { x }, .threads = 4 };
	struct sb_sentinels sent;
	char buf[64], tids[32];
	pid_t pid, tid;
	int r;

	if (!ok(made, "threaded: create the cgroups"))
		goto out;
	r = sb_write(t, "cgroup.type", "threaded");
	if (!is_int(r, 0, "threaded: make %s threaded", t))
		goto out;
	sb_read(t, "cgroup.type", buf, sizeof(buf));
	is_str(buf, "threaded\n", "threaded: cgroup.type reads threaded");
	sb_sentinels_start(&sent, p, s);
	pid = sb_spawn(&mt);
	if (!ok(pid > 0, "threaded: a process with 4 threads in the threaded domain"))
		goto out;
	sb_sleep_ms(20);	/* let the threads start */
	tid = proc_other_tid(pid);
	snprintf(tids, sizeof(tids), "%d", (int)tid);
	ok(tid > 0 && sb_write(t, "cgroup.threads", tids) == 0,
	   "threaded: thread %d moved into the threaded cgroup", (int)tid);

	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++) {
		cgk_report *rep = NULL;
		const char *bn = cgk_backend_name(backends[i]);

		r = kill_opts(t, backends[i], SIGKILL, 0, KILL_WAIT_MS, NULL, &rep);
		is_int(r, -EOPNOTSUPP, "threaded (%s): cgk_kill returns -EOPNOTSUPP", bn);
		if (!ok(strstr(cgk_report_message(rep), "threaded") && strstr(cgk_report_message(rep), t),
			"threaded (%s): the message names the cgroup and says threaded", bn))
			diag("message: %s", cgk_report_message(rep));
		is_int(cgk_report_signalled(rep), 0, "threaded (%s): nothing signalled", bn);
		ok(sb_alive(pid), "threaded (%s): the threaded process is alive", bn);
		rep = cgk_report_free(rep);
	}
	cmd_error_is(t, "EOPNOTSUPP", 1, "on a threaded cgroup");
	ok(sb_alive(pid), "threaded (cgkill): the threaded process is alive");
	sb_sentinels_check(&sent, "threaded");
out:
	threaded_tree_drop(&tt);
}

/*
 * The domain of a threaded subtree lists in cgroup.procs the processes of
 * the whole subtree, also one whose leader sits in a threaded child (whose
 * own list cannot be read). Killing the domain must reach it, although its
 * leader's cgroup is not the domain: the membership check by cgroup id
 * (PIDFD_GET_INFO) must fall back to the list.
 */
static void test_threaded_domain(void)
{
	static const enum cgk_backend backends[] = { CGK_BACKEND_FREEZE, CGK_BACKEND_LOOP };

	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++) {
		const char *bn = cgk_backend_name(backends[i]);
		struct threaded_tree tt;
		bool made = threaded_tree_make("tdomain", &tt);
		struct sb_proc mt = { .what = SB_THREADS, .cgroups = { tt.x }, .threads = 4 };
		cgk_report *rep = NULL;
		struct sb_sentinels sent;
		char leader[32];
		pid_t pid;
		int r;

		if (!ok(made && sb_write(tt.t, "cgroup.type", "threaded") == 0,
			"threaded domain (%s): a domain with a threaded child", bn))
			goto next;
		sb_sentinels_start(&sent, tt.p, tt.s);
		pid = sb_spawn(&mt);
		if (!ok(pid > 0, "threaded domain (%s): a process with 4 threads", bn))
			goto next;
		snprintf(leader, sizeof(leader), "%d", (int)pid);
		if (!is_int(sb_write(tt.t, "cgroup.threads", leader), 0,
			    "threaded domain (%s): its leader moved into the threaded child", bn))
			goto next;
		r = kill_opts(tt.x, backends[i], SIGKILL, 0, KILL_WAIT_MS, NULL, &rep);
		is_int(r, 0, "threaded domain (%s): cgk_kill returns 0 (%s)", bn,
		       cgk_report_message(rep));
		ok(cgk_report_emptied(rep) && cgk_report_signalled(rep) == 1,
		   "threaded domain (%s): emptied, 1 process signalled (%u)", bn,
		   cgk_report_signalled(rep));
		ok(sb_killed_by(pid, SIGKILL, 5000), "threaded domain (%s): the process died of SIGKILL",
		   bn);
		sb_sentinels_check(&sent, "threaded domain");
next:
		rep = cgk_report_free(rep);
		threaded_tree_drop(&tt);
	}
}

/* A process whose threads, the leader included, sit in a threaded child of
 * the target, where cgroup.procs cannot be read: the domain lists it. */
static void test_threaded_child(void)
{
	struct scene s;
	char *th = NULL;

	if (!scene_start(&s, box, "threaded"))
		goto out;
	for (size_t b = 0; b < N_V2_BACKENDS; b++) {
		const char *bn = cgk_backend_name(v2_backends[b]);
		struct sb_proc p = { .what = SB_THREADS, .threads = 4, .cgroups = { s.target } };
		cgk_report *rep = NULL;
		char task[64], tids[64];
		unsigned moved = 0;
		pid_t pid;
		DIR *d;
		int r;

		if (!th) {
			th = sb_mkdir(s.target, "th");
			if (!ok(th && sb_write(th, "cgroup.type", "threaded") == 0,
				"threaded: a threaded child cgroup"))
				break;
		}
		pid = sb_spawn(&p);
		if (!ok(pid > 0, "threaded %s: a process with 4 more threads in the target", bn))
			break;
		snprintf(task, sizeof(task), "/proc/%d/task", (int)pid);
		d = opendir(task);
		for (struct dirent *e; d && (e = readdir(d));) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(tids, sizeof(tids), "%.20s", e->d_name);
			moved += sb_write(th, "cgroup.threads", tids) == 0;
		}
		if (d)
			closedir(d);
		is_int(moved, 5, "threaded %s: all 5 threads moved into the threaded child", bn);
		r = kill_opts(s.target, v2_backends[b], SIGKILL, 0, KILL_WAIT_MS, NULL, &rep);
		is_int(r, 0, "threaded %s: cgk_kill returns 0 (%s)", bn, cgk_report_message(rep));
		ok(sb_killed_by(pid, SIGKILL, 3000), "threaded %s: the process died", bn);
		rep = cgk_report_free(rep);
	}
	{
		cgk_report *rep = NULL;
		int r = th ? kill_opts(th, CGK_BACKEND_AUTO, SIGKILL, 0, 1000, NULL, &rep) : 0;

		if (th) {
			is_int(r, -EOPNOTSUPP, "threaded: the threaded child itself is refused: %s",
			       cgk_report_message(rep));
			rep = cgk_report_free(rep);
		}
	}
out:
	free(th);
	scene_end(&s);
}

/* ---- v1: membership by the leader's tid ---- */

static void test_tasks_on(enum sb_hier h, const enum cgk_backend *bs, unsigned nb)
{
	char *v1box = sb_create(h), name[64], buf[16];
	struct scene s;

	snprintf(name, sizeof(name), "tasks %s", sb_hier_name(h));
	if (!v1box) {
		ok(false, "%s: create a sandbox: %s", name, strerror(errno));
		return;
	}
	if (!scene_start(&s, v1box, "thr"))
		goto out;
	for (unsigned b = 0; b < nb; b++) {
		const char *bn = cgk_backend_name(bs[b]);
		struct sb_proc p = { .what = SB_THREADS, .threads = 3, .cgroups = { s.sibling } };
		cgk_report *rep = NULL;
		struct cmd cli;
		char tid[32] = "";
		pid_t pid = sb_spawn(&p);
		int r;

		if (!ok(pid > 0, "%s %s: a process with 3 more threads in the sibling A", name, bn))
			break;
		if (proc_other_tid(pid) > 0)
			snprintf(tid, sizeof(tid), "%d", (int)proc_other_tid(pid));
		if (!ok(tid[0] && sb_write(s.target, "tasks", tid) == 0,
			"%s %s: one non-leader thread (%s) moved into the target B", name, bn, tid))
			break;
		ok(sb_member(s.target, pid) && sb_member(s.sibling, pid),
		   "%s %s: v1 cgroup.procs of both A and B list the process", name, bn);

		r = kill_opts(s.target, bs[b], SIGKILL, CGK_DRY_RUN, 0, NULL, &rep);
		note("%s %s: a dry run returns %d and lists %zu process(es) (it goes by cgroup.procs)",
		     name, bn, r, cgk_report_n_processes(rep, CGK_LIST_LISTED));
		rep = cgk_report_free(rep);

		r = kill_opts(s.target, bs[b], SIGKILL, 0, 300, NULL, &rep);
		note("%s %s: cgk_kill returns %d, %u signalled: %s", name, bn, r,
		     cgk_report_signalled(rep), cgk_report_message(rep));
		ok(r == 0 || r == -ETIMEDOUT, "%s %s: cgk_kill returns 0 or ETIMEDOUT (%d)", name, bn, r);
		is_int(cgk_report_signalled(rep), 0, "%s %s: nothing signalled", name, bn);
		rep = cgk_report_free(rep);
		sb_sleep_ms(100);
		sb_reap();
		ok(sb_alive(pid), "%s %s: the process whose leader is in A is alive", name, bn);
		cmd_run(&cli, CMD_MS, "-b", bn, "--wait=300ms", s.target, NULL);
		ok(cli.status == 0 || cli.status == 3, "%s %s: cgkill -b %s exits 0 or 3 (%d)", name,
		   bn, bn, cli.status);
		cmd_free(&cli);
		sb_sleep_ms(100);
		sb_reap();
		ok(sb_alive(pid), "%s %s: ... and the command left it alive too", name, bn);
		if (h == SB_V1_FREEZER) {
			sb_read(s.target, "freezer.state", buf, sizeof(buf));
			ok(strncmp(buf, "THAWED", 6) == 0, "%s %s: B is thawed (%.*s)", name, bn,
			   (int)strcspn(buf, "\n"), buf);
		}
		kill(pid, SIGKILL);
		sb_killed_by(pid, SIGKILL, 3000);
	}
out:
	scene_end(&s);
	ok(sb_destroy(v1box) == 0, "%s: sandbox removed", name);
	free(v1box);
}

static void test_tasks(void)
{
	static const enum cgk_backend pids_bs[] = { CGK_BACKEND_LOOP };
	static const enum cgk_backend frz_bs[] = { CGK_BACKEND_V1_FREEZE, CGK_BACKEND_LOOP };

	if (sb_mount(SB_V1_PIDS))
		test_tasks_on(SB_V1_PIDS, pids_bs, 1);
	else
		skip("tasks: no v1 pids hierarchy");
	if (sb_mount(SB_V1_FREEZER))
		test_tasks_on(SB_V1_FREEZER, frz_bs, 2);
	else
		skip("tasks: no v1 freezer hierarchy");
}

int main(void)
{
	box = sb_start(300);

	test_threaded();
	test_threaded_domain();
	test_threaded_child();
	test_tasks();

	return sb_finish(box);
}
