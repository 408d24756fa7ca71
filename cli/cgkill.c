/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cgkill: kill every process in a cgroup and its descendants. Options,
 * messages and exit codes; the work is done by libcgkill. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cgkill.h"

enum {
	EXIT_DONE = 0,
	EXIT_ERROR = 1,
	EXIT_USAGE = 2,
	EXIT_TIMEOUT = 3,
	EXIT_REFUSED = 4,
};

struct cli {
	struct cgk_options opts;
	bool wait_set, verbose, quiet, json, print;
};

static void usage(FILE *out)
{
	fputs("Usage:\n"
	      " cgkill [options] <cgroup>...\n"
	      " cgkill [options] --pid <pid>...\n"
	      " cgkill -l [<signal>] | -L\n"
	      "\n"
	      "Kill every process in a cgroup and in all of its descendant cgroups.\n"
	      "<cgroup> is a path into a mounted cgroup hierarchy, or a path relative\n"
	      "to the cgroup v2 mount as /proc/<pid>/cgroup shows it.\n"
	      "\n"
	      "Options:\n"
	      " -s, --signal <signal>        signal to send (name or number; default KILL)\n"
	      " -b, --backend <name>         auto, kernel, freeze, v1-freeze or loop\n"
	      " -w, --wait[=<duration>]      wait until the tree is empty (default 10s)\n"
	      "     --no-wait                return once the signals are sent\n"
	      "     --timeout <duration> <signal>\n"
	      "                              after <duration>, send <signal> to what is left\n"
	      "     --pid <pid>              target the cgroup v2 that holds <pid>\n"
	      " -p, --print                  list what would be signalled, change nothing\n"
	      " -n, --dry-run                same as --print\n"
	      " -j, --json                   write a JSON report to standard output\n"
	      " -f, --force                  override the self, PID 1 and protected guards\n"
	      " -i, --interactive            ask before signalling\n"
	      "     --protected <file>       protected-cgroup list (default /etc/cgkill/protected)\n"
	      "     --list-hierarchies       show the cgroup hierarchies and their backends\n"
	      " -l, --list[=<signal>]        list signal names, or convert one\n"
	      " -L, --table                  list signal names and numbers\n"
	      " -v, --verbose                report what is done and progress while waiting\n"
	      " -q, --quiet                  print errors only\n"
	      "\n"
	      " -h, --help                   display this help\n"
	      " -V, --version                display version\n"
	      "\n"
	      "Exit status: 0 done and empty, 1 error, 2 usage, 3 timed out (survivors\n"
	      "listed), 4 refused by a guard rail.\n"
	      "\n"
	      "For more details see cgkill(1).\n",
	      out);
}

/* The one filter for text from the kernel or the user: cgroup paths and
 * names, command names, arguments, and messages that embed them. Whoever
 * owns a subtree picks its names; they must not drive the terminal. UTF-8
 * is decoded: each control character (C0, DEL, C1 such as U+009B CSI) and
 * each byte that is not part of valid UTF-8 (a lone 0x9b is CSI to an 8-bit
 * terminal) becomes '?'; the rest passes as is. Written in chunks: stderr
 * is unbuffered. */
static void put_safe(FILE *out, const char *text)
{
	const unsigned char *s = (const unsigned char *)text;
	char buf[256];
	size_t n = 0;

	while (*s) {
		/* Length of the valid sequence (RFC 3629) at s, 0 if invalid;
		 * the terminating NUL is no continuation byte. */
		size_t len = *s < 0x80 ? 1 : *s < 0xc2 ? 0 : *s < 0xe0 ? 2 : *s < 0xf0 ? 3 :
			     *s < 0xf5 ? 4 : 0;
		unsigned char lo = *s == 0xe0 ? 0xa0 : *s == 0xf0 ? 0x90 : 0x80;
		unsigned char hi = *s == 0xed ? 0x9f : *s == 0xf4 ? 0x8f : 0xbf;

		if (len > 1 && (s[1] < lo || s[1] > hi))
			len = 0;
		for (size_t i = 2; i < len; i++)
			if (s[i] < 0x80 || s[i] > 0xbf)
				len = 0;
		if (!len || (len == 1 && (*s < 0x20 || *s == 0x7f)) ||
		    (len == 2 && *s == 0xc2 && s[1] < 0xa0)) {
			buf[n++] = '?';
			s += len ?: 1;
		} else {
			memcpy(buf + n, s, len);
			n += len;
			s += len;
		}
		if (n > sizeof(buf) - 4) {
			fwrite(buf, 1, n, out);
			n = 0;
		}
	}
	if (n)
		fwrite(buf, 1, n, out);
}

