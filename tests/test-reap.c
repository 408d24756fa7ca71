// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * CGK_REAP and cgkill --reap (issue 18): after SIGKILL the memory of the
 * killed processes is released at once with process_mrelease(2), not on
 * their way out.
 *
 * A victim touches 512 MiB of anonymous memory in a memory-limited cgroup
 * (v1 memory here, memory.max on a v2-only machine with the controller)
 * and in the target; the kill does not wait, so the memory must be gone
 * when cgk_kill() returns: the memory cgroup's usage is read at once, no
 * sleep, and the report counts the victim: released by the reap, or gone
 * (ESRCH: its own exit got there first, and the call waited for it). The
 * same kill without the reap is the control, shown and not asserted (the
 * exit may or may not be done by then). Every backend that serves the
 * hierarchies here; sentinels beside the target survive.
 *
 * Then: only SIGKILL reaps (SIGTERM with the flag does nothing; TERM then
 * KILL reaps only what the KILL step hit); ESRCH (a process already gone)
 * and EINVAL (memory shared with a process outside the subtree, a CLONE_VM
 * child; a process that is not dying) are counted, not failures; without
 * process_mrelease (ENOSYS, made by seccomp) the kill succeeds and the
 * report says so; the command's --reap, its -v line and JSON, and its
 * refusal with a signal other than KILL.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgkill.h"
#include "support/cgfile.h"
#include "support/cmd.h"
#include "support/internals.h"
#include "support/json.h"
#include "support/kill.h"
#include "support/sandbox.h"
#include "support/scene.h"
#include "support/spawn.h"
#include "support/tap.h"

#ifndef SYS_process_mrelease
#define SYS_process_mrelease 448
#endif

#define HOG_MIB 512
#define LIMIT "1073741824"		/* 1 GiB: the victim's cgroup */
/* "Released": under this is left (of 512 MiB). When the reap and the
 * victim's own exit unmap side by side, pages the exit has unmapped but not
 * yet freed (its TLB gather batch) are still charged for a moment: seen up
 * to 33 MiB here; 1-2 MiB otherwise, 513 MiB without the reap. */
#define GONE_BYTES (64ull << 20)
#define MIB (1ull << 20)

static char *box;			/* v2 sandbox */
static unsigned n_reaped, n_kills;	/* released by the reap, of kills */
static char *mem;			/* the memory cgroup the victims join */
static const char *usage_file;		/* memory.usage_in_bytes or memory.current */

/* ---- the memory cgroup ---- */

static unsigned long long usage(void)
{
	char buf[64];

	return strtoull(sb_first_line(mem, usage_file, buf, sizeof(buf)), NULL, 10);
}

/* A memory-limited cgroup: v1 memory where mounted, else memory.max on
 * the v2 mount if the controller can be enabled in the sandbox. NULL and
 * why, if neither. */
static char *memory_cgroup(const char **why)
{
	char *m;

	if (sb_mount(SB_V1_MEMORY)) {
		char *b = sb_create(SB_V1_MEMORY);

		m = b ? sb_mkdir(b, "victims") : NULL;
		free(b);
		usage_file = "memory.usage_in_bytes";
		if (!m || sb_write(m, "memory.limit_in_bytes", LIMIT) < 0) {
			*why = "cannot make a memory-limited v1 cgroup";
			sb_discard(m);
			return NULL;
		}
		return m;
	}
	if (!sb_file_has(sb_mount(SB_V2), "cgroup.controllers", "memory")) {
		*why = "no v1 memory hierarchy, and no memory controller on cgroup v2";
		return NULL;
	}
	m = sb_mkdir(box, "mem");
	usage_file = "memory.current";
	if (!m || sb_write(box, "cgroup.subtree_control", "+memory") < 0 ||
	    sb_write(m, "memory.max", LIMIT) < 0) {
		*why = "cannot enable the memory controller in the v2 sandbox";
		free(m);
		return NULL;
	}
	return m;
}

/* ---- victims ---- */

/* A process that joins cgroups (NULL-terminated, in order), touches mib
 * MiB of anonymous memory and sleeps; with ignore_term it ignores SIGTERM.
 * Its pid once its memory is touched, or -errno. */
