// SPDX-License-Identifier: LGPL-2.1-or-later
/* The files of a cgroup: reading, writing, process lists, waits; see
 * cgfile.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgfile.h"
#include "deadline.h"
#include "sandbox.h"

static int open_in(const char *dir, const char *file, int flags, mode_t mode)
{
	char p[4352];

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	return open(p, flags | O_CLOEXEC, mode);
}

ssize_t sb_read(const char *dir, const char *file, char *buf, size_t size)
{
	size_t len = 0;
	int fd;

	if (size == 0)
		return -EINVAL;
	fd = open_in(dir, file, O_RDONLY, 0);
	if (fd < 0)
		return -errno;
	while (len + 1 < size) {
		ssize_t n = read(fd, buf + len, size - 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = -errno;

			close(fd);
			return e;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return (ssize_t)len;
}

char *sb_read_alloc(const char *dir, const char *file, int *err)
{
	size_t cap = 4096, len = 0;
	char *buf;
	int fd = open_in(dir, file, O_RDONLY, 0);

	if (fd < 0) {
		*err = -errno;
		return NULL;
	}
	buf = malloc(cap);
	for (;;) {
		ssize_t n;

		if (buf && len + 1 >= cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb)
				free(buf);
			buf = nb;
			cap *= 2;
		}
		if (!buf) {
			close(fd);
			*err = -ENOMEM;
			return NULL;
		}
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			*err = -errno;
			free(buf);
			close(fd);
			return NULL;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	*err = 0;
	return buf;
}

const char *sb_first_line(const char *dir, const char *file, char *buf, size_t size)
{
	if (sb_read(dir, file, buf, size) < 0)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

bool sb_file_is(const char *dir, const char *file, const char *want)
{
	char buf[256];

	return strcmp(sb_first_line(dir, file, buf, sizeof(buf)), want) == 0;
}

bool sb_file_has(const char *dir, const char *file, const char *text)
{
	char buf[1024];

	return sb_read(dir, file, buf, sizeof(buf)) >= 0 && strstr(buf, text) != NULL;
}

static int write_fd(int fd, const char *text)
{
	size_t len = strlen(text);
	ssize_t n;
	int r;

	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	r = n < 0 ? -errno : (size_t)n == len ? 0 : -EIO;
	close(fd);
	return r;
}

int sb_write(const char *dir, const char *file, const char *text)
{
	return write_fd(open_in(dir, file, O_WRONLY, 0), text);
}

int sb_put(const char *dir, const char *file, const char *text)
{
	return write_fd(open_in(dir, file, O_WRONLY | O_CREAT | O_TRUNC, 0644), text);
}

bool sb_temp_file(char *tmpl, const char *text, size_t len)
{
	int fd = mkostemp(tmpl, O_CLOEXEC);
	bool done;

	if (fd < 0)
		return false;
	done = write(fd, text, len) == (ssize_t)len;
	close(fd);
	return done;
}

bool sb_freeze_v1(const char *dir)
{
	uint64_t deadline = sb_now_ms() + sb_deadline_ms(5000);

	if (sb_write(dir, "freezer.state", "FROZEN") < 0)
		return false;
	while (!sb_file_is(dir, "freezer.state", "FROZEN")) {
		if (sb_now_ms() > deadline)
			return false;
		sb_sleep_ms(2);
	}
	return true;
}

int sb_join(const char *dir)
{
	return sb_write(dir, "cgroup.procs", "0");
}

int sb_join_fd(int dirfd)
{
	return write_fd(openat(dirfd, "cgroup.procs", O_WRONLY | O_CLOEXEC), "0");
}

static int parse_pids(const char *buf, pid_t **out, size_t *n)
{
	size_t cap = 0;
	const char *p = buf;

	while (*p) {
		char *end;
		long v = strtol(p, &end, 10);

		if (end == p)
			break;
		if (*n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			pid_t *nv = realloc(*out, nc * sizeof(pid_t));

			if (!nv)
				return -ENOMEM;
			*out = nv;
			cap = nc;
		}
		(*out)[(*n)++] = (pid_t)v;
		p = end;
		while (*p == '\n' || *p == ' ')
			p++;
	}
	return 0;
}

int sb_list_pids(const char *dir, pid_t **out, size_t *n)
{
	int err;
	char *buf = sb_read_alloc(dir, "cgroup.procs", &err);

	*out = NULL;
	*n = 0;
	if (!buf && err == -EOPNOTSUPP)
		buf = sb_read_alloc(dir, "cgroup.threads", &err);
	if (!buf)
		return err;
	err = parse_pids(buf, out, n);
	free(buf);
	return err;
}

bool sb_member(const char *dir, pid_t pid)
{
	pid_t *v;
	size_t n;
	bool found = false;

	if (sb_list_pids(dir, &v, &n) == 0)
		for (size_t i = 0; i < n && !found; i++)
			found = v[i] == pid;
	free(v);
	return found;
}

/* ---- subtrees ---- */

