/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * plt-names.c - the PLT stubs of an ELF file from libbfd's synthetic
 * symbols (bfd_get_synthetic_symtab(), what objdump -d prints), sorted by
 * address for lookups, and a cache of them per file.
 */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_LIBBFD
#include <bfd.h>
#endif

#include "perf-collector/symbols/plt-names.h"
#include "util/util.h"

struct plt_stub {
	uint64_t start, size;
	char *name;
};

struct vp_plt_names {
	struct plt_stub *stubs; /* by start, not overlapping */
	size_t n;
};

void vp_plt_names_free(struct vp_plt_names *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		free(p->stubs[i].name);
	free(p->stubs);
	free(p);
}

#ifdef HAVE_LIBBFD
static int stub_cmp(const void *a, const void *b)
{
	const struct plt_stub *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static void plt_bfd_init(void)
{
	bfd_init();
}

/*
 * Keep the synthetic symbols of @abfd that name stubs ("@plt"; other
 * targets' synthetic symbols are function descriptors and the like).  An
 * entry's size is not in the symbol: it runs to the next stub or to the
 * end of its section.
 */
static void plt_names_add(struct vp_plt_names *p, asymbol *synth, long nsynth)
{
	size_t len, keep = 0;

	p->stubs = xcalloc(nsynth ? (size_t)nsynth : 1, sizeof(*p->stubs));
	for (long i = 0; i < nsynth; i++) {
		const char *name = bfd_asymbol_name(&synth[i]);
		asection *sec = synth[i].section;
		struct plt_stub *s = &p->stubs[p->n];

		len = strlen(name);
		if (len <= 4 || strcmp(name + len - 4, "@plt") || !sec)
			continue;
		s->start = bfd_asymbol_value(&synth[i]);
		s->size = bfd_section_vma(sec) + bfd_section_size(sec) - s->start;
		s->name = xstrdup(name);
		p->n++;
	}
	qsort(p->stubs, p->n, sizeof(*p->stubs), stub_cmp);
	for (size_t i = 0; i < p->n; i++) {
		if (keep && p->stubs[keep - 1].start == p->stubs[i].start) {
			free(p->stubs[i].name);
			continue;
		}
		if (keep && p->stubs[keep - 1].start + p->stubs[keep - 1].size > p->stubs[i].start)
			p->stubs[keep - 1].size = p->stubs[i].start - p->stubs[keep - 1].start;
		p->stubs[keep++] = p->stubs[i];
	}
	p->n = keep;
}

int vp_plt_names_open(const char *path, struct vp_plt_names **ret)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	struct vp_plt_names *p = xcalloc(1, sizeof(*p));
	asymbol **dyn = NULL, *synth = NULL;
	long size, ndyn, nsynth;
	bfd *abfd;
	int err = 0;

	pthread_once(&once, plt_bfd_init);
	abfd = bfd_openr(path, NULL);
	if (!abfd) {
		err = bfd_get_error() == bfd_error_system_call && errno ? -errno : -ENOEXEC;
		goto out;
	}
	if (!bfd_check_format(abfd, bfd_object)) {
		err = -ENOEXEC;
		goto out_close;
	}
	/*
	 * The stubs are named after the dynamic symbols their relocations
	 * (.rela.plt, .rela.dyn for .plt.got) refer to: no dynamic symbols,
	 * no stubs.  x86's synthetic table needs no static symbols.
	 */
	size = bfd_get_dynamic_symtab_upper_bound(abfd);
	if (size <= 0)
		goto out_close;
	dyn = xmalloc((size_t)size);
	ndyn = bfd_canonicalize_dynamic_symtab(abfd, dyn);
	if (ndyn <= 0)
		goto out_close;
	nsynth = bfd_get_synthetic_symtab(abfd, 0, NULL, ndyn, dyn, &synth);
	if (nsynth > 0)
		plt_names_add(p, synth, nsynth);
out_close:
	free(synth);
	free(dyn);
	bfd_close(abfd);
out:
	if (err) {
		vp_plt_names_free(p);
		p = NULL;
	}
	*ret = p;
	return err;
}
#else
int vp_plt_names_open(const char *path, struct vp_plt_names **ret)
{
	*ret = NULL;
	return -ENOTSUP;
}
#endif

const char *vp_plt_names_find(const struct vp_plt_names *p, uint64_t vaddr, uint64_t *start,
			      uint64_t *size)
{
	size_t lo = 0, hi = p ? p->n : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->stubs[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || vaddr - p->stubs[lo - 1].start >= p->stubs[lo - 1].size)
		return NULL;
	*start = p->stubs[lo - 1].start;
	*size = p->stubs[lo - 1].size;
	return p->stubs[lo - 1].name;
}

/* ---- the cache: each file read once, kept for the life of the process ---- */

struct plt_file {
	char *path;
	struct vp_plt_names *names; /* NULL: unreadable, or no libbfd */
	struct plt_file *next;
};

static pthread_mutex_t plt_lock = PTHREAD_MUTEX_INITIALIZER;
static struct plt_file *plt_files;

const char *vp_plt_name(const char *path, uint64_t vaddr, uint64_t *start, uint64_t *size)
{
	struct plt_file *f;
	const char *name;
	int err;

	if (!path || path[0] != '/')
		return NULL;
	pthread_mutex_lock(&plt_lock);
	for (f = plt_files; f && strcmp(f->path, path); f = f->next)
		;
	if (!f) {
		f = xcalloc(1, sizeof(*f));
		f->path = xstrdup(path);
		err = vp_plt_names_open(path, &f->names);
		if (err && err != -ENOTSUP)
			pr_debug("plt: cannot read the PLT of '%s': %s", path, strerror(-err));
		f->next = plt_files;
		plt_files = f;
	}
	name = vp_plt_names_find(f->names, vaddr, start, size);
	pthread_mutex_unlock(&plt_lock);
	return name;
}
