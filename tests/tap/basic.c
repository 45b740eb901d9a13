/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * basic.c - the TAP library of the C tests (see basic.h): test lines,
 * comparisons with diagnostics, plan bookkeeping and test file lookup.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "basic.h"

enum plan_kind { PLAN_NONE, PLAN_FIXED, PLAN_LAZY };

unsigned long testnum = 1;

static enum plan_kind plan_kind;
static unsigned long planned;
static unsigned long failed;
/* Set once the outcome is printed (or skip_all/bail took over). */
static int finished;
/*
 * Only the process that called plan() reports at exit: a test that forks
 * must not have its children print a second plan or verdict.
 */
static pid_t plan_pid;

static void vdiag(const char *format, va_list ap, int errnum)
{
	char *msg, *line, *next;

	if (vasprintf(&msg, format, ap) < 0) {
		fputs("# (diagnostic lost: out of memory)\n", stdout);
		return;
	}
	/* Every line of a diagnostic must be a TAP comment. */
	for (line = msg;; line = next + 1) {
		next = strchr(line, '\n');
		if (next)
			*next = '\0';
		if (!next && errnum)
			printf("# %s: %s\n", line, strerror(errnum));
		else
			printf("# %s\n", line);
		if (!next || next[1] == '\0')
			break;
	}
	free(msg);
	fflush(stdout);
}

void diag(const char *format, ...)
{
	va_list ap;

	va_start(ap, format);
	vdiag(format, ap, 0);
	va_end(ap);
}

void sysdiag(const char *format, ...)
{
	int errnum = errno;
	va_list ap;

	va_start(ap, format);
	vdiag(format, ap, errnum);
	va_end(ap);
}

static void TAP_NORETURN vbail(const char *format, va_list ap, int errnum)
{
	fflush(stderr);
	fputs("Bail out! ", stdout);
	vprintf(format, ap);
	if (errnum)
		printf(": %s", strerror(errnum));
	putchar('\n');
	finished = 1;
	exit(255);
}

void bail(const char *format, ...)
{
	va_list ap;

	va_start(ap, format);
	vbail(format, ap, 0);
}

void sysbail(const char *format, ...)
{
	int errnum = errno;
	va_list ap;

	va_start(ap, format);
	vbail(format, ap, errnum);
}

/*
 * Runs at exit: print a lazy plan, then turn a plan mismatch or a failed
 * test into a non-zero exit status.  _exit() is the only way to change the
 * status from an atexit handler; stdio is flushed first.
 */
static void finish(void)
{
	unsigned long run = testnum - 1;
	int status = 0;

	if (finished || plan_kind == PLAN_NONE || getpid() != plan_pid)
		return;
	finished = 1;
	if (plan_kind == PLAN_LAZY) {
		if (run == 0) {
			diag("no tests were run");
			status = 255;
		} else {
			printf("1..%lu\n", run);
		}
	} else if (run != planned) {
		diag("planned %lu tests but ran %lu", planned, run);
		status = 255;
	}
	if (failed > 0) {
		diag("failed %lu of %lu tests", failed, run);
		if (status == 0)
			status = failed < 254 ? (int)failed : 254;
	}
	fflush(stdout);
	fflush(stderr);
	if (status != 0)
		_exit(status);
}

