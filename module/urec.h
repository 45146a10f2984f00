/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User hooks that write records instead of entering the kernel (urec.c,
 * urec_tmpl.S; docs/userhooks.md, "Design (b)"). Included by assembly too:
 * numbers only.
 */
#ifndef _XPROBES_UREC_H
#define _XPROBES_UREC_H

/* The records block of a trampoline area, at its offset XP_UREC_AREA_OFF. */
#define XP_UREC_CODE		0		/* the shared routines (urec_tmpl.S) */
#define XP_URT_N		2048		/* return thunks, one per return address */
#define XP_URT_SIZE		32
#define XP_URT_OFF		4096		/* the thunks */
#define XP_URT_TGT		(XP_URT_OFF + XP_URT_N * XP_URT_SIZE)	/* their targets */
#define XP_URT_HASH		(XP_URT_TGT + XP_URT_N * 8)	/* {ret, thunk} by ret */
#define XP_URT_HASH_BITS	12
#define XP_URT_PROBES		8		/* entries looked at from the bucket on */
#define XP_URT_HASH_SIZE	(((1 << XP_URT_HASH_BITS) + XP_URT_PROBES) * 16)
#define XP_UREC_BLOCK		(XP_URT_HASH + 69632)	/* 17 pages for the hash: 152 KiB */

/*
 * Per-CPU record buffers, a writable mapping of their own: a header, the
 * records, and beside each record what the process summed while it was the
 * newest (its "callees' time", in TSC cycles: urec_tmpl.S). The header:
 * the count (the commit), two slots for the newest record's callees' time
 * (which one by the count's parity, so that a routine that restarts finds
 * what it read unchanged), the cycles-to-ns ratio for the sums (0: the
 * process sums nothing), the sp of the first call the process summed
 * with no caller's entry in the buffer since the last hand-over (the
 * bottom's, 0: none; urec_tmpl.S), and last, where a record before the
 * first would be, the second word of a return record (the bottom's rule
 * is the one after a return).
 */
#define XP_UREC_BUF_SHIFT	14		/* 16 KiB per CPU */
#define XP_UREC_HDR		64
#define XP_UREC_SLOT		8		/* u64 [2] */
#define XP_UREC_MULT		24		/* u64, 32.32 fixed point */
#define XP_UREC_BSP		32		/* u64 */
#define XP_UREC_BELOW		(XP_UREC_HDR - 8)	/* u64: reads as a return record's */
#define XP_UREC_CAP		((((1 << XP_UREC_BUF_SHIFT) - XP_UREC_HDR) / 24))
#define XP_UREC_ACC		(XP_UREC_HDR + XP_UREC_CAP * 16)	/* u64 [XP_UREC_CAP] */

/*
 * The sums of the calls the process folds itself (XPROBES_F_SUMS), after
 * the buffers in the same mapping: one struct xprobes_usum (from its
 * calls on) per cookie under XPROBES_USUM_FUNCS, in XP_USUM_SIZE bytes.
 */
#define XP_USUM_SIZE		192
#define XP_USUM_CALLS		0
#define XP_USUM_WALL		8
#define XP_USUM_OWN		16
#define XP_USUM_HIST		24		/* u32 [XPROBES_USUM_HIST] */
#define XP_USUM_FUNCS		4096
#define XP_USUM_NHIST		40

/* A hook's stub, in front of its trampoline's instructions. */
#define XP_URSTUB_LEN		20		/* mov %rax,-16(%rsp); mov $c,%eax; call; mov back */

#define XP_UREC_COOKIE_MASK	0x1fff		/* the cookie bits a record carries */

#endif /* _XPROBES_UREC_H */
