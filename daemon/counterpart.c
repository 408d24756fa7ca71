/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * v1 counterparts (hybrid layouts): the v1 cgroup whose files stand for a
 * v2 cgroup where the v2 hierarchy has no such controller (pids.events,
 * pids.current, memory.oom_control, memory.pressure_level, the memory
 * figures of victim.c). A v1 cgroup's counters speak for every task in it
 * and below it, and a v1 cgroup can hold the tasks of anyone: a bomb or a
 * hog there would be taken for the v2 cgroup's own (issue 26, items 1 and
 * 2). So a v1 cgroup (the one of the same path, else the one of the v2
 * cgroup's first process) is its counterpart only when it belongs to it
 * alone, or when what makes it not so is the doing of the v2 cgroup's
 * owner u (st_uid of its directory) and counts against the v2 cgroup
 * (RT1 #2 and #5: a delegatee must not opt its own cgroup out of a rule,
 * nor shrink its own figure, by a refusal it caused):
 *  - it is not the v1 root (nobody's counterpart);
 *  - it and every cgroup below it, their cgroup.procs and tasks, are
 *    writable by no one but root and u (root's without g+w or o+w), or
 *    are u's (u not root: whatever mode they have, u gave it): nobody
 *    else can move a task in, or make a cgroup below, unless u let them;
 *  - every task in it and below it (v1 "tasks") is in the v2 cgroup or
 *    below it (its /proc/TID/cgroup "0::" line), or, u not root, is u's
 *    (real, effective or saved uid: v1 lets only root and the task's uid
 *    move it) or sits in a v1 cgroup of u's (its directory, cgroup.procs
 *    or tasks): put there by u or root, u's doing;
 *  - for a figure (cover), also: every task of the v2 subtree is in it or
 *    below it, so that the figure misses none of the v2 cgroup's tasks.
 *    A task of it elsewhere that is u's, or in a v1 cgroup of u's, is
 *    u's doing: the figure is hidden (victim.c ranks it first), never the
 *    smaller sum of its processes.
 * The tasks are compared as sets, the v2 subtree's cgroup.threads against
 * the v1 subtree's tasks; a task in one only (it came or went between the
 * two reads, or sits elsewhere) is looked up in /proc/TID/cgroup, and one
 * gone meanwhile is nobody's. The triggers check when they are armed and
 * again before they act (trigger-pids.c, trigger-memory.c,
 * trigger-pressure.c); a refusal is logged once per cgroup and shown in
 * the state dump and by --check.
 *
 * Where no v1 memory cgroup can be a candidate's (none, or refused for
 * what neither it nor its owner did), its memory and swap are the sums of
 * its processes' (procs_memory()): those belong to it alone.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "cgkilld.h"

#define SUBTREE_DEPTH 256	/* deeper: refused (a figure: unknown) */

/* Where process data is read: procfs, or the fixture tree a test puts in
 * its place (tests/test-victim-fixture.c). */
const char *proc_root = "/proc";

struct tids {
	pid_t *v;
	size_t n, cap;
};

static int tids_add(struct tids *s, pid_t t)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 256;
		pid_t *grown = realloc(s->v, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		s->v = grown;
		s->cap = cap;
	}
	s->v[s->n++] = t;
	return 0;
}

static int pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

static bool tids_has(const struct tids *s, pid_t t)
{
	return s->n && bsearch(&t, s->v, s->n, sizeof(*s->v), pid_cmp);
}

static bool gone(int err)
{
	return err == ENOENT || err == ENODEV || err == ESRCH;
}

/* The numbers of the file name of the cgroup at dfd ("tasks",
 * "cgroup.threads", "cgroup.procs"), one a line, added to s: 0 (a cgroup
 * gone is empty), or -errno. */
static int tids_read(struct tids *s, int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC), r = 0;
	FILE *f;
	int t;

	if (fd < 0)
		return gone(errno) ? 0 : -errno;
	f = fdopen(fd, "r");
	if (!f) {
		r = -errno;
		close(fd);
		return r;
	}
	while (r == 0 && fscanf(f, "%d", &t) == 1)
		r = t > 0 ? tids_add(s, t) : 0;
	if (r == 0 && ferror(f) && !gone(errno))
		r = -EIO;
	fclose(f);
	return r;
}

/* May only root and owner write st, or is it owner's (not root: any mode
 * it has, owner gave it)? */
