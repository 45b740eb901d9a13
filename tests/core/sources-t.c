/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * sources-t.c - tests for core/sources.c on synthetic programs whose
 * variance structure is known by construction: a grandchild behind a
 * transmitter, mutually exclusive branches (negative covariance, a share
 * above 100 %), a loop whose trip count varies, exactly-once and
 * likely-once cascades, a loop that must be inlined, batched passes, and
 * the same analysis through a real data file.  Expected values are
 * computed here, two-pass, from the durations the programs were given.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/cct.h"
#include "core/datafile.h"
#include "core/patterns.h"
#include "core/sources.h"
#include "tests/core/events.h"
#include "tests/tap/basic.h"

enum {
	F_MAIN, F_P, F_G, F_A, F_B, F_C, F_X, F_Y, F_L, F_Z, F_A1, F_A2, F_P4, F_G4, F_A4, F_B4,
	F_P5, F_G5, F_A5, F_P6, F_L6, F_P8, F_M8, NFUNCS
};

/* ---- the scenarios; each returns per-invocation values for checking ---- */

enum { N1 = 200, N2 = 100, N3 = 150, N4 = 300, N5 = 300, N6 = 240 };

/* P calls G once; G's variance is A's: G only transmits it. */
static double s1_a[N1];

static void scenario_transmitter(void)
{
	for (int i = 0; i < N1; i++) {
		s1_a[i] = i % 2 ? 900 : 100;
		call(F_P, 1);
		work(20);
		call(F_G, 2);
		work(10);
		leaf(F_A, 3, (uint64_t)s1_a[i]);
		leaf(F_B, 4, 50);
		leave();
		leaf(F_C, 5, 30);
		leave();
	}
}

/* P calls X (1200 ns) in 30 % of its invocations, Y (300 ns) otherwise. */
static void scenario_exclusive(void)
{
	for (int i = 0; i < N2; i++) {
		call(F_P, 6);
		work(5);
		if (i % 10 < 3)
			leaf(F_X, 7, 1200);
		else
			leaf(F_Y, 8, 300);
		leave();
	}
}

/* P calls L, which always takes 100 ns, 1 to 10 times. */
static void scenario_loop(void)
{
	for (int i = 0; i < N3; i++) {
		int k = 1 + (i * 7) % 10;

		call(F_P, 9);
		work(10);
		for (int j = 0; j < k; j++)
			leaf(F_L, 10, 100);
		leave();
	}
}

/* P4 -> G4 (once) -> A4 (once) -> A1 (varies), A2; G4 also calls B4. */
static double s4_a1[N4], s4_b4[N4], s4_x[N4];

static void scenario_cascade(void)
{
	for (int i = 0; i < N4; i++) {
		s4_a1[i] = i % 3 == 0 ? 1000 : 100;
		s4_b4[i] = 60 + (i % 6) * 10;
		s4_x[i] = 7 + 3 + 2 + s4_a1[i] + 40 + s4_b4[i];
		call(F_P4, 11);
		work(7);
		call(F_G4, 12);
		work(3);
		call(F_A4, 13);
		work(2);
		leaf(F_A1, 14, (uint64_t)s4_a1[i]);
		leaf(F_A2, 15, 40);
		leave();
		leaf(F_B4, 16, (uint64_t)s4_b4[i]);
		leave();
		leave();
	}
}

/* As the cascade, but G5 calls A5 twice in 2 % of its invocations. */
static double s5_a1[N5], s5_x[N5];

static void scenario_likely(void)
{
	for (int i = 0; i < N5; i++) {
		int twice = i % 50 == 0;

		s5_a1[i] = (i % 3 == 0 ? 1000 : 100) * (twice ? 2 : 1);
		s5_x[i] = 7 + 3 + (twice ? 4 : 2) + s5_a1[i] + (twice ? 80 : 40);
		call(F_P5, 21);
		work(7);
		call(F_G5, 22);
		work(3);
		for (int j = 0; j <= twice; j++) {
			call(F_A5, 23);
			work(2);
			leaf(F_A1, 24, i % 3 == 0 ? 1000 : 100);
			leaf(F_A2, 25, 40);
			leave();
		}
		leave();
		leave();
	}
}

