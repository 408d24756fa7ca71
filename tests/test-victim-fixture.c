// SPDX-License-Identifier: LGPL-2.1-or-later
/* cgkilld's victim choice (daemon/victim.c) on fixture trees: directories
 * and files in a temporary directory that stand for cgroupfs (D.v2, and
 * D.v1_memory for the hybrid cases) and for /proc (proc_root), as Meta's
 * oomd tests its plugins on fixtures. No cgroup is made and nothing is
 * killed; it runs in milliseconds, beside the real-kernel tests
 * (test-cgkilld-victim*.sh), and needs no root but for the cases where
 * another owner's directory matters (chown), skipped otherwise.
 *
 * Each case makes the watched cgroup c fresh (a directory of the
 * fixture's v2 tree), ranks it with a rule of the configuration text it
 * names, and compares the order: the candidates relative to c, those of
 * one entry (one owner) joined by '+', the entries by " > ". */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "../daemon/cgkilld.h"
#include "support/tap.h"

#define MiB (UINT64_C(1) << 20)

static char root[256];	/* the fixture: root/v2, root/v1, root/proc */
static char v2dir[272], v1dir[272], procdir[272];
static int next_pid = 1000;
static bool as_root, xattrs_ok;
static uid_t X = 64001, Y = 64002;	/* users: the uids of processes, or owners */

/* ---- the fixture ---- */

static void mkdirs(const char *path)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s", path);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			if (mkdir(p, 0755) < 0 && errno != EEXIST)
				bail_out("mkdir %s: %s", p, strerror(errno));
			*s = '/';
		}
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		bail_out("mkdir %s: %s", p, strerror(errno));
}

static void write_file(const char *path, const char *text, bool append)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0644);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		bail_out("write %s: %s", path, strerror(errno));
	close(fd);
}

/* file of the v2 cgroup rel (relative to the fixture's v2 tree) */
static void put(const char *rel, const char *file, const char *fmt, ...) TAP_PRINTF(3, 4);
static void put(const char *rel, const char *file, const char *fmt, ...)
{
	char path[PATH_MAX], text[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/%s/%s", v2dir, rel, file);
	write_file(path, text, false);
}

/* The v2 cgroup rel and its ancestors below the fixture's v2 tree,
 * populated (cgroup.events), their children given memory. */
static void cg(const char *rel)
{
	char part[1024], path[PATH_MAX];

	snprintf(part, sizeof(part), "%s", rel);
	for (char *s = part;; s++) {
		if (*s != '/' && *s)
			continue;
		char end = *s;

		*s = '\0';
		snprintf(path, sizeof(path), "%s/%s", v2dir, part);
		mkdirs(path);
		put(part, "cgroup.events", "populated 1\nfrozen 0\n");
		put(part, "cgroup.subtree_control", "cpu memory pids\n");
		/* every cgroup has them (the processes of its own) */
		snprintf(path, sizeof(path), "%s/%s/cgroup.procs", v2dir, part);
		write_file(path, "", true);
		snprintf(path, sizeof(path), "%s/%s/cgroup.threads", v2dir, part);
		write_file(path, "", true);
		if (!end)
			break;
		*s = end;
	}
}

static void mem(const char *rel, uint64_t bytes)
{
	cg(rel);
	put(rel, "memory.current", "%llu\n", (unsigned long long)bytes);
}

/* A process of uid with rss_kb of VmRSS (its /proc/PID/status), its pid;
 * with broken, a status that cannot be read (a directory). */
static int proc_new(uid_t uid, unsigned long rss_kb, bool broken)
{
	char path[PATH_MAX], text[256];
	int pid = next_pid++;

	snprintf(path, sizeof(path), "%s/%d", procdir, pid);
	mkdirs(path);
	snprintf(path, sizeof(path), "%s/%d/status", procdir, pid);
	if (broken) {
		mkdirs(path);
		return pid;
	}
	snprintf(text, sizeof(text),
		 "Name:\tfixture\nPid:\t%d\nUid:\t%u\t%u\t%u\t%u\nVmRSS:\t%lu kB\nVmSwap:\t0 kB\n", pid,
		 (unsigned)uid, (unsigned)uid, (unsigned)uid, (unsigned)uid, rss_kb);
	write_file(path, text, false);
	return pid;
}

/* process pid in the v2 cgroup rel (cgroup.procs and cgroup.threads) */
static void join(const char *rel, int pid)
{
	char path[PATH_MAX], line[32];

	snprintf(line, sizeof(line), "%d\n", pid);
	snprintf(path, sizeof(path), "%s/%s/cgroup.procs", v2dir, rel);
	write_file(path, line, true);
	snprintf(path, sizeof(path), "%s/%s/cgroup.threads", v2dir, rel);
	write_file(path, line, true);
}

/* n processes of uid (1 MiB each) in the v2 cgroup rel; broken: the
 * status of the last cannot be read */
static void procs(const char *rel, int n, uid_t uid, bool broken)
{
	cg(rel);
	for (int i = 0; i < n; i++)
		join(rel, proc_new(uid, 1024, broken && i == n - 1));
}

/* file of the v2 cgroup rel as a directory: opened, it cannot be read
 * (EISDIR), whoever reads it (permissions do not stop root) */
static void unreadable(const char *rel, const char *file)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s/%s", v2dir, rel, file);
	unlink(path);
	mkdirs(path);
}

