/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * record-auto.c - the driver of "varperf record": one recording in probe,
 * sample or combined mode, or the automatic mode (Kumar et al. 2008, §2.2):
 * phase 1 samples, phase 2 probes only what phase 1 found significant
 * within the overhead budget (plan.c), while record-budget.c measures what
 * the probes really cost.  It puts together record-setup.c's and
 * record-run.c's steps, which never call back into it: what the run
 * asks of phase 1 goes through struct record_ops (see record.h).
 */
#include <config.h>

#include <errno.h>
#include <math.h>
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

#include "perf-collector/record/record-auto.h"
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

/* Most functions a plan probes, for the BPF programs loaded ahead. */
enum { PRELOAD_FUNCS = 1024 };

/*
 * Load phase 2's BPF programs while phase 1 samples (once, at its first
 * round), so that phase 2 only attaches: loading took 40-90 ms, which
 * phase 2 began that much later.  Where it fails, phase 2 loads them
 * itself and says what fails.
 */
static void preload_phase2(struct record *rec)
{
	const struct record_opts *o = &rec->opts;

	if (rec->phase.preloaded || rec->target.pid <= 0 ||
	    (o->backend != BACKEND_AUTO && o->backend != BACKEND_BPF))
		return;
	rec->phase.preloaded = 1;
	if (vp_bpf_probes_preload(rec->target.pid,
				  (size_t)o->buf_size * (rec->hdr.ncpu ? rec->hdr.ncpu : 1),
				  PRELOAD_FUNCS, o->follow_fork ? VP_BPF_FOLLOW_FORK : 0) < 0)
		pr_debug("phase 2's BPF programs not loaded ahead");
}

