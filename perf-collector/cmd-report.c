/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * cmd-report.c - `varperf report`: read a varperf.data file, build the
 * calling-context tree, run seed 000's analysis and print it as text or JSON.
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cct.h"
#include "core/datafile.h"
#include "core/patterns.h"
#include "builtin.h"
#include "report.h"
#include "util.h"

enum { EXIT_USAGE = 129 };

enum cmd_report_format { FORMAT_TEXT, FORMAT_JSON };

enum {
	OPT_CUTOFF = 256,
	OPT_PROBABILITY,
	OPT_WINDOW,
	OPT_COV_THRESHOLD,
	OPT_SIMILARITY,
	OPT_BETA,
	OPT_STRICT,
	OPT_ALL,
	OPT_FORMAT,
};

/* Same order as OPTIONS in man/varperf-report.1. */
static const struct option cmd_report_options[] = {
	{ "input", required_argument, NULL, 'i' },
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "cutoff", required_argument, NULL, OPT_CUTOFF },
	{ "probability", required_argument, NULL, OPT_PROBABILITY },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "cov-threshold", required_argument, NULL, OPT_COV_THRESHOLD },
	{ "similarity", required_argument, NULL, OPT_SIMILARITY },
	{ "beta", required_argument, NULL, OPT_BETA },
	{ "all", no_argument, NULL, OPT_ALL },
	{ "strict", no_argument, NULL, OPT_STRICT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const char *const cmd_report_usage[] = {
	"usage: varperf report [<options>]",
	"",
	"    -i, --input <file>         data file to read (default: varperf.data)",
	"    -o, --output <file>        write the report to <file> instead of stdout",
	"    --format <text|json>       report format (default: text)",
	"    --cutoff <pct>             significance: share of the total time a node",
	"                               needs (default: 0.02%)",
	"    --probability <p>          Chebyshev probability (default: 0.96)",
	"    --window <w>               Chebyshev window as a multiple of the mean",
	"                               (default: 2.0)",
	"    --cov-threshold <c>        CoV for high variance; overrides --probability",
	"                               and --window (default: window*sqrt(1-p) = 0.4)",
	"    --similarity <pct>         patterns merge when means and CoVs are within",
	"                               <pct> of each other (default: 10%)",
	"    --beta <b>                 Pattern Set: VIM >= <b> * max VIM (default: 0.1)",
	"    --all                      list every significant node and every pattern",
	"    --strict                   treat a truncated or incomplete file as an error",
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

/*
 * A fraction, written either plainly ("0.0002") or as a percentage
 * ("0.02%").  Only finite numbers; the range is checked by the caller.
 */
static int cmd_report_parse_fraction(const char *s, double *ret)
{
	char *end;
	double v;

	if (!*s || strchr(" \t\n", *s))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno == ERANGE)
		return -1;
	if (*end == '%') {
		v /= 100.0;
		end++;
	}
	if (*end || !isfinite(v))
		return -1;
	*ret = v;
	return 0;
}

/* Range of each numeric option, and the words that describe it. */
struct cmd_report_range {
	const char *name;
	double lo, hi;	 /* hi = HUGE_VAL: no upper bound */
	int lo_open;	 /* lo itself excluded */
	int hi_open;	 /* hi itself excluded */
	const char *expect;
};

static const struct cmd_report_range cmd_report_ranges[] = {
	{ "cutoff", 0, 1, 0, 1, "must be at least 0 and less than 1 (100%)" },
	{ "probability", 0, 1, 1, 1, "must be greater than 0 and less than 1" },
	{ "window", 0, HUGE_VAL, 1, 0, "must be a number greater than 0" },
	{ "cov-threshold", 0, HUGE_VAL, 0, 0, "must be a number of at least 0" },
	{ "similarity", 0, 1, 0, 0, "must be between 0 and 1 (100%)" },
	{ "beta", 0, 1, 0, 0, "must be between 0 and 1" },
};

static int cmd_report_set_param(const char *name, const char *arg, double *ret)
{
	const struct cmd_report_range *rg = NULL;
	double v;

	for (size_t i = 0; i < sizeof(cmd_report_ranges) / sizeof(cmd_report_ranges[0]); i++)
		if (!strcmp(cmd_report_ranges[i].name, name))
			rg = &cmd_report_ranges[i];
	if (cmd_report_parse_fraction(arg, &v) || v < rg->lo || (rg->lo_open && v == rg->lo) ||
	    v > rg->hi || (rg->hi_open && v == rg->hi))
		return error("invalid value '%s' for '--%s': %s", arg, name, rg->expect);
	*ret = v;
	return 0;
}

struct cmd_report_opts {
	const char *input;
	const char *output;
	enum cmd_report_format format;
	struct vp_analysis_params params;
	int all;
	int strict;
};

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
			} else {
				ret = error("invalid value '%s' for '--format': "
					    "must be 'text' or 'json'",
					    optarg);
			}
			break;
		case OPT_CUTOFF:
			ret = cmd_report_set_param("cutoff", optarg, &p->cutoff);
			break;
		case OPT_PROBABILITY:
			ret = cmd_report_set_param("probability", optarg, &p->probability);
			break;
		case OPT_WINDOW:
			ret = cmd_report_set_param("window", optarg, &p->window);
			break;
		case OPT_COV_THRESHOLD:
			ret = cmd_report_set_param("cov-threshold", optarg, &p->cov_threshold);
			break;
		case OPT_SIMILARITY:
			ret = cmd_report_set_param("similarity", optarg, &p->similarity);
			break;
		case OPT_BETA:
			ret = cmd_report_set_param("beta", optarg, &p->beta);
			break;
		case OPT_ALL:
			o->all = 1;
			break;
		case OPT_STRICT:
			o->strict = 1;
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
	if (!ret && optind < argc) {
		error("unexpected argument '%s'", argv[optind]);
		cmd_report_print_usage(stderr, 0);
		ret = -1;
	}
	argv[0] = argv0;
	return ret;
}