/* fprintf for messages that embed such text: the whole message goes through
 * put_safe(), a newline that ends fmt is kept. */
static void __attribute__((format(printf, 2, 0))) vsay(FILE *out, const char *fmt, va_list ap)
{
	size_t n = strlen(fmt);
	bool nl = n && fmt[n - 1] == '\n';
	char *text;
	int len = vasprintf(&text, fmt, ap);

	if (len < 0)
		return;
	if (nl)
		text[len - 1] = '\0';
	put_safe(out, text);
	if (nl)
		fputc('\n', out);
	free(text);
}

static void __attribute__((format(printf, 2, 3))) say(FILE *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(out, fmt, ap);
	va_end(ap);
}

static void __attribute__((noreturn, format(printf, 1, 2))) usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("cgkill: ", stderr);
	va_start(ap, fmt);
	vsay(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'cgkill --help' for more information.\n", stderr);
	exit(EXIT_USAGE);
}

/* getopt's own messages would echo the argument unfiltered (opterr is 0):
 * the same ones through the filter. arg is the element getopt stopped at,
 * which a long option always is. */
static void __attribute__((noreturn)) bad_option(const struct option *longopts, const char *arg)
{
	size_t len = strcspn(arg, "=");
	unsigned matches = 0;
	bool known = false;

	if (!optopt) {
		for (const struct option *o = longopts; o->name && len > 2; o++)
			matches += strncmp(o->name, arg + 2, len - 2) == 0;
		usage_error(matches > 1 ? "option '%s' is ambiguous" : "unrecognized option '%s'", arg);
	}
	for (const struct option *o = longopts; o->name; o++)
		known |= o->val == optopt;
	if (known && strncmp(arg, "--", 2) == 0) {
		if (strchr(arg, '='))
			usage_error("option '%.*s' doesn't allow an argument", (int)len, arg);
		usage_error("option '%s' requires an argument", arg);
	}
	if (known)
		usage_error("option requires an argument -- '%c'", optopt);
	usage_error("invalid option -- '%c'", optopt);
}

static int parse_signal(const char *text)
{
	int sig;

	if (cgk_signal_from_name(text, &sig) < 0)
		usage_error("unknown signal: %s", text);
	return sig;
}

static uint64_t parse_duration(const char *text)
{
	uint64_t ms;

	if (cgk_parse_duration(text, &ms) < 0)
		usage_error("invalid duration: %s (use a number with ms, s or m)", text);
	return ms;
}

static int list_signals(const char *arg)
{
	char buf[32];

	if (arg) {
		char *end;
		long num = strtol(arg, &end, 10);

		/* A number converts to its name (exit statuses above 128 too). */
		if (*arg && !*end) {
			const char *name = cgk_signal_name((int)(num > 128 ? num - 128 : num), buf, sizeof(buf));

			if (!name)
				usage_error("unknown signal: %s", arg);
			puts(name);
			return EXIT_DONE;
		}
		printf("%d\n", parse_signal(arg));
		return EXIT_DONE;
	}
	/* Count what is printed: 32 and 33 have no name, so sig % 8 would
	 * leave a short row. */
	for (int sig = 1, n = 0; sig <= SIGRTMAX; sig++) {
		const char *name = cgk_signal_name(sig, buf, sizeof(buf));

		if (name)
			printf("%s%c", name, ++n % 8 == 0 || sig == SIGRTMAX ? '\n' : ' ');
	}
	return EXIT_DONE;
}