/* P6 calls L6 1 to 4 times; each L6 calls Z, whose cost varies. */
static double s6_self6[N6], s6_selfl[N6], s6_z[N6];

static void scenario_inline_loop(void)
{
	for (int i = 0; i < N6; i++) {
		int k = 1 + i % 4;

		s6_self6[i] = 15;
		s6_selfl[i] = 0;
		s6_z[i] = 0;
		call(F_P6, 31);
		work(15);
		for (int j = 0; j < k; j++) {
			uint64_t z = ((uint64_t)i * 37 + (uint64_t)j * 11) % 7 < 3 ? 800 : 60;

			call(F_L6, 32);
			work(10);
			leaf(F_Z, 33, z);
			leave();
			s6_selfl[i] += 10;
			s6_z[i] += (double)z;
		}
		leave();
	}
}

/*
 * P8 -> G4 (once) -> A4 (once) -> A1 (varies): an exactly-once cascade;
 * P8 -> L6 (loop) -> M8 (loop) -> Z (varies): two levels of inlining.  The
 * second pass that the loops need also inlines the cascade's chain.
 */
enum { N8 = 240 };
static double s8_a1[N8], s8_z[N8], s8_x[N8];

static void scenario_forced(void)
{
	for (int i = 0; i < N8; i++) {
		s8_a1[i] = i % 3 == 0 ? 900 : 100;
		s8_z[i] = 0;
		call(F_P8, 41);
		work(5);
		call(F_G4, 42);
		call(F_A4, 43);
		leaf(F_A1, 44, (uint64_t)s8_a1[i]);
		leave();
		leave();
		for (int j = 0; j < 1 + i % 2; j++) {
			call(F_L6, 45);
			for (int k = 0; k < 1 + (i / 2) % 2; k++) {
				uint64_t z = (i * 7 + j * 3 + k) % 5 < 2 ? 700 : 50;

				call(F_M8, 46);
				leaf(F_Z, 47, z);
				leave();
				s8_z[i] += (double)z;
			}
			leave();
		}
		leave();
		s8_x[i] = 5 + s8_a1[i] + s8_z[i];
	}
}

/* ---- building and analysing ---- */

struct world {
	struct vp_cct t;
	struct vp_analysis a;
	struct vp_sources s;
};

static void world_build(struct world *w, unsigned max_passes, double once_p)
{
	struct vp_analysis_params ap;
	struct vp_sources_params sp;
	struct vp_builder *b;
	int err;

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
	sp.max_passes = max_passes;
	if (once_p > 0)
		sp.once_probability = once_p;
	/* the manual interface: every pass replays the same events */
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
}

static void world_free(struct world *w)
{
	vp_sources_release(&w->s);
	vp_analysis_release(&w->a);
	vp_cct_release(&w->t);
}

static const struct vp_source *find_source(const struct vp_origin *o, uint32_t underlier)
{
	for (size_t i = 0; o && i < o->nsources; i++)
		if (o->sources[i].underlier == underlier)
			return &o->sources[i];
	return NULL;
}

static const struct vp_component *find_component(const struct vp_origin *o, uint32_t node)
{
	for (size_t i = 0; o && i < o->ncomponents; i++)
		if (o->components[i].node == node)
			return &o->components[i];
	return NULL;
}

/* Population mean, variance and covariance, two-pass. */
static double mean_of(const double *x, size_t n)
{
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += x[i];
	return s / (double)n;
}

static double cov_of(const double *x, const double *y, size_t n)
{
	double mx = mean_of(x, n), my = mean_of(y, n), s = 0;

	for (size_t i = 0; i < n; i++)
		s += (x[i] - mx) * (y[i] - my);
	return s / (double)n;
}

/* ---- tests ---- */

