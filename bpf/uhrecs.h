/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Shared by uhrecs.bpf.c and selftests/progs/uhrecs.c. */
#ifndef UHRECS_H
#define UHRECS_H

#define UHRECS_COOKIES	8	/* records hooks told apart by cookie 0..7 */
#define UHRECS_THREADS	16	/* threads followed, by tid % UHRECS_THREADS */
#define UHRECS_DEPTH	32

/* One followed thread: its stack of entries not yet returned. */
struct uhrecs_thread {
	__u32 tid;
	__u32 depth;
	__u64 last;			/* the time of its last record */
	__u64 sp[UHRECS_DEPTH];
	__u32 cookie[UHRECS_DEPTH];
};

struct uhrecs_counts {
	__u64 entries[UHRECS_COOKIES];	/* entry records, by cookie */
	__u64 returns[UHRECS_COOKIES];	/* return records that closed an entry of the cookie */
	__u64 calls[UHRECS_COOKIES];	/* calls folded into one record (XPROBES_F_CALLS) */
	__u64 top;		/* ... of them whose caller is no folded call */
	__u64 call_ns;		/* ... their durations, summed */
	__u64 other;		/* entries with a larger cookie */
	__u64 noret;		/* entries whose return writes nothing */
	__u64 tail;		/* entries whose return address was a thunk's */
	__u64 unmatched;	/* returns with no entry at their sp */
	__u64 abandoned;	/* entries below a return's sp that never returned */
	__u64 backwards;	/* records older than the thread's previous one */
	__u64 future;		/* records later than the hand-over */
	__u64 deep;		/* entries past UHRECS_DEPTH */
	__u64 batches;		/* hand-overs (xprobes_urecs) */
	__u64 records;
	__u64 max_batch;
	__u64 collisions;	/* threads that found their slot taken */
	__u32 tids[UHRECS_THREADS];	/* the threads seen */
};

#endif
