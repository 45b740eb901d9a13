/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * cct.c - the calling-context tree, its exact merge, and the streaming
 * builder that turns entry/exit events into per-node statistics and
 * children covariance matrices in one pass, and the split of a node's
 * variance into on-CPU and off-CPU time.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cct.h"
#include "internal.h"
#include "pairing.h"

/* ---- tree ---- */

/* The index of nodes by (parent, func, callsite): its entries are node
 * ids, its keys the nodes' fields. */
struct node_key {
	const struct vp_cct_node *nodes;
	uint32_t parent, func, callsite;
};

static uint64_t node_hash(uint32_t parent, uint32_t func, uint32_t callsite)
{
	return vp_hash_mix((uint64_t)parent << 32 | func, callsite);
}

static int node_eq(const void *entry, const void *key)
{
	const struct node_key *k = key;
	const struct vp_cct_node *n = &k->nodes[*(const uint32_t *)entry];

	return n->parent == k->parent && n->func == k->func && n->callsite == k->callsite;
}

int vp_cct_init(struct vp_cct *t)
{
	struct vp_cct_node *root;

	memset(t, 0, sizeof(*t));
	t->cap = 64;
	t->nodes = calloc(t->cap, sizeof(*t->nodes));
	if (!t->nodes)
		return -ENOMEM;
	vp_hashtab_init(&t->index, sizeof(uint32_t), 0, node_eq);
	root = &t->nodes[0];
	root->id = VP_NODE_ROOT;
	root->parent = VP_NO_NODE;
	root->func = UINT32_MAX;
	root->callsite = VP_NO_CALLSITE;
	vp_stats_init(&root->stats);
	vp_stats_init(&root->offcpu);
	vp_covar_init(&root->cov);
	t->nnodes = 1;
	t->time_base = VP_TIME_WALL;
	return 0;
}

/* What a node takes beyond its covariance: itself, its index slots (the
 * index is at most half full; a slot is an id and 32 bits of hash), its
 * entry in its parent's children. */
enum { NODE_BYTES = sizeof(struct vp_cct_node) + 7 * sizeof(uint32_t) + sizeof(uint64_t) };

/* What the covariance of @dim variables takes: means and lower triangle. */
static size_t cov_bytes(size_t dim)
{
	return (dim * (dim + 1) / 2 + dim) * sizeof(double);
}

/* Grow @n's covariance to @dim variables, within the tree's budget. */
static int cov_grow(struct vp_cct *t, struct vp_cct_node *n, size_t dim)
{
	int err;

	if (dim <= n->cov.dim)
		return 0;
	/* the triangle overflows size_t long before: the budget says no */
	if (dim > ((size_t)1 << (sizeof(size_t) * 4 - 2)))
		return -E2BIG;
	err = vp_budget_charge(t->budget, cov_bytes(dim) - cov_bytes(n->cov.dim));
	if (!err) {
		err = vp_covar_resize(&n->cov, dim);
		if (err)
			vp_budget_refund(t->budget, cov_bytes(dim) - cov_bytes(n->cov.dim));
	}
	return err;
}

static size_t hist_bytes(const struct vp_hist *h)
{
	return vp_hist_bytes(h);
}

/* Add @dur to @n's histogram, its growth charged to the budget. */
static int hist_add(struct vp_cct *t, struct vp_cct_node *n, uint64_t dur)
{
	size_t before;

	if (vp_hist_add_counted(&n->hist, dur))
		return 0;
	before = hist_bytes(&n->hist);
	if (vp_hist_add(&n->hist, dur, 1))
		return -ENOMEM;
	if (hist_bytes(&n->hist) != before &&
	    vp_budget_charge(t->budget, hist_bytes(&n->hist) - before))
		return -E2BIG;
	return 0;
}

static int hist_merge(struct vp_cct *t, struct vp_cct_node *dn, const struct vp_cct_node *sn)
{
	size_t before = hist_bytes(&dn->hist);

	if (vp_hist_merge(&dn->hist, &sn->hist))
		return -ENOMEM;
	if (hist_bytes(&dn->hist) > before &&
	    vp_budget_charge(t->budget, hist_bytes(&dn->hist) - before))
		return -E2BIG;
	if (hist_bytes(&dn->hist) < before)
		vp_budget_refund(t->budget, before - hist_bytes(&dn->hist));
	return 0;
}

void vp_cct_release(struct vp_cct *t)
{
	size_t i;

	for (i = 0; i < t->nnodes; i++) {
		free(t->nodes[i].children);
		free(t->nodes[i].child_keys);
		vp_budget_refund(t->budget, cov_bytes(t->nodes[i].cov.dim) +
						    (i ? NODE_BYTES : 0));
		vp_covar_release(&t->nodes[i].cov);
		vp_budget_refund(t->budget, hist_bytes(&t->nodes[i].hist));
		vp_hist_release(&t->nodes[i].hist);
		vp_slowest_release(&t->nodes[i].slowest, t->budget);
	}
	free(t->nodes);
	vp_hashtab_release(&t->index);
	memset(t, 0, sizeof(*t));
}

