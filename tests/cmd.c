// SPDX-License-Identifier: LGPL-2.1-or-later
/* Run the cgkill command and check its JSON with python3; see cmd.h. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "sandbox.h"
#include "tap.h"

#define MAX_ARGS 64

uid_t cmd_uid;
gid_t cmd_gid;

const char *cmd_path(void)
{
	const char *p = getenv("CGKILL");

	return p && *p ? p : "build/cgkill";
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t len = 0;

	if (f) {
		FILE *m = open_memstream(&buf, &len);
		char chunk[4096];
		size_t n;

		while (m && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
			fwrite(chunk, 1, n, m);
		if (m)
			fclose(m);
		fclose(f);
	}
	return buf ? buf : strdup("");
}

static int tmpfile_path(char *buf, size_t size, const char *what)
{
	int fd;

	snprintf(buf, size, "/tmp/cgkill-test.%d.%s.XXXXXX", (int)getpid(), what);
	fd = mkostemp(buf, O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int cmd_startv(struct cmd *c, const char *input, const char *const *argv)
{
	const char *args[MAX_ARGS + 2];
	char in_path[64];
	int out, err, in = -1;
	size_t n = 0, used;

	memset(c, 0, sizeof(*c));
	c->status = -1;
	args[n++] = cmd_path();
	used = (size_t)snprintf(c->line, sizeof(c->line), "cgkill");
	for (; argv[n - 1] && n <= MAX_ARGS; n++) {
		args[n] = argv[n - 1];
		if (used < sizeof(c->line))
			used += (size_t)snprintf(c->line + used, sizeof(c->line) - used, " %s",
						 argv[n - 1]);
	}
	args[n] = NULL;

	out = tmpfile_path(c->out_path, sizeof(c->out_path), "out");
	err = tmpfile_path(c->err_path, sizeof(c->err_path), "err");
	if (input) {
		in = tmpfile_path(in_path, sizeof(in_path), "in");
		if (in >= 0) {
			if (write(in, input, strlen(input)) < 0 || lseek(in, 0, SEEK_SET) < 0) {
				close(in);
				in = -1;
			}
			unlink(in_path);
		}
	}
	if (out < 0 || err < 0 || (input && in < 0)) {
		if (out >= 0)
			close(out);
		if (err >= 0)
			close(err);
		if (in >= 0)
			close(in);
		return -EIO;
	}
	c->start_ms = sb_now_ms();
	c->pid = sb_fork();
	if (c->pid == 0) {
		if (in < 0)
			in = open("/dev/null", O_RDONLY | O_CLOEXEC);
		dup2(in, 0);
		dup2(out, 1);
		dup2(err, 2);
		if (cmd_uid && (setgroups(0, NULL) < 0 || setresgid(cmd_gid, cmd_gid, cmd_gid) < 0 ||
				setresuid(cmd_uid, cmd_uid, cmd_uid) < 0)) {
			dprintf(2, "cannot become uid %d: %m\n", (int)cmd_uid);
			_exit(126);
		}
		execv(args[0], (char *const *)args);
		dprintf(2, "exec %s: %m\n", args[0]);
		_exit(127);
	}
	close(out);
	close(err);
	if (in >= 0)
		close(in);
	return c->pid < 0 ? -errno : 0;
}

static int start_va(struct cmd *c, const char *input, va_list ap)
{
	const char *argv[MAX_ARGS + 1];
	size_t n = 0;
	const char *a;

	while ((a = va_arg(ap, const char *)) && n < MAX_ARGS)
		argv[n++] = a;
	argv[n] = NULL;
	return cmd_startv(c, input, argv);
}

int cmd_start(struct cmd *c, const char *input, ...)
{
	va_list ap;
	int r;

	va_start(ap, input);
	r = start_va(c, input, ap);
	va_end(ap);
	return r;
}

int cmd_finish(struct cmd *c, unsigned timeout_ms)
{
	int st = c->pid > 0 ? sb_wait_reaped(c->pid, timeout_ms) : -ECHILD;

	if (st == -ETIMEDOUT) {
		diag("%s: still running after %u ms: killing it", c->line, timeout_ms);
		kill(c->pid, SIGKILL);
		sb_wait_reaped(c->pid, 2000);
		c->status = -1;
	} else if (st >= 0) {
		c->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	}
	c->ms = sb_now_ms() - c->start_ms;
	c->out = slurp(c->out_path);
	c->err = slurp(c->err_path);
	unlink(c->out_path);
	unlink(c->err_path);
	return st < 0 ? st : 0;
}

static int run_va(struct cmd *c, const char *input, unsigned timeout_ms, va_list ap)
{
	int r = start_va(c, input, ap);

	if (r < 0) {
		c->out = strdup("");
		c->err = strdup("");
		return r;
	}
	return cmd_finish(c, timeout_ms);
}

int cmd_run(struct cmd *c, unsigned timeout_ms, ...)
{
	va_list ap;
	int r;

	va_start(ap, timeout_ms);
	r = run_va(c, NULL, timeout_ms, ap);
	va_end(ap);
	return r;
}

int cmd_run_input(struct cmd *c, const char *input, unsigned timeout_ms, ...)
{
	va_list ap;
	int r;

	va_start(ap, timeout_ms);
	r = run_va(c, input, timeout_ms, ap);
	va_end(ap);
	return r;
}

void cmd_free(struct cmd *c)
{
	free(c->out);
	free(c->err);
	c->out = c->err = NULL;
}

/* Strict: bytes must be UTF-8, one document, no duplicate keys. */
static const char py_eval[] =
	"import json, sys\n"
	"def pairs(kv):\n"
	"    keys = [k for k, _ in kv]\n"
	"    if len(keys) != len(set(keys)):\n"
	"        raise ValueError('duplicate key')\n"
	"    return dict(kv)\n"
	"try:\n"
	"    d = json.loads(open(sys.argv[1], 'rb').read().decode('utf-8'),\n"
	"                   object_pairs_hook=pairs)\n"
	"except Exception as e:\n"
	"    print('INVALID:', e)\n"
	"    sys.exit(0)\n"
	"v = eval(sys.argv[2])\n"
	"sys.stdout.write(v if isinstance(v, str) else json.dumps(v))\n";

