// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * slowest.c - the K slowest invocations of a node (see slowest.h).
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "slowest.h"

/* The order of eviction: shorter first, and of equal ones the later. */
static int faster(const struct vp_slow_call *a, const struct vp_slow_call *b)
{
	if (a->duration != b->duration)
		return a->duration < b->duration;
	if (a->start != b->start)
		return a->start > b->start;
	return a->thread > b->thread;
}

static size_t call_bytes(const struct vp_slow_call *c)
{
	return c->nparts * sizeof(*c->parts);
}

static void sift_down(struct vp_slow_call *h, uint32_t n, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, m = i;
		struct vp_slow_call tmp;

		if (l < n && faster(&h[l], &h[m]))
			m = l;
		if (l + 1 < n && faster(&h[l + 1], &h[m]))
			m = l + 1;
		if (m == i)
			return;
		tmp = h[i];
		h[i] = h[m];
		h[m] = tmp;
		i = m;
	}
}

static void sift_up(struct vp_slow_call *h, uint32_t i)
{
	while (i) {
		uint32_t p = (i - 1) / 2;
		struct vp_slow_call tmp;

		if (!faster(&h[i], &h[p]))
			return;
		tmp = h[i];
		h[i] = h[p];
		h[p] = tmp;
		i = p;
	}
}

/* Room for @k calls, allocated at the first. */
static int reserve(struct vp_slowest *s, uint32_t k, struct vp_budget *budget)
{
	if (s->calls)
		return s->cap >= k ? 0 : -EINVAL;
	if (vp_budget_charge(budget, (size_t)k * sizeof(*s->calls)))
		return -E2BIG;
	s->calls = calloc(k, sizeof(*s->calls));
	if (!s->calls) {
		vp_budget_refund(budget, (size_t)k * sizeof(*s->calls));
		return -ENOMEM;
	}
	s->cap = k;
	return 0;
}

/* Back to a heap after vp_slowest_finish ordered it by start. */
static void heapify(struct vp_slowest *s)
{
	uint32_t i;

	for (i = s->n / 2; i > 0; i--)
		sift_down(s->calls, s->n, i - 1);
	s->sorted = 0;
}

int vp_slowest_offer(struct vp_slowest *s, uint32_t k, struct vp_budget *budget,
		     uint64_t start, uint64_t duration, uint32_t thread, const double *y,
		     size_t ny)
{
	struct vp_slow_call c = { start, duration, thread, 1, NULL };
	int64_t own = (int64_t)duration;
	size_t v;
	int err;

	if (!k)
		return 0;
	if (s->sorted)
		heapify(s);
	if (s->n == k && !faster(&s->calls[0], &c))
		return 0;
	err = reserve(s, k, budget);
	if (err)
		return err;
	for (v = 0; v < ny; v++)
		c.nparts += y[v] != 0;
	if (vp_budget_charge(budget, call_bytes(&c)))
		return -E2BIG;
	c.parts = malloc(call_bytes(&c));
	if (!c.parts) {
		vp_budget_refund(budget, call_bytes(&c));
		return -ENOMEM;
	}
	c.nparts = 1;
	for (v = 0; v < ny; v++) {
		/* sums of integer durations: exact in a double below 2^53 ns */
		int64_t t = (int64_t)y[v];

		if (!y[v])
			continue;
		c.parts[c.nparts++] = (struct vp_slow_part){ (uint32_t)(v + 1), t };
		own -= t;
	}
	c.parts[0] = (struct vp_slow_part){ 0, own };
	if (s->n < k) {
		s->calls[s->n] = c;
		sift_up(s->calls, s->n++);
		return 0;
	}
	vp_budget_refund(budget, call_bytes(&s->calls[0]));
	free(s->calls[0].parts);
	s->calls[0] = c;
	sift_down(s->calls, s->n, 0);
	return 0;
}

static int by_start(const void *x, const void *y)
{
	const struct vp_slow_call *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->thread != b->thread)
		return a->thread < b->thread ? -1 : 1;
	return a->duration < b->duration ? -1 : a->duration > b->duration;
}

static int slower_first(const void *x, const void *y)
{
	const struct vp_slow_call *a = x, *b = y;

	return faster(a, b) ? 1 : faster(b, a) ? -1 : 0;
}

void vp_slowest_finish(struct vp_slowest *s)
{
	if (s->n && !s->sorted)
		qsort(s->calls, s->n, sizeof(*s->calls), by_start);
	s->sorted = 1;
}

static int part_cmp(const void *x, const void *y)
{
	const struct vp_slow_part *a = x, *b = y;

	return a->var < b->var ? -1 : a->var > b->var;
}

/* A copy of @c with its variables renamed; parts renamed alike are summed. */
static int copy_call(struct vp_slow_call *d, const struct vp_slow_call *c, const size_t *vmap,
		     struct vp_budget *budget)
{
	uint32_t i, n = 0;

	*d = *c;
	if (vp_budget_charge(budget, call_bytes(c)))
		return -E2BIG;
	d->parts = malloc(call_bytes(c));
	if (!d->parts) {
		vp_budget_refund(budget, call_bytes(c));
		return -ENOMEM;
	}
	memcpy(d->parts, c->parts, call_bytes(c));
	for (i = 0; vmap && i < c->nparts; i++)
		d->parts[i].var = (uint32_t)vmap[d->parts[i].var];
	qsort(d->parts, d->nparts, sizeof(*d->parts), part_cmp);
	for (i = 0; i < d->nparts; i++) {
		if (n && d->parts[n - 1].var == d->parts[i].var)
			d->parts[n - 1].time += d->parts[i].time;
		else
			d->parts[n++] = d->parts[i];
	}
	vp_budget_refund(budget, (d->nparts - n) * sizeof(*d->parts));
	d->nparts = n;
	return 0;
}

int vp_slowest_merge(struct vp_slowest *dst, const struct vp_slowest *src, uint32_t k,
		     const size_t *vmap, struct vp_budget *budget)
{
	struct vp_slow_call *all;
	uint32_t n = 0, i;
	int err = 0;

	if (!src->n || !k)
		return 0;
	all = calloc((size_t)dst->n + src->n, sizeof(*all));
	if (!all)
		return -ENOMEM;
	for (i = 0; i < src->n && !err; i++)
		err = copy_call(&all[n++], &src->calls[i], vmap, budget);
	if (err) {
		n--;
		goto fail;
	}
	err = reserve(dst, k, budget);
	if (err)
		goto fail;
	memcpy(all + n, dst->calls, dst->n * sizeof(*all));
	n += dst->n;
	qsort(all, n, sizeof(*all), slower_first);
	for (i = k; i < n; i++) {
		vp_budget_refund(budget, call_bytes(&all[i]));
		free(all[i].parts);
	}
	dst->n = n < k ? n : k;
	memcpy(dst->calls, all, dst->n * sizeof(*all));
	free(all);
	dst->sorted = 0;
	vp_slowest_finish(dst);
	return 0;
fail:
	for (i = 0; i < n; i++) {
		vp_budget_refund(budget, call_bytes(&all[i]));
		free(all[i].parts);
	}
	free(all);
	return err;
}

void vp_slowest_release(struct vp_slowest *s, struct vp_budget *budget)
{
	uint32_t i;

	for (i = 0; i < s->n; i++) {
		vp_budget_refund(budget, call_bytes(&s->calls[i]));
		free(s->calls[i].parts);
	}
	vp_budget_refund(budget, (size_t)s->cap * sizeof(*s->calls));
	free(s->calls);
	memset(s, 0, sizeof(*s));
}
