// SPDX-License-Identifier: GPL-2.0
/*
 * Host-side check of module/uhooks/urec_fold.c (XPROBES_F_CALLS). A simulated
 * thread makes random calls of 8 functions (nested, leaves, tail calls,
 * calls whose return writes nothing, longjmps over open calls, nesting
 * deeper than the fold keeps, now and then a pause of 2^32 cycles, more
 * than the routine sums: such a call at the bottom stores bsp, then
 * appends its return); its records are cut into hand-overs at
 * random and accounted twice, by the rules of trace's replay
 * (bpf/trace.bpf.c: push and pop by sp, abandoned frames dropped, a
 * parent charged its children's time): once as they came, once folded.
 * Per function the calls, the wall time and the exclusive time must agree
 * exactly, and so must the frames left open, the abandoned and unmatched
 * counts, after every hand-over. Structure: what is not a folded call
 * comes out as it went in, in order; a folded call's cookie and sp are its
 * entry's. Prints a summary; exits 1 at the first disagreement.
 *
 *   fold-check [RUNS] [nobottom|bottom-nobsp|bottom-nodrop|after-nosp|interrupt]
 *
 * The process's sums as built (docs/userhooks.md, "The bottom of the
 * buffer"): the return routine also sums a call whose entry is the only
 * record (not a tail call, not above the first such call's sp since the
 * hand-over, bsp), its wall time going to slot 0; the hand-over
 * (xp_urec_fold_sums()) sends slot 0 (or, with records left, ACC[0])
 * first as a bottom charge at bsp, which the consumer treats as an entry
 * at bsp would treat the stack (frames at or below it dropped) and then
 * charges to the frame on top. A call at the sp of a return record just
 * before its entry is summed the same way, its time beside that return,
 * which the hand-over follows with a bottom charge at its sp. nobottom:
 * the routine before both (a call whose entry is the only record, or
 * follows a return, appends its return). bottom-nobsp, bottom-nodrop and
 * after-nosp (a call after a return summed at any sp) leave out one rule
 * each, and must fail. interrupt: 45% of the folds stop after their
 * stores, before their commit, as a preemption or a signal would stop
 * them, and restart: after a hand-over, or after a handler's calls (on
 * the stack below, or far above).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t u64;
typedef uint32_t u32;
typedef uint16_t u16;
typedef uint8_t u8;
typedef int64_t s64;
#define READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
static inline u64 mul_u64_u64_shr(u64 a, u64 b, unsigned int shift)
{
	return (u64)(((unsigned __int128)a * b) >> shift);
}
#include "../../module/uhooks/urec_fold.c"

/* The records' times as they are: a clock at the end of time, a cycle a nanosecond. */
static const struct xp_urec_clock same_clock = { ~0ULL >> 1, ~0ULL >> 1, 1ULL << 32 };

#define NF	8
enum { PLAIN, BOTTOM_SUMS, BOTTOM_NOBSP, BOTTOM_NODROP, AFTER_NOSP };
static int mode = BOTTOM_SUMS;
static int interrupt_pct;	/* interrupt: the share of folds stopped before their commit */
static u64 interrupts, bottom_long;
#define MAXD	256
#define CAP	664		/* XP_UREC_CAP: 16 KiB a CPU less 448 of header, 24 bytes a record */
#define XP_UREC_COUNT_UNIT 8	/* urec.h: a record in the state's count */

struct frame { u64 sp, t0, child; u32 cookie; };

/* A consumer of records: trace's replay, wall time only (no switches). */
struct model {
	struct frame f[MAXD];
	int d;
	u64 calls[NF], wall[NF], entries, returns, abandoned, unmatched;
	int64_t excl[NF];
};

static void drop(struct model *m, u64 sp, int keep_equal)
{
	while (m->d && (m->f[m->d - 1].sp < sp || (m->f[m->d - 1].sp == sp && !keep_equal))) {
		m->d--;
		m->abandoned++;
	}
}

static void charge(struct model *m, u32 c, u64 wall, u64 child)
{
	m->calls[c]++;
	m->wall[c] += wall;
	m->excl[c] += wall > child ? wall - child : 0;
	if (m->d)
		m->f[m->d - 1].child += wall;
}

