/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Resolve a target into a directory fd on a cgroup filesystem, without
 * following symlinks. From then on everything happens relative to that fd:
 * no path string is resolved again.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>

#include "internal.h"

/* statmount(2), Linux 6.8; our own names, as libc headers may not have it. */
#ifndef __NR_statmount
#if !defined(__alpha__) && !defined(_MIPS_SIM)
#define __NR_statmount 457	/* the same on every other architecture */
#endif
#endif
#define CGK_STATX_MNT_ID_UNIQUE 0x4000U
#define CGK_STATMOUNT_MNT_ROOT 0x08U
#define CGK_STATMOUNT_MNT_POINT 0x10U
struct cgk_mnt_id_req {
	uint32_t size, spare;
	uint64_t mnt_id, param;
};
struct cgk_statmount {
	uint32_t size, mnt_opts;
	uint64_t mask;
	uint32_t sb_dev_major, sb_dev_minor;
	uint64_t sb_magic;
	uint32_t sb_flags, fs_type;
	uint64_t mnt_id, mnt_parent_id;
	uint32_t mnt_id_old, mnt_parent_id_old;
	uint64_t mnt_attr, mnt_propagation, mnt_peer_group, mnt_master, propagate_from;
	uint32_t mnt_root, mnt_point;	/* offsets into str */
	uint64_t spare2[50];
	char str[];
};

int cgk_mounts_read(struct cgk_mount **out, size_t *n)
{
	_cleanup_free_ char *buf = NULL;
	size_t len;
	int r = cgk_read_file_at(AT_FDCWD, "/proc/self/mountinfo", &buf, &len);

	if (r < 0)
		return r;
	return cgk_parse_mountinfo(buf, len, out, n);
}

/* Is path equal to prefix or below it, at a component boundary? */
static bool path_below(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	if (n == 1 && prefix[0] == '/')
		return path[0] == '/';
	return strncmp(path, prefix, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static int open_nofollow(const char *path)
{
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));

	if (fd >= 0 || errno != ENOSYS)
		return fd < 0 ? -errno : fd;

	/* Before 5.6: walk component by component with O_NOFOLLOW. */
	_cleanup_free_ char *copy = strdup(path);
	char *save = NULL;
	int dir = open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (!copy || dir < 0) {
		if (dir >= 0)
			close(dir);
		return -ENOMEM;
	}
	for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		int next = openat(dir, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int err = errno;

		close(dir);
		if (next < 0)
			return -err;
		dir = next;
	}
	fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(dir);
	return fd < 0 ? -errno : fd;
}


/* The cgroup v2 mount fd is on, from statmount(2): 5 us where reading all
 * of mountinfo takes 50, and a kill should start at once. v2 only, as v1
 * needs the controllers from the super options. Any error: not here. */
static int statmount_of(int fd, struct cgk_mount *m, struct cgk_statmount *sm, size_t size)
{
#ifdef __NR_statmount
	const uint64_t want = CGK_STATMOUNT_MNT_ROOT | CGK_STATMOUNT_MNT_POINT;
	struct cgk_mnt_id_req req = { .size = sizeof(req), .param = want };
	struct statx sx;

	if (statx(fd, "", AT_EMPTY_PATH, CGK_STATX_MNT_ID_UNIQUE, &sx) < 0 ||
	    !(sx.stx_mask & CGK_STATX_MNT_ID_UNIQUE))
		return -EOPNOTSUPP;
	req.mnt_id = sx.stx_mnt_id;
	if (syscall(__NR_statmount, &req, sm, size, 0) < 0)
		return -errno;
	if ((sm->mask & want) != want || sm->mnt_root >= size || sm->mnt_point >= size)
		return -EOPNOTSUPP;
	*m = (struct cgk_mount){ .version = 2, .root = sm->str + sm->mnt_root,
				 .path = sm->str + sm->mnt_point };
	return 0;
#else
	(void)fd, (void)m, (void)sm, (void)size;
	return -EOPNOTSUPP;
#endif
}

/* Of the cgroup mounts, the one with the longest mount point above the
 * path on the same filesystem as the target. */
