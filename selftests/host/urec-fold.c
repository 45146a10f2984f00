// SPDX-License-Identifier: GPL-2.0
/*
 * urec-fold: the records block's return routine (module/uhooks/urec_tmpl.S,
 * xp_urec_ret), its own bytes patched as urec.c's build_code() patches them
 * for a process with sums, run on the host over random buffers against a
 * model of its rules written from docs/userhooks.md ("Sums in the
 * process"), not from the assembly: which returns it folds (the newest
 * record this call's entry, of a function with sums, its caller's entry
 * above it, or at its sp for a tail call, or a return record at its sp,
 * or the bottom of the buffer with bsp's rule; a call of less than 2^32
 * cycles), and what it leaves: the state word committed (A at the entry
 * plus the call's cycles), bsp, the function's wall, own time and bucket,
 * or else a return record appended with the state beside it. Everything
 * else in the buffers and the sums must stay as it was.
 *
 * The routine reads the TSC itself: each case dates its entry d cycles
 * before a TSC read of its own, d kept 2^28 cycles away from every limit
 * the rules have, and checks the cycles the routine found against the
 * interval the two reads around its call give.
 *
 * urec-fold [CASES] [-q]: "ok" or the first case that went wrong (exit
 * 1). Built against a copy of the template with a rule left out, it must
 * fail (selftests/check.sh, host-urec-return).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/rseq.h>
#include <unistd.h>
#include <x86intrin.h>
#include "urec.h"
#include "urec-host.h"

typedef uint64_t u64;

/*
 * void fcall(routine, top): calls it as a thunk does, its sp top - 8,
 * every register but rax and rsp loaded before and stored after
 * (urec-host.h):
 * the routine must give each back as it found it (rdx a return value; the
 * rest anything a caller may keep there across a call it knows, GCC's
 * -fipa-ra).
 */
uint64_t fc_host_sp, fc_target;
void fcall(const void *routine, void *top);
__asm__(
	".text\n"
	".globl fcall\n"
	"fcall:\n"
	UREG_PUSH_KEPT
	"	movq	%rsp, fc_host_sp(%rip)\n"
	"	movq	%rdi, fc_target(%rip)\n"
	"	movq	%rsi, %rsp\n"
	UREG_EACH(UREG_LOAD)
	"	call	*fc_target(%rip)\n"
	UREG_EACH(UREG_STORE)
	"	movq	fc_host_sp(%rip), %rsp\n"
	UREG_POP_KEPT
	"	ret\n");


#define M47		((1ull << XP_UREC_SP_BITS) - 1)
#define NORET		(1ull << 61)
#define TAIL		(1ull << 62)
#define RET		(1ull << 63)
#define MARGIN		(1ull << 28)	/* cycles a case's d keeps from each limit */
#define SUMS_LEN	((size_t)XP_USUM_FUNCS * XP_USUM_SIZE)

static unsigned char *blk, *buf, *sums, *stack;
static long nbufs;
static u64 sp;			/* the routine's, as a thunk calls it */

