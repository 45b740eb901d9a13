/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * task-model.c - what `varperf explain` and `varperf bound` share: their
 * options, finding the task's calling context, reading its invocations
 * and fitting the regression of Poplavko et al. 2016 (core/regression.c).
 * The two commands differ in their options and in what they print.
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
#include "core/recording.h"
#include "core/regression.h"
#include "core/regression-task.h"
#include "analysis-opts.h"
#include "report/report.h"
#include "task-model.h"
#include "textwidth.h"
#include "usage.h"
#include "util/escape.h"
#include "util/util.h"

enum {
	OPT_CONTEXT = 256,
	OPT_ALPHA,
	OPT_ALPHA_SW,
	OPT_COOK,
	OPT_TRAIN,
	OPT_SEED,
	OPT_MAX,
	OPT_FORMAT,
	OPT_ALL,
	OPT_WIDE,
};

/* The options explain and bound both take (the order of --help and the
 * man pages is their usage text's: getopt needs none). */
#define TASK_MODEL_COMMON_OPTIONS                                   \
	{ "input", required_argument, NULL, 'i' },                  \
	{ "context", required_argument, NULL, OPT_CONTEXT },        \
	{ "alpha", required_argument, NULL, OPT_ALPHA },            \
	{ "alpha-sw", required_argument, NULL, OPT_ALPHA_SW },      \
	{ "cook", required_argument, NULL, OPT_COOK },              \
	{ "format", required_argument, NULL, OPT_FORMAT },          \
	{ "time", required_argument, NULL, OPT_TIME },              \
	{ "raw", no_argument, NULL, OPT_RAW },                      \
	{ "all", no_argument, NULL, OPT_ALL },                      \
	{ "wide", no_argument, NULL, OPT_WIDE },                    \
	{ "help", no_argument, NULL, 'h' }

static const struct option explain_options[] = {
	TASK_MODEL_COMMON_OPTIONS,
	{ NULL, 0, NULL, 0 },
};

static const struct option bound_options[] = {
	TASK_MODEL_COMMON_OPTIONS,
	{ "train", required_argument, NULL, OPT_TRAIN },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "max", required_argument, NULL, OPT_MAX },
	{ NULL, 0, NULL, 0 },
};

#define TASK_MODEL_COMMON_USAGE                                                               \
	"    -i, --input <file>         data file to read (default: varperf.data)",              \
	"    --context <chain>          the task's calling context when its function has",       \
	"                               several: callers and the task, '/' or ';' between,",     \
	"                               each FUNC, FUNC:LINE or FUNC@FILE:LINE",                 \
	"    --alpha <a>                confidence level 1 - <a> of the intervals (default:",    \
	"                               0.05)",                                                  \
	"    --alpha-sw <a>             stepwise regression: a predictor enters and stays",      \
	"                               while its partial F test's p-value is below <a>",        \
	"                               (default: 0.05)",                                        \
	"    --cook <theta>             set invocations of Cook's distance above <theta>",       \
	"                               aside (default: 1; 0: keep all)"

#define TASK_MODEL_TAIL_USAGE                                                                 \
	"    --format <text|json>       output format (default: text)",                          \
	"    --time <base>              what the durations measure: wall, cpu, offcpu,",          \
	"                               blocked, preempted or own (default: wall, or own",       \
	"                               when preemption makes the variance)",                    \
	"    --raw                      durations as measured, probe costs included",            \
	"    --all                      list every bad sample",                                  \
	"    --wide                     text lines whole (by default they fit the terminal's",   \
	"                               width or 100 columns, wider ones folded)",               \
	"    -h, --help                 show this help"

static const char *const explain_usage[] = {
	"usage: varperf explain [<options>] <task>",
	"",
	TASK_MODEL_COMMON_USAGE,
	TASK_MODEL_TAIL_USAGE,
	NULL,
};

static const char *const bound_usage[] = {
	"usage: varperf bound [<options>] <task>",
	"",
	TASK_MODEL_COMMON_USAGE,
	"    --train <share>            share of the invocations that trains the model, the",
	"                               rest tests it (default: 0.5)",
	"    --seed <n>                 seed of the random split (default: 1)",
	"    --max <callsite>=<n>       at most <n> calls through <callsite> (its callee's",
	"                               name or file:line) instead of the most recorded",
	TASK_MODEL_TAIL_USAGE,
	NULL,
};