void sb_dirs_push(struct sb_dirs *d, const char *p)
{
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 16;
		char **nv = realloc(d->v, cap * sizeof(*nv));

		if (!nv)
			return;
		d->v = nv;
		d->cap = cap;
	}
	d->v[d->n] = strdup(p);
	if (d->v[d->n])
		d->n++;
}

void sb_dirs_free(struct sb_dirs *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->v[i]);
	free(d->v);
	*d = (struct sb_dirs){ 0 };
}

/* Parents first (pre-order): walk in reverse for bottom-up. Bounded depth. */
static void collect(const char *path, struct sb_dirs *d, int depth)
{
	DIR *dir;
	struct dirent *e;

	sb_dirs_push(d, path);
	if (depth > 32)
		return;
	dir = opendir(path);
	if (!dir)
		return;
	while ((e = readdir(dir))) {
		char sub[4352];

		if (e->d_type != DT_DIR || strcmp(e->d_name, ".") == 0 ||
		    strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		collect(sub, d, depth + 1);
	}
	closedir(dir);
}

void sb_subtree(const char *path, struct sb_dirs *d)
{
	collect(path, d, 0);
}

int sb_count(const char *dir, bool recursive)
{
	struct sb_dirs d = { 0 };
	int total = 0;

	if (recursive)
		sb_subtree(dir, &d);
	else
		sb_dirs_push(&d, dir);
	for (size_t i = 0; i < d.n; i++) {
		pid_t *v;
		size_t n;
		int r = sb_list_pids(d.v[i], &v, &n);

		free(v);
		if (r < 0 && r != -ENOENT) {
			sb_dirs_free(&d);
			return r;
		}
		total += (int)n;
	}
	sb_dirs_free(&d);
	return total;
}

/* ---- waiting ---- */

static bool events_say_empty(int fd, int *err)
{
	char buf[512];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n < 0) {
		*err = -errno;
		return false;
	}
	buf[n] = '\0';
	*err = 0;
	return strncmp(buf, "populated 0\n", 12) == 0 || strstr(buf, "\npopulated 0\n");
}

int sb_wait_empty(const char *dir, unsigned timeout_ms)
{
	uint64_t deadline = sb_now_ms() + sb_deadline_ms(timeout_ms);
	int fd = open_in(dir, "cgroup.events", O_RDONLY, 0);

	if (fd >= 0) {
		for (;;) {
			struct pollfd pfd = { .fd = fd, .events = POLLPRI };
			uint64_t now;
			int err;

			if (events_say_empty(fd, &err) || err < 0) {
				close(fd);
				return err;
			}
			now = sb_now_ms();
			if (now >= deadline)
				break;
			/* Re-read after every wakeup; the cap only guards
			 * against a lost notification. */
			poll(&pfd, 1, (int)(deadline - now < 200 ? deadline - now : 200));
		}
		close(fd);
		return -ETIMEDOUT;
	}
	/* v1: no cgroup.events; poll the lists with backoff. */
	for (unsigned backoff = 1;;) {
		int n = sb_count(dir, true);

		if (n == 0)
			return 0;
		if (n < 0 && n != -ENOENT)
			return n;
		if (sb_now_ms() >= deadline)
			return -ETIMEDOUT;
		sb_sleep_ms(backoff);
		if (backoff < 50)
			backoff *= 2;
	}
}

int sb_wait_count(const char *dir, unsigned n, unsigned timeout_ms)
{
	uint64_t deadline = sb_now_ms() + sb_deadline_ms(timeout_ms);

	for (;;) {
		int c = sb_count(dir, true);

		if (c >= (int)n)
			return 0;
		if (sb_now_ms() >= deadline)
			return -ETIMEDOUT;
		sb_sleep_ms(10);
	}
}
