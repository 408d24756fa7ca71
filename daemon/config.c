/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgkilld.conf: INI in systemd's style, read by our own small parser (no
 * library dependency; fuzzed by fuzz/fuzz-conf.c, which includes this
 * file). Pure: nothing here looks at the system but conf_load() reading
 * files.
 *
 *	[Daemon]                 DryRun= EventLog= MetricsFile= ProtectedFile= PollInterval= ...
 *	[Rule]                   one per rule, any number, in any file
 *	Name=bombs
 *	Match=cgkill-test.*\/job-*
 *	Trigger=pids-max pids-current oom-kill
 *	...
 *
 * Lines: blanks around keys and values are ignored; '#' or ';' first
 * starts a comment. Errors name file:line and what is wrong; an error
 * anywhere makes the whole configuration invalid.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgkilld.h"

#define CONF_MAX_SIZE (1 << 20)
#define CONF_MAX_RULES 4096
#define NAME_MAX_LEN 64
#define TRIGGER_NAMES \
	"pids-max, pids-current, fork-rate, oom-kill, memory-pressure, cpu-pressure, io-pressure, memory-pressure-level, swap"
/* the kernel's bounds of a PSI trigger's window (kernel/sched/psi.c) */
#define PSI_WINDOW_MIN_MS 500
#define PSI_WINDOW_MAX_MS 10000

static bool match_has_wildcard(const struct rule *r)
{
	for (size_t i = 0; i < r->ncomp; i++)
		if (strpbrk(r->comp[i], "*?[\\"))
			return true;
	return false;
}

bool rule_sends_sigkill(const struct rule *r)
{
	if (r->action != ACT_KILL)
		return false;
	if (r->sig == SIGKILL)
		return true;
	for (size_t i = 0; i < r->nesc; i++)
		if (r->esc[i].sig == SIGKILL)
			return true;
	return false;
}

static void strv_free(char **v)
{
	for (char **p = v; p && *p; p++)
		free(*p);
	free(v);
}

static void globs_free(struct globs *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->v[i]);
	free(g->v);
	*g = (struct globs){ 0 };
}

static void rule_free(struct rule *r)
{
	globs_free(&r->prefer);
	globs_free(&r->avoid);
	globs_free(&r->omit);
	strv_free(r->exec_pre);
	strv_free(r->exec_post);
	free(r->name);
	free(r->match);
	for (size_t i = 0; i < r->ncomp; i++)
		free(r->comp[i]);
	free(r->comp);
	free(r->file);
}

void conf_free(struct config *cfg)
{
	for (size_t i = 0; i < cfg->nrules; i++)
		rule_free(&cfg->rules[i]);
	free(cfg->rules);
	free(cfg->event_log);
	free(cfg->metrics_file);
	free(cfg->protected_file);
	conf_init(cfg);
}

struct ctx {
	struct config *cfg;
	const char *file;
	unsigned line;
	conf_error_fn err;
	void *ud;
};

/*
 * A message longer than CONF_MSG_MAX keeps its start (the key and the
 * value's start) and its end (the value's end and what is wrong: the
 * parsers say where a fault in the middle is), and says how many bytes it
 * left out: a 100 kB Match= must not hide the reason behind a cut.
 */
#define CONF_MSG_MAX 1024
#define CONF_MSG_HEAD 320

/* Back from p to the start of a UTF-8 character (s: the text's start). */
static const char *char_start(const char *s, const char *p)
{
	while (p > s && ((unsigned char)*p & 0xc0) == 0x80)
		p--;
	return p;
}

static void conf_reportv(conf_error_fn err, void *ud, int pri, const char *file, unsigned line,
			 const char *fmt, va_list ap)
{
	char *msg = NULL, *cut = NULL;
	size_t len;

	if (!err)
		return;
	if (vasprintf(&msg, fmt, ap) < 0) {
		err(ud, pri, file, line, "out of memory");
		return;
	}
	len = strlen(msg);
	if (len > CONF_MSG_MAX) {
		const char *head = char_start(msg, msg + CONF_MSG_HEAD);
		const char *tail = char_start(msg, msg + len - (CONF_MSG_MAX - CONF_MSG_HEAD));

		if (asprintf(&cut, "%.*s[... %zu bytes left out of %zu ...]%s", (int)(head - msg), msg,
			     (size_t)(tail - head), len, tail) < 0)
			cut = NULL;
	}
	err(ud, pri, file, line, cut ? cut : msg);
	free(cut);
	free(msg);
}

void conf_report(conf_error_fn err, void *ud, int pri, const char *file, unsigned line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	conf_reportv(err, ud, pri, file, line, fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 3, 4))) static void error_at(struct config *cfg, struct ctx *x,
							   const char *fmt, ...)
{
	va_list ap;

	cfg->errors++;
	va_start(ap, fmt);
	conf_reportv(x->err, x->ud, LOG_PRI_ERR, x->file, x->line, fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 2, 3))) static void warn_at(struct ctx *x, const char *fmt, ...)
{
	va_list ap;

	x->cfg->warnings++;
	va_start(ap, fmt);
	conf_reportv(x->err, x->ud, LOG_PRI_WARNING, x->file, x->line, fmt, ap);
	va_end(ap);
}

#define ERR(...) error_at(x->cfg, x, __VA_ARGS__)

/*
 * The keys, one line each in keys[] below: a key's name, its section, the
 * parser that sets its field, its bounds and its default (applied by the
 * same parser, so the default is a value the key accepts), and one line
 * of doc. cgkilld.conf(5) has a table of them that tests/test-conf-keys.c
 * checks against this one.
 */
enum { SEC_NONE = 0, SEC_DAEMON, SEC_RULE, SEC_IGNORED };

struct key;
/* Set the field of k in obj (struct config or struct rule) from v, or
 * report what is wrong. */
typedef void key_parse_fn(struct ctx *x, const struct key *k, void *obj, const char *v);

struct key {
	const char *name;
	int section;		/* SEC_DAEMON or SEC_RULE */
	key_parse_fn *parse;
	size_t off;		/* of its field in struct config or struct rule */
	uint64_t min, max;	/* numbers and percentages; spans in ms */
	uint64_t infinity;	/* what "infinity" sets (key_count_or_infinity) */
	const char *const *names;	/* the words key_choice takes */
	const char *def;	/* the default, NULL if none */
	const char *want;	/* what a bad value is told, after "Key=value: " */
	const char *doc;	/* one line, as in the man page's table */
};

