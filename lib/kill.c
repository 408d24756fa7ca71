/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The pieces of a kill, which op.c puts in order: the run prepared on a
 * resolved target (guard rails), the dry run and the confirm callback, a
 * backend picked (falling back when one cannot start) and the signal sent
 * at the boosted priority, and what the report says at the end.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "internal.h"

static const struct cgk_backend_ops *const backends[CGK_BACKEND_COUNT] = {
	[CGK_BACKEND_KERNEL] = &cgk_backend_kernel,
	[CGK_BACKEND_FREEZE] = &cgk_backend_freeze,
	[CGK_BACKEND_V1_FREEZE] = &cgk_backend_v1_freeze,
	[CGK_BACKEND_LOOP] = &cgk_backend_loop,
};

/* Errors that mean a backend could not start, not that it half-worked:
 * the next one may serve (cgroup.kill is not delegated by default). */
static bool can_fall_back(int err)
{
	return err == -EACCES || err == -EPERM || err == -ENOENT || err == -EROFS;
}

/* A freezer backend on a subtree that holds cgkill (--force) would freeze
 * cgkill itself, and nobody would thaw it. */
static bool freezes_self(const struct cgk_run *run, enum cgk_backend b)
{
	return run->self_inside && (b == CGK_BACKEND_FREEZE || b == CGK_BACKEND_V1_FREEZE);
}

/* A signal is reported as sent once a backend has taken it on: not when
 * none could, nor twice when one falls back to another. */
static int record_signal(struct cgk_run *run, int sig, enum cgk_backend b)
{
	if (cgk_report_add_signal(run->rep, sig, b) < 0)
		return cgk_error_set(&run->err, -ENOMEM, "out of memory");
	/* CGK_REAP: the backend releases the memory of what SIGKILL hits. */
	if (sig == SIGKILL && (run->opts->flags & CGK_REAP))
		run->rep->reap = true;
	return 0;
}

static int send_signal(struct cgk_run *run, int sig)
{
	const struct cgk_options *opts = run->opts;
	struct cgk_report *rep = run->rep;
	int r = -EOPNOTSUPP;

	cgk_pidset_free(&run->done);

	if (opts->backend != CGK_BACKEND_AUTO) {
		const struct cgk_backend_ops *ops = backends[opts->backend];

		r = freezes_self(run, opts->backend) ? -EOPNOTSUPP : ops->probe(run, sig);
		if (r < 0)
			return cgk_error_set(&run->err, r, "the %s backend cannot serve this cgroup%s",
					     cgk_backend_name(opts->backend),
					     freezes_self(run, opts->backend) ?
					     " (it would freeze cgkill itself, which is inside)" :
					     sig != SIGKILL && opts->backend == CGK_BACKEND_KERNEL ?
					     " (it sends SIGKILL only)" : "");
		r = record_signal(run, sig, opts->backend);
		return r < 0 ? r : ops->send(run, sig);
	}

	for (int b = CGK_BACKEND_KERNEL; b < CGK_BACKEND_COUNT; b++) {
		const struct cgk_backend_ops *ops = backends[b];

		r = freezes_self(run, b) ? -EOPNOTSUPP : ops->probe(run, sig);
		if (r == -EOPNOTSUPP)
			continue;	/* not this kind of hierarchy or signal */
		if (r >= 0) {
			enum cgk_backend prev = rep->backend;
			size_t n = rep->n_signals;
			unsigned touched = rep->signalled + rep->not_permitted;

			r = record_signal(run, sig, b);
			if (r < 0)
				return r;
			r = ops->send(run, sig);
			/* Fall back only when it could not start: once a process
			 * was signalled, the failure is the answer. */
			if (r >= 0 || !can_fall_back(r) ||
			    rep->signalled + rep->not_permitted != touched)
				return r;
			rep->n_signals = n;
			rep->backend = prev;
		}
		if (rep->fell_back_from == CGK_BACKEND_AUTO) {
			rep->fell_back_from = b;
			rep->fallback_errno = -r;
		}
	}
	return cgk_error_set(&run->err, r, "no backend can signal this cgroup");
}

