/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * deadline BASE: BASE (an idle machine's time, in any unit) scaled to the
 * machine's load now and $CGKILL_TEST_SLOW, printed as a whole number: the
 * shell tests' deadlines (tests/lib.sh: wait_for) from the same code as the
 * C tests' (tests/support/deadline.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "../support/deadline.h"

int main(int argc, char **argv)
{
	unsigned long base;
	char *end;

	errno = 0;
	base = argc == 2 ? strtoul(argv[1], &end, 10) : 0;
	if (argc != 2 || *end || end == argv[1] || errno || base > 0xffffffffUL) {
		fprintf(stderr, "usage: deadline BASE (a whole number)\n");
		return 2;
	}
	printf("%u\n", sb_deadline_ms((unsigned)base));
	return 0;
}
