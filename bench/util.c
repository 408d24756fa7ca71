/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The benchmark's small helpers: the clock, dying, small files, and
 * walking a cgroup subtree.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("bench: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	n = n < 0 ? -errno : 0;
	close(fd);
	return (int)n;
}

int write_at(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return write_file(path, text);
}

ssize_t read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return n;
}

long long read_num(const char *dir, const char *name)
{
	char path[PATH_MAX], buf[64];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return -1;
	return strtoll(buf, NULL, 10);
}

/* Lines (processes) in dir/cgroup.procs, read to EOF; -1 if unreadable. */
static long count_procs(const char *dir)
{
	char path[PATH_MAX], buf[65536];
	long lines = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			lines += buf[i] == '\n';
	close(fd);
	return lines;
}

void walk(const char *dir, bool post, walk_fn fn, void *arg)
{
	DIR *d;
	struct dirent *de;

	if (!post)
		fn(dir, arg);
	d = opendir(dir);
	if (d) {
		while ((de = readdir(d))) {
			char sub[PATH_MAX];

			if (de->d_type != DT_DIR || de->d_name[0] == '.')
				continue;
			snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
			walk(sub, post, fn, arg);
		}
		closedir(d);
	}
	if (post)
		fn(dir, arg);
}

static void count_visit(const char *dir, void *arg)
{
	long n = count_procs(dir);

	if (n > 0)
		*(long *)arg += n;
}

long count_tree(const char *dir)
{
	long n = 0;

	walk(dir, false, count_visit, &n);
	return n;
}
