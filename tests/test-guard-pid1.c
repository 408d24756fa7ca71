// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The PID 1 guard: from inside a pid namespace, a target that holds the
 * namespace's PID 1 is refused (exit 4), a forced dry run lists it, a
 * forced TERM reaches it (it has a handler), and a forced KILL cannot end
 * it (the kernel never lets a namespace's own members SIGKILL its init,
 * not even through cgroup.kill): it is reported as the survivor. From the
 * parent namespace the kill of the target works.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgkill.h"
#include "support/cgfile.h"
#include "support/cmd.h"
#include "support/kill.h"
#include "support/record.h"
#include "support/sandbox.h"
#include "support/scene.h"
#include "support/spawn.h"
#include "support/tap.h"

static char *box;		/* v2 sandbox */

struct pid1_arg {
	const char *target, *ctl;
};

struct pid1_out {
	int setup;
	pid_t g_host;		/* G as our namespace sees it (set by the parent) */
	int r_plain, refused_plain;
	int r_dry, dry_listed, dry_has_1;
	int cli_plain, cli_term, cli_kill;
	bool k_dead_after_term;
	char msg[512], kill_err[512];
};

static void pid1_worker(const struct pid1_arg *a, struct pid1_out *o, pid_t k)
{
	cgk_report *rep = NULL;
	struct cmd cli;

	if (sb_join(a->ctl) < 0) {
		o->setup = -errno;
		return;
	}
	o->r_plain = kill_opts(a->target, CGK_BACKEND_AUTO, SIGKILL, 0, 3000, NULL, &rep);
	o->refused_plain = cgk_report_refused(rep);
	snprintf(o->msg, sizeof(o->msg), "%.500s", cgk_report_message(rep));
	rep = cgk_report_free(rep);
	o->r_dry = kill_opts(a->target, CGK_BACKEND_AUTO, SIGKILL, CGK_DRY_RUN | CGK_FORCE, 3000,
			     NULL, &rep);
	o->dry_listed = (int)cgk_report_n_processes(rep, CGK_LIST_LISTED);
	o->dry_has_1 = rep_has_pid(rep, CGK_LIST_LISTED, 1) > 0;
	rep = cgk_report_free(rep);
	cmd_run(&cli, CMD_MS, a->target, NULL);
	o->cli_plain = cli.status;
	cmd_free(&cli);
	cmd_run(&cli, CMD_MS, "-f", "-s", "TERM", a->target, NULL);
	o->cli_term = cli.status;
	cmd_free(&cli);
	for (int i = 0; i < 300 && kill(k, 0) == 0; i++)
		usleep(10000);
	o->k_dead_after_term = kill(k, 0) < 0;
	cmd_run(&cli, CMD_MS, "-f", "--wait=1s", a->target, NULL);
	o->cli_kill = cli.status;
	snprintf(o->kill_err, sizeof(o->kill_err), "%.500s", cli.err);
	cmd_free(&cli);
}

static void pid1_child(void *argp, void *outp)
{
	struct pid1_arg *a = argp;
	struct pid1_out *o = outp;
	int p[2], err = 0;
	pid_t g;

	if (pipe(p) < 0 || (g = pidns_fork(&err)) < 0) {
		o->setup = -errno;
		return;
	}
	if (g == 0) {
		/* PID 1 of the new namespace, in the target, with its own /proc. */
		struct pid1_out res = { 0 };
		pid_t k, w;

		close(p[0]);
		if (err < 0 || sb_join(a->target) < 0) {
			res.setup = err < 0 ? err : -errno;
			if (write(p[1], &res, sizeof(res)) < 0)
				_exit(1);
			_exit(1);
		}
		rec_arm((const int[])REC_STRAY, false, false);
		k = fork();	/* another process in the target */
		if (k == 0) {
			signal(SIGTERM, SIG_DFL);
			for (;;)
				pause();
		}
		w = fork();
		if (w == 0) {
			signal(SIGTERM, SIG_DFL);
			pid1_worker(a, &res, k);
			if (write(p[1], &res, sizeof(res)) < 0)
				_exit(1);
			_exit(0);
		}
		close(p[1]);
		/* Reap, and stay alive as the namespace's init until killed
		 * from outside. */
		for (;;)
			if (wait(NULL) < 0 && errno == ECHILD)
				pause();
	}
	close(p[1]);
	{
		struct pollfd pfd = { .fd = p[0], .events = POLLIN };

		if (poll(&pfd, 1, 60000) <= 0 || read(p[0], o, sizeof(*o)) != sizeof(*o))
			o->setup = -ETIMEDOUT;
	}
	o->g_host = g;
}

static void test_pid1(void)
{
	struct scene s;
	struct pid1_out o;
	struct pid1_arg a;
	char *ctl = NULL;
	int r, last = 0;

	rec_drain();
	if (!scene_start(&s, box, "pid1"))
		goto out;
	ctl = sb_mkdir(s.parent, "C");
	a = (struct pid1_arg){ .target = s.target, .ctl = ctl };
	r = child_call(pid1_child, &a, &o, sizeof(o), 90000, NULL);
	if (!is_int(r, 0, "pid1: the namespace reports"))
		goto out;
	if (o.setup < 0) {
		skip("pid1: cannot make a pid namespace with its own /proc: %s", strerror(-o.setup));
		goto out;
	}
	ok(o.r_plain == -EPERM && o.refused_plain == CGK_GUARD_PID1,
	   "pid1: from inside the namespace, a target holding its PID 1 is refused (%s)", o.msg);
	ok(o.r_dry == 0 && o.dry_listed == 2 && o.dry_has_1,
	   "pid1: a forced dry run lists PID 1 and the other process (%d listed)", o.dry_listed);
	is_int(o.cli_plain, 4, "pid1: cgkill exits 4");
	is_int(o.cli_term, 0, "pid1: cgkill -f -s TERM proceeds");
	is_int(rec_take(&last), 1, "pid1: PID 1 got the TERM (it has a handler)");
	is_int(last, SIGTERM, "pid1: ... and it was TERM");
	ok(o.k_dead_after_term, "pid1: the other process in the target died of TERM");
	/* The kernel never lets a namespace's own members SIGKILL its init,
	 * not even through cgroup.kill: cgkill reports it as a survivor. */
	is_int(o.cli_kill, 3, "pid1: cgkill -f (KILL) from inside: PID 1 survives, exit 3 (%.*s)",
	       (int)strcspn(o.kill_err, "\n"), o.kill_err);
	{
		bool listed = false;

		/* a row of the survivors' table that starts with PID 1 */
		for (const char *l = o.kill_err; l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
			int pid;

			listed |= *l == ' ' && sscanf(l, "%d", &pid) == 1 && pid == 1;
		}
		ok(listed, "pid1: ... and PID 1 is listed as the survivor");
	}
	ok(o.g_host > 0 && sb_alive(o.g_host), "pid1: the namespace's init is alive");
	{
		cgk_report *rep = NULL;

		r = kill_opts(s.target, CGK_BACKEND_AUTO, SIGKILL, 0, 3000, NULL, &rep);
		is_int(r, 0, "pid1: from the parent namespace the kill of the target works");
		rep = cgk_report_free(rep);
		/* Not our tracked child (it was reparented to us): poll. */
		for (int i = 0; i < 500 && sb_alive(o.g_host); i++)
			sb_sleep_ms(10);
		ok(!sb_alive(o.g_host), "pid1: the namespace's init died");
	}
out:
	free(ctl);
	scene_end(&s);
}

int main(void)
{
	box = sb_start(300);
	rec_init();

	test_pid1();

	return sb_finish(box);
}
