/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * record-auto.c - the driver of "varperf record": one recording in probe,
 * sample or combined mode, or the automatic mode (Kumar et al. 2008, §2.2):
 * phase 1 samples, phase 2 probes only what phase 1 found significant
 * within the overhead budget (plan.c), while record-stream.c measures what
 * the probes really cost.  It puts together record-setup.c's and
 * record-stream.c's steps, which never call back into it: what the
 * stream asks of phase 1 goes through struct record_ops (see record.h).
 */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perf-collector/record/record.h"
#include "util/util.h"

enum {
	/* attached: what phase 1 needs before phase 2 can be planned */
	PHASE1_MIN_SAMPLES = 200,
	/* phase 1 judges its stack copy after this many samples */
	STACK_CHECK_SAMPLES = 50,
};

/*
 * Phase 1: a sample whose stack copy is full may have been cut short of
 * main, and such samples show a caller less often than its callees: the
 * plan would rank them wrong.  When one sample in ten fills the copy,
 * start over with four times the copy (up to the kernel's limit), while
 * the phase is young; what was sampled so far is dropped.  (A full copy
 * is not always a truncated stack - the environment's strings lie beyond
 * main too - but telling needs the unwinding, which waits for the end
 * of the phase; a larger copy costs only memory.)  Not when the user
 * chose the size.
 */
static int phase1_stacks_settled(const struct record *rec)
{
	return rec->counts.nsamples >= STACK_CHECK_SAMPLES ||
	       rec->opts.sampling.stack_size >= VP_STACK_SIZE_MAX || rec->opts.stack_size_given;
}

static int phase1_stacks(struct record *rec)
{
	uint32_t size = rec->opts.sampling.stack_size, bigger;
	uint64_t n = rec->counts.nsamples, full = rec->counts.full_stacks, elapsed;

	if (n < STACK_CHECK_SAMPLES || full * 10 < n || size >= VP_STACK_SIZE_MAX ||
	    rec->opts.stack_size_given)
		return 0;
	bigger = size * 4 < VP_STACK_SIZE_MAX ? size * 4 : VP_STACK_SIZE_MAX;
	if (rec->phase.announce)
		info("phase 1: %llu of %llu samples filled the %u-byte stack copy (their stacks "
		     "may end short of main): sampling again with %u bytes",
		     (unsigned long long)full, (unsigned long long)n, size, bigger);
	/* the window (and the wait for an idle program) begins anew */
	elapsed = monotonic_ns() - rec->target.start_ns;
	if (rec->phase.window_ns)
		rec->phase.window_ns += elapsed;
	if (rec->phase.until_ns)
		rec->phase.until_ns += elapsed;
	record_resample(rec, bigger);
	return 1;
}

/* What the stream asks of phase 1 every round. */
static const struct record_ops phase1_ops = {
	.round = phase1_stacks,
	.may_flush = phase1_stacks_settled,
};

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

	if (vp_plan_build(&rec->phase.plan, rec->phase.plan_from, rec->hdr.funcs, rec->hdr.nfuncs,
			  rec->hdr.modules, rec->hdr.costs, rec->hdr.ncosts, rec->opts.cutoff,
			  rec->opts.overhead) < 0)
		return -1;
	h1 = vp_plan_header(&rec->phase.plan);
	/* (attached, both phases are of the one process) */
	if (!rec->opts.attach && !same_command(h1, rec->target.argc, rec->target.argv))
		warning("the sampling run was of '%s' with %d argument%s, this run is of '%s' "
			"with %d: both runs must do the same work",
			h1->argc ? h1->argv[0] : "?", h1->argc - 1, h1->argc == 2 ? "" : "s",
			rec->target.prog, rec->target.argc - 1);
	if (!rec->opts.quiet)
		vp_plan_print(&rec->phase.plan, rec->hdr.funcs, rec->opts.cutoff,
			      rec->opts.overhead, verbose > 0);
	for (size_t i = 0; i < rec->hdr.nfuncs; i++) {
		if (rec->phase.plan.funcs[i].why == VP_PLAN_PROBED) {
			rec->hdr.funcs[j] = rec->hdr.funcs[i];
			if (rec->probing.exits)
				rec->probing.exits[j] = rec->probing.exits[i];
			j++;
		} else {
			free(rec->hdr.funcs[i].name);
			free(rec->hdr.funcs[i].display);
			free(rec->hdr.funcs[i].base);
			if (rec->probing.exits)
				vp_exits_release(&rec->probing.exits[i]);
		}
	}
	rec->hdr.nfuncs = j;
	if (!j)
		return error("no function to probe: the sampling run found none significant "
			     "within the budget (try --mode=sample, or a larger --overhead)");
	return 0;
}

