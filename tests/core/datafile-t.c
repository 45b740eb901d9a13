/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * datafile-t.c - tests for core/datafile-write.c and core/datafile-read.c:
 * a written file reads back exactly (header, definitions, events across
 * chunks, trailer) in under 16 bytes per event, and every kind of damage
 * gives the exact message with the file offset: empty, bad magic, wrong
 * version, truncated header, bad checksum, truncated tail (a warning: the
 * complete chunks stay readable).  Version 2: sampled stacks and their
 * definitions read back through the sample handler, version-1 files are
 * still read (and reject version-2 records), probe-cost compensation moves
 * event times by exactly the calibrated costs, and costs tracked while
 * recording replace them.  Version 3: the backend and off-CPU flag read
 * back, off-CPU times round-trip across chunks and threads, version-2 files
 * still read, odd values are errors with their offset, and the CPU and
 * off-CPU time bases move event times by exactly the off-CPU times
 * (-ENODATA without them).
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "core/datafile.h"
#include "tests/tap/basic.h"

enum { NEV = 100000 };

static char *dir;

static char *path_of(const char *name)
{
	return basprintf("%s/%s", dir, name);
}

static void write_bytes(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(p, 1, n, f) != n || fclose(f))
		sysbail("cannot write %s", path);
}

static void *read_all(const char *path, size_t *len)
{
	struct stat st;
	void *p;
	FILE *f = fopen(path, "rb");

	if (!f || fstat(fileno(f), &st))
		sysbail("cannot read %s", path);
	p = bmalloc((size_t)st.st_size + 1);
	*len = fread(p, 1, (size_t)st.st_size, f);
	fclose(f);
	return p;
}

static struct vp_event expect(size_t i)
{
	struct vp_event ev;
	uint64_t depth = i % 7;

	ev.kind = (i & 1) ? VP_EV_EXIT : VP_EV_ENTRY;
	ev.func = (uint32_t)(i % 3);
	ev.thread = (uint32_t)(i % 2);
	ev.time = 1000000000ULL + i * 1500 + (i % 5);
	ev.sp = 0x7ffc0000f000ULL - depth * 48 + (ev.kind == VP_EV_EXIT ? 8 : 0);
	ev.callsite = ev.kind == VP_EV_ENTRY ? (uint32_t)(i % 2) : UINT32_MAX;
	ev.offcpu = 0;
	return ev;
}

static void write_good(const char *path, size_t nev, int finish)
{
	char *argv[] = { "prog", "arg one" };
	unsigned char bid[] = { 0xde, 0xad, 0x00, 0xbe, 0xef };
	struct vp_module mod = { "/bin/prog", bid, sizeof(bid), 123456789 };
	struct vp_func funcs[3] = {
		{ 0, 0x1000, 16, 0x1000, 0, VP_INSN_EMULATED, "main", "main", "main" },
		{ 0, 0x1100, 32, 0x1100, VP_FUNC_CLONE, VP_INSN_STEPPED, "f.isra.0", "f.isra.0",
		  "f" },
		{ 0, 0x1200, 8, 0x1200, 0, VP_INSN_UNKNOWN, "_Z1gv", "g()", "g()" },
	};
	struct vp_probe_cost cost = { VP_INSN_STEPPED, 16000, 17000, 0 };
	struct vp_header h = { 0 };
	struct vp_callsite cs0 = { 0, 0, 0x1010, "main+0x10", "prog.c", 42 };
	struct vp_callsite cs1 = { VP_CS_TRAMPOLINE, -1, 0, "", "", 0 };
	struct vp_trailer tr = { .wait_status = 3 << 8, .flags = VP_END_EXITED, .foreign = 7,
				 .end_time = 99 };
	struct vp_writer *w;
	size_t i;

	h.unit = VP_UNIT_NS;
	h.clock = CLOCK_MONOTONIC;
	h.start_time = 1700000000;
	h.pid = 4242;
	h.ncpu = 2;
	h.host = "6.1 x86_64";
	h.argc = 2;
	h.argv = argv;
	h.nmodules = 1;
	h.modules = &mod;
	h.nfuncs = 3;
	h.funcs = funcs;
	h.ncosts = 1;
	h.costs = &cost;
	w = vp_writer_new(path, &h);
	if (!w)
		sysbail("vp_writer_new");
	vp_writer_thread(w, 0, 4242, 4242);
	vp_writer_thread(w, 1, 4243, 4242);
	vp_writer_callsite(w, 0, &cs0);
	vp_writer_callsite(w, 1, &cs1);
	for (i = 0; i < nev; i++) {
		struct vp_event ev = expect(i);

		if (vp_writer_event(w, &ev))
			sysbail("vp_writer_event");
		if (i == nev / 2)
			vp_writer_lost(w, 1, 11);
	}
	if (finish) {
		if (vp_writer_finish(w, &tr))
			sysbail("vp_writer_finish");
	} else {
		/* unfinished on purpose: as if varperf was killed */
		vp_writer_flush(w);
		vp_writer_free(w);
	}
}

/* Read everything; returns events read or a negative errno. */
static long read_back(const char *path, char *err, size_t errlen, struct vp_reader **ret)
{
	static struct vp_event buf[1000];
	struct vp_reader *r;
	long n, total = 0;
	int rc;

	rc = vp_reader_open(path, &r, err, errlen);
	if (rc)
		return rc;
	while ((n = vp_reader_next(r, buf, 1000)) > 0) {
		long i;

		for (i = 0; i < n; i++) {
			struct vp_event e = expect((size_t)(total + i));

			if (memcmp(&e, &buf[i], sizeof(e))) {
				diag("event %ld differs", total + i);
				vp_reader_free(r);
				return -EILSEQ;
			}
		}
		total += n;
	}
	if (n < 0) {
		snprintf(err, errlen, "%s", vp_reader_error(r));
		vp_reader_free(r);
		return n;
	}
	*ret = r;
	return total;
}

static void expect_open_error(const char *name, const void *bytes, size_t len, const char *msg)
{
	char *p = path_of(name), *want, err[512] = "";
	struct vp_reader *r;

	write_bytes(p, bytes, len);
	ok(vp_reader_open(p, &r, err, sizeof(err)) < 0, "%s: rejected", name);
	want = basprintf("'%s': %s", p, msg);
	is_string(want, err, "%s: message", name);
	free(want);
	free(p);
}

/* A version-1 file (the same layout, version 1 in the header) reads. */
static void test_version1(const char *good)
{
	char err[512], *p = path_of("v1.data");
	unsigned char *b;
	struct vp_reader *r;
	size_t len;
	long n;

	b = read_all(good, &len);
	b[8] = 1;
	write_bytes(p, b, len);
	n = read_back(p, err, sizeof(err), &r);
	is_int(NEV, n, "version 1: every event read");
	if (n > 0) {
		is_int(1, vp_reader_header(r)->version, "version 1: header says so");
		is_int(0, vp_reader_header(r)->mode, "version 1: no recording mode");
		vp_reader_free(r);
	} else {
		skip_block(2, "nothing read");
	}
	free(b);
	free(p);
}

/* A version-2 file (a version-3 file without its keys) reads. */
static void test_version2(const char *good)
{
	char err[512], *p = path_of("v2.data");
	unsigned char *b;
	struct vp_reader *r;
	size_t len;
	long n;

	b = read_all(good, &len);
	b[8] = 2;
	write_bytes(p, b, len);
	n = read_back(p, err, sizeof(err), &r);
	is_int(NEV, n, "version 2: every event read");
	if (n > 0) {
		const struct vp_header *h = vp_reader_header(r);

		ok(h->version == 2 && h->backend == VP_BACKEND_NONE && !h->offcpu,
		   "version 2: no backend, no off-CPU times");
		is_int(-ENODATA, vp_reader_set_time(r, VP_TIME_CPU),
		       "version 2: no CPU time base");
		vp_reader_free(r);
	} else {
		skip_block(2, "nothing read");
	}
	free(b);
	free(p);
}

/* ---- version 2: samples ---- */

enum { NSAMPLES = 3000 };

struct sample_seen {
	long n;
	long bad;
	uint64_t last_time;
	uint32_t phases[3];
};

static uint32_t sample_nframes(long i)
{
	return 1 + (uint32_t)(i % 5);
}

