// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Cgroups that vanish while they are killed:
 *
 * - child cgroups removed and made again by another process during the
 *   kill: it ends cleanly and signals only the target;
 * - the target removed and made again under its name while cgkill waits:
 *   the new one is not the target, not even for an escalation;
 * - a target removed the moment it empties, as service managers do:
 *   SIGKILL ends frozen tasks, so under the freeze backend the cgroup can
 *   empty, and be removed, before cgkill thaws it; and SIGKILL passes once
 *   before the freeze (v2 and v1), so it can be gone before the freeze is
 *   written. Both are success, not "cannot freeze" or "cannot thaw".
 *
 * For the last, a remover process waits for "populated 0" and removes the
 * cgroup at once; the kill must still return 0 with the subtree reported
 * empty. To make the race go the remover's way every time, everything
 * shares one CPU and the killer runs SCHED_IDLE: each process it signals
 * runs its exit at once, and the remover, spinning on cgroup.events, runs
 * before the killer gets the CPU back to thaw.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgkill.h"
#include "support/cgfile.h"
#include "support/kill.h"
#include "support/record.h"
#include "support/sandbox.h"
#include "support/scene.h"
#include "support/spawn.h"
#include "support/tap.h"

#define REMOVER_ROUNDS 4
#define PROCS 50

static char *v2box;		/* the v2 sandbox */

/* ---- children vanishing during the kill ---- */

/*
 * Child cgroups removed and recreated by another process while the tree is
 * being killed: the kill ends cleanly, signals only the target.
 */
