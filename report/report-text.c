/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * report-text.c - the human-readable `varperf report`: the Variance
 * Characterization Graph first (report-vcg.c), then the Pattern Set, the
 * high-variance part of the calling-context tree, and totals.
 */
#include <config.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "core/cct.h"
#include "core/covar.h"
#include "core/datafile.h"
#include "core/histogram.h"
#include "core/patterns.h"
#include "core/recording.h"
#include "core/stats.h"
#include "report.h"
#include "util/escape.h"
#include "util/shell.h"
#include "util/util.h"

/* Deeper nodes keep the indentation of this depth and show their depth. */
enum { TEXT_MAX_INDENT = 16 };
/* Contributors listed per high-variance node; the rest are summed up. */
enum { TEXT_TOP_CONTRIBUTORS = 5 };

static const char *text_time(const struct report *r, double v, char *buf, size_t len)
{
	return report_time(r, v, buf, len);
}

static void text_put(FILE *f, const char *s)
{
	report_put(f, s);
}

/* " [call site]" of node or chain element, or nothing without one. */
static void text_put_callsite(const struct report *r, uint32_t id)
{
	char cs[512];

	report_callsite_str(r, id, 1, cs, sizeof(cs));
	if (!*cs)
		return;
	fputs(" [", r->out);
	text_put(r->out, cs);
	fputc(']', r->out);
}

static const char *text_unit_clock(const struct report *r, char *buf, size_t len)
{
	const char *clock = report_clock_name(r->hdr->clock);

	if (clock)
		snprintf(buf, len, "%s, %s", report_unit_name(r->hdr->unit), clock);
	else
		snprintf(buf, len, "%s, clock %" PRIu32, report_unit_name(r->hdr->unit),
			 r->hdr->clock);
	return buf;
}

/* Print @s quoted for a POSIX shell when it needs quoting. */
static void text_shell_word(FILE *f, const char *s)
{
	if (*s && !s[strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			       "0123456789@%+=:,./_-")]) {
		fputs(s, f);
		return;
	}
	fputc('\'', f);
	for (size_t n; *s; s += n) {
		n = strcspn(s, "'");
		vp_term_putn(f, s, n);
		if (s[n] == '\'') {
			fputs("'\\''", f);
			n++;
		}
	}
	fputc('\'', f);
}

static const char *text_mode_name(uint32_t mode)
{
	switch (mode) {
	case VP_MODE_PROBE:
		return "probe (entries and exits of the probed functions)";
	case VP_MODE_SAMPLE:
		return "sample (call stacks sampled at a fixed period)";
	case VP_MODE_AUTO:
		return "auto (phase 1 sampled, phase 2 probed what was significant)";
	case VP_MODE_COMBINED:
		return "combined (samples and probes in one run)";
	default:
		return "unknown";
	}
}

static const char *text_backend_name(uint32_t backend)
{
	switch (backend) {
	case VP_BACKEND_PERF:
		return "perf_event uprobes";
	case VP_BACKEND_BPF:
		return "BPF uprobe_multi";
	case VP_BACKEND_USER:
		return "user-space patches";
	default:
		return NULL;
	}
}

static const char *text_time_base(const struct report *r)
{
	if (report_offcpu_time_base(r))
		return report_offcpu_time_base(r);
	switch (r->time) {
	case VP_TIME_CPU:
		return "on-CPU (--time=cpu): the time threads were off the CPU is left out";
	case VP_TIME_OFFCPU:
		return "off-CPU (--time=offcpu): only the time threads were off the CPU";
	default:
		return r->tree->offcpu ? "wall clock, with its off-CPU part (see --time)"
				       : "wall clock";
	}
}

/* The processes of a recording that followed forks, one line each. */
static void text_processes(FILE *f, const struct report *r)
{
	struct report_process *v;
	size_t n = report_processes(r, &v);

	if (!n)
		return;
	fprintf(f, "  processes:         %zu (", n);
	if (r->pid)
		fprintf(f, "shown: %" PRIu32 " only)\n", r->pid);
	else
		fprintf(f, "report --pid shows one)\n");
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "    %-8" PRIu32 " ", v[i].pid);
		if (v[i].ppid)
			fprintf(f, "forked by %" PRIu32, v[i].ppid);
		else
			fprintf(f, "the program");
		fprintf(f, ", %" PRIu32 " thread%s", v[i].threads, v[i].threads == 1 ? "" : "s");
		if (v[i].exec) {
			fprintf(f, ", then exec'd '");
			text_put(f, v[i].exec);
			fprintf(f, "' (not followed)");
		}
		fputc('\n', f);
	}
	free(v);
}