static uint64_t sample_cfa(long i, uint32_t k)
{
	return 0x7ffd0000e000ULL - (uint64_t)(i % 3) * 64 + (uint64_t)k * 96;
}

static int on_sample(void *ctx, const struct vp_reader *r, const struct vp_sample *s)
{
	struct sample_seen *seen = ctx;
	long i = seen->n++;
	uint32_t n = sample_nframes(i);

	(void)r;
	if (s->nframes != n || s->thread != (uint32_t)(i % 2) || s->period != 1000000 ||
	    s->time != 5000000000ULL + (uint64_t)i * 1000000 ||
	    s->flags != (i % 7 == 0 ? VP_SAMPLE_TRUNCATED : 0)) {
		seen->bad++;
		return 0;
	}
	for (uint32_t k = 0; k < n; k++)
		if (s->frames[k] != (k + (uint32_t)i) % 3 || s->cfas[k] != sample_cfa(i, k))
			seen->bad++;
	if (s->phase < 3)
		seen->phases[s->phase]++;
	return 0;
}

static void write_samples(const char *path)
{
	struct vp_module mod = { "/bin/prog", NULL, 0, 0 };
	unsigned char bid[] = { 1, 2, 3 };
	struct vp_module vdso = { "[vdso]", bid, sizeof(bid), 0 };
	struct vp_symbol syms[2] = {
		{ 0, 0, 0x1100, 40, "work", "work" },
		{ VP_SYM_INLINE, 1, 0, 0, "_Z4stepi", "step(int)" },
	};
	struct vp_frame_level lv[2] = { { 1, 12, "a.c" }, { 0, 30, "a.c" } };
	struct vp_frame_def frames[3] = {
		{ 0, 0x1104, 2, lv },
		{ 0, 0x1120, 1, &lv[1] },
		{ -1, 0, 1, &lv[1] },
	};
	struct vp_header h = { 0 };
	struct vp_trailer tr = { 0 };
	struct vp_writer *w;
	uint32_t ids[8];
	uint64_t cfas[8];

	h.unit = VP_UNIT_NS;
	h.clock = CLOCK_MONOTONIC;
	h.nmodules = 1;
	h.modules = &mod;
	h.mode = VP_MODE_AUTO;
	h.sampling = (struct vp_sampling){ VP_SEV_CPU_CLOCK, 1000000, 1000, 8192 };
	w = vp_writer_new(path, &h);
	if (!w)
		sysbail("vp_writer_new");
	vp_writer_thread(w, 0, 10, 10);
	vp_writer_thread(w, 1, 11, 10);
	vp_writer_module(w, 1, &vdso, VP_MOD_VDSO);
	for (uint32_t i = 0; i < 2; i++)
		vp_writer_symbol(w, i, &syms[i]);
	for (uint32_t i = 0; i < 3; i++)
		vp_writer_frame(w, i, &frames[i]);
	vp_writer_phase(w, 1, 10);
	for (long i = 0; i < NSAMPLES; i++) {
		struct vp_sample s = { 0 };

		if (i == NSAMPLES / 2)
			vp_writer_phase(w, 2, 12);
		s.time = 5000000000ULL + (uint64_t)i * 1000000;
		s.period = 1000000;
		s.thread = (uint32_t)(i % 2);
		s.flags = i % 7 == 0 ? VP_SAMPLE_TRUNCATED : 0;
		s.nframes = sample_nframes(i);
		for (uint32_t k = 0; k < s.nframes; k++) {
			ids[k] = (k + (uint32_t)i) % 3;
			cfas[k] = sample_cfa(i, k);
		}
		s.frames = ids;
		s.cfas = cfas;
		if (vp_writer_sample(w, &s))
			sysbail("vp_writer_sample");
	}
	if (vp_writer_finish(w, &tr))
		sysbail("vp_writer_finish");
}

static void test_samples(void)
{
	char *p = path_of("samples.data"), err[512] = "";
	struct sample_seen seen;
	struct vp_reader *r;
	struct vp_event ev[16];
	const struct vp_frame_def *f;
	const struct vp_header *h;
	uint32_t pid = 0;
	unsigned char *b;
	size_t len;

	write_samples(p);
	if (vp_reader_open(p, &r, err, sizeof(err)))
		bail("cannot open the sample file: %s", err);
	h = vp_reader_header(r);
	is_int(VP_DATA_VERSION, h->version, "samples: written as version %d", VP_DATA_VERSION);
	is_int(VP_MODE_AUTO, h->mode, "samples: recording mode");
	is_int(VP_SEV_CPU_CLOCK, h->sampling.event, "samples: sampling event");
	is_int(1000000, h->sampling.period, "samples: sampling period");
	is_int(8192, h->sampling.stack_size, "samples: stack size");
	memset(&seen, 0, sizeof(seen));
	vp_reader_set_sample_handler(r, on_sample, &seen);
	is_int(0, vp_reader_next(r, ev, 16), "samples: no entry or exit events");
	is_int(NSAMPLES, seen.n, "samples: every sample handed over");
	is_int(0, seen.bad, "samples: all read back identically");
	is_int(NSAMPLES / 2, seen.phases[1], "samples: first half in phase 1");
	is_int(NSAMPLES / 2, seen.phases[2], "samples: second half in phase 2");
	is_int(2, vp_reader_phase(r, &pid), "samples: last phase");
	is_int(12, pid, "samples: its pid");
	is_int(2, vp_reader_nmodules(r), "samples: header module plus a defined one");
	is_string("[vdso]", vp_reader_module(r, 1)->path, "samples: defined module path");
	is_int(VP_MOD_VDSO, vp_reader_module_flags(r, 1), "samples: module flags");
	is_int(3, vp_reader_module(r, 1)->build_id_len, "samples: module build-id");
	is_string("step(int)", vp_reader_symbol(r, 1)->display, "samples: symbol name");
	is_int(VP_SYM_INLINE, vp_reader_symbol(r, 1)->flags, "samples: symbol flags");
	is_int(1, vp_reader_symbol(r, 1)->module, "samples: symbol module");
	f = vp_reader_frame(r, 0);
	ok(f && f->nlevels == 2 && f->levels[0].symbol == 1 && f->levels[1].line == 30 &&
		   !strcmp(f->levels[0].file, "a.c") && f->addr == 0x1104,
	   "samples: inline frame levels");
	is_int(-1, vp_reader_frame(r, 2)->module, "samples: frame without a module");
	is_int(NSAMPLES, vp_reader_trailer(r)->samples, "samples: trailer count");
	is_int((NSAMPLES + 6) / 7, vp_reader_trailer(r)->truncated, "samples: trailer truncated");
	vp_reader_rewind(r);
	vp_reader_set_sample_handler(r, NULL, NULL);
	vp_reader_next(r, ev, 16);
	is_int(NSAMPLES, vp_reader_samples(r), "samples: skipped without a handler");
	ok(vp_reader_nframes(r) == 3 && vp_reader_nsymbols(r) == 2,
	   "samples: rewind defines everything once again");
	vp_reader_free(r);

	/* The same records in a file that says version 1: an error. */
	b = read_all(p, &len);
	b[8] = 1;
	write_bytes(p, b, len);
	if (vp_reader_open(p, &r, err, sizeof(err)))
		bail("cannot open the v1 sample file: %s", err);
	ok(vp_reader_next(r, ev, 16) < 0 &&
		   strstr(vp_reader_error(r), "unknown control record type 4"),
	   "version 1 with version-2 records rejected: %s", vp_reader_error(r));
	vp_reader_free(r);
	free(b);
	free(p);
}

/* ---- compensation ---- */

/*
 * main calls a (emulated: in-window 500, full 900) twice and b (stepped:
 * in-window 15000, full 17000) once inside the first a.
 */
