// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A BPF object as its author would write it for global attach: kprobes that
 * fire for every process, no pid filter of its own. Selftest 38 runs it for
 * one process with xprobectl attach and reads its pinned map back.
 *
 * counts[0]: getppid calls (kprobe/__x64_sys_getppid, at the function);
 * counts[1]: close(-1) calls, counts[2]: other close calls
 * (ksyscall/close: the syscall's own argument, read from the pt_regs the
 * wrapper gets, so the hook must hand over the registers a kprobe would);
 * counts[3]: uh_add calls and counts[4]: its returns in uhtarget (a uprobe
 * and a uretprobe with their place in the section name, as libbpf's
 * auto-attach reads it).
 * Atomic adds on an array: a hook may run it with interrupts off or from an
 * int3, where a hash map's bucket lock is not to be taken.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 5);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

static __always_inline void add(__u32 k)
{
	__u64 *v = bpf_map_lookup_elem(&counts, &k);

	if (v)
		__sync_fetch_and_add(v, 1);
}

#ifndef XP_USER_ONLY	/* the host's check has no module: user-space probes only */
SEC("kprobe/__x64_sys_getppid")
int BPF_KPROBE(on_getppid)
{
	add(0);
	return 0;
}

SEC("ksyscall/close")
int BPF_KSYSCALL(on_close, int fd)
{
	add(fd == -1 ? 1 : 2);
	return 0;
}

#endif

#ifndef UHTARGET
#define UHTARGET "/xp/bin/uhtarget"	/* where the test VM has it */
#endif

SEC("uprobe/" UHTARGET ":uh_add")
int BPF_KPROBE(on_uh_add)
{
	add(3);
	return 0;
}

SEC("uretprobe/" UHTARGET ":uh_add")
int BPF_KRETPROBE(on_uh_add_ret)
{
	add(4);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
