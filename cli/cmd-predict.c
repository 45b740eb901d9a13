/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * cmd-predict.c - `varperf predict`: the run time of a program for an
 * input size it was not recorded with, from sampled recordings of it at
 * other sizes (Schwarzer et al., 2011; core/predict.h has the method).
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/predict.h"
#include "builtin.h"
#include "report/report-predict.h"
#include "usage.h"
#include "util/util.h"

enum {
	OPT_SIZE = 256,
	OPT_MANIFEST,
	OPT_INTERVALS,
	OPT_PHASES,
	OPT_COVERAGE,
	OPT_SEED,
	OPT_FORMAT,
	OPT_TIME,
};

/* Same order as OPTIONS in man/varperf-predict.1. */
static const struct option cmd_predict_options[] = {
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "manifest", required_argument, NULL, OPT_MANIFEST },
	{ "intervals", required_argument, NULL, OPT_INTERVALS },
	{ "phases", required_argument, NULL, OPT_PHASES },
	{ "coverage", required_argument, NULL, OPT_COVERAGE },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "time", required_argument, NULL, OPT_TIME },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const char *const cmd_predict_usage[] = {
	"usage: varperf predict [<options>] [--size <n>] <file>...",
	"",
	"    --size <n>                 predict the run time for input size <n>",
	"    --manifest <list>          read the recordings from <list>: lines",
	"                               '<file> <size>' (the size overrides the file's)",
	"    --intervals <n,...>        interval lengths in samples to try",
	"                               (default: 10,20,50,100,200,500,1000)",
	"    --phases <min>-<max>       numbers of phases to try (default: 1-10)",
	"    --coverage <pct>           keep the functions covering <pct> of the samples",
	"                               (default: 99%)",
	"    --seed <n>                 seed of k-means and of the interval sample",
	"                               (default: 1)",
	"    --time <cpu|wall>          a sample stands for its period of CPU time, or for",
	"                               the wall-clock time since the one before, waits",
	"                               included (default: cpu)",
	"    --format <text|json>       output format (default: text)",
	"    -h, --help                 show this help",
	NULL,
};

struct manifest_entry {
	char *path;
	double size;
};

struct cmd_predict_opts {
	int has_size;
	double size;
	const char *manifest;
	size_t intervals[32];
	size_t nintervals;
	struct vp_predict_opts p;
	int json;
	int wall;
};

static int parse_size(const char *what, const char *s, double *ret)
{
	unsigned long long v;

	if (parse_uint64(s, &v) < 0)
		return error("invalid value '%s' for '%s': must be a whole number, K/M/G "
			     "allowed", s, what);
	*ret = (double)v;
	return 0;
}

static int parse_intervals(const char *s, struct cmd_predict_opts *o)
{
	const char *p = s;

	o->nintervals = 0;
	while (*p) {
		char *end;
		unsigned long long v;

		errno = 0;
		v = *p >= '0' && *p <= '9' ? strtoull(p, &end, 10) : 0;
		if (errno || !v || v > 1000000 || (*end && *end != ',') ||
		    o->nintervals == sizeof(o->intervals) / sizeof(o->intervals[0]))
			return error("invalid value '%s' for '--intervals': must be up to 32 "
				     "comma-separated lengths of 1 to 1000000 samples",
				     s);
		o->intervals[o->nintervals++] = (size_t)v;
		p = *end ? end + 1 : end;
		if (*end && !*p)
			return error("invalid value '%s' for '--intervals': must be up to 32 "
				     "comma-separated lengths of 1 to 1000000 samples",
				     s);
	}
	if (!o->nintervals)
		return error("invalid value '' for '--intervals': must be up to 32 "
			     "comma-separated lengths of 1 to 1000000 samples");
	return 0;
}

static int parse_phases(const char *s, struct vp_predict_opts *p)
{
	unsigned lo, hi;
	int n = -1;

	if (sscanf(s, "%u-%u%n", &lo, &hi, &n) == 2 && n == (int)strlen(s)) {
		/* min-max */
	} else if (sscanf(s, "%u%n", &hi, &n) == 1 && n == (int)strlen(s)) {
		lo = hi;
	} else {
		n = -1;
	}
	if (n < 0 || !lo || lo > hi || hi > 100 || *s < '0' || *s > '9')
		return error("invalid value '%s' for '--phases': must be <min>-<max> or "
			     "<n>, from 1 to 100",
			     s);
	p->kmin = lo;
	p->kmax = hi;
	return 0;
}

