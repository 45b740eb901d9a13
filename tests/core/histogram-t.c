/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * histogram-t.c - tests for core/histogram.c: the buckets' bounds, the
 * quantiles against the exact nearest-rank quantiles of sorted data
 * (bimodal, heavy-tailed, small exact values), and exact merges.
 */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/histogram.h"
#include "tests/tap/basic.h"

static uint64_t rng = 88172645463325252ULL;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* uniform in (0, 1) */
static double unit(void)
{
	return ((double)(next() >> 11) + 0.5) / 9007199254740992.0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The exact nearest-rank quantile of sorted @v. */
static uint64_t exact(const uint64_t *v, size_t n, double q)
{
	size_t rank = q > 0 ? (size_t)ceil(q * (double)n) : 1;

	return v[(rank < 1 ? 1 : rank) - 1];
}

static const double qs[] = { 0, 0.5, 0.9, 0.99, 0.999, 1 };

/* Each quantile of @v (n values, sorted here) within the stated error. */
static void check_quantiles(const char *name, uint64_t *v, size_t n)
{
	struct vp_hist h;
	int worst_ok = 1;

	vp_hist_init(&h);
	for (size_t i = 0; i < n; i++)
		if (vp_hist_add(&h, v[i], 1))
			bail("out of memory");
	qsort(v, n, sizeof(*v), cmp_u64);
	for (size_t k = 0; k < sizeof(qs) / sizeof(qs[0]); k++) {
		uint64_t want = exact(v, n, qs[k]), seen = vp_hist_quantile(&h, qs[k]);
		double err = fabs((double)seen - (double)want);

		if (err > VP_HIST_REL_ERROR * (double)want) {
			worst_ok = 0;
			diag("%s q %g: exact %llu, histogram %llu", name, qs[k],
			     (unsigned long long)want, (unsigned long long)seen);
		}
	}
	ok(worst_ok, "%s: p0, p50, p90, p99, p99.9, p100 within %.2f%% of the exact ones", name,
	   100 * VP_HIST_REL_ERROR);
	is_int(1, vp_hist_quantile(&h, 0) == v[0] && vp_hist_quantile(&h, 1) == v[n - 1],
	       "%s: p0 and p100 are the exact min and max", name);
	ok(h.n == n, "%s: n is %zu", name, n);
	vp_hist_release(&h);
}

static int same_hist(const struct vp_hist *a, const struct vp_hist *b)
{
	uint32_t pa = 0, pb = 0, ba, bb;
	uint64_t ca, cb;
	int ma, mb;

	if (a->n != b->n || a->min != b->min || a->max != b->max)
		return 0;
	do {
		ma = vp_hist_next(a, &pa, &ba, &ca);
		mb = vp_hist_next(b, &pb, &bb, &cb);
		if (ma != mb || (ma && (ba != bb || ca != cb)))
			return 0;
	} while (ma);
	return 1;
}

int main(void)
{
	enum { N = 200000 };
	uint64_t *v = malloc(N * sizeof(*v));
	struct vp_hist a, b, all, z;
	int bounds_ok = 1, mono_ok = 1;
	uint32_t prev = 0;

	if (!v)
		bail("out of memory");
	plan(23);

	/* buckets: each value inside its bucket's range, ranges at most 1/64
	 * of their lower bound wide, indices increasing with the value */
	for (int i = 0; i < 100000; i++) {
		uint64_t x = next() >> (next() % 64), lo, hi;
		uint32_t bk = vp_hist_bucket(x);

		vp_hist_bucket_range(bk, &lo, &hi);
		if (lo > x || x > hi || vp_hist_bucket(lo) != bk || vp_hist_bucket(hi) != bk ||
		    (bk >= 128 && (hi - lo + 1) * 64 > lo) || bk >= VP_HIST_NBUCKETS)
			bounds_ok = 0;
	}
	ok(bounds_ok, "100000 values: each within its bucket, buckets at most 1/64 wide");
	for (uint64_t x = 0; x < 70000; x++) {
		uint32_t bk = vp_hist_bucket(x);

		if (bk < prev || bk > prev + 1)
			mono_ok = 0;
		prev = bk;
	}
	ok(mono_ok, "0 to 70000: bucket indices rise by 0 or 1");
	is_int(VP_HIST_NBUCKETS - 1, vp_hist_bucket(UINT64_MAX), "UINT64_MAX is in the last bucket");
	is_int(127, vp_hist_bucket(127), "127 has a bucket of its own");

	/* by hand: 1..10, exact buckets */
	vp_hist_init(&a);
	for (uint64_t x = 10; x >= 1; x--)
		vp_hist_add(&a, x, 1);
	is_int(5, vp_hist_quantile(&a, 0.5), "1..10: p50 is 5 (rank 5)");
	is_int(9, vp_hist_quantile(&a, 0.9), "1..10: p90 is 9 (rank 9)");
	is_int(10, vp_hist_quantile(&a, 0.99), "1..10: p99 is 10 (rank 10)");
	is_int(1, vp_hist_quantile(&a, 0), "1..10: p0 is 1");
	vp_hist_release(&a);

	/* bimodal: 95 % near 20 us, 5 % near 8 ms */
	for (size_t i = 0; i < N; i++)
		v[i] = unit() < 0.95 ? 20000 + next() % 2000 : 8000000 + next() % 900000;
	check_quantiles("bimodal", v, N);
	/* heavy tail: Pareto, alpha 1.5, from 1 us */
	for (size_t i = 0; i < N; i++)
		v[i] = (uint64_t)(1000.0 * pow(unit(), -1.0 / 1.5));
	check_quantiles("Pareto 1.5", v, N);
	/* small values: exact */
	for (size_t i = 0; i < N; i++)
		v[i] = next() % 300;
	check_quantiles("0-299 ns", v, N);

	/* merge: the histogram of the union, bin for bin */
	vp_hist_init(&a);
	vp_hist_init(&b);
	vp_hist_init(&all);
	for (size_t i = 0; i < N; i++) {
		uint64_t x = (uint64_t)(50.0 * pow(unit(), -2.0));

		vp_hist_add(i % 3 ? &a : &b, x, 1);
		vp_hist_add(&all, x, 1);
	}
	ok(vp_hist_merge(&a, &b) == 0 && same_hist(&a, &all),
	   "a merge is the histogram of the union, bin for bin");
	vp_hist_init(&z);
	ok(vp_hist_merge(&z, &all) == 0 && same_hist(&z, &all), "merged into an empty one: a copy");
	ok(vp_hist_merge(&all, &b) == 0 && all.n == (uint64_t)N + b.n,
	   "merging again adds the counts again");
	vp_hist_release(&z);
	vp_hist_release(&a);
	vp_hist_release(&b);
	vp_hist_release(&all);

	/* empty, zero-filled, count 0, counts > 1 */
	memset(&z, 0, sizeof(z));
	is_int(0, vp_hist_quantile(&z, 0.5), "an empty histogram's p50 is 0");
	vp_hist_add(&z, 12345, 0);
	ok(z.n == 0 && z.len == 0, "adding a count of 0 changes nothing");
	vp_hist_add(&z, 1000, 99);
	vp_hist_add(&z, 5000000, 1);
	ok(fabs((double)vp_hist_quantile(&z, 0.99) - 1000) <= 1000 * VP_HIST_REL_ERROR &&
		   vp_hist_quantile(&z, 0.995) == 5000000,
	   "99 x 1 us and one 5 ms call: p99 is 1 us, p99.5 the 5 ms (the max)");
	vp_hist_release(&z);
	free(v);
	return 0;
}
