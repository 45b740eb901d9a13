/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * report.h - what `varperf report` and `varperf compare` hand their
 * printers (text, JSON, the Variance Characterization Graph as text or
 * Graphviz, the comparison as text or JSON), and the formatting helpers
 * they share (common.c).  report/ reads core's structures only: it
 * includes nothing from perf-collector/ or cli/.
 */
#ifndef VARPERF_REPORT_H
#define VARPERF_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/cct.h"
#include "core/compare.h"
#include "core/datafile.h"
#include "core/patterns.h"
#include "core/sampled.h"
#include "core/sources.h"
#include "core/vcg.h"

/* Everything the printers read; all of it is owned by cmd_report(). */
struct report {
	FILE *out;
	const char *input;			/* data file name as given */
	struct vp_reader *reader;		/* call sites, threads, lost counts */
	const struct vp_header *hdr;		/* META chunk */
	const struct vp_trailer *trailer;	/* END chunk (present == 0: none) */
	const struct vp_cct *tree;
	const struct vp_build_totals *totals;
	const struct vp_analysis *an;
	uint64_t lost;				/* lost records (see report_lost) */
	uint64_t clamped; /* compensated exits moved to keep time (vp_reader_clamped) */
	int all;				/* --all */
	const struct vp_sources *sources;	/* Step 2: sources of variance */
	const struct vp_vcg *vcg;		/* Steps 3-5: the graph */
	const uint8_t *labels;			/* enum vp_vcg_type per CCT node */
	int vcg_only;				/* --vcg: the graph alone */
	int contexts;				/* --contexts: call-context sets */
	/* sampled stacks (version 2 files); NULL when the file has none */
	const struct vp_sampled *sampled;
	const uint32_t *probed_of;	/* per sampled node: its probed CCT node,
					 * VP_NO_NODE if none (NULL: no probes) */
	double confidence, z;		/* of the shares' intervals */
	double precision;		/* --precision: wider intervals are flagged */
	int compensated;		/* probe costs subtracted (not --raw) */
	enum vp_time_base time;		/* --time: what the durations measure */
	uint32_t pid;			/* --pid: the process shown, 0: all */
	/* per CCT node: what the probes cost per call inside its window, its
	 * own and its probed descendants' (0: unknown); see vp_cct_probe_costs */
	const double *probe_cost;
	/* per call site: its rank among those through which one context calls
	 * one function from one line, 0 when none (vp_cct_callsite_twins);
	 * NULL: not known */
	const uint32_t *callsite_twins;
};

struct vp_recording;

/*
 * report_init - @r for the recording @rec read from @input: its file,
 * trees, analysis and what the reading counted and chose (compensation,
 * time base, process); the options of a renderer stay 0 (@r->out too).
 */
void report_init(struct report *r, const char *input, const struct vp_recording *rec);

/* All return 0, or -1 when writing failed (the caller reports it). */
int report_text(const struct report *r);
int report_json(const struct report *r);
/* Graphviz: the whole graph as one digraph (report-vcg.c). */
int report_vcg_dot(const struct report *r);

/*
 * The processes of the recording, from its threads and PROCESS records,
 * the target first, then by pid: 0 (a single process), or their number
 * with *@ret malloc'ed.
 */
struct report_process {
	uint32_t pid, ppid; /* ppid 0: the target */
	uint32_t threads;
	const char *exec;   /* the program it exec'd (not followed since), or NULL */
};
size_t report_processes(const struct report *r, struct report_process **ret);

/* ---- report-vcg.c: the graph's text sections ---- */

/* "Variance Characterization Graph": every pattern as a tree. */
void report_vcg_text(const struct report *r);
/* "Underlying sources of variance": Step 2, per originator. */
void report_sources_text(const struct report *r);
/* Call site of VCG node @id: its own when all its contexts share it. */
const char *report_vcg_callsite(const struct report *r, uint32_t id, char *buf, size_t len);

/* ---- report-sampled.c: the sampled calling-context tree ---- */

/* "Sampled calling contexts": shares with intervals, exact where probed. */
void report_sampled_text(const struct report *r);
/* Per sampled node, the probed CCT node it is (malloc'ed), or NULL. */
uint32_t *report_match_probed(const struct report *r);
/* Sample-derived durations of node @id; 1 when they span enough samples
 * to be shown (never exact: +/-1 period per invocation). */
