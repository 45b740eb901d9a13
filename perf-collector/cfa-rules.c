/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * cfa-rules.c - the simple CFA rules of code addresses, read with libdw
 * from .eh_frame on first use and cached by (module, address).
 */
#include <config.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cfa-rules.h"
#include "hash.h"
#include "util.h"

enum {
	DW_RBP = 6, /* DWARF x86-64 register numbers */
	DW_RSP = 7,
	/* Forget the cached rules beyond this many addresses. */
	RULES_MAX = 1 << 20,
	CFA_EMPTY = 0, /* the kind of an unused slot */
};

struct rule_slot {
	const void *owner;
	uint64_t addr;
	struct vp_cfa_rule rule;
};

/* An open-addressing hash table of (owner, address) -> rule. */
struct vp_cfa_rules {
	struct rule_slot *v;
	size_t mask, n;
};

/* Whether @ops says "saved at CFA + offset"; the offset into *@ret. */
static int cfa_slot(const Dwarf_Op *ops, size_t nops, int32_t *ret)
{
	if (!ops || !nops || ops[0].atom != DW_OP_call_frame_cfa)
		return 0;
	if (nops == 1) {
		*ret = 0;
		return 1;
	}
	if (nops != 2 || ops[1].atom != DW_OP_plus_uconst)
		return 0;
	/* a negative offset, as libdw stores it: modulo 2^64 */
	*ret = (int32_t)(int64_t)ops[1].number;
	return 1;
}

/* The rule at link-time address @addr of a module, from its .eh_frame @cfi. */
static void rule_read(Dwarf_CFI *cfi, uint64_t addr, struct vp_cfa_rule *r)
{
	Dwarf_Frame *f = NULL;
	Dwarf_Op mem[3], *ops;
	size_t nops;
	bool signal;
	int ra;

	r->kind = VP_CFA_NONE;
	if (!cfi || dwarf_cfi_addrframe(cfi, addr, &f) < 0)
		return;
	r->kind = VP_CFA_OTHER;
	ra = dwarf_frame_info(f, NULL, NULL, &signal);
	if (ra < 0 || signal)
		goto out;
	if (dwarf_frame_cfa(f, &ops, &nops) < 0 || nops != 1 || ops[0].atom != DW_OP_bregx ||
	    (ops[0].number != DW_RSP && ops[0].number != DW_RBP))
		goto out;
	r->cfa_bp = ops[0].number == DW_RBP;
	r->cfa_off = (int32_t)(int64_t)ops[0].number2;
	if (dwarf_frame_register(f, ra, mem, &ops, &nops) < 0)
		goto out;
	if (!nops && ops)
		r->outermost = 1; /* undefined: nothing called this */
	else if (!cfa_slot(ops, nops, &r->ra_off))
		goto out;
	if (dwarf_frame_register(f, DW_RBP, mem, &ops, &nops) < 0)
		goto out;
	if (!nops && !ops)
		r->bp_off = 0; /* same value */
	else if (!nops || !cfa_slot(ops, nops, &r->bp_off) || !r->bp_off)
		goto out; /* undefined (which ends libunwind's chain), or more */
	r->kind = VP_CFA_SIMPLE;
out:
	free(f);
}

static void rules_grow(struct vp_cfa_rules *rules)
{
	struct rule_slot *old = rules->v;
	size_t oldn = old ? rules->mask + 1 : 0;

	if (oldn >= RULES_MAX) {
		/* addresses without end (JIT, ...): start again */
		memset(rules->v, 0, oldn * sizeof(*rules->v));
		rules->n = 0;
		return;
	}
	rules->mask = oldn ? oldn * 2 - 1 : 4095;
	rules->v = xcalloc(rules->mask + 1, sizeof(*rules->v));
	rules->n = 0;
	for (size_t i = 0; i < oldn; i++) {
		size_t j;

		if (old[i].rule.kind == CFA_EMPTY)
			continue;
		j = vp_hash_mix((uint64_t)(uintptr_t)old[i].owner, old[i].addr) & rules->mask;
		while (rules->v[j].rule.kind != CFA_EMPTY)
			j = (j + 1) & rules->mask;
		rules->v[j] = old[i];
		rules->n++;
	}
	free(old);
}

/* The rule of (@owner, @addr), read on first use. */
const struct vp_cfa_rule *vp_cfa_rules_get(struct vp_cfa_rules *rules, const void *owner,
					   Dwarf_CFI *cfi, uint64_t addr)
{
	size_t i;

	if (2 * (rules->n + 1) > rules->mask)
		rules_grow(rules);
	i = vp_hash_mix((uint64_t)(uintptr_t)owner, addr) & rules->mask;
	for (;; i = (i + 1) & rules->mask) {
		struct rule_slot *s = &rules->v[i];

		if (s->rule.kind == CFA_EMPTY) {
			s->owner = owner;
			s->addr = addr;
			rule_read(cfi, addr, &s->rule);
			rules->n++;
			return &s->rule;
		}
		if (s->owner == owner && s->addr == addr)
			return &s->rule;
	}
}

struct vp_cfa_rules *vp_cfa_rules_new(void)
{
	return xcalloc(1, sizeof(struct vp_cfa_rules));
}

void vp_cfa_rules_free(struct vp_cfa_rules *rules)
{
	if (!rules)
		return;
	free(rules->v);
	free(rules);
}
