// SPDX-License-Identifier: GPL-2.0
/*
 * A model of the protocol planned for issue 41's cheaper calls
 * (docs/userhooks.md, "Next: one return routine"), written before the
 * routines: every entry records the return address it finds in the slot
 * and puts there the address of one return routine, the same for every
 * call; the return routine finds its entry in the CPU's buffer (the newest
 * open entry at its sp), records the return and jumps to the address the
 * entry kept; a hand-over (a switch, a full buffer, an unwinder, the clone
 * hook) turns every open entry's slot that still holds the routine into a
 * thunk of today's kind. The model checks the one property the design
 * cannot give up: every return reaches the address it would have reached
 * untraced, whatever comes between two steps of a routine; and that the
 * records, folded calls and thunk returns count every call once.
 *
 * A simulated thread calls, tail-calls, returns, longjmps, forks, takes
 * signals (whose handlers call and longjmp among their own frames) and is
 * preempted (a hand-over) at every step of the entry and return routines,
 * which are written here as their steps, each step one point where a
 * preemption or a signal may come:
 *
 *   entry, in one rseq section (abort: put back the slot the section read,
 *   unless it read the routine, then start again):
 *     v = slot; tail = v is the routine or a thunk; full? leave, flush, again;
 *     unless v is the routine, slot = routine; record {t, sp|cookie|tail, v};
 *     commit (count + 1)
 *   return (reached by ret: the slot is just below sp), one rseq section:
 *     i = newest entry at sp without a return after it;
 *     none? leave: the slot must hold a thunk (a hand-over made it), go there;
 *     ra = record i's; fold (i newest: count - 1, the call to the sums) or
 *     append {t, ret|sp}; commit; then go to ra (the routine again for the
 *     tail call's caller, a thunk, or the caller's code)
 *   hand-over: per sp, the open entries from the newest down to the first
 *     whose address is not the routine (the chain of tail calls on one
 *     frame); a slot that holds the routine gets thunk(...thunk(base ra)),
 *     one thunk per entry; then the records go to the consumer
 *
 *   uret-check [RUNS] [noabort|noconvert|nochain|nosearch|noclone|retslot|
 *               readbefore|storeafter]
 *
 * Each named mode leaves one rule out and must fail: noabort (the abort
 * does not put the slot back), noconvert (hand-overs leave the routine in
 * slots), nochain (one thunk for a chain of tail calls), nosearch (the
 * return looks at the newest record only), noclone (no conversion before
 * fork: the child's buffers are wiped), retslot (the return routine
 * writes its own address into the slot's word to go back for a tail
 * call's caller: the thunk a hand-over put there since its commit is
 * lost; found by uret2/, the routines in assembly), readbefore (the slot
 * read before the section, kept by a restart) and storeafter (the routine's
 * address stored after the commit). The abort handler, outside the
 * section, may itself be preempted.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t u64;

#define RET		0x7000000000ULL		/* the return routine's address */
#define THUNK0		0x6000000000ULL		/* thunk k: THUNK0 + 16 k */
#define NTHUNK		(1 << 20)
#define CODE0		0x400000ULL		/* call sites: CODE0 + 16 k */
#define R_RET		(1ULL << 63)
#define R_TAIL		(1ULL << 62)
#define SPMASK		((1ULL << 48) - 1)
#define NF		8
#define TOP		0x7ffff000ULL
#define NWORDS		(1 << 14)		/* the stack's words, down from TOP */
#define MAXD		48
#define CAP		12			/* records a buffer holds: flushes are frequent */

enum { FULL, NOABORT, NOCONVERT, NOCHAIN, NOSEARCH, NOCLONE, RETSLOT, READBEFORE, STOREAFTER };
static int mode = FULL;

struct rec { u64 t, what, ra; };
struct tframe { u64 sp, ra; int traced, cookie, tail; };
struct cframe { u64 sp; int cookie; };

static u64 stack[NWORDS], target[NTHUNK], clk;
static unsigned nthunks;
static struct rec buf[CAP];
static int n;
static struct tframe tf[4 * MAXD];
static int td;
static struct cframe cf[8 * MAXD];
static int cd;
static u64 truth[NF], seen[NF], sums[NF], unmatched, next_site;
static u64 st_late, st_routine, st_thunk, st_conv, st_chain, st_abort, st_fold, st_fork, st_sig, st_stale;
static int in_handler;
static unsigned long cur_run;

static u64 rnd(u64 m) { return (u64)random() % m; }

static void fail(const char *what, u64 sp)
{
	fprintf(stderr, "run %lu: %s (sp %#llx)\n", cur_run, what, (unsigned long long)sp);
	exit(1);
}