static void start_plan(enum plan_kind kind, unsigned long count)
{
	if (plan_kind != PLAN_NONE)
		bail("plan() called twice");
	plan_kind = kind;
	planned = count;
	plan_pid = getpid();
	/* Keep TAP lines in order with anything the test writes itself. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (atexit(finish) != 0)
		sysbail("cannot register the exit handler");
}

void plan(unsigned long count)
{
	start_plan(PLAN_FIXED, count);
	printf("1..%lu\n", count);
	fflush(stdout);
}

void plan_lazy(void)
{
	start_plan(PLAN_LAZY, 0);
}

void skip_all(const char *format, ...)
{
	va_list ap;

	fflush(stderr);
	fputs("1..0 # SKIP ", stdout);
	va_start(ap, format);
	vprintf(format, ap);
	va_end(ap);
	putchar('\n');
	finished = 1;
	exit(0);
}

/* Print one test line; the description may be NULL or empty. */
static void vreport(int success, const char *format, va_list ap)
{
	if (plan_kind == PLAN_NONE)
		bail("test %lu reported before plan()", testnum);
	fflush(stderr);
	printf("%sok %lu", success ? "" : "not ", testnum++);
	if (!success)
		failed++;
	if (format && *format) {
		fputs(" - ", stdout);
		vprintf(format, ap);
	}
	putchar('\n');
	fflush(stdout);
}

int ok(int success, const char *format, ...)
{
	va_list ap;

	va_start(ap, format);
	vreport(success, format, ap);
	va_end(ap);
	return success != 0;
}

void ok_block(unsigned long count, int success, const char *format, ...)
{
	va_list ap;
	unsigned long i;

	for (i = 0; i < count; i++) {
		va_start(ap, format);
		vreport(success, format, ap);
		va_end(ap);
	}
}

static void vskip(const char *reason, va_list ap)
{
	if (plan_kind == PLAN_NONE)
		bail("test %lu skipped before plan()", testnum);
	printf("ok %lu # skip", testnum++);
	if (reason && *reason) {
		putchar(' ');
		vprintf(reason, ap);
	}
	putchar('\n');
	fflush(stdout);
}

void skip(const char *reason, ...)
{
	va_list ap;

	va_start(ap, reason);
	vskip(reason, ap);
	va_end(ap);
}

void skip_block(unsigned long count, const char *reason, ...)
{
	va_list ap;
	unsigned long i;

	for (i = 0; i < count; i++) {
		va_start(ap, reason);
		vskip(reason, ap);
		va_end(ap);
	}
}

int is_int(long long wanted, long long seen, const char *format, ...)
{
	int success = wanted == seen;
	va_list ap;

	va_start(ap, format);
	vreport(success, format, ap);
	va_end(ap);
	if (!success)
		diag("wanted: %lld\n  seen: %lld", wanted, seen);
	return success;
}

int is_uint(unsigned long long wanted, unsigned long long seen, const char *format, ...)
{
	int success = wanted == seen;
	va_list ap;

	va_start(ap, format);
	vreport(success, format, ap);
	va_end(ap);
	if (!success)
		diag("wanted: %llu\n  seen: %llu", wanted, seen);
	return success;
}

int is_hex(unsigned long long wanted, unsigned long long seen, const char *format, ...)
{
	int success = wanted == seen;
	va_list ap;

	va_start(ap, format);
	vreport(success, format, ap);
	va_end(ap);
	if (!success)
		diag("wanted: 0x%llx\n  seen: 0x%llx", wanted, seen);
	return success;
}

int is_string(const char *wanted, const char *seen, const char *format, ...)
{
	int success;
	va_list ap;

	if (wanted == NULL || seen == NULL)
		success = wanted == seen;
	else
		success = strcmp(wanted, seen) == 0;
	va_start(ap, format);
	vreport(success, format, ap);
	va_end(ap);
	if (!success) {
		/* Quotes make leading and trailing blanks visible. */
		if (wanted)
			diag("wanted: \"%s\"", wanted);
		else
			diag("wanted: (null)");
		if (seen)
			diag("  seen: \"%s\"", seen);
		else
			diag("  seen: (null)");
	}
	return success;
}

int is_blob(const void *wanted, const void *seen, size_t len, const char *format, ...)
{
	const unsigned char *w = wanted, *s = seen;
	size_t i = 0;
	int success;
	va_list ap;

	while (i < len && w[i] == s[i])
		i++;
	success = i == len;
	va_start(ap, format);
	vreport(success, format, ap);
	va_end(ap);
	if (!success)
		diag("first difference at byte %zu of %zu\nwanted: 0x%02x\n  seen: 0x%02x", i, len,
		     w[i], s[i]);
	return success;
}

/* NaN matches NaN; an infinity matches only itself; else |s - w| <= tol. */
static int doubles_match(double wanted, double seen, double tol)
{
	if (isnan(wanted) || isnan(seen))
		return isnan(wanted) && isnan(seen);
	if (isinf(wanted) || isinf(seen))
		return wanted == seen;
	return fabs(seen - wanted) <= tol;
}

int is_double(double wanted, double seen, double epsilon, const char *format, ...)
{
	int success;
	va_list ap;

	if (!(epsilon >= 0))
		bail("is_double: negative or NaN tolerance %g", epsilon);
	success = doubles_match(wanted, seen, epsilon);
	va_start(ap, format);
	vreport(success, format, ap);
	va_end(ap);
	if (!success)
		diag("wanted: %.17g (within %g)\n  seen: %.17g (off by %g)", wanted, epsilon, seen,
		     seen - wanted);
	return success;
}

int is_rel(double wanted, double seen, double reltol, const char *format, ...)
{
	int success;
	va_list ap;

	if (!(reltol >= 0))
		bail("is_rel: negative or NaN tolerance %g", reltol);
	success = doubles_match(wanted, seen, reltol * fabs(wanted));
	va_start(ap, format);
	vreport(success, format, ap);
	va_end(ap);
	if (!success) {
		if (wanted != 0 && isfinite(wanted) && isfinite(seen))
			diag("wanted: %.17g (within %g %%)\n  seen: %.17g (off by %.3g %%)", wanted,
			     reltol * 100, seen, (seen - wanted) / fabs(wanted) * 100);
		else
			diag("wanted: %.17g (within %g %%)\n  seen: %.17g", wanted, reltol * 100,
			     seen);
	}
	return success;
}

void *bmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p)
		sysbail("cannot allocate %zu bytes", size);
	return p;
}

