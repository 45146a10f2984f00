// SPDX-License-Identifier: GPL-2.0
/*
 * urec-preempt: the records routines (module/uhooks/urec_tmpl.S) stopped
 * between every two of their instructions, as the kernel may stop a
 * thread there, and what each stop may do to them, against the same call
 * run whole.
 *
 * The emulator the selftests boot takes interrupts only between
 * translation blocks, so no VM test stops a thread inside a routine's
 * straight-line code. Here the routines' own bytes, patched as urec.c's
 * build_code() patches them, run single-stepped (EFLAGS.TF) on the host,
 * and the trap handler is the kernel: before the k-th instruction it does
 * what a stop there does, for each k the routine passes. The thread's
 * rseq area for the routines is one of this test's own (a TLS word the
 * kernel does not know), so the host kernel never restarts a section by
 * itself; the handler follows rseq's rules to the letter instead
 * (kernel/rseq.c: the descriptor checked as rseq_get_rseq_cs() checks it,
 * the abort signature included, a section's ip sent to its abort, the
 * descriptor's pointer cleared). Then the stop itself, one of:
 *
 * - a signal whose handler calls nothing traced (and a switch whose thread
 *   carries its bottom sums back: its buffer as it was);
 * - a signal whose handler makes a traced call whose return is not summed
 *   (two records appended to the thread's buffer, as the routines would);
 * - a switch: the buffer handed over and emptied (urec.c, urec_flush());
 * - a migration: that, and the thread resumes on the other CPU (its
 *   rseq cpu_id), whose buffer the switches there left empty.
 *
 * Whatever the stop, the call must end as if it had happened wholly on
 * one side of it: run whole after the stop's effect where the stop came
 * before its commit (the store that makes its record or fold visible), or
 * run whole and then the stop's effect where it came after. The buffers,
 * the sums, the hook's thunk cache, the return address slot and every
 * register but rax must be exactly those; the TSC is frozen for the call
 * (rdtsc is emulated: a restart reads the same time), so they can be.
 * The one word allowed to differ is the bottom's sp (bsp), which a fold
 * stores before its commit on purpose (urec_tmpl.S, xp_urec_fbottom): an
 * attempt stopped after that store leaves it at this call's sp, which a
 * hand-over sends as a drop of frames at or below this call's own, none
 * of them live (docs/userhooks.md).
 *
 * urec-preempt [CASES] [-q]: "ok" or the first stop that went wrong (exit
 * 1). Built against a copy of the template with a rule broken, it must
 * fail (selftests/check.sh, host-urec-preempt).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#include "urec.h"
#include "urec-host.h"

typedef uint64_t u64;

/* the routines' rseq area: the layout of the kernel's struct rseq, the stamp in its padding */
struct area {
	uint32_t cpu_id_start, cpu_id;
	u64 rseq_cs;
	uint32_t flags, node_id, mm_cid, stamp;
};
static __thread struct area area __attribute__((aligned(32)));

/*
 * void pcall(routine, top, cookie): the routine called at sp top - 8 as a
 * stub (cookie in eax; *top the hooked function's return address) or a
 * thunk calls it, single-stepped from the call on, every register but
 * rax and rsp loaded before and stored after (urec-host.h).
 */
uint64_t pc_host_sp, pc_target;
extern const unsigned char pcall_back[];
void pcall(const void *routine, void *top, unsigned int cookie);
__asm__(
	".text\n"
	".globl pcall, pcall_back\n"
	"pcall:\n"
	UREG_PUSH_KEPT
	"	movq	%rsp, pc_host_sp(%rip)\n"
	"	movq	%rdi, pc_target(%rip)\n"
	"	movl	%edx, %eax\n"
	"	movq	%rsi, %rsp\n"
	"	pushfq\n"
	"	orq	$0x100, (%rsp)\n"
	"	popfq\n"
	UREG_EACH(UREG_LOAD)
	"	call	*pc_target(%rip)\n"
	"pcall_back:\n"
	UREG_EACH(UREG_STORE)
	"	movq	pc_host_sp(%rip), %rsp\n"
	UREG_POP_KEPT
	"	ret\n");