/* the directory of the v2 cgroup rel given to uid (root only) */
static void own(const char *rel, uid_t uid)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", v2dir, rel);
	if (chown(path, uid, uid) < 0)
		bail_out("chown %s: %s", path, strerror(errno));
}

static void xattr(const char *rel, const char *name, const char *value)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", v2dir, rel);
	if (setxattr(path, name, value, strlen(value), 0) < 0)
		bail_out("setxattr %s %s: %s", path, name, strerror(errno));
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void fixture_free(void)
{
	if (*root)
		nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	*root = '\0';
}

/* The fixture's directory in base: made, and do user.* xattrs work there? */
static bool fixture_in(const char *base)
{
	snprintf(root, sizeof(root), "%s/cgkill-fixture.XXXXXX", base);
	if (!mkdtemp(root)) {
		*root = '\0';
		return false;
	}
	xattrs_ok = setxattr(root, "user.cgkill_probe", "1", 1, 0) == 0;
	return true;
}

/* In $TMPDIR, else in memory (/dev/shm: milliseconds on a loaded
 * machine, where a disk's journal takes a second) where user.* xattrs
 * work there (tmpfs: Linux 6.6), else in /tmp. */
static void fixture_init(void)
{
	const char *tmp = getenv("TMPDIR");

	if (tmp && *tmp) {
		if (!fixture_in(tmp))
			bail_out("mkdtemp in %s: %s", tmp, strerror(errno));
	} else if (!fixture_in("/dev/shm") || !xattrs_ok) {
		fixture_free();
		if (!fixture_in("/tmp"))
			bail_out("mkdtemp in /tmp: %s", strerror(errno));
	}
	atexit(fixture_free);
	if (!xattrs_ok)
		note("%s refuses user.* xattrs: the xattr cases are skipped", root);
	snprintf(v2dir, sizeof(v2dir), "%s/v2", root);
	snprintf(v1dir, sizeof(v1dir), "%s/v1", root);
	snprintf(procdir, sizeof(procdir), "%s/proc", root);
	mkdirs(v2dir);
	mkdirs(procdir);
	D.v2 = v2dir;
	D.v1_memory = NULL;
	proc_root = procdir;
	as_root = geteuid() == 0;
	while (X == geteuid() || Y == geteuid()) {
		X += 100;
		Y += 100;
	}
}

/* ---- ranking ---- */

static struct config cfg;

static void conf_err(void *ud, int pri, const char *file, unsigned line, const char *msg)
{
	(void)ud;
	(void)pri;
	diag("%s:%u: %s", file, line, msg);
}

/* The watched cgroup rel, with a rule of keys ("Victim=memory\n..."). */
static struct cg watched(const char *rel, const char *keys)
{
	char text[2048];

	conf_free(&cfg);
	conf_init(&cfg);
	snprintf(text, sizeof(text), "[Rule]\nName=fixture\nMatch=/%s\nTrigger=pids-max\n%s\n", rel, keys);
	conf_parse_text(&cfg, "fixture.conf", text, strlen(text), conf_err, NULL);
	conf_finish(&cfg, conf_err, NULL);
	if (cfg.errors || cfg.nrules != 1)
		bail_out("the rule does not parse: %s", keys);
	return (struct cg){ .rule = &cfg.rules[0], .rel = (char *)rel };
}

