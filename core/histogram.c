/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * histogram.c - log-linear duration histograms: see histogram.h.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "histogram.h"

enum {
	EXACT = 1 << VP_HIST_SUB_BITS,		/* values with a bucket each */
	PER_OCTAVE = 1 << (VP_HIST_SUB_BITS - 1), /* buckets per power of two */
};

void vp_hist_init(struct vp_hist *h)
{
	memset(h, 0, sizeof(*h));
}

void vp_hist_release(struct vp_hist *h)
{
	free(h->bins);
	vp_hist_init(h);
}

uint32_t vp_hist_bucket(uint64_t v)
{
	int e, shift;

	if (v < EXACT)
		return (uint32_t)v;
	e = 63 - __builtin_clzll(v);
	shift = e - (VP_HIST_SUB_BITS - 1);
	return (uint32_t)(EXACT + (e - VP_HIST_SUB_BITS) * PER_OCTAVE +
			  ((v >> shift) - PER_OCTAVE));
}

void vp_hist_bucket_range(uint32_t b, uint64_t *lo, uint64_t *hi)
{
	uint32_t k, e;

	if (b < EXACT) {
		*lo = *hi = b;
		return;
	}
	k = b - EXACT;
	e = VP_HIST_SUB_BITS + k / PER_OCTAVE;
	*lo = (uint64_t)(PER_OCTAVE + k % PER_OCTAVE) << (e - (VP_HIST_SUB_BITS - 1));
	*hi = *lo + ((uint64_t)1 << (e - (VP_HIST_SUB_BITS - 1))) - 1;
}

/* The first bin whose bucket is not below @b. */
static uint32_t lower_bound(const struct vp_hist *h, uint32_t b)
{
	uint32_t lo = 0, hi = h->nbins;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (h->bins[mid].bucket < b)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int reserve(struct vp_hist *h, uint32_t n)
{
	struct vp_hist_bin *bins;
	uint32_t cap;

	if (n <= h->cap)
		return 0;
	cap = h->cap ? h->cap : 8;
	while (cap < n)
		cap *= 2;
	bins = realloc(h->bins, cap * sizeof(*bins));
	if (!bins)
		return -ENOMEM;
	h->bins = bins;
	h->cap = cap;
	return 0;
}

int vp_hist_add(struct vp_hist *h, uint64_t v, uint64_t count)
{
	uint32_t b = vp_hist_bucket(v), i;

	if (!count)
		return 0;
	i = lower_bound(h, b);
	if (i == h->nbins || h->bins[i].bucket != b) {
		if (reserve(h, h->nbins + 1))
			return -ENOMEM;
		memmove(&h->bins[i + 1], &h->bins[i], (h->nbins - i) * sizeof(*h->bins));
		h->bins[i].bucket = b;
		h->bins[i].count = 0;
		h->nbins++;
	}
	h->bins[i].count += count;
	if (!h->n || v < h->min)
		h->min = v;
	if (!h->n || v > h->max)
		h->max = v;
	h->n += count;
	return 0;
}

int vp_hist_merge(struct vp_hist *dst, const struct vp_hist *src)
{
	struct vp_hist_bin *out;
	uint32_t i = 0, j = 0, k = 0;

	if (!src->n)
		return 0;
	/* a merge into a new array: dst stays whole if it cannot be had */
	out = malloc(((size_t)dst->nbins + src->nbins) * sizeof(*out));
	if (!out)
		return -ENOMEM;
	while (i < dst->nbins || j < src->nbins) {
		if (j == src->nbins || (i < dst->nbins && dst->bins[i].bucket < src->bins[j].bucket)) {
			out[k++] = dst->bins[i++];
		} else if (i == dst->nbins || src->bins[j].bucket < dst->bins[i].bucket) {
			out[k++] = src->bins[j++];
		} else {
			out[k] = dst->bins[i++];
			out[k++].count += src->bins[j++].count;
		}
	}
	free(dst->bins);
	dst->bins = out;
	dst->cap = dst->nbins + src->nbins;
	dst->nbins = k;
	if (!dst->n || src->min < dst->min)
		dst->min = src->min;
	if (!dst->n || src->max > dst->max)
		dst->max = src->max;
	dst->n += src->n;
	return 0;
}

uint64_t vp_hist_quantile(const struct vp_hist *h, double q)
{
	uint64_t rank, seen = 0, lo, hi, mid;

	if (!h->n)
		return 0;
	if (!(q > 0))
		return h->min;
	if (q >= 1)
		return h->max;
	rank = (uint64_t)ceil(q * (double)h->n);
	if (rank < 1)
		rank = 1;
	for (uint32_t i = 0; i < h->nbins; i++) {
		seen += h->bins[i].count;
		if (seen >= rank) {
			vp_hist_bucket_range(h->bins[i].bucket, &lo, &hi);
			mid = lo + (hi - lo) / 2;
			return mid < h->min ? h->min : mid > h->max ? h->max : mid;
		}
	}
	return h->max;
}
