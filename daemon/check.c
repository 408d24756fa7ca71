/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What --check and the start warn about: a configuration that is valid
 * but unlikely to do what its author meant. A Match= that matches no
 * cgroup now (with the nearest name that exists), no rules at all, a hook
 * that would not run or that someone other than root could replace, an
 * EventLog= that the shipped unit does not let the daemon write. Warnings
 * never fail: a glob may match a cgroup made later, and the unit's
 * ExecStartPre=cgkilld --check must not fail a boot for it.
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgkilld.h"

/* The shipped unit's (data/cgkilld.service) ProtectSystem= and
 * ReadWritePaths=, read from it by the build (daemon/daemon.mk): they
 * cannot drift apart. Without them, nothing is said about paths. */
#ifndef UNIT_PROTECT_SYSTEM
#define UNIT_PROTECT_SYSTEM ""
#endif
#ifndef UNIT_READ_WRITE_PATHS
#define UNIT_READ_WRITE_PATHS ""
#endif

#define SHOW_NAMES 5	/* the names of a cgroup's children a warning lists */

struct warner {
	conf_error_fn say;
	unsigned count;
};

__attribute__((format(printf, 4, 5))) static void warn(struct warner *w, const char *file, unsigned line,
							const char *fmt, ...)
{
	char *msg;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	w->count++;
	if (n < 0)
		return;
	conf_report(w->say, NULL, LOG_PRI_WARNING, file, line, "%s", msg);
	free(msg);
}

/* ---- a Match= that matches nothing ---- */

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The child cgroups of the v2 cgroup rel, sorted: their count (names in
 * *names, malloc'ed), or 0. */
static size_t children(const char *rel, char ***names)
{
	char *path = *rel ? cg_full_path(rel) : strdup(D.v2);
	DIR *d = path ? opendir(path) : NULL;
	struct dirent *e;
	size_t n = 0;

	*names = NULL;
	free(path);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char **grown;

		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		grown = realloc(*names, (n + 1) * sizeof(**names));
		if (!grown || !(grown[n] = strdup(e->d_name))) {
			*names = grown ? grown : *names;
			break;
		}
		*names = grown;
		n++;
	}
	closedir(d);
	if (n)
		qsort(*names, n, sizeof(**names), name_cmp);
	return n;
}

static void names_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* Where the walk of a rule's components stopped: the deepest cgroup
 * (rel) none of whose children matches component level. */
struct miss {
	char *rel;
	unsigned level;
	bool any;
};

/* Does a cgroup below rel match r from component level on (as watch.c
 * matches: fnmatch(3) with FNM_PERIOD, one component a level)? */
static bool matches_below(const struct rule *r, const char *rel, unsigned level, struct miss *m)
{
	char **names;
	size_t n = children(rel, &names);
	bool found = false;

	for (size_t i = 0; i < n && !found; i++) {
		char *sub;

		if (fnmatch(r->comp[level], names[i], FNM_PERIOD) != 0)
			continue;
		if (level + 1 == r->ncomp)
			found = true;
		else if ((sub = cg_join(rel, names[i]))) {
			found = matches_below(r, sub, level + 1, m);
			free(sub);
		}
	}
	names_free(names, n);
	if (!found && (!m->any || level > m->level)) {
		free(m->rel);
		m->rel = strdup(rel);
		m->level = level;
		m->any = m->rel != NULL;
	}
	return found;
}

/*
 * "Did you mean": the child name nearest a component that matched none,
 * by edit distance between the glob and the name, where '*' takes any run
 * of characters for free and '?' or a [class] any one it matches; the
 * suggestion is the glob mended to match that name, its wildcards kept
 * (*.servce -> *.service).
 */
struct piece {
	const char *s;
	size_t len;
	bool star;
};

/* The pieces of glob (a component: at most 255 bytes). */
static size_t glob_pieces(const char *glob, struct piece *p)
{
	size_t n = 0;

	for (const char *s = glob; *s; n++) {
		size_t len = 1;

		if (*s == '\\' && s[1]) {
			len = 2;
		} else if (*s == '[') {
			const char *e = s + 1 + (s[1] == '!' || s[1] == '^');

			e = strchr(e + (*e == ']'), ']');
			len = e ? (size_t)(e - s) + 1 : 1;
		}
		p[n] = (struct piece){ .s = s, .len = len, .star = *s == '*' };
		s += len;
	}
	return n;
}

static bool piece_takes(const struct piece *p, char c)
{
	char one[2] = { c, '\0' }, pat[256];

	if (p->len == 1)
		return p->s[0] == '?' || p->s[0] == c;
	if (p->s[0] == '\\')
		return p->s[1] == c;
	snprintf(pat, sizeof(pat), "%.*s", (int)p->len, p->s);
	return fnmatch(pat, one, 0) == 0;
}

