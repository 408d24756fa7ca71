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
 * refuses too. Neither is a failure of the kill, nor is ESRCH: the process
 * got to its exit first and is freeing its memory itself (it let go of its
 * mm before we looked). Then the reap waits for that exit to end, so that
 * either way the memory is back when the kill returns.
 */
#include <poll.h>
#include <fcntl.h>
#include <sys/syscall.h>

#include "internal.h"

/* Its number is the same on every architecture but alpha. */
#if !defined(SYS_process_mrelease) && !defined(__alpha__)
#define SYS_process_mrelease 448
#endif

#define POLL_SLICE_MS 50	/* how often the cancel flag is looked at */

static int process_mrelease(int pidfd)
{
#ifdef SYS_process_mrelease
	return syscall(SYS_process_mrelease, pidfd, 0) < 0 ? -errno : 0;
#else
	(void)pidfd;
	return -ENOSYS;
#endif
}

/* A process freeing its own memory: waited for by cgk_reap_wait(), as many
 * as the batch allows. */
static void exiting_add(struct cgk_run *run, int pidfd)
{
	struct cgk_pins *x = &run->exiting;
	int *v;

	if (x->n >= run->batch)
		return;
	v = cgk_grow(x->fd, &x->cap, x->n + 1, sizeof(*v));
	if (!v)
		return;
	x->fd = v;
	v[x->n] = fcntl(pidfd, F_DUPFD_CLOEXEC, 3);
	if (v[x->n] >= 0)
		x->n++;
}

void cgk_reap(struct cgk_run *run, int pidfd)
{
	struct cgk_report *rep = run->rep;
	int r;

	/* ENOSYS (before 5.15), or another failure already said. */
	if (rep->reap_errno)
		return;
	r = process_mrelease(pidfd);
	if (r == 0) {
		rep->reaped++;
	} else if (r == -ESRCH) {
		rep->reap_gone++;
		exiting_add(run, pidfd);
	} else if (r == -EINVAL) {
		rep->reap_shared++;
	} else {
		rep->reap_errno = -r;
	}
}

/* A pidfd is readable once its process has exited: after exit_mm(), which
 * freed the memory (unless another process shares it). */
int cgk_reap_wait(struct cgk_run *run, uint64_t deadline)
{
	struct cgk_pins *x = &run->exiting;
	struct pollfd *p = x->n ? calloc(x->n, sizeof(*p)) : NULL;
	size_t left = x->n;
	int r = 0;

	for (size_t i = 0; p && i < x->n; i++)
		p[i] = (struct pollfd){ .fd = x->fd[i], .events = POLLIN };
	while (p && left) {
		uint64_t now = cgk_now_ms();
		int n;

		if (run->opts->cancel && *run->opts->cancel) {
			r = -ECANCELED;
			break;
		}
		if (now >= deadline)
			break;
		n = poll(p, x->n, deadline - now < POLL_SLICE_MS ? (int)(deadline - now) : POLL_SLICE_MS);
		if (n < 0 && errno != EINTR)
			break;
		for (size_t i = 0; n > 0 && i < x->n; i++) {
			if (p[i].fd >= 0 && p[i].revents) {
				p[i].fd = -1;	/* poll() passes over it from now on */
				left--;
			}
		}
	}
	free(p);
	cgk_pins_close(x);
	return r;
}

void cgk_pins_close(struct cgk_pins *pins)
{
	for (size_t i = 0; i < pins->n; i++)
		close(pins->fd[i]);
	free(pins->fd);
	*pins = (struct cgk_pins){ 0 };
}
