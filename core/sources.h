/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * sources.h - underlying sources of variance (Kumar and Pande, §2.2-2.3):
 * the contribution of every child call site to a high-variance node's
 * variance, and the long-range linear segments H ~> ... ~> W found by
 * cascading into calls made once per invocation and by implicitly inlining
 * call chains with extra passes over the recorded events.
 */
#ifndef VARPERF_CORE_SOURCES_H
#define VARPERF_CORE_SOURCES_H

#include <stddef.h>
#include <stdint.h>

#include "cct.h"
#include "datafile.h"
#include "patterns.h"

struct vp_sources_params {
	/* A variable is a significant contributor when its share of the
	 * originator's variance (row sum, cross terms included) is at least
	 * this fraction (0.10). */
	double min_contribution;
	/* A call counts as made once per invocation of its caller when it was
	 * made exactly once in more than this fraction of them (0.95). */
	double once_probability;
	/* Extra passes over the events allowed (8); 0 limits the analysis to
	 * the direct children, whose covariance the tree already has. */
	unsigned max_passes;
};

void vp_sources_params_default(struct vp_sources_params *p);
/* 0 or -EINVAL with a message in @err. */
int vp_sources_params_check(const struct vp_sources_params *p, char *err, size_t errlen);

/* How often a node is called per invocation of its parent node. */
enum vp_once {
	VP_ONCE_UNKNOWN = 0, /* no pass counted its calls */
	VP_ONCE_NOT,	     /* 0 or several times too often (a loop, a branch) */
	VP_ONCE_LIKELY,	     /* exactly once in more than once_probability */
	VP_ONCE_EXACT,	     /* exactly once in every invocation */
};

/* Where the statistics of a linear segment come from. */
enum vp_source_how {
	/* A variable (or a block of variables) of the originator's covariance
	 * matrix, the base one or one recomputed with calls inlined: exact. */
	VP_SOURCE_MATRIX = 0,
	/* Terms of the matrix of a descendant called exactly once per
	 * invocation of the originator: variance, mean and cf are exact, the
	 * share counts cross terms within that descendant only. */
	VP_SOURCE_CASCADE,
	/* As CASCADE through a call made once only with high probability,
	 * not verified because the pass limit was reached. */
	VP_SOURCE_POTENTIAL,
	/* The segment may continue below the underlier: deciding it needed a
	 * pass that the limit did not allow. */
	VP_SOURCE_UNEXPLORED,
};

/* One linear segment H ~> W: W is an underlying source of H's variance. */
struct vp_source {
	uint32_t underlier; /* CCT node W */
	uint32_t len;
	uint32_t *chain; /* CCT nodes below H down to W: chain[0] is a child of
			  * H (the variance component), chain[len-1] == W */
	double share;	 /* Cov(Y^{H|W}, X_H) / var(H): cross terms included */
	double cf;	 /* contribution fraction C^{H|W}_{W,W} / var(H) */
	double mean;	 /* mean of Y^{H|W}, W's cumulative time per call of H */
	double variance; /* C^{H|W}_{W,W}, the variance of Y^{H|W} */
	enum vp_source_how how;
};

/* One variable of H's base matrix: self time or one child call site. */
struct vp_component {
	uint32_t node; /* child CCT node, VP_NO_NODE for self time, or
			* VP_OTHER_NODE for the callees past the tracked
			* ones (cct.h) */
	double share;  /* row sum over var(H) */
	double cf;     /* diagonal term over var(H) */
};

/* The analysis of one high-variance node H with children. */
struct vp_origin {
	uint32_t node;
	uint64_t n;
	double variance; /* var(H), population */
	size_t ncomponents;
	struct vp_component *components; /* every variable, largest share first */
	size_t nsources;
	struct vp_source *sources;	 /* largest share first */
	/*
	 * cross[i * nsources + j] = Cov(Y^{H|W_i}, Y^{H|W_j}), NaN when the
	 * two were not measured in one matrix.  Merged segment statistics of
	 * one originator need it (vcg.c).
	 */
	double *cross;
	uint32_t ninlined; /* calls inlined into H's matrix */
	uint32_t nvars;	   /* variables of that matrix */
};

struct vp_sources_work;

struct vp_sources {
	struct vp_sources_params params;
	size_t nnodes;
	size_t norigins;
	struct vp_origin *origins; /* by increasing node id */
	uint32_t *origin_of;	   /* [nnodes]: index in origins or VP_NO_NODE */
	uint8_t *once;		   /* [nnodes]: enum vp_once of the node's calls */
	/* [3 * nnodes] when a pass counted calls, else NULL: invocations of
	 * the parent in which the node was called 0, 1 and >= 2 times. */
	uint64_t *calls;
	unsigned passes;      /* extra passes made */
	int limited;	      /* stopped by max_passes with work left */
	uint64_t pass_events; /* events read by the extra passes */
	struct vp_sources_work *work; /* private, between start and finish */
};

/**
 * vp_sources_run - Step 2 of Dominant Variance Analysis over @t.
 * @a: Kumar et al. 2008's analysis of @t (high-variance tags, significance)
 * @r: the reader @t was built from, rewound for every extra pass and left
 *     at the end of the data (its definitions re-read); NULL allows no pass
 * Returns 0 or a negative errno (a reader error leaves vp_reader_error()).
 * Release with vp_sources_release().
 */
int vp_sources_run(struct vp_sources *s, const struct vp_cct *t, const struct vp_analysis *a,
		   struct vp_reader *r, const struct vp_sources_params *p);
void vp_sources_release(struct vp_sources *s);

/* The analysis of node @node, or NULL when it is no originator. */
const struct vp_origin *vp_sources_origin(const struct vp_sources *s, uint32_t node);

/*
 * Feeding events by hand (tests, or a caller with its own event source):
 * vp_sources_run with @r == NULL, then for each extra pass requested
 * vp_sources_pass_begin, feed every event of the recording in order, and
 * vp_sources_pass_end; vp_sources_more says whether a pass is wanted.
 */
int vp_sources_start(struct vp_sources *s, const struct vp_cct *t, const struct vp_analysis *a,
		     const struct vp_sources_params *p);
int vp_sources_more(const struct vp_sources *s);
int vp_sources_pass_begin(struct vp_sources *s);
int vp_sources_pass_callsite(struct vp_sources *s, uint32_t id, uint32_t flags);
int vp_sources_pass_feed(struct vp_sources *s, const struct vp_event *ev, size_t n);
int vp_sources_pass_end(struct vp_sources *s);
/* Turn the last evaluation into the results above. */
int vp_sources_finish(struct vp_sources *s);

const char *vp_once_name(enum vp_once o);
const char *vp_source_how_name(enum vp_source_how h);

#endif