static u64 *slot(u64 sp)
{
	u64 i = (TOP - sp) / 8;

	if (sp > TOP || i >= NWORDS || sp & 7)
		fail("slot outside the stack", sp);
	return &stack[i];
}

static bool is_thunk(u64 v) { return v >= THUNK0 && v < THUNK0 + 16ULL * nthunks; }

static u64 thunk(u64 to)
{
	if (nthunks == NTHUNK)
		fail("out of thunks", 0);
	target[nthunks] = to;
	return THUNK0 + 16ULL * nthunks++;
}

/* ---- the consumer: trace's replay, counts only ---- */

static void consume(const struct rec *r)
{
	u64 sp = r->what & SPMASK;

	if (r->what & R_RET) {
		while (cd && cf[cd - 1].sp < sp)
			cd--;				/* abandoned */
		if (!cd || cf[cd - 1].sp != sp) {
			unmatched++;
			return;
		}
		seen[cf[--cd].cookie]++;
		return;
	}
	while (cd && (cf[cd - 1].sp < sp || (cf[cd - 1].sp == sp && !(r->what & R_TAIL))))
		cd--;
	if (cd == 8 * MAXD)
		fail("consumer too shallow", sp);
	cf[cd++] = (struct cframe){ sp, (int)((r->what >> 48) & 0xfff) };
}

/* ---- the buffer ---- */

/* Which records are entries with no return after them (a return at sp closes the newest entry at sp below it). */
static void open_entries(bool *open)
{
	int i, j;

	for (i = 0; i < n; i++)
		open[i] = !(buf[i].what & R_RET);
	for (i = 0; i < n; i++) {
		if (!(buf[i].what & R_RET))
			continue;
		for (j = i - 1; j >= 0; j--)
			if (open[j] && (buf[j].what & SPMASK) == (buf[i].what & SPMASK)) {
				open[j] = false;
				break;
			}
	}
}

/*
 * The thread's records leave the buffer: slots that hold the routine become
 * thunks. Per sp, by the return routine's own rule (the newest entry at the
 * sp with no return of that sp after it), not by the consumer's stack: an
 * entry above an open one (a handler on a signal stack above, a coroutine
 * on another stack) must not make the open one look abandoned, or its slot
 * keeps the routine's address with no record (helper-49's review of the
 * first, linear version). The kernel's is linear with a hash by sp.
 */
static void handover(void)
{
	bool open[CAP], done[CAP] = { false };
	int i, j, k, m;

	open_entries(open);
	for (i = n - 1; mode != NOCONVERT && i >= 0; i--) {
		u64 sp = buf[i].what & SPMASK, x;

		if (!open[i] || done[i])
			continue;
		/* this sp's newest open entry: its chain of m down to j, the first that kept a real address */
		for (m = 0, j = i; j >= 0; j--) {
			if (!open[j] || (buf[j].what & SPMASK) != sp)
				continue;
			done[j] = true;
			m++;
			if (buf[j].ra != RET)
				break;
		}
		if (j < 0) {
			/* no base: only an abandoned frame's chain could look so, and its slot is dead */
			if (*slot(sp) == RET && mode == FULL)
				fail("a chain of tail calls without its caller's entry", sp);
			continue;
		}
		for (k = j - 1; k >= 0; k--)	/* older ones at this sp: abandoned */
			if (open[k] && (buf[k].what & SPMASK) == sp)
				done[k] = true;
		if (*slot(sp) != RET)
			continue;
		x = buf[j].ra;
		for (k = 0; k < (mode == NOCHAIN ? 1 : m); k++)
			x = thunk(x);
		*slot(sp) = x;
		st_conv++;
		st_chain += m > 1;
	}
	for (i = 0; i < n; i++)
		consume(&buf[i]);
	n = 0;
}

/* Newest open entry at sp, or -1. */
static int find_entry(u64 sp)
{
	int i, pend = 0;

	if (mode == NOSEARCH)
		return n && !(buf[n - 1].what & R_RET) && (buf[n - 1].what & SPMASK) == sp ? n - 1 : -1;
	for (i = n - 1; i >= 0; i--) {
		if ((buf[i].what & SPMASK) != sp)
			continue;
		if (buf[i].what & R_RET)
			pend++;
		else if (pend)
			pend--;
		else
			return i;
	}
	return -1;
}

/* ---- the thread ---- */

static void handler(void);
static u64 do_return(u64 sp, u64 v);

enum { NOTHING, PREEMPTED, SIGNALLED };

/*
 * Between two steps: maybe preempted (a hand-over), maybe a signal whose
 * handler runs calls of its own first. Either way a section in progress
 * restarts.
 */
static int point(void)
{
	u64 k = rnd(100);

	if (k < 6) {
		handover();
		return PREEMPTED;
	}
	if (k < 8 && !in_handler) {
		handler();
		return SIGNALLED;
	}
	return NOTHING;
}