static int cmd_report_check_params(const struct vp_analysis_params *p)
{
	char msg[256] = "";

	if (vp_analysis_params_check(p, msg, sizeof(msg)) < 0)
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
	if (r->lost)
		warning("'%s': %llu records were lost while recording; their invocations are "
			"counted as unpaired",
			o->input, (unsigned long long)r->lost);
	return 0;
}

/* The kernel's count arrives twice: LOST records and the trailer's total. */
static uint64_t cmd_report_lost(struct vp_reader *reader, const struct vp_trailer *tr)
{
	uint64_t lost = vp_reader_lost(reader);

	if (tr->present && tr->lost > lost)
		lost = tr->lost;
	return lost;
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
	ret = o->format == FORMAT_JSON ? report_json(r) : report_text(r);
	if (fflush(f) || ferror(f))
		ret = -1;
	if (f != stdout && fclose(f))
		ret = -1;
	if (ret < 0)
		return error("cannot write '%s': %s", o->output ? o->output : "standard output",
			     strerror(errno));
	return 0;
}

static int cmd_report_run(const struct cmd_report_opts *o)
{
	struct vp_reader *reader = NULL;
	struct vp_build_totals totals;
	struct vp_analysis an;
	struct vp_cct tree;
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
	err = vp_cct_init(&tree);
	if (err < 0) {
		error("cannot build the calling-context tree: %s", strerror(-err));
		goto out_reader;
	}
	memset(&totals, 0, sizeof(totals));
	err = vp_build_file(reader, &tree, &totals);
	if (err < 0) {
		const char *m = vp_reader_error(reader);

		if (m && *m)
			error("%s", m);
		else
			error("cannot read '%s': %s", o->input, strerror(-err));
		goto out_tree;
	}

	memset(&r, 0, sizeof(r));
	r.input = o->input;
	r.reader = reader;
	r.hdr = vp_reader_header(reader);
	r.trailer = vp_reader_trailer(reader);
	r.tree = &tree;
	r.totals = &totals;
	r.an = &an;
	r.all = o->all;
	r.lost = cmd_report_lost(reader, r.trailer);
	if (cmd_report_file_warnings(o, &r) < 0)
		goto out_tree;

	err = vp_analysis_run(&an, &tree, r.hdr->nfuncs, &o->params);
	if (err < 0) {
		error("cannot analyse '%s': %s", o->input, strerror(-err));
		goto out_tree;
	}
	if (!cmd_report_print(o, &r))
		ret = 0;
	vp_analysis_release(&an);
out_tree:
	vp_cct_release(&tree);
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

	ret = cmd_report_parse(argc, argv, &o);
	if (ret > 0) {
		cmd_report_print_usage(stdout, 1);
		return 0;
	}
	if (ret < 0 || cmd_report_check_params(&o.params) < 0)
		return EXIT_USAGE;
	return cmd_report_run(&o);
}
