/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * launch.c - fork the target, hold it before exec on a pipe while the
 * probes are opened, and report a failed exec through a close-on-exec pipe.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch.h"
#include "util.h"

static int is_executable_file(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EACCES;
	return access(path, X_OK) < 0 ? -errno : 0;
}

int vp_resolve_program(const char *prog, char **ret)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL;
	int err = -ENOENT;

	if (!*prog)
		return -ENOENT;
	if (strchr(prog, '/')) {
		err = is_executable_file(prog);
		if (!err)
			*ret = xstrdup(prog);
		return err;
	}
	if (!path)
		path = "/bin:/usr/bin";
	/* strtok would drop empty entries, which mean the current directory. */
	copy = xstrdup(path);
	for (char *p = copy; p; p = save) {
		char *cand;
		int e;

		save = strchr(p, ':');
		if (save)
			*save++ = '\0';
		dir = *p ? p : ".";
		cand = xasprintf("%s/%s", dir, prog);
		e = is_executable_file(cand);
		if (!e) {
			*ret = cand;
			free(copy);
			return 0;
		}
		/* Like execvp: EACCES wins over ENOENT when nothing runs. */
		if (e == -EACCES)
			err = e;
		free(cand);
	}
	free(copy);
	return err;
}

static void child(int go, int report, const char *path, char *const argv[])
{
	char c;
	int e;

	/* Forked before varperf installs any signal handler, so the target
	 * gets varperf's own dispositions and mask, as from a shell. */
	if (read(go, &c, 1) != 1)
		_exit(127); /* varperf gave up (or died): run nothing */
	close(go);
	execv(path, argv);
	e = errno;
	if (write(report, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

int vp_launch_fork(struct vp_launch *l, const char *path, char *const argv[])
{
	int go[2], report[2], err;

	if (pipe2(go, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(report, O_CLOEXEC) < 0) {
		err = -errno;
		goto out_go;
	}
	l->pid = fork();
	if (l->pid < 0) {
		err = -errno;
		goto out_report;
	}
	if (l->pid == 0) {
		close(go[1]);
		close(report[0]);
		child(go[0], report[1], path, argv);
	}
	close(go[0]);
	close(report[1]);
	l->go_fd = go[1];
	l->err_fd = report[0];
	return 0;
out_report:
	close(report[0]);
	close(report[1]);
out_go:
	close(go[0]);
	close(go[1]);
	return err;
}

int vp_launch_release(struct vp_launch *l)
{
	ssize_t n;
	int e = 0;

	if (write(l->go_fd, "g", 1) != 1)
		e = errno;
	close(l->go_fd);
	l->go_fd = -1;
	do
		n = read(l->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(l->err_fd);
	l->err_fd = -1;
	if (n == 0 && !e)
		return 0;
	if (n != (ssize_t)sizeof(e) && !e)
		e = EIO;
	while (waitpid(l->pid, NULL, 0) < 0 && errno == EINTR)
		;
	return -e;
}

void vp_launch_abort(struct vp_launch *l)
{
	if (l->go_fd >= 0)
		close(l->go_fd);
	if (l->err_fd >= 0)
		close(l->err_fd);
	l->go_fd = l->err_fd = -1;
	while (waitpid(l->pid, NULL, 0) < 0 && errno == EINTR)
		;
}
