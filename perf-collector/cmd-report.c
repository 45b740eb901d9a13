/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * cmd-report.c - `varperf report`: read a varperf.data file, build the
 * calling-context tree, run Kumar et al. 2008's analysis and Kumar and Pande's Dominant
 * Variance Analysis (sources of variance, Variance Characterization Graph)
 * and print them as text, JSON or Graphviz.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cct.h"
#include "core/datafile.h"
#include "core/patterns.h"
#include "core/sampled.h"
#include "core/sources.h"
#include "core/vcg.h"
#include "analysis-opts.h"
#include "builtin.h"
#include "output.h"
#include "report.h"
#include "textwidth.h"
#include "util.h"

enum { EXIT_USAGE = 129 };

enum cmd_report_format { FORMAT_TEXT, FORMAT_JSON, FORMAT_DOT };

enum {
	OPT_STRICT = 256,
	OPT_WIDE,
	OPT_ALL,
	OPT_FORMAT,
	OPT_VCG,
	OPT_TAU,
	OPT_CONTEXTS,
	OPT_MIN_CONTRIBUTION,
	OPT_ONCE_PROBABILITY,
	OPT_MAX_PASSES,
	OPT_PRECISION,
	OPT_CONFIDENCE,
	OPT_RAW,
	OPT_MAX_MEMORY,
	OPT_PID,
};

/* Same order as OPTIONS in man/varperf-report.1. */
static const struct option cmd_report_options[] = {
	{ "input", required_argument, NULL, 'i' },
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	ANALYSIS_LONG_OPTIONS,
	{ "vcg", no_argument, NULL, OPT_VCG },
	{ "tau", required_argument, NULL, OPT_TAU },
	{ "contexts", no_argument, NULL, OPT_CONTEXTS },
	{ "min-contribution", required_argument, NULL, OPT_MIN_CONTRIBUTION },
	{ "once-probability", required_argument, NULL, OPT_ONCE_PROBABILITY },
	{ "max-passes", required_argument, NULL, OPT_MAX_PASSES },
	{ "precision", required_argument, NULL, OPT_PRECISION },
	{ "confidence", required_argument, NULL, OPT_CONFIDENCE },
	{ "raw", no_argument, NULL, OPT_RAW },
	{ "max-memory", required_argument, NULL, OPT_MAX_MEMORY },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "all", no_argument, NULL, OPT_ALL },
	{ "strict", no_argument, NULL, OPT_STRICT },
	{ "wide", no_argument, NULL, OPT_WIDE },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const char *const cmd_report_usage[] = {
	"usage: varperf report [<options>]",
	"",
	"    -i, --input <file>         data file to read (default: varperf.data)",
	"    -o, --output <file>        write the report to <file> instead of stdout",
	"    --format <text|json|dot>   report format (default: text; dot: the Variance",
	"                               Characterization Graph for Graphviz)",
	"    --cutoff <pct>             significance: share of the total time a node",
	"                               needs (default: 0.02%)",
	"    --probability <p>          Chebyshev probability (default: 0.96)",
	"    --window <w>               Chebyshev window as a multiple of the mean",
	"                               (default: 2.0)",
	"    --cov-threshold <c>        CoV for high variance; overrides --probability",
	"                               and --window (default: window*sqrt(1-p) = 0.4)",
	"    --similarity <pct>         patterns merge when means and CoVs are within",
	"                               <pct> of each other (default: 10%)",
	"    --beta <b>                 Pattern Set: VIM >= <b> * max VIM; the graph trims",
	"                               below <b> times the best at each level (default: 0.1)",
	"    --time <wall|cpu|offcpu>   analyse wall-clock time (default), on-CPU time or",
	"                               off-CPU time (these two need a file with off-CPU",
	"                               times: the BPF backend of varperf record)",
	"    --vcg                      print the Variance Characterization Graph only",
	"                               (text; JSON always has it, in \"vcg\")",
	"    --tau <t>                  summarisation pressure tau_S of the graph, 0 to 1",
	"                               (default: 0.4)",
	"    --contexts                 show the call-context set of every graph node",
	"    --min-contribution <pct>   share of a node's variance that makes a source",
	"                               significant (default: 10%)",
	"    --once-probability <p>     a call made exactly once in more than <p> of its",
	"                               caller's invocations is cascaded into (default: 0.95)",
	"    --max-passes <n>           extra passes over the events for implicit inlining",
	"                               (default: 8; 0: direct children only)",
	"    --precision <pct>          flag sampled shares whose interval is wider than",
	"                               +/-<pct> (default: 1%)",
	"    --confidence <pct>         confidence of the sampled shares' intervals",
	"                               (default: 95%)",
	"    --raw                      durations as measured, probe costs included",
	"    --max-memory <size>        refuse a file whose trees would take more than",
	"                               <size>, with K/M/G suffix (default: 1G; 0: no limit)",
	"    --pid <pid>                only the events and samples of process <pid>",
	"                               (a recording that followed forks has several)",
	"    --all                      list every significant node and every pattern",
	"    --strict                   treat a truncated or incomplete file as an error",
	"    --wide                     print long lines whole (default on a terminal, or",
	"                               with COLUMNS set: cut at its width)",
	"    -h, --help                 show this help",
	NULL,
};