static pid_t hog(const char *const *cgroups, unsigned mib, bool ignore_term)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = sb_fork();
	if (pid == 0) {
		size_t len = (size_t)mib << 20;
		const char *m;

		close(p[0]);
		for (size_t i = 0; cgroups[i]; i++)
			if (sb_join(cgroups[i]) < 0)
				_exit(1);
		if (ignore_term)
			signal(SIGTERM, SIG_IGN);
		/* MAP_POPULATE write-faults every page of a private writable
		 * mapping in: all of it charged before the handshake. */
		m = len ? mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0) : NULL;
		if (m == MAP_FAILED || write(p[1], "x", 1) != 1)
			_exit(2);
		for (;;)
			pause();
	}
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return -errno;
	}
	if (read(p[0], &c, 1) != 1) {
		close(p[0]);
		diag("hog: the victim did not start (status %d)", sb_wait_reaped(pid, 1000));
		return -ECHILD;
	}
	close(p[0]);
	return pid;
}

/* A scene named name, and a victim of mib MiB in its target (and in
 * mem): its pid, 0 if the scene could not be made, -errno if the victim. */
static pid_t scene_hog(struct scene *s, const char *name, unsigned mib)
{
	if (!scene_start(s, box, name))
		return 0;
	const char *cgs[] = { mem, s->target, NULL };

	return hog(cgs, mib, false);
}

/* The hog's memory charged to the cgroup, at least most of it. */
static bool charged(unsigned mib)
{
	return usage() >= (unsigned long long)mib * MIB * 9 / 10;
}

/* ---- the kill, with and without the reap ---- */

struct outcome {
	int r;
	unsigned reaped, gone, shared;
	int reap_errno;
	unsigned long long left;	/* bytes charged when the call returned */
	uint64_t ms;			/* the call */
};

static struct outcome kill_now(const char *target, cgk_options *o)
{
	struct outcome out = { 0 };
	cgk_report *rep = NULL;
	uint64_t t0 = sb_now_ms();

	out.r = cgk_kill(target, o, &rep);
	out.left = usage();	/* at once: no sleep */
	out.ms = sb_now_ms() - t0;
	out.reaped = cgk_report_reaped(rep);
	out.gone = cgk_report_reap_gone(rep);
	out.shared = cgk_report_reap_shared(rep);
	out.reap_errno = cgk_report_reap_errno(rep);
	if (out.r < 0)
		diag("cgk_kill: %s", cgk_report_message(rep));
	cgk_report_free(rep);
	return out;
}

/* One victim of HOG_MIB in target (and mem), killed through backend b,
 * with the reap (asserted) or without (shown). */
static void one(const char *what, const char *target, enum cgk_backend b, bool reap)
{
	const char *cgs[] = { mem, target, NULL };
	cgk_options *o = opts_new(b, SIGKILL, reap ? CGK_REAP : 0, 0, NULL);
	pid_t v = hog(cgs, HOG_MIB, false);
	struct outcome out;

	if (!ok(v > 0 && charged(HOG_MIB), "%s: victim holds %d MiB (%llu MiB charged)", what,
		HOG_MIB, usage() / MIB)) {
		cgk_options_free(o);
		return;
	}
	out = kill_now(target, o);
	is_int(out.r, 0, "%s: killed", what);
	if (reap) {
		ok(out.left < GONE_BYTES, "%s: memory released when the call returns: %llu KiB "
		   "charged (%llu ms)", what, out.left >> 10, (unsigned long long)out.ms);
		/* Released by the reap, or (ESRCH) by the victim's own exit,
		 * which got there first and which the call waited for. */
		ok(out.reaped + out.gone == 1 && out.shared == 0,
		   "%s: report: the victim counted once (released %u, gone %u)", what, out.reaped,
		   out.gone);
		n_reaped += out.reaped;
		n_kills++;
		is_int(out.reap_errno, 0, "%s: report: no reap error", what);
	} else {
		/* The control: how much the exit had not freed yet. */
		note("%s (control): %llu MiB still charged when the call returned (%llu ms)", what,
		     out.left / MIB, (unsigned long long)out.ms);
		is_int(out.reaped, 0, "%s: without the flag nothing is reaped", what);
	}
	ok(sb_killed_by(v, SIGKILL, 5000), "%s: victim died of SIGKILL", what);
	ok(sb_wait_empty(target, 10000) == 0, "%s: target empty", what);
	cgk_options_free(o);
}

