// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * user-inject.c - system calls run by a traced thread on varperf's behalf:
 * a syscall instruction in place of the bytes at its instruction pointer,
 * the call's number and arguments in its registers, one single-step, and
 * everything put back.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perf-collector/probes/user-inject.h"

int vp_umem_write(int mem, uint64_t addr, const void *buf, size_t n)
{
	ssize_t w = pwrite(mem, buf, n, (off_t)addr);

	if (w < 0)
		return -errno;
	return (size_t)w == n ? 0 : -EIO;
}

int vp_umem_read(int mem, uint64_t addr, void *buf, size_t n)
{
	ssize_t r = pread(mem, buf, n, (off_t)addr);

	if (r < 0)
		return -errno;
	return (size_t)r == n ? 0 : -EIO;
}

#if defined(__x86_64__)
int vp_uinject_begin(struct vp_uinject *in, pid_t pid, pid_t tid)
{
	static const unsigned char sc[2] = { 0x0f, 0x05 };
	char path[64];
	int err;

	memset(in, 0, sizeof(*in));
	in->tid = tid;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	in->mem = open(path, O_RDWR | O_CLOEXEC);
	if (in->mem < 0)
		return -errno;
	if (ptrace(PTRACE_GETREGS, tid, NULL, &in->saved) < 0) {
		err = -errno;
		goto fail;
	}
	in->at = in->saved.rip;
	err = vp_umem_read(in->mem, in->at, &in->orig, sizeof(in->orig));
	if (!err)
		err = vp_umem_write(in->mem, in->at, sc, sizeof(sc));
	if (err)
		goto fail;
	in->active = 1;
	return 0;
fail:
	close(in->mem);
	in->mem = -1;
	return err;
}

long vp_uinject_syscall(struct vp_uinject *in, long nr, const long a[6])
{
	struct user_regs_struct r;
	int status;

	/*
	 * Twice at most: stopped at its exec, the first step only ends the
	 * execve (its result overwrites %rax), before any instruction ran.
	 */
	for (int tries = 0; tries < 2; tries++) {
		r = in->saved;
		r.rip = in->at;
		r.rax = (unsigned long long)nr;
		/* no system call to restart: the one the thread was in, if
		 * any, gets its registers back in vp_uinject_end() */
		r.orig_rax = (unsigned long long)-1;
		r.rdi = (unsigned long long)a[0];
		r.rsi = (unsigned long long)a[1];
		r.rdx = (unsigned long long)a[2];
		r.r10 = (unsigned long long)a[3];
		r.r8 = (unsigned long long)a[4];
		r.r9 = (unsigned long long)a[5];
		if (ptrace(PTRACE_SETREGS, in->tid, NULL, &r) < 0 ||
		    ptrace(PTRACE_SINGLESTEP, in->tid, NULL, NULL) < 0)
			return -errno;
		for (;;) {
			if (waitpid(in->tid, &status, __WALL) < 0)
				return -errno;
			if (WIFEXITED(status) || WIFSIGNALED(status))
				return -ESRCH;
			if (WIFSTOPPED(status) && WSTOPSIG(status) == SIGTRAP)
				break;
			/* another signal came first: kept for the detach to deliver */
			if (WIFSTOPPED(status) && !in->sig)
				in->sig = WSTOPSIG(status);
			if (ptrace(PTRACE_SINGLESTEP, in->tid, NULL, NULL) < 0)
				return -errno;
		}
		if (ptrace(PTRACE_GETREGS, in->tid, NULL, &r) < 0)
			return -errno;
		if (r.rip == in->at + 2)
			return (long)r.rax;
	}
	return -EIO;
}

int vp_uinject_end(struct vp_uinject *in)
{
	int err = 0;

	if (!in->active)
		return 0;
	in->active = 0;
	err = vp_umem_write(in->mem, in->at, &in->orig, sizeof(in->orig));
	if (ptrace(PTRACE_SETREGS, in->tid, NULL, &in->saved) < 0 && !err)
		err = -errno;
	close(in->mem);
	in->mem = -1;
	return err;
}
#else
int vp_uinject_begin(struct vp_uinject *in, pid_t pid, pid_t tid)
{
	(void)pid;
	memset(in, 0, sizeof(*in));
	in->tid = tid;
	in->mem = -1;
	return -ENOSYS;
}

long vp_uinject_syscall(struct vp_uinject *in, long nr, const long a[6])
{
	(void)in, (void)nr, (void)a;
	return -ENOSYS;
}

int vp_uinject_end(struct vp_uinject *in)
{
	(void)in;
	return 0;
}
#endif
