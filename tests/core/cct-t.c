/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * cct-t.c - tests for core/cct.c on synthetic event streams whose
 * answers are known by construction: statistics and the covariance
 * identity, pairing by stack pointer (longjmp, tail call, more pending
 * returns than the kernel keeps, unmatched exits), threads, and exact
 * tree merges; off-CPU statistics and the on/off-CPU split of a node's
 * variance against values computed by hand, in wall-clock and on-CPU
 * time, and their exact merge.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/cct.h"
#include "tests/tap/basic.h"

enum { NFUNCS = 8, MAXEV = 16384 };
enum { F_P, F_A, F_B, F_Q, F_R, F_S, F_T, F_REC };
enum { CS_NONE, CS_A, CS_B, CS_TRAMP, CS_Q, CS_R, CS_S, CS_REC };

static struct vp_event evs[MAXEV];
static size_t nev;

static void ent(uint32_t thread, uint32_t func, uint32_t cs, uint64_t sp, uint64_t t)
{
	evs[nev++] = (struct vp_event){ .time = t, .sp = sp, .func = func, .callsite = cs,
					.thread = thread, .kind = VP_EV_ENTRY };
}

/* @sp is the entry's stack pointer; the return's is 8 higher. */
static void ret(uint32_t thread, uint32_t func, uint64_t sp, uint64_t t)
{
	evs[nev++] = (struct vp_event){ .time = t, .sp = sp + 8, .func = func,
					.thread = thread, .kind = VP_EV_EXIT };
}

static int build(struct vp_cct *t, const struct vp_event *ev, size_t n,
		 struct vp_build_totals *tot)
{
	struct vp_builder *b;
	int err;

	b = vp_builder_new(t, NFUNCS, NULL);
	if (!b)
		bail("out of memory");
	vp_builder_set_callsite_flags(b, CS_TRAMP, VP_CS_TRAMPOLINE);
	err = vp_builder_feed(b, ev, n);
	if (!err)
		err = vp_builder_finish(b, tot);
	vp_builder_free(b);
	return err;
}

/* build() with off-CPU times in the events, durations in @base. */
static int build_base(struct vp_cct *t, const struct vp_event *ev, size_t n, enum vp_time_base base)
{
	struct vp_header h = { 0 };
	struct vp_builder *b;
	int err;

	h.offcpu = 1;
	b = vp_builder_new(t, NFUNCS, &h);
	if (!b)
		bail("out of memory");
	err = vp_builder_set_time(b, base);
	if (!err)
		err = vp_builder_feed(b, ev, n);
	if (!err)
		err = vp_builder_finish(b, NULL);
	vp_builder_free(b);
	return err;
}

static const struct vp_cct_node *node_at(const struct vp_cct *t, uint32_t parent, uint32_t func,
					 uint32_t cs)
{
	uint32_t id = vp_cct_find(t, parent, func, cs);

	return id == VP_NO_NODE ? NULL : &t->nodes[id];
}

/* P calls A always and B on odd invocations; self time between calls. */
static const uint64_t a_dur[] = { 10, 20, 30, 40 };
static const uint64_t b_dur[] = { 0, 50, 0, 70 };
static const uint64_t s_dur[] = { 5, 5, 15, 5 };

static void emit_parent_stream(uint32_t thread, int from, int to, uint64_t *clock)
{
	int i;

	for (i = from; i < to; i++) {
		uint64_t t = *clock;

		ent(thread, F_P, CS_NONE, 1000, t);
		t += s_dur[i];
		ent(thread, F_A, CS_A, 980, t);
		t += a_dur[i];
		ret(thread, F_A, 980, t);
		if (b_dur[i]) {
			ent(thread, F_B, CS_B, 980, t);
			t += b_dur[i];
			ret(thread, F_B, 980, t);
		}
		ret(thread, F_P, 1000, t);
		*clock = t + 100;
	}
}

static void test_stats_and_covariance(void)
{
	struct vp_build_totals tot;
	const struct vp_cct_node *p, *a, *b;
	double x[4], y[4][3], m[3] = { 0 }, mx = 0, vx = 0, c01 = 0;
	uint64_t clock = 0;
	struct vp_cct t;
	int i, j;

	nev = 0;
	emit_parent_stream(0, 0, 4, &clock);
	vp_cct_init(&t);
	is_int(0, build(&t, evs, nev, &tot), "basic stream builds");
	p = node_at(&t, VP_NODE_ROOT, F_P, CS_NONE);
	ok(p != NULL, "P is a top-level node");
	if (!p)
		bail("no P node");
	a = node_at(&t, p->id, F_A, CS_A);
	b = node_at(&t, p->id, F_B, CS_B);
	ok(a && b, "A and B are children of P");
	for (i = 0; i < 4; i++) {
		y[i][0] = (double)s_dur[i];
		y[i][1] = (double)a_dur[i];
		y[i][2] = (double)b_dur[i];
		x[i] = y[i][0] + y[i][1] + y[i][2];
		mx += x[i] / 4;
		for (j = 0; j < 3; j++)
			m[j] += y[i][j] / 4;
	}
	for (i = 0; i < 4; i++) {
		vx += (x[i] - mx) * (x[i] - mx) / 4;
		c01 += (y[i][0] - m[0]) * (y[i][1] - m[1]) / 4;
	}
	is_uint(4, p->stats.n, "P count");
	is_double(mx, p->stats.mean, 1e-9, "P mean = %g", mx);
	is_double(vx, vp_stats_variance(&p->stats), 1e-9, "P variance = %g", vx);
	is_uint(4, a->stats.n, "A count");
	is_uint(2, b->stats.n, "B count (called on 2 of 4 invocations)");
	is_double(60.0, b->stats.mean, 1e-9, "B mean");
	is_uint(3, p->cov.dim, "P has 3 covariance variables (self, A, B)");
	is_double(vx, vp_covar_sum(&p->cov), 1e-9, "sum of P's matrix equals its variance");
	is_double(c01, vp_covar_get(&p->cov, 0, 1), 1e-9, "C[self][A] matches two-pass");
	is_uint(10, tot.invocations, "all 10 invocations paired");
	is_uint(0, tot.unpaired_entries, "nothing unpaired");
	vp_cct_release(&t);
}

