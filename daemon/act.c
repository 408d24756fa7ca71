/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A trigger fired: whether to act (post-action delay, an action on the
 * cgroup already under way, storm limit), on whom (the watched cgroup, or
 * the candidates victim.c ranks, in order until one is not refused), how
 * (dry run, kill, freeze, log; hooks before and after, the first may
 * veto) and the one event that says what happened. Every action goes
 * through the library: a kill is cgk_kill_start_fd() with the rule's
 * signal, escalations, wait and reap; a freeze and a log are preceded by
 * a dry run, whose guard rails (root, self, PID 1, protected) refuse the
 * cgroup before anything is written. Nothing is exec'd but the rule's
 * hooks (hook.c).
 *
 * Nothing here waits: an action is a state machine the loop drives (the
 * pre hook's pidfd and timer, the kill op's fd, the post hook's), so that
 * a slow action (a 30 s escalation, a 10 min Wait=, a hook that hangs)
 * holds no other. Each watched cgroup has one action at most: an event on
 * one whose action is under way (or queued) is ignored, as in its
 * post-action delay. At most MaxActions= run at once; more wait in a
 * queue, in order.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "cgkilld.h"

/* The event line's "schema": bumped when a key is removed, renamed or
 * changes type (2: named times, reap requested and done, the triggers'
 * hierarchy "v1"/"v2" and counters' totals and rises named apart) */
#define EVENT_SCHEMA 2
/* Action=log and dry runs name this many processes, then "and N more" */
#define LIST_SHOWN 10

/* What fired: copies, as the trigger's buffers are gone when it ends. */
struct what {
	char *trigger, *json_values, *text;
	char *candidates;	/* JSON array, or NULL */
	struct timespec detected;	/* when the trigger fired (CLOCK_REALTIME) */
	bool dry;
};

/* The hooks' environment: the daemon's facts, "K=V", NULL-terminated. */
struct env {
	char *v[24];
	size_t n;
};

enum phase { PH_IDLE, PH_PRE, PH_KILL, PH_POST };

struct job {
	struct rule r;		/* a copy: a reload frees the rules */
	struct cg *c;		/* the watched cgroup, NULL once it is gone */
	char *rel, *watched;	/* its name (relative, and D.v2's path) */
	struct what w;
	uint64_t t;		/* when it began (the post-action delay, the storm limit) */
	bool self;		/* Victim=self: the watched cgroup alone */

	/* the candidates, as ranked: names, places, directories (-errno) */
	char **rels;
	int *groups, *fds, n, i;
	bool charged, held, acted, group_charged;
	bool storm_recorded;	/* the storm limit counted the current place ... */
	uid_t storm_uid;	/* ... for this owner */

	/* the candidate under way (i) */
	char path[4096];
	enum phase phase;
	bool refused, reap;	/* reap: asked of the library */
	struct timespec acted_at;	/* when the library was called, 0 if not */
	unsigned flags;
	int pre, post, ret;
	struct env e;
	struct hook hook;
	cgk_kill_op *op;
	cgk_options *opts;	/* the op reads them until it is finished */
	struct src opsrc;
	cgk_report *rep;
	char how[4300];

	/* what came of it so far (enum outcome, -1: nothing yet), and when */
	int out;
	struct action_times times;
	uint64_t kill_us;	/* the kill under way started */

	struct job *next;
};

/* under way (at most MaxActions=), waiting, ended (freed after the
 * loop's batch: events of it may be in it) */
static struct job *running, *queue, **queue_tail = &queue, *ended;

static int freeze(int dirfd, const char *path, char *how, size_t size)
{
	int fd, r = 0;

	fd = openat(dirfd, "cgroup.freeze", O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (write(fd, "1", 1) < 0)
		r = -errno;
	close(fd);
	snprintf(how, size, "thaw with: echo 0 > %s/cgroup.freeze", path);
	return r;
}

__attribute__((format(printf, 2, 3))) static void env_add(struct env *e, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (e->n + 1 >= sizeof(e->v) / sizeof(*e->v))
		return;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) >= 0)
		e->v[e->n++] = s;
	va_end(ap);
	e->v[e->n] = NULL;
}

static void env_free(struct env *e)
{
	for (size_t i = 0; i < e->n; i++)
		free(e->v[i]);
	e->n = 0;
}

/* A hook's status as the log says it. */
static const char *hook_text(int st, char *buf, size_t size)
{
	if (st == -ETIMEDOUT)
		snprintf(buf, size, "killed at its timeout");
	else if (st < 0)
		snprintf(buf, size, "could not run: %s", strerror(-st));
	else if (st >= 256)
		snprintf(buf, size, "killed by signal %d", st - 256);
	else
		snprintf(buf, size, "exit status %d", st);
	return buf;
}

/* name's number on the cgroup at dirfd, plus n. */
static void xattr_add(int dirfd, const char *path, const char *name, unsigned long long n)
{
	char buf[32] = "";
	ssize_t len = fgetxattr(dirfd, name, buf, sizeof(buf) - 1);
	unsigned long long v = len > 0 ? strtoull(buf, NULL, 10) : 0;

	len = snprintf(buf, sizeof(buf), "%llu", v + n);
	if (fsetxattr(dirfd, name, buf, (size_t)len, 0) < 0 && errno != ENOENT)
		log_msg(LOG_PRI_NOTICE, "%s: cannot record the kill in %s: %s", path, name, strerror(errno));
}

/* Kill records on the victim's cgroup. Every kill in ours:
 * user.cgkill_kills counts them, user.cgkill_cause names the trigger of
 * the last. A kill for memory also in systemd-oomd's names, which the
 * service manager reads when the unit stops ("systemd-oomd killed N
 * process(es)", result oom-kill): user.oomd_ooms counts it,
 * user.oomd_kill adds the processes killed where they were counted (the
 * kernel's cgroup.kill does not count). A fork bomb's kill is no OOM
 * kill: not in systemd's. */
