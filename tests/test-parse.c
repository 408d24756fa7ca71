// SPDX-License-Identifier: LGPL-2.1-or-later
/* Unit tests of the pure parsers in lib/parse.c. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "support/tap.h"

/* Parse s (length strlen) into a fresh vector; returns the result. */
static int pids(const char *s, struct cgk_pidvec *v)
{
	*v = (struct cgk_pidvec){ 0 };
	return cgk_parse_pids(s, strlen(s), v);
}

static void test_pids(void)
{
	struct cgk_pidvec v;
	int r;

	r = pids("1\n22\n333\n", &v);
	is_int(r, 0, "pids: normal list");
	is_int((long long)v.n, 3, "pids: three entries");
	ok(v.n == 3 && v.v[0] == 1 && v.v[1] == 22 && v.v[2] == 333,
	   "pids: values in order");
	cgk_pidvec_free(&v);

	r = pids("", &v);
	ok(r == 0 && v.n == 0, "pids: empty buffer is an empty list");
	cgk_pidvec_free(&v);

	r = pids("17\n4194304", &v);
	ok(r == 0 && v.n == 2 && v.v[1] == 4194304,
	   "pids: missing final newline tolerated");
	cgk_pidvec_free(&v);

	r = pids("5\n0\n0\n6\n", &v);
	ok(r == 0 && v.n == 4 && v.v[1] == 0 && v.v[2] == 0 && v.v[3] == 6,
	   "pids: 0 entries (other pid namespace) are kept");
	cgk_pidvec_free(&v);

	r = pids("2147483647\n", &v);
	ok(r == 0 && v.n == 1 && v.v[0] == 2147483647, "pids: INT_MAX accepted");
	cgk_pidvec_free(&v);

	/* a long list, across many lines, parsed with an explicit length */
	{
		size_t cap = 100000 * 8, o = 0;
		char *buf = malloc(cap);
		bool good = true;

		for (int i = 1; i <= 100000; i++)
			o += (size_t)snprintf(buf + o, cap - o, "%d\n", i * 3);
		v = (struct cgk_pidvec){ 0 };
		r = cgk_parse_pids(buf, o, &v);
		good = r == 0 && v.n == 100000;
		for (size_t i = 0; good && i < v.n; i++)
			good = v.v[i] == (pid_t)(i + 1) * 3;
		ok(good, "pids: 100000 lines, every value right");
		cgk_pidvec_free(&v);

		/* the length bounds the parse: no NUL needed, none read past */
		v = (struct cgk_pidvec){ 0 };
		r = cgk_parse_pids(buf, 4, &v);	/* "3\n6\n" */
		ok(r == 0 && v.n == 2 && v.v[1] == 6, "pids: stops at len");
		cgk_pidvec_free(&v);
		free(buf);
	}

	/* appends to what is there; on error leaves it as it was */
	v = (struct cgk_pidvec){ 0 };
	cgk_pidvec_push(&v, 99);
	r = cgk_parse_pids("7\n", 2, &v);
	ok(r == 0 && v.n == 2 && v.v[0] == 99 && v.v[1] == 7, "pids: appends");
	r = cgk_parse_pids("8\nx\n", 4, &v);
	ok(r == -EINVAL && v.n == 2, "pids: error leaves the vector unchanged");
	cgk_pidvec_free(&v);

	static const char *const junk[] = {
		"-1\n",		 "+1\n",	"1 \n",		" 1\n",	      "1\n\n2\n",
		"\n",		 "abc\n",	"12a\n",	"1\r\n",      "2147483648\n",
		"99999999999999999999\n", "1\n-5\n", "0x10\n", "1.5\n",
	};
	for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++) {
		r = pids(junk[i], &v);
		char shown[64];
		size_t o = 0;

		for (const char *c = junk[i]; *c && o < sizeof(shown) - 3; c++) {
			if (*c == '\n') {
				shown[o++] = '\\';
				shown[o++] = 'n';
			} else if (*c == '\r') {
				shown[o++] = '\\';
				shown[o++] = 'r';
			} else {
				shown[o++] = *c;
			}
		}
		shown[o] = '\0';
		ok(r == -EINVAL && v.n == 0, "pids: junk '%s' rejected", shown);
		cgk_pidvec_free(&v);
	}
	/* an embedded NUL is junk too */
	v = (struct cgk_pidvec){ 0 };
	is_int(cgk_parse_pids("1\n\0\n", 4, &v), -EINVAL, "pids: NUL byte rejected");
	cgk_pidvec_free(&v);
}

