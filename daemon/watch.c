/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which cgroups match which rule. A rule's glob has one component per
 * level below the v2 mount; every directory whose children could match the
 * next component is watched with inotify (IN_CREATE, IN_DELETE), starting
 * at the mount: cgroups that appear or go away are picked up without
 * polling the tree. A matched cgroup gets its triggers armed; removed, it
 * is disarmed and forgotten (never an error).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "cgkilld.h"

struct interest {
	struct rule *rule;
	unsigned level;		/* children must match rule->comp[level] */
};

struct wdir {
	char *rel;		/* "" for the mount, "a/x" */
	int wd;
	struct interest *in;
	size_t nin;
};

static struct wdir **wdirs;
static size_t nwdirs;
static struct cg *dead;

/* (rule, rel) -> cgroup, so that a cgroup seen twice (by the scan and by
 * its IN_CREATE) is watched once. */
#define HASH_SIZE 16384
struct hnode {
	struct cg *cg;
	struct hnode *next;
};
static struct hnode *hbuckets[HASH_SIZE];

static unsigned hash_of(const struct rule *r, const char *rel)
{
	unsigned h = 2166136261u ^ (unsigned)(uintptr_t)r;

	for (const char *p = rel; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	return h % HASH_SIZE;
}

static struct hnode **hash_find(const struct rule *r, const char *rel)
{
	struct hnode **p = &hbuckets[hash_of(r, rel)];

	for (; *p; p = &(*p)->next)
		if ((*p)->cg->rule == r && !strcmp((*p)->cg->rel, rel))
			return p;
	return p;
}

static char *join(const char *a, const char *b)
{
	char *s;

	if (!*a)
		return strdup(b);
	if (asprintf(&s, "%s/%s", a, b) < 0)
		return NULL;
	return s;
}

static char *full_path(const char *rel)
{
	char *s;

	if (asprintf(&s, "%s/%s", D.v2, rel) < 0)
		return NULL;
	return s;
}

static int open_at_dir(const char *dir, const char *name)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return -1;
	return open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
}

static void read_populated(struct cg *c)
{
	char buf[256];
	uint64_t v = 0;

	c->populated = c->pop.fd >= 0 && read_at0(c->pop.fd, buf, sizeof(buf)) > 0 &&
		       kv_get(buf, "populated", &v) && v;
}

char *v1_counterpart(struct cg *c, const char *mount, const char *controller)
{
	char path[PATH_MAX], line[PATH_MAX + 64], *res = NULL;
	size_t cl = strlen(controller);
	long pid = 0;
	FILE *f;

	if (!mount)
		return NULL;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", mount, c->rel) >= sizeof(path))
		return NULL;
	if (access(path, F_OK) == 0)
		return strdup(path);
	/* else where a member of the v2 cgroup is in that hierarchy */
	snprintf(path, sizeof(path), "%s/%s/cgroup.procs", D.v2, c->rel);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f) && (pid = strtol(line, NULL, 10)) <= 0)
		;
	fclose(f);
	if (pid <= 0)
		return NULL;
	snprintf(path, sizeof(path), "/proc/%ld/cgroup", pid);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	while (!res && fgets(line, sizeof(line), f)) {
		char *ctl = strchr(line, ':'), *rel = ctl ? strchr(ctl + 1, ':') : NULL;

		if (!rel)
			continue;
		*rel++ = '\0';
		rel[strcspn(rel, "\n")] = '\0';
		for (char *p = ctl + 1; *p;) {
			size_t n = strcspn(p, ",");

			if (n == cl && !strncmp(p, controller, n)) {
				/* the root of the hierarchy is nobody's counterpart */
				if (strcmp(rel, "/") && asprintf(&res, "%s%s", mount, rel) < 0)
					res = NULL;
				break;
			}
			p += n + (p[n] == ',');
		}
	}
	fclose(f);
	return res;
}

