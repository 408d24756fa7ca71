// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Every spelling of one target ("//", "/./", "/../", a trailing '/', the
 * forms relative to the v2 mount) resolves to it, and other spellings name
 * what they really name; paths that are not names of anything (a cgroup
 * file, too long a component or path, an empty one); ".." is refused in
 * paths relative to the v2 mount, wherever it would lead; and
 * cgk_cgroup_of_pid of a process outside our cgroup namespace.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static char *box;		/* the v2 sandbox */

/* Every spelling of one target resolves to it; other spellings name what
 * they really name. */
static void test_spellings(void)
{
	struct scene s;
	cgk_report *rep = NULL;
	char *child = NULL, *rel, buf[8192];
	const char *mnt = sb_mount(SB_V2);
	pid_t p1, p2;
	int r;

	if (!scene_start(&s, box, "spell"))
		goto out;
	child = sb_mkdir(s.target, "c");
	p1 = sb_sleeper(s.target);
	p2 = child ? sb_sleeper(child) : -1;
	if (!ok(p1 > 0 && p2 > 0, "spell: sleepers in the target and its child"))
		goto out;
	rel = s.target + strlen(mnt);	/* "/cgkill-test.../spell/T" */

	{
		char v[12][4400];
		unsigned n = 0, good = 0;

		snprintf(v[n++], sizeof(v[0]), "%s/", s.target);
		snprintf(v[n++], sizeof(v[0]), "%s//", s.target);
		snprintf(v[n++], sizeof(v[0]), "%s//T", s.parent);
		snprintf(v[n++], sizeof(v[0]), "%s/./T/.", s.parent);
		snprintf(v[n++], sizeof(v[0]), "%s/S/../T", s.parent);
		snprintf(v[n++], sizeof(v[0]), "%s/c/..", s.target);
		snprintf(v[n++], sizeof(v[0]), "%s//%s", mnt, rel + 1);
		snprintf(v[n++], sizeof(v[0]), "%s/../%s%s", mnt, strrchr(mnt, '/') + 1, rel);
		snprintf(v[n++], sizeof(v[0]), "%s", rel);		/* as /proc/PID/cgroup */
		snprintf(v[n++], sizeof(v[0]), "%s", rel + 1);	/* relative to the mount */
		snprintf(v[n++], sizeof(v[0]), "./%s//", rel + 1);
		for (unsigned i = 0; i < n; i++) {
			struct cgk_target t;
			char msg[4608];

			r = target_open(v[i], &t, msg, sizeof(msg));
			if (r == 0 && !strcmp(t.path, s.target) && !t.is_root && t.version == 2)
				good++;
			else
				diag("spelling '%s': r=%d path=%s %s", v[i], r, r ? "" : t.path, msg);
			if (r == 0)
				cgk_target_close(&t);
		}
		is_int(good, n, "spell: %u spellings (//, /./, /../, trailing /, relative) resolve to the target",
		       n);
		r = kill_opts(v[3], CGK_BACKEND_FREEZE, SIGKILL, 0, KILL_WAIT_MS, NULL, &rep);
		is_int(r, 0, "spell: kill through '%s'", v[3]);
		ok(!strcmp(cgk_report_path(rep), s.target), "spell: the report names the canonical path");
		rep = cgk_report_free(rep);
		ok(sb_killed_by(p1, SIGKILL, 5000) && sb_killed_by(p2, SIGKILL, 5000),
		   "spell: both sleepers died");
	}

	/* "T/.." is the parent, not T: the guard and listing see the parent. */
	{
		struct cgk_target t;
		char msg[4608];

		snprintf(buf, sizeof(buf), "%s/..", s.target);
		r = target_open(buf, &t, msg, sizeof(msg));
		ok(r == 0 && !strcmp(t.path, s.parent), "spell: '%s' is the parent", buf);
		if (r == 0)
			cgk_target_close(&t);
		r = kill_opts(buf, CGK_BACKEND_AUTO, SIGKILL, CGK_DRY_RUN, 0, NULL, &rep);
		ok(r == 0 && cgk_report_n_processes(rep, CGK_LIST_LISTED) == s.sent.n, "spell: a dry run of T/.. lists the %u sentinels",
		   s.sent.n);
		rep = cgk_report_free(rep);
	}

	/* Not directories, not there, not a name. */
	snprintf(buf, sizeof(buf), "%s/cgroup.procs", s.parent);
	r = kill_opts(buf, CGK_BACKEND_AUTO, SIGKILL, CGK_FORCE, 1000, NULL, &rep);
	is_int(r, -ENOTDIR, "spell: a cgroup file as the target: ENOTDIR (%s)", cgk_report_message(rep));
	rep = cgk_report_free(rep);
	snprintf(buf, sizeof(buf), "%s/nope", s.parent);
	r = kill_opts(buf, CGK_BACKEND_AUTO, SIGKILL, 0, 1000, NULL, &rep);
	is_int(r, -ENOENT, "spell: a missing cgroup: ENOENT");
	rep = cgk_report_free(rep);
	r = kill_opts("", CGK_BACKEND_AUTO, SIGKILL, 0, 1000, NULL, &rep);
	is_int(r, -EINVAL, "spell: an empty path: EINVAL");
	rep = cgk_report_free(rep);
	{
		char longname[300];

		memset(longname, 'x', 256);
		longname[256] = '\0';
		snprintf(buf, sizeof(buf), "%s/%s", s.parent, longname);
		r = kill_opts(buf, CGK_BACKEND_AUTO, SIGKILL, 0, 1000, NULL, &rep);
		ok(r == -ENAMETOOLONG || r == -ENOENT,
		   "spell: a component of 256 bytes: ENAMETOOLONG or ENOENT (%d)", r);
		rep = cgk_report_free(rep);
	}
	{
		char *huge = malloc(6001);

		if (huge) {
			size_t n = (size_t)snprintf(huge, 6001, "%s", s.parent);

			while (n + 2 < 6000) {
				huge[n++] = '/';
				huge[n++] = '.';
			}
			huge[n] = '\0';
			r = kill_opts(huge, CGK_BACKEND_AUTO, SIGKILL, 0, 1000, NULL, &rep);
			is_int(r, -ENAMETOOLONG, "spell: a path of 6000 bytes: ENAMETOOLONG");
			rep = cgk_report_free(rep);
			free(huge);
		}
	}
	{
		struct cmd cli;

		snprintf(buf, sizeof(buf), "%s/cgroup.procs", s.parent);
		cmd_run(&cli, CMD_MS, "-f", buf, NULL);
		is_int(cli.status, 1, "spell: cgkill on a cgroup file exits 1");
		cmd_free(&cli);
	}
out:
	free(child);
	scene_end(&s);
}

