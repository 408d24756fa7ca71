// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Targets that must be refused, through the library and through the command:
 * a threaded cgroup, the root of each hierarchy, a cgroup holding the caller,
 * a missing path, a regular file, a directory that only looks like a cgroup,
 * a symlink to a cgroup, invalid options. Nothing may be signalled: sleepers
 * next to (and inside) each target must be alive afterwards.
 *
 * The root tests are dangerous if the guard is broken (every process of the
 * machine lives in the root cgroups), so each is gated: the real call only
 * happens after cgk_target_open() says is_root and a dry run was refused, and
 * the first real calls use a backend that cannot work on a root anyway.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgkill.h"
#include "internal.h"
#include "sandbox.h"
#include "tap.h"

static char *box2;		/* v2 sandbox */
static char *tmpdir;		/* scratch directory on tmpfs */

static bool names(const char *message, const char *path)
{
	return message && path && strstr(message, path) != NULL;
}

/* All alive? One test point. */
static bool all_alive(const pid_t *pids, unsigned n, const char *fmt, const char *what)
{
	unsigned alive = 0;

	for (unsigned i = 0; i < n; i++)
		alive += sb_alive(pids[i]);
	return is_int(alive, n, fmt, what);
}

/* The command on one target; the result in *res. */
static int cli(struct sb_cmd *res, const char *join, const char *a1, const char *a2,
	       const char *a3, const char *a4)
{
	const char *argv[] = { sb_cgkill(), a1, a2, a3, a4, NULL };
	int r = sb_run(res, join, 30000, argv);

	if (r < 0)
		diag("cannot run %s: %s", sb_cgkill(), strerror(-r));
	return r;
}

/* "cgkill: CGROUP: what failed (ERRNO)" on stderr, exit status want. */
static void cli_error(const char *join, const char *arg, const char *errname, int want,
		      const char *what)
{
	struct sb_cmd res;
	char expect[128];

	if (cli(&res, join, arg, NULL, NULL, NULL) < 0) {
		ok(false, "cgkill %s: runs", what);
		return;
	}
	is_int(res.exit_code, want, "cgkill %s: exit status %d", what, want);
	snprintf(expect, sizeof(expect), "(%s)", errname);
	if (!ok(strncmp(res.err, "cgkill: ", 8) == 0 && strstr(res.err, expect) &&
		strstr(res.err, arg), "cgkill %s: stderr says 'cgkill: %s: ... %s'", what, arg, expect))
		diag("stderr: %s", res.err);
}

/* ---- threaded ---- */

static pid_t first_other_tid(pid_t pid)
{
	char dir[64];
	DIR *d;
	struct dirent *e;
	pid_t tid = 0;

	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	d = opendir(dir);
	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (atoi(e->d_name) > 0 && atoi(e->d_name) != pid) {
			tid = atoi(e->d_name);
			break;
		}
	closedir(d);
	return tid;
}

/* name, name/S (a sibling for a sentinel), name/X (the threaded domain) and
 * name/X/T (left for the caller to make threaded). */
struct threaded_tree {
	char *p, *s, *x, *t;
};

static bool threaded_tree_make(const char *name, struct threaded_tree *tt)
{
	char sub[64];

	tt->p = sb_mkdir(box2, name);
	snprintf(sub, sizeof(sub), "%s/S", name);
	tt->s = sb_mkdir(box2, sub);
	snprintf(sub, sizeof(sub), "%s/X", name);
	tt->x = sb_mkdir(box2, sub);
	snprintf(sub, sizeof(sub), "%s/X/T", name);
	tt->t = sb_mkdir(box2, sub);
	return tt->p && tt->s && tt->x && tt->t;
}

static void threaded_tree_drop(struct threaded_tree *tt)
{
	if (tt->p)
		sb_destroy(tt->p);
	free(tt->p);
	free(tt->s);
	free(tt->x);
	free(tt->t);
}

