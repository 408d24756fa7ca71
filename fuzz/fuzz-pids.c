// SPDX-License-Identifier: LGPL-2.1-or-later
/* libFuzzer target: cgk_parse_pids on arbitrary bytes. */
#include <stdint.h>
#include <string.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cgk_pidvec v = { 0 };
	size_t lines = 0;
	int r;

	/* a sentinel entry: appends must keep it, failures must too */
	if (cgk_pidvec_push(&v, 42) < 0)
		return 0;
	r = cgk_parse_pids((const char *)data, size, &v);
	if (v.n < 1 || v.v[0] != 42)
		__builtin_trap();
	if (r == 0) {
		/* one pid a line, the last newline optional */
		lines = 0;
		for (size_t i = 0; i < size; i++)
			lines += data[i] == '\n';
		if (size && data[size - 1] != '\n')
			lines++;
		if (v.n != 1 + lines)
			__builtin_trap();
		for (size_t i = 1; i < v.n; i++)
			if (v.v[i] < 0)
				__builtin_trap();
		for (size_t i = 0; i < size; i++)
			if (data[i] != '\n' && (data[i] < '0' || data[i] > '9'))
				__builtin_trap();
	} else if (r != -EINVAL || v.n != 1) {
		__builtin_trap();
	}
	cgk_pidvec_free(&v);
	return 0;
}