static void cmd_report_print_usage(FILE *f, int full)
{
	for (size_t i = 0; cmd_report_usage[i]; i++) {
		if (!full && i > 0)
			break;
		fprintf(f, "%s\n", cmd_report_usage[i]);
	}
}

struct cmd_report_opts {
	const char *input;
	const char *output;
	enum cmd_report_format format;
	struct vp_analysis_params params;
	struct vp_sources_params sources;
	struct vp_vcg_params vcg;
	int all;
	int strict;
	int wide;
	int vcg_only;
	int contexts;
	double precision, confidence;
	int raw;
	uint32_t pid; /* --pid, 0: every process */
	enum vp_time_base time;
	size_t max_memory;
};

/* --max-passes: a plain decimal count. */
static int cmd_report_set_passes(const char *arg, unsigned *ret)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (!*arg || *end || errno || arg[0] == '-' || v > 1000)
		return error("invalid value '%s' for '--max-passes': must be a whole number from "
			     "0 to 1000",
			     arg);
	*ret = (unsigned)v;
	return 0;
}

/* Returns 0, 1 for --help, or -1 after a usage error has been printed. */
static int cmd_report_parse(int argc, char **argv, struct cmd_report_opts *o)
{
	struct vp_analysis_params *p = &o->params;
	char *argv0 = argv[0];
	int c, ret = 0;

	/*
	 * getopt names argv[0] in its messages; make that "varperf" whatever the
	 * dispatcher passed, so they read like every other varperf message.
	 * optind = 0 makes glibc re-initialise (varperf.c may have used getopt).
	 */
	argv[0] = (char *)"varperf";
	optind = 0;
	opterr = 1;
	while (!ret && (c = getopt_long(argc, argv, "+i:o:h", cmd_report_options, NULL)) != -1) {
		switch (c) {
		case 'i':
			o->input = optarg;
			break;
		case 'o':
			o->output = optarg;
			break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "text")) {
				o->format = FORMAT_TEXT;
			} else if (!strcmp(optarg, "json")) {
				o->format = FORMAT_JSON;
			} else if (!strcmp(optarg, "dot")) {
				o->format = FORMAT_DOT;
			} else {
				ret = error("invalid value '%s' for '--format': "
					    "must be 'text', 'json' or 'dot'",
					    optarg);
			}
			break;
		case OPT_CUTOFF:
		case OPT_PROBABILITY:
		case OPT_WINDOW:
		case OPT_COV_THRESHOLD:
		case OPT_SIMILARITY:
			ret = analysis_option(c, optarg, p) < 0 ? -1 : 0;
			break;
		case OPT_BETA:
			ret = analysis_option(c, optarg, p) < 0 ? -1 : 0;
			/* the same beta trims the graph (Kumar and Pande, §4) */
			o->vcg.beta = p->beta;
			break;
		case OPT_TIME:
			ret = opt_time_base(optarg, &o->time);
			break;
		case OPT_VCG:
			o->vcg_only = 1;
			break;
		case OPT_TAU:
			ret = opt_fraction("tau", optarg, &o->vcg.tau);
			break;
		case OPT_CONTEXTS:
			o->contexts = 1;
			break;
		case OPT_MIN_CONTRIBUTION:
			ret = opt_fraction("min-contribution", optarg,
						   &o->sources.min_contribution);
			break;
		case OPT_ONCE_PROBABILITY:
			ret = opt_fraction("once-probability", optarg,
						   &o->sources.once_probability);
			break;
		case OPT_MAX_PASSES:
			ret = cmd_report_set_passes(optarg, &o->sources.max_passes);
			break;
		case OPT_PRECISION:
			ret = opt_fraction("precision", optarg, &o->precision);
			break;
		case OPT_CONFIDENCE:
			ret = opt_fraction("confidence", optarg, &o->confidence);
			break;
		case OPT_RAW:
			o->raw = 1;
			break;
		case OPT_MAX_MEMORY:
			ret = opt_max_memory(optarg, &o->max_memory);
			break;
		case OPT_PID: {
			unsigned long long v;

			if (parse_uint64(optarg, &v) < 0 || !v || v > INT32_MAX)
				ret = error("invalid process id '%s' for '--pid'", optarg);
			else
				o->pid = (uint32_t)v;
			break;
		}
		case OPT_ALL:
			o->all = 1;
			break;
		case OPT_STRICT:
			o->strict = 1;
			break;
		case OPT_WIDE:
			o->wide = 1;
			break;
		case 'h':
			ret = 1;
			break;
		default:
			/* getopt has said what was wrong */
			cmd_report_print_usage(stderr, 0);
			ret = -1;
			break;
		}
	}
	/* JSON always has the graph: --vcg would have nothing to select */
	if (!ret && o->vcg_only && o->format == FORMAT_JSON)
		ret = error("'--vcg' is for the text report: the JSON report has the graph in its "
			    "\"vcg\" member, and --format dot draws it");
	if (!ret && optind < argc) {
		error("unexpected argument '%s'", argv[optind]);
		cmd_report_print_usage(stderr, 0);
		ret = -1;
	}
	argv[0] = argv0;
	return ret;
}

