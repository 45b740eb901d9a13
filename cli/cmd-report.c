/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * cmd-report.c - `varperf report`: read a varperf.data file, build the
 * calling-context tree, run Kumar et al. 2008's analysis and Kumar and Pande's Dominant
 * Variance Analysis (sources of variance, Variance Characterization Graph)
 * and print them as text, JSON, Graphviz or one HTML page.
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
#include "core/merge.h"
#include "core/patterns.h"
#include "core/recording.h"
#include "core/sampled.h"
#include "core/sources.h"
#include "core/vcg.h"
#include "analysis-opts.h"
#include "builtin.h"
#include "util/output.h"
#include "report/report.h"
#include "textwidth.h"
#include "usage.h"
#include "util/util.h"

enum cmd_report_format {
	FORMAT_TEXT,
	FORMAT_JSON,
	FORMAT_DOT,
	FORMAT_CHROME,
	FORMAT_FOLDED,
	FORMAT_HTML,
	FORMAT_PPROF,
};

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
	OPT_PID,
	OPT_SLOWEST,
	OPT_SLOWEST_COUNT,
	OPT_FOLDED_VALUE,
	OPT_TYPICAL,
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
	{ "slowest", optional_argument, NULL, OPT_SLOWEST },
	{ "slowest-count", required_argument, NULL, OPT_SLOWEST_COUNT },
	{ "min-contribution", required_argument, NULL, OPT_MIN_CONTRIBUTION },
	{ "once-probability", required_argument, NULL, OPT_ONCE_PROBABILITY },
	{ "max-passes", required_argument, NULL, OPT_MAX_PASSES },
	{ "precision", required_argument, NULL, OPT_PRECISION },
	{ "confidence", required_argument, NULL, OPT_CONFIDENCE },
	{ "raw", no_argument, NULL, OPT_RAW },
	{ "max-memory", required_argument, NULL, OPT_MAX_MEMORY },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "folded-value", required_argument, NULL, OPT_FOLDED_VALUE },
	{ "typical", no_argument, NULL, OPT_TYPICAL },
	{ "all", no_argument, NULL, OPT_ALL },
	{ "strict", no_argument, NULL, OPT_STRICT },
	{ "wide", no_argument, NULL, OPT_WIDE },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const char *const cmd_report_usage[] = {
	"usage: varperf report [<options>] [<file>...]",
	"",
	"    -i, --input <file>         data file to read (default: varperf.data); with",
	"                               several files, recordings of one program merged,",
	"                               each run a replicate (see \"Many runs\" in",
	"                               varperf-report(1))",
	"    -o, --output <file>        write the report to <file> instead of stdout",
	"    --format <fmt>             text (default), json, dot (the Variance",
	"                               Characterization Graph for Graphviz), chrome",
	"                               (every call for a trace viewer), folded",
	"                               (stacks for flame graphs), html (one",
	"                               self-contained page with the graph and plots)",
	"                               or pprof (a gzipped profile.proto for pprof,",
	"                               Pyroscope, Parca: calls, time and time^2 per",
	"                               context)",
	ANALYSIS_USAGE,
	"    --vcg                      print the Variance Characterization Graph only",
	"                               (text; JSON always has it, in \"vcg\")",
	"    --tau <t>                  summarisation pressure tau_S of the graph, 0 to 1",
	"                               (default: 0.4)",
	"    --contexts                 show the call-context set of every graph node",
	"    --slowest[=<context>]      list the slowest calls of every significant node, or",
	"                               of the nodes in <context> (main/f or main;f), with",
	"                               where each call's time went; chrome, folded: only",
	"                               those calls and what they called",
	"    --slowest-count <k>        slowest calls kept per node (default: 16)",
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
	"    --folded-value <v>         folded: 'time' (own time, ns; default) or",
	"                               'variance' (share of the task's variance, ns^2)",
	"    --typical                  folded --slowest: the same contexts' calls at",
	"                               large, scaled to as many (difffolded.pl's before)",
	"    --all                      list every significant node and every pattern",
	"    --strict                   treat a truncated or incomplete file as an error",
	"    --wide                     every column (min, p90, p99.9, off-mean, total, the",
	"                               path fraction of every callee), every node apart and",
	"                               every line whole (default: 100 columns, or the",
	"                               terminal's or COLUMNS; wider lines folded)",
	"    -h, --help                 show this help",
	NULL,
};

