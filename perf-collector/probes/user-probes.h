/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * user-probes.h - the user backend of probe mode (x86-64): the probed
 * functions patched in the target's own memory, timed there with rdtsc
 * into per-thread rings that varperf reads (user-runtime.h), at a few tens
 * of nanoseconds per call instead of a kernel trap's microseconds.  Getting
 * in takes ptrace: the target is stopped, a memfd mapped into it by
 * injected system calls (user-inject.h), the functions' entries patched
 * (user-patch.h), and the target let go; varperf keeps no hold on it.
 */
#ifndef VARPERF_USER_PROBES_H
#define VARPERF_USER_PROBES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perf-collector/kernel/raw-record.h"
#include "perf-collector/probes/user-patch.h"

enum {
	/* every thread of the target has its TLS before any of its code
	 * runs (a dynamically linked program): the runtime reads the
	 * thread pointer at %fs:0 (0.4 ns), not with rdfsbase (7-9 ns) */
	VP_USER_TLS = 1 << 0,
};

/* A function to patch: where its code is in the target. */
struct vp_user_func {
	uint64_t addr; /* its entry, in the target */
	uint64_t size;
};

struct vp_user_probes {
	pid_t pid;
	int fd;			   /* the memfd */
	unsigned char *code;	   /* varperf's mappings of it */
	size_t code_size;
	unsigned char *shared;
	uint64_t code_at, shared_at, priv_at; /* in the target */
	struct vp_upatch *patches; /* per function; len 0: not patched */
	size_t nfuncs;
	uint64_t *tails;	   /* per ring: events read */
	uint64_t *lost_seen;	   /* per ring: its lost count, as told */
	uint32_t *tids;		   /* per ring: whose events come next, 0: its first */
	/* rdtsc to CLOCK_MONOTONIC: mono0 + (tsc - tsc0) * ns_per_tick */
	uint64_t tsc0, mono0;
	double ns_per_tick;
	uint64_t records;
	int unpatched;
	int flags;		   /* VP_USER_* */
	struct vp_user_func unwind; /* the unwinder's _Unwind_RaiseException */
	uint64_t unwind_at;	   /* the code again, near it; 0: no hook */
	char unwind_why[128];
	/* vp_user_probes_track(): the harness, and each run's results (ticks) */
	struct vp_user_calib *calib;
	double *pool_in, *pool_full;
	size_t npool, pool_cap;
	uint64_t tracked_ns;
};

/* Whether the backend can work here (x86-64 with rdfsbase in user mode):
 * 0, or -errno with the reason in @why. */
int vp_user_probes_check(char *why, size_t len);

/**
 * vp_user_probes_open - map the regions into process @pid, whose threads
 * are all in a ptrace stop (thread @tid runs the injected calls), write
 * the runtime and a stub per function of @funcs, and patch them; then the
 * caller detaches (@flags: VP_USER_*).  With @unwind (the unwinder's
 * _Unwind_RaiseException), that is hooked too, so that an exception puts
 * the swapped return addresses back before it unwinds (failing that is
 * an error: an exception would end the program).  A function that cannot
 * be patched safely is left as it is, its reason in @why[i] (when @why
 * is not NULL; room for 128): among them those with one of the @nrips
 * instruction pointers @rips (of the stopped threads) inside the bytes
 * the jmp would replace.
 * Returns how many were patched, or -errno with what failed in @err (room
 * for 256).
 */
int vp_user_probes_open(struct vp_user_probes *u, pid_t pid, pid_t tid,
			const struct vp_user_func *funcs, size_t nfuncs, const uint64_t *rips,
			size_t nrips, const struct vp_user_func *unwind, int flags,
			char (*why)[128], char *err, size_t errlen);

/* Hand every event written since the last call to @fn, thread by thread
 * (in time order within each): how many. */
long vp_user_probes_read(struct vp_user_probes *u, void (*fn)(void *ctx, struct vp_raw *r),
			 void *ctx);

/* Events the rings had no room for, since the last call. */
uint64_t vp_user_probes_lost(struct vp_user_probes *u);
/* Threads that found no ring (beyond VP_URT_NRINGS), and calls left
 * unrecorded because a thread's shadow stack was full. */
uint64_t vp_user_probes_noring(const struct vp_user_probes *u);
uint64_t vp_user_probes_deep(const struct vp_user_probes *u);
/* Calls of signal handlers left unrecorded: they came while their
 * thread was in the runtime itself (its ring in a half-written state). */
uint64_t vp_user_probes_nested(const struct vp_user_probes *u);

/**
 * vp_user_probes_unpatch - put the original bytes back in process @pid,
 * whose threads are all in a ptrace stop: the regions stay mapped (a
 * thread may still return through them).  0 or -errno.
 */
int vp_user_probes_unpatch(struct vp_user_probes *u);

/**
 * vp_user_probes_drop - put the original bytes back at the entries of the
 * functions @i with @drop[i] (auto mode's budget), every thread of the
 * process in a ptrace stop; their stubs stay (a thread may be in one, or
 * return through the runtime), and calls under way still record their
 * exits.  0 or -errno.
 */
int vp_user_probes_drop(struct vp_user_probes *u, const unsigned char *drop);

/* Unmap varperf's side; a zeroed @u is fine. */
void vp_user_probes_close(struct vp_user_probes *u);

/**
 * vp_user_probes_calibrate - what a probed call costs with this backend,
 * measured in varperf itself: an empty function called unpatched and
 * patched, through the same runtime and stub.  @in_window_ns is the time
 * an empty call is seen to take (the part of the cost inside a call's
 * own entry-to-exit time), @full_ns what the probes add to the caller,
 * @spread_ns how far the in-window time may be off (half the interquartile
 * range of its rounds' medians).  0 or -errno.
 */
int vp_user_probes_calibrate(int flags, uint64_t *in_window_ns, uint64_t *full_ns,
			     uint64_t *spread_ns);

/*
 * The same measurement again and again while recording (the cost of rdtsc
 * in a virtual machine drifts with the host's load): a harness made once,
 * run for @rounds batches of @calls calls, giving the median in-window
 * time and the fastest batch's added cost, in ticks.  0 or -errno.
 */
struct vp_user_calib;
int vp_user_calib_new(struct vp_user_calib **ret, int flags);
int vp_user_calib_run(struct vp_user_calib *c, int calls, int rounds, double *in_window,
		      double *full);
/* ... and, into *@spread, half the interquartile range of the rounds'
 * median in-window times, in ticks */
int vp_user_calib_run_spread(struct vp_user_calib *c, int calls, int rounds, double *in_window,
			     double *full, double *spread);
void vp_user_calib_free(struct vp_user_calib *c);

/* Now and then (every 50 ms at most), measure the cost again: a few
 * hundred calls of the harness, some 50 us. */
void vp_user_probes_track(struct vp_user_probes *u);
/* What the tracking measured (the medians of its runs, ns): 0, or
 * -EAGAIN when it has too few runs. */
int vp_user_probes_tracked(const struct vp_user_probes *u, uint64_t *in_window_ns,
			   uint64_t *full_ns);

/* The clock of the events: rdtsc, and CLOCK_MONOTONIC ns of a count. */
uint64_t vp_user_tsc(void);
uint64_t vp_user_tsc_ns(const struct vp_user_probes *u, uint64_t tsc);

#endif
