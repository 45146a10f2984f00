// SPDX-License-Identifier: GPL-2.0
/*
 * x86-64 instruction decoder for hook placement. See insn.h.
 *
 * Covers the legacy one-byte map, the 0F, 0F38 and 0F3A maps, and VEX/EVEX
 * encodings, in 64-bit mode only. It only needs to be exact about lengths and
 * operand layout; xprobes cross-checks every hooked instruction's length
 * against the kernel's own decoder (through kprobes), and the host-side test
 * compares it with objdump over the whole kernel text.
 */
#include "insn.h"

#define F_M	0x001	/* ModRM follows */
#define F_I8	0x002	/* imm8 */
#define F_I16	0x004	/* imm16 */
#define F_IZ	0x008	/* imm16 (66) or imm32 */
#define F_IV	0x010	/* imm16/32/64 by operand size (mov r, imm) */
#define F_I32	0x020	/* imm32 / rel32 whatever the prefixes */
#define F_MOFFS	0x040	/* address-sized moffs */
#define F_GRP3	0x080	/* F6/F7: immediate only for /0 and /1 */
#define F_INV	0x100	/* invalid in 64-bit mode */

static unsigned int one_byte(u8 op)
{
	if (op < 0x40) {
		switch (op & 7) {
		case 0: case 1: case 2: case 3:
			return F_M;
		case 4:
			return F_I8;
		case 5:
			return F_IZ;
		default:
			return F_INV;	/* push/pop seg, daa...; prefixes handled earlier */
		}
	}
	if (op < 0x60)
		return 0;		/* REX handled earlier; push/pop reg */
	switch (op) {
	case 0x60: case 0x61: case 0x62: case 0x82: case 0x9a: case 0xce:
	case 0xd4: case 0xd5: case 0xd6: case 0xea:
		return F_INV;
	case 0x63:
		return F_M;
	case 0x68:
		return F_IZ;
	case 0x69:
		return F_M | F_IZ;
	case 0x6a:
		return F_I8;
	case 0x6b:
		return F_M | F_I8;
	case 0x80: case 0x83: case 0xc0: case 0xc1: case 0xc6:
		return F_M | F_I8;
	case 0x81: case 0xc7:
		return F_M | F_IZ;
	case 0xa8:
		return F_I8;
	case 0xa9:
		return F_IZ;
	case 0xc2: case 0xca:
		return F_I16;
	case 0xc8:
		return F_I16 | F_I8;	/* enter */
	case 0xcd:
		return F_I8;
	case 0xe8: case 0xe9:
		return F_I32;
	case 0xeb:
		return F_I8;
	case 0xf6: case 0xf7:
		return F_M | F_GRP3;
	case 0xfe: case 0xff:
		return F_M;
	}
	if (op >= 0x70 && op <= 0x7f)
		return F_I8;		/* jcc rel8 */
	if (op >= 0x84 && op <= 0x8f)
		return F_M;
	if (op >= 0xa0 && op <= 0xa3)
		return F_MOFFS;
	if (op >= 0xb0 && op <= 0xb7)
		return F_I8;
	if (op >= 0xb8 && op <= 0xbf)
		return F_IV;
	if ((op >= 0xd0 && op <= 0xd3) || (op >= 0xd8 && op <= 0xdf))
		return F_M;
	if (op >= 0xe0 && op <= 0xe7)
		return F_I8;		/* loop/jcxz rel8, in/out imm8 */
	return 0;
}

static unsigned int two_byte(u8 op)
{
	switch (op) {
	case 0x04: case 0x0a: case 0x0c: case 0x24: case 0x25: case 0x26: case 0x27:
	case 0x36: case 0x39: case 0x3b: case 0x3c: case 0x3d: case 0x3e: case 0x3f:
	case 0xa6: case 0xa7:
		return F_INV;
	case 0x05: case 0x06: case 0x07: case 0x08: case 0x09: case 0x0b: case 0x0e:
	case 0x30: case 0x31: case 0x32: case 0x33: case 0x34: case 0x35: case 0x37:
	case 0x77: case 0xa0: case 0xa1: case 0xa2: case 0xa8: case 0xa9: case 0xaa:
		return 0;
	case 0x0f:
		return F_M | F_I8;	/* 3DNow! suffix byte */
	case 0x70: case 0x71: case 0x72: case 0x73: case 0xa4: case 0xac: case 0xba:
	case 0xc2: case 0xc4: case 0xc5: case 0xc6:
		return F_M | F_I8;
	}
	if (op >= 0x80 && op <= 0x8f)
		return F_I32;		/* jcc rel32 */
	if (op >= 0xc8 && op <= 0xcf)
		return 0;		/* bswap */
	return F_M;
}

