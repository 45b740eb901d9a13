/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * compare-t.c - tests for core/compare.c: the incomplete beta function,
 * Student's t and F p-values against values computed with mpmath at 30
 * digits, Welch's test on moments, and profile versus regression on two
 * recordings of one synthetic game loop whose behaviour changes by
 * construction (physics grows, ai stops spiking, audio starts), written
 * to data files with different function and call-site numbering; then
 * every significant context: new and vanished ones, many near-equal ones
 * that uncorrected tests would call changed, Holm's correction, p-values
 * far below 1e-300's neighbours, two calls on one line, and what tells two
 * programs apart.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/cct.h"
#include "core/compare.h"
#include "core/datafile.h"
#include "core/patterns.h"
#include "tests/tap/basic.h"

static void test_special_functions(void)
{
	/* reference values: mpmath betainc(a, b, 0, x, regularized=True) */
	is_rel(0.352197585906767, vp_betai(2.5, 4, 0.3), 1e-12, "betai(2.5, 4, 0.3)");
	is_rel(0.502428616319932, vp_betai(200, 300, 0.4), 1e-10, "betai(200, 300, 0.4)");
	ok(isnan(vp_betai(-1, 2, 0.5)), "betai: a < 0 is NaN");
	is_double(1.0, vp_betai(3, 4, 1.0), 0, "betai: x = 1 gives 1");
	is_rel(0.0733880347707404, vp_student_t_p(2.0, 10), 1e-12, "t = 2, df = 10: p = 0.0734");
	is_rel(0.0499999999779332, vp_student_t_p(2.570581836, 5), 1e-10,
	       "t = 2.5706, df = 5: p = 0.05");
	is_rel(0.0499960675828294, vp_student_t_p(1.96, 1e6), 1e-9, "t = 1.96, df = 1e6");
	is_rel(0.645335633319932, vp_student_t_p(-0.5, 3.7), 1e-12, "t = -0.5, df = 3.7");
	is_rel(5.03060854166761e-13, vp_student_t_p(30, 12.5), 1e-8, "t = 30, df = 12.5");
}

static struct vp_stats moments(uint64_t n, double mean, double sample_var)
{
	struct vp_stats s;

	vp_stats_init(&s);
	s.n = n;
	s.mean = mean;
	s.m2 = sample_var * (double)(n - 1);
	return s;
}

static void test_tests(void)
{
	struct vp_stats a = moments(10, 20, 4), b = moments(12, 22, 9), c;
	struct vp_test t;

	t = vp_welch_test(&a, &b);
	is_rel(1.86500961648063, t.stat, 1e-12, "Welch: t");
	is_rel(19.1905459875412, t.df1, 1e-12, "Welch: Welch-Satterthwaite df");
	is_rel(0.0775464386820587, t.p, 1e-10, "Welch: p");
	/* F(5, 10) at 3.3258 is the 95 % quantile: two-sided p = 0.1 */
	a = moments(11, 0, 1);
	b = moments(6, 0, 3.325834530);
	t = vp_f_test(&a, &b);
	is_rel(0.1, t.p, 1e-9, "F test: 95 %% quantile of F(5, 10) gives p = 0.1");
	a = moments(31, 0, 2);
	b = moments(21, 0, 1);
	t = vp_f_test(&a, &b);
	is_rel(2 * 0.0546649223944300, t.p, 1e-10, "F test: F(20, 30) = 0.5");
	c = moments(1, 5, 0);
	t = vp_welch_test(&a, &c);
	ok(isnan(t.p), "Welch: undefined with one invocation");
	a = moments(5, 3, 0);
	b = moments(5, 4, 0);
	t = vp_welch_test(&a, &b);
	is_double(0.0, t.p, 0, "Welch: constant samples with different means: p = 0");
}

/* ---- two recordings of a game loop ---- */

enum { F_MAIN, F_FRAME, F_PHYSICS, F_AI, F_RENDER, F_SIMPLE, F_DETAILED, F_AUDIO, NF };
static const char *const names[NF] = { "main",	 "frame",	  "physics",	       "ai",
				       "render", "render_simple", "render_detailed", "audio" };
