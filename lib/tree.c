/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Walk a cgroup subtree by directory fds and read its process lists. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "internal.h"

struct names {
	size_t n, cap;
	char **v;
};

static void names_free(struct names *names)
{
	for (size_t i = 0; i < names->n; i++)
		free(names->v[i]);
	free(names->v);
}

static int names_add(struct names *out, const char *name)
{
	char **v = cgk_grow(out->v, &out->cap, out->n + 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	out->v = v;
	out->v[out->n] = strdup(name);
	if (!out->v[out->n])
		return -ENOMEM;
	out->n++;
	return 0;
}

/* fn for every entry of the directory fd, read with getdents64; stops at
 * fn's first non-zero return and returns it. 0 or -errno. */
static int each_entry(int fd, int (*fn)(const struct dirent64 *de, void *arg), void *arg)
{
	char buf[8192] __attribute__((aligned(8)));

	for (;;) {
		ssize_t n = getdents64(fd, buf, sizeof(buf));

		if (n <= 0)
			return n < 0 ? -errno : 0;
		for (ssize_t off = 0; off < n;) {
			const struct dirent64 *de = (const void *)(buf + off);
			int r;

			off += de->d_reclen;
			r = fn(de, arg);
			if (r)
				return r;
		}
	}
}

static int add_child(const struct dirent64 *de, void *arg)
{
	/* Only "." and "..": a cgroup may be named ".hidden". */
	if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
		return 0;
	return names_add(arg, de->d_name);
}

/*
 * Names of the child cgroups, read before descending, so a deep tree holds
 * one fd per level. A child's fd is ours and read once per walk: its
 * entries come straight from it. The target's fd may be the caller's
 * (cgk_kill_fd) and is walked again on every pass: a fresh one is opened,
 * leaving the caller's offset alone.
 */
static int list_children(int cgfd, bool own, struct names *out)
{
	struct stat st;
	int fd, r;

	/* kernfs keeps a directory's link count at 2 + its subdirectories, as
	 * classic Unix filesystems do: a leaf needs no directory read (which
	 * walks every interface file: a fifth of a wide tree's kill). */
	if (fstat(cgfd, &st) == 0 && st.st_nlink == 2)
		return 0;
	fd = own ? cgfd : openat(cgfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = each_entry(fd, add_child, out);
	if (!own)
		close(fd);
	return r;
}

/* A cgroup below cgfd ("a" or "a/b"): never through a symlink, never onto
 * another mount (a bind mount inside the subtree would lead outside the
 * target), never above cgfd. -EXDEV names the mount case. */
static int open_below(int cgfd, const char *rel)
{
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS |
			   RESOLVE_NO_MAGICLINKS,
	};
	_cleanup_free_ char *copy = NULL;
	char *save = NULL;
	int fd = (int)syscall(SYS_openat2, cgfd, rel, &how, sizeof(how));

	if (fd >= 0 || errno != ENOSYS)
		return fd < 0 ? -errno : fd;
	/* Before 5.6: one component at a time; a mount of another
	 * filesystem at least shows in st_dev. */
	copy = strdup(rel);
	if (!copy)
		return -ENOMEM;
	fd = cgfd;
	for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		struct stat parent, child;
		int next = -EINVAL;

		if (strcmp(c, ".") && strcmp(c, "..")) {
			next = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			next = next < 0 ? -errno : next;
		}
		if (next >= 0 && (fstat(fd, &parent) < 0 || fstat(next, &child) < 0 ||
				  parent.st_dev != child.st_dev)) {
			close(next);
			next = -EXDEV;
		}
		if (fd != cgfd)
			close(fd);
		if (next < 0)
			return next;
		fd = next;
	}
	return fd == cgfd ? -EINVAL : fd;
}

/* own: cgfd was opened by the walk (a child), not handed in (the target).
 * rel names the cgroup below the target, "" for the target itself. */
static int walk(struct cgk_run *run, int cgfd, bool own, const char *rel, cgk_visit_fn fn,
		void *arg)
{
	struct names children = { 0 };
	int r = fn(run, cgfd, rel, arg);

	if (r < 0)
		return r;
	r = list_children(cgfd, own, &children);
	/* Removed while we looked: nothing left to do below it. */
	if (r == -ENOENT)
		r = 0;
	else if (r < 0)
		cgk_error_set(&run->err, r, "cannot list the child cgroups of %s",
			      *rel ? rel : "the target");
	for (size_t i = 0; r >= 0 && i < children.n; i++) {
		_cleanup_free_ char *child_rel = NULL;
		int child = open_below(cgfd, children.v[i]);

		if (child == -ENOENT)
			continue;
		if (child < 0) {
			r = cgk_error_set(&run->err, child, "cannot enter child cgroup %s%s%s%s", rel,
					  *rel ? "/" : "", children.v[i],
					  child == -EXDEV ? " (a mount point: refusing to cross it)" : "");
			break;
		}
		if (asprintf(&child_rel, "%s%s%s", rel, *rel ? "/" : "", children.v[i]) < 0)
			r = -ENOMEM;
		else
			r = walk(run, child, true, child_rel, fn, arg);
		close(child);
	}
	names_free(&children);
	return r;
}

