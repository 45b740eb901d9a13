/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libpath.h - the shared libraries an ELF file needs, found as the
 * dynamic linker finds them.
 */
#ifndef VARPERF_LIBPATH_H
#define VARPERF_LIBPATH_H

#include "perf-collector/symbols/symbols.h"

/**
 * vp_symfile_find_needed - resolve the shared library @name (a soname such
 * as "libm.so.6", a prefix such as "libm" or "m", or a path) that @sf needs,
 * searching DT_RUNPATH/DT_RPATH, LD_LIBRARY_PATH, ld.so.conf and the
 * standard directories like the dynamic linker.  Returns 0 and a malloc'ed
 * path in @ret, -ENOENT when @sf does not need such a library, or -ENOEXEC
 * when it needs it but the file is nowhere to be found.
 */
int vp_symfile_find_needed(struct vp_symfile *sf, const char *name, char **ret);

#endif