static void consume(struct model *m, const struct xprobes_urec *r)
{
	u64 w = r->what, sp = XPROBES_UREC_SP(w);
	u32 c = XPROBES_UREC_COOKIE(w);
	struct frame *f;

	if (XPROBES_UREC_IS_BOTTOM(w)) {
		/* calls summed with no entry under them: as their entries would, drop, then charge */
		if (mode != BOTTOM_NODROP)
			drop(m, sp, 0);
		if (m->d)
			m->f[m->d - 1].child += r->time;
		return;
	}
	if (XPROBES_UREC_IS_CHARGE(w)) {	/* callees the process summed: the top frame's */
		if (m->d && m->f[m->d - 1].sp == sp)
			m->f[m->d - 1].child += r->time;
		return;
	}
	if (XPROBES_UREC_IS_CALL(w)) {
		u64 wall = XPROBES_UREC_WALL(r->time);

		m->entries++;
		m->returns++;
		m->calls[c]++;
		m->wall[c] += wall;
		m->excl[c] += wall;
		if (!(w & XPROBES_UREC_TOP)) {
			m->excl[XPROBES_UREC_CALLER(r->time)] -= wall;
			return;
		}
		drop(m, sp, !!(r->time & XPROBES_UREC_CALL_TAIL));
		if (m->d)
			m->f[m->d - 1].child += wall;
		return;
	}
	if (w & XPROBES_UREC_RET) {
		while (m->d && m->f[m->d - 1].sp < sp) {
			m->d--;
			m->abandoned++;
		}
		if (!m->d || m->f[m->d - 1].sp != sp) {
			m->unmatched++;
			return;
		}
		f = &m->f[--m->d];
		m->returns++;
		charge(m, f->cookie, r->time - f->t0, f->child);
		return;
	}
	m->entries++;
	if (w & XPROBES_UREC_NORET)
		return;
	drop(m, sp, !!(w & XPROBES_UREC_TAIL));
	if (m->d == MAXD) {
		fprintf(stderr, "model too shallow\n");
		exit(2);
	}
	m->f[m->d++] = (struct frame){ .sp = sp, .t0 = r->time, .cookie = c };
}

static int same(const struct model *a, const struct model *b, char *why, size_t len)
{
	int i;

	for (i = 0; i < NF; i++)
		if (a->calls[i] != b->calls[i] || a->wall[i] != b->wall[i] || a->excl[i] != b->excl[i]) {
			snprintf(why, len, "function %d: calls %llu/%llu wall %llu/%llu excl %lld/%lld", i,
				 (unsigned long long)a->calls[i], (unsigned long long)b->calls[i],
				 (unsigned long long)a->wall[i], (unsigned long long)b->wall[i],
				 (long long)a->excl[i], (long long)b->excl[i]);
			return 0;
		}
	if (a->d != b->d || a->entries != b->entries || a->returns != b->returns ||
	    a->abandoned != b->abandoned || a->unmatched != b->unmatched) {
		snprintf(why, len, "depth %d/%d entries %llu/%llu returns %llu/%llu abandoned %llu/%llu "
			 "unmatched %llu/%llu", a->d, b->d,
			 (unsigned long long)a->entries, (unsigned long long)b->entries,
			 (unsigned long long)a->returns, (unsigned long long)b->returns,
			 (unsigned long long)a->abandoned, (unsigned long long)b->abandoned,
			 (unsigned long long)a->unmatched, (unsigned long long)b->unmatched);
		return 0;
	}
	for (i = 0; i < a->d; i++)
		if (a->f[i].sp != b->f[i].sp || a->f[i].t0 != b->f[i].t0 ||
		    a->f[i].child != b->f[i].child || a->f[i].cookie != b->f[i].cookie) {
			snprintf(why, len, "open frame %d differs (child %llu/%llu)", i,
				 (unsigned long long)a->f[i].child, (unsigned long long)b->f[i].child);
			return 0;
		}
	return 1;
}

/*
 * The simulated thread: its real stack, and how its calls return. A tail
 * call's callee gets a thunk of its own that returns into its caller's (the
 * stub's slow path), so it is a frame at its caller's sp, and its return
 * is followed at once by its caller's.
 */
struct sim {
	u64 sp[64], t;
	int noret[64], tailed[64], d;
};

static u64 rnd(u64 n)
{
	return (u64)random() % n;
}

