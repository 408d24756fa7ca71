/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libcgkill: kill every process in a cgroup and in all of its descendants.
 *
 *	cgk_report *rep = NULL;
 *	int r = cgk_kill("/sys/fs/cgroup/system.slice/foo.service", NULL, &rep);
 *	if (r < 0)
 *		fprintf(stderr, "%s\n", rep ? cgk_report_message(rep) : strerror(-r));
 *	cgk_report_free(rep);
 *
 * Functions return 0 (or a count) or a negative errno. Nothing here prints
 * or exits, and there is no global mutable state: calls on different
 * cgroups may run in parallel threads.
 *
 * Every object is opaque and made by the library, and read and changed
 * through functions only: new fields come as new functions, so a program
 * built against an older cgkill.h keeps working with a newer library.
 */
#ifndef CGKILL_H
#define CGKILL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CGK_VERSION "1.4.0"
/* CGK_VERSION of the library loaded at run time, which may be newer than
 * the header a program was built with. */
const char *cgk_version(void);
/* "schema" of the JSON documents (cgk_report_json(), cgkill -j): kept by
 * added keys, bumped when a key is removed, renamed or changes type. */
#define CGK_JSON_SCHEMA 1

/* New values may be added; cgk_backend_name() returns NULL past the last. */
enum cgk_backend {
	CGK_BACKEND_AUTO = 0,	/* pick the best one that works */
	CGK_BACKEND_KERNEL,	/* write "1" to cgroup.kill (v2, 5.14+, SIGKILL) */
	CGK_BACKEND_FREEZE,	/* cgroup.freeze, signal, thaw (v2, 5.2+) */
	CGK_BACKEND_V1_FREEZE,	/* freezer.state, signal, thaw (v1 freezer) */
	CGK_BACKEND_LOOP,	/* signal until a pass finds nothing new */
};

enum cgk_flags {
	CGK_DRY_RUN = 1u << 0,	/* list what would be signalled, change nothing */
	CGK_FORCE = 1u << 1,	/* override the guard rails that allow it */
	/* From the call until the signal is sent (resolving, guard rails,
	 * signal phase: bounded, 10 s at most), real-time priority (SCHED_RR
	 * 1), or nice -20, where the caller may; dropped before any wait and
	 * before the confirm callback. For the calling thread only. */
	CGK_BOOST = 1u << 2,
	/* Since 1.1. After SIGKILL, release each killed process's memory at
	 * once with process_mrelease(2) (Linux 5.15) instead of leaving it to
	 * the process's own exit: the first signal or an escalation's, and
	 * only the processes that got SIGKILL; with no SIGKILL it does
	 * nothing. cgk_report_reaped() and the next three say what came of
	 * it. Before 5.15 the kill is the same and the reap's errno ENOSYS. */
	CGK_REAP = 1u << 3,
	/* Since 1.2. With CGK_BOOST: the caller raised itself to SCHED_RR
	 * before the call, as cgkill(1) does from its first instruction, so
	 * that no return to an ordinary priority comes between its start-up
	 * and the signal. The library takes that priority as its boost: the
	 * thread waits and confirms at SCHED_OTHER with its nice, and gets its
	 * priority back when the call returns. Without it, a real-time caller
	 * is left as it is. */
	CGK_BOOSTED = 1u << 4,
};

/* Which guard rail refused a target (cgk_report_refused()). */
enum cgk_guard {
	CGK_GUARD_NONE = 0,
	CGK_GUARD_ROOT,		/* root cgroup of a hierarchy; never overridable */
	CGK_GUARD_SELF,		/* subtree holds the calling process */
	CGK_GUARD_PID1,		/* subtree holds PID 1 of the caller's namespace */
	CGK_GUARD_PROTECTED,	/* matches the protected list */
	CGK_GUARD_DECLINED,	/* the confirm callback said no */
};

/* ---- options: what to send, how, and how long to wait ---- */
typedef struct cgk_options cgk_options;

/* Before anything is signalled, with the number of processes and cgroups
 * found; anything but true declines the kill. */