static void *field(const struct key *k, void *obj)
{
	return (char *)obj + k->off;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static int parse_bool(const char *v, bool *b)
{
	static const char *const yes[] = { "1", "yes", "y", "true", "t", "on" };
	static const char *const no[] = { "0", "no", "n", "false", "f", "off" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(*yes); i++) {
		if (!strcasecmp(v, yes[i])) {
			*b = true;
			return 0;
		}
		if (!strcasecmp(v, no[i])) {
			*b = false;
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_uint(const char *v, unsigned min, unsigned max, unsigned *out)
{
	unsigned long long n = 0;

	if (!*v)
		return -EINVAL;
	for (const char *p = v; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		n = n * 10 + (unsigned)(*p - '0');
		if (n > max)
			return -ERANGE;
	}
	if (n < min)
		return -ERANGE;
	*out = (unsigned)n;
	return 0;
}

static int set_str(char **dst, const char *v)
{
	char *s = strdup(v);

	if (!s)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

/* A finite duration of systemd.time(7), through the library. */
static bool duration(struct ctx *x, const char *key, const char *v, uint64_t *ms)
{
	uint64_t t;
	int r = cgk_parse_duration(v, &t);

	if (r < 0) {
		ERR("%s=%s: not a time span (e.g. 500ms, 2s, 1min)", key, v);
		return false;
	}
	if (t == UINT64_MAX) {
		ERR("%s=%s: must be finite", key, v);
		return false;
	}
	*ms = t;
	return true;
}


static bool name_ok(const char *v)
{
	size_t n = strlen(v);

	if (!n || n > NAME_MAX_LEN)
		return false;
	for (const char *p = v; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("_-.@:", *p)))
			return false;
	return true;
}

/* Match=: a glob relative to the v2 mount, components split on '/'. A
 * leading '/' is allowed (and dropped); empty, "." and ".." components,
 * and a glob that cannot name a cgroup, are errors. */
static void key_match(struct ctx *x, const struct key *k __attribute__((unused)), void *obj, const char *v)
{
	struct rule *r = obj;
	char **comp = NULL, *norm, *w;
	size_t n = 0, len;
	const char *s = v;

	while (*s == '/')
		s++;
	len = strlen(s);
	if (!len) {
		ERR("Match=%s: names the root cgroup, which is never acted on", v);
		return;
	}
	norm = malloc(len + 1);
	if (!norm) {
		ERR("Match: out of memory");
		return;
	}
	w = norm;
	while (*s) {
		const char *slash = strchr(s, '/');
		size_t cl = slash ? (size_t)(slash - s) : strlen(s);
		char **grown;

		if (cl == 0 || (cl == 1 && s[0] == '.') || (cl == 2 && s[0] == '.' && s[1] == '.')) {
			ERR("Match=%s: an empty, \".\" or \"..\" component at byte %zu", v, (size_t)(s - v));
			goto fail;
		}
		if (cl > 255) {
			ERR("Match=%s: the component at byte %zu is %zu bytes long (at most 255)", v, (size_t)(s - v), cl);
			goto fail;
		}
		grown = realloc(comp, (n + 1) * sizeof(*comp));
		if (!grown)
			goto oom;
		comp = grown;
		comp[n] = strndup(s, cl);
		if (!comp[n])
			goto oom;
		n++;
		if (w != norm)
			*w++ = '/';
		w = mempcpy(w, s, cl);
		s += cl;
		if (*s == '/') {
			s++;
			if (!*s) {
				ERR("Match=%s: trailing slash", v);
				goto fail;
			}
		}
	}
	*w = '\0';
	for (size_t i = 0; i < r->ncomp; i++)
		free(r->comp[i]);
	free(r->comp);
	free(r->match);
	r->comp = comp;
	r->ncomp = n;
	r->match = norm;
	return;
oom:
	ERR("Match: out of memory");
fail:
	for (size_t i = 0; i < n; i++)
		free(comp[i]);
	free(comp);
	free(norm);
}

static const struct {
	const char *name;
	unsigned bit;
} trigger_names[] = {
	{ "pids-max", TRIG_PIDS_MAX },
	{ "pids-current", TRIG_PIDS_CURRENT },
	/* pids-max too: where the kernel cannot count forks, and for the
	 * bombs that exec */
	{ "fork-rate", TRIG_FORK_RATE | TRIG_PIDS_MAX },
	{ "oom-kill", TRIG_OOM_KILL },
	{ "memory-pressure", TRIG_MEMORY_PRESSURE },
	{ "cpu-pressure", TRIG_CPU_PRESSURE },
	{ "io-pressure", TRIG_IO_PRESSURE },
	{ "memory-pressure-level", TRIG_PRESSURE_LEVEL },
	{ "swap", TRIG_SWAP },
	{ NULL, 0 },
};

const char *trigger_name(unsigned bit)
{
	for (size_t i = 0; trigger_names[i].name; i++)
		if (trigger_names[i].bit == bit)
			return trigger_names[i].name;
	/* a bit that comes with others ("fork-rate" brings pids-max) */
	for (size_t i = 0; trigger_names[i].name; i++)
		if (trigger_names[i].bit & bit)
			return trigger_names[i].name;
	return "?";
}

unsigned trigger_bit(const char *name)
{
	for (size_t i = 0; trigger_names[i].name; i++)
		if (!strcmp(trigger_names[i].name, name))
			return trigger_names[i].bit;
	return 0;
}

static void key_trigger(struct ctx *x, const struct key *k __attribute__((unused)), void *obj, const char *v)
{
	struct rule *r = obj;
	size_t i;
	const char *s = v;

	if (!*v) {
		r->triggers = 0;
		return;
	}
	while (*s) {
		size_t n;

		while (blank(*s))
			s++;
		n = strcspn(s, " \t\r");
		if (!n)
			break;
		for (i = 0; trigger_names[i].name; i++)
			if (strlen(trigger_names[i].name) == n && !strncmp(s, trigger_names[i].name, n))
				break;
		if (trigger_names[i].name)
			r->triggers |= trigger_names[i].bit;
		else
			ERR("Trigger=: unknown trigger \"%.*s\" (" TRIGGER_NAMES ")", (int)(n > 64 ? 64 : n), s);
		s += n;
	}
}

static void key_escalate(struct ctx *x, const struct key *k, void *obj, const char *v)
{
	struct rule *r = obj;
	char span[128];
	const char *sp;
	size_t n;
	uint64_t ms;
	int sig;

	if (!*v) {
		r->nesc = 0;
		return;
	}
	/* "DURATION SIGNAL": the signal is the last word */
	sp = strrchr(v, ' ');
	if (!sp)
		sp = strrchr(v, '\t');
	if (!sp) {
		ERR("Escalate=%s: want a time and a signal, e.g. \"5s KILL\"", v);
		return;
	}
	n = (size_t)(sp - v);
	while (n && blank(v[n - 1]))
		n--;
	if (!n || n >= sizeof(span)) {
		ERR("Escalate=%s: want a time and a signal, e.g. \"5s KILL\"", v);
		return;
	}
	memcpy(span, v, n);
	span[n] = '\0';
	if (!duration(x, k->name, span, &ms))
		return;
	if (cgk_signal_from_name(sp + 1, &sig) < 0) {
		ERR("Escalate=%s: unknown signal %s", v, sp + 1);
		return;
	}
	if (r->nesc >= CGKILLD_MAX_ESCALATIONS) {
		ERR("Escalate=: at most %d escalations", CGKILLD_MAX_ESCALATIONS);
		return;
	}
	r->esc[r->nesc++] = (struct escalation){ .after_ms = ms, .sig = sig };
}

/* "N%" or "N", min..max */
static int parse_percent(const char *v, unsigned min, unsigned max, unsigned *out)
{
	char num[16];
	size_t n = strlen(v);

	if (n && v[n - 1] == '%')
		n--;
	if (!n || n >= sizeof(num))
		return -EINVAL;
	memcpy(num, v, n);
	num[n] = '\0';
	return parse_uint(num, min, max, out);
}

/* The next blank-separated word of *s, with '...' and "..." quoting
 * (backslash escapes the next character inside double quotes); NULL at
 * the end, *err set on an unterminated quote or no memory. */
static char *next_word(const char **s, bool *err)
{
	const char *p = *s;
	char *w, *o;

	while (blank(*p))
		p++;
	if (!*p) {
		*s = p;
		return NULL;
	}
	w = o = calloc(1, strlen(p) + 1);
	if (!w) {
		*err = true;
		return NULL;
	}
	while (*p && !blank(*p)) {
		if (*p == '\'' || *p == '"') {
			char q = *p++;

			while (*p && *p != q) {
				if (q == '"' && *p == '\\' && p[1])
					p++;
				*o++ = *p++;
			}
			if (*p != q) {
				free(w);
				*err = true;
				return NULL;
			}
			p++;
		} else {
			*o++ = *p++;
		}
	}
	*o = '\0';
	*s = p;
	return w;
}

/* ExecPreKill=, ExecPostKill=: an absolute path and its arguments, split
 * at blanks with shell-like quotes; no shell. Empty: no hook. */
static void key_command(struct ctx *x, const struct key *k, void *obj, const char *v)
{
	char ***dst = field(k, obj);
	const char *key = k->name;
	char **argv = NULL, *w;
	size_t n = 0;
	bool err = false;

	while ((w = next_word(&v, &err))) {
		char **grown = realloc(argv, (n + 2) * sizeof(*argv));

		if (!grown) {
			free(w);
			err = true;
			break;
		}
		argv = grown;
		argv[n++] = w;
		argv[n] = NULL;
	}
	if (err) {
		ERR("%s=: an unterminated quote (or out of memory)", key);
	} else if (n && argv[0][0] != '/') {
		ERR("%s=%s: the command must be an absolute path", key, argv[0]);
		err = true;
	}
	if (err) {
		strv_free(argv);
		return;
	}
	strv_free(*dst);
	*dst = argv;
}

/* Has the glob ".." as a component? ("foo..bar" is a name.) */
static bool dotdot(const char *p)
{
	for (const char *q = p; (q = strstr(q, "..")); q++)
		if ((q == p || q[-1] == '/') && (q[2] == '\0' || q[2] == '/'))
			return true;
	return false;
}

/* Prefer=, Avoid=, Omit=: globs, blank-separated, added to the list;
 * empty clears it. */
static void key_globs(struct ctx *x, const struct key *k, void *obj, const char *v)
{
	struct globs *g = field(k, obj);
	const char *key = k->name;
	char *w;
	bool err = false;

	if (!*v) {
		globs_free(g);
		return;
	}
	while ((w = next_word(&v, &err))) {
		char *p = w, **grown;

		while (*p == '/')
			p++;
		if (!*p || dotdot(p)) {
			ERR("%s=%s: a glob must name a cgroup below the matched one (no \"..\")", key, w);
			free(w);
			continue;
		}
		memmove(w, p, strlen(p) + 1);
		grown = realloc(g->v, (g->n + 1) * sizeof(*g->v));
		if (!grown) {
			free(w);
			err = true;
			break;
		}
		g->v = grown;
		g->v[g->n++] = w;
	}
	if (err)
		ERR("%s=: an unterminated quote (or out of memory)", key);
}

static void key_pressure_limit(struct ctx *x, const struct key *k __attribute__((unused)), void *obj, const char *v)
{
	struct rule *r = obj;
	const char *pct = v;
	unsigned u;

	if (!strncmp(v, "some", 4) && blank(v[4])) {
		r->pressure_full = false;
		pct = v + 4;
	} else if (!strncmp(v, "full", 4) && blank(v[4])) {
		r->pressure_full = true;
		pct = v + 4;
	}
	while (blank(*pct))
		pct++;
	if (parse_percent(pct, 1, 100, &u) < 0)
		ERR("PressureLimit=%s: want [some|full] and a share of the window from 1%% to 100%%, e.g. \"full 20%%\"", v);
	else
		r->pressure_pct = u;
}

/* ---- the generic parsers ---- */

static void key_bool(struct ctx *x, const struct key *k, void *obj, const char *v)
{
	if (parse_bool(v, field(k, obj)) < 0)
		ERR("%s=%s: not a boolean (yes or no)", k->name, v);
}

/* A number from min to max. */
static void key_count(struct ctx *x, const struct key *k, void *obj, const char *v)
{
	if (parse_uint(v, (unsigned)k->min, (unsigned)k->max, field(k, obj)) < 0)
		ERR("%s=%s: %s", k->name, v, k->want);
}

/* A number from min to max, or "infinity" (which sets k->infinity). */
static void key_count_or_infinity(struct ctx *x, const struct key *k, void *obj, const char *v)
{
	if (!strcmp(v, "infinity"))
		*(unsigned *)field(k, obj) = (unsigned)k->infinity;
	else
		key_count(x, k, obj, v);
}

/* "N%" or "N", from min to max. */
static void key_percent(struct ctx *x, const struct key *k, void *obj, const char *v)
{
	if (parse_percent(v, (unsigned)k->min, (unsigned)k->max, field(k, obj)) < 0)
		ERR("%s=%s: %s", k->name, v, k->want);
}

/* A finite time span from min to max ms. */
static void key_span(struct ctx *x, const struct key *k, void *obj, const char *v)
{
	uint64_t ms;

	if (!duration(x, k->name, v, &ms))
		return;
	if (ms < k->min || ms > k->max)
		ERR("%s=%s: %s", k->name, v, k->want);
	else
		*(uint64_t *)field(k, obj) = ms;
}

/* One of k->names: its index, into an int (or an enum). */
static void key_choice(struct ctx *x, const struct key *k, void *obj, const char *v)
{
	for (int i = 0; k->names[i]; i++)
		if (!strcmp(v, k->names[i])) {
			*(int *)field(k, obj) = i;
			return;
		}
	ERR("%s=%s: %s", k->name, v, k->want);
}

/* An absolute path, or empty for none (EventLog=, ProtectedFile=). */
static void key_path(struct ctx *x, const struct key *k, void *obj, const char *v)
{
	char **dst = field(k, obj);

	if (!*v) {
		free(*dst);
		*dst = NULL;
	} else if (v[0] != '/') {
		ERR("%s=%s: not an absolute path", k->name, v);
	} else if (set_str(dst, v) < 0) {
		ERR("%s: out of memory", k->name);
	}
}

static void key_signal(struct ctx *x, const struct key *k, void *obj, const char *v)
{
	if (cgk_signal_from_name(v, field(k, obj)) < 0)
		ERR("%s=%s: unknown signal", k->name, v);
}

static void key_backend(struct ctx *x, const struct key *k, void *obj, const char *v)
{
	enum cgk_backend b;

	if (cgk_backend_from_name(v, &b) < 0)
		ERR("%s=%s: unknown backend", k->name, v);
	else
		*(int *)field(k, obj) = (int)b;
}

static void key_name(struct ctx *x, const struct key *k, void *obj, const char *v)
{
	if (!name_ok(v))
		ERR("%s=%s: want 1 to %d letters, digits or _-.@:", k->name, v, NAME_MAX_LEN);
	else if (set_str(field(k, obj), v) < 0)
		ERR("%s: out of memory", k->name);
}

/* PressureOf=: cgroup or system. */
static void key_pressure_of(struct ctx *x, const struct key *k, void *obj, const char *v)
{
	bool *system = field(k, obj);

	if (!strcmp(v, "cgroup") || !strcmp(v, "system"))
		*system = v[0] == 's';
	else
		ERR("%s=%s: %s", k->name, v, k->want);
}

/* Reap=: a boolean or auto (-1). */
static void key_reap(struct ctx *x, const struct key *k, void *obj, const char *v)
{
	int *reap = field(k, obj);
	bool yes;

	if (!strcmp(v, "auto"))
		*reap = -1;
	else if (parse_bool(v, &yes) < 0)
		ERR("%s=%s: %s", k->name, v, k->want);
	else
		*reap = yes;
}

/* ---- the table ---- */

static const char *const action_names[] = { [ACT_KILL] = "kill", [ACT_FREEZE] = "freeze", [ACT_LOG] = "log", NULL };
static const char *const level_names[] = { "low", "medium", "critical", NULL };
static const char *const victim_names[] = {
	[VICTIM_SELF] = "self",
	[VICTIM_MEMORY] = "memory",
	[VICTIM_GROWTH] = "memory-growth",
	[VICTIM_PRESSURE] = "pressure",
	[VICTIM_PROCESSES] = "processes",
	[VICTIM_SWAP] = "swap",
	NULL,
};
#define NNAMES(a) (sizeof(a) / sizeof(*(a)) - 1)

const char *action_name(enum action a)
{
	return (size_t)a < NNAMES(action_names) ? action_names[a] : "?";
}

const char *victim_name(enum victim v)
{
	return (size_t)v < NNAMES(victim_names) ? victim_names[v] : "?";
}

#define HOUR_MS 3600000
#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)
#define DKEY(k) .name = #k, .section = SEC_DAEMON
#define RKEY(k) .name = #k, .section = SEC_RULE
#define CFG(f) .off = offsetof(struct config, f)
#define RULE(f) .off = offsetof(struct rule, f)
#define SPAN_1H .min = 1, .max = HOUR_MS, .want = "must be more than 0 and at most 1h"

static const struct key keys[] = {
	{ DKEY(DryRun), key_bool, CFG(dry_run), .def = "no", .doc = "act on nothing: log what each rule would do" },
	{ DKEY(EventLog), key_path, CFG(event_log), .doc = "append one JSON line per action to this file" },
	{ DKEY(MetricsFile), key_path, CFG(metrics_file), .doc = "write the Prometheus metrics to this file" },
	{ DKEY(MetricsInterval), key_span, CFG(metrics_interval_ms), .min = 1000, .max = HOUR_MS, .def = "15s",
	  .want = "must be between 1s and 1h", .doc = "how often MetricsFile= is written" },
	{ DKEY(ProtectedFile), key_path, CFG(protected_file), .doc = "the protected-cgroup list (none: the library's)" },
	{ DKEY(PollInterval), key_span, CFG(poll_ms), .min = 10, .max = 60000, .def = "20ms",
	  .want = "must be between 10ms and 1min", .doc = "how often unnotified counters are read" },
	{ DKEY(RealTime), key_bool, CFG(realtime), .def = "yes", .doc = "run at SCHED_RR 1 (else nice -10)" },
	{ DKEY(MaxWatchesPerOwner), key_count_or_infinity, CFG(max_watches_per_owner), .min = 1, .max = 10000000,
	  .infinity = UINT_MAX, .def = "1000", .want = "a number from 1 to 10000000, or infinity",
	  .doc = "the most watches one owner's cgroups may take" },
	{ DKEY(MaxActions), key_count, CFG(max_actions), .min = 1, .max = 4096, .def = "64",
	  .want = "a number from 1 to 4096", .doc = "the most actions under way at once" },

	{ RKEY(Name), key_name, RULE(name), .doc = "the rule's name (required)" },
	{ RKEY(Match), key_match, .doc = "the glob of the cgroups it watches (required)" },
	{ RKEY(Trigger), key_trigger, .doc = "what it acts on (required)" },
	{ RKEY(PidsMaxEvents), key_count, RULE(pids_max_events), .min = 1, .max = 1000000, .def = "10",
	  .want = "want a number from 1 to 1000000", .doc = "pids-max: this many refused forks ..." },
	{ RKEY(PidsWindow), key_span, RULE(pids_window_ms), .min = 1, .max = HOUR_MS, .def = "1s",
	  .want = "must be between 1ms and 1h", .doc = "... within this time" },
	{ RKEY(PidsCurrentAbove), key_percent, RULE(pids_current_pct), .min = 1, .max = 100, .def = "90%",
	  .want = "want a percentage of pids.max from 1% to 100%", .doc = "pids-current: at or above this share of pids.max ..." },
	{ RKEY(PidsCurrentFor), key_span, RULE(pids_current_for_ms), SPAN_1H, .def = "5s", .doc = "... for this long" },
	{ RKEY(ForkRate), key_count, RULE(fork_rate), .min = 1, .max = 10000000, .def = "2000",
	  .want = "want forks a second, from 1 to 10000000", .doc = "fork-rate: forks a second that neither exec nor end ..." },
	{ RKEY(ForkWindow), key_span, RULE(fork_window_ms), .min = 10, .max = 10000, .def = "250ms",
	  .want = "must be between 10ms and 10s", .doc = "... over this window" },
	{ RKEY(OOMKills), key_count, RULE(oom_kills), .min = 1, .max = 1000000, .def = "1",
	  .want = "want a number from 1 to 1000000", .doc = "oom-kill: this many OOM kills" },
	{ RKEY(PressureLimit), key_pressure_limit, .def = "full 60%", .doc = "PSI: the stall share of the window" },
	{ RKEY(PressureWindow), key_span, RULE(pressure_window_ms), .min = PSI_WINDOW_MIN_MS, .max = PSI_WINDOW_MAX_MS,
	  .def = "2s", .want = "the kernel takes windows from 500ms to 10s", .doc = "PSI: the kernel trigger's window" },
	{ RKEY(PressureDuration), key_span, RULE(pressure_duration_ms), SPAN_1H, .def = "10s",
	  .doc = "PSI: how long the pressure must last" },
	{ RKEY(PressureOf), key_pressure_of, RULE(pressure_system), .def = "cgroup", .want = "want cgroup or system",
	  .doc = "PSI of the cgroup or of the machine" },
	{ RKEY(PressureNeedsReclaim), key_bool, RULE(pressure_reclaim), .def = "no",
	  .doc = "PSI: act only while memory is reclaimed" },
	{ RKEY(PressureLevel), key_choice, RULE(pressure_level), .names = level_names, .def = "critical",
	  .want = "want low, medium or critical", .doc = "memory-pressure-level: the v1 level" },
	{ RKEY(SwapUsedAbove), key_percent, RULE(swap_pct), .min = 1, .max = 100, .def = "90%",
	  .want = "want a percentage of SwapTotal from 1% to 100%", .doc = "swap: at or above this share of SwapTotal" },
	{ RKEY(Action), key_choice, RULE(action), .names = action_names, .def = "kill", .want = "want kill, freeze or log",
	  .doc = "what is done to the victim" },
	{ RKEY(Signal), key_signal, RULE(sig), .def = "KILL", .doc = "the signal of a kill" },
	{ RKEY(Escalate), key_escalate, .doc = "a later signal, after a span (repeatable)" },
	{ RKEY(Wait), key_span, RULE(wait_ms), .max = 600000, .def = "10s",
	  .want = "at most 10min (the daemon waits for it)", .doc = "how long a kill waits for the cgroup to empty" },
	{ RKEY(Backend), key_backend, RULE(backend), .def = "auto", .doc = "the library's kill backend" },
	{ RKEY(DryRun), key_bool, RULE(dry_run), .def = "no", .doc = "this rule only logs what it would do" },
	{ RKEY(PostActionDelay), key_span, RULE(delay_ms), .max = UINT64_MAX, .def = "15s",
	  .doc = "no new action of the rule in the cgroup for this long" },
	{ RKEY(MaxActionsPerMinute), key_count_or_infinity, RULE(max_per_minute), .min = 1, .max = STORM_SLOTS,
	  .infinity = 0, .def = "6", .want = "want 1 to " STRINGIFY(STORM_SLOTS) ", or infinity", .doc = "the storm limit of the rule" },
	{ RKEY(Victim), key_choice, RULE(victim), .names = victim_names, .def = "self",
	  .want = "want self, memory, memory-growth, pressure, processes or swap", .doc = "whom the rule acts on" },
	{ RKEY(Prefer), key_globs, RULE(prefer), .doc = "candidates chosen first (globs)" },
	{ RKEY(Avoid), key_globs, RULE(avoid), .doc = "candidates chosen last (globs)" },
	{ RKEY(Omit), key_globs, RULE(omit), .doc = "candidates never chosen (globs)" },
	{ RKEY(VictimXattrs), key_bool, RULE(victim_xattrs), .def = "yes", .doc = "honour the cgroups' user.cgkill_* xattrs" },
	{ RKEY(ExecPreKill), key_command, RULE(exec_pre), .doc = "a command run before the action" },
	{ RKEY(ExecPostKill), key_command, RULE(exec_post), .doc = "a command run after the action" },
	{ RKEY(ExecTimeout), key_span, RULE(exec_timeout_ms), .min = 1, .max = 60000, .def = "5s",
	  .want = "must be more than 0 and at most 1min", .doc = "how long a hook may run" },
	{ RKEY(Reap), key_reap, RULE(reap), .def = "auto", .want = "want yes, no or auto",
	  .doc = "release the victims' memory at once" },
	{ RKEY(RecordKills), key_bool, RULE(record_kills), .def = "yes", .doc = "count the kills in user.cgkill_kills" },
};

#undef DKEY
#undef RKEY
#undef CFG
#undef RULE
#undef SPAN_1H

static const struct key *key_find(int section, const char *name)
{
	for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++)
		if (keys[i].section == section && !strcmp(keys[i].name, name))
			return &keys[i];
	return NULL;
}

/* ---- the effective settings, as the parser reads them (--check -v) ---- */

/* A span as its largest whole unit: "90s", "2min", "1500ms". */
static void print_span(FILE *f, uint64_t ms)
{
	static const struct {
		uint64_t ms;
		const char *unit;
	} units[] = { { HOUR_MS, "h" }, { 60000, "min" }, { 1000, "s" } };

	for (size_t i = 0; i < sizeof(units) / sizeof(*units); i++)
		if (ms && ms % units[i].ms == 0) {
			fprintf(f, "%" PRIu64 "%s", ms / units[i].ms, units[i].unit);
			return;
		}
	fprintf(f, "%" PRIu64 "ms", ms);
}

/* Text of root's configuration, through the filter all the same. */
static void print_text(FILE *f, const char *s)
{
	cgk_text_write(f, s, strlen(s), CGK_TEXT_SAFE);
}

/* A word as next_word() reads it back: in double quotes if it holds a
 * blank, a quote or a backslash (or is empty). */
static void print_word(FILE *f, const char *w)
{
	if (*w && !strpbrk(w, " \t\r'\"\\")) {
		print_text(f, w);
		return;
	}
	fputc('"', f);
	for (const char *p = w; *p;) {
		size_t n = strcspn(p, "\"\\");

		cgk_text_write(f, p, n, CGK_TEXT_SAFE);
		p += n;
		if (*p) {
			fputc('\\', f);
			fputc(*p++, f);
		}
	}
	fputc('"', f);
}

static void print_words(FILE *f, char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(' ', f);
		print_word(f, v[i]);
	}
}

static size_t strv_len(char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

/* "Key=value\n" of k in obj; Escalate= once per escalation. */
static void key_print(FILE *f, const struct key *k, const void *obj)
{
	const void *p = (const char *)obj + k->off;
	const struct rule *r = obj;
	char buf[32];
	const char *str;

	if (k->parse == key_escalate) {
		for (size_t i = 0; i < r->nesc; i++) {
			fputs("Escalate=", f);
			print_span(f, r->esc[i].after_ms);
			fprintf(f, " %s\n", cgk_signal_name(r->esc[i].sig, buf, sizeof(buf)) ?: "?");
		}
		if (!r->nesc)
			fputs("Escalate=\n", f);
		return;
	}
	fprintf(f, "%s=", k->name);
	if (k->parse == key_bool) {
		fputs(*(const bool *)p ? "yes" : "no", f);
	} else if (k->parse == key_count) {
		fprintf(f, "%u", *(const unsigned *)p);
	} else if (k->parse == key_count_or_infinity) {
		if (*(const unsigned *)p == (unsigned)k->infinity)
			fputs("infinity", f);
		else
			fprintf(f, "%u", *(const unsigned *)p);
	} else if (k->parse == key_percent) {
		fprintf(f, "%u%%", *(const unsigned *)p);
	} else if (k->parse == key_span) {
		print_span(f, *(const uint64_t *)p);
	} else if (k->parse == key_choice) {
		fputs(k->names[*(const int *)p], f);
	} else if (k->parse == key_path || k->parse == key_name) {
		str = *(char *const *)p;
		print_text(f, str ? str : "");
	} else if (k->parse == key_signal) {
		fputs(cgk_signal_name(*(const int *)p, buf, sizeof(buf)) ?: "?", f);
	} else if (k->parse == key_backend) {
		fputs(cgk_backend_name((enum cgk_backend) * (const int *)p) ?: "?", f);
	} else if (k->parse == key_pressure_of) {
		fputs(*(const bool *)p ? "system" : "cgroup", f);
	} else if (k->parse == key_reap) {
		fputs(*(const int *)p < 0 ? "auto" : *(const int *)p ? "yes" : "no", f);
	} else if (k->parse == key_match) {
		print_text(f, r->match ? r->match : "");
	} else if (k->parse == key_trigger) {
		/* a name whose bits are all set ("fork-rate" brings pids-max) */
		for (size_t i = 0, n = 0; trigger_names[i].name; i++)
			if ((r->triggers & trigger_names[i].bit) == trigger_names[i].bit)
				fprintf(f, "%s%s", n++ ? " " : "", trigger_names[i].name);
	} else if (k->parse == key_pressure_limit) {
		fprintf(f, "%s %u%%", r->pressure_full ? "full" : "some", r->pressure_pct);
	} else if (k->parse == key_globs) {
		print_words(f, ((const struct globs *)p)->v, ((const struct globs *)p)->n);
	} else if (k->parse == key_command) {
		print_words(f, *(char **const *)p, strv_len(*(char **const *)p));
	}
	fputc('\n', f);
}

void conf_print(FILE *f, const struct config *cfg)
{
	fputs("[Daemon]\n", f);
	for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++)
		if (keys[i].section == SEC_DAEMON)
			key_print(f, &keys[i], cfg);
	for (size_t j = 0; j < cfg->nrules; j++) {
		fputs("\n[Rule]\n", f);
		for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++)
			if (keys[i].section == SEC_RULE)
				key_print(f, &keys[i], &cfg->rules[j]);
	}
}

/* Every key of section with a default set to it in obj. */
static void set_defaults(struct ctx *x, int section, void *obj)
{
	for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++)
		if (keys[i].section == section && keys[i].def)
			keys[i].parse(x, &keys[i], obj, keys[i].def);
}

