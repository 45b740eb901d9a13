/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * detach.h - a helper process that lets go of varperf: it holds nothing
 * of varperf's but what it is given, so that it neither keeps a pipe, a
 * terminal, a file or a directory (an unmount) busy, nor keeps alive what
 * varperf's own descriptors hold (events, BPF links) once varperf is gone.
 */
#ifndef VARPERF_DETACH_H
#define VARPERF_DETACH_H

#include <stddef.h>
#include <sys/types.h>

/**
 * vp_detach_fork - fork a helper named @name (at most 15 bytes, as ps
 * shows it) in a session of its own, its working directory "/", its
 * standard input and outputs on /dev/null and every other descriptor
 * closed but the @nkeep of @keep.  Returns the helper's pid in varperf,
 * 0 in the helper, or -errno.  The helper is a copy of a process that
 * may have threads: it may call only what is async-signal-safe (system
 * calls, no stdio, no allocation) and must end with _exit().
 */
pid_t vp_detach_fork(const char *name, const int *keep, size_t nkeep);

#endif
