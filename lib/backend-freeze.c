/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroup v2 freezer (Linux 5.2+): freeze the subtree, signal every process
 * once, thaw. A frozen task cannot fork or move itself, so a pass over the
 * frozen tree sees every process; frozen tasks still die from SIGKILL.
 * Passes repeat until one finds nothing new, which also covers a freeze
 * that did not settle in time.
 */
#include <fcntl.h>
#include <poll.h>
#include <string.h>

#include "internal.h"

#define FREEZE_WAIT_MS 1000
#define SEND_BUDGET_MS 10000

static int freeze_probe(struct cgk_run *run, int sig)
{
	(void)sig;
	if (run->t->version != 2)
		return -EOPNOTSUPP;
	if (faccessat(run->t->fd, "cgroup.freeze", W_OK, 0) < 0)
		return -errno;
	return 0;
}

/* Wait, bounded, for "frozen 1"; tasks in D state or forking can delay it.
 * A freeze that does not settle is not an error: the passes go on, and go
 * on after the thaw too. */
static bool wait_frozen(int cgfd)
{
	_cleanup_close_ int fd = openat(cgfd, "cgroup.events", O_RDONLY | O_CLOEXEC);
	uint64_t deadline = cgk_now_ms() + FREEZE_WAIT_MS;
	int frozen;

	if (fd < 0)
		return false;
	while ((frozen = cgk_events_value(fd, "frozen")) == 0) {
		struct pollfd pfd = { .fd = fd, .events = POLLPRI };
		uint64_t now = cgk_now_ms();

		if (now >= deadline)
			return false;
		poll(&pfd, 1, (int)(deadline - now));
	}
	return frozen == 1;
}

static int freeze_send(struct cgk_run *run, int sig)
{
	_cleanup_free_ char *old = NULL;
	int r = cgk_read_file_at(run->t->fd, "cgroup.freeze", &old, NULL);
	bool was_frozen = r == 0 && old[0] == '1';
	uint64_t deadline = cgk_now_ms() + SEND_BUDGET_MS;
	bool settled;

	if (r < 0)
		return cgk_fail(run, r, "cannot read cgroup.freeze");
	if (!was_frozen) {
		r = cgk_write_file_at(run->t->fd, "cgroup.freeze", "1");
		if (r < 0)
			return cgk_fail(run, r, "cannot freeze the cgroup");
	}
	settled = wait_frozen(run->t->fd);
	/* Nothing in a frozen subtree forks or moves itself: one pass sees
	 * every process, as the kernel's own single walk does. */
	if (settled)
		r = cgk_signal_pass(run, sig, NULL);
	else
		r = cgk_loop_passes(run, sig, deadline, false);

	/* Thaw on every path; a cgroup the user had frozen stays frozen. A
	 * cgroup already removed (emptied by SIGKILL while frozen, then
	 * rmdir'ed by its manager) has nothing left to thaw. */
	if (!was_frozen) {
		int t = cgk_write_file_at(run->t->fd, "cgroup.freeze", "0");

		if (t == -ENOENT || t == -ENODEV)
			t = 0;
		if (t < 0 && r >= 0)
			r = cgk_fail(run, t, "cannot thaw the cgroup");
	}
	/* Not all frozen: a dying parent may have forked after its pass. */
	if (r >= 0 && !settled)
		r = cgk_loop_passes(run, sig, deadline, true);
	return r;
}

const struct cgk_backend_ops cgk_backend_freeze = {
	.id = CGK_BACKEND_FREEZE,
	.probe = freeze_probe,
	.send = freeze_send,
};
