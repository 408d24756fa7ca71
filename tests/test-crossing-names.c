// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Where a path or a cgroup name crosses from one moment or one namespace
 * to another, nothing outside the target is signalled:
 *
 * - a target renamed (v1), or removed and made again under its name,
 *   while a kill runs: a cgroup that takes the old name is not hit; the
 *   /proc search still finds what is really in the subtree;
 * - inside a cgroup namespace with the host's cgroupfs mounted: a name as
 *   /proc/PID/cgroup shows it is not resolved against that mount;
 * - --pid through a bind mount that shows another cgroup under the name,
 *   and --pid with a thread's id.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "cgkill.h"
#include "support/cgfile.h"
#include "support/cmd.h"
#include "support/internals.h"
#include "support/kill.h"
#include "support/sandbox.h"
#include "support/spawn.h"
#include "support/tap.h"

static bool signal_pending(pid_t pid, int sig)
{
	unsigned long long mask;

	return proc_mask(pid, "ShdPnd", &mask) && (mask & (1ULL << (sig - 1)));
}

/* F2, v1: during the grace period the target is renamed away and the
 * sibling takes its name; the SIGKILL step must not reach the sibling. The
 * target's process cannot die yet: it sits in a frozen v1 freezer cgroup. */
static void test_rename_v1(const char *pidsbox, const char *frzbox)
{
	char *t = sb_mkdir(pidsbox, "t"), *s = sb_mkdir(pidsbox, "s"), *f = sb_mkdir(frzbox, "f");
	char *old = sb_path(pidsbox, "t.old");
	struct sb_proc held = { .what = SB_SLEEP, .cgroups = { f, t, NULL } };
	pid_t target = -1, bystander = -1;
	struct cmd c;

	if (!t || !s || !f || (target = sb_spawn(&held)) < 0 || (bystander = sb_sleeper(s)) < 0 ||
	    sb_write(f, "freezer.state", "FROZEN") < 0) {
		ok(false, "rename, v1: setup");
		goto out;
	}
	cmd_start(&c, NULL, "-s", "TERM", "--timeout", "2s", "KILL", "-w1s", t, NULL);
	for (uint64_t end = sb_now_ms() + 5000; sb_now_ms() < end && !signal_pending(target, SIGTERM);)
		sb_sleep_ms(5);
	ok(signal_pending(target, SIGTERM), "rename, v1: TERM reached the held target process");
	ok(rename(t, old) == 0 && rename(s, t) == 0,
	   "rename, v1: target renamed away, sibling renamed to its name");
	cmd_finish(&c, 20000);
	ok(sb_alive(bystander), "rename, v1: the sibling that took the target's name lives");
	ok(signal_pending(target, SIGKILL) || !sb_alive(target),
	   "rename, v1: SIGKILL reached the renamed target");
	cmd_free(&c);
	rename(t, s);
	rename(old, t);
out:
	sb_write(f, "freezer.state", "THAWED");
	sb_destroy(t);
	sb_destroy(s);
	sb_destroy(f);
	free(t);
	free(s);
	free(f);
	free(old);
}

/* F2, v2: the /proc search after the target was removed and made again
 * under its name with a new process (a service restart). (v2 refuses to
 * rename a cgroup.) */
static void test_recreated_v2(const char *v2box)
{
	char *t = sb_mkdir(v2box, "rt"), *again = NULL;
	struct lib_run p;
	unsigned fresh = 99;
	pid_t bystander;

	if (!t || lib_run_open(&p, t, 64) < 0 || rmdir(t) < 0 || !(again = sb_mkdir(v2box, "rt")) ||
	    (bystander = sb_sleeper(t)) < 0) {
		ok(false, "recreated, v2: setup");
		goto out;
	}
	ok(p.run.proc_ours, "our /proc is ours");
	is_int(cgk_signal_stragglers(&p.run, SIGTERM, &fresh), 0,
	       "recreated, v2: the /proc search runs");
	is_int(fresh, 0, "recreated, v2: the new cgroup under the old name is not the target");
	ok(sb_alive(bystander), "recreated, v2: its process lives");
	lib_run_close(&p);
out:
	sb_destroy(t);
	free(t);
	free(again);
}

/* The /proc search still finds what it is for: a process in the subtree
 * that no list read reached (here: none was made), through its leads. */
static void test_scan_finds(const char *v2box)
{
	char *t = sb_mkdir(v2box, "ft/a/b");
	char *top = sb_path(v2box, "ft");
	struct lib_run p;
	unsigned fresh = 0;
	pid_t inside;

	if (!t || (inside = sb_sleeper(t)) < 0 || lib_run_open(&p, top, 64) < 0) {
		ok(false, "scan: setup");
		goto out;
	}
	is_int(cgk_signal_stragglers(&p.run, SIGKILL, &fresh), 0, "scan: runs");
	is_int(fresh, 1, "scan: finds the process two levels below the target");
	ok(sb_killed_by(inside, SIGKILL, 5000), "scan: and kills it");
	lib_run_close(&p);
out:
	sb_destroy(top);
	free(t);
	free(top);
}

/* F3: in a cgroup namespace whose root is box/ns, with the host's cgroupfs
 * still mounted, "NAME/t" names box/ns/NAME/t; it must never reach the
 * host's /NAME/t (here: box/t, NAME being the box's own name). */
struct cgns_arg {
	const char *ns, *name;
	pid_t in_ns;
};

struct cgns_out {
	int r;
	char message[4608];
};

