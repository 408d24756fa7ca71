// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Terminal escapes in what the command prints (finding F6). Whoever owns a
 * subtree picks its cgroup and process names, and --pid makes such a name
 * the target path: the -v summary and progress lines, the -i prompt, the
 * -p listing, the survivors, error and usage messages and --list-hierarchies
 * must show them with '?' for every control character (C0, DEL, C1) and
 * every byte that is not valid UTF-8, so that no ESC sequence and no 8-bit
 * CSI (a lone 0x9b) reaches the terminal. Valid UTF-8 stays as it is.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
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

#define CMD_MS 60000	/* deadline for one run of the command (loaded CI machines) */

/* An OSC title sequence ended by BEL, a lone 8-bit CSI, a CSI as UTF-8
 * C1 (U+009B), then valid UTF-8 that must stay. The string literals are
 * split where a hex escape would swallow the next character. */
#define ODD "x\x1b]0;pwned\x07" "y\x9b" "1m" "z\xc2\x9b" "2m\xc3\xa9"
#define ODD_SHOWN "x?]0;pwned?y?1mz?2m\xc3\xa9"
/* A command name (at most 15 bytes) with the same kinds of bytes. */
#define COMM "\x1b[31m\x9b\xc2\x9b\xc3\xa9"
#define COMM_SHOWN "?[31m??\xc3\xa9"
/* --raw: \xHH for each byte of a control or of no valid UTF-8. */
#define ODD_RAW "x\\x1b]0;pwned\\x07y\\x9b1mz\\xc2\\x9b2m\xc3\xa9"
#define COMM_RAW "\\x1b[31m\\x9b\\xc2\\x9b\xc3\xa9"

static char *box;

/* Bytes that drive a terminal: ESC, BEL, 0x9b (CSI alone or as the end of
 * U+009B) and the UTF-8 C1 controls (0xc2 0x80..0x9f). */
static unsigned dirty(const char *text)
{
	unsigned n = 0;

	for (const unsigned char *s = (const unsigned char *)text; *s; s++)
		n += *s == 0x1b || *s == 0x07 || *s == 0x9b ||
		     (*s == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f);
	return n;
}

/* text for a diag line, with \xNN for everything but printable ASCII: the
 * TAP stream must not carry the escapes either. */
static void show(const char *what, const char *text)
{
	char buf[2048];
	size_t n = 0;

	for (const unsigned char *s = (const unsigned char *)text; *s && n < sizeof(buf) - 5; s++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, *s >= 0x20 && *s < 0x7f ? "%c" : "\\x%02x",
				      *s);
	buf[n] = '\0';
	diag("%s: %s", what, buf);
}

/* One test point: the exit status. Not exit_is(): its description holds the
 * command line, escapes included. */
static bool status_is(const struct cmd *c, int want, const char *what)
{
	if (is_int(c->status, want, "%s: exit status %d", what, want))
		return true;
	show("stderr", c->err);
	return false;
}

/* One test point: nothing on stdout or stderr drives a terminal. */
static bool clean(const struct cmd *c, const char *what)
{
	unsigned n = dirty(c->out) + dirty(c->err);

	if (ok(n == 0, "%s: no ESC, BEL, 0x9b or UTF-8 C1 on stdout and stderr", what))
		return true;
	show("stdout", c->out);
	show("stderr", c->err);
	return false;
}

/* One test point: text holds want (the name as filtered). */
static bool holds(const char *text, const char *want, const char *what)
{
	if (ok(strstr(text, want) != NULL, "%s", what))
		return true;
	show("want", want);
	show("got", text);
	return false;
}

/* The target <scene>/T/ODD with a TERM-ignorer named COMM in it and a
 * sleeper in the child ODD/ODD; p gets the TERM-ignorer. */
static bool populate(const char *odd, const char *inner, pid_t *p, const char *what)
{
	pid_t q;

	*p = sb_spawn(&(struct sb_proc){ .cgroups = { odd }, .ignore = { SIGTERM }, .comm = COMM });
	q = sb_sleeper(inner);
	return ok(*p > 0 && q > 0, "%s: a TERM-ignorer with an odd name and a sleeper in an odd cgroup",
		  what);
}

