/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * probes.h - the entry and exit uprobes of a recording: one event per
 * probe per CPU (pid = -1), one ring buffer per CPU, and decoding of the
 * records they produce.
 */
#ifndef VARPERF_PROBES_H
#define VARPERF_PROBES_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/datafile.h"
#include "perf-collector/kernel/perf-event.h"
#include "perf-collector/kernel/raw-record.h"
#include "perf-collector/probes/probe-sites.h"

struct vp_probe_id;

struct vp_probes {
	int ncpus;
	int *cpus;
	struct vp_ring *rings; /* per CPU, owned by the mmap-tracking event */
	int *fds;
	unsigned char *fd_is_return; /* per fd: a return probe (uretprobe) */
	uint32_t *fd_func;	     /* per fd: its function (UINT32_MAX: none) */
	size_t nfds;
	struct vp_probe_id *ids; /* sorted by sample id */
	size_t nids;
	pthread_t *closers; /* threads closing dropped functions' events */
	size_t nclosers;
	int *lock_fds;	    /* the probed files (vp_probes_wait_removed) */
	uint32_t *lock_mods;
	size_t nlocks;
};

enum {
	/* Probe the one thread @pid on any CPU into one buffer, without
	 * mmap tracking (calibration; not for multi-threaded targets). */
	VP_PROBES_TASK = 1 << 0,
};

/**
 * vp_probes_open - open an entry probe for each of @funcs (file
 * @mods[func.module].path at func.probe_off) and exit probes as @exits[i]
 * says (a return probe for every function when @exits is NULL) on every
 * online CPU, plus a per-CPU dummy event on @pid that reports its file
 * mappings, the processes it forks and their execs (inherited: its
 * descendants' too), all into per-CPU ring buffers of @buf_size bytes.  The probes
 * are live on return: they fire in every process that runs the probed
 * code, so filter by pid.  @flags: VP_PROBES_*.  Prints the error and
 * returns -1 on failure (nothing stays open).
 */
int vp_probes_open(struct vp_probes *p, const struct vp_func *funcs, size_t nfuncs,
		   const struct vp_exits *exits, const struct vp_module *mods, pid_t pid,
		   size_t buf_size, int flags);

/* Kinds of probe. */
enum vp_probe_kind {
	VP_PROBE_ENTRY = 0,
	VP_PROBE_RETURN = 1, /* uretprobe: fires at the return address */
	VP_PROBE_EXIT_SITE = 2, /* entry-type probe on a ret or tail-call jmp */
};

/* Close every event (this removes the probes from the kernel). */
void vp_probes_close(struct vp_probes *p);
enum {
	/* vp_probes_close_detached(): remove the return probes before
	 * returning, not in the background. */
	VP_CLOSE_RETURNS_NOW = 1 << 0,
};

/**
 * vp_probes_close_detached - stop the probes recording, then leave their
 * removal to a detached child process, so that varperf need not wait the
 * 60-80 ms per event that the kernel takes to remove a uprobe.  The child
 * holds the last references (and nothing else of varperf's: see
 * vp_detach_fork) and exits when every probe is gone; killing it removes
 * them too.  Until a return probe is removed it still replaces
 * return addresses (a disabled event does not unregister its probe), in
 * every process that runs the code, and a C++ exception through such a
 * frame still ends that process: so the child removes the return probes
 * first, and with VP_CLOSE_RETURNS_NOW (@flags) they are removed before
 * this returns.  Falls back to vp_probes_close() if it cannot fork.
 */
void vp_probes_close_detached(struct vp_probes *p, int flags);

/* The name of the background process that removes a recording's probes. */
static const char VP_UNPROBE_NAME[] = "varperf-unprobe";

/**
 * vp_probes_wait_removed - wait, up to @max_ms, until no earlier
 * recording's background process is still removing probes from file
 * @path (which it holds a shared lock on meanwhile), or with a NULL @path
 * (or one that cannot be opened) until there is no such process at all;
 * say @why (if not NULL) when it
 * has to wait.  Returns 0, or -EBUSY when the removal is still going on.
 */
int vp_probes_wait_removed(const char *path, int max_ms, const char *why);

/**
 * vp_probes_drop - stop probing function @func while the target runs: its
 * events are disabled at once and a thread closes them (the kernel takes
 * 60-80 ms per uprobe to remove them), so the caller goes on reading.
 * Records already in the buffers still decode.
 */
void vp_probes_drop(struct vp_probes *p, uint32_t func);

/**
 * vp_probes_unseen - how many records the kernel counted (hits of the
 * probes) but no decoded record stands for: written while a buffer was
 * full (the kernel reports those with a LOST record only when it can
 * write again, never if nothing follows), or not decodable.  Call it once
 * the events are disabled and the buffers read to the end.
 */
uint64_t vp_probes_unseen(const struct vp_probes *p);

/**
 * vp_probes_decode - decode @h read from the ring buffer of CPU @cpu.
 * Returns 1 and fills @ret, or 0 for records varperf does not use.  @p may
 * be NULL for mmap and lost records (the sampler's own buffers).
 */
int vp_probes_decode(struct vp_probes *p, const struct perf_event_header *h, int cpu,
		     struct vp_raw *ret);

/* Number of file descriptors vp_probes_open() needs (@exits may be NULL). */
size_t vp_probes_fds_needed(const struct vp_exits *exits, size_t nfuncs, int ncpus);

/**
 * vp_probes_remove_stale - remove uprobes of the "varperf" group left in
 * tracefs by another tool or an older version; varperf itself never creates
 * any (its probes belong to its file descriptors).  Returns how many.
 */
int vp_probes_remove_stale(void);

#endif
