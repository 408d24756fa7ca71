/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Guard rails around the big red button. */
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define PROTECTED_FILE "/etc/cgkill/protected"

static const char *const default_protected[] = {
	"/init.scope", "/system.slice", "/user.slice", "/machine.slice", NULL,
};

/* Is the process pid in the target's subtree, on the target's hierarchy? */
static bool holds(struct cgk_run *run, const char *pid)
{
	_cleanup_free_ char *buf = NULL;
	char name[64], path[4096];
	size_t len = strlen(run->t->rel);

	snprintf(name, sizeof(name), "%s/cgroup", pid);
	if (cgk_read_file_at(run->procfd, name, &buf, NULL) < 0)
		return false;
	if (cgk_parse_proc_cgroup(buf, run->t->version == 2 ? NULL : run->t->mount.controllers,
				  path, sizeof(path)) < 0)
		return false;
	return strncmp(path, run->t->rel, len) == 0 && (path[len] == '\0' || path[len] == '/');
}

static bool matches(const char *glob, const char *rel)
{
	return fnmatch(glob, rel, FNM_PATHNAME) == 0;
}

static int check_protected(struct cgk_run *run)
{
	const char *file = run->opts->protected_file ?: secure_getenv("CGKILL_PROTECTED") ?: PROTECTED_FILE;
	_cleanup_free_ char *buf = NULL;
	int r = cgk_read_file_at(AT_FDCWD, file, &buf, NULL);

	if (r == -ENOENT && !run->opts->protected_file) {
		for (const char *const *g = default_protected; *g; g++)
			if (matches(*g, run->t->rel))
				return 1;
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
		if (matches(line, run->t->rel))
			return 1;
		/* Trailing blanks are an easy slip in a safety list: match
		 * without them too (fail closed). */
		n = strlen(line);
		while (n && (line[n - 1] == ' ' || line[n - 1] == '\t'))
			line[--n] = '\0';
		if (n && matches(line, run->t->rel))
			return 1;
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
	int r;

	if (run->t->is_root)
		return refuse(run, CGK_GUARD_ROOT, "refusing to kill the root cgroup of a hierarchy");
	/* Known with --force too: a freezer backend would freeze us. */
	run->self_inside = holds(run, "self");
	if (!force && run->self_inside)
		return refuse(run, CGK_GUARD_SELF,
			      "refusing to kill a cgroup that holds cgkill itself (--force overrides)");
	if (!force && holds(run, "1"))
		return refuse(run, CGK_GUARD_PID1,
			      "refusing to kill a cgroup that holds PID 1 (--force overrides)");
	if (!force) {
		r = check_protected(run);
		if (r < 0)
			return r;
		if (r > 0)
			return refuse(run, CGK_GUARD_PROTECTED,
				      "refusing to kill a protected cgroup (--force overrides)");
	}
	return 0;
}
