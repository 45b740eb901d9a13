/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * compare-text.c - `varperf compare` for people: the verdict, the
 * profile's patterns in the regression, the calling contexts whose high
 * variance changed, and the regression's new patterns.
 */
#include <config.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "core/cct.h"
#include "core/compare.h"
#include "core/patterns.h"
#include "report.h"

static int compare_text_listed(const struct report_compare *rc, const struct vp_compare_pattern *cp)
{
	return rc->all || cp->in_set_a || cp->in_set_b;
}

/* "main [x.c:3] -> f [x.c:9]" */
static void compare_text_chain(FILE *f, const struct report *r, const struct vp_pattern *p)
{
	char cs[512];

	for (size_t i = 0; i < p->len; i++) {
		if (i)
			fputs(report_sym(SYM_ARROW), f);
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
static void compare_text_p(FILE *f, const struct vp_test *t, double alpha)
{
	double p = t->p_adj;

	if (isnan(p))
		fprintf(f, " %8s ", "-");
	else if (p < 1e-300)
		fprintf(f, " %8s%c", "< 1e-300", p < alpha ? '*' : ' ');
	else
		fprintf(f, " %8.2g%c", p, p < alpha ? '*' : ' ');
}

/* "programs: ..." of the text header: what the two recordings ran. */
/* Whether the durations compared hold the probes' cost (report's --raw). */
static void compare_text_durations(FILE *f, const struct report_compare *rc)
{
	int a = rc->side[0]->compensated, b = rc->side[1]->compensated;

	fputs("  durations: ", f);
	if (a == b)
		fputs(a ? "probe costs subtracted (--raw: as measured)\n"
			: "as measured, probe costs included\n",
		      f);
	else
		fprintf(f, "probe costs subtracted in the %s only (it has calibrated costs)\n",
			a ? "profile" : "regression");
}

static void compare_text_programs(FILE *f, const struct report_compare *rc)
{
	const struct vp_compare *c = rc->c;
	const char *pa = report_program_path(rc->side[0]);
	const char *pb = report_program_path(rc->side[1]);

	fputs("  programs: ", f);
	switch (c->program) {
	case VP_PROG_SAME:
		fputs("the same ('", f);
		report_put(f, pa);
		fprintf(f, "', one %s)\n",
			rc->side[0]->hdr->modules[0].build_id_len ? "build-id" : "path and size");
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

enum { COMPARE_TEXT_CHAIN_MAX = 6 };

/* The calling context of node @id, its innermost elements. */
static void compare_text_node_chain(FILE *f, const struct report *r, uint32_t id)
{
	uint32_t path[COMPARE_TEXT_CHAIN_MAX], n = 0, depth = r->tree->nodes[id].depth;
	char cs[512];

	for (uint32_t x = id; x != VP_NODE_ROOT && n < COMPARE_TEXT_CHAIN_MAX;
	     x = r->tree->nodes[x].parent)
		path[n++] = x;
	if (depth > n)
		fprintf(f, "(%" PRIu32 " more)%s", depth - n, report_sym(SYM_ARROW));
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
			fputs(report_sym(SYM_ARROW), f);
	}
}

static void compare_text_side(FILE *f, const struct report *r, const struct vp_stats *st)
{
	char b[32];

	if (!st) {
		fprintf(f, " %9s %9s %6s", "-", "-", "-");
		return;
	}
	fprintf(f, " %9" PRIu64 " %9s %6.3f", st->n, report_time(r, st->mean, b, sizeof(b)),
		vp_stats_cov(st));
}

static void compare_text_contexts(FILE *f, const struct report_compare *rc)
{
	const struct vp_compare *c = rc->c;
	const struct report *const *side = rc->side;
	size_t shown = rc->all ? c->ncontexts : c->nctx_new + c->nctx_vanished + c->nctx_unsure;

	if (!shown)
		return;
	fprintf(f, "\nCalling contexts whose high variance %s (p as above):\n",
		rc->all ? "changed, and all the others significant in either" : "changed");
	fprintf(f, "  status        N A    mean A  CoV A       N B    mean B  CoV B   p(mean)    "
		   "p(var)  calling context\n");
	for (size_t i = 0; i < c->ncontexts; i++) {
		const struct vp_compare_context *x = &c->contexts[i];

		if (!rc->all && x->change == VP_CTX_SAME)
			continue;
		fprintf(f, "  %-8s", report_compare_change(x->change));
		compare_text_side(f, side[0], report_node_stats(side[0], x->a));
		compare_text_side(f, side[1], report_node_stats(side[1], x->b));
		compare_text_p(f, &x->mean, c->params.alpha);
		compare_text_p(f, &x->var, c->params.alpha);
		fputs("  ", f);
		if (x->a != VP_NO_NODE)
			compare_text_node_chain(f, side[0], x->a);
		else
			compare_text_node_chain(f, side[1], x->b);
		fputc('\n', f);
	}
}

int report_compare_text(const struct report_compare *rc)
{
	const struct vp_compare *c = rc->c;
	const struct report *ra = rc->side[0], *rb = rc->side[1];
	FILE *f = rc->out;
	char b1[32], b2[32], b3[32], b4[32];

	fputs("varperf compare: profile '", f);
	report_put(f, rc->path[0]);
	fputs("', regression '", f);
	report_put(f, rc->path[1]);
	fputc('\'', f);
	if (rc->time != VP_TIME_WALL)
		fprintf(f, ", in %s",
			rc->time == VP_TIME_CPU		 ? "on-CPU time"
			: rc->time == VP_TIME_BLOCKED	 ? "blocked time"
			: rc->time == VP_TIME_PREEMPTED ? "preempted time"
			: rc->time == VP_TIME_OWN	 ? "own time (wall clock less preemption)"
							 : "off-CPU time");
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
	compare_text_programs(f, rc);
	compare_text_durations(f, rc);
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
		const struct vp_pattern *pa = &ra->an->patterns[cp->a];
		double change = pa->stats.mean > 0 ? 100.0 * (cp->b.mean - pa->stats.mean) /
							   pa->stats.mean
						   : 0.0;

		if (!compare_text_listed(rc, cp))
			continue;
		fprintf(f, "  %-7s %5zu %9s %9s %9s %9s ", report_compare_status(cp), cp->a + 1,
			report_time(ra, pa->vim, b1, sizeof(b1)),
			report_time(rb, cp->vim_b, b2, sizeof(b2)),
			report_time(ra, pa->stats.mean, b3, sizeof(b3)),
			cp->b.n ? report_time(rb, cp->b.mean, b4, sizeof(b4)) : "-");
		if (cp->b.n)
			fprintf(f, "%+6.0f%%", change);
		else
			fprintf(f, "%7s", "-");
		compare_text_p(f, &cp->mean, c->params.alpha);
		fprintf(f, " %7.3f %6.3f", vp_stats_cov(&pa->stats), vp_stats_cov(&cp->b));
		compare_text_p(f, &cp->var, c->params.alpha);
		fputs("  ", f);
		compare_text_chain(f, ra, pa);
		fputc('\n', f);
	}
	compare_text_contexts(f, rc);
	if (!c->nnew)
		return ferror(f) ? -1 : 0;
	fprintf(f, "\nNew in the regression (its own Pattern Set, in contexts no pattern of the "
		   "profile matches):\n");
	fprintf(f, "  rank         N      mean    CoV       VIM  call chain\n");
	for (size_t i = 0; i < c->nnew; i++) {
		const struct vp_pattern *pb = &rb->an->patterns[c->new_b[i]];

		fprintf(f, "  %4zu %9" PRIu64 " %9s %6.3f %9s  ", c->new_b[i] + 1, pb->stats.n,
			report_time(rb, pb->stats.mean, b1, sizeof(b1)), vp_stats_cov(&pb->stats),
			report_time(rb, pb->vim, b2, sizeof(b2)));
		compare_text_chain(f, rb, pb);
		fputc('\n', f);
	}
	return ferror(f) ? -1 : 0;
}
