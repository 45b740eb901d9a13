/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * record.h - what the parts of "varperf record" share: its options, the
 * state of one recording, and the steps cmd-record.c puts together:
 * record-setup.c decides what to record (functions, exits, costs),
 * record-stream.c runs the target and writes its events and samples,
 * record-auto.c is the automatic mode's two phases.
 */
#ifndef VARPERF_RECORD_H
#define VARPERF_RECORD_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../core/datafile.h"
#include "launch.h"
#include "output.h"
#include "nesting.h"
#include "plan.h"
#include "probes-bpf.h"
#include "probes.h"
#include "sampling.h"
#include "symbols.h"

enum {
	/* the exit status of a wrong command line */
	USAGE_ERROR = 129,
};

struct strvec {
	char **v;
	size_t n;
};

/* --exit-probes */
enum exit_mode {
	EXIT_AUTO,
	EXIT_URETPROBE,
	EXIT_RET,
};

/* --backend: how probes are placed */
enum probe_backend {
	BACKEND_AUTO = 0, /* BPF where the kernel and the rights allow, else perf */
	BACKEND_PERF,	  /* perf_event uprobes */
	BACKEND_BPF,	  /* BPF uprobe_multi links */
};

/* --mode */
enum record_mode {
	MODE_AUTO = VP_MODE_AUTO,
	MODE_PROBE = VP_MODE_PROBE,
	MODE_SAMPLE = VP_MODE_SAMPLE,
	MODE_COMBINED = VP_MODE_COMBINED,
};

struct record_opts {
	const char *output;
	struct strvec funcs, excludes, libs;
	unsigned long long buf_size;
	int buf_size_given;	  /* -m: not to be shrunk */
	int stack_size_given;	  /* --stack-size: not to be raised */
	int list, quiet, no_calibrate, no_move;
	int follow_fork;  /* --follow-fork (the default) */
	enum exit_mode exit_mode;
	enum record_mode mode;
	enum probe_backend backend;
	int backend_given;
	struct vp_sampling_opts sampling;
	double precision, confidence;
	int precision_given;
	double cutoff, overhead;
	const char *phase1;
	pid_t attach;	  /* -p: 0 to run a program */
	double duration;  /* seconds, 0: none */
	double phase1_duration; /* auto with -p: seconds of phase 1, 0: default */
	const char *sampling_given; /* the first sampling option given, or NULL */
	const char *plan_given;	    /* the first of --cutoff, --overhead, or NULL */
};

/* Open-addressing map from a 64-bit key to a 32-bit index. */
struct idmap {
	uint64_t *keys;
	uint32_t *vals;
	uint8_t *used;
	size_t cap, n;
};

/* A process of the recording (record-procs.c). */
struct record_proc {
	uint32_t pid, ppid;
	uint32_t flags;	  /* VP_PROC_* */
	int followed;	  /* its events are recorded */
	int exec_pending; /* exec'd: its next mapping names the program */
	char *exec;	  /* what it exec'd, or "" */
	/* its CPU time (ns): when this recording began (followed from an
	 * earlier phase) and when last read; cpu_gone: no longer readable */
	uint64_t cpu_base, cpu_last;
	int cpu_gone;
};

struct record_procs {
	struct record_proc *v; /* the target first, then sorted by pid */
	size_t n, cap;
	struct record_proc *last; /* the last one found */
	int follow;		  /* --follow-fork */
	uint64_t forked;	  /* children followed */
	uint64_t unfollowed;	  /* children not followed */
	uint64_t execd;		  /* followed children that exec'd another program */
};

