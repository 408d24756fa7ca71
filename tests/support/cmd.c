// SPDX-License-Identifier: LGPL-2.1-or-later
/* Run the cgkill command and look into its output; see cmd.h. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgfile.h"
#include "cmd.h"
#include "sandbox.h"
#include "spawn.h"
#include "tap.h"

#define MAX_ARGS 64

const char *cmd_path(void)
{
	static char path[PATH_MAX];
	const char *env = getenv("CGKILL");
	ssize_t n;
	char *slash;

	if (env && *env)
		return env;
	if (path[0])
		return path;
	/* build/tests/test-x: build/cgkill */
	n = readlink("/proc/self/exe", path, sizeof(path) - 16);
	if (n < 0)
		return "build/cgkill";
	path[n] = '\0';
	for (int i = 0; i < 2 && (slash = strrchr(path, '/')); i++)
		*slash = '\0';
	strcat(path, "/cgkill");
	return path;
}

const char *self_comm(void)
{
	static char comm[16];

	snprintf(comm, sizeof(comm), "%s", program_invocation_short_name);
	return comm;
}

/* The whole of a memory file, NUL-terminated (never NULL). */
static char *slurp(int fd)
{
	off_t len = fd >= 0 ? lseek(fd, 0, SEEK_END) : -1;
	char *buf = malloc(len > 0 ? (size_t)len + 1 : 1);
	ssize_t n = len > 0 && buf ? pread(fd, buf, (size_t)len, 0) : 0;

	if (!buf)
		return strdup("");
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* In the child: the environment, the cgroup, the user; then exec. */
static __attribute__((noreturn)) void exec_child(const struct cmd_opts *o, const char *const *args,
						 int in, int out, int err)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (in < 0)
		in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	dup2(in, 0);
	dup2(out, 1);
	dup2(err, 2);
	for (int i = 0; o && i < 4 && o->env[i]; i++) {
		if (strchr(o->env[i], '='))
			putenv((char *)o->env[i]);
		else
			unsetenv(o->env[i]);
	}
	if (o && o->join && sb_join(o->join) < 0)
		_exit(121);
	if (o && o->uid && (setgroups(0, NULL) < 0 || setresgid(o->uid, o->uid, o->uid) < 0 ||
			    setresuid(o->uid, o->uid, o->uid) < 0)) {
		dprintf(2, "cannot become uid %d: %m\n", (int)o->uid);
		_exit(120);
	}
	if (strchr(args[0], '/'))
		execv(args[0], (char *const *)args);
	else
		execvp(args[0], (char *const *)args);
	dprintf(2, "exec %s: %m\n", args[0]);
	_exit(127);
}

int cmd_startv(struct cmd *c, const struct cmd_opts *o, const char *const *argv)
{
	const char *args[MAX_ARGS + 2];
	size_t n = 0, used = 0;
	int in = -1;

	memset(c, 0, sizeof(*c));
	c->status = -1;
	if (!o || !o->program)
		args[n++] = cmd_path();
	for (; *argv && n <= MAX_ARGS; argv++)
		args[n++] = *argv;
	args[n] = NULL;
	for (size_t i = 0; i < n && used < sizeof(c->line); i++)
		used += (size_t)snprintf(c->line + used, sizeof(c->line) - used, "%s%s",
					 i ? " " : "", i || (o && o->program) ? args[i] : "cgkill");
	c->out_fd = memfd_create("cmd-out", MFD_CLOEXEC);
	c->err_fd = memfd_create("cmd-err", MFD_CLOEXEC);
	if (o && o->input) {
		size_t len = strlen(o->input);

		in = memfd_create("cmd-in", MFD_CLOEXEC);
		if (in >= 0 && (write(in, o->input, len) != (ssize_t)len || lseek(in, 0, SEEK_SET) < 0)) {
			close(in);
			in = -1;
		}
	}
	if (c->out_fd < 0 || c->err_fd < 0 || (o && o->input && in < 0)) {
		if (in >= 0)
			close(in);
		return -EIO;
	}
	c->start_ms = sb_now_ms();
	c->pid = sb_fork();
	if (c->pid == 0)
		exec_child(o, args, in, c->out_fd, c->err_fd);
	if (in >= 0)
		close(in);
	return c->pid < 0 ? -errno : 0;
}