typedef bool (*cgk_confirm_fn)(const char *path, unsigned processes, unsigned cgroups,
			       void *userdata);
/* About every 250 ms while waiting for the tree to empty. */
typedef void (*cgk_progress_fn)(const char *path, unsigned left, uint64_t waited_ms,
				void *userdata);

/* SIGKILL, auto backend, wait 10 s, no flags, nothing else. -ENOMEM. */
int cgk_options_new(cgk_options **ret);
/* Frees; NULL is fine. Returns NULL. */
cgk_options *cgk_options_free(cgk_options *opts);
/* The first signal (default SIGKILL): -EINVAL if sig is not a signal. */
int cgk_options_set_signal(cgk_options *opts, int sig);
/* -EINVAL for a backend this library does not know. */
int cgk_options_set_backend(cgk_options *opts, enum cgk_backend backend);
/* Deadline for the tree to empty after the last signal: 0 does not wait,
 * UINT64_MAX waits for ever. */
int cgk_options_set_wait(cgk_options *opts, uint64_t ms);
/* enum cgk_flags, replacing those set before: -EINVAL for a bit this
 * library does not know, so that a flag is never silently ignored. */
int cgk_options_set_flags(cgk_options *opts, unsigned flags);
/* After the previous signal, wait up to after_ms for the tree to empty,
 * then send sig to what is left. Any number, in order of the calls. */
int cgk_options_add_escalation(cgk_options *opts, uint64_t after_ms, int sig);
/* The protected-cgroup list (copied); NULL: $CGKILL_PROTECTED, else
 * /etc/cgkill/protected. */
int cgk_options_set_protected_file(cgk_options *opts, const char *path);
/* NULL fn: no callback. */
int cgk_options_set_confirm(cgk_options *opts, cgk_confirm_fn fn, void *userdata);
int cgk_options_set_progress(cgk_options *opts, cgk_progress_fn fn, void *userdata);
/* If set, waits give up with -ECANCELED once *cancel is non-zero (a signal
 * handler sets it). Freezing and signalling are never cut short: they are
 * bounded and always thaw. */
int cgk_options_set_cancel(cgk_options *opts, volatile sig_atomic_t *cancel);

/* ---- killing ---- */
typedef struct cgk_report cgk_report;

/*
 * Signal the cgroup at path (absolute, or relative to the cgroup v2 mount)
 * and all of its descendants, as opts says (NULL: the defaults). 0 once the
 * subtree is empty (or was signalled, without a wait), else a negative
 * errno: -ETIMEDOUT when processes survived the wait, -EPERM for a guard
 * rail's refusal or refused signals, and others. If report is not NULL,
 * *report gets what happened, on success and failure alike (NULL only if
 * even that could not be allocated); free it with cgk_report_free().
 */
int cgk_kill(const char *path, const cgk_options *opts, cgk_report **report);
/* The same for a cgroup directory opened by the caller (O_PATH will do). */
int cgk_kill_fd(int cgroup_dirfd, const cgk_options *opts, cgk_report **report);
/* The cgroup v2 that holds pid, once that cgroup's own list confirms the
 * pid is there. */
int cgk_kill_pid(pid_t pid, const cgk_options *opts, cgk_report **report);

/* ---- killing from an event loop ---- */
/*
 * Since 1.4. The same kill as cgk_kill(), for a program that must not
 * block (an event loop): start it, watch a file descriptor, step it when
 * that is readable, and finish it for the report.
 *
 *	cgk_kill_op *op;
 *	int r = cgk_kill_start(path, opts, &op);	(returns at once)
 *	... add cgk_kill_op_fd(op) to the loop's epoll set (EPOLLIN) ...
 *	on readable: if (cgk_kill_op_step(op) != -EAGAIN) {
 *		r = cgk_kill_op_finish(op, &rep);
 *		...
 *	}
 *
 * The escalations' waits and the final wait are deadlines the op keeps
 * (a timer of its own); emptiness comes from cgroup.events (v2) or from
 * polling with backoff (v1); CGK_REAP's wait for exiting processes is a
 * phase watched through pidfds. One op is used by one thread at a time;
 * different ops may run in parallel.
 */
