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
 *
 * Durations are in the reader's time base (vp_reader_set_time).  When the
 * events carry off-CPU times and the base is not off-CPU time itself, each
 * node also keeps the off-CPU time of its invocations and its co-moment
 * with their durations, which split the wall-clock variance into on-CPU
 * and off-CPU parts (vp_cct_offcpu_split).
 */
#ifndef VARPERF_CORE_CCT_H
#define VARPERF_CORE_CCT_H

#include <stddef.h>
#include <stdint.h>

#include "budget.h"
#include "covar.h"
#include "datafile.h"
#include "hashtab.h"
#include "histogram.h"
#include "slowest.h"
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
			     * vp_cct_var(i) of @cov is children[i]'s */
	uint32_t children_cap;
	uint64_t *child_keys; /* func << 32 | callsite of children[i]: a short
			       * scan here beats hashing for small fan-out */
	struct vp_stats stats; /* inclusive duration per invocation */
	struct vp_hist hist;   /* the same durations, bucketed: percentiles */
	struct vp_covar cov;   /* Y_0..Y_k once the node has children (cov.n is
				* then stats.n), k at most VP_CCT_TRACKED + 1
				* (see there); empty for leaves */
	uint64_t unpaired;     /* invocations without a matching exit */
	/* invocations of the parent that called this node at least once
	 * (whether either returned or not): over the parent's stats.n, how
	 * often the parent takes this path (a parent whose exit was lost
	 * counts here and not there: a recording without lost exits has the
	 * exact fraction) */
	uint64_t path_calls;
	/* the tree's keep_slowest slowest paired invocations */
	struct vp_slowest slowest;
	/* invocations still open when the events ended (in @unpaired too) and
	 * the time they had run by then: a program stopped by a signal, an
	 * exit() or the end of a recording never returns from main, and its
	 * time is still the run's (see vp_cct_node_time) */
	uint64_t open;
	uint64_t open_total;
	/* with tree->offcpu: the off-CPU time O of each paired invocation
	 * (offcpu.n is then stats.n), and the co-moment
	 * sum (X - mean X)(O - mean O) of it with the duration X of @stats */
	struct vp_stats offcpu;
	double offcpu_com;
};

/*
 * The children of a node that have a variable of their own in its
 * covariance: the first VP_CCT_TRACKED in order of discovery, child i
 * being variable i + 1.  The time of the later ones is summed into one
 * more variable, "other" (VP_CCT_TRACKED + 1): the co-moments of a sum
 * are the sums of its terms' co-moments, so that variable is exact, every
 * row still adds up to its share of the node's variance (Kumar and Pande,
 * Dominant Variance Characterization, Section 2, Eq. 1-2), and a node with
 * up to VP_CCT_TRACKED children has exactly the matrix it always had.  It
 * bounds the matrix, and the work each invocation does on it, by a
 * constant instead of the square of a fan-out that a crafted file makes
 * 20 000.  Order of discovery, not variance, picks the tracked ones: known
 * when a child appears, so a variable never changes meaning mid-stream.
 * vp_cct_merge puts a source tree's "other" variable into the destination's
 * "other" even for callees the destination tracks: a sum does not split.
 */
enum { VP_CCT_TRACKED = 256 };

/* Sentinel node of the "other" variable (see vp_component) */
#define VP_OTHER_NODE (UINT32_MAX - 1)

/* Variable of @node's covariance for its child of slot @slot. */
static inline size_t vp_cct_var(uint32_t slot)
{
	return slot < VP_CCT_TRACKED ? (size_t)slot + 1 : (size_t)VP_CCT_TRACKED + 1;
}

/* Number of variables of a node with @nchildren children (self included). */
static inline size_t vp_cct_nvars(uint32_t nchildren)
{
	return nchildren ? vp_cct_var(nchildren - 1) + 1 : 1;
}

/* Children of @nchildren with a variable of their own: slots 0..this-1. */
static inline uint32_t vp_cct_ntracked(uint32_t nchildren)
{
	return nchildren < VP_CCT_TRACKED ? nchildren : VP_CCT_TRACKED;
}

/* Children of @nchildren in the "other" variable (0: none). */
static inline uint32_t vp_cct_nother(uint32_t nchildren)
{
	return nchildren > VP_CCT_TRACKED ? nchildren - VP_CCT_TRACKED : 0;
}

