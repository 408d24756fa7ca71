// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The cgkill command ($CGKILL, default build/cgkill): exit statuses, error
 * messages, several CGROUP arguments, the path forms, --backend, --wait,
 * --no-wait, durations (of --wait and --timeout), -q, -v, -h, -V. Every
 * kill happens in a sandbox, with sentinels in the parent and in a sibling
 * of the target.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgkill.h"
#include "support/cgfile.h"
#include "support/cmd.h"
#include "support/sandbox.h"
#include "support/scene.h"
#include "support/spawn.h"
#include "support/tap.h"

#define MAX_ARGS 16

static char *box;		/* v2 sandbox */
static char *parent, *sibling;	/* <box>/P, <box>/P/S, with sentinels */
static struct sb_sentinels sent;
static unsigned n_targets;
static struct cmd res;		/* the latest run */

/* Run cgkill with the arguments (NULL-terminated), optionally from inside a
 * cgroup, into res. Returns the exit code (-1 if it did not finish). */
static int run(struct cmd *c, const char *join, ...)
{
	const char *argv[MAX_ARGS + 1];
	unsigned n = 0;
	va_list ap;

	va_start(ap, join);
	for (const char *a; n < MAX_ARGS && (a = va_arg(ap, const char *));)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	cmd_free(c);
	if (cmd_runv(c, &(struct cmd_opts){ .join = join }, 30000, argv) < 0)
		diag("%s did not finish within 30 s", c->line);
	return c->status;
}

/* A fresh target P/Tn with n sleepers; pids[] gets them (may be NULL). */
static char *target(unsigned n, pid_t *pids)
{
	char rel[32], *t;

	snprintf(rel, sizeof(rel), "T%u", n_targets++);
	t = sb_mkdir(parent, rel);
	if (!t)
		bail_out("cannot create %s/%s: %m", parent, rel);
	if (sb_spawn_n(n, SB_SLEEP, NULL, t, pids) < 0)
		bail_out("cannot start sleepers in %s", t);
	return t;
}

/* The target is empty and its processes died of SIGKILL. */
static void check_gone(const char *t, const pid_t *pids, unsigned n, const char *what)
{
	unsigned killed = 0;

	is_int(sb_wait_empty(t, 10000), 0, "%s: the target is empty", what);
	for (unsigned i = 0; i < n; i++)
		killed += sb_killed_by(pids[i], SIGKILL, 5000);
	is_int(killed, n, "%s: its %u processes died of SIGKILL", what, n);
}

static void test_info(void)
{
	is_int(run(&res, NULL, "-h", NULL), 0, "-h: exit status 0");
	ok(strstr(res.out, "Usage") && strstr(res.out, "--backend") && strstr(res.out, "--wait"),
	   "-h: usage on stdout names --backend and --wait");
	is_str(res.err, "", "-h: nothing on stderr");
	is_int(run(&res, NULL, "--help", NULL), 0, "--help: exit status 0");
	ok(strstr(res.out, "Usage") != NULL, "--help: usage on stdout");
	is_int(run(&res, NULL, "-V", NULL), 0, "-V: exit status 0");
	ok(strstr(res.out, CGK_VERSION) != NULL, "-V: prints version %s", CGK_VERSION);
	is_int(run(&res, NULL, "--version", NULL), 0, "--version: exit status 0");
	ok(strstr(res.out, CGK_VERSION) != NULL, "--version: prints the version");
}

/* Usage errors: exit 2, a message, and nothing killed. */
static void test_usage(void)
{
	static const char *const bad[][3] = {
		{ NULL },
		{ "--bogus", "@T" },
		{ "-b", "nonsense", "@T" },
		{ "--backend=", "@T" },
		{ "--wait=abc", "@T" },
		{ "--wait=0", "@T" },
		{ "-w5x", "@T" },
		{ "-s", "NOSUCHSIG", "@T" },
	};
	pid_t pids[2];
	char *t = target(2, pids);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *a[3] = { NULL };
		char shown[128] = "";

		for (int k = 0; k < 3 && bad[i][k]; k++) {
			a[k] = strcmp(bad[i][k], "@T") == 0 ? t : bad[i][k];
			snprintf(shown + strlen(shown), sizeof(shown) - strlen(shown), "%s%s",
				 k ? " " : "", strcmp(bad[i][k], "@T") == 0 ? "CGROUP" : bad[i][k]);
		}
		is_int(run(&res, NULL, a[0], a[1], a[2], NULL), 2, "usage error '%s': exit status 2",
		       shown);
		if (!ok(strncmp(res.err, "cgkill: ", 8) == 0 || strstr(res.err, "cgkill"),
			"usage error '%s': a message on stderr", shown))
			diag("stderr: %s", res.err);
	}
	is_int(sb_count_alive(pids, 2), 2, "usage errors: nothing was killed");
	sb_destroy(t);
	free(t);
}