typedef struct cgk_kill_op cgk_kill_op;

/* Start a kill and return at once: resolving the target, the guard rails,
 * the confirm callback (which runs here, in the caller's thread) and the
 * first signal happen in this call, each bounded as in cgk_kill(). 0 and
 * *ret an op, which holds the outcome even when the kill already ended
 * here (a refusal, a failure, no wait); a negative errno and *ret NULL
 * only when no op could be made (-ENOMEM; -EINVAL for a NULL ret). The op
 * reads opts until cgk_kill_op_finish(): keep them until then. */
int cgk_kill_start(const char *path, const cgk_options *opts, cgk_kill_op **ret);
int cgk_kill_start_fd(int cgroup_dirfd, const cgk_options *opts, cgk_kill_op **ret);
int cgk_kill_start_pid(pid_t pid, const cgk_options *opts, cgk_kill_op **ret);
/* A file descriptor to watch for readability (poll POLLIN, epoll EPOLLIN):
 * it becomes readable whenever cgk_kill_op_step() is due, deadlines
 * included, and at once (and for good) when the op has ended. Valid until
 * cgk_kill_op_finish(); never close it. */
int cgk_kill_op_fd(const cgk_kill_op *op);
/* For callers that keep their own timers instead: ms until the next
 * deadline (0: step now; UINT64_MAX: none, the fd alone will say). */
uint64_t cgk_kill_op_timeout(const cgk_kill_op *op);
/* Advance the kill; never blocks for longer than a signal phase (bounded,
 * as in cgk_kill()). -EAGAIN: still under way, wait for the fd again; else
 * the kill is over and this is what cgk_kill() would have returned (0 or a
 * negative errno), the same on every later call. Spurious calls are
 * harmless. The progress callback is called from here, about every 250 ms
 * of a wait, and the cancel flag is looked at here. */
int cgk_kill_op_step(cgk_kill_op *op);
/* End the op and free it: the result (as cgk_kill_op_step()'s last), and
 * *report (if not NULL) gets the report, as cgk_kill() gives it. An op
 * not over yet is abandoned cleanly: nothing stays frozen, no further
 * signal is sent, and the result is -ECANCELED (the report says so). NULL
 * op: -EINVAL. */
int cgk_kill_op_finish(cgk_kill_op *op, cgk_report **report);

/* ---- the report ---- */
cgk_report *cgk_report_free(cgk_report *report);
/* Absolute path of the target as resolved (or as given, if unresolved). */
const char *cgk_report_path(const cgk_report *report);
/* 2 or 1; 0 if unresolved. */
int cgk_report_hierarchy(const cgk_report *report);
/* The backend of the last signal sent; AUTO if none was. */
enum cgk_backend cgk_report_backend(const cgk_report *report);
/* The first backend auto could not use (AUTO if none), and why (errno). */
enum cgk_backend cgk_report_fell_back_from(const cgk_report *report);
int cgk_report_fallback_errno(const cgk_report *report);
enum cgk_guard cgk_report_refused(const cgk_report *report);
/* Signals sent, in order: the count, and signal i with its backend. */
size_t cgk_report_n_signals(const cgk_report *report);
int cgk_report_signal(const cgk_report *report, size_t i, enum cgk_backend *backend);
/* Cgroups visited, the target included. */
unsigned cgk_report_cgroups(const cgk_report *report);
/* Processes signalled (the kernel backend does not say: 0). */
unsigned cgk_report_signalled(const cgk_report *report);
/* PID 0 entries: processes outside the caller's pid namespace. */
unsigned cgk_report_unreachable(const cgk_report *report);
/* Processes whose signal failed with EPERM. */
unsigned cgk_report_not_permitted(const cgk_report *report);
/* Since 1.1, with CGK_REAP: address spaces released by process_mrelease(2)
 * right after SIGKILL; */
