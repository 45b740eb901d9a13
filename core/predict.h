/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * predict.h - run-time prediction from input size by phase clustering
 * (Schwarzer et al., 2011, Sections 5.2-5.5 and 6): each sampled recording
 * is cut into fixed-length intervals of I samples, every interval becomes a
 * function-frequency vector (the code-based analogue of the paper's
 * basic-block vector: the share of the interval's samples whose innermost
 * function is each function), the dimensions are reduced by coverage,
 * k-means with the city-block distance groups the intervals of all
 * recordings into phases, and each phase's interval count is regressed
 * linearly on the input size.  Over a range of I and k the combination
 * with the smallest weighted residual sum is kept.  The run time for a new
 * size is the predicted interval counts times a phase's representative
 * interval duration (the interval closest to the phase's centre, or the
 * mean of a random sample of 30 of its intervals).
 *
 * Leaf (self) counts, not inclusive ones: a basic-block vector counts where
 * the instructions executed, which is the innermost function of a sample;
 * and leaf shares of an interval add up to 1, so two vectors are at most 2
 * apart in city-block distance, as the paper's normalised vectors are.
 *
 * Pure library: never prints, returns 0 or -errno.
 */
#ifndef VARPERF_CORE_PREDICT_H
#define VARPERF_CORE_PREDICT_H

#include <stddef.h>
#include <stdint.h>

#include "hashtab.h"

/* One recording: the innermost function of each sample, in time order,
 * and the time each sample stands for (the gap since the one before). */
struct vp_predict_run {
	char *name;
	double size;	   /* input size */
	size_t n;	   /* samples */
	uint32_t *func;	   /* per sample: function id (struct vp_predict_data) */
	double *gap_ns;	   /* per sample: the ns it stands for: its period of
			    * CPU time, or the wall-clock ns since the sample
			    * before (the first: its period) */
	double span_ns;	   /* sum of gap_ns: the run time the samples cover */
};

/* Recordings with a common function numbering (by name). */
struct vp_predict_data {
	size_t nruns;
	struct vp_predict_run *runs;
	size_t nfuncs;
	char **names;
	struct vp_hashtab index; /* name -> id */
};

int vp_predict_data_init(struct vp_predict_data *d);
void vp_predict_data_release(struct vp_predict_data *d);
/* Append an empty run; *ret stays valid until the next vp_predict_add_run. */
int vp_predict_add_run(struct vp_predict_data *d, const char *name, double size,
		       struct vp_predict_run **ret);
/* Append one sample of function @fname to @run. */
int vp_predict_add_sample(struct vp_predict_data *d, struct vp_predict_run *run,
			  const char *fname, double gap_ns);
/*
 * vp_predict_load - read the samples of the recording @path into a new run
 * of size @size (when @has_size) or of the file's input size (META
 * INPUT_SIZE).  A sample stands for its period of CPU time, or with @wall
 * for the wall-clock time since the sample before it (time the program
 * waited included).  -EINVAL for a file of auto or probe mode, or of the
 * cycles event without @wall (its period is no time), (auto mode samples
 * the start of the run only), -ENODATA when the file has no samples,
 * -ENOENT when it has no input size and none is given; @msg gets the
 * reason of any failure.
 */
int vp_predict_load(struct vp_predict_data *d, const char *path, int has_size, double size,
		    int wall, char *msg, size_t len);

/* ---- the building blocks (exposed for the tests) ---- */

/*
 * vp_kmeans_l1 - k-means under the city-block distance of the @n points
 * of @dim coordinates in @x (row-major): k-means++ seeding with L1
 * distances, then Lloyd's iteration with the coordinate-wise median as a
 * cluster's centre (the point minimising the summed L1 distance, as
 * MATLAB's kmeans does for 'cityblock'); the best of @restarts runs.
 * @assign gets each point's cluster, @centers k x dim.  @seed makes it
 * reproducible.  Returns 0 with *@cost the summed distance, or -errno.
 */
int vp_kmeans_l1(const double *x, size_t n, size_t dim, unsigned k, unsigned restarts,
		 uint64_t seed, unsigned *assign, double *centers, double *cost);

/* Least-squares line y = b0 + b1 x over n points. */
struct vp_linfit {
	size_t n;
	double b0, b1;
	double xbar, sxx;  /* mean and sum of squared deviations of x */
	double ssr;	   /* residual sum of squares */
	double sar;	   /* sum of absolute residuals */
};
/* -EDOM when n < 2 or all x are equal. */
int vp_linfit(const double *x, const double *y, size_t n, struct vp_linfit *f);
/* Half-width of the 95 % prediction interval of a new y at @x (n > 2);
 * @extra_var adds to the variance of the new observation. */
