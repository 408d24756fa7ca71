/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which cgroups match which rule. A rule's glob has one component per
 * level below the v2 mount; every directory whose children could match the
 * next component is watched with inotify (IN_CREATE, IN_DELETE), starting
 * at the mount: cgroups that appear or go away are picked up without
 * polling the tree. A matched cgroup gets its triggers armed; removed, it
 * is disarmed and forgotten (never an error).
 *
 * What a delegatee's cgroups may cost (they choose how many):
 *  - files: an empty cgroup holds none. Whether it is populated comes from
 *    inotify (IN_MODIFY on its cgroup.events, which kernfs sends when
 *    "populated" or "frozen" changes: a watch, not a file). Its triggers'
 *    files are opened when it becomes populated and closed EMPTY_CLOSE_MS
 *    after it empties (a cgroup that fills and empties in a loop is not
 *    armed again each time). The counters its triggers count from
 *    (pids.events max, oom_kill) are kept in struct cg meanwhile, so that
 *    what rose while the files were closed counts, once. Half of the open
 *    file limit is kept for actions (the library pins up to half of it in
 *    pidfds, lib/kill.c): beyond that a populated cgroup waits, unarmed,
 *    the log says so, and it is armed as files come free.
 *  - watches: what one owner (the uid of the cgroup's directory, or of its
 *    nearest ancestor that is not root's) makes the daemon watch, cgroups
 *    and directories, is capped (MaxWatchesPerOwner=); the log says so.
 *  - time: a watch descriptor, a directory and a cgroup are found through
 *    hashes, and a cgroup is linked both ways: an event costs O(1) whatever
 *    the number watched.
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
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "cgkilld.h"

/* an emptied cgroup's files are closed this long after */
#define EMPTY_CLOSE_MS 5000
#define OWNER_WATCHES_DEFAULT 1000
/* cgroup.events read a second for each owner's cgroups past the cap */
#define DORMANT_READS_PER_S 1000
/* the most files the triggers of one cgroup open */
#define ARM_FILES 16
/* an owner with more PSI triggers than this waiting to be closed (each
 * close waits for an RCU grace period) has their PSI armings wait */
#define OWNER_CLOSES_MAX 256

struct interest {
	struct rule *rule;
	unsigned level;		/* children must match rule->comp[level] */
};

struct wdir {
	char *rel;		/* "" for the mount, "a/x" */
	int wd;
	unsigned owner;
	size_t index;		/* in wdirs[] */
	unsigned nkids;		/* watched directories and cgroups just below */
	struct interest *in;
	size_t nin;
};

/* One inotify watch: a directory, or the cgroup.events of the cgroups of
 * one directory (one for each rule that matches it, through wd_next). */
struct watch {
	int wd;
	struct wdir *dir;
	struct cg *cgs;
};

/* ---- a hash of pointers, the caller's key hashed (grows) ---- */

struct hnode {
	unsigned h;
	void *obj;
	struct hnode *next;
};

struct htab {
	struct hnode **b;
	size_t nb, n;
};

static bool htab_add(struct htab *t, unsigned h, void *obj)
{
	struct hnode *e = malloc(sizeof(*e));

	if (!e)
		return false;
	if (t->n >= t->nb) {
		size_t nb = t->nb ? 2 * t->nb : 256;
		struct hnode **b = calloc(nb, sizeof(*b));

		if (!b) {
			free(e);
			return false;
		}
		for (size_t i = 0; i < t->nb; i++)
			for (struct hnode *x = t->b[i], *next; x; x = next) {
				next = x->next;
				x->next = b[x->h & (nb - 1)];
				b[x->h & (nb - 1)] = x;
			}
		free(t->b);
		t->b = b;
		t->nb = nb;
	}
	*e = (struct hnode){ .h = h, .obj = obj, .next = t->b[h & (t->nb - 1)] };
	t->b[h & (t->nb - 1)] = e;
	t->n++;
	return true;
}

/* The bucket of h: walk it comparing keys. */
static struct hnode **htab_bucket(const struct htab *t, unsigned h)
{
	return t->nb ? &t->b[h & (t->nb - 1)] : NULL;
}

static void htab_del(struct htab *t, unsigned h, const void *obj)
{
	for (struct hnode **p = htab_bucket(t, h); p && *p; p = &(*p)->next)
		if ((*p)->obj == obj) {
			struct hnode *e = *p;

			*p = e->next;
			free(e);
			t->n--;
			return;
		}
}

static void htab_free(struct htab *t)
{
	for (size_t i = 0; i < t->nb; i++)
		for (struct hnode *x = t->b[i], *next; x; x = next) {
			next = x->next;
			free(x);
		}
	free(t->b);
	*t = (struct htab){ 0 };
}

static unsigned hash_str(unsigned h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static unsigned hash_wd(int wd)
{
	return (unsigned)wd * 2654435761u;
}

static unsigned hash_cg(const struct rule *r, const char *rel)
{
	return hash_str(2166136261u ^ (unsigned)(uintptr_t)r, rel);
}

static struct htab watches;	/* wd -> struct watch */
static struct htab dirs;	/* rel -> struct wdir */
static struct htab cgs;		/* (rule, rel) -> struct cg */
static struct htab owners;	/* uid -> struct owner */
static struct wdir **wdirs;	/* all, for the state dump and a resync */
static size_t nwdirs, wdirs_cap;
static struct cg *idle;		/* the cgroups not armed (D.cgs: the armed ones) */
static struct cg *dead;

static struct watch *watch_of(int wd)
{
	for (struct hnode **p = htab_bucket(&watches, hash_wd(wd)); p && *p; p = &(*p)->next)
		if (((struct watch *)(*p)->obj)->wd == wd)
			return (*p)->obj;
	return NULL;
}

static struct wdir *wdir_by_rel(const char *rel)
{
	unsigned h = hash_str(2166136261u, rel);

	for (struct hnode **p = htab_bucket(&dirs, h); p && *p; p = &(*p)->next)
		if ((*p)->h == h && !strcmp(((struct wdir *)(*p)->obj)->rel, rel))
			return (*p)->obj;
	return NULL;
}

static struct cg *cg_find(const struct rule *r, const char *rel)
{
	unsigned h = hash_cg(r, rel);

	for (struct hnode **p = htab_bucket(&cgs, h); p && *p; p = &(*p)->next) {
		struct cg *c = (*p)->obj;

		if ((*p)->h == h && c->rule == r && !strcmp(c->rel, rel))
			return c;
	}
	return NULL;
}

/* The directory that holds rel, if watched. */
static struct wdir *parent_of(const char *rel)
{
	const char *slash = strrchr(rel, '/');
	char parent[PATH_MAX];

	if (!*rel)
		return NULL;
	if (!slash)
		return wdir_by_rel("");
	if ((size_t)(slash - rel) >= sizeof(parent))
		return NULL;
	memcpy(parent, rel, (size_t)(slash - rel));
	parent[slash - rel] = '\0';
	return wdir_by_rel(parent);
}

static void kid(const char *rel, int delta)
{
	struct wdir *p = parent_of(rel);

	if (p && (delta > 0 || p->nkids))
		p->nkids += (unsigned)delta;
}

/* ---- lists ---- */

static void list_add(struct cg **head, struct cg *c)
{
	c->next = *head;
	if (*head)
		(*head)->pprev = &c->next;
	*head = c;
	c->pprev = head;
}

static void list_del(struct cg *c)
{
	if (!c->pprev)
		return;
	*c->pprev = c->next;
	if (c->next)
		c->next->pprev = c->pprev;
	c->next = NULL;
	c->pprev = NULL;
}

struct queue {
	struct cg *head, *tail;
};

static struct queue emptied;	/* armed and empty: closed at empty_since + EMPTY_CLOSE_MS */
static struct queue starved;	/* populated, not armed: too few files */

static void q_push(struct queue *q, struct cg *c)
{
	c->q_prev = q->tail;
	c->q_next = NULL;
	if (q->tail)
		q->tail->q_next = c;
	else
		q->head = c;
	q->tail = c;
	c->queued = true;
	if (q == &starved)
		D.nwaiting++;
}

static void q_del(struct queue *q, struct cg *c)
{
	if (!c->queued)
		return;
	if (c->q_prev)
		c->q_prev->q_next = c->q_next;
	else
		q->head = c->q_next;
	if (c->q_next)
		c->q_next->q_prev = c->q_prev;
	else
		q->tail = c->q_prev;
	c->q_next = c->q_prev = NULL;
	c->queued = false;
	if (q == &starved)
		D.nwaiting--;
}

/* The queue c is on, by its state. */
static struct queue *queue_of(const struct cg *c)
{
	return c->armed ? &emptied : &starved;
}

/* ---- owners ---- */

struct dormant;

struct owner {
	unsigned uid, n;
	unsigned long refused;
	bool told;
	struct dormant *ring;	/* their cgroups past the cap, polled in turn */
	unsigned ndormant;
};

/* A cgroup of an owner past the cap (MaxWatchesPerOwner=): no watch of
 * its own, only this record; the poll reads its cgroup.events in turn
 * (DORMANT_READS_PER_S a second per owner) and watches it once populated.
 * The cap bounds the watches, never whether a populated cgroup is seen. */
struct dormant {
	struct rule *rule;
	char *rel;
	struct owner *o;
	struct dormant *next, *prev;
};

static struct htab dormants;	/* (rule, rel) -> struct dormant */
static size_t ndormants;

static unsigned owner_cap(void)
{
	return D.cfg.max_watches_per_owner ? D.cfg.max_watches_per_owner : OWNER_WATCHES_DEFAULT;
}

/* Who answers for rel: the uid of its directory, or of its nearest
 * ancestor not root's (only root can chown: a delegatee cannot put its
 * cgroups on another's account); 0 for root's. */
static unsigned owner_of(const char *rel)
{
	char path[PATH_MAX];
	size_t top = strlen(D.v2);
	struct stat st;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", D.v2, rel) >= sizeof(path))
		return 0;
	while (strlen(path) > top) {
		char *slash;

		if (stat(path, &st) == 0 && st.st_uid != 0)
			return st.st_uid;
		slash = strrchr(path, '/');
		if (!slash)
			break;
		*slash = '\0';
	}
	return 0;
}

static struct owner *owner_find(unsigned uid, bool create)
{
	struct owner *o;

	for (struct hnode **p = htab_bucket(&owners, hash_wd((int)uid)); p && *p; p = &(*p)->next)
		if (((struct owner *)(*p)->obj)->uid == uid)
			return (*p)->obj;
	if (!create || !(o = calloc(1, sizeof(*o))))
		return NULL;
	o->uid = uid;
	if (!htab_add(&owners, hash_wd((int)uid), o)) {
		free(o);
		return NULL;
	}
	return o;
}

/* May uid's count grow by one more watch (of rule r, on rel)? Root's
 * cgroups are the machine's: not capped. Said once, loudly, and again
 * only after their number fell below half of the cap. */
static bool charge(unsigned uid, const struct rule *r, const char *rel, bool force)
{
	struct owner *o;

	if (!uid)
		return true;
	o = owner_find(uid, true);
	if (!o)
		return false;
	if (o->n >= owner_cap() && !force) {
		o->refused++;
		if (!o->told)
			log_msg(LOG_PRI_ERR,
				"rule %s: %s/%s: not watched: uid %u owns %u watched cgroups and directories, the cap (MaxWatchesPerOwner=%u); their cgroups beyond it have no watch of their own: their cgroup.events is read in turn, %u a second, and a populated one is watched (said once until their number fell below half)",
				r->name, D.v2, rel, uid, o->n, owner_cap(), DORMANT_READS_PER_S);
		o->told = true;
		return false;
	}
	o->n++;
	return true;
}

static void uncharge(unsigned uid)
{
	struct owner *o = uid ? owner_find(uid, false) : NULL;

	if (!o || !o->n)
		return;
	o->n--;
	if (o->told && o->n < owner_cap() / 2)
		o->told = false;
}

static struct dormant *dormant_find(const struct rule *r, const char *rel)
{
	unsigned h = hash_cg(r, rel);

	for (struct hnode **p = htab_bucket(&dormants, h); p && *p; p = &(*p)->next) {
		struct dormant *d = (*p)->obj;

		if ((*p)->h == h && d->rule == r && !strcmp(d->rel, rel))
			return d;
	}
	return NULL;
}

static void timer_update(void);

/* rel of uid's, past the cap: polled from now on (last in turn). */
static void dormant_add(struct rule *r, const char *rel, unsigned uid)
{
	struct owner *o = owner_find(uid, true);
	struct dormant *d;

	if (!o || dormant_find(r, rel) || !(d = calloc(1, sizeof(*d))))
		return;
	d->rule = r;
	d->o = o;
	if (!(d->rel = strdup(rel)) || !htab_add(&dormants, hash_cg(r, rel), d)) {
		free(d->rel);
		free(d);
		log_msg(LOG_PRI_ERR, "rule %s: out of memory watching %s", r->name, rel);
		return;
	}
	if (o->ring) {
		d->next = o->ring;
		d->prev = o->ring->prev;
		d->prev->next = d;
		o->ring->prev = d;
	} else {
		o->ring = d->next = d->prev = d;
	}
	o->ndormant++;
	if (!ndormants++)
		timer_update();
}

/* d out of its owner's ring and of the hash; the caller frees it. */
static void dormant_take(struct dormant *d)
{
	struct owner *o = d->o;

	if (d->next == d) {
		o->ring = NULL;
	} else {
		d->prev->next = d->next;
		d->next->prev = d->prev;
		if (o->ring == d)
			o->ring = d->next;
	}
	o->ndormant--;
	ndormants--;
	htab_del(&dormants, hash_cg(d->rule, d->rel), d);
}

static void dormant_del(struct dormant *d)
{
	dormant_take(d);
	free(d->rel);
	free(d);
}

/* ---- files ---- */

/* Are there files enough to arm a cgroup, half the limit kept for
 * actions? Files are numbered lowest first: the lowest free number is
 * the count of those open below it. */
static bool files_left(void)
{
	struct rlimit rl;
	int fd;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return true;
	fd = fcntl(D.inotify.fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return false;
	close(fd);
	return (rlim_t)fd + ARM_FILES <= rl.rlim_cur / 2;
}

/* inotify_add_watch() failed: ENOSPC (max_user_watches) loudly, once
 * until a watch succeeds again. */
static bool watches_short;

static void watch_failed(const struct rule *r, const char *path, int err)
{
	if (err == ENOENT || err == ENOTDIR)
		return;	/* gone already */
	if (err != ENOSPC) {
		log_msg(LOG_PRI_WARNING, "rule %s: cannot watch %s: %s", r->name, path, strerror(err));
		return;
	}
	if (!watches_short)
		log_msg(LOG_PRI_ERR,
			"rule %s: cannot watch %s: %s: cgroups are left unwatched; raise fs.inotify.max_user_watches (said once until a watch succeeds)",
			r->name, path, strerror(err));
	watches_short = true;
}

/* Is c's cgroup populated? (short of files: as it was) */
static bool read_populated(const struct cg *c)
{
	int p = cg_populated_at(c->rel);

	if (p < 0)
		return errno == EMFILE || errno == ENFILE ? c->populated : false;
	return p;
}

/* ---- arming: the triggers' files, while populated ---- */

const struct trigger_ops *const triggers[] = { &trigger_pids, &trigger_memory, &trigger_pressure, &trigger_swap,
						&trigger_fork_rate, NULL };

/* Arms c's triggers of its rule (late: only those that may be armed late,
 * saying so); those armed from the watch again, if that failed. */
static void arm_triggers(struct cg *c, bool late)
{
	struct rule *r = c->rule;

	for (const struct trigger_ops *const *t = triggers; *t; t++) {
		if (!(r->triggers & (*t)->triggers) || (late && !(*t)->late))
			continue;
		if ((*t)->arm(c, late) && late)
			log_msg(LOG_PRI_INFO, "rule %s: %s/%s: %s", r->name, D.v2, c->rel, (*t)->late);
	}
}

/* Those armed from the watch, when c is watched: an empty cgroup's
 * counting starts before its first process. */
static void arm_from_watch(struct cg *c)
{
	for (const struct trigger_ops *const *t = triggers; *t; t++)
		if ((*t)->from_watch && (c->rule->triggers & (*t)->triggers))
			(*t)->arm(c, false);
}

/* c's triggers closed: those armed while populated, when it is armed;
 * those armed from the watch too, when it is removed. */
static void disarm_triggers(struct cg *c, bool removed)
{
	for (const struct trigger_ops *const *t = triggers; *t; t++)
		if ((*t)->from_watch ? removed : c->armed)
			(*t)->disarm(c);
}

static void disarm(struct cg *c)
{
	if (!c->armed)
		return;
	q_del(&emptied, c);
	disarm_triggers(c, false);
	c->armed = false;
	list_del(c);
	list_add(&idle, c);
}

static bool starved_told, owed_told;

/* Does c's owner owe too many closes to arm PSI triggers now? Their own
 * armings wait, not others': the closing backlog they cause is theirs. */
static bool owes_closes(const struct cg *c)
{
	unsigned n;

	if (!c->owner || !(c->rule->triggers & (TRIG_PSI | TRIG_PRESSURE_LEVEL | TRIG_SWAP)))
		return false;
	n = closes_pending(c->owner);
	if (n <= OWNER_CLOSES_MAX)
		return false;
	if (!owed_told)
		log_msg(LOG_PRI_WARNING,
			"rule %s: %s/%s: populated, armed in a while: uid %u has %u PSI triggers waiting to be closed (more than %u); their cgroups are armed as those are closed (said once)",
			c->rule->name, D.v2, c->rel, c->owner, n, OWNER_CLOSES_MAX);
	owed_told = true;
	return true;
}

/* Close the files of the emptied cgroups now: for a populated one. */
static void close_emptied(void)
{
	while (emptied.head)
		disarm(emptied.head);
}

static void arm(struct cg *c)
{
	struct rule *r = c->rule;

	if (c->armed || c->dead)
		return;
	if (owes_closes(c)) {
		if (!c->queued)
			q_push(&starved, c);
		timer_update();
		return;
	}
	if (!files_left())
		close_emptied();
	if (!files_left()) {
		if (!c->queued)
			q_push(&starved, c);
		if (!starved_told)
			log_msg(LOG_PRI_ERR,
				"rule %s: %s/%s: populated, not armed: too few open files left (half of the limit is kept for actions); armed once files are free (said once until then; raise LimitNOFILE=)",
				r->name, D.v2, c->rel);
		starved_told = true;
		return;
	}
	q_del(&starved, c);
	list_del(c);
	list_add(&D.cgs, c);
	c->armed = true;
	arm_triggers(c, false);
	log_msg(LOG_PRI_DEBUG, "rule %s: %s/%s: populated: triggers armed", r->name, D.v2, c->rel);
}

/* The populated ones that waited for files, while there are. */
static void arm_starved(void)
{
	for (struct cg *c = starved.head, *next; c && files_left(); c = next) {
		next = c->q_next;	/* c stays queued if its owner owes closes */
		arm(c);
	}
	if (!starved.head)
		owed_told = false;
	if (!starved.head && starved_told) {
		log_msg(LOG_PRI_NOTICE, "open files available again: the populated cgroups are armed");
		starved_told = false;
	}
}

/* An empty cgroup's counters, read now and the files closed again: what
 * rises after it is populated counts from them. */
static void take_baselines(struct cg *c)
{
	if (!files_left())
		return;	/* from its first arming then */
	for (const struct trigger_ops *const *t = triggers; *t; t++)
		if ((*t)->counts && (c->rule->triggers & (*t)->triggers) && (*t)->arm(c, false))
			(*t)->disarm(c);
}

static struct src timer = { .event = watch_timer_event, .fd = -1 };
static uint64_t polled_at;	/* the last poll of the cgroups past the cap */

/* The timer runs while an emptied cgroup waits to be closed, and once a
 * second while cgroups past the cap are polled. */
static void timer_update(void)
{
	struct itimerspec its = { 0 };
	uint64_t t = now_ms(), in = UINT64_MAX;

	if (emptied.head) {
		uint64_t due = emptied.head->empty_since + EMPTY_CLOSE_MS;

		in = due > t ? due - t : 1;
	}
	if (ndormants || starved.head) {
		uint64_t due = polled_at + 1000;

		if ((due > t ? due - t : 1) < in)
			in = due > t ? due - t : 1;
	}
	if (in != UINT64_MAX) {
		if (timer.fd < 0) {
			timer.fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
			if (timer.fd < 0 || epoll_add(&timer, EPOLLIN) < 0) {
				src_close(&timer);
				close_emptied();	/* no timer: no delay */
				if (ndormants)
					log_msg(LOG_PRI_ERR, "no timer: cgroups past MaxWatchesPerOwner= are not polled: %s",
						strerror(errno));
				return;
			}
		}
		its.it_value.tv_sec = (time_t)(in / 1000);
		its.it_value.tv_nsec = (long)(in % 1000) * 1000000;
	}
	if (timer.fd >= 0)
		timerfd_settime(timer.fd, 0, &its, NULL);
}

static void add_cg(struct rule *r, const char *rel, bool force);
static void remove_cg(struct cg *c, const char *why);

/* Read the cgroup.events of each owner's cgroups past the cap, the next
 * DORMANT_READS_PER_S of them in turn: the populated ones are watched
 * (whatever the cap), the removed ones forgotten. */
static void dormant_poll(void)
{
	struct dormant *found = NULL;

	polled_at = now_ms();
	for (size_t i = 0; i < owners.nb; i++)
		for (const struct hnode *x = owners.b[i]; x; x = x->next) {
			struct owner *o = x->obj;
			unsigned n = o->ndormant < DORMANT_READS_PER_S ? o->ndormant : DORMANT_READS_PER_S;

			for (unsigned k = 0; k < n && o->ring; k++) {
				struct dormant *d = o->ring;
				int p = cg_populated_at(d->rel);

				o->ring = d->next;
				if (p < 0 && errno == ENOENT) {
					dormant_del(d);
				} else if (p == 1) {
					dormant_take(d);	/* watched after the walk: owners may grow */
					d->next = found;
					found = d;
				}
			}
		}
	while (found) {
		struct dormant *d = found;

		found = d->next;
		log_msg(LOG_PRI_INFO, "rule %s: %s/%s: populated: watched past MaxWatchesPerOwner=",
			d->rule->name, D.v2, d->rel);
		add_cg(d->rule, d->rel, true);
		free(d->rel);
		free(d);
	}
}

/* An emptied cgroup of an owner over the cap (watched since populated)
 * goes back to being polled: the cap holds for the empty ones. */
static void demote_over_cap(struct cg *c)
{
	struct owner *o = c->owner ? owner_find(c->owner, false) : NULL;
	struct rule *r = c->rule;
	unsigned uid = c->owner;
	char *rel;

	if (!o || o->n <= owner_cap() || !(rel = strdup(c->rel)))
		return;
	remove_cg(c, NULL);
	dormant_add(r, rel, uid);
	log_msg(LOG_PRI_DEBUG, "rule %s: %s/%s: empty, past MaxWatchesPerOwner=: polled", r->name, D.v2, rel);
	free(rel);
}

void watch_timer_event(struct src *s)
{
	uint64_t ticks, t = now_ms();

	(void)s;
	if (timer.fd >= 0 && read(timer.fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		log_msg(LOG_PRI_DEBUG, "watch timer: %s", strerror(errno));
	while (emptied.head && emptied.head->empty_since + EMPTY_CLOSE_MS <= t) {
		struct cg *c = emptied.head;

		disarm(c);
		log_msg(LOG_PRI_DEBUG, "rule %s: %s/%s: empty: triggers' files closed", c->rule->name, D.v2,
			c->rel);
		demote_over_cap(c);
	}
	if ((ndormants || starved.head) && polled_at + 1000 <= t)
		dormant_poll();
	arm_starved();
	timer_update();
}

/* cgroup.events changed (inotify), or a resync: armed while populated,
 * closed a while after it empties. */
static void watch_populated_event(struct cg *c)
{
	if (c->dead)
		return;
	c->populated = read_populated(c);
	if (!c->populated) {
		if (c->armed && !c->queued) {
			c->empty_since = now_ms();
			q_push(&emptied, c);
			timer_update();
		} else if (!c->armed) {
			q_del(&starved, c);
		}
	} else if (!c->armed) {
		arm(c);
	} else {
		q_del(&emptied, c);
		/* armed: what could not be armed then may be now: a late v1
		 * counterpart, the v1 level standing in for memory-pressure,
		 * PSI triggers dropped with their file (cgroup.pressure 0) */
		arm_triggers(c, true);
	}
	if (c->armed)
		for (const struct trigger_ops *const *t = triggers; *t; t++)
			if ((*t)->populated)
				(*t)->populated(c);
}

/* ---- cgroups ---- */

/* Watch rel for r; force: populated, watched past the cap. */
static void add_cg(struct rule *r, const char *rel, bool force)
{
	char slashed[PATH_MAX], events[PATH_MAX];
	struct watch *w;
	struct cg *c;
	unsigned owner;
	int wd;

	if (cg_find(r, rel))
		return;
	snprintf(slashed, sizeof(slashed), "/%s", rel);
	if ((D.self_rel && !strcmp(slashed, D.self_rel)) || (D.init_rel && !strcmp(slashed, D.init_rel))) {
		log_msg(LOG_PRI_NOTICE, "rule %s: %s is cgkilld's own or PID 1's cgroup: not watched",
			r->name, slashed);
		return;
	}
	if ((size_t)snprintf(events, sizeof(events), "%s/%s/cgroup.events", D.v2, rel) >= sizeof(events))
		return;
	owner = owner_of(rel);
	/* past the cap, a populated cgroup is watched all the same */
	if (!charge(owner, r, rel, force)) {
		struct dormant *d;

		if (cg_populated_at(rel) != 1) {
			dormant_add(r, rel, owner);
			return;
		}
		charge(owner, r, rel, true);
		if ((d = dormant_find(r, rel)))
			dormant_del(d);
	}
	/* the watch first, then the read: no change is missed between */
	wd = inotify_add_watch(D.inotify.fd, events, IN_MODIFY);
	if (wd < 0) {
		watch_failed(r, events, errno);
		uncharge(owner);
		return;
	}
	watches_short = false;
	w = watch_of(wd);	/* another rule's cgroup of the same directory */
	if (!w && (w = calloc(1, sizeof(*w))) && !htab_add(&watches, hash_wd(wd), w)) {
		free(w);
		w = NULL;
	}
	c = w && !w->dir ? calloc(1, sizeof(*c)) : NULL;
	if (!c || !(c->rel = strdup(rel)) || !htab_add(&cgs, hash_cg(r, rel), c)) {
		if (c)
			free(c->rel);
		free(c);
		if (!w || !w->cgs)	/* no other rule's cgroup on it */
			inotify_rm_watch(D.inotify.fd, wd);
		if (w && !w->cgs && !w->dir) {
			htab_del(&watches, hash_wd(wd), w);
			free(w);
		}
		uncharge(owner);
		log_msg(LOG_PRI_ERR, "rule %s: out of memory watching %s", r->name, rel);
		return;
	}
	w->wd = wd;
	c->wd_next = w->cgs;
	w->cgs = c;
	c->events_wd = wd;
	c->owner = owner;
	c->rule = r;
	c->pids.fd = c->mem.fd = c->efd.fd = c->recheck.fd = c->plevel.fd = -1;
	c->pids.cg = c->mem.cg = c->efd.cg = c->recheck.cg = c->plevel.cg = c;
	c->plevel_file = -1;
	for (int i = 0; i < PSI_NRES; i++)
		c->psi[i] = (struct src){ .fd = -1, .cg = c, .close_later = true };
	list_add(&idle, c);
	D.ncgs++;
	kid(rel, 1);
	c->populated = read_populated(c);
	arm_from_watch(c);
	if (c->populated)
		arm(c);
	else
		take_baselines(c);
	log_msg(LOG_PRI_DEBUG, "rule %s: watching %s/%s%s", r->name, D.v2, rel,
		c->armed ? "" : c->populated ? " (populated, short of files)" : " (empty: no file open)");
}

/* c leaves the watch of its cgroup.events; the last one ends it. */
static void unwatch_events(struct cg *c)
{
	struct watch *w = watch_of(c->events_wd);

	if (!w)
		return;
	for (struct cg **p = &w->cgs; *p; p = &(*p)->wd_next)
		if (*p == c) {
			*p = c->wd_next;
			break;
		}
	if (!w->cgs) {
		inotify_rm_watch(D.inotify.fd, w->wd);
		htab_del(&watches, hash_wd(w->wd), w);
		free(w);
	}
}

/* c is no longer watched; why (NULL: the caller says it) is logged. */
static void remove_cg(struct cg *c, const char *why)
{
	if (c->dead)
		return;
	q_del(queue_of(c), c);
	disarm_triggers(c, true);
	htab_del(&cgs, hash_cg(c->rule, c->rel), c);
	list_del(c);
	unwatch_events(c);
	kid(c->rel, -1);
	uncharge(c->owner);
	D.ncgs--;
	victim_forget(c);
	act_forget(c);
	c->dead = true;
	c->armed = false;
	c->next = dead;
	dead = c;
	if (why)
		log_msg(LOG_PRI_DEBUG, "rule %s: %s/%s %s", c->rule->name, D.v2, c->rel, why);
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

/* ---- directories ---- */

static void add_interest(const char *rel, struct rule *r, unsigned level);

static void child(const char *parent, struct rule *r, unsigned level, const char *name)
{
	char *rel;

	if (fnmatch(r->comp[level], name, FNM_PERIOD) != 0)
		return;
	rel = cg_join(parent, name);
	if (!rel)
		return;
	if (level + 1 == r->ncomp)
		add_cg(r, rel, false);
	else
		add_interest(rel, r, level + 1);
	free(rel);
}

static void scan(const char *rel, struct rule *r, unsigned level)
{
	char *path = *rel ? cg_full_path(rel) : strdup(D.v2);
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

/* A new watched directory (its watch wd made), or NULL. */
static struct wdir *wdir_new(const char *rel, int wd, unsigned owner)
{
	struct wdir *w = calloc(1, sizeof(*w));
	struct watch *wt = calloc(1, sizeof(*wt));

	if (nwdirs == wdirs_cap) {
		size_t cap = wdirs_cap ? 2 * wdirs_cap : 64;
		struct wdir **g = realloc(wdirs, cap * sizeof(*g));

		if (g) {
			wdirs = g;
			wdirs_cap = cap;
		}
	}
	if (!w || !wt || nwdirs == wdirs_cap || !(w->rel = strdup(rel)))
		goto fail;
	if (!htab_add(&dirs, hash_str(2166136261u, rel), w))
		goto fail;
	if (!htab_add(&watches, hash_wd(wd), wt)) {
		htab_del(&dirs, hash_str(2166136261u, rel), w);
		goto fail;
	}
	w->wd = wd;
	w->owner = owner;
	w->index = nwdirs;
	wdirs[nwdirs++] = w;
	wt->wd = wd;
	wt->dir = w;
	kid(rel, 1);
	return w;
fail:
	if (w)
		free(w->rel);
	free(w);
	free(wt);
	return NULL;
}

/* Forget w; its watch removed too unless the kernel did (IN_IGNORED). */
static void wdir_drop(struct wdir *w, bool rm_watch)
{
	struct watch *wt = watch_of(w->wd);

	if (rm_watch)
		inotify_rm_watch(D.inotify.fd, w->wd);
	if (wt && wt->dir == w) {
		htab_del(&watches, hash_wd(w->wd), wt);
		free(wt);
	}
	htab_del(&dirs, hash_str(2166136261u, w->rel), w);
	wdirs[w->index] = wdirs[--nwdirs];
	wdirs[w->index]->index = w->index;
	kid(w->rel, -1);
	uncharge(w->owner);
	free(w->rel);
	free(w->in);
	free(w);
}

static void add_interest(const char *rel, struct rule *r, unsigned level)
{
	struct wdir *w = wdir_by_rel(rel);
	struct interest *grown;

	if (!w) {
		char *path = *rel ? cg_full_path(rel) : strdup(D.v2);
		unsigned owner = *rel ? owner_of(rel) : 0;
		int wd;

		if (!path)
			return;
		if (!charge(owner, r, rel, false)) {
			free(path);
			return;
		}
		wd = inotify_add_watch(D.inotify.fd, path,
				       IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM | IN_ONLYDIR);
		if (wd < 0) {
			watch_failed(r, path, errno);
			free(path);
			uncharge(owner);
			return;
		}
		free(path);
		watches_short = false;
		w = wdir_new(rel, wd, owner);
		if (!w) {
			inotify_rm_watch(D.inotify.fd, wd);
			uncharge(owner);
			log_msg(LOG_PRI_ERR, "rule %s: out of memory watching %s", r->name, rel);
			return;
		}
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

int watch_start(void)
{
	for (size_t i = 0; i < D.cfg.nrules; i++)
		add_interest("", &D.cfg.rules[i], 0);
	return 0;
}

void watch_stop(void)
{
	/* the cgroups are there still: only the daemon lets go of them */
	const char *why = D.stopping ? "is no longer watched: cgkilld stops"
				     : "is no longer watched: the rules are reloaded";

	while (D.cgs)
		remove_cg(D.cgs, why);
	while (idle)
		remove_cg(idle, why);
	while (nwdirs)
		wdir_drop(wdirs[nwdirs - 1], true);
	free(wdirs);
	wdirs = NULL;
	wdirs_cap = 0;
	for (size_t i = 0; i < owners.nb; i++)
		for (struct hnode *x = owners.b[i]; x; x = x->next) {
			struct owner *o = x->obj;

			while (o->ring)
				dormant_del(o->ring);
			free(o);
		}
	htab_free(&owners);
	htab_free(&dormants);
	htab_free(&watches);
	htab_free(&dirs);
	htab_free(&cgs);
	src_close(&timer);
	starved_told = false;
	watches_short = false;
}

static bool at_or_below(const char *path, const char *rel, size_t n)
{
	return !strncmp(path, rel, n) && (path[n] == '\0' || path[n] == '/');
}

/* Everything below rel, the slow way: only when something is left there
 * (missed events), never in the course of things. */
static void sweep_below(const char *rel)
{
	size_t n = strlen(rel);
	struct cg **heads[] = { &D.cgs, &idle };

	for (size_t h = 0; h < 2; h++)
		for (struct cg *c = *heads[h], *next; c; c = next) {
			next = c->next;
			if (at_or_below(c->rel, rel, n) && c->rel[n])
				remove_cg(c, "is gone");
		}
	for (size_t i = 0; i < nwdirs;) {
		if (*wdirs[i]->rel && at_or_below(wdirs[i]->rel, rel, n) && wdirs[i]->rel[n])
			wdir_drop(wdirs[i], true);	/* moves the last one here */
		else
			i++;
	}
}

/* A directory rel went away: its cgroups and those below it, and the
 * watches on it and below it. cgroupfs sends nothing to the watch of a
 * removed directory (no IN_DELETE_SELF, no IN_IGNORED: checked on 6.18),
 * so the parent's IN_DELETE is the only word of it: that is why a rule is
 * watched from the mount down, never from the middle. A cgroup with
 * children cannot be removed (nor renamed, on v2): below rel there is
 * nothing left unless events were missed. */
static void gone(const char *rel)
{
	struct wdir *w = wdir_by_rel(rel);

	for (size_t i = 0; i < D.cfg.nrules; i++) {
		struct cg *c = cg_find(&D.cfg.rules[i], rel);
		struct dormant *d = dormant_find(&D.cfg.rules[i], rel);

		if (c)
			remove_cg(c, "is gone");
		if (d)
			dormant_del(d);
	}
	if (!w || !*rel)
		return;
	if (w->nkids)
		sweep_below(rel);
	wdir_drop(w, true);
}

/* After a queue overflow: forget what is gone, pick up what is new, and
 * read again whether each is populated (changes were missed too). */
static void resync(void)
{
	struct cg **all;
	size_t n = 0;

	log_msg(LOG_PRI_WARNING, "inotify queue overflow: rescanning the watched directories");
	/* downwards: a removal moves the last one (seen already) into its place */
	for (size_t i = nwdirs; i-- > 0;) {
		char *rel = i < nwdirs && *wdirs[i]->rel ? strdup(wdirs[i]->rel) : NULL;
		char *p = rel ? cg_full_path(rel) : NULL;

		if (p && access(p, F_OK) < 0 && errno == ENOENT)
			gone(rel);
		free(p);
		free(rel);
	}
	all = malloc((D.ncgs + 1) * sizeof(*all));
	for (struct cg **h = &D.cgs; all && h; h = h == &D.cgs ? &idle : NULL)
		for (struct cg *c = *h; c && n < D.ncgs; c = c->next)
			all[n++] = c;
	for (size_t i = 0; i < n; i++) {
		char *p = cg_full_path(all[i]->rel);

		if (p && access(p, F_OK) < 0 && errno == ENOENT)
			remove_cg(all[i], "is gone");
		else
			watch_populated_event(all[i]);
		free(p);
	}
	free(all);
	for (size_t i = 0; i < nwdirs; i++) {
		struct wdir *w = wdirs[i];

		for (size_t j = 0; j < w->nin; j++)
			scan(w->rel, w->in[j].rule, w->in[j].level);
	}
}

static void dir_event(struct wdir *w, const struct inotify_event *e)
{
	if (!(e->mask & IN_ISDIR) || !e->len || e->name[0] == '.')
		return;
	if (e->mask & (IN_CREATE | IN_MOVED_TO)) {
		/* w->in may grow while we walk it: by index */
		for (size_t i = 0; i < w->nin; i++) {
			struct interest in = w->in[i];

			child(w->rel, in.rule, in.level, e->name);
		}
	} else if (e->mask & (IN_DELETE | IN_MOVED_FROM)) {
		char *rel = cg_join(w->rel, e->name);

		if (rel)
			gone(rel);
		free(rel);
	}
}

void watch_inotify_event(struct src *s)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));

	for (;;) {
		ssize_t n = read(s->fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *e = (struct inotify_event *)p;
			struct watch *w;

			p += sizeof(*e) + e->len;
			if (e->mask & IN_Q_OVERFLOW) {
				resync();
				continue;
			}
			w = watch_of(e->wd);
			if (!w)
				continue;
			if (e->mask & IN_IGNORED) {
				/* the kernel dropped it: what it watched is gone */
				if (w->dir) {
					wdir_drop(w->dir, false);
				} else {
					while (w && w->cgs) {
						remove_cg(w->cgs, "is gone");
						w = watch_of(e->wd);
					}
				}
				continue;
			}
			if (w->dir) {
				dir_event(w->dir, e);
				continue;
			}
			/* cgroup.events: each rule's cgroup of that directory */
			for (struct cg *c = w->cgs; c; c = c->wd_next)
				watch_populated_event(c);
		}
	}
	arm_starved();
}

/* Where a trigger's counter is read: "v2", "v1-polled", "v1", or NULL
 * when it has no file (kept from its last arming while not armed). */
static const char *pids_where(const struct cg *c)
{
	if (c->pids.fd >= 0)
		return c->pids_v1 ? "v1-polled" : "v2";
	if (!c->armed && c->pids_hier)
		return c->pids_hier == 1 ? "v1-polled" : "v2";
	return NULL;
}

static const char *mem_where(const struct cg *c)
{
	if (c->mem.fd >= 0)
		return c->mem_v1 ? "v1" : "v2";
	if (!c->armed && c->mem_hier)
		return c->mem_hier == 1 ? "v1" : "v2";
	return NULL;
}

static const char *cg_state(const struct cg *c)
{
	if (c->armed)
		return c->queued ? "empty: files closed soon" : "armed";
	return c->populated ? "populated: not armed, short of files" : "empty: no file open, armed when populated";
}

static void dump_cg(const struct cg *c, struct out *o)
{
	const char *pids = pids_where(c), *mem = mem_where(c);
	uint64_t t = now_ms(), delay = c->holdoff_until > t ? c->holdoff_until - t : 0;
	char *path = cg_full_path(c->rel);

	if (o->json) {
		out_open(o, NULL, '{');
		out_str(o, "cgroup", path ? path : c->rel);
		out_str(o, "rule", c->rule->name);
		out_str(o, "state", cg_state(c));
		out_str(o, "pids", pids);
		out_str(o, "memory", mem);
		out_u64(o, "post_action_delay_ms", delay);
		out_open(o, "refused", '[');
		counterpart_dump(c, o);
		out_close(o, ']');
		out_open(o, "triggers", '[');
	} else {
		bool armed = !strcmp(cg_state(c), "armed");

		out_line(o, "watching %s (rule %s)%s%s%s%s%s%s%s%s", path ? path : c->rel, c->rule->name,
			 pids ? " pids:" : "", pids ? pids : "", mem ? " memory:" : "", mem ? mem : "",
			 delay ? " (post-action delay)" : "", armed ? "" : " (", armed ? "" : cg_state(c),
			 armed ? "" : ")");
		counterpart_dump(c, o);
	}
	free(path);
	for (const struct trigger_ops *const *tr = triggers; *tr; tr++)
		if ((*tr)->dump && (c->rule->triggers & (*tr)->triggers))
			(*tr)->dump(c, o);
	if (o->json) {
		out_close(o, ']');
		out_close(o, '}');
	}
}

/* The rule's triggers, as its Trigger= words. */
static void trigger_words(const struct rule *r, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	for (unsigned bit = 1; bit && bit <= r->triggers && n < size; bit <<= 1)
		if (r->triggers & bit)
			n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? " " : "", trigger_name(bit));
}

/* A rule and its effective settings: what it acts on, how, and its
 * counts since the start (or the reload). */
static void dump_rule(const struct rule *r, size_t ncg, struct out *o)
{
	char trig[256], sig[16];
	const char *signame = cgk_signal_name(r->sig, sig, sizeof(sig)) ?: "?";
	bool dry = r->dry_run || D.cfg.dry_run || D.global_dry_run;

	trigger_words(r, trig, sizeof(trig));
	if (!o->json) {
		out_line(o,
			 "rule %s: match %s, %zu cgroup(s), action %s%s, %lu event(s), %lu action(s), %lu suppressed by the storm limit",
			 r->name, r->match, ncg, action_name(r->action), dry ? " (dry run)" : "", r->events, r->actions,
			 r->suppressed);
		out_line(o,
			 "rule %s: %s:%u: Trigger=%s, Signal=%s, Victim=%s, PostActionDelay=%llums, MaxActionsPerMinute=%u%s, Wait=%llums",
			 r->name, r->file, r->line, trig, signame, victim_name(r->victim),
			 (unsigned long long)r->delay_ms, r->max_per_minute,
			 r->max_per_minute ? "" : " (no limit)", (unsigned long long)r->wait_ms);
		return;
	}
	out_open(o, NULL, '{');
	out_str(o, "name", r->name);
	out_str(o, "match", r->match);
	out_str(o, "file", r->file);
	out_u64(o, "line", r->line);
	out_open(o, "triggers", '[');
	for (unsigned bit = 1; bit && bit <= r->triggers; bit <<= 1)
		if (r->triggers & bit)
			out_str(o, NULL, trigger_name(bit));
	out_close(o, ']');
	out_str(o, "action", action_name(r->action));
	out_str(o, "signal", signame);
	out_bool(o, "dry_run", dry);
	out_str(o, "victim", victim_name(r->victim));
	out_u64(o, "post_action_delay_ms", r->delay_ms);
	out_u64(o, "max_actions_per_minute", r->max_per_minute);
	out_u64(o, "wait_ms", r->wait_ms);
	out_u64(o, "cgroups", ncg);
	out_u64(o, "events", r->events);
	out_u64(o, "actions", r->actions);
	out_u64(o, "suppressed", r->suppressed);
	out_close(o, '}');
}

static void dump_owners(struct out *o)
{
	if (o->json)
		out_open(o, "owners", '[');
	for (size_t i = 0; i < owners.nb; i++)
		for (const struct hnode *x = owners.b[i]; x; x = x->next) {
			const struct owner *w = x->obj;

			if (!w->n && !w->refused)
				continue;
			if (!o->json) {
				out_line(o,
					 "owner uid %u: %u watched cgroups and directories of %u (MaxWatchesPerOwner=), %lu refused, %u cgroup(s) polled past it",
					 w->uid, w->n, owner_cap(), w->refused, w->ndormant);
				continue;
			}
			out_open(o, NULL, '{');
			out_u64(o, "uid", w->uid);
			out_u64(o, "watches", w->n);
			out_u64(o, "max_watches", owner_cap());
			out_u64(o, "refused", w->refused);
			out_u64(o, "polled", w->ndormant);
			out_close(o, '}');
		}
	if (o->json)
		out_close(o, ']');
}

void watch_dump(struct out *o)
{
	struct cg *const heads[] = { D.cgs, idle };
	size_t narmed = 0;

	for (const struct cg *c = D.cgs; c; c = c->next)
		narmed++;
	if (o->json) {
		out_open(o, "files", '{');
		out_u64(o, "watched_cgroups", D.ncgs);
		out_u64(o, "armed", narmed);
		out_u64(o, "empty", D.ncgs - narmed);
		out_u64(o, "watched_directories", nwdirs);
		out_u64(o, "inotify_watches", watches.n);
		out_close(o, '}');
	} else {
		out_line(o, "state: %zu rule(s), %zu watched cgroup(s), %zu watched directories%s", D.cfg.nrules,
			 D.ncgs, nwdirs, D.global_dry_run || D.cfg.dry_run ? ", dry run" : "");
		out_line(o, "files: %zu cgroup(s) armed, %zu empty with no file open; %zu inotify watches", narmed,
			 D.ncgs - narmed, watches.n);
	}
	dump_owners(o);
	if (o->json)
		out_open(o, "rules", '[');
	for (size_t i = 0; i < D.cfg.nrules; i++) {
		struct rule *r = &D.cfg.rules[i];
		size_t n = 0;

		for (size_t h = 0; h < 2; h++)
			for (const struct cg *c = heads[h]; c; c = c->next)
				n += c->rule == r;
		dump_rule(r, n, o);
	}
	if (o->json) {
		out_close(o, ']');
		out_open(o, "cgroups", '[');
	}
	for (size_t h = 0; h < 2; h++)
		for (const struct cg *c = heads[h]; c; c = c->next)
			dump_cg(c, o);
	if (o->json)
		out_close(o, ']');
}

struct cg *watch_find(const struct rule *r, const char *rel)
{
	struct cg *c = cg_find(r, rel);

	return c && !c->dead ? c : NULL;
}
