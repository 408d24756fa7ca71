/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libcgkill: kill every process in a cgroup and in all of its descendants.
 *
 *	struct cgk_options opts = CGK_OPTIONS_INIT;
 *	struct cgk_report rep;
 *	int r = cgk_kill("/sys/fs/cgroup/system.slice/foo.service", &opts, &rep);
 *	if (r < 0)
 *		fprintf(stderr, "%s\n", rep.message);
 *	cgk_report_free(&rep);
 *
 * Functions return 0 or a negative errno. Nothing here prints or exits, and
 * there is no global mutable state: calls on different cgroups may run in
 * parallel threads.
 */
#ifndef CGKILL_H
#define CGKILL_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CGK_VERSION "0.1.0"
/* CGK_VERSION of the library loaded at run time, which may be newer than
 * the header a program was built with. */
const char *cgk_version(void);
/* "schema" of the JSON documents (cgk_report_json(), cgkill -j): kept by
 * added keys, bumped when a key is removed, renamed or changes type. */
#define CGK_JSON_SCHEMA 1

enum cgk_backend {
	CGK_BACKEND_AUTO = 0,	/* pick the best one that works */
	CGK_BACKEND_KERNEL,	/* write "1" to cgroup.kill (v2, 5.14+, SIGKILL) */
	CGK_BACKEND_FREEZE,	/* cgroup.freeze, signal, thaw (v2, 5.2+) */
	CGK_BACKEND_V1_FREEZE,	/* freezer.state, signal, thaw (v1 freezer) */
	CGK_BACKEND_LOOP,	/* signal until a pass finds nothing new */
	CGK_BACKEND_COUNT_
};

enum cgk_flags {
	CGK_DRY_RUN = 1u << 0,	/* list what would be signalled, change nothing */
	CGK_FORCE = 1u << 1,	/* override the guard rails that allow it */
	/* From the call until the signal is sent (resolving, guard rails,
	 * signal phase: bounded, 10 s at most), real-time priority (SCHED_RR
	 * 1), or nice -20, where the caller may; dropped before any wait and
	 * before the confirm callback. For the calling thread only. */
	CGK_BOOST = 1u << 2,
};

/* Which guard rail refused a target (cgk_report.refused). */
enum cgk_guard {
	CGK_GUARD_NONE = 0,
	CGK_GUARD_ROOT,		/* root cgroup of a hierarchy; never overridable */
	CGK_GUARD_SELF,		/* subtree holds the calling process */
	CGK_GUARD_PID1,		/* subtree holds PID 1 of the caller's namespace */
	CGK_GUARD_PROTECTED,	/* matches the protected list */
	CGK_GUARD_DECLINED,	/* the confirm callback said no */
};

#define CGK_MAX_ESCALATIONS 8

struct cgk_escalation {
	uint64_t after_ms;	/* wait this long for the tree to empty, then */
	int signal;		/* send this to whatever is left */
};

struct cgk_options {
	int signal;		/* first signal; default SIGKILL */
	enum cgk_backend backend;
	uint64_t wait_ms;	/* deadline for the tree to empty; 0: do not wait */
	unsigned flags;		/* enum cgk_flags */
	unsigned n_escalations;
	struct cgk_escalation escalations[CGK_MAX_ESCALATIONS];
	/* Protected-cgroup list; NULL: $CGKILL_PROTECTED or /etc/cgkill/protected. */
	const char *protected_file;
	/*
	 * Called, if set, before anything is signalled, with the number of
	 * processes and cgroups found; anything but true declines the kill.
	 */
	bool (*confirm)(const char *path, unsigned processes, unsigned cgroups,
			void *userdata);
	/* Called, if set, about every 250 ms while waiting for the tree to empty. */
	void (*progress)(const char *path, unsigned left, uint64_t waited_ms,
			 void *userdata);
	void *userdata;
	/* If set, waits give up with -ECANCELED once *cancel is non-zero (a
	 * signal handler sets it). Freezing and signalling are never cut short:
	 * they are bounded and always thaw. */
	volatile sig_atomic_t *cancel;
};

/* SIGKILL, auto, wait 10 s, nothing else. Every field, in order and without
 * designators: C and C++ before C++20 alike take it without a warning. */
