// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Pure parsers of kernel text: cgroup.procs lists, /proc/self/mountinfo and
 * /proc/PID/cgroup; and of durations given by users. No I/O here, so they
 * can be unit-tested and fuzzed; the input is untrusted text of a given
 * length (not necessarily NUL-terminated, except for cgk_parse_proc_cgroup
 * and cgk_parse_duration, whose contracts say it is).
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

/* The next item of the comma-separated list [s, s+n) from *pos, which
 * moves past it; false after the last (an empty list has one empty item). */
static bool next_item(const char *s, size_t n, size_t *pos, const char **item, size_t *len)
{
	size_t i = *pos, j = i;

	if (i > n)
		return false;
	while (j < n && s[j] != ',')
		j++;
	*item = s + i;
	*len = j - i;
	*pos = j + 1;
	return true;
}

/* Does the comma-separated list [s, s+n) contain item [c, c+cn)? */
static bool list_has(const char *s, size_t n, const char *c, size_t cn)
{
	const char *item;
	size_t len;

	for (size_t pos = 0; next_item(s, n, &pos, &item, &len);)
		if (len == cn && memcmp(item, c, cn) == 0)
			return true;
	return false;
}

/* Every item of list a is in list b. */
static bool list_subset(const char *a, size_t an, const char *b, size_t bn)
{
	const char *item;
	size_t len;

	for (size_t pos = 0; next_item(a, an, &pos, &item, &len);)
		if (!list_has(b, bn, item, len))
			return false;
	return true;
}

bool cgk_has_controller(const char *list, const char *controller)
{
	size_t cn = strlen(controller);

	if (cn == 0 || memchr(controller, ',', cn))
		return false;
	return list_has(list, strlen(list), controller, cn);
}

/* Which line of /proc/PID/cgroup: v2's "0::", the v1 one whose controllers
 * are those of a list, or the v1 one that has a controller among them. */
enum proc_line { LINE_V2, LINE_SET, LINE_HAS };