static void record_kill(int dirfd, const char *path, const char *trigger, const cgk_report *rep)
{
	xattr_add(dirfd, path, "user.cgkill_kills", 1);
	if (fsetxattr(dirfd, "user.cgkill_cause", trigger, strlen(trigger), 0) < 0 && errno != ENOENT)
		log_msg(LOG_PRI_NOTICE, "%s: cannot record the kill in user.cgkill_cause: %s", path, strerror(errno));
	if (!(trigger_bit(trigger) & TRIG_MEMORY))
		return;
	xattr_add(dirfd, path, "user.oomd_ooms", 1);
	if (rep && cgk_report_backend(rep) != CGK_BACKEND_KERNEL)
		xattr_add(dirfd, path, "user.oomd_kill", cgk_report_signalled(rep));
}

/* Did the kill send SIGKILL? The reap acts only after it: a rule whose
 * TERM sufficed asked for a reap that did not happen. */
static bool sent_sigkill(const cgk_report *rep)
{
	for (size_t i = 0; rep && i < cgk_report_n_signals(rep); i++)
		if (cgk_report_signal(rep, i, NULL) == SIGKILL)
			return true;
	return false;
}

/* "key": "RFC 3339 time" (with microseconds), or null for a zero time */
static void json_time(FILE *f, const char *key, const struct timespec *ts)
{
	char buf[40];

	if (!ts->tv_sec && !ts->tv_nsec) {
		fprintf(f, "\"%s\": null", key);
		return;
	}
	rfc3339(ts, 6, buf, sizeof(buf));
	fprintf(f, "\"%s\": \"%s\"", key, buf);
}

/* The last actions' ends, for the status (the control socket): a ring
 * of LAST_ACTIONS, filled where each event is written. */
#define LAST_ACTIONS 32

struct last {
	struct timespec wall;
	char *rule, *watched, *cgroup, *trigger, *message;
	enum action action;
	bool dry;
	int error;
};

static struct last last[LAST_ACTIONS];
static unsigned last_next, last_n;

static void last_free(struct last *l)
{
	free(l->rule);
	free(l->watched);
	free(l->cgroup);
	free(l->trigger);
	free(l->message);
	*l = (struct last){ 0 };
}

static void last_record(const struct job *a, int ret, const char *msg)
{
	struct last *l = &last[last_next];

	last_free(l);
	*l = (struct last){ .wall = a->w.detected, .rule = strdup(a->r.name), .watched = strdup(a->watched),
			    .cgroup = strdup(a->path), .trigger = strdup(a->w.trigger),
			    .message = strdup(msg ? msg : ""), .action = a->r.action, .dry = a->w.dry, .error = ret };
	last_next = (last_next + 1) % LAST_ACTIONS;
	if (last_n < LAST_ACTIONS)
		last_n++;
}

/* The one JSON event of an action (EventLog=), and its line in the last
 * actions. */
static void event(const struct job *a, int ret, const char *msg, const cgk_report *rep, int pre, int post)
{
	const struct rule *r = &a->r;
	const struct what *w = &a->w;
	char *doc = NULL, *line = NULL;
	size_t doclen = 0, linelen = 0;
	FILE *f;

	last_record(a, ret, msg);
	if (D.event_fd < 0)
		return;
	f = open_memstream(&doc, &doclen);
	if (f) {
		if (rep) {
			const cgk_report *reps[1] = { rep };

			cgk_report_json(reps, 1, f);
		} else {
			fputs("null", f);
		}
		fclose(f);
	}
	f = open_memstream(&line, &linelen);
	if (f) {
		struct timespec now;

		clock_gettime(CLOCK_REALTIME, &now);
		fprintf(f, "{\"schema\": %d, ", EVENT_SCHEMA);
		json_time(f, "detected_at", &w->detected);
		fputs(", ", f);
		json_time(f, "acted_at", &a->acted_at);
		fputs(", ", f);
		json_time(f, "ended_at", &now);
		fputs(", \"rule\": ", f);
		json_str(f, r->name);
		fprintf(f, ", \"trigger\": {%s}, \"cgroup\": ", w->json_values);
		json_str(f, a->path);
		fputs(", \"watched\": ", f);
		json_str(f, a->watched);
		fprintf(f, ", \"victim\": \"%s\", \"candidates\": %s", victim_name(r->victim),
			w->candidates ? w->candidates : "null");
		fprintf(f,
			", \"action\": \"%s\", \"dry_run\": %s, \"reap\": {\"requested\": %s, \"done\": %s}, \"error\": %d, \"message\": ",
			action_name(r->action), w->dry ? "true" : "false", a->reap ? "true" : "false",
			a->reap && sent_sigkill(rep) ? "true" : "false", ret);
		json_str(f, msg);
		fputs(", \"hooks\": {\"pre\": ", f);
		if (r->exec_pre)
			fprintf(f, "%d", pre);
		else
			fputs("null", f);
		fputs(", \"post\": ", f);
		if (r->exec_post)
			fprintf(f, "%d", post);
		else
			fputs("null", f);
		fputs("}, \"report\": ", f);
		/* the library's document on one line: its newlines are white
		 * space between tokens (strings escape theirs) */
		for (const char *p = doc ? doc : "null"; *p; p++) {
			if (*p == '\n') {
				while (p[1] == ' ')
					p++;
				continue;
			}
			fputc(*p, f);
		}
		fputs("}\n", f);
		fclose(f);
		if (line && write(D.event_fd, line, linelen) < 0)
			log_msg(LOG_PRI_ERR, "EventLog %s: %s", D.cfg.event_log, strerror(errno));
	}
	free(line);
	free(doc);
}

