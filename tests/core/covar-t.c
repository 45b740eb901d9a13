/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * covar-t.c - tests for core/covar.c against a two-pass reference: the
 * streamed matrix, the Eq. 2 identity (sum of C = variance of the sum),
 * variables appearing late, and merges with a variable map, several
 * variables of one matrix into one of the other's included.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/covar.h"
#include "tests/tap/basic.h"

enum { N = 5000, D = 4 };

static double ys[N][D];

static void ref_cov(size_t lo, size_t hi, double c[D][D])
{
	double m[D] = { 0 };
	size_t i, j, k;

	for (k = lo; k < hi; k++)
		for (i = 0; i < D; i++)
			m[i] += ys[k][i];
	for (i = 0; i < D; i++)
		m[i] /= (double)(hi - lo);
	memset(c, 0, sizeof(double) * D * D);
	for (k = lo; k < hi; k++)
		for (i = 0; i < D; i++)
			for (j = 0; j < D; j++)
				c[i][j] += (ys[k][i] - m[i]) * (ys[k][j] - m[j]);
	for (i = 0; i < D; i++)
		for (j = 0; j < D; j++)
			c[i][j] /= (double)(hi - lo);
}

static double max_rel_err(const struct vp_covar *cv, double c[D][D])
{
	double worst = 0.0, scale = 0.0;
	size_t i, j;

	for (i = 0; i < D; i++)
		scale = fmax(scale, fabs(c[i][i]));
	for (i = 0; i < D; i++)
		for (j = 0; j < D; j++)
			worst = fmax(worst, fabs(vp_covar_get(cv, i, j) - c[i][j]) / scale);
	return worst;
}

