/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * stats-t.c - tests for core/stats.c: hand-computed values, stability
 * against a two-pass reference with a large offset, and exact merges.
 */
#include <config.h>

#include <math.h>
#include <stdint.h>

#include "core/stats.h"
#include "tests/tap/basic.h"

/* Two-pass reference: mean first, then squared deviations. */
static void reference(const uint64_t *x, size_t n, double *mean, double *var)
{
	double s = 0.0, d = 0.0;
	size_t i;

	for (i = 0; i < n; i++)
		s += (double)x[i];
	*mean = s / (double)n;
	for (i = 0; i < n; i++)
		d += ((double)x[i] - *mean) * ((double)x[i] - *mean);
	*var = d / (double)n;
}

int main(void)
{
	static const uint64_t hand[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
	static uint64_t big[100000];
	struct vp_stats s, a, b, empty;
	double mean, var;
	uint64_t lcg = 12345;
	size_t i;

	plan(21);

	/* Hand-computed: mean 5, population variance 4, sd 2, CoV 0.4. */
	vp_stats_init(&s);
	for (i = 0; i < 8; i++)
		vp_stats_add(&s, hand[i]);
	is_uint(8, s.n, "hand: count");
	is_double(5.0, s.mean, 1e-12, "hand: mean");
	is_double(4.0, vp_stats_variance(&s), 1e-12, "hand: variance");
	is_double(2.0, vp_stats_stddev(&s), 1e-12, "hand: stddev");
	is_double(0.4, vp_stats_cov(&s), 1e-12, "hand: CoV");
	is_uint(2, s.min, "hand: min");
	is_uint(9, s.max, "hand: max");
	is_uint(40, s.total, "hand: exact total");

	/* Merge of halves equals the whole (Kumar and Pande, §6.1). */
	vp_stats_init(&a);
	vp_stats_init(&b);
	for (i = 0; i < 3; i++)
		vp_stats_add(&a, hand[i]);
	for (i = 3; i < 8; i++)
		vp_stats_add(&b, hand[i]);
	vp_stats_merge(&a, &b);
	is_uint(8, a.n, "merge: count");
	is_double(5.0, a.mean, 1e-12, "merge: mean");
	is_double(4.0, vp_stats_variance(&a), 1e-12, "merge: variance");
	is_uint(2, a.min, "merge: min");
	is_uint(9, a.max, "merge: max");

	/* Merging an empty set changes nothing, in either direction. */
	vp_stats_init(&empty);
	b = a;
	vp_stats_merge(&b, &empty);
	is_double(vp_stats_variance(&a), vp_stats_variance(&b), 0.0, "merge with empty");
	vp_stats_merge(&empty, &a);
	is_double(a.mean, empty.mean, 0.0, "merge into empty");

	/*
	 * Stability: 1e12 ns offset, small spread.  E[X^2]-E[X]^2 loses all
	 * digits here; Welford must agree with the two-pass reference.
	 */
	for (i = 0; i < 100000; i++) {
		lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
		big[i] = 1000000000000ULL + (lcg >> 40) % 1000;
	}
	reference(big, 100000, &mean, &var);
	vp_stats_init(&s);
	for (i = 0; i < 100000; i++)
		vp_stats_add(&s, big[i]);
	is_rel(mean, s.mean, 1e-13, "offset data: mean matches two-pass");
	is_rel(var, vp_stats_variance(&s), 1e-6, "offset data: variance matches two-pass");

	/* Many uneven merges equal one pass. */
	vp_stats_init(&a);
	for (i = 0; i < 100000;) {
		size_t len = 1 + i % 977, j;

		vp_stats_init(&b);
		for (j = 0; j < len && i < 100000; j++, i++)
			vp_stats_add(&b, big[i]);
		vp_stats_merge(&a, &b);
	}
	is_uint(s.n, a.n, "chunked merge: count");
	is_rel(vp_stats_variance(&s), vp_stats_variance(&a), 1e-6, "chunked merge: variance");
	is_uint(s.total, a.total, "chunked merge: exact total");

	/* A zero mean has no CoV rather than a division by zero. */
	vp_stats_init(&s);
	vp_stats_add(&s, 0);
	is_double(0.0, vp_stats_cov(&s), 0.0, "CoV of zero mean is 0");
	return 0;
}
