// SPDX-License-Identifier: GPL-2.0
/*
 * Folding a hand-over's records into calls (XPROBES_F_CALLS; the record
 * layout is in uapi/xprobes.h). Most calls of a traced thread enter and
 * return between two of its switches, and a consumer that wants durations
 * (xprobectl trace) would replay both records of each through its shadow
 * stack only to pair them again. Here, while the records are in cache for
 * the hand-over anyway, each such pair becomes one record, in its entry's
 * place: the consumer sees a leaf call once, and no frame for it.
 *
 * A tail call nests too: the stub gives the callee a thunk of its own that
 * returns into its caller's, so its return comes first, at the same sp.
 * What is not a plain nesting of entries and returns stays as it came: a
 * return of an earlier hand-over's call, a return that skips entries
 * (longjmp), more than FOLD_DEPTH open entries. Meeting one, the
 * open entries are given up on ("unfolded"): they stay entry records, and
 * the calls already folded under them are marked XPROBES_UREC_TOP, so the
 * consumer charges them to those entries' frames instead of to a caller's
 * record. Every record is looked at once more at most, by that marking.
 *
 * Pure and bounded: runs in the hand-over, on the records of one CPU's
 * buffer, which the process can write too; a lie makes its own accounting
 * wrong, nothing else (the consumer bounds what it reads). Each record is
 * read once (READ_ONCE): an index taken from one is checked where used.
 * selftests/host/fold-check.c runs it on the host against a replay of the
 * records as they came.
 */
#ifdef __KERNEL__
#include <linux/compiler.h>
#endif
#include "urec_fold.h"

#define FOLD_DEPTH	16
#define LOG2_SHIFT	38
#define LEVEL_SHIFT	44		/* the module's bits of a call record's time */
#define LEVEL_MASK	0xf		/* levels 0 to FOLD_DEPTH - 1 */
#define CALLER_SHIFT	48
#define WALL_MAX	((1ULL << LOG2_SHIFT) - 1)
#define STATE_COUNT_BITS 16		/* XP_UREC_COUNT_BITS */
#define STATE_A_MASK	((1ULL << (64 - STATE_COUNT_BITS)) - 1)

/*
 * The histogram bucket of a call, computed here (one bsr) rather than by
 * the consumer (a BPF program has no such instruction: six tests).
 */
static inline u64 log2_down(u64 v)
{
	return v ? 63 - __builtin_clzll(v) : 0;
}

/* The bucket of a call of @cycles at ratio @mult: the log2 of its ns, at most @nb - 1. */
static inline u64 hist_bucket(u64 cycles, u64 mult, unsigned int nb)
{
	u64 k = log2_down(mul_u64_u64_shr(cycles, mult, 32));

	return k < nb ? k : nb - 1;
}

/*
 * The stack of open entries is written before it is read (st[i] only for
 * i < d). Left to the kernel's CONFIG_INIT_STACK_ALL_ZERO, its 384 bytes
 * would be cleared at every hand-over: a third of the fold of a short batch.
 */
#if __has_attribute(__uninitialized__)
#define FOLD_NOINIT __attribute__((__uninitialized__))
#else
#define FOLD_NOINIT
#endif

/* An entry of this hand-over whose return has not come yet. */
struct fold_open {
	u64 sp;
	u64 t0;
	u32 at;			/* its record's index in the output */
	u16 cookie;
	bool tail;
	bool charged;		/* a charge follows it: it keeps its frame */
};

/*
 * Give up on the D open entries: they stay entry records. A call folded
 * under one of them (its caller at level L - 1 of the stack, pushed before
 * it) is marked TOP. Output records before the oldest open entry belong to
 * earlier, closed nestings and are not looked at again.
 */
static void unfold(struct xprobes_urec *r, u32 o, const struct fold_open *st, u32 d)
{
	u32 j, level;

	for (j = st[0].at + 1; j < o; j++) {
		u64 w = READ_ONCE(r[j].what);

		if (!XPROBES_UREC_IS_CALL(w) || (w & XPROBES_UREC_TOP))
			continue;
		level = (READ_ONCE(r[j].time) >> LEVEL_SHIFT) & LEVEL_MASK;
		if (level >= 1 && level <= d && j > st[level - 1].at)
			r[j].what = w | XPROBES_UREC_TOP;
	}
}

/* A, the cycles the process summed (urec.h), of a state word. */
static inline u64 state_a(u64 state)
{
	return state >> STATE_COUNT_BITS;
}

/*
 * What the process summed itself under record @i (XPROBES_F_SUMS), in
 * cycles: A beside the next record (or in the state now, @top, for the
 * newest) less A beside it, modulo 2^48. A lie only moves the time
 * between its own functions.
 */
static inline u64 fold_callees(const u64 *acc, u64 top, u32 i, u32 n)
{
	u64 next = i + 1 < n ? READ_ONCE(acc[i + 1]) : top;

	return (state_a(next) - state_a(READ_ONCE(acc[i]))) & STATE_A_MASK;
}

/*
 * A charge of @cycles (callees' time the process summed) at @sp, as a span
 * in ns: the clock's ratio alone, clamped to what a record's time holds.
 */
static inline void fold_charge(struct xprobes_urec *r, u64 cycles, u64 sp, u64 flags,
			       const struct xp_urec_clock *c)
{
	u64 x = mul_u64_u64_shr(cycles, c->mult, 32);

	r->time = x < WALL_MAX ? x : WALL_MAX;
	r->what = XPROBES_UREC_CHARGE | flags | XPROBES_UREC_SP(sp);
}

