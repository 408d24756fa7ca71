/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Victim choice: whom a rule with Victim= other than self acts on, among
 * the candidates below the cgroup it matched (c). cgkilld.conf(5),
 * "VICTIM CHOICE", says the same for users.
 *
 * Candidates. The walk goes down from c through populated cgroups only
 * (cgroup.events "populated" counts the whole subtree, so an empty
 * subtree costs one read):
 *  - a populated cgroup none of whose child cgroups is populated is a
 *    candidate (a leaf, or a cgroup whose processes are all its own);
 *  - a populated cgroup with memory.oom.group 1, or of type "domain
 *    threaded", is one candidate for its whole subtree and is not walked
 *    into (the kernel's unit of an OOM kill; threaded cgroups cannot be
 *    killed one by one);
 *  - c itself is a candidate only when nothing below it can be: it has
 *    memory.oom.group 1, or no child of it is populated (no children, or
 *    its processes are all its own);
 *  - processes that sit in a cgroup beside populated child cgroups
 *    (possible where no controller is enabled) are in no candidate:
 *    only Victim=self reaches them.
 * Deeper than MAX_DEPTH below c nothing is a candidate (nor are the
 * cgroups above it, which would take it along).
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
 * that way is logged with the owners. xattrs on c itself are not read
 * (they would choose among nothing).
 *
 * Order: omitted candidates out; the preferred first, then the others,
 * the avoided last; within each, the figure descending, then memory
 * descending (for every figure but memory itself), then the path
 * ascending (strcmp: byte order). Deterministic, so tests can say whom.
 *
 * Figures (victim name: what):
 *  memory         memory.current - memory.low, at least 0; v1: the
 *                 memory.usage_in_bytes of the v1 counterpart (no low)
 *  memory-growth  (memory now - memory at the episode's start) per
 *                 second, memory being memory.current (v1:
 *                 usage_in_bytes); a candidate unknown at the start grew
 *                 from 0; without a start (no episode, or a trigger
 *                 without episodes) every growth is 0 and memory decides
 *  pressure       avg10 of the candidate's memory.pressure, its "full"
 *                 line where the rule's PressureLimit= is full, else
 *                 "some", in hundredths of a percent; 0 without the file
 *  processes      the processes of the subtree (its cgroup.procs lines):
 *                 processes, not pids.current's tasks (threads count
 *                 there), and exact where a v1 counterpart may be shared
 *  swap           memory.swap.current; v1: memsw.usage_in_bytes -
 *                 usage_in_bytes; 0 without the files
 * A figure that cannot be read counts as 0.
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
#define SHOWN 5		/* candidates named in why and json */

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
	int64_t figure;
	uint64_t memory;	/* the next key (growth, pressure, processes, swap) */
};

struct walk {
	struct cg *c;
	bool prefs;		/* read preferences (not for the episode's base) */
	uid_t owner;		/* of c */
	struct cand *v;
	size_t n, cap;
};

struct victim_base {
	uint64_t t;		/* ms */
	size_t n;
	struct base_ent {
		char *rel;
		uint64_t memory;
	} *v;			/* sorted by rel */
};

static int cg_path(char *buf, size_t size, const char *rel)
{
	return (size_t)snprintf(buf, size, "%s/%s", D.v2, rel) < size ? 0 : -ENAMETOOLONG;
}

/* A small file of dir (one read, as the triggers read theirs): bytes
 * read, or -errno. */
static ssize_t slurp(const char *dir, const char *name, char *buf, size_t size)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	n = read_at0(fd, buf, size);
	close(fd);
	return n;
}

/* A number file ("max": UINT64_MAX). */
static bool read_u64(const char *dir, const char *name, uint64_t *v)
{
	char buf[64], *end;

	if (slurp(dir, name, buf, sizeof(buf)) <= 0)
		return false;
	if (!strncmp(buf, "max", 3)) {
		*v = UINT64_MAX;
		return true;
	}
	errno = 0;
	*v = strtoull(buf, &end, 10);
	return !errno && end != buf;
}

/* 1, 0 (empty or gone), or -errno: a cgroup that cannot be read must not
 * pass for empty, or its parent would become a candidate. */