/* CGK_BOOSTED: the caller's real-time priority is the boost, on already. */
static void boost_adopt(struct cgk_boost *b)
{
	int nice;

	if (syscall(SYS_sched_getattr, 0, &b->came, sizeof(b->came), 0) < 0 ||
	    b->came.policy != SCHED_RR)
		return;
	/* sched_getattr() leaves out the nice of a real-time thread. */
	errno = 0;
	nice = getpriority(PRIO_PROCESS, 0);
	b->old = (struct cgk_boost_attr){ .size = sizeof(b->old), .policy = SCHED_OTHER,
				      .nice = errno ? 0 : nice };
	b->held = b->raised = true;
}

void cgk_boost_raise(struct cgk_boost *b)
{
	/* flags: SCHED_FLAG_RESET_ON_FORK */
	struct cgk_boost_attr rr = { .size = sizeof(rr), .policy = SCHED_RR, .flags = 0x01, .priority = 1 };

	if (!b->on || b->raised || b->niced)
		return;
	b->old = (struct cgk_boost_attr){ .size = sizeof(b->old) };
	if (syscall(SYS_sched_getattr, 0, &b->old, sizeof(b->old), 0) < 0 ||
	    (b->old.policy != SCHED_OTHER && b->old.policy != SCHED_BATCH))
		return;
	b->raised = syscall(SYS_sched_setattr, 0, &rr, 0) == 0;
	b->nice = b->old.nice;
	b->niced = !b->raised && b->nice > -20 && setpriority(PRIO_PROCESS, 0, -20) == 0;
}

void cgk_boost_drop(struct cgk_boost *b)
{
	b->old.size = sizeof(b->old);
	if (b->raised && syscall(SYS_sched_setattr, 0, &b->old, 0) < 0) {
		/* never left real-time: at worst back at nice 0 */
		b->old.nice = 0;
		syscall(SYS_sched_setattr, 0, &b->old, 0);
	}
	if (b->niced)
		setpriority(PRIO_PROCESS, 0, b->nice);
	b->raised = b->niced = false;
}

/* The end of the call: back to what the caller came with. */
void cgk_boost_end(struct cgk_boost *b)
{
	cgk_boost_drop(b);
	if (b->held)
		syscall(SYS_sched_setattr, 0, &b->came, 0);
	b->held = false;
}

struct cgk_boost cgk_boost_start(const struct cgk_options *opts, bool raise)
{
	struct cgk_boost b = { .on = opts && (opts->flags & CGK_BOOST) && !(opts->flags & CGK_DRY_RUN),
			   .came = { .size = sizeof(b.came) } };

	if (b.on && (opts->flags & CGK_BOOSTED))
		boost_adopt(&b);
	if (raise)
		cgk_boost_raise(&b);
	return b;
}

/* cgroup.procs of a threaded cgroup cannot list processes and the kernel
 * refuses cgroup.kill there: its processes belong to its threaded domain. */
static int check_threaded(struct cgk_run *run)
{
	if (run->t->threaded)
		return cgk_error_set(&run->err, -EOPNOTSUPP,
				     "threaded cgroup cannot be killed as a whole; kill its threaded domain");
	return 0;
}

int cgk_kill_waited(struct cgk_run *run, int r)
{
	run->rep->waited = true;
	if (r == 0)
		run->rep->emptied = true;
	else if (r == -ECANCELED)
		cgk_error_set(&run->err, r, "interrupted while waiting for the cgroup to empty");
	return r;
}

/* The kernel backend does not walk the tree: count it for the report.
 * Best effort: its failure is not the call's, so it says nothing. */
void cgk_kill_count_cgroups(struct cgk_run *run)
{
	struct cgk_error said = run->err;

	if (run->rep->cgroups)
		return;
	run->err = (struct cgk_error){ 0 };
	(void)cgk_tree_cgroups(run, &run->rep->cgroups);
	cgk_error_free(&run->err);
	run->err = said;
}