static void test_longjmp(void)
{
	struct vp_build_totals tot;
	const struct vp_cct_node *p, *q, *r, *s;
	struct vp_cct t;

	/* P calls Q calls R; R longjmps back into P, which then calls S
	 * from the same stack depth Q was called from. */
	nev = 0;
	ent(0, F_P, CS_NONE, 1000, 0);
	ent(0, F_Q, CS_Q, 980, 10);
	ent(0, F_R, CS_R, 960, 20);
	ent(0, F_S, CS_S, 980, 50);
	ret(0, F_S, 980, 70);
	ret(0, F_P, 1000, 100);
	vp_cct_init(&t);
	is_int(0, build(&t, evs, nev, &tot), "longjmp stream builds");
	p = node_at(&t, VP_NODE_ROOT, F_P, CS_NONE);
	q = p ? node_at(&t, p->id, F_Q, CS_Q) : NULL;
	r = q ? node_at(&t, q->id, F_R, CS_R) : NULL;
	s = p ? node_at(&t, p->id, F_S, CS_S) : NULL;
	ok(p && q && r && s, "longjmp: all nodes exist");
	if (!p || !q || !r || !s)
		bail("missing nodes");
	is_uint(1, p->stats.n, "longjmp: P paired");
	is_uint(100, p->stats.total, "longjmp: P duration exact");
	is_uint(0, q->stats.n, "longjmp: Q has no (wrong) duration");
	is_uint(1, q->unpaired, "longjmp: Q counted unpaired");
	is_uint(1, r->unpaired, "longjmp: R counted unpaired");
	is_uint(20, s->stats.total, "longjmp: S paired after the jump");
	is_uint(2, tot.unpaired_entries, "longjmp: 2 unpaired entries");
	vp_cct_release(&t);
}

static void test_tail_call(void)
{
	struct vp_build_totals tot;
	const struct vp_cct_node *p, *tc;
	struct vp_cct t;

	/* P tail-calls T: same sp, return address = trampoline; both
	 * returns arrive together, innermost first. */
	nev = 0;
	ent(0, F_P, CS_NONE, 1000, 0);
	ent(0, F_T, CS_TRAMP, 1000, 30);
	ret(0, F_T, 1000, 80);
	ret(0, F_P, 1000, 80);
	vp_cct_init(&t);
	is_int(0, build(&t, evs, nev, &tot), "tail-call stream builds");
	p = node_at(&t, VP_NODE_ROOT, F_P, CS_NONE);
	tc = p ? node_at(&t, p->id, F_T, CS_TRAMP) : NULL;
	ok(tc != NULL, "tail call: T is a child of P");
	is_uint(80, p ? p->stats.total : 0, "tail call: P includes T");
	is_uint(50, tc ? tc->stats.total : 0, "tail call: T duration exact");
	is_uint(0, tot.unpaired_entries + tot.unmatched_exits, "tail call: all paired");

	/* Without the trampoline mark, equal sp means P's frame is gone. */
	nev = 0;
	ent(0, F_P, CS_NONE, 1000, 0);
	ent(0, F_S, CS_S, 1000, 30);
	ret(0, F_S, 1000, 80);
	vp_cct_release(&t);
	vp_cct_init(&t);
	build(&t, evs, nev, &tot);
	is_uint(1, tot.unpaired_entries, "equal sp, real return address: P retired");
	ok(node_at(&t, VP_NODE_ROOT, F_S, CS_S) != NULL, "... and S is top-level");
	vp_cct_release(&t);
}

static void test_deep_recursion(void)
{
	struct vp_build_totals tot;
	const struct vp_cct_node *n;
	struct vp_cct t;
	uint32_t parent = VP_NODE_ROOT;
	int d, paired = 0, unpaired = 0, exact = 1;

	/* Depth 100, but the kernel keeps only 64 pending return probes:
	 * frames 65..100 have entries and no returns. */
	nev = 0;
	for (d = 1; d <= 100; d++)
		ent(0, F_REC, d == 1 ? CS_NONE : CS_REC, 100000 - 64 * (uint64_t)d,
		    (uint64_t)d * 10);
	for (d = 64; d >= 1; d--)
		ret(0, F_REC, 100000 - 64 * (uint64_t)d, 10000 - (uint64_t)d * 10);
	vp_cct_init(&t);
	is_int(0, build(&t, evs, nev, &tot), "deep recursion builds");
	for (d = 1; d <= 100; d++) {
		n = node_at(&t, parent, F_REC, d == 1 ? CS_NONE : CS_REC);
		if (!n)
			break;
		paired += (int)n->stats.n;
		unpaired += (int)n->unpaired;
		if (d <= 64 && n->stats.total != 10000 - 20 * (uint64_t)d)
			exact = 0;
		parent = n->id;
	}
	is_int(64, paired, "recursion: 64 invocations paired");
	is_int(36, unpaired, "recursion: 36 deeper invocations unpaired");
	ok(exact, "recursion: every paired duration exact");
	is_uint(36, tot.unpaired_entries, "recursion: totals agree");
	vp_cct_release(&t);
}