void conf_init(struct config *cfg)
{
	struct ctx x = { .cfg = cfg, .file = "(defaults)" };

	*cfg = (struct config){ 0 };
	set_defaults(&x, SEC_DAEMON, cfg);
}

static void new_rule(struct ctx *x)
{
	struct config *cfg = x->cfg;
	struct rule *grown, *r;

	if (cfg->nrules >= CONF_MAX_RULES) {
		ERR("more than %d rules", CONF_MAX_RULES);
		cfg->cur = NULL;
		cfg->section = SEC_IGNORED;
		return;
	}
	grown = realloc(cfg->rules, (cfg->nrules + 1) * sizeof(*grown));
	if (!grown) {
		ERR("out of memory");
		cfg->section = SEC_IGNORED;
		return;
	}
	cfg->rules = grown;
	r = &cfg->rules[cfg->nrules];
	*r = (struct rule){ .line = x->line };
	set_defaults(x, SEC_RULE, r);
	r->file = strdup(x->file);
	if (!r->file) {
		ERR("out of memory");
		cfg->section = SEC_IGNORED;
		return;
	}
	cfg->nrules++;
	cfg->cur = r;
	cfg->section = SEC_RULE;
}

/* "Match=x/y # my services": only a whole line is a comment, so the
 * value is taken as it is, comment and all; said, since it is rarely
 * meant. */
