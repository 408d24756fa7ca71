// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The report object and its accessors, names of backends and guards, and
 * the JSON writer.
 *
 * JSON strings: process names and cgroup paths are arbitrary bytes, written
 * through text.c's filter (CGK_TEXT_JSON): valid UTF-8 is copied as is;
 * '"', '\\' and control characters (C0, DEL, C1) are escaped; every byte
 * that is not part of a valid UTF-8 sequence becomes U+FFFD, one for each
 * byte. The output is therefore always valid JSON, at the price of losing
 * those bytes.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

struct cgk_report *cgk_report_new(const char *path)
{
	struct cgk_report *rep = calloc(1, sizeof(*rep));

	if (rep && cgk_report_set_path(rep, path) < 0)
		rep = cgk_report_free(rep);
	return rep;
}

int cgk_report_set_path(struct cgk_report *rep, const char *path)
{
	char *copy = strdup(path ?: "");

	if (!copy)
		return -ENOMEM;
	free(rep->path);
	rep->path = copy;
	return 0;
}

int cgk_report_add_signal(struct cgk_report *rep, int sig, enum cgk_backend b)
{
	struct cgk_sent *v = cgk_grow(rep->signals, &rep->cap_signals, rep->n_signals + 1,
				      sizeof(*v));

	if (!v)
		return -ENOMEM;
	rep->signals = v;
	v[rep->n_signals++] = (struct cgk_sent){ .signal = sig, .backend = b };
	rep->backend = b;
	return 0;
}

void cgk_report_fail(struct cgk_report *rep, int err, const struct cgk_error *e)
{
	char nbuf[16], sbuf[128];
	bool said = e && e->code == err && e->what;
	const char *what = said ? e->what : strerror_r(-err, sbuf, sizeof(sbuf));

	free(rep->message);
	rep->error = err;
	if (asprintf(&rep->message, "%s: %s (%s)", said && e->subject ? e->subject : rep->path,
		     what, cgk_errno_name(err, nbuf, sizeof(nbuf))) < 0)
		rep->message = NULL;
}

int cgk_process_list_add(struct cgk_process_list *l, pid_t pid, const char *cgroup,
			 struct cgk_process **added)
{
	struct cgk_process *v = cgk_grow(l->v, &l->cap, l->n + 1, sizeof(*v));
	char *copy = strdup(cgroup);

	if (v)
		l->v = v;
	if (!v || !copy) {
		free(copy);
		return -ENOMEM;
	}
	v[l->n] = (struct cgk_process){ .pid = pid, .state = '?', .cgroup = copy };
	if (added)
		*added = &v[l->n];
	l->n++;
	return 0;
}

static void process_list_free(struct cgk_process_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].cgroup);
	free(l->v);
	*l = (struct cgk_process_list){ 0 };
}

CGK_EXPORT cgk_report *cgk_report_free(cgk_report *report)
{
	if (!report)
		return NULL;
	for (size_t i = 0; i < sizeof(report->lists) / sizeof(report->lists[0]); i++)
		process_list_free(&report->lists[i]);
	free(report->signals);
	free(report->path);
	free(report->message);
	free(report);
	return NULL;
}

/* Accessors: a NULL report reads as an empty one. */
/* NOLINTBEGIN(bugprone-macro-parentheses): field is a member name */
#define GETTER(type, field, none)                                         \
	CGK_EXPORT type cgk_report_##field(const cgk_report *report)      \
	{                                                                 \
		return report ? report->field : none;                     \
	}
