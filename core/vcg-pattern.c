/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * vcg-pattern.c - growing the working patterns of vcg.c and vcg-merge.c:
 * nodes, segments and pool entries appended in place, an allocation
 * failure kept in the context so that a step checks once.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "vcg-pattern.h"

struct wpat *vp_wpat_new(struct gctx *c)
{
	struct wpat *p = calloc(1, sizeof(*p));

	if (!p)
		c->err = -ENOMEM;
	return p;
}

void vp_wpat_free(struct wpat *p)
{
	if (!p)
		return;
	free(p->nodes);
	free(p->segs);
	free(p->pool);
	free(p);
}

uint32_t vp_wpat_node(struct gctx *c, struct wpat *p)
{
	size_t cap = p->capn;

	if (c->err || vp_grow((void **)&p->nodes, &cap, (size_t)p->nn + 1, sizeof(*p->nodes))) {
		c->err = -ENOMEM;
		return FAIL;
	}
	p->capn = (uint32_t)cap;
	memset(&p->nodes[p->nn], 0, sizeof(*p->nodes));
	p->nodes[p->nn].parent = NONE;
	p->nodes[p->nn].corr[0] = p->nodes[p->nn].corr[1] = NONE;
	return p->nn++;
}

struct wseg *vp_wpat_seg(struct gctx *c, struct wpat *p)
{
	size_t cap = p->caps;

	if (c->err || vp_grow((void **)&p->segs, &cap, (size_t)p->ns + 1, sizeof(*p->segs))) {
		c->err = -ENOMEM;
		return NULL;
	}
	p->caps = (uint32_t)cap;
	memset(&p->segs[p->ns], 0, sizeof(*p->segs));
	return &p->segs[p->ns++];
}

/* Room for @n more pool entries; returns their offset (pointers into the
 * pool are invalid afterwards). */
uint32_t vp_wpat_alloc(struct gctx *c, struct wpat *p, uint32_t n)
{
	size_t cap = p->capp;
	uint32_t off;

	if (c->err || vp_grow((void **)&p->pool, &cap, (size_t)p->np + n, sizeof(*p->pool))) {
		c->err = -ENOMEM;
		return 0;
	}
	p->capp = (uint32_t)cap;
	off = p->np;
	p->np += n;
	return off;
}

/* Copy @n entries from another pattern's pool (or any array). */
uint32_t vp_wpat_copy(struct gctx *c, struct wpat *p, const uint32_t *src, uint32_t n)
{
	uint32_t off = vp_wpat_alloc(c, p, n);

	if (!c->err && n)
		memcpy(p->pool + off, src, n * sizeof(*src));
	return off;
}

/* Union of two sorted lists into @p's pool; @n returns the length. */
uint32_t vp_wpat_union(struct gctx *c, struct wpat *p, const uint32_t *a, uint32_t na,
			 const uint32_t *b, uint32_t nb, uint32_t *n)
{
	uint32_t off = vp_wpat_alloc(c, p, na + nb), i = 0, j = 0, k = 0;
	uint32_t *d;

	*n = 0;
	if (c->err)
		return 0;
	d = p->pool + off;
	while (i < na || j < nb) {
		uint32_t v;

		if (j >= nb || (i < na && a[i] < b[j]))
			v = a[i++];
		else if (i >= na || b[j] < a[i])
			v = b[j++];
		else
			v = a[i++], j++;
		d[k++] = v;
	}
	*n = k;
	p->np = off + k;
	return off;
}
