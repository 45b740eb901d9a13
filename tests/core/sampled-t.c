/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * sampled-t.c - tests for core/sampled.c: sampled stacks written to a data
 * file fold into the expected tree (call sites, inlined functions, kernel
 * and incomplete stacks, recursion counted once per function), invocations
 * are reconstructed from consecutive samples by frame and CFA, and the
 * statistics of Schneider's "Analysis": the normal quantile, the sample counts of the
 * paper's worked examples, and intervals that cover the true share at
 * their stated confidence.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/datafile.h"
#include "core/sampled.h"
#include "tests/tap/basic.h"

enum { S_MAIN, S_FRAME, S_WORK, S_STEP, S_REC };
enum { F_MAIN, F_FRAME, F_WORK_STEP, F_WORK, F_REC_CALL, F_REC_LEAF, F_FRAME2 };

struct smp {
	uint32_t thread, flags, n;
	uint32_t frames[4];
	uint64_t cfas[4];
};

/* See the comment in main() for what each sample stands for. */
static const struct smp samples[] = {
	{ 0, 0, 3, { F_WORK_STEP, F_FRAME, F_MAIN }, { 100, 200, 300 } },
	{ 0, 0, 3, { F_WORK, F_FRAME, F_MAIN }, { 100, 200, 300 } },
	{ 0, 0, 3, { F_WORK, F_FRAME2, F_MAIN }, { 100, 200, 300 } },
	{ 0, 0, 4, { F_REC_LEAF, F_REC_CALL, F_REC_CALL, F_MAIN }, { 50, 60, 70, 300 } },
	{ 0, VP_SAMPLE_KERNEL, 3, { F_WORK, F_FRAME, F_MAIN }, { 100, 200, 300 } },
	{ 0, VP_SAMPLE_TRUNCATED, 2, { F_WORK, F_FRAME }, { 100, 200 } },
	{ 1, 0, 3, { F_WORK, F_FRAME, F_MAIN }, { 100, 200, 300 } },
	{ 2, VP_SAMPLE_KERNEL, 0, { 0 }, { 0 } },
};

static void write_file(const char *path)
{
	static const char *const names[] = { "main", "frame", "work", "step", "rec" };
	struct vp_frame_level lv[] = {
		{ S_MAIN, 10, "t.c" },	/* F_MAIN */
		{ S_FRAME, 20, "t.c" }, /* F_FRAME */
		{ S_STEP, 5, "t.h" },	/* F_WORK_STEP, inner */
		{ S_WORK, 31, "t.c" },	/* F_WORK_STEP, outer */
		{ S_WORK, 33, "t.c" },	/* F_WORK */
		{ S_REC, 40, "t.c" },	/* F_REC_CALL */
		{ S_REC, 41, "t.c" },	/* F_REC_LEAF */
		{ S_FRAME, 22, "t.c" }, /* F_FRAME2 */
	};
	struct vp_frame_def frames[] = {
		{ 0, 0x1010, 1, &lv[0] }, { 0, 0x1110, 1, &lv[1] }, { 0, 0x1204, 2, &lv[2] },
		{ 0, 0x1220, 1, &lv[4] }, { 0, 0x1310, 1, &lv[5] }, { 0, 0x1320, 1, &lv[6] },
		{ 0, 0x1120, 1, &lv[7] },
	};
	struct vp_module mod = { "/bin/t", NULL, 0, 0 };
	struct vp_header h = { 0 };
	struct vp_trailer tr = { 0 };
	struct vp_writer *w;

	h.unit = VP_UNIT_NS;
	h.nmodules = 1;
	h.modules = &mod;
	h.mode = VP_MODE_SAMPLE;
	w = vp_writer_new(path, &h);
	if (!w)
		sysbail("vp_writer_new");
	vp_writer_thread(w, 0, 100, 100);
	vp_writer_thread(w, 1, 101, 100);
	vp_writer_thread(w, 2, 102, 100);
	for (uint32_t i = 0; i < 5; i++) {
		struct vp_symbol s = { i == S_STEP ? VP_SYM_INLINE : 0, 0, 0x1000 + 0x100 * i, 64,
				       (char *)names[i], (char *)names[i] };

		vp_writer_symbol(w, i, &s);
	}
	for (uint32_t i = 0; i < sizeof(frames) / sizeof(frames[0]); i++)
		vp_writer_frame(w, i, &frames[i]);
	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		struct vp_sample s = { 0 };

		s.time = 1000 * (i + 1);
		s.period = 1000;
		s.thread = samples[i].thread;
		s.flags = samples[i].flags;
		s.nframes = samples[i].n;
		s.frames = samples[i].frames;
		s.cfas = samples[i].cfas;
		vp_writer_sample(w, &s);
	}
	if (vp_writer_finish(w, &tr))
		sysbail("vp_writer_finish");
}

