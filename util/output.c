/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * output.c - the files varperf commands write: checked, created unnamed
 * beside the output, named once whole (record: once the recording
 * begins), never through another user's symbolic link (see output.h).
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
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
	if (S_ISLNK(m))
		return "symbolic link";
	return "special file";
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

/*
 * Whether the symbolic link @name (@lnk, from lstat) may be followed: the
 * kernel's protected_symlinks rule (a link in a sticky world-writable
 * directory is followed only by its owner, or when the directory's owner
 * owns it too), here for any directory others can write, sticky or not,
 * and whatever fs.protected_symlinks says.
 */
static int link_trusted(const char *name, const struct stat *lnk)
{
	struct stat d;
	char *dir;
	int r;

	if (lnk->st_uid == geteuid())
		return 1;
	dir = dir_of(name);
	r = stat(dir, &d);
	free(dir);
	if (r < 0)
		return 0;
	return lnk->st_uid == d.st_uid || !(d.st_mode & (S_ISVTX | S_IWGRP | S_IWOTH));
}

/*
 * The file @name stands for: itself, or the regular file its symbolic
 * link names (that file is replaced, the link stays).  With @stream, a
 * FIFO or a character device is written as it is (*@direct set; @name is
 * returned, to be opened through a trusted link: /dev/stdout's target is
 * no path).  Returns a malloc'ed path, or NULL after printing why not.
 */
static char *resolve(const char *name, int stream, int *direct)
{
	struct stat st;
	char *path;
	int link;

	*direct = 0;
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
	link = S_ISLNK(st.st_mode);
	if (link && !link_trusted(name, &st)) {
		error("cannot write '%s': it is a symbolic link of another user (uid %u) in a "
		      "directory others can write: not followed",
		      name, (unsigned)st.st_uid);
		return NULL;
	}
	if (link && stat(name, &st) < 0) {
		error("cannot write '%s': it is a symbolic link to nothing (%s)", name,
		      strerror(errno));
		return NULL;
	}
	if (stream && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))) {
		*direct = 1;
		return xstrdup(name);
	}
	if (!S_ISREG(st.st_mode)) {
		if (link)
			error("cannot write '%s': it is a symbolic link to a %s, not to a regular "
			      "file", name, kind_of(st.st_mode));
		else
			error("cannot write '%s': it is a %s, not a regular file", name,
			      kind_of(st.st_mode));
		return NULL;
	}
	path = realpath(name, NULL);
	if (!path)
		error("cannot write '%s': %s", name, strerror(errno));
	return path;
}

/* What vp_output_check() says, for a data file or (@stream) a report. */
static int check(const char *name, int stream)
{
	int direct;
	char *path = resolve(name, stream, &direct), *dir;
	int ret = 0;

	if (!path)
		return -1;
	if (direct) {
		free(path);
		return 0;
	}
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

/* Fail before the costly part when the data file cannot be created. */
int vp_output_check(const char *name)
{
	return check(name, 0);
}

int vp_output_same(const char *a, const char *b)
{
	struct stat x, y;

	return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev &&
	       x.st_ino == y.st_ino;
}

/*
 * The temporary name a fatal signal removes, while a stream's handlers
 * are in place (record has its own, and removes its name itself).
 */
static char *volatile guarded;
static const int guard_signals[] = { SIGHUP, SIGINT, SIGTERM, SIGPIPE };

static void guard_on_signal(int sig)
{
	char *tmp = guarded;

	if (tmp)
		unlink(tmp);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void guard(int on)
{
	guarded = NULL;
	for (size_t i = 0; i < sizeof(guard_signals) / sizeof(guard_signals[0]); i++)
		signal(guard_signals[i], on ? guard_on_signal : SIG_DFL);
}

/* @o's temporary name becomes @tmp (NULL: none), guarded if a stream's. */
static void set_tmp(struct vp_output *o, char *tmp)
{
	guarded = NULL;
	free(o->tmp);
	o->tmp = tmp;
	guarded = tmp;
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

	/* 0666: the kernel applies the umask, as to any new file; O_EXCL
	 * follows no symbolic link */
	*fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	return *fd < 0 ? -1 : 0;
}

/* A FIFO or character device, opened as it is: no file to name later. */
static int create_direct(struct vp_output *o, const char *name, int link)
{
	struct stat st;
	int flags;

	/* O_NONBLOCK: a FIFO no process reads is ENXIO at once, not a wait;
	 * O_NOFOLLOW: a link swapped in since resolve() is not followed */
	o->fd = open(name, O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK | (link ? 0 : O_NOFOLLOW));
	if (o->fd < 0 && errno == ENXIO)
		return error("cannot write '%s': it is a FIFO that no process reads", name);
	if (o->fd < 0)
		return error("cannot open '%s': %s", name, strerror(errno));
	if (fstat(o->fd, &st) < 0 || !(S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)))
		return error("cannot write '%s': it changed while being opened", name);
	flags = fcntl(o->fd, F_GETFL);
	if (flags < 0 || fcntl(o->fd, F_SETFL, flags & ~O_NONBLOCK) < 0)
		return error("cannot open '%s': %s", name, strerror(errno));
	o->direct = 1;
	o->committed = 1;
	return 0;
}

static int create(struct vp_output *o, const char *name, int stream)
{
	struct stat st, lst;
	int keep_mode = -1, direct;
	char *dir;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->path = resolve(name, stream, &direct);
	if (!o->path)
		return -1;
	o->name = xstrdup(name);
	if (lstat(name, &lst) == 0 && S_ISLNK(lst.st_mode)) {
		o->link_dev = lst.st_dev;
		o->link_ino = lst.st_ino;
	}
	if (direct)
		return create_direct(o, name, o->link_ino != 0) < 0 ? -1 : 0;
	if (lstat(o->path, &st) == 0 && S_ISREG(st.st_mode))
		keep_mode = (int)(st.st_mode & 0666);
	dir = dir_of(o->path);
	/* O_RDWR: vp_output_verify()'s check reads the file back */
	o->fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
	free(dir);
	/*
	 * Without O_TMPFILE (EOPNOTSUPP; EISDIR from kernels before 3.11):
	 * a temporary name, which a varperf killed by SIGKILL leaves behind.
	 */
	if (o->fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL))
		set_tmp(o, unused_name(o->path, try_create, &o->fd));
	if (o->fd < 0)
		return error("cannot create '%s': %s", name, strerror(errno));
	/* the caller's file, with the read and write bits of the one replaced */
	if (keep_mode >= 0 && fchmod(o->fd, (mode_t)keep_mode) < 0)
		return error("cannot create '%s': %s", name, strerror(errno));
	return 0;
}

