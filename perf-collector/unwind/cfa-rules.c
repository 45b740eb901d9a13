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

#include "perf-collector/unwind/cfa-rules.h"
#include "core/hashtab.h"
#include "util/util.h"

enum {
	DW_RBP = 6, /* DWARF x86-64 register numbers */
	DW_RSP = 7,
	/* Forget the cached rules beyond this many addresses. */
	RULES_MAX = 1 << 19,
};

/* (owner, address) -> rule; the key is the first two fields. */
struct rule_ent {
	uint64_t owner, addr;
	struct vp_cfa_rule rule;
};

struct vp_cfa_rules {
	struct vp_hashtab tab;
	struct vp_cfa_rule uncached; /* the last rule the cache had no room for */
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

/* The rule of (@owner, @addr), read on first use. */
const struct vp_cfa_rule *vp_cfa_rules_get(struct vp_cfa_rules *rules, const void *owner,
					   Dwarf_CFI *cfi, uint64_t addr)
{
	uint64_t key[2] = { (uint64_t)(uintptr_t)owner, addr }, hash = vp_hash_mix(key[0], addr);
	struct rule_ent *e = vp_hashtab_find(&rules->tab, hash, key);
	void *p;

	if (e)
		return &e->rule;
	/* addresses without end (JIT, ...): start again */
	if (rules->tab.n >= RULES_MAX)
		vp_hashtab_clear(&rules->tab);
	if (vp_hashtab_insert(&rules->tab, hash, key, &p) < 0) {
		/* no memory to cache it: read it each time */
		rule_read(cfi, addr, &rules->uncached);
		return &rules->uncached;
	}
	e = p;
	rule_read(cfi, addr, &e->rule);
	return &e->rule;
}

struct vp_cfa_rules *vp_cfa_rules_new(void)
{
	struct vp_cfa_rules *rules = xcalloc(1, sizeof(*rules));

	vp_hashtab_init(&rules->tab, sizeof(struct rule_ent), 2 * sizeof(uint64_t), NULL);
	return rules;
}

void vp_cfa_rules_free(struct vp_cfa_rules *rules)
{
	if (!rules)
		return;
	vp_hashtab_release(&rules->tab);
	free(rules);
}