static const struct cgk_mount *mount_of_path(const struct cgk_target *t, dev_t dev,
					     const struct cgk_mount *mounts, size_t n)
{
	const struct cgk_mount *found = NULL;

	for (size_t i = 0; i < n; i++) {
		struct stat mst;

		if (mounts[i].version != t->version || !path_below(t->path, mounts[i].path))
			continue;
		if (found && strlen(mounts[i].path) < strlen(found->path))
			continue;
		if (stat(mounts[i].path, &mst) == 0 && mst.st_dev == dev)
			found = &mounts[i];
	}
	return found;
}

/* v2: only non-root cgroups have cgroup.type, and a threaded one cannot be
 * killed as a whole: one read tells both. */
static void read_cgroup_type(struct cgk_target *t)
{
	char type[16] = "";
	int fd = openat(t->fd, "cgroup.type", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0) {
		t->is_root = errno == ENOENT;
		return;
	}
	if (read(fd, type, sizeof(type) - 1) > 0)
		t->threaded = strncmp(type, "threaded", 8) == 0;
	close(fd);
}

/* 2 or 1 for a cgroup filesystem, 0 for any other, -errno. */
static int cgroup_version(int fd)
{
	struct statfs sfs;

	if (fstatfs(fd, &sfs) < 0)
		return -errno;
	return sfs.f_type == CGROUP2_SUPER_MAGIC ? 2 : sfs.f_type == CGROUP_SUPER_MAGIC ? 1 : 0;
}

/* Fill t from an open directory fd and its cgroup_version(); takes
 * ownership of fd. The mount comes from statmount where it can, else from
 * mountinfo. */
static int target_init(int fd, int version, struct cgk_target *t, const char *shown,
		       struct cgk_error *err)
{
	union {
		struct cgk_statmount sm;
		char buf[sizeof(struct cgk_statmount) + 2 * PATH_MAX];
	} sm;
	_cleanup_free_ struct cgk_mount *mounts = NULL;
	const struct cgk_mount *mount = NULL;
	struct cgk_mount one = { 0 };
	struct stat st;
	char link[64];
	size_t n = 0;
	ssize_t len;

	*t = (struct cgk_target){ .fd = fd, .version = version };
	if (version < 0 || fstat(fd, &st) < 0)
		return cgk_error_about(err, version < 0 ? version : -errno, shown, "cannot stat");
	if (version == 0)
		return cgk_error_about(err, -EINVAL, shown, "not a cgroup (not on a cgroup filesystem)");
	if (!S_ISDIR(st.st_mode))
		return cgk_error_about(err, -ENOTDIR, shown, "not a cgroup directory");

	/* The kernel's name for the directory, whatever the spelling was. */
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	len = readlink(link, t->path, sizeof(t->path) - 1);
	if (len < 0)
		return cgk_error_about(err, -errno, shown, "cannot read the path of the cgroup");
	if ((size_t)len >= sizeof(t->path) - 1)
		return cgk_error_about(err, -ENAMETOOLONG, shown, "cgroup path too long");
	t->path[len] = '\0';

	if (t->version == 2 && statmount_of(fd, &one, &sm.sm, sizeof(sm)) == 0 &&
	    path_below(t->path, one.path))
		mount = &one;
	if (!mount) {
		int r = cgk_mounts_read(&mounts, &n);

		if (r < 0)
			return cgk_error_about(err, r, shown, "cannot read /proc/self/mountinfo");
		mount = mount_of_path(t, st.st_dev, mounts, n);
	}
	if (!mount)
		return cgk_error_about(err, -ENOENT, shown, "no cgroup mount found for this path");
	memcpy(t->controllers, mount->controllers, sizeof(t->controllers));

	t->mnt_len = strcmp(mount->path, "/") ? strlen(mount->path) : 0;
	const char *tail = t->path + t->mnt_len;
	const char *root = strcmp(mount->root, "/") ? mount->root : "";

	t->root_len = strlen(root);
	if ((size_t)snprintf(t->rel, sizeof(t->rel), "%s%s", root, tail) >= sizeof(t->rel))
		return cgk_error_about(err, -ENAMETOOLONG, shown, "cgroup path too long");
	if (!t->rel[0])
		strcpy(t->rel, "/");

