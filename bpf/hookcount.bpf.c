// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Count xprobes_hook hits per (hook id, process): a raw tracepoint program
 * (and a kprobe one a hook may run itself, count_regs).
 *
 * It runs from int3 hooks (NMI-like context) and from call hooks (task
 * context, interrupts off), so it takes no lock: a hash map's bucket lock,
 * taken in both, is what lockdep rightly calls a possible deadlock. Slots of
 * an array are claimed with a compare-and-swap and counted with an atomic add.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "hookcount.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, HOOKCOUNT_SLOTS);
	__type(key, __u32);
	__type(value, struct hookcount_slot);
} counts SEC(".maps");

__u64 lost;	/* hits with no free slot within HOOKCOUNT_PROBES */

static __always_inline void count(__u64 id)
{
	__u64 key = (id << 32) | (bpf_get_current_pid_tgid() >> 32);
	__u32 h = (__u32)((key * 0x9e3779b97f4a7c15ULL) >> 40), i;

	for (i = 0; i < HOOKCOUNT_PROBES; i++) {
		__u32 idx = (h + i) & (HOOKCOUNT_SLOTS - 1);
		struct hookcount_slot *s = bpf_map_lookup_elem(&counts, &idx);
		__u64 k;

		if (!s)
			break;
		k = s->key;
		if (!k) {
			k = __sync_val_compare_and_swap(&s->key, 0, key);
			if (!k)
				k = key;	/* ours now */
		}
		if (k == key) {
			__sync_fetch_and_add(&s->count, 1);
			return;
		}
	}
	__sync_fetch_and_add(&lost, 1);
}

SEC("raw_tp/xprobes_hook")
int count_hook(struct bpf_raw_tracepoint_args *ctx)
{
	count(ctx->args[0]);
	return 0;
}

__u64 wrong_regs;	/* count_regs hits whose registers were not a getppid's */

/*
 * Not attached: a kprobe program, for a hook to run with its registers as
 * the context (hookcount -P pins it at PATH_kprobe). Meant for a hook at
 * __x64_sys_getppid's entry: its first argument is the syscall's pt_regs,
 * whose orig_ax must be getppid's number (110), read through the context's
 * rdi. Counted under the hook's cookie instead of its id (a kprobe program
 * has no id argument).
 */
SEC("kprobe")
int count_regs(struct pt_regs *ctx)
{
	struct pt_regs *uregs = (struct pt_regs *)ctx->di;
	long nr = -1;

	bpf_probe_read_kernel(&nr, sizeof(nr), &uregs->orig_ax);
	if (nr == 110)
		count(bpf_get_attach_cookie(ctx));
	else
		__sync_fetch_and_add(&wrong_regs, 1);
	return 0;
}

/*
 * Not attached: reads a fourth argument the hook does not give, for the
 * test that xprobes refuses it (hookcount -P pins it beside count_hook).
 */
SEC("raw_tp")
int reads_past(struct bpf_raw_tracepoint_args *ctx)
{
	return ctx->args[3] != 0;
}

/*
 * Not attached: a sleepable program (SEC("uprobe.s") loads as a kprobe
 * program with the sleepable flag), which a hook must refuse: a hit runs
 * its program with preemption off (hookcount -P pins it at PATH_sleepable).
 */
SEC("uprobe.s")
int sleepable(struct pt_regs *ctx)
{
	return 0;
}

/*
 * A program that is running already when the hook it is given hits
 * (hookcount -S): attached to raw_syscalls:sys_enter, it calls
 * bpf_ktime_get_ns() at every system call, and selftest 26 gives it to a
 * hook on that helper in one process too (PATH_reenter). There each hit
 * comes inside the program's own run, which must not be entered again: the
 * hook skips it and counts a recursion miss of the program, as the kernel
 * does for a tracepoint's skipped run.
 */
SEC("raw_tp/sys_enter")
int reenter(struct bpf_raw_tracepoint_args *ctx)
{
	bpf_ktime_get_ns();
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
