/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * regression.c - the regression-based MET of Poplavko et al. 2016 (see
 * regression.h), over GSL: multifit least squares with the parameters'
 * covariance, and the t, F, chi^2 and normal quantiles.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "regression.h"

#ifdef HAVE_GSL
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#endif

void vp_regress_opts_default(struct vp_regress_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->alpha = 0.05;
	o->alpha_sw = 0.05;
	o->cook = VP_REGRESS_COOK_DEFAULT;
	o->train = 1.0;
	o->seed = 1;
}

void vp_regress_model_free(struct vp_regress_model *m)
{
	if (!m)
		return;
	free(m->col);
	free(m->terms);
	free(m->bad);
	free(m->bad_cook);
	free(m);
}

#ifndef HAVE_GSL

int vp_regress_available(void)
{
	return 0;
}

int vp_regress_fit(const double *y, const double *x, size_t n, size_t k,
		   const struct vp_regress_opts *opts, struct vp_regress_model **ret)
{
	*ret = NULL;
	return -ENOSYS;
}

unsigned vp_regress_claim(const struct vp_regress_model *m)
{
	(void)m; /* no model is fitted without GSL */
	return VP_CLAIM_R2 | VP_CLAIM_RESIDUALS | VP_CLAIM_UNTESTED;
}

#else

int vp_regress_available(void)
{
	return 1;
}

/* The data and the rows and columns a fit uses. */
struct fitter {
	const double *y, *x;
	size_t n, k;
	size_t *rows; /* the training rows */
	size_t nrows;
};

/* One least-squares fit of the constant and columns @cols[0..ncols). */
struct fit {
	size_t p;
	gsl_vector *b;
	gsl_matrix *cov;
	double rss;
};

static void fit_release(struct fit *f)
{
	gsl_vector_free(f->b);
	gsl_matrix_free(f->cov);
	memset(f, 0, sizeof(*f));
}

static double xval(const struct fitter *F, size_t row, size_t col)
{
	return col == SIZE_MAX ? 1.0 : F->x[row * F->k + col];
}

static int fit_cols(const struct fitter *F, const size_t *cols, size_t ncols, struct fit *ret)
{
	size_t p = ncols + 1, i, j;
	gsl_matrix *X = gsl_matrix_alloc(F->nrows, p);
	gsl_vector *yv = gsl_vector_alloc(F->nrows);
	gsl_multifit_linear_workspace *w = gsl_multifit_linear_alloc(F->nrows, p);
	int err = -ENOMEM;

	memset(ret, 0, sizeof(*ret));
	ret->b = gsl_vector_alloc(p);
	ret->cov = gsl_matrix_alloc(p, p);
	if (!X || !yv || !w || !ret->b || !ret->cov)
		goto out;
	for (i = 0; i < F->nrows; i++) {
		gsl_vector_set(yv, i, F->y[F->rows[i]]);
		gsl_matrix_set(X, i, 0, 1.0);
		for (j = 0; j < ncols; j++)
			gsl_matrix_set(X, i, j + 1, xval(F, F->rows[i], cols[j]));
	}
	ret->p = p;
	err = gsl_multifit_linear(X, yv, ret->b, ret->cov, &ret->rss, w) ? -EDOM : 0;
out:
	if (err)
		fit_release(ret);
	gsl_multifit_linear_free(w);
	gsl_vector_free(yv);
	gsl_matrix_free(X);
	return err;
}

/* The p-value of the partial F of one column: RSS @small without it,
 * @big with it, @df the residual degrees of freedom with it. */
static double partial_f_p(double small, double big, double df)
{
	double f;

	if (df <= 0)
		return 1.0;
	if (big <= 0)
		return small > 0 ? 0.0 : 1.0;
	f = (small - big) / (big / df);
	return f <= 0 ? 1.0 : gsl_cdf_fdist_Q(f, 1.0, df);
}

/*
 * Mark constant and redundant columns of the training rows: a column is
 * kept when it adds to the rank of the constant and the columns kept
 * before it (Gram-Schmidt, twice, on the columns); the structural
 * constraints of Poplavko et al. 2016, §4.1, make columns exact sums of
 * others, which would leave the least-squares fit singular.
 */
