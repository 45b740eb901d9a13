/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * varperf.c - the varperf command: global options, then dispatch to one
 * cmd_<name>() from a sorted table (as git.c and perf.c do).
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtin.h"
#include "util.h"

struct cmd_struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

/* Sorted by name; bsearch() relies on it. */
static const struct cmd_struct commands[] = {
	{ "compare", cmd_compare, "compare the Pattern Sets of two recordings" },
	{ "gdb", cmd_gdb, "run GDB with the varperf plugin loaded" },
	{ "record", cmd_record, "run a program and record its function entries and exits" },
	{ "report", cmd_report, "show the variance profile of a recorded data file" },
	{ "version", cmd_version, "print the version and the optional features built in" },
};

static const size_t ncommands = sizeof(commands) / sizeof(commands[0]);

static const char usage_line[] = "usage: varperf [-v | --verbose] [--help] <command> [<args>]";

static void list_commands(FILE *out)
{
	fprintf(out, "%s\n\nCommands:\n", usage_line);
	for (size_t i = 0; i < ncommands; i++)
		fprintf(out, "   %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(out, "\nSee 'varperf help <command>' or 'varperf <command> --help'.\n");
}

static int cmp_cmd(const void *key, const void *elem)
{
	return strcmp(key, ((const struct cmd_struct *)elem)->name);
}

static const struct cmd_struct *find_command(const char *name)
{
	return bsearch(name, commands, ncommands, sizeof(commands[0]), cmp_cmd);
}

/* "varperf help CMD" shows the manual page, like git help. */
static int run_help(int argc, char **argv)
{
	char *page;

	if (argc < 2) {
		list_commands(stdout);
		return 0;
	}
	if (!find_command(argv[1])) {
		error("'%s' is not a varperf command", argv[1]);
		list_commands(stderr);
		return 129;
	}
	page = xasprintf("varperf-%s", argv[1]);
	fflush(NULL);
	execlp("man", "man", page, (char *)NULL);
	error("cannot run 'man': %s", strerror(errno));
	free(page);
	return 1;
}

int main(int argc, char **argv)
{
	const struct cmd_struct *cmd;
	int i;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")) {
			verbose++;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			list_commands(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--version")) {
			printf("varperf %s\n", PACKAGE_VERSION);
			return 0;
		} else if (argv[i][1] == 'v' && strspn(argv[i] + 1, "v") == strlen(argv[i] + 1)) {
			verbose += (int)strlen(argv[i] + 1); /* -vv */
		} else {
			error("unknown option '%s'", argv[i]);
			fprintf(stderr, "%s\n", usage_line);
			return 129;
		}
	}
	if (i == argc) {
		list_commands(stdout);
		return 0;
	}
	if (!strcmp(argv[i], "help"))
		return run_help(argc - i, argv + i);
	cmd = find_command(argv[i]);
	if (!cmd) {
		error("'%s' is not a varperf command", argv[i]);
		list_commands(stderr);
		return 129;
	}
	return cmd->fn(argc - i, argv + i);
}
