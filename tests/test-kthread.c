// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Kernel threads inside the target are skipped, as the kernel's own
 * cgroup.kill skips them: never signalled, never counted as signalled.
 *
 * An unbound kernel thread that ignores signals (khungtaskd and the like)
 * is moved into a sandbox beside user processes, each signalling backend
 * runs, and the thread is handed back to the root cgroup afterwards (the
 * sandbox does that too, if this test dies). Without the skip, the report
 * counts one process more than the user processes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgkill.h"
#include "support/cgfile.h"
#include "support/kill.h"
#include "support/sandbox.h"
#include "support/spawn.h"
#include "support/tap.h"

#define PF_KTHREAD_ 0x00200000UL
#define PF_NO_SETAFFINITY_ 0x04000000UL
#define USERS 3

/* Threads that sleep on their own timers and take no signals. */
static const char *const harmless[] = { "khungtaskd", "oom_reaper", "kcompactd0", "khugepaged", NULL };

static bool stat_of(pid_t pid, char *comm, size_t size, unsigned long *flags, pid_t *ppid)
{
	char path[64], buf[1024], *open_, *close_;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	open_ = strchr(buf, '(');
	close_ = strrchr(buf, ')');
	if (!open_ || !close_ || close_ < open_)
		return false;
	snprintf(comm, size, "%.*s", (int)(close_ - open_ - 1), open_ + 1);
	return sscanf(close_ + 1, " %*c %d %*d %*d %*d %*d %lu", ppid, flags) == 2;
}

/* A kernel thread the cgroup core lets us move, or 0. */
static pid_t find_kthread(char *comm, size_t size)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t found = 0;

	while (d && !found && (de = readdir(d))) {
		pid_t pid = (pid_t)atoi(de->d_name), ppid = 0;
		unsigned long flags = 0;

		if (pid <= 2 || !stat_of(pid, comm, size, &flags, &ppid))
			continue;
		if (ppid != 2 || !(flags & PF_KTHREAD_) || (flags & PF_NO_SETAFFINITY_))
			continue;
		for (const char *const *h = harmless; *h && !found; h++)
			if (strcmp(comm, *h) == 0)
				found = pid;
	}
	if (d)
		closedir(d);
	return found;
}

static int move(const char *dir, pid_t pid)
{
	char text[32];

	snprintf(text, sizeof(text), "%d", pid);
	return sb_write(dir, "cgroup.procs", text);
}

static void one_backend(enum sb_hier h, enum cgk_backend b, pid_t kthread, const char *comm)
{
	const char *name = cgk_backend_name(b);
	char *box = sb_create(h);
	cgk_report *rep = NULL;
	pid_t users[USERS];
	int r;

	if (!box || sb_spawn_n(USERS, SB_SLEEP, NULL, box, users) < 0) {
		ok(false, "%s: sandbox with %d sleepers: %s", name, USERS, strerror(errno));
		free(box);
		return;
	}
	if (!ok(move(box, kthread) == 0, "%s: kernel thread %s (%d) moved into %s", name, comm,
		kthread, sb_hier_name(h))) {
		sb_destroy(box);
		free(box);
		return;
	}
	/* CGK_FORCE only to skip the protected list; none applies. */
	r = kill_opts(box, b, SIGKILL, CGK_FORCE, 300, NULL, &rep);
	is_int(r, -ETIMEDOUT, "%s: the kernel thread stays, so the wait times out", name);
	is_int(cgk_report_signalled(rep), USERS, "%s: only the %d user processes were signalled", name, USERS);
	ok(cgk_report_n_processes(rep, CGK_LIST_SURVIVORS) == 1 &&
	   rep_has_pid(rep, CGK_LIST_SURVIVORS, kthread) == 1,
	   "%s: the kernel thread is the one survivor reported", name);
	for (int i = 0; i < USERS; i++)
		ok(sb_killed_by(users[i], SIGKILL, 5000), "%s: user process %d killed", name, i);
	ok(sb_member(box, kthread) && kill(kthread, 0) == 0,
	   "%s: the kernel thread is still there, untouched", name);
	rep = cgk_report_free(rep);

	/* Back where it came from before anything else can go wrong. */
	ok(sb_destroy(box) == 0, "%s: sandbox removed, kernel thread handed back", name);
	ok(!sb_member(box, kthread) && kill(kthread, 0) == 0, "%s: %s alive outside the sandbox",
	   name, comm);
	free(box);
}

int main(void)
{
	char comm[64];
	pid_t kthread;

	sb_init(120);
	sb_require_root();
	no_plan();
	kthread = find_kthread(comm, sizeof(comm));
	if (!kthread)
		skip_all("no movable kernel thread among khungtaskd, oom_reaper, kcompactd0, khugepaged");
	note("kernel thread %s, pid %d", comm, kthread);

	if (sb_mount(SB_V2)) {
		one_backend(SB_V2, CGK_BACKEND_FREEZE, kthread, comm);
		one_backend(SB_V2, CGK_BACKEND_LOOP, kthread, comm);
	} else {
		skip("no cgroup v2 mount: freeze and loop on v2");
	}
	if (sb_mount(SB_V1_PIDS))
		one_backend(SB_V1_PIDS, CGK_BACKEND_LOOP, kthread, comm);
	else
		skip("no v1 pids hierarchy: loop on v1");
	return done_testing();
}

