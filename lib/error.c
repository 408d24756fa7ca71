/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Why a call failed, handed up beside its -errno, and errno names. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

static int error_vset(struct cgk_error *e, int err, const char *subject, const char *fmt,
		      va_list ap)
{
	char *what = NULL, *subj = NULL;

	/* Without memory the code alone travels: the message is then
	 * strerror's. */
	if (vasprintf(&what, fmt, ap) < 0)
		what = NULL;
	if (subject && !(subj = strdup(subject))) {
		free(what);
		what = NULL;
	}
	cgk_error_free(e);
	*e = (struct cgk_error){ .code = err, .subject = subj, .what = what };
	return err;
}

int cgk_error_about(struct cgk_error *e, int err, const char *subject, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	error_vset(e, err, subject, fmt, ap);
	va_end(ap);
	return err;
}

int cgk_error_wrap(struct cgk_error *e, int err, const char *fmt, ...)
{
	va_list ap;

	if (e->code == err)
		return err;
	va_start(ap, fmt);
	error_vset(e, err, NULL, fmt, ap);
	va_end(ap);
	return err;
}

void cgk_error_free(struct cgk_error *e)
{
	free(e->subject);
	free(e->what);
	*e = (struct cgk_error){ 0 };
}

#define E(x) { x, #x }
static const struct {
	int err;
	const char *name;
} errno_names[] = {
	E(EPERM),  E(ENOENT),	 E(ESRCH),     E(EINTR),     E(EIO),
	E(ENXIO),  E(E2BIG),	 E(EBADF),     E(ECHILD),    E(EAGAIN),
	E(ENOMEM), E(EACCES),	 E(EFAULT),    E(EBUSY),     E(EEXIST),
	E(EXDEV),  E(ENODEV),	 E(ENOTDIR),   E(EISDIR),    E(EINVAL),
	E(ENFILE), E(EMFILE),	 E(EFBIG),     E(ENOSPC),    E(EROFS),
	E(EMLINK), E(EPIPE),	 E(ERANGE),    E(EDEADLK),   E(ENAMETOOLONG),
	E(ENOSYS), E(ENOTEMPTY), E(ELOOP),     E(EOPNOTSUPP), E(ETIMEDOUT),
	E(ESTALE), E(EDQUOT),	 E(ECANCELED), E(EOWNERDEAD), E(EOVERFLOW),
	E(ENODATA), E(ENOTTY),	 E(ENOTSUP), E(EWOULDBLOCK), E(EDEADLOCK),
};
#undef E

const char *cgk_errno_name(int err, char *buf, size_t size)
{
	/* either sign; INT_MIN has no int magnitude */
	unsigned e = err < 0 ? 0u - (unsigned)err : (unsigned)err;

	/* aliases (EWOULDBLOCK, ENOTSUP, ...) come last: first match wins */
	for (size_t i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
		if ((unsigned)errno_names[i].err == e)
			return errno_names[i].name;
	snprintf(buf, size, "E%u", e);
	return buf;
}
