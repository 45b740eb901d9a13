/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * cmd-bound.c - `varperf bound TASK`: the regression-based maximal
 * execution time of Poplavko et al. 2016 (the maximal model, eps+, the
 * pragmatic MET and its probability), trained on a random share of the
 * task's invocations and tested on the rest (task-model.c).
 */
#include <config.h>

#include "builtin.h"
#include "task-model.h"

int cmd_bound(int argc, char **argv)
{
	return task_model_main(argc, argv, 1);
}