static void hook_env(struct env *e, const struct job *a)
{
	env_add(e, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
	env_add(e, "CGKILLD_RULE=%s", a->r.name);
	env_add(e, "CGKILLD_CGROUP=%s", a->path);
	env_add(e, "CGKILLD_WATCHED=%s", a->watched);
	env_add(e, "CGKILLD_TRIGGER=%s", a->w.trigger);
	env_add(e, "CGKILLD_TRIGGER_TEXT=%s", a->w.text);
	env_add(e, "CGKILLD_TRIGGER_JSON={%s}", a->w.json_values);
	env_add(e, "CGKILLD_ACTION=%s", action_name(a->r.action));
	env_add(e, "CGKILLD_DRY_RUN=%d", a->w.dry);
}

/* The library's options for the rule's action. */
static cgk_options *rule_options(const struct rule *r, unsigned flags)
{
	cgk_options *o = NULL;

	if (cgk_options_new(&o) < 0)
		return NULL;
	cgk_options_set_flags(o, flags);
	cgk_options_set_signal(o, r->sig);
	cgk_options_set_wait(o, r->wait_ms);
	cgk_options_set_backend(o, (enum cgk_backend)r->backend);
	for (size_t i = 0; i < r->nesc; i++)
		cgk_options_add_escalation(o, r->esc[i].after_ms, r->esc[i].sig);
	if (D.cfg.protected_file)
		cgk_options_set_protected_file(o, D.cfg.protected_file);
	return o;
}

/* Would the library's guard rails refuse the cgroup? Asked before a
 * hook is told about it: a dry run, which changes nothing (and does not
 * wait). */
static bool guard_refuses(const struct rule *r, int dirfd, const char *path)
{
	cgk_options *o = rule_options(r, CGK_DRY_RUN);
	cgk_report *rep = NULL;
	bool refused = false;

	if (o && cgk_kill_fd(dirfd, o, &rep) < 0 && rep && cgk_report_refused(rep) != CGK_GUARD_NONE) {
		log_msg(LOG_PRI_NOTICE, "rule %s: %s: %s", r->name, path, cgk_report_message(rep));
		refused = true;
	}
	cgk_report_free(rep);
	cgk_options_free(o);
	return refused;
}

/* ---- one candidate: pre hook, kill (or freeze, or log), post hook ----
 * Each step returns true while the candidate is under way (the loop will
 * call back), false once it ended (its event written). */

static void candidate_done(struct job *a);

/* A candidate's outcome: the job's is the highest of its candidates'. */
static void outcome(struct job *a, enum outcome o)
{
	if ((int)o > a->out)
		a->out = (int)o;
}

/* What came of the kill (or its dry run, a freeze, a log) of a candidate. */
static enum outcome kill_outcome(const struct job *a, int ret)
{
	if (a->refused)
		return OUT_REFUSED;
	if (a->w.dry)
		return OUT_DRY_RUN;
	if (ret == 0)
		return OUT_OK;
	return ret == -ETIMEDOUT ? OUT_SURVIVORS : ret == -ECANCELED ? OUT_CANCELLED : OUT_FAILED;
}

/* The kill (or freeze, or log) of a candidate ended: its moments. */
static void kill_times(struct job *a, int ret, const cgk_report *rep)
{
	enum outcome o = kill_outcome(a, ret);
	uint64_t t = now_us();

	outcome(a, o);
	if (o < OUT_ACTED || o == OUT_CANCELLED)
		return;
	if (!a->times.started)
		a->times.started = a->r.action == ACT_KILL ? a->kill_us : t;
	if (ret == 0 && a->r.action == ACT_KILL && rep && cgk_report_emptied(rep))
		a->times.emptied = t;
}

/* The processes a dry run listed, as the log says them: "12 process(es)
 * in 2 cgroup(s): 301 (sh), 302 (sh), ... and 2 more". */
static void listed_text(const cgk_report *rep, char *buf, size_t size)
{
	size_t n = cgk_report_n_processes(rep, CGK_LIST_LISTED), len;

	len = (size_t)snprintf(buf, size, "%zu process(es) in %u cgroup(s)", n, cgk_report_cgroups(rep));
	for (size_t i = 0; i < n && i < LIST_SHOWN && len < size; i++) {
		const cgk_process *p = cgk_report_process(rep, CGK_LIST_LISTED, i);
		pid_t pid = cgk_process_pid(p);

		/* pid 0: outside our pid namespace */
		if (pid)
			len += (size_t)snprintf(buf + len, size - len, "%s%d (%s)", i ? ", " : ": ", (int)pid,
						cgk_process_comm(p));
		else
			len += (size_t)snprintf(buf + len, size - len, "%s? (%s)", i ? ", " : ": ", cgk_process_comm(p));
	}
	if (n > LIST_SHOWN && len < size)
		snprintf(buf + len, size - len, ", and %zu more", n - LIST_SHOWN);
}

/* What a kill did, as far as it is known: the kernel's cgroup.kill
 * signals every process of the subtree without counting them. */
static void killed_text(const cgk_report *rep, char *buf, size_t size)
{
	size_t len, nsig = cgk_report_n_signals(rep);
	enum cgk_backend b = cgk_report_backend(rep);

	if (b == CGK_BACKEND_KERNEL && cgk_report_cgroups(rep))
		len = (size_t)snprintf(buf, size, "cgroup.kill written: every process of %u cgroup(s), by the kernel (not counted)",
				       cgk_report_cgroups(rep));
	else if (b == CGK_BACKEND_KERNEL)	/* the library's count of the tree failed */
		len = (size_t)snprintf(buf, size, "cgroup.kill written: every process of the subtree, by the kernel (not counted)");
	else
		len = (size_t)snprintf(buf, size, "%u process(es) signalled in %u cgroup(s) by the %s backend",
				       cgk_report_signalled(rep), cgk_report_cgroups(rep), cgk_backend_name(b) ?: "?");
	for (size_t i = 0; nsig > 1 && i < nsig && len < size; i++) {
		char sb[16];

		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? " then " : ", signals ",
					cgk_signal_name(cgk_report_signal(rep, i, NULL), sb, sizeof(sb)) ?: "?");
	}
	if (len >= size)
		return;
	if (!cgk_report_waited(rep))
		snprintf(buf + len, size - len, "; not waited for");
	else if (cgk_report_emptied(rep))
		snprintf(buf + len, size - len, "; empty after %llums", (unsigned long long)cgk_report_empty_ms(rep));
}

