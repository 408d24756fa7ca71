// SPDX-License-Identifier: LGPL-2.1-or-later
/* Sandbox cgroups: the mounts, making and removing sandboxes, the watchdog;
 * see sandbox.h. Test code: it may print diagnostics and keep global state,
 * unlike the library. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgfile.h"
#include "deadline.h"
#include "sandbox.h"
#include "spawn.h"
#include "tap.h"

#define SB_MAX_SANDBOXES 64
#define SB_MAX_MOUNTS 32

struct sb_mnt {
	char path[4096];
	char opts[512];		/* super options: controllers for v1 */
	int version;
};

static struct sb_mnt sb_mnts[SB_MAX_MOUNTS];
static size_t sb_n_mnts;
static int sb_hier_idx[SB_HIER_COUNT_] = { -1, -1, -1, -1 };
static pid_t sb_owner;		/* the test process */
static pid_t sb_watchdog;
static char *sb_boxes[SB_MAX_SANDBOXES];
static unsigned sb_n_boxes;
static unsigned sb_counter;

uint64_t sb_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void sb_sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

bool sb_is_ours(pid_t pid)
{
	return pid == sb_owner || (sb_watchdog > 0 && pid == sb_watchdog);
}

/* ---- mounts ---- */

/* Undo the octal escapes of mountinfo (\040 for a space). */
static void unescape(char *s)
{
	char *w = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '7' && s[2] >= '0' &&
		    s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 4;
		} else {
			*w++ = *s++;
		}
	}
	*w = '\0';
}

