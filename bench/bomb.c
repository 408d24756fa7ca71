/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The benchmark's fork bomb: every process forks as fast as it can.
 *
 * Linked statically, so its thousands of page faults (every child faults
 * its text in again) land on pages of its own: when the bomb was a fork of
 * the harness, it shared text pages with libc and the harness, and a
 * contender exec'd next to it could wait tens of seconds on the lock of
 * one of them (folio_wait_bit_common in filemap_fault), the floor too.
 */
#include <sys/prctl.h>
#include <unistd.h>

int main(void)
{
	prctl(PR_SET_NAME, "cgkb-bomb");
	for (;;)
		fork();
}
