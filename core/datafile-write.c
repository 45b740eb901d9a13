/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * datafile-write.c - the writer of varperf.data (see datafile.h and
 * varperf-data(5)): the collector's chunks, records and definitions.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "datafile.h"
#include "internal.h"
#include "varint.h"

/* The CRC-32 of a chunk's payload (zlib's, as the format says). */
uint32_t vp_crc32(const uint8_t *p, size_t n)
{
	return (uint32_t)crc32(crc32(0L, Z_NULL, 0), p, (uInt)n);
}

/* ---- growable byte buffer ---- */

struct vp_buf {
	uint8_t *p;
	size_t len;
	size_t cap;
};

static int buf_reserve(struct vp_buf *b, size_t more)
{
	if (b->len + more > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		uint8_t *p;

		while (cap < b->len + more)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p)
			return -ENOMEM;
		b->p = p;
		b->cap = cap;
	}
	return 0;
}

static int buf_uleb(struct vp_buf *b, uint64_t v)
{
	if (buf_reserve(b, VP_ULEB_MAX))
		return -ENOMEM;
	b->len += vp_uleb_put(b->p + b->len, v);
	return 0;
}

static int buf_bytes(struct vp_buf *b, const void *s, size_t n)
{
	if (buf_uleb(b, n) || buf_reserve(b, n))
		return -ENOMEM;
	if (n) /* s may be NULL when empty (a module without build-id) */
		memcpy(b->p + b->len, s, n);
	b->len += n;
	return 0;
}

static int buf_str(struct vp_buf *b, const char *s)
{
	return buf_bytes(b, s ? s : "", s ? strlen(s) : 0);
}

/* ---- writer ---- */

struct vp_writer {
	int fd;
	int err;
	struct vp_buf chunk; /* 16 reserved header bytes, then the payload */
	int have_base;
	uint64_t last_time;
	uint32_t gen; /* chunk generation, for per-thread sp deltas */
	uint64_t *last_sp;
	uint32_t *sp_gen;   /* also of last_off: both change with every event */
	uint64_t *last_off; /* the thread's last off-CPU time, in any chunk */
	int offcpu;	    /* events carry off-CPU times (hdr->offcpu) */
	uint64_t *last_cfa; /* innermost CFA of the thread's last sample */
	uint32_t *cfa_gen;
	size_t nthreads;
	uint64_t events;
	uint64_t lost;
	uint64_t samples, truncated, broken;
};