static void text_header(const struct report *r)
{
	const struct vp_header *h = r->hdr;
	FILE *f = r->out;
	char buf[64], tbuf[64];
	struct tm tm;
	time_t t;
	int attached, one_run;
	size_t emulated, moved;

	fprintf(f, "varperf report of '");
	text_put(f, r->input);
	fprintf(f, "'\n");
	fprintf(f, "  command:          ");
	for (int i = 0; i < h->argc; i++) {
		fputc(' ', f);
		text_shell_word(f, h->argv[i]);
	}
	if (h->argc <= 0)
		fprintf(f, " (not recorded)");
	fputc('\n', f);
	fprintf(f, "  pid:               %" PRIu32 "\n", h->pid);
	text_processes(f, r);
	t = (time_t)h->start_time;
	if (h->start_time && localtime_r(&t, &tm) &&
	    strftime(tbuf, sizeof(tbuf), "%Y-%m-%d %H:%M:%S %z", &tm))
		fprintf(f, "  recorded:          %s\n", tbuf);
	if (r->trailer->present && (r->trailer->flags & VP_END_INTERRUPTED))
		fprintf(f, "  interrupted:       by a signal to varperf; the recording is "
			   "complete up to there\n");
	fprintf(f, "  host:              ");
	text_put(f, h->host && *h->host ? h->host : "(unknown)");
	if (h->ncpu)
		fprintf(f, ", %" PRIu32 " CPU%s", h->ncpu, h->ncpu == 1 ? "" : "s");
	fputc('\n', f);
	fprintf(f, "  unit:              %s\n", text_unit_clock(r, buf, sizeof(buf)));
	if (h->mode)
		fprintf(f, "  mode:              %s\n", text_mode_name(h->mode));
	if (h->has_input_size)
		fprintf(f, "  input size:        %" PRIu64 "\n", h->input_size);
	/* auto mode attached to a process samples it, then probes it */
	attached = r->trailer->present &&
		   (r->trailer->flags & (VP_END_DETACHED | VP_END_GONE));
	/* ... and so does one run of a program (phase 1 of the same pid) */
	one_run = !attached && h->mode == VP_MODE_AUTO &&
		  vp_reader_phase1_pid(r->reader) == h->pid;
	if (r->sampled)
		fprintf(f, "  sampled:           %" PRIu64 " samples of %s every %s%s\n",
			r->sampled->samples, vp_sample_event_name(h->sampling.event),
			h->sampling.period && !r->sampled->period_varies
				? text_time(r, (double)h->sampling.period, buf, sizeof(buf))
				: "(varying period)",
			h->mode != VP_MODE_AUTO ? ""
			: attached	       ? " (phase 1: the process's first seconds)"
			: one_run	       ? " (phase 1: the run's start)"
					       : " (phase 1: a run of its own)");
	if (h->mode == VP_MODE_SAMPLE || (!h->nfuncs && r->sampled))
		return;
	vp_header_count_probes(h, &emulated, &moved);
	fprintf(f, "  probed functions:  %zu%s; %zu on emulated instructions", h->nfuncs,
		h->mode != VP_MODE_AUTO ? ""
		: attached		 ? " (phase 2: the rest of the recording)"
		: one_run		 ? " (phase 2: the rest of the same run)"
					 : " (phase 2: a run of its own)",
		emulated);
	if (moved)
		fprintf(f, ", %zu of them past the first instruction", moved);
	fputc('\n', f);
	if (text_backend_name(h->backend))
		fprintf(f, "  probes:            %s%s\n", text_backend_name(h->backend),
			h->offcpu ? ", with the threads' off-CPU times" : "");
	fprintf(f, "  time:              %s\n", text_time_base(r));
	if (!h->ncosts) {
		fprintf(f, "  probe cost: not calibrated\n");
		return;
	}
	fprintf(f, "  probe cost per call: ");
	for (size_t i = 0; i < h->ncosts; i++)
		fprintf(f, "%s%s (%s)", i ? ", " : "",
			text_time(r, (double)h->costs[i].full_ns, buf, sizeof(buf)),
			vp_insn_class_name(h->costs[i].insn_class));
	/* what became of it on a line of its own: the costs fill one */
	if (r->compensated)
		fprintf(f, ";\n%20s subtracted from the durations (--raw: as measured)\n", "");
	else if (r->time == VP_TIME_OFFCPU)
		fprintf(f, ";\n%20s none of it is off-CPU time\n", "");
	else
		fprintf(f, ";\n%20s durations include it %s see varperf-report(1)\n", "",
			report_sym(SYM_DASH));
}

/*
 * "main [x.c:3] → f [x.c:9]": the pattern's chain, outermost first.  A run
 * of three or more equal elements (recursion) is written once with its
 * count, "rec [r.c:7] ×98": a deep recursion's chains are thousands long.
 */
static void text_elems(const struct report *r, const struct vp_chain_elem *e, size_t n,
		       const char *sep)
{
	for (size_t i = 0, k; i < n; i = k) {
		for (k = i + 1; k < n && e[k].func == e[i].func && e[k].callsite == e[i].callsite;
		     k++)
			;
		for (size_t j = i; j < k; j++) {
			if (j)
				fputs(sep, r->out);
			text_put(r->out, report_func_name(r, e[i].func));
			text_put_callsite(r, e[i].callsite);
			if (k - i >= 3) {
				fprintf(r->out, "%s%zu", report_sym(SYM_TIMES), k - i);
				break;
			}
		}
	}
}

static void text_chain_whole(const struct report *r, const struct vp_pattern *p)
{
	text_elems(r, p->chain, p->len, report_sym(SYM_ARROW));
	/* pass-through callees folded into the pattern */
	if (p->nthrough) {
		fputs(report_sym(SYM_THROUGH), r->out);
		text_elems(r, p->through, p->nthrough, report_sym(SYM_THROUGH));
	}
}

/*
 * The chain in what is left of REPORT_TEXT_WIDTH after @used columns (not
 * --wide): its outermost element, an ellipsis, its innermost elements.
 */
static void text_chain(const struct report *r, const struct vp_pattern *p, size_t used)
{
	struct report tmp = *r;
	char *buf = NULL;
	size_t len = 0;

	if (r->wide || p->nthrough) {
		text_chain_whole(r, p);
		return;
	}
	tmp.out = open_memstream(&buf, &len);
	if (!tmp.out)
		die("out of memory");
	text_chain_whole(&tmp, p);
	if (fclose(tmp.out))
		die("out of memory");
	report_put_chain(r->out, buf, report_sym(SYM_ARROW),
			 used < REPORT_TEXT_WIDTH - 20 ? REPORT_TEXT_WIDTH - used : 20);
	free(buf);
}

