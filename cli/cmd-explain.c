/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * cmd-explain.c - `varperf explain TASK`: what a task's time depends on,
 * as a linear model of its duration on the calls it makes through each
 * call site ("time = 1.9 ms + 61 us x calls(collide)"), fitted by the
 * stepwise regression of Poplavko et al. 2016, §5.2 (task-model.c).
 */
#include <config.h>

#include "builtin.h"
#include "task-model.h"

int cmd_explain(int argc, char **argv)
{
	return task_model_main(argc, argv, 0);
}
