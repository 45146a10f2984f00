// SPDX-License-Identifier: GPL-2.0
/*
 * The trampoline of a user hook (uhook.c): the instructions its jump
 * covers, rebuilt to run at another address, then a jump back behind them.
 *
 * cover.c has already decided which instructions those are: whole ones, a
 * direct branch only as the last, none the slot cannot run. Here each one
 * is copied, with what depends on where it runs rebuilt:
 *  - a RIP-relative operand gets the displacement that reaches the same
 *    target from the slot (the slot lies within +-2 GiB of the site, so it
 *    fits, but it is checked);
 *  - jmp and jcc become their rel32 forms aimed at the original target;
 *  - a ret (the last one) is copied: it returns from the trampoline;
 *  - so is a jmp through a register or memory (the last one), a
 *    RIP-relative pointer's displacement moved as above: it leaves the
 *    trampoline for wherever the pointer says, as it would have left the
 *    function;
 *  - a call becomes what a call does, spelt out: the original return
 *    address (the first byte behind the cover) written below the stack
 *    pointer and the stack pointer lowered, then a jmp. The callee returns
 *    to the function itself, so backtraces, unwinders and C++ exceptions
 *    never see the slot. lea, not sub: flags stay as they were.
 * This file works on buffers, so KUnit can check it without a process.
 */
#include <linux/types.h>
#include <linux/errno.h>
#include <linux/limits.h>
#include <linux/string.h>
#include "insn.h"
#include "cover.h"
#include "uslot.h"

static bool fits32(s64 v)
{
	return v >= S32_MIN && v <= S32_MAX;
}

/* Append a jmp rel32 from @at (where it is placed) to @target. */
static int put_jmp(u8 *out, unsigned int *len, unsigned int max, unsigned long at,
		   unsigned long target)
{
	s64 rel = (s64)(target - (at + 5));

	if (*len + 5 > max || !fits32(rel))
		return -ERANGE;
	out[(*len)++] = 0xe9;
	put_unaligned_le32((u32)(s32)rel, out + *len);
	*len += 4;
	return 0;
}

int xp_uslot_build(const u8 *code, unsigned int cover, unsigned long site, unsigned long slot,
		   u8 *out, unsigned int max, u8 *starts, const char **why)
{
	unsigned int pos = 0, len = 0, n = 0;
	struct xp_insn insn;

	*why = "the trampoline does not fit";
	while (pos < cover) {
		unsigned long ip = site + pos, at = slot + len, target;

		if (n == XP_COVER_INSNS || xp_insn_decode(&insn, code + pos, cover - pos)) {
			*why = "a covered instruction does not decode";
			return -EINVAL;
		}
		starts[n++] = len;
		target = ip + insn.len + insn.rel;
		switch (insn.kind) {
		case XP_INSN_REFUSE:	/* cover.c: a jmp through a pointer, the last one */
			if (!insn.jmp_indirect) {
				*why = "a covered instruction cannot run in a trampoline";
				return -EINVAL;
			}
			if (pos + insn.len != cover) {
				*why = "an indirect jmp is not the last covered instruction";
				return -EINVAL;
			}
			fallthrough;
		case XP_INSN_SLOT:
			if (len + insn.len > max)
				return -E2BIG;
			memcpy(out + len, code + pos, insn.len);
			if (insn.rip_rel) {
				s64 disp = (s64)(s32)get_unaligned_le32(code + pos + insn.disp_off);

				disp += (s64)ip - (s64)at;
				if (insn.disp_len != 4 || !fits32(disp)) {
					*why = "a RIP-relative operand is out of the trampoline's reach";
					return -ERANGE;
				}
				put_unaligned_le32((u32)(s32)disp, out + len + insn.disp_off);
			}
			len += insn.len;
			break;
		case XP_INSN_JMP:
			if (put_jmp(out, &len, max, at, target))
				return -ERANGE;
			break;
		case XP_INSN_JCC: {
			s64 rel = (s64)(target - (at + 6));

			if (len + 6 > max || !fits32(rel))
				return -ERANGE;
			out[len++] = 0x0f;
			out[len++] = 0x80 | insn.cc;
			put_unaligned_le32((u32)(s32)rel, out + len);
			len += 4;
			break;
		}
		case XP_INSN_CALL: {
			unsigned long ret = site + cover;
			/* lea -8(%rsp),%rsp; movl $lo,(%rsp); movl $hi,4(%rsp) */
			static const u8 lea[] = { 0x48, 0x8d, 0x64, 0x24, 0xf8 };
			static const u8 mov_lo[] = { 0xc7, 0x04, 0x24 };
			static const u8 mov_hi[] = { 0xc7, 0x44, 0x24, 0x04 };

			if (pos + insn.len != cover) {
				*why = "a call is not the last covered instruction";
				return -EINVAL;
			}
			if (len + sizeof(lea) + sizeof(mov_lo) + 4 + sizeof(mov_hi) + 4 > max)
				return -E2BIG;
			memcpy(out + len, lea, sizeof(lea));
			len += sizeof(lea);
			memcpy(out + len, mov_lo, sizeof(mov_lo));
			len += sizeof(mov_lo);
			put_unaligned_le32((u32)ret, out + len);
			len += 4;
			memcpy(out + len, mov_hi, sizeof(mov_hi));
			len += sizeof(mov_hi);
			put_unaligned_le32((u32)(ret >> 32), out + len);
			len += 4;
			if (put_jmp(out, &len, max, slot + len, target))
				return -ERANGE;
			break;
		}
		case XP_INSN_RET:	/* cover.c: only the last; returns from the trampoline */
			if (pos + insn.len != cover) {
				*why = "a ret is not the last covered instruction";
				return -EINVAL;
			}
			if (len + insn.len > max)
				return -E2BIG;
			memcpy(out + len, code + pos, insn.len);
			len += insn.len;
			break;
		default:
			*why = "a covered instruction cannot run in a trampoline";
			return -EINVAL;
		}
		pos += insn.len;
	}
	if (pos != cover) {
		*why = "the cover does not end on an instruction boundary";
		return -EINVAL;
	}
	/* Behind the last one: back to the function, past the covered bytes. */
	if (put_jmp(out, &len, max, slot + len, site + cover))
		return -ERANGE;
	*why = NULL;
	return len;
}

#ifdef XPROBES_KUNIT
#include "uslot_kunit.c"
#endif
