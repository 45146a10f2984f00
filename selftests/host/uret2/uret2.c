// SPDX-License-Identifier: GPL-2.0
/*
 * The draft routines of uret2.S, run for real on the host: traced
 * functions (f0 .. f7, each a stub that calls u2_entry, then its C body)
 * call each other, tail-call each other and longjmp, while SIGALRM comes
 * every few microseconds at whatever instruction the thread is on. The
 * kernel aborts an rseq section the signal interrupts, as it does for a
 * preemption; the handler then plays the module's part: a hand-over
 * (records to a consumer, trace's replay rules, and every open entry's
 * slot that still holds u2_ret turned into a thunk, chains of tail calls
 * one thunk each), or calls of its own (some abandoned by a longjmp inside
 * the handler: stale entries on top of the interrupted ones).
 *
 * Checks: the workload's result equals the untraced run's (every return
 * went where it would), and the calls the records and the sums count
 * equal the calls that returned (workload 1: calls and tail calls, all
 * returning; workload 2: calls and longjmps, counted at their return
 * sites).
 *
 *   uret2 [SECONDS] [noconvert|nochain]
 *
 * Built from uret2.S with -DU2_NOABORT or -DU2_NOSEARCH, or run with
 * noconvert or nochain, one rule of the protocol is left out, and it must
 * fail (a crash, a wrong result or wrong counts).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <setjmp.h>
#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/rseq.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

typedef uint64_t u64;

#define NF		8
#define HDR_WORDS	8		/* uret2.S: HDR 64 */
#define CAP		64
#define R_RET		(1ULL << 63)
#define R_TAIL		(1ULL << 62)
#define SPMASK		((1ULL << 48) - 1)
#define NTHUNK		65536
#define ROUNDS		2000		/* top-level calls of a run */

/* what uret2.S reads */
u64 u2_rseq, u2_thunks, u2_thunks_len, u2_target[NTHUNK], u2_sums[4096];
int u2_cpu, u2_tid;
u64 u2_buf[HDR_WORDS + 3 * CAP] __attribute__((aligned(64)));
volatile char u2_on;			/* the stubs call u2_entry (volatile: ordered with in_work for the handler) */
void u2_entry(void), u2_ret(void), u2_thunk(void);

static int noconvert, nochain, workload;
static volatile sig_atomic_t in_work;

/* ---- the traced functions: a stub, then the body ---- */

long f0(long), f1(long), f2(long), f3(long), f4(long), f5(long), f6(long), f7(long);
static long (*const fn[NF])(long) = { f0, f1, f2, f3, f4, f5, f6, f7 };

#define TRACED(n)							\
	long body##n(long d);						\
	asm(".text\n.globl f" #n "\n.type f" #n ", @function\nf" #n ":\n"	\
	    "	cmpb $0, u2_on(%rip)\n"					\
	    "	je 1f\n"						\
	    "	movq %rax, -16(%rsp)\n"					\
	    "	movl $" #n ", %eax\n"					\
	    "	call u2_entry\n"					\
	    "	movq -16(%rsp), %rax\n"					\
	    "1:	jmp body" #n "\n"					\
	    ".size f" #n ", . - f" #n "\n");
TRACED(0) TRACED(1) TRACED(2) TRACED(3) TRACED(4) TRACED(5) TRACED(6) TRACED(7)

static u64 entries[NF], got[NF];	/* the truth: workload 1's calls, workload 2's returns */
static u64 lcg = 1, hlcg = 7;		/* the workload's randomness, the handler's */
static int in_handler;

static unsigned int rnd(unsigned int m)
{
	u64 *s = in_handler ? &hlcg : &lcg;

	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned int)(*s >> 33) % m;
}

/* workload 2's longjmps: the innermost body that set one */
static jmp_buf *jb_top;

static long calls_tails(int n, long d) __attribute__((noinline));
static long calls_jumps(int n, long d) __attribute__((noinline));
static long tail_or_call(long d) __attribute__((noinline));

