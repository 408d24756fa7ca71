/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the daemon did and holds, as numbers for a monitoring system: per
 * rule and trigger, the events, what came of each (an action done, by
 * result; or suppressed, by reason) and two latency histograms; and
 * gauges of its state (watched cgroups, actions under way, open files).
 * Rendered in the Prometheus text exposition format 0.0.4, for the
 * control interface and for MetricsFile=, which node_exporter's textfile
 * collector reads: written whole under a temporary name and renamed into
 * place, in a directory trusted as EventLog='s is, at start, every
 * MetricsInterval= and soon after each outcome (at most once a second).
 *
 * Cgroup names are never labels: a delegatee chooses them, as many as they
 * like. The labels are a rule's name (root's configuration), a trigger's
 * and our own words; each still goes through the escaping of the format.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "cgkilld.h"

/* the latency histograms' upper bounds: 1 ms to 10 s */
#define NBUCKETS 13
static const uint64_t bucket_us[NBUCKETS] = {
	1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000, 2500000, 5000000, 10000000,
};
static const char *const bucket_le[NBUCKETS] = {
	"0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10",
};

/* label values: cgkilld_suppressed_total's reasons, then
 * cgkilld_actions_total's results */
static const char *const outcome_name[OUT_N] = {
	[OUT_DELAY] = "post_action_delay",
	[OUT_BUSY] = "busy",
	[OUT_STORM] = "storm_limit",
	[OUT_GONE] = "gone",
	[OUT_NO_VICTIM] = "no_victim",
	[OUT_REFUSED] = "refused",
	[OUT_ERROR] = "error",
	[OUT_VETOED] = "vetoed",
	[OUT_DRY_RUN] = "dry_run",
	[OUT_OK] = "ok",
	[OUT_SURVIVORS] = "survivors",
	[OUT_FAILED] = "failed",
	[OUT_CANCELLED] = "cancelled",
};

struct histogram {
	uint64_t bucket[NBUCKETS];	/* observations in each bucket alone */
	uint64_t count, sum_us;
};

/* the histograms, by what they time from the wakeup */
enum { H_LATENCY, H_EMPTY, NHIST };
static const struct {
	const char *name, *help;
} hist_family[NHIST] = {
	[H_LATENCY] = { "cgkilld_action_latency_seconds",
			"From the wakeup on the notification a rule acted on to the action's first signal (or freeze, or log line)." },
	[H_EMPTY] = { "cgkilld_empty_latency_seconds",
		      "From the wakeup on the notification a rule acted on to its victims empty (kills that waited)." },
};

/* The counters of one rule and trigger. */
struct series {
	char *rule, *trigger;
	uint64_t events, outcomes[OUT_N];
	struct histogram hist[NHIST];
	double last_action;		/* unix seconds, 0 for none */
	bool kept;			/* metrics_configure(): its rule is there */
};

static struct {
	struct series **v;
	size_t n, cap;
	double start_time;
	struct src timer;	/* MetricsFile=: the next write */
	uint64_t written_ms;	/* the last write (CLOCK_BOOTTIME), 0 none */
	bool failing;		/* the last write failed: said once */
} M = { .timer = { .fd = -1 } };

static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct series *series_of(const char *rule, const char *trigger, bool create)
{
	struct series *s;

	for (size_t i = 0; i < M.n; i++)
		if (!strcmp(M.v[i]->rule, rule) && !strcmp(M.v[i]->trigger, trigger))
			return M.v[i];
	if (!create)
		return NULL;
	if (M.n == M.cap) {
		size_t cap = M.cap ? 2 * M.cap : 16;
		struct series **v = realloc(M.v, cap * sizeof(*v));

		if (!v)
			return NULL;
		M.v = v;
		M.cap = cap;
	}
	s = calloc(1, sizeof(*s));
	if (!s || !(s->rule = strdup(rule)) || !(s->trigger = strdup(trigger))) {
		if (s)
			free(s->rule);
		free(s);
		log_msg(LOG_PRI_ERR, "metrics: out of memory: rule %s, %s not counted", rule, trigger);
		return NULL;
	}
	M.v[M.n++] = s;
	return s;
}

static void series_free(struct series *s)
{
	free(s->rule);
	free(s->trigger);
	free(s);
}

static void observe(struct histogram *h, uint64_t us)
{
	size_t i = 0;

	while (i < NBUCKETS && us > bucket_us[i])
		i++;
	if (i < NBUCKETS)
		h->bucket[i]++;
	h->count++;
	h->sum_us += us;
}

