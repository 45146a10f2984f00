// SPDX-License-Identifier: GPL-2.0
/*
 * Return hooks (XPROBES_F_RETURN): fire where a function has returned to its
 * caller, on the caller's side.
 *
 * Only for callees whose caller is known and fixed, listed below. The one
 * that matters is the syscall dispatcher: x64_sys_call() reaches each syscall
 * by a tail jump, so the syscall functions' own returns land in
 * do_syscall_64() right after its "call x64_sys_call". do_syscall_64() is
 * noinstr and kprobes refuses all of it.
 *
 * The hook does not sit on that return site but on the call that follows
 * it, "call syscall_exit_to_user_mode": the instruction at the return site
 * (mov %rax,0x50(%rbx), 4 bytes) is too short for a jump, and the next one
 * is where the other syscall paths join (invalid numbers, x32), a branch
 * target no jump may cover; so a hook there could only be an int3, a trap
 * on every syscall of the traced process (550 guest instructions where a
 * jump costs 150, docs/experiments.md). The exit call is one 5-byte
 * instruction nothing lands inside: a call hook. Between the return site
 * and it there are only plain moves (checked below: no call, no branch), so
 * the context is the same: after instrumentation_end(), which is an objtool
 * marker and changes no state, before syscall_exit_to_user_mode() does
 * anything; RCU is watching, interrupts are on, ordinary kernel code, as
 * safe for a hook in a private copy (taken only by the view's process) as
 * anywhere in core text. The rest of do_syscall_64() stays off limits.
 *
 * What the hook sees: %rdi is the syscall's pt_regs (the exit call's
 * argument), whose ->ax holds the result on every path; %rax is that result
 * only on the path through x64_sys_call(). It also fires for the syscalls
 * that never reached the dispatcher (an invalid number: -ENOSYS).
 */
#include <linux/kernel.h>
#include <linux/string.h>
#include "xprobes.h"

static const struct {
	const char *callee;
	const char *caller;
	const char *exit;	/* the call after the return where the hook sits */
} xp_retsites[] = {
	{ "x64_sys_call", "do_syscall_64", "syscall_exit_to_user_mode" },
};

/* Plain instructions between the return site and the exit call, at most. */
#define XP_RETSITE_GAP	4

/*
 * The address of the exit call that follows the only direct call to @callee
 * in its listed caller; its caller's name and the offset go to @caller and
 * @off.
 * Decodes the caller from its first byte, as objdump would (the host-side
 * test checks that this decoder agrees with objdump over the kernel text).
 */
unsigned long xp_retsite_find(const char *callee, const char **caller, u32 *off,
			      struct netlink_ext_ack *extack)
{
	unsigned long target, exit, start, size, pc, found = 0;
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
	    xp_sym_resolve(xp_retsites[i].exit, &exit, NULL) ||
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
	/* Forward to the exit call through plain instructions only. */
	for (pc = found, n = 0; n <= XP_RETSITE_GAP && pc < start + size; pc += insn.len, n++) {
		if (xp_insn_decode(&insn, xp_text(pc), min_t(unsigned long, XP_INSN_MAX,
							    start + size - pc)))
			break;
		if (insn.kind == XP_INSN_CALL && pc + insn.len + insn.rel == exit) {
			*off = pc - start;
			return pc;
		}
		if (insn.kind != XP_INSN_SLOT)
			break;
	}
	NL_SET_ERR_MSG(extack, "the syscall exit call does not follow the dispatcher's return here");
	return 0;
}