void watch_populated_event(struct cg *c)
{
	read_populated(c);
	if (c->populated) {
		if ((c->rule->triggers & TRIG_PIDS) && c->pids.fd < 0 && pids_arm(c, true))
			log_msg(LOG_PRI_INFO, "rule %s: %s/%s: pids triggers armed (v1 counterpart found)",
				c->rule->name, D.v2, c->rel);
		if ((c->rule->triggers & TRIG_OOM_KILL) && c->mem.fd < 0 && memory_arm(c, true))
			log_msg(LOG_PRI_INFO, "rule %s: %s/%s: oom-kill armed (v1 counterpart found)",
				c->rule->name, D.v2, c->rel);
		/* the v1 level (a late counterpart, or standing in for
		 * memory-pressure), and PSI triggers dropped with their file
		 * (cgroup.pressure 0): pressure_arm() arms what is not */
		if ((c->rule->triggers & (TRIG_PSI | TRIG_PRESSURE_LEVEL)) && pressure_arm(c, true))
			log_msg(LOG_PRI_INFO, "rule %s: %s/%s: pressure trigger(s) armed (cgroup populated)",
				c->rule->name, D.v2, c->rel);
	}
	pids_populated_event(c);
}

static void add_cg(struct rule *r, const char *rel)
{
	struct hnode **slot = hash_find(r, rel), *h;
	struct cg *c;
	char slashed[PATH_MAX];

	if (*slot)
		return;
	snprintf(slashed, sizeof(slashed), "/%s", rel);
	if ((D.self_rel && !strcmp(slashed, D.self_rel)) || (D.init_rel && !strcmp(slashed, D.init_rel))) {
		log_msg(LOG_PRI_NOTICE, "rule %s: %s is cgkilld's own or PID 1's cgroup: not watched",
			r->name, slashed);
		return;
	}
	c = calloc(1, sizeof(*c));
	h = calloc(1, sizeof(*h));
	if (!c || !h || !(c->rel = strdup(rel))) {
		free(c);
		free(h);
		log_msg(LOG_PRI_ERR, "rule %s: out of memory watching %s", r->name, rel);
		return;
	}
	c->rule = r;
	c->pids.fd = c->pop.fd = c->mem.fd = c->efd.fd = c->recheck.fd = c->plevel.fd = -1;
	c->pids.cg = c->pop.cg = c->mem.cg = c->efd.cg = c->recheck.cg = c->plevel.cg = c;
	c->plevel_file = -1;
	for (int i = 0; i < PSI_NRES; i++)
		c->psi[i] = (struct src){ .type = SRC_PSI, .fd = -1, .cg = c };
	h->cg = c;
	*slot = h;
	c->next = D.cgs;
	D.cgs = c;
	D.ncgs++;
	/* hybrid layouts: a v1 counterpart may come later than the v2
	 * cgroup; it is looked for again whenever the cgroup becomes
	 * populated, which cgroup.events notifies. pids-current (v1 and v2)
	 * reads pids.current only while the cgroup is populated. A PSI
	 * trigger dropped with its file (cgroup.pressure 0) is armed again
	 * then too. */
	if (((r->triggers & TRIG_PIDS) && D.v1_pids) || (r->triggers & TRIG_PIDS_CURRENT) ||
	    ((r->triggers & (TRIG_OOM_KILL | TRIG_PRESSURE_LEVEL)) && D.v1_memory) ||
	    ((r->triggers & TRIG_PSI) && !r->pressure_system)) {
		char *p = full_path(rel);

		c->pop.type = SRC_POPULATED;
		c->pop.fd = p ? open_at_dir(p, "cgroup.events") : -1;
		if (c->pop.fd < 0 && p && errno != ENOENT)
			open_failed(p, errno);
		free(p);
		if (c->pop.fd >= 0 && epoll_add(&c->pop, EPOLLPRI) < 0)
			src_close(&c->pop);
		read_populated(c);
	}
	if (r->triggers & TRIG_PIDS)
		pids_arm(c, false);
	if (r->triggers & TRIG_OOM_KILL)
		memory_arm(c, false);
	if (r->triggers & (TRIG_PSI | TRIG_PRESSURE_LEVEL | TRIG_SWAP))
		pressure_arm(c, false);
	log_msg(LOG_PRI_DEBUG, "rule %s: watching %s/%s", r->name, D.v2, rel);
}

