/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The runtime directory (one instance: a lock on its pidfile) and the
 * control socket there (daemon/control.h has the protocol): status,
 * explain, reload, metrics and ping for root, served by the loop.
 *
 * A client never stalls the loop, whatever it does: the socket and every
 * connection are non-blocking; a request is one line of at most
 * CTL_REQUEST_MAX bytes, complete within REQUEST_MS of the connection;
 * the reply is built at once, at most REPLY_MAX bytes, and written as the
 * client reads it, within REPLY_MS; at most CLIENTS connections at once
 * (more are told so and closed). Only uid 0 is served (SO_PEERCRED): the
 * state names every user's cgroups and reload changes the rules.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

#include "cgkilld.h"
#include "control.h"

#define CLIENTS 16
#define REQUEST_MS 1000
#define REPLY_MS 10000
#define REPLY_MAX (8u << 20)

struct client {
	struct src conn, timer;
	char req[CTL_REQUEST_MAX];
	size_t len;
	char *reply;		/* NULL until the request is complete */
	size_t reply_len, sent;
	bool waiting;		/* the socket took part of the reply: said once */
	struct client *next;
};

static struct {
	char *dir;
	int dirfd, lockfd;
	struct src listen;
	struct client *clients, *closed;	/* closed: freed after the loop's batch */
	unsigned nclients;
	uint64_t started;
	ctl_reload_fn *reload;
} ctl = { .dirfd = -1, .lockfd = -1, .listen = { .fd = -1 } };

/* ---- the runtime directory and the lock ---- */

/* dir opened if trusted (open_trusted()), made 0700 first if missing. */
static int runtime_dir_open(const char *dir, char *why, size_t size)
{
	const char *base = strrchr(dir, '/');
	char parent[4096];
	int pfd, fd;

	fd = open_trusted(dir, true, why, size);
	if (fd != -ENOENT)
		return fd;
	if (!base || !base[1] || (size_t)(base - dir) >= sizeof(parent)) {
		snprintf(why, size, "not a directory name");
		return -EINVAL;
	}
	snprintf(parent, sizeof(parent), "%.*s", base == dir ? 1 : (int)(base - dir), dir);
	pfd = open_trusted(parent, true, why, size);
	if (pfd < 0)
		return pfd;
	if (mkdirat(pfd, base + 1, 0700) < 0 && errno != EEXIST) {
		int e = errno;

		snprintf(why, size, "cannot create it: %s", strerror(e));
		close(pfd);
		return -e;
	}
	close(pfd);
	return open_trusted(dir, true, why, size);
}

int ctl_lock(const char *dir)
{
	char why[1024], pid[32] = "";
	struct stat st;

	ctl.dirfd = runtime_dir_open(dir, why, sizeof(why));
	if (ctl.dirfd < 0) {
		log_msg(LOG_PRI_ERR, "runtime directory %s: refused: %s; not starting", dir, why);
		return ctl.dirfd;
	}
	ctl.lockfd = openat(ctl.dirfd, CTL_PIDFILE, O_RDWR | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0644);
	if (ctl.lockfd < 0) {
		int e = errno;

		log_msg(LOG_PRI_ERR, "%s/%s: %s; not starting", dir, CTL_PIDFILE, strerror(e));
		return -e;
	}
	if (fstat(ctl.lockfd, &st) < 0 || !S_ISREG(st.st_mode)) {
		log_msg(LOG_PRI_ERR, "%s/%s: not a regular file; not starting", dir, CTL_PIDFILE);
		return -EINVAL;
	}
	if (flock(ctl.lockfd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;

		if (read_at0(ctl.lockfd, pid, sizeof(pid)) > 0)
			pid[strcspn(pid, "\n")] = '\0';
		if (e == EWOULDBLOCK)
			log_msg(LOG_PRI_ERR, "another cgkilld (pid %s) runs with the runtime directory %s; not starting",
				*pid ? pid : "?", dir);
		else
			log_msg(LOG_PRI_ERR, "%s/%s: lock: %s; not starting", dir, CTL_PIDFILE, strerror(e));
		return -e;
	}
	ctl.dir = strdup(dir);
	return ctl.dir ? 0 : -ENOMEM;
}

/* Our pid in the pidfile we hold the lock of (after the fork to the
 * background: the pid that stays). */
static void pidfile_write(void)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());

	if (ftruncate(ctl.lockfd, 0) < 0 || pwrite(ctl.lockfd, buf, (size_t)n, 0) != n)
		log_msg(LOG_PRI_WARNING, "%s/%s: %s", ctl.dir, CTL_PIDFILE, strerror(errno));
}

/* ---- clients ---- */