bool have_python(void)
{
	static int have = -1;

	if (have < 0)
		have = system("python3 -c '' >/dev/null 2>&1") == 0;
	return have;
}

char *json_eval(const char *text, const char *expr)
{
	char path[64], *res = NULL;
	struct cmd c = { 0 };
	size_t len = strlen(text);
	int fd, st;

	if (!have_python())
		return NULL;
	fd = tmpfile_path(path, sizeof(path), "json");
	if (fd < 0)
		return strdup("INVALID: cannot write a temporary file");
	if (write(fd, text, len) != (ssize_t)len) {
		close(fd);
		unlink(path);
		return strdup("INVALID: cannot write a temporary file");
	}
	close(fd);

	/* Same capture as for cgkill, but running python3. */
	fd = tmpfile_path(c.out_path, sizeof(c.out_path), "py");
	if (fd < 0) {
		unlink(path);
		return strdup("INVALID: cannot write a temporary file");
	}
	c.pid = sb_fork();
	if (c.pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		dup2(null, 0);
		dup2(fd, 1);
		execlp("python3", "python3", "-c", py_eval, path, expr, (char *)NULL);
		_exit(127);
	}
	close(fd);
	st = c.pid > 0 ? sb_wait_reaped(c.pid, 60000) : -ECHILD;
	if (st == -ETIMEDOUT)
		kill(c.pid, SIGKILL);
	res = slurp(c.out_path);
	unlink(c.out_path);
	unlink(path);
	if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		char *msg;

		if (asprintf(&msg, "INVALID: python3 failed on %s (wait status %d): %s", expr, st,
			     res) < 0)
			msg = NULL;
		free(res);
		return msg;
	}
	return res;
}

bool json_valid(const char *text)
{
	char *v = json_eval(text, "'valid'");
	bool good = v && strcmp(v, "valid") == 0;

	if (v && !good)
		diag("%s", v);
	free(v);
	return good;
}

bool exit_is(const struct cmd *c, int want)
{
	bool good = is_int(c->status, want, "%s: exit status %d", c->line, want);

	if (!good)
		diag("stderr: %s", c->err);
	return good;
}