/* The next record of the thread into R; 0 if the step made none. */
static int step(struct sim *s, struct xprobes_urec *r, int maxd)
{
	u64 k = rnd(100), sp;

	s->t += 1 + rnd(100);
	if (!rnd(500))
		s->t += 1ULL << 32;	/* a call too long to sum (the routine's 2^32 check) */
	r->time = s->t;
	if (s->d && s->tailed[s->d - 1] == 2) {		/* the caller of a tail call */
		s->d--;
		if (s->d && s->tailed[s->d - 1])
			s->tailed[s->d - 1] = 2;
		if (s->noret[s->d])
			return 0;
		r->what = XPROBES_UREC_RET | s->sp[s->d];
		return 1;
	}
	if (s->d && (k < 40 || s->d >= maxd)) {		/* a return */
		s->d--;
		if (s->d && s->tailed[s->d - 1])	/* its caller's return comes next */
			s->tailed[s->d - 1] = 2;
		if (s->noret[s->d])
			return 0;
		r->what = XPROBES_UREC_RET | s->sp[s->d];
		return 1;
	}
	if (s->d > 1 && k < 43) {			/* longjmp over some calls */
		s->d -= 1 + rnd(s->d - 1);
		s->tailed[s->d - 1] = 0;
		return 0;
	}
	if (s->d && k < 47) {				/* a tail call from the top one */
		if (s->d == 64)
			return 0;
		r->what = XPROBES_UREC_TAIL | rnd(NF) << XPROBES_UREC_SP_BITS | s->sp[s->d - 1];
		s->tailed[s->d - 1] = 1;
		s->noret[s->d] = s->noret[s->d - 1];
		s->tailed[s->d] = 0;
		s->sp[s->d] = s->sp[s->d - 1];
		s->d++;
		return 1;
	}
	sp = s->d ? s->sp[s->d - 1] - 16 * (1 + rnd(4)) : 0x7ffff000 - 16 * rnd(4);
	r->what = rnd(NF) << XPROBES_UREC_SP_BITS | sp;
	s->noret[s->d] = k < 52;
	if (s->noret[s->d])
		r->what |= XPROBES_UREC_NORET;
	s->tailed[s->d] = 0;
	s->sp[s->d++] = sp;
	return 1;
}

/* What the process summed itself in a hand-over (XPROBES_F_SUMS). */
struct psums {
	u64 calls[NF], wall[NF], own[NF], bottom;
};

/* a word shifted left by SPSH keeps its sp bits alone, at the top */
#define SPSH	(64 - XPROBES_UREC_SP_BITS)

/*
 * The return routine's sums (module/uhooks/urec_tmpl.S, xp_urec_ret), step for
 * step: the return R is folded if the newest record is its entry and the
 * one before its caller's (above it, or at its sp for a tail call; neither
 * without a return). Returns whether it was.
 */
