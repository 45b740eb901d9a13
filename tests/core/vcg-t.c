/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * vcg-t.c - tests for core/vcg.c on synthetic programs whose variance
 * structure is known by construction: node types and call-context sets,
 * a linear segment through a transmitter, mutually exclusive branches
 * (cf > 100 %), a loop's Contributor, identical structures under two call
 * sites that merge at high tau_S and stay apart at low tau_S (across
 * patterns and within one), merged statistics equal to those of the union
 * of the invocations, the contribution compatibility check, trimming by
 * beta, the Kolmogorov-Smirnov distance, and the exact graph of a deep
 * recursion, built in linear time.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/cct.h"
#include "core/patterns.h"
#include "core/sources.h"
#include "core/vcg.h"
#include "tests/core/events.h"
#include "tests/tap/basic.h"

enum {
	F_MAIN, F_P, F_G, F_A, F_B, F_C, F_X, F_Y, F_L, F_H, F_F, F_R, F_Q, F_Q2, F_S, F_T,
	NFUNCS
};

/* Every scenario here runs inside main. */
static void reset_main_stream(void)
{
	reset_stream();
	call(F_MAIN, 0);
}

/* ---- the world: tree, analysis, sources, graph ---- */

struct world {
	struct vp_cct t;
	struct vp_analysis a;
	struct vp_sources s;
	struct vp_vcg g;
};

static void world_build(struct world *w, double tau, double beta)
{
	struct vp_analysis_params ap;
	struct vp_sources_params sp;
	struct vp_vcg_params gp;
	struct vp_builder *b;
	int err;

	leave(); /* main */
	if (vp_cct_init(&w->t))
		bail("vp_cct_init");
	b = vp_builder_new(&w->t, NFUNCS, NULL);
	if (!b || vp_builder_feed(b, evs, nev) || vp_builder_finish(b, NULL))
		bail("cannot build the tree");
	vp_builder_free(b);
	vp_analysis_params_default(&ap);
	ap.cutoff = 0.0;
	if (vp_analysis_run(&w->a, &w->t, NFUNCS, &ap))
		bail("vp_analysis_run");
	vp_sources_params_default(&sp);
	err = vp_sources_start(&w->s, &w->t, &w->a, &sp);
	while (!err && vp_sources_more(&w->s)) {
		err = vp_sources_pass_begin(&w->s);
		if (!err)
			err = vp_sources_pass_feed(&w->s, evs, nev);
		if (!err)
			err = vp_sources_pass_end(&w->s);
	}
	if (!err)
		err = vp_sources_finish(&w->s);
	if (err)
		bail("sources: %s", strerror(-err));
	gp.tau = tau;
	gp.beta = beta;
	err = vp_vcg_build(&w->g, &w->t, &w->a, &w->s, &gp);
	if (err)
		bail("vp_vcg_build: %s", strerror(-err));
}

/* Rebuild only the graph, with other parameters. */
static void world_regraph(struct world *w, double tau, double beta)
{
	struct vp_vcg_params gp = { tau, beta };

	vp_vcg_release(&w->g);
	if (vp_vcg_build(&w->g, &w->t, &w->a, &w->s, &gp))
		bail("vp_vcg_build");
}

static void world_free(struct world *w)
{
	vp_vcg_release(&w->g);
	vp_sources_release(&w->s);
	vp_analysis_release(&w->a);
	vp_cct_release(&w->t);
}

/* The VCG node that stands for CCT node @cct, or NULL. */
static const struct vp_vcg_node *vnode(const struct vp_vcg *g, uint32_t cct)
{
	for (size_t i = 0; i < g->nnodes; i++)
		for (uint32_t j = 0; j < g->nodes[i].ncct; j++)
			if (g->nodes[i].cct[j] == cct)
				return &g->nodes[i];
	return NULL;
}

static uint32_t vid(const struct vp_vcg *g, const struct vp_vcg_node *n)
{
	return (uint32_t)(n - g->nodes);
}

