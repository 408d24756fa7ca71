/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Signal the processes of a subtree, each once, through pidfds.
 *
 * A pid read from cgroup.procs can die and be reused by an unrelated process
 * before we act on it. So: open a pidfd for every new pid of a cgroup, then
 * confirm that the pinned process is in the cgroup. Since Linux 6.13 the
 * pidfd says so itself (PIDFD_GET_INFO: its v2 cgroup id). Otherwise, or
 * when the ids differ (a process of a threaded subtree, listed by its
 * domain), read the cgroup's list again: a pid still listed names a live
 * process in the cgroup; if that is not the process our pidfd pins, the
 * pinned one is dead and the signal fails with ESRCH. Either way nothing
 * outside is hit.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "internal.h"

#ifndef PF_KTHREAD
#define PF_KTHREAD 0x00200000
#endif

#ifndef PIDFD_GET_INFO
struct pidfd_info {	/* its first version (64 bytes), Linux 6.13 */
	uint64_t mask;
	uint64_t cgroupid;
	uint32_t pid, tgid, ppid;
	uint32_t creds[8], spare0;
};
#define PIDFD_GET_INFO _IOWR(0xFF, 11, struct pidfd_info)
#define PIDFD_INFO_CGROUPID (1UL << 2)
_Static_assert(sizeof(struct pidfd_info) == 64, "PIDFD_INFO_SIZE_VER0");
#endif

/* One pid of a batch, from pidfd_open to the signal. */
struct slot {
	int pidfd;		/* or -errno of pidfd_open */
	bool member;		/* the pidfd says: in this cgroup */
	bool maybe_kthread;	/* not ruled out by its parent */
	bool confirmed;		/* pinned, and in the cgroup (or no pidfds) */
	bool killed;		/* SIGKILL went through the pidfd */
};

struct pass {
	int sig;
	unsigned fresh;
	unsigned unreachable;
	unsigned cgroups;
};

static int pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static int pidfd_send_signal(int pidfd, int sig)
{
	return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

/*
 * The kernel's cgroup.kill skips kernel threads; so do we. /proc/PID/exe
 * never resolves for a kernel thread (the kernel tests PF_KTHREAD before it
 * looks for an executable), and resolving it costs a third of reading
 * /proc/PID/stat, the most expensive step per process otherwise. Only when
 * it does not resolve (kernel thread, zombie, no ptrace access) do the
 * flags in stat decide. A /proc of another pid namespace numbers other
 * processes: then only a namespace without kernel threads answers.
 */
static bool is_kthread(const struct cgk_run *run, pid_t pid)
{
	struct cgk_process p;
	unsigned long flags = 0;
	char exe[32];

	if (!run->proc_ours)
		return run->kthreads_visible;	/* cannot look: do not touch */
	snprintf(exe, sizeof(exe), "%d/exe", pid);
	if (faccessat(run->procfd, exe, F_OK, AT_EACCESS) == 0)
		return false;
	return cgk_proc_stat(run->procfd, pid, &p, &flags) == 0 && (flags & PF_KTHREAD);
}

/*
 * What the pidfd tells of its process (Linux 6.13+): whether it is in the
 * v2 cgroup cgid (0: do not ask), and whether it may be a kernel thread.
 * Every kernel thread is a child of kthreadd (pid 2) or kthreadd itself
 * (parent 0), and only the initial pid namespace sees them: any other parent
 * rules one out. Leaves the slot as it is when the kernel cannot tell.
 */
static void pidfd_facts(struct cgk_run *run, uint64_t cgid, struct slot *s)
{
	struct pidfd_info info = { .mask = PIDFD_INFO_CGROUPID };

	if (run->no_pidfd_info || s->pidfd < 0)
		return;
	if (ioctl(s->pidfd, PIDFD_GET_INFO, &info) < 0) {
		if (errno == ESRCH) {	/* gone */
			close(s->pidfd);
			s->pidfd = -ESRCH;
		} else {
			run->no_pidfd_info = errno == ENOTTY || errno == EINVAL;
		}
		return;
	}
	s->member = cgid && (info.mask & PIDFD_INFO_CGROUPID) && info.cgroupid == cgid;
	s->maybe_kthread = info.ppid == 0 || info.ppid == 2;
}

static int send_one(struct cgk_run *run, struct pass *pass, pid_t pid, struct slot *s)
{
	int pidfd = s->pidfd;
	int r;

	if (pid == run->self) {
		/* Only reachable with --force; the caller signals itself last. */
		run->self_seen = true;
		return cgk_pidset_add(&run->done, pid);
	}
	if (s->maybe_kthread && is_kthread(run, pid))
		return cgk_pidset_add(&run->done, pid);
	/* Without pidfds (before 5.3) only kill(2) is left, right after the
	 * list confirmed the pid: racy against reuse in that gap, the best
	 * those kernels allow. */
	if (pidfd >= 0)
		r = pidfd_send_signal(pidfd, pass->sig) < 0 ? -errno : 0;
	else
		r = kill(pid, pass->sig) < 0 ? -errno : 0;
	if (r == 0) {
		run->rep->signalled++;
		pass->fresh++;
		s->killed = pidfd >= 0 && pass->sig == SIGKILL;
	} else if (r == -EPERM) {
		run->rep->not_permitted++;
		pass->fresh++;
	} else if (r != -ESRCH) {
		return r;
	}
	return cgk_pidset_add(&run->done, pid);
}

/* The id of a v2 cgroup (its file handle); 0 if unknown. */
static uint64_t cgroup_id(int cgfd)
{
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + sizeof(uint64_t)];
	} h = { .fh.handle_bytes = sizeof(uint64_t) };
	uint64_t id = 0;
	int mnt;

	if (name_to_handle_at(cgfd, "", &h.fh, &mnt, AT_EMPTY_PATH) == 0 &&
	    h.fh.handle_bytes == sizeof(id))
		memcpy(&id, h.fh.f_handle, sizeof(id));
	return id;
}