	/* The root of a hierarchy: nothing above it, or the files only
	 * non-root cgroups have are missing (a mount of a subtree). */
	if (strcmp(t->rel, "/") == 0)
		t->is_root = true;
	else if (t->version == 2)
		read_cgroup_type(t);
	else
		t->is_root = faccessat(fd, "release_agent", F_OK, 0) == 0;
	return 0;
}

/* target_init, closing fd on failure. */
static int target_open_fd(int fd, int version, struct cgk_target *t, const char *shown,
			  struct cgk_error *err)
{
	int r = target_init(fd, version, t, shown, err);

	if (r < 0)
		cgk_target_close(t);
	return r;
}

/*
 * A name as /proc/PID/cgroup shows it, relative to the root of our cgroup
 * namespace ("/a/b", or "a/b"), as a path under a v2 mount that shows that
 * part of the tree: below the mount's root, as mountinfo gives it in the
 * same terms. A mount whose root lies outside our namespace ("/.." there)
 * shows cgroups our names do not reach: appending the name to it would
 * name a cgroup elsewhere in the tree, so such a mount is never used.
 */
static int resolve_name(const char *name, const struct cgk_mount *mounts, size_t n,
			char **full, struct cgk_error *err)
{
	_cleanup_free_ char *abs = NULL;
	bool outside = false;

	if (strcmp(name, "..") == 0 || strncmp(name, "../", 3) == 0 || strstr(name, "/../") ||
	    (strlen(name) >= 3 && strcmp(name + strlen(name) - 3, "/..") == 0))
		return cgk_error_about(err, -EINVAL, name,
				       "a path relative to the cgroup v2 mount may not contain \"..\"");
	if (asprintf(&abs, "%s%s", name[0] == '/' ? "" : "/", name) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct cgk_mount *m = &mounts[i];
		const char *root = strcmp(m->root, "/") ? m->root : "";

		if (m->version != 2)
			continue;
		if (path_below(m->root, "/..")) {
			outside = true;
			continue;
		}
		if (*root && !path_below(abs, root))
			continue;
		if (asprintf(full, "%s%s", m->path, abs + strlen(root)) < 0)
			return -ENOMEM;
		return 0;
	}
	if (outside)
		return cgk_error_about(err, -EXDEV, name,
				       "the cgroup v2 mount shows the tree from outside this cgroup namespace, "
				       "so a name as /proc/PID/cgroup shows it cannot be resolved against it; "
				       "name the cgroup by its path under the mount");
	return cgk_error_about(err, -ENOENT, name,
			       "not inside a cgroup mount, and no cgroup v2 mount shows it");
}