static int startv_va(struct cmd *c, const struct cmd_opts *o, va_list ap)
{
	const char *argv[MAX_ARGS + 1];
	size_t n = 0;
	const char *a;

	while ((a = va_arg(ap, const char *)) && n < MAX_ARGS)
		argv[n++] = a;
	argv[n] = NULL;
	return cmd_startv(c, o, argv);
}

int cmd_start(struct cmd *c, const struct cmd_opts *o, ...)
{
	va_list ap;
	int r;

	va_start(ap, o);
	r = startv_va(c, o, ap);
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
	free(c->out);
	free(c->err);
	c->out = slurp(c->out_fd);
	c->err = slurp(c->err_fd);
	return st < 0 ? st : 0;
}

int cmd_runv(struct cmd *c, const struct cmd_opts *o, unsigned timeout_ms,
	     const char *const *argv)
{
	int r = cmd_startv(c, o, argv);

	return r < 0 ? cmd_finish(c, 0), r : cmd_finish(c, timeout_ms);
}

static int run_va(struct cmd *c, const struct cmd_opts *o, unsigned timeout_ms, va_list ap)
{
	int r = startv_va(c, o, ap);

	return r < 0 ? cmd_finish(c, 0), r : cmd_finish(c, timeout_ms);
}

int cmd_run_opts(struct cmd *c, const struct cmd_opts *o, unsigned timeout_ms, ...)
{
	va_list ap;
	int r;

	va_start(ap, timeout_ms);
	r = run_va(c, o, timeout_ms, ap);
	va_end(ap);
	return r;
}

int cmd_status(char *err, size_t size, unsigned timeout_ms, ...)
{
	struct cmd c;
	va_list ap;
	int status;

	va_start(ap, timeout_ms);
	run_va(&c, NULL, timeout_ms, ap);
	va_end(ap);
	snprintf(err, size, "%s", c.err);
	status = c.status;
	cmd_free(&c);
	return status;
}

void cmd_free(struct cmd *c)
{
	free(c->out);
	free(c->err);
	c->out = c->err = NULL;
	if (c->out_fd > 0)
		close(c->out_fd);
	if (c->err_fd > 0)
		close(c->err_fd);
	c->out_fd = c->err_fd = -1;
}

bool exit_is(const struct cmd *c, int want)
{
	bool good = is_int(c->status, want, "%s: exit status %d", c->line, want);

	if (!good)
		diag("stderr: %s", c->err);
	return good;
}

bool error_format(const char *err, const char *arg, const char *errname)
{
	char want[64];
	size_t len = strcspn(err, "\n");

	snprintf(want, sizeof(want), "(%s)", errname);
	return strncmp(err, "cgkill: ", 8) == 0 && memmem(err, len, arg, strlen(arg)) &&
	       len > strlen(want) && strncmp(err + len - strlen(want), want, strlen(want)) == 0;
}

bool cmd_error_is(const char *arg, const char *errname, int want, const char *what)
{
	struct cmd c;
	bool good;

	cmd_run(&c, 30000, arg, NULL);
	good = is_int(c.status, want, "cgkill %s: exit status %d", what, want);
	if (!ok(error_format(c.err, arg, errname), "cgkill %s: stderr says 'cgkill: %s: ... (%s)'",
		what, arg, errname)) {
		diag("stderr: %s", c.err);
		good = false;
	}
	cmd_free(&c);
	return good;
}

const char *first_line(const char *text, char *buf, size_t size)
{
	snprintf(buf, size, "%.*s", (int)strcspn(text, "\n"), text);
	return buf;
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