static void test_kill_forms(void)
{
	const char *v2 = sb_mount(SB_V2);
	pid_t pids[10];
	char *t;

	t = target(10, pids);
	is_int(run(&res, NULL, t, NULL), 0, "cgkill ABSPATH: exit status 0");
	is_str(res.out, "", "cgkill ABSPATH: nothing on stdout");
	is_str(res.err, "", "cgkill ABSPATH: nothing on stderr");
	check_gone(t, pids, 10, "cgkill ABSPATH");
	free(t);

	t = target(3, pids);
	is_int(run(&res, NULL, t + strlen(v2), NULL), 0, "cgkill /REL (as in /proc/PID/cgroup): exit 0");
	check_gone(t, pids, 3, "cgkill /REL");
	free(t);

	t = target(3, pids);
	is_int(run(&res, NULL, t + strlen(v2) + 1, NULL), 0, "cgkill REL (no leading /): exit 0");
	check_gone(t, pids, 3, "cgkill REL");
	free(t);

	/* A tree below the target. */
	t = target(2, pids);
	{
		char *sub = sb_mkdir(t, "a/b");

		if (sub && sb_spawn_n(2, SB_SLEEP, NULL, sub, pids + 2) == 0) {
			is_int(run(&res, NULL, t, NULL), 0, "cgkill on a tree: exit status 0");
			check_gone(t, pids, 4, "cgkill on a tree");
		}
		free(sub);
	}
	free(t);
}

static void test_backends(void)
{
	static const char *const forms[][2] = {
		{ "-b", "kernel" }, { "-b", "freeze" }, { "--backend=kernel", NULL },
		{ "--backend", "freeze" }, { "-b", "auto" },
	};

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		char what[64], via[32];
		const char *name = strchr(forms[i][0], '=') ? strchr(forms[i][0], '=') + 1 : forms[i][1];
		pid_t pids[5];
		char *t = target(5, pids);

		snprintf(what, sizeof(what), "cgkill -v %s%s%s", forms[i][0], forms[i][1] ? " " : "",
			 forms[i][1] ? forms[i][1] : "");
		if (forms[i][1])
			is_int(run(&res, NULL, "-v", forms[i][0], forms[i][1], t, NULL), 0,
			       "%s: exit status 0", what);
		else
			is_int(run(&res, NULL, "-v", forms[i][0], t, NULL), 0, "%s: exit status 0", what);
		/* auto picks kernel where cgroup.kill exists. */
		snprintf(via, sizeof(via), "via %s", strcmp(name, "auto") ? name : "kernel");
		if (!ok(strstr(res.err, via) && strstr(res.err, t), "%s: stderr says '%s' and names the cgroup",
			what, via))
			diag("stderr: %s", res.err);
		check_gone(t, pids, 5, what);
		free(t);
	}
}

static void test_wait(void)
{
	static const struct {
		unsigned n;
		const char *arg, *what;
	} waits[] = {
		{ 20, "--no-wait", "--no-wait" },
		{ 5, "-w5s", "-w5s" },
		{ 5, "--wait=2500ms", "--wait=2500ms" },
		{ 5, "-w", "-w (default duration)" },
	};
	pid_t pids[20];

	for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]); i++) {
		char *t = target(waits[i].n, pids);

		is_int(run(&res, NULL, waits[i].arg, t, NULL), 0, "%s: exit status 0", waits[i].what);
		check_gone(t, pids, waits[i].n, waits[i].arg);
		free(t);
	}
}

/* Durations as systemd.time(7) writes them; a bare number is refused, and
 * the message asks which unit was meant. */
