/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * vcg-merge.c - merging two VCG patterns (Kumar and Pande, §6): the
 * subtrees matched bottom-up by function and type, call contexts
 * united, contributions paired by originator and source with exact
 * statistics of the merged segments (Chan's merge), and the merge cost,
 * the Kolmogorov-Smirnov distance of every node and segment weighted
 * breadth-first, refused beyond tau_S.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "vcg-pattern.h"

/* ---- statistics of a (merged) segment ---- */

static void chan(uint64_t *n, double *mean, double *m2, uint64_t nb, double meanb, double m2b)
{
	double tot, d;

	if (!nb)
		return;
	if (!*n) {
		*n = nb;
		*mean = meanb;
		*m2 = m2b;
		return;
	}
	/* Kumar and Pande, §6.1, in Chan's form */
	tot = (double)*n + (double)nb;
	d = meanb - *mean;
	*m2 += m2b + d * d * ((double)*n * (double)nb / tot);
	*mean += d * ((double)nb / tot);
	*n += nb;
}

/*
 * Y^{H|W} of a merged segment, from its (origin, source) pairs: sources
 * of one originator add up within each of its invocations (their
 * covariances come from its matrix), different originators are disjoint
 * sets of invocations (merged with Chan's formula).  -1 when a covariance
 * was never measured: such segments must not merge.
 */
static int seg_stats(const struct vp_sources *s, const uint32_t *g, uint32_t ng, uint64_t *n,
		     double *mean, double *m2)
{
	*n = 0;
	*mean = *m2 = 0.0;
	for (uint32_t i = 0, j; i < ng; i = j) {
		const struct vp_origin *o = &s->origins[g[2 * i]];
		double mu = 0.0, var = 0.0;

		for (j = i; j < ng && g[2 * j] == g[2 * i]; j++)
			mu += o->sources[g[2 * j + 1]].mean;
		for (uint32_t x = i; x < j; x++) {
			for (uint32_t y = i; y < j; y++) {
				double cv = o->cross[g[2 * x + 1] * o->nsources + g[2 * y + 1]];

				if (isnan(cv))
					return -1;
				var += cv;
			}
		}
		chan(n, mean, m2, o->n, mu, (var > 0.0 ? var : 0.0) * (double)o->n);
	}
	return 0;
}

/* Sorted union of pair lists. */
static uint32_t pairs_union(struct gctx *c, struct wpat *p, const uint32_t *a, uint32_t na,
			    const uint32_t *b, uint32_t nb, uint32_t *n)
{
	uint32_t off = vp_wpat_alloc(c, p, 2 * (na + nb)), i = 0, j = 0, k = 0;
	uint32_t *d;

	*n = 0;
	if (c->err)
		return 0;
	d = p->pool + off;
	while (i < na || j < nb) {
		const uint32_t *v;
		int cmp;

		if (j >= nb)
			cmp = -1;
		else if (i >= na)
			cmp = 1;
		else if (a[2 * i] != b[2 * j])
			cmp = a[2 * i] < b[2 * j] ? -1 : 1;
		else
			cmp = a[2 * i + 1] < b[2 * j + 1] ? -1 : a[2 * i + 1] > b[2 * j + 1];
		if (cmp < 0)
			v = &a[2 * i++];
		else if (cmp > 0)
			v = &b[2 * j++];
		else
			v = &a[2 * i++], j++;
		d[2 * k] = v[0];
		d[2 * k + 1] = v[1];
		k++;
	}
	*n = k;
	p->np = off + 2 * k;
	return off;
}

/* ---- merging two patterns (Section 6) ---- */

struct mctx {
	struct gctx *c;
	const struct wpat *in[2];
	struct wpat *out;
	uint32_t *map[2]; /* input node -> output node */
};

struct ccent {
	uint32_t cc;
	uint32_t side;
	uint32_t child; /* node of that side */
};

static int cmp_ccent(const void *x, const void *y)
{
	const struct ccent *a = x, *b = y;

	if (a->cc != b->cc)
		return a->cc < b->cc ? -1 : 1;
	return (a->side > b->side) - (a->side < b->side);
}

static uint32_t find_cc(const uint32_t *u, uint32_t nu, uint32_t cc)
{
	uint32_t lo = 0, hi = nu;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (u[mid] < cc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Function MergePatternTrees: node @a of the first input and node @b of the
 * second (either may be NONE) become one node of the output; their children
 * are paired by call context with the call-context compatibility check.
 */
static uint32_t merge_trees(struct mctx *m, uint32_t a, uint32_t b, uint32_t parent)
{
	struct gctx *c = m->c;
	const struct wnode *A = a != NONE ? &m->in[0]->nodes[a] : NULL;
	const struct wnode *B = b != NONE ? &m->in[1]->nodes[b] : NULL;
	struct ccent *ent = NULL;
	uint32_t *uniq = NULL, *grp = NULL, *gchild = NULL;
	uint32_t idx, nent = 0, nu = 0, ngroups = 0, kid0, ret = FAIL, n;
	struct wnode *x;

	if (A && B && (A->func != B->func || A->type != B->type))
		return FAIL;
	idx = vp_wpat_node(c, m->out);
	if (c->err)
		return FAIL;
	x = &m->out->nodes[idx];
	x->func = A ? A->func : B->func;
	x->type = A ? A->type : B->type;
	vp_stats_init(&x->st);
	if (A)
		vp_stats_merge(&x->st, &A->st);
	if (B)
		vp_stats_merge(&x->st, &B->st);
	x->parent = parent;
	x->corr[0] = a;
	x->corr[1] = b;
	{
		uint32_t ct0 = vp_wpat_union(c, m->out, A ? m->in[0]->pool + A->ct0 : NULL,
					A ? A->nct : 0, B ? m->in[1]->pool + B->ct0 : NULL,
					B ? B->nct : 0, &n);

		m->out->nodes[idx].ct0 = ct0;
		m->out->nodes[idx].nct = n;
	}
	if (a != NONE)
		m->map[0][a] = idx;
	if (b != NONE)
		m->map[1][b] = idx;
	/* all_ccs with their owners on each side */
	for (int side = 0; side < 2; side++) {
		const struct wnode *P = side ? B : A;
		const struct wpat *in = m->in[side];

		if (!P)
			continue;
		for (uint32_t i = 0; i < P->nkids; i++)
			nent += in->nodes[in->pool[P->kid0 + i]].ncc;
	}
	if (!nent)
		return idx;
	ent = malloc(nent * sizeof(*ent));
	uniq = malloc(nent * sizeof(*uniq));
	grp = malloc(nent * sizeof(*grp));
	gchild = malloc(2 * nent * sizeof(*gchild));
	if (!ent || !uniq || !grp || !gchild) {
		c->err = -ENOMEM;
		goto out;
	}
	nent = 0;
	for (int side = 0; side < 2; side++) {
		const struct wnode *P = side ? B : A;
		const struct wpat *in = m->in[side];

		if (!P)
			continue;
		for (uint32_t i = 0; i < P->nkids; i++) {
			uint32_t ch = in->pool[P->kid0 + i];
			const struct wnode *cn = &in->nodes[ch];

			for (uint32_t j = 0; j < cn->ncc; j++)
				ent[nent++] = (struct ccent){ in->pool[cn->cc0 + j], (uint32_t)side,
							      ch };
		}
	}
	qsort(ent, nent, sizeof(*ent), cmp_ccent);
	for (uint32_t i = 0; i < nent; i++)
		if (!nu || uniq[nu - 1] != ent[i].cc)
			uniq[nu++] = ent[i].cc;
	for (uint32_t i = 0; i < nu; i++)
		grp[i] = NONE;
	/* Lines 11-26: give every call context a group; a child's contexts
	 * must all land in one group, or the trees are incompatible. */
	for (uint32_t i = 0, e = 0; i < nu; i++) {
		if (grp[i] == NONE) {
			grp[i] = ngroups;
			gchild[2 * ngroups] = gchild[2 * ngroups + 1] = NONE;
			ngroups++;
		}
		for (; e < nent && ent[e].cc == uniq[i]; e++) {
			const struct wpat *in = m->in[ent[e].side];
			const struct wnode *cn = &in->nodes[ent[e].child];
			uint32_t g = grp[i], *slot = &gchild[2 * g + ent[e].side];

			for (uint32_t j = 0; j < cn->ncc; j++) {
				uint32_t u = find_cc(uniq, nu, in->pool[cn->cc0 + j]);

				if (grp[u] != NONE && grp[u] != g)
					goto out;
				grp[u] = g;
			}
			/* two children of one side in one group would have to
			 * merge with each other first: incompatible here */
			if (*slot != NONE && *slot != ent[e].child)
				goto out;
			*slot = ent[e].child;
		}
	}
	kid0 = vp_wpat_alloc(c, m->out, ngroups);
	if (c->err)
		goto out;
	m->out->nodes[idx].kid0 = kid0;
	m->out->nodes[idx].nkids = ngroups;
	for (uint32_t g = 0; g < ngroups; g++) {
		uint32_t k = merge_trees(m, gchild[2 * g], gchild[2 * g + 1], idx);
		uint32_t cc0, ncc = 0;

		if (k == FAIL)
			goto out;
		m->out->pool[kid0 + g] = k;
		for (uint32_t i = 0; i < nu; i++)
			ncc += grp[i] == g;
		cc0 = vp_wpat_alloc(c, m->out, ncc);
		if (c->err)
			goto out;
		for (uint32_t i = 0, j = 0; i < nu; i++)
			if (grp[i] == g)
				m->out->pool[cc0 + j++] = uniq[i];
		m->out->nodes[k].cc0 = cc0;
		m->out->nodes[k].ncc = ncc;
	}
	ret = idx;
out:
	free(ent);
	free(uniq);
	free(grp);
	free(gchild);
	return ret;
}

/* A segment of one input with its nodes mapped into the output. */
struct mseg {
	uint64_t hash;
	uint32_t side, seg;
	uint32_t key;	 /* merged segment index */
	uint32_t origin; /* output node it originates at, NONE if external */
};

static uint64_t mseg_hash(const struct mctx *m, int side, const struct wseg *s)
{
	const struct wpat *in = m->in[side];
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ s->ext;

	for (uint32_t i = 0; i < s->len; i++)
		h = (h ^ m->map[side][in->pool[s->n0 + i]]) * 0x100000001b3ULL;
	return h ^ s->len;
}

static int mseg_same(const struct mctx *m, const struct mseg *x, const struct mseg *y)
{
	const struct wseg *a = &m->in[x->side]->segs[x->seg];
	const struct wseg *b = &m->in[y->side]->segs[y->seg];

	if (a->ext != b->ext || a->len != b->len)
		return 0;
	for (uint32_t i = 0; i < a->len; i++)
		if (m->map[x->side][m->in[x->side]->pool[a->n0 + i]] !=
		    m->map[y->side][m->in[y->side]->pool[b->n0 + i]])
			return 0;
	return 1;
}

static int cmp_mseg(const void *x, const void *y)
{
	const struct mseg *a = x, *b = y;

	if (a->hash != b->hash)
		return a->hash < b->hash ? -1 : 1;
	if (a->side != b->side)
		return a->side < b->side ? -1 : 1;
	return (a->seg > b->seg) - (a->seg < b->seg);
}

/* (node, side, key) of a segment passing through a node. */
struct member {
	uint32_t node, side, key;
};

static int cmp_member(const void *x, const void *y)
{
	const struct member *a = x, *b = y;

	if (a->node != b->node)
		return a->node < b->node ? -1 : 1;
	if (a->side != b->side)
		return a->side < b->side ? -1 : 1;
	return (a->key > b->key) - (a->key < b->key);
}

/*
 * Function MergeContributionStructure: pair the two inputs' segments by
 * their node sequences in the output, apply the originating and internal
 * segment compatibility checks, and build the merged segments (statistics
 * included).  @pair[key] returns the input segments of each merged one.
 * Returns 0, or -1 when incompatible.
 */
static int merge_contrib(struct mctx *m, uint32_t **pair_ret)
{
	struct gctx *c = m->c;
	struct wpat *out = m->out;
	uint32_t n0 = m->in[0]->ns, n1 = m->in[1]->ns, ntot = n0 + n1, nkeys = 0;
	struct mseg *ms = NULL;
	struct member *mem = NULL;
	uint32_t *pair = NULL, nmem = 0;
	int ret = -1;

	*pair_ret = NULL;
	if (!ntot)
		return 0;
	ms = malloc(ntot * sizeof(*ms));
	pair = malloc(2 * ntot * sizeof(*pair));
	if (!ms || !pair) {
		c->err = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < ntot; i++) {
		int side = i >= n0;
		uint32_t si = side ? i - n0 : i;
		const struct wseg *s = &m->in[side]->segs[si];

		ms[i].side = (uint32_t)side;
		ms[i].seg = si;
		ms[i].hash = mseg_hash(m, side, s);
		ms[i].origin = s->ext == NONE ? m->map[side][m->in[side]->pool[s->n0]] : NONE;
	}
	qsort(ms, ntot, sizeof(*ms), cmp_mseg);
	/* one key per distinct node sequence; at most one segment per side */
	for (uint32_t i = 0; i < ntot; i++) {
		uint32_t j;

		for (j = i; j-- > 0 && ms[j].hash == ms[i].hash;)
			if (mseg_same(m, &ms[j], &ms[i]))
				break;
		if (j != UINT32_MAX && ms[j].hash == ms[i].hash) {
			ms[i].key = ms[j].key;
			if (pair[2 * ms[i].key + ms[i].side] != NONE)
				goto out; /* duplicate within one side */
			pair[2 * ms[i].key + ms[i].side] = ms[i].seg;
			continue;
		}
		ms[i].key = nkeys;
		pair[2 * nkeys] = pair[2 * nkeys + 1] = NONE;
		pair[2 * nkeys + ms[i].side] = ms[i].seg;
		nkeys++;
	}
	/* Lines 3-8: a segment originating at one side's node needs its
	 * counterpart unless the other side lacks the subtree carrying it. */
	for (uint32_t i = 0; i < ntot; i++) {
		const struct wseg *s = &m->in[ms[i].side]->segs[ms[i].seg];
		int other = !ms[i].side;
		uint32_t second;

		if (s->ext != NONE || pair[2 * ms[i].key + other] != NONE)
			continue;
		if (out->nodes[ms[i].origin].corr[other] == NONE)
			continue;
		second = m->map[ms[i].side][m->in[ms[i].side]->pool[s->n0 + 1]];
		if (out->nodes[second].corr[other] != NONE)
			goto out;
	}
	/* Lines 9-14: nodes inside segments on both sides must be inside the
	 * same (corresponding) segments. */
	for (uint32_t i = 0; i < ntot; i++)
		nmem += m->in[ms[i].side]->segs[ms[i].seg].len;
	mem = malloc((nmem ? nmem : 1) * sizeof(*mem));
	if (!mem) {
		c->err = -ENOMEM;
		goto out;
	}
	nmem = 0;
	for (uint32_t i = 0; i < ntot; i++) {
		const struct wpat *in = m->in[ms[i].side];
		const struct wseg *s = &in->segs[ms[i].seg];

		for (uint32_t k = s->ext == NONE ? 1 : 0; k < s->len; k++)
			mem[nmem++] = (struct member){ m->map[ms[i].side][in->pool[s->n0 + k]],
						       ms[i].side, ms[i].key };
	}
	qsort(mem, nmem, sizeof(*mem), cmp_member);
	for (uint32_t i = 0, j; i < nmem; i = j) {
		uint32_t a0, a1, b0, b1;

		for (j = i; j < nmem && mem[j].node == mem[i].node; j++)
			;
		if (out->nodes[mem[i].node].corr[0] == NONE ||
		    out->nodes[mem[i].node].corr[1] == NONE)
			continue;
		for (a0 = a1 = i; a1 < j && mem[a1].side == 0; a1++)
			;
		b0 = a1;
		b1 = j;
		if (a1 - a0 != b1 - b0)
			goto out;
		for (uint32_t k = 0; k < a1 - a0; k++)
			if (mem[a0 + k].key != mem[b0 + k].key)
				goto out;
	}
	/* Lines 15-23: the merged segments, statistics recomputed exactly. */
	for (uint32_t key = 0; key < nkeys; key++) {
		uint32_t ia = pair[2 * key], ib = pair[2 * key + 1];
		const struct wseg *sa = ia != NONE ? &m->in[0]->segs[ia] : NULL;
		const struct wseg *sb = ib != NONE ? &m->in[1]->segs[ib] : NULL;
		const struct wseg *any = sa ? sa : sb;
		const struct wpat *ain = sa ? m->in[0] : m->in[1];
		int aside = sa ? 0 : 1;
		struct wseg *d = vp_wpat_seg(c, out);
		uint32_t off, n;

		if (!d)
			goto out;
		d->ext = any->ext;
		d->len = any->len;
		d->how = sa ? sa->how : 0;
		if (sb && sb->how > d->how)
			d->how = sb->how;
		off = vp_wpat_alloc(c, out, any->len);
		if (c->err)
			goto out;
		/* vp_wpat_alloc may have moved out->segs too: d stays valid (segs
		 * and pool are separate arrays) */
		for (uint32_t k = 0; k < any->len; k++)
			out->pool[off + k] = m->map[aside][ain->pool[any->n0 + k]];
		d = &out->segs[out->ns - 1];
		d->n0 = off;
		off = pairs_union(c, out, sa ? m->in[0]->pool + sa->g0 : NULL, sa ? sa->ng : 0,
				  sb ? m->in[1]->pool + sb->g0 : NULL, sb ? sb->ng : 0, &n);
		d = &out->segs[out->ns - 1];
		d->g0 = off;
		d->ng = n;
		off = vp_wpat_union(c, out, sa ? m->in[0]->pool + sa->c0 : NULL, sa ? sa->nc : 0,
			       sb ? m->in[1]->pool + sb->c0 : NULL, sb ? sb->nc : 0, &n);
		d = &out->segs[out->ns - 1];
		d->c0 = off;
		d->nc = n;
		if (c->err)
			goto out;
		if (sa && sb) {
			if (seg_stats(c->s, out->pool + d->g0, d->ng, &d->n, &d->mean, &d->m2))
				goto out;
		} else {
			d->n = any->n;
			d->mean = any->mean;
			d->m2 = any->m2;
		}
	}
	*pair_ret = pair;
	pair = NULL;
	ret = 0;
out:
	free(ms);
	free(mem);
	free(pair);
	return ret;
}

/*
 * The merge cost: Kolmogorov-Smirnov D of every node and segment (inputs as
 * Gaussians, a missing one as a point mass at 0), averaged with the
 * weights W breadth-first; beyond tau at any point the merge is refused.
 * Returns the cost, or -1.
 */
static double merge_cost(struct mctx *m, const uint32_t *pair)
{
	const struct wpat *out = m->out;
	uint32_t *queue = malloc((out->nn ? out->nn : 1) * sizeof(*queue));
	uint32_t *sstart = calloc((size_t)out->nn + 1, sizeof(*sstart));
	uint32_t *sorder = malloc((out->ns ? out->ns : 1) * sizeof(*sorder));
	double sw = 0.0, swd = 0.0, sd = 0.0, cost = -1.0;
	uint32_t head = 0, tail = 0, nterms = 0;

	if (!queue || !sstart || !sorder) {
		m->c->err = -ENOMEM;
		goto out;
	}
	/* segments by the node where they enter: the originator, or the
	 * root for a segment from outside */
	for (uint32_t s = 0; s < out->ns; s++) {
		const struct wseg *d = &out->segs[s];

		sstart[(d->ext == NONE ? out->pool[d->n0] : 0) + 1]++;
	}
	for (uint32_t i = 0; i < out->nn; i++)
		sstart[i + 1] += sstart[i];
	for (uint32_t s = 0; s < out->ns; s++) {
		const struct wseg *d = &out->segs[s];
		uint32_t at = d->ext == NONE ? out->pool[d->n0] : 0;

		sorder[sstart[at]++] = s;
	}
	for (uint32_t i = out->nn; i > 0; i--)
		sstart[i] = sstart[i - 1];
	sstart[0] = 0;
	queue[tail++] = 0;
	while (head < tail) {
		uint32_t x = queue[head++];
		const struct wnode *n = &out->nodes[x];
		double mu[2] = { 0, 0 }, sg[2] = { 0, 0 };

		for (int side = 0; side < 2; side++) {
			if (n->corr[side] == NONE)
				continue;
			mu[side] = m->in[side]->nodes[n->corr[side]].st.mean;
			sg[side] = vp_stats_stddev(&m->in[side]->nodes[n->corr[side]].st);
		}
#define ADD_TERM(w, d)                                                                           \
	do {                                                                                     \
		double w_ = (w) > 0.0 ? (w) : 0.0, d_ = (d);                                     \
		sw += w_;                                                                        \
		swd += w_ * d_;                                                                  \
		sd += d_;                                                                        \
		nterms++;                                                                        \
		if ((sw > 0.0 ? swd / sw : sd / nterms) > m->c->tau)                             \
			goto out;                                                                \
	} while (0)
		ADD_TERM((double)n->st.total, vp_ks_gauss(mu[0], sg[0], mu[1], sg[1]));
		for (uint32_t q = sstart[x]; q < sstart[x + 1]; q++) {
			uint32_t s = sorder[q];
			const struct wseg *d = &out->segs[s];
			double smu[2] = { 0, 0 }, ssg[2] = { 0, 0 };

			for (int side = 0; side < 2; side++) {
				const struct wseg *in;

				if (pair[2 * s + side] == NONE)
					continue;
				in = &m->in[side]->segs[pair[2 * s + side]];
				smu[side] = in->mean;
				ssg[side] = in->n ? sqrt(fmax(in->m2, 0.0) / (double)in->n) : 0.0;
			}
			ADD_TERM((double)d->n * d->mean,
				 vp_ks_gauss(smu[0], ssg[0], smu[1], ssg[1]));
		}
#undef ADD_TERM
		for (uint32_t i = 0; i < n->nkids; i++)
			queue[tail++] = out->pool[n->kid0 + i];
	}
	cost = sw > 0.0 ? swd / sw : (nterms ? sd / nterms : 0.0);
out:
	free(queue);
	free(sstart);
	free(sorder);
	return cost;
}

struct wpat *vp_vcg_try_merge(struct gctx *c, const struct wpat *p, const struct wpat *q,
			      double *cost)
{
	struct mctx m = { c, { p, q }, NULL, { NULL, NULL } };
	uint32_t *pair = NULL, root, n;
	struct wpat *out;
	double d;

	if (p->nodes[0].func != q->nodes[0].func || p->nodes[0].type != q->nodes[0].type)
		return NULL;
	/* the root's D alone already decides when it exceeds tau */
	d = vp_ks_gauss(p->nodes[0].st.mean, vp_stats_stddev(&p->nodes[0].st),
			q->nodes[0].st.mean, vp_stats_stddev(&q->nodes[0].st));
	if (d > c->tau)
		return NULL;
	out = vp_wpat_new(c);
	m.out = out;
	m.map[0] = malloc((p->nn ? p->nn : 1) * sizeof(uint32_t));
	m.map[1] = malloc((q->nn ? q->nn : 1) * sizeof(uint32_t));
	if (!out || !m.map[0] || !m.map[1]) {
		c->err = -ENOMEM;
		goto fail;
	}
	memset(m.map[0], 0xff, p->nn * sizeof(uint32_t));
	memset(m.map[1], 0xff, q->nn * sizeof(uint32_t));
	root = merge_trees(&m, 0, 0, NONE);
	if (root == FAIL)
		goto fail;
	{
		uint32_t off = vp_wpat_union(c, out, p->pool + p->nodes[0].cc0, p->nodes[0].ncc,
					q->pool + q->nodes[0].cc0, q->nodes[0].ncc, &n);

		out->nodes[0].cc0 = off;
		out->nodes[0].ncc = n;
	}
	if (c->err || merge_contrib(&m, &pair))
		goto fail;
	*cost = merge_cost(&m, pair);
	if (*cost < 0.0)
		goto fail;
	free(pair);
	free(m.map[0]);
	free(m.map[1]);
	for (uint32_t i = 0; i < out->nn; i++)
		out->nodes[i].corr[0] = out->nodes[i].corr[1] = NONE;
	return out;
fail:
	free(pair);
	free(m.map[0]);
	free(m.map[1]);
	vp_wpat_free(out);
	return NULL;
}