struct task_model_opts {
	int bound;
	const char *input;
	const char *task;
	const char *context;
	int json;
	int all;
	int wide; /* --wide: text lines whole */
	struct vp_recording_opts rec;
	struct vp_regress_opts reg;
	char **max; /* the --max arguments */
	size_t nmax;
};

/* A number from @lo (no upper bound). */
static int parse_at_least(const char *name, const char *arg, double lo, double *ret)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v >= lo && v < INFINITY))
		return error("invalid value '%s' for '--%s': must be a number of at least %g", arg,
			     name, lo);
	*ret = v;
	return 0;
}

/* A share: a number or a percentage ("0.5", "50%") in (0, 1), or (0, 1]
 * with @one. */
static int parse_share(const char *name, const char *arg, int one, double *ret)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (!errno && end != arg && *end == '%' && !end[1]) {
		v /= 100;
		end++;
	}
	if (errno || end == arg || *end || !(v > 0) || v > 1 || (!one && v == 1))
		return error("invalid value '%s' for '--%s': must be greater than 0 and %s 1", arg,
			     name, one ? "at most" : "less than");
	*ret = v;
	return 0;
}

static int parse_opt(int c, struct task_model_opts *o)
{
	switch (c) {
	case 'i':
		o->input = optarg;
		return 0;
	case OPT_CONTEXT:
		o->context = optarg;
		return 0;
	case OPT_ALPHA:
		return parse_share("alpha", optarg, 0, &o->reg.alpha);
	case OPT_ALPHA_SW:
		return parse_share("alpha-sw", optarg, 0, &o->reg.alpha_sw);
	case OPT_COOK:
		return parse_at_least("cook", optarg, 0, &o->reg.cook);
	case OPT_TRAIN:
		return parse_share("train", optarg, 1, &o->reg.train);
	case OPT_SEED: {
		char *end;

		errno = 0;
		o->reg.seed = strtoull(optarg, &end, 10);
		if (errno || end == optarg || *end || *optarg == '-')
			return error("invalid value '%s' for '--seed': must be a whole number",
				     optarg);
		return 0;
	}
	case OPT_MAX: {
		char **p = xrealloc(o->max, (o->nmax + 1) * sizeof(*p));
		const char *eq = strrchr(optarg, '=');

		o->max = p;
		if (!eq || eq == optarg || !eq[1])
			return error("invalid value '%s' for '--max': must be <callsite>=<n>",
				     optarg);
		o->max[o->nmax++] = optarg;
		return 0;
	}
	case OPT_FORMAT:
		if (!strcmp(optarg, "text") || !strcmp(optarg, "json")) {
			o->json = !strcmp(optarg, "json");
			return 0;
		}
		return error("invalid value '%s' for '--format': must be 'text' or 'json'", optarg);
	case OPT_TIME:
	case OPT_RAW:
		return analysis_option(c, optarg, &o->rec) < 0 ? -1 : 0;
	case OPT_ALL:
		o->all = 1;
		return 0;
	case OPT_WIDE:
		o->wide = 1;
		return 0;
	}
	return -2;
}

/* 1: --help, 0: go on, -1: a usage error (said).  Options may follow
 * the task ("varperf explain physics -i demo.data"): no "+". */
static int task_model_parse(int argc, char **argv, struct task_model_opts *o)
{
	const struct option *opts = o->bound ? bound_options : explain_options;
	const char *const *usage = o->bound ? bound_usage : explain_usage;
	int c, ret = 0;

	usage_getopt_start();
	while (!ret && (c = getopt_long(argc, argv, ":i:h", opts, NULL)) != -1) {
		if (c == 'h') {
			ret = 1;
			break;
		}
		ret = parse_opt(c, o);
		if (ret == -2) {
			usage_getopt_error(c, argv, opts, usage);
			ret = -1;
		}
	}
	if (!ret && optind >= argc) {
		usage_error(usage, "no task given: name a probed function");
		ret = -1;
	} else if (!ret && argc - optind > 1) {
		usage_error(usage, "unexpected argument '%s'", argv[optind + 1]);
		ret = -1;
	}
	if (!ret)
		o->task = argv[optind];
	return ret;
}

/*
 * "main;step@demo.c:12;physics@demo.c:40" of node @id: each function with
 * the call site it was called from, as --context takes it (contexts may
 * differ only there).  A chain too long for @buf keeps its innermost whole
 * elements: matched from the end, it still names the node.
 */