static int cmd_report_check_params(const struct cmd_report_opts *o)
{
	char msg[256] = "";

	if (vp_analysis_params_check(&o->params, msg, sizeof(msg)) < 0 ||
	    vp_sources_params_check(&o->sources, msg, sizeof(msg)) < 0 ||
	    vp_vcg_params_check(&o->vcg, msg, sizeof(msg)) < 0)
		return error("invalid analysis parameters: %s", msg[0] ? msg : "out of range");
	return 0;
}

/*
 * Problems with the file that still leave a usable report.  With --strict
 * an incomplete file is an error instead (nothing is printed then).
 */
static int cmd_report_file_warnings(const struct cmd_report_opts *o, struct report *r)
{
	const char *w = vp_reader_warning(r->reader);

	if (w && o->strict)
		return error("%s", w);
	if (!w && !r->trailer->present) {
		if (o->strict)
			return error("'%s': recording incomplete (no END chunk)", o->input);
		warning("'%s': recording incomplete (no END chunk); reporting what was recorded",
			o->input);
	}
	if (w)
		warning("%s", w);
	if (r->trailer->present && (r->trailer->flags & VP_END_WRITE_ERROR)) {
		if (o->strict)
			return error("'%s': the recorder could not write all data; some events "
				     "are missing",
				     o->input);
		warning("'%s': the recorder could not write all data; some events are missing",
			o->input);
	}
	if (r->trailer->present && (r->trailer->flags & VP_END_OVER_BUDGET) &&
	    r->trailer->target_cpu_ns)
		warning("'%s': phase 2's probes cost about %.1f%% of the program's CPU time, over "
			"the %g%% budget: the recorded run took that much longer than the program "
			"alone",
			o->input,
			(double)r->trailer->probe_cost_ns / (double)r->trailer->target_cpu_ns * 100,
			(double)r->trailer->budget_ppm / 1e4);
	if (r->clamped)
		warning("'%s': %llu compensated durations were clamped: the probe costs "
			"subtracted exceeded the time measured (--raw: as measured)",
			o->input, (unsigned long long)r->clamped);
	if (r->lost)
		warning("'%s': %llu records were lost while recording; their invocations are "
			"counted as unpaired",
			o->input, (unsigned long long)r->lost);
	return 0;
}

/*
 * Calls nested too deep for the kernel's return probes: not a few lost
 * records, but every call past a depth - a recursion loses nearly all.
 */
