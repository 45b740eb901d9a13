// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * predict.c - phase clustering and per-phase regression for run-time
 * prediction (Schwarzer et al., 2011; see predict.h).
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datafile.h"
#include "internal.h"
#include "predict.h"

struct name_ent {
	const char *name;
	uint32_t id;
};

static int name_eq(const void *entry, const void *key)
{
	return !strcmp(((const struct name_ent *)entry)->name, key);
}

int vp_predict_data_init(struct vp_predict_data *d)
{
	memset(d, 0, sizeof(*d));
	return vp_hashtab_init(&d->index, sizeof(struct name_ent), 0, name_eq);
}

void vp_predict_data_release(struct vp_predict_data *d)
{
	for (size_t i = 0; i < d->nruns; i++) {
		free(d->runs[i].name);
		free(d->runs[i].func);
		free(d->runs[i].gap_ns);
	}
	free(d->runs);
	for (size_t i = 0; i < d->nfuncs; i++)
		free(d->names[i]);
	free(d->names);
	vp_hashtab_release(&d->index);
	memset(d, 0, sizeof(*d));
}

int vp_predict_add_run(struct vp_predict_data *d, const char *name, double size,
		       struct vp_predict_run **ret)
{
	struct vp_predict_run *runs = realloc(d->runs, (d->nruns + 1) * sizeof(*runs));

	if (!runs)
		return -ENOMEM;
	d->runs = runs;
	memset(&runs[d->nruns], 0, sizeof(*runs));
	runs[d->nruns].name = strdup(name);
	if (!runs[d->nruns].name)
		return -ENOMEM;
	runs[d->nruns].size = size;
	*ret = &runs[d->nruns++];
	return 0;
}

static int func_id(struct vp_predict_data *d, const char *fname, uint32_t *id)
{
	uint64_t h = vp_hash_str(fname);
	struct name_ent *e = vp_hashtab_find(&d->index, h, fname);
	char **names;
	int err;

	if (e) {
		*id = e->id;
		return 0;
	}
	names = realloc(d->names, (d->nfuncs + 1) * sizeof(*names));
	if (!names)
		return -ENOMEM;
	d->names = names;
	names[d->nfuncs] = strdup(fname);
	if (!names[d->nfuncs])
		return -ENOMEM;
	err = vp_hashtab_insert(&d->index, h, fname, (void **)&e);
	if (err < 0) {
		free(names[d->nfuncs]);
		return err;
	}
	e->name = names[d->nfuncs];
	e->id = (uint32_t)d->nfuncs;
	*id = e->id;
	d->nfuncs++;
	return 0;
}

int vp_predict_add_sample(struct vp_predict_data *d, struct vp_predict_run *run,
			  const char *fname, double gap_ns)
{
	uint32_t id;
	int err = func_id(d, fname, &id);

	if (err < 0)
		return err;
	/* grow by powers of two: n is a power of two when full */
	if (!(run->n & (run->n - 1))) {
		size_t cap = run->n ? run->n * 2 : 64;
		uint32_t *f = realloc(run->func, cap * sizeof(*f));
		double *g;

		if (!f)
			return -ENOMEM;
		run->func = f;
		g = realloc(run->gap_ns, cap * sizeof(*g));
		if (!g)
			return -ENOMEM;
		run->gap_ns = g;
	}
	run->func[run->n] = id;
	run->gap_ns[run->n++] = gap_ns;
	run->span_ns += gap_ns;
	return 0;
}

/* ---- reading a recording ---- */

struct load_ctx {
	struct vp_predict_data *d;
	struct vp_predict_run *run;
	uint64_t last;
	int have_last;
	int wall;
};

