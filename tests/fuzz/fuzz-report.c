/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * fuzz-report.c - a data file through everything `varperf report` does
 * with it in core: the reader, the calling-context tree, the sampled tree,
 * the analysis of Kumar et al. 2008, the sources of variance and the
 * graph.  Any input must end in an error or a result, within the memory
 * budget.
 *
 * Built two ways from this one file: with clang's -fsanitize=fuzzer as the
 * libFuzzer target of `make fuzz`, and with -DFUZZ_REPLAY as
 * tests/fuzz/fuzz-replay, which runs the corpus once under make check
 * (TAP: one line per file), so that an input that once crashed stays
 * fixed.
 */
#include <config.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "core/budget.h"
#include "core/cct.h"
#include "core/datafile.h"
#include "core/patterns.h"
#include "core/sampled.h"
#include "core/sources.h"
#include "core/vcg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Small: the fuzzer runs many inputs at once in one process. */
static const size_t FUZZ_BUDGET = (size_t)64 << 20;

/* The depth of the deepest sampled node. */
static uint32_t sampled_depth(const struct vp_sampled *t)
{
	uint32_t most = 0;

	for (size_t id = 1; id < t->nnodes; id++)
		if (t->nodes[id].depth > most)
			most = t->nodes[id].depth;
	return most;
}

static void analyse(struct vp_reader *r, struct vp_cct *tree)
{
	struct vp_analysis_params ap;
	struct vp_sources_params sp;
	struct vp_vcg_params vp;
	struct vp_analysis an;
	struct vp_sources src;
	struct vp_vcg vcg;
	uint8_t *labels;

	vp_analysis_params_default(&ap);
	vp_sources_params_default(&sp);
	vp_vcg_params_default(&vp);
	if (vp_analysis_run(&an, tree, vp_reader_header(r)->nfuncs, &ap) < 0)
		return;
	if (vp_sources_run(&src, tree, &an, r, &sp) < 0)
		goto out_an;
	labels = malloc(tree->nnodes);
	if (labels && !vp_vcg_label(tree, &an, &src, labels) &&
	    !vp_vcg_build(&vcg, tree, &an, &src, &vp))
		vp_vcg_release(&vcg);
	free(labels);
	vp_sources_release(&src);
out_an:
	vp_analysis_release(&an);
}

static void run(const char *path)
{
	struct vp_budget budget = { FUZZ_BUDGET, 0 };
	struct vp_sampled stree;
	struct vp_reader *r;
	struct vp_cct tree;
	char msg[512];
	int err;

	if (vp_reader_open(path, &r, msg, sizeof(msg)) < 0)
		return;
	if (vp_cct_init(&tree) < 0)
		goto out_reader;
	tree.budget = &budget;
	if (vp_sampled_init(&stree) < 0)
		goto out_tree;
	stree.budget = &budget;
	vp_reader_set_sample_handler(r, vp_sampled_handler, &stree);
	err = vp_build_file(r, &tree, NULL);
	vp_reader_set_sample_handler(r, NULL, NULL);
	vp_sampled_finish(&stree);
	if (sampled_depth(&stree) > VP_SAMPLED_MAX_DEPTH)
		abort(); /* the cut failed */
	if (!err)
		analyse(r, &tree);
	vp_sampled_release(&stree);
out_tree:
	vp_cct_release(&tree);
out_reader:
	vp_reader_free(r);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/*
 * Set the checksum of every whole chunk to its payload's: a mutation
 * would nearly always fail the check, and the parsers behind it would go
 * untested.  Replaying does the same, so what crashed crashes again.
 */
static void fix_checksums(uint8_t *p, size_t size)
{
	size_t pos = VP_FILE_HEADER_SIZE;

	while (size - pos >= VP_CHUNK_HEADER_SIZE && !memcmp(p + pos, VP_CHUNK_MAGIC, 4)) {
		uint32_t len = le32(p + pos + 8), crc;

		if (len > size - pos - VP_CHUNK_HEADER_SIZE)
			break;
		crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), p + pos + VP_CHUNK_HEADER_SIZE, len);
		for (int i = 0; i < 4; i++)
			p[pos + 12 + i] = (uint8_t)(crc >> (8 * i));
		pos += VP_CHUNK_HEADER_SIZE + len;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *input, size_t size)
{
	char path[64];
	int fd = memfd_create("vp-fuzz", MFD_CLOEXEC);
	uint8_t *data = malloc(size ? size : 1);
	size_t off = 0;

	if (fd < 0 || !data)
		goto out;
	memcpy(data, input, size);
	if (size >= VP_FILE_HEADER_SIZE)
		fix_checksums(data, size);
	while (off < size) {
		ssize_t n = write(fd, data + off, size - off);

		if (n <= 0)
			goto out;
		off += (size_t)n;
	}
	/* the reader takes a path: the memory file's */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	run(path);
out:
	if (fd >= 0)
		close(fd);
	free(data);
	return 0;
}

#ifdef FUZZ_REPLAY
static int replay(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, n;
	int ret = -1;

	if (!f)
		return -1;
	do {
		if (len == cap) {
			uint8_t *b = realloc(buf, cap = cap ? cap * 2 : 65536);

			if (!b)
				goto out;
			buf = b;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n);
	if (!ferror(f)) {
		LLVMFuzzerTestOneInput(buf, len);
		ret = 0;
	}
out:
	free(buf);
	fclose(f);
	return ret;
}

/* fuzz-replay FILE...: each file once, TAP on stdout. */
int main(int argc, char **argv)
{
	int failed = 0;

	printf("1..%d\n", argc - 1);
	for (int i = 1; i < argc; i++) {
		/* before the run: a crash leaves the name in the log */
		printf("# %s\n", argv[i]);
		fflush(stdout);
		if (replay(argv[i]) < 0) {
			printf("not ok %d - %s: cannot read it: %s\n", i, argv[i], strerror(errno));
			failed = 1;
		} else {
			printf("ok %d - %s\n", i, argv[i]);
		}
	}
	return failed;
}
#endif