static void test_unmatched_and_open(void)
{
	struct vp_build_totals tot;
	struct vp_cct t;

	nev = 0;
	ret(0, F_A, 500, 5);
	ent(0, F_P, CS_NONE, 1000, 10);
	ent(0, F_A, CS_A, 980, 20);
	vp_cct_init(&t);
	build(&t, evs, nev, &tot);
	is_uint(1, tot.unmatched_exits, "exit without entry counted");
	is_uint(2, tot.open_at_end, "frames open at the end counted");
	is_uint(2, tot.unpaired_entries, "... and unpaired");
	is_uint(0, tot.invocations, "no invocation invented");
	vp_cct_release(&t);
}

static void test_threads(void)
{
	struct vp_build_totals tot;
	const struct vp_cct_node *p;
	struct vp_cct t;
	int i;

	/* Two threads interleaved, same stack addresses: kept apart. */
	nev = 0;
	for (i = 0; i < 100; i++) {
		ent(0, F_P, CS_NONE, 1000, (uint64_t)i * 100);
		ent(1, F_P, CS_NONE, 1000, (uint64_t)i * 100 + 1);
		ret(0, F_P, 1000, (uint64_t)i * 100 + 50);
		ret(1, F_P, 1000, (uint64_t)i * 100 + 31);
	}
	vp_cct_init(&t);
	is_int(0, build(&t, evs, nev, &tot), "threaded stream builds");
	p = node_at(&t, VP_NODE_ROOT, F_P, CS_NONE);
	is_uint(200, p ? p->stats.n : 0, "threads: exact count");
	is_uint(2, tot.threads, "threads: 2 seen");
	is_double(40.0, p ? p->stats.mean : 0, 1e-9, "threads: mean of 50 and 30");
	is_double(100.0, p ? vp_stats_variance(&p->stats) : 0, 1e-9, "threads: variance");
	vp_cct_release(&t);
}

static int trees_equal(const struct vp_cct *x, const struct vp_cct *y)
{
	size_t i, j, k;

	if (x->nnodes != y->nnodes)
		return 0;
	for (i = 1; i < x->nnodes; i++) {
		const struct vp_cct_node *a = &x->nodes[i];
		uint32_t pid = a->parent, path[64], depth = 0, id = VP_NODE_ROOT;
		const struct vp_cct_node *b;

		/* find the same node in y by its path */
		for (k = a->id; k != VP_NODE_ROOT; k = x->nodes[k].parent)
			path[depth++] = (uint32_t)k;
		(void)pid;
		while (depth--)
			id = vp_cct_find(y, id, x->nodes[path[depth]].func,
					 x->nodes[path[depth]].callsite);
		if (id == VP_NO_NODE)
			return 0;
		b = &y->nodes[id];
		if (a->stats.n != b->stats.n || a->stats.total != b->stats.total ||
		    fabs(a->stats.mean - b->stats.mean) > 1e-9 ||
		    fabs(vp_stats_variance(&a->stats) - vp_stats_variance(&b->stats)) > 1e-6 ||
		    a->cov.dim != b->cov.dim)
			return 0;
		for (j = 0; j < a->cov.dim; j++)
			for (k = 0; k < a->cov.dim; k++)
				if (fabs(vp_covar_get(&a->cov, j, k) - vp_covar_get(&b->cov, j, k)) >
				    1e-6)
					return 0;
	}
	return 1;
}

static void test_merge(void)
{
	struct vp_cct whole, first, second;
	struct vp_build_totals tot;
	uint64_t clock = 0;
	size_t half;

	/* Invocation 0 (no B) in one tree, 1-3 (B twice) in another: the
	 * merge must equal one tree built over all four. */
	nev = 0;
	emit_parent_stream(0, 0, 1, &clock);
	half = nev;
	emit_parent_stream(0, 1, 4, &clock);
	vp_cct_init(&whole);
	vp_cct_init(&first);
	vp_cct_init(&second);
	build(&whole, evs, nev, &tot);
	build(&first, evs, half, &tot);
	build(&second, evs + half, nev - half, &tot);
	is_int(0, vp_cct_merge(&first, &second), "merge succeeds");
	ok(trees_equal(&whole, &first), "merged tree equals the tree of the union");
	vp_cct_release(&whole);
	vp_cct_release(&first);
	vp_cct_release(&second);
}

static void test_late_children(void)
{
	struct vp_build_totals tot;
	const struct vp_cct_node *p;
	struct vp_cct t;
	uint64_t c = 0;
	int i;

	/* P is a leaf for 3 invocations, then calls A: the matrix must
	 * still cover all 5 invocations. */
	nev = 0;
	for (i = 0; i < 5; i++, c += 1000) {
		ent(0, F_P, CS_NONE, 1000, c);
		if (i >= 3) {
			ent(0, F_A, CS_A, 980, c + 10);
			ret(0, F_A, 980, c + 10 + 100 * (uint64_t)i);
		}
		ret(0, F_P, 1000, c + 20 + 100 * (uint64_t)i * (i >= 3));
	}
	vp_cct_init(&t);
	build(&t, evs, nev, &tot);
	p = node_at(&t, VP_NODE_ROOT, F_P, CS_NONE);
	is_uint(5, p ? p->cov.n : 0, "late child: matrix counts every invocation");
	is_double(p ? vp_stats_variance(&p->stats) : -1, p ? vp_covar_sum(&p->cov) : 0, 1e-6,
		  "late child: sum of matrix equals the variance");
	vp_cct_release(&t);
}