static void test_cgroup_names(void)
{
	struct scene s;
	struct cmd c = { 0 };
	char *odd = NULL, *inner = NULL, *missing = NULL;
	char shown[4200], want[4400], pid[16];
	pid_t p;

	if (!scene_start(&s, box, "esc"))
		goto out;
	odd = sb_mkdir(s.target, ODD);
	inner = odd ? sb_mkdir(odd, ODD) : NULL;
	missing = sb_path(s.target, ODD "-missing");
	if (!ok(inner && missing, "cgroups named with ESC, BEL, 0x9b and U+009B"))
		goto out;
	snprintf(shown, sizeof(shown), "%s/" ODD_SHOWN, s.target);
	if (!populate(odd, inner, &p, "setup"))
		goto out;

	/* The listing: a process name and a cgroup name. */
	cmd_run(&c, CMD_MS, "-p", odd, NULL);
	status_is(&c, 0, "-p");
	clean(&c, "-p");
	snprintf(want, sizeof(want), "%d S . " COMM_SHOWN, (int)p);
	if (!ok(count_rows(c.out, want) == 1,
		"-p: the command name shown with '?' for each control and stray byte"))
		show("stdout", c.out);
	holds(c.out, " " ODD_SHOWN " ", "-p: the cgroup name shown the same way");
	cmd_free(&c);

	/* --raw: escaped as util-linux escapes, not replaced. */
	cmd_run(&c, CMD_MS, "-p", "-r", odd, NULL);
	status_is(&c, 0, "-p -r");
	clean(&c, "-p -r");
	snprintf(want, sizeof(want), "%d S . " COMM_RAW "\n", (int)p);
	holds(c.out, want, "-p -r: the command name with \\xHH for each control and stray byte");
	holds(c.out, " " ODD_RAW " ", "-p -r: the cgroup name the same way");
	cmd_free(&c);

	/* JSON escapes what it must, C1 controls too: it may be read on a
	 * terminal. (A stray 0x9b is U+FFFD there.) */
	cmd_run(&c, CMD_MS, "-p", "-j", odd, NULL);
	status_is(&c, 0, "-p -j");
	clean(&c, "-p -j");
	holds(c.out, "\\u009b2m", "-p -j: U+009B in a name is written \\u009b");
	cmd_free(&c);

	/* The prompt, declined. */
	cmd_run_opts(&c, &(struct cmd_opts){ .input = "n\n" }, CMD_MS, "-i", odd, NULL);
	status_is(&c, 4, "-i");
	clean(&c, "-i");
	snprintf(want, sizeof(want), " under %s? [y/N] ", shown);
	holds(c.err, want, "-i: the prompt shows the target with '?'");
	ok(sb_alive(p), "-i: declined, nothing was signalled");
	cmd_free(&c);

	/* Progress while waiting for a TERM-ignorer, then it is a survivor. */
	cmd_run(&c, CMD_MS, "-v", "-s", "TERM", "--wait=900ms", odd, NULL);
	status_is(&c, 3, "-v progress");
	clean(&c, "-v progress");
	snprintf(want, sizeof(want), "cgkill: %s: 1 process(es) left after ", shown);
	if (!ok(count_lines_with(c.err, want) >= 1, "-v: progress lines show the target with '?'"))
		show("stderr", c.err);
	snprintf(want, sizeof(want), "%d S . " COMM_SHOWN, (int)p);
	if (!ok(count_rows(c.err, want) == 1, "-v: the survivor's command name shown with '?'"))
		show("stderr", c.err);
	cmd_free(&c);

	/* The summary of a kill. */
	cmd_run(&c, CMD_MS, "-v", odd, NULL);
	status_is(&c, 0, "-v summary");
	clean(&c, "-v summary");
	snprintf(want, sizeof(want), "cgkill: %s: KILL via ", shown);
	holds(c.err, want, "-v: the summary shows the target with '?'");
	cmd_free(&c);

	/* --pid: the owner of the cgroup picked the target's name. */
	if (populate(odd, inner, &p, "--pid")) {
		snprintf(pid, sizeof(pid), "%d", (int)p);
		cmd_run(&c, CMD_MS, "-v", "--pid", pid, NULL);
		status_is(&c, 0, "--pid -v");
		clean(&c, "--pid -v");
		snprintf(want, sizeof(want), "cgkill: %s: KILL via ", shown);
		holds(c.err, want, "--pid -v: the summary shows the cgroup with '?'");
		cmd_free(&c);
	}

	/* An error message that names the path. */
	cmd_run(&c, CMD_MS, missing, NULL);
	status_is(&c, 1, "missing target");
	clean(&c, "missing target");
	snprintf(want, sizeof(want), "cgkill: %s-missing", shown);
	holds(c.err, want, "missing target: the message shows the path with '?'");
	cmd_free(&c);
out:
	free(odd);
	free(inner);
	free(missing);
	scene_end(&s);
}