int main(void)
{
	struct vp_covar a, b, late;
	double c[D][D], x[N], mx = 0, vx = 0, sum = 0;
	uint64_t lcg = 99;
	size_t i, map[D] = { 0, 2, 3, 1 }, k;

	plan(14);
	/* Y0 self, Y1 and Y2 mutually exclusive (negative covariance), Y3
	 * correlated with Y0; offsets make naive formulas fail. */
	for (k = 0; k < N; k++) {
		lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
		double u = (double)(lcg >> 11) / 9007199254740992.0;
		int branch = (lcg >> 7) & 1;

		ys[k][0] = 1e9 + 1000.0 * u;
		ys[k][1] = branch ? 5000.0 + 10.0 * u : 0.0;
		ys[k][2] = branch ? 0.0 : 5200.0 - 10.0 * u;
		ys[k][3] = 2.0 * ys[k][0] - 2e9 + 7.0;
	}
	ref_cov(0, N, c);

	vp_covar_init(&a);
	ok(vp_covar_resize(&a, D) == 0, "resize to %d variables", D);
	for (k = 0; k < N; k++)
		vp_covar_add(&a, ys[k]);
	ok(max_rel_err(&a, c) < 1e-9, "streamed matrix matches two-pass (rel err %g)",
	   max_rel_err(&a, c));
	ok(vp_covar_get(&a, 1, 2) < 0, "exclusive branches have negative covariance");

	/* Eq. 2: the sum of the matrix is the variance of X = sum Y_i. */
	for (k = 0; k < N; k++) {
		x[k] = ys[k][0] + ys[k][1] + ys[k][2] + ys[k][3];
		mx += x[k];
	}
	mx /= N;
	for (k = 0; k < N; k++)
		vx += (x[k] - mx) * (x[k] - mx);
	vx /= N;
	sum = vp_covar_sum(&a);
	is_rel(vx, sum, 1e-8, "sum of C equals the variance of the total");

	/* A variable that appears late was 0 before: grow mid-stream. */
	vp_covar_init(&late);
	vp_covar_resize(&late, 1);
	for (k = 0; k < N; k++) {
		if (k == N / 2)
			vp_covar_resize(&late, D);
		if (k < N / 2) {
			/* only valid when the other variables are 0 here */
			double y0[D] = { ys[k][0], 0, 0, 0 };

			memcpy(ys[k], y0, sizeof(y0));
		}
		vp_covar_add(&late, ys[k]);
	}
	ref_cov(0, N, c);
	ok(max_rel_err(&late, c) < 1e-9, "late variables: matrix matches two-pass");

	/* Merge two halves where the second half stores its variables in
	 * another order (map). */
	vp_covar_init(&b);
	vp_covar_release(&a);
	vp_covar_init(&a);
	vp_covar_resize(&a, D);
	vp_covar_resize(&b, D);
	for (k = 0; k < N / 3; k++)
		vp_covar_add(&a, ys[k]);
	for (k = N / 3; k < N; k++) {
		double y[D];

		for (i = 0; i < D; i++)
			y[i] = ys[k][map[i]];
		vp_covar_add(&b, y);
	}
	/* b's variable i is a's variable map[i] */
	ok(vp_covar_merge(&a, &b, map) == 0, "merge with a variable map");
	ok(max_rel_err(&a, c) < 1e-9, "merged matrix matches two-pass over the union");
	is_uint(N, a.n, "merged count");

	/* A smaller src (missing variables) merges as zeros. */
	{
		struct vp_covar s1, full;
		size_t m1[1] = { 0 };

		vp_covar_init(&s1);
		vp_covar_init(&full);
		vp_covar_resize(&s1, 1);
		vp_covar_resize(&full, D);
		for (k = 0; k < N / 2; k++) {
			double y0[1] = { ys[k][0] };

			vp_covar_add(&s1, y0);
		}
		for (k = N / 2; k < N; k++)
			vp_covar_add(&full, ys[k]);
		ok(vp_covar_merge(&full, &s1, m1) == 0, "merge a 1-variable matrix");
		ok(max_rel_err(&full, c) < 1e-9, "missing variables merge as zeros");
		vp_covar_release(&s1);
		vp_covar_release(&full);
	}
	/*
	 * Several variables into one: src's Y1 and Y2 both map to dst's
	 * variable 1, which then stands for Y1 + Y2 (an "other" bucket):
	 * Var(Y1 + Y2) = Var Y1 + Var Y2 + 2 Cov(Y1, Y2), and its covariance
	 * with Y3 is the sum of theirs.
	 */
	{
		struct vp_covar dst, src;
		size_t m2[D] = { 0, 1, 1, 2 };
		double z[N][3], mz[3] = { 0 }, cz[3][3] = { { 0 } }, worst = 0, scale = 0;

		for (k = 0; k < N; k++) {
			z[k][0] = ys[k][0];
			z[k][1] = ys[k][1] + ys[k][2];
			z[k][2] = ys[k][3];
			for (i = 0; i < 3; i++)
				mz[i] += z[k][i] / N;
		}
		for (k = 0; k < N; k++)
			for (i = 0; i < 3; i++)
				for (size_t j = 0; j < 3; j++)
					cz[i][j] += (z[k][i] - mz[i]) * (z[k][j] - mz[j]) / N;
		vp_covar_init(&dst);
		vp_covar_init(&src);
		vp_covar_resize(&dst, 3);
		vp_covar_resize(&src, D);
		for (k = 0; k < N / 3; k++)
			vp_covar_add(&dst, z[k]);
		for (k = N / 3; k < N; k++)
			vp_covar_add(&src, ys[k]);
		ok(vp_covar_merge(&dst, &src, m2) == 0, "merge two variables into one");
		for (i = 0; i < 3; i++)
			scale = fmax(scale, fabs(cz[i][i]));
		for (i = 0; i < 3; i++)
			for (size_t j = 0; j < 3; j++)
				worst = fmax(worst, fabs(vp_covar_get(&dst, i, j) - cz[i][j]) / scale);
		ok(worst < 1e-9, "the merged variable is their sum: matrix matches two-pass (rel err %g)",
		   worst);
		is_rel(cz[1][1], vp_covar_get(&dst, 1, 1), 1e-9,
		       "Var(Y1 + Y2) counts 2 Cov(Y1, Y2)");
		vp_covar_release(&dst);
		vp_covar_release(&src);
	}
	{
		size_t bad[D] = { 0, 1, 2, 9 };

		is_int(-EINVAL, vp_covar_merge(&a, &b, bad), "out-of-range variable map rejected");
	}
	vp_covar_release(&a);
	vp_covar_release(&b);
	vp_covar_release(&late);
	return 0;
}