/* ---- ".." in v2-relative paths; cgroups outside our namespace ---- */

static void refuse_dotdot(const char *path, bool dry, enum cgk_backend b)
{
	cgk_report *rep = NULL;
	int r = kill_opts(path, b, SIGKILL, dry ? CGK_DRY_RUN : 0, 1000, NULL, &rep);

	ok(r == -EINVAL && strstr(cgk_report_message(rep), "may not contain \"..\"") &&
	   cgk_report_n_signals(rep) == 0,
	   "dotdot: '%s'%s is refused with EINVAL (r=%d: %s)", path, dry ? " (dry run)" : "", r,
	   cgk_report_message(rep));
	rep = cgk_report_free(rep);
}

struct of_pid_arg {
	const char *nsroot;
	pid_t pid;
};

struct of_pid_out {
	int setup, r, cli;
	char buf[4096], err[512];
};

static void of_pid_child(void *argp, void *outp)
{
	struct of_pid_arg *a = argp;
	struct of_pid_out *o = outp;
	char pid[32], *cg = NULL;

	if (sb_join(a->nsroot) < 0 || unshare(CLONE_NEWCGROUP) < 0) {
		o->setup = -errno;
		return;
	}
	o->r = cgk_cgroup_of_pid(a->pid, &cg);
	snprintf(o->buf, sizeof(o->buf), "%s", cg ? cg : "");
	free(cg);
	snprintf(pid, sizeof(pid), "%d", (int)a->pid);
	o->cli = cmd_status(o->err, sizeof(o->err), 30000, "--pid", pid, NULL);
}

