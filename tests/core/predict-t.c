/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * predict-t.c - the parts of run-time prediction (core/predict.h) on data
 * whose answer is known: least squares on a known line and a hand-computed
 * prediction interval, the t quantiles against closed forms, k-means
 * recovering planted clusters, and the whole model recovering two phases of
 * known durations from synthetic recordings, predicting an unseen size
 * exactly.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/predict.h"
#include "tests/tap/basic.h"

static void test_linfit(void)
{
	double x[] = { 1, 2, 3, 4, 5 }, y[5], x2[] = { 1, 2, 3, 4 }, y2[] = { 1, 3, 2, 4 };
	struct vp_linfit f;

	for (int i = 0; i < 5; i++)
		y[i] = 3 + 2 * x[i];
	is_int(0, vp_linfit(x, y, 5, &f), "linfit: fits");
	is_double(3, f.b0, 1e-12, "linfit: intercept of y = 3 + 2x");
	is_double(2, f.b1, 1e-12, "linfit: slope of y = 3 + 2x");
	is_double(0, f.ssr, 1e-20, "linfit: no residual");
	/* by hand: b1 = Sxy/Sxx = 4/5, b0 = 2.5 - 0.8 x 2.5, SSR = 1.8,
	 * s^2 = 0.9, at x = 2.5: t(2) sqrt(0.9 (1 + 1/4)) */
	is_int(0, vp_linfit(x2, y2, 4, &f), "linfit: noisy points");
	is_double(0.8, f.b1, 1e-12, "linfit: slope by hand");
	is_double(0.5, f.b0, 1e-12, "linfit: intercept by hand");
	is_double(1.8, f.ssr, 1e-12, "linfit: residual sum of squares by hand");
	is_double(4.3027 * sqrt(0.9 * 1.25), vp_linfit_halfwidth(&f, 2.5, 0), 1e-9,
		  "linfit: 95%% prediction half-width by hand");
	x[1] = x[2] = x[3] = x[4] = x[0];
	is_int(-EDOM, vp_linfit(x, y, 5, &f), "linfit: equal x cannot be fitted");
	is_int(-EDOM, vp_linfit(x, y, 1, &f), "linfit: one point cannot be fitted");
}

static void test_t975(void)
{
	/* closed forms: df 1 is Cauchy, df 2 has t = (2p - 1) / sqrt(2 p (1 - p)) */
	is_double(tan(M_PI * 0.475), vp_t975(1), 1e-4, "t(0.975, 1) = tan(0.475 pi)");
	is_double(0.95 / sqrt(2 * 0.975 * 0.025), vp_t975(2), 1e-4, "t(0.975, 2) closed form");
	/* the table's last entry and the expansion beyond it agree */
	is_double(vp_t975(30), vp_t975(31) + (2.0423 - 2.0395), 2e-4,
		  "t(0.975, 30) from the table continues into the expansion at 31");
	is_double(1.959964, vp_t975(100000), 1e-4, "t(0.975, large) -> z(0.975)");
	ok(vp_t975(31) < vp_t975(30) && vp_t975(200) < vp_t975(31), "t quantiles decrease with df");
}

static uint64_t lcg = 42;

static double noise(void)
{
	lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(lcg >> 11) / 9007199254740992.0 * 0.04 - 0.02;
}

static void test_kmeans(void)
{
	enum { N = 90, D = 4, K = 3 };
	static const double planted[K][D] = {
		{ 0.7, 0.1, 0.1, 0.1 }, { 0.1, 0.7, 0.2, 0.0 }, { 0.0, 0.1, 0.3, 0.6 } };
	double x[N * D], c[K * D], cost;
	unsigned a[N], map[K];
	int good = 1, distinct = 1;

	for (int i = 0; i < N; i++)
		for (int j = 0; j < D; j++)
			x[i * D + j] = planted[i % K][j] + noise();
	is_int(0, vp_kmeans_l1(x, N, D, K, 5, 7, a, c, &cost), "kmeans: runs");
	for (int g = 0; g < K; g++)
		map[g] = a[g];
	for (int i = 0; i < N; i++)
		good &= a[i] == map[i % K];
	ok(good, "kmeans: every planted group in one cluster");
	distinct = map[0] != map[1] && map[1] != map[2] && map[0] != map[2];
	ok(distinct, "kmeans: the 3 groups in 3 different clusters");
	for (int g = 0; g < K && distinct; g++)
		for (int j = 0; j < D; j++)
			good &= fabs(c[map[g] * D + j] - planted[g][j]) < 0.02;
	ok(good && distinct, "kmeans: centres within the noise of the planted ones");
	ok(cost < N * D * 0.02, "kmeans: summed distance within the noise (%g)", cost);
	is_int(-EINVAL, vp_kmeans_l1(x, 2, D, 3, 1, 1, a, c, &cost), "kmeans: k > n refused");
}

/*
 * Recordings of sizes 10..50: phase A takes 10 x size samples of 1 ms,
 * phase B 5 x size + 40 samples of 2 ms, each count off its line by whole
 * intervals in a pattern orthogonal to (1, size), so that least squares
 * finds the lines exactly while one phase alone could not (its interval
 * durations differ).  Every interval of a phase has the same vector, so
 * more than 2 clusters leave the rest empty and tie, and ties go to fewer.  At size 25: 25 x 10 ms + 16.5 x 20 ms = 580 ms.
 */
