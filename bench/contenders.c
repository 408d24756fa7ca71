/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The contenders: the floor (cgroup.kill and a poll; with process_mrelease;
 * static and dynamic), the command per backend (and up to two other builds
 * of it, to compare a change), the library per backend (forked for the
 * kill, or running before the bomb as a daemon), the shell loop and pkill.
 * Which of them a workload gets, and how each is started.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

const struct contender contenders[] = {
	{ "floor", C_FLOOR, CGK_BACKEND_AUTO, H_V2 },
	{ "cgkill -b kernel", C_CMD, CGK_BACKEND_KERNEL, H_V2 },
	{ "cgkill -b freeze", C_CMD, CGK_BACKEND_FREEZE, H_V2 },
	{ "cgkill -b v1-freeze", C_CMD, CGK_BACKEND_V1_FREEZE, H_FRZ },
	{ "cgkill -b loop", C_CMD, CGK_BACKEND_LOOP, H_PIDS },
	{ "lib kernel", C_LIB, CGK_BACKEND_KERNEL, H_V2 },
	{ "lib freeze", C_LIB, CGK_BACKEND_FREEZE, H_V2 },
	{ "lib v1-freeze", C_LIB, CGK_BACKEND_V1_FREEZE, H_FRZ },
	{ "lib loop", C_LIB, CGK_BACKEND_LOOP, H_PIDS },
	{ "shell loop", C_SHELL, CGK_BACKEND_AUTO, H_V2 },
	{ "pkill --cgroup", C_PKILL, CGK_BACKEND_AUTO, H_V2 },
	{ "floor + mrelease", C_FLOOR_MREL, CGK_BACKEND_AUTO, H_V2 },
	/* --cgkill2: a second build of the command, to compare a change. */
	{ "cgkill2 -b kernel", C_CMD2, CGK_BACKEND_KERNEL, H_V2 },
	{ "cgkill2 -b freeze", C_CMD2, CGK_BACKEND_FREEZE, H_V2 },
	{ "cgkill2 -b v1-freeze", C_CMD2, CGK_BACKEND_V1_FREEZE, H_FRZ },
	{ "cgkill2 -b loop", C_CMD2, CGK_BACKEND_LOOP, H_PIDS },
	{ "lib kernel (running)", C_LIBRUN, CGK_BACKEND_KERNEL, H_V2 },
	{ "lib freeze (running)", C_LIBRUN, CGK_BACKEND_FREEZE, H_V2 },
	{ "lib v1-freeze (running)", C_LIBRUN, CGK_BACKEND_V1_FREEZE, H_FRZ },
	{ "lib loop (running)", C_LIBRUN, CGK_BACKEND_LOOP, H_PIDS },
	/* --cgkill3: a third build, for an A/B/C in the same runs. */
	{ "cgkill3 -b kernel", C_CMD3, CGK_BACKEND_KERNEL, H_V2 },
	{ "cgkill3 -b freeze", C_CMD3, CGK_BACKEND_FREEZE, H_V2 },
	{ "cgkill3 -b v1-freeze", C_CMD3, CGK_BACKEND_V1_FREEZE, H_FRZ },
	{ "cgkill3 -b loop", C_CMD3, CGK_BACKEND_LOOP, H_PIDS },
	/* The rows users meet take the static floor as "floor" (the least
	 * work: one write, and no dynamic loader to wait in beside a bomb
	 * that shares libc); this is the usual, dynamic one beside it. */
	{ "floor (dynamic)", C_FLOOR_DYN, CGK_BACKEND_AUTO, H_V2 },
};
/* Other modules size their tables by N_CONTENDERS. */
_Static_assert(sizeof(contenders) / sizeof(contenders[0]) == N_CONTENDERS,
	       "N_CONTENDERS in bench.h is not the number of contenders");