uint32_t vp_cct_find(const struct vp_cct *t, uint32_t parent, uint32_t func, uint32_t callsite)
{
	struct node_key k = { t->nodes, parent, func, callsite };
	const uint32_t *id =
		vp_hashtab_find_eq(&t->index, node_hash(parent, func, callsite), &k, node_eq);

	return id ? *id : VP_NO_NODE;
}

static uint64_t child_key(uint32_t func, uint32_t callsite)
{
	return (uint64_t)func << 32 | callsite;
}

static int add_child_ref(struct vp_cct_node *p, uint32_t id, uint64_t key)
{
	if (p->nchildren == p->children_cap) {
		uint32_t cap = p->children_cap ? p->children_cap * 2 : 4;
		uint32_t *c = realloc(p->children, cap * sizeof(*c));
		uint64_t *k;

		if (!c)
			return -ENOMEM;
		p->children = c;
		k = realloc(p->child_keys, cap * sizeof(*k));
		if (!k)
			return -ENOMEM;
		p->child_keys = k;
		p->children_cap = cap;
	}
	p->child_keys[p->nchildren] = key;
	p->children[p->nchildren++] = id;
	return 0;
}

enum { SCAN_MAX = 16 };

long vp_cct_child(struct vp_cct *t, uint32_t parent, uint32_t func, uint32_t callsite)
{
	const struct vp_cct_node *pn = &t->nodes[parent];
	uint64_t key = child_key(func, callsite);
	struct vp_cct_node *n;
	uint64_t hash;
	void *entry;
	uint32_t id;
	int err;

	if (pn->nchildren <= SCAN_MAX) {
		uint32_t i;

		for (i = 0; i < pn->nchildren; i++)
			if (pn->child_keys[i] == key)
				return pn->children[i];
	}
	id = vp_cct_find(t, parent, func, callsite);
	if (id != VP_NO_NODE)
		return id;
	if (t->nnodes >= VP_NO_NODE - 1)
		return -EOVERFLOW;
	if (vp_budget_charge(t->budget, NODE_BYTES))
		return -E2BIG;
	if (t->nnodes == t->cap) {
		struct vp_cct_node *nodes = realloc(t->nodes, t->cap * 2 * sizeof(*nodes));

		if (!nodes)
			return -ENOMEM;
		t->nodes = nodes;
		t->cap *= 2;
	}
	n = &t->nodes[t->nnodes];
	memset(n, 0, sizeof(*n));
	n->id = (uint32_t)t->nnodes;
	n->parent = parent;
	n->func = func;
	n->callsite = callsite;
	n->depth = t->nodes[parent].depth + 1;
	n->slot = t->nodes[parent].nchildren;
	vp_stats_init(&n->stats);
	vp_stats_init(&n->offcpu);
	vp_covar_init(&n->cov);
	hash = node_hash(parent, func, callsite);
	{
		struct node_key k = { t->nodes, parent, func, callsite };

		err = vp_hashtab_insert(&t->index, hash, &k, &entry);
		if (err < 0)
			return err;
		*(uint32_t *)entry = n->id;
	}
	err = add_child_ref(&t->nodes[parent], n->id, key);
	if (err) {
		struct node_key k = { t->nodes, parent, func, callsite };

		vp_hashtab_remove(&t->index, hash, &k);
		return err;
	}
	t->nnodes++;
	return t->nnodes - 1;
}

long vp_cct_child_slot(const struct vp_cct_node *node, uint32_t child_id)
{
	uint32_t i;

	for (i = 0; i < node->nchildren; i++)
		if (node->children[i] == child_id)
			return (long)vp_cct_var(i);
	return -1;
}

/*
 * A node that became a parent after some invocations had Y_0 = X in each
 * of them: seed the matrix from its duration statistics, exactly.
 */
static int cov_seed(struct vp_cct *t, struct vp_cct_node *n)
{
	int err;

	if (n->cov.n || !n->stats.n)
		return 0;
	err = cov_grow(t, n, 1);
	if (err)
		return err;
	n->cov.n = n->stats.n;
	n->cov.mean[0] = n->stats.mean;
	n->cov.com[0] = n->stats.m2;
	return 0;
}

/*
 * Fold @sn's off-CPU statistics into @dn's, before their durations are
 * merged: Chan's update of a co-moment, C = Ca + Cb + dX dO na nb / n.
 */