static uint32_t find(const struct vp_sampled *t, uint32_t parent, uint32_t sym, uint32_t frame,
		     uint32_t level)
{
	return vp_sampled_find(t, parent, VP_SNODE_FUNC, sym, frame, level);
}

static void test_tree(const char *dir)
{
	char *path = basprintf("%s/s.data", dir), err[512] = "";
	struct vp_event ev[4];
	struct vp_reader *r;
	struct vp_sampled t;
	uint32_t main_, frame, work, step, kern, inc, ifr, rec1, rec2, work2;
	struct vp_sdur d;

	write_file(path);
	if (vp_reader_open(path, &r, err, sizeof(err)))
		bail("%s", err);
	if (vp_sampled_init(&t))
		bail("vp_sampled_init");
	vp_reader_set_sample_handler(r, vp_sampled_handler, &t);
	is_int(0, vp_reader_next(r, ev, 4), "the file reads");
	vp_sampled_finish(&t);

	is_int(8, t.samples, "8 samples folded");
	is_int(8, t.nodes[0].samples, "root holds all of them");
	is_int(1, t.truncated, "one truncated");
	is_int(2, t.kernel, "two in the kernel");
	ok(t.time == 8000 && t.period == 1000, "time is the sum of the periods");

	main_ = find(&t, 0, S_MAIN, VP_SNODE_NONE, VP_SNODE_NONE);
	frame = find(&t, main_, S_FRAME, F_MAIN, 0);
	work = find(&t, frame, S_WORK, F_FRAME, 0);
	step = find(&t, work, S_STEP, F_WORK_STEP, 1);
	work2 = main_ == VP_SNODE_NONE ? VP_SNODE_NONE : find(&t, frame, S_WORK, F_FRAME2, 0);
	ok(main_ != VP_SNODE_NONE && frame != VP_SNODE_NONE && work != VP_SNODE_NONE &&
		   step != VP_SNODE_NONE && work2 != VP_SNODE_NONE,
	   "main/frame/work/step and the second call site of work exist");
	if (work == VP_SNODE_NONE || step == VP_SNODE_NONE || work2 == VP_SNODE_NONE)
		bail("cannot go on without the nodes");
	is_int(6, t.nodes[main_].samples, "main: every complete stack");
	is_int(4, t.nodes[work].samples, "work@frame:20: 4 samples");
	is_int(2, t.nodes[work].self, "work@frame:20: 2 of them its own");
	is_int(1, t.nodes[work2].samples, "work@frame:22: a node of its own");
	is_int(1, t.nodes[step].self, "the inlined step() is a node under work");
	kern = vp_sampled_find(&t, work, VP_SNODE_KERNEL, VP_SNODE_NONE, VP_SNODE_NONE,
			       VP_SNODE_NONE);
	ok(kern != VP_SNODE_NONE && t.nodes[kern].self == 1, "kernel time under work");
	inc = vp_sampled_find(&t, 0, VP_SNODE_INCOMPLETE, VP_SNODE_NONE, VP_SNODE_NONE,
			      VP_SNODE_NONE);
	ifr = inc == VP_SNODE_NONE ? VP_SNODE_NONE
				   : find(&t, inc, S_FRAME, VP_SNODE_NONE, VP_SNODE_NONE);
	ok(ifr != VP_SNODE_NONE && t.nodes[ifr].samples == 1 && t.nodes[inc].samples == 1,
	   "the truncated stack hangs under the incomplete node, alone");
	kern = vp_sampled_find(&t, 0, VP_SNODE_KERNEL, VP_SNODE_NONE, VP_SNODE_NONE,
			       VP_SNODE_NONE);
	ok(kern != VP_SNODE_NONE && t.nodes[kern].self == 1 && !t.broken,
	   "no user state: [kernel] under the root, not broken");
	rec1 = find(&t, main_, S_REC, F_MAIN, 0);
	rec2 = rec1 == VP_SNODE_NONE ? VP_SNODE_NONE : find(&t, rec1, S_REC, F_REC_CALL, 0);
	ok(rec2 != VP_SNODE_NONE && t.nodes[rec2].depth == 3, "recursion: one node per level");
	is_int(1, t.sym_samples[S_REC], "recursion: rec counted once per sample");
	is_int(6, t.sym_samples[S_WORK], "work: 6 samples in all its contexts");
	is_int(4, t.sym_self[S_WORK], "work: 4 of them in its own code");

	/* Invocations: see main() for the spans. */
	is_int(3, t.nodes[work].span.n, "work@frame:20: 3 invocations");
	is_double(4.0 / 3, t.nodes[work].span.mean, 1e-12, "work@frame:20: spans 2, 1, 1");
	is_int(3, t.nodes[frame].span.n, "frame: 3 invocations");
	is_int(3, t.nodes[frame].span.max, "frame: the longest spans 3 samples");
	is_int(2, t.nodes[main_].span.n, "main: one invocation per thread");
	is_int(5, t.nodes[main_].span.max, "main: 5 samples in thread 0");
	vp_sampled_durations(&t, frame, &d);
	ok(d.invocations == 3 && fabs(d.mean - 5000.0 / 3) < 1e-9 && fabs(d.quant - 0.6) < 1e-12,
	   "frame: mean duration 5/3 periods, quantisation 60%%");

	vp_sampled_release(&t);
	vp_reader_free(r);
	free(path);
}

