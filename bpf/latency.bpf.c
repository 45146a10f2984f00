// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xprobectl latency: every syscall of one process timed and judged against
 * that syscall's learned normal (latency.h); slow ones go to xprobectl
 * through a perf buffer, which is safe in the int3 handler's NMI-like
 * context where the view's hooks run.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "latency.h"
#include "trace.h"

const volatile __u64 k_x100 = 300;	/* k, in hundredths */
const volatile __u64 min_ns;		/* never report calls shorter than this */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SYSEV_NR_MAX);
	__type(key, __u32);
	__type(value, struct lat_stats);
} lstats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} slow_events SEC(".maps");

/*
 * xprobectl trace's per-thread shadow stacks, shared with it by
 * trace --latency (the same map); alone, an empty one-entry map.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TRACE_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct thread_state);
} threads SEC(".maps");

/*
 * Every syscall but uretprobe (335 on x86_64): the uprobes return trampoline
 * makes it, so it is the tracer's cost (trace --latency's own uretprobes),
 * not the program's.
 */
static __always_inline __u8 sysev_classify(__u32 nr, __u64 arg0)
{
	return nr < SYSEV_NR_MAX && nr != 335;
}

#include "sysev.bpf.h"

/*
 * floor(sqrt(v)) for v < 2^62, bit by bit and without branches. A global
 * function: the verifier checks it once, not once per path of its callers.
 * v - t < 0 as a signed number is the sign bit (v, t < 2^63 keep that
 * exact); the 0/1 it gives is multiplied in, not masked: recent verifiers
 * split a -1/0 mask into two paths, 2^31 of them here.
 */
__noinline __u64 isqrt(__u64 v)
{
	__u64 r = 0, bit = 1ULL << 60, t, ge;
	int i;

#pragma unroll
	for (i = 0; i < 31; i++) {
		t = r + bit;
		ge = 1 - ((v - t) >> 63);	/* v >= t */
		v -= t * ge;
		r = (r >> 1) + bit * ge;
		bit >>= 2;
	}
	return r;
}

/*
 * log2(x) in LAT_FP units for 0 < x < 2^63 (callers make sure): the position of the top bit,
 * found without branches (see isqrt), then the next 8 bits as the fraction
 * (log2(1 + f) ~ f, off by at most 0.09 of a doubling).
 */
__noinline __u64 log2_fp(__u64 x)
{
	__u64 v = x, n = 0, s;

	s = (1 - ((v - (1ULL << 32)) >> 63)) << 5; v >>= s; n += s;
	s = (1 - ((v - (1ULL << 16)) >> 63)) << 4; v >>= s; n += s;
	s = (1 - ((v - (1ULL << 8)) >> 63)) << 3; v >>= s; n += s;
	s = (1 - ((v - (1ULL << 4)) >> 63)) << 2; v >>= s; n += s;
	s = (1 - ((v - (1ULL << 2)) >> 63)) << 1; v >>= s; n += s;
	s = 1 - ((v - 2) >> 63); n += s;
	/* n = top bit; the 8 bits below it */
	return n * LAT_FP + ((x << (63 - n) >> 55) & (LAT_FP - 1));
}

/* Move mean and variance towards x: Welford while warming up, then EWMA. */
static __always_inline void learn(struct lat_stats *st, __u64 x, __u64 n)
{
	__u64 mean = st->mean_l, var = st->var_l, d, sq;
	bool up = x >= mean;

	d = up ? x - mean : mean - x;
	if (n <= LAT_WARMUP) {
		/* mean_n = mean + d/n; var_n = var + (d^2 (n-1)/n - var)/n */
		mean = up ? mean + d / n : mean - d / n;
		sq = d * d * (n - 1) / n;
		var = sq >= var ? var + (sq - var) / n : var - (var - sq) / n;
	} else {
		mean = up ? mean + (d >> LAT_SHIFT) : mean - (d >> LAT_SHIFT);
		sq = d * d;
		var = sq >= var ? var + ((sq - var) >> LAT_SHIFT) : var - ((var - sq) >> LAT_SHIFT);
	}
	st->mean_l = mean;
	st->var_l = var;
	st->sigma_l = isqrt(var);
}

static __always_inline __s32 top_func(__u32 tid)
{
	struct thread_state *ts = bpf_map_lookup_elem(&threads, &tid);
	__u32 depth;

	if (!ts)
		return -1;
	depth = ts->depth;
	if (!depth || depth > TRACE_MAX_DEPTH)
		return -1;
	return ts->frames[(depth - 1) & (TRACE_MAX_DEPTH - 1)].func;
}

static __always_inline void sysev_done(void *ctx, struct sysev_slot *s, long ret, __u64 now)
{
	__u32 nr = s->nr;
	struct lat_stats *st = bpf_map_lookup_elem(&lstats, &nr);
	__u64 dur = now - s->ts, l, thresh, sigma, n, b;
	struct lat_event ev;

	if (!st || (__s64)dur <= 0)
		return;
	l = log2_fp(dur);
	/*
	 * The bucket of dur - 1: Prometheus's le is inclusive, so a call of
	 * exactly 2^k ns belongs below le = 2^k, in bucket k - 1.
	 */
	b = dur > 1 ? log2_fp(dur - 1) / LAT_FP : 0;
	barrier_var(b);		/* the bound below must stay on the value used */
	if (b >= LAT_BUCKETS)
		b = LAT_BUCKETS - 1;
	__sync_fetch_and_add(&st->hist[b], 1);
	__sync_fetch_and_add(&st->total_ns, dur);	/* _sum beside the buckets */
	n = ++st->calls;
	if (dur > st->max_ns)
		st->max_ns = dur;
	if (n > LAT_WARMUP) {
		sigma = st->sigma_l > LAT_SIGMA_MIN ? st->sigma_l : LAT_SIGMA_MIN;
		thresh = st->mean_l + sigma * k_x100 / 100;
		if (l > thresh && dur >= min_ns) {
			st->slow++;
			ev.ts = now;
			ev.dur_ns = dur;
			ev.mean_l = st->mean_l;
			ev.sigma_l = sigma;
			ev.ret = ret;
			ev.tid = s->tid;
			ev.nr = nr;
			ev.func = top_func(s->tid);
			ev.pad = 0;
			bpf_perf_event_output(ctx, &slow_events, BPF_F_CURRENT_CPU, &ev, sizeof(ev));
			l = thresh;	/* learnt clipped (latency.h) */
		}
	}
	learn(st, l, n);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