/* ---- off-CPU time ---- */

/*
 * P calls A once per invocation; P is off the CPU for po - ao before the
 * call, A for ao inside it.  Wall-clock durations pw and aw.
 */
enum { NOFF = 4 };
static const uint64_t off_pw[NOFF] = { 20, 60, 30, 130 };
static const uint64_t off_po[NOFF] = { 0, 40, 5, 100 };
static const uint64_t off_aw[NOFF] = { 10, 40, 20, 90 };
static const uint64_t off_ao[NOFF] = { 0, 30, 5, 80 };

/* Invocations @from..@to; times on-CPU only with @cpu, as the reader's
 * VP_TIME_CPU presents them (the thread's off-CPU time subtracted). */
static void emit_offcpu_stream(int from, int to, int cpu)
{
	uint64_t c = 1000, o = 77;

	for (int i = 0; i < from; i++) {
		c += off_pw[i] + 100;
		o += off_po[i];
	}
	for (int i = from; i < to; i++) {
		uint64_t ta = c + 2 + off_po[i] - off_ao[i], oa = o + off_po[i] - off_ao[i];
		uint64_t sub = cpu ? o - 77 : 0;

		ent(0, F_P, CS_NONE, 1000, c - sub);
		evs[nev - 1].offcpu = o;
		ent(0, F_A, CS_A, 980, ta - (cpu ? oa - 77 : 0));
		evs[nev - 1].offcpu = oa;
		ret(0, F_A, 980, ta + off_aw[i] - (cpu ? oa + off_ao[i] - 77 : 0));
		evs[nev - 1].offcpu = oa + off_ao[i];
		ret(0, F_P, 1000, c + off_pw[i] - (cpu ? o + off_po[i] - 77 : 0));
		evs[nev - 1].offcpu = o + off_po[i];
		c += off_pw[i] + 100;
		o += off_po[i];
	}
}

/* The split of @w (wall) and @o (off-CPU) durations, two-pass. */
static void split_by_hand(const uint64_t *w, const uint64_t *o, struct vp_offcpu_split *ret)
{
	double mw = 0, mo = 0, vw = 0, vo = 0, cwo = 0;

	for (int i = 0; i < NOFF; i++) {
		mw += (double)w[i] / NOFF;
		mo += (double)o[i] / NOFF;
	}
	for (int i = 0; i < NOFF; i++) {
		vw += ((double)w[i] - mw) * ((double)w[i] - mw) / NOFF;
		vo += ((double)o[i] - mo) * ((double)o[i] - mo) / NOFF;
		cwo += ((double)w[i] - mw) * ((double)o[i] - mo) / NOFF;
	}
	memset(ret, 0, sizeof(*ret));
	ret->n = NOFF;
	ret->wall_mean = mw;
	ret->off_mean = mo;
	ret->on_mean = mw - mo;
	ret->wall_var = vw;
	ret->off_var = vo;
	ret->cov = cwo - vo;		/* Cov(W - O, O) */
	ret->on_var = vw - 2 * cwo + vo; /* Var(W - O) */
	ret->off_share = cwo / vw;
	ret->on_share = 1 - cwo / vw;
}

static void check_split(const struct vp_cct *t, uint32_t id, const struct vp_offcpu_split *want,
			const char *what)
{
	struct vp_offcpu_split got;

	is_int(0, vp_cct_offcpu_split(t, id, &got), "%s: split", what);
	is_rel(want->on_mean, got.on_mean, 1e-12, "%s: on-CPU mean", what);
	is_rel(want->off_mean, got.off_mean, 1e-12, "%s: off-CPU mean", what);
	is_rel(want->wall_var, got.wall_var, 1e-12, "%s: wall-clock variance", what);
	is_rel(want->on_var, got.on_var, 1e-9, "%s: on-CPU variance", what);
	is_rel(want->cov, got.cov, 1e-9, "%s: Cov(on, off)", what);
	is_rel(want->off_share, got.off_share, 1e-12, "%s: off-CPU share of the variance", what);
	is_double(1.0, got.on_share + got.off_share, 1e-12, "%s: the shares add up to 1", what);
	is_double(got.wall_var, got.on_var + got.off_var + 2 * got.cov, 1e-9,
		  "%s: Var(W) = Var(C) + Var(O) + 2 Cov(C, O)", what);
}

