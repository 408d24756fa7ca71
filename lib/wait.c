/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Wait for a subtree to empty: "populated 0" in cgroup.events on v2 (poll
 * wakes on changes; coalesced, so re-read every time), polling the process
 * lists with backoff on v1, which has no such file. */
#include <fcntl.h>
#include <poll.h>

#include "internal.h"

#define PROGRESS_MS 250

static bool cancelled(const struct cgk_run *run)
{
	return run->opts->cancel && *run->opts->cancel;
}

static void progress(struct cgk_run *run, uint64_t start, uint64_t *next)
{
	uint64_t now = cgk_now_ms();
	unsigned left = 0;

	if (!run->opts->progress || now < *next)
		return;
	*next = now + PROGRESS_MS;
	cgk_tree_count(run, &left, NULL);
	run->opts->progress(run->rep->path, left, now - start, run->opts->progress_data);
}

static int wait_events(struct cgk_run *run, int fd, uint64_t deadline)
{
	uint64_t start = cgk_now_ms(), next = start + PROGRESS_MS;

	for (;;) {
		int populated = cgk_events_value(fd, "populated");
		uint64_t now = cgk_now_ms();
		struct pollfd pfd = { .fd = fd, .events = POLLPRI };

		/* Removed (ENODEV through our fd): only an empty cgroup can be. */
		if (populated == 0 || populated == -ENODEV)
			return 0;
		if (populated < 0)
			return populated;
		if (now >= deadline)
			return -ETIMEDOUT;
		if (cancelled(run))
			return -ECANCELED;
		progress(run, start, &next);
		uint64_t left = deadline - now;
		/* Wake at least for progress reports; notifications do the rest. */
		if (poll(&pfd, 1, (int)(left < PROGRESS_MS ? left : PROGRESS_MS)) < 0 && errno != EINTR)
			return -errno;
	}
}

static int found_one(struct cgk_run *run, int cgfd, const char *rel, pid_t pid, void *arg)
{
	(void)run, (void)cgfd, (void)rel, (void)pid, (void)arg;
	return 1;
}

static bool stragglers(struct cgk_run *run)
{
	const struct cgk_report *rep = run->rep;
	/* A process we sent SIGKILL cannot move any more: if it lives, the
	 * lists show it. Skipping those spares a /proc read per process that
	 * is still being reaped. */
	bool killed = rep->n_signals && rep->signals[rep->n_signals - 1].signal == SIGKILL;

	return cgk_subtree_scan(run, killed, found_one, NULL) > 0;
}

/* v1 lists leave out processes of pid namespaces other than ours (and
 * their descendants'), where v2 shows them as 0. With a /proc that is not
 * ours, we run in such a namespace: then a pids controller's count tells
 * whether anything we cannot see is left. */
static bool hidden_tasks(struct cgk_run *run)
{
	return !run->proc_ours && cgk_pids_current_zero(run->t->fd) == 0;
}

static int wait_polling(struct cgk_run *run, uint64_t deadline)
{
	uint64_t start = cgk_now_ms(), next = start + PROGRESS_MS;
	unsigned delay = 1;

	for (;;) {
		uint64_t walk_start = cgk_now_ms(), walk_ms;
		unsigned procs = 0;
		int r = cgk_tree_count(run, &procs, NULL);

		if (r < 0)
			return r;
		/* The lists can miss a process on the move; /proc cannot. */
		if (procs == 0 && !stragglers(run) && !hidden_tasks(run))
			return 0;
		if (cgk_now_ms() >= deadline)
			return -ETIMEDOUT;
		if (cancelled(run))
			return -ECANCELED;
		progress(run, start, &next);
		/* A walk of a big tree costs (25 ms for 1,000 cgroups), and the
		 * dying need the CPU: wait at least as long as the walk took. */
		walk_ms = cgk_now_ms() - walk_start;
		cgk_sleep_ms(delay > walk_ms ? delay : (unsigned)walk_ms);
		if (delay < 50)
			delay *= 2;
	}
}

int cgk_wait_empty(struct cgk_run *run, uint64_t deadline_ms)
{
	if (run->t->version == 2) {
		_cleanup_close_ int fd = openat(run->t->fd, "cgroup.events", O_RDONLY | O_CLOEXEC);

		if (fd >= 0)
			return wait_events(run, fd, deadline_ms);
	}
	return wait_polling(run, deadline_ms);
}
