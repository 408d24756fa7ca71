/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internal interfaces of libcgkill. Calls go one way: kill.c -> target,
 * guard -> backend-*.c -> signal.c -> tree.c -> util. */
#ifndef CGK_INTERNAL_H
#define CGK_INTERNAL_H

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "cgkill.h"

#define CGK_EXPORT __attribute__((visibility("default")))

/* ---- util.c ---- */
static inline void cgk_closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}
static inline void cgk_freep(void *p)
{
	free(*(void **)p);
}
#define _cleanup_close_ __attribute__((cleanup(cgk_closep)))
#define _cleanup_free_ __attribute__((cleanup(cgk_freep)))

uint64_t cgk_now_ms(void);	/* CLOCK_MONOTONIC */
void cgk_sleep_ms(unsigned ms);
/* Read a whole (pseudo-)file below dirfd to EOF; *buf is NUL-terminated. */
int cgk_read_file_at(int dirfd, const char *name, char **buf, size_t *len);
/* Write a string to a file below dirfd in one write(). */
int cgk_write_file_at(int dirfd, const char *name, const char *text);

/* A growable vector of pids. */
struct cgk_pidvec {
	size_t n, cap;
	pid_t *v;
};
int cgk_pidvec_push(struct cgk_pidvec *vec, pid_t pid);
void cgk_pidvec_sort(struct cgk_pidvec *vec);
bool cgk_pidvec_has_sorted(const struct cgk_pidvec *vec, pid_t pid);
void cgk_pidvec_free(struct cgk_pidvec *vec);

/* A set of pids (open addressing; 0 is never stored). */
struct cgk_pidset {
	size_t n, cap;
	pid_t *v;
};
/* 1 if added, 0 if already there, -ENOMEM. */
int cgk_pidset_add(struct cgk_pidset *set, pid_t pid);
bool cgk_pidset_has(const struct cgk_pidset *set, pid_t pid);
void cgk_pidset_free(struct cgk_pidset *set);

/* ---- parse.c: pure parsers, fuzzed ---- */
/* Parse a cgroup.procs / tasks list: one decimal pid a line. Appends; 0
 * entries are kept (they mean "not in our pid namespace"). -EINVAL on junk. */
int cgk_parse_pids(const char *buf, size_t len, struct cgk_pidvec *out);

#define CGK_CONTROLLERS_MAX 256
struct cgk_mount {
	const char *path;	/* mount point */
	const char *root;	/* root of the mount within the hierarchy */
	int version;		/* 1 or 2 */
	char controllers[CGK_CONTROLLERS_MAX];	/* v1: "freezer", "cpu,cpuacct", "name=systemd" */
};
/* Parse /proc/self/mountinfo text, keeping cgroup and cgroup2 mounts.
 * *out is one malloc'ed block that also holds the strings, so free(*out)
 * frees all; -EINVAL on a malformed cgroup line, -ENAMETOOLONG on a path
 * of PATH_MAX bytes or more. */
int cgk_parse_mountinfo(const char *buf, size_t len, struct cgk_mount **out,
			size_t *n);
/* Find the path of one hierarchy in /proc/PID/cgroup text: v2 when
 * controllers is NULL, else the v1 line whose controller list equals it. */
int cgk_parse_proc_cgroup(const char *buf, const char *controllers,
			  char *path, size_t size);
/* Does v1 controller list "a,b,name=c" contain controller c? */
bool cgk_has_controller(const char *list, const char *controller);

/* ---- target.c ---- */
struct cgk_target {
	int fd;			/* O_DIRECTORY fd of the target cgroup */
	int version;		/* 1 or 2 */
	char path[4096];	/* absolute path, as the kernel names the fd */
	char rel[4096];		/* relative to the hierarchy root; "/" is root */
	char controllers[CGK_CONTROLLERS_MAX];	/* v1: those of its hierarchy */
	/* path[0..mnt_len) is the mount point, rel[0..root_len) the mount's
	 * root: a name as /proc shows it, rel-style, is a path from there. */
	size_t mnt_len, root_len;
	bool is_root;
	bool threaded;		/* v2 cgroup.type "threaded" */
};
/* Resolve path (absolute, or relative to the v2 mount) without following
 * symlinks; check it is a cgroup directory. Fills msg on error. */
int cgk_target_open(const char *path, struct cgk_target *t, char *msg,
		    size_t msgsize);