/* The node lines' columns, in order. */
enum text_col {
	COL_N, COL_MEAN, COL_SIGMA, COL_COV, COL_MIN, COL_P50, COL_P90, COL_P99, COL_P99_9,
	COL_MAX, COL_OFF_MEAN, COL_OFF_VAR, COL_TOTAL, COL_SHARE, TEXT_NCOLS
};

static const struct text_column {
	const char *name;
	int narrow, wide; /* widths by default and with --wide */
	double q;	  /* the quantile of a percentile column */
} text_columns[TEXT_NCOLS] = {
	[COL_N] = { "N", 8, 9, 0 },
	[COL_MEAN] = { "mean", 6, 9, 0 },
	[COL_SIGMA] = { "sigma", 6, 9, 0 },
	[COL_COV] = { "CoV", 6, 6, 0 },
	[COL_MIN] = { "min", 6, 9, 0 },
	[COL_P50] = { "p50", 6, 9, 0.5 },
	[COL_P90] = { "p90", 6, 9, 0.9 },
	[COL_P99] = { "p99", 6, 9, 0.99 },
	[COL_P99_9] = { "p99.9", 6, 9, 0.999 },
	[COL_MAX] = { "max", 6, 9, 0 },
	[COL_OFF_MEAN] = { "off-mean", 8, 9, 0 },
	[COL_OFF_VAR] = { "off-var", 7, 9, 0 },
	[COL_TOTAL] = { "total", 6, 9, 0 },
	[COL_SHARE] = { "share", 6, 7, 0 },
};

/*
 * Under a pattern's row, the quantiles of the durations of all its nodes
 * (their histograms merged: the same buckets, so exactly), and with --wide
 * the min; none when the pattern has no returned call.
 */
/*
 * Whether @v of column @c is a duration compensation clamped to 0 (the
 * probes' cost estimate was over what was measured): too short to tell,
 * shown as "~0", not "0 ns".  Durations only: a sigma of 0 is exact.
 */
static int text_clamped_zero(const struct report *r, enum text_col c, double v)
{
	return v == 0 && r->compensated && r->clamped &&
	       (c == COL_MIN || c == COL_MAX || c == COL_MEAN ||
		(c >= COL_P50 && c <= COL_P99_9));
}

/* Duration @v of column @c's kind: "~0" where compensation clamped it. */
static const char *text_duration(const struct report *r, enum text_col c, double v, char *buf,
				 size_t len)
{
	if (text_clamped_zero(r, c, v)) {
		snprintf(buf, len, "~0");
		return buf;
	}
	return text_time(r, v, buf, len);
}

static void text_pattern_quantiles(const struct report *r, const struct vp_pattern *p)
{
	struct vp_hist h;
	char buf[32];

	vp_hist_init(&h);
	for (size_t i = 0; i < p->nnodes; i++)
		if (p->nodes[i] < r->tree->nnodes &&
		    vp_hist_merge(&h, &r->tree->nodes[p->nodes[i]].hist) < 0)
			goto out;
	if (!h.n)
		goto out;
	fprintf(r->out, "%14s", "");
	if (r->wide)
		fprintf(r->out, "min %s, ", text_duration(r, COL_MIN, (double)h.min, buf,
							  sizeof(buf)));
	for (int c = COL_P50; c <= COL_P99_9; c++)
		fprintf(r->out, "%s %s, ", text_columns[c].name,
			text_duration(r, (enum text_col)c,
				      (double)vp_hist_quantile(&h, text_columns[c].q), buf,
				      sizeof(buf)));
	fprintf(r->out, "max %s\n", text_duration(r, COL_MAX, (double)h.max, buf, sizeof(buf)));
out:
	vp_hist_release(&h);
}

static void text_pattern_row(const struct report *r, size_t rank, const struct vp_pattern *p)
{
	const struct vp_analysis *an = r->an;
	char mean[32], sigma[32], vim[32];
	double share = an->max_vim > 0 ? 100.0 * p->vim / an->max_vim : 0.0;

	if (!rank) /* unranked */
		fprintf(r->out, "     - %5s  %9" PRIu64 " %9s %9s %6.3f %9s  ", "-", p->stats.n,
			text_time(r, p->stats.mean, mean, sizeof(mean)),
			text_time(r, vp_stats_stddev(&p->stats), sigma, sizeof(sigma)),
			vp_stats_cov(&p->stats), text_time(r, p->vim, vim, sizeof(vim)));
	else
	fprintf(r->out, "  %4zu %5.1f%% %9" PRIu64 " %9s %9s %6.3f %9s  ", rank, share,
		p->stats.n, text_time(r, p->stats.mean, mean, sizeof(mean)),
		text_time(r, vp_stats_stddev(&p->stats), sigma, sizeof(sigma)),
		vp_stats_cov(&p->stats), text_time(r, p->vim, vim, sizeof(vim)));
	text_chain(r, p, 62);
	fputc('\n', r->out);
	text_pattern_quantiles(r, p);
}

/*
 * Every pattern unreliable: the command that times the first ones'
 * functions alone (no probed callee inside them) and with the cheapest
 * probes (the user backend, where it works; BPF where not).
 */
static void text_make_reliable(const struct report *r)
{
	const struct vp_analysis *an = r->an;
	const struct vp_header *h = r->hdr;
	char *line = xstrdup("varperf record --mode=probe --backend=user");
	size_t said = 0;

	for (size_t i = 0; i < an->npatterns && said < 3; i++) {
		const struct vp_pattern *p = &an->patterns[i];
		uint32_t fn = p->chain[p->len - 1].func;
		int dup = 0;

		for (size_t k = 0; k < i; k++)
			dup |= an->patterns[k].chain[an->patterns[k].len - 1].func == fn;
		if (dup || fn >= h->nfuncs)
			continue;
		line = vp_shell_append(line, "-f");
		line = vp_shell_append(line, h->funcs[fn].name);
		said++;
	}
	line = vp_shell_append(line, "--");
	for (int i = 0; i < h->argc; i++)
		line = vp_shell_append(line, h->argv[i]);
	if (!h->argc)
		line = vp_shell_append(line, "PROGRAM");
	fprintf(r->out, "  (none is reliable: time the first without probed callees inside, "
			"with the cheapest probes:\n    ");
	vp_term_put(r->out, line);
	fprintf(r->out, ")\n");
	free(line);
}

