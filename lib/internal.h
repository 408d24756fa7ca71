/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internal interfaces of libcgkill. Calls go one way, down this list: a
 * file calls only files on lines below its own (tests/test-layers.sh reads
 * this list and checks it against the objects' symbols).
 *
 *	op.c			the entry points: a kill as a state machine (the
 *				op), and cgk_kill() driving one to its end
 *	kill.c			the pieces of a kill: guard, backend, boost, report
 *	guard.c wait.c		guard rails; waiting for the subtree to empty
 *	protected.c		the protected list: read, parsed, walked
 *	backend-*.c		one file a backend
 *	passes.c		signalling passes several backends share
 *	signal.c		one pass: each listed process signalled once
 *	reap.c			process_mrelease of the killed processes
 *	tree.c			walking the subtree; finding processes by /proc
 *	target.c		resolving a path or fd into a cgroup directory
 *	cgfile.c		readers of cgroup files: procs, events, freeze, pids
 *	options.c report.c	the public objects (report.c: JSON too)
 *	text.c			names made safe to show: the one filter
 *	parse.c signame.c version.c	pure parsers, fuzzed; the version
 *	util.c error.c		time, files, vectors, marks; errors, errno names
 */
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

/* Past the last backend. */
#define CGK_BACKEND_COUNT (CGK_BACKEND_LOOP + 1)
/* Every backend's signal phase, fallbacks and settling included, ends
 * within this: a kill must never hang. */
#define CGK_SEND_BUDGET_MS 10000

/* ---- error.c ---- */
/* What failed, as a value handed up with the -errno that says why; the
 * entry point turns it into the report's message ("SUBJECT: WHAT (ENAME)")
 * only if the call fails with that code. */
struct cgk_error {
	int code;		/* negative errno; 0: nothing said */
	char *subject;		/* NULL: the target's path */
	char *what;
};
/* Say why err happened, of subject (NULL: the target); returns err. */
int cgk_error_about(struct cgk_error *e, int err, const char *subject, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
#define cgk_error_set(e, err, ...) cgk_error_about(e, err, NULL, __VA_ARGS__)
/* cgk_error_set unless a deeper call already said why this err happened. */
int cgk_error_wrap(struct cgk_error *e, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void cgk_error_free(struct cgk_error *e);
/* "ENOENT", or "E<number>" in buf (16 bytes) for an errno without a name;
 * err of either sign. */
const char *cgk_errno_name(int err, char *buf, size_t size);

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
/* Now plus ms, saturating: UINT64_MAX means "no deadline". */
uint64_t cgk_deadline_after(uint64_t ms);
/* v (of *cap elements of size bytes) with room for need elements, grown
 * by doubling; NULL without memory, v then untouched. */
void *cgk_grow(void *v, size_t *cap, size_t need, size_t size);
/* Read fd to EOF, -EFBIG past max bytes; *buf is NUL-terminated. */
int cgk_read_fd(int fd, size_t max, char **buf, size_t *len);
/* Read a whole (pseudo-)file below dirfd to EOF. */
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
/* The same, but v1's line is the one whose controllers include controller
 * (one name: "pids"); -EINVAL for an empty name or a list. */
int cgk_parse_proc_cgroup_has(const char *buf, const char *controller, char *path, size_t size);
/* Does v1 controller list "a,b,name=c" contain controller c? */
bool cgk_has_controller(const char *list, const char *controller);

/* ---- options.c, report.c: the public objects ---- */
struct cgk_escalation {
	uint64_t after_ms;
	int signal;
};

struct cgk_options {
	int signal;
	enum cgk_backend backend;
	uint64_t wait_ms;
	unsigned flags;
	size_t n_escalations, cap_escalations;
	struct cgk_escalation *escalations;
	char *protected_file;
	cgk_confirm_fn confirm;
	void *confirm_data;
	cgk_progress_fn progress;
	void *progress_data;
	volatile sig_atomic_t *cancel;
};
/* What a NULL options pointer means. */
extern const struct cgk_options cgk_default_options;

struct cgk_process {
	pid_t pid;
	char state;
	char comm[16];
	char *cgroup;
};

struct cgk_process_list {
	size_t n, cap;
	struct cgk_process *v;
};
/* Append one (cgroup copied): 0 or -ENOMEM. */
int cgk_process_list_add(struct cgk_process_list *l, pid_t pid, const char *cgroup,
			 struct cgk_process **added);

struct cgk_sent {
	int signal;
	enum cgk_backend backend;
};

struct cgk_report {
	char *path;
	int hierarchy;
	enum cgk_backend backend, fell_back_from;
	int fallback_errno;
	enum cgk_guard refused;
	size_t n_signals, cap_signals;
	struct cgk_sent *signals;
	unsigned cgroups, signalled, unreachable, not_permitted;
	/* CGK_REAP: a SIGKILL was sent (reap); process_mrelease's outcomes */
	bool reap;
	unsigned reaped, reap_gone, reap_shared;
	int reap_errno;		/* positive; 0: none */
	bool waited, emptied;
	struct cgk_process_list lists[CGK_LIST_SURVIVORS + 1];
	uint64_t signal_ms, empty_ms;
	int error;
	char *message;		/* NULL exactly when error is 0 */
};
/* An empty report naming path (as given): NULL without memory. */
struct cgk_report *cgk_report_new(const char *path);
int cgk_report_set_path(struct cgk_report *rep, const char *path);
int cgk_report_add_signal(struct cgk_report *rep, int sig, enum cgk_backend b);
/* The one place the error and message are set: a failed call's end. */
void cgk_report_fail(struct cgk_report *rep, int err, const struct cgk_error *e);

/* ---- cgfile.c: readers of cgroup files ---- */
/* err says the cgroup was removed: ENOENT opening one of its files, ENODEV
 * through a file opened before. Only an empty cgroup can be removed. */
static inline bool cgk_removed(int err)
{
	return err == -ENOENT || err == -ENODEV;
}
/* Read cgroup.procs of cgfd to EOF; -ENOENT if the cgroup vanished,
 * -EOPNOTSUPP in a threaded cgroup. */
int cgk_read_procs(int cgfd, struct cgk_pidvec *out);
/* The same for another list of ids in the cgroup ("tasks" on v1). */
int cgk_read_pid_file(int cgfd, const char *name, struct cgk_pidvec *out);
/* "key 0|1" from an open cgroup.events (or any flat keyed file): 0 or 1,
 * or -errno. */
int cgk_events_value(int fd, const char *key);
/* Does pids.current of cgfd read 0 (1), or not (0)? -errno without one.
 * It counts zombies too, so only a 0 tells the subtree is empty. */
int cgk_pids_current_zero(int cgfd);
/* cgroup.freeze of a v2 cgroup: 0 or 1, or -errno. */
int cgk_freeze_value(int cgfd);
/* freezer.state of a v1 cgroup: CGK_THAWED, CGK_FREEZING, CGK_FROZEN, or -errno. */
enum { CGK_THAWED, CGK_FREEZING, CGK_FROZEN };
int cgk_freezer_state(int cgfd);
/* Frozen on its own account (not only because an ancestor is): 0 or 1. */
int cgk_freezer_self_freezing(int cgfd);

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
 * symlinks; check it is a cgroup directory. Says why in err on failure. */
int cgk_target_open(const char *path, struct cgk_target *t, struct cgk_error *err);
int cgk_target_from_fd(int fd, struct cgk_target *t, struct cgk_error *err);
void cgk_target_close(struct cgk_target *t);
/* Does the cgroup t hold process pid (a number in our pid namespace)?
 * 0 if so, -ESRCH if not, -EINVAL for a thread's id, -errno if that
 * cannot be told. */
int cgk_target_holds(const struct cgk_target *t, pid_t pid);
int cgk_mounts_read(struct cgk_mount **out, size_t *n);

/* ---- run state shared by everything below kill.c ---- */
/* Open pidfds (reap.c closes them). */
struct cgk_pins {
	size_t n, cap;
	int *fd;
};

struct cgk_run {
	const struct cgk_options *opts;
	struct cgk_report *rep;
	struct cgk_target *t;
	struct cgk_error err;	/* why the latest failure happened */
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
	/* CGK_REAP: killed processes that were freeing their memory
	 * themselves already (cgk_reap_left()). */
	struct cgk_pins exiting;
};

/* ---- tree.c ---- */
/* Call fn for the target and every descendant cgroup, parents first.
 * rel is relative to the target ("" for the target). A cgroup that vanishes
 * during the walk is skipped. Stops at the first negative return. */
typedef int (*cgk_visit_fn)(struct cgk_run *run, int cgfd, const char *rel,
			    void *arg);
int cgk_tree_walk(struct cgk_run *run, cgk_visit_fn fn, void *arg);
/* The same with the cgroup's cgroup.procs read for fn; cgroups that vanish
 * and threaded ones below the target (their domain lists their processes)
 * are skipped. */
typedef int (*cgk_procs_fn)(struct cgk_run *run, int cgfd, const char *rel,
			    const struct cgk_pidvec *pids, void *arg);
int cgk_tree_walk_procs(struct cgk_run *run, cgk_procs_fn fn, void *arg);
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
/* With CGK_REAP, a pass that sends SIGKILL through pidfds releases the
 * memory of each process it killed (cgk_reap()) once its batch has the
 * signal. A kill that does not go through our pidfds (cgroup.kill) pins
 * the processes first: pidfds of the processes of the subtree, each
 * confirmed in its cgroup as a pass confirms it, never the caller's;
 * at most run->batch of them. */
int cgk_signal_pin(struct cgk_run *run, struct cgk_pins *pins);

/* ---- reap.c ---- */
/* process_mrelease(2) of the process pidfd pins, which was sent SIGKILL:
 * its address space released now rather than on its way out. Counted in
 * the report: released, gone (ESRCH: it had let go of its memory, and
 * frees it as it exits: kept in run->exiting), shared (EINVAL: its memory
 * is shared with a process that is not dying, or it was not dying); any
 * other errno (ENOSYS before Linux 5.15) is the report's reap_errno, and
 * later calls do nothing. */
void cgk_reap(struct cgk_run *run, int pidfd);
/* The processes of run->exiting that have not finished their exit yet,
 * which frees their memory before the pidfd tells it: those that have are
 * closed (and taken out of epfd, if not -1). So a reap that lost the race
 * to a process's own exit still ends with the memory back. */
size_t cgk_reap_left(struct cgk_run *run, int epfd);
/* Watch the pidfds of run->exiting in epfd (EPOLLIN: exited). */
int cgk_reap_watch(struct cgk_run *run, int epfd);
/* Wait for them (until deadline, cgk_now_ms; -ECANCELED if the caller's
 * cancel flag is set), a look every CGK_REAP_SLICE_MS, and close them. */
#define CGK_REAP_SLICE_MS 50
int cgk_reap_wait(struct cgk_run *run, uint64_t deadline);
/* Close them all (taken out of epfd first, if not -1). */
void cgk_pins_close(struct cgk_pins *pins, int epfd);

/* ---- passes.c ---- */
/* Passes until one finds nothing new (bounded by deadline, cgk_now_ms);
 * with SIGKILL and settle_kill, go on while killed processes leave, to
 * catch children of dying parents. For every backend without a settled
 * freeze. */
int cgk_passes(struct cgk_run *run, int sig, uint64_t deadline, bool settle_kill);

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
/* backend-v1.c: the v1-freeze send() with the wait for FROZEN bounded by
 * settle_ms per attempt (tests force a freeze that does not settle). */
int cgk_v1_freeze_send(struct cgk_run *run, int sig, unsigned settle_ms);

/* ---- wait.c ---- */
/* A wait for the subtree to empty, looked at when the caller is woken. */
struct cgk_wait {
	int events_fd;		/* v2 cgroup.events (POLLPRI on changes); -1 on v1 */
	uint64_t start, deadline;	/* cgk_now_ms */
	uint64_t next_progress, next_poll;
	unsigned delay;		/* v1: the backoff between looks */
};
void cgk_wait_begin(struct cgk_run *run, struct cgk_wait *w, uint64_t deadline);
/* One look: 0 if empty, -EAGAIN not yet, -ETIMEDOUT past the deadline,
 * -ECANCELED by the caller's flag, or -errno. Calls the progress callback
 * when one is due. */
int cgk_wait_look(struct cgk_run *run, struct cgk_wait *w);
/* When the next look is due (cgk_now_ms), if events_fd says nothing. */
uint64_t cgk_wait_next(const struct cgk_run *run, const struct cgk_wait *w);
void cgk_wait_end(struct cgk_wait *w);
/* Look until the subtree is empty or deadline_ms passes (0 or -ETIMEDOUT),
 * sleeping in between. */
int cgk_wait_empty(struct cgk_run *run, uint64_t deadline_ms);

/* ---- guard.c ---- */
int cgk_guard_check(struct cgk_run *run);

/* ---- protected.c ---- */
/* One entry of the protected list: glob, the entry normalised ("/a/b*",
 * one '/' before each component); text[0..len), as written; its line. */
struct cgk_protected_entry {
	const char *glob;
	const char *text;
	size_t len;
	size_t line;
};
typedef int cgk_protected_visit(const struct cgk_protected_entry *e, void *arg);
/* Where a list could not be understood: its line, and what is wrong
 * (NULL: nothing, or a failure of another kind). */
struct cgk_protected_fault {
	size_t line;
	const char *what;
};
/* The list file (NULL: $CGKILL_PROTECTED, else /etc/cgkill/protected, and
 * the built-in list where that one does not exist) in *text (malloc'ed,
 * len bytes), *name what to call it: 0 or -errno. */
int cgk_protected_load(const char *file, char **text, size_t *len, const char **name);
/* visit for each entry of text[0..len) (twice for one that ends in blanks:
 * without and with them), until it returns non-zero (returned). -EINVAL
 * for a line that cannot be understood (fault says which), -ENOMEM. */
int cgk_protected_walk(const char *text, size_t len, cgk_protected_visit *visit, void *arg,
		       struct cgk_protected_fault *fault);
/* ---- kill.c: the pieces of a kill ---- */
/* struct sched_attr as of Linux 3.14 (SCHED_ATTR_SIZE_VER0). */
struct cgk_boost_attr {
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
 * by default 0.95 s in every second). With CGK_BOOSTED, a caller at
 * SCHED_RR came raised for the call: the boost is already on; its drops go
 * to SCHED_OTHER at the caller's nice, and the end gives back what it came
 * with.
 */
struct cgk_boost {
	bool on, raised, niced, held;
	int nice;
	struct cgk_boost_attr old, came;
};
/* The boost of a call with opts, raised at once if raise. */
struct cgk_boost cgk_boost_start(const struct cgk_options *opts, bool raise);
void cgk_boost_raise(struct cgk_boost *b);
void cgk_boost_drop(struct cgk_boost *b);
/* The end of the call: back to what the caller came with. */
void cgk_boost_end(struct cgk_boost *b);
/* /proc/PID/cgroup's cgroup of pid opened as run->t once its list holds
 * pid; the boost starts after the lookup. */
int cgk_kill_resolve_pid(struct cgk_run *run, pid_t pid, struct cgk_boost *boost);
/* On the resolved target: the report named, /proc opened, the guard rails. */
int cgk_kill_prepare(struct cgk_run *run);
/* The dry run's list (1: done) or the confirm callback (0: go on, or the
 * refusal), the boost dropped around the callback. */
int cgk_kill_confirm(struct cgk_run *run, struct cgk_boost *boost);
/* Send sig at the boosted priority (a backend picked, falling back). */
int cgk_kill_send(struct cgk_run *run, struct cgk_boost *boost, int sig);
/* A wait's end r in the report (waited, emptied, interrupted); returns r. */
int cgk_kill_waited(struct cgk_run *run, int r);
/* The kernel backend does not walk the tree: the cgroups counted. */
void cgk_kill_count_cgroups(struct cgk_run *run);
/* After a timed-out wait: list the survivors and say what is left. */
int cgk_kill_survivors(struct cgk_run *run, int r);
/* Everything the run holds closed, the target too. */
void cgk_kill_cleanup(struct cgk_run *run);

#endif
