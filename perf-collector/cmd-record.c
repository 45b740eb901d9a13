/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * cmd-record.c - "varperf record": run a program (or attach to a running
 * one) and write what it does to a data file: sampled call stacks, the
 * entries and exits of probed functions, or - by default - both in two
 * runs, a sampling run that finds the functions that matter and a probed
 * run that times only those.
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../core/datafile.h"
#include "../core/sampled.h"
#include "builtin.h"
#include "calibrate.h"
#include "launch.h"
#include "plan.h"
#include "probes.h"
#include "sampling.h"
#include "symbols.h"
#include "util.h"

static const char *const cmd_record_usage[] = {
	"usage: varperf record [<options>] [--] <program> [<args>...]",
	"   or: varperf record [<options>] -p <pid>",
	"",
	"    -o, --output <file>       write the data to <file> (default: varperf.data)",
	"        --mode <mode>         auto (default: sample, then probe what matters),",
	"                              probe, sample or combined",
	"    -F, --freq <hz>           samples per second (default: 1000)",
	"        --stack-size <bytes>  user stack copied per sample (default: 8192)",
	"    -e, --event <event>       sampling event: auto, cpu-clock, task-clock or cycles",
	"        --precision <pct>     wanted +/- on sampled shares (default: 1%)",
	"        --confidence <pct>    ... at this confidence (default: 95%)",
	"        --cutoff <pct>        auto: probe functions with at least this share",
	"                              of the time (default: 0.02%)",
	"        --overhead <pct>      auto: budget for the probes' cost (default: 5%)",
	"        --phase1 <file>       auto: reuse the sampling run recorded in <file>",
	"        --phase1-duration <secs>",
	"                              auto with -p: sample <secs> seconds before probing",
	"                              (default: 2, or a quarter of --duration)",
	"    -p, --pid <pid>           attach to the running process <pid>",
	"        --duration <secs>     stop after <secs> seconds",
	"    -f, --function <glob>     probe only the functions matching <glob> (repeatable)",
	"        --exclude <glob>      do not probe the functions matching <glob> (repeatable)",
	"        --lib <name>          also probe the shared library <name> (repeatable)",
	"        --exit-probes <how>   probe exits with auto, uretprobe or ret (default: auto)",
	"    -m, --buffer-size <size>  ring buffer per CPU, with K/M/G suffix (default: 8M)",
	"        --list                list the functions that would be probed and exit",
	"        --no-calibrate        do not measure the cost of a probe first",
	"        --no-move-probes      probe each function's first instruction, even where",
	"                              a later one would cost less",
	"    -q, --quiet               print errors and warnings only",
	"    -h, --help                show this help",
	NULL,
};

enum {
	OPT_EXCLUDE = 256,
	OPT_LIB,
	OPT_EXIT_PROBES,
	OPT_LIST,
	OPT_NO_CALIBRATE,
	OPT_NO_MOVE,
	OPT_MODE,
	OPT_STACK_SIZE,
	OPT_PRECISION,
	OPT_CONFIDENCE,
	OPT_CUTOFF,
	OPT_OVERHEAD,
	OPT_PHASE1,
	OPT_PHASE1_DURATION,
	OPT_DURATION,
};

static const struct option cmd_record_options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "freq", required_argument, NULL, 'F' },
	{ "stack-size", required_argument, NULL, OPT_STACK_SIZE },
	{ "event", required_argument, NULL, 'e' },
	{ "precision", required_argument, NULL, OPT_PRECISION },
	{ "confidence", required_argument, NULL, OPT_CONFIDENCE },
	{ "cutoff", required_argument, NULL, OPT_CUTOFF },
	{ "overhead", required_argument, NULL, OPT_OVERHEAD },
	{ "phase1", required_argument, NULL, OPT_PHASE1 },
	{ "phase1-duration", required_argument, NULL, OPT_PHASE1_DURATION },
	{ "pid", required_argument, NULL, 'p' },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "function", required_argument, NULL, 'f' },
	{ "exclude", required_argument, NULL, OPT_EXCLUDE },
	{ "lib", required_argument, NULL, OPT_LIB },
	{ "exit-probes", required_argument, NULL, OPT_EXIT_PROBES },
	{ "buffer-size", required_argument, NULL, 'm' },
	{ "list", no_argument, NULL, OPT_LIST },
	{ "no-calibrate", no_argument, NULL, OPT_NO_CALIBRATE },
	{ "no-move-probes", no_argument, NULL, OPT_NO_MOVE },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

enum {
	POLL_MS = 50,
	USAGE_ERROR = 129,
	/* auto, attached: what phase 1 needs before phase 2 can be planned */
	PHASE1_MIN_SAMPLES = 200,
};

/* --duration with a program: how long it may take to stop after SIGINT */
static const uint64_t GRACE_NS = 5000000000ULL;

struct strvec {
	char **v;
	size_t n;
};

/* --exit-probes */
enum exit_mode {
	EXIT_AUTO,
	EXIT_URETPROBE,
	EXIT_RET,
};

/* --mode */
enum record_mode {
	MODE_AUTO = VP_MODE_AUTO,
	MODE_PROBE = VP_MODE_PROBE,
	MODE_SAMPLE = VP_MODE_SAMPLE,
	MODE_COMBINED = VP_MODE_COMBINED,
};

struct record_opts {
	const char *output;
	struct strvec funcs, excludes, libs;
	unsigned long long buf_size;
	int list, quiet, no_calibrate, no_move;
	enum exit_mode exit_mode;
	enum record_mode mode;
	struct vp_sampling_opts sampling;
	double precision, confidence;
	int precision_given;
	double cutoff, overhead;
	const char *phase1;
	pid_t attach;	  /* -p: 0 to run a program */
	double duration;  /* seconds, 0: none */
	double phase1_duration; /* auto with -p: seconds of phase 1, 0: default */
};

/* Open-addressing map from a 64-bit key to a 32-bit index. */
struct idmap {
	uint64_t *keys;
	uint32_t *vals;
	uint8_t *used;
	size_t cap, n;
};

struct record {
	struct record_opts opts;
	const char *prog;
	char *path;
	struct vp_header hdr;
	struct vp_symfile **symfiles;
	/* Per function how its exits are probed; NULL: return probes. */
	struct vp_exits *exits;
	int can_throw;
	struct vp_launch launch;
	struct vp_probes probes;
	enum record_mode mode;	   /* of this run: probe, sample or combined */
	struct vp_sampler sampler; /* sample and combined modes */
	struct vp_sample_sink *ss;
	struct vp_ring *rings;	   /* the buffers to read: the probes' or the sampler's */
	int nrings;
	uint32_t thread_base;	   /* auto: phase 2 numbers its threads after phase 1's */
	const char *plan_from;	   /* auto: the phase-1 data selecting what to probe */
	struct vp_plan plan;
	uint64_t *calls;	   /* auto, phase 2: entries per function so far */
	uint64_t watched_ns;	   /* ... when the watchdog last looked */
	uint64_t start_cpu;	   /* CPU time of the target when recording began */
	uint64_t cpu;		   /* ... its CPU time since then, last seen */
	unsigned char *dropped;	   /* ... and functions no longer probed */
	int argc;		   /* the program's command line */
	char **argv;
	int pidfd;		   /* attach: readable when the process exits */
	uint64_t start_ns;
	struct vp_writer *w;
	struct vp_addrspace *as;
	pid_t pid;
	/* Records read but not yet written, sorted by time each round. */
	struct vp_raw *pending;
	size_t npending, cap;
	uint64_t seq, max_seen;
	struct idmap threads, callsites;
	uint64_t lost, foreign;
	int write_err;
	int finished;		   /* the file was written to its end */
	int announce;		   /* say when attached, even when quiet */
	int can_sample_only;	   /* auto: nothing to probe is no error... */
	char *unprobeable;	   /* ... and this says why (malloc'ed) */
	uint64_t nsamples;	   /* samples read so far */
	uint64_t min_samples;	   /* auto, attached: phase 1 goes on until this
				    * many samples, after --phase1-duration... */
	uint64_t until_ns;	   /* ... but not beyond this time (0: no end) */
	int waiting_said;
	int gone;		   /* attach: the process exited */
	/* Sample mode: unwinding waits until the target is gone, so that it
	 * takes no CPU time from it; samples and mappings queue up here. */
	int defer;
	struct vp_raw *deferred;
	size_t ndeferred, deferred_cap, deferred_bytes;
};

static volatile sig_atomic_t record_signal, record_nsignals;

static void cmd_record_print_usage(FILE *out)
{
	for (const char *const *l = cmd_record_usage; *l; l++)
		fprintf(out, "%s\n", *l);
}

static void strvec_push(struct strvec *v, char *s)
{
	v->v = xrealloc(v->v, (v->n + 1) * sizeof(*v->v));
	v->v[v->n++] = s;
}

static int parse_exit_mode(const char *s, enum exit_mode *ret)
{
	static const char *const names[] = { [EXIT_AUTO] = "auto",
					     [EXIT_URETPROBE] = "uretprobe",
					     [EXIT_RET] = "ret" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(s, names[i])) {
			*ret = (enum exit_mode)i;
			return 0;
		}
	}
	return -1;
}

static int parse_mode(const char *s, enum record_mode *ret)
{
	static const struct {
		const char *name;
		enum record_mode mode;
	} modes[] = { { "auto", MODE_AUTO },
		      { "probe", MODE_PROBE },
		      { "sample", MODE_SAMPLE },
		      { "combined", MODE_COMBINED } };

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (!strcmp(s, modes[i].name)) {
			*ret = modes[i].mode;
			return 0;
		}
	}
	return error("invalid value '%s' for --mode (auto, probe, sample or combined)", s);
}

static int parse_event(const char *s, uint32_t *ret)
{
	static const char *const names[] = { "auto", "cpu-clock", "task-clock", "cycles" };
	static const uint32_t events[] = { 0, VP_SEV_CPU_CLOCK, VP_SEV_TASK_CLOCK, VP_SEV_CYCLES };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(s, names[i])) {
			*ret = events[i];
			return 0;
		}
	}
	return error("invalid value '%s' for --event (auto, cpu-clock, task-clock or cycles)",
		     s);
}

