/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * builtin.h - the varperf subcommands.  Each lives in cmd-<name>.c and
 * exports exactly one entry point; varperf.c dispatches from one table.
 */
#ifndef VARPERF_BUILTIN_H
#define VARPERF_BUILTIN_H

int cmd_bound(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_gdb(int argc, char **argv);
int cmd_predict(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_version(int argc, char **argv);

#endif
