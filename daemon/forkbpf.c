/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The fork counter in the kernel: three small BPF programs, built here
 * from raw instructions (no compiler, no libbpf, no tracefs), that count
 * the forks, execs and exits of the tasks of watched cgroup v2 subtrees,
 * and tell the daemon through a ring buffer only when a subtree's forks,
 * less its execs or its exits (whichever are more), reach a limit within
 * a window: nothing wakes the daemon while nothing forks, and no fork
 * wakes it on its own. That count is the processes that neither exec'd
 * nor ended: a bomb's (its children fork on, or fork and end, without
 * exec), not a build's or a script's (their children exec, or end soon).
 *
 * Only the forks of fresh processes count: forked in a watched subtree
 * and not exec'd since (an LRU hash of their tgids). A bomb's processes
 * are; a shell, make, a test runner, a service manager are programs
 * exec'd, whose own forks do not count. A fresh process's exec or exit
 * counts for the watched cgroups its fork was counted for, wherever it is
 * then: a child that leaves the subtree (a test moving it to a sandbox of
 * its own) and ends there is counted as ended.
 *
 *  - raw tracepoint task_newtask (copy_process(), in the forking task):
 *    a new process (not a thread: CLONE_THREAD is left out) counts as a
 *    fork for every watched ancestor of the forking task's cgroup, found
 *    by the kernel's own ids (bpf_get_current_ancestor_cgroup_id: the
 *    cgroup the task is in, which no one can claim for another cgroup),
 *    the FRESH_ORIGINS nearest the root, if the forking process is fresh;
 *    the child is fresh (its tgid read at the offset that the kernel's
 *    BTF gives), marked with those ancestors;
 *  - raw tracepoint sched_process_exec: an exec counts for the ancestors
 *    of a fresh process's mark, or else for the same as a fork, and the
 *    process is fresh no more;
 *  - raw tracepoint sched_process_exit: the exit of a process's leader
 *    (pid == tgid: not of its other threads) counts as an exec does.
 *
 * Watched cgroups are keys of a hash map (their ids); the value holds
 * FORK_SLOTS counters, one for each rule that watches the cgroup, each
 * with its own window (tumbling: it starts at the first fork after the
 * last one ended) and limit. The levels that hold a watched cgroup are a
 * mask in an array map: a fork costs one lookup for each of those levels
 * that the forking task is below, up to FORK_LEVELS. Counting is
 * approximate under races (a reset may lose a concurrent count); the
 * record is sent once per window (compare-and-exchange on its start).
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/sched.h>

#include "cgkilld.h"

#define RINGBUF_SIZE (64 * 1024)
#define WATCHED_MAX 65536
#define FRESH_MAX 65536
#define FRESH_ORIGINS 4		/* watched cgroups a fresh process is counted for */
#define LOG_SIZE (64 * 1024)

/* A counter of one rule in a watched cgroup's value (FORK_SLOTS of them). */
struct fork_slot {
	uint64_t limit;		/* forks without exec in a window that fire; 0: slot unused */
	uint64_t window_ns;
	uint64_t cookie;	/* the daemon's, returned in the record */
	uint64_t start;		/* the window's start (CLOCK_MONOTONIC ns) */
	uint64_t forks, execs, exits;
	uint64_t fired;		/* the start of the last window told */
};

struct fork_value {
	struct fork_slot s[FORK_SLOTS];
};

struct fork_counter {
	int watched, levels, ring, fresh;	/* map fds */
	long tgid_off;			/* of task_struct's tgid */
	int prog[FORK_TP_N], link[FORK_TP_N];
	void *cons, *prod;		/* the ring buffer's pages */
	size_t page;
	unsigned nlevel[FORK_LEVELS + 1];	/* watched cgroups at each level */
};

/* ---- the instructions ---- */

struct prog {
	struct bpf_insn *v;
	size_t n, cap;
	bool oom;
};

static void emit(struct prog *p, uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 512;
		struct bpf_insn *v = realloc(p->v, cap * sizeof(*v));

		if (!v) {
			p->oom = true;
			return;
		}
		p->v = v;
		p->cap = cap;
	}
	p->v[p->n++] = (struct bpf_insn){ .code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm };
}

/* The register names of the calling convention: r0 result, r1-r5
 * arguments (clobbered by calls), r6-r9 kept, r10 the frame. */
enum { R0, R1, R2, R3, R4, R5, R6, R7, R8, R9, R10 };

static void mov_imm(struct prog *p, int dst, int32_t imm)
{
	emit(p, BPF_ALU64 | BPF_MOV | BPF_K, dst, 0, 0, imm);
}

static void mov(struct prog *p, int dst, int src)
{
	emit(p, BPF_ALU64 | BPF_MOV | BPF_X, dst, src, 0, 0);
}

static void alu_imm(struct prog *p, int op, int dst, int32_t imm)
{
	emit(p, BPF_ALU64 | op | BPF_K, dst, 0, 0, imm);
}

