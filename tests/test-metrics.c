// SPDX-License-Identifier: LGPL-2.1-or-later
/* cgkilld's metrics (daemon/metrics.c) without a loop or a cgroup: what
 * act.c tells it, rendered as Prometheus text and compared line by line;
 * label values escaped (a name with quotes, backslashes and a newline);
 * the histograms' buckets; the series of a reload; MetricsFile= written
 * whole and refused in a directory others may write. Linked with the
 * daemon's objects, as test-victim-fixture is. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../daemon/cgkilld.h"
#include "support/tap.h"

static char *render(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f || metrics_render(f) < 0 || fclose(f) != 0)
		bail_out("metrics_render: %s", strerror(errno));
	return text;
}

/* The value of the sample line that starts with "series " in text, or
 * NULL: the rest of that line. */
static const char *value_of(const char *text, const char *series)
{
	static char v[64];
	size_t n = strlen(series);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, series, n) && p[n] == ' ') {
			snprintf(v, sizeof(v), "%.*s", (int)strcspn(p + n + 1, "\n"), p + n + 1);
			return v;
		}
	return NULL;
}

static void has(const char *text, const char *series, const char *want)
{
	const char *v = value_of(text, series);

	if (!is_str(v ? v : "(none)", want, "%s is %s", series, want))
		diag("text:\n%s", text);
}

static void configure(const char *conf)
{
	conf_free(&D.cfg);
	conf_parse_text(&D.cfg, "test.conf", conf, strlen(conf), NULL, NULL);
	conf_finish(&D.cfg, NULL, NULL);
	if (D.cfg.errors)
		bail_out("the test's configuration has %u error(s)", D.cfg.errors);
	metrics_configure();
}

static const char conf_ab[] = "[Rule]\nName=a\nMatch=x/*\nTrigger=pids-max oom-kill\n"
			      "[Rule]\nName=b\nMatch=y\nTrigger=memory-pressure\n";

static void test_series(void)
{
	char *t;

	configure(conf_ab);
	t = render();
	has(t, "cgkilld_events_total{rule=\"a\",trigger=\"pids-max\"}", "0");
	has(t, "cgkilld_events_total{rule=\"a\",trigger=\"oom-kill\"}", "0");
	has(t, "cgkilld_events_total{rule=\"b\",trigger=\"memory-pressure\"}", "0");
	ok(!strstr(t, "rule=\"b\",trigger=\"pids-max\""), "no series for a trigger the rule does not have");
	has(t, "cgkilld_actions_total{rule=\"a\",trigger=\"pids-max\",result=\"ok\"}", "0");
	has(t, "cgkilld_suppressed_total{rule=\"b\",trigger=\"memory-pressure\",reason=\"dry_run\"}", "0");
	has(t, "cgkilld_last_action_timestamp_seconds{rule=\"a\"}", "0.000");
	free(t);

	metrics_event("a", "pids-max");
	metrics_event("a", "pids-max");
	metrics_event("a", "pids-max");
	metrics_outcome("a", "pids-max", OUT_DELAY, NULL);
	metrics_outcome("a", "pids-max", OUT_STORM, NULL);
	metrics_outcome("a", "pids-max", OUT_SURVIVORS,
			&(struct action_times){ .woke = now_us() - 5000, .started = now_us() - 2000 });
	t = render();
	has(t, "cgkilld_events_total{rule=\"a\",trigger=\"pids-max\"}", "3");
	has(t, "cgkilld_events_total{rule=\"a\",trigger=\"oom-kill\"}", "0");
	has(t, "cgkilld_suppressed_total{rule=\"a\",trigger=\"pids-max\",reason=\"post_action_delay\"}", "1");
	has(t, "cgkilld_suppressed_total{rule=\"a\",trigger=\"pids-max\",reason=\"storm_limit\"}", "1");
	has(t, "cgkilld_actions_total{rule=\"a\",trigger=\"pids-max\",result=\"survivors\"}", "1");
	has(t, "cgkilld_actions_total{rule=\"a\",trigger=\"pids-max\",result=\"ok\"}", "0");
	ok(!strstr(t, "reason=\"ok\"") && !strstr(t, "result=\"storm_limit\""),
	   "results are actions' labels, reasons suppressions'");
	{
		const char *v = value_of(t, "cgkilld_last_action_timestamp_seconds{rule=\"a\"}");
		double last = v ? strtod(v, NULL) : 0;

		ok(last > (double)time(NULL) - 60 && last <= (double)time(NULL) + 1,
		   "the rule's last action is now (%s)", v ? v : "none");
	}
	free(t);
}