static void merge_offcpu(struct vp_cct_node *dn, const struct vp_cct_node *sn)
{
	double na = (double)dn->stats.n, nb = (double)sn->stats.n;

	if (!dn->stats.n) {
		dn->offcpu = sn->offcpu;
		dn->offcpu_com = sn->offcpu_com;
		return;
	}
	dn->offcpu_com += sn->offcpu_com + (sn->stats.mean - dn->stats.mean) *
						   (sn->offcpu.mean - dn->offcpu.mean) *
						   (na * nb / (na + nb));
	vp_stats_merge(&dn->offcpu, &sn->offcpu);
}

static int merge_node(struct vp_cct *dst, uint32_t d, const struct vp_cct *src, uint32_t s,
		      uint32_t *map, const uint32_t *func_map, const uint32_t *cs_map)
{
	const struct vp_cct_node *sn = &src->nodes[s];
	struct vp_covar tmp;
	const struct vp_covar *sc;
	struct vp_cct_node *dn;
	size_t *vmap = NULL;
	uint32_t i;
	int err = 0;

	for (i = 0; i < sn->nchildren; i++) {
		const struct vp_cct_node *c = &src->nodes[sn->children[i]];
		uint32_t cs = c->callsite;
		long id;

		if (cs_map && cs != VP_NO_CALLSITE)
			cs = cs_map[cs];
		id = vp_cct_child(dst, d, func_map ? func_map[c->func] : c->func, cs);

		if (id < 0)
			return (int)id;
		map[c->id] = (uint32_t)id;
	}
	dn = &dst->nodes[d];
	dn->unpaired += sn->unpaired;
	dn->path_calls += sn->path_calls;
	dn->open += sn->open;
	dn->open_total += sn->open_total;
	if (!sn->stats.n || s == VP_NODE_ROOT)
		goto out_stats;
	if (dn->nchildren) {
		err = cov_seed(dst, dn);
		if (!err)
			err = cov_grow(dst, dn, vp_cct_nvars(dn->nchildren));
		if (err)
			return err;
		vp_covar_init(&tmp);
		sc = &sn->cov;
		if (!sn->cov.n) {
			/* A leaf in @src: its only variable is Y_0 = X. */
			err = vp_covar_resize(&tmp, 1);
			if (err)
				return err;
			tmp.n = sn->stats.n;
			tmp.mean[0] = sn->stats.mean;
			tmp.com[0] = sn->stats.m2;
			sc = &tmp;
		}
		vmap = malloc(sc->dim * sizeof(*vmap));
		if (!vmap) {
			vp_covar_release(&tmp);
			return -ENOMEM;
		}
		/* src's "other" variable goes to dst's, even its callees that
		 * dst tracks: a sum does not split again (dst, empty or built
		 * like src, finds them in the same slots) */
		vmap[0] = 0;
		for (i = 1; i < sc->dim; i++)
			vmap[i] = i > VP_CCT_TRACKED
					  ? VP_CCT_TRACKED + 1
					  : vp_cct_var(dst->nodes[map[sn->children[i - 1]]].slot);
		err = vp_covar_merge(&dn->cov, sc, vmap);
		if (!err)
			err = vp_slowest_merge(&dn->slowest, &sn->slowest, dst->keep_slowest,
					       vmap, dst->budget);
		free(vmap);
		vp_covar_release(&tmp);
		if (err)
			return err;
	}
	else
		err = vp_slowest_merge(&dn->slowest, &sn->slowest, dst->keep_slowest, NULL,
				       dst->budget);
	if (err)
		return err;
out_stats:
	if (dst->offcpu && sn->stats.n)
		merge_offcpu(dn, sn);
	vp_stats_merge(&dn->stats, &sn->stats);
	return hist_merge(dst, dn, sn);
}

int vp_cct_merge(struct vp_cct *dst, const struct vp_cct *src)
{
	return vp_cct_merge_mapped(dst, src, NULL, NULL, NULL);
}

int vp_cct_merge_mapped(struct vp_cct *dst, const struct vp_cct *src, const uint32_t *func_map,
			const uint32_t *cs_map, uint32_t *node_map)
{
	uint32_t *map, *stack;
	size_t sp = 0;
	int err = 0;

	if (src->nnodes <= 1) {
		if (node_map && src->nnodes)
			node_map[VP_NODE_ROOT] = VP_NODE_ROOT;
		return 0;
	}
	if (dst->nnodes <= 1) {
		dst->time_base = src->time_base;
		dst->offcpu = src->offcpu;
	} else if (dst->time_base != src->time_base || dst->offcpu != src->offcpu) {
		return -EINVAL; /* durations of different kinds */
	}
	map = node_map ? node_map : malloc(src->nnodes * sizeof(*map));
	stack = malloc(src->nnodes * sizeof(*stack));
	if (!map || !stack) {
		err = -ENOMEM;
		goto out;
	}
	/* Pre-order with an explicit stack: recursion can be deep. */
	map[VP_NODE_ROOT] = VP_NODE_ROOT;
	stack[sp++] = VP_NODE_ROOT;
	while (sp) {
		uint32_t s = stack[--sp], i;
		const struct vp_cct_node *sn = &src->nodes[s];

		err = merge_node(dst, map[s], src, s, map, func_map, cs_map);
		if (err)
			goto out;
		for (i = sn->nchildren; i > 0; i--)
			stack[sp++] = sn->children[i - 1];
	}
out:
	if (map != node_map)
		free(map);
	free(stack);
	return err;
}