#define NBUFS		2
#define BUFSZ		((size_t)1 << XP_UREC_BUF_SHIFT)
#define COOKIES		8		/* the cases' cookies: the sums compared */
#define SUMS_CMP	(COOKIES * XP_USUM_SIZE)
#define SUMS_LEN	((size_t)XP_USUM_FUNCS * XP_USUM_SIZE)
#define M47		((1ull << XP_UREC_SP_BITS) - 1)
#define NORET		(1ull << 61)
#define TAIL		(1ull << 62)
#define RET		(1ull << 63)
#define TSC		0x0000123456789000ull	/* the frozen clock */
#define MAX_STEPS	4096
#define GOLDEN		0x61C8864680B583EBull

static unsigned char *blk, *bufs, *sums, *stack;
static uint32_t *tcache;
static u64 sp;			/* the return routine's (a thunk's call); the entry's is sp - 8 */

/* what a run leaves: the test's whole view of the process */
struct snap {
	unsigned char bufs[NBUFS * BUFSZ];
	unsigned char sums[SUMS_CMP];
	uint32_t tcache[COOKIES];
	u64 slot, regs[UREG_N];
	uint32_t cpu;
};

static u64 *word(unsigned char *b, size_t off) { return (u64 *)(b + off); }
static unsigned char *cpu_buf(unsigned char *all, uint32_t cpu) { return all + cpu * BUFSZ; }

static void take(struct snap *s)
{
	memcpy(s->bufs, bufs, sizeof(s->bufs));
	memcpy(s->sums, sums, sizeof(s->sums));
	memcpy(s->tcache, tcache, sizeof(s->tcache));
	s->slot = *word(stack, sp + 8 - (u64)stack);
	memcpy(s->regs, ureg_out, sizeof(s->regs));
	s->cpu = area.cpu_id;
}

static void put(const struct snap *s)
{
	memcpy(bufs, s->bufs, sizeof(s->bufs));
	memcpy(sums, s->sums, sizeof(s->sums));
	memcpy(tcache, s->tcache, sizeof(s->tcache));
	*word(stack, sp + 8 - (u64)stack) = s->slot;
	area.cpu_id = area.cpu_id_start = s->cpu;
	area.rseq_cs = 0;
}

/* The stops. */
enum { SIGNAL, SIGNAL_CALLS, SWITCH, MIGRATE, NSTOPS };
static const char *const stop_name[NSTOPS] = {
	"a signal", "a signal whose handler makes a traced call", "a switch (hand-over)",
	"a migration"
};

static void append(unsigned char *b, u64 what)
{
	u64 state = *word(b, 0);
	unsigned int n = urec_host_count(state);

	*word(b, XP_UREC_ACC + 8 * (size_t)n) = state;
	*word(b, XP_UREC_HDR + 16 * (size_t)n) = TSC;
	*word(b, XP_UREC_HDR + 16 * (size_t)n + 8) = what;
	*word(b, 0) = state + XP_UREC_COUNT_UNIT;
}

static void empty(unsigned char *b)
{
	*word(b, 0) = 0;
	*word(b, XP_UREC_BSP) = 0;
}

/* What @stop does to the buffers and the thread's CPU (the memory as it is now). */
static void stop_effect(int stop, unsigned char *all, uint32_t *cpu)
{
	unsigned char *b = cpu_buf(all, *cpu);
	u64 hsp = sp - 0x400;	/* the handler's frame, below the stopped one */

	switch (stop) {
	case SIGNAL_CALLS:
		if (urec_host_count(*word(b, 0)) + 2 > XP_UREC_CAP)
			empty(b);	/* its routine's ask: the kernel's flush */
		append(b, (hsp & M47) | 3ull << XP_UREC_SP_BITS);
		append(b, (hsp + 8) | RET);
		break;
	case SWITCH:
		empty(b);
		break;
	case MIGRATE:
		empty(b);
		*cpu ^= 1;
		empty(cpu_buf(all, *cpu));
		break;
	}
}