static void alu(struct prog *p, int op, int dst, int src)
{
	emit(p, BPF_ALU64 | op | BPF_X, dst, src, 0, 0);
}

static void load(struct prog *p, int dst, int src, int16_t off)
{
	emit(p, BPF_LDX | BPF_MEM | BPF_DW, dst, src, off, 0);
}

static void store(struct prog *p, int dst, int16_t off, int src)
{
	emit(p, BPF_STX | BPF_MEM | BPF_DW, dst, src, off, 0);
}

static void store_imm(struct prog *p, int dst, int16_t off, int32_t imm)
{
	emit(p, BPF_ST | BPF_MEM | BPF_DW, dst, 0, off, imm);
}

static void call(struct prog *p, int32_t helper)
{
	emit(p, BPF_JMP | BPF_CALL, 0, 0, 0, helper);
}

/* A map's fd as a 64-bit immediate (two instructions). */
static void load_map(struct prog *p, int dst, int fd)
{
	emit(p, BPF_LD | BPF_DW | BPF_IMM, dst, BPF_PSEUDO_MAP_FD, 0, fd);
	emit(p, 0, 0, 0, 0, 0);
}

/* A forward jump, its target set later by land(): its index. */
static size_t jump_imm(struct prog *p, int op, int dst, int32_t imm)
{
	emit(p, BPF_JMP | op | BPF_K, dst, 0, 0, imm);
	return p->n - 1;
}

static size_t jump(struct prog *p, int op, int dst, int src)
{
	emit(p, BPF_JMP | op | BPF_X, dst, src, 0, 0);
	return p->n - 1;
}

/* The jump at index j goes to the next instruction emitted. */
static void land(struct prog *p, size_t j)
{
	if (!p->oom)
		p->v[j].off = (int16_t)(p->n - j - 1);
}

/* ---- the programs ---- */

/* Registers while walking: r6 the context, r7 the watched cgroup's value,
 * r8 the level mask, r9 now. Stack: -8 the map keys (an id, a level). */
#define SLOT(s, field) ((int16_t)((s) * sizeof(struct fork_slot) + offsetof(struct fork_slot, field)))
#define REC(field) ((int16_t)offsetof(struct fork_record, field))

/* Slot s of the value at r7, on an exec or an exit: counted in the window
 * under way (an expired one is started again by the next fork). */
static void count_slot(struct prog *p, unsigned s, int16_t field)
{
	size_t unused, expired;

	load(p, R1, R7, SLOT(s, limit));
	unused = jump_imm(p, BPF_JEQ, R1, 0);
	load(p, R2, R7, SLOT(s, start));
	mov(p, R3, R9);
	alu(p, BPF_SUB, R3, R2);
	load(p, R4, R7, SLOT(s, window_ns));
	expired = jump(p, BPF_JGE, R3, R4);
	mov_imm(p, R2, 1);
	emit(p, BPF_STX | BPF_ATOMIC | BPF_DW, R7, R2, field, BPF_ADD);
	land(p, unused);
	land(p, expired);
}

/* Slot s of the value at r7, on a fork: a new window if the last one
 * ended; counted; past the limit, a record once in the window. */
static void fork_slot(struct prog *p, unsigned s, int ring)
{
	size_t unused, fresh, current, more, below, told, lost, full;

	load(p, R1, R7, SLOT(s, limit));
	unused = jump_imm(p, BPF_JEQ, R1, 0);
	load(p, R2, R7, SLOT(s, start));
	fresh = jump_imm(p, BPF_JEQ, R2, 0);	/* no window yet */
	mov(p, R3, R9);
	alu(p, BPF_SUB, R3, R2);
	load(p, R4, R7, SLOT(s, window_ns));
	current = jump(p, BPF_JLT, R3, R4);
	land(p, fresh);
	store(p, R7, SLOT(s, start), R9);
	store_imm(p, R7, SLOT(s, forks), 0);
	store_imm(p, R7, SLOT(s, execs), 0);
	store_imm(p, R7, SLOT(s, exits), 0);
	land(p, current);
	mov_imm(p, R2, 1);
	emit(p, BPF_STX | BPF_ATOMIC | BPF_DW, R7, R2, SLOT(s, forks), BPF_ADD | BPF_FETCH);
	alu_imm(p, BPF_ADD, R2, 1);
	/* less the larger of execs and exits: each process that exec'd
	 * also exits, so the exits beyond the execs are those of processes
	 * that did not exec */
	load(p, R3, R7, SLOT(s, execs));
	load(p, R4, R7, SLOT(s, exits));
	more = jump(p, BPF_JGE, R3, R4);
	mov(p, R3, R4);
	land(p, more);
	alu(p, BPF_SUB, R2, R3);
	/* signed: the execs and exits of the window before's forks may
	 * outnumber */
	below = jump(p, BPF_JSLT, R2, R1);
	load(p, R3, R7, SLOT(s, start));
	load(p, R0, R7, SLOT(s, fired));
	told = jump(p, BPF_JEQ, R0, R3);
	mov(p, R5, R0);
	emit(p, BPF_STX | BPF_ATOMIC | BPF_DW, R7, R3, SLOT(s, fired), BPF_CMPXCHG);
	lost = jump(p, BPF_JNE, R0, R5);	/* another CPU told it */
	load_map(p, R1, ring);
	mov_imm(p, R2, sizeof(struct fork_record));
	mov_imm(p, R3, 0);
	call(p, BPF_FUNC_ringbuf_reserve);
	full = jump_imm(p, BPF_JEQ, R0, 0);
	load(p, R1, R10, -8);
	store(p, R0, REC(cgid), R1);
	load(p, R1, R7, SLOT(s, cookie));
	store(p, R0, REC(cookie), R1);
	load(p, R1, R7, SLOT(s, forks));
	store(p, R0, REC(forks), R1);
	load(p, R1, R7, SLOT(s, execs));
	store(p, R0, REC(execs), R1);
	load(p, R1, R7, SLOT(s, exits));
	store(p, R0, REC(exits), R1);
	load(p, R1, R7, SLOT(s, start));
	mov(p, R2, R9);
	alu(p, BPF_SUB, R2, R1);
	store(p, R0, REC(elapsed_ns), R2);
	mov(p, R1, R0);
	mov_imm(p, R2, BPF_RB_FORCE_WAKEUP);
	call(p, BPF_FUNC_ringbuf_submit);
	land(p, unused);
	land(p, below);
	land(p, told);
	land(p, lost);
	land(p, full);
}

