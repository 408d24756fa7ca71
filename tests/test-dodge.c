// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Processes that keep moving themselves between two cgroups of the target
 * while a backend walks it. A walk reads one cgroup's list at a time, so
 * such a process can be in the other cgroup at every read and slip past
 * every pass, and past a wait that polls the lists (v1). The loop backend
 * then looks for it in /proc, where it cannot hide; the freezers wait for
 * the freeze to catch it, and pass again.
 *
 * Many migrators, many rounds, for each backend that walks: the race is
 * one of timing, and without the /proc search some rounds lose it.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgkill.h"
#include "support/kill.h"
#include "support/sandbox.h"
#include "support/spawn.h"
#include "support/tap.h"

#define ROUNDS 10
#define MIGRATORS 8

static void one_round(enum sb_hier h, enum cgk_backend backend, unsigned round)
{
	char hn[64];
	char *box = sb_create(h);
	char *a = box ? sb_mkdir(box, "a") : NULL, *b = box ? sb_mkdir(box, "b") : NULL;
	cgk_report *rep = NULL;
	pid_t pids[MIGRATORS];
	unsigned n = 0, killed = 0;
	int r;

	snprintf(hn, sizeof(hn), "%s/%s", cgk_backend_name(backend), sb_hier_name(h));

	if (!a || !b) {
		ok(false, "%s round %u: sandbox: %s", hn, round, strerror(errno));
		goto out;
	}
	for (; n < MIGRATORS; n++) {
		struct sb_proc p = { .what = SB_MIGRATE, .cgroups = { a }, .migrate = { a, b } };

		pids[n] = sb_spawn(&p);
		if (pids[n] < 0)
			break;
	}
	if (!is_int(n, MIGRATORS, "%s round %u: %d migrators", hn, round, MIGRATORS))
		goto out;
	sb_sleep_ms(50);	/* let them race */
	r = kill_opts(box, backend, SIGKILL, 0, 5000, NULL, &rep);
	if (!is_int(r, 0, "%s round %u: killed and waited", hn, round))
		diag("%s", cgk_report_message(rep));
	ok(cgk_report_emptied(rep), "%s round %u: reported empty", hn, round);
	rep = cgk_report_free(rep);
	for (unsigned i = 0; i < n; i++)
		killed += sb_killed_by(pids[i], SIGKILL, i ? 100 : 3000);
	is_int(killed, n, "%s round %u: every migrator died of SIGKILL", hn, round);
out:
	if (box)
		sb_destroy(box);
	free(a);
	free(b);
	free(box);
}

int main(void)
{
	static const struct {
		enum sb_hier hier;
		enum cgk_backend backend;
	} runs[] = {
		{ SB_V1_PIDS, CGK_BACKEND_LOOP },
		{ SB_V2, CGK_BACKEND_LOOP },
		{ SB_V2, CGK_BACKEND_FREEZE },
		{ SB_V1_FREEZER, CGK_BACKEND_V1_FREEZE },
	};

	sb_init(300);
	sb_require_root();
	no_plan();
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		if (!sb_mount(runs[i].hier)) {
			skip("no %s hierarchy", sb_hier_name(runs[i].hier));
			continue;
		}
		for (unsigned round = 1; round <= ROUNDS; round++)
			one_round(runs[i].hier, runs[i].backend, round);
	}
	return done_testing();
}

