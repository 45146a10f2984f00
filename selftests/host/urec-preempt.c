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
 * - a signal whose handler's traced call is summed (A and that function's
 *   sums grow, the count as it was);
 * - a switch: the buffer handed over and emptied (urec.c, urec_flush());
 * - a migration: that, and the thread resumes on the other CPU (its
 *   rseq cpu_id), whose buffer the switches there left empty.
 *
 * And for the entry routines, a detach (module/uhooks/uunwind.c, "3.
 * Detach"): the process's hooks go while the thread is stopped there. The
 * areas' hashes give each key's return address in place of its thunk and
 * lose their keys (urec.c, xp_urec_detach()); then the thread's task work,
 * at the same stop or 1, 8 or 20 instructions later (it runs on until the
 * kick's interrupt), sends it to the routine's end if it is between the
 * routine's start and its thunk's store (detach_window(): the registers
 * not saved yet written below sp, rdi taken back from -0x30(%rsp) inside
 * the labelled spans) and gives every thunk on its stack its target back;
 * or the thread is in a signal handler, its registers in the frame the
 * scan reads (detach_word(), no redirect). A thread that reads the hash
 * after its keys went misses, and the kernel makes no thunk (played here).
 * The call must end with its return address slot holding the function's
 * return address, not a thunk (a tail call's: its caller's thunk's
 * target), every register but rax given back, and the buffers as before
 * the call, as the call whole left them, or with its record saying its
 * return writes nothing.
 *
 * Whatever the stop, the call must end as if it had happened wholly on
 * one side of it: run whole after the stop's effect where the stop came
 * before its commit (the store that makes its record or fold visible), or
 * run whole and then the stop's effect where it came after. What a switch
 * or a migration hands over at the stop must be the buffer as it was
 * before the call, or as the call whole left it, on the same side; and at
 * the end, the buffers as the kernel reads them (the header, the records
 * and their states below the count: a store past the count by an attempt
 * the stop restarted is no record), the sums, the hook's thunk cache, the
 * return address slot and every register but rax must be exactly those.
 * The TSC is frozen for the call (rdtsc is emulated: a restart reads the
 * same time), so they can be. The one word allowed to differ besides is
 * the bottom's sp (bsp), which a fold stores before its commit on purpose
 * (urec_tmpl.S, xp_urec_fbottom): an attempt stopped after that store
 * leaves it at this call's sp, which a hand-over sends as a drop of frames
 * at or below this call's own, none of them live (docs/userhooks.md).
 *
 * The calls: entries whose thunk comes from the hook's cache, from the
 * hash past a probe of another key, a tail call's, none (an entry that
 * says so), and entries without returns, into buffers of 0, 1, 7, CAP - 1
 * and CAP records (full: the kernel's take); returns folded nested, after
 * a tail call, after a return record, at the bottom (bsp 0 or above), and
 * returns that append: another sp's entry, 2^32 cycles, a bottom call
 * above bsp, a tail call's caller elsewhere, a return record elsewhere, a
 * caller below, a caller's entry without returns, a full buffer; counts
 * the process wrote, not a multiple of eight, at the buffer's end; and a
 * thread not stamped yet, whose routines ask the kernel (played here:
 * the stamp written, rdi 0). Each case checks that it took the way it is
 * named for.
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
#include "urec_win.h"	/* the kernel's own window: detach_window() runs it */

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
#define THUNKS		32		/* the cases' thunks, and their targets */

static unsigned char *blk, *bufs, *sums, *stack;
static uint32_t *tcache;
static u64 sp;			/* the return routine's (a thunk's call); the entry's is sp - 8 */

/* what a run leaves: the test's whole view of the process */
struct snap {
	unsigned char bufs[NBUFS * BUFSZ];
	unsigned char sums[SUMS_CMP];
	uint32_t tcache[COOKIES];
	u64 slot, regs[UREG_N];
	uint32_t cpu, stamp;	/* the thread's CPU, its rseq area's stamp */
};

static unsigned char *cpu_buf(unsigned char *all, uint32_t cpu) { return all + cpu * BUFSZ; }

static void take(struct snap *s)
{
	memcpy(s->bufs, bufs, sizeof(s->bufs));
	memcpy(s->sums, sums, sizeof(s->sums));
	memcpy(s->tcache, tcache, sizeof(s->tcache));
	s->slot = *word(stack, sp + 8 - (u64)stack);
	memcpy(s->regs, ureg_out, sizeof(s->regs));
	s->cpu = area.cpu_id;
	s->stamp = area.stamp;
}

static void put(const struct snap *s)
{
	memcpy(bufs, s->bufs, sizeof(s->bufs));
	memcpy(sums, s->sums, sizeof(s->sums));
	memcpy(tcache, s->tcache, sizeof(s->tcache));
	*word(stack, sp + 8 - (u64)stack) = s->slot;
	area.cpu_id = area.cpu_id_start = s->cpu;
	area.stamp = s->stamp;
	area.rseq_cs = 0;
}

/* The stops; a detach's expectations are its own (detach_stops()). */
enum { SIGNAL, SIGNAL_CALLS, SIGNAL_SUMMED, SWITCH, MIGRATE, NSTOPS, DETACH = NSTOPS };
static const char *const stop_name[NSTOPS] = {
	"a signal", "a signal whose handler makes a traced call",
	"a signal whose handler's traced call is summed", "a switch (hand-over)", "a migration"
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

/* What @stop does to the buffers @all, the sums @sm and the thread's CPU. */
static void stop_effect(int stop, unsigned char *all, unsigned char *sm, uint32_t *cpu)
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
	case SIGNAL_SUMMED:	/* cookie 7: 1000 cycles, 600 its own, bucket 9 */
		*word(b, 0) += 1000ull << XP_UREC_COUNT_BITS;
		*word(sm, 7 * XP_USUM_SIZE + XP_USUM_WALL) += 1000;
		*word(sm, 7 * XP_USUM_SIZE + XP_USUM_OWN) += 600;
		*word(sm, 7 * XP_USUM_SIZE + XP_USUM_HIST + 9 * XP_USUM_BUCKET) += 1;
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

/*
 * The detach, as module/uhooks/urec.c and uunwind.c do it: thunk_tgt[j]
 * is the target of the j-th thunk of the block (the cases set theirs).
 */
static u64 thunk_tgt[THUNKS];

static u64 thunk_target(u64 w)
{
	u64 o = w - ((u64)blk + XP_URT_OFF);

	return o < THUNKS * XP_URT_SIZE && !(o % XP_URT_SIZE) ? thunk_tgt[o / XP_URT_SIZE] : 0;
}

/* uunwind.c's detach_word(): a thunk, or one with the tail bit a thread loaded */
static u64 detach_word(u64 w)
{
	u64 tail = w & 1ull << XP_URT_TAILBIT, t = thunk_target(w & ~tail);

	return t ? t | tail : 0;
}

static int detached;	/* the hashes' keys are gone: a miss gets no thunk */

/* xp_urec_detach(): each entry's thunk becomes its return address, its key 0 */
static void detach_hash(void)
{
	u64 *hash = (u64 *)(blk + XP_URT_HASH), key, tail;
	unsigned int i;

	detached = 1;
	for (i = 0; i < XP_URT_HASH_SIZE / 16; i++) {
		key = hash[2 * i];
		tail = hash[2 * i + 1] & 1ull << XP_URT_TAILBIT;
		if (hash[2 * i + 1] & 1ull << XP_URT_NEGBIT)
			key = 0;
		if (key && tail)
			key = thunk_target(key) ?: key;
		if (key)
			hash[2 * i + 1] = key | tail;
		hash[2 * i] = 0;
	}
}

/* the word at @w given its target if it is a thunk */
static void detach_at(u64 *w)
{
	u64 t = detach_word(*w);

	if (t)
		*w = t;
}

/* every thunk on the stack from @from up given its target */
static void detach_scan(u64 from)
{
	u64 a;

	for (a = from & ~7ull; a < (u64)stack + (1 << 16); a += 8)
		detach_at((u64 *)a);
}

/*
 * A thread a signal stopped there: its registers are in the signal frame
 * on its stack, below the red zone, which the scan reads as it reads the
 * rest (detach_word() on a loaded thunk with the tail bit); its ip is the
 * handler's, outside the window: no redirect.
 */
static void detach_frame(greg_t *g)
{
	static const int r[] = { REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14,
				 REG_R15, REG_RDI, REG_RSI, REG_RBP, REG_RBX, REG_RDX, REG_RAX,
				 REG_RCX };
	unsigned int i;

	for (i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		detach_at((u64 *)&g[r[i]]);
	detach_scan(g[REG_RSP] - 128);
}

/*
 * The thread's task work: detach_window(), through the kernel's own
 * xp_urec_window() and xp_urec_win_resume() (urec_win.h), then every thunk
 * on its stack.
 */
static void detach_thread(greg_t *g)
{
	u64 sp_now = g[REG_RSP];
	struct xp_urec_win w;
	unsigned long to;
	int save = 0;

	xp_urec_window((unsigned long)blk, &w);
	to = xp_urec_win_resume(&w, g[REG_RIP], &save);
	if (to) {
		if (save) {
			*(u64 *)(sp_now - 0x10) = g[REG_RDX];
			*(u64 *)(sp_now - 0x18) = g[REG_RCX];
			*(u64 *)(sp_now - 0x20) = g[REG_R11];
			*(u64 *)(sp_now - 0x28) = g[REG_RSI];
		}
		g[REG_RIP] = to;
	}
	detach_scan(sp_now);
}

/*
 * How the detach reaches the thread: its task work DELAY instructions after
 * the hashes' rewrite (0: at the same stop; later: the thread ran on
 * meanwhile, as it does until the kick's interrupt), or its registers in
 * a signal frame (SIGFRAME).
 */
#define SIGFRAME	-1
static const int detach_modes[] = { 0, 1, 8, 20, SIGFRAME };
static int detach_mode, work_at = -1;

/* the single steps */
static int steps, stop_at = -1, stop, commit_step, syscall_step;
static u64 syscall_rsi;
static unsigned char handed[BUFSZ], handed_want[BUFSZ];	/* a hand-over's buffer */
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
	if (stop == DETACH) {
		detach_hash();
		if (detach_mode == SIGFRAME)
			detach_frame(g);
		else if (!detach_mode)
			detach_thread(g);
		else
			work_at = steps + detach_mode;
		return;
	}
	if (stop == SWITCH || stop == MIGRATE)	/* what the kernel hands over here */
		memcpy(handed, cpu_buf(bufs, area.cpu_id), BUFSZ);
	stop_effect(stop, bufs, sums, &area.cpu_id);
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
		if (steps == work_at) {
			detach_thread(g);
			work_at = -1;
		}
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
			   g[REG_RDI] == 1) {
			area.stamp = STAMP;	/* the stamp's ask: the kernel stamps the area */
			g[REG_RDI] = 0;
			g[REG_RAX] = 0;
		} else if (ip[0] == 0x0f && ip[1] == 0x05 && (uint32_t)g[REG_RAX] == 422 &&
			   !g[REG_RDI]) {
			take_one(cpu_buf(bufs, area.cpu_id), g[REG_RSI]);	/* a full buffer's ask */
			syscall_step = steps - 1;
			syscall_rsi = g[REG_RSI];
			g[REG_RAX] = 0;
		} else if (ip[0] == 0x0f && ip[1] == 0x05 && (uint32_t)g[REG_RAX] == 422) {
			/*
			 * A miss (rdi: the return address's slot), played so that the
			 * instruction after it is stopped before too (a real system
			 * call's single-step trap comes one instruction late): only
			 * after a detach, whose kernel makes no thunk.
			 */
			if (!detached)
				bad_desc = "a miss, which this test plays only after a detach";
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
	commit_step = syscall_step = work_at = -1;
	detached = 0;
	state0[0] = *word(bufs, 0);
	state0[1] = *word(bufs + BUFSZ, 0);
	pcall(blk + OFF(routine), (void *)(sp + 8), cookie);
	if (work_at >= 0)	/* the detach's task work, once the call is over */
		detach_scan(sp + 8);
	work_at = -1;
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

/*
 * What a switch or a migration handed over at the stop, against CPU
 * @cpu's buffer in @want (the call not begun, or done).
 */
static int handed_differs(const struct snap *want, uint32_t cpu, u64 call_sp, int bsp_free)
{
	long o;

	memcpy(handed_want, cpu_buf((unsigned char *)want->bufs, cpu), BUFSZ);
	if (bsp_free && *word(handed, XP_UREC_BSP) == call_sp)
		*word(handed_want, XP_UREC_BSP) = call_sp;
	o = buf_differs(handed, handed_want);
	if (o < 0)
		return 0;
	printf("urec-preempt: %s: handed over at +%ld: %#llx, not %#llx\n", what, o,
	       (unsigned long long)*word(handed, o), (unsigned long long)*word(handed_want, o));
	return 1;
}

static struct snap whole;	/* the call run whole, from the case's memory */
static unsigned int calls, stops_tried, restarts, whole_count, detaches;
static u64 whole_last;		/* the call whole: its buffer's newest record's word */

/*
 * The entry @name, @n instructions whole from @b0, with a detach before
 * each of its instructions in turn: the hash as the case made it again
 * after each.
 */
static int detach_stops(const char *name, const struct snap *b0, int n)
{
	static unsigned char hash0[XP_URT_HASH_SIZE], noret[BUFSZ];
	static struct snap got;
	static char buf[256];
	u64 ret = detach_word(b0->slot) ?: b0->slot;
	unsigned char *g0 = cpu_buf(got.bufs, 0), *g1 = cpu_buf(got.bufs, 1);
	unsigned int c = urec_host_count(*word(cpu_buf(whole.bufs, 0), 0));
	int k, m;

	/*
	 * A thread that reads the hash after its keys went finds none: the
	 * kernel makes no thunk for a detached block, and the entry's record
	 * says its return writes nothing (NORET, no TAIL).
	 */
	memcpy(noret, cpu_buf(whole.bufs, 0), BUFSZ);
	if (c)
		*word(noret, XP_UREC_HDR + 16 * (c - 1) + 8) =
			(*word(noret, XP_UREC_HDR + 16 * (c - 1) + 8) & ~TAIL) | NORET;

	memcpy(hash0, blk + XP_URT_HASH, sizeof(hash0));
	for (k = 0; k < n * (int)(sizeof(detach_modes) / sizeof(detach_modes[0])); k++) {
		stop = DETACH;
		detach_mode = detach_modes[k / n];
		run(b0, k % n, &got);
		memcpy(blk + XP_URT_HASH, hash0, sizeof(hash0));
		detaches++;
		m = snprintf(buf, sizeof(buf), "%s, a detach before instruction %d (+%#x), ", name,
			     k % n, trace[k % n]);
		snprintf(buf + m, sizeof(buf) - m, detach_mode == SIGFRAME ?
			 "the thread in a signal handler" : "its task work %d instructions later",
			 detach_mode);
		what = buf;
		if (bad_desc || steps >= MAX_STEPS)
			return printf("urec-preempt: %s: %s\n", what,
				      bad_desc ?: "the call never ends"), 1;
		if (memcmp(got.regs, ureg_in, sizeof(got.regs)))
			return printf("urec-preempt: %s: %s not given back\n", what, ureg_lost()), 1;
		if (got.slot != ret)
			return printf("urec-preempt: %s: the return address slot holds %#llx, not %#llx\n",
				      what, (unsigned long long)got.slot, (unsigned long long)ret), 1;
		if ((buf_differs(g0, cpu_buf((unsigned char *)b0->bufs, 0)) >= 0 &&
		     buf_differs(g0, cpu_buf(whole.bufs, 0)) >= 0 && buf_differs(g0, noret) >= 0) ||
		    buf_differs(g1, cpu_buf((unsigned char *)b0->bufs, 1)) >= 0)
			return printf("urec-preempt: %s: the buffers are neither as before the call nor as after it\n",
				      what), 1;
		if (memcmp(got.sums, b0->sums, sizeof(got.sums)) ||
		    (memcmp(got.tcache, b0->tcache, sizeof(got.tcache)) &&
		     memcmp(got.tcache, whole.tcache, sizeof(got.tcache))) || got.cpu != b0->cpu)
			return printf("urec-preempt: %s: the sums, the thunk cache or the CPU\n",
				      what), 1;
	}
	return 0;
}

/*
 * The call of @r from @b0 stopped before each of its instructions in turn
 * by each kind of stop; @call_sp is where its record says it was.
 */
static int every_stop(const char *name, const unsigned char *r, unsigned int c,
		      const struct snap *b0, u64 call_sp)
{
	static struct snap before, after, asked, got;
	static char buf[256];
	int n, k, s, commit, full, bsp_stored = 0;
	u64 full_word = 0;

	routine = r;
	cookie = c;
	calls++;
	n = run(b0, -1, &whole);
	/* the call is the thread's on CPU 0: the other buffer is another thread's */
	if (memcmp(cpu_buf(whole.bufs, 1), cpu_buf((unsigned char *)b0->bufs, 1), BUFSZ)) {
		printf("urec-preempt: %s: the call whole wrote CPU 1's buffer\n", name);
		return 1;
	}
	whole_count = urec_host_count(*word(cpu_buf(whole.bufs, whole.cpu), 0));
	whole_last = whole_count ? *word(cpu_buf(whole.bufs, whole.cpu),
					 XP_UREC_HDR + 16 * (whole_count - 1) + 8) : 0;
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
		asked = *b0;
		stop_effect(s, asked.bufs, asked.sums, &asked.cpu);
		run(&asked, -1, &before);
		/* past the test: the kernel's take after the stop's effect */
		take_one(cpu_buf(asked.bufs, asked.cpu), full_word);
		asked.slot = whole.slot;	/* the thunk's store and the cache's come first */
		memcpy(asked.tcache, whole.tcache, sizeof(asked.tcache));
		memcpy(asked.regs, whole.regs, sizeof(asked.regs));
		/* after the call: its effect on what the call left */
		after = whole;
		stop_effect(s, after.bufs, after.sums, &after.cpu);
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
				   call_sp, k < commit && bsp_stored) ||
			    ((s == SWITCH || s == MIGRATE) &&
			     handed_differs(k >= commit ? &whole : b0, b0->cpu, call_sp,
					    k < commit && bsp_stored)))
				return 1;
		}
	}
	if (r == xp_urec_entry || r == xp_urec_entry_noret)
		return detach_stops(name, b0, n);
	return 0;
}