static void warn_inline_comment(struct ctx *x, const char *key, const char *v)
{
	for (const char *p = v; (p = strpbrk(p, "#;")); p++)
		if (p > v && blank(p[-1])) {
			warn_at(x, "%s=%s: \"%c\" after a blank is no comment here: it is part of the value (a comment is a line of its own)",
				key, v, *p);
			return;
		}
}

/* Key=v in the section being read. */
static void set_key(struct ctx *x, const char *key, const char *v)
{
	struct config *cfg = x->cfg;
	int section = cfg->section;
	const struct key *k = key_find(section, key);

	if (!k) {
		ERR("unknown key %s in [%s]", key, section == SEC_DAEMON ? "Daemon" : "Rule");
		return;
	}
	warn_inline_comment(x, key, v);
	k->parse(x, k, section == SEC_DAEMON ? (void *)cfg : (void *)cfg->cur, v);
}
static void parse_line(struct ctx *x, char *s)
{
	struct config *cfg = x->cfg;
	char *eq, *key, *v, *end;

	while (blank(*s))
		s++;
	end = s + strlen(s);
	while (end > s && blank(end[-1]))
		*--end = '\0';
	if (!*s || *s == '#' || *s == ';')
		return;
	if (*s == '[') {
		if (end[-1] != ']' || end - s < 2) {
			ERR("a section header must end with ]");
			cfg->section = SEC_IGNORED;
			return;
		}
		end[-1] = '\0';
		if (!strcmp(s + 1, "Daemon")) {
			cfg->section = SEC_DAEMON;
			cfg->cur = NULL;
		} else if (!strcmp(s + 1, "Rule")) {
			new_rule(x);
		} else {
			ERR("unknown section [%.64s] (Daemon, Rule)", s + 1);
			cfg->section = SEC_IGNORED;
			cfg->cur = NULL;
		}
		return;
	}
	eq = strchr(s, '=');
	if (!eq) {
		ERR("want Key=Value, a [Section] or a comment");
		return;
	}
	key = s;
	v = eq + 1;
	*eq = '\0';
	while (eq > key && blank(eq[-1]))
		*--eq = '\0';
	while (blank(*v))
		v++;
	if (!*key) {
		ERR("a key is missing before =");
		return;
	}
	if (cfg->section == SEC_NONE)
		ERR("%.64s= outside a section ([Daemon] or [Rule])", key);
	else if (cfg->section != SEC_IGNORED)	/* else in a section already reported */
		set_key(x, key, v);
}