/* The one warning line of a candidate's action: what was done, or would
 * have been, to whom, and what is known of the result; no figure that
 * was not measured. */
static void kill_log(struct job *a)
{
	const struct rule *r = &a->r;
	const cgk_report *rep = a->rep;
	int ret = a->ret;
	char sb[16], what[64], result[1536];
	const char *sig = cgk_signal_name(r->sig, sb, sizeof(sb)) ?: "?";

	snprintf(what, sizeof(what), "%s%s%s%s", a->w.dry ? "dry run, would " : "", action_name(r->action),
		 r->action == ACT_KILL ? " with " : "", r->action == ACT_KILL ? sig : "");
	if (ret < 0)
		snprintf(result, sizeof(result), "failed: %s", rep ? cgk_report_message(rep) : strerror(-ret));
	else if (!rep)
		snprintf(result, sizeof(result), "done");
	else if (a->w.dry || r->action == ACT_LOG)
		listed_text(rep, result, sizeof(result));
	else if (r->action == ACT_FREEZE)
		snprintf(result, sizeof(result), "done (%zu process(es) in %u cgroup(s) frozen)",
			 cgk_report_n_processes(rep, CGK_LIST_LISTED), cgk_report_cgroups(rep));
	else {
		char k[1024];

		killed_text(rep, k, sizeof(k));
		snprintf(result, sizeof(result), "done (%s)", k);
	}
	log_msg(ret < 0 ? LOG_PRI_ERR : LOG_PRI_WARNING, "rule %s: %s: %s; %s: %s", r->name, a->path, a->w.text, what,
		result);
	if (ret < 0 && rep && cgk_report_n_signals(rep) && !(a->flags & CGK_DRY_RUN)) {
		char k[1024];

		killed_text(rep, k, sizeof(k));
		log_msg(LOG_PRI_ERR, "rule %s: %s: before it failed: %s", r->name, a->path, k);
	}
	if (a->how[0])
		log_msg(LOG_PRI_WARNING, "rule %s: %s: %s", r->name, a->path, a->how);
	if (a->reap && sent_sigkill(rep))
		log_msg(LOG_PRI_INFO, "rule %s: %s: memory of %u process(es) released at once%s%s", r->name, a->path,
			cgk_report_reaped(rep), cgk_report_reap_errno(rep) ? "; the reap stopped: " : "",
			cgk_report_reap_errno(rep) ? strerror(cgk_report_reap_errno(rep)) : "");
}

/* The candidate ends: its one event. */
static bool target_end(struct job *a)
{
	const cgk_report *rep = a->rep;
	int ret = a->ret;

	event(a, ret, ret < 0 ? (rep ? cgk_report_message(rep) : strerror(-ret)) : a->how, rep, a->pre, a->post);
	env_free(&a->e);
	cgk_report_free(a->rep);
	a->rep = NULL;
	a->phase = PH_IDLE;
	return false;
}

static bool post_result(struct job *a, int st)
{
	char msg[512];

	a->post = st;
	if (st != 0)
		log_msg(LOG_PRI_WARNING, "rule %s: %s: ExecPostKill= %s: %s", a->r.name, a->path, a->r.exec_post[0],
			hook_text(st, msg, sizeof(msg)));
	return target_end(a);
}

static void post_done(struct hook *h, int st)
{
	struct job *a = (struct job *)((char *)h - offsetof(struct job, hook));

	post_result(a, st);
	candidate_done(a);
}

/* The kill (or its dry run) is over: freeze, record, log, post hook. */
static bool kill_result(struct job *a, bool stopping)
{
	const struct rule *r = &a->r;
	int dirfd = a->fds[a->i], ret;
	const cgk_report *rep;

	a->ret = ret = cgk_kill_op_finish(a->op, &a->rep);
	a->op = NULL;
	cgk_options_free(a->opts);
	a->opts = NULL;
	rep = a->rep;
	a->refused = ret < 0 && rep && cgk_report_refused(rep) != CGK_GUARD_NONE;
	if (ret == 0 && !a->w.dry && r->action == ACT_FREEZE) {
		a->ret = ret = freeze(dirfd, a->path, a->how, sizeof(a->how));
		if (ret < 0)
			snprintf(a->how, sizeof(a->how), "cannot freeze: %s", strerror(-ret));
	}
	if (ret == 0 && !a->w.dry && r->action == ACT_KILL && r->record_kills)
		record_kill(dirfd, a->path, a->w.trigger, rep);
	kill_times(a, ret, rep);
	kill_log(a);
	if (!r->exec_post || a->refused || stopping)
		return target_end(a);
	env_add(&a->e, "CGKILLD_ERROR=%d", ret);
	if (rep && cgk_report_n_signals(rep))
		env_add(&a->e, "CGKILLD_BACKEND=%s", cgk_backend_name(cgk_report_backend(rep)) ?: "?");
	/* not counted by the kernel's cgroup.kill */
	if (rep && cgk_report_backend(rep) != CGK_BACKEND_KERNEL)
		env_add(&a->e, "CGKILLD_SIGNALLED=%u", cgk_report_signalled(rep));
	if (a->reap && sent_sigkill(rep))
		env_add(&a->e, "CGKILLD_REAPED=%u", cgk_report_reaped(rep));
	env_add(&a->e, "CGKILLD_MESSAGE=%s", ret < 0 ? (rep ? cgk_report_message(rep) : strerror(-ret)) : a->how);
	a->phase = PH_POST;
	ret = hook_start(&a->hook, r->exec_post, a->e.v, r->exec_timeout_ms, post_done);
	return ret < 0 ? post_result(a, ret) : true;
}

/* The kill op's fd: readable when its step is due. */
static void op_event(struct src *s)
{
	struct job *a = s->data;

	if (a->phase != PH_KILL || !a->op || cgk_kill_op_step(a->op) == -EAGAIN)
		return;
	epoll_ctl(D.epfd, EPOLL_CTL_DEL, a->opsrc.fd, NULL);
	if (!kill_result(a, false))
		candidate_done(a);
}

