/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * unwind-module.h - one ELF file (or the vDSO image) as the unwinder reads
 * it: its loadable segments, its unwind tables (.eh_frame_hdr, .debug_frame,
 * .eh_frame through libdw) and what names its code (libdwfl, or its own
 * symbol table for the vDSO).  One per file, shared by every process that
 * maps it.
 */
#ifndef VARPERF_UNWIND_MODULE_H
#define VARPERF_UNWIND_MODULE_H

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

/* A PT_LOAD segment: link-time address, file offset and sizes. */
struct vp_uload {
	uint64_t vaddr, off, filesz, memsz;
	int exec;
};

/* A function symbol of the vDSO's own table. */
struct vp_usym {
	uint64_t addr, size;
	const char *name;
};

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
	unsigned char *image;
	size_t size;
	int mapped;	 /* image is our mmap of the file */
	Elf *elf;
	struct vp_uload *loads;
	size_t nloads;
	uint64_t lo, hi; /* link-time extent of the PT_LOAD segments */
	uint64_t entry;	 /* e_entry: where the kernel starts the program */
	int has_ehdr;	 /* usable .eh_frame_hdr binary search table */
	uint64_t ehdr_vaddr, table_vaddr, fde_count;
	int has_debug_frame;
	Dwarf_CFI *cfi;	 /* .eh_frame for the rule cache, once asked for */
	int cfi_tried;
	int lacks_cfi;	 /* most functions have no CFI: 1 yes, 0 no, -1 unknown */
	/* names: libdwfl (symbols, lines, inlines) or our own symbol table */
	Dwfl *dwfl;
	Dwfl_Module *dmod;
	GElf_Addr dbias;
	struct vp_usym *syms;
	size_t nsyms;
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
 * Reads the segments, the .eh_frame_hdr search table, whether there is a
 * .debug_frame, and opens libdwfl on the file (the vDSO: its own symbol
 * table).  Says why it failed at debug level, or as a warning for a file
 * deleted after it was mapped.  Returns 0, or -errno (-ENOEXEC: not a usable ELF
 * file); on failure @m->elf stays NULL and @m must still be freed.
 */
int vp_umod_load(struct vp_umod *m, const unsigned char *vdso, size_t vdso_size);

/**
 * vp_umod_free - release what @m holds (its mapping, libelf, libdw and
 * libdwfl handles) and @m itself.  @m->next is not followed.
 */
void vp_umod_free(struct vp_umod *m);

/**
 * vp_umod_ptr - @len bytes at link-time address @vaddr of @m
 *
 * Returns a pointer into @m's image (valid as long as @m), or NULL when
 * the bytes are not all in one segment's file contents.
 */
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

/**
 * vp_umod_image_size - the size of the ELF image at @img in memory: its
 * segments' and section headers' extent (for copying the vDSO).
 */
size_t vp_umod_image_size(const unsigned char *img);

#endif