int cgk_target_open(const char *path, struct cgk_target *t, struct cgk_error *err)
{
	_cleanup_free_ struct cgk_mount *mounts = NULL;
	_cleanup_free_ char *full = NULL;
	const char *arg = path;
	bool inside = false;
	size_t n = 0;
	int fd, r;

	*t = (struct cgk_target){ .fd = -1 };
	if (!path || !*path)
		return cgk_error_about(err, -EINVAL, "\"\"", "empty cgroup path");

	/* The usual case, an absolute path to a cgroup: no mount table. */
	fd = path[0] == '/' ? open_nofollow(path) : -ENOENT;
	if (fd >= 0) {
		int version = cgroup_version(fd);

		if (version > 0)
			return target_open_fd(fd, version, t, path, err);
		close(fd);
	}

	r = cgk_mounts_read(&mounts, &n);
	if (r < 0)
		return cgk_error_about(err, r, path, "cannot read /proc/self/mountinfo");
	for (size_t i = 0; i < n; i++)
		if (path[0] == '/' && path_below(path, mounts[i].path))
			inside = true;
	/* Not inside a cgroup mount: a name as /proc/PID/cgroup shows it. */
	if (!inside) {
		r = resolve_name(path, mounts, n, &full, err);
		/* An absolute path that exists is named for what it is below. */
		if (r < 0 && (arg[0] != '/' || faccessat(AT_FDCWD, arg, F_OK, AT_SYMLINK_NOFOLLOW) < 0))
			return r;
		path = r < 0 ? arg : full;
	}

	fd = open_nofollow(path);
	/* Neither a cgroup path nor a v2-relative one: name the real thing. */
	if (fd == -ENOENT && full && arg[0] == '/' &&
	    faccessat(AT_FDCWD, arg, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
		path = arg;
		fd = open_nofollow(path);
	}
	if (fd == -ELOOP || fd == -EXDEV) {
		char real[4096];

		if (realpath(path, real))
			return cgk_error_about(err, -ELOOP, path, "refusing to follow a symlink; name "
					       "the cgroup by its resolved path %s", real);
		return cgk_error_about(err, -ELOOP, path, "refusing to follow a symlink");
	}
	if (fd < 0)
		return cgk_error_about(err, fd, path, "%s",
				       fd == -ENOENT ? "no such cgroup" :
				       fd == -ENOTDIR ? "not a cgroup directory" : "cannot open");
	return target_open_fd(fd, cgroup_version(fd), t, path, err);
}

int cgk_target_from_fd(int fd, struct cgk_target *t, struct cgk_error *err)
{
	char shown[32];
	int dup;

	*t = (struct cgk_target){ .fd = -1 };
	snprintf(shown, sizeof(shown), "fd %d", fd);
	dup = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (dup < 0)
		return cgk_error_about(err, -errno, shown, "bad file descriptor");
	return target_open_fd(dup, cgroup_version(dup), t, shown, err);
}

void cgk_target_close(struct cgk_target *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
}

/* The cgroup of pid in the hierarchy of controller (NULL: v2), as
 * PROC/PID/cgroup names it (proc: a procfs mount, NULL "/proc"), into
 * path. */
static int proc_cgroup(const char *proc, pid_t pid, const char *controller, char *path, size_t size)
{
	_cleanup_free_ char *text = NULL;
	char name[PATH_MAX];
	int r;

	if (pid <= 0)
		return -EINVAL;
	if ((size_t)snprintf(name, sizeof(name), "%s/%d/cgroup", proc ? proc : "/proc", pid) >= sizeof(name))
		return -ENAMETOOLONG;
	r = cgk_read_file_at(AT_FDCWD, name, &text, NULL);
	if (r < 0)
		return r == -ENOENT ? -ESRCH : r;
	return cgk_parse_proc_cgroup_has(text, controller, path, size);
}

CGK_EXPORT int cgk_proc_cgroup(const char *proc, pid_t pid, const char *controller, char **path)
{
	char buf[4096];
	int r;

	if (!path)
		return -EINVAL;
	r = proc_cgroup(proc, pid, controller, buf, sizeof(buf));
	if (r < 0)
		return r;
	*path = strdup(buf);
	return *path ? 0 : -ENOMEM;
}

CGK_EXPORT int cgk_cgroup_of_pid(pid_t pid, char **ret)
{
	_cleanup_free_ struct cgk_mount *mounts = NULL;
	char path[4096];
	size_t n = 0;
	int r;

	if (pid <= 0 || !ret)
		return -EINVAL;
	r = proc_cgroup(NULL, pid, NULL, path, sizeof(path));
	if (r < 0)
		return r;
	/* "/.." paths name a cgroup outside our cgroup namespace. */
	if (strstr(path, "/.."))
		return -EXDEV;
	r = cgk_mounts_read(&mounts, &n);
	if (r < 0)
		return r;
	/* /proc/PID/cgroup names the cgroup from the hierarchy root; a mount
	 * may show only a subtree of it (its root in mountinfo). */
	for (size_t i = 0; i < n; i++) {
		const char *root = mounts[i].root;
		size_t len = strcmp(root, "/") ? strlen(root) : 0;

		if (mounts[i].version != 2 || (len && !path_below(path, root)))
			continue;
		return asprintf(ret, "%s%s", mounts[i].path, path[len] ? path + len : "") < 0 ?
			       -ENOMEM : 0;
	}
	return -ENOENT;
}

int cgk_target_holds(const struct cgk_target *t, pid_t pid)
{
	_cleanup_close_ int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	struct cgk_pidvec listed = { 0 };
	bool found;
	int r;

	/* A thread's id, not its process's: EINVAL, ENOENT since 6.9. */
	if (pidfd < 0 && errno != ENOSYS)
		return errno == ENOENT ? -EINVAL : -errno;
	r = cgk_read_procs(t->fd, &listed);
	cgk_pidvec_sort(&listed);
	found = cgk_pidvec_has_sorted(&listed, pid);
	cgk_pidvec_free(&listed);
	if (r < 0)
		return r;
	/* Listed, and the pinned process still alive: then it is the one the
	 * list names. */
	if (!found || (pidfd >= 0 && syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0))
		return -ESRCH;
	return 0;
}

/* Which backends a hierarchy supports: the files they need, looked for
 * in the first child cgroup (the root lacks them), else in the root. */
static unsigned hierarchy_backends(const struct cgk_mount *m)
{
	unsigned set = 1u << CGK_BACKEND_LOOP;
	_cleanup_close_ int root = open(m->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int probe = -1;
	DIR *dir;
	struct dirent *de;

	if (m->version == 1)
		return set | (cgk_has_controller(m->controllers, "freezer") ?
			      1u << CGK_BACKEND_V1_FREEZE : 0);
	if (root < 0)
		return set;
	dir = fdopendir(fcntl(root, F_DUPFD_CLOEXEC, 3));
	while (dir && (de = readdir(dir)))
		if (de->d_type == DT_DIR && de->d_name[0] != '.') {
			probe = openat(root, de->d_name, O_PATH | O_DIRECTORY | O_CLOEXEC);
			break;
		}
	if (dir)
		closedir(dir);
	if (probe >= 0) {
		if (faccessat(probe, "cgroup.kill", F_OK, 0) == 0)
			set |= 1u << CGK_BACKEND_KERNEL;
		if (faccessat(probe, "cgroup.freeze", F_OK, 0) == 0)
			set |= 1u << CGK_BACKEND_FREEZE;
		close(probe);
	} else {
		/* No child to look at: go by the kernel release. */
		struct utsname u;
		int major = 0, minor = 0;

		if (uname(&u) == 0 && sscanf(u.release, "%d.%d", &major, &minor) == 2) {
			if (major > 5 || (major == 5 && minor >= 14))
				set |= 1u << CGK_BACKEND_KERNEL;
			if (major > 5 || (major == 5 && minor >= 2))
				set |= 1u << CGK_BACKEND_FREEZE;
		}
	}
	return set;
}

struct cgk_hierarchies {
	size_t n;
	struct cgk_mount *mounts;	/* one block, strings included */
	unsigned backends[];
};

CGK_EXPORT int cgk_hierarchies_read(cgk_hierarchies **ret)
{
	struct cgk_mount *mounts = NULL;
	cgk_hierarchies *h;
	size_t n = 0;
	int r = ret ? cgk_mounts_read(&mounts, &n) : -EINVAL;

	if (r < 0)
		return r;
	h = calloc(1, sizeof(*h) + n * sizeof(h->backends[0]));
	if (!h) {
		free(mounts);
		return -ENOMEM;
	}
	h->n = n;
	h->mounts = mounts;
	for (size_t i = 0; i < n; i++)
		h->backends[i] = hierarchy_backends(&h->mounts[i]);
	*ret = h;
	return 0;
}

CGK_EXPORT cgk_hierarchies *cgk_hierarchies_free(cgk_hierarchies *h)
{
	if (h)
		free(h->mounts);
	free(h);
	return NULL;
}

CGK_EXPORT size_t cgk_hierarchies_count(const cgk_hierarchies *h)
{
	return h ? h->n : 0;
}

CGK_EXPORT const char *cgk_hierarchies_path(const cgk_hierarchies *h, size_t i)
{
	return h && i < h->n ? h->mounts[i].path : NULL;
}

CGK_EXPORT int cgk_hierarchies_version(const cgk_hierarchies *h, size_t i)
{
	return h && i < h->n ? h->mounts[i].version : 0;
}

CGK_EXPORT const char *cgk_hierarchies_controllers(const cgk_hierarchies *h, size_t i)
{
	return h && i < h->n ? h->mounts[i].controllers : NULL;
}

CGK_EXPORT unsigned cgk_hierarchies_backends(const cgk_hierarchies *h, size_t i)
{
	return h && i < h->n ? h->backends[i] : 0;
}