static bool kill_start(struct job *a)
{
	const struct rule *r = &a->r;
	int ret;

	a->flags = CGK_BOOST;
	if (a->w.dry || r->action != ACT_KILL)
		a->flags |= CGK_DRY_RUN;
	if (a->reap)
		a->flags |= CGK_REAP;
	a->opts = rule_options(r, a->flags);
	clock_gettime(CLOCK_REALTIME, &a->acted_at);
	ret = a->opts ? cgk_kill_start_fd(a->fds[a->i], a->opts, &a->op) : -ENOMEM;
	a->kill_us = now_us();
	if (ret < 0) {
		outcome(a, OUT_ERROR);
		cgk_options_free(a->opts);
		a->opts = NULL;
		log_msg(LOG_PRI_ERR, "rule %s: %s: %s", r->name, a->path, strerror(-ret));
		env_free(&a->e);
		a->phase = PH_IDLE;
		return false;
	}
	a->phase = PH_KILL;
	/* what ends at once (a refusal, a dry run, no wait) ends here */
	if (cgk_kill_op_step(a->op) != -EAGAIN)
		return kill_result(a, false);
	a->opsrc = (struct src){ .event = op_event, .fd = cgk_kill_op_fd(a->op), .data = a };
	if (epoll_ctl(D.epfd, EPOLL_CTL_ADD, a->opsrc.fd, &(struct epoll_event){ .events = EPOLLIN, .data.ptr = &a->opsrc }) < 0) {
		log_msg(LOG_PRI_ERR, "rule %s: %s: epoll: %s; the kill is abandoned", r->name, a->path, strerror(errno));
		return kill_result(a, true);
	}
	return true;
}

static bool pre_result(struct job *a, int st)
{
	const struct rule *r = &a->r;
	char msg[512];

	a->pre = st;
	if (st == HOOK_VETO) {
		outcome(a, OUT_VETOED);
		log_msg(LOG_PRI_WARNING, "rule %s: %s: %s; ExecPreKill= %s vetoed the %s", r->name, a->path, a->w.text,
			r->exec_pre[0], action_name(r->action));
		event(a, -ECANCELED, "vetoed by ExecPreKill=", NULL, st, 0);
		env_free(&a->e);
		a->phase = PH_IDLE;
		return false;
	}
	if (st != 0)
		log_msg(LOG_PRI_WARNING, "rule %s: %s: ExecPreKill= %s: %s; the %s goes on", r->name, a->path,
			r->exec_pre[0], hook_text(st, msg, sizeof(msg)), action_name(r->action));
	return kill_start(a);
}

static void pre_done(struct hook *h, int st)
{
	struct job *a = (struct job *)((char *)h - offsetof(struct job, hook));

	if (!pre_result(a, st))
		candidate_done(a);
}

/* Candidate i, held by its directory fd, opened when it was ranked, so
 * that a cgroup made later under the same name is never the one acted
 * on. a->refused: a guard rail of the library refused it, nothing was
 * done, the next candidate may be tried. */
static bool target_start(struct job *a)
{
	const struct rule *r = &a->r;
	int ret;

	a->refused = false;
	a->acted_at = (struct timespec){ 0 };
	a->pre = a->post = a->ret = 0;
	a->how[0] = '\0';
	a->reap = !a->w.dry && (r->reap == 1 || (r->reap == -1 && (r->triggers & TRIG_MEMORY))) &&
		  rule_sends_sigkill(r);
	if (r->exec_pre && guard_refuses(r, a->fds[a->i], a->path)) {
		a->refused = true;
		outcome(a, OUT_REFUSED);
		return false;
	}
	hook_env(&a->e, a);
	if (!r->exec_pre)
		return kill_start(a);
	a->phase = PH_PRE;
	ret = hook_start(&a->hook, r->exec_pre, a->e.v, r->exec_timeout_ms, pre_done);
	return ret < 0 ? pre_result(a, ret) : true;
}

/* ---- the walk over the candidates ---- */

/* An action of the watched cgroup is under way (not held): counted, and
 * its post-action delay starts. */
static void acting(struct job *a)
{
	if (!a->c)
		return;
	a->c->rule->actions++;
	a->c->holdoff_until = a->t + a->r.delay_ms;
}

/* The storm limit for an action on the cgroup at fd (a->path): true if it
 * may be done (recorded); if not, says so once and holds the watched
 * cgroup until the budget it is charged to allows one again. */
static bool storm_allows(struct job *a, int fd)
{
	const struct rule *r = &a->r;
	uint64_t until = 0;
	uid_t uid;

	a->storm_recorded = false;
	if (!r->max_per_minute)
		return true;
	uid = charged_uid(fd);
	if (storm_ok(r->name, r->max_per_minute, uid, a->t, &until)) {
		a->storm_recorded = true;
		a->storm_uid = uid;
		return true;
	}
	if (a->c) {
		a->c->rule->suppressed++;
		a->c->holdoff_until = until;
	}
	log_msg(LOG_PRI_WARNING,
		"rule %s: %s: %s; not acted on: the storm limit of %u action(s) a minute for the cgroups of uid %d is reached (charged for %s; events from this cgroup ignored for %llums)",
		r->name, a->watched, a->w.text, r->max_per_minute, (int)uid, a->path,
		(unsigned long long)(until - a->t));
	return false;
}

/* After candidate i: the victim is every cgroup of the first place (an
 * owner's, ranked as one, charged as one action) that is not refused;
 * all refused: the next. True if the walk ends here. */
static bool after_candidate(struct job *a)
{
	int i = a->i;

	a->acted |= !a->refused;
	if (i + 1 < a->n && a->groups[i + 1] == a->groups[i])
		return false;
	if (a->acted)
		return true;
	if (a->group_charged && a->storm_recorded)
		storm_refund(a->r.name, a->storm_uid, a->t);	/* nothing done: no budget spent */
	a->group_charged = false;
	if (i + 1 < a->n)
		log_msg(LOG_PRI_NOTICE, "rule %s: %s refused; the next candidate", a->r.name, a->path);
	return false;
}

static void action_end(struct job *a);

