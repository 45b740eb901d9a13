/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * report.h - what `varperf report` and `varperf compare` hand their
 * printers (text, JSON, the Variance Characterization Graph as text or
 * Graphviz, one HTML page, the comparison as text or JSON), and the
 * formatting helpers they share (common.c).  report/ reads core's
 * structures only: it includes nothing from perf-collector/ or cli/.
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
	uint64_t clamped_max; /* ... the most one was moved, in ns */
	int all;				/* --all */
	int wide;				/* --wide: every column */
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
	int time_auto;			/* own time by default (vp_recording) */
	double preempted_share;		/* ... since preemption made this much */
	uint32_t pid;			/* --pid: the process shown, 0: all */
	/* per CCT node: what the probes cost per call inside its window, its
	 * own and its probed descendants' (0: unknown); see vp_cct_probe_costs */
	const double *probe_cost;
	/* per call site: its rank among those through which one context calls
	 * one function from one line, 0 when none (vp_cct_callsite_twins);
	 * NULL: not known */
	const uint32_t *callsite_twins;
	/* --slowest[=CONTEXT]: the slowest calls (of CONTEXT's nodes only,
	 * when given: report_context_parse) */
	int slowest;
	const char *slowest_context;
	/* --folded-value and --typical of --format folded (export-folded.c) */
	enum report_folded_value { FOLDED_TIME, FOLDED_VARIANCE } folded_value;
	int typical;
	/* --format html: what report_html_prepare() gathered */
	const struct report_html *html;
	/* several recordings merged (report_init_runs), NULL for one */
	const struct vp_runs *runs;
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
 * Exports that read the recording's events again (vp_recording_invocations),
 * hence @rec: Chrome's Trace Event Format (export-chrome.c) and folded
 * stacks for flame graphs (export-folded.c).  0, -1 when writing failed
 * (errno set: the caller reports it), or -2 after an error they said.
 */
int report_chrome(const struct report *r, struct vp_recording *rec);
int report_folded(const struct report *r, struct vp_recording *rec);
/*
 * report_pprof - the recording as a gzipped pprof profile (export-pprof.c);
 * -1 with errno ENOSYS when varperf was built without protobuf-c.
 */
int report_pprof(const struct report *r);
/*
 * report_output_size - before an export writes about @bytes (its @what,
 * "chrome trace"): an error naming both sizes (-2) when r->out is a file
 * on a file system with less room, else 0, with a warning naming the size
 * when it is over REPORT_OUTPUT_LARGE, or over REPORT_OUTPUT_LARGE / 16 and
 * REPORT_OUTPUT_RATIO times the data file: a few kilobytes of deep
 * contexts fold into hundreds of megabytes, a large recording into
 * gigabytes of trace.
 */
#define REPORT_OUTPUT_LARGE 1e9
#define REPORT_OUTPUT_RATIO 100
int report_output_size(const struct report *r, const char *what, double bytes);

/* ---- export-slow.c: which calls --slowest selects ---- */

/*
 * report_slow_nodes - per node, 1 when --slowest selects its kept slowest
 * calls: CONTEXT's nodes when r->slowest_context is set, else the
 * significant nodes with more calls than they keep (the K slowest of
 * fewer are no choice).  With @outermost, a node below another selected
 * one is not selected.  Returns the malloc'ed array and their number in
 * *@n (0: none selected).
 */
uint8_t *report_slow_nodes(const struct report *r, int outermost, size_t *n);
/*
 * report_slow_root - the selected node (@sel) whose kept slow call
 * holds the invocation of node @node on @thread over [@start, @start +
 * @duration] (itself or one nested in it), or VP_NO_NODE.
 */
uint32_t report_slow_root(const struct report *r, const uint8_t *sel, uint32_t node,
			  uint32_t thread, uint64_t start, uint64_t duration);

/* ---- report-html.c: one self-contained page (--format html) ---- */

struct report_html;
/*
 * report_html_prepare - what the page needs beyond @r: per Task of the
 * graph its merged histogram and, from a second pass over @rec's events,
 * its calls over time.  Returns 0 with *@ret set (report_html_free() it),
 * or -1 after an error naming the file.
 */
int report_html_prepare(const struct report *r, struct vp_recording *rec,
			struct report_html **ret);
void report_html_free(struct report_html *h);
/* The page, with r->html from report_html_prepare() (NULL: no Tasks). */
int report_html(const struct report *r);

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

/* ---- report-runs.c: several recordings of one program (core/merge.h) ---- */

struct vp_runs;
struct json;
/* @r for the merged recordings @m: report_init() of the first, with the
 * merged tree, totals and analysis, and r->runs set. */
void report_init_runs(struct report *r, const char *input, const struct vp_runs *m);
/* "Runs: N recordings": the files, and the contexts' variance split into
 * within and between runs.  0, or -1 when writing failed. */
int report_runs_text(const struct report *r);
/* JSON: the "runs" member, and a node's "between_runs" (nothing for one
 * recording). */
void report_runs_json(struct json *j, const struct report *r);
void report_runs_json_node(struct json *j, const struct report *r, uint32_t id);

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
/* ... counted as the text report's table shows them: by default its rows,
 * siblings of one function merged (with r->wide, report_sampled_wide()). */
size_t report_sampled_wide_rows(const struct report *r, double *max_half);

/* ---- report-slowest.c: the slowest calls of each node ---- */

/*
 * report_slowest_nodes - per CCT node, 1 when --slowest lists it: a
 * significant node, or with r->slowest_context, a node in that context.  Returns the array (malloc'ed,
 * r->tree->nnodes long) with their number in *@nret, or NULL after
 * printing why the context is invalid.
 */
