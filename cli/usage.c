/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * usage.c - what every command does with a wrong command line (see
 * usage.h): one exit status, one grammar for getopt's findings, and the
 * synopsis after the error, as git's parse-options does.
 */
#include <config.h>

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "usage.h"
#include "util/util.h"

void usage_print(FILE *f, const char *const *usage, int full)
{
	for (size_t i = 0; usage[i]; i++) {
		if (!full && i > 0)
			break;
		fprintf(f, "%s\n", usage[i]);
	}
}

void usage_getopt_start(void)
{
	optind = 0;
	opterr = 0;
}

/* The long options whose names start with the @len bytes of @name. */
static size_t usage_matches(const struct option *opts, const char *name, size_t len,
			    const struct option **ret)
{
	size_t n = 0;

	for (const struct option *o = opts; o->name; o++) {
		if (strncmp(o->name, name, len))
			continue;
		if (strlen(o->name) == len) {
			*ret = o;
			return 1;
		}
		if (!n++)
			*ret = o;
	}
	return n;
}

/* "--cov-threshold, --contexts or --confidence" */
static void usage_ambiguous(const struct option *opts, const char *name, size_t len)
{
	char list[512];
	size_t n = 0, k = 0, total = 0;

	for (const struct option *o = opts; o->name; o++)
		total += !strncmp(o->name, name, len);
	list[0] = '\0';
	for (const struct option *o = opts; o->name && n < sizeof(list); o++) {
		if (strncmp(o->name, name, len))
			continue;
		k++;
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s--%s",
				      k == 1 ? "" : k == total ? " or " : ", ", o->name);
	}
	error("ambiguous option '--%.*s' (could be %s)", (int)len, name, list);
}

int usage_getopt_error(int c, char **argv, const struct option *opts,
		       const char *const *usage)
{
	/* the element getopt stopped at; a short option inside a cluster
	 * ("-xq") leaves optind on it, the others step past it */
	const char *arg = optind > 0 ? argv[optind - 1] : "";
	const struct option *o = NULL;
	size_t len, n = 0;
	int is_long;

	is_long = !strncmp(arg, "--", 2) && arg[2];
	if (is_long) {
		len = strcspn(arg + 2, "=");
		n = usage_matches(opts, arg + 2, len, &o);
		/* a short option that failed in a later cluster, after "--x" */
		if (optopt > 0 && optopt < 256 && (n != 1 || o->val != optopt))
			is_long = 0;
	}
	if (!is_long && c == ':')
		error("switch '%c' requires a value", optopt);
	else if (!is_long)
		error("unknown switch '%c'", optopt);
	else if (n > 1)
		usage_ambiguous(opts, arg + 2, len);
	else if (!n)
		error("unknown option '--%.*s'", (int)len, arg + 2);
	else if (c == ':')
		error("option '--%s' requires a value", o->name);
	else
		error("option '--%s' takes no value", o->name);
	usage_print(stderr, usage, 0);
	return EXIT_USAGE;
}

int usage_error(const char *const *usage, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	error("%s", msg);
	usage_print(stderr, usage, 0);
	return EXIT_USAGE;
}
