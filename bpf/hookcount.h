/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef XPROBES_HOOKCOUNT_H
#define XPROBES_HOOKCOUNT_H

/* Open-addressing table: a power of two, probed linearly from the key's hash. */
#define HOOKCOUNT_SLOTS	8192
#define HOOKCOUNT_PROBES	32

struct hookcount_slot {
	__u64 key;	/* hook id << 32 | tgid; 0 while free */
	__u64 count;
};

#endif
