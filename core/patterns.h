/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * patterns.h - Kumar et al. 2008's analysis (§3) of a calling-context tree:
 * significance cut-off, Chebyshev high-variance tagging, Minimal
 * Distinguishing Call sequences (Algorithm 1, with call-site ids),
 * pattern-similarity trees, VIM = k*sigma*N and the Pattern Set.
 */
#ifndef VARPERF_CORE_PATTERNS_H
#define VARPERF_CORE_PATTERNS_H

#include <stddef.h>
#include <stdint.h>

#include "cct.h"
#include "stats.h"

struct vp_analysis_params {
	double cutoff;	    /* significance: fraction of total time (0.0002) */
	double probability; /* Chebyshev probability (0.96) */
	double window;	    /* window as a multiple of the mean (2.0) */
	double cov_threshold; /* if > 0 overrides probability/window */
	double similarity;  /* PST: means and CoVs within this fraction (0.10) */
	double beta;	    /* Pattern Set: VIM >= beta * max VIM (0.1) */
};

void vp_analysis_params_default(struct vp_analysis_params *p);
/* CoV threshold implied by @p: window * sqrt(1 - probability), unless set. */
double vp_analysis_cov_threshold(const struct vp_analysis_params *p);
/* Chebyshev k = 1 / sqrt(1 - probability), the factor in VIM = k sigma N. */
double vp_analysis_chebyshev_k(const struct vp_analysis_params *p);
/* 0 or -EINVAL when a parameter is out of range (message in @err). */
int vp_analysis_params_check(const struct vp_analysis_params *p, char *err, size_t errlen);

/* One element of a pattern's call chain. */
struct vp_chain_elem {
	uint32_t func;
	uint32_t callsite;
};

struct vp_pattern {
	size_t len;
	struct vp_chain_elem *chain; /* outermost first; chain[len-1] is the
				      * innermost (the tagged function) */
	size_t nnodes;
	uint32_t *nodes;       /* CCT nodes the pattern stands for */
	struct vp_stats stats; /* merged statistics of those nodes (exact) */
	double vim;
	int in_pattern_set;
	/* callees below chain[len-1], outermost first, that only pass its
	 * variance on: each called as often as its caller and carrying
	 * 95 % to 105 % of its variance, so their own patterns
	 * were folded into this one (vp_analysis_run) */
	size_t nthrough;
	struct vp_chain_elem *through;
	/* every node of the pattern is unreliable (vp_analysis_set_unreliable):
	 * not ranked, never in the Pattern Set */
	int unreliable;
};

/* Share of its caller's variance that makes a callee a pass-through (up
 * to 2 - VP_PASS_THROUGH_SHARE). */
#define VP_PASS_THROUGH_SHARE 0.95

struct vp_func_summary {
	uint32_t func;
	struct vp_stats stats; /* merged over all contexts */
	uint32_t ncontexts;
};

struct vp_analysis {
	struct vp_analysis_params params;
	double cov_threshold;
	double k;
	uint64_t total_time;	/* the outermost nodes' vp_cct_node_time(),
				 * open invocations included */
	size_t nnodes;
	uint8_t *significant;	/* per node */
	uint8_t *high_variance; /* per node (significant and CoV >= threshold) */
	double *vim;		/* per node: k sigma N */
	size_t npatterns;
	struct vp_pattern *patterns; /* sorted by VIM, descending; the
				      * unreliable ones last */
	size_t nunreliable;	     /* patterns marked unreliable */
	size_t nfolded;		     /* patterns folded into their callers' */
	double max_vim;
	size_t nfuncs;
	struct vp_func_summary *funcs; /* functions with >= 1 invocation,
					* sorted by total, descending */
};

/* Run the analysis over @tree; 0 or -errno.  Release with _release. */
int vp_analysis_run(struct vp_analysis *a, const struct vp_cct *tree, size_t nfuncs,
		    const struct vp_analysis_params *p);
void vp_analysis_release(struct vp_analysis *a);

/*
 * vp_pattern_in_set - the one rule of the Pattern Set (Kumar et al. 2008,
 * §3.4): a pattern that is not unreliable with a VIM of at least beta
 * times @max_vim, the largest VIM of the reliable patterns (none when 0).
 * The analysis marks its patterns with it, and compare's regression side
 * judges B's VIMs with it, so that a file compared with itself agrees.
 */
int vp_pattern_in_set(const struct vp_analysis_params *p, int unreliable, double vim,
		      double max_vim);

/*
 * vp_analysis_set_unreliable - take the patterns all of whose nodes are
 * flagged in @unreliable[node] (a duration mostly probe cost, say) out of
 * the ranking: they go last, keep their VIM, and the Pattern Set and
 * max_vim are recomputed over the others.  0 or -EINVAL.
 */
int vp_analysis_set_unreliable(struct vp_analysis *a, const uint8_t *unreliable, size_t n);

/*
 * vp_analysis_set_probe_costs - vp_analysis_set_unreliable() with the nodes
 * of @t whose mean is mostly probe cost (vp_cct_unreliable() with @cost,
 * from vp_cct_probe_costs()).  0, -ENOMEM or -EINVAL.
 */
int vp_analysis_set_probe_costs(struct vp_analysis *a, const struct vp_cct *t,
				const double *cost);

#endif
