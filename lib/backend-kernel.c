/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel's own button: "1" into cgroup.kill (cgroup v2, Linux 5.14+).
 * SIGKILL only; the kernel handles forks and migrations racing the kill.
 * With CGK_REAP the processes are pinned by pidfds before the write (a pid
 * read after it could be recycled by then) and their memory released after
 * it. */
#include <fcntl.h>

#include "internal.h"

static int kernel_probe(struct cgk_run *run, int sig)
{
	if (run->t->version != 2 || sig != SIGKILL)
		return -EOPNOTSUPP;
	if (faccessat(run->t->fd, "cgroup.kill", F_OK, 0) < 0)
		return -errno;
	return 0;
}

/* A freeze that a freeze run killed halfway left behind (its mark says
 * so): the frozen die of SIGKILL all the same, but the emptied cgroup would
 * freeze whatever enters it next. */
static void thaw_left_behind(struct cgk_run *run)
{
	if (cgk_marked(run->t->fd, CGK_MARK_FROZEN) &&
	    cgk_write_file_at(run->t->fd, "cgroup.freeze", "0") == 0)
		cgk_mark_clear(run->t->fd, CGK_MARK_FROZEN);
}

/* CGK_REAP: the processes pinned before the write. The kill matters more
 * than the reap: if not all of them can be pinned, the write goes ahead,
 * those pinned are reaped, and the reap's errno says why. */
static int pin(struct cgk_run *run, struct cgk_pins *pins)
{
	struct cgk_error said = run->err;
	int r;

	run->err = (struct cgk_error){ 0 };
	r = cgk_signal_pin(run, pins);
	cgk_error_free(&run->err);
	run->err = said;
	return r;
}

static int kernel_send(struct cgk_run *run, int sig)
{
	struct cgk_pins pins = { 0 };
	int pinned = 0, r;

	(void)sig;
	if (run->opts->flags & CGK_REAP)
		pinned = pin(run, &pins);
	r = cgk_write_file_at(run->t->fd, "cgroup.kill", "1");
	for (size_t i = 0; r >= 0 && i < pins.n; i++)
		cgk_reap(run, pins.fd[i]);
	if (r >= 0 && pinned < 0 && !run->rep->reap_errno)
		run->rep->reap_errno = -pinned;
	cgk_pins_close(&pins, -1);
	if (r < 0)
		return cgk_error_set(&run->err, r, "cannot write cgroup.kill");
	thaw_left_behind(run);
	return 0;
}

const struct cgk_backend_ops cgk_backend_kernel = {
	.id = CGK_BACKEND_KERNEL,
	.probe = kernel_probe,
	.send = kernel_send,
};
