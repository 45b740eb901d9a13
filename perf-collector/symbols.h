/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * symbols.h - what varperf knows about ELF files: the functions it can
 * probe, where their first instructions are, their shared libraries, and
 * how a runtime return address of the target maps back to a file, a symbol
 * and a source line.
 */
#ifndef VARPERF_SYMBOLS_H
#define VARPERF_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../core/datafile.h"

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
 * Demangles C++ names into display, marks compiler clones and classifies
 * the probed instruction.  Returns the number of functions added.
 */
size_t vp_symfile_functions(struct vp_symfile *sf, uint32_t module, uint32_t flags,
			    struct vp_func **funcs, size_t *nfuncs);
/* @name demangled when it is a C++ symbol and libiberty is there, else
 * a copy (malloc'ed either way). */
char *vp_demangle(const char *name);
/* Probe function @f of @sf on its first instruction, whatever comes after
 * it (--no-move-probes). */
void vp_symfile_probe_first(struct vp_symfile *sf, struct vp_func *f);
/*
 * How the exits of one function are probed.  A return probe (uretprobe)
 * replaces the return address on the stack with the kernel's trampoline,
 * which the C++ unwinder cannot unwind through: an exception through such
 * a frame ends in std::terminate().  Probes on the instructions that leave
 * the function leave the stack alone.
 */
enum vp_exit_how {
	VP_EXITS_URETPROBE = 0, /* a return probe */
	VP_EXITS_SITES = 1,	/* entry-type probes on its ret and tail-call jmp sites */
	VP_EXITS_NONE = 2,	/* it never returns (no way out but calls): none */
	VP_EXITS_AT_ENTRY = 3,	/* its probed first instruction leaves it (ret, or a
				 * jmp elsewhere): the entry probe records both */
};

struct vp_exits {
	uint32_t how;	    /* enum vp_exit_how */
	uint32_t n;	    /* VP_EXITS_SITES: number of sites */
	uint64_t *offs;	    /* their file offsets (malloc'ed) */
	uint32_t tail;	    /* how many of them are tail-call jmps (the rest: ret) */
	uint32_t indirect;  /* indirect jmps: not probed, maybe tail calls */
	uint32_t cond_tail; /* conditional jumps out of the function: not probed */
	uint32_t unknown;   /* jmps to code that is no function's start: not probed */
	uint32_t self_calls; /* direct calls of the function itself (recursion) */
};

/**
 * vp_symfile_exits - decode the code of @f (its symbol's extent, plus the
 * .cold parts it jumps to) and find the instructions that leave it: each
 * ret, and each direct jmp to the start of a function or into the PLT (a
 * tail call).  @ret->how is VP_EXITS_SITES or VP_EXITS_AT_ENTRY when it
 * found some, VP_EXITS_NONE when @f has no way out at all, and
 * VP_EXITS_URETPROBE when its only ways out cannot be probed (indirect or
 * conditional jumps, jumps to unnamed code).  Returns 0, -ENOEXEC when the
 * code could not be decoded or an exit cannot carry a probe (@ret->how is
 * then VP_EXITS_URETPROBE), or -ENOTSUP without capstone.  @ret->self_calls
 * counts the direct calls of @f by itself.  Release with vp_exits_release().
 */
int vp_symfile_exits(struct vp_symfile *sf, const struct vp_func *f, struct vp_exits *ret);
void vp_exits_release(struct vp_exits *ex);

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

/**
 * vp_symfile_find_needed - resolve the shared library @name (a soname such
 * as "libm.so.6", a prefix such as "libm" or "m", or a path) that @sf needs,
 * searching DT_RUNPATH/DT_RPATH, LD_LIBRARY_PATH, ld.so.conf and the
 * standard directories like the dynamic linker.  Returns 0 and a malloc'ed
 * path in @ret, -ENOENT when @sf does not need such a library, or -ENOEXEC
 * when it needs it but the file is nowhere to be found.
 */
int vp_symfile_find_needed(struct vp_symfile *sf, const char *name, char **ret);

/* Link-time virtual address of file offset @off, or -ENOENT. */
int vp_symfile_off_to_vaddr(const struct vp_symfile *sf, uint64_t off, uint64_t *ret);

/**
 * vp_symfile_describe - "sym+0x1f" of @vaddr and the source file and line
 * of the call instruction before it (return address - 1).  Strings are
 * malloc'ed; unknown ones are "" and line 0.
 */
void vp_symfile_describe(struct vp_symfile *sf, uint64_t vaddr, char **caller, char **file,
			 uint32_t *line);

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
