/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * datafile.h - the varperf.data format: one writer (used by the collector,
 * datafile-write.c) and one reader (used by report, the GDB plugin and the
 * tests, datafile-read.c), so the encoding lives in exactly one place.
 * man/varperf-data.5 documents it.
 *
 * Layout: a 16-byte file header, then self-delimiting chunks:
 *
 *   file header:  "VPDATA\0\0"  u32le version  u32le flags(0)
 *   chunk:        "VPCK"  u8 type  u8[3] zero  u32le payload_len
 *                 u32le crc32(payload)  payload[payload_len]
 *
 * Chunk types: META (must come first, exactly once), EVENTS (any number),
 * END (last; missing when the recorder died).  Version 2 adds sampled call
 * stacks (SAMPLE records and the MODULE, SYMBOL and FRAME definitions they
 * use) and the PHASE marker.  Version 3 adds the probe backend and, with
 * META OFFCPU, each thread's cumulative off-CPU time in every entry and
 * exit record.  Version 4 adds the PROCESS record (the processes a
 * recording followed: the target's forked children) and the count of
 * children not followed in END.  Files of versions 1 to 3 are still read.
 * Version 5 adds, with META BLOCKED, the WAIT record: each time a thread
 * went to sleep (blocked), how long until it was woken and in which
 * syscall, so that its off-CPU time splits into blocked and preempted;
 * files of versions 1 to 4 are still read.
 * META keys added later without changing what the rest of the file means
 * (INPUT_SIZE) keep the version: older readers skip unknown keys.
 * A reader stops at the last complete chunk of a truncated file and says
 * so; a chunk with a bad magic, CRC or record is an error naming the file
 * offset.
 *
 * Integers inside payloads are ULEB128 ("u") or zig-zag SLEB ("s"); a
 * string is u length + bytes (no NUL).
 */
#ifndef VARPERF_CORE_DATAFILE_H
#define VARPERF_CORE_DATAFILE_H

#include <stddef.h>
#include <stdint.h>

#define VP_DATA_MAGIC "VPDATA\0\0"
#define VP_CHUNK_MAGIC "VPCK"
/* Written version, and the oldest one readers still accept. */
enum { VP_DATA_VERSION = 5, VP_DATA_VERSION_MIN = 1 };
enum { VP_FILE_HEADER_SIZE = 16, VP_CHUNK_HEADER_SIZE = 16 };
/* Largest payload a reader accepts; a writer flushes long before. */
enum { VP_CHUNK_MAX_PAYLOAD = 64 << 20 };
/* The writer flushes an EVENTS chunk once its payload reaches this. */
enum { VP_CHUNK_TARGET = 64 << 10 };

enum vp_chunk_type {
	VP_CHUNK_META = 1,
	VP_CHUNK_EVENTS = 2,
	VP_CHUNK_END = 3,
};

/* Unit of every timestamp and duration in the file. */
enum vp_time_unit {
	VP_UNIT_NS = 1,     /* nanoseconds of the clock below */
	VP_UNIT_CYCLES = 2, /* reserved: hardware cycle counter */
};

/* Classes of the probed instruction (decides the kernel's probe cost). */
enum vp_insn_class {
	VP_INSN_UNKNOWN = 0,
	VP_INSN_EMULATED = 1, /* push of a register, the standard nops, direct
			       * jmp/call/jcc: emulated by the kernel */
	VP_INSN_STEPPED = 2,  /* anything else: single-stepped out of line */
};

/* Function flags. */
enum {
	VP_FUNC_CLONE = 1 << 0,    /* .isra/.constprop/.part/... clone */
	VP_FUNC_FROM_LIB = 1 << 1, /* from a --lib module, not the executable */
	VP_FUNC_MOVED = 1 << 2,	   /* probed past its first instruction (and any
				    * endbr64): on the first emulated one */
	VP_FUNC_URETPROBE = 1 << 3, /* its exits are return probes: the kernel
				     * arms at most 64 pending per thread */
};

/* Call-site flags. */
enum {
	VP_CS_NONE = 1 << 0,       /* no return address (top of a thread) */
	VP_CS_TRAMPOLINE = 1 << 1, /* return address is the kernel's uretprobe
				    * trampoline: a tail call from the function
				    * that is still pending on the stack */
	VP_CS_UNMAPPED = 1 << 2,   /* address in no known file mapping */
};

/* META keys (TLV: u key, u len, bytes).  Unknown keys are skipped. */
enum vp_meta_key {
	VP_META_UNIT = 1,	/* u: enum vp_time_unit */
	VP_META_CLOCK = 2,	/* u: clockid_t of the timestamps */
	VP_META_CMDLINE = 3,	/* u argc, argc strings */
	VP_META_START = 4,	/* u: wall-clock seconds since the epoch */
	VP_META_PID = 5,	/* u: pid of the target */
	VP_META_MODULE = 6,	/* string path, string build-id (raw bytes) */
	VP_META_FUNCTION = 7,	/* see struct vp_func */
	VP_META_PROBE_COST = 8, /* u class, u in-window ns, u full ns, then
				 * (optional: older readers skip it) u the
				 * spread of full ns */
	VP_META_HOST = 9,	/* string: kernel release and machine */
	VP_META_NCPU = 10,	/* u: CPUs recorded */
	VP_META_MODE = 11,	/* u: enum vp_record_mode (version 2) */
	VP_META_SAMPLING = 12,	/* u event, u period, u frequency, u stack bytes (v2) */
	VP_META_BACKEND = 13,	/* u: enum vp_probe_backend (version 3) */
	VP_META_OFFCPU = 14,	/* u: 1 = every entry/exit record carries the
				 * thread's off-CPU time (version 3) */
	VP_META_INPUT_SIZE = 15, /* u: the program's input size as the user
				  * gave it (record --input-size); optional,
				  * skipped by older readers, so no new
				  * version */
	VP_META_BLOCKED = 16,	/* u: 1 = WAIT records say every sleep of the
				 * recorded threads (version 5, with OFFCPU) */
};

/* What placed the probes and collected their events (VP_META_BACKEND). */
enum vp_probe_backend {
	VP_BACKEND_NONE = 0, /* not said (files before version 3: perf) */
	VP_BACKEND_PERF = 1, /* perf_event uprobes */
	VP_BACKEND_BPF = 2,  /* BPF uprobe_multi links */
	VP_BACKEND_USER = 3, /* patches in the process (the user backend) */
};

/* How the data were recorded (VP_META_MODE). */
enum vp_record_mode {
	VP_MODE_PROBE = 1,    /* entry/exit probes only */
	VP_MODE_SAMPLE = 2,   /* sampled call stacks only */
	VP_MODE_AUTO = 3,     /* phase 1 sampled, phase 2 probed (two runs) */
	VP_MODE_COMBINED = 4, /* samples and probes in one run */
};

/* The sampling event (VP_META_SAMPLING). */
enum vp_sample_event {
	VP_SEV_CPU_CLOCK = 1,
	VP_SEV_TASK_CLOCK = 2,
	VP_SEV_CYCLES = 3, /* hardware cycles: the period is in cycles */
};

struct vp_sampling {
	uint32_t event;	     /* enum vp_sample_event, 0: no sampling */
	uint64_t period;     /* ns per sample for the clocks (0: frequency mode) */
	uint64_t freq;	     /* samples per second asked for */
	uint64_t stack_size; /* bytes of user stack copied per sample */
};

/* The most user stack the kernel copies with a sample (a u16 of words). */
enum { VP_STACK_SIZE_MAX = 65528 };

/* Control records inside EVENTS chunks: tag = (type << 2) | VP_REC_CONTROL. */
enum vp_rec_kind {
	VP_REC_ENTRY = 0,   /* tag = func << 2 */
	VP_REC_EXIT = 1,    /* tag = func << 2 | 1 */
	VP_REC_CONTROL = 2, /* tag = type << 2 | 2 */
	VP_REC_SAMPLE = 3,  /* tag = flags << 2 | 3 (version 2) */
};

enum vp_control_type {
	VP_CTL_THREAD = 1,   /* u idx, u tid, u pid */
	VP_CTL_CALLSITE = 2, /* u id, u flags, u module+1 (0 = none), u offset,
			      * string caller ("sym+0x1f"), string file, u line */
	VP_CTL_LOST = 3,     /* u cpu, u count of lost records */
	/* version 2: */
	VP_CTL_MODULE = 4,   /* u id, u flags, string path, bytes build-id */
	VP_CTL_SYMBOL = 5,   /* u id, u flags, u module+1, u addr, u size,
			      * string name, string display */
	VP_CTL_FRAME = 6,    /* u id, u module+1, u addr, u nlevels, then per
			      * level (innermost first) u symbol, u line,
			      * string file */
	VP_CTL_PHASE = 7,    /* u phase (1: sampled run, 2: probed run), u pid */
	VP_CTL_UNPROBED = 8, /* u func, u time: its probes were removed then
			      * (over the overhead budget); later calls are
			      * not in the file */
	/* version 4: */
	VP_CTL_PROCESS = 9,  /* u pid, u ppid, u flags (VP_PROC_*), string
			      * the program it exec'd ("" if none): a process
			      * followed; a later record of the same pid
			      * updates it */
	/* version 5 (META BLOCKED): */
	VP_CTL_WAIT = 11,    /* u thread, u time, u ns, u reason: the thread is
			      * back on a CPU at time (the file's clock) after
			      * ns asleep (blocked: from its switch out to its
			      * wake-up), in the syscall reason - 1 (x86-64
			      * numbers; reason 0: none, a page fault).  Its
			      * next event's off-CPU time includes ns; the rest
			      * of its off-CPU time (preempted, or woken and
			      * waiting for a CPU) was the machine's */
};

/* Process flags (VP_CTL_PROCESS). */
enum {
	VP_PROC_FORKED = 1 << 0, /* a child of a followed process, followed
				  * from its fork */
	VP_PROC_EXEC = 1 << 1,	 /* it exec'd another program: not followed
				  * from then on */
};

/* A process of the recording (VP_CTL_PROCESS). */
struct vp_process {
	uint32_t pid;
	uint32_t ppid;	/* 0: the target itself (not a followed child) */
	uint32_t flags; /* VP_PROC_* */
	char *exec;	/* the program exec'd, "" if none */
};

/*
 * Sample record (version 2), after the tag:
 *   u thread, s dtime, u period, u nframes, then per frame (innermost
 *   first) u frame id, s dcfa.
 * dtime continues the chunk's event times; the innermost frame's dcfa is
 * relative to the previous innermost CFA of the same thread in the chunk
 * (0 at chunk start), every other frame's to the frame inside it.
 */
enum {
	VP_SAMPLE_TRUNCATED = 1 << 0, /* the stack copy ended before the
				       * outermost frame was reached */
	VP_SAMPLE_BROKEN = 1 << 1,    /* unwinding stopped early for another
				       * reason (no unwind information) */
	VP_SAMPLE_KERNEL = 1 << 2,    /* taken in the kernel: the frames are the
				       * user code that entered it (none when
				       * the task had no user state left: its
				       * exit had released its memory) */
	VP_SAMPLE_PROBE = 1 << 3,     /* the IP was in the [uprobes] page and was
				       * mapped back to the probed function */
};

/* Runtime module flags (VP_CTL_MODULE). */
enum {
	VP_MOD_VDSO = 1 << 0,	 /* the kernel's vDSO */
	VP_MOD_ANON = 1 << 1,	 /* code in no file (JIT, [uprobes]) */
	VP_MOD_KERNEL = 1 << 2,	 /* the kernel itself */
};

/* Symbol flags (VP_CTL_SYMBOL). */
enum {
	VP_SYM_INLINE = 1 << 0,	 /* an inlined function: no entry of its own */
	VP_SYM_NONAME = 1 << 1,	 /* no symbol covers the code: named by address */
	VP_SYM_KERNEL = 1 << 2,	 /* stands for time in the kernel */
};

/*
 * Record encodings after the tag (EVENTS payload starts with u64le base time):
 *   entry: u thread, s dtime, s dsp, u callsite
 *   exit:  u thread, s dtime, s dsp
 * and with META OFFCPU (version 3):
 *   entry: u thread, s dtime, s dsp, u callsite, s doffcpu
 *   exit:  u thread, s dtime, s dsp, s doffcpu
 * dtime is relative to the previous event record of the chunk (the first to
 * the chunk's base time); dsp to the previous stack pointer of the same
 * thread in the chunk (0 at chunk start), and doffcpu likewise to the
 * thread's previous off-CPU time, so every chunk decodes alone.
 * The entry's sp points at the return address; a matching exit has sp + 8.
 * The off-CPU time is the thread's total time switched out so far, in the
 * clock and unit of the event times, from any origin; it never decreases
 * within a thread (a reader refuses a file where it does).
 */

/* END payload: u wait-status, u flags, u events, u lost records,
 * u foreign records (other processes, not followed), u end time; version 2
 * adds u samples, u truncated samples, u broken samples, then u count and
 * that many probe costs (u class, u in-window ns, u full ns) tracked while
 * recording, which readers use instead of the META chunk's; version 3 adds
 * auto mode's accounting of phase 2: u the probes' estimated cost in ns,
 * u the target's CPU time in ns, u the budget (--overhead) in parts per
 * million (0: no budget, not auto mode); version 4 adds u the child
 * processes not followed (--no-follow-fork, or the backend could not). */
enum {
	VP_END_EXITED = 1 << 0,      /* wait-status is valid */
	/* stopped by SIGINT/SIGTERM/SIGHUP to varperf (not --duration): the
	 * data are whole up to then.  A flag of END, not a control record:
	 * readers refuse unknown control types (a new one would need a new
	 * version), and auto mode marks phase 1's file after the fact by
	 * rewriting its END (vp_datafile_rewrite_end()). */
	VP_END_INTERRUPTED = 1 << 1,
	VP_END_WRITE_ERROR = 1 << 2, /* data were dropped (e.g. disk full) */
	VP_END_DETACHED = 1 << 3,    /* attached to a running process and
				      * left it running (version 2) */
	VP_END_GONE = 1 << 4,	     /* attached, and the process exited: its
				      * status is its parent's (version 2) */
	VP_END_OVER_BUDGET = 1 << 5, /* auto mode: the probes cost more than
				      * the budget allowed (version 3) */
};

struct vp_module {
	char *path;
	unsigned char *build_id;
	size_t build_id_len;
	uint64_t size; /* bytes of the file (META modules); 0: not said */
};

struct vp_func {
	uint32_t module;     /* index into modules */
	uint64_t addr;	     /* st_value: link-time virtual address */
	uint64_t size;
	uint64_t probe_off;  /* file offset of the probed instruction */
	uint32_t flags;	     /* VP_FUNC_* */
	uint32_t insn_class; /* enum vp_insn_class */
	char *name;	     /* symbol name as in the ELF file */
	char *display;	     /* demangled name, or == name */
	char *base;	     /* name without clone suffixes, or == display */
};

struct vp_callsite {
	uint32_t flags;	 /* VP_CS_* */
	int32_t module;	 /* index into modules, -1 if none */
	uint64_t offset; /* return address: link-time virtual address */
	char *caller;	 /* "sym+0x1f" of the return address, or "" */
	char *file;	 /* source file of the call, or "" */
	uint32_t line;	 /* 0 if unknown */
};

struct vp_probe_cost {
	uint32_t insn_class;
	uint64_t in_window_ns; /* added to the probed invocation itself */
	uint64_t full_ns;      /* added to the caller per probed call */
	uint64_t spread_ns;    /* how far full_ns may be off: half the
				* interquartile range of the calibration's
				* blocks (META only; 0: not known) */
};

/* Everything in the META chunk plus the definitions seen so far. */
struct vp_header {
	uint32_t version;
	uint32_t unit;
	uint32_t clock;
	uint64_t start_time;
	uint32_t pid;
	uint32_t ncpu;
	char *host;
	int argc;
	char **argv;
	size_t nmodules;
	struct vp_module *modules;
	size_t nfuncs;
	struct vp_func *funcs;
	size_t ncosts;
	struct vp_probe_cost *costs;
	/* version 2 (0 in a version-1 file) */
	uint32_t mode; /* enum vp_record_mode; 0: not said (probe) */
	struct vp_sampling sampling;
	/* version 3 (0 before) */
	uint32_t backend; /* enum vp_probe_backend, 0 unknown/none */
	uint32_t offcpu;  /* 1: events carry offcpu */
	/* META INPUT_SIZE (any version) */
	int has_input_size;
	uint64_t input_size;
	/* version 5: 1 when WAIT records split off-CPU time (needs offcpu) */
	uint32_t blocked;
};

/* Decoded trailer (END chunk). */
struct vp_trailer {
	int present; /* 0: the recorder did not finish the file */
	uint64_t wait_status;
	uint32_t flags;
	uint64_t events;
	uint64_t lost;
	uint64_t foreign;
	uint64_t end_time;
	/* version 2 */
	uint64_t samples;
	uint64_t truncated; /* samples with VP_SAMPLE_TRUNCATED */
	uint64_t broken;    /* samples with VP_SAMPLE_BROKEN */
	uint32_t ncosts;    /* probe costs as tracked during the recording */
	struct vp_probe_cost costs[4];
	/* version 3: auto mode's phase 2, as measured (0: not said) */
	uint64_t probe_cost_ns;	 /* calls of the probed functions x their cost */
	uint64_t target_cpu_ns;	 /* the target's CPU time meanwhile */
	uint32_t budget_ppm;	 /* --overhead, in millionths */
	/* version 4 */
	uint64_t unfollowed;	 /* child processes not followed */
};

enum vp_event_kind {
	VP_EV_ENTRY = 0,
	VP_EV_EXIT = 1,
	VP_EV_WAIT = 2, /* a WAIT record, only to readers that asked for them
			 * (vp_reader_set_waits): func is its reason, wait its
			 * ns, time the thread's last event time */
};

/* One decoded entry or exit event. */
struct vp_event {
	uint64_t time;
	uint64_t sp;
	uint32_t func;
	uint32_t callsite; /* entries only */
	uint32_t thread;   /* thread index (see vp_reader_thread) */
	uint32_t kind;	   /* enum vp_event_kind */
	uint64_t offcpu;   /* the thread's cumulative off-CPU ns at this event
			    * (hdr->offcpu), else 0; as in the file, whatever
			    * the reader's time base */
	uint64_t blocked;  /* with hdr->blocked: the part of the thread's
			    * off-CPU time since its first event that it was
			    * blocked (asleep), never growing more than
			    * offcpu between two events; the rest is
			    * preempted */
	uint64_t wait;	   /* VP_EV_WAIT: its ns */
};

struct vp_thread_info {
	uint32_t tid;
	uint32_t pid;
};

/* A function seen in sampled stacks (VP_CTL_SYMBOL). */
struct vp_symbol {
	uint32_t flags;	 /* VP_SYM_* */
	int32_t module;	 /* index among all modules, -1 if none */
	uint64_t addr;	 /* link-time entry address (0 for an inline) */
	uint64_t size;
	char *name;	 /* symbol or DWARF linkage name */
	char *display;	 /* demangled */
};

/* One source position of a frame (innermost level first). */
struct vp_frame_level {
	uint32_t symbol; /* the function executing at this level */
	uint32_t line;	 /* 0 if unknown */
	char *file;	 /* "" if unknown */
};

/*
 * A code address seen in sampled stacks (VP_CTL_FRAME): the physical
 * function and the functions inlined into it at that address.  Level i's
 * position is where level i's function is at that address: the source
 * line of the address for level 0, the inlined call of level i - 1 else.
 */
struct vp_frame_def {
	int32_t module;	 /* -1 if none */
	uint64_t addr;	 /* link-time address */
	uint32_t nlevels;
	struct vp_frame_level *levels;
};

/* One decoded sample, valid during the callback that receives it. */
struct vp_sample {
	uint64_t time;
	uint64_t period; /* of the sampling event: ns for the clocks */
	uint32_t thread;
	uint32_t flags;	 /* VP_SAMPLE_* */
	uint32_t phase;	 /* of the last PHASE record, 0 before any */
	uint32_t nframes;
	const uint32_t *frames; /* frame ids, innermost first */
	const uint64_t *cfas;	/* their canonical frame addresses */
};

/* ---- writer ---- */

struct vp_writer;

/**
 * vp_writer_new - create @path (mode 0666 less the umask; an existing file
 * is truncated) and write the file header and META chunk.
 * @hdr is copied as needed; the caller keeps ownership.
 * Returns NULL with errno set on failure.
 */
struct vp_writer *vp_writer_new(const char *path, const struct vp_header *hdr);
/*
 * vp_writer_new_fd - the same on @fd, open for writing at its start (a
 * file the caller names when it chooses: see util/output.h).
 * @fd belongs to the writer from now on, also when this fails.
 */
struct vp_writer *vp_writer_new_fd(int fd, const struct vp_header *hdr);
/* Records are buffered; each returns 0 or -errno (first write error sticks). */
int vp_writer_thread(struct vp_writer *w, uint32_t idx, uint32_t tid, uint32_t pid);
int vp_writer_callsite(struct vp_writer *w, uint32_t id, const struct vp_callsite *cs);
int vp_writer_lost(struct vp_writer *w, uint32_t cpu, uint64_t count);
/*
 * With hdr->offcpu, @ev->offcpu is written too: an off-CPU time below the
 * thread's previous one is -EINVAL, sticky like the other errors, since
 * readers would refuse the file.  Without it @ev->offcpu is ignored.
 */
int vp_writer_event(struct vp_writer *w, const struct vp_event *ev);
/* The off-CPU time last written of thread @idx (0 before any). */
uint64_t vp_writer_offcpu(const struct vp_writer *w, uint32_t idx);
/*
 * Version 2 records.  Definitions are numbered in order from 0; module ids
 * continue after the header's modules.  A sample's frames must be defined
 * before it.  @s->phase is ignored (see vp_writer_phase).
 */
int vp_writer_module(struct vp_writer *w, uint32_t id, const struct vp_module *m,
		     uint32_t flags);
int vp_writer_symbol(struct vp_writer *w, uint32_t id, const struct vp_symbol *s);
int vp_writer_frame(struct vp_writer *w, uint32_t id, const struct vp_frame_def *f);
int vp_writer_sample(struct vp_writer *w, const struct vp_sample *s);
int vp_writer_phase(struct vp_writer *w, uint32_t phase, uint32_t pid);
int vp_writer_unprobed(struct vp_writer *w, uint32_t func, uint64_t time);
/* Version 5 (hdr->blocked): thread @thread was blocked from its sleep to
 * @time, @ns off the CPU, in syscall @reason - 1 (0: none). */
int vp_writer_wait(struct vp_writer *w, uint32_t thread, uint64_t time, uint64_t ns,
		   uint32_t reason);
/* Version 4: process @p followed (again, when its flags change). */
int vp_writer_process(struct vp_writer *w, const struct vp_process *p);
/* Write out the current EVENTS chunk (also done automatically at ~64 KiB). */
int vp_writer_flush(struct vp_writer *w);
/**
 * vp_writer_finish - flush, write the END chunk, fsync and close.
 * @tr->events and the sample counts are filled in by the writer.  Frees @w
 * in all cases.
 */
int vp_writer_finish(struct vp_writer *w, struct vp_trailer *tr);
/* Close without an END chunk (what a killed recorder leaves); buffered
 * records not yet flushed are dropped.  NULL is a no-op. */
void vp_writer_free(struct vp_writer *w);
/*
 * vp_datafile_rewrite_end - replace the END chunk of the whole data file
 * @path with one of @tr (the rest of the file as it was): for what became
 * known only after the file was written - auto mode's phase 1 left the
 * program running, and Ctrl-C ended it before phase 2 began.  0, or
 * -errno (-EBADMSG: no END chunk).
 */
int vp_datafile_rewrite_end(const char *path, const struct vp_trailer *tr);

/* ---- reader ---- */

struct vp_reader;

/**
 * vp_reader_open - open @path and read its header (META chunk).  Probe
 * costs tracked during the recording (END chunk) replace the calibration's
 * in the header, so compensation uses them from the first event.
 * On failure returns a negative errno and, when @errbuf is not NULL, a
 * message naming the file, the offset and the problem.
 */
int vp_reader_open(const char *path, struct vp_reader **ret, char *errbuf, size_t errlen);
void vp_reader_free(struct vp_reader *r);
const struct vp_header *vp_reader_header(const struct vp_reader *r);

/**
 * vp_reader_next - decode the next EVENTS chunk's entry/exit events into
 * @buf (capacity @cap; decoding continues on the next call when a chunk
 * holds more).  Definitions (threads, call sites, lost counts) are absorbed
 * into the reader as they pass.  Returns the number of events (>0), 0 at
 * the end of the data, or a negative errno with vp_reader_error() set.
 */
long vp_reader_next(struct vp_reader *r, struct vp_event *buf, size_t cap);

/* What vp_reader_pump() hands the events and call sites to. */
struct vp_event_consumer {
	void *ctx;
	/* call site @id with its VP_CS_* @flags, before the first event of it */
	int (*callsite)(void *ctx, uint32_t id, uint32_t flags);
	int (*feed)(void *ctx, const struct vp_event *ev, size_t n);
};

/**
 * vp_reader_pump - read the events left to their end, in batches, into
 * @c: each call site the stream has defined by then first.  Returns 0, the
 * first error of @c's functions, or the reader's (vp_reader_error() set);
 * -ENOMEM when no batch buffer can be had.
 */
int vp_reader_pump(struct vp_reader *r, const struct vp_event_consumer *c);
/* Message of the last failure: "'file': offset N: what was wrong". */
const char *vp_reader_error(const struct vp_reader *r);
/* Non-fatal problem (truncated tail), or NULL. */
const char *vp_reader_warning(const struct vp_reader *r);
const struct vp_trailer *vp_reader_trailer(const struct vp_reader *r);
size_t vp_reader_nthreads(const struct vp_reader *r);
const struct vp_thread_info *vp_reader_thread(const struct vp_reader *r, uint32_t idx);
size_t vp_reader_ncallsites(const struct vp_reader *r);
const struct vp_callsite *vp_reader_callsite(const struct vp_reader *r, uint32_t id);
uint64_t vp_reader_lost(const struct vp_reader *r);
/* Processes (version 4 PROCESS records read so far), in order of first
 * appearance; the latest record of a pid wins. */
size_t vp_reader_nprocesses(const struct vp_reader *r);
const struct vp_process *vp_reader_process(const struct vp_reader *r, size_t i);
/*
 * vp_reader_set_pid - from now on hand over only the events and samples
 * of threads of process @pid (0: all).  The others are still decoded
 * (their definitions absorbed), just not returned.
 */
void vp_reader_set_pid(struct vp_reader *r, uint32_t pid);

/*
 * Sampled stacks (version 2).  Without a handler the reader skips samples.
 * With one, vp_reader_next() calls @fn for each sample as it decodes it, in
 * file (time) order among the events it returns; a negative return from
 * @fn stops the read with that error.
 */
typedef int (*vp_sample_fn)(void *ctx, const struct vp_reader *r, const struct vp_sample *s);
void vp_reader_set_sample_handler(struct vp_reader *r, vp_sample_fn fn, void *ctx);
/* All modules: the header's, then those defined in EVENTS chunks. */
size_t vp_reader_nmodules(const struct vp_reader *r);
const struct vp_module *vp_reader_module(const struct vp_reader *r, uint32_t id);
/* VP_MOD_* of module @id (0 for the header's). */
uint32_t vp_reader_module_flags(const struct vp_reader *r, uint32_t id);
size_t vp_reader_nsymbols(const struct vp_reader *r);
const struct vp_symbol *vp_reader_symbol(const struct vp_reader *r, uint32_t id);
size_t vp_reader_nframes(const struct vp_reader *r);
const struct vp_frame_def *vp_reader_frame(const struct vp_reader *r, uint32_t id);
/* Samples decoded so far (handled or skipped). */
uint64_t vp_reader_samples(const struct vp_reader *r);
/* When function @func stopped being probed (UNPROBED record), or 0. */
uint64_t vp_reader_unprobed(const struct vp_reader *r, uint32_t func);
/* Phase of the last PHASE record read (0: none yet) and its pid. */
uint32_t vp_reader_phase(const struct vp_reader *r, uint32_t *pid);
/* The pid of the PHASE 1 record read so far (0: none): an auto recording
 * whose phase 2 (the header's pid) probed the same process ran once. */
uint32_t vp_reader_phase1_pid(const struct vp_reader *r);

/*
 * vp_reader_compensate - with @on, subtract the calibrated probe cost from
 * the event times as they are decoded: per thread, everything after a
 * probed call's entry moves back by the in-window cost of its class, and
 * everything after its exit by the rest of the call's full cost, so an
 * invocation loses its own in-window cost and k full costs for its k probed
 * descendant calls (per-thread times stay monotonic).  Functions of a class without a calibrated cost are left as
 * they are.  Call it before reading (or after vp_reader_rewind()).
 * Returns 0, or -ENOMEM (the times are then read as they are).
 */
int vp_reader_compensate(struct vp_reader *r, int on);
/*
 * vp_reader_clamped - exits read so far (since opening or the last rewind)
 * whose compensated time had to be moved up to keep the thread's times
 * monotonic: the probe costs subtracted exceeded what was measured there,
 * and the call lasts less than the costs say, 0 at the least.
 */
uint64_t vp_reader_clamped(const struct vp_reader *r);
/* ... and the most one of them was moved up, in the file's unit. */
uint64_t vp_reader_clamped_max(const struct vp_reader *r);

/* Which time the event times measure (vp_reader_set_time). */
enum vp_time_base {
	VP_TIME_WALL = 0,   /* the clock's time: on and off the CPU */
	VP_TIME_CPU = 1,    /* on-CPU time: off-CPU time subtracted */
	VP_TIME_OFFCPU = 2, /* off-CPU time only */
	/* with hdr->blocked: */
	VP_TIME_BLOCKED = 3,   /* off-CPU time asleep (blocked) only */
	VP_TIME_PREEMPTED = 4, /* off-CPU time preempted only */
	VP_TIME_OWN = 5,       /* wall-clock time less the preempted time:
				* on-CPU and blocked, the program's own */
};

/*
 * vp_reader_set_time - present event times in time base @base, so that
 * the difference of a thread's two event times is the wall-clock, on-CPU
 * or off-CPU time between them.  Per thread, from its first event: with
 * VP_TIME_CPU an event's time is its (compensated) time less the thread's
 * off-CPU time since then, with VP_TIME_OFFCPU the thread's first event
 * time plus its off-CPU time since then (not compensated: the probes cost
 * on-CPU time).  Either way a thread's times never decrease, and times of
 * different threads are not comparable: only per-thread differences mean
 * something (vp_reader_time_span() gives the wall-clock span).  Sample
 * times and UNPROBED times stay in the file's clock.  Call it before
 * reading (or after vp_reader_rewind()).
 * Returns 0, -ENODATA when the file has no off-CPU times (hdr->offcpu 0)
 * and @base is not VP_TIME_WALL, or -EINVAL for an unknown @base.
 */
int vp_reader_set_time(struct vp_reader *r, enum vp_time_base base);
/*
 * (VP_TIME_BLOCKED and VP_TIME_PREEMPTED are like VP_TIME_OFFCPU, with
 * the thread's blocked or preempted time; VP_TIME_OWN like VP_TIME_CPU,
 * less the preempted time only.  They give -ENODATA without hdr->blocked.)
 *
 * vp_reader_set_waits - with @on, hand over every WAIT record as a
 * VP_EV_WAIT event among the others, in file order (default off).
 */
void vp_reader_set_waits(struct vp_reader *r, int on);
/*
 * vp_wait_reason_name - the name of a WAIT record's @reason as recorded
 * on @hdr's machine: "pread64", "futex", ..., "syscall 123" for a number
 * without a name here, "no syscall" for 0 (page faults).  Into @buf.
 */
const char *vp_wait_reason_name(const struct vp_header *hdr, uint32_t reason, char *buf,
				size_t len);
enum vp_time_base vp_reader_time(const struct vp_reader *r);
/* Whether @base counts off-CPU time only (or a part of it): no probe
 * cost, which is on-CPU time, is in its durations. */
static inline int vp_time_base_offcpu(enum vp_time_base base)
{
	return base == VP_TIME_OFFCPU || base == VP_TIME_BLOCKED || base == VP_TIME_PREEMPTED;
}
/*
 * vp_reader_time_span - the earliest and latest time of the events read so
 * far (since opening or the last rewind) in the file's clock, compensated
 * when vp_reader_compensate() is on, whatever the time base.  Both 0
 * before any event.
 */
void vp_reader_time_span(const struct vp_reader *r, uint64_t *first, uint64_t *last);

/*
 * vp_probe_class_cost - what a probed call whose first instruction is of
 * class @cls costs in ns: the calibrated figure among @costs[0..@n), else
 * a typical one for a VM (the costlier, single-stepped one when the class
 * is unknown).
 */
double vp_probe_class_cost(uint32_t cls, const struct vp_probe_cost *costs, size_t n);

/*
 * vp_probe_rel_spread - how far, relative to it, a probe's calibrated cost
 * may be off: the largest spread_ns / full_ns among @costs[0..@n); 0 when
 * none says (files before 0.4, the user backend).  A compensated mean is
 * then known within that share of what the probes cost inside it.
 */
double vp_probe_rel_spread(const struct vp_probe_cost *costs, size_t n);

/*
 * vp_probe_cost_of - the calibrated cost of probing function @func of
 * @hdr: in-window and full nanoseconds.  Returns 0, or -ENOENT when the
 * header has no cost for its instruction class.
 */
int vp_probe_cost_of(const struct vp_header *hdr, uint32_t func, uint64_t *in_window,
		     uint64_t *full);
/**
 * vp_header_count_probes - how the probes of @hdr's functions were placed:
 * @emulated gets the number whose probed instruction the kernel emulates,
 * @moved the number probed past their first instruction to get there.
 */
void vp_header_count_probes(const struct vp_header *hdr, size_t *emulated, size_t *moved);
/* Start again from the first EVENTS chunk (for a second pass). */
int vp_reader_rewind(struct vp_reader *r);

void vp_header_release(struct vp_header *hdr);

/**
 * vp_callsite_label - write @cs into @buf as "file:line" (the file's base
 * name when @short_file), else "caller+0x1f", "(tail call)" for the
 * uretprobe trampoline, "0x..." for a bare address, or "" for none (@cs
 * NULL or VP_CS_NONE).  Returns @buf.
 */
const char *vp_callsite_label(const struct vp_callsite *cs, int short_file, char *buf,
			      size_t len);

/* ---- datafile-names.c: the words for the fields' values ---- */

/* Name of a sampling event (enum vp_sample_event): "cpu-clock", ... */
const char *vp_sample_event_name(uint32_t event);
/* Name of a probed instruction's class (enum vp_insn_class): "emulated",
 * "single-stepped" or "unknown". */
const char *vp_insn_class_name(uint32_t insn_class);
/* Display name of function @func of @hdr (its symbol name when it has no
 * other), "?" for an index the header lacks. */
const char *vp_header_func_name(const struct vp_header *hdr, uint32_t func);
/* Name of a time base as --time takes it: "wall", "cpu", "offcpu",
 * "blocked", "preempted", "own" ("?"). */
const char *vp_time_base_name(enum vp_time_base base);
/* The time base named @name as vp_time_base_name() names it, in *@ret:
 * 0, or -EINVAL for no such name. */
int vp_time_base_parse(const char *name, enum vp_time_base *ret);

#endif