void conf_parse_text(struct config *cfg, const char *file, const char *text, size_t len,
		     conf_error_fn err, void *userdata)
{
	struct ctx x = { .cfg = cfg, .file = file, .err = err, .ud = userdata };
	char *buf = malloc(len + 1);
	size_t i = 0;

	if (!buf) {
		error_at(cfg, &x, "out of memory");
		return;
	}
	cfg->section = SEC_NONE;
	cfg->cur = NULL;
	while (i < len) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t n = nl ? (size_t)(nl - (text + i)) : len - i;

		x.line++;
		memcpy(buf, text + i, n);
		buf[n] = '\0';
		i += n + (nl != NULL);
		if (memchr(text + i - n - (nl != NULL), '\0', n))
			error_at(cfg, &x, "a NUL byte in the line");
		else
			parse_line(&x, buf);
	}
	free(buf);
	cfg->cur = NULL;
	cfg->section = SEC_NONE;
}

void conf_finish(struct config *cfg, conf_error_fn err, void *userdata)
{
	for (size_t i = 0; i < cfg->nrules; i++) {
		struct rule *r = &cfg->rules[i];
		struct ctx x = { .cfg = cfg, .file = r->file ? r->file : "?", .line = r->line,
				 .err = err, .ud = userdata };

		if (!r->name) {
			error_at(cfg, &x, "[Rule] without Name=");
			continue;
		}
		if (!r->match)
			error_at(cfg, &x, "rule %s: no Match=", r->name);
		if (!r->triggers)
			error_at(cfg, &x, "rule %s: no Trigger= (" TRIGGER_NAMES ")", r->name);
		for (size_t j = 0; j < i; j++)
			if (cfg->rules[j].name && !strcmp(cfg->rules[j].name, r->name)) {
				error_at(cfg, &x, "rule %s: already defined at %s:%u", r->name,
					 cfg->rules[j].file, cfg->rules[j].line);
				break;
			}
		if (r->action != ACT_KILL && (r->nesc || r->sig != SIGKILL))
			error_at(cfg, &x, "rule %s: Signal= and Escalate= need Action=kill", r->name);
		if ((r->triggers & TRIG_FORK_RATE) && (uint64_t)r->fork_rate * r->fork_window_ms < 10 * 1000)
			error_at(cfg, &x, "rule %s: ForkRate= over ForkWindow= is fewer than 10 forks", r->name);
		if ((r->triggers & TRIG_PSI) && r->pressure_duration_ms < r->pressure_window_ms)
			error_at(cfg, &x, "rule %s: PressureDuration= is shorter than PressureWindow=", r->name);
		if (r->victim == VICTIM_SELF && (r->prefer.n || r->avoid.n || r->omit.n))
			error_at(cfg, &x, "rule %s: Prefer=, Avoid= and Omit= need a Victim= other than self", r->name);
		if ((((r->triggers & TRIG_PSI) && r->pressure_system) || (r->triggers & TRIG_SWAP)) &&
		    match_has_wildcard(r))
			error_at(cfg, &x,
				 "rule %s: the machine's pressure (PressureOf=system) or swap with a Match= glob would act in every matched cgroup at once: match one cgroup and choose below it with Victim=",
				 r->name);
		if (r->reap == 1 && !rule_sends_sigkill(r))
			error_at(cfg, &x, "rule %s: Reap=yes needs Action=kill with SIGKILL as its signal or an escalation", r->name);
	}
}