/* ---- on-CPU and off-CPU time ---- */

int vp_cct_offcpu_split(const struct vp_cct *t, uint32_t id, struct vp_offcpu_split *ret)
{
	const struct vp_cct_node *n;
	double cxo; /* Cov(X, O) of the node's durations X */

	memset(ret, 0, sizeof(*ret));
	if (id >= t->nnodes)
		return -EINVAL;
	if (!t->offcpu)
		return -ENODATA;
	n = &t->nodes[id];
	if (!n->stats.n || n->offcpu.n != n->stats.n)
		return 0;
	ret->n = n->stats.n;
	cxo = n->offcpu_com / (double)n->stats.n;
	ret->off_mean = n->offcpu.mean;
	ret->off_var = vp_stats_variance(&n->offcpu);
	if (t->time_base == VP_TIME_CPU) {
		/* X = C: W = X + O */
		ret->on_mean = n->stats.mean;
		ret->on_var = vp_stats_variance(&n->stats);
		ret->cov = cxo;
		ret->wall_mean = ret->on_mean + ret->off_mean;
		ret->wall_var = ret->on_var + ret->off_var + 2 * cxo;
	} else {
		/* X = W: C = X - O */
		ret->wall_mean = n->stats.mean;
		ret->wall_var = vp_stats_variance(&n->stats);
		ret->on_mean = ret->wall_mean - ret->off_mean;
		ret->cov = cxo - ret->off_var;
		ret->on_var = ret->wall_var - 2 * cxo + ret->off_var;
	}
	/* rounding can leave a tiny negative variance */
	if (ret->on_var < 0)
		ret->on_var = 0;
	if (ret->wall_var < 0)
		ret->wall_var = 0;
	if (ret->wall_var > 0) {
		ret->off_share = (ret->off_var + ret->cov) / ret->wall_var;
		ret->on_share = 1 - ret->off_share;
	}
	return 0;
}

/* ---- builder ---- */

struct vp_frame {
	uint64_t sp;
	uint64_t t0;
	uint64_t o0; /* off-CPU time at the entry */
	uint32_t node;
	uint32_t func;
	uint32_t cfunc, ccs, cnode; /* last child looked up: loops repeat it */
	uint32_t cslot;		    /* its slot: its node is not touched again */
	uint64_t serial;	    /* which invocation this is (path_seen) */
	uint32_t nest;	     /* return probes pending with this frame's */
	int nest_lost;	     /* the kernel had no room for its return probe */
	double *y;   /* cumulative time per child variable (vp_cct_var() - 1)
		      * in this invocation */
	size_t ny;   /* valid (zeroed) entries of y */
	size_t ycap; /* y is kept across pushes at this depth */
	uint32_t *calls; /* calls per child slot in this invocation */
	size_t ncalls;	 /* valid (zeroed) entries of calls */
	size_t callscap;
};

struct vp_tstate {
	struct vp_frame *frames;
	size_t depth;
	size_t cap;
	uint64_t last_time;
	int seen;
};

struct vp_builder {
	struct vp_cct *t;
	size_t nfuncs;
	struct vp_tstate *threads;
	size_t nthreads;
	uint8_t *csflags;
	size_t ncs;
	double *yvec; /* scratch observation vector */
	size_t yvec_cap;
	int have_offcpu;	 /* the events carry off-CPU times */
	enum vp_time_base base;	 /* of their times */
	uint8_t *uret;		 /* per function: VP_FUNC_URETPROBE */
	uint64_t *nest_lost;	 /* per function: entries it cost */
	vp_invocation_fn on_invocation;
	void *on_invocation_ctx;
	/* per node: the serial of the last parent invocation that called it,
	 * and how many did (its path_calls, added at the end); a dense array
	 * of its own, for a node's struct is a cache line away */
	struct { uint64_t serial, calls; } *path_seen;
	size_t npath_seen;
	uint64_t serial;
	struct vp_build_totals tot;
};

/* MAX_URETPROBE_DEPTH in the kernel's kernel/events/uprobes.c */
enum { URETPROBE_MAX_DEPTH = 64 };

