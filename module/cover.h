/* SPDX-License-Identifier: GPL-2.0 */
/* Which instructions a jump hook may cover (cover.c). */
#ifndef _XPROBES_COVER_H
#define _XPROBES_COVER_H

#include "insn.h"

#define XP_JUMP_SIZE	5				/* jmp rel32 */
#define XP_COVER_MAX	(XP_JUMP_SIZE - 1 + XP_INSN_MAX)	/* bytes a jump may cover */
#define XP_COVER_INSNS	5				/* instructions it may cover */

/*
 * The retpoline and ITS thunks, one range per array of them (each holds a
 * thunk per register): a jump to one stands for an indirect jump. Not one
 * range over all: the return thunks lie between them on 6.12.
 */
#define XP_THUNK_RANGES	4
struct xp_ranges {
	unsigned int n;
	struct { unsigned long lo, hi; } r[XP_THUNK_RANGES];
};

static inline bool xp_in_ranges(const struct xp_ranges *t, unsigned long a)
{
	unsigned int i;

	for (i = 0; t && i < t->n; i++)
		if (a >= t->r[i].lo && a < t->r[i].hi)
			return true;
	return false;
}

struct xp_cover {
	unsigned int bytes;	/* covered bytes from the hook, >= XP_JUMP_SIZE but for a trap */
	unsigned int ninsn;	/* whole instructions among them */
	unsigned int branch_from;	/* with a branch refusal: where the branch is */
	const char *why;	/* why not, or NULL */
};

/*
 * May a jump at @off of the function @func (its bytes, @size of them, at
 * kernel address @base) cover the instructions there? 0 and @c filled, or
 * an error with @c->why. @thunks are the retpoline thunks (NULL: none).
 */
int xp_cover_decide(const u8 *func, unsigned long base, unsigned int size, unsigned int off,
		    const struct xp_ranges *thunks, struct xp_cover *c);

/*
 * Does a direct branch in @func (@size bytes at @base: another function,
 * such as the hooked one's GCC cold part) land in (@lo, @hi)? Its offset,
 * -1 if none, -2 if part of @func does not decode.
 */
int xp_branch_into(const u8 *func, unsigned long base, unsigned int size, unsigned long lo,
		   unsigned long hi);

/* What a user function's jump tables must be checked for (uhook.c). */
#define XP_COVER_TABLES	32
struct xp_cover_tables {
	unsigned int reg_jumps;		/* jmp *%reg in the function */
	unsigned int n;
	unsigned long base[XP_COVER_TABLES];	/* RIP-relative lea targets outside it */
};

/*
 * The same for a user function, where a jump through a register may be a
 * jump table's (its tables then filled in @t for the caller to read: no
 * entry may land inside the covered bytes), and a jump through memory
 * without an index is a tail call through a function pointer.
 */
int xp_cover_decide_user(const u8 *func, unsigned long base, unsigned int size,
			 unsigned int off, struct xp_cover *c, struct xp_cover_tables *t);

/*
 * A user hook that stays an int3 (uhook.c, XPROBES_F_TRAP): its trampoline
 * runs the instructions a jump at @off would cover, whatever branches into
 * them, or where no jump's could ever be run out of line, the one at @off
 * alone (a slot can run it, not a jcc; @c->bytes is then below
 * XP_JUMP_SIZE, often).
 */
int xp_cover_decide_trap(const u8 *func, unsigned int size, unsigned int off,
			 struct xp_cover *c);

#endif /* _XPROBES_COVER_H */