bool json_is(const struct cmd *c, const char *expr, const char *want)
{
	char *v = json_eval(c->out, expr);
	bool good;

	if (!v) {
		skip("python3 is not available to check %s", expr);
		return true;
	}
	good = is_str(v, want, "%s: %s", c->line, expr);
	if (!good && strncmp(v, "INVALID", 7) == 0)
		diag("stdout was: %s", c->out);
	free(v);
	return good;
}

bool file_has(const char *dir, const char *file, const char *text)
{
	char buf[1024];

	if (sb_read(dir, file, buf, sizeof(buf)) < 0)
		return false;
	return strstr(buf, text) != NULL;
}

bool scene_start(struct scene *s, const char *box, const char *name)
{
	char rel[256];

	memset(s, 0, sizeof(*s));
	s->name = name;
	s->parent = sb_mkdir(box, name);
	snprintf(rel, sizeof(rel), "%s/T", name);
	s->target = sb_mkdir(box, rel);
	snprintf(rel, sizeof(rel), "%s/S", name);
	s->sibling = sb_mkdir(box, rel);
	if (!s->parent || !s->target || !s->sibling)
		return ok(false, "%s: create the cgroups: %m", name);
	if (sb_sentinels_start(&s->sent, s->parent, s->sibling) < 0)
		return ok(false, "%s: start the sentinels", name);
	return true;
}

void scene_end(struct scene *s)
{
	if (s->sent.n)
		sb_sentinels_check(&s->sent, s->name);
	if (s->parent && sb_destroy(s->parent) < 0)
		diag("%s: cleanup of %s failed", s->name, s->parent);
	sb_reap();
	free(s->parent);
	free(s->target);
	free(s->sibling);
	memset(s, 0, sizeof(*s));
}

unsigned count_lines_with(const char *text, const char *needle)
{
	unsigned n = 0;

	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);

		if (memmem(line, len, needle, strlen(needle)))
			n++;
		line = end ? end + 1 : NULL;
	}
	return n;
}

/* The fields of a line, split at runs of blanks, joined by one space. */
static size_t fields(const char *line, size_t len, char *buf, size_t size)
{
	size_t n = 0;

	for (size_t i = 0; i < len && n + 1 < size; i++) {
		if (line[i] != ' ' && line[i] != '\t')
			buf[n++] = line[i];
		else if (n && buf[n - 1] != ' ')
			buf[n++] = ' ';
	}
	if (n && buf[n - 1] == ' ')
		n--;
	buf[n] = '\0';
	return n;
}

unsigned count_rows(const char *text, const char *row)
{
	char want[1024], got[1024];
	unsigned n = 0;

	fields(row, strlen(row), want, sizeof(want));
	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);

		fields(line, len, got, sizeof(got));
		n += strcmp(got, want) == 0;
		line = end ? end + 1 : NULL;
	}
	return n;
}

/* ---- recording processes ---- */

static int rec_fds[2] = { -1, -1 };

void rec_init(void)
{
	/* CLOEXEC: the cgkill command must not hold the pipe open. */
	if (pipe2(rec_fds, O_CLOEXEC) < 0)
		bail_out("cannot create the record pipe: %m");
	fcntl(rec_fds[0], F_SETFL, O_NONBLOCK);
}

static void rec_write(int kind, int sig, pid_t sender)
{
	struct rec r = { .kind = kind, .pid = getpid(), .sig = sig, .sender = sender };

	/* Smaller than PIPE_BUF: atomic, never interleaved. */
	if (write(rec_fds[1], &r, sizeof(r)) < 0)
		_exit(5);
}

static bool rec_fork_flag, rec_exit_flag;

static void on_record(int sig, siginfo_t *si, void *uc)
{
	sigset_t none;

	(void)uc;
	rec_write(REC_SIG, sig, si->si_pid);
	if (rec_exit_flag)
		_exit(0);
	if (rec_fork_flag && fork() == 0) {
		rec_write(REC_BORN, sig, getppid());
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		for (;;)
			pause();
	}
}

static void *rec_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