static void test_compensation(void)
{
	static const struct {
		uint32_t kind, func;
		uint64_t t;
	} evs[] = {
		{ VP_EV_ENTRY, 0, 1000 },  { VP_EV_ENTRY, 1, 2000 },	{ VP_EV_ENTRY, 2, 3000 },
		{ VP_EV_EXIT, 2, 23000 },  { VP_EV_EXIT, 1, 30000 },	{ VP_EV_ENTRY, 1, 31000 },
		{ VP_EV_EXIT, 1, 31300 },  { VP_EV_EXIT, 0, 100000 },
	};
	/* raw minus compensation: after an entry its in-window cost is owed,
	 * after an exit the rest of its full cost; so b lasts 20000 - 15000,
	 * the first a 28000 - 500 - 17000, main 99000 - 17000 - 2 * 900.  The
	 * second a lasted 300, less than its in-window cost: its exit is
	 * clamped to its entry (duration 0), and counted */
	static const uint64_t want[] = { 1000, 2000, 2500, 7500, 12500, 13100, 13100, 81200 };
	struct vp_module mod = { "/bin/prog", NULL, 0, 0 };
	struct vp_func funcs[3] = {
		{ 0, 0x1000, 16, 0x1000, 0, VP_INSN_UNKNOWN, "main", "main", "main" },
		{ 0, 0x1100, 16, 0x1100, 0, VP_INSN_EMULATED, "a", "a", "a" },
		{ 0, 0x1200, 16, 0x1200, 0, VP_INSN_STEPPED, "b", "b", "b" },
	};
	struct vp_probe_cost costs[2] = { { VP_INSN_EMULATED, 500, 900, 0 },
					  { VP_INSN_STEPPED, 15000, 17000, 0 } };
	struct vp_callsite cs = { VP_CS_NONE, -1, 0, "", "", 0 };
	struct vp_header h = { 0 };
	struct vp_trailer tr = { 0 };
	struct vp_event got[16];
	char *p = path_of("comp.data"), err[512] = "";
	struct vp_reader *r;
	struct vp_writer *w;
	uint64_t in, full;
	long n;
	int same = 1;

	h.unit = VP_UNIT_NS;
	h.nmodules = 1;
	h.modules = &mod;
	h.nfuncs = 3;
	h.funcs = funcs;
	h.ncosts = 2;
	h.costs = costs;
	w = vp_writer_new(p, &h);
	if (!w)
		sysbail("vp_writer_new");
	vp_writer_thread(w, 0, 1, 1);
	vp_writer_callsite(w, 0, &cs);
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
		struct vp_event ev = { evs[i].t, 0x7000 - 64 * i, evs[i].func, 0, 0, evs[i].kind, 0, 0, 0 };

		ev.callsite = ev.kind == VP_EV_ENTRY ? 0 : UINT32_MAX;
		vp_writer_event(w, &ev);
	}
	if (vp_writer_finish(w, &tr))
		sysbail("vp_writer_finish");
	if (vp_reader_open(p, &r, err, sizeof(err)))
		bail("cannot open: %s", err);
	ok(vp_probe_cost_of(vp_reader_header(r), 2, &in, &full) == 0 && in == 15000 &&
		   full == 17000,
	   "cost of a stepped function");
	is_int(-ENOENT, vp_probe_cost_of(vp_reader_header(r), 0, &in, &full),
	       "no cost for an unknown class");
	is_int(0, vp_reader_compensate(r, 1), "compensation on");
	n = vp_reader_next(r, got, 16);
	is_int(8, n, "compensated: every event");
	for (long i = 0; i < n && i < 8; i++)
		if (got[i].time != want[i]) {
			diag("event %ld: time %llu, wanted %llu", i,
			     (unsigned long long)got[i].time, (unsigned long long)want[i]);
			same = 0;
		}
	ok(same, "compensated: times moved by exactly the calibrated costs");
	is_int(1, vp_reader_clamped(r), "compensated: the one exit clamped is counted");
	is_int(200, vp_reader_clamped_max(r), "... moved up by 200: 31300 - 18400 to 13100");
	vp_reader_rewind(r);
	is_int(0, vp_reader_compensate(r, 0), "compensation off");
	n = vp_reader_next(r, got, 16);
	ok(n == 8 && got[7].time == 100000 && got[3].time == 23000, "raw again after rewind");
	is_int(0, vp_reader_clamped(r), "raw: nothing clamped");
	is_int(0, vp_reader_clamped_max(r), "... by nothing");
	vp_reader_free(r);
	free(p);
}

/* ---- version 3: off-CPU times ---- */

enum { NOFF = 60000, NOFF_THREADS = 3 };

/* Event @i of the off-CPU file: thread i % 3, whose off-CPU time stays
 * put every other event and grows unevenly in between. */
static struct vp_event off_expect(size_t i)
{
	static const uint64_t base[NOFF_THREADS] = { 0, 5000000, 1ULL << 60 };
	struct vp_event ev = expect(i);
	uint64_t k = i / NOFF_THREADS, m = k / 2;

	ev.thread = (uint32_t)(i % NOFF_THREADS);
	ev.kind = (k & 1) ? VP_EV_EXIT : VP_EV_ENTRY;
	ev.callsite = ev.kind == VP_EV_ENTRY ? (uint32_t)(i % 2) : UINT32_MAX;
	ev.offcpu = base[ev.thread] + 700 * m + 13 * (m * m % 7);
	return ev;
}

static void write_offcpu(const char *path)
{
	struct vp_module mod = { "/bin/prog", NULL, 0, 0 };
	struct vp_func funcs[3] = {
		{ 0, 0x1000, 16, 0x1000, 0, VP_INSN_EMULATED, "a", "a", "a" },
		{ 0, 0x1100, 16, 0x1100, 0, VP_INSN_EMULATED, "b", "b", "b" },
		{ 0, 0x1200, 16, 0x1200, 0, VP_INSN_EMULATED, "c", "c", "c" },
	};
	struct vp_callsite cs = { 0, 0, 0x1010, "a+0x10", "prog.c", 7 };
	struct vp_header h = { 0 };
	struct vp_trailer tr = { 0 };
	struct vp_writer *w;

	h.unit = VP_UNIT_NS;
	h.nmodules = 1;
	h.modules = &mod;
	h.nfuncs = 3;
	h.funcs = funcs;
	h.backend = VP_BACKEND_BPF;
	h.offcpu = 1;
	w = vp_writer_new(path, &h);
	if (!w)
		sysbail("vp_writer_new");
	for (uint32_t t = 0; t < NOFF_THREADS; t++)
		vp_writer_thread(w, t, 100 + t, 100);
	vp_writer_callsite(w, 0, &cs);
	vp_writer_callsite(w, 1, &cs);
	for (size_t i = 0; i < NOFF; i++) {
		struct vp_event ev = off_expect(i);

		if (vp_writer_event(w, &ev))
			sysbail("vp_writer_event %zu", i);
	}
	ok(vp_writer_offcpu(w, 0) == off_expect(NOFF - 3).offcpu &&
		   vp_writer_offcpu(w, 1) == off_expect(NOFF - 2).offcpu &&
		   vp_writer_offcpu(w, 2) == off_expect(NOFF - 1).offcpu &&
		   vp_writer_offcpu(w, NOFF_THREADS) == 0,
	   "off-CPU: the writer gives each thread's last one, across chunks (0: no thread)");
	if (vp_writer_finish(w, &tr))
		sysbail("vp_writer_finish");
}

/* Events of several threads across many chunks read back identically. */
static void test_offcpu_round_trip(void)
{
	static struct vp_event buf[777];
	char *p = path_of("offcpu.data"), err[512] = "";
	const struct vp_header *h;
	struct vp_reader *r;
	size_t total = 0, bad = 0, chunks = 0;
	unsigned char *b;
	size_t len;
	long n;

	write_offcpu(p);
	if (vp_reader_open(p, &r, err, sizeof(err)))
		bail("cannot open the off-CPU file: %s", err);
	h = vp_reader_header(r);
	is_int(VP_DATA_VERSION, h->version, "off-CPU: written as version %d", VP_DATA_VERSION);
	is_int(VP_BACKEND_BPF, h->backend, "off-CPU: backend read back");
	is_int(1, h->offcpu, "off-CPU: flag read back");
	while ((n = vp_reader_next(r, buf, 777)) > 0) {
		for (long i = 0; i < n; i++) {
			struct vp_event e = off_expect(total + (size_t)i);

			if (memcmp(&e, &buf[i], sizeof(e)) && bad++ < 3)
				diag("event %zu: offcpu %llu, wanted %llu", total + (size_t)i,
				     (unsigned long long)buf[i].offcpu,
				     (unsigned long long)e.offcpu);
		}
		total += (size_t)n;
	}
	ok(n == 0 && total == NOFF && !bad, "off-CPU: %zu events read back identically (%zu "
	   "differ)", total, bad);
	is_int(0, vp_reader_set_time(r, VP_TIME_WALL), "off-CPU: wall time base");
	is_int(-EINVAL, vp_reader_set_time(r, (enum vp_time_base)7), "off-CPU: unknown base");
	vp_reader_free(r);
	/* the per-thread deltas restart in every chunk: there must be several */
	b = read_all(p, &len);
	for (size_t off = VP_FILE_HEADER_SIZE; off + VP_CHUNK_HEADER_SIZE <= len;
	     off += VP_CHUNK_HEADER_SIZE + (b[off + 8] | b[off + 9] << 8 | (size_t)b[off + 10] << 16))
		chunks += b[off + 4] == VP_CHUNK_EVENTS;
	ok(chunks >= 4, "off-CPU: the events span %zu chunks", chunks);
	free(b);
	free(p);
}