uint8_t *report_slowest_nodes(const struct report *r, size_t *nret);
/*
 * "Slowest calls": each of those nodes' kept calls in start order, with
 * thread, duration, z-score and where each call's time went.  0, or -1
 * when writing failed (or the context is invalid: check with
 * report_slowest_nodes() first).
 */
int report_slowest_text(const struct report *r);

/* report-offcpu.c: preempted and blocked time (format 5 files) */
/* What the durations measure, for the time bases of split off-CPU time
 * (blocked, preempted, own), else NULL. */
const char *report_offcpu_time_base(const struct report *r);
/* The note on own time as the default, at the top; nothing else. */
void report_offcpu_note(const struct report *r);
/* The section: nodes off the CPU, preempted versus blocked, their waits. */
void report_offcpu_text(const struct report *r);
/* Part @var of a slow call of @n (struct vp_slow_part): its child's node
 * id, VP_NO_NODE for the node's own code (0), VP_OTHER_NODE for the
 * callees past the tracked ones. */
uint32_t report_slow_part_node(const struct vp_cct_node *n, uint32_t var);
/* ... and its label: "self", the child's report_node_label(), or
 * "(N other callees)". */
const char *report_slow_part_label(const struct report *r, const struct vp_cct_node *n,
				   uint32_t var, char *buf, size_t len);
/* When slow call @c started, from the recording's first event. */
int64_t report_slow_start(const struct report *r, const struct vp_slow_call *c);

/* ---- context.c: a calling context given on the command line ---- */

/*
 * One element: a function named @name ("f", a C++ "ns::f" up to its
 * parameters), with a call site whose line is @line (0: any) or whose
 * label is @site ("file.c:12", NULL: any).
 */
struct report_context_elem {
	const char *name;
	const char *site;
	uint32_t line;
};

/*
 * A calling context, outermost element first; it names the nodes whose
 * path from the top ends with it (begins there too when @anchored).
 */
struct report_context {
	struct report_context_elem *e;
	size_t n;
	int anchored;
	char *buf; /* the elements' strings */
};

/*
 * report_context_parse - @text as "main/compress/BZ2_blockSort" (or with
 * ';' between the elements, as in folded stacks), an element FUNC,
 * FUNC:LINE or FUNC@FILE:LINE; a leading separator anchors it at the top.
 * 0 with *@ret to release, or -1 after printing what is wrong.
 */
int report_context_parse(const char *text, struct report_context *ret);
void report_context_release(struct report_context *c);
/* Whether CCT node @id is in context @c. */
int report_context_match(const struct report *r, const struct report_context *c, uint32_t id);

/* ---- common.c: what every renderer says the same way ---- */

/* The width of the default text report (--wide: no limit); cli/ folds what
 * is wider still, at the terminal's width. */
#define REPORT_TEXT_WIDTH 100

/* What VIM is, in words, where it first appears in the text report. */
void report_vim_words(const struct report *r);

/* Whether the user's locale (LC_ALL, LC_CTYPE, LANG) is UTF-8, asked once. */
int report_utf8(void);
/* The text reports' symbols: UTF-8, or ASCII where the locale is not. */
enum report_sym {
	SYM_ARROW,    /* " → " between the elements of a call chain */
	SYM_THROUGH,  /* " ⇒ " before a pass-through callee */
	SYM_BACK,     /* "↰" a back-edge of the graph */
	SYM_TIMES,    /* " ×" before a count */
	SYM_APPROX,   /* "≈" */
	SYM_DASH,     /* "—" */
	SYM_ELLIPSIS, /* "…" where text was cut */
	SYM_SQUARED,  /* "²" */
	SYM_PLUSMINUS, /* "±" */
};
const char *report_sym(enum report_sym s);
/*
 * report_char_at - the bytes of the character @s starts with (of @len),
 * and its columns on a terminal in *@cols: 2 for East Asian wide ones, 0
 * for combining marks; a byte that starts no valid UTF-8 character is one
 * character of one column.
 */
size_t report_char_at(const char *s, size_t len, int *cols);
/*
 * report_put_chain - call chain @chain, elements between @sep, in @cols
 * columns (0: whole): its outermost element, an ellipsis and the innermost
 * ones that fit (at least one).
 */
void report_put_chain(FILE *f, const char *chain, const char *sep, size_t cols);
/* Display width of @len bytes of UTF-8 text, in terminal columns. */
size_t report_text_width(const char *s, size_t len);
/*
 * report_fit - @s in at most @cols columns: itself when it fits, else its
 * start and end with an ellipsis between, in @buf (@len bytes).
 */
const char *report_fit(const char *s, size_t cols, char *buf, size_t len);

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
/* How far node @id's compensated mean may be off: the probes' cost inside
 * it times the calibration's relative spread (vp_probe_rel_spread); 0 when
 * not known or not compensated. */
double report_mean_uncertainty(const struct report *r, uint32_t id);
const char *report_time(const struct report *r, double v, char *buf, size_t len);
/* The same without the space, "1.23ms", for columns one word wide. */
const char *report_time_compact(const struct report *r, double v, char *buf, size_t len);
/* Function name ("[kernel]", ...), inlined or not, and "file:line" of the
 * call site ("" if none) of sampled node @id. */
const char *report_snode_name(const struct report *r, uint32_t id);
int report_snode_inlined(const struct report *r, uint32_t id);
const char *report_snode_site(const struct report *r, uint32_t id, char *buf, size_t len);
/* Why a recording has no pattern when it timed no call at all (an auto
 * recording whose phase 2 timed nothing: samples only), else NULL - not
 * "no significant node has CoV >= ...", which reads as no variance. */
const char *report_no_calls(const struct report *r);
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
