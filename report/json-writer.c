/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * json-writer.c - the JSON writer of report's and compare's JSON (see
 * json-writer.h).
 */
#include <config.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "json-writer.h"

/* Length of the well-formed UTF-8 sequence at @p (RFC 3629), 0 if malformed. */
size_t utf8_seq_len(const unsigned char *p)
{
	unsigned char c = *p;
	size_t n = 0;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	for (size_t i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if (n == 3 && ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f)))
		return 0;
	if (n == 4 && ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] > 0x8f)))
		return 0;
	return n;
}

void json_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	while (*p) {
		unsigned char c = *p;
		size_t n = 0;

		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
			p++;
			continue;
		}
		if (c < 0x20 || c == 0x7f) {
			static const char esc[] = "btn\0fr";

			if (c >= '\b' && c <= '\r' && esc[c - '\b'])
				fprintf(f, "\\%c", esc[c - '\b']);
			else
				fprintf(f, "\\u%04x", c);
			p++;
			continue;
		}
		if (c < 0x80) {
			fputc(c, f);
			p++;
			continue;
		}
		n = utf8_seq_len(p);
		if (!n) {
			fputs("\\ufffd", f);
			p++;
			continue;
		}
		fwrite(p, 1, n, f);
		p += n;
	}
	fputc('"', f);
}

/* Separator, line break and key before a value at the current depth. */
static void json_elem(struct json *j, const char *key)
{
	if (j->nelem[j->depth]++)
		fputc(',', j->f);
	if (j->layout[j->depth] != JSON_COMPACT)
		fprintf(j->f, "\n%*s", 2 * j->depth, "");
	else if (j->nelem[j->depth] > 1)
		fputc(' ', j->f);
	if (key) {
		json_string(j->f, key);
		fputs(": ", j->f);
	}
}

static void json_open(struct json *j, const char *key, char c, enum json_layout layout)
{
	if (j->depth > 0 || j->nelem[0])
		json_elem(j, key);
	fputc(c, j->f);
	j->depth++;
	j->nelem[j->depth] = 0;
	j->layout[j->depth] = layout;
}

/* The layout of a container opened now without one given. */
static enum json_layout json_default_layout(const struct json *j)
{
	return j->depth + 1 <= j->pretty_depth ? JSON_LINES : JSON_COMPACT;
}

static void json_close(struct json *j, char c)
{
	int had = j->nelem[j->depth];
	enum json_layout layout = j->layout[j->depth];

	j->depth--;
	if (layout == JSON_BLOCK || (had && layout == JSON_LINES))
		fprintf(j->f, "\n%*s", 2 * j->depth, "");
	fputc(c, j->f);
}

void json_obj(struct json *j, const char *key)
{
	json_open(j, key, '{', json_default_layout(j));
}

void json_obj_as(struct json *j, const char *key, enum json_layout layout)
{
	json_open(j, key, '{', layout);
}

void json_obj_end(struct json *j)
{
	json_close(j, '}');
}

void json_arr(struct json *j, const char *key)
{
	json_open(j, key, '[', json_default_layout(j));
}

void json_arr_as(struct json *j, const char *key, enum json_layout layout)
{
	json_open(j, key, '[', layout);
}

void json_arr_end(struct json *j)
{
	json_close(j, ']');
}

void json_str(struct json *j, const char *key, const char *s)
{
	json_elem(j, key);
	if (s)
		json_string(j->f, s);
	else
		fputs("null", j->f);
}

void json_str_or_null(struct json *j, const char *key, const char *s)
{
	json_str(j, key, s && *s ? s : NULL);
}

void json_u64(struct json *j, const char *key, uint64_t v)
{
	json_elem(j, key);
	fprintf(j->f, "%" PRIu64, v);
}

void json_i64(struct json *j, const char *key, int64_t v)
{
	json_elem(j, key);
	fprintf(j->f, "%" PRId64, v);
}

void json_null(struct json *j, const char *key)
{
	json_elem(j, key);
	fputs("null", j->f);
}

void json_bool(struct json *j, const char *key, int v)
{
	json_elem(j, key);
	fputs(v ? "true" : "false", j->f);
}

/* The shortest of %.15g..%.17g that reads back as @v (or %.17g). */
void json_double(struct json *j, const char *key, double v)
{
	char buf[40];

	json_elem(j, key);
	if (!isfinite(v)) {
		fputs("null", j->f);
		return;
	}
	for (int prec = j->full_digits ? 17 : 15; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	fputs(buf, j->f);
}

void json_hex(struct json *j, const char *key, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	json_str(j, key, buf);
}
