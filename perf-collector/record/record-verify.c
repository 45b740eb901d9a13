/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * record-verify.c - whether the data file still holds what record wrote:
 * the program records runs may write the output's path too (a program
 * given its own -o file), and the recording would be lost without a word.
 */
#include <config.h>

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/datafile.h"
#include "core/varint.h"
#include "perf-collector/record/record.h"

/*
 * The file's magic, then chunks that follow one another (the reader's
 * own walk to the END chunk) up to the END chunk, which ends the file.
 * Chunk headers only: a few reads per 64 KiB chunk.
 */
const char *record_file_whole(int fd, void *ctx)
{
	uint8_t h[VP_CHUNK_HEADER_SIZE];
	off_t pos = VP_FILE_HEADER_SIZE;
	struct stat st;

	(void)ctx;
	if (fstat(fd, &st) < 0 || pread(fd, h, 8, 0) != 8)
		return "it cannot be read back";
	if (memcmp(h, VP_DATA_MAGIC, 8))
		return "it no longer begins with a varperf data file's magic";
	for (;;) {
		off_t next;

		if (pread(fd, h, sizeof(h), pos) != (ssize_t)sizeof(h) ||
		    memcmp(h, VP_CHUNK_MAGIC, 4))
			return "its chunks no longer reach its END chunk";
		next = pos + VP_CHUNK_HEADER_SIZE + (off_t)vp_get_le32(h + 8);
		if (next > st.st_size)
			return "its chunks no longer reach its END chunk";
		if (h[4] == VP_CHUNK_END)
			return next == st.st_size ? NULL : "something follows its END chunk";
		pos = next;
	}
}
