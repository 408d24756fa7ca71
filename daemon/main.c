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
#include <pthread.h>
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
#include <sys/timerfd.h>
#include <unistd.h>

#include <linux/capability.h>

#include "cgkilld.h"

struct daemon D = { .epfd = -1, .event_fd = -1 };

ssize_t read_at0(int fd, char *buf, size_t size)
{
	ssize_t n;

	do
		n = pread(fd, buf, size - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return n;
}

bool kv_get(const char *text, const char *key, uint64_t *v)
{
	size_t k = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, key, k) && p[k] == ' ') {
			char *end;

			errno = 0;
			*v = strtoull(p + k + 1, &end, 10);
			return !errno && end != p + k + 1;
		}
	}
	return false;
}

void open_failed(const char *path, int err)
{
	static bool told;

	if (err == EMFILE || err == ENFILE) {
		if (!told)
			log_msg(LOG_PRI_ERR,
				"%s: %s: cgroups are left unwatched; raise the open file limit (LimitNOFILE=, ulimit -n)",
				path, strerror(err));
		told = true;
		return;
	}
	log_msg(LOG_PRI_WARNING, "%s: %s", path, strerror(err));
}

int epoll_add(struct src *s, unsigned events)
{
	struct epoll_event ev = { .events = events, .data.ptr = s };

	if (epoll_ctl(D.epfd, EPOLL_CTL_ADD, s->fd, &ev) < 0) {
		log_msg(LOG_PRI_ERR, "epoll: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

/* Closing a PSI trigger waits in the kernel for an RCU grace period
 * (psi_trigger_destroy(): synchronize_rcu(), 17 ms on average here, up to
 * 36): a user who empties or removes many watched cgroups at once would
 * stall the loop for seconds. Those files leave the epoll set at once and
 * are closed by a pool of threads: closes that wait at the same time share
 * grace periods (one thread alone closes ~100 a second), so a backlog
 * drains about CLOSERS times faster, at exit too. */
#define CLOSERS 8

/* a close to do, charged to the owner of the cgroup (0: root's) */
struct closing {
	int fd;
	unsigned uid;
};

/* pending closes of one owner (few owners have any: a short list) */
struct owed {
	unsigned uid, n;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t more;
	struct closing *fds;
	size_t n, cap;
	struct owed *owed;
	size_t nowed, owed_cap;
	unsigned started, idle;
	bool stop;
	pthread_t thread[CLOSERS];
} closer = { .lock = PTHREAD_MUTEX_INITIALIZER, .more = PTHREAD_COND_INITIALIZER };

/* uid's count of pending closes += delta; the closer's lock held. */
static bool owed_add(unsigned uid, int delta)
{
	size_t i;

	if (!uid)
		return true;
	for (i = 0; i < closer.nowed && closer.owed[i].uid != uid; i++)
		;
	if (i == closer.nowed) {
		if (delta < 0)
			return true;
		if (closer.nowed == closer.owed_cap) {
			size_t cap = closer.owed_cap ? 2 * closer.owed_cap : 16;
			struct owed *g = realloc(closer.owed, cap * sizeof(*g));

			if (!g)
				return false;
			closer.owed = g;
			closer.owed_cap = cap;
		}
		closer.owed[closer.nowed++] = (struct owed){ .uid = uid };
	}
	closer.owed[i].n += (unsigned)delta;
	if (!closer.owed[i].n)
		closer.owed[i] = closer.owed[--closer.nowed];
	return true;
}

/* How many of uid's PSI triggers wait to be closed. */
unsigned closes_pending(unsigned uid)
{
	unsigned n = 0;

	pthread_mutex_lock(&closer.lock);
	for (size_t i = 0; i < closer.nowed; i++)
		if (closer.owed[i].uid == uid)
			n = closer.owed[i].n;
	pthread_mutex_unlock(&closer.lock);
	return n;
}

static void *closer_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&closer.lock);
	for (;;) {
		struct closing c;

		closer.idle++;
		while (!closer.n && !closer.stop)
			pthread_cond_wait(&closer.more, &closer.lock);
		closer.idle--;
		if (!closer.n)
			break;
		c = closer.fds[--closer.n];
		pthread_mutex_unlock(&closer.lock);
		close(c.fd);
		pthread_mutex_lock(&closer.lock);
		owed_add(c.uid, -1);
	}
	pthread_mutex_unlock(&closer.lock);
	return NULL;
}

/* fd to the closing thread: false if it cannot take it (close it here). */
static bool close_later(int fd, unsigned uid)
{
	bool taken = false;

	pthread_mutex_lock(&closer.lock);
	/* one more thread while none is idle for it, up to CLOSERS */
	if (closer.started < CLOSERS && closer.idle <= closer.n) {
		pthread_attr_t attr;

		/* mlockall(MCL_FUTURE) locks its stack: a small one */
		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, 64 * 1024);
		if (pthread_create(&closer.thread[closer.started], &attr, closer_main, NULL) == 0)
			closer.started++;
		pthread_attr_destroy(&attr);
	}
	if (closer.started && closer.n == closer.cap) {
		size_t cap = closer.cap ? 2 * closer.cap : 64;
		struct closing *g = realloc(closer.fds, cap * sizeof(*g));

		if (g) {
			closer.fds = g;
			closer.cap = cap;
		}
	}
	if (closer.started && closer.n < closer.cap && owed_add(uid, 1)) {
		closer.fds[closer.n++] = (struct closing){ .fd = fd, .uid = uid };
		pthread_cond_signal(&closer.more);
		taken = true;
	}
	pthread_mutex_unlock(&closer.lock);
	return taken;
}