pid_t rec_spawn(const struct rec_spec *s)
{
	int sync[2], err = 0;
	pid_t pid;

	if (pipe2(sync, O_CLOEXEC) < 0)
		return -errno;
	pid = sb_fork();
	if (pid < 0) {
		err = -errno;
		close(sync[0]);
		close(sync[1]);
		return err;
	}
	if (pid == 0) {
		struct sigaction sa = { .sa_sigaction = on_record, .sa_flags = SA_SIGINFO | SA_RESTART };

		close(sync[0]);
		rec_fork_flag = s->fork_on_signal;
		rec_exit_flag = s->exit_on_signal;
		err = sb_join(s->cgroup);
		sigemptyset(&sa.sa_mask);
		for (int i = 0; !err && i < 8 && s->record[i]; i++)
			if (sigaction(s->record[i], &sa, NULL) < 0)
				err = -errno;
		for (int i = 0; !err && i < 8 && s->ignore[i]; i++)
			if (signal(s->ignore[i], SIG_IGN) == SIG_ERR)
				err = -errno;
		if (!err && s->comm && prctl(PR_SET_NAME, s->comm) < 0)
			err = -errno;
		for (unsigned i = 0; !err && i < s->threads; i++) {
			pthread_t t;

			if (pthread_create(&t, NULL, rec_thread, NULL) != 0)
				err = -EAGAIN;
		}
		if (!err && s->uid && (setgroups(0, NULL) < 0 || setresgid(s->uid, s->uid, s->uid) < 0 ||
				       setresuid(s->uid, s->uid, s->uid) < 0))
			err = -errno;
		if (write(sync[1], &err, sizeof(err)) < 0 || err)
			_exit(2);
		close(sync[1]);
		for (;;)
			pause();
	}
	close(sync[1]);
	{
		struct pollfd pfd = { .fd = sync[0], .events = POLLIN };

		if (poll(&pfd, 1, 10000) <= 0 || read(sync[0], &err, sizeof(err)) != sizeof(err))
			err = -ETIMEDOUT;
	}
	close(sync[0]);
	if (err < 0) {
		kill(pid, SIGKILL);
		sb_wait_reaped(pid, 2000);
		return err;
	}
	return pid;
}

size_t rec_collect(struct rec *v, size_t max, size_t want, unsigned timeout_ms,
		   unsigned quiet_ms)
{
	uint64_t deadline = sb_now_ms() + timeout_ms;
	size_t n = 0;

	for (;;) {
		struct pollfd pfd = { .fd = rec_fds[0], .events = POLLIN };
		uint64_t now = sb_now_ms();
		struct rec r;
		int wait;

		while (read(rec_fds[0], &r, sizeof(r)) == (ssize_t)sizeof(r))
			if (n < max)
				v[n++] = r;
		if (now >= deadline)
			break;
		/* Once enough arrived, only wait quiet_ms for extra ones. */
		wait = n >= want ? (int)quiet_ms : (int)(deadline - now);
		if (poll(&pfd, 1, wait) == 0 && n >= want)
			break;
	}
	return n;
}

void rec_drain(void)
{
	struct rec r;

	while (read(rec_fds[0], &r, sizeof(r)) == (ssize_t)sizeof(r))
		;
}

pid_t recorder(const char *cg, int sig)
{
	return rec_spawn(&(struct rec_spec){ .cgroup = cg, .record = { sig } });
}

pid_t term_ignorer(const char *cg)
{
	return rec_spawn(&(struct rec_spec){ .cgroup = cg, .ignore = { SIGTERM } });
}

pid_t term_exiter(const char *cg)
{
	return rec_spawn(&(struct rec_spec){ .cgroup = cg, .record = { SIGTERM },
					     .exit_on_signal = true });
}

unsigned rec_count(const struct rec *v, size_t n, int kind, pid_t pid, int sig)
{
	unsigned k = 0;

	for (size_t i = 0; i < n; i++)
		k += v[i].kind == kind && (!pid || v[i].pid == pid) && (!sig || v[i].sig == sig);
	return k;
}

char proc_state(pid_t pid)
{
	char dir[64], buf[1024], *rp;

	snprintf(dir, sizeof(dir), "/proc/%d", (int)pid);
	if (sb_read(dir, "stat", buf, sizeof(buf)) <= 0)
		return 0;
	rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' ? rp[2] : 0;
}

bool wait_state(pid_t pid, char state, unsigned timeout_ms)
{
	uint64_t deadline = sb_now_ms() + timeout_ms;

	for (;;) {
		if (proc_state(pid) == state)
			return true;
		if (sb_now_ms() >= deadline)
			return false;
		sb_sleep_ms(5);
	}
}
