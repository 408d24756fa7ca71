/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kill-two: two kills driven from one epoll loop with libcgkill's
 * non-blocking interface (libcgkill 1.4), each printed as it ends.
 *
 *	cc -o kill-two kill-two.c $(pkg-config --cflags --libs libcgkill)
 *
 *	kill-two [-k DURATION] SLOW FAST
 *
 * SLOW gets SIGTERM, and SIGKILL for what is left DURATION later (default
 * 5s): a process there that ignores SIGTERM holds it until then. FAST gets
 * SIGKILL at once. Both wait up to 10 s to empty. Neither holds up the
 * other: the loop steps each kill when its descriptor says so, and FAST's
 * line comes as soon as FAST is empty.
 *
 * Exit status: 0 both emptied, 1 an error, 2 usage.
 */
#define _POSIX_C_SOURCE 200809L	/* getopt(), clock_gettime() */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include <cgkill.h>

static void usage(void)
{
	fputs("usage: kill-two [-k DURATION] SLOW FAST\n", stderr);
	exit(2);
}

static unsigned long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000 + (unsigned long long)ts.tv_nsec / 1000000;
}

/* "PATH: emptied after N ms (TERM KILL)", or "PATH: MESSAGE (...)". */
static void print_result(const cgk_report *rep, unsigned long long ms)
{
	char buf[32];

	printf("%s: ", cgk_report_path(rep));
	if (cgk_report_error(rep))
		printf("%s after %llu ms (", cgk_report_message(rep), ms);
	else
		printf("emptied after %llu ms (", ms);
	for (size_t i = 0; i < cgk_report_n_signals(rep); i++)
		printf("%s%s", i ? " " : "",
		       cgk_signal_name(cgk_report_signal(rep, i, NULL), buf, sizeof(buf)));
	printf(")\n");
	fflush(stdout);
}

/* The options of each kill: TERM then KILL after grace_ms, or KILL. */
static cgk_options *options(int slow, uint64_t grace_ms)
{
	cgk_options *opts = NULL;

	if (cgk_options_new(&opts) < 0)
		return NULL;
	if (slow && (cgk_options_set_signal(opts, SIGTERM) < 0 ||
		     cgk_options_add_escalation(opts, grace_ms, SIGKILL) < 0))
		return cgk_options_free(opts);
	return opts;
}

int main(int argc, char *argv[])
{
	uint64_t grace_ms = 5000;
	cgk_kill_op *op[2] = { NULL, NULL };
	cgk_options *opts[2];
	unsigned long long start;
	int c, ep, left = 0, failed = 0;

	while ((c = getopt(argc, argv, "k:")) != -1) {
		if (c != 'k' || cgk_parse_duration(optarg, &grace_ms) < 0)
			usage();
	}
	if (argc - optind != 2)
		usage();
	ep = epoll_create1(EPOLL_CLOEXEC);
	opts[0] = options(1, grace_ms);
	opts[1] = options(0, 0);
	if (ep < 0 || !opts[0] || !opts[1]) {
		perror("kill-two");
		return 1;
	}

	start = now_ms();
	for (int i = 0; i < 2; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)i };
		int r = cgk_kill_start(argv[optind + i], opts[i], &op[i]);

		if (r < 0) {	/* no op: out of memory */
			fprintf(stderr, "kill-two: %s: %s\n", argv[optind + i], strerror(-r));
			return 1;
		}
		if (epoll_ctl(ep, EPOLL_CTL_ADD, cgk_kill_op_fd(op[i]), &ev) < 0) {
			perror("kill-two: epoll_ctl");
			return 1;
		}
		left++;
	}

	while (left > 0) {
		struct epoll_event ev;
		cgk_report *rep = NULL;
		int n = epoll_wait(ep, &ev, 1, -1), i;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			perror("kill-two: epoll_wait");
			return 1;
		}
		i = (int)ev.data.u32;
		if (cgk_kill_op_step(op[i]) == -EAGAIN)
			continue;	/* under way: wait for its descriptor again */
		epoll_ctl(ep, EPOLL_CTL_DEL, cgk_kill_op_fd(op[i]), NULL);
		if (cgk_kill_op_finish(op[i], &rep) < 0)
			failed = 1;
		op[i] = NULL;
		print_result(rep, now_ms() - start);
		cgk_report_free(rep);
		left--;
	}
	close(ep);
	cgk_options_free(opts[0]);
	cgk_options_free(opts[1]);
	return failed;
}
