// SPDX-License-Identifier: LGPL-2.1-or-later
/* Sandbox cgroups and test processes; see sandbox.h. Test code: it may print
 * diagnostics and keep global state, unlike the library. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox.h"
#include "tap.h"

#define SB_PREFIX "cgkill-test."
#define SB_MAX_SANDBOXES 64
#define SB_MAX_MOUNTS 32
#define SB_DESTROY_MS 15000

struct sb_mnt {
	char path[4096];
	char opts[512];		/* super options: controllers for v1 */
	int version;
};

static struct sb_mnt sb_mnts[SB_MAX_MOUNTS];
static size_t sb_n_mnts;
static int sb_hier_idx[SB_HIER_COUNT_] = { -1, -1, -1 };
static pid_t sb_owner;		/* the test process */
static pid_t sb_watchdog;
static char *sb_boxes[SB_MAX_SANDBOXES];
static unsigned sb_n_boxes;
static unsigned sb_counter;

struct sb_tracked {
	pid_t pid;
	bool reaped;
	int status;
};
static struct sb_tracked *sb_procs;
static size_t sb_n_procs, sb_cap_procs;

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

/* ---- files ---- */

static ssize_t read_fd_all(int fd, char *buf, size_t size)
{
	size_t len = 0;

	if (size == 0)
		return -EINVAL;
	for (;;) {
		ssize_t n;

		if (len + 1 >= size)
			break;
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	return (ssize_t)len;
}

ssize_t sb_read(const char *dir, const char *file, char *buf, size_t size)
{
	char p[4352];
	ssize_t r;
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = read_fd_all(fd, buf, size);
	close(fd);
	return r;
}

/* Read a whole file into a malloc'ed buffer (process lists can be long). */
static char *read_alloc(const char *dir, const char *file, int *err)
{
	char p[4352];
	size_t cap = 4096, len = 0;
	char *buf;
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*err = -errno;
		return NULL;
	}
	buf = malloc(cap);
	for (;;) {
		ssize_t n;

		if (!buf)
			break;
		if (len + 1 >= cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			*err = -errno;
			free(buf);
			close(fd);
			return NULL;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (!buf) {
		*err = -ENOMEM;
		return NULL;
	}
	buf[len] = '\0';
	*err = 0;
	return buf;
}

int sb_write(const char *dir, const char *file, const char *text)
{
	char p[4352];
	size_t len = strlen(text);
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	if (n < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	close(fd);
	return (size_t)n == len ? 0 : -EIO;
}

int sb_join(const char *dir)
{
	return sb_write(dir, "cgroup.procs", "0");
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

static void find_mounts(void)
{
	char *buf, *line, *save = NULL;
	int err;

	sb_n_mnts = 0;
	buf = read_alloc("/proc/self", "mountinfo", &err);
	if (!buf)
		return;
	for (line = strtok_r(buf, "\n", &save); line && sb_n_mnts < SB_MAX_MOUNTS;
	     line = strtok_r(NULL, "\n", &save)) {
		/* id parent maj:min root mountpoint opts [optional...] - fstype source superopts */
		char *f[6], *sep, *tail, *t, *tsave = NULL;
		struct sb_mnt *m;
		int i;

		sep = strstr(line, " - ");
		if (!sep)
			continue;
		*sep = '\0';
		tail = sep + 3;
		t = strtok_r(line, " ", &tsave);
		for (i = 0; i < 6 && t; i++, t = strtok_r(NULL, " ", &tsave))
			f[i] = t;
		if (i < 6)
			continue;
		tsave = NULL;
		t = strtok_r(tail, " ", &tsave);	/* fstype */
		if (!t)
			continue;
		m = &sb_mnts[sb_n_mnts];
		if (strcmp(t, "cgroup2") == 0)
			m->version = 2;
		else if (strcmp(t, "cgroup") == 0)
			m->version = 1;
		else
			continue;
		strtok_r(NULL, " ", &tsave);		/* source */
		t = strtok_r(NULL, " ", &tsave);	/* super options */
		snprintf(m->opts, sizeof(m->opts), "%s", t ? t : "");
		snprintf(m->path, sizeof(m->path), "%s", f[4]);
		unescape(m->path);
		sb_n_mnts++;
	}
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
	switch (h) {
	case SB_V2:
		return "v2";
	case SB_V1_FREEZER:
		return "v1-freezer";
	case SB_V1_PIDS:
		return "v1-pids";
	default:
		return "?";
	}
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

/* ---- killing and removing a subtree (shared with the watchdog) ---- */

struct sb_dirs {
	char **v;
	size_t n, cap;
};

static void dirs_push(struct sb_dirs *d, const char *p)
{
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 16;
		char **nv = realloc(d->v, cap * sizeof(*nv));

		if (!nv)
			return;
		d->v = nv;
		d->cap = cap;
	}
	d->v[d->n] = strdup(p);
	if (d->v[d->n])
		d->n++;
}

static void dirs_free(struct sb_dirs *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->v[i]);
	free(d->v);
	d->v = NULL;
	d->n = d->cap = 0;
}

/* Parents first (pre-order): walk in reverse for bottom-up. Bounded depth. */
static void collect_dirs(const char *path, struct sb_dirs *d, int depth)
{
	DIR *dir;
	struct dirent *e;

	dirs_push(d, path);
	if (depth > 32)
		return;
	dir = opendir(path);
	if (!dir)
		return;
	while ((e = readdir(dir))) {
		char sub[4352];

		if (e->d_type != DT_DIR || strcmp(e->d_name, ".") == 0 ||
		    strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		collect_dirs(sub, d, depth + 1);
	}
	closedir(dir);
}

static int parse_pids(const char *buf, pid_t **out, size_t *n)
{
	size_t cap = 0;
	const char *p = buf;

	*out = NULL;
	*n = 0;
	while (*p) {
		char *end;
		long v = strtol(p, &end, 10);

		if (end == p)
			break;
		if (*n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			pid_t *nv = realloc(*out, nc * sizeof(pid_t));

			if (!nv)
				return -ENOMEM;
			*out = nv;
			cap = nc;
		}
		(*out)[(*n)++] = (pid_t)v;
		p = end;
		while (*p == '\n' || *p == ' ')
			p++;
	}
	return 0;
}

/* The pids listed in dir: cgroup.procs, or cgroup.threads where procs
 * cannot be read (threaded cgroups). */
static int list_pids(const char *dir, pid_t **out, size_t *n)
{
	int err;
	char *buf = read_alloc(dir, "cgroup.procs", &err);

	if (!buf && err == -EOPNOTSUPP)
		buf = read_alloc(dir, "cgroup.threads", &err);
	if (!buf) {
		*out = NULL;
		*n = 0;
		return err;
	}
	err = parse_pids(buf, out, n);
	free(buf);
	return err;
}

static bool pid_in(const pid_t *v, size_t n, pid_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == pid)
			return true;
	return false;
}

static int sys_pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static int sys_pidfd_send_signal(int fd, int sig)
{
	return (int)syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0);
}

/*
 * SIGKILL what is listed in one sandbox cgroup. A pid is only signalled if
 * it is still listed after its pidfd was opened, so a recycled pid of an
 * unrelated process is never hit. Never pid 0, 1, ourselves or the watchdog.
 * Returns the number of processes seen.
 */
static size_t kill_listed(const char *dir)
{
	pid_t *a = NULL, *b = NULL;
	size_t na = 0, nb = 0, seen = 0;
	int *fds;

	if (list_pids(dir, &a, &na) < 0 || na == 0) {
		free(a);
		return 0;
	}
	fds = calloc(na, sizeof(int));
	if (!fds) {
		free(a);
		return na;
	}
	for (size_t i = 0; i < na; i++) {
		fds[i] = -1;
		if (a[i] <= 1 || a[i] == getpid() || a[i] == sb_owner ||
		    (sb_watchdog > 0 && a[i] == sb_watchdog))
			continue;
		fds[i] = sys_pidfd_open(a[i]);
	}
	if (list_pids(dir, &b, &nb) == 0) {
		for (size_t i = 0; i < na; i++)
			if (fds[i] >= 0 && pid_in(b, nb, a[i]))
				sys_pidfd_send_signal(fds[i], SIGKILL);
	}
	for (size_t i = 0; i < na; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	seen = na;
	free(fds);
	free(a);
	free(b);
	return seen;
}

/* PF_KTHREAD in /proc/PID/stat (field 9; comm may hold ')' and spaces). */
static bool pid_is_kthread(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long flags = 0;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) == 1 &&
	       (flags & 0x00200000);
}

/* A kernel thread a test moved in outlives every kill: hand it back to
 * the root cgroup of the hierarchy, where kernel threads live, or the
 * rmdir fails for ever. */
static void return_kthreads(const char *dir, const char *sandbox)
{
	const char *at = strstr(sandbox, "/" SB_PREFIX);
	char root[PATH_MAX], pid_text[32];
	pid_t *v = NULL;
	size_t n = 0;

	if (!at || list_pids(dir, &v, &n) < 0)
		return;
	snprintf(root, sizeof(root), "%.*s", (int)(at - sandbox), sandbox);
	for (size_t i = 0; i < n; i++) {
		if (v[i] > 0 && pid_is_kthread(v[i])) {
			snprintf(pid_text, sizeof(pid_text), "%d", v[i]);
			sb_write(root, "cgroup.procs", pid_text);
		}
	}
	free(v);
}

static bool subtree_holds(const struct sb_dirs *d, pid_t pid)
{
	bool found = false;

	for (size_t i = 0; i < d->n && !found; i++) {
		pid_t *v;
		size_t n;

		if (list_pids(d->v[i], &v, &n) == 0)
			found = pid_in(v, n, pid);
		free(v);
	}
	return found;
}

static void reap_any(void)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG | __WALL)) > 0) {
		for (size_t i = 0; i < sb_n_procs; i++) {
			if (sb_procs[i].pid == pid && !sb_procs[i].reaped) {
				sb_procs[i].reaped = true;
				sb_procs[i].status = status;
				break;
			}
		}
	}
}

