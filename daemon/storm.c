/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The storm limit (MaxActionsPerMinute=) and whom an action is charged
 * to: the budgets of actions a minute, per rule and owner.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgkilld.h"

/* The storm limit, counted per owner: a budget of MaxActionsPerMinute
 * actions a minute for each rule and owner, so that one owner's storm
 * never spends another's. The owner is the one an action is charged to
 * (charged_uid(): that of the cgroup acted on, or for a root-owned one
 * the owner of the processes in it): a user's cgroups, and the root-owned
 * ones that hold that user's processes or delegated cgroups, share their
 * user's budget; root's processes share root's (the net under a rule that
 * misfires on the system's services holds as before). A budget is kept
 * while it holds an action of the last minute, under the rule's name
 * (carried over a reload). */
struct storm {
	char *rule;
	uid_t uid;
	uint64_t t[STORM_SLOTS];	/* times (ms) of its last actions */
	unsigned n;
	struct storm *next;
};

static struct storm *storms;

#define STORM_MS 60000

/* Forget the budgets with no action in the last minute. */
static void storm_expire(uint64_t t)
{
	for (struct storm **p = &storms, *b; (b = *p);) {
		bool recent = false;

		for (unsigned i = 0; i < b->n; i++)
			recent |= b->t[i] + STORM_MS > t;
		if (recent) {
			p = &b->next;
			continue;
		}
		*p = b->next;
		free(b->rule);
		free(b);
	}
}

/* The budget of rule for uid (created if none and create); NULL without
 * memory. */
static struct storm *storm_of(const char *rule, uid_t uid, bool create)
{
	struct storm *b;

	for (b = storms; b; b = b->next)
		if (b->uid == uid && !strcmp(b->rule, rule))
			return b;
	if (!create)
		return NULL;
	b = calloc(1, sizeof(*b));
	if (!b || !(b->rule = strdup(rule))) {
		free(b);
		return NULL;
	}
	b->uid = uid;
	b->next = storms;
	storms = b;
	return b;
}

bool storm_ok(const char *rule, unsigned max_per_minute, uid_t uid, uint64_t t, uint64_t *until)
{
	unsigned n = 0, i = 0;
	uint64_t oldest = UINT64_MAX;
	struct storm *b;

	if (!max_per_minute)
		return true;
	storm_expire(t);
	b = storm_of(rule, uid, true);
	if (!b)
		return true;	/* no memory: the action matters more */
	for (unsigned k = 0; k < b->n; k++)
		if (b->t[k] + STORM_MS > t) {
			n++;
			if (b->t[k] < oldest)
				oldest = b->t[k];
		}
	if (n >= max_per_minute) {
		*until = oldest + STORM_MS;
		return false;
	}
	if (b->n < STORM_SLOTS) {
		i = b->n++;
	} else {
		/* replace the oldest */
		for (unsigned k = 1; k < STORM_SLOTS; k++)
			if (b->t[k] < b->t[i])
				i = k;
	}
	b->t[i] = t;
	return true;
}

void storm_refund(const char *rule, uid_t uid, uint64_t t)
{
	struct storm *b = storm_of(rule, uid, false);

	for (unsigned k = 0; b && k < b->n; k++)
		if (b->t[k] == t) {
			b->t[k] = 0;
			return;
		}
}

void storm_dump(struct out *o)
{
	uint64_t t = now_ms();

	if (o->json)
		out_open(o, "storm", '[');
	for (const struct storm *b = storms; b; b = b->next) {
		unsigned n = 0;
		uint64_t oldest = UINT64_MAX;

		for (unsigned k = 0; k < b->n; k++)
			if (b->t[k] && b->t[k] + STORM_MS > t) {
				n++;
				if (b->t[k] < oldest)
					oldest = b->t[k];
			}
		if (!n)
			continue;
		if (!o->json) {
			out_line(o, "storm budget: rule %s, uid %d: %u action(s) in the last minute, the oldest leaves it in %llums",
				 b->rule, (int)b->uid, n, (unsigned long long)(oldest + STORM_MS - t));
			continue;
		}
		out_open(o, NULL, '{');
		out_str(o, "rule", b->rule);
		out_int(o, "uid", (int)b->uid);
		out_u64(o, "actions_last_minute", n);
		out_u64(o, "oldest_leaves_in_ms", oldest + STORM_MS - t);
		out_close(o, '}');
	}
	if (o->json)
		out_close(o, ']');
}

/* ---- whom an action is charged to (the storm limit's owner) ----
 *
 * The owner of the cgroup acted on when it is not root's. A root-owned
 * one (systemd's user-UID.slice, an admin's per-job cgroup) is charged to
 * whoever holds its processes: the owner of the delegated cgroups (not
 * root's, below its root-owned part) that hold processes, if they are all
 * one owner's; else the owner of most processes, a delegated subtree's
 * counting for its delegated owner whatever their uids (a delegatee's
 * setuid-root or subordinate uids stay its own), a root-owned cgroup's
 * for their real uid (root placed them there). Root only when its
 * processes are the most; uid -1 (nobody's) when none is found. Bounded:
 * OWNER_DIRS cgroups of the root-owned part (delegated roots included),
 * SUBTREE_DIRS cgroups and OWNER_PROCS processes counted in each
 * delegated subtree (a subtree larger than that counts as OWNER_PROCS:
 * hiding processes deep charges the one who hid them), the real uid of
 * OWNER_SAMPLE processes of the root-owned cgroups. Accounting only:
 * a pid reused while it is read costs one count. */