struct vp_builder *vp_builder_new(struct vp_cct *tree, size_t nfuncs, const struct vp_header *hdr)
{
	struct vp_builder *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->t = tree;
	b->nfuncs = nfuncs;
	b->have_offcpu = hdr && hdr->offcpu;
	vp_builder_set_time(b, VP_TIME_WALL);
	for (size_t i = 0; hdr && i < hdr->nfuncs && i < nfuncs; i++) {
		if (!(hdr->funcs[i].flags & VP_FUNC_URETPROBE))
			continue;
		if (!b->uret) {
			b->uret = calloc(nfuncs, 1);
			b->nest_lost = calloc(nfuncs, sizeof(*b->nest_lost));
			if (!b->uret || !b->nest_lost) {
				vp_builder_free(b);
				errno = ENOMEM;
				return NULL;
			}
		}
		b->uret[i] = 1;
	}
	return b;
}

int vp_builder_set_time(struct vp_builder *b, enum vp_time_base base)
{
	if (base != VP_TIME_WALL && base != VP_TIME_CPU && base != VP_TIME_OFFCPU)
		return -EINVAL;
	b->base = base;
	b->t->time_base = base;
	/* in off-CPU time, a node's off-CPU statistics would be its own */
	b->t->offcpu = b->have_offcpu && base != VP_TIME_OFFCPU;
	return 0;
}

void vp_builder_free(struct vp_builder *b)
{
	size_t i, j;

	if (!b)
		return;
	for (i = 0; i < b->nthreads; i++) {
		for (j = 0; j < b->threads[i].cap; j++) {
			free(b->threads[i].frames[j].y);
			free(b->threads[i].frames[j].calls);
		}
		free(b->threads[i].frames);
	}
	free(b->threads);
	free(b->uret);
	free(b->nest_lost);
	free(b->path_seen);
	free(b->csflags);
	free(b->yvec);
	free(b);
}

void vp_builder_on_invocation(struct vp_builder *b, vp_invocation_fn fn, void *ctx)
{
	b->on_invocation = fn;
	b->on_invocation_ctx = ctx;
}

int vp_builder_set_callsite_flags(struct vp_builder *b, uint32_t id, uint32_t flags)
{
	if (vp_grow_zeroed((void **)&b->csflags, &b->ncs, (size_t)id + 1, 1))
		return -ENOMEM;
	b->csflags[id] = (uint8_t)flags;
	return 0;
}

static struct vp_tstate *get_thread(struct vp_builder *b, uint32_t idx)
{
	if (vp_grow_zeroed((void **)&b->threads, &b->nthreads, (size_t)idx + 1,
			   sizeof(*b->threads)))
		return NULL;
	return &b->threads[idx];
}

/* An entry whose exit never came: count it, and forget its partial sums. */
static void retire(struct vp_builder *b, struct vp_tstate *ts)
{
	struct vp_frame *f = &ts->frames[--ts->depth];

	b->t->nodes[f->node].unpaired++;
	b->tot.unpaired_entries++;
	if (f->nest_lost) {
		b->tot.nest_lost++;
		if (++b->nest_lost[f->func] > b->tot.nest_lost_most) {
			b->tot.nest_lost_most = b->nest_lost[f->func];
			b->tot.nest_lost_func = f->func;
		}
	}
}

static int frame_y_reserve(struct vp_frame *f, size_t n)
{
	if (n > f->ycap) {
		size_t cap = f->ycap ? f->ycap : 4;
		double *y;

		while (cap < n)
			cap *= 2;
		y = realloc(f->y, cap * sizeof(*y));
		if (!y)
			return -ENOMEM;
		f->y = y;
		f->ycap = cap;
	}
	if (n > f->ny) {
		memset(f->y + f->ny, 0, (n - f->ny) * sizeof(*f->y));
		f->ny = n;
	}
	return 0;
}

/* Count a call of the child in @slot in frame @f. */
static int frame_count_call(struct vp_frame *f, uint32_t slot)
{
	if (slot >= f->ncalls) {
		if (slot >= f->callscap) {
			size_t cap = f->callscap ? f->callscap : 8;
			uint32_t *c;

			while (cap <= slot)
				cap *= 2;
			c = realloc(f->calls, cap * sizeof(*c));
			if (!c)
				return -ENOMEM;
			f->calls = c;
			f->callscap = cap;
		}
		/* a loop: most frames call a few children, and a call of memset()
		 * for each was a tenth of a build's time */
		for (size_t i = f->ncalls; i <= slot; i++)
			f->calls[i] = 0;
		f->ncalls = slot + 1;
	}
	f->calls[slot]++;
	return 0;
}

