/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * analysis-opts.h - the options `varperf report` and `varperf compare`
 * share: Kumar et al. 2008's analysis parameters and the time base, and one range
 * and one message for every fraction-valued option of theirs and of
 * `varperf record`.
 */
#ifndef VARPERF_ANALYSIS_OPTS_H
#define VARPERF_ANALYSIS_OPTS_H

#include <getopt.h>

#include "core/datafile.h"

struct vp_budget;
struct vp_recording_opts;

/*
 * getopt_long values of the shared options; a command's own start at 256.
 * --raw and --max-memory are in each command's table (their place and
 * help differ), the others in ANALYSIS_LONG_OPTIONS.
 */
enum {
	OPT_CUTOFF = 0x1000,
	OPT_PROBABILITY,
	OPT_WINDOW,
	OPT_COV_THRESHOLD,
	OPT_SIMILARITY,
	OPT_BETA,
	OPT_TIME,
	OPT_RAW,
	OPT_MAX_MEMORY,
};

/* The shared options' struct option entries, in their man pages' order. */
#define ANALYSIS_LONG_OPTIONS                                                   \
	{ "cutoff", required_argument, NULL, OPT_CUTOFF },                      \
	{ "probability", required_argument, NULL, OPT_PROBABILITY },            \
	{ "window", required_argument, NULL, OPT_WINDOW },                      \
	{ "cov-threshold", required_argument, NULL, OPT_COV_THRESHOLD },        \
	{ "similarity", required_argument, NULL, OPT_SIMILARITY },              \
	{ "beta", required_argument, NULL, OPT_BETA },                          \
	{ "time", required_argument, NULL, OPT_TIME }

/*
 * The shared options' lines of the usage text, in the order of
 * ANALYSIS_LONG_OPTIONS: report's and compare's --help print this one
 * block, so that they cannot tell the options apart.
 */
#define ANALYSIS_USAGE                                                                      \
	"    --cutoff <pct>             significance: share of the total time a node",        \
	"                               needs (default: 0.02%)",                              \
	"    --probability <p>          Chebyshev probability (default: 0.96)",               \
	"    --window <w>               Chebyshev window as a multiple of the mean",          \
	"                               (default: 2.0)",                                      \
	"    --cov-threshold <c>        CoV for high variance; overrides --probability",      \
	"                               and --window (default: window*sqrt(1-p) = 0.4)",      \
	"    --similarity <pct>         patterns merge when means and CoVs are within",       \
	"                               <pct> of each other (default: 10%)",                  \
	"    --beta <b>                 Pattern Set: VIM >= <b> * max VIM; the graph trims",  \
	"                               below <b> times the best at each level (default: 0.1)", \
	"    --time <base>              what to analyse: wall (wall-clock time), cpu,",       \
	"                               offcpu, blocked, preempted (its two parts) or own",   \
	"                               (wall-clock time less preemption); default: wall,",   \
	"                               or own when preemption makes the variance"

/*
 * opt_fraction - the value of option --@name: a number, or a percentage
 * ("0.02%" is 0.0002), within @name's range.  Returns 0, or -1 after an
 * error naming the option, the value and the range.
 */
int opt_fraction(const char *name, const char *arg, double *ret);

/*
 * analysis_opts_default - @o's defaults (vp_recording_opts_default), with
 * the time base of $VARPERF_TIME when it is set (a name --time takes):
 * the default then, what preemption did or not.  0, or -1 after an error
 * naming the variable and its value.
 */
int analysis_opts_default(struct vp_recording_opts *o);

/*
 * analysis_option - set @o (what vp_recording_open() reads: the analysis
 * parameters, --time, --raw, --max-memory) from option @c with value @arg
 * when @c is one of the shared options.  Returns 1 when set, -1 on a bad
 * value (said), and 0 when @c is none of them.
 */
int analysis_option(int c, const char *arg, struct vp_recording_opts *o);

/*
 * analysis_budget_error - say that reading the data file @path stopped at
 * the budget @b (-E2BIG from core), in the words of --max-memory.  -1.
 */
int analysis_budget_error(const char *path, const struct vp_budget *b);
/*
 * analysis_warnings - print the recording's warnings with the hints of
 * the options report and compare share; @doing ("reporting",
 * "comparing") says what goes on with an incomplete file.  With @strict a
 * file with events missing is an error instead: -1 after printing it.
 */
struct vp_recording;
int analysis_warnings(const struct vp_recording *rec, int strict, const char *doing);
/*
 * analysis_time_note - when @rec is read in own time by default (it was
 * not chosen with --time), say so on stderr, with why and how to get
 * plain wall-clock time.
 */
void analysis_time_note(const struct vp_recording *rec);

#endif
