/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * compare.c - profile versus regression (seed 000 Section 4): evaluate the
 * patterns of one recording on another, the Pattern Set overlap, and
 * Welch's t and F tests on the recorded moments, with the incomplete beta
 * function computed here.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"

void vp_compare_params_default(struct vp_compare_params *p)
{
	p->min_overlap = 0.8;
	p->alpha = 0.05;
	p->symmetric = 0;
}

int vp_compare_params_check(const struct vp_compare_params *p, char *err, size_t errlen)
{
	const char *what = NULL;

	if (!(p->min_overlap >= 0.0 && p->min_overlap <= 1.0))
		what = "min overlap must be between 0 and 1";
	else if (!(p->alpha > 0.0 && p->alpha < 1.0))
		what = "alpha must be greater than 0 and less than 1";
	if (!what)
		return 0;
	if (err && errlen)
		snprintf(err, errlen, "%s", what);
	return -EINVAL;
}

/* ---- the incomplete beta function and the tests ---- */

/*
 * Continued fraction of I_x(a, b) (modified Lentz; converges quickly for
 * x < (a + 1) / (a + b + 2), in about sqrt(max(a, b)) terms).
 */
static double betacf(double a, double b, double x)
{
	const double tiny = 1e-300, eps = 1e-16;
	double qab = a + b, qap = a + 1.0, qam = a - 1.0, c = 1.0, d, h;

	d = 1.0 - qab * x / qap;
	if (fabs(d) < tiny)
		d = tiny;
	d = 1.0 / d;
	h = d;
	for (int m = 1; m <= 1000000; m++) {
		double m2 = 2.0 * m, aa, del;

		aa = m * (b - m) * x / ((qam + m2) * (a + m2));
		d = 1.0 + aa * d;
		if (fabs(d) < tiny)
			d = tiny;
		c = 1.0 + aa / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1.0 / d;
		h *= d * c;
		aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
		d = 1.0 + aa * d;
		if (fabs(d) < tiny)
			d = tiny;
		c = 1.0 + aa / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1.0 / d;
		del = d * c;
		h *= del;
		if (fabs(del - 1.0) < eps)
			break;
	}
	return h;
}

double vp_betai(double a, double b, double x)
{
	double lbt;

	if (!(a > 0.0) || !(b > 0.0) || !(x >= 0.0 && x <= 1.0))
		return NAN;
	if (x == 0.0 || x == 1.0)
		return x;
	/* x^a (1-x)^b / (a B(a, b)), in logarithms */
	lbt = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
	if (x < (a + 1.0) / (a + b + 2.0))
		return exp(lbt) * betacf(a, b, x) / a;
	return 1.0 - exp(lbt) * betacf(b, a, 1.0 - x) / b;
}

double vp_student_t_p(double t, double df)
{
	if (isnan(t) || !(df > 0.0))
		return NAN;
	if (isinf(t))
		return 0.0;
	/* P(|T| >= |t|) = I_{df/(df+t^2)}(df/2, 1/2) */
	return vp_betai(0.5 * df, 0.5, df / (df + t * t));
}

static double sample_var(const struct vp_stats *s)
{
	return s->m2 > 0.0 ? s->m2 / (double)(s->n - 1) : 0.0;
}

struct vp_test vp_welch_test(const struct vp_stats *a, const struct vp_stats *b)
{
	struct vp_test r = { NAN, NAN, 0.0, NAN };
	double va, vb, se2;

	if (a->n < 2 || b->n < 2)
		return r;
	va = sample_var(a) / (double)a->n;
	vb = sample_var(b) / (double)b->n;
	se2 = va + vb;
	if (!(se2 > 0.0)) {
		/* no variance on either side: the means differ or they do not */
		r.stat = b->mean == a->mean ? 0.0 : copysign(INFINITY, b->mean - a->mean);
		r.df1 = (double)(a->n + b->n - 2);
		r.p = b->mean == a->mean ? 1.0 : 0.0;
		return r;
	}
	r.stat = (b->mean - a->mean) / sqrt(se2);
	/* Welch-Satterthwaite */
	r.df1 = se2 * se2 / (va * va / (double)(a->n - 1) + vb * vb / (double)(b->n - 1));
	r.p = vp_student_t_p(r.stat, r.df1);
	return r;
}

struct vp_test vp_f_test(const struct vp_stats *a, const struct vp_stats *b)
{
	struct vp_test r = { NAN, NAN, NAN, NAN };
	double sa, sb, cdf;

