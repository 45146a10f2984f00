/* SPDX-License-Identifier: GPL-2.0 */
/* User hooks (uhook.c): trap-free hooks on a process's user functions. */
#ifndef XPROBECTL_UHOOK_H
#define XPROBECTL_UHOOK_H

#include <stdint.h>

/*
 * Where "[LIB:]FUNCTION" is in process PID: its address there and its size,
 * its file (PATH_MAX bytes at PATH) and offset there. Prints one line saying
 * what is wrong and returns -errno otherwise.
 */
int uhook_resolve(uint32_t pid, const char *spec, uint64_t *addr, uint32_t *size, char *path,
		  uint64_t *offset);

#endif