int cgk_tree_walk(struct cgk_run *run, cgk_visit_fn fn, void *arg)
{
	return walk(run, run->t->fd, false, "", fn, arg);
}

struct procs_walk {
	cgk_procs_fn fn;
	void *arg;
};

static int procs_visit(struct cgk_run *run, int cgfd, const char *rel, void *arg)
{
	struct procs_walk *w = arg;
	struct cgk_pidvec pids = { 0 };
	int r = cgk_read_procs(cgfd, &pids);

	/* The target itself threaded is refused before any walk. */
	if (r == -ENOENT || (r == -EOPNOTSUPP && *rel))
		r = 0;
	else if (r < 0)
		cgk_error_set(&run->err, r, "cannot read cgroup.procs of %s", *rel ? rel : "the target");
	else
		r = w->fn(run, cgfd, rel, &pids, w->arg);
	cgk_pidvec_free(&pids);
	return r;
}

int cgk_tree_walk_procs(struct cgk_run *run, cgk_procs_fn fn, void *arg)
{
	struct procs_walk w = { .fn = fn, .arg = arg };

	return cgk_tree_walk(run, procs_visit, &w);
}

struct count {
	unsigned procs, cgroups;
	struct cgk_process_list *list;
};

int cgk_proc_stat(int procfd, pid_t pid, struct cgk_process *p, unsigned long *flags)
{
	char name[32], buf[1024];
	int fd;
	ssize_t n;

	p->state = '?';
	snprintf(name, sizeof(name), "%d/stat", pid);
	fd = openat(procfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = '\0';
	/* "pid (comm) S ...": comm may hold any byte, ')' and spaces too, so
	 * look for the last ')'. */
	char *open = strchr(buf, '('), *close_ = strrchr(buf, ')');
	if (!open || !close_ || close_ < open || close_[1] != ' ' || !close_[2])
		return -EIO;
	size_t len = (size_t)(close_ - open - 1);
	if (len >= sizeof(p->comm))
		len = sizeof(p->comm) - 1;
	memcpy(p->comm, open + 1, len);
	p->comm[len] = '\0';
	p->state = close_[2];
	/* Field 9, after state, ppid, pgrp, session, tty_nr, tpgid. */
	if (flags && sscanf(close_ + 3, " %*d %*d %*d %*d %*d %lu", flags) != 1)
		return -EIO;
	return 0;
}

static int count_visit(struct cgk_run *run, int cgfd, const char *rel,
		       const struct cgk_pidvec *pids, void *arg)
{
	struct count *c = arg;
	int r = 0;

	(void)cgfd;
	c->cgroups++;
	c->procs += (unsigned)pids->n;
	for (size_t i = 0; c->list && r >= 0 && i < pids->n; i++) {
		struct cgk_process *p;

		r = cgk_process_list_add(c->list, pids->v[i], rel, &p);
		if (r >= 0 && pids->v[i] > 0 && run->proc_ours)
			cgk_proc_stat(run->procfd, pids->v[i], p, NULL);
	}
	return r;
}

int cgk_tree_count(struct cgk_run *run, unsigned *procs, unsigned *cgroups)
{
	struct count c = { 0 };
	int r = cgk_tree_walk_procs(run, count_visit, &c);

	if (procs)
		*procs = c.procs;
	if (cgroups)
		*cgroups = c.cgroups;
	return r;
}

int cgk_tree_cgroups(struct cgk_run *run, unsigned *cgroups)
{
	_cleanup_free_ char *stat = NULL;
	const char *key;
	unsigned long n;

	/* v2 keeps the count: no walk needed. */
	if (cgk_read_file_at(run->t->fd, "cgroup.stat", &stat, NULL) == 0 &&
	    (key = strstr(stat, "nr_descendants ")) &&
	    (key == stat || key[-1] == '\n') && sscanf(key, "nr_descendants %lu", &n) == 1) {
		*cgroups = (unsigned)n + 1;
		return 0;
	}
	return cgk_tree_count(run, NULL, cgroups);
}

/* The part of path (a cgroup as /proc/PID/cgroup names it) below the
 * target: "" for the target itself, "a/b" below it, NULL if not inside. */
static const char *below_target(const struct cgk_run *run, const char *path)
{
	const char *rel = run->t->rel;
	size_t len = strlen(rel);

	if (strcmp(rel, "/") == 0)
		return path[0] == '/' ? path + 1 : NULL;
	if (strncmp(path, rel, len) || (path[len] && path[len] != '/'))
		return NULL;
	return path[len] ? path + len + 1 : "";
}

/* The cgroup below the target named below ("" for the target itself) as
 * an fd opened beneath the target's. */
static int open_in_target(struct cgk_run *run, const char *below)
{
	int fd;

	if (*below)
		return open_below(run->t->fd, below);
	fd = openat(run->t->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Is the cgroup named path (as /proc shows it) the one at fd? 1 or 0, or
 * -errno when that cannot be told (a name beyond PATH_MAX, say). */
static int same_cgroup(const struct cgk_run *run, const char *path, int fd)
{
	const struct cgk_target *t = run->t;
	char global[8192];
	struct stat a, b;
	int n = snprintf(global, sizeof(global), "%.*s%s", (int)t->mnt_len, t->path,
			 path + t->root_len);

	if (n < 0 || (size_t)n >= sizeof(global))
		return -ENAMETOOLONG;
	if (fstatat(AT_FDCWD, global, &a, AT_SYMLINK_NOFOLLOW) < 0 || fstat(fd, &b) < 0)
		return -errno;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* The cgroup of pid ("123", "self") in the target's hierarchy, as
 * /proc/PID/cgroup names it. */
static int read_proc_cgroup(struct cgk_run *run, const char *pid, char *path, size_t size)
{
	_cleanup_free_ char *buf = NULL;
	char name[64];
	int r;

	snprintf(name, sizeof(name), "%s/cgroup", pid);
	r = cgk_read_file_at(run->procfd, name, &buf, NULL);
	return r < 0 ? r : cgk_parse_proc_cgroup(buf, run->t->version == 2 ? NULL : run->t->controllers,
						 path, size);
}

/* The cgroup /proc/PID/cgroup names for pid ("123", "self"), if it is in
 * the subtree: its fd (beneath the target's) and *below; 0 if outside,
 * -errno if that cannot be told. */
static int proc_cgroup_in_subtree(struct cgk_run *run, const char *pid, char *path, size_t size,
				  const char **below)
{
	int r = read_proc_cgroup(run, pid, path, size), fd;

	if (r < 0)
		return r;
	if (!(*below = below_target(run, path)))
		return 0;
	/* Not beneath the target under that name (renamed away, or a name
	 * /proc cut short near PATH_MAX): cannot tell. */
	fd = open_in_target(run, *below);
	if (fd < 0)
		return fd;
	r = same_cgroup(run, path, fd);
	if (r > 0)
		return fd;
	close(fd);
	return r;
}

int cgk_pid_in_subtree(struct cgk_run *run, const char *pid)
{
	char path[4096];
	const char *below;
	int fd = proc_cgroup_in_subtree(run, pid, path, sizeof(path), &below);

	if (fd <= 0)
		return fd;
	close(fd);
	return 1;
}

/* A cheap answer where the kernel keeps one: populated (v2), or the pids
 * controller's count of the whole subtree (it counts zombies too, so only
 * a 0 is an answer). A removed target is empty: only an empty cgroup can
 * be removed. */
static bool known_empty(struct cgk_run *run)
{
	_cleanup_close_ int fd = -1;

	if (faccessat(run->t->fd, "cgroup.procs", F_OK, 0) < 0 && errno == ENOENT)
		return true;
	if (run->t->version == 2) {
		fd = openat(run->t->fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
		return fd >= 0 && cgk_events_value(fd, "populated") == 0;
	}
	return cgk_pids_current_zero(run->t->fd) == 1;
}

struct scan {
	struct cgk_run *run;
	bool skip_done;
	cgk_found_fn fn;
	void *arg;
};

/* Tries on a lead whose process keeps moving within the subtree. */
#define LEAD_TRIES 16

/* The fd of the cgroup below the target named below if its list holds
 * pid, else 0 (also when it vanished, or is threaded: its domain lists
 * it). */
static int listed_in(struct cgk_run *run, const char *below, pid_t pid)
{
	struct cgk_pidvec listed = { 0 };
	int fd = open_in_target(run, below);
	bool found;

	if (fd < 0)
		return 0;
	/* On v1 "tasks": a process-directed signal needs its leader there. */
	found = cgk_read_pid_file(fd, run->t->version == 1 ? "tasks" : "cgroup.procs", &listed) >= 0;
	cgk_pidvec_sort(&listed);
	found = found && cgk_pidvec_has_sorted(&listed, pid);
	cgk_pidvec_free(&listed);
	if (!found) {
		close(fd);
		return 0;
	}
	return fd;
}

/*
 * /proc names processes and their cgroups by strings: a number of the pid
 * namespace it was mounted for, a path that another cgroup may have taken
 * since (a renamed or removed target's). In a /proc of our own namespace
 * the number is ours, and the cgroup its path names must be the very
 * directory found beneath the target's fd (a process that keeps moving
 * within the subtree passes this wherever it is). In any other /proc a
 * number is only a lead: the pid must be in the list of the cgroup its
 * path names, which the kernel writes in our pid namespace; a lead whose
 * process moved on meanwhile is followed while /proc shows it elsewhere.
 * Zombies are in no list, and leave the cgroup. (On v1 "tasks": a
 * process-directed signal needs its leader there.)
 */
static int scan_entry(const struct dirent64 *de, void *arg)
{
	struct scan *sc = arg;
	struct cgk_run *run = sc->run;
	char path[4096], seen[4096] = "";
	const char *below;
	char *end;
	long pid = strtol(de->d_name, &end, 10);
	int cgfd, r = 0;

	if (*end || pid <= 0 || pid > INT32_MAX || pid == run->self ||
	    (sc->skip_done && cgk_pidset_has(&run->done, (pid_t)pid)))
		return 0;
	if (run->proc_ours) {
		struct cgk_process p;

		cgfd = proc_cgroup_in_subtree(run, de->d_name, path, sizeof(path), &below);
		if (cgfd <= 0)
			return 0;
		if (cgk_proc_stat(run->procfd, (pid_t)pid, &p, NULL) < 0 || (p.state != 'Z' && p.state != 'X'))
			r = sc->fn(run, cgfd, below, (pid_t)pid, sc->arg);
		close(cgfd);
		return r;
	}
	for (unsigned try = 0; try < LEAD_TRIES; try++) {
		/* Gone meanwhile, or not ours to look at: not in it. */
		if (read_proc_cgroup(run, de->d_name, path, sizeof(path)) < 0 ||
		    !(below = below_target(run, path)) || strcmp(path, seen) == 0)
			return 0;
		cgfd = listed_in(run, below, (pid_t)pid);
		if (cgfd > 0) {
			r = sc->fn(run, cgfd, below, (pid_t)pid, sc->arg);
			close(cgfd);
			return r;
		}
		memcpy(seen, path, sizeof(seen));
	}
	return 0;
}

int cgk_subtree_scan(struct cgk_run *run, bool skip_done, cgk_found_fn fn, void *arg)
{
	struct scan sc = { .run = run, .skip_done = skip_done, .fn = fn, .arg = arg };
	_cleanup_close_ int fd = -1;

	/* Paths from /proc compare only within our cgroup namespace. */
	if (strncmp(run->t->rel, "/..", 3) == 0)
		return -EOPNOTSUPP;
	if (known_empty(run))
		return 0;
	fd = openat(run->procfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return each_entry(fd, scan_entry, &sc);
}

/* In a /proc of our pid namespace, "self" has one NSpid field: our pid. In
 * an ancestor's /proc it has one per level, in any other it is missing. */
void cgk_proc_check(struct cgk_run *run)
{
	_cleanup_free_ char *buf = NULL;
	const char *ns;
	struct stat st;
	char *end;

	run->proc_ours = false;
	run->kthreads_visible = true;
	if (cgk_read_file_at(run->procfd, "self/status", &buf, NULL) < 0 ||
	    !(ns = strstr(buf, "\nNSpid:")))
		return;
	run->proc_ours = strtol(ns + 7, &end, 10) == run->self && *end == '\n';
	/* Kernel threads show only in the initial pid namespace, whose nsfs
	 * inode number is fixed (PROC_PID_INIT_INO). */
	if (!run->proc_ours && fstatat(run->procfd, "self/ns/pid", &st, 0) == 0)
		run->kthreads_visible = st.st_ino == 0xEFFFFFFCU;
}

int cgk_tree_list(struct cgk_run *run, struct cgk_process_list *out, unsigned *cgroups)
{
	struct count c = { .list = out };
	int r = cgk_tree_walk_procs(run, count_visit, &c);

	if (cgroups)
		*cgroups = c.cgroups;
	return r;
}
