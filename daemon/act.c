/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A trigger fired: whether to act (post-action delay, storm limit), how
 * (dry run, kill, freeze, log) and the one event that says what happened.
 * Every action goes through the library: a kill is cgk_kill() with the
 * rule's signal, escalations and wait; a freeze and a log are preceded by
 * a dry-run cgk_kill(), whose guard rails (root, self, PID 1, protected)
 * refuse the cgroup before anything is written. Nothing is exec'd.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgkilld.h"

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

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

static int freeze(const char *path, char *how, size_t size)
{
	char file[4200];
	int fd, r = 0;

	if ((size_t)snprintf(file, sizeof(file), "%s/cgroup.freeze", path) >= sizeof(file))
		return -ENAMETOOLONG;
	fd = open(file, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, "1", 1) < 0)
		r = -errno;
	close(fd);
	snprintf(how, size, "thaw with: echo 0 > %s", file);
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

void act(struct cg *c, const char *trigger, const char *json_values, const char *text)
{
	struct rule *r = c->rule;
	uint64_t t = now_ms(), until = 0;
	bool dry = D.global_dry_run || D.cfg.dry_run || r->dry_run;
	char path[4096], how[4300] = "", *doc = NULL, *line = NULL;
	size_t doclen = 0, linelen = 0;
	cgk_options *o = NULL;
	cgk_report *rep = NULL;
	struct timespec wall;
	int ret = 0;
	unsigned flags;
	FILE *f;

	(void)trigger;	/* named in json_values and text */
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
	clock_gettime(CLOCK_REALTIME, &wall);
	snprintf(path, sizeof(path), "%s/%s", D.v2, c->rel);

	flags = CGK_BOOST;
	if (dry || r->action != ACT_KILL)
		flags |= CGK_DRY_RUN;
	if (cgk_options_new(&o) < 0) {
		log_msg(LOG_PRI_ERR, "rule %s: %s: out of memory", r->name, path);
		return;
	}
	cgk_options_set_flags(o, flags);
	cgk_options_set_signal(o, r->sig);
	cgk_options_set_wait(o, r->wait_ms);
	cgk_options_set_backend(o, (enum cgk_backend)r->backend);
	for (size_t i = 0; i < r->nesc; i++)
		cgk_options_add_escalation(o, r->esc[i].after_ms, r->esc[i].sig);
	if (D.cfg.protected_file)
		cgk_options_set_protected_file(o, D.cfg.protected_file);
	cgk_options_set_progress(o, progress, NULL);
	cancel = 0;
	cgk_options_set_cancel(o, &cancel);
	ret = cgk_kill(path, o, &rep);
	cgk_options_free(o);
	if (ret == 0 && !dry && r->action == ACT_FREEZE) {
		ret = freeze(path, how, sizeof(how));
		if (ret < 0)
			snprintf(how, sizeof(how), "cannot freeze: %s", strerror(-ret));
	}

	/* the log line */
	{
		char buf[16];
		const char *sig = cgk_signal_name(r->sig, buf, sizeof(buf)) ?: "?";

		log_msg(ret < 0 ? LOG_PRI_ERR : LOG_PRI_WARNING,
			"rule %s: %s: %s; %s%s%s%s: %s%s (%u process(es) %s, %u cgroup(s), backend %s, signal %llums, empty %llums)",
			r->name, path, text, dry ? "dry run, would " : "", action_name(r->action),
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
	}

	/* the JSON event */
	if (D.event_fd < 0) {
		cgk_report_free(rep);
		return;
	}
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
		fprintf(f, "{\"time\": %lld.%06ld, \"rule\": ", (long long)wall.tv_sec, wall.tv_nsec / 1000);
		json_str(f, r->name);
		fprintf(f, ", \"trigger\": {%s}, \"cgroup\": ", json_values);
		json_str(f, path);
		fprintf(f, ", \"action\": \"%s\", \"dry_run\": %s, \"error\": %d, \"message\": ",
			action_name(r->action), dry ? "true" : "false", ret);
		json_str(f, ret < 0 ? (rep ? cgk_report_message(rep) : strerror(-ret)) : how);
		fputs(", \"report\": ", f);
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
	cgk_report_free(rep);
}