static void test_backends(void)
{
	static const char *const names[] = { "kernel", "freeze", "loop" };
	struct scene s;

	if (scene_start(&s, box, "v2")) {
		for (size_t i = 0; i < N_V2_BACKENDS; i++) {
			char what[64];

			snprintf(what, sizeof(what), "v2 %s, reap", names[i]);
			one(what, s.target, v2_backends[i], true);
			snprintf(what, sizeof(what), "v2 %s, no reap", names[i]);
			one(what, s.target, v2_backends[i], false);
		}
	}
	scene_end(&s);

	if (!sb_mount(SB_V1_FREEZER)) {
		note("no v1 freezer hierarchy: v1-freeze not tried");
		return;
	}
	char *fz = sb_create(SB_V1_FREEZER);

	if (fz && scene_start(&s, fz, "v1")) {
		one("v1-freeze, reap", s.target, CGK_BACKEND_V1_FREEZE, true);
		one("v1-freeze, no reap", s.target, CGK_BACKEND_V1_FREEZE, false);
	}
	if (fz)
		scene_end(&s);
	sb_discard(fz);
}

/* ---- only SIGKILL reaps ---- */

static void test_signals(void)
{
	struct scene s;
	cgk_options *o;
	struct outcome out;

	if (!scene_start(&s, box, "signals"))
		goto out;
	const char *cgs[] = { mem, s.target, NULL };

	/* SIGTERM with the flag: the process ends on its own (it takes TERM
	 * by default) and nothing is reaped, nor tried. */
	o = opts_new(CGK_BACKEND_AUTO, SIGTERM, CGK_REAP, 0, NULL);
	pid_t t = hog(cgs, 16, false);

	out = kill_now(s.target, o);
	is_int(out.r, 0, "TERM with the flag: sent");
	ok(out.reaped == 0 && out.gone == 0 && out.shared == 0 && out.reap_errno == 0,
	   "TERM with the flag: nothing reaped or tried (%u %u %u %d)", out.reaped, out.gone,
	   out.shared, out.reap_errno);
	ok(sb_killed_by(t, SIGTERM, 5000), "TERM with the flag: the process died of SIGTERM");
	cgk_options_free(o);

	/* TERM, then KILL 300 ms later: one process ends on TERM, the other
	 * (HOG_MIB, TERM ignored) gets KILL and only it is reaped. */
	ok(sb_wait_empty(s.target, 5000) == 0, "escalation: target empty before");
	o = opts_escalate(CGK_BACKEND_AUTO, SIGTERM, 0, 300, SIGKILL);
	if (cgk_options_set_flags(o, CGK_REAP) < 0)
		bail_out("CGK_REAP refused");
	pid_t polite = hog(cgs, 16, false), stubborn = hog(cgs, HOG_MIB, true);

	ok(polite > 0 && stubborn > 0, "escalation: two victims");
	out = kill_now(s.target, o);
	is_int(out.r, 0, "escalation: TERM then KILL");
	ok(out.reaped + out.gone == 1 && out.shared == 0 && out.reap_errno == 0,
	   "escalation: only the process KILL hit is reaped (released %u, gone %u, shared %u, "
	   "errno %d)", out.reaped, out.gone, out.shared, out.reap_errno);
	ok(out.left < GONE_BYTES, "escalation: its memory released when the call returns "
	   "(%llu KiB charged)", out.left >> 10);
	ok(sb_killed_by(polite, SIGTERM, 5000), "escalation: the first died of TERM");
	ok(sb_killed_by(stubborn, SIGKILL, 5000), "escalation: the second of KILL");
	ok(sb_wait_empty(s.target, 10000) == 0, "escalation: target empty");
	cgk_options_free(o);
out:
	scene_end(&s);
}

/* ---- ESRCH, EINVAL ---- */

/* The outcomes cgk_reap() counts, on one pidfd, through a run on the box
 * (as a backend calls it). */
static void reap_one(const char *what, int pidfd, unsigned gone, unsigned shared)
{
	struct lib_run p;

	if (lib_run_open(&p, box, 64) < 0) {
		ok(false, "%s: a run on the sandbox", what);
		return;
	}
	cgk_reap(&p.run, pidfd);
	cgk_reap_wait(&p.run, cgk_now_ms() + 5000);
	ok(p.run.rep->reaped == 0 && p.run.rep->reap_gone == gone &&
	   p.run.rep->reap_shared == shared && p.run.rep->reap_errno == 0,
	   "%s: released %u, gone %u, shared %u, errno %d", what, p.run.rep->reaped,
	   p.run.rep->reap_gone, p.run.rep->reap_shared, p.run.rep->reap_errno);
	lib_run_close(&p);
}

