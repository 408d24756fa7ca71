/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A target with witnesses around it: sentinels (sleepers) in the parent and
 * in a sibling of the target must be alive after every kill: collateral
 * damage is the worst bug this project can have.
 *
 *	struct scene s;
 *	if (!scene_start(&s, box, "tree"))	box/tree, box/tree/T, box/tree/S
 *		goto out;
 *	... kill s.target ...
 *	out: scene_end(&s);			sentinels alive, cgroups removed
 */
#ifndef CGK_TEST_SCENE_H
#define CGK_TEST_SCENE_H

#include <stdbool.h>
#include <sys/types.h>

/* Sleepers in the parent and in a sibling of a target. */
struct sb_sentinels {
	pid_t pid[4];
	const char *where[4];
	unsigned n;
};
/* Start one sleeper in each non-NULL cgroup; 0 or -errno. */
int sb_sentinels_start(struct sb_sentinels *s, const char *parent, const char *sibling);
/* One test point per sentinel: alive. Returns true if all are. */
bool sb_sentinels_check(const struct sb_sentinels *s, const char *scenario);

/* <box>/<dir> as the parent with a sentinel, <dir>/T the target, <dir>/S a
 * sibling with a sentinel; test points are named after name. */
struct scene {
	char name[96];
	char *parent, *target, *sibling;
	struct sb_sentinels sent;
};
/* One test point ("NAME: start sentinels"), or a failed one if the cgroups
 * cannot be made; false then. The scene may be ended either way. */
bool scene_start(struct scene *s, const char *box, const char *name);
bool scene_start_named(struct scene *s, const char *box, const char *dir, const char *name);
/* Check the sentinels, remove the cgroups (a test point each), free. */
void scene_end(struct scene *s);

#endif
