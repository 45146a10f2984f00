// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Count calls of __do_sys_getppid (or of the function fentryloop -f names)
 * by one process with a BPF fentry program.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

const volatile __u32 target_tgid;
__u64 hits;

SEC("fentry/__do_sys_getppid")
int BPF_PROG(count_getppid)
{
	if ((bpf_get_current_pid_tgid() >> 32) == target_tgid)
		__sync_fetch_and_add(&hits, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