struct ranked {
	char order[8192];	/* "b > a+c": entries by " > ", their cgroups by '+' */
	char *why;
	char log[16384];	/* what victim_rank() logged */
	int n;
};

/* victim_rank(c) into *r, its log lines captured */
static void rank(struct cg *c, struct ranked *r)
{
	char **rels = NULL, *json = NULL, path[PATH_MAX];
	int *groups = NULL, saved = dup(STDERR_FILENO), fd;
	size_t cl = strlen(c->rel), len = 0;
	ssize_t got;

	snprintf(path, sizeof(path), "%s/log", root);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || saved < 0)
		bail_out("log file: %s", strerror(errno));
	fflush(stderr);
	dup2(fd, STDERR_FILENO);
	r->n = victim_rank(c, &rels, &groups, &r->why, &json);
	dup2(saved, STDERR_FILENO);
	close(saved);
	got = pread(fd, r->log, sizeof(r->log) - 1, 0);
	r->log[got > 0 ? got : 0] = '\0';
	close(fd);
	r->order[0] = '\0';
	if (r->n < 0)
		snprintf(r->order, sizeof(r->order), "(%s)", strerror(-r->n));
	for (int i = 0; i < r->n; i++) {
		const char *sub = strncmp(rels[i], c->rel, cl) ? rels[i] : rels[i][cl] ? rels[i] + cl + 1 : ".";

		len += (size_t)snprintf(r->order + len, sizeof(r->order) - len, "%s%s",
					!i ? "" : groups[i] == groups[i - 1] ? "+" : " > ", sub);
		if (len >= sizeof(r->order))
			bail_out("the order is too long for the test");
	}
	victim_free(rels, r->n > 0 ? r->n : 0);
	free(groups);
	free(json);
}

static void ranked_free(struct ranked *r)
{
	free(r->why);
	r->why = NULL;
}

/* Does victim_rank(c) give the order want? (why and log shown if not) */
static bool order_is(struct cg *c, const char *want, const char *what)
{
	struct ranked r = { 0 };
	bool good;

	rank(c, &r);
	good = is_str(r.order, want, "%s", what);
	if (!good)
		diag("why: %s\nlog: %s", r.why ? r.why : "(none)", r.log);
	ranked_free(&r);
	return good;
}

/* The same, and must the why text (or the log) hold needle? */
static void order_says(struct cg *c, const char *want, bool in_log, const char *needle, const char *what)
{
	struct ranked r = { 0 };
	const char *text;

	rank(c, &r);
	text = in_log ? r.log : r.why ? r.why : "";
	if (!is_str(r.order, want, "%s", what) | !ok(strstr(text, needle) != NULL, "%s: the %s says \"%s\"", what,
						      in_log ? "log" : "why", needle))
		diag("why: %s\nlog: %s", r.why ? r.why : "(none)", r.log);
	ranked_free(&r);
}

/* ---- Victim= kinds ---- */