static void test_threaded(void)
{
	static const enum cgk_backend backends[] = {
		CGK_BACKEND_AUTO, CGK_BACKEND_KERNEL, CGK_BACKEND_FREEZE,
	};
	struct threaded_tree tt;
	bool made = threaded_tree_make("threaded", &tt);
	char *p = tt.p, *s = tt.s, *x = tt.x, *t = tt.t;
	struct sb_proc mt = { .what = SB_THREADS, .cgroups = { x }, .threads = 4 };
	struct sb_sentinels sent;
	char buf[64], tids[32];
	pid_t pid, tid;
	int r;

	if (!ok(made, "threaded: create the cgroups"))
		goto out;
	r = sb_write(t, "cgroup.type", "threaded");
	if (!is_int(r, 0, "threaded: make %s threaded", t))
		goto out;
	sb_read(t, "cgroup.type", buf, sizeof(buf));
	is_str(buf, "threaded\n", "threaded: cgroup.type reads threaded");
	sb_sentinels_start(&sent, p, s);
	pid = sb_spawn(&mt);
	if (!ok(pid > 0, "threaded: a process with 4 threads in the threaded domain"))
		goto out;
	sb_sleep_ms(20);	/* let the threads start */
	tid = first_other_tid(pid);
	snprintf(tids, sizeof(tids), "%d", (int)tid);
	ok(tid > 0 && sb_write(t, "cgroup.threads", tids) == 0,
	   "threaded: thread %d moved into the threaded cgroup", (int)tid);

	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++) {
		struct cgk_options o = CGK_OPTIONS_INIT;
		struct cgk_report rep;
		const char *bn = cgk_backend_name(backends[i]);

		o.backend = backends[i];
		r = cgk_kill(t, &o, &rep);
		is_int(r, -EOPNOTSUPP, "threaded (%s): cgk_kill returns -EOPNOTSUPP", bn);
		if (!ok(strstr(rep.message, "threaded") && names(rep.message, t),
			"threaded (%s): the message names the cgroup and says threaded", bn))
			diag("message: %s", rep.message);
		is_int(rep.signalled, 0, "threaded (%s): nothing signalled", bn);
		ok(sb_alive(pid), "threaded (%s): the threaded process is alive", bn);
		cgk_report_free(&rep);
	}
	cli_error(NULL, t, "EOPNOTSUPP", 1, "on a threaded cgroup");
	ok(sb_alive(pid), "threaded (cgkill): the threaded process is alive");
	sb_sentinels_check(&sent, "threaded");
out:
	threaded_tree_drop(&tt);
}

/*
 * The domain of a threaded subtree lists in cgroup.procs the processes of
 * the whole subtree, also one whose leader sits in a threaded child (whose
 * own list cannot be read). Killing the domain must reach it, although its
 * leader's cgroup is not the domain: the membership check by cgroup id
 * (PIDFD_GET_INFO) must fall back to the list.
 */
static void test_threaded_domain(void)
{
	static const enum cgk_backend backends[] = { CGK_BACKEND_FREEZE, CGK_BACKEND_LOOP };

	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++) {
		const char *bn = cgk_backend_name(backends[i]);
		struct threaded_tree tt;
		bool made = threaded_tree_make("tdomain", &tt);
		struct sb_proc mt = { .what = SB_THREADS, .cgroups = { tt.x }, .threads = 4 };
		struct cgk_options o = CGK_OPTIONS_INIT;
		struct cgk_report rep = { 0 };
		struct sb_sentinels sent;
		char leader[32];
		pid_t pid;
		int r;

		if (!ok(made && sb_write(tt.t, "cgroup.type", "threaded") == 0,
			"threaded domain (%s): a domain with a threaded child", bn))
			goto next;
		sb_sentinels_start(&sent, tt.p, tt.s);
		pid = sb_spawn(&mt);
		if (!ok(pid > 0, "threaded domain (%s): a process with 4 threads", bn))
			goto next;
		snprintf(leader, sizeof(leader), "%d", (int)pid);
		if (!is_int(sb_write(tt.t, "cgroup.threads", leader), 0,
			    "threaded domain (%s): its leader moved into the threaded child", bn))
			goto next;
		o.backend = backends[i];
		r = cgk_kill(tt.x, &o, &rep);
		is_int(r, 0, "threaded domain (%s): cgk_kill returns 0 (%s)", bn,
		       rep.message);
		ok(rep.emptied && rep.signalled == 1,
		   "threaded domain (%s): emptied, 1 process signalled (%u)", bn, rep.signalled);
		ok(sb_killed_by(pid, SIGKILL, 5000), "threaded domain (%s): the process died of SIGKILL",
		   bn);
		sb_sentinels_check(&sent, "threaded domain");
next:
		cgk_report_free(&rep);
		threaded_tree_drop(&tt);
	}
}

