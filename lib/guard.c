/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Guard rails around the big red button. */
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

struct inside {
	bool self, init, unknown;
};

static int inside_visit(struct cgk_run *run, int cgfd, const char *rel,
			const struct cgk_pidvec *pids, void *arg)
{
	struct inside *in = arg;

	(void)cgfd, (void)rel;
	for (size_t i = 0; i < pids->n; i++) {
		in->self |= pids->v[i] == run->self;
		in->init |= pids->v[i] == 1;
	}
	return 0;
}

/* Does the subtree hold cgkill itself or PID 1? Paths compare cheaply, but
 * only when they are comparable: a /proc of another pid namespace (whose
 * "1" is not our init), a mount from outside our cgroup namespace ("/.."
 * roots) or an unreadable /proc falls back to looking for the pids in the
 * subtree's own lists; if that fails too, assume the worst. */
static void find_inside(struct cgk_run *run, struct inside *in)
{
	int self = -EINVAL, init = -EINVAL;

	if (run->proc_ours && strncmp(run->t->rel, "/..", 3) != 0) {
		self = cgk_pid_in_subtree(run, "self");
		init = cgk_pid_in_subtree(run, "1");
	}
	if (self >= 0 && init >= 0) {
		in->self = self;
		in->init = init;
		return;
	}
	*in = (struct inside){ 0 };
	/* A failed walk: the refusal tells the story. */
	in->unknown = cgk_tree_walk_procs(run, inside_visit, in) < 0;
}

static int refuse(struct cgk_run *run, enum cgk_guard guard, const char *why)
{
	run->rep->refused = guard;
	return cgk_error_set(&run->err, -EPERM, "%s", why);
}

static bool matches(const char *glob, const char *rel)
{
	return fnmatch(glob, rel, FNM_PATHNAME) == 0;
}

/* Seen from inside a cgroup namespace, a target outside it has a path
 * starting with "/..", which no entry can match. */
static bool outside_ns(const struct cgk_target *t)
{
	return strncmp(t->rel, "/..", 3) == 0 && (t->rel[3] == '/' || !t->rel[3]);
}

/* Could a delegatee have made the cgroup fd? Not if it is root's: no one
 * else makes a root-owned directory. Else not only if its parent is root's
 * and writable by root alone (neither g+w nor o+w): a delegated root
 * (systemd's user@UID.service: the user's, below root's 0755
 * user-UID.slice) stays protectable. A parent of anyone else's could
 * have been made writable by its owner (chmod at will) for the time of a
 * mkdir, and the cgroup given to one of that owner's subordinate uids
 * (chown in a user namespace); a group-writable one lets in who is in its
 * group (not known here; the cgroup's own gid proves nothing: its owner
 * may chgrp it to any of its groups). Asked of the fd held, and of its
 * parent through it: no name is looked up again. 1, 0 or -errno. */
static int made_by_delegatee(int fd)
{
	_cleanup_close_ int up = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct stat cg, parent;

	if (up < 0 || fstat(fd, &cg) < 0 || fstat(up, &parent) < 0)
		return -errno;
	if (cg.st_uid == 0)
		return 0;
	return parent.st_uid != 0 || (parent.st_mode & (S_IWGRP | S_IWOTH));
}

/* Does the protected list's entry hold for the cgroup fd? Only if no
 * delegatee could have made it: a name does not buy protection for the
 * subtree around it. Fail closed: what cannot be told protects. */
static bool honoured(int fd)
{
	return made_by_delegatee(fd) != 1;
}

/* Does the entry name the cgroup below (a literal path below the target)
 * protect it? Not if it is surely not there. */