static void test_kinds(void)
{
	struct cg c;

	mem("mem/a", 50 * MiB);
	mem("mem/b", 150 * MiB);
	mem("mem/c", 100 * MiB);
	c = watched("mem", "Victim=memory");
	order_is(&c, "b > c > a", "memory: largest memory.current first");

	/* a memory.low the watched cgroup does not grant protects nothing */
	mem("low0", 300 * MiB);
	mem("low0/a", 100 * MiB);
	mem("low0/b", 150 * MiB);
	put("low0/b", "memory.low", "max\n");
	c = watched("low0", "Victim=memory");
	order_is(&c, "b > a", "memory: a child's memory.low max below a parent granted nothing counts nothing");
	/* one the watched cgroup grants is subtracted: b 150 - 100 < a 100 */
	mem("low1", 300 * MiB);
	put("low1", "memory.low", "%llu\n", (unsigned long long)(300 * MiB));
	mem("low1/a", 100 * MiB);
	mem("low1/b", 150 * MiB);
	put("low1/b", "memory.low", "%llu\n", (unsigned long long)(100 * MiB));
	c = watched("low1", "Victim=memory");
	order_is(&c, "a > b", "memory: less the protection the parent grants");

	/* growth since the episode began; d, born after, grew from 0 */
	mem("grow/a", 100 * MiB);
	mem("grow/b", 100 * MiB);
	mem("grow/c", 100 * MiB);
	c = watched("grow", "Victim=memory-growth");
	victim_episode_start(&c);
	ok(c.vbase != NULL, "memory-growth: the episode's figures are kept");
	nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000 * 1000 }, NULL);
	mem("grow/a", 101 * MiB);
	mem("grow/b", 612 * MiB);
	mem("grow/d", 64 * MiB);
	order_is(&c, "b > d > a > c", "memory-growth: fastest growing first, a cgroup born since from 0");
	victim_forget(&c);
	order_is(&c, "b > a > c > d", "memory-growth without an episode: memory decides");

	/* pressure: the rule's kind of line, avg10 */
	cg("psi/a");
	put("psi/a", "memory.pressure", "some avg10=50.00 avg60=1.00 avg300=0.00 total=9\n"
					"full avg10=1.00 avg60=0.00 avg300=0.00 total=1\n");
	cg("psi/b");
	put("psi/b", "memory.pressure", "some avg10=10.00 avg60=0.00 avg300=0.00 total=9\n"
					"full avg10=20.00 avg60=0.00 avg300=0.00 total=1\n");
	cg("psi/c");
	put("psi/c", "memory.pressure", "some avg10=0.50 avg60=0.00 avg300=0.00 total=9\n"
					"full avg10=0.25 avg60=0.00 avg300=0.00 total=1\n");
	c = watched("psi", "Victim=pressure\nPressureLimit=some 20%");
	order_is(&c, "a > b > c", "pressure, PressureLimit=some: the some line's avg10");
	c = watched("psi", "Victim=pressure\nPressureLimit=full 20%");
	order_is(&c, "b > a > c", "pressure, PressureLimit=full: the full line's avg10");

	/* processes: a subtree taken whole (memory.oom.group) counts them all */
	procs("nproc/a", 3, X, false);
	procs("nproc/b", 5, Y, false);
	procs("nproc/c", 1, 0, false);
	procs("nproc/g/x", 4, X, false);
	procs("nproc/g/y", 2, X, false);
	put("nproc/g", "memory.oom.group", "1\n");
	c = watched("nproc", "Victim=processes");
	order_is(&c, "g > b > a > c", "processes: the most first, a memory.oom.group subtree as one");

	mem("swap/a", 10 * MiB);
	put("swap/a", "memory.swap.current", "%llu\n", (unsigned long long)(10 * MiB));
	mem("swap/b", 90 * MiB);
	put("swap/b", "memory.swap.current", "0\n");
	mem("swap/c", 10 * MiB);
	put("swap/c", "memory.swap.current", "%llu\n", (unsigned long long)(30 * MiB));
	c = watched("swap", "Victim=swap");
	order_is(&c, "c > a > b", "swap: memory.swap.current, largest first");
}

/* ---- what is one candidate ---- */

static void test_candidates(void)
{
	struct cg c;

	/* processes of its own beside a child: one, whole */
	mem("shape/p", 100 * MiB);
	procs("shape/p", 1, X, false);
	mem("shape/p/q", 10 * MiB);
	procs("shape/p/q", 1, X, false);
	mem("shape/r", 60 * MiB);
	/* an empty cgroup is none */
	mem("shape/e", 900 * MiB);
	put("shape/e", "cgroup.events", "populated 0\nfrozen 0\n");
	c = watched("shape", "Victim=memory");
	order_says(&c, "p > r", false, "processes of its own beside child cgroups",
		   "a cgroup with processes beside a child is one candidate, an empty one none");

	/* memory not given to the children: they cannot show it */
	mem("ctl/p", 100 * MiB);
	mem("ctl/p/q", 10 * MiB);
	put("ctl/p", "cgroup.subtree_control", "pids\n");
	mem("ctl/r", 60 * MiB);
	c = watched("ctl", "Victim=memory");
	order_says(&c, "p > r", false, "memory is not in its cgroup.subtree_control",
		   "a cgroup that does not give memory to its children is one candidate");

	/* else leaves, below trusted cgroups */
	mem("deep/p", 100 * MiB);
	mem("deep/p/q", 10 * MiB);
	mem("deep/p/s", 30 * MiB);
	mem("deep/r", 20 * MiB);
	c = watched("deep", "Victim=memory");
	order_is(&c, "p/s > r > p/q", "the leaves of trusted cgroups are the candidates");
}