/* Uniform in [0, 1), deterministic. */
static double unit(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(*s >> 11) / 9007199254740992.0;
}

static void test_statistics(void)
{
	struct vp_share sh;
	uint64_t st = 42;
	int covered = 0;

	is_double(1.959963984540054, vp_confidence_z(0.95), 1e-12, "Z(95%%)");
	is_double(2.575829303548901, vp_confidence_z(0.99), 1e-12, "Z(99%%)");
	is_double(-3.090232306167814, vp_normal_quantile(0.001), 1e-12, "tail quantile");
	/* Schneider's worked examples ("Application 1": Z = 1.96, p = 1%): 1521.2 and 38032. */
	is_int(1522, vp_samples_needed(0.01, 0.005, 1.96), "1%% to +/-0.5%%: 1522 samples");
	is_int(38032, vp_samples_needed(0.01, 0.001, 1.96), "1%% to +/-0.1%%: 38032 samples");
	ok(vp_samples_needed(0.5, 1e-12, 1.96) == UINT64_MAX, "too many to count: UINT64_MAX");
	is_double(3.890591886413, vp_confidence_z(0.9999), 1e-11, "Z(99.99%%): upper tail exact");
	vp_share(250, 1000, 1.96, &sh);
	ok(fabs(sh.p - 0.25) < 1e-12 && fabs(sh.half - 1.96 * sqrt(0.25 * 0.75 / 1000)) < 1e-12,
	   "share 25%% of 1000: half-width Z*sqrt(pq/n)");
	vp_share(0, 1000, 1.96, &sh);
	ok(sh.lo == 0 && sh.hi == 0, "share 0: clamped, empty interval");

	/* 2000 runs of 2000 samples of a 10% share: ~95% must cover it. */
	for (int run = 0; run < 2000; run++) {
		uint64_t k = 0;

		for (int i = 0; i < 2000; i++)
			k += unit(&st) < 0.10;
		vp_share(k, 2000, vp_confidence_z(0.95), &sh);
		covered += sh.lo <= 0.10 && 0.10 <= sh.hi;
	}
	ok(covered >= 1860 && covered <= 1940, "95%% intervals cover the true share in %.1f%% of "
	   "runs", covered / 20.0);
}

/* ---- invocations across deep, incomplete and varying samples ---- */

enum { DEEP = 5000 }; /* past VP_SAMPLED_MAX_DEPTH */