struct vp_cct {
	size_t nnodes;
	size_t cap;
	struct vp_cct_node *nodes;
	/* (parent, func, callsite) -> node id */
	struct vp_hashtab index;
	uint32_t time_base; /* enum vp_time_base of the durations */
	int offcpu;	    /* nodes have off-CPU statistics (see above) */
	/* charged for the nodes and their covariances (NULL: no limit): a
	 * tree that would pass it stops growing with -E2BIG.  The caller's,
	 * set after vp_cct_init(). */
	struct vp_budget *budget;
	/* per node, keep this many slowest invocations (vp_slowest); set
	 * before building, at most VP_SLOWEST_MAX; 0: none */
	uint32_t keep_slowest;
};

int vp_cct_init(struct vp_cct *t);
void vp_cct_release(struct vp_cct *t);
/* Find or create the child of @parent for (@func, @callsite); returns its id
 * or a negative errno. */
long vp_cct_child(struct vp_cct *t, uint32_t parent, uint32_t func, uint32_t callsite);
/*
 * The time spent in node @n: its paired invocations' total plus the time
 * its invocations still open at the end had run.  Significance uses this,
 * so an outermost function that never returned still counts.
 */
static inline uint64_t vp_cct_node_time(const struct vp_cct_node *n)
{
	return n->stats.total + n->open_total;
}

/* Lookup only: VP_NO_NODE when absent. */
uint32_t vp_cct_find(const struct vp_cct *t, uint32_t parent, uint32_t func, uint32_t callsite);
/*
 * vp_cct_merge - fold @src into @dst node by node (matching by function
 * and call site under matching parents), with exact statistics and
 * covariance merges.  Used to merge trees; 0 or -ENOMEM.
 */
int vp_cct_merge(struct vp_cct *dst, const struct vp_cct *src);
/*
 * vp_cct_merge_mapped - the same for a @src whose function and call-site
 * ids are another file's: @func_map[f] and @cs_map[c] are their ids in
 * @dst's (NULL: the same ids).  With @node_map (src->nnodes entries), each
 * node of @src gets the id of the node of @dst it went into.
 */
int vp_cct_merge_mapped(struct vp_cct *dst, const struct vp_cct *src, const uint32_t *func_map,
			const uint32_t *cs_map, uint32_t *node_map);
/*
 * (An empty @dst takes @src's time base and off-CPU statistics; trees that
 * differ in them do not merge: -EINVAL.)
 */
/* Index into node->cov of child @child_id's variable, or -1: children
 * past the VP_CCT_TRACKED first share the "other" variable. */
long vp_cct_child_slot(const struct vp_cct_node *node, uint32_t child_id);

/*
 * A node's wall-clock time W split into on-CPU time C and off-CPU time O,
 * W = C + O per invocation, over its paired invocations (population
 * moments, like struct vp_stats).  Since Var(W) = Var(C) + Var(O) +
 * 2 Cov(C, O), each part is given the variance it brings with its share
 * of the cross term:
 *
 *   off_share = (Var(O) + Cov(C, O)) / Var(W) = Cov(W, O) / Var(W)
 *   on_share  = (Var(C) + Cov(C, O)) / Var(W) = Cov(W, C) / Var(W)
 *
 * which add up to 1 (both are 0 when Var(W) is 0).  Like the variance
 * contributors of a node, a share can be below 0 or above 1: when the two
 * parts move against each other (a call that waits less when it computes
 * more), each varies more than their sum.
 */
struct vp_offcpu_split {
	uint64_t n;	      /* paired invocations */
	double wall_mean, on_mean, off_mean;
	double wall_var, on_var, off_var;
	double cov;	      /* Cov(C, O) */
	double off_share;     /* see above */
	double on_share;      /* 1 - off_share, or 0 */
};

/*
 * vp_cct_offcpu_split - fill @ret for node @id of @t.  Returns 0, -ENODATA
 * when @t has no off-CPU statistics (a file without off-CPU times, or
 * durations in off-CPU time), or -EINVAL when @id is not a node.  A node
 * without paired invocations gives all zeros.
 */
int vp_cct_offcpu_split(const struct vp_cct *t, uint32_t id, struct vp_offcpu_split *ret);

/* Totals of a build. */
struct vp_build_totals {
	uint64_t events;
	uint64_t entries;
	uint64_t exits;
	uint64_t invocations;	    /* paired entry/exit */
	uint64_t unpaired_entries;  /* entries retired without an exit */
	uint64_t unmatched_exits;   /* exits without a pending entry */
	uint64_t open_at_end;	    /* entries still pending at the end (in
				     * unpaired_entries too; their time up to
				     * the last event is their nodes'
				     * open_total) */
	uint64_t out_of_order;	    /* per-thread time went backwards */
	/* of the unpaired: entries of functions with a return probe nested
	 * more than 64 such deep, whose return probe the kernel never armed
	 * (VP_FUNC_URETPROBE), and the function with the most of them */
	uint64_t nest_lost;
	uint32_t nest_lost_func;
	uint64_t nest_lost_most;
	uint32_t threads;
	/* earliest and latest event time, in the time base: with on-CPU or
	 * off-CPU time, times of different threads do not compare, and the
	 * span of the recording is vp_reader_time_span()'s */
	uint64_t first_time, last_time;
};

