/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * symbols.h - the functions of an ELF file varperf can probe, their
 * names, the selection of those to probe, and the symbol and source line
 * of a link-time address.
 */
#ifndef VARPERF_SYMBOLS_H
#define VARPERF_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "core/datafile.h"

struct vp_symfile;

/**
 * vp_symfile_open - open the ELF file @path with libdwfl, finding separate
 * debug information by build-id or .gnu_debuglink when it is stripped.
 * Returns 0, -ENOEXEC when @path is not an ELF file, or another -errno.
 */
int vp_symfile_open(const char *path, struct vp_symfile **ret);
void vp_symfile_free(struct vp_symfile *sf);
/* Canonical path (realpath) of the file. */
const char *vp_symfile_path(const struct vp_symfile *sf);
/* GNU build-id note, or 0 bytes when it has none. */
size_t vp_symfile_build_id(const struct vp_symfile *sf, const unsigned char **ret);

/**
 * vp_symfile_functions - append the probeable functions of @sf to the
 * array *@funcs of *@nfuncs entries (growing it), tagged with @module and @flags.
 * Skips .cold parts, duplicate names at one address, symbols outside an
 * executable segment and entry points that are not called (_start...).
 * Demangles C++ names into display and marks compiler clones; where the
 * probes go is probe-sites.h's to say.  Returns the number of functions
 * added.
 */
size_t vp_symfile_functions(struct vp_symfile *sf, uint32_t module, uint32_t flags,
			    struct vp_func **funcs, size_t *nfuncs);
/* @name demangled when it is a C++ symbol and libiberty is there, else
 * a copy (malloc'ed either way). */
char *vp_demangle(const char *name);

/**
 * vp_symfile_can_throw - whether C++ exceptions can unwind through the
 * code of @sf: it imports or defines __cxa_throw or _Unwind_RaiseException,
 * or has a .gcc_except_table section (landing pads, try blocks).
 */
int vp_symfile_can_throw(struct vp_symfile *sf);

/**
 * vp_funcs_select - keep the functions whose symbol name, display name or
 * short name (no clone suffix, no C++ parameter list) matches one of @incl
 * (all but the toolchain's start-up code such as _init and frame_dummy when
 * @nincl is 0) and none of @excl; compacts the array.
 * Returns 0, or -ENOENT with *@unmatched set to the first glob of @incl that
 * matched nothing.
 */
int vp_funcs_select(struct vp_func *funcs, size_t *n, char *const *incl, size_t nincl,
		    char *const *excl, size_t nexcl, const char **unmatched);

/* Link-time virtual address of file offset @off, or -ENOENT. */
int vp_symfile_off_to_vaddr(const struct vp_symfile *sf, uint64_t off, uint64_t *ret);

/**
 * vp_symfile_describe - "sym+0x1f" of @vaddr and the source file and line
 * of the call instruction before it (return address - 1).  Strings are
 * malloc'ed; unknown ones are "" and line 0.
 */
void vp_symfile_describe(struct vp_symfile *sf, uint64_t vaddr, char **caller, char **file,
			 uint32_t *line);

#endif
