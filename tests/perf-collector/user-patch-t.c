/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * user-patch-t.c - tests for perf-collector/probes/user-patch.c, the user
 * backend's entry patches, on machine code written out by hand (no
 * process): endbr64 kept first, RIP-relative operands and a conditional
 * branch relocated to keep their targets, and the refusals - a function
 * too short, one that returns or calls in its first bytes, a branch into
 * the displaced bytes, a loop back to the entry.
 */
#include <config.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "perf-collector/probes/user-patch.h"
#include "tests/tap/basic.h"

static int32_t rel32(const unsigned char *p)
{
	int32_t v;

	memcpy(&v, p, 4);
	return v;
}

int main(void)
{
	struct vp_upatch p;
	unsigned char out[VP_UPATCH_RELOC_MAX];
	char why[160];
	int n;

#ifndef HAVE_CAPSTONE
	skip_all("varperf was built without capstone, which decodes what a patch displaces");
#endif
	plan(36);

	/* endbr64; push %rbp; mov %rsp,%rbp; sub $0x10,%rsp; ...; ret */
	{
		static const unsigned char f[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89,
						   0xe5, 0x48, 0x83, 0xec, 0x10, 0xc9, 0xc3 };

		ok(vp_upatch_plan(f, sizeof(f), 0x1000, &p, why, sizeof(why)) == 0,
		   "endbr64 prologue: patched");
		is_int(0x1004, (long)p.at, "the jmp goes after endbr64");
		is_int(8, p.len, "whole instructions: push, mov, sub (8 bytes)");
		is_int(3, p.ninsns, "three instructions displaced");
		ok(!memcmp(p.orig, f + 4, 8), "the original bytes are kept");
		n = vp_upatch_relocate(&p, 0x7000, out);
		is_int(8 + 5, n, "relocated: the same 8 bytes and a jmp back");
		ok(!memcmp(out, f + 4, 8), "nothing position-dependent: copied as is");
		is_int(0xe9, out[8], "then a jmp");
		is_int(0x100c - (0x7000 + 13), rel32(out + 9), "... back to +12");
	}
	/* mov 0x2000(%rip),%rax; add $1,%eax; ret (a RIP-relative load first) */
	{
		static const unsigned char f[] = { 0x48, 0x8b, 0x05, 0x00, 0x20, 0x00, 0x00,
						   0x83, 0xc0, 0x01, 0xc3 };
		uint64_t target = 0x400000 + 7 + 0x2000;

		ok(vp_upatch_plan(f, sizeof(f), 0x400000, &p, why, sizeof(why)) == 0,
		   "RIP-relative prologue: patched");
		is_int(0x400000, (long)p.at, "no endbr64: the jmp goes at the entry");
		is_int(7, p.len, "one instruction of 7 bytes");
		n = vp_upatch_relocate(&p, 0x500000, out);
		is_int(12, n, "relocated: 7 bytes and the jmp back");
		ok(!memcmp(out, f, 3), "the same opcode and ModRM");
		is_int((long)(target - (0x500000 + 7)), rel32(out + 3),
		       "the displacement reaches the same data from its new place");
		is_int((long)(0x400007 - (0x500000 + 12)), rel32(out + 8), "jmp back to +7");
		ok(vp_upatch_relocate(&p, 0x400000 + 0x90000000ULL, out) == -ERANGE,
		   "data beyond 2 GiB of the new place: -ERANGE");
	}
	/* endbr64; test %edi,%edi; je +0x10; ... (a conditional branch displaced) */
	{
		unsigned char f[32] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x85, 0xff, 0x74, 0x10 };

		memset(f + 8, 0x90, sizeof(f) - 9);
		f[31] = 0xc3;
		ok(vp_upatch_plan(f, sizeof(f), 0x2000, &p, why, sizeof(why)) == 0,
		   "a jcc among the first bytes: patched");
		is_int(0x2004, (long)p.at, "after endbr64");
		is_int(5, p.len, "test, je and a nop: 5 bytes");
	}
	/* the same, but long enough: test; je; nop x3 */
	{
		unsigned char f[32] = { 0x85, 0xff, 0x74, 0x10, 0x90, 0x90, 0x90 };

		memset(f + 7, 0x90, sizeof(f) - 8);
		f[31] = 0xc3;
		ok(vp_upatch_plan(f, sizeof(f), 0x2000, &p, why, sizeof(why)) == 0,
		   "test; je; nop: patched");
		is_int(5, p.len, "test, je, nop: 5 bytes");
		n = vp_upatch_relocate(&p, 0x3000, out);
		is_int(2 + 6 + 1 + 5, n, "the je becomes a 6-byte je rel32");
		ok(out[2] == 0x0f && out[3] == 0x84, "je rel32 (0f 84)");
		is_int((long)(0x2014 - (0x3000 + 8)), rel32(out + 4),
		       "... to the same target, +0x14");
	}
	/* too short: xor %eax,%eax; ret */
	{
		static const unsigned char f[] = { 0x31, 0xc0, 0xc3 };

		ok(vp_upatch_plan(f, sizeof(f), 0x1000, &p, why, sizeof(why)) == -EINVAL,
		   "a 3-byte function is refused");
		is_string("it is too short to patch (3 bytes)", why, "... and says why");
	}
	/* returns within its first 5 bytes: xor %eax,%eax; ret; padding */
	{
		static const unsigned char f[] = { 0x31, 0xc0, 0xc3, 0x90, 0x90, 0x90, 0x90 };

		ok(vp_upatch_plan(f, sizeof(f), 0x1000, &p, why, sizeof(why)) == -EINVAL,
		   "a ret among the first 5 bytes is refused");
		is_string("it returns within its first 5 bytes", why, "... and says why");
	}
	/* a call among the first bytes */
	{
		static const unsigned char f[] = { 0xe8, 0x00, 0x00, 0x00, 0x00, 0xc3 };

		ok(vp_upatch_plan(f, sizeof(f), 0x1000, &p, why, sizeof(why)) == -EINVAL,
		   "a call among the first 5 bytes is refused");
	}
	/* a branch into the displaced bytes: push %rbx; mov %edi,%ebx; ...; jne +1 */
	{
		static const unsigned char f[] = { 0x53,	     /* 0: push %rbx */
						   0x89, 0xfb,	     /* 1: mov %edi,%ebx */
						   0x83, 0xeb, 0x01, /* 3: sub $1,%ebx */
						   0x75, 0xf9,	     /* 6: jne 1 */
						   0x5b, 0xc3 };

		ok(vp_upatch_plan(f, sizeof(f), 0x1000, &p, why, sizeof(why)) == -EINVAL,
		   "a branch into the displaced bytes is refused");
		is_string("the branch at +0x6 lands in the bytes the patch replaces (+0x1)", why,
			  "... and names it");
	}
	/* a loop back to the entry (jmp to +0) */
	{
		static const unsigned char f[] = { 0x83, 0xef, 0x01, /* sub $1,%edi */
						   0x85, 0xff,	     /* test %edi,%edi */
						   0x75, 0xf9,	     /* jne 0 */
						   0xc3 };

		ok(vp_upatch_plan(f, sizeof(f), 0x1000, &p, why, sizeof(why)) == -EINVAL,
		   "a loop back to the entry is refused");
		is_string("the branch at +0x5 loops back to its entry", why, "... and says so");
	}
	/* the jmp itself */
	ok(vp_upatch_jmp(0x1000, 0x2000, out) == 0 && out[0] == 0xe9 &&
		   rel32(out + 1) == 0x2000 - 0x1005,
	   "jmp rel32 from 0x1000 to 0x2000");
	ok(vp_upatch_jmp(0x1000, 0x1000 + 0x100000000ULL, out) == -ERANGE,
	   "a jmp beyond 2 GiB: -ERANGE");
	return 0;
}