static int destroy_subtree(const char *path)
{
	uint64_t deadline = sb_now_ms() + SB_DESTROY_MS;
	unsigned backoff = 1;
	int version = sb_version_of(path);
	struct stat st;

	if (version == 0)
		return -EINVAL;
	/* Never a hierarchy root or anything outside a sandbox. */
	if (!strstr(path, "/" SB_PREFIX))
		return -EPERM;
	for (;;) {
		struct sb_dirs d = { 0 };
		bool all_gone = true;

		if (lstat(path, &st) < 0 && errno == ENOENT)
			return 0;
		collect_dirs(path, &d, 0);
		/* Thaw top-down: a frozen task does not die (v1) or linger. */
		for (size_t i = 0; i < d.n; i++) {
			if (version == 2) {
				sb_write(d.v[i], "cgroup.freeze", "0");
			} else {
				sb_write(d.v[i], "freezer.state", "THAWED");
				sb_write(d.v[i], "pids.max", "0");
			}
		}
		if (version == 2 && !subtree_holds(&d, getpid()))
			sb_write(path, "cgroup.kill", "1");
		for (size_t i = d.n; i-- > 0;) {
			return_kthreads(d.v[i], path);
			kill_listed(d.v[i]);
		}
		if (getpid() == sb_owner)
			reap_any();
		for (size_t i = d.n; i-- > 0;) {
			if (rmdir(d.v[i]) < 0 && errno != ENOENT)
				all_gone = false;
		}
		dirs_free(&d);
		if (all_gone)
			return 0;
		if (sb_now_ms() > deadline) {
			fprintf(stderr, "# sandbox: could not remove %s\n", path);
			return -EBUSY;
		}
		sb_sleep_ms(backoff);
		if (backoff < 64)
			backoff *= 2;
	}
}