static void node_chain(const struct report *r, uint32_t id, char *buf, size_t len)
{
	const struct vp_cct *t = r->tree;
	uint32_t path[64];
	size_t n = 0, keep, total = 0, off = 0;
	char site[512];

	for (; id != VP_NO_NODE && t->nodes[id].parent != VP_NO_NODE && n < 64;
	     id = t->nodes[id].parent)
		path[n++] = id;
	for (keep = 0; keep < n; keep++) {
		const struct vp_cct_node *nd = &t->nodes[path[keep]];
		size_t l;

		report_callsite_str(r, nd->callsite, 1, site, sizeof(site));
		l = strlen(report_func_name(r, nd->func)) + (*site ? 1 + strlen(site) : 0) + !!keep;
		if (total + l >= len)
			break;
		total += l;
	}
	buf[0] = 0;
	while (keep-- > 0) {
		const struct vp_cct_node *nd = &t->nodes[path[keep]];

		report_callsite_str(r, nd->callsite, 1, site, sizeof(site));
		off += (size_t)snprintf(buf + off, len - off, "%s%s%s%s", off ? ";" : "",
					report_func_name(r, nd->func), *site ? "@" : "", site);
	}
}

/*
 * The task's node: of its function, in the --context given (report/
 * context.c's rules, those of report --slowest), the only one.
 */
static int find_task(const struct task_model_opts *o, const struct vp_recording *rec,
		     uint32_t *ret)
{
	struct report r;
	struct report_context_elem self = { .name = o->task };
	struct report_context task = { .e = &self, .n = 1 }, ctx = { 0 };
	uint32_t *ids = NULL;
	size_t n = 0, i;
	char chain[1024];
	int err = -1;

	report_init(&r, o->input, rec);
	if (o->context && report_context_parse(o->context, &ctx) < 0)
		return -1;
	ids = xcalloc(rec->tree.nnodes, sizeof(*ids));
	for (i = 1; i < rec->tree.nnodes; i++)
		if (report_context_match(&r, &task, (uint32_t)i) &&
		    (!o->context || report_context_match(&r, &ctx, (uint32_t)i)))
			ids[n++] = (uint32_t)i;
	if (n == 0 && o->context) {
		error("no calling context '%s' of '%s' in '%s'", o->context, o->task, o->input);
	} else if (n == 0) {
		error("no probed function '%s' in '%s'", o->task, o->input);
	} else if (n > 1) {
		error("'%s' has %zu calling contexts in '%s': pick one with --context", o->task, n,
		      o->input);
		for (i = 0; i < n && i < 20; i++) {
			node_chain(&r, ids[i], chain, sizeof(chain));
			/* names from the recording: the terminal rule */
			fprintf(stderr, "  %s (%" PRIu64 " invocation%s)\n", vp_term_clean(chain),
				rec->tree.nodes[ids[i]].stats.n,
				rec->tree.nodes[ids[i]].stats.n == 1 ? "" : "s");
		}
	} else {
		*ret = ids[0];
		err = 0;
	}
	free(ids);
	report_context_release(&ctx);
	return err;
}

/* --max: per predictor column, the user's X+ (NaN: none). */
static int resolve_max(const struct task_model_opts *o, const struct report *r,
		       const struct vp_task_rows *rows, double *xmax)
{
	size_t i, j;

	for (j = 0; j < rows->k; j++)
		xmax[j] = NAN;
	for (i = 0; i < o->nmax; i++) {
		const char *arg = o->max[i], *eq = strrchr(arg, '=');
		size_t len = (size_t)(eq - arg), found = 0;
		double v;

		if (parse_at_least("max", eq + 1, 0, &v) < 0)
			return -1;
		for (j = 0; j < rows->k; j++) {
			const struct vp_cct_node *c = &r->tree->nodes[rows->child[j]];
			const char *fn = report_func_name(r, c->func);
			char s1[256], s2[256];

			report_callsite_str(r, c->callsite, 1, s1, sizeof(s1));
			report_callsite_str(r, c->callsite, 0, s2, sizeof(s2));
			if ((strlen(fn) == len && !strncmp(fn, arg, len)) ||
			    (strlen(s1) == len && !strncmp(s1, arg, len)) ||
			    (strlen(s2) == len && !strncmp(s2, arg, len))) {
				xmax[j] = v;
				found++;
			}
		}
		if (!found)
			return error("--max '%.*s': no call site of '%s' by that name", (int)len,
				     arg, o->task);
	}
	return 0;
}