/*
 * Phase 1 is the output until phase 2 begins, and then phase 2's file
 * (phase 1 copied, and its own records) replaces it: whatever stops
 * phase 2 before that leaves phase 1 as the result.  Say so.
 */
static void keep_phase1(const struct record_opts *o, const char *why)
{
	warning("%s: '%s' holds the sampling run (phase 1) only", why, o->output);
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
 * A program varperf runs: sample it this long (and PHASE1_MIN_SAMPLES),
 * then probe it in the same run.  A quarter of a second of 1 kHz samples
 * finds what takes more than a few percent of the time; the planner's
 * estimate of call rates is then checked by the probes' own counts.
 */
static double phase1_window(const struct record_opts *o)
{
	return o->phase1_duration > 0 ? o->phase1_duration : 0.25;
}

/*
 * Whether a second run can read what the first one read: a terminal, a
 * regular file (rewound to where the first run started, @off), /dev/null
 * or no standard input at all - not a pipe or a socket, whose data the
 * first run consumed.
 */
static int stdin_again(off_t off)
{
	struct stat st;

	if (fstat(STDIN_FILENO, &st) < 0)
		return errno == EBADF;
	if (isatty(STDIN_FILENO) || (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3)))
		return 1;
	return S_ISREG(st.st_mode) && off >= 0 && lseek(STDIN_FILENO, off, SEEK_SET) == off;
}

/*
 * The program ended before phase 2 could probe it, @when ("within phase
 * 1", "while phase 2 was planned"; @secs: how long phase 1 sampled, or
 * 0): phase 2 runs it again if its standard input can be read again
 * (@in_off: where phase 1 began reading it).  0 to go on, or 1 after
 * saying why not.
 */
static int run_again(const struct record_opts *o, const char *prog, off_t in_off, int status,
		     const char *when, double secs)
{
	char took[32] = "", why[64];

	if (!stdin_again(in_off)) {
		if (secs > 0)
			snprintf(took, sizeof(took), " (%.2f s)", secs);
		snprintf(why, sizeof(why), "the program ended %s", when);
		keep_phase1(o, why);
		error("'%s' ended %s%s, and a second run cannot read its standard input again (a "
		      "pipe): record it with --mode=probe, or give --phase1 a sampling run",
		      prog, when, took);
		return 1;
	}
	if (!o->quiet)
		info("'%s' ended %s: running it again for phase 2", prog, when);
	if (status)
		warning("phase 1: '%s' exited with status %d; phase 2 must do the same work", prog,
			status);
	return 0;
}

/*
 * Whether phase 1's program, left running for phase 2 (@pid, our child),
 * has ended meanwhile: then it is reaped, its exit code in *@code.
 */
static int child_ended(pid_t pid, int *code)
{
	int status;
	pid_t got;

	while ((got = waitpid(pid, &status, WNOHANG)) < 0 && errno == EINTR)
		;
	if (got != pid)
		return 0;
	*code = exit_code_of(status);
	return 1;
}

/*
 * --duration ended with phase 1's program still running and phase 2 not
 * begun: end it as the option promises, as Ctrl-C would, then SIGKILL 5 s
 * later; its exit code as record's.
 */