unsigned cgk_report_reaped(const cgk_report *report);
/* processes that had let go of their memory already (ESRCH: exited); */
unsigned cgk_report_reap_gone(const cgk_report *report);
/* processes whose memory a process that is not dying shares (EINVAL: a
 * vfork or CLONE_VM child of a process outside the subtree), or that was
 * not dying (it left the subtree before cgroup.kill): left to their exit; */
unsigned cgk_report_reap_shared(const cgk_report *report);
/* and 0, or the errno that stopped the reap, the kill going on without
 * it: ENOSYS where the kernel has no process_mrelease (before 5.15). */
int cgk_report_reap_errno(const cgk_report *report);
bool cgk_report_waited(const cgk_report *report);
/* The subtree was seen empty before the deadline. */
bool cgk_report_emptied(const cgk_report *report);
/* Time spent sending the signals; from the start until empty. */
uint64_t cgk_report_signal_ms(const cgk_report *report);
uint64_t cgk_report_empty_ms(const cgk_report *report);
/* The negative errno the call returned, 0 if it succeeded; and what
 * failed, naming the cgroup: "" exactly when the error is 0. */
int cgk_report_error(const cgk_report *report);
const char *cgk_report_message(const cgk_report *report);

/* Lists of processes in a report; new kinds may be added. */
enum cgk_list {
	CGK_LIST_LISTED = 0,	/* dry run: what would be signalled */
	CGK_LIST_SURVIVORS,	/* left after a timed-out wait */
};
typedef struct cgk_process cgk_process;
size_t cgk_report_n_processes(const cgk_report *report, enum cgk_list list);
/* Process i of list, NULL past the end; valid as long as the report. */
const cgk_process *cgk_report_process(const cgk_report *report, enum cgk_list list,
				      size_t i);
/* 0: not visible in the caller's pid namespace. */
pid_t cgk_process_pid(const cgk_process *p);
/* As in /proc/PID/stat: R, S, D, Z, T, ... */
char cgk_process_state(const cgk_process *p);
/* At most 15 bytes, arbitrary apart from NUL. */
const char *cgk_process_comm(const cgk_process *p);
/* Its cgroup relative to the target, "" for the target itself. */
const char *cgk_process_cgroup(const cgk_process *p);

/* Write reports as one JSON document (schema CGK_JSON_SCHEMA). */
int cgk_report_json(const cgk_report *const *reports, size_t n, FILE *out);

/* ---- names ---- */
const char *cgk_backend_name(enum cgk_backend backend);
int cgk_backend_from_name(const char *name, enum cgk_backend *backend);
const char *cgk_guard_name(enum cgk_guard guard);
/* "TERM", "SIGTERM", "term", "15", "RTMIN+2", "RTMAX-1". */
int cgk_signal_from_name(const char *name, int *signal);
/* "TERM", or "RTMIN+2", or NULL if sig is not a signal (16 bytes hold any). */
const char *cgk_signal_name(int sig, char *buf, size_t size);
/* A time span of systemd.time(7) in ms, rounded up: "250ms", "1.5s",
 * "1min 30s", "infinity" (UINT64_MAX: no deadline). A bare number other
 * than 0 has no unit: -EINVAL. Too long: -ERANGE. */
int cgk_parse_duration(const char *text, uint64_t *ms);

/* ---- text that others choose ---- */
/* Since 1.3. Cgroup and process names are any bytes their owner picked:
 * written through one of these forms, they cannot drive a terminal, split
 * a line or break a JSON document. UTF-8 is decoded; control characters
 * are C0, DEL and C1 (U+0080..U+009F, U+009B CSI among them). */
enum cgk_text_form {
	/* each control character and each byte of no valid UTF-8 as '?',
	 * the rest as it is (what cgkill prints) */
	CGK_TEXT_SAFE = 0,
	/* a JSON string with its quotes: '"' and '\\' escaped, controls as
	 * \n, \r, \t or \u00XX, each byte of no valid UTF-8 as \ufffd: always
	 * valid UTF-8 and valid JSON */
	CGK_TEXT_JSON,
	/* util-linux's raw columns: controls, blanks, a backslash before an
	 * x, and each byte of no valid UTF-8 as \xHH */
	CGK_TEXT_RAW,
};
/* Write len bytes of text in form on out: 0, or -EINVAL (form unknown,
 * out NULL), -EIO (the stream's error flag is set). */