/* call sites: by source line; each recording numbers them differently */
enum { L_MAIN = 10, L_FRAME = 20, L_PHYSICS = 30, L_AI = 31, L_RENDER = 32, L_SIMPLE = 40,
       L_DETAILED = 41, L_AUDIO = 33 };
static const uint32_t lines[NF] = { L_MAIN,   L_FRAME,	L_PHYSICS,  L_AI,
				    L_RENDER, L_SIMPLE, L_DETAILED, L_AUDIO };

struct rec {
	const uint32_t *fidx; /* our function -> index in this file */
	const uint32_t *csid; /* our function's call site -> id in this file */
	struct vp_writer *w;
	uint64_t now;
	size_t depth;
	uint32_t stack[16];
};

static void ev(struct rec *r, int entry, uint32_t f)
{
	struct vp_event e = { 0 };

	e.time = r->now;
	e.func = r->fidx[f];
	e.kind = entry ? VP_EV_ENTRY : VP_EV_EXIT;
	e.callsite = entry ? r->csid[f] : UINT32_MAX;
	e.sp = 0x7fff0000ULL - 64 * r->depth + (entry ? 0 : 8);
	if (vp_writer_event(r->w, &e))
		sysbail("vp_writer_event");
}

static void call(struct rec *r, uint32_t f)
{
	ev(r, 1, f);
	r->stack[r->depth++] = f;
}

static void leave(struct rec *r)
{
	r->depth--;
	ev(r, 0, r->stack[r->depth]);
}

static void leaf(struct rec *r, uint32_t f, uint64_t ns)
{
	call(r, f);
	r->now += ns;
	leave(r);
}

/*
 * @regression: physics costs twice as much, ai no longer spikes, audio
 * spikes every 10th frame; render is unchanged.
 */
static void record(const char *path, int regression, const uint32_t *fidx, const uint32_t *csid)
{
	struct vp_func funcs[NF];
	unsigned char bid[1] = { 7 };
	struct vp_module mod = { "/game", bid, sizeof(bid), 0 };
	struct vp_header h = { 0 };
	struct rec r = { fidx, csid, NULL, 1000, 0, { 0 } };

	memset(funcs, 0, sizeof(funcs));
	for (int f = 0; f < NF; f++) {
		struct vp_func *fn = &funcs[fidx[f]];

		fn->name = fn->display = fn->base = (char *)names[f];
	}
	h.unit = VP_UNIT_NS;
	h.clock = CLOCK_MONOTONIC;
	h.nmodules = 1;
	h.modules = &mod;
	h.nfuncs = NF;
	h.funcs = funcs;
	r.w = vp_writer_new(path, &h);
	if (!r.w)
		sysbail("vp_writer_new");
	vp_writer_thread(r.w, 0, 1, 1);
	/* call sites are defined in the order of their ids */
	for (uint32_t id = 0; id < NF; id++) {
		for (int f = 0; f < NF; f++) {
			struct vp_callsite cs = { 0, 0, 0x1000 + lines[f], "", "game.c", lines[f] };

			if (csid[f] == id && vp_writer_callsite(r.w, id, &cs))
				sysbail("vp_writer_callsite");
		}
	}
	call(&r, F_MAIN);
	for (int i = 0; i < 400; i++) {
		uint64_t phys = 200 + (uint64_t)((i * 37) % 41) * 40;

		call(&r, F_FRAME);
		leaf(&r, F_PHYSICS, regression ? 2 * phys : phys);
		leaf(&r, F_AI, regression ? 60 : (i % 16 == 15 ? 2000 : 40));
		call(&r, F_RENDER);
		if ((regression ? i * 7 : i) % 10 < 3)
			leaf(&r, F_DETAILED, 1200);
		else
			leaf(&r, F_SIMPLE, 300);
		leave(&r);
		leaf(&r, F_AUDIO, regression && i % 10 == 0 ? 1500 : 150);
		leave(&r);
	}
	leave(&r);
	if (vp_writer_finish(r.w, &(struct vp_trailer){ 0 }))
		sysbail("vp_writer_finish");
}

struct loaded {
	struct vp_reader *r;
	struct vp_cct t;
	struct vp_analysis a;
	struct vp_compare_input in;
};

