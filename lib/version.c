// SPDX-License-Identifier: LGPL-2.1-or-later
/* The version of the library itself, for programs built against an older
 * (or newer) cgkill.h than the libcgkill.so they run with. */
#include "internal.h"

CGK_EXPORT const char *cgk_version(void)
{
	return CGK_VERSION;
}
