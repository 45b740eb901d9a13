/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * report-predict.h - the output of `varperf predict`: the chosen model, its
 * phases, the predicted run time and the leave-one-out table, as text or
 * JSON.
 */
#ifndef VARPERF_REPORT_PREDICT_H
#define VARPERF_REPORT_PREDICT_H

#include <stdio.h>

#include "core/predict.h"

struct predict_result {
	const struct vp_predict_data *data;
	const struct vp_predict_opts *opts;
	const struct vp_predict_model *model;
	int has_size;		      /* --size given */
	double size;
	struct vp_prediction at[VP_PREDICT_NSTRATEGIES];
	const struct vp_predict_loo *loo; /* NULL: fewer than 3 recordings */
	int wall;			  /* --time=wall */
};

void predict_render_text(FILE *f, const struct predict_result *p);
void predict_render_json(FILE *f, const struct predict_result *p);

#endif
