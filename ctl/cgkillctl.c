/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgkillctl: asks a running cgkilld through its control socket
 * (daemon/control.h): status, explain, reload, metrics, ping. It sends
 * one request line, prints the reply's text (on stdout if the daemon
 * said "ok", else on stderr) and exits 0 (ok), 1 (refused: an error, a
 * reload refused) or 2 (the daemon cannot be reached, or a usage error).
 * Static, like cgkill: it must start beside a fork bomb.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cgkill.h>

#include "../daemon/control.h"

#define EXIT_REFUSED 1
#define EXIT_UNREACHABLE 2
/* the whole exchange; a reply is built at once, and read as it comes */
#define TIMEOUT_MS 30000

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: cgkillctl [OPTION]... COMMAND [CGROUP]\n"
		"Ask the running cgkilld.\n"
		"\n"
		"Commands:\n"
		"  status              the rules, the watched cgroups with their triggers and\n"
		"                      figures, the storm budgets, the actions under way and\n"
		"                      the last ones\n"
		"  explain CGROUP      which victim the rules that watch CGROUP would choose\n"
		"                      now, and why (nothing is acted on)\n"
		"  reload              reload the configuration: exit 1 if it is refused\n"
		"  metrics             the metrics in the Prometheus text format\n"
		"  ping                is the daemon there and serving?\n"
		"\n"
		"Options:\n"
		"  -j, --json          status and explain as JSON\n"
		"      --runtime-dir DIR  the daemon's runtime directory (default\n"
		"                      $RUNTIME_DIRECTORY, else %s)\n"
		"      --socket PATH   the control socket itself\n"
		"  -h, --help          this help\n"
		"  -V, --version       the version\n"
		"\n"
		"Exit status: 0 ok, 1 refused (an error, a reload refused), 2 the daemon\n"
		"cannot be reached (or a usage error). See cgkillctl(8).\n",
		CTL_RUNTIME_DIR);
}

static int ms_left(const struct timespec *end)
{
	struct timespec now;
	long long ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (end->tv_sec - now.tv_sec) * 1000LL + (end->tv_nsec - now.tv_nsec) / 1000000;
	return ms < 0 ? 0 : ms > 1000000 ? 1000000 : (int)ms;
}

/* Connected to the daemon's socket, its owner checked: fd, or -1 (said). */
static int dial(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "cgkillctl: %s: the path is too long for a socket\n", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		fprintf(stderr, "cgkillctl: cannot reach cgkilld at %s: %s%s\n", path, strerror(e),
			e == ENOENT || e == ECONNREFUSED ? " (is it running?)"
			: e == EACCES			 ? " (root only)"
							 : "");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	/* only the daemon, root's, is believed */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != 0) {
		fprintf(stderr, "cgkillctl: %s: not served by root: not believed\n", path);
		close(fd);
		return -1;
	}
	return fd;
}

/* All of buf sent before end. */
static bool send_all(int fd, const char *buf, size_t len, const struct timespec *end)
{
	while (len) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		ssize_t n;

		errno = 0;
		if (poll(&p, 1, ms_left(end)) <= 0)
			return false;
		n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0)
			return false;
		buf += n;
		len -= (size_t)n;
	}
	return true;
}

/* The reply until the daemon closes: its status line read, the text
 * after it copied to stdout (ok) or stderr. The exit status. */