/* Workload 1: a call of fK in tail position (a jmp: uret2.sh checks the build). */
static long tail_or_call(long d)
{
	return fn[rnd(NF)](d - 1);
}

/* Workload 1: calls and tail calls; no setjmp here, which would stop tail calls. */
static long calls_tails(int n, long d)
{
	long v = n, k;

	entries[n]++;
	if (d <= 0)
		return n + 1;
	if (rnd(10) < 3)
		return tail_or_call(d);		/* our return: theirs */
	for (k = rnd(3); k >= 0; k--)
		v = v * 31 + fn[rnd(NF)](d - 1 - rnd(2));
	return v;
}

/* Workload 2: calls and longjmps over them, counted where they return. */
static long calls_jumps(int n, long d)
{
	long v = n, k;
	jmp_buf jb, *up;

	if (d <= 0) {
		if (jb_top && rnd(8) == 0)
			longjmp(*jb_top, 1);
		return n + 1;
	}
	up = jb_top;
	if (rnd(4) == 0) {
		if (setjmp(jb)) {
			jb_top = up;
			return n * 7 + 3;		/* landed: the calls below are gone */
		}
		jb_top = &jb;
	}
	for (k = rnd(3); k >= 0; k--) {
		int j = (int)rnd(NF);

		v = v * 31 + fn[j](d - 1 - rnd(2));
		got[j]++;
	}
	jb_top = up;
	return v;
}

#define BODY(n) long body##n(long d) { return workload == 1 ? calls_tails(n, d) : calls_jumps(n, d); }
BODY(0) BODY(1) BODY(2) BODY(3) BODY(4) BODY(5) BODY(6) BODY(7)

/* ---- the consumer: trace's replay, counts only ---- */

static struct { u64 sp; int cookie; } cf[4096];
static int cd;
static u64 seen[NF], abandoned, unmatched;

static void consume(u64 what)
{
	u64 sp = what & SPMASK;

	if (what & R_RET) {
		while (cd && cf[cd - 1].sp < sp) {
			cd--;
			abandoned++;
		}
		if (!cd || cf[cd - 1].sp != sp) {
			unmatched++;
			return;
		}
		seen[cf[--cd].cookie]++;
		return;
	}
	while (cd && (cf[cd - 1].sp < sp || (cf[cd - 1].sp == sp && !(what & R_TAIL)))) {
		cd--;
		abandoned++;
	}
	if (cd < 4096)
		cf[cd++].sp = sp, cf[cd - 1].cookie = (int)((what >> 48) & 0xfff);
}

/* ---- the module's part: hand-overs ---- */

static u64 nthunks, conversions, chains, handovers;

static u64 thunk(u64 to)
{
	unsigned char *p;
	int32_t rel;

	if (nthunks == NTHUNK) {
		fprintf(stderr, "uret2: out of thunks\n");
		_exit(3);
	}
	p = (unsigned char *)(u2_thunks + 16 * nthunks);
	u2_target[nthunks] = to;
	memcpy(p, "\x48\x89\x44\x24\xf0", 5);		/* mov %rax, -0x10(%rsp) */
	p[5] = 0xb8;					/* mov $k, %eax */
	memcpy(p + 6, &nthunks, 4);
	p[10] = 0xe9;					/* jmp u2_thunk */
	rel = (int32_t)((u64)u2_thunk - (u64)(p + 15));
	memcpy(p + 11, &rel, 4);
	nthunks++;
	u2_thunks_len = 16 * nthunks;
	return (u64)p;
}

static u64 *rec(int i)
{
	return &u2_buf[HDR_WORDS + 3 * i];
}

/*
 * The records leave: per sp, by the return routine's rule (the newest entry
 * at it with no return of it after), each open chain of tail calls whose
 * slot still holds u2_ret becomes nested thunks down to its base's address.
 */