static void cmd_report_nesting_warning(const struct report *r)
{
	const struct vp_build_totals *bt = r->totals;
	const char *most = bt->nest_lost_func < r->hdr->nfuncs
				   ? r->hdr->funcs[bt->nest_lost_func].display
				   : "?";

	if (!bt->nest_lost)
		return;
	warning("'%s': %" PRIu64 " calls (%" PRIu64 " of them of '%s') have no exit: the kernel "
		"keeps at most 64 return probes pending per thread and drops those of calls "
		"nested deeper; they are counted as unpaired, their callers' times are right "
		"(record with --exit-probes=ret or auto)", r->input, bt->nest_lost,
		bt->nest_lost_most, most);
}

/* What the samples cannot tell well: incomplete stacks, wide intervals. */
static void cmd_report_sampled_warnings(const struct report *r)
{
	const struct vp_sampled *t = r->sampled;
	double max_half;
	size_t wide;

	if (t->truncated && r->hdr->sampling.stack_size < VP_STACK_SIZE_MAX)
		warning("'%s': %" PRIu64 " of %" PRIu64 " samples have truncated stacks (the "
			"stack copy was too small: record with a larger --stack-size)",
			r->input, t->truncated, t->samples);
	else if (t->truncated)
		warning("'%s': %" PRIu64 " of %" PRIu64 " samples have truncated stacks (the "
			"stack copy, the largest the kernel takes, was too small)",
			r->input, t->truncated, t->samples);
	if (t->broken)
		warning("'%s': %" PRIu64 " of %" PRIu64 " samples could not be unwound to their "
			"outermost frame", r->input, t->broken, t->samples);
	wide = report_sampled_wide(r, &max_half);
	if (wide)
		warning("'%s': %zu sampled share%s wider than +/-%g%% at %g%% confidence (up to "
			"+/-%.2f%%): record longer or at a higher -F (%" PRIu64 " samples needed)",
			r->input, wide, wide == 1 ? " is" : "s are", r->precision * 100,
			r->confidence * 100, max_half * 100,
			vp_samples_needed(0.5, r->precision, r->z));
}

/* The kernel's count arrives twice: LOST records and the trailer's total. */
static uint64_t cmd_report_lost(struct vp_reader *reader, const struct vp_trailer *tr)
{
	uint64_t lost = vp_reader_lost(reader);

	if (tr->present && tr->lost > lost)
		lost = tr->lost;
	return lost;
}

/*
 * The text report on standard output fits the terminal: lines are cut at
 * its width (or $COLUMNS) as ps(1) cuts them, unless --wide.  The report
 * is written whole first, so that its printers need not know.
 */
static int cmd_report_text_fitted(const struct cmd_report_opts *o, struct report *r)
{
	int width = o->wide || o->output ? 0 : vp_term_width(STDOUT_FILENO);
	FILE *f = r->out, *m;
	char *buf = NULL;
	size_t len = 0, cut = 0;
	int ret;

	if (width < 2)
		return report_text(r);
	m = open_memstream(&buf, &len);
	if (!m)
		die("out of memory");
	r->out = m;
	ret = report_text(r);
	r->out = f;
	if (fclose(m))
		die("out of memory");
	if (!ret)
		ret = vp_fit_lines(f, buf, len, width, &cut);
	free(buf);
	if (!ret && cut)
		info("%zu line%s cut at %d columns: --wide prints them whole", cut,
		     cut == 1 ? "" : "s", width);
	return ret;
}

static int cmd_report_print(const struct cmd_report_opts *o, struct report *r)
{
	FILE *f = stdout;
	int ret;

	if (o->output) {
		f = fopen(o->output, "w");
		if (!f)
			return error("cannot open '%s': %s", o->output, strerror(errno));
	}
	r->out = f;
	switch (o->format) {
	case FORMAT_JSON:
		ret = report_json(r);
		break;
	case FORMAT_DOT:
		ret = report_vcg_dot(r);
		break;
	default:
		ret = cmd_report_text_fitted(o, r);
		break;
	}
	if (fflush(f) || ferror(f))
		ret = -1;
	if (f != stdout && fclose(f))
		ret = -1;
	if (ret < 0)
		return error("cannot write '%s': %s", o->output ? o->output : "standard output",
			     strerror(errno));
	return 0;
}

