/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * record.h - what the parts of "varperf record" share: its options, the
 * state of one recording (struct record, in groups) and their steps.
 *
 * The parts, from the top; a file calls only files below it, so no two
 * call each other:
 *
 *   cmd-record.c        the command line
 *   record-auto.c       the driver: one run (record_one()), or auto mode's
 *                       two phases (record_auto()), each a step over its
 *                       own state (struct auto_run, record-auto.h)
 *   record-timed.c      what auto mode says of what it timed: nothing, too
 *                       little, the command for a whole run; its own cost
 *   record-run.c        the target running: start, the loop that waits and
 *                       reads, the end of the file
 *   record-budget.c     phase 2 kept within the budget plan.c judges
 *   record-summary.c    what record says at the end
 *   record-status.c     the status line on a terminal while it records
 *   record-merge.c      the records read, merged by time, into the file
 *   record-setup.c      what to record: functions, exits, probe costs
 *   record-procs.c      the processes followed, and their CPU time
 *   plan.c              phase 2's plan, and what is over the budget now
 *                       (vp_plan_over_budget())
 *
 *   file              may call
 *   cmd-record.c      record-auto.c, record-run.c (record_release())
 *   record-auto.c     record-timed.c, record-setup.c, record-run.c, plan.c
 *   record-timed.c    none of these
 *   record-run.c      record-budget.c, record-summary.c, record-merge.c,
 *                     record-setup.c (record_header_cmdline()),
 *                     record-status.c, record-procs.c, plan.c
 *   record-budget.c   record-merge.c, record-procs.c, plan.c
 *   record-summary.c  record-procs.c
 *   record-status.c   record-procs.c
 *   record-merge.c    record-procs.c
 *   record-setup.c    plan.c
 *   record-procs.c    none of these
 *   plan.c            none of these
 *
 * Each step takes the groups of struct record it uses (the target, the
 * output, the counts...), the whole of it only where it uses most.
 * Any of them may call the collector's modules (probes, sampling,
 * symbols, output, ...) and core/.  Where the run must ask the driver
 * something, the driver hands it a struct record_ops; the steps return 0
 * or -errno and leave the rest in struct record_outcome.
 */
#ifndef VARPERF_RECORD_H
#define VARPERF_RECORD_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "core/datafile.h"
#include "perf-collector/symbols/addrspace.h"
#include "core/hashtab.h"
#include "perf-collector/kernel/launch.h"
#include "perf-collector/symbols/libpath.h"
#include "util/output.h"
#include "perf-collector/probes/nesting.h"
#include "perf-collector/record/plan.h"
#include "perf-collector/probes/probe-sites.h"
#include "perf-collector/probes/probes-bpf.h"
#include "perf-collector/probes/probes.h"
#include "perf-collector/probes/user-probes.h"
#include "perf-collector/sampling/sample-sink.h"
#include "perf-collector/sampling/sampler.h"
#include "perf-collector/symbols/symbols.h"
#include "util/util.h"

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
	BACKEND_USER,	  /* patches in the target (record-user.c), else as auto */
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
	int rerun;		    /* auto: a program that ended may run again */
	int has_input_size;	    /* --input-size, stored in the header */
	unsigned long long input_size;
};

/* A map from a 64-bit key to a 32-bit index (record-merge.c); zero-filled
 * (as struct record is made) it is empty. */
struct idmap {
	struct vp_hashtab tab;
	size_t n;
};

/* Processes whose stack start record-merge.c keeps at once. */
enum { RECORD_STACK_STARTS = 8 };

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

struct record;

/*
 * How a recording's steps ended, beyond their return value: they return 0
 * or a negative errno (-1 when the error was said), and say here what
 * else the driver must know.
 */
struct record_outcome {
	int listed;	/* --list printed the functions: nothing to record */
	int usage;	/* the failure was the command line's (EXIT_USAGE) */
	int finished;	/* record_run() wrote the file to its end */
	uint64_t events; /* ... with this many entries and exits */
	int status;	/* record_run(): the exit status to pass on - the target's,
			 * 128 + a signal's, 1 when it failed */
	struct vp_trailer trailer; /* ... and the END chunk written (finished) */
};