/* What the program of one tracepoint leaves out, a jump to its end
 * (SIZE_MAX: none): a new thread (no fork), the exit of a thread other
 * than its process's leader. */
static size_t prologue(struct prog *p, enum fork_tp tp)
{
	if (tp == FORK_TP_FORK) {
		/* task_newtask(task, clone_flags) */
		load(p, R2, R6, 8);
		alu_imm(p, BPF_AND, R2, CLONE_THREAD);
		return jump_imm(p, BPF_JNE, R2, 0);
	}
	if (tp == FORK_TP_EXIT) {
		/* pid == tgid: the leader, the process's end as a whole */
		call(p, BPF_FUNC_get_current_pid_tgid);
		mov(p, R1, R0);
		alu_imm(p, BPF_RSH, R1, 32);
		emit(p, BPF_ALU | BPF_MOV | BPF_X, R0, R0, 0, 0);	/* the low 32 bits */
		return jump(p, BPF_JNE, R0, R1);
	}
	return SIZE_MAX;	/* an exec: each counts */
}

/* A fresh process's mark in the LRU hash (by tgid): the watched cgroups
 * its fork was counted for, nearest the root first (0: none), which its
 * exec or exit is counted for, wherever it is then. */
struct fresh_mark {
	uint64_t origin[FRESH_ORIGINS];
};

#define MARK(field) ((int16_t)(FP_MARK + (int16_t)offsetof(struct fresh_mark, field)))

/* Stack slots: the map keys, whether the forker is fresh, the watched
 * cgroups found (how many), the child's tgid, the child's mark. */
enum {
	FP_KEY = -8,
	FP_FRESH = -16,
	FP_HIT = -24,
	FP_TGID = -32,
	FP_MARK = FP_TGID - (int)sizeof(struct fresh_mark),
};

/* r0 = the current task's tgid (its process). */
static void current_tgid(struct prog *p)
{
	call(p, BPF_FUNC_get_current_pid_tgid);
	alu_imm(p, BPF_RSH, R0, 32);
}

/* The map fd's key at the stack slot key (r2 pointing to it), then the
 * call of helper with r1 the map. */
static void map_call(struct prog *p, int fd, int16_t key, int32_t helper)
{
	load_map(p, R1, fd);
	mov(p, R2, R10);
	alu_imm(p, BPF_ADD, R2, key);
	call(p, helper);
}

/* Before the walk, on a fork: whether the forking process is fresh (only
 * its forks count), and the child's mark empty. */
static void fork_before(struct prog *p, const struct fork_counter *fc)
{
	size_t stale;

	store_imm(p, R10, FP_FRESH, 0);
	store_imm(p, R10, FP_HIT, 0);
	for (int16_t off = 0; off < (int16_t)sizeof(struct fresh_mark); off += 8)
		store_imm(p, R10, (int16_t)(FP_MARK + off), 0);
	current_tgid(p);
	store(p, R10, FP_KEY, R0);
	map_call(p, fc->fresh, FP_KEY, BPF_FUNC_map_lookup_elem);
	stale = jump_imm(p, BPF_JEQ, R0, 0);
	store_imm(p, R10, FP_FRESH, 1);
	land(p, stale);
}

/* After the walk, on a fork in a watched subtree: the child is fresh,
 * marked with the watched cgroups found. */