/* Error from a pass over the events: the reader's message when it has one. */
static void cmd_report_read_error(const struct cmd_report_opts *o, struct vp_reader *reader,
				  int err)
{
	const char *m = vp_reader_error(reader);

	if (m && *m && err != -ENOMEM)
		error("%s", m);
	else
		error("cannot analyse '%s': %s", o->input, strerror(-err));
}

/*
 * Dominant Variance Analysis: Step 2 (sources of variance, with extra
 * passes over the file) and Steps 3-5 (the graph).
 */
static int cmd_report_dva(const struct cmd_report_opts *o, struct report *r,
			  struct vp_sources *src, struct vp_vcg *vcg, uint8_t **labels)
{
	int err;

	err = vp_sources_run(src, r->tree, r->an, r->reader, &o->sources);
	if (err < 0) {
		cmd_report_read_error(o, r->reader, err);
		return -1;
	}
	*labels = xmalloc(r->tree->nnodes);
	err = vp_vcg_label(r->tree, r->an, src, *labels);
	if (!err)
		err = vp_vcg_build(vcg, r->tree, r->an, src, &o->vcg);
	if (err < 0) {
		error("cannot analyse '%s': %s", o->input, strerror(-err));
		vp_sources_release(src);
		free(*labels);
		*labels = NULL;
		return -1;
	}
	pr_debug("sources of variance: %zu originators, %u extra passes",
		 src->norigins, src->passes);
	r->sources = src;
	r->vcg = vcg;
	r->labels = *labels;
	return 0;
}

/* --pid: a process of the recording, or an error listing them. */
static int cmd_report_check_pid(struct vp_reader *reader, const struct cmd_report_opts *o)
{
	size_t n = vp_reader_nthreads(reader), len = 0;
	char list[256] = "";

	for (size_t i = 0; i < n; i++) {
		uint32_t pid = vp_reader_thread(reader, (uint32_t)i)->pid;
		size_t j;

		if (pid == o->pid)
			return 0;
		for (j = 0; j < i && vp_reader_thread(reader, (uint32_t)j)->pid != pid; j++)
			;
		if (j == i && len < sizeof(list))
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%" PRIu32,
						len ? ", " : "", pid);
	}
	return error("no process %" PRIu32 " in '%s' (its processes: %s)", o->pid, o->input,
		     len ? list : "none");
}

