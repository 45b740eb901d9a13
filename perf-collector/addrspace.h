/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * addrspace.h - the target's address space: which file a runtime address
 * is in, and the call site it names.
 */
#ifndef VARPERF_ADDRSPACE_H
#define VARPERF_ADDRSPACE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../core/datafile.h"

/*
 * The target's address space, built from its PERF_RECORD_MMAP2 records (so
 * it survives the target's exit) and /proc/PID/maps while it lives.
 */
struct vp_addrspace;

struct vp_addrspace *vp_addrspace_new(pid_t pid, const struct vp_module *mods, size_t nmods);
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