int sb_destroy(const char *path)
{
	return destroy_subtree(path);
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

		if (!dir)
			continue;
		while ((e = readdir(dir)))
			if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
				char *p;

				if (asprintf(&p, "%s/%s", sb_mnts[k].path, e->d_name) < 0)
					continue;
				dirs_push(&d, p);
				free(p);
			}
		closedir(dir);
		for (size_t i = 0; i < d.n; i++)
			destroy_subtree(d.v[i]);
		dirs_free(&d);
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
	reap_any();
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

	if (env && atoi(env) > 0)
		timeout_s = (unsigned)atoi(env);
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
	for (char *s = p + blen + 1; ; s++) {
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

int sb_count(const char *dir, bool recursive)
{
	struct sb_dirs d = { 0 };
	int total = 0;

	if (recursive)
		collect_dirs(dir, &d, 0);
	else
		dirs_push(&d, dir);
	for (size_t i = 0; i < d.n; i++) {
		pid_t *v;
		size_t n;
		int r = list_pids(d.v[i], &v, &n);

		free(v);
		if (r < 0 && r != -ENOENT) {
			dirs_free(&d);
			return r;
		}
		total += (int)n;
	}
	dirs_free(&d);
	return total;
}

bool sb_member(const char *dir, pid_t pid)
{
	pid_t *v;
	size_t n;
	bool found = false;

	if (list_pids(dir, &v, &n) == 0)
		found = pid_in(v, n, pid);
	free(v);
	return found;
}

/* ---- processes ---- */

static void track(pid_t pid)
{
	if (sb_n_procs == sb_cap_procs) {
		size_t cap = sb_cap_procs ? sb_cap_procs * 2 : 256;
		struct sb_tracked *nv = realloc(sb_procs, cap * sizeof(*nv));

		if (!nv)
			return;
		sb_procs = nv;
		sb_cap_procs = cap;
	}
	sb_procs[sb_n_procs++] = (struct sb_tracked){ .pid = pid };
}

static struct sb_tracked *tracked(pid_t pid)
{
	/* Newest first: pids get reused across a long test run. */
	for (size_t i = sb_n_procs; i-- > 0;)
		if (sb_procs[i].pid == pid)
			return &sb_procs[i];
	return NULL;
}

void sb_reap(void)
{
	reap_any();
}

pid_t sb_fork(void)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		prctl(PR_SET_CHILD_SUBREAPER, 0);
		sb_n_boxes = 0;	/* the parent cleans up, not us */
	} else if (pid > 0) {
		track(pid);
	}
	return pid;
}