static int mark_redundant(const struct fitter *F, enum vp_regress_col *col)
{
	size_t N = F->nrows, nb = 0, i, j, b, pass;
	double *basis = malloc((F->k + 1) * N * sizeof(*basis));
	double *v = malloc(N * sizeof(*v));
	int err = -ENOMEM;

	if (!basis || !v)
		goto out;
	for (i = 0; i < N; i++)
		basis[i] = 1.0 / sqrt((double)N);
	nb = 1;
	for (j = 0; j < F->k; j++) {
		double norm0 = 0, norm = 0, first = xval(F, F->rows[0], j);
		int constant = 1;

		for (i = 0; i < N; i++) {
			v[i] = xval(F, F->rows[i], j);
			norm0 += v[i] * v[i];
			constant &= v[i] == first;
		}
		if (constant) {
			col[j] = VP_COL_CONSTANT;
			continue;
		}
		for (pass = 0; pass < 2; pass++)
			for (b = 0; b < nb; b++) {
				const double *q = basis + b * N;
				double d = 0;

				for (i = 0; i < N; i++)
					d += q[i] * v[i];
				for (i = 0; i < N; i++)
					v[i] -= d * q[i];
			}
		for (i = 0; i < N; i++)
			norm += v[i] * v[i];
		if (norm <= 1e-18 * norm0) {
			col[j] = VP_COL_REDUNDANT;
			continue;
		}
		col[j] = VP_COL_NOT_ENTERED;
		for (i = 0; i < N; i++)
			basis[nb * N + i] = v[i] / sqrt(norm);
		nb++;
	}
	err = 0;
out:
	free(basis);
	free(v);
	return err;
}

/*
 * Stepwise selection (Poplavko et al. 2016, §5.2, after Draper and Smith):
 * add the candidate of the smallest partial-F p-value below alpha_sw, then
 * remove the predictor of the largest above it, until neither moves; add
 * only while N > 5p holds for the larger model.  The chosen columns, in
 * the order they entered, go to @sel (*@nsel of them).
 */
static int stepwise(const struct fitter *F, enum vp_regress_col *col, double alpha_sw,
		    size_t *sel, size_t *nsel)
{
	size_t ns = 0, step, maxsteps = 4 * F->k + 8, j, i;
	size_t *trial = malloc((F->k + 1) * sizeof(*trial));
	struct fit cur = { 0 }, f = { 0 };
	int err = -ENOMEM;

	if (!trial)
		goto out;
	err = fit_cols(F, sel, 0, &cur);
	if (err)
		goto out;
	for (step = 0; step < maxsteps; step++) {
		size_t best = SIZE_MAX, worst = SIZE_MAX;
		double best_p = alpha_sw, worst_p = alpha_sw;
		int moved = 0;

		for (j = 0; j < F->k; j++) {
			double pv;

			if (col[j] != VP_COL_NOT_ENTERED && col[j] != VP_COL_LIMIT)
				continue;
			memcpy(trial, sel, ns * sizeof(*sel));
			trial[ns] = j;
			err = fit_cols(F, trial, ns + 1, &f);
			if (err)
				goto out;
			pv = partial_f_p(cur.rss, f.rss, (double)F->nrows - (ns + 2));
			fit_release(&f);
			if (pv < best_p) {
				best_p = pv;
				best = j;
			}
		}
		if (best != SIZE_MAX) {
			if (F->nrows > 5 * (ns + 2)) {
				sel[ns++] = best;
				col[best] = VP_COL_USED;
				fit_release(&cur);
				err = fit_cols(F, sel, ns, &cur);
				if (err)
					goto out;
				moved = 1;
			} else {
				col[best] = VP_COL_LIMIT;
			}
		}
		for (i = 0; i < ns; i++) {
			size_t m = 0, t;
			double pv;

			for (t = 0; t < ns; t++)
				if (t != i)
					trial[m++] = sel[t];
			err = fit_cols(F, trial, m, &f);
			if (err)
				goto out;
			pv = partial_f_p(f.rss, cur.rss, (double)F->nrows - (ns + 1));
			fit_release(&f);
			if (pv > worst_p) {
				worst_p = pv;
				worst = i;
			}
		}
		if (worst != SIZE_MAX) {
			col[sel[worst]] = VP_COL_NOT_ENTERED;
			memmove(sel + worst, sel + worst + 1, (ns - worst - 1) * sizeof(*sel));
			ns--;
			fit_release(&cur);
			err = fit_cols(F, sel, ns, &cur);
			if (err)
				goto out;
			moved = 1;
		}
		if (!moved)
			break;
	}
	err = 0;
out:
	*nsel = ns;
	fit_release(&cur);
	fit_release(&f);
	free(trial);
	return err;
}

/* Redundancy, then stepwise, on F's rows; the fit of the chosen model.
 * -EDOM with 5 rows or fewer: nothing to select from. */
