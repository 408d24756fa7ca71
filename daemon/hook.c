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
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgkilld.h"

unsigned long long hook_nofile_soft = 1024;

/* The child: what the daemon gave itself is undone (the signals blocked
 * for its signalfd, oom_score_adj -1000, nice -10, the open file limit),
 * so that a hook is an ordinary process the kernel's OOM killer may take;
 * standard input is /dev/null, no other file is inherited. If the program
 * cannot start, its errno goes up the pipe errfd (closed by a successful
 * exec): the parent reports it as a negative errno (cgkilld.conf(5)), and
 * the log line it makes has its priority. */
static void hook_exec(char *const argv[], char *const env[], int errfd)
{
	struct rlimit rl;
	sigset_t none;
	int fd, e;

	setpgid(0, 0);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int s = 1; s < NSIG; s++)
		signal(s, SIG_DFL);
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "0", 1) < 0)
			dprintf(STDERR_FILENO, "<%d>hook %s: oom_score_adj 0: %s\n", LOG_PRI_WARNING, argv[0],
				strerror(errno));
		close(fd);
	}
	setpriority(PRIO_PROCESS, 0, 0);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && hook_nofile_soft < rl.rlim_cur) {
		rl.rlim_cur = hook_nofile_soft;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		dup2(fd, STDIN_FILENO);
	/* errfd becomes 3, close-on-exec; every other file is closed */
	if (errfd != 3 && (dup3(errfd, 3, O_CLOEXEC) < 0 || close(errfd) < 0)) {
		e = errno;
		goto fail;
	}
	errfd = 3;
	syscall(SYS_close_range, 4U, ~0U, 0U);
	execve(argv[0], argv, env);
	e = errno;
fail:
	while (write(errfd, &e, sizeof(e)) < 0 && errno == EINTR)
		;
	_exit(127);
}

/* The errno the child sent before it could exec, 0 if the exec happened
 * (the pipe closed with nothing in it) or the deadline came first (the
 * caller kills it then); the watchdog is fed meanwhile. */
static int exec_errno(int rfd, uint64_t deadline)
{
	int e = 0;
	ssize_t n;

	for (;;) {
		uint64_t t = now_ms();
		struct pollfd p = { .fd = rfd, .events = POLLIN };

		if (t >= deadline)
			return 0;
		if (poll(&p, 1, (int)(deadline - t < 1000 ? deadline - t : 1000)) > 0)
			break;
		watchdog_ping(false);
	}
	do
		n = read(rfd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(e) && e > 0 ? e : 0;
}

/* After SIGKILL, how long to wait for the hook to end: one stuck in the
 * kernel (D state) must not stop the daemon; it is reaped later. */
#define HOOK_REAP_MS 2000

int hook_run(char *const argv[], char *const env[], uint64_t timeout_ms)
{
	uint64_t deadline = now_ms() + timeout_ms;
	int pidfd, status, errp[2], e;
	pid_t pid;

	/* hooks left unreaped by an earlier timeout (the daemon has no
	 * other children) */
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	if (pipe2(errp, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		e = errno;
		close(errp[0]);
		close(errp[1]);
		return -e;
	}
	if (pid == 0) {
		close(errp[0]);
		hook_exec(argv, env, errp[1]);
	}
	close(errp[1]);
	/* also here: the group exists before we may need to signal it */
	setpgid(pid, pid);
	/* until the exec or its failure: no wait on the hook's own work */
	e = exec_errno(errp[0], deadline);
	close(errp[0]);
	if (e) {
		waitpid(pid, NULL, 0);
		return -e;
	}
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	for (;;) {
		uint64_t t = now_ms();
		struct pollfd p = { .fd = pidfd, .events = POLLIN };
		int slice;

		if (t >= deadline) {
			struct pollfd gone = { .fd = pidfd, .events = POLLIN };

			kill(-pid, SIGKILL);
			if (pidfd >= 0 && poll(&gone, 1, HOOK_REAP_MS) > 0)
				waitpid(pid, &status, 0);
			else if (waitpid(pid, &status, WNOHANG) != pid)
				log_msg(LOG_PRI_WARNING, "hook %s (pid %d) does not end after SIGKILL; left to reap later",
					argv[0], pid);
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
		return 256 + WTERMSIG(status);	/* apart from any exit status */
	return WEXITSTATUS(status);
}