static int on_sample(void *ctx, const struct vp_reader *r, const struct vp_sample *s)
{
	struct load_ctx *c = ctx;
	const char *name = "[unknown]";
	double gap;

	if (s->flags & VP_SAMPLE_KERNEL) {
		name = "[kernel]";
	} else if (s->nframes) {
		const struct vp_frame_def *fd = vp_reader_frame(r, s->frames[0]);

		/* level 0 is the innermost (inlined) function at the address */
		if (fd && fd->nlevels) {
			const struct vp_symbol *sym = vp_reader_symbol(r, fd->levels[0].symbol);

			if (sym && sym->name)
				name = sym->name;
		}
	}
	gap = c->wall && c->have_last && s->time >= c->last ? (double)(s->time - c->last)
							    : (double)s->period;
	c->last = s->time;
	c->have_last = 1;
	return vp_predict_add_sample(c->d, c->run, name, gap);
}

int vp_predict_load(struct vp_predict_data *d, const char *path, int has_size, double size,
		    int wall, char *msg, size_t len)
{
	struct vp_reader *r = NULL;
	struct load_ctx c = { .d = d, .wall = wall };
	struct vp_event buf[256];
	const struct vp_header *h;
	long got;
	int err;

	err = vp_reader_open(path, &r, msg, len);
	if (err < 0)
		return err;
	h = vp_reader_header(r);
	/* auto mode samples its phase 1 only: a part of the run, not all */
	if (h->mode == VP_MODE_AUTO || h->mode == VP_MODE_PROBE) {
		vp_msgf(msg, len, "'%s' was recorded in %s mode, %s: record it with --mode=sample "
		     "or --mode=combined", path, h->mode == VP_MODE_AUTO ? "auto" : "probe",
		     h->mode == VP_MODE_AUTO ? "whose samples cover its first phase only"
					     : "without samples");
		err = -EINVAL;
		goto out;
	}
	if (!wall && h->sampling.event == VP_SEV_CYCLES) {
		vp_msgf(msg, len, "'%s' was sampled on cycles, whose period is no time: use "
		     "--time=wall", path);
		err = -EINVAL;
		goto out;
	}
	if (!has_size) {
		if (!h->has_input_size) {
			vp_msgf(msg, len, "'%s' has no input size (record it with --input-size)",
			     path);
			err = -ENOENT;
			goto out;
		}
		size = (double)h->input_size;
	}
	err = vp_predict_add_run(d, path, size, &c.run);
	if (err < 0)
		goto out;
	vp_reader_set_sample_handler(r, on_sample, &c);
	while ((got = vp_reader_next(r, buf, sizeof(buf) / sizeof(buf[0]))) > 0)
		;
	if (got < 0) {
		err = (int)got;
		if (err == -ENOMEM)
			vp_msgf(msg, len, "'%s': %s", path, strerror(ENOMEM));
		else
			vp_msgf(msg, len, "%s", vp_reader_error(r));
		goto out;
	}
	if (!c.run->n) {
		vp_msgf(msg, len, "'%s' has no samples (record it with --mode=sample)", path);
		err = -ENODATA;
		goto out;
	}
	err = 0;
out:
	vp_reader_free(r);
	return err;
}

/* ---- statistics ---- */

int vp_linfit(const double *x, const double *y, size_t n, struct vp_linfit *f)
{
	double xbar = 0, ybar = 0, sxx = 0, sxy = 0;

	memset(f, 0, sizeof(*f));
	f->n = n;
	if (n < 2)
		return -EDOM;
	/* centred sums: no cancellation for large sizes */
	for (size_t i = 0; i < n; i++) {
		xbar += x[i];
		ybar += y[i];
	}
	xbar /= (double)n;
	ybar /= (double)n;
	for (size_t i = 0; i < n; i++) {
		sxx += (x[i] - xbar) * (x[i] - xbar);
		sxy += (x[i] - xbar) * (y[i] - ybar);
	}
	if (!(sxx > 0))
		return -EDOM;
	f->xbar = xbar;
	f->sxx = sxx;
	f->b1 = sxy / sxx;
	f->b0 = ybar - f->b1 * xbar;
	for (size_t i = 0; i < n; i++) {
		double r = y[i] - (f->b0 + f->b1 * x[i]);

		f->ssr += r * r;
		f->sar += fabs(r);
	}
	return 0;
}

