/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Victim choice among a matched cgroup's candidates. BEING WRITTEN.
 */
#include <errno.h>
#include <stdlib.h>

#include "cgkilld.h"

int victim_rank(struct cg *c, char ***rels, char **why, char **json)
{
	(void)c;
	*rels = NULL;
	*why = *json = NULL;
	return -ENOSYS;
}

void victim_free(char **rels, int n)
{
	for (int i = 0; i < n; i++)
		free(rels[i]);
	free(rels);
}

void victim_episode_start(struct cg *c)
{
	(void)c;
}

void victim_forget(struct cg *c)
{
	(void)c;
}