static void text_patterns(const struct report *r)
{
	const struct vp_analysis *an = r->an;
	size_t nset = 0;
	FILE *f = r->out;

	fprintf(f, "Pattern Set (VIM >= %g%% of max; k = %.1f):\n", 100.0 * an->params.beta,
		an->k);
	size_t nrel = an->npatterns - an->nunreliable;

	for (size_t i = 0; i < an->npatterns; i++)
		nset += an->patterns[i].in_pattern_set != 0;
	if (!an->npatterns && report_no_calls(r)) {
		fprintf(f, "  (none: %s)\n", report_no_calls(r));
		return;
	}
	if (!an->npatterns) {
		fprintf(f, "  (none: no significant node has CoV >= %g)\n", an->cov_threshold);
		return;
	}
	if (!r->vcg)
		report_vim_words(r);
	fprintf(f, "  rank share         N      mean     sigma    CoV       VIM  call chain\n");
	for (size_t i = 0; i < an->npatterns; i++)
		if (an->patterns[i].in_pattern_set)
			text_pattern_row(r, i + 1, &an->patterns[i]);
	if (!nrel)
		fprintf(f, "  (none: every pattern is unreliable)\n");
	if (an->nfolded)
		fprintf(f, "  %.*s: pass-through callees (as many calls as their caller, "
			   "%g%% to %g%% of its variance): %zu pattern%s folded\n",
			(int)strlen(report_sym(SYM_THROUGH)) - 2, report_sym(SYM_THROUGH) + 1,
			100 * VP_PASS_THROUGH_SHARE, 100 * (2 - VP_PASS_THROUGH_SHARE), an->nfolded,
			an->nfolded == 1 ? "" : "s");
	if (nset < nrel && !r->all)
		fprintf(f, "  %zu other pattern%s not in the Pattern Set (--all lists them)\n",
			nrel - nset, nrel - nset == 1 ? " is" : "s are");
	if (nset < nrel && r->all) {
		fprintf(f, "Other patterns:\n");
		for (size_t i = 0; i < nrel; i++)
			if (!an->patterns[i].in_pattern_set)
				text_pattern_row(r, i + 1, &an->patterns[i]);
	}
	if (!an->nunreliable)
		return;
	/* mostly probe cost: VIM rewards their large N, so they are not ranked */
	fprintf(f, "Unreliable patterns (mean under 10 times the probes' cost inside; not ranked):"
		   "\n");
	for (size_t i = nrel; i < an->npatterns; i++)
		text_pattern_row(r, 0, &an->patterns[i]);
	if (!nrel)
		text_make_reliable(r);
}

/* ---- the tree of high-variance (or, with --all, significant) nodes ---- */

struct text_tree {
	const struct report *r;
	uint8_t *shown;	    /* node is printed */
	uint32_t *stack;    /* DFS stack of node ids */
	size_t sp;
	uint32_t *order;    /* printed nodes with contributors, in print order */
	size_t norder;
};

static const struct vp_cct_node *text_node(const struct report *r, uint32_t id)
{
	return &r->tree->nodes[id];
}

static int text_selected(const struct report *r, uint32_t id)
{
	if (id == VP_NODE_ROOT || id >= r->an->nnodes)
		return 0;
	return r->all ? r->an->significant[id] : r->an->high_variance[id];
}

