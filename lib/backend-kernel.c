/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel's own button: "1" into cgroup.kill (cgroup v2, Linux 5.14+).
 * SIGKILL only; the kernel handles forks and migrations racing the kill. */
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

static int kernel_send(struct cgk_run *run, int sig)
{
	int r;

	(void)sig;
	r = cgk_write_file_at(run->t->fd, "cgroup.kill", "1");
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
