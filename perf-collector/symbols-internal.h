/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * symbols-internal.h - what symbols.c, probe-sites.c and libpath.c share
 * of an open ELF file.
 */
#ifndef VARPERF_SYMBOLS_INTERNAL_H
#define VARPERF_SYMBOLS_INTERNAL_H

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols.h"


struct vp_load {
	uint64_t vaddr;
	uint64_t offset;
	uint64_t filesz;
	int exec;
};

struct vp_symfile {
	char *path;
	int fd; /* our own, for reading instruction bytes */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Elf *elf;
	GElf_Addr bias; /* libdwfl address = link-time address + bias */
	struct vp_load *loads;
	size_t nloads;
	unsigned char *build_id;
	size_t build_id_len;
	/*
	 * For finding exits, read on first use: link-time extents of the
	 * .cold parts and of the PLT sections, and the functions' first
	 * addresses, sorted.
	 */
	struct code_range *colds, *plts;
	size_t ncolds, nplts;
	uint64_t *starts;
	size_t nstarts;
	int code_map_read;
};

struct code_range {
	uint64_t lo, hi;
};

/* The executable segment holding @vaddr, or NULL. */
const struct vp_load *vp_symfile_exec_load(const struct vp_symfile *sf, uint64_t vaddr);

#endif
