/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * symbols-internal.h - what symbols.c, probe-sites.c and libpath.c share
 * of an open ELF file.
 */
#ifndef VARPERF_SYMBOLS_INTERNAL_H
#define VARPERF_SYMBOLS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "perf-collector/symbols/elf-file.h"
#include "perf-collector/symbols/symbols.h"

/*
 * An ELF file as the probe placer reads it: the file, and what finding
 * exits reads of its symbols on first use (link-time extents of the .cold
 * parts, and the functions' first addresses, sorted).
 */
struct vp_symfile {
	struct vp_elf_file *ef;
	struct code_range *colds;
	size_t ncolds;
	uint64_t *starts;
	size_t nstarts;
	int code_map_read;
};

struct code_range {
	uint64_t lo, hi;
};

#endif