static bool bomb_limited(const char *cg)
{
	char p[4096], buf[64];
	const struct sb_mnt *m = mount_of(cg);

	if (!m)
		return false;
	snprintf(p, sizeof(p), "%s", cg);
	/* This cgroup or an ancestor below the mount point must have a limit. */
	while (strlen(p) > strlen(m->path)) {
		char *slash;

		if (sb_read(p, "pids.max", buf, sizeof(buf)) > 0 &&
		    strncmp(buf, "max", 3) != 0 && atoi(buf) > 0)
			return true;
		slash = strrchr(p, '/');
		if (!slash)
			break;
		*slash = '\0';
	}
	return false;
}

static void *thread_sleep(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void on_term_exit(int sig)
{
	(void)sig;
	_exit(0);
}

/* Tell the parent we are set up (in our cgroups, handlers and threads in
 * place): only then does sb_spawn() return. */
static void ready(int fd, int err)
{
	if (write(fd, &err, sizeof(err)) < 0)
		_exit(2);
	close(fd);
}

/* The fork bomb program, beside the test binaries (see helper/forkbomb.c). */
static char forkbomb_exe[PATH_MAX];

static bool find_forkbomb(void)
{
	static const char name[] = "forkbomb";
	char *exe = forkbomb_exe, *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(forkbomb_exe) - sizeof(name));

	if (n <= 0)
		return false;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return false;
	memcpy(slash + 1, name, sizeof(name));
	if (access(exe, X_OK) == 0)
		return true;
	fprintf(stderr, "# %s: %m (make tests builds it)\n", exe);
	return false;
}

