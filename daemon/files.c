/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Small files of cgroupfs and /proc, read one way everywhere: a whole file
 * in one read (what the kernel's seq files give at once), a number in it
 * ("max" for no limit), the line of a PSI file. Below every trigger and
 * the victim choice, above the system helpers (read_at0).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgkilld.h"

ssize_t read_small_at(int dfd, const char *name, char *buf, size_t size)
{
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read_at0(fd, buf, size);
	close(fd);
	return n;
}

bool parse_number(const char *text, uint64_t *v)
{
	char *end;

	if (!strncmp(text, "max", 3)) {
		*v = UINT64_MAX;
		return true;
	}
	errno = 0;
	*v = strtoull(text, &end, 10);
	return !errno && end != text;
}

bool read_number_fd(int fd, uint64_t *v)
{
	char buf[64];

	return fd >= 0 && read_at0(fd, buf, sizeof(buf)) > 0 && parse_number(buf, v);
}

bool read_number_at(int dfd, const char *name, uint64_t *v)
{
	char buf[64];

	return read_small_at(dfd, name, buf, sizeof(buf)) > 0 && parse_number(buf, v);
}

bool psi_parse(const char *text, bool full, struct psi_line *p)
{
	const char *key = full ? "full " : "some ";

	*p = (struct psi_line){ 0 };
	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (!strncmp(l, key, 5))
			return sscanf(l + 5, "avg10=%lf avg60=%lf avg300=%lf total=%llu", &p->avg10, &p->avg60,
				      &p->avg300, &p->total) >= 1;
	return false;
}
