/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The benchmark's fork bomb: every process forks as fast as it can.
 *
 * Built twice. cgkb-bomb is linked statically, so its thousands of page
 * faults (every child faults its text in again) land on pages of its own:
 * the favourable rows. cgkb-dbomb is the same program linked dynamically,
 * as users meet bombs: every fork (even one that pids.max refuses: the
 * limit is checked after the address space is copied) and every exit
 * takes the lock of libc's mapping, and its children fault libc's pages
 * in again, so a program started beside it waits in its dynamic loader
 * (see RESULTS.md, "Stalls beside a bomb").
 */
#include <sys/prctl.h>
#include <unistd.h>

int main(void)
{
	prctl(PR_SET_NAME, "cgkb-bomb");
	for (;;)
		fork();
}