/* This machine's layout (hybrid), with other mounts around it. */
static const char hybrid[] =
	"22 1 0:20 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
	"23 1 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:2 - sysfs sysfs rw\n"
	"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	"32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct\n"
	"34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset,clone_children\n"
	"35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
	"37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer\n"
	"38 31 0:35 / /sys/fs/cgroup/net_cls,net_prio rw,relatime - cgroup cgroup rw,net_cls,net_prio\n"
	"39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
	"40 31 0:37 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:7 - cgroup cgroup rw,xattr,release_agent=/lib/systemd/systemd-cgroups-agent,name=systemd\n"
	"41 31 0:38 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:6 - cgroup2 cgroup2 rw,nsdelegate\n"
	"42 31 0:39 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup ro,noprefix,blkio,cpuset_v2_mode\n"
	"60 22 0:50 / /proc/sys/fs/binfmt_misc rw,relatime shared:30 - autofs systemd-1 rw,fd=29\n";

/* Many mounts with long escaped names among other lines, one of them
 * with a fstype that only starts with "cgroup": every string comes back
 * whole (the strings share one block sized from the text). */
static void test_many_mounts(void)
{
	enum { MOUNTS = 300 };
	size_t cap = MOUNTS * 400, len = 0, n = 0;
	char *text = malloc(cap);
	struct cgk_mount *m = NULL;
	bool all = true;
	int r;

	for (int i = 0; i < MOUNTS; i++) {
		len += (size_t)snprintf(text + len, cap - len,
					"%d 1 0:%d /r\\040%d /sys/fs/cgroup/\\134%0120d rw - cgroup cgroup rw,name=n%d\n"
					"%d 1 0:1 / /x%d rw - cgroupfs none rw - cgroup\n",
					i + 100, i, i, i, i, i + 1000, i);
	}
	r = cgk_parse_mountinfo(text, len, &m, &n);
	ok(r == 0 && n == MOUNTS, "mountinfo: %d cgroup mounts among %d lines (r=%d, n=%zu)",
	   MOUNTS, 2 * MOUNTS, r, n);
	for (size_t i = 0; r == 0 && i < n; i++) {
		char path[256], root[32], ctl[32];

		snprintf(path, sizeof(path), "/sys/fs/cgroup/\\%0120zu", i);
		snprintf(root, sizeof(root), "/r %zu", i);
		snprintf(ctl, sizeof(ctl), "name=n%zu", i);
		all &= strcmp(m[i].path, path) == 0 && strcmp(m[i].root, root) == 0 &&
		       strcmp(m[i].controllers, ctl) == 0;
	}
	ok(r == 0 && all, "mountinfo: every path, root and controller list of the %d read whole",
	   MOUNTS);
	free(m);
	free(text);
}