/* Store the CRC of the chunk at @off again after a patch. */
static void fix_crc(unsigned char *b, size_t off)
{
	uint32_t len = b[off + 8] | b[off + 9] << 8 | b[off + 10] << 16 | (uint32_t)b[off + 11] << 24;
	uint32_t crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), b + off + VP_CHUNK_HEADER_SIZE, len);

	for (int i = 0; i < 4; i++)
		b[off + 12 + i] = (unsigned char)(crc >> (8 * i));
}

/* One thread, one call: entry at off-CPU time 100, exit at 200; no END
 * chunk, so the exit record ends the file. */
static unsigned char *write_one_call(const char *path, size_t *len, size_t *meta_end)
{
	struct vp_module mod = { "/bin/prog", NULL, 0, 0 };
	struct vp_func f = { 0, 0x1000, 16, 0x1000, 0, VP_INSN_EMULATED, "a", "a", "a" };
	struct vp_callsite cs = { VP_CS_NONE, -1, 0, "", "", 0 };
	struct vp_event ev = { 1000, 0x7000, 0, 0, 0, VP_EV_ENTRY, 100, 0, 0 };
	struct vp_header h = { 0 };
	struct vp_writer *w;
	unsigned char *b;

	h.unit = VP_UNIT_NS;
	h.nmodules = 1;
	h.modules = &mod;
	h.nfuncs = 1;
	h.funcs = &f;
	h.backend = VP_BACKEND_BPF;
	h.offcpu = 1;
	w = vp_writer_new(path, &h);
	if (!w)
		sysbail("vp_writer_new");
	vp_writer_thread(w, 0, 1, 1);
	vp_writer_callsite(w, 0, &cs);
	is_int(0, (int)vp_writer_offcpu(w, 0), "off-CPU: 0 before the thread's first event");
	vp_writer_event(w, &ev);
	ev = (struct vp_event){ 2000, 0x7008, 0, UINT32_MAX, 0, VP_EV_EXIT, 200, 0, 0 };
	vp_writer_event(w, &ev);
	ev.offcpu = 150;
	is_int(-EINVAL, vp_writer_event(w, &ev), "writer refuses an off-CPU time going back");
	is_int(200, (int)vp_writer_offcpu(w, 0), "... and keeps the last one it wrote");
	vp_writer_free(w);
	/* write it again, without the refused event */
	w = vp_writer_new(path, &h);
	if (!w)
		sysbail("vp_writer_new");
	vp_writer_thread(w, 0, 1, 1);
	vp_writer_callsite(w, 0, &cs);
	ev = (struct vp_event){ 1000, 0x7000, 0, 0, 0, VP_EV_ENTRY, 100, 0, 0 };
	vp_writer_event(w, &ev);
	ev = (struct vp_event){ 2000, 0x7008, 0, UINT32_MAX, 0, VP_EV_EXIT, 200, 0, 0 };
	vp_writer_event(w, &ev);
	vp_writer_flush(w);
	vp_writer_free(w);
	b = read_all(path, len);
	*meta_end = 32 + (b[24] | b[25] << 8 | (size_t)b[26] << 16);
	return b;
}

static void expect_read_error(const char *name, const unsigned char *b, size_t len,
			      size_t off, const char *msg)
{
	char *p = path_of(name), err[512] = "", *want;
	struct vp_event ev[4];
	struct vp_reader *r;
	long n = 0;

	write_bytes(p, b, len);
	if (vp_reader_open(p, &r, err, sizeof(err)) == 0) {
		n = vp_reader_next(r, ev, 4);
		snprintf(err, sizeof(err), "%s", n < 0 ? vp_reader_error(r) : "");
		vp_reader_free(r);
	} else {
		n = -1;
	}
	want = basprintf("'%s': offset %zu: %s", p, off, msg);
	ok(n < 0, "%s: rejected", name);
	is_string(want, err, "%s: message", name);
	free(want);
	free(p);
}

/* Odd values: errors naming the file and the offset. */
static void test_offcpu_damage(void)
{
	char *p = path_of("onecall.data");
	size_t len, meta_end;
	unsigned char *b = write_one_call(p, &len, &meta_end), *c = bmalloc(len);
	static const unsigned char exit_rec[] = { 0x01, 0x00, 0xd0, 0x0f, 0x10, 0xc8, 0x01 };

	ok(!memcmp(b + meta_end - 6, "\x0d\x01\x02\x0e\x01\x01", 6),
	   "META ends with BACKEND 2 and OFFCPU 1");
	ok(!memcmp(b + len - 7, exit_rec, 7), "the exit record ends the file: doffcpu 100");
	memcpy(c, b, len);
	c[meta_end - 1] = 2;
	fix_crc(c, 16);
	expect_read_error("offcpu-flag.data", c, len, meta_end - 1,
			  "bad OFFCPU value 2 (expected 0 or 1)");
	memcpy(c, b, len);
	c[meta_end - 4] = 4;
	fix_crc(c, 16);
	expect_read_error("backend.data", c, len, meta_end - 4, "unknown probe backend 4");
	memcpy(c, b, len);
	c[len - 2] = 0x9f; /* zig-zag -80 */
	fix_crc(c, meta_end);
	expect_read_error("offcpu-back.data", c, len, len - 7,
			  "off-CPU time of thread 0 goes back by 80 ns (it never decreases)");
	memcpy(c, b, len);
	c[len - 2] = 0xab; /* zig-zag -150 */
	c[len - 1] = 0x02;
	fix_crc(c, meta_end);
	expect_read_error("offcpu-neg.data", c, len, len - 7,
			  "off-CPU time of thread 0 goes below 0");
	/* the same bytes in a version-2 file: keys 13 and 14 are unknown there */
	memcpy(c, b, len);
	c[8] = 2;
	write_bytes(p, c, len);
	{
		struct vp_reader *r;
		char err[512] = "";

		if (vp_reader_open(p, &r, err, sizeof(err)))
			bail("cannot open: %s", err);
		ok(!vp_reader_header(r)->offcpu && !vp_reader_header(r)->backend,
		   "version 2: keys 13 and 14 are skipped");
		vp_reader_free(r);
	}
	free(c);
	free(b);
	free(p);
}

/*
 * Two threads; thread 0 calls a (no cost) which calls b (emulated: in
 * window 100, full 300), off the CPU for 2000 ns inside b; thread 1 calls
 * a, off the CPU for 3000 ns.  Event order: 1000 T0 >a, 1500 T1 >a,
 * 2000 T0 >b, 5000 T0 <b, 6000 T0 <a, 9500 T1 <a.
 */
