/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/*
 * --unit and --user-unit: the cgroup of a systemd unit, as its service
 * manager tells it. "systemctl show" is run without a shell and with a
 * clean environment, its output captured and its time bounded; no
 * libsystemd. The answer is the cgroup as /proc/PID/cgroup shows it, which
 * the library resolves against the v2 mount.
 */
#define SYSTEMCTL_TIMEOUT_MS 10000

static void __attribute__((noreturn, format(printf, 1, 2))) unit_fail(const char *fmt, ...)
{
	va_list ap;

	fputs("cgkill: ", stderr);
	va_start(ap, fmt);
	vsay(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_ERROR);
}

/* The name systemctl would use: the characters systemd allows, and
 * ".service" added to a name without a unit type, as systemctl does. */
static char *unit_name(const char *opt, const char *arg)
{
	static const char *const types[] = {
		"service", "socket", "target", "device", "mount", "automount", "swap",
		"timer", "path", "slice", "scope",
	};
	const char *dot = strrchr(arg, '.');
	char *name;

	if (!*arg || strlen(arg) > 255 || strspn(arg, "abcdefghijklmnopqrstuvwxyz"
		"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:-_.\\@") != strlen(arg))
		usage_error("%s: invalid unit name: %s", opt, arg);
	for (size_t i = 0; dot && i < sizeof(types) / sizeof(*types); i++)
		if (dot > arg && strcmp(dot + 1, types[i]) == 0)
			return strdup(arg);
	if (asprintf(&name, "%s.service", arg) < 0)
		return NULL;
	return name;
}

static uint64_t unit_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* systemctl from a fixed place, never found on the caller's PATH: cgkill
 * runs as root, from scripts and through sudo with a PATH that may not be
 * root's own, and the first "systemctl" on it would run as root. */
static const char *const systemctl_paths[] = { "/usr/bin/systemctl", "/bin/systemctl" };
#define SYSTEMCTL_WHERE "/usr/bin or /bin"

static const char *systemctl_path(void)
{
	for (size_t i = 0; i < sizeof(systemctl_paths) / sizeof(*systemctl_paths); i++)
		if (faccessat(AT_FDCWD, systemctl_paths[i], X_OK, AT_EACCESS) == 0)
			return systemctl_paths[i];
	return NULL;
}

/* Run systemctl with argv, stdin from /dev/null, and collect up to size - 1
 * bytes of each output (more sets *overflow). Its wait status; -ENOENT if
 * there is no systemctl, -ETIMEDOUT if it was killed at the deadline. */
static int run_systemctl(char *const argv[], char *const envp[], char *out, size_t out_size,
			 char *err, size_t err_size, bool *overflow)
{
	int outp[2] = { -1, -1 }, errp[2] = { -1, -1 }, st = 0, r;
	uint64_t deadline = unit_now_ms() + SYSTEMCTL_TIMEOUT_MS;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, all;
	size_t len[2] = { 0, 0 };
	const char *path;
	pid_t pid;

	*overflow = false;
	if (pipe2(outp, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		r = -errno;
		if (outp[0] >= 0) {
			close(outp[0]);
			close(outp[1]);
		}
		return r;
	}
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, outp[1], 1);
	posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	path = systemctl_path();
	r = path ? -posix_spawn(&pid, path, &fa, &attr, argv, envp) : -ENOENT;
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(outp[1]);
	close(errp[1]);

	struct pollfd pfd[2] = {
		{ .fd = r ? -1 : outp[0], .events = POLLIN },
		{ .fd = r ? -1 : errp[0], .events = POLLIN },
	};
	char *buf[2] = { out, err };
	size_t size[2] = { out_size, err_size };

	while (pfd[0].fd >= 0 || pfd[1].fd >= 0) {
		uint64_t now = unit_now_ms();

		if (now >= deadline || (poll(pfd, 2, (int)(deadline - now)) < 0 && errno != EINTR))
			break;
		for (int i = 0; i < 2; i++) {
			char chunk[4096];
			ssize_t n;

			if (pfd[i].fd < 0 || !pfd[i].revents)
				continue;
			n = read(pfd[i].fd, chunk, sizeof(chunk));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				pfd[i].fd = -1;
				continue;
			}
			if (len[i] + (size_t)n >= size[i]) {
				n = (ssize_t)(size[i] - 1 - len[i]);
				if (i == 0)
					*overflow = true;
			}
			memcpy(buf[i] + len[i], chunk, (size_t)n);
			len[i] += (size_t)n;
		}
	}
	close(outp[0]);
	close(errp[0]);
	out[len[0]] = '\0';
	err[len[1]] = '\0';
	if (r)
		return r;
	/* Its outputs are closed; it may still be on its way out. */
	while ((r = waitpid(pid, &st, WNOHANG)) == 0 && unit_now_ms() < deadline)
		usleep(1000);
	if (r == pid)
		return st;
	if (r < 0)
		return -errno;
	/* Not reaped yet, so the pid is still that child's. */
	kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return -ETIMEDOUT;
}

