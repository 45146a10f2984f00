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
 * counts[6]/[7]: raw_sysenter (raw_syscalls:sys_enter) saw getppid() (args[1],
 * the number) or another call; counts[8]/[9]: raw_sysexit (sys_exit) saw
 * getppid() return the parent's pid (the number from args[0]'s pt_regs,
 * the value args[1]), or anything else;
 * counts[10]/[11]: raw_modfn (xp_modfn:xp_modfn_read, a tracepoint the
 * selftests' module xp_modfn defines; selftest 55) saw the reader's own
 * tgid (args[0]) and a count of calls that grew since its last hit
 * (args[1]), or anything else;
 * raw_past reads a sixth argument the tracepoint does not have, and
 * btf_switch is a tp_btf program for another tracepoint, sleepy a
 * sleepable one (uprobe.s: raw_tp and tp_btf programs cannot be): all
 * refused.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 12);
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
int raw_sysenter(struct bpf_raw_tracepoint_args *ctx)
{
	add(ctx->args[1] == 110 /* __NR_getppid */ ? 6 : 7);
	return 0;
}

SEC("raw_tp")
int raw_sysexit(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	long nr = BPF_CORE_READ(regs, orig_ax);
	long ppid = BPF_CORE_READ(task, real_parent, tgid);

	add(nr == 110 && (long)ctx->args[1] == ppid ? 8 : 9);
	return 0;
}

__u64 modfn_last;

SEC("raw_tp")
int raw_modfn(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 calls = ctx->args[1];
	int ok = (__u32)ctx->args[0] == bpf_get_current_pid_tgid() >> 32 && calls > modfn_last;

	modfn_last = calls;
	add(ok ? 10 : 11);
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

SEC("uprobe.s")
int sleepy(struct pt_regs *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