int vp_output_create(struct vp_output *o, const char *name)
{
	if (create(o, name, 0) == 0)
		return 0;
	vp_output_release(o);
	return -1;
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
	/* the link checked when the file was created, not one swapped in since */
	if (o->link_ino &&
	    (lstat(o->name, &st) < 0 || st.st_dev != o->link_dev || st.st_ino != o->link_ino))
		return error("cannot write '%s': its symbolic link was replaced meanwhile", o->name);
	/* what is there now must still be a regular file (or nothing) */
	if (lstat(o->path, &st) == 0 && !S_ISREG(st.st_mode))
		return error("cannot write '%s': it is now a %s, not a regular file", o->name,
			     kind_of(st.st_mode));
	if (!o->tmp) {
		char *tmp;

		/* nothing there: the name at once */
		if (try_link(o->path, &o->fd) == 0)
			goto done;
		if (errno != EEXIST)
			goto fail;
		tmp = unused_name(o->path, try_link, &o->fd);
		if (!tmp)
			goto fail;
		set_tmp(o, tmp);
	}
	/* rename(2) replaces the entry itself: it follows no symbolic link */
	if (rename(o->tmp, o->path) < 0) {
		int err = errno;

		unlink(o->tmp);
		errno = err;
		goto fail;
	}
done:
	set_tmp(o, NULL);
	o->committed = 1;
	return 0;
fail:
	return error("cannot create '%s': %s", o->name, strerror(errno));
}

int vp_output_verify(struct vp_output *o, const char *(*check)(int fd, void *ctx), void *ctx)
{
	struct stat mine, now;
	const char *why;

	if (o->direct)
		return 0;
	if (fstat(o->fd, &mine) < 0)
		return error("cannot check '%s': %s", o->name, strerror(errno));
	if (lstat(o->path, &now) < 0)
		return error("'%s' was removed while varperf wrote it: %s", o->name,
			     strerror(errno));
	if (now.st_dev != mine.st_dev || now.st_ino != mine.st_ino)
		return error("'%s' was replaced while varperf wrote it (by another %s)", o->name,
			     S_ISREG(now.st_mode) ? "file" : kind_of(now.st_mode));
	if (check && (why = check(o->fd, ctx)))
		return error("'%s' was overwritten while varperf wrote it: %s", o->name, why);
	return 0;
}

void vp_output_release(struct vp_output *o)
{
	int guarded_stream = o->stream && !o->direct;

	if (o->stream)
		fclose(o->stream);
	else if (o->fd >= 0)
		close(o->fd);
	if (o->tmp)
		unlink(o->tmp);
	set_tmp(o, NULL);
	if (guarded_stream)
		guard(0);
	free(o->path);
	free(o->name);
	memset(o, 0, sizeof(*o));
	o->fd = -1;
}

FILE *vp_output_open(struct vp_output *o, const char *name)
{
	if (check(name, 1) < 0 || create(o, name, 1) < 0)
		goto fail;
	o->stream = fdopen(o->fd, "w");
	if (!o->stream) {
		error("cannot create '%s': %s", name, strerror(errno));
		goto fail;
	}
	if (!o->direct) {
		guard(1);
		guarded = o->tmp;
	}
	return o->stream;
fail:
	vp_output_release(o);
	return NULL;
}

int vp_output_close(struct vp_output *o, int keep)
{
	int ret = 0;

	if (!o->stream)
		return keep ? -1 : 0;
	if (keep && (fflush(o->stream) || ferror(o->stream) ||
		     (!o->direct && fdatasync(o->fd) < 0 && errno != EINVAL)))
		ret = error("cannot write '%s': %s", o->name, strerror(errno));
	if (keep && !ret)
		ret = vp_output_commit(o);
	vp_output_release(o);
	return keep ? ret : 0;
}
