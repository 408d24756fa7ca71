/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kill-service: stop a systemd service, or any cgroup, with libcgkill and
 * print what happened.
 *
 *	cc -o kill-service kill-service.c $(pkg-config --cflags --libs libcgkill)
 *
 *	kill-service [-s SIGNAL] [-k DURATION] [-w DURATION] [-j] UNIT|CGROUP
 *
 * UNIT is a system service name such as foo.service (its cgroup is then
 * /system.slice/foo.service); CGROUP is anything cgkill(1) accepts.
 * -s sends SIGNAL first (default KILL); -k sends SIGKILL to what is left
 * DURATION later; -w bounds the wait for the cgroup to empty (default 10s);
 * -j prints the report as JSON instead of text.
 *
 * Exit status: 0 emptied, 1 error, 2 usage, 3 survivors left, 4 refused.
 */
#define _POSIX_C_SOURCE 200809L	/* getopt() */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cgkill.h>

static void usage(void)
{
	fputs("usage: kill-service [-s SIGNAL] [-k DURATION] [-w DURATION] [-j] UNIT|CGROUP\n",
	      stderr);
	exit(2);
}

static void print_report(const cgk_report *rep)
{
	enum cgk_backend backend = cgk_report_backend(rep);
	const cgk_process *p;
	char buf[32];

	printf("cgroup:        %s (cgroup v%d)\n", cgk_report_path(rep), cgk_report_hierarchy(rep));
	printf("backend:       %s", cgk_backend_name(backend));
	if (cgk_report_fell_back_from(rep) != CGK_BACKEND_AUTO)
		printf(" (fell back from %s: %s)", cgk_backend_name(cgk_report_fell_back_from(rep)),
		       strerror(cgk_report_fallback_errno(rep)));
	putchar('\n');
	printf("signals:      ");
	for (size_t i = 0; i < cgk_report_n_signals(rep); i++) {
		const char *name = cgk_signal_name(cgk_report_signal(rep, i, NULL), buf, sizeof(buf));

		printf(" %s", name ? name : "?");
	}
	putchar('\n');
	printf("cgroups:       %u\n", cgk_report_cgroups(rep));
	/* cgroup.kill does not say whom it killed: the kernel backend adds
	 * nothing to the count. */
	printf("signalled:     %u%s\n", cgk_report_signalled(rep),
	       backend == CGK_BACKEND_KERNEL ? " (not counting cgroup.kill)" : "");
	printf("unreachable:   %u\n", cgk_report_unreachable(rep));
	printf("not permitted: %u\n", cgk_report_not_permitted(rep));
	printf("emptied:       %s", cgk_report_emptied(rep) ? "yes" :
	       cgk_report_waited(rep) ? "no" : "not waited for");
	if (cgk_report_emptied(rep))
		printf(" after %llu ms", (unsigned long long)cgk_report_empty_ms(rep));
	putchar('\n');
	for (size_t i = 0; (p = cgk_report_process(rep, CGK_LIST_SURVIVORS, i)); i++)
		printf("survivor:      %d %c %s %s\n", (int)cgk_process_pid(p), cgk_process_state(p),
		       *cgk_process_cgroup(p) ? cgk_process_cgroup(p) : ".", cgk_process_comm(p));
	/* "" exactly when the call succeeded */
	if (cgk_report_error(rep))
		printf("error:         %s\n", cgk_report_message(rep));
}

int main(int argc, char **argv)
{
	cgk_options *opts = NULL;
	cgk_report *rep = NULL;
	const char *prefix;
	char *target;
	size_t size;
	bool json = false, escalate = false;
	uint64_t kill_after = 0;
	int c, r, status;

	if (cgk_options_new(&opts) < 0) {
		fputs("kill-service: out of memory\n", stderr);
		return 1;
	}
	while ((c = getopt(argc, argv, "s:k:w:j")) != -1) {
		int sig;
		uint64_t ms;

		switch (c) {
		case 's':
			if (cgk_signal_from_name(optarg, &sig) < 0 ||
			    cgk_options_set_signal(opts, sig) < 0)
				usage();
			break;
		case 'k':
			/* the last -k counts */
			if (cgk_parse_duration(optarg, &kill_after) < 0)
				usage();
			escalate = true;
			break;
		case 'w':
			if (cgk_parse_duration(optarg, &ms) < 0 || cgk_options_set_wait(opts, ms) < 0)
				usage();
			break;
		case 'j':
			json = true;
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1)
		usage();
	if (escalate && cgk_options_add_escalation(opts, kill_after, SIGKILL) < 0) {
		fputs("kill-service: out of memory\n", stderr);
		return 1;
	}

	/* A bare unit name lives in system.slice; the library resolves paths
	 * relative to the cgroup v2 mount. */
	prefix = strchr(argv[optind], '/') ? "" : "/system.slice/";
	size = strlen(prefix) + strlen(argv[optind]) + 1;
	target = malloc(size);
	if (!target) {
		fputs("kill-service: out of memory\n", stderr);
		return 1;
	}
	snprintf(target, size, "%s%s", prefix, argv[optind]);

	r = cgk_kill(target, opts, &rep);
	if (!rep) {
		/* not even the report could be allocated */
		fprintf(stderr, "kill-service: %s: %s\n", target, strerror(-r));
	} else if (json) {
		const cgk_report *list[1] = { rep };

		cgk_report_json(list, 1, stdout);
	} else {
		print_report(rep);
	}

	if (r >= 0)
		status = 0;
	else if (cgk_report_refused(rep) != CGK_GUARD_NONE)
		status = 4;
	else if (r == -ETIMEDOUT)
		status = 3;
	else
		status = 1;
	cgk_report_free(rep);
	cgk_options_free(opts);
	free(target);
	return status;
}
