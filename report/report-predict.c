// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * report-predict.c - `varperf predict` as text and as JSON (see
 * report-predict.h; the method is core/predict.h's).
 */
#include <config.h>

#include <math.h>
#include <stdio.h>

#include "json-writer.h"
#include "report-predict.h"
#include "util/util.h"

static const char *const strategy_name[VP_PREDICT_NSTRATEGIES] = {
	[VP_PREDICT_REPRESENTATIVE] = "representative",
	[VP_PREDICT_SAMPLE] = "sample",
};

static size_t total_samples(const struct vp_predict_data *d)
{
	size_t n = 0;

	for (size_t i = 0; i < d->nruns; i++)
		n += d->runs[i].n;
	return n;
}

void predict_render_text(FILE *f, const struct predict_result *p)
{
	const struct vp_predict_model *m = p->model;
	const struct vp_predict_data *d = p->data;
	char a[32], b[32], c[32];

	fprintf(f, "recordings:  %zu, %zu samples, %zu functions; %zu kept (%g%% coverage)\n",
		d->nruns, total_samples(d), d->nfuncs, m->dims, p->opts->coverage * 100);
	fprintf(f, "time:        %s\n", p->wall ? "wall-clock, waits included (--time=wall)"
						 : "CPU time, a sampling period per sample");
	fprintf(f, "model:       intervals of %zu samples, %u phase%s: the smallest score, %.4g "
		"samples,\n             of %zu (interval, phases) combinations\n",
		m->interval, m->k, m->k == 1 ? "" : "s", m->score, m->ncandidates);
	fprintf(f, "\n  phase  share  intervals  intervals at size n representative"
		"  sample mean +/- sd (n)  top function\n");
	for (unsigned q = 0; q < m->k; q++) {
		const struct vp_predict_phase *ph = &m->phases[q];
		char fit[48], n[16];

		snprintf(fit, sizeof(fit), "%.3g %c %.4g n", ph->fit.b0, ph->fit.b1 < 0 ? '-' : '+',
			 fabs(ph->fit.b1));
		snprintf(n, sizeof(n), "(%zu)", ph->sampled);
		fprintf(f, "  %5u %5.1f%% %10.1f  %-18s %15s  %8s +/- %-8s %-4s  ", q + 1,
			ph->weight * 100, ph->intervals, fit, fmt_duration(ph->rep_ns, a, sizeof(a)),
			fmt_duration(ph->mean_ns, b, sizeof(b)),
			fmt_duration(ph->sd_ns, c, sizeof(c)), n);
		if (ph->top < d->nfuncs)
			fprintf(f, "%s (%.0f%%)", d->names[ph->top], ph->top_share * 100);
		fputc('\n', f);
	}
	if (p->has_size) {
		fprintf(f, "\nrun time at size %.15g:\n", p->size);
		for (int s = 0; s < VP_PREDICT_NSTRATEGIES; s++) {
			const struct vp_prediction *pr = &p->at[s];

			fprintf(f, "  %-15s %s", strategy_name[s],
				fmt_duration(pr->ns, a, sizeof(a)));
			if (isnan(pr->half))
				fprintf(f, " (no interval: 3 recordings or more needed)\n");
			else
				fprintf(f, " (95%% interval %s to %s)\n",
					fmt_duration(pr->ns - pr->half, b, sizeof(b)),
					fmt_duration(pr->ns + pr->half, c, sizeof(c)));
		}
	}
	if (!p->loo) {
		fprintf(f, "\nleave-one-out: not possible (it needs 3 recordings or more, and "
			"without any one of them\n  2 different sizes left and intervals that "
			"fit the shortest run)\n");
		return;
	}
	if (p->loo->folds < p->loo->n)
		fprintf(f, "\ncross-validation in %zu folds (each recording predicted from the "
			"others outside its fold;\n  the recordings ranked by size, every %zuth in "
			"one fold: leave-one-out takes a fit per recording):\n",
			p->loo->folds, p->loo->folds);
	else
		fprintf(f, "\nleave-one-out (each recording predicted from the others):\n");
	fprintf(f, "  %12s  %10s  %14s %7s  %10s %7s  %5s %2s\n", "size", "measured",
		"representative", "error", "sample", "error", "I", "k");
	for (size_t j = 0; j < p->loo->n; j++) {
		const struct vp_predict_loo_row *r = &p->loo->rows[j];

		fprintf(f, "  %12.15g  %10s  %14s %6.1f%%  %10s %6.1f%%  %5zu %2u\n", r->size,
			fmt_duration(r->actual_ns, a, sizeof(a)),
			fmt_duration(r->predicted_ns[0], b, sizeof(b)), r->rel_err[0] * 100,
			fmt_duration(r->predicted_ns[1], c, sizeof(c)), r->rel_err[1] * 100,
			r->interval, r->k);
	}
	fprintf(f, "mean relative error: representative %.1f%% (std %.1f%%), "
		"sample %.1f%% (std %.1f%%)\n",
		p->loo->mean[0] * 100, p->loo->sd[0] * 100, p->loo->mean[1] * 100,
		p->loo->sd[1] * 100);
}