/* The segment from @h to @w, or NULL. */
static const struct vp_vcg_segment *segment(const struct vp_vcg *g,
					    const struct vp_vcg_node *h,
					    const struct vp_vcg_node *w)
{
	for (size_t i = 0; h && w && i < g->nsegments; i++) {
		const struct vp_vcg_segment *s = &g->segments[i];

		if (s->nodes[0] == vid(g, h) && s->nodes[s->len - 1] == vid(g, w))
			return s;
	}
	return NULL;
}

/* Two-pass population statistics of @x. */
static void direct(const double *x, size_t n, double *mean, double *var)
{
	double m = 0, v = 0;

	for (size_t i = 0; i < n; i++)
		m += x[i];
	m /= (double)n;
	for (size_t i = 0; i < n; i++)
		v += (x[i] - m) * (x[i] - m);
	*mean = m;
	*var = v / (double)n;
}

/* ---- tests ---- */

static void test_ks(void)
{
	is_double(0.0, vp_ks_gauss(5, 2, 5, 2), 1e-15, "KS: identical Gaussians: 0");
	is_double(0.382924922548026, vp_ks_gauss(0, 1, 1, 1), 1e-12,
		  "KS: N(0,1) vs N(1,1) = 2 Phi(0.5) - 1");
	is_double(0.161337284417384, vp_ks_gauss(0, 1, 0, 2), 1e-12, "KS: N(0,1) vs N(0,2)");
	is_double(0.262211778263643, vp_ks_gauss(10, 3, 12, 5), 1e-12, "KS: N(10,3) vs N(12,5)");
	is_double(vp_ks_gauss(12, 5, 10, 3), vp_ks_gauss(10, 3, 12, 5), 1e-15, "KS: symmetric");
	is_double(0.841344746068543, vp_ks_gauss(1, 1, 0, 0), 1e-12,
		  "KS: against a zeroed counterpart (point mass at 0)");
	is_double(1.0, vp_ks_gauss(3, 0, 0, 0), 0, "KS: two different point masses: 1");
	is_double(0.0, vp_ks_gauss(1e9, 1e3, 1e9, 1e3), 0, "KS: large means do not cancel");
	is_double(0.382924922548026, vp_ks_gauss(1e9, 1e3, 1e9 + 1e3, 1e3), 1e-9,
		  "KS: large means, one sigma apart");
}

/* P -> G (once) -> A (varies); B, C constant.  Also F_Q -> F_F varies,
 * F_Q2 -> F_F constant: F's second context is a Contrast. */