/* Usage errors that repeat an argument, getopt's own among them. */
static void test_arguments(void)
{
	static const struct {
		const char *what;
		const char *args[3];
		const char *shown;	/* what the message holds; NULL: not checked */
	} cases[] = {
		{ "-s", { "-s", ODD }, "unknown signal: " ODD_SHOWN "\n" },
		{ "--backend", { "--backend", ODD }, "unknown backend: " ODD_SHOWN " (" },
		{ "--wait=", { "--wait=" ODD }, "invalid duration: " ODD_SHOWN " (" },
		{ "--pid", { "--pid", ODD }, NULL },
		{ "unknown long option", { "--" ODD }, "option '--" ODD_SHOWN "'" },
		{ "unknown short option", { "-v\x9b" }, "invalid option -- '?'\n" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cmd c = { 0 };
		char what[128];

		snprintf(what, sizeof(what), "usage error, %s", cases[i].what);
		cmd_run(&c, CMD_MS, cases[i].args[0], cases[i].args[1], cases[i].args[2], NULL);
		status_is(&c, 2, what);
		clean(&c, what);
		strcat(what, ": the message shows the argument with '?'");
		if (cases[i].shown)
			holds(c.err, cases[i].shown, what);
		cmd_free(&c);
	}
}

/* A cgroup2 mount at a path with the odd name, in a mount namespace of its
 * own so no other test sees it. */
static void test_hierarchies(void)
{
	char tmp[] = "/tmp/cgkill-test-esc.XXXXXX", dir[256], out[256];
	struct cmd c = { 0 };
	pid_t pid;
	int status;

	if (!mkdtemp(tmp)) {
		ok(false, "--list-hierarchies: mkdtemp: %m");
		return;
	}
	snprintf(dir, sizeof(dir), "%s/" ODD, tmp);
	snprintf(out, sizeof(out), "%s/out", tmp);
	if (mkdir(dir, 0755) < 0) {
		ok(false, "--list-hierarchies: mkdir: %m");
		goto out;
	}
	pid = sb_fork();
	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		if (fd < 0 || unshare(CLONE_NEWNS) < 0 ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount("cgroup2", dir, "cgroup2", 0, NULL) < 0 ||
		    dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(100 + errno);
		execl(cmd_path(), "cgkill", "--list-hierarchies", (char *)NULL);
		_exit(127);
	}
	status = pid > 0 ? sb_wait_reaped(pid, CMD_MS) : pid;
	if (!is_int(status, 0, "--list-hierarchies with a cgroup2 mount at an odd path: exit 0"))
		goto out;
	c.out = calloc(1, 65536);
	c.err = calloc(1, 1);
	if (c.out && c.err) {
		int fd = open(out, O_RDONLY | O_CLOEXEC);

		if (fd >= 0 && read(fd, c.out, 65535) < 0)
			diag("read %s: %m", out);
		if (fd >= 0)
			close(fd);
		clean(&c, "--list-hierarchies");
		holds(c.out, "/" ODD_SHOWN " ", "--list-hierarchies: the mount point shown with '?'");
	}
	free(c.out);
	free(c.err);
out:
	unlink(out);
	rmdir(dir);
	rmdir(tmp);
}

int main(void)
{
	box = sb_start(300);
	rec_init();

	test_cgroup_names();
	test_arguments();
	test_hierarchies();

	return sb_finish(box);
}
