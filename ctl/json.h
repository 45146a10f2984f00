/* SPDX-License-Identifier: GPL-2.0 */
/* A minimal streaming JSON writer for --json output (stdout). */
#ifndef XPROBECTL_JSON_H
#define XPROBECTL_JSON_H

#include <stdbool.h>
#include <stdint.h>

/* KEY is NULL inside arrays and for the top-level value. */
void json_obj_begin(const char *key);
void json_obj_end(void);
void json_arr_begin(const char *key);
void json_arr_end(void);
void json_str(const char *key, const char *val);
void json_u64(const char *key, uint64_t val);
void json_i64(const char *key, int64_t val);
void json_hex(const char *key, uint64_t val);	/* "0x..." string */
void json_bool(const char *key, bool val);
void json_double(const char *key, double val);
/* Ends the document with a newline. */
void json_done(void);

#endif
