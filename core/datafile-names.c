/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * datafile-names.c - the words for the values of varperf.data's fields
 * (sampling events, probed instruction classes, time bases), so that the
 * recorder, the renderers and the GDB plugin call them the same.
 */
#include <config.h>

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "datafile.h"

const char *vp_sample_event_name(uint32_t event)
{
	switch (event) {
	case VP_SEV_CPU_CLOCK:
		return "cpu-clock";
	case VP_SEV_TASK_CLOCK:
		return "task-clock";
	case VP_SEV_CYCLES:
		return "cycles";
	default:
		return "an unknown event";
	}
}

const char *vp_insn_class_name(uint32_t insn_class)
{
	switch (insn_class) {
	case VP_INSN_EMULATED:
		return "emulated";
	case VP_INSN_STEPPED:
		return "single-stepped";
	default:
		return "unknown";
	}
}

const char *vp_header_func_name(const struct vp_header *hdr, uint32_t func)
{
	const struct vp_func *f;

	if (func >= hdr->nfuncs)
		return "?";
	f = &hdr->funcs[func];
	return f->display ? f->display : f->name;
}

static const char *const time_base_names[] = {
	[VP_TIME_WALL] = "wall",
	[VP_TIME_CPU] = "cpu",
	[VP_TIME_OFFCPU] = "offcpu",
	[VP_TIME_BLOCKED] = "blocked",
	[VP_TIME_PREEMPTED] = "preempted",
	[VP_TIME_OWN] = "own",
};

const char *vp_time_base_name(enum vp_time_base base)
{
	if ((size_t)base < sizeof(time_base_names) / sizeof(time_base_names[0]))
		return time_base_names[base];
	return "?";
}

int vp_time_base_parse(const char *name, enum vp_time_base *ret)
{
	for (size_t i = 0; i < sizeof(time_base_names) / sizeof(time_base_names[0]); i++) {
		if (time_base_names[i] && !strcmp(name, time_base_names[i])) {
			*ret = (enum vp_time_base)i;
			return 0;
		}
	}
	return -EINVAL;
}

/* x86-64's numbers of the syscalls a thread is seen to sleep in */
static const struct {
	uint16_t nr;
	const char *name;
} x86_64_syscalls[] = {
	{ 0, "read" },	       { 1, "write" },		{ 2, "open" },
	{ 3, "close" },	       { 7, "poll" },		{ 9, "mmap" },
	{ 11, "munmap" },      { 16, "ioctl" },		{ 17, "pread64" },
	{ 18, "pwrite64" },    { 19, "readv" },		{ 20, "writev" },
	{ 23, "select" },      { 24, "sched_yield" },	{ 26, "msync" },
	{ 34, "pause" },       { 35, "nanosleep" },	{ 40, "sendfile" },
	{ 42, "connect" },     { 43, "accept" },	{ 44, "sendto" },
	{ 45, "recvfrom" },    { 46, "sendmsg" },	{ 47, "recvmsg" },
	{ 56, "clone" },       { 57, "fork" },		{ 59, "execve" },
	{ 61, "wait4" },       { 72, "fcntl" },		{ 73, "flock" },
	{ 74, "fsync" },       { 75, "fdatasync" },	{ 77, "ftruncate" },
	{ 82, "rename" },      { 87, "unlink" },	{ 128, "rt_sigtimedwait" },
	{ 130, "rt_sigsuspend" }, { 187, "readahead" }, { 202, "futex" },
	{ 217, "getdents64" }, { 230, "clock_nanosleep" }, { 231, "exit_group" },
	{ 232, "epoll_wait" }, { 247, "waitid" },	{ 257, "openat" },
	{ 262, "newfstatat" }, { 270, "pselect6" },	{ 271, "ppoll" },
	{ 275, "splice" },     { 281, "epoll_pwait" },	{ 285, "fallocate" },
	{ 288, "accept4" },    { 295, "preadv" },	{ 296, "pwritev" },
	{ 299, "recvmmsg" },   { 307, "sendmmsg" },	{ 327, "preadv2" },
	{ 328, "pwritev2" },   { 332, "statx" },	{ 426, "io_uring_enter" },
	{ 435, "clone3" },     { 441, "epoll_pwait2" },
};

const char *vp_wait_reason_name(const struct vp_header *hdr, uint32_t reason, char *buf,
				size_t len)
{
	const char *host = hdr && hdr->host ? hdr->host : "";
	size_t hl = strlen(host);
	/* the numbers are the recording machine's: named for x86-64 only */
	int x86_64 = hl >= 6 && !strcmp(host + hl - 6, "x86_64");

	if (!reason) {
		snprintf(buf, len, "no syscall");
		return buf;
	}
	for (size_t i = 0; x86_64 && i < sizeof(x86_64_syscalls) / sizeof(x86_64_syscalls[0]);
	     i++) {
		if (x86_64_syscalls[i].nr == reason - 1) {
			snprintf(buf, len, "%s", x86_64_syscalls[i].name);
			return buf;
		}
	}
	snprintf(buf, len, "syscall %u", reason - 1);
	return buf;
}