static int select_and_fit(const struct fitter *F, enum vp_regress_col *col, double alpha_sw,
			  size_t *sel, size_t *nsel, struct fit *ret)
{
	int err = F->nrows <= 5 ? -EDOM : mark_redundant(F, col);

	if (!err)
		err = stepwise(F, col, alpha_sw, sel, nsel);
	if (!err)
		err = fit_cols(F, sel, *nsel, ret);
	return err;
}

static double fitted(const struct fitter *F, const struct fit *f, const size_t *sel, size_t row,
		     const double *coef)
{
	double s = coef ? coef[0] : gsl_vector_get(f->b, 0);
	size_t t;

	for (t = 1; t < f->p; t++)
		s += (coef ? coef[t] : gsl_vector_get(f->b, t)) * xval(F, row, sel[t - 1]);
	return s;
}

/*
 * Cook's distance of every training row (Poplavko et al. 2016, §3.1):
 * D = e^2 / (p s^2) * h / (1 - h)^2, the leverage h = x' (X'X)^-1 x read
 * from the covariance s^2 (X'X)^-1.  Rows above @theta are appended to
 * @bad (sized for every row by the caller), the training set keeps the
 * others.
 */
static int set_bad_aside(struct fitter *F, const struct fit *f, const size_t *sel, double theta,
			 struct vp_regress_model *m)
{
	size_t N = F->nrows, p = f->p, i, a, b, kept = 0;
	double s2 = f->rss / (double)(N - p);
	double *xr = malloc(p * sizeof(*xr));

	if (!xr)
		return -ENOMEM;
	for (i = 0; i < N; i++) {
		size_t row = F->rows[i];
		double h = 0, e = F->y[row] - fitted(F, f, sel, row, NULL), d;

		xr[0] = 1.0;
		for (a = 1; a < p; a++)
			xr[a] = xval(F, row, sel[a - 1]);
		for (a = 0; a < p; a++)
			for (b = 0; b < p; b++)
				h += xr[a] * gsl_matrix_get(f->cov, a, b) * xr[b];
		h = s2 > 0 ? h / s2 : 0;
		d = s2 > 0 && h < 1 ? e * e / (p * s2) * h / ((1 - h) * (1 - h)) : 0;
		if (theta > 0 && d > theta) {
			m->bad[m->nbad] = row;
			m->bad_cook[m->nbad++] = d;
		} else {
			F->rows[kept++] = row;
		}
	}
	F->nrows = kept;
	free(xr);
	return 0;
}

/* Cook's distance passes at most: each is a stepwise fit again */
enum { COOK_PASSES = 8 };