static void test_dotdot(void)
{
	const char *v2 = sb_mount(SB_V2), *v1 = sb_mount(SB_V1_FREEZER);
	const char *base = strrchr(box, '/') + 1;
	char *v1box = NULL, *v1t = NULL, *y = NULL, path[4400], buf[256];
	struct scene s;
	pid_t pt = -1, pv1 = -1;

	if (!scene_start(&s, box, "dotdot"))
		goto out;
	pt = sb_sleeper(s.target);
	if (!ok(pt > 0, "dotdot: a sleeper in the target"))
		goto out;

	/* Paths that lead into the sandbox: real kills, nothing may die. */
	snprintf(path, sizeof(path), "%s/dotdot/T/../S", base);
	refuse_dotdot(path, false, CGK_BACKEND_AUTO);
	snprintf(path, sizeof(path), "/%s/dotdot/T/..", base);
	refuse_dotdot(path, false, CGK_BACKEND_LOOP);
	/* Out of the v2 mount into the v1 freezer hierarchy, if they are
	 * mounted side by side (/sys/fs/cgroup/unified and .../freezer). */
	if (v1 && (v1box = sb_create(SB_V1_FREEZER))) {
		const char *v2s = strrchr(v2, '/'), *v1s = strrchr(v1, '/');

		v1t = sb_mkdir(v1box, "T");
		pv1 = v1t ? sb_sleeper(v1t) : -1;
		if (pv1 > 0 && v2s && v1s && v2s - v2 == v1s - v1 &&
		    !strncmp(v2, v1, (size_t)(v2s - v2))) {
			snprintf(path, sizeof(path), "..%s%s/T", v1s, v1box + strlen(v1));
			refuse_dotdot(path, false, CGK_BACKEND_AUTO);
			snprintf(path, sizeof(path), "..%s", v1s);
			refuse_dotdot(path, true, CGK_BACKEND_KERNEL);
		} else {
			skip("dotdot: the v1 freezer is not mounted next to the v2 mount");
		}
	}
	/* Paths that lead out of the cgroup mounts: dry runs. */
	refuse_dotdot("x/../..", true, CGK_BACKEND_AUTO);
	snprintf(path, sizeof(path), "%s/../..", base);
	refuse_dotdot(path, true, CGK_BACKEND_AUTO);
	refuse_dotdot("..", true, CGK_BACKEND_KERNEL);
	{
		struct cmd cli;

		snprintf(path, sizeof(path), "%s/dotdot/T/../S", base);
		cmd_run(&cli, CMD_MS, path, NULL);
		ok(cli.status == 1 && strstr(cli.err, "may not contain"),
		   "dotdot: cgkill '%s' exits 1 and says why (%d: %s)", path, cli.status,
		   first_line(cli.err, buf, sizeof(buf)));
		cmd_free(&cli);
	}
	ok(sb_alive(pt), "dotdot: the sleeper in the target is alive");
	if (pv1 > 0)
		ok(sb_alive(pv1), "dotdot: the sleeper in the v1 freezer sandbox is alive");

	/* A process in T seen from a cgroup namespace rooted at the sibling
	 * cgroup Y: its /proc/PID/cgroup line is "0::/../T". */
	y = sb_mkdir(s.parent, "Y");
	if (y) {
		struct of_pid_arg a = { .nsroot = y, .pid = pt };
		struct of_pid_out o;
		int r = child_call(of_pid_child, &a, &o, sizeof(o), 60000, NULL);

		if (is_int(r, 0, "dotdot: a child in a cgroup namespace rooted at Y reports")) {
			if (o.setup < 0) {
				skip("dotdot: no cgroup namespace: %s", strerror(-o.setup));
			} else {
				is_int(o.r, -EXDEV, "dotdot: cgk_cgroup_of_pid of a process outside the "
				       "namespace (\"/..\" path) is EXDEV (%s)", o.r == 0 ? o.buf : "-");
				is_int(o.cli, 1, "dotdot: cgkill --pid of it in the namespace exits 1 (%s)",
				       first_line(o.err, buf, sizeof(buf)));
			}
		}
		ok(sb_alive(pt), "dotdot: ... and the process is alive");
	}
out:
	free(y);
	free(v1t);
	if (v1box) {
		ok(sb_destroy(v1box) == 0, "dotdot: v1 sandbox removed");
		free(v1box);
	}
	scene_end(&s);
}

int main(void)
{
	box = sb_start(300);

	test_spellings();
	test_dotdot();

	return sb_finish(box);
}
