/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * calibrate.h - measure what one probed call costs on this machine, for
 * each class of probed first instruction.
 */
#ifndef VARPERF_CALIBRATE_H
#define VARPERF_CALIBRATE_H

#include "../core/datafile.h"

enum { VP_CALIBRATE_NCOSTS = 2 };

/**
 * vp_calibrate - run two known functions in a helper process, unprobed and
 * then with entry and exit probes, and derive for VP_INSN_EMULATED and
 * VP_INSN_STEPPED (the class of the entry's instruction) the time the
 * probes add inside the probed call's own window (in_window_ns) and to its
 * caller (full_ns).  The exits are return probes, or with @exit_sites
 * probes on the functions' ret instructions (single-stepped by the
 * kernel), as a recording with --exit-probes=ret places them.  Fills @costs
 * (room for VP_CALIBRATE_NCOSTS) and returns how many it filled, or -errno
 * (-EACCES and -EPERM after printing why; other failures are for a
 * warning).
 */
int vp_calibrate(struct vp_probe_cost *costs, int exit_sites);

#endif
