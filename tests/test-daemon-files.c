// SPDX-License-Identifier: LGPL-2.1-or-later
/* cgkilld's one reader of small files and one PSI parser (daemon/files.c,
 * included; read_at0 as the daemon's): a number or "max", a whole small
 * file, the "some" and "full" lines of a pressure file, as the triggers
 * and the victim choice read them. No cgroup is touched. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../daemon/files.c"
#include "support/tap.h"

ssize_t read_at0(int fd, char *buf, size_t size)
{
	ssize_t n = pread(fd, buf, size - 1, 0);

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return n;
}

static const char psi[] = "some avg10=1.25 avg60=0.50 avg300=0.05 total=123456\n"
			  "full avg10=12.34 avg60=2.00 avg300=0.00 total=99\n";

static void test_numbers(void)
{
	uint64_t v = 7;

	ok(parse_number("123\n", &v) && v == 123, "a number");
	ok(parse_number("max\n", &v) && v == UINT64_MAX, "max: UINT64_MAX");
	ok(!parse_number("", &v) && !parse_number("x1", &v), "no number: false");
	ok(!parse_number("99999999999999999999999", &v), "out of range: false");
}

static void test_files(void)
{
	char dir[] = "/tmp/cgkill-test-files.XXXXXX", buf[16];
	uint64_t v = 0;
	int dfd, fd;

	if (!mkdtemp(dir) || (dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		bail_out("mkdtemp");
	fd = openat(dfd, "pids.max", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, "4096\n", 5) != 5)
		bail_out("write");
	ok(read_number_at(dfd, "pids.max", &v) && v == 4096, "read_number_at: the file's number");
	ok(read_number_fd(fd, &v) && v == 4096, "read_number_fd: from the start of an open file");
	close(fd);
	ok(!read_number_at(dfd, "none", &v), "a missing file: false");
	is_int(read_small_at(dfd, "none", buf, sizeof(buf)), -ENOENT, "read_small_at: -errno");
	is_int(read_small_at(dfd, "pids.max", buf, 4), 3, "read_small_at: at most size - 1 bytes");
	is_str(buf, "409", "... NUL-terminated");
	unlinkat(dfd, "pids.max", 0);
	close(dfd);
	rmdir(dir);
}

static void test_psi(void)
{
	struct psi_line p;

	ok(psi_parse(psi, false, &p) && p.avg10 == 1.25 && p.avg60 == 0.5 && p.total == 123456, "the some line");
	ok(psi_parse(psi, true, &p) && p.avg10 == 12.34 && p.total == 99, "the full line");
	ok((int64_t)(p.avg10 * 100 + 0.5) == 1234, "avg10 in hundredths of a percent, as the victim choice counts");
	ok(!psi_parse("some avg10=1.00 avg60=0 avg300=0 total=1\n", true, &p), "no full line (cpu.pressure of old kernels)");
	ok(!psi_parse("full nonsense\n", true, &p), "a line without avg10: false");
}

int main(void)
{
	test_numbers();
	test_files();
	test_psi();
	return done_testing();
}
