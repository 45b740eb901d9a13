/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * perf-event.h - thin layer over perf_event_open(2): the uprobe PMU,
 * per-CPU ring buffers and the one explainer for open failures.
 */
#ifndef VARPERF_PERF_EVENT_H
#define VARPERF_PERF_EVENT_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#if !defined(__x86_64__)
#error "varperf record supports x86-64 only (register numbers, probe classes)"
#endif

/* Index of the stack pointer in PERF_SAMPLE_REGS_USER (PERF_REG_X86_SP). */
enum { VP_PERF_REG_SP = 7 };

/**
 * vp_perf_event_open - perf_event_open(2) with PERF_FLAG_FD_CLOEXEC.
 * Returns the fd or a negative errno.
 */
int vp_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd);

/**
 * vp_uprobe_pmu - read the uprobe PMU's type and the config bit that turns
 * a probe into a return probe from sysfs.  Returns 0, or -ENOENT when the
 * kernel has no uprobe PMU (also remembered for vp_perf_open_strerror()).
 */
int vp_uprobe_pmu(int *type, int *retprobe_bit);

/**
 * vp_uprobe_attr - fill @attr for an entry (@ret == 0) or return probe on
 * the instruction at file offset @off of @path.  The kernel reads @path
 * during perf_event_open only, but it must stay valid until then.
 */
void vp_uprobe_attr(struct perf_event_attr *attr, int type, int retprobe_bit, int ret,
		    const char *path, uint64_t off);

/**
 * vp_perf_open_strerror - explain why perf_event_open() failed with @err
 * (a positive or negative errno) for @attr: missing capabilities and the
 * current perf_event_paranoid for EACCES/EPERM, unsupported events, and so
 * on.  Writes into @buf and returns it.
 */
const char *vp_perf_open_strerror(int err, const struct perf_event_attr *attr, char *buf,
				  size_t len);

/* A perf ring buffer and the event that owns it (others SET_OUTPUT to it). */
struct vp_ring {
	int fd;
	int cpu;
	void *base;	 /* control page, then the data area */
	size_t map_len;
	unsigned char *data;
	uint64_t mask;	 /* data size - 1 */
	uint64_t head;	 /* snapshot taken by vp_ring_begin() */
	uint64_t tail;
	unsigned char *tmp; /* reassembles records that wrap around */
	size_t tmp_len;
};

/**
 * vp_ring_map - map a ring buffer of @data_size bytes (rounded up to a
 * power-of-two number of pages) for @fd.  Returns 0 or -errno.
 */
int vp_ring_map(struct vp_ring *r, int fd, int cpu, size_t data_size);
void vp_ring_unmap(struct vp_ring *r);
/* Redirect the records of @fd into the buffer of @r. */
int vp_ring_redirect(struct vp_ring *r, int fd);

/*
 * Reading: vp_ring_begin() snapshots the head, vp_ring_next() returns the
 * records up to it one by one (valid until the next call), vp_ring_end()
 * gives the space back to the kernel.
 */
void vp_ring_begin(struct vp_ring *r);
const struct perf_event_header *vp_ring_next(struct vp_ring *r);
void vp_ring_end(struct vp_ring *r);

/* Capabilities varperf checks before it needs them (linux/capability.h). */
enum {
	VP_CAP_IPC_LOCK = 14,
	VP_CAP_SYS_ADMIN = 21,
	VP_CAP_PERFMON = 38,
	VP_CAP_BPF = 39,
};

/* Whether varperf's effective capabilities hold @cap (a VP_CAP_*). */
int vp_capable(int cap);

/* What an unprivileged user may lock in perf ring buffers. */
struct vp_mlock_limit {
	unsigned long long per_cpu_kb; /* kernel.perf_event_mlock_kb */
	unsigned long long rlimit_kb;  /* RLIMIT_MEMLOCK */
	int ncpus;		       /* online CPUs */
};

/**
 * vp_ring_size_limit - the largest data size (a power of two pages) of
 * each of @nbuf ring buffers (0: one per online CPU) that the kernel lets this process map: no
 * limit (0) for root, CAP_IPC_LOCK or kernel.perf_event_paranoid -1;
 * otherwise perf_event_mlock_kb per online CPU, plus RLIMIT_MEMLOCK, for
 * all buffers and their header pages (perf_mmap() in
 * kernel/events/core.c).  @ret (may be NULL) gets the figures.
 */
size_t vp_ring_size_limit(int nbuf, struct vp_mlock_limit *ret);

/**
 * vp_online_cpus - the online CPU numbers from sysfs (holes allowed).
 * Returns their count and a malloc'ed array in @ret, or -errno.
 */
int vp_online_cpus(int **ret);

#endif
