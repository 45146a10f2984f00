/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Shared by uhevents.bpf.c and selftests/progs/uhevents.c. */
#ifndef UHEVENTS_H
#define UHEVENTS_H

#define UHEVENTS_COOKIES	8	/* user hooks told apart by cookie 0..7 */
#define UHEVENTS_ARGS6		6	/* the cookie whose calls pass 1..6 (uh_args6) */

struct uhevents_slot {
	__u64 count;		/* events */
	__u64 bad;		/* events unlike the first (ip, return address), or
				 * for UHEVENTS_ARGS6 arguments that are not 1..6 */
	__u64 misaligned;	/* events whose sp + 8 is not 16-byte aligned */
	__u64 ip, sp, ret;	/* the first event's: ret is the word at sp */
	__u64 di, si, dx, cx, r8, r9;
	__u32 id, tgid;
	__u64 ready;		/* the first event's registers are all in */
};

#endif
