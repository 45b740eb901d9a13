/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * slowest-t.c - tests for core/slowest.c and what the builder gives per
 * invocation, on synthetic event streams whose answers are known by
 * construction: the K slowest calls of a node (which, when, on which
 * thread, and how each one's time split among its children, adding up to
 * its duration), against a sort of every call; ties; an exact merge; how
 * often the parent takes each path (path_calls); and the invocation
 * callback's calls and times per child.
 */
#include <config.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/cct.h"
#include "tests/tap/basic.h"

enum { NFUNCS = 4, MAXEV = 65536, NCALLS = 2000 };
enum { F_P, F_A, F_B, F_C };
enum { CS_NONE, CS_A, CS_B, CS_C };

static struct vp_event evs[MAXEV];
static size_t nev;

static void ent(uint32_t thread, uint32_t func, uint32_t cs, uint64_t sp, uint64_t t)
{
	evs[nev++] = (struct vp_event){ .time = t, .sp = sp, .func = func, .callsite = cs,
					.thread = thread, .kind = VP_EV_ENTRY };
}

static void ret(uint32_t thread, uint32_t func, uint64_t sp, uint64_t t)
{
	evs[nev++] = (struct vp_event){ .time = t, .sp = sp + 8, .func = func,
					.thread = thread, .kind = VP_EV_EXIT };
}

/* What the generator did in each call of P: the truth. */
struct truth {
	uint64_t start, dur, a, b;
	uint32_t thread, calls_a, calls_b;
};
static struct truth truth[NCALLS];

struct seen {
	const struct vp_cct *t;
	size_t n;
	uint64_t sum_calls_a, sum_calls_b, sum_y_a, sum_y_b;
	int wrong;
};

/* The calls @inv made to its node's child (@func, @cs), and their time. */
static uint32_t calls_of(const struct vp_cct *t, const struct vp_invocation *inv, uint32_t func,
			 uint32_t cs)
{
	uint32_t c = vp_cct_find(t, inv->node, func, cs);

	if (c == VP_NO_NODE || t->nodes[c].slot >= inv->ncalls)
		return 0;
	return inv->calls[t->nodes[c].slot];
}

static double time_of(const struct vp_cct *t, const struct vp_invocation *inv, uint32_t func,
		      uint32_t cs)
{
	uint32_t c = vp_cct_find(t, inv->node, func, cs);

	if (c == VP_NO_NODE || vp_cct_var(t->nodes[c].slot) > inv->ny)
		return 0;
	return inv->y[vp_cct_var(t->nodes[c].slot) - 1];
}

static int on_inv(void *ctx, const struct vp_invocation *inv)
{
	struct seen *s = ctx;
	const struct truth *tr;

	if (inv->depth != 0)
		return 0;
	tr = &truth[s->n++];
	if (inv->start != tr->start || inv->duration != tr->dur || inv->thread != tr->thread ||
	    calls_of(s->t, inv, F_A, CS_A) != tr->calls_a ||
	    calls_of(s->t, inv, F_B, CS_B) != tr->calls_b ||
	    time_of(s->t, inv, F_A, CS_A) != (double)tr->a ||
	    time_of(s->t, inv, F_B, CS_B) != (double)tr->b)
		s->wrong++;
	return 0;
}

static int build(struct vp_cct *t, uint32_t keep, size_t from, size_t to, struct seen *seen)
{
	struct vp_builder *b;
	int err;

	vp_cct_init(t);
	t->keep_slowest = keep;
	b = vp_builder_new(t, NFUNCS, NULL);
	if (!b)
		bail("out of memory");
	if (seen) {
		seen->t = t;
		vp_builder_on_invocation(b, on_inv, seen);
	}
	err = vp_builder_feed(b, evs + from, to - from);
	if (!err)
		err = vp_builder_finish(b, NULL);
	vp_builder_free(b);
	return err;
}