void *bcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		sysbail("cannot allocate %zu * %zu bytes", n, size);
	return p;
}

void *brealloc(void *p, size_t size)
{
	p = realloc(p, size ? size : 1);
	if (!p)
		sysbail("cannot reallocate to %zu bytes", size);
	return p;
}

char *bstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		sysbail("cannot copy a string of %zu bytes", strlen(s));
	return p;
}

char *basprintf(const char *format, ...)
{
	va_list ap;
	char *p;
	int n;

	va_start(ap, format);
	n = vasprintf(&p, format, ap);
	va_end(ap);
	if (n < 0)
		sysbail("cannot format a string");
	return p;
}

char *test_file_path(const char *file)
{
	static const char *const vars[] = { "top_builddir", "top_srcdir" };
	const char *base;
	char *path;
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		base = getenv(vars[i]);
		if (!base || !*base)
			continue;
		path = basprintf("%s/tests/%s", base, file);
		if (access(path, F_OK) == 0)
			return path;
		free(path);
	}
	return NULL;
}

void test_file_path_free(char *path)
{
	free(path);
}

char *test_tmpdir(void)
{
	const char *tmp = getenv("TMPDIR");
	char *path;

	if (!tmp || !*tmp)
		tmp = "/tmp";
	path = basprintf("%s/varperf-t.XXXXXX", tmp);
	if (!mkdtemp(path))
		sysbail("cannot create a directory in '%s'", tmp);
	return path;
}

void test_tmpdir_free(char *path)
{
	struct dirent *de;
	DIR *dir;
	char *file;

	if (!path)
		return;
	dir = opendir(path);
	if (dir) {
		while ((de = readdir(dir)) != NULL) {
			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
				continue;
			file = basprintf("%s/%s", path, de->d_name);
			if (unlink(file) != 0)
				sysdiag("cannot remove '%s'", file);
			free(file);
		}
		closedir(dir);
	}
	if (rmdir(path) != 0)
		sysdiag("cannot remove '%s'", path);
	free(path);
}
