// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Count xprobes_hook hits per (hook id, process): a raw tracepoint program. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "hookcount.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct hookcount_key);
	__type(value, __u64);
} counts SEC(".maps");

SEC("raw_tp/xprobes_hook")
int count_hook(struct bpf_raw_tracepoint_args *ctx)
{
	struct hookcount_key key = {
		.id = (__u32)ctx->args[0],
		.tgid = bpf_get_current_pid_tgid() >> 32,
	};
	__u64 one = 1, *c;

	c = bpf_map_lookup_elem(&counts, &key);
	if (c)
		__sync_fetch_and_add(c, 1);
	else
		bpf_map_update_elem(&counts, &key, &one, BPF_NOEXIST);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