static void client_close(struct client *cl)
{
	for (struct client **p = &ctl.clients; *p; p = &(*p)->next)
		if (*p == cl) {
			*p = cl->next;
			ctl.nclients--;
			break;
		}
	src_close(&cl->conn);
	src_close(&cl->timer);
	cl->next = ctl.closed;
	ctl.closed = cl;
}

void ctl_reap(void)
{
	while (ctl.closed) {
		struct client *cl = ctl.closed;

		ctl.closed = cl->next;
		free(cl->reply);
		free(cl);
	}
}

/* The client's deadline, ms from now. */
static void client_deadline(struct client *cl, uint64_t ms)
{
	struct itimerspec its = { .it_value = { .tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000 } };

	timerfd_settime(cl->timer.fd, 0, &its, NULL);
}

static void client_timeout(struct src *s)
{
	struct client *cl = s->data;

	if (s->fd < 0)
		return;
	log_msg(LOG_PRI_DEBUG, "control: a client %s in time: closed", cl->reply ? "did not read its reply" : "sent no request");
	client_close(cl);
}

/* As much of the reply as the socket takes; closed when all is sent. */
static void client_write(struct client *cl)
{
	while (cl->sent < cl->reply_len) {
		ssize_t n = send(cl->conn.fd, cl->reply + cl->sent, cl->reply_len - cl->sent, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			if (!cl->waiting)
				log_msg(LOG_PRI_DEBUG, "control: a reply of %zu bytes waits for its client (%zu sent)",
					cl->reply_len, cl->sent);
			cl->waiting = true;
			return;
		}
		if (n <= 0) {
			client_close(cl);	/* gone mid-reply */
			return;
		}
		cl->sent += (size_t)n;
	}
	client_close(cl);
}

/* The reply: its first line (status), then text (taken); a reply past
 * REPLY_MAX is replaced by an error. */
static void client_reply(struct client *cl, const char *status, char *text, size_t len)
{
	struct epoll_event ev = { .events = EPOLLOUT, .data.ptr = &cl->conn };
	char head[128], *r;
	size_t hlen, rlen;

	if (len > REPLY_MAX) {
		snprintf(head, sizeof(head), "error\nthe reply is too large (%zu bytes, more than %u)\n", len, REPLY_MAX);
		len = 0;
	} else {
		snprintf(head, sizeof(head), "%s\n", status);
	}
	hlen = strlen(head);
	rlen = hlen + len;
	r = malloc(rlen);
	if (r) {
		memcpy(r, head, hlen);
		if (len)
			memcpy(r + hlen, text, len);
	}
	free(text);
	if (!r) {
		client_close(cl);
		return;
	}
	cl->reply = r;
	cl->reply_len = rlen;
	client_deadline(cl, REPLY_MS);
	if (epoll_ctl(D.epfd, EPOLL_CTL_MOD, cl->conn.fd, &ev) < 0) {
		client_close(cl);
		return;
	}
	client_write(cl);
}

/* ---- the commands ---- */

/* The state: the same writer as SIGUSR1's dump. */
void ctl_state(struct out *o)
{
	if (o->json) {
		out_open(o, NULL, '{');
		out_str(o, "version", CGK_VERSION);
		out_int(o, "pid", (long long)getpid());
		out_str(o, "config", D.config_path);
		out_bool(o, "dry_run", D.global_dry_run || D.cfg.dry_run);
		out_u64(o, "uptime_ms", ctl.started ? now_ms() - ctl.started : 0);
		out_str(o, "cgroup_v2", D.v2);
	} else {
		out_line(o, "cgkilld %s, pid %d, %s, up %llus%s", CGK_VERSION, (int)getpid(), D.config_path,
			 (unsigned long long)(ctl.started ? (now_ms() - ctl.started) / 1000 : 0),
			 D.global_dry_run || D.cfg.dry_run ? ", dry run" : "");
	}
	watch_dump(o);
	storm_dump(o);
	act_dump(o);
	if (o->json) {
		out_close(o, '}');
		fputc('\n', o->f);
	} else {
		out_line(o, "state: end");
	}
}

/* The watched cgroup named by arg (a path below the v2 mount, or one
 * relative to it), as rel in buf; NULL with the reason in why. */
