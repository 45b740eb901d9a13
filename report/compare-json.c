/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * compare-json.c - `varperf compare --format json`: one object, the
 * verdict and its figures first, then the calling contexts, the profile's
 * patterns and the regression's new ones, one per line.  Numbers carry
 * all 17 digits; those that are not finite are null.
 */
#include <config.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/cct.h"
#include "core/compare.h"
#include "core/patterns.h"
#include "json-writer.h"
#include "report.h"
#include "util/util.h"

/* Layout version of this JSON; bump on incompatible changes. */
enum { COMPARE_JSON_VERSION = 1 };

static const char *const compare_json_verdicts[] = {
	[VP_VERDICT_AGREE] = "agree",
	[VP_VERDICT_DIFFER] = "differ",
	[VP_VERDICT_CANNOT_TELL] = "cannot_tell",
};

static const char *const compare_json_programs[] = {
	[VP_PROG_UNKNOWN] = "unknown",
	[VP_PROG_SAME] = "same",
	[VP_PROG_OTHER_BUILD] = "other_build",
	[VP_PROG_OTHER] = "other",
};

/* "functions" and "callsites" of the @n elements @nodes or @chain. */
static void compare_json_chain(struct json *j, const struct report *r,
			       const struct vp_chain_elem *chain, const uint32_t *nodes, size_t n)
{
	char cs[512];

	json_arr(j, "functions");
	for (size_t i = 0; i < n; i++)
		json_str(j, NULL, report_func_name(r, nodes ? r->tree->nodes[nodes[i]].func
							 : chain[i].func));
	json_arr_end(j);
	json_arr(j, "callsites");
	for (size_t i = 0; i < n; i++) {
		report_callsite_str(r, nodes ? r->tree->nodes[nodes[i]].callsite : chain[i].callsite,
				    0, cs, sizeof(cs));
		json_str_or_null(j, NULL, cs);
	}
	json_arr_end(j);
}

/* The calling context of node @id, outermost first. */
static void compare_json_node_chain(struct json *j, const struct report *r, uint32_t id)
{
	uint32_t depth = r->tree->nodes[id].depth, *path = xcalloc(depth + 1, sizeof(*path)), n = 0;

	for (uint32_t x = id; x != VP_NODE_ROOT && n <= depth; x = r->tree->nodes[x].parent)
		path[n++] = x;
	for (uint32_t i = 0; i < n / 2; i++) {
		uint32_t t = path[i];

		path[i] = path[n - 1 - i];
		path[n - 1 - i] = t;
	}
	compare_json_chain(j, r, NULL, path, n);
	free(path);
}

static void compare_json_test(struct json *j, const char *key, const char *stat,
			      const struct vp_test *t)
{
	json_obj(j, key);
	json_double(j, stat, t->stat);
	if (t->df2 > 0 || isnan(t->df2)) {
		json_double(j, "df1", t->df1);
		json_double(j, "df2", t->df2);
	} else {
		json_double(j, "df", t->df1);
	}
	json_double(j, "p", t->p);
	json_double(j, "p_adjusted", t->p_adj);
	json_obj_end(j);
}

static void compare_json_program(struct json *j, const char *key, const struct report *r)
{
	const struct vp_module *m = r->hdr->nmodules ? &r->hdr->modules[0] : NULL;

	if (!m) {
		json_null(j, key);
		return;
	}
	json_obj(j, key);
	json_str(j, "path", m->path ? m->path : "");
	if (m->build_id_len) {
		char *id = xmalloc(2 * m->build_id_len + 1);

		for (size_t i = 0; i < m->build_id_len; i++)
			snprintf(id + 2 * i, 3, "%02x", m->build_id[i]);
		json_str(j, "build_id", id);
		free(id);
	} else {
		json_null(j, "build_id");
	}
	if (m->size)
		json_u64(j, "size", m->size);
	else
		json_null(j, "size");
	json_obj_end(j);
}

static void compare_json_ctx_side(struct json *j, const char *key, const struct vp_stats *st,
				  int hv)
{
	if (!st) {
		json_null(j, key);
		return;
	}
	json_obj(j, key);
	json_u64(j, "count", st->n);
	json_double(j, "mean", st->n ? st->mean : 0);
	json_double(j, "stddev", vp_stats_stddev(st));
	json_double(j, "cov", vp_stats_cov(st));
	json_bool(j, "high_variance", hv);
	json_obj_end(j);
}

static void compare_json_contexts(struct json *j, const struct report_compare *rc)
{
	const struct vp_compare *c = rc->c;

	json_arr_as(j, "contexts", JSON_BLOCK);
	for (size_t i = 0; i < c->ncontexts; i++) {
		const struct vp_compare_context *x = &c->contexts[i];

		json_obj(j, NULL);
		json_str(j, "status", report_compare_change(x->change));
		if (x->a != VP_NO_NODE)
			compare_json_node_chain(j, rc->side[0], x->a);
		else
			compare_json_node_chain(j, rc->side[1], x->b);
		compare_json_ctx_side(j, "profile", report_node_stats(rc->side[0], x->a), x->hv_a);
		compare_json_ctx_side(j, "regression", report_node_stats(rc->side[1], x->b),
				      x->hv_b);
		compare_json_test(j, "mean_test", "t", &x->mean);
		compare_json_test(j, "variance_test", "f", &x->var);
		json_obj_end(j);
	}
	json_arr_end(j);
}