struct cmd_report_opts {
	const char *input;		/* the first of inputs[] */
	const char **inputs;		/* -i and the arguments, in order */
	size_t ninputs;
	const char *output;
	enum cmd_report_format format;
	/* analysis parameters, --time, --raw, --pid, --max-memory */
	struct vp_recording_opts rec;
	struct vp_sources_params sources;
	struct vp_vcg_params vcg;
	int all;
	int strict;
	int wide;
	int vcg_only;
	int contexts;
	int slowest;			/* --slowest */
	const char *slowest_context;	/* --slowest=CONTEXT */
	double precision, confidence;
	int typical;
	enum report_folded_value folded_value;
	int folded_value_set;
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

/* --slowest-count: how many slowest calls each node keeps. */
static int cmd_report_set_slowest_count(const char *arg, uint32_t *ret)
{
	unsigned long long v;

	if (parse_uint64(arg, &v) < 0 || !v || v > VP_SLOWEST_MAX)
		return error("invalid value '%s' for '--slowest-count': must be a whole number from "
			     "1 to %d",
			     arg, VP_SLOWEST_MAX);
	*ret = (uint32_t)v;
	return 0;
}

/* What --slowest cannot go with; its context must parse. */
static int cmd_report_check_slowest(const struct cmd_report_opts *o)
{
	struct report_context ctx;

	if (!o->slowest)
		return 0;
	if (o->format == FORMAT_JSON)
		return error("'--slowest' is for the text report, chrome and folded: the JSON "
			     "report has every node's slowest calls in its \"slowest\" member");
	if (o->format == FORMAT_DOT)
		return error("'--slowest' is for the text report, chrome and folded: --format dot "
			     "draws the graph");
	if (o->format == FORMAT_PPROF)
		return error("'--slowest' is for the text report, chrome and folded: a pprof "
			     "profile sums every call");
	if (o->vcg_only)
		return error("options '--slowest' and '--vcg' cannot be used together");
	if (o->slowest_context) {
		if (report_context_parse(o->slowest_context, &ctx) < 0)
			return -1;
		report_context_release(&ctx);
	}
	return 0;
}

/* What several recordings merged cannot give. */
static int cmd_report_check_runs(const struct cmd_report_opts *o)
{
	static const char *const name[] = {
		[FORMAT_CHROME] = "chrome", [FORMAT_FOLDED] = "folded", [FORMAT_HTML] = "html"
	};

	if (o->format == FORMAT_CHROME || o->format == FORMAT_FOLDED || o->format == FORMAT_HTML)
		return error("'--format %s' takes one recording: it reads every call of the file "
			     "again, and %zu recordings do not make one timeline (text, json, dot "
			     "and pprof merge them)",
			     name[o->format], o->ninputs);
	if (o->slowest)
		return error("'--slowest' takes one recording: a slowest call is a time and a "
			     "thread of its own run");
	if (o->rec.pid)
		return error("'--pid' takes one recording: each run has processes of its own");
	return 0;
}

/* Returns 0, 1 for --help, or -1 after a usage error has been printed. */
static int cmd_report_parse(int argc, char **argv, struct cmd_report_opts *o)
{
	int c, ret = 0;

	usage_getopt_start();
	while (!ret && (c = getopt_long(argc, argv, "+:i:o:h", cmd_report_options, NULL)) != -1) {
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
			} else if (!strcmp(optarg, "chrome")) {
				o->format = FORMAT_CHROME;
			} else if (!strcmp(optarg, "folded")) {
				o->format = FORMAT_FOLDED;
			} else if (!strcmp(optarg, "html")) {
				o->format = FORMAT_HTML;
			} else if (!strcmp(optarg, "pprof")) {
				o->format = FORMAT_PPROF;
			} else {
				ret = error("invalid value '%s' for '--format': must be 'text', "
					    "'json', 'dot', 'chrome', 'folded', 'html' or 'pprof'",
					    optarg);
			}
			break;
		case OPT_SLOWEST:
			o->slowest = 1;
			o->slowest_context = optarg;
			break;
		case OPT_FOLDED_VALUE:
			o->folded_value_set = 1;
			if (!strcmp(optarg, "time"))
				o->folded_value = FOLDED_TIME;
			else if (!strcmp(optarg, "variance"))
				o->folded_value = FOLDED_VARIANCE;
			else
				ret = error("invalid value '%s' for '--folded-value': "
					    "must be 'time' or 'variance'",
					    optarg);
			break;
		case OPT_TYPICAL:
			o->typical = 1;
			break;
		case OPT_BETA:
			ret = analysis_option(c, optarg, &o->rec) < 0 ? -1 : 0;
			/* the same beta trims the graph (Kumar and Pande, §4) */
			o->vcg.beta = o->rec.params.beta;
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
		case OPT_SLOWEST_COUNT:
			ret = cmd_report_set_slowest_count(optarg, &o->rec.slowest);
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
		case OPT_PID: {
			unsigned long long v;

			if (parse_uint64(optarg, &v) < 0 || !v || v > INT32_MAX)
				ret = error("invalid value '%s' for '--pid': must be a process id",
					    optarg);
			else
				o->rec.pid = (uint32_t)v;
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
			/* the analysis options compare has too */
			ret = analysis_option(c, optarg, &o->rec);
			if (!ret)
				usage_getopt_error(c, argv, cmd_report_options, cmd_report_usage);
			ret = ret > 0 ? 0 : -1;
			break;
		}
	}
	/* JSON always has the graph: --vcg would have nothing to select */
	if (!ret && o->vcg_only && o->format == FORMAT_JSON)
		ret = error("'--vcg' is for the text report: the JSON report has the graph in its "
			    "\"vcg\" member, and --format dot draws it");
	if (!ret)
		ret = cmd_report_check_slowest(o);
	if (!ret && o->typical && !(o->slowest && o->format == FORMAT_FOLDED))
		ret = error("'--typical' is for '--format folded --slowest': the calls at large "
			    "next to the slowest");
	if (!ret && o->folded_value_set && o->format != FORMAT_FOLDED)
		ret = error("'--folded-value' is for '--format folded'");
	if (!ret && o->slowest && o->format == FORMAT_FOLDED &&
	    o->folded_value == FOLDED_VARIANCE)
		ret = error("'--folded-value=variance' cannot be used with '--slowest': the "
			    "slowest calls make a time profile");
	if (!ret && o->vcg_only && o->format == FORMAT_HTML)
		ret = error("'--vcg' is for the text report: the HTML report draws the graph at "
			    "its top");
	if (!ret && o->vcg_only && o->format == FORMAT_PPROF)
		ret = error("'--vcg' is for the text report: a pprof profile has no graph");
#ifndef HAVE_PROTOBUF_C
	if (!ret && o->format == FORMAT_PPROF)
		ret = error("'--format pprof' needs protobuf-c: this varperf was built without "
			    "it (see 'varperf version --build-options')");
#endif
	/* a gzipped profile is no text to show */
	if (!ret && o->format == FORMAT_PPROF && !o->output && isatty(STDOUT_FILENO))
		ret = error("'--format pprof' writes a binary file: give '-o <file>' or "
			    "redirect the standard output");
	/* getopt takes an optional value only after '=': no file, a context */
	if (!ret && optind < argc && o->slowest && !o->slowest_context &&
	    access(argv[optind], F_OK)) {
		usage_error(cmd_report_usage,
			    "unexpected argument '%s' (a context goes as --slowest=%s)",
			    argv[optind], argv[optind]);
		ret = -1;
	}
	if (!ret) {
		o->inputs = xmalloc((size_t)(argc - optind + 1) * sizeof(*o->inputs));
		if (o->input)
			o->inputs[o->ninputs++] = o->input;
		while (optind < argc)
			o->inputs[o->ninputs++] = argv[optind++];
		if (!o->ninputs)
			o->inputs[o->ninputs++] = "varperf.data";
		o->input = o->inputs[0];
	}
	if (!ret && o->ninputs > 1)
		ret = cmd_report_check_runs(o);
	return ret;
}