static bool writers_ok(const struct stat *st, uid_t owner)
{
	return (owner != 0 && st->st_uid == owner) ||
	       ((st->st_uid == 0 || st->st_uid == owner) && !(st->st_mode & (S_IWGRP | S_IWOTH)));
}

/* Who can write the v1 cgroup at dfd (for why), else 0. */
static int v1_writers(int dfd, uid_t owner, char *why, size_t size)
{
	static const char *const files[] = { ".", "cgroup.procs", "tasks" };
	struct stat st;

	for (size_t i = 0; i < sizeof(files) / sizeof(*files); i++) {
		if (fstatat(dfd, files[i], &st, 0) < 0)
			return gone(errno) ? 0 : -errno;
		if (!writers_ok(&st, owner)) {
			snprintf(why, size, "%s of it, or of a cgroup below it, can be written by uid %u or others (mode %03o)",
				 i ? files[i] : "the directory", (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777));
			return 1;
		}
	}
	return 0;
}

/* What subtree_tids() walks with; depth: levels below its top. */
struct tids_walk {
	const char *file;
	bool v1, whole;
	uid_t owner;
	unsigned depth;
	struct tids *s;
	char *why;
	size_t size;
};

/* subtree_tids() of the cgroup at dfd (arg a struct tids_walk), its
 * children through cg_each_child(). */
static int tids_walk(int dfd, void *arg)
{
	struct tids_walk *w = arg;
	int r;

	if (w->depth > SUBTREE_DEPTH) {
		/* A v2 set that need not be whole stops here: strays() looks
		 * up in /proc each task it lacks, so a delegatee's deep chain
		 * cannot turn the answer into "refused" and disarm the rule.
		 * Below a v1 cgroup only root and owner can write: owner's
		 * making, counted against it, unseen (not refused: that
		 * would opt it out). */
		if (!w->whole || (w->v1 && w->owner != 0))
			return 0;
		/* a v2 cgroup of a user's: only they (and root) make its
		 * levels, so the figure is hidden by their doing */
		bool owners = !w->v1 && w->owner != 0;

		snprintf(w->why, w->size, "more than %d levels below it%s", SUBTREE_DEPTH,
			 owners ? ", by the doing of its owner" : "");
		return owners ? 2 : 1;
	}
	if ((w->v1 && (r = v1_writers(dfd, w->owner, w->why, w->size)) != 0) ||
	    (r = tids_read(w->s, dfd, w->file)) < 0)
		return r;
	w->depth++;
	r = cg_each_child(dfd, tids_walk, w);
	w->depth--;
	return r;
}

/* The tasks of the cgroup at dfd and below it, from file (the v2
 * "cgroup.threads", the v1 "tasks"); with v1, who can write each is
 * checked too. whole: every task is needed (v1 is always whole), else the
 * walk may stop at SUBTREE_DEPTH. 0, 1 refused (why), or -errno. */
static int subtree_tids(int dfd, const char *file, bool v1, bool whole, uid_t owner, struct tids *s,
			char *why, size_t size)
{
	struct tids_walk w = { file, v1, v1 || whole, owner, 0, s, why, size };

	return tids_walk(dfd, &w);
}

/* Does path name base or a cgroup below it? */
static bool at_or_below(const char *path, const char *base)
{
	size_t n = strlen(base);

	if (n && base[n - 1] == '/')
		n--;	/* the root, "/" */
	return !strncmp(path, base, n) && (path[n] == '\0' || path[n] == '/');
}

/* The cgroup of task tid (or process) in the hierarchy of controller (NULL:
 * v2, the "0::" line) from /proc/TID/cgroup: 1, 0 if the task is gone or
 * not in that hierarchy, or -errno. */
static int proc_cgroup(pid_t tid, const char *controller, char *buf, size_t size)
{
	char *path = NULL;
	int r = cgk_proc_cgroup(proc_root, tid, controller, &path);

	if (r == -ESRCH || r == -ENOENT)
		return 0;
	if (r == 0 && (size_t)snprintf(buf, size, "%s", path) >= size)
		r = -ENAMETOOLONG;
	free(path);
	return r < 0 ? r : 1;
}

int proc_uids(pid_t pid, uid_t uids[3])
{
	char path[PATH_MAX], buf[4096];
	unsigned long u[3];
	const char *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%d/status", proc_root, (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read_at0(fd, buf, sizeof(buf));
	close(fd);
	p = n > 0 ? strstr(buf, "\nUid:") : NULL;
	if (!p || sscanf(p + 5, "%lu %lu %lu", &u[0], &u[1], &u[2]) != 3)
		return -1;
	for (int k = 0; k < 3; k++)
		uids[k] = (uid_t)u[k];
	return 0;
}