/*
 * The kernel's answer to a full buffer's ask (urec.c, xp_urec_slow()):
 * the buffer handed over, emptied, and the record the routine came with
 * appended by the kernel.
 */
static void take_one(unsigned char *b, u64 what)
{
	empty(b);
	append(b, what);
}

/* the single steps */
static int steps, stop_at = -1, stop, commit_step, syscall_step;
static u64 syscall_rsi;
static u64 state0[NBUFS];
static const char *bad_desc;
static uint32_t trace[MAX_STEPS];

/* The kernel's rseq_ip_fixup() at a stop, then the stop's effect. */
static void stop_here(greg_t *g)
{
	const unsigned char *d = (const unsigned char *)area.rseq_cs;
	uint32_t version, sig;
	u64 start, len, abort;

	if (d) {
		memcpy(&version, d, 4);
		memcpy(&start, d + 8, 8);
		memcpy(&len, d + 16, 8);
		memcpy(&abort, d + 24, 8);
		memcpy(&sig, (const void *)(abort - 4), 4);
		if (version || start + len < start || abort - start < len || sig != SIG_X86)
			bad_desc = "a descriptor the kernel refuses (it kills the thread)";
		else if ((u64)g[REG_RIP] - start < len)
			g[REG_RIP] = abort;
		area.rseq_cs = 0;
	}
	stop_effect(stop, bufs, &area.cpu_id);
	area.cpu_id_start = area.cpu_id;
}

static void on_trap(int sig, siginfo_t *si, void *uc_)
{
	greg_t *g = ((ucontext_t *)uc_)->uc_mcontext.gregs;
	unsigned char *ip;

	(void)sig;
	(void)si;
	for (;;) {
		ip = (unsigned char *)g[REG_RIP];
		if (ip == pcall_back || steps >= MAX_STEPS) {
			g[REG_EFL] &= ~0x100;
			return;
		}
		if (ip < blk || ip >= blk + XP_URT_OFF)
			return;
		trace[steps] = ip - blk;
		if (commit_step < 0 && (*word(bufs, 0) != state0[0] ||
					*word(bufs + BUFSZ, 0) != state0[1]))
			commit_step = steps;
		if (steps == stop_at)
			stop_here(g);
		steps++;
		ip = (unsigned char *)g[REG_RIP];
		if (ip[0] == 0x0f && ip[1] == 0x31) {
			g[REG_RAX] = (uint32_t)TSC;	/* rdtsc, frozen */
			g[REG_RDX] = TSC >> 32;
		} else if (ip[0] == 0x0f && ip[1] == 0x05 && (uint32_t)g[REG_RAX] == 422 &&
			   !g[REG_RDI]) {
			take_one(cpu_buf(bufs, area.cpu_id), g[REG_RSI]);	/* a full buffer's ask */
			syscall_step = steps - 1;
			syscall_rsi = g[REG_RSI];
			g[REG_RAX] = 0;
		} else {
			return;
		}
		g[REG_RIP] += 2;
	}
}

static const unsigned char *routine;
static unsigned int cookie;

static int in_append(uint32_t off)
{
	return off >= OFF(xp_urec_start) && off < OFF(xp_urec_post);
}

/* One call from @from, stopped at step @at (or not: -1); its end in @to. */
static int run(const struct snap *from, int at, struct snap *to)
{
	int i;

	put(from);
	for (i = 0; i < UREG_N; i++)
		ureg_in[i] = 0x5ca1ab1e00000000ull ^ ((u64)random() << 8) ^ i;
	steps = 0;
	stop_at = at;
	commit_step = syscall_step = -1;
	state0[0] = *word(bufs, 0);
	state0[1] = *word(bufs + BUFSZ, 0);
	pcall(blk + OFF(routine), (void *)(sp + 8), cookie);
	take(to);
	return steps;
}

static int bad;
static const char *what;

/*
 * The first word of a buffer that differs in what the kernel reads of it:
 * the header, and the records and their states below the count (a store
 * past the count, by an attempt that the stop then restarted, is no
 * record: the next append writes over it). -1: none.
 */
