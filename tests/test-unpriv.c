// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cgkill as an unprivileged user (uid 65534) on a delegated sandbox subtree:
 * it kills exactly what the kernel lets that user signal. The kernel backend
 * is refused (cgroup.kill is not delegated), auto falls back and says so; a
 * root-owned process in the delegated cgroup is reported as not permitted,
 * not retried forever, and survives; processes of the same user outside the
 * target (which the user could signal) get nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgkill.h"
#include "support/cgfile.h"
#include "support/cmd.h"
#include "support/json.h"
#include "support/kill.h"
#include "support/record.h"
#include "support/sandbox.h"
#include "support/scene.h"
#include "support/spawn.h"
#include "support/tap.h"

#define NOBODY 65534

static char *box;

static int drop_to(uid_t uid)
{
	if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
		return -errno;
	return 0;
}

/* A process in cgroup running as uid (0: root), recording signals. */
static pid_t spawn_as(const char *cgroup, uid_t uid, bool record)
{
	struct sb_proc p = { .cgroups = { cgroup }, .uid = uid, .record = REC_STRAY };

	if (!record)
		memset(p.record, 0, sizeof(p.record));
	return sb_spawn(&p);
}

/* chown the directory and the files a delegation hands over. */
static int delegate(const char *dir, uid_t uid)
{
	static const char *const files[] = { "", "/cgroup.procs", "/cgroup.subtree_control",
					     "/cgroup.threads" };

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char p[4352];

		snprintf(p, sizeof(p), "%s%s", dir, files[i]);
		if (chown(p, uid, uid) < 0)
			return -errno;
	}
	return 0;
}

struct unpriv_arg {
	const char *target;
	enum cgk_backend backend;
	int signal;
	uint64_t wait_ms;
	const char *protected_file;
	pid_t root_pid;		/* a root process expected among the survivors */
};

struct unpriv_out {
	int drop, r;
	enum cgk_backend backend, fell_back_from;
	int fallback_errno;
	unsigned signalled, not_permitted, survivors;
	bool root_survivor, emptied;
	uint64_t elapsed_ms;
	char msg[512];
};

static void unpriv_child(void *argp, void *outp)
{
	struct unpriv_arg *a = argp;
	struct unpriv_out *o = outp;
	cgk_report *rep = NULL;
	uint64_t t0;

	o->drop = drop_to(NOBODY);
	if (o->drop < 0)
		return;
	t0 = sb_now_ms();
	o->r = kill_opts(a->target, a->backend, a->signal, 0, a->wait_ms, a->protected_file, &rep);
	o->elapsed_ms = sb_now_ms() - t0;
	o->backend = cgk_report_backend(rep);
	o->fell_back_from = cgk_report_fell_back_from(rep);
	o->fallback_errno = cgk_report_fallback_errno(rep);
	o->signalled = cgk_report_signalled(rep);
	o->not_permitted = cgk_report_not_permitted(rep);
	o->survivors = (unsigned)cgk_report_n_processes(rep, CGK_LIST_SURVIVORS);
	o->emptied = cgk_report_emptied(rep);
	o->root_survivor = rep_has_pid(rep, CGK_LIST_SURVIVORS, a->root_pid) > 0;
	snprintf(o->msg, sizeof(o->msg), "%.500s", cgk_report_message(rep));
	rep = cgk_report_free(rep);
}

static bool run_unpriv(struct unpriv_arg *a, struct unpriv_out *o, const char *what)
{
	int r = child_call(unpriv_child, a, o, sizeof(*o), 60000, NULL);

	if (!is_int(r, 0, "%s: the uid %d child reports", what, NOBODY))
		return false;
	if (!is_int(o->drop, 0, "%s: dropped to uid %d", what, NOBODY))
		return false;
	return true;
}

