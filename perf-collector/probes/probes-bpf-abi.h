/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * probes-bpf-abi.h - what the BPF programs (probes.bpf.c) and their loader
 * (probes-bpf.c) agree on: the attach cookie, the record written to the
 * ring buffer and the slots of the control and statistics maps.
 */
#ifndef VARPERF_PROBES_BPF_ABI_H
#define VARPERF_PROBES_BPF_ABI_H

#include <linux/types.h>

/*
 * Attach cookie of every probe: bits 0-31 the function's index, 32-39 the
 * kind below, 40-63 the generation of the link that holds it.  A record
 * is written only while its generation is the current one, so that links
 * replacing others (functions dropped while the target runs) never
 * record the same call twice.
 */
enum vp_bpf_kind {
	VP_BPF_ENTRY = 0,	 /* a function's entry */
	VP_BPF_RETURN = 1,	 /* uretprobe: the address returned to */
	VP_BPF_EXIT_SITE = 2,	 /* a ret or tail-call jmp, before it runs */
	VP_BPF_ENTRY_EXITS = 3,	 /* an entry whose probed instruction also leaves */
	/* Not probe hits (no cookie has them), following forks: */
	VP_BPF_CHILD = 4,	 /* pid: a child, at its fork; tid: its parent;
				  * addr: 1 if it was stopped (SIGSTOP) */
	VP_BPF_GONE = 5,	 /* pid: a followed child that ended */
	VP_BPF_WAIT = 6,	 /* a thread back on the CPU after blocking:
				  * addr its ns off the CPU from its sleep to
				  * its wake-up, func the syscall it slept in
				  * + 1 (0: none, a page fault or the kernel's) */
};
#define VP_BPF_COOKIE(func, kind, gen) \
	((__u64)(func) | (__u64)(kind) << 32 | (__u64)(gen) << 40)
#define VP_BPF_COOKIE_FUNC(c) ((__u32)(c))
#define VP_BPF_COOKIE_KIND(c) ((__u32)((c) >> 32) & 0xff)
#define VP_BPF_COOKIE_GEN(c) ((__u32)((c) >> 40))

/* One ring-buffer record: 48 bytes. */
struct vp_bpf_rec {
	__u64 time;   /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 sp;     /* user stack pointer at the probe */
	__u64 addr;   /* entry: return address (0: unreadable); else the IP */
	__u64 offcpu; /* the thread's off-CPU ns so far (see offcpu_now) */
	__u32 pid, tid;
	__u32 func;
	__u32 kind;   /* enum vp_bpf_kind */
};

/* Slots of the per-CPU "stats" array. */
enum vp_bpf_stat {
	VP_BPF_STAT_LOST = 0,	     /* no room in the ring buffer */
	VP_BPF_STAT_NO_FOLLOW = 1,   /* children the "followed" table had no room for */
	VP_BPF_STAT_NO_CHILD = 2,    /* ... or the ring buffer (not linked, not held) */
	VP_BPF_STAT_NO_WAIT = 3,     /* blocked intervals with no room (counted
				      * as preempted time by readers) */
	VP_BPF_NSTATS = 4,
};

/* The loader's settings, in .rodata: fixed once loaded. */
struct vp_bpf_cfg {
	__u32 target_tgid;   /* the target's process id */
	__u32 follow;	     /* 1: its children too (the "followed" map) */
	__u32 recorder_tgid; /* varperf's: no child is held once it dies */
	__u32 delay_ns;	     /* test aid: spin this long in every hit (HACKING) */
};

/* The "ctl" array's one value. */
struct vp_bpf_ctl {
	__u64 gen;	  /* the generation that records */
	__u64 wake_bytes; /* wake the reader when this much is waiting */
};

#endif
