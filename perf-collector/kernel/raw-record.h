/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * raw-record.h - the records of a recording as read from the kernel's ring
 * buffers, decoded into one type (struct vp_raw) that the probes, the
 * sampler and the record pipeline merge by time; and the decoding of the
 * records every perf_event ring buffer carries (mappings, losses, forks,
 * execs).  The probes' and the sampler's own samples decode where their
 * layouts are known (probes.c, sampler.c), over the same cursor.
 */
#ifndef VARPERF_RAW_RECORD_H
#define VARPERF_RAW_RECORD_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum vp_raw_type {
	VP_RAW_ENTRY = 0,
	VP_RAW_EXIT = 1,
	VP_RAW_MMAP = 2, /* an executable file mapping of the target */
	VP_RAW_LOST = 3, /* the kernel dropped records: buffer full */
	VP_RAW_SAMPLE = 4, /* a sampled user stack (sampler.h) */
	VP_RAW_FORK = 5, /* process pid/tid was forked by process addr,
			  * thread sp */
	VP_RAW_EXEC = 6, /* process pid exec'd a program */
	VP_RAW_WAIT = 7, /* thread tid is back on a CPU after sleeping
			  * (blocked) addr ns until woken, in syscall
			  * func - 1 (func 0: none) */
};

struct vp_raw_sample;

struct vp_raw_mmap {
	uint64_t start, len, pgoff;
	char path[]; /* NUL-terminated */
};

enum {
	/* An entry whose probed instruction also leaves the function (a
	 * lone ret or jmp): its exit follows at the same time, sp + 8. */
	VP_RAW_F_EXITS_TOO = 1 << 0,
};

/* One decoded record, ready to be merged by time across CPUs. */
struct vp_raw {
	uint64_t time;
	uint64_t seq;  /* read order, to keep sorting stable */
	uint64_t sp;   /* entry/exit: user stack pointer */
	uint64_t addr; /* entry: return address (0 unknown); exit: ip; lost: count */
	uint64_t offcpu; /* entry/exit, BPF backend: the thread's off-CPU ns so far */
	struct vp_raw_mmap *mmap; /* VP_RAW_MMAP only, malloc'ed */
	struct vp_raw_sample *sample; /* VP_RAW_SAMPLE only, malloc'ed */
	uint32_t pid, tid;
	uint32_t func;
	uint16_t type; /* enum vp_raw_type */
	uint16_t cpu;
	uint32_t flags; /* VP_RAW_F_* */
};

/* The sample_id_all trailer of a non-sample record: pid/tid, time, id. */
enum { VP_SAMPLE_ID_SIZE = 24 };

/* A cursor over a record's payload that never reads past its end. */
struct vp_cursor {
	const unsigned char *p, *end;
};

#define VP_CURSOR_INIT(h) \
	{ (const unsigned char *)((h) + 1), (const unsigned char *)(h) + (h)->size }

/* Take @n bytes into @v: 0, or -1 past the end (nothing taken). */
static inline int vp_cursor_take(struct vp_cursor *c, void *v, size_t n)
{
	if ((size_t)(c->end - c->p) < n)
		return -1;
	memcpy(v, c->p, n);
	c->p += n;
	return 0;
}

static inline int vp_cursor_u64(struct vp_cursor *c, uint64_t *v)
{
	return vp_cursor_take(c, v, 8);
}

static inline int vp_cursor_skip(struct vp_cursor *c, uint64_t n)
{
	if ((uint64_t)(c->end - c->p) < n)
		return -1;
	c->p += n;
	return 0;
}

/**
 * vp_raw_decode - decode a record that is not a sample, read from the ring
 * buffer of CPU @cpu: MMAP2 of a file, the vDSO or the uprobe page
 * (VP_RAW_MMAP, its path malloc'ed), LOST, FORK of a process, COMM of an
 * exec.  Returns 1 and fills @ret, or 0 for records varperf does not use
 * (samples among them).
 */
int vp_raw_decode(const struct perf_event_header *h, int cpu, struct vp_raw *ret);

#endif
