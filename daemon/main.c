/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgkilld: options, start-up (mlockall, oom_score_adj -1000, the
 * hierarchies), and the loop: one epoll_wait() with no timeout, so that
 * nothing wakes the daemon while nothing happens. Signals come through a
 * signalfd: SIGHUP reloads (a bad configuration is refused, the old rules
 * stay), SIGUSR1 dumps the state, SIGTERM and SIGINT stop.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/timerfd.h>
#include <unistd.h>


#include "cgkilld.h"
#include "control.h"

/* ---- configuration ---- */

/* An error or warning of the configuration: logged, and written on
 * the FILE ud too if not NULL (a reload through the control socket). */
static void print_error(void *ud, int pri, const char *file, unsigned line, const char *msg)
{
	FILE *errors = ud;
	char where[4200];

	if (line)
		snprintf(where, sizeof(where), "%s:%u", file, line);
	else
		snprintf(where, sizeof(where), "%s", file);
	log_msg(pri, "%s: %s", where, msg);
	if (!errors)
		return;
	/* through the log's filter: it may end on a terminal */
	cgk_text_write(errors, where, strlen(where), CGK_TEXT_SAFE);
	fputs(": ", errors);
	cgk_text_write(errors, msg, strlen(msg), CGK_TEXT_SAFE);
	fputc('\n', errors);
}

/* Parse and check; 0 with cfg filled, or -EINVAL (errors logged, and
 * written on errors if not NULL). */
static int load(struct config *cfg, const char *path, bool optional, FILE *errors)
{
	bool privileged = has_cap_sys_resource();

	conf_init(cfg);
	conf_load(cfg, path, optional, print_error, errors);
	conf_finish(cfg, print_error, errors);
	for (size_t i = 0; i < cfg->nrules; i++) {
		struct rule *r = &cfg->rules[i];
		char why[512];

		if (!r->match)
			continue;
		if (rule_guard_check(r, cfg->protected_file, why, sizeof(why)) < 0) {
			conf_report(print_error, errors, LOG_PRI_ERR, r->file, r->line, "rule %s: Match=%s refused: %s",
				    r->name ? r->name : "?", r->match, why);
			cfg->errors++;
		}
		if ((r->triggers & TRIG_PSI) &&
		    pressure_trigger_text(r, privileged, NULL, 0, why, sizeof(why)) < 0) {
			conf_report(print_error, errors, LOG_PRI_ERR, r->file, r->line, "rule %s: %s",
				    r->name ? r->name : "?", why);
			cfg->errors++;
		}
	}
	if (cfg->errors) {
		conf_free(cfg);
		return -EINVAL;
	}
	return 0;
}

static bool read_only(int fd)
{
	struct statvfs sv;

	return fstatvfs(fd, &sv) == 0 && (sv.f_flag & ST_RDONLY);
}

/*
 * EventLog=: root appends to it, so it must be no file that someone else
 * chose. Its directory, and every one above, must pass open_trusted(): the
 * directory itself root's and writable by no one else, so that no symlink
 * or hard link can be planted in it; the file is opened without following
 * a symlink, without blocking (a FIFO) and without becoming a controlling
 * terminal, and only a regular file is written. With create false (for
 * --check), nothing is created. The fd (-1 for none, or with create false
 * 0 when it may be used), or -errno with the reason in why.
 */
static int event_log_open(const char *path, bool create, char *why, size_t size)
{
	const char *base;
	struct stat st;
	int dfd, fd;

	dfd = open_trusted_parent(path, &base, why, size);
	if (dfd < 0)
		return dfd;
	if (!create && read_only(dfd)) {
		/* under ProtectSystem=strict, outside ReadWritePaths= */
		snprintf(why, size, "its directory is on a read-only file system");
		close(dfd);
		return -EROFS;
	}
	fd = openat(dfd, base,
		    create ? O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY
			   : O_PATH | O_NOFOLLOW | O_CLOEXEC,
		    0640);
	close(dfd);
	if (fd < 0 && !create && errno == ENOENT)
		return 0;	/* created at start */
	if (fd < 0 || fstat(fd, &st) < 0) {
		int e = errno;

		/* ENXIO: a FIFO without a reader, or a device */
		snprintf(why, size, "%s", e == ELOOP ? "a symlink" : e == ENXIO ? "not a regular file" : strerror(e));
		if (fd >= 0)
			close(fd);
		return -e;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, size, "%s", S_ISLNK(st.st_mode) ? "a symlink" : "not a regular file");
		close(fd);
		return -EINVAL;
	}
	if (!create) {
		close(fd);
		return 0;
	}
	return fd;
}