/* ---- MetricsFile= ---- */

/* The text into path: under a temporary name beside it, then renamed,
 * so that a reader sees the old file or the new one whole. 0, or -errno
 * with the reason in why. */
static int write_file(const char *path, char *why, size_t size)
{
	char *text = NULL, tmp[300];
	size_t len = 0, done = 0;
	const char *base;
	FILE *f = open_memstream(&text, &len);
	int dfd, fd, ret;

	if (!f || metrics_render(f) < 0 || fclose(f) != 0) {
		ret = -errno;
		snprintf(why, size, "%s", strerror(errno));
		free(text);
		return ret;
	}
	dfd = open_trusted_parent(path, &base, why, size);
	if (dfd < 0) {
		free(text);
		return dfd;
	}
	/* not *.prom: the collector reads only those */
	snprintf(tmp, sizeof(tmp), ".%.200s.tmp", base);
	if (unlinkat(dfd, tmp, 0) < 0 && errno != ENOENT)
		fd = -1;
	else
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0644);
	while (fd >= 0 && done < len) {
		ssize_t n = write(fd, text + done, len - done);

		if (n > 0) {
			done += (size_t)n;
		} else if (n == 0 || errno != EINTR) {
			if (n == 0)
				errno = ENOSPC;
			break;
		}
	}
	/* readable by the collector, whatever the umask */
	ret = fd >= 0 && done == len && fchmod(fd, 0644) == 0 && renameat(dfd, tmp, dfd, base) == 0 ? 0 : -errno;
	if (ret < 0) {
		snprintf(why, size, "%s: %s", fd < 0 || done < len ? tmp : base, strerror(-ret));
		if (fd >= 0)
			unlinkat(dfd, tmp, 0);
	}
	if (fd >= 0)
		close(fd);
	close(dfd);
	free(text);
	return ret;
}

/* Written now; a failure said once until a write succeeds again. */
static void write_now(void)
{
	const char *path = D.cfg.metrics_file;
	char why[1024];
	int ret;

	if (!path)
		return;
	M.written_ms = now_ms();
	ret = write_file(path, why, sizeof(why));
	if (ret < 0 && !M.failing)
		log_msg(LOG_PRI_ERR, "MetricsFile %s: %s: %s (tried again every MetricsInterval=; said once)", path,
			ret == -EPERM ? "refused" : "not written", why);
	else if (ret == 0 && M.failing)
		log_msg(LOG_PRI_NOTICE, "MetricsFile %s: written again", path);
	M.failing = ret < 0;
}

static void timer_event(struct src *s)
{
	uint64_t ticks;

	if (read(s->fd, &ticks, sizeof(ticks)) > 0)
		write_now();
}

/* The next write in delay_ms (0: at once), then every MetricsInterval=. */
static void schedule(uint64_t delay_ms)
{
	uint64_t every = D.cfg.metrics_interval_ms;
	struct itimerspec its = {
		.it_value = { .tv_sec = (time_t)(delay_ms / 1000), .tv_nsec = (long)(delay_ms % 1000) * 1000000 },
		.it_interval = { .tv_sec = (time_t)(every / 1000), .tv_nsec = (long)(every % 1000) * 1000000 },
	};

	if (!delay_ms)
		its.it_value.tv_nsec = 1;	/* 0 would disarm it */
	if (M.timer.fd >= 0 && timerfd_settime(M.timer.fd, 0, &its, NULL) < 0)
		log_msg(LOG_PRI_ERR, "MetricsFile timer: %s", strerror(errno));
}

static void timer_setup(void)
{
	if (!D.cfg.metrics_file) {
		src_close(&M.timer);
		return;
	}
	if (M.timer.fd < 0) {
		M.timer = (struct src){ .event = timer_event,
					.fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK) };
		if (M.timer.fd < 0 || epoll_add(&M.timer, EPOLLIN) < 0) {
			log_msg(LOG_PRI_ERR, "MetricsFile %s: no timer: %s (not written)", D.cfg.metrics_file,
				strerror(errno));
			src_close(&M.timer);
			return;
		}
	}
	M.failing = false;	/* a new configuration: said again */
	schedule(0);
}

/* ---- what the rest of the daemon tells ---- */