static int print_table(void)
{
	char buf[32];

	for (int sig = 1, n = 0; sig <= SIGRTMAX; sig++) {
		const char *name = cgk_signal_name(sig, buf, sizeof(buf));

		if (name)
			printf("%2d %-8s%s", sig, name, ++n % 7 == 0 || sig == SIGRTMAX ? "\n" : " ");
	}
	return EXIT_DONE;
}

static int list_hierarchies(void)
{
	struct cgk_hierarchy *h = NULL;
	size_t n = 0;
	int r = cgk_list_hierarchies(&h, &n);

	if (r < 0) {
		fprintf(stderr, "cgkill: cannot read /proc/self/mountinfo (%s)\n", strerrorname_np(-r));
		return EXIT_ERROR;
	}
	printf("%-32s %-4s %-20s %s\n", "MOUNT", "TYPE", "CONTROLLERS", "BACKENDS");
	for (size_t i = 0; i < n; i++) {
		char backends[128] = "";

		for (int b = CGK_BACKEND_KERNEL; b < CGK_BACKEND_COUNT_; b++)
			if (h[i].backends & (1u << b)) {
				if (*backends)
					strcat(backends, ",");
				strcat(backends, cgk_backend_name(b));
			}
		say(stdout, "%-32s %-4s %-20s %s\n", h[i].path, h[i].version == 2 ? "v2" : "v1",
		    *h[i].controllers ? h[i].controllers : "-", backends);
	}
	free(h);
	return EXIT_DONE;
}

static bool confirm(const char *path, unsigned procs, unsigned cgroups, void *userdata)
{
	const struct cli *cli = userdata;
	char answer[16], buf[32];

	say(stderr, "cgkill: send %s to %u process(es) in %u cgroup(s) under %s? [y/N] ",
		cgk_signal_name(cli->opts.signal, buf, sizeof(buf)) ?: "?", procs, cgroups, path);
	fflush(stderr);
	if (!fgets(answer, sizeof(answer), stdin))
		return false;
	answer[strcspn(answer, "\n")] = '\0';
	return strcasecmp(answer, "y") == 0 || strcasecmp(answer, "yes") == 0;
}

static void progress(const char *path, unsigned left, uint64_t waited_ms, void *userdata)
{
	(void)userdata;
	say(stderr, "cgkill: %s: %u process(es) left after %llu ms\n", path, left,
		(unsigned long long)waited_ms);
}

static void print_processes(FILE *out, const struct cgk_process_list *l, const char *indent)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct cgk_process *p = &l->v[i];

		fprintf(out, "%s%d\t%c\t", indent, p->pid, p->state);
		put_safe(out, *p->cgroup ? p->cgroup : ".");
		fputc('\t', out);
		put_safe(out, p->comm);
		fputc('\n', out);
	}
}

static int exit_status(const struct cgk_report *rep, int r)
{
	if (r >= 0)
		return EXIT_DONE;
	if (rep->refused != CGK_GUARD_NONE)
		return EXIT_REFUSED;
	if (r == -ETIMEDOUT && rep->waited && !rep->emptied)
		return EXIT_TIMEOUT;
	return EXIT_ERROR;
}