static void test_direct(void)
{
	char *dir = sb_mkdir(box, "direct");
	pid_t v = dir ? sb_sleeper(dir) : -1;
	int pidfd = v > 0 ? (int)syscall(SYS_pidfd_open, v, 0) : -1;

	if (!ok(pidfd >= 0, "a sleeper and its pidfd")) {
		sb_discard(dir);
		return;
	}
	/* Not dying: the kernel refuses, nothing happens to it. */
	reap_one("a live process (no SIGKILL)", pidfd, 0, 1);
	ok(sb_alive(v), "a live process: untouched by the attempt");
	/* Dead and reaped: ESRCH. */
	kill(v, SIGKILL);
	ok(sb_killed_by(v, SIGKILL, 5000), "the sleeper killed and reaped");
	reap_one("an exited process", pidfd, 1, 0);
	close(pidfd);
	sb_discard(dir);
}

static int sharer_fn(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return 0;
}

/* A process in sibling that has a CLONE_VM child (its own thread group,
 * the same memory), moved into target. Its pids, or false. */
static bool sharers(const char *sibling, const char *target, pid_t *parent, pid_t *child)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return false;
	pid = sb_fork();
	if (pid == 0) {
		size_t size = 256 << 10;
		char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				   -1, 0);
		char num[16];
		pid_t c;

		close(p[0]);
		if (stack == MAP_FAILED || sb_join(sibling) < 0)
			_exit(1);
		c = clone(sharer_fn, stack + size, CLONE_VM | SIGCHLD, NULL);
		snprintf(num, sizeof(num), "%d", (int)c);
		if (c < 0 || sb_write(target, "cgroup.procs", num) < 0 ||
		    write(p[1], &c, sizeof(c)) != sizeof(c))
			_exit(2);
		for (;;)
			pause();
	}
	close(p[1]);
	*parent = pid;
	bool got = pid > 0 && read(p[0], child, sizeof(*child)) == sizeof(*child);

	close(p[0]);
	return got;
}

static void test_shared(void)
{
	static const char *const names[] = { "kernel", "freeze", "loop" };
	unsigned n_shared = 0;

	for (size_t i = 0; i < N_V2_BACKENDS; i++) {
		struct scene s;
		char name[32];
		pid_t parent = 0, child = 0;

		snprintf(name, sizeof(name), "shared-%s", names[i]);
		if (!scene_start(&s, box, name)) {
			scene_end(&s);
			continue;
		}
		if (ok(sharers(s.sibling, s.target, &parent, &child),
		       "%s: a CLONE_VM child in the target, its parent beside it", name)) {
			cgk_options *o = opts_new(v2_backends[i], SIGKILL, CGK_REAP, 5000, NULL);
			struct outcome out = kill_now(s.target, o);

			is_int(out.r, 0, "%s: the kill succeeds", name);
			/* EINVAL, or ESRCH when the child's exit (a reference
			 * dropped, nothing freed) beat the reap. */
			ok(out.shared + out.gone == 1 && out.reaped == 0 && out.reap_errno == 0,
			   "%s: EINVAL (or ESRCH) counted, not an error (released %u, gone %u, "
			   "shared %u, errno %d)", name, out.reaped, out.gone, out.shared,
			   out.reap_errno);
			n_shared += out.shared;
			ok(sb_alive(parent), "%s: the parent outside, which shares the memory, lives",
			   name);
			cgk_options_free(o);
		}
		if (parent > 0) {
			kill(parent, SIGKILL);
			sb_wait_reaped(parent, 5000);
		}
		scene_end(&s);
	}
	note("shared memory: EINVAL in %u of %d kills, ESRCH in the others", n_shared,
	     N_V2_BACKENDS);
}

/* ---- ENOSYS ---- */

struct enosys_out {
	int r, reap_errno;
	unsigned reaped;
};

/* In a child: process_mrelease fails with ENOSYS (seccomp), as before 5.15. */
static void enosys_child(void *arg, void *res)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_mrelease, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	struct enosys_out *out = res;
	cgk_options *o = opts_new(CGK_BACKEND_AUTO, SIGKILL, CGK_REAP, 5000, NULL);
	cgk_report *rep = NULL;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
		out->r = -errno;
		out->reap_errno = -1;
		return;
	}
	out->r = cgk_kill(arg, o, &rep);
	out->reaped = cgk_report_reaped(rep);
	out->reap_errno = cgk_report_reap_errno(rep);
	cgk_report_free(rep);
	cgk_options_free(o);
}

