/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * plt-names.h - names of the procedure linkage table's stubs ("memcpy@plt"),
 * which libdw cannot give: .plt, .plt.sec and .plt.got entries have no
 * symbols.  libbfd's synthetic symbol table names them, as objdump -d does.
 * Without libbfd every lookup finds nothing.
 */
#ifndef VARPERF_PLT_NAMES_H
#define VARPERF_PLT_NAMES_H

#include <stdint.h>

struct vp_plt_names;

/**
 * vp_plt_names_open - read the PLT stubs of the ELF file @path
 *
 * Returns 0 and the stubs in *@ret (none when the file has no PLT),
 * -ENOTSUP when varperf was built without libbfd, -ENOEXEC when libbfd
 * cannot read @path as an object file, or another -errno.  Free the result
 * with vp_plt_names_free().
 */
int vp_plt_names_open(const char *path, struct vp_plt_names **ret);
void vp_plt_names_free(struct vp_plt_names *p);

/**
 * vp_plt_names_find - the stub at link-time address @vaddr of the file
 *
 * Returns its name ("tiny@plt"; owned by @p) and sets *@start and *@size
 * to its link-time extent, or returns NULL when @vaddr is in no stub (the
 * PLT's header, code outside the PLT).
 */
const char *vp_plt_names_find(const struct vp_plt_names *p, uint64_t vaddr, uint64_t *start,
			      uint64_t *size);

/**
 * vp_plt_name - vp_plt_names_find() on the file @path, each file read
 * once (a failure too) and kept for the life of the process, so the name
 * returned stays valid
 *
 * For the namers of sampled frames and call sites: thread safe.  A @path
 * such as "[vdso]" is no file and has no stubs.
 */
const char *vp_plt_name(const char *path, uint64_t vaddr, uint64_t *start, uint64_t *size);

#endif
