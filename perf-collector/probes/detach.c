/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * detach.c - a helper process that lets go of varperf (see detach.h).
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "perf-collector/probes/detach.h"
#include "util/util.h"

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Close every descriptor from 3 up but @keep (sorted, @n of them). */
static void close_others(const int *keep, size_t n)
{
	unsigned int from = 3;

	for (size_t i = 0; i <= n; i++) {
		unsigned int to = i < n ? (unsigned int)keep[i] : UINT_MAX;

		if (i < n && (keep[i] < 3 || (unsigned int)keep[i] < from))
			continue;
		if (to > from && syscall(SYS_close_range, from, to - 1, 0) < 0) {
			/* (Linux 5.9 on; before, one by one up to the limit) */
			long max = sysconf(_SC_OPEN_MAX);

			for (long fd = from; fd < (to == UINT_MAX ? max : (long)to); fd++)
				close((int)fd);
		}
		from = to == UINT_MAX ? to : to + 1;
	}
}

pid_t vp_detach_fork(const char *name, const int *keep, size_t nkeep)
{
	/* sorted before the fork: the helper may not allocate */
	int *sorted = xcalloc(nkeep ? nkeep : 1, sizeof(*sorted));
	int done[2], fd;
	pid_t pid;
	char c;

	for (size_t i = 0; i < nkeep; i++)
		sorted[i] = keep[i];
	qsort(sorted, nkeep, sizeof(*sorted), cmp_int);
	if (pipe2(done, O_CLOEXEC) < 0) {
		free(sorted);
		return -errno;
	}
	pid = fork();
	if (pid != 0) {
		int err = errno;
		ssize_t n;

		free(sorted);
		close(done[1]);
		/*
		 * Until the helper has run, it is in varperf's directory with
		 * its descriptors: on a busy host for long enough that an
		 * umount right after varperf ends fails.  It closes its end
		 * of the pipe last.
		 */
		while (pid > 0 && ((n = read(done[0], &c, 1)) > 0 || (n < 0 && errno == EINTR)))
			;
		close(done[0]);
		return pid < 0 ? -err : pid;
	}
	/*
	 * Let go of the terminal and of any pipe reading varperf's output
	 * (a shell's $(...) waits for every writer), of the directory
	 * varperf ran in (umount), and of every descriptor of varperf's.
	 */
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
	}
	if (chdir("/") < 0) {
		/* no "/" to enter: stay, the rest still holds */
	}
	setsid();
	prctl(PR_SET_NAME, name);
	close_others(sorted, nkeep); /* done[1] too: varperf goes on */
	return 0;
}
