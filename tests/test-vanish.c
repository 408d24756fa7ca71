// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A target removed the moment it empties, as service managers do: SIGKILL
 * ends frozen tasks, so under the freeze backend the cgroup can empty, and
 * be removed, before cgkill thaws it; and SIGKILL passes once before the
 * freeze (v2 and v1), so it can be gone before the freeze is written. Both
 * are success, not "cannot freeze" or "cannot thaw".
 *
 * A remover process waits for "populated 0" and removes the cgroup at once;
 * the kill must still return 0 with the subtree reported empty. To make
 * the race go the remover's way every time, everything shares one CPU and
 * the killer runs SCHED_IDLE: each process it signals runs its exit at
 * once, and the remover, spinning on cgroup.events, runs before the killer
 * gets the CPU back to thaw.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgkill.h"
#include "sandbox.h"
#include "tap.h"

#define ROUNDS 4
#define PROCS 50

struct outcome {
	int r;
	bool emptied;
	unsigned signalled;
	char message[sizeof(((struct cgk_report *)0)->message)];
};

/* Fork a process that removes dir as soon as it is empty (v2: populated 0;
 * v1: an empty cgroup.procs); its pid. */
static pid_t start_remover(const char *dir, bool v2)
{
	char events[4096];
	int fd;
	pid_t pid;

	snprintf(events, sizeof(events), "%s/%s", dir, v2 ? "cgroup.events" : "cgroup.procs");
	fd = open(events, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	pid = sb_fork();
	if (pid == 0) {
		char buf[256];

		/* Spinning, not poll(): the kernel delays event notifications. */
		for (uint64_t end = sb_now_ms() + 20000; sb_now_ms() < end;) {
			ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

			if (n < 0 || (n == 0 && v2))
				_exit(1);
			buf[n] = '\0';
			if (v2 ? strstr(buf, "populated 0") != NULL : n == 0)
				_exit(rmdir(dir) == 0 ? 0 : 2);
		}
		_exit(3);
	}
	close(fd);
	return pid;
}

/* cgk_kill in a SCHED_IDLE child; its outcome through a pipe. */
static int run_killer(const char *target, const struct cgk_options *o, struct outcome *res)
{
	int p[2];
	pid_t pid;
	ssize_t n;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = sb_fork();
	if (pid == 0) {
		struct sched_param sp = { 0 };
		struct cgk_report rep;
		struct outcome out = { 0 };

		if (sched_setscheduler(0, SCHED_IDLE, &sp) < 0)
			_exit(1);
		out.r = cgk_kill(target, o, &rep);
		out.emptied = rep.emptied;
		out.signalled = rep.signalled;
		snprintf(out.message, sizeof(out.message), "%s", rep.message);
		_exit(write(p[1], &out, sizeof(out)) == sizeof(out) ? 0 : 1);
	}
	close(p[1]);
	n = pid > 0 ? read(p[0], res, sizeof(*res)) : -1;
	close(p[0]);
	if (pid > 0)
		sb_wait_reaped(pid, 10000);
	if (n != sizeof(*res))
		return errno = EIO, -1;
	return 0;
}

static void one_round(unsigned round, enum sb_hier hier)
{
	char *box = sb_create(hier), *target = box ? sb_mkdir(box, "victim") : NULL;
	struct cgk_options o = CGK_OPTIONS_INIT;
	struct outcome res;
	pid_t remover;
	int status;

	if (!target || sb_spawn_n(PROCS, SB_SLEEP, NULL, target, NULL) < 0) {
		ok(false, "round %u: %d sleepers in a sandbox: %s", round, PROCS, strerror(errno));
		goto out;
	}
	remover = start_remover(target, hier == SB_V2);
	if (!ok(remover > 0, "round %u: remover started", round))
		goto out;
	o.backend = hier == SB_V2 ? CGK_BACKEND_FREEZE : CGK_BACKEND_V1_FREEZE;
	o.wait_ms = 10000;
	if (run_killer(target, &o, &res) < 0) {
		ok(false, "round %u: killer ran: %s", round, strerror(errno));
		goto out;
	}
	if (!is_int(res.r, 0, "round %u: the kill succeeds although the cgroup is gone", round))
		diag("%s", res.message);
	ok(res.emptied, "round %u: reported emptied", round);
	is_int(res.signalled, PROCS, "round %u: every process signalled", round);
	/* The remover runs beside the killer: it may still be on its way. */
	status = sb_wait_reaped(remover, 10000);
	ok(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "round %u: remover done (status %#x; 2: rmdir failed, 3: never saw it empty)", round,
	   (unsigned)status);
	ok(access(target, F_OK) < 0, "round %u: the remover removed the cgroup", round);
out:
	if (box)
		sb_destroy(box);
	free(target);
	free(box);
}

int main(void)
{
	cpu_set_t one;

	sb_init(300);
	sb_require_root();
	no_plan();
	if (!sb_mount(SB_V2))
		skip_all("no cgroup v2 mount");
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &one);
	if (sched_setaffinity(0, sizeof(one), &one) < 0)
		bail_out("cannot pin to one CPU: %s", strerror(errno));
	for (unsigned i = 1; i <= ROUNDS; i++)
		one_round(i, SB_V2);
	/* The same on the v1 freezer (its remover waits for an empty
	 * cgroup.procs: v1 has no cgroup.events). */
	if (!sb_mount(SB_V1_FREEZER))
		skip("no v1 freezer hierarchy");
	else
		for (unsigned i = ROUNDS + 1; i <= 2 * ROUNDS; i++)
			one_round(i, SB_V1_FREEZER);
	return done_testing();
}