static int on_call(struct vp_builder *b, struct vp_tstate *ts, const struct vp_event *ev)
{
	int tail = ev->callsite < b->ncs && (b->csflags[ev->callsite] & VP_CS_TRAMPOLINE);
	uint32_t parent;
	struct vp_frame *f;
	long id;

	/*
	 * Frames at or below this entry's stack pointer are dead: their
	 * returns were lost (longjmp, exception, the kernel's 64 pending
	 * return probes, lost records).  Equal sp is a tail call only when
	 * the return address is the uretprobe trampoline, i.e. the caller's
	 * own return probe is still pending in that slot.
	 */
	while (ts->depth) {
		const struct vp_frame *top = &ts->frames[ts->depth - 1];

		if (!vp_pair_dead_on_call(top->sp, ev->sp, tail))
			break;
		retire(b, ts);
	}
	if (ts->depth) {
		struct vp_frame *pf = &ts->frames[ts->depth - 1];

		parent = pf->node;
		if (pf->cnode != VP_NO_NODE && pf->cfunc == ev->func && pf->ccs == ev->callsite) {
			id = pf->cnode;
		} else {
			id = vp_cct_child(b->t, parent, ev->func, ev->callsite);
			if (id < 0)
				return (int)id;
			pf->cfunc = ev->func;
			pf->ccs = ev->callsite;
			pf->cnode = (uint32_t)id;
			pf->cslot = b->t->nodes[id].slot;
		}
		/* the calls per child only for the callback: counting them is a
		 * store to one more array per call */
		if (b->on_invocation && frame_count_call(pf, pf->cslot))
			return -ENOMEM;
		if ((size_t)id >= b->npath_seen &&
		    vp_grow_zeroed((void **)&b->path_seen, &b->npath_seen, (size_t)id + 1,
				   sizeof(*b->path_seen)))
			return -ENOMEM;
		if (b->path_seen[id].serial != pf->serial) {
			b->path_seen[id].serial = pf->serial;
			b->path_seen[id].calls++;
		}
	} else {
		id = vp_cct_child(b->t, VP_NODE_ROOT, ev->func, ev->callsite);
		if (id < 0)
			return (int)id;
	}
	if (ts->depth == ts->cap) {
		size_t cap = ts->cap ? ts->cap * 2 : 64;
		struct vp_frame *fr = realloc(ts->frames, cap * sizeof(*fr));

		if (!fr)
			return -ENOMEM;
		memset(fr + ts->cap, 0, (cap - ts->cap) * sizeof(*fr));
		ts->frames = fr;
		ts->cap = cap;
	}
	f = &ts->frames[ts->depth++];
	/* the kernel's count of pending return probes: see nesting.c */
	f->nest = ts->depth > 1 ? f[-1].nest : 0;
	f->nest_lost = 0;
	if (b->uret && ev->func < b->nfuncs && b->uret[ev->func]) {
		if (f->nest >= URETPROBE_MAX_DEPTH)
			f->nest_lost = 1;
		else
			f->nest++;
	}
	f->sp = ev->sp;
	f->t0 = ev->time;
	f->o0 = ev->offcpu;
	f->node = (uint32_t)id;
	f->func = ev->func;
	f->cnode = VP_NO_NODE;
	f->ny = 0;
	f->ncalls = 0;
	f->serial = ++b->serial;
	return 0;
}

/*
 * The off-CPU time @off of an invocation of @n that lasted @dur, added
 * before @dur is: the co-moment's Welford update takes the duration's
 * mean before it and the off-CPU time's after,
 * C_n = C_n-1 + (x - mean_x,n-1)(o - mean_o,n).
 */
static void add_offcpu(struct vp_builder *b, struct vp_cct_node *n, uint64_t dur, uint64_t off)
{
	double dx = (double)dur - n->stats.mean;

	/* compensation takes the probe costs from the wall-clock time only:
	 * an invocation off the CPU nearly throughout may end up shorter */
	if (b->base == VP_TIME_WALL && off > dur)
		off = dur;
	vp_stats_add(&n->offcpu, off);
	n->offcpu_com += dx * ((double)off - n->offcpu.mean);
}