static int cmd_report_check_params(const struct cmd_report_opts *o)
{
	char msg[256] = "";

	if (vp_analysis_params_check(&o->rec.params, msg, sizeof(msg)) < 0 ||
	    vp_sources_params_check(&o->sources, msg, sizeof(msg)) < 0 ||
	    vp_vcg_params_check(&o->vcg, msg, sizeof(msg)) < 0)
		return error("invalid analysis parameters: %s", msg[0] ? msg : "out of range");
	return 0;
}

/* What the samples cannot tell well: intervals wider than --precision. */
static void cmd_report_sampled_warnings(const struct report *r, int text)
{
	double max_half;
	size_t wide;

	/* auto mode's samples only chose what phase 2 probed: their
	 * precision is no result, and no option of record's would change it */
	if (r->hdr->mode == VP_MODE_AUTO)
		return;
	/* as the text report's note under its table counts them */
	wide = text ? report_sampled_wide_rows(r, &max_half) : report_sampled_wide(r, &max_half);
	if (wide)
		warning("'%s': %zu sampled share%s wider than +/-%g%% at %g%% confidence (up to "
			"+/-%.2f%%): record longer or at a higher -F (%" PRIu64 " samples needed)",
			r->input, wide, wide == 1 ? " is" : "s are", r->precision * 100,
			r->confidence * 100, max_half * 100,
			vp_samples_needed(0.5, r->precision, r->z));
}