static void fork_after(struct prog *p, const struct fork_counter *fc, long tgid_off)
{
	size_t nohit, unread;

	load(p, R1, R10, FP_HIT);
	nohit = jump_imm(p, BPF_JEQ, R1, 0);
	store_imm(p, R10, FP_TGID, 0);
	mov(p, R1, R10);
	alu_imm(p, BPF_ADD, R1, FP_TGID);
	mov_imm(p, R2, sizeof(uint32_t));
	load(p, R3, R6, 0);	/* task_newtask(task, ...) */
	alu_imm(p, BPF_ADD, R3, (int32_t)tgid_off);
	call(p, BPF_FUNC_probe_read_kernel);
	unread = jump_imm(p, BPF_JNE, R0, 0);
	load_map(p, R1, fc->fresh);
	mov(p, R2, R10);
	alu_imm(p, BPF_ADD, R2, FP_TGID);
	mov(p, R3, R10);
	alu_imm(p, BPF_ADD, R3, FP_MARK);
	mov_imm(p, R4, BPF_ANY);
	call(p, BPF_FUNC_map_update_elem);
	land(p, nohit);
	land(p, unread);
}

/* On a fork, the watched cgroup whose id is at FP_KEY found: kept in the
 * child's mark, and a jump past its counting (returned) when the mark
 * is full: a fork is counted only where its exec or exit will be. */
static size_t fork_origin(struct prog *p)
{
	size_t next[FRESH_ORIGINS], kept[FRESH_ORIGINS], full;

	load(p, R1, R10, FP_HIT);
	for (unsigned i = 0; i < FRESH_ORIGINS; i++) {
		next[i] = jump_imm(p, BPF_JNE, R1, (int32_t)i);
		load(p, R2, R10, FP_KEY);
		store(p, R10, MARK(origin[i]), R2);
		kept[i] = jump_imm(p, BPF_JA, 0, 0);
		land(p, next[i]);
	}
	full = jump_imm(p, BPF_JA, 0, 0);
	for (unsigned i = 0; i < FRESH_ORIGINS; i++)
		land(p, kept[i]);
	alu_imm(p, BPF_ADD, R1, 1);
	store(p, R10, FP_HIT, R1);
	return full;
}

/* On an exec or an exit of a fresh process (r8 its mark): counted for
 * the watched cgroups its fork was counted for, wherever it is now (a
 * process that moved out of a watched subtree, as a test runner's do,
 * is counted there all the same). */
static void count_origins(struct prog *p, const struct fork_counter *fc, enum fork_tp tp)
{
	for (unsigned i = 0; i < FRESH_ORIGINS; i++) {
		size_t none, miss;

		load(p, R1, R8, (int16_t)offsetof(struct fresh_mark, origin[i]));
		none = jump_imm(p, BPF_JEQ, R1, 0);
		store(p, R10, FP_KEY, R1);
		map_call(p, fc->watched, FP_KEY, BPF_FUNC_map_lookup_elem);
		miss = jump_imm(p, BPF_JEQ, R0, 0);
		mov(p, R7, R0);
		for (unsigned s = 0; s < FORK_SLOTS; s++)
			count_slot(p, s, tp == FORK_TP_EXEC ? SLOT(s, execs) : SLOT(s, exits));
		land(p, none);
		land(p, miss);
	}
}

/* The walk: for each level of the mask the task is at or below, its
 * ancestor there looked up, each slot of a hit counted. */
static void walk(struct prog *p, const struct fork_counter *fc, enum fork_tp tp)
{
	size_t nolevels, above[FORK_LEVELS + 1], nabove = 0;

	call(p, BPF_FUNC_ktime_get_ns);
	mov(p, R9, R0);
	store_imm(p, R10, FP_KEY, 0);
	map_call(p, fc->levels, FP_KEY, BPF_FUNC_map_lookup_elem);
	nolevels = jump_imm(p, BPF_JEQ, R0, 0);
	load(p, R8, R0, 0);
	for (unsigned level = 1; level <= FORK_LEVELS; level++) {
		size_t skip, miss, stale = SIZE_MAX, full = SIZE_MAX;

		mov(p, R1, R8);
		alu_imm(p, BPF_AND, R1, (int32_t)(1u << level));
		skip = jump_imm(p, BPF_JEQ, R1, 0);
		mov_imm(p, R1, (int32_t)level);
		call(p, BPF_FUNC_get_current_ancestor_cgroup_id);
		/* 0: the task is above this level, and so above the next */
		above[nabove++] = jump_imm(p, BPF_JEQ, R0, 0);
		store(p, R10, FP_KEY, R0);
		map_call(p, fc->watched, FP_KEY, BPF_FUNC_map_lookup_elem);
		miss = jump_imm(p, BPF_JEQ, R0, 0);
		mov(p, R7, R0);
		if (tp == FORK_TP_FORK) {
			full = fork_origin(p);
			load(p, R1, R10, FP_FRESH);
			stale = jump_imm(p, BPF_JEQ, R1, 0);
		}
		for (unsigned s = 0; s < FORK_SLOTS; s++) {
			if (tp == FORK_TP_FORK)
				fork_slot(p, s, fc->ring);
			else
				count_slot(p, s, tp == FORK_TP_EXEC ? SLOT(s, execs) : SLOT(s, exits));
		}
		land(p, skip);
		land(p, miss);
		if (stale != SIZE_MAX)
			land(p, stale);
		if (full != SIZE_MAX)
			land(p, full);
	}
	land(p, nolevels);
	for (size_t i = 0; i < nabove; i++)
		land(p, above[i]);
}

