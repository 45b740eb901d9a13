/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * record-auto.h - auto mode's state from one step of its driver to the
 * next (record-auto.c), and what record-timed.c says from it about what
 * was timed.  Private to those two files (see record.h).
 */
#ifndef VARPERF_RECORD_AUTO_H
#define VARPERF_RECORD_AUTO_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "perf-collector/record/record.h"

/*
 * Auto mode's state, from one step to the next (record_auto()): each step
 * returns 0 to go on, or 1 when record ends, its exit status in code.
 */
struct auto_run {
	const struct record_opts *o;
	const char *prog;
	int argc;
	char **argv;
	uint64_t t0;	     /* when record began: --duration counts from here */
	off_t in_off;	     /* where phase 1 began reading its standard input */
	struct record r1, r2; /* phase 1's recording and phase 2's */
	/* the probes' cost, measured in a thread while phase 1 samples */
	pthread_t calib_thread;
	int calibrating, calib_err;
	int ran_phase1;	     /* phase 1's file was made */
	int planned;	     /* r2's functions are the plan's... */
	double *est_calls;   /* ... and per function, the calls it expects */
	int plan_failed;     /* no phase 2 (said): only its end remains */
	int p1code;	     /* the exit code of phase 1's program, if it ended */
	uint64_t r1_start_ns; /* when phase 1's program started */
	struct vp_trailer p1_end; /* phase 1's END chunk, as written */
	/* from phase 1's end to phase 2's start, the same run: when phase 1
	 * left the program running, wrote its file, and phase 2 was planned */
	uint64_t p1_end_ns, p1_done_ns, planned_ns;
	/* varperf's own CPU time (all its threads) when record began, and
	 * the target's in phase 1 of the same run */
	uint64_t self_cpu0, p1_cpu;
	double run_secs;     /* how long it ran, when it ended in phase 1 */
	int code;	     /* record's exit status once a step ends it */
};

/* ---- record-timed.c: what was timed, said ---- */

/*
 * The command that records the functions of phase 2's plan (those left in
 * a->r2's header, but those the watchdog dropped) for the whole of one
 * run: "varperf record --mode=probe -f ... -o ... -- program args" (or
 * "-p pid"); malloc'ed.
 */
char *auto_probe_command(const struct auto_run *a);
/*
 * After phase 2: a recording that timed nothing is no recording of the
 * program's calls - said, with the command that records them, and the
 * exit status @code becomes non-zero; one that timed few calls of a
 * function the plan chose, or covered less than half of the run, says
 * so.  Returns the exit status.
 */
int auto_check_timed(struct auto_run *a, int code);
/* -v: how long the program ran unobserved between the phases. */
void auto_print_latency(const struct auto_run *a);
/* varperf's own CPU time against the program's. */
void auto_print_own_cost(const struct auto_run *a);

#endif
