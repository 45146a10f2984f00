// SPDX-License-Identifier: GPL-2.0
/*
 * Which instructions a jump hook may cover.
 *
 * A hook's 5-byte jump replaces every instruction that starts in those 5
 * bytes. When the first instruction is shorter (most function bodies start
 * with a 1-byte push), the jump covers several whole instructions, which
 * then run in the hook's out-of-line slot. That is only correct when nothing
 * can arrive in the middle of the covered bytes, the rules kprobes applies
 * before it optimizes a probe (can_optimize() in arch/x86/kernel/kprobes/
 * opt.c):
 *  - every covered instruction is one the slot can run: nothing the decoder
 *    refuses, no ret, and a direct branch (call, jmp, jcc) only as the last
 *    one, which the slot rebuilds with its target (each then also passes
 *    kprobes' own checks and the exception table, in hook.c). In user code
 *    the first instruction may be that branch (a jmp or a call: a jcc would
 *    read flags the records stub does not keep), and a ret may be the last
 *    one: a user hook's uprobe sends a thread that hits the site to the
 *    trampoline instead of stepping the instruction, and a user trampoline
 *    returns with a plain ret (the kernel's would need the return thunk).
 *    Small leaf functions are `mov; ret` and tail calls `jmp f`: without
 *    this, each call of them would be a uprobe's trap. So may a jmp
 *    through a register or memory (RIP-relative too), the last one: a
 *    function that is one jump through a pointer (Redis's
 *    RM_MonotonicMicroseconds(), PLT-like stubs, C++ thunks) runs it from
 *    its trampoline, the displacement moved (uslot.c); a call through one
 *    would push the trampoline's address, and stays refused;
 *  - the whole function decodes, and no direct branch in it (jmp, jcc, call)
 *    targets a covered byte other than the first;
 *  - the function has no indirect jump (a jump table could target anything)
 *    and no jump to the retpoline thunks that stand for one. In user code
 *    (xp_cover_decide_user()) a jump through a register is allowed when the
 *    caller can check every table the function addresses, and one through
 *    memory without an index register is a tail call through a function
 *    pointer (to some function's start, never into a prologue).
 * Exception-table fixups that land inside are checked in hook.c, which has
 * the table.
 *
 * A user hook that stays an int3 (XPROBES_F_TRAP: the uprobe sends each
 * entry to the trampoline, no jump is written) covers the instructions a
 * jump would, or the first alone where those could never be a jump's
 * (xp_cover_decide_trap()): its trampoline jumps back where a later jump's
 * would, so a thread still in it then (stopped, or in the event's system
 * call) does not land inside that jump. No byte of the function but the
 * first changes, so a branch to any instruction boundary lands on the
 * file's own bytes, and nothing else of the function needs to be read.
 *
 * This file works on a buffer, so KUnit can feed it real code.
 */
#include <linux/types.h>
#include <linux/errno.h>
#include <linux/minmax.h>
#include "insn.h"
#include "cover.h"
#include "uhooks/uslot.h"	/* get_unaligned_le32() on both kernels */

/* Is @insn an indirect jump, or a direct jump to a thunk standing for one? */
static bool indirect_jump(const struct xp_insn *insn, const u8 *p, unsigned long ip,
			  const struct xp_ranges *thunks)
{
	unsigned int reg = (insn->modrm >> 3) & 7;
	unsigned long target;

	/* ff /4 and ff /5: jmp through a register or memory (decoded as refused) */
	if (insn->map == 0 && insn->opcode == 0xff && insn->has_modrm && (reg == 4 || reg == 5))
		return true;
	if (insn->kind != XP_INSN_JMP && insn->kind != XP_INSN_JCC)
		return false;
	target = ip + insn->len + insn->rel;
	return xp_in_ranges(thunks, target);
}

/*
 * Is @insn (at @ip) a direct branch, and where to? Calls, jumps and jccs,
 * and loop/jcxz (which no slot runs, but which branch all the same).
 */
static bool direct_branch(const struct xp_insn *insn, unsigned long ip, unsigned long *target)
{
	bool loop = insn->map == 0 && !insn->vex && insn->opcode >= 0xe0 && insn->opcode <= 0xe3;

	if (insn->kind != XP_INSN_JMP && insn->kind != XP_INSN_JCC && insn->kind != XP_INSN_CALL &&
	    !loop)
		return false;
	*target = ip + insn->len + insn->rel;
	return true;
}

