/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * launch.c - fork the target, hold it before exec on a pipe while the
 * probes are opened, and report a failed exec through a close-on-exec pipe.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perf-collector/kernel/launch.h"
#include "util/util.h"

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
	ssize_t n;
	char c;
	int e;

	/*
	 * Until exec the child has varperf's handlers: a Ctrl-C while it
	 * waits only interrupts the read (varperf decides), and exec resets
	 * them to the defaults.  What varperf ignores (SIGPIPE) exec would
	 * keep ignored: give the program the default.
	 */
	do
		n = read(go, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(127); /* varperf gave up (or died): run nothing */
	close(go);
	signal(SIGPIPE, SIG_DFL);
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

/*
 * /proc/@pid/stat into @buf: 0 and in *@fields the text after the name,
 * " S ppid ..." (field 3 on; the name may hold spaces and parentheses),
 * or -errno.
 */
static int read_stat(pid_t pid, char *buf, size_t len, char **fields)
{
	char path[64];
	ssize_t n;
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	err = n < 0 ? -errno : -ENODATA;
	close(fd);
	if (n <= 0)
		return err;
	buf[n] = '\0';
	*fields = strrchr(buf, ')');
	return *fields && (*fields)[1] == ' ' ? 0 : -ENODATA;
}

/* Whether @pid has exited and waits for its parent to reap it. */
static int is_zombie(pid_t pid)
{
	char buf[512], *f;

	return read_stat(pid, buf, sizeof(buf), &f) == 0 && f[2] == 'Z';
}

int vp_proc_start_stack(pid_t pid, uint64_t *ret)
{
	char buf[1024], *p;
	int field, err = read_stat(pid, buf, sizeof(buf), &p);

	if (err)
		return err;
	/* to field 28 (proc(5)) */
	for (field = 2; p && field < 28; field++)
		p = strchr(p + 1, ' ');
	if (!p)
		return -ENODATA;
	*ret = strtoull(p + 1, NULL, 10);
	return *ret ? 0 : -ENODATA;
}

int vp_attach_check(pid_t pid, char **exe)
{
	char path[64], buf[PATH_MAX];
	ssize_t n;

	if (pid <= 0)
		return -ESRCH;
	if (pid == getpid())
		return -EINVAL;
	if (kill(pid, 0) < 0)
		return -errno; /* ESRCH, or EPERM: another user's process */
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, buf, sizeof(buf) - 1);
	if (n < 0 && errno == ENOENT && is_zombie(pid))
		return -ECHILD;
	if (n < 0)
		/* kernel threads have no executable */
		return errno == ENOENT ? -ENOEXEC : -errno;
	buf[n] = '\0';
	*exe = xstrdup(buf);
	return 0;
}

int vp_task_list(pid_t pid, pid_t **ret)
{
	char path[64];
	struct dirent *d;
	pid_t *v = NULL;
	int n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((d = readdir(dir))) {
		char *end;
		long tid = strtol(d->d_name, &end, 10);

		if (*end || tid <= 0)
			continue;
		v = xrealloc(v, (size_t)(n + 1) * sizeof(*v));
		v[n++] = (pid_t)tid;
	}
	closedir(dir);
	*ret = v;
	return n;
}

int vp_proc_cmdline(pid_t pid, char ***ret)
{
	char path[64], buf[8192];
	char **argv = NULL;
	int argc = 0, fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(buf + i) + 1) {
		argv = xrealloc(argv, (size_t)(argc + 2) * sizeof(*argv));
		argv[argc++] = xstrdup(buf + i);
	}
	if (!argv)
		argv = xcalloc(1, sizeof(*argv));
	argv[argc] = NULL;
	*ret = argv;
	return argc;
}

int vp_pidfd_open(pid_t pid)
{
#ifdef SYS_pidfd_open
	long fd = syscall(SYS_pidfd_open, pid, 0);

	return fd < 0 ? -errno : (int)fd;
#else
	(void)pid;
	return -ENOSYS;
#endif
}
