/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * user-runtime.h - the code the user backend copies into its target (x86-64
 * machine code, position-independent, from user-runtime.c) and the layout
 * of the memory it works in, which varperf reads.
 *
 * Three regions, made in the target by injected system calls (user-inject.h):
 *   code     shared (a memfd), read and execute in the target, within
 *            2 GiB of the patched module: this runtime first, then one
 *            stub per function (VP_URT_STUB bytes).  Its first quads say
 *            where the other two regions are.
 *   private  anonymous, private to the target (copied on fork): page 0
 *            holds the flag "record" (MADV_WIPEONFORK: zero in a forked
 *            child, which then records nothing), then one slot per thread
 *            (hashed by its fs base): the ring it writes to and its shadow
 *            stack of return addresses.
 *   shared   the same memfd, read and write: a control page, then one ring
 *            of events per thread, which varperf drains.
 */
#ifndef VARPERF_USER_RUNTIME_H
#define VARPERF_USER_RUNTIME_H

/* The private region */
#define VP_URT_PRIV_FLAG 0	  /* byte: nonzero = record */
#define VP_URT_PRIV_CLAIMS 8	  /* slots claimed */
#define VP_URT_SLOTS_OFF 4096
#define VP_URT_NSLOTS 512	  /* a power of two */
#define VP_URT_SLOT_SHIFT 13	  /* a slot is 8 KiB */
#define VP_URT_PRIV_SIZE (VP_URT_SLOTS_OFF + (VP_URT_NSLOTS << VP_URT_SLOT_SHIFT))
/* a slot */
#define VP_URT_SL_KEY 0		  /* the thread's fs base */
#define VP_URT_SL_RING 8	  /* its ring (address in the target), 0: none */
#define VP_URT_SL_TAIL 16	  /* the ring's tail as last read */
#define VP_URT_SL_BUSY 24	  /* in the runtime: a signal handler's calls go unrecorded */
#define VP_URT_SL_DEPTH 32	  /* shadow stack entries */
#define VP_URT_SL_TID 40	  /* u32: the thread's id, as claimed */
#define VP_URT_SL_TIDOFF 48	  /* where in its TCB (%fs:) the thread's id is, 0: unknown */
/* looked for in the TCB from here to there: past the thread control
 * block header's pointers and flags (glibc keeps it 720 bytes in), where
 * a false match would make every call look like a new thread's */
#define VP_URT_TCB_SCAN_FROM 256
#define VP_URT_TCB_SCAN 1024
#define VP_URT_SL_SHADOW 64	  /* entries of 32 bytes: return address, sp, function */
#define VP_URT_SHADOW_N 254

/* The shared region: a control page, then the rings */
#define VP_URT_CTL_NRINGS 8	  /* rings handed out (may pass VP_URT_NRINGS) */
#define VP_URT_CTL_NORING 16	  /* threads that found no ring */
#define VP_URT_RINGS_OFF 4096
#define VP_URT_NRINGS 64
#define VP_URT_RING_LOG2 22	  /* events per ring: 2^22, 128 MiB (varperf falls behind) */
#define VP_URT_RING_CAP (1 << VP_URT_RING_LOG2)
#define VP_URT_RING_SIZE (4096 + (VP_URT_RING_CAP << 5))
#define VP_URT_SHARED_SIZE ((long)VP_URT_RINGS_OFF + (long)VP_URT_NRINGS * VP_URT_RING_SIZE)
/* a ring's header page: the producer's words, then the consumer's */
#define VP_URT_R_HEAD 0		  /* events written */
#define VP_URT_R_LOST 8		  /* events the ring had no room for */
#define VP_URT_R_TID 16		  /* u32, then the pid (u32): 0 until set up */
#define VP_URT_R_DEEP 24	  /* calls unrecorded: the shadow stack was full */
#define VP_URT_R_NESTED 32	  /* calls unrecorded: a signal handler's, made while
				   * its thread was in the runtime */
#define VP_URT_R_TAIL 64	  /* events read (varperf) */
#define VP_URT_R_EVENTS 4096

/* The code region: the runtime, then the stubs */
#define VP_URT_STUB 128
#define VP_URT_STUB_RELOC 10	  /* after "push $id; call entry": the relocated code */

#ifndef __ASSEMBLER__
#include <stdint.h>

/* One event: 32 bytes. */
struct vp_urt_event {
	uint64_t tsc;
	uint64_t sp;   /* entry: at the return address; exit: past it */
	uint64_t addr; /* the return address */
	uint32_t func;
	uint32_t exit; /* 0 entry, 1 exit, 2 the thread's id (@addr) from here on */
};

/* The runtime's machine code, to copy to the start of the code region;
 * its first two quads get the private and shared regions' addresses. */
extern const unsigned char vp_urt_start[], vp_urt_entry[], vp_urt_return[], vp_urt_end[];
extern const unsigned char vp_urt_fs1[], vp_urt_fs2[], vp_urt_unwind[];

/* In @copy of the runtime, read the thread pointer from %fs:0 instead of
 * with rdfsbase: only for a program whose every thread has its TLS set up
 * before any of its code runs (dynamically linked).  */
void vp_urt_fs_patch(unsigned char *copy);
#endif

#endif