int cgk_target_from_fd(int fd, struct cgk_target *t, char *msg,
		       size_t msgsize);
void cgk_target_close(struct cgk_target *t);
/* Does the cgroup t hold process pid (a number in our pid namespace)?
 * 0 if so, -ESRCH if not, -EINVAL for a thread's id, -errno if that
 * cannot be told. */
int cgk_target_holds(const struct cgk_target *t, pid_t pid);
int cgk_mounts_read(struct cgk_mount **out, size_t *n);

/* ---- run state shared by backends ---- */
struct cgk_run {
	const struct cgk_options *opts;
	struct cgk_report *rep;
	struct cgk_target *t;
	int procfd;		/* /proc */
	pid_t self;
	/* pids already handled with the current signal (signalled, gone or
	 * not permitted): each process gets a signal once. */
	struct cgk_pidset done;
	bool self_seen;		/* the caller is in the target (--force) */
	bool self_inside;	/* guard: the caller's cgroup is in the subtree */
	size_t batch;		/* pidfds open at once, under RLIMIT_NOFILE */
	bool no_pidfd_info;	/* PIDFD_GET_INFO is not there (before 6.13) */
	/* /proc was mounted for our pid namespace: its numbers are ours. If
	 * not, it only gives leads (see cgk_subtree_scan). */
	bool proc_ours;
	/* Kernel threads may be among the pids we see: we are in the initial
	 * pid namespace, or cannot tell. */
	bool kthreads_visible;
};

/* err says the cgroup was removed: ENOENT opening one of its files, ENODEV
 * through a file opened before. Only an empty cgroup can be removed. */
static inline bool cgk_removed(int err)
{
	return err == -ENOENT || err == -ENODEV;
}