/* n records of junk, the header's tables as the kernel writes them */
static void buffer(unsigned char *b, unsigned int n)
{
	unsigned int i;

	memset(b, 0, BUFSZ);
	urec_host_tables(b);
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

/*
 * An entry, way @i % 5 to its thunk, into a buffer of one of five counts
 * (@i / 5): it appends its record, or the kernel takes it (full).
 */
static int entry_case(unsigned int i)
{
	static struct snap b0;
	static const unsigned int counts[] = { 0, 1, 7, XP_UREC_CAP - 1, XP_UREC_CAP };
	static const char *const ways[] = {
		"its thunk from the hash, past another key", "its thunk from the hook's cache",
		"a tail call's thunk", "no thunk for its return address",
		"an entry without returns"
	};
	const u64 ret = 0x401000 + 0x10 * i, thunk = (u64)blk + XP_URT_OFF + XP_URT_SIZE * (i + 1);
	const u64 tail = 1ull << XP_URT_TAILBIT, neg = 1ull << XP_URT_NEGBIT;
	unsigned int way = i % 5, n = counts[(i / 5) % 5], c = i % COOKIES, want;
	/* a tail call's return address is its caller's thunk, whose target is ret */
	const u64 key = way == 2 ? thunk : ret;
	u64 *hash = (u64 *)(blk + XP_URT_HASH), kind;
	unsigned int pos = (unsigned int)((key * GOLDEN) >> (64 - XP_URT_HASH_BITS));
	const unsigned char *r = way == 4 ? xp_urec_entry_noret : xp_urec_entry;
	char name[128];

	memset(&b0, 0, sizeof(b0));
	b0.stamp = STAMP;
	buffer(cpu_buf(b0.bufs, 0), n);
	buffer(cpu_buf(b0.bufs, 1), 0);
	memset(thunk_tgt, 0, sizeof(thunk_tgt));
	thunk_tgt[i + 1] = ret;		/* (a tail call's: where its caller returns) */
	thunk_tgt[i + 2] = ret ^ 0x10000;
	memset(hash, 0, XP_URT_HASH_SIZE);
	hash[2 * pos] = ret ^ 0x10000;	/* the first probe: another return address's */
	hash[2 * pos + 1] = thunk + XP_URT_SIZE;
	hash[2 * pos + 2] = key;	/* the second: this one's */
	hash[2 * pos + 3] = way == 2 ? (thunk | tail) : way == 3 ? (ret | tail | neg) : thunk;
	if (way == 1)
		b0.tcache[c] = (pos + 1) * 16;
	b0.slot = key;
	snprintf(name, sizeof(name), "an entry, %s, %u records", ways[way], n);
	if (every_stop(name, r, c, &b0, sp))
		return 1;
	kind = way == 2 ? TAIL : way >= 3 ? NORET : 0;
	want = n == XP_UREC_CAP ? 1 : n + 1;
	if (whole_count != want || whole_last != (record(sp + 8, c, 0) | kind) ||
	    whole.slot != (way >= 3 ? ret : thunk)) {
		printf("urec-preempt: %s: the call whole left %u records, the last %#llx, the slot %#llx\n",
		       name, whole_count, (unsigned long long)whole_last,
		       (unsigned long long)whole.slot);
		return 1;
	}
	return 0;
}

/*
 * A return, way @i % 12, its entry dated d cycles ago: folded (ways 0 to
 * 3), a return record appended (4 to 10), or the kernel's take (11).
 */
static int return_case(unsigned int i)
{
	static struct snap b0;
	static const char *const ways[] = {
		"folded, nested", "folded after a tail call", "folded after a return record",
		"folded at the bottom", "not its entry's", "of 2^32 cycles or more",
		"at the bottom, above the first bottom call", "a tail call, its caller elsewhere",
		"after a return record elsewhere", "its caller's entry below it",
		"its caller's entry without returns", "into a full buffer"
	};
	unsigned char *b = cpu_buf(b0.bufs, 0);
	unsigned int c = i % COOKIES, n, way = i % 12, want;
	u64 e = record(sp, c, 0), cw = record(sp + 0x40, (c + 1) % COOKIES, 0);
	u64 d = 1000 + rnd(1 << 20);
	char name[128];

	memset(&b0, 0, sizeof(b0));
	b0.stamp = STAMP;
	n = way == 3 || way == 6 ? 1 : way == 11 ? XP_UREC_CAP : 2 + rnd(30);
	switch (way) {
	case 1: e |= TAIL; cw = record(sp, c, 0); break;
	case 2: cw = sp | RET; break;
	case 4: e = record(sp + 0x20, c, 0); break;
	case 5: d = 1ull << 33; break;
	case 7: e |= TAIL; break;
	case 8: cw = (sp + 0x40) | RET; break;
	case 9: cw = record(sp - 0x40, c, 0); break;
	case 10: cw |= NORET; break;
	}
	buffer(b, n);
	buffer(cpu_buf(b0.bufs, 1), 0);
	if (n >= 2)
		*word(b, XP_UREC_HDR + 16 * (n - 2) + 8) = cw;
	*word(b, XP_UREC_HDR + 16 * (n - 1)) = TSC - d;
	*word(b, XP_UREC_HDR + 16 * (n - 1) + 8) = e;
	*word(b, XP_UREC_ACC + 8 * (n - 1)) = *word(b, 0) - ((d / 3) << XP_UREC_COUNT_BITS) -
					    XP_UREC_COUNT_UNIT;
	if (way == 3 && (i / 12) % 2)
		*word(b, XP_UREC_BSP) = sp + 0x100;	/* a first bottom call above: this one below */
	if (way == 6)
		*word(b, XP_UREC_BSP) = sp - 0x100;	/* below: this one above */
	b0.slot = 0x401000;
	snprintf(name, sizeof(name), "a return %s, %u records", ways[way], n);
	if (every_stop(name, xp_urec_ret, 0, &b0, sp))
		return 1;
	want = way < 4 ? n - 1 : way < 11 ? n + 1 : 1;
	if (whole_count != want || (way >= 4 && whole_last != (sp | RET))) {
		printf("urec-preempt: %s: the call whole left %u records, the last %#llx\n", name,
		       whole_count, (unsigned long long)whole_last);
		return 1;
	}
	return 0;
}

/*
 * A count the process wrote, not a multiple of XP_UREC_COUNT_UNIT, at the
 * end of the buffer: whatever the routines make of it (its own figures),
 * they write nothing past the buffer (the next CPU's state word). Until
 * helper-60's review the append's room test let 8 (CAP - 1) + 7 through,
 * and its state's store went 7 bytes into the next buffer.
 */
static int count_case(unsigned int i)
{
	static struct snap b0;
	const u64 ret = 0x402000, thunk = (u64)blk + XP_URT_OFF;
	u64 *hash = (u64 *)(blk + XP_URT_HASH);
	unsigned int pos = (unsigned int)((ret * GOLDEN) >> (64 - XP_URT_HASH_BITS));
	unsigned char *b = cpu_buf(b0.bufs, 0);
	char name[96];

	memset(&b0, 0, sizeof(b0));
	b0.stamp = STAMP;
	buffer(b, XP_UREC_CAP - 1);
	buffer(cpu_buf(b0.bufs, 1), 0);
	*word(b, 0) += 1 + i % 7;	/* 8 (CAP - 1) + 1 to + 7 */
	memset(thunk_tgt, 0, sizeof(thunk_tgt));
	thunk_tgt[0] = ret;
	memset(hash, 0, XP_URT_HASH_SIZE);
	hash[2 * pos] = ret;
	hash[2 * pos + 1] = thunk;
	b0.slot = ret;
	snprintf(name, sizeof(name), "an entry, the count 8 (CAP - 1) + %u", 1 + i % 7);
	if (every_stop(name, xp_urec_entry, 0, &b0, sp))
		return 1;
	snprintf(name, sizeof(name), "a return, the count 8 (CAP - 1) + %u", 1 + i % 7);
	return every_stop(name, xp_urec_ret, 0, &b0, sp);
}

/*
 * A thread whose rseq area has no stamp yet (its first traced call): each
 * routine asks the kernel, which stamps it, and goes on; rdi is kept at
 * -0x30(%rsp) around the ask.
 */
static int stamp_case(unsigned int i)
{
	static struct snap b0;
	static const char *const names[] = {
		"an entry, not stamped yet", "an entry without returns, not stamped yet",
		"a return folded, not stamped yet"
	};
	const unsigned char *const r[] = { xp_urec_entry, xp_urec_entry_noret, xp_urec_ret };
	const u64 ret = 0x403000, thunk = (u64)blk + XP_URT_OFF;
	u64 *hash = (u64 *)(blk + XP_URT_HASH);
	unsigned int pos = (unsigned int)((ret * GOLDEN) >> (64 - XP_URT_HASH_BITS));
	unsigned char *b = cpu_buf(b0.bufs, 0);
	u64 d = 5000;

	memset(&b0, 0, sizeof(b0));	/* no stamp */
	buffer(b, 2);
	buffer(cpu_buf(b0.bufs, 1), 0);
	memset(thunk_tgt, 0, sizeof(thunk_tgt));
	thunk_tgt[0] = ret;
	memset(hash, 0, XP_URT_HASH_SIZE);
	hash[2 * pos] = ret;
	hash[2 * pos + 1] = thunk;
	b0.slot = i < 2 ? ret : 0x401000;
	if (i == 2) {	/* its entry the newest, its caller's before it */
		*word(b, XP_UREC_HDR + 8) = record(sp + 0x40, 1, 0);
		*word(b, XP_UREC_HDR + 16) = TSC - d;
		*word(b, XP_UREC_HDR + 24) = record(sp, 0, 0);
		*word(b, XP_UREC_ACC + 8) = *word(b, 0) - XP_UREC_COUNT_UNIT;
	}
	if (every_stop(names[i], r[i], 0, &b0, sp))
		return 1;
	if (whole.stamp != STAMP || whole_count != (i < 2 ? 3 : 1)) {
		printf("urec-preempt: %s: the call whole left the stamp %#x, %u records\n", names[i],
		       whole.stamp, whole_count);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int cases = argc > 1 && argv[1][0] != '-' ? atoi(argv[1]) : 25, i;
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
		bad = entry_case(i) || return_case(i) || (i < 7 && count_case(i)) ||
		      (i < 3 && stamp_case(i));
	for (i = SUMS_CMP; i < SUMS_LEN && !bad; i += 8)
		if (*word(sums, i))
			bad = printf("urec-preempt: a sum past the cases' cookies changed\n");
	if (bad)
		return 1;
	if (!quiet)
		printf("urec-preempt: %u calls stopped before each of their instructions, %u stops, %u restarts: each as if the stop came wholly before or after it; %u detaches of the entries: each with the return address back\n",
		       calls, stops_tried, restarts, detaches);
	return 0;
}