static bool opts_have(const char *opts, const char *name)
{
	size_t n = strlen(name);
	const char *p = opts;

	while (p && *p) {
		if (strncmp(p, name, n) == 0 && (p[n] == ',' || p[n] == '\0'))
			return true;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return false;
}

/* One line of mountinfo: "id parent maj:min root mountpoint opts [optional...]
 * - fstype source superopts"; a cgroup mount goes into *m. */
static bool parse_mount(char *line, struct sb_mnt *m)
{
	char *f[6], *sep = strstr(line, " - "), *t, *save = NULL;
	int i;

	if (!sep)
		return false;
	*sep = '\0';
	t = strtok_r(line, " ", &save);
	for (i = 0; i < 6 && t; i++, t = strtok_r(NULL, " ", &save))
		f[i] = t;
	save = NULL;
	t = i == 6 ? strtok_r(sep + 3, " ", &save) : NULL;	/* fstype */
	if (!t)
		return false;
	if (strcmp(t, "cgroup2") == 0)
		m->version = 2;
	else if (strcmp(t, "cgroup") == 0)
		m->version = 1;
	else
		return false;
	strtok_r(NULL, " ", &save);		/* source */
	t = strtok_r(NULL, " ", &save);		/* super options */
	snprintf(m->opts, sizeof(m->opts), "%s", t ? t : "");
	snprintf(m->path, sizeof(m->path), "%s", f[4]);
	unescape(m->path);
	return true;
}

static void find_mounts(void)
{
	char *buf, *line, *save = NULL;
	int err;

	sb_n_mnts = 0;
	buf = sb_read_alloc("/proc/self", "mountinfo", &err);
	for (line = buf ? strtok_r(buf, "\n", &save) : NULL; line && sb_n_mnts < SB_MAX_MOUNTS;
	     line = strtok_r(NULL, "\n", &save))
		sb_n_mnts += parse_mount(line, &sb_mnts[sb_n_mnts]);
	free(buf);
	for (size_t k = 0; k < sb_n_mnts; k++) {
		struct sb_mnt *m = &sb_mnts[k];

		if (m->version == 2 && sb_hier_idx[SB_V2] < 0)
			sb_hier_idx[SB_V2] = (int)k;
		if (m->version == 1 && opts_have(m->opts, "freezer") &&
		    sb_hier_idx[SB_V1_FREEZER] < 0)
			sb_hier_idx[SB_V1_FREEZER] = (int)k;
		if (m->version == 1 && opts_have(m->opts, "pids") &&
		    sb_hier_idx[SB_V1_PIDS] < 0)
			sb_hier_idx[SB_V1_PIDS] = (int)k;
		if (m->version == 1 && opts_have(m->opts, "memory") &&
		    sb_hier_idx[SB_V1_MEMORY] < 0)
			sb_hier_idx[SB_V1_MEMORY] = (int)k;
	}
}

const char *sb_mount(enum sb_hier h)
{
	if (h >= SB_HIER_COUNT_ || sb_hier_idx[h] < 0)
		return NULL;
	return sb_mnts[sb_hier_idx[h]].path;
}

const char *sb_hier_name(enum sb_hier h)
{
	static const char *const names[] = { "v2", "v1-freezer", "v1-pids", "v1-memory" };

	return h < SB_HIER_COUNT_ ? names[h] : "?";
}

static const struct sb_mnt *mount_of(const char *path)
{
	const struct sb_mnt *best = NULL;
	size_t best_len = 0;

	for (size_t k = 0; k < sb_n_mnts; k++) {
		size_t n = strlen(sb_mnts[k].path);

		if (strncmp(path, sb_mnts[k].path, n) == 0 &&
		    (path[n] == '/' || path[n] == '\0') && n >= best_len) {
			best = &sb_mnts[k];
			best_len = n;
		}
	}
	return best;
}

int sb_version_of(const char *path)
{
	const struct sb_mnt *m = mount_of(path);

	return m ? m->version : 0;
}

const char *sb_mount_of(const char *path)
{
	const struct sb_mnt *m = mount_of(path);

	return m ? m->path : NULL;
}

const char *sb_rel_v2(const char *path)
{
	return path + strlen(sb_mount(SB_V2));
}

/* Remove every <mount>/cgkill-test.<owner>.* left behind. */
static void sweep(pid_t owner)
{
	char prefix[64];

	snprintf(prefix, sizeof(prefix), SB_PREFIX "%d.", (int)owner);
	for (size_t k = 0; k < sb_n_mnts; k++) {
		DIR *dir = opendir(sb_mnts[k].path);
		struct dirent *e;
		struct sb_dirs d = { 0 };

		while (dir && (e = readdir(dir))) {
			char *p = strncmp(e->d_name, prefix, strlen(prefix)) == 0 ?
				  sb_path(sb_mnts[k].path, e->d_name) : NULL;

			if (p)
				sb_dirs_push(&d, p);
			free(p);
		}
		if (dir)
			closedir(dir);
		for (size_t i = 0; i < d.n; i++)
			sb_destroy(d.v[i]);
		sb_dirs_free(&d);
	}
}

void sb_cleanup_all(void)
{
	if (getpid() != sb_owner)
		return;
	for (unsigned i = sb_n_boxes; i-- > 0;) {
		if (sb_boxes[i]) {
			sb_destroy(sb_boxes[i]);
			free(sb_boxes[i]);
			sb_boxes[i] = NULL;
		}
	}
	sb_n_boxes = 0;
	sb_reap();
	/* Let the watchdog finish now rather than linger as an orphan. */
	if (sb_watchdog > 0) {
		uint64_t deadline = sb_now_ms() + 5000;

		kill(sb_watchdog, SIGUSR1);
		while (waitpid(sb_watchdog, NULL, WNOHANG) == 0 && sb_now_ms() < deadline)
			sb_sleep_ms(5);
		sb_watchdog = 0;
	}
}

/* ---- watchdog ---- */

static void watchdog_main(pid_t owner, unsigned timeout_s)
{
	struct timespec ts = { (time_t)timeout_s, 0 };
	sigset_t set;
	int sig;

	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	prctl(PR_SET_PDEATHSIG, SIGUSR1);
	if (getppid() != owner) {
		sweep(owner);
		_exit(0);
	}
	do
		sig = sigtimedwait(&set, NULL, &ts);
	while (sig < 0 && errno == EINTR);
	if (sig < 0 && getppid() == owner) {
		printf("Bail out! timed out after %u s: killing the test and "
		       "removing its sandboxes\n", timeout_s);
		fflush(stdout);
		kill(owner, SIGKILL);
		sb_sleep_ms(100);
	}
	sweep(owner);
	_exit(0);
}

static void on_fatal_signal(int sig)
{
	/* The watchdog notices our death and sweeps the sandboxes. */
	static const char msg[] = "# interrupted: the watchdog removes the sandboxes\n";

	if (write(2, msg, sizeof(msg) - 1) < 0) {
		/* nothing to do */
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

void sb_init(unsigned timeout_s)
{
	const char *env = getenv("CGKILL_TEST_TIMEOUT");
	pid_t pid;

	/* An idle machine's limit, stretched by the load as the test starts;
	 * $CGKILL_TEST_TIMEOUT is taken as it is. */
	if (env && atoi(env) > 0)
		timeout_s = (unsigned)atoi(env);
	else
		timeout_s = sb_deadline_ms(timeout_s);
	sb_owner = getpid();
	find_mounts();
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		watchdog_main(sb_owner, timeout_s);
	sb_watchdog = pid > 0 ? pid : 0;
	atexit(sb_cleanup_all);
	signal(SIGINT, on_fatal_signal);
	signal(SIGTERM, on_fatal_signal);
	signal(SIGHUP, on_fatal_signal);
	signal(SIGPIPE, SIG_IGN);
}

void sb_require_root(void)
{
	if (geteuid() != 0)
		skip_all("needs root to create cgroups");
}

char *sb_start(unsigned timeout_s)
{
	char *box;

	sb_init(timeout_s);
	sb_require_root();
	no_plan();
	if (!sb_mount(SB_V2))
		skip_all("no cgroup v2 mount");
	box = sb_create(SB_V2);
	if (!box)
		bail_out("cannot create a v2 sandbox: %m");
	note("sandbox %s", box);
	return box;
}

int sb_finish(char *box)
{
	ok(sb_destroy(box) == 0, "sandbox removed");
	free(box);
	return done_testing();
}

void sb_start_v1(struct sb_boxes *b, unsigned timeout_s)
{
	sb_init(timeout_s);
	sb_require_root();
	no_plan();
	*b = (struct sb_boxes){
		.fz = sb_mount(SB_V1_FREEZER) ? sb_create(SB_V1_FREEZER) : NULL,
		.pd = sb_mount(SB_V1_PIDS) ? sb_create(SB_V1_PIDS) : NULL,
		.v2 = sb_mount(SB_V2) ? sb_create(SB_V2) : NULL,
	};
	if (!b->fz && !b->pd)
		skip_all("no cgroup v1 freezer or pids hierarchy on this machine");
	note("sandboxes: %s %s %s", b->fz ?: "-", b->pd ?: "-", b->v2 ?: "-");
}

int sb_finish_v1(struct sb_boxes *b)
{
	ok(!b->fz || sb_destroy(b->fz) == 0, "v1 freezer sandbox removed");
	ok(!b->pd || sb_destroy(b->pd) == 0, "v1 pids sandbox removed");
	ok(!b->v2 || sb_destroy(b->v2) == 0, "v2 sandbox removed");
	free(b->fz);
	free(b->pd);
	free(b->v2);
	return done_testing();
}

/* ---- sandboxes ---- */

char *sb_path(const char *base, const char *rel)
{
	char *p;

	if (asprintf(&p, "%s/%s", base, rel) < 0)
		return NULL;
	return p;
}

char *sb_create(enum sb_hier h)
{
	const char *m = sb_mount(h);
	char *p;

	if (!m) {
		errno = ENOENT;
		return NULL;
	}
	if (sb_n_boxes >= SB_MAX_SANDBOXES) {
		errno = ENOSPC;
		return NULL;
	}
	if (asprintf(&p, "%s/" SB_PREFIX "%d.%u", m, (int)getpid(), sb_counter++) < 0)
		return NULL;
	if (mkdir(p, 0755) < 0) {
		int e = errno;

		free(p);
		errno = e;
		return NULL;
	}
	sb_boxes[sb_n_boxes++] = strdup(p);
	return p;
}

char *sb_mkdir(const char *base, const char *rel)
{
	char *p = sb_path(base, rel);
	size_t blen = strlen(base);

	if (!p)
		return NULL;
	for (char *s = p + blen + 1;; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;

			*s = '\0';
			if (mkdir(p, 0755) < 0 && errno != EEXIST) {
				int e = errno;

				free(p);
				errno = e;
				return NULL;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	return p;
}
