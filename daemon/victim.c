/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Victim choice: whom a rule with Victim= other than self acts on, among
 * the candidates below the cgroup it matched (c). cgkilld.conf(5),
 * "VICTIM CHOICE", says the same for users.
 *
 * The names below c are chosen by whoever the cgroups are delegated to:
 * nothing they can arrange there may shield their cgroup so that a
 * neighbour's dies instead, nor stop the rule from choosing (fail closed).
 *
 * Candidates. The walk goes down from c with openat() from directory fds
 * (no limit on the length of a path; the path below c is kept for the
 * globs and the logs only), through populated cgroups only
 * (cgroup.events "populated" counts the whole subtree, so an empty
 * subtree costs one read; a cgroup gone on the way, ENOENT or ENODEV, is
 * empty). A populated cgroup is one candidate for its whole subtree, not
 * walked into, when:
 *  - it is below c and its directory belongs to neither root nor the
 *    owner of c (or its owner cannot be told): ranking is per owner, the
 *    subtree delegated to someone is theirs to shape (many small leaves,
 *    deep ones, files off) and counts as one, its figure that of the
 *    whole subtree;
 *  - it is omitted (nothing below it is looked at);
 *  - memory.oom.group is 1, or it is "domain threaded" (the kernel's
 *    unit of an OOM kill; threaded cgroups cannot be killed one by one);
 *  - it has processes of its own beside child cgroups: those processes
 *    are in no cgroup below, and taking the children alone would leave
 *    them (a hog beside a child holding one sleep) out of the ranking;
 *  - its children cannot show the figure: the v2 memory controller is
 *    on it but not in its cgroup.subtree_control (memory figures);
 *  - its child cgroups cannot be listed, or it is MAX_DEPTH below c;
 *  - a cgroup below it is populated but its path would reach PATH_MAX
 *    (act.c names the victim by path): the nearest ancestor whose path
 *    fits stands for it;
 *  - it is below c and a candidate of root or c's owner found below it
 *    has a figure that cannot be read, not hidden (see Figures): the
 *    nearest ancestor below c whose figure can be read is taken instead.
 * Else a populated cgroup none of whose children is populated is a
 * candidate (a leaf), and one with populated children is not: they are.
 * c is the candidate only when one of those holds for it, or none of its
 * children is populated. A cgroup that cannot be opened or read (but is
 * not gone) is a candidate whose figure is unknown, of no known owner.
 * Only c that cannot be read makes the rule fail.
 *
 * Preferences, each from the rule's globs (Prefer=, Avoid=, Omit=:
 * fnmatch(3) with FNM_PATHNAME on the path relative to c) and from the
 * xattrs user.cgkill_prefer, user.cgkill_avoid, user.cgkill_omit on the
 * v2 directory (present with any value but 0, no, false, off). Both apply
 * to the cgroup where they are found and to everything below it; where
 * several apply the strongest wins: omit, then avoid, then prefer. An
 * xattr is honoured only where the directory belongs to root or to the
 * owner of c (systemd-oomd's rule): the owner of c decides among its own
 * cgroups, and a user to whom one child of a root-owned c is delegated
 * cannot shield it (avoid, omit) so that a neighbour's dies instead, nor
 * volunteer it, which would steer the choice as well. An xattr refused
 * that way is logged with the owners. An Avoid= or Omit= glob counts only
 * where every directory from c down to the cgroup it matched belongs to
 * root or to the owner of c: the names there were not chosen by a
 * delegatee (Avoid=*terminal* must not shield a hog named x-terminal);
 * the globs ignored that way are logged once per action. Prefer= counts
 * anywhere the walk goes, down to another owner's cgroup (a user can only
 * make their own cgroup the victim). xattrs on c itself are not read
 * (they would choose among nothing).
 *
 * Order: omitted candidates out; the preferred first, then the others,
 * the avoided last; within each, a figure hidden first (fail closed),
 * then the figures read, descending, then the figures that cannot be
 * read for another reason; then memory descending (for every figure but
 * memory itself), then the path ascending (strcmp: byte order).
 * Deterministic, so tests can say whom.
 *
 * Owners: within each group, the candidates of one user (cand.key: the
 * owner of the directory of another owner's cgroup; for a leaf of root's
 * or c's owner's, the uid most of its processes run as, root and c's
 * owner not counted) are one entry of the order, their figures summed,
 * and the victim is all of the first entry (act.c acts on each): else a
 * user who splits a load over many sibling cgroups (one per job, one
 * session scope per login) would outweigh none, and a neighbour's
 * cgroup would go. A user cannot make another's cgroup count as theirs:
 * root sets a directory's owner, and a process's uid is its own.
 *
 * Figures (victim name: what):
 *  memory         memory.current less the protection the kernel grants
 *                 (memory.low bounded by the parent's, from c down, c's
 *                 own at most its usage: protection.c), at least 0; v1:
 *                 the memory.usage_in_bytes of the v1 counterpart (no low)
 *  memory-growth  (memory now - memory at the episode's start) per
 *                 second, memory being memory.current (v1:
 *                 usage_in_bytes); a candidate unknown at the start grew
 *                 from 0; without a start (no episode, or a trigger
 *                 without episodes) every growth is 0 and memory decides
 *  pressure       avg10 of the candidate's memory.pressure, its "full"
 *                 line where the rule's PressureLimit= is full, else
 *                 "some", in hundredths of a percent
 *  processes      the processes of the subtree (its cgroup.procs lines):
 *                 processes, not pids.current's tasks (threads count
 *                 there), and exact where a v1 counterpart may be shared
 *  swap           memory.swap.current; v1: memsw.usage_in_bytes -
 *                 usage_in_bytes
 * A figure that cannot be read is never taken for 0, which would shield
 * the cgroup. Hidden (k->hidden) where the candidate's own files or
 * subtree hide it (cgroup.pressure 0, a subtree too deep or unreadable to
 * count): it ranks first in its group, which only its owner can have
 * arranged and only they pay for. Else (memory and swap: the v2 files are
 * there by the parent's subtree_control, the v1 counterparts are found
 * for it; the daemon short of files or memory) it is no one's doing that
 * may choose whom: the nearest ancestor below c whose figure can be read
 * is the candidate instead, whole, where the candidate is root's or c's
 * owner's below a child of c; another owner's cgroup is never taken by an
 * ancestor (that would take its neighbours with it); and such a figure
 * ranks after those read. memory as the next key counts as 0 when
 * unreadable.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cgkilld.h"

#define MAX_DEPTH 64
#define COUNT_DEPTH 256	/* processes: a deeper subtree's count is unknown */
#define SHOWN 5		/* candidates named in why and json */

/* walk(): populated, and a cgroup below must be taken by an ancestor */
#define UP 2

/* by strength: the strongest that applies wins */
enum pref { PREF_NONE, PREF_PREFER, PREF_AVOID, PREF_OMIT, PREF_N };

