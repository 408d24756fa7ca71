/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small helpers: time, growing arrays, whole-file reads and writes, pid
 * vectors, the signal mask, marks. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/xattr.h>
#include <time.h>

#include "internal.h"

uint64_t cgk_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void cgk_sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

uint64_t cgk_deadline_after(uint64_t ms)
{
	uint64_t now = cgk_now_ms();

	return ms > UINT64_MAX - now ? UINT64_MAX : now + ms;
}

void *cgk_grow(void *v, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return v;
	while (n < need)
		n *= 2;
	if (n > SIZE_MAX / size || !(q = realloc(v, n * size)))
		return NULL;
	*cap = n;
	return q;
}

int cgk_read_fd(int fd, size_t max, char **buf, size_t *len)
{
	_cleanup_free_ char *p = NULL;
	size_t cap = 0, n = 0;

	/* One read() of a kernel list returns only part of it: read to EOF. */
	for (;;) {
		char *q = cgk_grow(p, &cap, n + 4096, 1);
		ssize_t r;

		if (!q)
			return -ENOMEM;
		p = q;
		r = read(fd, p + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max)
			return -EFBIG;
	}
	p[n] = '\0';
	*buf = p;
	p = NULL;
	if (len)
		*len = n;
	return 0;
}

int cgk_read_file_at(int dirfd, const char *name, char **buf, size_t *len)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	return fd < 0 ? -errno : cgk_read_fd(fd, SIZE_MAX, buf, len);
}

int cgk_write_file_at(int dirfd, const char *name, const char *text)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	size_t len = strlen(text);
	ssize_t r;

	if (fd < 0)
		return -errno;
	do
		r = write(fd, text, len);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return (size_t)r == len ? 0 : -EIO;
}

int cgk_pidvec_push(struct cgk_pidvec *vec, pid_t pid)
{
	pid_t *v = cgk_grow(vec->v, &vec->cap, vec->n + 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	vec->v = v;
	vec->v[vec->n++] = pid;
	return 0;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

void cgk_pidvec_sort(struct cgk_pidvec *vec)
{
	if (vec->n > 1)
		qsort(vec->v, vec->n, sizeof(*vec->v), cmp_pid);
}

bool cgk_pidvec_has_sorted(const struct cgk_pidvec *vec, pid_t pid)
{
	return vec->n && bsearch(&pid, vec->v, vec->n, sizeof(*vec->v), cmp_pid);
}

void cgk_pidvec_free(struct cgk_pidvec *vec)
{
	free(vec->v);
	*vec = (struct cgk_pidvec){ 0 };
}

static size_t pid_hash(pid_t pid, size_t cap)
{
	return ((uint32_t)pid * 2654435761u) & (cap - 1);
}

bool cgk_pidset_has(const struct cgk_pidset *set, pid_t pid)
{
	if (!set->cap)
		return false;
	for (size_t i = pid_hash(pid, set->cap);; i = (i + 1) & (set->cap - 1)) {
		if (set->v[i] == pid)
			return true;
		if (set->v[i] == 0)
			return false;
	}
}

int cgk_pidset_add(struct cgk_pidset *set, pid_t pid)
{
	size_t i;

	if ((set->n + 1) * 2 > set->cap) {
		struct cgk_pidset bigger = { 0, set->cap ? set->cap * 2 : 256, NULL };

		bigger.v = calloc(bigger.cap, sizeof(pid_t));
		if (!bigger.v)
			return -ENOMEM;
		for (i = 0; i < set->cap; i++)
			if (set->v[i])
				cgk_pidset_add(&bigger, set->v[i]);
		free(set->v);
		*set = bigger;
	}
	for (i = pid_hash(pid, set->cap); set->v[i]; i = (i + 1) & (set->cap - 1))
		if (set->v[i] == pid)
			return 0;
	set->v[i] = pid;
	set->n++;
	return 1;
}

void cgk_pidset_free(struct cgk_pidset *set)
{
	free(set->v);
	*set = (struct cgk_pidset){ 0 };
}

void cgk_signals_block(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, old);
}

void cgk_signals_restore(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* xattrs need an fd that is not O_PATH, which cgk_kill_fd() may be given. */
static int open_dir(int dirfd)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

void cgk_mark_set(int dirfd, const char *name, const char *value)
{
	_cleanup_close_ int fd = open_dir(dirfd);

	if (fd >= 0)
		(void)fsetxattr(fd, name, value, strlen(value), 0);
}

int cgk_mark_get(int dirfd, const char *name, char *buf, size_t size)
{
	_cleanup_close_ int fd = open_dir(dirfd);
	ssize_t n;

	if (fd < 0)
		return fd;
	n = fgetxattr(fd, name, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

bool cgk_marked(int dirfd, const char *name)
{
	char v[32];

	return cgk_mark_get(dirfd, name, v, sizeof(v)) == 0;
}

void cgk_mark_clear(int dirfd, const char *name)
{
	_cleanup_close_ int fd = open_dir(dirfd);

	if (fd >= 0)
		(void)fremovexattr(fd, name);
}
