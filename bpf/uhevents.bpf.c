// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Check the events of user hooks (selftest 28): a raw tracepoint program on
 * xprobes_uhook that counts events per cookie and keeps the first event's
 * registers, and counts every later event whose ip or return address
 * differs from the first one's (one call site per hooked function in
 * uhtarget), or whose stack is not as a function's entry has it; and the
 * same for return events (xprobes_uhook_ret).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "uhevents.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, UHEVENTS_COOKIES);
	__type(key, __u32);
	__type(value, struct uhevents_slot);
} slots SEC(".maps");

__u64 other;	/* events with a cookie beyond the slots */

/* The slot of the event's cookie and the event's registers in *@r, or NULL. */
static __always_inline struct uhevents_slot *event(struct bpf_raw_tracepoint_args *ctx,
						   struct pt_regs *r)
{
	__u32 key = (__u32)ctx->args[1];
	struct uhevents_slot *s;

	if (ctx->args[1] >= UHEVENTS_COOKIES) {
		__sync_fetch_and_add(&other, 1);
		return NULL;
	}
	s = bpf_map_lookup_elem(&slots, &key);
	if (!s || bpf_probe_read_kernel(r, sizeof(*r), (void *)ctx->args[2]))
		return NULL;
	return s;
}

SEC("raw_tp/xprobes_uhook")
int check_uhook(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 key = (__u32)ctx->args[1];
	struct uhevents_slot *s;
	struct pt_regs r;
	__u64 ret = 0;

	s = event(ctx, &r);
	if (!s)
		return 0;
	bpf_probe_read_user(&ret, sizeof(ret), (void *)r.sp);
	if ((r.sp + 8) & 15)
		__sync_fetch_and_add(&s->misaligned, 1);
	if (key == UHEVENTS_ARGS6 &&
	    (r.di != 1 || r.si != 2 || r.dx != 3 || r.cx != 4 || r.r8 != 5 || r.r9 != 6))
		__sync_fetch_and_add(&s->bad, 1);
	__sync_fetch_and_add(&s->count, 1);
	/* The first event's registers are kept, the others compared with them. */
	if (!__sync_val_compare_and_swap(&s->ip, 0, r.ip)) {
		s->sp = r.sp;
		s->ret = ret;
		s->di = r.di;
		s->si = r.si;
		s->dx = r.dx;
		s->cx = r.cx;
		s->r8 = r.r8;
		s->r9 = r.r9;
		s->id = (__u32)ctx->args[0];
		s->tgid = bpf_get_current_pid_tgid() >> 32;
		__sync_fetch_and_add(&s->ready, 1);
	} else if (s->ready && (r.ip != s->ip || ret != s->ret)) {
		__sync_fetch_and_add(&s->bad, 1);
	}
	return 0;
}

SEC("raw_tp/xprobes_uhook_ret")
int check_uhook_ret(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 key = (__u32)ctx->args[1];
	struct uhevents_slot *s;
	struct pt_regs r;

	s = event(ctx, &r);
	if (!s)
		return 0;
	__sync_fetch_and_add(&s->rcount, 1);
	if (r.sp & 15)
		__sync_fetch_and_add(&s->rmisaligned, 1);
	if (key == UHEVENTS_ARGS6 && r.ax != 21)
		__sync_fetch_and_add(&s->rbad, 1);
	if (!__sync_val_compare_and_swap(&s->rip, 0, r.ip)) {
		s->rax = r.ax;
		__sync_fetch_and_add(&s->rready, 1);
	} else if (s->rready && r.ip != s->rip) {
		__sync_fetch_and_add(&s->rbad, 1);
	}
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
