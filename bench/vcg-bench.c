/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * vcg-bench.c - how long Steps 3 to 5 of Dominant Variance Analysis (the
 * Variance Characterization Graph: extraction, merging, prioritising and
 * trimming) take on a synthetic calling-context tree of about 10 000 nodes,
 * every one of them significant.  Kumar and Pande, §8, want these steps
 * interactive (under a second); Step 2 (the extra passes over the events)
 * is timed too, for reference.
 *
 *   vcg-bench [frames]     (default 20)
 *
 * The program: main -> frame (per frame) -> process, called from 100 call
 * sites; each process calls helper from 10 call sites, each helper calls
 * leaf from 9.  In every fourth process the first leaf of every helper
 * varies a lot, in step (one cost per process and frame): those processes
 * and helpers are Tasks whose variance comes from the leaves (found with an
 * extra pass); elsewhere costs vary little.  The graph holds Tasks,
 * Contrasts, linear segments and many structurally identical subtrees to
 * merge.
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

enum { F_MAIN, F_FRAME, F_PROCESS, F_HELPER, F_LEAF, NFUNCS };
enum { NPROC = 100, NHELP = 10, NLEAF = 9 };

static const char bench_name[] = "vcg-bench";

#include "bench-events.h"

static void program(int frames)
{
	call(F_MAIN, 0);
	for (int f = 0; f < frames; f++) {
		call(F_FRAME, 1);
		for (uint32_t p = 0; p < NPROC; p++) {
			unsigned r = rnd(6000); /* shared by the process's helpers */

			call(F_PROCESS, 10 + p);
			for (uint32_t h = 0; h < NHELP; h++) {
				call(F_HELPER, 1000 + h);
				for (uint32_t l = 0; l < NLEAF; l++) {
					int wide = p % 4 == 0 && l == 0;

					call(F_LEAF, 2000 + l);
					now += wide ? 100 + r + rnd(100) : 100 + rnd(20);
					leave();
				}
				now += 5;
				leave();
			}
			now += 5;
			leave();
		}
		leave();
	}
	leave();
}

int main(int argc, char **argv)
{
	int frames = argc > 1 ? atoi(argv[1]) : 20;
	static const double taus[] = { 0.01, 0.2, 0.4, 1.0 };
	struct vp_analysis_params ap;
	struct vp_sources_params sp;
	struct vp_builder *b;
	struct vp_analysis a;
	struct vp_sources s;
	struct vp_cct t;
	double t0, t1;
	int err;
	static uint32_t frames_stack[16];

	stack_func = frames_stack;
	if (frames < 2)
		frames = 2;
	program(frames);
	vp_cct_init(&t);
	b = vp_builder_new(&t, NFUNCS, NULL);
	if (!b)
		return fail("builder", -ENOMEM);
	t0 = seconds();
	err = vp_builder_feed(b, evs, nev);
	if (!err)
		err = vp_builder_finish(b, NULL);
	vp_builder_free(b);
	if (err)
		return fail("building the tree", err);
	t1 = seconds();
	printf("tree: %zu nodes from %zu events in %.3f s (Step 1)\n", t.nnodes, nev, t1 - t0);
	vp_analysis_params_default(&ap);
	ap.cutoff = 0.0; /* every node significant: the largest graph */
	err = vp_analysis_run(&a, &t, NFUNCS, &ap);
	if (err)
		return fail("analysis", err);
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
	if (err)
		return fail("sources", err);
	t1 = seconds();
	printf("sources: %zu originators, %u extra passes in %.3f s (Step 2)\n", s.norigins,
	       s.passes, t1 - t0);
	for (size_t i = 0; i < sizeof(taus) / sizeof(taus[0]); i++) {
		struct vp_vcg_params gp = { taus[i], 0.1 };
		struct vp_vcg g;

		t0 = seconds();
		err = vp_vcg_build(&g, &t, &a, &s, &gp);
		t1 = seconds();
		if (err)
			return fail("vcg", err);
		printf("vcg tau %.2f beta 0.1: %.3f s (Steps 3-5): base %zu nodes / %zu patterns, "
		       "merged %zu / %zu in %zu merges, final %zu / %zu\n",
		       taus[i], t1 - t0, g.base_nodes, g.base_patterns, g.merged_nodes,
		       g.merged_patterns, g.merges, g.nnodes, g.npatterns);
		vp_vcg_release(&g);
	}
	vp_sources_release(&s);
	vp_analysis_release(&a);
	vp_cct_release(&t);
	free(evs);
	return 0;
}