/*
 * What the run asks its driver while the target runs, every round
 * (auto mode's phase 1 sets them, see record-auto.c): the run never
 * calls the driver by name.
 */
struct record_ops {
	/* after the round's reading: 1 when the events were reopened (new
	 * buffers to poll) */
	int (*round)(struct record *rec);
	/* whether what was read may go into the file yet */
	int (*may_flush)(const struct record *rec);
};

/* The target: the program run (or the process attached) and its children. */
struct record_target {
	const char *prog;
	char *path;
	int argc;		  /* the program's command line */
	char **argv;
	struct vp_launch launch;
	pid_t pid;
	int pidfd;		  /* readable when the process exits */
	int child;		  /* "attached" to the program varperf runs (auto
				   * mode's phase 2 in the same run): reaped, its
				   * status passed on, signals forwarded */
	int gone;		  /* attach: the process exited */
	int left_running;	  /* auto, phase 1 of a program: it runs on */
	uint64_t start_ns;	  /* when the recording began */
	uint64_t start_cpu;	  /* CPU time of the target then */
	/* where the main stacks of the last processes sampled began at
	 * their exec (/proc's startstack; 0: unknown), pid 0 for none */
	struct {
		uint32_t pid;
		uint64_t start;
	} stack_starts[RECORD_STACK_STARTS];
	unsigned next_stack_start;
	uint64_t cpu;		  /* ... its CPU time since then, last seen */
	struct record_procs procs;
};

/* What is probed, how, and the events that bring the records. */
struct record_probing {
	struct vp_symfile **symfiles; /* per module of the header */
	/* Per function how its exits are probed; NULL: return probes. */
	struct vp_exits *exits;
	int can_throw;
	size_t nrecursive;	   /* --exit-probes=auto: functions calling
				    * themselves, probed at their exit sites */
	int can_sample_only;	   /* auto: nothing to probe is no error... */
	char *unprobeable;	   /* ... and this says why (malloc'ed) */
	int calibrated;		   /* record_calibrate() ran */
	struct vp_probes probes;   /* perf backend; with BPF only mmap tracking */
	struct vp_bpf_probes bpf;  /* BPF backend */
	int bpf_on;		   /* the probes are on the BPF backend */
	struct vp_user_probes *user; /* the user backend (record-user.c), or NULL */
	struct vp_sampler sampler; /* sample and combined modes */
	struct vp_sample_sink *ss;
	uint64_t *probe_vaddr;	   /* combined: link-time address of each probe */
	struct vp_ring *rings;	   /* the buffers to read: the probes' or the sampler's */
	int nrings;
	struct vp_nesting *nesting; /* the kernel's pending return probes */
};

/* The records on their way into the file. */
struct record_output {
	struct vp_output file;	   /* the file the writer writes, named once the
				    * run begins */
	const char *name;	   /* its name (-o), for the messages */
	struct vp_writer *w;	   /* its writer, while the run lasts */
	int write_err;
	/* Records read but not yet written, sorted by time each round. */
	struct vp_raw *pending;
	size_t npending, pending_cap;
	uint64_t seq, max_seen;
	/* Sample mode: samples and mappings queue up here, to be unwound
	 * once a second (FLUSH_NS) at the end of a round, not every round. */
	int defer;
	struct vp_raw *deferred;
	size_t ndeferred, deferred_cap, deferred_bytes;
	uint64_t flushed_ns;	   /* when the file last got what was read */
};