static void entry(u64 sp, int cookie)
{
	u64 v = 0;
	bool valid, tail, once = false;

again:
	valid = false;
	if (mode == READBEFORE && !once) {	/* read before the section: a restart keeps it */
		v = *slot(sp);
		once = true;
	}
	if (point())
		goto abort;
	if (mode != READBEFORE)
		v = *slot(sp);
	valid = true;
	tail = v == RET || is_thunk(v);
	if (point())
		goto abort;
	if (n == CAP) {
		handover();			/* leaves the section: nothing stored yet */
		goto again;
	}
	if (v != RET && mode != STOREAFTER)
		*slot(sp) = RET;
	if (point())
		goto abort;
	buf[n] = (struct rec){ ++clk, sp | (u64)cookie << 48 | (tail ? R_TAIL : 0), v };
	if (point())
		goto abort;
	n++;					/* the commit */
	if (v != RET && mode == STOREAFTER) {
		point();			/* past the commit, before the store */
		*slot(sp) = RET;
	}
	return;
abort:
	st_abort++;
	point();				/* the abort handler is outside the section */
	if (valid && v != RET && mode != NOABORT)
		*slot(sp) = v;
	goto again;
}

/* Reached by a ret that popped the routine's address from the slot at sp. */
static u64 routine(u64 sp)
{
	u64 ra, v;
	int i;

	st_routine++;
again:
	if (point())
		goto again;
	i = find_entry(sp);
	if (i < 0) {
		v = *slot(sp);			/* just below sp: nothing there writes it */
		if (!is_thunk(v))
			fail("the return routine found neither its entry nor a thunk", sp);
		st_late++;			/* handed over between the ret and the search */
		return do_return(sp, v);
	}
	ra = buf[i].ra;
	if (point())
		goto again;
	if (i == n - 1 && rnd(2)) {
		sums[(buf[i].what >> 48) & 0xfff]++;	/* folded: the process's sums */
		st_fold++;
		n--;				/* the commit */
	} else {
		if (n == CAP) {
			handover();
			goto again;
		}
		buf[n] = (struct rec){ ++clk, R_RET | sp, 0 };
		if (point())
			goto again;
		n++;				/* the commit */
	}
	point();				/* past the commit: ra is in a register */
	/*
	 * The routine jumps through the slot's word: it writes ra there, but
	 * not the routine's own address (a tail call's caller returns next):
	 * a hand-over since the commit may have made that word its thunk.
	 */
	if (ra != RET || mode == RETSLOT)
		*slot(sp) = ra;
	return do_return(sp, ra);
}

/* Where a return that found v goes, through routines and thunks, to code. */
static u64 do_return(u64 sp, u64 v)
{
	while (v == RET || is_thunk(v)) {
		if (v == RET)
			return routine(sp);
		st_thunk++;
		if (n == CAP)
			handover();
		buf[n++] = (struct rec){ ++clk, R_RET | sp, 0 };	/* the thunk's append, as today */
		v = target[(v - THUNK0) / 16];
	}
	return v;
}

static u64 top_sp(void)
{
	return td ? tf[td - 1].sp : TOP - 64;
}

static void call(bool traced, bool tailcall)
{
	u64 sp, ra;
	int cookie = (int)rnd(NF);

	if (tailcall) {
		sp = tf[td - 1].sp;
		ra = tf[td - 1].ra;
	} else {
		sp = top_sp() - 16 * (1 + rnd(4));
		ra = CODE0 + 16 * next_site++;
		*slot(sp) = ra;			/* the call instruction */
	}
	tf[td++] = (struct tframe){ sp, ra, traced, cookie, tailcall };
	if (traced)
		entry(sp, cookie);
}

/* The top frame returns (with the frames it tail-called from). */
static void ret(void)
{
	u64 sp = tf[td - 1].sp, want, got;

	want = tf[td - 1].ra;
	while (td && tf[td - 1].sp == sp) {
		td--;
		if (tf[td].traced)
			truth[tf[td].cookie]++;
		if (!tf[td].tail)
			break;
	}
	got = do_return(sp, *slot(sp));
	if (got != want)
		fail("a return went elsewhere than untraced", sp);
}

/* longjmp to a frame at depth j (its code runs on): those above it are left. */
static void longjmp_to(int j)
{
	td = j + 1;
}

/* A depth whose frame is still running code of its own (no tail call on it). */
static int pick_frame(int lo)
{
	int j = lo + (int)rnd(td - lo);

	while (j < td - 1 && tf[j + 1].sp == tf[j].sp)
		j++;
	return j;
}

/*
 * A signal's handler, below the red zone: calls of its own, some abandoned
 * by a longjmp inside it (stale entries over the interrupted code's),
 * then back: to where it came, or (from between two operations) by
 * siglongjmp to an outer frame.
 */
