// SPDX-License-Identifier: GPL-2.0
/* Argument parsing and small helpers shared by xprobectl's subcommands. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include "util.h"
#include "xprobectl.h"

bool parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return !errno && !*end;
}

bool kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma, mi;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

bool parse_pid(const char *s, uint32_t *pid)
{
	uint64_t v;

	if (!parse_u64(s, &v) || v == 0 || v > 0x7fffffff) {
		usage_error("'%s' is not a process id", s ? s : "");
		return false;
	}
	*pid = v;
	return true;
}

static bool all_hex(const char *s)
{
	for (; *s; s++)
		if (!isxdigit((unsigned char)*s))
			return false;
	return true;
}

bool parse_target(const char *s, struct target *t)
{
	const char *plus;
	uint64_t off;

	memset(t, 0, sizeof(*t));
	if (!s || !*s) {
		usage_error("missing symbol or address");
		return false;
	}
	/* 0xffffffff81000000, or ffffffff81000000 as /proc/kallsyms prints it */
	if ((!strncmp(s, "0x", 2) && parse_u64(s, &t->addr)) ||
	    (strlen(s) == 16 && all_hex(s) && sscanf(s, "%" SCNx64, &t->addr) == 1)) {
		t->is_addr = true;
		return true;
	}
	plus = strchr(s, '+');
	if (plus) {
		if (!parse_u64(plus + 1, &off) || off > 0xffffffffu) {
			usage_error("bad offset in '%s'", s);
			return false;
		}
		t->has_off = true;
		t->off = off;
	}
	if ((plus ? (size_t)(plus - s) : strlen(s)) >= sizeof(t->sym) || plus == s) {
		usage_error("bad symbol '%s'", s);
		return false;
	}
	snprintf(t->sym, sizeof(t->sym), "%.*s", (int)(plus ? plus - s : (long)strlen(s)), s);
	return true;
}

uint64_t kallsyms_addr(const char *name)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[1024], sym[512], type;
	uint64_t a, found = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNx64 " %c %511s", &a, &type, sym) == 3 &&
		    !strcmp(sym, name) && !strchr(line, '[')) {
			found = a;
			break;
		}
	}
	fclose(f);
	return found;
}