/* The text report (and the runs' section) into @f. */
struct text_print {
	const struct cmd_report_opts *o;
	struct report *r;
};

static int text_print(void *ctx, FILE *f)
{
	struct text_print *t = ctx;
	FILE *saved = t->r->out;
	int ret;

	t->r->out = f;
	ret = report_runs_text(t->r) < 0 ? -1
	      : t->o->slowest		  ? report_slowest_text(t->r)
					  : report_text(t->r);
	t->r->out = saved;
	return ret;
}

/*
 * The text report fits the terminal, or VP_TEXT_WIDTH columns in a pipe or
 * a file: a wider line is folded, unless --wide.  The report is written
 * whole first, so that its printers need not know.
 */
static int cmd_report_text_fitted(const struct cmd_report_opts *o, struct report *r)
{
	struct text_print t = { o, r };

	return vp_print_fitted(r->out, o->wide	   ? 0
				       : o->output ? VP_TEXT_WIDTH
						   : vp_term_width(STDOUT_FILENO),
			       text_print, &t);
}

static int cmd_report_print(const struct cmd_report_opts *o, struct report *r,
			    struct vp_recording *rec)
{
	struct vp_output out = { .fd = -1 };
	FILE *f = stdout;
	int ret;

	/* a context that names no node is an error, before any output */
	if (o->slowest && o->slowest_context) {
		size_t n;
		uint8_t *want = report_slowest_nodes(r, &n);

		free(want);
		if (!want)
			return -1;
		if (!n)
			return error("no calling context of '%s' matches '%s'", o->input,
				     o->slowest_context);
	}