/* A share in (0, 1), written "0.5%" or "0.005"; @lo_open: 0 excluded. */
static int parse_share(const char *opt, const char *s, double lo, double hi, double *ret)
{
	double v;

	if (parse_double(s, &v) < 0 || v <= lo || v >= hi)
		return error("invalid value '%s' for --%s (a percentage between %g%% and %g%%)", s,
			     opt, lo * 100, hi * 100);
	*ret = v;
	return 0;
}

/* The options that only make sense together, checked once all are read. */
static int check_options(struct record_opts *o, int nargs)
{
	if (o->attach && nargs)
		return error("give either a program to run or -p, not both");
	if (o->phase1 && o->mode != MODE_AUTO)
		return error("--phase1 is for --mode=auto");
	if (o->phase1 && o->attach)
		return error("--phase1 reuses a run of a program: it cannot go with -p");
	if (o->phase1_duration > 0 && (o->mode != MODE_AUTO || !o->attach || o->phase1))
		return error("--phase1-duration is for --mode=auto with -p");
	if (o->list && o->mode != MODE_PROBE && o->mode != MODE_AUTO)
		return error("--list shows the functions to probe: not for --mode=%s",
			     o->mode == MODE_SAMPLE ? "sample" : "combined");
	return 0;
}

/* Returns -1 to continue, or the exit status. */
static int parse_options(struct record_opts *o, int argc, char **argv)
{
	unsigned long long v;
	int c;

	o->output = "varperf.data";
	o->buf_size = 8 << 20;
	o->mode = MODE_AUTO;
	o->sampling.freq = 1000;
	o->sampling.stack_size = 8192;
	o->precision = 0.01;
	o->confidence = 0.95;
	o->cutoff = 0.0002;
	o->overhead = 0.05;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:o:f:m:qhF:e:p:", cmd_record_options, NULL)) !=
	       -1) {
		switch (c) {
		case 'o':
			o->output = optarg;
			break;
		case OPT_MODE:
			if (parse_mode(optarg, &o->mode) < 0)
				return USAGE_ERROR;
			break;
		case 'F':
			if (parse_uint64(optarg, &v) < 0 || v < 1 || v > 100000) {
				error("invalid frequency '%s' (1 to 100000 samples per second)",
				      optarg);
				return USAGE_ERROR;
			}
			o->sampling.freq = v;
			break;
		case OPT_STACK_SIZE:
			/* the kernel takes at most 65528 bytes, in words */
			if (parse_uint64(optarg, &v) < 0 || v < 64 || v > VP_STACK_SIZE_MAX || v % 8) {
				error("invalid stack size '%s' (a multiple of 8, 64 to 65528 "
				      "bytes)", optarg);
				return USAGE_ERROR;
			}
			o->sampling.stack_size = (uint32_t)v;
			break;
		case 'e':
			if (parse_event(optarg, &o->sampling.event) < 0)
				return USAGE_ERROR;
			break;
		case OPT_PRECISION:
			if (parse_share("precision", optarg, 0, 0.5, &o->precision) < 0)
				return USAGE_ERROR;
			o->precision_given = 1;
			break;
		case OPT_CONFIDENCE:
			if (parse_share("confidence", optarg, 0.5, 1, &o->confidence) < 0)
				return USAGE_ERROR;
			o->precision_given = 1;
			break;
		case OPT_CUTOFF:
			if (parse_double(optarg, &o->cutoff) < 0 || o->cutoff >= 1) {
				error("invalid value '%s' for --cutoff (a percentage below 100%%)",
				      optarg);
				return USAGE_ERROR;
			}
			break;
		case OPT_OVERHEAD:
			if (parse_share("overhead", optarg, 0, 10, &o->overhead) < 0)
				return USAGE_ERROR;
			break;
		case OPT_PHASE1:
			o->phase1 = optarg;
			break;
		case 'p': {
			char *end;
			long pid;

			errno = 0;
			pid = strtol(optarg, &end, 10);
			if (!*optarg || *end || errno || pid <= 0 || pid > INT32_MAX) {
				error("invalid process id '%s'", optarg);
				return USAGE_ERROR;
			}
			o->attach = (pid_t)pid;
			break;
		}
		case OPT_DURATION:
		case OPT_PHASE1_DURATION: {
			double *d = c == OPT_DURATION ? &o->duration : &o->phase1_duration;

			if (parse_double(optarg, d) < 0 || *d <= 0 || strchr(optarg, '%')) {
				error("invalid value '%s' for --%s (seconds, more than 0)", optarg,
				      c == OPT_DURATION ? "duration" : "phase1-duration");
				return USAGE_ERROR;
			}
			break;
		}
		case 'f':
			strvec_push(&o->funcs, optarg);
			break;
		case OPT_EXCLUDE:
			strvec_push(&o->excludes, optarg);
			break;
		case OPT_LIB:
			strvec_push(&o->libs, optarg);
			break;
		case OPT_EXIT_PROBES:
			if (parse_exit_mode(optarg, &o->exit_mode) < 0) {
				error("invalid value '%s' for --exit-probes "
				      "(auto, uretprobe or ret)", optarg);
				return USAGE_ERROR;
			}
			break;
		case 'm':
			if (parse_uint64(optarg, &o->buf_size) < 0 || o->buf_size < 4096 ||
			    o->buf_size > (1ULL << 30)) {
				error("invalid buffer size '%s' (4K to 1G)", optarg);
				return USAGE_ERROR;
			}
			break;
		case OPT_LIST:
			o->list = 1;
			break;
		case OPT_NO_CALIBRATE:
			o->no_calibrate = 1;
			break;
		case OPT_NO_MOVE:
			o->no_move = 1;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'h':
			cmd_record_print_usage(stdout);
			return 0;
		case ':':
			error("option '%s' requires a value", argv[optind - 1]);
			cmd_record_print_usage(stderr);
			return USAGE_ERROR;
		default:
			if (optopt)
				error("unknown switch '%c'", optopt);
			else
				error("unknown option '%s'", argv[optind - 1]);
			cmd_record_print_usage(stderr);
			return USAGE_ERROR;
		}
	}
	if (check_options(o, argc - optind) < 0)
		return USAGE_ERROR;
	if (optind >= argc && !o->attach) {
		/* --precision alone: say how many samples that takes */
		if (o->precision_given)
			return 0;
		error("no program to record");
		cmd_record_print_usage(stderr);
		return USAGE_ERROR;
	}
	return -1;
}

/* ---- id maps ---- */

static uint64_t hash64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return k;
}

static void idmap_grow(struct idmap *m);

static uint32_t *idmap_slot(struct idmap *m, uint64_t key, int *found)
{
	size_t i;

	if (2 * (m->n + 1) > m->cap)
		idmap_grow(m);
	for (i = hash64(key) & (m->cap - 1); m->used[i]; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			*found = 1;
			return &m->vals[i];
		}
	}
	*found = 0;
	m->used[i] = 1;
	m->keys[i] = key;
	m->n++;
	return &m->vals[i];
}

static void idmap_grow(struct idmap *m)
{
	struct idmap old = *m;

	m->cap = old.cap ? old.cap * 2 : 64;
	m->keys = xcalloc(m->cap, sizeof(*m->keys));
	m->vals = xcalloc(m->cap, sizeof(*m->vals));
	m->used = xcalloc(m->cap, 1);
	m->n = 0;
	for (size_t i = 0; i < old.cap; i++) {
		int found;

		if (old.used[i])
			*idmap_slot(m, old.keys[i], &found) = old.vals[i];
	}
	free(old.keys);
	free(old.vals);
	free(old.used);
}