/* At start and at each reload: a refused EventLog= is logged and the
 * events go to the log only; the guard goes on. */
static int open_event_log(const char *path)
{
	char why[1024];
	int fd;

	if (!path)
		return -1;
	fd = event_log_open(path, true, why, sizeof(why));
	if (fd < 0) {
		log_msg(LOG_PRI_ERR, "EventLog %s: refused: %s (events go to the log only)", path, why);
		return -1;
	}
	return fd;
}

static void status(void)
{
	notify("STATUS=%zu rule(s), %zu cgroup(s) watched%s", D.cfg.nrules, D.ncgs,
	       D.global_dry_run || D.cfg.dry_run ? ", dry run" : "");
}

/* SIGHUP, and the control socket's reload (errors: its reply). */
static int reload(FILE *errors)
{
	struct config next;
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	notify("RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=reloading",
	       (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000);
	log_msg(LOG_PRI_INFO, "reloading %s", D.config_path);
	if (load(&next, D.config_path, D.config_optional, errors) < 0) {
		log_msg(LOG_PRI_ERR, "reload refused: the configuration has errors; the old rules stay in force");
		notify("READY=1");
		status();
		return -EINVAL;
	}
	check_warn(&next, D.config_path, print_error);
	/* the storm limit's counters go on by rule name (act.c) */
	watch_stop();
	watch_reap();
	conf_free(&D.cfg);
	D.cfg = next;
	if (D.event_fd >= 0)
		close(D.event_fd);
	D.event_fd = open_event_log(D.cfg.event_log);
	watch_start();
	metrics_configure();
	log_msg(LOG_PRI_INFO, "reloaded: %zu rule(s), %zu cgroup(s) watched", D.cfg.nrules, D.ncgs);
	notify("READY=1");
	status();
	/* a reload freed what later events of the loop's batch point to */
	D.reloaded = true;
	return 0;
}

/* ---- the loop's own sources ---- */

static void inotify_event(struct src *s)
{
	watch_inotify_event(s);
	status();
}

static void signal_event(struct src *s)
{
	struct signalfd_siginfo si;

	while (!D.stopping && read(s->fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			reload(NULL);
		} else if (si.ssi_signo == SIGUSR1) {
			ctl_state(&(struct out){ .f = NULL });
		} else {
			log_msg(LOG_PRI_INFO, "stopping (signal %u)", si.ssi_signo);
			notify("STOPPING=1");
			D.stopping = true;
		}
	}
}

static void watchdog_event(struct src *s)
{
	uint64_t ticks;

	if (read(s->fd, &ticks, sizeof(ticks)) > 0)
		watchdog_ping(true);
}

/* ---- start-up ---- */

static void survive(void)
{
	int fd;
	struct rlimit rl;

#if defined(__SANITIZE_ADDRESS__)
	/* AddressSanitizer's shadow is terabytes of reserved memory */
	log_msg(LOG_PRI_NOTICE, "built with AddressSanitizer: memory not locked");
#else
	if (mlockall(MCL_CURRENT | MCL_FUTURE) < 0)
		log_msg(LOG_PRI_WARNING, "mlockall: %s (memory not locked)", strerror(errno));
#endif
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "-1000", 5) < 0)
		log_msg(LOG_PRI_WARNING, "oom_score_adj -1000: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
	/* Beside a fork bomb of equal weight, a daemon at nice 0 waited up
	 * to seconds for a CPU (bench/daemon-latency.sh): it wakes at
	 * SCHED_RR 1, or failing that at nice -10. Its work per wakeup is
	 * small; a runaway is bounded by the kernel's RT throttling. */
	if (D.cfg.realtime) {
		struct sched_param sp = { .sched_priority = 1 };

		if (sched_setscheduler(0, SCHED_RR | SCHED_RESET_ON_FORK, &sp) == 0) {
			log_msg(LOG_PRI_DEBUG, "scheduling: SCHED_RR 1");
		} else {
			int e = errno;

			errno = 0;
			if (getpriority(PRIO_PROCESS, 0) > -10 && !errno && setpriority(PRIO_PROCESS, 0, -10) < 0)
				log_msg(LOG_PRI_WARNING, "SCHED_RR: %s, nice -10: %s: a fork bomb may delay the daemon",
					strerror(e), strerror(errno));
			else
				log_msg(LOG_PRI_NOTICE, "SCHED_RR: %s: running at nice %d instead", strerror(e),
					getpriority(PRIO_PROCESS, 0));
		}
	}
	/* a few fds per populated cgroup, and half the limit for actions
	 * (watch.c keeps it) */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		hook_nofile_soft = rl.rlim_cur;
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int hierarchies(void)
{
	cgk_hierarchies *h = NULL;
	int r = cgk_hierarchies_read(&h);

	if (r < 0) {
		log_msg(LOG_PRI_ERR, "cannot read the cgroup mounts: %s", strerror(-r));
		return r;
	}
	for (size_t i = 0; i < cgk_hierarchies_count(h); i++) {
		const char *path = cgk_hierarchies_path(h, i), *ctl = cgk_hierarchies_controllers(h, i);

		if (cgk_hierarchies_version(h, i) == 2) {
			if (!D.v2)
				D.v2 = strdup(path);
			continue;
		}
		/* "cpu,pids": each controller of the list */
		for (const char *p = ctl; p && *p;) {
			size_t n = strcspn(p, ",");
			char **slot = NULL;

			if (n == 4 && !strncmp(p, "pids", 4))
				slot = &D.v1_pids;
			else if (n == 6 && !strncmp(p, "memory", 6))
				slot = &D.v1_memory;
			else if (n == 7 && !strncmp(p, "freezer", 7))
				slot = &D.v1_freezer;
			if (slot && !*slot)
				*slot = strdup(path);
			p += n + (p[n] == ',');
		}
	}
	cgk_hierarchies_free(h);
	if (!D.v2) {
		log_msg(LOG_PRI_ERR, "no cgroup v2 mount: rules are paths below it");
		return -ENOENT;
	}
	log_msg(LOG_PRI_DEBUG, "cgroup v2 at %s; v1 pids at %s, memory at %s", D.v2,
		D.v1_pids ? D.v1_pids : "-", D.v1_memory ? D.v1_memory : "-");
	return 0;
}

/* Files a detached daemon logs to where no syslog reader listens. */
static const char *const fallback_logs[] = { "/var/log/cgkilld.log", "/run/cgkilld.log" };

/* Is the stderr we were given a place for the log once detached: a file,
 * a pipe or a socket (not a terminal, which the daemon leaves, nor
 * /dev/null)? Its name in where. */
static bool stderr_keeps_log(char *where, size_t size)
{
	struct stat st;
	ssize_t n;

	if (fstat(STDERR_FILENO, &st) < 0 || !(S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		return false;
	n = readlink("/proc/self/fd/2", where, size - 1);
	where[n > 0 ? n : 0] = '\0';
	return true;
}

/* Where the log of a detached daemon goes: syslog(3) where /dev/log has
 * a reader. Else (a container, an initramfs, a syslog daemon down) every
 * line would be lost: the stderr it was given if that keeps them
 * (*keep), else the first fallback file that can be opened safely (its
 * fd is returned), else syslog all the same, for a reader that may come.
 * where: "" for syslog, else where the lines go, or why nowhere. */
static int detached_log(char *where, size_t size, bool *keep)
{
	char why[1024] = "";

	where[0] = '\0';
	*keep = false;
	if (log_syslog_reachable())
		return -1;
	if (stderr_keeps_log(where, size)) {
		*keep = true;
		return -1;
	}
	for (size_t i = 0; i < sizeof(fallback_logs) / sizeof(*fallback_logs); i++) {
		int fd = event_log_open(fallback_logs[i], true, why, sizeof(why));

		if (fd >= 0) {
			snprintf(where, size, "%s", fallback_logs[i]);
			return fd;
		}
	}
	snprintf(where, size, "nowhere (%s: %s): lines are lost until a reader listens there", fallback_logs[0], why);
	return -1;
}

static void daemonize(void)
{
	char where[PATH_MAX + 1200];
	bool keep;
	int logfd = detached_log(where, sizeof(where), &keep);
	pid_t pid;
	int fd;

	/* said to whoever started it, if the lines go elsewhere */
	if (where[0] && !keep)
		log_msg(LOG_PRI_WARNING, "no syslog reader at /dev/log: the log goes to %s", where);
	pid = fork();
	if (pid < 0) {
		log_msg(LOG_PRI_ERR, "fork: %s", strerror(errno));
		exit(1);
	}
	if (pid > 0)
		_exit(0);
	setsid();
	pid = fork();
	if (pid < 0)
		exit(1);
	if (pid > 0)
		_exit(0);
	if (chdir("/") < 0)
		exit(1);
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		if (!keep)
			dup2(fd, STDERR_FILENO);
		if (fd > STDERR_FILENO)
			close(fd);
	}
	if (logfd >= 0) {
		dup2(logfd, STDERR_FILENO);
		close(logfd);
	}
	if (!keep && logfd < 0) {
		log_use_syslog();
		return;
	}
	log_stamp_unless_journal();
	log_msg(LOG_PRI_WARNING, "no syslog reader at /dev/log: the log goes to %s", where);
}

/* Everything closed and freed, so that a leak checker sees only leaks. */
static void shutdown_all(void)
{
	ctl_stop();
	act_stop();
	metrics_stop();
	act_forget_last();
	watch_stop();
	watch_reap();
	conf_free(&D.cfg);
	if (D.event_fd >= 0)
		close(D.event_fd);
	src_close(&D.inotify);
	src_close(&D.sig);
	src_close(&D.watchdog);
	src_close(&D.v1poll);
	closer_stop();
	close(D.epfd);
	free(D.v2);
	free(D.v1_pids);
	free(D.v1_memory);
	free(D.v1_freezer);
	free(D.self_rel);
	free(D.init_rel);
}

static bool foreground;
static const char *runtime_dir;

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: cgkilld [OPTION]...\n"
		"       cgkilld --check [-v] [FILE]\n"
		"Watch cgroups and kill, freeze or report a whole cgroup when it hits\n"
		"pids.max (a fork bomb), loses a process to the OOM killer, or stalls on\n"
		"memory, cpu or io (PSI) for too long.\n"
		"\n"
		"  -c, --config FILE   rules from FILE and FILE.d/*.conf (default %s)\n"
		"      --check [FILE]  check the configuration (default: --config's) and exit;\n"
		"                      with -v, print every setting in effect\n"
		"  -f, --foreground    do not detach (under systemd, never needed)\n"
		"      --runtime-dir DIR  the control socket and the pidfile in DIR\n"
		"                      (default $RUNTIME_DIRECTORY, else %s)\n"
		"  -n, --dry-run       act on nothing: log what each rule would do\n"
		"  -v, --verbose       debug messages too\n"
		"  -h, --help          this help\n"
		"  -V, --version       the version\n"
		"\n"
		"Signals: SIGHUP reloads, SIGUSR1 logs the watched cgroups and rule states.\n"
		"Status, explain, reload: cgkillctl(8). See cgkilld(8) and cgkilld.conf(5).\n",
		CGKILLD_CONF, CTL_RUNTIME_DIR);
}

