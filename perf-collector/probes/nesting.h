/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * nesting.h - the kernel's limit of pending return probes, followed while
 * recording: which entries will never see their return probe fire.
 */
#ifndef VARPERF_NESTING_H
#define VARPERF_NESTING_H

#include <stddef.h>
#include <stdint.h>

struct vp_nesting;

/* Return probes pending per thread beyond which the kernel drops new ones
 * (MAX_URETPROBE_DEPTH in kernel/events/uprobes.c; BPF links too). */
enum { VP_URETPROBE_MAX_DEPTH = 64 };

/* A tracker for @nfuncs functions (their entries' losses are counted). */
struct vp_nesting *vp_nesting_new(size_t nfuncs);
void vp_nesting_free(struct vp_nesting *n);
/*
 * vp_nesting_entry - an entry of function @func (one with a return probe)
 * on @thread at @sp; @tail: its return address is the kernel's trampoline
 * (a tail call: the caller's return probe still holds that slot).
 * Returns 1 when the kernel had no room for its return probe.
 */
int vp_nesting_entry(struct vp_nesting *n, uint32_t thread, uint32_t func, uint64_t sp,
		     int tail);
/* A return probe of @thread fired with @sp (the popped return address). */
void vp_nesting_exit(struct vp_nesting *n, uint32_t thread, uint64_t sp);
/* Entries without a return probe so far, in all and of function @func. */
uint64_t vp_nesting_lost(const struct vp_nesting *n);
uint64_t vp_nesting_lost_of(const struct vp_nesting *n, uint32_t func);

#endif