int main(void)
{
	struct scene s;
	char *own = NULL, *other = NULL, protfile[] = "/tmp/cgkill-prot.XXXXXX";
	pid_t users[4], root_pid, canary, other_user, other_root;
	struct unpriv_arg a;
	struct unpriv_out o;
	struct cmd cli;
	uint64_t t0;
	struct cmd_opts as_nobody = { .uid = NOBODY };
	char buf[64] = "";
	int fd;

	box = sb_start(300);
	rec_init();
	if (!scene_start(&s, box, "deleg"))
		goto out;

	/* The delegated target T; a child u made by the user in it. */
	if (!is_int(delegate(s.target, NOBODY), 0, "chown the target and its delegated files to %d",
		    NOBODY))
		goto out;
	{
		pid_t mk = sb_fork();

		if (mk == 0) {
			char *u = sb_path(s.target, "u");

			_exit(drop_to(NOBODY) == 0 && u && mkdir(u, 0755) == 0 ? 0 : 1);
		}
		is_int(sb_wait_reaped(mk, 5000), 0, "the user makes a child cgroup u in the delegated target");
	}
	own = sb_path(s.target, "u");
	canary = spawn_as(s.sibling, NOBODY, true);
	ok(canary > 0, "a uid %d recorder in the sibling (the user could signal it)", NOBODY);

	/* 1. The library as the user: kernel refused, falls back, the
	 * root-owned process is not permitted and survives. */
	for (int i = 0; i < 3; i++)
		users[i] = spawn_as(s.target, NOBODY, false);
	users[3] = spawn_as(own, NOBODY, false);
	root_pid = spawn_as(s.target, 0, false);
	if (!ok(users[0] > 0 && users[3] > 0 && root_pid > 0,
		"4 uid %d sleepers (one in u) and a root sleeper in the target", NOBODY))
		goto out;
	a = (struct unpriv_arg){ .target = s.target, .signal = SIGKILL, .wait_ms = 1500,
				 .root_pid = root_pid };
	if (run_unpriv(&a, &o, "lib")) {
		is_int(o.r, -EPERM, "lib: the root process cannot be signalled: EPERM (%s)", o.msg);
		ok(strstr(o.msg, "1 process(es) could not be signalled: not permitted (4 signalled)") &&
		   strstr(o.msg, "(EPERM)"), "lib: the message says how many were refused and signalled");
		is_int(o.fell_back_from, CGK_BACKEND_KERNEL, "lib: the report says it fell back from kernel");
		is_int(o.fallback_errno, EACCES, "lib: ... because of EACCES");
		ok(o.backend == CGK_BACKEND_LOOP || o.backend == CGK_BACKEND_FREEZE,
		   "lib: a backend that works did the job (%s)", cgk_backend_name(o.backend));
		is_int(o.signalled, 4, "lib: 4 signalled");
		is_int(o.not_permitted, 1, "lib: 1 not permitted");
		ok(o.elapsed_ms < 1000, "lib: returns at once, not at the 1.5 s deadline (%llu ms)",
		   (unsigned long long)o.elapsed_ms);
	}
	is_int(sb_count_killed(users, 4, SIGKILL, 3000), 4, "lib: the user's 4 processes died");
	ok(sb_alive(root_pid), "lib: the root process is alive");

	/* 2. The command as the user, with a JSON report. */
	for (int i = 0; i < 4; i++)
		users[i] = spawn_as(i == 3 ? own : s.target, NOBODY, false);
	t0 = sb_now_ms();
	cmd_run_opts(&cli, &as_nobody, CMD_MS, "-j", "--wait=1s", s.target, NULL);
	t0 = sb_now_ms() - t0;
	is_int(cli.status, 1, "cli: cgkill as uid %d exits 1 (a process it may not signal)", NOBODY);
	ok(strstr(cli.out, "\"EPERM\"") != NULL, "cli: the JSON error names EPERM");
	ok(t0 < 1000, "cli: it ends at once, not at the 1 s wait (%llu ms)", (unsigned long long)t0);
	ok(!strcmp(json_str(cli.out, "d['targets'][0]['fell_back_from']", buf, sizeof(buf)), "kernel"),
	   "cli: JSON fell_back_from = kernel (%s)", buf);
	ok(!strcmp(json_str(cli.out, "d['targets'][0]['fallback_error']['errno']", buf, sizeof(buf)),
		   "EACCES"),
	   "cli: JSON fallback_error = EACCES (%s)", buf);
	is_int(json_num(cli.out, "d['targets'][0]['not_permitted']"), 1,
	       "cli: JSON not_permitted = 1");
	is_int(json_num(cli.out, "d['targets'][0]['signalled']"), 4, "cli: JSON signalled = 4");
	cmd_free(&cli);
	is_int(sb_count_killed(users, 4, SIGKILL, 3000), 4, "cli: the user's 4 processes died");

	/* 3. Another signal, and no wait: not retried forever, returns. */
	for (int i = 0; i < 4; i++)
		users[i] = spawn_as(i == 3 ? own : s.target, NOBODY, false);
	a = (struct unpriv_arg){ .target = s.target, .signal = SIGUSR1, .wait_ms = 0,
				 .root_pid = root_pid };
	if (run_unpriv(&a, &o, "usr1")) {
		is_int(o.r, -EPERM, "usr1: a refused signal is an error, EPERM (%s)", o.msg);
		is_int(o.not_permitted, 1, "usr1: 1 not permitted");
		ok(o.elapsed_ms < 3000, "usr1: returns at once (%llu ms)", (unsigned long long)o.elapsed_ms);
	}
	is_int(sb_count_killed(users, 4, SIGUSR1, 3000), 4, "usr1: the user's 4 processes died of USR1");

	/* 4. The kernel backend forced: refused with a clear error. */
	users[0] = spawn_as(s.target, NOBODY, false);
	cmd_run_opts(&cli, &as_nobody, CMD_MS, "-b", "kernel", s.target, NULL);
	is_int(cli.status, 1, "kernel: cgkill -b kernel as uid %d exits 1", NOBODY);
	ok(strstr(cli.err, "cgroup.kill") && strstr(cli.err, "EACCES"),
	   "kernel: it says cgroup.kill was refused: %.*s", (int)strcspn(cli.err, "\n"), cli.err);
	cmd_free(&cli);
	ok(sb_alive(users[0]), "kernel: nothing signalled");

	/* 5. The user's own child cgroup: its cgroup.kill is the user's. */
	users[1] = spawn_as(own, NOBODY, false);
	cmd_run_opts(&cli, &as_nobody, CMD_MS, "-j", own, NULL);
	is_int(cli.status, 0, "own child: cgkill as uid %d exits 0", NOBODY);
	ok(!strcmp(json_str(cli.out, "d['targets'][0]['backend']", buf, sizeof(buf)), "kernel"),
	   "own child: the kernel backend did it (%s)", buf);
	is_int(json_num(cli.out, "d['targets'][0]['fell_back_from']"), -1, "own child: no fallback");
	cmd_free(&cli);
	ok(sb_killed_by(users[1], SIGKILL, 3000), "own child: the process died");
	ok(sb_alive(users[0]), "own child: the process in the parent target is alive");
	kill(users[0], SIGKILL);
	sb_wait_reaped(users[0], 3000);

	/* 6. A cgroup not delegated at all: the user still kills what the
	 * kernel lets it signal (its own processes), nothing else. */
	other = sb_mkdir(s.parent, "N");
	other_user = other ? spawn_as(other, NOBODY, false) : -1;
	other_root = other ? spawn_as(other, 0, false) : -1;
	if (ok(other_user > 0 && other_root > 0, "not delegated: a user and a root process in N")) {
		a = (struct unpriv_arg){ .target = other, .signal = SIGKILL, .wait_ms = 1000,
					 .root_pid = other_root };
		if (run_unpriv(&a, &o, "not delegated")) {
			is_int(o.r, -EPERM, "not delegated: EPERM, the root process cannot be signalled");
			ok(o.fell_back_from == CGK_BACKEND_KERNEL && o.fallback_errno == EACCES,
			   "not delegated: kernel refused with EACCES");
			is_int(o.not_permitted, 1, "not delegated: 1 not permitted");
		}
		ok(sb_killed_by(other_user, SIGKILL, 3000), "not delegated: the user's own process died");
		ok(sb_alive(other_root), "not delegated: the root process is alive");
	}

	/* 7. A protected list the user cannot read: an error, nothing signalled. */
	fd = mkstemp(protfile);
	if (fd >= 0) {
		close(fd);
		chmod(protfile, 0600);
		users[0] = spawn_as(s.target, NOBODY, false);
		a = (struct unpriv_arg){ .target = s.target, .signal = SIGKILL, .wait_ms = 1000,
					 .protected_file = protfile };
		if (run_unpriv(&a, &o, "unreadable list"))
			is_int(o.r, -EACCES, "unreadable list: cgk_kill fails with EACCES (%s)", o.msg);
		ok(sb_alive(users[0]), "unreadable list: nothing signalled");
		unlink(protfile);
	}

	ok(sb_alive(canary), "the user's recorder in the sibling is alive");
	is_int(rec_take(NULL), 0, "no signal reached the user's recorder outside the target");
out:
	free(own);
	free(other);
	scene_end(&s);
	return sb_finish(box);
}

