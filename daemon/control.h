/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The control socket's protocol, shared by cgkilld (daemon/ctl.c) and its
 * client cgkillctl (ctl/cgkillctl.c); cgkillctl(8) documents it.
 *
 * A stream socket, CTL_SOCKET in the runtime directory, root's alone. One
 * request per connection: one line of at most CTL_REQUEST_MAX bytes, its
 * newline included ("status", "status --json", "explain --json CGROUP",
 * "reload", "metrics", "ping"). One reply: a first line "ok", "refused"
 * or "error", then the text (or JSON document) until the daemon closes.
 */
#ifndef CGKILLD_CONTROL_H
#define CGKILLD_CONTROL_H

#include <stdlib.h>
#include <string.h>

#define CTL_RUNTIME_DIR "/run/cgkilld"
#define CTL_SOCKET "cgkilld.sock"
#define CTL_PIDFILE "cgkilld.pid"
#define CTL_REQUEST_MAX 4096

/* The runtime directory: systemd's $RUNTIME_DIRECTORY (RuntimeDirectory=
 * cgkilld) when it names one, else CTL_RUNTIME_DIR. */
static inline const char *ctl_runtime_dir(void)
{
	const char *env = getenv("RUNTIME_DIRECTORY");

	return env && env[0] == '/' && !strchr(env, ':') ? env : CTL_RUNTIME_DIR;
}

#endif
