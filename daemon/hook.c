/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ExecPreKill= and ExecPostKill=: run a command, no shell, with the
 * daemon's facts in its environment, for its timeout at most. Nothing
 * waits for it: its pidfd and a timerfd are in the loop's epoll set, and
 * its owner is called back when it ends. The hook
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
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
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
	char why[512];
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
	/* it runs as root: only a program root alone can replace (SECURITY.md) */
	fd = open_trusted(argv[0], false, why, sizeof(why));
	if (fd == -EPERM) {
		dprintf(STDERR_FILENO, "<%d>hook %s: not run: %s\n", LOG_PRI_ERR, argv[0], why);
		e = EPERM;
		goto fail;
	}
	if (fd >= 0)
		close(fd);
	execve(argv[0], argv, env);
	e = errno;
fail:
	while (write(errfd, &e, sizeof(e)) < 0 && errno == EINTR)
		;
	_exit(127);
}

/* After SIGKILL, how long to wait for the hook to end: one stuck in the
 * kernel (D state) must not hold its action; it is reaped later. */
#define HOOK_REAP_MS 2000

/* Hooks killed at their timeout that did not end: reaped when they do
 * (only they: waitpid(-1) would take other hooks' statuses). */
static pid_t stuck[64];
static unsigned nstuck;

static void reap_stuck(void)
{
	for (unsigned i = 0; i < nstuck;)
		if (waitpid(stuck[i], NULL, WNOHANG) != 0)
			stuck[i] = stuck[--nstuck];
		else
			i++;
}

static void timer_set(struct hook *h, uint64_t ms)
{
	struct itimerspec its = { .it_value.tv_sec = (time_t)(ms / 1000),
				  .it_value.tv_nsec = (long)(ms % 1000) * 1000000 + 1 };

	timerfd_settime(h->timer.fd, 0, &its, NULL);
}

/* The hook is over: status to its owner, its files closed. */
static void hook_end(struct hook *h, int status)
{
	src_close(&h->pidfd);
	src_close(&h->timer);
	if (h->errfd >= 0)
		close(h->errfd);
	h->errfd = -1;
	h->pid = 0;
	h->done(h, status);
}

/* Its status once it ended: the errno it sent before it could exec, or
 * its exit status, 256+signal if killed by one. */
static int ended(struct hook *h, int status)
{
	int e = 0;

	if (read(h->errfd, &e, sizeof(e)) == (ssize_t)sizeof(e) && e > 0)
		return -e;
	if (h->killed)
		return -ETIMEDOUT;
	if (WIFSIGNALED(status))
		return 256 + WTERMSIG(status);	/* apart from any exit status */
	return WEXITSTATUS(status);
}

static void pidfd_event(struct src *s)
{
	struct hook *h = s->data;
	int status;

	if (h->pid <= 0 || waitpid(h->pid, &status, WNOHANG) != h->pid)
		return;	/* not yet (a spurious wakeup) */
	hook_end(h, ended(h, status));
}

static void timer_event(struct src *s)
{
	struct hook *h = s->data;
	uint64_t ticks;

	if (h->pid <= 0 || read(s->fd, &ticks, sizeof(ticks)) < 0)
		return;
	if (!h->killed) {
		/* its timeout: the hook and what it started */
		kill(-h->pid, SIGKILL);
		h->killed = true;
		timer_set(h, HOOK_REAP_MS);
		return;
	}
	log_msg(LOG_PRI_WARNING, "hook %s (pid %d) does not end after SIGKILL; left to reap later", h->name,
		(int)h->pid);
	if (nstuck < sizeof(stuck) / sizeof(*stuck))
		stuck[nstuck++] = h->pid;
	hook_end(h, -ETIMEDOUT);
}

int hook_start(struct hook *h, char *const argv[], char *const env[], uint64_t timeout_ms, void (*done)(struct hook *h, int status))
{
	int errp[2], e;
	pid_t pid;

	reap_stuck();
	*h = (struct hook){ .pidfd = { .event = pidfd_event, .fd = -1, .data = h },
			    .timer = { .event = timer_event, .fd = -1, .data = h },
			    .errfd = -1, .name = argv[0], .done = done };
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
	h->pid = pid;
	h->errfd = errp[0];
	h->pidfd.fd = (int)syscall(SYS_pidfd_open, pid, 0);
	h->timer.fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (h->pidfd.fd < 0 || h->timer.fd < 0 || epoll_add(&h->pidfd, EPOLLIN) < 0 ||
	    epoll_add(&h->timer, EPOLLIN) < 0) {
		e = errno ? errno : EMFILE;
		hook_stop(h);
		return -e;
	}
	timer_set(h, timeout_ms);
	return 0;
}

void hook_stop(struct hook *h)
{
	struct pollfd p = { .fd = h->pidfd.fd, .events = POLLIN };

	if (h->pid <= 0)
		return;
	kill(-h->pid, SIGKILL);
	if (h->pidfd.fd >= 0 && poll(&p, 1, HOOK_REAP_MS) > 0)
		waitpid(h->pid, NULL, 0);
	else if (waitpid(h->pid, NULL, WNOHANG) != h->pid && nstuck < sizeof(stuck) / sizeof(*stuck))
		stuck[nstuck++] = h->pid;
	src_close(&h->pidfd);
	src_close(&h->timer);
	if (h->errfd >= 0)
		close(h->errfd);
	h->errfd = -1;
	h->pid = 0;
}
