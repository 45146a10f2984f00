/* SPDX-License-Identifier: GPL-2.0 */
/* Folding a hand-over's records into calls (urec_fold.c); host-testable. */
#ifndef _XPROBES_UREC_FOLD_H
#define _XPROBES_UREC_FOLD_H

#include <linux/types.h>
#ifdef __KERNEL__
#include <linux/math64.h>
#endif
#include "../uapi/xprobes.h"

/*
 * The hand-over's clock: a record's TSC reading @t is at bpf_ktime_get_ns()
 * time ns - (tsc - t) * mult / 2^32 (urec.c measures mult).
 */
struct xp_urec_clock {
	u64 tsc, ns, mult;
};

/* A record's TSC reading in bpf_ktime_get_ns() time; one after the clock's: the clock's. */
static inline u64 xp_urec_ns(const struct xp_urec_clock *c, u64 tsc)
{
	s64 d = c->tsc - tsc;

	return d > 0 ? c->ns - mul_u64_u64_shr(d, c->mult, 32) : c->ns;
}

u32 xp_urec_fold(const struct xprobes_urec *in, u32 n, const u64 *acc, u64 top,
		 struct xprobes_urec *out, const struct xp_urec_clock *c);
u32 xp_urec_fold_sums(const struct xprobes_urec *in, u32 n, const u64 *acc, u64 state,
		      u64 bsp, struct xprobes_urec *out, const struct xp_urec_clock *c);
void xp_urec_hist_tables(u64 mult, u64 *th, u8 *bk, unsigned int nb);

#endif /* _XPROBES_UREC_FOLD_H */
