// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Pure parsers of kernel text: cgroup.procs lists, /proc/self/mountinfo and
 * /proc/PID/cgroup. No I/O here, so they can be unit-tested and fuzzed; the
 * input is untrusted text of a given length (not necessarily NUL-terminated,
 * except for cgk_parse_proc_cgroup, whose contract says it is).
 *
 * They are strict on purpose: the kernel never writes junk there, and a
 * misread pid or cgroup path could make us signal the wrong process, so
 * anything unexpected is -EINVAL rather than a guess.
 */
#include <limits.h>
#include <stdbool.h>
#include <string.h>

#include "internal.h"

int cgk_parse_pids(const char *buf, size_t len, struct cgk_pidvec *out)
{
	size_t start = out->n, i = 0;

	while (i < len) {
		unsigned long v = 0;
		size_t digits = 0;
		int r;

		for (; i < len && buf[i] >= '0' && buf[i] <= '9'; i++, digits++) {
			v = v * 10 + (unsigned long)(buf[i] - '0');
			if (v > INT_MAX)
				goto invalid;
		}
		/* an empty line, a sign, a space or any other byte is junk */
		if (digits == 0 || (i < len && buf[i] != '\n'))
			goto invalid;
		if (i < len)
			i++;	/* the newline; the last one may be missing */
		r = cgk_pidvec_push(out, (pid_t)v);
		if (r < 0) {
			out->n = start;
			return r;
		}
	}
	return 0;

invalid:
	/* all or nothing: do not leave half a list behind */
	out->n = start;
	return -EINVAL;
}

/* v1 controllers as their legacy names appear in super options and in
 * /proc/PID/cgroup; every other super option is a mount flag. */
static const char *const v1_controllers[] = {
	"blkio", "cpu",	   "cpuacct",	 "cpuset",  "debug", "devices",
	"freezer", "hugetlb", "io",	 "memory",  "misc",  "net_cls",
	"net_prio", "perf_event", "pids", "rdma",
};

static bool is_v1_controller(const char *s, size_t n)
{
	if (n > 5 && memcmp(s, "name=", 5) == 0)
		return true;
	for (size_t i = 0; i < sizeof(v1_controllers) / sizeof(v1_controllers[0]); i++)
		if (strlen(v1_controllers[i]) == n && memcmp(v1_controllers[i], s, n) == 0)
			return true;
	return false;
}

struct field {
	const char *s;
	size_t n;
};

static bool field_is(const struct field *f, const char *s)
{
	return f->n == strlen(s) && memcmp(f->s, s, f->n) == 0;
}

static bool field_is_number(const struct field *f)
{
	if (f->n == 0)
		return false;
	for (size_t i = 0; i < f->n; i++)
		if (f->s[i] < '0' || f->s[i] > '9')
			return false;
	return true;
}

/* Undo the kernel's mangling of " \t\n\\" as \ooo. A lone backslash, a bad
 * escape or an escaped NUL means the line is not what the kernel writes. */
static int unescape(const struct field *f, char *dst, size_t size)
{
	size_t o = 0;

	for (size_t i = 0; i < f->n; i++) {
		char c = f->s[i];

		if (c == '\\') {
			unsigned v = 0;

			if (f->n - i < 4)
				return -EINVAL;
			for (int k = 1; k <= 3; k++) {
				char d = f->s[i + k];

				if (d < '0' || d > '7')
					return -EINVAL;
				v = v * 8 + (unsigned)(d - '0');
			}
			if (v == 0 || v > 0xff)
				return -EINVAL;
			c = (char)v;
			i += 3;
		} else if (c == '\0') {
			return -EINVAL;
		}
		if (o + 1 >= size)
			return -ENAMETOOLONG;
		dst[o++] = c;
	}
	dst[o] = '\0';
	return 0;
}

/* Comma-separated controllers of a v1 mount from its super options. */
static int v1_controllers_of(const struct field *opts, char *dst, size_t size)
{
	size_t o = 0, i = 0;

	dst[0] = '\0';
	while (i <= opts->n) {
		size_t j = i;

		while (j < opts->n && opts->s[j] != ',')
			j++;
		if (is_v1_controller(opts->s + i, j - i)) {
			size_t need = (o ? 1 : 0) + (j - i);

			if (memchr(opts->s + i, '\0', j - i))
				return -EINVAL;
			if (o + need + 1 > size)
				return -ENAMETOOLONG;
			if (o)
				dst[o++] = ',';
			memcpy(dst + o, opts->s + i, j - i);
			o += j - i;
			dst[o] = '\0';
		}
		i = j + 1;
	}
	return 0;
}

#define MI_MAX_FIELDS 64

/* Unescape f to *pool, which moves past the string: at most f->n + 1 bytes,
 * as unescaping never lengthens. Mount paths stay below PATH_MAX. */
static int unescape_to_pool(const struct field *f, const char **out, char **pool)
{
	int r = unescape(f, *pool, f->n < PATH_MAX ? f->n + 1 : PATH_MAX);

	if (r < 0)
		return r;
	*out = *pool;
	*pool += strlen(*pool) + 1;
	return 0;
}

/*
 * One mountinfo line: ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] -
 * FSTYPE SOURCE SUPEROPTS. Returns 1 and fills m for a cgroup mount, 0 for
 * any other line, -errno for a malformed cgroup line. The root and the mount
 * point go to *pool, which moves past them: at most n + 2 bytes.
 */