static int text_cmp_total(const void *a, const void *b, void *arg)
{
	const struct vp_cct *tree = arg;
	const struct vp_cct_node *x = &tree->nodes[*(const uint32_t *)a];
	const struct vp_cct_node *y = &tree->nodes[*(const uint32_t *)b];

	if (vp_cct_node_time(x) != vp_cct_node_time(y))
		return vp_cct_node_time(x) < vp_cct_node_time(y) ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Push @id's shown children so that the one with the largest total pops first. */
static void text_push_children(struct text_tree *t, uint32_t id)
{
	const struct vp_cct_node *n = text_node(t->r, id);
	size_t start = t->sp;

	for (uint32_t i = 0; i < n->nchildren; i++)
		if (t->shown[n->children[i]])
			t->stack[t->sp++] = n->children[i];
	qsort_r(t->stack + start, t->sp - start, sizeof(*t->stack), text_cmp_total,
		(void *)t->r->tree);
	for (size_t i = start, j = t->sp; i + 1 < j; i++, j--) {
		uint32_t tmp = t->stack[i];

		t->stack[i] = t->stack[j - 1];
		t->stack[j - 1] = tmp;
	}
}

static double text_pct(double part, double whole);

/*
 * By default the node lines fit a terminal of 100 columns with room for
 * the calling context: times in one word ("1.23ms"), of the percentiles
 * the median, p99 and the max, and the off-CPU share of the variance in
 * the place of the total.  --wide shows them all, as wide as the rest of
 * the report.
 */
static int text_col_shown(const struct report *r, enum text_col c)
{
	switch (c) {
	case COL_MIN:
	case COL_P90:
	case COL_P99_9:
		return r->wide;
	case COL_OFF_MEAN:
		return r->wide && r->tree->offcpu;
	case COL_OFF_VAR:
		return r->tree->offcpu;
	case COL_TOTAL:
		return r->wide || !r->tree->offcpu;
	default:
		return 1;
	}
}

/* A time for column @c of node @id's line. */
static double text_col_time(const struct report *r, uint32_t id, enum text_col c,
			    const struct vp_offcpu_split *sp)
{
	const struct vp_cct_node *n = text_node(r, id);

	switch (c) {
	case COL_MEAN:
		return n->stats.mean;
	case COL_SIGMA:
		return vp_stats_stddev(&n->stats);
	case COL_MIN:
		return (double)n->stats.min;
	case COL_MAX:
		return (double)n->stats.max;
	case COL_OFF_MEAN:
		return sp->off_mean;
	case COL_TOTAL:
		return (double)vp_cct_node_time(n);
	default: /* a percentile */
		return (double)vp_hist_quantile(&n->hist, text_columns[c].q);
	}
}

/* Column @c of node @id's line into @buf; "-" for what is not known. */
static void text_col_value(const struct report *r, uint32_t id, enum text_col c,
			   const struct vp_offcpu_split *sp, int split, char *buf, size_t len)
{
	const struct vp_cct_node *n = text_node(r, id);
	uint64_t time = vp_cct_node_time(n);
	/* only open invocations: no statistics */
	int known = n->stats.n != 0;

	switch (c) {
	case COL_N:
		snprintf(buf, len, "%" PRIu64, n->stats.n);
		return;
	case COL_COV:
		snprintf(buf, len, "%.3f", vp_stats_cov(&n->stats));
		return;
	case COL_SHARE:
		snprintf(buf, len, "%.1f%%",
			 r->an->total_time ? 100.0 * (double)time / (double)r->an->total_time : 0);
		return;
	case COL_OFF_VAR:
		if (split && sp->wall_var > 0)
			snprintf(buf, len, "%.1f%%", text_pct(sp->off_share, 1));
		else
			snprintf(buf, len, "-");
		return;
	case COL_OFF_MEAN:
		known = split && sp->n;
		break;
	case COL_TOTAL:
		known = 1;
		break;
	case COL_P50:
	case COL_P90:
	case COL_P99:
	case COL_P99_9:
		known = known && n->hist.n;
		break;
	default:
		break;
	}
	if (!known)
		snprintf(buf, len, "-");
	else if (text_clamped_zero(r, c, text_col_time(r, id, c, sp)))
		snprintf(buf, len, "~0");
	else if (r->wide)
		text_time(r, text_col_time(r, id, c, sp), buf, len);
	else
		report_time_compact(r, text_col_time(r, id, c, sp), buf, len);
}

/* The shown columns of node @id's line, or their names for VP_NO_NODE. */
static void text_put_cols(const struct report *r, uint32_t id)
{
	struct vp_offcpu_split sp = { 0 };
	int split = 0;
	char buf[32];

	if (id == VP_NO_NODE)
		fputc(' ', r->out);
	else
		fputc(r->an->high_variance[id] ? '*' : ' ', r->out);
	if (id != VP_NO_NODE && r->tree->offcpu)
		split = vp_cct_offcpu_split(r->tree, id, &sp) == 0;
	for (enum text_col c = 0; c < TEXT_NCOLS; c++) {
		if (!text_col_shown(r, c))
			continue;
		if (id == VP_NO_NODE)
			snprintf(buf, sizeof(buf), "%s", text_columns[c].name);
		else
			text_col_value(r, id, c, &sp, split, buf, sizeof(buf));
		fprintf(r->out, " %*s", r->wide ? text_columns[c].wide : text_columns[c].narrow,
			buf);
	}
	fputs("  ", r->out);
}

/*
 * How often node @id's caller takes the path to it: *@ret_of paired
 * calls of the caller, node->path_calls of which called it.  0 for an
 * outermost node (no caller's calls to count) or a caller without paired
 * calls; 1 when it is to be shown: when the caller does not call it in
 * every call, or always with --wide.
 */
static int text_path(const struct report *r, uint32_t id, uint64_t *ret_of)
{
	const struct vp_cct_node *n = text_node(r, id);

	if (n->parent == VP_NODE_ROOT || n->parent >= r->tree->nnodes)
		return 0;
	*ret_of = text_node(r, n->parent)->stats.n;
	return *ret_of && (r->wide || n->path_calls < *ret_of);
}

/*
 * " (in 21 of 72 calls, 29.2%)": node @id's path fraction, when shown.
 * The contributors show it; the node lines only with --wide, where they
 * need not fit the terminal.
 */
static void text_put_path(const struct report *r, uint32_t id)
{
	uint64_t of, k = text_node(r, id)->path_calls;

	if (text_path(r, id, &of))
		fprintf(r->out, " (in %" PRIu64 " of %" PRIu64 " call%s, %.1f%%)", k, of,
			of == 1 ? "" : "s", 100.0 * (double)k / (double)of);
}

/* Columns of text_put_cols(): a mark, the shown columns, two blanks. */
static size_t text_cols_width(const struct report *r)
{
	size_t w = 1 + 2;

	for (enum text_col c = 0; c < TEXT_NCOLS; c++)
		if (text_col_shown(r, c))
			w += 1 + (size_t)(r->wide ? text_columns[c].wide : text_columns[c].narrow);
	return w;
}

/* Whether a sibling of node @id calls the same function: then only the
 * call site tells them apart. */
static int text_site_needed(const struct report *r, uint32_t id)
{
	const struct vp_cct_node *n = text_node(r, id), *p;

	if (n->parent >= r->tree->nnodes)
		return 0;
	p = text_node(r, n->parent);
	for (uint32_t i = 0; i < p->nchildren; i++)
		if (p->children[i] != id && text_node(r, p->children[i])->func == n->func)
			return 1;
	return 0;
}

/*
 * "function [call site]" of node @id after @used columns (0: whole): in
 * what is left of REPORT_TEXT_WIDTH without the call site when that does
 * not fit and no sibling needs it, then with the name cut in the middle.
 */
static void text_put_name_site(const struct report *r, uint32_t id, size_t used)
{
	const struct vp_cct_node *n = text_node(r, id);
	const char *name = report_func_name(r, n->func);
	size_t room = used + 16 < REPORT_TEXT_WIDTH ? REPORT_TEXT_WIDTH - used : 16, nw;
	char cs[512], buf[1024];

	report_callsite_str(r, n->callsite, 1, cs, sizeof(cs));
	nw = report_text_width(name, strlen(name));
	if (!used || nw + (*cs ? report_text_width(cs, strlen(cs)) + 3 : 0) <= room) {
		text_put(r->out, name);
		text_put_callsite(r, n->callsite);
		return;
	}
	if (!text_site_needed(r, id)) {
		text_put(r->out, report_fit(name, room, buf, sizeof(buf)));
		return;
	}
	/* the site tells it from its twin: of "file:line (caller+0xoff)" the
	 * return address alone, where the two differ; the name gives way */
	{
		char *addr = strstr(cs, " (");
		size_t cw;

		if (addr && cs[strlen(cs) - 1] == ')') {
			memmove(cs, addr + 2, strlen(addr + 2) + 1);
			cs[strlen(cs) - 1] = '\0';
		}
		cw = report_text_width(cs, strlen(cs)) + 3;
		text_put(r->out, report_fit(name, room > cw + 16 ? room - cw : 16, buf, sizeof(buf)));
		fputs(" [", r->out);
		text_put(r->out, cs);
		fputc(']', r->out);
	}
}

static void text_node_row(struct text_tree *t, uint32_t id)
{
	const struct report *r = t->r;
	const struct vp_cct_node *n = text_node(r, id);
	int hv = r->an->high_variance[id];
	uint32_t depth = n->depth ? n->depth - 1 : 0;
	char tail[128] = "", dbuf[32] = "";
	size_t ind, len = 0;

	/* by default two columns a level, one past the fourth: room for names */
	if (r->wide)
		ind = 2 * (depth > TEXT_MAX_INDENT ? TEXT_MAX_INDENT : depth);
	else
		ind = depth <= 4 ? 2 * depth : depth <= 12 ? 4 + depth : 16;
	if (depth > (r->wide ? TEXT_MAX_INDENT : 12))
		snprintf(dbuf, sizeof(dbuf), "[depth %" PRIu32 "] ", depth + 1);
	if (report_node_unreliable(r, id) && report_mean_uncertainty(r, id) > 0) {
		char b[32];

		/* how far its compensated mean may be off (the calibration's spread) */
		len += (size_t)snprintf(tail + len, sizeof(tail) - len, " (! %s%s)",
					report_sym(SYM_PLUSMINUS),
					report_time_compact(r, report_mean_uncertainty(r, id), b,
							    sizeof(b)));
	} else if (report_node_unreliable(r, id)) {
		len += (size_t)snprintf(tail + len, sizeof(tail) - len, " (!)");
	}
	if (n->open)
		len += (size_t)snprintf(tail + len, sizeof(tail) - len,
					" (%" PRIu64 " open at the end)", n->open);
	if (vp_reader_unprobed(r->reader, n->func))
		snprintf(tail + len, sizeof(tail) - len, "%s",
			 r->wide ? " (partial: probes removed, over the overhead budget)"
				 : " (partial)");
	text_put_cols(r, id);
	fprintf(r->out, "%*s%s", (int)ind, "", dbuf);
	if (r->wide)
		text_put_name_site(r, id, 0);
	else
		text_put_name_site(r, id, text_cols_width(r) + ind + strlen(dbuf) + strlen(tail));
	fputs(tail, r->out);
	if (r->wide)
		text_put_path(r, id);
	fputc('\n', r->out);
	if (hv && n->nchildren && n->cov.dim > 1)
		t->order[t->norder++] = id;
}

/* @part in % of @whole, without printing rounding noise as "-0.0". */
static double text_pct(double part, double whole)
{
	double pct = 100.0 * part / whole;

	return fabs(pct) < 0.05 ? 0.0 : pct;
}

/*
 * Row sums of the covariance matrix (core's vp_cct_contributors()): they
 * add up to the node's variance (Kumar and Pande, Eq. 2).
 */
static void text_contributors(const struct report *r, uint32_t id)
{
	const struct vp_cct_node *n = text_node(r, id);
	size_t dim = n->cov.dim, shown;
	struct vp_contrib *c;
	uint32_t *child_of = xcalloc(dim, sizeof(*child_of));
	double var = vp_covar_sum(&n->cov), rest = 0;
	char label[600], sigma[32];
	struct vp_offcpu_split sp;

	for (uint32_t i = 0; i < vp_cct_ntracked(n->nchildren); i++)
		if (vp_cct_var(i) < dim)
			child_of[vp_cct_var(i)] = n->children[i];
	if (vp_cct_contributors(n, &c) < 0)
		die("out of memory (the covariance row sums of node %" PRIu32 ")", id);

	fputs("  ", r->out);
	text_put(r->out, report_func_name(r, n->func));
	text_put_callsite(r, n->callsite);
	text_time(r, sqrt(var > 0 ? var : 0), sigma, sizeof(sigma));
	fprintf(r->out, " (node %" PRIu32 ", depth %" PRIu32 "): sigma %s over %" PRIu64 " calls",
		id, n->depth, sigma, n->cov.n);
	if (r->tree->offcpu && vp_cct_offcpu_split(r->tree, id, &sp) == 0 && sp.wall_var > 0)
		fprintf(r->out, ", %.1f%% of the wall-clock variance off-CPU",
			text_pct(sp.off_share, 1));
	fputc('\n', r->out);
	if (!(var > 0)) {
		fprintf(r->out, "    (no variance)\n");
		goto out;
	}
	shown = dim < TEXT_TOP_CONTRIBUTORS ? dim : TEXT_TOP_CONTRIBUTORS;
	for (size_t i = 0; i < dim; i++) {
		if (i >= shown) {
			rest += c[i].value;
			continue;
		}
		if (c[i].var == 0)
			snprintf(label, sizeof(label), "self");
		else if (c[i].var > VP_CCT_TRACKED)
			snprintf(label, sizeof(label), "(%" PRIu32 " other callees)",
				 vp_cct_nother(n->nchildren));
		else if (child_of[c[i].var])
			report_node_label(r, child_of[c[i].var], label, sizeof(label));
		else
			snprintf(label, sizeof(label), "variable %zu", c[i].var);
		fprintf(r->out, "    %7.1f%%  ", text_pct(c[i].value, var));
		text_put(r->out, label);
		if (c[i].var && c[i].var <= VP_CCT_TRACKED && child_of[c[i].var])
			text_put_path(r, child_of[c[i].var]);
		fputc('\n', r->out);
	}
	if (dim > shown)
		fprintf(r->out, "    %7.1f%%  (%zu more)\n", text_pct(rest, var), dim - shown);
out:
	free(child_of);
	free(c);
}

static void text_tree(const struct report *r)
{
	const struct vp_analysis *an = r->an;
	size_t nnodes = r->tree->nnodes < an->nnodes ? r->tree->nnodes : an->nnodes;
	struct text_tree t = { .r = r };
	size_t nsel = 0;
	uint64_t of;
	int paths = 0;
	FILE *f = r->out;

	t.shown = xcalloc(nnodes ? nnodes : 1, 1);
	t.stack = xcalloc(nnodes ? nnodes : 1, sizeof(*t.stack));
	t.order = xcalloc(nnodes ? nnodes : 1, sizeof(*t.order));
	/* selected nodes and their ancestors, so the tree has its structure */
	for (uint32_t id = 1; id < nnodes; id++) {
		if (!text_selected(r, id))
			continue;
		nsel++;
		for (uint32_t p = id; p != VP_NODE_ROOT && p < nnodes && !t.shown[p];
		     p = text_node(r, p)->parent)
			t.shown[p] = 1;
	}

	if (r->all)
		fprintf(f, "Significant nodes (total >= %g%% of the total time; * = CoV >= %g):\n",
			100.0 * an->params.cutoff, an->cov_threshold);
	else
		fprintf(f, "High-variance nodes (* = significant and CoV >= %g; other lines are "
			   "their callers):\n",
			an->cov_threshold);
	if (!nsel) {
		fprintf(f, "  (none)\n");
		goto out;
	}
	text_put_cols(r, VP_NO_NODE);
	fprintf(f, "calling context\n");
	if (r->tree->offcpu && r->wide)
		fprintf(f, "  off-mean: mean time off the CPU per call; off-var: its share of the "
			   "wall-clock variance\n");
	else if (r->tree->offcpu)
		fprintf(f, "  off-var: the share of the wall-clock variance that is off-CPU time "
			   "(--wide adds off-mean)\n");
	for (uint32_t id = 1; r->wide && id < nnodes && !paths; id++)
		paths = t.shown[id] && text_path(r, id, &of);
	if (paths)
		fprintf(f, "  (in k of n calls, %%): its caller called it in k of its n calls\n");
	if (r->hdr->ncosts && r->probe_cost)
		fprintf(f, "  (!): mean under 10 times what the probes cost inside it (its own and "
			   "its probed\n      callees'): unreliable; %sX: how far the mean may be "
			   "off (the calibration's spread)\n", report_sym(SYM_PLUSMINUS));
	for (uint32_t id = 1; !r->wide && id < nnodes; id++)
		if (t.shown[id] && vp_reader_unprobed(r->reader, text_node(r, id)->func)) {
			fprintf(f, "  (partial): its probes were removed, over the overhead budget\n");
			break;
		}
	if (nnodes)
		text_push_children(&t, VP_NODE_ROOT);
	while (t.sp) {
		uint32_t id = t.stack[--t.sp];

		text_node_row(&t, id);
		text_push_children(&t, id);
	}
	if (!t.norder)
		goto out;
	fprintf(f, "\nVariance contributors (row sums of each node's covariance matrix, in %% of "
		   "its variance):\n");
	for (size_t i = 0; i < t.norder; i++)
		text_contributors(r, t.order[i]);
out:
	free(t.order);
	free(t.stack);
	free(t.shown);
}

/* ---- off-CPU time ---- */

/* When off-CPU time makes most of the variance, the code is not to blame. */
static void text_offcpu_note(const struct report *r)
{
	double share;

	if (r->time != VP_TIME_WALL || !report_offcpu_share(r, &share) || share <= 0.5)
		return;
	fprintf(r->out, "note: %.0f%% of the high-variance nodes' variance is off-CPU time "
			"(preemption, blocking), not code\n",
		100 * share);
}

/* ---- totals ---- */

static const char *text_target_status(const struct vp_trailer *tr, char *buf, size_t len)
{
	int ws = (int)tr->wait_status;

	if (!tr->present) {
		snprintf(buf, len, "recording incomplete (no END chunk)");
	} else if (tr->flags & VP_END_GONE) {
		snprintf(buf, len, "exited while varperf was attached (status unknown)");
	} else if (!(tr->flags & VP_END_EXITED)) {
		snprintf(buf, len, "still running when the recording stopped");
	} else if (WIFEXITED(ws)) {
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(ws));
	} else if (WIFSIGNALED(ws)) {
		snprintf(buf, len, "killed by signal %d (%s)%s", WTERMSIG(ws),
			 strsignal(WTERMSIG(ws)), WCOREDUMP(ws) ? ", core dumped" : "");
	} else {
		snprintf(buf, len, "wait status 0x%x", ws);
	}
	return buf;
}