static int check(const char *path, bool optional)
{
	struct config cfg;
	unsigned warnings;
	int hier;

	if (load(&cfg, path, optional, NULL) < 0) {
		fprintf(stderr, "cgkilld: %s: the configuration has errors\n", path);
		return 1;
	}
	/* MetricsFile='s directory, as each write will open it: one that is
	 * missing may come with the collector's package, and the guard must
	 * not wait for it */
	if (cfg.metrics_file) {
		const char *base;
		char why[1024];
		int dfd = open_trusted_parent(cfg.metrics_file, &base, why, sizeof(why));

		if (dfd == -ENOENT) {
			log_msg(LOG_PRI_WARNING, "MetricsFile %s: not written until its directory exists: %s",
				cfg.metrics_file, why);
		} else if (dfd < 0) {
			log_msg(LOG_PRI_ERR, "MetricsFile %s: %s: %s", cfg.metrics_file,
				dfd == -EPERM ? "refused" : "not written", why);
			fprintf(stderr, "cgkilld: %s: MetricsFile= would be refused\n", path);
			conf_free(&cfg);
			return 1;
		}
		if (dfd >= 0)
			close(dfd);
	}
	/* what the start would log about EventLog=, without creating it */
	if (cfg.event_log) {
		char why[1024];

		if (event_log_open(cfg.event_log, false, why, sizeof(why)) < 0) {
			log_msg(LOG_PRI_ERR, "EventLog %s: refused: %s (events go to the log only)",
				cfg.event_log, why);
			fprintf(stderr, "cgkilld: %s: EventLog= would be refused\n", path);
			conf_free(&cfg);
			return 1;
		}
	}
	/* the cgroups that match now (none looked for without a v2 mount) */
	hier = hierarchies();
	warnings = check_warn(&cfg, path, print_error) + cfg.warnings;
	printf("%s: %zu rule(s), OK", path, cfg.nrules);
	if (warnings)
		printf(", %u warning(s)", warnings);
	putchar('\n');
	for (size_t i = 0; i < cfg.nrules; i++)
		printf("  %s: %s, %s%s\n", cfg.rules[i].name, cfg.rules[i].match,
		       action_name(cfg.rules[i].action),
		       cfg.rules[i].dry_run || cfg.dry_run ? " (dry run)" : "");
	/* their v1 counterparts */
	if (hier == 0)
		counterpart_check(&cfg);
	fork_rate_check(&cfg);
	if (log_verbose) {
		printf("\n# the settings in effect, defaults included\n");
		conf_print(stdout, &cfg);
	}
	free(D.v2);
	free(D.v1_pids);
	free(D.v1_memory);
	free(D.v1_freezer);
	conf_free(&cfg);
	return 0;
}

