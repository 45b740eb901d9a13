/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * vcg.h - the Variance Characterization Graph (Kumar and Pande, §5-7):
 * Task, Contributor and Contrast nodes extracted from the calling-context
 * tree with their call-context sets and linear segments, merged within and
 * across patterns by agglomerative clustering under summarisation pressure
 * tau_S (Kolmogorov-Smirnov merge cost), then prioritised and trimmed by
 * VIM with beta.
 */
#ifndef VARPERF_CORE_VCG_H
#define VARPERF_CORE_VCG_H

#include <stddef.h>
#include <stdint.h>

#include "cct.h"
#include "patterns.h"
#include "sources.h"
#include "stats.h"

struct vp_vcg_params {
	double tau;  /* summarisation pressure tau_S, 0..1 (0.4) */
	double beta; /* trim threshold, 0..1 (0.1); 0 keeps everything */
};

void vp_vcg_params_default(struct vp_vcg_params *p);
/* 0 or -EINVAL with a message in @err. */
int vp_vcg_params_check(const struct vp_vcg_params *p, char *err, size_t errlen);

enum vp_vcg_type {
	VP_VCG_UNUSED = 0, /* not in the graph: folded into call contexts */
	VP_VCG_TASK,	   /* high-variance: variance is principally observed here */
	VP_VCG_CONTRIBUTOR, /* low-variance underlying source of a Task's variance */
	VP_VCG_CONTRAST,    /* low-variance context of a function that is a Task
			     * elsewhere, or a transmitter inside a linear segment */
};

const char *vp_vcg_type_name(enum vp_vcg_type t);

/*
 * A call-chain segment from the parent VCG node (or the root of the tree)
 * down to a node: the (function, call site) of every calling-context node
 * on the way, the node itself last.  The first call site is in the parent
 * node's function: the paper's tuple with the empty function name.
 */
struct vp_vcg_cc {
	uint32_t len;
	const struct vp_chain_elem *elems;
};

struct vp_vcg_node {
	uint32_t pattern;
	uint32_t func;
	enum vp_vcg_type type;
	struct vp_stats stats; /* merged exactly over every CCT node below */
	double vim;	       /* k sigma N, or that of the variance it
				* contributes through a segment when larger */
	double subtree_vim;    /* sum over the node and everything below it */
	uint32_t parent;       /* VP_NO_NODE at the root of a pattern */
	uint32_t nchildren;
	uint32_t *children; /* highest subtree VIM first */
	uint32_t nccs;
	uint32_t *ccs; /* call-context set: indices into vp_vcg.ccs, sorted */
	uint32_t ncct;
	uint32_t *cct; /* the calling-context nodes it stands for, sorted */
	uint32_t nols;
	uint32_t *ols; /* linear segments originating here */
	uint32_t ncls;
	uint32_t *cls; /* linear segments it is inside of or ends */
};

/* A linear segment and its back-edge: the underlier contributes variance
 * to the originator through the nodes in between. */
struct vp_vcg_segment {
	uint32_t len;
	uint32_t *nodes; /* originator first, underlier last (node indices) */
	uint32_t ncomponents;
	uint32_t *components; /* CCT nodes: the originator's children (call
			       * sites) the variance flows through, sorted */
	uint64_t n;	      /* invocations of the originator */
	double mean;	      /* of Y^{H|W} per invocation of H */
	double variance;      /* of Y^{H|W}: C^{H|W}_{W,W} */
	double cf;	      /* contribution fraction variance / var(H) */
	enum vp_source_how how; /* the least exact of the merged segments */
};

struct vp_vcg_pattern {
	uint32_t root;
	uint32_t nnodes; /* root, then its nodes in depth-first order */
	double vim;
};

struct vp_vcg {
	struct vp_vcg_params params;
	double k; /* Chebyshev k of the VIM */
	size_t npatterns;
	struct vp_vcg_pattern *patterns; /* highest VIM first */
	size_t nnodes;
	struct vp_vcg_node *nodes; /* ids in depth-first order, pattern by pattern */
	size_t nsegments;
	struct vp_vcg_segment *segments;
	size_t nccs;
	struct vp_vcg_cc *ccs;
	/* sizes along the way (patterns, nodes) */
	size_t base_patterns, base_nodes;     /* Step 3: extracted */
	size_t merged_patterns, merged_nodes; /* Step 4: within and across */
	size_t merges;			      /* pairs merged, both kinds */
	size_t layers;			      /* agglomerative layers across patterns */
	size_t trimmed_patterns, trimmed_nodes; /* removed by beta */
	/* private storage */
	struct vp_chain_elem *ccpool;
	uint32_t *idpool;
};

/**
 * vp_vcg_label - Step 3's node types: @ret[n] is the enum vp_vcg_type of
 * calling-context node n (VP_VCG_UNUSED for the root).  0 or -errno.
 */
int vp_vcg_label(const struct vp_cct *t, const struct vp_analysis *a, const struct vp_sources *s,
		 uint8_t *ret);

/**
 * vp_vcg_build - Steps 3 to 5 over @t, given Kumar et al. 2008's analysis @a and
 * the sources of variance @s (Step 2).  Touches no events.  Returns 0 or a
 * negative errno; release with vp_vcg_release().
 */
int vp_vcg_build(struct vp_vcg *g, const struct vp_cct *t, const struct vp_analysis *a,
		 const struct vp_sources *s, const struct vp_vcg_params *p);
void vp_vcg_release(struct vp_vcg *g);

#endif
