/* SPDX-License-Identifier: GPL-2.0 */
/* xprobectl trace: where the kernel's sleeping locks are (klocks.c). */
#ifndef XPROBECTL_KLOCKS_H
#define XPROBECTL_KLOCKS_H

#include <stdint.h>

/*
 * The address ranges [lo, hi) of the kernel's mutex, rwsem, semaphore and
 * rtmutex functions (their slow paths and the calls into them), sorted and
 * disjoint, at most MAX; returns how many, 0 if /proc/kallsyms shows no
 * addresses (kptr_restrict) or cannot be read. With INIT_MM, init_mm's
 * address too, from the same reading (0 if the kernel lists no data
 * symbols): a BPF extern would have libbpf read all of /proc/kallsyms
 * again, most of a second of a trace's start in the test VM. As root, what
 * a reading found is kept for the boot in /run/xprobectl/klocks.
 */
int klocks_load(uint64_t *lo, uint64_t *hi, int max, uint64_t *init_mm);

#endif
