/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * probes-bpf.h - the BPF backend of probe mode: BPF_TRACE_UPROBE_MULTI
 * links restricted to the target process, one BPF ring buffer, per
 * function hit counts kept in the kernel, and each thread's off-CPU time.
 * Following forks, each child gets links of its own, made while it waits
 * stopped at its start, before its first instruction.
 *
 * Against perf_event uprobes (probes.h) it attaches and detaches in
 * milliseconds (one RCU grace period per link, not per probe and CPU),
 * plants breakpoints in the target only (the link's pid filter, thread
 * group wide from Linux 6.12), costs about half as much per emulated
 * probe hit, and delivers one ordered stream.
 */
#ifndef VARPERF_PROBES_BPF_H
#define VARPERF_PROBES_BPF_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/datafile.h"
#include "perf-collector/probes/probes.h"
#include "perf-collector/probes/probe-sites.h"

struct bpf_object;
struct bpf_link;
struct ring_buffer;
struct vp_bpf_reader;

/* The guard that continues children held at their fork once varperf is
 * gone, however it ended (SIGKILL too), as ps shows it. */
static const char VP_UNHOLD_NAME[] = "varperf-unhold";

/* The links of one generation: per module, entries and returns. */
struct vp_bpf_gen {
	int *fds;
	size_t n;
};

/* A followed child: its own links, made at its start. */
struct vp_bpf_child {
	pid_t pid;
	struct vp_bpf_gen live;	/* its links of the generation recording */
	struct vp_bpf_gen next;	/* vp_bpf_probes_drop(): the next ones */
};

struct vp_bpf_probes {
	struct bpf_object *obj;
	struct bpf_link *fork;	/* following forks: adds children */
	struct bpf_link *exit;	/* forgets followed processes that end */
	struct bpf_link *sw;	/* context switches: the threads' sleeps */
	struct bpf_link *wakeup; /* ... and their wake-ups */
	struct ring_buffer *rb;
	struct vp_bpf_reader *reader;
	int entry_fd, return_fd; /* the programs */
	int ctl_fd, hits_fd, stats_fd;
	int held_fd;		/* the children stopped, not yet continued */
	pid_t guard_pid;	/* holding children: the guard (VP_UNHOLD_NAME) */
	int guard_fd;		/* ... and the pipe whose end it waits for */
	int ncpus;		/* possible CPUs: per-CPU map values */
	uint32_t gen;		/* the generation recording now */
	struct vp_bpf_gen live;	/* its links */
	pid_t pid;		/* 0: no filter */
	struct vp_bpf_child *kids; /* following forks: the children alive */
	size_t nkids;
	struct vp_bpf_gen dead;	/* the links of children that ended */
	/* the children linked at their start: how many, how long they
	 * waited stopped (ns, the sum and the longest), how many ran on
	 * unheld (no SIGSTOP) and how long until their links were made */
	uint64_t nheld, held_ns, held_max_ns;
	uint64_t nunheld, unheld_max_ns;
	int reading;		/* in vp_bpf_probes_read(): fn may be called */
	int closing;		/* vp_bpf_probes_close(): children go unprobed */
	int hold;		/* children are stopped until their links are made */
	const struct vp_func *funcs;
	const struct vp_exits *exits;
	const struct vp_module *mods;
	size_t nfuncs;
	unsigned char *off;	/* per function: no longer probed */
	uint64_t wake_bytes;	/* the reader's mark */
	int gone;		/* the target has exited */
	pthread_t *closers;	/* threads closing replaced links */
	size_t nclosers;
	uint64_t records;	/* decoded */
	/* the consumer of vp_bpf_probes_read() */
	void (*fn)(void *ctx, struct vp_raw *r);
	void *ctx;
};

/**
 * vp_bpf_probes_check - whether the BPF backend can record here: built
 * with it, a kernel with uprobe_multi links whose pid filter covers every
 * thread (6.12 or later), BTF, and the right to load BPF programs.
 * Returns 0, or -errno with the reason in @why.
 */
int vp_bpf_probes_check(char *why, size_t len);

