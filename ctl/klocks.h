/* SPDX-License-Identifier: GPL-2.0 */
/* xprobectl trace: where the kernel's sleeping locks are (klocks.c). */
#ifndef XPROBECTL_KLOCKS_H
#define XPROBECTL_KLOCKS_H

#include <stdint.h>

/*
 * The address ranges [lo, hi) of the kernel's mutex, rwsem, semaphore and
 * rtmutex functions (their slow paths and the calls into them), sorted and
 * disjoint, at most MAX; returns how many, 0 if /proc/kallsyms shows no
 * addresses (kptr_restrict) or cannot be read.
 */
int klocks_load(uint64_t *lo, uint64_t *hi, int max);

#endif
