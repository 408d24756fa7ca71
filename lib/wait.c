/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Wait for a subtree to empty, one look at a time: "populated 0" in
 * cgroup.events on v2 (it wakes pollers on changes; coalesced, so re-read
 * every look), the process lists polled with backoff on v1, which has no
 * such file. The caller sleeps between looks, until cgk_wait_next() or a
 * change of the events fd, whichever comes first. */
#include <fcntl.h>
#include <poll.h>

#include "internal.h"

#define PROGRESS_MS 250
#define POLL_MAX_MS 50	/* the longest v1 backoff */

static bool cancelled(const struct cgk_run *run)
{
	return run->opts->cancel && *run->opts->cancel;
}

static void progress(struct cgk_run *run, struct cgk_wait *w, uint64_t now)
{
	unsigned left = 0;

	/* The tick also wakes the waiter for the cancel flag. */
	if (now < w->next_progress)
		return;
	w->next_progress = now + PROGRESS_MS;
	if (!run->opts->progress)
		return;
	cgk_tree_count(run, &left, NULL);
	run->opts->progress(run->rep->path, left, now - w->start, run->opts->progress_data);
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

/* v2: 0 if empty, 1 if not, -errno. */
static int look_events(struct cgk_wait *w)
{
	int populated = cgk_events_value(w->events_fd, "populated");

	/* Removed (ENODEV through our fd): only an empty cgroup can be. */
	if (populated == 0 || populated == -ENODEV)
		return 0;
	return populated;
}

/* v1, when the backoff says so: 0 if empty, 1 if not, -errno. */
static int look_lists(struct cgk_run *run, struct cgk_wait *w)
{
	uint64_t walk_start = cgk_now_ms(), walk_ms;
	unsigned procs = 0;
	int r;

	if (walk_start < w->next_poll)
		return 1;
	r = cgk_tree_count(run, &procs, NULL);
	if (r < 0)
		return r;
	/* The lists can miss a process on the move; /proc cannot. */
	if (procs == 0 && !stragglers(run) && !hidden_tasks(run))
		return 0;
	/* A walk of a big tree costs (25 ms for 1,000 cgroups), and the dying
	 * need the CPU: wait at least as long as the walk took. */
	walk_ms = cgk_now_ms() - walk_start;
	w->next_poll = cgk_now_ms() + (w->delay > walk_ms ? w->delay : walk_ms);
	if (w->delay < POLL_MAX_MS)
		w->delay *= 2;
	return 1;
}

void cgk_wait_begin(struct cgk_run *run, struct cgk_wait *w, uint64_t deadline)
{
	uint64_t now = cgk_now_ms();

	*w = (struct cgk_wait){ .events_fd = -1, .start = now, .deadline = deadline,
				.next_progress = now + PROGRESS_MS, .next_poll = now, .delay = 1 };
	if (run->t->version == 2)
		w->events_fd = openat(run->t->fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
}

int cgk_wait_look(struct cgk_run *run, struct cgk_wait *w)
{
	int r = w->events_fd >= 0 ? look_events(w) : look_lists(run, w);
	uint64_t now = cgk_now_ms();

	if (r <= 0)
		return r;
	if (now >= w->deadline)
		return -ETIMEDOUT;
	if (cancelled(run))
		return -ECANCELED;
	progress(run, w, now);
	return -EAGAIN;
}

uint64_t cgk_wait_next(const struct cgk_run *run, const struct cgk_wait *w)
{
	uint64_t next = w->deadline;

	/* Wake for progress reports and to look at the cancel flag;
	 * notifications (v2) or the backoff (v1) do the rest. */
	if ((run->opts->progress || run->opts->cancel) && w->next_progress < next)
		next = w->next_progress;
	if (w->events_fd < 0 && w->next_poll < next)
		next = w->next_poll;
	return next;
}

void cgk_wait_end(struct cgk_wait *w)
{
	if (w->events_fd >= 0)
		close(w->events_fd);
	w->events_fd = -1;
}

int cgk_wait_empty(struct cgk_run *run, uint64_t deadline_ms)
{
	struct cgk_wait w;
	int r;

	cgk_wait_begin(run, &w, deadline_ms);
	while ((r = cgk_wait_look(run, &w)) == -EAGAIN) {
		struct pollfd pfd = { .fd = w.events_fd, .events = POLLPRI };
		uint64_t next = cgk_wait_next(run, &w), now = cgk_now_ms();
		uint64_t left = next > now ? next - now : 0;

		if (poll(&pfd, 1, left > PROGRESS_MS ? PROGRESS_MS : (int)left) < 0 && errno != EINTR) {
			r = -errno;
			break;
		}
	}
	cgk_wait_end(&w);
	return r;
}