int report_sdur(const struct report *r, uint32_t id, struct vp_sdur *ret);
/* Probed node @id's mean is under 10 times the probe cost per call inside
 * it (its own and its probed descendants'). */
int report_node_unreliable(const struct report *r, uint32_t id);
/* How many shown shares have intervals wider than r->precision. */
size_t report_sampled_wide(const struct report *r, double *max_half);

/* ---- common.c: what every renderer says the same way ---- */

/* Display name of function @func ("?" for an index the header lacks). */
const char *report_func_name(const struct report *r, uint32_t func);
/*
 * Call site @id as "file:line" (only the last path component of the file
 * when @short_file), "caller+0xoff" without line information, "(tail call)"
 * for the kernel's return trampoline, "0x<address>" as a last resort, or ""
 * when the invocation had no call site (top of a thread).  A call site that
 * shares its line and callee with another (r->callsite_twins) gets its
 * return address too, "file:line (caller+0xoff)", so that the two can be
 * told apart.
 */
const char *report_callsite_str(const struct report *r, uint32_t id, int short_file, char *buf,
				size_t len);
/* Node @id as "function@call-site" (see above), or "function" without one. */
const char *report_node_label(const struct report *r, uint32_t id, char *buf, size_t len);
/* Name of a clockid_t, or NULL if unknown. */
const char *report_clock_name(uint32_t clock);
/* Name of the unit, "ns" or "cycles". */
const char *report_unit_name(uint32_t unit);
/* A time in the file's unit: "1.23 ms" for nanoseconds, "4.5e+03 cyc" else. */
const char *report_time(const struct report *r, double v, char *buf, size_t len);
/* Function name ("[kernel]", ...), inlined or not, and "file:line" of the
 * call site ("" if none) of sampled node @id. */
const char *report_snode_name(const struct report *r, uint32_t id);
int report_snode_inlined(const struct report *r, uint32_t id);
const char *report_snode_site(const struct report *r, uint32_t id, char *buf, size_t len);
/* Write @s with control characters as '?' (names come from the binary). */
void report_put(FILE *f, const char *s);
/*
 * report_offcpu_share - the off-CPU share of the variance of the outermost
 * high-variance nodes (those below no other), weighted by N Var(W): sum
 * of N (Var(O) + Cov(C, O)) over sum of N Var(W) (see vp_cct_offcpu_split).
 * Returns 1 with @ret set, or 0 when there is none (no off-CPU
 * statistics, no such node with variance).
 */
int report_offcpu_share(const struct report *r, double *ret);

/* ---- compare-text.c, compare-json.c: `varperf compare` ---- */

/* Everything the comparison's printers read; owned by cmd_compare(). */
struct report_compare {
	FILE *out;
	const char *path[2];		/* the profile's and the regression's, as given */
	const struct report *side[2];	/* each recording: hdr, reader, tree, an and
					 * callsite_twins are set */
	const struct vp_compare *c;
	const struct vp_analysis_params *params; /* as given (--cutoff, --beta, ...) */
	enum vp_time_base time;		/* --time */
	int all;			/* --all */
};

/* Both return 0, or -1 when writing failed (the caller reports it). */
int report_compare_text(const struct report_compare *rc);
int report_compare_json(const struct report_compare *rc);
/* ... and the words both say (common.c): */
/* A pattern's place in the Pattern Sets: "kept", "left", "entered", "other". */
const char *report_compare_status(const struct vp_compare_pattern *cp);
/* A calling context's change (enum vp_ctx_change): "same", "new", ... */
const char *report_compare_change(uint32_t change);
/* The program recording @r ran (its first module's path), or "?". */
const char *report_program_path(const struct report *r);
/* Statistics of CCT node @id of @r, NULL for VP_NO_NODE. */
const struct vp_stats *report_node_stats(const struct report *r, uint32_t id);

/* ---- `varperf explain` and `varperf bound` (regress.c) ---- */

struct vp_regress_model;
struct vp_task_rows;

struct report_regress {
	FILE *out;
	const struct report *r;		  /* names, call sites, time unit */
	const char *task;		  /* the task's node label */
	const struct vp_task_rows *rows;  /* its invocations and predictors */
	const struct vp_regress_model *m; /* the fitted model */
	int bound;			  /* the MET table (bound), else explain */
};

/* Both return 0, or -1 when writing failed (the caller reports it). */
int report_regress_text(const struct report_regress *rr);
int report_regress_json(const struct report_regress *rr);

#endif