static __attribute__((noreturn)) void behave(const struct sb_proc *p, int fd)
{
	switch (p->what) {
	case SB_FORKBOMB: {
		char *const argv[] = { (char *)"forkbomb", NULL };

		ready(fd, 0);
		execv(forkbomb_exe, argv);
		_exit(127);
	}
	case SB_MIGRATE: {
		char a[4352], b[4352];
		int fa, fb;

		snprintf(a, sizeof(a), "%s/cgroup.procs", p->migrate[0]);
		snprintf(b, sizeof(b), "%s/cgroup.procs", p->migrate[1]);
		fa = open(a, O_WRONLY | O_CLOEXEC);
		fb = open(b, O_WRONLY | O_CLOEXEC);
		ready(fd, fa < 0 || fb < 0 ? -ENOENT : 0);
		if (fa < 0 || fb < 0)
			_exit(3);
		for (;;) {
			if (write(fa, "0", 1) < 0 && errno != EINTR)
				usleep(100);
			if (write(fb, "0", 1) < 0 && errno != EINTR)
				usleep(100);
		}
	}
	case SB_IGNORE_TERM:
		signal(SIGTERM, SIG_IGN);
		break;
	case SB_EXIT_ON_TERM:
		signal(SIGTERM, on_term_exit);
		break;
	case SB_THREADS:
		for (unsigned i = 0; i < p->threads; i++) {
			pthread_t t;
			int r = pthread_create(&t, NULL, thread_sleep, NULL);

			if (r != 0) {
				ready(fd, -r);
				_exit(4);
			}
		}
		break;
	case SB_SLEEP:
		break;
	}
	ready(fd, 0);
	for (;;)
		pause();
}

pid_t sb_spawn(const struct sb_proc *p)
{
	int fds[2];
	pid_t pid;
	int err = 0;
	ssize_t n;

	if (p->what == SB_FORKBOMB) {
		bool limited = false;

		for (int i = 0; i < 4 && p->cgroups[i]; i++)
			limited = limited || bomb_limited(p->cgroups[i]);
		if (!limited)
			return -EPERM;
		if (!find_forkbomb())
			return -ENOENT;
	}
	if (p->what == SB_MIGRATE && (!p->migrate[0] || !p->migrate[1]))
		return -EINVAL;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	pid = sb_fork();
	if (pid < 0) {
		err = -errno;
		close(fds[0]);
		close(fds[1]);
		return err;
	}
	if (pid == 0) {
		close(fds[0]);
		for (int i = 0; i < 4 && p->cgroups[i]; i++) {
			int r = sb_join(p->cgroups[i]);

			if (r < 0) {
				if (write(fds[1], &r, sizeof(r)) < 0)
					_exit(2);
				_exit(2);
			}
		}
		behave(p, fds[1]);
	}
	close(fds[1]);
	/* Bounded wait for the child to report. */
	{
		struct pollfd pfd = { .fd = fds[0], .events = POLLIN };
		int r;

		do
			r = poll(&pfd, 1, 10000);
		while (r < 0 && errno == EINTR);
		if (r <= 0) {
			close(fds[0]);
			kill(pid, SIGKILL);
			return -ETIMEDOUT;
		}
	}
	n = read(fds[0], &err, sizeof(err));
	close(fds[0]);
	if (n != (ssize_t)sizeof(err))
		err = -EIO;
	if (err < 0) {
		kill(pid, SIGKILL);
		sb_wait_reaped(pid, 2000);
		return err;
	}
	return pid;
}