/* Auto mode: what its driver sets for a phase, and phase 2's measurements. */
struct record_phase {
	int announce;		   /* say when attached or waiting, even when quiet */
	/* phase 1 */
	uint64_t min_samples;	   /* attached: phase 1 goes on until this many
				    * samples, after --phase1-duration... */
	uint64_t until_ns;	   /* ... but not beyond this time (0: no end) */
	int waiting_said;
	int preloaded;		   /* phase 2's BPF programs loaded ahead */
	uint64_t window_ns;	   /* of a program: leave it running after this
				    * long (and min_samples) */
	uint64_t ended_ns;	   /* when it left the program running */
	/* phase 2 */
	const char *plan_from;	   /* the phase-1 data selecting what to probe */
	struct vp_plan plan;
	uint32_t phase1_stack_size; /* the stack copy phase 1 ended with (it may
				     * raise it) */
	uint64_t *calls;	   /* entries per function so far */
	uint64_t *kept;		   /* per function, 2 counts: entries and exits
				    * written to the file */
	unsigned char *dropped;	   /* functions no longer probed */
	uint64_t watched_ns;	   /* when the watchdog last looked */
	int holding;		   /* on BPF: records held back until the
				    * watchdog's first look */
	uint64_t hold_ns;	   /* ... and after it, this long */
};

/* The file's numbers of threads and call sites (record-merge.c). */
struct record_ids {
	uint32_t thread_base;	   /* auto: phase 2 numbers its threads after phase 1's */
	struct idmap threads, callsites;
	unsigned char *tramp;	   /* per call site: its return address is the
				    * uretprobe trampoline (a tail call) */
	size_t ntramp;
};

/* What was read, lost and left out, for the trailer and the summary. */
struct record_counts {
	uint64_t lost, foreign;
	uint64_t lost_phase1;	   /* lost in phase 1, whose records the file
				    * holds too: record says the sum, as the
				    * report does */
	uint64_t nsamples;	   /* samples read so far */
	uint64_t full_stacks;	   /* ... whose stack copy was full (truncated,
				    * or about to be) */
	uint64_t unwound, unwind_ns; /* samples unwound, and how long it took */
	uint64_t timed;		   /* exits written: the calls timed */
	double probe_ns;	   /* the probes' estimated cost of the entries
				    * written (status.cost set) */
};

/* The status line on a terminal (record-status.c). */
struct record_status {
	int on;			   /* stderr is a terminal, and not -q */
	int phase;		   /* auto mode's phase, 1 or 2; 0: not auto */
	uint64_t t0;		   /* when the recording began (0: this run's start) */
	uint64_t next_ns;	   /* when to draw it next */
	double *cost;		   /* per function, what a probed call costs (ns) */
	uint64_t draws, cpu_ns;	   /* -v: how often drawn, at what CPU cost */
};

struct record {
	struct record_opts opts;
	enum record_mode mode;	   /* of this run: probe, sample or combined */
	const struct record_ops *ops; /* NULL: the run asks nothing */
	struct record_outcome outcome;
	/* What every part uses: the file's header (modules, functions,
	 * costs) and the target's address space. */
	struct vp_header hdr;
	struct vp_addrspace *as;
	struct record_target target;
	struct record_probing probing;
	struct record_output output;
	struct record_phase phase;
	struct record_counts counts;
	struct record_ids ids;
	struct record_status status;
};

/* The last SIGINT, SIGTERM or SIGHUP varperf got, and how many (all runs);
 * when the first came (CLOCK_MONOTONIC, ns). */
extern volatile sig_atomic_t record_signal, record_nsignals;
extern volatile uint64_t record_signal_ns;

/* Report a writing error once and remember it (the file is incomplete). */
static inline void record_write_failed(struct record_output *out, int err)
{
	if (err && !out->write_err) {
		out->write_err = err;
		error("cannot write '%s': %s", out->name, strerror(-err));
	}
}

/* record-verify.c: NULL, or what is wrong with the data file at @fd
 * (for vp_output_verify(): the program may have written it meanwhile) */
const char *record_file_whole(int fd, void *ctx);

/* ---- record-setup.c: what to record ---- */

/*
 * record_prepare_static - what needs no target yet: the program (or the
 * attached process's), its functions and the probes' prerequisites, so
 * that auto mode fails before its first run, not after it.  0 (and
 * outcome.listed when --list printed the functions), or a negative errno
 * after printing why (outcome.usage: a wrong command line); with nothing
 * to probe and probing.can_sample_only, probing.unprobeable says why,
 * unsaid.
 */