void metrics_configure(void)
{
	size_t kept = 0;

	if (!M.start_time)
		M.start_time = wall_now();
	/* the rules' series from the start, at 0; those of rules gone, dropped */
	for (size_t i = 0; i < M.n; i++)
		M.v[i]->kept = false;
	for (size_t i = 0; i < D.cfg.nrules; i++) {
		const struct rule *r = &D.cfg.rules[i];

		for (unsigned bit = 1; bit && bit <= r->triggers; bit <<= 1)
			if (r->triggers & bit)
				series_of(r->name, trigger_name(bit), true);
		for (size_t j = 0; j < M.n; j++)
			M.v[j]->kept |= !strcmp(M.v[j]->rule, r->name);
	}
	for (size_t i = 0; i < M.n; i++) {
		if (M.v[i]->kept)
			M.v[kept++] = M.v[i];
		else
			series_free(M.v[i]);
	}
	M.n = kept;
	timer_setup();
}

void metrics_stop(void)
{
	if (M.timer.fd >= 0)
		write_now();
	src_close(&M.timer);
	for (size_t i = 0; i < M.n; i++)
		series_free(M.v[i]);
	free(M.v);
	M.v = NULL;
	M.n = M.cap = 0;
}

void metrics_event(const char *rule, const char *trigger)
{
	struct series *s = series_of(rule, trigger, true);

	if (s)
		s->events++;
}

void metrics_outcome(const char *rule, const char *trigger, enum outcome o, const struct action_times *t)
{
	struct series *s = series_of(rule, trigger, true);
	uint64_t now = now_us();

	if (!s || o >= OUT_N)
		return;
	s->outcomes[o]++;
	if (t && t->woke && t->started >= t->woke) {
		observe(&s->hist[H_LATENCY], t->started - t->woke);
		s->last_action = wall_now() - (double)(now - t->started) / 1e6;
	}
	if (t && o == OUT_OK && t->woke && t->emptied >= t->woke)
		observe(&s->hist[H_EMPTY], t->emptied - t->woke);
	if (M.timer.fd >= 0) {
		uint64_t next = M.written_ms + 1000, ms = now_ms();

		schedule(next > ms ? next - ms : 0);
	}
}

/* ---- the text ---- */

/* A label value, quoted: the format's escapes, and '?' for any other
 * control or non-ASCII byte (the names of rules are ASCII). */
static void label(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '\\')
			fputs("\\\\", f);
		else if (*p == '"')
			fputs("\\\"", f);
		else if (*p == '\n')
			fputs("\\n", f);
		else
			fputc(*p < 0x20 || *p >= 0x7f ? '?' : *p, f);
	}
	fputc('"', f);
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{rule="...",trigger="..."[,key="value"]}, and a space */
static void sample(FILE *f, const char *name, const struct series *s, const char *key, const char *value)
{
	fprintf(f, "%s{rule=", name);
	label(f, s->rule);
	fputs(",trigger=", f);
	label(f, s->trigger);
	if (key) {
		fprintf(f, ",%s=", key);
		label(f, value);
	}
	fputs("} ", f);
}

static void counters(FILE *f)
{
	family(f, "cgkilld_events_total", "counter", "Times a rule's trigger fired.");
	for (size_t i = 0; i < M.n; i++) {
		sample(f, "cgkilld_events_total", M.v[i], NULL, NULL);
		fprintf(f, "%llu\n", (unsigned long long)M.v[i]->events);
	}
	family(f, "cgkilld_actions_total", "counter", "Actions done after an event, by result.");
	for (size_t i = 0; i < M.n; i++)
		for (int o = OUT_ACTED; o < OUT_N; o++) {
			sample(f, "cgkilld_actions_total", M.v[i], "result", outcome_name[o]);
			fprintf(f, "%llu\n", (unsigned long long)M.v[i]->outcomes[o]);
		}
	family(f, "cgkilld_suppressed_total", "counter", "Events not acted on, by reason.");
	for (size_t i = 0; i < M.n; i++)
		for (int o = 0; o < OUT_ACTED; o++) {
			sample(f, "cgkilld_suppressed_total", M.v[i], "reason", outcome_name[o]);
			fprintf(f, "%llu\n", (unsigned long long)M.v[i]->outcomes[o]);
		}
}

