/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * regress.c - `varperf explain` and `varperf bound` as text and JSON: the
 * fitted model of a task's time on its call counts, and the regression
 * MET table of Poplavko et al. 2016 (Table 1: b-, b+, X-, X+, (bX)+, eps+,
 * the pragmatic MET), its probability (Eq. 5) and the test set's counts.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/regression.h"
#include "core/regression-task.h"
#include "json-writer.h"
#include "report.h"
#include "util/shell.h"
#include "util/util.h"

enum { REGRESS_JSON_VERSION = 1 };

static const char *const col_reason[] = {
	[VP_COL_USED] = "predictor",
	[VP_COL_CONSTANT] = "constant",
	[VP_COL_REDUNDANT] = "redundant",
	[VP_COL_NOT_ENTERED] = "not significant",
	[VP_COL_LIMIT] = "N > 5p",
};

/* "calls(func)" of predictor column @col; "calls(func@file:line)" when
 * the task calls func from more than one site and @qualify (the tables
 * have a column for the site). */
static const char *pred_name(const struct report_regress *rr, size_t col, int qualify, char *buf,
			     size_t len)
{
	const struct vp_cct_node *c = &rr->r->tree->nodes[rr->rows->child[col]];
	char site[256];
	size_t j;

	for (j = 0; j < rr->rows->k; j++)
		if (j != col && rr->r->tree->nodes[rr->rows->child[j]].func == c->func)
			break;
	if (qualify && j < rr->rows->k && c->callsite != VP_NO_CALLSITE) {
		report_callsite_str(rr->r, c->callsite, 1, site, sizeof(site));
		/* a label too long for @buf says it was cut */
		if (snprintf(buf, len, "calls(%s@%s)", report_func_name(rr->r, c->func), site) >=
			    (int)len &&
		    len > 4)
			memcpy(buf + len - 4, "...", 4);
	} else {
		snprintf(buf, len, "calls(%s)", report_func_name(rr->r, c->func));
	}
	return buf;
}

static const char *pred_site(const struct report_regress *rr, size_t col, char *buf, size_t len)
{
	const struct vp_cct_node *c = &rr->r->tree->nodes[rr->rows->child[col]];

	return report_callsite_str(rr->r, c->callsite, 1, buf, len);
}

static const char *tm(const struct report_regress *rr, double v, char *buf, size_t len)
{
	if (v < 0) {
		buf[0] = '-';
		report_time(rr->r, -v, buf + 1, len - 1);
		return buf;
	}
	return report_time(rr->r, v, buf, len);
}

/* "time ≈ 1.9 ms + 61 µs × calls(collide)" */
static void text_formula(const struct report_regress *rr)
{
	const struct vp_regress_model *m = rr->m;
	char b[64], n[256];
	size_t t;

	fprintf(rr->out, "time %s %s", report_sym(SYM_APPROX), tm(rr, m->terms[0].b, b, sizeof(b)));
	for (t = 1; t < m->nterms; t++) {
		double v = m->terms[t].b;

		fprintf(rr->out, " %s %s%s ", v < 0 ? "-" : "+",
			report_time(rr->r, fabs(v), b, sizeof(b)), report_sym(SYM_TIMES));
		report_put(rr->out, pred_name(rr, m->terms[t].col, 1, n, sizeof(n)));
	}
	fputc('\n', rr->out);
}

static void text_excluded(const struct report_regress *rr)
{
	const struct vp_regress_model *m = rr->m;
	char n[256], s[256];
	size_t j, shown = 0;

	for (j = 0; j < m->ncols; j++) {
		if (m->col[j] == VP_COL_USED)
			continue;
		if (!shown++)
			fprintf(rr->out, "\nleft out:\n");
		fprintf(rr->out, "  ");
		report_put(rr->out, pred_name(rr, j, 0, n, sizeof(n)));
		fprintf(rr->out, " ");
		report_put(rr->out, pred_site(rr, j, s, sizeof(s)));
		fprintf(rr->out, ": %s\n", col_reason[m->col[j]]);
	}
}