/* Never acted on as a ranked candidate: a cgroup that holds cgkilld or
 * PID 1 (the action's walk and explain skip it alike). */
static bool never_victim(const char *rel)
{
	return cg_holds(rel, D.self_rel) || cg_holds(rel, D.init_rel);
}

/* From candidate a->i on, until one is under way or none is left. */
static void walk(struct job *a)
{
	for (; a->i < a->n; a->i++) {
		const char *rel = a->rels[a->i];

		snprintf(a->path, sizeof(a->path), "%s/%s", D.v2, rel);
		a->refused = true;
		if (a->self) {
			if (target_start(a))
				return;
			break;
		}
		if (never_victim(rel)) {
			log_msg(LOG_PRI_NOTICE, "rule %s: %s holds cgkilld or PID 1: never a victim", a->r.name, a->path);
		} else if (a->fds[a->i] < 0) {
			log_msg(LOG_PRI_NOTICE, "rule %s: %s: %s", a->r.name, a->path, strerror(-a->fds[a->i]));
		} else if (!a->group_charged && !storm_allows(a, a->fds[a->i])) {
			a->held = true;
			break;	/* its owner's budget: not on to an innocent */
		} else {
			if (!a->charged)
				acting(a);
			a->charged = a->group_charged = true;
			if (target_start(a))
				return;
		}
		if (after_candidate(a))
			break;
	}
	action_end(a);
}

/* The loop called back: the candidate under way ended. */
static void candidate_done(struct job *a)
{
	if (a->self || after_candidate(a)) {
		action_end(a);
		return;
	}
	a->i++;
	walk(a);
}

/* ---- actions: begun, queued, ended ---- */

static void what_free(struct what *w)
{
	free(w->trigger);
	free(w->json_values);
	free(w->text);
	free(w->candidates);
}

static char **argv_dup(char **v)
{
	size_t n = 0;
	char **d;

	if (!v)
		return NULL;
	while (v[n])
		n++;
	d = calloc(n + 1, sizeof(*d));
	for (size_t i = 0; d && i < n; i++)
		if (!(d[i] = strdup(v[i]))) {
			while (i--)
				free(d[i]);
			free(d);
			return NULL;
		}
	return d;
}

static void argv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

static void action_free(struct job *a)
{
	if (a->op)
		cgk_kill_op_finish(a->op, NULL);
	cgk_options_free(a->opts);
	for (int i = 0; a->fds && i < a->n; i++)
		if (a->fds[i] >= 0)
			close(a->fds[i]);
	free(a->fds);
	victim_free(a->rels, a->n);
	free(a->groups);
	what_free(&a->w);
	free(a->r.name);
	argv_free(a->r.exec_pre);
	argv_free(a->r.exec_post);
	free(a->rel);
	free(a->watched);
	free(a);
}

/* A copy of what the action needs of c and the trigger; NULL without memory. */
static struct job *action_new(struct cg *c, const char *trigger, const char *json_values, const char *text)
{
	struct job *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->r = *c->rule;
	a->r.match = a->r.file = NULL;
	a->r.comp = NULL;
	a->r.prefer = a->r.avoid = a->r.omit = (struct globs){ 0 };
	a->r.name = strdup(c->rule->name);
	a->r.exec_pre = argv_dup(c->rule->exec_pre);
	a->r.exec_post = argv_dup(c->rule->exec_post);
	a->c = c;
	a->rel = strdup(c->rel);
	a->watched = cg_full_path(c->rel);
	a->w.trigger = strdup(trigger);
	a->w.json_values = strdup(json_values);
	a->w.text = strdup(text);
	a->out = -1;
	a->times.woke = D.woke_us ? D.woke_us : now_us();
	clock_gettime(CLOCK_REALTIME, &a->w.detected);
	if (!a->r.name || (c->rule->exec_pre && !a->r.exec_pre) || (c->rule->exec_post && !a->r.exec_post) ||
	    !a->rel || !a->watched || !a->w.trigger || !a->w.json_values || !a->w.text) {
		action_free(a);
		return NULL;
	}
	return a;
}

/* Victim=self: the watched cgroup, held by its directory. */
static void begin_self(struct job *a)
{
	int fd = cg_dir_open(a->rel);

	snprintf(a->path, sizeof(a->path), "%s", a->watched);
	a->self = true;
	if (fd < 0) {
		outcome(a, fd == -ENOENT || fd == -ENODEV ? OUT_GONE : OUT_ERROR);
		acting(a);	/* delayed all the same, as before */
		log_msg(LOG_PRI_WARNING, "rule %s: %s: %s; not acted on: %s", a->r.name, a->path, a->w.text,
			strerror(-fd));
		action_end(a);
		return;
	}
	a->rels = calloc(1, sizeof(*a->rels));
	a->groups = calloc(1, sizeof(*a->groups));
	a->fds = calloc(1, sizeof(*a->fds));
	if (!a->rels || !a->groups || !a->fds || !(a->rels[0] = strdup(a->rel))) {
		outcome(a, OUT_ERROR);
		close(fd);
		log_msg(LOG_PRI_ERR, "rule %s: out of memory", a->r.name);
		action_end(a);
		return;
	}
	a->fds[0] = fd;
	a->n = 1;
	if (!storm_allows(a, fd)) {
		a->held = true;
		action_end(a);
		return;
	}
	acting(a);
	a->charged = a->group_charged = true;
	walk(a);
}

/* The ranked candidates, each held as it was ranked: a cgroup removed
 * and made again under its name while hooks run is not the one ranked. */
