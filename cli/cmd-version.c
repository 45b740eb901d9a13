/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * cmd-version.c - "varperf version [--build-options]": the version and, for
 * tests deciding what to skip, which optional libraries were built in.
 */
#include <config.h>

#include <getopt.h>
#include <stdio.h>

#include "builtin.h"
#include "usage.h"
#include "util/util.h"

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
#ifdef HAVE_GSL
#define HAS_GSL "on"
#else
#define HAS_GSL "off"
#endif
#ifdef HAVE_BPF
#define HAS_BPF "on"
#else
#define HAS_BPF "off"
#endif
#ifdef HAVE_LIBIBERTY
#define HAS_LIBIBERTY "on"
#else
#define HAS_LIBIBERTY "off"
#endif
#ifdef HAVE_PROTOBUF_C
#define HAS_PROTOBUF_C "on"
#else
#define HAS_PROTOBUF_C "off"
#endif
#ifdef VARPERF_GDB_PLUGIN_DIR
#define HAS_GDB_PLUGIN "on"
#else
#define HAS_GDB_PLUGIN "off"
#endif

static const char *const cmd_version_usage[] = {
	"usage: varperf version [--build-options]",
	"",
	"    --build-options   also print which optional features are built in",
	"-h, --help            show this help",
	NULL,
};

static const struct option cmd_version_options[] = {
	{ "build-options", no_argument, NULL, 'b' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int cmd_version(int argc, char **argv)
{
	int build_options = 0;
	int c;

	usage_getopt_start();
	while ((c = getopt_long(argc, argv, "+:h", cmd_version_options, NULL)) != -1) {
		switch (c) {
		case 'b':
			build_options = 1;
			break;
		case 'h':
			usage_print(stdout, cmd_version_usage, 1);
			return 0;
		default:
			return usage_getopt_error(c, argv, cmd_version_options, cmd_version_usage);
		}
	}
	if (optind < argc)
		return usage_error(cmd_version_usage, "unexpected argument '%s'", argv[optind]);
	printf("varperf %s\n", PACKAGE_VERSION);
	if (build_options) {
		printf("libunwind: %s\n", HAS_LIBUNWIND);
		printf("libbfd: %s\n", HAS_LIBBFD);
		printf("capstone: %s\n", HAS_CAPSTONE);
		printf("libiberty: %s\n", HAS_LIBIBERTY);
		printf("gsl: %s\n", HAS_GSL);
		printf("bpf: %s\n", HAS_BPF);
		printf("protobuf-c: %s\n", HAS_PROTOBUF_C);
		printf("gdb-plugin: %s\n", HAS_GDB_PLUGIN);
	}
	return 0;
}