/* Is task tid owner's (its real, effective or saved uid: v1 lets only
 * root and those move it), or in a v1 cgroup of owner's (v1path: the
 * cgroup itself, its cgroup.procs or tasks)? Never for owner root. */
static bool owners_task(pid_t tid, uid_t owner, const char *v1path)
{
	static const char *const files[] = { "", "/cgroup.procs", "/tasks" };
	char path[PATH_MAX + 16];
	struct stat st;
	uid_t u[3];

	if (owner == 0)
		return false;
	if (proc_uids(tid, u) == 0 && (u[0] == owner || u[1] == owner || u[2] == owner))
		return true;
	for (size_t i = 0; v1path && i < sizeof(files) / sizeof(*files); i++) {
		snprintf(path, sizeof(path), "%s%s", v1path, files[i]);
		if (stat(path, &st) == 0 && st.st_uid == owner)
			return true;
	}
	return false;
}

/* The tasks of have that are not in also: each is looked up, and must be
 * in base of the hierarchy of controller (NULL: v2), unless owner (the v2
 * cgroup's) did it (owners_task(); its v1 cgroup in the hierarchy of v1ctl
 * at mount). 0, 1 refused (why says: tasks described as what), 2 the
 * owner's doing where owner_refuses (else it is accepted), or -errno. */
static int strays(const struct tids *have, const struct tids *also, const char *controller, const char *base,
		  uid_t owner, const char *mount, const char *v1ctl, bool owner_refuses, const char *what,
		  char *why, size_t size)
{
	char where[PATH_MAX] = "", v1where[PATH_MAX], v1path[2 * PATH_MAX];

	for (size_t i = 0; i < have->n; i++) {
		bool owners;
		int r;

		if (tids_has(also, have->v[i]))
			continue;
		r = proc_cgroup(have->v[i], controller, where, sizeof(where));
		if (r < 0)
			return r;
		if (!r || at_or_below(where, base))
			continue;
		if (controller)
			snprintf(v1where, sizeof(v1where), "%s", where);
		else if (proc_cgroup(have->v[i], v1ctl, v1where, sizeof(v1where)) <= 0)
			*v1where = '\0';
		snprintf(v1path, sizeof(v1path), "%s%s", mount, v1where);
		owners = owners_task(have->v[i], owner, *v1where ? v1path : NULL);
		if (owners && !owner_refuses)
			continue;	/* the owner's doing: counted against it */
		snprintf(why, size, "%s %d is in %s%s%s, outside %s%s", what, (int)have->v[i],
			 controller ? "the v1 cgroup " : "", where, controller ? "" : " (v2)", base,
			 owners ? ", by the doing of its owner" : "");
		return owners ? 2 : 1;
	}
	return 0;
}

/* A figure's v1 cgroup is the root (nobody's counterpart): 1, or 2 if a
 * task of the v2 subtree at v2fd sits in another v1 cgroup by its owner's
 * doing (owners_task(): the rest of it out of the root's sight), or
 * -errno. */
static int root_split(int v2fd, uid_t owner, const char *mount, const char *controller, char *why, size_t size)
{
	struct tids v2 = { 0 };
	char where[PATH_MAX], v1path[2 * PATH_MAX];
	int r = subtree_tids(v2fd, "cgroup.threads", false, false, owner, &v2, why, size);

	for (size_t i = 0; r == 0 && i < v2.n; i++) {
		r = proc_cgroup(v2.v[i], controller, where, sizeof(where));
		snprintf(v1path, sizeof(v1path), "%s%s", mount, where);
		if (r <= 0 || !strcmp(where, "/") || !owners_task(v2.v[i], owner, v1path)) {
			r = r < 0 ? r : 0;
			continue;
		}
		snprintf(why, size,
			 "its task %d is in the v1 cgroup %s, the rest of it in the root of the v1 %s hierarchy, by the doing of its owner",
			 (int)v2.v[i], where, controller);
		r = 2;
	}
	free(v2.v);
	if (r == 0 || r == 1) {
		snprintf(why, size, "it is the root of the v1 %s hierarchy", controller);
		r = 1;
	}
	return r;
}