/* ---- files ---- */

/*
 * Whom the daemon trusts for what it runs as root: the configuration names
 * programs (ExecPreKill=) and files (EventLog=), so a file that another
 * user could have written is refused, as sshd (StrictModes) and sudo do.
 * Every object on the way is checked: each directory from / down, each
 * symlink (followed, its target checked by the same rules, so that
 * /etc/cgkill may be a link into a root-owned tree), and the object
 * itself. Each must be root's (or the daemon's own user's), and none may
 * be writable by group or others; a directory on the way may be if it is
 * sticky (/tmp), since then no one else can rename or replace what root
 * owns in it. The walk goes by file descriptors, so what was checked is
 * what is opened.
 */
#define TRUST_HOPS 40

/* Why st (of the path at) cannot be trusted, in why; false if it can.
 * last: the object itself, for which a sticky directory is no excuse. */
static bool distrusted(const struct stat *st, const char *at, bool last, char *why, size_t size)
{
	if (st->st_uid != 0 && st->st_uid != geteuid())
		snprintf(why, size, "%s is owned by uid %u, not root", *at ? at : "/", (unsigned)st->st_uid);
	else if (!S_ISLNK(st->st_mode) && (st->st_mode & (S_IWGRP | S_IWOTH)) &&
		 !(S_ISDIR(st->st_mode) && !last && (st->st_mode & S_ISVTX)))
		snprintf(why, size, "%s is writable by %s (mode %04o)", *at ? at : "/",
			 st->st_mode & S_IWOTH ? "others" : "its group", (unsigned)(st->st_mode & 07777));
	else
		return false;
	return true;
}

