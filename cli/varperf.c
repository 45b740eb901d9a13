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
#include <sys/stat.h>
#include <unistd.h>

#include "builtin.h"
#include "usage.h"
#include "util/util.h"

struct cmd_struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
	const char *page; /* its manual page, when not varperf-<name> */
};

/* Sorted by name; bsearch() relies on it. */
static const struct cmd_struct commands[] = {
	{ "bound", cmd_bound, "bound a task's time: the regression-based maximal execution time",
	  NULL },
	{ "compare", cmd_compare, "compare the Pattern Sets of two recordings", NULL },
	{ "explain", cmd_explain, "what a task's time depends on: its model on call counts", NULL },
	{ "gdb", cmd_gdb, "run GDB with the varperf plugin loaded", NULL },
	{ "predict", cmd_predict, "predict the run time for an input size from recordings at others",
	  NULL },
	{ "record", cmd_record, "run a program, or attach to one, and record where its time goes",
	  NULL },
	{ "report", cmd_report, "show the variance profile of a recorded data file", NULL },
	{ "version", cmd_version, "print the version and the optional features built in",
	  "varperf" },
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

/*
 * The directory of the running binary (/proc/self/exe with its links
 * resolved), or NULL.
 */
static char *exe_dir(void)
{
	char *p = realpath("/proc/self/exe", NULL), *slash;

	if (!p)
		return NULL;
	slash = strrchr(p, '/');
	if (slash)
		*(slash == p ? slash + 1 : slash) = '\0';
	return p;
}

static int is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * The manual directory of the installation the binary in @dir belongs to,
 * found as git's RUNTIME_PREFIX finds its own: mandir and bindir as
 * configured share a prefix; where @dir ends in bindir's part after it,
 * the rest of @dir is the prefix the tree was installed or moved to
 * (make install DESTDIR=..., a custom --prefix, a copied tree).  NULL when
 * @dir is not such a bindir.
 */
static char *runtime_mandir(const char *dir)
{
	const char *bin = VARPERF_BINDIR, *man = VARPERF_MANDIR;
	size_t common = 0, dlen = strlen(dir), blen;

	/* the longest common prefix of whole path components */
	for (size_t i = 0; bin[i] && bin[i] == man[i]; i++)
		if (bin[i] == '/')
			common = i;
	if (!bin[common] || !man[common])
		return NULL;
	bin += common;	/* "/bin" */
	man += common;	/* "/share/man" */
	blen = strlen(bin);
	if (dlen < blen || strcmp(dir + dlen - blen, bin))
		return NULL;
	return xasprintf("%.*s%s", (int)(dlen - blen), dir, man);
}

/*
 * "varperf help CMD" shows the manual page of this varperf, like git help:
 * from the source tree when it runs from its (in-tree) build tree, else
 * with the manual directory of its installation first on MANPATH (whose
 * trailing ':' keeps man's default path after it), else as man finds it.
 */
static int run_help(int argc, char **argv)
{
	const struct cmd_struct *cmd;
	char *dir, *page, *file = NULL, *mandir = NULL;

	if (argc < 2) {
		list_commands(stdout);
		return 0;
	}
	cmd = find_command(argv[1]);
	if (!cmd) {
		error("'%s' is not a varperf command", argv[1]);
		list_commands(stderr);
		return EXIT_USAGE;
	}
	page = cmd->page ? xstrdup(cmd->page) : xasprintf("varperf-%s", cmd->name);
	dir = exe_dir();
	if (dir) {
		/* the build tree: cli/varperf next to man/ */
		file = xasprintf("%s/../man/%s.1", dir, page);
		if (!is_file(file)) {
			free(file);
			file = NULL;
			mandir = runtime_mandir(dir);
		}
	}
	if (mandir && is_dir(mandir)) {
		const char *old = getenv("MANPATH");
		char *path = xasprintf("%s:%s", mandir, old ? old : "");

		setenv("MANPATH", path, 1);
		free(path);
	}
	pr_debug("help: %s", file ? file : page);
	fflush(NULL);
	if (file)
		execlp("man", "man", "-l", file, (char *)NULL);
	else
		execlp("man", "man", page, (char *)NULL);
	error("cannot run 'man': %s", strerror(errno));
	free(mandir);
	free(file);
	free(dir);
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
			return EXIT_USAGE;
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
		return EXIT_USAGE;
	}
	return cmd->fn(argc - i, argv + i);
}
