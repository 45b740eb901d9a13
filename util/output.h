/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * output.h - where "varperf record" writes its data file: only to a
 * regular file (or a new one), never over its own inputs, and in place of
 * an existing file only once the recording has begun.
 */
#ifndef VARPERF_OUTPUT_H
#define VARPERF_OUTPUT_H

/*
 * The file being written: unnamed (O_TMPFILE) until vp_output_commit()
 * gives it the output's name, so that a recording that never begins
 * leaves an existing file as it was, and one that is killed afterwards
 * leaves what it wrote under that name.  File systems without O_TMPFILE
 * get a temporary name next to the output instead (@tmp).
 */
struct vp_output {
	char *name;	/* as given, for messages */
	char *path;	/* the file to replace: @name, or what its symbolic link names */
	int fd;		/* the new file, -1: none */
	char *tmp;	/* its temporary name, when it has one */
	int committed;	/* it has the output's name */
};

/*
 * vp_output_check - whether @name can take the data: a regular file, a
 * symbolic link to one, or nothing yet (in an existing directory).
 * Anything else (a device, a FIFO, a directory, a link to nothing) is an
 * error, printed.  Returns 0 or -1.
 */
int vp_output_check(const char *name);
/* Whether @a and @b are the same existing file (after symbolic links). */
int vp_output_same(const char *a, const char *b);
/*
 * vp_output_create - check @name (as vp_output_check) and create its new,
 * still unnamed file: @o->fd, mode 0666 less the umask.  Returns 0, or -1
 * after printing why (@o then holds nothing).
 */
int vp_output_create(struct vp_output *o, const char *name);
/*
 * vp_output_commit - give the new file the output's name, replacing what
 * was there (atomically: rename(2)).  Once committed, later calls do
 * nothing.  Returns 0, or -1 after printing why.
 */
int vp_output_commit(struct vp_output *o);
/* Close the file; one never committed is gone.  A zeroed @o is fine. */
void vp_output_release(struct vp_output *o);

#endif
