/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * compare.c - profile versus regression (Kumar et al. 2008, §4): evaluate the
 * patterns of one recording on another, the Pattern Set overlap, every
 * significant calling context of either, and Welch's t and F tests on the
 * recorded moments (the incomplete beta function computed here), corrected
 * for their number by Holm's method.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "hashtab.h"

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

static struct vp_test welch_test(const struct vp_stats *a, const struct vp_stats *b)
{
	struct vp_test r = { NAN, NAN, 0.0, NAN, NAN };
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

struct vp_test vp_welch_test(const struct vp_stats *a, const struct vp_stats *b)
{
	struct vp_test r = welch_test(a, b);

	r.p_adj = r.p;
	return r;
}

static struct vp_test f_test(const struct vp_stats *a, const struct vp_stats *b)
{
	struct vp_test r = { NAN, NAN, NAN, NAN, NAN };
	double sa, sb, lo, hi;

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
	/* each tail on its own: 1 - cdf would lose every digit of a small one */
	lo = vp_betai(0.5 * r.df1, 0.5 * r.df2, r.df1 * r.stat / (r.df1 * r.stat + r.df2));
	hi = vp_betai(0.5 * r.df2, 0.5 * r.df1, r.df2 / (r.df1 * r.stat + r.df2));
	r.p = 2.0 * (lo < hi ? lo : hi);
	if (r.p > 1.0)
		r.p = 1.0;
	return r;
}

struct vp_test vp_f_test(const struct vp_stats *a, const struct vp_stats *b)
{
	struct vp_test r = f_test(a, b);

	r.p_adj = r.p;
	return r;
}

/* ---- Holm's correction ---- */

static int cmp_pidx(const void *x, const void *y, void *p)
{
	double a = ((const double *)p)[*(const size_t *)x];
	double b = ((const double *)p)[*(const size_t *)y];

	if (a != b)
		return a < b ? -1 : 1;
	return *(const size_t *)x < *(const size_t *)y ? -1 : 1;
}

/*
 * Holm, "A simple sequentially rejective multiple test procedure" (1979):
 * the i-th smallest of m p-values is multiplied by m - i (from 0), and the
 * results made non-decreasing.  It controls the family-wise error rate
 * under any dependence, unlike Benjamini and Hochberg's false discovery
 * rate, which needs positive dependence to hold.
 */
int vp_holm(const double *p, size_t n, double *ret)
{
	size_t *idx = malloc((n ? n : 1) * sizeof(*idx)), m = 0;
	double run = 0.0;

	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (!isnan(p[i]))
			idx[m++] = i;
	qsort_r(idx, m, sizeof(*idx), cmp_pidx, (void *)p);
	for (size_t i = 0; i < m; i++) {
		double q = (double)(m - i) * p[idx[i]];

		if (q > 1.0)
			q = 1.0;
		if (q > run)
			run = q;
		ret[idx[i]] = run;
	}
	for (size_t i = 0; i < n; i++)
		if (isnan(p[i]))
			ret[i] = NAN;
	free(idx);
	return 0;
}

/* ---- the programs recorded ---- */

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : (path ? path : "");
}

enum vp_compare_program vp_compare_programs(const struct vp_header *a,
					    const struct vp_header *b)
{
	const struct vp_module *x, *y;
	int same_name;

	if (!a->nmodules || !b->nmodules)
		return VP_PROG_UNKNOWN;
	x = &a->modules[0];
	y = &b->modules[0];
	same_name = !strcmp(base_name(x->path), base_name(y->path));
	if (x->build_id_len && y->build_id_len) {
		if (x->build_id_len == y->build_id_len &&
		    !memcmp(x->build_id, y->build_id, x->build_id_len))
			return VP_PROG_SAME;
	} else if (x->size && y->size) {
		if (x->size == y->size && x->path && y->path && !strcmp(x->path, y->path))
			return VP_PROG_SAME;
	} else {
		/* a path alone does not tell a rebuild */
		return same_name ? VP_PROG_UNKNOWN : VP_PROG_OTHER;
	}
	return same_name ? VP_PROG_OTHER_BUILD : VP_PROG_OTHER;
}

/* ---- chains across recordings ---- */

/* Strings interned to small integers, shared by both recordings. */
struct strtab {
	char **s;
	size_t n, cap;
	struct vp_hashtab index; /* of the ids of s[] */
};

struct str_key {
	char *const *s;
	const char *str;
};

static int str_eq(const void *entry, const void *key)
{
	const struct str_key *k = key;

	return !strcmp(k->s[*(const uint32_t *)entry], k->str);
}