static void test_transmitter(void)
{
	struct world w;
	const struct vp_origin *o;
	const struct vp_source *src;
	uint32_t p, g, a;
	double var;

	reset_stream();
	call(F_MAIN, 0);
	scenario_transmitter();
	leave();
	world_build(&w, 8, 0);
	p = NODE(&w.t, F_MAIN, 0, F_P, 1);
	g = NODE(&w.t, F_MAIN, 0, F_P, 1, F_G, 2);
	a = NODE(&w.t, F_MAIN, 0, F_P, 1, F_G, 2, F_A, 3);
	var = cov_of(s1_a, s1_a, N1);
	o = vp_sources_origin(&w.s, p);
	ok(o != NULL, "transmitter: P is an originator");
	if (!o)
		bail("no origin for P");
	is_double(var, o->variance, 1e-6, "transmitter: var(P) = var(A) = %g", var);
	is_double(1.0, find_component(o, g)->share, 1e-9, "transmitter: component G has 100 %%");
	is_double(0.0, find_component(o, VP_NO_NODE)->share, 1e-9, "transmitter: self has 0 %%");
	is_uint(1, o->nsources, "transmitter: one linear segment");
	src = find_source(o, a);
	ok(src != NULL, "transmitter: its underlier is the grandchild A, not G");
	if (src) {
		is_uint(2, src->len, "transmitter: segment P ~> G ~> A");
		is_uint(g, src->chain[0], "transmitter: through component G");
		is_int(VP_SOURCE_MATRIX, src->how, "transmitter: measured in P's inlined matrix");
		is_double(1.0, src->cf, 1e-9, "transmitter: cf = C_AA / var(P) = 100 %%");
		is_double(1.0, src->share, 1e-9, "transmitter: share 100 %%");
		is_double(500.0, src->mean, 1e-9, "transmitter: mean of Y^{P|A} = 500");
		is_double(var, src->variance, 1e-6, "transmitter: variance of Y^{P|A}");
	}
	is_uint(1, w.s.passes, "transmitter: one extra pass");
	is_int(0, w.s.limited, "transmitter: nothing left undone");
	is_int(VP_ONCE_EXACT, w.s.once[g], "transmitter: G is called exactly once per P");
	is_uint(N1, w.s.calls[3 * g + 1], "transmitter: %d invocations of P call G once", N1);
	is_uint(1, o->ninlined, "transmitter: G was inlined into P");
	/* G is an originator too, with A as its direct child */
	src = find_source(vp_sources_origin(&w.s, g), a);
	ok(src && src->len == 1 && src->how == VP_SOURCE_MATRIX,
	   "transmitter: A is G's direct source");
	world_free(&w);
}

static void test_exclusive(void)
{
	struct world w;
	const struct vp_origin *o;
	const struct vp_source *src;
	const struct vp_component *cx, *cy;
	uint32_t p, x, y;

	reset_stream();
	call(F_MAIN, 0);
	scenario_exclusive();
	leave();
	world_build(&w, 8, 0);
	p = NODE(&w.t, F_MAIN, 0, F_P, 6);
	x = NODE(&w.t, F_MAIN, 0, F_P, 6, F_X, 7);
	y = NODE(&w.t, F_MAIN, 0, F_P, 6, F_Y, 8);
	o = vp_sources_origin(&w.s, p);
	if (!o)
		bail("no origin for the exclusive branches");
	/* b ~ Bernoulli(0.3): Y_X = 1200 b, Y_Y = 300 (1 - b), X = c + 900 b */
	is_double(0.21 * 900 * 900, o->variance, 1e-6, "exclusive: var(P) = 0.21 * 900^2");
	cx = find_component(o, x);
	cy = find_component(o, y);
	is_double(1200.0 / 900.0, cx->share, 1e-9, "exclusive: X's share is 133 %% (> 100 %%)");
	is_double(-300.0 / 900.0, cy->share, 1e-9, "exclusive: Y's share is -33 %%");
	is_double(1200.0 * 1200 / (900.0 * 900), cx->cf, 1e-9, "exclusive: X's cf is 178 %%");
	is_double(300.0 * 300 / (900.0 * 900), cy->cf, 1e-9, "exclusive: Y's cf is 11 %%");
	src = find_source(o, x);
	ok(src && src->len == 1, "exclusive: X is the source");
	ok(!find_source(o, y), "exclusive: Y, with a negative share, is not");
	is_uint(0, w.s.passes, "exclusive: leaves need no pass");
	world_free(&w);
}