static int proc_fold(struct xprobes_urec *buf, u32 *np, u64 *acc, u64 *state, u64 *bsp,
		      const struct xprobes_urec *r, struct psums *ps)
{
	u64 sp = XPROBES_UREC_SP(r->what), e, c, wall, t;
	u32 n = *np, cookie;

	if ((*state & 0xffff) != n * XP_UREC_COUNT_UNIT) {
		fprintf(stderr, "the state's count %llu is not %u records\n",
			(unsigned long long)(*state & 0xffff), n);
		exit(1);
	}
	if (n < (mode == PLAIN ? 2 : 1) || n > CAP - 1)
		return false;
	e = buf[n - 1].what - sp;
	if (e << SPSH)
		return false;
	cookie = XPROBES_UREC_COOKIE(e);
	if (cookie >= 4096)
		return false;
	if (n == 1) {
		/* the bottom: its caller's frame is the consumer's, above sp */
		if (e >> 61 || (mode != BOTTOM_NOBSP && *bsp && sp > *bsp))
			return false;
		if (!*bsp)
			*bsp = sp;	/* stored before the nested path's checks */
		wall = r->time - buf[0].time;
		if (wall >> 32) {
			bottom_long++;	/* appends its return, bsp kept */
			return false;
		}
		t = (*state - acc[0]) >> 16;	/* A now less A at its entry */
		if (interrupt_pct && (int)rnd(100) < interrupt_pct) {
			interrupts++;
			return 2;	/* stopped before the commit: restarts */
		}
		*state = acc[0] + (wall << 16);	/* the commit */
		*np = 0;
		ps->calls[cookie]++;
		ps->wall[cookie] += wall;
		ps->own[cookie] += wall - t;
		ps->bottom++;
		return true;
	}
	c = buf[n - 2].what;
	if (c >> 61 == 4 && mode != PLAIN) {
		/* after a return: at its sp, the time goes beside it */
		if (e >> 61 || (mode != AFTER_NOSP && (c << SPSH) != (sp << SPSH)))
			return false;
	} else if ((c >> 61) & 5) {	/* a return, or no return: not a caller */
		return false;
	} else if (!(e >> 61)) {	/* a call: its caller above it */
		if ((c << SPSH) <= (sp << SPSH))
			return false;
	} else if (e >> 61 != 2 || (c << SPSH) != (sp << SPSH)) {
		return false;		/* a tail call: its caller at its sp */
	}
	wall = r->time - buf[n - 1].time;
	if (wall >> 32)
		return false;
	t = (*state - acc[n - 1]) >> 16;
	if (interrupt_pct && (int)rnd(100) < interrupt_pct) {
		interrupts++;
		return 2;
	}
	*state = acc[n - 1] + (wall << 16);
	*np = n - 1;
	ps->calls[cookie]++;
	ps->wall[cookie] += wall;
	ps->own[cookie] += wall - t;
	return true;
}

/* An append: the state beside it, then the count in the state one more. */
static void append(struct xprobes_urec *in, u32 *n, u64 *acc, u64 *state,
		   const struct xprobes_urec *r)
{
	acc[*n] = *state;
	in[(*n)++] = *r;
	*state += XP_UREC_COUNT_UNIT;
}

/*
 * The return routine's histogram tables (xp_urec_hist_tables()) against
 * the bucket of the ns themselves, for ratios of TSCs from 0.3 to 6 GHz,
 * at every bucket's edges and at random: the routine's bucket is bk[b] +
 * (c >= th[b]), b the cycles' top bit.
 */