static void load(struct loaded *l, const char *path)
{
	struct vp_analysis_params ap;
	char err[256];

	if (vp_reader_open(path, &l->r, err, sizeof(err)))
		bail("%s", err);
	vp_cct_init(&l->t);
	if (vp_build_file(l->r, &l->t, NULL))
		bail("vp_build_file %s", path);
	vp_analysis_params_default(&ap);
	if (vp_analysis_run(&l->a, &l->t, vp_reader_header(l->r)->nfuncs, &ap))
		bail("vp_analysis_run");
	l->in = (struct vp_compare_input){ &l->t, vp_reader_header(l->r), l->r, &l->a };
}

static void unload(struct loaded *l)
{
	vp_analysis_release(&l->a);
	vp_cct_release(&l->t);
	vp_reader_free(l->r);
}

/* The comparison entry of A's pattern whose innermost function is @f. */
static const struct vp_compare_pattern *entry(const struct vp_compare *c,
					      const struct loaded *a, int f)
{
	for (size_t i = 0; i < c->npatterns; i++) {
		const struct vp_pattern *p = &a->a.patterns[c->patterns[i].a];
		uint32_t fi = p->chain[p->len - 1].func;

		if (!strcmp(vp_reader_header(a->r)->funcs[fi].name, names[f]))
			return &c->patterns[i];
	}
	return NULL;
}

