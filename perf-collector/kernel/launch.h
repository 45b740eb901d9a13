/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * launch.h - start the target stopped before exec, so that every probe is
 * in place before its first instruction runs.
 */
#ifndef VARPERF_LAUNCH_H
#define VARPERF_LAUNCH_H

#include <stdint.h>
#include <sys/types.h>

struct vp_launch {
	pid_t pid;
	int go_fd;  /* writing one byte here lets the child exec */
	int err_fd; /* close-on-exec pipe: EOF = exec worked, else its errno */
};

/**
 * vp_resolve_program - find @prog like execvp(3): as given when it holds a
 * '/', else in $PATH (default "/bin:/usr/bin").  Returns 0 and a malloc'ed
 * path in @ret, or -ENOENT/-EACCES.
 */
int vp_resolve_program(const char *prog, char **ret);

/**
 * vp_launch_fork - fork a child that waits for vp_launch_release() and
 * then executes @path with @argv.  Fork before opening anything, so the
 * target inherits only varperf's own standard streams and inherited fds.
 * Returns 0 or -errno.
 */
int vp_launch_fork(struct vp_launch *l, const char *path, char *const argv[]);

/**
 * vp_launch_release - let the child exec and wait until it has.  Returns 0
 * once the new program runs, or the exec's -errno (the child has exited
 * with status 127 and been reaped).
 */
int vp_launch_release(struct vp_launch *l);

/* Make the child exit without running anything and reap it. */
void vp_launch_abort(struct vp_launch *l);

/* ---- attaching to a running process ---- */

/**
 * vp_attach_check - whether varperf may record the running process @pid.
 * Returns 0 and its executable (malloc'ed) in @exe, or -ESRCH (no such
 * process), -EPERM (not ours: another user's), -ENOEXEC (a kernel thread:
 * no program to record), -ECHILD (it has exited: a zombie), -EINVAL
 * (varperf itself) or another -errno.
 */
int vp_attach_check(pid_t pid, char **exe);
/* The thread ids of @pid from /proc (malloc'ed); their count or -errno. */
int vp_task_list(pid_t pid, pid_t **ret);
/* Where @pid's main stack began at its exec (/proc's startstack: below
 * its argv, environment and auxv, above every frame): 0, or -errno. */
int vp_proc_start_stack(pid_t pid, uint64_t *ret);
/* The command line of @pid: argc and a malloc'ed argv of malloc'ed strings. */
int vp_proc_cmdline(pid_t pid, char ***ret);
/* A pidfd for @pid, readable once it exits; or -errno (old kernel). */
int vp_pidfd_open(pid_t pid);

#endif