static long buf_differs(unsigned char *got, unsigned char *want)
{
	unsigned int n = urec_host_count(*word(want, 0)), i;
	size_t o;

	for (o = 0; o < XP_UREC_HDR; o += 8)
		if (*word(got, o) != *word(want, o))
			return o;
	for (i = 0; i < n && i < XP_UREC_CAP; i++) {
		o = XP_UREC_HDR + 16 * (size_t)i;
		if (*word(got, o) != *word(want, o))
			return o;
		if (*word(got, o + 8) != *word(want, o + 8))
			return o + 8;
		o = XP_UREC_ACC + 8 * (size_t)i;
		if (*word(got, o) != *word(want, o))
			return o;
	}
	return -1;
}

static int differ(struct snap *got, const struct snap *want, u64 call_sp, int bsp_free)
{
	static struct snap w;
	uint32_t c;
	long o;

	if (memcmp(got->regs, ureg_in, sizeof(got->regs)))
		return printf("urec-preempt: %s: %s not given back\n", what, ureg_lost()), 1;
	w = *want;
	for (c = 0; c < NBUFS; c++) {
		unsigned char *g = cpu_buf(got->bufs, c), *e = cpu_buf(w.bufs, c);

		if (bsp_free && *word(g, XP_UREC_BSP) == call_sp)
			*word(e, XP_UREC_BSP) = call_sp;
		o = buf_differs(g, e);
		if (o >= 0) {
			printf("urec-preempt: %s: CPU %u's buffer at +%ld: %#llx, not %#llx\n",
			       what, c, o, (unsigned long long)*word(g, o),
			       (unsigned long long)*word(e, o));
			return 1;
		}
	}
	if (memcmp(got->sums, w.sums, sizeof(w.sums)))
		return printf("urec-preempt: %s: the sums\n", what), 1;
	if (got->slot != w.slot)
		return printf("urec-preempt: %s: the return address slot\n", what), 1;
	if (memcmp(got->tcache, w.tcache, sizeof(w.tcache)))
		return printf("urec-preempt: %s: the thunk cache\n", what), 1;
	if (got->cpu != w.cpu)
		return printf("urec-preempt: %s: the thread's CPU\n", what), 1;
	return 0;
}

static unsigned int stops_tried, restarts, whole_count;

/*
 * The call of @r from @b0 stopped before each of its instructions in turn
 * by each kind of stop; @call_sp is where its record says it was.
 */
static int every_stop(const char *name, const unsigned char *r, unsigned int c,
		      const struct snap *b0, u64 call_sp)
{
	static struct snap whole, before, after, asked, got, tmp;
	static char buf[256];
	int n, k, s, commit, full, bsp_stored = 0;
	u64 full_word = 0;

	routine = r;
	cookie = c;
	n = run(b0, -1, &whole);
	whole_count = urec_host_count(*word(cpu_buf(whole.bufs, whole.cpu), 0));
	commit = commit_step < 0 ? n : commit_step;
	if (bad_desc || n >= MAX_STEPS) {
		printf("urec-preempt: %s: %s\n", name, bad_desc ?: "the call never ends");
		return 1;
	}
	/* the call stores bsp (before its commit): an aborted attempt's may stay */
	for (k = 0; k < NBUFS; k++)
		bsp_stored |= *word(cpu_buf(whole.bufs, k), XP_UREC_BSP) !=
			      *word(cpu_buf((unsigned char *)b0->bufs, k), XP_UREC_BSP);
	/*
	 * A full buffer: past the section's test that found it full, the
	 * routine asks the kernel whatever a stop did meanwhile, and the
	 * kernel hands over what the buffer has then and takes the record.
	 */
	full = n;
	if (syscall_step >= 0) {
		for (k = syscall_step; k > 0 && !in_append(trace[k - 1]); k--)
			;
		full = k;
		commit = syscall_step + 1;	/* the kernel's take is its commit */
		full_word = syscall_rsi;
	}
	for (s = 0; s < NSTOPS; s++) {
		stop = s;
		/* the stop before the call: the call run whole after its effect */
		tmp = *b0;
		stop_effect(s, tmp.bufs, &tmp.cpu);
		run(&tmp, -1, &before);
		/* past the test: the kernel's take after the stop's effect */
		tmp = *b0;
		stop_effect(s, tmp.bufs, &tmp.cpu);
		take_one(cpu_buf(tmp.bufs, tmp.cpu), full_word);
		tmp.slot = whole.slot;
		memcpy(tmp.regs, whole.regs, sizeof(tmp.regs));
		asked = tmp;
		/* after the call: its effect on what the call left */
		after = whole;
		stop_effect(s, after.bufs, &after.cpu);
		for (k = 0; k < n; k++) {
			stop = s;
			run(b0, k, &got);
			stops_tried++;
			restarts += steps > n;
			snprintf(buf, sizeof(buf), "%s, %s before instruction %d (+%#x)", name,
				 stop_name[s], k, trace[k]);
			what = buf;
			if (bad_desc) {
				printf("urec-preempt: %s: %s\n", what, bad_desc);
				return 1;
			}
			if (steps >= MAX_STEPS) {
				printf("urec-preempt: %s: the call never ends\n", what);
				return 1;
			}
			if (differ(&got, k >= commit ? &after : k >= full ? &asked : &before,
				   call_sp, k < commit && bsp_stored))
				return 1;
		}
	}
	return 0;
}