/* The command line. -1 to go on; else the exit status. */
static int options(int argc, char **argv, const char **config)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check", no_argument, NULL, 'C' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "runtime-dir", required_argument, NULL, 'R' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	const char *check_file = NULL;
	bool do_check = false;
	int opt;

	while ((opt = getopt_long(argc, argv, "c:fnvhV", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			*config = optarg;
			break;
		case 'C':
			do_check = true;
			break;
		case 'f':
			foreground = true;
			break;
		case 'R':
			if (optarg[0] != '/') {
				fprintf(stderr, "cgkilld: --runtime-dir %s: not an absolute path\n", optarg);
				return 2;
			}
			runtime_dir = optarg;
			break;
		case 'n':
			D.global_dry_run = true;
			break;
		case 'v':
			log_verbose = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("cgkilld %s (libcgkill %s)\n", CGK_VERSION, cgk_version());
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	/* --check's FILE: the one word left, wherever it stood */
	if (do_check && optind + 1 == argc)
		check_file = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "cgkilld: unexpected argument %s\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (do_check)
		return check(check_file ? check_file : *config ? *config : CGKILLD_CONF, false);
	return -1;
}

/* WATCHDOG=1 every half of the service manager's interval, if it set one. */
static void watchdog_start(void)
{
	struct itimerspec its;
	uint64_t half;

	watchdog_ms = notify_watchdog_ms();
	if (!watchdog_ms)
		return;
	half = watchdog_ms / 2 ? watchdog_ms / 2 : 1;
	its.it_value.tv_sec = (time_t)(half / 1000);
	its.it_value.tv_nsec = (long)(half % 1000) * 1000000;
	its.it_interval = its.it_value;
	D.watchdog.fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (D.watchdog.fd < 0 || timerfd_settime(D.watchdog.fd, 0, &its, NULL) < 0 ||
	    epoll_add(&D.watchdog, EPOLLIN) < 0)
		log_msg(LOG_PRI_ERR, "watchdog timer: %s", strerror(errno));
}

/* The epoll set and the loop's own sources; false if it cannot be made. */
static bool loop_setup(void)
{
	sigset_t mask;

	D.epfd = epoll_create1(EPOLL_CLOEXEC);
	D.inotify = (struct src){ .event = inotify_event, .fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK) };
	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR1);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	D.sig = (struct src){ .event = signal_event, .fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK) };
	D.v1poll = (struct src){ .event = pids_poll_tick,
				 .fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK) };
	D.watchdog = (struct src){ .event = watchdog_event, .fd = -1 };
	if (D.epfd < 0 || D.inotify.fd < 0 || D.sig.fd < 0 || D.v1poll.fd < 0 ||
	    epoll_add(&D.inotify, EPOLLIN) < 0 || epoll_add(&D.sig, EPOLLIN) < 0 ||
	    epoll_add(&D.v1poll, EPOLLIN) < 0) {
		log_msg(LOG_PRI_ERR, "cannot set up the event loop: %s", strerror(errno));
		return false;
	}
	watchdog_start();
	return true;
}