static int write_all(struct vp_writer *w, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k = write(w->fd, p, n);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static int write_chunk(struct vp_writer *w, uint8_t type, uint8_t *hdr_and_payload,
		       size_t payload_len)
{
	uint8_t *h = hdr_and_payload;

	memcpy(h, VP_CHUNK_MAGIC, 4);
	h[4] = type;
	h[5] = h[6] = h[7] = 0;
	vp_put_le32(h + 8, (uint32_t)payload_len);
	vp_put_le32(h + 12, vp_crc32(h + VP_CHUNK_HEADER_SIZE, payload_len));
	return write_all(w, h, VP_CHUNK_HEADER_SIZE + payload_len);
}

static void chunk_reset(struct vp_writer *w)
{
	/* header, then the 8-byte base time of an EVENTS chunk */
	w->chunk.len = VP_CHUNK_HEADER_SIZE + 8;
	w->have_base = 0;
	w->gen++;
}

static int meta_kv(struct vp_buf *meta, unsigned key, const struct vp_buf *val)
{
	if (buf_uleb(meta, key))
		return -ENOMEM;
	return buf_bytes(meta, val->p, val->len);
}

static int build_meta(struct vp_buf *m, const struct vp_header *hdr)
{
	struct vp_buf v = { 0 };
	size_t i;
	int err = -ENOMEM;

#define KV(key, fill)                                   \
	do {                                            \
		v.len = 0;                              \
		if (fill)                               \
			goto out;                       \
		if (meta_kv(m, key, &v))                \
			goto out;                       \
	} while (0)
	if (buf_reserve(m, VP_CHUNK_HEADER_SIZE))
		goto out;
	m->len = VP_CHUNK_HEADER_SIZE;
	KV(VP_META_UNIT, buf_uleb(&v, hdr->unit));
	KV(VP_META_CLOCK, buf_uleb(&v, hdr->clock));
	KV(VP_META_START, buf_uleb(&v, hdr->start_time));
	KV(VP_META_PID, buf_uleb(&v, hdr->pid));
	KV(VP_META_NCPU, buf_uleb(&v, hdr->ncpu));
	KV(VP_META_HOST, buf_str(&v, hdr->host));
	v.len = 0;
	if (buf_uleb(&v, (uint64_t)hdr->argc))
		goto out;
	for (i = 0; i < (size_t)hdr->argc; i++)
		if (buf_str(&v, hdr->argv[i]))
			goto out;
	if (meta_kv(m, VP_META_CMDLINE, &v))
		goto out;
	for (i = 0; i < hdr->nmodules; i++) {
		const struct vp_module *mod = &hdr->modules[i];

		KV(VP_META_MODULE, buf_str(&v, mod->path) ||
					   buf_bytes(&v, mod->build_id, mod->build_id_len) ||
					   buf_uleb(&v, mod->size));
	}
	for (i = 0; i < hdr->nfuncs; i++) {
		const struct vp_func *f = &hdr->funcs[i];

		KV(VP_META_FUNCTION,
		   buf_uleb(&v, f->module) || buf_uleb(&v, f->addr) || buf_uleb(&v, f->size) ||
			   buf_uleb(&v, f->probe_off) || buf_uleb(&v, f->flags) ||
			   buf_uleb(&v, f->insn_class) || buf_str(&v, f->name) ||
			   buf_str(&v, f->display) || buf_str(&v, f->base));
	}
	for (i = 0; i < hdr->ncosts; i++) {
		const struct vp_probe_cost *c = &hdr->costs[i];

		KV(VP_META_PROBE_COST, buf_uleb(&v, c->insn_class) ||
					       buf_uleb(&v, c->in_window_ns) ||
					       buf_uleb(&v, c->full_ns) || buf_uleb(&v, c->spread_ns));
	}
	if (hdr->mode)
		KV(VP_META_MODE, buf_uleb(&v, hdr->mode));
	if (hdr->sampling.event) {
		const struct vp_sampling *sm = &hdr->sampling;

		KV(VP_META_SAMPLING, buf_uleb(&v, sm->event) || buf_uleb(&v, sm->period) ||
					     buf_uleb(&v, sm->freq) ||
					     buf_uleb(&v, sm->stack_size));
	}
	if (hdr->backend)
		KV(VP_META_BACKEND, buf_uleb(&v, hdr->backend));
	if (hdr->offcpu)
		KV(VP_META_OFFCPU, buf_uleb(&v, 1));
	if (hdr->has_input_size)
		KV(VP_META_INPUT_SIZE, buf_uleb(&v, hdr->input_size));
	if (hdr->blocked)
		KV(VP_META_BLOCKED, buf_uleb(&v, 1));
#undef KV
	err = 0;
out:
	free(v.p);
	return err;
}

struct vp_writer *vp_writer_new(const char *path, const struct vp_header *hdr)
{
	/* what any new file gets (0666 less the umask): the data holds
	 * nothing the program's own output would not */
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);

	if (fd < 0)
		return NULL;
	return vp_writer_new_fd(fd, hdr);
}

struct vp_writer *vp_writer_new_fd(int fd, const struct vp_header *hdr)
{
	struct vp_writer *w = calloc(1, sizeof(*w));
	struct vp_buf meta = { 0 };
	uint8_t fh[VP_FILE_HEADER_SIZE];
	int err;

	if (!w) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	w->fd = fd;
	memcpy(fh, VP_DATA_MAGIC, 8);
	vp_put_le32(fh + 8, VP_DATA_VERSION);
	vp_put_le32(fh + 12, 0);
	err = write_all(w, fh, sizeof(fh));
	if (!err)
		err = build_meta(&meta, hdr);
	if (!err)
		err = write_chunk(w, VP_CHUNK_META, meta.p, meta.len - VP_CHUNK_HEADER_SIZE);
	free(meta.p);
	if (!err)
		err = buf_reserve(&w->chunk, VP_CHUNK_TARGET + 256);
	if (err)
		goto fail;
	w->offcpu = hdr->offcpu != 0;
	chunk_reset(w);
	return w;
fail:
	close(w->fd);
	free(w->chunk.p);
	free(w);
	errno = -err;
	return NULL;
}

