/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * gen-crafted.c - write data files of the shapes an attacker would craft,
 * valid to the last checksum (core's own writer makes them), for the tests
 * of report's limits and as seeds of the fuzzing corpus:
 *
 *   gen-crafted deep-sample N FILE    combined recording: a probed call,
 *                                      and two samples of N frames each
 *   gen-crafted inline-frame N FILE   sampling: one sample of N frames of
 *                                      one address with N inlined levels
 *   gen-crafted wide N FILE           probing: one invocation of main
 *                                      calling work from N call sites
 *   gen-crafted wide-var N FILE       probing: N/10 invocations of main,
 *                                      each calling work from 10 new call
 *                                      sites, every third one 50 times
 *                                      longer: N children with variance
 *   gen-crafted clamped N FILE        costly's, with calls shorter than
 *                                     their probes' cost inside and a
 *                                     calibration spread of 70 ns
 *   gen-crafted costly N FILE         probing with calibrated probe costs:
 *                                      N invocations of main, each calling
 *                                      work 5 times, and 3 records lost
 *   gen-crafted quantiles N FILE      probing: N invocations of main, two
 *                                      in five calling work once, for
 *                                      1 us + x^3 / 10 ns (x from an LCG,
 *                                      0 to 999: up to 100 ms); prints
 *                                      work's exact nearest-rank quantiles
 *                                      and how many of main's calls
 *                                      called it
 *   gen-crafted markup N FILE         combined: N invocations of main
 *                                      calling work twice, a sample every
 *                                      tenth; functions, file and command
 *                                      named with markup (<&>"')
 *   gen-crafted sampled N FILE        sampling: N samples, 1 ms of CPU time
 *                                      each, 1 ms apart, of main, every
 *                                      third one in main -> work: a run
 *                                      of N ms for predict, whose size
 *                                      a manifest gives
 *   gen-crafted deep-call N FILE      probing: main calls work, which
 *                                      calls itself, N levels deep, each
 *                                      level 1 us of its own: N contexts
 *                                      whose folded stacks take N^2 / 2
 *                                      frames
 *   gen-crafted siblings N FILE       sampling: N samples, 1 ms each; of
 *                                      every four, three in work called
 *                                      from main's lines 11, 12 and 13 (one
 *                                      each), one in code of libz.so.1 no
 *                                      symbol covers, called from main
 *                                      through more such code: rows of one
 *                                      function and unnamed frames to merge
 *   gen-crafted corpus DIR            small files of each shape in DIR
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/datafile.h"

enum { SP = 0x7ffd00000000ULL };

static char *plain_names[] = { "main", "work" };
/* what an HTML report must escape, in every name it shows */
static char *markup_names[] = { "main<&>\"'", "work</title><script>alert(1)</script>" };
static char **names = plain_names;
static char markup_file[] = "<b>&amp;prog.c";
static struct vp_module module = { "/crafted/prog", NULL, 0, 0 };

static void header(struct vp_header *h, struct vp_func *funcs, uint32_t mode, size_t nfuncs)
{
	memset(h, 0, sizeof(*h));
	memset(funcs, 0, 2 * sizeof(*funcs));
	for (uint32_t i = 0; i < 2; i++) {
		funcs[i].addr = funcs[i].probe_off = 0x1000 + 0x100 * i;
		funcs[i].size = 0x100;
		funcs[i].insn_class = VP_INSN_EMULATED;
		funcs[i].name = funcs[i].display = funcs[i].base = names[i];
	}
	h->unit = VP_UNIT_NS;
	h->clock = CLOCK_MONOTONIC;
	h->nmodules = 1;
	h->modules = &module;
	h->nfuncs = nfuncs;
	h->funcs = funcs;
	h->mode = mode;
	if (mode != VP_MODE_PROBE) {
		h->sampling.event = VP_SEV_CPU_CLOCK;
		h->sampling.period = 1000000;
		h->sampling.freq = 1000;
		h->sampling.stack_size = 8192;
	}
}

/* Entry and exit of @func from call site @cs, @dur ns apart. */
static int call(struct vp_writer *w, uint64_t *now, uint32_t func, uint32_t cs, uint64_t sp,
		uint64_t dur)
{
	struct vp_event in = { *now, sp, func, cs, 0, VP_EV_ENTRY, 0, 0, 0 };
	struct vp_event out = { *now + dur, sp + 8, func, 0, 0, VP_EV_EXIT, 0, 0, 0 };

	*now += dur + 10;
	return vp_writer_event(w, &in) || vp_writer_event(w, &out) ? -1 : 0;
}

static int symbols(struct vp_writer *w)
{
	for (uint32_t i = 0; i < 2; i++) {
		struct vp_symbol s = { 0, 0, 0x1000 + 0x100 * i, 0x100, names[i], names[i] };

		if (vp_writer_symbol(w, i, &s))
			return -1;
	}
	return 0;
}

/* @n frames, innermost first, of frame ids @a and @b alternating from
 * the outermost, which is @a. */
static int sample(struct vp_writer *w, uint64_t time, uint32_t n, uint32_t a, uint32_t b)
{
	uint32_t *frames = malloc((n ? n : 1) * sizeof(*frames));
	uint64_t *cfas = malloc((n ? n : 1) * sizeof(*cfas));
	struct vp_sample s = { time, 1000000, 0, 0, 0, n, frames, cfas };
	int err = -1;

	if (frames && cfas) {
		for (uint32_t i = 0; i < n; i++) {
			frames[i] = (n - 1 - i) & 1 ? b : a;
			cfas[i] = SP - 0x10000 + 32ULL * i;
		}
		err = vp_writer_sample(w, &s) ? -1 : 0;
	}
	free(frames);
	free(cfas);
	return err;
}

static int deep_sample(struct vp_writer *w, uint32_t n)
{
	struct vp_frame_level lv[2] = { { 0, 10, "prog.c" }, { 1, 20, "prog.c" } };
	struct vp_callsite cs = { 0, 0, 0x1010, "main+0x10", "prog.c", 10 };
	uint64_t now = 1000000;
	int err = vp_writer_thread(w, 0, 100, 100) || vp_writer_callsite(w, 0, &cs) || symbols(w);

	for (uint32_t i = 0; i < 2 && !err; i++) {
		struct vp_frame_def f = { 0, 0x1010 + 0x100 * i, 1, &lv[i] };

		err = vp_writer_frame(w, i, &f);
	}
	for (int k = 0; k < 3 && !err; k++)
		err = call(w, &now, 1, 0, SP - 64, 1000 + k);
	for (int k = 0; k < 2 && !err; k++)
		err = sample(w, now += 1000000, n, 0, 1);
	return err ? -1 : 0;
}

static int inline_frame(struct vp_writer *w, uint32_t n)
{
	struct vp_frame_level *lv = calloc(n ? n : 1, sizeof(*lv));
	struct vp_frame_def f = { 0, 0x1010, n, lv };
	int err = !lv || vp_writer_thread(w, 0, 100, 100) || symbols(w);

	/* every level the same function, inlined into itself at line i */
	for (uint32_t i = 0; lv && i < n; i++) {
		lv[i].symbol = 1;
		lv[i].line = i + 1;
		lv[i].file = "prog.c";
	}
	if (!err)
		err = vp_writer_frame(w, 0, &f) || sample(w, 2000000, n, 0, 0);
	free(lv);
	return err ? -1 : 0;
}

static int wide(struct vp_writer *w, uint32_t n)
{
	uint64_t now = 1000000;
	struct vp_event in = { now, SP, 0, 0, 0, VP_EV_ENTRY, 0, 0, 0 };
	struct vp_callsite cs = { VP_CS_NONE, 0, 0, "", "", 0 };
	int err = vp_writer_thread(w, 0, 100, 100) || vp_writer_callsite(w, 0, &cs) ||
		  vp_writer_event(w, &in);

	for (uint32_t i = 1; i <= n && !err; i++) {
		struct vp_callsite c = { 0, 0, 0x1010 + i, "main", "prog.c", i };

		err = vp_writer_callsite(w, i, &c) || call(w, &now, 1, i, SP - 64, 100 + i % 17);
	}
	if (!err) {
		struct vp_event out = { now + 10, SP + 8, 0, 0, 0, VP_EV_EXIT, 0, 0, 0 };

		err = vp_writer_event(w, &out);
	}
	return err ? -1 : 0;
}

/*
 * main's invocation r calls work from call sites 10r+1..10r+10, each for
 * 100 + i % 17 ns, and 5000 ns more when r % 3 == 0: a high-variance main
 * whose N children each carry a little of its variance.
 */
static int wide_var(struct vp_writer *w, uint32_t n)
{
	uint64_t now = 1000000;
	struct vp_callsite cs = { VP_CS_NONE, 0, 0, "", "", 0 };
	int err = vp_writer_thread(w, 0, 100, 100) || vp_writer_callsite(w, 0, &cs);

	for (uint32_t r = 0, i = 1; i <= n && !err; r++) {
		struct vp_event in = { now, SP, 0, 0, 0, VP_EV_ENTRY, 0, 0, 0 };
		struct vp_event out;

		err = vp_writer_event(w, &in);
		for (uint32_t k = 0; k < 10 && i <= n && !err; k++, i++) {
			struct vp_callsite c = { 0, 0, 0x1010 + i, "main", "prog.c", i };

			err = vp_writer_callsite(w, i, &c) ||
			      call(w, &now, 1, i, SP - 64, 100 + i % 17 + (r % 3 ? 0 : 5000));
		}
		now += 10;
		out = (struct vp_event){ now, SP + 8, 0, 0, 0, VP_EV_EXIT, 0, 0, 0 };
		err = err || vp_writer_event(w, &out);
		now += 10;
	}
	return err ? -1 : 0;
}

/*
 * main's invocation r calls work 5 times, the k-th for 2000 + 400 k ns,
 * 30 us more when r % 4 == 0; probe costs are 300 ns inside the probed
 * invocation and 700 ns in its caller per call (one class for both
 * functions), and the kernel lost 3 records: what compensation and the
 * lost-record accounting act on, whoever reads the file.
 */
static int costly(struct vp_writer *w, uint32_t n)
{
	uint64_t now = 1000000;
	struct vp_callsite none = { VP_CS_NONE, 0, 0, "", "", 0 };
	struct vp_callsite c = { 0, 0, 0x1020, "main", "prog.c", 7 };
	int err = vp_writer_thread(w, 0, 100, 100) || vp_writer_callsite(w, 0, &none) ||
		  vp_writer_callsite(w, 1, &c);

	for (uint32_t r = 0; r < n && !err; r++) {
		struct vp_event in = { now, SP, 0, 0, 0, VP_EV_ENTRY, 0, 0, 0 };
		struct vp_event out;

		err = vp_writer_event(w, &in);
		/* 1.5 us between calls: more than their probes cost, so that
		 * no compensated duration is clamped */
		for (uint32_t k = 0; k < 5 && !err; k++) {
			now += 1500;
			err = call(w, &now, 1, 1, SP - 64, 2000 + 400 * k + (r % 4 ? 0 : 30000));
		}
		now += 1500;
		out = (struct vp_event){ now, SP + 8, 0, 0, 0, VP_EV_EXIT, 0, 0, 0 };
		err = err || vp_writer_event(w, &out);
		now += 1500;
	}
	err = err || vp_writer_lost(w, 0, 3);
	return err ? -1 : 0;
}

/*
 * As costly, but the first three of work's 5 calls in each invocation of
 * main take 200 ns, under the 300 ns its probes cost inside: compensation
 * clamps them to 0, and the reports say so (~0); the other two 5 us.
 */
static int clamped(struct vp_writer *w, uint32_t n)
{
	uint64_t now = 1000000;
	struct vp_callsite none = { VP_CS_NONE, 0, 0, "", "", 0 };
	struct vp_callsite c = { 0, 0, 0x1020, "main", "prog.c", 7 };
	int err = vp_writer_thread(w, 0, 100, 100) || vp_writer_callsite(w, 0, &none) ||
		  vp_writer_callsite(w, 1, &c);

	for (uint32_t r = 0; r < n && !err; r++) {
		struct vp_event in = { now, SP, 0, 0, 0, VP_EV_ENTRY, 0, 0, 0 };
		struct vp_event out;

		err = vp_writer_event(w, &in);
		for (uint32_t k = 0; k < 5 && !err; k++) {
			now += 1500;
			err = call(w, &now, 1, 1, SP - 64, k < 3 ? 200 : 5000);
		}
		now += 1500;
		out = (struct vp_event){ now, SP + 8, 0, 0, 0, VP_EV_EXIT, 0, 0, 0 };
		err = err || vp_writer_event(w, &out);
		now += 1500;
	}
	return err ? -1 : 0;
}

/*
 * main's invocation r calls work twice from one call site, each for 1 us,
 * 20 us when r % 5 == 0 (a high-variance work, and main); after every
 * tenth a sample of main -> work.  The names are markup_names[], the call
 * site's file markup_file.
 */
static int markup(struct vp_writer *w, uint32_t n)
{
	struct vp_frame_level lv[2] = { { 0, 7, markup_file }, { 1, 20, markup_file } };
	struct vp_callsite none = { VP_CS_NONE, 0, 0, "", "", 0 };
	struct vp_callsite c = { 0, 0, 0x1010, markup_names[0], markup_file, 7 };
	uint64_t now = 1000000;
	int err = vp_writer_thread(w, 0, 100, 100) || vp_writer_callsite(w, 0, &none) ||
		  vp_writer_callsite(w, 1, &c) || symbols(w);

	for (uint32_t i = 0; i < 2 && !err; i++) {
		struct vp_frame_def f = { 0, 0x1010 + 0x100 * i, 1, &lv[i] };

		err = vp_writer_frame(w, i, &f);
	}
	for (uint32_t r = 0; r < n && !err; r++) {
		struct vp_event in = { now, SP, 0, 0, 0, VP_EV_ENTRY, 0, 0, 0 };
		struct vp_event out;

		err = vp_writer_event(w, &in);
		for (int k = 0; k < 2 && !err; k++)
			err = call(w, &now, 1, 1, SP - 64, r % 5 ? 1000 : 20000);
		out = (struct vp_event){ now, SP + 8, 0, 0, 0, VP_EV_EXIT, 0, 0, 0 };
		err = err || vp_writer_event(w, &out);
		now += 100;
		if (r % 10 == 9 && !err)
			err = sample(w, now, 2, 0, 1);
		now += 100;
	}
	return err ? -1 : 0;
}

static int sampled(struct vp_writer *w, uint32_t n)
{
	struct vp_frame_level lv[2] = { { 0, 10, "prog.c" }, { 1, 20, "prog.c" } };
	int err = vp_writer_thread(w, 0, 100, 100) || symbols(w);

	for (uint32_t i = 0; i < 2 && !err; i++) {
		struct vp_frame_def f = { 0, 0x1010 + 0x100 * i, 1, &lv[i] };

		err = vp_writer_frame(w, i, &f);
	}
	for (uint32_t i = 0; i < n && !err; i++)
		err = sample(w, 1000000 * (uint64_t)(i + 1), i % 3 ? 1 : 2, 0, 1);
	return err ? -1 : 0;
}

static int siblings(struct vp_writer *w, uint32_t n)
{
	static char unknown[] = "[unknown in libz.so.1]";
	struct vp_symbol u = { VP_SYM_NONAME, 0, 0, 0, unknown, unknown };
	struct vp_frame_level lv[6] = { { 0, 11, "prog.c" }, { 0, 12, "prog.c" },
					{ 0, 13, "prog.c" }, { 1, 20, "prog.c" },
					{ 2, 0, "" },	     { 2, 0, "" } };
	int err = vp_writer_thread(w, 0, 100, 100) || symbols(w) || vp_writer_symbol(w, 2, &u);

	for (uint32_t i = 0; i < 6 && !err; i++) {
		struct vp_frame_def f = { 0, 0x1010 + 0x10 * i + (i >= 3 ? 0x100 : 0), 1, &lv[i] };

		err = vp_writer_frame(w, i, &f);
	}
	for (uint32_t i = 0; i < n && !err; i++) {
		/* innermost first */
		uint32_t in_work[2] = { 3, i % 4 }, in_lib[3] = { 4, 5, 0 };
		uint64_t cfas[3] = { SP - 0x10000, SP - 0x10000 + 32, SP - 0x10000 + 64 };
		struct vp_sample smp = { 1000000 * (uint64_t)(i + 1), 1000000, 0, 0, 0, 2,
					 in_work, cfas };

		if (i % 4 == 3) {
			smp.nframes = 3;
			smp.frames = in_lib;
		}
		err = vp_writer_sample(w, &smp) ? -1 : 0;
	}
	return err ? -1 : 0;
}

static int deep_call(struct vp_writer *w, uint32_t n)
{
	struct vp_callsite none = { VP_CS_NONE, 0, 0, "", "", 0 };
	struct vp_callsite c = { 0, 0, 0x1120, "work", "prog.c", 30 };
	uint64_t now = 1000000;
	int err = vp_writer_thread(w, 0, 100, 100) || vp_writer_callsite(w, 0, &none) ||
		  vp_writer_callsite(w, 1, &c);

	for (uint32_t i = 0; i <= n && !err; i++) {
		struct vp_event in = { now, SP - 64ULL * i, i ? 1 : 0, i ? 1 : 0, 0, VP_EV_ENTRY, 0, 0, 0 };

		err = vp_writer_event(w, &in);
		now += 1000;
	}
	for (uint32_t i = n + 1; i-- > 0 && !err;) {
		struct vp_event out = { now, SP - 64ULL * i + 8, i ? 1 : 0, 0, 0, VP_EV_EXIT, 0, 0, 0 };

		err = vp_writer_event(w, &out);
		now += 10;
	}
	return err ? -1 : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Of @n sorted values, the one of rank ceil(q n) (1 at least). */
static uint64_t rank_of(const uint64_t *v, uint32_t n, double q)
{
	uint64_t r = (uint64_t)(q * n);

	if ((double)r < q * n)
		r++;
	return v[(r < 1 ? 1 : r) - 1];
}

static int quantiles(struct vp_writer *w, uint32_t n)
{
	uint64_t now = 1000000, *d = malloc((n ? n : 1) * sizeof(*d));
	uint32_t lcg = 99, k = 0;
	struct vp_callsite none = { VP_CS_NONE, 0, 0, "", "", 0 };
	struct vp_callsite c = { 0, 0, 0x1020, "main", "prog.c", 7 };
	int err = !d || vp_writer_thread(w, 0, 100, 100) || vp_writer_callsite(w, 0, &none) ||
		  vp_writer_callsite(w, 1, &c);

	for (uint32_t r = 0; r < n && !err; r++) {
		struct vp_event in = { now, SP, 0, 0, 0, VP_EV_ENTRY, 0, 0, 0 };
		struct vp_event out;

		err = vp_writer_event(w, &in);
		now += 100;
		if (r % 5 < 2 && !err) {
			uint64_t x;

			lcg = lcg * 1664525u + 1013904223u;
			x = (lcg >> 8) % 1000;
			d[k] = 1000 + x * x * x / 10;
			err = call(w, &now, 1, 1, SP - 64, d[k++]);
		}
		now += 100;
		out = (struct vp_event){ now, SP + 8, 0, 0, 0, VP_EV_EXIT, 0, 0, 0 };
		err = err || vp_writer_event(w, &out);
		now += 100;
	}
	if (!err && k) {
		qsort(d, k, sizeof(*d), cmp_u64);
		printf("quantiles work n=%u min=%llu p50=%llu p90=%llu p99=%llu p99_9=%llu "
		       "max=%llu\n",
		       k, (unsigned long long)d[0], (unsigned long long)rank_of(d, k, 0.5),
		       (unsigned long long)rank_of(d, k, 0.9), (unsigned long long)rank_of(d, k, 0.99),
		       (unsigned long long)rank_of(d, k, 0.999), (unsigned long long)d[k - 1]);
		printf("path main work calls=%u of=%u\n", k, n);
	}
	free(d);
	return err ? -1 : 0;
}

static int write_file(const char *shape, uint32_t n, const char *path)
{
	static const struct {
		const char *name;
		uint32_t mode;
		size_t nfuncs;
		int (*fn)(struct vp_writer *w, uint32_t n);
	} shapes[] = {
		{ "deep-sample", VP_MODE_COMBINED, 2, deep_sample },
		{ "inline-frame", VP_MODE_SAMPLE, 0, inline_frame },
		{ "wide", VP_MODE_PROBE, 2, wide },
		{ "wide-var", VP_MODE_PROBE, 2, wide_var },
		{ "costly", VP_MODE_PROBE, 2, costly },
		{ "clamped", VP_MODE_PROBE, 2, clamped },
		{ "quantiles", VP_MODE_PROBE, 2, quantiles },
		{ "markup", VP_MODE_COMBINED, 2, markup },
		{ "sampled", VP_MODE_SAMPLE, 0, sampled },
		{ "deep-call", VP_MODE_PROBE, 2, deep_call },
		{ "siblings", VP_MODE_SAMPLE, 0, siblings },
	};
	static char *markup_argv[] = { "/crafted/<prog>", "a&b" };
	static struct vp_probe_cost cost = { VP_INSN_EMULATED, 300, 700, 0 };
	/* clamped: a calibration whose blocks spread by 10 % */
	static struct vp_probe_cost spread_cost = { VP_INSN_EMULATED, 300, 700, 70 };
	struct vp_trailer tr = { 0 };
	struct vp_func funcs[2];
	struct vp_header h;
	struct vp_writer *w;

	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		if (strcmp(shape, shapes[i].name))
			continue;
		if (shapes[i].fn == markup)
			names = markup_names;
		header(&h, funcs, shapes[i].mode, shapes[i].nfuncs);
		if (shapes[i].fn == markup) {
			h.argc = 2;
			h.argv = markup_argv;
		}
		if (shapes[i].fn == costly || shapes[i].fn == clamped) {
			h.ncosts = 1;
			h.costs = shapes[i].fn == clamped ? &spread_cost : &cost;
		}
		w = vp_writer_new(path, &h);
		if (!w) {
			fprintf(stderr, "gen-crafted: cannot create '%s': %s\n", path,
				strerror(errno));
			return 1;
		}
		tr.flags = VP_END_EXITED;
		if (shapes[i].fn(w, n) || vp_writer_finish(w, &tr)) {
			fprintf(stderr, "gen-crafted: cannot write '%s'\n", path);
			return 1;
		}
		return 0;
	}
	fprintf(stderr, "gen-crafted: unknown shape '%s'\n", shape);
	return 129;
}

/* Seeds of the fuzzing corpus: each shape, small enough to mutate fast. */
static int corpus(const char *dir)
{
	static const struct {
		const char *shape;
		uint32_t n;
	} seeds[] = {
		{ "deep-sample", 48 }, { "inline-frame", 12 }, { "wide", 40 }, { "deep-sample", 1 },
		{ "wide-var", 300 }, { "sampled", 60 }, { "deep-call", 30 },
	};
	char path[4096];
	int ret = 0;

	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]) && !ret; i++) {
		snprintf(path, sizeof(path), "%s/%s-%u.data", dir, seeds[i].shape, seeds[i].n);
		ret = write_file(seeds[i].shape, seeds[i].n, path);
	}
	return ret;
}

int main(int argc, char **argv)
{
	char *end;
	unsigned long n;

	if (argc == 3 && !strcmp(argv[1], "corpus"))
		return corpus(argv[2]);
	if (argc != 4) {
		fprintf(stderr, "usage: gen-crafted <deep-sample|inline-frame|wide|wide-var|costly|clamped|"
				"quantiles|markup|sampled|deep-call|siblings> N FILE\n"
				"       gen-crafted corpus DIR\n");
		return 129;
	}
	errno = 0;
	n = strtoul(argv[2], &end, 10);
	if (errno || *end || n > UINT32_MAX / 2) {
		fprintf(stderr, "gen-crafted: bad count '%s'\n", argv[2]);
		return 129;
	}
	return write_file(argv[1], (uint32_t)n, argv[3]);
}
