// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * thrash: a workload that the kernel stalls on memory, for the memory
 * pressure tests and benchmarks (bench/oomd-peer.sh, issue 18).
 *
 * Run inside a memory-limited cgroup (v1 memory.limit_in_bytes, or v2
 * memory.max), it keeps re-reading a file larger than the limit, through
 * shared mappings (default) or read(), optionally after touching an amount
 * of anonymous memory that it keeps touching (which leaves less room for the
 * file's pages). At the limit every new page cache page is charged only
 * after direct reclaim in the cgroup, and the evicted pages that had been
 * active come back as workingset refaults, read under a memory stall: both
 * are memory stalls to PSI, accounted to the task's cgroup v2
 * (memory.pressure), whichever hierarchy sets the limit. Without swap the
 * anonymous part cannot be reclaimed: keep it well below the limit, or the
 * kernel's OOM killer takes the process.
 *
 *	thrash [-f FILE | -d DIR] [-s SIZE] [-a SIZE] [-m mmap|read] [-x N] [-t SECS] [-v]
 *
 *	-f FILE	the file to re-read; created (or extended) to SIZE if shorter,
 *		and kept
 *	-d DIR	an unnamed file (O_TMPFILE) in DIR instead, written at start
 *		and gone when the process ends, killed or not; the default is
 *		-d . (the current directory)
 *	-s SIZE	the file's size (K, M, G suffixes; default 768M): 1.5 times
 *		the cgroup's limit stalls most (see below)
 *	-a SIZE	anonymous memory touched first and again on every pass
 *		(default 0)
 *	-m MODE	mmap: shared read-only mappings of the file, one byte read per
 *		page (default); read: pread() in 1 MiB blocks
 *	-x N	mmap: N mappings of the file (1 to 8, default 2), each page
 *		read through every one; read: each block read N times
 *	-t SECS	stop after SECS seconds of thrashing (default 300; 0: until
 *		killed)
 *	-v	one line per pass on stderr
 *
 * Two mappings: a page the reclaim scan finds mapped twice and referenced
 * is activated at once, so every page is evicted as part of the working set
 * and its refault is a stall (1 mapping: about half as much). A file 1.5
 * times the limit keeps the refault distance within the working set (at 2
 * times and more the refaults are not activated and stall less); read()
 * stalls only in reclaim. Measured with a 512 MiB v1 limit, no swap, Linux
 * 6.18 (bench/RESULTS.md, "cgkilld vs oomd under memory pressure").
 *
 * It prints "thrash: ready <pid> <CLOCK_REALTIME us>" on stdout (flushed)
 * when the file is written and the thrashing starts, and "thrash: done
 * <passes>" when -t runs out. Exit status 0, 1 on error, 2 on usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BLOCK (1u << 20)

static volatile uint64_t sink;	/* the reads are not optimised away */

static void usage(void)
{
	fprintf(stderr, "usage: thrash [-f FILE | -d DIR] [-s SIZE] [-a SIZE] [-m mmap|read] [-x N] [-t SECS] [-v]\n");
	exit(2);
}

static int64_t now_us(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static uint64_t parse_size(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		usage();
	switch (*end) {
	case 'G': case 'g': v <<= 10; /* fall through */
	case 'M': case 'm': v <<= 10; /* fall through */
	case 'K': case 'k': v <<= 10; end++; break;
	case '\0': break;
	default: usage();
	}
	if (*end)
		usage();
	return v;
}

/*
 * Bring the file to size bytes, written in blocks and flushed every 64 MiB
 * (dirty page cache at a v1 limit is reclaimed only once written back), and
 * drop what was cached, so that the first pass reads it back.
 */
static int fill(int fd, uint64_t size)
{
	struct stat st;
	char *buf;
	uint64_t off;

	if (fstat(fd, &st) < 0)
		return -1;
	if ((uint64_t)st.st_size >= size)
		return 0;
	buf = malloc(BLOCK);
	if (!buf)
		return -1;
	memset(buf, 0x5a, BLOCK);
	for (off = (uint64_t)st.st_size & ~(uint64_t)(BLOCK - 1); off < size; off += BLOCK) {
		size_t n = size - off < BLOCK ? size - off : BLOCK;

		if (pwrite(fd, buf, n, (off_t)off) != (ssize_t)n) {
			free(buf);
			return -1;
		}
		if ((off + n) % (64u * BLOCK) == 0 || off + n == size) {
			if (fdatasync(fd) < 0) {
				free(buf);
				return -1;
			}
			posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		}
	}
	free(buf);
	return 0;
}

int main(int argc, char *argv[])
{
	const char *file = NULL, *dir = ".";
	uint64_t size = 768ull << 20, anon = 0, passes = 0, sum = 0;
	long page = sysconf(_SC_PAGESIZE);
	int mmap_mode = 1, verbose = 0, repeat = 2, opt, fd, k;
	long secs = 300;
	unsigned char *a = NULL, *map[8] = { NULL };
	char *buf;
	int64_t end;

	while ((opt = getopt(argc, argv, "f:d:s:a:m:t:vx:")) != -1) {
		switch (opt) {
		case 'f': file = optarg; break;
		case 'd': dir = optarg; break;
		case 's': size = parse_size(optarg); break;
		case 'a': anon = parse_size(optarg); break;
		case 'm':
			if (!strcmp(optarg, "read"))
				mmap_mode = 0;
			else if (strcmp(optarg, "mmap"))
				usage();
			break;
		case 't': secs = atol(optarg); break;
		case 'v': verbose = 1; break;
		case 'x':
			repeat = atoi(optarg);
			if (repeat < 1 || repeat > 8)
				usage();
			break;
		default: usage();
		}
	}
	if (optind != argc || size < BLOCK || secs < 0)
		usage();

	if (file)
		fd = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	else
		fd = open(dir, O_RDWR | O_TMPFILE | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "thrash: %s: %s\n", file ? file : dir, strerror(errno));
		return 1;
	}
	if (fill(fd, size) < 0) {
		fprintf(stderr, "thrash: writing the file: %s\n", strerror(errno));
		return 1;
	}

	if (anon) {
		a = mmap(NULL, anon, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (a == MAP_FAILED) {
			fprintf(stderr, "thrash: mmap of %llu bytes: %s\n", (unsigned long long)anon,
				strerror(errno));
			return 1;
		}
	}
	if (mmap_mode) {
		for (k = 0; k < repeat; k++) {
			map[k] = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
			if (map[k] == MAP_FAILED) {
				fprintf(stderr, "thrash: mmap of the file: %s\n", strerror(errno));
				return 1;
			}
		}
	}
	buf = malloc(BLOCK);
	if (!buf)
		return 1;

	printf("thrash: ready %d %lld\n", (int)getpid(), (long long)now_us(CLOCK_REALTIME));
	fflush(stdout);
	end = secs ? now_us(CLOCK_MONOTONIC) + (int64_t)secs * 1000000 : INT64_MAX;
	while (now_us(CLOCK_MONOTONIC) < end) {
		int64_t t0 = now_us(CLOCK_MONOTONIC);
		uint64_t off;

		for (off = 0; off < anon; off += page)
			a[off]++;
		for (off = 0; off < size; off += mmap_mode ? (uint64_t)page : BLOCK) {
			for (k = 0; k < repeat; k++) {
				if (mmap_mode) {
					sum += map[k][off];
				} else {
					ssize_t n = pread(fd, buf, BLOCK, (off_t)off);

					if (n < 0) {
						fprintf(stderr, "thrash: read: %s\n", strerror(errno));
						return 1;
					}
					sum += (unsigned char)buf[0];
				}
			}
			if ((off & ((64u << 20) - 1)) == 0 && now_us(CLOCK_MONOTONIC) >= end)
				break;
		}
		passes++;
		if (verbose)
			fprintf(stderr, "thrash: pass %llu: %lld ms\n", (unsigned long long)passes,
				(long long)(now_us(CLOCK_MONOTONIC) - t0) / 1000);
	}
	sink = sum;
	printf("thrash: done %llu\n", (unsigned long long)passes);
	return 0;
}
