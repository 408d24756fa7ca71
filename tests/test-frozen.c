// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Finding F5: a signal that reaches cgkill between its freeze and its thaw
 * (or its pids.max clamp and the restore) must not leave the target frozen
 * or clamped. cgkill holds every blockable signal back meanwhile; one that
 * arrives acts after the thaw. SIGKILL cannot wait: the run leaves a mark
 * (an xattr) and the next run on the same target undoes what it finds.
 *
 * For each backend that freezes or clamps, the command runs on a sandbox
 * target whose window lasts:
 * - freeze (v2): a process of the target is also frozen by the v1 freezer,
 *   so the v2 freeze never completes and cgkill waits its bounded second;
 * - loop (v1 pids, pids.max 64): the same, with SIGKILL: the process cannot
 *   die while frozen, and the passes wait for it to leave (bounded);
 * - v1-freeze: 400 processes in 40 cgroups; the window is a few
 *   milliseconds, so the command runs again until a signal lands in it.
 * The test polls the control file (cgroup.freeze, freezer.state, pids.max),
 * sends the signal as soon as it shows the window open, and counts a hit
 * only if the file still shows it open after kill() returned.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "internal.h"
#include "support/cgfile.h"
#include "support/cmd.h"
#include "support/json.h"
#include "support/kill.h"
#include "support/record.h"
#include "support/sandbox.h"
#include "support/scene.h"
#include "support/spawn.h"
#include "support/tap.h"

#define CMD_MS 60000	/* deadline for one run of the command */
#define WINDOW_MS 10000	/* for the window to open */
#define TRIES 50	/* runs of the command until a signal lands in the window */
#define V1_CGROUPS 40
#define V1_PER_CGROUP 10
#define PIDS_MAX "64"

enum kind { V2_FREEZE, V1_FREEZE, CLAMP };

struct win {
	enum kind kind;
	const char *name;
	const char *target;
	const char *argv[8];	/* the command line, NULL-terminated */
};

static const char *const ctl_file[] = { "cgroup.freeze", "freezer.state", "pids.max" };
static const char *const closed_text[] = { "0\n", "THAWED\n", PIDS_MAX "\n" };
static const char *const open_text[] = { "1", "FROZEN", "0" };	/* as someone else sets it */
static const char *const mark_name[] = { CGK_MARK_FROZEN, CGK_MARK_FROZEN, CGK_MARK_PIDS_MAX };
/* The first three the command catches (they end a wait); the others kill it. */
static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGALRM, SIGPIPE, SIGXCPU };

/* ---- helpers ---- */

static bool is_open(enum kind k, const char *text)
{
	switch (k) {
	case V2_FREEZE:
		return text[0] == '1';
	case V1_FREEZE:
		return strncmp(text, "THAWED", 6) != 0;
	case CLAMP:
		return strcmp(text, "0\n") == 0;
	}
	return false;
}

static bool window_open(enum kind k, int fd)
{
	char b[32];
	ssize_t n = pread(fd, b, sizeof(b) - 1, 0);

	if (n <= 0)
		return false;
	b[n] = '\0';
	return is_open(k, b);
}

/* The control file of the target, for messages and checks. */
static const char *ctl(const struct win *w, char *buf, size_t size)
{
	if (sb_read(w->target, ctl_file[w->kind], buf, size) < 0)
		snprintf(buf, size, "(unreadable)\n");
	return buf;
}

static bool closed(const struct win *w)
{
	char b[32];

	return strcmp(ctl(w, b, sizeof(b)), closed_text[w->kind]) == 0;
}

static bool marked(const struct win *w)
{
	char v[32];

	return getxattr(w->target, mark_name[w->kind], v, sizeof(v)) >= 0;
}

/* Close the window by hand after a failure, so the next run starts clean. */
static void undo(const struct win *w)
{
	if (sb_write(w->target, ctl_file[w->kind], closed_text[w->kind]) < 0)
		diag("%s: cannot reset %s: %m", w->name, ctl_file[w->kind]);
	removexattr(w->target, mark_name[w->kind]);
}

static const char *signame(int sig)
{
	static char buf[32];

	return cgk_signal_name(sig, buf, sizeof(buf)) ?: "?";
}

/* Freeze a v1 cgroup as someone else would, and wait (bounded) for it. */
static bool freeze_v1(const char *dir)
{
	uint64_t deadline = sb_now_ms() + 5000;
	char b[32];

	if (sb_write(dir, "freezer.state", "FROZEN") < 0)
		return false;
	while (sb_read(dir, "freezer.state", b, sizeof(b)) < 0 || strncmp(b, "FROZEN", 6) != 0) {
		if (sb_now_ms() > deadline)
			return false;
		sb_sleep_ms(2);
	}
	return true;
}