static void test_enosys(void)
{
	struct scene s;
	struct enosys_out out = { 0 };
	pid_t v = scene_hog(&s, "enosys", 16);

	if (!ok(v > 0, "ENOSYS: a victim"))
		goto out;
	is_int(child_call(enosys_child, s.target, &out, sizeof(out), 20000, NULL), 0,
	       "ENOSYS: the killer ran");
	ok(out.reap_errno != -1, "ENOSYS: seccomp filter installed (%d)", out.r);
	is_int(out.r, 0, "ENOSYS: the kill succeeds all the same");
	is_int(out.reap_errno, ENOSYS, "ENOSYS: the report says the reap was unavailable");
	is_int(out.reaped, 0, "ENOSYS: nothing reaped");
	ok(sb_killed_by(v, SIGKILL, 5000), "ENOSYS: the victim died of SIGKILL");
out:
	scene_end(&s);
}

/* ---- the command ---- */

static void test_cli(void)
{
	struct scene s;
	struct cmd c = { 0 };
	pid_t v = scene_hog(&s, "cli", HOG_MIB);

	if (!ok(v > 0 && charged(HOG_MIB), "cli: victim holds %d MiB", HOG_MIB))
		goto out;
	cmd_run(&c, CMD_MS, "--reap", "-v", "-j", "--no-wait", s.target, NULL);
	note("cli: %llu KiB charged once cgkill --reap exited", usage() >> 10);
	exit_is(&c, 0);
	json_is(&c, "d['targets'][0]['reap']['released'] + d['targets'][0]['reap']['gone']", "1");
	json_is(&c, "d['targets'][0]['reap']['error']", "null");
	ok(strstr(c.err, "address space(s) released") != NULL,
	   "cli: -v says how many address spaces were released");
	ok(sb_killed_by(v, SIGKILL, 5000), "cli: the victim died of SIGKILL");
	cmd_free(&c);

	cmd_run(&c, CMD_MS, "-j", s.target, NULL);
	exit_is(&c, 0);
	json_is(&c, "d['targets'][0]['reap']", "null");
	cmd_free(&c);

	/* No SIGKILL would be sent: refused before anything is signalled. */
	pid_t w = sb_sleeper(s.target);

	cmd_run(&c, CMD_MS, "--reap", "-s", "TERM", s.target, NULL);
	exit_is(&c, 2);
	ok(strstr(c.err, "--reap") && strstr(c.err, "SIGKILL"),
	   "cli: --reap -s TERM: says --reap needs SIGKILL");
	ok(sb_alive(w), "cli: refused: nothing signalled");
	cmd_free(&c);

	/* An escalation to KILL is a SIGKILL: accepted. */
	cmd_run(&c, CMD_MS, "--reap", "-s", "TERM", "--timeout", "200ms", "KILL", "-j", s.target,
		NULL);
	exit_is(&c, 0);
	json_is(&c, "d['targets'][0]['signals']", "[\"TERM\"]");
	ok(sb_killed_by(w, SIGTERM, 5000), "cli: TERM with an escalation to KILL: TERM was enough");
	cmd_free(&c);
out:
	scene_end(&s);
}

int main(void)
{
	const char *why = NULL;

	box = sb_start(300);
	/* The flag is known to this library (1.1): taken, the next bit not. */
	{
		cgk_options *o = NULL;

		if (cgk_options_new(&o) < 0)
			bail_out("cgk_options_new");
		is_int(cgk_options_set_flags(o, CGK_REAP), 0, "CGK_REAP is a known flag");
		is_int(cgk_options_set_flags(o, CGK_BOOSTED << 1), -EINVAL, "the bit after the last flag is not");
		cgk_options_free(o);
		is_str(cgk_version(), CGK_VERSION, "cgk_version() is " CGK_VERSION);
	}
	mem = memory_cgroup(&why);
	if (!mem) {
		skip("memory-limited cgroup: %s", why);
		return sb_finish(box);
	}
	note("memory cgroup %s (%s), limit %s", mem, usage_file, LIMIT);
	test_backends();
	/* How often the reap beat the victim's own exit (idle victims on a
	 * free CPU start their exit at once): shown, not asserted. */
	note("the reap released %u of %u victims itself; their own exits the others", n_reaped,
	     n_kills);
	test_signals();
	test_direct();
	test_shared();
	test_enosys();
	test_cli();
	sb_discard(mem);
	return sb_finish(box);
}
