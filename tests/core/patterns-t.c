/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * patterns-t.c - tests for core/patterns.c on a tree whose answers are
 * worked out by hand: significance, Chebyshev tagging, MDC by call site,
 * pattern-similarity splitting and merging, VIM and the Pattern Set.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/cct.h"
#include "core/patterns.h"
#include "tests/tap/basic.h"

enum { F_MAIN, F_PROC, F_HELP, F_X, F_Y, F_Z, F_WORK, F_V, NFUNCS };
enum { CS_0, CS_A, CS_B, CS_C, CS_X, CS_Y, CS_Z, CS_W, CS_V };

static struct vp_event evs[20000];
static size_t nev;
static uint64_t now;

static void ent(uint32_t func, uint32_t cs, uint64_t sp)
{
	evs[nev++] = (struct vp_event){ .time = now, .sp = sp, .func = func, .callsite = cs,
					.kind = VP_EV_ENTRY };
}

static void ret(uint32_t func, uint64_t sp)
{
	evs[nev++] = (struct vp_event){ .time = now, .sp = sp + 8, .func = func,
					.kind = VP_EV_EXIT };
}

static void leaf(uint32_t func, uint32_t cs, uint64_t sp, uint64_t dur)
{
	ent(func, cs, sp);
	now += dur;
	ret(func, sp);
}

static void make_stream(void)
{
	int i;

	ent(F_MAIN, CS_0, 10000);
	for (i = 0; i < 100; i++) {
		leaf(F_PROC, CS_A, 9900, 200);		  /* steady call site */
		leaf(F_PROC, CS_B, 9900, i % 2 ? 350 : 50); /* varying call site */
	}
	for (i = 0; i < 5; i++)
		leaf(F_HELP, CS_C, 9900, 1); /* below the 0.02 % cut-off */
	for (i = 0; i < 50; i++) {
		ent(F_X, CS_X, 9900);
		leaf(F_WORK, CS_W, 9800, i % 2 ? 350 : 50);
		leaf(F_V, CS_V, 9800, i % 2 ? 330 : 70);
		ret(F_X, 9900);
	}
	for (i = 0; i < 50; i++) {
		ent(F_Y, CS_Y, 9900);
		leaf(F_WORK, CS_W, 9800, i % 2 ? 3600 : 400);
		ret(F_Y, 9900);
	}
	for (i = 0; i < 50; i++) {
		ent(F_Z, CS_Z, 9900);
		leaf(F_V, CS_V, 9800, i % 2 ? 340 : 60);
		ret(F_Z, 9900);
	}
	ret(F_MAIN, 10000);
}

static const struct vp_pattern *find(const struct vp_analysis *a, const struct vp_cct *t,
				     size_t len, const uint32_t *funcs, const uint32_t *cs)
{
	size_t i, j;

	(void)t;
	for (i = 0; i < a->npatterns; i++) {
		const struct vp_pattern *p = &a->patterns[i];

		if (p->len != len)
			continue;
		for (j = 0; j < len; j++)
			if (p->chain[j].func != funcs[j] || p->chain[j].callsite != cs[j])
				break;
		if (j == len)
			return p;
	}
	return NULL;
}

/*
 * Deep recursion, built by hand: main -> rec [top] -> rec [rec] -> ... to
 * depth DEEP.  Only the 10 deepest rec contexts vary.  Each of them shares
 * DEEP - 11 elements of its chain with the deepest steady context, so
 * their MDC sequences are (rec [rec]) x (DEEP - 10); apart, the PST peels
 * them off one caller at a time: rec_d's pattern is its chain of d
 * elements down to rec [top], and the deepest two part at DEEP - 1.
 * Before the chains were ranked this took minutes (quartic in the depth).
 */
enum { DEEP = 6000, DEEP_VARY = 10, F_REC = 0, F_DMAIN = 1, CS_TOP = 1, CS_REC = 2 };