/* Each ready entry's handler, until a stop; the status at the end. */
static int loop(void)
{
	while (!D.stopping) {
		struct epoll_event ev[64];
		int n = epoll_wait(D.epfd, ev, 64, -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_msg(LOG_PRI_ERR, "epoll_wait: %s", strerror(errno));
			return 1;
		}
		D.reloaded = false;
		D.woke_us = now_us();	/* the moment the batch's notifications were read */
		for (int i = 0; i < n && !D.reloaded && !D.stopping; i++) {
			struct src *s = ev[i].data.ptr;

			if (!(s->cg && s->cg->dead))
				s->event(s);
		}
		watch_reap();
		act_reap();
		ctl_reap();
	}
	shutdown_all();
	return 0;
}

int main(int argc, char **argv)
{
	const char *config = NULL;
	int r = options(argc, argv, &config);

	if (r >= 0)
		return r;
	D.config_path = config ? config : CGKILLD_CONF;
	D.config_optional = false;
	log_stamp_unless_journal();
	if (load(&D.cfg, D.config_path, D.config_optional, NULL) < 0) {
		log_msg(LOG_PRI_ERR, "%s: the configuration has errors; not starting", D.config_path);
		return 1;
	}
	/* before the fork to the background: a refusal is seen */
	if (ctl_lock(runtime_dir ? runtime_dir : ctl_runtime_dir()) < 0)
		return 1;
	if (!foreground && !getenv("NOTIFY_SOCKET") && !getenv("INVOCATION_ID"))
		daemonize();
	survive();
	D.self_rel = cgroup_rel("self");
	D.init_rel = cgroup_rel("1");
	if (hierarchies() < 0)
		return 1;
	check_warn(&D.cfg, D.config_path, print_error);
	D.event_fd = open_event_log(D.cfg.event_log);
	if (!loop_setup() || ctl_start(reload) < 0)
		return 1;
	watch_start();
	metrics_configure();
	log_msg(LOG_PRI_INFO, "cgkilld %s started: %zu rule(s), %zu cgroup(s) watched%s", CGK_VERSION,
		D.cfg.nrules, D.ncgs, D.global_dry_run || D.cfg.dry_run ? " (dry run: nothing is acted on)" : "");
	notify("READY=1");
	status();
	return loop();
}
