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

static void print_report(const struct cgk_report *rep)
{
	char buf[32];

	printf("cgroup:        %s (cgroup v%d)\n", rep->path, rep->hierarchy);
	printf("backend:       %s", cgk_backend_name(rep->backend));
	if (rep->fell_back_from != CGK_BACKEND_AUTO)
		printf(" (fell back from %s: %s)", cgk_backend_name(rep->fell_back_from),
		       strerror(rep->fallback_errno));
	putchar('\n');
	printf("signals:      ");
	for (unsigned i = 0; i < rep->n_signals; i++) {
		const char *name = cgk_signal_name(rep->signals[i], buf, sizeof(buf));

		printf(" %s", name ? name : "?");
	}
	putchar('\n');
	printf("cgroups:       %u\n", rep->cgroups);
	/* cgroup.kill does not say whom it killed: the kernel backend adds
	 * nothing to the count. */
	printf("signalled:     %u%s\n", rep->signalled,
	       rep->backend == CGK_BACKEND_KERNEL ? " (not counting cgroup.kill)" : "");
	printf("unreachable:   %u\n", rep->unreachable);
	printf("not permitted: %u\n", rep->not_permitted);
	printf("emptied:       %s", rep->emptied ? "yes" : rep->waited ? "no" : "not waited for");
	if (rep->emptied)
		printf(" after %llu ms", (unsigned long long)rep->empty_ms);
	putchar('\n');
	for (size_t i = 0; i < rep->survivors.n; i++) {
		const struct cgk_process *p = &rep->survivors.v[i];

		printf("survivor:      %d %c %s %.16s\n", p->pid, p->state,
		       *p->cgroup ? p->cgroup : ".", p->comm);
	}
	if (rep->error)
		printf("error:         %s\n", rep->message);
}

int main(int argc, char **argv)
{
	struct cgk_options opts = CGK_OPTIONS_INIT;
	struct cgk_report rep;
	const struct cgk_report *list[1] = { &rep };
	char target[4096];
	bool json = false;
	uint64_t ms;
	int c, r;

	while ((c = getopt(argc, argv, "s:k:w:j")) != -1) {
		switch (c) {
		case 's':
			if (cgk_signal_from_name(optarg, &opts.signal) < 0)
				usage();
			break;
		case 'k':
			if (cgk_parse_duration(optarg, &ms) < 0)
				usage();
			opts.escalations[0] = (struct cgk_escalation){ .after_ms = ms, .signal = SIGKILL };
			opts.n_escalations = 1;
			break;
		case 'w':
			if (cgk_parse_duration(optarg, &opts.wait_ms) < 0)
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

	/* A bare unit name lives in system.slice; the library resolves paths
	 * relative to the cgroup v2 mount. */
	if (!strchr(argv[optind], '/'))
		snprintf(target, sizeof(target), "/system.slice/%s", argv[optind]);
	else
		snprintf(target, sizeof(target), "%s", argv[optind]);

	r = cgk_kill(target, &opts, &rep);
	if (json)
		cgk_report_json(list, 1, stdout);
	else
		print_report(&rep);
	cgk_report_free(&rep);

	if (r >= 0)
		return 0;
	if (rep.refused != CGK_GUARD_NONE)
		return 4;
	if (r == -ETIMEDOUT)
		return 3;
	return 1;
}