static unsigned min3(unsigned a, unsigned b, unsigned c)
{
	return a < b ? (a < c ? a : c) : (b < c ? b : c);
}

/* The edit distances of every start of the glob's pieces (rows 0..np) to
 * every start of a name (columns 0..len). */
struct grid {
	const struct piece *p;
	const char *name;
	size_t w;	/* len + 1 */
	unsigned *d;
};

static unsigned *at(const struct grid *g, size_t i, size_t j)
{
	return &g->d[i * g->w + j];
}

static bool grid_fill(struct grid *g, const struct piece *p, size_t np, const char *name)
{
	size_t len = strlen(name);

	*g = (struct grid){ .p = p, .name = name, .w = len + 1, .d = malloc((np + 1) * (len + 1) * sizeof(unsigned)) };
	if (!g->d)
		return false;
	for (size_t i = 0; i <= np; i++)
		for (size_t j = 0; j <= len; j++) {
			if (!i)
				*at(g, i, j) = (unsigned)j;	/* characters missing */
			else if (p[i - 1].star)		/* a star takes this character, or no more */
				*at(g, i, j) = j && *at(g, i, j - 1) < *at(g, i - 1, j) ? *at(g, i, j - 1) : *at(g, i - 1, j);
			else if (!j)
				*at(g, i, j) = *at(g, i - 1, j) + 1;	/* a piece too many */
			else
				*at(g, i, j) = min3(*at(g, i - 1, j - 1) + !piece_takes(&p[i - 1], name[j - 1]),
						    *at(g, i - 1, j) + 1, *at(g, i, j - 1) + 1);
		}
	return true;
}

/* The glob mended along the grid's cheapest path to the name: a piece
 * that takes its character is kept, a star stays a star, and the name's
 * own characters stand in for the rest (escaped where a glob would read
 * a wildcard). Malloc'ed; built from its end. */
static char *grid_mend(const struct grid *g, size_t np)
{
	size_t i = np, j = g->w - 1, size = 2 * (np + g->w) + 256;
	char *out = malloc(size), *o;

	if (!out)
		return NULL;
	o = out + size - 1;
	*o = '\0';
	while (i || j) {
		const struct piece *p = i ? &g->p[i - 1] : NULL;
		bool takes = p && j && piece_takes(p, g->name[j - 1]);
		char c = j ? g->name[j - 1] : '\0';

		if (p && p->star && j && *at(g, i, j) == *at(g, i, j - 1)) {
			j--;	/* the star takes it */
		} else if (p && p->star) {
			*--o = '*';
			i--;
		} else if (p && j && *at(g, i, j) == *at(g, i - 1, j - 1) + !takes) {
			o -= takes ? p->len : 1;
			memcpy(o, takes ? p->s : &c, takes ? p->len : 1);
			if (!takes && strchr("*?[\\", c))
				*--o = '\\';
			i--, j--;
		} else if (p && *at(g, i, j) == *at(g, i - 1, j) + 1) {
			i--;	/* a piece too many: dropped */
		} else {
			*--o = c;	/* a character missing: added */
			if (strchr("*?[\\", c))
				*--o = '\\';
			j--;
		}
	}
	memmove(out, o, strlen(o) + 1);
	return out;
}

/* The distance from the glob's np pieces p to name; *fix (if not NULL),
 * the glob mended to match name (NULL without memory). */
static unsigned glob_distance(const struct piece *p, size_t np, const char *name, char **fix)
{
	struct grid g;
	unsigned dist;

	if (!grid_fill(&g, p, np, name))
		return ~0u;
	dist = *at(&g, np, g.w - 1);
	if (fix)
		*fix = grid_mend(&g, np);
	free(g.d);
	return dist;
}

/* The names of rel's children nearest component level of r: the rule's
 * Match= with that component mended, malloc'ed; NULL if none is near. */
static char *nearest(const struct rule *r, unsigned level, char **names, size_t n)
{
	struct piece p[256];
	size_t np = glob_pieces(r->comp[level], p), literal = 0;
	unsigned best = ~0u, limit;
	size_t at = 0;
	char *fix = NULL, *s = NULL;

	for (size_t i = 0; i < np; i++)
		literal += !p[i].star;
	limit = literal / 3 > 1 ? (unsigned)(literal / 3) : 1;
	for (size_t i = 0; i < n; i++) {
		unsigned dist = glob_distance(p, np, names[i], NULL);

		if (dist < best)
			best = dist, at = i;
	}
	if (best > limit || glob_distance(p, np, names[at], &fix) != best || !fix)
		return NULL;
	for (size_t i = 0; i < r->ncomp; i++) {
		char *grown;

		if (asprintf(&grown, "%s%s%s", s ? s : "", i ? "/" : "", i == level ? fix : r->comp[i]) < 0) {
			grown = NULL;
		}
		free(s);
		s = grown;
		if (!s)
			break;
	}
	free(fix);
	return s;
}

