/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * output.c - the data file "varperf record" writes: checked, created
 * unnamed, named once the recording begins (see output.h).
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/output.h"
#include "util/util.h"

static const char *kind_of(mode_t m)
{
	if (S_ISCHR(m))
		return "character device";
	if (S_ISBLK(m))
		return "block device";
	if (S_ISFIFO(m))
		return "FIFO";
	if (S_ISSOCK(m))
		return "socket";
	if (S_ISDIR(m))
		return "directory";
	return "special file";
}

/*
 * The file @name stands for: itself, or the regular file its symbolic
 * link names (that file is replaced, the link stays).  Returns a
 * malloc'ed path, or NULL after printing why not.
 */
static char *resolve(const char *name)
{
	struct stat st;
	char *path;

	if (lstat(name, &st) < 0) {
		if (errno == ENOENT || errno == ENOTDIR) {
			/* a new file: its directory must exist (said by create) */
			return xstrdup(name);
		}
		error("cannot write '%s': %s", name, strerror(errno));
		return NULL;
	}
	if (S_ISREG(st.st_mode))
		return xstrdup(name);
	if (!S_ISLNK(st.st_mode)) {
		error("cannot write '%s': it is a %s, not a regular file", name,
		      kind_of(st.st_mode));
		return NULL;
	}
	if (stat(name, &st) < 0) {
		error("cannot write '%s': it is a symbolic link to nothing (%s)", name,
		      strerror(errno));
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		error("cannot write '%s': it is a symbolic link to a %s, not to a regular file",
		      name, kind_of(st.st_mode));
		return NULL;
	}
	path = realpath(name, NULL);
	if (!path)
		error("cannot write '%s': %s", name, strerror(errno));
	return path;
}

/* The directory @path is in (malloc'ed). */
static char *dir_of(const char *path)
{
	const char *s = strrchr(path, '/');

	if (!s)
		return xstrdup(".");
	if (s == path)
		return xstrdup("/");
	return xasprintf("%.*s", (int)(s - path), path);
}

/* Fail before the costly part when the data file cannot be created. */
int vp_output_check(const char *name)
{
	char *path = resolve(name), *dir;
	int ret = 0;

	if (!path)
		return -1;
	/* the new file goes into its directory, an existing one is replaced */
	dir = dir_of(path);
	if (access(path, W_OK) < 0 && errno != ENOENT)
		ret = error("cannot create '%s': %s", name, strerror(errno));
	else if (access(dir, W_OK | X_OK) < 0)
		ret = error("cannot create '%s': %s", name, strerror(errno));
	free(dir);
	free(path);
	return ret;
}

int vp_output_same(const char *a, const char *b)
{
	struct stat x, y;

	return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev &&
	       x.st_ino == y.st_ino;
}

/*
 * A name next to @path that nothing has: @path.vp-XXXXXX.  Returns it
 * (malloc'ed) once @try succeeds on it, or NULL with errno set.
 */
static char *unused_name(const char *path, int (*try)(const char *name, void *ctx), void *ctx)
{
	static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned long long v = (unsigned long long)getpid() * 2654435761ULL ^
			       (unsigned long long)time(NULL);

	for (int attempt = 0; attempt < 100; attempt++) {
		char *name = xasprintf("%s.vp-XXXXXX", path);
		char *x = name + strlen(name) - 6;
		struct timespec ts;
		int err;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		v = v * 6364136223846793005ULL + (unsigned long long)ts.tv_nsec + 1;
		for (int i = 0; i < 6; i++)
			x[i] = digits[(v >> (8 * i + 3)) % (sizeof(digits) - 1)];
		if (try(name, ctx) == 0)
			return name;
		err = errno;
		free(name);
		errno = err;
		if (err != EEXIST)
			return NULL;
	}
	errno = EEXIST;
	return NULL;
}

static int try_create(const char *name, void *ctx)
{
	int *fd = ctx;

	/* 0666: the kernel applies the umask, as to any new file */
	*fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	return *fd < 0 ? -1 : 0;
}

int vp_output_create(struct vp_output *o, const char *name)
{
	char *dir;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->path = resolve(name);
	if (!o->path)
		return -1;
	dir = dir_of(o->path);
	o->fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
	/*
	 * Without O_TMPFILE (EOPNOTSUPP; EISDIR from kernels before 3.11):
	 * a temporary name, which a varperf killed before the recording
	 * begins leaves behind.
	 */
	if (o->fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL))
		o->tmp = unused_name(o->path, try_create, &o->fd);
	if (o->fd < 0) {
		error("cannot create '%s': %s", name, strerror(errno));
		free(dir);
		free(o->path);
		memset(o, 0, sizeof(*o));
		o->fd = -1;
		return -1;
	}
	free(dir);
	o->name = xstrdup(name);
	return 0;
}

static int try_link(const char *name, void *ctx)
{
	const int *fd = ctx;
	char proc[64];

	/* AT_EMPTY_PATH wants CAP_DAC_READ_SEARCH; /proc's link does not */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", *fd);
	if (linkat(AT_FDCWD, proc, AT_FDCWD, name, AT_SYMLINK_FOLLOW) == 0)
		return 0;
	if (errno == ENOENT && linkat(*fd, "", AT_FDCWD, name, AT_EMPTY_PATH) == 0)
		return 0;
	return -1;
}

int vp_output_commit(struct vp_output *o)
{
	struct stat st;

	if (o->committed)
		return 0;
	/* what is there now must still be a regular file (or nothing) */
	if (lstat(o->path, &st) == 0 && !S_ISREG(st.st_mode))
		return error("cannot write '%s': it is now a %s, not a regular file", o->name,
			     S_ISLNK(st.st_mode) ? "symbolic link" : kind_of(st.st_mode));
	if (!o->tmp) {
		/* nothing there: the name at once */
		if (try_link(o->path, &o->fd) == 0)
			goto done;
		if (errno != EEXIST)
			goto fail;
		o->tmp = unused_name(o->path, try_link, &o->fd);
		if (!o->tmp)
			goto fail;
	}
	if (rename(o->tmp, o->path) < 0) {
		int err = errno;

		unlink(o->tmp);
		errno = err;
		goto fail;
	}
done:
	free(o->tmp);
	o->tmp = NULL;
	o->committed = 1;
	return 0;
fail:
	return error("cannot create '%s': %s", o->name, strerror(errno));
}

void vp_output_release(struct vp_output *o)
{
	if (!o->name)
		return;
	close(o->fd);
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	free(o->path);
	free(o->name);
	memset(o, 0, sizeof(*o));
	o->fd = -1;
}