/* at (the path walked so far, "" for /) with comp added or, for "..",
 * its last component taken off. */
static void at_step(char *at, size_t size, const char *comp)
{
	size_t n = strlen(at);

	if (!strcmp(comp, "..")) {
		while (n && at[n - 1] != '/')
			n--;
		at[n ? n - 1 : 0] = '\0';
	} else if (n + 1 + strlen(comp) < size) {
		at[n] = '/';
		strcpy(at + n + 1, comp);
	}
}

/* The root directory, to walk from: an O_PATH fd, st its stat; or -errno. */
static int trust_root(struct stat *st, char *at, char *why, size_t size)
{
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

	at[0] = '\0';
	if (fd < 0 || fstat(fd, st) < 0) {
		int ret = -errno;

		snprintf(why, size, "/: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return ret;
	}
	return fd;
}

/* The symlink comp (open at link, stat st) in the directory *cur (path
 * at): checked, its target put before rest in todo, *cur moved to / for an
 * absolute one (st then the stat of *cur). 0, or -errno with why. */
static int trust_link(int link, const char *comp, const char *rest, int *cur, struct stat *st, char *at,
		      char *todo, size_t todo_size, int *hops, char *why, size_t size)
{
	char target[4096], joined[8192], link_at[4096];
	ssize_t n = readlinkat(link, "", target, sizeof(target) - 1);
	int ret;

	snprintf(link_at, sizeof(link_at), "%s", at);
	at_step(link_at, sizeof(link_at), comp);
	close(link);
	/* a link is changed by whoever may write its directory (checked);
	 * its owner is checked all the same, as the kernel's
	 * protected_symlinks does */
	if (distrusted(st, link_at, false, why, size))
		return -EPERM;
	if (n < 0 || ++*hops > TRUST_HOPS) {
		ret = n < 0 ? -errno : -ELOOP;
		snprintf(why, size, "%s: %s", link_at, strerror(-ret));
		return ret;
	}
	target[n] = '\0';
	snprintf(joined, sizeof(joined), "%s/%s", target, rest);
	snprintf(todo, todo_size, "%s", joined);
	if (target[0] != '/')
		return fstat(*cur, st) < 0 ? -errno : 0;
	close(*cur);
	*cur = trust_root(st, at, why, size);
	return *cur < 0 ? *cur : 0;
}

/* The object checked (cur, its parent and name, its stat st), opened for
 * reading as the same inode (a regular file's open cannot block; a FIFO
 * swapped in meanwhile is seen by its inode): fd or -errno. */
static int trust_open(int cur, int parent, const char *name, const struct stat *st, bool dir,
		      const char *at, char *why, size_t size)
{
	struct stat again;
	int fd;

	if (distrusted(st, at, true, why, size))
		return -EPERM;
	if (dir != !!S_ISDIR(st->st_mode) || (!dir && !S_ISREG(st->st_mode))) {
		snprintf(why, size, "%s: %s", *at ? at : "/", dir ? strerror(ENOTDIR) : "not a regular file");
		return dir ? -ENOTDIR : -EINVAL;
	}
	fd = dir ? openat(cur, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
		 : openat(parent, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, &again) < 0 || again.st_dev != st->st_dev || again.st_ino != st->st_ino)) {
		close(fd);
		fd = -1;
		errno = EAGAIN;
	}
	if (fd < 0) {
		int ret = -errno;

		snprintf(why, size, "%s: %s", at, strerror(errno));
		return ret;
	}
	return fd;
}

