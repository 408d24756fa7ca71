/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgk_kill(): resolve the target, check the guard rails, pick a backend
 * (falling back when one cannot start), send the signal and any escalation,
 * wait for the subtree to empty, and fill the report.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "internal.h"

static const struct cgk_backend_ops *const backends[CGK_BACKEND_COUNT_] = {
	[CGK_BACKEND_KERNEL] = &cgk_backend_kernel,
	[CGK_BACKEND_FREEZE] = &cgk_backend_freeze,
	[CGK_BACKEND_V1_FREEZE] = &cgk_backend_v1_freeze,
	[CGK_BACKEND_LOOP] = &cgk_backend_loop,
};

int cgk_fail(struct cgk_run *run, int err, const char *fmt, ...)
{
	struct cgk_report *rep = run->rep;
	char what[384];
	va_list ap;

	/* The first failure is the one worth telling. */
	if (rep->error)
		return err;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	rep->error = err;
	snprintf(rep->message, sizeof(rep->message), "%s: %s (%s)", rep->path, what,
		 strerrorname_np(-err) ?: "?");
	return err;
}

static void clear_error(struct cgk_report *rep)
{
	rep->error = 0;
	rep->message[0] = '\0';
}

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
static void record_signal(struct cgk_report *rep, int sig, enum cgk_backend b)
{
	rep->backend = b;
	if (rep->n_signals < CGK_MAX_SIGNALS) {
		rep->signals[rep->n_signals] = sig;
		rep->backends[rep->n_signals++] = b;
	}
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
			return cgk_fail(run, r, "the %s backend cannot serve this cgroup%s",
					cgk_backend_name(opts->backend),
					freezes_self(run, opts->backend) ?
					" (it would freeze cgkill itself, which is inside)" :
					sig != SIGKILL && opts->backend == CGK_BACKEND_KERNEL ?
					" (it sends SIGKILL only)" : "");
		record_signal(rep, sig, opts->backend);
		return ops->send(run, sig);
	}

	for (int b = CGK_BACKEND_KERNEL; b < CGK_BACKEND_COUNT_; b++) {
		const struct cgk_backend_ops *ops = backends[b];

		r = freezes_self(run, b) ? -EOPNOTSUPP : ops->probe(run, sig);
		if (r == -EOPNOTSUPP)
			continue;	/* not this kind of hierarchy or signal */
		if (r >= 0) {
			enum cgk_backend prev = rep->backend;
			unsigned n = rep->n_signals, touched = rep->signalled + rep->not_permitted;

			record_signal(rep, sig, b);
			r = ops->send(run, sig);
			/* Fall back only when it could not start: once a process
			 * was signalled, the failure is the answer. */
			if (r >= 0 || !can_fall_back(r) ||
			    rep->signalled + rep->not_permitted != touched)
				return r;
			rep->n_signals = n;
			rep->backend = prev;
			clear_error(rep);
		}
		if (rep->fell_back_from == CGK_BACKEND_AUTO) {
			rep->fell_back_from = b;
			rep->fallback_errno = -r;
		}
	}
	return cgk_fail(run, r, "no backend can signal this cgroup");
}

/* struct sched_attr as of Linux 3.14 (SCHED_ATTR_SIZE_VER0). */
struct boost_attr {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime, deadline, period;
};

/*
 * CGK_BOOST: from the call until the signal is sent, SCHED_RR 1 where the
 * caller may (CAP_SYS_NICE or RLIMIT_RTPRIO, and an RT budget in its cpu
 * cgroup), else nice -20 where it may: beside a fork bomb's thousands of
 * runnable tasks a killer of ordinary weight gets a sliver of the CPU, a
 * slice every second or two. For this thread only; dropped before any
 * wait and before the confirm callback, taken again for an escalation's
 * signal; a caller already real-time is left as it is. Resolving the
 * target and the guard rails are a few reads, and every backend's signal
 * phase is bounded (10 s), as is RT time (the kernel's RT throttling,
 * by default 0.95 s in every second).
 */
struct boost {
	bool on, raised, niced;
	int nice;
	struct boost_attr old;
};

static void boost_raise(struct boost *b)
{
	/* flags: SCHED_FLAG_RESET_ON_FORK */
	struct boost_attr rr = { .size = sizeof(rr), .policy = SCHED_RR, .flags = 0x01, .priority = 1 };

	if (!b->on || b->raised || b->niced)
		return;
	b->old = (struct boost_attr){ .size = sizeof(b->old) };
	if (syscall(SYS_sched_getattr, 0, &b->old, sizeof(b->old), 0) < 0 ||
	    (b->old.policy != SCHED_OTHER && b->old.policy != SCHED_BATCH))
		return;
	b->raised = syscall(SYS_sched_setattr, 0, &rr, 0) == 0;
	b->nice = b->old.nice;
	b->niced = !b->raised && b->nice > -20 && setpriority(PRIO_PROCESS, 0, -20) == 0;
}

static void boost_drop(struct boost *b)
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