pid_t sb_sleeper(const char *cgroup)
{
	struct sb_proc p = { .what = SB_SLEEP, .cgroups = { cgroup } };

	return sb_spawn(&p);
}

int sb_spawn_n(unsigned n, enum sb_behaviour what, const char *limiter,
	       const char *cgroup, pid_t *pids)
{
	struct sb_proc p = { .what = what, .threads = 4 };

	if (limiter) {
		p.cgroups[0] = limiter;
		p.cgroups[1] = cgroup;
	} else {
		p.cgroups[0] = cgroup;
	}
	for (unsigned i = 0; i < n; i++) {
		pid_t pid = sb_spawn(&p);

		if (pid < 0)
			return pid;
		if (pids)
			pids[i] = pid;
	}
	return 0;
}

int sb_wait_reaped(pid_t pid, unsigned timeout_ms)
{
	uint64_t deadline = sb_now_ms() + timeout_ms;
	unsigned backoff = 1;

	for (;;) {
		struct sb_tracked *t;

		reap_any();
		t = tracked(pid);
		if (!t)
			return -ECHILD;
		if (t->reaped)
			return t->status;
		if (sb_now_ms() >= deadline)
			return -ETIMEDOUT;
		sb_sleep_ms(backoff);
		if (backoff < 50)
			backoff *= 2;
	}
}

bool sb_killed_by(pid_t pid, int sig, unsigned timeout_ms)
{
	int st = sb_wait_reaped(pid, timeout_ms);

	return st >= 0 && WIFSIGNALED(st) && WTERMSIG(st) == sig;
}

static char proc_state(pid_t pid)
{
	char dir[64], buf[512], *rp;

	snprintf(dir, sizeof(dir), "/proc/%d", (int)pid);
	if (sb_read(dir, "stat", buf, sizeof(buf)) <= 0)
		return 0;
	rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' ? rp[2] : 0;
}

bool sb_alive(pid_t pid)
{
	struct sb_tracked *t;
	char s;

	if (pid <= 0)
		return false;
	reap_any();
	t = tracked(pid);
	if (t && t->reaped)
		return false;
	if (kill(pid, 0) < 0)
		return false;
	s = proc_state(pid);
	return s != 0 && s != 'Z' && s != 'X';
}

/* ---- waiting ---- */

static bool events_say_empty(int fd, int *err)
{
	char buf[512];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n < 0) {
		*err = -errno;
		return false;
	}
	buf[n] = '\0';
	*err = 0;
	return strncmp(buf, "populated 0\n", 12) == 0 || strstr(buf, "\npopulated 0\n");
}

int sb_wait_empty(const char *dir, unsigned timeout_ms)
{
	uint64_t deadline = sb_now_ms() + timeout_ms;
	char p[4352];
	int fd;

	snprintf(p, sizeof(p), "%s/cgroup.events", dir);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		for (;;) {
			struct pollfd pfd = { .fd = fd, .events = POLLPRI };
			uint64_t now;
			int err;

			if (events_say_empty(fd, &err)) {
				close(fd);
				return 0;
			}
			if (err < 0) {
				close(fd);
				return err;
			}
			now = sb_now_ms();
			if (now >= deadline)
				break;
			/* Re-read after every wakeup; the cap only guards
			 * against a lost notification. */
			poll(&pfd, 1, (int)(deadline - now < 200 ? deadline - now : 200));
		}
		close(fd);
		return -ETIMEDOUT;
	}
	/* v1: no cgroup.events; poll the lists with backoff. */
	for (unsigned backoff = 1;; ) {
		int n = sb_count(dir, true);

		if (n == 0)
			return 0;
		if (n < 0 && n != -ENOENT)
			return n;
		if (sb_now_ms() >= deadline)
			return -ETIMEDOUT;
		sb_sleep_ms(backoff);
		if (backoff < 50)
			backoff *= 2;
	}
}

