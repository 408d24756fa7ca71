/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgkilld: a guard daemon that kills (or freezes, or reports) whole cgroups
 * when the kernel says they hit pids.max (a fork bomb) or lost a process to
 * the OOM killer. The declarations shared by the files of daemon/.
 *
 * The flow: kernel notification (epoll POLLPRI, inotify, v1 eventfd) ->
 * the trigger that owns the fd reads its counter and decides -> act.c
 * decides whether and whom (post-action delay, storm limit, dry run) ->
 * an action the loop drives (hooks, cgk_kill_start_fd(), ...) -> one
 * event logged. The daemon uses only libcgkill's public interface
 * (cgkill.h, the symbols of lib/libcgkill.map).
 *
 * Calls go one way, down this list: a file calls only files on lines
 * below its own (tests/test-layers.sh reads this list and checks it
 * against the objects' symbols).
 *
 *	main.c			options, start-up, the loop, reload and stop
 *	ctl.c			the runtime directory, one instance, the control socket
 *	check.c			--check's and the start's warnings: matches, hooks, paths
 *	watch.c			the watched cgroups; arming their triggers
 *	trigger-pids.c trigger-memory.c trigger-pressure.c trigger-swap.c trigger-fork-rate.c
 *	episode.c		pressure episodes (the pressure and swap triggers')
 *	act.c			whether, on whom, how: the actions the loop drives
 *	metrics.c		counters and histograms; the Prometheus text, MetricsFile=
 *	storm.c hook.c		the storm limit's budgets; ExecPreKill=, ExecPostKill=
 *	victim.c		victim choice: the candidates and their figures
 *	counterpart.c		v1 counterparts; processes' uids and memory
 *	guard.c config.c	the rules: guard rails and the parser
 *	protection.c pids-events.c	pure helpers, tested alone
 *	forkbpf.c		the fork counter in the kernel (BPF), tested alone
 *	cgpath.c		cgroup paths: names, directories, files, populated
 *	files.c			small files: numbers, PSI lines
 *	sys.c			small system helpers: files, epoll, closers, D
 *	notify.c		the log, sd_notify, the watchdog, time, JSON strings
 */
#ifndef CGKILLD_H
#define CGKILLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include <cgkill.h>

#define CGKILLD_CONF "/etc/cgkill/cgkilld.conf"
#define CGKILLD_MAX_ESCALATIONS 16

/* ---- configuration (config.c: pure, fuzzed by fuzz/fuzz-conf.c) ---- */

enum trig_bits {
	TRIG_PIDS_MAX = 1u << 0,	/* pids.events "max" rose by N within a window */
	TRIG_OOM_KILL = 1u << 1,	/* memory.events / memory.oom_control oom_kill rose */
	TRIG_PIDS_CURRENT = 1u << 2,	/* pids.current at or above P% of pids.max for a time */
	TRIG_MEMORY_PRESSURE = 1u << 3,	/* PSI trigger on memory.pressure (or /proc/pressure/memory) */
	TRIG_CPU_PRESSURE = 1u << 4,	/* ... cpu.pressure */
	TRIG_IO_PRESSURE = 1u << 5,	/* ... io.pressure */
	TRIG_PRESSURE_LEVEL = 1u << 6,	/* v1 memory.pressure_level through cgroup.event_control */
	TRIG_SWAP = 1u << 7,	/* the machine's swap used above a share */
	TRIG_FORK_RATE = 1u << 8,	/* forks that neither exec nor end, counted in the kernel (BPF) */
	TRIG_PIDS = TRIG_PIDS_MAX | TRIG_PIDS_CURRENT,	/* those that arm the pids files */
	TRIG_PSI = TRIG_MEMORY_PRESSURE | TRIG_CPU_PRESSURE | TRIG_IO_PRESSURE,
	/* those after which Reap=auto releases the victims' memory */
	TRIG_MEMORY = TRIG_OOM_KILL | TRIG_MEMORY_PRESSURE | TRIG_PRESSURE_LEVEL | TRIG_SWAP,
};

/* PSI resources, in the order of their files and of struct cg's psi[] */
enum psi_res { PSI_MEMORY = 0, PSI_CPU, PSI_IO, PSI_NRES };

/* The sources of pressure episodes, one episode each in struct cg's ep[]:
 * the PSI resources (same order), the v1 level, swap */
enum pressure_src { PSRC_MEMORY = PSI_MEMORY, PSRC_CPU = PSI_CPU, PSRC_IO = PSI_IO, PSRC_LEVEL, PSRC_SWAP, PSRC_N };

/* Victim=: whom a rule acts on. SELF is the matched cgroup; the others
 * choose among its candidates (victim.c), largest figure first. */
enum victim {
	VICTIM_SELF = 0,
	VICTIM_MEMORY,		/* memory.current - memory.low (v1: usage_in_bytes) */
	VICTIM_GROWTH,		/* memory growth since the episode began */
	VICTIM_PRESSURE,	/* the rule's PSI kind, avg10 of memory.pressure */
	VICTIM_PROCESSES,	/* number of processes */
	VICTIM_SWAP,		/* memory.swap.current (v1: memsw - usage) */
};

/* Globs (fnmatch(3), FNM_PATHNAME) on a candidate's path relative to the
 * matched cgroup. */
struct globs {
	char **v;
	size_t n;
};

enum action {
	ACT_KILL = 0,
	ACT_FREEZE,
	ACT_LOG,
};

struct escalation {
	uint64_t after_ms;
	int sig;
};

#define STORM_SLOTS 64

struct rule {
	char *name;
	char *match;		/* normalised glob: "a/b*" (no leading slash) */
	char **comp;		/* its components */
	size_t ncomp;
	unsigned triggers;	/* enum trig_bits */
	unsigned pids_max_events;
	uint64_t pids_window_ms;
	unsigned pids_current_pct;	/* pids-current: at or above this % of pids.max */
	uint64_t pids_current_for_ms;	/* for this long */
	unsigned oom_kills;
	unsigned fork_rate;	/* fork-rate: forks a second that neither exec nor end ... */
	uint64_t fork_window_ms;	/* ... over this window */
	enum action action;
	int sig;
	struct escalation esc[CGKILLD_MAX_ESCALATIONS];
	size_t nesc;
	uint64_t wait_ms;
	int backend;		/* enum cgk_backend */
	bool dry_run;
	uint64_t delay_ms;	/* post-action delay */
	unsigned max_per_minute;	/* 0: no limit */

	/* pressure (trigger-pressure.c) */
	bool pressure_full;	/* PressureLimit= "full" (else "some") */
	unsigned pressure_pct;	/* stall share of the window, 1..100 */
	uint64_t pressure_window_ms;	/* the kernel trigger's window */
	uint64_t pressure_duration_ms;	/* how long it must last */
	bool pressure_system;	/* PressureOf=system: /proc/pressure/ */
	bool pressure_reclaim;	/* also need pgscan to rise */
	int pressure_level;	/* v1: 0 low, 1 medium, 2 critical */
	unsigned swap_pct;	/* swap: used at or above this % of SwapTotal */

	/* victim choice (victim.c) */
	enum victim victim;
	struct globs prefer, avoid, omit;
	bool victim_xattrs;	/* honour user.cgkill_{prefer,avoid,omit} */

	/* hooks (hook.c): argv, NULL if none */
	char **exec_pre, **exec_post;
	uint64_t exec_timeout_ms;

	int reap;		/* -1 auto (memory triggers and SIGKILL), 0, 1 */
	bool record_kills;	/* user.cgkill_kills on the victim */

	char *file;		/* where the [Rule] section starts */
	unsigned line;

	/* run-time state (not set by the parser; the storm limit's: act.c) */
	unsigned long actions, suppressed, events;
	unsigned told_unarmed;	/* cgroups logged without a counterpart */
};

struct config {
	bool dry_run;
	char *event_log;	/* JSON lines, or NULL */
	char *metrics_file;	/* MetricsFile=: the Prometheus text, or NULL */
	uint64_t metrics_interval_ms;	/* MetricsInterval= */
	char *protected_file;	/* NULL: the library's default */
	uint64_t poll_ms;	/* v1 pids.events, pids.current: no notification, polled */
	bool realtime;		/* SCHED_RR 1 (else nice -10), at start */
	unsigned max_watches_per_owner;	/* MaxWatchesPerOwner=: 0 default, UINT_MAX none */
	unsigned max_actions;	/* MaxActions=: actions in flight at once; more wait */
	struct rule *rules;
	size_t nrules;
	/* parser state */
	struct rule *cur;	/* the [Rule] being read, NULL in [Daemon] */
	int section;		/* 0 none, 1 Daemon, 2 Rule */
	unsigned errors;
	unsigned warnings;	/* what is valid but rarely meant (an inline comment) */
};

/* Called for each error (pri LOG_PRI_ERR) and warning (LOG_PRI_WARNING):
 * "file:line: msg" (line 0: none). */
typedef void (*conf_error_fn)(void *userdata, int pri, const char *file, unsigned line, const char *msg);
/* A message of the configuration's through err: one longer than 1 kB keeps
 * its start and its end, and says how much of its middle it left out. */
void conf_report(conf_error_fn err, void *userdata, int pri, const char *file, unsigned line, const char *fmt,
		 ...) __attribute__((format(printf, 6, 7)));

void conf_init(struct config *cfg);
void conf_free(struct config *cfg);
/* Parse text (len bytes, any content) as file; errors counted in
 * cfg->errors and reported through err. */
void conf_parse_text(struct config *cfg, const char *file, const char *text, size_t len,
		     conf_error_fn err, void *userdata);
/* After all files: every rule complete (Name, Match, Trigger). */
void conf_finish(struct config *cfg, conf_error_fn err, void *userdata);
/* path and then path.d/ *.conf in order; a missing path.d is fine, a
 * missing path is an error unless optional. */
void conf_load(struct config *cfg, const char *path, bool optional, conf_error_fn err,
	       void *userdata);
/* path opened for reading (a directory if dir, else a regular file) only
 * if it and every directory and symlink on the way is root's (or the
 * daemon's user's) and not writable by group or others (a sticky directory
 * on the way may be): the fd, or -errno (-EPERM: distrusted) with the
 * reason in why. */
int open_trusted(const char *path, bool dir, char *why, size_t size);
/* The effective settings, defaults included, one Key=value a line, as
 * the parser reads them back (--check -v). */
void conf_print(FILE *f, const struct config *cfg);
/* The directory of the file path (EventLog=, MetricsFile=), opened by
 * open_trusted(): the fd, *base the file's name in it; or -errno with the
 * reason in why (-EINVAL: path names no file). */
int open_trusted_parent(const char *path, const char **base, char *why, size_t size);
/* The name of a trigger bit (enum trig_bits) as Trigger= takes it. */
const char *trigger_name(unsigned bit);
const char *action_name(enum action a);
/* The enum trig_bits of a trigger's name ("pids-max"), 0 if none. */
unsigned trigger_bit(const char *name);
const char *victim_name(enum victim v);
/* Does the rule's kill send SIGKILL (its signal or an escalation)? */
bool rule_sends_sigkill(const struct rule *r);

/* ---- small files (files.c) ---- */
/* The file name at dfd (AT_FDCWD: a path) in one read, NUL-terminated:
 * bytes read, or -errno. */
ssize_t read_small_at(int dfd, const char *name, char *buf, size_t size);
/* The number text starts with ("max", no limit: UINT64_MAX); false if none. */
bool parse_number(const char *text, uint64_t *v);
/* The number of an open file (read from its start), of a file at dfd. */
bool read_number_fd(int fd, uint64_t *v);
bool read_number_at(int dfd, const char *name, uint64_t *v);
/* The "some" or "full" line of a PSI file (memory.pressure,
 * /proc/pressure/cpu): false if it has none (or no avg10 in it). */
struct psi_line {
	double avg10, avg60, avg300;
	unsigned long long total;
};
bool psi_parse(const char *text, bool full, struct psi_line *p);

/* ---- guards against rules that could reach what must live (guard.c) ---- */
/* 0, or -EPERM with the reason in why. */
int rule_guard_check(const struct rule *r, const char *protected_file, char *why, size_t size);
/* Does r match rel ("/a/b") itself through a wildcard? (Never watched.) */
bool rule_matches_rel(const struct rule *r, const char *rel);
/* The v2 cgroup of /proc/<pid>/cgroup ("self", "1"), "/a/b"; malloc'ed. */
char *cgroup_rel(const char *pid);

/* ---- the daemon's state: watched cgroups, the loop's entries ---- */
struct cg;
struct victim_base;
struct out;

/* An entry of the loop's epoll set: what to call when its fd is ready.
 * The loop calls event(s) and nothing else: each entry carries its own
 * handler (the triggers' come from their ops, below). */
struct src;
typedef void src_fn(struct src *s);

struct src {
	src_fn *event;
	int fd;
	struct cg *cg;		/* the watched cgroup it serves, or NULL */
	void *data;		/* else what it serves (an action, a hook) */
	bool close_later;	/* a PSI trigger: closed by the closer threads (sys.c) */
};

/* A trigger behind the one interface: watch.c arms a populated cgroup's
 * triggers through these, and disarms and dumps them, without knowing
 * which they are. arm() arms what of the trigger is not armed yet and
 * says whether it armed anything; event() is what its sources carry. */
struct trigger_ops {
	const char *name;
	unsigned triggers;	/* the rule's enum trig_bits it serves */
	bool (*arm)(struct cg *c, bool quiet);
	src_fn *event;
	void (*disarm)(struct cg *c);
	/* its state, figures and episodes into the cgroup's text lines, or
	 * its members of the cgroup's "triggers" JSON array (NULL: watch.c's
	 * line says it all) */
	void (*dump)(const struct cg *c, struct out *o);
	/* armed later on a populated cgroup (a late v1 counterpart, PSI
	 * back): what the log says then; NULL: never armed late */
	const char *late;
	bool counts;		/* a counter whose value at arming is a baseline */
	/* the cgroup's populated state changed (NULL: nothing to do) */
	void (*populated)(struct cg *c);
	/* armed from the cgroup's watch to its removal, empty or not, not
	 * only while populated (fork-rate: a bomb's first forks count) */
	bool from_watch;
};

extern const struct trigger_ops trigger_pids, trigger_memory, trigger_pressure, trigger_swap, trigger_fork_rate;
/* All of them, NULL-terminated (watch.c). */
extern const struct trigger_ops *const triggers[];

/* A pressure episode of one source (trigger-pressure.c) */
struct episode {
	uint64_t start;		/* its first event (ms), 0 none */
	uint64_t last;		/* its last event */
	unsigned events;	/* events in it */
	uint64_t pgscan_base;	/* the reclaim counter at its start */
	bool reclaim_told;	/* "a stall without reclaim" said in it */
	uint64_t gap_ms;	/* the longest silence that continues it */
};

#define PIDS_SAMPLES 16

struct cg {
	struct rule *rule;
	char *rel;		/* "a/x/b", relative to the v2 mount */
	bool dead;
	struct cg *next;

	/* pids */
	struct src pids;	/* fd of pids.events (v2 or v1) */
	bool pids_v1;		/* polled: v1 gives no notification */
	bool populated;
	struct {
		uint64_t t, v;
	} samples[PIDS_SAMPLES];
	unsigned nsamples, sample_head;
	bool pids_foreign_told;	/* a rise not acted on: another's limit (said once) */
	struct cg *poll_next;	/* on the v1 poll list */
	bool on_poll;
	/* pids-current: pids.current and pids.max of the same hierarchy as
	 * pids.events (kept open while armed, read on each look) */
	bool pcur_open;
	int pcur_fd, pmax_fd;
	bool high;		/* at or above the rule's percentage ... */
	uint64_t high_since;	/* ... since then (ms) */

	/* memory */
	struct src mem;		/* memory.events (v2) or memory.oom_control (v1) */
	bool mem_v1;
	struct src efd;		/* v1: eventfd */
	struct src recheck;	/* v1: timerfd, only while waiting */
	unsigned rechecks;
	uint64_t oom_base;

	/* pressure: one PSI trigger per resource, the v1 level eventfd */
	struct src psi[PSI_NRES];
	struct src plevel;
	int plevel_file;	/* memory.pressure_level, kept open while registered */
	bool plevel_fallback;	/* memory.pressure_level stands in for memory.pressure */
	bool psi_turned_on;	/* we turned its cgroup.pressure on (said once) */
	struct episode ep[PSRC_N];	/* one episode per source (enum pressure_src) */
	uint64_t plevel_count;	/* v1 level notifications in its episode (eventfd counts) */
	bool swap_armed;	/* counted by the swap poll */

	/* fork-rate: its slot in the kernel's fork counter while armed */
	bool fork_armed;
	unsigned fork_level, fork_slot;
	uint64_t fork_cgid, fork_cookie;
	const char *fork_unarmed;	/* why not (for the dump), NULL if armed */

	/* victim choice: the figures at the episode's start (victim.c) */
	struct victim_base *vbase;

	uint64_t holdoff_until;

	/* v1 counterparts refused as not its own (counterpart.c), said once */
	unsigned char v1_refused;	/* V1_REFUSED_* */
	/* watch.c: an empty cgroup holds no file. Populated or not is told
	 * by inotify on its cgroup.events; its triggers' files are open
	 * (armed) only while it is populated, and a while after. */
	struct cg **pprev;	/* its link: in D.cgs while armed, else in watch.c's list */
	struct cg *wd_next;	/* the other rules' cgroups of its directory (one watch) */
	int events_wd;		/* the inotify watch of its cgroup.events */
	unsigned owner;		/* the uid its watch is charged to (MaxWatchesPerOwner=) */
	bool armed;
	bool queued;		/* armed and empty (to close), or populated and short of files */
	struct cg *q_next, *q_prev;
	uint64_t empty_since;	/* ms */
	/* the files its counters (pids.events max, oom_kill) were last read
	 * from (st_dev, st_ino), and their hierarchies (1, 2; 0 unknown) */
	uint64_t pids_file[2], mem_file[2];
	unsigned char pids_hier, mem_hier;
};
#define V1_REFUSED_PIDS 1u
#define V1_REFUSED_MEMORY 2u

struct daemon {
	struct config cfg;
	const char *config_path;
	bool config_optional;
	bool global_dry_run;
	int epfd;
	struct src inotify;
	struct src sig;
	struct src watchdog;
	struct src v1poll;
	bool v1poll_armed;
	char *v2;		/* the cgroup v2 mount */
	char *v1_pids, *v1_memory, *v1_freezer;	/* v1 mounts, NULL if none */
	int event_fd;		/* EventLog=, -1 if none */
	struct cg *cgs;		/* the armed cgroups (watch.c keeps the empty ones) */
	size_t ncgs;		/* all watched cgroups */
	bool v1_poll_logged;
	bool pcur_poll_logged;
	char *self_rel, *init_rel;	/* never watched */
	bool reloaded;		/* the rest of the loop's batch points to freed state */
	bool stopping;		/* SIGTERM, SIGINT */
	uint64_t woke_us;	/* when epoll_wait() last returned (main.c) */
	unsigned nrunning, nqueued;	/* actions under way, waiting (act.c) */
	size_t nwaiting;	/* watched cgroups populated but not armed (watch.c) */
};

extern struct daemon D;

/* ---- main.c ---- */
/* (nothing: the top) */

/* ---- check.c ---- */
/* What is valid but likely wrong in cfg (read from path), each said
 * through say as a warning (a Match= that matches nothing now, no rules,
 * a hook that would not run, an EventLog= the shipped unit cannot write):
 * how many. The matches are looked for only if D.v2 is known. */
unsigned check_warn(const struct config *cfg, const char *path, conf_error_fn say);
/* ---- ctl.c ---- */
/* The runtime directory (made 0700 if missing; refused unless
 * open_trusted() takes it) and one instance: the lock of its pidfile,
 * held until exit. 0, or -errno (logged: another cgkilld holds it, with
 * its pid). */
int ctl_lock(const char *dir);
/* Reload the configuration, its errors also written on errors (NULL:
 * the log only): 0 taken, or -errno (refused, the old rules stay). */
typedef int ctl_reload_fn(FILE *errors);
/* Once in the background: the pidfile written, the control socket made
 * and served by the loop. 0, or -errno (logged). */
int ctl_start(ctl_reload_fn *reload);
/* The state as status shows it, and SIGUSR1 logs it (o->f NULL). */
void ctl_state(struct out *o);
/* After each batch of the loop: the closed connections freed. */
void ctl_reap(void);
/* At exit: connections closed, the socket and the pidfile removed. */
void ctl_stop(void);

/* ---- watch.c ---- */
int watch_start(void);		/* all rules of D.cfg */
void watch_stop(void);		/* all watches and cgroups */
void watch_inotify_event(struct src *s);
void watch_reap(void);		/* free cgroups marked dead */
/* The state (SIGUSR1, the control socket's status): the rules, the
 * owners' watches, each watched cgroup with its triggers; in JSON the
 * members "rules", "owners", "files" and "cgroups" of the caller's
 * object. */
void watch_dump(struct out *o);
/* The cgroup rel ("a/b") watched by rule r, or NULL. */
struct cg *watch_find(const struct rule *r, const char *rel);
void watch_timer_event(struct src *s);

/* ---- the triggers (trigger-*.c) ---- */
/* The pids poll's timer rang (trigger-pids.c: D.v1poll's handler). */
void pids_poll_tick(struct src *s);
/* The rule's window and limit as the kernel's trigger text
 * ("full 400000 2000000"); 0 or -EINVAL outside the kernel's bounds
 * (why says which), for --check. privileged: CAP_SYS_RESOURCE
 * (trigger-pressure.c). */
int pressure_trigger_text(const struct rule *r, bool privileged, char *buf, size_t size, char *why,
			  size_t whysize);

/* For --check: can the fork counter be loaded here? Says so on stdout
 * for cfg's fork-rate rules (trigger-fork-rate.c). */
void fork_rate_check(const struct config *cfg);

/* ---- episode.c ---- */
/* Pressure episodes, one per source and watched cgroup: shared by the
 * pressure and swap triggers. */
/* An event of source s at t, the episode continued by a silence of up
 * to gap_ms: begins or continues c's episode of s. reclaim, if not NULL,
 * reads the reclaim counter at the start (where: from what). */
typedef void reclaim_fn(struct cg *c, uint64_t *v, char *where, size_t size);
void episode_event(struct cg *c, int s, uint64_t t, uint64_t gap_ms, reclaim_fn *reclaim);
void episode_end(struct cg *c, int s);
/* Is c's episode of s under way at t? */
bool episode_under_way(const struct cg *c, int s, uint64_t t);
/* The source's name as the log and the events say it. */
const char *episode_name(const struct cg *c, int s);
extern const char *const episode_src_name[PSRC_N];
/* "episode": its figures, or null when none is under way (JSON). */
void episode_json(struct out *o, const struct episode *e, bool under_way);

/* ---- act.c ---- */
/* A trigger fired on c: what and its values, as "key": value JSON members
 * and as a log text. */
void act(struct cg *c, const char *trigger, const char *json_values, const char *text);
/* c is gone: its actions go on without it (queued ones are dropped). */
void act_forget(const struct cg *c);
/* After each batch of the loop: the actions that ended, freed. */
void act_reap(void);
/* SIGTERM: every action under way ended now (hooks killed, kills
 * abandoned through cgk_kill_op_finish()), the queued ones dropped, and
 * said. */
void act_stop(void);
/* The actions under way and queued, and the last ones (a ring of 32)
 * with their results: SIGUSR1, the control socket's status (in JSON the
 * member "actions"). */
void act_dump(struct out *o);
/* At exit: the last actions forgotten. */
void act_forget_last(void);
/* The control socket's explain: the victim c's rule would choose now,
 * and why (in JSON one object). 0, or -errno. */
int act_explain(struct cg *c, struct out *o);

/* ---- metrics.c ---- */
/* What came of a trigger's event: counted once as one of these. The
 * first ones are suppressed actions (nothing was done, reason), the
 * others actions done (result); a job's candidates merge to the
 * highest. */
enum outcome {
	OUT_DELAY = 0,		/* in the cgroup's post-action delay */
	OUT_BUSY,		/* an action on the cgroup under way or queued */
	OUT_STORM,		/* the storm limit */
	OUT_GONE,		/* the cgroup went away before the action began */
	OUT_NO_VICTIM,		/* no candidate to choose */
	OUT_REFUSED,		/* every candidate refused (guard rails, cgkilld's own) */
	OUT_ERROR,		/* out of memory, or the action could not start */
	OUT_VETOED,		/* by ExecPreKill= */
	OUT_DRY_RUN,		/* only logged */
	OUT_OK,			/* done (a kill: the cgroup empty, or signalled if Wait=0) */
	OUT_SURVIVORS,		/* a kill whose Wait= ended with processes left */
	OUT_FAILED,
	OUT_CANCELLED,		/* ended by the daemon's stop */
	OUT_N,
};
#define OUT_ACTED OUT_OK	/* the first outcome that is an action done */

/* The moments of an action (CLOCK_BOOTTIME us, 0: none): the loop's
 * wakeup on the notification it acted on, its first signal (or freeze,
 * or log line), and its victims seen empty. */
struct action_times {
	uint64_t woke, started, emptied;
};

/* Before the first of the below, and after each reload: the rules'
 * series, MetricsFile= (written at once, then every MetricsInterval=). */
void metrics_configure(void);
/* At stop: the file written a last time; everything freed. */
void metrics_stop(void);
/* A trigger of rule fired (act.c). */
void metrics_event(const char *rule, const char *trigger);
/* What came of it; t for an action done (NULL otherwise). MetricsFile=
 * is written soon after (at most once a second). */
void metrics_outcome(const char *rule, const char *trigger, enum outcome o, const struct action_times *t);
/* The Prometheus text exposition format 0.0.4 on out (a client of the
 * control interface, MetricsFile=): 0, or -errno if out failed. */
int metrics_render(FILE *out);

/* ---- storm.c ---- */
/* Storm limit: may rule act now (max_per_minute, 0: no limit) on a
 * cgroup whose action is charged to uid? Records the action at t if so;
 * if not, *until is when it may again. */
bool storm_ok(const char *rule, unsigned max_per_minute, uid_t uid, uint64_t t, uint64_t *until);
/* The action recorded at t was not done (the guard refused its cgroup):
 * it spends no budget. */
void storm_refund(const char *rule, uid_t uid, uint64_t t);
/* The budgets with actions in the last minute (the state dump; in JSON
 * the member "storm"). */
void storm_dump(struct out *o);
/* The owner an action on the cgroup at fd is charged to: its owner, or
 * for a root-owned one whoever holds its processes; -1 if none. */
uid_t charged_uid(int fd);

/* ---- hook.c ---- */
/* A hook under way: argv run with env (NULL-terminated "K=V") in a child
 * watched through its pidfd, killed at timeout_ms. done is called when it
 * ended with its exit status, 256+signal if killed by one, or -errno
 * (-ETIMEDOUT when it was killed at its timeout). */
#define HOOK_VETO 100	/* ExecPreKill= exit status that vetoes the action */
struct hook {
	struct src pidfd, timer;
	pid_t pid;		/* 0: none under way */
	int errfd;		/* the exec's errno, if it failed */
	bool killed;		/* at its timeout */
	const char *name;	/* argv[0], for the log */
	void (*done)(struct hook *h, int status);
};
/* 0 (done will be called), or -errno if it could not start. */
int hook_start(struct hook *h, char *const argv[], char *const env[], uint64_t timeout_ms,
	       void (*done)(struct hook *h, int status));
/* Now: killed, reaped (for 2 s at most: else later); done is not called. */
void hook_stop(struct hook *h);
/* The open file limit the daemon started with, restored in hooks. */
extern unsigned long long hook_nofile_soft;

/* ---- victim.c ---- */
/* Victim choice. The candidates under c (its leaves, or a
 * subtree with memory.oom.group=1 as one; another owner's subtree as
 * one), best first, omitted ones left out: rels relative to D.v2,
 * malloc'ed. The candidates of one owner are ranked as one: groups[i]
 * is the place of rels[i]'s owner (or of rels[i] alone) in the order,
 * those of one place together; the victim is all of a place. why: the
 * top five with their figures, one text; json: the same as a JSON array.
 * Returns the count of rels, 0 if none, or -errno. */
int victim_rank(struct cg *c, char ***rels, int **groups, char **why, char **json);
void victim_free(char **rels, int n);
/* A pressure episode began on c while none of its others was under way
 * (trigger-pressure.c: one per source): remember the figures that growth
 * is measured from. */
void victim_episode_start(struct cg *c);
void victim_forget(struct cg *c);
/* Is the cgroup at dfd populated (cgroup.events)? 1, 0 (empty or gone),
 * or -errno: a cgroup that cannot be read must not pass for empty. */
int cg_populated(int dfd);

/* ---- counterpart.c ---- */
/* v1 counterparts. The v1 cgroup of the v2 cgroup rel in
 * the hierarchy mounted at mount (NULL: none), for controller: the same
 * path if it exists, else that of a member process (/proc/PID/cgroup),
 * and only if it belongs to rel alone (no task outside rel's subtree in
 * it or below it, writable by root and rel's owner only; with cover, it
 * also holds every task of rel's subtree). malloc'ed; NULL if none (why
 * ""), or if refused (why says why). */
char *v1_counterpart(const char *rel, const char *mount, const char *controller, bool cover, char *why,
		     size_t size);
/* For a victim figure: the v1 memory cgroup of the candidate rel in *v1
 * (malloc'ed, cover), 0; 1 if none can be its (none, or refused for what
 * neither it nor its owner did: its processes' sums stand for it); -EPERM
 * if refused by its owner's doing (the figure is hidden). why says why. */
int v1_figure_cgroup(const char *rel, char **v1, char *why, size_t size);
/* Does the v1 cgroup dir (an ancestor of a counterpart) belong to the v2
 * cgroup rel alone, as a counterpart would (why says why not)? */
bool v1_alone(const char *rel, const char *mount, const char *controller, const char *dir, char *why, size_t size);
/* The directory of the file open at fd (a counterpart in use). */
bool counterpart_dir(int fd, char *buf, size_t size);
/* Before acting on the counterpart whose file is open at fd: does it still
 * belong to c alone? If not, says so (the caller disarms). */
bool counterpart_still_own(struct cg *c, int fd, const char *controller, const char *what);
/* A trigger (what) of c not armed: its counterpart refused (why), said
 * once per cgroup and controller; counterpart_used() when armed on one. */
void counterpart_refused(struct cg *c, const char *controller, const char *what, const char *why);
void counterpart_used(struct cg *c, const char *controller);
/* For the state dump: the refused counterparts of c, and why now (in
 * JSON: the members of the cgroup's "refused" array). */
void counterpart_dump(const struct cg *c, struct out *o);
/* For --check: the counterparts of the cgroups that match cfg's rules now. */
void counterpart_check(const struct config *cfg);
/* The VmRSS and VmSwap sums of the processes of the v2 subtree at dfd
 * (figures where no v1 memory cgroup is the candidate's own); false if a
 * part could not be read. */
bool procs_memory(int dfd, uint64_t *rss, uint64_t *swap);
/* The real, effective and saved uids of process pid, from
 * /proc/PID/status (not the owner of /proc/PID, which is root's for a
 * process that made itself not dumpable): 0, or -1 if it is gone. */
int proc_uids(pid_t pid, uid_t uids[3]);
/* procfs for the two above and counterpart.c: "/proc", or a test's fixture tree */
extern const char *proc_root;
/* ---- protection.c, pids-events.c ---- */
/* The memory.low the kernel grants a cgroup of usage and memory.low
 * whose parent is granted parent_elow, siblings being the sum of
 * min(usage, memory.low) over the parent's children */
uint64_t low_effective(uint64_t usage, uint64_t low, uint64_t parent_elow, uint64_t siblings);

/* The pids.events of the cgroup at dfd that counts its own limit only: pids.events.local where it exists, else pids.events;
 * opened (fd, or -errno), its name in *name. */
int pids_events_open(int dfd, const char **name);
/* The "max N" of a pids.events text; false if absent or malformed. */
bool pids_events_max(const char *text, uint64_t *v);

/* ---- forkbpf.c ---- */
/* The fork counter: BPF programs on three tracepoints count, for each
 * watched cgroup v2 subtree, the forks (not threads), execs and exits
 * (of processes) of its tasks, and send a record through a ring buffer
 * when its forks, less its execs or its exits (the more of the two),
 * reach a limit in a window: the processes that neither exec'd nor
 * ended. */
#define FORK_LEVELS 16	/* the deepest level (components below the v2 root) counted */
#define FORK_SLOTS 4	/* counters (rules) for one cgroup */
enum fork_tp { FORK_TP_FORK, FORK_TP_EXEC, FORK_TP_EXIT, FORK_TP_N };
struct fork_counter;
struct bpf_insn;
struct fork_limit {
	uint64_t limit;		/* forks less max(execs, exits) in one window */
	uint64_t window_ns;
	uint64_t cookie;	/* returned in the records */
};
struct fork_counts {
	uint64_t forks, execs, exits;
};
struct fork_record {
	uint64_t cgid, cookie;
	uint64_t forks, execs, exits;	/* in the window, when the limit was reached */
	uint64_t elapsed_ns;	/* since the window began */
};
/* Maps made, programs loaded and attached: 0, or -errno with why
 * (EPERM: no CAP_BPF and CAP_PERFMON; the verifier's words). */
int fork_counter_open(struct fork_counter **fc, char *why, size_t size);
void fork_counter_close(struct fork_counter *fc);
/* The ring buffer's fd: readable (epoll) when records wait. */
int fork_counter_fd(const struct fork_counter *fc);
/* Count the cgroup cgid (at level >= 1) in slot, from now: 0 or -errno. */
int fork_counter_watch(struct fork_counter *fc, uint64_t cgid, unsigned level, unsigned slot,
		       const struct fork_limit *lim);
int fork_counter_unwatch(struct fork_counter *fc, uint64_t cgid, unsigned level, unsigned slot);
/* The counts of slot's window under way (tests, the probe). */
int fork_counter_peek(const struct fork_counter *fc, uint64_t cgid, unsigned slot, struct fork_counts *n);
/* Each waiting record to fn; how many. */
unsigned fork_counter_read(struct fork_counter *fc, void (*fn)(const struct fork_record *rec, void *arg),
			   void *arg);
/* The id of the cgroup v2 directory open at dfd, as the programs see it:
 * 0 or -errno. */
int fork_cgroup_id(int dfd, uint64_t *id);
/* The program of tracepoint tp, malloc'ed in *insns: its length, 0
 * without memory (tests). */
size_t fork_prog_build(const struct fork_counter *fc, enum fork_tp tp, struct bpf_insn **insns);

/* ---- cgpath.c ---- */
/* base/rel/name opened with flags (and O_CLOEXEC): the fd, or -1 and
 * errno. rel and name may be "". */
int cg_file_open(const char *base, const char *rel, const char *name, int flags);
/* The v2 cgroup rel's directory, not through a symlink: fd or -errno. */
int cg_dir_open(const char *rel);
/* "a/b" (b alone if a is ""); D.v2/rel. malloc'ed, NULL without memory. */
char *cg_join(const char *a, const char *b);
char *cg_full_path(const char *rel);
/* Is rel populated? 1, 0, or -1 with errno (ENOENT: gone). Read from a
 * file opened for it: none is kept. */
int cg_populated_at(const char *rel);
/* Are c's pids counters read every PollInterval= (v1 pids.events, and
 * pids.current), having no notification? Only while populated. */
bool cg_polled(const struct cg *c);
/* Is "/" rel the cgroup cg ("/a/b") or one above it? */
bool cg_holds(const char *rel, const char *cg);
/* visit(child's fd, arg) for each child cgroup directory of the cgroup at
 * dfd, until one returns nonzero: 0, that value, or -errno (a cgroup gone
 * meanwhile is skipped). */
int cg_each_child(int dfd, int (*visit)(int cfd, void *arg), void *arg);

/* ---- sys.c ---- */
int epoll_add(struct src *s, unsigned events);
/* Out of the epoll set and closed (a PSI trigger: by a closer thread). */
void src_close(struct src *s);
/* How many of uid's PSI triggers wait to be closed. */
unsigned closes_pending(unsigned uid);
/* At exit: the closer threads finish and are joined. */
void closer_stop(void);
/* An open of path failed with err (not ENOENT): logged, and the open
 * file limit named once when that is the cause. */
void open_failed(const char *path, int err);
/* Read a small kernel file from offset 0: bytes read or -errno. */
ssize_t read_at0(int fd, char *buf, size_t size);
/* The (st_dev, st_ino) of fd, zeros if none; are a and b one file? */
void file_id(int fd, uint64_t id[2]);
bool same_file(const uint64_t a[2], const uint64_t b[2]);
/* The value of "key N" in text; false if absent. */
bool kv_get(const char *text, const char *key, uint64_t *v);
/* Does cgkilld have CAP_SYS_RESOURCE (the kernel's "privileged" PSI
 * triggers)? */
bool has_cap_sys_resource(void);

/* ---- logging and the service manager (notify.c) ---- */
enum { LOG_PRI_ERR = 3, LOG_PRI_WARNING = 4, LOG_PRI_NOTICE = 5, LOG_PRI_INFO = 6, LOG_PRI_DEBUG = 7 };
extern int log_verbose;
/* Can syslog(3) reach a reader at /dev/log? */
bool log_syslog_reachable(void);
void log_use_syslog(void);
/* From now on, lines on stderr carry their time, unless stderr is the
 * journal's stream ($JOURNAL_STREAM): the daemon's log, not --check's. */
void log_stamp_unless_journal(void);
/* ts as RFC 3339 in local time with its offset, digits (0..6) of a
 * second: "2026-12-07T17:55:52.123+00:00"; 40 bytes hold it. */
void rfc3339(const struct timespec *ts, int digits, char *buf, size_t size);
void log_msg(int pri, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A datagram to $NOTIFY_SOCKET; nothing if unset. */
void notify(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The watchdog interval in ms from WATCHDOG_USEC (for us), 0 if none. */
uint64_t notify_watchdog_ms(void);
/* CLOCK_BOOTTIME: a suspend counts (episodes, delays, storm limits). */
uint64_t now_ms(void);
uint64_t now_us(void);
/* WATCHDOG=1 if the watchdog is on and half its interval has passed since
 * the last (or always, with force). */
void watchdog_ping(bool force);
extern uint64_t watchdog_ms;
/* s as a JSON string (quoted, escaped) on f. */
void json_str(FILE *f, const char *s);

/* Where the state goes (the SIGUSR1 dump, the control socket's status
 * and explain): lines of text for the log (f NULL) or for a client (f),
 * or one JSON document on f. The text lines are written by out_line();
 * the JSON by out_open()/out_close() and the out_* members, which put
 * the commas. Names go through the library's text filter either way. */
#define OUT_DEPTH 16
struct out {
	FILE *f;		/* NULL: the log, at LOG_PRI_INFO */
	bool json;
	unsigned depth;
	bool members[OUT_DEPTH];	/* a member written at this depth */
};
void out_line(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* '{' or '[', as the member key (NULL in an array or at the top). */
void out_open(struct out *o, const char *key, char bracket);
void out_close(struct out *o, char bracket);
void out_str(struct out *o, const char *key, const char *v);	/* NULL: null */
void out_u64(struct out *o, const char *key, uint64_t v);
void out_int(struct out *o, const char *key, long long v);
void out_bool(struct out *o, const char *key, bool v);
/* v already JSON (NULL: null) */
void out_raw(struct out *o, const char *key, const char *v);

#endif
