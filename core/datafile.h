/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * datafile.h - the varperf.data format: one writer (used by the collector)
 * and one reader (used by report, the GDB plugin and the tests), so the
 * encoding lives in exactly one place.  man/varperf-data.5 documents it.
 *
 * Layout: a 16-byte file header, then self-delimiting chunks:
 *
 *   file header:  "VPDATA\0\0"  u32le version  u32le flags(0)
 *   chunk:        "VPCK"  u8 type  u8[3] zero  u32le payload_len
 *                 u32le crc32(payload)  payload[payload_len]
 *
 * Chunk types: META (must come first, exactly once), EVENTS (any number),
 * END (last; missing when the recorder died).  A reader stops at the last
 * complete chunk of a truncated file and says so; a chunk with a bad magic,
 * CRC or record is an error naming the file offset.
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
enum { VP_DATA_VERSION = 1 };
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
	VP_INSN_EMULATED = 1, /* push, nop, direct jmp/call/jcc: emulated */
	VP_INSN_STEPPED = 2,  /* anything else: single-stepped out of line */
};

/* Function flags. */
enum {
	VP_FUNC_CLONE = 1 << 0,    /* .isra/.constprop/.part/... clone */
	VP_FUNC_FROM_LIB = 1 << 1, /* from a --lib module, not the executable */
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
	VP_META_PROBE_COST = 8, /* u class, u in-window ns, u full ns */
	VP_META_HOST = 9,	/* string: kernel release and machine */
	VP_META_NCPU = 10,	/* u: CPUs recorded */
};

/* Control records inside EVENTS chunks: tag = (type << 2) | VP_REC_CONTROL. */
enum vp_rec_kind {
	VP_REC_ENTRY = 0,   /* tag = func << 2 */
	VP_REC_EXIT = 1,    /* tag = func << 2 | 1 */
	VP_REC_CONTROL = 2, /* tag = type << 2 | 2 */
};

enum vp_control_type {
	VP_CTL_THREAD = 1,   /* u idx, u tid, u pid */
	VP_CTL_CALLSITE = 2, /* u id, u flags, u module+1 (0 = none), u offset,
			      * string caller ("sym+0x1f"), string file, u line */
	VP_CTL_LOST = 3,     /* u cpu, u count of lost records */
};

/*
 * Record encodings after the tag (EVENTS payload starts with u64le base time):
 *   entry: u thread, s dtime, s dsp, u callsite
 *   exit:  u thread, s dtime, s dsp
 * dtime is relative to the previous event record of the chunk (the first to
 * the chunk's base time); dsp to the previous stack pointer of the same
 * thread in the chunk (0 at chunk start), so every chunk decodes alone.
 * The entry's sp points at the return address; a matching exit has sp + 8.
 */

/* END payload: u wait-status, u flags, u events, u lost records,
 * u foreign records (other processes, not followed), u end time. */
enum {
	VP_END_EXITED = 1 << 0,      /* wait-status is valid */
	VP_END_INTERRUPTED = 1 << 1, /* stopped by SIGINT/SIGTERM to varperf */
	VP_END_WRITE_ERROR = 1 << 2, /* data were dropped (e.g. disk full) */
};

struct vp_module {
	char *path;
	unsigned char *build_id;
	size_t build_id_len;
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
};

enum vp_event_kind { VP_EV_ENTRY = 0, VP_EV_EXIT = 1 };

/* One decoded entry or exit event. */
struct vp_event {
	uint64_t time;
	uint64_t sp;
	uint32_t func;
	uint32_t callsite; /* entries only */
	uint32_t thread;   /* thread index (see vp_reader_thread) */
	uint32_t kind;	   /* enum vp_event_kind */
};

struct vp_thread_info {
	uint32_t tid;
	uint32_t pid;
};

/* ---- writer ---- */

struct vp_writer;

/**
 * vp_writer_new - create @path and write the file header and META chunk.
 * @hdr is copied as needed; the caller keeps ownership.
 * Returns NULL with errno set on failure.
 */
struct vp_writer *vp_writer_new(const char *path, const struct vp_header *hdr);
/* Records are buffered; each returns 0 or -errno (first write error sticks). */
int vp_writer_thread(struct vp_writer *w, uint32_t idx, uint32_t tid, uint32_t pid);
int vp_writer_callsite(struct vp_writer *w, uint32_t id, const struct vp_callsite *cs);
int vp_writer_lost(struct vp_writer *w, uint32_t cpu, uint64_t count);
int vp_writer_event(struct vp_writer *w, const struct vp_event *ev);
/* Write out the current EVENTS chunk (also done automatically at ~64 KiB). */
int vp_writer_flush(struct vp_writer *w);
/**
 * vp_writer_finish - flush, write the END chunk, fsync and close.
 * @tr->events is filled in by the writer.  Frees @w in all cases.
 */
int vp_writer_finish(struct vp_writer *w, struct vp_trailer *tr);
/* Close without an END chunk (what a killed recorder leaves); buffered
 * records not yet flushed are dropped.  NULL is a no-op. */
void vp_writer_free(struct vp_writer *w);
/* Bytes written so far (for statistics). */
uint64_t vp_writer_bytes(const struct vp_writer *w);

/* ---- reader ---- */

struct vp_reader;

/**
 * vp_reader_open - open @path and read its header (META chunk).
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

#endif
