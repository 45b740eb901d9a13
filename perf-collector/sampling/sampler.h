/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * sampler.h - the sampling events of a recording: a clock (or, with a
 * hardware PMU, cycles) sampled per CPU with the user registers and a copy
 * of the user stack, inherited by every thread, and the decoding of their
 * records for unwinding.
 */
#ifndef VARPERF_SAMPLER_H
#define VARPERF_SAMPLER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/datafile.h"
#include "perf-collector/symbols/addrspace.h"
#include "core/hashtab.h"
#include "perf-collector/kernel/perf-event.h"
#include "perf-collector/kernel/raw-record.h"
#include "perf-collector/unwind/unwind.h"

struct vp_sample_chunk;

/* A sampled user stack, as vp_sampling_decode() hands it over. */
struct vp_raw_sample {
	uint64_t ip;	 /* where the sample hit (a kernel address in the kernel) */
	uint64_t period;
	int kernel;	 /* hit in the kernel: st is the user state that entered it */
	int no_user;	 /* in the kernel, with no user state to give: no user
			  * registers, or not a byte of the user stack (a task
			  * past exit_mm() in its exit, a kernel thread): no
			  * frames, and none missing */
	struct vp_ustack st;
	/* The process's mappings read from /proc when this sample was
	 * decoded, its IP being in none known then (NULL mostly): applied
	 * before it is unwound, as the process may be gone by then. */
	struct vp_maps *maps;
	struct vp_sample_chunk *chunk; /* where this lives (NULL: malloc'ed) */
	unsigned char stack[]; /* st.stack points here */
};

struct vp_sample_id;
struct vp_sample_tid;
struct vp_tid_owner;

struct vp_sampling_opts {
	uint32_t event;	    /* enum vp_sample_event; 0: cycles if the machine has a
			     * PMU, else cpu-clock */
	uint64_t freq;	    /* samples per second */
	uint32_t stack_size; /* bytes of user stack per sample */
	size_t buf_size;    /* ring buffer per CPU */
};

struct vp_sampler {
	int ncpus;
	int *cpus;
	struct vp_ring *rings; /* per CPU */
	int own_rings;	       /* rings belong to these events (else to probes) */
	int *fds;
	size_t nfds, cap;
	struct vp_sample_id *ids; /* sorted by id; whose events they are */
	size_t nids;
	struct vp_sample_tid *tids; /* threads with events of their own, sorted */
	size_t ntids;
	struct vp_hashtab owners; /* other threads (struct vp_tid_owner): whose
				   * events they use */
	uint32_t event; /* what was opened */
	uint64_t period;
	int exclude_kernel;
	pid_t pid;
	/* the target's executable mappings (and [uprobes] page) as far as
	 * seen while reading */
	struct vp_maps known;
	uint64_t maps_read_time; /* of the last /proc read for an unknown IP */
	uint64_t malformed;	 /* sample records too short for their fields */
	uint64_t duplicates;	 /* samples of a thread through two sets of events */
};

enum {
	/* The target is held before exec: start at exec (else at once). */
	VP_SAMPLER_ON_EXEC = 1 << 0,
};

/**
 * vp_sampling_resolve - settle @o->event: with 0, cycles where a hardware
 * PMU counts them, else cpu-clock.  Returns 0, or -ENOENT (after printing
 * why) when cycles were asked for and this machine cannot count them.
 * Prints what it fell back to unless @quiet.
 */
int vp_sampling_resolve(struct vp_sampling_opts *o, int quiet);

/**
 * vp_sampler_open - open the sampling event on each of @tids (just @pid
 * when @ntids is 0) on every online CPU, inherited by new threads and
 * children.  With @tids (attaching), the threads are listed again until
 * no new one appears, threads that exit meanwhile are skipped, and a
 * thread's samples are taken from one set of events only (those of its
 * own once opened, else its creator's).  With @rings (per CPU, as
 * vp_probes_open() made them) the records go there; else the sampler
 * maps its own, and its events also report mmaps.  Every event reports
 * exec and thread exits.  Prints the error and returns -1 on failure.
 */
int vp_sampler_open(struct vp_sampler *s, const struct vp_sampling_opts *o, pid_t pid,
		    const pid_t *tids, size_t ntids, struct vp_ring *rings, int flags);
void vp_sampler_close(struct vp_sampler *s);
/* Stop sampling (detach: the events may close later). */
void vp_sampler_disable(struct vp_sampler *s);

/*
 * vp_sampler_decode() also hands over two events of the target's threads
 * as VP_RAW_MMAP records of length 0, so that they stay in order with the
 * mappings: path "[exec]" (the process exec'd: forget its mappings) and
 * "[exit]" (the thread exited), with the thread id in mmap->start.
 * vp_sample_sink_mmap() understands them; other users ignore paths not
 * starting with '/'.
 */
extern const char vp_sampler_exec_path[], vp_sampler_exit_path[];

/**
 * vp_sampler_decode - decode @h read from CPU @cpu's ring: 1 and @ret for a
 * sample of these events (VP_RAW_SAMPLE; free it with vp_raw_sample_free()),
 * an mmap, an exec or exit (see above) or a lost count; 0 for
 * records of other events, of no use, duplicates or malformed (counted in
 * @s->malformed).  Call it while the target runs: a sample at an address
 * in no mapping seen yet takes a copy of /proc/PID/maps along.
 */
int vp_sampler_decode(struct vp_sampler *s, const struct perf_event_header *h, int cpu,
		      struct vp_raw *ret);

/* Free the payload of a VP_RAW_SAMPLE record not written. */
void vp_raw_sample_free(struct vp_raw *r);

#endif