/* P on two threads calls A 0..3 times and B with probability 1/4, each with
 * durations from a fixed generator; every call's truth is noted. */
static size_t generate(void)
{
	uint64_t clock[2] = { 1000, 1000 };
	uint32_t x = 12345;
	size_t i;

	nev = 0;
	for (i = 0; i < NCALLS; i++) {
		uint32_t th = (uint32_t)(i & 1), k;
		uint64_t t = clock[th];
		struct truth *tr = &truth[i];

		memset(tr, 0, sizeof(*tr));
		tr->thread = th;
		tr->start = t;
		ent(th, F_P, CS_NONE, 0x8000, t);
		t += 10;
		x = x * 1103515245 + 12345;
		tr->calls_a = (x >> 16) % 4;
		for (k = 0; k < tr->calls_a; k++) {
			uint64_t d;

			x = x * 1103515245 + 12345;
			d = 50 + (x >> 16) % 1000;
			ent(th, F_A, CS_A, 0x7000, t);
			ret(th, F_A, 0x7000, t + d);
			t += d + 5;
			tr->a += d;
		}
		x = x * 1103515245 + 12345;
		if ((x >> 16) % 4 == 0) {
			uint64_t d = 3000 + (x >> 20) % 5000;

			tr->calls_b = 1;
			ent(th, F_B, CS_B, 0x7000, t);
			ret(th, F_B, 0x7000, t + d);
			t += d;
			tr->b = d;
		}
		t += 7;
		ret(th, F_P, 0x8000, t);
		tr->dur = t - tr->start;
		clock[th] = t + 100;
	}
	return nev;
}

/* The events of the first @calls calls of P. */
static size_t events_of(size_t calls)
{
	size_t i, n = 0;

	for (i = 0; i < nev && n < calls; i++)
		if (evs[i].kind == VP_EV_EXIT && evs[i].func == F_P)
			n++;
	return i;
}

static int by_dur_desc(const void *x, const void *y)
{
	const struct truth *a = *(const struct truth *const *)x, *b = *(const struct truth *const *)y;

	if (a->dur != b->dur)
		return a->dur < b->dur ? 1 : -1;
	return a->start < b->start ? -1 : a->start > b->start;
}

static int by_start(const void *x, const void *y)
{
	const struct truth *a = *(const struct truth *const *)x, *b = *(const struct truth *const *)y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->thread < b->thread ? -1 : a->thread > b->thread;
}

/* The @k slowest of truth[from..to), by start: what the node must keep. */
static size_t expected(struct truth **out, size_t k, size_t from, size_t to)
{
	size_t n = to - from, i;
	struct truth **all = malloc(n * sizeof(*all));

	for (i = 0; i < n; i++)
		all[i] = &truth[from + i];
	qsort(all, n, sizeof(*all), by_dur_desc);
	if (k > n)
		k = n;
	memcpy(out, all, k * sizeof(*out));
	qsort(out, k, sizeof(*out), by_start);
	free(all);
	return k;
}

static int same_list(const struct vp_cct *t, uint32_t p, struct truth **want, size_t k)
{
	const struct vp_cct_node *n = &t->nodes[p];
	size_t i;

	if (n->slowest.n != k)
		return 0;
	for (i = 0; i < k; i++) {
		const struct vp_slow_call *c = &n->slowest.calls[i];
		int64_t sum = 0, a = 0, b = 0;
		uint32_t an = vp_cct_find(t, p, F_A, CS_A), bn = vp_cct_find(t, p, F_B, CS_B);

		if (c->start != want[i]->start || c->duration != want[i]->dur ||
		    c->thread != want[i]->thread)
			return 0;
		for (uint32_t j = 0; j < c->nparts; j++) {
			sum += c->parts[j].time;
			if (an != VP_NO_NODE && c->parts[j].var == vp_cct_var(t->nodes[an].slot))
				a = c->parts[j].time;
			if (bn != VP_NO_NODE && c->parts[j].var == vp_cct_var(t->nodes[bn].slot))
				b = c->parts[j].time;
		}
		if (c->parts[0].var != 0 || sum != (int64_t)c->duration ||
		    a != (int64_t)want[i]->a || b != (int64_t)want[i]->b)
			return 0;
	}
	return 1;
}

