/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xprobectl metrics: application metrics of a server from its syscalls
 * alone, shared by bpf/metrics.bpf.c and ctl/metrics.c.
 *
 * The BPF side keeps cumulative sums per CPU; xprobectl adds the CPUs and
 * takes differences between two reads, so an interval's figures come from a
 * handful of sums and nothing is copied per event. Unsigned differences stay
 * right across a wrap of the sums.
 */
#ifndef XPROBES_METRICS_H
#define XPROBES_METRICS_H

#include "sysev.h"

/* Classes of syscall (sysev_slot.cls). */
enum metrics_cls {
	MC_SEND = 1,	/* write, writev, sendto, sendmsg, sendmmsg, sendfile to a socket */
	MC_RECV = 2,	/* read, readv, recvfrom, recvmsg, recvmmsg from a socket */
	MC_WAIT = 3,	/* epoll_wait, epoll_pwait(2), poll, ppoll, select, pselect6 */
};

/*
 * Squares of gaps are summed in units of 2^METRICS_SQ_SHIFT ns (64 ns), so a
 * one-second gap adds 2.4e14: an interval would need tens of thousands of
 * such gaps to wrap.
 */
#define METRICS_SQ_SHIFT	6

/*
 * One CPU's sums since the start. A "send" is a response: the first
 * successful send of a thread on a socket after anything else it did on the
 * network (a writev of the header and a sendfile of the body are one
 * response). A "recv" is likewise a request read, however many reads it
 * took. Gaps are between consecutive ones of the whole process.
 */
struct metrics_acc {
	__u64 send_calls, recv_calls;		/* successful send / receive syscalls */
	__u64 sends, recvs;			/* responses, requests */
	__u64 send_gaps, send_gap_ns;		/* inter-send gaps: count, sum */
	__u64 recv_gaps, recv_gap_ns;		/* inter-receive gaps: count, sum, */
	__u64 recv_gap_sq;			/* sum of squares (units above) */
	__u64 waits, wait_ns;			/* wait syscalls: count, time inside */
	__u64 errors;				/* failed sends and receives (EAGAIN...) */
};

/* Process-wide: the last send and receive, for the gaps (one element). */
struct metrics_last {
	__u64 send_ts, recv_ts;
};

#endif
