/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * histogram.h - a mergeable histogram of durations with a bounded relative
 * error, for percentiles of a calling-context node's invocations.
 *
 * Log-linear buckets as HdrHistogram's: values below 2^VP_HIST_SUB_BITS
 * (128 ns) each have a bucket of their own; above, every power of two is
 * cut into 2^(VP_HIST_SUB_BITS - 1) = 64 equal buckets.  So a bucket is at
 * most 1/64 of its lower bound wide, and its midpoint is within 1/128
 * (0.78 %) of any value in it.  A histogram counts the buckets from its
 * smallest value's to its largest's, 8 bytes each, so that adding a value
 * is an index: 128 exact buckets and 64 per octave over the 57 octaves
 * above make 3776 at most (29.5 KiB); durations spanning one decade take
 * about 212 (1.7 KiB).  Two histograms merge exactly (the same
 * buckets), as the running statistics of stats.h do.
 */
#ifndef VARPERF_HISTOGRAM_H
#define VARPERF_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

enum {
	VP_HIST_SUB_BITS = 7,
	VP_HIST_EXACT = 1 << VP_HIST_SUB_BITS,		 /* values with a bucket each */
	VP_HIST_PER_OCTAVE = 1 << (VP_HIST_SUB_BITS - 1), /* buckets per power of two */
	/* buckets a uint64_t can fall in (bucket indices are below) */
	VP_HIST_NBUCKETS = (1 << VP_HIST_SUB_BITS) + (64 - VP_HIST_SUB_BITS) *
							 (1 << (VP_HIST_SUB_BITS - 1)),
};

/* The largest relative distance of a bucket's midpoint to a value in it. */
#define VP_HIST_REL_ERROR (1.0 / (1 << (VP_HIST_SUB_BITS)))

struct vp_hist {
	uint64_t *counts; /* counts[i]: values in bucket first + i */
	uint32_t first, len;
	uint64_t n;	  /* values added */
	uint64_t min, max; /* exact; 0 when n is 0 */
};

/* An empty histogram (a zero-filled one is empty too). */
void vp_hist_init(struct vp_hist *h);
void vp_hist_release(struct vp_hist *h);

/* The bucket of @v (inline: one per paired call), and the values
 * [*@lo, *@hi] bucket @b holds. */
static inline uint32_t vp_hist_bucket(uint64_t v)
{
	int e;

	if (v < VP_HIST_EXACT)
		return (uint32_t)v;
	e = 63 - __builtin_clzll(v);
	return (uint32_t)(VP_HIST_EXACT + (e - VP_HIST_SUB_BITS) * VP_HIST_PER_OCTAVE +
			  ((v >> (e - (VP_HIST_SUB_BITS - 1))) - VP_HIST_PER_OCTAVE));
}

void vp_hist_bucket_range(uint32_t b, uint64_t *lo, uint64_t *hi);

/* Add @count values @v.  0, or -ENOMEM with @h unchanged. */
int vp_hist_add(struct vp_hist *h, uint64_t v, uint64_t count);

/*
 * vp_hist_add_counted - add one value @v when its bucket is counted
 * already (1), without a call; 0 with @h unchanged when it is not, for
 * vp_hist_add() to grow @h.
 */
static inline int vp_hist_add_counted(struct vp_hist *h, uint64_t v)
{
	uint32_t i = vp_hist_bucket(v) - h->first;

	if (i >= h->len)
		return 0;
	h->counts[i]++;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->n++;
	return 1;
}

/* Add every value of @src to @dst.  0, or -ENOMEM with @dst unchanged. */
int vp_hist_merge(struct vp_hist *dst, const struct vp_hist *src);

/*
 * vp_hist_quantile - the @q quantile (0 <= @q <= 1) by nearest rank: the
 * value of rank ceil(q n) (1 for q = 0) in sorted order, as the midpoint
 * of its bucket clamped to [min, max]: within VP_HIST_REL_ERROR of the
 * exact one, and exact at q = 0 and q = 1.  0 for an empty histogram.
 */
uint64_t vp_hist_quantile(const struct vp_hist *h, double q);

/*
 * vp_hist_next - the next bucket holding values, from *@pos (start at 0):
 * 1 with its index and count, or 0 past the last.
 */
int vp_hist_next(const struct vp_hist *h, uint32_t *pos, uint32_t *bucket, uint64_t *count);

/* Bytes of @h's counts (for a memory budget). */
size_t vp_hist_bytes(const struct vp_hist *h);

#endif