/* Pin pids[0..n) of the cgroup cgfd: open a pidfd for each, then confirm
 * that the pinned process is in the cgroup (by the pidfd, else by a fresh
 * read of the list): slots[i].confirmed. */
static int pin_batch(struct cgk_run *run, int cgfd, const pid_t *pids, struct slot *slots,
		     size_t n)
{
	struct cgk_pidvec again = { 0 };
	uint64_t cgid = run->t->version == 2 && !run->no_pidfd_info ? cgroup_id(cgfd) : 0;
	bool reread = false;
	int r = 0;

	for (size_t i = 0; i < n; i++) {
		struct slot *s = &slots[i];

		*s = (struct slot){ .maybe_kthread = true };
		s->pidfd = pidfd_open(pids[i]);
		if (s->pidfd < 0)
			s->pidfd = -errno;
		pidfd_facts(run, cgid, s);
		if (s->pidfd == -ESRCH)
			continue;
		reread = reread || !s->member;
	}
	/* On v1 cgroup.procs lists a process when any one of its threads is
	 * in the cgroup; a process-directed signal must need its leader there
	 * (the leader's tid is the pid), so v1 confirms against "tasks". */
	if (reread) {
		r = cgk_read_pid_file(cgfd, run->t->version == 1 ? "tasks" : "cgroup.procs",
				      &again);
		if (r == -ENOENT)
			r = 0;
		cgk_pidvec_sort(&again);
	}
	/* Not listed any more: gone, or moved and a later pass sees it. */
	for (size_t i = 0; i < n; i++)
		slots[i].confirmed = slots[i].pidfd != -ESRCH &&
				     (slots[i].member || cgk_pidvec_has_sorted(&again, pids[i]));
	cgk_pidvec_free(&again);
	return r;
}

static void close_batch(struct slot *slots, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (slots[i].pidfd >= 0)
			close(slots[i].pidfd);
}

/* Pin pids[0..n), signal those confirmed; with SIGKILL and CGK_REAP,
 * release the memory of those killed once the whole batch has the signal. */
static int signal_batch(struct cgk_run *run, struct pass *pass, int cgfd, const char *rel,
			const pid_t *pids, struct slot *slots, size_t n)
{
	int r = pin_batch(run, cgfd, pids, slots, n);

	for (size_t i = 0; r >= 0 && i < n; i++) {
		struct slot *s = &slots[i];

		if (!s->confirmed)
			continue;
		/* ENOSYS: no pidfds on this kernel; anything else is a failure. */
		if (s->pidfd < 0 && s->pidfd != -ENOSYS) {
			r = s->pidfd;
			break;
		}
		r = send_one(run, pass, pids[i], s);
	}
	if (run->opts->flags & CGK_REAP)
		for (size_t i = 0; i < n; i++)
			if (slots[i].killed)
				cgk_reap(run, slots[i].pidfd);
	if (r < 0)
		cgk_error_wrap(&run->err, r, "cannot signal the processes of %s",
			       *rel ? rel : "the target");
	close_batch(slots, n);
	return r;
}

