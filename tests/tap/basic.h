/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * basic.h - a small TAP library for the C tests, with the API of Russ
 * Allbery's c-tap-harness (our own implementation).  Output goes to stdout
 * and is read by automake's tap-driver.sh.
 */
#ifndef VARPERF_TESTS_TAP_BASIC_H
#define VARPERF_TESTS_TAP_BASIC_H

#include <stddef.h>

#define TAP_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define TAP_NORETURN __attribute__((noreturn))

/* Number of the next test (the first is 1). */
extern unsigned long testnum;

/*
 * plan - announce that @count tests follow; prints "1..count".  When the
 * program exits, a different number of tests run or any failure makes the
 * exit status non-zero.  Call once, before any test.
 */
void plan(unsigned long count);

/* plan_lazy - print the plan at exit, from the number of tests run. */
void plan_lazy(void);

/* skip_all - "1..0 # SKIP reason" and exit 0: prerequisites are missing. */
void skip_all(const char *format, ...) TAP_PRINTF(1, 2) TAP_NORETURN;

/*
 * ok - report one test: passes when @success is non-zero.  The description
 * is a printf format; every check below returns its verdict (1 pass, 0 fail)
 * so callers can print more diagnostics on failure.
 */
int ok(int success, const char *format, ...) TAP_PRINTF(2, 3);

/* ok_block - report @count tests with the same verdict and description. */
void ok_block(unsigned long count, int success, const char *format, ...) TAP_PRINTF(3, 4);

/* skip - report one test as skipped with a reason. */
void skip(const char *reason, ...) TAP_PRINTF(1, 2);

/* skip_block - report @count tests as skipped. */
void skip_block(unsigned long count, const char *reason, ...) TAP_PRINTF(2, 3);

/*
 * Comparisons.  On failure each prints "# wanted: ..." and "#   seen: ..."
 * diagnostics.  The description follows the values.
 */
int is_int(long long wanted, long long seen, const char *format, ...) TAP_PRINTF(3, 4);
int is_uint(unsigned long long wanted, unsigned long long seen, const char *format, ...)
	TAP_PRINTF(3, 4);
int is_hex(unsigned long long wanted, unsigned long long seen, const char *format, ...)
	TAP_PRINTF(3, 4);
/* Strings compare with strcmp; NULL equals only NULL. */
int is_string(const char *wanted, const char *seen, const char *format, ...) TAP_PRINTF(3, 4);
/* @len bytes compare with memcmp; the first difference is shown. */
int is_blob(const void *wanted, const void *seen, size_t len, const char *format, ...)
	TAP_PRINTF(4, 5);

/*
 * is_double - passes when |seen - wanted| <= @epsilon (absolute tolerance).
 * Two NaNs are equal; infinities must match exactly.
 */
int is_double(double wanted, double seen, double epsilon, const char *format, ...)
	TAP_PRINTF(4, 5);

/*
 * is_rel - passes when |seen - wanted| <= @reltol * |wanted| (relative
 * tolerance: 0.01 is 1 %).  A wanted value of 0 therefore needs exactly 0;
 * NaN and infinities behave as in is_double().
 */
int is_rel(double wanted, double seen, double reltol, const char *format, ...) TAP_PRINTF(4, 5);

/* diag - a "# "-prefixed comment on stdout (each line prefixed). */
void diag(const char *format, ...) TAP_PRINTF(1, 2);
/* sysdiag - diag() followed by ": " and strerror(errno) when errno is set. */
void sysdiag(const char *format, ...) TAP_PRINTF(1, 2);

/* bail - "Bail out! reason" and exit 255: the test cannot go on. */
void bail(const char *format, ...) TAP_PRINTF(1, 2) TAP_NORETURN;
/* sysbail - bail() followed by ": " and strerror(errno) when errno is set. */
void sysbail(const char *format, ...) TAP_PRINTF(1, 2) TAP_NORETURN;

/* Allocation that bails out on failure, for test code only. */
void *bmalloc(size_t size);
void *bcalloc(size_t n, size_t size);
void *brealloc(void *p, size_t size);
char *bstrdup(const char *s);
char *basprintf(const char *format, ...) TAP_PRINTF(1, 2);

/*
 * test_file_path - find @file (a path relative to tests/, such as
 * "fixtures/fx-basic") under $top_builddir/tests, then $top_srcdir/tests.
 * Returns a malloc'd path to free with test_file_path_free(), or NULL when
 * neither exists (or the variables are unset).
 */
char *test_file_path(const char *file);
void test_file_path_free(char *path);

/*
 * test_tmpdir - create a fresh private directory (under $TMPDIR, else
 * /tmp) and return its path.  test_tmpdir_free() removes the directory and
 * the plain files in it, and frees the path.  Bails out on failure.
 */
char *test_tmpdir(void);
void test_tmpdir_free(char *path);

#endif