static void handover(void)
{
	int n = (int)(u2_buf[0] & 0xffff), i, j, k, m;
	bool open[CAP], done[CAP] = { false };

	handovers++;
	for (i = 0; i < n; i++)
		open[i] = !(rec(i)[1] & R_RET);
	for (i = 0; i < n; i++)
		for (j = i - 1; (rec(i)[1] & R_RET) && j >= 0; j--)
			if (open[j] && (rec(j)[1] & SPMASK) == (rec(i)[1] & SPMASK)) {
				open[j] = false;
				break;
			}
	for (i = n - 1; !noconvert && i >= 0; i--) {
		u64 sp = rec(i)[1] & SPMASK, x;

		if (!open[i] || done[i])
			continue;
		for (m = 0, j = i; j >= 0; j--) {
			if (!open[j] || (rec(j)[1] & SPMASK) != sp)
				continue;
			done[j] = true;
			m++;
			if (rec(j)[2] != (u64)u2_ret)
				break;
		}
		for (k = j - 1; k >= 0; k--)		/* older ones at this sp: abandoned */
			if (open[k] && (rec(k)[1] & SPMASK) == sp)
				done[k] = true;
		if (j < 0 || *(u64 *)sp != (u64)u2_ret)
			continue;
		x = rec(j)[2];			/* the base's address */
		for (k = 0; k < (nochain ? 1 : m); k++)
			x = thunk(x);
		*(u64 *)sp = x;
		conversions++;
		chains += m > 1;
	}
	for (i = 0; i < n; i++)
		consume(rec(i)[1]);
	u2_buf[0] = 0;
}

static u64 sigs, hcalls, fulls;

/* A full buffer's request (uret2.S, FLUSH): the module's hand-over at its system call. */
static void on_full(int sig)
{
	(void)sig;
	fulls++;
	handover();
}

static void on_alarm(int sig)
{
	(void)sig;
	sigs++;
	if (!in_work)
		return;
	in_handler = 1;
	if (rnd(3)) {
		handover();
	} else {
		/* calls of its own; workload 2's may longjmp inside the handler */
		jmp_buf jb, *up = jb_top;
		int j = (int)rnd(NF);

		hcalls++;
		if (workload == 2) {
			if (!setjmp(jb)) {
				jb_top = &jb;
				fn[j](1 + rnd(3));
				got[j]++;
			}
			jb_top = up;
		} else {
			fn[j](1 + rnd(3));
		}
	}
	in_handler = 0;
}

