/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * fuzz-report.c - a data file through everything the commands that read
 * one do with it: core's reader, the calling-context tree, the sampled
 * tree, the analysis of Kumar et al. 2008, the sources of variance and the
 * graph; then as a recording (core/recording.c: compensation, time bases)
 * through every renderer of `varperf report` (text, JSON, Graphviz, HTML,
 * the slowest calls, the chrome and folded exports), `varperf compare` of
 * the file with itself (which must agree), `explain` and `bound` of its
 * first tasks (core/regression.c) and `predict` of it at three sizes.  Any
 * input must end in an error or a result, within the memory budget.
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
#include "core/compare.h"
#include "core/datafile.h"
#include "core/patterns.h"
#include "core/predict.h"
#include "core/recording.h"
#include "core/regression.h"
#include "core/regression-task.h"
#include "core/sampled.h"
#include "core/sources.h"
#include "core/vcg.h"
#include "report/report-predict.h"
#include "report/report.h"
#include "util/util.h"

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

/* Where the renderers write: nothing is kept, everything is formatted. */
static FILE *sink(void)
{
	static FILE *f;

	if (!f)
		f = fopen("/dev/null", "w");
	if (!f)
		abort();
	return f;
}

/* Tasks explain and bound fit, at most: each is a pass over the events. */
enum { FUZZ_TASKS = 3 };

/* explain and bound of the first FUZZ_TASKS nodes with invocations. */
static void regress(struct vp_recording *rec, const struct report *r)
{
	size_t done = 0;

	if (!vp_regress_available())
		return;
	for (uint32_t id = 1; id < rec->tree.nnodes && done < FUZZ_TASKS; id++) {
		struct vp_task_rows rows;

		if (!rec->tree.nodes[id].stats.n)
			continue;
		done++;
		if (vp_task_rows(rec, id, &rows, NULL, 0) < 0)
			continue;
		for (int bound = 0; bound < 2; bound++) {
			struct vp_regress_opts o;
			struct vp_regress_model *m = NULL;

			vp_regress_opts_default(&o);
			o.train = bound ? 0.5 : 1.0;
			if (vp_regress_fit(rows.y, rows.x, rows.n, rows.k, &o, &m) == 0) {
				struct report_regress rr = { sink(), r,	 "task", &rows,
							     m,	     bound };

				report_regress_text(&rr);
				report_regress_json(&rr);
			}
			vp_regress_model_free(m);
		}
		vp_task_rows_release(&rows);
	}
}

/* compare of the recording with itself: it must agree. */
static void compare_self(struct vp_recording *rec, const struct report *r, const char *path)
{
	struct vp_compare_input in = { &rec->tree, rec->hdr, rec->reader, &rec->an };
	struct vp_compare_params p;
	struct vp_compare c;
	struct report_compare rc;

	vp_compare_params_default(&p);
	if (vp_compare_run(&c, &in, &in, &p) < 0)
		return;
	if (!c.agree)
		abort(); /* a file differs from itself */
	rc = (struct report_compare){ .out = sink(), .path = { path, path }, .side = { r, r },
				      .c = &c, .params = &rec->an.params, .time = rec->time };
	report_compare_text(&rc);
	report_compare_json(&rc);
	vp_compare_release(&c);
}

/* predict over the file at sizes 1, 2 and 3: load, fit, evaluate, print. */
static void predict(const char *path)
{
	struct vp_predict_data d;
	struct vp_predict_opts o;
	struct vp_predict_model m;
	struct vp_predict_loo loo;
	struct predict_result res = { 0 };
	char msg[512];
	int have_loo;

	if (vp_predict_data_init(&d) < 0)
		return;
	vp_predict_opts_init(&o);
	for (int i = 1; i <= 3; i++)
		if (vp_predict_load(&d, path, 1, i, i == 3, msg, sizeof(msg)) < 0)
			goto out;
	if (vp_predict_fit(&d, NULL, &o, &m) < 0)
		goto out;
	have_loo = vp_predict_loo(&d, &o, &loo) == 0;
	res.data = &d;
	res.opts = &o;
	res.model = &m;
	res.has_size = 1;
	res.size = 4;
	res.loo = have_loo ? &loo : NULL;
	for (int s = 0; s < VP_PREDICT_NSTRATEGIES; s++)
		vp_predict_at(&m, 4, s, &res.at[s]);
	predict_render_text(sink(), &res);
	predict_render_json(sink(), &res);
	if (have_loo)
		vp_predict_loo_release(&loo);
	vp_predict_model_release(&m);
out:
	vp_predict_data_release(&d);
}