/*
 * Two-sided 95 % critical values t(0.975, df) for df 1..30, to four
 * decimals, as tabulated in the NIST/SEMATECH e-Handbook of Statistical
 * Methods, Section 1.3.6.7.2 (Critical Values of the Student's t
 * Distribution).  Beyond 30, the Cornish-Fisher expansion of Abramowitz
 * and Stegun (1964), 26.7.5, whose error there is below 1e-4.
 */
static const double t975_table[30] = {
	12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
	2.2010,	 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
	2.0796,	 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
};

double vp_t975(unsigned df)
{
	const double z = 1.959963984540054;
	double v = df, z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z;

	if (!df)
		return NAN;
	if (df <= 30)
		return t975_table[df - 1];
	return z + (z3 + z) / (4 * v) + (5 * z5 + 16 * z3 + 3 * z) / (96 * v * v) +
	       (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * v * v * v);
}

double vp_linfit_halfwidth(const struct vp_linfit *f, double x, double extra_var)
{
	double s2, d;

	if (f->n <= 2)
		return NAN;
	s2 = f->ssr / (double)(f->n - 2);
	d = x - f->xbar;
	return vp_t975((unsigned)(f->n - 2)) *
	       sqrt(s2 * (1 + 1.0 / (double)f->n + d * d / f->sxx) + extra_var);
}

/* ---- k-means under the city-block distance ---- */