struct record {
	struct record_opts opts;
	const char *prog;
	char *path;
	struct vp_header hdr;
	struct vp_symfile **symfiles;
	/* Per function how its exits are probed; NULL: return probes. */
	struct vp_exits *exits;
	int can_throw;
	size_t nrecursive;	   /* --exit-probes=auto: functions calling
				    * themselves, probed at their exit sites */
	struct vp_launch launch;
	struct vp_probes probes;   /* perf backend; with BPF only mmap tracking */
	struct vp_bpf_probes bpf;  /* BPF backend */
	int bpf_on;		   /* the probes are on the BPF backend */
	enum record_mode mode;	   /* of this run: probe, sample or combined */
	struct vp_sampler sampler; /* sample and combined modes */
	struct vp_sample_sink *ss;
	uint64_t *probe_vaddr;	   /* combined: link-time address of each probe */
	struct vp_ring *rings;	   /* the buffers to read: the probes' or the sampler's */
	int nrings;
	uint32_t thread_base;	   /* auto: phase 2 numbers its threads after phase 1's */
	const char *plan_from;	   /* auto: the phase-1 data selecting what to probe */
	struct vp_plan plan;
	uint64_t *calls;	   /* auto, phase 2: entries per function so far */
	uint64_t watched_ns;	   /* ... when the watchdog last looked */
	uint64_t start_cpu;	   /* CPU time of the target when recording began */
	uint64_t cpu;		   /* ... its CPU time since then, last seen */
	unsigned char *dropped;	   /* ... and functions no longer probed */
	int argc;		   /* the program's command line */
	char **argv;
	int pidfd;		   /* attach: readable when the process exits */
	uint64_t start_ns;
	struct vp_writer *w;
	struct vp_output out;	   /* the file @w writes, named once the run begins */
	struct vp_addrspace *as;
	pid_t pid;
	/* Records read but not yet written, sorted by time each round. */
	struct vp_raw *pending;
	size_t npending, cap;
	uint64_t seq, max_seen;
	struct idmap threads, callsites;
	unsigned char *tramp;	   /* per call site: its return address is the
				    * uretprobe trampoline (a tail call) */
	size_t ntramp;
	struct vp_nesting *nesting; /* the kernel's pending return probes */
	struct record_procs procs;
	uint64_t lost, foreign;
	int write_err;
	int finished;		   /* the file was written to its end */
	int announce;		   /* say when attached or waiting, even when quiet */
	int can_sample_only;	   /* auto: nothing to probe is no error... */
	char *unprobeable;	   /* ... and this says why (malloc'ed) */
	uint64_t nsamples;	   /* samples read so far */
	uint64_t full_stacks;	   /* ... whose stack copy was full (truncated,
				    * or about to be: stack_grows()) */
	uint32_t phase1_stack_size; /* auto, phase 2: the stack copy phase 1
				     * ended with (it may raise it) */
	uint64_t min_samples;	   /* auto, attached: phase 1 goes on until this
				    * many samples, after --phase1-duration... */
	uint64_t until_ns;	   /* ... but not beyond this time (0: no end) */
	int waiting_said;
	int gone;		   /* attach: the process exited */
	int child;		   /* "attached" to the program varperf runs (auto
				    * mode's phase 2 in the same run): reaped, its
				    * status passed on, signals forwarded */
	uint64_t window_ns;	   /* auto, phase 1 of a program: leave it running
				    * after this long (and min_samples) */
	int left_running;	   /* ... and it did */
	int calibrated;		   /* record_calibrate() ran */
	int holding;		   /* auto, phase 2 on BPF: records held back until
				    * the watchdog's first look */
	uint64_t hold_ns;	   /* ... and after it, this long */
	/* Sample mode: samples and mappings queue up here, to be unwound
	 * once a second (FLUSH_NS) at the end of a round, not every round. */
	int defer;
	struct vp_raw *deferred;
	size_t ndeferred, deferred_cap, deferred_bytes;
	uint64_t flushed_ns;	   /* when the file last got what was read */
	uint64_t unwound, unwind_ns; /* samples unwound, and how long it took */
};

/* The last SIGINT, SIGTERM or SIGHUP varperf got, and how many (all runs). */
extern volatile sig_atomic_t record_signal, record_nsignals;

/* ---- record-setup.c: what to record ---- */

/*
 * record_prepare_static - what needs no target yet: the program (or the
 * attached process's), its functions and the probes' prerequisites, so
 * that auto mode fails before its first run, not after it.  Returns 0,
 * -1 (done: --list printed) or an exit code after printing why.
 */
int record_prepare_static(struct record *rec);
/*
 * record_calibrate - the probes' cost on this machine (once; auto mode
 * measures it before phase 1, so as not to leave its target unobserved
 * between the phases).  0 or an exit code.
 */
