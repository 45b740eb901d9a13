/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * scope-index.c - per compilation unit, its functions by address range
 * (built once, on the first address of the unit asked), and the inlined
 * instances at an address found by descending only the scopes that hold
 * it (see scope-index.h).
 */
#include <config.h>

#include <dwarf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/hashtab.h"
#include "perf-collector/unwind/scope-index.h"
#include "util/util.h"

/* One address range of a function with code (a hot/cold split function
 * has two). */
struct sub_range {
	Dwarf_Addr low, high;
	Dwarf_Die die;
};

/* A compilation unit's functions, sorted by address; the key is the
 * unit's DIE address (unique within the DWARF it comes from). */
struct unit {
	uintptr_t key;
	struct sub_range *v;
	size_t n, cap;
};

struct vp_scope_index {
	struct vp_hashtab units; /* of struct unit */
};

struct dies {
	Dwarf_Die *v;
	size_t n, cap;
};

static void dies_push(struct dies *d, const Dwarf_Die *die)
{
	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 8;
		d->v = xrealloc(d->v, d->cap * sizeof(*d->v));
	}
	d->v[d->n++] = *die;
}

static void unit_add(struct unit *u, Dwarf_Die *die)
{
	Dwarf_Addr base, low, high;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(die, off, &base, &low, &high)) > 0) {
		if (low >= high)
			continue;
		if (u->n == u->cap) {
			u->cap = u->cap ? u->cap * 2 : 256;
			u->v = xrealloc(u->v, u->cap * sizeof(*u->v));
		}
		u->v[u->n].low = low;
		u->v[u->n].high = high;
		u->v[u->n].die = *die;
		u->n++;
	}
}

/* The functions among @parent's children, and those of its namespaces
 * (C++ puts out-of-line definitions there); not inside functions. */
static void unit_collect(struct unit *u, Dwarf_Die *parent)
{
	Dwarf_Die child;

	if (dwarf_child(parent, &child) != 0)
		return;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			unit_add(u, &child);
			break;
		case DW_TAG_namespace:
			unit_collect(u, &child);
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

static int cmp_range(const void *a, const void *b)
{
	const struct sub_range *x = a, *y = b;

	return x->low < y->low ? -1 : x->low > y->low;
}

static struct unit *unit_of(struct vp_scope_index *ix, Dwarf_Die *cu)
{
	uintptr_t key = (uintptr_t)cu->addr;
	struct unit *u;
	void *entry;
	int ret = vp_hashtab_insert(&ix->units, vp_hash_mix(key, 0), &key, &entry);

	if (ret < 0)
		return NULL;
	u = entry;
	if (ret) {
		unit_collect(u, cu);
		qsort(u->v, u->n, sizeof(*u->v), cmp_range);
	}
	return u;
}

/* Whether @die has an address range of its own (a lexical block without
 * one still holds the scopes nested in it). */
static int has_pc_range(Dwarf_Die *die)
{
	return dwarf_hasattr(die, DW_AT_low_pc) || dwarf_hasattr(die, DW_AT_ranges);
}

/* The inlined instances under @parent that hold @pc, outermost first:
 * only the scopes that hold @pc are entered (scopes nest, and siblings
 * with code do not overlap). */
static void descend(Dwarf_Die *parent, Dwarf_Addr pc, struct dies *out)
{
	Dwarf_Die child;

	if (dwarf_child(parent, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child), in;

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block)
			continue;
		in = dwarf_haspc(&child, pc) == 1;
		if (in && tag == DW_TAG_inlined_subroutine)
			dies_push(out, &child);
		if (in || (tag == DW_TAG_lexical_block && !has_pc_range(&child))) {
			size_t before = out->n;

			descend(&child, pc, out);
			if (in || out->n > before)
				return;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

int vp_scope_index_inlined(struct vp_scope_index *ix, Dwarf_Die *cu, Dwarf_Addr pc,
			   Dwarf_Die **chain)
{
	struct unit *u = unit_of(ix, cu);
	struct dies d = { 0 };
	size_t lo = 0, hi;

	*chain = NULL;
	/* out of memory: the caller asks libdw the slow way */
	if (!u)
		return -1;
	hi = u->n;
	/* the last range starting at or before @pc */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (u->v[mid].low <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || pc >= u->v[lo - 1].high)
		return -1;
	descend(&u->v[lo - 1].die, pc, &d);
	/* innermost first */
	for (size_t i = 0; i < d.n / 2; i++) {
		Dwarf_Die t = d.v[i];

		d.v[i] = d.v[d.n - 1 - i];
		d.v[d.n - 1 - i] = t;
	}
	*chain = d.v;
	return (int)d.n;
}

struct vp_scope_index *vp_scope_index_new(void)
{
	struct vp_scope_index *ix = xcalloc(1, sizeof(*ix));

	vp_hashtab_init(&ix->units, sizeof(struct unit), sizeof(uintptr_t), NULL);
	return ix;
}

void vp_scope_index_free(struct vp_scope_index *ix)
{
	struct unit *u;
	size_t pos = 0;

	if (!ix)
		return;
	while ((u = vp_hashtab_next(&ix->units, &pos)))
		free(u->v);
	vp_hashtab_release(&ix->units);
	free(ix);
}
