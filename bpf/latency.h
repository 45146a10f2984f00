/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xprobectl latency: per-syscall latency against a normal the BPF side
 * learns, shared by bpf/latency.bpf.c and ctl/latency.c.
 *
 * For each syscall number, the mean and variance of log2 of its latency:
 * latencies spread multiplicatively (a 1 us call hit by an interrupt takes
 * 20 us, a blocking one 10 ms), and on the raw values mean + k sigma flags
 * the jitter of fast calls while the slow ones widen sigma for everyone.
 * The first LAT_WARMUP calls give a plain mean and variance; after that both
 * move as exponentially weighted averages with weight 2^-LAT_SHIFT, so the
 * normal follows the machine. A call is slow when log2 of its latency
 * exceeds mean + k * max(sigma, LAT_SIGMA_MIN): at least 2^k times the
 * typical latency (k from xprobectl, -k). A slow call enters the averages
 * clipped to that threshold, so one outlier does not teach the normal that
 * outliers are normal.
 *
 * Logs are fixed point, LAT_FP units per doubling.
 */
#ifndef XPROBES_LATENCY_H
#define XPROBES_LATENCY_H

#include "sysev.h"

#define LAT_WARMUP	32
#define LAT_SHIFT	6		/* weight 1/64 */
#define LAT_FP		256		/* log2 fixed point: 8 fractional bits */
#define LAT_SIGMA_MIN	LAT_FP		/* one doubling */
/*
 * Latency histogram buckets, by the top bit of the latency in ns less one:
 * bucket b holds (2^b, 2^(b+1)] ns (bucket 0 also 1 ns), the last one
 * everything above 2^(LAT_BUCKETS-1) ns (9 minutes). Prometheus's
 * cumulative buckets (le inclusive) are sums of these.
 */
#define LAT_BUCKETS	40

/*
 * One syscall number's statistics. Updated without a lock by whichever
 * thread returns (hook programs must not take one): two threads finishing
 * the same syscall at the same moment may lose one update, which an
 * average over many calls absorbs.
 */
struct lat_stats {
	__u64 calls;
	__u64 mean_l;		/* mean of log2(ns), LAT_FP units */
	__u64 var_l;		/* its variance, LAT_FP^2 units */
	__u64 sigma_l;		/* sqrt(var_l), kept beside it */
	__u64 slow;		/* calls reported slow */
	__u64 total_ns;
	__u64 max_ns;
	__u64 hist[LAT_BUCKETS];	/* calls by log2 of their latency (atomic adds) */
};

/* A slow call, sent to xprobectl. */
struct lat_event {
	__u64 ts;		/* its end, bpf_ktime_get_ns() */
	__u64 dur_ns;
	__u64 mean_l;		/* the normal it was judged against (lat_stats) */
	__u64 sigma_l;
	__s64 ret;
	__u32 tid;
	__u32 nr;
	__s32 func;		/* traced user function on top of the thread's shadow
				 * stack (trace --latency), -1: none */
	__u32 pad;
};

#endif
