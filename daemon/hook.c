/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ExecPreKill= and ExecPostKill=: run a command, no shell, with the
 * daemon's facts in its environment, for its timeout at most. The hook
 * leads a process group of its own, so that at its timeout the hook and
 * whatever it started are killed together: the group is signalled while
 * its leader is still our unreaped child, so its id cannot have been
 * reused by anyone else.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgkilld.h"

/* The child: what the daemon blocked for its signalfd and ignored is
 * undone, standard input is /dev/null, nothing else is inherited. */
static void hook_exec(char *const argv[], char *const env[])
{
	sigset_t none;
	int null;

	setpgid(0, 0);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int s = 1; s < NSIG; s++)
		signal(s, SIG_DFL);
	null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null >= 0)
		dup2(null, STDIN_FILENO);
	syscall(SYS_close_range, 3U, ~0U, 0U);
	execve(argv[0], argv, env);
	dprintf(STDERR_FILENO, "cgkilld: hook %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

int hook_run(char *const argv[], char *const env[], uint64_t timeout_ms)
{
	uint64_t deadline = now_ms() + timeout_ms;
	int pidfd, status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		hook_exec(argv, env);
	/* also here: the group exists before we may need to signal it */
	setpgid(pid, pid);
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	for (;;) {
		uint64_t t = now_ms();
		struct pollfd p = { .fd = pidfd, .events = POLLIN };
		int slice;

		if (t >= deadline) {
			kill(-pid, SIGKILL);
			waitpid(pid, &status, 0);
			if (pidfd >= 0)
				close(pidfd);
			return -ETIMEDOUT;
		}
		/* the watchdog is fed while a hook runs */
		slice = (int)(deadline - t < 1000 ? deadline - t : 1000);
		if (pidfd >= 0)
			poll(&p, 1, slice);
		else
			usleep(10000);
		watchdog_ping(false);
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
	}
	if (pidfd >= 0)
		close(pidfd);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
