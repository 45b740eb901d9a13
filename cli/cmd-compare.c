/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * cmd-compare.c - `varperf compare A B`: profile versus regression (Kumar
 * et al. 2008, §4).  A's patterns are evaluated on B; the exit status says whether
 * the Pattern Sets overlap enough, so that a CI job can gate on it.
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cct.h"
#include "core/compare.h"
#include "core/datafile.h"
#include "core/merge.h"
#include "core/patterns.h"
#include "core/recording.h"
#include "analysis-opts.h"
#include "builtin.h"
#include "textwidth.h"
#include "util/output.h"
#include "report/report.h"
#include "usage.h"
#include "util/util.h"

/* diff(1)'s convention: same, different, trouble; then cannot tell (and
 * EXIT_USAGE, every command's). */
enum {
	EXIT_AGREE = 0,
	EXIT_DISAGREE = 1,
	EXIT_TROUBLE = 2,
	EXIT_CANNOT_TELL = 3,
};

enum cmd_compare_format { COMPARE_TEXT, COMPARE_JSON };

enum {
	OPT_MIN_OVERLAP = 256,
	OPT_SYMMETRIC,
	OPT_ALPHA,
	OPT_FORMAT,
	OPT_ALL,
	OPT_STRICT,
	OPT_WIDE,
};