static void begin_ranked(struct job *a)
{
	char *why = NULL;
	int n = victim_rank(a->c, &a->rels, &a->groups, &why, &a->w.candidates);

	if (n <= 0) {
		outcome(a, n == 0 ? OUT_NO_VICTIM : n == -ENOENT ? OUT_GONE : OUT_ERROR);
		acting(a);
		snprintf(a->path, sizeof(a->path), "%s", a->watched);
		log_msg(LOG_PRI_WARNING, "rule %s: %s: %s; no victim (Victim=%s): %s", a->r.name, a->path, a->w.text,
			victim_name(a->r.victim), why ? why : n < 0 ? strerror(-n) : "no candidate is left");
		event(a, n < 0 ? n : -ESRCH, "no victim", NULL, 0, 0);
		free(why);
		action_end(a);
		return;
	}
	a->n = n;
	log_msg(LOG_PRI_NOTICE, "rule %s: %s: %s", a->r.name, a->watched, why);
	free(why);
	a->fds = calloc((size_t)n, sizeof(*a->fds));
	if (!a->fds) {
		outcome(a, OUT_ERROR);
		log_msg(LOG_PRI_ERR, "rule %s: out of memory", a->r.name);
		acting(a);
		action_end(a);
		return;
	}
	for (int i = 0; i < n; i++) {
		int fd = cg_dir_open(a->rels[i]);

		a->fds[i] = fd;
	}
	walk(a);
}

static void begin(struct job *a)
{
	a->next = running;
	running = a;
	D.nrunning++;
	a->t = now_ms();
	a->w.dry = D.global_dry_run || D.cfg.dry_run || a->r.dry_run;
	if (!a->c) {
		outcome(a, OUT_GONE);
		log_msg(LOG_PRI_NOTICE, "rule %s: %s: gone before its queued action began; not acted on", a->r.name,
			a->watched);
		action_end(a);
	} else if (a->r.victim == VICTIM_SELF) {
		begin_self(a);
	} else {
		begin_ranked(a);
	}
}

/* The queued actions, while there is room. */
static void drain(void)
{
	static bool draining;	/* an action that ends at once ends in here */

	if (draining)
		return;
	draining = true;
	while (queue && D.nrunning < D.cfg.max_actions) {
		struct job *a = queue;

		queue = a->next;
		if (!queue)
			queue_tail = &queue;
		D.nqueued--;
		begin(a);
	}
	draining = false;
}

/* Off the running list; freed after the loop's batch. */
static void action_end(struct job *a)
{
	for (struct job **p = &running; *p; p = &(*p)->next)
		if (*p == a) {
			*p = a->next;
			D.nrunning--;
			break;
		}
	a->phase = PH_IDLE;
	if (!a->charged && !a->held)
		acting(a);	/* none could be acted on: delayed all the same */
	/* nothing said what came of it: held by the storm limit, or no
	 * candidate could be acted on */
	if (a->out < 0)
		a->out = a->held ? OUT_STORM : OUT_REFUSED;
	metrics_outcome(a->r.name, a->w.trigger, (enum outcome)a->out, a->out >= OUT_ACTED ? &a->times : NULL);
	a->next = ended;
	ended = a;
	drain();
}

void act_reap(void)
{
	while (ended) {
		struct job *a = ended;

		ended = a->next;
		action_free(a);
	}
}

/* Is an action on c (or on its cgroup as a victim) under way or queued? */
static bool busy(const struct cg *c)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", D.v2, c->rel);
	for (const struct job *a = running; a; a = a->next)
		if (!strcmp(a->rel, c->rel) || (a->phase != PH_IDLE && !strcmp(a->path, path)))
			return true;
	for (const struct job *a = queue; a; a = a->next)
		if (!strcmp(a->rel, c->rel))
			return true;
	return false;
}

void act(struct cg *c, const char *trigger, const char *json_values, const char *text)
{
	struct rule *r = c->rule;
	struct job *a;

	r->events++;
	metrics_event(r->name, trigger);
	if (now_ms() < c->holdoff_until) {
		log_msg(LOG_PRI_DEBUG, "rule %s: %s/%s: %s; in its post-action delay, ignored", r->name, D.v2, c->rel,
			text);
		metrics_outcome(r->name, trigger, OUT_DELAY, NULL);
		return;
	}
	if (busy(c)) {
		log_msg(LOG_PRI_DEBUG, "rule %s: %s/%s: %s; an action on it is under way, ignored", r->name, D.v2,
			c->rel, text);
		metrics_outcome(r->name, trigger, OUT_BUSY, NULL);
		return;
	}
	a = action_new(c, trigger, json_values, text);
	if (!a) {
		log_msg(LOG_PRI_ERR, "rule %s: %s/%s: %s; not acted on: out of memory", r->name, D.v2, c->rel, text);
		metrics_outcome(r->name, trigger, OUT_ERROR, NULL);
		return;
	}
	if (D.nrunning >= D.cfg.max_actions) {
		*queue_tail = a;
		queue_tail = &a->next;
		D.nqueued++;
		log_msg(LOG_PRI_WARNING,
			"rule %s: %s/%s: %s; %u action(s) under way (MaxActions=%u): queued, %u waiting", r->name,
			D.v2, c->rel, text, D.nrunning, D.cfg.max_actions, D.nqueued);
		return;
	}
	begin(a);
}

void act_forget(const struct cg *c)
{
	struct job *const heads[] = { running, queue };

	for (size_t h = 0; h < 2; h++)
		for (struct job *a = heads[h]; a; a = a->next)
			if (a->c == c)
				a->c = NULL;
}

static const char *const phase_name[] = {
	[PH_IDLE] = "between candidates",
	[PH_PRE] = "in its ExecPreKill= hook",
	[PH_KILL] = "waiting for its kill",
	[PH_POST] = "in its ExecPostKill= hook",
};