	/* beside the output until whole: a failed report leaves an old one */
	if (o->output) {
		f = vp_output_open(&out, o->output);
		if (!f)
			return -1;
	}
	r->out = f;
	switch (o->format) {
	case FORMAT_JSON:
		ret = report_json(r);
		break;
	case FORMAT_DOT:
		ret = report_vcg_dot(r);
		break;
	case FORMAT_CHROME:
		ret = report_chrome(r, rec);
		break;
	case FORMAT_FOLDED:
		ret = report_folded(r, rec);
		break;
	case FORMAT_HTML:
		ret = report_html(r);
		break;
	case FORMAT_PPROF:
		ret = report_pprof(r);
		break;
	default:
		ret = cmd_report_text_fitted(o, r);
		break;
	}
	if (ret != -2 && (fflush(f) || ferror(f)))
		ret = -1;
	if (ret == -1)
		error("cannot write '%s': %s", o->output ? o->output : "standard output",
		      strerror(errno));
	if (o->output && vp_output_close(&out, !ret) < 0)
		ret = -1;
	return ret ? -1 : 0;
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

	/* the extra passes read one file's events: merged runs get none */
	err = vp_sources_run(src, r->tree, r->an, r->runs ? NULL : r->reader, &o->sources);
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

/* Open, read, build and analyse the recording @path, or say why not. */
static struct vp_recording *cmd_report_open(const struct cmd_report_opts *o, const char *path)
{
	struct vp_recording *rec;
	char msg[512] = "";
	int err;