static void test_time_bases(void)
{
	static const struct {
		uint32_t thread, kind, func;
		uint64_t t, off;
	} evs[] = {
		{ 0, VP_EV_ENTRY, 0, 1000, 500 },  { 1, VP_EV_ENTRY, 0, 1500, 7000 },
		{ 0, VP_EV_ENTRY, 1, 2000, 500 },  { 0, VP_EV_EXIT, 1, 5000, 2500 },
		{ 0, VP_EV_EXIT, 0, 6000, 2500 },  { 1, VP_EV_EXIT, 0, 9500, 10000 },
	};
	/* compensated: b's exit 100 early, a's exit 300 early (thread 0) */
	static const uint64_t cpu[] = { 1000, 1500, 2000, 2900, 3700, 6500 };
	static const uint64_t offcpu[] = { 1000, 1500, 1000, 3000, 3000, 4500 };
	static const uint64_t cpu_raw[] = { 1000, 1500, 2000, 3000, 4000, 6500 };
	struct vp_module mod = { "/bin/prog", NULL, 0, 0 };
	struct vp_func funcs[2] = {
		{ 0, 0x1000, 16, 0x1000, 0, VP_INSN_UNKNOWN, "a", "a", "a" },
		{ 0, 0x1100, 16, 0x1100, 0, VP_INSN_EMULATED, "b", "b", "b" },
	};
	struct vp_probe_cost cost = { VP_INSN_EMULATED, 100, 300, 0 };
	struct vp_callsite cs = { VP_CS_NONE, -1, 0, "", "", 0 };
	struct vp_header h = { 0 };
	struct vp_trailer tr = { 0 };
	struct vp_event got[8];
	char *p = path_of("bases.data"), err[512] = "";
	struct vp_reader *r;
	struct vp_writer *w;
	uint64_t first, last;
	int same_cpu = 1, same_off = 1, same_raw = 1, same_offcpu = 1;
	long n;

	h.unit = VP_UNIT_NS;
	h.nmodules = 1;
	h.modules = &mod;
	h.nfuncs = 2;
	h.funcs = funcs;
	h.ncosts = 1;
	h.costs = &cost;
	h.backend = VP_BACKEND_BPF;
	h.offcpu = 1;
	w = vp_writer_new(p, &h);
	if (!w)
		sysbail("vp_writer_new");
	vp_writer_thread(w, 0, 1, 1);
	vp_writer_thread(w, 1, 2, 1);
	vp_writer_callsite(w, 0, &cs);
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
		struct vp_event ev = { evs[i].t, 0x7000 - 64 * evs[i].func, evs[i].func, 0,
				       evs[i].thread, evs[i].kind, evs[i].off, 0, 0 };

		if (ev.kind == VP_EV_EXIT) {
			ev.sp += 8;
			ev.callsite = UINT32_MAX;
		}
		vp_writer_event(w, &ev);
	}
	if (vp_writer_finish(w, &tr))
		sysbail("vp_writer_finish");
	if (vp_reader_open(p, &r, err, sizeof(err)))
		bail("cannot open: %s", err);

	is_int(0, vp_reader_set_time(r, VP_TIME_CPU), "time base: CPU");
	is_int(VP_TIME_CPU, vp_reader_time(r), "time base: said");
	vp_reader_compensate(r, 1);
	n = vp_reader_next(r, got, 8);
	is_int(6, n, "time base CPU: every event");
	for (long i = 0; i < n && i < 6; i++) {
		if (got[i].time != cpu[i]) {
			diag("CPU event %ld: time %llu, wanted %llu", i,
			     (unsigned long long)got[i].time, (unsigned long long)cpu[i]);
			same_cpu = 0;
		}
		same_offcpu &= got[i].offcpu == evs[i].off;
	}
	ok(same_cpu, "time base CPU: compensated times less the off-CPU times");
	ok(same_offcpu, "time base CPU: events keep their off-CPU times");
	vp_reader_time_span(r, &first, &last);
	ok(first == 1000 && last == 9500, "time base CPU: the wall-clock span (%llu to %llu)",
	   (unsigned long long)first, (unsigned long long)last);

	vp_reader_rewind(r);
	vp_reader_compensate(r, 0);
	n = vp_reader_next(r, got, 8);
	for (long i = 0; i < n && i < 6; i++)
		same_raw &= got[i].time == cpu_raw[i];
	ok(n == 6 && same_raw, "time base CPU, not compensated: times less the off-CPU times");

	vp_reader_rewind(r);
	vp_reader_compensate(r, 1);
	is_int(0, vp_reader_set_time(r, VP_TIME_OFFCPU), "time base: off-CPU");
	n = vp_reader_next(r, got, 8);
	for (long i = 0; i < n && i < 6; i++) {
		if (got[i].time != offcpu[i]) {
			diag("off-CPU event %ld: time %llu, wanted %llu", i,
			     (unsigned long long)got[i].time, (unsigned long long)offcpu[i]);
			same_off = 0;
		}
	}
	ok(n == 6 && same_off, "time base off-CPU: first time plus the off-CPU time since");

	vp_reader_rewind(r);
	is_int(0, vp_reader_set_time(r, VP_TIME_WALL), "time base: wall again");
	n = vp_reader_next(r, got, 8);
	ok(n == 6 && got[3].time == 4900 && got[5].time == 9500,
	   "time base wall: compensated times as they were");
	vp_reader_free(r);
	free(p);
}

/*
 * Version 5: WAIT records split a thread's off-CPU time into blocked and
 * preempted.  One thread: a entered at off-CPU 500, a wait of 300 (in
 * pread64), b entered at 900: 300 blocked, 100 preempted; a wait of 5000
 * (futex), more than b's 2000 off the CPU: all of those blocked; a's exit
 * 100 later, preempted.
 */
static void test_blocked_bases(void)
{
	static const struct {
		uint32_t kind, func;
		uint64_t t, off;
	} evs[] = {
		{ VP_EV_ENTRY, 0, 1000, 500 },
		{ VP_EV_ENTRY, 1, 2000, 900 },
		{ VP_EV_EXIT, 1, 5000, 2900 },
		{ VP_EV_EXIT, 0, 6000, 3000 },
	};
	static const uint64_t blocked[] = { 0, 300, 2300, 2300 };
	static const uint64_t t_blocked[] = { 1000, 1300, 3300, 3300 };
	static const uint64_t t_preempted[] = { 1000, 1100, 1100, 1200 };
	static const uint64_t t_own[] = { 1000, 1900, 4900, 5800 };
	struct vp_module mod = { "/bin/prog", NULL, 0, 0 };
	struct vp_func funcs[2] = {
		{ 0, 0x1000, 16, 0x1000, 0, VP_INSN_UNKNOWN, "a", "a", "a" },
		{ 0, 0x1100, 16, 0x1100, 0, VP_INSN_UNKNOWN, "b", "b", "b" },
	};
	struct vp_callsite cs = { VP_CS_NONE, -1, 0, "", "", 0 };
	struct vp_header h = { 0 }, other = { 0 };
	struct vp_trailer tr = { 0 };
	struct vp_event got[8];
	char *p = path_of("blocked.data"), err[512] = "", name[32];
	struct vp_reader *r;
	struct vp_writer *w;
	int same = 1, b_ok = 1, p_ok = 1, o_ok = 1;
	long n;

	h.unit = VP_UNIT_NS;
	h.nmodules = 1;
	h.modules = &mod;
	h.nfuncs = 2;
	h.funcs = funcs;
	h.backend = VP_BACKEND_BPF;
	h.offcpu = 1;
	h.blocked = 1;
	h.host = "6.18.0 x86_64";
	w = vp_writer_new(p, &h);
	if (!w)
		sysbail("vp_writer_new");
	vp_writer_thread(w, 0, 1, 1);
	vp_writer_callsite(w, 0, &cs);
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
		struct vp_event ev = { evs[i].t, 0x7000 - 64 * evs[i].func, evs[i].func, 0, 0,
				       evs[i].kind, evs[i].off, 0, 0 };

		if (ev.kind == VP_EV_EXIT) {
			ev.sp += 8;
			ev.callsite = UINT32_MAX;
		}
		vp_writer_event(w, &ev);
		if (i == 0)
			vp_writer_wait(w, 0, 1800, 300, 18);
		if (i == 1)
			vp_writer_wait(w, 0, 4900, 5000, 203);
	}
	if (vp_writer_finish(w, &tr))
		sysbail("vp_writer_finish");
	if (vp_reader_open(p, &r, err, sizeof(err)))
		bail("cannot open: %s", err);
	ok(vp_reader_header(r)->version == 5 && vp_reader_header(r)->blocked == 1,
	   "blocked: version 5, META BLOCKED read back");
	n = vp_reader_next(r, got, 8);
	for (long i = 0; i < n && i < 4; i++)
		same &= got[i].blocked == blocked[i] && got[i].kind == evs[i].kind;
	ok(n == 4 && same, "blocked: each event's blocked time, at most its off-CPU time's growth");

	vp_reader_rewind(r);
	vp_reader_set_waits(r, 1);
	n = vp_reader_next(r, got, 8);
	ok(n == 6 && got[1].kind == VP_EV_WAIT && got[1].func == 18 && got[1].wait == 300 &&
		   got[3].kind == VP_EV_WAIT && got[3].func == 203 && got[3].wait == 5000 &&
		   got[4].kind == VP_EV_EXIT,
	   "blocked: with vp_reader_set_waits the WAIT records among the events, in order");
	vp_reader_set_waits(r, 0);

	vp_reader_rewind(r);
	is_int(0, vp_reader_set_time(r, VP_TIME_BLOCKED), "time base: blocked");
	n = vp_reader_next(r, got, 8);
	for (long i = 0; i < n && i < 4; i++)
		b_ok &= got[i].time == t_blocked[i];
	ok(n == 4 && b_ok, "time base blocked: first time plus the blocked time since");
	vp_reader_rewind(r);
	vp_reader_set_time(r, VP_TIME_PREEMPTED);
	n = vp_reader_next(r, got, 8);
	for (long i = 0; i < n && i < 4; i++)
		p_ok &= got[i].time == t_preempted[i];
	ok(n == 4 && p_ok, "time base preempted: first time plus the preempted time since");
	vp_reader_rewind(r);
	vp_reader_set_time(r, VP_TIME_OWN);
	n = vp_reader_next(r, got, 8);
	for (long i = 0; i < n && i < 4; i++)
		o_ok &= got[i].time == t_own[i];
	ok(n == 4 && o_ok, "time base own: wall-clock times less the preempted time");
	is_int(-EINVAL, vp_reader_set_time(r, (enum vp_time_base)6), "time base: unknown");

	is_string("pread64", vp_wait_reason_name(&h, 18, name, sizeof(name)), "reason: a name");
	is_string("no syscall", vp_wait_reason_name(&h, 0, name, sizeof(name)), "reason 0: none");
	is_string("syscall 999", vp_wait_reason_name(&h, 1000, name, sizeof(name)),
		  "reason: a number without a name");
	other.host = "6.18.0 aarch64";
	is_string("syscall 17", vp_wait_reason_name(&other, 18, name, sizeof(name)),
		  "reason: another machine's numbers are not named");
	vp_reader_free(r);

	/* off-CPU times not split: no blocked or preempted time base */
	h.blocked = 0;
	w = vp_writer_new(p, &h);
	if (!w)
		sysbail("vp_writer_new");
	vp_writer_finish(w, &tr);
	if (vp_reader_open(p, &r, err, sizeof(err)))
		bail("cannot open: %s", err);
	is_int(-ENODATA, vp_reader_set_time(r, VP_TIME_OWN), "not split: no own time base");
	is_int(0, vp_reader_set_time(r, VP_TIME_CPU), "... on-CPU time still");
	vp_reader_free(r);
	free(p);
}

