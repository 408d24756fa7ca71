/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cgk_options: what to send, how, and how long to wait. */
#include <string.h>

#include "internal.h"

#define KNOWN_FLAGS (CGK_DRY_RUN | CGK_FORCE | CGK_BOOST | CGK_REAP | CGK_BOOSTED)
#define DEFAULT_WAIT_MS 10000

const struct cgk_options cgk_default_options = {
	.signal = SIGKILL,
	.backend = CGK_BACKEND_AUTO,
	.wait_ms = DEFAULT_WAIT_MS,
};

static bool is_signal(int sig)
{
	return sig > 0 && sig <= SIGRTMAX;
}

CGK_EXPORT int cgk_options_new(cgk_options **ret)
{
	cgk_options *o;

	if (!ret)
		return -EINVAL;
	o = malloc(sizeof(*o));
	if (!o)
		return -ENOMEM;
	*o = cgk_default_options;
	*ret = o;
	return 0;
}

CGK_EXPORT cgk_options *cgk_options_free(cgk_options *opts)
{
	if (opts) {
		free(opts->escalations);
		free(opts->protected_file);
		free(opts);
	}
	return NULL;
}

CGK_EXPORT int cgk_options_set_signal(cgk_options *opts, int sig)
{
	if (!opts || !is_signal(sig))
		return -EINVAL;
	opts->signal = sig;
	return 0;
}

CGK_EXPORT int cgk_options_set_backend(cgk_options *opts, enum cgk_backend backend)
{
	if (!opts || (unsigned)backend >= CGK_BACKEND_COUNT)
		return -EINVAL;
	opts->backend = backend;
	return 0;
}

CGK_EXPORT int cgk_options_set_wait(cgk_options *opts, uint64_t ms)
{
	return opts ? (opts->wait_ms = ms, 0) : -EINVAL;
}

CGK_EXPORT int cgk_options_set_flags(cgk_options *opts, unsigned flags)
{
	if (!opts || (flags & ~(unsigned)KNOWN_FLAGS))
		return -EINVAL;
	opts->flags = flags;
	return 0;
}

CGK_EXPORT int cgk_options_add_escalation(cgk_options *opts, uint64_t after_ms, int sig)
{
	struct cgk_escalation *v;

	if (!opts || !is_signal(sig))
		return -EINVAL;
	v = cgk_grow(opts->escalations, &opts->cap_escalations, opts->n_escalations + 1,
		     sizeof(*v));
	if (!v)
		return -ENOMEM;
	opts->escalations = v;
	v[opts->n_escalations++] = (struct cgk_escalation){ .after_ms = after_ms, .signal = sig };
	return 0;
}

CGK_EXPORT int cgk_options_set_protected_file(cgk_options *opts, const char *path)
{
	char *copy = NULL;

	if (!opts)
		return -EINVAL;
	if (path && !(copy = strdup(path)))
		return -ENOMEM;
	free(opts->protected_file);
	opts->protected_file = copy;
	return 0;
}

CGK_EXPORT int cgk_options_set_confirm(cgk_options *opts, cgk_confirm_fn fn, void *userdata)
{
	return opts ? (opts->confirm = fn, opts->confirm_data = userdata, 0) : -EINVAL;
}

CGK_EXPORT int cgk_options_set_progress(cgk_options *opts, cgk_progress_fn fn, void *userdata)
{
	return opts ? (opts->progress = fn, opts->progress_data = userdata, 0) : -EINVAL;
}

CGK_EXPORT int cgk_options_set_cancel(cgk_options *opts, volatile sig_atomic_t *cancel)
{
	return opts ? (opts->cancel = cancel, 0) : -EINVAL;
}
