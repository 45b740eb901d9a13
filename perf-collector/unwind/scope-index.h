/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * scope-index.h - the functions inlined at an address, found without
 * walking a whole compilation unit per address.
 *
 * libdw's dwarf_getscopes() (and dwarf_getscopes_die()) visit the DIEs of
 * the compilation unit from its root for every address asked: on a large
 * single unit (sqlite3's amalgamation, 8 MB of C) naming one sampled
 * frame took milliseconds, and phase 1's end seconds.  Here each unit's
 * functions are listed once, by address range, the first time an address
 * of the unit is asked; an address then costs a binary search and a walk
 * down the one function's nested scopes that hold it.
 */
#ifndef VARPERF_SCOPE_INDEX_H
#define VARPERF_SCOPE_INDEX_H

#include <elfutils/libdw.h>

struct vp_scope_index;

struct vp_scope_index *vp_scope_index_new(void);
void vp_scope_index_free(struct vp_scope_index *ix);

/*
 * vp_scope_index_inlined - the inlined instances (DW_TAG_inlined_subroutine)
 * that hold DWARF address @pc of compilation unit @cu, innermost first,
 * in *@chain (malloc'ed, NULL when none): their number, 0 when @pc is in
 * a function but no inlined code, or -1 when no function of @cu the index
 * knows holds it, or it could not be indexed for want of memory (the
 * caller may then ask libdw the slow way).
 */
int vp_scope_index_inlined(struct vp_scope_index *ix, Dwarf_Die *cu, Dwarf_Addr pc,
			   Dwarf_Die **chain);

#endif