static u64 rnd(u64 n)
{
	u64 r = ((u64)random() << 33) ^ ((u64)random() << 11) ^ (u64)random();

	return n ? r % n : r;
}

/* n records of junk, the header's tables as the kernel writes them */
static void buffer(unsigned char *b, unsigned int n)
{
	unsigned int i;

	memset(b, 0, BUFSZ);
	for (i = 0; i < XP_USUM_NHIST; i++) {
		b[XP_UREC_BK + i] = i;
		*word(b, XP_UREC_TH + 8 * i) = i ? (3ull << (i - 1)) : ~0ull;
	}
	*word(b, XP_UREC_BELOW) = RET;
	for (i = 0; i < n; i++) {
		*word(b, XP_UREC_HDR + 16 * i) = rnd(0);
		*word(b, XP_UREC_HDR + 16 * i + 8) = rnd(0);
		*word(b, XP_UREC_ACC + 8 * i) = rnd(0);
	}
	*word(b, 0) = rnd(1ull << 40) << XP_UREC_COUNT_BITS | (u64)n * XP_UREC_COUNT_UNIT;
}

static u64 record(u64 at, unsigned int c, u64 kind)
{
	return (at & M47) | (u64)c << XP_UREC_SP_BITS | kind;
}

/* An entry: the thunk through the hash or through the hook's cache; a buffer with room or not. */
static int entry_case(unsigned int i)
{
	static struct snap b0;
	static const unsigned int counts[] = { 0, 1, 7, XP_UREC_CAP - 1, XP_UREC_CAP };
	const u64 ret = 0x401000 + 0x10 * i, thunk = (u64)blk + XP_URT_OFF + XP_URT_SIZE * (i + 1);
	u64 *hash = (u64 *)(blk + XP_URT_HASH);
	unsigned int pos = (unsigned int)((ret * GOLDEN) >> (64 - XP_URT_HASH_BITS));
	const unsigned char *r = i % 4 == 3 ? xp_urec_entry_noret : xp_urec_entry;
	char name[96];

	memset(&b0, 0, sizeof(b0));
	buffer(cpu_buf(b0.bufs, 0), counts[i % 5]);
	buffer(cpu_buf(b0.bufs, 1), 0);
	memset(hash, 0, XP_URT_HASH_SIZE);
	hash[2 * pos + 2] = ret;	/* the second probe */
	hash[2 * pos + 3] = thunk;
	if (i % 2)
		b0.tcache[i % COOKIES] = (pos + 1) * 16;
	b0.slot = ret;
	snprintf(name, sizeof(name), "%s, %u records, the thunk through the %s",
		 r == xp_urec_entry ? "an entry" : "an entry without returns", counts[i % 5],
		 i % 2 ? "hook's cache" : "hash");
	return every_stop(name, r, i % COOKIES, &b0, sp);
}

