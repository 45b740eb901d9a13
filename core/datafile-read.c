/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * datafile-read.c - the reader of varperf.data (see datafile.h and
 * varperf-data(5)).  It trusts nothing: every length, index and number is
 * checked, and each failure names the file offset.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compensate.h"
#include "datafile.h"
#include "internal.h"
#include "varint.h"

/* ---- reader ---- */

/* Per thread: its off-CPU times and the time base (vp_reader_set_time). */
struct vp_tclock {
	uint64_t off_last; /* previous off-CPU time in the chunk (0 at its start) */
	uint64_t off_max;  /* the latest one in the file: they never decrease */
	uint64_t off0;	   /* off-CPU time at the thread's first event */
	uint64_t wall0;	   /* and that event's time */
	uint64_t last;	   /* last time presented: kept monotonic */
	int seen;
	/* version 5: its blocked time (WAIT records) and the split */
	uint64_t blk;	   /* WAIT records' ns so far */
	uint64_t blk_ev;   /* ... at its previous event */
	uint64_t off_ev;   /* off-CPU time at its previous event */
	uint64_t bp, pp;   /* blocked and preempted ns since its first event */
	int split_seen;
};

struct vp_reader {
	char *path;
	const uint8_t *map;
	size_t size;
	size_t pos;	     /* offset of the next chunk header */
	size_t first_events; /* offset of the chunk after META */
	size_t dropped;	     /* pages below this were given back */
	int done;
	/* the EVENTS chunk being decoded */
	const uint8_t *cp, *cend;
	uint64_t ctime;
	struct vp_header hdr;
	struct vp_trailer trailer;
	struct vp_thread_info *threads;
	uint64_t *last_sp;
	size_t nthreads, threads_cap;
	struct vp_callsite *callsites;
	size_t ncallsites, callsites_cap;
	uint64_t lost;
	/* version 2: definitions of sampled stacks, and the sample decoder */
	struct vp_module *modules; /* after the header's */
	uint32_t *module_flags;
	size_t nmodules, modules_cap;
	struct vp_symbol *symbols;
	size_t nsymbols, symbols_cap;
	struct vp_frame_def *frames;
	size_t nframes, frames_cap;
	uint64_t *last_cfa; /* per thread, like last_sp */
	uint32_t *sframes;  /* the sample being decoded */
	uint64_t *scfas;
	size_t scap;
	vp_sample_fn sample_fn;
	void *sample_ctx;
	uint64_t samples;
	uint32_t phase, phase_pid;
	uint32_t phase1_pid; /* of the PHASE 1 record, 0 before one */
	uint64_t *unprobed; /* per function, 0: probed throughout */
	/* version 4: processes, and the one whose events to return */
	struct vp_process *procs;
	size_t nprocs, procs_cap;
	uint32_t only_pid;
	/* probe-cost compensation (vp_reader_compensate), which every
	 * event passes through */
	struct vp_compensator comp;
	/* version 3: off-CPU times and the time base */
	struct vp_tclock *tclock; /* per thread */
	enum vp_time_base base;
	int want_waits; /* vp_reader_set_waits */
	int have_span;
	uint64_t span_first, span_last;
	char err[512];
	char warn[512];
};

static int rerr(struct vp_reader *r, size_t off, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int rerr(struct vp_reader *r, size_t off, int code, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(r->err, sizeof(r->err), "'%s': offset %zu: ", r->path, off);
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(r->err))
		vsnprintf(r->err + n, sizeof(r->err) - (size_t)n, fmt, ap);
	va_end(ap);
	return code;
}

/* Cursor over a bounded payload; any overrun is a format error. */
struct cur {
	const uint8_t *p, *end, *base;
	size_t base_off; /* file offset of base */
};

static size_t cur_off(const struct cur *c)
{
	return c->base_off + (size_t)(c->p - c->base);
}

static int get_u(struct vp_reader *r, struct cur *c, uint64_t *v, const char *what)
{
	if (vp_uleb_get(&c->p, c->end, v))
		return rerr(r, cur_off(c), -EBADMSG, "bad or truncated number (%s)", what);
	return 0;
}

static int get_u32(struct vp_reader *r, struct cur *c, uint32_t *v, const char *what)
{
	uint64_t x;
	int err = get_u(r, c, &x, what);

	if (err)
		return err;
	if (x > UINT32_MAX)
		return rerr(r, cur_off(c), -EBADMSG, "%s out of range: %llu", what,
			    (unsigned long long)x);
	*v = (uint32_t)x;
	return 0;
}

static int get_bytes(struct vp_reader *r, struct cur *c, char **ret, size_t *len,
		     const char *what)
{
	uint64_t n;
	char *s;
	int err = get_u(r, c, &n, what);

	if (err)
		return err;
	if (n > (uint64_t)(c->end - c->p))
		return rerr(r, cur_off(c), -EBADMSG, "%s of %llu bytes runs past its record", what,
			    (unsigned long long)n);
	s = malloc(n + 1);
	if (!s)
		return -ENOMEM;
	memcpy(s, c->p, n);
	s[n] = '\0';
	c->p += n;
	*ret = s;
	if (len)
		*len = n;
	return 0;
}

static int get_str(struct vp_reader *r, struct cur *c, char **ret, const char *what)
{
	return get_bytes(r, c, ret, NULL, what);
}

/* The header arrays keep no capacity: vp_grow() is given a copy of the
 * count as one, which makes every call reallocate; headers are small. */