/* ---- owners ---- */

static void test_owners(void)
{
	char rel[64];
	struct cg c;

	/* a user's 24 one-process scopes in root's (or c's owner's)
	 * cgroups: one entry of 24 against another user's 3 */
	for (int i = 1; i <= 24; i++) {
		snprintf(rel, sizeof(rel), "scopes/s%02d", i);
		procs(rel, 1, X, false);
	}
	procs("scopes/t", 3, Y, false);
	c = watched("scopes", "Victim=processes");
	order_says(&c,
		   "s01+s02+s03+s04+s05+s06+s07+s08+s09+s10+s11+s12+s13+s14+s15+s16+s17+s18+s19+s20+s21+s22+s23+s24 > t",
		   false, "the 24 cgroups of uid", "owner units: a user's 24 one-process leaves are one entry of 24");

	/* root's and c's owner's processes do not make a leaf theirs (as
	 * root, c is given to a third user: root's and the owner's apart) */
	procs("mixed/a", 3, 0, false);
	procs("mixed/a", 1, X, false);
	procs("mixed/b", 2, X, false);
	procs("mixed/d", 4, as_root ? Y + 1 : geteuid(), false);
	if (as_root)
		own("mixed", Y + 1);
	c = watched("mixed", "Victim=processes");
	order_is(&c, "a+b > d", "owner units: the uid of a leaf's processes, root's and the owner's not counted");

	/* a tie between uids goes to the lowest */
	procs("tie/a", 1, Y, false);
	procs("tie/a", 1, X, false);
	procs("tie/b", 2, Y, false);
	procs("tie/d", 3, 0, false);
	c = watched("tie", "Victim=processes");
	order_is(&c, "d > a > b", "owner units: a leaf of as many processes of two users is the lowest uid's");

	if (!as_root) {
		skip("owner units of delegated subtrees: needs root (chown of the fixture's directories)");
		return;
	}
	/* a subtree delegated to X: one candidate, whole, however divided */
	cg("deleg/u");
	for (int i = 1; i <= 24; i++) {
		snprintf(rel, sizeof(rel), "deleg/u/j%02d", i);
		procs(rel, 1, X, false);
		own(rel, X);
	}
	own("deleg/u", X);
	procs("deleg/n", 3, Y, false);
	c = watched("deleg", "Victim=processes");
	snprintf(rel, sizeof(rel), "whole: the subtree of uid %u", (unsigned)X);
	order_says(&c, "u > n", false, rel, "owner units: a subtree delegated to a user is one candidate");
}

/* ---- preferences ---- */

static void test_prefs(void)
{
	struct cg c;

	mem("pref/a", 100 * MiB);
	mem("pref/b", 50 * MiB);
	c = watched("pref", "Victim=memory");
	order_is(&c, "a > b", "no preference: the largest first");
	c = watched("pref", "Victim=memory\nAvoid=a");
	order_says(&c, "b > a", false, "the only one not avoided", "Avoid=: last");
	c = watched("pref", "Victim=memory\nPrefer=b");
	order_says(&c, "b > a", false, "preferred (Prefer=b)", "Prefer=: first");
	c = watched("pref", "Victim=memory\nOmit=a");
	order_says(&c, "b", false, "omitted: a (Omit=a)", "Omit=: left out");
	c = watched("pref", "Victim=memory\nPrefer=a\nAvoid=a");
	order_is(&c, "b > a", "avoid is stronger than prefer");
	c = watched("pref", "Victim=memory\nPrefer=a\nAvoid=a\nOmit=a");
	order_is(&c, "b", "omit is stronger than avoid");

	/* a glob on a cgroup applies to everything below it */
	mem("below/x/y", 300 * MiB);
	mem("below/x/z", 200 * MiB);
	mem("below/w", 100 * MiB);
	c = watched("below", "Victim=memory\nAvoid=x");
	order_is(&c, "w > x/y > x/z", "Avoid= on a cgroup avoids what is below it");
	c = watched("below", "Victim=memory\nAvoid=x/*");
	order_is(&c, "w > x/y > x/z", "globs match the path below the watched cgroup");
	c = watched("below", "Victim=memory\nAvoid=*z");
	order_is(&c, "x/y > x/z > w", "a * does not cross a / (FNM_PATHNAME)");
}