static void handler(void)
{
	int base = td, ops = (int)rnd(12);
	u64 save_top = td ? tf[td - 1].sp : TOP - 64;

	in_handler = 1;
	st_sig++;
	/* the handler's own frame, below the interrupted sp and its red zone */
	tf[td++] = (struct tframe){ save_top - 128 - 256, CODE0 - 16, 0, 0, 0 };
	while (ops--) {
		u64 k = rnd(100);

		if (td - base < 12 && (k < 50 || td == base + 1))
			call(rnd(4) != 0, false);
		else if (td > base + 1 && k < 90)
			ret();
		else if (td > base + 2) {
			int j = pick_frame(base);

			if (j < td - 1) {
				st_stale++;
				longjmp_to(j);
			}
		}
	}
	while (td > base + 1)
		ret();
	td = base;				/* sigreturn */
	in_handler = 0;
}

/* fork: the clone hook hands over (and converts) first; the child returns through every frame. */
static void fork_child(void)
{
	static u64 child[NWORDS];
	u64 v, sp;
	int d;

	st_fork++;
	if (mode != NOCLONE)
		handover();
	memcpy(child, stack, sizeof(stack));
	for (d = td; d > 0;) {
		sp = tf[d - 1].sp;
		v = child[(TOP - sp) / 8];
		while (is_thunk(v))
			v = target[(v - THUNK0) / 16];
		if (v == RET)
			fail("the child of a fork returned into the routine with no records", sp);
		while (d > 0 && tf[d - 1].sp == sp && tf[d - 1].tail)
			d--;
		if (v != tf[d - 1].ra)
			fail("the child of a fork returned elsewhere", sp);
		d--;
	}
}

static void run(unsigned long r)
{
	int steps = 200 + (int)rnd(800), i;

	srandom((unsigned)r + 1);
	memset(stack, 0, sizeof(stack));
	memset(truth, 0, sizeof(truth));
	memset(seen, 0, sizeof(seen));
	memset(sums, 0, sizeof(sums));
	td = cd = n = 0;
	nthunks = 0;
	unmatched = 0;
	cur_run = r;
	while (steps--) {
		u64 k = rnd(100);

		if (td < MAXD && (k < 40 || !td))
			call(rnd(5) != 0, false);
		else if (td && k < 48 && td < MAXD)
			call(rnd(3) != 0, true);
		else if (k < 85)
			ret();
		else if (k < 89 && td > 2) {
			longjmp_to(pick_frame(0));
		} else if (k < 93) {
			handler();
			if (td > 2 && rnd(3) == 0)
				longjmp_to(pick_frame(0));	/* siglongjmp out of it */
		} else if (k < 95) {
			fork_child();
		} else {
			handover();
		}
	}
	while (td)
		ret();
	handover();
	for (i = 0; i < NF; i++)
		if (seen[i] + sums[i] != truth[i]) {
			fprintf(stderr, "run %lu: function %d: %llu calls, the records and sums say %llu\n",
				r, i, (unsigned long long)truth[i],
				(unsigned long long)(seen[i] + sums[i]));
			exit(1);
		}
	if (unmatched)
		fail("returns the consumer could not match", 0);
}

int main(int argc, char **argv)
{
	unsigned long runs = argc > 1 ? strtoul(argv[1], NULL, 0) : 2000, r;
	static const char *const names[] = { "", "noabort", "noconvert", "nochain", "nosearch", "noclone",
					     "retslot", "readbefore", "storeafter" };

	if (argc > 2) {
		for (mode = STOREAFTER; mode > FULL && strcmp(argv[2], names[mode]); mode--)
			;
		if (mode == FULL) {
			fprintf(stderr, "usage: uret-check [RUNS] [noabort|noconvert|nochain|nosearch|noclone|"
				"retslot|readbefore|storeafter]\n");
			return 2;
		}
	}
	for (r = 0; r < runs; r++)
		run(r);
	printf("uret-check: %lu runs: %llu returns through the routine (%llu folded), %llu through thunks; "
	       "%llu slots converted (%llu chains of tail calls; %llu returns found theirs after their ret), "
	       "%llu sections restarted, %llu signals "
	       "(%llu longjmps inside), %llu forks: every return where it would go untraced, every call "
	       "counted once\n", runs, (unsigned long long)st_routine, (unsigned long long)st_fold,
	       (unsigned long long)st_thunk, (unsigned long long)st_conv, (unsigned long long)st_chain,
	       (unsigned long long)st_late, (unsigned long long)st_abort, (unsigned long long)st_sig, (unsigned long long)st_stale,
	       (unsigned long long)st_fork);
	return 0;
}