/*
 * A file of samples of main -> rec -> rec ... (@depth[i] frames, CFAs
 * falling by 16 per frame), thread @thread[i], period @period[i], flags
 * @flags[i].  Frame 0 is main, frame 1 rec's recursive call, frame 2 rec's
 * leaf position, frames 3 and 4 the leaves x() and y() under main.
 */
struct gen {
	uint32_t thread, depth, flags, leaf; /* leaf: 0 rec, 3 x, 4 y */
	uint64_t period, leaf_cfa;
};

static void write_gen(const char *path, const struct gen *g, size_t n)
{
	static const char *const names[] = { "main", "rec", "x", "y" };
	struct vp_frame_level lv[] = { { 0, 10, "g.c" }, { 1, 20, "g.c" }, { 1, 21, "g.c" },
				       { 2, 30, "g.c" }, { 3, 40, "g.c" } };
	struct vp_module mod = { "/bin/g", NULL, 0, 0 };
	struct vp_header h = { 0 };
	struct vp_trailer tr = { 0 };
	uint32_t frames[DEEP];
	uint64_t cfas[DEEP];
	struct vp_writer *w;

	h.unit = VP_UNIT_NS;
	h.nmodules = 1;
	h.modules = &mod;
	h.mode = VP_MODE_SAMPLE;
	w = vp_writer_new(path, &h);
	if (!w)
		sysbail("vp_writer_new");
	for (uint32_t t = 0; t < 3; t++)
		vp_writer_thread(w, t, 200 + t, 200);
	for (uint32_t i = 0; i < 4; i++) {
		struct vp_symbol sym = { 0, 0, 0x2000 + 0x100 * i, 64, (char *)names[i],
					 (char *)names[i] };

		vp_writer_symbol(w, i, &sym);
	}
	for (uint32_t i = 0; i < 5; i++) {
		struct vp_frame_def f = { 0, 0x2010 + 0x100 * i, 1, &lv[i] };

		vp_writer_frame(w, i, &f);
	}
	for (size_t i = 0; i < n; i++) {
		struct vp_sample smp = { 0 };
		uint32_t d = g[i].depth;

		/* innermost first: the leaf, rec's calls, main outermost */
		for (uint32_t k = 0; k < d; k++) {
			frames[k] = k == d - 1 ? 0 : k == 0 ? (g[i].leaf ? g[i].leaf : 2) : 1;
			cfas[k] = 0x8000 - 16 * (d - 1 - k);
		}
		if (g[i].leaf)
			cfas[0] = g[i].leaf_cfa;
		if (g[i].flags & VP_SAMPLE_BROKEN)
			d -= 2; /* the outer frames are missing */
		smp.time = 1000 * (i + 1);
		smp.period = g[i].period;
		smp.thread = g[i].thread;
		smp.flags = g[i].flags;
		smp.nframes = d;
		smp.frames = frames;
		smp.cfas = cfas;
		vp_writer_sample(w, &smp);
	}
	if (vp_writer_finish(w, &tr))
		sysbail("vp_writer_finish");
}

static void fold(const char *path, struct vp_sampled *t)
{
	struct vp_event ev[4];
	struct vp_reader *r;
	char err[512] = "";

	if (vp_reader_open(path, &r, err, sizeof(err)))
		bail("%s", err);
	if (vp_sampled_init(t))
		bail("vp_sampled_init");
	vp_reader_set_sample_handler(r, vp_sampled_handler, t);
	if (vp_reader_next(r, ev, 4) != 0)
		bail("cannot read %s: %s", path, vp_reader_error(r));
	vp_sampled_finish(t);
	vp_reader_free(r);
}