double vp_linfit_halfwidth(const struct vp_linfit *f, double x, double extra_var);
/* The 0.975 quantile of Student's t with @df degrees of freedom. */
double vp_t975(unsigned df);

/* ---- the model ---- */

enum vp_predict_strategy {
	VP_PREDICT_REPRESENTATIVE = 0, /* the interval closest to the centre */
	VP_PREDICT_SAMPLE = 1,	       /* mean of a random sample */
	VP_PREDICT_NSTRATEGIES
};

struct vp_predict_opts {
	const size_t *intervals; /* interval sizes in samples to try */
	size_t nintervals;
	unsigned kmin, kmax;	 /* numbers of phases to try */
	double coverage;	 /* keep the functions covering this share */
	unsigned restarts;	 /* k-means runs per (I, k) */
	unsigned sample_n;	 /* intervals per phase, sample strategy (30) */
	uint64_t seed;
};
void vp_predict_opts_init(struct vp_predict_opts *o);

struct vp_predict_phase {
	double weight;		 /* its share of all samples */
	double intervals;	 /* its intervals (partial ones in part) */
	struct vp_linfit fit;	 /* interval count on input size */
	double rep_ns;		 /* representative interval's duration */
	double mean_ns, sd_ns;	 /* over the random sample */
	size_t sampled;		 /* intervals in that sample */
	uint32_t top;		 /* its most frequent function (id) */
	double top_share;
};

struct vp_predict_model {
	size_t interval;	 /* I, samples */
	unsigned k;
	double score;		 /* weighted residual sum, in samples */
	size_t dims;		 /* functions kept by the coverage */
	size_t nruns;
	struct vp_predict_phase *phases;
	/* run time (ns) on size, per strategy: sum over phases of count x
	 * duration, which least squares being linear makes the fit of each
	 * run's phase-weighted time on its size */
	struct vp_linfit total[VP_PREDICT_NSTRATEGIES];
	/* per strategy: the variance of the sampled durations, per phase
	 * count squared (the sample means' own uncertainty) */
	double *dur_var[VP_PREDICT_NSTRATEGIES];
	size_t ncandidates;	 /* (I, k) combinations scored */
};

/*
 * vp_predict_fit - choose (I, k) and fit the phases on the runs of @d whose
 * @use byte is set (NULL: all).  -EDOM with fewer than 2 runs or equal
 * sizes; -ENODATA when no interval size fits the shortest run.
 */
int vp_predict_fit(const struct vp_predict_data *d, const unsigned char *use,
		   const struct vp_predict_opts *o, struct vp_predict_model *m);
void vp_predict_model_release(struct vp_predict_model *m);

struct vp_prediction {
	double ns;	 /* predicted run time */
	double half;	 /* 95 % prediction interval: ns +/- half (NAN: n <= 2) */
};
void vp_predict_at(const struct vp_predict_model *m, double size,
		   enum vp_predict_strategy s, struct vp_prediction *p);

/*
 * Leave-one-out: each run predicted by a model fitted on the others.
 * Beyond VP_PREDICT_MAX_FOLDS runs, cross-validation in that many folds
 * instead (the runs ranked by size, every VP_PREDICT_MAX_FOLDS-th in one
 * fold): leaving each out refits the model once per run, and each fit
 * grows with the runs, so 400 recordings took minutes.
 */
#define VP_PREDICT_MAX_FOLDS 20

struct vp_predict_loo_row {
	double size, actual_ns;
	double predicted_ns[VP_PREDICT_NSTRATEGIES];
	double rel_err[VP_PREDICT_NSTRATEGIES]; /* |pred - actual| / actual */
	size_t interval;
	unsigned k;
};
struct vp_predict_loo {
	size_t n;
	size_t folds; /* models fitted: n (leave-one-out) or VP_PREDICT_MAX_FOLDS */
	struct vp_predict_loo_row *rows;
	double mean[VP_PREDICT_NSTRATEGIES], sd[VP_PREDICT_NSTRATEGIES];
};
/* -EDOM with fewer than 3 runs. */
int vp_predict_loo(const struct vp_predict_data *d, const struct vp_predict_opts *o,
		   struct vp_predict_loo *l);
void vp_predict_loo_release(struct vp_predict_loo *l);

#endif