/* Costs tracked while recording (END chunk) replace the calibration's. */
static void test_tracked_costs(void)
{
	struct vp_probe_cost costs[2] = { { VP_INSN_EMULATED, 500, 900, 0 },
					  { VP_INSN_STEPPED, 15000, 17000, 0 } };
	struct vp_module mod = { "/bin/prog", NULL, 0, 0 };
	struct vp_header h = { 0 };
	struct vp_trailer tr = { 0 };
	char *p = path_of("tracked.data"), err[512] = "";
	const struct vp_header *rh;
	struct vp_reader *r;
	struct vp_writer *w;

	h.unit = VP_UNIT_NS;
	h.nmodules = 1;
	h.modules = &mod;
	h.ncosts = 2;
	h.costs = costs;
	w = vp_writer_new(p, &h);
	if (!w)
		sysbail("vp_writer_new");
	tr.ncosts = 1;
	tr.costs[0] = (struct vp_probe_cost){ VP_INSN_STEPPED, 11000, 13000, 0 };
	if (vp_writer_finish(w, &tr))
		sysbail("vp_writer_finish");
	if (vp_reader_open(p, &r, err, sizeof(err)))
		bail("cannot open: %s", err);
	rh = vp_reader_header(r);
	ok(rh->costs[1].in_window_ns == 11000 && rh->costs[1].full_ns == 13000,
	   "tracked costs replace the calibration's");
	ok(rh->costs[0].full_ns == 900, "a class not tracked keeps its calibration");
	vp_reader_free(r);
	free(p);
}

/* vp_writer_new_fd: on a file the caller opened; new files' mode. */
static void test_writer_fd(void)
{
	struct vp_module mod = { "/bin/prog", NULL, 0, 0 };
	struct vp_header h = { 0 };
	struct vp_trailer tr = { 0 };
	char *p = path_of("fd.data"), err[512] = "";
	struct vp_reader *r;
	struct vp_writer *w;
	struct stat st;
	mode_t old;
	int fd;

	h.unit = VP_UNIT_NS;
	h.pid = 77;
	h.nmodules = 1;
	h.modules = &mod;
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		sysbail("open");
	w = vp_writer_new_fd(fd, &h);
	if (!w)
		sysbail("vp_writer_new_fd");
	if (vp_writer_finish(w, &tr))
		sysbail("vp_writer_finish");
	ok(fcntl(fd, F_GETFD) < 0 && errno == EBADF, "the writer closed the descriptor it got");
	if (vp_reader_open(p, &r, err, sizeof(err)))
		bail("cannot open: %s", err);
	is_int(77, vp_reader_header(r)->pid, "a file written on a descriptor reads back");
	vp_reader_free(r);
	/* a descriptor it cannot write: NULL, errno set, descriptor closed */
	fd = open(p, O_RDONLY);
	if (fd < 0)
		sysbail("open");
	errno = 0;
	ok(!vp_writer_new_fd(fd, &h) && errno == EBADF, "an unwritable descriptor: NULL, EBADF");
	ok(fcntl(fd, F_GETFD) < 0 && errno == EBADF, "... and it is closed too");
	/* like any new file: 0666 less the umask */
	unlink(p);
	old = umask(002);
	w = vp_writer_new(p, &h);
	umask(old);
	if (!w || vp_writer_finish(w, &tr) || stat(p, &st) < 0)
		sysbail("vp_writer_new");
	is_int(0664, st.st_mode & 07777, "vp_writer_new: mode 0666 less the umask (002)");
	free(p);
}

/* ---- version 4: processes ---- */

/*
 * A recording that followed a fork: process 100 (the target, thread 0)
 * and its child 200 (thread 1), which later exec'd /bin/true; 5 other
 * children not followed.  Thread 0 has 3 calls, thread 1 has 2.
 */
static void write_procs(const char *path)
{
	struct vp_module mod = { "/bin/prog", NULL, 0, 0 };
	struct vp_func f = { 0, 0x1000, 16, 0x1000, 0, VP_INSN_EMULATED, "work", "work", "work" };
	struct vp_callsite cs = { 0, 0, 0x1010, "main+0x10", "prog.c", 7 };
	struct vp_process target = { 100, 0, 0, "" }, child = { 200, 100, VP_PROC_FORKED, "" };
	struct vp_trailer tr = { .flags = VP_END_EXITED, .unfollowed = 5 };
	struct vp_header h = { 0 };
	struct vp_writer *w;
	uint64_t t = 1000;

	h.unit = VP_UNIT_NS;
	h.clock = CLOCK_MONOTONIC;
	h.pid = 100;
	h.nmodules = 1;
	h.modules = &mod;
	h.nfuncs = 1;
	h.funcs = &f;
	w = vp_writer_new(path, &h);
	if (!w)
		sysbail("vp_writer_new");
	vp_writer_thread(w, 0, 100, 100);
	vp_writer_callsite(w, 0, &cs);
	vp_writer_process(w, &target);
	vp_writer_process(w, &child);
	vp_writer_thread(w, 1, 200, 200);
	for (int i = 0; i < 5; i++) {
		uint32_t thread = i < 3 ? 0 : 1;
		struct vp_event in = { t, 0x7000, 0, 0, thread, VP_EV_ENTRY, 0, 0, 0 };
		struct vp_event out = { t + 10, 0x7008, 0, UINT32_MAX, thread, VP_EV_EXIT, 0, 0, 0 };

		vp_writer_event(w, &in);
		vp_writer_event(w, &out);
		t += 100;
	}
	child.flags |= VP_PROC_EXEC;
	child.exec = "/bin/true";
	vp_writer_process(w, &child);
	if (vp_writer_finish(w, &tr))
		bail("cannot write %s", path);
}