static void test_profile_regression(void)
{
	/* A numbers functions and call sites in one order, B in another */
	static const uint32_t fa[NF] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	static const uint32_t fb[NF] = { 7, 6, 5, 4, 3, 2, 1, 0 };
	static const uint32_t ca[NF] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	static const uint32_t cb[NF] = { 0, 5, 7, 1, 3, 2, 6, 4 };
	char *dir = test_tmpdir();
	char *pa = basprintf("%s/a.data", dir), *pb = basprintf("%s/b.data", dir);
	const struct vp_compare_pattern *e;
	struct vp_compare_params p;
	struct loaded a, b;
	struct vp_compare c;

	record(pa, 0, fa, ca);
	record(pb, 1, fb, cb);
	load(&a, pa);
	load(&b, pb);
	vp_compare_params_default(&p);
	is_int(0, vp_compare_run(&c, &a.in, &b.in, &p), "compare: runs");

	e = entry(&c, &a, F_PHYSICS);
	ok(e && e->in_set_a && e->in_set_b, "physics: in both Pattern Sets");
	ok(e && e->bnodes == 1 && e->b.n == 400, "physics: found in B despite the renumbering");
	ok(e && e->mean.p < 1e-10, "physics: its mean doubled, p = %g", e ? e->mean.p : -1);
	ok(e && e->mean.stat > 0, "physics: t > 0 (B is slower)");
	ok(e && e->var.p < 1e-10, "physics: its variance quadrupled, p = %g", e ? e->var.p : -1);
	e = entry(&c, &a, F_RENDER);
	ok(e && e->in_set_a && e->in_set_b, "render: in both Pattern Sets");
	ok(e && e->mean.p > 0.5, "render: same distribution, p = %g", e ? e->mean.p : -1);
	ok(e && e->var.p > 0.5, "render: same variance, p = %g", e ? e->var.p : -1);
	e = entry(&c, &a, F_AI);
	ok(e && e->in_set_a && !e->in_set_b, "ai: left the Pattern Set");
	ok(e && vp_stats_variance(&e->b) == 0.0, "ai: no variance left in B");
	is_uint(1, c.nnew, "one new pattern in B");
	if (c.nnew) {
		const struct vp_pattern *nb = &b.a.patterns[c.new_b[0]];

		is_string("audio",
			  vp_reader_header(b.r)->funcs[nb->chain[nb->len - 1].func].name,
			  "the new pattern is audio");
	}
	/* A's set: physics, ai, render, render_detailed (frame is not
	 * high-variance); B keeps all but ai */
	is_uint(4, c.nset_a, "A's Pattern Set has 4 patterns");
	is_uint(3, c.ncommon, "3 of them are in B's");
	is_double(0.75, c.overlap, 1e-12, "overlap 75 %%");
	is_int(0, c.agree, "below 80 %%: the sets disagree");
	vp_compare_release(&c);

	p.min_overlap = 0.75;
	vp_compare_run(&c, &a.in, &b.in, &p);
	is_int(1, c.agree, "at --min-overlap 75 %% they agree");
	vp_compare_release(&c);

	/* a recording compared with itself */
	vp_compare_params_default(&p);
	vp_compare_run(&c, &a.in, &a.in, &p);
	is_double(1.0, c.overlap, 0, "A against A: overlap 100 %%");
	ok(c.agree && c.nnew == 0, "A against A: agree, nothing new");
	e = entry(&c, &a, F_PHYSICS);
	ok(e && e->mean.p == 1.0 && fabs(e->var.p - 1.0) < 1e-9, "A against A: p = 1 (%g, %g)",
	   e ? e->mean.p : -1, e ? e->var.p : -1);
	vp_compare_release(&c);

	/*
	 * Unreliable patterns (durations mostly probe cost) are in neither
	 * Pattern Set: the regression side once counted them, and a file
	 * with them differed from itself.  First physics alone, then all.
	 */
	{
		uint8_t *flags = calloc(a.t.nnodes, 1);
		size_t nset = c.nset_a;

		if (!flags)
			bail("calloc");
		for (uint32_t id = 1; id < a.t.nnodes; id++)
			flags[id] = !strcmp(vp_reader_header(a.r)->funcs[a.t.nodes[id].func].name,
					    names[F_PHYSICS]);
		vp_compare_run(&c, &a.in, &a.in, &p);
		nset = c.nset_a;
		vp_compare_release(&c);
		is_int(0, vp_analysis_set_unreliable(&a.a, flags, a.t.nnodes),
		       "physics marked unreliable");
		vp_compare_run(&c, &a.in, &a.in, &p);
		e = entry(&c, &a, F_PHYSICS);
		ok(e && !e->in_set_a && !e->in_set_b, "unreliable physics: in neither set");
		is_uint(nset - 1, c.nset_a, "A's set lost physics");
		is_uint(c.nset_a, c.nset_b, "the regression set has as many patterns");
		is_uint(c.nset_a, c.ncommon, "all of them common");
		ok(c.agree && c.verdict == VP_VERDICT_AGREE, "A against A: agree");
		vp_compare_release(&c);
		/* B, whose physics is reliable and in its set: new there */
		vp_compare_run(&c, &a.in, &b.in, &p);
		{
			int found = 0;

			for (size_t i = 0; i < c.nnew; i++) {
				const struct vp_pattern *nb = &b.a.patterns[c.new_b[i]];
				uint32_t fi = nb->chain[nb->len - 1].func;

				found |= !strcmp(vp_reader_header(b.r)->funcs[fi].name,
						 names[F_PHYSICS]);
			}
			ok(found, "physics unreliable in A, in B's set: new in B (%zu new)", c.nnew);
		}
		vp_compare_release(&c);
		memset(flags, 1, a.t.nnodes);
		vp_analysis_set_unreliable(&a.a, flags, a.t.nnodes);
		vp_compare_run(&c, &a.in, &a.in, &p);
		ok(c.nset_a == 0 && c.nset_b == 0, "all unreliable: both sets empty (%zu, %zu)",
		   c.nset_a, c.nset_b);
		ok(c.agree && c.verdict == VP_VERDICT_AGREE, "all unreliable: A against A agrees");
		vp_compare_release(&c);
		free(flags);
	}

	unload(&a);
	unload(&b);
	free(pa);
	free(pb);
	test_tmpdir_free(dir);
}

/* ---- every significant context, Holm's correction, the verdict ---- */

/*
 * A flat recording: main calls, @iters times, calls[0..ncalls) in order,
 * call c to function @callee[c] from source line @line[c] of x.c at return
 * address @base + @step * c; @dur gives its duration, 0 leaves it out.
 * The header lists @nfuncs functions (index 0 is main), called or not:
 * what the recorder probed.
 */
struct flat {
	size_t nfuncs;
	const char *const *funcs;
	size_t ncalls;
	const uint32_t *callee;
	const uint32_t *line;
	uint64_t base, step;
	int iters;
	uint64_t (*dur)(const struct flat *f, size_t call, int iter);
	uint64_t seed; /* for @dur */
};

