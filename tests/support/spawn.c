// SPDX-License-Identifier: LGPL-2.1-or-later
/* Test processes: fork, set up, hand back; reaping; /proc/PID; see
 * spawn.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgfile.h"
#include "deadline.h"
#include "record.h"
#include "sandbox.h"
#include "spawn.h"
#include "tap.h"

struct tracked {
	pid_t pid;
	bool reaped;
	int status;
};
static struct tracked *procs;
static size_t n_procs, cap_procs;

static void track(pid_t pid)
{
	if (n_procs == cap_procs) {
		size_t cap = cap_procs ? cap_procs * 2 : 256;
		struct tracked *nv = realloc(procs, cap * sizeof(*nv));

		if (!nv)
			return;
		procs = nv;
		cap_procs = cap;
	}
	procs[n_procs++] = (struct tracked){ .pid = pid };
}

static struct tracked *tracked(pid_t pid)
{
	/* Newest first: pids get reused across a long test run. */
	for (size_t i = n_procs; i-- > 0;)
		if (procs[i].pid == pid)
			return &procs[i];
	return NULL;
}

void sb_reap(void)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG | __WALL)) > 0) {
		struct tracked *t = tracked(pid);

		if (t && !t->reaped) {
			t->reaped = true;
			t->status = status;
		}
	}
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
		/* Nothing ignored: a shell that started the test in the
		 * background ignores SIGINT and SIGQUIT, the sandbox SIGPIPE,
		 * and the command would inherit that. */
		for (int sig = 1; sig < NSIG; sig++) {
			struct sigaction sa;

			if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
				signal(sig, SIG_DFL);
		}
		prctl(PR_SET_CHILD_SUBREAPER, 0);
	} else if (pid > 0) {
		track(pid);
	}
	return pid;
}

/* ---- the handshake ---- */

/* Read what the child reports on fd within timeout_ms: 0 if all size bytes
 * came. */
static int receive(int fd, void *out, size_t size, unsigned timeout_ms)
{
	uint64_t deadline = sb_now_ms() + sb_deadline_ms(timeout_ms);
	size_t got = 0;

	while (got < size) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		uint64_t now = sb_now_ms();
		ssize_t n;

		if (now >= deadline || poll(&pfd, 1, (int)(deadline - now)) <= 0)
			return -ETIMEDOUT;
		n = read(fd, (char *)out + got, size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		got += (size_t)n;
	}
	return 0;
}

/* In the child: tell the parent we are set up (or why not). */
static void ready(int fd, int err)
{
	if (write(fd, &err, sizeof(err)) != sizeof(err))
		_exit(2);
	close(fd);
	if (err)
		_exit(2);
}

/* ---- behaviours ---- */