static void remove_cg(struct cg *c)
{
	struct hnode **slot = hash_find(c->rule, c->rel), *h = *slot;

	if (h) {
		*slot = h->next;
		free(h);
	}
	for (struct cg **p = &D.cgs; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	D.ncgs--;
	pids_disarm(c);
	memory_disarm(c);
	pressure_disarm(c);
	victim_forget(c);
	src_close(&c->pop);
	c->dead = true;
	c->next = dead;
	dead = c;
	log_msg(LOG_PRI_DEBUG, "rule %s: %s/%s is gone", c->rule->name, D.v2, c->rel);
}

void watch_reap(void)
{
	while (dead) {
		struct cg *c = dead;

		dead = c->next;
		free(c->rel);
		free(c);
	}
}

static struct wdir *wdir_of(int wd)
{
	for (size_t i = 0; i < nwdirs; i++)
		if (wdirs[i]->wd == wd)
			return wdirs[i];
	return NULL;
}

static void add_interest(const char *rel, struct rule *r, unsigned level);

static void child(const char *parent, struct rule *r, unsigned level, const char *name)
{
	char *rel;

	if (fnmatch(r->comp[level], name, FNM_PERIOD) != 0)
		return;
	rel = join(parent, name);
	if (!rel)
		return;
	if (level + 1 == r->ncomp)
		add_cg(r, rel);
	else
		add_interest(rel, r, level + 1);
	free(rel);
}

static void scan(const char *rel, struct rule *r, unsigned level)
{
	char *path = *rel ? full_path(rel) : strdup(D.v2);
	DIR *d;
	struct dirent *e;

	if (!path)
		return;
	d = opendir(path);
	free(path);
	if (!d)
		return;	/* gone already: not an error */
	while ((e = readdir(d)))
		if (e->d_type == DT_DIR && e->d_name[0] != '.')
			child(rel, r, level, e->d_name);
	closedir(d);
}

static void add_interest(const char *rel, struct rule *r, unsigned level)
{
	char *path = *rel ? full_path(rel) : strdup(D.v2);
	struct wdir *w;
	struct interest *grown;
	int wd;

	if (!path)
		return;
	wd = inotify_add_watch(D.inotify.fd, path,
			       IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM | IN_ONLYDIR);
	if (wd < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			log_msg(LOG_PRI_WARNING, "rule %s: cannot watch %s: %s%s", r->name, path,
				strerror(errno),
				errno == ENOSPC ? " (raise fs.inotify.max_user_watches)" : "");
		free(path);
		return;
	}
	free(path);
	w = wdir_of(wd);
	if (!w) {
		struct wdir **g = realloc(wdirs, (nwdirs + 1) * sizeof(*g));

		if (!g)
			return;
		wdirs = g;
		w = calloc(1, sizeof(*w));
		if (!w || !(w->rel = strdup(rel))) {
			free(w);
			return;
		}
		w->wd = wd;
		wdirs[nwdirs++] = w;
	}
	for (size_t i = 0; i < w->nin; i++)
		if (w->in[i].rule == r && w->in[i].level == level)
			goto scan;
	grown = realloc(w->in, (w->nin + 1) * sizeof(*grown));
	if (!grown)
		return;
	w->in = grown;
	w->in[w->nin++] = (struct interest){ .rule = r, .level = level };
scan:
	scan(rel, r, level);
}

static void wdir_free(size_t i)
{
	struct wdir *w = wdirs[i];

	free(w->rel);
	free(w->in);
	free(w);
	wdirs[i] = wdirs[--nwdirs];
}

int watch_start(void)
{
	for (size_t i = 0; i < D.cfg.nrules; i++)
		add_interest("", &D.cfg.rules[i], 0);
	return 0;
}

void watch_stop(void)
{
	while (D.cgs)
		remove_cg(D.cgs);
	while (nwdirs) {
		inotify_rm_watch(D.inotify.fd, wdirs[nwdirs - 1]->wd);
		wdir_free(nwdirs - 1);
	}
	free(wdirs);
	wdirs = NULL;
}

static bool at_or_below(const char *path, const char *rel, size_t n)
{
	return !strncmp(path, rel, n) && (path[n] == '\0' || path[n] == '/');
}

/* A directory rel went away: its cgroups and those below it, and the
 * watches on it and below it. cgroupfs sends nothing to the watch of a
 * removed directory (no IN_DELETE_SELF, no IN_IGNORED: checked on 6.18),
 * so the parent's IN_DELETE is the only word of it: that is why a rule is
 * watched from the mount down, never from the middle. */
static void gone(const char *rel)
{
	size_t n = strlen(rel);

	for (struct cg *c = D.cgs, *next; c; c = next) {
		next = c->next;
		if (at_or_below(c->rel, rel, n))
			remove_cg(c);
	}
	for (size_t i = 0; i < nwdirs;) {
		if (*wdirs[i]->rel && at_or_below(wdirs[i]->rel, rel, n)) {
			inotify_rm_watch(D.inotify.fd, wdirs[i]->wd);
			wdir_free(i);	/* moves the last one here */
		} else {
			i++;
		}
	}
}

/* After a queue overflow: forget what is gone, pick up what is new. */
static void resync(void)
{
	log_msg(LOG_PRI_WARNING, "inotify queue overflow: rescanning the watched directories");
	for (struct cg *c = D.cgs, *next; c; c = next) {
		char *p = full_path(c->rel);

		next = c->next;
		if (p && access(p, F_OK) < 0 && errno == ENOENT)
			remove_cg(c);
		free(p);
	}
	for (size_t i = 0; i < nwdirs; i++) {
		struct wdir *w = wdirs[i];

		for (size_t j = 0; j < w->nin; j++)
			scan(w->rel, w->in[j].rule, w->in[j].level);
	}
}

void watch_inotify_event(void)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));

	for (;;) {
		ssize_t n = read(D.inotify.fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *e = (struct inotify_event *)p;
			struct wdir *w;

			p += sizeof(*e) + e->len;
			if (e->mask & IN_Q_OVERFLOW) {
				resync();
				continue;
			}
			w = wdir_of(e->wd);
			if (!w)
				continue;
			if (e->mask & IN_IGNORED) {
				for (size_t i = 0; i < nwdirs; i++)
					if (wdirs[i] == w) {
						wdir_free(i);
						break;
					}
				continue;
			}
			if (!(e->mask & IN_ISDIR) || !e->len || e->name[0] == '.')
				continue;
			if (e->mask & (IN_CREATE | IN_MOVED_TO)) {
				/* w->in may grow while we walk it: by index */
				for (size_t i = 0; i < w->nin; i++) {
					struct interest in = w->in[i];

					child(w->rel, in.rule, in.level, e->name);
				}
			} else if (e->mask & (IN_DELETE | IN_MOVED_FROM)) {
				char *rel = join(w->rel, e->name);

				if (rel)
					gone(rel);
				free(rel);
			}
		}
	}
}

