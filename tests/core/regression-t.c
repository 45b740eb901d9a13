/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * regression-t.c - tests for core/regression.c on synthetic rows whose
 * model is known by construction (GSL's generator, seeded): coefficients
 * recovered within their intervals, a redundant and a constant column
 * removed, an irrelevant one left out, planted outliers set aside by
 * Cook's distance, the maximal model covering >= 95 % of held-out rows,
 * the paper's probability, the N > 5p rule, and bad input.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/regression.h"
#include "tests/tap/basic.h"

#ifndef HAVE_GSL
int main(void)
{
	skip_all("built without GSL (--with-gsl)");
}
#else
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

enum { N = 2000, K = 5, NBAD = 5 };
/* Y = B0 + B1 X1 + B2 X2 + N(0, SIGMA); X3 = X1 + X2, X4 = 7, X5 noise */
static const double B0 = 1000, B1 = 61, B2 = 250, SIGMA = 30;

static double y[N], x[N * K];

static void generate(gsl_rng *r, size_t n, int outliers)
{
	size_t i;

	for (i = 0; i < n; i++) {
		double *xr = x + i * K;

		xr[0] = gsl_ran_poisson(r, 20);
		xr[1] = gsl_ran_poisson(r, 5);
		xr[2] = xr[0] + xr[1];
		xr[3] = 7;
		xr[4] = gsl_ran_poisson(r, 10);
		y[i] = B0 + B1 * xr[0] + B2 * xr[1] + gsl_ran_gaussian(r, SIGMA);
	}
	/* bad samples: far out in X1 and far off the line */
	for (i = 0; outliers && i < NBAD; i++) {
		x[i * 100 * K] = 60;
		x[i * 100 * K + 2] = 60 + x[i * 100 * K + 1];
		y[i * 100] = B0 + B1 * 60 + B2 * x[i * 100 * K + 1] + 5000;
	}
}

static const struct vp_regress_term *term_of(const struct vp_regress_model *m, size_t col)
{
	size_t t;

	for (t = 0; t < m->nterms; t++)
		if (m->terms[t].col == col)
			return &m->terms[t];
	return NULL;
}

static void check_within(const struct vp_regress_model *m, size_t col, double truth,
			 const char *what)
{
	const struct vp_regress_term *t = term_of(m, col);

	ok(t && t->lo <= truth && truth <= t->hi, "%s: %g in [%g, %g]", what, truth,
	   t ? t->lo : NAN, t ? t->hi : NAN);
}

static void test_recovery(gsl_rng *r)
{
	struct vp_regress_opts o;
	struct vp_regress_model *m;
	size_t i, nt;

	generate(r, N, 0);
	vp_regress_opts_default(&o);
	is_int(0, vp_regress_fit(y, x, N, K, &o, &m), "fit on every row");
	is_uint(3, m->nterms, "p = 3: constant, X1, X2");
	check_within(m, SIZE_MAX, B0, "b0");
	check_within(m, 0, B1, "b1");
	check_within(m, 1, B2, "b2");
	is_int(VP_COL_REDUNDANT, m->col[2], "X3 = X1 + X2 is redundant");
	is_int(VP_COL_CONSTANT, m->col[3], "X4 is constant");
	is_int(VP_COL_NOT_ENTERED, m->col[4], "X5 is not significant");
	is_double(1 - 5 * 0.05 / 2, m->probability, 1e-12, "probability 1 - (p+2)alpha/2");
	ok(m->r2 > 0.95, "R^2 %g", m->r2);
	is_rel(SIGMA, m->sigma, 0.1, "s estimates sigma");
	ok(m->sigma_plus > m->sigma, "sigma+ %g > s %g", m->sigma_plus, m->sigma);
	is_double(1.959963984540054 * m->sigma_plus, m->eps_plus, 1e-6,
		  "eps+ = sigma+ Phi^-1(1 - alpha/2)");
	ok(m->ks_d < m->ks_crit, "Gaussian residuals pass KS (%g < %g)", m->ks_d, m->ks_crit);
	/* the pragmatic MET by hand: eps+ + sum (bX)+ */
	{
		double met = m->eps_plus, ymax = 0;

		for (i = 0; i < m->nterms; i++) {
			const struct vp_regress_term *t = &m->terms[i];

			met += t->hi > 0 ? t->hi * t->xmax : t->hi * t->xmin;
		}
		is_double(met, m->met, 1e-9 * met, "MET = eps+ + sum (bX)+");
		for (i = 0; i < N; i++)
			ymax = fmax(ymax, y[i]);
		ok(m->met > ymax, "MET %g above the longest %g", m->met, ymax);
	}
	is_uint(0, m->nbad, "no bad samples in clean data");
	is_uint(0, m->ntest, "no test set without a split");
	vp_regress_model_free(m);

	/* the split: the maximal model over held-out rows */
	o.train = 0.5;
	o.seed = 7;
	is_int(0, vp_regress_fit(y, x, N, K, &o, &m), "fit on half");
	is_uint(N / 2, m->ntrain, "half the rows train");
	nt = m->test_over + m->test_under;
	is_uint(N / 2, nt, "the other half test");
	ok(m->test_over >= 0.95 * nt, "Yhat+ covers %zu of %zu held-out rows", m->test_over, nt);
	is_uint(0, m->test_met_under, "no held-out row above the MET");
	vp_regress_model_free(m);
}

static int cmp_dbl(const void *a, const void *b)
{
	double u = *(const double *)a, v = *(const double *)b;

	return u < v ? -1 : u > v;
}

/*
 * The probability is claimed only where the model passes its checks: the
 * clean model above does (and on half its rows); durations that do not
 * depend on the counts (exponential noise) fail R^2 and normality, and get
 * the measured quantile; then each check alone, on hand-built models.
 */
static void test_claim(gsl_rng *r)
{
	struct vp_regress_opts o;
	struct vp_regress_model *m, h;
	double *sorted = malloc(N * sizeof(*sorted));
	size_t i, k;

	generate(r, N, 0);
	vp_regress_opts_default(&o);
	o.train = 0.5;
	o.seed = 7;
	is_int(0, vp_regress_fit(y, x, N, K, &o, &m), "clean model: fit on half");
	is_int(0, (int)m->unclaimed, "clean model: its probability is claimed");
	vp_regress_model_free(m);
	for (i = 0; i < N; i++)
		y[i] = 1000 + gsl_ran_exponential(r, 500);
	is_int(0, vp_regress_fit(y, x, N, K, &o, &m), "noise: fit on half");
	/* (X5's noise may enter by chance at 5 %: R^2 is checked with a
	 * predictor only) */
	ok(m->unclaimed & VP_CLAIM_RESIDUALS, "noise: exponential residuals fail KS (%g >= %g)",
	   m->ks_d, m->ks_crit);
	is_int(m->nterms > 1 ? VP_CLAIM_R2 : 0, (int)(m->unclaimed & VP_CLAIM_R2),
	       "noise: R^2 %g with %zu terms", m->r2, m->nterms);
	memcpy(sorted, y, N * sizeof(*sorted));
	qsort(sorted, N, sizeof(*sorted), cmp_dbl);
	k = (size_t)ceil(m->probability * N);
	is_double(sorted[k - 1], m->empirical, 0,
		  "noise: the measured quantile is the %zu-th shortest of %d", k, N);
	vp_regress_model_free(m);
	free(sorted);

	/* each check alone */
	memset(&h, 0, sizeof(h));
	h.nterms = 2;
	h.r2 = 0.9;
	h.ks_d = 0.01;
	h.ks_crit = 0.05;
	h.ntest = 1000;
	h.probability = 0.9;
	h.test_met_under = 100;
	is_int(0, (int)vp_regress_claim(&h), "100 of 1000 above a 0.9 MET: as claimed");
	/* P(X >= 120 | Bin(1000, 0.1)) = 0.022 */
	h.test_met_under = 120;
	is_int(VP_CLAIM_COVERAGE, (int)vp_regress_claim(&h), "120 of 1000: too many");
	h.test_met_under = 115; /* P = 0.065 */
	is_int(0, (int)vp_regress_claim(&h), "115 of 1000: within chance at 5 %%");
	h.r2 = 0.49;
	is_int(VP_CLAIM_R2, (int)vp_regress_claim(&h), "R^2 0.49");
	h.nterms = 1;
	is_int(0, (int)vp_regress_claim(&h), "... but no predictor: R^2 is not checked");
	h.ks_d = 0.05;
	is_int(VP_CLAIM_RESIDUALS, (int)vp_regress_claim(&h), "KS D at its critical value");
	h.ks_d = 0.01;
	h.ntest = 0;
	h.test_met_under = 0;
	is_int(VP_CLAIM_UNTESTED, (int)vp_regress_claim(&h), "no test rows: untested");
}

static void test_outliers(gsl_rng *r)
{
	struct vp_regress_model *m;
	size_t i, found = 0, j;

	generate(r, N, 1);
	is_int(0, vp_regress_fit(y, x, N, K, NULL, &m), "fit with planted outliers");
	for (i = 0; i < NBAD; i++)
		for (j = 0; j < m->nbad; j++)
			found += m->bad[j] == i * 100;
	is_uint(NBAD, found, "the %d planted outliers are set aside", NBAD);
	ok(m->nbad <= NBAD + 2, "and few others (%zu in all)", m->nbad);
	for (j = 1; j < m->nbad; j++)
		if (m->bad_cook[j] > m->bad_cook[j - 1])
			break;
	ok(j >= m->nbad && m->nbad && m->bad_cook[0] > VP_REGRESS_COOK_DEFAULT,
	   "largest distance first, above theta");
	is_uint(N - m->nbad, m->ntrain, "training set without them");
	check_within(m, 0, B1, "refined b1");
	check_within(m, 1, B2, "refined b2");
	vp_regress_model_free(m);
}

/*
 * Masking: bad samples alike hold the fit to themselves, so that each
 * one's deletion alone changes little and a single pass of Cook's
 * distance finds only some of them (here 2 of 4: checked by building
 * with one pass); the passes on the refitted model find them all.
 */
static void test_masking(gsl_rng *r)
{
	enum { NM = 200, NCLUSTER = 4 };
	struct vp_regress_model *m;
	size_t i, found = 0, j;

	generate(r, NM, 0);
	for (i = 0; i < NCLUSTER; i++) {
		double *xr = x + (NM - 1 - i) * K;

		xr[0] = 80;
		xr[2] = 80 + xr[1];
		y[NM - 1 - i] = B0 + B1 * 80 + B2 * xr[1] + 1500 + 500 * (double)i;
	}
	is_int(0, vp_regress_fit(y, x, NM, K, NULL, &m), "fit with a cluster of outliers");
	for (i = 0; i < NCLUSTER; i++)
		for (j = 0; j < m->nbad; j++)
			found += m->bad[j] == NM - 1 - i;
	is_uint(NCLUSTER, found, "all %d outliers of the cluster are set aside", NCLUSTER);
	ok(m->nbad <= NCLUSTER + 2, "and few others (%zu in all)", m->nbad);
	for (j = 1; j < m->nbad; j++)
		if (m->bad_cook[j] > m->bad_cook[j - 1])
			break;
	ok(j >= m->nbad, "largest distance first across the passes");
	check_within(m, 0, B1, "refined b1");
	vp_regress_model_free(m);
}

/* N > 5p: 12 rows allow p = 2 at most, whatever is significant */
static void test_five_p(gsl_rng *r)
{
	struct vp_regress_model *m;
	size_t i;

	for (i = 0; i < 12; i++) {
		double *xr = x + i * K;

		xr[0] = gsl_ran_poisson(r, 20);
		xr[1] = gsl_ran_poisson(r, 20);
		xr[2] = gsl_ran_poisson(r, 20);
		xr[3] = gsl_ran_poisson(r, 20);
		xr[4] = gsl_ran_poisson(r, 20);
		y[i] = 100 * xr[0] + 50 * xr[1] + gsl_ran_gaussian(r, 1);
	}
	is_int(0, vp_regress_fit(y, x, 12, K, NULL, &m), "fit of 12 rows");
	is_uint(2, m->nterms, "one predictor only");
	for (i = 0; i < K && m->col[i] != VP_COL_LIMIT; i++)
		;
	ok(i < K, "a significant column is left out by N > 5p");
	vp_regress_model_free(m);
}

static void test_errors(void)
{
	struct vp_regress_opts o;
	struct vp_regress_model *m = (void *)1;

	is_int(-EDOM, vp_regress_fit(y, x, 5, K, NULL, &m), "5 rows are too few");
	ok(m == NULL, "and no model");
	/* a task with no completed call: gsl_ran_shuffle once took n - 1 of
	 * n = 0 and wrote below the array */
	vp_regress_opts_default(&o);
	o.train = 0.5;
	m = (void *)1;
	is_int(-EDOM, vp_regress_fit(y, x, 0, K, &o, &m), "no row, half to train: too few");
	ok(m == NULL, "and no model");
	is_int(-EDOM, vp_regress_fit(y, x, 1, K, &o, &m), "one row, half to train: too few");
	is_int(-EDOM, vp_regress_fit(y, x, 10, K, &o, &m), "10 rows, 5 to train: too few");
	is_int(-EDOM, vp_regress_fit(y, x, 0, 0, NULL, &m), "no row, no predictor: too few");
	vp_regress_opts_default(&o);
	o.alpha = 1.5;
	is_int(-EINVAL, vp_regress_fit(y, x, N, K, &o, &m), "alpha out of range");
	vp_regress_opts_default(&o);
	o.train = 0;
	is_int(-EINVAL, vp_regress_fit(y, x, N, K, &o, &m), "train share 0");
}

int main(void)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);

	plan_lazy();
	if (!r)
		bail("gsl_rng_alloc");
	gsl_rng_set(r, 2016);
	ok(vp_regress_available(), "built with GSL");
	test_recovery(r);
	test_claim(r);
	test_outliers(r);
	test_masking(r);
	test_five_p(r);
	test_errors();
	gsl_rng_free(r);
	return 0;
}
#endif
