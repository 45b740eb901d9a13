/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * util.h - helpers of the varperf command's layers (cli/, report/,
 * perf-collector/; never core/, which runs inside GDB): git-style messages
 * and die-on-OOM allocation.
 *
 * Messages follow git's grammar: lower case, no trailing period, the
 * subject quoted: error("cannot open '%s'", path).
 */
#ifndef VARPERF_UTIL_H
#define VARPERF_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

extern int verbose; /* number of -v given to varperf */

/* The exit status of a wrong command line, every command's (git's);
 * die() exits with 128. */
enum { EXIT_USAGE = 129 };

/* "varperf: error: ..." on stderr; returns -1 so callers can return it. */
int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * Keep this thread's error() messages to itself while @on: for a caller
 * that explains a failure better than the code it calls (in its own
 * terms, without that code's internal names).
 */
void mute_errors(int on);
/*
 * Hold this thread's error() messages back until release_errors(), which
 * prints them (@show) or drops them: for a step whose failure a signal
 * may explain better (the program ended by Ctrl-C while varperf opened
 * its probes).
 */
void hold_errors(void);
void release_errors(int show);
/*
 * A status line on stderr, a terminal (the caller checks): "\r", clear
 * to the end of the line, @text, no newline - redrawn in place.  Every
 * message (error(), warning(), info()...) erases it first, in the same
 * write; status_line_clear() erases it.
 */
void status_line(const char *text);
void status_line_clear(void);
/* "varperf: warning: ..." on stderr. */
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "varperf: fatal: ..." and exit(128). */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* "varperf: ..." informational line on stderr (not suppressed). */
void info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Debug output on stderr when verbose >= level. */
void pr_debug_level(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define pr_debug(...) pr_debug_level(1, __VA_ARGS__)
#define pr_debug2(...) pr_debug_level(2, __VA_ARGS__)

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Parse a non-negative number with optional suffix; 0 or -1 on error. */
int parse_double(const char *s, double *ret);
int parse_uint64(const char *s, unsigned long long *ret);
/* "12.3 us", "4.56 ms", "1.2 s": @ns nanoseconds in human units. */
const char *fmt_duration(double ns, char *buf, size_t len);

/* Clock @clk (CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID, ...) in ns. */
uint64_t clock_ns(clockid_t clk);
/* CLOCK_MONOTONIC in ns: the clock every record's time is on. */
static inline uint64_t monotonic_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/*
 * A wait status as an exit code, the shell's way: the status of a
 * process that exited, 128 + the signal of one killed, 1 otherwise.
 */
int exit_code_of(int status);

#endif
