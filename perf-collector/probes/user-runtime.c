// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * user-runtime.c - the machine code the user backend runs in its target
 * (x86-64), copied there, never called in varperf.  A patched function's
 * jmp leads to its stub, which pushes the function's number, calls
 * vp_urt_entry (which pops it) and then runs the relocated first instructions; the
 * entry writes an event to the thread's ring and puts vp_urt_return in
 * place of the return address, keeping the real one on the thread's
 * shadow stack (as Orbit's user-space instrumentation does); the return
 * writes the exit and goes back there.  No system call but on a thread's
 * first call (its id), no lock: a ring has one writer.  Regions and
 * layout: user-runtime.h.
 *
 * Registers: every one is kept but the status flags (which no call
 * preserves): a caller compiled with interprocedural register allocation
 * (GCC's -fipa-ra, at -O2) keeps values in the registers its callee is
 * known not to touch, %r11 and %rsi as well.
 */
#include <config.h>

#include <string.h>

#include "perf-collector/probes/user-runtime.h"

#define S_(x) #x
#define S(x) S_(x)

#if defined(__x86_64__)
__asm__(
	".section .rodata.vp_urt,\"a\"\n"
	".balign 64\n"
	".globl vp_urt_start\n"
	".hidden vp_urt_start\n"
	"vp_urt_start:\n"
	"	.quad 0\n" /* the private region */
	"	.quad 0\n" /* the shared region */
	"	.quad 0\n" /* this code's first mapping (the one patched calls use) */
	"	.balign 16\n"

	/* rdx = the slot of fs base rax (rax != 0), or 0 when not there;
	 * rcx is the private region on the way.  Ends at label 1 or 2. */
	".macro vp_urt_find\n"
	"	imul $0x61c88647, %rax, %rdx\n"
	"	shr $20, %rdx\n"
	"	and $(" S(VP_URT_NSLOTS) " - 1), %edx\n"
	"	shl $" S(VP_URT_SLOT_SHIFT) ", %rdx\n"
	"	mov vp_urt_start(%rip), %rcx\n"
	"	lea " S(VP_URT_SLOTS_OFF) "(%rcx,%rdx), %rdx\n"
	"	add $(" S(VP_URT_SLOTS_OFF) " + (" S(VP_URT_NSLOTS) " << " S(VP_URT_SLOT_SHIFT) ")), %rcx\n"
	"10:	cmp %rax, (%rdx)\n"
	"	je 12f\n"
	"	cmpq $0, (%rdx)\n"
	"	je 11f\n"
	"	add $(1 << " S(VP_URT_SLOT_SHIFT) "), %rdx\n"
	"	cmp %rcx, %rdx\n"
	"	jb 10b\n"
	"	sub $(" S(VP_URT_NSLOTS) " << " S(VP_URT_SLOT_SHIFT) "), %rdx\n"
	"	jmp 10b\n"
	"11:\n"
	".endm\n"

	/* ---- entry: 8(%rsp) is the function's number, 16(%rsp) its
	 * return address; after the pushes 56(%rsp) and 64(%rsp) ---- */
	".globl vp_urt_entry\n"
	".hidden vp_urt_entry\n"
	"vp_urt_entry:\n"
	"	push %rax\n"
	"	push %rdx\n"
	"	push %rcx\n"
	"	push %rsi\n"
	"	push %rdi\n"
	"	push %r11\n"
	"	mov vp_urt_start(%rip), %rcx\n"
	"	cmpb $0, " S(VP_URT_PRIV_FLAG) "(%rcx)\n"
	"	je 9f\n"
	/* the thread pointer: rdfsbase, or where the program's threads
	 * all have one (dynamically linked: set before any of its code
	 * runs), "mov %fs:0,%rax" in its place (9 bytes, 10 times faster:
	 * vp_urt_fs_patch) */
	".globl vp_urt_fs1\n"
	".hidden vp_urt_fs1\n"
	"vp_urt_fs1:\n"
	"	rdfsbase %rax\n"
	"	.byte 0x0f, 0x1f, 0x40, 0x00\n" /* nopl 0x0(%rax) */
	"	test %rax, %rax\n"
	"	jz 9f\n"
	"	vp_urt_find\n"
	/* not there: claim the empty slot rdx for key rax */
	"	mov %rax, %rsi\n"
	"	mov %rdx, %rdi\n"
	"	mov vp_urt_start(%rip), %rcx\n"
	"	mov $1, %eax\n"
	"	lock xadd %rax, " S(VP_URT_PRIV_CLAIMS) "(%rcx)\n"
	"	cmp $(" S(VP_URT_NSLOTS) " - 2), %rax\n"
	"	jae 9f\n" /* the table stays with room: the search ends */
	"	xor %eax, %eax\n"
	"	lock cmpxchg %rsi, (%rdi)\n"
	"	jne 9f\n" /* another thread's now: record from the next call */
	"	mov vp_urt_start+8(%rip), %rcx\n"
	"	mov $1, %eax\n"
	"	lock xadd %rax, " S(VP_URT_CTL_NRINGS) "(%rcx)\n"
	"	cmp $" S(VP_URT_NRINGS) ", %rax\n"
	"	jb 3f\n"
	"	lock incq " S(VP_URT_CTL_NORING) "(%rcx)\n"
	"	jmp 9f\n"
	"3:	imul $" S(VP_URT_RING_SIZE) ", %rax, %rax\n"
	"	lea " S(VP_URT_RINGS_OFF) "(%rcx,%rax), %rsi\n"
	"	mov $186, %eax\n" /* gettid */
	"	syscall\n"
	"	mov %eax, " S(VP_URT_R_TID) "(%rsi)\n"
	"	mov $39, %eax\n" /* getpid */
	"	syscall\n"
	"	mov %eax, " S(VP_URT_R_TID) "+4(%rsi)\n"
	"	mov %rsi, " S(VP_URT_SL_RING) "(%rdi)\n"
	/* where the thread keeps its id in its TCB (glibc's struct
	 * pthread: the kernel clears it when the thread ends, a new thread
	 * reusing the TCB sets its own), found by looking: 0 if not */
	"	mov " S(VP_URT_R_TID) "(%rsi), %eax\n"
	"	mov %eax, " S(VP_URT_SL_TID) "(%rdi)\n"
	"	mov $" S(VP_URT_TCB_SCAN_FROM) ", %ecx\n"
	"14:	cmp %eax, %fs:(%rcx)\n"
	"	je 15f\n"
	"	add $4, %ecx\n"
	"	cmp $" S(VP_URT_TCB_SCAN) ", %ecx\n"
	"	jb 14b\n"
	"	xor %ecx, %ecx\n"
	"15:	mov %rcx, " S(VP_URT_SL_TIDOFF) "(%rdi)\n"
	"	mov %rdi, %rdx\n"
	"12:\n"
	/* the thread's slot: rdx */
	"	mov %rdx, %rsi\n"
	"	mov 56(%rsp), %r11\n"
	/* the same thread as the slot's?  (a thread that ended left its
	 * TCB, hence its fs base, to a new one) */
	"	mov " S(VP_URT_SL_TIDOFF) "(%rsi), %rcx\n"
	"	test %rcx, %rcx\n"
	"	jz 13f\n"
	"	mov %fs:(%rcx), %edx\n"
	"	cmp " S(VP_URT_SL_TID) "(%rsi), %edx\n"
	"	jne 20f\n"
	"13:\n"
	"	mov " S(VP_URT_SL_RING) "(%rsi), %rdi\n"
	"	test %rdi, %rdi\n"
	"	jz 9f\n"
	/* a signal handler's call while this thread is in here: not
	 * recorded, counted */
	"	cmpq $0, " S(VP_URT_SL_BUSY) "(%rsi)\n"
	"	jne 6f\n"
	"	movq $1, " S(VP_URT_SL_BUSY) "(%rsi)\n"
	"	mov " S(VP_URT_R_HEAD) "(%rdi), %rax\n"
	"	mov %rax, %rcx\n"
	"	sub " S(VP_URT_SL_TAIL) "(%rsi), %rcx\n"
	"	cmp $" S(VP_URT_RING_CAP) ", %rcx\n"
	"	jb 4f\n"
	"	mov " S(VP_URT_R_TAIL) "(%rdi), %rcx\n"
	"	mov %rcx, " S(VP_URT_SL_TAIL) "(%rsi)\n"
	"	mov %rax, %rdx\n"
	"	sub %rcx, %rdx\n"
	"	cmp $" S(VP_URT_RING_CAP) ", %rdx\n"
	"	jb 4f\n"
	"	incq " S(VP_URT_R_LOST) "(%rdi)\n"
	"	jmp 8f\n"
	"4:	mov " S(VP_URT_SL_DEPTH) "(%rsi), %rcx\n"
	"	cmp $" S(VP_URT_SHADOW_N) ", %rcx\n"
	"	jb 5f\n"
	"	incq " S(VP_URT_R_DEEP) "(%rdi)\n"
	"	jmp 8f\n"
	"6:	incq " S(VP_URT_R_NESTED) "(%rdi)\n"
	"	jmp 9f\n"
	/* the shadow stack: return address, sp, function */
	"5:	shl $5, %rcx\n"
	"	lea " S(VP_URT_SL_SHADOW) "(%rsi,%rcx), %rcx\n"
	"	mov 64(%rsp), %rdx\n"
	"	mov %rdx, (%rcx)\n"
	"	lea 64(%rsp), %rdx\n"
	"	mov %rdx, 8(%rcx)\n"
	"	mov %r11, 16(%rcx)\n"
	"	incq " S(VP_URT_SL_DEPTH) "(%rsi)\n"
	/* the event, its time last */
	"	and $(" S(VP_URT_RING_CAP) " - 1), %eax\n"
	"	shl $5, %rax\n"
	"	lea " S(VP_URT_R_EVENTS) "(%rdi,%rax), %rcx\n"
	"	mov %rdx, 8(%rcx)\n"
	"	mov 64(%rsp), %rax\n"
	"	mov %rax, 16(%rcx)\n"
	"	mov %r11d, 24(%rcx)\n"
	"	movl $0, 28(%rcx)\n"
	"	lea vp_urt_return(%rip), %rax\n"
	"	mov %rax, 64(%rsp)\n"
	/* lfence: the time is read after what came before, and before
	 * the call goes on (rdtsc alone would overlap the call's first
	 * instructions, by more or less: no constant to compensate) */
	"	lfence\n"
	"	rdtsc\n"
	"	lfence\n"
	"	shl $32, %rdx\n"
	"	or %rdx, %rax\n"
	"	mov %rax, (%rcx)\n"
	"	incq " S(VP_URT_R_HEAD) "(%rdi)\n"
	"8:	movq $0, " S(VP_URT_SL_BUSY) "(%rsi)\n"
	"9:	pop %r11\n"
	"	pop %rdi\n"
	"	pop %rsi\n"
	"	pop %rcx\n"
	"	pop %rdx\n"
	"	pop %rax\n"
	"	jmp 22f\n"
	/* a new thread in a dead one's slot (its id in %edx): the dead
	 * one's frames are gone; the ring is told whose events follow */
	"20:	mov %edx, " S(VP_URT_SL_TID) "(%rsi)\n"
	"	movq $0, " S(VP_URT_SL_DEPTH) "(%rsi)\n"
	"	mov " S(VP_URT_SL_RING) "(%rsi), %rdi\n"
	"	test %rdi, %rdi\n"
	"	jz 13b\n"
	"	mov " S(VP_URT_R_HEAD) "(%rdi), %rax\n"
	"	mov %rax, %rcx\n"
	"	sub " S(VP_URT_R_TAIL) "(%rdi), %rcx\n"
	"	cmp $" S(VP_URT_RING_CAP) ", %rcx\n"
	"	jb 21f\n"
	"	incq " S(VP_URT_R_LOST) "(%rdi)\n"
	"	jmp 13b\n"
	"21:	and $(" S(VP_URT_RING_CAP) " - 1), %eax\n"
	"	shl $5, %rax\n"
	"	lea " S(VP_URT_R_EVENTS) "(%rdi,%rax), %rcx\n"
	"	movq $0, (%rcx)\n"
	"	movq $0, 8(%rcx)\n"
	"	mov %rdx, 16(%rcx)\n"
	"	movl $-1, 24(%rcx)\n"
	"	movl $2, 28(%rcx)\n"
	"	incq " S(VP_URT_R_HEAD) "(%rdi)\n"
	"	jmp 13b\n"
	"22:\n"
	/* the call starts when all this is done: no part of the entry
	 * overlaps its first instructions, whatever they are */
	"	lfence\n"
	"	ret $8\n" /* and the function's number */

	/* ---- return: a probed function returned here; rsp = its entry sp + 8 ---- */
	".globl vp_urt_return\n"
	".hidden vp_urt_return\n"
	"vp_urt_return:\n"
	"	push $0\n" /* the real return address comes here */
	"	push %rax\n"
	"	push %rdx\n"
	"	push %rcx\n"
	"	push %rsi\n"
	"	push %rdi\n"
	"	push %r8\n"
	"	push %r9\n"
	"	push %r11\n"
	"	lfence\n" /* after the call's last instructions */
	"	rdtsc\n"
	"	shl $32, %rdx\n"
	"	or %rdx, %rax\n"
	"	mov %rax, %r11\n"
	".globl vp_urt_fs2\n"
	".hidden vp_urt_fs2\n"
	"vp_urt_fs2:\n"
	"	rdfsbase %rax\n"
	"	.byte 0x0f, 0x1f, 0x40, 0x00\n" /* nopl 0x0(%rax) */
	"	vp_urt_find\n"
	"	ud2\n" /* no slot: the return address is lost */
	"12:	mov %rdx, %rsi\n"
	"	lea 64(%rsp), %rdi\n" /* the entry's sp */
	"	mov " S(VP_URT_SL_DEPTH) "(%rsi), %rcx\n"
	/* entries below this one were left by longjmp: dropped */
	"1:	test %rcx, %rcx\n"
	"	jz 7f\n"
	"	dec %rcx\n"
	"	mov %rcx, %rax\n"
	"	shl $5, %rax\n"
	"	lea " S(VP_URT_SL_SHADOW) "(%rsi,%rax), %rax\n"
	"	cmp %rdi, 8(%rax)\n"
	"	jb 1b\n"
	"	jne 7f\n"
	/* the entry read before it is given up: a signal handler's probed
	 * call may take its place as soon as the depth says it is free */
	"	mov (%rax), %rdx\n"
	"	mov %rdx, 64(%rsp)\n"
	"	mov 16(%rax), %r8\n"
	"	mov %rcx, " S(VP_URT_SL_DEPTH) "(%rsi)\n"
	"	mov vp_urt_start(%rip), %rax\n"
	"	cmpb $0, " S(VP_URT_PRIV_FLAG) "(%rax)\n"
	"	je 9f\n"
	"	cmpq $0, " S(VP_URT_SL_BUSY) "(%rsi)\n"
	"	jne 9f\n"
	"	mov " S(VP_URT_SL_RING) "(%rsi), %rdi\n"
	"	test %rdi, %rdi\n"
	"	jz 9f\n"
	"	movq $1, " S(VP_URT_SL_BUSY) "(%rsi)\n"
	"	mov " S(VP_URT_R_HEAD) "(%rdi), %rax\n"
	"	mov %rax, %rcx\n"
	"	sub " S(VP_URT_SL_TAIL) "(%rsi), %rcx\n"
	"	cmp $" S(VP_URT_RING_CAP) ", %rcx\n"
	"	jb 4f\n"
	"	mov " S(VP_URT_R_TAIL) "(%rdi), %rcx\n"
	"	mov %rcx, " S(VP_URT_SL_TAIL) "(%rsi)\n"
	"	mov %rax, %r9\n"
	"	sub %rcx, %r9\n"
	"	cmp $" S(VP_URT_RING_CAP) ", %r9\n"
	"	jb 4f\n"
	"	incq " S(VP_URT_R_LOST) "(%rdi)\n"
	"	jmp 8f\n"
	"4:	and $(" S(VP_URT_RING_CAP) " - 1), %eax\n"
	"	shl $5, %rax\n"
	"	lea " S(VP_URT_R_EVENTS) "(%rdi,%rax), %rcx\n"
	"	mov %r11, (%rcx)\n"
	"	lea 72(%rsp), %rax\n"
	"	mov %rax, 8(%rcx)\n"
	"	mov %rdx, 16(%rcx)\n"
	"	mov %r8d, 24(%rcx)\n"
	"	movl $1, 28(%rcx)\n"
	"	incq " S(VP_URT_R_HEAD) "(%rdi)\n"
	"8:	movq $0, " S(VP_URT_SL_BUSY) "(%rsi)\n"
	"9:	pop %r11\n"
	"	pop %r9\n"
	"	pop %r8\n"
	"	pop %rdi\n"
	"	pop %rsi\n"
	"	pop %rcx\n"
	"	pop %rdx\n"
	"	pop %rax\n"
	"	ret\n"
	"7:	ud2\n" /* no entry of this frame: the return address is lost */
	/* ---- an exception is about to unwind the stack (a stub on the
	 * unwinder's _Unwind_RaiseException calls this): the return
	 * addresses swapped in the thread's live frames are put back, so
	 * that the unwinder sees the real ones; those calls end without an
	 * exit (unpaired), and the shadow stack is emptied ---- */
	".globl vp_urt_unwind\n"
	".hidden vp_urt_unwind\n"
	"vp_urt_unwind:\n"
	"	push %rax\n"
	"	push %rdx\n"
	"	push %rcx\n"
	"	push %rsi\n"
	"	push %rdi\n"
	"	rdfsbase %rax\n"
	"	test %rax, %rax\n"
	"	jz 9f\n"
	"	vp_urt_find\n"
	"	jmp 9f\n" /* no slot: nothing swapped */
	"12:	mov %rdx, %rsi\n"
	"	mov " S(VP_URT_SL_DEPTH) "(%rsi), %rcx\n"
	/* (this copy may be the second mapping: the return addresses
	 * swapped are the first one's) */
	"	mov vp_urt_start+16(%rip), %rdi\n"
	"	add $(vp_urt_return - vp_urt_start), %rdi\n"
	"1:	test %rcx, %rcx\n"
	"	jz 3f\n"
	"	dec %rcx\n"
	"	mov %rcx, %rax\n"
	"	shl $5, %rax\n"
	"	lea " S(VP_URT_SL_SHADOW) "(%rsi,%rax), %rax\n"
	"	mov 8(%rax), %rdx\n"
	/* a frame below this one is gone (longjmp): its slot is not ours */
	"	cmp %rsp, %rdx\n"
	"	jbe 1b\n"
	"	cmp %rdi, (%rdx)\n"
	"	jne 1b\n"
	"	push %rcx\n"
	"	mov (%rax), %rcx\n"
	"	mov %rcx, (%rdx)\n"
	"	pop %rcx\n"
	"	jmp 1b\n"
	"3:	movq $0, " S(VP_URT_SL_DEPTH) "(%rsi)\n"
	"9:	pop %rdi\n"
	"	pop %rsi\n"
	"	pop %rcx\n"
	"	pop %rdx\n"
	"	pop %rax\n"
	"	ret\n"
	".globl vp_urt_end\n"
	".hidden vp_urt_end\n"
	"vp_urt_end:\n"
	".previous\n");
#else
/* other architectures: the user backend says it is x86-64 only */
const unsigned char vp_urt_start[1], vp_urt_entry[1], vp_urt_return[1], vp_urt_end[1],
	vp_urt_fs1[1], vp_urt_fs2[1], vp_urt_unwind[1];
#endif

void vp_urt_fs_patch(unsigned char *copy)
{
	/* mov %fs:0,%rax: the TCB's pointer to itself (x86-64 psABI, TLS) */
	static const unsigned char mov[9] = { 0x64, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0 };

	memcpy(copy + (vp_urt_fs1 - vp_urt_start), mov, sizeof(mov));
	memcpy(copy + (vp_urt_fs2 - vp_urt_start), mov, sizeof(mov));
}
