// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A tracepoint program as its author would write it for global attach, no
 * pid test of its own: selftest 38 runs it for one process with xprobectl
 * attach (a tracepoint hook in that process's view) and reads its pinned
 * map back.
 * counts[0]: signal_generate of SIGUSR2 to the current task itself, read
 * from the typed arguments (tp_btf); counts[1]: any other.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

SEC("tp_btf/signal_generate")
int BPF_PROG(sig_gen, int sig, struct kernel_siginfo *info, struct task_struct *task,
	     int group, int result)
{
	__u32 k = sig == 12 && task->pid == (__u32)bpf_get_current_pid_tgid() ? 0 : 1;
	__u64 *v = bpf_map_lookup_elem(&counts, &k);

	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