static void test_model(void)
{
	static const int noise_a[5] = { 1, -2, 0, 2, -1 }, noise_b[5] = { 1, -1, 0, -1, 1 };
	static const size_t I[] = { 10 };
	struct vp_predict_data d;
	struct vp_predict_opts o;
	struct vp_predict_model m;
	struct vp_predict_loo l;
	struct vp_prediction p;
	int err = 0;

	vp_predict_data_init(&d);
	for (int r = 0; r < 5; r++) {
		struct vp_predict_run *run;
		int s = 10 * (r + 1), na = 10 * s + 10 * noise_a[r], nb = 5 * s + 40 + 10 * noise_b[r];
		char name[16];

		snprintf(name, sizeof(name), "run%d", s);
		err |= vp_predict_add_run(&d, name, s, &run);
		for (int i = 0; i < na; i++)
			err |= vp_predict_add_sample(&d, run, i % 2 ? "a_loop" : "a_helper", 1e6);
		for (int i = 0; i < nb; i++)
			err |= vp_predict_add_sample(&d, run, i % 2 ? "b_loop" : "b_helper", 2e6);
	}
	is_int(0, err, "model: synthetic recordings built");
	is_int(4, d.nfuncs, "model: 4 functions, numbered by name across runs");
	vp_predict_opts_init(&o);
	o.intervals = I;
	o.nintervals = 1;
	is_int(0, vp_predict_fit(&d, NULL, &o, &m), "model: fits");
	is_int(2, m.k, "model: 2 phases chosen");
	is_uint(10, m.interval, "model: the interval size given");
	/* residuals 6 intervals of A, 4 of B, x I = 10; shares 1500 and 950 of 2450 */
	is_double((1500.0 * 60 + 950.0 * 40) / 2450, m.score, 1e-9,
		  "model: the score, the share-weighted residual sum in samples");
	vp_predict_at(&m, 25, VP_PREDICT_REPRESENTATIVE, &p);
	is_double(580e6, p.ns, 1e-3, "model: representative prediction at size 25: 580 ms");
	ok(isfinite(p.half) && p.half > 0, "model: with a 95%% interval (%g ms)", p.half / 1e6);
	vp_predict_at(&m, 25, VP_PREDICT_SAMPLE, &p);
	is_double(580e6, p.ns, 1e-3, "model: sample prediction at size 25: 580 ms");
	vp_predict_model_release(&m);

	/* one phase only cannot: the mix of 1 ms and 2 ms intervals changes */
	o.kmin = o.kmax = 1;
	is_int(0, vp_predict_fit(&d, NULL, &o, &m), "model: 1 phase fits too");
	vp_predict_at(&m, 25, VP_PREDICT_SAMPLE, &p);
	ok(fabs(p.ns - 580e6) > 1e6, "model: ... and misses by %g ms", (p.ns - 580e6) / 1e6);
	vp_predict_model_release(&m);
	/* 2 phases: on 4 runs the score may prefer 1 (it does leaving out
	 * size 20, whose noise in A and B cancels), which is the paper's
	 * choice, not the one this check can compute by hand */
	o.kmin = o.kmax = 2;
	is_int(0, vp_predict_loo(&d, &o, &l), "loo: runs");
	is_uint(5, l.n, "loo: one row per recording");
	/* the actual run time of run 30 (no noise): 300 x 1 ms + 190 x 2 ms */
	is_double(680e6, l.rows[2].actual_ns, 1e-3, "loo: measured time of size 30");
	/* with both phases found, each left-out run's prediction is the line
	 * through the other runs' times (1 ms x A + 2 ms x B samples) */
	{
		int same = 1;
		double mean = 0;

		for (int j = 0; j < 5; j++) {
			double x[4], y[4];
			struct vp_linfit f;
			int q = 0;

			for (int r = 0; r < 5; r++) {
				if (r == j)
					continue;
				double sz = 10 * (r + 1);

				x[q] = sz;
				y[q] = 1e6 * (10 * sz + 10 * noise_a[r]) +
				       2e6 * (5 * sz + 40 + 10 * noise_b[r]);
				q++;
			}
			vp_linfit(x, y, 4, &f);
			for (int st = 0; st < VP_PREDICT_NSTRATEGIES; st++)
				same &= fabs(l.rows[j].predicted_ns[st] -
					     (f.b0 + f.b1 * 10 * (j + 1))) < 1e-3;
			mean += fabs(f.b0 + f.b1 * 10 * (j + 1) - l.rows[j].actual_ns) /
				l.rows[j].actual_ns / 5;
		}
		ok(same, "loo: each run predicted by the line through the others' times");
		is_double(mean, l.mean[VP_PREDICT_SAMPLE], 1e-12,
			  "loo: mean relative error (%.2f%%)", mean * 100);
	}
	vp_predict_loo_release(&l);

	o.intervals = (const size_t[]){ 1000 };
	is_int(-ENODATA, vp_predict_fit(&d, NULL, &o, &m),
	       "model: no interval size fits the shortest run");
	vp_predict_data_release(&d);
}

int main(void)
{
	plan(11 + 5 + 6 + 17);
	test_linfit();
	test_t975();
	test_kmeans();
	test_model();
	return 0;
}