static void test_mountinfo(void)
{
	struct cgk_mount *m = NULL;
	size_t n = 0;
	int r;

	r = cgk_parse_mountinfo(hybrid, strlen(hybrid), &m, &n);
	is_int(r, 0, "mountinfo hybrid: parses");
	is_int((long long)n, 9, "mountinfo hybrid: 8 v1 + 1 v2 mounts, no tmpfs/proc/sysfs");
	if (r == 0 && n == 9) {
		is_str(m[0].path, "/sys/fs/cgroup/cpu,cpuacct", "first: path");
		is_str(m[0].root, "/", "first: root");
		is_int(m[0].version, 1, "first: v1");
		is_str(m[0].controllers, "cpu,cpuacct", "first: co-mounted controllers");
		is_str(m[1].controllers, "cpuset", "clone_children dropped");
		is_str(m[3].controllers, "freezer", "freezer");
		is_str(m[4].controllers, "net_cls,net_prio", "net_cls,net_prio");
		is_str(m[6].controllers, "name=systemd",
		       "name=systemd kept, xattr and release_agent dropped");
		is_str(m[7].path, "/sys/fs/cgroup/unified", "v2: path");
		is_int(m[7].version, 2, "v2: version 2");
		is_str(m[7].controllers, "", "v2: no controllers");
		is_str(m[8].controllers, "blkio",
		       "ro, noprefix, cpuset_v2_mode dropped");
	} else {
		skip("mountinfo hybrid: entries not checked");
	}
	free(m);

	/* the exact text of this machine, if it is readable */
	{
		FILE *f = fopen("/proc/self/mountinfo", "re");
		char *text = NULL;
		size_t cap = 0, len = 0;

		if (f) {
			char chunk[4096];
			size_t got;

			while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0) {
				text = realloc(text, cap = len + got + 1);
				memcpy(text + len, chunk, got);
				len += got;
			}
			fclose(f);
		}
		if (text) {
			bool has_v2 = false;

			r = cgk_parse_mountinfo(text, len, &m, &n);
			for (size_t i = 0; r == 0 && i < n; i++)
				has_v2 |= m[i].version == 2;
			ok(r == 0, "mountinfo of this machine parses (%zu cgroup mounts)", n);
			ok(!strstr(text, " - cgroup2 ") || has_v2,
			   "mountinfo of this machine: the v2 mount is found");
			free(m);
			free(text);
		} else {
			skip("/proc/self/mountinfo not readable");
			skip("/proc/self/mountinfo not readable");
		}
	}

	static const char purev2[] =
		"25 30 0:23 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw\n"
		"28 25 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot";
	r = cgk_parse_mountinfo(purev2, strlen(purev2), &m, &n);
	ok(r == 0 && n == 1 && m[0].version == 2 &&
		   strcmp(m[0].path, "/sys/fs/cgroup") == 0 && strcmp(m[0].root, "/") == 0,
	   "mountinfo pure v2 (no final newline): one v2 mount at /sys/fs/cgroup");
	free(m);

	/* a container's view: the mount root is a sub-cgroup */
	static const char container[] =
		"700 690 0:26 /system.slice/docker-1.scope /sys/fs/cgroup ro,nosuid - cgroup2 cgroup rw\n";
	r = cgk_parse_mountinfo(container, strlen(container), &m, &n);
	ok(r == 0 && n == 1 && strcmp(m[0].root, "/system.slice/docker-1.scope") == 0,
	   "mountinfo: root of a mount inside the hierarchy");
	free(m);

	static const char escaped[] =
		"50 31 0:40 /a\\040b /mnt/my\\040cg\\011x\\134y\\012z rw - cgroup2 none rw\n";
	r = cgk_parse_mountinfo(escaped, strlen(escaped), &m, &n);
	ok(r == 0 && n == 1, "mountinfo: escaped line parses");
	if (r == 0 && n == 1) {
		is_str(m[0].path, "/mnt/my cg\tx\\y\nz", "mountinfo: \\040 \\011 \\134 \\012 decoded");
		is_str(m[0].root, "/a b", "mountinfo: root decoded");
	} else {
		skip("escaped");
		skip("escaped");
	}
	free(m);

	static const char mp_dash[] =
		"50 31 0:40 / /- rw shared:1 master:2 - cgroup cgroup rw,name=x,freezer\n";
	r = cgk_parse_mountinfo(mp_dash, strlen(mp_dash), &m, &n);
	ok(r == 0 && n == 1 && strcmp(m[0].path, "/-") == 0 &&
		   strcmp(m[0].controllers, "name=x,freezer") == 0,
	   "mountinfo: mount point named '-', optional fields skipped");
	free(m);

	r = cgk_parse_mountinfo("", 0, &m, &n);
	ok(r == 0 && n == 0 && m == NULL, "mountinfo: empty text, no mounts");

	/* lines we cannot read but that are not cgroup lines are skipped */
	static const char other_junk[] = "garbage\n\n1 2 3\n";
	r = cgk_parse_mountinfo(other_junk, strlen(other_junk), &m, &n);
	ok(r == 0 && n == 0, "mountinfo: junk non-cgroup lines skipped");
	free(m);

	static const char *const bad[] = {
		"x 31 0:40 / /mnt rw - cgroup2 none rw\n",	/* id not a number */
		"50 31 0:40 / /mnt rw - cgroup2 none\n",	/* no super options */
		"50 31 0:40 / /mnt rw - cgroup2\n",		/* no source */
		"50 31 0:40 / mnt rw - cgroup2 none rw\n",	/* relative mount point */
		"50 31 0:40 / /m\\04 rw - cgroup2 none rw\n",	/* short escape */
		"50 31 0:40 / /m\\\\ rw - cgroup2 none rw\n",	/* lone backslash */
		"50 31 0:40 / /m\\000 rw - cgroup2 none rw\n",	/* escaped NUL */
		"50 31 0:40 / /m\\400 rw - cgroup2 none rw\n",	/* > 0377 */
		"50 31 0:40 / /m\\08x rw - cgroup2 none rw\n",	/* not octal */
		"50 31  / /mnt rw - cgroup none rw,pids\n",	/* empty field */
		"50 31 0:40 / /mnt rw - cgroup none rw,pids extra\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		m = (void *)1;
		r = cgk_parse_mountinfo(bad[i], strlen(bad[i]), &m, &n);
		ok(r == -EINVAL && m == NULL && n == 0,
		   "mountinfo: malformed cgroup line %zu rejected (r=%d)", i, r);
	}

	/* a path longer than a mount's buffer */
	{
		size_t len = 5000;
		char *line = malloc(len + 100);
		int o = snprintf(line, 100, "50 31 0:40 / /");

		memset(line + o, 'a', len);
		strcpy(line + o + len, " rw - cgroup2 none rw\n");
		r = cgk_parse_mountinfo(line, strlen(line), &m, &n);
		is_int(r, -ENAMETOOLONG, "mountinfo: a 5000-byte mount point is too long");
		free(line);
	}
	/* PATH_MAX - 1 bytes fit, PATH_MAX do not */
	for (size_t len = PATH_MAX - 1; len <= PATH_MAX; len++) {
		char *line = malloc(len + 100);

		strcpy(line, "50 31 0:40 / ");
		memset(line + strlen(line), 'a', len);
		strcpy(line + 13 + len, " rw - cgroup2 none rw\n");
		line[13] = '/';
		r = cgk_parse_mountinfo(line, strlen(line), &m, &n);
		ok(len < PATH_MAX ? r == 0 && n == 1 && strlen(m[0].path) == len : r == -ENAMETOOLONG,
		   "mountinfo: a mount point of %zu bytes %s (r=%d)", len,
		   len < PATH_MAX ? "parses" : "is too long", r);
		free(m);
		m = NULL;
		free(line);
	}
	test_many_mounts();
}