/* Does the v1 cgroup mount/v1rel of controller belong to the v2 cgroup
 * rel alone, or is what makes it not so its owner's doing (and, with
 * cover, does it hold all of its tasks)? 0 yes, 1 no (why), 2 no by the
 * owner's doing (cover only: the figure is hidden), or -errno. */
static int v1_own(const char *rel, const char *mount, const char *v1rel, const char *controller, bool cover,
		  char *why, size_t size)
{
	struct tids v2 = { 0 }, v1 = { 0 };
	char path[PATH_MAX], base[PATH_MAX];
	struct stat st;
	int r, v2fd = -1, v1fd = -1;

	if ((!strcmp(v1rel, "/") || !*v1rel) && !cover) {
		snprintf(why, size, "it is the root of the v1 %s hierarchy", controller);
		return 1;
	}
	snprintf(base, sizeof(base), "/%s", rel);
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", D.v2, rel) >= sizeof(path))
		return -ENAMETOOLONG;
	v2fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (v2fd < 0 || fstat(v2fd, &st) < 0) {
		r = -errno;
		goto out;
	}
	if (!strcmp(v1rel, "/") || !*v1rel) {
		r = root_split(v2fd, st.st_uid, mount, controller, why, size);
		goto out;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s%s", mount, v1rel) >= sizeof(path)) {
		r = -ENAMETOOLONG;
		goto out;
	}
	v1fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (v1fd < 0) {
		r = -errno;
		goto out;
	}
	r = subtree_tids(v2fd, "cgroup.threads", false, cover, st.st_uid, &v2, why, size);
	if (r == 0)
		r = subtree_tids(v1fd, "tasks", true, true, st.st_uid, &v1, why, size);
	if (r)
		goto out;
	/* (qsort(NULL, 0) is undefined) */
	if (v2.n)
		qsort(v2.v, v2.n, sizeof(*v2.v), pid_cmp);
	if (v1.n)
		qsort(v1.v, v1.n, sizeof(*v1.v), pid_cmp);
	r = strays(&v1, &v2, NULL, base, st.st_uid, mount, controller, false, "task", why, size);
	if (r == 0 && cover)
		r = strays(&v2, &v1, controller, v1rel, st.st_uid, mount, controller, true, "its task", why, size);
out:
	if (v2fd >= 0)
		close(v2fd);
	if (v1fd >= 0)
		close(v1fd);
	free(v2.v);
	free(v1.v);
	return r;
}

/* The v1 cgroup of rel (*res, malloc'ed): 0, 1 none (why "") or refused
 * (why), 2 refused by its owner's doing (cover only, why). */
static int find(const char *rel, const char *mount, const char *controller, bool cover, char **res, char *why,
		size_t size)
{
	char path[PATH_MAX], v1rel[PATH_MAX], reason[PATH_MAX + 256];
	long pid = 0;
	int r;
	FILE *f;

	*why = '\0';
	*res = NULL;
	if (!mount)
		return 1;
	snprintf(v1rel, sizeof(v1rel), "/%s", rel);
	if ((size_t)snprintf(path, sizeof(path), "%s%s", mount, v1rel) >= sizeof(path))
		return 1;
	if (access(path, F_OK) < 0) {
		/* else where a member of the v2 cgroup is in that hierarchy */
		char line[64];

		snprintf(path, sizeof(path), "%s/%s/cgroup.procs", D.v2, rel);
		f = fopen(path, "re");
		if (!f)
			return 1;
		while (fgets(line, sizeof(line), f) && (pid = strtol(line, NULL, 10)) <= 0)
			;
		fclose(f);
		/* the root of the hierarchy is nobody's counterpart: none
		 * (a figure: unless its owner split it from the root) */
		if (pid <= 0 || proc_cgroup((pid_t)pid, controller, v1rel, sizeof(v1rel)) <= 0 ||
		    (!strcmp(v1rel, "/") && !cover))
			return 1;
	}
	r = v1_own(rel, mount, v1rel, controller, cover, reason, sizeof(reason));
	if (r == 1 && cover && !strcmp(v1rel, "/"))
		return 1;	/* none: its processes' sums */
	if (r) {
		if (r < 0)
			snprintf(reason, sizeof(reason), "it cannot be read: %s", strerror(-r));
		snprintf(why, size, "the v1 %s cgroup %s%s does not belong to it alone: %s", controller, mount, v1rel,
			 reason);
		return r == 2 ? 2 : 1;
	}
	if (asprintf(res, "%s%s", mount, v1rel) < 0) {
		*res = NULL;
		return 1;
	}
	return 0;
}

