// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * process_mrelease(2) (Linux 5.15): the address space of a process that has
 * SIGKILL pending is torn down at once, by the caller, instead of by the
 * process itself on its way out, which may wait for a CPU or a lock long
 * after the signal (a large address space takes a while to free, and under
 * memory pressure every other process waits for it).
 *
 * Only after SIGKILL: on a process that is not dying the kernel refuses
 * (EINVAL) and does nothing; on one whose memory a live process shares it
 * refuses too. Neither is a failure of the kill, nor is ESRCH (the process
 * already let go of its memory on its own).
 */
#include <sys/syscall.h>

#include "internal.h"

/* Its number is the same on every architecture but alpha. */
#if !defined(SYS_process_mrelease) && !defined(__alpha__)
#define SYS_process_mrelease 448
#endif

static int process_mrelease(int pidfd)
{
#ifdef SYS_process_mrelease
	return syscall(SYS_process_mrelease, pidfd, 0) < 0 ? -errno : 0;
#else
	(void)pidfd;
	return -ENOSYS;
#endif
}

void cgk_reap(struct cgk_run *run, int pidfd)
{
	struct cgk_report *rep = run->rep;
	int r;

	/* ENOSYS (before 5.15), or another failure already said. */
	if (rep->reap_errno)
		return;
	r = process_mrelease(pidfd);
	if (r == 0)
		rep->reaped++;
	else if (r == -ESRCH)
		rep->reap_gone++;
	else if (r == -EINVAL)
		rep->reap_shared++;
	else
		rep->reap_errno = -r;
}