int vp_writer_flush(struct vp_writer *w)
{
	size_t payload = w->chunk.len - VP_CHUNK_HEADER_SIZE;

	if (w->err)
		return w->err;
	if (payload <= 8)
		return 0;
	if (!w->have_base) /* only definitions in this chunk */
		vp_put_le64(w->chunk.p + VP_CHUNK_HEADER_SIZE, 0);
	w->err = write_chunk(w, VP_CHUNK_EVENTS, w->chunk.p, payload);
	chunk_reset(w);
	return w->err;
}

/* Records are small; make room for the largest before encoding one. */
static uint8_t *rec_begin(struct vp_writer *w, size_t max)
{
	if (w->err)
		return NULL;
	if (buf_reserve(&w->chunk, max)) {
		w->err = -ENOMEM;
		return NULL;
	}
	return w->chunk.p + w->chunk.len;
}

static int rec_end(struct vp_writer *w, const uint8_t *p)
{
	w->chunk.len = (size_t)(p - w->chunk.p);
	if (w->chunk.len - VP_CHUNK_HEADER_SIZE >= VP_CHUNK_TARGET)
		return vp_writer_flush(w);
	return 0;
}

int vp_writer_thread(struct vp_writer *w, uint32_t idx, uint32_t tid, uint32_t pid)
{
	uint8_t *p = rec_begin(w, 4 * VP_ULEB_MAX);

	if (!p)
		return w->err;
	if (idx >= w->nthreads) {
		size_t n = w->nthreads ? w->nthreads : 8;
		uint64_t *sp;
		uint32_t *gen;

		while (n <= idx)
			n *= 2;
		sp = realloc(w->last_sp, n * sizeof(*sp));
		if (sp)
			w->last_sp = sp;
		gen = realloc(w->sp_gen, n * sizeof(*gen));
		if (gen)
			w->sp_gen = gen;
		if (!sp || !gen)
			return w->err = -ENOMEM;
		sp = realloc(w->last_cfa, n * sizeof(*sp));
		if (sp)
			w->last_cfa = sp;
		gen = realloc(w->cfa_gen, n * sizeof(*gen));
		if (gen)
			w->cfa_gen = gen;
		if (!sp || !gen)
			return w->err = -ENOMEM;
		sp = realloc(w->last_off, n * sizeof(*sp));
		if (!sp)
			return w->err = -ENOMEM;
		w->last_off = sp;
		memset(w->last_off + w->nthreads, 0, (n - w->nthreads) * sizeof(*sp));
		memset(w->sp_gen + w->nthreads, 0, (n - w->nthreads) * sizeof(*gen));
		memset(w->cfa_gen + w->nthreads, 0, (n - w->nthreads) * sizeof(*gen));
		w->nthreads = n;
		p = w->chunk.p + w->chunk.len;
	}
	p += vp_uleb_put(p, VP_CTL_THREAD << 2 | VP_REC_CONTROL);
	p += vp_uleb_put(p, idx);
	p += vp_uleb_put(p, tid);
	p += vp_uleb_put(p, pid);
	return rec_end(w, p);
}

int vp_writer_callsite(struct vp_writer *w, uint32_t id, const struct vp_callsite *cs)
{
	size_t caller = cs->caller ? strlen(cs->caller) : 0;
	size_t file = cs->file ? strlen(cs->file) : 0;
	uint8_t *p = rec_begin(w, 8 * VP_ULEB_MAX + caller + file);

	if (!p)
		return w->err;
	p += vp_uleb_put(p, VP_CTL_CALLSITE << 2 | VP_REC_CONTROL);
	p += vp_uleb_put(p, id);
	p += vp_uleb_put(p, cs->flags);
	p += vp_uleb_put(p, (uint64_t)(cs->module + 1));
	p += vp_uleb_put(p, cs->offset);
	p += vp_uleb_put(p, caller);
	memcpy(p, cs->caller ? cs->caller : "", caller);
	p += caller;
	p += vp_uleb_put(p, file);
	memcpy(p, cs->file ? cs->file : "", file);
	p += file;
	p += vp_uleb_put(p, cs->line);
	return rec_end(w, p);
}

int vp_writer_lost(struct vp_writer *w, uint32_t cpu, uint64_t count)
{
	uint8_t *p = rec_begin(w, 3 * VP_ULEB_MAX);

	if (!p)
		return w->err;
	w->lost += count;
	p += vp_uleb_put(p, VP_CTL_LOST << 2 | VP_REC_CONTROL);
	p += vp_uleb_put(p, cpu);
	p += vp_uleb_put(p, count);
	return rec_end(w, p);
}

