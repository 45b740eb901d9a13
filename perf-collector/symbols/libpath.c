/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libpath.c - find the shared libraries an ELF file needs as the dynamic
 * linker does: DT_NEEDED, DT_RUNPATH/DT_RPATH, LD_LIBRARY_PATH,
 * ld.so.conf and the standard directories.
 */
#include <config.h>

#include <errno.h>
#include <gelf.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf-collector/symbols/libpath.h"
#include "perf-collector/symbols/symbols-internal.h"
#include "util/util.h"

/* ---- shared libraries ---- */

struct strlist {
	char **v;
	size_t n;
};

static void strlist_add(struct strlist *l, char *s)
{
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = s;
}

static void strlist_clear(struct strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* Add the directories of a colon-separated list, expanding $ORIGIN. */
static void add_path_list(struct strlist *dirs, const char *list, const char *origin)
{
	char *copy, *tok, *save = NULL;

	if (!list)
		return;
	copy = xstrdup(list);
	for (char *p = copy; (tok = strtok_r(p, ":", &save)); p = NULL) {
		if (!strncmp(tok, "$ORIGIN", 7))
			strlist_add(dirs, xasprintf("%s%s", origin, tok + 7));
		else if (!strncmp(tok, "${ORIGIN}", 9))
			strlist_add(dirs, xasprintf("%s%s", origin, tok + 9));
		else
			strlist_add(dirs, xstrdup(tok));
	}
	free(copy);
}

static void add_ld_so_conf(struct strlist *dirs, const char *path, int depth)
{
	char line[PATH_MAX];
	FILE *f;

	if (depth > 4 || !(f = fopen(path, "re")))
		return;
	while (fgets(line, sizeof(line), f)) {
		char *s = line + strspn(line, " \t");

		s[strcspn(s, "#\r\n")] = '\0';
		while (*s && strchr(" \t", s[strlen(s) - 1]))
			s[strlen(s) - 1] = '\0';
		if (!*s)
			continue;
		if (!strncmp(s, "include", 7) && (s[7] == ' ' || s[7] == '\t')) {
			glob_t g;

			s += 8 + strspn(s + 8, " \t");
			if (!glob(s, 0, NULL, &g)) {
				for (size_t i = 0; i < g.gl_pathc; i++)
					add_ld_so_conf(dirs, g.gl_pathv[i], depth + 1);
				globfree(&g);
			}
		} else if (*s == '/') {
			strlist_add(dirs, xstrdup(s));
		}
	}
	fclose(f);
}

/* The dynamic section's DT_NEEDED names and search paths. */
static void read_dynamic(struct vp_symfile *sf, struct strlist *needed, char **rpath,
			 char **runpath)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(sf->ef->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			const char *s;

			if (!gelf_getdyn(data, (int)i, &dyn))
				break;
			if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RPATH &&
			    dyn.d_tag != DT_RUNPATH)
				continue;
			s = elf_strptr(sf->ef->elf, sh.sh_link, dyn.d_un.d_val);
			if (!s)
				continue;
			if (dyn.d_tag == DT_NEEDED)
				strlist_add(needed, xstrdup(s));
			else if (dyn.d_tag == DT_RPATH && !*rpath)
				*rpath = xstrdup(s);
			else if (dyn.d_tag == DT_RUNPATH && !*runpath)
				*runpath = xstrdup(s);
		}
	}
}

/* "libm.so.6" matches "libm.so.6", "libm" and "m". */
static int soname_matches(const char *soname, const char *name)
{
	size_t len = strlen(name);

	if (!strcmp(soname, name))
		return 1;
	if (!strncmp(soname, name, len) && soname[len] == '.')
		return 1;
	return !strncmp(soname, "lib", 3) && !strncmp(soname + 3, name, len) &&
	       soname[3 + len] == '.';
}

static char *search_dirs(const struct strlist *dirs, const char *soname)
{
	for (size_t i = 0; i < dirs->n; i++) {
		char *p = xasprintf("%s/%s", dirs->v[i], soname);
		char *real = access(p, R_OK) == 0 ? realpath(p, NULL) : NULL;

		free(p);
		if (real)
			return real;
	}
	return NULL;
}

int vp_symfile_find_needed(struct vp_symfile *sf, const char *name, char **ret)
{
	static const char *const std_dirs[] = {
		"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64",
		"/lib", "/usr/lib", "/usr/local/lib",
	};
	struct strlist needed = { 0 }, dirs = { 0 };
	char *rpath = NULL, *runpath = NULL, *origin, *found = NULL;
	const char *soname = NULL;
	int err = -ENOENT;

	if (strchr(name, '/')) {
		found = realpath(name, NULL);
		if (!found)
			return -errno;
		*ret = found;
		return 0;
	}
	read_dynamic(sf, &needed, &rpath, &runpath);
	for (size_t i = 0; i < needed.n && !soname; i++)
		if (soname_matches(needed.v[i], name))
			soname = needed.v[i];
	if (!soname)
		goto out;
	/* The dynamic linker's order: DT_RPATH (unless DT_RUNPATH exists),
	 * LD_LIBRARY_PATH, DT_RUNPATH, ld.so.cache's directories, defaults. */
	origin = xstrdup(sf->ef->path);
	*strrchr(origin, '/') = '\0';
	if (!runpath)
		add_path_list(&dirs, rpath, origin);
	add_path_list(&dirs, getenv("LD_LIBRARY_PATH"), origin);
	add_path_list(&dirs, runpath, origin);
	add_ld_so_conf(&dirs, "/etc/ld.so.conf", 0);
	for (size_t i = 0; i < sizeof(std_dirs) / sizeof(std_dirs[0]); i++)
		strlist_add(&dirs, xstrdup(std_dirs[i]));
	free(origin);
	found = search_dirs(&dirs, soname);
	err = found ? 0 : -ENOEXEC;
	*ret = found;
out:
	strlist_clear(&needed);
	strlist_clear(&dirs);
	free(rpath);
	free(runpath);
	return err;
}