static void strtab_init(struct strtab *t)
{
	memset(t, 0, sizeof(*t));
	vp_hashtab_init(&t->index, sizeof(uint32_t), 0, str_eq);
}

static long intern(struct strtab *t, const char *s)
{
	struct str_key k = { t->s, s };
	uint64_t hash = vp_hash_str(s);
	const uint32_t *id = vp_hashtab_find(&t->index, hash, &k);
	void *entry;

	if (id)
		return *id;
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
	k.s = t->s;
	if (vp_hashtab_insert(&t->index, hash, &k, &entry) < 0) {
		free(t->s[t->n]);
		return -ENOMEM;
	}
	*(uint32_t *)entry = (uint32_t)t->n;
	return (long)t->n++;
}

static void strtab_release(struct strtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
	vp_hashtab_release(&t->index);
}

/* One recording and what the matching needs of it. */
struct side {
	const struct vp_compare_input *in;
	uint32_t *twins; /* vp_cct_callsite_twins(), NULL: none */
	uint64_t *key;	 /* per node: its innermost element's key */
	uint32_t *ctx;	 /* per node: its context's id */
};

/* The identity of a call site that survives a new recording. */
static void callsite_key(const struct side *sd, uint32_t id, char *buf, size_t len)
{
	const struct vp_compare_input *in = sd->in;
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
	else if (cs->file && *cs->file && cs->line && sd->twins && sd->twins[id])
		/* calls on one line: their order on it outlives the addresses */
		snprintf(buf, len, "%s:%u#%u", cs->file, cs->line, sd->twins[id]);
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
static int elem_key(struct strtab *t, const struct side *sd, uint32_t func, uint32_t callsite,
		    uint64_t *ret)
{
	char fb[32], cb[1024];
	long f, c;

	f = intern(t, func_key(sd->in, func, fb, sizeof(fb)));
	callsite_key(sd, callsite, cb, sizeof(cb));
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

/* Calling contexts of both recordings: (parent context, element) -> id,
 * in a vp_hashtab keyed by the first two fields. */
struct ctxent {
	uint64_t elem;
	uint32_t parent, id;
};

enum { CTXENT_KEY = offsetof(struct ctxent, id) };

/* The id of context @elem under @parent, a new one if need be. */
static long ctx_id(struct vp_hashtab *t, uint32_t parent, uint64_t elem)
{
	struct ctxent key = { elem, parent, 0 };
	void *entry;
	int ret = vp_hashtab_insert(t, vp_hash_mix(elem, parent), &key, &entry);

	if (ret < 0)
		return ret;
	/* context 0 is the root's */
	if (ret)
		((struct ctxent *)entry)->id = (uint32_t)t->n;
	return ((struct ctxent *)entry)->id;
}

/* Keys and context ids of every node of @sd; parents come before children. */
static int side_keys(struct strtab *st, struct vp_hashtab *ct, struct side *sd)
{
	const struct vp_cct *t = sd->in->tree;
	int err;

	sd->key = malloc(t->nnodes * sizeof(*sd->key));
	sd->ctx = malloc(t->nnodes * sizeof(*sd->ctx));
	if (!sd->key || !sd->ctx)
		return -ENOMEM;
	sd->key[VP_NODE_ROOT] = UINT64_MAX;
	sd->ctx[VP_NODE_ROOT] = 0;
	for (size_t i = 1; i < t->nnodes; i++) {
		const struct vp_cct_node *n = &t->nodes[i];
		long id;

		err = elem_key(st, sd, n->func, n->callsite, &sd->key[i]);
		if (err)
			return err;
		if (n->parent >= i)
			return -EINVAL;
		id = ctx_id(ct, sd->ctx[n->parent], sd->key[i]);
		if (id < 0)
			return (int)id;
		sd->ctx[i] = (uint32_t)id;
	}
	return 0;
}

static void side_release(struct side *sd)
{
	free(sd->twins);
	free(sd->key);
	free(sd->ctx);
}

/* @a's patterns evaluated on @b (Kumar et al. 2008, §4). */
static int compare_patterns(struct vp_compare *c, struct strtab *st, const struct side *sa,
			    const struct side *sb, uint8_t *covered)
{
	const struct vp_analysis *an = sa->in->an;
	const struct vp_cct *tb = sb->in->tree;
	size_t n = tb->nnodes ? tb->nnodes - 1 : 0, maxlen = 1;
	struct keyed *sorted = malloc((n ? n : 1) * sizeof(*sorted));
	uint64_t *chain = NULL;
	int err = -ENOMEM;

	for (size_t i = 0; i < an->npatterns; i++)
		if (an->patterns[i].len > maxlen)
			maxlen = an->patterns[i].len;
	chain = malloc(maxlen * sizeof(*chain));
	if (!sorted || !chain)
		goto out;
	for (size_t i = 1; i < tb->nnodes; i++)
		sorted[i - 1] = (struct keyed){ sb->key[i], (uint32_t)i };
	if (n)
		qsort(sorted, n, sizeof(*sorted), cmp_keyed);
	for (size_t i = 0; i < an->npatterns; i++) {
		const struct vp_pattern *pa = &an->patterns[i];
		struct vp_compare_pattern *cp = &c->patterns[i];
		size_t lo = 0, hi = n;

		cp->a = i;
		cp->in_set_a = pa->in_pattern_set;
		vp_stats_init(&cp->b);
		for (size_t e = 0; e < pa->len; e++) {
			err = elem_key(st, sa, pa->chain[e].func, pa->chain[e].callsite, &chain[e]);
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
				if (x == VP_NODE_ROOT || x == VP_NO_NODE ||
				    sb->key[x] != chain[e - 1])
					break;
				e--;
			}
			if (e > 0)
				continue;
			vp_stats_merge(&cp->b, &tb->nodes[node].stats);
			cp->bnodes++;
			/* an unreliable pattern of A is in no Pattern Set: what
			 * B's set holds there is new */
			if (!pa->unreliable)
				covered[node] = 1;
		}
		cp->vim_b = an->k * vp_stats_stddev(&cp->b) * (double)cp->b.n;
		/* the largest over the patterns the Pattern Set may hold */
		if (!pa->unreliable && cp->vim_b > c->max_vim_b)
			c->max_vim_b = cp->vim_b;
		cp->mean = vp_welch_test(&pa->stats, &cp->b);
		cp->var = vp_f_test(&pa->stats, &cp->b);
	}
	err = 0;
out:
	free(sorted);
	free(chain);
	return err;
}

static int node_flag(const uint8_t *flags, size_t n, uint32_t node)
{
	return node != VP_NO_NODE && node < n && flags[node];
}

/*
 * The contexts significant in A or B.  @node_a/@node_b: per context id,
 * its node on each side, VP_NO_NODE if none.
 */
static int collect_contexts(struct vp_compare *c, const struct side *sa, const struct side *sb,
			    const uint32_t *node_a, const uint32_t *node_b)
{
	const struct vp_analysis *xa = sa->in->an, *xb = sb->in->an;
	size_t na = sa->in->tree->nnodes, nb = sb->in->tree->nnodes;

	c->contexts = calloc(na + nb, sizeof(*c->contexts));
	if (!c->contexts)
		return -ENOMEM;
	for (size_t pass = 0; pass < 2; pass++) {
		const struct side *sd = pass ? sb : sa;

		for (uint32_t i = 1; i < sd->in->tree->nnodes; i++) {
			uint32_t a = node_a[sd->ctx[i]], b = node_b[sd->ctx[i]];
			struct vp_compare_context *x;

			/* a context in both is A's to list */
			if (pass && a != VP_NO_NODE)
				continue;
			if (!node_flag(xa->significant, xa->nnodes, a) &&
			    !node_flag(xb->significant, xb->nnodes, b))
				continue;
			x = &c->contexts[c->ncontexts++];
			x->a = a;
			x->b = b;
			x->hv_a = node_flag(xa->high_variance, xa->nnodes, a);
			x->hv_b = node_flag(xb->high_variance, xb->nnodes, b);
		}
	}
	return 0;
}

/* Every p-value of the comparison corrected for all the others. */
static int correct(struct vp_compare *c)
{
	size_t n = 2 * (c->npatterns + c->ncontexts), k = 0;
	double *p = malloc((n ? n : 1) * sizeof(*p));
	struct vp_test **t = malloc((n ? n : 1) * sizeof(*t));
	int err = -ENOMEM;

	if (!p || !t)
		goto out;
	for (size_t i = 0; i < c->npatterns; i++) {
		t[k++] = &c->patterns[i].mean;
		t[k++] = &c->patterns[i].var;
	}
	for (size_t i = 0; i < c->ncontexts; i++) {
		t[k++] = &c->contexts[i].mean;
		t[k++] = &c->contexts[i].var;
	}
	for (size_t i = 0; i < n; i++) {
		p[i] = t[i]->p;
		c->ntests += !isnan(p[i]);
	}
	err = vp_holm(p, n, p);
	for (size_t i = 0; !err && i < n; i++)
		t[i]->p_adj = p[i];
out:
	free(p);
	free(t);
	return err;
}

/*
 * Whether @sd's node @x stands for a context the other side would have
 * recorded had it run: every function from it up to the first context the
 * other side has is probed there.  @probed_other: per interned name.
 */
static int recordable(const struct side *sd, uint32_t x, const uint32_t *node_other,
		      const uint8_t *probed_other, size_t nnames)
{
	const struct vp_cct *t = sd->in->tree;

	for (; x != VP_NODE_ROOT && x != VP_NO_NODE && node_other[sd->ctx[x]] == VP_NO_NODE;
	     x = t->nodes[x].parent) {
		uint64_t f = sd->key[x] >> 32;

		if (f >= nnames || !probed_other[f])
			return 0;
	}
	return 1;
}

/* NEW, VANISHED or UNSURE for a context high-variance on one side only. */
static enum vp_context_change context_change(const struct vp_compare_context *x, double alpha,
					     int recordable_elsewhere)
{
	/* the CoV rose: the variance grew or the mean fell, significantly */
	int up = (x->var.p_adj < alpha && x->var.stat > 1.0) ||
		 (x->mean.p_adj < alpha && x->mean.stat < 0.0);
	int down = (x->var.p_adj < alpha && x->var.stat < 1.0) ||
		   (x->mean.p_adj < alpha && x->mean.stat > 0.0);

	if (x->hv_b) {
		if (x->a == VP_NO_NODE)
			return recordable_elsewhere ? VP_CTX_NEW : VP_CTX_UNSURE;
		return up ? VP_CTX_NEW : VP_CTX_UNSURE;
	}
	if (x->b == VP_NO_NODE)
		return recordable_elsewhere ? VP_CTX_VANISHED : VP_CTX_UNSURE;
	return down ? VP_CTX_VANISHED : VP_CTX_UNSURE;
}

/* Names of the functions each side probed, interned first. */
static int probed_names(struct strtab *st, const struct vp_compare_input *in, uint8_t **ret,
			size_t *n)
{
	char fb[32];

	for (uint32_t f = 0; in->hdr && f < in->hdr->nfuncs; f++) {
		long id = intern(st, func_key(in, f, fb, sizeof(fb)));

		if (id < 0)
			return (int)id;
		if ((size_t)id >= *n) {
			size_t cap = *n ? *n : 64;
			uint8_t *v;

			while (cap <= (size_t)id)
				cap *= 2;
			v = realloc(*ret, cap);
			if (!v)
				return -ENOMEM;
			memset(v + *n, 0, cap - *n);
			*ret = v;
			*n = cap;
		}
		(*ret)[id] = 1;
	}
	return 0;
}

/* The regression Pattern Set, the overlap, and B's patterns new to A. */
static int pattern_sets(struct vp_compare *c, const struct vp_compare_input *a,
			const struct vp_compare_input *b, const uint8_t *covered)
{
	const struct vp_compare_params *p = &c->params;

	for (size_t i = 0; i < c->npatterns; i++) {
		struct vp_compare_pattern *cp = &c->patterns[i];

		/* A's rule, A's reliability: the pattern is the same either side */
		cp->in_set_b = vp_pattern_in_set(&a->an->params, a->an->patterns[cp->a].unreliable,
						 cp->vim_b, c->max_vim_b);
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
		return -ENOMEM;
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
	return 0;
}

/* What the functions probed on each side are (see recordable). */
struct probed {
	uint8_t *a, *b;
	size_t na, nb;
};

/* The tests of every significant context of either side. */
static int test_contexts(struct vp_compare *c, const struct side *sa, const struct side *sb,
			 uint32_t *node_a, uint32_t *node_b, size_t nctx)
{
	const struct vp_cct *ta = sa->in->tree, *tb = sb->in->tree;
	struct vp_stats none;
	int err;

	memset(node_a, 0xff, (nctx + 1) * sizeof(*node_a));
	memset(node_b, 0xff, (nctx + 1) * sizeof(*node_b));
	for (uint32_t i = 1; i < ta->nnodes; i++)
		node_a[sa->ctx[i]] = i;
	for (uint32_t i = 1; i < tb->nnodes; i++)
		node_b[sb->ctx[i]] = i;
	err = collect_contexts(c, sa, sb, node_a, node_b);
	if (err)
		return err;
	vp_stats_init(&none);
	for (size_t i = 0; i < c->ncontexts; i++) {
		struct vp_compare_context *x = &c->contexts[i];
		const struct vp_stats *xa = x->a != VP_NO_NODE ? &ta->nodes[x->a].stats : &none;
		const struct vp_stats *xb = x->b != VP_NO_NODE ? &tb->nodes[x->b].stats : &none;

		x->mean = vp_welch_test(xa, xb);
		x->var = vp_f_test(xa, xb);
	}
	return 0;
}

/* After the correction: what became of each context, and the verdict. */
static void judge(struct vp_compare *c, const struct side *sa, const struct side *sb,
		  const uint32_t *node_a, const uint32_t *node_b, const struct probed *pr)
{
	for (size_t i = 0; i < c->ncontexts; i++) {
		struct vp_compare_context *x = &c->contexts[i];
		int rec;

		if (x->hv_a == x->hv_b)
			continue;
		rec = x->hv_b ? recordable(sb, x->b, node_a, pr->a, pr->na)
			      : recordable(sa, x->a, node_b, pr->b, pr->nb);
		x->change = context_change(x, c->params.alpha, rec);
		c->nctx_new += x->change == VP_CTX_NEW;
		c->nctx_vanished += x->change == VP_CTX_VANISHED;
		c->nctx_unsure += x->change == VP_CTX_UNSURE;
	}
	if (!c->agree || c->nctx_new || c->nctx_vanished)
		c->verdict = VP_VERDICT_DIFFER;
	else if (c->nctx_unsure)
		c->verdict = VP_VERDICT_CANNOT_TELL;
	else
		c->verdict = VP_VERDICT_AGREE;
}

int vp_compare_run(struct vp_compare *c, const struct vp_compare_input *a,
		   const struct vp_compare_input *b, const struct vp_compare_params *p)
{
	struct side sa = { a, NULL, NULL, NULL }, sb = { b, NULL, NULL, NULL };
	struct probed pr = { NULL, NULL, 0, 0 };
	struct strtab st;
	struct vp_hashtab ct;
	uint32_t *node_a = NULL, *node_b = NULL;
	uint8_t *covered = NULL;
	int err;

	memset(c, 0, sizeof(*c));
	strtab_init(&st);
	vp_hashtab_init(&ct, sizeof(struct ctxent), CTXENT_KEY, NULL);
	err = vp_compare_params_check(p, NULL, 0);
	if (err)
		return err;
	c->params = *p;
	c->npatterns = a->an->npatterns;
	c->patterns = calloc(c->npatterns ? c->npatterns : 1, sizeof(*c->patterns));
	covered = calloc(b->tree->nnodes, 1);
	if (!c->patterns || !covered)
		goto nomem;
	/* the probed functions' names first: see recordable() */
	err = probed_names(&st, a, &pr.a, &pr.na);
	if (!err)
		err = probed_names(&st, b, &pr.b, &pr.nb);
	for (int i = 0; !err && i < 2; i++) {
		struct side *sd = i ? &sb : &sa;

		if (sd->in->reader) {
			sd->twins = vp_cct_callsite_twins(sd->in->tree, sd->in->reader);
			if (!sd->twins && errno)
				goto nomem;
		}
		err = side_keys(&st, &ct, sd);
	}
	if (!err)
		err = compare_patterns(c, &st, &sa, &sb, covered);
	if (!err)
		err = pattern_sets(c, a, b, covered);
	if (err)
		goto out;
	node_a = malloc((ct.n + 1) * sizeof(*node_a));
	node_b = malloc((ct.n + 1) * sizeof(*node_b));
	if (!node_a || !node_b)
		goto nomem;
	err = test_contexts(c, &sa, &sb, node_a, node_b, ct.n);
	if (!err)
		err = correct(c);
	if (err)
		goto out;
	judge(c, &sa, &sb, node_a, node_b, &pr);
	c->program = a->hdr && b->hdr ? vp_compare_programs(a->hdr, b->hdr) : VP_PROG_UNKNOWN;
	goto out;
nomem:
	err = -ENOMEM;
out:
	free(covered);
	free(node_a);
	free(node_b);
	free(pr.a);
	free(pr.b);
	vp_hashtab_release(&ct);
	side_release(&sa);
	side_release(&sb);
	strtab_release(&st);
	if (err)
		vp_compare_release(c);
	return err;
}

void vp_compare_release(struct vp_compare *c)
{
	free(c->patterns);
	free(c->new_b);
	free(c->contexts);
	memset(c, 0, sizeof(*c));
}
