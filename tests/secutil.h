/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helpers shared by the adversarial and security tests (test-security.c,
 * test-guard.c, test-unpriv.c, test-pidreuse.c, test-pidns.c): running the
 * cgkill command, reading its JSON report, processes that record the signals
 * they get, children that report a result through a pipe, and cgroups
 * addressed by directory fd (paths beyond PATH_MAX, trees deeper than the
 * sandbox's cleanup walks).
 *
 * Everything is static inline so that a test that does not use a helper does
 * not warn about it.
 */
#ifndef CGK_SECUTIL_H
#define CGK_SECUTIL_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox.h"
#include "tap.h"

#define SEC_CLI_TIMEOUT_MS 60000

/* The cgkill command: $CGKILL (make check), else ../cgkill next to us. */
static inline const char *sec_cgkill(void)
{
	static char path[PATH_MAX];
	const char *env = getenv("CGKILL");
	ssize_t n;
	char *slash;

	if (env && *env)
		return env;
	if (path[0])
		return path;
	n = readlink("/proc/self/exe", path, sizeof(path) - 16);
	if (n < 0)
		return "build/cgkill";
	path[n] = '\0';
	for (int i = 0; i < 2 && (slash = strrchr(path, '/')); i++)
		*slash = '\0';
	strcat(path, "/cgkill");
	return path;
}

struct sec_cli {
	int status;		/* exit code; 128 + signal if killed; -1 timeout */
	char out[1 << 16];
	char err[1 << 14];
};

/* Options for one run of the command. */
struct sec_cli_opts {
	const char *input;	/* standard input; NULL: EOF at once */
	uid_t uid;		/* run as this uid/gid if nonzero */
	const char *env[4];	/* "NAME=value" to set, "NAME" to unset */
	const char *join;	/* cgroup directory to move into first */
};

static inline void sec_drain(int fd, char *buf, size_t size, size_t *len, bool *open_)
{
	ssize_t n;

	if (*len + 1 >= size) {
		char junk[4096];

		n = read(fd, junk, sizeof(junk));
	} else {
		n = read(fd, buf + *len, size - 1 - *len);
		if (n > 0)
			*len += (size_t)n;
	}
	buf[*len] = '\0';
	if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
		*open_ = false;
}

/*
 * Run the cgkill command with the given arguments (NULL-terminated). The
 * result is malloc'ed (free it); NULL if it could not be started.
 */
static inline struct sec_cli *sec_cli_runv(const struct sec_cli_opts *o, char *const *args)
{
	struct sec_cli *res = calloc(1, sizeof(*res));
	int in[2], out[2], err[2];
	char *argv[64];
	size_t argc = 0, lo = 0, le = 0;
	bool oo = true, eo = true;
	uint64_t deadline;
	pid_t pid;
	int st;

	if (!res)
		return NULL;
	argv[argc++] = (char *)sec_cgkill();
	for (; args[argc - 1] && argc < 63; argc++)
		argv[argc] = args[argc - 1];
	argv[argc] = NULL;
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
		free(res);
		return NULL;
	}
	pid = sb_fork();
	if (pid < 0) {
		free(res);
		return NULL;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		for (int i = 0; o && i < 4 && o->env[i]; i++) {
			if (strchr(o->env[i], '='))
				putenv((char *)o->env[i]);
			else
				unsetenv(o->env[i]);
		}
		if (o && o->join && sb_join(o->join) < 0)
			_exit(121);
		if (o && o->uid) {
			if (setgroups(0, NULL) < 0 || setresgid(o->uid, o->uid, o->uid) < 0 ||
			    setresuid(o->uid, o->uid, o->uid) < 0)
				_exit(120);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	close(err[1]);
	if (o && o->input) {
		size_t len = strlen(o->input);

		/* Answers are short: they fit in the pipe without blocking. */
		if (write(in[1], o->input, len) != (ssize_t)len)
			diag("cli: short write of the input");
	}
	close(in[1]);
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	fcntl(err[0], F_SETFL, O_NONBLOCK);
	deadline = sb_now_ms() + SEC_CLI_TIMEOUT_MS;
	while ((oo || eo) && sb_now_ms() < deadline) {
		struct pollfd p[2] = { { oo ? out[0] : -1, POLLIN, 0 }, { eo ? err[0] : -1, POLLIN, 0 } };

		if (poll(p, 2, 100) < 0 && errno != EINTR)
			break;
		if (oo && p[0].revents)
			sec_drain(out[0], res->out, sizeof(res->out), &lo, &oo);
		if (eo && p[1].revents)
			sec_drain(err[0], res->err, sizeof(res->err), &le, &eo);
	}
	close(out[0]);
	close(err[0]);
	st = sb_wait_reaped(pid, oo || eo ? 10 : 30000);
	if (st == -ETIMEDOUT) {
		kill(pid, SIGKILL);
		sb_wait_reaped(pid, 5000);
		res->status = -1;
	} else if (st < 0) {
		res->status = -2;
	} else if (WIFEXITED(st)) {
		res->status = WEXITSTATUS(st);
	} else {
		res->status = 128 + WTERMSIG(st);
	}
	return res;
}

/* sec_cli_run(opts, "-n", path, NULL) */
static inline struct sec_cli *sec_cli_run(const struct sec_cli_opts *o, ...)
{
	char *args[62];
	size_t n = 0;
	va_list ap;

	va_start(ap, o);
	while (n < 61 && (args[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	args[n] = NULL;
	return sec_cli_runv(o, args);
}

/* The first number after "key": in a JSON text; -1 if absent or null. */
static inline long long sec_json_num(const char *json, const char *key)
{
	char pat[128];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	p = json ? strstr(json, pat) : NULL;
	if (!p)
		return -1;
	p += strlen(pat);
	if (*p == 't')
		return 1;	/* true */
	if (*p == 'f')
		return 0;	/* false */
	if (*p < '0' || *p > '9')
		return -1;
	return strtoll(p, NULL, 10);
}

/* The first string after "key": in a JSON text, copied (escapes kept). */
static inline bool sec_json_str(const char *json, const char *key, char *buf, size_t size)
{
	char pat[128];
	const char *p, *q;

	snprintf(pat, sizeof(pat), "\"%s\": \"", key);
	p = json ? strstr(json, pat) : NULL;
	if (!p)
		return false;
	p += strlen(pat);
	for (q = p; *q && *q != '"'; q++)
		if (*q == '\\' && q[1])
			q++;
	snprintf(buf, size, "%.*s", (int)(q - p), p);
	return true;
}

/* ---- processes that record the signals they get ---- */

static int sec_hit_fd __attribute__((unused)) = -1;

static inline void sec_hit_handler(int sig)
{
	char c = (char)sig;
	int e = errno;

	if (sec_hit_fd >= 0 && write(sec_hit_fd, &c, 1) < 0) {
		/* the test notices a missing byte */
	}
	errno = e;
}

/* Record USR1, USR2, TERM, HUP, INT and ALRM as a byte on fd. */
static inline void sec_hit_arm(int fd)
{
	static const int sigs[] = { SIGUSR1, SIGUSR2, SIGTERM, SIGHUP, SIGINT, SIGALRM };
	struct sigaction sa = { .sa_handler = sec_hit_handler, .sa_flags = SA_RESTART };

	sec_hit_fd = fd;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

/* A pipe whose read end counts hits (non-blocking). */
struct sec_hits {
	int rd, wr;
};

static inline int sec_hits_open(struct sec_hits *h)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	h->rd = p[0];
	h->wr = p[1];
	return 0;
}

/* Bytes written so far (drains them); *last gets the last signal seen. */
static inline unsigned sec_hits_take(struct sec_hits *h, int *last)
{
	unsigned n = 0;
	char buf[256];
	ssize_t r;

	while ((r = read(h->rd, buf, sizeof(buf))) > 0) {
		n += (unsigned)r;
		if (last)
			*last = (unsigned char)buf[r - 1];
	}
	return n;
}

static inline void sec_hits_close(struct sec_hits *h)
{
	close(h->rd);
	close(h->wr);
}

/* Join a cgroup given as an open directory fd. */
static inline int sec_join_fd(int dirfd)
{
	int fd = openat(dirfd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, "0", 1);
	n = n < 0 ? -errno : 0;
	close(fd);
	return (int)n;
}

/*
 * A process in a cgroup (by path, or by dirfd if path is NULL) that records
 * the signals it gets on hits (if not NULL), else sleeps. Its pid, or -errno.
 */
static inline pid_t sec_spawn(const char *path, int dirfd, const struct sec_hits *hits)
{
	int p[2], err = 0;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = sb_fork();
	if (pid < 0) {
		err = -errno;
		close(p[0]);
		close(p[1]);
		return err;
	}
	if (pid == 0) {
		close(p[0]);
		if (hits)
			sec_hit_arm(hits->wr);
		err = path ? sb_join(path) : sec_join_fd(dirfd);
		if (write(p[1], &err, sizeof(err)) < 0 || err < 0)
			_exit(2);
		close(p[1]);
		for (;;)
			pause();
	}
	close(p[1]);
	{
		struct pollfd pfd = { .fd = p[0], .events = POLLIN };

		if (poll(&pfd, 1, 10000) <= 0 || read(p[0], &err, sizeof(err)) != sizeof(err))
			err = -EIO;
	}
	close(p[0]);
	if (err < 0) {
		kill(pid, SIGKILL);
		sb_wait_reaped(pid, 2000);
		return err;
	}
	return pid;
}

/*
 * Run fn in a forked child (default signal handlers, no cleanup duties);
 * it fills out (size bytes), which comes back through a pipe. Returns 0 if
 * the child sent a full result within timeout_ms, else -errno; *status gets
 * its wait status if it ended (else -1).
 */
typedef void (*sec_child_fn)(void *arg, void *out);

static inline int sec_child(sec_child_fn fn, void *arg, void *out, size_t size,
			    unsigned timeout_ms, int *status)
{
	uint64_t deadline = sb_now_ms() + timeout_ms;
	size_t got = 0;
	int p[2], st;
	pid_t pid;

	if (status)
		*status = -1;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = sb_fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (pid == 0) {
		close(p[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		memset(out, 0, size);
		fn(arg, out);
		if (write(p[1], out, size) != (ssize_t)size)
			_exit(3);
		_exit(0);
	}
	close(p[1]);
	while (got < size) {
		struct pollfd pfd = { .fd = p[0], .events = POLLIN };
		uint64_t now = sb_now_ms();
		ssize_t n;

		if (now >= deadline || poll(&pfd, 1, (int)(deadline - now)) <= 0)
			break;
		n = read(p[0], (char *)out + got, size - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(p[0]);
	st = sb_wait_reaped(pid, got == size ? 10000 : 100);
	if (st == -ETIMEDOUT) {
		kill(pid, SIGKILL);
		st = sb_wait_reaped(pid, 5000);
	}
	if (status)
		*status = st;
	return got == size ? 0 : -ETIMEDOUT;
}

/* ---- cgroup trees by fd ---- */

/*
 * Kill (v2 cgroup.kill) and remove the cgroup name below parentfd with all
 * its descendants, bottom-up, by fds: works for trees deeper or longer than
 * the sandbox's path-based cleanup handles. Bounded; 0 or -errno.
 */
static inline int sec_rmtree_at(int parentfd, const char *name, unsigned depth)
{
	uint64_t deadline = sb_now_ms() + 15000;
	unsigned backoff = 1;
	int fd, r;

	fd = openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (depth == 0) {
		int k = openat(fd, "cgroup.kill", O_WRONLY | O_CLOEXEC);

		if (k >= 0) {
			if (write(k, "1", 1) < 0) {
				/* not fatal: rmdir below retries */
			}
			close(k);
		}
	}
	{
		int dfd = dup(fd);
		DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
		struct dirent *e;
		char **names = NULL;
		size_t n = 0;

		while (d && (e = readdir(d))) {
			char **nv;

			if (e->d_type != DT_DIR || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			nv = realloc(names, (n + 1) * sizeof(*names));
			if (!nv)
				break;
			names = nv;
			names[n++] = strdup(e->d_name);
		}
		if (d)
			closedir(d);
		for (size_t i = 0; i < n; i++) {
			if (names[i])
				sec_rmtree_at(fd, names[i], depth + 1);
			free(names[i]);
		}
		free(names);
	}
	close(fd);
	for (;;) {
		r = unlinkat(parentfd, name, AT_REMOVEDIR);
		if (r == 0 || errno == ENOENT)
			return 0;
		if (sb_now_ms() > deadline)
			return -errno;
		sb_reap();
		sb_sleep_ms(backoff);
		if (backoff < 64)
			backoff *= 2;
	}
}

static inline int sec_rmtree(const char *path)
{
	char *copy = strdup(path), *slash;
	int dfd, r;

	if (!copy)
		return -ENOMEM;
	slash = strrchr(copy, '/');
	if (!slash || !strstr(path, "/cgkill-test.")) {
		free(copy);
		return -EINVAL;
	}
	*slash = '\0';
	dfd = open(copy, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	r = dfd < 0 ? -errno : sec_rmtree_at(dfd, slash + 1, 0);
	if (dfd >= 0)
		close(dfd);
	free(copy);
	return r;
}

/* ---- a target with sentinels around it ---- */

/* <box>/<name>/{T,S}: a parent and a sibling with a sentinel each. */
struct sec_scene {
	char name[64];
	char *parent, *target, *sibling;
	struct sb_sentinels sent;
};

static inline bool sec_scene_start(struct sec_scene *s, const char *box, const char *name)
{
	char rel[128];
	int r;

	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->parent = sb_mkdir(box, name);
	snprintf(rel, sizeof(rel), "%s/T", name);
	s->target = sb_mkdir(box, rel);
	snprintf(rel, sizeof(rel), "%s/S", name);
	s->sibling = sb_mkdir(box, rel);
	if (!s->parent || !s->target || !s->sibling) {
		ok(false, "%s: create the cgroups: %s", name, strerror(errno));
		return false;
	}
	r = sb_sentinels_start(&s->sent, s->parent, s->sibling);
	if (r < 0) {
		ok(false, "%s: start the sentinels: %s", name, strerror(-r));
		return false;
	}
	return true;
}

/* Check the sentinels, remove the scene's cgroups. */
static inline void sec_scene_end(struct sec_scene *s)
{
	if (s->sent.n)
		sb_sentinels_check(&s->sent, s->name);
	if (s->parent) {
		int r = sb_destroy(s->parent);

		ok(r == 0, "%s: cgroups removed", s->name);
	}
	sb_reap();
	free(s->parent);
	free(s->target);
	free(s->sibling);
	memset(s, 0, sizeof(*s));
}

#endif