static void test_prefs_owner(void)
{
	char needle[128];
	struct cg c;

	if (!as_root) {
		skip("Avoid=, Omit= and Prefer= on another owner's cgroup: needs root (chown)");
		return;
	}
	mem("others/u", 200 * MiB);
	own("others/u", X);
	mem("others/r", 100 * MiB);
	c = watched("others", "Victim=memory\nAvoid=u\nOmit=u");
	snprintf(needle, sizeof(needle), "Avoid=u on u (u: uid %u)", (unsigned)X);
	order_says(&c, "u > r", true, needle, "Avoid=, Omit= on another owner's cgroup: ignored, and logged");
	mem("others/r", 300 * MiB);
	c = watched("others", "Victim=memory\nAvoid=r");
	order_is(&c, "u > r", "Avoid= on a root-owned cgroup beside it counts");
	c = watched("others", "Victim=memory\nPrefer=u");
	order_is(&c, "u > r", "Prefer= on another owner's cgroup counts (it can only choose its own)");
}

static void test_xattrs(void)
{
	char needle[160];
	struct cg c;

	if (!xattrs_ok) {
		skip("user.cgkill_* xattrs: the fixture's filesystem refuses user.* xattrs");
		return;
	}
	mem("xa/a", 100 * MiB);
	mem("xa/b", 50 * MiB);
	mem("xa/d", 10 * MiB);
	xattr("xa/a", "user.cgkill_avoid", "1");
	c = watched("xa", "Victim=memory");
	order_says(&c, "b > d > a", false, "avoided: user.cgkill_avoid", "user.cgkill_avoid: last");
	c = watched("xa", "Victim=memory\nVictimXattrs=no");
	order_is(&c, "a > b > d", "VictimXattrs=no: not read");
	xattr("xa/d", "user.cgkill_prefer", "");
	c = watched("xa", "Victim=memory");
	order_is(&c, "d > b > a", "user.cgkill_prefer, empty: first");
	xattr("xa/b", "user.cgkill_omit", "yes");
	order_says(&c, "d > a", false, "omitted: b (user.cgkill_omit)", "user.cgkill_omit: left out");
	xattr("xa/b", "user.cgkill_omit", "off");
	xattr("xa/d", "user.cgkill_prefer", "no");
	xattr("xa/a", "user.cgkill_avoid", "0");
	order_is(&c, "a > b > d", "0, no, off: not set");
	xattr("xa/a", "user.cgkill_avoid", "false");
	xattr("xa", "user.cgkill_omit", "1");
	order_is(&c, "a > b > d", "false: not set; the watched cgroup's own: not read");

	/* down the subtree, the strongest wins */
	mem("xs/p/q", 300 * MiB);
	mem("xs/p/s", 200 * MiB);
	mem("xs/w", 100 * MiB);
	xattr("xs/p", "user.cgkill_avoid", "1");
	xattr("xs/p/s", "user.cgkill_prefer", "1");
	c = watched("xs", "Victim=memory");
	order_is(&c, "w > p/q > p/s", "an avoided cgroup's child cannot prefer itself out of it");

	if (!as_root) {
		skip("user.cgkill_* on another owner's cgroup: needs root (chown)");
		return;
	}
	mem("xo/u", 200 * MiB);
	mem("xo/r", 100 * MiB);
	xattr("xo/u", "user.cgkill_omit", "1");
	xattr("xo/r", "user.cgkill_prefer", "1");
	own("xo/u", X);
	c = watched("xo", "Victim=memory");
	snprintf(needle, sizeof(needle), "user.cgkill_omit ignored: the cgroup belongs to uid %u", (unsigned)X);
	order_says(&c, "r > u", true, needle, "user.cgkill_omit on another owner's cgroup: ignored, and logged");
	xattr("xo/r", "user.cgkill_prefer", "0");
	order_is(&c, "u > r", "and a root-owned neighbour's prefer counts");
}

