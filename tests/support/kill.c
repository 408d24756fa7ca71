// SPDX-License-Identifier: LGPL-2.1-or-later
/* Calling the library; see kill.h. */
#include <errno.h>
#include <string.h>

#include "kill.h"
#include "tap.h"

const enum cgk_backend v2_backends[N_V2_BACKENDS] = {
	CGK_BACKEND_KERNEL, CGK_BACKEND_FREEZE, CGK_BACKEND_LOOP,
};

static cgk_options *must(cgk_options *o, int r, const char *what)
{
	if (r < 0)
		bail_out("cgk_options_%s: %s", what, strerror(-r));
	return o;
}

cgk_options *opts_new(enum cgk_backend b, int sig, unsigned flags, uint64_t wait_ms,
		      const char *protected_file)
{
	cgk_options *o = NULL;

	must(o, cgk_options_new(&o), "new");
	must(o, cgk_options_set_backend(o, b), "set_backend");
	must(o, cgk_options_set_signal(o, sig), "set_signal");
	must(o, cgk_options_set_flags(o, flags), "set_flags");
	must(o, cgk_options_set_wait(o, wait_ms), "set_wait");
	return must(o, cgk_options_set_protected_file(o, protected_file), "set_protected_file");
}

cgk_options *opts_escalate(enum cgk_backend b, int sig, uint64_t wait_ms, uint64_t after_ms,
			   int sig2)
{
	cgk_options *o = opts_new(b, sig, 0, wait_ms, NULL);

	return must(o, cgk_options_add_escalation(o, after_ms, sig2), "add_escalation");
}

int kill_opts(const char *path, enum cgk_backend b, int sig, unsigned flags, uint64_t wait_ms,
	      const char *protected_file, cgk_report **rep)
{
	cgk_options *o = opts_new(b, sig, flags, wait_ms, protected_file);
	int r = cgk_kill(path, o, rep);

	cgk_options_free(o);
	return r;
}

int kill_wait(const char *path, enum cgk_backend b, int sig, uint64_t wait_ms, cgk_report **rep)
{
	int r = kill_opts(path, b, sig, 0, wait_ms, NULL, rep);

	if (r < 0)
		note("cgk_kill(%s, %s) = %d: %s", path, cgk_backend_name(b), r, cgk_report_message(*rep));
	return r;
}

unsigned rep_has_pid(const cgk_report *rep, enum cgk_list list, pid_t pid)
{
	unsigned k = 0;

	for (size_t i = 0; rep && i < cgk_report_n_processes(rep, list); i++)
		k += cgk_process_pid(cgk_report_process(rep, list, i)) == pid;
	return k;
}

int rep_signal(const cgk_report *rep, size_t i)
{
	enum cgk_backend b;

	return i < cgk_report_n_signals(rep) ? cgk_report_signal(rep, i, &b) : 0;
}

enum cgk_backend rep_signal_backend(const cgk_report *rep, size_t i)
{
	enum cgk_backend b = CGK_BACKEND_AUTO;

	if (i < cgk_report_n_signals(rep))
		cgk_report_signal(rep, i, &b);
	return b;
}
