// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The kernel stack at a hook, as BPF programs see it (selftest 26-view-stacks):
 * bpf_get_stack() from a hook's kprobe program (its registers), from the
 * xprobes_hook tracepoint's raw program (the current stack, through the
 * module's dispatch), and from real kprobes at the same addresses in another
 * process, which the hooks' must equal frame for frame.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "kstacks.h"

const volatile __u32 kprobe_tgid;
long errs[64];	/* the process the real kprobes are for */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KSTACKS_SLOTS);
	__type(key, __u32);
	__type(value, struct kstacks_slot);
} stacks SEC(".maps");

static __always_inline void take(void *ctx, __u64 slot)
{
	__u32 k = (__u32)slot;
	struct kstacks_slot *s;
	long n;

	if (slot >= KSTACKS_SLOTS)
		return;
	s = bpf_map_lookup_elem(&stacks, &k);
	if (!s || s->n)
		return;
	n = bpf_get_stack(ctx, s->ip, sizeof(s->ip), 0);
	if (n > 0)
		s->n = n / sizeof(s->ip[0]);
	else
		errs[k & 63] = n;
}

/* Not attached: a hook runs it (xprobectl hook prog), its cookie the slot. */
SEC("kprobe")
int stack_hook(struct pt_regs *ctx)
{
	take(ctx, bpf_get_attach_cookie(ctx));
	return 0;
}

/* Real kprobes, for kprobe_tgid only; their cookie the slot. */
SEC("kprobe")
int stack_kprobe(struct pt_regs *ctx)
{
	if (bpf_get_current_pid_tgid() >> 32 != kprobe_tgid)
		return 0;
	take(ctx, bpf_get_attach_cookie(ctx));
	return 0;
}

SEC("raw_tp/xprobes_hook")
int stack_tp(struct bpf_raw_tracepoint_args *ctx)
{
	take(ctx, ctx->args[1] + KSTACKS_TP);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