int record_calibrate(struct record *rec);
/*
 * record_prepare_probes - right before the target runs: the probes' cost
 * and, in auto mode, what phase 1 found worth probing.  Returns 0, -1
 * (done: --list) or an exit code.
 */
int record_prepare_probes(struct record *rec);
/* The header's command line: @argv for a program, /proc's for -p. */
void record_header_cmdline(struct record *rec, int argc, char **argv);

/* ---- record-procs.c: the processes followed ---- */

/* The target (rec->pid) is followed, no child yet. */
void record_procs_start(struct record *rec);
void record_procs_release(struct record_procs *ps);
/* Whether the events of process @pid are recorded. */
int record_procs_followed(struct record *rec, uint32_t pid);
/* In time order: @ppid forked @pid; @pid exec'd; @pid mapped @path. */
void record_procs_fork(struct record *rec, uint32_t ppid, uint32_t pid);
void record_procs_exec(struct record *rec, uint32_t pid);
void record_procs_mapped(struct record *rec, uint32_t pid, const char *path);
/* Before the END chunk: what is still pending goes into the file. */
void record_procs_finish(struct record *rec);
/* The CPU time of the children followed, in this recording (ns): the
 * probes' cost in them is charged to them. */
uint64_t record_procs_cpu(struct record *rec);
/* What record says at the end about children: followed, exec'd, not followed. */
void record_procs_summary(const struct record *rec);

/* ---- record-stream.c: running the target, writing its events ---- */

/* CLOCK_MONOTONIC in ns. */
uint64_t record_now_ns(void);
/* Report a writing error once and remember it (the file is incomplete). */
void record_write_failed(struct record *rec, int err);
/* The target's CPU time since the recording began, as far as known. */
void record_update_cpu(struct record *rec);
/*
 * CPU time of process @pid in ns, that of its exited threads included (the
 * probes' time is charged to it too), or 0 when it cannot be read.
 */
uint64_t record_process_cpu_ns(pid_t pid);
/* Read what the buffers hold and drop the entries and exits held back
 * from before @t (auto mode: probes found too costly were on until then);
 * returns the earliest time dropped (@t if none). */
uint64_t record_discard_before(struct record *rec, uint64_t t);
/*
 * record_run - start the target (or attach), record until it ends, write
 * the file; returns the exit code.  Signals from now on mean "stop the
 * target and finish the file".
 */
int record_run(struct record *rec, int argc, char **argv);
/* Refuse an output that is no regular file, or is one of the recording's
 * inputs (the program, a --lib, --phase1); 0 or an exit code. */
int record_check_output(const struct record *rec);
/*
 * record_resample - sample on with a stack copy of @stack_size bytes:
 * the samples not yet written are dropped, the events reopened on the
 * target's threads.  0, or -1 after printing why (sampling stopped).
 */
int record_resample(struct record *rec, uint32_t stack_size);
/* One recording (a whole run in probe, sample or combined mode, or one
 * phase of auto mode): prepare, then record_run(); the exit code. */
int record_one(struct record *rec, int argc, char **argv);
/* Close and free everything @rec holds (a zeroed @rec too). */
void record_release(struct record *rec);

/* ---- record-auto.c: the automatic mode ---- */

/* Phase 2: keep the functions the plan chose.  0, or -1 after printing. */
int record_select_planned(struct record *rec);
/* Phase 2, every round: stop probing what costs more than the budget. */
void record_watchdog(struct record *rec);
/* Phase 2, at the end: what the probes cost in all, into the trailer
 * (and VP_END_OVER_BUDGET), then said. */
void record_account_cost(struct record *rec, struct vp_trailer *tr);
void record_print_measured_cost(const struct record *rec, const struct vp_trailer *tr);
/* Phase 1, every round: a larger stack copy when the samples fill it;
 * returns 1 when the buffers changed. */
int record_phase1_stacks(struct record *rec);
/* Whether phase 1's stack copy is final (its samples may go to the file). */
int record_phase1_stacks_settled(const struct record *rec);
/* Kumar et al. 2008's two phases (§2.2), launched or attached; the exit code. */
int record_auto(const struct record_opts *o, const char *prog, int argc, char **argv);

#endif
