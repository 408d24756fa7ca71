// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Trees of unusual shape, for every v2 backend: a target with thousands of
 * child cgroups, and a chain of up to 200 nested ones (or as deep as
 * cgroup.max.depth allows), with sleepers down to the deepest. The reports
 * count every cgroup; every sleeper dies. Sentinels in the parent and in a
 * sibling of every target must survive.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgkill.h"
#include "support/cgfile.h"
#include "support/kill.h"
#include "support/sandbox.h"
#include "support/scene.h"
#include "support/spawn.h"
#include "support/tap.h"

static char *box;		/* the v2 sandbox */

/* A target with thousands of child cgroups. */
static void test_many_children(void)
{
	enum { CHILDREN = 3000, EVERY = 10 };
	struct scene s;
	int tfd = -1;
	unsigned made = 0;
	pid_t *pids = calloc(CHILDREN / EVERY, sizeof(pid_t));

	if (!pids || !scene_start(&s, box, "many"))
		goto out;
	tfd = open(s.target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (unsigned i = 0; tfd >= 0 && i < CHILDREN; i++) {
		char name[16];

		snprintf(name, sizeof(name), "c%u", i);
		made += mkdirat(tfd, name, 0755) == 0;
	}
	if (!is_int(made, CHILDREN, "many: %d child cgroups", CHILDREN))
		goto out;
	for (size_t b = 0; b < N_V2_BACKENDS; b++) {
		const char *bn = cgk_backend_name(v2_backends[b]);
		unsigned np = 0, killed = 0;
		cgk_report *rep = NULL;
		uint64_t t0;
		int r;

		for (unsigned i = 0; i < CHILDREN; i += EVERY) {
			char name[16];
			int cfd;

			snprintf(name, sizeof(name), "c%u", i);
			cfd = openat(tfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			pids[np] = cfd >= 0 ? sb_sleeper_at(cfd) : -1;
			np += pids[np] > 0;
			if (cfd >= 0)
				close(cfd);
		}
		if (!is_int(np, CHILDREN / EVERY, "many %s: %d sleepers spread over the children", bn,
			    CHILDREN / EVERY))
			break;
		if (b == 0) {
			r = kill_opts(s.target, CGK_BACKEND_AUTO, SIGKILL, CGK_DRY_RUN, 0, NULL, &rep);
			ok(r == 0 && cgk_report_n_processes(rep, CGK_LIST_LISTED) == np, "many: a dry run lists %u processes (%zu)", np,
			   cgk_report_n_processes(rep, CGK_LIST_LISTED));
			rep = cgk_report_free(rep);
		}
		t0 = sb_now_ms();
		r = kill_opts(s.target, v2_backends[b], SIGKILL, 0, KILL_WAIT_MS, NULL, &rep);
		is_int(r, 0, "many %s: cgk_kill returns 0 (%s)", bn, cgk_report_message(rep));
		is_int(cgk_report_cgroups(rep), CHILDREN + 1, "many %s: the report counts %d cgroups", bn,
		       CHILDREN + 1);
		if (v2_backends[b] != CGK_BACKEND_KERNEL)
			is_int(cgk_report_signalled(rep), np, "many %s: %u signalled", bn, np);
		for (unsigned i = 0; i < np; i++)
			killed += sb_killed_by(pids[i], SIGKILL, 3000);
		is_int(killed, np, "many %s: all %u died", bn, np);
		note("many %s: %d cgroups, %u processes: %llu ms", bn, CHILDREN + 1, np,
		     (unsigned long long)(sb_now_ms() - t0));
		rep = cgk_report_free(rep);
	}
out:
	if (tfd >= 0)
		close(tfd);
	free(pids);
	scene_end(&s);
}

/* Depth up to 200 levels (or cgroup.max.depth if lower). */
static void test_deep(void)
{
	enum { WANT = 200 };
	struct scene s;
	int *fds = calloc(WANT + 1, sizeof(int));
	unsigned depth = 0;
	char buf[64];

	if (!fds || !scene_start(&s, box, "deep"))
		goto out;
	/* Respect a depth limit set on the way down (none here normally). */
	if (sb_read(s.target, "cgroup.max.depth", buf, sizeof(buf)) > 0 && strncmp(buf, "max", 3))
		note("deep: cgroup.max.depth of the target is %s", buf);
	fds[0] = open(s.target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (unsigned i = 1; fds[0] >= 0 && i <= WANT; i++) {
		if (mkdirat(fds[i - 1], "d", 0755) < 0) {
			note("deep: mkdir at depth %u: %s", i, strerror(errno));
			break;
		}
		fds[i] = openat(fds[i - 1], "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fds[i] < 0)
			break;
		depth = i;
	}
	if (!ok(depth >= 100, "deep: a chain of %u nested cgroups below the target", depth))
		goto out;
	for (size_t b = 0; b < N_V2_BACKENDS; b++) {
		const char *bn = cgk_backend_name(v2_backends[b]);
		unsigned levels[] = { 0, 1, depth / 4, depth / 2, depth - 1, depth };
		pid_t pids[6];
		unsigned killed = 0;
		cgk_report *rep = NULL;
		int r;

		for (int i = 0; i < 6; i++)
			pids[i] = sb_sleeper_at(fds[levels[i]]);
		if (!ok(pids[0] > 0 && pids[5] > 0, "deep %s: sleepers at 6 levels down to %u", bn, depth))
			break;
		r = kill_opts(s.target, v2_backends[b], SIGKILL, 0, KILL_WAIT_MS, NULL, &rep);
		is_int(r, 0, "deep %s: cgk_kill returns 0 (%s)", bn, cgk_report_message(rep));
		is_int(cgk_report_cgroups(rep), depth + 1, "deep %s: the report counts %u cgroups", bn, depth + 1);
		for (int i = 0; i < 6; i++)
			killed += sb_killed_by(pids[i], SIGKILL, 3000);
		is_int(killed, 6, "deep %s: all 6 died, down to the deepest", bn);
		rep = cgk_report_free(rep);
	}
out:
	if (fds) {
		for (unsigned i = depth + 1; i-- > 0;)
			if (fds[i] > 0)
				close(fds[i]);
		free(fds);
	}
	if (s.target) {
		int tfd = open(s.target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (tfd >= 0) {
			ok(sb_rmtree_at(tfd, "d") == 0, "deep: the chain is removed");
			close(tfd);
		}
	}
	scene_end(&s);
}

int main(void)
{
	box = sb_start(600);

	test_many_children();
	test_deep();

	return sb_finish(box);
}