static void deep_recursion(double similarity, int mixed)
{
	struct vp_analysis_params prm;
	struct vp_analysis a;
	struct vp_cct t;
	uint32_t parent, rec[DEEP + 1];
	size_t ok_len = 0, ok_chain = 0;

	vp_cct_init(&t);
	parent = (uint32_t)vp_cct_child(&t, VP_NODE_ROOT, F_DMAIN, CS_0);
	vp_stats_add(&t.nodes[parent].stats, 100000000);
	for (uint32_t d = 1; d <= DEEP; d++) {
		struct vp_stats *s;

		rec[d] = parent = (uint32_t)vp_cct_child(&t, parent, F_REC, d == 1 ? CS_TOP : CS_REC);
		s = &t.nodes[parent].stats;
		if (d + DEEP_VARY <= DEEP) { /* steady */
			vp_stats_add(s, 1000);
			vp_stats_add(s, 1000);
		} else {		     /* CoV 1, means apart unless !mixed */
			vp_stats_add(s, 1);
			vp_stats_add(s, mixed ? 1 + 40 * d : 100001);
		}
	}
	vp_analysis_params_default(&prm);
	prm.cutoff = 0;
	prm.similarity = similarity;
	if (vp_analysis_run(&a, &t, 2, &prm) < 0)
		bail("deep recursion: analysis failed");
	if (!mixed) {
		is_int(1, a.npatterns, "deep recursion, similar: one pattern");
		is_int(DEEP_VARY, a.patterns[0].nnodes, "... of the 10 varying contexts");
		is_int(DEEP - DEEP_VARY, a.patterns[0].len, "... with their common MDC sequence");
		goto out;
	}
	is_int(DEEP_VARY, a.npatterns, "deep recursion, apart: 10 patterns");
	for (size_t i = 0; i < a.npatterns; i++) {
		const struct vp_pattern *p = &a.patterns[i];
		uint32_t d = t.nodes[p->nodes[0]].depth - 1;
		uint32_t want = d == DEEP ? DEEP - 1 : d;

		ok_len += p->nnodes == 1 && p->nodes[0] == rec[d] && p->len == want;
		ok_chain += p->chain[p->len - 1].func == F_REC &&
			    p->chain[0].callsite == (d == DEEP ? CS_REC : CS_TOP);
	}
	is_int(DEEP_VARY, ok_len, "... rec_d's chain has d elements (the deepest DEEP - 1)");
	is_int(DEEP_VARY, ok_chain, "... from rec [top] (the deepest: rec [rec])");
out:
	vp_analysis_release(&a);
	vp_cct_release(&t);
}

/*
 * A chain of wrappers, as in lz4's LZ4F_compressUpdate -> ... ->
 * LZ4HC_compress_optimal: main -> a -> b -> c -> d, each called once per
 * call of its caller, d varying (100 or 900) and the others adding 2 of
 * their own.  Every link is high-variance and was a pattern of its own
 * with the same statistics; now one pattern a => b => c => d.  e, called
 * by a after b, varies too: b then carries less than 95 % of a's variance
 * and the chain stops below a.
 */
static void wrapper_chain(int with_e)
{
	struct vp_analysis_params prm;
	struct vp_analysis a;
	struct vp_builder *b;
	struct vp_cct t;

	nev = 0;
	now = 0;
	ent(F_MAIN, CS_0, 10000);
	for (int i = 0; i < 40; i++) {
		ent(F_X, CS_X, 9900);	/* a */
		ent(F_Y, CS_Y, 9800);	/* b */
		ent(F_Z, CS_Z, 9700);	/* c */
		leaf(F_WORK, CS_W, 9600, i % 2 ? 900 : 100); /* d */
		now += 2;
		ret(F_Z, 9700);
		now += 2;
		ret(F_Y, 9800);
		if (with_e)
			leaf(F_V, CS_V, 9800, i % 3 ? 700 : 10);
		now += 2;
		ret(F_X, 9900);
	}
	ret(F_MAIN, 10000);
	vp_cct_init(&t);
	b = vp_builder_new(&t, NFUNCS, NULL);
	if (!b || vp_builder_feed(b, evs, nev) || vp_builder_finish(b, NULL))
		bail("wrapper chain: cannot build the tree");
	vp_builder_free(b);
	vp_analysis_params_default(&prm);
	if (vp_analysis_run(&a, &t, NFUNCS, &prm) < 0)
		bail("wrapper chain: analysis failed");
	if (!with_e) {
		const struct vp_pattern *p = &a.patterns[0];

		is_int(1, a.npatterns, "wrapper chain: one pattern");
		ok(p->len == 1 && p->chain[0].func == F_X && p->nthrough == 3 &&
			   p->through[0].func == F_Y && p->through[1].func == F_Z &&
			   p->through[2].func == F_WORK,
		   "... a => b => c => d");
		is_int(3, a.nfolded, "... three patterns folded");
	} else {
		const struct vp_pattern *p = find(&a, &t, 1, (uint32_t[]){ F_Y },
						  (uint32_t[]){ CS_Y });

		ok(p && p->nthrough == 2 && p->through[1].func == F_WORK,
		   "a varying sibling: b => c => d, not folded into a");
		ok(find(&a, &t, 1, (uint32_t[]){ F_X }, (uint32_t[]){ CS_X }) != NULL,
		   "... a keeps its own pattern");
	}
	vp_analysis_release(&a);
	vp_cct_release(&t);
	nev = 0;
	now = 0;
}