int cgk_kill_survivors(struct cgk_run *run, int r)
{
	struct cgk_report *rep = run->rep;
	struct cgk_process_list *left = &rep->lists[CGK_LIST_SURVIVORS];
	unsigned long long ms = (unsigned long long)run->opts->wait_ms;
	size_t hidden = 0;

	(void)cgk_tree_list(run, left, NULL);
	for (size_t i = 0; i < left->n; i++)
		hidden += left->v[i].pid == 0;
	/* PID 0 entries: say which backend would reach them. */
	if (!left->n)
		return cgk_error_set(&run->err, r, "not empty after waiting %llu ms, though its "
				     "lists show no process: what is left is outside our pid "
				     "namespace", ms);
	if (hidden && rep->backend != CGK_BACKEND_KERNEL)
		return cgk_error_set(&run->err, r, "%zu process(es) left after waiting %llu ms, "
				     "%zu of them outside our pid namespace: only the kernel "
				     "backend (cgroup.kill, SIGKILL) reaches those",
				     left->n, ms, hidden);
	return cgk_error_set(&run->err, r, "%zu process(es) left after waiting %llu ms",
			     left->n, ms);
}

int cgk_kill_send(struct cgk_run *run, struct cgk_boost *boost, int sig)
{
	int r;

	cgk_boost_raise(boost);
	r = send_signal(run, sig);
	cgk_boost_drop(boost);
	return r;
}

int cgk_kill_confirm(struct cgk_run *run, struct cgk_boost *boost)
{
	const struct cgk_options *opts = run->opts;
	struct cgk_report *rep = run->rep;
	unsigned procs = 0, cgroups = 0;
	int r;

	if (opts->flags & CGK_DRY_RUN) {
		r = cgk_tree_list(run, &rep->lists[CGK_LIST_LISTED], &rep->cgroups);
		return r < 0 ? cgk_error_wrap(&run->err, r, "cannot list the processes") : 1;
	}
	if (!opts->confirm)
		return 0;
	r = cgk_tree_count(run, &procs, &cgroups);
	if (r < 0)
		return cgk_error_wrap(&run->err, r, "cannot count the processes");
	cgk_boost_drop(boost);
	if (!opts->confirm(rep->path, procs, cgroups, opts->confirm_data)) {
		rep->refused = CGK_GUARD_DECLINED;
		return cgk_error_set(&run->err, -ECANCELED, "not confirmed, nothing signalled");
	}
	return 0;
}

int cgk_kill_prepare(struct cgk_run *run)
{
	const struct cgk_target *t = run->t;
	struct rlimit nofile;
	int r = cgk_report_set_path(run->rep, t->path);

	if (r < 0)
		return r;
	run->rep->hierarchy = t->version;
	/* One batch per list where the fd limit allows: a batch may have to
	 * read the list again to confirm membership. */
	run->batch = 16384;
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur / 2 < run->batch)
		run->batch = nofile.rlim_cur > 64 ? nofile.rlim_cur / 2 : 16;
	run->procfd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (run->procfd < 0)
		return cgk_error_set(&run->err, -errno, "cannot open /proc");
	cgk_proc_check(run);

	r = check_threaded(run);
	return r < 0 ? r : cgk_guard_check(run);
}

void cgk_kill_cleanup(struct cgk_run *run)
{
	cgk_pidset_free(&run->done);
	cgk_pins_close(&run->exiting, -1);
	if (run->procfd >= 0)
		close(run->procfd);
	run->procfd = -1;
	cgk_target_close(run->t);
}

/* /proc/PID/cgroup names the cgroup, and the number comes from a /proc
 * that may belong to another pid namespace, and the name may lead through
 * a bind mount to another cgroup: so the cgroup opened must list the pid
 * itself before anything is signalled. */
int cgk_kill_resolve_pid(struct cgk_run *run, pid_t pid, struct cgk_boost *boost)
{
	_cleanup_free_ char *path = NULL;
	struct cgk_target *t = run->t;
	int r = cgk_cgroup_of_pid(pid, &path);

	if (r < 0)
		return cgk_error_set(&run->err, r, "cannot find its cgroup v2");
	r = cgk_report_set_path(run->rep, path);
	*boost = cgk_boost_start(run->opts, true);
	if (r >= 0)
		r = cgk_target_open(path, t, &run->err);
	if (r >= 0 && (r = cgk_target_holds(t, pid)) < 0)
		cgk_error_about(&run->err, r, t->path,
				r == -EINVAL ? "%d is not a process ID (is /proc/%d a thread? name its "
					       "process): refusing" :
				"process %d is not in this cgroup, though /proc/%d/cgroup names it "
				"(a /proc of another pid namespace, a mount that shows another "
				"cgroup there, or the process moved): refusing",
				(int)pid, (int)pid);
	return r;
}
