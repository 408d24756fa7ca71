// SPDX-License-Identifier: LGPL-2.1-or-later
/* Targets with sentinels around them; see scene.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox.h"
#include "scene.h"
#include "spawn.h"
#include "tap.h"

int sb_sentinels_start(struct sb_sentinels *s, const char *parent, const char *sibling)
{
	const char *where[2] = { parent, sibling };

	memset(s, 0, sizeof(*s));
	for (int i = 0; i < 2; i++) {
		pid_t pid;

		if (!where[i])
			continue;
		pid = sb_sleeper(where[i]);
		if (pid < 0)
			return pid;
		s->pid[s->n] = pid;
		s->where[s->n] = i == 0 ? "parent" : "sibling";
		s->n++;
	}
	return 0;
}

bool sb_sentinels_check(const struct sb_sentinels *s, const char *scenario)
{
	bool all = true;

	for (unsigned i = 0; i < s->n; i++)
		all &= ok(sb_alive(s->pid[i]), "%s: sentinel in the %s cgroup (pid %d) is alive",
			  scenario, s->where[i], (int)s->pid[i]);
	return all;
}

bool scene_start_named(struct scene *s, const char *box, const char *dir, const char *name)
{
	char rel[256];
	int r;

	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->parent = sb_mkdir(box, dir);
	snprintf(rel, sizeof(rel), "%s/T", dir);
	s->target = sb_mkdir(box, rel);
	snprintf(rel, sizeof(rel), "%s/S", dir);
	s->sibling = sb_mkdir(box, rel);
	if (!s->parent || !s->target || !s->sibling)
		return ok(false, "%s: create the cgroups: %s", name, strerror(errno));
	r = sb_sentinels_start(&s->sent, s->parent, s->sibling);
	if (r < 0)
		diag("%s: %s", name, strerror(-r));
	return is_int(r, 0, "%s: start sentinels", name);
}

bool scene_start(struct scene *s, const char *box, const char *name)
{
	return scene_start_named(s, box, name, name);
}

void scene_end(struct scene *s)
{
	if (s->sent.n)
		sb_sentinels_check(&s->sent, s->name);
	if (s->parent)
		ok(sb_destroy(s->parent) == 0, "%s: cgroups removed", s->name);
	sb_reap();
	free(s->parent);
	free(s->target);
	free(s->sibling);
	memset(s, 0, sizeof(*s));
}
