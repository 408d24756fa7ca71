// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Names no one would choose: cgroup names that are not text, start with a
 * dot, hold ':' or terminal escapes (on v2 and v1, where dot names are
 * cgroups too), and paths near and beyond PATH_MAX (a chain of 255-byte
 * names made and used through directory fds), where the self guard must
 * still see cgkill inside its target. Sentinels in the parent and in a
 * sibling of every target must survive.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgkill.h"
#include "support/cgfile.h"
#include "support/cmd.h"
#include "support/internals.h"
#include "support/json.h"
#include "support/kill.h"
#include "support/sandbox.h"
#include "support/scene.h"
#include "support/spawn.h"
#include "support/tap.h"

static char *box;		/* the v2 sandbox */

/* ---- names that are not text ---- */

/* Names that are not text, start with a dot, hold ':' or terminal escapes. */
static const char *const odd_names[] = {
	"\xff\xfe", ".hidden", "..dots", "a:b:c", " space ", "-dash", "tab\there",
	"caf\xc3\xa9", "\x1b[7mbold", "*glob?[x]", "0::", "cgroup.procs.d",
};

#define N_ODD (sizeof(odd_names) / sizeof(odd_names[0]))

static void test_odd_names(void)
{
	struct scene s;

	if (!scene_start(&s, box, "odd"))
		goto out;
	for (size_t b = 0; b < N_V2_BACKENDS; b++) {
		const char *bn = cgk_backend_name(v2_backends[b]);
		pid_t pids[N_ODD + 1];
		unsigned np = 0, killed = 0;
		cgk_report *rep = NULL;
		int r;

		pids[np] = sb_sleeper(s.target);
		np += pids[np] > 0;
		for (size_t i = 0; i < N_ODD; i++) {
			char *d = sb_mkdir(s.target, odd_names[i]);

			pids[np] = d ? sb_sleeper(d) : -1;
			np += pids[np] > 0;
			free(d);
		}
		if (!is_int(np, N_ODD + 1, "odd %s: a sleeper in the target and in each of %zu odd children",
			    bn, N_ODD))
			break;
		r = kill_opts(s.target, v2_backends[b], SIGKILL, 0, 3000, NULL, &rep);
		is_int(r, 0, "odd %s: cgk_kill returns 0 (%s)", bn, cgk_report_message(rep));
		is_int(cgk_report_cgroups(rep), N_ODD + 1, "odd %s: the report counts %zu cgroups", bn, N_ODD + 1);
		for (unsigned i = 0; i < np; i++)
			killed += sb_killed_by(pids[i], SIGKILL, 3000);
		is_int(killed, np, "odd %s: every sleeper died, also under .hidden", bn);
		rep = cgk_report_free(rep);
	}

	/* The target itself has an odd name; the JSON report stays JSON and
	 * the listing does not carry terminal escapes. */
	{
		char *odd = sb_mkdir(s.target, "\xff\x1b]0;owned\x07:T");
		/* ESC sequences, and CSI as a C1 control in UTF-8 (U+009B). */
		char *child = odd ? sb_mkdir(odd, "\x1b[2J\x1b[31mred\xc2\x9b" "1m") : NULL;
		struct cmd cli;
		pid_t p = child ? sb_sleeper(child) : -1;

		if (!ok(p > 0, "odd: a sleeper below a target with an escape sequence in its name"))
			goto free_odd;
		cmd_run(&cli, CMD_MS, "-n", odd, NULL);
		bool clean = true;

		for (const char *c = cli.out; *c; c++)
			if (((unsigned char)*c < 0x20 && *c != '\n' && *c != '\t') ||
			    ((unsigned char)c[0] == 0xc2 && (unsigned char)c[1] >= 0x80 &&
			     (unsigned char)c[1] <= 0x9f))
				clean = false;
		is_int(cli.status, 0, "odd: cgkill -n exits 0");
		ok(clean, "odd: the listing holds no control characters, C0 or C1 (terminal escapes)");
		cmd_free(&cli);
		cmd_run(&cli, CMD_MS, "-j", odd, NULL);
		is_int(cli.status, 0, "odd: cgkill -j exits 0");
		is_int(json_num(cli.out, "d['targets'][0]['emptied']"), 1,
		       "odd: the JSON report says emptied");
		ok(!strchr(cli.out, '\x1b') && !strchr(cli.out, '\xff'),
		   "odd: the JSON holds no raw escape or invalid UTF-8 byte");
		cmd_free(&cli);
		ok(sb_killed_by(p, SIGKILL, 3000), "odd: the sleeper died");
free_odd:
		free(odd);
		free(child);
	}
out:
	scene_end(&s);
}