/*
 * Open and load the programs, in a thread of its own, for a later
 * vp_bpf_probes_open() of @pid (> 0) with the same @buf_size and @flags
 * and at most @max_funcs functions, which then waits for it and only
 * attaches (an open that does not fit loads its own).  0 or -errno (the
 * later open loads then, and says what fails).  vp_bpf_probes_unpreload()
 * drops what was not taken; only the thread that asked may call it.
 */
int vp_bpf_probes_preload(pid_t pid, size_t buf_size, size_t max_funcs, int flags);
void vp_bpf_probes_unpreload(void);

/**
 * vp_bpf_probes_open - load the programs and link an entry probe for each
 * of @funcs (in @mods[func.module].path at func.probe_off) and exit probes
 * as @exits[i] says (return probes when @exits is NULL), restricted to
 * process @pid (0: any process; only for private code), recording into a
 * ring buffer of @buf_size bytes.  With VP_BPF_FOLLOW_FORK in @flags the
 * children @pid forks (and theirs) are recorded too: each one stops
 * itself (SIGSTOP) at its start, and vp_bpf_probes_read() links its
 * probes, restricted to it, and continues it (SIGCONT); a guard process
 * (VP_UNHOLD_NAME) continues those still stopped if varperf dies.  No other
 * process ever has a probe.  The probes are live on return.  Prints the error and returns -1 on
 * failure (nothing stays attached).  @funcs, @exits and @mods must
 * outlive @b.
 */
enum {
	VP_BPF_FOLLOW_FORK = 1 << 0, /* record @pid's descendants too */
};
int vp_bpf_probes_open(struct vp_bpf_probes *b, const struct vp_func *funcs, size_t nfuncs,
		       const struct vp_exits *exits, const struct vp_module *mods, pid_t pid,
		       size_t buf_size, int flags);

/* What to poll for: readable when the buffer passed its mark. */
int vp_bpf_probes_fd(const struct vp_bpf_probes *b);

/*
 * vp_bpf_probes_read - hand every record in the buffer to @fn, in the
 * order written (time order, but for nanoseconds between CPUs).  Returns
 * how many, or -errno.
 */
long vp_bpf_probes_read(struct vp_bpf_probes *b, void (*fn)(void *ctx, struct vp_raw *r),
			void *ctx);

/* Entries of function @func the kernel counted, recorded or not. */
uint64_t vp_bpf_probes_hits(const struct vp_bpf_probes *b, uint32_t func);
/* Records the buffer had no room for (counted exactly). */
uint64_t vp_bpf_probes_lost(const struct vp_bpf_probes *b);
/* Sleeps of the target's threads the ring buffer had no room for: their
 * time reads as preempted. */
uint64_t vp_bpf_probes_lost_waits(const struct vp_bpf_probes *b);
/* Following forks: children the kernel's table of followed processes, or
 * the ring buffer, had no room for (their probe hits are not recorded). */
uint64_t vp_bpf_probes_unfollowed(const struct vp_bpf_probes *b);
/* Following forks: children that ran on before their links were made
 * (before Linux 6.13, or the SIGSTOP failed): their first calls are not
 * recorded.  The longest such wait is in unheld_max_ns. */
uint64_t vp_bpf_probes_unheld(const struct vp_bpf_probes *b);
/* Following forks: record process @pid too (a child forked before the
 * links were made), with links of its own.  0 or -errno. */
int vp_bpf_probes_follow(struct vp_bpf_probes *b, pid_t pid);

/**
 * vp_bpf_probes_drop - stop probing the functions @drop marks: new links
 * without them take over at once (a new generation), and a thread
 * removes the old ones, return probes first - or, with @wait, the old
 * ones go first and then the new ones come, before this returns (no
 * record in between).  Their hits
 * so far stay counted.  0, or -1 after printing why (the old links then
 * stay).
 */
int vp_bpf_probes_drop(struct vp_bpf_probes *b, const unsigned char *drop, int wait);

/* No record from now on; the links stay until vp_bpf_probes_close(). */
void vp_bpf_probes_stop(struct vp_bpf_probes *b);

/* The target has exited: no return is pending, the links can go at once. */
void vp_bpf_probes_target_gone(struct vp_bpf_probes *b);

/* Detach everything (return probes first, while the target may run) and
 * free; a zeroed @b is fine. */
void vp_bpf_probes_close(struct vp_bpf_probes *b);

#endif