/* Events of process @pid (0: all) read from @path: "N:T" with T the
 * sum of their thread indexes, or -errno. */
static long count_of(const char *path, uint32_t pid, struct vp_reader **ret)
{
	struct vp_event buf[64];
	struct vp_reader *r;
	long n, total = 0, threads = 0;
	char err[512];

	if (vp_reader_open(path, &r, err, sizeof(err)))
		return -1;
	vp_reader_set_pid(r, pid);
	while ((n = vp_reader_next(r, buf, 64)) > 0) {
		for (long i = 0; i < n; i++)
			threads += buf[i].thread;
		total += n;
	}
	if (n < 0) {
		diag("%s", vp_reader_error(r));
		vp_reader_free(r);
		return n;
	}
	if (ret)
		*ret = r;
	else
		vp_reader_free(r);
	return total * 1000 + threads;
}

static void test_processes(void)
{
	char *p = path_of("procs.data"), *p3 = path_of("procs3.data"), err[512];
	const struct vp_process *pr;
	struct vp_reader *r = NULL;
	unsigned char *b;
	size_t len;

	write_procs(p);
	is_int(10 * 1000 + 4, count_of(p, 0, &r), "processes: every event, both threads");
	if (r) {
		is_int(2, vp_reader_nprocesses(r), "processes: two PROCESS records' pids");
		pr = vp_reader_process(r, 1);
		ok(pr && pr->pid == 200 && pr->ppid == 100 &&
		   pr->flags == (VP_PROC_FORKED | VP_PROC_EXEC) && !strcmp(pr->exec, "/bin/true"),
		   "processes: the later record of a pid updates it (exec'd /bin/true)");
		pr = vp_reader_process(r, 0);
		ok(pr && pr->pid == 100 && !pr->ppid && !pr->flags && !*pr->exec,
		   "processes: the target, ppid 0");
		ok(!vp_reader_process(r, 2), "processes: no third one");
		is_int(5, vp_reader_trailer(r)->unfollowed, "processes: children not followed, in END");
		is_int(200, vp_reader_thread(r, 1)->pid, "processes: the child's thread has its pid");
		vp_reader_free(r);
	} else {
		skip_block(6, "the file did not read");
	}
	is_int(6 * 1000 + 0, count_of(p, 100, NULL), "--pid 100: the target's 6 events only");
	is_int(4 * 1000 + 4, count_of(p, 200, NULL), "--pid 200: the child's 4 events only");
	is_int(0, count_of(p, 300, NULL), "--pid of no process: no event");

	/* The same records in a version-3 file: an error naming the type. */
	b = read_all(p, &len);
	b[8] = 3;
	write_bytes(p3, b, len);
	ok(count_of(p3, 0, NULL) < 0, "version 3 with a PROCESS record: rejected");
	if (vp_reader_open(p3, &r, err, sizeof(err)) == 0) {
		struct vp_event buf[64];

		while (vp_reader_next(r, buf, 64) > 0)
			;
		ok(strstr(vp_reader_error(r), ": unknown control record type 9") != NULL,
		   "... as an unknown control record type 9: %s", vp_reader_error(r));
		vp_reader_free(r);
	} else {
		skip("cannot open: %s", err);
	}
	free(b);
	free(p);
	free(p3);
}

/*
 * META INPUT_SIZE (key 15): optional, so written only when given, read
 * back exactly; and since it changes nothing else, a reader that does not
 * know the key (here: the key renamed to an unknown one, the CRC fixed)
 * reads the file all the same, as older readers do.
 */
static void test_input_size(const char *good)
{
	char err[512], *p = path_of("size.data"), *q = path_of("size-unknown.data");
	struct vp_header h = { 0 };
	struct vp_writer *w;
	struct vp_reader *r;
	unsigned char *b;
	size_t len, plen, off;
	uint32_t crc;

	if (vp_reader_open(good, &r, err, sizeof(err)) == 0) {
		ok(!vp_reader_header(r)->has_input_size, "input size: absent unless given");
		vp_reader_free(r);
	} else {
		ok(0, "input size: %s", err);
	}
	h.unit = VP_UNIT_NS;
	h.clock = CLOCK_MONOTONIC;
	h.host = "";
	h.has_input_size = 1;
	h.input_size = 300;
	w = vp_writer_new(p, &h);
	if (!w || vp_writer_finish(w, &(struct vp_trailer){ .flags = VP_END_EXITED }))
		sysbail("writing %s", p);
	if (vp_reader_open(p, &r, err, sizeof(err)) == 0) {
		ok(vp_reader_header(r)->has_input_size && vp_reader_header(r)->input_size == 300,
		   "input size: read back");
		is_int(VP_DATA_VERSION, vp_reader_header(r)->version,
		       "input size: the version stays");
		vp_reader_free(r);
	} else {
		ok(0, "input size: %s", err);
		ok(0, "input size: version");
	}
	/* key 15, length 2, ULEB 300 = ac 02: the META payload's last bytes */
	b = read_all(p, &len);
	plen = (size_t)b[VP_FILE_HEADER_SIZE + 8] | (size_t)b[VP_FILE_HEADER_SIZE + 9] << 8 |
	       (size_t)b[VP_FILE_HEADER_SIZE + 10] << 16 | (size_t)b[VP_FILE_HEADER_SIZE + 11] << 24;
	off = VP_FILE_HEADER_SIZE + VP_CHUNK_HEADER_SIZE + plen - 4;
	ok(!memcmp(b + off, "\x0f\x02\xac\x02", 4), "input size: encoded as key 15, u 300");
	b[off] = 99;
	crc = (uint32_t)crc32(0, b + VP_FILE_HEADER_SIZE + VP_CHUNK_HEADER_SIZE, (uInt)plen);
	for (int i = 0; i < 4; i++)
		b[VP_FILE_HEADER_SIZE + 12 + i] = (unsigned char)(crc >> (8 * i));
	write_bytes(q, b, len);
	if (vp_reader_open(q, &r, err, sizeof(err)) == 0) {
		ok(!vp_reader_header(r)->has_input_size, "unknown key: skipped, the file reads");
		vp_reader_free(r);
	} else {
		ok(0, "unknown key: %s", err);
	}
	free(b);
	free(p);
	free(q);
}

/*
 * Auto mode marks phase 1's file interrupted after the fact: a new END
 * chunk replaces the old one, the rest of the file byte for byte as it
 * was.  A file without an END chunk is refused and left alone.
 */
static void test_rewrite_end(void)
{
	char *p = path_of("rewrite.data"), err[512];
	unsigned char *before, *after;
	size_t len0, len1;
	struct vp_reader *r = NULL;
	struct vp_trailer tr;
	long n;
	off_t end_at;

	write_good(p, 1000, 1);
	before = read_all(p, &len0);
	if (read_back(p, err, sizeof(err), &r) != 1000)
		bail("rewrite: cannot read the file back: %s", err);
	tr = *vp_reader_trailer(r);
	vp_reader_free(r);
	/* where END begins: the last chunk header of type 3 */
	end_at = len0 >= 5 ? (off_t)len0 - 5 : 0;
	while (end_at > 0 && memcmp(before + end_at, "VPCK\3", 5))
		end_at--;
	tr.flags = (tr.flags & ~(uint32_t)VP_END_DETACHED) | VP_END_EXITED | VP_END_INTERRUPTED;
	tr.wait_status = 2; /* killed by SIGINT */
	is_int(0, vp_datafile_rewrite_end(p, &tr), "rewrite: END replaced");
	after = read_all(p, &len1);
	ok(end_at > 0 && len1 > (size_t)end_at && !memcmp(before, after, (size_t)end_at),
	   "rewrite: every chunk before END as it was (%lld bytes)", (long long)end_at);
	n = read_back(p, err, sizeof(err), &r);
	is_int(1000, n, "rewrite: the events read back identically");
	if (n == 1000) {
		const struct vp_trailer *t = vp_reader_trailer(r);

		ok(t->present && t->flags == (VP_END_EXITED | VP_END_INTERRUPTED) &&
		   t->wait_status == 2,
		   "rewrite: the new END says interrupted, killed by SIGINT (flags %#x)",
		   (unsigned)t->flags);
		ok(t->events == 1000 && t->end_time == tr.end_time,
		   "rewrite: the rest of END as it was");
		ok(vp_reader_warning(r) == NULL, "rewrite: no warning");
		vp_reader_free(r);
	} else {
		skip_block(3, "not read back: %s", err);
	}
	free(before);
	free(after);
	free(p);

	p = path_of("rewrite-unfinished.data");
	write_good(p, 1000, 0);
	before = read_all(p, &len0);
	is_int(-EBADMSG, vp_datafile_rewrite_end(p, &tr), "rewrite: no END chunk: -EBADMSG");
	after = read_all(p, &len1);
	ok(len0 == len1 && !memcmp(before, after, len0), "... and the file left as it was");
	free(before);
	free(after);
	free(p);
	p = path_of("rewrite-none.data");
	is_int(-ENOENT, vp_datafile_rewrite_end(p, &tr), "rewrite: no file: -ENOENT");
	free(p);
}