/* The same walk on a v1 hierarchy: dot names are cgroups there too. */
static void test_odd_names_v1(void)
{
	static const enum cgk_backend bs[] = { CGK_BACKEND_V1_FREEZE, CGK_BACKEND_LOOP };
	char *v1box = sb_mount(SB_V1_FREEZER) ? sb_create(SB_V1_FREEZER) : NULL;
	struct scene s;

	if (!v1box) {
		skip("odd v1: no v1 freezer hierarchy");
		return;
	}
	if (!scene_start(&s, v1box, "odd"))
		goto out;
	for (size_t b = 0; b < 2; b++) {
		const char *bn = cgk_backend_name(bs[b]);
		pid_t pids[N_ODD];
		unsigned np = 0, killed = 0;
		cgk_report *rep = NULL;
		int r;

		for (size_t i = 0; i < N_ODD; i++) {
			char *d = sb_mkdir(s.target, odd_names[i]);

			pids[np] = d ? sb_sleeper(d) : -1;
			np += pids[np] > 0;
			free(d);
		}
		if (!is_int(np, N_ODD, "odd v1 %s: a sleeper in each of %zu odd children", bn, N_ODD))
			break;
		r = kill_opts(s.target, bs[b], SIGKILL, 0, 3000, NULL, &rep);
		is_int(r, 0, "odd v1 %s: cgk_kill returns 0 (%s)", bn, cgk_report_message(rep));
		for (unsigned i = 0; i < np; i++)
			killed += sb_killed_by(pids[i], SIGKILL, 3000);
		is_int(killed, np, "odd v1 %s: every sleeper died, also under .hidden", bn);
		rep = cgk_report_free(rep);
	}
out:
	scene_end(&s);
	ok(sb_destroy(v1box) == 0, "odd v1: sandbox removed");
	free(v1box);
}

/*
 * Paths near and beyond PATH_MAX: a chain of 20 cgroups with 255-byte names
 * below the target, made and used through directory fds.
 */
#define LONG_LEVELS 20

struct selfguard_arg {
	int join_fd, target_fd;
	const char *target;
};

struct selfguard_out {
	int r_fd, r_path, cgroup_read;
	int refused_fd, refused_path;
	char msg[512];
};

/* cgkill sits in a cgroup whose path is longer than PATH_MAX, inside the
 * target: /proc/self/cgroup cannot show it. The guard must still see it. */
static void selfguard_child(void *argp, void *outp)
{
	struct selfguard_arg *a = argp;
	struct selfguard_out *o = outp;
	cgk_options *opts = opts_new(CGK_BACKEND_AUTO, SIGKILL, CGK_DRY_RUN, KILL_WAIT_MS, NULL);
	cgk_report *rep = NULL;

	if (sb_join_fd(a->join_fd) < 0) {
		o->r_fd = 1;
		return;
	}
	free(sb_read_alloc("/proc/self", "cgroup", &o->cgroup_read));
	o->r_fd = cgk_kill_fd(a->target_fd, opts, &rep);
	o->refused_fd = cgk_report_refused(rep);
	snprintf(o->msg, sizeof(o->msg), "%.500s", cgk_report_message(rep));
	rep = cgk_report_free(rep);
	o->r_path = cgk_kill(a->target, opts, &rep);
	o->refused_path = cgk_report_refused(rep);
	rep = cgk_report_free(rep);
	cgk_options_free(opts);
}

/* The end of a message about a 4000-byte path is the part worth showing. */
static const char *tail(const char *msg)
{
	size_t n = strlen(msg);

	return n > 120 ? msg + n - 120 : msg;
}

