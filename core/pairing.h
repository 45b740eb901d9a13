/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * pairing.h - the rules that pair a thread's entry and exit events by
 * stack pointer, in one place for every pass over the events (the tree
 * builder, the sources-of-variance pass, the sampled tree).
 *
 * An entry's sp points at its return address; the matching exit has
 * sp + 8, the address popped (exit probes on ret instructions are
 * recorded that way too).  A pending frame whose exit can no longer come
 * (longjmp, an exception, the kernel's 64 pending return probes, a lost
 * record) is retired as unpaired, never given a guessed duration.
 */
#ifndef VARPERF_CORE_PAIRING_H
#define VARPERF_CORE_PAIRING_H

#include <stdint.h>

/*
 * A new entry at @call_sp ends a pending frame at @frame_sp when the
 * frame lies at or below it on the stack: that memory has been reused.
 * Equal sp is a tail call instead when the entry's return address is the
 * uretprobe trampoline (@tail): the caller's return probe still holds
 * that slot, and both returns will arrive.
 */
static inline int vp_pair_dead_on_call(uint64_t frame_sp, uint64_t call_sp, int tail)
{
	return frame_sp < call_sp || (frame_sp == call_sp && !tail);
}

/* The entry stack pointer an exit at @exit_sp belongs to. */
static inline uint64_t vp_pair_entry_sp(uint64_t exit_sp)
{
	return exit_sp - 8;
}

/* An exit for @entry_sp ends every pending frame below it. */
static inline int vp_pair_dead_on_return(uint64_t frame_sp, uint64_t entry_sp)
{
	return frame_sp < entry_sp;
}

#endif