static void test_offcpu(void)
{
	struct vp_offcpu_split want_p, want_a;
	const struct vp_cct_node *p, *a;
	struct vp_offcpu_split s;
	struct vp_cct t;

	split_by_hand(off_pw, off_po, &want_p);
	split_by_hand(off_aw, off_ao, &want_a);

	/* wall-clock time */
	nev = 0;
	emit_offcpu_stream(0, NOFF, 0);
	vp_cct_init(&t);
	is_int(0, build_base(&t, evs, nev, VP_TIME_WALL), "off-CPU stream builds");
	ok(t.offcpu && t.time_base == VP_TIME_WALL, "the tree keeps off-CPU statistics");
	p = node_at(&t, VP_NODE_ROOT, F_P, CS_NONE);
	a = p ? node_at(&t, p->id, F_A, CS_A) : NULL;
	if (!p || !a)
		bail("no P or A node");
	ok(p->offcpu.n == NOFF && p->offcpu.total == 145 && a->offcpu.total == 115,
	   "off-CPU totals per node");
	is_rel(want_p.off_var, vp_stats_variance(&p->offcpu), 1e-12, "P's off-CPU variance");
	check_split(&t, p->id, &want_p, "wall P");
	check_split(&t, a->id, &want_a, "wall A");
	is_int(-EINVAL, vp_cct_offcpu_split(&t, 99, &s), "no such node");
	vp_cct_release(&t);

	/* on-CPU time: the same split from the other side */
	nev = 0;
	emit_offcpu_stream(0, NOFF, 1);
	vp_cct_init(&t);
	is_int(0, build_base(&t, evs, nev, VP_TIME_CPU), "on-CPU stream builds");
	p = node_at(&t, VP_NODE_ROOT, F_P, CS_NONE);
	a = p ? node_at(&t, p->id, F_A, CS_A) : NULL;
	if (!p || !a)
		bail("no P or A node");
	is_rel(want_p.on_mean, p->stats.mean, 1e-12, "CPU: durations are on-CPU time");
	check_split(&t, p->id, &want_p, "CPU P");
	check_split(&t, a->id, &want_a, "CPU A");
	vp_cct_release(&t);

	/* off-CPU time: no split; no off-CPU times: none either */
	nev = 0;
	emit_offcpu_stream(0, NOFF, 0);
	vp_cct_init(&t);
	build_base(&t, evs, nev, VP_TIME_OFFCPU);
	is_int(-ENODATA, vp_cct_offcpu_split(&t, 1, &s), "off-CPU time base: no split");
	vp_cct_release(&t);
	vp_cct_init(&t);
	build(&t, evs, nev, NULL);
	ok(!t.offcpu, "no off-CPU times in the header: no off-CPU statistics");
	is_int(-ENODATA, vp_cct_offcpu_split(&t, 1, &s), "no off-CPU times: no split");
	vp_cct_release(&t);

	/* more off-CPU time than the (compensated) duration: capped */
	nev = 0;
	ent(0, F_P, CS_NONE, 1000, 100);
	ret(0, F_P, 1000, 110);
	evs[1].offcpu = 15;
	vp_cct_init(&t);
	build_base(&t, evs, nev, VP_TIME_WALL);
	p = node_at(&t, VP_NODE_ROOT, F_P, CS_NONE);
	ok(p && p->offcpu.total == 10, "off-CPU time capped at the duration");
	vp_cct_release(&t);
}

static void test_offcpu_merge(void)
{
	struct vp_cct whole, first, second, empty, other;
	const struct vp_cct_node *x, *y;
	int same = 1;

	nev = 0;
	emit_offcpu_stream(0, NOFF, 0);
	vp_cct_init(&whole);
	build_base(&whole, evs, nev, VP_TIME_WALL);
	nev = 0;
	emit_offcpu_stream(0, 1, 0);
	vp_cct_init(&first);
	build_base(&first, evs, nev, VP_TIME_WALL);
	nev = 0;
	emit_offcpu_stream(1, NOFF, 0);
	vp_cct_init(&second);
	build_base(&second, evs, nev, VP_TIME_WALL);
	vp_cct_init(&empty);
	is_int(0, vp_cct_merge(&empty, &first), "merge into an empty tree");
	ok(empty.offcpu && empty.time_base == VP_TIME_WALL, "... which takes the off-CPU statistics");
	is_int(0, vp_cct_merge(&first, &second), "off-CPU trees merge");
	ok(trees_equal(&whole, &first), "merged tree equals the tree of the union");
	for (uint32_t id = 1; id < whole.nnodes; id++) {
		x = &whole.nodes[id];
		/* one call chain: the nodes were made in the same order */
		y = &first.nodes[vp_cct_find(&first, x->parent, x->func, x->callsite)];
		if (x->offcpu.n != y->offcpu.n || x->offcpu.total != y->offcpu.total ||
		    fabs(x->offcpu.mean - y->offcpu.mean) > 1e-9 ||
		    fabs(x->offcpu.m2 - y->offcpu.m2) > 1e-6 ||
		    fabs(x->offcpu_com - y->offcpu_com) > 1e-6) {
			diag("node %u: co-moment %g, merged %g", id, x->offcpu_com, y->offcpu_com);
			same = 0;
		}
	}
	ok(same, "merged off-CPU statistics and co-moments equal the union's");
	nev = 0;
	emit_offcpu_stream(0, NOFF, 1);
	vp_cct_init(&other);
	build_base(&other, evs, nev, VP_TIME_CPU);
	is_int(-EINVAL, vp_cct_merge(&first, &other), "wall and on-CPU trees do not merge");
	vp_cct_release(&whole);
	vp_cct_release(&first);
	vp_cct_release(&second);
	vp_cct_release(&empty);
	vp_cct_release(&other);
}

/*
 * P calls A from 300 call sites: 301 nodes, and P's covariance of the
 * self time, the first VP_CCT_TRACKED callees and the other 44 together,
 * 258 variables, takes (258 * 259 / 2 + 258) doubles, 269 352 bytes.
 * Under a budget of 200 KiB the nodes fit and the matrix does not: -E2BIG
 * before it is taken; under 1 MiB all of it is built.  Releasing the tree
 * gives everything back.
 */