static void test_invocations(const char *dir)
{
	/*
	 * Thread 0: 3 samples 20 deep, 1 sample 40 and 1 sample 70 deep
	 * (the per-thread and scratch paths grow twice), 3 at 20 again:
	 * main's invocation spans all 8.  Thread 1: 3 samples, one whose
	 * unwinding stopped short, 3 more: one invocation of 6.  Thread 2:
	 * x() at four CFAs for 2, 3, 2 and 3 samples, y() between them.
	 */
	static const struct gen g[] = {
		{ 0, 20, 0, 0, 1000, 0 },  { 0, 20, 0, 0, 1000, 0 },  { 0, 20, 0, 0, 1000, 0 },
		{ 0, 40, 0, 0, 1000, 0 },  { 0, DEEP, 0, 0, 1000, 0 }, { 0, 20, 0, 0, 1000, 0 },
		{ 0, 20, 0, 0, 1000, 0 },  { 0, 20, 0, 0, 1000, 0 },
		{ 1, 5, 0, 0, 1000, 0 },   { 1, 5, 0, 0, 1000, 0 },   { 1, 5, 0, 0, 1000, 0 },
		{ 1, 5, VP_SAMPLE_BROKEN, 0, 1000, 0 },
		{ 1, 5, 0, 0, 1000, 0 },   { 1, 5, 0, 0, 1000, 0 },   { 1, 5, 0, 0, 1000, 0 },
		{ 2, 2, 0, 3, 1000, 0x100 }, { 2, 2, 0, 3, 1000, 0x100 }, { 2, 2, 0, 4, 1000, 0x200 },
		{ 2, 2, 0, 3, 1000, 0x300 }, { 2, 2, 0, 3, 1000, 0x300 }, { 2, 2, 0, 3, 1000, 0x300 },
		{ 2, 2, 0, 4, 1000, 0x400 }, { 2, 2, 0, 3, 1000, 0x500 }, { 2, 2, 0, 3, 1000, 0x500 },
		{ 2, 2, 0, 4, 1000, 0x600 }, { 2, 2, 0, 3, 1000, 0x700 }, { 2, 2, 0, 3, 1000, 0x700 },
		{ 2, 2, 0, 3, 1000, 0x700 },
	};
	char *path = basprintf("%s/g.data", dir);
	struct vp_sampled t;
	struct vp_sdur d;
	uint32_t main_, rec20, x;
	struct gen vary[2] = { { 0, 2, 0, 3, 1000, 0x100 }, { 0, 2, 0, 3, 1500, 0x100 } };

	write_gen(path, g, sizeof(g) / sizeof(g[0]));
	fold(path, &t);
	main_ = find(&t, 0, 0, VP_SNODE_NONE, VP_SNODE_NONE);
	rec20 = main_;
	for (int k = 0; k < 19 && rec20 != VP_SNODE_NONE; k++)
		rec20 = find(&t, rec20, 1, k ? 1 : 0, 0);
	x = main_ == VP_SNODE_NONE ? VP_SNODE_NONE : find(&t, main_, 2, 0, 0);
	if (main_ == VP_SNODE_NONE || rec20 == VP_SNODE_NONE || x == VP_SNODE_NONE)
		bail("cannot go on without main, rec at depth 20 and x");
	is_int(3, t.nodes[main_].span.n, "main: one invocation in each thread");
	is_int(8 + 6 + 13, t.nodes[main_].span.total,
	       "spans 8, 6 and 13: deeper samples (paths of 40 and 70 nodes) do not end main");
	ok(t.nodes[rec20].span.n == 1 && t.nodes[rec20].span.max == 8,
	   "... nor the rec 20 deep that they pass through");
	is_int(6, t.nodes[main_].span.min,
	       "thread 1: a stack not unwound to the end does not end main, nor count");
	is_int(1, t.broken, "that sample is counted as broken");
	vp_sampled_durations(&t, x, &d);
	is_int(4, d.invocations, "x: 4 invocations at 4 CFAs");
	is_double(2500, d.mean, 1e-9, "x: spans 2, 3, 2, 3: 2.5 periods on average");
	is_double(0.2, d.cov_raw, 1e-12, "x: CoV of the spans as they are 0.5 / 2.5");
	is_double(sqrt(0.25 - 1.0 / 6) / 2.5, d.cov, 1e-12,
		  "x: CoV without the quantisation's P^2/6");
	vp_sampled_release(&t);

	/* a constant duration: the spans' own variance is all quantisation */
	write_gen(path, vary, 1);
	fold(path, &t);
	vp_sampled_durations(&t, find(&t, find(&t, 0, 0, VP_SNODE_NONE, VP_SNODE_NONE), 2, 0, 0),
			     &d);
	is_double(0, d.cov, 0, "a single span: CoV 0");
	vp_sampled_release(&t);

	/* frequency mode: periods differ, so spans are no durations */
	write_gen(path, vary, 2);
	fold(path, &t);
	vp_sampled_durations(&t, find(&t, find(&t, 0, 0, VP_SNODE_NONE, VP_SNODE_NONE), 2, 0, 0),
			     &d);
	ok(t.period_varies && d.invocations == 1 && d.mean == 0,
	   "periods that vary: invocations counted, no duration given");
	vp_sampled_release(&t);
	free(path);
}

