/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * task-model.h - the shared body of `varperf explain` (@bound 0) and
 * `varperf bound` (@bound 1): their options, the task's invocations and
 * the regression.  Returns the command's exit status.
 */
#ifndef VARPERF_CLI_TASK_MODEL_H
#define VARPERF_CLI_TASK_MODEL_H

int task_model_main(int argc, char **argv, int bound);

#endif