/*
 * The functions whose probes auto mode's overhead budget removed during
 * the recording, the task's own first: where the task calls them, their
 * later calls are missing, the counts understate what its invocations
 * called, and the terms are biased (a child dropped before any call of it
 * completed has no node to say it is a child: all are named).  Into @funcs;
 * returns how many.
 */
static size_t budget_dropped(const struct report_regress *rr, uint32_t *funcs, size_t max)
{
	uint32_t task = rr->r->tree->nodes[rr->rows->node].func;
	size_t n = 0;

	if (vp_reader_unprobed(rr->r->reader, task))
		funcs[n++] = task;
	for (uint32_t f = 0; f < rr->r->hdr->nfuncs && n < max; f++)
		if (f != task && vp_reader_unprobed(rr->r->reader, f))
			funcs[n++] = f;
	return n;
}

/* The command that times the task and @ids over a whole run. */
static char *rerecord_command(const struct report_regress *rr, const uint32_t *ids, size_t n)
{
	const struct vp_header *h = rr->r->hdr;
	const struct vp_cct_node *t = &rr->r->tree->nodes[rr->rows->node];
	char *line = xstrdup("varperf record --mode=probe");

	line = vp_shell_append(line, "-f");
	line = vp_shell_append(line, h->funcs[t->func].name);
	for (size_t i = 0; i < n; i++) {
		if (ids[i] == t->func)
			continue;
		line = vp_shell_append(line, "-f");
		line = vp_shell_append(line, h->funcs[ids[i]].name);
	}
	line = vp_shell_append(line, "--");
	for (int i = 0; i < h->argc; i++)
		line = vp_shell_append(line, h->argv[i]);
	if (!h->argc)
		line = vp_shell_append(line, "PROGRAM");
	return line;
}

static void text_dropped(const struct report_regress *rr)
{
	uint32_t ids[16];
	size_t n = budget_dropped(rr, ids, sizeof(ids) / sizeof(*ids));
	char *cmd;

	if (!n)
		return;
	fprintf(rr->out, "\nnot timed to the end: the overhead budget removed the probes of ");
	for (size_t i = 0; i < n; i++) {
		fprintf(rr->out, "%s", i ? ", " : "");
		report_put(rr->out, report_func_name(rr->r, ids[i]));
	}
	fprintf(rr->out, " during the recording:\nwhere the task calls them, their later calls "
			 "are not counted, and the model is biased.\nTo time them with it over a "
			 "whole run:\n  ");
	cmd = rerecord_command(rr, ids, n);
	report_put(rr->out, cmd);
	fputc('\n', rr->out);
	free(cmd);
}

static void text_bad(const struct report_regress *rr)
{
	const struct vp_regress_model *m = rr->m;
	char b[64];
	size_t i;

	if (!m->nbad)
		return;
	fprintf(rr->out, "\nbad samples set aside (Cook's distance > %g): %zu\n", m->cook, m->nbad);
	for (i = 0; i < m->nbad && (i < 10 || rr->r->all); i++)
		fprintf(rr->out, "  invocation %zu  %s  D = %.3g\n", m->bad[i] + 1,
			tm(rr, rr->rows->y[m->bad[i]], b, sizeof(b)), m->bad_cook[i]);
	if (i < m->nbad)
		fprintf(rr->out, "  ... %zu more\n", m->nbad - i);
}

static void text_fit(const struct report_regress *rr)
{
	const struct vp_regress_model *m = rr->m;

	fprintf(rr->out, "R%s %.4f; residuals: KS D = %.3g, %s at 5 %% (critical %.3g)\n",
		report_sym(SYM_SQUARED), m->r2, m->ks_d, m->ks_d < m->ks_crit ? "normal" : "not normal", m->ks_crit);
}

