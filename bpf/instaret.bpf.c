// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * InstaRet (bench, experiment 4): a uprobe whose program returns at once,
 * the floor of what any uprobe-based tool pays per call.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("uprobe")
int instaret(void *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
