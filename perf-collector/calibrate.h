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
 * then with entry and return probes, and derive for VP_INSN_EMULATED and
 * VP_INSN_STEPPED the time a probe adds inside the probed call's own window
 * (in_window_ns) and to its caller (full_ns).  Fills @costs (room for
 * VP_CALIBRATE_NCOSTS) and returns how many it filled, or -errno (-EACCES
 * and -EPERM after printing why; other failures are for a warning).
 */
int vp_calibrate(struct vp_probe_cost *costs);

#endif
