/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * probe-sites.h - where the probes of a function go: its entry probe's
 * instruction and class, and the instructions that leave it.
 */
#ifndef VARPERF_PROBE_SITES_H
#define VARPERF_PROBE_SITES_H

#include <stdint.h>

#include "core/datafile.h"
#include "perf-collector/symbols/symbols.h"

/* Probe function @f of @sf on its first instruction, whatever comes after
 * it (--no-move-probes). */
void vp_symfile_probe_first(struct vp_symfile *sf, struct vp_func *f);
/*
 * vp_symfile_place_probe - the probe's place and class for @f (its
 * probe_off, insn_class and VP_FUNC_MOVED): moved past a straight-line
 * prologue when @move.
 */
void vp_symfile_place_probe(struct vp_symfile *sf, struct vp_func *f, int move);
/*
 * How the exits of one function are probed.  A return probe (uretprobe)
 * replaces the return address on the stack with the kernel's trampoline,
 * which the C++ unwinder cannot unwind through: an exception through such
 * a frame ends in std::terminate().  Probes on the instructions that leave
 * the function leave the stack alone.
 */
enum vp_exit_how {
	VP_EXITS_URETPROBE = 0, /* a return probe */
	VP_EXITS_SITES = 1,	/* entry-type probes on its ret and tail-call jmp sites */
	VP_EXITS_NONE = 2,	/* it never returns (no way out but calls): none */
	VP_EXITS_AT_ENTRY = 3,	/* its probed first instruction leaves it (ret, or a
				 * jmp elsewhere): the entry probe records both */
};

struct vp_exits {
	uint32_t how;	    /* enum vp_exit_how */
	uint32_t n;	    /* VP_EXITS_SITES: number of sites */
	uint64_t *offs;	    /* their file offsets (malloc'ed) */
	uint32_t tail;	    /* how many of them are tail-call jmps (the rest: ret) */
	uint32_t indirect;  /* indirect jmps: not probed, maybe tail calls */
	uint32_t cond_tail; /* conditional jumps out of the function: not probed */
	uint32_t unknown;   /* jmps to code that is no function's start: not probed */
	uint32_t self_calls; /* direct calls of the function itself (recursion) */
};

/**
 * vp_symfile_exits - decode the code of @f (its symbol's extent, plus the
 * .cold parts it jumps to) and find the instructions that leave it: each
 * ret, and each direct jmp to the start of a function or into the PLT (a
 * tail call).  @ret->how is VP_EXITS_SITES or VP_EXITS_AT_ENTRY when it
 * found some, VP_EXITS_NONE when @f has no way out at all, and
 * VP_EXITS_URETPROBE when its only ways out cannot be probed (indirect or
 * conditional jumps, jumps to unnamed code).  Returns 0, -ENOEXEC when the
 * code could not be decoded or an exit cannot carry a probe (@ret->how is
 * then VP_EXITS_URETPROBE), or -ENOTSUP without capstone.  @ret->self_calls
 * counts the direct calls of @f by itself.  Release with vp_exits_release().
 */
int vp_symfile_exits(struct vp_symfile *sf, const struct vp_func *f, struct vp_exits *ret);
void vp_exits_release(struct vp_exits *ex);

#endif
