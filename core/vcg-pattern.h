/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * vcg-pattern.h - the working patterns of Dominant Variance Analysis's
 * Steps 3 to 5 (Kumar and Pande, §7): VCG patterns under construction, with their
 * nodes, segments and one pool of ids each, shared by vcg.c (extraction,
 * clustering, layout) and vcg-merge.c (merging two patterns).  Private to
 * core.
 */
#ifndef VARPERF_CORE_VCG_PATTERN_H
#define VARPERF_CORE_VCG_PATTERN_H

#include <stddef.h>
#include <stdint.h>

#include "hashtab.h"
#include "vcg.h"

#define NONE UINT32_MAX
#define FAIL (UINT32_MAX - 1)

struct wnode {
	uint32_t func;
	uint8_t type;
	uint8_t keep;
	struct vp_stats st;
	uint32_t parent;
	uint32_t kid0, nkids; /* pool */
	uint32_t cc0, ncc;    /* pool: sorted call-context ids */
	uint32_t ct0, nct;    /* pool: sorted CCT nodes */
	uint32_t corr[2];     /* merge candidates: nodes of the two inputs */
	uint32_t gid;	      /* final id */
	double vim, svim;
};

/* A linear segment.  Inside a subtree being merged, a segment whose
 * originator is an ancestor outside is kept as its part inside (ext names
 * the originator's CCT node): siblings merge only if they agree on it. */
struct wseg {
	uint32_t ext;
	uint32_t n0, len; /* pool: nodes */
	uint32_t g0, ng;  /* pool: ng pairs (origin index, source index) */
	uint32_t c0, nc;  /* pool: component CCT nodes, sorted */
	uint8_t how;
	uint64_t n;
	double mean, m2; /* of Y^{H|W} over n invocations of the originator */
};

struct wpat {
	struct wnode *nodes;
	uint32_t nn, capn;
	struct wseg *segs;
	uint32_t ns, caps;
	uint32_t *pool;
	uint32_t np, capp;
	double vim;
	uint8_t mark; /* vcg.c: a child handed to the clustering */
};

struct gctx {
	const struct vp_cct *t;
	const struct vp_analysis *a;
	const struct vp_sources *s;
	double tau, k;
	int err;
	/* interned call contexts */
	struct vp_chain_elem *ccpool;
	size_t nccpool, capccpool;
	uint32_t *ccoff, *cclen;
	size_t ncc, capcc;
	struct vp_hashtab ccindex; /* of the context ids */
	size_t merges, layers;
};

/* A new empty pattern, or NULL with c->err set. */
struct wpat *vp_wpat_new(struct gctx *c);
void vp_wpat_free(struct wpat *p);
/* Append a zeroed node (parent and correspondents NONE): its index, or
 * FAIL with c->err set. */
uint32_t vp_wpat_node(struct gctx *c, struct wpat *p);
/* Append a zeroed segment, or NULL with c->err set. */
struct wseg *vp_wpat_seg(struct gctx *c, struct wpat *p);
/* Room for @n more pool entries: their offset (pointers into the pool
 * are invalid afterwards); 0 with c->err set on failure. */
uint32_t vp_wpat_alloc(struct gctx *c, struct wpat *p, uint32_t n);
/* Copy @n entries from another pattern's pool (or any array). */
uint32_t vp_wpat_copy(struct gctx *c, struct wpat *p, const uint32_t *src, uint32_t n);
/* Union of two sorted lists into @p's pool; @n returns the length. */
uint32_t vp_wpat_union(struct gctx *c, struct wpat *p, const uint32_t *a, uint32_t na,
		       const uint32_t *b, uint32_t nb, uint32_t *n);

/*
 * vp_vcg_try_merge - merge @p and @q into a new pattern when compatible
 * and no costlier than tau (Kumar and Pande, §6); @cost returns the cost.
 * NULL otherwise (or on error, c->err).
 */
struct wpat *vp_vcg_try_merge(struct gctx *c, const struct wpat *p, const struct wpat *q,
			      double *cost);

#endif
