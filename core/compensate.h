/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * compensate.h - probe-cost compensation, private to core: the filter
 * the reader hands every decoded event through (vp_reader_compensate()
 * turns it on).  Each probe adds its calibrated cost to its thread's
 * clock; the filter keeps, per thread, what it added so far and takes it
 * out of every later time, never letting a thread's times run backwards
 * (an exit so kept is counted as clamped).
 */
#ifndef VARPERF_CORE_COMPENSATE_H
#define VARPERF_CORE_COMPENSATE_H

#include <stddef.h>
#include <stdint.h>

#include "datafile.h"

/* Embedded in the reader; all zero is a valid, idle compensator. */
struct vp_compensator {
	int on;
	uint64_t *in_win, *extra;  /* per function: costs inside and after a call */
	uint64_t *debt, *last_out; /* per thread: time owed, last time given */
	uint64_t clamped;	   /* exits moved to keep a thread's time */
	uint64_t clamped_max;	   /* ... the most one of them was moved */
};

/*
 * vp_compensator_set - turn compensation @on or off for the functions of
 * @h, with the costs @h has then (those tracked while recording included).
 * 0 or -ENOMEM.
 */
int vp_compensator_set(struct vp_compensator *c, const struct vp_header *h, int on);
/* Room for @cap threads (the reader's thread table grew): 0 or -ENOMEM. */
int vp_compensator_threads(struct vp_compensator *c, size_t cap);
/* Thread @idx starts (or starts again, on a rewind): nothing owed. */
void vp_compensator_thread_start(struct vp_compensator *c, uint32_t idx);
/* Compensate @ev in place (nothing when off); its thread has started. */
void vp_compensator_apply(struct vp_compensator *c, struct vp_event *ev);
void vp_compensator_release(struct vp_compensator *c);

#endif