void predict_render_json(FILE *f, const struct predict_result *p)
{
	const struct vp_predict_model *m = p->model;
	const struct vp_predict_data *d = p->data;
	struct json j = { .f = f, .pretty_depth = 1 };

	json_obj(&j, NULL);
	json_arr(&j, "recordings");
	for (size_t i = 0; i < d->nruns; i++) {
		json_obj(&j, NULL);
		json_str(&j, "file", d->runs[i].name);
		json_double(&j, "size", d->runs[i].size);
		json_u64(&j, "samples", d->runs[i].n);
		json_double(&j, "run_time_ns", d->runs[i].span_ns);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_str(&j, "time", p->wall ? "wall" : "cpu");
	json_u64(&j, "functions", d->nfuncs);
	json_u64(&j, "functions_kept", m->dims);
	json_double(&j, "coverage", p->opts->coverage);
	json_u64(&j, "interval", m->interval);
	json_u64(&j, "k", m->k);
	json_double(&j, "score", m->score);
	json_u64(&j, "combinations", m->ncandidates);
	json_arr(&j, "phases");
	for (unsigned q = 0; q < m->k; q++) {
		const struct vp_predict_phase *ph = &m->phases[q];

		json_obj(&j, NULL);
		json_double(&j, "share", ph->weight);
		json_double(&j, "intervals", ph->intervals);
		json_double(&j, "intercept", ph->fit.b0);
		json_double(&j, "slope", ph->fit.b1);
		json_double(&j, "residual_abs_sum", ph->fit.sar);
		json_double(&j, "representative_ns", ph->rep_ns);
		json_double(&j, "sample_mean_ns", ph->mean_ns);
		json_double(&j, "sample_sd_ns", ph->sd_ns);
		json_u64(&j, "sampled", ph->sampled);
		json_str_or_null(&j, "top_function", ph->top < d->nfuncs ? d->names[ph->top] : NULL);
		json_double(&j, "top_share", ph->top_share);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	if (p->has_size) {
		json_obj(&j, "prediction");
		json_double(&j, "size", p->size);
		for (int s = 0; s < VP_PREDICT_NSTRATEGIES; s++) {
			json_obj(&j, strategy_name[s]);
			json_double(&j, "ns", p->at[s].ns);
			if (isnan(p->at[s].half)) {
				json_null(&j, "low_ns");
				json_null(&j, "high_ns");
			} else {
				json_double(&j, "low_ns", p->at[s].ns - p->at[s].half);
				json_double(&j, "high_ns", p->at[s].ns + p->at[s].half);
			}
			json_obj_end(&j);
		}
		json_obj_end(&j);
	}
	if (p->loo) {
		json_obj(&j, "leave_one_out");
		json_u64(&j, "folds", p->loo->folds);
		json_arr(&j, "runs");
		for (size_t r = 0; r < p->loo->n; r++) {
			const struct vp_predict_loo_row *row = &p->loo->rows[r];

			json_obj(&j, NULL);
			json_double(&j, "size", row->size);
			json_double(&j, "measured_ns", row->actual_ns);
			for (int s = 0; s < VP_PREDICT_NSTRATEGIES; s++) {
				json_obj(&j, strategy_name[s]);
				json_double(&j, "ns", row->predicted_ns[s]);
				json_double(&j, "relative_error", row->rel_err[s]);
				json_obj_end(&j);
			}
			json_u64(&j, "interval", row->interval);
			json_u64(&j, "phases", row->k);
			json_obj_end(&j);
		}
		json_arr_end(&j);
		for (int s = 0; s < VP_PREDICT_NSTRATEGIES; s++) {
			json_obj(&j, strategy_name[s]);
			json_double(&j, "mean_relative_error", p->loo->mean[s]);
			json_double(&j, "sd_relative_error", p->loo->sd[s]);
			json_obj_end(&j);
		}
		json_obj_end(&j);
	} else {
		json_null(&j, "leave_one_out");
	}
	json_obj_end(&j);
	fputc('\n', f);
}
