// SPDX-License-Identifier: LGPL-2.1-or-later
/* Processes that record the signals they get; see record.h. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <unistd.h>

#include "record.h"
#include "sandbox.h"
#include "spawn.h"
#include "tap.h"

static int rec_fds[2] = { -1, -1 };
static bool rec_fork_flag, rec_exit_flag;

void rec_init(void)
{
	if (rec_fds[0] >= 0)
		return;
	/* CLOEXEC: the cgkill command must not hold the pipe open. */
	if (pipe2(rec_fds, O_CLOEXEC) < 0)
		bail_out("cannot create the record pipe: %m");
	fcntl(rec_fds[0], F_SETFL, O_NONBLOCK);
}

static void rec_write(int kind, int sig, pid_t sender)
{
	struct rec r = { .kind = kind, .pid = getpid(), .sig = sig, .sender = sender };
	int e = errno;

	/* Smaller than PIPE_BUF: atomic, never interleaved. */
	if (write(rec_fds[1], &r, sizeof(r)) < 0)
		_exit(5);
	errno = e;
}

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

int rec_arm(const int *sigs, bool exit_on_signal, bool fork_on_signal)
{
	struct sigaction sa = { .sa_sigaction = on_record, .sa_flags = SA_SIGINFO | SA_RESTART };

	rec_exit_flag = exit_on_signal;
	rec_fork_flag = fork_on_signal;
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < 8 && sigs[i]; i++)
		if (sigaction(sigs[i], &sa, NULL) < 0)
			return -errno;
	return 0;
}

size_t rec_collect(struct rec *v, size_t max, size_t want, unsigned timeout_ms,
		   unsigned quiet_ms)
{
	uint64_t deadline = sb_now_ms() + timeout_ms;
	size_t n = 0;

	rec_init();
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
	rec_take(NULL);
}

unsigned rec_take(int *last)
{
	unsigned n = 0;
	struct rec r;

	rec_init();
	while (read(rec_fds[0], &r, sizeof(r)) == (ssize_t)sizeof(r)) {
		if (r.kind != REC_SIG)
			continue;
		n++;
		if (last)
			*last = r.sig;
	}
	return n;
}

bool no_hits(const char *what)
{
	int last = 0;
	unsigned n;

	sb_sleep_ms(50);	/* a stray signal is delivered at once; be fair */
	n = rec_take(&last);
	if (!is_int(n, 0, "%s: no recorder outside the target got a signal", what))
		diag("    last signal seen: %d", last);
	return n == 0;
}

unsigned rec_count(const struct rec *v, size_t n, int kind, pid_t pid, int sig)
{
	unsigned k = 0;

	for (size_t i = 0; i < n; i++)
		k += v[i].kind == kind && (!pid || v[i].pid == pid) && (!sig || v[i].sig == sig);
	return k;
}

pid_t recorder(const char *cg, int sig)
{
	return sb_spawn(&(struct sb_proc){ .cgroups = { cg }, .record = { sig } });
}

pid_t term_ignorer(const char *cg)
{
	return sb_spawn(&(struct sb_proc){ .cgroups = { cg }, .ignore = { SIGTERM } });
}

pid_t term_exiter(const char *cg)
{
	return sb_spawn(&(struct sb_proc){ .cgroups = { cg }, .record = { SIGTERM },
					   .exit_on_signal = true });
}

pid_t stray_recorder(const char *cg)
{
	return sb_spawn(&(struct sb_proc){ .cgroups = { cg }, .record = REC_STRAY });
}