static void tell(const struct cli *cli, const struct cgk_report *rep, int r)
{
	char buf[32];

	if (r < 0) {
		fputs("cgkill: ", stderr);
		put_safe(stderr, rep->message);
		fputc('\n', stderr);
		if (!cli->quiet && rep->survivors.n) {
			fprintf(stderr, "cgkill: survivors (pid, state, cgroup, comm):\n");
			print_processes(stderr, &rep->survivors, "  ");
		}
		return;
	}
	if (cli->print && !cli->json)
		print_processes(stdout, &rep->listed, "");
	if (!cli->verbose || cli->quiet || cli->print)
		return;
	say(stderr, "cgkill: %s:", rep->path);
	for (unsigned i = 0; i < rep->n_signals; i++)
		fprintf(stderr, "%s %s via %s", i ? ", then" : "",
			cgk_signal_name(rep->signals[i], buf, sizeof(buf)) ?: "?",
			cgk_backend_name(rep->backends[i]));
	if (rep->fell_back_from != CGK_BACKEND_AUTO)
		fprintf(stderr, " (fell back from %s: %s)", cgk_backend_name(rep->fell_back_from),
			strerrorname_np(rep->fallback_errno) ?: "?");
	fprintf(stderr, ", %u cgroup(s)", rep->cgroups);
	if (rep->backend != CGK_BACKEND_KERNEL)
		fprintf(stderr, ", %u process(es) signalled", rep->signalled);
	if (rep->unreachable)
		fprintf(stderr, ", %u outside our pid namespace", rep->unreachable);
	if (rep->not_permitted)
		fprintf(stderr, ", %u not permitted", rep->not_permitted);
	fprintf(stderr, ", signals sent in %llu ms", (unsigned long long)rep->signal_ms);
	if (rep->emptied)
		fprintf(stderr, ", empty after %llu ms", (unsigned long long)rep->empty_ms);
	fputc('\n', stderr);
}

/* Every target string is owned: --pid ones are made here. */
static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
	interrupted = sig;
}

/* Ctrl-C, SIGTERM or SIGHUP end a wait early; the freeze and signal phase
 * of a target runs to its end, so nothing is left frozen or clamped. */
