/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * unwind-module.h - one ELF file (or the vDSO image) as the unwinder reads
 * it: the file (elf-file.h: segments, libdwfl or the vDSO's own symbol
 * table for names), its unwind tables (.eh_frame_hdr, .debug_frame,
 * .eh_frame through libdw) and its data-file ids.  One per file, shared
 * by every process that maps it.
 */
#ifndef VARPERF_UNWIND_MODULE_H
#define VARPERF_UNWIND_MODULE_H

#include <elfutils/libdw.h>
#include <stddef.h>
#include <stdint.h>

#include "perf-collector/symbols/elf-file.h"

/*
 * One ELF file (or the vDSO image), shared by every process mapping it.
 * The unwinder and the namer read the fields directly; id, defined, hdr,
 * unknown_sym and next are theirs to set (vp_umod_new() gives their first
 * values).
 */
struct vp_umod {
	char *path;
	uint32_t id;	 /* data-file module id */
	uint32_t mflags; /* VP_MOD_* */
	int defined;	 /* sent to the sink (or a header module) */
	int hdr;	 /* one of the data file's header modules */
	struct vp_elf_file *file; /* NULL until loaded, or when unusable */
	int has_ehdr;	 /* usable .eh_frame_hdr binary search table */
	uint64_t ehdr_vaddr, table_vaddr, fde_count;
	int has_debug_frame;
	Dwarf_CFI *cfi;	 /* .eh_frame for the rule cache, once asked for */
	int cfi_tried;
	int lacks_cfi;	 /* most functions have no CFI: 1 yes, 0 no, -1 unknown */
	uint32_t unknown_sym; /* UINT32_MAX until needed */
	struct vp_umod *next;
};

/**
 * vp_umod_new - an empty module for the file @path (or "[vdso]")
 * @path: copied.
 *
 * Nothing is read yet: see vp_umod_load().  id and unknown_sym start as
 * UINT32_MAX, lacks_cfi as -1 (unknown).  Never fails (dies on OOM).  The
 * caller owns the result and frees it with vp_umod_free().
 */
struct vp_umod *vp_umod_new(const char *path);

/**
 * vp_umod_load - map and parse the file of @m
 * @m: a module from vp_umod_new(), loaded at most once.
 * @vdso: varperf's own copy of the vDSO image, used when @m->path is
 *	"[vdso]" (NULL: none); borrowed, it must outlive @m.
 * @vdso_size: its size in bytes.
 *
 * Opens the file (vp_elf_file_open(), the vDSO: vp_elf_file_open_image()),
 * reads the .eh_frame_hdr search table and whether there is a
 * .debug_frame.  Says why it failed at debug level, or as a warning for a
 * file deleted after it was mapped.  Returns 0, or -errno (-ENOEXEC: not a
 * usable ELF file); on failure @m->file stays NULL and @m must still be
 * freed.
 */
int vp_umod_load(struct vp_umod *m, const unsigned char *vdso, size_t vdso_size);

/**
 * vp_umod_free - release what @m holds (its file and libdw's CFI) and @m
 * itself.  @m->next is not followed.
 */
void vp_umod_free(struct vp_umod *m);

/* @len bytes at link-time address @vaddr of loaded @m: vp_elf_file_ptr(). */
const unsigned char *vp_umod_ptr(const struct vp_umod *m, uint64_t vaddr, size_t len);

/**
 * vp_umod_cfi - the .eh_frame of @m through libdw, parsed on first use
 *
 * @m must be loaded.  Returns NULL when libdw finds none.  @m owns the
 * result.
 */
Dwarf_CFI *vp_umod_cfi(struct vp_umod *m);

/**
 * vp_umod_lacks_cfi - whether most functions of @m have no CFI
 *
 * Asks at most 256 function symbols, once.  Returns 1 or 0.
 */
int vp_umod_lacks_cfi(struct vp_umod *m);

#endif
