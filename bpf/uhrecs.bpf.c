// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Check the records of user hooks (selftest 29): a raw tracepoint program
 * on xprobes_urecs that replays each thread's records against a stack of
 * its own, as trace's fold will: every return must close the entry at its
 * sp, times must never go back within a thread nor pass the hand-over.
 * Counts per cookie; the state of a thread sits in an array slot (no map
 * insert: the hand-over may run in the int3 handler's NMI context). Calls
 * folded by the module (XPROBES_F_CALLS) are counted apart: they touch no
 * stack, and their time is a duration.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "xprobes.h"
#include "uhrecs.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, UHRECS_THREADS);
	__type(key, __u32);
	__type(value, struct uhrecs_thread);
} threads SEC(".maps");

struct uhrecs_counts counts;

struct walk {
	const struct xprobes_urec *recs;
	__u64 now;
	__u32 slot;
};

static __always_inline void add(__u64 *c)
{
	__sync_fetch_and_add(c, 1);
}

static long one(__u32 i, struct walk *w)
{
	struct uhrecs_thread *t = bpf_map_lookup_elem(&threads, &w->slot);
	struct xprobes_urec r;
	__u64 sp;
	__u32 d, c, k;

	if (!t || bpf_probe_read_kernel(&r, sizeof(r), &w->recs[i]))
		return 1;
	if (XPROBES_UREC_IS_CALL(r.what)) {
		c = XPROBES_UREC_COOKIE(r.what);
		if (c < UHRECS_COOKIES)
			add(&counts.calls[c & (UHRECS_COOKIES - 1)]);
		else
			add(&counts.other);
		if (r.what & XPROBES_UREC_TOP)
			add(&counts.top);
		__sync_fetch_and_add(&counts.call_ns, XPROBES_UREC_WALL(r.time));
		return 0;
	}
	if (r.time < t->last)
		add(&counts.backwards);
	if (r.time > w->now)
		add(&counts.future);
	t->last = r.time;
	sp = XPROBES_UREC_SP(r.what);
	if (r.what & XPROBES_UREC_RET) {
		for (k = 0; k < UHRECS_DEPTH; k++) {	/* entries that never returned */
			d = t->depth;
			if (!d || d > UHRECS_DEPTH || t->sp[(d - 1) & (UHRECS_DEPTH - 1)] >= sp)
				break;
			t->depth = d - 1;
			add(&counts.abandoned);
		}
		d = t->depth;
		if (!d || d > UHRECS_DEPTH || t->sp[(d - 1) & (UHRECS_DEPTH - 1)] != sp) {
			add(&counts.unmatched);
			return 0;
		}
		c = t->cookie[(d - 1) & (UHRECS_DEPTH - 1)];
		if (c < UHRECS_COOKIES)
			add(&counts.returns[c & (UHRECS_COOKIES - 1)]);
		t->depth = d - 1;
		return 0;
	}
	c = XPROBES_UREC_COOKIE(r.what);
	if (c < UHRECS_COOKIES)
		add(&counts.entries[c & (UHRECS_COOKIES - 1)]);
	else
		add(&counts.other);
	if (r.what & XPROBES_UREC_TAIL)
		add(&counts.tail);
	if (r.what & XPROBES_UREC_NORET) {
		add(&counts.noret);
		return 0;
	}
	d = t->depth;
	if (d >= UHRECS_DEPTH) {
		add(&counts.deep);
		return 0;
	}
	t->sp[d & (UHRECS_DEPTH - 1)] = sp;
	t->cookie[d & (UHRECS_DEPTH - 1)] = c;
	t->depth = d + 1;
	return 0;
}

SEC("raw_tp/xprobes_urecs")
int on_urecs(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 tid = (__u32)ctx->args[0], n = (__u32)ctx->args[2];
	struct walk w = {
		.recs = (const void *)ctx->args[1],
		.now = bpf_ktime_get_ns(),
		.slot = tid % UHRECS_THREADS,
	};
	struct uhrecs_thread *t = bpf_map_lookup_elem(&threads, &w.slot);

	if (!t)
		return 0;
	if (t->tid != tid) {
		if (t->tid)
			add(&counts.collisions);
		t->tid = tid;
		t->depth = 0;
		t->last = 0;
		if (w.slot < UHRECS_THREADS)
			counts.tids[w.slot] = tid;
	}
	add(&counts.batches);
	__sync_fetch_and_add(&counts.records, n);
	if (n > counts.max_batch)
		counts.max_batch = n;
	bpf_loop(n, one, &w, 0);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
