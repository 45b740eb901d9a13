/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * merge.h - many recordings of one program as one: their calling-context
 * trees merged exactly (counts, means, M2, the covariances of the
 * children's contributions and the histograms, by Chan et al.'s pairwise
 * update), with the runs kept as replicates: per context, its statistics
 * in each run and the split of its variance into a within-run and a
 * between-run part (one-way analysis of variance, random effects).
 *
 * "One program" is one build of it: the main modules (the first module of
 * each file's META chunk) have one build-id.  Function and call-site ids
 * are each file's own; a run's are matched to the first run's by module,
 * name and address.
 */
#ifndef VARPERF_CORE_MERGE_H
#define VARPERF_CORE_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "cct.h"
#include "patterns.h"
#include "recording.h"
#include "stats.h"

struct vp_runs {
	size_t nruns;
	struct vp_recording *const *recs; /* the caller's, rec[0] names ids */
	struct vp_budget budget;	  /* of @tree: max_memory */
	struct vp_cct tree;		  /* all runs merged */
	struct vp_build_totals totals;	  /* summed; times: the first run's */
	struct vp_analysis an;		  /* of @tree */
	double *probe_cost;		  /* of @tree (NULL in off-CPU time) */
	uint32_t *callsite_twins;	  /* of @tree, in rec[0]'s call sites */
	uint64_t lost, clamped, clamped_max;
	/* per_run[node * nruns + run]: node's statistics in that run alone */
	size_t nnodes;
	struct vp_stats *per_run;
	int have_an;
};

/*
 * vp_runs_merge - merge the trees of @recs[0..@n) (n >= 1) into @m, and
 * analyse the result with @opts' parameters as vp_recording_open()
 * analyses one, the merged tree within @opts' max_memory (-E2BIG past it).
 * The recordings stay the caller's and must outlive @m.  Returns 0, or a
 * negative errno with a message naming the files in @msg: -EXDEV for
 * recordings of other programs (main-module build-ids that differ or are
 * missing), -EINVAL for durations of other kinds (time base, off-CPU
 * times), -ENOENT for a function or call site of a run that the first
 * run's file does not define, -ENOMEM.
 */
int vp_runs_merge(struct vp_runs *m, struct vp_recording *const *recs, size_t n,
		  const struct vp_recording_opts *opts, char *msg, size_t len);
void vp_runs_release(struct vp_runs *m);

/*
 * A context's variance split over the runs (one-way ANOVA, Searle, Casella
 * and McCulloch 1992, §3.5 and §3.6 for unequal group sizes): with N calls
 * in k runs of n_r calls, means m_r and sums of squares M2_r, the sums of
 * squares split exactly,
 *
 *   SS_total = sum_r M2_r + sum_r n_r (m_r - m)^2 = SS_within + SS_between,
 *
 * and the random-effects model x = mu + a_r + e (a run shifts every call
 * of it by a_r, of variance s_b^2; the calls scatter by e, of variance
 * s_w^2) estimates s_w^2 = MS_within = SS_within / (N - k) and
 * s_b^2 = max(0, (MS_between - MS_within) / n0), MS_between =
 * SS_between / (k - 1), n0 = (N - sum n_r^2 / N) / (k - 1).  @share is
 * s_b^2 / (s_b^2 + s_w^2), the intraclass correlation: the part of a
 * call's variance that comes from which run it was in.  @p is the F test's
 * of MS_between / MS_within (no run effect), NaN when undefined.
 */
struct vp_runs_split {
	uint64_t n;	     /* calls in all runs */
	uint32_t runs;	     /* runs with at least one call */
	double ss_within, ss_between;
	double var_within;   /* s_w^2 */
	double var_between;  /* s_b^2 */
	double share;	     /* s_b^2 / (s_b^2 + s_w^2), 0 when both are 0 */
	double f, p;
};

/* Fill @ret for node @id of m->tree; -EINVAL for no such node. */
int vp_runs_split(const struct vp_runs *m, uint32_t id, struct vp_runs_split *ret);

/* Node @id's statistics in run @run (an empty one when it had no call). */
const struct vp_stats *vp_runs_stats(const struct vp_runs *m, uint32_t id, size_t run);

#endif
