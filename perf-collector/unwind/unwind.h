/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * unwind.h - offline DWARF unwinding of sampled user stacks (registers and
 * a copy of the stack from each sample), and the naming of the addresses
 * found: the function and the functions inlined at each, as the data
 * file's MODULE, SYMBOL and FRAME definitions.
 *
 * libunwind's remote API walks .eh_frame with accessors over the stack
 * copy and the mapped ELF files; libdw walks .debug_frame where a module
 * has no .eh_frame.  Unwind tables, ELF images and names are cached per
 * module; the vDSO is read from varperf's own (same kernel, same image).
 */
#ifndef VARPERF_UNWIND_H
#define VARPERF_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/datafile.h"
#include "perf-collector/symbols/addrspace.h"
#include "perf-collector/unwind/unwind-names.h"

/* Registers of a sample in PERF_SAMPLE_REGS_USER order (x86-64). */
enum {
	VP_UREG_AX = 0, VP_UREG_BX = 1, VP_UREG_CX = 2, VP_UREG_DX = 3,
	VP_UREG_SI = 4, VP_UREG_DI = 5, VP_UREG_BP = 6, VP_UREG_SP = 7,
	VP_UREG_IP = 8, VP_UREG_R8 = 16, VP_UREG_R15 = 23,
	VP_UREG_COUNT = 24,
};
/* The sample_regs_user mask for the registers above (no flags/segments). */
#define VP_UREG_MASK (0xffULL << 16 | 0x1ffULL)

/* One sample's user state. */
struct vp_ustack {
	pid_t pid;
	uint64_t regs[VP_UREG_COUNT];
	const unsigned char *stack; /* copy of [sp, sp + len) */
	uint64_t len;		    /* bytes valid (the kernel's dyn_size) */
	uint64_t size;		    /* bytes asked for: len < size means the
				     * copy reached the end of the stack */
};

struct vp_uframe {
	uint64_t ip;  /* the sampled IP, then return addresses */
	uint64_t cfa; /* canonical frame address: sp before the call */
	uint32_t flags; /* VP_UFRAME_* */
};

enum {
	/* ip is where a signal interrupted the frame, not a return
	 * address: name it as it is, not by the call before it */
	VP_UFRAME_EXACT = 1 << 0,
};

struct vp_unwinder;

/**
 * vp_unwinder_new - an unwinder whose data file already has modules
 * @mods[0..@nmods): a file mapped by the target with the same path gets
 * that module id; other files get new ids, defined through @sink.
 * Returns NULL if libunwind cannot be set up (errno set).
 */
struct vp_unwinder *vp_unwinder_new(const struct vp_module *mods, size_t nmods,
				    const struct vp_unwind_sink *sink);
void vp_unwinder_free(struct vp_unwinder *u);

/* An executable mapping of @pid's address space, from PERF_RECORD_MMAP2
 * or /proc ("[vdso]" and "[uprobes]" included).  Anonymous mappings are
 * ignored; so are data mappings, which the caller must not pass: a
 * segment is chosen as the executable one that holds page @pgoff. */
void vp_unwinder_mmap(struct vp_unwinder *u, pid_t pid, uint64_t start, uint64_t len,
		      uint64_t pgoff, const char *path);

/* Add the mappings @m of @pid (read earlier with vp_maps_read(), while
 * it ran). */
void vp_unwinder_add_maps(struct vp_unwinder *u, pid_t pid, const struct vp_maps *m);
/* Read @pid's mappings from /proc now (attaching to a running process).
 * 0 or -errno. */
int vp_unwinder_read_maps(struct vp_unwinder *u, pid_t pid);
/* @pid exec'd: forget its mappings (the new image's come next). */
void vp_unwinder_forget(struct vp_unwinder *u, pid_t pid);
/* @ppid forked @pid: the child starts with a copy of its mappings. */
void vp_unwinder_fork(struct vp_unwinder *u, pid_t ppid, pid_t pid);
/* @pid exited: its mappings stay for its samples still to come, but
 * /proc/@pid is no longer it (the pid may be reused): never read it. */
void vp_unwinder_gone(struct vp_unwinder *u, pid_t pid);

/**
 * vp_unwind - unwind @st into @frames (innermost first, at most @max).
 * Returns the number of frames; *@flags gets VP_SAMPLE_TRUNCATED when the
 * stack copy was full and the frame that failed, which had CFI, needed
 * what lay beyond it (a larger --stack-size would help), VP_SAMPLE_BROKEN
 * when unwinding stopped early for another reason (no CFI: frame-pointer
 * guesses are not trusted, a copy that ended short, ...).  When an
 * address is in no known mapping, @st->pid's /proc maps are read again
 * now and then unless vp_unwinder_gone() said it exited.
 */
size_t vp_unwind(struct vp_unwinder *u, const struct vp_ustack *st, struct vp_uframe *frames,
		 size_t max, uint32_t *flags);

/**
 * vp_unwinder_frame - the data file's frame id of code address @ip in
 * @pid (@is_ret: a return address, named by the call before it), defining
 * its module, symbols and frame through the sink on first use.  Returns
 * the id, or a negative errno from the sink.
 */
long vp_unwinder_frame(struct vp_unwinder *u, pid_t pid, uint64_t ip, int is_ret);

/* The file @addr of @pid is in (NULL: none known), and in *@ret the
 * link-time address there. */
const char *vp_unwinder_link_addr(struct vp_unwinder *u, pid_t pid, uint64_t addr,
				  uint64_t *ret);
/* The runtime address of link-time address @vaddr of file @path in @pid,
 * or 0 when it is not mapped there. */
uint64_t vp_unwinder_runtime(struct vp_unwinder *u, pid_t pid, const char *path, uint64_t vaddr);
/* Whether @ip is in @pid's [uprobes] page (the kernel's return trampoline
 * and out-of-line single-step slots) - or in no known mapping at all. */
int vp_unwinder_in_uprobes(struct vp_unwinder *u, pid_t pid, uint64_t ip);
/* Whether the instruction before @ip in @pid is a system call: then the
 * user IP of a sample in the kernel is a return address, to be named by
 * the instruction before it (else the kernel was entered by a fault or a
 * trap, at the instruction itself). */
int vp_unwinder_after_syscall(struct vp_unwinder *u, pid_t pid, uint64_t ip);
/* Whether @addr is in @pid's [uprobes] page, known for sure. */
int vp_unwinder_uprobes_page(struct vp_unwinder *u, pid_t pid, uint64_t addr);

/* Statistics for the summary and make bench. */
struct vp_unwind_stats {
	uint64_t samples;
	uint64_t frames;
	uint64_t libdw;	     /* samples unwound by libdw (.debug_frame) */
	uint64_t truncated;
	uint64_t broken;
	uint64_t no_cfi;     /* samples stopped in code without unwind tables */
	char no_cfi_module[256]; /* the last such module */
};
void vp_unwinder_stats(const struct vp_unwinder *u, struct vp_unwind_stats *ret);

#endif
