/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * record-auto.c - "varperf record"'s automatic mode (Kumar et al. 2008,
 * §2.2): phase 1 samples, phase 2 probes only what phase 1 found
 * significant within the overhead budget - and a watchdog measures what
 * the probes really cost while phase 2 runs (see record.h and plan.c).
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

#include "record.h"
#include "util.h"

enum {
	/* attached: what phase 1 needs before phase 2 can be planned */
	PHASE1_MIN_SAMPLES = 200,
	/* phase 1 judges its stack copy after this many samples */
	STACK_CHECK_SAMPLES = 50,
};

/* how far the watchdog lets the measured cost exceed the budget */
static const double WATCHDOG_SLACK = 0.1;

static double func_cost(const struct record *rec, uint32_t f)
{
	return vp_probe_class_cost(rec->hdr.funcs[f].insn_class, rec->hdr.costs, rec->hdr.ncosts);
}

/*
 * Auto mode, phase 2: the plan estimated call counts from samples, which
 * cannot count calls shorter than the sampling period.  So measure: when
 * what the functions still probed have cost so far exceeds the budget's
 * share of the target's CPU time, stop probing the most expensive until
 * the rest fits.  Their calls until then stay in the file, marked as
 * partial; what they cost is spent and no longer counts against the rest.
 */
/*
 * On the BPF backend the kernel counts every entry, recorded or not (a
 * full buffer, a record not read yet): the calls are those counts.
 */
static void count_calls(struct record *rec)
{
	for (uint32_t f = 0; rec->bpf_on && f < rec->hdr.nfuncs; f++)
		rec->calls[f] = vp_bpf_probes_hits(&rec->bpf, f);
}

void record_watchdog(struct record *rec)
{
	uint64_t now = record_now_ns();
	double total = 0, cpu, budget, *cost;
	unsigned char *drop;
	int ndrop = 0;
	char a[32], b[32];

	/*
	 * perf_event uprobes: every 40 ms, from 300 ms on: the first calls of
	 * a process cost more, and a rate needs a few rounds to settle; and
	 * removing a probe takes the kernel a while.  BPF links: from 10 ms
	 * of the target's CPU time on, every round - the counts are exact and
	 * new links replace the old ones in milliseconds.
	 */
	if (rec->bpf_on) {
		record_update_cpu(rec);
		/* 10 ms of CPU give thousands of calls of anything too costly
		 * (an idle target: its calls are counted after 200 ms anyway) */
		if (rec->cpu < 10000000 && now - rec->start_ns < 200000000)
			return;
	} else if (now - (rec->watched_ns ? rec->watched_ns : rec->start_ns) < 40000000 ||
		   now - rec->start_ns < 300000000) {
		return;
	}
	rec->watched_ns = now;
	record_update_cpu(rec);
	count_calls(rec);
	/* the wall time when the CPU time cannot be read */
	cpu = (double)(rec->cpu ? rec->cpu : now - rec->start_ns);
	budget = rec->opts.overhead * cpu;
	cost = xcalloc(rec->hdr.nfuncs, sizeof(*cost));
	drop = xcalloc(rec->hdr.nfuncs, 1);
	for (uint32_t f = 0; f < rec->hdr.nfuncs; f++) {
		if (rec->dropped[f])
			continue;
		cost[f] = (double)rec->calls[f] * func_cost(rec, f);
		total += cost[f];
	}
	pr_debug("watchdog: %.0f ms, CPU %.1f ms, probes still in place cost %.1f ms, budget "
		 "%.1f ms", (double)(now - rec->start_ns) / 1e6, cpu / 1e6, total / 1e6,
		 budget / 1e6);
	/*
	 * A rate measured over a fraction of a second, with a calibrated
	 * cost, is good to some 10 %: act only beyond that, and then drop
	 * the most expensive until the rest fits the budget (all at once:
	 * the kernel takes a while to remove each).
	 */
	if (total <= budget * (1 + WATCHDOG_SLACK))
		goto out;
	while (total > budget) {
		long wf = -1;

		for (uint32_t f = 0; f < rec->hdr.nfuncs; f++)
			if (!rec->dropped[f] && cost[f] > 0 && (wf < 0 || cost[f] > cost[wf]))
				wf = f;
		if (wf < 0)
			break;
		if (!rec->bpf_on)
			vp_probes_drop(&rec->probes, (uint32_t)wf);
		drop[wf] = 1;
		ndrop++;
		rec->dropped[wf] = 1;
		record_write_failed(rec, vp_writer_unprobed(rec->w, (uint32_t)wf, now));
		warning("phase 2: stopped probing '%s' after %llu calls in %s: its probes took "
			"%.1f%% of the target's CPU time, all probes %.1f%%, over the %g%% budget "
			"(calls shorter than the sampling period cannot be counted from samples)",
			rec->hdr.funcs[wf].display, (unsigned long long)rec->calls[wf],
			fmt_duration((double)(now - rec->start_ns), a, sizeof(a)),
			cost[wf] / cpu * 100, total / cpu * 100, rec->opts.overhead * 100);
		total -= cost[wf];
		cost[wf] = 0;
	}
	/* all at once: one new generation of links without them */
	if (ndrop && rec->bpf_on) {
		uint64_t t0 = record_now_ns();

		if (vp_bpf_probes_drop(&rec->bpf, drop, 1) < 0)
			warning("phase 2: the probes over the budget stay: new links failed");
		pr_debug("phase 2: links replaced in %.1f ms",
			 (double)(record_now_ns() - t0) / 1e6);
	}
	/*
	 * The first look decides what was held back: every call, if the
	 * probes fit the budget; if not, nothing from before the costly ones
	 * were gone - those probes stretched every call around theirs, and
	 * the report would show their cost as the program's variance.
	 */
	if (rec->holding && ndrop) {
		uint64_t t = record_now_ns();

		record_discard_before(rec, t);
		if (!rec->opts.quiet)
			info("phase 2: the calls of its first %s are left out: their times hold "
			     "the cost of the probes removed then",
			     fmt_duration((double)(t - rec->start_ns), a, sizeof(a)));
	} else if (rec->hold_ns && ndrop) {
		/* later: what the last rounds held back, since before the look */
		uint64_t t = record_now_ns();
		uint64_t from = record_discard_before(rec, t);

		if (from < rec->start_ns)
			from = rec->start_ns;
		if (!rec->opts.quiet)
			info("phase 2: the calls from %s to %s are left out: their times hold the "
			     "cost of the probes removed then",
			     fmt_duration((double)(from - rec->start_ns), a, sizeof(a)),
			     fmt_duration((double)(t - rec->start_ns), b, sizeof(b)));
	}
out:
	rec->holding = 0;
	free(drop);
	free(cost);
}