static void test_removed_halfway(const char *where, const char *sbox,
				 const enum cgk_backend *bs, unsigned nb)
{
	enum { CHILDREN = 300, POPULATED = 60, ROUNDS = 8 };
	struct scene s;
	volatile int *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t racer = -1, rec = -1;
	unsigned failures = 0, survivors = 0, rounds = 0;

	if (shared == MAP_FAILED || !scene_start(&s, sbox, where))
		goto out;
	for (unsigned i = 0; i < CHILDREN; i++) {
		char name[16], *d;

		snprintf(name, sizeof(name), "c%u", i);
		d = sb_mkdir(s.target, name);
		free(d);
	}
	rec = stray_recorder(s.sibling);
	racer = sb_fork();
	if (racer == 0) {
		/* rmdir and mkdir every child over and over; the populated
		 * ones go as soon as their processes are dead. */
		int tfd = open(s.target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		while (tfd >= 0 && !shared[0]) {
			for (unsigned i = 0; i < CHILDREN && !shared[0]; i++) {
				char name[16];

				if (!shared[1]) {
					usleep(500);
					continue;
				}
				snprintf(name, sizeof(name), "c%u", i);
				if (unlinkat(tfd, name, AT_REMOVEDIR) == 0) {
					shared[2]++;
					mkdirat(tfd, name, 0755);
				}
			}
		}
		_exit(0);
	}
	if (!ok(racer > 0 && rec > 0, "%s: a racer process and a recorder in the sibling", where))
		goto out;
	for (unsigned round = 0; round < ROUNDS * nb; round++) {
		enum cgk_backend b = bs[round % nb];
		/* USR1 (recorded if it strays) and KILL in turn; the kernel
		 * backend sends KILL only. */
		int sig = b == CGK_BACKEND_KERNEL || (round / nb) % 2 ? SIGKILL : SIGUSR1;
		pid_t pids[POPULATED];
		unsigned np = 0;
		cgk_report *rep = NULL;
		int r;

		shared[1] = 0;	/* the racer pauses while the victims move in */
		sb_sleep_ms(2);
		for (unsigned i = 0; i < POPULATED; i++) {
			char name[16], *d;

			snprintf(name, sizeof(name), "c%u", i * (CHILDREN / POPULATED));
			d = sb_path(s.target, name);
			for (int tries = 0; tries < 20; tries++) {
				mkdir(d, 0755);
				pids[np] = sb_sleeper(d);
				if (pids[np] > 0) {
					np++;
					break;
				}
			}
			free(d);
		}
		shared[1] = 1;
		sb_sleep_ms(5);
		r = kill_opts(s.target, b, sig, 0, KILL_WAIT_MS, NULL, &rep);
		rounds++;
		if (r != 0) {
			failures++;
			diag("%s round %u (%s): r=%d: %s", where, round, cgk_backend_name(b), r, cgk_report_message(rep));
		}
		for (unsigned i = 0; i < np; i++)
			if (!sb_killed_by(pids[i], sig, 3000))
				survivors++;
		rep = cgk_report_free(rep);
	}
	shared[0] = 1;
	note("%s: the racer removed %d child cgroups during the kills", where, shared[2]);
	is_int(failures, 0, "%s: %u kills while children vanish end cleanly", where, rounds);
	is_int(survivors, 0, "%s: every victim died of the signal", where);
	ok(shared[2] > 0, "%s: children did vanish during the kills", where);
	ok(sb_alive(rec), "%s: the recorder in the sibling is alive", where);
	no_hits(where);
out:
	if (racer > 0) {
		kill(racer, SIGKILL);
		sb_wait_reaped(racer, 5000);
	}
	if (shared != MAP_FAILED)
		munmap((void *)shared, 4096);
	scene_end(&s);
}

/*
 * The target is removed and a new cgroup is made under the same name while
 * cgkill waits for it to empty. The new one and what runs there are not the
 * target: nothing may be signalled there, not even by an escalation.
 */
struct recreate {
	const char *target, *sibling;
	pid_t hold, innocents[3];
	bool done;
	int err;
};

static void recreate_progress(const char *path, unsigned left, uint64_t waited, void *data)
{
	struct recreate *c = data;
	char pid[32];
	int r;

	(void)path;
	(void)left;
	(void)waited;
	if (c->done)
		return;
	c->done = true;
	/* The last process leaves (moved by a third party), the cgroup goes,
	 * and a new one takes its name. */
	snprintf(pid, sizeof(pid), "%d", (int)c->hold);
	r = sb_write(c->sibling, "cgroup.procs", pid);
	if (r == 0)
		r = sb_wait_empty(c->target, 5000);
	for (int tries = 0; r == 0 && rmdir(c->target) < 0; tries++) {
		if (errno != EBUSY || tries > 200) {
			r = -errno;
			break;
		}
		sb_reap();
		sb_sleep_ms(5);
	}
	if (r == 0 && mkdir(c->target, 0755) < 0)
		r = -errno;
	for (int i = 0; r == 0 && i < 3; i++) {
		c->innocents[i] = stray_recorder(c->target);
		if (c->innocents[i] < 0)
			r = c->innocents[i];
	}
	c->err = r;
}

static void test_recreated(void)
{
	static const enum cgk_backend backends[] = { CGK_BACKEND_FREEZE, CGK_BACKEND_LOOP };
	struct scene s;

	if (!scene_start(&s, v2box, "recreate"))
		goto out;
	for (size_t b = 0; b < 2; b++) {
		const char *bn = cgk_backend_name(backends[b]);
		struct recreate c = { .target = s.target, .sibling = s.sibling };
		struct sb_proc hold = { .what = SB_IGNORE_TERM, .cgroups = { s.target } };
		cgk_options *o = opts_escalate(backends[b], SIGTERM, 3000, 1500, SIGKILL);
		cgk_report *rep = NULL;
		pid_t dying[3];
		unsigned alive = 0;
		int r;

		if (access(s.target, F_OK) < 0)
			mkdir(s.target, 0755);
		c.hold = sb_spawn(&hold);
		r = sb_spawn_n(3, SB_SLEEP, NULL, s.target, dying);
		if (!ok(c.hold > 0 && r == 0, "recreate %s: a TERM-ignoring holder and 3 sleepers",
			bn)) {
			cgk_options_free(o);
			break;
		}
		cgk_options_set_progress(o, recreate_progress, &c);
		r = cgk_kill(s.target, o, &rep);
		cgk_options_free(o);
		if (!ok(c.done && c.err == 0,
			"recreate %s: target removed and made again during the wait (%s)", bn,
			c.err ? strerror(-c.err) : "ok")) {
			rep = cgk_report_free(rep);
			break;
		}
		is_int(r, 0, "recreate %s: cgk_kill ends cleanly (%s)", bn, cgk_report_message(rep));
		ok(cgk_report_emptied(rep), "recreate %s: the report says the (old) target emptied", bn);
		is_int(cgk_report_n_signals(rep), 1, "recreate %s: no escalation was sent", bn);
		for (int i = 0; i < 3; i++)
			alive += sb_alive(c.innocents[i]);
		is_int(alive, 3, "recreate %s: the processes in the new cgroup of that name are alive", bn);
		ok(sb_alive(c.hold), "recreate %s: the holder moved out is alive (TERM ignored)", bn);
		ok(sb_killed_by(dying[0], SIGTERM, 3000),
		   "recreate %s: the old target's sleepers died of TERM", bn);
		no_hits(bn);
		rep = cgk_report_free(rep);
		/* Clear the new target and the moved holder for the next round. */
		sb_destroy(s.target);
		kill(c.hold, SIGKILL);
		sb_wait_reaped(c.hold, 3000);
		sb_reap();
	}
out:
	scene_end(&s);
}

/* ---- a target removed as soon as it empties ---- */

struct outcome {
	int setup, r;
	bool emptied;
	unsigned signalled;
	char message[4608];
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

/* cgk_kill of the target (arg) in a SCHED_IDLE child. */
static void killer(void *arg, void *out)
{
	const char *target = arg;
	struct outcome *res = out;
	struct sched_param sp = { 0 };
	cgk_report *rep = NULL;

	if (sched_setscheduler(0, SCHED_IDLE, &sp) < 0) {
		res->setup = -errno;
		return;
	}
	res->r = kill_opts(target, sb_version_of(target) == 2 ? CGK_BACKEND_FREEZE :
			   CGK_BACKEND_V1_FREEZE, SIGKILL, 0, 10000, NULL, &rep);
	res->emptied = cgk_report_emptied(rep);
	res->signalled = cgk_report_signalled(rep);
	snprintf(res->message, sizeof(res->message), "%s", cgk_report_message(rep));
	cgk_report_free(rep);
}

static void one_round(unsigned round, enum sb_hier hier)
{
	char *box = sb_create(hier), *target = box ? sb_mkdir(box, "victim") : NULL;
	struct outcome res;
	pid_t remover;
	int status, r;

	if (!target || sb_spawn_n(PROCS, SB_SLEEP, NULL, target, NULL) < 0) {
		ok(false, "round %u: %d sleepers in a sandbox: %s", round, PROCS, strerror(errno));
		goto out;
	}
	remover = start_remover(target, hier == SB_V2);
	if (!ok(remover > 0, "round %u: remover started", round))
		goto out;
	r = child_call(killer, target, &res, sizeof(res), 20000, NULL);
	if (r < 0 || res.setup < 0) {
		ok(false, "round %u: killer ran: %s", round, strerror(r < 0 ? -r : -res.setup));
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

	v2box = sb_start(600);
	rec_init();

	test_removed_halfway("vanish v2", v2box, v2_backends, N_V2_BACKENDS);
	{
		static const enum cgk_backend v1f[] = { CGK_BACKEND_V1_FREEZE, CGK_BACKEND_LOOP };
		static const enum cgk_backend v1p[] = { CGK_BACKEND_LOOP };
		char *v1box;

		if (sb_mount(SB_V1_FREEZER) && (v1box = sb_create(SB_V1_FREEZER))) {
			test_removed_halfway("vanish v1-freezer", v1box, v1f, 2);
			ok(sb_destroy(v1box) == 0, "v1 freezer sandbox removed");
			free(v1box);
		}
		if (sb_mount(SB_V1_PIDS) && (v1box = sb_create(SB_V1_PIDS))) {
			test_removed_halfway("vanish v1-pids", v1box, v1p, 1);
			ok(sb_destroy(v1box) == 0, "v1 pids sandbox removed");
			free(v1box);
		}
	}
	test_recreated();

	/* One CPU from here on (see above). */
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &one);
	if (sched_setaffinity(0, sizeof(one), &one) < 0)
		bail_out("cannot pin to one CPU: %s", strerror(errno));
	for (unsigned i = 1; i <= REMOVER_ROUNDS; i++)
		one_round(i, SB_V2);
	/* The same on the v1 freezer (its remover waits for an empty
	 * cgroup.procs: v1 has no cgroup.events). */
	if (!sb_mount(SB_V1_FREEZER))
		skip("no v1 freezer hierarchy");
	else
		for (unsigned i = REMOVER_ROUNDS + 1; i <= 2 * REMOVER_ROUNDS; i++)
			one_round(i, SB_V1_FREEZER);

	return sb_finish(v2box);
}