static const struct {
	const char *group, *key, *xattr, *adjective;
} prefs[PREF_N] = {
	[PREF_NONE] = { "normal", NULL, NULL, NULL },
	[PREF_PREFER] = { "prefer", "Prefer", "user.cgkill_prefer", "preferred" },
	[PREF_AVOID] = { "avoid", "Avoid", "user.cgkill_avoid", "avoided" },
	[PREF_OMIT] = { "omit", "Omit", "user.cgkill_omit", "omitted" },
};

/* the place of a group in the order */
static int group_order(enum pref p)
{
	return p == PREF_PREFER ? 0 : p == PREF_NONE ? 1 : p == PREF_AVOID ? 2 : 3;
}

struct cand {
	char *rel;		/* relative to D.v2 */
	const char *sub;	/* in rel: relative to c, "" for c */
	enum pref pref;
	char *reason;		/* what put it in its group; NULL for normal */
	const char *whole;	/* why it was taken whole, NULL for a leaf */
	uid_t uid;		/* the owner of its directory ((uid_t)-1 unknown) */
	bool other;		/* neither root's nor c's owner's (or not known to be) */
	uid_t key;		/* the owner it is ranked with ((uid_t)-1: alone) */
	bool by_procs;		/* key: the uid of its processes (a trusted leaf) */
	bool unknown;		/* its figure cannot be read */
	bool hidden;		/* ... through its own files: ranks first */
	bool cur_ok;		/* cur was read */
	uint64_t cur;		/* memory.current (v1: usage_in_bytes) */
	int64_t figure;
	uint64_t memory;	/* the next key (growth, pressure, processes, swap) */
};

/* Are the directories from c down to here root's or c's owner's? len:
 * the length of the path below c where that stopped being so, uid its
 * owner. */
struct trust {
	bool ok;
	size_t len;
	uid_t uid;
};

/* The memory protection of a cgroup's parent, handed down the walk:
 * what the kernel grants the parent, and the sum of its children's
 * claims (protection.c). */
struct prot {
	uint64_t parent_elow;
	uint64_t siblings;
};

struct walk {
	struct cg *c;
	bool prefs;		/* read preferences (not for the episode's base) */
	uid_t owner;		/* of c */
	/* the cgroup being walked, for add(): its owner, whether it is
	 * another's, the protection the kernel grants it */
	uid_t uid;
	bool other;
	uint64_t elow;
	size_t base;		/* strlen of "D.v2/c->rel" */
	char *sub;		/* the path below c of the cgroup being walked */
	size_t sublen, subcap;
	struct cand *v;
	size_t n, cap;
	FILE *ignored;		/* Avoid=, Omit= ignored: the text, for one log line */
	char *ignored_text;
	size_t ignored_size;
	unsigned nignored;
};

struct victim_base {
	uint64_t t;		/* ms */
	size_t n;
	struct base_ent {
		char *rel;
		uint64_t memory;
	} *v;			/* sorted by rel */
};

static bool gone(int err)
{
	return err == ENOENT || err == ENODEV;
}

/* "D.v2/c/sub" of the cgroup being walked, malloc'ed (for logs), or NULL. */
static char *walk_path(const struct walk *w)
{
	char *p;

	if (asprintf(&p, "%s/%s%s%s", D.v2, w->c->rel, w->sublen ? "/" : "", w->sub) < 0)
		return NULL;
	return p;
}

/* Append "/name" (or "name" at the top) to the path below c. */
static int sub_push(struct walk *w, const char *name)
{
	size_t nl = strlen(name), need = w->sublen + 1 + nl + 1;

	if (need > w->subcap) {
		size_t cap = need * 2;
		char *grown = realloc(w->sub, cap);

		if (!grown)
			return -ENOMEM;
		w->sub = grown;
		w->subcap = cap;
	}
	if (w->sublen)
		w->sub[w->sublen++] = '/';
	memcpy(w->sub + w->sublen, name, nl + 1);
	w->sublen += nl;
	return 0;
}

static void sub_pop(struct walk *w, size_t len)
{
	w->sublen = len;
	if (w->sub)
		w->sub[len] = '\0';
}

/* Would the path of the cgroup being walked reach PATH_MAX? */
static bool too_long(const struct walk *w)
{
	return w->base + 1 + w->sublen >= PATH_MAX;
}

/* A number file of a v1 counterpart, by path. */
static bool read_u64_path(const char *dir, const char *name, uint64_t *v)
{
	char path[PATH_MAX];

	return (size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) < sizeof(path) &&
	       read_number_at(AT_FDCWD, path, v);
}

/* Declared in cgkilld.h: the cgroup.events of the cgroup at dfd. */
int cg_populated(int dfd)
{
	char buf[256];
	uint64_t v;
	ssize_t n = read_small_at(dfd, "cgroup.events", buf, sizeof(buf));

	if (n < 0)
		return gone((int)-n) ? 0 : (int)n;
	return n > 0 && kv_get(buf, "populated", &v) && v;
}

/* Taken as a whole by the kernel's own rules: why, or NULL. */
static const char *kernel_whole(int dfd)
{
	char buf[64];
	uint64_t v;

	if (read_number_at(dfd, "memory.oom.group", &v) && v == 1)
		return "memory.oom.group 1";
	if (read_small_at(dfd, "cgroup.type", buf, sizeof(buf)) > 0 && !strncmp(buf, "domain threaded", 15))
		return "a threaded subtree";
	return NULL;
}

/* Processes of its own in cgroup.procs: 1, 0 (none or gone), -errno. */
static int own_processes(int dfd)
{
	char buf[32];
	ssize_t n = read_small_at(dfd, "cgroup.procs", buf, sizeof(buf));

	if (n < 0)
		return gone((int)-n) ? 0 : (int)n;
	return n > 0;
}

/* Can the children of the cgroup at dfd show the rule's figure? Memory
 * figures: not where the v2 memory controller is on the cgroup but not
 * given to its children (on hybrid layouts, no v2 memory at all: the v1
 * counterparts, one by one). Pressure and processes: child by child. */
static bool children_show(const struct walk *w, int dfd)
{
	enum victim v = w->c->rule->victim;
	char buf[512];
	ssize_t n;

	if (v != VICTIM_MEMORY && v != VICTIM_GROWTH && v != VICTIM_SWAP)
		return true;
	if (faccessat(dfd, "memory.current", F_OK, 0) < 0)
		return true;
	n = read_small_at(dfd, "cgroup.subtree_control", buf, sizeof(buf));
	if (n < 0)
		return false;
	for (char *p = buf; (p = strstr(p, "memory")); p += 6)
		if ((p == buf || p[-1] == ' ') && (p[6] == '\0' || p[6] == ' ' || p[6] == '\n'))
			return true;
	return false;
}

static void names_free(char **v, size_t n)
{
	while (n)
		free(v[--n]);
	free(v);
}

/* The names of the child cgroups of the cgroup at dfd, malloc'ed, in
 * *names and *count: 0 (none if it is gone), or -errno. */