/* Same order as OPTIONS in man/varperf-compare.1. */
static const struct option cmd_compare_options[] = {
	{ "min-overlap", required_argument, NULL, OPT_MIN_OVERLAP },
	{ "symmetric", no_argument, NULL, OPT_SYMMETRIC },
	{ "alpha", required_argument, NULL, OPT_ALPHA },
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	ANALYSIS_LONG_OPTIONS,
	{ "raw", no_argument, NULL, OPT_RAW },
	{ "max-memory", required_argument, NULL, OPT_MAX_MEMORY },
	{ "all", no_argument, NULL, OPT_ALL },
	{ "strict", no_argument, NULL, OPT_STRICT },
	{ "wide", no_argument, NULL, OPT_WIDE },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const char *const cmd_compare_usage[] = {
	"usage: varperf compare [<options>] <profile.data> <regression.data>",
	"   or: varperf compare [<options>] <profile.data>... -- <regression.data>...",
	"",
	"Each side may be several recordings of one program, merged (as varperf",
	"report merges them), with '--' between the sides.",
	"",
	"    --min-overlap <pct>        the Pattern Sets agree when at least <pct> of the",
	"                               profile's patterns stay in the regression's",
	"                               (default: 80%)",
	"    --symmetric                also require <pct> of the regression's Pattern Set",
	"                               to come from the profile's",
	"    --alpha <a>                significance level of the tests (default: 0.05)",
	"    -o, --output <file>        write the comparison to <file>",
	"    --format <text|json>       output format (default: text)",
	ANALYSIS_USAGE,
	"    --raw                      durations as measured, probe costs included",
	"    --max-memory <size>        refuse a file whose tree would take more than <size>,",
	"                               with K/M/G suffix (default: 1G; 0: no limit)",
	"    --all                      list every pattern of the profile and every",
	"                               significant calling context",
	"    --strict                   treat an incomplete data file as an error",
	"    --wide                     text lines whole (by default they fit the",
	"                               terminal's width or 100 columns, wider ones folded)",
	"    -h, --help                 show this help",
	"",
	"Exit status: 0 the recordings agree, 1 they differ, 2 trouble, 3 cannot tell,",
	"129 usage.",
	NULL,
};

struct cmd_compare_opts {
	const char *path[2];	/* each side's label: its file, or its files */
	char **files[2];	/* each side's files */
	size_t nfiles[2];
	const char *output;
	enum cmd_compare_format format;
	struct vp_recording_opts rec; /* analysis parameters, --time, --raw, ... */
	struct vp_compare_params cmp;
	int all;
	int strict;
	int wide;	/* --wide: text lines whole */
};

/* "A B", or "A1 A2 ... -- B1 B2 ...": the files of each side and their labels. */
static int cmd_compare_sides(int argc, char **argv, struct cmd_compare_opts *o)
{
	int sep = -1, i;

	for (i = optind; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			if (sep >= 0) {
				usage_error(cmd_compare_usage, "unexpected argument '--': one '--' "
					    "parts the profile's recordings from the regression's");
				return -1;
			}
			sep = i;
		}
	if (sep < 0) {
		if (argc - optind < 2) {
			usage_error(cmd_compare_usage,
				    "two data files are needed: the profile and the regression");
			return -1;
		}
		if (argc - optind > 2) {
			usage_error(cmd_compare_usage,
				    "unexpected argument '%s' (several recordings a side go as "
				    "<profile.data>... -- <regression.data>...)",
				    argv[optind + 2]);
			return -1;
		}
		sep = optind + 1;
		o->files[0] = &argv[optind];
		o->nfiles[0] = 1;
		o->files[1] = &argv[sep];
		o->nfiles[1] = 1;
	} else {
		o->files[0] = &argv[optind];
		o->nfiles[0] = (size_t)(sep - optind);
		o->files[1] = &argv[sep + 1];
		o->nfiles[1] = (size_t)(argc - sep - 1);
		if (!o->nfiles[0] || !o->nfiles[1]) {
			usage_error(cmd_compare_usage, "%s",
				    o->nfiles[0] ? "no regression recording after '--'"
						 : "no profile recording before '--'");
			return -1;
		}
	}
	for (i = 0; i < 2; i++) {
		if (o->nfiles[i] == 1) {
			o->path[i] = o->files[i][0];
		} else {
			/* "a1.data+a2.data": the side named by its files */
			size_t len = 1;
			char *l;

			for (size_t k = 0; k < o->nfiles[i]; k++)
				len += strlen(o->files[i][k]) + 1;
			l = xmalloc(len);
			l[0] = '\0';
			for (size_t k = 0; k < o->nfiles[i]; k++) {
				if (k)
					strcat(l, "+");
				strcat(l, o->files[i][k]);
			}
			o->path[i] = l;
		}
	}
	return 0;
}

static int cmd_compare_parse(int argc, char **argv, struct cmd_compare_opts *o)
{
	int c, ret = 0;

	usage_getopt_start();
	while (!ret && (c = getopt_long(argc, argv, "+:o:h", cmd_compare_options, NULL)) != -1) {
		switch (c) {
		case OPT_MIN_OVERLAP:
			ret = opt_fraction("min-overlap", optarg, &o->cmp.min_overlap);
			break;
		case OPT_SYMMETRIC:
			o->cmp.symmetric = 1;
			break;
		case OPT_ALPHA:
			ret = opt_fraction("alpha", optarg, &o->cmp.alpha);
			break;
		case 'o':
			o->output = optarg;
			break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "text"))
				o->format = COMPARE_TEXT;
			else if (!strcmp(optarg, "json"))
				o->format = COMPARE_JSON;
			else
				ret = error("invalid value '%s' for '--format': must be 'text' or "
					    "'json'",
					    optarg);
			break;
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
			/* the analysis options report has too */
			ret = analysis_option(c, optarg, &o->rec);
			if (!ret)
				usage_getopt_error(c, argv, cmd_compare_options, cmd_compare_usage);
			ret = ret > 0 ? 0 : -1;
			break;
		}
	}
	if (!ret)
		ret = cmd_compare_sides(argc, argv, o);
	return ret;
}

/* One side: a recording, or several of one program merged (core/merge.h). */
struct cmd_compare_side {
	struct vp_recording **recs;
	size_t n;
	struct vp_runs runs; /* with n > 1 */
	int have_runs;
	struct report r; /* for the shared name and time helpers */
	struct vp_compare_input in;
};

