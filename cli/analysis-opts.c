/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * analysis-opts.c - the options `varperf report` and `varperf compare`
 * share, so that a value is taken, or refused in the same words, by both;
 * record's percentages go through the same ranges and words.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/budget.h"
#include "core/patterns.h"
#include "core/recording.h"
#include "analysis-opts.h"
#include "util/util.h"

/* Range of each fraction-valued option, and the words that describe it. */
struct opt_range {
	const char *name;
	double lo, hi; /* hi = HUGE_VAL: no upper bound */
	int lo_open;   /* lo itself excluded */
	int hi_open;   /* hi itself excluded */
	const char *expect;
};

static const struct opt_range opt_ranges[] = {
	{ "cutoff", 0, 1, 0, 1, "must be at least 0 and less than 1 (100%)" },
	{ "probability", 0, 1, 1, 1, "must be greater than 0 and less than 1" },
	{ "window", 0, HUGE_VAL, 1, 0, "must be a number greater than 0" },
	{ "cov-threshold", 0, HUGE_VAL, 0, 0, "must be a number of at least 0" },
	{ "similarity", 0, 1, 0, 0, "must be between 0 and 1 (100%)" },
	{ "beta", 0, 1, 0, 0, "must be between 0 and 1" },
	/* report */
	{ "tau", 0, 1, 0, 0, "must be between 0 and 1" },
	{ "min-contribution", 0, 1, 1, 0, "must be greater than 0 and at most 1 (100%)" },
	{ "once-probability", 0.5, 1, 0, 1, "must be at least 0.5 and less than 1" },
	{ "precision", 0, 0.5, 1, 1, "must be greater than 0 and less than 0.5 (50%)" },
	{ "confidence", 0.5, 1, 1, 1, "must be greater than 0.5 and less than 1 (100%)" },
	/* record */
	{ "overhead", 0, 10, 1, 1, "must be greater than 0 and less than 10 (1000%)" },
	/* compare */
	{ "min-overlap", 0, 1, 0, 0, "must be between 0 and 1 (100%)" },
	{ "alpha", 0, 1, 1, 1, "must be greater than 0 and less than 1" },
};

int opt_fraction(const char *name, const char *arg, double *ret)
{
	const struct opt_range *rg = NULL;
	double v;

	for (size_t i = 0; i < sizeof(opt_ranges) / sizeof(opt_ranges[0]); i++)
		if (!strcmp(opt_ranges[i].name, name))
			rg = &opt_ranges[i];
	/* parse_double() refuses negative numbers: below every range */
	if (!rg || parse_double(arg, &v) || v < rg->lo || (rg->lo_open && v == rg->lo) ||
	    v > rg->hi || (rg->hi_open && v == rg->hi))
		return error("invalid value '%s' for '--%s': %s", arg, name,
			     rg ? rg->expect : "not a known option");
	*ret = v;
	return 0;
}

static int set(const char *name, const char *arg, double *ret)
{
	return opt_fraction(name, arg, ret) < 0 ? -1 : 1;
}

/* --time: "wall", "cpu" or "offcpu".  0, or -1 after an error naming the value. */
static int opt_time_base(const char *arg, enum vp_time_base *ret)
{
	if (!vp_time_base_parse(arg, ret))
		return 0;
	return error("invalid value '%s' for '--time': must be 'wall', 'cpu' or 'offcpu'", arg);
}

/* --max-memory: a size with an optional K, M, G or T suffix (binary), 0
 * for no limit.  0, or -1 after an error naming the value. */
static int opt_max_memory(const char *arg, size_t *ret)
{
	unsigned long long v;

	if (parse_uint64(arg, &v) < 0 || v > SIZE_MAX)
		return error("invalid value '%s' for '--max-memory': must be a size in bytes "
			     "with an optional K, M, G or T suffix (0: no limit)",
			     arg);
	*ret = (size_t)v;
	return 0;
}

int analysis_option(int c, const char *arg, struct vp_recording_opts *o)
{
	struct vp_analysis_params *p = &o->params;

	switch (c) {
	case OPT_CUTOFF:
		return set("cutoff", arg, &p->cutoff);
	case OPT_PROBABILITY:
		return set("probability", arg, &p->probability);
	case OPT_WINDOW:
		return set("window", arg, &p->window);
	case OPT_COV_THRESHOLD:
		return set("cov-threshold", arg, &p->cov_threshold);
	case OPT_SIMILARITY:
		return set("similarity", arg, &p->similarity);
	case OPT_BETA:
		return set("beta", arg, &p->beta);
	case OPT_TIME:
		return opt_time_base(arg, &o->time) < 0 ? -1 : 1;
	case OPT_RAW:
		o->raw = 1;
		return 1;
	case OPT_MAX_MEMORY:
		return opt_max_memory(arg, &o->max_memory) < 0 ? -1 : 1;
	default:
		return 0;
	}
}

int analysis_budget_error(const char *path, const struct vp_budget *b)
{
	static const char *const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
	size_t v = b->max;
	int u = 0;

	while (u < 4 && v >= 1024 && !(v % 1024)) {
		v /= 1024;
		u++;
	}
	return error("'%s': analysing it would take more than --max-memory allows (%zu %s): "
		     "give it more, or 0 for no limit",
		     path, v, units[u]);
}

int analysis_warnings(const struct vp_recording *rec, int strict, const char *doing)
{
	for (size_t i = 0; i < rec->nwarnings; i++) {
		const struct vp_recording_warning *w = &rec->warnings[i];

		if (w->missing_data && strict)
			return error("%s", w->message);
		if (w->code == VP_WARN_INCOMPLETE)
			warning("%s; %s what was recorded", w->message, doing);
		else if (w->code == VP_WARN_CLAMPED)
			warning("%s (--raw: as measured)", w->message);
		else
			warning("%s", w->message);
	}
	return 0;
}