/* Run the command on w to its end (c->status). */
static void run(struct cmd *c, const struct win *w)
{
	if (cmd_startv(c, NULL, w->argv) == 0)
		cmd_finish(c, CMD_MS);
}

/*
 * Run the command on w; as soon as the control file shows the window open,
 * send sig and read the file again. 1: sig was sent inside the window, 0:
 * the window was missed (or never opened in time), -errno. The command has
 * ended when this returns (c->status).
 */
static int shoot(const struct win *w, int sig, struct cmd *c)
{
	char *p = sb_path(w->target, ctl_file[w->kind]);
	int fd = p ? open(p, O_RDONLY | O_CLOEXEC) : -1;
	uint64_t deadline = sb_now_ms() + WINDOW_MS;
	int hit = 0;

	free(p);
	if (fd < 0)
		return -errno;
	if (cmd_startv(c, NULL, w->argv) < 0) {
		close(fd);
		return -EIO;
	}
	for (unsigned i = 1;; i++) {
		if (window_open(w->kind, fd)) {
			kill(c->pid, sig);
			hit = window_open(w->kind, fd);
			break;
		}
		/* Now and then: over already, or stuck? */
		if (i % 256 == 0) {
			char st = proc_state(c->pid);

			if (st == 0 || st == 'Z' || sb_now_ms() > deadline)
				break;
		}
	}
	close(fd);
	cmd_finish(c, CMD_MS);
	return hit;
}

/* ---- the signals that can wait ---- */

static void test_signals(const struct win *w)
{
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		const char *sn = signame(sigs[i]);
		unsigned tries = 0;
		bool got = false;

		while (!got && tries++ < TRIES) {
			struct cmd c;
			char b[32];
			int hit = shoot(w, sigs[i], &c);

			if (hit < 0) {
				ok(false, "%s, SIG%s: run the command: %s", w->name, sn, strerror(-hit));
				break;
			}
			got = hit;
			if (got) {
				is_int(c.status, 128 + sigs[i],
				       "%s, SIG%s in the window: cgkill ends by it (exit %d), once it has "
				       "undone it", w->name, sn, 128 + sigs[i]);
				ok(closed(w), "%s, SIG%s in the window: %s reads %.*s afterwards", w->name,
				   sn, ctl_file[w->kind], (int)strcspn(ctl(w, b, sizeof(b)), "\n"), b);
				ok(!marked(w), "%s, SIG%s in the window: no %s mark is left", w->name, sn,
				   mark_name[w->kind]);
			} else if (!closed(w)) {
				ok(false, "%s, SIG%s outside the window: %s reads %.*s afterwards",
				   w->name, sn, ctl_file[w->kind],
				   (int)strcspn(ctl(w, b, sizeof(b)), "\n"), b);
			}
			if (!closed(w) || marked(w))
				undo(w);
			cmd_free(&c);
		}
		ok(got, "%s: SIG%s reached cgkill inside the window (run %u of at most %d)",
		   w->name, sn, tries, TRIES);
	}
}

/* ---- SIGKILL cannot wait: the next run undoes what it left ---- */

static void test_sigkill(const struct win *w)
{
	unsigned tries = 0;
	bool got = false;

	while (!got && tries++ < TRIES) {
		struct cmd c, again;
		char b[32];
		int hit = shoot(w, SIGKILL, &c);

		if (hit < 0) {
			ok(false, "%s, SIGKILL: run the command: %s", w->name, strerror(-hit));
			break;
		}
		got = hit;
		if (got) {
			is_int(c.status, 128 + SIGKILL, "%s, SIGKILL in the window: cgkill dies of it",
			       w->name);
			ok(!closed(w), "%s, SIGKILL in the window: %s is left at %.*s (nothing can "
			   "block SIGKILL)", w->name, ctl_file[w->kind],
			   (int)strcspn(ctl(w, b, sizeof(b)), "\n"), b);
			ok(marked(w), "%s, SIGKILL in the window: with the %s mark", w->name,
			   mark_name[w->kind]);
			run(&again, w);
			is_int(again.status, 0, "%s: the next run (%s) exits 0", w->name, again.line);
			ok(closed(w), "%s: the next run undoes it: %s reads %.*s", w->name,
			   ctl_file[w->kind], (int)strcspn(ctl(w, b, sizeof(b)), "\n"), b);
			ok(!marked(w), "%s: ... and removes the mark", w->name);
			cmd_free(&again);
		}
		if (!closed(w) || marked(w))
			undo(w);
		cmd_free(&c);
	}
	ok(got, "%s: SIGKILL reached cgkill inside the window (run %u of at most %d)", w->name,
	   tries, TRIES);
}

/* The kernel backend (auto's choice for SIGKILL on v2) thaws a freeze that
 * a killed freeze run left, once its cgroup.kill is written. */
