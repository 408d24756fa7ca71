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
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "cgkilld.h"

/* The storm limit, counted per owner: a budget of MaxActionsPerMinute
 * actions a minute for each rule and owner, so that one owner's storm
 * never spends another's. The owner is the one an action is charged to
 * (charged_uid(): that of the cgroup acted on, or for a root-owned one
 * the owner of the processes in it): a user's cgroups, and the root-owned
 * ones that hold that user's processes or delegated cgroups, share their
 * user's budget; root's processes share root's (the net under a rule that
 * misfires on the system's services holds as before). A budget is kept
 * while it holds an action of the last minute, under the rule's name
 * (carried over a reload). */
struct storm {
	char *rule;
	uid_t uid;
	uint64_t t[STORM_SLOTS];	/* times (ms) of its last actions */
	unsigned n;
	struct storm *next;
};

static struct storm *storms;

#define STORM_MS 60000

/* Forget the budgets with no action in the last minute. */
static void storm_expire(uint64_t t)
{
	for (struct storm **p = &storms, *b; (b = *p);) {
		bool recent = false;

		for (unsigned i = 0; i < b->n; i++)
			recent |= b->t[i] + STORM_MS > t;
		if (recent) {
			p = &b->next;
			continue;
		}
		*p = b->next;
		free(b->rule);
		free(b);
	}
}

/* The budget of rule r for uid (created if none); NULL without memory. */
static struct storm *storm_of(const struct rule *r, uid_t uid)
{
	struct storm *b;

	for (b = storms; b; b = b->next)
		if (b->uid == uid && !strcmp(b->rule, r->name))
			return b;
	b = calloc(1, sizeof(*b));
	if (!b || !(b->rule = strdup(r->name))) {
		free(b);
		return NULL;
	}
	b->uid = uid;
	b->next = storms;
	storms = b;
	return b;
}

/* Storm limit: may rule r act now on a cgroup whose action is charged to
 * uid? Records the action if so (*slot: where, for storm_refund(); NULL
 * if not recorded); if not, *until is when it may again. */
static bool storm_ok(const struct rule *r, uid_t uid, uint64_t t, uint64_t *until, uint64_t **slot)
{
	unsigned n = 0, i = 0;
	uint64_t oldest = UINT64_MAX;
	struct storm *b;

	*slot = NULL;
	if (!r->max_per_minute)
		return true;
	storm_expire(t);
	b = storm_of(r, uid);
	if (!b)
		return true;	/* no memory: the action matters more */
	for (unsigned k = 0; k < b->n; k++)
		if (b->t[k] + STORM_MS > t) {
			n++;
			if (b->t[k] < oldest)
				oldest = b->t[k];
		}
	if (n >= r->max_per_minute) {
		*until = oldest + STORM_MS;
		return false;
	}
	if (b->n < STORM_SLOTS) {
		i = b->n++;
	} else {
		/* replace the oldest */
		for (unsigned k = 1; k < STORM_SLOTS; k++)
			if (b->t[k] < b->t[i])
				i = k;
	}
	b->t[i] = t;
	*slot = &b->t[i];
	return true;
}

/* An action recorded at slot was not done (the guard refused its cgroup):
 * it spends no budget. Before the next storm_ok(), which may free it. */
static void storm_refund(uint64_t *slot)
{
	if (slot)
		*slot = 0;
}

/* ---- whom an action is charged to (the storm limit's owner) ----
 *
 * The owner of the cgroup acted on when it is not root's. A root-owned
 * one (systemd's user-UID.slice, an admin's per-job cgroup) is charged to
 * whoever holds its processes: the owner of the delegated cgroups (not
 * root's, below its root-owned part) that hold processes, if they are all
 * one owner's; else the owner of most processes, a delegated subtree's
 * counting for its delegated owner whatever their uids (a delegatee's
 * setuid-root or subordinate uids stay its own), a root-owned cgroup's
 * for their real uid (root placed them there). Root only when its
 * processes are the most; uid -1 (nobody's) when none is found. Bounded:
 * OWNER_DIRS cgroups of the root-owned part (delegated roots included),
 * SUBTREE_DIRS cgroups and OWNER_PROCS processes counted in each
 * delegated subtree (a subtree larger than that counts as OWNER_PROCS:
 * hiding processes deep charges the one who hid them), the real uid of
 * OWNER_SAMPLE processes of the root-owned cgroups. Accounting only:
 * a pid reused while it is read costs one count. */
