// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * InstaRet (bench, experiment 4): a probe whose program returns at once, the
 * floor of what any tool pays per call: on a uprobe, on the events of
 * xprobes user hooks (the xprobes_uhook raw tracepoint), or on their
 * records (xprobes_urecs: one run per batch a view hands over).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("uprobe")
int instaret(void *ctx)
{
	return 0;
}

SEC("uretprobe")
int instaret_ret(void *ctx)
{
	return 0;
}

SEC("raw_tp/xprobes_uhook")
int instaret_uhook(void *ctx)
{
	return 0;
}

SEC("raw_tp/xprobes_uhook_ret")
int instaret_uhook_ret(void *ctx)
{
	return 0;
}

SEC("raw_tp/xprobes_urecs")
int instaret_urecs(void *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