static void test_kernel_thaws(const struct win *w)
{
	struct win kernel = *w;
	struct cmd c, again;
	char b[32];
	int hit = 0;

	for (unsigned tries = 0; hit == 0 && tries < TRIES; tries++) {
		hit = shoot(w, SIGKILL, &c);
		if (hit == 0) {
			undo(w);
			cmd_free(&c);
		}
	}
	if (!ok(hit == 1 && marked(w), "%s: SIGKILL in the window left the mark", w->name))
		goto out;
	memcpy(kernel.argv, (const char *[]){ "-b", "kernel", "--wait=300ms", w->target, NULL },
	       5 * sizeof(char *));
	run(&again, &kernel);
	ok(closed(&kernel), "%s: a kernel-backend run then thaws it: %s reads %.*s", w->name,
	   ctl_file[w->kind], (int)strcspn(ctl(w, b, sizeof(b)), "\n"), b);
	ok(!marked(w), "%s: ... and removes the mark", w->name);
	cmd_free(&again);
out:
	if (hit >= 0) {
		if (!closed(w) || marked(w))
			undo(w);
		cmd_free(&c);
	}
}

/* ---- SIGINT still ends a wait: it is handled once the clamp is undone ---- */

static void test_cancel(const struct win *w)
{
	struct win waiting = *w;
	struct cmd c;
	uint64_t t0;
	char b[32];
	int hit;

	/* The held process cannot die: without SIGINT the wait would last. */
	memcpy(waiting.argv, (const char *[]){ "-b", "loop", "--wait=30s", w->target, NULL },
	       5 * sizeof(char *));
	t0 = sb_now_ms();
	hit = shoot(&waiting, SIGINT, &c);
	ok(hit == 1, "%s --wait=30s: SIGINT reached cgkill inside the window", w->name);
	is_int(c.status, 128 + SIGINT, "%s --wait=30s: exit %d", w->name, 128 + SIGINT);
	ok(sb_now_ms() - t0 < 5000, "%s --wait=30s: the wait ended at once (%llu ms in all)",
	   w->name, (unsigned long long)(sb_now_ms() - t0));
	ok(c.err && strstr(c.err, "interrupted"), "%s --wait=30s: it says 'interrupted': %.*s",
	   w->name, c.err ? (int)strcspn(c.err, "\n") : 0, c.err ? c.err : "");
	ok(closed(w), "%s --wait=30s: %s reads %.*s afterwards", w->name, ctl_file[w->kind],
	   (int)strcspn(ctl(w, b, sizeof(b)), "\n"), b);
	if (!closed(w) || marked(w))
		undo(w);
	cmd_free(&c);
}

/* ---- a freeze or clamp without our mark is someone else's ---- */

static void test_not_ours(const struct win *w)
{
	struct cmd c;
	char b[32];

	if (!ok(sb_write(w->target, ctl_file[w->kind], open_text[w->kind]) == 0 &&
		(w->kind != V1_FREEZE || freeze_v1(w->target)),
		"%s: %s set to %s by someone else", w->name, ctl_file[w->kind], open_text[w->kind]))
		return;
	run(&c, w);
	is_int(c.status, 0, "%s: %s exits 0", w->name, c.line);
	ok(!closed(w), "%s: without our mark it is left as it was: %s reads %.*s", w->name,
	   ctl_file[w->kind], (int)strcspn(ctl(w, b, sizeof(b)), "\n"), b);
	undo(w);
	cmd_free(&c);
}

/* ---- the three backends ---- */

/* A sleeper in the target that the v1 freezer holds in hold: it cannot
 * freeze under v2 nor die of SIGKILL until hold is thawed. */
static pid_t held(const char *hold, const char *target)
{
	pid_t p = sb_spawn(&(struct sb_proc){ .what = SB_SLEEP, .cgroups = { hold, target } });

	if (p > 0 && !freeze_v1(hold)) {
		kill(p, SIGKILL);
		return -ETIMEDOUT;
	}
	return p;
}

static void release(const char *hold, pid_t p)
{
	if (hold)
		sb_write(hold, "freezer.state", "THAWED");
	if (p > 0) {
		kill(p, SIGKILL);
		sb_wait_reaped(p, 5000);
	}
}

/* The end of a scene with a process held by the v1 freezer in hold. */
static void end_held(struct scene *s, char *hold, pid_t p)
{
	release(hold, p);
	scene_end(s);
	if (hold)
		sb_destroy(hold);
	free(hold);
}

