/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * user-inject.h - make a stopped, traced process (ptrace) run system calls
 * of varperf's choosing, and write into its memory: how the user backend
 * maps its regions into the target without loading anything into it.
 */
#ifndef VARPERF_USER_INJECT_H
#define VARPERF_USER_INJECT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

struct vp_uinject {
	pid_t tid;			/* the thread that runs them */
	int mem;			/* /proc/PID/mem, read and write */
	struct user_regs_struct saved;	/* its registers before */
	uint64_t at;			/* where the syscall instruction is put */
	uint64_t orig;			/* the 8 bytes there before */
	int active;
	int sig;			/* a signal that came meanwhile, to deliver */
};

/**
 * vp_uinject_begin - get ready to inject into thread @tid of process @pid,
 * which must be in a ptrace stop (varperf its tracer): its registers and
 * the bytes at its instruction pointer are saved, a syscall instruction
 * put there.  0 or -errno.
 */
int vp_uinject_begin(struct vp_uinject *in, pid_t pid, pid_t tid);

/* Run system call @nr with @a in the thread: its return value (a negative
 * errno on failure), or -errno when the thread could not be run (say
 * -ESRCH: it was killed). */
long vp_uinject_syscall(struct vp_uinject *in, long nr, const long a[6]);

/* Put the thread's registers and code back as they were: 0 or -errno.
 * A signal that arrived meanwhile is in in->sig, for the detach to
 * deliver. */
int vp_uinject_end(struct vp_uinject *in);

/* Write and read @n bytes at @addr of the process whose /proc/PID/mem is
 * @mem (the kernel copies the pages it writes: other processes of the
 * same file keep theirs).  0 or -errno. */
int vp_umem_write(int mem, uint64_t addr, const void *buf, size_t n);
int vp_umem_read(int mem, uint64_t addr, void *buf, size_t n);

#endif