/* A return: the paths of urec-fold.c's rules, a call's entry dated d cycles ago. */
static int return_case(unsigned int i)
{
	static struct snap b0;
	unsigned char *b = cpu_buf(b0.bufs, 0);
	unsigned int c = i % COOKIES, n, kind = i % 7;
	u64 e = record(sp, c, 0), cw = record(sp + 0x40, (c + 1) % COOKIES, 0), d = 1000 + rnd(1 << 20);
	const char *name;

	memset(&b0, 0, sizeof(b0));
	n = kind == 3 ? 1 : 2 + rnd(30);
	switch (kind) {
	case 0: name = "a return, nested"; break;
	case 1: name = "a return, a tail call"; e |= TAIL; cw = record(sp, c, 0); break;
	case 2: name = "a return after a return record"; cw = sp | RET; break;
	case 3: name = "a return at the bottom"; break;
	case 4: name = "a return, not its entry's (plain)"; e = record(sp + 0x20, c, 0); break;
	case 5: name = "a return of 2^32 cycles or more (plain)"; d = 1ull << 33; break;
	default: name = "a return into a full buffer"; n = XP_UREC_CAP; break;
	}
	buffer(b, n);
	buffer(cpu_buf(b0.bufs, 1), 0);
	if (n >= 2)
		*word(b, XP_UREC_HDR + 16 * (n - 2) + 8) = cw;
	*word(b, XP_UREC_HDR + 16 * (n - 1)) = TSC - d;
	*word(b, XP_UREC_HDR + 16 * (n - 1) + 8) = e;
	*word(b, XP_UREC_ACC + 8 * (n - 1)) = *word(b, 0) - ((d / 3) << XP_UREC_COUNT_BITS) -
					    XP_UREC_COUNT_UNIT;
	if (kind == 3 && i % 2)
		*word(b, XP_UREC_BSP) = sp + 0x100;	/* a first bottom call above: this one below */
	b0.slot = 0x401000;
	if (every_stop(name, xp_urec_ret, 0, &b0, sp))
		return 1;
	/* the case took the way it is named for: a fold takes the entry out */
	if (whole_count != (kind < 4 ? n - 1 : kind < 6 ? n + 1 : 1)) {
		printf("urec-preempt: %s: the call whole left %u records of %u\n", name,
		       whole_count, n);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int cases = argc > 1 && argv[1][0] != '-' ? atoi(argv[1]) : 14, i;
	int quiet = argc > 1 && !strcmp(argv[argc - 1], "-q");
	struct sigaction sa = { 0 };
	stack_t alt = { 0 };

	blk = mmap(NULL, XP_UREC_BLOCK, PROT_READ | PROT_WRITE | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	bufs = mmap(NULL, NBUFS * BUFSZ, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	sums = mmap(NULL, SUMS_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	tcache = mmap(NULL, XP_UREC_TCACHE_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	stack = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	alt.ss_sp = malloc(1 << 16);
	alt.ss_size = 1 << 16;
	if (blk == MAP_FAILED || bufs == MAP_FAILED || sums == MAP_FAILED ||
	    tcache == MAP_FAILED || stack == MAP_FAILED || !alt.ss_sp || sigaltstack(&alt, NULL)) {
		perror("urec-preempt: set-up");
		return 1;
	}
	sp = (u64)stack + (1 << 15) - 8;
	urec_host_patch(blk, (char *)&area - (char *)__builtin_thread_pointer(), bufs, NBUFS,
			sums, tcache);
	area.stamp = STAMP;
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigaction(SIGTRAP, &sa, NULL);
	srandom(1);
	for (i = 0; i < cases && !bad; i++)
		bad = entry_case(i) || return_case(i);
	for (i = SUMS_CMP; i < SUMS_LEN && !bad; i += 8)
		if (*word(sums, i))
			bad = printf("urec-preempt: a sum past the cases' cookies changed\n");
	if (bad)
		return 1;
	if (!quiet)
		printf("urec-preempt: %u calls stopped before each of their instructions, %u stops, %u restarts: each as if the stop came wholly before or after it\n",
		       2 * cases, stops_tried, restarts);
	return 0;
}