/* "a, b, c and 4 more" of n names; malloc'ed. */
static char *name_list(char **names, size_t n)
{
	char *s = NULL, *grown;

	for (size_t i = 0; i < n && i < SHOW_NAMES; i++) {
		if (asprintf(&grown, "%s%s%s", s ? s : "", i ? ", " : "", names[i]) < 0)
			grown = NULL;
		free(s);
		if (!(s = grown))
			return NULL;
	}
	if (n > SHOW_NAMES) {
		if (asprintf(&grown, "%s and %zu more", s, n - SHOW_NAMES) < 0)
			grown = NULL;
		free(s);
		s = grown;
	}
	return s;
}

static void warn_no_match(struct warner *w, const struct rule *r)
{
	struct miss m = { 0 };
	char **names, *fix, *list;
	size_t n;

	if (matches_below(r, "", 0, &m) || !m.any)
		goto out;
	n = children(m.rel, &names);
	fix = nearest(r, m.level, names, n);
	list = name_list(names, n);
	warn(w, r->file, r->line, "rule %s: Match=%s matches no cgroup now%s%s%s %s %s%s", r->name, r->match,
	     fix ? "; did you mean " : "", fix ? fix : "", fix ? "?" : ";", *m.rel ? m.rel : "the root cgroup",
	     n ? "holds " : "has no child cgroup", n && list ? list : "");
	free(fix);
	free(list);
	names_free(names, n);
out:
	free(m.rel);
}

/* ---- hooks ---- */

/* A hook runs as root: it must exist, be an executable regular file, and
 * pass the configuration's own trust (open_trusted(): root's, in
 * directories only root may change), or someone else could choose what
 * root runs. */
static void warn_hook(struct warner *w, const struct rule *r, const char *key, char *const *argv)
{
	char why[1024];
	struct stat st;
	int fd;

	if (!argv)
		return;
	fd = open_trusted(argv[0], false, why, sizeof(why));
	if (fd < 0) {
		warn(w, r->file, r->line, "rule %s: %s=%s: %s: %s", r->name, key, argv[0],
		     fd == -EPERM ? "would be refused: someone other than root could replace it" : "would not run", why);
		return;
	}
	if (fstat(fd, &st) == 0 && !(st.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH)))
		warn(w, r->file, r->line, "rule %s: %s=%s: would not run: not executable (mode %04o)", r->name, key,
		     argv[0], (unsigned)(st.st_mode & 07777));
	close(fd);
}

/* ---- the unit's writable paths ---- */

/* Is path at or below one of the blank-separated ReadWritePaths= entries
 * (each perhaps with systemd's "-" or "+" before it)? */
static bool unit_writable(const char *path)
{
	const char *s = UNIT_READ_WRITE_PATHS;

	while (*s) {
		size_t n;

		s += strspn(s, " \t");
		s += strspn(s, "-+");
		n = strcspn(s, " \t");
		while (n > 1 && s[n - 1] == '/')
			n--;
		if (n && !strncmp(path, s, n) && (path[n] == '/' || !path[n] || (n == 1 && *s == '/')))
			return true;
		s += n;
		s += strcspn(s, " \t");
	}
	return false;
}

/* A file the daemon writes (key=path) that the shipped unit's
 * ProtectSystem=strict would leave read-only. */
static void warn_unwritable(struct warner *w, const char *file, const char *key, const char *path)
{
	const char *slash;

	if (!path || strcmp(UNIT_PROTECT_SYSTEM, "strict") || unit_writable(path))
		return;
	slash = strrchr(path, '/');
	warn(w, file, 0,
	     "%s=%s: the shipped unit (cgkilld.service: ProtectSystem=strict, ReadWritePaths=%s) does not let cgkilld write there; choose a file below those paths, or let the unit write its directory with a drop-in (systemctl edit cgkilld: [Service] ReadWritePaths=%.*s)",
	     key, path, UNIT_READ_WRITE_PATHS, slash && slash != path ? (int)(slash - path) : 1, path);
}

unsigned check_warn(const struct config *cfg, const char *path, conf_error_fn say)
{
	struct warner w = { .say = say };

	if (!cfg->nrules)
		warn(&w, path, 0, "no [Rule]: cgkilld would watch nothing");
	for (size_t i = 0; i < cfg->nrules; i++) {
		const struct rule *r = &cfg->rules[i];

		if (D.v2)
			warn_no_match(&w, r);
		warn_hook(&w, r, "ExecPreKill", r->exec_pre);
		warn_hook(&w, r, "ExecPostKill", r->exec_post);
	}
	warn_unwritable(&w, path, "EventLog", cfg->event_log);
	warn_unwritable(&w, path, "MetricsFile", cfg->metrics_file);
	return w.count;
}