static int cmd_compare_load_one(const struct cmd_compare_opts *o, const char *path,
				struct vp_recording **ret)
{
	char msg[512] = "";
	int err;

	err = vp_recording_open(path, &o->rec, ret, msg, sizeof(msg));
	if (err == -E2BIG) {
		struct vp_budget b = { o->rec.max_memory, 0 };

		return analysis_budget_error(path, &b);
	}
	if (err == -ENODATA)
		return error("%s: --time=%s cannot be used", msg, vp_time_base_name(o->rec.time));
	if (err < 0)
		return error("%s", msg);
	return analysis_warnings(*ret, o->strict, "comparing");
}

static int cmd_compare_load(const struct cmd_compare_opts *o, int i, struct cmd_compare_side *s)
{
	s->n = o->nfiles[i];
	s->recs = xcalloc(s->n, sizeof(*s->recs));
	for (size_t k = 0; k < s->n; k++)
		if (cmd_compare_load_one(o, o->files[i][k], &s->recs[k]) < 0)
			return -1;
	return 0;
}

/*
 * By default a recording whose variance is mostly preemption is read in
 * own time (vp_recording_open): all of both sides must measure the same.
 */
static int cmd_compare_same_time(const struct cmd_compare_opts *o, struct cmd_compare_side *side)
{
	size_t n = side[0].n + side[1].n;
	struct vp_recording **all = xcalloc(n, sizeof(*all));
	char msg[512] = "";
	int err;

	memcpy(all, side[0].recs, side[0].n * sizeof(*all));
	memcpy(all + side[0].n, side[1].recs, side[1].n * sizeof(*all));
	err = vp_recording_same_time(all, n, &o->rec, msg, sizeof(msg));
	memcpy(side[0].recs, all, side[0].n * sizeof(*all));
	memcpy(side[1].recs, all + side[0].n, side[1].n * sizeof(*all));
	free(all);
	if (err < 0)
		return error("%s", msg);
	for (size_t k = 0; k < n; k++)
		analysis_time_note(k < side[0].n ? side[0].recs[k] : side[1].recs[k - side[0].n]);
	return 0;
}

/* Side @i as one recording or several merged, once they measure alike. */
static int cmd_compare_build(const struct cmd_compare_opts *o, int i, struct cmd_compare_side *s)
{
	char msg[1024] = "";
	int err;

	if (s->n == 1) {
		report_init(&s->r, o->path[i], s->recs[0]);
		s->in = (struct vp_compare_input){ &s->recs[0]->tree, s->recs[0]->hdr,
						   s->recs[0]->reader, &s->recs[0]->an };
		return 0;
	}
	err = vp_runs_merge(&s->runs, s->recs, s->n, &o->rec, msg, sizeof(msg));
	s->have_runs = 1;
	if (err < 0)
		return error("%s", msg);
	report_init_runs(&s->r, o->path[i], &s->runs);
	s->in = (struct vp_compare_input){ &s->runs.tree, s->recs[0]->hdr, s->recs[0]->reader,
					   &s->runs.an };
	return 0;
}

static void cmd_compare_unload(struct cmd_compare_side *s)
{
	if (s->have_runs)
		vp_runs_release(&s->runs);
	for (size_t k = 0; k < s->n; k++)
		if (s->recs[k])
			vp_recording_free(s->recs[k]);
	free(s->recs);
}

static int cmd_compare_text(void *ctx, FILE *f)
{
	struct report_compare *rc = ctx;

	rc->out = f;
	return report_compare_text(rc);
}