static int parse_meta_value(struct vp_reader *r, uint64_t key, struct cur *c)
{
	struct vp_header *h = &r->hdr;
	uint64_t v;
	size_t i;
	int err = 0;

	switch (key) {
	case VP_META_UNIT:
		err = get_u(r, c, &v, "unit");
		if (!err && v != VP_UNIT_NS && v != VP_UNIT_CYCLES)
			return rerr(r, cur_off(c), -EBADMSG, "unknown time unit %llu",
				    (unsigned long long)v);
		h->unit = (uint32_t)v;
		break;
	case VP_META_CLOCK:
		err = get_u32(r, c, &h->clock, "clock");
		break;
	case VP_META_START:
		err = get_u(r, c, &h->start_time, "start time");
		break;
	case VP_META_PID:
		err = get_u32(r, c, &h->pid, "pid");
		break;
	case VP_META_NCPU:
		err = get_u32(r, c, &h->ncpu, "cpu count");
		break;
	case VP_META_HOST:
		free(h->host);
		h->host = NULL;
		err = get_str(r, c, &h->host, "host");
		break;
	case VP_META_CMDLINE:
		err = get_u(r, c, &v, "argument count");
		if (err)
			break;
		if (v > (uint64_t)(c->end - c->p) || h->argv)
			return rerr(r, cur_off(c), -EBADMSG, "bad command line record");
		h->argv = calloc(v + 1, sizeof(*h->argv));
		if (!h->argv)
			return -ENOMEM;
		for (i = 0; i < v && !err; i++) {
			err = get_str(r, c, &h->argv[i], "argument");
			if (!err)
				h->argc++;
		}
		break;
	case VP_META_MODULE: {
		struct vp_module *m;
		char *bid = NULL;

		if (vp_grow((void **)&h->modules, &(size_t){ h->nmodules }, h->nmodules + 1,
			 sizeof(*m)))
			return -ENOMEM;
		m = &h->modules[h->nmodules];
		memset(m, 0, sizeof(*m));
		err = get_str(r, c, &m->path, "module path");
		if (!err)
			err = get_bytes(r, c, &bid, &m->build_id_len, "build-id");
		m->build_id = (unsigned char *)bid;
		/* the file's size came later: absent from older files */
		if (!err && c->p < c->end)
			err = get_u(r, c, &m->size, "module size");
		h->nmodules++;
		break;
	}
	case VP_META_FUNCTION: {
		struct vp_func *f;
		uint64_t mod;

		if (vp_grow((void **)&h->funcs, &(size_t){ h->nfuncs }, h->nfuncs + 1, sizeof(*f)))
			return -ENOMEM;
		f = &h->funcs[h->nfuncs];
		memset(f, 0, sizeof(*f));
		h->nfuncs++;
		err = get_u(r, c, &mod, "module index");
		if (!err && mod >= h->nmodules)
			return rerr(r, cur_off(c), -EBADMSG,
				    "function refers to module %llu, but %zu are defined",
				    (unsigned long long)mod, h->nmodules);
		f->module = (uint32_t)mod;
		if (!err)
			err = get_u(r, c, &f->addr, "address");
		if (!err)
			err = get_u(r, c, &f->size, "size");
		if (!err)
			err = get_u(r, c, &f->probe_off, "probe offset");
		if (!err)
			err = get_u32(r, c, &f->flags, "flags");
		if (!err)
			err = get_u32(r, c, &f->insn_class, "instruction class");
		if (!err)
			err = get_str(r, c, &f->name, "function name");
		if (!err)
			err = get_str(r, c, &f->display, "display name");
		if (!err)
			err = get_str(r, c, &f->base, "base name");
		break;
	}
	case VP_META_PROBE_COST: {
		struct vp_probe_cost *pc;

		if (vp_grow((void **)&h->costs, &(size_t){ h->ncosts }, h->ncosts + 1, sizeof(*pc)))
			return -ENOMEM;
		pc = &h->costs[h->ncosts++];
		memset(pc, 0, sizeof(*pc));
		err = get_u32(r, c, &pc->insn_class, "probe class");
		if (!err)
			err = get_u(r, c, &pc->in_window_ns, "probe cost");
		if (!err)
			err = get_u(r, c, &pc->full_ns, "probe cost");
		/* (written since 0.4; an older file's value ends here) */
		if (!err && c->p < c->end)
			err = get_u(r, c, &pc->spread_ns, "probe cost spread");
		break;
	}
	case VP_META_MODE:
		err = get_u32(r, c, &h->mode, "recording mode");
		break;
	case VP_META_BACKEND:
		if (h->version < 3)
			break; /* not a key of theirs: skipped like any unknown one */
		err = get_u(r, c, &v, "probe backend");
		if (!err && v > VP_BACKEND_USER)
			return rerr(r, c->base_off, -EBADMSG, "unknown probe backend %llu",
				    (unsigned long long)v);
		h->backend = (uint32_t)v;
		break;
	case VP_META_OFFCPU:
		if (h->version < 3)
			break;
		err = get_u(r, c, &v, "off-CPU flag");
		/* it changes the layout of every event: anything odd is fatal */
		if (!err && v > 1)
			return rerr(r, c->base_off, -EBADMSG,
				    "bad OFFCPU value %llu (expected 0 or 1)", (unsigned long long)v);
		h->offcpu = (uint32_t)v;
		break;
	case VP_META_BLOCKED:
		if (h->version < 5)
			break;
		err = get_u(r, c, &v, "blocked flag");
		if (!err && v > 1)
			return rerr(r, c->base_off, -EBADMSG,
				    "bad BLOCKED value %llu (expected 0 or 1)", (unsigned long long)v);
		h->blocked = (uint32_t)v;
		break;
	case VP_META_INPUT_SIZE:
		err = get_u(r, c, &h->input_size, "input size");
		if (!err)
			h->has_input_size = 1;
		break;
	case VP_META_SAMPLING:
		err = get_u32(r, c, &h->sampling.event, "sampling event");
		if (!err)
			err = get_u(r, c, &h->sampling.period, "sampling period");
		if (!err)
			err = get_u(r, c, &h->sampling.freq, "sampling frequency");
		if (!err)
			err = get_u(r, c, &h->sampling.stack_size, "stack size");
		break;
	default:
		break; /* unknown keys are skipped: newer writers may add some */
	}
	return err;
}

static int parse_meta(struct vp_reader *r, const uint8_t *p, size_t len, size_t off)
{
	struct cur c = { p, p + len, p, off };
	int err;

	while (c.p < c.end) {
		uint64_t key, vlen;
		struct cur v;

		err = get_u(r, &c, &key, "META key");
		if (!err)
			err = get_u(r, &c, &vlen, "META value length");
		if (err)
			return err;
		if (vlen > (uint64_t)(c.end - c.p))
			return rerr(r, cur_off(&c), -EBADMSG,
				    "META value of %llu bytes runs past the chunk",
				    (unsigned long long)vlen);
		v = (struct cur){ c.p, c.p + vlen, c.p, cur_off(&c) };
		err = parse_meta_value(r, key, &v);
		if (err)
			return err;
		c.p += vlen;
	}
	if (!r->hdr.unit)
		return rerr(r, off, -EBADMSG, "META chunk has no time unit");
	/* blocked time is a part of the events' off-CPU time */
	if (r->hdr.blocked && !r->hdr.offcpu)
		return rerr(r, off, -EBADMSG, "META chunk has BLOCKED without OFFCPU");
	return 0;
}

/* Chunk framing: fills the type, payload and length, or says why not. */
enum { CHUNK_OK = 0, CHUNK_EOF = 1, CHUNK_TRUNCATED = 2 };

static int read_chunk(struct vp_reader *r, uint8_t *type, const uint8_t **payload, uint32_t *len)
{
	const uint8_t *h = r->map + r->pos;
	uint32_t crc;

	if (r->pos == r->size)
		return CHUNK_EOF;
	if (r->size - r->pos < VP_CHUNK_HEADER_SIZE) {
		snprintf(r->warn, sizeof(r->warn),
			 "'%s': offset %zu: file ends inside a chunk header (truncated); "
			 "read up to the last complete chunk",
			 r->path, r->pos);
		return CHUNK_TRUNCATED;
	}
	if (memcmp(h, VP_CHUNK_MAGIC, 4))
		return rerr(r, r->pos, -EBADMSG, "bad chunk magic (expected \"VPCK\")");
	*type = h[4];
	*len = vp_get_le32(h + 8);
	if (*type < VP_CHUNK_META || *type > VP_CHUNK_END || h[5] || h[6] || h[7])
		return rerr(r, r->pos + 4, -EBADMSG, "unknown chunk type %u", *type);
	if (*len > VP_CHUNK_MAX_PAYLOAD)
		return rerr(r, r->pos + 8, -EBADMSG, "chunk length %u exceeds the maximum %u",
			    *len, (unsigned)VP_CHUNK_MAX_PAYLOAD);
	if (*len > r->size - r->pos - VP_CHUNK_HEADER_SIZE) {
		snprintf(r->warn, sizeof(r->warn),
			 "'%s': offset %zu: chunk of %u bytes ends past the end of the file "
			 "(truncated); read up to the last complete chunk",
			 r->path, r->pos, *len);
		return CHUNK_TRUNCATED;
	}
	*payload = h + VP_CHUNK_HEADER_SIZE;
	crc = vp_crc32(*payload, *len);
	if (crc != vp_get_le32(h + 12))
		return rerr(r, r->pos + 12, -EBADMSG,
			    "chunk checksum mismatch (stored %08x, computed %08x)",
			    vp_get_le32(h + 12), crc);
	return CHUNK_OK;
}