static int populated(const char *dir)
{
	char buf[256];
	uint64_t v;
	ssize_t n = slurp(dir, "cgroup.events", buf, sizeof(buf));

	if (n < 0)
		return n == -ENOENT ? 0 : (int)n;
	return n > 0 && kv_get(buf, "populated", &v) && v;
}

/* Taken as a whole: memory.oom.group 1, or the root of a threaded subtree. */
static bool whole(const char *dir)
{
	char buf[64];
	uint64_t v;

	return (read_u64(dir, "memory.oom.group", &v) && v == 1) ||
	       (slurp(dir, "cgroup.type", buf, sizeof(buf)) > 0 && !strncmp(buf, "domain threaded", 15));
}

static void names_free(char **v, size_t n)
{
	while (n)
		free(v[--n]);
	free(v);
}

/* The names of dir's child cgroups, malloc'ed, in *names and *count:
 * 0 (none if dir is gone), or -errno. */
static int children(const char *dir, char ***names, size_t *count)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **v = NULL;
	size_t n = 0;

	*names = NULL;
	*count = 0;
	if (!d)
		return errno == ENOENT ? 0 : -errno;
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

static bool xattr_on(const char *dir, const char *name)
{
	char v[16];
	ssize_t n = getxattr(dir, name, v, sizeof(v) - 1);

	if (n < 0)
		return errno == ERANGE;	/* there, and long */
	v[n] = '\0';
	v[strcspn(v, "\n")] = '\0';
	return strcmp(v, "0") && strcasecmp(v, "no") && strcasecmp(v, "false") && strcasecmp(v, "off");
}

/* The rule's globs and the directory's xattrs: *pref and *reason become
 * the strongest; a new reason is malloc'ed into *own. */