static const char *explain_rel(const char *arg, char *buf, size_t size, char *why, size_t whysize)
{
	size_t v2len = strlen(D.v2), n = 0;
	const char *p = arg;

	if (arg[0] == '/') {
		if (strncmp(arg, D.v2, v2len) || (arg[v2len] != '/' && arg[v2len])) {
			snprintf(why, whysize, "%s is not below the cgroup v2 mount %s", arg, D.v2);
			return NULL;
		}
		p = arg + v2len;
	}
	/* components: no "." or "..", no empty ones kept */
	while (*p) {
		size_t k;

		p += strspn(p, "/");
		k = strcspn(p, "/");
		if (!k)
			break;
		if ((k == 1 && p[0] == '.') || (k == 2 && !strncmp(p, "..", 2))) {
			snprintf(why, whysize, "%s: \".\" and \"..\" are not taken", arg);
			return NULL;
		}
		if (n + k + 2 > size) {
			snprintf(why, whysize, "%s: too long", arg);
			return NULL;
		}
		n += (size_t)snprintf(buf + n, size - n, "%s%.*s", n ? "/" : "", (int)k, p);
		p += k;
	}
	buf[n] = '\0';
	if (!n) {
		snprintf(why, whysize, "%s is the root of the cgroup v2 mount: never watched", arg);
		return NULL;
	}
	return buf;
}

/* explain: for each rule that watches the cgroup, act_explain(). */
static const char *cmd_explain(struct out *o, const char *arg)
{
	char rel[4096], why[8192];
	unsigned n = 0;

	if (!arg || !*arg) {
		out_line(o, "explain: which cgroup? (explain CGROUP)");
		return "error";
	}
	if (!explain_rel(arg, rel, sizeof(rel), why, sizeof(why))) {
		out_line(o, "%s", why);
		return "error";
	}
	for (size_t i = 0; i < D.cfg.nrules; i++)
		n += watch_find(&D.cfg.rules[i], rel) != NULL;
	if (!n) {
		out_line(o, "%s/%s is not watched by any rule (status lists the watched cgroups)", D.v2, rel);
		return "error";
	}
	if (o->json)
		out_open(o, NULL, '[');
	for (size_t i = 0; i < D.cfg.nrules; i++) {
		struct cg *c = watch_find(&D.cfg.rules[i], rel);

		if (c && act_explain(c, o) < 0 && !o->json)
			out_line(o, "rule %s: %s", c->rule->name, strerror(ENOMEM));
	}
	if (o->json) {
		out_close(o, ']');
		fputc('\n', o->f);
	}
	return "ok";
}

static const char *cmd_reload(struct out *o)
{
	if (ctl.reload(o->f) < 0) {
		out_line(o, "reload refused: the configuration has errors; the old rules stay in force");
		return "refused";
	}
	out_line(o, "reloaded: %zu rule(s), %zu cgroup(s) watched", D.cfg.nrules, D.ncgs);
	return "ok";
}

static const char *cmd_metrics(struct out *o)
{
	return metrics_render(o->f) < 0 ? "error" : "ok";
}

/* One request: "COMMAND [--json] [ARGUMENT]"; the status of the reply,
 * its text on o->f. */
static const char *request(char *line, struct out *o)
{
	char *arg = strchr(line, ' ');
	bool json = false;

	if (arg)
		*arg++ = '\0';
	if (arg && !strncmp(arg, "--json", 6) && (arg[6] == ' ' || !arg[6])) {
		json = true;
		arg = arg[6] ? arg + 7 : NULL;
	}
	if (!strcmp(line, "explain")) {
		o->json = json;
		return cmd_explain(o, arg);
	}
	if (arg) {
		out_line(o, "%s: unexpected argument %s", line, arg);
		return "error";
	}
	if (!strcmp(line, "status")) {
		o->json = json;
		ctl_state(o);
		return "ok";
	}
	if (json) {
		out_line(o, "%s: no --json", line);
		return "error";
	}
	if (!strcmp(line, "ping")) {
		out_line(o, "pong: cgkilld %s, pid %d", CGK_VERSION, (int)getpid());
		return "ok";
	}
	if (!strcmp(line, "reload"))
		return cmd_reload(o);
	if (!strcmp(line, "metrics"))
		return cmd_metrics(o);
	out_line(o, "unknown command %s (status, explain, reload, metrics, ping)", line);
	return "error";
}

/* The request is in: its reply. */
static void client_request(struct client *cl)
{
	char *text = NULL;
	size_t len = 0;
	struct out o = { 0 };
	const char *status;

	o.f = open_memstream(&text, &len);
	if (!o.f) {
		client_close(cl);
		return;
	}
	log_msg(LOG_PRI_DEBUG, "control: %s", cl->req);
	status = request(cl->req, &o);
	if (fclose(o.f) != 0) {
		free(text);
		client_close(cl);
		return;
	}
	client_reply(cl, status, text, len);
}