static int complete(struct vp_builder *b, struct vp_tstate *ts, const struct vp_event *ev)
{
	struct vp_frame *f = &ts->frames[ts->depth - 1];
	struct vp_cct_node *n = &b->t->nodes[f->node];
	uint64_t time = ev->time;
	uint64_t dur = time >= f->t0 ? time - f->t0 : 0;
	int err;

	if (n->nchildren) {
		size_t k = vp_cct_nvars(n->nchildren) - 1, i;
		double self = (double)dur;

		if (k + 1 > b->yvec_cap) {
			size_t cap = b->yvec_cap ? b->yvec_cap : 16;
			double *y;

			while (cap < k + 1)
				cap *= 2;
			y = realloc(b->yvec, cap * sizeof(*y));
			if (!y)
				return -ENOMEM;
			b->yvec = y;
			b->yvec_cap = cap;
		}
		for (i = 0; i < k; i++) {
			double v = i < f->ny ? f->y[i] : 0.0;

			b->yvec[i + 1] = v;
			self -= v;
		}
		b->yvec[0] = self;
		err = cov_seed(b->t, n);
		if (!err)
			err = cov_grow(b->t, n, k + 1);
		if (err)
			return err;
		vp_covar_add(&n->cov, b->yvec);
	}
	if (b->t->offcpu)
		add_offcpu(b, n, dur, ev->offcpu >= f->o0 ? ev->offcpu - f->o0 : 0);
	err = hist_add(b->t, n, dur);
	if (err)
		return err;
	if (vp_slowest_wants(&n->slowest, b->t->keep_slowest, dur)) {
		err = vp_slowest_offer(&n->slowest, b->t->keep_slowest, b->t->budget, f->t0, dur,
				       ev->thread, f->y, f->ny);
		if (err)
			return err;
	}
	if (b->on_invocation) {
		struct vp_invocation inv = {
			.node = f->node,
			.thread = ev->thread,
			.depth = (uint32_t)(ts->depth - 1),
			.start = f->t0,
			.duration = dur,
			.calls = f->calls,
			.ncalls = (uint32_t)f->ncalls,
			.y = f->y,
			.ny = f->ny,
		};

		err = b->on_invocation(b->on_invocation_ctx, &inv);
		if (err)
			return err;
	}
	vp_stats_add(&n->stats, dur);
	b->tot.invocations++;
	ts->depth--;
	if (ts->depth) {
		struct vp_frame *p = &ts->frames[ts->depth - 1];
		size_t v = vp_cct_var(n->slot);

		err = frame_y_reserve(p, v);
		if (err)
			return err;
		p->y[v - 1] += (double)dur;
	}
	return 0;
}

static int on_return(struct vp_builder *b, struct vp_tstate *ts, const struct vp_event *ev)
{
	uint64_t sp = vp_pair_entry_sp(ev->sp);
	const struct vp_frame *top;

	while (ts->depth && vp_pair_dead_on_return(ts->frames[ts->depth - 1].sp, sp))
		retire(b, ts);
	top = ts->depth ? &ts->frames[ts->depth - 1] : NULL;
	if (!top || top->sp != sp || top->func != ev->func) {
		b->tot.unmatched_exits++;
		return 0;
	}
	return complete(b, ts, ev);
}

int vp_builder_feed(struct vp_builder *b, const struct vp_event *ev, size_t n)
{
	size_t i;
	int err;

	for (i = 0; i < n; i++, ev++) {
		struct vp_tstate *ts = ev->thread < b->nthreads ? &b->threads[ev->thread]
							       : get_thread(b, ev->thread);

		if (!ts)
			return -ENOMEM;
		if (ev->func >= b->nfuncs)
			return -EINVAL;
		if (!ts->seen) {
			ts->seen = 1;
			b->tot.threads++;
		} else if (ev->time < ts->last_time) {
			b->tot.out_of_order++;
		}
		ts->last_time = ev->time;
		if (!b->tot.events || ev->time < b->tot.first_time)
			b->tot.first_time = ev->time;
		if (ev->time > b->tot.last_time)
			b->tot.last_time = ev->time;
		b->tot.events++;
		if (ev->kind == VP_EV_ENTRY) {
			b->tot.entries++;
			err = on_call(b, ts, ev);
		} else {
			b->tot.exits++;
			err = on_return(b, ts, ev);
		}
		if (err)
			return err;
	}
	return 0;
}

int vp_builder_finish(struct vp_builder *b, struct vp_build_totals *ret)
{
	size_t i;

	for (i = 0; i < b->nthreads; i++) {
		struct vp_tstate *ts = &b->threads[i];

		/* per-thread times of another base do not compare */
		uint64_t end = b->base == VP_TIME_WALL ? b->tot.last_time : ts->last_time;

		b->tot.open_at_end += ts->depth;
		while (ts->depth) {
			const struct vp_frame *f = &ts->frames[ts->depth - 1];
			struct vp_cct_node *n = &b->t->nodes[f->node];

			n->open++;
			n->open_total += end > f->t0 ? end - f->t0 : 0;
			retire(b, ts);
		}
	}
	for (i = 0; i < b->t->nnodes; i++)
		vp_slowest_finish(&b->t->nodes[i].slowest);
	for (i = 0; i < b->npath_seen && i < b->t->nnodes; i++) {
		b->t->nodes[i].path_calls += b->path_seen[i].calls;
		b->path_seen[i].calls = 0;
	}
	/* The root's statistics summarise nothing; keep it empty. */
	if (ret)
		*ret = b->tot;
	return 0;
}

static int builder_callsite(void *b, uint32_t id, uint32_t flags)
{
	return vp_builder_set_callsite_flags(b, id, flags);
}

static int builder_feed(void *b, const struct vp_event *ev, size_t n)
{
	return vp_builder_feed(b, ev, n);
}

int vp_build_file(struct vp_reader *r, struct vp_cct *tree, struct vp_build_totals *ret)
{
	return vp_build_file_invocations(r, tree, NULL, NULL, ret);
}