static void test_histogram(void)
{
	char *t;

	configure(conf_ab);
	/* 3 ms to the first signal, 20 ms to empty; 2 s and 30 s to the signal */
	metrics_outcome("b", "memory-pressure", OUT_OK,
			&(struct action_times){ .woke = 1000, .started = 4000, .emptied = 21000 });
	metrics_outcome("b", "memory-pressure", OUT_OK, &(struct action_times){ .woke = 1000, .started = 2001000 });
	metrics_outcome("b", "memory-pressure", OUT_FAILED,
			&(struct action_times){ .woke = 1000, .started = 30001000, .emptied = 30002000 });
	t = render();
#define LAT "cgkilld_action_latency_seconds"
#define EMP "cgkilld_empty_latency_seconds"
#define B "{rule=\"b\",trigger=\"memory-pressure\""
	has(t, LAT "_bucket" B ",le=\"0.0025\"}", "0");
	has(t, LAT "_bucket" B ",le=\"0.005\"}", "1");
	has(t, LAT "_bucket" B ",le=\"1\"}", "1");
	has(t, LAT "_bucket" B ",le=\"2.5\"}", "2");
	has(t, LAT "_bucket" B ",le=\"10\"}", "2");
	has(t, LAT "_bucket" B ",le=\"+Inf\"}", "3");
	has(t, LAT "_count" B "}", "3");
	has(t, LAT "_sum" B "}", "32.003000");
	/* only an action whose result is ok and that saw the cgroup empty */
	has(t, EMP "_bucket" B ",le=\"0.01\"}", "0");
	has(t, EMP "_bucket" B ",le=\"0.025\"}", "1");
	has(t, EMP "_bucket" B ",le=\"+Inf\"}", "1");
	has(t, EMP "_count" B "}", "1");
	has(t, EMP "_sum" B "}", "0.020000");
	has(t, LAT "_count{rule=\"a\",trigger=\"oom-kill\"}", "0");
	free(t);
}

/* A name no rule can have (the parser takes letters, digits and
 * _-.@:), given straight to the counters: escaped all the same. */