/* The short error reply of a client that is closed at once. */
static void refuse(int fd, const char *why)
{
	char buf[256];
	int n = snprintf(buf, sizeof(buf), "error\n%s\n", why);

	if (send(fd, buf, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		log_msg(LOG_PRI_DEBUG, "control: %s", strerror(errno));
}

static void client_event(struct src *s)
{
	struct client *cl = s->data;
	char *nl;
	ssize_t n;

	if (s->fd < 0)
		return;
	if (cl->reply) {
		client_write(cl);
		return;
	}
	n = recv(s->fd, cl->req + cl->len, sizeof(cl->req) - cl->len, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		client_close(cl);	/* gone (or an error) before its request */
		return;
	}
	cl->len += (size_t)n;
	nl = memchr(cl->req, '\n', cl->len);
	if (nl) {
		*nl = '\0';
		client_request(cl);
		return;
	}
	if (cl->len == sizeof(cl->req)) {
		refuse(s->fd, "the request is too long (a line of at most 4096 bytes)");
		client_close(cl);
	}
}

/* Root's connection: a client, with its deadline. */
static void client_new(int fd)
{
	struct client *cl = calloc(1, sizeof(*cl));

	if (!cl) {
		close(fd);
		return;
	}
	cl->conn = (struct src){ .event = client_event, .fd = fd, .data = cl };
	cl->timer = (struct src){ .event = client_timeout, .data = cl,
				  .fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK) };
	cl->next = ctl.clients;
	ctl.clients = cl;
	ctl.nclients++;
	if (cl->timer.fd < 0 || epoll_add(&cl->conn, EPOLLIN) < 0 || epoll_add(&cl->timer, EPOLLIN) < 0) {
		client_close(cl);
		return;
	}
	client_deadline(cl, REQUEST_MS);
}

static void listen_event(struct src *s)
{
	for (;;) {
		struct ucred cred;
		socklen_t len = sizeof(cred);
		int fd = accept4(s->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE)
				open_failed("control socket", errno);
			return;	/* EAGAIN: none left */
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != 0) {
			log_msg(LOG_PRI_NOTICE, "control: a client of uid %d refused: root only",
				len == sizeof(cred) ? (int)cred.uid : -1);
			refuse(fd, "permission denied: the control socket serves root only");
			close(fd);
		} else if (ctl.nclients >= CLIENTS) {
			log_msg(LOG_PRI_NOTICE, "control: a client refused: %u connections at once already", CLIENTS);
			refuse(fd, "too many clients at once; try again");
			close(fd);
		} else {
			client_new(fd);
		}
	}
}

/* ---- the socket ---- */

int ctl_start(ctl_reload_fn *reload)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	mode_t mask;
	int fd;

	ctl.reload = reload;
	ctl.started = now_ms();
	pidfile_write();
	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", ctl.dir, CTL_SOCKET) >= sizeof(sa.sun_path)) {
		log_msg(LOG_PRI_ERR, "%s/%s: the socket's path is too long; not starting", ctl.dir, CTL_SOCKET);
		return -ENAMETOOLONG;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		log_msg(LOG_PRI_ERR, "control socket: %s; not starting", strerror(errno));
		return -errno;
	}
	/* a socket left by a daemon that died: ours now (we hold the lock) */
	if (unlinkat(ctl.dirfd, CTL_SOCKET, 0) < 0 && errno != ENOENT)
		log_msg(LOG_PRI_WARNING, "%s: %s", sa.sun_path, strerror(errno));
	mask = umask(0177);	/* 0600 from the start */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 64) < 0) {
		int e = errno;

		umask(mask);
		log_msg(LOG_PRI_ERR, "%s: %s; not starting", sa.sun_path, strerror(e));
		close(fd);
		return -e;
	}
	umask(mask);
	ctl.listen = (struct src){ .event = listen_event, .fd = fd };
	if (epoll_add(&ctl.listen, EPOLLIN) < 0)
		return -errno;
	log_msg(LOG_PRI_DEBUG, "control socket %s", sa.sun_path);
	return 0;
}

void ctl_stop(void)
{
	while (ctl.clients)
		client_close(ctl.clients);
	ctl_reap();
	if (ctl.listen.fd >= 0) {
		src_close(&ctl.listen);
		unlinkat(ctl.dirfd, CTL_SOCKET, 0);
	}
	if (ctl.lockfd >= 0) {
		if (ctl.dir)
			unlinkat(ctl.dirfd, CTL_PIDFILE, 0);	/* while the lock is ours */
		close(ctl.lockfd);
	}
	if (ctl.dirfd >= 0)
		close(ctl.dirfd);
	free(ctl.dir);
	ctl.dir = NULL;
	ctl.dirfd = ctl.lockfd = -1;
}
