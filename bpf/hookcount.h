/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef XPROBES_HOOKCOUNT_H
#define XPROBES_HOOKCOUNT_H

struct hookcount_key {
	__u32 id;	/* hook id */
	__u32 tgid;	/* process that took the hit */
};

#endif