/* VEX/EVEX: which opcodes carry an imm8. */
static bool vex_imm8(u8 map, u8 op)
{
	if (map == 3)
		return true;
	if (map == 1)
		return (op >= 0x70 && op <= 0x73) || op == 0xc2 || (op >= 0xc4 && op <= 0xc6);
	return false;
}

static void refuse(struct xp_insn *insn, const char *why)
{
	insn->kind = XP_INSN_REFUSE;
	insn->why = why;
}

static void classify(struct xp_insn *insn, const u8 *buf, bool seg, bool lock)
{
	u8 op = insn->opcode, reg = (insn->modrm >> 3) & 7;

	insn->kind = XP_INSN_SLOT;
	if (insn->vex)
		goto memory;
	if (insn->map == 0) {
		switch (op) {
		case 0xe8:
			insn->kind = XP_INSN_CALL;
			insn->rel = (s32)(buf[insn->imm_off] | buf[insn->imm_off + 1] << 8 |
				buf[insn->imm_off + 2] << 16 | (u32)buf[insn->imm_off + 3] << 24);
			break;
		case 0xe9:
			insn->kind = XP_INSN_JMP;
			insn->rel = (s32)(buf[insn->imm_off] | buf[insn->imm_off + 1] << 8 |
				buf[insn->imm_off + 2] << 16 | (u32)buf[insn->imm_off + 3] << 24);
			break;
		case 0xeb:
			insn->kind = XP_INSN_JMP;
			insn->rel = (signed char)buf[insn->imm_off];
			break;
		case 0xc3:
			insn->kind = XP_INSN_RET;
			break;
		case 0xc2: case 0xca: case 0xcb: case 0xcf:
			return refuse(insn, "cannot displace a return with stack adjustment, far return or iret");
		case 0xcc: case 0xcd: case 0xf1:
			return refuse(insn, "a breakpoint or software interrupt is already there");
		case 0xf4:
			return refuse(insn, "cannot displace hlt");
		case 0xfa: case 0xfb: case 0x9c: case 0x9d:
			return refuse(insn, "cannot displace an instruction that reads or writes the interrupt flag");
		case 0xe0: case 0xe1: case 0xe2: case 0xe3:
			/* Not displaced, but a branch: cover.c checks its target. */
			insn->rel = (signed char)buf[insn->imm_off];
			return refuse(insn, "cannot displace loop/jcxz");
		case 0x8e:
			return refuse(insn, "cannot displace a segment register load");
		case 0xff:
			if (reg == 4)
				insn->jmp_indirect = !insn->opsize && !lock &&
						     !(insn->rip_rel && insn->addrsize);
			if (reg >= 2 && reg <= 5)
				return refuse(insn, "cannot displace an indirect branch");
			break;
		}
		if (op >= 0x70 && op <= 0x7f) {
			insn->kind = XP_INSN_JCC;
			insn->cc = op & 0xf;
			insn->rel = (signed char)buf[insn->imm_off];
		}
	} else if (insn->map == 1) {
		switch (op) {
		case 0x00: case 0x01: case 0x05: case 0x07: case 0x34: case 0x35: case 0xaa:
		case 0x20: case 0x21: case 0x22: case 0x23: case 0xa1: case 0xa9:
			return refuse(insn, "cannot displace a system instruction");
		case 0x0b: case 0xb9: case 0xff:
			return refuse(insn, "ud0/ud1/ud2 (a BUG site)");
		case 0x1e:
			if (insn->rep)
				return refuse(insn, "would overwrite an ENDBR");
			break;
		}
		if (op >= 0x80 && op <= 0x8f) {
			insn->kind = XP_INSN_JCC;
			insn->cc = op & 0xf;
			insn->rel = (s32)(buf[insn->imm_off] | buf[insn->imm_off + 1] << 8 |
				buf[insn->imm_off + 2] << 16 | (u32)buf[insn->imm_off + 3] << 24);
		}
	}
	/* 66 would make a near branch 16-bit on some CPUs; FS/GS or LOCK make no sense. */
	if (insn->kind != XP_INSN_SLOT && (insn->opsize || seg || lock))
		return refuse(insn, "cannot displace a branch with unexpected prefixes");
memory:
	if (insn->rip_rel && insn->addrsize)
		return refuse(insn, "cannot displace 32-bit RIP-relative addressing");
}