char *v1_counterpart(const char *rel, const char *mount, const char *controller, bool cover, char *why,
		     size_t size)
{
	char *res;

	find(rel, mount, controller, cover, &res, why, size);
	return res;
}

int v1_figure_cgroup(const char *rel, char **v1, char *why, size_t size)
{
	int r = find(rel, D.v1_memory, "memory", true, v1, why, size);

	return r == 2 ? -EPERM : r;
}

bool v1_alone(const char *rel, const char *mount, const char *controller, const char *dir, char *why, size_t size)
{
	size_t ml = mount ? strlen(mount) : 0;

	*why = '\0';
	if (!mount || strncmp(dir, mount, ml) || dir[ml] != '/')
		return false;
	return v1_own(rel, mount, dir + ml, controller, false, why, size) == 0;
}

bool counterpart_dir(int fd, char *buf, size_t size)
{
	char link[64], *slash;
	ssize_t n;

	if (fd < 0)
		return false;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, size - 1);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (!slash || slash == buf)
		return false;
	*slash = '\0';
	return true;
}

static unsigned bit_of(const char *controller)
{
	return !strcmp(controller, "pids") ? V1_REFUSED_PIDS : V1_REFUSED_MEMORY;
}

void counterpart_refused(struct cg *c, const char *controller, const char *what, const char *why)
{
	unsigned bit = bit_of(controller);

	if (c->v1_refused & bit)
		return;
	c->v1_refused |= bit;
	log_msg(LOG_PRI_NOTICE, "rule %s: %s/%s: %s not armed: %s (said once for this cgroup)", c->rule->name,
		D.v2, c->rel, what, why);
}

void counterpart_used(struct cg *c, const char *controller)
{
	c->v1_refused &= ~bit_of(controller);
}

bool counterpart_still_own(struct cg *c, int fd, const char *controller, const char *what)
{
	const char *mount = bit_of(controller) == V1_REFUSED_PIDS ? D.v1_pids : D.v1_memory;
	char dir[PATH_MAX], reason[PATH_MAX + 256];
	size_t ml = mount ? strlen(mount) : 0;
	int r;

	if (!mount || !counterpart_dir(fd, dir, sizeof(dir)) || strncmp(dir, mount, ml) || dir[ml] != '/')
		r = -ENOENT;
	else
		r = v1_own(c->rel, mount, dir + ml, controller, false, reason, sizeof(reason));
	if (r == 0)
		return true;
	if (r < 0)
		snprintf(reason, sizeof(reason), "it cannot be read: %s", strerror(-r));
	/* told every time: the trigger is disarmed after this */
	c->v1_refused |= bit_of(controller);
	log_msg(LOG_PRI_NOTICE,
		"rule %s: %s/%s: %s: not acted on, and disarmed (armed again when the cgroup next becomes populated, if its v1 %s cgroup is its own again): the v1 %s cgroup %s does not belong to it alone any more: %s",
		c->rule->name, D.v2, c->rel, what, controller, controller, mount ? dir : "?", reason);
	return false;
}

void counterpart_dump(const struct cg *c, struct out *o)
{
	static const char *const ctl[] = { "pids", "memory" };

	for (unsigned i = 0; i < 2; i++) {
		const char *mount = i ? D.v1_memory : D.v1_pids;
		char why[PATH_MAX + 512], *v1;
		const char *now;

		if (!(c->v1_refused & bit_of(ctl[i])))
			continue;
		v1 = v1_counterpart(c->rel, mount, ctl[i], false, why, sizeof(why));
		now = *why ? why
		      : v1 ? "it qualifies now: armed when the cgroup next becomes populated"
			   : "there is none now";
		if (o->json) {
			out_open(o, NULL, '{');
			out_str(o, "counterpart", ctl[i]);
			out_str(o, "why", now);
			out_close(o, '}');
		} else {
			out_line(o, "v1 %s counterpart of %s/%s (rule %s) refused: %s", ctl[i], D.v2, c->rel,
				 c->rule->name, now);
		}
		free(v1);
	}
}

/* ---- figures where no v1 memory cgroup is the candidate's own ---- */

/* "VmRSS:" of a /proc/PID/status text, in bytes (absent: 0, a kernel
 * thread). */
static uint64_t status_kb(const char *text, const char *key)
{
	const char *p = strstr(text, key);

	return p ? strtoull(p + strlen(key), NULL, 10) * 1024 : 0;
}