#define CGK_OPTIONS_INIT                                                      \
	{ SIGKILL, CGK_BACKEND_AUTO, 10000, 0, 0, { { 0, 0 } },              \
	  NULL, NULL, NULL, NULL, NULL }

struct cgk_process {
	pid_t pid;		/* 0: not visible in the caller's pid namespace */
	char state;		/* as in /proc/PID/stat: R, S, D, Z, T, ... */
	char comm[16];		/* NUL-terminated; arbitrary bytes otherwise */
	char cgroup[256];	/* relative to the target, "" for the target */
};

struct cgk_process_list {
	size_t n;
	struct cgk_process *v;
};

#define CGK_MAX_SIGNALS (1 + CGK_MAX_ESCALATIONS)

struct cgk_report {
	char path[4096];	/* absolute path of the target as resolved */
	int hierarchy;		/* 2 or 1; 0 if unresolved */
	enum cgk_backend backend;	/* the backend of the last signal */
	enum cgk_backend fell_back_from;	/* AUTO if none */
	int fallback_errno;	/* why the first choice was not used */
	enum cgk_guard refused;
	unsigned n_signals;
	int signals[CGK_MAX_SIGNALS];	/* signals sent, in order */
	enum cgk_backend backends[CGK_MAX_SIGNALS];	/* the backend of each */
	unsigned cgroups;	/* cgroups visited (target included) */
	unsigned signalled;	/* processes signalled (kernel backend: unknown, 0) */
	unsigned unreachable;	/* PID 0 entries: outside our pid namespace */
	unsigned not_permitted;	/* EPERM from the signal */
	bool waited;
	bool emptied;		/* subtree seen empty before the deadline */
	struct cgk_process_list listed;	/* dry run: what would be signalled */
	struct cgk_process_list survivors;	/* after a timed-out wait */
	uint64_t signal_ms;	/* time spent sending the signals */
	uint64_t empty_ms;	/* from the start until empty (if emptied) */
	int error;		/* negative errno of the failure, 0 if none */
	char message[4608];	/* what failed, naming the cgroup; "" if none */
};

int cgk_kill(const char *path, const struct cgk_options *opts,
	     struct cgk_report *report);
int cgk_kill_fd(int cgroup_dirfd, const struct cgk_options *opts,
		struct cgk_report *report);
/* Kill the cgroup v2 that holds pid, once that cgroup's own list confirms
 * the pid is there. */
int cgk_kill_pid(pid_t pid, const struct cgk_options *opts, struct cgk_report *report);
void cgk_report_free(struct cgk_report *report);
int cgk_report_json(const struct cgk_report *const *reports, size_t n,
		    FILE *out);

const char *cgk_backend_name(enum cgk_backend backend);
int cgk_backend_from_name(const char *name, enum cgk_backend *backend);
const char *cgk_guard_name(enum cgk_guard guard);

/* "TERM", "SIGTERM", "term", "15", "RTMIN+2", "RTMAX-1". */
int cgk_signal_from_name(const char *name, int *signal);
/* "TERM", or "RTMIN+2", or NULL if sig is not a signal. */
const char *cgk_signal_name(int sig, char *buf, size_t size);

/* A time span of systemd.time(7) in ms, rounded up: "250ms", "1.5s",
 * "1min 30s", "infinity" (UINT64_MAX: no deadline). A bare number other
 * than 0 has no unit: -EINVAL. Too long: -ERANGE. */
int cgk_parse_duration(const char *text, uint64_t *ms);

/* A mounted cgroup hierarchy and the backends that can serve it. */
struct cgk_hierarchy {
	char path[4096];	/* mount point */
	int version;		/* 2 or 1 */
	char controllers[256];	/* v1: "freezer", "cpu,cpuacct", "name=systemd" */
	unsigned backends;	/* bit (1u << enum cgk_backend) for each */
};
/* Every cgroup hierarchy in /proc/self/mountinfo; *out is malloc'ed. */
int cgk_list_hierarchies(struct cgk_hierarchy **out, size_t *n);

/* The cgroup v2 directory that holds pid, as an absolute path. */
int cgk_cgroup_of_pid(pid_t pid, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif
