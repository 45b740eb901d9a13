/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * sample-sink.h - the writing side of sampling: decoded samples unwound
 * and written, with the definitions they need, to a data file.
 */
#ifndef VARPERF_SAMPLE_SINK_H
#define VARPERF_SAMPLE_SINK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/datafile.h"
#include "perf-collector/sampling/sampler.h"
#include "perf-collector/unwind/unwind.h"

/*
 * The writing side: unwinds decoded samples and writes them, with the
 * module, symbol and frame definitions they need, to a data file.
 */
struct vp_sample_sink;

/* @mods: the header's modules (their ids are kept).  NULL on failure. */
struct vp_sample_sink *vp_sample_sink_new(struct vp_writer *w, const struct vp_module *mods,
					  size_t nmods);
void vp_sample_sink_free(struct vp_sample_sink *ss);
/* A mapping of the target (from an mmap record or /proc), or an "[exec]"
 * or "[exit]" event (see sampler.h). */
void vp_sample_sink_mmap(struct vp_sample_sink *ss, pid_t pid, uint64_t start, uint64_t len,
			 uint64_t pgoff, const char *path);
int vp_sample_sink_read_maps(struct vp_sample_sink *ss, pid_t pid);
/* Thread @ptid of process @ppid forked process @pid, whose thread is
 * @tid (a VP_RAW_FORK record): the same mappings, the same stack. */
void vp_sample_sink_fork(struct vp_sample_sink *ss, pid_t ppid, uint32_t ptid, pid_t pid,
			 uint32_t tid);
/* Unwind sample @r of thread index @thread and write it; 0 or -errno. */
int vp_sample_sink_write(struct vp_sample_sink *ss, const struct vp_raw *r, uint32_t thread);
void vp_sample_sink_stats(const struct vp_sample_sink *ss, struct vp_unwind_stats *ret);

/*
 * Combined mode: return probes replace return addresses with the kernel's
 * trampoline, which stops unwinding; the sink keeps a shadow stack per
 * thread of what each probed entry saw (its stack pointer and return
 * address, 8 bytes of user stack) and puts the originals back into each
 * sample's stack copy.  A sample whose IP is in the [uprobes] page is
 * moved back to the probed function (single-stepping its instruction out
 * of line) or to the return address (in the trampoline), one in a probe's
 * trap to the probe.  @path and @vaddr: the file and link-time address of
 * the entry probe (the function's first instruction, or a later one the
 * probe was moved to).  vp_sample_sink_probe() names each probe before
 * recording starts (@path must outlive @ss): a trap is recognised from
 * the first; it returns 0 or -ENOMEM.
 */
int vp_sample_sink_probe(struct vp_sample_sink *ss, const char *path, uint64_t vaddr);
void vp_sample_sink_entry(struct vp_sample_sink *ss, pid_t pid, uint32_t tid, uint64_t sp,
			  uint64_t ret, const char *path, uint64_t vaddr);
void vp_sample_sink_exit(struct vp_sample_sink *ss, uint32_t tid, uint64_t sp);

#endif