static struct boost boost_start(const struct cgk_options *opts)
{
	struct boost b = { .on = opts && (opts->flags & CGK_BOOST) && !(opts->flags & CGK_DRY_RUN) };

	boost_raise(&b);
	return b;
}

static int check_options(struct cgk_run *run)
{
	const struct cgk_options *o = run->opts;
	bool bad = o->signal <= 0 || o->signal > SIGRTMAX || o->backend < 0 ||
		   o->backend >= CGK_BACKEND_COUNT_ || o->n_escalations > CGK_MAX_ESCALATIONS;

	for (unsigned i = 0; !bad && i < o->n_escalations; i++)
		bad = o->escalations[i].signal <= 0 || o->escalations[i].signal > SIGRTMAX;
	return bad ? cgk_fail(run, -EINVAL, "invalid options (signal, backend or escalation)") : 0;
}

/* cgroup.procs of a threaded cgroup cannot list processes and the kernel
 * refuses cgroup.kill there: its processes belong to its threaded domain. */
static int check_threaded(struct cgk_run *run)
{
	if (run->t->threaded)
		return cgk_fail(run, -EOPNOTSUPP,
				"threaded cgroup cannot be killed as a whole; kill its threaded domain");
	return 0;
}

/* Now plus ms, saturating: UINT64_MAX means "no deadline". */
static uint64_t deadline_after(uint64_t ms)
{
	uint64_t now = cgk_now_ms();

	return ms > UINT64_MAX - now ? UINT64_MAX : now + ms;
}

static int wait_empty(struct cgk_run *run, uint64_t deadline)
{
	int r;

	run->rep->waited = true;
	r = cgk_wait_empty(run, deadline);
	if (r == 0)
		run->rep->emptied = true;
	else if (r == -ECANCELED)
		cgk_fail(run, r, "interrupted while waiting for the cgroup to empty");
	return r;
}

static int run_target(struct cgk_target *t, const struct cgk_options *opts,
		      struct cgk_report *rep, struct boost *boost)
{
	struct cgk_run run = { .opts = opts, .rep = rep, .t = t, .self = getpid() };
	struct rlimit nofile;
	uint64_t start;
	int r;

	snprintf(rep->path, sizeof(rep->path), "%s", t->path);
	rep->hierarchy = t->version;
	/* One batch per list where the fd limit allows: a batch may have to
	 * read the list again to confirm membership. */
	run.batch = 16384;
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur / 2 < run.batch)
		run.batch = nofile.rlim_cur > 64 ? nofile.rlim_cur / 2 : 16;
	run.procfd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (run.procfd < 0)
		return cgk_fail(&run, -errno, "cannot open /proc");
	cgk_proc_check(&run);

	r = check_options(&run);
	if (r >= 0)
		r = check_threaded(&run);
	if (r >= 0)
		r = cgk_guard_check(&run);
	if (r < 0)
		goto out;

	if (opts->flags & CGK_DRY_RUN) {
		r = cgk_tree_list(&run, &rep->listed, &rep->cgroups);
		if (r < 0)
			cgk_fail(&run, r, "cannot list the processes");
		goto out;
	}
	if (opts->confirm) {
		unsigned procs = 0, cgroups = 0;

		r = cgk_tree_count(&run, &procs, &cgroups);
		if (r < 0) {
			cgk_fail(&run, r, "cannot count the processes");
			goto out;
		}
		boost_drop(boost);
		if (!opts->confirm(rep->path, procs, cgroups, opts->userdata)) {
			rep->refused = CGK_GUARD_DECLINED;
			r = cgk_fail(&run, -ECANCELED, "not confirmed, nothing signalled");
			goto out;
		}
	}

	start = cgk_now_ms();
	boost_raise(boost);
	r = send_signal(&run, opts->signal);
	boost_drop(boost);
	/* A process that refused one signal refuses the next: no escalation,
	 * no wait for what cannot go. */
	for (unsigned i = 0; r >= 0 && !run.self_seen && !rep->not_permitted &&
			     i < opts->n_escalations; i++) {
		const struct cgk_escalation *e = &opts->escalations[i];

		r = wait_empty(&run, deadline_after(e->after_ms));
		if (r == 0)
			break;
		if (r == -ETIMEDOUT) {
			boost_raise(boost);
			r = send_signal(&run, e->signal);
			boost_drop(boost);
		} else {
			r = cgk_fail(&run, r, "cannot wait");
		}
	}
	rep->signal_ms = cgk_now_ms() - start;
	if (r >= 0 && rep->not_permitted)
		r = cgk_fail(&run, -EPERM, "%u process(es) could not be signalled: not permitted "
			     "(%u signalled)", rep->not_permitted, rep->signalled);

	/* With --force on our own cgroup: we go last, like everyone else. */
	if (r >= 0 && run.self_seen) {
		kill(run.self, rep->signals[rep->n_signals - 1]);
		goto out;
	}
	if (r >= 0 && !rep->emptied && opts->wait_ms) {
		r = wait_empty(&run, deadline_after(opts->wait_ms));
		if (r == -ETIMEDOUT) {
			size_t hidden = 0;

			cgk_tree_list(&run, &rep->survivors, NULL);
			for (size_t i = 0; i < rep->survivors.n; i++)
				hidden += rep->survivors.v[i].pid == 0;
			/* PID 0 entries: say which backend would reach them. */
			if (!rep->survivors.n)
				cgk_fail(&run, r, "not empty after waiting %llu ms, though its lists "
					 "show no process: what is left is outside our pid namespace",
					 (unsigned long long)opts->wait_ms);
			else if (hidden && rep->backend != CGK_BACKEND_KERNEL)
				cgk_fail(&run, r, "%zu process(es) left after waiting %llu ms, %zu of them "
					 "outside our pid namespace: only the kernel backend "
					 "(cgroup.kill, SIGKILL) reaches those",
					 rep->survivors.n, (unsigned long long)opts->wait_ms, hidden);
			else
				cgk_fail(&run, r, "%zu process(es) left after waiting %llu ms",
					 rep->survivors.n, (unsigned long long)opts->wait_ms);
		} else if (r < 0) {
			cgk_fail(&run, r, "cannot wait for the cgroup to empty");
		}
	}
	if (rep->emptied)
		rep->empty_ms = cgk_now_ms() - start;
	/* The kernel backend does not walk the tree: count it for the report.
	 * Best effort: a walk that fails here does not undo a kill that worked. */
	if (!rep->cgroups && cgk_tree_cgroups(&run, &rep->cgroups) < 0 && r >= 0)
		clear_error(rep);