/* At exit: what is left closed by all the threads at once, joined. */
static void closer_stop(void)
{
	pthread_mutex_lock(&closer.lock);
	closer.stop = true;
	pthread_cond_broadcast(&closer.more);
	pthread_mutex_unlock(&closer.lock);
	for (unsigned i = 0; i < closer.started; i++)
		pthread_join(closer.thread[i], NULL);
	free(closer.fds);
	free(closer.owed);
}

void src_close(struct src *s)
{
	if (s->fd < 0)
		return;
	if (s->type != SRC_PSI || epoll_ctl(D.epfd, EPOLL_CTL_DEL, s->fd, NULL) < 0 ||
	    !close_later(s->fd, s->cg ? s->cg->owner : 0))
		close(s->fd);	/* leaves the epoll set with it */
	s->fd = -1;
}

/* ---- configuration ---- */

static void print_error(void *ud, const char *file, unsigned line, const char *msg)
{
	(void)ud;
	if (line)
		log_msg(LOG_PRI_ERR, "%s:%u: %s", file, line, msg);
	else
		log_msg(LOG_PRI_ERR, "%s: %s", file, msg);
}

/* PSI triggers with windows other than multiples of 2 s need it. */
bool has_cap_sys_resource(void)
{
	char line[256];
	unsigned long long caps = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	fclose(f);
	return caps & (1ULL << CAP_SYS_RESOURCE);
}