static void text_header(const struct report_regress *rr)
{
	const struct vp_regress_model *m = rr->m;

	fprintf(rr->out, "task: ");
	report_put(rr->out, rr->task);
	fprintf(rr->out, "\ninvocations: %zu, fitted on %zu", m->nrows, m->ntrain);
	if (m->nrows > m->ntrain)
		fprintf(rr->out, " (%zu held out or set aside)", m->nrows - m->ntrain);
	fprintf(rr->out, "; candidate predictors: %zu\n\n", m->ncols);
}

/* Term @t's predictor and call site, "(constant)" and "" for the first. */
static void term_labels(const struct report_regress *rr, size_t t,
			const struct vp_regress_term *T, char *n, size_t nlen, char *s, size_t slen)
{
	if (t) {
		pred_name(rr, T->col, 0, n, nlen);
		pred_site(rr, T->col, s, slen);
	} else {
		snprintf(n, nlen, "(constant)");
		s[0] = 0;
	}
}

static int text_explain(const struct report_regress *rr)
{
	const struct vp_regress_model *m = rr->m;
	char b[64], lo[64], hi[64], n[256], s[256];
	size_t t;

	text_header(rr);
	text_formula(rr);
	fprintf(rr->out, "\n  %-28s %-24s %10s  %.0f %% interval\n", "term", "call site",
		"per call", 100 * (1 - m->alpha));
	for (t = 0; t < m->nterms; t++) {
		const struct vp_regress_term *T = &m->terms[t];

		term_labels(rr, t, T, n, sizeof(n), s, sizeof(s));
		fprintf(rr->out, "  ");
		report_put(rr->out, n);
		fprintf(rr->out, "%*s ", (int)(28 - strlen(n) > 28 ? 0 : 28 - strlen(n)), "");
		report_put(rr->out, s);
		fprintf(rr->out, "%*s %10s  [%s, %s]\n",
			(int)(24 - strlen(s) > 24 ? 0 : 24 - strlen(s)), "",
			tm(rr, T->b, b, sizeof(b)), tm(rr, T->lo, lo, sizeof(lo)),
			tm(rr, T->hi, hi, sizeof(hi)));
	}
	fputc('\n', rr->out);
	text_fit(rr);
	text_excluded(rr);
	text_bad(rr);
	text_dropped(rr);
	return 0;
}

static void fmt_count(double v, char *buf, size_t len)
{
	snprintf(buf, len, "%.15g", v);
}

/*
 * A MET whose model fails its own checks: no probability, what failed,
 * and the measured quantile instead.
 */
static void text_unclaimed(const struct report_regress *rr)
{
	const struct vp_regress_model *m = rr->m;
	const char *sep = "";
	char b[64];

	fprintf(rr->out, "\nMET %s, no probability stated: the model fails its checks (",
		tm(rr, m->met, b, sizeof(b)));
	if (m->unclaimed & VP_CLAIM_R2) {
		fprintf(rr->out, "R%s %.2f, below %.1f", report_sym(SYM_SQUARED), m->r2,
			VP_CLAIM_MIN_R2);
		sep = "; ";
	}
	if (m->unclaimed & VP_CLAIM_RESIDUALS) {
		fprintf(rr->out, "%sresiduals not normal", sep);
		sep = "; ";
	}
	if (m->unclaimed & VP_CLAIM_COVERAGE) {
		fprintf(rr->out, "%s%zu of %zu test invocations above the MET, more than %.3g %% "
				 "allows", sep, m->test_met_under, m->ntest,
			100 * (1 - m->probability));
		sep = "; ";
	}
	if (m->unclaimed & VP_CLAIM_UNTESTED)
		fprintf(rr->out, "%sno test set to check it on (--train 1)", sep);
	fprintf(rr->out, ")\nmeasured instead: %.4g %% of the %zu invocations took at most %s "
			 "(no model)\n",
		100 * m->probability, m->nrows, tm(rr, m->empirical, b, sizeof(b)));
}