static void histogram(FILE *f, int which)
{
	const char *name = hist_family[which].name;
	char n[64];

	family(f, name, "histogram", hist_family[which].help);
	for (size_t i = 0; i < M.n; i++) {
		const struct histogram *h = &M.v[i]->hist[which];
		uint64_t below = 0;

		snprintf(n, sizeof(n), "%s_bucket", name);
		for (size_t b = 0; b < NBUCKETS; b++) {
			below += h->bucket[b];
			sample(f, n, M.v[i], "le", bucket_le[b]);
			fprintf(f, "%llu\n", (unsigned long long)below);
		}
		sample(f, n, M.v[i], "le", "+Inf");
		fprintf(f, "%llu\n", (unsigned long long)h->count);
		snprintf(n, sizeof(n), "%s_sum", name);
		sample(f, n, M.v[i], NULL, NULL);
		fprintf(f, "%llu.%06llu\n", (unsigned long long)(h->sum_us / 1000000),
			(unsigned long long)(h->sum_us % 1000000));
		snprintf(n, sizeof(n), "%s_count", name);
		sample(f, n, M.v[i], NULL, NULL);
		fprintf(f, "%llu\n", (unsigned long long)h->count);
	}
}

/* One line per rule: its last action, over its triggers. */
static void last_actions(FILE *f)
{
	family(f, "cgkilld_last_action_timestamp_seconds", "gauge",
	       "When a rule's last action began, in seconds since the epoch (0: none yet).");
	for (size_t i = 0; i < M.n; i++) {
		double last = 0;
		size_t j;

		for (j = 0; j < i && strcmp(M.v[j]->rule, M.v[i]->rule); j++)
			;
		if (j < i)
			continue;	/* the rule's line is written already */
		for (j = i; j < M.n; j++)
			if (!strcmp(M.v[j]->rule, M.v[i]->rule) && M.v[j]->last_action > last)
				last = M.v[j]->last_action;
		fputs("cgkilld_last_action_timestamp_seconds{rule=", f);
		label(f, M.v[i]->rule);
		fprintf(f, "} %.3f\n", last);
	}
}

/* Open file descriptors (/proc/self/fd), -1 if unknown. */
static long open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	long n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n - 3;	/* ".", ".." and the directory's own */
}

static void gauge(FILE *f, const char *name, const char *help, double v)
{
	family(f, name, "gauge", help);
	fprintf(f, "%s %.15g\n", name, v);
}

static void gauges(FILE *f)
{
	static const char *const state[] = { "armed", "waiting", "empty" };
	size_t armed = 0, polled = 0, n[3];
	struct rlimit rl;
	long fds = open_fds();

	for (const struct cg *c = D.cgs; c; c = c->next) {
		armed++;
		polled += cg_polled(c);
	}
	n[0] = armed;
	n[1] = D.nwaiting;
	n[2] = D.ncgs >= armed + D.nwaiting ? D.ncgs - armed - D.nwaiting : 0;
	gauge(f, "cgkilld_rules", "Rules in force.", (double)D.cfg.nrules);
	family(f, "cgkilld_watched_cgroups", "gauge",
	       "Watched cgroups: armed (their triggers' files open), waiting (populated, not armed: short of files), empty.");
	for (size_t i = 0; i < 3; i++)
		fprintf(f, "cgkilld_watched_cgroups{state=\"%s\"} %zu\n", state[i], n[i]);
	gauge(f, "cgkilld_polled_cgroups", "Armed cgroups whose pids counters are read every PollInterval= (no notification).",
	      (double)polled);
	gauge(f, "cgkilld_actions_in_flight", "Actions under way.", D.nrunning);
	gauge(f, "cgkilld_actions_queued", "Actions waiting for one under way to end (MaxActions=).", D.nqueued);
	if (fds >= 0)
		gauge(f, "cgkilld_open_fds", "Open file descriptors.", (double)fds);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		gauge(f, "cgkilld_max_fds", "The open file limit (RLIMIT_NOFILE).", (double)rl.rlim_cur);
	gauge(f, "cgkilld_dry_run", "1 if every rule only logs what it would do (--dry-run, DryRun=).",
	      D.global_dry_run || D.cfg.dry_run);
	family(f, "cgkilld_start_time_seconds", "gauge", "When the daemon started, in seconds since the epoch.");
	fprintf(f, "cgkilld_start_time_seconds %.3f\n", M.start_time);
	family(f, "cgkilld_build_info", "gauge", "The daemon's version and its library's, as labels.");
	fputs("cgkilld_build_info{version=", f);
	label(f, CGK_VERSION);
	fputs(",library=", f);
	label(f, cgk_version());
	fputs("} 1\n", f);
}

int metrics_render(FILE *out)
{
	counters(out);
	for (int h = 0; h < NHIST; h++)
		histogram(out, h);
	last_actions(out);
	gauges(out);
	return ferror(out) ? -EIO : 0;
}