static int parse_coverage(const char *s, double *ret)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end != s && *end == '%' && !end[1]) {
		v /= 100;
		end++;
	}
	if (errno || end == s || *end || !(v > 0 && v <= 1) || *s < '0' || *s > '9')
		return error("invalid value '%s' for '--coverage': must be greater than 0 "
			     "and at most 100%%", s);
	*ret = v;
	return 0;
}

static int cmd_predict_parse(int argc, char **argv, struct cmd_predict_opts *o)
{
	unsigned long long seed;
	int c, ret = 0;

	usage_getopt_start();
	while (!ret && (c = getopt_long(argc, argv, "+:h", cmd_predict_options, NULL)) != -1) {
		switch (c) {
		case OPT_SIZE:
			ret = parse_size("--size", optarg, &o->size);
			o->has_size = 1;
			break;
		case OPT_MANIFEST:
			o->manifest = optarg;
			break;
		case OPT_INTERVALS:
			ret = parse_intervals(optarg, o);
			break;
		case OPT_PHASES:
			ret = parse_phases(optarg, &o->p);
			break;
		case OPT_COVERAGE:
			ret = parse_coverage(optarg, &o->p.coverage);
			break;
		case OPT_SEED:
			if (parse_uint64(optarg, &seed) < 0)
				ret = error("invalid value '%s' for '--seed': must be a whole "
					    "number", optarg);
			o->p.seed = seed;
			break;
		case OPT_TIME:
			if (!strcmp(optarg, "cpu"))
				o->wall = 0;
			else if (!strcmp(optarg, "wall"))
				o->wall = 1;
			else
				ret = error("invalid value '%s' for '--time': must be 'cpu' or 'wall'",
					    optarg);
			break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "text"))
				o->json = 0;
			else if (!strcmp(optarg, "json"))
				o->json = 1;
			else
				ret = error("invalid value '%s' for '--format': must be 'text' or "
					    "'json'",
					    optarg);
			break;
		case 'h':
			usage_print(stdout, cmd_predict_usage, 1);
			return 1;
		default:
			return usage_getopt_error(c, argv, cmd_predict_options, cmd_predict_usage);
		}
	}
	if (ret < 0) {
		usage_print(stderr, cmd_predict_usage, 0);
		return EXIT_USAGE;
	}
	if (optind >= argc && !o->manifest)
		return usage_error(cmd_predict_usage, "no data files given");
	return 0;
}

/* A manifest's longest line: a path and a size. */
#define MANIFEST_LINE_MAX 4096

/*
 * Line @lineno of manifest @f into @buf: 1, 0 at its end, -1 said.  A
 * manifest is text: a NUL byte or a line longer than @len (/dev/zero, a
 * binary file named by mistake) is refused with the line's number instead
 * of read forever; the CR of a CRLF line end (a file written on Windows)
 * is dropped.
 */
static int manifest_line(FILE *f, const char *path, unsigned lineno, char *buf, size_t len)
{
	size_t n = 0;
	int c;

	while ((c = getc(f)) != EOF && c != '\n') {
		if (!c)
			return error("%s:%u: a NUL byte: a manifest is text, lines '<file> <size>'",
				     path, lineno);
		if (n + 1 == len)
			return error("%s:%u: a line longer than %zu bytes: a manifest is text, "
				     "lines '<file> <size>'",
				     path, lineno, len - 1);
		buf[n++] = (char)c;
	}
	if (ferror(f))
		return error("cannot read manifest '%s': %s", path, strerror(errno));
	if (c == EOF && !n)
		return 0;
	if (n && buf[n - 1] == '\r')
		n--;
	buf[n] = 0;
	return 1;
}