static int cmd_report_run(const struct cmd_report_opts *o)
{
	struct vp_reader *reader = NULL;
	struct vp_build_totals totals;
	struct vp_sources src;
	struct vp_vcg vcg;
	uint8_t *labels = NULL;
	struct vp_analysis an;
	struct vp_cct tree;
	struct vp_sampled stree = { 0 };
	struct vp_budget budget = { o->max_memory, 0 };
	uint32_t *probed_of = NULL, *twins;
	double *probe_cost;
	struct report r;
	char msg[512] = "";
	int err, ret = 1;

	err = vp_reader_open(o->input, &reader, msg, sizeof(msg));
	if (err < 0) {
		if (msg[0])
			error("%s", msg);
		else
			error("cannot read '%s': %s", o->input, strerror(-err));
		goto out;
	}
	if (analysis_set_time(reader, o->time, o->input) < 0)
		goto out_reader;
	vp_reader_set_pid(reader, o->pid);
	err = vp_cct_init(&tree);
	if (err < 0) {
		error("cannot build the calling-context tree: %s", strerror(-err));
		goto out_reader;
	}
	tree.budget = &budget;
	err = vp_sampled_init(&stree);
	if (err < 0) {
		error("cannot build the sampled tree: %s", strerror(-err));
		goto out_tree;
	}
	stree.budget = &budget;
	/* One pass folds the samples too; later passes (sources) need not. */
	vp_reader_set_sample_handler(reader, vp_sampled_handler, &stree);
	err = vp_reader_compensate(reader, !o->raw);
	if (err < 0) {
		error("cannot subtract the probe costs: %s", strerror(-err));
		goto out_tree;
	}
	memset(&totals, 0, sizeof(totals));
	err = vp_build_file(reader, &tree, &totals);
	vp_reader_set_sample_handler(reader, NULL, NULL);
	vp_sampled_finish(&stree);
	if (err == -E2BIG) {
		analysis_budget_error(o->input, &budget);
		goto out_tree;
	}
	if (err < 0) {
		const char *m = vp_reader_error(reader);

		if (m && *m)
			error("%s", m);
		else
			error("cannot read '%s': %s", o->input, strerror(-err));
		goto out_tree;
	}

	if (o->pid && cmd_report_check_pid(reader, o) < 0)
		goto out_tree;

	/* per-thread times of another base do not tell the recording's span */
	if (o->time != VP_TIME_WALL)
		vp_reader_time_span(reader, &totals.first_time, &totals.last_time);

	memset(&r, 0, sizeof(r));
	r.input = o->input;
	r.reader = reader;
	r.hdr = vp_reader_header(reader);
	r.trailer = vp_reader_trailer(reader);
	r.tree = &tree;
	r.totals = &totals;
	r.an = &an;
	r.all = o->all;
	r.vcg_only = o->vcg_only;
	r.contexts = o->contexts;
	r.lost = cmd_report_lost(reader, r.trailer);
	r.clamped = vp_reader_clamped(reader);
	r.precision = o->precision;
	r.confidence = o->confidence;
	r.z = vp_confidence_z(o->confidence);
	r.time = o->time;
	r.pid = o->pid;
	/* the probes cost on-CPU time: off-CPU durations hold none of it */
	r.compensated = !o->raw && r.hdr->ncosts && r.hdr->nfuncs && o->time != VP_TIME_OFFCPU;
	/* a sampling run that caught nothing still reports its samples: none */
	if (stree.samples || vp_reader_samples(reader) || r.hdr->mode == VP_MODE_SAMPLE ||
	    r.hdr->mode == VP_MODE_COMBINED || r.hdr->mode == VP_MODE_AUTO)
		r.sampled = &stree;
	if (cmd_report_file_warnings(o, &r) < 0)
		goto out_tree;
	cmd_report_nesting_warning(&r);
	if (r.sampled)
		cmd_report_sampled_warnings(&r);

	/* nodes mostly probe cost are left out of the ranking */
	probe_cost = o->time != VP_TIME_OFFCPU ? report_probe_costs(&r) : NULL;
	r.probe_cost = probe_cost;
	err = vp_analysis_run(&an, &tree, r.hdr->nfuncs, &o->params);
	if (err < 0) {
		error("cannot analyse '%s': %s", o->input, strerror(-err));
		free(probe_cost);
		goto out_tree;
	}
	if (probe_cost && (err = vp_analysis_set_probe_costs(&an, &tree, probe_cost)) < 0) {
		error("cannot analyse '%s': %s", o->input, strerror(-err));
		goto out_analysis;
	}
	if (cmd_report_dva(o, &r, &src, &vcg, &labels) < 0)
		goto out_analysis;
	probed_of = report_match_probed(&r);
	r.probed_of = probed_of;
	twins = vp_cct_callsite_twins(&tree, reader);
	if (!twins && errno)
		warning("cannot tell call sites on one line apart: %s", strerror(errno));
	r.callsite_twins = twins;
	if (!cmd_report_print(o, &r))
		ret = 0;
	free(twins);
	free(probed_of);
	vp_vcg_release(&vcg);
	vp_sources_release(&src);
	free(labels);
out_analysis:
	free(probe_cost);
	vp_analysis_release(&an);
out_tree:
	vp_cct_release(&tree);
	vp_sampled_release(&stree);
out_reader:
	vp_reader_free(reader);
out:
	return ret;
}

int cmd_report(int argc, char **argv)
{
	struct cmd_report_opts o;
	int ret;

	memset(&o, 0, sizeof(o));
	o.input = "varperf.data";
	o.format = FORMAT_TEXT;
	vp_analysis_params_default(&o.params);
	vp_sources_params_default(&o.sources);
	vp_vcg_params_default(&o.vcg);
	o.vcg.beta = o.params.beta;
	o.precision = 0.01;
	o.confidence = 0.95;
	o.max_memory = ANALYSIS_MAX_MEMORY_DEFAULT;

	ret = cmd_report_parse(argc, argv, &o);
	if (ret > 0) {
		cmd_report_print_usage(stdout, 1);
		return 0;
	}
	if (ret < 0 || cmd_report_check_params(&o) < 0)
		return EXIT_USAGE;
	/* fopen() would empty the recording before it is read */
	if (o.output && vp_output_same(o.output, o.input)) {
		error("cannot write '%s': it is the input '%s'", o.output, o.input);
		return EXIT_USAGE;
	}
	return cmd_report_run(&o);
}