struct vp_builder;

/*
 * One paired invocation, as the builder completes it: what
 * vp_builder_on_invocation()'s callback is handed.  The arrays are the
 * builder's, valid during the call only.
 */
struct vp_invocation {
	uint32_t node;
	uint32_t thread;   /* thread index (vp_reader_thread) */
	uint32_t depth;	   /* probed frames open below it on its thread */
	uint64_t start;	   /* entry time, in the time base */
	uint64_t duration; /* as the node's statistics count it */
	/* calls[i]: the calls it made to its node's children[i] (entries,
	 * returned or not), 0 past ncalls */
	const uint32_t *calls;
	uint32_t ncalls;
	/* y[v - 1]: the time its children of variable v (vp_cct_var) took,
	 * 0 past ny; its own time is duration minus their sum */
	const double *y;
	size_t ny;
};

/* 0 to go on, or a negative errno that stops the build with it. */
typedef int (*vp_invocation_fn)(void *ctx, const struct vp_invocation *inv);

/*
 * vp_builder_new - a builder of @tree for events of @hdr's @nfuncs
 * functions (@hdr may be NULL: no off-CPU times).  With hdr->offcpu the
 * tree keeps off-CPU statistics, unless the time base is off-CPU time.
 */
struct vp_builder *vp_builder_new(struct vp_cct *tree, size_t nfuncs,
				  const struct vp_header *hdr);
/* The time base of the events to come (vp_reader_time(); default wall). */
int vp_builder_set_time(struct vp_builder *b, enum vp_time_base base);
/* Callsite flags are needed to recognise tail calls; call this for every
 * callsite id before events that use it (vp_build_file does). */
int vp_builder_set_callsite_flags(struct vp_builder *b, uint32_t id, uint32_t flags);
/* Call @fn for every paired invocation from now on (NULL: none). */
void vp_builder_on_invocation(struct vp_builder *b, vp_invocation_fn fn, void *ctx);
/* Feed events in time order per thread.  0 or -errno. */
int vp_builder_feed(struct vp_builder *b, const struct vp_event *ev, size_t n);
/* Retire frames still open (counted as unpaired, and as open with the
 * time up to the last event: the thread's in on-CPU or off-CPU time, any
 * thread's in wall-clock time) and fill @ret. */
int vp_builder_finish(struct vp_builder *b, struct vp_build_totals *ret);
void vp_builder_free(struct vp_builder *b);

/*
 * vp_build_file - the one streaming pass: read every event of @r, in its
 * time base, into @tree.  Returns 0 or a negative errno
 * (vp_reader_error() explains).
 */
int vp_build_file(struct vp_reader *r, struct vp_cct *tree, struct vp_build_totals *ret);
/* The same, calling @fn for every paired invocation (vp_builder_on_invocation). */
int vp_build_file_invocations(struct vp_reader *r, struct vp_cct *tree, vp_invocation_fn fn,
			      void *ctx, struct vp_build_totals *ret);

/**
 * vp_cct_callsite_twins - call sites that only their address tells apart:
 * two or more through which one calling context of @t calls one function
 * from one source line (two calls on one line, a loop unrolled).  For each
 * of @r's call sites, its rank (1, 2, ...) by return address among them,
 * or 0 when its module, file and line and the callee tell it apart.  The
 * rank outlives a rebuild that moves the calls.  Returns a malloc'ed array
 * of vp_reader_ncallsites() entries (the caller frees it), or NULL with
 * errno set; NULL with errno 0 without call sites.
 */
uint32_t *vp_cct_callsite_twins(const struct vp_cct *t, const struct vp_reader *r);

/**
 * vp_cct_probe_costs - per node of @t, what the probes cost inside one of
 * its invocations, in ns: its own probe and, on average, those of its probed
 * descendants (vp_probe_class_cost() of each function of @h).  A malloc'ed
 * array of t->nnodes entries (the caller frees it), or NULL with errno set.
 */
double *vp_cct_probe_costs(const struct vp_cct *t, const struct vp_header *h);

/*
 * vp_cct_unreliable - whether node @id's mean is under 10 times @cost[id]
 * (vp_cct_probe_costs): mostly what the probes cost, whatever was
 * subtracted.
 */
int vp_cct_unreliable(const struct vp_cct *t, const double *cost, uint32_t id);

#endif
