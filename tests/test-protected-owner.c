// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The protected list against names a delegatee chose (cgkill(1),
 * PROTECTED CGROUPS): a cgroup that matches an entry is protected only if
 * no delegatee could have made it, that is if it is root's, or if its
 * parent is root's and writable by root alone (not g+w, not o+w). A user
 * who makes an empty "precious" inside the subtree they own does not
 * shield the subtree around it, whatever the modes they set.
 *
 * Every case builds <box>/<case>/{T,S} with sentinels in <case> and S, a
 * sleeper in T and one in T/precious, gives T and T/precious to owners,
 * and kills T (or T/precious) for real with a list that names them:
 *  - shield: T and T/precious uid U's (T: U's, 0755): T is killed, through
 *    the library and the command;
 *  - self: the same, T/precious itself the target: killed;
 *  - group: T root's with group G and 0775, T/precious U's with group G
 *    (U may make directories in T through G): killed;
 *  - chmod: T U's but 0555 (U made T/precious, then took u+w away: its
 *    owner may chmod T back and forth): killed;
 *  - chgrp: T root's with group G and 0775, T/precious U's with group U
 *    (U made it through G, then chgrp'ed it to a group of its own): killed;
 *  - other: T of uid V (0755), T/precious U's (V could have made it for a
 *    subordinate uid U: chmod, mkdir, chown in a user namespace): killed;
 *  - root-owned: T U's, T/precious root's (U could not have made it):
 *    refused;
 *  - delegated: T U's below the case's cgroup (root's, 0755), the list
 *    names T itself (a delegated root, as systemd's user@UID.service):
 *    refused, and its parent too.
 * Only sandbox cgroups are ever targeted.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgkill.h"
#include "support/cgfile.h"
#include "support/cmd.h"
#include "support/kill.h"
#include "support/sandbox.h"
#include "support/scene.h"
#include "support/spawn.h"
#include "support/tap.h"

#define U 65534		/* nobody */
#define G 65533
#define V 65532

static char *box;

struct ocase {
	const char *name, *what;
	const char *entry;	/* below <box>/<case>: the list's one entry */
	uid_t t_uid;
	gid_t t_gid;
	mode_t t_mode;
	uid_t p_uid;		/* T/precious */
	gid_t p_gid;
	bool kill_precious;	/* the target is T/precious, else T */
	bool refused;
};

static const struct ocase cases[] = {
	{ "shield", "T and T/precious are U's", "*/precious", U, U, 0755, U, U, false, false },
	{ "self", "T/precious, U's, in U's T, is the target", "T/precious", U, U, 0755, U, U, true, false },
	{ "group", "T/precious U's in T of root with group G, 0775", "*/precious", 0, G, 0775, U, G, false,
	  false },
	{ "chmod", "T/precious U's in U's T, 0555", "*/precious", U, U, 0555, U, U, false, false },
	{ "chgrp", "T/precious U's with group U in T of root with group G, 0775", "*/precious", 0, G, 0775, U,
	  U, false, false },
	{ "other", "T/precious U's in T of uid V, 0755", "*/precious", V, V, 0755, U, U, false, false },
	{ "rootown", "T/precious is root's in U's T", "*/precious", U, U, 0755, 0, 0, false, true },
	{ "delegated", "T is U's below root's cgroup", "T", U, U, 0755, U, U, false, true },
};

static int kill_list(const char *path, unsigned flags, const char *list, cgk_report **rep)
{
	return kill_opts(path, CGK_BACKEND_AUTO, SIGKILL, flags, 3000, list, rep);
}

static void run_case(const struct ocase *c)
{
	char file[] = "/tmp/cgkill-protected.XXXXXX", text[4600], buf[512];
	struct scene s;
	cgk_report *rep = NULL;
	struct cmd cli;
	char *precious = NULL;
	const char *target;
	pid_t pt = -1, pp = -1;
	bool made;
	int r;

	if (!scene_start(&s, box, c->name))
		goto out;
	precious = sb_mkdir(s.target, "precious");
	pt = sb_sleeper(s.target);
	pp = precious ? sb_sleeper(precious) : -1;
	snprintf(text, sizeof(text), "# %s\n%s/%s\n", c->what, sb_rel_v2(s.parent), c->entry);
	made = pt > 0 && pp > 0 && sb_temp_file(file, text, strlen(text)) &&
	       chown(s.target, c->t_uid, c->t_gid) == 0 && chmod(s.target, c->t_mode) == 0 &&
	       chown(precious, c->p_uid, c->p_gid) == 0;
	if (!ok(made, "%s: sleepers in T and T/precious, owners set, a list file", c->name))
		goto out;
	target = c->kill_precious ? precious : s.target;

	r = kill_list(target, CGK_DRY_RUN, file, &rep);
	if (c->refused)
		ok(r == -EPERM && cgk_report_refused(rep) == CGK_GUARD_PROTECTED,
		   "%s: %s: a dry run is refused (%s)", c->name, c->what, cgk_report_message(rep));
	else
		ok(r == 0 && cgk_report_refused(rep) == CGK_GUARD_NONE,
		   "%s: %s: a dry run proceeds (%d: %s)", c->name, c->what, r, cgk_report_message(rep));
	rep = cgk_report_free(rep);
	if (c->refused) {
		r = kill_list(s.parent, CGK_DRY_RUN, file, &rep);
		ok(r == -EPERM && cgk_report_refused(rep) == CGK_GUARD_PROTECTED,
		   "%s: a dry run of T's parent is refused too (%s)", c->name, cgk_report_message(rep));
		rep = cgk_report_free(rep);
		r = kill_list(target, 0, file, &rep);
		ok(r == -EPERM && cgk_report_refused(rep) == CGK_GUARD_PROTECTED,
		   "%s: cgk_kill is refused (%s)", c->name, cgk_report_message(rep));
		rep = cgk_report_free(rep);
		cmd_run(&cli, CMD_MS, "--protected", file, target, NULL);
		is_int(cli.status, 4, "%s: cgkill --protected FILE exits 4 (%s)", c->name,
		       first_line(cli.err, buf, sizeof(buf)));
		cmd_free(&cli);
		ok(sb_alive(pt) && sb_alive(pp), "%s: the sleepers in T and T/precious are alive", c->name);
		goto out;
	}
	/* the library for "self", the command for the others */
	if (c->kill_precious) {
		r = kill_list(target, 0, file, &rep);
		ok(r == 0 && cgk_report_refused(rep) == CGK_GUARD_NONE && cgk_report_emptied(rep),
		   "%s: cgk_kill proceeds (%d: %s)", c->name, r, cgk_report_message(rep));
		rep = cgk_report_free(rep);
		ok(sb_killed_by(pp, SIGKILL, 3000), "%s: the sleeper in T/precious died of KILL", c->name);
		ok(sb_alive(pt), "%s: the sleeper in T, its parent, lives", c->name);
		goto out;
	}
	cmd_run(&cli, CMD_MS, "--protected", file, target, NULL);
	is_int(cli.status, 0, "%s: cgkill --protected FILE T exits 0 (%s)", c->name,
	       first_line(cli.err, buf, sizeof(buf)));
	cmd_free(&cli);
	ok(sb_killed_by(pt, SIGKILL, 3000) && sb_killed_by(pp, SIGKILL, 3000),
	   "%s: the sleepers in T and T/precious died of KILL", c->name);
out:
	unlink(file);
	free(precious);
	scene_end(&s);
}

int main(void)
{
	box = sb_start(300);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);

	return sb_finish(box);
}