/* The processes of cgroup.procs at dfd: their VmRSS and VmSwap added. */
static int procs_add(int dfd, uint64_t *rss, uint64_t *swap)
{
	struct tids s = { 0 };
	int r = tids_read(&s, dfd, "cgroup.procs");

	for (size_t i = 0; r == 0 && i < s.n; i++) {
		char path[PATH_MAX], buf[4096];
		int fd;
		ssize_t n;

		snprintf(path, sizeof(path), "%s/%d/status", proc_root, (int)s.v[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			r = gone(errno) ? 0 : -errno;
			continue;
		}
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n < 0) {
			r = gone(errno) ? 0 : -errno;
			continue;
		}
		buf[n] = '\0';
		*rss += status_kb(buf, "\nVmRSS:");
		*swap += status_kb(buf, "\nVmSwap:");
	}
	free(s.v);
	return r;
}

/* What procs_walk() adds up; depth: levels below its top. */
struct procs_sum {
	uint64_t *rss, *swap;
	unsigned depth;
};

/* procs_add() of the cgroup at dfd and below it (arg a struct
 * procs_sum): 0 or -errno. */
static int procs_walk(int dfd, void *arg)
{
	struct procs_sum *p = arg;
	int r = p->depth > SUBTREE_DEPTH ? -ELOOP : procs_add(dfd, p->rss, p->swap);

	if (r < 0)
		return r;
	p->depth++;
	r = cg_each_child(dfd, procs_walk, p);
	p->depth--;
	return r;
}

bool procs_memory(int dfd, uint64_t *rss, uint64_t *swap)
{
	struct procs_sum p = { rss, swap, 0 };

	*rss = *swap = 0;
	return procs_walk(dfd, &p) == 0;
}

/* ---- --check ---- */

static void check_one(const struct rule *r, const char *rel)
{
	static const struct {
		unsigned trig;
		const char *v2file, *controller, *what;
	} uses[] = {
		{ TRIG_PIDS, "pids.events", "pids", "pids triggers" },
		{ TRIG_OOM_KILL, "memory.events", "memory", "oom-kill" },
		{ TRIG_PRESSURE_LEVEL, NULL, "memory", "memory-pressure-level" },
	};

	/* cgroup names others chose: through the log's filter (out_line) */
	struct out say = { .f = stdout };

	for (size_t i = 0; i < sizeof(uses) / sizeof(*uses); i++) {
		char path[PATH_MAX], why[PATH_MAX + 512], *v1;
		const char *mount = strcmp(uses[i].controller, "pids") ? D.v1_memory : D.v1_pids;

		if (!(r->triggers & uses[i].trig))
			continue;
		if (uses[i].v2file &&
		    ((size_t)snprintf(path, sizeof(path), "%s/%s/%s", D.v2, rel, uses[i].v2file) >= sizeof(path) ||
		     access(path, F_OK) == 0))
			continue;
		v1 = v1_counterpart(rel, mount, uses[i].controller, false, why, sizeof(why));
		if (v1)
			out_line(&say, "  %s: %s/%s: %s on the v1 cgroup %s", r->name, D.v2, rel, uses[i].what, v1);
		else if (*why)
			out_line(&say, "  %s: %s/%s: %s not armed: %s", r->name, D.v2, rel, uses[i].what, why);
		free(v1);
	}
}

/* The cgroups below rel that match r from component level on. */
static void check_walk(const struct rule *r, const char *rel, unsigned level)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "%s%s%s", D.v2, *rel ? "/" : "", rel);
	d = opendir(path);
	if (!d)
		return;
	while ((e = readdir(d))) {
		char sub[PATH_MAX];

		if (e->d_type != DT_DIR || e->d_name[0] == '.' ||
		    fnmatch(r->comp[level], e->d_name, FNM_PERIOD) != 0 ||
		    (size_t)snprintf(sub, sizeof(sub), "%s%s%s", rel, *rel ? "/" : "", e->d_name) >= sizeof(sub))
			continue;
		if (level + 1 == r->ncomp)
			check_one(r, sub);
		else
			check_walk(r, sub, level + 1);
	}
	closedir(d);
}

void counterpart_check(const struct config *cfg)
{
	for (size_t i = 0; i < cfg->nrules; i++) {
		const struct rule *r = &cfg->rules[i];

		if ((r->triggers & (TRIG_PIDS | TRIG_OOM_KILL | TRIG_PRESSURE_LEVEL)) && r->ncomp)
			check_walk(r, "", 0);
	}
}