static bool bomb_limited(const char *cg)
{
	const char *m = sb_mount_of(cg);
	char p[4096], buf[64];

	if (!m)
		return false;
	snprintf(p, sizeof(p), "%s", cg);
	/* This cgroup or an ancestor below the mount point must have a limit. */
	while (strlen(p) > strlen(m)) {
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

static int set_signals(const struct sb_proc *p)
{
	int err = rec_arm(p->record, p->exit_on_signal, p->fork_on_signal);

	for (int i = 0; !err && i < 8 && p->ignore[i]; i++)
		if (signal(p->ignore[i], SIG_IGN) == SIG_ERR)
			err = -errno;
	if (!err && p->handler) {
		struct sigaction sa = { .sa_handler = p->handler, .sa_flags = p->handler_flags };

		sigemptyset(&sa.sa_mask);
		if (sigaction(p->handler_sig, &sa, NULL) < 0)
			err = -errno;
	}
	if (p->what == SB_IGNORE_TERM)
		signal(SIGTERM, SIG_IGN);
	else if (p->what == SB_EXIT_ON_TERM)
		signal(SIGTERM, on_term_exit);
	return err;
}

/* Join, set up, report, behave: never returns. */
static __attribute__((noreturn)) void child_main(const struct sb_proc *p, int fd)
{
	unsigned threads = p->threads ? p->threads : p->what == SB_THREADS ? 4 : 0;
	int err = 0;

	for (int i = 0; !err && i < 4 && p->cgroups[i]; i++)
		err = sb_join(p->cgroups[i]);
	if (!err && !p->cgroups[0])
		err = sb_join_fd(p->cgroup_fd);
	if (!err)
		err = set_signals(p);
	if (!err && p->comm && prctl(PR_SET_NAME, p->comm) < 0)
		err = -errno;
	for (unsigned i = 0; !err && i < threads; i++) {
		pthread_t t;
		int r = pthread_create(&t, NULL, thread_sleep, NULL);

		err = -r;
	}
	if (!err && p->uid && (setgroups(0, NULL) < 0 || setresgid(p->uid, p->uid, p->uid) < 0 ||
			       setresuid(p->uid, p->uid, p->uid) < 0))
		err = -errno;
	if (p->what == SB_FORKBOMB) {
		char *const argv[] = { (char *)"forkbomb", NULL };

		ready(fd, err);
		execv(forkbomb_exe, argv);
		_exit(127);
	}
	if (p->what == SB_MIGRATE) {
		char a[4352], b[4352];
		int fa, fb;

		snprintf(a, sizeof(a), "%s/cgroup.procs", p->migrate[0]);
		snprintf(b, sizeof(b), "%s/cgroup.procs", p->migrate[1]);
		fa = open(a, O_WRONLY | O_CLOEXEC);
		fb = open(b, O_WRONLY | O_CLOEXEC);
		ready(fd, err ? err : fa < 0 || fb < 0 ? -ENOENT : 0);
		for (;;) {
			if (write(fa, "0", 1) < 0 && errno != EINTR)
				usleep(100);
			if (write(fb, "0", 1) < 0 && errno != EINTR)
				usleep(100);
		}
	}
	ready(fd, err);
	for (;;)
		pause();
}

pid_t sb_spawn(const struct sb_proc *p)
{
	int fds[2], err = 0;
	pid_t pid;

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
	if (p->record[0])
		rec_init();
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
		child_main(p, fds[1]);
	}
	close(fds[1]);
	if (receive(fds[0], &err, sizeof(err), 10000) < 0)
		err = -ETIMEDOUT;
	close(fds[0]);
	if (err < 0) {
		kill(pid, SIGKILL);
		sb_wait_reaped(pid, 2000);
		return err;
	}
	return pid;
}

pid_t sb_sleeper(const char *cgroup)
{
	return sb_spawn(&(struct sb_proc){ .cgroups = { cgroup } });
}

pid_t sb_sleeper_at(int cgroup_fd)
{
	return sb_spawn(&(struct sb_proc){ .cgroup_fd = cgroup_fd });
}

int sb_spawn_n(unsigned n, enum sb_behaviour what, const char *limiter,
	       const char *cgroup, pid_t *pids)
{
	struct sb_proc p = { .what = what, .cgroups = { limiter ? limiter : cgroup,
						       limiter ? cgroup : NULL } };

	for (unsigned i = 0; i < n; i++) {
		pid_t pid = sb_spawn(&p);

		if (pid < 0)
			return pid;
		if (pids)
			pids[i] = pid;
	}
	return 0;
}

int child_call(child_fn fn, void *arg, void *out, size_t size, unsigned timeout_ms,
	       int *status)
{
	int p[2], st, r;
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
	r = receive(p[0], out, size, timeout_ms);
	close(p[0]);
	st = sb_wait_reaped(pid, r == 0 ? 10000 : 100);
	if (st == -ETIMEDOUT) {
		kill(pid, SIGKILL);
		st = sb_wait_reaped(pid, 5000);
	}
	if (status)
		*status = st;
	return r == 0 ? 0 : -ETIMEDOUT;
}

pid_t pidns_fork(int *err)
{
	pid_t pid;

	if (unshare(CLONE_NEWPID | CLONE_NEWNS) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	*err = 0;
	if (pid == 0 && (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
			 mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0))
		*err = -errno;
	return pid;
}

int pidns_call(child_fn fn, void *arg, void *out, size_t size)
{
	int p[2], err = 0;
	pid_t init;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	init = pidns_fork(&err);
	if (init == 0) {
		close(p[0]);
		memset(out, 0, size);
		if (!err)
			fn(arg, out);
		_exit(write(p[1], &err, sizeof(err)) == sizeof(err) &&
		      write(p[1], out, size) == (ssize_t)size ? 0 : 1);
	}
	close(p[1]);
	if (init > 0 && (read(p[0], &err, sizeof(err)) != sizeof(err) ||
			 (!err && read(p[0], out, size) != (ssize_t)size)))
		err = -EIO;
	close(p[0]);
	if (init > 0)
		waitpid(init, NULL, 0);
	return init < 0 ? init : err;
}

/* ---- ends ---- */

int sb_wait_reaped(pid_t pid, unsigned timeout_ms)
{
	uint64_t deadline = sb_now_ms() + sb_deadline_ms(timeout_ms);
	unsigned backoff = 1;

	for (;;) {
		struct tracked *t;

		sb_reap();
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

bool sb_alive(pid_t pid)
{
	struct tracked *t;
	char s;

	if (pid <= 0)
		return false;
	sb_reap();
	t = tracked(pid);
	if (t && t->reaped)
		return false;
	if (kill(pid, 0) < 0)
		return false;
	s = proc_state(pid);
	return s != 0 && s != 'Z' && s != 'X';
}

unsigned sb_count_killed(const pid_t *pids, unsigned n, int sig, unsigned timeout_ms)
{
	unsigned k = 0;

	for (unsigned i = 0; i < n; i++) {
		int st = sb_wait_reaped(pids[i], timeout_ms);
		char dir[64], line[512] = "";

		if (st >= 0 && WIFSIGNALED(st) && WTERMSIG(st) == sig) {
			k++;
			continue;
		}
		snprintf(dir, sizeof(dir), "/proc/%d", (int)pids[i]);
		sb_read(dir, "stat", line, sizeof(line));
		diag("pid %d: wait status %d (signal %d, exit %d); stat %s", (int)pids[i], st,
		     st >= 0 && WIFSIGNALED(st) ? WTERMSIG(st) : 0,
		     st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1, line);
	}
	return k;
}

unsigned sb_count_alive(const pid_t *pids, unsigned n)
{
	unsigned k = 0;

	for (unsigned i = 0; i < n; i++)
		k += sb_alive(pids[i]);
	return k;
}

unsigned sb_count_exited0(const pid_t *pids, unsigned n, unsigned timeout_ms)
{
	unsigned k = 0;

	for (unsigned i = 0; i < n; i++) {
		int st = sb_wait_reaped(pids[i], timeout_ms);

		k += st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
	}
	return k;
}

/* ---- /proc/PID ---- */

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
	uint64_t deadline = sb_now_ms() + sb_deadline_ms(timeout_ms);

	for (;;) {
		if (proc_state(pid) == state)
			return true;
		if (sb_now_ms() >= deadline)
			return false;
		sb_sleep_ms(5);
	}
}

bool proc_mask(pid_t pid, const char *field, unsigned long long *mask)
{
	char dir[64], buf[4096], key[32], *p;

	snprintf(dir, sizeof(dir), "/proc/%d", (int)pid);
	snprintf(key, sizeof(key), "\n%s:", field);
	if (sb_read(dir, "status", buf, sizeof(buf)) <= 0 || !(p = strstr(buf, key)))
		return false;
	*mask = strtoull(p + strlen(key), NULL, 16);
	return true;
}

pid_t proc_other_tid(pid_t pid)
{
	char dir[64];
	struct dirent *e;
	pid_t tid = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	d = opendir(dir);
	while (d && !tid && (e = readdir(d)))
		if (atoi(e->d_name) > 0 && atoi(e->d_name) != pid)
			tid = atoi(e->d_name);
	if (d)
		closedir(d);
	return tid;
}
