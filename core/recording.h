/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * recording.h - one recording, read and analysed: the pipeline every
 * reader of a data file runs (`varperf report`, `varperf compare`, the GDB
 * plugin), written once so that they cannot drift apart.  Open the file,
 * read it in a time base, subtract the probe costs (unless raw), build the
 * calling-context tree (and the sampled one), count what was lost, run the
 * pattern analysis, and collect what is wrong with the file as warnings
 * that the caller words and prints: core never prints.
 */
#ifndef VARPERF_CORE_RECORDING_H
#define VARPERF_CORE_RECORDING_H

#include <stddef.h>
#include <stdint.h>

#include "budget.h"
#include "cct.h"
#include "datafile.h"
#include "patterns.h"
#include "sampled.h"

/* What to read and how; vp_recording_opts_default() fills it. */
struct vp_recording_opts {
	struct vp_analysis_params params;
	enum vp_time_base time; /* what the durations measure */
	int raw;		/* durations as measured: no probe costs subtracted */
	uint32_t pid;		/* only this process's events and samples; 0: all */
	size_t max_memory;	/* bytes the trees may take; 0: no limit */
	int samples;		/* also fold the samples into the sampled tree */
	uint32_t slowest;	/* slowest invocations kept per node (vp_slowest),
				 * at most VP_SLOWEST_MAX; default VP_SLOWEST_DEFAULT */
	/* @time was not chosen (the default): in wall-clock time, a file
	 * whose high-variance nodes vary mostly by preemption (at least
	 * VP_PREEMPTED_AUTO of their variance) is read in own time instead */
	int time_auto;
};

/* Share of the variance that makes own time the default (time_auto). */
#define VP_PREEMPTED_AUTO 0.5

void vp_recording_opts_default(struct vp_recording_opts *o);

/* What is wrong with a file that still gives a usable analysis. */
enum vp_recording_warning_code {
	VP_WARN_DAMAGED,	/* the reader's: truncated, a damaged chunk skipped */
	VP_WARN_INCOMPLETE,	/* no END chunk: the recorder died */
	VP_WARN_WRITE_ERROR,	/* the recorder could not write all data */
	VP_WARN_OVER_BUDGET,	/* phase 2's probes cost more than the budget */
	VP_WARN_CLAMPED,	/* compensated durations clamped at zero */
	VP_WARN_LOST,		/* records lost: their invocations unpaired */
	VP_WARN_NESTING,	/* exits lost to the kernel's return-probe limit */
	VP_WARN_TRUNCATED_STACKS, /* samples whose stack copy was too small */
	VP_WARN_BROKEN_STACKS,	/* samples not unwound to their outermost frame */
};

/*
 * One warning: @message names the file and says what is wrong, without a
 * hint at any command's options (the caller adds those, by @code).
 * @missing_data: events are missing from the file itself, which a caller
 * may refuse (`--strict`).
 */
struct vp_recording_warning {
	enum vp_recording_warning_code code;
	int missing_data;
	char *message;
};

/*
 * A recording read and analysed.  Everything is owned by it and read-only
 * to the caller; vp_recording_free() releases it all.
 */
struct vp_recording {
	char *path;
	struct vp_reader *reader;	   /* call sites, threads, symbols */
	const struct vp_header *hdr;	   /* META chunk */
	const struct vp_trailer *trailer; /* END chunk (present == 0: none) */
	struct vp_budget budget;	   /* of both trees: max_memory */
	struct vp_cct tree;
	struct vp_build_totals totals;
	/* the sampled tree, when opts.samples and the file has (or was to
	 * have) samples; NULL otherwise */
	struct vp_sampled *sampled;
	struct vp_analysis an;
	/*
	 * Per node, what the probes cost inside one invocation
	 * (vp_cct_probe_costs); NULL in off-CPU time, which holds none of it.
	 * Nodes mostly probe cost are left out of the ranking.
	 */
	double *probe_cost;
	/* per call site, its rank among its twins (vp_cct_callsite_twins), or
	 * NULL when they could not be computed (out of memory) */
	uint32_t *callsite_twins;
	uint64_t lost;	  /* lost records, the larger of the two counts */
	uint64_t clamped; /* compensated durations clamped (vp_reader_clamped) */
	uint64_t clamped_max; /* ... by at most (vp_reader_clamped_max) */
	int compensated;  /* probe costs were subtracted from the durations */
	int raw;	  /* opts.raw */
	enum vp_time_base time;
	/* own time by default (opts.time_auto): the share of the variance
	 * that was preempted time in wall-clock time; 0 otherwise */
	int time_auto;
	double preempted_share;
	uint32_t pid;
	struct vp_recording_warning *warnings;
	size_t nwarnings;
	/* private */
	struct vp_trailer trailer_copy; /* a second pass clears the reader's */
	struct vp_sampled sampled_tree;
	int have_tree, have_sampled, have_an;
};