	if (a->n < 2 || b->n < 2)
		return r;
	sa = sample_var(a);
	sb = sample_var(b);
	r.df1 = (double)(b->n - 1);
	r.df2 = (double)(a->n - 1);
	if (!(sa > 0.0) || !(sb > 0.0)) {
		r.stat = sa > 0.0 ? 0.0 : (sb > 0.0 ? INFINITY : NAN);
		r.p = sa > 0.0 || sb > 0.0 ? 0.0 : 1.0;
		return r;
	}
	r.stat = sb / sa;
	cdf = vp_betai(0.5 * r.df1, 0.5 * r.df2, r.df1 * r.stat / (r.df1 * r.stat + r.df2));
	r.p = 2.0 * (cdf < 0.5 ? cdf : 1.0 - cdf);
	if (r.p > 1.0)
		r.p = 1.0;
	return r;
}

/* ---- chains across recordings ---- */

/* Strings interned to small integers, shared by both recordings. */
struct strtab {
	char **s;
	size_t n, cap;
	uint32_t *hash;
	size_t mask;
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static long intern(struct strtab *t, const char *s)
{
	size_t i;

	if ((t->n + 1) * 2 > t->mask) {
		size_t mask = t->mask ? t->mask * 2 + 1 : 255;
		uint32_t *h = malloc((mask + 1) * sizeof(*h));

		if (!h)
			return -ENOMEM;
		memset(h, 0xff, (mask + 1) * sizeof(*h));
		for (size_t k = 0; k < t->n; k++) {
			for (i = str_hash(t->s[k]) & mask; h[i] != UINT32_MAX; i = (i + 1) & mask)
				;
			h[i] = (uint32_t)k;
		}
		free(t->hash);
		t->hash = h;
		t->mask = mask;
	}
	for (i = str_hash(s) & t->mask; t->hash[i] != UINT32_MAX; i = (i + 1) & t->mask)
		if (!strcmp(t->s[t->hash[i]], s))
			return t->hash[i];
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		char **v = realloc(t->s, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->s = v;
		t->cap = cap;
	}
	t->s[t->n] = strdup(s);
	if (!t->s[t->n])
		return -ENOMEM;
	t->hash[i] = (uint32_t)t->n;
	return (long)t->n++;
}

static void strtab_release(struct strtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
	free(t->hash);
}

/* The identity of a call site that survives a new recording. */
static void callsite_key(const struct vp_compare_input *in, uint32_t id, char *buf, size_t len)
{
	const struct vp_callsite *cs = NULL;

	if (id == VP_NO_CALLSITE) {
		snprintf(buf, len, "-");
		return;
	}
	if (in->reader)
		cs = vp_reader_callsite(in->reader, id);
	if (!in->reader || !cs)
		snprintf(buf, len, "#%u", id);
	else if (cs->flags & VP_CS_NONE)
		snprintf(buf, len, "-");
	else if (cs->flags & VP_CS_TRAMPOLINE)
		snprintf(buf, len, "(tail call)");
	else if (cs->file && *cs->file && cs->line)
		snprintf(buf, len, "%s:%u", cs->file, cs->line);
	else if (cs->caller && *cs->caller)
		snprintf(buf, len, "%s", cs->caller);
	else
		snprintf(buf, len, "%d+0x%llx", cs->module, (unsigned long long)cs->offset);
}

static const char *func_key(const struct vp_compare_input *in, uint32_t func, char *buf,
			    size_t len)
{
	if (in->hdr && func < in->hdr->nfuncs && in->hdr->funcs[func].name)
		return in->hdr->funcs[func].name;
	snprintf(buf, len, "#%u", func);
	return buf;
}

/* (function id, call-site id) of an element, as one 64-bit key. */
static int elem_key(struct strtab *t, const struct vp_compare_input *in, uint32_t func,
		    uint32_t callsite, uint64_t *ret)
{
	char fb[32], cb[1024];
	long f, c;

	f = intern(t, func_key(in, func, fb, sizeof(fb)));
	callsite_key(in, callsite, cb, sizeof(cb));
	c = f < 0 ? f : intern(t, cb);
	if (c < 0)
		return (int)c;
	*ret = (uint64_t)f << 32 | (uint64_t)c;
	return 0;
}

/* A node of B under the key of its innermost element. */
struct keyed {
	uint64_t key;
	uint32_t node;
};

static int cmp_keyed(const void *x, const void *y)
{
	const struct keyed *a = x, *b = y;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return (a->node > b->node) - (a->node < b->node);
}

int vp_compare_run(struct vp_compare *c, const struct vp_compare_input *a,
		   const struct vp_compare_input *b, const struct vp_compare_params *p)
{
	const struct vp_cct *tb = b->tree;
	struct strtab st = { 0 };
	uint64_t *bkey = NULL, *chain = NULL;
	struct keyed *sorted = NULL;
	uint8_t *covered = NULL;
	size_t maxlen = 1;
	int err;

	memset(c, 0, sizeof(*c));
	err = vp_compare_params_check(p, NULL, 0);
	if (err)
		return err;
	c->params = *p;
	c->npatterns = a->an->npatterns;
	c->patterns = calloc(c->npatterns ? c->npatterns : 1, sizeof(*c->patterns));
	bkey = malloc(tb->nnodes * sizeof(*bkey));
	sorted = malloc(tb->nnodes * sizeof(*sorted));
	covered = calloc(tb->nnodes, 1);
	if (!c->patterns || !bkey || !sorted || !covered)
		goto nomem;
	for (size_t i = 0; i < a->an->npatterns; i++)
		if (a->an->patterns[i].len > maxlen)
			maxlen = a->an->patterns[i].len;
	chain = malloc(maxlen * sizeof(*chain));
	if (!chain)
		goto nomem;
	/* every node of B by its innermost element, for the lookups below */
	bkey[VP_NODE_ROOT] = UINT64_MAX;
	for (size_t i = 1; i < tb->nnodes; i++) {
		err = elem_key(&st, b, tb->nodes[i].func, tb->nodes[i].callsite, &bkey[i]);
		if (err)
			goto out;
		sorted[i - 1] = (struct keyed){ bkey[i], (uint32_t)i };
	}
	if (tb->nnodes > 1)
		qsort(sorted, tb->nnodes - 1, sizeof(*sorted), cmp_keyed);
	for (size_t i = 0; i < a->an->npatterns; i++) {
		const struct vp_pattern *pa = &a->an->patterns[i];
		struct vp_compare_pattern *cp = &c->patterns[i];
		size_t n = tb->nnodes ? tb->nnodes - 1 : 0, lo = 0, hi = n;

		cp->a = i;
		cp->in_set_a = pa->in_pattern_set;
		vp_stats_init(&cp->b);
		for (size_t e = 0; e < pa->len; e++) {
			err = elem_key(&st, a, pa->chain[e].func, pa->chain[e].callsite, &chain[e]);
			if (err)
				goto out;
		}
		/* nodes of B whose context ends with the chain */
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (sorted[mid].key < chain[pa->len - 1])
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < n && sorted[lo].key == chain[pa->len - 1]; lo++) {
			uint32_t node = sorted[lo].node, x = node;
			size_t e = pa->len - 1;

			while (e > 0) {
				x = tb->nodes[x].parent;
				if (x == VP_NODE_ROOT || x == VP_NO_NODE || bkey[x] != chain[e - 1])
					break;
				e--;
			}
			if (e > 0)
				continue;
			vp_stats_merge(&cp->b, &tb->nodes[node].stats);
			cp->bnodes++;
			covered[node] = 1;
		}
		cp->vim_b = a->an->k * vp_stats_stddev(&cp->b) * (double)cp->b.n;
		if (cp->vim_b > c->max_vim_b)
			c->max_vim_b = cp->vim_b;
		cp->mean = vp_welch_test(&pa->stats, &cp->b);
		cp->var = vp_f_test(&pa->stats, &cp->b);
	}
	/* the regression Pattern Set and the overlap */
	for (size_t i = 0; i < c->npatterns; i++) {
		struct vp_compare_pattern *cp = &c->patterns[i];

		cp->in_set_b = c->max_vim_b > 0.0 && cp->vim_b >= a->an->params.beta * c->max_vim_b;
		c->nset_a += cp->in_set_a != 0;
		c->nset_b += cp->in_set_b != 0;
		c->ncommon += cp->in_set_a && cp->in_set_b;
	}
	c->overlap = c->nset_a ? (double)c->ncommon / (double)c->nset_a : (c->nset_b ? 0.0 : 1.0);
	c->overlap_b = c->nset_b ? (double)c->ncommon / (double)c->nset_b : (c->nset_a ? 0.0 : 1.0);
	c->agree = c->overlap >= p->min_overlap &&
		   (!p->symmetric || c->overlap_b >= p->min_overlap);
	/* B's own dominant patterns that no pattern of A accounts for */
	c->new_b = calloc(b->an->npatterns ? b->an->npatterns : 1, sizeof(*c->new_b));
	if (!c->new_b)
		goto nomem;
	for (size_t i = 0; i < b->an->npatterns; i++) {
		const struct vp_pattern *pb = &b->an->patterns[i];
		size_t k;

		if (!pb->in_pattern_set)
			continue;
		for (k = 0; k < pb->nnodes && !covered[pb->nodes[k]]; k++)
			;
		if (k == pb->nnodes)
			c->new_b[c->nnew++] = i;
	}
	err = 0;
	goto out;
nomem:
	err = -ENOMEM;
out:
	free(bkey);
	free(sorted);
	free(covered);
	free(chain);
	strtab_release(&st);
	if (err)
		vp_compare_release(c);
	return err;
}

void vp_compare_release(struct vp_compare *c)
{
	free(c->patterns);
	free(c->new_b);
	memset(c, 0, sizeof(*c));
}