static void test_loop_contributor(void)
{
	struct world w;
	const struct vp_origin *o;
	const struct vp_source *src;
	uint32_t p, l;

	reset_stream();
	call(F_MAIN, 0);
	scenario_loop();
	leave();
	world_build(&w, 8, 0);
	p = NODE(&w.t, F_MAIN, 0, F_P, 9);
	l = NODE(&w.t, F_MAIN, 0, F_P, 9, F_L, 10);
	ok(!w.a.high_variance[l], "loop: L itself does not vary (CoV %g)",
	   vp_stats_cov(&w.t.nodes[l].stats));
	ok(w.a.high_variance[p], "loop: P does (CoV %g)", vp_stats_cov(&w.t.nodes[p].stats));
	o = vp_sources_origin(&w.s, p);
	src = find_source(o, l);
	ok(src != NULL, "loop: L is P's source");
	if (src) {
		is_double(1.0, src->cf, 1e-9, "loop: L's trip count is all of P's variance");
		is_double(550.0, src->mean, 1e-9, "loop: 5.5 calls of 100 ns per invocation");
	}
	world_free(&w);
}

static void test_cascade(void)
{
	struct world w;
	const struct vp_origin *o;
	const struct vp_source *src;
	uint32_t p, g, a4, a1;
	double var;

	reset_stream();
	call(F_MAIN, 0);
	scenario_cascade();
	leave();
	world_build(&w, 8, 0);
	p = NODE(&w.t, F_MAIN, 0, F_P4, 11);
	g = NODE(&w.t, F_MAIN, 0, F_P4, 11, F_G4, 12);
	a4 = NODE(&w.t, F_MAIN, 0, F_P4, 11, F_G4, 12, F_A4, 13);
	a1 = NODE(&w.t, F_MAIN, 0, F_P4, 11, F_G4, 12, F_A4, 13, F_A1, 14);
	var = cov_of(s4_x, s4_x, N4);
	o = vp_sources_origin(&w.s, p);
	if (!o)
		bail("no origin P4");
	is_double(var, o->variance, 1e-6, "cascade: var(P4)");
	src = find_source(o, a1);
	ok(src != NULL, "cascade: A1, three levels down, is P4's source");
	if (src) {
		is_uint(3, src->len, "cascade: segment P4 ~> G4 ~> A4 ~> A1");
		is_int(VP_SOURCE_CASCADE, src->how, "cascade: found in A4's own matrix");
		is_double(cov_of(s4_a1, s4_a1, N4) / var, src->cf, 1e-9,
			  "cascade: cf = var(A1) / var(P4), exact");
		/* within A4 the other terms are constant: the share is A1's
		 * variance alone, without its covariance with B4 */
		is_double(cov_of(s4_a1, s4_a1, N4) / var, src->share, 1e-9,
			  "cascade: share from A4's terms");
		is_double(mean_of(s4_a1, N4), src->mean, 1e-9, "cascade: mean of Y^{P4|A1}");
		ok(fabs(cov_of(s4_a1, s4_x, N4) / var - src->share) > 0.01,
		   "cascade: which leaves out A1's covariance with B4 (full share %g)",
		   cov_of(s4_a1, s4_x, N4) / var);
	}
	is_int(VP_ONCE_EXACT, w.s.once[g], "cascade: G4 is called exactly once per P4");
	is_uint(1, o->ninlined, "cascade: only G4 was inlined into P4");
	is_uint(1, w.s.passes, "cascade: one pass (call counts, G4 inlined), none for A4");
	is_int(VP_ONCE_EXACT, w.s.once[a4], "cascade: A4 is called exactly once per G4");
	world_free(&w);
}