/* ---- figures that cannot be read ---- */

static void test_unknown(void)
{
	struct cg c;

	/* no memory.current, and its process's status unreadable: unknown,
	 * after a figure of 0 (never taken for 0) */
	procs("unk/a", 1, X, true);
	mem("unk/b", 0);
	c = watched("unk", "Victim=memory");
	order_says(&c, "b > a", false, "then a (memory unknown", "an unknown figure ranks after those read, even 0");

	/* below a child of c, an ancestor whose figure is read stands for it */
	mem("anc/x", 300 * MiB);
	procs("anc/x/y", 1, X, true);
	mem("anc/x/z", 100 * MiB);
	mem("anc/w", 200 * MiB);
	c = watched("anc", "Victim=memory");
	order_says(&c, "x > w", false, "a figure below it cannot be read",
		   "an unknown figure below a child: its nearest readable ancestor, whole");

	/* no figure can be read at all: the children of c, by memory */
	mem("none/big", 300 * MiB);
	mem("none/big/q", 100 * MiB);
	procs("none/big/q", 1, X, true);
	mem("none/big/r", 200 * MiB);
	procs("none/big/r", 1, X, true);
	mem("none/alone", 250 * MiB);
	procs("none/alone", 1, Y, true);
	c = watched("none", "Victim=swap");
	order_says(&c, "big > alone", false, "no swap can be read, first by memory",
		   "no figure read at all: the children of the watched cgroup, by memory");

	/* one unknown cgroup of a user's neither lifts nor sinks the rest */
	mem("usum/s1", 200 * MiB);
	procs("usum/s1", 1, X, false);
	procs("usum/s2", 2, X, true);
	mem("usum/t", 150 * MiB);
	procs("usum/t", 1, Y, false);
	c = watched("usum", "Victim=memory");
	order_is(&c, "s1+s2 > t", "an owner's entry: the figures read, summed; one unknown does not sink it");

	/* hidden by its own files: first (fail closed) */
	cg("hid/a");
	put("hid/a", "memory.current", "1\n");
	cg("hid/b");
	put("hid/b", "memory.pressure", "some avg10=90.00 avg60=0.00 avg300=0.00 total=9\n"
					"full avg10=90.00 avg60=0.00 avg300=0.00 total=1\n");
	c = watched("hid", "Victim=pressure");
	order_says(&c, "a > b", false, "cannot be read, which ranks first", "no memory.pressure: hidden, first");
	procs("hidp/a", 1, X, false);
	procs("hidp/b", 4, Y, false);
	cg("hidp/a/c");
	unreadable("hidp/a/c", "cgroup.procs");
	put("hidp/a", "memory.oom.group", "1\n");
	c = watched("hidp", "Victim=processes");
	order_is(&c, "a > b", "processes that cannot be counted: hidden, first");

	if (!as_root) {
		skip("another owner's unknown figure: needs root (chown)");
		return;
	}
	/* another owner's cgroup is never taken by an ancestor, and its
	 * unknown figure does not rank it before a neighbour's */
	mem("ounk/x", 300 * MiB);
	procs("ounk/x/u", 1, X, true);
	own("ounk/x/u", X);
	mem("ounk/x/v", 10 * MiB);
	own("ounk/x/v", Y);
	c = watched("ounk", "Victim=memory");
	order_is(&c, "x/v > x/u", "another owner's unknown figure: not taken by an ancestor, ranked after");
}

/* ---- ties ---- */

static void test_ties(void)
{
	struct cg c;

	mem("ties/a", 10 * MiB);
	procs("ties/a", 2, X, false);
	mem("ties/b", 50 * MiB);
	procs("ties/b", 2, Y, false);
	c = watched("ties", "Victim=processes");
	order_says(&c, "b > a", false, "tied with a, first by memory", "a tie on the figure: memory decides");

	mem("tiep/a", 10 * MiB);
	procs("tiep/a", 2, X, false);
	mem("tiep/B", 10 * MiB);
	procs("tiep/B", 2, Y, false);
	c = watched("tiep", "Victim=processes");
	order_says(&c, "B > a", false, "first by path", "a tie on figure and memory: the path, in byte order");

	mem("tiem/b", 100 * MiB);
	mem("tiem/a", 100 * MiB);
	c = watched("tiem", "Victim=memory");
	order_says(&c, "a > b", false, "tied with b, first by path", "a tie on memory: the path");
}

