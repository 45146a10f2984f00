// SPDX-License-Identifier: GPL-2.0
/* A minimal streaming JSON writer for --json output (stdout). */
#include <inttypes.h>
#include <stdio.h>
#include "json.h"

#define MAX_DEPTH 32

static int depth;
static bool need_comma[MAX_DEPTH];

static void put_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c == '\n')
			fputs("\\n", stdout);
		else if (c == '\t')
			fputs("\\t", stdout);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void member(const char *key)
{
	if (need_comma[depth])
		putchar(',');
	need_comma[depth] = true;
	if (key) {
		put_string(key);
		putchar(':');
	}
}

static void open_(const char *key, char c)
{
	member(key);
	putchar(c);
	if (depth < MAX_DEPTH - 1)
		depth++;
	need_comma[depth] = false;
}

static void close_(char c)
{
	putchar(c);
	if (depth > 0)
		depth--;
}

void json_obj_begin(const char *key) { open_(key, '{'); }
void json_obj_end(void) { close_('}'); }
void json_arr_begin(const char *key) { open_(key, '['); }
void json_arr_end(void) { close_(']'); }

void json_str(const char *key, const char *val)
{
	member(key);
	if (val)
		put_string(val);
	else
		fputs("null", stdout);
}

void json_u64(const char *key, uint64_t val)
{
	member(key);
	printf("%" PRIu64, val);
}

void json_i64(const char *key, int64_t val)
{
	member(key);
	printf("%" PRId64, val);
}

void json_hex(const char *key, uint64_t val)
{
	member(key);
	printf("\"0x%" PRIx64 "\"", val);
}

void json_bool(const char *key, bool val)
{
	member(key);
	fputs(val ? "true" : "false", stdout);
}

void json_double(const char *key, double val)
{
	member(key);
	printf("%.6g", val);
}

void json_done(void)
{
	putchar('\n');
	depth = 0;
	need_comma[0] = false;
	fflush(stdout);
}