static int receive(int fd, const struct timespec *end)
{
	char buf[65536], status[16];
	size_t have = 0;
	FILE *out = NULL;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, ms_left(end)) <= 0) {
			fprintf(stderr, "cgkillctl: no reply from cgkilld in %ds\n", TIMEOUT_MS / 1000);
			return EXIT_UNREACHABLE;
		}
		n = recv(fd, buf + (out ? 0 : have), sizeof(buf) - (out ? 0 : have), 0);
		if (n < 0 && errno == EINTR)
			continue;
		/* a refusal read, and our request unread by a daemon that
		 * closed: a reset, after all it had to say */
		if (n < 0 && errno == ECONNRESET && out)
			break;
		if (n < 0 || (n == 0 && !out)) {
			fprintf(stderr, "cgkillctl: cgkilld closed the connection without a reply%s%s\n",
				n < 0 ? ": " : "", n < 0 ? strerror(errno) : "");
			return EXIT_UNREACHABLE;
		}
		if (n == 0)
			break;
		if (out) {
			fwrite(buf, 1, (size_t)n, out);
			continue;
		}
		have += (size_t)n;
		char *nl = memchr(buf, '\n', have);

		if (!nl) {
			if (have < sizeof(status))
				continue;
			fprintf(stderr, "cgkillctl: not a cgkilld reply\n");
			return EXIT_UNREACHABLE;
		}
		snprintf(status, sizeof(status), "%.*s", (int)(nl - buf), buf);
		if (strcmp(status, "ok") && strcmp(status, "refused") && strcmp(status, "error")) {
			fprintf(stderr, "cgkillctl: not a cgkilld reply\n");
			return EXIT_UNREACHABLE;
		}
		out = strcmp(status, "ok") ? stderr : stdout;
		fwrite(nl + 1, 1, have - (size_t)(nl + 1 - buf), out);
	}
	if (fflush(stdout) != 0) {
		perror("cgkillctl: stdout");
		return EXIT_REFUSED;
	}
	return out == stdout ? 0 : EXIT_REFUSED;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "runtime-dir", required_argument, NULL, 'R' },
		{ "socket", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	const char *dir = NULL, *sock = NULL, *cmd, *arg = NULL;
	char path[4096], req[CTL_REQUEST_MAX + 1];
	struct timespec end;
	bool json = false, takes_arg, takes_json;
	int opt, fd, n, ret;

	while ((opt = getopt_long(argc, argv, "jhV", longopts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			json = true;
			break;
		case 'R':
			dir = optarg;
			break;
		case 'S':
			sock = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("cgkillctl %s\n", CGK_VERSION);
			return 0;
		default:
			usage(stderr);
			return EXIT_UNREACHABLE;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "cgkillctl: which command? (status, explain, reload, metrics, ping)\n");
		return EXIT_UNREACHABLE;
	}
	cmd = argv[optind++];
	takes_arg = !strcmp(cmd, "explain");
	takes_json = takes_arg || !strcmp(cmd, "status");
	if (strcmp(cmd, "status") && strcmp(cmd, "explain") && strcmp(cmd, "reload") && strcmp(cmd, "metrics") &&
	    strcmp(cmd, "ping")) {
		fprintf(stderr, "cgkillctl: unknown command %s (status, explain, reload, metrics, ping)\n", cmd);
		return EXIT_UNREACHABLE;
	}
	if (takes_arg && optind < argc)
		arg = argv[optind++];
	if (takes_arg && !arg) {
		fprintf(stderr, "cgkillctl: explain: which cgroup?\n");
		return EXIT_UNREACHABLE;
	}
	if (optind < argc) {
		fprintf(stderr, "cgkillctl: unexpected argument %s\n", argv[optind]);
		return EXIT_UNREACHABLE;
	}
	if (json && !takes_json) {
		fprintf(stderr, "cgkillctl: %s has no --json\n", cmd);
		return EXIT_UNREACHABLE;
	}
	if (arg && strchr(arg, '\n')) {
		fprintf(stderr, "cgkillctl: a cgroup name with a newline cannot be sent\n");
		return EXIT_UNREACHABLE;
	}
	n = snprintf(req, sizeof(req), "%s%s%s%s\n", cmd, json ? " --json" : "", arg ? " " : "", arg ? arg : "");
	if (n < 0 || (size_t)n > CTL_REQUEST_MAX) {
		fprintf(stderr, "cgkillctl: the request is too long (at most %d bytes)\n", CTL_REQUEST_MAX);
		return EXIT_UNREACHABLE;
	}
	if (!sock) {
		snprintf(path, sizeof(path), "%s/%s", dir ? dir : ctl_runtime_dir(), CTL_SOCKET);
		sock = path;
	}
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += TIMEOUT_MS / 1000;
	fd = dial(sock);
	if (fd < 0)
		return EXIT_UNREACHABLE;
	/* a daemon that refuses us (root only, too many clients) says why
	 * and closes, maybe before the request is sent: its reply is read */
	if (!send_all(fd, req, (size_t)n, &end) && errno != EPIPE && errno != ECONNRESET) {
		fprintf(stderr, "cgkillctl: cannot send the request to cgkilld: %s\n", errno ? strerror(errno) : "timed out");
		close(fd);
		return EXIT_UNREACHABLE;
	}
	ret = receive(fd, &end);
	close(fd);
	return ret;
}
