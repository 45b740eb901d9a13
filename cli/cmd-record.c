/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * cmd-record.c - "varperf record": run a program (or attach to a running
 * one) and write what it does to a data file: sampled call stacks, the
 * entries and exits of probed functions, or - by default - both, a
 * sampling phase that finds the functions that matter and, in the same
 * run where it can, probes that time only those.  This file reads the command line; the
 * steps are in record-setup.c, record-run.c and record-auto.c.
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/sampled.h"
#include "analysis-opts.h"
#include "builtin.h"
#include "perf-collector/record/record.h"
#include "usage.h"
#include "util/util.h"

static const char *const cmd_record_usage[] = {
	"usage: varperf record [<options>] [--] <program> [<args>...]",
	"   or: varperf record [<options>] -p <pid>",
	"",
	"    -o, --output <file>       write the data to <file> (default: varperf.data)",
	"        --mode <mode>         auto (default: sample, then probe what matters in",
	"                              the same run), probe, sample or combined",
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
	"                              auto: sample <secs> seconds before probing (default:",
	"                              0.25 for a program; with -p 2, or a quarter of",
	"                              --duration)",
	"        --rerun               auto: a program that ends before it is probed may",
	"                              run again for phase 2 (default: it runs once)",
	"    -p, --pid <pid>           attach to the running process <pid>",
	"        --duration <secs>     stop after <secs> seconds",
	"    -f, --function <glob>     probe only the functions matching <glob> (repeatable)",
	"        --exclude <glob>      do not probe the functions matching <glob> (repeatable)",
	"        --lib <name>          also probe the shared library <name>, and name its",
	"                              inlined functions in samples (repeatable)",
	"        --exit-probes <how>   probe exits with auto, uretprobe or ret (default: auto)",
	"        --backend <how>       place probes with auto (default: in auto mode user",
	"                              where it works, else bpf where possible), bpf",
	"                              (uprobe_multi links, in the program only), perf",
	"                              (perf_event uprobes: they trap every process running",
	"                              the probed code until removed, after the recording)",
	"                              or user (patches in the process, x86-64, probe and",
	"                              auto mode)",
	"        --follow-fork         also record the processes the program forks, until",
	"                              they exec another program (the default)",
	"        --no-follow-fork      record the program's own process only",
	"        --input-size <n>      store the program's input size <n> in the file",
	"                              (for varperf predict)",
	"    -m, --buffer-size <size>  ring buffer per CPU, with K/M/G suffix (default: 8M)",
	"        --list                list the functions that would be probed and exit",
	"                              (auto: what phase 1 chose; the program is killed)",
	"        --no-calibrate        do not measure the cost of a probe first",
	"        --no-move-probes      probe each function's first instruction, even where",
	"                              a later one would cost less",
	"    -q, --quiet               print errors and warnings only (and no status line",
	"                              on a terminal)",
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
	/* --cutoff: analysis-opts.h's OPT_CUTOFF, the same option as report's */
	OPT_OVERHEAD,
	OPT_PHASE1,
	OPT_PHASE1_DURATION,
	OPT_DURATION,
	OPT_BACKEND,
	OPT_FOLLOW_FORK,
	OPT_NO_FOLLOW_FORK,
	OPT_INPUT_SIZE,
	OPT_RERUN,
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
	{ "rerun", no_argument, NULL, OPT_RERUN },
	{ "pid", required_argument, NULL, 'p' },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "function", required_argument, NULL, 'f' },
	{ "exclude", required_argument, NULL, OPT_EXCLUDE },
	{ "lib", required_argument, NULL, OPT_LIB },
	{ "exit-probes", required_argument, NULL, OPT_EXIT_PROBES },
	{ "backend", required_argument, NULL, OPT_BACKEND },
	{ "follow-fork", no_argument, NULL, OPT_FOLLOW_FORK },
	{ "no-follow-fork", no_argument, NULL, OPT_NO_FOLLOW_FORK },
	{ "input-size", required_argument, NULL, OPT_INPUT_SIZE },
	{ "buffer-size", required_argument, NULL, 'm' },
	{ "list", no_argument, NULL, OPT_LIST },
	{ "no-calibrate", no_argument, NULL, OPT_NO_CALIBRATE },
	{ "no-move-probes", no_argument, NULL, OPT_NO_MOVE },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};


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

