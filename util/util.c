/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * util.c - messages, die-on-OOM allocation and number parsing for the
 * varperf command line (see util.h; core/ never uses these).
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <string.h>
#include <unistd.h>

#include "util/escape.h"
#include "util/util.h"

int verbose;

/* A status line is on the terminal (status_line()): a message erases it. */
static volatile int status_shown;
/* "\r" and clear to the end of the line (ECMA-48 EL) */
static const char ERASE[] = "\r\033[K";

static void vreport(const char *prefix, const char *fmt, va_list ap)
{
	char buf[4096];
	int n, head, erase = status_shown ? (int)sizeof(ERASE) - 1 : 0;

	/* One write() per message, so that the target's output (which shares
	 * the terminal) cannot land in the middle of a line - nor the status
	 * line's erasure be parted from it. */
	memcpy(buf, ERASE, (size_t)erase);
	head = erase + snprintf(buf + erase, sizeof(buf) - (size_t)erase, "varperf: %s", prefix);
	vsnprintf(buf + head, sizeof(buf) - (size_t)head - 1, fmt, ap);
	/* names and paths in it come from outside: one line, no control */
	n = (int)strlen(vp_term_clean(buf + head)) + head;
	buf[n++] = '\n';
	status_shown = 0;
	fflush(stderr);
	if (write(STDERR_FILENO, buf, (size_t)n) < 0)
		return;
}

void status_line(const char *text)
{
	char buf[512];
	int n;

	n = snprintf(buf, sizeof(buf), "%s%s", ERASE, text);
	if (n >= (int)sizeof(buf))
		n = (int)sizeof(buf) - 1;
	fflush(stderr);
	if (write(STDERR_FILENO, buf, (size_t)n) == n)
		status_shown = 1;
}

void status_line_clear(void)
{
	if (!status_shown)
		return;
	status_shown = 0;
	if (write(STDERR_FILENO, ERASE, sizeof(ERASE) - 1) < 0)
		return;
}

static __thread int errors_muted;
/* hold_errors(): the messages held back, one after another (each ends
 * with a newline), and how many did not fit */
static __thread char *held;
static __thread size_t nheld;
static __thread int holding;

void mute_errors(int on)
{
	errors_muted = on;
}

void hold_errors(void)
{
	holding = 1;
	nheld = 0;
}

void release_errors(int show)
{
	size_t i = 0, len;

	holding = 0;
	while (show && held && i < nheld) {
		len = strcspn(held + i, "\n");
		error("%.*s", (int)len, held + i);
		i += len + 1;
	}
	free(held);
	held = NULL;
	nheld = 0;
}

int error(const char *fmt, ...)
{
	va_list ap;
	char *msg;

	if (errors_muted)
		return -1;
	if (holding) {
		va_start(ap, fmt);
		if (vasprintf(&msg, fmt, ap) < 0)
			msg = NULL;
		va_end(ap);
		if (msg) {
			/* one line each, as vreport() makes it */
			for (char *c = msg; *c; c++)
				if (*c == '\n')
					*c = ' ';
			held = xrealloc(held, nheld + strlen(msg) + 2);
			memcpy(held + nheld, msg, strlen(msg) + 1);
			nheld += strlen(msg);
			held[nheld++] = '\n';
			free(msg);
		}
		return -1;
	}
	va_start(ap, fmt);
	vreport("error: ", fmt, ap);
	va_end(ap);
	return -1;
}

void warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("warning: ", fmt, ap);
	va_end(ap);
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("fatal: ", fmt, ap);
	va_end(ap);
	exit(128);
}

void info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
}

void pr_debug_level(int level, const char *fmt, ...)
{
	va_list ap;

	if (verbose < level)
		return;
	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		die("out of memory (allocating %zu bytes)", n);
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (!p)
		die("out of memory (allocating %zu x %zu bytes)", nmemb, size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory (allocating %zu bytes)", n);
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		die("out of memory (allocating %zu bytes)", strlen(s) + 1);
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		die("out of memory (formatting a string)");
	return s;
}

/* Binary multiplier of a size suffix (K, M, G, T, optionally followed by "B"
 * or "iB"), 1 for none, 0 for anything else. */
static unsigned long long suffix_multiplier(const char *s)
{
	static const char units[] = "KMGT";
	const char *u;
	unsigned long long m = 1;

	if (!*s)
		return 1;
	u = strchr(units, *s >= 'a' && *s <= 'z' ? *s - 'a' + 'A' : *s);
	if (!u || !*u)
		return 0;
	for (const char *p = units; p <= u; p++)
		m <<= 10;
	s++;
	if (!strcmp(s, "") || !strcmp(s, "B") || !strcmp(s, "iB"))
		return m;
	return 0;
}

/*
 * parse_uint64 - "8M", "512K", "4096": decimal digits with an optional
 * binary size suffix.  Rejects signs, overflow and trailing garbage.
 */
int parse_uint64(const char *s, unsigned long long *ret)
{
	unsigned long long v, m;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	m = suffix_multiplier(end);
	if (!m || (v && m > ~0ULL / v))
		return -1;
	*ret = v * m;
	return 0;
}

/*
 * parse_double - a finite non-negative number; a trailing "%" divides by
 * 100 ("0.02%" is 0.0002), so thresholds can be given either way.
 */
int parse_double(const char *s, double *ret)
{
	double v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return -1;
	if (*end == '%') {
		v /= 100;
		end++;
	}
	if (*end)
		return -1;
	*ret = v;
	return 0;
}

const char *fmt_duration(double ns, char *buf, size_t len)
{
	static const struct {
		double scale;
		const char *unit;
	} units[] = { { 1, "ns" }, { 1e3, "us" }, { 1e6, "ms" }, { 1e9, "s" } };
	size_t i = 0;
	double v;

	while (i + 1 < sizeof(units) / sizeof(units[0]) && fabs(ns) >= units[i + 1].scale)
		i++;
	v = ns / units[i].scale;
	/* Three significant digits, but never exponent notation; decided on
	 * the rounded value, so that 99.96 us is "100 us", not "100.0 us" */
	if (i > 0 && fabs(v) >= 999.5 && i + 1 < sizeof(units) / sizeof(units[0])) {
		i++;
		v /= 1000;
	}
	if (fabs(v) >= 99.95 || i == 0)
		snprintf(buf, len, "%.0f %s", v, units[i].unit);
	else if (fabs(v) >= 9.995)
		snprintf(buf, len, "%.1f %s", v, units[i].unit);
	else
		snprintf(buf, len, "%.2f %s", v, units[i].unit);
	return buf;
}

uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int exit_code_of(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}