/**
 * vp_recording_open - read, build and analyse the data file @path.
 * @opts: NULL for the defaults.
 *
 * Returns 0 with *@ret set (free it with vp_recording_free()), or a
 * negative errno with a one-line message naming the file in @msg (when
 * given): -ENODATA for a time base the file has no times of (the message
 * says so; a caller may name its option after it), -E2BIG when the trees
 * would take more than @opts->max_memory, -ESRCH for a pid the recording
 * does not have (the message lists those it has), -EINVAL for analysis
 * parameters out of range, else what reading or analysing failed with.
 */
int vp_recording_open(const char *path, const struct vp_recording_opts *opts,
		      struct vp_recording **ret, char *msg, size_t len);
void vp_recording_free(struct vp_recording *rec);

/**
 * vp_recording_same_time - make the recordings @recs[0..@n), opened with
 * @opts, measure the same: by default (opts->time_auto) some may be read
 * in own time and others not.  Those that differ are read again, in own
 * time where every file splits its off-CPU time, else in wall-clock time
 * (replacing @recs[i]; a file read again has no time_auto of its own).
 * Returns 0, or what vp_recording_open() returned for a file read again,
 * with its message in @msg; @recs[i] is then NULL.
 */
int vp_recording_same_time(struct vp_recording **recs, size_t n,
			   const struct vp_recording_opts *opts, char *msg, size_t len);

/**
 * vp_recording_invocations - read @rec's events again, as they were read
 * for its tree (time base, process, compensation), and call @fn for each
 * paired invocation in the order they end; inv->node is the node of
 * rec->tree.  For what the tree keeps in summary only: every call of a
 * node for a timeline or an export, or one node's calls for a regression.
 * Builds a second tree on the way, within a budget of rec's max_memory of
 * its own.  Returns 0, what @fn returned when it stopped the pass, or a
 * negative errno with a message naming the file in @msg (when given).
 */
int vp_recording_invocations(struct vp_recording *rec, vp_invocation_fn fn, void *ctx,
			     char *msg, size_t len);

/**
 * vp_recording_samples - read @rec's file again and call @fn for each
 * sample of its process (rec->pid, 0: all), in the order they were
 * written, with the reader that defines their frames; their times are
 * wall-clock times whatever rec->time.  Returns 0, what @fn returned when
 * it stopped the pass, or a negative errno with a message naming the file
 * in @msg (when given).
 */
int vp_recording_samples(struct vp_recording *rec, vp_sample_fn fn, void *ctx, char *msg,
			 size_t len);

/* ---- labels, the same in every renderer ---- */

/* Display name of function @func ("?" for an index the header lacks). */
const char *vp_recording_func_name(const struct vp_recording *rec, uint32_t func);
/*
 * Call site @id as vp_callsite_label() has it ("" for VP_NO_CALLSITE); one
 * that shares its line and callee with another (callsite_twins) gets its
 * caller+offset (or return address) too, "file:line (caller+0xoff)", so
 * that the two can be told apart.
 */
const char *vp_recording_callsite_label(const struct vp_recording *rec, uint32_t id,
					int short_file, char *buf, size_t len);
/* The same for a reader and its twins array (NULL: none), for renderers
 * that hold those rather than a recording. */
const char *vp_callsite_twin_label(const struct vp_reader *reader, const uint32_t *twins,
				   uint32_t id, int short_file, char *buf, size_t len);
/* Node @id as "function@call-site", or "function" without a call site. */
const char *vp_recording_node_label(const struct vp_recording *rec, uint32_t id, char *buf,
				    size_t len);

/* ---- covariance row sums ---- */

/* Variable @var of a node's covariance matrix and its row sum. */
struct vp_contrib {
	size_t var; /* 0: self, vp_cct_var(i): children[i], past the tracked
		     * ones: the other callees together */
	double value;
};

/**
 * vp_cct_contributors - the row sums of node @n's covariance matrix,
 * largest magnitude first (ties: by variable): variable i contributes
 * sum_j C[i][j], and the row sums add up to the node's variance, the sum
 * of the matrix (Kumar and Pande, Eq. 2).  Returns the number of rows, n->cov.dim,
 * with *@ret malloc'ed (NULL when 0), or -ENOMEM.
 */
long vp_cct_contributors(const struct vp_cct_node *n, struct vp_contrib **ret);

#endif