static void test_likely(void)
{
	struct world w;
	const struct vp_origin *o;
	const struct vp_source *src;
	uint32_t p, a5, a1;
	double var;

	reset_stream();
	call(F_MAIN, 0);
	scenario_likely();
	leave();
	world_build(&w, 8, 0);
	p = NODE(&w.t, F_MAIN, 0, F_P5, 21);
	a5 = NODE(&w.t, F_MAIN, 0, F_P5, 21, F_G5, 22, F_A5, 23);
	a1 = NODE(&w.t, F_MAIN, 0, F_P5, 21, F_G5, 22, F_A5, 23, F_A1, 24);
	var = cov_of(s5_x, s5_x, N5);
	is_int(VP_ONCE_LIKELY, w.s.once[a5], "likely: A5 is called once in 98 %% of G5's calls");
	is_uint(6, w.s.calls[3 * a5 + 2], "likely: ... and twice in 6 of them");
	o = vp_sources_origin(&w.s, p);
	src = find_source(o, a1);
	ok(src != NULL, "likely: A1 is P5's source");
	if (src) {
		is_int(VP_SOURCE_MATRIX, src->how, "likely: verified by a second pass");
		is_double(cov_of(s5_a1, s5_a1, N5) / var, src->cf, 1e-9,
			  "likely: cf = var(Y^{P5|A1}) / var(P5), exact");
		is_double(cov_of(s5_a1, s5_x, N5) / var, src->share, 1e-9,
			  "likely: share = Cov(Y^{P5|A1}, X) / var(P5), exact");
	}
	is_uint(2, w.s.passes, "likely: two passes");
	world_free(&w);

	/* With one pass allowed the cascade's finding stays unverified. */
	world_build(&w, 1, 0);
	src = find_source(vp_sources_origin(&w.s, p), a1);
	ok(src && src->how == VP_SOURCE_POTENTIAL, "likely, one pass: A1 is a potential source");
	is_int(1, w.s.limited, "likely, one pass: the limit is reported");
	world_free(&w);

	/* With the probability above 98 % A5 counts as a loop: inlined. */
	world_build(&w, 8, 0.99);
	is_int(VP_ONCE_NOT, w.s.once[a5], "likely at 99 %%: A5 is not-once");
	src = find_source(vp_sources_origin(&w.s, p), a1);
	ok(src && src->how == VP_SOURCE_MATRIX, "likely at 99 %%: A1 found by inlining");
	world_free(&w);

	/* No pass at all: the direct component is all there is. */
	world_build(&w, 0, 0);
	o = vp_sources_origin(&w.s, p);
	ok(o && o->nsources == 1 && o->sources[0].how == VP_SOURCE_UNEXPLORED &&
		   o->sources[0].len == 1,
	   "no pass: G5 is listed, unexplored");
	is_uint(0, w.s.passes, "no pass: none made");
	world_free(&w);
}

static void test_inline_loop(void)
{
	struct world w;
	const struct vp_origin *o;
	const struct vp_source *src;
	uint32_t p, l, z;
	double x[N6], var;

	reset_stream();
	call(F_MAIN, 0);
	scenario_inline_loop();
	leave();
	world_build(&w, 8, 0);
	p = NODE(&w.t, F_MAIN, 0, F_P6, 31);
	l = NODE(&w.t, F_MAIN, 0, F_P6, 31, F_L6, 32);
	z = NODE(&w.t, F_MAIN, 0, F_P6, 31, F_L6, 32, F_Z, 33);
	for (int i = 0; i < N6; i++)
		x[i] = s6_self6[i] + s6_selfl[i] + s6_z[i];
	var = cov_of(x, x, N6);
	is_int(VP_ONCE_NOT, w.s.once[l], "inline: L6 runs in a loop");
	o = vp_sources_origin(&w.s, p);
	src = find_source(o, z);
	ok(src != NULL, "inline: Z, below the loop, is P6's source");
	if (src) {
		is_uint(2, src->len, "inline: segment P6 ~> L6 ~> Z");
		is_int(VP_SOURCE_MATRIX, src->how, "inline: from P6's inlined matrix");
		is_double(cov_of(s6_z, s6_z, N6) / var, src->cf, 1e-9,
			  "inline: cf = var(sum of Z per P6) / var(P6)");
		is_double(cov_of(s6_z, x, N6) / var, src->share, 1e-9,
			  "inline: share = Cov(Y^{P6|Z}, X) / var(P6)");
		is_double(mean_of(s6_z, N6), src->mean, 1e-9, "inline: mean of Y^{P6|Z}");
	}
	ok(find_source(o, l) == NULL, "inline: L6 only transmits");
	is_uint(3, o->nvars, "inline: variables self(P6), self(L6), Z");
	world_free(&w);
}

