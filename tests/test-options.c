// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The options object of the library: what it refuses (a number that is not
 * a signal, a backend or flag it does not know), before anything can be
 * signalled; any number of escalation steps, all sent in order; and
 * cgk_kill_fd() on directories that are not cgroups. A sleeper beside every
 * call must be alive afterwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgkill.h"
#include "support/cgfile.h"
#include "support/kill.h"
#include "support/sandbox.h"
#include "support/spawn.h"
#include "support/tap.h"

#define STEPS 20

static char *box;		/* v2 sandbox */

/* Invalid options are refused before anything is signalled. */
static void test_refused(const char *c, pid_t pid)
{
	cgk_options *o = NULL;
	cgk_report *rep = NULL;
	int r;

	if (!is_int(cgk_options_new(&o), 0, "options: cgk_options_new"))
		return;
	is_int(cgk_options_set_signal(o, 0), -EINVAL, "signal 0: -EINVAL");
	is_int(cgk_options_set_signal(o, 1000), -EINVAL, "signal 1000: -EINVAL");
	is_int(cgk_options_set_backend(o, (enum cgk_backend)(CGK_BACKEND_LOOP + 1)), -EINVAL,
	       "an unknown backend: -EINVAL");
	is_int(cgk_options_set_flags(o, 1u << 30), -EINVAL, "an unknown flag: -EINVAL");
	is_int(cgk_options_add_escalation(o, 100, 0), -EINVAL, "an escalation to signal 0: -EINVAL");
	/* What was refused changed nothing: still SIGKILL, which a dry run
	 * does not send. */
	is_int(cgk_options_set_flags(o, CGK_DRY_RUN), 0, "options: the dry run flag is taken");
	is_int(cgk_kill(c, o, &rep), 0, "options: a dry run with what is left works");
	is_int(cgk_report_n_processes(rep, CGK_LIST_LISTED), 1, "options: ... and lists the sleeper");
	rep = cgk_report_free(rep);
	ok(cgk_options_free(o) == NULL && cgk_options_free(NULL) == NULL,
	   "options: cgk_options_free returns NULL, also for NULL");

	o = opts_new(CGK_BACKEND_KERNEL, SIGTERM, 0, KILL_WAIT_MS, NULL);
	r = cgk_kill(c, o, &rep);
	ok(r < 0, "the kernel backend with SIGTERM fails (%s)", cgk_report_message(rep));
	rep = cgk_report_free(rep);
	cgk_options_free(o);
	ok(sb_alive(pid), "options: the sleeper is alive");
}

/* No limit on escalations (there was one of 8): every step is sent, in
 * order. SIGCONT is harmless to the sleeper, which outlives them all. */
static void test_many_escalations(const char *c, pid_t pid)
{
	cgk_options *o = opts_new(CGK_BACKEND_FREEZE, SIGCONT, 0, 10, NULL);
	cgk_report *rep = NULL;
	unsigned added = 0, conts = 0;
	int r;

	for (int i = 0; i < STEPS; i++)
		added += cgk_options_add_escalation(o, 10, i == STEPS - 1 ? SIGWINCH : SIGCONT) == 0;
	is_int(added, STEPS, "%d escalations: accepted", STEPS);
	r = cgk_kill(c, o, &rep);
	is_int(r, -ETIMEDOUT, "%d escalations: the sleeper outlives them, ETIMEDOUT (%s)", STEPS,
	       cgk_report_message(rep));
	is_int(cgk_report_n_signals(rep), STEPS + 1, "%d escalations: all %d signals sent", STEPS,
	       STEPS + 1);
	for (size_t i = 0; i < STEPS; i++)
		conts += rep_signal(rep, i) == SIGCONT;
	ok(conts == STEPS && rep_signal(rep, STEPS) == SIGWINCH,
	   "%d escalations: in the order given (the last one WINCH)", STEPS);
	rep = cgk_report_free(rep);
	cgk_options_free(o);
	ok(sb_alive(pid), "%d escalations: the sleeper is alive", STEPS);
}

/* cgk_kill_fd on things that are not cgroups. */
static void test_kill_fd(pid_t pid)
{
	cgk_report *rep = NULL;
	int fd = open("/dev/shm", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r = cgk_kill_fd(fd, NULL, &rep);

	ok(r < 0, "cgk_kill_fd on a tmpfs directory fails (%s)", cgk_report_message(rep));
	rep = cgk_report_free(rep);
	if (fd >= 0)
		close(fd);
	ok(cgk_kill_fd(-1, NULL, &rep) < 0, "cgk_kill_fd(-1) fails");
	rep = cgk_report_free(rep);
	ok(sb_alive(pid), "options: the sleeper is alive after cgk_kill_fd");
}

int main(void)
{
	char *c;
	pid_t pid;

	box = sb_start(120);
	c = sb_mkdir(box, "options");
	if (!ok(c != NULL, "options: create the cgroup"))
		return done_testing();
	pid = sb_sleeper(c);

	test_refused(c, pid);
	test_many_escalations(c, pid);
	test_kill_fd(pid);

	free(c);
	return sb_finish(box);
}