static void idmap_release(struct idmap *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

/* ---- functions and header ---- */

static int load_modules(struct record *rec)
{
	struct vp_symfile *exe;
	size_t nmods = 1 + rec->opts.libs.n;
	int err = vp_symfile_open(rec->path, &exe);

	if (err == -ENOEXEC)
		return error("'%s' is not an ELF file", rec->path);
	if (err)
		return error("cannot open '%s': %s", rec->path, strerror(-err));
	rec->symfiles = xcalloc(nmods, sizeof(*rec->symfiles));
	rec->hdr.modules = xcalloc(nmods, sizeof(*rec->hdr.modules));
	rec->symfiles[0] = exe;
	rec->hdr.nmodules = 1;
	for (size_t i = 0; i < rec->opts.libs.n; i++) {
		const char *name = rec->opts.libs.v[i];
		char *lib;

		err = vp_symfile_find_needed(exe, name, &lib);
		if (err == -ENOENT)
			return error("'%s' does not need a library '%s'", rec->path, name);
		if (err)
			return error("cannot find the library '%s' of '%s'", name, rec->path);
		err = vp_symfile_open(lib, &rec->symfiles[rec->hdr.nmodules]);
		if (err == -ENOEXEC)
			err = error("'%s' is not an ELF file", lib);
		else if (err)
			err = error("cannot open '%s': %s", lib, strerror(-err));
		free(lib);
		if (err)
			return -1;
		rec->hdr.nmodules++;
	}
	for (size_t i = 0; i < rec->hdr.nmodules; i++) {
		struct vp_module *m = &rec->hdr.modules[i];
		const unsigned char *id;

		m->path = xstrdup(vp_symfile_path(rec->symfiles[i]));
		m->build_id_len = vp_symfile_build_id(rec->symfiles[i], &id);
		if (m->build_id_len) {
			m->build_id = xmalloc(m->build_id_len);
			memcpy(m->build_id, id, m->build_id_len);
		}
	}
	return 0;
}

static int load_functions(struct record *rec)
{
	struct record_opts *o = &rec->opts;
	const char *unmatched;

	for (size_t i = 0; i < rec->hdr.nmodules; i++)
		vp_symfile_functions(rec->symfiles[i], (uint32_t)i, i ? VP_FUNC_FROM_LIB : 0,
				     &rec->hdr.funcs, &rec->hdr.nfuncs);
	for (size_t i = 0; o->no_move && i < rec->hdr.nfuncs; i++)
		vp_symfile_probe_first(rec->symfiles[rec->hdr.funcs[i].module], &rec->hdr.funcs[i]);
	if (!rec->hdr.nfuncs) {
		rec->unprobeable = xasprintf("no function symbols in '%s' (stripped, and no debug "
					     "file found?)", rec->path);
		return rec->can_sample_only ? -1 : error("%s", rec->unprobeable);
	}
	if (vp_funcs_select(rec->hdr.funcs, &rec->hdr.nfuncs, o->funcs.v, o->funcs.n,
			    o->excludes.v, o->excludes.n, &unmatched) < 0)
		return error("no function matches '%s' in '%s'", unmatched, rec->path);
	if (!rec->hdr.nfuncs)
		return error("no function to probe in '%s'", rec->path);
	return 0;
}

/*
 * Decide how exits are probed.  A return probe puts the kernel's trampoline
 * in place of the return address, and the C++ unwinder, finding no unwind
 * information for it, calls std::terminate(): a program that throws
 * through a probed function dies.  Probes on the instructions that leave
 * a function do not touch the stack, but cost a single-step per call.
 */
static int plan_exits(struct record *rec)
{
	enum exit_mode mode = rec->opts.exit_mode;
	size_t undecodable = 0;

	for (size_t m = 0; m < rec->hdr.nmodules && !rec->can_throw; m++) {
		int probed = 0;

		for (size_t i = 0; i < rec->hdr.nfuncs && !probed; i++)
			probed = rec->hdr.funcs[i].module == m;
		/* The program itself always counts: it may throw through
		 * the probed functions of a library (callbacks). */
		if ((probed || !m) && vp_symfile_can_throw(rec->symfiles[m]))
			rec->can_throw = 1;
	}
	if (mode == EXIT_AUTO) {
#ifdef HAVE_CAPSTONE
		mode = rec->can_throw ? EXIT_RET : EXIT_URETPROBE;
#else
		if (rec->can_throw)
			warning("'%s' can throw C++ exceptions, which end the program when they "
				"pass a return probe; probing the ret instructions instead needs "
				"capstone, which this varperf was built without", rec->path);
		mode = EXIT_URETPROBE;
#endif
	} else if (mode == EXIT_URETPROBE && rec->can_throw) {
		warning("'%s' can throw C++ exceptions: one that passes a function with a "
			"return probe ends the program", rec->path);
	}
	if (mode != EXIT_RET)
		return 0;
	rec->exits = xcalloc(rec->hdr.nfuncs, sizeof(*rec->exits));
	for (size_t i = 0; i < rec->hdr.nfuncs; i++) {
		const struct vp_func *f = &rec->hdr.funcs[i];
		int err = vp_symfile_exits(rec->symfiles[f->module], f, &rec->exits[i]);

		if (err == -ENOTSUP)
			return error("--exit-probes=ret needs capstone to find the exits, and "
				     "this varperf was built without it");
		if (err) {
			undecodable++;
			pr_debug("%s at %#llx: code not decodable: return probe", f->display,
				 (unsigned long long)f->addr);
		}
		for (uint32_t k = 0; k < rec->exits[i].n; k++) {
			uint64_t vaddr = 0;

			vp_symfile_off_to_vaddr(rec->symfiles[f->module], rec->exits[i].offs[k],
						&vaddr);
			pr_debug2("%s at %#llx: exit at %#llx", f->display,
				  (unsigned long long)f->addr, (unsigned long long)vaddr);
		}
	}
	pr_debug("exit sites decoded, %zu functions not decodable", undecodable);
	return 0;
}

static const char *class_name(uint32_t cls)
{
	switch (cls) {
	case VP_INSN_EMULATED:
		return "emulated";
	case VP_INSN_STEPPED:
		return "stepped";
	default:
		return "unknown";
	}
}

/* How the exits of function @i are probed, for --list. */
static const char *exits_name(const struct record *rec, size_t i, char *buf, size_t len)
{
	const struct vp_exits *ex = rec->exits ? &rec->exits[i] : NULL;

	switch (ex ? ex->how : VP_EXITS_URETPROBE) {
	case VP_EXITS_SITES:
		snprintf(buf, len, "sites:%u", ex->n);
		return buf;
	case VP_EXITS_NONE:
		return "none";
	case VP_EXITS_AT_ENTRY:
		return "at-entry";
	default:
		return "uretprobe";
	}
}

static void list_functions(const struct record *rec)
{
	for (size_t i = 0; i < rec->hdr.nfuncs; i++) {
		const struct vp_func *f = &rec->hdr.funcs[i];
		char buf[32];

		printf("%#10llx %6llu %-8s %-9s %s", (unsigned long long)f->addr,
		       (unsigned long long)f->size, class_name(f->insn_class),
		       exits_name(rec, i, buf, sizeof(buf)), f->display);
		if (f->flags & VP_FUNC_FROM_LIB)
			printf("  [%s]", rec->hdr.modules[f->module].path);
		printf("\n");
	}
}

static void fill_header(struct record *rec, int argc, char **argv)
{
	struct vp_header *h = &rec->hdr;
	struct utsname u;
	int *cpus;
	int n;

	h->version = VP_DATA_VERSION;
	h->unit = VP_UNIT_NS;
	h->clock = CLOCK_MONOTONIC;
	h->start_time = (uint64_t)time(NULL);
	h->pid = (uint32_t)rec->pid;
	n = vp_online_cpus(&cpus);
	if (n > 0) {
		h->ncpu = (uint32_t)n;
		free(cpus);
	}
	h->host = uname(&u) == 0 ? xasprintf("%s %s", u.release, u.machine) : xstrdup("");
	h->argc = argc;
	h->argv = xcalloc((size_t)argc + 1, sizeof(*h->argv));
	for (int i = 0; i < argc; i++)
		h->argv[i] = xstrdup(argv[i]);
	h->mode = rec->plan_from ? VP_MODE_AUTO : (uint32_t)rec->mode;
	if (rec->plan_from) {
		/* the sampling of phase 1, which the file holds too */
		h->sampling = vp_plan_header(&rec->plan)->sampling;
	} else if (rec->mode != MODE_PROBE) {
		h->sampling.event = rec->opts.sampling.event;
		h->sampling.freq = rec->opts.sampling.freq;
		h->sampling.period = 0;
		if (rec->opts.sampling.event != VP_SEV_CYCLES)
			h->sampling.period = 1000000000ULL / rec->opts.sampling.freq;
		h->sampling.stack_size = rec->opts.sampling.stack_size;
	}
}

static int calibrate(struct record *rec)
{
	struct vp_probe_cost *costs = xcalloc(VP_CALIBRATE_NCOSTS, sizeof(*costs));
	char a[32], b[32];
	int n = vp_calibrate(costs, rec->exits != NULL);

	if (n == -EACCES || n == -EPERM) {
		free(costs);
		return -1;
	}
	if (n < 0) {
		warning("cannot measure the probe cost: %s", strerror(-n));
		free(costs);
		return 0;
	}
	rec->hdr.costs = costs;
	rec->hdr.ncosts = (size_t)n;
	if (!rec->opts.quiet)
		info("probe cost per call: %s (emulated first instruction), %s (single-stepped)%s",
		     fmt_duration((double)costs[0].full_ns, a, sizeof(a)),
		     fmt_duration((double)costs[1].full_ns, b, sizeof(b)),
		     rec->exits ? ", exits at ret sites" : "");
	return 0;
}

/* Each probe is one file descriptor per CPU. */
static int raise_nofile(size_t need)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;
	need += 64; /* stdio, ELF files, pipes */
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur >= need)
		return 0;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need)
		rl.rlim_max = need; /* needs CAP_SYS_RESOURCE */
	rl.rlim_cur = need;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		return error("cannot raise the open file limit to %zu for %zu probe events: %s "
			     "(probe fewer functions or raise 'ulimit -n')", need, need - 64,
			     strerror(errno));
	return 0;
}

/* ---- the event stream ---- */

static void write_failed(struct record *rec, int err)
{
	if (err && !rec->write_err) {
		rec->write_err = err;
		error("cannot write '%s': %s", rec->opts.output, strerror(-err));
	}
}

static uint32_t thread_index(struct record *rec, const struct vp_raw *r)
{
	int found;
	uint32_t *idx = idmap_slot(&rec->threads, r->tid, &found);

	if (!found) {
		*idx = rec->thread_base + (uint32_t)(rec->threads.n - 1);
		write_failed(rec, vp_writer_thread(rec->w, *idx, r->tid, r->pid));
	}
	return *idx;
}

