/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Guard rails around the big red button. */
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

#define PROTECTED_FILE "/etc/cgkill/protected"

static const char *const default_protected[] = {
	"/init.scope", "/system.slice", "/user.slice", "/machine.slice", NULL,
};

struct inside {
	bool self, init, unknown;
};

static int inside_visit(struct cgk_run *run, int cgfd, const char *rel, void *arg)
{
	struct inside *in = arg;
	struct cgk_pidvec pids = { 0 };
	int r = cgk_read_procs(cgfd, &pids);

	if (r == -ENOENT || (r == -EOPNOTSUPP && *rel))
		return 0;
	for (size_t i = 0; r >= 0 && i < pids.n; i++) {
		in->self |= pids.v[i] == run->self;
		in->init |= pids.v[i] == 1;
	}
	cgk_pidvec_free(&pids);
	return r;
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
	if (cgk_tree_walk(run, inside_visit, in) < 0) {
		in->unknown = true;
		run->rep->error = 0;	/* the refusal tells the story */
	}
}

static bool matches(const char *glob, const char *rel)
{
	return fnmatch(glob, rel, FNM_PATHNAME) == 0;
}

/* Is the target, or a cgroup below it, protected by glob? */
static bool protects(struct cgk_run *run, const char *glob)
{
	const char *rel = run->t->rel;
	size_t len = strlen(rel);

	if (matches(glob, rel))
		return true;
	if (strncmp(glob, rel, len) != 0 || glob[len] != '/')
		return false;
	/* Below the target: a literal name counts if it exists; a pattern
	 * could match something, so it counts. */
	glob += len + 1;
	return strpbrk(glob, "*?[") || faccessat(run->t->fd, glob, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

/* The protected list: a regular file of at most 1 MiB (symlinks are fine
 * here: config management makes them). */
static int read_list(const char *file, char **buf)
{
	_cleanup_close_ int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	ssize_t n;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (st.st_size > (1 << 20))
		return -EFBIG;
	*buf = calloc(1, (size_t)st.st_size + 1);
	if (!*buf)
		return -ENOMEM;
	n = read(fd, *buf, (size_t)st.st_size);
	return n < 0 ? -errno : 0;
}

/* 1 and the matching glob if protected, 0 if not, -errno. */
static int check_protected(struct cgk_run *run, char *which, size_t size)
{
	const char *file = run->opts->protected_file ?: secure_getenv("CGKILL_PROTECTED") ?: PROTECTED_FILE;
	_cleanup_free_ char *buf = NULL;
	int r = read_list(file, &buf);

	if (r == -ENOENT && !run->opts->protected_file) {
		for (const char *const *g = default_protected; *g; g++)
			if (protects(run, *g)) {
				snprintf(which, size, "%s", *g);
				return 1;
			}
		return 0;
	}
	if (r < 0)
		return cgk_fail(run, r, "cannot read the protected list %s", file);
	for (char *save = NULL, *line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		size_t n;

		line += strspn(line, " \t");
		line[strcspn(line, "\r")] = '\0';
		if (!*line || *line == '#')
			continue;
		/* Trailing blanks are an easy slip in a safety list: match
		 * with and without them (fail closed). */
		bool hit = protects(run, line);
		n = strlen(line);
		while (n && (line[n - 1] == ' ' || line[n - 1] == '\t'))
			line[--n] = '\0';
		if (hit || (n && protects(run, line))) {
			snprintf(which, size, "%s", line);
			return 1;
		}
	}
	return 0;
}

static int refuse(struct cgk_run *run, enum cgk_guard guard, const char *why)
{
	run->rep->refused = guard;
	return cgk_fail(run, -EPERM, "%s", why);
}

int cgk_guard_check(struct cgk_run *run)
{
	bool force = run->opts->flags & CGK_FORCE;
	struct inside in = { 0 };
	char which[256];
	int r;

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
	if (!force) {
		r = check_protected(run, which, sizeof(which));
		if (r < 0)
			return r;
		if (r > 0) {
			char why[384];

			snprintf(why, sizeof(why),
				 "refusing to kill a protected cgroup or one that contains it (%s; --force overrides)",
				 which);
			return refuse(run, CGK_GUARD_PROTECTED, why);
		}
	}
	return 0;
}