static void test_escapes(void)
{
	const char *name = "we\"ird\\na\nme\x1b";
	char *t;

	configure(conf_ab);
	metrics_event(name, "pids-max");
	t = render();
	has(t, "cgkilld_events_total{rule=\"we\\\"ird\\\\na\\nme?\",trigger=\"pids-max\"}", "1");
	ok(!strchr(t, '\x1b'), "a control character is not written");
	{
		bool whole = true;

		/* every line is a comment or a sample of ours */
		for (char *line = t; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
			whole &= *line == '#' || !strncmp(line, "cgkilld_", 8);
		ok(whole, "no label value breaks its line");
	}
	free(t);
	/* a reload drops the series of rules that are gone */
	configure(conf_ab);
	t = render();
	ok(!strstr(t, "we\\\"ird"), "a reload drops the series of a rule that is gone");
	has(t, "cgkilld_events_total{rule=\"a\",trigger=\"pids-max\"}", "3");
	free(t);
	/* and keeps those of the rules that stay */
	metrics_event("a", "pids-max");
	configure("[Rule]\nName=a\nMatch=x/*\nTrigger=pids-max\n");
	t = render();
	has(t, "cgkilld_events_total{rule=\"a\",trigger=\"pids-max\"}", "4");
	ok(!strstr(t, "rule=\"b\""), "rule b's series are gone with it");
	free(t);
}

static void test_gauges(void)
{
	char *t;

	configure(conf_ab);
	D.ncgs = 5;
	D.nwaiting = 1;
	D.nrunning = 2;
	D.nqueued = 7;
	t = render();
	has(t, "cgkilld_rules", "2");
	has(t, "cgkilld_watched_cgroups{state=\"armed\"}", "0");
	has(t, "cgkilld_watched_cgroups{state=\"waiting\"}", "1");
	has(t, "cgkilld_watched_cgroups{state=\"empty\"}", "4");
	has(t, "cgkilld_actions_in_flight", "2");
	has(t, "cgkilld_actions_queued", "7");
	has(t, "cgkilld_build_info{version=\"" CGK_VERSION "\",library=\"" CGK_VERSION "\"}", "1");
	{
		const char *v = value_of(t, "cgkilld_open_fds");

		ok(v && atoi(v) >= 3, "cgkilld_open_fds counts this program's files (%s)", v ? v : "none");
	}
	ok(strstr(t, "# TYPE cgkilld_events_total counter\n") && strstr(t, "# TYPE cgkilld_rules gauge\n") &&
	   strstr(t, "# TYPE cgkilld_action_latency_seconds histogram\n"),
	   "each family has its TYPE line");
	D.ncgs = D.nwaiting = 0;
	D.nrunning = D.nqueued = 0;
	free(t);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *text = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	if (getdelim(&text, &len, '\0', f) < 0) {
		free(text);
		text = NULL;
	}
	fclose(f);
	return text;
}

/* MetricsFile=: written whole at the stop (metrics_stop()), the
 * temporary name gone; nothing written where others may write. */
static void test_file(void)
{
	char dir[] = "/tmp/cgkill-test-metrics.XXXXXX", conf[1024], path[64], tmp[64], *got, *want;
	struct stat st;

	if (!mkdtemp(dir))
		bail_out("mkdtemp: %s", strerror(errno));
	D.epfd = epoll_create1(EPOLL_CLOEXEC);
	snprintf(path, sizeof(path), "%s/cgkilld.prom", dir);
	snprintf(tmp, sizeof(tmp), "%s/.cgkilld.prom.tmp", dir);
	snprintf(conf, sizeof(conf), "[Daemon]\nMetricsFile=%s\n%s", path, conf_ab);
	configure(conf);
	metrics_event("a", "oom-kill");
	want = render();
	metrics_stop();
	got = slurp(path);
	ok(got && !strcmp(got, want), "the file holds the text, written at the stop");
	if (stat(path, &st) < 0)
		st.st_mode = 0;
	ok((st.st_mode & 0777) == 0644, "mode 0644, for the collector (%o)", (unsigned)(st.st_mode & 0777));
	ok(access(tmp, F_OK) < 0 && errno == ENOENT, "no temporary file is left");
	free(got);
	free(want);

	/* in a directory others may write: refused, the file left as it was */
	if (chmod(dir, 0777) < 0)
		bail_out("chmod: %s", strerror(errno));
	configure(conf);
	metrics_event("a", "oom-kill");
	metrics_event("a", "oom-kill");
	metrics_stop();
	got = slurp(path);
	ok(got && strstr(got, "cgkilld_events_total{rule=\"a\",trigger=\"oom-kill\"} 1\n"),
	   "in a directory writable by others, the file is not written");
	free(got);
	unlink(path);
	rmdir(dir);
	close(D.epfd);
	D.epfd = -1;
	conf_free(&D.cfg);
	conf_init(&D.cfg);
	metrics_configure();
}

int main(void)
{
	no_plan();
	conf_init(&D.cfg);
	test_series();
	test_histogram();
	test_escapes();
	test_gauges();
	test_file();
	metrics_stop();
	conf_free(&D.cfg);
	return done_testing();
}