#define OWNER_DIRS 128
#define SUBTREE_DIRS 64
#define OWNER_PROCS 4096
#define OWNER_SAMPLE 256
#define OWNER_UIDS 64

struct tally {
	uid_t uid[OWNER_UIDS];
	unsigned n[OWNER_UIDS];
	unsigned len;
	unsigned dirs, sampled;	/* of the root-owned part */
	unsigned delegated;	/* delegated owners holding processes (0, 1, 2: more) */
	uid_t delegatee;	/* the first of them */
};

static void tally_add(struct tally *t, uid_t uid, unsigned n)
{
	unsigned i = 0;

	while (i < t->len && t->uid[i] != uid)
		i++;
	if (i == OWNER_UIDS)
		return;
	if (i == t->len) {
		t->uid[t->len++] = uid;
		t->n[i] = 0;
	}
	t->n[i] += n;
}

/* The directory fd of the cgroup name in dfd, or -1. */
static int cg_open(int dfd, const char *name)
{
	return openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
}

/* Calls visit(dfd, child's fd, child's stat, arg) for each child cgroup of
 * dfd; stops early (and says so) when visit returns false. */
static bool each_child(int dfd, bool (*visit)(int cfd, const struct stat *st, void *arg), void *arg)
{
	int dup = cg_open(dfd, ".");
	DIR *d = dup < 0 ? NULL : fdopendir(dup);
	bool go = true;
	struct dirent *e;

	if (!d) {
		if (dup >= 0)
			close(dup);
		return true;
	}
	while (go && (e = readdir(d))) {
		struct stat st;
		int cfd;

		if (e->d_type != DT_DIR || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		cfd = cg_open(dirfd(d), e->d_name);
		if (cfd < 0)
			continue;
		if (fstat(cfd, &st) == 0)
			go = visit(cfd, &st, arg);
		close(cfd);
	}
	closedir(d);
	return go;
}

/* Reads the cgroup.procs of dfd by chunks: calls line(pid, arg) per pid
 * until it returns false. */
static void each_pid(int dfd, bool (*line)(long pid, void *arg), void *arg)
{
	int fd = openat(dfd, "cgroup.procs", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	char buf[4096];
	size_t have = 0;
	ssize_t n;

	if (fd < 0)
		return;
	while ((n = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
		char *p = buf, *nl;

		have += (size_t)n;
		buf[have] = '\0';
		while ((nl = strchr(p, '\n'))) {
			if (!line(strtol(p, NULL, 10), arg)) {
				close(fd);
				return;
			}
			p = nl + 1;
		}
		have -= (size_t)(p - buf);
		memmove(buf, p, have);
	}
	close(fd);
}

struct subtree {
	unsigned dirs, procs;
};

static bool count_pid(long pid, void *arg)
{
	struct subtree *s = arg;

	(void)pid;
	return ++s->procs < OWNER_PROCS;
}

static bool count_below(int cfd, const struct stat *st, void *arg);

/* Counts the processes of the subtree at dfd into s, up to the bounds;
 * false once a bound is reached. */
static bool count_subtree(int dfd, struct subtree *s)
{
	if (++s->dirs > SUBTREE_DIRS)
		return false;
	each_pid(dfd, count_pid, s);
	return s->procs < OWNER_PROCS && each_child(dfd, count_below, s);
}

static bool count_below(int cfd, const struct stat *st, void *arg)
{
	(void)st;
	return count_subtree(cfd, arg);
}

static bool sample_pid(long pid, void *arg)
{
	struct tally *t = arg;
	uid_t u[3], uid = proc_uids((pid_t)pid, u) == 0 ? u[0] : (uid_t)-1;

	if (uid != (uid_t)-1)
		tally_add(t, uid, 1);
	return ++t->sampled < OWNER_SAMPLE;
}

static bool root_part_child(int cfd, const struct stat *st, void *arg);

/* The root-owned part at dfd: its processes by real uid, its delegated
 * subtrees by their owner. */
static bool root_part(int dfd, struct tally *t)
{
	if (++t->dirs > OWNER_DIRS)
		return false;
	if (t->sampled < OWNER_SAMPLE)
		each_pid(dfd, sample_pid, t);
	return each_child(dfd, root_part_child, t);
}

static bool root_part_child(int cfd, const struct stat *st, void *arg)
{
	struct tally *t = arg;
	struct subtree s = { 0 };

	if (st->st_uid == 0)
		return root_part(cfd, t);
	if (cg_populated(cfd) <= 0)
		return true;
	if (++t->dirs > OWNER_DIRS)
		return false;
	if (!t->delegated) {
		t->delegated = 1;
		t->delegatee = st->st_uid;
	} else if (t->delegatee != st->st_uid) {
		t->delegated = 2;
	}
	tally_add(t, st->st_uid, count_subtree(cfd, &s) ? s.procs : OWNER_PROCS);
	return true;
}

/* The owner charged for an action on the cgroup at fd (see above). */
static uid_t charged_uid(int fd)
{
	struct tally t = { .len = 0 };
	struct stat st;
	unsigned best = 0;
	uid_t uid = (uid_t)-1;

	if (fstat(fd, &st) < 0)
		return (uid_t)-1;
	if (st.st_uid != 0)
		return st.st_uid;
	root_part(fd, &t);
	if (t.delegated == 1)
		return t.delegatee;
	/* most processes; a tie goes to the first non-root uid */
	for (unsigned i = 0; i < t.len; i++)
		if (t.n[i] > best || (t.n[i] == best && uid == 0)) {
			best = t.n[i];
			uid = t.uid[i];
		}
	return uid;
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

/* The storm limit for an action of c on the cgroup at fd (path): true if
 * it may be done (recorded at *slot); if not, says so once and holds c
 * until the budget it is charged to allows one again. */
static bool storm_allows(struct cg *c, int fd, const char *path, const char *text, uint64_t t,
			 uint64_t **slot)
{
	struct rule *r = c->rule;
	uint64_t until = 0;
	uid_t uid;

	*slot = NULL;
	if (!r->max_per_minute)
		return true;
	uid = charged_uid(fd);
	if (storm_ok(r, uid, t, &until, slot))
		return true;
	r->suppressed++;
	c->holdoff_until = until;
	log_msg(LOG_PRI_WARNING,
		"rule %s: %s/%s: %s; not acted on: the storm limit of %u action(s) a minute for the cgroups of uid %d is reached (charged for %s; events from this cgroup ignored for %llums)",
		r->name, D.v2, c->rel, text, r->max_per_minute, (int)uid, path, (unsigned long long)(until - t));
	return false;
}

/* An action of c is under way (not held): counted, and c's post-action
 * delay starts. */
static void acting(struct cg *c, uint64_t t)
{
	c->rule->actions++;
	c->holdoff_until = t + c->rule->delay_ms;
}

/* The ranked candidates rels (n, each of groups[i]): the victim is every
 * cgroup of the first place (an owner's, ranked as one, charged as one
 * action) that is not refused; all refused: the next. Each is held as it
 * was ranked: a cgroup removed and made again under its name while hooks
 * run is not the one ranked. */
static void act_on_ranked(struct cg *c, struct what *w, char **rels, const int *groups, int n, uint64_t t)
{
	struct rule *r = c->rule;
	int *fds = calloc((size_t)n, sizeof(*fds));
	bool charged = false, held = false;
	uint64_t *slot = NULL;

	for (int i = 0; fds && i < n; i++) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/%s", D.v2, rels[i]);
		fds[i] = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (fds[i] < 0)
			fds[i] = -errno;
	}
	for (int i = 0, acted = 0, group_charged = 0; fds && i < n; i++) {
		char path[4096];
		bool refused = true;

		snprintf(path, sizeof(path), "%s/%s", D.v2, rels[i]);
		if (holds(rels[i], D.self_rel) || holds(rels[i], D.init_rel))
			log_msg(LOG_PRI_NOTICE, "rule %s: %s holds cgkilld or PID 1: never a victim", r->name, path);
		else if (fds[i] < 0)
			log_msg(LOG_PRI_NOTICE, "rule %s: %s: %s", r->name, path, strerror(-fds[i]));
		else if (!group_charged && !storm_allows(c, fds[i], path, w->text, t, &slot)) {
			held = true;
			break;	/* its owner's budget: not on to an innocent */
		} else {
			if (!charged)
				acting(c, t);
			charged = true;
			group_charged = 1;
			act_on(c, w, fds[i], path, &refused);
		}
		acted |= !refused;
		if (i + 1 < n && groups[i + 1] == groups[i])
			continue;
		if (acted)
			break;
		if (group_charged)
			storm_refund(slot);
		group_charged = 0;
		if (i + 1 < n)
			log_msg(LOG_PRI_NOTICE, "rule %s: %s refused; the next candidate", r->name, path);
	}
	if (!charged && !held)
		acting(c, t);	/* none could be acted on: delayed all the same */
	for (int i = 0; fds && i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (!fds)
		log_msg(LOG_PRI_ERR, "rule %s: out of memory", r->name);
	free(fds);
}

void act(struct cg *c, const char *trigger, const char *json_values, const char *text)
{
	struct rule *r = c->rule;
	uint64_t t = now_ms(), *slot;
	struct what w = { .trigger = trigger, .json_values = json_values, .text = text };
	char **rels = NULL, *why = NULL, *cands = NULL;
	int *groups = NULL, n;

	r->events++;
	if (t < c->holdoff_until) {
		log_msg(LOG_PRI_DEBUG, "rule %s: %s/%s: %s; in its post-action delay, ignored", r->name,
			D.v2, c->rel, text);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &w.wall);
	w.dry = D.global_dry_run || D.cfg.dry_run || r->dry_run;

	if (r->victim == VICTIM_SELF) {
		bool refused;
		char path[4096];
		int fd;

		snprintf(path, sizeof(path), "%s/%s", D.v2, c->rel);
		fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0) {
			acting(c, t);	/* delayed all the same, as before */
			log_msg(LOG_PRI_WARNING, "rule %s: %s: %s; not acted on: %s", r->name, path, text,
				strerror(errno));
			return;
		}
		if (storm_allows(c, fd, path, text, t, &slot)) {
			acting(c, t);
			act_on(c, &w, fd, path, &refused);
		}
		close(fd);
		return;
	}
	n = victim_rank(c, &rels, &groups, &why, &cands);
	w.candidates = cands;
	if (n <= 0) {
		char path[4096];

		acting(c, t);
		snprintf(path, sizeof(path), "%s/%s", D.v2, c->rel);
		log_msg(LOG_PRI_WARNING, "rule %s: %s: %s; no victim (Victim=%s): %s", r->name, path, text,
			victim_name(r->victim), why ? why : n < 0 ? strerror(-n) : "no candidate is left");
		event(c, &w, path, n < 0 ? n : -ESRCH, "no victim", NULL, 0, 0, false);
	} else {
		log_msg(LOG_PRI_NOTICE, "rule %s: %s/%s: %s", r->name, D.v2, c->rel, why);
		act_on_ranked(c, &w, rels, groups, n, t);
	}
	victim_free(rels, n);
	free(groups);
	free(why);
	free(cands);
}
