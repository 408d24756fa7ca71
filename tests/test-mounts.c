// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The walk never crosses a mount point: a bind mount of another cgroup (the
 * sibling, or another sandbox cgroup) onto a child of the target, in a
 * private mount namespace. Walking into it would lead outside the target;
 * the backends that walk refuse with EXDEV, naming the mount point, and the
 * kernel backend, whose cgroup.kill acts on the kernel's tree, is not fooled
 * by it. Sentinels in the parent and in a sibling of the target survive.
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
#include "support/kill.h"
#include "support/record.h"
#include "support/sandbox.h"
#include "support/scene.h"
#include "support/spawn.h"
#include "support/tap.h"

static char *box;		/* the v2 sandbox */

/*
 * A bind mount inside the target's subtree: the sibling cgroup mounted over
 * a child of the target (in a private mount namespace). Walking into it
 * would lead outside the target; the walk refuses to cross the mount.
 */
/*
 * A bind mount inside the target's subtree: the sibling cgroup mounted over
 * a child of the target (in a private mount namespace). Walking into it
 * would lead outside the target; the walk refuses to cross the mount.
 */
struct bindin_arg {
	const char *target, *child, *sibling;
};

struct bindin_out {
	int setup;
	int r[3], error[3];
	char msg[3][256];
};

static void bindin_child(void *argp, void *outp)
{
	struct bindin_arg *a = argp;
	struct bindin_out *o = outp;
	static const enum cgk_backend bs[] = { CGK_BACKEND_FREEZE, CGK_BACKEND_LOOP, CGK_BACKEND_KERNEL };

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount(a->sibling, a->child, NULL, MS_BIND, NULL) < 0) {
		o->setup = -errno;
		return;
	}
	for (int i = 0; i < 3; i++) {
		cgk_report *rep = NULL;

		o->r[i] = kill_opts(a->target, bs[i], bs[i] == CGK_BACKEND_KERNEL ? SIGKILL : SIGUSR1,
				    0, 2000, NULL, &rep);
		o->error[i] = cgk_report_error(rep);
		snprintf(o->msg[i], sizeof(o->msg[i]), "%.250s", cgk_report_message(rep));
		rep = cgk_report_free(rep);
	}
}

static void test_bind_inside(void)
{
	struct scene s;
	struct bindin_arg a;
	struct bindin_out o;
	char *child = NULL;
	pid_t rec, below;
	int r;

	if (!scene_start(&s, box, "bindin"))
		goto out;
	child = sb_mkdir(s.target, "c");
	rec = stray_recorder(s.sibling);
	below = child ? sb_sleeper(child) : -1;
	if (!ok(rec > 0 && below > 0, "bindin: a recorder in the sibling, a sleeper in T/c"))
		goto out;
	a = (struct bindin_arg){ .target = s.target, .child = child, .sibling = s.sibling };
	r = child_call(bindin_child, &a, &o, sizeof(o), 60000, NULL);
	if (!is_int(r, 0, "bindin: the child in its own mount namespace reports"))
		goto out;
	if (o.setup < 0) {
		skip("bindin: cannot bind-mount a cgroup: %s", strerror(-o.setup));
		goto out;
	}
	is_int(o.r[0], -EXDEV, "bindin: freeze refuses to cross the mount (%s)", o.msg[0]);
	is_int(o.r[1], -EXDEV, "bindin: loop refuses to cross the mount (%s)", o.msg[1]);
	ok(o.r[2] == 0 && o.error[2] == 0,
	   "bindin: the kernel backend kills (cgroup.kill ignores mounts), no error reported (%s)",
	   o.msg[2]);
	ok(sb_alive(rec), "bindin: the recorder in the sibling (mounted inside T) is alive");
	no_hits("bindin");
	/* The kernel's own cgroup.kill ignores mounts: T/c is in T. */
	ok(!sb_alive(below) || sb_killed_by(below, SIGKILL, 3000),
	   "bindin: the sleeper in the real T/c died (kernel backend)");
out:
	free(child);
	scene_end(&s);
}

/* Another sandbox cgroup B mounted over the empty child c of the target. */
struct mount_arg {
	const char *target, *child, *other;
};

struct mount_out {
	int setup;
	int r_dry, r_freeze, r_loop, r_kernel;
	int dry_listed;
	int cli_loop, cli_dry;
	char msg_dry[512], msg_freeze[512], msg_loop[512], err_loop[512], err_dry[512];
};

