// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Global hooks for the overhead experiments, the baselines xprobes views
 * replace. on_kprobe/on_fentry test the PID inside BPF, the way bpftrace -p
 * and bcc tools filter ("in-eBPF"): every process that passes the hook pays
 * for the program. on_kprobe_post sends every event to user space, which
 * filters ("post-eBPF"): every process pays for the program and the copy.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

const volatile __u32 target_tgid;
__u64 hits;
__u64 seen;

static __always_inline int count(void)
{
	__sync_fetch_and_add(&seen, 1);
	if ((bpf_get_current_pid_tgid() >> 32) != target_tgid)
		return 0;
	__sync_fetch_and_add(&hits, 1);
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(on_kprobe)
{
	return count();
}

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} events SEC(".maps");

SEC("kprobe")
int BPF_KPROBE(on_kprobe_post)
{
	__u32 *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	__sync_fetch_and_add(&seen, 1);
	if (!e)
		return 0;
	*e = bpf_get_current_pid_tgid() >> 32;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* BTF names the syscall body __do_sys_getppid (same address as __x64_sys_getppid) */
SEC("fentry/__do_sys_getppid")
int BPF_PROG(on_fentry)
{
	return count();
}

/*
 * The same program body on an xprobes view's hook (raw tracepoint): the PID
 * test stays, so the comparison with fentry is of the attach paths alone.
 */
SEC("raw_tp/xprobes_hook")
int on_hook(void *ctx)
{
	return count();
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