static int hist_check(void)
{
	u64 th[40], c, m, k, want;
	u8 bk[40];
	unsigned int i, j, b, n = 0;

	for (i = 0; i < 2000; i++) {
		m = (u64)((1ULL << 32) / (0.3 + 5.7 * i / 2000.0)) + rnd(1000);
		xp_urec_hist_tables(m, th, bk, 40);
		for (j = 0; j < 400; j++) {
			if (j < 80) {	/* around where a bucket starts: c * m >> 32 == 2^(j/2) */
				c = (((1ULL << (j / 2)) << 32) + m - 1) / m;
				c += j & 1 ? 0 : -1;
			} else {
				c = ((u64)random() << 31 | random()) >> rnd(64);
			}
			if (!c || c >> 40)
				continue;
			for (b = 63; !(c >> b); b--)
				;
			k = bk[b] + (c >= th[b]);
			want = hist_bucket(c, m, 40);
			n++;
			if (k != want) {
				fprintf(stderr, "ratio %llu, %llu cycles: bucket %llu from the tables, %llu\n",
					(unsigned long long)m, (unsigned long long)c,
					(unsigned long long)k, (unsigned long long)want);
				return 1;
			}
		}
	}
	printf("fold-check: histogram tables agree with the ns's bucket (%u calls, 2000 ratios)\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	static struct xprobes_urec in[CAP], out[2 * CAP + 1], raw[64 * CAP];
	static u64 acc[CAP];
	static struct model ref, fold;
	unsigned long runs = argc > 1 ? strtoul(argv[1], NULL, 0) : 2000, run;
	u64 records = 0, items = 0, folded = 0, top = 0, summed = 0, charges = 0;
	u64 bottoms = 0, charges_bottom = 0, charges_after = 0;
	char why[256];

	if (argc > 2) {
		if (!strcmp(argv[2], "nobottom"))
			mode = PLAIN;
		else if (!strcmp(argv[2], "bottom-nobsp"))
			mode = BOTTOM_NOBSP;
		else if (!strcmp(argv[2], "bottom-nodrop"))
			mode = BOTTOM_NODROP;
		else if (!strcmp(argv[2], "after-nosp"))
			mode = AFTER_NOSP;
		else if (!strcmp(argv[2], "interrupt"))
			interrupt_pct = 45;
		else {
			fprintf(stderr, "usage: fold-check [RUNS] [nobottom|bottom-nobsp|bottom-nodrop|after-nosp|interrupt]\n");
			return 2;
		}
	}

	if (hist_check())
		return 1;
	for (run = 0; run < runs; run++) {
		struct sim s = { .t = 1000 };
		int maxd = 2 + run % 40, batches = 1 + run % 50, b;
		bool sums = run & 1;	/* the process sums calls itself */
		u64 state = 0, bsp = 0;	/* the header's: A above a 16-bit count */
		struct xprobes_urec pend;	/* a return to restart after a hand-over */
		bool pending = false;

		srandom(run + 1);
		memset(&ref, 0, sizeof(ref));
		memset(&fold, 0, sizeof(fold));
		for (b = 0; b < batches; b++) {
			u32 n = 0, nraw = 0, m, i, j = 0, want = rnd(4) ? 1 + rnd(60) : CAP;
			struct psums ps = { { 0 } };
			unsigned long guard = 0;

			while (n < want && nraw < 64 * CAP - 16 && guard++ < 1000000) {
				struct xprobes_urec r;
				int f = 0;

				if (pending) {
					r = pend;
					pending = false;
				} else if (!step(&s, &r, maxd)) {
					continue;
				}
				raw[nraw++] = r;
				if (sums && (r.what & XPROBES_UREC_RET))
					f = proc_fold(in, &n, acc, &state, &bsp, &r, &ps);
				if (f == 2 && rnd(2)) {
					/* preempted before the commit: a hand-over, then the restart */
					nraw--;
					pend = r;
					pending = true;
					break;
				}
				while (f == 2) {
					/* a signal: its handler's calls, below or far above; then the restart */
					u64 hsp = XPROBES_UREC_SP(r.what) + (rnd(2) ? -512 : 0x100000);
					int k, nh = 1 + rnd(3), save = interrupt_pct;
					struct xprobes_urec h;

					nraw--;
					interrupt_pct = 0;
					for (k = 0; k < nh; k++) {
						h.time = s.t += 1 + rnd(50);
						h.what = rnd(NF) << XPROBES_UREC_SP_BITS | (hsp - 16 * k);
						raw[nraw++] = h;
						append(in, &n, acc, &state, &h);
						h.time = s.t += 1 + rnd(50);
						h.what = XPROBES_UREC_RET | (hsp - 16 * k);
						raw[nraw++] = h;
						if (!proc_fold(in, &n, acc, &state, &bsp, &h, &ps))
							append(in, &n, acc, &state, &h);
					}
					interrupt_pct = save;
					r.time = s.t += 1 + rnd(20);
					raw[nraw++] = r;
					f = proc_fold(in, &n, acc, &state, &bsp, &r, &ps);
				}
				if (!f)
					append(in, &n, acc, &state, &r);
			}
			if (sums && mode != PLAIN) {
				/* the module's hand-over, then A and bsp cleared */
				charges_bottom += !!bsp;
				m = xp_urec_fold_sums(in, n, acc, state, bsp, out, &same_clock);
				bsp = 0;
			} else if (sums) {
				m = xp_urec_fold(in, n, acc, state, out, &same_clock);
			} else {
				memcpy(out, in, sizeof(in[0]) * n);
				m = xp_urec_fold(out, n, NULL, 0, out, &same_clock);
			}
			state = 0;	/* urec_empty(): the count and A */
			if (m > (sums ? 2 * n + 1 : n)) {
				fprintf(stderr, "run %lu: %u records out of %u\n", run, m, n);
				return 1;
			}
			for (i = 0; i < nraw; i++)
				consume(&ref, &raw[i]);
			for (i = 0; i < m; i++) {
				consume(&fold, &out[i]);
				if (XPROBES_UREC_IS_BOTTOM(out[i].what)) {
					/* first, or after a return of its sp */
					if (i && (!(out[i - 1].what & XPROBES_UREC_RET) ||
						  XPROBES_UREC_IS_CALL(out[i - 1].what) ||
						  XPROBES_UREC_IS_CHARGE(out[i - 1].what) ||
						  XPROBES_UREC_SP(out[i - 1].what) !=
						  XPROBES_UREC_SP(out[i].what))) {
						fprintf(stderr, "run %lu batch %d: bottom charge %u neither "
							"first nor after a return of its sp\n", run, b, i);
						return 1;
					}
					charges_after += !!i;
					continue;
				}
				if (XPROBES_UREC_IS_CHARGE(out[i].what)) {
					/* after its entry, which was the last record out */
					if (!i || (out[i - 1].what & XPROBES_UREC_RET) ||
					    XPROBES_UREC_SP(out[i - 1].what) != XPROBES_UREC_SP(out[i].what) ||
					    !sums) {
						fprintf(stderr, "run %lu batch %d: charge %u follows no entry "
							"of its sp\n", run, b, i);
						return 1;
					}
					charges++;
					continue;
				}
				if (XPROBES_UREC_IS_CALL(out[i].what)) {
					u64 wall = XPROBES_UREC_WALL(out[i].time);

					if (XPROBES_UREC_LOG2(out[i].time) !=
					    (wall ? 63u - __builtin_clzll(wall) : 0)) {
						fprintf(stderr, "run %lu batch %d: call %u's log2 %llu is not "
							"that of %llu ns\n", run, b, i,
							(unsigned long long)XPROBES_UREC_LOG2(out[i].time),
							(unsigned long long)wall);
						return 1;
					}
					folded++;
					top += !!(out[i].what & XPROBES_UREC_TOP);
					/* its entry, unchanged but for the flags */
					while (j < n && (in[j].what & XPROBES_UREC_RET))
						j++;
					if (j == n || XPROBES_UREC_SP(in[j].what) != XPROBES_UREC_SP(out[i].what) ||
					    XPROBES_UREC_COOKIE(in[j].what) != XPROBES_UREC_COOKIE(out[i].what)) {
						fprintf(stderr, "run %lu batch %d: call %u is not its entry\n",
							run, b, i);
						return 1;
					}
					j++;
					continue;
				}
				/* the other records come out as they went in, in order */
				while (j < n && (in[j].time != out[i].time ||
						 (in[j].what & ~(XPROBES_UREC_NORET | XPROBES_UREC_TAIL)) !=
						 (out[i].what & ~(XPROBES_UREC_NORET | XPROBES_UREC_TAIL)) ||
						 (!(in[j].what & XPROBES_UREC_RET) && in[j].what != out[i].what)))
					j++;
				if (j == n) {
					fprintf(stderr, "run %lu batch %d: record %u is none of the input's\n",
						run, b, i);
					return 1;
				}
				j++;
			}
			/* the process's sums, as xprobectl adds them */
			for (i = 0; i < NF; i++) {
				fold.calls[i] += ps.calls[i];
				fold.wall[i] += ps.wall[i];
				fold.excl[i] += ps.own[i];
				fold.entries += ps.calls[i];
				fold.returns += ps.calls[i];
				summed += ps.calls[i];
			}
			bottoms += ps.bottom;
			if (!same(&ref, &fold, why, sizeof(why))) {
				fprintf(stderr, "run %lu batch %d (%u records, %u raw, sums %d): %s\n", run, b,
					n, nraw, sums, why);
				return 1;
			}
			for (i = 0; i < NF; i++)
				if (fold.excl[i] < 0) {
					fprintf(stderr, "run %lu batch %d: function %u's exclusive time < 0\n",
						run, b, i);
					return 1;
				}
			records += nraw;
			items += m;
		}
	}
	printf("%lu runs, %llu records: %llu after summing and folding (%llu calls summed by the "
	       "process, %llu charges; %llu calls folded, %llu of them top), accounting identical\n",
	       runs, (unsigned long long)records, (unsigned long long)items,
	       (unsigned long long)summed, (unsigned long long)charges,
	       (unsigned long long)folded, (unsigned long long)top);
	if (interrupt_pct)
		printf("%llu folds stopped before their commit and restarted\n",
		       (unsigned long long)interrupts);
	if (mode != PLAIN)
		printf("bottom sums %llu (%llu too long), bottom charges %llu first, %llu after a return\n",
		       (unsigned long long)bottoms, (unsigned long long)bottom_long,
		       (unsigned long long)charges_bottom, (unsigned long long)charges_after);
	return 0;
}