/* ---- root cgroups ---- */

/* Is path the root of its hierarchy according to the library? Also
 * checks that a sandbox next to it is not. */
static bool gate_is_root(const char *path, const char *sandbox)
{
	struct cgk_target tgt;
	char msg[512];
	bool root = false, not_root = false;
	int r = cgk_target_open(path, &tgt, msg, sizeof(msg));

	if (r == 0) {
		root = tgt.is_root;
		cgk_target_close(&tgt);
	}
	ok(r == 0 && root, "root %s: cgk_target_open says is_root", path);
	r = cgk_target_open(sandbox, &tgt, msg, sizeof(msg));
	if (r == 0) {
		not_root = !tgt.is_root;
		cgk_target_close(&tgt);
	}
	ok(r == 0 && not_root, "root: the sandbox %s is not a root", sandbox);
	return root && not_root;
}

static bool root_call(const char *path, const char *resolved, enum cgk_backend b, int sig,
		      unsigned flags, const char *what)
{
	struct cgk_options o = CGK_OPTIONS_INIT;
	struct cgk_report rep;
	bool good = true;
	int r;

	o.backend = b;
	o.signal = sig;
	o.flags = flags;
	r = cgk_kill(path, &o, &rep);
	good &= ok(r < 0, "root %s (%s): cgk_kill fails (%d)", path, what, r);
	good &= is_int(rep.refused, CGK_GUARD_ROOT, "root %s (%s): refused by the root guard",
		       path, what);
	good &= is_int(rep.signalled, 0, "root %s (%s): nothing signalled", path, what);
	good &= is_int(rep.listed.n, 0, "root %s (%s): nothing listed", path, what);
	if (!ok(names(rep.message, path) || names(rep.message, resolved),
		"root %s (%s): the message names it", path, what))
		diag("message: %s", rep.message);
	cgk_report_free(&rep);
	return good;
}

static void test_root(enum sb_hier h, const char *sandbox, enum cgk_backend harmless)
{
	const char *m = sb_mount(h);
	struct sb_cmd res;
	char *dotdot;

	if (!m || !sandbox)
		return;
	/* Step by step; stop at the first doubt. */
	if (!gate_is_root(m, sandbox)) {
		diag("the library does not see %s as a root: not calling cgk_kill on it", m);
		return;
	}
	if (!root_call(m, m, harmless, SIGKILL, CGK_DRY_RUN, "dry run"))
		return;
	/* A backend that has nothing to write at a root, then a harmless signal. */
	if (!root_call(m, m, harmless, SIGKILL, 0, cgk_backend_name(harmless)))
		return;
	if (!root_call(m, m, CGK_BACKEND_AUTO, SIGCONT, 0, "auto, SIGCONT"))
		return;
	if (cli(&res, NULL, "-b", cgk_backend_name(harmless), m, NULL) == 0) {
		is_int(res.exit_code, 4, "cgkill -b %s %s: exit status 4", cgk_backend_name(harmless), m);
		if (!ok(strstr(res.err, m) != NULL, "cgkill on %s: stderr names it", m))
			diag("stderr: %s", res.err);
		if (res.exit_code != 4)
			return;
	}
	/* A different spelling of the same root. */
	if (asprintf(&dotdot, "%s/..", sandbox) > 0) {
		if (gate_is_root(dotdot, sandbox))
			root_call(dotdot, m, harmless, SIGKILL, 0, "spelled sandbox/..");
		free(dotdot);
	}
	if (h != SB_V2)
		return;
	/* The real thing, on v2 only, now that the guard proved itself. */
	if (!root_call(m, m, CGK_BACKEND_AUTO, SIGKILL, 0, "auto, SIGKILL"))
		return;
	root_call("/", m, CGK_BACKEND_AUTO, SIGKILL, 0, "v2-relative /");
	if (cli(&res, NULL, m, NULL, NULL, NULL) == 0)
		is_int(res.exit_code, 4, "cgkill %s: exit status 4", m);
}

/* ---- the caller's own cgroup ---- */