/*
 * Fold @in's @n records into @out, their times turned from TSC readings
 * into nanoseconds by @c on the way (one pass: the records are read once);
 * returns how many records there are now. Without @acc, @out may be @in
 * (a record goes no further than where it was read). With @acc (the state
 * words beside the records and @top the state now, XPROBES_F_SUMS: the
 * callees' time the process summed itself is in their A's), an entry that
 * has some is followed by a charge, so @out must hold 2 * @n records, and
 * keeps its frame: its return stays a return. A return after which the
 * process summed calls (at its sp: urec_tmpl.S) stays a return, followed
 * by their time as a bottom charge at its sp, which drops what their
 * entries would have and goes to the frame on top.
 */
u32 xp_urec_fold(const struct xprobes_urec *in, u32 n, const u64 *acc, u64 top,
		 struct xprobes_urec *out, const struct xp_urec_clock *c)
{
	struct fold_open st[FOLD_DEPTH] FOLD_NOINIT;
	u32 i, o = 0, d = 0;

	for (i = 0; i < n; i++) {
		u64 t = xp_urec_ns(c, READ_ONCE(in[i].time)), w = READ_ONCE(in[i].what);
		u64 sp = XPROBES_UREC_SP(w), x = 0;

		if (w & XPROBES_UREC_RET) {
			/* calls the process summed after it, at its sp */
			if (acc)
				x = fold_callees(acc, top, i, n);
			if (!x && d && sp == st[d - 1].sp && !st[d - 1].charged && t >= st[d - 1].t0 &&
			    t - st[d - 1].t0 <= WALL_MAX) {
				struct fold_open *e = &st[--d];
				u64 wall = t - e->t0;

				out[e->at].what = XPROBES_UREC_CALL | e->sp |
						  (u64)e->cookie << XPROBES_UREC_SP_BITS |
						  (d ? 0 : XPROBES_UREC_TOP);
				out[e->at].time = wall | log2_down(wall) << LOG2_SHIFT |
						  (u64)d << LEVEL_SHIFT |
						  (d ? (u64)st[d - 1].cookie << CALLER_SHIFT : 0) |
						  (e->tail ? XPROBES_UREC_CALL_TAIL : 0);
				continue;
			}
			if (d)
				unfold(out, o, st, d);
			d = 0;
			w = XPROBES_UREC_RET | sp;	/* a return, nothing else */
		} else if (!(w & XPROBES_UREC_NORET)) {
			bool tail = w & XPROBES_UREC_TAIL;

			/*
			 * Above the newest open entry's sp (at it, unless a tail
			 * call of it): that one never returned.
			 */
			if (d == FOLD_DEPTH || (d && (sp > st[d - 1].sp || (sp == st[d - 1].sp && !tail)))) {
				unfold(out, o, st, d);
				d = 0;
			}
			if (acc)
				x = fold_callees(acc, top, i, n);
			st[d].sp = sp;
			st[d].t0 = t;
			st[d].at = o;
			st[d].cookie = XPROBES_UREC_COOKIE(w);
			st[d].tail = tail;
			st[d].charged = x;
			d++;
		}
		out[o].time = t;
		out[o].what = w;
		o++;
		if (x)
			fold_charge(&out[o++], x, sp, w & XPROBES_UREC_RET ? XPROBES_UREC_BOTTOM : 0, c);
	}
	if (d)
		unfold(out, o, st, d);
	return o;
}

/*
 * A hand-over of a process that sums (XPROBES_F_SUMS): @in's @n records
 * folded as xp_urec_fold() does, with the state words @acc beside them
 * and @state the header's, after the bottom charge when the process
 * summed calls with no caller's entry in the buffer (@bsp, the first
 * one's sp: urec_tmpl.S). Their time is the callees' of the frame below
 * the records: A (which the last hand-over left at 0) in @state while no
 * record is left, else beside the first. The charge comes first, as those
 * calls came before every record left. @out holds 2 * @n + 1 records.
 */
u32 xp_urec_fold_sums(const struct xprobes_urec *in, u32 n, const u64 *acc, u64 state,
		      u64 bsp, struct xprobes_urec *out, const struct xp_urec_clock *c)
{
	u32 o = 0;

	if (bsp)
		fold_charge(&out[o++], state_a(n ? READ_ONCE(acc[0]) : state), bsp,
			    XPROBES_UREC_BOTTOM, c);
	return o + xp_urec_fold(in, n, acc, state, out + o, c);
}

/*
 * The return routine's histogram tables for the ratio @mult (urec_tmpl.S):
 * a call of c cycles whose top bit is b goes to bucket @bk[b] + (c >=
 * @th[b]), the log2 of its ns rounded down (0 for 0), at most @nb - 1,
 * for b under @nb (0 cycles read as 1: bsr leaves b at 0). Within [2^b,
 * 2^(b+1)) the ns at most double, so the bucket grows by one at most:
 * @th[b] is where it does (a search), or all ones.
 */
void xp_urec_hist_tables(u64 mult, u64 *th, u8 *bk, unsigned int nb)
{
	unsigned int b;

	for (b = 0; b < nb; b++) {
		u64 lo = 1ULL << b, hi = (2ULL << b) - 1;
		u64 k = hist_bucket(lo, mult, nb);

		bk[b] = k;
		th[b] = ~0ULL;
		if (hist_bucket(hi, mult, nb) == k)
			continue;
		while (hi - lo > 1) {	/* bucket(lo) is k, bucket(hi) past it */
			u64 mid = lo + (hi - lo) / 2;

			if (hist_bucket(mid, mult, nb) > k)
				hi = mid;
			else
				lo = mid;
		}
		th[b] = hi;
	}
}

#ifdef XPROBES_KUNIT
#include "urec_fold_kunit.c"
#endif