/* On an exec or an exit: a fresh process's counted for its origins, and
 * its mark dropped (it is fresh no more); any other task's for the
 * watched ancestors of its cgroup. */
static void exec_or_exit(struct prog *p, const struct fork_counter *fc, enum fork_tp tp)
{
	size_t unmarked, done;

	current_tgid(p);
	store(p, R10, FP_TGID, R0);
	map_call(p, fc->fresh, FP_TGID, BPF_FUNC_map_lookup_elem);
	unmarked = jump_imm(p, BPF_JEQ, R0, 0);
	mov(p, R8, R0);
	call(p, BPF_FUNC_ktime_get_ns);
	mov(p, R9, R0);
	count_origins(p, fc, tp);
	map_call(p, fc->fresh, FP_TGID, BPF_FUNC_map_delete_elem);
	done = jump_imm(p, BPF_JA, 0, 0);
	land(p, unmarked);
	walk(p, fc, tp);
	land(p, done);
}

/* The program of one tracepoint. */
static bool build(struct prog *p, const struct fork_counter *fc, enum fork_tp tp)
{
	size_t left_out;

	mov(p, R6, R1);
	left_out = prologue(p, tp);
	if (tp == FORK_TP_FORK) {
		fork_before(p, fc);
		walk(p, fc, tp);
		fork_after(p, fc, fc->tgid_off);
	} else {
		exec_or_exit(p, fc, tp);
	}
	if (left_out != SIZE_MAX)
		land(p, left_out);
	mov_imm(p, R0, 0);
	emit(p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	return !p->oom;
}

size_t fork_prog_build(const struct fork_counter *fc, enum fork_tp tp, struct bpf_insn **insns)
{
	struct prog p = { 0 };

	if (!build(&p, fc, tp)) {
		free(p.v);
		*insns = NULL;
		return 0;
	}
	*insns = p.v;
	return p.n;
}

/* ---- the offset of task_struct's tgid, from the kernel's BTF ---- */

struct btf_types {
	const char *strs;
	uint32_t nstrs;
	const struct btf_type **v;	/* by id, from 1 */
	uint32_t n;
};

/* The bytes after a type's struct btf_type. */
static size_t btf_extra(const struct btf_type *t)
{
	uint32_t vlen = BTF_INFO_VLEN(t->info);

	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT:
	case BTF_KIND_VAR:
	case BTF_KIND_DECL_TAG:
		return 4;
	case BTF_KIND_ARRAY:
		return sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return vlen * sizeof(struct btf_member);
	case BTF_KIND_ENUM:
	case BTF_KIND_FUNC_PROTO:
		return vlen * 8;
	case BTF_KIND_DATASEC:
	case BTF_KIND_ENUM64:
		return vlen * 12;
	default:
		return 0;
	}
}

static const char *btf_name(const struct btf_types *b, uint32_t off)
{
	return off < b->nstrs ? b->strs + off : "";
}

/* The byte offset of member name in the struct or union t, looked for
 * in its anonymous members too; -1 if none. */
static long member_offset(const struct btf_types *b, const struct btf_type *t, const char *name, int depth)
{
	const struct btf_member *m = (const struct btf_member *)(t + 1);

	for (uint32_t i = 0; depth < 8 && i < BTF_INFO_VLEN(t->info); i++) {
		uint32_t bits = BTF_INFO_KFLAG(t->info) ? BTF_MEMBER_BIT_OFFSET(m[i].offset) : m[i].offset;
		const struct btf_type *mt = m[i].type && m[i].type <= b->n ? b->v[m[i].type] : NULL;
		long in;

		if (m[i].name_off && !strcmp(btf_name(b, m[i].name_off), name))
			return bits % 8 ? -1 : (long)(bits / 8);
		if (!m[i].name_off && mt &&
		    (BTF_INFO_KIND(mt->info) == BTF_KIND_STRUCT || BTF_INFO_KIND(mt->info) == BTF_KIND_UNION) &&
		    (in = member_offset(b, mt, name, depth + 1)) >= 0)
			return bits / 8 + in;
	}
	return -1;
}