static void test_long_paths(void)
{
	int fds[LONG_LEVELS + 1];
	char names[LONG_LEVELS + 1][256];
	size_t abslen[LONG_LEVELS + 1];
	unsigned k_ok = 0, k_over = 0;
	struct scene s;
	char *path_ok = NULL, *path_over = NULL;
	pid_t pids[4];
	int r;

	for (int i = 0; i <= LONG_LEVELS; i++)
		fds[i] = -1;
	if (!scene_start(&s, box, "long"))
		goto out;
	fds[0] = open(s.target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	abslen[0] = strlen(s.target);
	for (int i = 1; i <= LONG_LEVELS; i++) {
		memset(names[i], 'a' + i % 26, 255);
		names[i][255] = '\0';
		if (mkdirat(fds[i - 1], names[i], 0755) < 0)
			break;
		fds[i] = openat(fds[i - 1], names[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fds[i] < 0)
			break;
		abslen[i] = abslen[i - 1] + 256;
		if (abslen[i] < 4000)
			k_ok = (unsigned)i;
		else if (!k_over && abslen[i] >= 4096)
			k_over = (unsigned)i;
	}
	if (!ok(fds[LONG_LEVELS] >= 0, "long: a chain of %d cgroups with 255-byte names (%zu bytes deep)",
		LONG_LEVELS, abslen[LONG_LEVELS]))
		goto out;
	path_ok = malloc(abslen[k_ok] + 1);
	path_over = malloc(abslen[k_over] + 1);
	if (!path_ok || !path_over)
		goto out;
	strcpy(path_ok, s.target);
	for (unsigned i = 1; i <= k_over; i++) {
		if (i == k_ok + 1)
			strcpy(path_over, path_ok);
		strcat(i <= k_ok ? path_ok : path_over, "/");
		strcat(i <= k_ok ? path_ok : path_over, names[i]);
	}
	note("long: level %u is %zu bytes, level %u is %zu bytes", k_ok, strlen(path_ok), k_over,
	     strlen(path_over));

	/* Just below PATH_MAX: a path the library takes as it is. */
	{
		struct cgk_target t;
		char msg[4608];

		r = target_open(path_ok, &t, msg, sizeof(msg));
		ok(r == 0 && !strcmp(t.path, path_ok), "long: a %zu-byte target path resolves (%s)",
		   strlen(path_ok), tail(msg));
		if (r == 0)
			cgk_target_close(&t);
		r = target_open(path_over, &t, msg, sizeof(msg));
		is_int(r, -ENAMETOOLONG, "long: a %zu-byte path: ENAMETOOLONG, clean error (%s)",
		       strlen(path_over), tail(msg));
		if (r == 0)
			cgk_target_close(&t);
	}

	for (int round = 0; round < 4; round++) {
		static const char *const what[] = { "deep target, freeze", "short target, freeze",
						    "short target, loop", "short target, kernel" };
		enum cgk_backend b = round == 3 ? CGK_BACKEND_KERNEL :
				     round == 2 ? CGK_BACKEND_LOOP : CGK_BACKEND_FREEZE;
		const char *target = round == 0 ? path_ok : s.target;
		unsigned first = round == 0 ? k_ok : 0;
		unsigned levels[4] = { first, k_over, k_over + 2, LONG_LEVELS };
		unsigned killed = 0, expect_cgroups = LONG_LEVELS - first + 1;
		cgk_report *rep = NULL;

		for (int i = 0; i < 4; i++)
			pids[i] = sb_sleeper_at(fds[levels[i]]);
		if (!ok(pids[0] > 0 && pids[1] > 0 && pids[2] > 0 && pids[3] > 0,
			"long %s: sleepers at levels %u, %u, %u and %u", what[round], levels[0],
			levels[1], levels[2], levels[3]))
			break;
		if (round == 0) {
			char p[64];

			snprintf(p, sizeof(p), "/proc/%d", (int)pids[3]);
			free(sb_read_alloc(p, "cgroup", &r));
			note("long: /proc/PID/cgroup of the deepest sleeper: %s",
			     r < 0 ? strerrorname_np(-r) : "readable");

			/* The over-long level named by its fd: a clean error. */
			r = cgk_kill_fd(fds[k_over], NULL, &rep);
			ok(r < 0, "long: cgk_kill_fd on a cgroup beyond PATH_MAX fails cleanly (%s)",
			   tail(cgk_report_message(rep)));
			rep = cgk_report_free(rep);
			ok(sb_alive(pids[2]) && sb_alive(pids[3]), "long: ... and signals nothing");
		}
		r = kill_opts(target, b, SIGKILL, 0, KILL_WAIT_MS, NULL, &rep);
		is_int(r, 0, "long %s: cgk_kill returns 0 (%s)", what[round],
		       tail(cgk_report_message(rep)));
		is_int(cgk_report_cgroups(rep), expect_cgroups, "long %s: the report counts %u cgroups", what[round],
		       expect_cgroups);
		for (int i = 0; i < 4; i++)
			killed += sb_killed_by(pids[i], SIGKILL, 3000);
		is_int(killed, 4, "long %s: all 4 sleepers died, also those beyond PATH_MAX", what[round]);
		rep = cgk_report_free(rep);
	}

	/* The self guard when cgkill's own cgroup is beyond PATH_MAX. */
	{
		struct selfguard_arg a = { .join_fd = fds[LONG_LEVELS], .target_fd = fds[1],
					   .target = s.target };
		struct selfguard_out o;
		pid_t other = sb_sleeper_at(fds[2]);

		r = child_call(selfguard_child, &a, &o, sizeof(o), 30000, NULL);
		if (is_int(r, 0, "long: a child in the deepest cgroup reports")) {
			note("long: its /proc/self/cgroup: %s",
			     o.cgroup_read < 0 ? strerrorname_np(-o.cgroup_read) : "readable");
			is_int(o.refused_fd, CGK_GUARD_SELF,
			       "long: the self guard refuses a target holding cgkill beyond PATH_MAX (by fd: %s)",
			       tail(o.msg));
			is_int(o.refused_path, CGK_GUARD_SELF, "long: ... and by path");
		}
		ok(sb_alive(other), "long: nothing was signalled by the dry runs");
	}

	{
		struct cmd cli;

		cmd_run(&cli, CMD_MS, "-n", path_ok, NULL);
		is_int(cli.status, 0, "long: cgkill -n on the %zu-byte path exits 0",
		       strlen(path_ok));
		cmd_free(&cli);
	}
out:
	for (int i = LONG_LEVELS; i >= 0; i--)
		if (fds[i] >= 0)
			close(fds[i]);
	if (s.target) {
		int tfd = open(s.target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (tfd >= 0) {
			memset(names[1], 'a' + 1, 255);
			names[1][255] = '\0';
			ok(sb_rmtree_at(tfd, names[1]) == 0, "long: the chain is removed");
			close(tfd);
		}
	}
	free(path_ok);
	free(path_over);
	scene_end(&s);
}

int main(void)
{
	box = sb_start(600);

	test_odd_names();
	test_odd_names_v1();
	test_long_paths();

	return sb_finish(box);
}