/* xorshift64*: small, seeded, the same on every machine */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static double rng_unit(uint64_t *s)
{
	return (double)(rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

static double l1(const double *a, const double *b, size_t dim)
{
	double s = 0;

	for (size_t j = 0; j < dim; j++)
		s += fabs(a[j] - b[j]);
	return s;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* one k-means run from a k-means++ start; returns its cost */
static double kmeans_once(const double *x, size_t n, size_t dim, unsigned k, uint64_t *rng,
			  unsigned *assign, double *c, double *dmin, double *scratch)
{
	double cost = 0;

	/* k-means++ (Arthur and Vassilvitskii, 2007) with L1 distances */
	memcpy(c, x + (rng_next(rng) % n) * dim, dim * sizeof(*c));
	for (size_t i = 0; i < n; i++)
		dmin[i] = l1(x + i * dim, c, dim);
	for (unsigned m = 1; m < k; m++) {
		double sum = 0, t;
		size_t pick = n - 1;

		for (size_t i = 0; i < n; i++)
			sum += dmin[i];
		t = rng_unit(rng) * sum;
		for (size_t i = 0; i < n; i++) {
			if (t < dmin[i]) {
				pick = i;
				break;
			}
			t -= dmin[i];
		}
		if (!(sum > 0))
			pick = rng_next(rng) % n;
		memcpy(c + m * dim, x + pick * dim, dim * sizeof(*c));
		for (size_t i = 0; i < n; i++) {
			double dd = l1(x + i * dim, c + m * dim, dim);

			if (dd < dmin[i])
				dmin[i] = dd;
		}
	}
	for (size_t i = 0; i < n; i++)
		assign[i] = k; /* none yet */
	for (unsigned iter = 0; iter < 100; iter++) {
		int changed = 0;

		cost = 0;
		for (size_t i = 0; i < n; i++) {
			unsigned best = 0;
			double bd = HUGE_VAL;

			for (unsigned m = 0; m < k; m++) {
				double dd = l1(x + i * dim, c + m * dim, dim);

				if (dd < bd) {
					bd = dd;
					best = m;
				}
			}
			if (assign[i] != best)
				changed = 1;
			assign[i] = best;
			dmin[i] = bd;
			cost += bd;
		}
		if (!changed)
			break;
		for (unsigned m = 0; m < k; m++) {
			size_t cnt = 0, far = 0;

			for (size_t i = 0; i < n; i++)
				cnt += assign[i] == m;
			if (!cnt) {
				/* an empty cluster takes the point farthest from its own */
				for (size_t i = 1; i < n; i++)
					if (dmin[i] > dmin[far])
						far = i;
				memcpy(c + m * dim, x + far * dim, dim * sizeof(*c));
				dmin[far] = 0;
				continue;
			}
			for (size_t j = 0; j < dim; j++) {
				size_t q = 0;

				for (size_t i = 0; i < n; i++)
					if (assign[i] == m)
						scratch[q++] = x[i * dim + j];
				qsort(scratch, q, sizeof(*scratch), cmp_double);
				c[m * dim + j] = q % 2 ? scratch[q / 2]
						       : (scratch[q / 2 - 1] + scratch[q / 2]) / 2;
			}
		}
	}
	return cost;
}

int vp_kmeans_l1(const double *x, size_t n, size_t dim, unsigned k, unsigned restarts,
		 uint64_t seed, unsigned *assign, double *centers, double *cost)
{
	unsigned *a = NULL;
	double *c = NULL, *dmin = NULL, *scratch = NULL, best = HUGE_VAL;
	uint64_t rng = seed ? seed : 0x9e3779b97f4a7c15ULL;
	int err = -ENOMEM;

	if (!n || !dim || !k || k > n)
		return -EINVAL;
	a = malloc(n * sizeof(*a));
	c = malloc((size_t)k * dim * sizeof(*c));
	dmin = malloc(n * sizeof(*dmin));
	scratch = malloc(n * sizeof(*scratch));
	if (!a || !c || !dmin || !scratch)
		goto out;
	for (unsigned r = 0; r < (restarts ? restarts : 1); r++) {
		double cst = kmeans_once(x, n, dim, k, &rng, a, c, dmin, scratch);

		if (cst < best) {
			best = cst;
			memcpy(assign, a, n * sizeof(*a));
			memcpy(centers, c, (size_t)k * dim * sizeof(*c));
		}
	}
	*cost = best;
	err = 0;
out:
	free(a);
	free(c);
	free(dmin);
	free(scratch);
	return err;
}

/* ---- the model ---- */

static const size_t default_intervals[] = { 10, 20, 50, 100, 200, 500, 1000 };

void vp_predict_opts_init(struct vp_predict_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->intervals = default_intervals;
	o->nintervals = sizeof(default_intervals) / sizeof(default_intervals[0]);
	o->kmin = 1;
	o->kmax = 10; /* the paper's range (Section 6) */
	o->coverage = 0.99;
	o->restarts = 5;
	o->sample_n = 30;
	o->seed = 1;
}

void vp_predict_model_release(struct vp_predict_model *m)
{
	free(m->phases);
	for (int s = 0; s < VP_PREDICT_NSTRATEGIES; s++)
		free(m->dur_var[s]);
	memset(m, 0, sizeof(*m));
}

/* The intervals of the used runs at one size I. */
struct cut {
	size_t n, dim;
	double *x;	 /* n x dim shares */
	size_t *run;	 /* per interval: its run's index among the used ones */
	double *w;	 /* per interval: samples / I (1 but for a run's last) */
	double *dur;	 /* per interval: ns */
	size_t *nsamp;
};

static void cut_release(struct cut *c)
{
	free(c->x);
	free(c->run);
	free(c->w);
	free(c->dur);
	free(c->nsamp);
	memset(c, 0, sizeof(*c));
}

static int make_cut(const struct vp_predict_data *d, const size_t *runs, size_t nruns,
		    const int *dimof, size_t dim, size_t I, struct cut *c)
{
	size_t n = 0, k = 0;

	memset(c, 0, sizeof(*c));
	for (size_t r = 0; r < nruns; r++)
		n += (d->runs[runs[r]].n + I - 1) / I;
	c->n = n;
	c->dim = dim;
	c->x = calloc(n * dim, sizeof(*c->x));
	c->run = malloc(n * sizeof(*c->run));
	c->w = malloc(n * sizeof(*c->w));
	c->dur = calloc(n, sizeof(*c->dur));
	c->nsamp = malloc(n * sizeof(*c->nsamp));
	if (!c->x || !c->run || !c->w || !c->dur || !c->nsamp) {
		cut_release(c);
		return -ENOMEM;
	}
	for (size_t r = 0; r < nruns; r++) {
		const struct vp_predict_run *run = &d->runs[runs[r]];

		for (size_t s = 0; s < run->n; s += I, k++) {
			size_t e = s + I < run->n ? s + I : run->n;

			for (size_t i = s; i < e; i++) {
				int j = dimof[run->func[i]];

				if (j >= 0)
					c->x[k * dim + (size_t)j] += 1.0 / (double)(e - s);
				c->dur[k] += run->gap_ns[i];
			}
			c->run[k] = r;
			c->nsamp[k] = e - s;
			c->w[k] = (double)(e - s) / (double)I;
		}
	}
	return 0;
}

static int cmp_count_desc(const void *a, const void *b, void *ctx)
{
	const double *cnt = ctx;
	double x = cnt[*(const uint32_t *)a], y = cnt[*(const uint32_t *)b];

	if (x != y)
		return x < y ? 1 : -1;
	return (*(const uint32_t *)a > *(const uint32_t *)b) -
	       (*(const uint32_t *)a < *(const uint32_t *)b);
}

/* Coverage-based reduction (Section 5.3): the most sampled functions that
 * together hold @coverage of the samples of the used runs. */
static int reduce(const struct vp_predict_data *d, const size_t *runs, size_t nruns,
		  double coverage, int *dimof, size_t *dim)
{
	double *cnt = calloc(d->nfuncs ? d->nfuncs : 1, sizeof(*cnt)), total = 0, acc = 0;
	uint32_t *order = malloc((d->nfuncs ? d->nfuncs : 1) * sizeof(*order));
	size_t kept = 0;

	if (!cnt || !order) {
		free(cnt);
		free(order);
		return -ENOMEM;
	}
	for (size_t r = 0; r < nruns; r++) {
		const struct vp_predict_run *run = &d->runs[runs[r]];

		for (size_t i = 0; i < run->n; i++)
			cnt[run->func[i]]++;
		total += (double)run->n;
	}
	for (size_t f = 0; f < d->nfuncs; f++) {
		order[f] = (uint32_t)f;
		dimof[f] = -1;
	}
	qsort_r(order, d->nfuncs, sizeof(*order), cmp_count_desc, cnt);
	for (size_t f = 0; f < d->nfuncs && cnt[order[f]] > 0; f++) {
		dimof[order[f]] = (int)kept++;
		acc += cnt[order[f]];
		if (acc >= coverage * total)
			break;
	}
	*dim = kept;
	free(cnt);
	free(order);
	return 0;
}

/* Phases of one clustering: regressions and the score (Section 5.5). */
static int score_phases(const struct cut *c, const unsigned *assign, unsigned k, size_t I,
			const double *sizes, size_t nruns, struct vp_predict_phase *ph,
			double *score)
{
	double *y = malloc(nruns * sizeof(*y)), total = 0;
	int err = 0;

	if (!y)
		return -ENOMEM;
	*score = 0;
	for (size_t i = 0; i < c->n; i++)
		total += (double)c->nsamp[i];
	for (unsigned p = 0; p < k; p++) {
		double samples = 0;

		memset(y, 0, nruns * sizeof(*y));
		ph[p].intervals = 0;
		for (size_t i = 0; i < c->n; i++) {
			if (assign[i] != p)
				continue;
			y[c->run[i]] += c->w[i];
			samples += (double)c->nsamp[i];
			ph[p].intervals += c->w[i];
		}
		ph[p].weight = samples / total;
		err = vp_linfit(sizes, y, nruns, &ph[p].fit);
		if (err < 0)
			break;
		/* residuals in samples (counts x I), so that interval sizes compare */
		*score += ph[p].weight * ph[p].fit.sar * (double)I;
	}
	free(y);
	return err;
}

/* Representative durations of the phases of the chosen clustering (Section 5.5). */
static int durations(const struct cut *c, const unsigned *assign, const double *centers,
		     unsigned k, unsigned sample_n, uint64_t seed, struct vp_predict_phase *ph)
{
	size_t *members = malloc(c->n * sizeof(*members));
	uint64_t rng = seed ^ 0x5851f42d4c957f2dULL;

	if (!members)
		return -ENOMEM;
	for (unsigned p = 0; p < k; p++) {
		size_t m = 0, full = 0, best = SIZE_MAX;
		double bd = HUGE_VAL, sum = 0, sum2 = 0, mean;

		/* full-length intervals first: a run's short last one is no
		 * interval's duration (used only when a phase has nothing else) */
		for (size_t i = 0; i < c->n; i++)
			if (assign[i] == p && c->w[i] >= 1)
				members[m++] = i;
		full = m;
		if (!m)
			for (size_t i = 0; i < c->n; i++)
				if (assign[i] == p)
					members[m++] = i;
		ph[p].rep_ns = ph[p].mean_ns = ph[p].sd_ns = 0;
		ph[p].sampled = 0;
		if (!m)
			continue;
		(void)full;
		for (size_t q = 0; q < m; q++) {
			size_t i = members[q];
			double dd = l1(c->x + i * c->dim, centers + (size_t)p * c->dim, c->dim);

			if (dd < bd) {
				bd = dd;
				best = i;
			}
		}
		ph[p].rep_ns = c->dur[best] / c->w[best];
		/* a random sample without replacement: a partial Fisher-Yates shuffle */
		ph[p].sampled = m < sample_n ? m : sample_n;
		for (size_t q = 0; q < ph[p].sampled; q++) {
			size_t j = q + (size_t)(rng_next(&rng) % (m - q)), t = members[q];
			double v;

			members[q] = members[j];
			members[j] = t;
			v = c->dur[members[q]] / c->w[members[q]];
			sum += v;
			sum2 += v * v;
		}
		mean = sum / (double)ph[p].sampled;
		ph[p].mean_ns = mean;
		if (ph[p].sampled > 1) {
			double v = (sum2 - sum * mean) / (double)(ph[p].sampled - 1);

			ph[p].sd_ns = v > 0 ? sqrt(v) : 0;
		}
	}
	free(members);
	return 0;
}

static void top_functions(const struct cut *c, const unsigned *assign, unsigned k,
			  const int *dimof, size_t nfuncs, struct vp_predict_phase *ph)
{
	for (unsigned p = 0; p < k; p++) {
		double best = -1, tot = 0;

		ph[p].top = UINT32_MAX;
		for (size_t f = 0; f < nfuncs; f++) {
			double s = 0;

			if (dimof[f] < 0)
				continue;
			for (size_t i = 0; i < c->n; i++)
				if (assign[i] == p)
					s += c->x[i * c->dim + (size_t)dimof[f]] * (double)c->nsamp[i];
			if (s > best) {
				best = s;
				ph[p].top = (uint32_t)f;
			}
		}
		for (size_t i = 0; i < c->n; i++)
			if (assign[i] == p)
				tot += (double)c->nsamp[i];
		ph[p].top_share = tot > 0 ? best / tot : 0;
	}
}

int vp_predict_fit(const struct vp_predict_data *d, const unsigned char *use,
		   const struct vp_predict_opts *o, struct vp_predict_model *m)
{
	size_t *runs = malloc((d->nruns ? d->nruns : 1) * sizeof(*runs)), nruns = 0, dim = 0;
	size_t shortest = SIZE_MAX;
	int *dimof = malloc((d->nfuncs ? d->nfuncs : 1) * sizeof(*dimof));
	double *sizes = NULL, *cent = NULL, *bestcent = NULL, best = HUGE_VAL;
	unsigned *assign = NULL, *bestassign = NULL;
	struct vp_predict_phase *ph = NULL;
	struct cut c = { 0 }, bestcut = { 0 };
	int err = -ENOMEM;

	memset(m, 0, sizeof(*m));
	if (!runs || !dimof)
		goto out;
	for (size_t r = 0; r < d->nruns; r++)
		if (!use || use[r]) {
			runs[nruns++] = r;
			if (d->runs[r].n < shortest)
				shortest = d->runs[r].n;
		}
	err = -EDOM;
	if (nruns < 2)
		goto out;
	err = -ENOMEM;
	sizes = malloc(nruns * sizeof(*sizes));
	ph = calloc(o->kmax ? o->kmax : 1, sizeof(*ph));
	if (!sizes || !ph)
		goto out;
	for (size_t r = 0; r < nruns; r++)
		sizes[r] = d->runs[runs[r]].size;
	err = reduce(d, runs, nruns, o->coverage, dimof, &dim);
	if (err < 0)
		goto out;
	m->dims = dim;
	for (size_t ii = 0; ii < o->nintervals; ii++) {
		size_t I = o->intervals[ii];

		/* an interval size that leaves the shortest run less than two
		 * intervals cannot tell its phases apart */
		if (!I || shortest / I < 2)
			continue;
		err = make_cut(d, runs, nruns, dimof, dim, I, &c);
		if (err < 0)
			goto out;
		free(assign);
		free(cent);
		assign = malloc(c.n * sizeof(*assign));
		cent = malloc((size_t)o->kmax * dim * sizeof(*cent));
		if (!assign || !cent) {
			err = -ENOMEM;
			goto out;
		}
		for (unsigned k = o->kmin ? o->kmin : 1; k <= o->kmax && k <= c.n; k++) {
			double cost, score;

			err = vp_kmeans_l1(c.x, c.n, dim, k, o->restarts, o->seed, assign, cent,
					   &cost);
			if (err < 0)
				goto out;
			err = score_phases(&c, assign, k, I, sizes, nruns, ph, &score);
			if (err < 0)
				goto out;
			m->ncandidates++;
			/* the smallest score; on a tie the fewer phases, then the
			 * smaller interval (the first met) */
			if (score < best * (1 - 1e-9)) {
				best = score;
				m->interval = I;
				m->k = k;
				free(bestassign);
				free(bestcent);
				bestassign = assign;
				bestcent = cent;
				assign = malloc(c.n * sizeof(*assign));
				cent = malloc((size_t)o->kmax * dim * sizeof(*cent));
				cut_release(&bestcut);
				bestcut = c;
				/* make_cut again for the next k would be waste: copy */
				memset(&c, 0, sizeof(c));
				err = make_cut(d, runs, nruns, dimof, dim, I, &c);
				if (err < 0 || !assign || !cent) {
					err = -ENOMEM;
					goto out;
				}
			}
		}
		cut_release(&c);
	}
	err = -ENODATA;
	if (!m->k)
		goto out;
	m->score = best;
	m->nruns = nruns;
	err = score_phases(&bestcut, bestassign, m->k, m->interval, sizes, nruns, ph, &best);
	if (!err)
		err = durations(&bestcut, bestassign, bestcent, m->k, o->sample_n, o->seed, ph);
	if (err < 0)
		goto out;
	top_functions(&bestcut, bestassign, m->k, dimof, d->nfuncs, ph);
	/* each run's phase-weighted time, per strategy, regressed on size */
	for (int s = 0; s < VP_PREDICT_NSTRATEGIES; s++) {
		double *y = calloc(nruns, sizeof(*y));

		m->dur_var[s] = calloc(m->k, sizeof(*m->dur_var[s]));
		if (!y || !m->dur_var[s]) {
			free(y);
			err = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < bestcut.n; i++) {
			const struct vp_predict_phase *p = &ph[bestassign[i]];

			y[bestcut.run[i]] += bestcut.w[i] *
					     (s == VP_PREDICT_REPRESENTATIVE ? p->rep_ns : p->mean_ns);
		}
		for (unsigned p = 0; p < m->k; p++)
			if (s == VP_PREDICT_SAMPLE && ph[p].sampled)
				m->dur_var[s][p] =
					ph[p].sd_ns * ph[p].sd_ns / (double)ph[p].sampled;
		err = vp_linfit(sizes, y, nruns, &m->total[s]);
		free(y);
		if (err < 0)
			goto out;
	}
	m->phases = ph;
	ph = NULL;
	err = 0;
out:
	if (err < 0) {
		vp_predict_model_release(m);
		memset(m, 0, sizeof(*m));
	}
	cut_release(&c);
	cut_release(&bestcut);
	free(runs);
	free(dimof);
	free(sizes);
	free(cent);
	free(bestcent);
	free(assign);
	free(bestassign);
	free(ph);
	return err;
}

void vp_predict_at(const struct vp_predict_model *m, double size, enum vp_predict_strategy s,
		   struct vp_prediction *p)
{
	const struct vp_linfit *f = &m->total[s];
	double extra = 0;

	p->ns = f->b0 + f->b1 * size;
	for (unsigned q = 0; q < m->k; q++) {
		const struct vp_linfit *pf = &m->phases[q].fit;
		double cnt = pf->b0 + pf->b1 * size;

		extra += cnt * cnt * m->dur_var[s][q];
	}
	p->half = vp_linfit_halfwidth(f, size, extra);
}

/* Runs by size, then by index: the folds' order. */
struct sized {
	double size;
	size_t run;
};

static int cmp_sized(const void *a, const void *b)
{
	const struct sized *x = a, *y = b;

	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return x->run < y->run ? -1 : x->run > y->run;
}

int vp_predict_loo(const struct vp_predict_data *d, const struct vp_predict_opts *o,
		   struct vp_predict_loo *l)
{
	unsigned char *use = NULL;
	size_t *fold = NULL;
	struct sized *order = NULL;
	int err = -EDOM;

	memset(l, 0, sizeof(*l));
	if (d->nruns < 3)
		return err;
	use = malloc(d->nruns);
	fold = malloc(d->nruns * sizeof(*fold));
	order = malloc(d->nruns * sizeof(*order));
	l->rows = calloc(d->nruns, sizeof(*l->rows));
	if (!use || !fold || !order || !l->rows) {
		err = -ENOMEM;
		goto out;
	}
	l->folds = d->nruns <= VP_PREDICT_MAX_FOLDS ? d->nruns : VP_PREDICT_MAX_FOLDS;
	for (size_t j = 0; j < d->nruns; j++)
		order[j] = (struct sized){ d->runs[j].size, j };
	qsort(order, d->nruns, sizeof(*order), cmp_sized);
	/* each fold spans the sizes; one run each when they are few */
	for (size_t i = 0; i < d->nruns; i++)
		fold[order[i].run] = l->folds == d->nruns ? order[i].run : i % l->folds;
	for (size_t f = 0; f < l->folds; f++) {
		struct vp_predict_model m;

		for (size_t j = 0; j < d->nruns; j++)
			use[j] = fold[j] != f;
		err = vp_predict_fit(d, use, o, &m);
		if (err < 0)
			goto out;
		for (size_t j = 0; j < d->nruns; j++) {
			struct vp_predict_loo_row *row = &l->rows[j];

			if (use[j])
				continue;
			row->size = d->runs[j].size;
			row->actual_ns = d->runs[j].span_ns;
			row->interval = m.interval;
			row->k = m.k;
			for (int s = 0; s < VP_PREDICT_NSTRATEGIES; s++) {
				struct vp_prediction p;

				vp_predict_at(&m, row->size, s, &p);
				row->predicted_ns[s] = p.ns;
				row->rel_err[s] = fabs(p.ns - row->actual_ns) / row->actual_ns;
			}
			l->n++;
		}
		vp_predict_model_release(&m);
	}
	for (int s = 0; s < VP_PREDICT_NSTRATEGIES; s++) {
		double sum = 0, ss = 0;

		for (size_t j = 0; j < l->n; j++)
			sum += l->rows[j].rel_err[s];
		l->mean[s] = sum / (double)l->n;
		for (size_t j = 0; j < l->n; j++)
			ss += (l->rows[j].rel_err[s] - l->mean[s]) *
			      (l->rows[j].rel_err[s] - l->mean[s]);
		l->sd[s] = l->n > 1 ? sqrt(ss / (double)(l->n - 1)) : 0;
	}
	err = 0;
out:
	free(use);
	free(fold);
	free(order);
	if (err < 0)
		vp_predict_loo_release(l);
	return err;
}

void vp_predict_loo_release(struct vp_predict_loo *l)
{
	free(l->rows);
	memset(l, 0, sizeof(*l));
}
