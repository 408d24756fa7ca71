// SPDX-License-Identifier: LGPL-2.1-or-later
/* libFuzzer target: signal names and numbers, durations (systemd.time(7)). */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	char buf[32], again[64];
	uint64_t ms, ms2;
	int sig = -1, sig2 = -1, r;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	r = cgk_signal_from_name(text, &sig);
	if (r == 0) {
		const char *name = cgk_signal_name(sig, buf, sizeof(buf));

		if (sig < 1 || sig > SIGRTMAX || !name)
			__builtin_trap();
		/* the canonical name maps back to the same number */
		if (cgk_signal_from_name(name, &sig2) < 0 || sig2 != sig)
			__builtin_trap();
		snprintf(again, sizeof(again), "sig%s", name);
		if (cgk_signal_from_name(again, &sig2) < 0 || sig2 != sig)
			__builtin_trap();
	} else if (r != -EINVAL || sig != -1) {
		__builtin_trap();
	}

	/* any int as a signal number: a name or NULL, never a crash */
	if (size >= sizeof(int)) {
		int n;

		memcpy(&n, data, sizeof(n));
		const char *name = cgk_signal_name(n, buf, (size_t)(data[0] % 33));

		if (name && (cgk_signal_from_name(name, &sig2) < 0 || sig2 != n))
			__builtin_trap();
	}

	r = cgk_parse_duration(text, &ms);
	if (r == 0) {
		/* the same value written in milliseconds parses the same */
		snprintf(again, sizeof(again), "%llums", (unsigned long long)ms);
		if (cgk_parse_duration(again, &ms2) < 0 || ms2 != ms)
			__builtin_trap();
		/* only a span of nothing but zeros is 0: the rest rounds up */
		if ((ms == 0) != (strpbrk(text, "123456789") == NULL && !strstr(text, "infinity")))
			__builtin_trap();
	} else if (r != -EINVAL && r != -ERANGE) {
		__builtin_trap();
	}
	/* a number with no unit is refused unless it is 0 */
	if (size && strspn(text, "0123456789") == size && strpbrk(text, "123456789") &&
	    r != -EINVAL && r != -ERANGE)
		__builtin_trap();
	free(text);
	return 0;
}