struct self_result {
	int r;
	enum cgk_guard refused;
	unsigned signalled;
	char message[sizeof(((struct cgk_report *)0)->message)];
};

/* A child moves itself into target/sub and asks to kill target, then sub. */
static void test_self(enum sb_hier h, const char *box)
{
	char *p, *t, *sub, *s, name[64];
	struct self_result res[2];
	struct sb_sentinels sent;
	pid_t sleepers[3], child;
	int fds[2], st;
	struct sb_cmd cmd;

	if (!box)
		return;
	snprintf(name, sizeof(name), "self (%s)", sb_hier_name(h));
	p = sb_mkdir(box, "self");
	t = sb_mkdir(box, "self/T");
	sub = sb_mkdir(box, "self/T/sub");
	s = sb_mkdir(box, "self/S");
	if (!ok(p && t && sub && s, "%s: create the cgroups", name))
		goto out;
	sb_sentinels_start(&sent, p, s);
	sb_spawn_n(2, SB_SLEEP, NULL, t, sleepers);
	sleepers[2] = sb_sleeper(sub);
	memset(res, 0, sizeof(res));
	if (pipe2(fds, O_CLOEXEC) < 0)
		goto out;
	child = sb_fork();
	if (child == 0) {
		const char *targets[2] = { t, sub };

		close(fds[0]);
		if (sb_join(sub) < 0)
			_exit(3);
		for (int i = 0; i < 2; i++) {
			struct cgk_options o = CGK_OPTIONS_INIT;
			struct cgk_report rep;

			res[i].r = cgk_kill(targets[i], &o, &rep);
			res[i].refused = rep.refused;
			res[i].signalled = rep.signalled;
			memcpy(res[i].message, rep.message, sizeof(res[i].message));
			res[i].message[sizeof(res[i].message) - 1] = '\0';
			cgk_report_free(&rep);
		}
		if (write(fds[1], res, sizeof(res)) != (ssize_t)sizeof(res))
			_exit(4);
		_exit(0);
	}
	close(fds[1]);
	if (child > 0) {
		struct pollfd pfd = { .fd = fds[0], .events = POLLIN };

		if (poll(&pfd, 1, 20000) <= 0 || read(fds[0], res, sizeof(res)) != (ssize_t)sizeof(res))
			ok(false, "%s: the child reports back", name);
	}
	close(fds[0]);
	st = child > 0 ? sb_wait_reaped(child, 10000) : -1;
	ok(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "%s: the child was not killed and exited 0 (status %#x)", name, st);
	for (int i = 0; i < 2; i++) {
		const char *tg = i ? "its own cgroup" : "an ancestor of its cgroup";

		is_int(res[i].r, -EPERM, "%s: cgk_kill of %s is refused with -EPERM", name, tg);
		is_int(res[i].refused, CGK_GUARD_SELF, "%s: ... by the self guard", name);
		is_int(res[i].signalled, 0, "%s: ... and nothing signalled", name);
		if (!ok(names(res[i].message, i ? sub : t), "%s: ... and the message names it", name))
			diag("message: %s", res[i].message);
	}
	all_alive(sleepers, 3, "%s: the sleepers beside the caller are alive", name);
	/* The same through the command, run from inside the subtree. */
	if (cli(&cmd, sub, t, NULL, NULL, NULL) == 0) {
		is_int(cmd.exit_code, 4, "%s: cgkill run from inside the target: exit status 4", name);
		all_alive(sleepers, 3, "%s: the sleepers are alive after cgkill", name);
	}
	sb_sentinels_check(&sent, name);
out:
	if (p)
		sb_destroy(p);
	free(p);
	free(t);
	free(sub);
	free(s);
}

/* ---- paths that are not cgroups ---- */

static void make_file(const char *dir, const char *name, const char *text)
{
	char *p = sb_path(dir, name);
	int fd = p ? open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : -1;

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		diag("cannot write %s/%s: %m", dir, name);
	if (fd >= 0)
		close(fd);
	free(p);
}

