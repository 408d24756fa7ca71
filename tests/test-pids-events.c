// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cgkilld's choice of the pids.events file that counts a cgroup's own
 * pids.max (daemon/pids-events.c, included: it is pure), on files in a
 * temporary directory. On Linux 6.13+ the v2 pids.events counts the limits
 * hit below too (issue 26, item 3): pids.events.local, where it exists, is
 * the one read. The real kernel's files need a pure v2 host with the pids
 * controller (this test does not).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../daemon/pids-events.c"
#include "support/tap.h"

static char dir[] = "/tmp/cgkill-test-pids-events.XXXXXX";

static void put(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		bail_out("cannot write %s", path);
}

static void drop(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
}

/* The file chosen in dir and its "max": 0, or -errno. */
static int choose(const char **name, uint64_t *max, bool *parsed)
{
	char buf[256];
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd;
	ssize_t n;

	if (dfd < 0)
		bail_out("open %s", dir);
	fd = pids_events_open(dfd, name);
	close(dfd);
	if (fd < 0)
		return fd;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	*parsed = pids_events_max(buf, max);
	return 0;
}

static void cleanup(void)
{
	drop("pids.events");
	drop("pids.events.local");
	rmdir(dir);
}

int main(void)
{
	static const struct {
		const char *text;
		bool ok;
		uint64_t v;
	} texts[] = {
		{ "max 0\n", true, 0 },
		{ "max 7\n", true, 7 },
		{ "max 18446744073709551615\n", true, UINT64_MAX },
		{ "max 18446744073709551616\n", false, 0 },	/* overflows */
		{ "maximum 3\nmax 4\n", true, 4 },	/* the key, not a prefix */
		{ "max -1\n", false, 0 },
		{ "max 5x\n", false, 0 },
		{ "max\n", false, 0 },
		{ "", false, 0 },
		{ "other 1\n", false, 0 },
		{ "max 9", true, 9 },	/* no newline */
	};
	const char *name = NULL;
	uint64_t max = 0;
	bool parsed = false;
	int r;

	if (!mkdtemp(dir))
		bail_out("mkdtemp: %s", strerror(errno));
	atexit(cleanup);

	is_int(choose(&name, &max, &parsed), -ENOENT, "neither file: -ENOENT");

	put("pids.events", "max 5\n");
	r = choose(&name, &max, &parsed);
	ok(r == 0 && !strcmp(name, "pids.events") && parsed && max == 5,
	   "pids.events alone (before 6.13, and v1): it is read (%s, max %llu)", name,
	   (unsigned long long)max);

	put("pids.events.local", "max 1\n");
	put("pids.events", "max 40\n");
	r = choose(&name, &max, &parsed);
	ok(r == 0 && !strcmp(name, "pids.events.local") && parsed && max == 1,
	   "both (6.13+): pids.events.local, the cgroup's own limit, not the 40 of the limits below (%s, max %llu)",
	   name, (unsigned long long)max);

	drop("pids.events");
	ok(choose(&name, &max, &parsed) == 0 && !strcmp(name, "pids.events.local"),
	   "pids.events.local alone: read");

	/* a pids.events.local that cannot be opened is not skipped for the
	 * hierarchical count: an error (as root, a directory stands in) */
	drop("pids.events.local");
	put("pids.events", "max 40\n");
	{
		char path[256];

		snprintf(path, sizeof(path), "%s/pids.events.local", dir);
		if (mkdir(path, 0700) < 0)
			bail_out("mkdir %s", path);
		ok(choose(&name, &max, &parsed) == 0 && !strcmp(name, "pids.events.local") && !parsed,
		   "a pids.events.local that is there but unreadable as a count is not replaced by pids.events");
		rmdir(path);
	}

	for (size_t i = 0; i < sizeof(texts) / sizeof(*texts); i++) {
		uint64_t v = 12345;
		bool got = pids_events_max(texts[i].text, &v);

		ok(got == texts[i].ok && (!got || v == texts[i].v), "\"%.*s\": %s", (int)strcspn(texts[i].text, "\n"),
		   texts[i].text, texts[i].ok ? "parsed" : "refused");
	}
	return done_testing();
}