static uint32_t callsite_id(struct record *rec, uint64_t addr)
{
	int found;
	uint32_t *id = idmap_slot(&rec->callsites, addr, &found);
	struct vp_callsite cs;

	if (!found) {
		*id = (uint32_t)(rec->callsites.n - 1);
		vp_addrspace_callsite(rec->as, addr, &cs);
		pr_debug("call site %u: %#llx -> module %d %#llx %s %s:%u", *id,
			 (unsigned long long)addr, cs.module, (unsigned long long)cs.offset,
			 cs.caller, cs.file, cs.line);
		write_failed(rec, vp_writer_callsite(rec->w, *id, &cs));
		vp_callsite_release(&cs);
	}
	return *id;
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Unwind and write what was deferred, in the order it came. */
static void flush_deferred(struct record *rec)
{
	uint64_t t0 = monotonic_ns(), nsamples = 0;
	struct vp_unwind_stats a, b;

	if (!rec->ndeferred)
		return;
	vp_sample_sink_stats(rec->ss, &a);
	for (size_t i = 0; i < rec->ndeferred; i++) {
		struct vp_raw *r = &rec->deferred[i];

		if (r->type == VP_RAW_MMAP) {
			vp_sample_sink_mmap(rec->ss, (pid_t)r->pid, r->mmap->start, r->mmap->len,
					    r->mmap->pgoff, r->mmap->path);
			free(r->mmap);
		} else {
			write_failed(rec, vp_sample_sink_write(rec->ss, r, r->func));
			vp_raw_sample_free(r);
			nsamples++;
		}
	}
	rec->ndeferred = 0;
	rec->deferred_bytes = 0;
	vp_sample_sink_stats(rec->ss, &b);
	/* make bench reads this line: unwinding and naming on one core */
	pr_debug("unwound %llu samples in %.3f s: %.0f samples/s, %.1f frames each",
		 (unsigned long long)nsamples, (double)(monotonic_ns() - t0) / 1e9,
		 (double)nsamples / ((double)(monotonic_ns() - t0) / 1e9),
		 nsamples ? (double)(b.frames - a.frames) / (double)nsamples : 0.0);
}

/* Queue @r (a sample or an mapping) for flush_deferred(). */
static void defer(struct record *rec, struct vp_raw *r)
{
	/* beyond this, unwind now rather than hold more */
	const size_t max_bytes = 256 << 20;

	if (r->type == VP_RAW_SAMPLE)
		r->func = thread_index(rec, r); /* threads are numbered as they come */
	if (rec->ndeferred == rec->deferred_cap) {
		rec->deferred_cap = rec->deferred_cap ? rec->deferred_cap * 2 : 4096;
		rec->deferred = xrealloc(rec->deferred, rec->deferred_cap * sizeof(*rec->deferred));
	}
	rec->deferred[rec->ndeferred++] = *r;
	rec->deferred_bytes += sizeof(*r) + (r->type == VP_RAW_SAMPLE ? r->sample->st.len : 64);
	r->mmap = NULL;
	r->sample = NULL;
	if (rec->deferred_bytes > max_bytes)
		flush_deferred(rec);
}

static void emit(struct record *rec, struct vp_raw *r)
{
	struct vp_event ev;

	if (rec->defer && (r->type == VP_RAW_SAMPLE || r->type == VP_RAW_MMAP)) {
		defer(rec, r);
		return;
	}

	switch (r->type) {
	case VP_RAW_MMAP:
		if (r->mmap->path[0] == '/')
			vp_addrspace_mmap(rec->as, r->mmap->start, r->mmap->len, r->mmap->pgoff,
					  r->mmap->path);
		if (rec->ss)
			vp_sample_sink_mmap(rec->ss, (pid_t)r->pid, r->mmap->start, r->mmap->len,
					    r->mmap->pgoff, r->mmap->path);
		free(r->mmap);
		r->mmap = NULL;
		return;
	case VP_RAW_SAMPLE:
		write_failed(rec, vp_sample_sink_write(rec->ss, r, thread_index(rec, r)));
		vp_raw_sample_free(r);
		return;
	case VP_RAW_LOST:
		rec->lost += r->addr;
		write_failed(rec, vp_writer_lost(rec->w, r->cpu, r->addr));
		return;
	default:
		break;
	}
	memset(&ev, 0, sizeof(ev));
	ev.time = r->time;
	ev.sp = r->sp;
	ev.func = r->func;
	ev.kind = r->type == VP_RAW_ENTRY ? VP_EV_ENTRY : VP_EV_EXIT;
	ev.thread = thread_index(rec, r);
	if (ev.kind == VP_EV_ENTRY)
		ev.callsite = callsite_id(rec, r->addr);
	if (rec->mode == MODE_COMBINED && ev.kind == VP_EV_ENTRY) {
		const struct vp_func *f = &rec->hdr.funcs[r->func];

		vp_sample_sink_entry(rec->ss, (pid_t)r->pid, r->tid, r->sp, r->addr,
				     rec->hdr.modules[f->module].path, f->addr);
	} else if (rec->mode == MODE_COMBINED) {
		vp_sample_sink_exit(rec->ss, r->tid, r->sp);
	}
	pr_debug2("%s %s tid %u time %llu sp %#llx %s %#llx",
		  ev.kind == VP_EV_ENTRY ? "entry" : "exit ", rec->hdr.funcs[r->func].display,
		  r->tid, (unsigned long long)r->time, (unsigned long long)r->sp,
		  ev.kind == VP_EV_ENTRY ? "ret" : "ip", (unsigned long long)r->addr);
	write_failed(rec, vp_writer_event(rec->w, &ev));
}

static int cmp_raw(const void *a, const void *b)
{
	const struct vp_raw *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void push_pending(struct record *rec, const struct vp_raw *r)
{
	if (rec->npending == rec->cap) {
		rec->cap = rec->cap ? rec->cap * 2 : 4096;
		rec->pending = xrealloc(rec->pending, rec->cap * sizeof(*rec->pending));
	}
	rec->pending[rec->npending] = *r;
	rec->pending[rec->npending++].seq = rec->seq++;
}

static void drain_ring(struct record *rec, struct vp_ring *ring)
{
	const struct perf_event_header *h;

	vp_ring_begin(ring);
	while ((h = vp_ring_next(ring))) {
		struct vp_raw r;
		int got = 0;

		if (rec->sampler.nfds)
			got = vp_sampler_decode(&rec->sampler, h, ring->cpu, &r);
		if (!got && rec->probes.nfds)
			got = vp_probes_decode(&rec->probes, h, ring->cpu, &r);
		if (!got)
			continue;
		if (r.type != VP_RAW_LOST && r.pid != (uint32_t)rec->pid) {
			/* Other processes run the probed code too (pid = -1),
			 * and the sampling events follow children. */
			if (r.type == VP_RAW_MMAP)
				free(r.mmap);
			else if (r.type == VP_RAW_SAMPLE)
				vp_raw_sample_free(&r);
			if (r.type != VP_RAW_MMAP)
				rec->foreign++;
			continue;
		}
		push_pending(rec, &r);
		rec->nsamples += r.type == VP_RAW_SAMPLE;
		if (r.type == VP_RAW_ENTRY && rec->calls)
			rec->calls[r.func]++;
		if (r.type == VP_RAW_ENTRY && (r.flags & VP_RAW_F_EXITS_TOO)) {
			/* The probed instruction is the function's ret or
			 * tail-call jmp: it leaves as soon as it entered. */
			r.type = VP_RAW_EXIT;
			r.sp = r.sp ? r.sp + 8 : 0;
			r.addr = 0;
			push_pending(rec, &r);
		}
	}
	vp_ring_end(ring);
}

/*
 * One round: read every CPU's buffer, sort what is pending by time, and
 * write out what can no longer be preceded by a record still unread: a
 * record read in a later round was written after this round started, so
 * its time exceeds every time seen before this round (perf's "finished
 * round" rule).  @all writes everything (the target is gone).
 */
static void round_trip(struct record *rec, int all)
{
	uint64_t limit = rec->max_seen;
	size_t i;

	for (int c = 0; c < rec->nrings; c++)
		drain_ring(rec, &rec->rings[c]);
	qsort(rec->pending, rec->npending, sizeof(*rec->pending), cmp_raw);
	if (rec->npending && rec->pending[rec->npending - 1].time > rec->max_seen)
		rec->max_seen = rec->pending[rec->npending - 1].time;
	for (i = 0; i < rec->npending && (all || rec->pending[i].time <= limit); i++)
		emit(rec, &rec->pending[i]);
	memmove(rec->pending, rec->pending + i, (rec->npending - i) * sizeof(*rec->pending));
	rec->npending -= i;
}

static void on_signal(int sig)
{
	record_signal = sig;
	record_nsignals++;
}

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: poll() returns at once with EINTR. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* a closed terminal must not lose what was recorded either */
	sigaction(SIGHUP, &sa, NULL);
}

/* Forward the first SIGINT/SIGTERM; kill the target on the next one. */
static void forward_signals(struct record *rec, int *forwarded)
{
	if (record_nsignals > *forwarded) {
		kill(rec->pid, *forwarded ? SIGKILL : record_signal);
		pr_debug("sent signal %d to %d", *forwarded ? SIGKILL : (int)record_signal,
			 (int)rec->pid);
		*forwarded = (int)record_nsignals;
	}
}


/* User and system CPU time of @ru in ns. */
static uint64_t rusage_ns(const struct rusage *ru)
{
	return (uint64_t)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1000000000ULL +
	       (uint64_t)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) * 1000ULL;
}

/*
 * Records the kernel dropped when a buffer was full are announced by a
 * LOST record once there is room again - never, if the target is gone by
 * then.  The probes' own counts of hits tell: what no record stands for
 * was lost.  (Both kinds of count overlap; the larger is the one.)
 */
static void count_unseen(struct record *rec)
{
	uint64_t unseen = rec->probes.nfds ? vp_probes_unseen(&rec->probes) : 0;

	if (unseen > rec->lost) {
		pr_debug("%llu probe hits have no record; LOST records said %llu",
			 (unsigned long long)unseen, (unsigned long long)rec->lost);
		rec->lost = unseen;
	}
}

/* Stop every event: nothing new arrives after the final round. */
static void disable_events(struct record *rec)
{
	if (rec->sampler.nfds)
		vp_sampler_disable(&rec->sampler);
	for (size_t i = 0; i < rec->probes.nfds; i++)
		ioctl(rec->probes.fds[i], PERF_EVENT_IOC_DISABLE, 0);
}

static double func_cost(const struct record *rec, uint32_t f)
{
	return vp_probe_class_cost(rec->hdr.funcs[f].insn_class, rec->hdr.costs, rec->hdr.ncosts);
}

/*
 * CPU time of process @pid in ns, that of its exited threads included (the
 * probes' time is charged to it too), or 0 when it cannot be read.
 */