static void catch_interrupts(void)
{
	struct sigaction sa = { .sa_handler = on_interrupt };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* The library opens pidfds in batches of up to half the soft fd limit, and
 * a batch may need one more read of the list to confirm membership: fewer,
 * larger batches on big cgroups. This process uses no select(2), so the hard
 * limit is safe to take. */
static void raise_fd_limit(void)
{
	struct rlimit nofile;

	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
}

static void free_targets(char ***targets)
{
	for (char **t = *targets; t && *t; t++)
		free(*t);
	free(*targets);
}

static void free_pids(pid_t **pids)
{
	free(*pids);
}

enum {
	OPT_NO_WAIT = 0x100,
	OPT_TIMEOUT,
	OPT_PID,
	OPT_PROTECTED,
	OPT_LIST_HIERARCHIES,
};

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "signal", required_argument, NULL, 's' },
		{ "backend", required_argument, NULL, 'b' },
		{ "wait", optional_argument, NULL, 'w' },
		{ "no-wait", no_argument, NULL, OPT_NO_WAIT },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "print", no_argument, NULL, 'p' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "force", no_argument, NULL, 'f' },
		{ "interactive", no_argument, NULL, 'i' },
		{ "protected", required_argument, NULL, OPT_PROTECTED },
		{ "list-hierarchies", no_argument, NULL, OPT_LIST_HIERARCHIES },
		{ "list", optional_argument, NULL, 'l' },
		{ "table", no_argument, NULL, 'L' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	struct cli cli = { .opts = CGK_OPTIONS_INIT };
	char **targets __attribute__((cleanup(free_targets))) = calloc((size_t)argc + 1, sizeof(char *));
	/* pids[i] > 0: targets[i] is that --pid, resolved by the library,
	 * which checks the cgroup it opens holds the pid. */
	pid_t *pids __attribute__((cleanup(free_pids))) = calloc((size_t)argc + 1, sizeof(pid_t));
	size_t n_targets = 0;
	int c;

	if (!targets || !pids)
		return EXIT_ERROR;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "s:b:w::pnjfil::LvqhV", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			cli.opts.signal = parse_signal(optarg);
			break;
		case 'b':
			if (cgk_backend_from_name(optarg, &cli.opts.backend) < 0)
				usage_error("unknown backend: %s (auto, kernel, freeze, v1-freeze, loop)", optarg);
			break;
		case 'w': {
			uint64_t ms;

			/* "-w 5s" would make 5s a cgroup to kill: say how to write it. */
			if (!optarg && optind < argc && cgk_parse_duration(argv[optind], &ms) == 0)
				usage_error("a duration goes with the option: -w%s or --wait=%s",
					    argv[optind], argv[optind]);
			cli.wait_set = true;
			cli.opts.wait_ms = optarg ? parse_duration(optarg) : 10000;
			if (!cli.opts.wait_ms)
				usage_error("--wait needs a duration above 0; use --no-wait not to wait");
			break;
		}
		case OPT_NO_WAIT:
			cli.wait_set = true;
			cli.opts.wait_ms = 0;
			break;
		case OPT_TIMEOUT: {
			struct cgk_escalation *e;

			if (optind >= argc)
				usage_error("--timeout needs a duration and a signal");
			if (cli.opts.n_escalations == CGK_MAX_ESCALATIONS)
				usage_error("at most %d --timeout steps", CGK_MAX_ESCALATIONS);
			e = &cli.opts.escalations[cli.opts.n_escalations++];
			e->after_ms = parse_duration(optarg);
			e->signal = parse_signal(argv[optind++]);
			break;
		}
		case OPT_PID: {
			char *end;
			long pid = strtol(optarg, &end, 10);

			if (!isdigit((unsigned char)*optarg) || *end || pid <= 0 || pid > INT32_MAX)
				usage_error("invalid pid: %s", optarg);
			pids[n_targets] = (pid_t)pid;
			targets[n_targets++] = strdup(optarg);
			break;
		}
		case 'p':
		case 'n':
			cli.print = true;
			cli.opts.flags |= CGK_DRY_RUN;
			break;
		case 'j':
			cli.json = true;
			break;
		case 'f':
			cli.opts.flags |= CGK_FORCE;
			break;
		case 'i':
			cli.opts.confirm = confirm;
			break;
		case OPT_PROTECTED:
			cli.opts.protected_file = optarg;
			break;
		case OPT_LIST_HIERARCHIES:
			return list_hierarchies();
		case 'l':
			if (!optarg && optind < argc && argv[optind][0] != '-')
				optarg = argv[optind++];
			return list_signals(optarg);
		case 'L':
			return print_table();
		case 'v':
			cli.verbose = true;
			cli.opts.progress = progress;
			break;
		case 'q':
			cli.quiet = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_DONE;
		case 'V':
			printf("cgkill %s\n", CGK_VERSION);
			return EXIT_DONE;
		default:
			bad_option(longopts, argv[optind - 1]);
		}
	}
	while (optind < argc)
		targets[n_targets++] = strdup(argv[optind++]);
	for (size_t i = 0; i < n_targets; i++)
		if (!targets[i])
			return EXIT_ERROR;
	if (!n_targets)
		usage_error("no cgroup specified");
	/* Waiting is the default for KILL and for escalations; a graceful
	 * signal alone returns once it is sent unless --wait asks. */
	if (!cli.wait_set && cli.opts.signal != SIGKILL && !cli.opts.n_escalations)
		cli.opts.wait_ms = 0;
	if (cli.quiet)
		cli.opts.progress = NULL;
	cli.opts.userdata = &cli;

	struct cgk_report *reports = calloc(n_targets, sizeof(*reports));
	const struct cgk_report **list = calloc(n_targets, sizeof(*list));
	int worst = EXIT_DONE;
	size_t handled = 0;

	if (!reports || !list) {
		free(reports);
		free(list);
		return EXIT_ERROR;
	}
	catch_interrupts();
	raise_fd_limit();
	cli.opts.cancel = &interrupted;
	for (size_t i = 0; i < n_targets && !interrupted; i++, handled++) {
		int r = pids[i] ? cgk_kill_pid(pids[i], &cli.opts, &reports[i]) :
				  cgk_kill(targets[i], &cli.opts, &reports[i]);
		int status = exit_status(&reports[i], r);

		tell(&cli, &reports[i], r);
		if (status > worst)
			worst = status;
		list[i] = &reports[i];
	}
	if (cli.json && cgk_report_json(list, handled, stdout) < 0) {
		fprintf(stderr, "cgkill: cannot write the JSON report\n");
		worst = EXIT_ERROR;
	}
	for (size_t i = 0; i < handled; i++)
		cgk_report_free(&reports[i]);
	if (interrupted)
		worst = 128 + interrupted;
	free(reports);
	free(list);
	return worst;
}