static int regress_text(void *ctx, FILE *f)
{
	struct report_regress *rr = ctx;

	rr->out = f;
	return report_regress_text(rr);
}

static int fit_and_print(const struct task_model_opts *o, struct vp_recording *rec, uint32_t node)
{
	struct vp_task_rows rows;
	struct vp_regress_model *m = NULL;
	struct report r;
	struct report_regress rr;
	double *xmax = NULL;
	char msg[512] = "", label[1024];
	int err, ret = 1;

	err = vp_task_rows(rec, node, &rows, msg, sizeof(msg));
	if (err < 0) {
		error("%s", *msg ? msg : strerror(-err));
		return 1;
	}
	report_init(&r, o->input, rec);
	r.out = stdout;
	r.all = o->all;
	xmax = xcalloc(rows.k ? rows.k : 1, sizeof(*xmax));
	if (resolve_max(o, &r, &rows, xmax) < 0)
		goto out;
	{
		struct vp_regress_opts ro = o->reg;

		ro.xmax = xmax;
		err = vp_regress_fit(rows.y, rows.x, rows.n, rows.k, &ro, &m);
	}
	if (err == -EDOM) {
		error("'%s' has %zu paired invocation%s in '%s': too few for a model once the "
		      "held-out ones (--train) and the bad samples (--cook) are set aside (the "
		      "training set needs more than 5)",
		      o->task, rows.n, rows.n == 1 ? "" : "s", o->input);
		goto out;
	}
	if (err < 0) {
		error("cannot fit a model of '%s': %s", o->task, strerror(-err));
		goto out;
	}
	node_chain(&r, node, label, sizeof(label));
	rr = (struct report_regress){ .out = stdout, .r = &r, .task = label, .rows = &rows,
				      .m = m, .bound = o->bound };
	err = o->json ? report_regress_json(&rr)
		      : vp_print_fitted(stdout, o->wide ? 0 : vp_term_width(STDOUT_FILENO),
					regress_text, &rr);
	if (err < 0 || fflush(stdout) || ferror(stdout)) {
		error("cannot write standard output: %s", strerror(errno));
		goto out;
	}
	ret = 0;
out:
	vp_regress_model_free(m);
	free(xmax);
	vp_task_rows_release(&rows);
	return ret;
}

static int task_model_run(const struct task_model_opts *o)
{
	struct vp_recording *rec = NULL;
	char msg[512] = "";
	uint32_t node = VP_NO_NODE;
	int err, ret = 1;

	err = vp_recording_open(o->input, &o->rec, &rec, msg, sizeof(msg));
	if (err == -E2BIG) {
		struct vp_budget b = { o->rec.max_memory, 0 };

		return analysis_budget_error(o->input, &b) ? 1 : 1;
	}
	if (err == -ENODATA) {
		error("%s: --time=%s cannot be used", msg, vp_time_base_name(o->rec.time));
		return 1;
	}
	if (err < 0) {
		error("%s", msg);
		return 1;
	}
	if (analysis_warnings(rec, 0, o->bound ? "bounding" : "explaining") < 0)
		goto out;
	if (find_task(o, rec, &node) < 0)
		goto out;
	analysis_time_note(rec);
	ret = fit_and_print(o, rec, node);
out:
	vp_recording_free(rec);
	return ret;
}

int task_model_main(int argc, char **argv, int bound)
{
	struct task_model_opts o;
	int ret;

	memset(&o, 0, sizeof(o));
	o.bound = bound;
	o.input = "varperf.data";
	if (analysis_opts_default(&o.rec) < 0)
		return EXIT_USAGE;
	vp_regress_opts_default(&o.reg);
	o.reg.train = bound ? 0.5 : 1.0;
	ret = task_model_parse(argc, argv, &o);
	if (ret > 0) {
		usage_print(stdout, bound ? bound_usage : explain_usage, 1);
		ret = 0;
	} else if (ret < 0) {
		ret = EXIT_USAGE;
	} else if (!vp_regress_available()) {
		error("varperf was built without GSL: '%s' needs it (configure --with-gsl)",
		      bound ? "bound" : "explain");
		ret = 1;
	} else {
		ret = task_model_run(&o);
	}
	free(o.max);
	return ret;
}