static int parse_proc_cgroup(const char *buf, const char *controllers, enum proc_line which,
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
		if (which == LINE_V2)
			match = id0 && cn == 0;
		else if (which == LINE_HAS)
			match = !id0 && list_has(c1 + 1, cn, controllers, wn);
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

int cgk_parse_proc_cgroup(const char *buf, const char *controllers, char *path, size_t size)
{
	return parse_proc_cgroup(buf, controllers, controllers ? LINE_SET : LINE_V2, path, size);
}

int cgk_parse_proc_cgroup_has(const char *buf, const char *controller, char *path, size_t size)
{
	if (controller && (!*controller || strchr(controller, ',')))
		return -EINVAL;
	return parse_proc_cgroup(buf, controller, controller ? LINE_HAS : LINE_V2, path, size);
}

/*
 * Durations: time spans as systemd.time(7) writes them. A unit is
 * u * 10^z microseconds, so that the digits of a fraction shift by z and
 * only what is left of them is multiplied, by u: nothing can overflow.
 */
struct time_unit {
	const char *name;
	uint32_t u;
	unsigned z;
};

static const struct time_unit time_units[] = {
	{ "usec", 1, 0 }, { "us", 1, 0 },
	{ "\xc2\xb5s", 1, 0 }, { "\xce\xbcs", 1, 0 },	/* micro sign, Greek mu */
	{ "msec", 1, 3 }, { "ms", 1, 3 },
	{ "seconds", 1, 6 }, { "second", 1, 6 }, { "sec", 1, 6 }, { "s", 1, 6 },
	{ "minutes", 6, 7 }, { "minute", 6, 7 }, { "min", 6, 7 }, { "m", 6, 7 },
	{ "hours", 36, 8 }, { "hour", 36, 8 }, { "hr", 36, 8 }, { "h", 36, 8 },
	{ "days", 864, 8 }, { "day", 864, 8 }, { "d", 864, 8 },
	{ "weeks", 6048, 8 }, { "week", 6048, 8 }, { "w", 6048, 8 },
	/* 30.44 and 365.25 days, as systemd counts them */
	{ "months", 26298, 8 }, { "month", 26298, 8 }, { "M", 26298, 8 },
	{ "years", 315576, 8 }, { "year", 315576, 8 }, { "y", 315576, 8 },
};

#define SPACES " \t\n\r"

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The longest unit name s starts with, or NULL. */
static const struct time_unit *unit_at(const char *s)
{
	const struct time_unit *best = NULL;

	for (size_t i = 0; i < sizeof(time_units) / sizeof(time_units[0]); i++) {
		size_t n = strlen(time_units[i].name);

		if (strncmp(s, time_units[i].name, n) == 0 && (!best || n > strlen(best->name)))
			best = &time_units[i];
	}
	return best;
}

/* A sum of milliseconds and microseconds; below_us: and something less
 * than a microsecond, which only rounds up. */
struct span {
	uint64_t ms;
	unsigned us;
	bool below_us;
};

static int span_add(struct span *sp, uint64_t ms, uint64_t us)
{
	uint64_t carry = us / 1000 + (us % 1000 + sp->us) / 1000;

	sp->us = (unsigned)((us % 1000 + sp->us) % 1000);
	if (ms > UINT64_MAX - sp->ms || carry > UINT64_MAX - sp->ms - ms)
		return -ERANGE;
	sp->ms += ms + carry;
	return 0;
}

/* Add whole.frac (frac: n digits) of unit. */
static int span_add_unit(struct span *sp, const struct time_unit *unit, uint64_t whole,
			 const char *frac, size_t n)
{
	uint64_t per_ms = unit->u, shifted = 0, carry = 0;
	int r;

	if (unit->z == 0) {
		r = span_add(sp, 0, whole);	/* microseconds */
	} else {
		for (unsigned i = 3; i < unit->z; i++)
			per_ms *= 10;
		if (whole > UINT64_MAX / per_ms)
			return -ERANGE;
		r = span_add(sp, whole * per_ms, 0);
	}
	if (r < 0)
		return r;
	/* Shifted z places, the first digits of the fraction count u us... */
	for (unsigned i = 0; i < unit->z; i++)
		shifted = shifted * 10 + (i < n ? (unsigned)(frac[i] - '0') : 0);
	/* ...and the rest is multiplied by u from its last digit on. */
	for (size_t i = n; i > unit->z; i--) {
		uint64_t t = (uint64_t)(frac[i - 1] - '0') * unit->u + carry;

		if (t % 10)
			sp->below_us = true;
		carry = t / 10;
	}
	return span_add(sp, 0, shifted * unit->u + carry);
}

/*
 * "250ms", "1.5s", "1min 30s", "2h5m", "infinity": spans of systemd.time(7),
 * added up, in whole milliseconds, rounded up so that only a span of 0 is
 * 0 ("do not wait"). Exact to the microsecond; less than that counts
 * only to round up. Unlike systemd, which reads a bare number as seconds,
 * a number needs a unit: "1000" meant as milliseconds (as kill --timeout
 * takes it) would wait 1000 times too long. Only a bare 0 needs none.
 * Digits are required on both sides of a decimal point.
 */
CGK_EXPORT int cgk_parse_duration(const char *text, uint64_t *ms)
{
	struct span sp = { 0 };
	const char *s = text, *begin;

	if (!text || !ms)
		return -EINVAL;
	s += strspn(s, SPACES);
	begin = s;
	if (strncmp(s, "infinity", 8) == 0 && s[8 + strspn(s + 8, SPACES)] == '\0') {
		*ms = UINT64_MAX;
		return 0;
	}
	if (!*s)
		return -EINVAL;
	while (*s) {
		const struct time_unit *unit;
		const char *num = s, *frac = "";
		uint64_t whole = 0;
		size_t n = 0;
		int r;

		if (!is_digit(*s))
			return -EINVAL;	/* a sign, a point first, junk */
		for (; is_digit(*s); s++) {
			unsigned d = (unsigned)(*s - '0');

			if (whole > (UINT64_MAX - d) / 10)
				return -ERANGE;
			whole = whole * 10 + d;
		}
		if (*s == '.') {
			frac = ++s;
			for (; is_digit(*s); s++)
				n++;
			if (!n)
				return -EINVAL;
		}
		s += strspn(s, SPACES);
		unit = unit_at(s);
		if (!unit) {
			/* only a 0 that is all there is goes without */
			if (*s || num != begin || whole || strspn(frac, "0") < n)
				return -EINVAL;
			break;
		}
		s += strlen(unit->name);
		r = span_add_unit(&sp, unit, whole, frac, n);
		if (r < 0)
			return r;
		s += strspn(s, SPACES);
	}
	if (sp.ms == UINT64_MAX && (sp.us || sp.below_us))
		return -ERANGE;
	*ms = sp.ms + (sp.us || sp.below_us);
	return 0;
}