static const char proc_hybrid[] =
	"12:net_cls,net_prio:/\n"
	"9:name=systemd:/user.slice/user-0.slice/session-1.scope\n"
	"8:pids:/user.slice/user-0.slice\n"
	"6:freezer:/job:42\n"
	"2:cpuacct,cpu:/system.slice\n"
	"1:cpuset:/\n"
	"0::/user.slice/user-0.slice/session-1.scope\n";

/* cgk_parse_proc_cgroup_has: v1's line by one of its controllers (what
 * cgkilld asks for its counterparts), v2's as before. */
static void test_proc_cgroup_has(void)
{
	char path[256];
	int r;

	r = cgk_parse_proc_cgroup_has(proc_hybrid, "cpu", path, sizeof(path));
	ok(r == 0 && strcmp(path, "/system.slice") == 0, "proc cgroup has: 'cpu' is in 'cpuacct,cpu'");
	r = cgk_parse_proc_cgroup_has(proc_hybrid, "pids", path, sizeof(path));
	ok(r == 0 && strcmp(path, "/user.slice/user-0.slice") == 0, "proc cgroup has: pids");
	r = cgk_parse_proc_cgroup_has(proc_hybrid, NULL, path, sizeof(path));
	ok(r == 0 && strcmp(path, "/user.slice/user-0.slice/session-1.scope") == 0, "proc cgroup has: v2");
	is_int(cgk_parse_proc_cgroup_has(proc_hybrid, "memory", path, sizeof(path)), -ENOENT,
	       "proc cgroup has: absent hierarchy");
	is_int(cgk_parse_proc_cgroup_has(proc_hybrid, "cpu,cpuacct", path, sizeof(path)), -EINVAL,
	       "proc cgroup has: one controller, not a list");
	is_int(cgk_parse_proc_cgroup_has(proc_hybrid, "", path, sizeof(path)), -EINVAL,
	       "proc cgroup has: not an empty name (v2's line has none)");
	is_int(cgk_parse_proc_cgroup_has("1:pids:/x\n0::\n", "pids", path, sizeof(path)), 0,
	       "proc cgroup has: the line found before a malformed one");
	is_int(cgk_parse_proc_cgroup_has("0::\n1:pids:/x\n", "pids", path, sizeof(path)), -EINVAL,
	       "proc cgroup has: a malformed line before it fails");
}