/* The block as build_code() writes it for a process with sums, this CPU's buffer in @buf. */
static void setup(void)
{
	long off = __rseq_offset;
	unsigned char *bufs;
	cpu_set_t set;
	int cpu = sched_getcpu();

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (cpu < 0 || sched_setaffinity(0, sizeof(set), &set)) {
		perror("urec-fold: sched_setaffinity");
		exit(1);
	}
	nbufs = sysconf(_SC_NPROCESSORS_CONF);
	blk = mmap(NULL, XP_URT_OFF, PROT_READ | PROT_WRITE | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	bufs = mmap(NULL, (size_t)nbufs << XP_UREC_BUF_SHIFT, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	sums = mmap(NULL, SUMS_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	stack = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (blk == MAP_FAILED || bufs == MAP_FAILED || sums == MAP_FAILED || stack == MAP_FAILED) {
		perror("urec-fold: mmap");
		exit(1);
	}
	buf = bufs + ((size_t)cpu << XP_UREC_BUF_SHIFT);
	sp = (u64)stack + (1 << 15) - 8;
	urec_host_patch(blk, off, bufs, nbufs, sums, NULL);	/* no entry routine runs */
	*(uint32_t *)((char *)__builtin_thread_pointer() + off + XP_RSEQ_STAMP) = STAMP;
}

/* The tables as the kernel writes them: a bucket b or b + 1 for top bit b. */
static u64 *rec(unsigned int i) { return word(buf, XP_UREC_HDR + 16 * (size_t)i); }
static u64 *acc(unsigned int i) { return word(buf, XP_UREC_ACC + 8 * (size_t)i); }

/* d: the entry's age, 2^28 cycles away from 0 and from 2^32; long: past it */
static u64 age(int *fits)
{
	switch (rnd(5)) {
	case 0:
		*fits = 0;
		return (1ull << 32) + MARGIN + rnd(1ull << 39);
	case 1:
		*fits = 0;
		return -(MARGIN + rnd(1ull << 39));	/* a clock that went backwards */
	case 2:
		*fits = 1;
		return MARGIN + rnd((1ull << 32) - 2 * MARGIN);
	default:
		*fits = 1;
		return rnd(1ull << (1 + rnd(20)));
	}
}

/* A record word of @kind at @at, a cookie mostly under XP_USUM_FUNCS. */
static u64 entry_word(u64 at, u64 kind)
{
	u64 cookie = rnd(5) ? rnd(XP_USUM_FUNCS) : rnd(XP_UREC_COOKIE_MASK + 1);

	return (at & M47) | cookie << XP_UREC_SP_BITS | kind;
}

static u64 some_kind(void)
{
	static const u64 k[] = { 0, 0, 0, 0, TAIL, TAIL, NORET, RET, RET | TAIL, NORET | TAIL };

	return k[rnd(sizeof(k) / sizeof(k[0]))];
}

static u64 near(void)
{
	static const long d[] = { 0, 0, 0, 8, 16, 0x100, -8, -16, -0x100 };

	return sp + d[rnd(sizeof(d) / sizeof(d[0]))];
}

static int bad;
static const char *what;
enum { NESTED, TAILCALL, AFTER_RET, BOTTOM, NPATHS };
static const char *const path_name[NPATHS] = { "nested", "tail call", "after a return", "bottom" };
static int path;
static unsigned int folded[NPATHS], skipped;

static int fail(unsigned int c, const char *why)
{
	printf("urec-fold: case %u (%s): %s\n", c, what, why);
	bad = 1;
	return 1;
}

/*
 * The rules, from docs/userhooks.md: FOLD, or PLAIN (a return record).
 * @e, @cw: the newest record's word and the one before it (the header's
 * last word for the first); *bsp as the routine leaves it.
 */
enum { PLAIN, FOLD };
static int rules(unsigned int n, u64 e, u64 cw, int fits, u64 *bsp)
{
	u64 rel, b;

	what = "no entry, or a full buffer";
	if (n == 0 || n >= XP_UREC_CAP - 1)
		return PLAIN;	/* no entry; or a full buffer, or one made to look so */
	what = "not this call's entry";
	if ((e & M47) != sp || (e & (NORET | RET)) ||
	    ((e >> XP_UREC_SP_BITS) & XP_UREC_COOKIE_MASK) >= XP_USUM_FUNCS)
		return PLAIN;
	rel = ((cw & M47) - sp) & M47;	/* the one before: above, at or below */
	if (e & TAIL) {
		what = "a tail call";
		path = TAILCALL;
		if (n == 1 || (cw & (NORET | RET)) || rel)
			return PLAIN;	/* its caller's entry must be at its sp */
	} else if (n == 1) {
		what = "the bottom";
		path = BOTTOM;
		b = *bsp ? *bsp : sp;
		if (b < sp)
			return PLAIN;	/* above the first since the hand-over */
		*bsp = b;
	} else if (rel >= 1ull << 46) {
		what = "below its caller";
		return PLAIN;
	} else if (cw & (NORET | RET)) {
		what = "after a return";
		path = AFTER_RET;
		if ((cw >> 61) != 4 || rel)
			return PLAIN;	/* only a return record, at its sp */
	} else {
		what = "nested";
		path = NESTED;
		if (!rel)
			return PLAIN;	/* its caller's entry above it */
	}
	return fits ? FOLD : PLAIN;
}

static unsigned int bucket(u64 cycles)
{
	unsigned int b = cycles ? 63 - __builtin_clzll(cycles) : 0;

	return buf[XP_UREC_BK + b] + (cycles >= *word(buf, XP_UREC_TH + 8 * b));
}

static int one(unsigned int c)
{
	static unsigned char buf0[1 << XP_UREC_BUF_SHIFT];
	unsigned int n, i, cookie, k;
	u64 state, bsp, e, cw, d, t, t0, t1, w, own, callees;
	int fits, want;
	unsigned char *s;

	/* the buffer: n records, most with this call's entry the newest */
	memset(buf, 0, 1 << XP_UREC_BUF_SHIFT);
	urec_host_tables(buf);
	switch (rnd(6)) {
	case 0: n = rnd(4); break;
	case 1: n = XP_UREC_CAP - 3 + rnd(4); break;
	default: n = 1 + rnd(40); break;
	}
	for (i = 0; i + 2 < n; i++) {
		*rec(i) = rnd(0);
		rec(i)[1] = rnd(0);
		*acc(i) = rnd(0);
	}
	e = rnd(8) ? entry_word(sp, some_kind()) : entry_word(near(), some_kind());
	cw = entry_word(near(), some_kind());
	d = age(&fits);
	bsp = (u64[]){ 0, 0, sp, sp + 64, sp - 64 }[rnd(5)];
	state = rnd(1ull << 47) << XP_UREC_COUNT_BITS | (u64)n * XP_UREC_COUNT_UNIT;
	if (n >= 2) {
		rec(n - 2)[1] = cw;
		*acc(n - 2) = rnd(0);
	} else {
		cw = *word(buf, XP_UREC_BELOW);
	}
	if (n >= 1) {
		rec(n - 1)[1] = e;
		/* A at its entry: its callees' cycles behind, mostly fewer than its own */
		callees = rnd(4) ? rnd(d & 0xffffffff) : rnd(0);
		*acc(n - 1) = state - (callees << XP_UREC_COUNT_BITS) - XP_UREC_COUNT_UNIT;
	}
	*word(buf, 0) = state;
	*word(buf, XP_UREC_BSP) = bsp;
	want = rules(n, e, cw, fits, &bsp);
	t0 = __rdtsc();
	if (n >= 1)
		*rec(n - 1) = t0 - d;
	memcpy(buf0, buf, sizeof(buf0));
	for (i = 0; i < UREG_N; i++)
		ureg_in[i] = rnd(0);
	fcall(blk + OFF(xp_urec_ret), (void *)(sp + 8));
	t1 = __rdtsc();
	if (ureg_lost()) {
		printf("urec-fold: case %u (%s): %s not given back\n", c, what, ureg_lost());
		return bad = 1;
	}
	if (t1 - t0 >= MARGIN / 2) {	/* the host stopped us long enough to cross a limit */
		skipped++;
		memset(sums, 0, SUMS_LEN);
		return 0;
	}
	if (*word(buf, XP_UREC_BSP) != bsp)
		return fail(c, "bsp");
	*word(buf0, XP_UREC_BSP) = bsp;
	cookie = (e >> XP_UREC_SP_BITS) & (XP_USUM_FUNCS - 1);
	s = sums + (size_t)cookie * XP_USUM_SIZE;
	w = *word(s, XP_USUM_WALL);
	if (want == PLAIN) {
		if (w)
			return fail(c, "summed a return the rules do not fold");
		if (n < XP_UREC_CAP) {
			t = *rec(n);
			if (t < t0 || t > t1 || rec(n)[1] != (sp | RET) || *acc(n) != state ||
			    *word(buf, 0) != state + XP_UREC_COUNT_UNIT)
				return fail(c, "not a return record appended");
			*word(buf0, 0) = state + XP_UREC_COUNT_UNIT;
			*word(buf0, XP_UREC_HDR + 16 * (size_t)n) = t;
			*word(buf0, XP_UREC_HDR + 16 * (size_t)n + 8) = sp | RET;
			*word(buf0, XP_UREC_ACC + 8 * (size_t)n) = state;
		}
		if (memcmp(buf, buf0, sizeof(buf0)))
			return fail(c, "the buffer changed elsewhere");
		return 0;
	}
	if (w < t0 - *rec(n - 1) || w > t1 - *rec(n - 1))
		return fail(c, w ? "summed, not with the call's cycles" : "appended, not summed");
	callees = (state - *acc(n - 1)) >> XP_UREC_COUNT_BITS;
	own = w - callees;	/* not clamped: the process's own figures */
	k = bucket(w);
	if (*word(buf, 0) != *acc(n - 1) + (w << XP_UREC_COUNT_BITS))
		return fail(c, "the commit: not A at the entry plus the call");
	if (*word(s, XP_USUM_OWN) != own || *word(s, XP_USUM_HIST + 8 * k) != 1)
		return fail(c, "own time or bucket");
	*word(buf0, 0) = *word(buf, 0);
	if (memcmp(buf, buf0, sizeof(buf0)))
		return fail(c, "the buffer changed elsewhere");
	/* the sums back to 0: what is not, at the next look, went elsewhere */
	*word(s, XP_USUM_WALL) = *word(s, XP_USUM_OWN) = *word(s, XP_USUM_HIST + 8 * k) = 0;
	folded[path]++;
	return 0;
}

/* Every sum 0 again after cases up to @c: nothing was added out of place. */
static void sums_zero(unsigned int c)
{
	size_t i;

	for (i = 0; i < SUMS_LEN / 8 && !bad; i++)
		if (*word(sums, 8 * i)) {
			what = "a look at the sums";
			fail(c, "a sum changed where no case's fold goes, in the last 1000 cases");
		}
}

int main(int argc, char **argv)
{
	unsigned int cases = argc > 1 && argv[1][0] != '-' ? atoi(argv[1]) : 200000, c, p;
	int quiet = argc > 1 && !strcmp(argv[argc - 1], "-q");

	if (__rseq_size < 20) {
		printf("urec-fold: glibc registered no rseq area: nothing to run the routine on\n");
		return 1;
	}
	setup();
	srandom(1);
	for (c = 0; c < cases && !bad; c++) {
		one(c);
		if (c % 1000 == 999 || c == cases - 1)
			sums_zero(c);
	}
	/* each way to a fold taken, or the cases tell nothing of it */
	if (skipped > cases / 100) {
		printf("urec-fold: %u of %u cases stopped for 2^27 cycles or more: the host is too busy to tell\n",
		       skipped, cases);
		bad = 1;
	}
	for (p = 0; p < NPATHS && !bad; p++)
		if (folded[p] < cases / 1000) {
			printf("urec-fold: %u folds %s in %u cases: too few to tell\n",
			       folded[p], path_name[p], cases);
			bad = 1;
		}
	if (bad)
		return 1;
	if (!quiet)
		printf("urec-fold: the return routine, %u random returns as the rules say (folds: nested %u, tail call %u, after a return %u, bottom %u)\n",
		       cases, folded[NESTED], folded[TAILCALL], folded[AFTER_RET], folded[BOTTOM]);
	return 0;
}
