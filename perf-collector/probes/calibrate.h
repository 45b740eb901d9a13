/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * calibrate.h - measure what one probed call costs on this machine, for
 * each class of probed first instruction.
 */
#ifndef VARPERF_CALIBRATE_H
#define VARPERF_CALIBRATE_H

#include "core/datafile.h"

enum { VP_CALIBRATE_NCOSTS = 2 };

/**
 * vp_calibrate - run two known functions in a helper process, unprobed and
 * then with entry and exit probes, and derive for VP_INSN_EMULATED and
 * VP_INSN_STEPPED (the class of the entry's instruction) the time the
 * probes add inside the probed call's own window (in_window_ns) and to its
 * caller (full_ns).  The exits are return probes, or with @exit_sites
 * probes on the functions' ret instructions (single-stepped by the
 * kernel), as a recording with --exit-probes=ret places them, on the BPF
 * backend with @bpf (its links, its cost), else perf_event uprobes.  The
 * functions run from a private copy (a memfd): probes of other varperf
 * runs cannot reach them, nor ours other runs.  Fills @costs (room for
 * VP_CALIBRATE_NCOSTS) and returns how many it filled, or -errno (-EACCES
 * and -EPERM when the probes cannot be opened, after printing why; other
 * failures are for a warning, some printed too).  A second call replaces
 * the first calibration, and its tracking.
 */
int vp_calibrate(struct vp_probe_cost *costs, int exit_sites, int bpf);

/*
 * The cost of a trap drifts with the machine's load (15-22 us for a
 * single-step in a VM from one second to the next), so a calibration made
 * before recording does not describe the recording.  The calibration keeps
 * its code and probes until vp_calibrate_done(), and vp_calibrate_track(),
 * called now and then while recording (ten probed calls of each function
 * in varperf itself, some 100 us), pools samples; vp_calibrate_tracked()
 * gives costs from those (the full cost measured, the in-window part
 * scaled with it) once there are as many as the calibration had (500 per
 * class, some 3 s of tracking every 50 ms), or returns 0: keep the
 * calibration's.
 */
void vp_calibrate_track(void);
int vp_calibrate_tracked(struct vp_probe_cost *costs);
void vp_calibrate_done(void);

#endif