/* The types of the BTF data (len bytes) indexed, into b: 0 or -EINVAL. */
static int btf_index(const char *data, size_t len, struct btf_types *b)
{
	const struct btf_header *h = (const void *)data;
	const char *p, *end;
	size_t cap = 0;

	if (len < sizeof(*h) || h->magic != BTF_MAGIC || h->hdr_len > len ||
	    (uint64_t)h->hdr_len + h->type_off + h->type_len > len ||
	    (uint64_t)h->hdr_len + h->str_off + h->str_len > len)
		return -EINVAL;
	b->strs = data + h->hdr_len + h->str_off;
	b->nstrs = h->str_len;
	p = data + h->hdr_len + h->type_off;
	end = p + h->type_len;
	b->v = NULL;
	b->n = 0;
	while (p + sizeof(struct btf_type) <= end) {
		const struct btf_type *t = (const void *)p;

		if (b->n + 2 > cap) {
			const struct btf_type **v = realloc(b->v, (cap = cap ? 2 * cap : 65536) * sizeof(*v));

			if (!v)
				return -ENOMEM;
			b->v = v;
		}
		b->v[++b->n] = t;
		p += sizeof(*t) + btf_extra(t);
	}
	return p == end ? 0 : -EINVAL;
}

/* Where a task_struct holds its tgid: the offset, or -errno. */
static long task_tgid_offset(void)
{
	int fd = open("/sys/kernel/btf/vmlinux", O_RDONLY | O_CLOEXEC);
	struct btf_types b = { 0 };
	struct stat st;
	long off = -ENOENT;
	char *data;
	ssize_t n = 0;

	if (fd < 0)
		return -errno;
	data = fstat(fd, &st) == 0 && st.st_size > 0 ? malloc((size_t)st.st_size) : NULL;
	while (data && n < st.st_size) {
		ssize_t r = read(fd, data + n, (size_t)(st.st_size - n));

		if (r <= 0)
			break;
		n += r;
	}
	close(fd);
	if (data && n == st.st_size && btf_index(data, (size_t)n, &b) == 0)
		for (uint32_t id = 1; id <= b.n && off < 0; id++)
			if (BTF_INFO_KIND(b.v[id]->info) == BTF_KIND_STRUCT &&
			    !strcmp(btf_name(&b, b.v[id]->name_off), "task_struct"))
				off = member_offset(&b, b.v[id], "tgid", 0);
	free(b.v);
	free(data);
	return off < 0 ? -ENOENT : off;
}

/* ---- the system calls ---- */

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	long r = syscall(__NR_bpf, cmd, attr, sizeof(*attr));

	return r < 0 ? -errno : (int)r;
}

static int map_create(uint32_t type, uint32_t key, uint32_t value, uint32_t max, uint32_t flags, const char *name)
{
	union bpf_attr a = { 0 };

	a.map_type = type;
	a.key_size = key;
	a.value_size = value;
	a.max_entries = max;
	a.map_flags = flags;
	snprintf(a.map_name, sizeof(a.map_name), "%s", name);
	return sys_bpf(BPF_MAP_CREATE, &a);
}

static int map_update(int fd, const void *key, const void *value, uint64_t flags)
{
	union bpf_attr a = { 0 };

	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)key;
	a.value = (uint64_t)(uintptr_t)value;
	a.flags = flags;
	return sys_bpf(BPF_MAP_UPDATE_ELEM, &a);
}

static int map_lookup(int fd, const void *key, void *value)
{
	union bpf_attr a = { 0 };

	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)key;
	a.value = (uint64_t)(uintptr_t)value;
	return sys_bpf(BPF_MAP_LOOKUP_ELEM, &a);
}

static int map_delete(int fd, const void *key)
{
	union bpf_attr a = { 0 };

	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)key;
	return sys_bpf(BPF_MAP_DELETE_ELEM, &a);
}

/* The last line of the verifier's log, into why. */
static void verifier_said(const char *log, char *why, size_t size)
{
	size_t n = strlen(log);
	const char *line;

	while (n && log[n - 1] == '\n')
		n--;
	line = log + n;
	while (line > log && line[-1] != '\n')
		line--;
	snprintf(why, size, "the verifier refused it: %.*s", (int)(log + n - line), line);
}

static int prog_load(const struct fork_counter *fc, enum fork_tp tp, char *why, size_t size)
{
	static const char *const name[FORK_TP_N] = { "cgkilld_fork", "cgkilld_exec", "cgkilld_exit" };
	struct bpf_insn *insns;
	size_t n = fork_prog_build(fc, tp, &insns);
	union bpf_attr a = { 0 };
	int fd;

	if (!n)
		return -ENOMEM;
	a.prog_type = BPF_PROG_TYPE_RAW_TRACEPOINT;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = (uint32_t)n;
	a.license = (uint64_t)(uintptr_t)"GPL";
	snprintf(a.prog_name, sizeof(a.prog_name), "%s", name[tp]);
	fd = sys_bpf(BPF_PROG_LOAD, &a);
	if (fd == -EACCES || fd == -EINVAL) {
		/* again, for the verifier's reason */
		char *log = calloc(1, LOG_SIZE);

		if (log) {
			a.log_buf = (uint64_t)(uintptr_t)log;
			a.log_size = LOG_SIZE;
			a.log_level = 1;
			fd = sys_bpf(BPF_PROG_LOAD, &a);
			if (fd < 0)
				verifier_said(log, why, size);
			free(log);
		}
	}
	if (fd < 0 && !*why)
		snprintf(why, size, "loading its program: %s", strerror(-fd));
	free(insns);
	return fd;
}