static int cmd_compare_print(FILE *f, const struct cmd_compare_opts *o,
			     const struct cmd_compare_side *side, const struct vp_compare *c)
{
	struct report_compare rc = {
		.out = f,
		.path = { o->path[0], o->path[1] },
		.side = { &side[0].r, &side[1].r },
		.c = c,
		.params = &o->rec.params,
		.time = side[0].recs[0]->time,
		.all = o->all,
	};

	if (o->format == COMPARE_JSON)
		return report_compare_json(&rc);
	/* as report's text: the terminal's width, or 100 columns in a file */
	return vp_print_fitted(f, o->wide		    ? 0
				  : o->output || f != stdout ? VP_TEXT_WIDTH
							     : vp_term_width(STDOUT_FILENO),
			       cmd_compare_text, &rc);
}

static int cmd_compare_run(const struct cmd_compare_opts *o)
{
	struct cmd_compare_side side[2];
	struct vp_compare_input in[2];
	struct vp_compare c;
	struct vp_output out = { .fd = -1 };
	FILE *f = stdout;
	int err, ret = EXIT_TROUBLE;

	memset(side, 0, sizeof(side));
	for (int i = 0; i < 2; i++)
		if (cmd_compare_load(o, i, &side[i]) < 0)
			goto out;
	if (cmd_compare_same_time(o, side) < 0)
		goto out;
	for (int i = 0; i < 2; i++) {
		if (cmd_compare_build(o, i, &side[i]) < 0)
			goto out;
		in[i] = side[i].in;
	}
	err = vp_compare_run(&c, &in[0], &in[1], &o->cmp);
	if (err < 0) {
		error("cannot compare '%s' with '%s': %s", o->path[0], o->path[1], strerror(-err));
		goto out;
	}
	if (c.program == VP_PROG_OTHER)
		warning("'%s' and '%s' record different programs ('%s' and '%s')", o->path[0],
			o->path[1], report_program_path(&side[0].r),
			report_program_path(&side[1].r));
	/* beside the output until whole, as report's (util/output.h) */
	if (o->output) {
		f = vp_output_open(&out, o->output);
		if (!f)
			goto out_cmp;
	}
	err = cmd_compare_print(f, o, side, &c) < 0;
	err = fflush(f) || ferror(f) || err;
	if (err)
		error("cannot write '%s': %s", o->output ? o->output : "standard output",
		      strerror(errno));
	if (o->output && vp_output_close(&out, !err) < 0)
		err = 1;
	if (err)
		goto out_cmp;
	ret = c.verdict == VP_VERDICT_AGREE    ? EXIT_AGREE
	      : c.verdict == VP_VERDICT_DIFFER ? EXIT_DISAGREE
					       : EXIT_CANNOT_TELL;
out_cmp:
	vp_compare_release(&c);
out:
	cmd_compare_unload(&side[0]);
	cmd_compare_unload(&side[1]);
	return ret;
}

int cmd_compare(int argc, char **argv)
{
	struct cmd_compare_opts o;
	char msg[256] = "";
	int ret;

	memset(&o, 0, sizeof(o));
	o.format = COMPARE_TEXT;
	vp_recording_opts_default(&o.rec);
	vp_compare_params_default(&o.cmp);
	ret = cmd_compare_parse(argc, argv, &o);
	if (ret > 0) {
		usage_print(stdout, cmd_compare_usage, 1);
		return 0;
	}
	if (ret < 0)
		return EXIT_USAGE;
	if (vp_analysis_params_check(&o.rec.params, msg, sizeof(msg)) < 0) {
		error("invalid analysis parameters: %s", msg);
		return EXIT_USAGE;
	}
	for (int i = 0; i < 2; i++)
		for (size_t k = 0; o.output && k < o.nfiles[i]; k++)
			if (vp_output_same(o.output, o.files[i][k])) {
				error("cannot write '%s': it is the input '%s'", o.output,
				      o.files[i][k]);
				ret = -1;
			}
	if (!ret)
		ret = cmd_compare_run(&o);
	else
		ret = EXIT_USAGE;
	for (int i = 0; i < 2; i++)
		if (o.nfiles[i] > 1)
			free((char *)o.path[i]);
	return ret;
}