static void test_budget(void)
{
	const size_t cov = (258 * 259 / 2 + 258) * sizeof(double);
	struct vp_budget small = { 200 << 10, 0 }, big = { 1 << 20, 0 };
	const struct vp_cct_node *p;
	uint64_t clock = 0;
	struct vp_cct t;

	nev = 0;
	ent(0, F_P, CS_NONE, 1000, clock);
	for (uint32_t i = 0; i < 300; i++) {
		ent(0, F_A, 100 + i, 980, clock += 10);
		ret(0, F_A, 980, clock += 10 + i % 7);
	}
	ret(0, F_P, 1000, clock += 10);
	vp_cct_init(&t);
	t.budget = &small;
	is_int(-E2BIG, build(&t, evs, nev, NULL), "300 callees in 200 KiB: -E2BIG");
	p = node_at(&t, VP_NODE_ROOT, F_P, CS_NONE);
	ok(p && p->nchildren == 300 && p->cov.dim <= 1, "... the nodes were made, not the matrix");
	ok(small.used > 0 && small.used <= small.max, "... within the budget (%zu bytes)",
	   small.used);
	vp_cct_release(&t);
	is_uint(0, small.used, "releasing the tree gives it back");

	vp_cct_init(&t);
	t.budget = &big;
	is_int(0, build(&t, evs, nev, NULL), "300 callees in 1 MiB: built");
	p = node_at(&t, VP_NODE_ROOT, F_P, CS_NONE);
	ok(p && p->cov.dim == 258, "P has its 258 variables");
	ok(big.used > cov && big.used <= big.max, "the matrix's %zu bytes are charged (%zu)", cov,
	   big.used);
	vp_cct_release(&t);
	is_uint(0, big.used, "releasing the tree gives it back");
}

/* ---- more children than VP_CCT_TRACKED ---- */

enum { WIDE = VP_CCT_TRACKED + 100, WIDE_RUNS = 7, WIDE_CS = 1000 };

/* Callee c's time in invocation r of P: varied, and correlated across
 * callees through r, so that the covariances are not all alike. */
static uint64_t wide_dur(uint32_t r, uint32_t c)
{
	return 10 + (r * 7 + c * 3) % 11 + (c % 5 == r % 5 ? 20 + c % 13 : 0);
}

/*
 * Invocation @r of P calling A from the call sites WIDE_CS + order[i],
 * i < @n; with @y, also its contribution vector by callee: y[0] self,
 * y[1 + c] callee c's time.
 */
static void wide_call(uint32_t r, const uint32_t *order, uint32_t n, uint64_t *clock,
		      double y[WIDE + 1])
{
	uint64_t t0 = *clock, kids = 0;

	if (y)
		memset(y, 0, (WIDE + 1) * sizeof(*y));
	ent(0, F_P, CS_NONE, 1000, *clock);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t d = wide_dur(r, order[i]);

		ent(0, F_A, WIDE_CS + order[i], 980, *clock += 3 + r % 4);
		ret(0, F_A, 980, *clock += d);
		kids += d;
		if (y)
			y[1 + order[i]] += (double)d;
	}
	ret(0, F_P, 1000, *clock += 5 + (r * r) % 9);
	if (y)
		y[0] = (double)(*clock - t0 - kids);
}

/*
 * P calls A from VP_CCT_TRACKED + 100 call sites, in the order of the
 * call sites (the first invocation from the first 100 only): its matrix
 * holds the self time, the first VP_CCT_TRACKED callees and one "other"
 * variable, the sum of the last 100.  Against the population covariance
 * of the contribution vectors, computed here two-pass from the durations
 * the events were made of: the tracked rows exact, the other variable's
 * variance and covariances exact, and the row sums (the whole matrix)
 * the variance of P.  Then merges: two halves of the invocations, and a
 * tree whose first VP_CCT_TRACKED callees are partly P's other ones, so
 * that several of its variables merge into P's other.
 */
