// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The question before the kill: -i asks, counting processes and cgroups,
 * and only a "y" or "yes" (any case, the newline optional) proceeds; any
 * other answer, or none, signals nothing and exits 4; one answer per
 * target. In the library, a confirm callback that declines: ECANCELED,
 * refused as declined, nothing signalled.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgkill.h"
#include "support/cgfile.h"
#include "support/cmd.h"
#include "support/kill.h"
#include "support/sandbox.h"
#include "support/scene.h"
#include "support/spawn.h"
#include "support/tap.h"

static char *box;		/* v2 sandbox */

static bool decline(const char *path, unsigned procs, unsigned cgroups, void *data)
{
	unsigned *seen = data;

	(void)path;
	seen[0] = procs;
	seen[1] = cgroups;
	return false;
}

static void test_interactive(void)
{
	static const struct { const char *input; bool yes; } answers[] = {
		{ "y\n", true }, { "yes\n", true }, { "Y\n", true }, { "YES\n", true },
		{ "yes", true }, { "n\n", false }, { "no\n", false }, { "\n", false },
		{ NULL, false }, { "yess\n", false }, { " y\n", false }, { "y es\n", false },
		{ "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\n", false }, { "\x1b[A\n", false },
	};
	struct scene s;
	char *sub = NULL;

	if (!scene_start(&s, box, "ask"))
		goto out;
	sub = sb_mkdir(s.target, "sub");
	if (!ok(sub != NULL, "ask: a child cgroup"))
		goto out;
	for (size_t i = 0; i < sizeof(answers) / sizeof(answers[0]); i++) {
		struct cmd_opts co = { .input = answers[i].input };
		const char *shown = answers[i].input ? answers[i].input : "(EOF)";
		pid_t p[3];
		struct cmd cli;
		unsigned dead = 0;

		p[0] = sb_sleeper(s.target);
		p[1] = sb_sleeper(sub);
		p[2] = sb_sleeper(sub);
		cmd_run_opts(&cli, &co, CMD_MS, "-i", s.target, NULL);
		for (int k = 0; k < 3; k++)
			dead += answers[i].yes ? sb_killed_by(p[k], SIGKILL, 3000) : !sb_alive(p[k]);
		if (i == 0)
			ok(strstr(cli.err, "3 process(es) in 2 cgroup(s)") != NULL,
			   "ask: the question counts 3 processes in 2 cgroups: %.*s",
			   (int)strcspn(cli.err, "\n"), cli.err);
		if (answers[i].yes) {
			ok(cli.status == 0 && dead == 3, "ask: answer '%.*s' kills all (exit %d)",
			   (int)strcspn(shown, "\n"), shown, cli.status);
		} else {
			ok(cli.status == 4 && dead == 0,
			   "ask: answer '%.*s' signals nothing, exit 4 (exit %d)",
			   (int)strcspn(shown, "\n"), shown, cli.status);
			for (int k = 0; k < 3; k++)
				kill(p[k], SIGKILL);
			sb_wait_empty(s.target, 3000);
		}
		cmd_free(&cli);
		sb_reap();
	}
	/* The library: a confirm callback that says no. */
	{
		cgk_options *o = opts_new(CGK_BACKEND_AUTO, SIGKILL, 0, KILL_WAIT_MS, NULL);
		cgk_report *rep = NULL;
		unsigned seen[2] = { 0, 0 };
		pid_t p = sb_sleeper(sub);
		int r;

		cgk_options_set_confirm(o, decline, seen);
		r = cgk_kill(s.target, o, &rep);
		cgk_options_free(o);
		ok(r == -ECANCELED && cgk_report_refused(rep) == CGK_GUARD_DECLINED,
		   "ask: a confirm callback that declines: ECANCELED, refused=declined");
		ok(seen[0] == 1 && seen[1] == 2, "ask: it was shown 1 process in 2 cgroups (%u, %u)",
		   seen[0], seen[1]);
		ok(sb_alive(p), "ask: the sleeper is alive");
		rep = cgk_report_free(rep);
	}
	/* Two targets, two answers. */
	{
		struct cmd_opts co = { .input = "n\ny\n" };
		char *t2 = sb_mkdir(s.parent, "T2");
		pid_t a = sb_sleeper(sub), b = t2 ? sb_sleeper(t2) : -1;
		struct cmd cli;

		cmd_run_opts(&cli, &co, CMD_MS, "-i", s.target, t2, NULL);
		is_int(cli.status, 4, "ask: two targets, 'n' then 'y': exit 4 (the worst)");
		ok(sb_alive(a) && sb_killed_by(b, SIGKILL, 3000),
		   "ask: ... the first is spared, the second killed");
		cmd_free(&cli);
		free(t2);
	}
out:
	free(sub);
	scene_end(&s);
}

int main(void)
{
	box = sb_start(300);

	test_interactive();

	return sb_finish(box);
}