/* Set rep->error and rep->message ("PATH: what (ERRNO)"); returns err. */
int cgk_fail(struct cgk_run *run, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- tree.c ---- */
/* Call fn for the target and every descendant cgroup, parents first.
 * rel is relative to the target ("" for the target). A cgroup that vanishes
 * during the walk is skipped. Stops at the first negative return. */
typedef int (*cgk_visit_fn)(struct cgk_run *run, int cgfd, const char *rel,
			    void *arg);
int cgk_tree_walk(struct cgk_run *run, cgk_visit_fn fn, void *arg);
/* Read cgroup.procs of cgfd to EOF; -ENOENT if the cgroup vanished,
 * -EOPNOTSUPP in a threaded cgroup. */
int cgk_read_procs(int cgfd, struct cgk_pidvec *out);
/* The same for another list of ids in the cgroup ("tasks" on v1). */
int cgk_read_pid_file(int cgfd, const char *name, struct cgk_pidvec *out);
/* Count processes left in the subtree (PID 0 entries included). */
int cgk_tree_count(struct cgk_run *run, unsigned *procs, unsigned *cgroups);
/* Count the cgroups of the subtree, target included. */
int cgk_tree_cgroups(struct cgk_run *run, unsigned *cgroups);
/* comm, state and (if flags) the task flags of pid from /proc/PID/stat. */
int cgk_proc_stat(int procfd, pid_t pid, struct cgk_process *p, unsigned long *flags);
/* Is pid ("123", "self") in the subtree: is the cgroup /proc/PID/cgroup
 * names, looked up by that name, the very directory found beneath the
 * target's fd (a cgroup that took a renamed or removed target's name is
 * not)? 1 inside, 0 outside, -errno if that cannot be told. Only for a
 * /proc of our pid namespace, whose numbers are ours. */
int cgk_pid_in_subtree(struct cgk_run *run, const char *pid);
/* Processes of the subtree found through /proc, not through the lists: a
 * process that keeps moving itself between cgroups of the subtree can slip
 * past every list read of a walk, never past /proc, where each process
 * names its cgroup. fn gets each with cgfd, the cgroup its /proc entry
 * names opened beneath the target, rel its name below the target, and a
 * pid that cgfd's own list holds; a non-zero return stops the scan and is
 * returned. The caller, pids in run->done (skip_done) and zombies are left
 * out. Nothing when the kernel already says the subtree is empty;
 * -EOPNOTSUPP when paths cannot be compared (a mount from outside our
 * cgroup namespace). */
typedef int (*cgk_found_fn)(struct cgk_run *run, int cgfd, const char *rel, pid_t pid,
			    void *arg);
int cgk_subtree_scan(struct cgk_run *run, bool skip_done, cgk_found_fn fn, void *arg);
/* Does pids.current of cgfd read 0 (1), or not (0)? -errno without one.
 * It counts zombies too, so only a 0 tells the subtree is empty. */
int cgk_pids_current_zero(int cgfd);
/* Is /proc (procfd) mounted for our pid namespace? Sets run->proc_ours
 * and run->kthreads_visible. */
void cgk_proc_check(struct cgk_run *run);
/* List the processes of the subtree, with comm and state; *cgroups (if
 * not NULL) gets the number of cgroups listed. */
int cgk_tree_list(struct cgk_run *run, struct cgk_process_list *out, unsigned *cgroups);

/* ---- signal.c ---- */
/* One pass over the subtree: every listed process not yet in run->done gets
 * sig through a pidfd once its membership is confirmed. *fresh counts the
 * processes signalled (or found unreachable) for the first time. */
int cgk_signal_pass(struct cgk_run *run, int sig, unsigned *fresh);
/* The same for what cgk_subtree_scan() finds that no pass reached. */
int cgk_signal_stragglers(struct cgk_run *run, int sig, unsigned *fresh);

/* ---- backends: one file each ---- */
struct cgk_backend_ops {
	enum cgk_backend id;
	/* 0 if this backend can serve the target and signal, else -errno
	 * (-EOPNOTSUPP: not this kind of hierarchy or signal; -ENOENT: the
	 * kernel lacks the file). No side effects. */
	int (*probe)(struct cgk_run *run, int sig);
	/* Deliver sig to every process of the subtree. */
	int (*send)(struct cgk_run *run, int sig);
};
extern const struct cgk_backend_ops cgk_backend_kernel;
extern const struct cgk_backend_ops cgk_backend_freeze;
extern const struct cgk_backend_ops cgk_backend_v1_freeze;
extern const struct cgk_backend_ops cgk_backend_loop;
/* backend-loop.c, shared with backend-v1.c: passes until one finds nothing
 * new (bounded by deadline, cgk_now_ms); with SIGKILL and settle_kill, go on
 * while killed processes leave, to catch children of dying parents. */
int cgk_loop_passes(struct cgk_run *run, int sig, uint64_t deadline, bool settle_kill);
/* backend-v1.c: the v1-freeze send() with the wait for FROZEN bounded by
 * settle_ms per attempt (tests force a freeze that does not settle). */
int cgk_v1_freeze_send(struct cgk_run *run, int sig, unsigned settle_ms);

/* ---- wait.c ---- */
/* Wait until the subtree is empty or deadline_ms (absolute, cgk_now_ms)
 * passes: 0 if empty, -ETIMEDOUT otherwise. */
int cgk_wait_empty(struct cgk_run *run, uint64_t deadline_ms);
/* "key 0|1" from an open cgroup.events: 0 or 1, or -errno. */
int cgk_events_value(int fd, const char *key);

/* ---- guard.c ---- */
int cgk_guard_check(struct cgk_run *run);

/* ---- util.c: signal mask ---- */
/* Between a freeze or clamp and its undoing, every blockable signal waits
 * in the calling thread (pthread_sigmask), so that none can end the process
 * halfway; restore puts back the mask block saved. */
void cgk_signals_block(sigset_t *old);
void cgk_signals_restore(const sigset_t *old);
/* Marks, for a later run, of what a run killed halfway (SIGKILL cannot
 * wait) left behind: extended attributes on the cgroup directory. trusted.*
 * needs CAP_SYS_ADMIN, so whoever owns a delegated cgroup cannot plant one.
 * Best effort: a kernel or caller without them leaves no mark. */
#define CGK_MARK_FROZEN "trusted.cgkill.frozen"	/* we froze it */
#define CGK_MARK_PIDS_MAX "trusted.cgkill.pids_max"	/* pids.max before our clamp */
void cgk_mark_set(int dirfd, const char *name, const char *value);
/* The value into buf (untouched on error), NUL-terminated: 0, -ENODATA if
 * there is no mark, -ERANGE if it does not fit. */
int cgk_mark_get(int dirfd, const char *name, char *buf, size_t size);
bool cgk_marked(int dirfd, const char *name);
void cgk_mark_clear(int dirfd, const char *name);

#endif
