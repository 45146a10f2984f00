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
	/* Return events (xprobes_uhook_ret) */
	__u64 rcount;
	__u64 rbad;		/* returns elsewhere than the first one's, or
				 * for UHEVENTS_ARGS6 a result that is not 21 */
	__u64 rmisaligned;	/* sp not 16-byte aligned after the return */
	__u64 rip, rax;		/* the first return's */
	__u64 rready;
};

#endif