/* The base time of a chunk is its first timed record's. */
static uint64_t writer_dtime(struct vp_writer *w, uint64_t time)
{
	uint64_t d;

	if (!w->have_base) {
		w->have_base = 1;
		w->last_time = time;
		vp_put_le64(w->chunk.p + VP_CHUNK_HEADER_SIZE, time);
	}
	d = vp_zigzag((int64_t)(time - w->last_time));
	w->last_time = time;
	return d;
}

uint64_t vp_writer_offcpu(const struct vp_writer *w, uint32_t idx)
{
	return w->offcpu && idx < w->nthreads ? w->last_off[idx] : 0;
}

int vp_writer_event(struct vp_writer *w, const struct vp_event *ev)
{
	uint8_t *p = rec_begin(w, 6 * VP_ULEB_MAX);
	uint64_t prev_sp, prev_off;
	int in_chunk;

	if (!p)
		return w->err;
	if (ev->thread >= w->nthreads)
		return w->err = -EINVAL; /* define the thread first */
	if (w->offcpu && ev->offcpu < w->last_off[ev->thread])
		return w->err = -EINVAL; /* readers refuse a thread's off-CPU time going back */
	in_chunk = w->sp_gen[ev->thread] == w->gen;
	prev_sp = in_chunk ? w->last_sp[ev->thread] : 0;
	prev_off = in_chunk ? w->last_off[ev->thread] : 0;
	p += vp_uleb_put(p, (uint64_t)ev->func << 2 | ev->kind);
	p += vp_uleb_put(p, ev->thread);
	/* The chunk's base time is its first record's: dtime 0. */
	p += vp_uleb_put(p, writer_dtime(w, ev->time));
	p += vp_uleb_put(p, vp_zigzag((int64_t)(ev->sp - prev_sp)));
	if (ev->kind == VP_EV_ENTRY)
		p += vp_uleb_put(p, ev->callsite);
	if (w->offcpu) {
		p += vp_uleb_put(p, vp_zigzag((int64_t)(ev->offcpu - prev_off)));
		w->last_off[ev->thread] = ev->offcpu;
	}
	w->last_sp[ev->thread] = ev->sp;
	w->sp_gen[ev->thread] = w->gen;
	w->events++;
	return rec_end(w, p);
}

static size_t str_len(const char *s)
{
	return s ? strlen(s) : 0;
}

static uint8_t *put_bytes(uint8_t *p, const void *s, size_t n)
{
	p += vp_uleb_put(p, n);
	if (n)
		memcpy(p, s, n);
	return p + n;
}

int vp_writer_module(struct vp_writer *w, uint32_t id, const struct vp_module *m,
		     uint32_t flags)
{
	size_t path = str_len(m->path);
	uint8_t *p = rec_begin(w, 5 * VP_ULEB_MAX + path + m->build_id_len);

	if (!p)
		return w->err;
	p += vp_uleb_put(p, VP_CTL_MODULE << 2 | VP_REC_CONTROL);
	p += vp_uleb_put(p, id);
	p += vp_uleb_put(p, flags);
	p = put_bytes(p, m->path, path);
	p = put_bytes(p, m->build_id, m->build_id_len);
	return rec_end(w, p);
}

int vp_writer_symbol(struct vp_writer *w, uint32_t id, const struct vp_symbol *s)
{
	size_t name = str_len(s->name), display = str_len(s->display);
	uint8_t *p = rec_begin(w, 8 * VP_ULEB_MAX + name + display);

	if (!p)
		return w->err;
	p += vp_uleb_put(p, VP_CTL_SYMBOL << 2 | VP_REC_CONTROL);
	p += vp_uleb_put(p, id);
	p += vp_uleb_put(p, s->flags);
	p += vp_uleb_put(p, (uint64_t)(s->module + 1));
	p += vp_uleb_put(p, s->addr);
	p += vp_uleb_put(p, s->size);
	p = put_bytes(p, s->name, name);
	p = put_bytes(p, s->display, display);
	return rec_end(w, p);
}

