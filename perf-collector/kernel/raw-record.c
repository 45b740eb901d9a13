// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * raw-record.c - decoding the records every perf_event ring buffer of a
 * recording carries, whatever its events: see raw-record.h.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "perf-collector/kernel/raw-record.h"
#include "util/util.h"

/* Time and pid/tid from the sample_id_all trailer of a non-sample record. */
static int decode_trailer(const struct perf_event_header *h, struct vp_raw *r)
{
	const unsigned char *end = (const unsigned char *)h + h->size;
	uint64_t v;

	if (h->size < sizeof(*h) + VP_SAMPLE_ID_SIZE)
		return 0;
	memcpy(&v, end - VP_SAMPLE_ID_SIZE, 8);
	r->pid = (uint32_t)v;
	r->tid = (uint32_t)(v >> 32);
	memcpy(&r->time, end - VP_SAMPLE_ID_SIZE + 8, 8);
	return 1;
}

struct mmap2_fixed {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint64_t dev_or_build_id[3];
	uint32_t prot, flags;
};

static int decode_mmap2(const struct perf_event_header *h, struct vp_raw *r)
{
	const unsigned char *body = (const unsigned char *)(h + 1);
	size_t max = h->size - sizeof(*h), len;
	struct mmap2_fixed m;
	const char *name;

	if (max < sizeof(m) + VP_SAMPLE_ID_SIZE || !decode_trailer(h, r))
		return 0;
	memcpy(&m, body, sizeof(m));
	name = (const char *)body + sizeof(m);
	len = strnlen(name, max - sizeof(m) - VP_SAMPLE_ID_SIZE);
	/* Files, and the vDSO and uprobe pages for unwinding sampled stacks;
	 * not anonymous memory, [stack], [heap]... */
	if (name[0] != '/' && strcmp(name, "[vdso]") && strcmp(name, "[uprobes]"))
		return 0;
	r->type = VP_RAW_MMAP;
	r->pid = m.pid;
	r->tid = m.tid;
	r->mmap = xmalloc(sizeof(*r->mmap) + len + 1);
	r->mmap->start = m.addr;
	r->mmap->len = m.len;
	r->mmap->pgoff = m.pgoff;
	memcpy(r->mmap->path, name, len);
	r->mmap->path[len] = '\0';
	return 1;
}

/* A new process (not a thread): VP_RAW_FORK. */
static int decode_fork(const struct perf_event_header *h, struct vp_cursor *c, struct vp_raw *r)
{
	uint32_t ids[4]; /* pid, ppid, tid, ptid */
	uint64_t time;

	if ((size_t)(c->end - c->p) < sizeof(ids) + 8)
		return 0;
	memcpy(ids, c->p, sizeof(ids));
	memcpy(&time, c->p + sizeof(ids), 8);
	if (ids[0] == ids[1] || !decode_trailer(h, r))
		return 0;
	r->type = VP_RAW_FORK;
	r->pid = ids[0];
	r->tid = ids[2];
	r->addr = ids[1];
	r->sp = ids[3];
	r->time = time;
	return 1;
}

/* An exec (a COMM record that says so): VP_RAW_EXEC. */
static int decode_exec(const struct perf_event_header *h, struct vp_cursor *c, struct vp_raw *r)
{
	uint32_t ids[2]; /* pid, tid */

	if (!(h->misc & PERF_RECORD_MISC_COMM_EXEC) || (size_t)(c->end - c->p) < sizeof(ids) ||
	    !decode_trailer(h, r))
		return 0;
	memcpy(ids, c->p, sizeof(ids));
	r->type = VP_RAW_EXEC;
	r->pid = ids[0];
	r->tid = ids[1];
	return 1;
}

int vp_raw_decode(const struct perf_event_header *h, int cpu, struct vp_raw *ret)
{
	struct vp_cursor c = VP_CURSOR_INIT(h);
	uint64_t v;

	memset(ret, 0, sizeof(*ret));
	ret->cpu = (uint16_t)cpu;
	switch (h->type) {
	case PERF_RECORD_MMAP2:
		return decode_mmap2(h, ret);
	case PERF_RECORD_LOST:
		/* id, lost count, then the trailer. */
		if (vp_cursor_skip(&c, 8) < 0 || vp_cursor_u64(&c, &v) < 0 ||
		    !decode_trailer(h, ret))
			return 0;
		ret->type = VP_RAW_LOST;
		ret->addr = v;
		return 1;
	case PERF_RECORD_FORK:
		return decode_fork(h, &c, ret);
	case PERF_RECORD_COMM:
		return decode_exec(h, &c, ret);
	default:
		return 0;
	}
}