GETTER(int, hierarchy, 0)
GETTER(enum cgk_backend, backend, CGK_BACKEND_AUTO)
GETTER(enum cgk_backend, fell_back_from, CGK_BACKEND_AUTO)
GETTER(int, fallback_errno, 0)
GETTER(enum cgk_guard, refused, CGK_GUARD_NONE)
GETTER(size_t, n_signals, 0)
GETTER(unsigned, cgroups, 0)
GETTER(unsigned, signalled, 0)
GETTER(unsigned, unreachable, 0)
GETTER(unsigned, not_permitted, 0)
GETTER(unsigned, reaped, 0)
GETTER(unsigned, reap_gone, 0)
GETTER(unsigned, reap_shared, 0)
GETTER(int, reap_errno, 0)
GETTER(bool, waited, false)
GETTER(bool, emptied, false)
GETTER(uint64_t, signal_ms, 0)
GETTER(uint64_t, empty_ms, 0)
GETTER(int, error, 0)
#undef GETTER
/* NOLINTEND(bugprone-macro-parentheses) */

CGK_EXPORT const char *cgk_report_path(const cgk_report *report)
{
	return report && report->path ? report->path : "";
}

CGK_EXPORT const char *cgk_report_message(const cgk_report *report)
{
	return report && report->error && report->message ? report->message : "";
}

CGK_EXPORT int cgk_report_signal(const cgk_report *report, size_t i, enum cgk_backend *backend)
{
	if (!report || i >= report->n_signals)
		return -ERANGE;
	if (backend)
		*backend = report->signals[i].backend;
	return report->signals[i].signal;
}

static const struct cgk_process_list *list_of(const cgk_report *report, enum cgk_list list)
{
	if (!report || (unsigned)list >= sizeof(report->lists) / sizeof(report->lists[0]))
		return NULL;
	return &report->lists[list];
}

CGK_EXPORT size_t cgk_report_n_processes(const cgk_report *report, enum cgk_list list)
{
	const struct cgk_process_list *l = list_of(report, list);

	return l ? l->n : 0;
}

CGK_EXPORT const cgk_process *cgk_report_process(const cgk_report *report, enum cgk_list list,
						 size_t i)
{
	const struct cgk_process_list *l = list_of(report, list);

	return l && i < l->n ? &l->v[i] : NULL;
}

CGK_EXPORT pid_t cgk_process_pid(const cgk_process *p)
{
	return p ? p->pid : 0;
}

CGK_EXPORT char cgk_process_state(const cgk_process *p)
{
	return p ? p->state : '?';
}

CGK_EXPORT const char *cgk_process_comm(const cgk_process *p)
{
	return p ? p->comm : "";
}

CGK_EXPORT const char *cgk_process_cgroup(const cgk_process *p)
{
	return p && p->cgroup ? p->cgroup : "";
}

static const char *const backend_names[CGK_BACKEND_COUNT] = {
	[CGK_BACKEND_AUTO] = "auto",
	[CGK_BACKEND_KERNEL] = "kernel",
	[CGK_BACKEND_FREEZE] = "freeze",
	[CGK_BACKEND_V1_FREEZE] = "v1-freeze",
	[CGK_BACKEND_LOOP] = "loop",
};

CGK_EXPORT const char *cgk_backend_name(enum cgk_backend backend)
{
	if ((unsigned)backend >= CGK_BACKEND_COUNT)
		return NULL;
	return backend_names[backend];
}

CGK_EXPORT int cgk_backend_from_name(const char *name, enum cgk_backend *backend)
{
	if (!name || !backend)
		return -EINVAL;
	for (unsigned i = 0; i < CGK_BACKEND_COUNT; i++)
		if (strcmp(name, backend_names[i]) == 0) {
			*backend = (enum cgk_backend)i;
			return 0;
		}
	return -EINVAL;
}

CGK_EXPORT const char *cgk_guard_name(enum cgk_guard guard)
{
	switch (guard) {
	case CGK_GUARD_NONE:
		return "none";
	case CGK_GUARD_ROOT:
		return "root";
	case CGK_GUARD_SELF:
		return "self";
	case CGK_GUARD_PID1:
		return "pid1";
	case CGK_GUARD_PROTECTED:
		return "protected";
	case CGK_GUARD_DECLINED:
		return "declined";
	}
	return NULL;
}

/* A JSON writer that tracks commas and indentation. */
struct jw {
	FILE *f;
	int depth;
	bool first;	/* no member written yet at this depth */
};