static void test_transmitter(void)
{
	struct world w;
	const struct vp_vcg_node *p, *g, *a, *fq, *fq2;
	const struct vp_vcg_segment *s;
	uint8_t *label;
	uint32_t b, fq2_cct;

	reset_main_stream();
	for (int i = 0; i < 200; i++) {
		call(F_P, 1);
		work(20);
		call(F_G, 2);
		work(10);
		leaf(F_A, 3, i % 2 ? 900 : 100);
		leaf(F_B, 4, 50);
		leave();
		leaf(F_C, 5, 30);
		leave();
	}
	for (int i = 0; i < 100; i++) {
		call(F_Q, 6);
		leaf(F_F, 7, i % 2 ? 400 : 50);
		leave();
		call(F_Q2, 8);
		leaf(F_F, 9, 200);
		leave();
	}
	world_build(&w, 0.4, 0.0);
	b = NODE(&w.t, F_MAIN, 0, F_P, 1, F_G, 2, F_B, 4);
	fq2_cct = NODE(&w.t, F_MAIN, 0, F_Q2, 8, F_F, 9);
	label = bmalloc(w.t.nnodes);
	is_int(0, vp_vcg_label(&w.t, &w.a, &w.s, label), "labels: computed");
	is_int(VP_VCG_UNUSED, label[NODE(&w.t, F_MAIN, 0)], "labels: main is unused");
	is_int(VP_VCG_TASK, label[NODE(&w.t, F_MAIN, 0, F_P, 1)], "labels: P is a Task");
	is_int(VP_VCG_UNUSED, label[b], "labels: B, constant and alone, is unused");
	is_int(VP_VCG_CONTRAST, label[fq2_cct], "labels: F's constant context is a Contrast");
	free(label);

	p = vnode(&w.g, NODE(&w.t, F_MAIN, 0, F_P, 1));
	g = vnode(&w.g, NODE(&w.t, F_MAIN, 0, F_P, 1, F_G, 2));
	a = vnode(&w.g, NODE(&w.t, F_MAIN, 0, F_P, 1, F_G, 2, F_A, 3));
	ok(p && g && a, "transmitter: P, G and A are in the graph");
	if (!p || !g || !a)
		bail("missing nodes");
	ok(vnode(&w.g, b) == NULL, "transmitter: B is folded away");
	is_uint(VP_NO_NODE, p->parent, "transmitter: P roots its pattern");
	is_uint(vid(&w.g, p), g->parent, "transmitter: G is P's child");
	is_uint(vid(&w.g, g), a->parent, "transmitter: A is G's child");
	s = segment(&w.g, p, a);
	ok(s != NULL, "transmitter: a back-edge from A to P");
	if (s) {
		is_uint(3, s->len, "transmitter: linear segment P, G, A");
		is_uint(vid(&w.g, g), s->nodes[1], "transmitter: G is internal to it");
		is_double(1.0, s->cf, 1e-9, "transmitter: cf 100 %%");
		is_uint(1, s->ncomponents, "transmitter: one variance component");
		is_uint(NODE(&w.t, F_MAIN, 0, F_P, 1, F_G, 2), s->components[0],
			"transmitter: P's call site of G");
	}
	ok(segment(&w.g, g, a) != NULL, "transmitter: and one from A to G");
	is_uint(1, p->nols, "transmitter: one segment originates at P");
	is_uint(1, g->ncls, "transmitter: G is inside one");
	is_uint(2, a->ncls, "transmitter: A ends two");
	/* the call context of the pattern root is the chain from the root */
	is_uint(1, p->nccs, "transmitter: P has one call context");
	if (p->nccs) {
		const struct vp_vcg_cc *cc = &w.g.ccs[p->ccs[0]];

		ok(cc->len == 2 && cc->elems[0].func == F_MAIN && cc->elems[1].func == F_P &&
			   cc->elems[1].callsite == 1,
		   "transmitter: P's context is main -> P@1");
	}
	fq = vnode(&w.g, NODE(&w.t, F_MAIN, 0, F_Q, 6, F_F, 7));
	fq2 = vnode(&w.g, fq2_cct);
	ok(fq && fq->type == VP_VCG_TASK, "contrast: F under Q is a Task");
	ok(fq2 && fq2->type == VP_VCG_CONTRAST, "contrast: F under Q2 is a Contrast");
	if (fq2 && fq2->nccs == 1) {
		const struct vp_vcg_cc *cc = &w.g.ccs[fq2->ccs[0]];

		/* Q2 is unused: it is folded into F's call context */
		ok(cc->len == 3 && cc->elems[1].func == F_Q2 && cc->elems[2].callsite == 9,
		   "contrast: its context main -> Q2@8 -> F@9 folds Q2 in");
	}
	is_uint(3, w.g.npatterns, "transmitter: patterns P, F (Task), F (Contrast)");
	world_free(&w);
}

/* P calls X (1200 ns) in 30 % of its calls and Y (300 ns) otherwise. */
static void test_exclusive(void)
{
	struct world w;
	const struct vp_vcg_node *p, *x;
	const struct vp_vcg_segment *s;

	reset_main_stream();
	for (int i = 0; i < 100; i++) {
		call(F_P, 1);
		work(5);
		if (i % 10 < 3)
			leaf(F_X, 2, 1200);
		else
			leaf(F_Y, 3, 300);
		leave();
	}
	world_build(&w, 0.4, 0.1);
	p = vnode(&w.g, NODE(&w.t, F_MAIN, 0, F_P, 1));
	x = vnode(&w.g, NODE(&w.t, F_MAIN, 0, F_P, 1, F_X, 2));
	ok(x && x->type == VP_VCG_CONTRIBUTOR, "exclusive: X (constant) is a Contributor");
	ok(!vnode(&w.g, NODE(&w.t, F_MAIN, 0, F_P, 1, F_Y, 3)), "exclusive: Y is not in it");
	s = segment(&w.g, p, x);
	ok(s != NULL, "exclusive: X has a back-edge to P");
	if (s)
		is_double(1200.0 * 1200 / (900.0 * 900), s->cf, 1e-9,
			  "exclusive: its cf is 178 %%, above 100 %%");
	world_free(&w);
}