static void test_durations(void)
{
	static const char *const bare[][3] = {
		{ "--timeout", "1000", "KILL" },
		{ "--wait=1000" },
		{ "-w1.5" },
		{ "-w", "1000" },
	};
	static const char *const spans[] = { "--wait=infinity", "--wait=1min 30s", "-w1s500ms" };
	pid_t pids[3];
	char *t = target(3, pids);

	for (size_t i = 0; i < sizeof(bare) / sizeof(bare[0]); i++) {
		const char *a[4] = { NULL };
		char shown[64] = "";
		unsigned n = 0;

		for (; n < 3 && bare[i][n]; n++) {
			a[n] = bare[i][n];
			snprintf(shown + strlen(shown), sizeof(shown) - strlen(shown), "%s%s",
				 n ? " " : "", a[n]);
		}
		a[n] = t;
		is_int(run(&res, NULL, a[0], a[1], a[2], a[3], NULL), 2, "'%s CGROUP': exit status 2",
		       shown);
		if (!ok(strstr(res.err, "needs a unit") && strstr(res.err, "ms?") &&
			strstr(res.err, "s?)"), "'%s CGROUP': the message asks for a unit", shown))
			diag("stderr: %s", res.err);
	}
	ok(strstr(res.err, "-w 1000: ") != NULL, "'-w 1000': the message names -w 1000");
	run(&res, NULL, "--timeout", "1000", "KILL", t, NULL);
	if (!is_str(res.err, "cgkill: --timeout 1000: a duration needs a unit (1000ms? 1000s?)\n"
		    "Try 'cgkill --help' for more information.\n", "--timeout 1000: the message"))
		diag("stderr: %s", res.err);
	is_int(sb_count_alive(pids, 3), 3, "bare numbers: nothing was killed");
	sb_destroy(t);
	free(t);

	for (size_t i = 0; i < sizeof(spans) / sizeof(spans[0]); i++) {
		t = target(3, pids);
		is_int(run(&res, NULL, spans[i], t, NULL), 0, "%s: exit status 0", spans[i]);
		check_gone(t, pids, 3, spans[i]);
		free(t);
	}
}

static void test_quiet_verbose(void)
{
	pid_t pids[5];
	char *t, *missing;

	t = target(5, pids);
	is_int(run(&res, NULL, "-q", t, NULL), 0, "-q: exit status 0");
	ok(!res.out[0] && !res.err[0], "-q: prints nothing on success");
	check_gone(t, pids, 5, "-q");
	free(t);

	missing = sb_path(parent, "missing");
	is_int(run(&res, NULL, "-q", missing, NULL), 1, "-q on a missing cgroup: exit status 1");
	ok(error_format(res.err, missing, "ENOENT"), "-q on a missing cgroup: the error is still printed");
	free(missing);

	t = target(5, pids);
	is_int(run(&res, NULL, "--verbose", t, NULL), 0, "--verbose: exit status 0");
	if (!ok(strstr(res.err, t) && strstr(res.err, "KILL"), "--verbose: says what it did to which cgroup"))
		diag("stderr: %s", res.err);
	check_gone(t, pids, 5, "--verbose");
	free(t);
}

static void test_errors(void)
{
	char *missing = sb_path(parent, "nope"), *file = sb_path(parent, "cgroup.procs");
	pid_t pids[6], inside[2];
	char *g, *gsub, *t;

	is_int(run(&res, NULL, missing, NULL), 1, "missing cgroup: exit status 1");
	if (!ok(error_format(res.err, missing, "ENOENT"),
		"missing cgroup: stderr is 'cgkill: %s: ... (ENOENT)'", missing))
		diag("stderr: %s", res.err);
	is_int(run(&res, NULL, file, NULL), 1, "regular file: exit status 1");
	if (!ok(error_format(res.err, file, "ENOTDIR"), "regular file: stderr ends with (ENOTDIR)"))
		diag("stderr: %s", res.err);

	/* Several arguments: each is attempted, the worst status wins. */
	t = target(3, pids);
	is_int(run(&res, NULL, missing, t, NULL), 1, "missing + good: exit status 1");
	ok(error_format(res.err, missing, "ENOENT"), "missing + good: the missing one is named");
	check_gone(t, pids, 3, "missing + good: the good one");
	free(t);

	t = target(3, pids);
	{
		char *t2 = target(3, pids + 3);

		is_int(run(&res, NULL, t, t2, NULL), 0, "two good cgroups: exit status 0");
		check_gone(t, pids, 3, "two good cgroups: the first");
		check_gone(t2, pids + 3, 3, "two good cgroups: the second");
		free(t2);
	}
	free(t);

	/* A guard refusal (4) outranks an error (1): run cgkill from inside G. */
	g = target(2, inside);
	gsub = sb_mkdir(g, "sub");
	t = target(3, pids);
	is_int(run(&res, gsub, missing, g, t, NULL), 4,
	       "missing + own cgroup + good: exit status 4 (the worst)");
	ok(strstr(res.err, missing) && strstr(res.err, g), "both failures are reported");
	check_gone(t, pids, 3, "missing + own cgroup + good: the good one");
	is_int(sb_count_alive(inside, 2), 2, "the refused cgroup's processes are alive");
	sb_destroy(g);
	free(g);
	free(gsub);
	free(t);
	free(missing);
	free(file);
}

