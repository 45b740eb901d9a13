/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * regression.h - what a task's time depends on, and a probabilistic bound
 * on it: the regression-based maximal execution time (MET) of Poplavko et
 * al. 2016.  Rows are (Y, X_1..X_k): a duration and its candidate
 * predictors (counts).  Constant and exactly redundant columns go first
 * (§4.1, the flow-conservation elimination, done here by rank), stepwise
 * selection by partial F at alpha_sw under the N > 5p rule (§5, §5.2),
 * Cook's distance above theta sets bad samples aside (§3.1; again on the
 * refitted model until none is left, against masking), an OLS fit
 * with parameter confidence bounds b-, b+ (Eq. 3), eps+ from the chi^2(N-p)
 * quantile and the maximal model (Eq. 4), the pragmatic MET with X-/X+
 * (§3.1) and its probability 1 - (p+2)alpha/2 (Eq. 5), and a random
 * train/test split counting the test rows over- and under-estimated (§5).
 * The numerics are GSL's; without GSL every entry returns -ENOSYS.
 */
#ifndef VARPERF_CORE_REGRESSION_H
#define VARPERF_CORE_REGRESSION_H

#include <stddef.h>
#include <stdint.h>

/* Cook's distance above which a row is a bad sample: the usual D < 1
 * (Poplavko et al. 2016, §3.1; their experiment tuned it to 10). */
#define VP_REGRESS_COOK_DEFAULT 1.0

struct vp_regress_opts {
	double alpha;	 /* b-/b+, eps+ and the MET (default 0.05) */
	double alpha_sw; /* stepwise: enter and remove at this p-value (0.05) */
	double cook;	 /* theta (VP_REGRESS_COOK_DEFAULT); 0: keep every row */
	double train;	 /* share of the rows in the training set, (0, 1] */
	uint64_t seed;	 /* of the split */
	/* per column, X+ given by the user, or NaN: the data's (NULL: all) */
	const double *xmax;
};

void vp_regress_opts_default(struct vp_regress_opts *o);

/* What became of a candidate column. */
enum vp_regress_col {
	VP_COL_USED,	    /* a predictor of the model */
	VP_COL_CONSTANT,    /* the same in every training row */
	VP_COL_REDUNDANT,   /* a linear combination of the columns before it */
	VP_COL_NOT_ENTERED, /* not significant at alpha_sw */
	VP_COL_LIMIT,	    /* significant, but N > 5p allowed no more */
};

/* One term of the model: term 0 is the constant (col SIZE_MAX, X = 1). */
struct vp_regress_term {
	size_t col;
	double b, se;	      /* the least-squares estimate, its standard error */
	double lo, hi;	      /* b-, b+: the 1 - alpha confidence interval */
	double xmin, xmax;    /* X-, X+ */
	double bx;	      /* (bX)+: b+ X+ if b+ > 0, else b+ X- */
	double p_value;	      /* of its partial F in the final model */
};

struct vp_regress_model {
	size_t nrows, ntrain, ntest; /* ntest includes the bad samples */
	size_t ncols;
	enum vp_regress_col *col; /* per candidate column */
	size_t nterms;		  /* p, with the constant */
	struct vp_regress_term *terms;
	double rss, r2, sigma;	  /* residual sum of squares, R^2, its s */
	double sigma_plus, eps_plus; /* the pessimistic sigma and eps+ */
	double met, probability;     /* pragmatic MET, 1 - (p+2)alpha/2 */
	double yhat_plus_max;	     /* the largest Yhat+(n) of the rows */
	double ymax;		     /* the longest duration seen */
	/* residual normality: Kolmogorov-Smirnov D of the standardised
	 * residuals against N(0,1), and Lilliefors' 5 % critical value */
	double ks_d, ks_crit;
	/* bad samples: row index and Cook's distance, largest first */
	size_t *bad;
	double *bad_cook;
	size_t nbad;
	/* test rows (held out and bad) with Yhat+(n) >= Y(n), and below */
	size_t test_over, test_under;
	size_t test_met_under; /* test rows longer than the MET */
	double alpha, alpha_sw, cook;
	/* VP_CLAIM_* flags: why the probability is not claimed (0: it is) */
	unsigned unclaimed;
	/* instead: the probability's quantile of every row's duration, as
	 * measured (the smallest duration that many rows did not exceed) */
	double empirical;
};

/*
 * The probability of the MET holds under the model's assumptions (a
 * linear model, normal residuals); a bound states it only when the model
 * passes its own checks.  Flags of what failed:
 */
enum {
	VP_CLAIM_R2 = 1 << 0,	     /* R^2 below VP_CLAIM_MIN_R2 (a model
				      * with a predictor at least) */
	VP_CLAIM_RESIDUALS = 1 << 1, /* residuals not normal (KS, 5 %) */
	VP_CLAIM_COVERAGE = 1 << 2,  /* more test rows above the MET than
				      * 1 - probability allows (one-sided
				      * binomial test at 5 %) */
	VP_CLAIM_UNTESTED = 1 << 3,  /* no test rows (train share 1) */
};
#define VP_CLAIM_MIN_R2 0.5

/* The VP_CLAIM_* flags of @m's fields (nterms, r2, ks_d, ks_crit,
 * ntest, test_met_under, probability). */
unsigned vp_regress_claim(const struct vp_regress_model *m);

/**
 * vp_regress_fit - fit the model of @n rows: y[i] and x[i * k + j].
 * Returns 0 with *@ret (free with vp_regress_model_free()), -EINVAL for
 * options out of range, -EDOM when the training set has too few rows for
 * even the constant model (N > 5 needed), -ENOMEM, or -ENOSYS without GSL.
 */
int vp_regress_fit(const double *y, const double *x, size_t n, size_t k,
		   const struct vp_regress_opts *opts, struct vp_regress_model **ret);
void vp_regress_model_free(struct vp_regress_model *m);

/* Whether this build can fit (GSL). */
int vp_regress_available(void);

#endif
