/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Sandbox cgroups for the tests, which kill real processes.
 *
 * Every cgroup a test touches is created below <mount>/cgkill-test.<pid>.<n>
 * on the v2 mount or on a v1 hierarchy, and removed again: by sb_destroy(),
 * by an atexit handler, and, if the test dies or hangs, by a watchdog
 * process started by sb_init() that kills the test after its time limit and
 * sweeps whatever cgkill-test.<pid>.* directories are left.
 *
 * The files of a cgroup are read and written with cgfile.h; processes are
 * started in sandbox cgroups with spawn.h.
 */
#ifndef CGK_TEST_SANDBOX_H
#define CGK_TEST_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SB_PREFIX "cgkill-test."

enum sb_hier {
	SB_V2,		/* the cgroup v2 mount */
	SB_V1_FREEZER,	/* the v1 hierarchy with the freezer controller */
	SB_V1_PIDS,	/* the v1 hierarchy with the pids controller */
	SB_V1_MEMORY,	/* the v1 hierarchy with the memory controller */
	SB_HIER_COUNT_
};

/* Start the watchdog (time limit in seconds on an idle machine, stretched
 * by sb_deadline_ms(); $CGKILL_TEST_TIMEOUT overrides),
 * become a child subreaper, find the cgroup mounts. Call first in main(). */
void sb_init(unsigned timeout_s);
/* The start of most test programs: sb_init(timeout_s), root or skip_all(),
 * no_plan(), and a sandbox on the v2 mount (skip_all() without one, bail
 * out if it cannot be made), noted. Returns the sandbox. */
char *sb_start(unsigned timeout_s);
/* Their end: the sandbox removed (a test point) and freed; the exit code of
 * done_testing(). */
int sb_finish(char *box);
/* The same for sandboxes on the v1 freezer and pids hierarchies and on v2,
 * each NULL where there is no such hierarchy; skip_all() if there is no v1
 * hierarchy at all. */
struct sb_boxes {
	char *fz, *pd, *v2;
};
void sb_start_v1(struct sb_boxes *b, unsigned timeout_s);
int sb_finish_v1(struct sb_boxes *b);
/* skip_all() unless running as root. */
void sb_require_root(void);
/* The test process (sb_init's caller) and its watchdog: never signalled by
 * the sandbox's own cleanup. */
bool sb_is_ours(pid_t pid);
/* Mount point of a hierarchy, or NULL if there is none on this machine. */
const char *sb_mount(enum sb_hier h);
const char *sb_hier_name(enum sb_hier h);
/* Version (1 or 2) of the hierarchy that holds path, 0 if unknown. */
int sb_version_of(const char *path);
/* The mount point of the hierarchy that holds path, NULL if none. */
const char *sb_mount_of(const char *path);
/* path relative to the v2 mount ("/cgkill-test.1.0/x/T"), as the protected
 * list and /proc/PID/cgroup spell it. */
const char *sb_rel_v2(const char *path);

/* Create a fresh sandbox <mount>/cgkill-test.<pid>.<n>: a malloc'ed path, or
 * NULL with errno set. Registered for cleanup at exit. */
char *sb_create(enum sb_hier h);
/* mkdir -p base/rel ("A/B/C"): a malloc'ed path, or NULL with errno set. */
char *sb_mkdir(const char *base, const char *rel);
/* base/rel as a malloc'ed string (no mkdir). */
char *sb_path(const char *base, const char *rel);
/* Kill everything in the subtree, thaw it, rmdir it bottom-up (bounded).
 * 0, or -errno if something could not be removed. */
int sb_destroy(const char *path);
/* sb_destroy() (if path is not NULL) and free(path). */
void sb_discard(char *path);
/* Destroy every sandbox created by sb_create() (also run at exit). */
void sb_cleanup_all(void);
/* Kill (v2 cgroup.kill) and remove the cgroup name below parentfd with all
 * its descendants, bottom-up, by fds: for trees deeper or longer than the
 * path-based sb_destroy() handles. Bounded; 0 or -errno. */
int sb_rmtree_at(int parentfd, const char *name);

uint64_t sb_now_ms(void);
void sb_sleep_ms(unsigned ms);

#endif
