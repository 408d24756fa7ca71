/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The protected list (cgkill(1), FILES), read and parsed here only: for
 * the guard (guard.c), and through cgk_protected_list() for whoever else
 * must know it (cgkilld checks its rules' globs against it), so that one
 * set of rules holds everywhere. What cannot be understood fails closed:
 * a NUL byte in a line, a ".." component.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

#define PROTECTED_FILE "/etc/cgkill/protected"
#define LIST_MAX (1 << 20)
#define BUILTIN_NAME "the built-in list"

static const char default_protected[] = "/init.scope\n/system.slice\n/user.slice\n/machine.slice\n";

/* The entry s[0..len) as a glob with one '/' before each component: "//",
 * "/./", a trailing '/' and a missing leading '/' are slips, not a wish to
 * match nothing. A ".." component names no cgroup: -EINVAL. */
static int normalise(const char *s, size_t len, char **glob)
{
	const char *end = s + len;
	char *w = malloc(len + 2), *p = w;

	if (!w)
		return -ENOMEM;
	while (s < end) {
		const char *slash = memchr(s, '/', (size_t)(end - s)) ?: end;
		size_t n = (size_t)(slash - s);

		if (n == 2 && s[0] == '.' && s[1] == '.') {
			free(w);
			return -EINVAL;
		}
		if (n && (n != 1 || *s != '.')) {
			*p++ = '/';
			p = mempcpy(p, s, n);
		}
		s = slash + (slash < end);
	}
	if (p == w)
		*p++ = '/';
	*p = '\0';
	*glob = w;
	return 0;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* The entry of line[0..len): without blanks around it (CR too: CR LF line
 * ends) and an inline comment (from a '#' first or after a blank: a '#'
 * inside a name is part of it). Its length (0: none); *full: its length
 * with the trailing blanks when no comment followed them, since a cgroup
 * name may end in blanks. */
static size_t entry_of(const char **line, size_t len, size_t *full)
{
	const char *s = *line;
	size_t n = len, i = 0;
	bool comment;

	while (n && blank(*s)) {
		s++;
		n--;
	}
	while (i < n && !(s[i] == '#' && (!i || blank(s[i - 1]))))
		i++;
	comment = i < n;
	n = i;
	*full = n;
	while (n && blank(s[n - 1]))
		n--;
	if (comment)
		*full = n;
	*line = s;
	return n;
}

/* visit for the entry s[0..n) as a glob, and again with its trailing
 * blanks (up to full) if it has some: fail closed. */
static int visit_entry(const char *s, size_t n, size_t full, size_t line, cgk_protected_visit *visit,
		       void *arg, struct cgk_protected_fault *fault)
{
	struct cgk_protected_entry e = { .text = s, .len = n, .line = line };
	_cleanup_free_ char *glob = NULL, *blanks = NULL;
	int r = normalise(s, n, &glob);

	if (r == 0 && full != n)
		r = normalise(s, full, &blanks);
	if (r == -EINVAL)
		fault->what = "a \"..\" component in the entry";
	if (r < 0)
		return r;
	e.glob = glob;
	r = visit(&e, arg);
	if (r || !blanks)
		return r;
	e.glob = blanks;
	return visit(&e, arg);
}

int cgk_protected_walk(const char *text, size_t len, cgk_protected_visit *visit, void *arg,
		       struct cgk_protected_fault *fault)
{
	const char *line = text, *end = text + len;

	for (size_t lineno = 1; line < end; lineno++) {
		const char *nl = memchr(line, '\n', (size_t)(end - line)) ?: end, *s = line;
		size_t n, full;
		int r;

		*fault = (struct cgk_protected_fault){ .line = lineno };
		/* As a C string the line would end there and lose the rest. */
		if (memchr(line, '\0', (size_t)(nl - line))) {
			fault->what = "a NUL byte in the line";
			return -EINVAL;
		}
		n = entry_of(&s, (size_t)(nl - line), &full);
		line = nl + (nl < end);
		if (!n)
			continue;
		r = visit_entry(s, n, full, lineno, visit, arg, fault);
		if (r)
			return r;
	}
	*fault = (struct cgk_protected_fault){ 0 };
	return 0;
}

/* The list file: a regular file of at most 1 MiB (symlinks are fine
 * here: config management makes them), read to its real length. */
static int read_list(const char *file, char **buf, size_t *len)
{
	_cleanup_close_ int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	return cgk_read_fd(fd, LIST_MAX, buf, len);
}

int cgk_protected_load(const char *file, char **text, size_t *len, const char **name)
{
	const char *path = file ?: secure_getenv("CGKILL_PROTECTED") ?: PROTECTED_FILE;
	int r = read_list(path, text, len);

	*name = path;
	if (r != -ENOENT || file)
		return r;
	*text = strdup(default_protected);
	if (!*text)
		return -ENOMEM;
	*len = sizeof(default_protected) - 1;
	*name = BUILTIN_NAME;
	return 0;
}

struct public_walk {
	cgk_protected_fn fn;
	const char *list;
	void *userdata;
};

static int public_visit(const struct cgk_protected_entry *e, void *arg)
{
	struct public_walk *w = arg;
	_cleanup_free_ char *entry = strndup(e->text, e->len);

	if (!entry)
		return -ENOMEM;
	return w->fn(e->glob, entry, w->list, (unsigned)e->line, w->userdata);
}

CGK_EXPORT int cgk_protected_list(const char *file, cgk_protected_fn fn, void *userdata, char *why,
				  size_t size)
{
	_cleanup_free_ char *text = NULL;
	struct cgk_protected_fault fault;
	struct public_walk w = { .fn = fn, .userdata = userdata };
	size_t len = 0;
	int r;

	if (!fn || (!why && size))
		return -EINVAL;
	r = cgk_protected_load(file, &text, &len, &w.list);
	if (r < 0) {
		if (size)
			snprintf(why, size, "cannot read the protected list %s: %s", w.list, strerror(-r));
		return r;
	}
	r = cgk_protected_walk(text, len, public_visit, &w, &fault);
	if (r < 0 && fault.what && size)
		snprintf(why, size, "%s:%zu: %s", w.list, fault.line, fault.what);
	else if (r < 0 && size)
		snprintf(why, size, "cannot check the protected list %s: %s", w.list, strerror(-r));
	return r;
}