static void jw_indent(struct jw *w)
{
	fputc('\n', w->f);
	for (int i = 0; i < w->depth; i++)
		fputs("  ", w->f);
}

/* Start a value: comma and newline as needed, then "key": if key. */
static void jw_begin(struct jw *w, const char *key);

/* Write n bytes of s as a JSON string: the one filter of text.c. */
static void jw_strn(FILE *f, const char *s, size_t n)
{
	cgk_text_write(f, s, n, CGK_TEXT_JSON);
}

static void jw_begin(struct jw *w, const char *key)
{
	if (w->depth > 0) {
		if (!w->first)
			fputc(',', w->f);
		jw_indent(w);
	}
	w->first = false;
	if (key) {
		jw_strn(w->f, key, strlen(key));
		fputs(": ", w->f);
	}
}

static void jw_open(struct jw *w, const char *key, char bracket)
{
	jw_begin(w, key);
	fputc(bracket, w->f);
	w->depth++;
	w->first = true;
}

static void jw_close(struct jw *w, char bracket)
{
	bool empty = w->first;

	w->depth--;
	if (!empty)
		jw_indent(w);
	fputc(bracket, w->f);
	w->first = false;
}

/* A NUL-terminated string. */
static void jw_cstr(struct jw *w, const char *key, const char *s)
{
	jw_begin(w, key);
	jw_strn(w->f, s, strlen(s));
}

static void jw_null(struct jw *w, const char *key)
{
	jw_begin(w, key);
	fputs("null", w->f);
}

static void jw_uint(struct jw *w, const char *key, unsigned long long v)
{
	jw_begin(w, key);
	fprintf(w->f, "%llu", v);
}

static void jw_bool(struct jw *w, const char *key, bool v)
{
	jw_begin(w, key);
	fputs(v ? "true" : "false", w->f);
}

/* {"errno": "EACCES", "message": "..."}; the strerror() text when message
 * is empty. The name is the whole contract: errno numbers differ between
 * architectures, and an errno without a name is "E<number>". */
static void jw_error(struct jw *w, const char *key, int err, const char *message)
{
	char nbuf[16], sbuf[128];
	/* either sign is accepted; INT_MIN has no int magnitude */
	unsigned e = err < 0 ? 0u - (unsigned)err : (unsigned)err;

	jw_open(w, key, '{');
	jw_cstr(w, "errno", cgk_errno_name(err, nbuf, sizeof(nbuf)));
	if (message && *message)
		jw_cstr(w, "message", message);
	else if (e <= INT_MAX)
		jw_cstr(w, "message", strerror_r((int)e, sbuf, sizeof(sbuf)));
	else
		jw_cstr(w, "message", "Unknown error");
	jw_close(w, '}');
}

/* jw_error() for an errno (positive), null for 0. */
static void jw_errno(struct jw *w, const char *key, int err)
{
	if (err)
		jw_error(w, key, err, NULL);
	else
		jw_null(w, key);
}

static void jw_processes(struct jw *w, const char *key,
			 const struct cgk_process_list *l)
{
	jw_open(w, key, '[');
	for (size_t i = 0; i < l->n && l->v; i++) {
		const struct cgk_process *p = &l->v[i];

		/* one process a line: long lists stay readable */
		jw_begin(w, NULL);
		fprintf(w->f, "{\"pid\": %d, \"comm\": ", (int)p->pid);
		jw_strn(w->f, p->comm, strnlen(p->comm, sizeof(p->comm)));
		fputs(", \"state\": ", w->f);
		if (p->state)
			jw_strn(w->f, &p->state, 1);
		else
			fputs("null", w->f);
		fputs(", \"cgroup\": ", w->f);
		jw_strn(w->f, p->cgroup ?: "", strlen(p->cgroup ?: ""));
		fputc('}', w->f);
	}
	jw_close(w, ']');
}