void watch_dump(void)
{
	log_msg(LOG_PRI_INFO, "state: %zu rule(s), %zu watched cgroup(s), %zu watched directories%s",
		D.cfg.nrules, D.ncgs, nwdirs, D.global_dry_run || D.cfg.dry_run ? ", dry run" : "");
	for (size_t i = 0; i < D.cfg.nrules; i++) {
		struct rule *r = &D.cfg.rules[i];
		size_t n = 0;

		for (struct cg *c = D.cgs; c; c = c->next)
			n += c->rule == r;
		log_msg(LOG_PRI_INFO,
			"rule %s: match %s, %zu cgroup(s), action %s%s, %lu event(s), %lu action(s), %lu suppressed by the storm limit",
			r->name, r->match, n, action_name(r->action), r->dry_run ? " (dry run)" : "",
			r->events, r->actions, r->suppressed);
	}
	for (struct cg *c = D.cgs; c; c = c->next) {
		log_msg(LOG_PRI_INFO, "watching %s/%s (rule %s)%s%s%s", D.v2, c->rel, c->rule->name,
			c->pids.fd >= 0 ? (c->pids_v1 ? " pids:v1-polled" : " pids:v2") : "",
			c->mem.fd >= 0 ? (c->mem_v1 ? " memory:v1" : " memory:v2") : "",
			c->holdoff_until > now_ms() ? " (post-action delay)" : "");
		pressure_dump(c);
	}
	log_msg(LOG_PRI_INFO, "state: end");
}
