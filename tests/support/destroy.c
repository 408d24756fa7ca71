// SPDX-License-Identifier: LGPL-2.1-or-later
/* Killing what is left in a sandbox subtree and removing it, bottom-up, by
 * path (sb_destroy(), also run by the watchdog) or by directory fds
 * (sb_rmtree_at()); see sandbox.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cgfile.h"
#include "deadline.h"
#include "sandbox.h"
#include "spawn.h"
#include "tap.h"

#define SB_DESTROY_MS 15000

static int sys_pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static bool pid_in(const pid_t *v, size_t n, pid_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == pid)
			return true;
	return false;
}

/*
 * SIGKILL what is listed in one sandbox cgroup. A pid is only signalled if
 * it is still listed after its pidfd was opened, so a recycled pid of an
 * unrelated process is never hit. Never pid 0, 1, ourselves or the watchdog.
 */
static void kill_listed(const char *dir)
{
	pid_t *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	int *fds;

	if (sb_list_pids(dir, &a, &na) < 0 || na == 0 || !(fds = calloc(na, sizeof(int)))) {
		free(a);
		return;
	}
	for (size_t i = 0; i < na; i++)
		fds[i] = a[i] <= 1 || a[i] == getpid() || sb_is_ours(a[i]) ? -1 :
			 sys_pidfd_open(a[i]);
	if (sb_list_pids(dir, &b, &nb) == 0) {
		for (size_t i = 0; i < na; i++)
			if (fds[i] >= 0 && pid_in(b, nb, a[i]))
				syscall(SYS_pidfd_send_signal, fds[i], SIGKILL, NULL, 0);
	}
	for (size_t i = 0; i < na; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	free(a);
	free(b);
}

/* PF_KTHREAD in /proc/PID/stat (field 9; comm may hold ')' and spaces). */
static bool pid_is_kthread(pid_t pid)
{
	char dir[64], buf[1024], *p;
	unsigned long flags = 0;

	snprintf(dir, sizeof(dir), "/proc/%d", (int)pid);
	if (sb_read(dir, "stat", buf, sizeof(buf)) <= 0)
		return false;
	p = strrchr(buf, ')');
	return p && sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) == 1 &&
	       (flags & 0x00200000);
}

/* A kernel thread a test moved in outlives every kill: hand it back to
 * the root cgroup of the hierarchy, where kernel threads live, or the
 * rmdir fails for ever. */
static void return_kthreads(const char *dir, const char *sandbox)
{
	const char *at = strstr(sandbox, "/" SB_PREFIX);
	char root[PATH_MAX], pid_text[32];
	pid_t *v = NULL;
	size_t n = 0;

	if (!at || sb_list_pids(dir, &v, &n) < 0)
		return;
	snprintf(root, sizeof(root), "%.*s", (int)(at - sandbox), sandbox);
	for (size_t i = 0; i < n; i++) {
		if (v[i] > 0 && pid_is_kthread(v[i])) {
			snprintf(pid_text, sizeof(pid_text), "%d", v[i]);
			sb_write(root, "cgroup.procs", pid_text);
		}
	}
	free(v);
}

static bool subtree_holds(const struct sb_dirs *d, pid_t pid)
{
	bool found = false;

	for (size_t i = 0; i < d->n && !found; i++)
		found = sb_member(d->v[i], pid);
	return found;
}

/* One round: thaw, kill, remove bottom-up; true if all is gone. */
static bool destroy_round(const char *path, int version)
{
	struct sb_dirs d = { 0 };
	bool all_gone = true;

	sb_subtree(path, &d);
	/* Thaw top-down: a frozen task does not die (v1) or linger. */
	for (size_t i = 0; i < d.n; i++) {
		if (version == 2) {
			sb_write(d.v[i], "cgroup.freeze", "0");
		} else {
			sb_write(d.v[i], "freezer.state", "THAWED");
			sb_write(d.v[i], "pids.max", "0");
		}
	}
	if (version == 2 && !subtree_holds(&d, getpid()))
		sb_write(path, "cgroup.kill", "1");
	for (size_t i = d.n; i-- > 0;) {
		return_kthreads(d.v[i], path);
		kill_listed(d.v[i]);
	}
	if (sb_is_ours(getpid()))
		sb_reap();
	for (size_t i = d.n; i-- > 0;)
		if (rmdir(d.v[i]) < 0 && errno != ENOENT)
			all_gone = false;
	sb_dirs_free(&d);
	return all_gone;
}

int sb_destroy(const char *path)
{
	uint64_t deadline = sb_now_ms() + sb_deadline_ms(SB_DESTROY_MS);
	int version = sb_version_of(path);
	unsigned backoff = 1;
	struct stat st;

	if (version == 0)
		return -EINVAL;
	/* Never a hierarchy root or anything outside a sandbox. */
	if (!strstr(path, "/" SB_PREFIX))
		return -EPERM;
	for (;;) {
		if ((lstat(path, &st) < 0 && errno == ENOENT) || destroy_round(path, version))
			return 0;
		if (sb_now_ms() > deadline) {
			fprintf(stderr, "# sandbox: could not remove %s\n", path);
			return -EBUSY;
		}
		sb_sleep_ms(backoff);
		if (backoff < 64)
			backoff *= 2;
	}
}

void sb_discard(char *path)
{
	if (path)
		sb_destroy(path);
	free(path);
}

/* The subdirectories of dirfd, malloc'ed names. */
static size_t child_names(int dirfd, char ***names)
{
	int dfd = dup(dirfd);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *e;
	size_t n = 0;

	*names = NULL;
	while (d && (e = readdir(d))) {
		char **nv;

		if (e->d_type != DT_DIR || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		nv = realloc(*names, (n + 1) * sizeof(**names));
		if (!nv)
			break;
		*names = nv;
		nv[n++] = strdup(e->d_name);
	}
	if (d)
		closedir(d);
	else if (dfd >= 0)
		close(dfd);
	return n;
}

static int rmtree_at(int parentfd, const char *name, unsigned depth)
{
	uint64_t deadline = sb_now_ms() + sb_deadline_ms(SB_DESTROY_MS);
	unsigned backoff = 1;
	char **names;
	size_t n;
	int fd;

	fd = openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (depth == 0) {
		int k = openat(fd, "cgroup.kill", O_WRONLY | O_CLOEXEC);

		/* A failure is not fatal: the rmdir below retries. */
		if (k >= 0 && write(k, "1", 1) < 0)
			diag("rmtree: cgroup.kill of %s: %m", name);
		if (k >= 0)
			close(k);
	}
	n = child_names(fd, &names);
	for (size_t i = 0; i < n; i++) {
		if (names[i])
			rmtree_at(fd, names[i], depth + 1);
		free(names[i]);
	}
	free(names);
	close(fd);
	for (;;) {
		if (unlinkat(parentfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
			return 0;
		if (sb_now_ms() > deadline)
			return -errno;
		sb_reap();
		sb_sleep_ms(backoff);
		if (backoff < 64)
			backoff *= 2;
	}
}

int sb_rmtree_at(int parentfd, const char *name)
{
	return rmtree_at(parentfd, name, 0);
}

