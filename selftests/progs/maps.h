/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test programs' look at their own /proc/self/maps: the module's
 * mappings in them ("[xprobes-records]", "[xprobes-uhooks]").
 */
#ifndef XP_TEST_MAPS_H
#define XP_TEST_MAPS_H

#include <stdio.h>
#include <string.h>

/*
 * The first mapping of ours named NAME (and with PERM, if given) in maps
 * that holds ADDR (any, if ADDR is 0): where, how long; 0 without.
 */
static inline size_t named_map_at(const char *name, const char *perm, unsigned long addr,
				  unsigned char **at)
{
	unsigned long lo, hi;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	size_t len = 0;

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, name) && (!perm || strstr(line, perm)) &&
		    sscanf(line, "%lx-%lx", &lo, &hi) == 2 && (!addr || (addr >= lo && addr < hi))) {
			*at = (unsigned char *)lo;
			len = hi - lo;
			break;
		}
	if (f)
		fclose(f);
	return len;
}

/* The first mapping of ours named NAME (and with PERM, if given): where, how long; 0 without. */
static inline size_t named_map(const char *name, const char *perm, unsigned char **at)
{
	return named_map_at(name, perm, 0, at);
}

#endif
