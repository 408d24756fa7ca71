/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * No freezer: signal what the process lists show, again and again, until a
 * pass finds nothing that has not been signalled. Works on any hierarchy
 * (v1 pids, name=systemd, ..., or v2) and with any signal.
 *
 * Where the target has pids.max (v1 pids hierarchy, or v2 with the pids
 * controller enabled above it) it is clamped to 0 while the passes run, so a
 * fork bomb cannot grow; the limit is hierarchical, so the clamp on the
 * target bounds the whole subtree. The old value is put back on every path.
 * The clamp is for SIGKILL only: a graceful signal must not break forks.
 * The passes themselves are in passes.c.
 */
#include <string.h>

#include "internal.h"

static int loop_probe(struct cgk_run *run, int sig)
{
	(void)run;
	(void)sig;
	return 0;
}

struct clamp {
	struct cgk_run *run;
	bool active;		/* signals blocked until the restore; mask: the caller's */
	char old[32];
	sigset_t mask;
};

/* pids.max to 0, remembering the old value; no pids.max, no clamp. A clamp
 * that cannot be set is not fatal: the passes still do the work. */
static int clamp_set(struct clamp *c)
{
	_cleanup_free_ char *buf = NULL;
	int fd = c->run->t->fd;
	int r = cgk_read_file_at(fd, "pids.max", &buf, NULL);
	bool left;
	size_t n;

	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	n = strcspn(buf, "\n");
	if (n == 0 || n >= sizeof(c->old))
		return -EINVAL;
	memcpy(c->old, buf, n);
	c->old[n] = '\0';
	/* 0 with our mark: a run of ours clamped it and was killed before it
	 * put back the value the mark holds; ours to restore. Without the
	 * mark it is someone else's clamp: leave it be. */
	left = strcmp(c->old, "0") == 0;
	if (left && cgk_mark_get(fd, CGK_MARK_PIDS_MAX, c->old, sizeof(c->old)) < 0)
		return 0;
	/* No signal but SIGKILL may end us before the restore, and the old
	 * value is in the mark, set first, if SIGKILL does. */
	cgk_signals_block(&c->mask);
	if (!left) {
		cgk_mark_set(fd, CGK_MARK_PIDS_MAX, c->old);
		r = cgk_write_file_at(fd, "pids.max", "0");
		if (r < 0) {
			cgk_mark_clear(fd, CGK_MARK_PIDS_MAX);
			cgk_signals_restore(&c->mask);
			return r;
		}
	}
	c->active = true;
	return 0;
}

static int clamp_restore(struct clamp *c)
{
	int r;

	if (!c->active)
		return 0;
	r = cgk_write_file_at(c->run->t->fd, "pids.max", c->old);
	if (r == 0)
		cgk_mark_clear(c->run->t->fd, CGK_MARK_PIDS_MAX);
	/* Vanished with its cgroup: nothing left to restore. */
	if (cgk_removed(r))
		r = 0;
	if (r == 0) {
		c->active = false;
		cgk_signals_restore(&c->mask);
	}
	return r;
}

static void clamp_cleanup(struct clamp *c)
{
	/* Not restored: the mark stays for a later run to find. */
	if (clamp_restore(c) < 0)
		cgk_signals_restore(&c->mask);
}

static int loop_send(struct cgk_run *run, int sig)
{
	__attribute__((cleanup(clamp_cleanup))) struct clamp clamp = { .run = run };
	uint64_t deadline = cgk_now_ms() + CGK_SEND_BUDGET_MS;
	int r;

	/* Only a kill needs the tree to stop growing; a HUP meant as a
	 * reload must not make the service's fork() fail meanwhile. */
	if (sig == SIGKILL)
		(void)clamp_set(&clamp);
	r = cgk_passes(run, sig, deadline, true);
	int t = clamp_restore(&clamp);
	if (t < 0 && r >= 0)
		r = cgk_error_set(&run->err, t, "cannot restore pids.max to %s", clamp.old);
	return r;
}

const struct cgk_backend_ops cgk_backend_loop = {
	.id = CGK_BACKEND_LOOP,
	.probe = loop_probe,
	.send = loop_send,
};
