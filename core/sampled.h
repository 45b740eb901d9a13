/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * sampled.h - the sampled calling-context tree: call stacks taken at a
 * fixed period folded into a tree of sample counts, each node's share of
 * the samples with its confidence interval (Schneider, "Analysis"), and invocation
 * durations reconstructed from consecutive samples of a thread.
 *
 * A node stands for (function, call site, parent node) like a CCT node;
 * functions inlined at a sampled address are nodes of their own under the
 * function they were inlined into.  Node 0 is the root.
 */
#ifndef VARPERF_CORE_SAMPLED_H
#define VARPERF_CORE_SAMPLED_H

#include <stddef.h>
#include <stdint.h>

#include "budget.h"
#include "datafile.h"
#include "hashtab.h"
#include "stats.h"

#define VP_SNODE_NONE UINT32_MAX

enum vp_snode_kind {
	VP_SNODE_ROOT = 0,
	VP_SNODE_FUNC = 1,	 /* a function (physical or inlined) */
	VP_SNODE_KERNEL = 2,	 /* time in the kernel, under the user code */
	VP_SNODE_INCOMPLETE = 3, /* parent of stacks that did not reach their
				  * outermost frame (truncated or broken) */
	VP_SNODE_CUT = 4,	 /* stands for the levels of a path past
				  * VP_SAMPLED_MAX_DEPTH */
};

/*
 * Nodes on one sample's path at most, the root not counted: a path that
 * long or longer keeps its outermost VP_SAMPLED_MAX_DEPTH - 1 nodes and
 * ends in a VP_SNODE_CUT node, which takes the sample's self count.  An unwound stack
 * of a 64 KiB copy has at most 4096 frames of 16 bytes; the cut is for
 * inlined levels past that and for crafted files, where a frame of L
 * inlined levels in a stack of F frames would make F * L nodes.
 */
enum { VP_SAMPLED_MAX_DEPTH = 4096 };

struct vp_snode {
	uint32_t parent;	/* VP_SNODE_NONE for the root */
	uint32_t kind;		/* enum vp_snode_kind */
	uint32_t symbol;	/* the reader's symbol id (VP_SNODE_NONE if none) */
	uint32_t site_frame;	/* call site: frame id of the caller's position */
	uint32_t site_level;	/* ... and its level (VP_SNODE_NONE: no site) */
	uint32_t depth;		/* root = 0 */
	uint32_t nchildren;
	uint32_t children_cap;
	uint32_t *children;
	uint64_t samples;	/* samples with this node on their path */
	uint64_t self;		/* samples with this node innermost */
	double time;		/* sum of the periods of those samples */
	double self_time;
	/* Sample-derived invocations: how many consecutive samples of one
	 * thread each invocation spanned (same node and CFA throughout). */
	struct vp_stats span;
};

struct vp_sampled_thread;
struct vp_sampled_site;

struct vp_sampled {
	size_t nnodes, cap;
	struct vp_snode *nodes;
	struct vp_hashtab index; /* (parent, kind, symbol, site) -> node id */
	uint32_t phase;	     /* only samples of this phase; 0: all */
	uint64_t samples;    /* samples folded in */
	uint64_t truncated;  /* ... of which the stack copy was too small */
	uint64_t broken;     /* ... of which unwinding stopped early */
	uint64_t kernel;     /* ... taken in the kernel */
	uint64_t probe;	     /* ... with the IP in the [uprobes] page */
	uint64_t cut;	     /* ... whose path was cut at VP_SAMPLED_MAX_DEPTH */
	double time;	     /* sum of their periods */
	uint64_t period;     /* the period of the last sample */
	int period_varies;   /* not every sample had the same period
			      * (frequency mode: cycles) */
	/* per symbol, counting a function once per sample (recursion) */
	size_t nsyms;
	uint64_t *sym_samples, *sym_self;
	uint64_t *sym_stamp;
	/* per reader thread: the path of its last sample */
	size_t nthreads;
	struct vp_sampled_thread *threads;
	/* inlined call sites: (caller, callee, file, line) -> the first
	 * (frame, level) seen for it, so every address in the inlined code
	 * names the same site */
	struct vp_hashtab sites; /* of struct vp_sampled_site */
	/* scratch path of the sample being added */
	uint32_t *pnodes;
	uint64_t *pcfas;
	size_t pcap;
	/* charged VP_SAMPLED_NODE_BYTES a node (NULL: no limit); the
	 * caller's, set after vp_sampled_init() */
	struct vp_budget *budget;
};

/* Memory one node takes: itself, its index slots (an id and 32 bits of
 * hash each) and its parent's child entry, on average (the index is kept
 * at most half full). */
enum { VP_SAMPLED_NODE_BYTES = sizeof(struct vp_snode) + 8 * sizeof(uint32_t) };

int vp_sampled_init(struct vp_sampled *t);
void vp_sampled_release(struct vp_sampled *t);

/**
 * vp_sampled_add - fold sample @s, whose frames @r defines, into @t.
 * Samples of each thread must come in time order.  0, -ENOMEM, or -E2BIG
 * when the tree would take more than t->budget allows.
 */
int vp_sampled_add(struct vp_sampled *t, const struct vp_reader *r, const struct vp_sample *s);
/* vp_sampled_add() as a vp_sample_fn: @ctx is the struct vp_sampled. */
int vp_sampled_handler(void *ctx, const struct vp_reader *r, const struct vp_sample *s);
/* End every invocation still open (the end of the recording). */
void vp_sampled_finish(struct vp_sampled *t);

/* Child of @parent for the given key, or VP_SNODE_NONE. */
uint32_t vp_sampled_find(const struct vp_sampled *t, uint32_t parent, uint32_t kind,
			 uint32_t symbol, uint32_t site_frame, uint32_t site_level);

/* ---- Schneider, "Analysis": shares of samples and their confidence ---- */

/* Φ^-1(@p) of the standard normal distribution, 0 < p < 1. */
double vp_normal_quantile(double p);
/* Z of a two-sided interval at @confidence (0.95 gives 1.96). */
double vp_confidence_z(double confidence);

struct vp_share {
	double p;	  /* k / n */
	double lo, hi;	  /* p -/+ half, clamped to [0, 1] */
	double half;	  /* Z * sqrt(p q / n): the half-width */
};

/* Share of @k in @n samples and its normal-approximation interval. */
void vp_share(uint64_t k, uint64_t n, double z, struct vp_share *ret);
/*
 * vp_samples_needed - samples that estimate a share @p to within +/- @e at
 * the confidence of @z: N = Z^2 p q / e^2 (Schneider, "Analysis"), rounded up.
 */
uint64_t vp_samples_needed(double p, double e, double z);

/* ---- sample-derived durations ---- */

struct vp_sdur {
	uint64_t invocations; /* distinct invocations seen */
	double mean_span;     /* samples per invocation */
	double mean;	      /* mean span * period: estimated duration (0 when
			       * the period varies: no duration to give) */
	double cov;	      /* CoV of the durations, without what counting
			       * whole periods adds on average (see sampled.c) */
	double cov_raw;	      /* CoV of the spans as they are */
	double quant;	      /* one period relative to the mean: the
			       * quantisation error of one invocation */
};

/*
 * Durations of the invocations of node @id (all zero without any), in the
 * unit of the sampling period: CPU time for cpu-clock and task-clock,
 * which do not count while a thread is off the CPU.
 */
void vp_sampled_durations(const struct vp_sampled *t, uint32_t id, struct vp_sdur *ret);

#endif
