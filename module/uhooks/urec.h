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
/*
 * Return thunks, one per return address a traced call returns to, never
 * reused while the block lives (a stack may hold one): past them a call's
 * return is given up (trace's returns_lost), from its address's second
 * call on without a system call (XP_URT_NEGBIT). 2048 until 2026-12-06: Redis
 * under a trace of every function reaches 776 with its whole benchmark
 * suite and a reload (docs/experiments.md, section 7, finding 3), a larger
 * program thousands. The hash has twice as many entries.
 */
#define XP_URT_N		16384
#define XP_URT_SIZE		32
#define XP_URT_OFF		4096		/* the thunks */
#define XP_URT_TGT		(XP_URT_OFF + XP_URT_N * XP_URT_SIZE)	/* their targets */
#define XP_URT_HASH		(XP_URT_TGT + XP_URT_N * 8)	/* {ret, thunk} by ret */
/*
 * A hash entry's thunk with this bit set: its key is a thunk of the
 * process's, of this block or another (a tail call's return address), which the entry routine takes
 * off as it stores the thunk and makes the record's XPROBES_UREC_TAIL.
 * Bit 63: a user address never has it, so an entry detached to its key
 * (a return address, odd or not) keeps it only where the key is a thunk.
 */
#define XP_URT_TAILBIT		63
/*
 * A hash entry whose thunk has this bit too (and XP_URT_TAILBIT, which
 * sends the routine off its common path) is a return address the block
 * gave no thunk: the block had none left when its first call asked. The
 * routine then leaves the return address where it is and makes the
 * record XPROBES_UREC_NORET, without asking again: until 2026-12-06 every
 * call from such an address was a system call. The rest of the word is
 * the key.
 */
#define XP_URT_NEGBIT		62
#define XP_URT_HASH_BITS	15
#define XP_URT_PROBES		8		/* entries looked at from the bucket on */
#define XP_URT_HASH_SIZE	(((1 << XP_URT_HASH_BITS) + XP_URT_PROBES) * 16)
/* the hash in whole pages: 129, and the block 1160 KiB (urec.c: BLK_PAGES held) */
#define XP_UREC_BLOCK		(XP_URT_HASH + ((XP_URT_HASH_SIZE + 4095) / 4096) * 4096)

/*
 * Per-CPU record buffers, a writable mapping of their own: a header, the
 * records, and beside each record the state word as it was at its append.
 * The state (the header's first word, the commit) is the count in its low
 * 16 bits, as eight times the number of records (XP_UREC_COUNT_UNIT: the
 * byte offset of the next record's state word, half the next record's,
 * which the routines index with as it is; one until 2026-12-07) and, above
 * them, A: the TSC cycles of every call the process
 * summed itself since the last hand-over, modulo 2^48 (urec_tmpl.S). What
 * the calls under a record took is then the difference of two A's: the
 * one beside the next record (or the state's, for the newest) less its
 * own. The header also has the cycles-to-ns ratio its tables are for
 * (set before the process can sum), the sp of the first call the process
 * summed with no caller's entry in the buffer since the last hand-over
 * (the bottom's, 0: none), the tables (the log2 bucket of a call's ns from
 * its cycles: XP_UREC_BK[b] + (cycles >= XP_UREC_TH[b]) for b the cycles'
 * top bit), and last, where a record before the first would be, the
 * second word of a return record (the bottom's rule is the one after a
 * return).
 */
#define XP_UREC_BUF_SHIFT	14		/* 16 KiB per CPU */
#define XP_UREC_COUNT_BITS	16		/* the state's count; A above it */
#define XP_UREC_COUNT_UNIT	8		/* a record in the count */
#define XP_UREC_MULT		24		/* u64, 32.32 fixed point */
#define XP_UREC_BSP		32		/* u64 */
#define XP_UREC_TH		64		/* u64 [XP_USUM_NHIST] */
#define XP_UREC_BK		(XP_UREC_TH + XP_USUM_NHIST * 8)	/* u8 [XP_USUM_NHIST] */
#define XP_UREC_HDR		448
#define XP_UREC_BELOW		(XP_UREC_HDR - 8)	/* u64: reads as a return record's */
#define XP_UREC_CAP		((((1 << XP_UREC_BUF_SHIFT) - XP_UREC_HDR) / 24))
#define XP_UREC_ACC		(XP_UREC_HDR + XP_UREC_CAP * 16)	/* u64 [XP_UREC_CAP] */

/*
 * The sums of the calls the process folds itself (XPROBES_F_SUMS), after
 * the buffers in the same mapping: per cookie under XPROBES_USUM_FUNCS,
 * in XP_USUM_SIZE bytes, the calls' wall and own times in TSC cycles
 * (the kernel converts them when it reads them) and their histogram, as
 * struct xprobes_usum has them from its wall on, every count in 64 bits
 * (the buckets were 32 until 2026-12-04: a process summing 10 million
 * calls a second of one function filled one in about 7 minutes). The
 * routine counts a call in its bucket only, and the kernel sums the
 * buckets for the calls: the first word is unused (a locked add of its
 * own counted them there until 2026-12-06). The kernel's tables
 * give buckets up to XP_USUM_NHIST - 1; tables the process rewrote itself
 * can make its routine add 1 up to 2 KiB past a function's histogram: in
 * its own memory, to its own figures.
 */
#define XP_USUM_SIZE		384
#define XP_USUM_WALL		8
#define XP_USUM_OWN		16
#define XP_USUM_HIST		24		/* [XPROBES_USUM_HIST] of XP_USUM_BUCKET bytes */
#define XP_USUM_BUCKET		8
#define XP_USUM_FUNCS		4096
#define XP_USUM_NHIST		40

/*
 * The stamp's place in a thread's rseq area (urec_tmpl.S): a u32 in the
 * padding of the 32 bytes every registration has, past the last field the
 * kernel writes (mm_cid, 6.3 on).
 */
#define XP_RSEQ_STAMP		28

/* A hook's stub, in front of its trampoline's instructions. */
#define XP_URSTUB_LEN		20		/* mov %rax,-16(%rsp); mov $c,%eax; call; mov back */

#define XP_UREC_COOKIE_MASK	0x3fff		/* the cookie bits a record carries */
#define XP_UREC_SP_BITS		47		/* below them in a record's word: the sp */

/*
 * The thunk cache, after the sums in the same mapping: by a hook's cookie
 * (its stub's eax, up to XP_UREC_COOKIE_MASK), the offset in the hash of
 * the entry its last call found. The entry routine compares that entry's
 * key before it hashes: a hit is one compare. The process writes the
 * cache, so it is a hint only: the routine masks what it reads to the
 * offset of one of the first 1 << XP_URT_HASH_BITS entries, whose key and
 * thunk only the kernel writes (an entry of the probes' overflow past
 * them is stored but, masked, never found: its hook hashes every call).
 * Whatever the process puts there costs it a hash lookup. The cookie
 * indexes it as the stub gave it; a thread that enters the routine with
 * an eax of its own reads and writes 4 bytes where it chose, in its own
 * memory. On a real CPU a miss stores to a line that 16 cookies share
 * between all the threads: a function called from many places by many
 * threads at once moves that line from CPU to CPU.
 */
#define XP_UREC_TCACHE_SIZE	((XP_UREC_COOKIE_MASK + 1) * 4)	/* u32 each */
#define XP_URT_TCACHE_MASK	(((1 << XP_URT_HASH_BITS) - 1) * 16)

#endif /* _XPROBES_UREC_H */
