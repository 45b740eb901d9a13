/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * covar.c - multivariate Welford/Chan co-moments of a node's
 * per-invocation contribution vector (see covar.h).
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "covar.h"

static size_t tri(size_t i, size_t j)
{
	return i >= j ? i * (i + 1) / 2 + j : j * (j + 1) / 2 + i;
}

void vp_covar_init(struct vp_covar *c)
{
	memset(c, 0, sizeof(*c));
}

void vp_covar_release(struct vp_covar *c)
{
	free(c->mean);
	free(c->com);
	vp_covar_init(c);
}

int vp_covar_resize(struct vp_covar *c, size_t dim)
{
	if (dim <= c->dim)
		return 0;
	if (dim > c->cap) {
		size_t cap = c->cap ? c->cap : 2;
		double *mean, *com;

		while (cap < dim)
			cap *= 2;
		mean = realloc(c->mean, cap * sizeof(*mean));
		if (!mean)
			return -ENOMEM;
		c->mean = mean;
		com = realloc(c->com, cap * (cap + 1) / 2 * sizeof(*com));
		if (!com)
			return -ENOMEM;
		c->com = com;
		c->cap = cap;
	}
	/* A variable seen for the first time was 0 in every earlier
	 * invocation: mean 0 and zero co-moments are exact. */
	memset(c->mean + c->dim, 0, (dim - c->dim) * sizeof(*c->mean));
	memset(c->com + c->dim * (c->dim + 1) / 2, 0,
	       (dim * (dim + 1) / 2 - c->dim * (c->dim + 1) / 2) * sizeof(*c->com));
	c->dim = dim;
	return 0;
}

void vp_covar_add(struct vp_covar *c, const double *y)
{
	double inv;
	size_t i, j, k;

	c->n++;
	inv = 1.0 / (double)c->n;
	/*
	 * Welford: C_ij += (y_i - old_i)(y_j - new_j), and y_j - new_j =
	 * (y_j - old_j)(1 - 1/n), so the update needs only the old means and
	 * no scratch vector.
	 */
	for (i = 0, k = 0; i < c->dim; i++) {
		double di = y[i] - c->mean[i];
		double f = di * (1.0 - inv);

		for (j = 0; j <= i; j++, k++)
			c->com[k] += f * (y[j] - c->mean[j]);
	}
	for (i = 0; i < c->dim; i++)
		c->mean[i] += (y[i] - c->mean[i]) * inv;
}

int vp_covar_merge(struct vp_covar *dst, const struct vp_covar *src, const size_t *map)
{
	double na, nb, n, f, *d;
	size_t i, j;

	if (!src->n)
		return 0;
	for (i = 0; i < src->dim; i++)
		if (map[i] >= dst->dim)
			return -EINVAL;
	d = calloc(dst->dim, sizeof(*d));
	if (!d)
		return -ENOMEM;
	na = (double)dst->n;
	nb = (double)src->n;
	n = na + nb;
	/* Variables src lacks were 0 throughout src: their src mean is 0. */
	for (i = 0; i < dst->dim; i++)
		d[i] = -dst->mean[i];
	for (i = 0; i < src->dim; i++)
		d[map[i]] += src->mean[i];
	f = na * nb / n;
	for (i = 0; i < dst->dim; i++)
		for (j = 0; j <= i; j++)
			dst->com[tri(i, j)] += d[i] * d[j] * f;
	/*
	 * Several of src's variables may merge into one of dst's, which then
	 * stands for their sum: its co-moments are the sums of theirs, and
	 * the triangle holds C[i][j] of such a pair once for the two terms
	 * C[i][j] and C[j][i] of the sum's own C[m][m].
	 */
	for (i = 0; i < src->dim; i++)
		for (j = 0; j <= i; j++)
			dst->com[tri(map[i], map[j])] +=
				(j < i && map[i] == map[j] ? 2 : 1) * src->com[tri(i, j)];
	for (i = 0; i < dst->dim; i++)
		dst->mean[i] += d[i] * (nb / n);
	dst->n += src->n;
	free(d);
	return 0;
}

double vp_covar_get(const struct vp_covar *c, size_t i, size_t j)
{
	if (!c->n || i >= c->dim || j >= c->dim)
		return 0.0;
	return c->com[tri(i, j)] / (double)c->n;
}

double vp_covar_sum(const struct vp_covar *c)
{
	double s = 0.0;
	size_t i, j;

	for (i = 0; i < c->dim; i++)
		for (j = 0; j < c->dim; j++)
			s += vp_covar_get(c, i, j);
	return s;
}
