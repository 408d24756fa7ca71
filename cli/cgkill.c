/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cgkill: kill every process in a cgroup and its descendants. Options,
 * messages and exit codes; the work is done by libcgkill. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static void usage(FILE *out)
{
	fputs("Usage:\n"
	      " cgkill [options] <cgroup>...\n"
	      " cgkill [options] --pid <pid>...\n"
	      " cgkill [options] --unit <unit>...\n"
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
	      "     --reap                   after SIGKILL, release the memory at once\n"
	      "                              (process_mrelease, Linux 5.15)\n"
	      "     --pid <pid>              target the cgroup v2 that holds <pid>\n"
	      "     --unit <unit>            target the cgroup of a systemd unit\n"
	      "     --user-unit <unit>       the same, of the user's service manager\n"
	      " -p, --print                  list what would be signalled, change nothing\n"
	      " -n, --dry-run                same as --print\n"
	      " -j, --json                   write JSON to standard output (see cgkill(1))\n"
	      " -J                           same as --json\n"
	      " -o, --output <list>          the columns of the listings (see below)\n"
	      "     --noheadings             listings without a heading line\n"
	      " -r, --raw                    listings unaligned, values escaped\n"
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
	      " -V, --version                display version\n",
	      out);
	fputs("\nAvailable output columns (--print, survivors):\n", out);
	for (const struct column *c = proc_columns; c->name; c++)
		fprintf(out, " %11s  %s\n", c->name, c->help);
	fputs("\nAvailable output columns (--list-hierarchies):\n", out);
	for (const struct column *c = hier_columns; c->name; c++)
		fprintf(out, " %11s  %s\n", c->name, c->help);
	fputs("\n"
	      "Exit status: 0 done and empty, 1 error, 2 usage, 3 timed out (survivors\n"
	      "listed), 4 refused by a guard rail.\n"
	      "\n"
	      "For more details see cgkill(1).\n",
	      out);
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

/* A number that only lacks its unit: "1000", "1.5", "1min 30". */
static bool lacks_unit(const char *text)
{
	char buf[128];
	uint64_t ms;

	return snprintf(buf, sizeof(buf), "%ss", text) < (int)sizeof(buf) &&
	       cgk_parse_duration(buf, &ms) == 0;
}

/* opt is how the option was written before its argument: "--timeout ". */
static uint64_t parse_duration(const char *opt, const char *text)
{
	uint64_t ms;
	int r = cgk_parse_duration(text, &ms);

	/* kill --timeout takes milliseconds, systemd seconds: ask which. */
	if (r == -EINVAL && lacks_unit(text))
		usage_error("%s%s: a duration needs a unit (%sms? %ss?)", opt, text, text, text);
	if (r == -ERANGE)
		usage_error("invalid duration: %s (too long; infinity waits for ever)", text);
	if (r < 0)
		usage_error("invalid duration: %s (a number and a unit, as 500ms, 10s or "
			    "1min 30s, or infinity)", text);
	return ms;
}

static bool confirm(const char *path, unsigned procs, unsigned cgroups, void *userdata)
{
	const struct cli *cli = userdata;
	char answer[16], buf[32];

	say(stderr, "cgkill: send %s to %u process(es) in %u cgroup(s) under %s? [y/N] ",
		cgk_signal_name(cli->signal, buf, sizeof(buf)) ?: "?", procs, cgroups, path);
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

static int exit_status(const cgk_report *rep, int r)
{
	if (r >= 0)
		return EXIT_DONE;
	if (cgk_report_refused(rep) != CGK_GUARD_NONE)
		return EXIT_REFUSED;
	if (r == -ETIMEDOUT && cgk_report_waited(rep) && !cgk_report_emptied(rep))
		return EXIT_TIMEOUT;
	return EXIT_ERROR;
}

static void tell(const struct cli *cli, const cgk_report *rep, int r)
{
	char buf[32];

	if (r < 0) {
		fputs("cgkill: ", stderr);
		put_safe(stderr, rep ? cgk_report_message(rep) : strerror(-r));
		fputc('\n', stderr);
		if (!cli->quiet && rep)
			print_processes(stderr, cli, &rep, 1, true, cli->raw ? "" : "  ");
		return;
	}
	if (cli->reap && cgk_report_reap_errno(rep) && !cli->quiet)
		say(stderr, "cgkill: %s: --reap: cannot release the memory (%s%s): it is freed as "
			"the processes exit\n", cgk_report_path(rep),
			strerrorname_np(cgk_report_reap_errno(rep)) ?: "?",
			cgk_report_reap_errno(rep) == ENOSYS ? ": no process_mrelease before Linux 5.15" : "");
	if (!cli->verbose || cli->quiet || cli->print)
		return;
	say(stderr, "cgkill: %s:", cgk_report_path(rep));
	for (size_t i = 0; i < cgk_report_n_signals(rep); i++) {
		enum cgk_backend b = CGK_BACKEND_AUTO;
		int sig = cgk_report_signal(rep, i, &b);

		fprintf(stderr, "%s %s via %s", i ? ", then" : "",
			cgk_signal_name(sig, buf, sizeof(buf)) ?: "?", cgk_backend_name(b));
	}
	if (cgk_report_fell_back_from(rep) != CGK_BACKEND_AUTO)
		fprintf(stderr, " (fell back from %s: %s)",
			cgk_backend_name(cgk_report_fell_back_from(rep)),
			strerrorname_np(cgk_report_fallback_errno(rep)) ?: "?");
	fprintf(stderr, ", %u cgroup(s)", cgk_report_cgroups(rep));
	if (cgk_report_backend(rep) != CGK_BACKEND_KERNEL)
		fprintf(stderr, ", %u process(es) signalled", cgk_report_signalled(rep));
	if (cgk_report_unreachable(rep))
		fprintf(stderr, ", %u outside our pid namespace", cgk_report_unreachable(rep));
	if (cgk_report_not_permitted(rep))
		fprintf(stderr, ", %u not permitted", cgk_report_not_permitted(rep));
	if (cli->reap) {
		fprintf(stderr, ", %u address space(s) released", cgk_report_reaped(rep));
		if (cgk_report_reap_gone(rep) || cgk_report_reap_shared(rep))
			fprintf(stderr, " (%u already gone, %u shared)", cgk_report_reap_gone(rep),
				cgk_report_reap_shared(rep));
	}
	fprintf(stderr, ", signals sent in %llu ms", (unsigned long long)cgk_report_signal_ms(rep));
	if (cgk_report_emptied(rep))
		fprintf(stderr, ", empty after %llu ms", (unsigned long long)cgk_report_empty_ms(rep));
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

/*
 * From the first instruction of the program (a constructor, before main)
 * at SCHED_RR 1 where permitted, and handed to the library as its boost
 * (CGK_BOOSTED): beside a fork bomb a process of ordinary priority that
 * used up its slice waits a round of the scheduler, hundreds of ms (seen
 * between the start of main and the library's call, and at a switch back
 * to SCHED_OTHER before it; bench/RESULTS.md, "Start-up before the
 * signal"). Only from SCHED_OTHER; reset-on-fork, so --unit's systemctl
 * does not inherit it.
 */
static bool boosted;

__attribute__((constructor)) static void boost_from_start(void)
{
	struct sched_param rr = { .sched_priority = 1 };

	boosted = sched_getscheduler(0) == SCHED_OTHER &&
		  sched_setscheduler(0, SCHED_RR | SCHED_RESET_ON_FORK, &rr) == 0;
}

/* Back to SCHED_OTHER (the nice is kept): when there is nothing to hurry. */
static void boost_end(void)
{
	struct sched_param other = { 0 };

	if (boosted)
		sched_setscheduler(0, SCHED_OTHER, &other);
	boosted = false;
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

static void free_options(cgk_options **opts)
{
	cgk_options_free(*opts);
}

/* A setter can fail only without memory: every value was checked. */
static void need(int r)
{
	if (r < 0) {
		fprintf(stderr, "cgkill: %s\n", strerror(-r));
		exit(EXIT_ERROR);
	}
}

enum {
	OPT_NO_WAIT = 0x100,
	OPT_TIMEOUT,
	OPT_PID,
	OPT_PROTECTED,
	OPT_LIST_HIERARCHIES,
	OPT_UNIT,
	OPT_USER_UNIT,
	OPT_NOHEADINGS,
	OPT_REAP,
};


static const struct option longopts[] = {
	{ "signal", required_argument, NULL, 's' },
	{ "backend", required_argument, NULL, 'b' },
	{ "wait", optional_argument, NULL, 'w' },
	{ "no-wait", no_argument, NULL, OPT_NO_WAIT },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "reap", no_argument, NULL, OPT_REAP },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "unit", required_argument, NULL, OPT_UNIT },
	{ "user-unit", required_argument, NULL, OPT_USER_UNIT },
	{ "print", no_argument, NULL, 'p' },
	{ "dry-run", no_argument, NULL, 'n' },
	{ "json", no_argument, NULL, 'j' },
	{ "output", required_argument, NULL, 'o' },
	{ "noheadings", no_argument, NULL, OPT_NOHEADINGS },
	{ "raw", no_argument, NULL, 'r' },
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

/* What the command line asks for. */
struct args {
	struct cli cli;
	cgk_options *opts;
	unsigned flags;
	size_t n_escalations;
	bool kill_escalation;	/* an escalation sends SIGKILL */
	char **targets;
	/* pids[i] > 0: targets[i] is that --pid, resolved by the library,
	 * which checks the cgroup it opens holds the pid. */
	pid_t *pids;
	size_t n_targets;
	/* -l, -L or --list-hierarchies: done once every option is read, so
	 * that -j and the column options count wherever they stand. */
	int listing;
	const char *signal_arg;
};

/* -w[DURATION], --wait[=DURATION] */
static void wait_option(struct args *a, int argc, char **argv)
{
	uint64_t ms, wait_ms;

	/* "-w 5s" would make 5s a cgroup to kill: say how to write it. */
	if (!optarg && optind < argc && cgk_parse_duration(argv[optind], &ms) == 0)
		usage_error("a duration goes with the option: -w%s or --wait=%s", argv[optind], argv[optind]);
	if (!optarg && optind < argc && lacks_unit(argv[optind]))
		usage_error("-w %s: a duration goes with the option and needs a unit "
			    "(-w%sms? -w%ss?)", argv[optind], argv[optind], argv[optind]);
	a->cli.wait_set = true;
	wait_ms = !optarg ? 10000 : parse_duration(strncmp(argv[optind - 1], "--", 2) ? "-w" : "--wait=", optarg);
	if (!wait_ms)
		usage_error("--wait needs a duration above 0; use --no-wait not to wait");
	need(cgk_options_set_wait(a->opts, wait_ms));
}

/* --timeout DURATION SIGNAL */
static void timeout_option(struct args *a, int argc, char **argv)
{
	uint64_t after_ms;
	int sig;

	if (optind >= argc)
		usage_error("--timeout needs a duration and a signal");
	after_ms = parse_duration("--timeout ", optarg);
	sig = parse_signal(argv[optind++]);
	need(cgk_options_add_escalation(a->opts, after_ms, sig));
	a->kill_escalation = a->kill_escalation || sig == SIGKILL;
	a->n_escalations++;
}

/* The options of the kill itself; false if c is none of them. */
static bool kill_option(struct args *a, int c, int argc, char **argv)
{
	enum cgk_backend b;

	switch (c) {
	case 's':
		a->cli.signal = parse_signal(optarg);
		need(cgk_options_set_signal(a->opts, a->cli.signal));
		return true;
	case 'b':
		if (cgk_backend_from_name(optarg, &b) < 0)
			usage_error("unknown backend: %s (auto, kernel, freeze, v1-freeze, loop)", optarg);
		need(cgk_options_set_backend(a->opts, b));
		return true;
	case 'w':
		wait_option(a, argc, argv);
		return true;
	case OPT_NO_WAIT:
		a->cli.wait_set = true;
		need(cgk_options_set_wait(a->opts, 0));
		return true;
	case OPT_TIMEOUT:
		timeout_option(a, argc, argv);
		return true;
	case OPT_REAP:
		a->cli.reap = true;
		a->flags |= CGK_REAP;
		return true;
	case 'f':
		a->flags |= CGK_FORCE;
		return true;
	case 'i':
		need(cgk_options_set_confirm(a->opts, confirm, &a->cli));
		return true;
	case OPT_PROTECTED:
		need(cgk_options_set_protected_file(a->opts, optarg));
		return true;
	}
	return false;
}

/* --pid, --unit, --user-unit; false if c is none of them. */
static bool target_option(struct args *a, int c)
{
	char *end;
	long pid;

	switch (c) {
	case OPT_PID:
		pid = strtol(optarg, &end, 10);
		if (!isdigit((unsigned char)*optarg) || *end || pid <= 0 || pid > INT32_MAX)
			usage_error("invalid pid: %s", optarg);
		a->pids[a->n_targets] = (pid_t)pid;
		a->targets[a->n_targets++] = strdup(optarg);
		return true;
	/* Asked now: a unit that cannot be resolved stops the run before
	 * anything is signalled. */
	case OPT_UNIT:
	case OPT_USER_UNIT:
		a->targets[a->n_targets++] = unit_cgroup(c == OPT_UNIT ? "--unit" : "--user-unit", optarg,
							 c == OPT_USER_UNIT);
		return true;
	}
	return false;
}

/* What is printed, and the listings; false if c is none of them. */
static bool output_option(struct args *a, int c, int argc, char **argv)
{
	switch (c) {
	case 'p':
	case 'n':
		a->cli.print = true;
		a->flags |= CGK_DRY_RUN;
		return true;
	case 'j':
	case 'J':
		a->cli.json = true;
		return true;
	case 'o':
		a->cli.output = optarg;
		return true;
	case OPT_NOHEADINGS:
		a->cli.noheadings = true;
		return true;
	case 'r':
		a->cli.raw = true;
		return true;
	case 'v':
		a->cli.verbose = true;
		return true;
	case 'q':
		a->cli.quiet = true;
		return true;
	case OPT_LIST_HIERARCHIES:
	case 'l':
	case 'L':
		if (a->listing && a->listing != c)
			usage_error("--list, --table and --list-hierarchies are mutually exclusive");
		a->listing = c;
		if (c == 'l' && !optarg && optind < argc && argv[optind][0] != '-')
			optarg = argv[optind++];
		a->signal_arg = optarg;
		return true;
	}
	return false;
}

/* The options into a, then the operands as targets unless a listing was
 * asked for: -1 to go on, or the exit status (--help, --version). Usage
 * errors exit. */
static int parse_args(struct args *a, int argc, char **argv)
{
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "s:b:w::pnjJo:rfil::LvqhV", longopts, NULL)) != -1) {
		if (kill_option(a, c, argc, argv) || target_option(a, c) || output_option(a, c, argc, argv))
			continue;
		if (c == 'h') {
			usage(stdout);
			return EXIT_DONE;
		}
		if (c == 'V') {
			printf("cgkill %s\n", CGK_VERSION);
			return EXIT_DONE;
		}
		bad_option(longopts, argv[optind - 1]);
	}
	/* Text or JSON: options of one are never silently dropped by the other. */
	if (a->cli.json && (a->cli.output || a->cli.noheadings || a->cli.raw))
		usage_error("--json does not go with --output, --noheadings or --raw");
	if ((a->listing == 'l' || a->listing == 'L') && (a->cli.output || a->cli.noheadings || a->cli.raw))
		usage_error("--output, --noheadings and --raw are for listings of processes "
			    "and hierarchies, not of signals");
	pick_columns(&a->cli.cols, a->listing == OPT_LIST_HIERARCHIES ? hier_columns : proc_columns,
		     a->cli.output);
	if (a->listing) {
		if (a->n_targets || optind < argc)
			usage_error("--list, --table and --list-hierarchies take no target");
		return -1;
	}
	while (optind < argc)
		a->targets[a->n_targets++] = strdup(argv[optind++]);
	return -1;
}

