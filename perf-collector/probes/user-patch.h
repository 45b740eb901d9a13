/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * user-patch.h - the user backend's code patches (x86-64): which bytes of a
 * function's entry a 5-byte "jmp rel32" may replace, and those bytes
 * relocated to run elsewhere, from the function's code alone (no process).
 */
#ifndef VARPERF_USER_PATCH_H
#define VARPERF_USER_PATCH_H

#include <stddef.h>
#include <stdint.h>

enum {
	VP_UPATCH_JMP = 5,	 /* the bytes of a jmp rel32 */
	VP_UPATCH_MAX = 24,	 /* at most this many bytes are displaced */
	VP_UPATCH_RELOC_MAX = 96 /* their relocation, and the jump back */
};

/* Where a function is patched and what the patch displaces. */
struct vp_upatch {
	uint64_t addr;	  /* the function, as the code given */
	uint64_t at;	  /* the jmp: addr, or past an endbr64 there */
	unsigned len;	  /* bytes displaced at @at (>= VP_UPATCH_JMP) */
	unsigned ninsns;  /* instructions displaced */
	unsigned char orig[VP_UPATCH_MAX];
};

/**
 * vp_upatch_plan - decide how to patch the function at @addr whose code
 * is @code (@size bytes, the whole function): the jmp goes at its entry,
 * after an endbr64 (kept first: indirect calls land on it), over whole
 * instructions of at least 5 bytes.  Refused (-EINVAL, with why in @why):
 * a function too short, displaced instructions that leave or loop (a
 * ret, a call, a jmp, loop/jrcxz), an undecodable one, and a branch of the
 * function into the displaced bytes.  Returns 0 or -errno.
 */
int vp_upatch_plan(const unsigned char *code, size_t size, uint64_t addr, struct vp_upatch *p,
		   char *why, size_t whylen);

/* The same, and with VP_UPATCH_SKIP_UNKNOWN in @flags an instruction of
 * the function capstone cannot decode (past the displaced ones) is
 * skipped byte by byte rather than refused: for code known to be sound,
 * such as the unwinder's (CET shadow-stack instructions). */
enum { VP_UPATCH_SKIP_UNKNOWN = 1 << 0 };
int vp_upatch_plan_flags(const unsigned char *code, size_t size, uint64_t addr, int flags,
			 struct vp_upatch *p, char *why, size_t whylen);

/**
 * vp_upatch_relocate - the displaced instructions of @p made to run at
 * address @to, followed by a jmp back to the instruction after them, in
 * @out (room for VP_UPATCH_RELOC_MAX): RIP-relative operands and relative
 * branches keep their targets.  Returns the length, or -ERANGE when a
 * target is beyond a 32-bit displacement from @to.
 */
int vp_upatch_relocate(const struct vp_upatch *p, uint64_t to, unsigned char *out);

/* The jmp rel32 at @from to @to, in @out (5 bytes): 0, or -ERANGE. */
int vp_upatch_jmp(uint64_t from, uint64_t to, unsigned char *out);

#endif