static uint64_t target_cpu_ns(pid_t pid)
{
	struct timespec ts;
	clockid_t clk;

	if (clock_getcpuclockid(pid, &clk) || clock_gettime(clk, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The target's CPU time since the recording began, as far as known. */
static void update_cpu(struct record *rec)
{
	uint64_t cpu = target_cpu_ns(rec->pid);

	if (cpu > rec->start_cpu && cpu - rec->start_cpu > rec->cpu)
		rec->cpu = cpu - rec->start_cpu;
}

/*
 * Auto mode, phase 2: the plan estimated call counts from samples, which
 * cannot count calls shorter than the sampling period.  So measure: when
 * what the functions still probed have cost so far exceeds the budget's
 * share of the target's CPU time, stop probing the most expensive until
 * the rest fits.  Their calls until then stay in the file, marked as
 * partial; what they cost is spent and no longer counts against the rest.
 */
static void watchdog(struct record *rec)
{
	uint64_t now = monotonic_ns();
	double total = 0, budget, *cost;
	char a[32];

	/* Every 40 ms, from 150 ms on: the first calls of a process cost
	 * more, and a rate needs a few rounds to settle. */
	if (now - (rec->watched_ns ? rec->watched_ns : rec->start_ns) < 40000000 ||
	    now - rec->start_ns < 150000000)
		return;
	rec->watched_ns = now;
	update_cpu(rec);
	/* the wall time when the CPU time cannot be read */
	budget = rec->opts.overhead * (double)(rec->cpu ? rec->cpu : now - rec->start_ns);
	cost = xcalloc(rec->hdr.nfuncs, sizeof(*cost));
	for (uint32_t f = 0; f < rec->hdr.nfuncs; f++) {
		if (rec->dropped[f])
			continue;
		cost[f] = (double)rec->calls[f] * func_cost(rec, f);
		total += cost[f];
	}
	pr_debug("watchdog: %.0f ms, CPU %.1f ms, probes still in place cost %.1f ms, budget "
		 "%.1f ms", (double)(now - rec->start_ns) / 1e6, (double)rec->cpu / 1e6,
		 total / 1e6, budget / 1e6);
	/* The kernel takes a while to remove each: drop all that must go. */
	while (total > budget) {
		long wf = -1;

		for (uint32_t f = 0; f < rec->hdr.nfuncs; f++)
			if (!rec->dropped[f] && cost[f] > 0 && (wf < 0 || cost[f] > cost[wf]))
				wf = f;
		if (wf < 0)
			break;
		vp_probes_drop(&rec->probes, (uint32_t)wf);
		rec->dropped[wf] = 1;
		write_failed(rec, vp_writer_unprobed(rec->w, (uint32_t)wf, now));
		warning("phase 2: stopped probing '%s' after %llu calls in %s: its probes took "
			"%.1f%% of the target's CPU time, the %g%% budget allows %.1f%% for all "
			"(calls shorter than the sampling period cannot be counted from samples)",
			rec->hdr.funcs[wf].display, (unsigned long long)rec->calls[wf],
			fmt_duration((double)(now - rec->start_ns), a, sizeof(a)),
			cost[wf] / budget * rec->opts.overhead * 100, rec->opts.overhead * 100,
			(budget - (total - cost[wf])) / budget * rec->opts.overhead * 100);
		total -= cost[wf];
		cost[wf] = 0;
	}
	free(cost);
}

/* Auto mode, phase 2: what the probes cost in all, measured. */
static void print_measured_cost(const struct record *rec)
{
	double total = 0;

	if (!rec->calls || rec->opts.quiet || !rec->cpu)
		return;
	for (uint32_t f = 0; f < rec->hdr.nfuncs; f++)
		total += (double)rec->calls[f] * func_cost(rec, f);
	info("phase 2: the probes cost about %.1f%% of the target's CPU time (%g%% budget)",
	     total / (double)rec->cpu * 100, rec->opts.overhead * 100);
}

/* Attached: whether to stop now (signal, --duration, the process exited). */
static int attach_done(struct record *rec, const struct pollfd *pidfd, uint64_t deadline,
		       int *flags)
{
	uint64_t now = monotonic_ns();

	if (record_nsignals) {
		*flags |= VP_END_INTERRUPTED;
		return 1;
	}
	/* auto, phase 1: an idle process has shown nothing to plan from yet */
	if (deadline && now >= deadline && rec->nsamples < rec->min_samples &&
	    (!rec->until_ns || now < rec->until_ns)) {
		if (!rec->waiting_said && (!rec->opts.quiet || rec->announce))
			info("phase 1: %llu samples so far: sampling until there are %llu",
			     (unsigned long long)rec->nsamples,
			     (unsigned long long)rec->min_samples);
		rec->waiting_said = 1;
	} else if (deadline && now >= deadline) {
		return 1;
	}
	if ((pidfd->fd >= 0 && (pidfd->revents & POLLIN)) ||
	    (kill(rec->pid, 0) < 0 && errno == ESRCH)) {
		rec->gone = 1;
		return 1;
	}
	return 0;
}

/*
 * Read the buffers until the end: the target's exit, or attached, a
 * signal to varperf, --duration or the process's exit.  Returns END flags.
 */
static int wait_and_read(struct record *rec, int *status)
{
	size_t n = (size_t)rec->nrings + 1;
	struct pollfd *pfd = xcalloc(n, sizeof(*pfd));
	uint64_t deadline = 0;
	int forwarded = 0, flags = 0, timed_out = 0;
	struct rusage ru;
	pid_t r;

	if (rec->opts.duration > 0)
		deadline = rec->start_ns + (uint64_t)(rec->opts.duration * 1e9);
	for (int c = 0; c < rec->nrings; c++) {
		pfd[c].fd = rec->rings[c].fd;
		pfd[c].events = POLLIN;
	}
	pfd[n - 1].fd = rec->pidfd > 0 ? rec->pidfd : -1;
	pfd[n - 1].events = POLLIN;
	for (;;) {
		/* A hung-up buffer (its task gone) would make poll() spin. */
		for (int c = 0; c < rec->nrings; c++)
			if (pfd[c].revents & (POLLHUP | POLLERR))
				pfd[c].fd = -1;
		if (poll(pfd, (nfds_t)n, POLL_MS) < 0 && errno != EINTR)
			warning("poll failed: %s", strerror(errno));
		if (rec->opts.attach) {
			if (attach_done(rec, &pfd[n - 1], deadline, &flags))
				break;
		} else {
			forward_signals(rec, &forwarded);
			if (deadline && !timed_out && monotonic_ns() >= deadline) {
				/* --duration with a program: as if Ctrl-C */
				kill(rec->pid, SIGINT);
				timed_out = 1;
			} else if (timed_out == 1 && monotonic_ns() >= deadline + GRACE_NS) {
				warning("'%s' did not stop within %d s of SIGINT: killing it",
					rec->prog, (int)(GRACE_NS / 1000000000));
				kill(rec->pid, SIGKILL);
				timed_out = 2;
			}
			r = wait4(rec->pid, status, WNOHANG, &ru);
			if (r == rec->pid || (r < 0 && errno == ECHILD)) {
				if (r == rec->pid)
					rec->cpu = rusage_ns(&ru);
				break;
			}
		}
		round_trip(rec, 0);
		if (rec->calls)
			watchdog(rec);
		if (rec->hdr.ncosts)
			vp_calibrate_track();
	}
	/* (the probes also fire for other processes that run the code) */
	disable_events(rec);
	if (rec->opts.attach)
		update_cpu(rec);
	/* The target is gone or no longer followed: every record is in. */
	if (!rec->opts.attach || rec->gone)
		vp_addrspace_target_gone(rec->as);
	round_trip(rec, 1);
	flush_deferred(rec);
	count_unseen(rec);
	free(pfd);
	if (forwarded || timed_out)
		flags |= VP_END_INTERRUPTED;
	return flags;
}

static int exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

static void print_sampling_summary(struct record *rec, const struct vp_trailer *tr,
				   long long bytes)
{
	const struct vp_sampling *sm = &rec->hdr.sampling;
	struct vp_unwind_stats us = { 0 };
	uint64_t n = tr->samples;
	char a[32];

	if (rec->ss)
		vp_sample_sink_stats(rec->ss, &us);
	info("recorded %llu samples of %s every %s in '%s' (%lld bytes), %zu thread%s",
	     (unsigned long long)n, vp_sample_event_name(sm->event),
	     sm->period ? fmt_duration((double)sm->period, a, sizeof(a)) : "(frequency mode)",
	     rec->opts.output, bytes, rec->threads.n, rec->threads.n == 1 ? "" : "s");
	if (tr->truncated && rec->opts.sampling.stack_size < VP_STACK_SIZE_MAX)
		warning("%llu of %llu samples (%.1f%%) have truncated stacks: the %u-byte stack "
			"copy ended before their outermost frame (try --stack-size %u)",
			(unsigned long long)tr->truncated, (unsigned long long)n,
			100.0 * (double)tr->truncated / (double)n,
			(unsigned)rec->opts.sampling.stack_size,
			rec->opts.sampling.stack_size * 4 > VP_STACK_SIZE_MAX
				? VP_STACK_SIZE_MAX
				: rec->opts.sampling.stack_size * 4);
	else if (tr->truncated)
		warning("%llu of %llu samples (%.1f%%) have truncated stacks: the %u-byte copy, "
			"the largest the kernel takes, ended before their outermost frame",
			(unsigned long long)tr->truncated, (unsigned long long)n,
			100.0 * (double)tr->truncated / (double)n,
			(unsigned)rec->opts.sampling.stack_size);
	if (tr->broken && us.no_cfi_module[0])
		warning("%llu of %llu samples (%.1f%%) could not be unwound past code of '%s', "
			"which has no .eh_frame or .debug_frame (rebuild it with "
			"-fasynchronous-unwind-tables, or keep frame pointers)",
			(unsigned long long)tr->broken, (unsigned long long)n,
			100.0 * (double)tr->broken / (double)n, us.no_cfi_module);
	else if (tr->broken)
		warning("%llu of %llu samples (%.1f%%) could not be unwound to their outermost "
			"frame", (unsigned long long)tr->broken, (unsigned long long)n,
			100.0 * (double)tr->broken / (double)n);
	if (rec->sampler.exclude_kernel)
		info("user mode only: time in the kernel is not sampled (it needs root or "
		     "kernel.perf_event_paranoid <= 1)");
	if (rec->opts.precision_given && n) {
		double z = vp_confidence_z(rec->opts.confidence);
		double half = z * sqrt(0.25 / (double)n);

		if (half > rec->opts.precision)
			warning("%llu samples give shares to +/-%.2f%% at %g%% confidence, not the "
				"+/-%g%% asked: %llu are needed", (unsigned long long)n,
				half * 100, rec->opts.confidence * 100, rec->opts.precision * 100,
				(unsigned long long)vp_samples_needed(0.5, rec->opts.precision, z));
		else
			info("%llu samples: every share is within +/-%.2f%% at %g%% confidence",
			     (unsigned long long)n, half * 100, rec->opts.confidence * 100);
	}
}

static void print_detach(const struct record *rec)
{
	double secs = (double)(monotonic_ns() - rec->start_ns) / 1e9;

	if (rec->opts.quiet)
		return;
	if (rec->gone)
		info("process %d exited after %.1f s of recording", (int)rec->pid, secs);
	else
		info("detached from process %d after %.1f s; it keeps running", (int)rec->pid,
		     secs);
}

static void print_summary(struct record *rec, const struct vp_trailer *tr)
{
	struct stat st;
	long long bytes = stat(rec->opts.output, &st) == 0 ? (long long)st.st_size : -1;

	if (rec->write_err) {
		error("'%s' is incomplete: only %lld bytes were written", rec->opts.output, bytes);
		return;
	}
	if (rec->opts.quiet)
		return;
	if (rec->mode != MODE_SAMPLE)
		info("recorded %llu events in '%s' (%lld bytes, %.1f bytes/event), %llu lost, %zu "
		     "thread%s",
		     (unsigned long long)tr->events, rec->opts.output, bytes,
		     tr->events ? (double)bytes / (double)tr->events : 0.0,
		     (unsigned long long)rec->lost, rec->threads.n, rec->threads.n == 1 ? "" : "s");
	if (rec->mode != MODE_PROBE)
		print_sampling_summary(rec, tr, bytes);
	if (rec->lost)
		warning("%llu records were lost: the ring buffers overflowed (try a larger "
			"--buffer-size)", (unsigned long long)rec->lost);
	if (rec->foreign)
		info("%llu events from other processes were not recorded (children are not "
		     "followed)", (unsigned long long)rec->foreign);
}

/* Run the target under the probes and write the file; returns the exit code. */
static int run(struct record *rec)
{
	struct vp_trailer tr;
	int status = 0, err, code;

	if (!rec->opts.attach) {
		/* interrupted while getting ready: the program never runs */
		err = record_nsignals ? -EINTR : vp_launch_release(&rec->launch);
		if (err) {
			if (err == -EINTR)
				vp_launch_abort(&rec->launch);
			else
				error("cannot run '%s': %s", rec->prog, strerror(-err));
			vp_writer_free(rec->w);
			rec->w = NULL;
			unlink(rec->opts.output);
			return err == -EINTR ? 128 + (int)record_signal : 1;
		}
	}
	rec->start_ns = monotonic_ns();
	/* attached, the process has a past; launched, it has just exec'd */
	rec->start_cpu = rec->opts.attach ? target_cpu_ns(rec->pid) : 0;
	memset(&tr, 0, sizeof(tr));
	tr.flags = wait_and_read(rec, &status);
	if (!rec->opts.attach) {
		tr.flags |= VP_END_EXITED;
		tr.wait_status = (uint64_t)status;
	} else {
		tr.flags |= rec->gone ? VP_END_GONE : VP_END_DETACHED;
	}
	tr.lost = rec->lost;
	tr.foreign = rec->foreign;
	if (rec->hdr.ncosts)
		tr.ncosts = (uint32_t)vp_calibrate_tracked(tr.costs);
	tr.end_time = monotonic_ns();
	if (rec->write_err)
		tr.flags |= VP_END_WRITE_ERROR;
	err = vp_writer_finish(rec->w, &tr);
	rec->w = NULL;
	write_failed(rec, err);
	rec->finished = !err;
	print_summary(rec, &tr);
	print_measured_cost(rec);
	if (rec->opts.attach) {
		print_detach(rec);
		return rec->write_err ? 1 : 0;
	}
	code = exit_code(status);
	return rec->write_err ? 1 : code;
}

static void record_release(struct record *rec)
{
	/* The sampling events first: the probes' clean-up child must not
	 * inherit them (they would sample on until it is done). */
	if (rec->sampler.nfds)
		vp_sampler_close(&rec->sampler);
	/* The kernel removes one uprobe event in 60-80 ms (RCU grace periods
	 * under a global mutex, measured on 6.18): a detached child waits
	 * for that, not the user.  Not for the return probes of a program
	 * that can throw: until removed they would still end it (or another
	 * run of it) at the first exception through a probed function. */
	if (rec->probes.nfds)
		vp_probes_close_detached(&rec->probes,
					 rec->can_throw ? VP_CLOSE_RETURNS_NOW : 0);
	vp_calibrate_done();
	for (size_t i = 0; i < rec->hdr.nmodules; i++)
		vp_symfile_free(rec->symfiles ? rec->symfiles[i] : NULL);
	free(rec->symfiles);
	vp_addrspace_free(rec->as);
	for (size_t i = 0; rec->exits && i < rec->hdr.nfuncs; i++)
		vp_exits_release(&rec->exits[i]);
	free(rec->exits);
	for (size_t i = 0; i < rec->npending; i++) {
		if (rec->pending[i].type == VP_RAW_MMAP)
			free(rec->pending[i].mmap);
		if (rec->pending[i].type == VP_RAW_SAMPLE)
			vp_raw_sample_free(&rec->pending[i]);
	}
	free(rec->pending);
	for (size_t i = 0; i < rec->ndeferred; i++) {
		if (rec->deferred[i].type == VP_RAW_MMAP)
			free(rec->deferred[i].mmap);
		else
			vp_raw_sample_free(&rec->deferred[i]);
	}
	free(rec->deferred);
	vp_sample_sink_free(rec->ss);
	vp_plan_release(&rec->plan);
	free(rec->calls);
	free(rec->dropped);
	if (rec->pidfd > 0)
		close(rec->pidfd);
	idmap_release(&rec->threads);
	idmap_release(&rec->callsites);
	vp_header_release(&rec->hdr);
	free(rec->path);
	free(rec->unprobeable);
}

static void count_emulated(const struct record *rec, size_t *ret, size_t *moved)
{
	*ret = *moved = 0;
	for (size_t i = 0; i < rec->hdr.nfuncs; i++) {
		if (rec->hdr.funcs[i].insn_class == VP_INSN_EMULATED)
			(*ret)++;
		if (rec->hdr.funcs[i].flags & VP_FUNC_MOVED)
			(*moved)++;
	}
}

/* What the "probing N functions" line says about exits. */
static void print_probing(const struct record *rec)
{
	size_t emulated, moved, rets = 0, jmps = 0, ret_probes = 0, none = 0, at_entry = 0;
	size_t unseen = 0;
	const char *what;
	char past[64] = "";

	count_emulated(rec, &emulated, &moved);
	if (moved)
		snprintf(past, sizeof(past), ", %zu of them past the first instruction", moved);
	if (!rec->exits) {
		info("probing %zu functions in '%s' (%zu on emulated instructions%s)",
		     rec->hdr.nfuncs, rec->path, emulated, past);
		return;
	}
	for (size_t i = 0; i < rec->hdr.nfuncs; i++) {
		const struct vp_exits *ex = &rec->exits[i];

		switch (ex->how) {
		case VP_EXITS_SITES:
			rets += ex->n - ex->tail;
			jmps += ex->tail;
			unseen += ex->indirect || ex->cond_tail || ex->unknown;
			break;
		case VP_EXITS_NONE:
			none++;
			break;
		case VP_EXITS_AT_ENTRY:
			at_entry++;
			break;
		default:
			ret_probes++;
			break;
		}
	}
	what = rec->opts.exit_mode == EXIT_AUTO ? ": the program can throw C++ exceptions" : "";
	info("probing %zu functions in '%s' (%zu on emulated instructions%s; exits at %zu "
	     "ret and %zu tail-call jmp instructions%s)", rec->hdr.nfuncs, rec->path, emulated,
	     past, rets, jmps, what);
	if (ret_probes)
		info("%zu function%s with a return probe instead: code not decodable, or no "
		     "way out that can be probed", ret_probes, ret_probes == 1 ? "" : "s");
	if (none)
		info("%zu function%s without an exit instruction (never return%s): no exit probe",
		     none, none == 1 ? "" : "s", none == 1 ? "s" : "");
	if (at_entry)
		pr_debug("%zu functions leave by their first instruction: entry and exit in "
			 "one probe", at_entry);
	if (unseen)
		info("%zu function%s may also leave by jumps that are not probed (indirect, "
		     "conditional, or to unnamed code): such calls count as unpaired", unseen,
		     unseen == 1 ? "" : "s");
}

/*
 * Fail before the costly part when the data file cannot be created.  The
 * file itself is only created (truncated) once everything else worked.
 */
static int check_output(const char *path)
{
	struct stat st;
	char *dir, *slash;
	int ok;

	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return error("cannot create '%s': %s", path, strerror(EISDIR));
		if (access(path, W_OK) < 0)
			return error("cannot create '%s': %s", path, strerror(errno));
		return 0;
	}
	dir = xstrdup(path);
	slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir] = '\0';
	ok = access(slash ? dir : ".", W_OK | X_OK) == 0;
	free(dir);
	if (!ok)
		return error("cannot create '%s': %s", path, strerror(errno));
	return 0;
}

/* -p: the program of the running process, and whether we may record it. */
static int attach_program(struct record *rec)
{
	pid_t pid = rec->opts.attach;
	int err = vp_attach_check(pid, &rec->path);

	switch (err) {
	case 0:
		rec->prog = rec->path;
		return 0;
	case -ESRCH:
		return error("cannot attach to process %d: no such process", (int)pid);
	case -EPERM:
		return error("cannot attach to process %d: not ours (another user's process; "
			     "run varperf as that user or as root)", (int)pid);
	case -ENOEXEC:
		return error("cannot attach to process %d: a kernel thread (no program to "
			     "record)", (int)pid);
	case -EINVAL:
		return error("cannot attach to process %d: that is varperf itself", (int)pid);
	case -ECHILD:
		return error("cannot attach to process %d: it has exited (a zombie, waiting for "
			     "its parent)", (int)pid);
	default:
		return error("cannot attach to process %d: %s", (int)pid, strerror(-err));
	}
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* Whether phase 1 ran the same program with the same arguments. */
static int same_command(const struct vp_header *h, int argc, char **argv)
{
	if (h->argc != argc || !argc)
		return 0;
	if (strcmp(base_name(h->argv[0]), base_name(argv[0])))
		return 0;
	for (int i = 1; i < argc; i++)
		if (strcmp(h->argv[i], argv[i]))
			return 0;
	return 1;
}

/*
 * Auto mode, phase 2: keep the functions the plan chose (and their exit
 * plans), in their order.
 */
static int select_planned(struct record *rec)
{
	const struct vp_header *h1;
	size_t j = 0;

	if (vp_plan_build(&rec->plan, rec->plan_from, rec->hdr.funcs, rec->hdr.nfuncs,
			  rec->hdr.modules, rec->hdr.costs, rec->hdr.ncosts, rec->opts.cutoff,
			  rec->opts.overhead) < 0)
		return -1;
	h1 = vp_plan_header(&rec->plan);
	/* (attached, both phases are of the one process) */
	if (!rec->opts.attach && !same_command(h1, rec->argc, rec->argv))
		warning("the sampling run was of '%s' with %d argument%s, this run is of '%s' "
			"with %d: both runs must do the same work",
			h1->argc ? h1->argv[0] : "?", h1->argc - 1, h1->argc == 2 ? "" : "s",
			rec->prog, rec->argc - 1);
	if (!rec->opts.quiet)
		vp_plan_print(&rec->plan, rec->hdr.funcs, rec->opts.cutoff, rec->opts.overhead,
			      verbose > 0);
	for (size_t i = 0; i < rec->hdr.nfuncs; i++) {
		if (rec->plan.funcs[i].why == VP_PLAN_PROBED) {
			rec->hdr.funcs[j] = rec->hdr.funcs[i];
			if (rec->exits)
				rec->exits[j] = rec->exits[i];
			j++;
		} else {
			free(rec->hdr.funcs[i].name);
			free(rec->hdr.funcs[i].display);
			free(rec->hdr.funcs[i].base);
			if (rec->exits)
				vp_exits_release(&rec->exits[i]);
		}
	}
	rec->hdr.nfuncs = j;
	if (!j)
		return error("no function to probe: the sampling run found none significant "
			     "within the budget (try --mode=sample, or a larger --overhead)");
	return 0;
}

/*
 * What needs no target yet: the program, its functions and the probes'
 * prerequisites, so that auto mode fails before its first run, not after
 * it.  Returns 0, -1 (done: --list) or an exit code.
 */
static int prepare_static(struct record *rec)
{
	int probing = rec->mode != MODE_SAMPLE;
	int type, retbit, err;

	if (rec->opts.attach) {
		if (attach_program(rec) < 0)
			return 1;
	} else {
		err = vp_resolve_program(rec->prog, &rec->path);
		if (err)
			return error("cannot run '%s': %s", rec->prog, strerror(-err)), 1;
	}
	if (load_modules(rec) < 0)
		return 1;
	if (probing && (load_functions(rec) < 0 || plan_exits(rec) < 0))
		return 1;
	if (rec->opts.list && !rec->plan_from) {
		list_functions(rec);
		return -1;
	}
	if (check_output(rec->opts.output) < 0)
		return 1;
	if (rec->mode != MODE_PROBE &&
	    vp_sampling_resolve(&rec->opts.sampling, rec->opts.quiet || rec->plan_from) < 0)
		return 1;
	if (!probing)
		return 0;
	err = vp_uprobe_pmu(&type, &retbit);
	if (err == -ENOENT) {
		rec->unprobeable = xstrdup("the uprobe PMU is not available (no "
					   "/sys/bus/event_source/devices/uprobe)");
		if (!rec->can_sample_only)
			error("%s", rec->unprobeable);
		return 1;
	}
	return 0;
}

/*
 * Right before the target runs: the probes' cost and, in auto mode, what
 * phase 1 found worth probing.  Returns 0, -1 (done: --list) or an exit
 * code.
 */
static int prepare_probes(struct record *rec)
{
	if (rec->mode == MODE_SAMPLE)
		return 0;
	if (vp_probes_remove_stale() > 0)
		warning("removed stale 'varperf' uprobes from tracefs");
	if (!rec->opts.no_calibrate && calibrate(rec) < 0)
		return 1;
	if (rec->plan_from && select_planned(rec) < 0)
		return 1;
	if (rec->opts.list) {
		list_functions(rec);
		return -1;
	}
	if (!rec->opts.quiet)
		print_probing(rec);
	return 0;
}

/* The header's command line: ours for a program, /proc's for -p. */
static void header_cmdline(struct record *rec, int argc, char **argv)
{
	char **pargv;
	int pargc;

	if (!rec->opts.attach) {
		fill_header(rec, argc, argv);
		return;
	}
	pargc = vp_proc_cmdline(rec->pid, &pargv);
	if (pargc <= 0) {
		char *one[] = { rec->path, NULL };

		fill_header(rec, 1, one);
		return;
	}
	fill_header(rec, pargc, pargv);
	for (int i = 0; i < pargc; i++)
		free(pargv[i]);
	free(pargv);
}

/* Open the sampling events (and the writer's sample side). */
static int start_sampling(struct record *rec)
{
	pid_t *tids = NULL;
	int ntids = 0, err;

	rec->ss = vp_sample_sink_new(rec->w, rec->hdr.modules, rec->hdr.nmodules);
	if (!rec->ss)
		return error("cannot set up unwinding: %s", strerror(errno));
	if (rec->opts.attach) {
		/* Every thread that runs now; later ones inherit. */
		ntids = vp_task_list(rec->pid, &tids);
		if (ntids == -ESRCH)
			return error("cannot attach to process %d: it exited before varperf was "
				     "ready", (int)rec->pid);
		if (ntids < 0)
			return error("cannot list the threads of process %d: %s", (int)rec->pid,
				     strerror(-ntids));
		vp_sample_sink_read_maps(rec->ss, rec->pid);
	}
	/* one event per thread and CPU (twice the threads: new ones come) */
	if (raise_nofile(rec->probes.nfds + (size_t)(ntids > 0 ? 2 * ntids : 1) *
						 (rec->hdr.ncpu ? rec->hdr.ncpu : 1)) < 0) {
		free(tids);
		return -1;
	}
	err = vp_sampler_open(&rec->sampler, &rec->opts.sampling, rec->pid, tids, (size_t)ntids,
			      rec->mode == MODE_COMBINED ? rec->probes.rings : NULL,
			      rec->opts.attach ? 0 : VP_SAMPLER_ON_EXEC);
	free(tids);
	if (err < 0)
		return -1;
	if (rec->mode == MODE_SAMPLE) {
		rec->rings = rec->sampler.rings;
		rec->nrings = rec->sampler.ncpus;
		/* Attached, the mappings of now are known now; later ones come
		 * as records, in order with the samples. */
		rec->defer = 1;
		/*
		 * All varperf does while the target runs is empty the buffers:
		 * give way to the target when CPUs are short (the target was
		 * forked before this, and keeps its priority).
		 */
		if (!rec->opts.attach)
			setpriority(PRIO_PROCESS, 0, 5);
	}
	return 0;
}

/* Fork the target (or attach), create the file, open the events; 0 or an
 * exit code. */
static int start(struct record *rec, int argc, char **argv)
{
	size_t need;
	int err;

	if (rec->opts.attach) {
		rec->pid = rec->opts.attach;
	} else {
		err = vp_launch_fork(&rec->launch, rec->path, argv);
		if (err)
			return error("cannot fork: %s", strerror(-err)), 1;
		rec->pid = rec->launch.pid;
	}
	header_cmdline(rec, argc, argv);
	rec->w = vp_writer_new(rec->opts.output, &rec->hdr);
	if (!rec->w) {
		error("cannot create '%s': %s", rec->opts.output, strerror(errno));
		goto out_abort;
	}
	if (rec->plan_from) {
		err = vp_plan_copy(&rec->plan, rec->w, &rec->hdr, &rec->thread_base);
		if (!err)
			err = vp_writer_phase(rec->w, 2, (uint32_t)rec->pid);
		if (err) {
			error("cannot write '%s': %s", rec->opts.output, strerror(-err));
			goto out_unlink;
		}
	}
	rec->as = vp_addrspace_new(rec->pid, rec->hdr.modules, rec->hdr.nmodules);
	if (rec->mode != MODE_SAMPLE) {
		need = vp_probes_fds_needed(rec->exits, rec->hdr.nfuncs,
					    (int)(rec->hdr.ncpu ? rec->hdr.ncpu : 1));
		if (raise_nofile(need) < 0 ||
		    vp_probes_open(&rec->probes, rec->hdr.funcs, rec->hdr.nfuncs, rec->exits,
				   rec->hdr.modules, rec->pid, (size_t)rec->opts.buf_size, 0) < 0)
			goto out_unlink;
		rec->rings = rec->probes.rings;
		rec->nrings = rec->probes.ncpus;
		if (rec->plan_from) {
			rec->calls = xcalloc(rec->hdr.nfuncs, sizeof(*rec->calls));
			rec->dropped = xcalloc(rec->hdr.nfuncs, 1);
		}
	}
	if (rec->mode != MODE_PROBE) {
		rec->opts.sampling.buf_size = (size_t)rec->opts.buf_size;
		if (start_sampling(rec) < 0)
			goto out_unlink;
	}
	if (rec->opts.attach) {
		rec->pidfd = vp_pidfd_open(rec->pid);
		if (!rec->opts.quiet || rec->announce)
			info("attached to process %d (%s)%s", (int)rec->pid, rec->path,
			     rec->opts.duration > 0 ? "" : ": Ctrl-C to stop");
	}
	return 0;
out_unlink:
	vp_writer_free(rec->w);
	rec->w = NULL;
	unlink(rec->opts.output);
out_abort:
	if (!rec->opts.attach)
		vp_launch_abort(&rec->launch);
	return 1;
}

/*
 * Start the target (or attach), record, write the file; returns the exit
 * code.  Signals from now on mean "stop the target and finish the file".
 */
static int record_run(struct record *rec, int argc, char **argv)
{
	int code;

	install_signals();
	code = start(rec, argc, argv);
	if (!code)
		code = run(rec);
	return code;
}

/* One recording (a whole run in probe, sample or combined mode, or one
 * phase of auto mode); returns the exit code. */
static int record_one(struct record *rec, int argc, char **argv)
{
	int code;

	rec->argc = argc;
	rec->argv = argv;
	code = prepare_static(rec);
	if (!code)
		code = prepare_probes(rec);
	if (code)
		return code < 0 ? 0 : code;
	return record_run(rec, argc, argv);
}

/* --precision and --confidence: how many samples, and how long a run. */
static void print_requirement(const struct record_opts *o)
{
	double z = vp_confidence_z(o->confidence);
	uint64_t worst = vp_samples_needed(0.5, o->precision, z);
	uint64_t one = vp_samples_needed(0.01, o->precision, z);
	uint64_t ten = vp_samples_needed(0.10, o->precision, z);
	char a[32];

	printf("to know a share to +/-%g%% with %g%% confidence (Z = %.3f, N = Z^2 p q / e^2):\n",
	       o->precision * 100, o->confidence * 100, z);
	printf("  any share (p = 50%%): %llu samples, %s of CPU time at %llu Hz\n",
	       (unsigned long long)worst,
	       fmt_duration((double)worst / (double)o->sampling.freq * 1e9, a, sizeof(a)),
	       (unsigned long long)o->sampling.freq);
	printf("  a 10%% share:         %llu samples, %s\n", (unsigned long long)ten,
	       fmt_duration((double)ten / (double)o->sampling.freq * 1e9, a, sizeof(a)));
	printf("  a 1%% share:          %llu samples, %s\n", (unsigned long long)one,
	       fmt_duration((double)one / (double)o->sampling.freq * 1e9, a, sizeof(a)));
	fflush(stdout);
}

/* Whether @a and @b name the same existing file. */
static int same_file(const char *a, const char *b)
{
	struct stat x, y;

	return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev &&
	       x.st_ino == y.st_ino;
}

/* A new file next to @output for phase 1 (malloc'ed name), or NULL. */
static char *phase1_file(const char *output)
{
	char *tmp = xasprintf("%s.phase1.XXXXXX", output);
	int fd = mkstemp(tmp);

	if (fd < 0) {
		error("cannot create '%s': %s", tmp, strerror(errno));
		free(tmp);
		return NULL;
	}
	close(fd);
	return tmp;
}

/* Keep phase 1, in @tmp, as the result: say why there is no phase 2. */
static int keep_phase1(const struct record_opts *o, char *tmp, const char *why)
{
	if (rename(tmp, o->output) < 0) {
		error("cannot rename '%s' to '%s': %s", tmp, o->output, strerror(errno));
		return 1;
	}
	warning("%s: '%s' holds the sampling run (phase 1) only", why, o->output);
	return 0;
}

/*
 * How long auto mode samples an attached process before probing: 2 s, or
 * a quarter of --duration when that is shorter.
 */
static double phase1_seconds(const struct record_opts *o)
{
	if (o->phase1_duration > 0)
		return o->phase1_duration;
	return o->duration > 0 && o->duration / 4 < 2 ? o->duration / 4 : 2;
}

/*
 * Auto mode (seed 000 Section 2.2): sample a first run, then run again
 * probing only what the samples found significant within the budget; or,
 * attached to a running process, sample it for a while, then probe it.
 * Both phases go into the one output file.  Whatever stops phase 2 from
 * happening, phase 1 is kept.
 */
static int record_auto(const struct record_opts *o, const char *prog, int argc, char **argv)
{
	struct record r1, r2;
	char *tmp = NULL;
	uint64_t t0 = monotonic_ns();
	int code, p1code = 0;

	memset(&r1, 0, sizeof(r1));
	memset(&r2, 0, sizeof(r2));
	r2.opts = *o;
	r2.mode = MODE_PROBE;
	r2.prog = prog;
	r2.argc = argc;
	r2.argv = argv;
	if (o->phase1 && same_file(o->phase1, o->output)) {
		error("--phase1 '%s' is also the output: give another -o", o->phase1);
		return USAGE_ERROR;
	}
	r2.plan_from = o->phase1;
	/* Nothing to probe (a stripped program, no uprobe PMU) without a
	 * -f asking for something: auto mode samples.  Anything else that
	 * would stop phase 2 stops us before phase 1. */
	r2.can_sample_only = !o->funcs.n && !o->phase1;
	code = prepare_static(&r2);
	if (code && r2.unprobeable && r2.can_sample_only) {
		warning("%s: sampling only", r2.unprobeable);
		record_release(&r2);
		memset(&r2, 0, sizeof(r2));
		r2.opts = *o;
		r2.mode = MODE_SAMPLE;
		r2.prog = prog;
		code = record_one(&r2, argc, argv);
		goto out;
	}
	if (code)
		goto out;
	if (!o->phase1) {
		tmp = phase1_file(o->output);
		code = 1;
		if (!tmp)
			goto out;
		r1.opts = *o;
		r1.opts.output = tmp;
		r1.opts.quiet = 1;
		r1.mode = MODE_SAMPLE;
		r1.prog = prog;
		if (o->attach) {
			r1.opts.duration = phase1_seconds(o);
			r1.min_samples = PHASE1_MIN_SAMPLES;
			r1.until_ns = o->duration > 0 ? t0 + (uint64_t)(o->duration * 1e9) : 0;
			r1.announce = !o->quiet;
			if (!o->quiet)
				info("phase 1 of 2: sampling process %d (%s) for %.1f s",
				     (int)o->attach, r2.path, r1.opts.duration);
		} else if (!o->quiet) {
			info("phase 1 of 2: sampling '%s'", prog);
		}
		p1code = record_one(&r1, argc, argv);
		if (!r1.finished) {
			code = p1code ? p1code : 1;
			goto out;
		}
		if (record_nsignals) {
			code = keep_phase1(o, tmp, "interrupted in phase 1");
			if (!code && !o->attach)
				code = p1code ? p1code : 130;
			goto out;
		}
		if (r1.gone) {
			code = keep_phase1(o, tmp, "the process exited in phase 1");
			goto out;
		}
		if (p1code && !o->attach)
			warning("phase 1: '%s' exited with status %d; phase 2 must do the same "
				"work", prog, p1code);
		r2.plan_from = tmp;
		/* its sampling events and buffers are of no more use */
		record_release(&r1);
		memset(&r1, 0, sizeof(r1));
	}
	if (o->attach && o->duration > 0 &&
	    (double)(monotonic_ns() - t0) / 1e9 >= o->duration) {
		code = keep_phase1(o, tmp, "--duration ended in phase 1");
		goto out;
	}
	if (o->attach && !o->quiet)
		info("phase 2 of 2: probing process %d (%s)", (int)o->attach, r2.path);
	else if (!o->quiet && !o->list)
		info("phase 2 of 2: probing '%s'", prog);
	code = prepare_probes(&r2);
	if (!code && o->attach && o->duration > 0) {
		/* what is left of --duration after phase 1 and the planning */
		r2.opts.duration = o->duration - (double)(monotonic_ns() - t0) / 1e9;
		if (r2.opts.duration <= 0) {
			code = keep_phase1(o, tmp, "--duration ended before phase 2");
			goto out;
		}
	}
	if (!code && !record_nsignals)
		code = record_run(&r2, argc, argv);
	if (code < 0) {
		code = 0; /* --list */
	} else if (!r2.finished && tmp) {
		int interrupted = record_nsignals != 0;

		if (keep_phase1(o, tmp, interrupted ? "interrupted before phase 2"
						    : "phase 2 failed"))
			code = 1;
		else if (interrupted)
			code = o->attach ? 0 : 128 + (int)record_signal;
		else if (!code)
			code = 1;
	}
out:
	record_release(&r1);
	record_release(&r2);
	if (tmp) {
		unlink(tmp);
		free(tmp);
	}
	return code < 0 ? 0 : code;
}

int cmd_record(int argc, char **argv)
{
	struct record rec;
	int code;

	memset(&rec, 0, sizeof(rec));
	/* a target that died before exec must not kill us through its pipe
	 * (the launched program gets the default back) */
	signal(SIGPIPE, SIG_IGN);
	code = parse_options(&rec.opts, argc, argv);
	if (rec.opts.precision_given && code <= 0 && !rec.opts.quiet)
		print_requirement(&rec.opts);
	if (code >= 0)
		goto out;
	rec.prog = optind < argc ? argv[optind] : NULL;
	/* --list in auto mode: what phase 2 would probe, given a phase 1 */
	if (rec.opts.mode == MODE_AUTO && (!rec.opts.list || rec.opts.phase1)) {
		code = record_auto(&rec.opts, rec.prog, argc - optind, argv + optind);
		goto out;
	}
	rec.mode = rec.opts.mode == MODE_AUTO ? MODE_PROBE : rec.opts.mode;
	code = record_one(&rec, argc - optind, argv + optind);
out:
	record_release(&rec);
	free(rec.opts.funcs.v);
	free(rec.opts.excludes.v);
	free(rec.opts.libs.v);
	return code;
}
