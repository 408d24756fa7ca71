/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A trigger fired: whether to act (post-action delay, storm limit), on
 * whom (the watched cgroup, or the candidates victim.c ranks, in order
 * until one is not refused), how (dry run, kill, freeze, log; hooks before
 * and after, the first may veto) and the one event that says what
 * happened. Every action goes through the library: a kill is
 * cgk_kill_fd() with the rule's signal, escalations, wait and reap; a
 * freeze and a log are preceded by a dry-run cgk_kill_fd(), whose guard
 * rails (root, self, PID 1, protected) refuse the cgroup before anything
 * is written. Nothing is exec'd but the rule's hooks (hook.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "cgkilld.h"

/* Storm limit: may the rule act now? Records the action if so; if not,
 * *until is when it may again. */
static bool storm_ok(struct rule *r, uint64_t t, uint64_t *until)
{
	unsigned n = 0;
	uint64_t oldest = UINT64_MAX;

	if (!r->max_per_minute)
		return true;
	for (unsigned i = 0; i < r->nstorm; i++)
		if (r->storm[i] + 60000 > t) {
			n++;
			if (r->storm[i] < oldest)
				oldest = r->storm[i];
		}
	if (n >= r->max_per_minute) {
		*until = oldest + 60000;
		return false;
	}
	if (r->nstorm < STORM_SLOTS) {
		r->storm[r->nstorm++] = t;
	} else {
		/* replace the oldest */
		unsigned slot = 0;

		for (unsigned i = 1; i < STORM_SLOTS; i++)
			if (r->storm[i] < r->storm[slot])
				slot = i;
		r->storm[slot] = t;
	}
	return true;
}

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

static volatile sig_atomic_t cancel;

/* The library calls this about every 250 ms while it waits for the tree
 * to empty: the service manager's watchdog must not fire meanwhile, and a
 * stop (SIGTERM, SIGINT: blocked, read through the signalfd later) ends
 * the wait instead of waiting for its deadline. */
static void progress(const char *path, unsigned left, uint64_t waited_ms, void *userdata)
{
	sigset_t pending;

	(void)path, (void)left, (void)waited_ms, (void)userdata;
	watchdog_ping(false);
	if (sigpending(&pending) == 0 && (sigismember(&pending, SIGTERM) || sigismember(&pending, SIGINT)))
		cancel = 1;
}

/* The hooks' environment: the daemon's facts, "K=V", NULL-terminated. */
struct env {
	char *v[24];
	size_t n;
};

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

/* Kill records on the victim's cgroup: ours, and systemd's own names
 * (the service manager reads them when the unit stops: "systemd-oomd
 * killed N process(es)" in its terms, result oom-kill). */
static void record_kill(int dirfd, const char *path, const cgk_report *rep)
{
	/* the kernel's cgroup.kill signals without a count */
	bool counted = rep && cgk_report_backend(rep) != CGK_BACKEND_KERNEL;
	static const struct {
		const char *name;
		bool processes;	/* add the processes signalled, else 1 */
	} rec[] = {
		{ "user.cgkill_kills", false },
		{ "user.oomd_ooms", false },
		{ "user.oomd_kill", true },
	};

	for (size_t i = 0; i < sizeof(rec) / sizeof(*rec); i++) {
		char buf[32] = "";

		if (rec[i].processes && !counted)
			continue;
		ssize_t n = fgetxattr(dirfd, rec[i].name, buf, sizeof(buf) - 1);
		unsigned long long v = n > 0 ? strtoull(buf, NULL, 10) : 0;

		v += rec[i].processes ? cgk_report_signalled(rep) : 1;
		n = snprintf(buf, sizeof(buf), "%llu", v);
		if (fsetxattr(dirfd, rec[i].name, buf, (size_t)n, 0) < 0 && errno != ENOENT)
			log_msg(LOG_PRI_NOTICE, "%s: cannot record the kill in %s: %s", path, rec[i].name,
				strerror(errno));
	}
}

struct what {
	const char *trigger, *json_values, *text;
	const char *candidates;	/* JSON array, or NULL */
	struct timespec wall;
	bool dry;
};

/* The one JSON event of an action (EventLog=). */
static void event(struct cg *c, const struct what *w, const char *path, int ret, const char *msg,
		  const cgk_report *rep, int pre, int post, bool reap)
{
	struct rule *r = c->rule;
	char *doc = NULL, *line = NULL;
	size_t doclen = 0, linelen = 0;
	FILE *f;

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
		fprintf(f, "{\"time\": %lld.%06ld, \"rule\": ", (long long)w->wall.tv_sec, w->wall.tv_nsec / 1000);
		json_str(f, r->name);
		fprintf(f, ", \"trigger\": {%s}, \"cgroup\": ", w->json_values);
		json_str(f, path);
		fputs(", \"watched\": ", f);
		{
			char watched[4096];

			snprintf(watched, sizeof(watched), "%s/%s", D.v2, c->rel);
			json_str(f, watched);
		}
		fprintf(f, ", \"victim\": \"%s\", \"candidates\": %s", victim_name(r->victim),
			w->candidates ? w->candidates : "null");
		fprintf(f, ", \"action\": \"%s\", \"dry_run\": %s, \"reap\": %s, \"error\": %d, \"message\": ",
			action_name(r->action), w->dry ? "true" : "false", reap ? "true" : "false", ret);
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

static void hook_env(struct env *e, struct cg *c, const struct what *w, const char *path)
{
	env_add(e, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
	env_add(e, "CGKILLD_RULE=%s", c->rule->name);
	env_add(e, "CGKILLD_CGROUP=%s", path);
	env_add(e, "CGKILLD_WATCHED=%s/%s", D.v2, c->rel);
	env_add(e, "CGKILLD_TRIGGER=%s", w->trigger);
	env_add(e, "CGKILLD_TRIGGER_TEXT=%s", w->text);
	env_add(e, "CGKILLD_TRIGGER_JSON={%s}", w->json_values);
	env_add(e, "CGKILLD_ACTION=%s", action_name(c->rule->action));
	env_add(e, "CGKILLD_DRY_RUN=%d", w->dry);
}

/* Is "/" rel the cgroup "/a/b" or one above it? */
static bool holds(const char *rel, const char *cg)
{
	size_t n = strlen(rel);

	return cg && cg[0] == '/' && !strncmp(cg + 1, rel, n) && (cg[n + 1] == '\0' || cg[n + 1] == '/');
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
	cgk_options_set_progress(o, progress, NULL);
	cgk_options_set_cancel(o, &cancel);
	return o;
}

/* Would the library's guard rails refuse the cgroup? Asked before a
 * hook is told about it: a dry run, which changes nothing. */
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

/* Act on one cgroup: dirfd, opened when it was chosen, so that a cgroup
 * made later under the same name is never the one acted on; path (its
 * name then) for the log and the hooks. *refused: a guard rail of the
 * library refused it, nothing was done, the next candidate may be
 * tried. */
static void act_on(struct cg *c, const struct what *w, int dirfd, const char *path, bool *refused)
{
	struct rule *r = c->rule;
	char how[4300] = "", msg[512];
	cgk_options *o;
	cgk_report *rep = NULL;
	bool reap = !w->dry && (r->reap == 1 || (r->reap == -1 && (r->triggers & TRIG_MEMORY))) &&
		    rule_sends_sigkill(r);
	int ret = 0, pre = 0, post = 0;
	unsigned flags;
	struct env e = { .n = 0 };

	*refused = false;
	if (r->exec_pre && guard_refuses(r, dirfd, path)) {
		*refused = true;
		return;
	}
	hook_env(&e, c, w, path);
	if (r->exec_pre) {
		pre = hook_run(r->exec_pre, e.v, r->exec_timeout_ms);
		if (pre == HOOK_VETO) {
			log_msg(LOG_PRI_WARNING, "rule %s: %s: %s; ExecPreKill= %s vetoed the %s", r->name,
				path, w->text, r->exec_pre[0], action_name(r->action));
			event(c, w, path, -ECANCELED, "vetoed by ExecPreKill=", NULL, pre, 0, false);
			env_free(&e);
			return;
		}
		if (pre != 0)
			log_msg(LOG_PRI_WARNING, "rule %s: %s: ExecPreKill= %s: %s; the %s goes on", r->name,
				path, r->exec_pre[0], hook_text(pre, msg, sizeof(msg)), action_name(r->action));
	}

	flags = CGK_BOOST;
	if (w->dry || r->action != ACT_KILL)
		flags |= CGK_DRY_RUN;
	if (reap)
		flags |= CGK_REAP;
	o = rule_options(r, flags);
	if (!o) {
		log_msg(LOG_PRI_ERR, "rule %s: %s: out of memory", r->name, path);
		env_free(&e);
		return;
	}
	cancel = 0;
	ret = cgk_kill_fd(dirfd, o, &rep);
	cgk_options_free(o);
	*refused = ret < 0 && rep && cgk_report_refused(rep) != CGK_GUARD_NONE;
	if (ret == 0 && !w->dry && r->action == ACT_FREEZE) {
		ret = freeze(dirfd, path, how, sizeof(how));
		if (ret < 0)
			snprintf(how, sizeof(how), "cannot freeze: %s", strerror(-ret));
	}
	if (ret == 0 && !w->dry && r->action == ACT_KILL && r->record_kills)
		record_kill(dirfd, path, rep);

	/* the log line */
	{
		char buf[16];
		const char *sig = cgk_signal_name(r->sig, buf, sizeof(buf)) ?: "?";

		log_msg(ret < 0 ? LOG_PRI_ERR : LOG_PRI_WARNING,
			"rule %s: %s: %s; %s%s%s%s: %s%s (%u process(es) %s, %u cgroup(s), backend %s, signal %llums, empty %llums)",
			r->name, path, w->text, w->dry ? "dry run, would " : "", action_name(r->action),
			r->action == ACT_KILL ? " with " : "", r->action == ACT_KILL ? sig : "",
			ret < 0 ? "failed: " : "done",
			ret < 0 && rep ? cgk_report_message(rep) : (ret < 0 ? strerror(-ret) : ""),
			rep ? (flags & CGK_DRY_RUN ? (unsigned)cgk_report_n_processes(rep, CGK_LIST_LISTED)
						   : cgk_report_signalled(rep))
			    : 0,
			flags & CGK_DRY_RUN ? "listed"
			: rep && cgk_report_backend(rep) == CGK_BACKEND_KERNEL ? "signalled by the kernel, not counted"
									      : "signalled",
			rep ? cgk_report_cgroups(rep) : 0,
			rep && cgk_report_n_signals(rep) ? cgk_backend_name(cgk_report_backend(rep)) ?: "?" : "none",
			rep ? (unsigned long long)cgk_report_signal_ms(rep) : 0ULL,
			rep ? (unsigned long long)cgk_report_empty_ms(rep) : 0ULL);
		if (*how)
			log_msg(LOG_PRI_WARNING, "rule %s: %s: %s", r->name, path, how);
		if (reap && rep)
			log_msg(LOG_PRI_INFO, "rule %s: %s: memory of %u process(es) released at once%s%s",
				r->name, path, cgk_report_reaped(rep),
				cgk_report_reap_errno(rep) ? "; the reap stopped: " : "",
				cgk_report_reap_errno(rep) ? strerror(cgk_report_reap_errno(rep)) : "");
	}

	if (r->exec_post && !*refused) {
		env_add(&e, "CGKILLD_ERROR=%d", ret);
		if (rep && cgk_report_n_signals(rep))
			env_add(&e, "CGKILLD_BACKEND=%s", cgk_backend_name(cgk_report_backend(rep)) ?: "?");
		/* not counted by the kernel's cgroup.kill */
		if (rep && cgk_report_backend(rep) != CGK_BACKEND_KERNEL)
			env_add(&e, "CGKILLD_SIGNALLED=%u", cgk_report_signalled(rep));
		if (reap && rep)
			env_add(&e, "CGKILLD_REAPED=%u", cgk_report_reaped(rep));
		env_add(&e, "CGKILLD_MESSAGE=%s", ret < 0 ? (rep ? cgk_report_message(rep) : strerror(-ret)) : how);
		post = hook_run(r->exec_post, e.v, r->exec_timeout_ms);
		if (post != 0)
			log_msg(LOG_PRI_WARNING, "rule %s: %s: ExecPostKill= %s: %s", r->name, path,
				r->exec_post[0], hook_text(post, msg, sizeof(msg)));
	}
	event(c, w, path, ret, ret < 0 ? (rep ? cgk_report_message(rep) : strerror(-ret)) : how, rep, pre,
	      post, reap);
	env_free(&e);
	cgk_report_free(rep);
}

void act(struct cg *c, const char *trigger, const char *json_values, const char *text)
{
	struct rule *r = c->rule;
	uint64_t t = now_ms(), until = 0;
	struct what w = { .trigger = trigger, .json_values = json_values, .text = text };
	char **rels = NULL, *why = NULL, *cands = NULL;
	int n;

	r->events++;
	if (t < c->holdoff_until) {
		log_msg(LOG_PRI_DEBUG, "rule %s: %s/%s: %s; in its post-action delay, ignored", r->name,
			D.v2, c->rel, text);
		return;
	}
	if (!storm_ok(r, t, &until)) {
		r->suppressed++;
		/* one line, then quiet until the limit allows an action */
		c->holdoff_until = until;
		log_msg(LOG_PRI_WARNING,
			"rule %s: %s/%s: %s; not acted on: the storm limit of %u action(s) a minute is reached (events from this cgroup ignored for %llums)",
			r->name, D.v2, c->rel, text, r->max_per_minute, (unsigned long long)(until - t));
		return;
	}
	r->actions++;
	c->holdoff_until = t + r->delay_ms;
	clock_gettime(CLOCK_REALTIME, &w.wall);
	w.dry = D.global_dry_run || D.cfg.dry_run || r->dry_run;

	if (r->victim == VICTIM_SELF) {
		bool refused;
		char path[4096];
		int fd;

		snprintf(path, sizeof(path), "%s/%s", D.v2, c->rel);
		fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0) {
			log_msg(LOG_PRI_WARNING, "rule %s: %s: %s; not acted on: %s", r->name, path, text,
				strerror(errno));
			return;
		}
		act_on(c, &w, fd, path, &refused);
		close(fd);
		return;
	}
	n = victim_rank(c, &rels, &why, &cands);
	w.candidates = cands;
	if (n <= 0) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/%s", D.v2, c->rel);
		log_msg(LOG_PRI_WARNING, "rule %s: %s: %s; no victim (Victim=%s): %s", r->name, path, text,
			victim_name(r->victim), why ? why : n < 0 ? strerror(-n) : "no candidate is left");
		event(c, &w, path, n < 0 ? n : -ESRCH, "no victim", NULL, 0, 0, false);
	} else {
		int *fds = calloc((size_t)n, sizeof(*fds));

		log_msg(LOG_PRI_NOTICE, "rule %s: %s/%s: %s", r->name, D.v2, c->rel, why);
		/* each candidate held as it was ranked: a cgroup removed and made
		 * again under its name while hooks run is not the one ranked */
		for (int i = 0; fds && i < n; i++) {
			char path[4096];

			snprintf(path, sizeof(path), "%s/%s", D.v2, rels[i]);
			fds[i] = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
			if (fds[i] < 0)
				fds[i] = -errno;
		}
		for (int i = 0; fds && i < n; i++) {
			char path[4096];
			bool refused = true;

			snprintf(path, sizeof(path), "%s/%s", D.v2, rels[i]);
			if (holds(rels[i], D.self_rel) || holds(rels[i], D.init_rel))
				log_msg(LOG_PRI_NOTICE, "rule %s: %s holds cgkilld or PID 1: never a victim", r->name,
					path);
			else if (fds[i] < 0)
				log_msg(LOG_PRI_NOTICE, "rule %s: %s: %s", r->name, path, strerror(-fds[i]));
			else
				act_on(c, &w, fds[i], path, &refused);
			if (!refused)
				break;
			if (i + 1 < n)
				log_msg(LOG_PRI_NOTICE, "rule %s: %s refused; the next candidate", r->name, path);
		}
		for (int i = 0; fds && i < n; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		if (!fds)
			log_msg(LOG_PRI_ERR, "rule %s: out of memory", r->name);
		free(fds);
	}
	victim_free(rels, n);
	free(why);
	free(cands);
}