/* Auto mode, phase 2: what the probes cost in all, measured, for the file. */
void record_account_cost(struct record *rec, struct vp_trailer *tr)
{
	double total = 0;

	if (!rec->calls || !rec->cpu)
		return;
	count_calls(rec);
	for (uint32_t f = 0; f < rec->hdr.nfuncs; f++)
		total += (double)rec->calls[f] * func_cost(rec, f);
	tr->probe_cost_ns = (uint64_t)total;
	tr->target_cpu_ns = rec->cpu;
	tr->budget_ppm = (uint32_t)(rec->opts.overhead * 1e6 + 0.5);
	if (total > rec->opts.overhead * (double)rec->cpu * (1 + WATCHDOG_SLACK))
		tr->flags |= VP_END_OVER_BUDGET;
}

/* ... and for the user: over the budget, a warning (report repeats it). */
void record_print_measured_cost(const struct record *rec, const struct vp_trailer *tr)
{
	double share;

	if (!tr->target_cpu_ns || !tr->budget_ppm)
		return;
	share = (double)tr->probe_cost_ns / (double)tr->target_cpu_ns * 100;
	if (tr->flags & VP_END_OVER_BUDGET)
		warning("phase 2: the probes cost about %.1f%% of the target's CPU time, over the "
			"%g%% budget: the run took that much longer than the program alone", share,
			rec->opts.overhead * 100);
	else if (!rec->opts.quiet)
		info("phase 2: the probes cost about %.1f%% of the target's CPU time (%g%% budget)",
		     share, rec->opts.overhead * 100);
}

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
int record_phase1_stacks_settled(const struct record *rec)
{
	return rec->nsamples >= STACK_CHECK_SAMPLES ||
	       rec->opts.sampling.stack_size >= VP_STACK_SIZE_MAX || rec->opts.stack_size_given;
}

