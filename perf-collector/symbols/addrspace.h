/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * addrspace.h - the address space of a traced process: its mappings, as
 * PERF_RECORD_MMAP2 records and /proc/PID/maps give them, and its
 * [uprobes] page, looked up by address, with one rule for a mapping over
 * others (struct vp_maps); and the call site a runtime address names
 * (struct vp_addrspace).  The call-site namer, the sampler (what it has
 * seen mapped) and the unwinder (where each process has its modules) all
 * keep their address spaces as struct vp_maps.  Each holds the target at
 * its own point of the record stream: the sampler as it decodes (to take
 * /proc along with a sample at an unknown address), the namer as the
 * records are written, the unwinder as the samples are unwound (in
 * sample mode after the target ended, in the order of the records).
 */
#ifndef VARPERF_ADDRSPACE_H
#define VARPERF_ADDRSPACE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/datafile.h"

/* One mapping of a process: [start, end) holds @path from file offset @pgoff. */
struct vp_map {
	uint64_t start, end, pgoff;
	char *path; /* "" for anonymous memory */
	/* what a user keeps with it (the unwinder: the module whose extent
	 * this is, and its load bias); the parts of a split mapping keep it */
	uint64_t bias;
	void *data;
};

/*
 * A process's address space: its mappings, sorted by address and
 * disjoint, and the kernel's [uprobes] page (the return trampoline and the
 * out-of-line single-step slots), 0 to 0 until seen.  Zero-initialise.
 */
struct vp_maps {
	struct vp_map *v;
	size_t n, cap;
	uint64_t uprobes_lo, uprobes_hi;
};

/**
 * vp_maps_insert - map [@start, @start + @len) of @path (copied) at file
 * offset @pgoff into @m.  The new mapping replaces whatever it overlaps,
 * as a new mmap() does in the process (and as perf keeps its maps).
 * Returns it (bias 0, data NULL; valid until the next insertion), or NULL
 * for the path "[uprobes]", which sets @m's [uprobes] page instead.
 */
struct vp_map *vp_maps_insert(struct vp_maps *m, uint64_t start, uint64_t len, uint64_t pgoff,
			      const char *path);
/* The mapping of @m that holds @addr, or NULL. */
const struct vp_map *vp_maps_find(const struct vp_maps *m, uint64_t addr);
/* Whether @addr is in @m's [uprobes] page (unknown: no). */
int vp_maps_in_uprobes(const struct vp_maps *m, uint64_t addr);
/* Insert every mapping of @from, and its [uprobes] page, into @m. */
void vp_maps_add(struct vp_maps *m, const struct vp_maps *from);
/* Free what @m holds and empty it (it can be used again). */
void vp_maps_release(struct vp_maps *m);

/**
 * vp_maps_read - the one reader of /proc/@pid/maps: its executable
 * mappings ("[vdso]" and anonymous ones included) and its [uprobes] page,
 * inserted into @ret, which the caller zero-initialised or released (or
 * that holds the process's mappings already: what /proc says wins).
 * Returns 0 or -errno; @ret must be released even on failure.
 */
int vp_maps_read(pid_t pid, struct vp_maps *ret);

/*
 * The target's address space, built from its PERF_RECORD_MMAP2 records (so
 * it survives the target's exit) and /proc/PID/maps while it lives.
 */
struct vp_addrspace;

struct vp_symfile;

/**
 * vp_addrspace_new - the address space of the target @pid, whose data file
 * has the modules @mods[0..@nmods) (borrowed, as @files: the modules'
 * files open already, or NULL).  Other files are opened on first use.
 */
struct vp_addrspace *vp_addrspace_new(pid_t pid, const struct vp_module *mods,
				      struct vp_symfile *const *files, size_t nmods);
void vp_addrspace_free(struct vp_addrspace *as);
/* The target was reaped: its pid may be reused, stop reading /proc/PID. */
void vp_addrspace_target_gone(struct vp_addrspace *as);
/* A file mapping [@start, @start + @len) of @path at file offset @pgoff. */
void vp_addrspace_mmap(struct vp_addrspace *as, uint64_t start, uint64_t len, uint64_t pgoff,
		       const char *path);
/**
 * vp_addrspace_callsite - describe return address @addr: module index and
 * link-time address, "sym+0x1f", file and line.  @cs strings are malloc'ed
 * (free with vp_callsite_release()).
 */
void vp_addrspace_callsite(struct vp_addrspace *as, uint64_t addr, struct vp_callsite *cs);
void vp_callsite_release(struct vp_callsite *cs);

#endif
