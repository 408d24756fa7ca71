/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Pressure: PSI triggers (memory, cpu, io; the cgroup's or the machine's),
 * the v1 memory.pressure_level, and swap use. BEING WRITTEN.
 */
#include <errno.h>
#include <stdio.h>

#include "cgkilld.h"

int pressure_trigger_text(const struct rule *r, bool privileged, char *buf, size_t size, char *why,
			  size_t whysize)
{
	(void)r, (void)privileged, (void)buf, (void)size;
	snprintf(why, whysize, "pressure triggers are not written yet");
	return -EINVAL;
}

bool pressure_arm(struct cg *c, bool quiet)
{
	(void)c, (void)quiet;
	return false;
}

void pressure_event(struct cg *c, struct src *s)
{
	(void)c, (void)s;
}

void pressure_disarm(struct cg *c)
{
	(void)c;
}
