/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * varperf-core.h - the public interface of the analysis library: the data
 * file (datafile.h), running statistics (stats.h), covariance matrices
 * (covar.h), the calling-context tree (cct.h), the pattern analysis
 * (patterns.h) and a recording read and analysed in one call
 * (recording.h).  Functions return 0 or a negative errno and never print
 * or exit: the library also runs inside GDB.
 */
#ifndef VARPERF_CORE_H
#define VARPERF_CORE_H

#include "cct.h"
#include "covar.h"
#include "datafile.h"
#include "patterns.h"
#include "recording.h"
#include "stats.h"

#endif