void act_stop(void)
{
	unsigned n = 0, dropped = D.nqueued;

	while (queue) {
		struct job *a = queue;

		queue = a->next;
		metrics_outcome(a->r.name, a->w.trigger, OUT_CANCELLED, NULL);
		action_free(a);
	}
	queue_tail = &queue;
	D.nqueued = 0;
	while (running) {
		struct job *a = running;

		log_msg(LOG_PRI_NOTICE, "stopping: rule %s: %s: the action under way ends (%s)", a->r.name, a->path,
			phase_name[a->phase]);
		if (a->phase == PH_PRE || a->phase == PH_POST) {
			if (a->phase == PH_PRE)
				outcome(a, OUT_CANCELLED);	/* a kill done stays done */
			hook_stop(&a->hook);
			if (a->phase == PH_PRE)
				event(a, -ECANCELED, "ended: cgkilld stopped", NULL, -ECANCELED, 0);
			else
				post_result(a, -ECANCELED);
			env_free(&a->e);
		} else if (a->phase == PH_KILL) {
			kill_result(a, true);	/* abandoned: -ECANCELED, nothing left frozen */
		}
		a->held = true;	/* no delay to start: the daemon stops */
		n++;
		action_end(a);
	}
	if (n || dropped)
		log_msg(LOG_PRI_NOTICE, "stopping: %u action(s) under way ended, %u queued not begun", n, dropped);
	act_reap();
}

static void dump_running(struct out *o)
{
	uint64_t t = now_ms();

	for (const struct job *a = running; a; a = a->next) {
		if (!o->json) {
			out_line(o, "action: rule %s on %s, %s, candidate %d of %d, for %llums", a->r.name, a->path,
				 phase_name[a->phase], a->i + 1, a->n, (unsigned long long)(t - a->t));
			continue;
		}
		out_open(o, NULL, '{');
		out_str(o, "rule", a->r.name);
		out_str(o, "watched", a->watched);
		out_str(o, "cgroup", a->path);
		out_str(o, "phase", phase_name[a->phase]);
		out_int(o, "candidate", a->i + 1);
		out_int(o, "candidates", a->n);
		out_u64(o, "for_ms", t - a->t);
		out_close(o, '}');
	}
}

/* The last actions, oldest first. */
static void dump_last(struct out *o)
{
	for (unsigned k = 0; k < last_n; k++) {
		const struct last *l = &last[(last_next + LAST_ACTIONS - last_n + k) % LAST_ACTIONS];
		const char *msg = l->message ? l->message : "";
		char when[64];
		struct tm tm;
		size_t n = strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", gmtime_r(&l->wall.tv_sec, &tm));

		snprintf(when + n, sizeof(when) - n, ".%03ldZ", l->wall.tv_nsec / 1000000);
		if (!o->json) {
			out_line(o, "last action: %s rule %s on %s (watched %s): %s%s, %s%s%s", when, l->rule ? l->rule : "?",
				 l->cgroup ? l->cgroup : "?", l->watched ? l->watched : "?", l->dry ? "dry run, " : "",
				 action_name(l->action), l->error ? "failed" : "done", *msg ? ": " : "", msg);
			continue;
		}
		out_open(o, NULL, '{');
		out_str(o, "time", when);
		out_str(o, "rule", l->rule);
		out_str(o, "trigger", l->trigger);
		out_str(o, "watched", l->watched);
		out_str(o, "cgroup", l->cgroup);
		out_str(o, "action", action_name(l->action));
		out_bool(o, "dry_run", l->dry);
		out_int(o, "error", l->error);
		out_str(o, "message", l->message);
		out_close(o, '}');
	}
}

void act_dump(struct out *o)
{
	if (!o->json) {
		dump_running(o);
		out_line(o, "actions: %u under way (MaxActions=%u), %u queued", D.nrunning, D.cfg.max_actions, D.nqueued);
		dump_last(o);
		return;
	}
	out_open(o, "actions", '{');
	out_u64(o, "max_actions", D.cfg.max_actions);
	out_u64(o, "queued", D.nqueued);
	out_open(o, "under_way", '[');
	dump_running(o);
	out_close(o, ']');
	out_open(o, "last", '[');
	dump_last(o);
	out_close(o, ']');
	out_close(o, '}');
}

void act_forget_last(void)
{
	for (unsigned i = 0; i < LAST_ACTIONS; i++)
		last_free(&last[i]);
	last_n = last_next = 0;
}

/* The victim c's rule would choose now: victim_rank(), as an action
 * ranks, and its first place that is not never_victim(), as an action
 * walks. Nothing is opened to act, nothing is counted. */
int act_explain(struct cg *c, struct out *o)
{
	const struct rule *r = c->rule;
	char *watched = cg_full_path(c->rel), **rels = NULL, *why = NULL, *json = NULL;
	int *groups = NULL, n = 0, place = -1;

	if (!watched)
		return -ENOMEM;
	if (r->victim != VICTIM_SELF) {
		n = victim_rank(c, &rels, &groups, &why, &json);
		for (int i = 0; i < n && place < 0; i++)
			if (!never_victim(rels[i]))
				place = groups[i];
	}
	if (o->json) {
		out_open(o, NULL, '{');
		out_str(o, "rule", r->name);
		out_str(o, "cgroup", watched);
		out_str(o, "victim_rule", victim_name(r->victim));
		out_open(o, "victims", '[');
	}
	if (r->victim == VICTIM_SELF) {
		if (o->json)
			out_str(o, NULL, watched);
		else
			out_line(o, "rule %s: %s: Victim=self: the victim is %s itself", r->name, watched, watched);
	}
	for (int i = 0; i < n; i++) {
		char *path;

		if (groups[i] != place || never_victim(rels[i]) || !(path = cg_full_path(rels[i])))
			continue;
		if (o->json)
			out_str(o, NULL, path);
		else
			out_line(o, "rule %s: %s: Victim=%s: would act on %s", r->name, watched, victim_name(r->victim),
				 path);
		free(path);
	}
	if (o->json) {
		out_close(o, ']');
		out_raw(o, "candidates", json);
		out_str(o, "why", why ? why : n < 0 ? strerror(-n) : NULL);
		out_close(o, '}');
	} else if (r->victim != VICTIM_SELF) {
		if (place < 0)
			out_line(o, "rule %s: %s: Victim=%s: no victim: %s", r->name, watched, victim_name(r->victim),
				 why ? why : n < 0 ? strerror(-n) : "no candidate is left");
		else
			out_line(o, "rule %s: %s: %s", r->name, watched, why ? why : "");
	}
	victim_free(rels, n > 0 ? n : 0);
	free(groups);
	free(why);
	free(json);
	free(watched);
	return 0;
}
