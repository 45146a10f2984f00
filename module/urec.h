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

/* Per-CPU record buffers, a writable mapping of their own: a header, then records. */
#define XP_UREC_BUF_SHIFT	14		/* 16 KiB per CPU */
#define XP_UREC_HDR		64
#define XP_UREC_CAP		((((1 << XP_UREC_BUF_SHIFT) - XP_UREC_HDR) / 16))

/* A hook's stub, in front of its trampoline's instructions. */
#define XP_URSTUB_LEN		20		/* mov %rax,-16(%rsp); mov $c,%eax; call; mov back */

#define XP_UREC_COOKIE_MASK	0x1fff		/* the cookie bits a record carries */

#endif /* _XPROBES_UREC_H */