static int text_bound(const struct report_regress *rr)
{
	const struct vp_regress_model *m = rr->m;
	char lo[64], hi[64], xl[32], xh[32], bx[64], n[256], s[256];
	size_t t, p = m->nterms;

	text_header(rr);
	fprintf(rr->out, "  %-24s %-20s %10s %10s %8s %8s %10s\n", "predictor", "call site",
		"b-", "b+", "X-", "X+", "(bX)+");
	for (t = 0; t < p; t++) {
		const struct vp_regress_term *T = &m->terms[t];

		term_labels(rr, t, T, n, sizeof(n), s, sizeof(s));
		fmt_count(T->xmin, xl, sizeof(xl));
		fmt_count(T->xmax, xh, sizeof(xh));
		fprintf(rr->out, "  ");
		report_put(rr->out, n);
		fprintf(rr->out, "%*s ", (int)(strlen(n) > 24 ? 0 : 24 - strlen(n)), "");
		report_put(rr->out, s);
		fprintf(rr->out, "%*s %10s %10s %8s %8s %10s\n",
			(int)(strlen(s) > 20 ? 0 : 20 - strlen(s)), "", tm(rr, T->lo, lo, sizeof(lo)),
			tm(rr, T->hi, hi, sizeof(hi)), xl, xh, tm(rr, T->bx, bx, sizeof(bx)));
	}
	fprintf(rr->out, "  %-24s %-20s %10s %10s %8s %8s %10s\n", "eps+", "", "", "", "", "",
		tm(rr, m->eps_plus, bx, sizeof(bx)));
	fprintf(rr->out, "  %-24s %-20s %10s %10s %8s %8s %10s\n", "pragmatic MET", "", "", "", "",
		"", tm(rr, m->met, bx, sizeof(bx)));
	if (!m->unclaimed)
		fprintf(rr->out, "\nMET %s with probability >= %.4g (1 - (p+2)alpha/2, p = %zu, "
				 "alpha = %g)\n",
			tm(rr, m->met, bx, sizeof(bx)), m->probability, p, m->alpha);
	else
		text_unclaimed(rr);
	fprintf(rr->out, "longest invocation %s, largest maximal-model estimate %s\n",
		tm(rr, m->ymax, lo, sizeof(lo)), tm(rr, m->yhat_plus_max, hi, sizeof(hi)));
	text_fit(rr);
	if (m->ntest)
		fprintf(rr->out,
			"test set: %zu invocations (%zu bad samples among them): %zu over-estimated, "
			"%zu under-estimated by the maximal model; %zu above the MET\n",
			m->ntest, m->nbad, m->test_over, m->test_under, m->test_met_under);
	else
		fprintf(rr->out, "test set: none (--train 1)\n");
	text_excluded(rr);
	text_bad(rr);
	text_dropped(rr);
	return 0;
}

int report_regress_text(const struct report_regress *rr)
{
	return rr->bound ? text_bound(rr) : text_explain(rr);
}

/* JSON names of the VP_CLAIM_* flags, by bit */
static const char *const claim_check[] = { "r2", "residuals", "coverage", "untested" };

static void json_pred(struct json *j, const struct report_regress *rr, size_t col)
{
	const struct vp_cct_node *c = &rr->r->tree->nodes[rr->rows->child[col]];
	char s[256];

	json_str(j, "function", report_func_name(rr->r, c->func));
	json_str(j, "callsite", report_callsite_str(rr->r, c->callsite, 0, s, sizeof(s)));
	json_u64(j, "node", rr->rows->child[col]);
}