static void jw_backend(struct jw *w, const char *key, enum cgk_backend b)
{
	const char *name = cgk_backend_name(b);

	/* AUTO means none: no backend ran, or there was no fallback */
	if (b == CGK_BACKEND_AUTO || !name)
		jw_null(w, key);
	else
		jw_cstr(w, key, name);
}

static void jw_report(struct jw *w, const struct cgk_report *r)
{
	const char *guard;

	jw_open(w, NULL, '{');
	jw_cstr(w, "path", r->path ?: "");
	if (r->hierarchy == 2 || r->hierarchy == 1)
		jw_cstr(w, "hierarchy", r->hierarchy == 2 ? "v2" : "v1");
	else
		jw_null(w, "hierarchy");
	jw_backend(w, "backend", r->backend);
	jw_backend(w, "fell_back_from", r->fell_back_from);
	jw_errno(w, "fallback_error", r->fallback_errno);
	guard = r->refused != CGK_GUARD_NONE ? cgk_guard_name(r->refused) : NULL;
	if (guard)
		jw_cstr(w, "refused", guard);
	else
		jw_null(w, "refused");

	jw_open(w, "signals", '[');
	for (size_t i = 0; i < r->n_signals; i++) {
		char buf[32];
		const char *name = cgk_signal_name(r->signals[i].signal, buf, sizeof(buf));

		if (!name) {
			snprintf(buf, sizeof(buf), "%d", r->signals[i].signal);
			name = buf;
		}
		jw_cstr(w, NULL, name);
	}
	jw_close(w, ']');
	/* The backend that sent each of those signals. */
	jw_open(w, "backends", '[');
	for (size_t i = 0; i < r->n_signals; i++)
		jw_cstr(w, NULL, cgk_backend_name(r->signals[i].backend) ?: "?");
	jw_close(w, ']');

	jw_uint(w, "cgroups", r->cgroups);
	jw_uint(w, "signalled", r->signalled);
	jw_uint(w, "unreachable", r->unreachable);
	jw_uint(w, "not_permitted", r->not_permitted);
	if (r->reap) {
		jw_open(w, "reap", '{');
		jw_uint(w, "released", r->reaped);
		jw_uint(w, "gone", r->reap_gone);
		jw_uint(w, "shared", r->reap_shared);
		jw_errno(w, "error", r->reap_errno);
		jw_close(w, '}');
	} else {
		jw_null(w, "reap");
	}
	jw_bool(w, "waited", r->waited);
	jw_bool(w, "emptied", r->emptied);
	jw_processes(w, "survivors", &r->lists[CGK_LIST_SURVIVORS]);
	jw_processes(w, "listed", &r->lists[CGK_LIST_LISTED]);
	jw_uint(w, "signal_ms", r->signal_ms);
	if (r->emptied)
		jw_uint(w, "empty_ms", r->empty_ms);
	else
		jw_null(w, "empty_ms");
	if (r->error)
		jw_error(w, "error", r->error, r->message);
	else
		jw_null(w, "error");
	jw_close(w, '}');
}

CGK_EXPORT int cgk_report_json(const cgk_report *const *reports, size_t n, FILE *out)
{
	struct jw w = { .f = out, .depth = 0, .first = true };

	if (!out || (n && !reports))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!reports[i])
			return -EINVAL;
	errno = 0;	/* so that a stream error reports its own cause */

	/* Every key of data/cgkill-report.schema.json, always: null or []
	 * where there is nothing to say. */
	jw_open(&w, NULL, '{');
	jw_uint(&w, "schema", CGK_JSON_SCHEMA);
	jw_cstr(&w, "version", CGK_VERSION);
	jw_open(&w, "targets", '[');
	for (size_t i = 0; i < n; i++)
		jw_report(&w, reports[i]);
	jw_close(&w, ']');
	jw_close(&w, '}');
	fputc('\n', out);
	if (fflush(out) == EOF || ferror(out))
		return errno > 0 ? -errno : -EIO;
	return 0;
}
