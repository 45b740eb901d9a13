/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * cmd-version.c - "varperf version [--build-options]": the version and, for
 * tests deciding what to skip, which optional libraries were built in.
 */
#include <config.h>

#include <getopt.h>
#include <stdio.h>

#include "builtin.h"
#include "util.h"

#ifdef HAVE_LIBUNWIND
#define HAS_LIBUNWIND "on"
#else
#define HAS_LIBUNWIND "off"
#endif
#ifdef HAVE_LIBBFD
#define HAS_LIBBFD "on"
#else
#define HAS_LIBBFD "off"
#endif
#ifdef HAVE_CAPSTONE
#define HAS_CAPSTONE "on"
#else
#define HAS_CAPSTONE "off"
#endif
#ifdef HAVE_LIBIBERTY
#define HAS_LIBIBERTY "on"
#else
#define HAS_LIBIBERTY "off"
#endif

static const char *const cmd_version_usage[] = {
	"usage: varperf version [--build-options]",
	"",
	"    --build-options   also print which optional libraries are built in",
	"-h, --help            show this help",
	NULL,
};

static const struct option cmd_version_options[] = {
	{ "build-options", no_argument, NULL, 'b' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void cmd_version_print_usage(FILE *out)
{
	for (const char *const *l = cmd_version_usage; *l; l++)
		fprintf(out, "%s\n", *l);
}

int cmd_version(int argc, char **argv)
{
	int build_options = 0;
	int c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+h", cmd_version_options, NULL)) != -1) {
		switch (c) {
		case 'b':
			build_options = 1;
			break;
		case 'h':
			cmd_version_print_usage(stdout);
			return 0;
		default:
			if (optopt)
				error("unknown switch '%c'", optopt);
			else
				error("unknown option '%s'", argv[optind - 1]);
			cmd_version_print_usage(stderr);
			return 129;
		}
	}
	if (optind < argc) {
		error("unexpected argument '%s'", argv[optind]);
		cmd_version_print_usage(stderr);
		return 129;
	}
	printf("varperf %s\n", PACKAGE_VERSION);
	if (build_options) {
		printf("libunwind: %s\n", HAS_LIBUNWIND);
		printf("libbfd: %s\n", HAS_LIBBFD);
		printf("capstone: %s\n", HAS_CAPSTONE);
		printf("libiberty: %s\n", HAS_LIBIBERTY);
	}
	return 0;
}
