/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which pids.events speaks for a cgroup's own pids.max, and its count:
 * pure (no daemon state), unit-tested by tests/test-pids-events.c.
 *
 * v2: since Linux 6.13, pids.events counts hierarchically: its "max" also
 * rises when a limit set below is hit. A delegatee who sets pids.max=1 on
 * a cgroup of its own and forks twice would make the watched parent, its
 * neighbours included, "a fork bomb". pids.events.local (6.13+) counts
 * the cgroup's own limit only: it is read where it exists. A limit hit
 * below is not the watched cgroup's event: that limit contained what it
 * refused, and a rule that watches the cgroup that set it acts there.
 * Older kernels have pids.events alone, which counted the own limit only.
 * (With the cgroup2 mount option pids_localevents, both files count the
 * forks refused to the cgroup's own processes, whichever limit refused
 * them.) v1 has pids.events alone: forks refused to the cgroup's own
 * tasks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgkilld.h"

static const char *const pids_events_files[] = { "pids.events.local", "pids.events" };

int pids_events_open(int dfd, const char **name)
{
	int fd = -1;

	for (size_t i = 0; i < sizeof(pids_events_files) / sizeof(*pids_events_files); i++) {
		*name = pids_events_files[i];
		fd = openat(dfd, *name, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0 || errno != ENOENT)
			break;
	}
	return fd < 0 ? -errno : fd;
}

bool pids_events_max(const char *text, uint64_t *v)
{
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, "max ", 4) && p[4] >= '0' && p[4] <= '9') {
			char *end;

			errno = 0;
			*v = strtoull(p + 4, &end, 10);
			return !errno && (*end == '\n' || *end == '\0');
		}
	}
	return false;
}