/* Where @insn's ModRM byte is in @p (after prefixes, REX and the opcode). */
static unsigned int modrm_off(const struct xp_insn *insn, const u8 *p, u8 *rex)
{
	unsigned int i = 0;

	*rex = 0;
	while (i < insn->len && (p[i] == 0x66 || p[i] == 0x67 || p[i] == 0xf2 || p[i] == 0xf3 ||
				 p[i] == 0x2e || p[i] == 0x3e || p[i] == 0x26 || p[i] == 0x64 ||
				 p[i] == 0x65 || p[i] == 0x36 || p[i] == 0xf0))
		i++;
	if (i < insn->len && (p[i] & 0xf0) == 0x40)
		*rex = p[i++];
	return i + 1;	/* one-byte opcode (ff) */
}

/*
 * A user function's indirect jump (ff /4): 1 if the caller must check the
 * function's tables (through a register), 0 if it needs nothing (through
 * memory, no index: a function pointer), -1 if unknown (an index register:
 * a table of absolute addresses, which position-independent code never has).
 */
static int user_jump(const struct xp_insn *insn, const u8 *p)
{
	unsigned int m;
	u8 rex, sib;

	if (insn->modrm >> 6 == 3)
		return 1;
	if ((insn->modrm & 7) != 4)
		return 0;	/* no SIB: no index */
	m = modrm_off(insn, p, &rex);
	if (m + 2 > insn->len)
		return -1;
	sib = p[m + 1];	/* right after the ModRM byte */
	return ((sib >> 3) & 7) == 4 && !(rex & 2) ? 0 : -1;
}

/*
 * The instructions the @span bytes at @off start in (XP_JUMP_SIZE: a
 * jump's), each one a slot can run (@user: user code's rules, see the
 * header): their end in *@endp.
 */
static int cover_insns(const u8 *func, unsigned int size, unsigned int off, unsigned int span,
		       bool user, struct xp_cover *c, unsigned int *endp)
{
	unsigned int pos, end;
	struct xp_insn insn;

	c->bytes = 0;
	c->ninsn = 0;
	c->why = NULL;
	/* (Refused whatever the span: a trap's one-instruction retry meets it too.) */
	if (off >= size) {
		c->why = "the function ends before the site";
		return -EINVAL;
	}

	/* The instructions the @span bytes start in. */
	for (pos = off; pos < off + span; pos += insn.len) {
		if (pos >= size) {	/* -ERANGE: a cover @size cuts short */
			c->why = "the covered instructions run past the function's end";
			return -ERANGE;
		}
		if (xp_insn_decode(&insn, func + pos,
				   min_t(unsigned int, size - pos, XP_INSN_MAX))) {
			/*
			 * Fewer bytes than the longest instruction: @size may
			 * cut it (or the bytes are bad: refused either way).
			 */
			if (size - pos < XP_INSN_MAX) {
				c->why = "the covered instructions run past the function's end";
				return -ERANGE;
			}
			c->why = "a covered instruction does not decode";
			return -EINVAL;
		}
		c->ninsn++;
		if (insn.kind == XP_INSN_SLOT)
			continue;
		/*
		 * Not a jcc first, even in user code: the records stub runs
		 * before it and does not keep the flags (nothing at a
		 * function's entry reads them, but a hooked fragment entered
		 * by a jump might).
		 */
		if ((insn.kind == XP_INSN_REFUSE && !(user && insn.jmp_indirect)) ||
		    (!user && (insn.kind == XP_INSN_RET || pos == off)) ||
		    (pos == off && insn.kind == XP_INSN_JCC)) {
			c->why = insn.kind == XP_INSN_REFUSE ?
				 "a covered instruction cannot run out of line" :
				 pos == off ? "the first instruction cannot be displaced out of line" :
				 "a covered instruction is a return";
			return -EINVAL;
		}
		if (pos + insn.len < off + span) {
			c->why = "a branch is followed by more covered instructions";
			return -EINVAL;
		}
	}
	if (c->ninsn > XP_COVER_INSNS) {
		c->why = "too many instructions under the jump";
		return -E2BIG;
	}
	end = pos;
	if (end - off > XP_COVER_MAX) {
		c->why = "the covered instructions are too long";
		return -E2BIG;
	}
	*endp = end;
	return 0;
}