static void test_forced(void)
{
	struct world w;
	const struct vp_origin *o;
	const struct vp_source *src;
	uint32_t p, a1, z;
	double var;

	reset_stream();
	call(F_MAIN, 0);
	scenario_forced();
	leave();
	world_build(&w, 8, 0);
	p = NODE(&w.t, F_MAIN, 0, F_P8, 41);
	a1 = NODE(&w.t, F_MAIN, 0, F_P8, 41, F_G4, 42, F_A4, 43, F_A1, 44);
	z = NODE(&w.t, F_MAIN, 0, F_P8, 41, F_L6, 45, F_M8, 46, F_Z, 47);
	var = cov_of(s8_x, s8_x, N8);
	o = vp_sources_origin(&w.s, p);
	is_uint(2, w.s.passes, "forced: two passes (two levels of loops)");
	src = find_source(o, z);
	ok(src && src->len == 3 && src->how == VP_SOURCE_MATRIX,
	   "forced: Z found below two inlined loops");
	if (src)
		is_double(cov_of(s8_z, s8_x, N8) / var, src->share, 1e-9, "forced: Z's share");
	src = find_source(o, a1);
	ok(src && src->how == VP_SOURCE_MATRIX,
	   "forced: the exactly-once chain to A1 was inlined in the same pass");
	if (src) {
		is_double(cov_of(s8_a1, s8_x, N8) / var, src->share, 1e-9,
			  "forced: so A1's share counts its covariance with Z");
		is_double(cov_of(s8_a1, s8_a1, N8) / var, src->cf, 1e-9, "forced: A1's cf");
	}
	is_uint(4, o ? o->ninlined : 0, "forced: G4, A4, L6 and M8 inlined");
	world_free(&w);
}

/* Several originators needing passes share them. */
static void test_batched(void)
{
	struct world w;

	reset_stream();
	call(F_MAIN, 0);
	scenario_transmitter();
	scenario_likely();
	scenario_inline_loop();
	scenario_cascade();
	leave();
	world_build(&w, 8, 0);
	is_uint(2, w.s.passes, "batched: four scenarios need two passes in all");
	ok(find_source(vp_sources_origin(&w.s, NODE(&w.t, F_MAIN, 0, F_P6, 31)),
		       NODE(&w.t, F_MAIN, 0, F_P6, 31, F_L6, 32, F_Z, 33)) != NULL,
	   "batched: the loop's source is found as alone");
	ok(find_source(vp_sources_origin(&w.s, NODE(&w.t, F_MAIN, 0, F_P, 1)),
		       NODE(&w.t, F_MAIN, 0, F_P, 1, F_G, 2, F_A, 3)) != NULL,
	   "batched: the transmitter's source is found as alone");
	world_free(&w);
}