static int pass_visit(struct cgk_run *run, int cgfd, const char *rel,
		      const struct cgk_pidvec *listed, void *arg)
{
	struct pass *pass = arg;
	struct cgk_pidvec fresh = { 0 };
	struct slot *slots = NULL;
	size_t batch;
	int r = 0;

	pass->cgroups++;

	for (size_t i = 0; r >= 0 && i < listed->n; i++) {
		if (listed->v[i] == 0)
			pass->unreachable++;
		else if (!cgk_pidset_has(&run->done, listed->v[i]))
			r = cgk_pidvec_push(&fresh, listed->v[i]);
	}
	batch = fresh.n < run->batch ? fresh.n : run->batch;
	if (!batch)
		batch = 1;
	if (r >= 0 && batch && !(slots = malloc(batch * sizeof(*slots))))
		r = -ENOMEM;
	for (size_t i = 0; r >= 0 && i < fresh.n; i += batch) {
		size_t n = fresh.n - i < batch ? fresh.n - i : batch;

		r = signal_batch(run, pass, cgfd, rel, fresh.v + i, slots, n);
	}
	free(slots);
	cgk_pidvec_free(&fresh);
	return r;
}

/* A process of the subtree found through /proc: pinned by a pidfd, then
 * confirmed again. In a /proc of our pid namespace, /proc/PID of a pinned
 * process that lives is that process: it must still be in the subtree. In
 * any other, the pid must still be in the cgroup's list (signal_batch). */
static int signal_found(struct cgk_run *run, int cgfd, const char *rel, pid_t pid, void *arg)
{
	struct pass *pass = arg;
	struct slot slot = { .maybe_kthread = true };
	char name[16];
	int r;

	if (!run->proc_ours)
		return signal_batch(run, pass, cgfd, rel, &pid, &slot, 1);
	slot.pidfd = pidfd_open(pid);
	if (slot.pidfd < 0 && errno != ENOSYS)
		return 0;
	snprintf(name, sizeof(name), "%d", pid);
	r = cgk_pid_in_subtree(run, name) == 1 ? send_one(run, pass, pid, &slot) : 0;
	if (slot.killed && (run->opts->flags & CGK_REAP))
		cgk_reap(run, slot.pidfd);
	close_batch(&slot, 1);
	return r;
}

int cgk_signal_stragglers(struct cgk_run *run, int sig, unsigned *fresh)
{
	struct pass pass = { .sig = sig };
	int r = cgk_subtree_scan(run, true, signal_found, &pass);

	*fresh = 0;
	if (r == -EOPNOTSUPP)
		return 0;
	if (r < 0)
		return cgk_error_wrap(&run->err, r, "cannot signal the processes found through /proc");
	*fresh = pass.fresh;
	return 0;
}

int cgk_signal_pass(struct cgk_run *run, int sig, unsigned *fresh)
{
	struct pass pass = { .sig = sig };
	int r = cgk_tree_walk_procs(run, pass_visit, &pass);

	/* PID 0 entries cannot be told apart between passes: report the
	 * largest number seen at once. */
	if (pass.unreachable > run->rep->unreachable)
		run->rep->unreachable = pass.unreachable;
	if (pass.cgroups > run->rep->cgroups)
		run->rep->cgroups = pass.cgroups;
	if (fresh)
		*fresh = pass.fresh;
	return r;
}

/* Pin the processes of one cgroup for cgk_signal_pin(): pids[0..n) that
 * are not the caller, up to the room left. */
static int pin_visit(struct cgk_run *run, int cgfd, const char *rel,
		     const struct cgk_pidvec *listed, void *arg)
{
	struct cgk_pins *pins = arg;
	struct cgk_pidvec fresh = { 0 };
	struct slot *slots = NULL;
	size_t room = run->batch > pins->n ? run->batch - pins->n : 0;
	int r = 0;

	(void)rel;
	for (size_t i = 0; r >= 0 && i < listed->n && fresh.n < room; i++)
		if (listed->v[i] != 0 && listed->v[i] != run->self)
			r = cgk_pidvec_push(&fresh, listed->v[i]);
	if (r >= 0 && fresh.n && !(slots = malloc(fresh.n * sizeof(*slots))))
		r = -ENOMEM;
	if (r >= 0 && fresh.n)
		r = pin_batch(run, cgfd, fresh.v, slots, fresh.n);
	if (r >= 0 && fresh.n) {
		int *v = cgk_grow(pins->fd, &pins->cap, pins->n + fresh.n, sizeof(*v));

		if (v)
			pins->fd = v;
		for (size_t i = 0; v && i < fresh.n; i++) {
			struct slot *s = &slots[i];

			if (!s->confirmed || s->pidfd < 0 ||
			    (s->maybe_kthread && is_kthread(run, fresh.v[i])))
				continue;
			v[pins->n++] = s->pidfd;
			s->pidfd = -1;	/* the pins own it now */
		}
		r = v ? 0 : -ENOMEM;
	}
	if (slots)
		close_batch(slots, fresh.n);
	free(slots);
	cgk_pidvec_free(&fresh);
	return r;
}

int cgk_signal_pin(struct cgk_run *run, struct cgk_pins *pins)
{
	return cgk_tree_walk_procs(run, pin_visit, pins);
}
