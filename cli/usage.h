/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * usage.h - one convention for every command's command line: the exit
 * status of a usage error, the usage text, and what getopt_long() found
 * wrong, said in git's words.
 */
#ifndef VARPERF_CLI_USAGE_H
#define VARPERF_CLI_USAGE_H

#include <getopt.h>
#include <stdio.h>

#include "util/util.h" /* EXIT_USAGE */

/*
 * usage_print - write @usage, NULL-terminated lines, to @f: all of them
 * (--help), or only the first, the synopsis, after a usage error.
 */
void usage_print(FILE *f, const char *const *usage, int full);

/*
 * usage_getopt_start - make getopt_long() start over on @argv (optind = 0:
 * glibc re-initialises, as varperf.c may have used it) and leave its
 * errors to usage_getopt_error(); the short options must start "+:".
 */
void usage_getopt_start(void);

/*
 * usage_getopt_error - after getopt_long(@argc, @argv, ..., @opts) returned
 * @c, '?' or ':', say what was wrong ("unknown option '--x'", "unknown
 * switch 'x'", "option '--x' requires a value", "switch 'x' requires a
 * value", "option '--x' takes no value", "ambiguous option '--x' (could
 * be --xa or --xb)") and print the synopsis of @usage.  Returns EXIT_USAGE.
 */
int usage_getopt_error(int c, char **argv, const struct option *opts,
		       const char *const *usage);

/* usage_error - error() with @fmt, then the synopsis of @usage.  EXIT_USAGE. */
int usage_error(const char *const *usage, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