int record_phase1_stacks(struct record *rec)
{
	uint32_t size = rec->opts.sampling.stack_size, bigger;
	uint64_t n = rec->nsamples, full = rec->full_stacks, elapsed;

	if (n < STACK_CHECK_SAMPLES || full * 10 < n || size >= VP_STACK_SIZE_MAX ||
	    rec->opts.stack_size_given)
		return 0;
	bigger = size * 4 < VP_STACK_SIZE_MAX ? size * 4 : VP_STACK_SIZE_MAX;
	if (rec->announce)
		info("phase 1: %llu of %llu samples filled the %u-byte stack copy (their stacks "
		     "may end short of main): sampling again with %u bytes",
		     (unsigned long long)full, (unsigned long long)n, size, bigger);
	/* the window (and the wait for an idle program) begins anew */
	elapsed = record_now_ns() - rec->start_ns;
	if (rec->window_ns)
		rec->window_ns += elapsed;
	if (rec->until_ns)
		rec->until_ns += elapsed;
	record_resample(rec, bigger);
	return 1;
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
int record_select_planned(struct record *rec)
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
 * Auto mode (Kumar et al. 2008, §2.2): sample a first run, then run again
 * probing only what the samples found significant within the budget; or,
 * attached to a running process, sample it for a while, then probe it.
 * Both phases go into the one output file.  Whatever stops phase 2 from
 * happening, phase 1 is kept.
 */
/* Phase 1 left the program running, and there will be no phase 2. */
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
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void abandon_child(struct record *r1)
{
	if (r1->left_running) {
		kill(r1->pid, SIGKILL);
		waitpid(r1->pid, NULL, 0);
	}
}

struct calib_job {
	struct record *rec;
	int code;
};

static void *calibrate_main(void *arg)
{
	struct calib_job *j = arg;

	j->code = record_calibrate(j->rec);
	return NULL;
}

int record_auto(const struct record_opts *o, const char *prog, int argc, char **argv)
{
	struct calib_job calib = { NULL, 0 };
	pthread_t calib_thread;
	int calibrating = 0;
	struct record r1, r2;
	int ran_phase1 = 0;
	uint64_t t0 = record_now_ns();
	int code, p1code = 0;

	memset(&r1, 0, sizeof(r1));
	memset(&r2, 0, sizeof(r2));
	r2.opts = *o;
	r2.mode = MODE_PROBE;
	r2.prog = prog;
	r2.argc = argc;
	r2.argv = argv;
	if (o->phase1 && vp_output_same(o->phase1, o->output)) {
		error("--phase1 '%s' is also the output: give another -o", o->phase1);
		return USAGE_ERROR;
	}
	/* a wrong file is said at once, not after the calibration */
	if (o->phase1 && vp_plan_check(o->phase1) < 0)
		return 1;
	r2.plan_from = o->phase1;
	/* Nothing to probe (a stripped program, no uprobe PMU) without a
	 * -f asking for something: auto mode samples.  Anything else that
	 * would stop phase 2 stops us before phase 1. */
	r2.can_sample_only = !o->funcs.n && !o->phase1;
	code = record_prepare_static(&r2);
	if (code && r2.unprobeable && r2.can_sample_only && o->list) {
		error("nothing to list: %s", r2.unprobeable);
		goto out;
	}
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
	/*
	 * The probes' cost is measured while phase 1 samples, in a thread:
	 * not before it (the program would start later) nor after it (it
	 * would run unobserved meanwhile).
	 */
	if (!o->phase1) {
		calib.rec = &r2;
		calibrating = pthread_create(&calib_thread, NULL, calibrate_main, &calib) == 0;
		if (!calibrating && (code = record_calibrate(&r2)))
			goto out;
	}
	if (!o->phase1) {
		off_t in_off = lseek(STDIN_FILENO, 0, SEEK_CUR);

		r1.opts = *o;
		r1.opts.quiet = 1;
		r1.mode = MODE_SAMPLE;
		r1.prog = prog;
		r1.announce = !o->quiet;
		r1.min_samples = PHASE1_MIN_SAMPLES;
		if (o->attach) {
			r1.opts.duration = phase1_seconds(o);
			r1.until_ns = o->duration > 0 ? t0 + (uint64_t)(o->duration * 1e9) : 0;
			if (!o->quiet)
				info("phase 1 of 2: sampling process %d (%s) for %.1f s",
				     (int)o->attach, r2.path, r1.opts.duration);
		} else {
			r1.window_ns = (uint64_t)(phase1_window(o) * 1e9);
			/* an idle program: plan from what there is after a while */
			r1.until_ns = record_now_ns() + 10 * r1.window_ns;
			if (!o->quiet)
				info("phase 1 of 2: sampling '%s' for %.2f s, then %s", prog,
				     phase1_window(o),
				     o->list ? "listing what phase 2 would probe"
					     : "probing it in the same run");
		}
		p1code = record_one(&r1, argc, argv);
		ran_phase1 = r1.out.committed;
		if (calibrating) {
			pthread_join(calib_thread, NULL);
			calibrating = 0;
			if (calib.code) {
				abandon_child(&r1);
				if (r1.finished)
					keep_phase1(o, "the probes' cost could not be measured");
				code = calib.code;
				goto out;
			}
		}
		if (!r1.finished) {
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
		if (r1.gone && o->attach) {
			keep_phase1(o, "the process exited in phase 1");
			code = 0;
			goto out;
		}
		/* --duration ended the program: the time asked for is over, a
		 * second run would exceed it */
		if (!r1.left_running && !o->attach && o->duration > 0 &&
		    (double)(record_now_ns() - t0) / 1e9 >= o->duration) {
			keep_phase1(o, "--duration ended in phase 1");
			code = p1code;
			goto out;
		}
		if (r1.left_running) {
			/* phase 2 probes the same process */
			r2.opts.attach = r1.pid;
			r2.child = 1;
		} else if (o->list) {
			/* --list needs no second run: the plan is made */
		} else if (!o->attach && !stdin_again(in_off)) {
			keep_phase1(o, "the program ended within phase 1");
			error("'%s' ended within phase 1 (%.2f s), and a second run cannot read its "
			      "standard input again (a pipe): record it with --mode=probe, or "
			      "give --phase1 a sampling run", prog, phase1_window(o));
			code = 1;
			goto out;
		} else if (!o->attach) {
			if (!o->quiet)
				info("'%s' ended within phase 1: running it again for phase 2", prog);
			if (p1code)
				warning("phase 1: '%s' exited with status %d; phase 2 must do the "
					"same work", prog, p1code);
		}
		r2.plan_from = o->output;
		r2.phase1_stack_size = r1.opts.sampling.stack_size;
		/* the same run: the children phase 1 followed are phase 2's too */
		if (r1.left_running) {
			r2.procs = r1.procs;
			memset(&r1.procs, 0, sizeof(r1.procs));
		}
		/* its sampling events and buffers are of no more use */
		record_release(&r1);
		memset(&r1, 0, sizeof(r1));
	}
	if (o->attach && o->duration > 0 &&
	    (double)(record_now_ns() - t0) / 1e9 >= o->duration) {
		keep_phase1(o, "--duration ended in phase 1");
		code = 0;
		goto out;
	}
	if (o->attach && !o->quiet && !o->list)
		info("phase 2 of 2: probing process %d (%s)", (int)o->attach, r2.path);
	else if (!o->quiet && !o->list)
		info("phase 2 of 2: probing '%s'%s", prog, r2.child ? " (the same run)" : "");
	code = record_prepare_probes(&r2);
	if (code < 0 && r2.child) {
		/* --list: no phase 2, and phase 1's program has served its turn */
		kill(r2.opts.attach, SIGKILL);
		while (waitpid(r2.opts.attach, NULL, 0) < 0 && errno == EINTR)
			;
		r2.gone = 1;
	}
	if (!code && (o->attach || r2.child) && o->duration > 0) {
		/* what is left of --duration after phase 1 and the planning */
		r2.opts.duration = o->duration - (double)(record_now_ns() - t0) / 1e9;
		if (r2.opts.duration <= 0) {
			keep_phase1(o, "--duration ended before phase 2");
			code = 0;
			if (r2.child) {
				code = interrupt_child(r2.opts.attach);
				r2.gone = 1;
			}
			goto out;
		}
	}
	if (!code && !record_nsignals)
		code = record_run(&r2, argc, argv);
	if (r2.child && !r2.gone && !r2.finished && !r2.out.committed) {
		/* phase 2 never started: the program still runs its course */
		int status;

		while (waitpid(r2.opts.attach, &status, 0) < 0 && errno == EINTR)
			;
		if (code >= 0) {
			keep_phase1(o, "phase 2 failed");
			code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		}
		goto out;
	}
	if (code < 0) {
		code = 0; /* --list */
	} else if (!r2.finished && ran_phase1 && !r2.out.committed) {
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
	return code < 0 ? 0 : code;
}
