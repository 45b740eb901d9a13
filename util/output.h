/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * output.h - the one way a varperf command writes a file named on its
 * command line (record -o, report -o, compare -o): a new file beside the
 * output, given the output's name only when it is whole (record: when the
 * recording begins), so that a command that fails or is killed leaves an
 * existing file as it was and no half file or temporary name behind.
 *
 * What may be named:
 * - a regular file, or a new one in an existing directory: replaced by
 *   the new file, which belongs to the caller (never chown'ed to the old
 *   owner) and keeps the replaced file's read and write bits (a new
 *   file: 0666 less the umask);
 * - a symbolic link: the regular file it names is replaced, the link
 *   stays; but not a link another user owns in a directory others can
 *   write (sticky, group- or world-writable) unless that user owns the
 *   directory too: the kernel's protected_symlinks rule, applied whatever
 *   fs.protected_symlinks says, so that root's output cannot be aimed at
 *   another file by whoever planted the link;
 * - for a stream (vp_output_open()): a FIFO or a character device
 *   (/dev/null, a terminal, /dev/stdout) is written straight through; a
 *   FIFO no process reads is an error at once, never a wait;
 * - anything else (a directory, a socket, a block device, a link to
 *   nothing) is an error naming it.
 */
#ifndef VARPERF_OUTPUT_H
#define VARPERF_OUTPUT_H

#include <stdio.h>
#include <sys/types.h>

/*
 * The file being written: unnamed (O_TMPFILE) until vp_output_commit()
 * gives it the output's name.  File systems without O_TMPFILE get a
 * temporary name next to the output instead (@tmp), which a stream's
 * fatal signal (SIGHUP, SIGINT, SIGTERM, SIGPIPE) removes.
 */
struct vp_output {
	char *name;	/* as given, for messages */
	char *path;	/* the file to replace: @name, or what its symbolic link names */
	int fd;		/* the new file, -1: none */
	char *tmp;	/* its temporary name, when it has one */
	int committed;	/* it has the output's name */
	int direct;	/* a FIFO or character device, written straight through */
	FILE *stream;	/* vp_output_open()'s stream over @fd */
	dev_t link_dev;	/* @name's symbolic link when created (0: none), */
	ino_t link_ino;	/* seen again before the commit */
};

/*
 * vp_output_check - whether @name can take a data file: a regular file,
 * a symbolic link to one (see above), or nothing yet (in an existing
 * directory).  Anything else is an error, printed.  Returns 0 or -1.
 */
int vp_output_check(const char *name);
/* Whether @a and @b are the same existing file (after symbolic links). */
int vp_output_same(const char *a, const char *b);
/*
 * vp_output_create - check @name (as vp_output_check) and create its new,
 * still unnamed file: @o->fd.  Returns 0, or -1 after printing why (@o
 * then holds nothing).
 */
int vp_output_create(struct vp_output *o, const char *name);
/*
 * vp_output_commit - give the new file the output's name, replacing what
 * was there (atomically: rename(2)).  Once committed, later calls do
 * nothing.  Returns 0, or -1 after printing why.
 */
int vp_output_commit(struct vp_output *o);
/*
 * vp_output_verify - after the last write: the output's name still names
 * the file written (nothing replaced or removed it meanwhile), and, when
 * @check is given, the file's content passes it: @check returns NULL or
 * what is wrong with the file open at @fd.  The program a recording runs
 * can write the output's path too.  Returns 0, or -1 after printing an
 * error that names the file.
 */
int vp_output_verify(struct vp_output *o, const char *(*check)(int fd, void *ctx), void *ctx);
/* Close the file; one never committed is gone.  A zeroed @o is fine. */
void vp_output_release(struct vp_output *o);

/*
 * vp_output_open - a report's output: @name created as above (a FIFO or a
 * character device written straight through), as a stream.  Returns it,
 * or NULL after printing why.
 */
FILE *vp_output_open(struct vp_output *o, const char *name);
/*
 * vp_output_close - the end of vp_output_open()'s stream: with @keep,
 * flushed, checked and committed (an error is printed, naming the file);
 * without, discarded (an existing file stays as it was).  Releases @o.
 * Returns 0, or -1 when the output could not be written whole.
 */
int vp_output_close(struct vp_output *o, int keep);

#endif
