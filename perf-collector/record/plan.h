/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * plan.h - the automatic mode's choice (Kumar et al. 2008, §2.2): from the
 * sampling run (phase 1), the functions the probed run (phase 2) times -
 * those whose cumulative share of the time is significant, as long as the
 * estimated probe cost stays within a budget - and the copy of phase 1
 * into the final data file.
 */
#ifndef VARPERF_PLAN_H
#define VARPERF_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "core/datafile.h"
#include "core/sampled.h"

/* Why a function is or is not probed. */
enum vp_plan_why {
	VP_PLAN_UNSEEN = 0,   /* no sample in it */
	VP_PLAN_PROBED,	      /* significant and within the budget */
	VP_PLAN_CUTOFF,	      /* share under the cut-off */
	VP_PLAN_BUDGET,	      /* its probes would exceed the overhead budget */
	VP_PLAN_UNPATCHABLE,  /* chosen, but the user backend cannot patch it */
};

struct vp_plan_func {
	uint32_t why;	  /* enum vp_plan_why */
	uint64_t samples; /* samples with it on the stack (once per sample) */
	double share;	  /* of all samples */
	double calls;	  /* estimated calls in a run */
	int observed;	  /* calls counted from spans (else a bound, see plan.c) */
	double cost;	  /* estimated probe cost in ns for the whole run */
	uint32_t depth;	  /* its least depth in the sampled tree: callers
			   * first among equal shares */
};

struct vp_plan {
	struct vp_reader *r; /* the phase-1 data */
	struct vp_sampled tree;
	/* The samples planned from: those unwound to their outermost frame
	 * (a cut stack misses callers, and ranks its callees above them),
	 * and per symbol how many hold it; @incomplete, those left out. */
	uint64_t samples, incomplete;
	uint64_t *sym_samples;
	double cpu_ns;	     /* sampled CPU time of phase 1 */
	double budget_ns;
	double cost_ns;	     /* estimated cost of the chosen probes */
	struct vp_plan_func *funcs; /* per candidate function */
	size_t nfuncs;
	size_t nchosen;
	/* sampled functions that cannot be probed, for the summary */
	uint64_t inline_only, other_modules;
	double other_share; /* their largest share */
	char *other_example;
};

/* Whether @path can be a phase-1 file (it samples a clock), before the
 * calibration vp_plan_build() needs.  Prints the error and returns -1 if
 * not. */
int vp_plan_check(const char *path);
/**
 * vp_plan_build - read the phase-1 file @path and decide, for each of the
 * @nfuncs candidate functions (modules @mods), whether phase 2 probes it:
 * share >= @cutoff and a running estimated cost within @overhead times the
 * sampled CPU time, the largest shares first.  @costs are the calibrated
 * probe costs (defaults when @ncosts is 0).  Prints the error and returns
 * -1 on failure.
 */
int vp_plan_build(struct vp_plan *p, const char *path, const struct vp_func *funcs,
		  size_t nfuncs, const struct vp_module *mods,
		  const struct vp_probe_cost *costs, size_t ncosts, double cutoff,
		  double overhead);
/*
 * What the probes have cost so far, measured while phase 2 runs: the plan
 * estimated call counts from samples, which cannot count calls shorter
 * than the sampling period, so the recorder counts them.
 */
struct vp_plan_spend {
	const struct vp_func *funcs;	/* the functions probed */
	size_t nfuncs;
	const struct vp_probe_cost *costs; /* calibrated (defaults when @ncosts is 0) */
	size_t ncosts;
	const uint64_t *calls;		/* entries per function so far */
	const unsigned char *dropped;	/* no longer probed: their cost is spent and no
					 * longer counts against the rest (NULL: all count) */
	double cpu_ns;			/* the target's CPU time meanwhile */
	double overhead;		/* the budget, a share of @cpu_ns */
};

/* One function to stop probing, and why. */
struct vp_plan_drop {
	uint32_t func;
	double cost_ns;	 /* what its probes cost */
	double total_ns; /* what all probes still in place cost before it went */
};

/* What is over the budget now (vp_plan_over_budget()). */
struct vp_plan_verdict {
	double budget_ns;
	double cost_ns;		  /* what the probes still in place cost */
	int over;		  /* beyond the budget by more than a measurement tells */
	struct vp_plan_drop *drop; /* when over: the most expensive first, until the
				    * rest fits the budget (malloc'ed) */
	size_t ndrop;
};

/**
 * vp_plan_over_budget - the one judge of the overhead budget while phase 2
 * runs: what the probes of @s cost, and when that exceeds the budget
 * beyond a measurement's error, which functions to stop probing so that
 * the rest fits.  The caller applies the verdict and releases it with
 * vp_plan_verdict_release().
 */
void vp_plan_over_budget(const struct vp_plan_spend *s, struct vp_plan_verdict *ret);
void vp_plan_verdict_release(struct vp_plan_verdict *v);
/* Say what is probed and why the rest is not (@all: every function). */
void vp_plan_print(const struct vp_plan *p, const struct vp_func *funcs, double cutoff,
		   double overhead, int all);
/* The header fields phase 1 gives the final file (its sampling). */
const struct vp_header *vp_plan_header(const struct vp_plan *p);
/**
 * vp_plan_copy - write phase 1 into @w (a file with header @hdr): a PHASE 1
 * record, its threads, definitions and samples.  *@nthreads gets the
 * number of threads written: phase 2 numbers its own after them.  0 or
 * -errno from the writer.
 */
int vp_plan_copy(struct vp_plan *p, struct vp_writer *w, const struct vp_header *hdr,
		 uint32_t *nthreads);
void vp_plan_release(struct vp_plan *p);

#endif
