// SPDX-License-Identifier: LGPL-2.1-or-later
/* Runs of the library's internals; see internals.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internals.h"
#include "tap.h"

int target_open(const char *path, struct cgk_target *t, char *msg, size_t size)
{
	struct cgk_error err = { 0 };
	int r = cgk_target_open(path, t, &err);
	char name[16];

	if (r < 0)
		snprintf(msg, size, "%s: %s (%s)", err.subject ? err.subject : path,
			 err.what ? err.what : "", cgk_errno_name(r, name, sizeof(name)));
	else if (size)
		msg[0] = '\0';
	cgk_error_free(&err);
	return r;
}

void report_add_process(struct cgk_report *rep, enum cgk_list list, pid_t pid, char state,
			const char *comm, size_t comm_len, const char *cgroup)
{
	struct cgk_process *p;

	if (cgk_process_list_add(&rep->lists[list], pid, cgroup, &p) < 0)
		bail_out("out of memory");
	p->state = state;
	memset(p->comm, 0, sizeof(p->comm));
	memcpy(p->comm, comm, comm_len < sizeof(p->comm) ? comm_len : sizeof(p->comm));
}

int lib_run_open(struct lib_run *p, const char *path, size_t batch)
{
	struct cgk_error err = { 0 };
	int r;

	memset(p, 0, sizeof(*p));
	p->t.fd = -1;
	p->run.procfd = -1;
	r = cgk_target_open(path, &p->t, &err);
	if (r < 0) {
		diag("cgk_target_open(%s): %s (%d)", path, err.what ? err.what : "", r);
		cgk_error_free(&err);
		return r;
	}
	if (cgk_options_new(&p->opts) < 0)
		return -ENOMEM;
	p->run = (struct cgk_run){ .opts = p->opts, .t = &p->t, .self = getpid(), .batch = batch,
				   .rep = cgk_report_new(p->t.path) };
	p->run.procfd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (!p->run.rep || p->run.procfd < 0)
		return p->run.rep ? -errno : -ENOMEM;
	cgk_proc_check(&p->run);
	return 0;
}

const char *lib_run_why(const struct lib_run *p)
{
	return p->run.err.what ? p->run.err.what : "";
}

void lib_run_close(struct lib_run *p)
{
	cgk_pidset_free(&p->run.done);
	cgk_error_free(&p->run.err);
	cgk_report_free(p->run.rep);
	if (p->run.procfd >= 0)
		close(p->run.procfd);
	if (p->t.fd >= 0)
		cgk_target_close(&p->t);
	cgk_options_free(p->opts);
	memset(p, 0, sizeof(*p));
}