static void test_wide(void)
{
	static double y[WIDE_RUNS][WIDE + 1];
	static uint32_t order[WIDE], rev[VP_CCT_TRACKED];
	const size_t K = VP_CCT_TRACKED, O = VP_CCT_TRACKED + 1;
	double m[WIDE + 1] = { 0 }, mo = 0, vo = 0, vx = 0, mx = 0, worst = 0, worst_o = 0;
	double scale = 0;
	struct vp_cct t, first, second, whole, other;
	const struct vp_cct_node *p;
	uint64_t clock = 0;
	size_t half;

	for (uint32_t c = 0; c < WIDE; c++)
		order[c] = c;
	nev = 0;
	for (uint32_t r = 0; r < WIDE_RUNS; r++)
		wide_call(r, order, r ? WIDE : 100, &clock, y[r]);
	for (uint32_t r = 0; r < WIDE_RUNS; r++) {
		double o = 0, x = 0;

		for (size_t v = 0; v <= WIDE; v++) {
			m[v] += y[r][v] / WIDE_RUNS;
			x += y[r][v];
			if (v > K)
				o += y[r][v];
		}
		mo += o / WIDE_RUNS;
		mx += x / WIDE_RUNS;
	}
	for (uint32_t r = 0; r < WIDE_RUNS; r++) {
		double o = -mo, x = -mx;

		for (size_t v = 0; v <= WIDE; v++) {
			x += y[r][v];
			if (v > K)
				o += y[r][v];
		}
		vo += o * o / WIDE_RUNS;
		vx += x * x / WIDE_RUNS;
	}
	vp_cct_init(&t);
	is_int(0, build(&t, evs, nev, NULL), "%d callees: built", WIDE);
	p = node_at(&t, VP_NODE_ROOT, F_P, CS_NONE);
	if (!p)
		bail("no P node");
	is_uint(WIDE, p->nchildren, "P has its %d children", WIDE);
	is_uint(K + 2, p->cov.dim, "... and %zu variables: self, %zu callees, other", K + 2, K);
	for (size_t i = 0; i <= K; i++) {
		double co = 0; /* Cov(Y_i, other) */

		for (size_t j = 0; j <= K; j++) {
			double cij = 0;

			for (uint32_t r = 0; r < WIDE_RUNS; r++)
				cij += (y[r][i] - m[i]) * (y[r][j] - m[j]) / WIDE_RUNS;
			scale = fmax(scale, fabs(cij));
			worst = fmax(worst, fabs(vp_covar_get(&p->cov, i, j) - cij));
		}
		for (uint32_t r = 0; r < WIDE_RUNS; r++) {
			double o = -mo;

			for (size_t v = K + 1; v <= WIDE; v++)
				o += y[r][v];
			co += (y[r][i] - m[i]) * o / WIDE_RUNS;
		}
		worst_o = fmax(worst_o, fabs(vp_covar_get(&p->cov, i, O) - co));
		worst_o = fmax(worst_o, fabs(vp_covar_get(&p->cov, O, i) - co));
	}
	ok(scale > 0 && worst <= 1e-9 * scale,
	   "the rows of self and the %zu tracked callees are exact (abs err %g)", K, worst);
	is_rel(vo, vp_covar_get(&p->cov, O, O), 1e-12, "the other variable's variance is exact");
	ok(worst_o <= 1e-9 * scale, "its covariances with the tracked ones are exact (abs err %g)",
	   worst_o);
	is_rel(mo, p->cov.mean[O], 1e-12, "its mean is the last 100 callees' together");
	is_rel(vx, vp_stats_variance(&p->stats), 1e-12, "P's variance is that of its durations");
	is_rel(vx, vp_covar_sum(&p->cov), 1e-9, "the row sums add up to P's variance");
	is_int((long)K, vp_cct_child_slot(p, p->children[K - 1]),
	       "the %zuth callee is variable %zu", K, K);
	is_int((long)O, vp_cct_child_slot(p, p->children[WIDE - 1]),
	       "the last callee is in the other variable");

	/* the same invocations in two trees, merged */
	half = 0;
	for (size_t i = 0; i < nev; i++)
		if (evs[i].kind == VP_EV_EXIT && evs[i].func == F_P && i < nev / 2)
			half = i + 1;
	vp_cct_init(&first);
	vp_cct_init(&second);
	build(&first, evs, half, NULL);
	build(&second, evs + half, nev - half, NULL);
	is_int(0, vp_cct_merge(&first, &second), "two halves merge");
	ok(trees_equal(&t, &first), "into the tree of them all, the other variable included");

	/*
	 * A tree whose P calls the last 100 callees first, then the first
	 * 156: all tracked there, and the 100 are P's other ones here.
	 */
	for (uint32_t i = 0; i < K; i++)
		rev[i] = i < 100 ? K + i : i - 100;
	half = nev;
	for (uint32_t r = 0; r < 3; r++)
		wide_call(WIDE_RUNS + r, rev, K, &clock, NULL);
	vp_cct_init(&whole);
	vp_cct_init(&other);
	build(&whole, evs, nev, NULL);
	build(&other, evs + half, nev - half, NULL);
	p = node_at(&other, VP_NODE_ROOT, F_P, CS_NONE);
	ok(p && p->nchildren == K && p->cov.dim == K + 1, "the other tree tracks its %zu callees",
	   K);
	is_int(0, vp_cct_merge(&t, &other), "it merges");
	ok(trees_equal(&whole, &t),
	   "100 of its variables into the other one: the tree of all the invocations");
	vp_cct_release(&t);
	vp_cct_release(&first);
	vp_cct_release(&second);
	vp_cct_release(&whole);
	vp_cct_release(&other);
}

/* ---- blocked and preempted (format 5) ---- */

/*
 * The off-CPU stream with a part of each invocation's off-CPU time
 * blocked: P's (A's inside it included) off_bp, A's off_ba; the rest
 * preempted.  A wait of reason 18 for A's blocked time, inside A, and of
 * reason 203 for the rest of P's, before the call.
 */
static const uint64_t off_bp[NOFF] = { 0, 25, 5, 40 };
static const uint64_t off_ba[NOFF] = { 0, 20, 0, 30 };

static void wait_ev(uint32_t reason, uint64_t ns)
{
	evs[nev++] = (struct vp_event){ .kind = VP_EV_WAIT, .func = reason, .wait = ns,
					.callsite = UINT32_MAX };
}

static void emit_blocked_stream(int from, int to)
{
	size_t start = nev;
	uint64_t b = 0;

	emit_offcpu_stream(from, to, 0);
	for (int i = 0; i < from; i++)
		b += off_bp[i];
	/* four events an invocation: P's entry, A's entry, A's exit, P's exit */
	for (size_t k = start, i = (size_t)from; k < nev; k += 4, i++) {
		evs[k].blocked = b;
		evs[k + 1].blocked = b + off_bp[i] - off_ba[i];
		evs[k + 2].blocked = b + off_bp[i];
		evs[k + 3].blocked = b + off_bp[i];
		b += off_bp[i];
	}
	/* the waits, where they were: copied apart, then put in */
	{
		struct vp_event copy[4 * NOFF];
		size_t n = nev - start, j = 0;

		memcpy(copy, evs + start, n * sizeof(*copy));
		nev = start;
		for (size_t i = (size_t)from; j < n; i++) {
			evs[nev++] = copy[j++];
			if (off_bp[i] > off_ba[i])
				wait_ev(203, off_bp[i] - off_ba[i]);
			evs[nev++] = copy[j++];
			if (off_ba[i])
				wait_ev(18, off_ba[i]);
			evs[nev++] = copy[j++];
			evs[nev++] = copy[j++];
		}
	}
}

