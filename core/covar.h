/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * covar.h - covariance matrix of a node's per-invocation contributions
 * Y_0 (self time), Y_1..Y_k (cumulative time in each child call context),
 * Kumar and Pande, §2, Eq. 1-2: the sum of all entries equals the node's variance.
 *
 * Updated one invocation at a time (multivariate Welford) and mergeable
 * (Chan); a variable added later had the value 0 in every earlier
 * invocation, which the zero-initialised new row represents exactly.
 * Storage is the lower triangle, row-major, so adding a variable appends.
 */
#ifndef VARPERF_CORE_COVAR_H
#define VARPERF_CORE_COVAR_H

#include <stddef.h>
#include <stdint.h>

struct vp_covar {
	uint64_t n;
	size_t dim;   /* number of variables (k + 1) */
	size_t cap;   /* allocated variables */
	double *mean; /* [cap] */
	double *com;  /* co-moments, lower triangle: [i*(i+1)/2 + j], j <= i */
};

void vp_covar_init(struct vp_covar *c);
void vp_covar_release(struct vp_covar *c);
/* Grow to @dim variables (new ones all-zero so far).  0 or -ENOMEM. */
int vp_covar_resize(struct vp_covar *c, size_t dim);
/* Add one observation vector @y of c->dim values. */
void vp_covar_add(struct vp_covar *c, const double *y);
/*
 * Merge @src into @dst; @map[j] is the index in @dst of @src's variable j
 * (dst must already have dim > every map[j]).  Several variables of @src
 * may map to one of @dst, which then takes their sum.  0, -EINVAL or
 * -ENOMEM.
 */
int vp_covar_merge(struct vp_covar *dst, const struct vp_covar *src, const size_t *map);
/* Population covariance C[i][j]. */
double vp_covar_get(const struct vp_covar *c, size_t i, size_t j);
/* Sum of all entries of C (= variance of the sum). */
double vp_covar_sum(const struct vp_covar *c);

#endif