static void test_proc_cgroup(void)
{
	char path[256];
	int r;

	r = cgk_parse_proc_cgroup(proc_hybrid, NULL, path, sizeof(path));
	ok(r == 0 && strcmp(path, "/user.slice/user-0.slice/session-1.scope") == 0,
	   "proc cgroup hybrid: v2 line");
	r = cgk_parse_proc_cgroup(proc_hybrid, "pids", path, sizeof(path));
	ok(r == 0 && strcmp(path, "/user.slice/user-0.slice") == 0, "proc cgroup: pids");
	r = cgk_parse_proc_cgroup(proc_hybrid, "freezer", path, sizeof(path));
	ok(r == 0 && strcmp(path, "/job:42") == 0, "proc cgroup: path with ':' kept whole");
	r = cgk_parse_proc_cgroup(proc_hybrid, "cpu,cpuacct", path, sizeof(path));
	ok(r == 0 && strcmp(path, "/system.slice") == 0,
	   "proc cgroup: controllers compared as sets (cpuacct,cpu = cpu,cpuacct)");
	r = cgk_parse_proc_cgroup(proc_hybrid, "cpu", path, sizeof(path));
	is_int(r, -ENOENT, "proc cgroup: 'cpu' alone does not match 'cpuacct,cpu'");
	r = cgk_parse_proc_cgroup(proc_hybrid, "cpu,cpuacct,memory", path, sizeof(path));
	is_int(r, -ENOENT, "proc cgroup: a superset does not match");
	r = cgk_parse_proc_cgroup(proc_hybrid, "name=systemd", path, sizeof(path));
	ok(r == 0 && strcmp(path, "/user.slice/user-0.slice/session-1.scope") == 0,
	   "proc cgroup: name=systemd");
	r = cgk_parse_proc_cgroup(proc_hybrid, "memory", path, sizeof(path));
	is_int(r, -ENOENT, "proc cgroup: absent hierarchy");
	r = cgk_parse_proc_cgroup(proc_hybrid, NULL, path, 10);
	is_int(r, -ENAMETOOLONG, "proc cgroup: small buffer");
	r = cgk_parse_proc_cgroup(proc_hybrid, "pids", path, 25);
	ok(r == 0 && strcmp(path, "/user.slice/user-0.slice") == 0,
	   "proc cgroup: buffer exactly large enough");

	r = cgk_parse_proc_cgroup("0::/\n", NULL, path, sizeof(path));
	ok(r == 0 && strcmp(path, "/") == 0, "proc cgroup pure v2: root");
	r = cgk_parse_proc_cgroup("0::/a/b", NULL, path, sizeof(path));
	ok(r == 0 && strcmp(path, "/a/b") == 0, "proc cgroup: no final newline");
	r = cgk_parse_proc_cgroup("0::/a\n", "pids", path, sizeof(path));
	is_int(r, -ENOENT, "proc cgroup pure v2: no v1 hierarchy");
	r = cgk_parse_proc_cgroup("1:pids:/x\n", NULL, path, sizeof(path));
	is_int(r, -ENOENT, "proc cgroup pure v1: no v2 line");
	r = cgk_parse_proc_cgroup("0::/../../x\n", NULL, path, sizeof(path));
	ok(r == 0 && strcmp(path, "/../../x") == 0, "proc cgroup: cgroup namespace path");
	r = cgk_parse_proc_cgroup("1::/v1\n0::/v2\n", NULL, path, sizeof(path));
	ok(r == 0 && strcmp(path, "/v2") == 0, "proc cgroup: v2 is ID 0, not any empty list");
	r = cgk_parse_proc_cgroup("0::/v2\n1:name=a:/v1\n", "name=a", path, sizeof(path));
	ok(r == 0 && strcmp(path, "/v1") == 0, "proc cgroup: v1 line after the v2 one");
	r = cgk_parse_proc_cgroup("", NULL, path, sizeof(path));
	is_int(r, -ENOENT, "proc cgroup: empty text");

	static const char *const bad[] = {
		"0:/x\n", "x::/a\n", ":pids:/a\n", "0::\n", "0::a\n", "1:pids:/a\n\n0::/\n",
		"garbage\n0::/\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = cgk_parse_proc_cgroup(bad[i], NULL, path, sizeof(path));
		is_int(r, -EINVAL, "proc cgroup: malformed text %zu", i);
	}

	ok(cgk_has_controller("cpu,cpuacct", "cpu"), "has_controller: cpu");
	ok(cgk_has_controller("cpu,cpuacct", "cpuacct"), "has_controller: cpuacct");
	ok(!cgk_has_controller("cpuacct", "cpu"), "has_controller: no prefix match");
	ok(!cgk_has_controller("cpu,cpuacct", "cpu,cpuacct"), "has_controller: one name only");
	ok(cgk_has_controller("freezer,name=x", "name=x"), "has_controller: name=");
	ok(!cgk_has_controller("", "freezer"), "has_controller: empty list");
	ok(!cgk_has_controller("freezer", ""), "has_controller: empty name");
	ok(!cgk_has_controller("a,,b", ""), "has_controller: empty item never matches");
}

int main(void)
{
	no_plan();
	test_pids();
	test_mountinfo();
	test_proc_cgroup();
	test_proc_cgroup_has();
	return done_testing();
}