/* P calls L (constant) 1 to 10 times. */
static void test_loop(void)
{
	struct world w;
	const struct vp_vcg_node *p, *l;
	const struct vp_vcg_segment *s;

	reset_main_stream();
	for (int i = 0; i < 150; i++) {
		call(F_P, 1);
		work(10);
		for (int j = 0; j < 1 + (i * 7) % 10; j++)
			leaf(F_L, 2, 100);
		leave();
	}
	world_build(&w, 0.4, 0.1);
	p = vnode(&w.g, NODE(&w.t, F_MAIN, 0, F_P, 1));
	l = vnode(&w.g, NODE(&w.t, F_MAIN, 0, F_P, 1, F_L, 2));
	ok(l && l->type == VP_VCG_CONTRIBUTOR, "loop: L is a Contributor");
	ok(l && vp_stats_cov(&l->stats) == 0.0, "loop: with CoV 0");
	s = segment(&w.g, p, l);
	ok(s && fabs(s->cf - 1.0) < 1e-9, "loop: its trip count is P's variance (cf 100 %%)");
	/* a Contributor's VIM is what it contributes: it survives trimming */
	ok(l && l->vim > 0.5 * p->vim, "loop: L's VIM counts the variance it contributes");
	world_free(&w);
}

/*
 * H called from two call sites of main; each H calls F, whose cost
 * alternates between lo and hi (different per site).  H's variance is F's.
 */
enum { NH = 200 };
static double h_x[2 * NH];

static void two_sites(uint64_t lo_a, uint64_t hi_a, uint64_t lo_b, uint64_t hi_b)
{
	reset_main_stream();
	for (int i = 0; i < NH; i++) {
		uint64_t fa = i % 2 ? hi_a : lo_a, fb = i % 3 ? hi_b : lo_b;

		call(F_H, 1);
		work(10);
		leaf(F_F, 3, fa);
		leave();
		call(F_H, 2);
		work(10);
		leaf(F_F, 3, fb);
		leave();
		h_x[2 * i] = (double)fa;
		h_x[2 * i + 1] = (double)fb;
	}
}

static void test_merge_across(void)
{
	struct world w;
	const struct vp_vcg_node *ha, *hb, *fa;
	const struct vp_vcg_segment *s;
	double mean, var, yvar;

	two_sites(100, 900, 120, 960);
	world_build(&w, 0.01, 0.0);
	ha = vnode(&w.g, NODE(&w.t, F_MAIN, 0, F_H, 1));
	hb = vnode(&w.g, NODE(&w.t, F_MAIN, 0, F_H, 2));
	ok(ha && hb && ha != hb, "tau 0.01: H at the two call sites stays apart");
	is_uint(2, w.g.npatterns, "tau 0.01: two patterns");
	is_uint(2, w.g.base_patterns, "base layer: two patterns");
	is_uint(4, w.g.base_nodes, "base layer: four nodes");

	world_regraph(&w, 0.4, 0.0);
	ha = vnode(&w.g, NODE(&w.t, F_MAIN, 0, F_H, 1));
	hb = vnode(&w.g, NODE(&w.t, F_MAIN, 0, F_H, 2));
	ok(ha && ha == hb, "tau 0.4: the two patterns merge");
	is_uint(1, w.g.npatterns, "tau 0.4: one pattern");
	is_uint(1, w.g.layers, "tau 0.4: in one layer");
	if (!ha || ha != hb)
		bail("no merge");
	is_uint(2, ha->nccs, "merged root: both call contexts from main");
	is_uint(2, ha->ncct, "merged root: stands for both CCT nodes");
	/* statistics of the merged node = those of the union of invocations */
	direct(h_x, 2 * NH, &mean, &var);
	yvar = var;
	mean += 10;
	is_uint(2 * NH, ha->stats.n, "merged H: N is the sum");
	is_double(mean, ha->stats.mean, 1e-9, "merged H: mean of the union (%g)", mean);
	is_double(var, vp_stats_variance(&ha->stats), 1e-6, "merged H: variance of the union (%g)",
		  var);
	fa = vnode(&w.g, NODE(&w.t, F_MAIN, 0, F_H, 1, F_F, 3));
	ok(fa && fa == vnode(&w.g, NODE(&w.t, F_MAIN, 0, F_H, 2, F_F, 3)),
	   "merged F: one node for both");
	if (fa)
		is_double(var, vp_stats_variance(&fa->stats), 1e-6,
			  "merged F: variance of the union");
	s = segment(&w.g, ha, fa);
	ok(s != NULL, "merged segment: one back-edge");
	if (s) {
		is_uint(2 * NH, s->n, "merged segment: over all invocations of H");
		is_double(yvar, s->variance, 1e-6, "merged segment: var(Y^{H|F}) of the union");
		is_double(1.0, s->cf, 1e-9, "merged segment: cf still 100 %%");
		is_uint(2, s->ncomponents, "merged segment: components of both roots (%u)",
			s->ncomponents);
	}
	world_free(&w);
}