int xp_insn_decode(struct xp_insn *insn, const u8 *buf, int max)
{
	unsigned int f = 0;
	bool seg = false, lock = false, rex = false;
	int i = 0;
	u8 b;

	if (max > XP_INSN_MAX)
		max = XP_INSN_MAX;
	*insn = (struct xp_insn){ 0 };

	/* Legacy prefixes, then at most one REX right before the opcode. */
	for (;; i++) {
		if (i >= max)
			return -1;
		b = buf[i];
		if (b == 0x66) {
			insn->opsize = true;
		} else if (b == 0x67) {
			insn->addrsize = true;
		} else if (b == 0xf3) {
			insn->rep = true;
		} else if (b == 0xf2) {
			/* repne/bnd: no effect on length */
		} else if (b == 0xf0) {
			lock = true;
		} else if (b == 0x26 || b == 0x2e || b == 0x36 || b == 0x3e) {
			/* ignored in 64-bit mode (branch hints, padding) */
		} else if (b == 0x64 || b == 0x65) {
			seg = true;
		} else if ((b & 0xf0) == 0x40) {
			rex = true;
			insn->rex_w = b & 8;
			if (i + 1 >= max)
				return -1;
			b = buf[i + 1];
			if (b == 0x66 || b == 0x67 || b == 0xf2 || b == 0xf3 || b == 0xf0 ||
			    (b & 0xf0) == 0x40)
				return -1;	/* REX must come last */
			i++;
			break;
		} else {
			break;
		}
		if (rex)
			return -1;
	}

	b = buf[i++];
	if ((b == 0xc4 || b == 0xc5 || b == 0x62) && !rex) {
		/* VEX (C4 3-byte, C5 2-byte) or EVEX (62 4-byte). */
		u8 map;

		insn->vex = true;
		if (b == 0xc5) {
			if (i + 1 >= max)
				return -1;
			map = 1;
			i += 1;
		} else if (b == 0xc4) {
			if (i + 2 >= max)
				return -1;
			map = buf[i] & 0x1f;
			insn->rex_w = buf[i + 1] & 0x80;
			i += 2;
		} else {
			if (i + 3 >= max)
				return -1;
			map = buf[i] & 0x07;
			insn->rex_w = buf[i + 1] & 0x80;
			i += 3;
		}
		if (map < 1 || map > 7)
			return -1;
		insn->map = map;
		insn->opcode = buf[i++];
		f = F_M;
		if (map == 1 && insn->opcode == 0x77 && b != 0x62)
			f = 0;		/* vzeroupper/vzeroall */
		if (vex_imm8(map, insn->opcode))
			f |= F_I8;
	} else if (b == 0x0f) {
		if (i >= max)
			return -1;
		b = buf[i++];
		if (b == 0x38 || b == 0x3a) {
			if (i >= max)
				return -1;
			insn->map = b == 0x38 ? 2 : 3;
			insn->opcode = buf[i++];
			f = F_M | (insn->map == 3 ? F_I8 : 0);
		} else {
			insn->map = 1;
			insn->opcode = b;
			f = two_byte(b);
		}
	} else {
		insn->opcode = b;
		f = one_byte(b);
	}
	if (f & F_INV)
		return -1;

	if (f & F_M) {
		u8 mod, rm;

		if (i >= max)
			return -1;
		insn->has_modrm = true;
		insn->modrm = buf[i++];
		mod = insn->modrm >> 6;
		rm = insn->modrm & 7;
		if (mod != 3) {
			if (rm == 4) {
				if (i >= max)
					return -1;
				if (mod == 0 && (buf[i] & 7) == 5)
					insn->disp_len = 4;
				i++;
			}
			if (mod == 0 && rm == 5) {
				insn->disp_len = 4;
				insn->rip_rel = true;
			} else if (mod == 1) {
				insn->disp_len = 1;
			} else if (mod == 2) {
				insn->disp_len = 4;
			}
		}
		insn->disp_off = i;
		i += insn->disp_len;
	}

	insn->imm_off = i;
	if (f & F_GRP3) {
		if (((insn->modrm >> 3) & 7) < 2)
			insn->imm_len = insn->opcode == 0xf6 ? 1 : (insn->opsize ? 2 : 4);
	} else {
		if (f & F_I8)
			insn->imm_len += 1;
		if (f & F_I16)
			insn->imm_len += 2;
		if (f & F_IZ)
			insn->imm_len += insn->opsize ? 2 : 4;
		if (f & F_I32)
			insn->imm_len += 4;
		if (f & F_IV)
			insn->imm_len += insn->rex_w ? 8 : (insn->opsize ? 2 : 4);
		if (f & F_MOFFS)
			insn->imm_len += insn->addrsize ? 4 : 8;
	}
	i += insn->imm_len;
	if (i > max)
		return -1;
	insn->len = i;
	classify(insn, buf, seg, lock);
	return 0;
}