int main(void)
{
	struct vp_analysis_params prm;
	struct vp_analysis a;
	struct vp_builder *b;
	struct vp_cct t;
	const struct vp_pattern *p;
	uint32_t id, main_id, x_id;
	char err[128];
	size_t i, inset = 0;

	plan(56);

	wrapper_chain(0);
	wrapper_chain(1);

	deep_recursion(0.0, 1);
	deep_recursion(0.1, 0);

	vp_analysis_params_default(&prm);
	is_double(0.4, vp_analysis_cov_threshold(&prm), 1e-12, "Chebyshev: p=0.96 w=2 gives 0.4");
	is_double(5.0, vp_analysis_chebyshev_k(&prm), 1e-12, "Chebyshev k = 5");
	prm.probability = 0.75;
	prm.window = 1.0;
	is_double(0.5, vp_analysis_cov_threshold(&prm), 1e-12, "p=0.75 w=1 gives 0.5");
	prm.cov_threshold = 0.3;
	is_double(0.3, vp_analysis_cov_threshold(&prm), 0, "explicit threshold wins");
	prm.beta = 1.5;
	is_int(-EINVAL, vp_analysis_params_check(&prm, err, sizeof(err)), "beta 1.5 rejected");
	is_string("beta must be between 0 and 1", err, "... with its reason");
	vp_analysis_params_default(&prm);

	make_stream();
	vp_cct_init(&t);
	b = vp_builder_new(&t, NFUNCS, NULL);
	if (vp_builder_feed(b, evs, nev) || vp_builder_finish(b, NULL))
		bail("build failed");
	vp_builder_free(b);
	is_int(0, vp_analysis_run(&a, &t, NFUNCS, &prm), "analysis runs");
	main_id = vp_cct_find(&t, VP_NODE_ROOT, F_MAIN, CS_0);
	is_uint(170005, a.total_time, "total time is main's");

	/* Significance and tagging. */
	id = vp_cct_find(&t, main_id, F_HELP, CS_C);
	ok(!a.significant[id], "5 ns of 170005 is below the 0.02%% cut-off");
	id = vp_cct_find(&t, main_id, F_PROC, CS_A);
	ok(a.significant[id] && !a.high_variance[id], "steady call site: significant, not tagged");
	id = vp_cct_find(&t, main_id, F_PROC, CS_B);
	ok(a.high_variance[id], "varying call site tagged (CoV 0.75)");
	ok(!a.high_variance[main_id], "main (one invocation) not tagged");
	is_double(5.0 * 150.0 * 100.0, a.vim[id], 1e-6, "node VIM = k sigma N");

	/* MDC: the call site alone tells PROC@B from PROC@A. */
	p = find(&a, &t, 1, (uint32_t[]){ F_PROC }, (uint32_t[]){ CS_B });
	ok(p != NULL, "pattern [proc@B] of length 1");
	ok(find(&a, &t, 1, (uint32_t[]){ F_PROC }, (uint32_t[]){ CS_A }) == NULL,
	   "no pattern for the steady call site");
	if (p) {
		is_uint(100, p->stats.n, "proc@B: N");
		is_double(200.0, p->stats.mean, 1e-9, "proc@B: mean");
		is_double(75000.0, p->vim, 1e-6, "proc@B: VIM");
	} else {
		skip_block(3, "no pattern");
	}

	/* PST: work@W under X and Y share an MDC but differ 10x in mean:
	 * the group splits by one more caller. */
	x_id = vp_cct_find(&t, main_id, F_X, CS_X);
	ok(find(&a, &t, 1, (uint32_t[]){ F_WORK }, (uint32_t[]){ CS_W }) == NULL,
	   "dissimilar work@W contexts are not one pattern");
	p = find(&a, &t, 2, (uint32_t[]){ F_X, F_WORK }, (uint32_t[]){ CS_X, CS_W });
	ok(p && p->nnodes == 1 && p->nodes[0] == vp_cct_find(&t, x_id, F_WORK, CS_W),
	   "split: [X -> work] pattern");
	/* ... but Y only wraps work: one call per call, all of Y's variance
	 * (Y has no self time), so [Y -> work] folds into Y's pattern */
	ok(find(&a, &t, 2, (uint32_t[]){ F_Y, F_WORK }, (uint32_t[]){ CS_Y, CS_W }) == NULL,
	   "split: [Y -> work], a pass-through, is no pattern of its own");
	p = find(&a, &t, 1, (uint32_t[]){ F_Y }, (uint32_t[]){ CS_Y });
	ok(p && p->nthrough == 1 && p->through[0].func == F_WORK &&
		   p->through[0].callsite == CS_W && p->stats.n == 50,
	   "... it is Y's, which shows Y => work");
	is_int(1, a.nfolded, "... the one pattern folded");
	p = find(&a, &t, 1, (uint32_t[]){ F_X }, (uint32_t[]){ CS_X });
	ok(p && p->nthrough == 0, "X, with two varying callees, passes nothing through");

	/* PST: v@V under X and Z are similar (means equal, CoV 0.65 vs
	 * 0.70): one pattern, statistics merged exactly. */
	p = find(&a, &t, 1, (uint32_t[]){ F_V }, (uint32_t[]){ CS_V });
	ok(p && p->nnodes == 2, "similar contexts collapse into one pattern");
	if (p) {
		/* union: 25 each of 70, 330, 60, 340 */
		is_uint(100, p->stats.n, "merged N");
		is_double(200.0, p->stats.mean, 1e-9, "merged mean");
		is_double(18250.0, vp_stats_variance(&p->stats), 1e-6,
			  "merged variance equals the union's");
		is_double(5.0 * sqrt(18250.0) * 100.0, p->vim, 1e-6, "merged VIM");
	} else {
		skip_block(4, "no pattern");
	}

	/* Ranking and the Pattern Set (beta 0.1 of max VIM 400000). */
	is_int(6, a.npatterns, "6 patterns (7 before folding)");
	is_double(400000.0, a.max_vim, 1e-6, "max VIM: Y (sigma 1600, N 50)");
	for (i = 0; i + 1 < a.npatterns; i++)
		if (a.patterns[i].vim < a.patterns[i + 1].vim)
			break;
	ok(i + 1 == a.npatterns, "patterns sorted by VIM");
	for (i = 0; i < a.npatterns; i++)
		inset += a.patterns[i].in_pattern_set;
	is_int(4, inset, "Pattern Set holds 4 (Z 35000 and X->work 37500 fall below 40000)");
	p = find(&a, &t, 1, (uint32_t[]){ F_Z }, (uint32_t[]){ CS_Z });
	ok(p && !p->in_pattern_set, "Z outside the Pattern Set");
	p = find(&a, &t, 1, (uint32_t[]){ F_X }, (uint32_t[]){ CS_X });
	ok(p && p->in_pattern_set, "X inside the Pattern Set");

	/* Per-function summaries merge contexts. */
	for (i = 0; i < a.nfuncs; i++)
		if (a.funcs[i].func == F_WORK)
			break;
	ok(i < a.nfuncs, "work summarised");
	if (i < a.nfuncs) {
		is_uint(100, a.funcs[i].stats.n, "work: N over both contexts");
		is_int(2, a.funcs[i].ncontexts, "work: 2 contexts");
	} else {
		skip_block(2, "no summary");
	}
	is_int(F_MAIN, a.funcs[0].func, "functions sorted by total: main first");

	/* Unreliable nodes (say, mostly probe cost) leave the ranking: Y,
	 * the largest VIM, goes last and the Set is measured without it. */
	{
		uint8_t *bad = calloc(t.nnodes, 1);
		uint32_t y_id = vp_cct_find(&t, main_id, F_Y, CS_Y);

		bad[y_id] = 1;
		is_int(0, vp_analysis_set_unreliable(&a, bad, t.nnodes), "mark Y unreliable");
		p = &a.patterns[a.npatterns - 1];
		ok(p->unreliable && p->nodes[0] == y_id && !p->in_pattern_set,
		   "... Y's pattern is last, outside the Pattern Set");
		is_int(1, a.nunreliable, "... the only unreliable pattern");
		ok(!a.patterns[0].unreliable && a.max_vim == a.patterns[0].vim &&
			   a.max_vim < 400000.0,
		   "... max VIM is the best reliable pattern's");
		bad[y_id] = 0;
		vp_analysis_set_unreliable(&a, bad, t.nnodes);
		is_double(400000.0, a.max_vim, 1e-6, "... and Y back on top when reliable");
		free(bad);
	}
	vp_analysis_release(&a);

	/* A stricter threshold tags nothing: no patterns, empty set. */
	prm.cov_threshold = 5.0;
	vp_analysis_run(&a, &t, NFUNCS, &prm);
	is_int(0, a.npatterns, "threshold 5.0: no patterns");
	vp_analysis_release(&a);
	vp_cct_release(&t);
	return 0;
}
