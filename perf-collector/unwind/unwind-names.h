/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * unwind-names.h - name the code addresses the unwinder finds: each
 * (module, address) becomes a data-file FRAME whose levels are the
 * functions inlined there and the function that holds them, defining its
 * MODULE and SYMBOLs through the unwinder's sink on first use.
 */
#ifndef VARPERF_UNWIND_NAMES_H
#define VARPERF_UNWIND_NAMES_H

#include <stdint.h>

#include "core/datafile.h"
#include "perf-collector/unwind/unwind-module.h"

/* Where the definitions of new modules, symbols and frames go. */
struct vp_unwind_sink {
	void *ctx;
	int (*module)(void *ctx, uint32_t id, const struct vp_module *m, uint32_t flags);
	int (*symbol)(void *ctx, uint32_t id, const struct vp_symbol *s);
	int (*frame)(void *ctx, uint32_t id, const struct vp_frame_def *f);
};

struct vp_unwind_names;

/**
 * vp_unwind_names_new - an empty set of names
 * @sink: where new definitions go; copied.
 * @first_module: the id of the first module it defines (the data file's
 *	header modules come before it).
 *
 * Never fails (dies on OOM).  Free it with vp_unwind_names_free().
 */
struct vp_unwind_names *vp_unwind_names_new(const struct vp_unwind_sink *sink,
					    uint32_t first_module);

/**
 * vp_unwind_names_free - free @nm and the names it keeps; NULL is a no-op.
 */
void vp_unwind_names_free(struct vp_unwind_names *nm);

/**
 * vp_unwind_names_frame - the data file's frame id of link-time address
 * @addr of module @m
 * @nm: the names.
 * @m: the module (its id, defined and unknown_sym fields are updated), or
 *	NULL for code in no known mapping: then @addr is the runtime address.
 * @addr: the address.
 * @is_ret: a return address, named by the call before it.
 *
 * Defines the module, the symbols and the frame through the sink on first
 * use.  Returns the id, or the first negative errno the sink returned: once
 * the sink has failed, every call for a frame not defined yet returns it.
 */
long vp_unwind_names_frame(struct vp_unwind_names *nm, struct vp_umod *m, uint64_t addr,
			   int is_ret);

#endif