static int decide(const u8 *func, unsigned long base, unsigned int size, unsigned int off,
		  const struct xp_ranges *thunks, struct xp_cover *c,
		  struct xp_cover_tables *t)
{
	unsigned int pos, end;
	struct xp_insn insn;
	int err;

	err = cover_insns(func, size, off, XP_JUMP_SIZE, t != NULL, c, &end);
	if (err)
		return err;

	/* Every instruction of the function, for branches into (off, end). */
	for (pos = 0; pos < size; pos += insn.len) {
		unsigned long ip = base + pos, target;

		if (xp_insn_decode(&insn, func + pos, min_t(unsigned int, size - pos, XP_INSN_MAX))) {
			c->why = "part of the function does not decode: branch targets unknown";
			return -EINVAL;
		}
		if (t && insn.map == 0 && insn.opcode == 0xff && insn.has_modrm &&
		    ((insn.modrm >> 3) & 7) == 4) {
			int k = user_jump(&insn, func + pos);

			if (k < 0) {
				c->why = "the function jumps through a table of absolute addresses";
				return -EINVAL;
			}
			t->reg_jumps += k;
			continue;
		}
		if (t && insn.map == 0 && insn.opcode == 0x8d && insn.rip_rel && insn.disp_len == 4) {
			s32 disp = (s32)get_unaligned_le32(func + pos + insn.disp_off);
			unsigned long at = ip + insn.len + disp;
			unsigned int i;

			if (at - base < size)
				continue;	/* code of the function itself */
			for (i = 0; i < t->n && t->base[i] != at; i++)
				;
			if (i == t->n && t->n == XP_COVER_TABLES) {
				c->why = "the function addresses too much data to check for jump tables";
				return -E2BIG;
			}
			if (i == t->n)
				t->base[t->n++] = at;
			continue;
		}
		if (indirect_jump(&insn, func + pos, ip, thunks)) {
			c->why = "the function has an indirect jump: its targets are unknown";
			return -EINVAL;
		}
		if (!direct_branch(&insn, ip, &target))
			continue;
		if (target > base + off && target < base + end) {
			c->why = "a branch in the function lands inside the covered bytes";
			c->branch_from = pos;
			return -EINVAL;
		}
	}
	c->bytes = end - off;
	return 0;
}

int xp_cover_decide(const u8 *func, unsigned long base, unsigned int size, unsigned int off,
		    const struct xp_ranges *thunks, struct xp_cover *c)
{
	return decide(func, base, size, off, thunks, c, NULL);
}

int xp_cover_decide_trap(const u8 *func, unsigned int size, unsigned int off,
			 struct xp_cover *c)
{
	unsigned int end;
	int err;

	/* What a jump would cover: a later jump at the site jumps back there too. */
	err = cover_insns(func, size, off, XP_JUMP_SIZE, true, c, &end);
	/* No jump can ever go here (the file's bytes say so): the first alone. */
	if (err == -EINVAL || err == -E2BIG)
		err = cover_insns(func, size, off, 1, true, c, &end);
	/* (-ERANGE: the size given cuts a jump's cover short; a later add may give more) */
	if (!err)
		c->bytes = end - off;
	return err;
}

int xp_branch_into(const u8 *func, unsigned long base, unsigned int size, unsigned long lo,
		   unsigned long hi)
{
	unsigned int pos;
	struct xp_insn insn;

	for (pos = 0; pos < size; pos += insn.len) {
		unsigned long target;

		if (xp_insn_decode(&insn, func + pos, min_t(unsigned int, size - pos, XP_INSN_MAX)))
			return -2;
		if (direct_branch(&insn, base + pos, &target) && target > lo && target < hi)
			return pos;
	}
	return -1;
}

int xp_cover_decide_user(const u8 *func, unsigned long base, unsigned int size,
			 unsigned int off, struct xp_cover *c, struct xp_cover_tables *t)
{
	t->reg_jumps = 0;
	t->n = 0;
	return decide(func, base, size, off, NULL, c, t);
}
