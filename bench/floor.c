/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The floor: the least work that empties a cgroup subtree on this kernel.
 * "1" into cgroup.kill, then wait for "populated 0" in cgroup.events,
 * re-reading the file after every wakeup (notifications are coalesced).
 *
 *	floor [-m] CGROUP
 *
 * -m: before the kill, open a pidfd for every process of CGROUP (not its
 * descendants), and after the kill hand each to process_mrelease(2), which
 * frees a killed process's memory in the caller instead of waiting for the
 * process to run its exit.
 *
 * Exit status 0 when the subtree emptied within 60 s, 1 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "populated.h"

#define DEADLINE_MS 60000

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* pidfds of the processes listed in dirfd/cgroup.procs, read to EOF. */
static int open_pidfds(int dirfd, int **out)
{
	int fd = openat(dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	size_t len = 0, cap = 65536;
	char *buf = malloc(cap + 1);
	int n = 0, *v;
	ssize_t r;

	if (fd < 0 || !buf)
		return -1;
	while ((r = read(fd, buf + len, cap - len)) > 0) {
		len += (size_t)r;
		if (len == cap) {
			char *b = realloc(buf, 2 * cap + 1);

			if (!b)
				return -1;
			buf = b;
			cap *= 2;
		}
	}
	close(fd);
	buf[len] = '\0';
	v = malloc((len / 2 + 1) * sizeof(*v));
	if (!v)
		return -1;
	for (char *p = buf; *p;) {
		long pid = strtol(p, &p, 10);

		if (pid > 0) {
			int pfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);

			if (pfd >= 0)
				v[n++] = pfd;
		}
		while (*p == '\n')
			p++;
	}
	free(buf);
	*out = v;
	return n;
}

int main(int argc, char **argv)
{
	int mrelease = argc == 3 && strcmp(argv[1], "-m") == 0;
	int dirfd, evfd, killfd, n = 0, *pidfds = NULL;
	long long deadline = now_ms() + DEADLINE_MS;

	if (argc != 2 + mrelease) {
		fprintf(stderr, "usage: floor [-m] CGROUP\n");
		return 2;
	}
	dirfd = open(argv[argc - 1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		perror(argv[argc - 1]);
		return 2;
	}
	evfd = openat(dirfd, "cgroup.events", O_RDONLY | O_CLOEXEC);
	killfd = openat(dirfd, "cgroup.kill", O_WRONLY | O_CLOEXEC);
	if (evfd < 0 || killfd < 0) {
		perror("cgroup.events/cgroup.kill");
		return 2;
	}
	if (mrelease)
		n = open_pidfds(dirfd, &pidfds);
	if (write(killfd, "1", 1) != 1) {
		perror("cgroup.kill");
		return 2;
	}
	for (int i = 0; i < n; i++)
		syscall(SYS_process_mrelease, pidfds[i], 0);
	for (;;) {
		struct pollfd pfd = { .fd = evfd, .events = POLLPRI };
		int p = populated(evfd);
		long long left = deadline - now_ms();

		if (p == 0)
			return 0;
		if (p < 0 || left <= 0)
			return 1;
		poll(&pfd, 1, (int)left);
	}
}
