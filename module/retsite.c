// SPDX-License-Identifier: GPL-2.0
/*
 * Return hooks (XPROBES_F_RETURN): fire where a function returns to its
 * caller, by hooking the instruction after the call in the caller.
 *
 * Only for callees whose caller is known and fixed, listed below. The one
 * that matters is the syscall dispatcher: x64_sys_call() reaches each syscall
 * by a tail jump, so the syscall functions' own returns land in
 * do_syscall_64() right after its "call x64_sys_call". do_syscall_64() is
 * noinstr and kprobes refuses all of it, but the return site lies between
 * its instrumentation_begin() and instrumentation_end(): RCU is watching and
 * the context is ordinary kernel code, so an int3 there (in a private copy,
 * taken only by the view's process) is as safe as anywhere in core text.
 * The rest of do_syscall_64() stays off limits.
 */
#include <linux/kernel.h>
#include <linux/string.h>
#include "xprobes.h"

static const struct {
	const char *callee;
	const char *caller;
} xp_retsites[] = {
	{ "x64_sys_call", "do_syscall_64" },
};

/*
 * The address right after the only direct call to @callee in its listed
 * caller; its caller's name and the offset go to @caller and @off.
 * Decodes the caller from its first byte, as objdump would (the host-side
 * test checks that this decoder agrees with objdump over the kernel text).
 */
unsigned long xp_retsite_find(const char *callee, const char **caller, u32 *off,
			      struct netlink_ext_ack *extack)
{
	unsigned long target, start, size, pc, found = 0;
	struct xp_insn insn;
	size_t i;
	int n = 0;

	for (i = 0; i < ARRAY_SIZE(xp_retsites); i++)
		if (!strcmp(xp_retsites[i].callee, callee))
			break;
	if (i == ARRAY_SIZE(xp_retsites)) {
		NL_SET_ERR_MSG(extack, "return hooks exist for x64_sys_call (syscall exit) only");
		return 0;
	}
	*caller = xp_retsites[i].caller;
	if (xp_sym_resolve(callee, &target, NULL) ||
	    xp_sym_resolve(*caller, &start, &size) || !size ||
	    !xp_is_core_text(start, size)) {
		NL_SET_ERR_MSG(extack, "the syscall dispatcher is not where this kernel should have it");
		return 0;
	}
	for (pc = start; pc < start + size; pc += insn.len) {
		if (xp_insn_decode(&insn, xp_text(pc), min_t(unsigned long, XP_INSN_MAX,
							    start + size - pc))) {
			NL_SET_ERR_MSG(extack, "cannot decode the caller of the return hook");
			return 0;
		}
		if (insn.kind == XP_INSN_CALL && pc + insn.len + insn.rel == target) {
			found = pc + insn.len;
			n++;
		}
	}
	if (n > 1) {
		NL_SET_ERR_MSG(extack, "the callee is called from more than one site");
		return 0;
	}
	if (!n) {
		NL_SET_ERR_MSG(extack, "the caller does not call the callee directly here");
		return 0;
	}
	*off = found - start;
	return found;
}
