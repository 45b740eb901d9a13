/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * cfa-rules.h - a cache of the simple CFA rules of code addresses, read
 * once per address from .eh_frame through libdw, so that most frames are
 * unwound without libunwind (x86-64).
 */
#ifndef VARPERF_CFA_RULES_H
#define VARPERF_CFA_RULES_H

#include <elfutils/libdw.h>
#include <stdint.h>

/*
 * How to step out of the code at one link-time address of a module, when
 * the CFI says something simple: the CFA is rsp or rbp plus an offset, the
 * return address is saved at the CFA plus an offset (or undefined: the
 * outermost frame) and rbp is unchanged or saved likewise.  Other rules
 * (expressions, signal frames) are VP_CFA_OTHER, code without CFI is
 * VP_CFA_NONE: libunwind's.
 */
enum vp_cfa_kind {
	VP_CFA_SIMPLE = 1, /* 0 marks an unused slot of the cache */
	VP_CFA_OTHER,
	VP_CFA_NONE, /* no CFI at all */
};

struct vp_cfa_rule {
	int8_t kind;	  /* enum vp_cfa_kind */
	int8_t cfa_bp;	  /* the CFA is rbp + cfa_off (else rsp + cfa_off) */
	int8_t outermost; /* the return address is undefined */
	int32_t cfa_off;
	int32_t ra_off;
	int32_t bp_off;	  /* 0: rbp unchanged */
};

struct vp_cfa_rules;

/**
 * vp_cfa_rules_new - an empty cache
 *
 * Never fails (dies on OOM).  Free it with vp_cfa_rules_free().
 */
struct vp_cfa_rules *vp_cfa_rules_new(void);

/**
 * vp_cfa_rules_free - free @rules and every rule in it; NULL is a no-op.
 */
void vp_cfa_rules_free(struct vp_cfa_rules *rules);

/**
 * vp_cfa_rules_get - the rule at link-time address @addr of @owner
 * @rules: the cache.
 * @owner: the module the address is in: the key, with @addr (only compared,
 *	never dereferenced).
 * @cfi: the .eh_frame of @owner (NULL: none), read on a miss only; an
 *	owner must always come with the same @cfi.
 * @addr: the link-time address: for a return address, the call before it.
 *
 * Returns the cached rule, never NULL.  It belongs to @rules and is valid
 * until the next call: the cache grows, and when it holds too many
 * addresses (JIT code, ...) starts again empty.
 */
const struct vp_cfa_rule *vp_cfa_rules_get(struct vp_cfa_rules *rules, const void *owner,
					   Dwarf_CFI *cfi, uint64_t addr);

#endif