	err = vp_recording_open(path, &o->rec, &rec, msg, sizeof(msg));
	if (err == -E2BIG) {
		struct vp_budget b = { o->rec.max_memory, 0 };

		analysis_budget_error(path, &b);
	} else if (err == -ENODATA) {
		error("%s: --time=%s cannot be used", msg, vp_time_base_name(o->rec.time));
	} else if (err < 0) {
		error("%s", msg);
	}
	return err < 0 ? NULL : rec;
}

/*
 * Several recordings of one program as one report (core/merge.h): the
 * merged tree analysed as one recording's, the runs as replicates.
 */
/* What the options say of the report, one recording or several. */
static void report_options(const struct cmd_report_opts *o, struct report *r)
{
	r->all = o->all;
	r->wide = o->wide;
	r->vcg_only = o->vcg_only;
	r->contexts = o->contexts;
	r->precision = o->precision;
	r->confidence = o->confidence;
	r->z = vp_confidence_z(o->confidence);
	r->folded_value = o->folded_value;
}

static int cmd_report_runs(const struct cmd_report_opts *o)
{
	struct vp_recording **recs = xcalloc(o->ninputs, sizeof(*recs));
	struct vp_runs runs;
	struct vp_sources src;
	struct vp_vcg vcg;
	uint8_t *labels = NULL;
	struct report r;
	char msg[1024] = "", *label = NULL;
	int ret = 1, have_runs = 0, err;
	size_t i, len;

	for (i = 0; i < o->ninputs; i++) {
		recs[i] = cmd_report_open(o, o->inputs[i]);
		if (!recs[i])
			goto out;
		if (recs[i]->hdr->mode == VP_MODE_SAMPLE) {
			error("'%s' is a sample-mode recording: merging takes probed calls, and "
			      "sampled stacks of several files do not merge yet",
			      o->inputs[i]);
			goto out;
		}
		if (analysis_warnings(recs[i], o->strict, "reporting") < 0)
			goto out;
	}
	/* own time by default for some and not others: all alike */
	if (vp_recording_same_time(recs, o->ninputs, &o->rec, msg, sizeof(msg)) < 0) {
		error("%s", msg);
		goto out;
	}
	err = vp_runs_merge(&runs, recs, o->ninputs, &o->rec, msg, sizeof(msg));
	have_runs = 1;
	if (err < 0) {
		error("%s%s", msg, err == -E2BIG ? " (--max-memory sets it)" : "");
		goto out;
	}
	/* the report is of them all: "a.data+b.data", as compare names a group */
	for (i = 0, len = 1; i < o->ninputs; i++)
		len += strlen(o->inputs[i]) + 1;
	label = xmalloc(len);
	label[0] = '\0';
	for (i = 0; i < o->ninputs; i++) {
		if (i)
			strcat(label, "+");
		strcat(label, o->inputs[i]);
	}
	report_init_runs(&r, label, &runs);
	report_options(o, &r);
	if (o->format == FORMAT_PPROF) {
		if (!cmd_report_print(o, &r, recs[0]))
			ret = 0;
		goto out;
	}
	if (cmd_report_dva(o, &r, &src, &vcg, &labels) < 0)
		goto out;
	if (!cmd_report_print(o, &r, recs[0]))
		ret = 0;
	vp_vcg_release(&vcg);
	vp_sources_release(&src);
	free(labels);
out:
	if (have_runs)
		vp_runs_release(&runs);
	for (i = 0; i < o->ninputs; i++)
		if (recs[i])
			vp_recording_free(recs[i]);
	free(recs);
	free(label);
	return ret;
}

static int cmd_report_run(const struct cmd_report_opts *o)
{
	struct vp_recording *rec;
	struct vp_sources src;
	struct vp_vcg vcg;
	uint8_t *labels = NULL;
	uint32_t *probed_of = NULL;
	struct report_html *html = NULL;
	struct report r;
	int ret = 1;

	if (o->ninputs > 1)
		return cmd_report_runs(o);
	rec = cmd_report_open(o, o->input);
	if (!rec)
		goto out;
	report_init(&r, o->input, rec);
	report_options(o, &r);
	r.slowest = o->slowest;
	r.slowest_context = o->slowest_context;
	if (analysis_warnings(rec, o->strict, "reporting") < 0)
		goto out_rec;
	if (r.sampled)
		cmd_report_sampled_warnings(&r, o->format == FORMAT_TEXT);
	r.typical = o->typical;
	/* the exports need no Dominant Variance Analysis */
	if (o->format == FORMAT_CHROME || o->format == FORMAT_FOLDED || o->format == FORMAT_PPROF) {
		if (!cmd_report_print(o, &r, rec))
			ret = 0;
		goto out_rec;
	}
	if (cmd_report_dva(o, &r, &src, &vcg, &labels) < 0)
		goto out_rec;
	probed_of = report_match_probed(&r);
	r.probed_of = probed_of;
	/* its second pass over the events, before the output file is created */
	if (o->format == FORMAT_HTML && report_html_prepare(&r, rec, &html) < 0)
		goto out_dva;
	r.html = html;
	if (!cmd_report_print(o, &r, rec))
		ret = 0;
out_dva:
	report_html_free(html);
	free(probed_of);
	vp_vcg_release(&vcg);
	vp_sources_release(&src);
	free(labels);
out_rec:
	vp_recording_free(rec);
out:
	return ret;
}

int cmd_report(int argc, char **argv)
{
	struct cmd_report_opts o;
	int ret;

	memset(&o, 0, sizeof(o));
	o.format = FORMAT_TEXT;
	if (analysis_opts_default(&o.rec) < 0)
		return EXIT_USAGE;
	o.rec.samples = 1;
	vp_sources_params_default(&o.sources);
	vp_vcg_params_default(&o.vcg);
	o.vcg.beta = o.rec.params.beta;
	o.precision = 0.01;
	o.confidence = 0.95;

	ret = cmd_report_parse(argc, argv, &o);
	if (ret > 0) {
		usage_print(stdout, cmd_report_usage, 1);
		return 0;
	}
	if (ret < 0 || cmd_report_check_params(&o) < 0)
		return EXIT_USAGE;
	/* fopen() would empty the recording before it is read */
	for (size_t i = 0; o.output && i < o.ninputs; i++)
		if (vp_output_same(o.output, o.inputs[i])) {
			error("cannot write '%s': it is the input '%s'", o.output, o.inputs[i]);
			free(o.inputs);
			return EXIT_USAGE;
		}
	ret = cmd_report_run(&o);
	free(o.inputs);
	return ret;
}