static void cgns_child(void *arg, void *out)
{
	const struct cgns_arg *a = arg;
	struct cgns_out *o = out;
	cgk_report *rep = NULL;
	char name[4096];

	if (sb_join(a->ns) < 0 || unshare(CLONE_NEWCGROUP) < 0) {
		o->r = -999;
		return;
	}
	snprintf(name, sizeof(name), "%s/t", a->name);
	o->r = kill_opts(name, CGK_BACKEND_AUTO, SIGKILL, 0, 2000, NULL, &rep);
	snprintf(o->message, sizeof(o->message), "%s", cgk_report_message(rep));
	rep = cgk_report_free(rep);
}

static void test_cgroupns(const char *v2box)
{
	const char *name = strrchr(v2box, '/') + 1;
	char *host_t = sb_mkdir(v2box, "t"), *ns = sb_mkdir(v2box, "ns");
	char *ns_rel = NULL, *ns_t = NULL;
	struct cgns_arg a = { .ns = ns, .name = name };
	struct cgns_out o = { 0 };
	pid_t outside, inside;
	int st;

	if (asprintf(&ns_rel, "%s/t", name) < 0 || !host_t || !ns || !(ns_t = sb_mkdir(ns, ns_rel)) ||
	    (outside = sb_sleeper(host_t)) < 0 || (inside = sb_sleeper(ns_t)) < 0) {
		ok(false, "cgroup namespace: setup");
		goto out;
	}
	child_call(cgns_child, &a, &o, sizeof(o), 20000, &st);
	if (!ok(o.r != -999, "cgroup namespace: entered"))
		goto out;
	ok(sb_alive(outside), "cgroup namespace: the host's cgroup of that name is not touched");
	ok(o.r == -EXDEV && strstr(o.message, "outside this cgroup namespace"),
	   "cgroup namespace: a name is not resolved against a mount from outside it (%d: %s)", o.r,
	   o.message);
out:
	sb_destroy(ns);
	sb_destroy(host_t);
	free(host_t);
	free(ns);
	free(ns_rel);
	free(ns_t);
}

/* F7: --pid through a bind mount that shows R/b under the name R/a. */
struct bind_arg {
	const char *a, *b;
	pid_t pid;
};

static void bind_child(void *arg, void *out)
{
	const struct bind_arg *b = arg;
	int *status = out;
	char pid[16];
	struct cmd res;

	*status = -999;
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount(b->b, b->a, NULL, MS_BIND, NULL) < 0)
		return;
	snprintf(pid, sizeof(pid), "%d", b->pid);
	cmd_run(&res, 20000, "-w1s", "--pid", pid, NULL);
	*status = res.status;
	if (*status != 1 || !strstr(res.err, "not in this cgroup"))
		diag("--pid through a bind mount: exit %d, stderr %s", *status, res.err);
	cmd_free(&res);
}

static void test_bind_pid(const char *v2box)
{
	char *a = sb_mkdir(v2box, "R/a"), *b = sb_mkdir(v2box, "R/b");
	char *at = sb_mkdir(v2box, "R/a/t"), *bt = sb_mkdir(v2box, "R/b/t");
	char *r = sb_path(v2box, "R");
	struct bind_arg arg = { .a = a, .b = b };
	pid_t other;
	int status = -1, st;

	if (!a || !b || !at || !bt || (arg.pid = sb_sleeper(at)) < 0 || (other = sb_sleeper(bt)) < 0) {
		ok(false, "bind mount: setup");
		goto out;
	}
	child_call(bind_child, &arg, &status, sizeof(status), 30000, &st);
	ok(sb_alive(other), "--pid through a bind mount: the cgroup shown under the name lives");
	ok(sb_alive(arg.pid), "--pid through a bind mount: the process itself is not reached either");
	is_int(status, 1, "--pid through a bind mount: refused as an error");
out:
	sb_destroy(r);
	free(a);
	free(b);
	free(at);
	free(bt);
	free(r);
}

/* --pid with a thread's id: named as such, nothing signalled. */
static void test_pid_thread(const char *v2box)
{
	char *t = sb_mkdir(v2box, "th"), tid[16] = "";
	pid_t p = t ? sb_spawn(&(struct sb_proc){ .cgroups = { t }, .threads = 2 }) : -1;
	struct cmd c;

	if (p > 0 && proc_other_tid(p) > 0)
		snprintf(tid, sizeof(tid), "%d", (int)proc_other_tid(p));
	if (!ok(*tid, "--pid TID: a process with threads"))
		goto out;
	cmd_run(&c, 20000, "-w1s", "--pid", tid, NULL);
	ok(c.status == 1 && strstr(c.err, "not a process ID"),
	   "--pid TID: refused as not a process ID (exit %d: %s)", c.status, c.err);
	ok(sb_alive(p), "--pid TID: nothing signalled");
	cmd_free(&c);
out:
	sb_destroy(t);
	free(t);
}

int main(void)
{
	char *v2, *pids, *frz;

	sb_init(240);
	sb_require_root();
	if (!sb_mount(SB_V2) || !sb_mount(SB_V1_PIDS) || !sb_mount(SB_V1_FREEZER))
		skip_all("needs cgroup v2 and the v1 pids and freezer hierarchies");
	v2 = sb_create(SB_V2);
	pids = sb_create(SB_V1_PIDS);
	frz = sb_create(SB_V1_FREEZER);
	if (!v2 || !pids || !frz)
		bail_out("cannot create the sandboxes");

	test_rename_v1(pids, frz);
	test_recreated_v2(v2);
	test_scan_finds(v2);
	test_cgroupns(v2);
	test_bind_pid(v2);
	test_pid_thread(v2);

	sb_cleanup_all();
	free(v2);
	free(pids);
	free(frz);
	return done_testing();
}