int main(void)
{
	struct truth *want[128];
	struct vp_cct t, u, m;
	struct seen seen = { 0 };
	uint32_t p, a, bnode;
	uint64_t with_a = 0, with_b = 0, sa = 0, sb = 0;
	size_t k, i, half;

	plan(18);
	generate();
	for (i = 0; i < NCALLS; i++) {
		with_a += truth[i].calls_a > 0;
		with_b += truth[i].calls_b > 0;
		sa += truth[i].calls_a;
		sb += truth[i].calls_b;
	}

	is_int(0, build(&t, 16, 0, nev, &seen), "build with 16 slowest kept");
	p = vp_cct_find(&t, VP_NODE_ROOT, F_P, CS_NONE);
	a = vp_cct_find(&t, p, F_A, CS_A);
	bnode = vp_cct_find(&t, p, F_B, CS_B);
	ok(p != VP_NO_NODE && a != VP_NO_NODE && bnode != VP_NO_NODE, "P, A and B found");
	k = expected(want, 16, 0, NCALLS);
	ok(same_list(&t, p, want, k),
	   "P keeps the 16 slowest calls by start, with start, thread, duration and split");
	is_int(16, t.nodes[p].slowest.n, "16 of P's calls kept");
	is_int(with_a, t.nodes[a].path_calls, "path_calls of A: P's calls that called A");
	is_int(with_b, t.nodes[bnode].path_calls, "path_calls of B: P's calls that called B");
	is_int(NCALLS, seen.n, "the callback saw every outermost call of P");
	is_int(0, seen.wrong, "... each with its start, duration, thread, calls and child times");
	vp_cct_release(&t);

	/* K larger than the calls: all of them */
	is_int(0, build(&t, 4096, 0, events_of(100), NULL), "build 100 calls with 4096 kept");
	p = vp_cct_find(&t, VP_NODE_ROOT, F_P, CS_NONE);
	is_int(100, t.nodes[p].slowest.n, "all 100 calls kept");
	k = expected(want, 128, 0, 100);
	ok(same_list(&t, p, want, k), "... in start order, each with its split");
	vp_cct_release(&t);

	/* none kept */
	is_int(0, build(&t, 0, 0, nev, NULL), "build with none kept");
	p = vp_cct_find(&t, VP_NODE_ROOT, F_P, CS_NONE);
	is_int(0, t.nodes[p].slowest.n, "keep_slowest 0 keeps none");
	vp_cct_release(&t);

	/* two halves merged: the 16 slowest of all, as one build has them */
	half = events_of(NCALLS / 2);
	is_int(0, build(&t, 16, 0, half, NULL), "build the first half");
	is_int(0, build(&u, 16, half, nev, NULL), "build the second half");
	vp_cct_init(&m);
	m.keep_slowest = 16;
	ok(!vp_cct_merge(&m, &t) && !vp_cct_merge(&m, &u), "merge both halves");
	p = vp_cct_find(&m, VP_NODE_ROOT, F_P, CS_NONE);
	k = expected(want, 16, 0, NCALLS);
	ok(p != VP_NO_NODE && same_list(&m, p, want, k),
	   "the merge keeps the 16 slowest of all calls, with their splits");
	a = vp_cct_find(&m, p, F_A, CS_A);
	ok(a != VP_NO_NODE && m.nodes[a].path_calls == with_a, "path_calls add up in a merge");
	vp_cct_release(&t);
	vp_cct_release(&u);
	vp_cct_release(&m);
	(void)sa;
	(void)sb;
	return 0;
}