/* The bad samples, largest distance first. */
static void sort_bad(struct vp_regress_model *m)
{
	size_t i, a;

	for (i = 1; i < m->nbad; i++)
		for (a = i; a > 0 && m->bad_cook[a] > m->bad_cook[a - 1]; a--) {
			double td = m->bad_cook[a];
			size_t tr = m->bad[a];

			m->bad_cook[a] = m->bad_cook[a - 1];
			m->bad[a] = m->bad[a - 1];
			m->bad_cook[a - 1] = td;
			m->bad[a - 1] = tr;
		}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* KS distance of the standardised residuals from N(0, 1); Lilliefors'
 * asymptotic 5 % critical value 0.886 / sqrt(N) (mean and variance are
 * estimated, so Kolmogorov's own table would be too lenient). */
static int residual_ks(const struct fitter *F, const struct fit *f, const size_t *sel,
		       struct vp_regress_model *m)
{
	size_t N = F->nrows, i;
	double *r = malloc(N * sizeof(*r)), s = m->sigma, d = 0;

	if (!r)
		return -ENOMEM;
	for (i = 0; i < N; i++)
		r[i] = F->y[F->rows[i]] - fitted(F, f, sel, F->rows[i], NULL);
	qsort(r, N, sizeof(*r), cmp_double);
	for (i = 0; i < N; i++) {
		double c = s > 0 ? gsl_cdf_ugaussian_P(r[i] / s) : (r[i] >= 0);
		double lo = c - (double)i / N, hi = (double)(i + 1) / N - c;

		d = fmax(d, fmax(lo, hi));
	}
	m->ks_d = d;
	m->ks_crit = 0.886 / sqrt((double)N);
	free(r);
	return 0;
}

/* The terms, eps+, the MET and its probability (Eq. 3-5, §3.1). */
static int fill_terms(const struct fitter *F, const struct fit *f, const size_t *sel,
		      const struct vp_regress_opts *o, struct vp_regress_model *m)
{
	size_t N = F->nrows, p = f->p, t, i;
	double df = (double)(N - p), tq = gsl_cdf_tdist_Pinv(1 - o->alpha / 2, df);
	double mean = 0, tss = 0;

	m->terms = calloc(p, sizeof(*m->terms));
	if (!m->terms)
		return -ENOMEM;
	m->nterms = p;
	for (t = 0; t < p; t++) {
		struct vp_regress_term *T = &m->terms[t];
		double tv;

		T->col = t ? sel[t - 1] : SIZE_MAX;
		T->b = gsl_vector_get(f->b, t);
		T->se = sqrt(fmax(gsl_matrix_get(f->cov, t, t), 0));
		T->lo = T->b - tq * T->se;
		T->hi = T->b + tq * T->se;
		tv = T->se > 0 ? fabs(T->b) / T->se : INFINITY;
		T->p_value = isinf(tv) ? 0 : 2 * gsl_cdf_tdist_Q(tv, df);
		T->xmin = T->xmax = 1.0;
		if (t) {
			T->xmin = INFINITY;
			T->xmax = -INFINITY;
			for (i = 0; i < F->n; i++) {
				T->xmin = fmin(T->xmin, xval(F, i, T->col));
				T->xmax = fmax(T->xmax, xval(F, i, T->col));
			}
			if (o->xmax && !isnan(o->xmax[T->col]))
				T->xmax = o->xmax[T->col];
		}
		T->bx = T->hi > 0 ? T->hi * T->xmax : T->hi * T->xmin;
	}
	for (i = 0; i < N; i++)
		mean += (F->y[F->rows[i]] - mean) / (double)(i + 1);
	for (i = 0; i < N; i++)
		tss += (F->y[F->rows[i]] - mean) * (F->y[F->rows[i]] - mean);
	m->rss = f->rss;
	/* R^2 of a fit with a constant is in [0, 1]: clamp the rounding */
	m->r2 = tss > 0 ? fmax(0, 1 - f->rss / tss) : (f->rss > 0 ? 0 : 1);
	m->sigma = sqrt(f->rss / df);
	m->sigma_plus = sqrt(f->rss / gsl_cdf_chisq_Pinv(o->alpha / 2, df));
	m->eps_plus = m->sigma_plus * gsl_cdf_ugaussian_Pinv(1 - o->alpha / 2);
	m->met = m->eps_plus;
	for (t = 0; t < p; t++)
		m->met += m->terms[t].bx;
	m->probability = 1 - (double)(p + 2) * o->alpha / 2;
	return 0;
}

unsigned vp_regress_claim(const struct vp_regress_model *m)
{
	unsigned why = 0;

	/* (a model of the constant alone explains nothing by definition:
	 * its claim rests on the residuals) */
	if (m->nterms > 1 && !(m->r2 >= VP_CLAIM_MIN_R2))
		why |= VP_CLAIM_R2;
	if (!(m->ks_d < m->ks_crit))
		why |= VP_CLAIM_RESIDUALS;
	if (!m->ntest) {
		why |= VP_CLAIM_UNTESTED;
	} else if (m->test_met_under) {
		/* P(at least that many above | each one is with 1 - prob.) */
		double q = m->probability < 1 ? 1 - m->probability : 0;
		double tail = gsl_cdf_binomial_Q((unsigned)m->test_met_under - 1, q,
						 (unsigned)m->ntest);

		if (tail < 0.05)
			why |= VP_CLAIM_COVERAGE;
	}
	return why;
}

/*
 * The @p quantile of the @n durations @y: the smallest one that at least
 * ceil(p n) of them do not exceed (an observed duration, no model).  NaN
 * when out of memory.
 */
static double empirical_quantile(const double *y, size_t n, double p)
{
	double *v = malloc((n ? n : 1) * sizeof(*v)), q;
	size_t k;

	if (!v)
		return NAN;
	memcpy(v, y, n * sizeof(*v));
	qsort(v, n, sizeof(*v), cmp_double);
	k = p <= 0 ? 0 : (size_t)ceil(p * (double)n);
	q = n ? v[k ? (k > n ? n : k) - 1 : 0] : 0;
	free(v);
	return q;
}

/* Yhat+(n) of the maximal model (Eq. 4). */
static double yhat_plus(const struct fitter *F, const struct vp_regress_model *m, size_t row)
{
	double s = m->eps_plus;
	size_t t;

	for (t = 0; t < m->nterms; t++)
		s += m->terms[t].hi * xval(F, row, m->terms[t].col);
	return s;
}

static int check_opts(const struct vp_regress_opts *o)
{
	if (!(o->alpha > 0 && o->alpha < 1) || !(o->alpha_sw > 0 && o->alpha_sw < 1))
		return -EINVAL;
	if (!(o->train > 0 && o->train <= 1) || !(o->cook >= 0))
		return -EINVAL;
	return 0;
}

int vp_regress_fit(const double *y, const double *x, size_t n, size_t k,
		   const struct vp_regress_opts *opts, struct vp_regress_model **ret)
{
	struct vp_regress_opts defaults;
	struct fitter F = { .y = y, .x = x, .n = n, .k = k };
	struct vp_regress_model *m = NULL;
	struct fit f = { 0 };
	size_t *sel = NULL, nsel = 0, *order = NULL, i, pass;
	char *is_train = NULL;
	gsl_rng *rng = NULL;
	int err = -ENOMEM;

	*ret = NULL;
	if (!opts) {
		vp_regress_opts_default(&defaults);
		opts = &defaults;
	}
	if (check_opts(opts))
		return -EINVAL;
	/*
	 * Too few rows for even the constant model: refuse before the split,
	 * as select_and_fit would after it (gsl_ran_shuffle takes n - 1
	 * without a check: with no row it wraps and writes below the array).
	 */
	if (n <= 5 || llround(opts->train * (double)n) <= 5)
		return -EDOM;
	/* core never aborts: GSL's default handler would */
	gsl_set_error_handler_off();
	m = calloc(1, sizeof(*m));
	order = malloc((n ? n : 1) * sizeof(*order));
	sel = malloc((k + 1) * sizeof(*sel));
	is_train = calloc(n ? n : 1, 1);
	rng = gsl_rng_alloc(gsl_rng_mt19937);
	if (!m || !order || !sel || !is_train || !rng)
		goto out;
	m->ncols = k;
	m->col = calloc(k ? k : 1, sizeof(*m->col));
	if (!m->col)
		goto out;
	m->nrows = n;
	m->alpha = opts->alpha;
	m->alpha_sw = opts->alpha_sw;
	m->cook = opts->cook;
	for (i = 0; i < n; i++)
		order[i] = i;
	F.nrows = n;
	if (opts->train < 1) {
		gsl_rng_set(rng, (unsigned long)opts->seed);
		gsl_ran_shuffle(rng, order, n, sizeof(*order));
		F.nrows = (size_t)llround(opts->train * (double)n);
	}
	F.rows = order;
	err = select_and_fit(&F, m->col, opts->alpha_sw, sel, &nsel, &f);
	if (err)
		goto out;
	if (opts->cook > 0 && F.nrows > f.p) {
		err = -ENOMEM;
		m->bad = malloc(F.nrows * sizeof(*m->bad));
		m->bad_cook = malloc(F.nrows * sizeof(*m->bad_cook));
		if (!m->bad || !m->bad_cook)
			goto out;
		/*
		 * Again on the refitted model until no row is above theta:
		 * a few bad samples alike mask each other (each one's
		 * deletion changes little while the others stay), and
		 * once the first are gone the rest stand out.
		 */
		for (pass = 0; pass < COOK_PASSES && F.nrows > f.p; pass++) {
			size_t before = m->nbad;

			err = set_bad_aside(&F, &f, sel, opts->cook, m);
			if (err)
				goto out;
			if (m->nbad == before)
				break;
			fit_release(&f);
			err = select_and_fit(&F, m->col, opts->alpha_sw, sel, &nsel, &f);
			if (err)
				goto out;
		}
		sort_bad(m);
	}
	err = fill_terms(&F, &f, sel, opts, m);
	if (!err)
		err = residual_ks(&F, &f, sel, m);
	if (err)
		goto out;
	m->ntrain = F.nrows;
	m->ntest = n - F.nrows;
	for (i = 0; i < F.nrows; i++)
		is_train[F.rows[i]] = 1;
	m->ymax = -INFINITY;
	m->yhat_plus_max = -INFINITY;
	for (i = 0; i < n; i++) {
		double yp = yhat_plus(&F, m, i);

		m->ymax = fmax(m->ymax, y[i]);
		m->yhat_plus_max = fmax(m->yhat_plus_max, yp);
		if (is_train[i])
			continue;
		if (yp >= y[i])
			m->test_over++;
		else
			m->test_under++;
		m->test_met_under += y[i] > m->met;
	}
	m->unclaimed = vp_regress_claim(m);
	m->empirical = empirical_quantile(y, n, m->probability);
	if (isnan(m->empirical)) {
		err = -ENOMEM;
		goto out;
	}
	*ret = m;
	m = NULL;
	err = 0;
out:
	fit_release(&f);
	gsl_rng_free(rng);
	free(is_train);
	free(sel);
	free(order);
	vp_regress_model_free(m);
	return err;
}

#endif