static int attach(int prog, const char *tracepoint)
{
	union bpf_attr a = { 0 };

	a.raw_tracepoint.name = (uint64_t)(uintptr_t)tracepoint;
	a.raw_tracepoint.prog_fd = (uint32_t)prog;
	return sys_bpf(BPF_RAW_TRACEPOINT_OPEN, &a);
}

/* The consumer's page (read-write) and the producer's with the data,
 * mapped twice in a row by the kernel so that a record never wraps. */
static int ring_map(struct fork_counter *fc)
{
	fc->page = (size_t)sysconf(_SC_PAGESIZE);
	fc->cons = mmap(NULL, fc->page, PROT_READ | PROT_WRITE, MAP_SHARED, fc->ring, 0);
	if (fc->cons == MAP_FAILED) {
		fc->cons = NULL;
		return -errno;
	}
	fc->prod = mmap(NULL, fc->page + 2 * RINGBUF_SIZE, PROT_READ, MAP_SHARED, fc->ring, (off_t)fc->page);
	if (fc->prod == MAP_FAILED) {
		fc->prod = NULL;
		return -errno;
	}
	return 0;
}

void fork_counter_close(struct fork_counter *fc)
{
	if (!fc)
		return;
	for (int i = 0; i < FORK_TP_N; i++) {
		if (fc->link[i] >= 0)
			close(fc->link[i]);
		if (fc->prog[i] >= 0)
			close(fc->prog[i]);
	}
	if (fc->cons)
		munmap(fc->cons, fc->page);
	if (fc->prod)
		munmap(fc->prod, fc->page + 2 * RINGBUF_SIZE);
	if (fc->ring >= 0)
		close(fc->ring);
	if (fc->watched >= 0)
		close(fc->watched);
	if (fc->levels >= 0)
		close(fc->levels);
	if (fc->fresh >= 0)
		close(fc->fresh);
	free(fc);
}

/* What failed, in why ("" on success): 0 or -errno. */
static int setup(struct fork_counter *fc, char *why, size_t size)
{
	static const char *const tp[FORK_TP_N] = { "task_newtask", "sched_process_exec", "sched_process_exit" };
	int r;

	fc->watched = map_create(BPF_MAP_TYPE_HASH, sizeof(uint64_t), sizeof(struct fork_value), WATCHED_MAX,
				 BPF_F_NO_PREALLOC, "cgkilld_watch");
	if (fc->watched < 0) {
		snprintf(why, size, "bpf(2): %s", strerror(-fc->watched));
		return fc->watched;
	}
	fc->levels = map_create(BPF_MAP_TYPE_ARRAY, sizeof(uint32_t), sizeof(uint64_t), 1, 0, "cgkilld_levels");
	fc->ring = map_create(BPF_MAP_TYPE_RINGBUF, 0, 0, RINGBUF_SIZE, 0, "cgkilld_ring");
	fc->fresh = map_create(BPF_MAP_TYPE_LRU_HASH, sizeof(uint32_t), sizeof(struct fresh_mark), FRESH_MAX, 0,
			       "cgkilld_fresh");
	if (fc->levels < 0 || fc->ring < 0 || fc->fresh < 0) {
		r = fc->levels < 0 ? fc->levels : fc->ring < 0 ? fc->ring : fc->fresh;
		snprintf(why, size, "%s map: %s", fc->levels < 0 ? "array" : fc->ring < 0 ? "ring buffer" : "LRU hash",
			 strerror(-r));
		return r;
	}
	fc->tgid_off = task_tgid_offset();
	if (fc->tgid_off < 0) {
		snprintf(why, size, "no task_struct tgid in /sys/kernel/btf/vmlinux: %s", strerror((int)-fc->tgid_off));
		return (int)fc->tgid_off;
	}
	if ((r = ring_map(fc)) < 0) {
		snprintf(why, size, "mapping the ring buffer: %s", strerror(-r));
		return r;
	}
	for (int i = 0; i < FORK_TP_N; i++) {
		fc->prog[i] = prog_load(fc, i, why, size);
		if (fc->prog[i] < 0)
			return fc->prog[i];
		fc->link[i] = attach(fc->prog[i], tp[i]);
		if (fc->link[i] < 0) {
			snprintf(why, size, "attaching to the tracepoint %s: %s", tp[i], strerror(-fc->link[i]));
			return fc->link[i];
		}
	}
	return 0;
}