static long work(int w, int rounds, u64 seed)
{
	long v = 0;
	int r, j;

	workload = w;
	lcg = seed;
	jb_top = NULL;
	for (r = 0; r < rounds; r++) {
		j = (int)rnd(NF);
		v = v * 131 + fn[j](4 + rnd(5));
		got[j]++;
	}
	return v;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2;
	struct itimerval it = { { 0, 50 }, { 0, 50 } };
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_ONSTACK };
	static char altstack[1 << 18] __attribute__((aligned(64)));
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	cpu_set_t set;
	struct timespec t0, t1;
	int w, i, fail = 0;
	u64 runs = 0;

	if (argc > 2) {
		noconvert = !strcmp(argv[2], "noconvert");
		nochain = !strcmp(argv[2], "nochain");
		if (!noconvert && !nochain) {
			fprintf(stderr, "usage: uret2 [SECONDS] [noconvert|nochain]\n");
			return 2;
		}
	}
	if (!__rseq_size) {
		fprintf(stderr, "uret2: glibc registered no rseq area (GLIBC_TUNABLES glibc.pthread.rseq=0?): "
			"run it where rseq is on\n");
		return 2;
	}
	u2_rseq = (u64)__builtin_thread_pointer() + __rseq_offset;
	u2_cpu = sched_getcpu();
	CPU_ZERO(&set);
	CPU_SET(u2_cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("uret2: sched_setaffinity");
		return 2;
	}
	/* near the code: a thunk leaves by a rel32 jmp to u2_thunk */
	u2_thunks = (u64)mmap((void *)(((u64)u2_thunk & ~0xfffffULL) + (256ULL << 20)), 16 * NTHUNK,
			      PROT_READ | PROT_WRITE | PROT_EXEC,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (u2_thunks == (u64)MAP_FAILED) {
		perror("uret2: mmap");
		return 2;
	}
	u2_tid = gettid();
	/*
	 * The handlers (the kernel's part, and a handler's calls) run on a
	 * stack of their own, below the thread's (the consumer's order): a
	 * hand-over writes the slots of entries a longjmp abandoned, dead stack
	 * below the interrupted sp, where on this stack the signal's frame
	 * would be (its saved rip is u2_ret when the signal lands on a return).
	 */
	if (sigaltstack(&ss, NULL)) {
		perror("uret2: sigaltstack");
		return 2;
	}
	sigaction(SIGALRM, &sa, NULL);
	/* a flush is the kernel's: nothing comes in the middle of it (a handler's calls would fill the buffer again) */
	sa.sa_handler = on_full;
	sigaddset(&sa.sa_mask, SIGALRM);
	sigaction(SIGUSR2, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (w = 1; w <= 2 && !fail; w++) {
			u64 truth[NF], seed = 2 * runs + w;
			long want, v;

			want = work(w, ROUNDS, seed);	/* untraced: where every return must go */
			memset(entries, 0, sizeof(entries));
			memset(got, 0, sizeof(got));
			memset(seen, 0, sizeof(seen));
			memset(u2_sums, 0, sizeof(u2_sums));
			abandoned = unmatched = 0;
			cd = 0;
			u2_on = 1;
			in_work = 1;
			v = work(w, ROUNDS, seed);
			in_work = 0;
			u2_on = 0;
			handover();
			memcpy(truth, w == 1 ? entries : got, sizeof(truth));
			if (v != want) {
				fprintf(stderr, "uret2: run %llu, workload %d: result %ld, untraced %ld\n",
					(unsigned long long)runs, w, v, want);
				fail = 1;
			}
			for (i = 0; i < NF; i++)
				if (seen[i] + u2_sums[i] != truth[i]) {
					fprintf(stderr, "uret2: run %llu, workload %d: f%d returned %llu times, "
						"the records and sums say %llu\n", (unsigned long long)runs, w, i,
						(unsigned long long)truth[i],
						(unsigned long long)(seen[i] + u2_sums[i]));
					fail = 1;
				}
			if (unmatched) {
				fprintf(stderr, "uret2: run %llu, workload %d: %llu returns matched no entry\n",
					(unsigned long long)runs, w, (unsigned long long)unmatched);
				fail = 1;
			}
			if (w == 1 && abandoned) {
				fprintf(stderr, "uret2: run %llu: %llu frames abandoned, with no longjmp\n",
					(unsigned long long)runs, (unsigned long long)abandoned);
				fail = 1;
			}
			/* every frame has returned: no slot holds a thunk */
			nthunks = 0;
			u2_thunks_len = 0;
		}
		runs++;
		clock_gettime(CLOCK_MONOTONIC, &t1);
	} while (!fail && t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	it.it_value.tv_usec = it.it_interval.tv_usec = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	if (fail)
		return 1;
	printf("uret2: %llu runs of both workloads (calls and tail calls; calls and longjmps), "
	       "every result as untraced, every call counted once\n", (unsigned long long)runs);
	printf("uret2: %llu signals, %llu hand-overs, %llu slots made thunks (%llu chains of tail "
	       "calls), %llu handlers' calls, %llu full buffers\n", (unsigned long long)sigs,
	       (unsigned long long)handovers, (unsigned long long)conversions,
	       (unsigned long long)chains, (unsigned long long)hcalls, (unsigned long long)fulls);
	return 0;
}