static int children(int dfd, char ***names, size_t *count)
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *e;
	char **v = NULL;
	size_t n = 0;
	DIR *d;

	*names = NULL;
	*count = 0;
	if (fd < 0)
		return gone(errno) ? 0 : -errno;
	d = fdopendir(fd);
	if (!d) {
		int err = errno;

		close(fd);
		return -err;
	}
	errno = 0;
	while ((e = readdir(d))) {
		char **grown;

		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		grown = realloc(v, (n + 1) * sizeof(*v));
		if (!grown)
			goto fail;
		v = grown;
		if (!(v[n] = strdup(e->d_name)))
			goto fail;
		n++;
		errno = 0;
	}
	if (errno && !gone(errno)) {
		int err = errno;

		names_free(v, n);
		closedir(d);
		return -err;
	}
	closedir(d);
	*names = v;
	*count = n;
	return 0;
fail:
	names_free(v, n);
	closedir(d);
	return -ENOMEM;
}

static bool xattr_on(int dfd, const char *name)
{
	char v[16];
	ssize_t n = fgetxattr(dfd, name, v, sizeof(v) - 1);

	if (n < 0)
		return errno == ERANGE;	/* there, and long */
	v[n] = '\0';
	v[strcspn(v, "\n")] = '\0';
	return strcmp(v, "0") && strcasecmp(v, "no") && strcasecmp(v, "false") && strcasecmp(v, "off");
}

/* An Avoid= or Omit= glob that matched where a delegatee chose the names. */
static void glob_ignored(struct walk *w, enum pref p, const char *glob, const struct trust *t)
{
	if (w->nignored++ >= SHOWN)
		return;
	if (!w->ignored && !(w->ignored = open_memstream(&w->ignored_text, &w->ignored_size)))
		return;
	fprintf(w->ignored, "%s%s=%s on %s (%.*s: uid %u)", w->nignored > 1 ? ", " : "", prefs[p].key, glob,
		w->sub, (int)t->len, w->sub, (unsigned)t->uid);
}

/* The rule's globs and the directory's xattrs: *pref and *reason become
 * the strongest; a new reason is malloc'ed into *own. *t: the trust of
 * the parent, made that of this cgroup. */
static void preference(struct walk *w, int dfd, enum pref *pref, const char **reason, char **own,
		       struct trust *t)
{
	const struct rule *r = w->c->rule;
	const struct globs *globs[PREF_N] = { NULL, &r->prefer, &r->avoid, &r->omit };
	bool owner_ok = !w->other;

	if (t->ok && !owner_ok)
		*t = (struct trust){ .ok = false, .len = w->sublen, .uid = w->uid };
	for (int p = PREF_PREFER; p < PREF_N; p++)
		for (size_t i = 0; i < globs[p]->n && (int)*pref < p; i++) {
			if (fnmatch(globs[p]->v[i], w->sub, FNM_PATHNAME) != 0)
				continue;
			if (p != PREF_PREFER && !t->ok) {
				glob_ignored(w, (enum pref)p, globs[p]->v[i], t);
				continue;
			}
			free(*own);
			if (asprintf(own, "%s=%s", prefs[p].key, globs[p]->v[i]) < 0)
				*own = NULL;
			*pref = (enum pref)p;
			*reason = *own;
		}
	if (!r->victim_xattrs)
		return;
	for (int p = PREF_PREFER; p < PREF_N; p++) {
		if (!xattr_on(dfd, prefs[p].xattr))
			continue;
		if (!owner_ok) {
			char *dir = w->uid != (uid_t)-1 ? walk_path(w) : NULL;

			if (dir)
				log_msg(LOG_PRI_NOTICE,
					"rule %s: %s: %s ignored: the cgroup belongs to uid %u, neither root nor the owner of the watched %s/%s (uid %u)",
					r->name, dir, prefs[p].xattr, (unsigned)w->uid, D.v2, w->c->rel,
					(unsigned)w->owner);
			free(dir);
			continue;
		}
		if ((int)*pref >= p)
			continue;
		free(*own);
		*own = strdup(prefs[p].xattr);
		*pref = (enum pref)p;
		*reason = *own;
	}
}

/* ---- figures ---- */

/* Without v2 memory files (hybrid layouts): the candidate's memory (or
 * swap) from its v1 memory cgroup, where that is the candidate's alone, or
 * not so by its owner's doing (counterpart.c: a shared parent's usage
 * would count someone else's hog), and holds all of it; else, where no v1
 * cgroup can be the candidate's, the sum of its processes' VmRSS (or
 * VmSwap), which belong to it alone. Bytes: 1; 0 unreadable; -EPERM hidden
 * (its owner kept its v1 cgroup from standing for it: the smaller sum of
 * its processes must not, RT1 #2). */
static int v1_memory_of(int dfd, const char *rel, bool swap, uint64_t *v)
{
	char why[PATH_MAX + 512], *v1 = NULL;
	int r = v1_figure_cgroup(rel, &v1, why, sizeof(why));
	uint64_t usage = 0, rss, vmswap;
	bool ok = r == 0 && read_u64_path(v1, "memory.usage_in_bytes", &usage) &&
		  (!swap || read_u64_path(v1, "memory.memsw.usage_in_bytes", v));

	free(v1);
	if (r < 0) {
		log_msg(LOG_PRI_INFO, "%s/%s: its figure is hidden: %s", D.v2, rel, why);
		return r;
	}
	if (r == 0) {
		if (ok)
			*v = !swap ? usage : *v >= usage ? *v - usage : 0;
		return ok;
	}
	if (!procs_memory(dfd, &rss, &vmswap))
		return 0;
	*v = swap ? vmswap : rss;
	return 1;
}

/* memory.current (v2), else v1_memory_of(); *low: memory.low (v2 only,
 * else 0). 1 read, 0 unreadable, -errno hidden. */
static int memory_of(int dfd, const char *rel, uint64_t *cur, uint64_t *low)
{
	*low = 0;
	*cur = 0;
	if (read_number_at(dfd, "memory.current", cur)) {
		if (!read_number_at(dfd, "memory.low", low))
			*low = 0;
		return 1;
	}
	return v1_memory_of(dfd, rel, false, cur);
}

/* memory.swap.current (v2), else v1_memory_of(): the same values. */
static int swap_of(int dfd, const char *rel, uint64_t *v)
{
	if (read_number_at(dfd, "memory.swap.current", v))
		return 1;
	return v1_memory_of(dfd, rel, true, v);
}

/* avg10 of memory.pressure, in hundredths of a percent: 0, or -errno
 * (-ENOENT: no such file, as where cgroup.pressure is 0). */
