// SPDX-License-Identifier: LGPL-2.1-or-later
/* libFuzzer target: cgk_parse_proc_cgroup(_has) and cgk_has_controller. The first
 * byte picks the hierarchy to look for and the size of the output buffer. */
#include <stdint.h>
#include <string.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const wanted[] = {
	NULL, "pids", "cpu,cpuacct", "cpuacct,cpu", "name=systemd", "", "freezer", "a,,b",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text, *out;
	const char *want;
	size_t outsize;
	int r;

	if (size < 1)
		return 0;
	want = wanted[data[0] % (sizeof(wanted) / sizeof(wanted[0]))];
	outsize = (size_t)(data[0] >> 3) + 1;	/* 1..32: hits the size limit */
	text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';	/* the contract: NUL-terminated text */
	out = malloc(outsize);
	if (!out) {
		free(text);
		return 0;
	}
	memset(out, 'X', outsize);

	/* the first byte's bit 2 asks by one controller, as cgkilld does */
	if (data[0] & 4)
		r = cgk_parse_proc_cgroup_has(text, want, out, outsize);
	else
		r = cgk_parse_proc_cgroup(text, want, out, outsize);
	if (r == 0) {
		size_t n = strnlen(out, outsize);

		if (n == outsize || out[0] != '/')
			__builtin_trap();
		/* the result is the tail of a line of the input */
		const char *hit = text;

		while ((hit = strstr(hit, out)) && hit[n] != '\n' && hit[n] != '\0')
			hit++;
		if (!hit)
			__builtin_trap();
	} else if (r != -EINVAL && r != -ENOENT && r != -ENAMETOOLONG) {
		__builtin_trap();
	}

	/* cgk_has_controller on the text split at its first newline */
	char *nl = strchr(text, '\n');

	if (nl) {
		*nl = '\0';
		bool has = cgk_has_controller(text, nl + 1);

		if (has && (!nl[1] || strchr(nl + 1, ',') || !strstr(text, nl + 1)))
			__builtin_trap();
	}
	free(out);
	free(text);
	return 0;
}
