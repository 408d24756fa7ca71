/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The service manager's language, by hand: sd_notify datagrams to
 * $NOTIFY_SOCKET (READY=1, RELOADING=1, STATUS=, WATCHDOG=1, STOPPING=1),
 * and log lines on stderr with the syslog priority prefix "<N>" that the
 * journal reads (or syslog(3) once detached without --foreground).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "cgkilld.h"

int log_verbose;
static bool use_syslog;

void log_use_syslog(void)
{
	openlog("cgkilld", LOG_PID | LOG_NDELAY, LOG_DAEMON);
	use_syslog = true;
}

/* Every line goes through the library's one filter (CGK_TEXT_SAFE): the
 * names in it are chosen by whoever made the cgroups, and an escape
 * sequence, a CR or a newline of theirs must neither drive the terminal
 * that shows the log nor forge a line of its own. */
void log_msg(int pri, const char *fmt, ...)
{
	char buf[2048], line[2100];
	va_list ap;
	int n;

	if (pri >= LOG_PRI_DEBUG && !log_verbose)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	n = snprintf(line, sizeof(line), "<%d>", pri);
	/* whole characters only, and room for the newline */
	cgk_text_format(line + n, sizeof(line) - (size_t)n - 1, buf, strnlen(buf, sizeof(buf)), CGK_TEXT_SAFE);
	if (use_syslog) {
		syslog(pri, "%s", line + n);
		return;
	}
	/* one write: lines from a crowded moment stay whole */
	n = (int)strlen(line);
	line[n++] = '\n';
	while (write(STDERR_FILENO, line, (size_t)n) < 0 && errno == EINTR)
		;
}

uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void notify(const char *fmt, ...)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char msg[1024];
	size_t len;
	socklen_t salen;
	va_list ap;
	int fd;

	if (!path || (path[0] != '/' && path[0] != '@'))
		return;
	len = strlen(path);
	if (len >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, len);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0';	/* abstract namespace */
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (path[0] == '/'));
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa, salen) < 0)
		log_msg(LOG_PRI_DEBUG, "sd_notify to %s: %s", path, strerror(errno));
	close(fd);
}

uint64_t notify_watchdog_ms(void)
{
	const char *usec = getenv("WATCHDOG_USEC"), *pid = getenv("WATCHDOG_PID");
	char *end;
	unsigned long long u;

	if (!usec)
		return 0;
	if (pid && strtol(pid, NULL, 10) != (long)getpid())
		return 0;
	errno = 0;
	u = strtoull(usec, &end, 10);
	if (errno || *end || u == 0)
		return 0;
	return (u + 999) / 1000;
}

uint64_t watchdog_ms;
static uint64_t last_ping;

void watchdog_ping(bool force)
{
	uint64_t t;

	if (!watchdog_ms)
		return;
	t = now_ms();
	if (!force && t - last_ping < watchdog_ms / 2)
		return;
	last_ping = t;
	notify("WATCHDOG=1");
}

/* s as a JSON string, quoted and escaped by the library's one filter: an
 * event line stays valid UTF-8 JSON whatever the names in it. */
void json_str(FILE *f, const char *s)
{
	cgk_text_write(f, s, strlen(s), CGK_TEXT_JSON);
}

void out_line(struct out *o, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (!o->f) {
		log_msg(LOG_PRI_INFO, "%s", buf);
		return;
	}
	cgk_text_write(o->f, buf, strnlen(buf, sizeof(buf)), CGK_TEXT_SAFE);
	fputc('\n', o->f);
}

/* The comma before a member, and its key. */
static void out_key(struct out *o, const char *key)
{
	if (o->members[o->depth])
		fputs(", ", o->f);
	o->members[o->depth] = true;
	if (key) {
		json_str(o->f, key);
		fputs(": ", o->f);
	}
}

void out_open(struct out *o, const char *key, char bracket)
{
	out_key(o, key);
	fputc(bracket, o->f);
	if (o->depth + 1 < OUT_DEPTH)
		o->members[++o->depth] = false;
}

void out_close(struct out *o, char bracket)
{
	if (o->depth)
		o->depth--;
	fputc(bracket, o->f);
}

void out_str(struct out *o, const char *key, const char *v)
{
	out_key(o, key);
	if (v)
		json_str(o->f, v);
	else
		fputs("null", o->f);
}

void out_u64(struct out *o, const char *key, uint64_t v)
{
	out_key(o, key);
	fprintf(o->f, "%llu", (unsigned long long)v);
}

void out_int(struct out *o, const char *key, long long v)
{
	out_key(o, key);
	fprintf(o->f, "%lld", v);
}

void out_bool(struct out *o, const char *key, bool v)
{
	out_key(o, key);
	fputs(v ? "true" : "false", o->f);
}

void out_raw(struct out *o, const char *key, const char *v)
{
	out_key(o, key);
	fputs(v ? v : "null", o->f);
}