int report_regress_json(const struct report_regress *rr)
{
	const struct vp_regress_model *m = rr->m;
	struct json j = { .f = rr->out, .pretty_depth = 1, .full_digits = 1 };
	size_t t, i;

	json_obj(&j, NULL);
	json_u64(&j, "json_version", REGRESS_JSON_VERSION);
	json_str(&j, "input", rr->r->input);
	json_str(&j, "task", rr->task);
	json_u64(&j, "node", rr->rows->node);
	json_str(&j, "unit", report_unit_name(rr->r->hdr->unit));
	json_double(&j, "alpha", m->alpha);
	json_double(&j, "alpha_sw", m->alpha_sw);
	json_double(&j, "cook_threshold", m->cook);
	json_u64(&j, "invocations", m->nrows);
	json_u64(&j, "train", m->ntrain);
	json_u64(&j, "test", m->ntest);
	json_arr(&j, "terms");
	for (t = 0; t < m->nterms; t++) {
		const struct vp_regress_term *T = &m->terms[t];

		json_obj_as(&j, NULL, JSON_COMPACT);
		if (t)
			json_pred(&j, rr, T->col);
		else
			json_null(&j, "function");
		json_double(&j, "b", T->b);
		json_double(&j, "se", T->se);
		json_double(&j, "b_minus", T->lo);
		json_double(&j, "b_plus", T->hi);
		json_double(&j, "p_value", T->p_value);
		if (rr->bound) {
			json_double(&j, "x_minus", T->xmin);
			json_double(&j, "x_plus", T->xmax);
			json_double(&j, "bx_plus", T->bx);
		}
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_arr(&j, "left_out");
	for (i = 0; i < m->ncols; i++) {
		if (m->col[i] == VP_COL_USED)
			continue;
		json_obj_as(&j, NULL, JSON_COMPACT);
		json_pred(&j, rr, i);
		json_str(&j, "reason", col_reason[m->col[i]]);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_double(&j, "r2", m->r2);
	json_double(&j, "sigma", m->sigma);
	json_obj_as(&j, "ks", JSON_COMPACT);
	json_double(&j, "d", m->ks_d);
	json_double(&j, "critical_5pct", m->ks_crit);
	json_bool(&j, "normal", m->ks_d < m->ks_crit);
	json_obj_end(&j);
	if (rr->bound) {
		json_double(&j, "sigma_plus", m->sigma_plus);
		json_double(&j, "eps_plus", m->eps_plus);
		json_double(&j, "met", m->met);
		json_double(&j, "probability", m->probability);
		json_bool(&j, "probability_claimed", !m->unclaimed);
		json_arr_as(&j, "checks_failed", JSON_COMPACT);
		for (i = 0; i < sizeof(claim_check) / sizeof(*claim_check); i++)
			if (m->unclaimed & (1u << i))
				json_str(&j, NULL, claim_check[i]);
		json_arr_end(&j);
		json_double(&j, "empirical_quantile", m->empirical);
		json_double(&j, "longest", m->ymax);
		json_double(&j, "max_yhat_plus", m->yhat_plus_max);
		json_obj_as(&j, "test_counts", JSON_COMPACT);
		json_u64(&j, "over", m->test_over);
		json_u64(&j, "under", m->test_under);
		json_u64(&j, "above_met", m->test_met_under);
		json_obj_end(&j);
	}
	{
		uint32_t ids[16];
		size_t n = budget_dropped(rr, ids, sizeof(ids) / sizeof(*ids));
		char *cmd = n ? rerecord_command(rr, ids, n) : NULL;

		json_arr_as(&j, "budget_dropped", JSON_COMPACT);
		for (i = 0; i < n; i++)
			json_str(&j, NULL, report_func_name(rr->r, ids[i]));
		json_arr_end(&j);
		if (cmd)
			json_str(&j, "rerecord", cmd);
		else
			json_null(&j, "rerecord");
		free(cmd);
	}
	json_arr(&j, "bad_samples");
	for (i = 0; i < m->nbad; i++) {
		json_obj_as(&j, NULL, JSON_COMPACT);
		json_u64(&j, "invocation", m->bad[i] + 1);
		json_double(&j, "duration", rr->rows->y[m->bad[i]]);
		json_double(&j, "cook", m->bad_cook[i]);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	fputc('\n', rr->out);
	return 0;
}
