/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A function that only returns: a probe's pre-handler sets regs->ip here to
 * make the probed function return at once with regs->ax (xp_probe_return()),
 * the way the kernel's own just_return_func serves BPF's override_return. Returning
 * through a real ret leaves the stack as the caller expects; changing regs->sp
 * instead is not honoured by an ftrace-based probe.
 */
#include <linux/linkage.h>

	.text
SYM_FUNC_START(xp_just_return)
	RET
SYM_FUNC_END(xp_just_return)