#define OWNER_DIRS 128
#define SUBTREE_DIRS 64
#define OWNER_PROCS 4096
#define OWNER_SAMPLE 256
#define OWNER_UIDS 64

struct tally {
	uid_t uid[OWNER_UIDS];
	unsigned n[OWNER_UIDS];
	unsigned len;
	unsigned dirs, sampled;	/* of the root-owned part */
	unsigned delegated;	/* delegated owners holding processes (0, 1, 2: more) */
	uid_t delegatee;	/* the first of them */
};

static void tally_add(struct tally *t, uid_t uid, unsigned n)
{
	unsigned i = 0;

	while (i < t->len && t->uid[i] != uid)
		i++;
	if (i == OWNER_UIDS)
		return;
	if (i == t->len) {
		t->uid[t->len++] = uid;
		t->n[i] = 0;
	}
	t->n[i] += n;
}

/* Reads the cgroup.procs of dfd by chunks: calls line(pid, arg) per pid
 * until it returns false. */
static void each_pid(int dfd, bool (*line)(long pid, void *arg), void *arg)
{
	int fd = openat(dfd, "cgroup.procs", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	char buf[4096];
	size_t have = 0;
	ssize_t n;

	if (fd < 0)
		return;
	while ((n = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
		char *p = buf, *nl;

		have += (size_t)n;
		buf[have] = '\0';
		while ((nl = strchr(p, '\n'))) {
			if (!line(strtol(p, NULL, 10), arg)) {
				close(fd);
				return;
			}
			p = nl + 1;
		}
		have -= (size_t)(p - buf);
		memmove(buf, p, have);
	}
	close(fd);
}

struct subtree {
	unsigned dirs, procs;
};

static bool count_pid(long pid, void *arg)
{
	struct subtree *s = arg;

	(void)pid;
	return ++s->procs < OWNER_PROCS;
}

static int count_below(int cfd, void *arg);

/* Counts the processes of the subtree at dfd into s, up to the bounds;
 * false once a bound is reached. */
static bool count_subtree(int dfd, struct subtree *s)
{
	if (++s->dirs > SUBTREE_DIRS)
		return false;
	each_pid(dfd, count_pid, s);
	return s->procs < OWNER_PROCS && cg_each_child(dfd, count_below, s) <= 0;
}

/* cg_each_child()'s visit: 0 to go on, 1 to stop */
static int count_below(int cfd, void *arg)
{
	return !count_subtree(cfd, arg);
}

static bool sample_pid(long pid, void *arg)
{
	struct tally *t = arg;
	uid_t u[3], uid = proc_uids((pid_t)pid, u) == 0 ? u[0] : (uid_t)-1;

	if (uid != (uid_t)-1)
		tally_add(t, uid, 1);
	return ++t->sampled < OWNER_SAMPLE;
}

static int root_part_child(int cfd, void *arg);

/* The root-owned part at dfd: its processes by real uid, its delegated
 * subtrees by their owner. */
static bool root_part(int dfd, struct tally *t)
{
	if (++t->dirs > OWNER_DIRS)
		return false;
	if (t->sampled < OWNER_SAMPLE)
		each_pid(dfd, sample_pid, t);
	return cg_each_child(dfd, root_part_child, t) <= 0;
}

/* cg_each_child()'s visit: 0 to go on, 1 to stop */
static int root_part_child(int cfd, void *arg)
{
	struct tally *t = arg;
	struct subtree s = { 0 };
	struct stat st;

	if (fstat(cfd, &st) < 0)
		return 0;
	if (st.st_uid == 0)
		return !root_part(cfd, t);
	if (cg_populated(cfd) <= 0)
		return 0;
	if (++t->dirs > OWNER_DIRS)
		return 1;
	if (!t->delegated) {
		t->delegated = 1;
		t->delegatee = st.st_uid;
	} else if (t->delegatee != st.st_uid) {
		t->delegated = 2;
	}
	tally_add(t, st.st_uid, count_subtree(cfd, &s) ? s.procs : OWNER_PROCS);
	return 0;
}

/* The owner charged for an action on the cgroup at fd (see above). */
uid_t charged_uid(int fd)
{
	struct tally t = { .len = 0 };
	struct stat st;
	unsigned best = 0;
	uid_t uid = (uid_t)-1;

	if (fstat(fd, &st) < 0)
		return (uid_t)-1;
	if (st.st_uid != 0)
		return st.st_uid;
	root_part(fd, &t);
	if (t.delegated == 1)
		return t.delegatee;
	/* most processes; a tie goes to the first non-root uid */
	for (unsigned i = 0; i < t.len; i++)
		if (t.n[i] > best || (t.n[i] == best && uid == 0)) {
			best = t.n[i];
			uid = t.uid[i];
		}
	return uid;
}