int main(void)
{
	struct vp_reader *r = NULL;
	const struct vp_header *h;
	char err[512], *good, *p, *want;
	unsigned char *bytes;
	size_t len;
	long n;
	struct stat st;

	plan(48 + 36 + 39 + 5 + 12 + 5 + 2 + 3 + 14 + 9);
	dir = test_tmpdir();
	good = path_of("good.data");

	/* Round trip. */
	write_good(good, NEV, 1);
	n = read_back(good, err, sizeof(err), &r);
	is_int(NEV, n, "all %d events read back identically", NEV);
	if (n != NEV)
		bail("cannot continue: %s", err);
	h = vp_reader_header(r);
	is_int(VP_UNIT_NS, h->unit, "unit");
	is_int(4242, h->pid, "pid");
	is_int(2, h->argc, "argc");
	is_string("arg one", h->argv[1], "argv with a space");
	is_string("/bin/prog", h->modules[0].path, "module path");
	is_int(5, h->modules[0].build_id_len, "build-id length (with a NUL byte inside)");
	ok(!memcmp(h->modules[0].build_id, "\xde\xad\x00\xbe\xef", 5), "build-id bytes");
	is_uint(123456789, h->modules[0].size, "module size (after the build-id)");
	is_int(3, h->nfuncs, "function count");
	is_string("f", h->funcs[1].base, "clone base name");
	is_string("g()", h->funcs[2].display, "demangled name");
	is_int(VP_FUNC_CLONE, h->funcs[1].flags, "function flags");
	is_int(16000, h->costs[0].in_window_ns, "probe cost");
	is_int(2, vp_reader_nthreads(r), "threads defined");
	is_int(4243, vp_reader_thread(r, 1)->tid, "thread tid");
	is_int(2, vp_reader_ncallsites(r), "call sites defined");
	is_string("prog.c", vp_reader_callsite(r, 0)->file, "call-site file");
	is_int(42, vp_reader_callsite(r, 0)->line, "call-site line");
	is_int(VP_CS_TRAMPOLINE, vp_reader_callsite(r, 1)->flags, "trampoline call site");
	is_int(11, vp_reader_lost(r), "lost records");
	ok(h->version == VP_DATA_VERSION && !h->backend && !h->offcpu,
	   "version 3 without backend or off-CPU times");
	is_int(-ENODATA, vp_reader_set_time(r, VP_TIME_CPU), "no off-CPU times: no CPU time base");
	is_int(-ENODATA, vp_reader_set_time(r, VP_TIME_OFFCPU),
	       "no off-CPU times: no off-CPU time base");
	is_int(0, vp_reader_set_time(r, VP_TIME_WALL), "no off-CPU times: wall time base");
	ok(vp_reader_trailer(r)->present, "trailer present");
	is_int(NEV, vp_reader_trailer(r)->events, "trailer event count");
	is_int(3 << 8, vp_reader_trailer(r)->wait_status, "trailer wait status");
	ok(vp_reader_warning(r) == NULL, "no warning for a complete file");
	vp_reader_rewind(r);
	{
		static struct vp_event buf[NEV / 10];
		long k, again = 0;

		while ((k = vp_reader_next(r, buf, NEV / 10)) > 0)
			again += k;
		is_int(NEV, again, "rewind: a second pass reads everything again");
	}
	vp_reader_free(r);
	stat(good, &st);
	ok((double)st.st_size / NEV <= 16.0, "compact: %.2f bytes per event",
	   (double)st.st_size / NEV);

	/* Damage. */
	bytes = read_all(good, &len);
	expect_open_error("empty.data", "", 0,
			  "offset 0: file is empty (expected a varperf data file)");
	expect_open_error("magic.data", "ELF\x7f\0\0\0\0\1\0\0\0\0\0\0\0", 16,
			  "offset 0: not a varperf data file (bad magic)");
	{
		unsigned char v[16];

		memcpy(v, bytes, 16);
		v[8] = 99;
		expect_open_error("version.data", v, 16,
				  "offset 8: unsupported format version 99 (this varperf reads "
				  "versions 1 to 5)");
	}
	expect_open_error("short.data", bytes, 12,
			  "offset 12: file ends inside the file header (truncated)");
	expect_open_error("nometa.data", bytes, 40,
			  "offset 16: file ends before its META chunk is complete (truncated)");
	{
		unsigned char *c = bmalloc(len);

		memcpy(c, bytes, len);
		c[16 + 16 + 3] ^= 0x40; /* inside the META payload */
		p = path_of("crc.data");
		write_bytes(p, c, len);
		ok(vp_reader_open(p, &r, err, sizeof(err)) < 0, "bad META checksum rejected");
		ok(strstr(err, "offset 28: chunk checksum mismatch") != NULL, "... with offset: %s",
		   err);
		free(p);
		free(c);
	}

	/* Corrupt an EVENTS chunk in the middle: an error, no numbers. */
	{
		unsigned char *c = bmalloc(len);

		memcpy(c, bytes, len);
		c[len / 2] ^= 0x01;
		p = path_of("mid.data");
		write_bytes(p, c, len);
		n = read_back(p, err, sizeof(err), &r);
		ok(n < 0, "corrupt events chunk is an error");
		ok(strstr(err, "chunk checksum mismatch") != NULL, "... %s", err);
		free(p);
		free(c);
	}

	/* Truncated tail: complete chunks are read, and a warning says so. */
	p = path_of("cut.data");
	write_bytes(p, bytes, len - 100);
	n = read_back(p, err, sizeof(err), &r);
	ok(n > NEV / 2 && n < NEV, "truncated: %ld complete events still read", n);
	if (n > 0) {
		ok(vp_reader_warning(r) && strstr(vp_reader_warning(r), "(truncated)"),
		   "truncated: warned: %s", vp_reader_warning(r) ? vp_reader_warning(r) : "none");
		ok(!vp_reader_trailer(r)->present, "truncated: no trailer");
		vp_reader_free(r);
	} else {
		skip_block(2, "nothing read");
	}
	free(p);

	/* Recorder killed before the END chunk: complete, but warned. */
	p = path_of("unfinished.data");
	write_good(p, 1000, 0);
	n = read_back(p, err, sizeof(err), &r);
	is_int(1000, n, "unfinished: every flushed event read");
	if (n > 0) {
		want = basprintf("'%s': recording incomplete: no END chunk (the recorder did not "
				 "finish)",
				 p);
		is_string(want, vp_reader_warning(r), "unfinished: warning");
		free(want);
		vp_reader_free(r);
	} else {
		skip("nothing read");
	}
	free(p);
	free(bytes);

	test_version1(good);
	test_version2(good);
	test_input_size(good);
	test_processes();
	test_samples();
	test_compensation();
	test_tracked_costs();
	test_writer_fd();
	test_offcpu_round_trip();
	test_offcpu_damage();
	test_time_bases();
	test_blocked_bases();
	test_rewrite_end();
	free(good);
	test_tmpdir_free(dir);
	return 0;
}
