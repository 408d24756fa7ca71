// SPDX-License-Identifier: LGPL-2.1-or-later
/* libFuzzer target: cgk_parse_mountinfo on arbitrary bytes. */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const known[] = {
	"blkio", "cpu", "cpuacct", "cpuset", "debug", "devices", "freezer", "hugetlb",
	"io", "memory", "misc", "net_cls", "net_prio", "perf_event", "pids", "rdma",
};

static void check_controllers(const char *list)
{
	const char *s = list;

	if (!*s)
		return;
	for (;;) {
		const char *e = strchrnul(s, ',');
		size_t n = (size_t)(e - s);
		bool good = n > 5 && memcmp(s, "name=", 5) == 0;

		for (size_t i = 0; !good && i < sizeof(known) / sizeof(known[0]); i++)
			good = strlen(known[i]) == n && memcmp(known[i], s, n) == 0;
		if (!good)
			__builtin_trap();
		/* every kept controller is found by the lookup helper */
		char item[256];

		memcpy(item, s, n);
		item[n] = '\0';
		if (!cgk_has_controller(list, item))
			__builtin_trap();
		if (!*e)
			break;
		s = e + 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cgk_mount *m = (void *)1;
	size_t n = 99;
	int r = cgk_parse_mountinfo((const char *)data, size, &m, &n);

	if (r < 0) {
		if (m || n)
			__builtin_trap();
		if (r != -EINVAL && r != -ENAMETOOLONG && r != -ENOMEM)
			__builtin_trap();
		return 0;
	}
	if ((n == 0) != (m == NULL))
		__builtin_trap();
	for (size_t i = 0; i < n; i++) {
		if (m[i].version != 1 && m[i].version != 2)
			__builtin_trap();
		if (strlen(m[i].path) >= PATH_MAX || strlen(m[i].root) >= PATH_MAX ||
		    !memchr(m[i].controllers, '\0', sizeof(m[i].controllers)))
			__builtin_trap();
		if (m[i].path[0] != '/' || m[i].root[0] != '/')
			__builtin_trap();
		if (m[i].version == 2 && m[i].controllers[0])
			__builtin_trap();
		check_controllers(m[i].controllers);
	}
	free(m);
	return 0;
}
