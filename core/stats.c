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