int fork_counter_open(struct fork_counter **out, char *why, size_t size)
{
	struct fork_counter *fc = calloc(1, sizeof(*fc));
	int r;

	*out = NULL;
	*why = '\0';
	if (!fc) {
		snprintf(why, size, "out of memory");
		return -ENOMEM;
	}
	fc->watched = fc->levels = fc->ring = fc->fresh = -1;
	for (int i = 0; i < FORK_TP_N; i++)
		fc->prog[i] = fc->link[i] = -1;
	r = setup(fc, why, size);
	if (r < 0) {
		fork_counter_close(fc);
		return r;
	}
	*out = fc;
	return 0;
}

int fork_counter_fd(const struct fork_counter *fc)
{
	return fc->ring;
}

static int levels_update(struct fork_counter *fc)
{
	uint64_t mask = 0;
	uint32_t zero = 0;

	for (unsigned l = 1; l <= FORK_LEVELS; l++)
		if (fc->nlevel[l])
			mask |= 1ull << l;
	return map_update(fc->levels, &zero, &mask, BPF_ANY);
}

int fork_counter_watch(struct fork_counter *fc, uint64_t cgid, unsigned level, unsigned slot,
		       const struct fork_limit *lim)
{
	struct fork_value v;
	bool fresh;
	int r;

	if (level < 1 || level > FORK_LEVELS || slot >= FORK_SLOTS || !lim->limit || !lim->window_ns)
		return -EINVAL;
	r = map_lookup(fc->watched, &cgid, &v);
	if (r < 0 && r != -ENOENT)
		return r;
	fresh = r == -ENOENT;
	if (fresh)
		memset(&v, 0, sizeof(v));
	v.s[slot] = (struct fork_slot){ .limit = lim->limit, .window_ns = lim->window_ns, .cookie = lim->cookie };
	r = map_update(fc->watched, &cgid, &v, BPF_ANY);
	if (r < 0 || !fresh)
		return r;
	if (fc->nlevel[level]++ == 0 && (r = levels_update(fc)) < 0) {
		fc->nlevel[level]--;
		map_delete(fc->watched, &cgid);
	}
	return r;
}

int fork_counter_unwatch(struct fork_counter *fc, uint64_t cgid, unsigned level, unsigned slot)
{
	struct fork_value v;
	bool empty = true;
	int r;

	if (level < 1 || level > FORK_LEVELS || slot >= FORK_SLOTS)
		return -EINVAL;
	r = map_lookup(fc->watched, &cgid, &v);
	if (r < 0)
		return r;
	v.s[slot].limit = 0;
	for (unsigned s = 0; s < FORK_SLOTS; s++)
		empty = empty && !v.s[s].limit;
	if (!empty)
		return map_update(fc->watched, &cgid, &v, BPF_EXIST);
	r = map_delete(fc->watched, &cgid);
	if (r == 0 && fc->nlevel[level] && --fc->nlevel[level] == 0)
		r = levels_update(fc);
	return r;
}

int fork_counter_peek(const struct fork_counter *fc, uint64_t cgid, unsigned slot, struct fork_counts *n)
{
	struct fork_value v;
	int r = slot < FORK_SLOTS ? map_lookup(fc->watched, &cgid, &v) : -EINVAL;

	if (r == 0)
		*n = (struct fork_counts){ v.s[slot].forks, v.s[slot].execs, v.s[slot].exits };
	return r;
}

int fork_cgroup_id(int dfd, uint64_t *id)
{
	struct {
		struct file_handle h;
		uint64_t id;
	} fh = { .h.handle_bytes = sizeof(uint64_t) };
	int mnt;

	/* kernfs's handle is the id the kernel's helpers give */
	if (name_to_handle_at(dfd, "", &fh.h, &mnt, AT_EMPTY_PATH) < 0)
		return -errno;
	memcpy(id, fh.h.f_handle, sizeof(*id));
	return 0;
}

unsigned fork_counter_read(struct fork_counter *fc, void (*fn)(const struct fork_record *rec, void *arg),
			   void *arg)
{
	unsigned long *cons = fc->cons;
	const unsigned long *prod = fc->prod;
	const char *data = (const char *)fc->prod + fc->page;
	unsigned long pos = __atomic_load_n(cons, __ATOMIC_ACQUIRE);
	unsigned n = 0;

	while (pos < __atomic_load_n(prod, __ATOMIC_ACQUIRE)) {
		const uint32_t *hdr = (const uint32_t *)(data + (pos & (RINGBUF_SIZE - 1)));
		uint32_t len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);

		if (len & BPF_RINGBUF_BUSY_BIT)
			break;
		if (!(len & BPF_RINGBUF_DISCARD_BIT) && len >= sizeof(struct fork_record)) {
			struct fork_record rec;

			memcpy(&rec, (const char *)hdr + BPF_RINGBUF_HDR_SZ, sizeof(rec));
			fn(&rec, arg);
			n++;
		}
		len &= ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);
		pos += (len + BPF_RINGBUF_HDR_SZ + 7) & ~7ul;
		__atomic_store_n(cons, pos, __ATOMIC_RELEASE);
	}
	return n;
}