int vp_build_file_invocations(struct vp_reader *r, struct vp_cct *tree, vp_invocation_fn fn,
			      void *ctx, struct vp_build_totals *ret)
{
	const struct vp_header *hdr = vp_reader_header(r);
	struct vp_builder *b = vp_builder_new(tree, hdr->nfuncs, hdr);
	struct vp_event_consumer c = { b, builder_callsite, builder_feed };
	int err;

	if (!b)
		return -ENOMEM;
	vp_builder_on_invocation(b, fn, ctx);
	err = vp_builder_set_time(b, vp_reader_time(r));
	if (!err)
		err = vp_reader_pump(r, &c);
	if (!err)
		err = vp_builder_finish(b, ret);
	vp_builder_free(b);
	return err;
}

/* ---- call sites on one line ---- */

/* A node by what makes it one of twins: context, callee, line, address. */
struct twin {
	uint32_t parent, func;
	const struct vp_callsite *cs;
	uint32_t id; /* call site */
};

static int twin_has_line(const struct vp_callsite *cs)
{
	return cs && !(cs->flags & (VP_CS_NONE | VP_CS_TRAMPOLINE)) && cs->file && *cs->file &&
	       cs->line;
}

static int twin_cmp_group(const struct twin *a, const struct twin *b)
{
	if (a->parent != b->parent)
		return a->parent < b->parent ? -1 : 1;
	if (a->func != b->func)
		return a->func < b->func ? -1 : 1;
	if (a->cs->module != b->cs->module)
		return a->cs->module < b->cs->module ? -1 : 1;
	if (a->cs->line != b->cs->line)
		return a->cs->line < b->cs->line ? -1 : 1;
	return strcmp(a->cs->file, b->cs->file);
}

static int twin_cmp(const void *x, const void *y)
{
	const struct twin *a = x, *b = y;
	int c = twin_cmp_group(a, b);

	if (c)
		return c;
	if (a->cs->offset != b->cs->offset)
		return a->cs->offset < b->cs->offset ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

uint32_t *vp_cct_callsite_twins(const struct vp_cct *t, const struct vp_reader *r)
{
	size_t ncs = vp_reader_ncallsites(r), m = 0;
	struct twin *v;
	uint32_t *ret;

	errno = 0;
	if (!ncs)
		return NULL;
	ret = calloc(ncs, sizeof(*ret));
	v = malloc((t->nnodes ? t->nnodes : 1) * sizeof(*v));
	if (!ret || !v) {
		free(ret);
		free(v);
		errno = ENOMEM;
		return NULL;
	}
	for (uint32_t i = 1; i < t->nnodes; i++) {
		const struct vp_cct_node *n = &t->nodes[i];
		const struct vp_callsite *cs = vp_reader_callsite(r, n->callsite);

		if (twin_has_line(cs))
			v[m++] = (struct twin){ n->parent, n->func, cs, n->callsite };
	}
	qsort(v, m, sizeof(*v), twin_cmp);
	for (size_t i = 0, j; i < m; i = j) {
		uint32_t rank = 1;

		for (j = i + 1; j < m && !twin_cmp_group(&v[i], &v[j]); j++)
			;
		if (v[i].cs->offset == v[j - 1].cs->offset)
			continue;
		/* the first context that has them ranks them */
		for (size_t k = i; k < j; k++) {
			if (k > i && v[k].cs->offset != v[k - 1].cs->offset)
				rank++;
			if (!ret[v[k].id])
				ret[v[k].id] = rank;
		}
	}
	free(v);
	return ret;
}

double *vp_cct_probe_costs(const struct vp_cct *t, const struct vp_header *h)
{
	size_t n = t->nnodes;
	double *below = calloc(n + 1, sizeof(*below));
	double *ret = calloc(n + 1, sizeof(*ret));

	if (!below || !ret) {
		free(below);
		free(ret);
		errno = ENOMEM;
		return NULL;
	}
	/* children have higher ids than their parents: one pass upwards */
	for (size_t id = n; id-- > 1;) {
		const struct vp_cct_node *c = &t->nodes[id];
		double full = 0;

		if (c->func < h->nfuncs && (h->ncosts || h->funcs[c->func].insn_class))
			full = vp_probe_class_cost(h->funcs[c->func].insn_class, h->costs,
						   h->ncosts);
		if (c->stats.n)
			ret[id] = full + below[id] / (double)c->stats.n;
		if (c->parent != VP_NO_NODE && c->parent < n)
			below[c->parent] += (double)c->stats.n * full + below[id];
	}
	free(below);
	return ret;
}

int vp_cct_unreliable(const struct vp_cct *t, const double *cost, uint32_t id)
{
	const struct vp_cct_node *n = &t->nodes[id];

	return cost && id < t->nnodes && n->stats.n && cost[id] > 0 &&
	       n->stats.mean < 10.0 * cost[id];
}
