/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Cgroup paths: a watched cgroup's name relative to the v2 mount (D.v2)
 * made into a path, a directory or a file of it opened, its populated
 * state read. Below the triggers, watch.c and act.c, which all look
 * cgroups up by these.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgkilld.h"

int cg_file_open(const char *base, const char *rel, const char *name, int flags)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s%s%s", base, rel, *rel && *name ? "/" : "", name) >=
	    sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return open(path, flags | O_CLOEXEC);
}

int cg_dir_open(const char *rel)
{
	int fd = cg_file_open(D.v2, rel, "", O_RDONLY | O_DIRECTORY | O_NOFOLLOW);

	return fd < 0 ? -errno : fd;
}

char *cg_join(const char *a, const char *b)
{
	char *s;

	if (!*a)
		return strdup(b);
	if (asprintf(&s, "%s/%s", a, b) < 0)
		return NULL;
	return s;
}

char *cg_full_path(const char *rel)
{
	char *s;

	if (asprintf(&s, "%s/%s", D.v2, rel) < 0)
		return NULL;
	return s;
}

int cg_populated_at(const char *rel)
{
	char buf[256];
	uint64_t v = 0;
	bool populated;
	int fd = cg_file_open(D.v2, rel, "cgroup.events", O_RDONLY);

	if (fd < 0)
		return -1;
	populated = read_at0(fd, buf, sizeof(buf)) > 0 && kv_get(buf, "populated", &v) && v;
	close(fd);
	return populated;
}

bool cg_polled(const struct cg *c)
{
	return c->pids.fd >= 0 && c->populated && !c->dead && (c->pids_v1 || c->pcur_open);
}

bool cg_holds(const char *rel, const char *cg)
{
	size_t n = strlen(rel);

	return cg && cg[0] == '/' && !strncmp(cg + 1, rel, n) && (cg[n + 1] == '\0' || cg[n + 1] == '/');
}

static bool cg_gone(int err)
{
	return err == ENOENT || err == ENODEV;
}

int cg_each_child(int dfd, int (*visit)(int kfd, void *arg), void *arg)
{
	int r = 0, fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *e;
	DIR *d;

	if (fd < 0)
		return cg_gone(errno) ? 0 : -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	while (r == 0 && (e = readdir(d))) {
		int kfd;

		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		kfd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (kfd < 0) {
			r = cg_gone(errno) ? 0 : -errno;
			continue;
		}
		r = visit(kfd, arg);
		close(kfd);
	}
	closedir(d);
	return r;
}
