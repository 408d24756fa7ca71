/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The files of a cgroup, for the tests: read and write them, list and count
 * the processes of a cgroup or a subtree, wait for a subtree to empty.
 * Functions return 0 (or a count) or -errno. The waits' timeout_ms is an
 * idle machine's time, stretched by sb_deadline_ms() (deadline.h).
 */
#ifndef CGK_TEST_CGFILE_H
#define CGK_TEST_CGFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* dir/file read to EOF, NUL-terminated, truncated to size-1: its length. */
ssize_t sb_read(const char *dir, const char *file, char *buf, size_t size);
/* The same into a malloc'ed buffer of any length; NULL with *err set. */
char *sb_read_alloc(const char *dir, const char *file, int *err);
/* The first line of dir/file, without its newline; "" on error. */
const char *sb_first_line(const char *dir, const char *file, char *buf, size_t size);
/* Is the first line of dir/file want? */
bool sb_file_is(const char *dir, const char *file, const char *want);
/* Does dir/file contain text? */
bool sb_file_has(const char *dir, const char *file, const char *text);
/* Write text to the existing file dir/file in one write(). */
int sb_write(const char *dir, const char *file, const char *text);
/* Create (or truncate) the regular file dir/file holding text. */
int sb_put(const char *dir, const char *file, const char *text);
/* Freeze a v1 cgroup as someone else would (freezer.state FROZEN), and
 * wait (bounded) until it says so. */
bool sb_freeze_v1(const char *dir);
/* mkstemp(tmpl) holding text[0..len) (a protected list, say): false if it
 * cannot be written. Unlink it when done. */
bool sb_temp_file(char *tmpl, const char *text, size_t len);
/* Move the calling process into dir (writes "0" to cgroup.procs); the same
 * for a cgroup given as an open directory fd. */
int sb_join(const char *dir);
int sb_join_fd(int dirfd);

/* The pids listed in dir: cgroup.procs, or cgroup.threads where procs
 * cannot be read (threaded cgroups). *out is malloc'ed. */
int sb_list_pids(const char *dir, pid_t **out, size_t *n);
/* Processes listed in dir (or in its whole subtree), 0 entries included;
 * -errno on error. */
int sb_count(const char *dir, bool recursive);
/* Is pid listed in the cgroup.procs of dir? */
bool sb_member(const char *dir, pid_t pid);

/* The directories of a subtree, parents first (pre-order). */
struct sb_dirs {
	char **v;
	size_t n, cap;
};
void sb_subtree(const char *path, struct sb_dirs *d);
void sb_dirs_push(struct sb_dirs *d, const char *path);
void sb_dirs_free(struct sb_dirs *d);

/* Wait until the subtree of dir is empty: v2 by `populated 0` in
 * cgroup.events (poll POLLPRI, re-read after every wakeup), v1 by polling
 * the process lists. 0, or -ETIMEDOUT when the deadline passes. */
int sb_wait_empty(const char *dir, unsigned timeout_ms);
/* Wait until the subtree of dir holds at least n processes. */
int sb_wait_count(const char *dir, unsigned n, unsigned timeout_ms);

#endif
