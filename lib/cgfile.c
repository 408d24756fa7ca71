/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Readers of the files a cgroup directory holds: process lists, events,
 * the v2 freeze switch, the v1 freezer state, pids.current. */
#include <fcntl.h>
#include <string.h>

#include "internal.h"

int cgk_read_pid_file(int cgfd, const char *name, struct cgk_pidvec *out)
{
	_cleanup_free_ char *buf = NULL;
	size_t len;
	int r = cgk_read_file_at(cgfd, name, &buf, &len);

	/* ENODEV: removed between open() and read(); vanished all the same. */
	if (r == -ENODEV)
		return -ENOENT;
	if (r < 0)
		return r;
	return cgk_parse_pids(buf, len, out);
}

int cgk_read_procs(int cgfd, struct cgk_pidvec *out)
{
	return cgk_read_pid_file(cgfd, "cgroup.procs", out);
}

int cgk_events_value(int fd, const char *key)
{
	char buf[256];
	size_t klen = strlen(key);
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	for (char *line = buf; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
		if (strncmp(line, key, klen) == 0 && line[klen] == ' ')
			return line[klen + 1] == '1';
	return -ENOENT;
}

int cgk_pids_current_zero(int cgfd)
{
	_cleanup_free_ char *buf = NULL;
	int r = cgk_read_file_at(cgfd, "pids.current", &buf, NULL);

	return r < 0 ? r : strcmp(buf, "0\n") == 0;
}

int cgk_freeze_value(int cgfd)
{
	_cleanup_free_ char *buf = NULL;
	int r = cgk_read_file_at(cgfd, "cgroup.freeze", &buf, NULL);

	return r < 0 ? r : buf[0] == '1';
}

int cgk_freezer_state(int cgfd)
{
	_cleanup_free_ char *buf = NULL;
	int r = cgk_read_file_at(cgfd, "freezer.state", &buf, NULL);

	if (r < 0)
		return r;
	if (strncmp(buf, "THAWED", 6) == 0)
		return CGK_THAWED;
	if (strncmp(buf, "FREEZING", 8) == 0)
		return CGK_FREEZING;
	if (strncmp(buf, "FROZEN", 6) == 0)
		return CGK_FROZEN;
	return -EINVAL;
}

int cgk_freezer_self_freezing(int cgfd)
{
	_cleanup_free_ char *buf = NULL;
	int r = cgk_read_file_at(cgfd, "freezer.self_freezing", &buf, NULL);

	if (r == -ENOENT) {	/* before 3.13: approximate with the state */
		r = cgk_freezer_state(cgfd);
		return r < 0 ? r : r != CGK_THAWED;
	}
	if (r < 0)
		return r;
	return buf[0] == '1';
}