/*
 * R calls H from two call sites in every invocation; each H calls F.  The
 * two H subtrees are siblings inside R's pattern.
 */
enum { NR = 240 };
static double r_fa[NR], r_fb[NR];

static void test_merge_within(void)
{
	struct world w;
	const struct vp_vcg_node *r, *ha, *hb, *f;
	const struct vp_vcg_segment *s;
	double all[2 * NR], sum[NR], mean, var;

	reset_main_stream();
	for (int i = 0; i < NR; i++) {
		r_fa[i] = i % 2 ? 900 : 100;
		r_fb[i] = i % 3 ? 960 : 120;
		call(F_R, 1);
		work(5);
		call(F_H, 2);
		leaf(F_F, 4, (uint64_t)r_fa[i]);
		leave();
		call(F_H, 3);
		leaf(F_F, 4, (uint64_t)r_fb[i]);
		leave();
		leave();
		all[2 * i] = r_fa[i];
		all[2 * i + 1] = r_fb[i];
		sum[i] = r_fa[i] + r_fb[i];
	}
	world_build(&w, 0.01, 0.0);
	r = vnode(&w.g, NODE(&w.t, F_MAIN, 0, F_R, 1));
	ha = vnode(&w.g, NODE(&w.t, F_MAIN, 0, F_R, 1, F_H, 2));
	hb = vnode(&w.g, NODE(&w.t, F_MAIN, 0, F_R, 1, F_H, 3));
	ok(r && ha && hb && ha != hb, "within, tau 0.01: the two H stay apart");
	is_uint(2, r ? r->nchildren : 0, "within, tau 0.01: R has two children");
	is_uint(2, r ? r->nols : 0, "within, tau 0.01: two segments from R");

	world_regraph(&w, 0.4, 0.0);
	r = vnode(&w.g, NODE(&w.t, F_MAIN, 0, F_R, 1));
	ha = vnode(&w.g, NODE(&w.t, F_MAIN, 0, F_R, 1, F_H, 2));
	hb = vnode(&w.g, NODE(&w.t, F_MAIN, 0, F_R, 1, F_H, 3));
	ok(r && ha && ha == hb, "within, tau 0.4: the two H merge");
	if (!r || !ha || ha != hb)
		bail("no merge within");
	is_uint(1, r->nchildren, "within, tau 0.4: R has one child");
	is_uint(2, ha->nccs, "within: merged H has both call sites");
	direct(all, 2 * NR, &mean, &var);
	f = vnode(&w.g, NODE(&w.t, F_MAIN, 0, F_R, 1, F_H, 2, F_F, 4));
	ok(f && f->stats.n == 2 * NR, "within: merged F counts both");
	if (f) {
		is_double(mean, f->stats.mean, 1e-9, "within: merged F's mean is the union's");
		is_double(var, vp_stats_variance(&f->stats), 1e-6,
			  "within: merged F's variance is the union's");
	}
	/* one segment R ~> H ~> F; Y^{R|F} is now both F calls per R */
	s = segment(&w.g, r, f);
	ok(s != NULL, "within: the two segments became one");
	is_uint(1, r->nols, "within: one segment from R");
	direct(sum, NR, &mean, &var);
	if (s) {
		is_uint(NR, s->n, "within: over R's invocations");
		is_double(mean, s->mean, 1e-9, "within: mean of Y^{R|F} = both calls (%g)", mean);
		is_double(var, s->variance, 1e-6,
			  "within: var(Y^{R|F}) includes their covariance (%g)", var);
		is_double(var / vp_stats_variance(&r->stats), s->cf, 1e-9, "within: cf");
	}
	world_free(&w);
}

