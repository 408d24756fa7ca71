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
#include <sys/epoll.h>
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
size_t cgk_reap_left(struct cgk_run *run, int epfd)
{
	struct cgk_pins *x = &run->exiting;
	size_t kept = 0;

	for (size_t i = 0; i < x->n; i++) {
		struct pollfd p = { .fd = x->fd[i], .events = POLLIN };

		if (poll(&p, 1, 0) == 0) {
			x->fd[kept++] = x->fd[i];
			continue;
		}
		if (epfd >= 0)
			epoll_ctl(epfd, EPOLL_CTL_DEL, x->fd[i], NULL);
		close(x->fd[i]);
	}
	x->n = kept;
	return kept;
}

int cgk_reap_watch(struct cgk_run *run, int epfd)
{
	const struct cgk_pins *x = &run->exiting;

	for (size_t i = 0; i < x->n; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = x->fd[i] };

		if (epoll_ctl(epfd, EPOLL_CTL_ADD, x->fd[i], &ev) < 0)
			return -errno;
	}
	return 0;
}

int cgk_reap_wait(struct cgk_run *run, uint64_t deadline)
{
	int r = 0;

	while (cgk_reap_left(run, -1)) {
		uint64_t now = cgk_now_ms();
		struct pollfd p = { .fd = run->exiting.fd[0], .events = POLLIN };

		if (run->opts->cancel && *run->opts->cancel) {
			r = -ECANCELED;
			break;
		}
		if (now >= deadline)
			break;
		poll(&p, 1, deadline - now < CGK_REAP_SLICE_MS ? (int)(deadline - now) : CGK_REAP_SLICE_MS);
	}
	cgk_pins_close(&run->exiting, -1);
	return r;
}

void cgk_pins_close(struct cgk_pins *pins, int epfd)
{
	for (size_t i = 0; i < pins->n; i++) {
		if (epfd >= 0)
			epoll_ctl(epfd, EPOLL_CTL_DEL, pins->fd[i], NULL);
		close(pins->fd[i]);
	}
	free(pins->fd);
	*pins = (struct cgk_pins){ 0 };
}