static void preference(struct walk *w, const char *dir, const char *sub, enum pref *pref,
		       const char **reason, char **own)
{
	const struct rule *r = w->c->rule;
	const struct globs *globs[PREF_N] = { NULL, &r->prefer, &r->avoid, &r->omit };
	struct stat st;
	bool owner_ok, stated;

	for (int p = PREF_PREFER; p < PREF_N; p++)
		for (size_t i = 0; i < globs[p]->n && (int)*pref < p; i++)
			if (fnmatch(globs[p]->v[i], sub, FNM_PATHNAME) == 0) {
				free(*own);
				if (asprintf(own, "%s=%s", prefs[p].key, globs[p]->v[i]) < 0)
					*own = NULL;
				*pref = (enum pref)p;
				*reason = *own;
			}
	if (!r->victim_xattrs)
		return;
	stated = stat(dir, &st) == 0;
	owner_ok = stated && (st.st_uid == 0 || st.st_uid == w->owner);
	for (int p = PREF_PREFER; p < PREF_N; p++) {
		if (!xattr_on(dir, prefs[p].xattr))
			continue;
		if (!owner_ok) {
			if (stated)
				log_msg(LOG_PRI_NOTICE,
					"rule %s: %s: %s ignored: the cgroup belongs to uid %u, neither root nor the owner of the watched %s/%s (uid %u)",
					r->name, dir, prefs[p].xattr, (unsigned)st.st_uid, D.v2, w->c->rel,
					(unsigned)w->owner);
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

static int add(struct walk *w, const char *sub, enum pref pref, const char *reason, const char *reason_at)
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
	*k = (struct cand){ .pref = pref };
	if (*sub ? asprintf(&k->rel, "%s/%s", w->c->rel, sub) < 0 : !(k->rel = strdup(w->c->rel)))
		return -ENOMEM;
	k->sub = k->rel + cl + (*sub ? 1 : 0);
	if (reason && ((strcmp(reason_at, sub) ? asprintf(&k->reason, "%s on %s", reason, reason_at)
					       : asprintf(&k->reason, "%s", reason)) < 0)) {
		free(k->rel);
		return -ENOMEM;
	}
	w->n++;
	return 0;
}

/* The cgroup sub (relative to c, "" for c) and below it: 1 if populated
 * (its candidates added), 0 if empty or gone, -errno. */
static int walk(struct walk *w, const char *sub, unsigned depth, enum pref pref, const char *reason,
		const char *reason_at)
{
	char dir[PATH_MAX], *own = NULL, **kids = NULL;
	size_t nkids = 0;
	bool any = false;
	int ret;

	if ((size_t)snprintf(dir, sizeof(dir), "%s/%s%s%s", D.v2, w->c->rel, *sub ? "/" : "", sub) >=
	    sizeof(dir))
		return -ENAMETOOLONG;
	ret = populated(dir);
	if (ret < 0)
		log_msg(LOG_PRI_ERR, "rule %s: %s: cannot read cgroup.events: %s", w->c->rule->name, dir,
			strerror(-ret));
	if (ret <= 0)
		return ret;
	if (depth > MAX_DEPTH) {
		log_msg(LOG_PRI_INFO, "rule %s: %s: more than %d levels below the watched cgroup: not a candidate",
			w->c->rule->name, dir, MAX_DEPTH);
		return 1;
	}
	if (*sub && w->prefs) {
		enum pref before = pref;

		preference(w, dir, sub, &pref, &reason, &own);
		if (pref != before)
			reason_at = sub;
	}
	if (pref == PREF_OMIT || whole(dir))
		goto candidate;
	/* an error below leaves no candidate: this cgroup would take along
	 * what could not be seen (omitted ones too) */
	ret = children(dir, &kids, &nkids);
	if (ret < 0)
		log_msg(LOG_PRI_ERR, "rule %s: %s: cannot list its cgroups: %s", w->c->rule->name, dir,
			strerror(-ret));
	for (size_t i = 0; i < nkids && ret == 0; i++) {
		char s[PATH_MAX];
		int r = -ENAMETOOLONG;

		if ((size_t)snprintf(s, sizeof(s), "%s%s%s", sub, *sub ? "/" : "", kids[i]) < sizeof(s))
			r = walk(w, s, depth + 1, pref, reason, reason_at);
		if (r < 0)
			ret = r;
		any |= r > 0;
	}
	names_free(kids, nkids);
	if (ret == 0)
		ret = 1;
	if (any || ret < 0)
		goto out;
candidate:
	if (add(w, sub, pref, reason, reason_at) < 0)
		ret = -ENOMEM;
out:
	free(own);
	return ret;
}

static void walk_free(struct walk *w)
{
	for (size_t i = 0; i < w->n; i++) {
		free(w->v[i].rel);
		free(w->v[i].reason);
	}
	free(w->v);
}

/* The candidates of c, in the order found. */
static int collect(struct walk *w, struct cg *c, bool with_prefs)
{
	char dir[PATH_MAX];
	struct stat st;
	int r;

	*w = (struct walk){ .c = c, .prefs = with_prefs };
	if (cg_path(dir, sizeof(dir), c->rel) < 0)
		return -ENAMETOOLONG;
	if (stat(dir, &st) < 0)
		return -errno;
	w->owner = st.st_uid;
	r = walk(w, "", 0, PREF_NONE, NULL, "");
	if (r < 0)
		walk_free(w);
	return r < 0 ? r : 0;
}

/* ---- figures ---- */

/* memory.current (v2) or memory.usage_in_bytes (v1 counterpart); *low:
 * memory.low (v2 only, else 0). */
static bool memory_of(const char *rel, uint64_t *cur, uint64_t *low)
{
	char dir[PATH_MAX], *v1;
	struct cg like = { .rel = (char *)rel };
	bool ok;

	*low = 0;
	*cur = 0;
	if (cg_path(dir, sizeof(dir), rel) < 0)
		return false;
	if (read_u64(dir, "memory.current", cur)) {
		if (!read_u64(dir, "memory.low", low))
			*low = 0;
		return true;
	}
	v1 = v1_counterpart(&like, D.v1_memory, "memory");
	ok = v1 && read_u64(v1, "memory.usage_in_bytes", cur);
	free(v1);
	return ok;
}

static uint64_t swap_of(const char *rel)
{
	char dir[PATH_MAX], *v1;
	struct cg like = { .rel = (char *)rel };
	uint64_t v = 0, usage = 0;

	if (cg_path(dir, sizeof(dir), rel) < 0)
		return 0;
	if (read_u64(dir, "memory.swap.current", &v))
		return v;
	v1 = v1_counterpart(&like, D.v1_memory, "memory");
	if (!v1 || !read_u64(v1, "memory.memsw.usage_in_bytes", &v) ||
	    !read_u64(v1, "memory.usage_in_bytes", &usage) || v < usage)
		v = usage = 0;
	free(v1);
	return v - usage;
}

/* avg10 of memory.pressure, in hundredths of a percent. */
static int64_t pressure_of(const char *rel, bool full)
{
	char dir[PATH_MAX], buf[512], *p;
	const char *kind = full ? "full " : "some ";
	unsigned long whole = 0, frac = 0;

	if (cg_path(dir, sizeof(dir), rel) < 0 || slurp(dir, "memory.pressure", buf, sizeof(buf)) <= 0)
		return 0;
	for (p = buf; p && strncmp(p, kind, 5); p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		;
	if (!p || !(p = strstr(p, "avg10=")) || sscanf(p, "avg10=%lu.%2lu", &whole, &frac) < 1)
		return 0;
	return (int64_t)(whole * 100 + frac);
}

/* The processes of the subtree at dir. */
static int64_t processes_of(const char *dir, unsigned depth)
{
	char path[PATH_MAX], buf[8192], **kids;
	int64_t n = 0;
	size_t nkids;
	ssize_t got;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/cgroup.procs", dir) >= sizeof(path))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		while ((got = read(fd, buf, sizeof(buf))) > 0 || (got < 0 && errno == EINTR))
			for (ssize_t i = 0; i < got; i++)
				n += buf[i] == '\n';
		close(fd);
	}
	if (depth >= MAX_DEPTH)
		return n;
	children(dir, &kids, &nkids);
	for (size_t i = 0; i < nkids; i++)
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, kids[i]) < sizeof(path))
			n += processes_of(path, depth + 1);
	names_free(kids, nkids);
	return n;
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

static void figure(struct cg *c, struct cand *k)
{
	char dir[PATH_MAX];
	uint64_t cur, low;

	memory_of(k->rel, &cur, &low);
	k->memory = cur > low ? cur - low : 0;
	switch (c->rule->victim) {
	case VICTIM_MEMORY:
		k->figure = (int64_t)k->memory;
		k->memory = 0;	/* no next key: the path decides a tie */
		break;
	case VICTIM_GROWTH:
		k->figure = growth_of(c, k->rel, cur);
		break;
	case VICTIM_PRESSURE:
		k->figure = pressure_of(k->rel, c->rule->pressure_full);
		break;
	case VICTIM_PROCESSES:
		k->figure = cg_path(dir, sizeof(dir), k->rel) < 0 ? 0 : processes_of(dir, 0);
		break;
	case VICTIM_SWAP:
		k->figure = (int64_t)swap_of(k->rel);
		break;
	case VICTIM_SELF:
		break;
	}
}

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (group_order(x->pref) != group_order(y->pref))
		return group_order(x->pref) < group_order(y->pref) ? -1 : 1;
	if (x->figure != y->figure)
		return x->figure > y->figure ? -1 : 1;
	if (x->memory != y->memory)
		return x->memory > y->memory ? -1 : 1;
	return strcmp(x->rel, y->rel);
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

static void figure_text(FILE *f, enum victim v, const struct cand *k)
{
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

/* "victim b (memory 150.0 MiB): the largest of 3 candidates; then ..." */
static void why_text(FILE *f, struct cg *c, const struct cand *v, size_t n)
{
	enum victim vk = c->rule->victim;
	const struct cand *top = &v[0];
	size_t same = 0, avoided = 0;

	for (size_t i = 0; i < n; i++) {
		same += v[i].pref == top->pref;
		avoided += v[i].pref == PREF_AVOID;
	}
	fprintf(f, "victim %s (", shown(top));
	figure_text(f, vk, top);
	fputs("): ", f);
	if (n == 1)
		fputs("the only candidate", f);
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
	if (n > 1 && v[1].pref == top->pref && v[1].figure == top->figure)
		fprintf(f, ", tied with %s, first by %s", shown(&v[1]),
			v[1].memory != top->memory ? "memory" : "path");
	for (size_t i = 1; i < n && i < SHOWN; i++) {
		fprintf(f, "%s%s (", i == 1 ? "; then " : ", ", shown(&v[i]));
		figure_text(f, vk, &v[i]);
		if (v[i].pref != PREF_NONE)
			fprintf(f, "; %s: %s", prefs[v[i].pref].adjective, v[i].reason);
		fputc(')', f);
	}
	if (n > SHOWN)
		fprintf(f, " and %zu more", n - SHOWN);
}

/* "; omitted: d (Omit=d), e (user.cgkill_omit)" */
static void omitted_text(FILE *f, const struct cand *o, size_t n)
{
	for (size_t i = 0; i < n && i < SHOWN; i++)
		fprintf(f, "%s%s (%s)", i ? ", " : "; omitted: ", shown(&o[i]), o[i].reason);
	if (n > SHOWN)
		fprintf(f, " and %zu more", n - SHOWN);
}

static void json_cands(FILE *f, struct cg *c, const struct cand *v, size_t n)
{
	static const char *const units[] = {
		[VICTIM_SELF] = "", [VICTIM_MEMORY] = "bytes", [VICTIM_GROWTH] = "bytes/s",
		[VICTIM_PRESSURE] = "percent", [VICTIM_PROCESSES] = "processes", [VICTIM_SWAP] = "bytes",
	};
	enum victim vk = c->rule->victim;

	fputc('[', f);
	for (size_t i = 0; i < n && i < SHOWN; i++) {
		char path[PATH_MAX];
		uint64_t memory = vk == VICTIM_MEMORY ? (uint64_t)v[i].figure : v[i].memory;

		snprintf(path, sizeof(path), "%s/%s", D.v2, v[i].rel);
		fputs(i ? ", {\"cgroup\": " : "{\"cgroup\": ", f);
		json_str(f, path);
		if (vk == VICTIM_PRESSURE)
			fprintf(f, ", \"figure\": %lld.%02lld", (long long)(v[i].figure / 100),
				(long long)(v[i].figure % 100));
		else
			fprintf(f, ", \"figure\": %lld", (long long)v[i].figure);
		fprintf(f, ", \"unit\": \"%s\", \"memory\": %llu, \"group\": \"%s\", \"reason\": ",
			units[vk], (unsigned long long)memory, prefs[v[i].pref].group);
		if (v[i].reason)
			json_str(f, v[i].reason);
		else
			fputs("null", f);
		fputc('}', f);
	}
	fputc(']', f);
}

/* ---- the interface ---- */

int victim_rank(struct cg *c, char ***rels, char **why, char **json)
{
	struct walk w;
	size_t n = 0, nomit, len;
	FILE *f;
	int r;

	*rels = NULL;
	*why = *json = NULL;
	r = collect(&w, c, true);
	if (r < 0)
		return r;
	for (size_t i = 0; i < w.n; i++)
		if (w.v[i].pref != PREF_OMIT)
			figure(c, &w.v[i]);
	qsort(w.v, w.n, sizeof(*w.v), cand_cmp);	/* the omitted last, by path */
	while (n < w.n && w.v[n].pref != PREF_OMIT)
		n++;
	nomit = w.n - n;
	f = open_memstream(why, &len);
	if (f) {
		if (n)
			why_text(f, c, w.v, n);
		else
			fputs("no candidate", f);
		omitted_text(f, w.v + n, nomit);
		fclose(f);
	}
	if (n == 0) {
		walk_free(&w);
		return 0;
	}
	f = open_memstream(json, &len);
	if (f) {
		json_cands(f, c, w.v, n);
		fclose(f);
	}
	*rels = calloc(n, sizeof(**rels));
	for (size_t i = 0; *rels && i < n; i++) {
		(*rels)[i] = w.v[i].rel;
		w.v[i].rel = NULL;
	}
	walk_free(&w);
	if (!*rels || !*why || !*json) {
		victim_free(*rels, *rels ? (int)n : 0);
		free(*why);
		free(*json);
		*rels = NULL;
		*why = *json = NULL;
		return -ENOMEM;
	}
	return (int)n;
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
	for (size_t i = 0; i < w.n; i++) {
		uint64_t low;

		memory_of(w.v[i].rel, &b->v[i].memory, &low);
		b->v[i].rel = w.v[i].rel;
		w.v[i].rel = NULL;
	}
	b->n = w.n;
	qsort(b->v, b->n, sizeof(*b->v), base_cmp);
	c->vbase = b;
	walk_free(&w);
}