/* What `varperf report` prints after the Dominant Variance Analysis. */
static void render_analysed(struct report *r, struct vp_recording *rec)
{
	struct vp_sources_params sp;
	struct vp_vcg_params vp;
	struct vp_sources src;
	struct vp_vcg vcg;
	struct report_html *html = NULL;
	uint32_t *probed_of;
	uint8_t *labels, *slow;
	size_t nslow;

	vp_sources_params_default(&sp);
	vp_vcg_params_default(&vp);
	if (vp_sources_run(&src, r->tree, r->an, r->reader, &sp) < 0)
		return;
	labels = xmalloc(r->tree->nnodes ? r->tree->nnodes : 1);
	if (vp_vcg_label(r->tree, r->an, &src, labels) < 0 ||
	    vp_vcg_build(&vcg, r->tree, r->an, &src, &vp) < 0)
		goto out_src;
	r->sources = &src;
	r->vcg = &vcg;
	r->labels = labels;
	probed_of = report_match_probed(r);
	r->probed_of = probed_of;
	report_text(r);
	r->all = r->wide = r->contexts = 1;
	report_text(r);
	r->vcg_only = 1;
	report_text(r);
	r->vcg_only = r->all = r->wide = r->contexts = 0;
	report_json(r);
	report_vcg_dot(r);
	slow = report_slowest_nodes(r, &nslow);
	if (slow) {
		r->slowest = 1;
		report_slowest_text(r);
		r->slowest = 0;
		free(slow);
	}
	if (report_html_prepare(r, rec, &html) == 0) {
		r->html = html;
		report_html(r);
		r->html = NULL;
		report_html_free(html);
	}
	free(probed_of);
	r->probed_of = NULL;
	r->sources = NULL;
	r->vcg = NULL;
	r->labels = NULL;
	vp_vcg_release(&vcg);
out_src:
	free(labels);
	vp_sources_release(&src);
}

/* The recording in one time base, compensated or raw, through the commands. */
static void commands_as(const char *path, enum vp_time_base time, int raw)
{
	struct vp_recording_opts ro;
	struct vp_recording *rec;
	struct report r;

	vp_recording_opts_default(&ro);
	ro.max_memory = FUZZ_BUDGET;
	ro.samples = 1;
	ro.time = time;
	ro.raw = raw;
	if (vp_recording_open(path, &ro, &rec, NULL, 0) < 0)
		return;
	report_init(&r, path, rec);
	r.out = sink();
	r.confidence = 0.95;
	r.z = 1.959963984540054;
	r.precision = 0.01;
	/* the exports, as report runs them: before any analysis of its own */
	report_chrome(&r, rec);
	report_folded(&r, rec);
	r.folded_value = FOLDED_VARIANCE;
	report_folded(&r, rec);
	r.folded_value = FOLDED_TIME;
	r.slowest = 1;
	report_chrome(&r, rec);
	report_folded(&r, rec);
	r.typical = 1;
	report_folded(&r, rec);
	r.typical = r.slowest = 0;
	render_analysed(&r, rec);
	if (time == VP_TIME_WALL && !raw) {
		compare_self(rec, &r, path);
		regress(rec, &r);
	}
	vp_recording_free(rec);
}

static void commands(const char *path)
{
	commands_as(path, VP_TIME_WALL, 0);
	commands_as(path, VP_TIME_WALL, 1);
	commands_as(path, VP_TIME_CPU, 0);
	predict(path);
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
	/* the messages of the renderers and the exports: not the fuzzer's */
	mute_errors(1);
	commands(path);
	mute_errors(0);
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
