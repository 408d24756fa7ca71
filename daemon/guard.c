/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Rules that could reach what must live are refused at --check and at
 * load, with the reason: a rule acts on whole subtrees, so a pattern that
 * could match the root cgroup, our own cgroup, PID 1's cgroup, an ancestor
 * of these, or a protected cgroup (or an ancestor of one) is an error. The
 * library's guard refuses such targets at action time anyway.
 *
 * A pattern that matches our own or PID 1's cgroup only through a wildcard
 * ("system.slice/" "*.service", cgkilld running as system.slice/cgkilld.service)
 * is accepted, and that cgroup is never watched (watch.c).
 *
 * A rule with a Victim= other than self acts on cgroups below the one it
 * matches (on that one only when nothing below holds a process): it is
 * checked for the root only. Its
 * candidates are checked at action time instead: our own and PID 1's
 * cgroups and those above them are never candidates (act.c), and the
 * library refuses a protected one, which passes the turn to the next.
 *
 * Globs against globs: two components "may meet" when either matches the
 * other as a string, or both have wildcards (we cannot tell, so we assume
 * they do).
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgkilld.h"

static bool wild(const char *s)
{
	return strpbrk(s, "*?[\\") != NULL;
}

static bool may_meet(const char *a, const char *b)
{
	return fnmatch(a, b, 0) == 0 || fnmatch(b, a, 0) == 0 || (wild(a) && wild(b));
}

/* Could rule r match the cgroup path ("/a/b") or one of its ancestors (but
 * the root, which no rule matches)? 0: no; 1: path itself, through a
 * wildcard; 2: an ancestor, or path itself literally. */
static int may_take(const struct rule *r, const char *path, bool literal)
{
	char *copy = strdup(path), *save = NULL, *c;
	size_t i = 0;
	bool wildcard = false;
	int hit = 2;

	if (!copy)
		return 2;
	for (c = strtok_r(copy, "/", &save); c && i < r->ncomp; c = strtok_r(NULL, "/", &save), i++) {
		if (literal ? fnmatch(r->comp[i], c, 0) != 0 : !may_meet(r->comp[i], c)) {
			hit = 0;
			break;
		}
		wildcard |= wild(r->comp[i]);
	}
	if (hit && i < r->ncomp)
		hit = 0;	/* the rule is deeper than path */
	else if (hit && !c && wildcard)
		hit = 1;	/* path itself */
	free(copy);
	return hit;
}

bool rule_matches_rel(const struct rule *r, const char *rel)
{
	return rel && strcmp(rel, "/") && may_take(r, rel, true) == 1;
}

/* Our own v2 cgroup, or PID 1's: "/a/b" relative to the mount. */
char *cgroup_rel(const char *pid)
{
	char *rel = NULL;

	cgk_proc_cgroup(NULL, strcmp(pid, "self") ? (pid_t)atoi(pid) : getpid(), NULL, &rel);
	return rel;
}

struct protected_check {
	const struct rule *r;
	char *why;
	size_t size;
};

/* An entry of the protected list (the library reads it): 1 (stop) if the
 * rule could match it or a cgroup above it. */
static int protected_entry(const char *glob, const char *entry, const char *list, unsigned line,
			   void *userdata)
{
	struct protected_check *c = userdata;

	(void)line;
	if (!may_take(c->r, glob, false))
		return 0;
	snprintf(c->why, c->size, "it could match the protected cgroup %s or one above it (%s)", entry,
		 list[0] == '/' ? list : "the library's built-in list");
	return 1;
}

int rule_guard_check(const struct rule *r, const char *protected_file, char *why, size_t size)
{
	char *self = cgroup_rel("self"), *init = cgroup_rel("1");
	int ret = 0, r_list;

	if (r->ncomp == 0) {
		snprintf(why, size, "it names the root cgroup");
		ret = -EPERM;
	} else if (r->victim != VICTIM_SELF) {
		free(self);
		free(init);
		return 0;
	} else if (self && strcmp(self, "/") && may_take(r, self, true) == 2) {
		snprintf(why, size, "it could match cgkilld's own cgroup %s or one above it", self);
		ret = -EPERM;
	} else if (init && strcmp(init, "/") && may_take(r, init, true) == 2) {
		snprintf(why, size, "it could match PID 1's cgroup %s or one above it", init);
		ret = -EPERM;
	}
	free(self);
	free(init);
	if (ret)
		return ret;

	r_list = cgk_protected_list(protected_file, protected_entry,
				    &(struct protected_check){ .r = r, .why = why, .size = size }, why, size);
	return r_list ? -EPERM : 0;
}