static void compare_json_stats(struct json *j, const char *key, const struct vp_stats *s,
			       double vim, int in_set)
{
	json_obj(j, key);
	json_u64(j, "count", s->n);
	json_double(j, "mean", s->n ? s->mean : 0);
	json_double(j, "stddev", vp_stats_stddev(s));
	json_double(j, "cov", vp_stats_cov(s));
	json_double(j, "vim", vim);
	json_bool(j, "in_pattern_set", in_set);
	json_obj_end(j);
}

static void compare_json_parameters(struct json *j, const struct report_compare *rc)
{
	const struct vp_analysis *an = rc->side[0]->an;

	json_obj(j, "parameters");
	json_double(j, "min_overlap", rc->c->params.min_overlap);
	json_bool(j, "symmetric", rc->c->params.symmetric);
	json_double(j, "alpha", rc->c->params.alpha);
	json_double(j, "cutoff", rc->params->cutoff);
	json_double(j, "cov_threshold", an->cov_threshold);
	json_double(j, "beta", rc->params->beta);
	json_double(j, "k", an->k);
	json_str(j, "time", vp_time_base_name(rc->time));
	json_obj_end(j);
}

static void compare_json_patterns(struct json *j, const struct report_compare *rc)
{
	const struct vp_compare *c = rc->c;
	const struct report *ra = rc->side[0], *rb = rc->side[1];

	json_arr_as(j, "patterns", JSON_BLOCK);
	for (size_t i = 0; i < c->npatterns; i++) {
		const struct vp_compare_pattern *cp = &c->patterns[i];
		const struct vp_pattern *pa = &ra->an->patterns[cp->a];

		json_obj(j, NULL);
		json_u64(j, "rank", cp->a + 1);
		json_str(j, "status", report_compare_status(cp));
		compare_json_chain(j, ra, pa->chain, NULL, pa->len);
		compare_json_stats(j, "profile", &pa->stats, pa->vim, cp->in_set_a);
		compare_json_stats(j, "regression", &cp->b, cp->vim_b, cp->in_set_b);
		json_u64(j, "regression_nodes", cp->bnodes);
		compare_json_test(j, "mean_test", "t", &cp->mean);
		compare_json_test(j, "variance_test", "f", &cp->var);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_arr_as(j, "new", JSON_BLOCK);
	for (size_t i = 0; i < c->nnew; i++) {
		const struct vp_pattern *pb = &rb->an->patterns[c->new_b[i]];

		json_obj(j, NULL);
		json_u64(j, "rank", c->new_b[i] + 1);
		compare_json_chain(j, rb, pb->chain, NULL, pb->len);
		compare_json_stats(j, "regression", &pb->stats, pb->vim, pb->in_pattern_set);
		json_obj_end(j);
	}
	json_arr_end(j);
}

int report_compare_json(const struct report_compare *rc)
{
	const struct vp_compare *c = rc->c;
	/* members of the document one per line, the lists' elements too */
	struct json j = { .f = rc->out, .pretty_depth = 1, .full_digits = 1 };

	json_obj(&j, NULL);
	json_u64(&j, "json_version", COMPARE_JSON_VERSION);
	json_str(&j, "profile", rc->path[0]);
	json_str(&j, "regression", rc->path[1]);
	compare_json_parameters(&j, rc);
	json_double(&j, "overlap", c->overlap);
	json_double(&j, "overlap_regression", c->overlap_b);
	json_bool(&j, "agree", c->agree);
	json_str(&j, "verdict", compare_json_verdicts[c->verdict]);
	json_obj(&j, "program");
	json_str(&j, "same", compare_json_programs[c->program]);
	compare_json_program(&j, "profile", rc->side[0]);
	compare_json_program(&j, "regression", rc->side[1]);
	json_obj_end(&j);
	json_obj(&j, "compensated");
	json_bool(&j, "profile", rc->side[0]->compensated);
	json_bool(&j, "regression", rc->side[1]->compensated);
	json_obj_end(&j);
	json_u64(&j, "tests", c->ntests);
	json_u64(&j, "contexts_new", c->nctx_new);
	json_u64(&j, "contexts_vanished", c->nctx_vanished);
	json_u64(&j, "contexts_unsure", c->nctx_unsure);
	compare_json_contexts(&j, rc);
	json_u64(&j, "profile_set", c->nset_a);
	json_u64(&j, "regression_set", c->nset_b);
	json_u64(&j, "common", c->ncommon);
	compare_json_patterns(&j, rc);
	json_obj_end(&j);
	fputc('\n', rc->out);
	return ferror(rc->out) ? -1 : 0;
}