static int parse_backend(const char *s, enum probe_backend *ret)
{
	static const char *const names[] = { [BACKEND_AUTO] = "auto", [BACKEND_PERF] = "perf",
					     [BACKEND_BPF] = "bpf", [BACKEND_USER] = "user" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(s, names[i])) {
			*ret = (enum probe_backend)i;
			return 0;
		}
	}
	return error("invalid value '%s' for '--backend': must be 'auto', 'bpf', 'perf' or "
		     "'user'", s);
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
	return error("invalid value '%s' for '--mode': must be 'auto', 'probe', 'sample' or "
		     "'combined'", s);
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
	return error("invalid value '%s' for '--event': must be 'auto', 'cpu-clock', "
		     "'task-clock' or 'cycles'", s);
}

/* Remember @opt in @slot if it is the first of its group given. */
static void given(const char **slot, const char *opt)
{
	if (!*slot)
		*slot = opt;
}

/* The options that only make sense together, checked once all are read. */
static int check_options(struct record_opts *o, int nargs)
{
	if (o->attach && nargs)
		return error("give either a program to run or -p, not both");
	if (o->phase1 && o->mode != MODE_AUTO)
		return error("--phase1 is for --mode=auto");
	/* an option the mode would ignore is a mistake to point out */
	if (o->sampling_given && o->mode == MODE_PROBE)
		return error("%s is for sampling: --mode=probe samples nothing",
			     o->sampling_given);
	if (o->plan_given && o->mode != MODE_AUTO)
		return error("%s is for --mode=auto, which chooses what to probe",
			     o->plan_given);
	if (o->phase1 && o->attach)
		return error("--phase1 reuses a run of a program: it cannot go with -p");
	if (o->phase1_duration > 0 && (o->mode != MODE_AUTO || o->phase1))
		return error("--phase1-duration is for --mode=auto without --phase1");
	if (o->rerun && (o->mode != MODE_AUTO || o->attach))
		return error("--rerun is for --mode=auto with a program to run");
	/* Phase 2's plan turns samples into time: cycles are not time, and
	 * in frequency mode each sample weighs a different number of them. */
	if (o->mode == MODE_AUTO && o->sampling.event == VP_SEV_CYCLES)
		return error("--mode=auto plans in CPU time: its sampling run takes cpu-clock "
			     "or task-clock, not cycles");
	if (o->mode == MODE_AUTO && !o->sampling.event)
		o->sampling.event = VP_SEV_CPU_CLOCK;
	if (o->backend_given && o->mode == MODE_SAMPLE)
		return error("--backend places probes: --mode=sample places none");
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
	o->follow_fork = 1;
	usage_getopt_start();
	while ((c = getopt_long(argc, argv, "+:o:f:m:qhF:e:p:", cmd_record_options, NULL)) !=
	       -1) {
		switch (c) {
		case 'o':
			o->output = optarg;
			break;
		case OPT_MODE:
			if (parse_mode(optarg, &o->mode) < 0)
				return EXIT_USAGE;
			break;
		case 'F':
			if (parse_uint64(optarg, &v) < 0 || v < 1 || v > 100000) {
				error("invalid value '%s' for '--freq': must be a whole number of "
				      "samples per second from 1 to 100000", optarg);
				return EXIT_USAGE;
			}
			o->sampling.freq = v;
			given(&o->sampling_given, "-F");
			break;
		case OPT_STACK_SIZE:
			/* the kernel takes at most 65528 bytes, in words */
			if (parse_uint64(optarg, &v) < 0 || v < 64 || v > VP_STACK_SIZE_MAX || v % 8) {
				error("invalid value '%s' for '--stack-size': must be a "
				      "multiple of 8 from 64 to 65528 (bytes)", optarg);
				return EXIT_USAGE;
			}
			o->sampling.stack_size = (uint32_t)v;
			o->stack_size_given = 1;
			given(&o->sampling_given, "--stack-size");
			break;
		case 'e':
			if (parse_event(optarg, &o->sampling.event) < 0)
				return EXIT_USAGE;
			given(&o->sampling_given, "--event");
			break;
		case OPT_PRECISION:
			if (opt_fraction("precision", optarg, &o->precision) < 0)
				return EXIT_USAGE;
			o->precision_given = 1;
			break;
		case OPT_CONFIDENCE:
			if (opt_fraction("confidence", optarg, &o->confidence) < 0)
				return EXIT_USAGE;
			o->precision_given = 1;
			break;
		case OPT_CUTOFF:
			if (opt_fraction("cutoff", optarg, &o->cutoff) < 0)
				return EXIT_USAGE;
			given(&o->plan_given, "--cutoff");
			break;
		case OPT_OVERHEAD:
			if (opt_fraction("overhead", optarg, &o->overhead) < 0)
				return EXIT_USAGE;
			given(&o->plan_given, "--overhead");
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
				error("invalid value '%s' for '--pid': must be a process id",
				      optarg);
				return EXIT_USAGE;
			}
			o->attach = (pid_t)pid;
			break;
		}
		case OPT_DURATION:
		case OPT_PHASE1_DURATION: {
			double *d = c == OPT_DURATION ? &o->duration : &o->phase1_duration;

			if (parse_double(optarg, d) < 0 || *d <= 0 || strchr(optarg, '%')) {
				error("invalid value '%s' for '--%s': must be a number of seconds "
				      "greater than 0", optarg,
				      c == OPT_DURATION ? "duration" : "phase1-duration");
				return EXIT_USAGE;
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
				error("invalid value '%s' for '--exit-probes': must be 'auto', "
				      "'uretprobe' or 'ret'", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_BACKEND:
			if (parse_backend(optarg, &o->backend) < 0)
				return EXIT_USAGE;
			o->backend_given = 1;
			break;
		case 'm':
			if (parse_uint64(optarg, &o->buf_size) < 0 || o->buf_size < 4096 ||
			    o->buf_size > (1ULL << 30)) {
				error("invalid value '%s' for '--buffer-size': must be a size "
				      "from 4K to 1G", optarg);
				return EXIT_USAGE;
			}
			o->buf_size_given = 1;
			break;
		case OPT_FOLLOW_FORK:
		case OPT_NO_FOLLOW_FORK:
			o->follow_fork = c == OPT_FOLLOW_FORK;
			break;
		case OPT_INPUT_SIZE:
			if (parse_uint64(optarg, &v) < 0) {
				error("invalid value '%s' for '--input-size': must be a whole "
				      "number", optarg);
				return EXIT_USAGE;
			}
			o->input_size = v;
			o->has_input_size = 1;
			break;
		case OPT_LIST:
			o->list = 1;
			break;
		case OPT_RERUN:
			o->rerun = 1;
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
			usage_print(stdout, cmd_record_usage, 1);
			return 0;
		default:
			return usage_getopt_error(c, argv, cmd_record_options, cmd_record_usage);
		}
	}
	if (check_options(o, argc - optind) < 0)
		return EXIT_USAGE;
	if (optind >= argc && !o->attach) {
		/* --precision alone: say how many samples that takes */
		if (o->precision_given)
			return 0;
		return usage_error(cmd_record_usage, "no program to record");
	}
	return -1;
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
	rec.target.prog = optind < argc ? argv[optind] : NULL;
	/* --list in auto mode: what phase 2 would probe, after a phase 1 */
	if (rec.opts.mode == MODE_AUTO) {
		code = record_auto(&rec.opts, rec.target.prog, argc - optind, argv + optind);
		goto out;
	}
	rec.mode = rec.opts.mode;
	code = record_one(&rec, argc - optind, argv + optind);
out:
	record_release(&rec);
	free(rec.opts.funcs.v);
	free(rec.opts.excludes.v);
	free(rec.opts.libs.v);
	return code;
}