out:
	cgk_pidset_free(&run.done);
	close(run.procfd);
	return r < 0 ? (rep->error ?: r) : 0;
}

/* The end of both entry points: r is what resolving the target gave. */
static int kill_resolved(int r, struct cgk_target *t, const struct cgk_options *opts,
			 struct cgk_report *rep, struct boost *boost)
{
	if (r >= 0) {
		r = run_target(t, opts, rep, boost);
		cgk_target_close(t);
	} else {
		rep->error = r;
	}
	boost_drop(boost);
	return r;
}

CGK_EXPORT int cgk_kill(const char *path, const struct cgk_options *opts,
			struct cgk_report *rep)
{
	struct boost boost = boost_start(opts);
	struct cgk_target t;

	*rep = (struct cgk_report){ 0 };
	snprintf(rep->path, sizeof(rep->path), "%s", path ?: "");
	return kill_resolved(cgk_target_open(path, &t, rep->message, sizeof(rep->message)),
			     &t, opts, rep, &boost);
}

CGK_EXPORT int cgk_kill_fd(int cgroup_dirfd, const struct cgk_options *opts,
			   struct cgk_report *rep)
{
	struct boost boost = boost_start(opts);
	struct cgk_target t;

	*rep = (struct cgk_report){ 0 };
	snprintf(rep->path, sizeof(rep->path), "fd %d", cgroup_dirfd);
	return kill_resolved(cgk_target_from_fd(cgroup_dirfd, &t, rep->message, sizeof(rep->message)),
			     &t, opts, rep, &boost);
}

/* /proc/PID/cgroup names the cgroup, and the number comes from a /proc
 * that may belong to another pid namespace, and the name may lead through
 * a bind mount to another cgroup: so the cgroup opened must list the pid
 * itself before anything is signalled. */
CGK_EXPORT int cgk_kill_pid(pid_t pid, const struct cgk_options *opts, struct cgk_report *rep)
{
	struct boost boost;
	struct cgk_target t;
	char path[4096];
	int r;

	*rep = (struct cgk_report){ 0 };
	snprintf(rep->path, sizeof(rep->path), "pid %d", (int)pid);
	r = cgk_cgroup_of_pid(pid, path, sizeof(path));
	if (r < 0) {
		snprintf(rep->message, sizeof(rep->message), "pid %d: cannot find its cgroup v2 (%s)",
			 (int)pid, strerrorname_np(-r) ?: "?");
		return rep->error = r;
	}
	snprintf(rep->path, sizeof(rep->path), "%s", path);
	boost = boost_start(opts);
	r = cgk_target_open(path, &t, rep->message, sizeof(rep->message));
	if (r >= 0 && (r = cgk_target_holds(&t, pid)) < 0) {
		snprintf(rep->message, sizeof(rep->message),
			 r == -EINVAL ? "%s: %d is not a process ID (is /proc/%d a thread? name its "
					"process): refusing (%s)" :
			 "%s: process %d is not in this cgroup, though /proc/%d/cgroup names it "
			 "(a /proc of another pid namespace, a mount that shows another cgroup "
			 "there, or the process moved): refusing (%s)",
			 t.path, (int)pid, (int)pid, strerrorname_np(-r) ?: "?");
		cgk_target_close(&t);
	}
	return kill_resolved(r, &t, opts, rep, &boost);
}