int sb_wait_count(const char *dir, unsigned n, unsigned timeout_ms)
{
	uint64_t deadline = sb_now_ms() + timeout_ms;

	for (;;) {
		int c = sb_count(dir, true);

		if (c >= (int)n)
			return 0;
		if (sb_now_ms() >= deadline)
			return -ETIMEDOUT;
		sb_sleep_ms(10);
	}
}

/* ---- sentinels ---- */

int sb_sentinels_start(struct sb_sentinels *s, const char *parent,
		       const char *sibling)
{
	const char *where[2] = { parent, sibling };

	memset(s, 0, sizeof(*s));
	for (int i = 0; i < 2; i++) {
		pid_t pid;

		if (!where[i])
			continue;
		pid = sb_sleeper(where[i]);
		if (pid < 0)
			return pid;
		s->pid[s->n] = pid;
		s->where[s->n] = i == 0 ? "parent" : "sibling";
		s->n++;
	}
	return 0;
}

bool sb_sentinels_check(const struct sb_sentinels *s, const char *scenario)
{
	bool all = true;

	for (unsigned i = 0; i < s->n; i++)
		all &= ok(sb_alive(s->pid[i]), "%s: sentinel in the %s cgroup (pid %d) is alive",
			  scenario, s->where[i], (int)s->pid[i]);
	return all;
}

/* ---- running a command ---- */

const char *sb_cgkill(void)
{
	const char *p = getenv("CGKILL");

	return p && *p ? p : "build/cgkill";
}

static void drain(int *fd, char *buf, size_t size, size_t *len)
{
	ssize_t n;

	if (*len + 1 >= size) {
		char junk[4096];

		n = read(*fd, junk, sizeof(junk));
	} else {
		n = read(*fd, buf + *len, size - 1 - *len);
		if (n > 0)
			*len += (size_t)n;
		buf[*len] = '\0';
	}
	if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
		close(*fd);
		*fd = -1;
	}
}

int sb_run(struct sb_cmd *res, const char *join, unsigned timeout_ms,
	   const char *const argv[])
{
	int out[2], err[2], st;
	size_t olen = 0, elen = 0;
	uint64_t start = sb_now_ms(), deadline = start + timeout_ms;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	res->exit_code = -1;
	res->status = -1;
	if (pipe2(out, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(err, O_CLOEXEC) < 0) {
		close(out[0]);
		close(out[1]);
		return -errno;
	}
	pid = sb_fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);

		if (join && sb_join(join) < 0)
			_exit(125);
		if (devnull >= 0)
			dup2(devnull, 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(out[1]);
	close(err[1]);
	while (out[0] >= 0 || err[0] >= 0) {
		struct pollfd pfd[2] = {
			{ .fd = out[0], .events = POLLIN },
			{ .fd = err[0], .events = POLLIN },
		};
		uint64_t now = sb_now_ms();

		if (now >= deadline) {
			res->timed_out = true;
			kill(pid, SIGKILL);
			break;
		}
		if (poll(pfd, 2, (int)(deadline - now)) < 0 && errno != EINTR)
			break;
		if (out[0] >= 0 && pfd[0].revents)
			drain(&out[0], res->out, sizeof(res->out), &olen);
		if (err[0] >= 0 && pfd[1].revents)
			drain(&err[0], res->err, sizeof(res->err), &elen);
	}
	if (out[0] >= 0)
		close(out[0]);
	if (err[0] >= 0)
		close(err[0]);
	st = sb_wait_reaped(pid, res->timed_out ? 5000 : (unsigned)(deadline + 1000 - sb_now_ms()));
	if (st == -ETIMEDOUT) {
		res->timed_out = true;
		kill(pid, SIGKILL);
		st = sb_wait_reaped(pid, 5000);
	}
	res->ms = sb_now_ms() - start;
	if (st < 0)
		return st;
	res->status = st;
	if (WIFEXITED(st))
		res->exit_code = WEXITSTATUS(st);
	return 0;
}