int vp_writer_frame(struct vp_writer *w, uint32_t id, const struct vp_frame_def *f)
{
	size_t max = 6 * VP_ULEB_MAX;
	uint8_t *p;

	for (uint32_t i = 0; i < f->nlevels; i++)
		max += 3 * VP_ULEB_MAX + str_len(f->levels[i].file);
	p = rec_begin(w, max);
	if (!p)
		return w->err;
	p += vp_uleb_put(p, VP_CTL_FRAME << 2 | VP_REC_CONTROL);
	p += vp_uleb_put(p, id);
	p += vp_uleb_put(p, (uint64_t)(f->module + 1));
	p += vp_uleb_put(p, f->addr);
	p += vp_uleb_put(p, f->nlevels);
	for (uint32_t i = 0; i < f->nlevels; i++) {
		const struct vp_frame_level *l = &f->levels[i];

		p += vp_uleb_put(p, l->symbol);
		p += vp_uleb_put(p, l->line);
		p = put_bytes(p, l->file, str_len(l->file));
	}
	return rec_end(w, p);
}

int vp_writer_phase(struct vp_writer *w, uint32_t phase, uint32_t pid)
{
	uint8_t *p = rec_begin(w, 3 * VP_ULEB_MAX);

	if (!p)
		return w->err;
	p += vp_uleb_put(p, VP_CTL_PHASE << 2 | VP_REC_CONTROL);
	p += vp_uleb_put(p, phase);
	p += vp_uleb_put(p, pid);
	return rec_end(w, p);
}

int vp_writer_unprobed(struct vp_writer *w, uint32_t func, uint64_t time)
{
	uint8_t *p = rec_begin(w, 3 * VP_ULEB_MAX);

	if (!p)
		return w->err;
	p += vp_uleb_put(p, VP_CTL_UNPROBED << 2 | VP_REC_CONTROL);
	p += vp_uleb_put(p, func);
	p += vp_uleb_put(p, time);
	return rec_end(w, p);
}

int vp_writer_wait(struct vp_writer *w, uint32_t thread, uint64_t time, uint64_t ns,
		   uint32_t reason)
{
	uint8_t *p = rec_begin(w, 5 * VP_ULEB_MAX);

	if (!p)
		return w->err;
	p += vp_uleb_put(p, VP_CTL_WAIT << 2 | VP_REC_CONTROL);
	p += vp_uleb_put(p, thread);
	p += vp_uleb_put(p, time);
	p += vp_uleb_put(p, ns);
	p += vp_uleb_put(p, reason);
	return rec_end(w, p);
}

int vp_writer_process(struct vp_writer *w, const struct vp_process *pr)
{
	size_t len = pr->exec ? strlen(pr->exec) : 0;
	uint8_t *p = rec_begin(w, 5 * VP_ULEB_MAX + len);

	if (!p)
		return w->err;
	p += vp_uleb_put(p, VP_CTL_PROCESS << 2 | VP_REC_CONTROL);
	p += vp_uleb_put(p, pr->pid);
	p += vp_uleb_put(p, pr->ppid);
	p += vp_uleb_put(p, pr->flags);
	p += vp_uleb_put(p, len);
	memcpy(p, pr->exec ? pr->exec : "", len);
	p += len;
	return rec_end(w, p);
}

int vp_writer_sample(struct vp_writer *w, const struct vp_sample *s)
{
	uint8_t *p = rec_begin(w, (5 + 2 * (size_t)s->nframes) * VP_ULEB_MAX);
	uint64_t prev;

	if (!p)
		return w->err;
	if (s->thread >= w->nthreads)
		return w->err = -EINVAL; /* define the thread first */
	p += vp_uleb_put(p, (uint64_t)s->flags << 2 | VP_REC_SAMPLE);
	p += vp_uleb_put(p, s->thread);
	p += vp_uleb_put(p, writer_dtime(w, s->time));
	p += vp_uleb_put(p, s->period);
	p += vp_uleb_put(p, s->nframes);
	prev = w->cfa_gen[s->thread] == w->gen ? w->last_cfa[s->thread] : 0;
	for (uint32_t i = 0; i < s->nframes; i++) {
		p += vp_uleb_put(p, s->frames[i]);
		p += vp_uleb_put(p, vp_zigzag((int64_t)(s->cfas[i] - prev)));
		if (i == 0) {
			w->last_cfa[s->thread] = s->cfas[0];
			w->cfa_gen[s->thread] = w->gen;
		}
		prev = s->cfas[i];
	}
	w->samples++;
	w->truncated += !!(s->flags & VP_SAMPLE_TRUNCATED);
	w->broken += !!(s->flags & VP_SAMPLE_BROKEN);
	return rec_end(w, p);
}