static void record_flat(const char *path, const struct flat *fl)
{
	struct vp_func *funcs = calloc(fl->nfuncs, sizeof(*funcs));
	unsigned char bid[1] = { 7 };
	struct vp_module mod = { "/flat", bid, sizeof(bid), 0 };
	struct vp_header h = { 0 };
	uint32_t fidx[2] = { 0, 0 }, csid[2] = { 0, 0 };
	struct rec r = { fidx, csid, NULL, 1000, 0, { 0 } };
	struct vp_event e = { 0 };

	if (!funcs)
		sysbail("calloc");
	for (size_t f = 0; f < fl->nfuncs; f++)
		funcs[f].name = funcs[f].display = funcs[f].base = (char *)fl->funcs[f];
	h.unit = VP_UNIT_NS;
	h.clock = CLOCK_MONOTONIC;
	h.nmodules = 1;
	h.modules = &mod;
	h.nfuncs = fl->nfuncs;
	h.funcs = funcs;
	r.w = vp_writer_new(path, &h);
	if (!r.w)
		sysbail("vp_writer_new");
	vp_writer_thread(r.w, 0, 1, 1);
	for (uint32_t c = 0; c <= fl->ncalls; c++) {
		/* the last one is main's, from the C library */
		struct vp_callsite cs = { 0, 0, fl->base + fl->step * c, "", "x.c",
					  c < fl->ncalls ? fl->line[c] : 0 };

		if (c == fl->ncalls)
			cs = (struct vp_callsite){ 0, -1, 0x77, "", "", 0 };
		if (vp_writer_callsite(r.w, c, &cs))
			sysbail("vp_writer_callsite");
	}
	/* main: function 0 from call site ncalls */
	csid[0] = (uint32_t)fl->ncalls;
	call(&r, 0);
	for (int i = 0; i < fl->iters; i++) {
		for (size_t c = 0; c < fl->ncalls; c++) {
			uint64_t d = fl->dur(fl, c, i);

			if (!d)
				continue;
			e = (struct vp_event){ r.now, 0x7ffe0000, fl->callee[c], (uint32_t)c, 0,
					       VP_EV_ENTRY, 0, 0, 0 };
			if (vp_writer_event(r.w, &e))
				sysbail("vp_writer_event");
			r.now += d;
			e = (struct vp_event){ r.now, 0x7ffe0008, fl->callee[c], UINT32_MAX, 0,
					       VP_EV_EXIT, 0, 0, 0 };
			if (vp_writer_event(r.w, &e))
				sysbail("vp_writer_event");
		}
		r.now += 10;
	}
	leave(&r);
	if (vp_writer_finish(r.w, &(struct vp_trailer){ 0 }))
		sysbail("vp_writer_finish");
	free(funcs);
}

/* A context of @c whose innermost function, on the side that has it, is @name. */
static const struct vp_compare_context *ctx_of(const struct vp_compare *c,
					       const struct loaded *a, const struct loaded *b,
					       const char *name, size_t nth)
{
	for (size_t i = 0; i < c->ncontexts; i++) {
		const struct vp_compare_context *x = &c->contexts[i];
		const struct loaded *l = x->a != VP_NO_NODE ? a : b;
		uint32_t node = x->a != VP_NO_NODE ? x->a : x->b;
		uint32_t f = l->t.nodes[node].func;

		if (!strcmp(vp_reader_header(l->r)->funcs[f].name, name) && !nth--)
			return x;
	}
	return NULL;
}