static bool protects_below(struct cgk_run *run, const char *below)
{
	_cleanup_close_ int fd = openat(run->t->fd, below, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return errno != ENOENT && errno != ENOTDIR;
	return honoured(fd);
}

/* Is the target, or a cgroup below it, protected by glob (normalised)?
 * Its leading components, as many as the target has, must match the
 * target's; the rest names something below the target: a pattern could
 * match a cgroup there, so it counts; a literal name counts unless it is
 * surely not there. A cgroup a delegatee could have made
 * (made_by_delegatee) is protected by no entry. */
static bool protects(struct cgk_run *run, char *glob)
{
	const char *rel = run->t->rel;
	char *below = glob;
	bool hit;

	for (const char *p = rel; *p && below; p++)
		if (*p == '/')
			below = strchr(below + 1, '/');
	if (!below)
		return matches(glob, rel) && honoured(run->t->fd);
	*below = '\0';
	hit = matches(glob, rel);
	*below++ = '/';
	if (!hit)
		return false;
	if (strpbrk(below, "*?[\\"))
		return true;
	return protects_below(run, below);
}

static int refuse_protected(struct cgk_run *run, const char *list, size_t lineno,
			    const char *entry, size_t n)
{
	char why[384];

	if (outside_ns(run->t))
		snprintf(why, sizeof(why),
			 "the target lies outside this cgroup namespace (%.160s), so the protected list "
			 "cannot be checked: refusing (--force overrides)", run->t->rel);
	else
		snprintf(why, sizeof(why),
			 "refusing to kill a protected cgroup or one that contains it (%.*s, line %zu of "
			 "%.120s; --force overrides)", (int)(n < 160 ? n : 160), entry, lineno, list);
	return refuse(run, CGK_GUARD_PROTECTED, why);
}

struct list_check {
	struct cgk_run *run;
	const char *list;
};

/* 1 (refused) if the entry protects the target, or cannot be checked
 * against it (outside our namespace): fail closed. */
static int entry_protects(const struct cgk_protected_entry *e, void *arg)
{
	struct list_check *c = arg;
	_cleanup_free_ char *glob = strdup(e->glob);

	if (!glob)
		return -ENOMEM;
	if (!outside_ns(c->run->t) && !protects(c->run, glob))
		return 0;
	return refuse_protected(c->run, c->list, e->line, e->text, e->len);
}

/* Refuse if the target, or a cgroup below it, is on the protected list. */
static int check_protected(struct cgk_run *run)
{
	_cleanup_free_ char *text = NULL;
	struct list_check c = { .run = run };
	struct cgk_protected_fault fault;
	size_t len = 0;
	int r = cgk_protected_load(run->opts->protected_file, &text, &len, &c.list);

	if (r < 0)
		return cgk_error_set(&run->err, r, "cannot read the protected list %s", c.list);
	r = cgk_protected_walk(text, len, entry_protects, &c, &fault);
	if (r == -EPERM)
		return r;
	if (r < 0 && fault.what)
		return cgk_error_set(&run->err, r, "%s:%zu: %s: refusing to kill (fail closed)", c.list,
				     fault.line, fault.what);
	if (r < 0)
		return cgk_error_set(&run->err, r, "cannot check the protected list %s", c.list);
	return 0;
}

int cgk_guard_check(struct cgk_run *run)
{
	bool force = run->opts->flags & CGK_FORCE;
	struct inside in = { 0 };

	if (run->t->is_root)
		return refuse(run, CGK_GUARD_ROOT, "refusing to kill the root cgroup of a hierarchy");
	find_inside(run, &in);
	/* Known with --force too: a freezer backend would freeze us. */
	run->self_inside = in.self || in.unknown;
	if (!force && in.unknown)
		return refuse(run, CGK_GUARD_SELF,
			      "cannot tell whether this cgroup holds cgkill itself or PID 1 (--force overrides)");
	if (!force && in.self)
		return refuse(run, CGK_GUARD_SELF,
			      "refusing to kill a cgroup that holds cgkill itself (--force overrides)");
	if (!force && in.init)
		return refuse(run, CGK_GUARD_PID1,
			      "refusing to kill a cgroup that holds PID 1 (--force overrides)");
	return force ? 0 : check_protected(run);
}