int record_prepare_static(struct record *rec);
/*
 * record_calibrate - the probes' cost on this machine (once; auto mode
 * measures it while phase 1 runs, so as not to leave its target
 * unobserved between the phases).  0, or -1 after printing why.
 */
int record_calibrate(struct record *rec);
/*
 * record_prepare_probes - right before the target runs: the probes' cost,
 * then --list (outcome.listed) or what is probed how.  0, or -1 after
 * printing why.
 */
int record_prepare_probes(struct record *rec);
/* The header's command line: @argv for a program, /proc's for -p. */
void record_header_cmdline(struct record *rec, int argc, char **argv);

/* ---- record-procs.c: the processes followed ---- */

/* Target @pid is followed, no child yet (@follow: --follow-fork); or, in
 * auto mode's phase 2 of the same run, phase 1's processes go on. */
void record_procs_start(struct record_procs *ps, pid_t pid, int follow,
			struct record_output *out);
void record_procs_release(struct record_procs *ps);
/* Whether the events of process @pid are recorded. */
int record_procs_followed(struct record_procs *ps, uint32_t pid);
/* In time order: @ppid forked @pid; @pid exec'd; @pid mapped @path
 * (@prog: the program's path, which a child may exec again). */
void record_procs_fork(struct record_procs *ps, struct record_output *out, uint32_t ppid,
		       uint32_t pid);
void record_procs_exec(struct record_procs *ps, uint32_t pid);
void record_procs_mapped(struct record_procs *ps, struct record_output *out, const char *prog,
			 uint32_t pid, const char *path);
/* Before the END chunk: what is still pending goes into the file. */
void record_procs_finish(struct record_procs *ps, struct record_output *out);
/*
 * CPU time of process @pid in ns, that of its exited threads included (the
 * probes' time is charged to it too), or 0 when it cannot be read.
 */
uint64_t record_process_cpu_ns(pid_t pid);
/* The CPU time of the children followed, in this recording (ns): the
 * probes' cost in them is charged to them. */
uint64_t record_procs_cpu(struct record_procs *ps);
/* The target's CPU time since the recording began, as far as known, and
 * that of the children it followed (the probes cost them too), into
 * t->cpu. */
void record_target_cpu_update(struct record_target *t);
/* What record says at the end about children: followed, exec'd, not followed. */
void record_procs_summary(const struct record_target *t, const struct record_probing *p);

/* ---- record-merge.c: the records read, merged by time, into the file ---- */

/* Queue what every buffer holds: each CPU's perf ring, the BPF ring. */
void record_merge_read(struct record *rec);
/*
 * One round: read every buffer, sort what is pending by time, and write
 * out what can no longer be preceded by a record still unread (@all:
 * everything, the target is gone).
 */
void record_merge_round(struct record *rec, int all);
/* Read what the buffers hold and drop the entries and exits held back
 * from before @t; the earliest time dropped (@t if none). */
uint64_t record_merge_discard_before(struct record *rec, uint64_t t);
/* Once a second: what was read goes into the file (samples unwound). */
void record_merge_flush(struct record *rec);
/* At the end: the deferred samples unwound and written, the records the
 * kernel lost counted. */
void record_merge_finish(struct record *rec);
/* Drop the samples read but not yet written (a new stack copy). */
void record_merge_drop_samples(struct record_output *out);
void record_merge_release(struct record_output *out, struct record_ids *ids);
/* Whether function @f's exits are return probes. */
int record_has_return_probe(const struct record_probing *p, uint32_t f);

/* ---- record-budget.c: phase 2 within its budget ---- */

/* Every round: stop probing what costs more than the budget. */
void record_budget_watch(struct record *rec);
/* At the end: what the probes cost in all into the trailer (and
 * VP_END_OVER_BUDGET)... */
void record_budget_account(struct record *rec, struct vp_trailer *tr);
/* ... and for the user: the cost, and the functions of which no call
 * reached the file whole. */