static int pressure_of(int dfd, bool full, int64_t *v)
{
	char buf[512];
	struct psi_line p;
	ssize_t got;

	*v = 0;
	got = read_small_at(dfd, "memory.pressure", buf, sizeof(buf));
	if (got <= 0)
		return got < 0 ? (int)got : -ENODATA;
	if (!psi_parse(buf, full, &p) || p.avg10 < 0)
		return -EINVAL;
	*v = (int64_t)(p.avg10 * 100 + 0.5);	/* hundredths of a percent */
	return 0;
}

/* The processes of the subtree at dfd, added to *n: 0, or -errno if some
 * part could not be read (a part gone is empty; -ELOOP: deeper than
 * COUNT_DEPTH). */
static int processes_of(int dfd, unsigned depth, int64_t *n)
{
	char buf[8192], **kids;
	size_t nkids;
	ssize_t got;
	int err = 0, fd = openat(dfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return gone(errno) ? 0 : -errno;
	while ((got = read(fd, buf, sizeof(buf))) > 0 || (got < 0 && errno == EINTR))
		for (ssize_t i = 0; i < got; i++)
			*n += buf[i] == '\n';
	if (got < 0 && !gone(errno))
		err = -errno;
	close(fd);
	if (!err)
		err = children(dfd, &kids, &nkids);
	if (err)
		return err;
	for (size_t i = 0; i < nkids && !err; i++) {
		int kfd = openat(dfd, kids[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (kfd < 0) {
			err = gone(errno) ? 0 : -errno;
			continue;
		}
		if (depth < COUNT_DEPTH)
			err = processes_of(kfd, depth + 1, n);
		else if (cg_populated(kfd) != 0)
			err = -ELOOP;
		close(kfd);
	}
	names_free(kids, nkids);
	return err;
}

/* Could the daemon's own shortage (files, memory) have made a figure
 * unreadable? Then not the cgroup's doing: a delegatee who exhausts them
 * must not make a neighbour rank first. */
static bool shortage(int err)
{
	return err == -EMFILE || err == -ENFILE || err == -ENOMEM || err == -ENOBUFS;
}

/* The protection the kernel grants the cgroup at dfd (v2 memory.low,
 * bounded by its parent's: protection.c); 0 without memory.current. */
static uint64_t protection(int dfd, struct prot p)
{
	uint64_t usage, low;

	if (!read_number_at(dfd, "memory.current", &usage))
		return 0;
	if (!read_number_at(dfd, "memory.low", &low))
		low = 0;
	return low_effective(usage, low, p.parent_elow, p.siblings);
}

/* The sum of the claims (min(usage, memory.low)) of the child cgroups
 * kids of the cgroup at dfd, which siblings share the parent's protection
 * by. A child whose memory.low cannot be read claims its usage, one that
 * cannot be opened everything: more claims, smaller shares. */
static uint64_t claims(int dfd, char *const *kids, size_t nkids)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < nkids; i++) {
		int kfd = openat(dfd, kids[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		uint64_t usage, low, claim = 0;

		if (kfd < 0)
			claim = gone(errno) ? 0 : UINT64_MAX;
		else if (read_number_at(kfd, "memory.current", &usage))
			claim = read_number_at(kfd, "memory.low", &low) && low < usage ? low : usage;
		if (kfd >= 0)
			close(kfd);
		sum = claim > UINT64_MAX - sum ? UINT64_MAX : sum + claim;
	}
	return sum;
}

static int base_cmp(const void *a, const void *b)
{
	return strcmp(((const struct base_ent *)a)->rel, ((const struct base_ent *)b)->rel);
}

static int64_t growth_of(const struct cg *c, const char *rel, uint64_t now_bytes)
{
	const struct victim_base *b = c->vbase;
	struct base_ent key = { .rel = (char *)rel }, *e;
	uint64_t elapsed;

	if (!b)
		return 0;
	elapsed = now_ms() - b->t;
	if (elapsed < 1)
		elapsed = 1;
	e = b->n ? bsearch(&key, b->v, b->n, sizeof(*b->v), base_cmp) : NULL;
	return ((int64_t)now_bytes - (int64_t)(e ? e->memory : 0)) * 1000 / (int64_t)elapsed;
}

/* The figures of k, the cgroup at dfd; k->unknown if its figure cannot
 * be read, k->hidden too if that is through its own files (what its
 * owner or c's wrote there, or the shape of its subtree): memory and swap
 * come from files the parent's owner enables (v2) or from v1 cgroups
 * found for it, never hidden. Memory less the protection the kernel
 * grants (w->elow), not the candidate's own memory.low. */
static void measure(const struct walk *w, int dfd, struct cand *k)
{
	struct cg *c = w->c;
	uint64_t low, swap = 0;
	int64_t n = 0;
	bool ok = false;
	int err = 0, mem = memory_of(dfd, k->rel, &k->cur, &low);

	k->cur_ok = mem > 0;
	k->memory = k->cur_ok && k->cur > w->elow ? k->cur - w->elow : 0;
	switch (c->rule->victim) {
	case VICTIM_MEMORY:
		k->figure = (int64_t)k->memory;
		k->memory = 0;	/* no next key: the path decides a tie */
		ok = k->cur_ok;
		err = mem < 0 ? mem : 0;
		break;
	case VICTIM_GROWTH:
		k->figure = w->prefs ? growth_of(c, k->rel, k->cur) : 0;
		ok = k->cur_ok;
		err = mem < 0 ? mem : 0;
		break;
	case VICTIM_PRESSURE:
		err = pressure_of(dfd, c->rule->pressure_full, &k->figure);
		ok = !err;
		break;
	case VICTIM_PROCESSES:
		err = processes_of(dfd, 0, &n);
		ok = !err;
		k->figure = n;
		break;
	case VICTIM_SWAP:
		err = swap_of(dfd, k->rel, &swap);
		ok = err > 0;
		err = err < 0 ? err : 0;
		k->figure = (int64_t)swap;
		break;
	case VICTIM_SELF:
		ok = true;
		break;
	}
	k->unknown = !ok;
	k->hidden = !ok && err && !shortage(err);
	if (!ok)
		k->figure = 0;
}

/* ---- owners ---- */

/* The owner a leaf of root's or c's owner's is ranked with: the uid most
 * of its processes run as (real uid), root's and c's owner's not counted
 * (a session scope of root's holding a user's processes is that user's;
 * their layout among their own cgroups is theirs), a tie going to the
 * lowest uid; (uid_t)-1 if there is none, or cgroup.procs cannot be
 * read. A user cannot add processes to a cgroup they cannot write, nor
 * give a process a uid other than their own. */
static uid_t procs_uid(const struct walk *w, int dfd)
{
	struct uid_count {
		uid_t uid;
		size_t n;
	} *v = NULL, *grown;
	size_t nv = 0, best = 0;
	bool failed = false;
	uid_t ret = (uid_t)-1;
	int pid, fd = openat(dfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;

	if (!f) {
		if (fd >= 0)
			close(fd);
		return ret;
	}
	while (fscanf(f, "%d", &pid) == 1) {
		uid_t u[3], uid = proc_uids(pid, u) == 0 ? u[0] : (uid_t)-1;
		size_t i = 0;

		if (uid == (uid_t)-1 || uid == 0 || uid == w->owner)
			continue;
		while (i < nv && v[i].uid != uid)
			i++;
		if (i == nv) {
			if (!(grown = realloc(v, (nv + 1) * sizeof(*v)))) {
				failed = true;
				break;
			}
			v = grown;
			v[nv++] = (struct uid_count){ .uid = uid, .n = 0 };
		}
		v[i].n++;
	}
	fclose(f);
	for (size_t i = 0; i < nv && !failed; i++)
		if (v[i].n > best || (v[i].n == best && v[i].uid < ret)) {
			best = v[i].n;
			ret = v[i].uid;
		}
	free(v);
	return ret;
}

/* ---- the walk ---- */

static void cand_free(struct cand *k)
{
	free(k->rel);
	free(k->reason);
}

/* Drop the candidates from start on: an ancestor takes them. */
static void drop(struct walk *w, size_t start)
{
	while (w->n > start)
		cand_free(&w->v[--w->n]);
}

/* The cgroup being walked as a candidate, measured at dfd (-1: it cannot
 * be read, its figure unknown). */
static int add(struct walk *w, int dfd, enum pref pref, const char *reason, const char *reason_at,
	       const char *whole)
{
	struct cand *k;
	size_t cl = strlen(w->c->rel);

	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 16;
		struct cand *grown = realloc(w->v, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		w->v = grown;
		w->cap = cap;
	}
	k = &w->v[w->n];
	*k = (struct cand){ .pref = pref, .whole = whole, .uid = w->uid, .other = w->other };
	if (w->sublen ? asprintf(&k->rel, "%s/%s", w->c->rel, w->sub) < 0 : !(k->rel = strdup(w->c->rel)))
		return -ENOMEM;
	k->sub = k->rel + cl + (w->sublen ? 1 : 0);
	if (reason && ((strcmp(reason_at, k->sub) ? asprintf(&k->reason, "%s on %s", reason, reason_at)
						  : asprintf(&k->reason, "%s", reason)) < 0)) {
		free(k->rel);
		return -ENOMEM;
	}
	if (pref != PREF_OMIT) {
		if (dfd >= 0)
			measure(w, dfd, k);
		else
			k->unknown = true;
	}
	k->key = (uid_t)-1;
	if (pref != PREF_OMIT && w->prefs && w->sublen) {
		if (w->other)
			k->key = w->uid;
		else if (!whole && dfd >= 0)
			k->by_procs = (k->key = procs_uid(w, dfd)) != (uid_t)-1;
	}
	w->n++;
	return 0;
}

/* Who owns the cgroup at fd (for c, c's owner): w->uid, and w->other if
 * neither root nor c's owner (or it cannot be told). */
static void owner_of(struct walk *w, int fd)
{
	struct stat st;

	w->uid = fd >= 0 && fstat(fd, &st) == 0 ? st.st_uid : (uid_t)-1;
	w->other = w->uid == (uid_t)-1 || (w->uid != 0 && w->uid != w->owner);
}

/* Why another owner's cgroup is taken whole (figure_text names the uid) */
static const char other_whole[] = "the subtree of uid";

/* The cgroup name (below pfd; for c, its path) and below it, depth below
 * c: 1 if populated (its candidates added), UP if populated but its path
 * is too long (its parent must take it), 0 if empty or gone, -errno (for
 * c only, or out of memory). p: the protection of its parent.
 *
 * The walk goes down only through cgroups of root or of c's owner: a
 * cgroup of anyone else (a delegatee) is one candidate with its whole
 * subtree, whatever its shape; else a user who spreads a hog over many
 * small leaves, or hides it in a deep one, could make a neighbour's
 * cgroup the largest (cgkilld.conf(5), "ranking per owner"). */
/* Why the trusted cgroup at fd, depth levels below the watched one, is
 * one candidate taken whole rather than walked into; NULL if it is not.
 * Its child cgroups are listed in kids. */
static const char *whole_reason(struct walk *w, int fd, unsigned depth, char ***kids, size_t *nkids)
{
	const char *why = kernel_whole(fd);
	char *dir;
	int err;

	if (!why && depth >= MAX_DEPTH)
		why = "more than 64 levels below the watched cgroup";
	if (!why && (err = -children(fd, kids, nkids)) > 0) {
		dir = walk_path(w);
		log_msg(LOG_PRI_ERR, "rule %s: %s: cannot list its cgroups: %s", w->c->rule->name,
			dir ? dir : w->sub, strerror(err));
		free(dir);
		why = "its child cgroups cannot be listed";
	}
	if (!why && *nkids && own_processes(fd) != 0)
		why = "processes of its own beside child cgroups";
	if (!why && *nkids && !children_show(w, fd))
		why = "memory is not in its cgroup.subtree_control";
	return why;
}

/* walk()'s cgroup whose cgroup.events cannot be read (err): logged; below
 * the watched cgroup, a candidate of unknown figure and owner. */
static int unreadable(struct walk *w, int err, unsigned depth, enum pref pref, const char *reason,
		      const char *reason_at)
{
	char *dir = walk_path(w);

	log_msg(LOG_PRI_ERR, "rule %s: %s: cannot read cgroup.events: %s", w->c->rule->name,
		dir ? dir : w->sub, strerror(err));
	free(dir);
	if (!depth)
		return -err;
	owner_of(w, -1);
	return too_long(w) ? UP : add(w, -1, pref, reason, reason_at, "it cannot be read") < 0 ? -ENOMEM : 1;
}

static int walk(struct walk *w, int pfd, const char *name, unsigned depth, enum pref pref,
		const char *reason, const char *reason_at, struct trust t, struct prot p)
{
	size_t keep = w->sublen, start = w->n;
	char *own = NULL, *at = NULL, **kids = NULL;
	const char *why = NULL;
	size_t nkids = 0;
	bool any = false, up = false;
	uint64_t elow = 0;
	uid_t uid = (uid_t)-1;
	bool other = true;
	int fd, ret;

	if (depth && sub_push(w, name) < 0)
		return -ENOMEM;
	fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ret = fd < 0 ? -errno : cg_populated(fd);
	if (ret < 0 && gone(-ret))
		ret = 0;
	if (ret < 0) {
		ret = unreadable(w, -ret, depth, pref, reason, reason_at);
		goto out;
	}
	if (ret == 0)
		goto out;
	if (depth && too_long(w)) {
		ret = UP;
		goto out;
	}
	owner_of(w, fd);
	w->other &= depth > 0;
	uid = w->uid;
	other = w->other;
	elow = protection(fd, p);
	if (depth && w->prefs) {
		enum pref before = pref;

		preference(w, fd, &pref, &reason, &own, &t);
		if (pref != before) {
			reason_at = at = strdup(w->sub);
			if (!at) {
				ret = -ENOMEM;
				goto out;
			}
		}
	}
	if (pref == PREF_OMIT)
		goto candidate;
	if (w->other) {
		/* another owner's: one candidate, not walked into */
		if (children(fd, &kids, &nkids) < 0 || nkids)
			why = other_whole;
		goto candidate;
	}
	why = whole_reason(w, fd, depth, &kids, &nkids);
	if (!why && nkids)
		p = (struct prot){ .parent_elow = elow, .siblings = elow ? claims(fd, kids, nkids) : 0 };
	for (size_t i = 0; !why && i < nkids; i++) {
		int r = walk(w, fd, kids[i], depth + 1, pref, reason, reason_at, t, p);

		if (r < 0) {
			ret = r;
			goto out;
		}
		up |= r == UP;
		any |= r > 0;
	}
	if (why || !any)
		goto candidate;
	if (up) {
		why = "a cgroup below it has a path too long to name";
	} else if (depth) {
		/* a figure its cgroup hides ranks first there, and one that
		 * cannot be read in another owner's cgroup stays theirs: taking
		 * the ancestor would take that owner's neighbours with it */
		for (size_t i = start; i < w->n && !why; i++)
			if (w->v[i].unknown && !w->v[i].hidden && !w->v[i].other)
				why = "a figure below it cannot be read";
	}
	if (!why) {
		ret = 1;
		goto out;
	}
	drop(w, start);
candidate:
	/* the walks below changed them */
	w->uid = uid;
	w->other = other;
	w->elow = elow;
	ret = add(w, fd, pref, reason, reason_at, why) < 0 ? -ENOMEM : 1;
out:
	if (fd >= 0)
		close(fd);
	names_free(kids, nkids);
	free(own);
	free(at);
	sub_pop(w, keep);
	return ret;
}

static void walk_free(struct walk *w)
{
	for (size_t i = 0; i < w->n; i++)
		cand_free(&w->v[i]);
	free(w->v);
	free(w->sub);
	if (w->ignored)
		fclose(w->ignored);
	free(w->ignored_text);
	w->v = NULL;
	w->sub = NULL;
	w->ignored = NULL;
	w->ignored_text = NULL;
}

/* The candidates of c, in the order found, measured. */
static int collect(struct walk *w, struct cg *c, bool with_prefs)
{
	char dir[PATH_MAX];
	struct stat st;
	int r;

	*w = (struct walk){ .c = c, .prefs = with_prefs };
	if ((size_t)snprintf(dir, sizeof(dir), "%s/%s", D.v2, c->rel) >= sizeof(dir))
		return -ENAMETOOLONG;
	if (stat(dir, &st) < 0)
		return -errno;
	w->owner = st.st_uid;
	w->base = strlen(dir);
	r = walk(w, AT_FDCWD, dir, 0, PREF_NONE, NULL, "", (struct trust){ .ok = true },
		 (struct prot){ .parent_elow = UINT64_MAX });
	if (r < 0)
		walk_free(w);
	return r < 0 ? r : 0;
}

/* Within a group: a figure its cgroup hides first (fail closed: only that
 * cgroup's owner could hide it, and only they pay), then the figures
 * read, then those that could not be read for another reason (a v1
 * counterpart not its own, the daemon short of files): fail closed there
 * would let whatever made them unreadable choose whom. */
static int known_order(const struct cand *k)
{
	return k->hidden ? 0 : k->unknown ? 2 : 1;
}

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (group_order(x->pref) != group_order(y->pref))
		return group_order(x->pref) < group_order(y->pref) ? -1 : 1;
	if (known_order(x) != known_order(y))
		return known_order(x) < known_order(y) ? -1 : 1;
	if (x->figure != y->figure)
		return x->figure > y->figure ? -1 : 1;
	if (x->memory != y->memory)
		return x->memory > y->memory ? -1 : 1;
	return strcmp(x->rel, y->rel);
}

/* ---- per owner ---- */

/* One place in the order: a candidate, or all the candidates of one
 * owner (cand.key) in one group (preferred, neither, avoided), ranked as
 * one with their figures summed, so that a user's load spread over
 * many cgroups of their own below a trusted cgroup (a job launcher's
 * delegations, session scopes) weighs what it all weighs. */
struct entry {
	struct cand k;		/* the sums; rel, sub, reason: its first member's */
	const struct cand **m;	/* its members, best first */
	size_t n;
};

static int64_t add_s64(int64_t a, int64_t b)
{
	if (b > 0 && a > INT64_MAX - b)
		return INT64_MAX;
	if (b < 0 && a < INT64_MIN - b)
		return INT64_MIN;
	return a + b;
}

/* The figures of e, from its members: the figures read, summed (pressure
 * too: the owner's cgroups' stalls add up, at least as much as its
 * largest); hidden if one of them is (its owner's doing, ranks first);
 * unknown, ranking after the figures read, only if none can be read, so
 * that one cgroup an owner makes unreadable does not lift the others. */
static void entry_sum(struct entry *e)
{
	bool known = false;

	e->k = *e->m[0];
	e->k.figure = 0;
	e->k.memory = 0;
	if (e->n > 1)
		e->k.whole = NULL;
	for (size_t i = 0; i < e->n; i++) {
		const struct cand *k = e->m[i];

		if (!k->unknown) {
			e->k.figure = add_s64(e->k.figure, k->figure);
			known = true;
		}
		e->k.memory = k->memory > UINT64_MAX - e->k.memory ? UINT64_MAX : e->k.memory + k->memory;
		e->k.hidden |= k->hidden;
		e->k.cur_ok |= k->cur_ok;
	}
	e->k.unknown = e->k.hidden || !known;
}

static int entry_cmp(const void *a, const void *b)
{
	return cand_cmp(&((const struct entry *)a)->k, &((const struct entry *)b)->k);
}

static void entries_free(struct entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(e[i].m);
	free(e);
}

/* The candidates v (sorted by cand_cmp) as the entries of the order,
 * sorted: those of one owner and group together, members best first.
 * Returns their count, or -ENOMEM. */
static int entries_of(const struct cand *v, size_t n, struct entry **out)
{
	struct entry *e = calloc(n ? n : 1, sizeof(*e));
	size_t ne = 0;

	*out = NULL;
	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		const struct cand **grown;

		if (v[i].key != (uid_t)-1)
			while (j < ne && !(e[j].k.key == v[i].key && e[j].k.pref == v[i].pref))
				j++;
		else
			j = ne;
		if (j == ne) {
			e[ne].k = v[i];	/* its key and group, until entry_sum */
			ne++;
		}
		grown = realloc(e[j].m, (e[j].n + 1) * sizeof(*grown));
		if (!grown) {
			entries_free(e, ne);
			return -ENOMEM;
		}
		e[j].m = grown;
		e[j].m[e[j].n++] = &v[i];
	}
	for (size_t j = 0; j < ne; j++)
		entry_sum(&e[j]);
	if (ne)
		qsort(e, ne, sizeof(*e), entry_cmp);
	*out = e;
	return (int)ne;
}

/* ---- the words ---- */

static void bytes_text(FILE *f, double v)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned u = 0;
	double a = v < 0 ? -v : v;

	while (a >= 1024 && u + 1 < sizeof(units) / sizeof(*units)) {
		a /= 1024;
		v /= 1024;
		u++;
	}
	fprintf(f, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

static const char *const figure_names[] = {
	[VICTIM_SELF] = "", [VICTIM_MEMORY] = "memory", [VICTIM_GROWTH] = "growth",
	[VICTIM_PRESSURE] = "pressure", [VICTIM_PROCESSES] = "processes", [VICTIM_SWAP] = "swap",
};

static void whole_text(FILE *f, const struct cand *k)
{
	if (k->whole == other_whole)
		fprintf(f, "%s %u", other_whole, (unsigned)k->uid);
	else
		fputs(k->whole, f);
}

static void figure_text(FILE *f, enum victim v, const struct cand *k)
{
	if (k->unknown) {
		fprintf(f, "%s unknown", figure_names[v]);
		if (v != VICTIM_MEMORY && k->cur_ok) {
			fputs(", memory ", f);
			bytes_text(f, (double)k->memory);
		}
		goto whole;
	}
	switch (v) {
	case VICTIM_MEMORY:
		fputs("memory ", f);
		bytes_text(f, (double)k->figure);
		break;
	case VICTIM_GROWTH:
		fputs("growth ", f);
		if (k->figure >= 0)
			fputc('+', f);
		bytes_text(f, (double)k->figure);
		fputs("/s, memory ", f);
		bytes_text(f, (double)k->memory);
		break;
	case VICTIM_PRESSURE:
		fprintf(f, "pressure %lld.%02lld%%", (long long)(k->figure / 100), (long long)(k->figure % 100));
		break;
	case VICTIM_PROCESSES:
		fprintf(f, "%lld process(es)", (long long)k->figure);
		break;
	case VICTIM_SWAP:
		fputs("swap ", f);
		bytes_text(f, (double)k->figure);
		break;
	case VICTIM_SELF:
		break;
	}
	if (v != VICTIM_MEMORY && v != VICTIM_GROWTH) {
		fputs(", memory ", f);
		bytes_text(f, (double)k->memory);
	}
whole:
	if (k->whole) {
		fputs("; whole: ", f);
		whole_text(f, k);
	}
}

static const char *superlative(enum victim v)
{
	switch (v) {
	case VICTIM_GROWTH:
		return "fastest growing";
	case VICTIM_PRESSURE:
		return "most stalled";
	case VICTIM_PROCESSES:
		return "most processes";
	case VICTIM_SWAP:
		return "most swap";
	default:
		return "largest";
	}
}

static const char *shown(const struct cand *k)
{
	return *k->sub ? k->sub : ".";
}

/* The name of an entry: its cgroup, or "uid N" for an owner's cgroups */
static void name_text(FILE *f, const struct entry *e)
{
	if (e->n > 1)
		fprintf(f, "uid %u", (unsigned)e->k.key);
	else
		fputs(shown(&e->k), f);
}

/* "; the 8 cgroups of uid N, summed: a1, a2, ... and 3 more" */
static void members_text(FILE *f, const struct entry *e)
{
	if (e->n < 2)
		return;
	fprintf(f, "; the %zu cgroups of uid %u, summed: ", e->n, (unsigned)e->k.key);
	for (size_t i = 0; i < e->n && i < SHOWN; i++)
		fprintf(f, "%s%s", i ? ", " : "", shown(e->m[i]));
	if (e->n > SHOWN)
		fprintf(f, " and %zu more", e->n - SHOWN);
}

/* "victim b (memory 150.0 MiB): the largest of 3 candidates; then ..." */
static void why_text(FILE *f, struct cg *c, const struct entry *v, size_t n)
{
	enum victim vk = c->rule->victim;
	const struct cand *top = &v[0].k;
	size_t same = 0, avoided = 0;

	for (size_t i = 0; i < n; i++) {
		same += v[i].k.pref == top->pref;
		avoided += v[i].k.pref == PREF_AVOID;
	}
	fputs("victim ", f);
	name_text(f, &v[0]);
	fputs(" (", f);
	figure_text(f, vk, top);
	members_text(f, &v[0]);
	fputs("): ", f);
	if (n == 1)
		fputs("the only candidate", f);
	else if (top->hidden)
		fprintf(f, "its %s cannot be read, which ranks first (fail closed)%s, among %zu candidates",
			figure_names[vk], top->pref == PREF_PREFER ? " among the preferred"
					  : top->pref == PREF_AVOID ? " among the avoided, all avoided" : "",
			n);
	else if (top->unknown)
		fprintf(f, "no %s can be read%s, first by memory, among %zu candidates", figure_names[vk],
			top->pref == PREF_PREFER ? " among the preferred"
			: top->pref == PREF_AVOID ? " among the avoided, all avoided" : "",
			n);
	else if (top->pref == PREF_PREFER && same == 1)
		fprintf(f, "preferred (%s), the only one among %zu candidates", top->reason, n);
	else if (top->pref == PREF_PREFER)
		fprintf(f, "preferred (%s), the %s of %zu preferred among %zu candidates", top->reason,
			superlative(vk), same, n);
	else if (top->pref == PREF_AVOID)
		fprintf(f, "avoided (%s), the %s of %zu candidates, all avoided", top->reason, superlative(vk), n);
	else if (avoided && same == 1)
		fprintf(f, "the only one not avoided among %zu candidates", n);
	else if (avoided)
		fprintf(f, "the %s of %zu not avoided among %zu candidates", superlative(vk), same, n);
	else
		fprintf(f, "the %s of %zu candidates", superlative(vk), n);
	if (n > 1 && v[1].k.pref == top->pref && known_order(&v[1].k) == known_order(top) &&
	    v[1].k.figure == top->figure) {
		fputs(", tied with ", f);
		name_text(f, &v[1]);
		fprintf(f, ", first by %s", v[1].k.memory != top->memory ? "memory" : "path");
	}
	for (size_t i = 1; i < n && i < SHOWN; i++) {
		fputs(i == 1 ? "; then " : ", ", f);
		name_text(f, &v[i]);
		fputs(" (", f);
		figure_text(f, vk, &v[i].k);
		members_text(f, &v[i]);
		if (v[i].k.pref != PREF_NONE)
			fprintf(f, "; %s: %s", prefs[v[i].k.pref].adjective, v[i].k.reason);
		fputc(')', f);
	}
	if (n > SHOWN)
		fprintf(f, " and %zu more", n - SHOWN);
}

/* "; omitted: d (Omit=d), e (user.cgkill_omit)" */
static void omitted_text(FILE *f, const struct entry *o, size_t n)
{
	for (size_t i = 0; i < n && i < SHOWN; i++)
		fprintf(f, "%s%s (%s)", i ? ", " : "; omitted: ", shown(&o[i].k), o[i].k.reason);
	if (n > SHOWN)
		fprintf(f, " and %zu more", n - SHOWN);
}

#define JSON_MEMBERS 16	/* cgroups named in an entry's "cgroups" */

static void json_cands(FILE *f, struct cg *c, const struct entry *v, size_t n)
{
	static const char *const units[] = {
		[VICTIM_SELF] = "", [VICTIM_MEMORY] = "bytes", [VICTIM_GROWTH] = "bytes/s",
		[VICTIM_PRESSURE] = "percent", [VICTIM_PROCESSES] = "processes", [VICTIM_SWAP] = "bytes",
	};
	enum victim vk = c->rule->victim;

	fputc('[', f);
	for (size_t i = 0; i < n && i < SHOWN; i++) {
		const struct cand *k = &v[i].k;
		char path[PATH_MAX];
		uint64_t memory = vk == VICTIM_MEMORY ? (uint64_t)k->figure : k->memory;

		snprintf(path, sizeof(path), "%s/%s", D.v2, k->rel);
		fputs(i ? ", {\"cgroup\": " : "{\"cgroup\": ", f);
		json_str(f, path);
		if (k->unknown)
			fputs(", \"figure\": null", f);
		else if (vk == VICTIM_PRESSURE)
			fprintf(f, ", \"figure\": %lld.%02lld", (long long)(k->figure / 100),
				(long long)(k->figure % 100));
		else
			fprintf(f, ", \"figure\": %lld", (long long)k->figure);
		fprintf(f, ", \"unit\": \"%s\", \"memory\": %llu, \"group\": \"%s\", \"reason\": ",
			units[vk], (unsigned long long)memory, prefs[k->pref].group);
		if (k->reason)
			json_str(f, k->reason);
		else
			fputs("null", f);
		fputs(", \"whole\": ", f);
		if (v[i].n > 1) {
			fprintf(f, "\"the cgroups of uid %u\"", (unsigned)k->key);
		} else if (k->whole == other_whole) {
			char text[64];

			snprintf(text, sizeof(text), "%s %u", other_whole, (unsigned)k->uid);
			json_str(f, text);
		} else if (k->whole) {
			json_str(f, k->whole);
		} else {
			fputs("null", f);
		}
		/* the owner it is ranked with, and its cgroups (all acted on) */
		if (k->key != (uid_t)-1)
			fprintf(f, ", \"owner\": %u", (unsigned)k->key);
		else
			fputs(", \"owner\": null", f);
		fprintf(f, ", \"count\": %zu, \"cgroups\": [", v[i].n);
		for (size_t j = 0; j < v[i].n && j < JSON_MEMBERS; j++) {
			snprintf(path, sizeof(path), "%s/%s", D.v2, v[i].m[j]->rel);
			if (j)
				fputs(", ", f);
			json_str(f, path);
		}
		fputs("]}", f);
	}
	fputc(']', f);
}

/* ---- the interface ---- */

int victim_rank(struct cg *c, char ***rels, int **groups, char **why, char **json)
{
	struct walk w;
	struct entry *e = NULL;
	size_t n = 0, nrels = 0, len;
	int ne, r;
	FILE *f;

	*rels = NULL;
	*groups = NULL;
	*why = *json = NULL;
	r = collect(&w, c, true);
	if (r < 0)
		return r;
	if (w.nignored && w.ignored && fflush(w.ignored) == 0)
		log_msg(LOG_PRI_NOTICE,
			"rule %s: %s/%s: %u Avoid=/Omit= match(es) ignored where a directory on the way belongs to neither root nor the owner of the watched cgroup (uid %u): %s%s",
			c->rule->name, D.v2, c->rel, w.nignored, (unsigned)w.owner, w.ignored_text,
			w.nignored > SHOWN ? " and more" : "");
	if (w.n)	/* qsort(NULL, 0) is undefined (no candidate: c empty) */
		qsort(w.v, w.n, sizeof(*w.v), cand_cmp);	/* the omitted last, by path */
	ne = entries_of(w.v, w.n, &e);
	if (ne < 0) {
		walk_free(&w);
		return ne;
	}
	while (n < (size_t)ne && e[n].k.pref != PREF_OMIT)
		nrels += e[n++].n;
	f = open_memstream(why, &len);
	if (f) {
		if (n)
			why_text(f, c, e, n);
		else
			fputs("no candidate", f);
		omitted_text(f, e + n, (size_t)ne - n);
		fclose(f);
	}
	if (n == 0) {
		entries_free(e, (size_t)ne);
		walk_free(&w);
		return 0;
	}
	f = open_memstream(json, &len);
	if (f) {
		json_cands(f, c, e, n);
		fclose(f);
	}
	/* every cgroup of each entry, the entries in order */
	*rels = calloc(nrels, sizeof(**rels));
	*groups = calloc(nrels, sizeof(**groups));
	for (size_t i = 0, k = 0; *rels && *groups && i < n; i++)
		for (size_t j = 0; j < e[i].n; j++, k++) {
			struct cand *m = &w.v[e[i].m[j] - w.v];

			(*rels)[k] = m->rel;
			(*groups)[k] = (int)i;
			m->rel = NULL;
		}
	entries_free(e, (size_t)ne);
	walk_free(&w);
	if (!*rels || !*groups || !*why || !*json) {
		victim_free(*rels, *rels ? (int)nrels : 0);
		free(*groups);
		free(*why);
		free(*json);
		*rels = NULL;
		*groups = NULL;
		*why = *json = NULL;
		return -ENOMEM;
	}
	return (int)nrels;
}

void victim_free(char **rels, int n)
{
	for (int i = 0; i < n; i++)
		free(rels[i]);
	free(rels);
}

void victim_forget(struct cg *c)
{
	struct victim_base *b = c->vbase;

	if (!b)
		return;
	for (size_t i = 0; i < b->n; i++)
		free(b->v[i].rel);
	free(b->v);
	free(b);
	c->vbase = NULL;
}

void victim_episode_start(struct cg *c)
{
	struct victim_base *b;
	struct walk w;

	victim_forget(c);
	if (c->rule->victim != VICTIM_GROWTH || collect(&w, c, false) < 0)
		return;
	b = calloc(1, sizeof(*b));
	if (b && w.n)
		b->v = calloc(w.n, sizeof(*b->v));
	if (!b || (w.n && !b->v)) {
		free(b);
		walk_free(&w);
		return;
	}
	b->t = now_ms();
	/* a candidate whose memory cannot be read grows from 0 */
	for (size_t i = 0; i < w.n; i++) {
		if (!w.v[i].cur_ok)
			continue;
		b->v[b->n].memory = w.v[i].cur;
		b->v[b->n++].rel = w.v[i].rel;
		w.v[i].rel = NULL;
	}
	if (b->n)
		qsort(b->v, b->n, sizeof(*b->v), base_cmp);
	c->vbase = b;
	walk_free(&w);
}