/* splitmix64 (Steele, Lea and Flood 2014): one good draw per state */
static uint64_t mix(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* x and y constant; z (when in the recording) 10 to 300 us */
static uint64_t dur_xyz(const struct flat *f, size_t call, int iter)
{
	static const uint64_t cost[] = { 100000, 200000 };

	if (call < 2)
		return cost[call];
	if (!f->seed)
		return 0;
	return 10000 + (uint64_t)((iter * 7919) % 30) * 10000;
}

static void compare_files(const char *pa, const char *pb, struct loaded *a, struct loaded *b,
			  struct vp_compare *c)
{
	struct vp_compare_params p;

	load(a, pa);
	load(b, pb);
	vp_compare_params_default(&p);
	if (vp_compare_run(c, &a->in, &b->in, &p))
		bail("vp_compare_run %s %s", pa, pb);
}

static void test_new_and_vanished(void)
{
	static const char *const with_z[] = { "main", "x", "y", "z" };
	static const uint32_t callee[] = { 1, 2, 3 }, line[] = { 11, 12, 13 };
	char *dir = test_tmpdir();
	char *p1 = basprintf("%s/xy.data", dir), *p2 = basprintf("%s/xyz.data", dir);
	char *p3 = basprintf("%s/xy-unprobed.data", dir);
	struct flat fl = { 4, with_z, 3, callee, line, 0x1000, 8, 300, dur_xyz, 0 };
	const struct vp_compare_context *x;
	struct loaded a, b;
	struct vp_compare c;

	record_flat(p1, &fl); /* z probed, never called */
	fl.seed = 1;
	record_flat(p2, &fl);
	fl.seed = 0;
	fl.nfuncs = 3; /* z not even probed */
	fl.ncalls = 2;
	record_flat(p3, &fl);

	compare_files(p1, p2, &a, &b, &c);
	x = ctx_of(&c, &a, &b, "z", 0);
	ok(x && x->a == VP_NO_NODE && x->b != VP_NO_NODE && x->hv_b,
	   "new: z's context is in B only, high-variance");
	is_int(VP_CTX_NEW, x ? (int)x->change : -1, "new: z's context is NEW");
	is_uint(1, c.nctx_new, "new: one new context ...");
	ok(c.agree && !c.nset_a && !c.nset_b, "... though the Pattern Sets agree (both empty)");
	is_int(VP_VERDICT_DIFFER, c.verdict, "... so the recordings differ");
	x = ctx_of(&c, &a, &b, "x", 0);
	ok(x && x->change == VP_CTX_SAME && x->mean.p == 1.0, "x: the same on both sides");
	vp_compare_release(&c);
	unload(&a);
	unload(&b);

	compare_files(p2, p1, &a, &b, &c);
	x = ctx_of(&c, &a, &b, "z", 0);
	is_int(VP_CTX_VANISHED, x ? (int)x->change : -1, "vanished: z's context, B against A");
	ok(c.nctx_vanished == 1 && c.verdict == VP_VERDICT_DIFFER, "vanished: they differ");
	vp_compare_release(&c);
	unload(&a);
	unload(&b);

	/* A did not probe z: its absence there says nothing */
	compare_files(p3, p2, &a, &b, &c);
	x = ctx_of(&c, &a, &b, "z", 0);
	is_int(VP_CTX_UNSURE, x ? (int)x->change : -1, "z not probed in A: unsure");
	ok(c.agree && c.nctx_unsure == 1 && !c.nctx_new, "... nothing else changed");
	is_int(VP_VERDICT_CANNOT_TELL, c.verdict, "... and the verdict: cannot tell");
	vp_compare_release(&c);
	unload(&a);
	unload(&b);

	free(p1);
	free(p2);
	free(p3);
	test_tmpdir_free(dir);
}

enum { NEAR = 150 };

/* Every call: 1000 us +/- 693 us uniform (CoV 0.4, the threshold), A's
 * and B's draws from one distribution. */
static uint64_t dur_near(const struct flat *f, size_t call, int iter)
{
	uint64_t s = mix(mix(mix(f->seed) ^ call) ^ (uint64_t)iter);

	return 307000 + s % 1386000;
}

static void test_many_near_equal(void)
{
	static const char *names[NEAR + 1];
	static uint32_t callee[NEAR], line[NEAR];
	char buf[NEAR + 1][16];
	char *dir = test_tmpdir();
	char *pa = basprintf("%s/na.data", dir), *pb = basprintf("%s/nb.data", dir);
	struct flat fl = { NEAR + 1, names, NEAR, callee, line, 0x1000, 8, 200, dur_near, 1 };
	size_t raw = 0, adj = 0, flips = 0;
	struct loaded a, b;
	struct vp_compare c;

	names[0] = "main";
	for (size_t i = 0; i < NEAR; i++) {
		snprintf(buf[i], sizeof(buf[i]), "f%zu", i);
		names[i + 1] = buf[i];
		callee[i] = (uint32_t)i + 1;
		line[i] = (uint32_t)(100 + i);
	}
	record_flat(pa, &fl);
	fl.seed = 0x5eed;
	record_flat(pb, &fl);
	compare_files(pa, pb, &a, &b, &c);
	is_uint(NEAR + 1, c.ncontexts, "near-equal: main and its %d callees compared", NEAR);
	for (size_t i = 0; i < c.ncontexts; i++) {
		const struct vp_compare_context *x = &c.contexts[i];

		raw += (x->mean.p < 0.05) + (x->var.p < 0.05);
		adj += (x->mean.p_adj < 0.05) + (x->var.p_adj < 0.05);
		flips += x->hv_a != x->hv_b;
	}
	diag("%zu tests, %zu below 0.05 uncorrected, %zu corrected; %zu flips", c.ntests, raw, adj,
	     flips);
	ok(raw >= 5, "near-equal: uncorrected, %zu tests come out below 0.05 by chance", raw);
	is_uint(0, adj, "near-equal: corrected (Holm), none does");
	ok(flips > 0, "near-equal: %zu contexts cross the CoV threshold by chance", flips);
	is_uint(0, c.nctx_new + c.nctx_vanished, "near-equal: none is taken for a change");
	is_uint(flips, c.nctx_unsure, "near-equal: each of them is one the tests cannot tell");
	is_int(c.agree ? VP_VERDICT_CANNOT_TELL : VP_VERDICT_DIFFER, c.verdict,
	       "near-equal: the verdict is cannot tell (Pattern Sets %s)",
	       c.agree ? "agree" : "disagree");
	vp_compare_release(&c);
	unload(&a);
	unload(&b);
	free(pa);
	free(pb);
	test_tmpdir_free(dir);
}

static void test_holm_and_tiny_p(void)
{
	double p[5] = { 0.01, 0.04, 0.03, 0.005, NAN }, q[5];
	struct vp_stats a = moments(1001, 0, 1), b = moments(1001, 0, 4);
	struct vp_test t;

	is_int(0, vp_holm(p, 5, q), "holm: runs");
	is_double(0.03, q[0], 1e-15, "holm: 0.01, second smallest of 4, times 3");
	is_double(0.06, q[1], 1e-15, "holm: 0.04 times 1, raised to the 0.06 before it");
	is_double(0.06, q[2], 1e-15, "holm: 0.03 times 2");
	is_double(0.02, q[3], 1e-15, "holm: 0.005, the smallest, times 4");
	ok(isnan(q[4]), "holm: NaN stays NaN, and does not count");
	/* reference: mpmath, 2 I_{1/5}(500, 500) */
	t = vp_f_test(&a, &b);
	is_rel(5.16297558939772e-99, t.p, 1e-8, "F test: variance x4 over 1000 df, p = 5.2e-99");
	t = vp_f_test(&b, &a);
	is_rel(5.16297558939772e-99, t.p, 1e-8, "F test: variance / 4: the lower tail alike");
}

/* step() called twice from one line: 20 us, then 60 us */
static uint64_t dur_twins(const struct flat *f, size_t call, int iter)
{
	(void)f;
	return (call ? 60000 : 20000) + (uint64_t)(iter % 7) * 1000;
}

static void test_one_line_twice(void)
{
	static const char *const names[] = { "main", "step" };
	static const uint32_t callee[] = { 1, 1 }, line[] = { 17, 17 };
	char *dir = test_tmpdir();
	char *pa = basprintf("%s/ta.data", dir), *pb = basprintf("%s/tb.data", dir);
	struct flat fl = { 2, names, 2, callee, line, 0x1000, 5, 100, dur_twins, 0 };
	const struct vp_compare_context *x;
	struct loaded a, b;
	struct vp_compare c;
	uint32_t *tw;

	record_flat(pa, &fl);
	fl.base = 0x2340; /* another build: the calls moved, and moved apart */
	fl.step = 9;
	record_flat(pb, &fl);
	compare_files(pa, pb, &a, &b, &c);
	tw = vp_cct_callsite_twins(&a.t, a.r);
	ok(tw && tw[0] == 1 && tw[1] == 2 && tw[2] == 0,
	   "twins: the two calls on line 17 rank 1 and 2, main's site 0");
	free(tw);
	is_uint(3, c.ncontexts, "twins: main and two contexts of step, in both");
	for (int k = 0; k < 2; k++) {
		x = ctx_of(&c, &a, &b, "step", (size_t)k);
		ok(x && x->a != VP_NO_NODE && x->b != VP_NO_NODE &&
			   a.t.nodes[x->a].stats.mean == b.t.nodes[x->b].stats.mean &&
			   x->mean.p == 1.0,
		   "twins: call %d of the line matched across builds (mean %g)", k + 1,
		   x ? a.t.nodes[x->a].stats.mean : -1.0);
	}
	vp_compare_release(&c);
	unload(&a);
	unload(&b);
	free(pa);
	free(pb);
	test_tmpdir_free(dir);
}

/* step() and, in B only, other() from one line */
static uint64_t dur_step_other(const struct flat *f, size_t call, int iter)
{
	if (call == 1)
		return f->seed ? 30000 : 0;
	return 20000 + (uint64_t)(iter % 7) * 1000;
}

static void test_one_line_two_callees(void)
{
	static const char *const names[] = { "main", "step", "other" };
	static const uint32_t callee[] = { 1, 2 }, line[] = { 17, 17 };
	char *dir = test_tmpdir();
	char *pa = basprintf("%s/oa.data", dir), *pb = basprintf("%s/ob.data", dir);
	struct flat fl = { 3, names, 2, callee, line, 0x1000, 5, 100, dur_step_other, 0 };
	const struct vp_compare_context *x;
	struct loaded a, b;
	struct vp_compare c;
	uint32_t *tw;

	record_flat(pa, &fl); /* other() never called */
	fl.seed = 1;
	record_flat(pb, &fl);
	compare_files(pa, pb, &a, &b, &c);
	tw = vp_cct_callsite_twins(&b.t, b.r);
	ok(tw && !tw[0] && !tw[1], "two callees on one line: their names tell them apart");
	free(tw);
	x = ctx_of(&c, &a, &b, "step", 0);
	ok(x && x->a != VP_NO_NODE && x->b != VP_NO_NODE && x->mean.p == 1.0,
	   "step() matched though B also calls other() from its line");
	vp_compare_release(&c);
	unload(&a);
	unload(&b);
	free(pa);
	free(pb);
	test_tmpdir_free(dir);
}

static void test_programs(void)
{
	unsigned char id1[] = { 1, 2, 3 }, id2[] = { 1, 2, 4 };
	struct vp_module m[6] = {
		{ "/usr/bin/game", id1, 3, 0 },	  { "/tmp/game", id1, 3, 0 },
		{ "/usr/bin/game", id2, 3, 0 },	  { "/usr/bin/edit", id2, 3, 0 },
		{ "/usr/bin/game", NULL, 0, 100 }, { "/usr/bin/game", NULL, 0, 0 },
	};
	struct vp_header h[6];

	memset(h, 0, sizeof(h));
	for (int i = 0; i < 6; i++) {
		h[i].nmodules = 1;
		h[i].modules = &m[i];
	}
	is_int(VP_PROG_SAME, vp_compare_programs(&h[0], &h[1]), "programs: one build-id");
	is_int(VP_PROG_OTHER_BUILD, vp_compare_programs(&h[0], &h[2]),
	       "programs: another build-id, one name");
	is_int(VP_PROG_OTHER, vp_compare_programs(&h[0], &h[3]),
	       "programs: another build-id and name");
	is_int(VP_PROG_SAME, vp_compare_programs(&h[4], &h[4]),
	       "programs: no build-id, one path and size");
	m[5].size = 101;
	is_int(VP_PROG_OTHER_BUILD, vp_compare_programs(&h[4], &h[5]),
	       "programs: no build-id, another size");
	m[5].size = 0;
	is_int(VP_PROG_UNKNOWN, vp_compare_programs(&h[4], &h[5]),
	       "programs: no build-id, one size unknown: cannot tell");
	h[5].nmodules = 0;
	is_int(VP_PROG_UNKNOWN, vp_compare_programs(&h[0], &h[5]), "programs: no module");
}

int main(void)
{
	plan_lazy();
	test_special_functions();
	test_tests();
	test_profile_regression();
	test_new_and_vanished();
	test_many_near_equal();
	test_holm_and_tiny_p();
	test_one_line_twice();
	test_one_line_two_callees();
	test_programs();
	return 0;
}
