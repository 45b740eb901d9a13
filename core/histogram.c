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

void vp_hist_init(struct vp_hist *h)
{
	memset(h, 0, sizeof(*h));
}

void vp_hist_release(struct vp_hist *h)
{
	free(h->counts);
	vp_hist_init(h);
}

void vp_hist_bucket_range(uint32_t b, uint64_t *lo, uint64_t *hi)
{
	uint32_t k, e;

	if (b < VP_HIST_EXACT) {
		*lo = *hi = b;
		return;
	}
	k = b - VP_HIST_EXACT;
	e = VP_HIST_SUB_BITS + k / VP_HIST_PER_OCTAVE;
	*lo = (uint64_t)(VP_HIST_PER_OCTAVE + k % VP_HIST_PER_OCTAVE)
	      << (e - (VP_HIST_SUB_BITS - 1));
	*hi = *lo + ((uint64_t)1 << (e - (VP_HIST_SUB_BITS - 1))) - 1;
}

/* Make @h count buckets @lo to @hi (both included) at least. */
static int cover(struct vp_hist *h, uint32_t lo, uint32_t hi)
{
	uint32_t first, last, len;
	uint64_t *c;

	if (h->len && lo >= h->first && hi < h->first + h->len)
		return 0;
	first = h->len && h->first < lo ? h->first : lo;
	last = h->len && h->first + h->len - 1 > hi ? h->first + h->len - 1 : hi;
	/* room for as much again on the side that grew: few reallocations */
	if (h->len && first < h->first)
		first = first > h->first - first ? first - (h->first - first) : 0;
	if (h->len && last > h->first + h->len - 1)
		last += last - (h->first + h->len - 1);
	if (last >= VP_HIST_NBUCKETS)
		last = VP_HIST_NBUCKETS - 1;
	len = last - first + 1;
	c = calloc(len, sizeof(*c));
	if (!c)
		return -ENOMEM;
	if (h->len)
		memcpy(c + (h->first - first), h->counts, h->len * sizeof(*c));
	free(h->counts);
	h->counts = c;
	h->first = first;
	h->len = len;
	return 0;
}

static void note_range(struct vp_hist *h, uint64_t min, uint64_t max, uint64_t count)
{
	if (!h->n || min < h->min)
		h->min = min;
	if (!h->n || max > h->max)
		h->max = max;
	h->n += count;
}

int vp_hist_add(struct vp_hist *h, uint64_t v, uint64_t count)
{
	uint32_t b = vp_hist_bucket(v);

	if (!count)
		return 0;
	if (cover(h, b, b))
		return -ENOMEM;
	h->counts[b - h->first] += count;
	note_range(h, v, v, count);
	return 0;
}

int vp_hist_merge(struct vp_hist *dst, const struct vp_hist *src)
{
	if (!src->n)
		return 0;
	if (cover(dst, src->first, src->first + src->len - 1))
		return -ENOMEM;
	for (uint32_t i = 0; i < src->len; i++)
		dst->counts[src->first + i - dst->first] += src->counts[i];
	note_range(dst, src->min, src->max, src->n);
	return 0;
}

int vp_hist_next(const struct vp_hist *h, uint32_t *pos, uint32_t *bucket, uint64_t *count)
{
	for (; *pos < h->len; (*pos)++)
		if (h->counts[*pos]) {
			*bucket = h->first + *pos;
			*count = h->counts[(*pos)++];
			return 1;
		}
	return 0;
}

size_t vp_hist_bytes(const struct vp_hist *h)
{
	return (size_t)h->len * sizeof(*h->counts);
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
	for (uint32_t i = 0; i < h->len; i++) {
		seen += h->counts[i];
		if (seen >= rank) {
			vp_hist_bucket_range(h->first + i, &lo, &hi);
			mid = lo + (hi - lo) / 2;
			return mid < h->min ? h->min : mid > h->max ? h->max : mid;
		}
	}
	return h->max;
}
