/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * json-writer-t.c - tests for report/json-writer.c, the one writer of
 * report's and compare's JSON: the bytes of each layout (report's lines
 * down to a depth, compare's blocks), escaping and invalid UTF-8, and the
 * two number forms.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "report/json-writer.h"
#include "tests/tap/basic.h"

/* The writer's output into a string (malloc'ed), with @j's settings. */
static FILE *start(struct json *j, int pretty_depth, int full_digits, char **buf, size_t *len)
{
	FILE *f = open_memstream(buf, len);

	if (!f)
		bail("open_memstream failed");
	*j = (struct json){ .f = f, .pretty_depth = pretty_depth, .full_digits = full_digits };
	return f;
}

static void finish(FILE *f)
{
	if (fclose(f))
		bail("writing to memory failed");
}

/* report's shape: members and their elements on lines down to depth 2 */
static void test_report_layout(void)
{
	struct json j;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = start(&j, 2, 0, &buf, &len);

	json_obj(&j, NULL);
	json_u64(&j, "n", 3);
	json_arr(&j, "empty");
	json_arr_end(&j);
	json_arr(&j, "nodes");
	json_obj(&j, NULL);
	json_str(&j, "f", "main");
	json_null(&j, "cs");
	json_obj_end(&j);
	json_arr_end(&j);
	json_obj_end(&j);
	finish(f);
	is_string("{\n  \"n\": 3,\n  \"empty\": [],\n  \"nodes\": [\n    {\"f\": \"main\", "
		  "\"cs\": null}\n  ]\n}",
		  buf, "report layout: lines to depth 2, compact below, empty array as []");
	free(buf);
}

/* compare's shape: members on lines, compact objects, block lists */
static void test_compare_layout(void)
{
	struct json j;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = start(&j, 1, 1, &buf, &len);

	json_obj(&j, NULL);
	json_obj(&j, "parameters");
	json_double(&j, "alpha", 0.05);
	json_bool(&j, "symmetric", 0);
	json_obj_end(&j);
	json_arr_as(&j, "patterns", JSON_BLOCK);
	json_obj(&j, NULL);
	json_u64(&j, "rank", 1);
	json_arr(&j, "callsites");
	json_str_or_null(&j, NULL, "");
	json_str_or_null(&j, NULL, "a.c:3");
	json_arr_end(&j);
	json_obj_end(&j);
	json_obj(&j, NULL);
	json_u64(&j, "rank", 2);
	json_obj_end(&j);
	json_arr_end(&j);
	json_arr_as(&j, "new", JSON_BLOCK);
	json_arr_end(&j);
	json_obj_end(&j);
	finish(f);
	is_string("{\n  \"parameters\": {\"alpha\": 0.050000000000000003, \"symmetric\": false},\n"
		  "  \"patterns\": [\n    {\"rank\": 1, \"callsites\": [null, \"a.c:3\"]},\n"
		  "    {\"rank\": 2}\n  ],\n  \"new\": [\n  ]\n}",
		  buf, "compare layout: 17 digits, block lists, an empty one on two lines");
	free(buf);
}

/* numbers: the shortest form that reads back, integers, null */
static void test_numbers(void)
{
	struct json j;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = start(&j, 0, 0, &buf, &len);

	json_arr(&j, NULL);
	json_double(&j, NULL, 0.1);
	json_double(&j, NULL, 1.0 / 3);
	json_double(&j, NULL, 1e300 * 1e10);
	json_double(&j, NULL, NAN);
	json_double(&j, NULL, 0);
	json_i64(&j, NULL, -5);
	json_u64(&j, NULL, UINT64_MAX);
	json_hex(&j, NULL, 0x401000);
	json_arr_end(&j);
	finish(f);
	is_string("[0.1, 0.3333333333333333, null, null, 0, -5, 18446744073709551615, "
		  "\"0x401000\"]",
		  buf, "numbers: shortest that reads back, null when not finite");
	free(buf);
}

/* strings: escapes, control characters, invalid UTF-8 as U+FFFD */
static void test_strings(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		bail("open_memstream failed");
	json_string(f, "a\"b\\c\n\t\x01\x7f");
	fputc(' ', f);
	json_string(f, "caf\xc3\xa9 \xe2\x86\x92");
	fputc(' ', f);
	/* a lone continuation byte, an overlong "/", a surrogate, a truncation */
	json_string(f, "\x80|\xc0\xaf|\xed\xa0\x80|\xe2\x86");
	finish(f);
	is_string("\"a\\\"b\\\\c\\n\\t\\u0001\\u007f\" \"caf\xc3\xa9 \xe2\x86\x92\" "
		  "\"\\ufffd|\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd\"",
		  buf, "strings: escaped, valid UTF-8 kept, each invalid byte U+FFFD");
	free(buf);
}

int main(void)
{
	plan(4);
	test_report_layout();
	test_compare_layout();
	test_numbers();
	test_strings();
	return 0;
}
