/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * deep-bench.c - how long `varperf report`'s analyses take on deep
 * recursion: main -> top -> rec -> rec -> ... down to DEPTH, REPS times,
 * the shape of a recursive descent parser or a tree walk.  Every rec
 * context is its own CCT node, so the tree is a chain of DEPTH nodes of
 * one function, the worst case of the Minimal Distinguishing Call
 * sequences (every chain of the function is compared with every other)
 * and of the pattern-similarity trees built on them.
 *
 *   deep-bench [depth [reps]]	(default 4000 3)
 *
 * Each rec invocation spends about 20 ns of its own, and in the deepest
 * tenth of each descent a cost drawn per descent: the deep invocations
 * vary a lot (high CoV), the shallow ones, mostly constant work, little;
 * so every rec context has to be told apart from the others.
 */
#include <config.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/cct.h"
#include "core/patterns.h"
#include "core/sources.h"
#include "core/vcg.h"

enum { F_MAIN, F_TOP, F_REC, NFUNCS };
enum { CS_MAIN, CS_TOP, CS_REC_TOP, CS_REC_REC };

static const char bench_name[] = "deep-bench";

#include "bench-events.h"

static void program(int maxdepth, int reps)
{
	call(F_MAIN, CS_MAIN);
	for (int r = 0; r < reps; r++) {
		unsigned slow = 1 + rnd(20); /* this descent's cost in its deepest tenth */

		call(F_TOP, CS_TOP);
		for (int d = 0; d <= maxdepth; d++) {
			call(F_REC, d ? CS_REC_REC : CS_REC_TOP);
			now += 20 + rnd(4) + (d >= maxdepth - maxdepth / 10 ? 20 * slow : 0);
		}
		for (int d = 0; d <= maxdepth; d++)
			leave();
		now += 10;
		leave();
	}
	leave();
}

int main(int argc, char **argv)
{
	int maxdepth = argc > 1 ? atoi(argv[1]) : 4000;
	int reps = argc > 2 ? atoi(argv[2]) : 3;
	struct vp_analysis_params ap;
	struct vp_sources_params sp;
	struct vp_vcg_params gp;
	struct vp_builder *b;
	struct vp_analysis a;
	struct vp_sources s;
	struct vp_vcg g;
	struct vp_cct t;
	size_t elems = 0;
	double t0, t1;
	int err;

	if (maxdepth < 1 || reps < 1)
		return fprintf(stderr, "usage: deep-bench [depth [reps]]\n"), 129;
	stack_func = calloc((size_t)maxdepth + 3, sizeof(*stack_func));
	if (!stack_func)
		return fail("stack", -ENOMEM);
	program(maxdepth, reps);
	vp_cct_init(&t);
	b = vp_builder_new(&t, NFUNCS, NULL);
	if (!b)
		return fail("builder", -ENOMEM);
	err = vp_builder_feed(b, evs, nev);
	if (!err)
		err = vp_builder_finish(b, NULL);
	vp_builder_free(b);
	if (err)
		return fail("building the tree", err);
	printf("deep recursion: depth %d x %d: %zu nodes, %zu events\n", maxdepth, reps,
	       t.nnodes, nev);
	vp_analysis_params_default(&ap);
	t0 = seconds();
	err = vp_analysis_run(&a, &t, NFUNCS, &ap);
	t1 = seconds();
	if (err)
		return fail("analysis", err);
	for (size_t i = 0; i < a.npatterns; i++)
		elems += a.patterns[i].len;
	printf("patterns: %.3f s (Kumar et al. 2008: significance, MDC sequences, PSTs): %zu patterns, "
	       "%zu chain elements\n", t1 - t0, a.npatterns, elems);
	if (getenv("DEEP_BENCH_PATTERNS_ONLY"))
		return 0;
	vp_sources_params_default(&sp);
	t0 = seconds();
	err = vp_sources_start(&s, &t, &a, &sp);
	while (!err && vp_sources_more(&s)) {
		err = vp_sources_pass_begin(&s);
		if (!err)
			err = vp_sources_pass_feed(&s, evs, nev);
		if (!err)
			err = vp_sources_pass_end(&s);
	}
	if (!err)
		err = vp_sources_finish(&s);
	t1 = seconds();
	if (err)
		return fail("sources", err);
	printf("sources: %.3f s (Kumar and Pande, Step 2): %zu originators, %u extra passes\n", t1 - t0,
	       s.norigins, s.passes);
	vp_vcg_params_default(&gp);
	t0 = seconds();
	err = vp_vcg_build(&g, &t, &a, &s, &gp);
	t1 = seconds();
	if (err)
		return fail("vcg", err);
	printf("vcg: %.3f s (Kumar and Pande, Steps 3-5): final %zu nodes / %zu patterns\n", t1 - t0,
	       g.nnodes, g.npatterns);
	vp_vcg_release(&g);
	vp_sources_release(&s);
	vp_analysis_release(&a);
	vp_cct_release(&t);
	free(evs);
	free(stack_func);
	return 0;
}