bool applies(const struct contender *c, const struct workload *w)
{
	bool one_cgroup = w->type != W_WIDE && w->type != W_DEEP;

	if ((c->kind == C_CMD2 && !cgkill2_path) || (c->kind == C_CMD3 && !cgkill3_path))
		return false;
	/* The rows users meet: the floor, the command, a running library. */
	if (w->plain)
		return (c->kind == C_FLOOR || c->kind == C_CMD || c->kind == C_CMD2 ||
			c->kind == C_CMD3 || c->kind == C_LIBRUN || c->kind == C_FLOOR_DYN) &&
		       mnt[c->hier][0];
	if (c->kind == C_LIBRUN || c->kind == C_FLOOR_DYN)
		return false;

	/* pkill stalls on a fork bomb's /proc files until the 60 s limit:
	 * measured in the full run, skipped in the quick one. */
	if (c->kind == C_PKILL)
		return one_cgroup && !(quick_mode && w->type == W_BOMB);
	if (c->kind == C_FLOOR_MREL)
		return w->type == W_MEM;
	if (!mnt[c->hier][0])
		return false;
	return true;
}

bool in_list(const char *list, const char *name)
{
	char copy[1024];

	if (!list[0])
		return true;
	snprintf(copy, sizeof(copy), "%s", list);
	for (char *save, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (strcmp(tok, name) == 0)
			return true;
	return false;
}

/* A name in a --contenders or --only list that names nothing is a typo:
 * a run without it would look complete. */
void check_list(const char *list, const char *what, bool (*known)(const char *))
{
	char copy[1024];

	snprintf(copy, sizeof(copy), "%s", list);
	for (char *save, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (!known(tok))
			die("no %s named \"%s\"", what, tok);
}

const struct contender *find_contender(const char *name)
{
	for (size_t i = 0; i < N_CONTENDERS; i++)
		if (strcmp(contenders[i].name, name) == 0)
			return &contenders[i];
	return NULL;
}

/* Its column in cells[][] (names are the fixed ones of contenders[]). */
size_t contender_index(const char *name)
{
	return (size_t)(find_contender(name) - contenders);
}

bool is_contender(const char *name)
{
	return find_contender(name) != NULL;
}

static bool is_command(const struct contender *c)
{
	return c->kind == C_CMD || c->kind == C_CMD2 || c->kind == C_CMD3;
}

/* The program and argv (8 entries) of a floor or a command contender;
 * bname holds the backend's name. The rows users meet (plain) take the
 * static floor as "floor". */
static const char *program(const struct contender *c, const char *target, bool plain,
			   char bname[32], char **argv)
{
	const char *path = c->kind == C_CMD ? cgkill_path : c->kind == C_CMD2 ? cgkill2_path :
			   c->kind == C_CMD3 ? cgkill3_path :
			   c->kind == C_FLOOR && plain ? floor_static_path : floor_path;
	int n = 0;

	if (is_command(c)) {
		snprintf(bname, 32, "%s", cgk_backend_name(c->be));
		argv[n++] = "cgkill";
		argv[n++] = "-q";
		argv[n++] = "-b";
		argv[n++] = bname;
		argv[n++] = "--wait=30s";
	} else {
		argv[n++] = "floor";
		if (c->kind == C_FLOOR_MREL)
			argv[n++] = "-m";
	}
	argv[n++] = (char *)target;
	argv[n] = NULL;
	return path;
}

/* Before the API made them objects, the library's options were a stack
 * initialisation: they are made before the clock starts, and the forked
 * contender inherits them, so that the timed part is the call alone. */
cgk_options *lib_options(const struct contender *c)
{
	cgk_options *o = NULL;

	if (c->kind != C_LIB)
		return NULL;
	if (cgk_options_new(&o) < 0 || cgk_options_set_backend(o, c->be) < 0 ||
	    cgk_options_set_wait(o, 30000) < 0)
		die("%s: cannot make the library's options", c->name);
	return o;
}

/* The timed call of a library contender; exits with its outcome (and so
 * frees nothing: the process ends). */
__attribute__((noreturn))
static void lib_kill(const struct contender *c, const char *target, const cgk_options *o)
{
	cgk_report *rep = NULL;
	int r = cgk_kill(target, o, &rep);

	if (r < 0)
		fprintf(stderr, "bench: lib %s: %s\n", cgk_backend_name(c->be),
			rep ? cgk_report_message(rep) : strerror(-r));
	cgk_report_free(rep);
	_exit(r < 0 ? 1 : 0);
}

void exec_contender(const struct contender *c, const char *target, const char *v2rel,
		    const cgk_options *lib_opts)
{
	char bname[32], *argv[8];
	int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);

	if (devnull >= 0)
		dup2(devnull, STDOUT_FILENO);
	switch (c->kind) {
	case C_FLOOR:
	case C_FLOOR_MREL:
	case C_CMD:
	case C_CMD2:
	case C_CMD3:
		execv(program(c, target, false, bname, argv), argv);
		break;
	case C_SHELL:
		execl("/bin/sh", "sh", shell_path, target, (char *)NULL);
		break;
	case C_PKILL:
		execlp("pkill", "pkill", "-9", "--cgroup", v2rel, (char *)NULL);
		break;
	case C_LIBRUN:	/* started before the workload: lib_running() */
	case C_FLOOR_DYN:	/* the rows users meet only: launcher() */
		break;
	case C_LIB:
		lib_kill(c, target, lib_opts);
	}
	fprintf(stderr, "bench: cannot run %s: %m\n", c->name);
	_exit(127);
}

/* Ready (0, 0) to the harness, then wait for its word. */
static void ready_then_wait(int gofd, int pidfd, int fail)
{
	struct started st = { 0, 0 };
	char b;

	if (write(pidfd, &st, sizeof(st)) < 0 || read(gofd, &b, 1) != 1)
		_exit(fail);
}

/* The library in a process that was already running when the bomb
 * started, as a daemon is: it has made one call (a dry run of the still
 * empty target), then waits for the word. */
void lib_running(const struct contender *c, const char *target, int gofd, int pidfd)
{
	cgk_options *dry = NULL, *o = NULL;
	cgk_report *rep = NULL;
	struct started st;

	ordinary();
	/* Both made now: after the word, nothing but the call. */
	if (cgk_options_new(&dry) < 0 || cgk_options_set_backend(dry, c->be) < 0 ||
	    cgk_options_set_flags(dry, CGK_DRY_RUN) < 0 || cgk_options_new(&o) < 0 ||
	    cgk_options_set_backend(o, c->be) < 0 || cgk_options_set_flags(o, CGK_BOOST) < 0 ||
	    cgk_options_set_wait(o, 30000) < 0)
		_exit(3);
	cgk_kill(target, dry, &rep);
	cgk_report_free(rep);
	cgk_options_free(dry);
	ready_then_wait(gofd, pidfd, 3);
	st = (struct started){ getpid(), now_ns() };
	if (write(pidfd, &st, sizeof(st)) < 0)
		_exit(3);
	lib_kill(c, target, o);
}

/*
 * The rows users meet: the contender is started by an ordinary process
 * (SCHED_OTHER, nice 0, the machine's cpu cgroup), made before the bomb,
 * with posix_spawn() (a vfork: no copy of its address space) and exec'd
 * fresh; its pid goes back through pidfd, its status is ours. A fork()
 * here would measure the parent, not the contender: beside a libc-sharing
 * bomb the fork itself waits (dup_mmap links every file mapping, libc's
 * too, under that mapping's lock), and so does the exec that drops the
 * copy (see RESULTS.md, "Stalls beside a bomb").
 */
void launcher(const struct contender *c, const char *target, int gofd, int pidfd)
{
	posix_spawn_file_actions_t fa;
	char bname[32], *argv[8];
	struct started st = { 0, 0 };
	const char *path;
	int status;
	pid_t pid;

	ordinary();
	/* A parent that has been running (a shell): its pages are mapped.
	 * A fork of ours has no file pages mapped, and would fault libc's in
	 * beside the bomb, in the middle of posix_spawn(). */
	mlockall(MCL_CURRENT);
	path = program(c, target, true, bname, argv);
	/* Without CAP_SYS_NICE (root gets its bounding set at exec), the
	 * command cannot raise its priority: cgkill as it was before. */
	if (((unboosted & 2 && c->kind == C_CMD2) || (unboosted & 4 && c->kind == C_CMD3)) &&
	    prctl(PR_CAPBSET_DROP, 23 /* CAP_SYS_NICE */, 0, 0, 0) < 0)
		_exit(125);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	ready_then_wait(gofd, pidfd, 126);
	/* The clock starts at the spawn: how long this parent waited for a
	 * CPU after the word is its own affair, as a shell's would be. */
	st.t0 = now_ns();
	if (posix_spawn(&pid, path, &fa, NULL, argv, environ) != 0)
		_exit(127);
	st.pid = pid;
	if (write(pidfd, &st, sizeof(st)) < 0)
		_exit(126);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			_exit(126);
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}
