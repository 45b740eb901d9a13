/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * cct.h - the calling-context tree and its streaming builder.
 *
 * A node stands for (function, call site, parent node).  Node 0 is a
 * synthetic root whose children are the outermost probed invocations of
 * every thread.  The builder pairs entries and exits per thread by stack
 * pointer, so lost returns (longjmp, exceptions, the kernel's 64 pending
 * return probes, lost records) retire frames as unpaired instead of
 * producing wrong durations.  Memory grows with the tree, not the events.
 */
#ifndef VARPERF_CORE_CCT_H
#define VARPERF_CORE_CCT_H

#include <stddef.h>
#include <stdint.h>

#include "covar.h"
#include "datafile.h"
#include "stats.h"

enum { VP_NODE_ROOT = 0 };
#define VP_NO_NODE UINT32_MAX
#define VP_NO_CALLSITE UINT32_MAX

struct vp_cct_node {
	uint32_t id;
	uint32_t parent;   /* VP_NO_NODE for the root */
	uint32_t func;	   /* index into the header's functions */
	uint32_t callsite; /* call-site id, VP_NO_CALLSITE if none */
	uint32_t depth;	   /* root = 0 */
	uint32_t slot;	   /* index in the parent's children[] */
	uint32_t nchildren;
	uint32_t *children; /* child node ids, in discovery order; variable
			     * i+1 of @cov is children[i] */
	uint32_t children_cap;
	uint64_t *child_keys; /* func << 32 | callsite of children[i]: a short
			       * scan here beats hashing for small fan-out */
	struct vp_stats stats; /* inclusive duration per invocation */
	struct vp_covar cov;   /* Y_0..Y_k once the node has children (cov.n is
				* then stats.n); empty for leaves */
	uint64_t unpaired;     /* invocations without a matching exit */
};

struct vp_cct {
	size_t nnodes;
	size_t cap;
	struct vp_cct_node *nodes;
	/* (parent, func, callsite) -> node: open addressing */
	uint32_t *hash;
	size_t hash_mask;
};

int vp_cct_init(struct vp_cct *t);
void vp_cct_release(struct vp_cct *t);
/* Find or create the child of @parent for (@func, @callsite); returns its id
 * or a negative errno. */
long vp_cct_child(struct vp_cct *t, uint32_t parent, uint32_t func, uint32_t callsite);
/* Lookup only: VP_NO_NODE when absent. */
uint32_t vp_cct_find(const struct vp_cct *t, uint32_t parent, uint32_t func, uint32_t callsite);
/*
 * vp_cct_merge - fold @src into @dst node by node (matching by function
 * and call site under matching parents), with exact statistics and
 * covariance merges.  Used to merge trees; 0 or -ENOMEM.
 */
int vp_cct_merge(struct vp_cct *dst, const struct vp_cct *src);
/* Index into node->cov of child @child_id's variable, or -1. */
long vp_cct_child_slot(const struct vp_cct_node *node, uint32_t child_id);

/* Totals of a build. */
struct vp_build_totals {
	uint64_t events;
	uint64_t entries;
	uint64_t exits;
	uint64_t invocations;	    /* paired entry/exit */
	uint64_t unpaired_entries;  /* entries retired without an exit */
	uint64_t unmatched_exits;   /* exits without a pending entry */
	uint64_t open_at_end;	    /* entries still pending at the end (in
				     * unpaired_entries too) */
	uint64_t out_of_order;	    /* per-thread time went backwards */
	uint32_t threads;
	uint64_t first_time, last_time;
};

struct vp_builder;

struct vp_builder *vp_builder_new(struct vp_cct *tree, size_t nfuncs,
				  const struct vp_header *hdr);
/* Callsite flags are needed to recognise tail calls; call this for every
 * callsite id before events that use it (vp_build_file does). */
int vp_builder_set_callsite_flags(struct vp_builder *b, uint32_t id, uint32_t flags);
/* Feed events in time order per thread.  0 or -errno. */
int vp_builder_feed(struct vp_builder *b, const struct vp_event *ev, size_t n);
/* Retire frames still open (counted as unpaired) and fill @ret. */
int vp_builder_finish(struct vp_builder *b, struct vp_build_totals *ret);
void vp_builder_free(struct vp_builder *b);

/*
 * vp_build_file - the one streaming pass: read every event of @r into
 * @tree.  Returns 0 or a negative errno (vp_reader_error() explains).
 */
int vp_build_file(struct vp_reader *r, struct vp_cct *tree, struct vp_build_totals *ret);

#endif