int open_trusted(const char *path, bool dir, char *why, size_t size)
{
	char todo[8192], at[4096] = "", name[256] = "";
	int cur, parent = -1, hops = 0, ret;
	struct stat st = { 0 };
	char *p;

	if (path[0] == '/') {
		snprintf(todo, sizeof(todo), "%s", path);
	} else {
		if (!getcwd(todo, 4096)) {
			ret = -errno;
			snprintf(why, size, "the working directory: %s", strerror(-ret));
			return ret;
		}
		snprintf(todo + strlen(todo), sizeof(todo) - strlen(todo), "/%s", path);
	}
	cur = ret = trust_root(&st, at, why, size);
	for (p = todo; cur >= 0;) {
		char *comp, *rest;
		int next;

		if (distrusted(&st, at, false, why, size)) {
			ret = -EPERM;
			break;
		}
		while (*p == '/')
			p++;
		if (!*p) {
			ret = trust_open(cur, parent, name, &st, dir, at, why, size);
			break;
		}
		comp = p;
		p += strcspn(p, "/");
		rest = p + strspn(p, "/");
		if (*p)
			*p++ = '\0';
		if (!strcmp(comp, "."))
			continue;
		next = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 || fstat(next, &st) < 0) {
			ret = -errno;
			at_step(at, sizeof(at), comp);
			snprintf(why, size, "%s: %s", at, strerror(errno));
			if (next >= 0)
				close(next);
			break;
		}
		if (S_ISLNK(st.st_mode)) {
			ret = trust_link(next, comp, p, &cur, &st, at, todo, sizeof(todo), &hops, why, size);
			if (ret < 0)
				break;
			p = todo;
			continue;
		}
		at_step(at, sizeof(at), comp);
		if (*rest && !S_ISDIR(st.st_mode)) {
			close(next);
			ret = -ENOTDIR;
			snprintf(why, size, "%s: %s", at, strerror(ENOTDIR));
			break;
		}
		if (parent >= 0)
			close(parent);
		parent = cur;
		cur = next;
		/* a name the kernel accepted: at most NAME_MAX bytes */
		memcpy(name, comp, strnlen(comp, sizeof(name) - 1));
		name[strnlen(comp, sizeof(name) - 1)] = '\0';
	}
	if (cur >= 0)
		close(cur);
	if (parent >= 0)
		close(parent);
	return ret;
}

int open_trusted_parent(const char *path, const char **base, char *why, size_t size)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];

	if (!slash || !slash[1] || !strcmp(slash, "/.") || !strcmp(slash, "/..") ||
	    (size_t)(slash - path) >= sizeof(dir)) {
		snprintf(why, size, "not a file name");
		return -EINVAL;
	}
	snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	*base = slash + 1;
	return open_trusted(dir, true, why, size);
}

static void load_file(struct config *cfg, const char *path, bool optional, conf_error_fn err,
		      void *ud)
{
	struct ctx x = { .cfg = cfg, .file = path, .err = err, .ud = ud };
	char why[1024];
	int fd = open_trusted(path, false, why, sizeof(why));
	char *text = NULL;
	size_t len = 0;

	if (fd < 0) {
		if (fd == -EPERM)
			error_at(cfg, &x, "refused: %s (a file root runs must be root's, in directories only root may change)", why);
		else if (!(optional && fd == -ENOENT))
			error_at(cfg, &x, "cannot open: %s", why);
		return;
	}
	text = malloc(CONF_MAX_SIZE + 1);
	if (!text) {
		error_at(cfg, &x, "out of memory");
		close(fd);
		return;
	}
	for (;;) {
		ssize_t n = read(fd, text + len, CONF_MAX_SIZE + 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			error_at(cfg, &x, "cannot read: %s", strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > CONF_MAX_SIZE) {
			error_at(cfg, &x, "larger than %d bytes", CONF_MAX_SIZE);
			goto out;
		}
	}
	conf_parse_text(cfg, path, text, len, err, ud);
out:
	free(text);
	close(fd);
}

static int conf_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The protected list says what root must never kill: trusted as the
 * configuration is, or a user who can write it un-protects anything. Only
 * a missing default list is fine (the library's defaults). */
static void trust_protected(struct config *cfg, conf_error_fn err, void *ud)
{
	const char *file = cfg->protected_file ?: secure_getenv("CGKILL_PROTECTED") ?: "/etc/cgkill/protected";
	struct ctx x = { .cfg = cfg, .file = file, .err = err, .ud = ud };
	char why[1024];
	int fd = open_trusted(file, false, why, sizeof(why));

	if (fd >= 0)
		close(fd);
	else if (fd == -EPERM)
		error_at(cfg, &x, "refused as the protected list: %s (it must be root's, in directories only root may change)", why);
	else if (fd != -ENOENT || cfg->protected_file)
		error_at(cfg, &x, "cannot open the protected list: %s", why);
}

static void load_all(struct config *cfg, const char *path, bool optional, conf_error_fn err, void *ud)
{
	char dir[4096], why[1024];
	DIR *d;
	int fd;
	struct dirent *e;
	char **names = NULL;
	size_t n = 0;

	load_file(cfg, path, optional, err, ud);
	if ((size_t)snprintf(dir, sizeof(dir), "%s.d", path) >= sizeof(dir))
		return;
	fd = open_trusted(dir, true, why, sizeof(why));
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		struct ctx x = { .cfg = cfg, .file = dir, .err = err, .ud = ud };

		if (fd == -EPERM)
			error_at(cfg, &x, "refused: %s (its files are run as root: it must be root's and only root may change it)", why);
		else if (fd >= 0)
			error_at(cfg, &x, "cannot read the directory: %s", strerror(errno));
		else if (fd != -ENOENT)
			error_at(cfg, &x, "cannot open the directory: %s", why);
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		char **grown;

		if (e->d_name[0] == '.' || l < 6 || strcmp(e->d_name + l - 5, ".conf"))
			continue;
		grown = realloc(names, (n + 1) * sizeof(*names));
		if (!grown)
			break;
		names = grown;
		names[n] = strdup(e->d_name);
		if (!names[n])
			break;
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), conf_name_cmp);
	for (size_t i = 0; i < n; i++) {
		char p[4096 + 256];

		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		load_file(cfg, p, false, err, ud);
		free(names[i]);
	}
	free(names);
}

void conf_load(struct config *cfg, const char *path, bool optional, conf_error_fn err, void *ud)
{
	load_all(cfg, path, optional, err, ud);
	trust_protected(cfg, err, ud);
}