static void mount_child(void *argp, void *outp)
{
	struct mount_arg *a = argp;
	struct mount_out *o = outp;
	cgk_report *rep = NULL;

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount(a->other, a->child, NULL, MS_BIND, NULL) < 0) {
		o->setup = -errno;
		return;
	}
	o->r_dry = kill_opts(a->target, CGK_BACKEND_AUTO, SIGKILL, CGK_DRY_RUN, 0, NULL, &rep);
	o->dry_listed = (int)cgk_report_n_processes(rep, CGK_LIST_LISTED);
	snprintf(o->msg_dry, sizeof(o->msg_dry), "%.500s", cgk_report_message(rep));
	rep = cgk_report_free(rep);
	o->r_freeze = kill_opts(a->target, CGK_BACKEND_FREEZE, SIGTERM, 0, 1000, NULL, &rep);
	snprintf(o->msg_freeze, sizeof(o->msg_freeze), "%.500s", cgk_report_message(rep));
	rep = cgk_report_free(rep);
	o->r_loop = kill_opts(a->target, CGK_BACKEND_LOOP, SIGKILL, 0, 1000, NULL, &rep);
	snprintf(o->msg_loop, sizeof(o->msg_loop), "%.500s", cgk_report_message(rep));
	rep = cgk_report_free(rep);
	o->cli_loop = cmd_status(o->err_loop, sizeof(o->err_loop), 30000, "-b", "loop", a->target,
				 NULL);
	o->cli_dry = cmd_status(o->err_dry, sizeof(o->err_dry), 30000, "-n", a->target, NULL);
	/* cgroup.kill acts on the kernel's tree, which the bind mount does not
	 * change: it must not fail, and cannot reach the other cgroup. */
	o->r_kernel = kill_opts(a->target, CGK_BACKEND_KERNEL, SIGKILL, 0, 1000, NULL, &rep);
	rep = cgk_report_free(rep);
	umount2(a->child, MNT_DETACH);
}

static bool crossing_refused(const char *msg)
{
	return strstr(msg, "child cgroup c (a mount point") != NULL;
}

static void test_mount(void)
{
	struct scene s;
	struct mount_out o;
	struct mount_arg a;
	char *other = NULL, *c = NULL, buf[16] = "", line[256];
	pid_t pb = -1, ps = -1;
	int r;

	if (!scene_start(&s, box, "mount"))
		goto out;
	other = sb_mkdir(s.parent, "B");
	c = sb_mkdir(s.target, "c");
	pb = other ? sb_sleeper(other) : -1;
	ps = sb_sleeper(s.target);
	if (!ok(c && pb > 0 && ps > 0, "mount: target S with a sleeper and an empty child c; B with a sleeper"))
		goto out;
	a = (struct mount_arg){ .target = s.target, .child = c, .other = other };
	r = child_call(mount_child, &a, &o, sizeof(o), 120000, NULL);
	if (!is_int(r, 0, "mount: the child in its own mount namespace reports"))
		goto out;
	if (o.setup < 0) {
		skip("mount: cannot bind-mount in a private mount namespace: %s", strerror(-o.setup));
		goto out;
	}
	ok(o.r_dry == -EXDEV && crossing_refused(o.msg_dry),
	   "mount: a dry run fails with EXDEV naming the mount point (r=%d, %d listed: %s)", o.r_dry,
	   o.dry_listed, o.msg_dry);
	ok(o.r_freeze == -EXDEV && crossing_refused(o.msg_freeze),
	   "mount: -b freeze -s TERM fails with EXDEV naming the mount point (r=%d: %s)", o.r_freeze,
	   o.msg_freeze);
	ok(o.r_loop == -EXDEV && crossing_refused(o.msg_loop),
	   "mount: -b loop fails with EXDEV naming the mount point (r=%d: %s)", o.r_loop, o.msg_loop);
	ok(o.cli_loop == 1 && strstr(o.err_loop, "mount point"),
	   "mount: cgkill -b loop in the namespace exits 1 and names the mount point (%d: %s)",
	   o.cli_loop, first_line(o.err_loop, line, sizeof(line)));
	ok(o.cli_dry == 1 && strstr(o.err_dry, "mount point"),
	   "mount: cgkill -n in the namespace exits 1 and names the mount point (%d)", o.cli_dry);
	is_int(o.r_kernel, 0, "mount: -b kernel (cgroup.kill, the kernel's tree) works");
	ok(sb_alive(pb), "mount: the sleeper in B (mounted on S/c) is alive");
	/* S's own sleeper: the target is visited before its children, so the
	 * freeze and loop runs signal it before they meet the mount, and the
	 * kernel run kills it anyway. Only that it is gone in the end is
	 * asserted. */
	ok(sb_killed_by(ps, SIGTERM, 3000) || sb_killed_by(ps, SIGKILL, 3000) || !sb_alive(ps),
	   "mount: S's own sleeper is gone (signalled before the walk met the mount)");
	sb_read(s.target, "cgroup.freeze", buf, sizeof(buf));
	ok(buf[0] == '0', "mount: S is not left frozen");
out:
	if (pb > 0)
		kill(pb, SIGKILL);
	free(other);
	free(c);
	scene_end(&s);
}

int main(void)
{
	box = sb_start(300);
	rec_init();

	test_bind_inside();
	test_mount();

	return sb_finish(box);
}