static int phase1_stacks(struct record *rec)
{
	uint32_t size = rec->opts.sampling.stack_size, bigger;

	preload_phase2(rec);
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

/* What the run asks of phase 1 every round. */
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
	return record_user_planned(rec);
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
 * Whether phase 1's program, left running for phase 2 (@pid, our child),
 * has ended meanwhile: then it is reaped, its wait status in *@status.
 */
static int child_ended(pid_t pid, int *status)
{
	pid_t got;

	while ((got = waitpid(pid, status, WNOHANG)) < 0 && errno == EINTR)
		;
	return got == pid;
}

/*
 * Phase 1's program still running and phase 2 not begun, but record ends
 * (--duration, or a signal to varperf): end it with @sig as Ctrl-C
 * would, then SIGKILL 5 s later; its wait status.
 */
static int interrupt_child(pid_t pid, int sig)
{
	int status = 0;
	pid_t got = 0;

	kill(pid, sig);
	for (int i = 0; i < 500 && (got = waitpid(pid, &status, WNOHANG)) == 0; i++)
		usleep(10000);
	if (got == 0) {
		kill(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	return status;
}

/* Phase 1's program, left running for phase 2, is not to be probed after all. */
static void abandon_child(const struct record_target *t)
{
	if (t->left_running) {
		kill(t->pid, SIGKILL);
		waitpid(t->pid, NULL, 0);
	}
}

/* The exit status of a recording whose preparation failed. */
static int failed_status(const struct record_outcome *out)
{
	return out->usage ? EXIT_USAGE : 1;
}

int record_one(struct record *rec, int argc, char **argv)
{
	rec->target.argc = argc;
	rec->target.argv = argv;
	if (record_prepare_static(rec) < 0)
		return failed_status(&rec->outcome);
	if (rec->outcome.listed)
		return 0;
	if (record_prepare_probes(rec) < 0)
		return failed_status(&rec->outcome);
	if (rec->outcome.listed)
		return 0;
	record_run(rec, argc, argv);
	/* (auto mode's phase 1 leaves it to the driver) */
	if (!rec->ops && rec->outcome.finished)
		record_summary_interrupted(rec->target.start_ns, rec->opts.quiet);
	return rec->outcome.status;
}

/* A recording of @a's program in @mode, with the command's options. */
static void recording_init(struct record *rec, const struct auto_run *a, enum record_mode mode)
{
	memset(rec, 0, sizeof(*rec));
	rec->opts = *a->o;
	rec->mode = mode;
	rec->target.prog = a->prog;
	rec->target.argc = a->argc;
	rec->target.argv = a->argv;
}

/* What is left of --duration now (seconds; HUGE_VAL without one). */
static double duration_left(const struct auto_run *a)
{
	if (a->o->duration <= 0)
		return HUGE_VAL;
	return a->o->duration - (double)(monotonic_ns() - a->t0) / 1e9;
}

/* End record with exit status @code. */
static int auto_end(struct auto_run *a, int code)
{
	a->code = code;
	return 1;
}

/*
 * The program ended before anything was probed, and --rerun was not
 * given: a program that writes files, a database or a socket must not
 * run twice behind the user's back.  The file holds the sampled profile;
 * say so, and how to get a complete recording: the plan's functions
 * probed from the start, or a shorter phase 1 (a quarter of the run).
 */
static int no_second_run(struct auto_run *a, const char *when, double run_secs)
{
	const struct record_opts *o = a->o;
	struct record *r2 = &a->r2;
	char *cmd = NULL, why[64];
	double p1 = run_secs / 4 >= 0.01 ? run_secs / 4 : 0.01;

	r2->opts.quiet = 1; /* no plan printed: no phase 2 follows */
	r2->phase.plan_from = o->output;
	mute_errors(1);
	if (a->planned || (!record_calibrate(r2) && !select_planned(r2)))
		cmd = auto_probe_command(a);
	mute_errors(0);
	snprintf(why, sizeof(why), "the program ended %s", when);
	keep_phase1(o, why);
	error("nothing was timed: '%s' ended %s, after %.2f s, and runs once unless --rerun is "
	      "given", a->prog, when, run_secs);
	if (cmd)
		info("to time the %zu function%s phase 2 would probe, over a whole run: %s",
		     r2->hdr.nfuncs, r2->hdr.nfuncs == 1 ? "" : "s", cmd);
	info("or probe sooner with --phase1-duration %.2f, or let record run the program "
	     "again with --rerun (if running it twice does no harm)", p1);
	free(cmd);
	return auto_end(a, a->p1code ? a->p1code : 1);
}

/*
 * The program ended before phase 2 could probe it, @when ("within phase
 * 1", "while phase 2 was planned"; @secs: how long phase 1 sampled, or
 * 0; @run_secs: how long it ran): with --rerun, phase 2 runs it again if
 * its standard input can be read again.  0 to go on, or 1 when record
 * ends (said).
 */
static int run_again(struct auto_run *a, const char *when, double secs, double run_secs)
{
	const struct record_opts *o = a->o;
	char took[32] = "", why[64];

	if (!o->rerun)
		return no_second_run(a, when, run_secs);
	if (!stdin_again(a->in_off)) {
		if (secs > 0)
			snprintf(took, sizeof(took), " (%.2f s)", secs);
		snprintf(why, sizeof(why), "the program ended %s", when);
		keep_phase1(o, why);
		error("'%s' ended %s%s, and a second run cannot read its standard input again (a "
		      "pipe): record it with --mode=probe, or give --phase1 a sampling run",
		      a->prog, when, took);
		return auto_end(a, 1);
	}
	if (!o->quiet)
		info("'%s' ended %s: running it again for phase 2", a->prog, when);
	if (a->p1code)
		warning("phase 1: '%s' exited with status %d; phase 2 must do the same work",
			a->prog, a->p1code);
	return 0;
}

static void *calibrate_main(void *arg)
{
	struct auto_run *a = arg;

	a->calib_err = record_calibrate(&a->r2);
	return NULL;
}

/*
 * What needs no run: --phase1 checked, phase 2's program, functions and
 * probes prepared - so that anything that would stop phase 2 stops
 * record before phase 1.  Nothing to probe (a stripped program, no
 * uprobe PMU) without a -f asking for something: auto mode samples.
 */
static int auto_prepare(struct auto_run *a)
{
	const struct record_opts *o = a->o;
	struct record *r2 = &a->r2;
	int err;

	if (o->phase1 && vp_output_same(o->phase1, o->output)) {
		error("--phase1 '%s' is also the output: give another -o", o->phase1);
		return auto_end(a, EXIT_USAGE);
	}
	/* a wrong file is said at once, not after the calibration */
	if (o->phase1 && vp_plan_check(o->phase1) < 0)
		return auto_end(a, 1);
	r2->phase.plan_from = o->phase1;
	r2->probing.can_sample_only = !o->funcs.n && !o->phase1;
	err = record_prepare_static(r2);
	if (!err)
		return 0;
	if (!r2->probing.unprobeable || !r2->probing.can_sample_only)
		return auto_end(a, failed_status(&r2->outcome));
	if (o->list) {
		error("nothing to list: %s", r2->probing.unprobeable);
		return auto_end(a, 1);
	}
	warning("%s: sampling only", r2->probing.unprobeable);
	record_release(r2);
	recording_init(r2, a, MODE_SAMPLE);
	return auto_end(a, record_one(r2, a->argc, a->argv));
}

/*
 * The probes' cost is measured while phase 1 samples, in a thread: not
 * before it (the program would start later) nor after it (it would run
 * unobserved meanwhile).
 */
static int start_calibration(struct auto_run *a)
{
	a->calibrating = pthread_create(&a->calib_thread, NULL, calibrate_main, a) == 0;
	if (!a->calibrating && record_calibrate(&a->r2) < 0)
		return auto_end(a, 1);
	return 0;
}

static int join_calibration(struct auto_run *a)
{
	if (!a->calibrating)
		return 0;
	pthread_join(a->calib_thread, NULL);
	a->calibrating = 0;
	return a->calib_err;
}

/* Phase 1's recording: sample the program for a window, or the process
 * attached for a while; quiet but for its announcements. */
static void phase1_init(struct auto_run *a)
{
	const struct record_opts *o = a->o;
	struct record *r1 = &a->r1;

	recording_init(r1, a, MODE_SAMPLE);
	r1->opts.quiet = 1;
	r1->phase.announce = !o->quiet;
	r1->phase.min_samples = PHASE1_MIN_SAMPLES;
	r1->ops = &phase1_ops;
	r1->status.phase = 1;
	/* phase 2 patches the program: no BPF program to load ahead */
	r1->phase.preloaded = a->r2.probing.user != NULL;
	if (o->attach) {
		r1->opts.duration = phase1_seconds(o);
		r1->phase.until_ns = o->duration > 0 ? a->t0 + (uint64_t)(o->duration * 1e9) : 0;
		if (!o->quiet)
			info("phase 1 of 2: sampling process %d (%s) for %.1f s", (int)o->attach,
			     a->r2.target.path, r1->opts.duration);
		return;
	}
	r1->phase.window_ns = (uint64_t)(phase1_window(o) * 1e9);
	/* an idle program: plan from what there is after a while */
	r1->phase.until_ns = monotonic_ns() + 10 * r1->phase.window_ns;
	if (!o->quiet)
		info("phase 1 of 2: sampling '%s' for %.2f s, then %s", a->prog, phase1_window(o),
		     o->list ? "listing what phase 2 would probe" : "probing it in the same run");
}

/*
 * A signal to varperf ended record between the phases (phase 1's file
 * written, phase 2's not begun): phase 1's program, left running for
 * phase 2 (@child; 0: none), gets it too unless it has @ended (a Ctrl-C
 * on the terminal reaches it as well; then @status is its wait status),
 * and phase 1's file says so, which it could not say when written: the
 * program ended then rather than running on.  Not an error: the exit
 * status is the program's.
 */
static int interrupted_before_phase2(struct auto_run *a, pid_t child, int status, int ended)
{
	const struct record_opts *o = a->o;
	struct vp_trailer tr = a->p1_end;
	int err;

	if (child && !ended)
		status = interrupt_child(child, (int)record_signal);
	tr.flags |= VP_END_INTERRUPTED;
	if (child) {
		tr.flags = (tr.flags & ~(uint32_t)VP_END_DETACHED) | VP_END_EXITED;
		tr.wait_status = (uint64_t)status;
		a->r2.target.gone = 1;
	}
	if (a->ran_phase1 && a->p1_end.present) {
		err = vp_datafile_rewrite_end(o->output, &tr);
		if (err < 0)
			warning("'%s' could not be marked as interrupted: %s", o->output,
				strerror(-err));
	}
	record_summary_interrupted(a->r1_start_ns, o->quiet);
	if (!o->quiet)
		info("'%s' holds the sampling run (phase 1) only: nothing was timed", o->output);
	return auto_end(a, o->attach && !child ? 0 : exit_code_of(status));
}

/* How phase 1 ended: whether (and how) phase 2 can follow. */
static int phase1_outcome(struct auto_run *a)
{
	const struct record_opts *o = a->o;
	struct record *r1 = &a->r1;

	if (join_calibration(a)) {
		abandon_child(&r1->target);
		if (r1->outcome.finished)
			keep_phase1(o, "the probes' cost could not be measured");
		return auto_end(a, 1);
	}
	if (!r1->outcome.finished) {
		/* a file it could not write whole stays, as in any mode */
		if (a->ran_phase1)
			warning("no phase 2: '%s' holds what phase 1 could write", o->output);
		abandon_child(&r1->target);
		return auto_end(a, a->p1code ? a->p1code : 1);
	}
	if (record_nsignals && r1->target.left_running) {
		int status = 0, ended = child_ended(r1->target.pid, &status);

		return interrupted_before_phase2(a, r1->target.pid, status, ended);
	}
	if (record_nsignals) {
		/* the program (or the sampling of a process) ended with it */
		record_summary_interrupted(r1->target.start_ns, o->quiet);
		if (!o->quiet)
			info("'%s' holds the sampling run (phase 1) only: nothing was timed",
			     o->output);
		return auto_end(a, o->attach ? 0 : a->p1code ? a->p1code : 130);
	}
	if (r1->target.gone && o->attach) {
		keep_phase1(o, "the process exited in phase 1");
		return auto_end(a, 0);
	}
	/* --duration ended: the time asked for is over, a second run (or
	 * more of this one) would exceed it */
	if (!r1->target.left_running && duration_left(a) <= 0) {
		keep_phase1(o, "--duration ended in phase 1");
		return auto_end(a, o->attach ? 0 : a->p1code);
	}
	return 0;
}

/* Phase 2 takes over from phase 1: the same run (the program left
 * running, its children), or a second one. */
static int phase1_hand_over(struct auto_run *a)
{
	const struct record_opts *o = a->o;
	struct record *r1 = &a->r1, *r2 = &a->r2;

	if (r1->target.left_running) {
		/* phase 2 probes the same process, and the children phase 1
		 * followed */
		r2->opts.attach = r1->target.pid;
		r2->target.child = 1;
		r2->target.procs = r1->target.procs;
		memset(&r1->target.procs, 0, sizeof(r1->target.procs));
	} else if (!o->list && !o->attach &&
		   run_again(a, "within phase 1", phase1_window(o), a->run_secs)) {
		/* (--list needs no second run: the plan is made) */
		return 1;
	}
	r2->phase.plan_from = o->output;
	r2->phase.phase1_stack_size = r1->opts.sampling.stack_size;
	if (r1->target.left_running)
		a->p1_cpu = r1->target.cpu;
	/* its sampling events and buffers are of no more use */
	record_release(r1);
	memset(r1, 0, sizeof(*r1));
	return 0;
}

/* Phase 1 (unless --phase1 gave its file): sample, while the probes'
 * cost is measured. */
static int auto_phase1(struct auto_run *a)
{
	if (a->o->phase1) {
		if (a->o->attach && duration_left(a) <= 0) {
			keep_phase1(a->o, "--duration ended in phase 1");
			return auto_end(a, 0);
		}
		return 0;
	}
	if (start_calibration(a))
		return 1;
	phase1_init(a);
	a->p1code = record_one(&a->r1, a->argc, a->argv);
	a->ran_phase1 = a->r1.output.file.committed;
	a->r1_start_ns = a->r1.target.start_ns;
	a->p1_end = a->r1.outcome.trailer;
	a->p1_end.present = a->r1.outcome.finished; /* (a reader's field: whole) */
	a->p1_end_ns = a->r1.phase.ended_ns;
	a->p1_done_ns = monotonic_ns();
	a->run_secs = (double)(monotonic_ns() - a->r1_start_ns) / 1e9;
	if (phase1_outcome(a))
		return 1;
	return phase1_hand_over(a);
}

/* Per function kept by select_planned() (in its order), the calls the
 * plan expects in a run. */
static double *planned_calls(const struct vp_plan *p, size_t n)
{
	double *calls = xcalloc(n ? n : 1, sizeof(*calls));
	size_t j = 0;

	for (size_t i = 0; i < p->nfuncs && j < n; i++)
		if (p->funcs[i].why == VP_PLAN_PROBED)
			calls[j++] = p->funcs[i].calls;
	return calls;
}

/* Phase 2's plan: what to probe, from phase 1's file (and --list); a
 * plan that failed leaves phase 2 to end as one that failed. */
static int auto_plan(struct auto_run *a)
{
	const struct record_opts *o = a->o;
	struct record *r2 = &a->r2;
	int err;

	if (o->attach && !o->quiet && !o->list)
		info("phase 2 of 2: probing process %d (%s)", (int)o->attach, r2->target.path);
	else if (!o->quiet && !o->list)
		info("phase 2 of 2: probing '%s'%s", a->prog,
		     r2->target.child ? " (the same run)" : "");
	err = record_calibrate(r2);
	if (!err)
		err = select_planned(r2);
	a->planned = !err;
	if (a->planned)
		a->est_calls = planned_calls(&r2->phase.plan, r2->hdr.nfuncs);
	if (!err)
		err = record_prepare_probes(r2);
	a->planned_ns = monotonic_ns();
	if (r2->outcome.listed && r2->target.child) {
		/* --list: no phase 2, and phase 1's program has served its turn */
		kill(r2->opts.attach, SIGKILL);
		while (waitpid(r2->opts.attach, NULL, 0) < 0 && errno == EINTR)
			;
		r2->target.gone = 1;
	}
	if (r2->outcome.listed)
		return auto_end(a, 0);
	a->plan_failed = err < 0;
	return 0;
}

/*
 * Right before phase 2: the program ran on while phase 2 was planned, and
 * may be over - a process that has ended has nothing to probe (opening
 * its events fails with ESRCH), so it runs again as if it had ended in
 * phase 1; and what is left of --duration is phase 2's.
 */
static int auto_phase2_ready(struct auto_run *a)
{
	const struct record_opts *o = a->o;
	struct record *r2 = &a->r2;
	double left;
	int status = 0, ended;

	if (a->plan_failed)
		return 0;
	ended = r2->target.child && child_ended(r2->opts.attach, &status);
	if (record_nsignals && a->ran_phase1)
		return interrupted_before_phase2(a, r2->target.child ? r2->opts.attach : 0, status,
						 ended);
	if (ended) {
		a->p1code = exit_code_of(status);
		record_procs_release(&r2->target.procs);
		memset(&r2->target.procs, 0, sizeof(r2->target.procs));
		r2->opts.attach = 0;
		r2->target.child = 0;
		if (duration_left(a) <= 0) {
			keep_phase1(o, "--duration ended before phase 2");
			return auto_end(a, a->p1code);
		}
		if (run_again(a, "while phase 2 was planned", 0,
			      (double)(monotonic_ns() - a->r1_start_ns) / 1e9))
			return 1;
	}
	if (!o->attach && !r2->target.child)
		return 0;
	left = duration_left(a);
	if (left == HUGE_VAL)
		return 0;
	r2->opts.duration = left;
	if (left > 0)
		return 0;
	keep_phase1(o, "--duration ended before phase 2");
	if (!r2->target.child)
		return auto_end(a, 0);
	r2->target.gone = 1;
	return auto_end(a, exit_code_of(interrupt_child(r2->opts.attach, SIGINT)));
}

/* Phase 2: probe, and the exit status - phase 1 kept if it did not start. */
static int auto_phase2(struct auto_run *a)
{
	const struct record_opts *o = a->o;
	struct record *r2 = &a->r2;
	int status, code = a->plan_failed;

	if (!a->plan_failed && !record_nsignals) {
		r2->status.phase = 2;
		r2->status.t0 = a->r1_start_ns;
		record_run(r2, a->argc, a->argv);
		code = r2->outcome.status;
		auto_print_latency(a);
		auto_print_own_cost(a);
	}
	if (r2->outcome.finished || r2->output.file.committed)
		return auto_end(a, auto_check_timed(a, code));
	/* interrupted while it was getting ready */
	if (record_nsignals && a->ran_phase1 && !a->plan_failed)
		return interrupted_before_phase2(
			a, r2->target.child && !r2->target.gone ? r2->opts.attach : 0, 0, 0);
	if (r2->target.child && !r2->target.gone) {
		/* phase 2 never started: the program still runs its course */
		while (waitpid(r2->opts.attach, &status, 0) < 0 && errno == EINTR)
			;
		keep_phase1(o, "phase 2 failed");
		/* nothing was timed: no success, whatever the program did */
		return auto_end(a, exit_code_of(status) ? exit_code_of(status) : 1);
	}
	if (!a->ran_phase1)
		return auto_end(a, code);
	keep_phase1(o, "phase 2 failed");
	return auto_end(a, code ? code : 1);
}

/*
 * Auto mode (Kumar et al. 2008, §2.2): sample the program, then probe only
 * what the samples found significant within the budget, in the same run
 * where it can; or, attached to a running process, sample it for a while,
 * then probe it.  Both phases go into the one output file.  Whatever
 * stops phase 2 from happening, phase 1 is kept.
 */
int record_auto(const struct record_opts *o, const char *prog, int argc, char **argv)
{
	struct auto_run a;

	memset(&a, 0, sizeof(a));
	a.o = o;
	a.prog = prog;
	a.argc = argc;
	a.argv = argv;
	a.t0 = monotonic_ns();
	a.in_off = lseek(STDIN_FILENO, 0, SEEK_CUR);
	a.self_cpu0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	recording_init(&a.r2, &a, MODE_PROBE);
	if (!auto_prepare(&a) && !auto_phase1(&a) && !auto_plan(&a) && !auto_phase2_ready(&a))
		auto_phase2(&a);
	/* phase 2 interrupted: its file is whole */
	if (a.r2.outcome.finished)
		record_summary_interrupted(a.r1_start_ns ? a.r1_start_ns : a.r2.target.start_ns,
					   o->quiet);
	if (a.calibrating)
		pthread_join(a.calib_thread, NULL);
	vp_bpf_probes_unpreload(); /* if phase 2 did not take it */
	record_release(&a.r1);
	record_release(&a.r2);
	free(a.est_calls);
	return a.code;
}