/* What the options leave to be checked or set once all are read. */
static int finish_args(struct args *a)
{
	for (size_t i = 0; i < a->n_targets; i++)
		if (!a->targets[i])
			return EXIT_ERROR;
	if (!a->n_targets)
		usage_error("no cgroup specified");
	/* process_mrelease frees the memory of a process with SIGKILL pending,
	 * of no other: a reap with no SIGKILL would silently do nothing. */
	if (a->cli.reap && a->cli.signal != SIGKILL && !a->kill_escalation)
		usage_error("--reap releases memory after SIGKILL only: use it with -s KILL (the "
			    "default) or an escalation to KILL (--timeout <duration> KILL)");
	/* Waiting is the default for KILL and for escalations; a graceful
	 * signal alone returns once it is sent unless --wait asks. */
	if (!a->cli.wait_set && a->cli.signal != SIGKILL && !a->n_escalations)
		need(cgk_options_set_wait(a->opts, 0));
	if (a->cli.verbose && !a->cli.quiet)
		need(cgk_options_set_progress(a->opts, progress, NULL));
	return -1;
}

/* Kill each target in turn, say what happened: the worst exit status. */
static int kill_targets(struct args *a)
{
	cgk_report **reports = calloc(a->n_targets, sizeof(*reports));
	int worst = EXIT_DONE;
	size_t handled = 0;

	if (!reports)
		return EXIT_ERROR;
	catch_interrupts();
	raise_fd_limit();
	need(cgk_options_set_cancel(a->opts, &interrupted));
	/* Signal at real-time priority where permitted, back to ours before
	 * any wait: beside a fork bomb an ordinary process gets a sliver of
	 * the CPU (bench/RESULTS.md, "Stalls beside a bomb"). */
	need(cgk_options_set_flags(a->opts, a->flags | CGK_BOOST | (boosted ? CGK_BOOSTED : 0)));
	for (size_t i = 0; i < a->n_targets && !interrupted; i++, handled++) {
		int r = a->pids[i] ? cgk_kill_pid(a->pids[i], a->opts, &reports[i]) :
				     cgk_kill(a->targets[i], a->opts, &reports[i]);
		int status = exit_status(reports[i], r);

		/* Not even a report: out of memory. */
		if (!reports[i])
			return EXIT_ERROR;
		tell(&a->cli, reports[i], r);
		if (status > worst)
			worst = status;
	}
	boost_end();
	/* One table for every target's dry run: one heading, columns aligned
	 * across them. */
	if (a->cli.print && !a->cli.json)
		print_processes(stdout, &a->cli, (const cgk_report *const *)reports, handled, false, "");
	if (a->cli.json && cgk_report_json((const cgk_report *const *)reports, handled, stdout) < 0) {
		fprintf(stderr, "cgkill: cannot write the JSON report\n");
		worst = EXIT_ERROR;
	}
	for (size_t i = 0; i < handled; i++)
		cgk_report_free(reports[i]);
	if (interrupted)
		worst = 128 + interrupted;
	free(reports);
	return worst;
}

int main(int argc, char **argv)
{
	cgk_options *opts __attribute__((cleanup(free_options))) = NULL;
	char **targets __attribute__((cleanup(free_targets))) = calloc((size_t)argc + 1, sizeof(char *));
	pid_t *pids __attribute__((cleanup(free_pids))) = calloc((size_t)argc + 1, sizeof(pid_t));
	struct args a = { .cli.signal = SIGKILL, .targets = targets, .pids = pids };
	int r;

	if (!targets || !pids || cgk_options_new(&opts) < 0)
		return EXIT_ERROR;
	a.opts = a.cli.opts = opts;
	r = parse_args(&a, argc, argv);
	if (r >= 0)
		return r;
	if (a.listing || (a.flags & CGK_DRY_RUN))
		boost_end();
	if (a.listing)
		return a.listing == 'l' ? list_signals(a.signal_arg, a.cli.json) :
		       a.listing == 'L' ? signal_table(a.cli.json) : list_hierarchies(&a.cli);
	r = finish_args(&a);
	if (r >= 0)
		return r;
	return kill_targets(&a);
}