/* Parse and check; 0 with cfg filled, or -EINVAL (errors logged). */
static int load(struct config *cfg, const char *path, bool optional)
{
	bool privileged = has_cap_sys_resource();

	conf_init(cfg);
	conf_load(cfg, path, optional, print_error, NULL);
	conf_finish(cfg, print_error, NULL);
	for (size_t i = 0; i < cfg->nrules; i++) {
		struct rule *r = &cfg->rules[i];
		char why[512];

		if (!r->match)
			continue;
		if (rule_guard_check(r, cfg->protected_file, why, sizeof(why)) < 0) {
			log_msg(LOG_PRI_ERR, "%s:%u: rule %s: Match=%s refused: %s", r->file, r->line,
				r->name ? r->name : "?", r->match, why);
			cfg->errors++;
		}
		if ((r->triggers & TRIG_PSI) &&
		    pressure_trigger_text(r, privileged, NULL, 0, why, sizeof(why)) < 0) {
			log_msg(LOG_PRI_ERR, "%s:%u: rule %s: %s", r->file, r->line, r->name ? r->name : "?", why);
			cfg->errors++;
		}
	}
	if (cfg->errors) {
		conf_free(cfg);
		return -EINVAL;
	}
	return 0;
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
	const char *base = strrchr(path, '/');
	char dir[4096];
	struct stat st;
	int dfd, fd;

	if (!base || !base[1] || !strcmp(base, "/.") || !strcmp(base, "/..") ||
	    (size_t)(base - path) >= sizeof(dir)) {
		snprintf(why, size, "not a file name");
		return -EINVAL;
	}
	snprintf(dir, sizeof(dir), "%.*s", base == path ? 1 : (int)(base - path), path);
	dfd = open_trusted(dir, true, why, size);
	if (dfd < 0)
		return dfd;
	fd = openat(dfd, base + 1,
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

static void reload(void)
{
	struct config next;
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	notify("RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=reloading",
	       (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000);
	log_msg(LOG_PRI_INFO, "reloading %s", D.config_path);
	if (load(&next, D.config_path, D.config_optional) < 0) {
		log_msg(LOG_PRI_ERR, "reload refused: the configuration has errors; the old rules stay in force");
		notify("READY=1");
		status();
		return;
	}
	/* the storm limit's counters go on by rule name (act.c) */
	watch_stop();
	watch_reap();
	conf_free(&D.cfg);
	D.cfg = next;
	if (D.event_fd >= 0)
		close(D.event_fd);
	D.event_fd = open_event_log(D.cfg.event_log);
	watch_start();
	log_msg(LOG_PRI_INFO, "reloaded: %zu rule(s), %zu cgroup(s) watched", D.cfg.nrules, D.ncgs);
	notify("READY=1");
	status();
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

static void daemonize(void)
{
	pid_t pid = fork();
	int fd;

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
		dup2(fd, STDERR_FILENO);
		if (fd > STDERR_FILENO)
			close(fd);
	}
	log_use_syslog();
}

/* Everything closed and freed, so that a leak checker sees only leaks. */
static void shutdown_all(void)
{
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

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: cgkilld [OPTION]...\n"
		"       cgkilld --check [FILE]\n"
		"Watch cgroups and kill, freeze or report a whole cgroup when it hits\n"
		"pids.max (a fork bomb), loses a process to the OOM killer, or stalls on\n"
		"memory, cpu or io (PSI) for too long.\n"
		"\n"
		"  -c, --config FILE   rules from FILE and FILE.d/*.conf (default %s)\n"
		"      --check [FILE]  check the configuration (default: --config's) and exit\n"
		"  -f, --foreground    do not detach (under systemd, never needed)\n"
		"  -n, --dry-run       act on nothing: log what each rule would do\n"
		"  -v, --verbose       debug messages too\n"
		"  -h, --help          this help\n"
		"  -V, --version       the version\n"
		"\n"
		"Signals: SIGHUP reloads, SIGUSR1 logs the watched cgroups and rule states.\n"
		"See cgkilld(8) and cgkilld.conf(5).\n",
		CGKILLD_CONF);
}

static int check(const char *path, bool optional)
{
	struct config cfg;

	if (load(&cfg, path, optional) < 0) {
		fprintf(stderr, "cgkilld: %s: the configuration has errors\n", path);
		return 1;
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
	printf("%s: %zu rule(s), OK\n", path, cfg.nrules);
	for (size_t i = 0; i < cfg.nrules; i++)
		printf("  %s: %s, %s%s\n", cfg.rules[i].name, cfg.rules[i].match,
		       action_name(cfg.rules[i].action),
		       cfg.rules[i].dry_run || cfg.dry_run ? " (dry run)" : "");
	/* the v1 counterparts of the cgroups that match now */
	if (hierarchies() == 0)
		counterpart_check(&cfg);
	free(D.v2);
	free(D.v1_pids);
	free(D.v1_memory);
	free(D.v1_freezer);
	conf_free(&cfg);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check", no_argument, NULL, 'C' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	const char *config = NULL, *check_file = NULL;
	bool do_check = false, foreground = false;
	sigset_t mask;
	uint64_t wd_ms;
	int opt;

	while ((opt = getopt_long(argc, argv, "c:fnvhV", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			config = optarg;
			break;
		case 'C':
			do_check = true;
			/* an optional FILE as the next word */
			if (optind < argc && argv[optind][0] != '-')
				check_file = argv[optind++];
			break;
		case 'f':
			foreground = true;
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
	if (optind < argc) {
		fprintf(stderr, "cgkilld: unexpected argument %s\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (do_check)
		return check(check_file ? check_file : config ? config : CGKILLD_CONF, false);

	D.config_path = config ? config : CGKILLD_CONF;
	D.config_optional = false;
	if (load(&D.cfg, D.config_path, D.config_optional) < 0) {
		log_msg(LOG_PRI_ERR, "%s: the configuration has errors; not starting", D.config_path);
		return 1;
	}
	if (!foreground && !getenv("NOTIFY_SOCKET") && !getenv("INVOCATION_ID"))
		daemonize();
	survive();
	D.self_rel = cgroup_rel("self");
	D.init_rel = cgroup_rel("1");
	if (hierarchies() < 0)
		return 1;
	D.event_fd = open_event_log(D.cfg.event_log);

	D.epfd = epoll_create1(EPOLL_CLOEXEC);
	D.inotify = (struct src){ .type = SRC_INOTIFY,
				  .fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK) };
	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR1);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	D.sig = (struct src){ .type = SRC_SIGNAL, .fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK) };
	D.v1poll = (struct src){ .type = SRC_V1POLL,
				 .fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK) };
	D.watchdog = (struct src){ .type = SRC_WATCHDOG, .fd = -1 };
	if (D.epfd < 0 || D.inotify.fd < 0 || D.sig.fd < 0 || D.v1poll.fd < 0 ||
	    epoll_add(&D.inotify, EPOLLIN) < 0 || epoll_add(&D.sig, EPOLLIN) < 0 ||
	    epoll_add(&D.v1poll, EPOLLIN) < 0) {
		log_msg(LOG_PRI_ERR, "cannot set up the event loop: %s", strerror(errno));
		return 1;
	}
	wd_ms = notify_watchdog_ms();
	watchdog_ms = wd_ms;
	if (wd_ms) {
		struct itimerspec its;
		uint64_t half = wd_ms / 2 ? wd_ms / 2 : 1;

		its.it_value.tv_sec = (time_t)(half / 1000);
		its.it_value.tv_nsec = (long)(half % 1000) * 1000000;
		its.it_interval = its.it_value;
		D.watchdog.fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (D.watchdog.fd < 0 || timerfd_settime(D.watchdog.fd, 0, &its, NULL) < 0 ||
		    epoll_add(&D.watchdog, EPOLLIN) < 0)
			log_msg(LOG_PRI_ERR, "watchdog timer: %s", strerror(errno));
	}

	watch_start();
	log_msg(LOG_PRI_INFO, "cgkilld %s started: %zu rule(s), %zu cgroup(s) watched%s", CGK_VERSION,
		D.cfg.nrules, D.ncgs, D.global_dry_run || D.cfg.dry_run ? " (dry run: nothing is acted on)" : "");
	notify("READY=1");
	status();

	for (;;) {
		struct epoll_event ev[64];
		int n = epoll_wait(D.epfd, ev, 64, -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_msg(LOG_PRI_ERR, "epoll_wait: %s", strerror(errno));
			return 1;
		}
		for (int i = 0; i < n; i++) {
			struct src *s = ev[i].data.ptr;

			if (s->cg && s->cg->dead)
				continue;
			switch (s->type) {
			case SRC_INOTIFY:
				watch_inotify_event();
				status();
				break;
			case SRC_SIGNAL: {
				struct signalfd_siginfo si;

				while (read(D.sig.fd, &si, sizeof(si)) == sizeof(si)) {
					if (si.ssi_signo == SIGHUP) {
						reload();
					} else if (si.ssi_signo == SIGUSR1) {
						watch_dump();
					} else {
						log_msg(LOG_PRI_INFO, "stopping (signal %u)", si.ssi_signo);
						notify("STOPPING=1");
						shutdown_all();
						return 0;
					}
				}
				/* a reload freed what later events point to */
				i = n;
				break;
			}
			case SRC_WATCHDOG: {
				uint64_t ticks;

				if (read(D.watchdog.fd, &ticks, sizeof(ticks)) > 0)
					watchdog_ping(true);
				break;
			}
			case SRC_V1POLL:
				pids_poll_tick();
				break;
			case SRC_PIDS:
				pids_event(s->cg);
				break;
			case SRC_POPULATED:
				watch_populated_event(s->cg);
				break;
			case SRC_WATCH_TIMER:
				watch_timer_event();
				break;
			case SRC_MEM:
			case SRC_MEM_V1:
			case SRC_MEM_RECHECK:
				memory_event(s->cg, s->type);
				break;
			case SRC_PSI:
			case SRC_PRESSURE_LEVEL:
			case SRC_SWAP:
				pressure_event(s->cg, s);
				break;
			}
		}
		watch_reap();
	}
}