void record_budget_print(struct record *rec, const struct vp_trailer *tr);

/* ---- record-summary.c: what record says at the end ---- */

void record_summary_print(struct record *rec, const struct vp_trailer *tr);
/*
 * After a signal to varperf (Ctrl-C, SIGTERM, SIGHUP) ended a recording
 * that began at @t0 (CLOCK_MONOTONIC ns) and whose file @output was
 * written whole: "interrupted after N s; the recording is complete up to
 * there", once (unless @quiet).
 */
void record_summary_interrupted(uint64_t t0, int quiet);
/* -p: the process exited, or keeps running. */
void record_summary_detach(const struct record_target *t, int quiet);

/* ---- record-status.c: the status line while recording ---- */

/* Before the loop: whether to show it (stderr a terminal, not -q). */
void record_status_start(struct record *rec);
/* Every round: drawn again about once a second. */
void record_status_tick(struct record *rec);
/* After the loop: erased. */
void record_status_end(struct record *rec);

/* ---- record-run.c: running the target ---- */

/*
 * record_run - start the target (or attach), record until it ends, write
 * the file: 0, or a negative errno when it could not start or the file is
 * incomplete; either way outcome.status is the exit status to pass on.
 * Signals from now on mean "stop the target and finish the file".  In
 * auto mode's phase 2 (phase.calls) it measures what the probes cost and
 * stops those plan.c finds over the budget (vp_plan_over_budget()).
 */
int record_run(struct record *rec, int argc, char **argv);
/*
 * record_resample - sample on with a stack copy of @stack_size bytes:
 * the samples not yet written are dropped, the events reopened on the
 * target's threads.  0, or -1 after printing why (sampling stopped).
 */
int record_resample(struct record *rec, uint32_t stack_size);
/* Close and free everything @rec holds (a zeroed @rec too). */
void record_release(struct record *rec);

/* ---- record-user.c: the user backend's part (--backend=user) ---- */

/* Whether it can record this (sets probing.user): 0, or -1 after a
 * warning that says why and that another backend takes over (@asked:
 * --backend=user; else --backend=auto's first choice, said as a note). */
int record_user_choose(struct record *rec, int asked);
/* Auto mode, the plan made: its functions whose entry cannot be patched
 * left out, and said.  0, or -1 after the error when none is left. */
int record_user_planned(struct record *rec);
/* After the fork: the mappings' events, the target traced.  0 or -1. */
int record_user_start(struct record *rec);
/* After the exec (or to attach): patch and let go.  0, or -1 after the
 * error (a launched target killed). */
int record_user_attach(struct record *rec);
/* Hand what the rings hold to @fn (with @rec as its context). */
void record_user_read(struct record *rec, void (*fn)(void *ctx, struct vp_raw *r));
/* Count what the rings had no room for, into the file. */
void record_user_count_lost(struct record *rec);
/* Attached: take the patches out of the process, which runs on. */
void record_user_stop(struct record *rec);
/* Auto mode's budget: the functions @i with @drop[i] unpatched, every
 * thread stopped meanwhile (their stubs stay).  0 or -errno. */
int record_user_drop(struct record *rec, const unsigned char *drop);
void record_user_release(struct record_probing *p);
/* The cost measured while recording, for the trailer (@costs: room for
 * 2): how many, 0 when too few measures. */
int record_user_tracked(const struct record_probing *p, const struct vp_header *h,
			struct vp_probe_cost *costs);
/* What a probed call costs with it (record_calibrate()): 0 or -1. */
int record_user_calibrate(struct record *rec);

/* ---- record-auto.c: the driver ---- */

/* One recording (a whole run in probe, sample or combined mode, or one
 * phase of auto mode): prepare, then record_run(); the exit status. */
int record_one(struct record *rec, int argc, char **argv);
/* Kumar et al. 2008's two phases (§2.2), launched or attached; the exit
 * status. */
int record_auto(const struct record_opts *o, const char *prog, int argc, char **argv);

#endif