/*
 * H calls A@1 every time and A@2 in 2 % of its calls; both A call F with
 * the same costs (A@2's share of H's variance is 6.5 %).  Only A@1 carries
 * H's variance: the subtrees must not merge, whatever tau (Kumar and Pande,
 * §8.1: frame_estimate (2) and (6)).
 */
static void incompatible_stream(int period, int second)
{
	reset_main_stream();
	for (int i = 0; i < 500; i++) {
		call(F_H, 1);
		work(10);
		call(F_A, 2);
		leaf(F_F, 4, i % 2 ? 900 : 100);
		leave();
		if (i % period == 0 || i % period == second) {
			call(F_A, 3);
			leaf(F_F, 4, i % 2 ? 900 : 100);
			leave();
		}
		leave();
	}
}

static void test_incompatible(void)
{
	struct world w;
	const struct vp_vcg_node *a1, *a2, *h;

	incompatible_stream(100, 51);
	world_build(&w, 1.0, 0.0);
	h = vnode(&w.g, NODE(&w.t, F_MAIN, 0, F_H, 1));
	a1 = vnode(&w.g, NODE(&w.t, F_MAIN, 0, F_H, 1, F_A, 2));
	a2 = vnode(&w.g, NODE(&w.t, F_MAIN, 0, F_H, 1, F_A, 3));
	ok(a1 && a2 && a1->type == VP_VCG_TASK && a2->type == VP_VCG_TASK,
	   "incompatible: both A are Tasks");
	ok(a1 && a2 && a1 != a2, "incompatible: they do not merge even at tau 1");
	ok(a1 && a1->ncls == 1 && a2 && a2->ncls == 0,
	   "incompatible: because only A@1 is inside H's segment");
	ok(h && h->nchildren == 2, "incompatible: H keeps two children");
	world_free(&w);

	/* control: in 4 % of the calls A@2 carries 12 % of H's variance, has a
	 * segment too, and the two merge */
	incompatible_stream(50, 1);
	world_build(&w, 1.0, 0.0);
	a1 = vnode(&w.g, NODE(&w.t, F_MAIN, 0, F_H, 1, F_A, 2));
	a2 = vnode(&w.g, NODE(&w.t, F_MAIN, 0, F_H, 1, F_A, 3));
	ok(a1 && a1 == a2, "compatible control: with segments through both they merge");
	world_free(&w);
}

/* Trimming: a pattern 100 times less important than the first goes. */
static void test_trim(void)
{
	struct world w;
	size_t n0;

	reset_main_stream();
	for (int i = 0; i < 200; i++) {
		leaf(F_S, 1, i % 2 ? 10000 : 1000);
		leaf(F_T, 2, i % 2 ? 100 : 10);
	}
	world_build(&w, 0.4, 0.0);
	n0 = w.g.npatterns;
	is_uint(2, n0, "trim, beta 0: both patterns");
	is_uint(0, w.g.trimmed_patterns, "trim, beta 0: nothing trimmed");
	ok(w.g.patterns[0].vim > w.g.patterns[1].vim, "trim: patterns sorted by VIM");
	is_uint(F_S, w.g.nodes[w.g.patterns[0].root].func, "trim: S first");
	world_regraph(&w, 0.4, 0.1);
	is_uint(1, w.g.npatterns, "trim, beta 0.1: T's pattern is trimmed");
	is_uint(1, w.g.trimmed_patterns, "trim, beta 0.1: counted");
	is_uint(F_S, w.g.nodes[0].func, "trim, beta 0.1: S remains");
	world_free(&w);
}