/* "<file> <size>" per line; blank lines and '#' comments are skipped. */
static int load_manifest(const char *path, int wall, struct vp_predict_data *d)
{
	FILE *f = fopen(path, "r");
	char line[MANIFEST_LINE_MAX], msg[512];
	unsigned lineno = 0;
	size_t listed = 0;
	struct stat st;
	int ret = 0, more = 0;

	if (!f)
		return error("cannot open manifest '%s': %s", path, strerror(errno));
	/* a directory opens, and reads as nothing */
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(f);
		return error("cannot read manifest '%s': %s", path, strerror(EISDIR));
	}
	while (!ret && (more = manifest_line(f, path, ++lineno, line, sizeof(line))) > 0) {
		char *p = line, *file, *sz, *extra;
		unsigned long long size;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '#')
			continue;
		file = strtok(p, " \t");
		sz = strtok(NULL, " \t");
		extra = strtok(NULL, " \t");
		if (!sz || extra) {
			ret = error("%s:%u: expected '<file> <size>', found %s", path, lineno,
				    !sz ? "no size" : "more than two fields");
			break;
		}
		if (parse_uint64(sz, &size) < 0) {
			ret = error("%s:%u: invalid size '%s': a whole number, K/M/G allowed", path,
				    lineno, sz);
			break;
		}
		listed++;
		if (vp_predict_load(d, file, 1, (double)size, wall, msg, sizeof(msg)) < 0)
			ret = error("%s:%u: %s", path, lineno, msg);
	}
	if (more < 0)
		ret = -1;
	fclose(f);
	if (!ret && !listed)
		warning("manifest '%s' lists no recordings", path);
	return ret;
}

int cmd_predict(int argc, char **argv)
{
	struct cmd_predict_opts o;
	struct vp_predict_data d;
	struct vp_predict_model m;
	struct vp_predict_loo loo;
	struct predict_result res = { 0 };
	char msg[512];
	int ret, err, have_loo = 0;

	memset(&o, 0, sizeof(o));
	vp_predict_opts_init(&o.p);
	ret = cmd_predict_parse(argc, argv, &o);
	if (ret)
		return ret == 1 ? 0 : ret;
	if (o.nintervals) {
		o.p.intervals = o.intervals;
		o.p.nintervals = o.nintervals;
	}
	if (vp_predict_data_init(&d) < 0)
		die("out of memory");
	memset(&m, 0, sizeof(m));
	ret = 1;
	if (o.manifest && load_manifest(o.manifest, o.wall, &d) < 0)
		goto out;
	for (int i = optind; i < argc; i++) {
		err = vp_predict_load(&d, argv[i], 0, 0, o.wall, msg, sizeof(msg));
		if (err < 0) {
			error("%s", msg);
			goto out;
		}
	}
	if (d.nruns < 2) {
		error("predict needs recordings of at least 2 input sizes, got %zu recording%s",
		      d.nruns, d.nruns == 1 ? "" : "s");
		goto out;
	}
	err = vp_predict_fit(&d, NULL, &o.p, &m);
	if (err == -EDOM) {
		error("the recordings' input sizes are all the same: nothing to fit");
		goto out;
	}
	if (err == -ENODATA) {
		size_t shortest = 0;

		for (size_t i = 1; i < d.nruns; i++)
			if (d.runs[i].n < d.runs[shortest].n)
				shortest = i;
		error("no interval length leaves the shortest recording (%s, %zu samples) 2 "
		      "intervals: give shorter ones with --intervals",
		      d.runs[shortest].name, d.runs[shortest].n);
		goto out;
	}
	if (err < 0) {
		error("cannot fit the model: %s", strerror(-err));
		goto out;
	}
	if (d.nruns >= 3) {
		err = vp_predict_loo(&d, &o.p, &loo);
		if (err < 0 && err != -EDOM && err != -ENODATA) {
			error("leave-one-out: %s", strerror(-err));
			goto out;
		}
		have_loo = err == 0;
	}
	res.data = &d;
	res.opts = &o.p;
	res.model = &m;
	res.has_size = o.has_size;
	res.size = o.size;
	res.loo = have_loo ? &loo : NULL;
	res.wall = o.wall;
	if (o.has_size)
		for (int s = 0; s < VP_PREDICT_NSTRATEGIES; s++)
			vp_predict_at(&m, o.size, s, &res.at[s]);
	if (o.json)
		predict_render_json(stdout, &res);
	else
		predict_render_text(stdout, &res);
	if (fflush(stdout) || ferror(stdout)) {
		error("cannot write the output: %s", strerror(errno));
		goto out;
	}
	ret = 0;
out:
	if (have_loo)
		vp_predict_loo_release(&loo);
	vp_predict_model_release(&m);
	vp_predict_data_release(&d);
	return ret;
}
