/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * stats.c - Welford updates and Chan merges of per-invocation durations.
 */
#include <config.h>

#include <math.h>

#include "stats.h"

void vp_stats_init(struct vp_stats *s)
{
	s->n = 0;
	s->mean = 0.0;
	s->m2 = 0.0;
	s->min = UINT64_MAX;
	s->max = 0;
	s->total = 0;
}

void vp_stats_add(struct vp_stats *s, uint64_t x)
{
	double d = (double)x - s->mean;

	s->n++;
	s->mean += d / (double)s->n;
	s->m2 += d * ((double)x - s->mean);
	if (x < s->min)
		s->min = x;
	if (x > s->max)
		s->max = x;
	s->total += x;
}

void vp_stats_merge(struct vp_stats *dst, const struct vp_stats *src)
{
	double n, d;

	if (!src->n)
		return;
	if (!dst->n) {
		*dst = *src;
		return;
	}
	/*
	 * Chan et al.: M2 = M2a + M2b + d^2 na nb / n, which is Kumar and
	 * Pande's (§6.1) N_M s_M^2 = sum N_i (s_i^2 + (mean_i - mean_M)^2)
	 * rearranged so that no large terms cancel.
	 */
	n = (double)dst->n + (double)src->n;
	d = src->mean - dst->mean;
	dst->m2 += src->m2 + d * d * ((double)dst->n * (double)src->n / n);
	dst->mean += d * ((double)src->n / n);
	dst->n += src->n;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	dst->total += src->total;
}

double vp_stats_variance(const struct vp_stats *s)
{
	if (s->n == 0)
		return 0.0;
	/* Rounding can leave a tiny negative m2 after many merges. */
	return s->m2 > 0.0 ? s->m2 / (double)s->n : 0.0;
}

double vp_stats_stddev(const struct vp_stats *s)
{
	return sqrt(vp_stats_variance(s));
}

double vp_stats_cov(const struct vp_stats *s)
{
	return s->mean > 0.0 ? vp_stats_stddev(s) / s->mean : 0.0;
}

/* ---- Kolmogorov-Smirnov distance of two Gaussians ---- */

static double phi(double z)
{
	return 0.5 * erfc(-z * M_SQRT1_2);
}

/* sup |F(x) - [x >= c]| for F = N(m, s): the larger of F(c) and 1 - F(c). */
static double ks_point(double m, double s, double c)
{
	double f = phi((c - m) / s);

	return f > 1.0 - f ? f : 1.0 - f;
}

double vp_ks_gauss(double m1, double s1, double m2, double s2)
{
	double rho, e, A, B, C, u[2], d = 0.0;
	int nu = 0;

	if (!(s1 > 0.0) && !(s2 > 0.0))
		return m1 == m2 ? 0.0 : 1.0;
	if (!(s1 > 0.0))
		return ks_point(m2, s2, m1);
	if (!(s2 > 0.0))
		return ks_point(m1, s1, m2);
	/*
	 * F1 - F2 is extreme where the densities cross.  In u = (x - m1)/s1,
	 * with rho = s1/s2 and e = (m1 - m2)/s2, the second variable is
	 * rho u + e, and the crossings solve
	 * (rho^2 - 1) u^2 + 2 rho e u + e^2 - 2 ln rho = 0
	 * (standardised, so that large means do not cancel).
	 */
	rho = s1 / s2;
	e = (m1 - m2) / s2;
	A = rho * rho - 1.0;
	B = 2.0 * rho * e;
	C = e * e - 2.0 * log(rho);
	if (fabs(A) < 1e-12) {
		if (B == 0.0)
			return 0.0;
		u[nu++] = -C / B;
	} else {
		double disc = B * B - 4.0 * A * C, q;

		q = -0.5 * (B + copysign(sqrt(disc > 0.0 ? disc : 0.0), B));
		if (q != 0.0) {
			u[nu++] = q / A;
			u[nu++] = C / q;
		} else {
			u[nu++] = -B / (2.0 * A);
		}
	}
	for (int i = 0; i < nu; i++) {
		double g;

		if (!isfinite(u[i]))
			continue;
		g = fabs(phi(u[i]) - phi(rho * u[i] + e));
		if (g > d)
			d = g;
	}
	return d > 1.0 ? 1.0 : d;
}
