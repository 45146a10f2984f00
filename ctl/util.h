/* SPDX-License-Identifier: GPL-2.0 */
/* Argument parsing and small helpers shared by xprobectl's subcommands. */
#ifndef XPROBECTL_UTIL_H
#define XPROBECTL_UTIL_H

#include <stdbool.h>
#include <stdint.h>

/* "1234" -> 1234; prints a usage error and returns false otherwise. */
bool parse_pid(const char *s, uint32_t *pid);
/* Is the running kernel MAJOR.MINOR or later (uname's release)? */
bool kernel_at_least(int major, int minor);
/* Decimal or 0x-hex unsigned integer. */
bool parse_u64(const char *s, uint64_t *v);
/*
 * "SYMBOL", "SYMBOL+OFF" or "ADDRESS" (0x... or a long hex string).
 * Fills either *addr (is_addr) or sym/off (has_off).
 */
struct target {
	bool is_addr, has_off;
	uint64_t addr;
	uint32_t off;
	char sym[512];
};
bool parse_target(const char *s, struct target *t);
/* Address of a kernel symbol from /proc/kallsyms, 0 if unknown. */
uint64_t kallsyms_addr(const char *name);

/* getopt_long for subcommands: --json and --help, plus extra options. */
#define COMMON_OPTS \
	{ "json", no_argument, NULL, 'j' }, \
	{ "help", no_argument, NULL, 'h' }

#endif