/*
 * Deep recursion: main -> T -> R -> R -> ... to depth @depth, four times.
 * Every R spends 7 ns of its own; the deepest adds 100 or 900 by turns,
 * so every R_d has variance 400^2 and mean 7 m + 500, m = depth - d + 1
 * levels down to the bottom: CoV 400 / (7 m + 500) is high (> 0.4) for
 * the deepest 71, the others are Contrasts (R is a Task elsewhere) and T,
 * neither, is folded away.  One pattern, a chain of @depth nodes, and a
 * back-edge from each high-variance R_d to the bottom (all of R_d's
 * variance: cf 1).
 *
 * With @helper, every R also calls H (1 ns after its own 7), which takes
 * 10 ns, and it is the deepest H that varies instead: R_d's mean is
 * 18 m + 490, the deepest 28 R are Tasks, and so is that H; the other H,
 * Contrasts, have two orders of magnitude less VIM than their sibling R
 * and are trimmed.  The chain ends in that H, where every back-edge ends.
 *
 * Laid out a level at a time, every level copied everything below it: the
 * graph alone took 14 s of CPU, and 27 s with the helper even once runs
 * of single children were laid out in one go (every R has two children).
 */
enum { DEEP = 30000, DEEP_REPS = 4 };

static void deep_recursion(uint32_t depth, int helper)
{
	uint32_t *rec = bcalloc(depth + 1, sizeof(*rec)), *lvl, hd = 0, bottom = depth - !helper;
	uint32_t ntask = helper ? 28 : 71, first = depth - ntask + 1, nseg = ntask - !helper;
	struct vp_vcg_params gp = { 0.4, 0.1 };
	size_t bad_node = 0, bad_seg = 0, bad_list = 0;
	const struct vp_vcg *g;
	struct world w;
	clock_t t0;
	double cpu;

	reset_main_stream();
	for (int r = 0; r < DEEP_REPS; r++) {
		uint64_t vary = r % 2 ? 900 : 100;

		call(F_T, 1);
		for (uint32_t d = 1; d <= depth; d++) {
			call(F_R, d == 1 ? 2 : 3);
			work(7 + (!helper && d == depth ? vary : 0));
			if (helper) {
				work(1);
				leaf(F_H, 4, d == depth ? vary : 10);
			}
		}
		for (uint32_t d = 1; d <= depth; d++)
			leave();
		leave();
	}
	world_build(&w, 0.4, 0.1);
	g = &w.g;
	/* R_d's CCT node (parents come before their children) and the last H */
	lvl = bcalloc(w.t.nnodes, sizeof(*lvl));
	for (uint32_t i = 1; i < w.t.nnodes; i++) {
		if (w.t.nodes[i].func == F_H && lvl[w.t.nodes[i].parent] == depth)
			hd = i;
		if (w.t.nodes[i].func != F_R)
			continue;
		lvl[i] = lvl[w.t.nodes[i].parent] + 1;
		if (lvl[i] <= depth)
			rec[lvl[i]] = i;
	}
	free(lvl);
	ok(rec[depth] != 0 && (hd != 0) == helper, "deep %u: the tree goes down to R_%u", depth,
	   depth);
	is_uint(1, g->npatterns, "deep %u: one pattern", depth);
	is_uint(bottom + 1, g->nnodes, "deep %u: of every R%s", depth, helper ? " and the last H" : "");
	is_uint(bottom + 1, g->npatterns ? g->patterns[0].nnodes : 0, "deep %u: all in it", depth);
	is_uint(helper ? 2 * depth : depth, g->base_nodes, "deep %u: extracted", depth);
	is_uint(helper ? depth - 1 : 0, g->trimmed_nodes, "deep %u: trimmed", depth);
	is_uint(0, g->merges, "deep %u: nothing to merge", depth);
	is_uint(nseg, g->nsegments, "deep %u: a back-edge from every high-variance R above the bottom",
		depth);
	if (g->nnodes != bottom + 1 || g->nsegments != nseg)
		bail("deep %u: the graph has the wrong size", depth);
	/* node i < depth is R_{i+1}, depth first; then the last H */
	for (uint32_t i = 0; i <= bottom; i++) {
		const struct vp_vcg_node *n = &g->nodes[i];
		uint32_t d = i + 1, m = depth - d + 1, isr = i < depth;
		int task = !isr || d >= first;

		bad_node += n->pattern != 0 || n->func != (isr ? F_R : F_H) || n->ncct != 1 ||
			    n->cct[0] != (isr ? rec[d] : hd) ||
			    n->parent != (i ? i - 1 : VP_NO_NODE) ||
			    n->nchildren != (i < bottom) || (i < bottom && n->children[0] != i + 1) ||
			    n->type != (task ? VP_VCG_TASK : VP_VCG_CONTRAST) ||
			    n->stats.n != DEEP_REPS || vp_stats_variance(&n->stats) != 160000.0 ||
			    n->stats.mean != (!isr ? 500.0 : helper ? 18.0 * m + 490 : 7.0 * m + 500) ||
			    n->nccs != 1 || (isr && n->ccs[0] != g->nodes[i ? 1 : 0].ccs[0]);
		/* ols: its own back-edge; cls: those of every Task above it */
		bad_list += n->nols != (task && i < bottom) || n->ncls != (task ? d - first : 0);
		if (n->nols == 1)
			bad_list += n->ols[0] != d - first;
		for (uint32_t k = 0; k < n->ncls; k++)
			bad_list += n->cls[k] != k;
	}
	is_uint(0, bad_node, "deep %u: every node as built (chain, type, statistics, context)", depth);
	is_uint(0, bad_list, "deep %u: every node's originating and crossing back-edges", depth);
	ok(g->ccs[g->nodes[0].ccs[0]].len == 3 && g->ccs[g->nodes[1].ccs[0]].len == 1 &&
		   g->ccs[g->nodes[1].ccs[0]].elems[0].callsite == 3 &&
		   g->ccs[g->nodes[bottom].ccs[0]].elems[0].callsite == (helper ? 4 : 3),
	   "deep %u: contexts main -> T@1 -> R@2 at the root, R@3 below%s", depth,
	   helper ? ", H@4 last" : "");
	/* segment q: from R_{first+q} down to the bottom */
	for (uint32_t q = 0; q < g->nsegments; q++) {
		const struct vp_vcg_segment *s = &g->segments[q];
		uint32_t h = first + q;

		bad_seg += s->len != bottom - h + 2 || s->ncomponents != 1 ||
			   s->components[0] != (h < depth ? rec[h + 1] : hd) || s->n != DEEP_REPS ||
			   s->mean != g->nodes[bottom].stats.mean || s->variance != 160000.0 ||
			   fabs(s->cf - 1.0) > 1e-12;
		for (uint32_t k = 0; k < s->len && k <= depth; k++)
			bad_seg += s->nodes[k] != h - 1 + k;
	}
	is_uint(0, bad_seg, "deep %u: back-edges R_d ~> the bottom, all of R_d's variance", depth);
	/* the graph alone, again, timed */
	vp_vcg_release(&w.g);
	t0 = clock();
	if (vp_vcg_build(&w.g, &w.t, &w.a, &w.s, &gp))
		bail("vp_vcg_build");
	cpu = (double)(clock() - t0) / CLOCKS_PER_SEC;
	ok(cpu < 2.0, "deep %u: the graph in %.3f s of CPU", depth, cpu);
	is_uint(bottom + 1, w.g.nnodes, "deep %u: the same graph again", depth);
	world_free(&w);
	free(rec);
}

static void test_deep(void)
{
	deep_recursion(DEEP, 0);
	deep_recursion(DEEP, 1);
}

static void test_params(void)
{
	struct vp_vcg_params p;
	char msg[100];

	vp_vcg_params_default(&p);
	is_double(0.4, p.tau, 0, "params: tau defaults to 0.4");
	is_double(0.1, p.beta, 0, "params: beta defaults to 0.1");
	p.beta = 1.5;
	is_int(-EINVAL, vp_vcg_params_check(&p, msg, sizeof(msg)), "params: beta 1.5 refused");
	is_string("beta must be between 0 and 1", msg, "params: message");
	p.beta = 0.1;
	p.tau = 1.5;
	is_int(-EINVAL, vp_vcg_params_check(&p, msg, sizeof(msg)), "params: tau 1.5 refused");
}

int main(void)
{
	plan_lazy();
	test_ks();
	test_transmitter();
	test_exclusive();
	test_loop();
	test_merge_across();
	test_merge_within();
	test_incompatible();
	test_trim();
	test_params();
	test_deep();
	free(evs);
	return 0;
}