static void lib_error(const char *path, int want, const char *what, const pid_t *alive,
		      unsigned n)
{
	struct cgk_options o = CGK_OPTIONS_INIT;
	struct cgk_report rep;
	int r = cgk_kill(path, &o, &rep);

	if (want)
		is_int(r, want, "%s: cgk_kill returns %s", what, strerrorname_np(-want));
	else
		ok(r < 0, "%s: cgk_kill fails (%d %s)", what, r, strerrorname_np(-r) ?: "?");
	if (!ok(names(rep.message, path), "%s: the message names the path", what))
		diag("message: %s", rep.message);
	is_int(rep.signalled, 0, "%s: nothing signalled", what);
	if (n)
		all_alive(alive, n, "%s: the processes nearby are alive", what);
	cgk_report_free(&rep);
}

static void test_paths(void)
{
	char *p = sb_mkdir(box2, "paths"), *c = sb_mkdir(box2, "paths/C");
	char *missing = NULL, *rel_missing = NULL, *file = NULL, *regular = NULL;
	char *fake = NULL, *link = NULL, *linkdir = NULL, *via_link = NULL;
	pid_t pids[3];
	char buf[64];
	int fd;

	if (!ok(p && c, "paths: create the cgroups"))
		goto out;
	pids[0] = sb_sleeper(p);
	pids[1] = sb_sleeper(c);
	pids[2] = sb_sleeper(c);

	missing = sb_path(box2, "paths/nope");
	lib_error(missing, -ENOENT, "a missing path", NULL, 0);
	cli_error(NULL, missing, "ENOENT", 1, "on a missing path");
	/* The form relative to the v2 mount. */
	rel_missing = strdup(missing + strlen(sb_mount(SB_V2)));
	lib_error(rel_missing, -ENOENT, "a missing v2-relative path", NULL, 0);
	lib_error(rel_missing + 1, -ENOENT, "a missing v2-relative path without /", NULL, 0);

	file = sb_path(c, "cgroup.procs");
	lib_error(file, -ENOTDIR, "a regular file in a cgroup", pids, 3);
	cli_error(NULL, file, "ENOTDIR", 1, "on a regular file in a cgroup");
	regular = sb_path(tmpdir, "file");
	fd = open(regular, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
	lib_error(regular, -ENOTDIR, "a regular file on tmpfs", NULL, 0);
	lib_error("", -EINVAL, "an empty path", NULL, 0);
	{
		struct cgk_options o = CGK_OPTIONS_INIT;
		struct cgk_report rep;

		is_int(cgk_kill(NULL, &o, &rep), -EINVAL, "a NULL path: -EINVAL");
		cgk_report_free(&rep);
	}

	/* A directory that looks like a cgroup, listing a live sleeper. */
	fake = sb_path(tmpdir, "fake");
	mkdir(fake, 0755);
	snprintf(buf, sizeof(buf), "%d\n", (int)pids[1]);
	make_file(fake, "cgroup.procs", buf);
	make_file(fake, "cgroup.type", "domain\n");
	make_file(fake, "cgroup.events", "populated 1\nfrozen 0\n");
	make_file(fake, "cgroup.kill", "");
	lib_error(fake, 0, "a tmpfs directory with a fake cgroup.procs", pids, 3);
	ok(sb_read(fake, "cgroup.kill", buf, sizeof(buf)) == 0,
	   "fake cgroup: nobody wrote to its cgroup.kill");
	cli_error(NULL, fake, "EINVAL", 1, "on a tmpfs directory");
	all_alive(pids, 3, "%s: the processes nearby are alive", "cgkill on a fake cgroup");

	/* Symlinks: to the cgroup, and in the middle of the path. */
	link = sb_path(tmpdir, "link");
	linkdir = sb_path(tmpdir, "linkdir");
	via_link = sb_path(linkdir, "paths/C");
	ok(symlink(c, link) == 0 && symlink(box2, linkdir) == 0, "create symlinks to the sandbox");
	lib_error(link, -ELOOP, "a symlink to a cgroup", pids, 3);
	lib_error(via_link, -ELOOP, "a path through a symlink", pids, 3);
	cli_error(NULL, link, "ELOOP", 1, "on a symlink to a cgroup");
	all_alive(pids, 3, "%s: the processes nearby are alive", "cgkill on a symlink");
	is_int(sb_count(c, false), 2, "symlinks: both sleepers still in the cgroup");
out:
	if (p)
		sb_destroy(p);
	if (link)
		unlink(link);
	if (linkdir)
		unlink(linkdir);
	free(p);
	free(c);
	free(missing);
	free(rel_missing);
	free(file);
	free(regular);
	free(fake);
	free(link);
	free(linkdir);
	free(via_link);
}

/* Invalid options are refused before anything is signalled. */
static void test_options(void)
{
	char *c = sb_mkdir(box2, "options");
	struct cgk_options o;
	struct cgk_report rep;
	pid_t pid;
	int fd;

	if (!ok(c != NULL, "options: create the cgroup"))
		return;
	pid = sb_sleeper(c);

	o = (struct cgk_options)CGK_OPTIONS_INIT;
	o.signal = 0;
	is_int(cgk_kill(c, &o, &rep), -EINVAL, "signal 0: -EINVAL");
	cgk_report_free(&rep);
	o = (struct cgk_options)CGK_OPTIONS_INIT;
	o.signal = 1000;
	is_int(cgk_kill(c, &o, &rep), -EINVAL, "signal 1000: -EINVAL");
	cgk_report_free(&rep);
	o = (struct cgk_options)CGK_OPTIONS_INIT;
	o.backend = CGK_BACKEND_COUNT_;
	is_int(cgk_kill(c, &o, &rep), -EINVAL, "an unknown backend: -EINVAL");
	cgk_report_free(&rep);
	o = (struct cgk_options)CGK_OPTIONS_INIT;
	o.n_escalations = CGK_MAX_ESCALATIONS + 1;
	is_int(cgk_kill(c, &o, &rep), -EINVAL, "too many escalations: -EINVAL");
	cgk_report_free(&rep);
	o = (struct cgk_options)CGK_OPTIONS_INIT;
	o.backend = CGK_BACKEND_KERNEL;
	o.signal = SIGTERM;
	ok(cgk_kill(c, &o, &rep) < 0, "the kernel backend with SIGTERM fails (%s)", rep.message);
	cgk_report_free(&rep);
	ok(sb_alive(pid), "options: the sleeper is alive");

	/* cgk_kill_fd on things that are not cgroups. */
	fd = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	o = (struct cgk_options)CGK_OPTIONS_INIT;
	ok(cgk_kill_fd(fd, &o, &rep) < 0, "cgk_kill_fd on a tmpfs directory fails (%s)", rep.message);
	cgk_report_free(&rep);
	close(fd);
	ok(cgk_kill_fd(-1, &o, &rep) < 0, "cgk_kill_fd(-1) fails");
	cgk_report_free(&rep);
	ok(sb_alive(pid), "options: the sleeper is alive after cgk_kill_fd");
	sb_destroy(c);
	free(c);
}

int main(void)
{
	char tmpl[] = "/tmp/cgkill-test.XXXXXX";
	char *box1f = NULL, *box1p = NULL;

	sb_init(300);
	sb_require_root();
	no_plan();
	if (!sb_mount(SB_V2))
		skip_all("no cgroup v2 mount");
	if (access(sb_cgkill(), X_OK) < 0)
		diag("%s is missing: the command tests will fail", sb_cgkill());
	box2 = sb_create(SB_V2);
	if (!box2)
		bail_out("cannot create a v2 sandbox: %m");
	tmpdir = mkdtemp(tmpl);
	if (!tmpdir)
		bail_out("mkdtemp: %m");
	if (sb_mount(SB_V1_FREEZER))
		box1f = sb_create(SB_V1_FREEZER);
	if (sb_mount(SB_V1_PIDS))
		box1p = sb_create(SB_V1_PIDS);

	test_threaded();
	test_threaded_domain();
	test_paths();
	test_options();
	test_self(SB_V2, box2);
	test_self(SB_V1_FREEZER, box1f);
	/* Roots last: the tests above prove the sandbox works. */
	test_root(SB_V2, box2, CGK_BACKEND_KERNEL);
	test_root(SB_V1_FREEZER, box1f, CGK_BACKEND_V1_FREEZE);
	test_root(SB_V1_PIDS, box1p, CGK_BACKEND_V1_FREEZE);

	{
		char cmd[256];

		snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", tmpdir);
		if (system(cmd) != 0)
			diag("cannot remove %s", tmpdir);
	}
	sb_cleanup_all();
	free(box2);
	free(box1f);
	free(box1p);
	return done_testing();
}