static void run_v2(const char *v2box, const char *fzbox)
{
	struct win w = { .kind = V2_FREEZE, .name = "freeze" };
	struct scene s;
	char *hold = NULL;
	pid_t p = -1;
	unsigned n = 0;

	if (!scene_start(&s, v2box, "freeze"))
		goto out;
	hold = sb_mkdir(fzbox, "hold-freeze");
	p = hold ? held(hold, s.target) : -ENOMEM;
	if (!ok(p > 0, "freeze: a process of the target held by the v1 freezer (the v2 freeze "
		"cannot complete: cgkill waits its second)"))
		goto out;
	for (int i = 0; i < 3; i++)
		n += term_ignorer(s.target) > 0;
	if (!is_int(n, 3, "freeze: 3 processes in the target that ignore TERM"))
		goto out;
	w.target = s.target;
	memcpy(w.argv, (const char *[]){ "-b", "freeze", "-s", "TERM", s.target, NULL },
	       6 * sizeof(char *));
	test_signals(&w);
	test_sigkill(&w);
	test_kernel_thaws(&w);
	test_not_ours(&w);
out:
	end_held(&s, hold, p);
}

static void run_loop(const char *pdbox, const char *fzbox)
{
	struct win w = { .kind = CLAMP, .name = "loop" };
	struct scene s;
	char *hold = NULL;
	pid_t p = -1;

	if (!scene_start(&s, pdbox, "loop"))
		goto out;
	if (!ok(sb_write(s.target, "pids.max", PIDS_MAX) == 0, "loop: pids.max = " PIDS_MAX))
		goto out;
	hold = sb_mkdir(fzbox, "hold-loop");
	p = hold ? held(hold, s.target) : -ENOMEM;
	if (!ok(p > 0, "loop: a process of the target held by the v1 freezer (it cannot die of "
		"SIGKILL: the passes wait for it)"))
		goto out;
	w.target = s.target;
	memcpy(w.argv, (const char *[]){ "-b", "loop", "--no-wait", s.target, NULL },
	       5 * sizeof(char *));
	test_signals(&w);
	test_cancel(&w);
	test_sigkill(&w);
	test_not_ours(&w);
out:
	end_held(&s, hold, p);
}

static void run_v1(const char *fzbox)
{
	struct win w = { .kind = V1_FREEZE, .name = "v1-freeze" };
	struct scene s;
	unsigned n = 0;

	if (!scene_start(&s, fzbox, "v1-freeze"))
		goto out;
	for (int i = 0; i < V1_CGROUPS; i++) {
		char rel[16], *cg;

		snprintf(rel, sizeof(rel), "c%d", i);
		cg = sb_mkdir(s.target, rel);
		for (int j = 0; cg && j < V1_PER_CGROUP; j++)
			n += term_ignorer(cg) > 0;
		free(cg);
	}
	if (!is_int(n, V1_CGROUPS * V1_PER_CGROUP, "v1-freeze: %d processes that ignore TERM in "
		    "%d cgroups of the target", V1_CGROUPS * V1_PER_CGROUP, V1_CGROUPS))
		goto out;
	w.target = s.target;
	memcpy(w.argv, (const char *[]){ "-b", "v1-freeze", "-s", "TERM", s.target, NULL },
	       6 * sizeof(char *));
	test_signals(&w);
	test_sigkill(&w);
	test_not_ours(&w);
out:
	scene_end(&s);
}

int main(void)
{
	char *v2box = NULL, *fzbox = NULL, *pdbox = NULL;

	sb_init(600);
	sb_require_root();
	no_plan();
	rec_init();
	/* SIGQUIT and SIGXCPU dump core: not into the working directory. */
	setrlimit(RLIMIT_CORE, &(struct rlimit){ 0, 0 });
	if (!sb_mount(SB_V1_FREEZER))
		skip_all("no v1 freezer hierarchy: nothing holds a window open");
	fzbox = sb_create(SB_V1_FREEZER);
	if (!fzbox)
		bail_out("cannot create a v1 freezer sandbox: %m");
	if (sb_mount(SB_V2) && !(v2box = sb_create(SB_V2)))
		bail_out("cannot create a v2 sandbox: %m");
	if (sb_mount(SB_V1_PIDS) && !(pdbox = sb_create(SB_V1_PIDS)))
		bail_out("cannot create a v1 pids sandbox: %m");
	note("sandboxes: %s %s %s, command %s", fzbox, v2box ?: "-", pdbox ?: "-", cmd_path());

	if (v2box)
		run_v2(v2box, fzbox);
	else
		skip("freeze: no cgroup v2 mount");
	if (pdbox)
		run_loop(pdbox, fzbox);
	else
		skip("loop: no v1 pids hierarchy");
	run_v1(fzbox);

	ok(!v2box || sb_destroy(v2box) == 0, "v2 sandbox removed");
	ok(!pdbox || sb_destroy(pdbox) == 0, "v1 pids sandbox removed");
	ok(sb_destroy(fzbox) == 0, "v1 freezer sandbox removed");
	free(v2box);
	free(pdbox);
	free(fzbox);
	return done_testing();
}