static void text_totals(const struct report *r)
{
	const struct vp_build_totals *bt = r->totals;
	const struct vp_trailer *tr = r->trailer;
	FILE *f = r->out;
	char buf[128];

	fprintf(f, "Totals:\n");
	if (r->sampled && !r->hdr->nfuncs) {
		fprintf(f, "  samples:                      %" PRIu64 " (%" PRIu64 " truncated, %"
			   PRIu64 " not unwound to the end, %" PRIu64 " in the kernel)\n",
			r->sampled->samples, r->sampled->truncated, r->sampled->broken,
			r->sampled->kernel);
		fprintf(f, "  lost records:                 %" PRIu64 "\n", r->lost);
		fprintf(f, "  threads:                      %zu\n", vp_reader_nthreads(r->reader));
		fprintf(f, "  target:                       %s\n",
			text_target_status(tr, buf, sizeof(buf)));
		if (tr->present && (tr->flags & VP_END_INTERRUPTED))
			fprintf(f, "  recording interrupted by a signal to varperf\n");
		if (tr->present && (tr->flags & VP_END_DETACHED))
			fprintf(f, "  attached to a running process, which kept running\n");
		return;
	}
	if (r->sampled)
		fprintf(f, "  samples:                      %" PRIu64 " (%" PRIu64 " truncated, %"
			   PRIu64 " not unwound to the end, %" PRIu64 " in the kernel)\n",
			r->sampled->samples, r->sampled->truncated, r->sampled->broken,
			r->sampled->kernel);
	fprintf(f, "  events:                       %" PRIu64 "\n", bt->events);
	fprintf(f, "  invocations:                  %" PRIu64 "\n", bt->invocations);
	fprintf(f, "  lost records:                 %" PRIu64 "\n", r->lost);
	fprintf(f, "  unpaired entries:             %" PRIu64 "\n", bt->unpaired_entries);
	if (bt->nest_lost)
		fprintf(f, "  ... of them without a return probe: %" PRIu64 " (nested more than 64 "
			   "deep, see the warning)\n", bt->nest_lost);
	fprintf(f, "  open at the end:              %" PRIu64 " (of the unpaired; timed up to the "
		   "last event)\n", bt->open_at_end);
	fprintf(f, "  unmatched exits:              %" PRIu64 "\n", bt->unmatched_exits);
	if (r->compensated && r->clamped)
		fprintf(f, "  clamped durations:            %" PRIu64 " (probe costs over the time "
			   "measured; by %s at most; shown as ~0)\n", r->clamped,
			fmt_duration((double)r->clamped_max, buf, sizeof(buf)));
	else if (r->compensated)
		fprintf(f, "  clamped durations:            0\n");
	fprintf(f, "  threads:                      %" PRIu32 "\n", bt->threads);
	if (tr->present)
		fprintf(f, "  foreign records:              %" PRIu64 " (other processes, not "
			   "recorded)\n", tr->foreign);
	else
		fprintf(f, "  foreign records:              unknown\n");
	if (tr->present && tr->unfollowed)
		fprintf(f, "  child processes not followed: %" PRIu64 "\n", tr->unfollowed);
	fprintf(f, "  unit:                         %s\n", text_unit_clock(r, buf, sizeof(buf)));
	fprintf(f, "  probed functions:             %zu\n", r->hdr->nfuncs);
	fprintf(f, "  total time:                   %s (sum of the outermost invocations, open ones "
		   "included)\n",
		text_time(r, (double)r->an->total_time, buf, sizeof(buf)));
	fprintf(f, "  duration of the recording:    %s (first to last event)\n",
		text_time(r, bt->events ? (double)(bt->last_time - bt->first_time) : 0, buf,
			  sizeof(buf)));
	fprintf(f, "  target:                       %s\n",
		text_target_status(tr, buf, sizeof(buf)));
	if (tr->present && (tr->flags & VP_END_INTERRUPTED))
		fprintf(f, "  recording interrupted by a signal to varperf\n");
	if (tr->present && (tr->flags & VP_END_DETACHED))
		fprintf(f, "  attached to a running process, which kept running\n");
	if (tr->present && (tr->flags & VP_END_WRITE_ERROR))
		fprintf(f, "  data were dropped while writing the file\n");
}

int report_text(const struct report *r)
{
	text_header(r);
	report_offcpu_note(r);
	if (r->hdr->nfuncs)
		text_offcpu_note(r);
	fputc('\n', r->out);
	if (r->sampled && !r->hdr->nfuncs) {
		/* samples only: nothing probed to analyse */
		report_sampled_text(r);
		fputc('\n', r->out);
		text_totals(r);
		return ferror(r->out) ? -1 : 0;
	}
	if (r->vcg) {
		/* Kumar and Pande, §8.1: start from the graph at tau_S 0.4, beta 0.1 */
		report_vcg_text(r);
		fputc('\n', r->out);
		report_sources_text(r);
		if (r->vcg_only)
			return ferror(r->out) ? -1 : 0;
		fputc('\n', r->out);
	}
	text_patterns(r);
	fputc('\n', r->out);
	text_tree(r);
	fputc('\n', r->out);
	report_offcpu_text(r);
	if (r->sampled) {
		report_sampled_text(r);
		fputc('\n', r->out);
	}
	text_totals(r);
	return ferror(r->out) ? -1 : 0;
}