int cgk_text_write(FILE *out, const char *text, size_t len, enum cgk_text_form form);
/* The same into buf, as snprintf(3): at most size - 1 bytes and a NUL,
 * never part of a character or of an escape (a JSON string cut short
 * still ends with its quote); returns the length of the whole. */
size_t cgk_text_format(char *buf, size_t size, const char *text, size_t len,
		       enum cgk_text_form form);
/* The characters text shows as in CGK_TEXT_SAFE: one for each character
 * and each '?' (terminal columns, but for wide characters). */
size_t cgk_text_width(const char *text, size_t len);

/* ---- the protected list ---- */
/* Since 1.4. Called for each entry of a protected list: glob, the entry
 * as the guard matches it against cgroup paths (fnmatch(3) with
 * FNM_PATHNAME; one '/' before each component: "/system.slice"); entry,
 * the entry as written (without blanks around it and an inline comment);
 * list, the file or "the built-in list"; line, its line. Non-zero stops
 * the walk. */
typedef int (*cgk_protected_fn)(const char *glob, const char *entry, const char *list, unsigned line,
				void *userdata);
/* Walk the protected list that cgk_kill() honours, by the same rules:
 * file, or NULL for $CGKILL_PROTECTED, else /etc/cgkill/protected, and
 * the built-in list where that one does not exist. '#' starts a comment
 * first on a line or after a blank (in a name, it is part of it); an
 * entry that ends in blanks is given twice, without and with them. 0
 * after the last entry; fn's non-zero return; -errno if the list cannot
 * be read, or -EINVAL for a line that cannot be understood (a NUL byte, a
 * ".." component): then why (size bytes, may be 0) says what and where. */
int cgk_protected_list(const char *file, cgk_protected_fn fn, void *userdata, char *why, size_t size);

/* ---- the system's cgroups ---- */
/* The mounted cgroup hierarchies, as /proc/self/mountinfo lists them. */
typedef struct cgk_hierarchies cgk_hierarchies;
int cgk_hierarchies_read(cgk_hierarchies **ret);
cgk_hierarchies *cgk_hierarchies_free(cgk_hierarchies *h);
size_t cgk_hierarchies_count(const cgk_hierarchies *h);
/* Of hierarchy i: its mount point (NULL past the end), */
const char *cgk_hierarchies_path(const cgk_hierarchies *h, size_t i);
/* 2 or 1 (0 past the end), */
int cgk_hierarchies_version(const cgk_hierarchies *h, size_t i);
/* v1: "freezer", "cpu,cpuacct", "name=systemd"; v2: "", */
const char *cgk_hierarchies_controllers(const cgk_hierarchies *h, size_t i);
/* and a bit (1u << enum cgk_backend) for each backend that can serve it. */
unsigned cgk_hierarchies_backends(const cgk_hierarchies *h, size_t i);

/* The cgroup v2 directory that holds pid, as an absolute path; *path is
 * malloc'ed. */
int cgk_cgroup_of_pid(pid_t pid, char **path);
/* Since 1.4. The cgroup of process or thread pid in one hierarchy, as
 * PROC/PID/cgroup names it (proc: where a procfs is mounted, NULL for
 * "/proc"), from the hierarchy's root ("/a/b"): the v2 one if controller
 * is NULL, else the v1 one whose controllers include controller ("pids",
 * "memory", "name=systemd"). *path is malloc'ed. 0; -ESRCH if there is no
 * such process, -ENOENT if it is in no such hierarchy. */
int cgk_proc_cgroup(const char *proc, pid_t pid, const char *controller, char **path);

#ifdef __cplusplus
}
#endif

#endif
