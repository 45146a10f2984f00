/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small x86-64 instruction decoder: enough to find an instruction's length,
 * its ModRM/displacement/immediate layout and whether it is a branch, so a
 * hook can execute or emulate the instruction it displaces. Builds in the
 * kernel and in userspace (the host-side test checks it against objdump).
 */
#ifndef _XPROBES_INSN_H
#define _XPROBES_INSN_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdbool.h>
#include <stdint.h>
typedef uint8_t u8;
typedef int32_t s32;
typedef uint32_t u32;
typedef int64_t s64;
#endif

#define XP_INSN_MAX 15

/* How a hook runs the instruction it displaced. */
enum xp_insn_kind {
	XP_INSN_SLOT,		/* copy it out of line (RIP-relative fixed up) */
	XP_INSN_CALL,		/* call rel32: emulate */
	XP_INSN_JMP,		/* jmp rel8/rel32: emulate */
	XP_INSN_JCC,		/* jcc rel8/rel32: emulate */
	XP_INSN_RET,		/* near ret: emulate */
	XP_INSN_REFUSE,		/* cannot be displaced safely */
};

struct xp_insn {
	u8 len;
	u8 map;			/* 0: one-byte, 1: 0F, 2: 0F38, 3: 0F3A */
	u8 opcode;		/* last opcode byte */
	u8 modrm;
	bool has_modrm;
	bool rex_w;
	bool opsize;		/* 66 prefix */
	bool addrsize;		/* 67 prefix */
	bool rep;		/* F3 prefix */
	bool vex;		/* VEX or EVEX encoded */
	bool rip_rel;		/* ModRM addresses memory relative to RIP */
	u8 disp_off, disp_len;	/* displacement position and size */
	u8 imm_off, imm_len;	/* first immediate position and total size */
	enum xp_insn_kind kind;
	/*
	 * ff /4, a near jmp through a register or memory (refused: its
	 * target is unknown), with no prefix that changes it (66: a 16-bit
	 * target; LOCK: #UD; 67 with RIP-relative addressing). User code
	 * may run it out of line as a cover's last instruction (cover.c).
	 */
	bool jmp_indirect;
	const char *why;	/* for XP_INSN_REFUSE */
	s64 rel;		/* branch displacement, for CALL/JMP/JCC (and the
				 * refused loop/jcxz, whose targets count too) */
	u8 cc;			/* condition code, for JCC */
};

/* Decode one instruction at @buf (at most @max bytes). 0 or -1 if undecodable. */
int xp_insn_decode(struct xp_insn *insn, const u8 *buf, int max);

#endif /* _XPROBES_INSN_H */