static int build_blocked(struct vp_cct *t, enum vp_time_base base)
{
	struct vp_header h = { 0 };
	struct vp_builder *b;
	int err;

	h.offcpu = 1;
	h.blocked = 1;
	b = vp_builder_new(t, NFUNCS, &h);
	if (!b)
		bail("out of memory");
	err = vp_builder_set_time(b, base);
	if (!err)
		err = vp_builder_feed(b, evs, nev);
	if (!err)
		err = vp_builder_finish(b, NULL);
	vp_builder_free(b);
	return err;
}

static void test_blocked(void)
{
	struct vp_cct t, first, second;
	const struct vp_cct_node *p, *a;
	struct vp_offcpu_split s;
	struct vp_cct_wait w[VP_CCT_WAITS + 1];
	uint8_t none[8] = { 0 }, mark[8] = { 0 };
	double share;
	uint32_t id;
	size_t n;

	nev = 0;
	emit_blocked_stream(0, NOFF);
	vp_cct_init(&t);
	is_int(0, build_blocked(&t, VP_TIME_WALL), "blocked stream builds");
	ok(t.offcpu && t.blocked, "the tree splits off-CPU time");
	p = node_at(&t, VP_NODE_ROOT, F_P, CS_NONE);
	a = p ? node_at(&t, p->id, F_A, CS_A) : NULL;
	if (!p || !a)
		bail("no P or A node");
	ok(p->blocked.n == NOFF && p->blocked.total == 70 && a->blocked.total == 50,
	   "blocked totals per node (P 70, A 50)");
	is_int(0, vp_cct_offcpu_split(&t, p->id, &s), "P: split");
	ok(s.has_blocked, "P: split into blocked and preempted");
	/* worked by hand: W 20 60 30 130, O 0 40 5 100, B 0 25 5 40 */
	is_double(17.5, s.blocked_mean, 1e-12, "P: blocked mean");
	is_double(18.75, s.preempted_mean, 1e-12, "P: preempted mean");
	is_double(53.0 / 148, s.blocked_share, 1e-12, "P: blocked share, Cov(W, B) / Var(W)");
	is_double(21.0 / 37, s.preempted_share, 1e-12, "P: preempted share, Cov(W, O - B) / Var(W)");
	is_double(s.off_share, s.blocked_share + s.preempted_share, 1e-12,
		  "P: the two add up to the off-CPU share");
	n = vp_cct_waits_sorted(&t, p->id, w);
	ok(n == 2 && w[0].reason == 18 && w[0].count == 2 && w[0].ns == 50 && w[1].reason == 203 &&
		   w[1].count == 3 && w[1].ns == 20,
	   "P's waits: its callee's and its own, most time first");
	n = vp_cct_waits_sorted(&t, a->id, w);
	ok(n == 1 && w[0].reason == 18 && w[0].count == 2 && w[0].ns == 50, "A's waits: its own");
	is_int(1, vp_cct_preempted_share(&t, none, sizeof(none), &share),
	       "preempted share without a marked node: of the outermost ones");
	is_double(21.0 / 37, share, 1e-12, "... P's");
	mark[a->id] = 1;
	vp_cct_preempted_share(&t, mark, sizeof(mark), &share);
	is_double(vp_cct_offcpu_split(&t, a->id, &s) == 0 ? s.preempted_share : -1, share, 1e-12,
		  "preempted share of the marked node");

	/* halves merged: the same statistics and waits */
	nev = 0;
	emit_blocked_stream(0, 1);
	vp_cct_init(&first);
	build_blocked(&first, VP_TIME_WALL);
	nev = 0;
	emit_blocked_stream(1, NOFF);
	vp_cct_init(&second);
	build_blocked(&second, VP_TIME_WALL);
	is_int(0, vp_cct_merge(&first, &second), "blocked trees merge");
	vp_cct_offcpu_split(&first, p->id, &s);
	is_double(53.0 / 148, s.blocked_share, 1e-12, "... to the union's blocked share");
	n = vp_cct_waits_sorted(&first, p->id, w);
	ok(n == 2 && w[0].count == 2 && w[0].ns == 50 && w[1].count == 3 && w[1].ns == 20,
	   "... and waits");
	vp_cct_release(&first);
	vp_cct_release(&second);

	/* a tree without blocked times does not merge with one with them */
	nev = 0;
	emit_offcpu_stream(0, NOFF, 0);
	vp_cct_init(&first);
	build_base(&first, evs, nev, VP_TIME_WALL);
	id = p->id; /* (the merge may move the nodes) */
	is_int(0, vp_cct_merge(&t, &first), "a tree without the split merges into one with it");
	ok(!t.blocked && vp_cct_offcpu_split(&t, id, &s) == 0 && !s.has_blocked,
	   "... which then has no split");
	vp_cct_release(&first);
	vp_cct_release(&t);

	/* own time: the off-CPU part is the blocked time, nothing preempted */
	nev = 0;
	emit_blocked_stream(0, NOFF);
	vp_cct_init(&t);
	build_blocked(&t, VP_TIME_OWN);
	p = node_at(&t, VP_NODE_ROOT, F_P, CS_NONE);
	ok(p && p->offcpu.total == 70 && vp_cct_offcpu_split(&t, p->id, &s) == 0 &&
		   s.preempted_mean == 0 && s.blocked_mean == 17.5,
	   "own time: off-CPU statistics hold the blocked time");
	vp_cct_release(&t);
}

int main(void)
{
	plan(48 + 53 + 8 + 16 + 21);
	test_stats_and_covariance();
	test_longjmp();
	test_tail_call();
	test_deep_recursion();
	test_unmatched_and_open();
	test_threads();
	test_merge();
	test_late_children();
	test_offcpu();
	test_offcpu_merge();
	test_blocked();
	test_budget();
	test_wide();
	return 0;
}