/* The real thing: passes over a data file with the reader. */
static void test_file(void)
{
	char *dir = test_tmpdir();
	char *path = basprintf("%s/s.data", dir);
	struct vp_func funcs[NFUNCS];
	struct vp_header h = { 0 };
	unsigned char bid[1] = { 1 };
	struct vp_module mod = { "s", bid, sizeof(bid), 0 };
	struct vp_callsite cs = { 0, -1, 0x1000, "main+0x10", "s.c", 1 };
	struct vp_analysis_params ap;
	struct vp_sources_params sp;
	struct vp_reader *r;
	struct vp_writer *wr;
	struct vp_sources s;
	struct vp_analysis a;
	struct vp_cct t;
	char err[256];
	size_t ncs;
	const struct vp_source *src;

	memset(funcs, 0, sizeof(funcs));
	for (int i = 0; i < NFUNCS; i++)
		funcs[i].name = funcs[i].display = funcs[i].base = basprintf("f%d", i);
	h.unit = VP_UNIT_NS;
	h.clock = CLOCK_MONOTONIC;
	h.nfuncs = NFUNCS;
	h.funcs = funcs;
	h.nmodules = 1;
	h.modules = &mod;
	reset_stream();
	call(F_MAIN, 0);
	scenario_transmitter();
	leave();
	wr = vp_writer_new(path, &h);
	if (!wr)
		sysbail("vp_writer_new");
	vp_writer_thread(wr, 0, 1, 1);
	for (uint32_t i = 0; i < 64; i++) {
		cs.line = i;
		vp_writer_callsite(wr, i, &cs);
	}
	for (size_t i = 0; i < nev; i++)
		if (vp_writer_event(wr, &evs[i]))
			sysbail("vp_writer_event");
	if (vp_writer_finish(wr, &(struct vp_trailer){ 0 }))
		sysbail("vp_writer_finish");
	if (vp_reader_open(path, &r, err, sizeof(err)))
		bail("%s", err);
	vp_cct_init(&t);
	if (vp_build_file(r, &t, NULL))
		bail("vp_build_file");
	ncs = vp_reader_ncallsites(r);
	vp_analysis_params_default(&ap);
	vp_analysis_run(&a, &t, NFUNCS, &ap);
	vp_sources_params_default(&sp);
	is_int(0, vp_sources_run(&s, &t, &a, r, &sp), "file: vp_sources_run succeeds");
	is_uint(1, s.passes, "file: one pass over the file");
	is_uint(nev, s.pass_events, "file: it read all %zu events", nev);
	src = find_source(vp_sources_origin(&s, NODE(&t, F_MAIN, 0, F_P, 1)),
			  NODE(&t, F_MAIN, 0, F_P, 1, F_G, 2, F_A, 3));
	ok(src && src->len == 2 && fabs(src->cf - 1.0) < 1e-9, "file: A found through G");
	is_uint(ncs, vp_reader_ncallsites(r), "file: the reader has its call sites again");
	ok(vp_reader_trailer(r)->present, "file: ... and its trailer");
	vp_sources_release(&s);
	vp_analysis_release(&a);
	vp_cct_release(&t);
	vp_reader_free(r);
	for (int i = 0; i < NFUNCS; i++)
		free(funcs[i].name);
	free(path);
	test_tmpdir_free(dir);
}

static void test_params(void)
{
	struct vp_sources_params p;
	char msg[128] = "";

	vp_sources_params_default(&p);
	is_int(0, vp_sources_params_check(&p, msg, sizeof(msg)), "params: defaults are valid");
	p.once_probability = 1.0;
	is_int(-EINVAL, vp_sources_params_check(&p, msg, sizeof(msg)),
	       "params: once probability 1 is refused");
	is_string("once probability must be at least 0.5 and less than 1", msg,
		  "params: with a message");
	vp_sources_params_default(&p);
	p.min_contribution = 0;
	is_int(-EINVAL, vp_sources_params_check(&p, NULL, 0), "params: min contribution 0 refused");
}

int main(void)
{
	plan_lazy();
	test_transmitter();
	test_exclusive();
	test_loop_contributor();
	test_cascade();
	test_likely();
	test_inline_loop();
	test_forced();
	test_batched();
	test_file();
	test_params();
	free(evs);
	return 0;
}
