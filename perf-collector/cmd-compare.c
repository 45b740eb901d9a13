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

#include "core/cct.h"
#include "core/compare.h"
#include "core/datafile.h"
#include "core/patterns.h"
#include "analysis-opts.h"
#include "builtin.h"
#include "output.h"
#include "report.h"
#include "util.h"

/* diff(1)'s convention: same, different, trouble; then cannot tell, and
 * git's usage status. */
enum {
	EXIT_AGREE = 0,
	EXIT_DISAGREE = 1,
	EXIT_TROUBLE = 2,
	EXIT_CANNOT_TELL = 3,
	EXIT_USAGE = 129,
};

enum cmd_compare_format { COMPARE_TEXT, COMPARE_JSON };

enum {
	OPT_MIN_OVERLAP = 256,
	OPT_SYMMETRIC,
	OPT_ALPHA,
	OPT_FORMAT,
	OPT_ALL,
	OPT_STRICT,
	OPT_MAX_MEMORY,
};

/* Same order as OPTIONS in man/varperf-compare.1. */
static const struct option cmd_compare_options[] = {
	{ "min-overlap", required_argument, NULL, OPT_MIN_OVERLAP },
	{ "symmetric", no_argument, NULL, OPT_SYMMETRIC },
	{ "alpha", required_argument, NULL, OPT_ALPHA },
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	ANALYSIS_LONG_OPTIONS,
	{ "max-memory", required_argument, NULL, OPT_MAX_MEMORY },
	{ "all", no_argument, NULL, OPT_ALL },
	{ "strict", no_argument, NULL, OPT_STRICT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const char *const cmd_compare_usage[] = {
	"usage: varperf compare [<options>] <profile.data> <regression.data>",
	"",
	"    --min-overlap <pct>        the Pattern Sets agree when at least <pct> of the",
	"                               profile's patterns stay in the regression's",
	"                               (default: 80%)",
	"    --symmetric                also require <pct> of the regression's Pattern Set",
	"                               to come from the profile's",
	"    --alpha <a>                significance level of the tests (default: 0.05)",
	"    -o, --output <file>        write the comparison to <file>",
	"    --format <text|json>       output format (default: text)",
	"    --cutoff <pct>             significance cut-off (default: 0.02%)",
	"    --probability <p>          Chebyshev probability (default: 0.96)",
	"    --window <w>               Chebyshev window (default: 2.0)",
	"    --cov-threshold <c>        CoV for high variance (default: derived, 0.4)",
	"    --similarity <pct>         pattern similarity (default: 10%)",
	"    --beta <b>                 Pattern Set: VIM >= <b> * max VIM (default: 0.1)",
	"    --time <wall|cpu|offcpu>   compare wall-clock (default), on-CPU or off-CPU time",
	"    --max-memory <size>        refuse a file whose tree would take more than <size>,",
	"                               with K/M/G suffix (default: 1G; 0: no limit)",
	"    --all                      list every pattern of the profile and every",
	"                               significant calling context",
	"    --strict                   treat an incomplete data file as an error",
	"    -h, --help                 show this help",
	"",
	"Exit status: 0 the recordings agree, 1 they differ, 2 trouble, 3 cannot tell,",
	"129 usage.",
	NULL,
};

struct cmd_compare_opts {
	const char *path[2];
	const char *output;
	enum cmd_compare_format format;
	struct vp_analysis_params params;
	struct vp_compare_params cmp;
	int all;
	int strict;
	enum vp_time_base time;
	size_t max_memory;
};

static void cmd_compare_print_usage(FILE *f, int full)
{
	for (size_t i = 0; cmd_compare_usage[i]; i++) {
		if (!full && i > 0)
			break;
		fprintf(f, "%s\n", cmd_compare_usage[i]);
	}
}

static int cmd_compare_parse(int argc, char **argv, struct cmd_compare_opts *o)
{
	struct vp_analysis_params *p = &o->params;
	char *argv0 = argv[0];
	int c, ret = 0;

	argv[0] = (char *)"varperf";
	optind = 0;
	opterr = 1;
	while (!ret && (c = getopt_long(argc, argv, "+o:h", cmd_compare_options, NULL)) != -1) {
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
		case OPT_CUTOFF:
		case OPT_PROBABILITY:
		case OPT_WINDOW:
		case OPT_COV_THRESHOLD:
		case OPT_SIMILARITY:
		case OPT_BETA:
			ret = analysis_option(c, optarg, p) < 0 ? -1 : 0;
			break;
		case OPT_TIME:
			ret = opt_time_base(optarg, &o->time);
			break;
		case OPT_MAX_MEMORY:
			ret = opt_max_memory(optarg, &o->max_memory);
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
			cmd_compare_print_usage(stderr, 0);
			ret = -1;
			break;
		}
	}
	if (!ret && argc - optind != 2) {
		if (argc - optind < 2)
			error("two data files are needed: the profile and the regression");
		else
			error("unexpected argument '%s'", argv[optind + 2]);
		cmd_compare_print_usage(stderr, 0);
		ret = -1;
	}
	if (!ret) {
		o->path[0] = argv[optind];
		o->path[1] = argv[optind + 1];
	}
	argv[0] = argv0;
	return ret;
}

/* One recording, read and analysed. */
struct cmd_compare_side {
	struct vp_reader *reader;
	struct vp_budget budget; /* --max-memory, for each file's tree */
	struct vp_cct tree;
	struct vp_analysis an;
	int have_tree, have_an;
	struct report r; /* for the shared name and time helpers */
	uint32_t *twins; /* call sites sharing a line (report_callsite_str) */
};

static int cmd_compare_load(const struct cmd_compare_opts *o, int i, struct cmd_compare_side *s)
{
	const char *path = o->path[i];
	char msg[512] = "";
	const char *w;
	int err;

	err = vp_reader_open(path, &s->reader, msg, sizeof(msg));
	if (err < 0 && msg[0])
		return error("%s", msg);
	if (err < 0)
		return error("cannot read '%s': %s", path, strerror(-err));
	if (analysis_set_time(s->reader, o->time, path) < 0)
		return -1;
	err = vp_cct_init(&s->tree);
	if (err < 0)
		return error("cannot build the calling-context tree: %s", strerror(-err));
	s->have_tree = 1;
	s->budget.max = o->max_memory;
	s->tree.budget = &s->budget;
	err = vp_build_file(s->reader, &s->tree, NULL);
	if (err == -E2BIG)
		return analysis_budget_error(path, &s->budget);
	if (err < 0) {
		const char *m = vp_reader_error(s->reader);

		if (m && *m)
			return error("%s", m);
		return error("cannot read '%s': %s", path, strerror(-err));
	}
	w = vp_reader_warning(s->reader);
	if (!w && !vp_reader_trailer(s->reader)->present) {
		if (o->strict)
			return error("'%s': recording incomplete (no END chunk)", path);
		warning("'%s': recording incomplete (no END chunk); comparing what was recorded",
			path);
	}
	if (w) {
		if (o->strict)
			return error("%s", w);
		warning("%s", w);
	}
	err = vp_analysis_run(&s->an, &s->tree, vp_reader_header(s->reader)->nfuncs, &o->params);
	if (err < 0)
		return error("cannot analyse '%s': %s", path, strerror(-err));
	s->have_an = 1;
	s->r.input = path;
	s->r.reader = s->reader;
	s->r.hdr = vp_reader_header(s->reader);
	s->r.tree = &s->tree;
	s->r.an = &s->an;
	s->twins = vp_cct_callsite_twins(&s->tree, s->reader);
	s->r.callsite_twins = s->twins;
	return 0;
}

static void cmd_compare_unload(struct cmd_compare_side *s)
{
	free(s->twins);
	if (s->have_an)
		vp_analysis_release(&s->an);
	if (s->have_tree)
		vp_cct_release(&s->tree);
	vp_reader_free(s->reader);
}

static const char *cmd_compare_status(const struct vp_compare_pattern *cp)
{
	if (cp->in_set_a && cp->in_set_b)
		return "kept";
	if (cp->in_set_a)
		return "left";
	if (cp->in_set_b)
		return "entered";
	return "other";
}

static int cmd_compare_listed(const struct cmd_compare_opts *o, const struct vp_compare_pattern *cp)
{
	return o->all || cp->in_set_a || cp->in_set_b;
}

/* "main [x.c:3] -> f [x.c:9]" */
static void cmd_compare_chain(FILE *f, const struct report *r, const struct vp_pattern *p)
{
	char cs[512];

	for (size_t i = 0; i < p->len; i++) {
		if (i)
			fputs(" \xe2\x86\x92 ", f);
		report_put(f, report_func_name(r, p->chain[i].func));
		report_callsite_str(r, p->chain[i].callsite, 1, cs, sizeof(cs));
		if (*cs) {
			fputs(" [", f);
			report_put(f, cs);
			fputc(']', f);
		}
	}
}

/* A corrected p-value; one below what a double holds is not "0". */
static void cmd_compare_p(FILE *f, const struct vp_test *t, double alpha)
{
	double p = t->p_adj;

	if (isnan(p))
		fprintf(f, " %8s ", "-");
	else if (p < 1e-300)
		fprintf(f, " %8s%c", "< 1e-300", p < alpha ? '*' : ' ');
	else
		fprintf(f, " %8.2g%c", p, p < alpha ? '*' : ' ');
}

static const char *const cmd_compare_verdicts[] = {
	[VP_VERDICT_AGREE] = "agree",
	[VP_VERDICT_DIFFER] = "differ",
	[VP_VERDICT_CANNOT_TELL] = "cannot_tell",
};

static const char *const cmd_compare_changes[] = {
	[VP_CTX_SAME] = "same",
	[VP_CTX_NEW] = "new",
	[VP_CTX_VANISHED] = "vanished",
	[VP_CTX_UNSURE] = "unsure",
};

static const char *const cmd_compare_programs[] = {
	[VP_PROG_UNKNOWN] = "unknown",
	[VP_PROG_SAME] = "same",
	[VP_PROG_OTHER_BUILD] = "other_build",
	[VP_PROG_OTHER] = "other",
};

static const char *cmd_compare_program_path(const struct cmd_compare_side *s)
{
	const struct vp_header *h = s->r.hdr;

	return h->nmodules && h->modules[0].path ? h->modules[0].path : "?";
}

/* "programs: ..." of the text header: what the two recordings ran. */
static void cmd_compare_text_programs(FILE *f, const struct cmd_compare_side *side,
				      const struct vp_compare *c)
{
	const char *pa = cmd_compare_program_path(&side[0]);
	const char *pb = cmd_compare_program_path(&side[1]);

	fputs("  programs: ", f);
	switch (c->program) {
	case VP_PROG_SAME:
		fputs("the same ('", f);
		report_put(f, pa);
		fprintf(f, "', one %s)\n",
			side[0].r.hdr->modules[0].build_id_len ? "build-id" : "path and size");
		break;
	case VP_PROG_OTHER_BUILD:
		fputs("two builds of '", f);
		report_put(f, pa);
		fputs("' (build-ids or sizes differ)\n", f);
		break;
	case VP_PROG_OTHER:
		fputs("DIFFERENT: '", f);
		report_put(f, pa);
		fputs("' and '", f);
		report_put(f, pb);
		fputs("'\n", f);
		break;
	default:
		fputs("cannot tell whether '", f);
		report_put(f, pa);
		fputs("' is one build in both (no build-ids, no sizes)\n", f);
		break;
	}
}

enum { CMD_COMPARE_CHAIN_MAX = 6 };

/* The calling context of node @id, its innermost elements. */
static void cmd_compare_node_chain(FILE *f, const struct report *r, uint32_t id)
{
	uint32_t path[CMD_COMPARE_CHAIN_MAX], n = 0, depth = r->tree->nodes[id].depth;
	char cs[512];

	for (uint32_t x = id; x != VP_NODE_ROOT && n < CMD_COMPARE_CHAIN_MAX;
	     x = r->tree->nodes[x].parent)
		path[n++] = x;
	if (depth > n)
		fprintf(f, "(%" PRIu32 " more) \xe2\x86\x92 ", depth - n);
	while (n--) {
		const struct vp_cct_node *x = &r->tree->nodes[path[n]];

		report_put(f, report_func_name(r, x->func));
		report_callsite_str(r, x->callsite, 1, cs, sizeof(cs));
		if (*cs) {
			fputs(" [", f);
			report_put(f, cs);
			fputc(']', f);
		}
		if (n)
			fputs(" \xe2\x86\x92 ", f);
	}
}

static const struct vp_stats *cmd_compare_ctx_stats(const struct cmd_compare_side *s,
						    uint32_t node)
{
	return node != VP_NO_NODE ? &s->tree.nodes[node].stats : NULL;
}

static void cmd_compare_text_side(FILE *f, const struct report *r, const struct vp_stats *st)
{
	char b[32];

	if (!st) {
		fprintf(f, " %9s %9s %6s", "-", "-", "-");
		return;
	}
	fprintf(f, " %9" PRIu64 " %9s %6.3f", st->n, report_time(r, st->mean, b, sizeof(b)),
		vp_stats_cov(st));
}

static void cmd_compare_text_contexts(FILE *f, const struct cmd_compare_opts *o,
				      const struct cmd_compare_side *side,
				      const struct vp_compare *c)
{
	size_t shown = o->all ? c->ncontexts : c->nctx_new + c->nctx_vanished + c->nctx_unsure;

	if (!shown)
		return;
	fprintf(f, "\nCalling contexts whose high variance %s (p as above):\n",
		o->all ? "changed, and all the others significant in either" : "changed");
	fprintf(f, "  status        N A    mean A  CoV A       N B    mean B  CoV B   p(mean)    "
		   "p(var)  calling context\n");
	for (size_t i = 0; i < c->ncontexts; i++) {
		const struct vp_compare_context *x = &c->contexts[i];

		if (!o->all && x->change == VP_CTX_SAME)
			continue;
		fprintf(f, "  %-8s", cmd_compare_changes[x->change]);
		cmd_compare_text_side(f, &side[0].r, cmd_compare_ctx_stats(&side[0], x->a));
		cmd_compare_text_side(f, &side[1].r, cmd_compare_ctx_stats(&side[1], x->b));
		cmd_compare_p(f, &x->mean, c->params.alpha);
		cmd_compare_p(f, &x->var, c->params.alpha);
		fputs("  ", f);
		if (x->a != VP_NO_NODE)
			cmd_compare_node_chain(f, &side[0].r, x->a);
		else
			cmd_compare_node_chain(f, &side[1].r, x->b);
		fputc('\n', f);
	}
}

static void cmd_compare_text(FILE *f, const struct cmd_compare_opts *o,
			     const struct cmd_compare_side *side, const struct vp_compare *c)
{
	const struct report *ra = &side[0].r, *rb = &side[1].r;
	char b1[32], b2[32], b3[32], b4[32];

	fputs("varperf compare: profile '", f);
	report_put(f, o->path[0]);
	fputs("', regression '", f);
	report_put(f, o->path[1]);
	fputc('\'', f);
	if (o->time != VP_TIME_WALL)
		fprintf(f, ", in %s time", o->time == VP_TIME_CPU ? "on-CPU" : "off-CPU");
	fputc('\n', f);
	fprintf(f, "Pattern Set overlap: %.1f%% (%zu of the profile's %zu patterns are in the "
		   "regression Pattern Set; --min-overlap %g%%)\n",
		100.0 * c->overlap, c->ncommon, c->nset_a, 100.0 * c->params.min_overlap);
	fprintf(f, "  regression Pattern Set: %zu pattern%s, %.1f%% of them from the profile's\n",
		c->nset_b, c->nset_b == 1 ? "" : "s", 100.0 * c->overlap_b);
	fprintf(f, "  the Pattern Sets %s%s\n", c->agree ? "agree" : "DISAGREE",
		c->params.symmetric ? " (both ways)" : "");
	fprintf(f, "Calling contexts significant in either: %zu; %zu newly high-variance, %zu no "
		   "longer, %zu that the tests cannot tell\n",
		c->ncontexts, c->nctx_new, c->nctx_vanished, c->nctx_unsure);
	cmd_compare_text_programs(f, side, c);
	fprintf(f, "  verdict: %s\n",
		c->verdict == VP_VERDICT_AGREE	? "the recordings agree"
		: c->verdict == VP_VERDICT_DIFFER ? "the recordings DIFFER"
						  : "CANNOT TELL whether the recordings differ");
	fprintf(f, "\nPatterns of the profile (VIM ranks of the profile; p: Welch's t test on the "
		   "means and F test on the variances, Holm-corrected over the %zu tests, * below "
		   "%g):\n",
		c->ntests, c->params.alpha);
	fprintf(f, "  status   rank     VIM A     VIM B    mean A    mean B  change   p(mean)   "
		   "CoV A  CoV B    p(var)  call chain\n");
	for (size_t i = 0; i < c->npatterns; i++) {
		const struct vp_compare_pattern *cp = &c->patterns[i];
		const struct vp_pattern *pa = &side[0].an.patterns[cp->a];
		double change = pa->stats.mean > 0 ? 100.0 * (cp->b.mean - pa->stats.mean) /
							   pa->stats.mean
						   : 0.0;

		if (!cmd_compare_listed(o, cp))
			continue;
		fprintf(f, "  %-7s %5zu %9s %9s %9s %9s ", cmd_compare_status(cp), cp->a + 1,
			report_time(ra, pa->vim, b1, sizeof(b1)),
			report_time(rb, cp->vim_b, b2, sizeof(b2)),
			report_time(ra, pa->stats.mean, b3, sizeof(b3)),
			cp->b.n ? report_time(rb, cp->b.mean, b4, sizeof(b4)) : "-");
		if (cp->b.n)
			fprintf(f, "%+6.0f%%", change);
		else
			fprintf(f, "%7s", "-");
		cmd_compare_p(f, &cp->mean, c->params.alpha);
		fprintf(f, " %7.3f %6.3f", vp_stats_cov(&pa->stats), vp_stats_cov(&cp->b));
		cmd_compare_p(f, &cp->var, c->params.alpha);
		fputs("  ", f);
		cmd_compare_chain(f, ra, pa);
		fputc('\n', f);
	}
	cmd_compare_text_contexts(f, o, side, c);
	if (!c->nnew)
		return;
	fprintf(f, "\nNew in the regression (its own Pattern Set, in contexts no pattern of the "
		   "profile matches):\n");
	fprintf(f, "  rank         N      mean    CoV       VIM  call chain\n");
	for (size_t i = 0; i < c->nnew; i++) {
		const struct vp_pattern *pb = &side[1].an.patterns[c->new_b[i]];

		fprintf(f, "  %4zu %9" PRIu64 " %9s %6.3f %9s  ", c->new_b[i] + 1, pb->stats.n,
			report_time(rb, pb->stats.mean, b1, sizeof(b1)), vp_stats_cov(&pb->stats),
			report_time(rb, pb->vim, b2, sizeof(b2)));
		cmd_compare_chain(f, rb, pb);
		fputc('\n', f);
	}
}

/* ---- JSON (flat, one object; numbers that are not finite are null) ---- */

static void cmd_compare_jnum(FILE *f, const char *key, double v, int comma)
{
	fprintf(f, "%s\"%s\": ", comma ? ", " : "", key);
	if (isfinite(v))
		fprintf(f, "%.17g", v);
	else
		fputs("null", f);
}

static void cmd_compare_jchain(FILE *f, const struct report *r, const struct vp_pattern *p)
{
	char cs[512];

	fputs("\"functions\": [", f);
	for (size_t i = 0; i < p->len; i++) {
		fputs(i ? ", " : "", f);
		report_json_string(f, report_func_name(r, p->chain[i].func));
	}
	fputs("], \"callsites\": [", f);
	for (size_t i = 0; i < p->len; i++) {
		fputs(i ? ", " : "", f);
		report_callsite_str(r, p->chain[i].callsite, 0, cs, sizeof(cs));
		if (*cs)
			report_json_string(f, cs);
		else
			fputs("null", f);
	}
	fputc(']', f);
}

/* "functions" and "callsites" of node @id's calling context, outermost first. */
static void cmd_compare_jnode_chain(FILE *f, const struct report *r, uint32_t id)
{
	uint32_t depth = r->tree->nodes[id].depth, *path = xcalloc(depth + 1, sizeof(*path)), n = 0;
	char cs[512];

	for (uint32_t x = id; x != VP_NODE_ROOT && n <= depth; x = r->tree->nodes[x].parent)
		path[n++] = x;
	fputs("\"functions\": [", f);
	for (uint32_t i = n; i--;) {
		fputs(i + 1 < n ? ", " : "", f);
		report_json_string(f, report_func_name(r, r->tree->nodes[path[i]].func));
	}
	fputs("], \"callsites\": [", f);
	for (uint32_t i = n; i--;) {
		fputs(i + 1 < n ? ", " : "", f);
		report_callsite_str(r, r->tree->nodes[path[i]].callsite, 0, cs, sizeof(cs));
		if (*cs)
			report_json_string(f, cs);
		else
			fputs("null", f);
	}
	fputc(']', f);
	free(path);
}

static void cmd_compare_jtest(FILE *f, const char *key, const char *stat,
			      const struct vp_test *t)
{
	fprintf(f, ", \"%s\": {", key);
	cmd_compare_jnum(f, stat, t->stat, 0);
	if (t->df2 > 0 || isnan(t->df2)) {
		cmd_compare_jnum(f, "df1", t->df1, 1);
		cmd_compare_jnum(f, "df2", t->df2, 1);
	} else {
		cmd_compare_jnum(f, "df", t->df1, 1);
	}
	cmd_compare_jnum(f, "p", t->p, 1);
	cmd_compare_jnum(f, "p_adjusted", t->p_adj, 1);
	fputc('}', f);
}

static void cmd_compare_jprogram(FILE *f, const char *key, const struct cmd_compare_side *s)
{
	const struct vp_header *h = s->r.hdr;
	const struct vp_module *m = h->nmodules ? &h->modules[0] : NULL;

	fprintf(f, ", \"%s\": ", key);
	if (!m) {
		fputs("null", f);
		return;
	}
	fputs("{\"path\": ", f);
	report_json_string(f, m->path ? m->path : "");
	fputs(", \"build_id\": ", f);
	if (m->build_id_len) {
		fputc('"', f);
		for (size_t i = 0; i < m->build_id_len; i++)
			fprintf(f, "%02x", m->build_id[i]);
		fputc('"', f);
	} else {
		fputs("null", f);
	}
	if (m->size)
		fprintf(f, ", \"size\": %" PRIu64 "}", m->size);
	else
		fputs(", \"size\": null}", f);
}

static void cmd_compare_jcontexts(FILE *f, const struct cmd_compare_side *side,
				  const struct vp_compare *c)
{
	fputs(",\n  \"contexts\": [", f);
	for (size_t i = 0; i < c->ncontexts; i++) {
		const struct vp_compare_context *x = &c->contexts[i];
		const struct cmd_compare_side *s = x->a != VP_NO_NODE ? &side[0] : &side[1];
		const struct vp_stats *st;

		fprintf(f, "%s\n    {\"status\": \"%s\", ", i ? "," : "",
			cmd_compare_changes[x->change]);
		cmd_compare_jnode_chain(f, &s->r, x->a != VP_NO_NODE ? x->a : x->b);
		for (int k = 0; k < 2; k++) {
			st = cmd_compare_ctx_stats(&side[k], k ? x->b : x->a);
			fprintf(f, ", \"%s\": ", k ? "regression" : "profile");
			if (!st) {
				fputs("null", f);
				continue;
			}
			fprintf(f, "{\"count\": %" PRIu64, st->n);
			cmd_compare_jnum(f, "mean", st->n ? st->mean : 0, 1);
			cmd_compare_jnum(f, "stddev", vp_stats_stddev(st), 1);
			cmd_compare_jnum(f, "cov", vp_stats_cov(st), 1);
			fprintf(f, ", \"high_variance\": %s}",
				(k ? x->hv_b : x->hv_a) ? "true" : "false");
		}
		cmd_compare_jtest(f, "mean_test", "t", &x->mean);
		cmd_compare_jtest(f, "variance_test", "f", &x->var);
		fputc('}', f);
	}
	fputs("\n  ]", f);
}

static void cmd_compare_jstats(FILE *f, const char *key, const struct vp_stats *s, double vim,
			       int in_set)
{
	fprintf(f, ", \"%s\": {\"count\": %" PRIu64, key, s->n);
	cmd_compare_jnum(f, "mean", s->n ? s->mean : 0, 1);
	cmd_compare_jnum(f, "stddev", vp_stats_stddev(s), 1);
	cmd_compare_jnum(f, "cov", vp_stats_cov(s), 1);
	cmd_compare_jnum(f, "vim", vim, 1);
	fprintf(f, ", \"in_pattern_set\": %s}", in_set ? "true" : "false");
}

static void cmd_compare_json(FILE *f, const struct cmd_compare_opts *o,
			     const struct cmd_compare_side *side, const struct vp_compare *c)
{
	int first = 1;

	fputs("{\n  \"json_version\": 1,\n  \"profile\": ", f);
	report_json_string(f, o->path[0]);
	fputs(",\n  \"regression\": ", f);
	report_json_string(f, o->path[1]);
	fputs(",\n  \"parameters\": {", f);
	cmd_compare_jnum(f, "min_overlap", c->params.min_overlap, 0);
	fprintf(f, ", \"symmetric\": %s", c->params.symmetric ? "true" : "false");
	cmd_compare_jnum(f, "alpha", c->params.alpha, 1);
	cmd_compare_jnum(f, "cutoff", o->params.cutoff, 1);
	cmd_compare_jnum(f, "cov_threshold", side[0].an.cov_threshold, 1);
	cmd_compare_jnum(f, "beta", o->params.beta, 1);
	cmd_compare_jnum(f, "k", side[0].an.k, 1);
	fprintf(f, ", \"time\": \"%s\"", time_base_name(o->time));
	fputs("},\n  ", f);
	cmd_compare_jnum(f, "overlap", c->overlap, 0);
	fputs(",\n  ", f);
	cmd_compare_jnum(f, "overlap_regression", c->overlap_b, 0);
	fprintf(f, ",\n  \"agree\": %s,\n  \"verdict\": \"%s\",\n  \"program\": {\"same\": \"%s\"",
		c->agree ? "true" : "false", cmd_compare_verdicts[c->verdict],
		cmd_compare_programs[c->program]);
	cmd_compare_jprogram(f, "profile", &side[0]);
	cmd_compare_jprogram(f, "regression", &side[1]);
	fprintf(f, "},\n  \"tests\": %zu,\n  \"contexts_new\": %zu,\n"
		   "  \"contexts_vanished\": %zu,\n  \"contexts_unsure\": %zu",
		c->ntests, c->nctx_new, c->nctx_vanished, c->nctx_unsure);
	cmd_compare_jcontexts(f, side, c);
	fprintf(f, ",\n  \"profile_set\": %zu,\n  \"regression_set\": %zu,\n"
		   "  \"common\": %zu,\n  \"patterns\": [",
		c->nset_a, c->nset_b, c->ncommon);
	for (size_t i = 0; i < c->npatterns; i++) {
		const struct vp_compare_pattern *cp = &c->patterns[i];
		const struct vp_pattern *pa = &side[0].an.patterns[cp->a];

		fprintf(f, "%s\n    {\"rank\": %zu, \"status\": \"%s\", ", first ? "" : ",",
			cp->a + 1, cmd_compare_status(cp));
		first = 0;
		cmd_compare_jchain(f, &side[0].r, pa);
		cmd_compare_jstats(f, "profile", &pa->stats, pa->vim, cp->in_set_a);
		cmd_compare_jstats(f, "regression", &cp->b, cp->vim_b, cp->in_set_b);
		fprintf(f, ", \"regression_nodes\": %zu", cp->bnodes);
		cmd_compare_jtest(f, "mean_test", "t", &cp->mean);
		cmd_compare_jtest(f, "variance_test", "f", &cp->var);
		fputc('}', f);
	}
	fputs("\n  ],\n  \"new\": [", f);
	for (size_t i = 0; i < c->nnew; i++) {
		const struct vp_pattern *pb = &side[1].an.patterns[c->new_b[i]];

		fprintf(f, "%s\n    {\"rank\": %zu, ", i ? "," : "", c->new_b[i] + 1);
		cmd_compare_jchain(f, &side[1].r, pb);
		cmd_compare_jstats(f, "regression", &pb->stats, pb->vim, pb->in_pattern_set);
		fputc('}', f);
	}
	fputs("\n  ]\n}\n", f);
}

static int cmd_compare_run(const struct cmd_compare_opts *o)
{
	struct cmd_compare_side side[2];
	struct vp_compare_input in[2];
	struct vp_compare c;
	FILE *f = stdout;
	int err, ret = EXIT_TROUBLE;

	memset(side, 0, sizeof(side));
	for (int i = 0; i < 2; i++) {
		if (cmd_compare_load(o, i, &side[i]) < 0)
			goto out;
		in[i] = (struct vp_compare_input){ &side[i].tree, side[i].r.hdr, side[i].reader,
						   &side[i].an };
	}
	err = vp_compare_run(&c, &in[0], &in[1], &o->cmp);
	if (err < 0) {
		error("cannot compare '%s' with '%s': %s", o->path[0], o->path[1], strerror(-err));
		goto out;
	}
	if (c.program == VP_PROG_OTHER)
		warning("'%s' and '%s' record different programs ('%s' and '%s')", o->path[0],
			o->path[1], cmd_compare_program_path(&side[0]),
			cmd_compare_program_path(&side[1]));
	if (o->output) {
		f = fopen(o->output, "w");
		if (!f) {
			error("cannot open '%s': %s", o->output, strerror(errno));
			goto out_cmp;
		}
	}
	if (o->format == COMPARE_JSON)
		cmd_compare_json(f, o, side, &c);
	else
		cmd_compare_text(f, o, side, &c);
	err = fflush(f) || ferror(f);
	if (f != stdout && fclose(f))
		err = 1;
	if (err) {
		error("cannot write '%s': %s", o->output ? o->output : "standard output",
		      strerror(errno));
		goto out_cmp;
	}
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
	o.max_memory = ANALYSIS_MAX_MEMORY_DEFAULT;
	vp_analysis_params_default(&o.params);
	vp_compare_params_default(&o.cmp);
	ret = cmd_compare_parse(argc, argv, &o);
	if (ret > 0) {
		cmd_compare_print_usage(stdout, 1);
		return 0;
	}
	if (ret < 0)
		return EXIT_USAGE;
	if (vp_analysis_params_check(&o.params, msg, sizeof(msg)) < 0) {
		error("invalid analysis parameters: %s", msg);
		return EXIT_USAGE;
	}
	for (int i = 0; i < 2; i++) {
		if (o.output && vp_output_same(o.output, o.path[i])) {
			error("cannot write '%s': it is the input '%s'", o.output, o.path[i]);
			return EXIT_USAGE;
		}
	}
	return cmd_compare_run(&o);
}
