/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * regression-task.h - the rows a task's regression fits (regression.h),
 * read from a recording: one row per paired invocation of the task's
 * calling-context node, Y its compensated duration, X_j the calls that
 * invocation made through its j-th child call site.  The predictors are
 * the node's probed children, the function-level analogue of the flow
 * counters of Poplavko et al. 2016, §4.1; a callee that was not probed
 * has no count and its time stays in the constant and the error.
 */
#ifndef VARPERF_CORE_REGRESSION_TASK_H
#define VARPERF_CORE_REGRESSION_TASK_H

#include <stddef.h>
#include <stdint.h>

#include "recording.h"

struct vp_task_rows {
	uint32_t node;	  /* the task's node of rec->tree */
	size_t n, k;	  /* rows, predictors */
	double *y;	  /* n durations, in the recording's time base */
	double *x;	  /* n * k call counts, row-major */
	uint32_t *child;  /* k child node ids: predictor j's call site */
};

/**
 * vp_task_rows - read @node's invocations from @rec (a second pass over the
 * file) into @ret.  Returns 0, or a negative errno with a message in @msg.
 * vp_task_rows_release() frees what @ret holds.
 */
int vp_task_rows(struct vp_recording *rec, uint32_t node, struct vp_task_rows *ret, char *msg,
		 size_t len);
void vp_task_rows_release(struct vp_task_rows *r);

#endif