/*
 * Exit status 3 needs a process that outlives SIGKILL for a while: one that
 * is also in a frozen v1 freezer cgroup does not act on SIGKILL until thawed.
 */
static void test_timeout(void)
{
	char *fbox, *f, *t, *pidstr = NULL;
	struct sb_proc p = { .what = SB_SLEEP };
	char state[32] = "";
	pid_t pid;
	uint64_t deadline;

	if (!sb_mount(SB_V1_FREEZER)) {
		skip("no v1 freezer hierarchy: no way to make a process outlive SIGKILL");
		return;
	}
	fbox = sb_create(SB_V1_FREEZER);
	f = fbox ? sb_mkdir(fbox, "frozen") : NULL;
	t = target(0, NULL);
	p.cgroups[0] = f;
	p.cgroups[1] = t;
	pid = f ? sb_spawn(&p) : -1;
	if (!ok(pid > 0, "timeout: a sleeper in a v1 freezer cgroup and in the target"))
		goto out;
	sb_write(f, "freezer.state", "FROZEN");
	deadline = sb_now_ms() + 5000;
	while (sb_read(f, "freezer.state", state, sizeof(state)) > 0 &&
	       strcmp(state, "FROZEN\n") && sb_now_ms() < deadline)
		sb_sleep_ms(5);
	if (!is_str(state, "FROZEN\n", "timeout: the v1 freezer cgroup is frozen"))
		goto out;
	is_int(run(&res, NULL, "--wait=300ms", "-b", "kernel", t, NULL), 3,
	       "--wait=300ms on a process that cannot die yet: exit status 3");
	if (asprintf(&pidstr, "%d", (int)pid) < 0)
		pidstr = NULL;
	if (!ok(pidstr && strstr(res.err, pidstr) && error_format(res.err, t, "ETIMEDOUT"),
		"timeout: stderr names the cgroup, ETIMEDOUT and the survivor %d", (int)pid))
		diag("stderr: %s", res.err);
	ok(res.ms < 5000, "timeout: returned after %llu ms", (unsigned long long)res.ms);
	is_int(run(&res, NULL, "-q", "--wait=100ms", t, NULL), 3, "-q --wait=100ms: exit status 3");
	sb_write(f, "freezer.state", "THAWED");
	check_gone(t, &pid, 1, "timeout, after the thaw");
out:
	if (f)
		sb_write(f, "freezer.state", "THAWED");
	if (fbox)
		sb_destroy(fbox);
	free(pidstr);
	free(f);
	free(fbox);
	free(t);
}

int main(void)
{
	sb_init(300);
	sb_require_root();
	no_plan();
	if (access(cmd_path(), X_OK) < 0)
		bail_out("%s is not an executable; set $CGKILL", cmd_path());
	test_info();
	if (!sb_mount(SB_V2))
		skip_all("no cgroup v2 mount");
	box = sb_create(SB_V2);
	parent = box ? sb_mkdir(box, "P") : NULL;
	sibling = box ? sb_mkdir(box, "P/S") : NULL;
	if (!parent || !sibling || sb_sentinels_start(&sent, parent, sibling) < 0)
		bail_out("cannot set up the sandbox: %m");

	test_usage();
	test_kill_forms();
	test_backends();
	test_wait();
	test_durations();
	test_quiet_verbose();
	test_errors();
	test_timeout();

	sb_sentinels_check(&sent, "cli");
	cmd_free(&res);
	ok(sb_destroy(box) == 0, "sandbox removed");
	free(box);
	free(parent);
	free(sibling);
	return done_testing();
}
