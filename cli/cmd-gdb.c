/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * cmd-gdb.c - "varperf gdb [PROGRAM [ARGS]]": run GDB with the varperf
 * plugin loaded (and a recording, when there is one), so that `info
 * variance` and `varperf break` are at hand.
 */
#include <config.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "builtin.h"
#include "perf-collector/probes/probes.h"
#include "usage.h"
#include "util/util.h"

enum { EXIT_NO_GDB = 127 };
/* Longest wait for an earlier recording's probes to go (seconds). */
enum { UNPROBE_WAIT_S = 60 };

/* Same order as OPTIONS in man/varperf-gdb.1. */
static const struct option cmd_gdb_options[] = {
	{ "input", required_argument, NULL, 'i' },
	{ "no-load", no_argument, NULL, 'n' },
	{ "gdb", required_argument, NULL, 'g' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const char *const cmd_gdb_usage[] = {
	"usage: varperf gdb [<options>] [--] [<program> [<args>...]]",
	"",
	"    -i, --input <file>    load this recording when GDB starts (default:",
	"                          varperf.data, when it exists)",
	"    -n, --no-load         do not load a recording",
	"        --gdb <path>      the GDB to run (default: $GDB, or gdb)",
	"    -h, --help            show this help",
	NULL,
};

/* @dir/varperf-gdb.py if it exists, else NULL; the caller frees. */
static char *cmd_gdb_loader_in(const char *dir, size_t len)
{
	char *p = xasprintf("%.*s/varperf-gdb.py", (int)len, dir);

	if (access(p, R_OK) == 0)
		return p;
	free(p);
	return NULL;
}

/* The path of this varperf's executable in @exe; 0, or -1 when unknown. */
static int cmd_gdb_self_exe(char exe[PATH_MAX])
{
	ssize_t n = readlink("/proc/self/exe", exe, PATH_MAX - 1);

	if (n <= 0)
		return -1;
	exe[n] = '\0';
	return 0;
}

/*
 * The plugin's loader: from the directories of $VARPERF_GDB_PLUGIN (a
 * build tree, the tests), next to a varperf run from its build tree, or
 * where `make install` put it.
 */
static char *cmd_gdb_find_loader(void)
{
	const char *env = getenv("VARPERF_GDB_PLUGIN");
	char exe[PATH_MAX], *p, *slash;

	for (const char *d = env; d && *d; d += strcspn(d, ":") + (d[strcspn(d, ":")] != 0)) {
		size_t len = strcspn(d, ":");

		if (len && (p = cmd_gdb_loader_in(d, len)))
			return p;
	}
	if (cmd_gdb_self_exe(exe) == 0) {
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			p = xasprintf("%s/../gdb-plugin", exe);
			slash = cmd_gdb_loader_in(p, strlen(p));
			free(p);
			if (slash)
				return slash;
		}
	}
#ifdef VARPERF_GDB_PLUGIN_DIR
	return cmd_gdb_loader_in(VARPERF_GDB_PLUGIN_DIR, strlen(VARPERF_GDB_PLUGIN_DIR));
#else
	return NULL;
#endif
}

/*
 * `varperf record` leaves removing its uprobes to a background process
 * ("varperf-unprobe"): until it is done, the kernel keeps the probes in
 * every process that maps the recorded files, and a probe at a function's
 * entry takes the trap of a GDB breakpoint there, which then never stops.
 * Wait for the one removing them from @prog (any, without a program; a
 * minute at most) rather than start a session that misbehaves.
 */
static void cmd_gdb_wait_unprobe(const char *prog)
{
	if (vp_probes_wait_removed(prog, UNPROBE_WAIT_S * 1000,
				   "waiting for an earlier 'varperf record' to remove its probes"))
		warning("probes of an earlier recording are still in place: breakpoints in probed "
			"functions may not stop until they are removed");
}

/* "varperf load FILE" with FILE quoted for gdb.string_to_argv(). */
static char *cmd_gdb_load_command(const char *file)
{
	size_t len = strlen(file);
	char *cmd = xmalloc(sizeof("varperf load \"\"") + 2 * len), *q;

	q = cmd + sprintf(cmd, "varperf load \"");
	for (const char *s = file; *s; s++) {
		if (*s == '"' || *s == '\\')
			*q++ = '\\';
		*q++ = *s;
	}
	strcpy(q, "\"");
	return cmd;
}

int cmd_gdb(int argc, char **argv)
{
	const char *input = NULL, *gdb = getenv("GDB");
	char *loader, **gargv, exe[PATH_MAX];
	int c, no_load = 0, n = 0;

	usage_getopt_start();
	while ((c = getopt_long(argc, argv, "+:i:nh", cmd_gdb_options, NULL)) != -1) {
		switch (c) {
		case 'i':
			input = optarg;
			break;
		case 'n':
			no_load = 1;
			break;
		case 'g':
			gdb = optarg;
			break;
		case 'h':
			usage_print(stdout, cmd_gdb_usage, 1);
			return 0;
		default:
			return usage_getopt_error(c, argv, cmd_gdb_options, cmd_gdb_usage);
		}
	}
	if (input && no_load) {
		error("options '--input' and '--no-load' cannot be used together");
		return EXIT_USAGE;
	}
	if (!gdb || !*gdb)
		gdb = "gdb";
	if (input && access(input, R_OK) < 0) {
		error("cannot open '%s': %s", input, strerror(errno));
		return 1;
	}
	if (!input && !no_load && access("varperf.data", R_OK) == 0)
		input = "varperf.data";

	loader = cmd_gdb_find_loader();
	if (!loader) {
		error("cannot find the GDB plugin (varperf-gdb.py): this varperf was built without "
		      "it, or set VARPERF_GDB_PLUGIN to its directory");
		return 1;
	}
	/* gdb -q -x LOADER [-ex "varperf load FILE"] [--args PROGRAM ARGS...] */
	gargv = xcalloc((size_t)(argc - optind) + 8, sizeof(*gargv));
	gargv[n++] = (char *)gdb;
	gargv[n++] = (char *)"-q";
	gargv[n++] = (char *)"-x";
	gargv[n++] = loader;
	if (input) {
		gargv[n++] = (char *)"-ex";
		gargv[n++] = cmd_gdb_load_command(input);
	}
	if (optind < argc) {
		gargv[n++] = (char *)"--args";
		for (int i = optind; i < argc; i++)
			gargv[n++] = argv[i];
	}
	gargv[n] = NULL;
	/* the plugin's `varperf record` runs this varperf, not one from PATH */
	if (cmd_gdb_self_exe(exe) == 0 && setenv("VARPERF", exe, 1) < 0)
		warning("cannot set VARPERF: %s", strerror(errno));
	cmd_gdb_wait_unprobe(optind < argc ? argv[optind] : NULL);
	fflush(NULL);
	execvp(gdb, gargv);
	error("cannot run '%s': %s", gdb, strerror(errno));
	return EXIT_NO_GDB;
}