/* ---- hybrid layouts: the v1 memory counterpart ---- */

/* the v1 memory cgroup rel with the tasks of the v2 cgroup rel (plus
 * extra), holding usage */
static void v1_mirror(const char *rel, uint64_t usage, int extra)
{
	char path[PATH_MAX], from[PATH_MAX], text[4096] = "", line[32];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", v1dir, rel);
	mkdirs(path);
	snprintf(from, sizeof(from), "%s/%s/cgroup.threads", v2dir, rel);
	f = fopen(from, "re");
	if (f) {
		size_t n = fread(text, 1, sizeof(text) - 32, f);

		text[n] = '\0';
		fclose(f);
	}
	if (extra) {
		snprintf(line, sizeof(line), "%d\n", extra);
		strcat(text, line);
	}
	snprintf(path, sizeof(path), "%s/%s/tasks", v1dir, rel);
	write_file(path, text, false);
	snprintf(path, sizeof(path), "%s/%s/cgroup.procs", v1dir, rel);
	write_file(path, text, false);
	snprintf(path, sizeof(path), "%s/%s/memory.usage_in_bytes", v1dir, rel);
	snprintf(text, sizeof(text), "%llu\n", (unsigned long long)usage);
	write_file(path, text, false);
}

static void test_v1(void)
{
	char path[PATH_MAX];
	int stranger, moved;
	uid_t mine;
	struct cg c;

	mkdirs(v1dir);
	D.v1_memory = v1dir;
	procs("hyb/a", 1, X, false);
	procs("hyb/b", 1, Y, false);
	v1_mirror("hyb", 0, 0);
	v1_mirror("hyb/a", 100 * MiB, 0);
	v1_mirror("hyb/b", 200 * MiB, 0);
	c = watched("hyb", "Victim=memory");
	order_is(&c, "b > a", "hybrid: the usage of the v1 counterpart that is the candidate's alone");

	/* a's v1 cgroup also holds a stranger's task: its processes' VmRSS */
	stranger = proc_new(Y + 1, 1024, false);
	snprintf(path, sizeof(path), "%s/%d/cgroup", procdir, stranger);
	write_file(path, "7:memory:/elsewhere\n0::/elsewhere\n", false);
	v1_mirror("hyb/a", 900 * MiB, stranger);
	order_says(&c, "b > a", false, "a (memory 1.0 MiB)",
		   "hybrid: a v1 cgroup shared with another's task does not count; its processes' VmRSS does");

	/* the owner of a moved a task of its own out of a's v1 cgroup: a's
	 * figure is hidden, by its owner's doing, and ranks first (as root,
	 * the cgroups are given to a user: root's tasks are never that) */
	mine = as_root ? X : geteuid();
	procs("hyb2/a", 1, mine, false);
	procs("hyb2/b", 1, Y, false);
	v1_mirror("hyb2/a", 10 * MiB, 0);
	v1_mirror("hyb2/b", 200 * MiB, 0);
	moved = proc_new(mine, 1024, false);
	join("hyb2/a", moved);
	snprintf(path, sizeof(path), "%s/%d/cgroup", procdir, moved);
	write_file(path, "7:memory:/elsewhere\n0::/hyb2/a\n", false);
	if (as_root) {
		own("hyb2", X);
		own("hyb2/a", X);
		own("hyb2/b", X);
	}
	c = watched("hyb2", "Victim=memory");
	order_says(&c, "a > b", true, "by the doing of its owner",
		   "hybrid: a v1 counterpart its owner split: hidden, first, and logged");
	D.v1_memory = NULL;
}

int main(void)
{
	struct timespec t0, t1;

	no_plan();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fixture_init();
	conf_init(&cfg);
	test_kinds();
	test_candidates();
	test_owners();
	test_prefs();
	test_prefs_owner();
	test_xattrs();
	test_unknown();
	test_ties();
	test_v1();
	conf_free(&cfg);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	note("%.1f ms, as %s", (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6,
	     as_root ? "root" : "a user");
	return done_testing();
}