static int interrupt_child(pid_t pid)
{
	int status = 0;
	pid_t got = 0;

	kill(pid, SIGINT);
	for (int i = 0; i < 500 && (got = waitpid(pid, &status, WNOHANG)) == 0; i++)
		usleep(10000);
	if (got == 0) {
		kill(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	return exit_code_of(status);
}

static void abandon_child(struct record *r1)
{
	if (r1->target.left_running) {
		kill(r1->target.pid, SIGKILL);
		waitpid(r1->target.pid, NULL, 0);
	}
}

/* The exit status of a recording whose preparation failed. */
static int failed_status(const struct record *rec)
{
	return rec->outcome.usage ? USAGE_ERROR : 1;
}

int record_one(struct record *rec, int argc, char **argv)
{
	rec->target.argc = argc;
	rec->target.argv = argv;
	if (record_prepare_static(rec) < 0)
		return failed_status(rec);
	if (rec->outcome.listed)
		return 0;
	if (record_prepare_probes(rec) < 0)
		return failed_status(rec);
	if (rec->outcome.listed)
		return 0;
	record_run(rec, argc, argv);
	return rec->outcome.status;
}

struct calib_job {
	struct record *rec;
	int err;
};

static void *calibrate_main(void *arg)
{
	struct calib_job *j = arg;

	j->err = record_calibrate(j->rec);
	return NULL;
}

/*
 * Auto mode (Kumar et al. 2008, §2.2): sample a first run, then run again
 * probing only what the samples found significant within the budget; or,
 * attached to a running process, sample it for a while, then probe it.
 * Both phases go into the one output file.  Whatever stops phase 2 from
 * happening, phase 1 is kept.
 */
int record_auto(const struct record_opts *o, const char *prog, int argc, char **argv)
{
	struct calib_job calib = { NULL, 0 };
	pthread_t calib_thread;
	int calibrating = 0;
	struct record r1, r2;
	int ran_phase1 = 0;
	uint64_t t0 = monotonic_ns();
	off_t in_off = lseek(STDIN_FILENO, 0, SEEK_CUR);
	int code = 0, p1code = 0, err;

	memset(&r1, 0, sizeof(r1));
	memset(&r2, 0, sizeof(r2));
	r2.opts = *o;
	r2.mode = MODE_PROBE;
	r2.target.prog = prog;
	r2.target.argc = argc;
	r2.target.argv = argv;
	if (o->phase1 && vp_output_same(o->phase1, o->output)) {
		error("--phase1 '%s' is also the output: give another -o", o->phase1);
		return USAGE_ERROR;
	}
	/* a wrong file is said at once, not after the calibration */
	if (o->phase1 && vp_plan_check(o->phase1) < 0)
		return 1;
	r2.phase.plan_from = o->phase1;
	/* Nothing to probe (a stripped program, no uprobe PMU) without a
	 * -f asking for something: auto mode samples.  Anything else that
	 * would stop phase 2 stops us before phase 1. */
	r2.probing.can_sample_only = !o->funcs.n && !o->phase1;
	err = record_prepare_static(&r2);
	if (err && r2.probing.unprobeable && r2.probing.can_sample_only && o->list) {
		error("nothing to list: %s", r2.probing.unprobeable);
		code = 1;
		goto out;
	}
	if (err && r2.probing.unprobeable && r2.probing.can_sample_only) {
		warning("%s: sampling only", r2.probing.unprobeable);
		record_release(&r2);
		memset(&r2, 0, sizeof(r2));
		r2.opts = *o;
		r2.mode = MODE_SAMPLE;
		r2.target.prog = prog;
		code = record_one(&r2, argc, argv);
		goto out;
	}
	if (err) {
		code = failed_status(&r2);
		goto out;
	}
	/*
	 * The probes' cost is measured while phase 1 samples, in a thread:
	 * not before it (the program would start later) nor after it (it
	 * would run unobserved meanwhile).
	 */
	if (!o->phase1) {
		calib.rec = &r2;
		calibrating = pthread_create(&calib_thread, NULL, calibrate_main, &calib) == 0;
		if (!calibrating && record_calibrate(&r2) < 0) {
			code = 1;
			goto out;
		}
	}
	if (!o->phase1) {
		r1.opts = *o;
		r1.opts.quiet = 1;
		r1.mode = MODE_SAMPLE;
		r1.target.prog = prog;
		r1.phase.announce = !o->quiet;
		r1.phase.min_samples = PHASE1_MIN_SAMPLES;
		r1.ops = &phase1_ops;
		if (o->attach) {
			r1.opts.duration = phase1_seconds(o);
			r1.phase.until_ns =
				o->duration > 0 ? t0 + (uint64_t)(o->duration * 1e9) : 0;
			if (!o->quiet)
				info("phase 1 of 2: sampling process %d (%s) for %.1f s",
				     (int)o->attach, r2.target.path, r1.opts.duration);
		} else {
			r1.phase.window_ns = (uint64_t)(phase1_window(o) * 1e9);
			/* an idle program: plan from what there is after a while */
			r1.phase.until_ns = monotonic_ns() + 10 * r1.phase.window_ns;
			if (!o->quiet)
				info("phase 1 of 2: sampling '%s' for %.2f s, then %s", prog,
				     phase1_window(o),
				     o->list ? "listing what phase 2 would probe"
					     : "probing it in the same run");
		}
		p1code = record_one(&r1, argc, argv);
		ran_phase1 = r1.output.file.committed;
		if (calibrating) {
			pthread_join(calib_thread, NULL);
			calibrating = 0;
			if (calib.err) {
				abandon_child(&r1);
				if (r1.outcome.finished)
					keep_phase1(o, "the probes' cost could not be measured");
				code = 1;
				goto out;
			}
		}
		if (!r1.outcome.finished) {
			/* a file it could not write whole stays, as in any mode */
			if (ran_phase1)
				warning("no phase 2: '%s' holds what phase 1 could write",
					o->output);
			abandon_child(&r1);
			code = p1code ? p1code : 1;
			goto out;
		}
		if (record_nsignals) {
			keep_phase1(o, "interrupted in phase 1");
			code = o->attach ? 0 : p1code ? p1code : 130;
			goto out;
		}
		if (r1.target.gone && o->attach) {
			keep_phase1(o, "the process exited in phase 1");
			code = 0;
			goto out;
		}
		/* --duration ended the program: the time asked for is over, a
		 * second run would exceed it */
		if (!r1.target.left_running && !o->attach && o->duration > 0 &&
		    (double)(monotonic_ns() - t0) / 1e9 >= o->duration) {
			keep_phase1(o, "--duration ended in phase 1");
			code = p1code;
			goto out;
		}
		if (r1.target.left_running) {
			/* phase 2 probes the same process */
			r2.opts.attach = r1.target.pid;
			r2.target.child = 1;
		} else if (o->list) {
			/* --list needs no second run: the plan is made */
		} else if (!o->attach &&
			   run_again(o, prog, in_off, p1code, "within phase 1", phase1_window(o))) {
			code = 1;
			goto out;
		}
		r2.phase.plan_from = o->output;
		r2.phase.phase1_stack_size = r1.opts.sampling.stack_size;
		/* the same run: the children phase 1 followed are phase 2's too */
		if (r1.target.left_running) {
			r2.target.procs = r1.target.procs;
			memset(&r1.target.procs, 0, sizeof(r1.target.procs));
		}
		/* its sampling events and buffers are of no more use */
		record_release(&r1);
		memset(&r1, 0, sizeof(r1));
	}
	if (o->attach && o->duration > 0 &&
	    (double)(monotonic_ns() - t0) / 1e9 >= o->duration) {
		keep_phase1(o, "--duration ended in phase 1");
		code = 0;
		goto out;
	}
	if (o->attach && !o->quiet && !o->list)
		info("phase 2 of 2: probing process %d (%s)", (int)o->attach, r2.target.path);
	else if (!o->quiet && !o->list)
		info("phase 2 of 2: probing '%s'%s", prog,
		     r2.target.child ? " (the same run)" : "");
	err = record_calibrate(&r2);
	if (!err)
		err = select_planned(&r2);
	if (!err)
		err = record_prepare_probes(&r2);
	code = err < 0 ? 1 : 0;
	if (r2.outcome.listed && r2.target.child) {
		/* --list: no phase 2, and phase 1's program has served its turn */
		kill(r2.opts.attach, SIGKILL);
		while (waitpid(r2.opts.attach, NULL, 0) < 0 && errno == EINTR)
			;
		r2.target.gone = 1;
	}
	/* the program ran on while phase 2 was planned, and may be over:
	 * a process that has ended has nothing to probe (opening its events
	 * fails with ESRCH), so run it again as if it had ended in phase 1 */
	if (!code && !r2.outcome.listed && r2.target.child && child_ended(r2.opts.attach, &p1code)) {
		record_procs_release(&r2.target.procs);
		memset(&r2.target.procs, 0, sizeof(r2.target.procs));
		r2.opts.attach = 0;
		r2.target.child = 0;
		if (o->duration > 0 && (double)(monotonic_ns() - t0) / 1e9 >= o->duration) {
			keep_phase1(o, "--duration ended before phase 2");
			code = p1code;
			goto out;
		}
		if (run_again(o, prog, in_off, p1code, "while phase 2 was planned", 0)) {
			code = 1;
			goto out;
		}
	}
	if (!code && !r2.outcome.listed && (o->attach || r2.target.child) && o->duration > 0) {
		/* what is left of --duration after phase 1 and the planning */
		r2.opts.duration = o->duration - (double)(monotonic_ns() - t0) / 1e9;
		if (r2.opts.duration <= 0) {
			keep_phase1(o, "--duration ended before phase 2");
			code = 0;
			if (r2.target.child) {
				code = interrupt_child(r2.opts.attach);
				r2.target.gone = 1;
			}
			goto out;
		}
	}
	if (!code && !r2.outcome.listed && !record_nsignals) {
		record_run(&r2, argc, argv);
		code = r2.outcome.status;
	}
	if (r2.target.child && !r2.target.gone && !r2.outcome.finished &&
	    !r2.output.file.committed) {
		/* phase 2 never started: the program still runs its course */
		int status;

		while (waitpid(r2.opts.attach, &status, 0) < 0 && errno == EINTR)
			;
		keep_phase1(o, "phase 2 failed");
		code = exit_code_of(status);
		goto out;
	}
	if (r2.outcome.listed) {
		code = 0;
	} else if (!r2.outcome.finished && ran_phase1 && !r2.output.file.committed) {
		int interrupted = record_nsignals != 0;

		keep_phase1(o, interrupted ? "interrupted before phase 2" : "phase 2 failed");
		if (interrupted)
			code = o->attach ? 0 : 128 + (int)record_signal;
		else if (!code)
			code = 1;
	}
out:
	if (calibrating)
		pthread_join(calib_thread, NULL);
	record_release(&r1);
	record_release(&r2);
	return code;
}