char *unit_cgroup(const char *opt, const char *arg, bool user)
{
	char out[8192] = "", err[1024] = "", *env[5], *name, *cgroup;
	const char *vars[] = { "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS" };
	const char *manager = user ? "systemd user service manager" : "systemd service manager";
	size_t n_env = 0;
	bool overflow;
	int st;

	name = unit_name(opt, arg);
	if (!name)
		unit_fail("%s %s: out of memory", opt, arg);
	/* sd_booted(): the system manager is systemd only if this exists. */
	if (!user && access("/run/systemd/system", F_OK) < 0)
		unit_fail("%s %s: no %s here", opt, arg, manager);
	if (user && !secure_getenv(vars[0]) && !secure_getenv(vars[1]))
		unit_fail("%s %s: no %s here (neither %s nor %s is set)", opt, arg, manager,
			  vars[0], vars[1]);
	/* The user manager is found through these, and only these are passed. */
	env[n_env++] = "LC_ALL=C";
	env[n_env++] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
	for (size_t i = 0; user && i < sizeof(vars) / sizeof(*vars); i++) {
		const char *v = secure_getenv(vars[i]);

		if (v && asprintf(&env[n_env], "%s=%s", vars[i], v) >= 0)
			n_env++;
	}
	env[n_env] = NULL;

	char *argv[] = { "systemctl", user ? "--user" : "--system", "show", "--no-pager",
			 "--property=ControlGroup", "--value", "--", name, NULL };

	struct sigaction dfl = { .sa_handler = SIG_DFL }, old;

	/* An inherited SIG_IGN would reap systemctl before its status is read. */
	sigaction(SIGCHLD, &dfl, &old);
	st = run_systemctl(argv, env, out, sizeof(out), err, sizeof(err), &overflow);
	sigaction(SIGCHLD, &old, NULL);
	for (size_t i = 2; i < n_env; i++)
		free(env[i]);
	err[strcspn(err, "\n")] = '\0';
	if (st == -ENOENT)
		unit_fail("%s %s: no %s here (no systemctl in " SYSTEMCTL_WHERE ")", opt, arg, manager);
	if (st == -ETIMEDOUT)
		unit_fail("%s %s: systemctl did not answer within %d s", opt, name,
			  SYSTEMCTL_TIMEOUT_MS / 1000);
	if (st < 0)
		unit_fail("%s %s: cannot run systemctl (%s)", opt, name, strerrorname_np(-st) ?: "?");
	/* Whatever the cause, a failure to reach the manager starts so. */
	if (WIFEXITED(st) && WEXITSTATUS(st) && strncmp(err, "Failed to connect to bus", 24) == 0)
		unit_fail("%s %s: no %s here (systemctl: %s)", opt, arg, manager, err);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		unit_fail("%s %s: systemctl failed (%s %d)%s%s", opt, name,
			  WIFEXITED(st) ? "exit status" : "signal",
			  WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), *err ? ": " : "", err);
	if (strlen(out) && out[strlen(out) - 1] == '\n')
		out[strlen(out) - 1] = '\0';
	if (!*out)
		unit_fail("%s %s: the unit has no cgroup (not running?)", opt, name);
	if (overflow || out[0] != '/' || strchr(out, '\n'))
		unit_fail("%s %s: unexpected answer from systemctl: %s", opt, name, out);
	cgroup = strdup(out);
	if (!cgroup)
		unit_fail("%s %s: out of memory", opt, name);
	free(name);
	return cgroup;
}
