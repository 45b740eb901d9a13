/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * json-writer.h - the one JSON writer of the renderers: strings escaped
 * (invalid UTF-8 as U+FFFD), numbers that read back as they were, and a
 * layout per container, so that report's and compare's JSON keep their
 * shapes while sharing every byte-level rule.
 */
#ifndef VARPERF_REPORT_JSON_WRITER_H
#define VARPERF_REPORT_JSON_WRITER_H

#include <stdint.h>
#include <stdio.h>

enum { JSON_MAX_DEPTH = 16 };

/* Where a container's elements go. */
enum json_layout {
	JSON_COMPACT, /* on one line: {"a": 1, "b": 2} */
	JSON_LINES,   /* one per line, indented by depth; empty as {} */
	JSON_BLOCK,   /* one per line, the closing bracket on its own line even
		       * when empty */
};

/*
 * The state of one document.  Set @f, @pretty_depth and @full_digits
 * and zero the rest (a designated initializer does).
 */
struct json {
	FILE *f;
	/* containers opened at this depth or above are JSON_LINES unless
	 * opened with json_obj_as()/json_arr_as(); deeper ones compact */
	int pretty_depth;
	/* doubles with all 17 significant digits (%.17g) instead of the
	 * shortest of 15 to 17 that reads back the same */
	int full_digits;
	int depth;
	int nelem[JSON_MAX_DEPTH];		 /* elements written so far at each depth */
	enum json_layout layout[JSON_MAX_DEPTH]; /* of the container at each depth */
};

/* @s as a JSON string literal; bytes that are not valid UTF-8 as U+FFFD. */
/* Length of the well-formed UTF-8 sequence at @p (RFC 3629), 0 if
 * malformed: JSON and HTML replace what is not UTF-8. */
size_t utf8_seq_len(const unsigned char *p);
void json_string(FILE *f, const char *s);

/*
 * Containers and values.  @key names the member inside an object, NULL
 * inside an array (or for the document itself).
 */
void json_obj(struct json *j, const char *key);
void json_obj_as(struct json *j, const char *key, enum json_layout layout);
void json_obj_end(struct json *j);
void json_arr(struct json *j, const char *key);
void json_arr_as(struct json *j, const char *key, enum json_layout layout);
void json_arr_end(struct json *j);
/* A string, or null when @s is NULL. */
void json_str(struct json *j, const char *key, const char *s);
/* A string, or null when @s is NULL or empty. */
void json_str_or_null(struct json *j, const char *key, const char *s);
void json_u64(struct json *j, const char *key, uint64_t v);
void json_i64(struct json *j, const char *key, int64_t v);
void json_null(struct json *j, const char *key);
void json_bool(struct json *j, const char *key, int v);
/* A number (see full_digits), or null when @v is not finite. */
void json_double(struct json *j, const char *key, double v);
/* @v as the string "0x..." */
void json_hex(struct json *j, const char *key, uint64_t v);

#endif
