// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Programs written for the signal:signal_generate tracepoint itself, with
 * no pid test: selftest 39 gives them to a tracepoint hook of one process
 * (xprobectl hook prog) after bpftool loadall pinned them, and reads the
 * pinned map back.
 *
 * signal_generate(int sig, struct kernel_siginfo *info,
 *                 struct task_struct *task, int group, int result)
 * counts[0]: raw_sig saw SIGUSR2 sent to the current task (args[0], args[2]);
 * counts[1]: raw_sig saw anything else;
 * counts[2]/[3]: the same by btf_sig, which reads typed arguments (tp_btf);
 * counts[4]/[5]: btf_switched (sched:sched_switch, selftest 39-view-tpev)
 * saw the current task switched away from (prev) for another (next), or
 * anything else;
 * raw_past reads a sixth argument the tracepoint does not have, and
 * btf_switch is a tp_btf program for another tracepoint: both refused.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 6);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

static __always_inline void add(__u32 k)
{
	__u64 *v = bpf_map_lookup_elem(&counts, &k);

	if (v)
		__sync_fetch_and_add(v, 1);
}

SEC("raw_tp")
int raw_sig(struct bpf_raw_tracepoint_args *ctx)
{
	int sig = ctx->args[0];
	void *task = (void *)ctx->args[2];

	add(sig == 12 && task == (void *)bpf_get_current_task() ? 0 : 1);
	return 0;
}

SEC("tp_btf/signal_generate")
int BPF_PROG(btf_sig, int sig, struct kernel_siginfo *info, struct task_struct *task,
	     int group, int result)
{
	add(sig == 12 && task->pid == (__u32)bpf_get_current_pid_tgid() ? 2 : 3);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(btf_switched, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	add(prev == (void *)bpf_get_current_task() && next != prev ? 4 : 5);
	return 0;
}

SEC("raw_tp")
int raw_past(struct bpf_raw_tracepoint_args *ctx)
{
	return ctx->args[5] != 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(btf_switch, bool preempt)
{
	return preempt;
}

char LICENSE[] SEC("license") = "GPL";
