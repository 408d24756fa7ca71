/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Small system helpers below everything else of the daemon: the daemon's
 * state (D), small kernel files, the loop's epoll set and its entries'
 * closing (PSI triggers closed by a pool of threads), capabilities.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/capability.h>

#include "cgkilld.h"

struct daemon D = { .epfd = -1, .event_fd = -1 };

ssize_t read_at0(int fd, char *buf, size_t size)
{
	ssize_t n;

	do
		n = pread(fd, buf, size - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return n;
}

void file_id(int fd, uint64_t id[2])
{
	struct stat st;

	id[0] = id[1] = 0;
	if (fd >= 0 && fstat(fd, &st) == 0) {
		id[0] = st.st_dev;
		id[1] = st.st_ino;
	}
}

bool same_file(const uint64_t a[2], const uint64_t b[2])
{
	return a[1] && a[0] == b[0] && a[1] == b[1];
}

bool kv_get(const char *text, const char *key, uint64_t *v)
{
	size_t k = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, key, k) && p[k] == ' ') {
			char *end;

			errno = 0;
			*v = strtoull(p + k + 1, &end, 10);
			return !errno && end != p + k + 1;
		}
	}
	return false;
}

void open_failed(const char *path, int err)
{
	static bool told;

	if (err == EMFILE || err == ENFILE) {
		if (!told)
			log_msg(LOG_PRI_ERR,
				"%s: %s: cgroups are left unwatched; raise the open file limit (LimitNOFILE=, ulimit -n)",
				path, strerror(err));
		told = true;
		return;
	}
	log_msg(LOG_PRI_WARNING, "%s: %s", path, strerror(err));
}

int epoll_add(struct src *s, unsigned events)
{
	struct epoll_event ev = { .events = events, .data.ptr = s };

	if (epoll_ctl(D.epfd, EPOLL_CTL_ADD, s->fd, &ev) < 0) {
		log_msg(LOG_PRI_ERR, "epoll: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

/* Closing a PSI trigger waits in the kernel for an RCU grace period
 * (psi_trigger_destroy(): synchronize_rcu(), 17 ms on average here, up to
 * 36): a user who empties or removes many watched cgroups at once would
 * stall the loop for seconds. Those files leave the epoll set at once and
 * are closed by a pool of threads: closes that wait at the same time share
 * grace periods (one thread alone closes ~100 a second), so a backlog
 * drains about CLOSERS times faster, at exit too. */
#define CLOSERS 8

/* a close to do, charged to the owner of the cgroup (0: root's) */
struct closing {
	int fd;
	unsigned uid;
};

/* pending closes of one owner (few owners have any: a short list) */
struct owed {
	unsigned uid, n;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t more;
	struct closing *fds;
	size_t n, cap;
	struct owed *owed;
	size_t nowed, owed_cap;
	unsigned started, idle;
	bool stop;
	pthread_t thread[CLOSERS];
} closer = { .lock = PTHREAD_MUTEX_INITIALIZER, .more = PTHREAD_COND_INITIALIZER };

/* uid's count of pending closes += delta; the closer's lock held. */
static bool owed_add(unsigned uid, int delta)
{
	size_t i;

	if (!uid)
		return true;
	for (i = 0; i < closer.nowed && closer.owed[i].uid != uid; i++)
		;
	if (i == closer.nowed) {
		if (delta < 0)
			return true;
		if (closer.nowed == closer.owed_cap) {
			size_t cap = closer.owed_cap ? 2 * closer.owed_cap : 16;
			struct owed *g = realloc(closer.owed, cap * sizeof(*g));

			if (!g)
				return false;
			closer.owed = g;
			closer.owed_cap = cap;
		}
		closer.owed[closer.nowed++] = (struct owed){ .uid = uid };
	}
	closer.owed[i].n += (unsigned)delta;
	if (!closer.owed[i].n)
		closer.owed[i] = closer.owed[--closer.nowed];
	return true;
}

/* How many of uid's PSI triggers wait to be closed. */
unsigned closes_pending(unsigned uid)
{
	unsigned n = 0;

	pthread_mutex_lock(&closer.lock);
	for (size_t i = 0; i < closer.nowed; i++)
		if (closer.owed[i].uid == uid)
			n = closer.owed[i].n;
	pthread_mutex_unlock(&closer.lock);
	return n;
}

static void *closer_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&closer.lock);
	for (;;) {
		struct closing c;

		closer.idle++;
		while (!closer.n && !closer.stop)
			pthread_cond_wait(&closer.more, &closer.lock);
		closer.idle--;
		if (!closer.n)
			break;
		c = closer.fds[--closer.n];
		pthread_mutex_unlock(&closer.lock);
		close(c.fd);
		pthread_mutex_lock(&closer.lock);
		owed_add(c.uid, -1);
	}
	pthread_mutex_unlock(&closer.lock);
	return NULL;
}

/* fd to the closing thread: false if it cannot take it (close it here). */
static bool close_later(int fd, unsigned uid)
{
	bool taken = false;

	pthread_mutex_lock(&closer.lock);
	/* one more thread while none is idle for it, up to CLOSERS */
	if (closer.started < CLOSERS && closer.idle <= closer.n) {
		pthread_attr_t attr;

		/* mlockall(MCL_FUTURE) locks its stack: a small one */
		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, 64 * 1024);
		if (pthread_create(&closer.thread[closer.started], &attr, closer_main, NULL) == 0)
			closer.started++;
		pthread_attr_destroy(&attr);
	}
	if (closer.started && closer.n == closer.cap) {
		size_t cap = closer.cap ? 2 * closer.cap : 64;
		struct closing *g = realloc(closer.fds, cap * sizeof(*g));

		if (g) {
			closer.fds = g;
			closer.cap = cap;
		}
	}
	if (closer.started && closer.n < closer.cap && owed_add(uid, 1)) {
		closer.fds[closer.n++] = (struct closing){ .fd = fd, .uid = uid };
		pthread_cond_signal(&closer.more);
		taken = true;
	}
	pthread_mutex_unlock(&closer.lock);
	return taken;
}

/* At exit: what is left closed by all the threads at once, joined. */
void closer_stop(void)
{
	pthread_mutex_lock(&closer.lock);
	closer.stop = true;
	pthread_cond_broadcast(&closer.more);
	pthread_mutex_unlock(&closer.lock);
	for (unsigned i = 0; i < closer.started; i++)
		pthread_join(closer.thread[i], NULL);
	free(closer.fds);
	free(closer.owed);
}

void src_close(struct src *s)
{
	if (s->fd < 0)
		return;
	if (!s->close_later || epoll_ctl(D.epfd, EPOLL_CTL_DEL, s->fd, NULL) < 0 ||
	    !close_later(s->fd, s->cg ? s->cg->owner : 0))
		close(s->fd);	/* leaves the epoll set with it */
	s->fd = -1;
}

/* PSI triggers with windows other than multiples of 2 s need it. */
bool has_cap_sys_resource(void)
{
	char line[256];
	unsigned long long caps = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	fclose(f);
	return caps & (1ULL << CAP_SYS_RESOURCE);
}