static void writer_destroy(struct vp_writer *w)
{
	free(w->chunk.p);
	free(w->last_sp);
	free(w->sp_gen);
	free(w->last_off);
	free(w->last_cfa);
	free(w->cfa_gen);
	free(w);
}

void vp_writer_free(struct vp_writer *w)
{
	if (!w)
		return;
	close(w->fd);
	writer_destroy(w);
}

/* The END chunk of @tr into @end: its 16 header bytes left to fill, then
 * the payload.  0 or -ENOMEM. */
static int build_end(struct vp_buf *end, const struct vp_trailer *tr)
{
	int e;

	if (buf_reserve(end, VP_CHUNK_HEADER_SIZE))
		return -ENOMEM;
	end->len = VP_CHUNK_HEADER_SIZE;
	e = buf_uleb(end, tr->wait_status) || buf_uleb(end, tr->flags) ||
	    buf_uleb(end, tr->events) || buf_uleb(end, tr->lost) || buf_uleb(end, tr->foreign) ||
	    buf_uleb(end, tr->end_time) || buf_uleb(end, tr->samples) ||
	    buf_uleb(end, tr->truncated) || buf_uleb(end, tr->broken) ||
	    buf_uleb(end, tr->ncosts);
	for (uint32_t i = 0; !e && i < tr->ncosts && i < 4; i++)
		e = buf_uleb(end, tr->costs[i].insn_class) ||
		    buf_uleb(end, tr->costs[i].in_window_ns) || buf_uleb(end, tr->costs[i].full_ns);
	if (!e)
		e = buf_uleb(end, tr->probe_cost_ns) || buf_uleb(end, tr->target_cpu_ns) ||
		    buf_uleb(end, tr->budget_ppm) || buf_uleb(end, tr->unfollowed);
	return e ? -ENOMEM : 0;
}

int vp_writer_finish(struct vp_writer *w, struct vp_trailer *tr)
{
	struct vp_buf end = { 0 };
	int err, e2;

	err = vp_writer_flush(w);
	tr->events = w->events;
	tr->samples = w->samples;
	tr->truncated = w->truncated;
	tr->broken = w->broken;
	if (!tr->lost)
		tr->lost = w->lost;
	if (err)
		tr->flags |= VP_END_WRITE_ERROR;
	/* Try to write the END chunk even after an error: it may fit. */
	e2 = build_end(&end, tr);
	if (!e2)
		e2 = write_chunk(w, VP_CHUNK_END, end.p, end.len - VP_CHUNK_HEADER_SIZE);
	if (!err)
		err = e2;
	free(end.p);
	if (fsync(w->fd) < 0 && !err && errno != EINVAL)
		err = -errno;
	if (close(w->fd) < 0 && !err)
		err = -errno;
	writer_destroy(w);
	return err;
}

int vp_datafile_rewrite_end(const char *path, const struct vp_trailer *tr)
{
	struct vp_writer w = { .fd = -1 };
	struct vp_buf end = { 0 };
	uint8_t h[VP_CHUNK_HEADER_SIZE];
	off_t off = VP_FILE_HEADER_SIZE;
	ssize_t k;
	int err;

	w.fd = open(path, O_RDWR | O_CLOEXEC);
	if (w.fd < 0)
		return -errno;
	/* from chunk to chunk by their lengths (the reader checked them) */
	for (;;) {
		k = pread(w.fd, h, sizeof(h), off);
		if (k != (ssize_t)sizeof(h) || memcmp(h, VP_CHUNK_MAGIC, 4)) {
			err = k < 0 ? -errno : -EBADMSG; /* no END: not a whole file */
			goto out;
		}
		if (h[4] == VP_CHUNK_END)
			break;
		off += VP_CHUNK_HEADER_SIZE + (off_t)vp_get_le32(h + 8);
	}
	err = build_end(&end, tr);
	if (err)
		goto out;
	if (ftruncate(w.fd, off) < 0 || lseek(w.fd, off, SEEK_SET) != off) {
		err = -errno;
		goto out;
	}
	err = write_chunk(&w, VP_CHUNK_END, end.p, end.len - VP_CHUNK_HEADER_SIZE);
	if (!err && fsync(w.fd) < 0 && errno != EINVAL)
		err = -errno;
out:
	free(end.p);
	if (close(w.fd) < 0 && !err)
		err = -errno;
	return err;
}