static int parse_mountinfo_line(const char *s, size_t n, struct cgk_mount *m, char **pool)
{
	struct field f[MI_MAX_FIELDS];
	size_t nf = 0, i = 0, sep = 0;
	const struct field *fstype;
	int r;

	while (i < n) {
		size_t j = i;

		while (j < n && s[j] != ' ')
			j++;
		if (nf == MI_MAX_FIELDS)
			break;	/* more optional fields than anyone has */
		f[nf].s = s + i;
		f[nf].n = j - i;
		nf++;
		i = j + 1;
	}
	/* the separator comes after the six fixed fields and the optional ones */
	for (size_t k = 6; k < nf; k++)
		if (field_is(&f[k], "-")) {
			sep = k;
			break;
		}
	if (sep == 0 || sep + 1 >= nf)
		return 0;	/* cannot tell the fstype: not ours to judge */
	fstype = &f[sep + 1];
	if (field_is(fstype, "cgroup2"))
		m->version = 2;
	else if (field_is(fstype, "cgroup"))
		m->version = 1;
	else
		return 0;

	/* a cgroup line: every field must be there and look right */
	if (sep + 3 >= nf || nf > sep + 4)
		return -EINVAL;
	if (!field_is_number(&f[0]) || !field_is_number(&f[1]))
		return -EINVAL;
	for (size_t k = 0; k < sep; k++)
		if (f[k].n == 0)
			return -EINVAL;
	if (f[3].s[0] != '/' || f[4].s[0] != '/')
		return -EINVAL;
	r = unescape_to_pool(&f[3], &m->root, pool);
	if (r < 0)
		return r;
	r = unescape_to_pool(&f[4], &m->path, pool);
	if (r < 0)
		return r;
	if (m->version == 1)
		return v1_controllers_of(&f[sep + 3], m->controllers,
					 sizeof(m->controllers)) ?: 1;
	m->controllers[0] = '\0';
	return 1;
}

/* How many lines can be cgroup mounts: each has " - cgroup" (the separator
 * and the fstype; mountinfo escapes the spaces of paths), lines do not
 * overlap. */
static size_t count_cgroup_lines(const char *buf, size_t len)
{
	static const char mark[] = " - cgroup";
	size_t count = 0;

	for (const char *p = buf, *end = buf + len;
	     (p = memmem(p, (size_t)(end - p), mark, sizeof(mark) - 1)); p += sizeof(mark) - 1)
		count++;
	return count;
}

int cgk_parse_mountinfo(const char *buf, size_t len, struct cgk_mount **out,
			size_t *n)
{
	size_t bound = count_cgroup_lines(buf, len), count = 0, i = 0;
	struct cgk_mount *v;
	char *pool;

	*out = NULL;
	*n = 0;
	if (bound == 0)
		return 0;
	/* One block: the entries, a scratch entry for the line being parsed,
	 * then the strings, at most a line's length plus two NULs each. */
	v = malloc((bound + 1) * sizeof(*v) + len + 2 * bound);
	if (!v)
		return -ENOMEM;
	pool = (char *)(v + bound + 1);
	while (i < len) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - buf) : len;
		int r = parse_mountinfo_line(buf + i, end - i, &v[count], &pool);

		if (r < 0) {
			free(v);
			return r;
		}
		count += (size_t)r;
		i = end + 1;
	}
	if (count == 0) {
		free(v);
		v = NULL;
	}
	*out = v;
	*n = count;
	return 0;
}

/* Does the comma-separated list [s, s+n) contain item [c, c+cn)? */
static bool list_has(const char *s, size_t n, const char *c, size_t cn)
{
	size_t i = 0;

	while (i <= n) {
		size_t j = i;

		while (j < n && s[j] != ',')
			j++;
		if (j - i == cn && memcmp(s + i, c, cn) == 0)
			return true;
		i = j + 1;
	}
	return false;
}

/* Every item of list a is in list b. */
static bool list_subset(const char *a, size_t an, const char *b, size_t bn)
{
	size_t i = 0;

	while (i <= an) {
		size_t j = i;

		while (j < an && a[j] != ',')
			j++;
		if (!list_has(b, bn, a + i, j - i))
			return false;
		i = j + 1;
	}
	return true;
}

bool cgk_has_controller(const char *list, const char *controller)
{
	size_t cn = strlen(controller);

	if (cn == 0 || memchr(controller, ',', cn))
		return false;
	return list_has(list, strlen(list), controller, cn);
}

int cgk_parse_proc_cgroup(const char *buf, const char *controllers,
			  char *path, size_t size)
{
	size_t wn = controllers ? strlen(controllers) : 0;
	const char *s = buf;

	while (*s) {
		const char *eol = strchrnul(s, '\n');
		const char *c1 = memchr(s, ':', (size_t)(eol - s));
		const char *c2, *p;
		size_t cn, pn;
		bool id0, match;

		if (!c1 || c1 == s)
			return -EINVAL;
		for (const char *d = s; d < c1; d++)
			if (*d < '0' || *d > '9')
				return -EINVAL;
		c2 = memchr(c1 + 1, ':', (size_t)(eol - c1 - 1));
		if (!c2)
			return -EINVAL;
		/* the path is the rest of the line; it may itself hold ':' */
		p = c2 + 1;
		pn = (size_t)(eol - p);
		if (pn == 0 || p[0] != '/')
			return -EINVAL;
		cn = (size_t)(c2 - c1 - 1);
		id0 = c1 - s == 1 && s[0] == '0';
		if (!controllers)
			match = id0 && cn == 0;
		else
			/* v1: the same set of controllers, in any order */
			match = !id0 && list_subset(c1 + 1, cn, controllers, wn) &&
				list_subset(controllers, wn, c1 + 1, cn);
		if (match) {
			if (pn + 1 > size)
				return -ENAMETOOLONG;
			memcpy(path, p, pn);
			path[pn] = '\0';
			return 0;
		}
		s = *eol ? eol + 1 : eol;
	}
	return -ENOENT;
}