static void tracked_costs(struct vp_reader *r);

int vp_reader_open(const char *path, struct vp_reader **ret, char *errbuf, size_t errlen)
{
	struct vp_reader *r = calloc(1, sizeof(*r));
	const uint8_t *payload;
	struct stat st;
	uint8_t type;
	uint32_t len, version;
	int fd = -1, err;

	*ret = NULL;
	if (!r || !(r->path = strdup(path))) {
		err = -ENOMEM;
		snprintf(r ? r->err : errbuf, r ? sizeof(r->err) : errlen, "out of memory");
		goto fail;
	}
	/* O_NONBLOCK: opening a FIFO for reading would wait for a writer,
	 * before the check below could refuse it (mmap ignores the flag) */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		err = -errno;
		snprintf(r->err, sizeof(r->err), "cannot open '%s': %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -EINVAL;
		snprintf(r->err, sizeof(r->err), "'%s' is not a regular file", path);
		goto fail;
	}
	r->size = (size_t)st.st_size;
	if (r->size == 0) {
		err = rerr(r, 0, -EBADMSG, "file is empty (expected a varperf data file)");
		goto fail;
	}
	r->map = mmap(NULL, r->size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (r->map == MAP_FAILED) {
		r->map = NULL;
		err = -errno;
		snprintf(r->err, sizeof(r->err), "cannot map '%s': %s", path, strerror(errno));
		goto fail;
	}
	madvise((void *)r->map, r->size, MADV_SEQUENTIAL);
	if (r->size < 8 || memcmp(r->map, VP_DATA_MAGIC, 8)) {
		err = rerr(r, 0, -EBADMSG, "not a varperf data file (bad magic)");
		goto fail;
	}
	if (r->size < VP_FILE_HEADER_SIZE) {
		err = rerr(r, r->size, -EBADMSG, "file ends inside the file header (truncated)");
		goto fail;
	}
	version = vp_get_le32(r->map + 8);
	if (version < VP_DATA_VERSION_MIN || version > VP_DATA_VERSION) {
		err = rerr(r, 8, -EPROTONOSUPPORT,
			   "unsupported format version %u (this varperf reads versions %u to %u)",
			   version, (unsigned)VP_DATA_VERSION_MIN, (unsigned)VP_DATA_VERSION);
		goto fail;
	}
	r->hdr.version = version;
	r->pos = VP_FILE_HEADER_SIZE;
	err = read_chunk(r, &type, &payload, &len);
	if (err == CHUNK_EOF || err == CHUNK_TRUNCATED) {
		err = rerr(r, r->pos, -EBADMSG,
			   "file ends before its META chunk is complete (truncated)");
		goto fail;
	}
	if (err)
		goto fail;
	if (type != VP_CHUNK_META) {
		err = rerr(r, r->pos + 4, -EBADMSG, "first chunk is not a META chunk");
		goto fail;
	}
	err = parse_meta(r, payload, len, r->pos + VP_CHUNK_HEADER_SIZE);
	if (err)
		goto fail;
	r->pos += VP_CHUNK_HEADER_SIZE + len;
	r->first_events = r->pos;
	if (r->hdr.ncosts)
		tracked_costs(r);
	close(fd);
	*ret = r;
	return 0;
fail:
	if (errbuf && errlen && r)
		snprintf(errbuf, errlen, "%s", r->err);
	if (fd >= 0)
		close(fd);
	vp_reader_free(r);
	return err < 0 ? err : -EBADMSG;
}

static size_t all_modules(const struct vp_reader *r)
{
	return r->hdr.nmodules + r->nmodules;
}

static void frame_def_release(struct vp_frame_def *f)
{
	for (uint32_t i = 0; i < f->nlevels; i++)
		free(f->levels[i].file);
	free(f->levels);
}

const char *vp_callsite_label(const struct vp_callsite *cs, int short_file, char *buf,
			      size_t len)
{
	const char *file, *slash;

	buf[0] = '\0';
	if (!cs || (cs->flags & VP_CS_NONE))
		return buf;
	if (cs->flags & VP_CS_TRAMPOLINE) {
		snprintf(buf, len, "(tail call)");
	} else if (cs->file && *cs->file && cs->line) {
		file = cs->file;
		slash = strrchr(file, '/');
		if (short_file && slash && slash[1])
			file = slash + 1;
		snprintf(buf, len, "%s:%" PRIu32, file, cs->line);
	} else if (cs->caller && *cs->caller) {
		snprintf(buf, len, "%s", cs->caller);
	} else {
		snprintf(buf, len, "0x%" PRIx64, cs->offset);
	}
	return buf;
}

void vp_header_count_probes(const struct vp_header *hdr, size_t *emulated, size_t *moved)
{
	*emulated = *moved = 0;
	for (size_t i = 0; i < hdr->nfuncs; i++) {
		if (hdr->funcs[i].insn_class == VP_INSN_EMULATED)
			(*emulated)++;
		if (hdr->funcs[i].flags & VP_FUNC_MOVED)
			(*moved)++;
	}
}

void vp_header_release(struct vp_header *h)
{
	size_t i;

	for (i = 0; i < (size_t)h->argc; i++)
		free(h->argv[i]);
	free(h->argv);
	for (i = 0; i < h->nmodules; i++) {
		free(h->modules[i].path);
		free(h->modules[i].build_id);
	}
	free(h->modules);
	for (i = 0; i < h->nfuncs; i++) {
		free(h->funcs[i].name);
		free(h->funcs[i].display);
		free(h->funcs[i].base);
	}
	free(h->funcs);
	free(h->costs);
	free(h->host);
	memset(h, 0, sizeof(*h));
}

static void clear_defs(struct vp_reader *r)
{
	size_t i;

	for (i = 0; i < r->ncallsites; i++) {
		free(r->callsites[i].caller);
		free(r->callsites[i].file);
	}
	r->ncallsites = 0;
	r->nthreads = 0;
	r->lost = 0;
	for (i = 0; i < r->nmodules; i++) {
		free(r->modules[i].path);
		free(r->modules[i].build_id);
	}
	r->nmodules = 0;
	for (i = 0; i < r->nsymbols; i++) {
		free(r->symbols[i].name);
		free(r->symbols[i].display);
	}
	r->nsymbols = 0;
	for (i = 0; i < r->nframes; i++)
		frame_def_release(&r->frames[i]);
	r->nframes = 0;
	r->samples = 0;
	r->phase = r->phase_pid = 0;
	for (i = 0; i < r->nprocs; i++)
		free(r->procs[i].exec);
	r->nprocs = 0;
}

void vp_reader_free(struct vp_reader *r)
{
	if (!r)
		return;
	clear_defs(r);
	free(r->callsites);
	free(r->threads);
	free(r->last_sp);
	free(r->modules);
	free(r->module_flags);
	free(r->symbols);
	free(r->frames);
	free(r->last_cfa);
	free(r->sframes);
	free(r->scfas);
	vp_compensator_release(&r->comp);
	free(r->unprobed);
	free(r->procs);
	free(r->tclock);
	vp_header_release(&r->hdr);
	if (r->map)
		munmap((void *)r->map, r->size);
	free(r->path);
	free(r);
}

const struct vp_header *vp_reader_header(const struct vp_reader *r)
{
	return &r->hdr;
}

const char *vp_reader_error(const struct vp_reader *r)
{
	return r->err;
}

const char *vp_reader_warning(const struct vp_reader *r)
{
	return r->warn[0] ? r->warn : NULL;
}

const struct vp_trailer *vp_reader_trailer(const struct vp_reader *r)
{
	return &r->trailer;
}

size_t vp_reader_nthreads(const struct vp_reader *r)
{
	return r->nthreads;
}

const struct vp_thread_info *vp_reader_thread(const struct vp_reader *r, uint32_t idx)
{
	return idx < r->nthreads ? &r->threads[idx] : NULL;
}

size_t vp_reader_nprocesses(const struct vp_reader *r)
{
	return r->nprocs;
}

const struct vp_process *vp_reader_process(const struct vp_reader *r, size_t i)
{
	return i < r->nprocs ? &r->procs[i] : NULL;
}

void vp_reader_set_pid(struct vp_reader *r, uint32_t pid)
{
	r->only_pid = pid;
}

/* Whether thread @idx's events and samples are to be returned. */
static int thread_wanted(const struct vp_reader *r, uint64_t idx)
{
	return !r->only_pid || r->threads[idx].pid == r->only_pid;
}

size_t vp_reader_ncallsites(const struct vp_reader *r)
{
	return r->ncallsites;
}

const struct vp_callsite *vp_reader_callsite(const struct vp_reader *r, uint32_t id)
{
	return id < r->ncallsites ? &r->callsites[id] : NULL;
}

uint64_t vp_reader_lost(const struct vp_reader *r)
{
	return r->lost;
}

uint64_t vp_reader_clamped(const struct vp_reader *r)
{
	return r->comp.clamped;
}

uint64_t vp_reader_clamped_max(const struct vp_reader *r)
{
	return r->comp.clamped_max;
}

void vp_reader_set_sample_handler(struct vp_reader *r, vp_sample_fn fn, void *ctx)
{
	r->sample_fn = fn;
	r->sample_ctx = ctx;
}

size_t vp_reader_nmodules(const struct vp_reader *r)
{
	return all_modules(r);
}

const struct vp_module *vp_reader_module(const struct vp_reader *r, uint32_t id)
{
	if (id < r->hdr.nmodules)
		return &r->hdr.modules[id];
	id -= (uint32_t)r->hdr.nmodules;
	return id < r->nmodules ? &r->modules[id] : NULL;
}

uint32_t vp_reader_module_flags(const struct vp_reader *r, uint32_t id)
{
	if (id < r->hdr.nmodules)
		return 0;
	id -= (uint32_t)r->hdr.nmodules;
	return id < r->nmodules ? r->module_flags[id] : 0;
}

size_t vp_reader_nsymbols(const struct vp_reader *r)
{
	return r->nsymbols;
}

const struct vp_symbol *vp_reader_symbol(const struct vp_reader *r, uint32_t id)
{
	return id < r->nsymbols ? &r->symbols[id] : NULL;
}

size_t vp_reader_nframes(const struct vp_reader *r)
{
	return r->nframes;
}

const struct vp_frame_def *vp_reader_frame(const struct vp_reader *r, uint32_t id)
{
	return id < r->nframes ? &r->frames[id] : NULL;
}

uint64_t vp_reader_samples(const struct vp_reader *r)
{
	return r->samples;
}

uint64_t vp_reader_unprobed(const struct vp_reader *r, uint32_t func)
{
	return r->unprobed && func < r->hdr.nfuncs ? r->unprobed[func] : 0;
}

uint32_t vp_reader_phase(const struct vp_reader *r, uint32_t *pid)
{
	if (pid)
		*pid = r->phase_pid;
	return r->phase;
}

uint32_t vp_reader_phase1_pid(const struct vp_reader *r)
{
	return r->phase1_pid;
}

int vp_reader_compensate(struct vp_reader *r, int on)
{
	return vp_compensator_set(&r->comp, &r->hdr, on);
}

int vp_reader_set_time(struct vp_reader *r, enum vp_time_base base)
{
	if ((unsigned)base > VP_TIME_OWN)
		return -EINVAL;
	if (base != VP_TIME_WALL && !r->hdr.offcpu)
		return -ENODATA;
	if (base >= VP_TIME_BLOCKED && !r->hdr.blocked)
		return -ENODATA;
	r->base = base;
	return 0;
}

void vp_reader_set_waits(struct vp_reader *r, int on)
{
	r->want_waits = !!on;
}

enum vp_time_base vp_reader_time(const struct vp_reader *r)
{
	return r->base;
}

void vp_reader_time_span(const struct vp_reader *r, uint64_t *first, uint64_t *last)
{
	*first = r->have_span ? r->span_first : 0;
	*last = r->have_span ? r->span_last : 0;
}

int vp_reader_rewind(struct vp_reader *r)
{
	clear_defs(r);
	r->have_span = 0;
	r->pos = r->first_events;
	r->dropped = 0;
	r->comp.clamped = 0;
	r->comp.clamped_max = 0;
	r->cp = r->cend = NULL;
	r->done = 0;
	r->warn[0] = '\0';
	/* def_thread() zeroes the compensation state of each thread again */
	memset(&r->trailer, 0, sizeof(r->trailer));
	return 0;
}

static int parse_end_into(struct vp_reader *r, const uint8_t *p, uint32_t len, size_t off,
			  struct vp_trailer *t)
{
	struct cur c = { p, p + len, p, off };
	uint64_t flags;
	int err;

	err = get_u(r, &c, &t->wait_status, "wait status");
	if (!err)
		err = get_u(r, &c, &flags, "END flags");
	if (!err)
		err = get_u(r, &c, &t->events, "event count");
	if (!err)
		err = get_u(r, &c, &t->lost, "lost count");
	if (!err)
		err = get_u(r, &c, &t->foreign, "foreign count");
	if (!err)
		err = get_u(r, &c, &t->end_time, "end time");
	/* version 2: sample counts */
	if (!err && c.p < c.end)
		err = get_u(r, &c, &t->samples, "sample count");
	if (!err && c.p < c.end)
		err = get_u(r, &c, &t->truncated, "truncated sample count");
	if (!err && c.p < c.end)
		err = get_u(r, &c, &t->broken, "broken sample count");
	if (!err && c.p < c.end)
		err = get_u32(r, &c, &t->ncosts, "probe cost count");
	for (uint32_t i = 0; !err && i < t->ncosts; i++) {
		struct vp_probe_cost pc = { 0 };

		err = get_u32(r, &c, &pc.insn_class, "probe class");
		if (!err)
			err = get_u(r, &c, &pc.in_window_ns, "probe cost");
		if (!err)
			err = get_u(r, &c, &pc.full_ns, "probe cost");
		if (!err && i < 4)
			t->costs[i] = pc;
	}
	if (t->ncosts > 4)
		t->ncosts = 4;
	/* version 3: auto mode's accounting */
	if (!err && c.p < c.end)
		err = get_u(r, &c, &t->probe_cost_ns, "probe cost total");
	if (!err && c.p < c.end)
		err = get_u(r, &c, &t->target_cpu_ns, "target CPU time");
	if (!err && c.p < c.end)
		err = get_u32(r, &c, &t->budget_ppm, "overhead budget");
	/* version 4: children not followed */
	if (!err && c.p < c.end)
		err = get_u(r, &c, &t->unfollowed, "unfollowed child count");
	if (err)
		return err;
	t->flags = (uint32_t)flags;
	t->present = 1;
	return 0;
}

static int parse_end(struct vp_reader *r, const uint8_t *p, uint32_t len, size_t off)
{
	return parse_end_into(r, p, len, off, &r->trailer);
}

/*
 * The probe costs tracked while recording sit in the END chunk, after all
 * the events they are needed for: find it by the chunk lengths (a damaged
 * or cut file simply has none) and put them into the header.
 */
static void tracked_costs(struct vp_reader *r)
{
	struct vp_trailer t;
	size_t pos = r->first_events;
	char err[sizeof(r->err)];

	memcpy(err, r->err, sizeof(err));
	while (pos + VP_CHUNK_HEADER_SIZE <= r->size) {
		const uint8_t *h = r->map + pos;
		uint32_t len = vp_get_le32(h + 8);

		if (memcmp(h, VP_CHUNK_MAGIC, 4) || len > r->size - pos - VP_CHUNK_HEADER_SIZE)
			break;
		if (h[4] == VP_CHUNK_END) {
			memset(&t, 0, sizeof(t));
			if (parse_end_into(r, h + VP_CHUNK_HEADER_SIZE, len, pos, &t) == 0) {
				for (uint32_t i = 0; i < t.ncosts; i++)
					for (size_t k = 0; k < r->hdr.ncosts; k++)
						if (r->hdr.costs[k].insn_class ==
						    t.costs[i].insn_class) {
							/* the calibration's spread stays */
							uint64_t sp = r->hdr.costs[k].spread_ns;

							r->hdr.costs[k] = t.costs[i];
							r->hdr.costs[k].spread_ns = sp;
						}
			}
			break;
		}
		pos += VP_CHUNK_HEADER_SIZE + len;
	}
	memcpy(r->err, err, sizeof(err)); /* a problem here is reported later */
}

static int grow_u64(uint64_t **p, size_t n)
{
	uint64_t *q = realloc(*p, n * sizeof(**p));

	if (!q)
		return -ENOMEM;
	*p = q;
	return 0;
}

static int def_thread(struct vp_reader *r, struct cur *c)
{
	size_t at = cur_off(c);
	uint32_t idx, tid, pid;
	int err;

	err = get_u32(r, c, &idx, "thread index");
	if (!err)
		err = get_u32(r, c, &tid, "tid");
	if (!err)
		err = get_u32(r, c, &pid, "pid");
	if (err)
		return err;
	if (idx != r->nthreads)
		return rerr(r, at, -EBADMSG, "thread %u defined out of order (expected %zu)", idx,
			    r->nthreads);
	if (r->nthreads == r->threads_cap) {
		size_t cap = r->threads_cap ? r->threads_cap * 2 : 16;
		void *a = realloc(r->threads, cap * sizeof(*r->threads));
		void *b;

		if (a)
			r->threads = a;
		b = realloc(r->last_sp, cap * sizeof(*r->last_sp));
		if (b)
			r->last_sp = b;
		if (!a || !b)
			return -ENOMEM;
		if (grow_u64(&r->last_cfa, cap) || vp_compensator_threads(&r->comp, cap))
			return -ENOMEM;
		a = realloc(r->tclock, cap * sizeof(*r->tclock));
		if (!a)
			return -ENOMEM;
		r->tclock = a;
		r->threads_cap = cap;
	}
	r->threads[idx].tid = tid;
	r->threads[idx].pid = pid;
	r->last_sp[idx] = 0;
	r->last_cfa[idx] = 0;
	vp_compensator_thread_start(&r->comp, idx);
	memset(&r->tclock[idx], 0, sizeof(r->tclock[idx]));
	r->nthreads++;
	return 0;
}

static int def_callsite(struct vp_reader *r, struct cur *c)
{
	size_t at = cur_off(c);
	struct vp_callsite cs = { 0 };
	uint32_t id;
	uint64_t mod;
	int err;

	err = get_u32(r, c, &id, "call-site id");
	if (!err && id != r->ncallsites)
		return rerr(r, at, -EBADMSG, "call site %u defined out of order (expected %zu)",
			    id, r->ncallsites);
	if (!err)
		err = get_u32(r, c, &cs.flags, "call-site flags");
	if (!err)
		err = get_u(r, c, &mod, "call-site module");
	if (!err && mod > r->hdr.nmodules)
		return rerr(r, at, -EBADMSG, "call site refers to module %llu, but %zu are defined",
			    (unsigned long long)mod - 1, r->hdr.nmodules);
	cs.module = (int32_t)mod - 1;
	if (!err)
		err = get_u(r, c, &cs.offset, "call-site address");
	if (!err)
		err = get_str(r, c, &cs.caller, "caller");
	if (!err)
		err = get_str(r, c, &cs.file, "file name");
	if (!err)
		err = get_u32(r, c, &cs.line, "line");
	if (!err &&
	    vp_grow((void **)&r->callsites, &r->callsites_cap, r->ncallsites + 1, sizeof(cs)))
		err = -ENOMEM;
	if (err) {
		free(cs.caller);
		free(cs.file);
		return err;
	}
	r->callsites[r->ncallsites++] = cs;
	return 0;
}

/* A "u module+1" field: -1 for none, else an index among all modules. */
static int get_module_ref(struct vp_reader *r, struct cur *c, int32_t *ret)
{
	size_t at = cur_off(c);
	uint64_t mod;
	int err = get_u(r, c, &mod, "module");

	if (err)
		return err;
	if (mod > all_modules(r))
		return rerr(r, at, -EBADMSG, "reference to module %llu, but %zu are defined",
			    (unsigned long long)mod - 1, all_modules(r));
	*ret = (int32_t)mod - 1;
	return 0;
}

static int def_module(struct vp_reader *r, struct cur *c)
{
	size_t at = cur_off(c);
	struct vp_module m = { 0 };
	uint32_t id, flags = 0;
	int err;

	err = get_u32(r, c, &id, "module id");
	if (!err && id != all_modules(r))
		return rerr(r, at, -EBADMSG, "module %u defined out of order (expected %zu)", id,
			    all_modules(r));
	if (!err)
		err = get_u32(r, c, &flags, "module flags");
	if (!err)
		err = get_str(r, c, &m.path, "module path");
	if (!err)
		err = get_bytes(r, c, (char **)&m.build_id, &m.build_id_len, "build-id");
	if (!err && r->nmodules == r->modules_cap) {
		size_t cap = r->modules_cap;
		uint32_t *fl;

		if (vp_grow((void **)&r->modules, &cap, r->nmodules + 1, sizeof(m)))
			err = -ENOMEM;
		fl = err ? NULL : realloc(r->module_flags, cap * sizeof(*fl));
		if (fl) {
			r->module_flags = fl;
			r->modules_cap = cap;
		} else {
			err = -ENOMEM;
		}
	}
	if (err) {
		free(m.path);
		free(m.build_id);
		return err;
	}
	r->module_flags[r->nmodules] = flags;
	r->modules[r->nmodules++] = m;
	return 0;
}

static int def_symbol(struct vp_reader *r, struct cur *c)
{
	size_t at = cur_off(c);
	struct vp_symbol sym = { 0 };
	uint32_t id;
	int err;

	err = get_u32(r, c, &id, "symbol id");
	if (!err && id != r->nsymbols)
		return rerr(r, at, -EBADMSG, "symbol %u defined out of order (expected %zu)", id,
			    r->nsymbols);
	if (!err)
		err = get_u32(r, c, &sym.flags, "symbol flags");
	if (!err)
		err = get_module_ref(r, c, &sym.module);
	if (!err)
		err = get_u(r, c, &sym.addr, "symbol address");
	if (!err)
		err = get_u(r, c, &sym.size, "symbol size");
	if (!err)
		err = get_str(r, c, &sym.name, "symbol name");
	if (!err)
		err = get_str(r, c, &sym.display, "symbol display name");
	if (!err && vp_grow((void **)&r->symbols, &r->symbols_cap, r->nsymbols + 1, sizeof(sym)))
		err = -ENOMEM;
	if (err) {
		free(sym.name);
		free(sym.display);
		return err;
	}
	r->symbols[r->nsymbols++] = sym;
	return 0;
}

static int def_frame(struct vp_reader *r, struct cur *c)
{
	size_t at = cur_off(c);
	struct vp_frame_def f = { 0 };
	uint32_t id, n;
	int err;

	err = get_u32(r, c, &id, "frame id");
	if (!err && id != r->nframes)
		return rerr(r, at, -EBADMSG, "frame %u defined out of order (expected %zu)", id,
			    r->nframes);
	if (!err)
		err = get_module_ref(r, c, &f.module);
	if (!err)
		err = get_u(r, c, &f.addr, "frame address");
	if (!err)
		err = get_u32(r, c, &n, "frame level count");
	if (err)
		return err;
	/* each level takes at least 3 bytes: a bound before allocating */
	if (n == 0 || n > (uint64_t)(c->end - c->p) / 3)
		return rerr(r, at, -EBADMSG, "frame %u has a bad level count %u", id, n);
	f.levels = calloc(n, sizeof(*f.levels));
	if (!f.levels)
		return -ENOMEM;
	for (; f.nlevels < n && !err; f.nlevels++) {
		struct vp_frame_level *l = &f.levels[f.nlevels];
		size_t lat = cur_off(c);

		err = get_u32(r, c, &l->symbol, "frame symbol");
		if (!err && l->symbol >= r->nsymbols)
			err = rerr(r, lat, -EBADMSG, "frame uses undefined symbol %u", l->symbol);
		if (!err)
			err = get_u32(r, c, &l->line, "frame line");
		if (!err)
			err = get_str(r, c, &l->file, "frame file");
	}
	if (!err && vp_grow((void **)&r->frames, &r->frames_cap, r->nframes + 1, sizeof(f)))
		err = -ENOMEM;
	if (err) {
		frame_def_release(&f);
		return err;
	}
	r->frames[r->nframes++] = f;
	return 0;
}

static int ctl_phase(struct vp_reader *r, struct cur *c)
{
	int err = get_u32(r, c, &r->phase, "phase");

	if (!err)
		err = get_u32(r, c, &r->phase_pid, "phase pid");
	if (!err && r->phase == 1)
		r->phase1_pid = r->phase_pid;
	return err;
}

static int ctl_lost(struct vp_reader *r, struct cur *c)
{
	uint64_t cpu, count;
	int err = get_u(r, c, &cpu, "cpu");

	if (!err)
		err = get_u(r, c, &count, "lost count");
	if (!err)
		r->lost += count;
	return err;
}

static int ctl_unprobed(struct vp_reader *r, struct cur *c)
{
	size_t at = cur_off(c);
	uint32_t func;
	uint64_t time;
	int err = get_u32(r, c, &func, "function");

	if (!err)
		err = get_u(r, c, &time, "time");
	if (err)
		return err;
	if (func >= r->hdr.nfuncs)
		return rerr(r, at, -EBADMSG, "UNPROBED names function %u, but the header "
			    "defines %zu", func, r->hdr.nfuncs);
	if (!r->unprobed && !(r->unprobed = calloc(r->hdr.nfuncs, sizeof(*r->unprobed))))
		return -ENOMEM;
	r->unprobed[func] = time ? time : 1;
	return 0;
}

static int ctl_process(struct vp_reader *r, struct cur *c)
{
	struct vp_process p = { 0 };
	size_t i;
	int err = get_u32(r, c, &p.pid, "process id");

	if (!err)
		err = get_u32(r, c, &p.ppid, "parent process id");
	if (!err)
		err = get_u32(r, c, &p.flags, "process flags");
	if (!err)
		err = get_str(r, c, &p.exec, "exec'd program");
	if (err)
		return err;
	for (i = 0; i < r->nprocs && r->procs[i].pid != p.pid; i++)
		;
	if (i == r->nprocs) {
		if (vp_grow((void **)&r->procs, &r->procs_cap, r->nprocs + 1, sizeof(p))) {
			free(p.exec);
			return -ENOMEM;
		}
		r->nprocs++;
	} else {
		free(r->procs[i].exec);
	}
	r->procs[i] = p;
	return 0;
}

static int control(struct vp_reader *r, struct cur *c, uint64_t type, size_t at)
{
	/* newer types are errors in an older file, as they were */
	int newer = (type >= VP_CTL_MODULE && r->hdr.version < 2) ||
		    (type >= VP_CTL_PROCESS && r->hdr.version < 4);

	switch (newer ? 0 : type) {
	case VP_CTL_THREAD:
		return def_thread(r, c);
	case VP_CTL_CALLSITE:
		return def_callsite(r, c);
	case VP_CTL_LOST:
		return ctl_lost(r, c);
	case VP_CTL_MODULE:
		return def_module(r, c);
	case VP_CTL_SYMBOL:
		return def_symbol(r, c);
	case VP_CTL_FRAME:
		return def_frame(r, c);
	case VP_CTL_PHASE:
		return ctl_phase(r, c);
	case VP_CTL_UNPROBED:
		return ctl_unprobed(r, c);
	case VP_CTL_PROCESS:
		return ctl_process(r, c);
	default:
		return rerr(r, at, -EBADMSG, "unknown control record type %llu",
			    (unsigned long long)type);
	}
}

/* A sample record after its tag; hands it to the handler, if any. */
static int decode_sample(struct vp_reader *r, struct cur *c, uint64_t tag, size_t at)
{
	struct vp_sample smp;
	uint64_t thread, dt, prev;
	int err;

	memset(&smp, 0, sizeof(smp));
	smp.flags = (uint32_t)(tag >> 2);
	err = get_u(r, c, &thread, "sample thread");
	if (!err)
		err = get_u(r, c, &dt, "sample time");
	if (!err)
		err = get_u(r, c, &smp.period, "sample period");
	if (!err)
		err = get_u32(r, c, &smp.nframes, "sample frame count");
	if (err)
		return err;
	if (thread >= r->nthreads)
		return rerr(r, at, -EBADMSG, "sample of undefined thread %llu",
			    (unsigned long long)thread);
	if (smp.nframes > (uint64_t)(c->end - c->p) / 2)
		return rerr(r, at, -EBADMSG, "sample with %u frames runs past its chunk",
			    smp.nframes);
	if (smp.nframes > r->scap) {
		size_t cap = r->scap ? r->scap : 64;

		while (cap < smp.nframes)
			cap *= 2;
		if (grow_u64(&r->scfas, cap))
			return -ENOMEM;
		free(r->sframes);
		r->sframes = malloc(cap * sizeof(*r->sframes));
		if (!r->sframes) {
			r->scap = 0;
			return -ENOMEM;
		}
		r->scap = cap;
	}
	r->ctime += (uint64_t)vp_unzigzag(dt);
	prev = r->last_cfa[thread];
	for (uint32_t i = 0; i < smp.nframes; i++) {
		uint64_t id, d;

		err = get_u(r, c, &id, "sample frame");
		if (!err)
			err = get_u(r, c, &d, "sample CFA");
		if (err)
			return err;
		if (id >= r->nframes)
			return rerr(r, at, -EBADMSG, "sample uses undefined frame %llu",
				    (unsigned long long)id);
		r->sframes[i] = (uint32_t)id;
		prev += (uint64_t)vp_unzigzag(d);
		r->scfas[i] = prev;
		if (i == 0)
			r->last_cfa[thread] = prev;
	}
	r->samples++;
	if (!r->sample_fn || !thread_wanted(r, thread))
		return 0;
	smp.time = r->ctime;
	smp.thread = (uint32_t)thread;
	smp.phase = r->phase;
	smp.frames = r->sframes;
	smp.cfas = r->scfas;
	return r->sample_fn(r->sample_ctx, r, &smp);
}

/*
 * The off-CPU time of an event of @thread, from its delta @d: it must
 * stay a time (not below 0) and never decrease within the thread.
 */
static int decode_offcpu(struct vp_reader *r, uint64_t thread, uint64_t d, size_t at,
			 uint64_t *ret)
{
	struct vp_tclock *tc = &r->tclock[thread];
	int64_t delta = vp_unzigzag(d);
	uint64_t off = tc->off_last + (uint64_t)delta;

	if (delta < 0 && (uint64_t)0 - (uint64_t)delta > tc->off_last)
		return rerr(r, at, -EBADMSG, "off-CPU time of thread %llu goes below 0",
			    (unsigned long long)thread);
	if (off < tc->off_max)
		return rerr(r, at, -EBADMSG,
			    "off-CPU time of thread %llu goes back by %llu ns (it never decreases)",
			    (unsigned long long)thread, (unsigned long long)(tc->off_max - off));
	tc->off_last = tc->off_max = off;
	*ret = off;
	return 0;
}

/*
 * The blocked part of @ev's thread's off-CPU time since its first event:
 * between two events, what WAIT records said, but never more than the
 * off-CPU time grew (a sleep's record and the events' off-CPU times come
 * from one clock; a CPU's clock read on another may differ a little).
 * The rest is preempted time.
 */
static void split_offcpu(struct vp_reader *r, struct vp_event *ev)
{
	struct vp_tclock *tc = &r->tclock[ev->thread];
	uint64_t d_off, d_blk;

	if (!tc->split_seen) {
		tc->split_seen = 1;
		tc->off_ev = ev->offcpu;
		tc->blk_ev = tc->blk;
	}
	d_off = ev->offcpu - tc->off_ev; /* never negative: decode_offcpu() */
	d_blk = tc->blk - tc->blk_ev;
	if (d_blk > d_off)
		d_blk = d_off;
	tc->bp += d_blk;
	tc->pp += d_off - d_blk;
	tc->off_ev = ev->offcpu;
	tc->blk_ev = tc->blk;
	ev->blocked = tc->bp;
}

/*
 * Move @ev's (compensated) time into the reader's time base: the thread's
 * clock from its first event on, advanced by its on-CPU time only (the
 * off-CPU time since then subtracted), by its off-CPU time only, by one
 * part of it only, or by all but its preempted part.
 */
static void to_time_base(struct vp_reader *r, struct vp_event *ev)
{
	struct vp_tclock *tc = &r->tclock[ev->thread];
	uint64_t d, t;

	if (!tc->seen) {
		tc->seen = 1;
		tc->off0 = ev->offcpu;
		tc->wall0 = ev->time;
	}
	d = ev->offcpu - tc->off0; /* never negative: decode_offcpu() */
	if (r->base == VP_TIME_OFFCPU || r->base == VP_TIME_BLOCKED ||
	    r->base == VP_TIME_PREEMPTED) {
		t = tc->wall0 + (r->base == VP_TIME_BLOCKED     ? tc->bp
				 : r->base == VP_TIME_PREEMPTED ? tc->pp
								: d);
	} else {
		if (r->base == VP_TIME_OWN)
			d = tc->pp;
		t = ev->time > d ? ev->time - d : 0;
		/* compensation can take more than the on-CPU time had */
		if (t < tc->last)
			t = tc->last;
	}
	tc->last = t;
	ev->time = t;
}

/*
 * A WAIT record (version 5) after its tag: the thread's blocked time
 * grows; with vp_reader_set_waits() it goes into *@ev too.  Returns the
 * events it gave (0 or 1) or a negative errno.
 */
static int decode_wait(struct vp_reader *r, struct cur *c, size_t at, struct vp_event *ev)
{
	uint64_t thread, time, ns, reason;
	struct vp_tclock *tc;
	int err = get_u(r, c, &thread, "wait thread");

	if (!err)
		err = get_u(r, c, &time, "wait time");
	if (!err)
		err = get_u(r, c, &ns, "wait length");
	if (!err)
		err = get_u(r, c, &reason, "wait reason");
	if (err)
		return err;
	if (thread >= r->nthreads)
		return rerr(r, at, -EBADMSG, "WAIT of undefined thread %llu",
			    (unsigned long long)thread);
	if (reason > UINT32_MAX)
		return rerr(r, at, -EBADMSG, "WAIT with reason %llu (expected a syscall + 1)",
			    (unsigned long long)reason);
	tc = &r->tclock[thread];
	tc->blk += ns;
	if (!r->want_waits || !thread_wanted(r, thread))
		return 0;
	memset(ev, 0, sizeof(*ev));
	ev->kind = VP_EV_WAIT;
	ev->thread = (uint32_t)thread;
	ev->func = (uint32_t)reason;
	ev->wait = ns;
	ev->callsite = UINT32_MAX;
	ev->time = r->base == VP_TIME_WALL ? r->ctime : tc->last;
	return 1;
}

/* Decode records of the current chunk into @buf; returns events decoded. */
static long decode(struct vp_reader *r, struct vp_event *buf, size_t cap)
{
	struct cur c = { r->cp, r->cend, r->cp, 0 };
	const size_t base_off = (size_t)(r->cp - r->map);
	size_t n = 0;
	int err;

	c.base_off = base_off;
	while (n < cap && c.p < c.end) {
		const uint8_t *rec = c.p;
		uint64_t tag, thread, dt, dsp, cs;
		struct vp_event *ev;
		uint64_t prev;

		if (vp_uleb_get(&c.p, c.end, &tag))
			goto bad_number;
		if ((tag & 3) == VP_REC_CONTROL && (tag >> 2) == VP_CTL_WAIT &&
		    r->hdr.version >= 5) {
			err = decode_wait(r, &c, base_off + (size_t)(rec - c.base), &buf[n]);
			if (err < 0)
				return err;
			n += (size_t)err;
			continue;
		}
		if ((tag & 3) == VP_REC_CONTROL) {
			err = control(r, &c, tag >> 2, base_off + (size_t)(rec - c.base));
			if (err)
				return err;
			continue;
		}
		if ((tag & 3) == VP_REC_SAMPLE && r->hdr.version >= 2) {
			err = decode_sample(r, &c, tag, base_off + (size_t)(rec - c.base));
			if (err)
				return err;
			continue;
		}
		if ((tag & 3) > VP_REC_EXIT)
			return rerr(r, base_off + (size_t)(rec - c.base), -EBADMSG,
				    "unknown record kind %u", (unsigned)(tag & 3));
		if ((tag >> 2) >= r->hdr.nfuncs)
			return rerr(r, base_off + (size_t)(rec - c.base), -EBADMSG,
				    "event for function %llu, but the header defines %zu",
				    (unsigned long long)(tag >> 2), r->hdr.nfuncs);
		/* Hot path: with room for four maximal numbers left, skip the
		 * end checks (the decoder still stops at VP_ULEB_MAX bytes). */
		if (c.end - c.p >= 4 * VP_ULEB_MAX) {
			if (vp_uleb_get_fast(&c.p, &thread) || vp_uleb_get_fast(&c.p, &dt) ||
			    vp_uleb_get_fast(&c.p, &dsp))
				goto bad_number;
		} else if (vp_uleb_get(&c.p, c.end, &thread) || vp_uleb_get(&c.p, c.end, &dt) ||
			   vp_uleb_get(&c.p, c.end, &dsp)) {
			goto bad_number;
		}
		if (thread >= r->nthreads)
			return rerr(r, base_off + (size_t)(rec - c.base), -EBADMSG,
				    "event for undefined thread %llu", (unsigned long long)thread);
		ev = &buf[n];
		ev->kind = (uint32_t)(tag & 3);
		ev->func = (uint32_t)(tag >> 2);
		ev->thread = (uint32_t)thread;
		r->ctime += (uint64_t)vp_unzigzag(dt);
		ev->time = r->ctime;
		prev = r->last_sp[thread];
		ev->sp = prev + (uint64_t)vp_unzigzag(dsp);
		r->last_sp[thread] = ev->sp;
		ev->callsite = UINT32_MAX;
		if (ev->kind == VP_EV_ENTRY) {
			if (vp_uleb_get(&c.p, c.end, &cs))
				goto bad_number;
			if (cs >= r->ncallsites)
				return rerr(r, base_off + (size_t)(rec - c.base), -EBADMSG,
					    "entry uses undefined call site %llu",
					    (unsigned long long)cs);
			ev->callsite = (uint32_t)cs;
		}
		ev->offcpu = 0;
		ev->blocked = 0;
		ev->wait = 0;
		if (r->hdr.offcpu) {
			uint64_t d;

			if (vp_uleb_get(&c.p, c.end, &d))
				goto bad_number;
			err = decode_offcpu(r, thread, d, base_off + (size_t)(rec - c.base),
					    &ev->offcpu);
			if (err)
				return err;
			if (r->hdr.blocked)
				split_offcpu(r, ev);
		}
		vp_compensator_apply(&r->comp, ev);
		if (!r->have_span || ev->time < r->span_first)
			r->span_first = ev->time;
		if (!r->have_span || ev->time > r->span_last)
			r->span_last = ev->time;
		r->have_span = 1;
		if (r->base != VP_TIME_WALL)
			to_time_base(r, ev);
		n += thread_wanted(r, thread);
	}
	r->cp = c.p;
	return (long)n;
bad_number:
	return rerr(r, cur_off(&c), -EBADMSG, "bad or truncated number in an event record");
}

/*
 * Give back the pages of chunks already decoded: without this the mapping
 * of a large file stays resident, and the reader's memory would grow with
 * the number of events instead of staying constant.  A second pass
 * (rewind) faults them in again from the page cache.
 */
static void drop_consumed(struct vp_reader *r)
{
	const size_t step = 8 << 20;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t end = r->pos / page * page;

	if (end < r->dropped + step)
		return;
	madvise((void *)(r->map + r->dropped), end - r->dropped, MADV_DONTNEED);
	r->dropped = end;
}

long vp_reader_next(struct vp_reader *r, struct vp_event *buf, size_t cap)
{
	long total = 0;

	while (!r->done && (size_t)total < cap) {
		const uint8_t *payload;
		uint8_t type;
		uint32_t len;
		long n;
		int st;

		if (r->cp && r->cp < r->cend) {
			n = decode(r, buf + total, cap - (size_t)total);
			if (n < 0)
				return n;
			total += n;
			continue;
		}
		r->cp = r->cend = NULL;
		drop_consumed(r);
		st = read_chunk(r, &type, &payload, &len);
		if (st < 0)
			return st;
		if (st == CHUNK_TRUNCATED) {
			r->done = 1;
			break;
		}
		if (st == CHUNK_EOF) {
			if (!r->trailer.present && !r->warn[0])
				snprintf(r->warn, sizeof(r->warn),
					 "'%s': recording incomplete: no END chunk "
					 "(the recorder did not finish)",
					 r->path);
			r->done = 1;
			break;
		}
		if (r->trailer.present)
			return rerr(r, r->pos, -EBADMSG, "chunk after the END chunk");
		if (type == VP_CHUNK_META)
			return rerr(r, r->pos + 4, -EBADMSG, "second META chunk");
		if (type == VP_CHUNK_END) {
			st = parse_end(r, payload, len, r->pos + VP_CHUNK_HEADER_SIZE);
			if (st)
				return st;
			r->pos += VP_CHUNK_HEADER_SIZE + len;
			continue;
		}
		if (len < 8)
			return rerr(r, r->pos + 8, -EBADMSG,
				    "EVENTS chunk of %u bytes is shorter than its base time", len);
		r->ctime = vp_get_le64(payload);
		r->cp = payload + 8;
		r->cend = payload + len;
		/* stack pointers, CFAs and off-CPU times are deltas within a
		 * chunk, from 0 */
		if (r->nthreads) {
			memset(r->last_sp, 0, r->nthreads * sizeof(*r->last_sp));
			memset(r->last_cfa, 0, r->nthreads * sizeof(*r->last_cfa));
		}
		for (size_t i = 0; i < r->nthreads; i++)
			r->tclock[i].off_last = 0;
		r->pos += VP_CHUNK_HEADER_SIZE + len;
	}
	return total;
}

int vp_reader_pump(struct vp_reader *r, const struct vp_event_consumer *c)
{
	enum { BATCH = 2048 };
	struct vp_event *buf = malloc(BATCH * sizeof(*buf));
	size_t ncs = 0;
	long n;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	while ((n = vp_reader_next(r, buf, BATCH)) > 0) {
		/* call sites are defined in the stream before their first use */
		for (; ncs < r->ncallsites; ncs++) {
			err = c->callsite(c->ctx, (uint32_t)ncs, r->callsites[ncs].flags);
			if (err)
				goto out;
		}
		err = c->feed(c->ctx, buf, (size_t)n);
		if (err)
			goto out;
	}
	err = (int)n;
out:
	free(buf);
	return err;
}
