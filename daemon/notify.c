/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The service manager's language, by hand: sd_notify datagrams to
 * $NOTIFY_SOCKET (READY=1, RELOADING=1, STATUS=, WATCHDOG=1, STOPPING=1),
 * and log lines on stderr with the syslog priority prefix "<N>" that the
 * journal reads (or syslog(3) once detached without --foreground). Where
 * stderr is not the journal (a terminal, a file), the daemon's lines carry
 * their time after the prefix, as a syslog line does.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "cgkilld.h"

int log_verbose;
static bool use_syslog;
static bool stamped;

bool log_syslog_reachable(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = "/dev/log" };
	static const int types[] = { SOCK_DGRAM, SOCK_STREAM };	/* as syslog(3) tries them */

	for (size_t i = 0; i < sizeof(types) / sizeof(*types); i++) {
		int fd = socket(AF_UNIX, types[i] | SOCK_CLOEXEC, 0), r;

		if (fd < 0)
			continue;
		r = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
		close(fd);
		if (r == 0)
			return true;
	}
	return false;
}

void log_use_syslog(void)
{
	openlog("cgkilld", LOG_PID | LOG_NDELAY, LOG_DAEMON);
	use_syslog = true;
}

/* The "<N>" priority prefix is for the journal (sd-daemon(3)) and
 * whatever reads stderr in its place: a terminal shows it as noise. */
static bool log_prefixed(void)
{
	static int prefixed = -1;

	if (prefixed < 0)
		prefixed = !isatty(STDERR_FILENO);
	return prefixed;
}

/* Is stderr the journal's stream? systemd says which in $JOURNAL_STREAM
 * ("DEV:INO" of the socket it gave): a stderr redirected since is not. */
static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	char end;

	if (!js || sscanf(js, "%llu:%llu%c", &dev, &ino, &end) != 2)
		return false;
	return fstat(STDERR_FILENO, &st) == 0 && st.st_dev == (dev_t)dev && st.st_ino == (ino_t)ino;
}

void log_stamp_unless_journal(void)
{
	stamped = !stderr_is_journal();
}

void rfc3339(const struct timespec *ts, int digits, char *buf, size_t size)
{
	struct tm tm;
	char frac[24] = "", z[8], zone[8] = "";
	long div = 1;
	size_t n;

	localtime_r(&ts->tv_sec, &tm);
	for (int i = digits; i < 9; i++)
		div *= 10;
	if (digits > 0 && digits <= 6)
		snprintf(frac, sizeof(frac), ".%0*ld", digits, ts->tv_nsec / div);
	/* +0100 as +01:00 */
	if (strftime(z, sizeof(z), "%z", &tm) == 5)
		snprintf(zone, sizeof(zone), "%.3s:%.2s", z, z + 3);
	n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, size - n, "%s%s", frac, zone);
}

/* Every line goes through the library's one filter (CGK_TEXT_SAFE): the
 * names in it are chosen by whoever made the cgroups, and an escape
 * sequence, a CR or a newline of theirs must neither drive the terminal
 * that shows the log nor forge a line of its own. */
void log_msg(int pri, const char *fmt, ...)
{
	char buf[2048], line[2048 + 64];
	va_list ap;
	int n;

	if (pri >= LOG_PRI_DEBUG && !log_verbose)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	n = log_prefixed() ? snprintf(line, sizeof(line), "<%d>", pri) : 0;
	if (stamped && !use_syslog) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		rfc3339(&ts, 3, line + n, sizeof(line) - (size_t)n);
		n += (int)strlen(line + n);
		line[n++] = ' ';
	}
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

uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
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
	char buf[3 * PATH_MAX + 1024];	/* a line may name three paths */
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
