/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * stats.h - running statistics of one quantity: count, mean, variance,
 * min, max and exact integer total, updated with Welford's method and
 * merged with Chan et al.'s pairwise formula (the same equations as Kumar
 * and Pande, §6.1), never with E[X^2] - E[X]^2.
 *
 * Variance is the population variance E[(X - mean)^2], as in the papers.
 */
#ifndef VARPERF_CORE_STATS_H
#define VARPERF_CORE_STATS_H

#include <stdint.h>

struct vp_stats {
	uint64_t n;
	double mean;
	double m2; /* sum of squared deviations from the mean */
	uint64_t min;
	uint64_t max;
	uint64_t total; /* exact sum of the observations */
};

void vp_stats_init(struct vp_stats *s);
void vp_stats_add(struct vp_stats *s, uint64_t x);
/* Fold @src into @dst as if all of @src's observations had been added. */
void vp_stats_merge(struct vp_stats *dst, const struct vp_stats *src);
double vp_stats_variance(const struct vp_stats *s);
double vp_stats_stddev(const struct vp_stats *s);
/* Coefficient of variation sigma/mean; 0 when the mean is 0. */
double vp_stats_cov(const struct vp_stats *s);

/*
 * Kolmogorov-Smirnov distance sup |F1 - F2| between two Gaussians given by
 * mean and standard deviation; a standard deviation of 0 is a point mass.
 */
double vp_ks_gauss(double m1, double s1, double m2, double s2);

#endif
