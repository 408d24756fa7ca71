// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cgk_proc_cgroup(): a process's cgroup in one hierarchy, as
 * /proc/PID/cgroup names it, through the library's parser: v2's line for
 * NULL, the v1 line that has the controller among its own (a hybrid
 * layout: pids, memory, freezer), ESRCH for a process that is gone,
 * ENOENT for a hierarchy it is not in. Compared with the file itself.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgkill.h"
#include "support/tap.h"

/* The path of the line of /proc/self/cgroup for controller (NULL: v2), as
 * a plain reading finds it; "" if none. */
static void expected(const char *controller, char *out, size_t size)
{
	char line[4096];
	FILE *f = fopen("/proc/self/cgroup", "re");

	*out = '\0';
	if (!f)
		bail_out("cannot read /proc/self/cgroup");
	while (fgets(line, sizeof(line), f)) {
		char *ctl = strchr(line, ':'), *rel = ctl ? strchr(ctl + 1, ':') : NULL;
		bool hit = false;

		if (!rel)
			continue;
		*rel++ = '\0';
		*ctl++ = '\0';
		rel[strcspn(rel, "\n")] = '\0';
		if (!controller)
			hit = !strcmp(line, "0") && !*ctl;
		else
			for (char *c = strtok(ctl, ","); c && !hit; c = strtok(NULL, ","))
				hit = !strcmp(c, controller);
		if (hit) {
			snprintf(out, size, "%s", rel);
			break;
		}
	}
	fclose(f);
}

static void check(const char *controller)
{
	char want[4096];
	char *path = NULL;
	int r = cgk_proc_cgroup(NULL, getpid(), controller, &path);

	expected(controller, want, sizeof(want));
	if (!*want) {
		is_int(r, -ENOENT, "%s: not in such a hierarchy: ENOENT", controller ?: "v2");
	} else {
		is_int(r, 0, "%s: found", controller ?: "v2");
		is_str(path ?: "", want, "%s: the path of /proc/self/cgroup", controller ?: "v2");
	}
	free(path);
}

int main(void)
{
	char *path = NULL;
	pid_t child;

	check(NULL);
	check("pids");
	check("memory");
	check("freezer");
	check("no-such-controller");
	child = fork();
	if (child < 0)
		bail_out("fork");
	if (child == 0)
		_exit(0);
	waitpid(child, NULL, 0);
	is_int(cgk_proc_cgroup(NULL, child, NULL, &path), -ESRCH, "a process that is gone: ESRCH");
	is_int(cgk_proc_cgroup(NULL, 0, NULL, &path), -EINVAL, "pid 0: EINVAL");
	is_int(cgk_proc_cgroup(NULL, getpid(), NULL, NULL), -EINVAL, "no path: EINVAL");
	is_int(cgk_proc_cgroup(NULL, getpid(), "pids,memory", &path), -EINVAL, "a list, not one controller: EINVAL");
	return done_testing();
}
