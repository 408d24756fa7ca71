/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * "populated" from an open cgroup.events: 1 while "populated 1", 0 once
 * "populated 0", -1 on error. Shared by the floor and the harness's
 * watcher, so that both read the file the same way; inline, so that the
 * floor stays one small program of its own.
 */
#ifndef BENCH_POPULATED_H
#define BENCH_POPULATED_H

#include <string.h>
#include <unistd.h>

static inline int populated(int fd)
{
	char buf[256];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	char *p;

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strstr(buf, "populated ");
	return p ? p[10] == '1' : -1;
}

#endif