/* Fold @path into a new @t within @budget; the error of the first pass. */
static int fold_budget(const char *path, struct vp_sampled *t, struct vp_budget *budget)
{
	struct vp_event ev[4];
	struct vp_reader *r;
	char err[512] = "";
	long n;

	if (vp_reader_open(path, &r, err, sizeof(err)))
		bail("%s", err);
	if (vp_sampled_init(t))
		bail("vp_sampled_init");
	t->budget = budget;
	vp_reader_set_sample_handler(r, vp_sampled_handler, t);
	n = vp_reader_next(r, ev, 4);
	vp_sampled_finish(t);
	vp_reader_free(r);
	return (int)n;
}

/*
 * A stack of 5000 frames: the path keeps its outermost 4095 nodes and
 * ends in the cut node, which takes the self samples; a budget of 100
 * nodes stops the tree at 100 nodes with -E2BIG.
 */
static void test_limits(const char *dir)
{
	static const struct gen g[] = { { 0, DEEP, 0, 0, 1000, 0 }, { 0, DEEP, 0, 0, 1000, 0 } };
	char *path = basprintf("%s/deep.data", dir);
	struct vp_budget budget = { 100 * VP_SAMPLED_NODE_BYTES, 0 };
	struct vp_sampled t;
	uint32_t deepest = 0;

	write_gen(path, g, 2);
	is_int(0, fold_budget(path, &t, NULL), "5000 frames: folded");
	for (uint32_t id = 1; id < t.nnodes; id++)
		if (t.nodes[id].depth > t.nodes[deepest].depth)
			deepest = id;
	is_int(1 + VP_SAMPLED_MAX_DEPTH, t.nnodes, "5000 frames: the root and 4096 nodes");
	ok(t.nodes[deepest].depth == VP_SAMPLED_MAX_DEPTH &&
		   t.nodes[deepest].kind == VP_SNODE_CUT && t.nodes[deepest].nchildren == 0,
	   "the deepest, at 4096, is the cut node");
	ok(t.nodes[deepest].samples == 2 && t.nodes[deepest].self == 2,
	   "it has both samples, as their innermost node");
	is_int(2, t.cut, "both samples counted as cut");
	is_int(2, t.nodes[t.nodes[deepest].parent].samples, "the node above it has both too");
	vp_sampled_release(&t);

	is_int(-E2BIG, fold_budget(path, &t, &budget), "a budget of 100 nodes: -E2BIG");
	is_int(101, t.nnodes, "... after the root and 100 nodes");
	is_int(100 * VP_SAMPLED_NODE_BYTES, budget.used, "... which used it all");
	vp_sampled_release(&t);
	is_int(0, budget.used, "releasing the tree gives it back");
	free(path);
}

int main(void)
{
	char *dir;

	/*
	 * Samples (period 1000), thread 0 unless said:
	 *  0: main -> frame -> work (frame:20) -> step (inlined)
	 *  1: main -> frame -> work (frame:20), same CFAs: work goes on, step ended
	 *  2: main -> frame -> work (frame:22): work@frame:20 ended after 2
	 *  3: main -> rec -> rec -> rec: frame ended after 3
	 *  4: main -> frame -> work (frame:20) in the kernel: new invocations
	 *  5: truncated: frame -> work, no main: under the incomplete node;
	 *     it neither extends nor ends thread 0's invocations
	 *  6: thread 1: main -> frame -> work (frame:20)
	 *  7: thread 2: in the kernel without user state (its exit):
	 *     [kernel] under the root, no incomplete stack
	 */
	plan(34 + 11 + 10 + 2);
	dir = test_tmpdir();
	test_tree(dir);
	test_invocations(dir);
	test_limits(dir);
	test_statistics();
	test_tmpdir_free(dir);
	return 0;
}
