// SPDX-License-Identifier: GPL-2.0
/*
 * uhtarget: a multithreaded process whose functions user hooks patch, and
 * that checks every result itself (selftest 27).
 *
 *   uhtarget [-t THREADS] [-n ROUNDS] [-c CHILD] [-g] [-z] [-v] [-m FILE] [-L]
 *            [-F FIFO]
 *                                       run; ROUNDS 0 (default): until SIGTERM;
 *                                       -c: a child of fork runs CHILD rounds
 *                                       (default 20000) when ROUNDS is 0;
 *                                       -g: the threads start at SIGHUP, and
 *                                       after ROUNDS it waits for SIGUSR1 (a
 *                                       child of ROUNDS rounds) or SIGTERM;
 *                                       -m: map FILE (read-only, private,
 *                                       untouched) and print "map ADDR SIZE"
 *                                       -L: mlock() uh_swsplit's cases' page
 *                                       (the text split in three mappings)
 *                                       -F: the first thread runs its first
 *                                       FIFO rounds as SCHED_FIFO 10, then
 *                                       as it started: no task of the usual
 *                                       class takes its CPU meanwhile, so
 *                                       nothing hands its records over
 *                                       before its buffer fills, however
 *                                       busy the machine (selftest 29)
 *   uhtarget -r PID ADDR LEN            print LEN bytes of PID's memory at ADDR
 *                                       (through /proc/PID/mem) in hex
 *   uhtarget -w PID ADDR                try to write a byte there: "written" or
 *                                       "refused: ERROR"
 *   uhtarget -s NR                      make system call NR: "ENOSYS" or "not ENOSYS"
 *   uhtarget -k PID COOKIE:FN...        check PID's thunk cache (tcache_check())
 *
 * Prints "fn NAME ADDRESS SIZE" for each function below, then "ready PID" once
 * its threads run. Each thread calls the functions
 * below in a loop and compares each result with the answer; a wrong one
 * prints "BAD ..." and exits 1 at once. SIGUSR1 forks a child that runs
 * the same loop alone and reports "child ok N" or "child bad" and whether
 * the child saw its parent's record buffers ("parent_records seen|unseen",
 * any byte not 0 there) and the parent the mark the child wrote into them
 * ("child_mark seen|unseen"; - for both without buffers) (with -v, then
 * a child of vfork too, on the same memory: "vchild ok N cpu_id C parent P",
 * C the cpu_id of the rseq area it sees, its parent's, and P that cpu_id
 * once the parent runs again; then a child of clone(CLONE_VM), without
 * CLONE_VFORK: "cchild ok N cpu_id C", C the parent's cpu_id as clone
 * returned to it; then a thread of clone(CLONE_THREAD | CLONE_SETTLS)
 * with a TLS of its own and no rseq area, which runs 200 rounds: "tchild
 * ok N rseq_offset O stamp S tls intact", or "tls changed at +X", X the
 * first byte of its TLS that changed, from its thread pointer, S what
 * became of the stamp planted in it: cleared, kept, or none found);
 * SIGUSR2 execs
 * the program again (a new image: "ready PID" again). At the end, "ok
 * calls=N ret=ADDR" if the count uh_add kept with a RIP-relative locked add
 * (one of the instructions a jump covers) equals the calls made; ADDR is
 * where uh_args6 last returned to (it stores its return address).
 *
 * The functions are written in assembly, so their first bytes are known:
 *  uh_add    push; mov; lock incq rip-relative: a jump over 3 instructions,
 *            one of them RIP-relative (rebuilt in the trampoline)
 *  uh_call   sub; call: the call is the last covered instruction (rebuilt)
 *  uh_one    movabs (10 bytes): a jump over 1 instruction
 *  uh_small  lea; ret (5 bytes, a leaf): the jump covers the ret too
 *  uh_tail   jmp uh_one (5 bytes, a tail call): the jump covers the jmp
 *            (uh_tail.cold: a symbol like GCC's cold parts, which trace skips)
 *  uh_endbr  endbr64; push; mov; lea: the jump goes after the endbr64
 *  uh_loop   xor; then a loop whose branch lands at +2: no jump possible
 *  uh_args6  mov (%rsp); mov to rip-relative: six arguments summed, the
 *            return address stored (user-hook events, selftest 28)
 *  uh_switch push; mov; and; then a jump table whose entries land past
 *            the covered bytes: a jump
 *  uh_swbad  the same, one entry landing on its second instruction:
 *            refused (never called)
 *  uh_swend  uh_switch again, its table followed by a word that lands
 *            outside the text (the table's end), then one that would land
 *            on its second instruction: a jump (the module reads a table
 *            to its first entry outside the text)
 *  uh_swsplit  uh_swbad's case again, but its table's first entries land
 *            in a page of the text that -L mlock()s, a mapping of the
 *            file's own (the text split in three), before the entry onto
 *            its second instruction: refused (the module reads a table
 *            across every executable mapping of the file; never called)
 *  uh_sleep  push; mov; call uh_nap, which sleeps: -z runs a thread that
 *            is nearly always inside it (50 ms naps, each result checked)
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/futex.h>
#include <sys/rseq.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <sys/wait.h>
#include <unistd.h>
#include "maps.h"
#include "../../module/uhooks/urec.h"

long uh_add(long a, long b);
long uh_call(long x);
long uh_one(long x);
long uh_small(long x);
long uh_tail(long x);
long uh_endbr(long x);
long uh_loop(long x, long n);
long uh_args6(long a, long b, long c, long d, long e, long f);
long uh_sleep(long us);
long uh_nap(long us);
long uh_switch(long x);
long uh_swbad(long x);
long uh_swend(long x);
long uh_swsplit(long x);
long uh_fa(long x), uh_fb(long x);
long uh_sig(const long *p);
volatile long uh_count;
volatile unsigned long uh_last_ret;
extern const char uh_add_end[], uh_call_end[], uh_one_end[], uh_small_end[], uh_tail_end[],
	uh_endbr_end[], uh_loop_end[],
	uh_args6_end[], uh_sleep_end[], uh_switch_end[], uh_swbad_end[], uh_swend_end[], uh_swsplit_end[], uh_split_page[], uh_fa_end[], uh_fb_end[], uh_sig_end[];

#define ONE_KEY 0x5a5a5a5a5a5a5a5aL

asm(".text\n"
    ".globl uh_add\n.type uh_add,@function\n"
    "uh_add:\n"
    "	push %rbx\n"
    "	mov %rdi, %rbx\n"
    "	lock incq uh_count(%rip)\n"
    "	lea (%rbx,%rsi), %rax\n"
    "	pop %rbx\n"
    "	ret\n"
    "uh_add_end:\n"
    ".size uh_add, .-uh_add\n"
    ".globl uh_call\n.type uh_call,@function\n"
    "uh_call:\n"
    "	sub $8, %rsp\n"
    "	call uh_leaf\n"
    "	add $8, %rsp\n"
    "	add $1, %rax\n"
    "	ret\n"
    "uh_call_end:\n"
    ".size uh_call, .-uh_call\n"
    ".type uh_leaf,@function\n"
    "uh_leaf:\n"
    "	lea (%rdi,%rdi), %rax\n"
    "	ret\n"
    ".size uh_leaf, .-uh_leaf\n"
    ".globl uh_one\n.type uh_one,@function\n"
    "uh_one:\n"
    "	movabs $0x5a5a5a5a5a5a5a5a, %rax\n"
    "	xor %rdi, %rax\n"
    "	ret\n"
    "uh_one_end:\n"
    ".size uh_one, .-uh_one\n"
    ".globl uh_small\n.type uh_small,@function\n"
    "uh_small:\n"
    "	lea 0x7(%rdi), %rax\n"
    "	ret\n"
    "uh_small_end:\n"
    ".size uh_small, .-uh_small\n"
    ".globl uh_tail\n.type uh_tail,@function\n"
    "uh_tail:\n"
    "	.byte 0xe9\n"			/* jmp uh_one, rel32 whatever the distance */
    "	.long uh_one - (. + 4)\n"
    "uh_tail_end:\n"
    ".size uh_tail, .-uh_tail\n"
    /* a cold part, as GCC names them: entered by a jump, never traced */
    ".type uh_tail.cold,@function\n"
    "uh_tail.cold:\n"
    "	ud2\n"
    ".size uh_tail.cold, .-uh_tail.cold\n"
    ".globl uh_endbr\n.type uh_endbr,@function\n"
    "uh_endbr:\n"
    "	endbr64\n"
    "	push %rbp\n"
    "	mov %rsp, %rbp\n"
    "	lea 3(%rdi), %rax\n"
    "	pop %rbp\n"
    "	ret\n"
    "uh_endbr_end:\n"
    ".size uh_endbr, .-uh_endbr\n"
    ".globl uh_loop\n.type uh_loop,@function\n"
    "uh_loop:\n"
    "	xor %eax, %eax\n"
    "1:	add %rdi, %rax\n"
    "	dec %rsi\n"
    "	jnz 1b\n"
    "	ret\n"
    "uh_loop_end:\n"
    ".size uh_loop, .-uh_loop\n"
    ".globl uh_args6\n.type uh_args6,@function\n"
    "uh_args6:\n"
    "	mov (%rsp), %rax\n"
    "	mov %rax, uh_last_ret(%rip)\n"
    "	lea (%rdi,%rsi), %rax\n"
    "	add %rdx, %rax\n"
    "	add %rcx, %rax\n"
    "	add %r8, %rax\n"
    "	add %r9, %rax\n"
    "	ret\n"
    "uh_args6_end:\n"
    ".size uh_args6, .-uh_args6\n"
    ".globl uh_sleep\n.type uh_sleep,@function\n"
    "uh_sleep:\n"
    "	push %rbx\n"
    "	mov %rdi, %rbx\n"
    "	call uh_nap\n"
    "	lea 1(%rbx), %rax\n"
    "	pop %rbx\n"
    "	ret\n"
    "uh_sleep_end:\n"
    ".size uh_sleep, .-uh_sleep\n"
    /* x + 10 * (x % 4 + 1), through a jump table as compilers build one */
    ".globl uh_switch\n.type uh_switch,@function\n"
    "uh_switch:\n"
    "	push %rbx\n"
    "	mov %rdi, %rbx\n"
    "	and $3, %edi\n"
    "	lea uh_swtab(%rip), %rdx\n"
    "	movslq (%rdx,%rdi,4), %rax\n"
    "	add %rdx, %rax\n"
    "	jmp *%rax\n"
    "1:	lea 10(%rbx), %rax\n	pop %rbx\n	ret\n"
    "2:	lea 20(%rbx), %rax\n	pop %rbx\n	ret\n"
    "3:	lea 30(%rbx), %rax\n	pop %rbx\n	ret\n"
    "4:	lea 40(%rbx), %rax\n	pop %rbx\n	ret\n"
    "uh_switch_end:\n"
    ".size uh_switch, .-uh_switch\n"
    /* the same, but one entry of its table lands on its second instruction */
    ".globl uh_swbad\n.type uh_swbad,@function\n"
    "uh_swbad:\n"
    "	push %rbx\n"
    "5:	mov %rdi, %rbx\n"
    "	and $1, %edi\n"
    "	lea uh_swbadtab(%rip), %rdx\n"
    "	movslq (%rdx,%rdi,4), %rax\n"
    "	add %rdx, %rax\n"
    "	jmp *%rax\n"
    "6:	lea 10(%rbx), %rax\n	pop %rbx\n	ret\n"
    "uh_swbad_end:\n"
    ".size uh_swbad, .-uh_swbad\n"
    ".globl uh_swend\n.type uh_swend,@function\n"
    "uh_swend:\n"
    "	push %rbx\n"
    "17:	mov %rdi, %rbx\n"
    "	and $3, %edi\n"
    "	lea uh_swendtab(%rip), %rdx\n"
    "	movslq (%rdx,%rdi,4), %rax\n"
    "	add %rdx, %rax\n"
    "	jmp *%rax\n"
    /* labels of its own: uh_swtab's 1b-4b are uh_switch's */
    "11:	lea 10(%rbx), %rax\n	pop %rbx\n	ret\n"
    "12:	lea 20(%rbx), %rax\n	pop %rbx\n	ret\n"
    "13:	lea 30(%rbx), %rax\n	pop %rbx\n	ret\n"
    "14:	lea 40(%rbx), %rax\n	pop %rbx\n	ret\n"
    "uh_swend_end:\n"
    ".size uh_swend, .-uh_swend\n"
    ".globl uh_swsplit\n.type uh_swsplit,@function\n"
    "uh_swsplit:\n"
    "	push %rbx\n"
    "18:	mov %rdi, %rbx\n"
    "	and $3, %edi\n"
    "	lea uh_swsplittab(%rip), %rdx\n"
    "	movslq (%rdx,%rdi,4), %rax\n"
    "	add %rdx, %rax\n"
    "	jmp *%rax\n"
    "uh_swsplit_end:\n"
    ".size uh_swsplit, .-uh_swsplit\n"
    /* its cases, on a page of their own that -L locks: another mapping */
    ".balign 4096\n"
    ".globl uh_split_page\n"
    "uh_split_page:\n"
    "15:	lea 10(%rbx), %rax\n	pop %rbx\n	ret\n"
    "16:	lea 20(%rbx), %rax\n	pop %rbx\n	ret\n"
    ".balign 4096, 0xcc\n"
    /*
     * x + 1 twice over: uh_fb shares uh_fa's tail, as hand-written assembly
     * with shared labels (glibc's memmove family) and GCC's cold parts do.
     * Its jmp lands on uh_fa's second instruction, which a jump at uh_fa's
     * entry would cover: only a look at the whole file's text finds it.
     */
    ".globl uh_fa\n.type uh_fa,@function\n"
    "uh_fa:\n"
    "	mov %rdi, %rax\n"
    "uh_fa_tail:\n"
    "	add $1, %rax\n"
    "	add $0, %rax\n"
    "	ret\n"
    "uh_fa_end:\n"
    ".size uh_fa, .-uh_fa\n"
    ".globl uh_fb\n.type uh_fb,@function\n"
    "uh_fb:\n"
    "	mov %rdi, %rax\n"
    "	.byte 0xe9\n"			/* jmp uh_fa_tail, rel32 */
    "	.long uh_fa_tail - (. + 4)\n"
    "uh_fb_end:\n"
    ".size uh_fb, .-uh_fb\n"
    /* *p + 1, whose load (in the bytes a jump covers) faults on NULL: -S */
    ".globl uh_sig\n.type uh_sig,@function\n"
    "uh_sig:\n"
    "	mov %rdi, %rax\n"
    "	mov (%rax), %rax\n"
    "	add $1, %rax\n"
    "	ret\n"
    "uh_sig_end:\n"
    ".size uh_sig, .-uh_sig\n"
    ".section .rodata\n"
    ".balign 4\n"
    "uh_swtab:\n"
    "	.long 1b - uh_swtab, 2b - uh_swtab, 3b - uh_swtab, 4b - uh_swtab\n"
    "uh_swbadtab:\n"
    "	.long 6b - uh_swbadtab, 5b - uh_swbadtab\n"
    /*
     * The module reads a table's words as its entries until one lands
     * outside the text (it cannot know where the table ends), 4096 of them
     * at most (all until 2026-12-03): zeros behind these, not whatever
     * data the linker puts there, which may happen to point into
     * uh_switch's covered bytes when read so.
     */
    "	.fill 4096, 4, 0\n"
    /* past the 4096: its fifth word is the table's end, its sixth is not read */
    "uh_swendtab:\n"
    "	.long 11b - uh_swendtab, 12b - uh_swendtab, 13b - uh_swendtab, 14b - uh_swendtab\n"
    "	.long 0, 17b - uh_swendtab\n"
    "uh_swsplittab:\n"
    "	.long 15b - uh_swsplittab, 16b - uh_swsplittab, 18b - uh_swsplittab, 0\n"
    ".text\n");

/* uh_sleep's callee: the thread sleeps inside a hooked function. */
__attribute__((used)) long uh_nap(long us)
{
	usleep(us);
	return us;
}

static atomic_bool stop;
static atomic_long calls;
static long rounds;
static long child_rounds = 20000;	/* -c */
static long fifo_rounds;		/* -F */

static void bad(const char *what, long got, long want)
{
	printf("BAD %s: %ld, not %ld\n", what, got, want);
	fflush(stdout);
	_exit(1);
}

/* One round: every function once, each result checked; one call site each. */
static __attribute__((noinline)) void round_once(long k, long i)
{
	long r;

	if ((r = uh_add(k, i)) != k + i)
		bad("uh_add", r, k + i);
	if ((r = uh_call(k)) != 2 * k + 1)
		bad("uh_call", r, 2 * k + 1);
	if ((r = uh_one(k)) != (k ^ ONE_KEY))
		bad("uh_one", r, k ^ ONE_KEY);
	if ((r = uh_small(k)) != k + 7)
		bad("uh_small", r, k + 7);
	if ((r = uh_tail(k)) != (k ^ ONE_KEY))
		bad("uh_tail", r, k ^ ONE_KEY);
	if ((r = uh_endbr(k)) != k + 3)
		bad("uh_endbr", r, k + 3);
	if ((r = uh_loop(3, (k & 3) + 1)) != 3 * ((k & 3) + 1))
		bad("uh_loop", r, 3 * ((k & 3) + 1));
	if ((r = uh_args6(1, 2, 3, 4, 5, 6)) != 21)
		bad("uh_args6", r, 21);
	if ((r = uh_switch(k)) != k + 10 * (k % 4 + 1))
		bad("uh_switch", r, k + 10 * (k % 4 + 1));
	if ((r = uh_swend(k)) != k + 10 * (k % 4 + 1))
		bad("uh_swend", r, k + 10 * (k % 4 + 1));
	if ((r = uh_fa(k)) != k + 1)
		bad("uh_fa", r, k + 1);
	if ((r = uh_fb(k)) != k + 1)
		bad("uh_fb", r, k + 1);
}

static atomic_long naps;

/* -z: a thread that spends its time inside uh_sleep. */
static void *sleeper(void *arg)
{
	long r;

	(void)arg;
	while (!atomic_load(&stop)) {
		if ((r = uh_sleep(50000)) != 50001)
			bad("uh_sleep", r, 50001);
		atomic_fetch_add(&naps, 1);
	}
	return NULL;
}

static atomic_bool go = true;
static bool hold;	/* -g: wait for SIGHUP to start, for SIGTERM to end */
static bool vfk;	/* -v: SIGUSR1 makes a child of vfork too */

/* The cpu_id of the rseq area glibc registered for the calling thread's TLS. */
static int rseq_cpu(void)
{
	return (int)((struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset))->cpu_id;
}

static void *worker(void *arg)
{
	long i = (long)arg, k, n = 0;
	struct sched_param rt = { .sched_priority = 10 }, was;
	int policy = -1;	/* -F: the policy to go back to, while SCHED_FIFO */

	while (!atomic_load(&go))
		usleep(1000);
	if (i == 0 && fifo_rounds) {
		if (pthread_getschedparam(pthread_self(), &policy, &was) ||
		    pthread_setschedparam(pthread_self(), SCHED_FIFO, &rt)) {
			printf("BAD SCHED_FIFO: %s\n", strerror(errno));
			fflush(stdout);
			_exit(1);
		}
	}
	for (k = 0; (!rounds || k < rounds) && !atomic_load(&stop); k++) {
		round_once(k, i);
		n++;
		if (policy >= 0 && n == fifo_rounds) {
			pthread_setschedparam(pthread_self(), policy, &was);
			policy = -1;
		}
	}
	if (policy >= 0)
		pthread_setschedparam(pthread_self(), policy, &was);
	atomic_fetch_add(&calls, n);
	return NULL;
}

/* The record buffers ("[xprobes-records]" in maps): where, how long; 0 without. */
static size_t records_map(unsigned char **at)
{
	return named_map("xprobes-records", NULL, at);
}

#define CHILD_MARK 0x5eed5eed5eed5eedULL

/*
 * A child of fork, before its rounds: does it see its parent's records
 * (any byte not 0 in its mapping of the buffers)? Then it writes a mark
 * into the last word of them, which its parent must not see. Exit status:
 * 1 a wrong result, 2 its parent's bytes seen.
 */
static int child_records(void)
{
	unsigned char *p;
	size_t i, n = records_map(&p);
	int seen = 0;

	for (i = 0; i < n; i++)
		seen |= p[i] != 0;
	if (n)
		*(volatile unsigned long long *)(p + n - 8) = CHILD_MARK;
	return seen ? 2 : 0;
}

static int child_run(void)
{
	long k, n = rounds ?: child_rounds, before = uh_count;

	for (k = 0; k < n; k++)
		round_once(k, 7);
	return uh_count - before == n ? 0 : 1;
}

/* A child of vfork runs the loop (it only calls functions and _exit()s). */
static __attribute__((noinline)) void vfork_child(void)
{
	static volatile int vcpu;
	pid_t p;
	int st;

	p = vfork();
	if (!p) {
		vcpu = rseq_cpu();
		_exit(child_run());
	}
	waitpid(p, &st, 0);
	printf(WIFEXITED(st) && !WEXITSTATUS(st) ? "vchild ok %d" : "vchild bad %d", p);
	printf(" cpu_id %d parent %d\n", vcpu, rseq_cpu());
	fflush(stdout);
}

/*
 * A child of clone(CLONE_VM) without CLONE_VFORK: the same mm and TLS, but
 * its parent returns from clone at once and runs on beside it. The parent's
 * rseq cpu_id must be a CPU's when it does (a vfork's "none" would drop its
 * records until it is next switched out). The child naps 20 ms and exits.
 */
static int clone_vm_nap(void *arg)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	(void)arg;
	syscall(SYS_nanosleep, &ts, NULL);
	syscall(SYS_exit, 0);
	return 0;
}

static __attribute__((noinline)) void clone_vm_child(void)
{
	static char stack[64 * 1024] __attribute__((aligned(16)));
	int st, cpu;
	pid_t p;

	p = clone(clone_vm_nap, stack + sizeof(stack), CLONE_VM | SIGCHLD, NULL);
	cpu = rseq_cpu();
	if (p < 0) {
		printf("BAD clone: %s\n", strerror(errno));
		exit(1);
	}
	waitpid(p, &st, 0);
	printf("cchild %s %d cpu_id %d\n", WIFEXITED(st) && !WEXITSTATUS(st) ? "ok" : "bad", p, cpu);
	fflush(stdout);
}

/*
 * The stamp the records routines look for in a thread's rseq area, read
 * from their code in the trampoline area ("[xprobes-uhooks]": cmpl
 * $stamp, %fs:off; 64 81 3c 25, then off, then the stamp), as a process
 * that copies a stamped TLS would carry it. 0: none found.
 */
static unsigned int stamp_of_routines(void)
{
	static const unsigned char cmp[] = { 0x64, 0x81, 0x3c, 0x25 };
	unsigned int off = (unsigned int)__rseq_offset + 28, stamp = 0;
	unsigned char *p;
	size_t i, len = named_map("xprobes-uhooks", " r-x", &p);

	for (i = 0; i + 12 <= len && !stamp; i++)
		if (!memcmp(p + i, cmp, sizeof(cmp)) && !memcmp(p + i + 4, &off, 4))
			memcpy(&stamp, p + i + 8, 4);
	return stamp;
}

/*
 * A thread of clone(CLONE_THREAD | CLONE_SETTLS) with a TLS of its own,
 * not glibc's, and no rseq area registered: at glibc's rseq offset from
 * its thread pointer, 32 bytes that look like one (cpu_id 0), and in
 * their padding the process's stamp, as if that TLS were a copy of a
 * stamped one. It runs the rounds (calls only: no errno, no stdio,
 * nothing of glibc's TLS) and exits; its parent then checks that the
 * stamp was taken out before the thread ran ("stamp cleared") and that
 * nothing else of that TLS changed.
 */
static int tls_rounds(void *arg)
{
	long k, n = (long)arg;

	for (k = 0; k < n; k++)
		round_once(k, 5);
	return 0;
}

static __attribute__((noinline)) void tls_child(void)
{
	static unsigned char tls[64 * 1024] __attribute__((aligned(64)));
	static unsigned char want[sizeof(tls)];
	static char stack[64 * 1024] __attribute__((aligned(16)));
	static volatile pid_t ctid;
	unsigned char *tp = tls + sizeof(tls) / 2, *area = tp + __rseq_offset;
	unsigned int stamp = stamp_of_routines(), now;
	long before = uh_count, n = 200, changed = -1;
	size_t i;
	pid_t p, t;

	memset(tls, 0xa5, sizeof(tls));
	*(unsigned char **)tp = tp;	/* the x86-64 TLS ABI: the thread pointer at %fs:0 */
	memset(area, 0, 32);		/* cpu_id_start, cpu_id, rseq_cs, flags: all 0 */
	memcpy(want, tls, sizeof(tls));
	memcpy(area + 28, &stamp, 4);
	p = clone(tls_rounds, stack + sizeof(stack),
		  CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
		  CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID,
		  (void *)n, &ctid, tp, &ctid);
	if (p < 0) {
		printf("BAD clone(CLONE_SETTLS): %s\n", strerror(errno));
		exit(1);
	}
	while ((t = ctid) != 0)		/* cleared, and woken, as it exits */
		syscall(SYS_futex, &ctid, FUTEX_WAIT, t, NULL, NULL, 0);
	memcpy(&now, area + 28, 4);
	memcpy(area + 28, want + (area + 28 - tls), 4);
	for (i = 0; i < sizeof(tls) && changed < 0; i++)
		if (tls[i] != want[i])
			changed = (long)(tls + i - tp);
	printf("tchild %s %d rseq_offset %ld stamp %s tls ", uh_count - before == n ? "ok" : "bad", p,
	       (long)__rseq_offset, !stamp ? "none" : now ? "kept" : "cleared");
	if (changed < 0)
		printf("intact\n");
	else
		printf("changed at %+ld\n", changed);
	fflush(stdout);
}

static int read_mem(const char *pid, const char *addr, const char *len)
{
	unsigned char buf[256];
	char path[64];
	long n = strtol(len, NULL, 0), i;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/mem", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0 || n <= 0 || n > (long)sizeof(buf) ||
	    pread(fd, buf, n, (off_t)strtoull(addr, NULL, 0)) != n) {
		fprintf(stderr, "uhtarget: cannot read %s at %s: %s\n", path, addr, strerror(errno));
		return 1;
	}
	for (i = 0; i < n; i++)
		printf("%02x%s", buf[i], i + 1 < n ? " " : "\n");
	return 0;
}

static int write_mem(const char *pid, const char *addr)
{
	unsigned char b = 0xcc;
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/mem", pid);
	fd = open(path, O_RDWR);
	if (fd < 0 || pwrite(fd, &b, 1, (off_t)strtoull(addr, NULL, 0)) != 1) {
		printf("refused: %s\n", strerror(errno));
		return 0;
	}
	printf("written\n");
	return 0;
}

/*
 * -k PID COOKIE:FN...: the thunk cache of PID's records routines (urec.h):
 * each COOKIE's word must be the offset, from the records block's hash, of
 * an entry whose key is a return address right after a call to FN (bytes
 * e8 rel32 there). Every hash entry of that kind in PID's trampoline areas
 * gives one candidate for the hash's start per cookie; the cookies must
 * agree on one, which is printed as "tcache base ADDR" ("tcache none"
 * without). Zeros, or words that are not such offsets, agree on none: each
 * cookie's entry is another.
 */
#define TC_MAX 4096
static int tcache_check(int argc, char **argv)
{
	static unsigned long cand[8][TC_MAX];
	unsigned long lo, hi, rec_hi = 0, area[8][2], fn[8];
	unsigned int ncand[8] = { 0 }, cookie[8], narea = 0, n = argc - 3, i, j, a;
	char path[64], line[512];
	unsigned char *buf;
	FILE *f;
	int fd;

	if (n < 2 || n > 8)
		return 2;
	snprintf(path, sizeof(path), "/proc/%s/maps", argv[2]);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		if (strstr(line, "xprobes-records"))
			rec_hi = hi;
		else if (strstr(line, "xprobes-uhooks") && narea < 8) {
			area[narea][0] = lo;
			area[narea++][1] = hi;
		}
	}
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "/proc/%s/mem", argv[2]);
	fd = open(path, O_RDONLY);
	if (fd < 0 || !rec_hi || !narea) {
		printf("tcache: no records mapping or area in %s\n", argv[2]);
		return 1;
	}
	for (i = 0; i < n; i++) {
		uint32_t w;

		if (sscanf(argv[3 + i], "%u:%lx", &cookie[i], &fn[i]) != 2 || cookie[i] > XP_UREC_COOKIE_MASK)
			return 2;
		if (pread(fd, &w, 4, rec_hi - XP_UREC_TCACHE_SIZE + 4 * cookie[i]) != 4) {
			printf("tcache: cannot read cookie %u's word\n", cookie[i]);
			return 1;
		}
		cookie[i] = w & XP_URT_TCACHE_MASK;	/* from here: the offset, as the routine reads it */
	}
	for (a = 0; a < narea; a++) {
		size_t len = area[a][1] - area[a][0];

		buf = malloc(len);
		if (!buf || pread(fd, buf, len, area[a][0]) != (ssize_t)len) {
			free(buf);
			continue;
		}
		for (j = 0; j + 16 <= len; j += 16) {
			unsigned long key, thunk;
			unsigned char call[5];
			int32_t rel;

			memcpy(&key, buf + j, 8);
			memcpy(&thunk, buf + j + 8, 8);
			thunk &= ~(1UL << 63);		/* XP_URT_TAILBIT */
			if (!key || thunk < area[a][0] || thunk >= area[a][1] ||
			    pread(fd, call, 5, key - 5) != 5 || call[0] != 0xe8)
				continue;
			memcpy(&rel, call + 1, 4);
			for (i = 0; i < n; i++)
				if (key + rel == fn[i] && ncand[i] < TC_MAX)
					cand[i][ncand[i]++] = area[a][0] + j - cookie[i];
		}
		free(buf);
	}
	for (j = 0; j < ncand[0]; j++) {
		for (i = 1; i < n; i++) {
			unsigned int k;

			for (k = 0; k < ncand[i] && cand[i][k] != cand[0][j]; k++)
				;
			if (k == ncand[i])
				break;
		}
		if (i == n) {
			printf("tcache base %#lx\n", cand[0][j]);
			return 0;
		}
	}
	printf("tcache none (candidates:");
	for (i = 0; i < n; i++)
		printf(" %u", ncand[i]);
	printf(")\n");
	return 0;
}

/*
 * -S: a thread stopped in a signal handler whose saved context is inside
 * uh_sig's first bytes. uh_sig(NULL) faults on its second instruction; the
 * SIGSEGV handler says "in-handler" and waits for SIGHUP (to the process:
 * its main thread takes it), then points rax at 41 and returns there. The
 * thread prints what uh_sig returned: 42 whatever was patched meanwhile.
 */
static const long sig_val = 41;
/* -m: a mapping whose pages a test makes the kernel fault in (selftest 46 (f)). */
static int map_file(const char *path)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	void *p;

	if (fd < 0 || fstat(fd, &st)) {
		printf("BAD open %s: %s\n", path, strerror(errno));
		return -1;
	}
	p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		printf("BAD mmap %s: %s\n", path, strerror(errno));
		return -1;
	}
	printf("map %p %ld\n", p, (long)st.st_size);
	return 0;
}

static atomic_bool sig_go;

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	struct timespec ms = { 0, 1000000 };
	char msg[64];
	int n = snprintf(msg, sizeof(msg), "in-handler at %#llx\n",
			 (unsigned long long)uc->uc_mcontext.gregs[REG_RIP]);

	if (write(1, msg, n) < 0)
		_exit(3);
	while (!atomic_load(&sig_go))
		nanosleep(&ms, NULL);
	uc->uc_mcontext.gregs[REG_RAX] = (greg_t)&sig_val;
}

static void *sig_thread(void *arg)
{
	long r = uh_sig(NULL);

	printf(r == sig_val + 1 ? "sig ok %ld\n" : "BAD sig %ld\n", r);
	fflush(stdout);
	return NULL;
}

static int sig_run(void)
{
	struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_SIGINFO };
	sigset_t set;
	pthread_t t;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	printf("fn uh_sig %p %ld\n", (void *)uh_sig, (long)(uh_sig_end - (const char *)uh_sig));
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	pthread_create(&t, NULL, sig_thread, NULL);
	while (sigwait(&set, &sig) || sig != SIGHUP)
		;
	atomic_store(&sig_go, true);
	pthread_join(t, NULL);
	while (sigwait(&set, &sig) || sig != SIGTERM)
		;
	return 0;
}

/* Join the threads, check uh_add's own count against the calls made, report. */
static int finish(pthread_t *tid, long threads)
{
	long i;

	for (i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	if (uh_count != atomic_load(&calls)) {
		printf("BAD uh_count %ld, calls %ld\n", uh_count, atomic_load(&calls));
		return 1;
	}
	printf("ok calls=%ld ret=%#lx\n", atomic_load(&calls), uh_last_ret);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	long threads = 4, i;
	pthread_t tid[64], ztid;
	bool zzz = false, split = false;
	sigset_t set;
	const char *map = NULL;
	int c, sig;

	if (argc == 5 && !strcmp(argv[1], "-r"))
		return read_mem(argv[2], argv[3], argv[4]);
	if (argc == 4 && !strcmp(argv[1], "-w"))
		return write_mem(argv[2], argv[3]);
	if (argc >= 5 && !strcmp(argv[1], "-k"))
		return tcache_check(argc, argv);
	if (argc == 2 && !strcmp(argv[1], "-S"))
		return sig_run();
	if (argc == 3 && !strcmp(argv[1], "-s")) {
		long r = syscall(atol(argv[2]));

		printf("%s\n", r == -1 && errno == ENOSYS ? "ENOSYS" : "not ENOSYS");
		return 0;
	}
	while ((c = getopt(argc, argv, "t:n:c:gzvm:LF:")) != -1) {
		switch (c) {
		case 't': threads = atol(optarg); break;
		case 'n': rounds = atol(optarg); break;
		case 'c': child_rounds = atol(optarg); break;
		case 'g': go = false; hold = true; break;
		case 'z': zzz = true; break;
		case 'v': vfk = true; break;
		case 'm': map = optarg; break;
		case 'L': split = true; break;
		case 'F': fifo_rounds = atol(optarg); break;
		default: return 2;
		}
	}
	if (threads < 1 || threads > 64)
		return 2;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	for (i = 0; i < threads; i++)
		pthread_create(&tid[i], NULL, worker, (void *)i);
	if (zzz)
		pthread_create(&ztid, NULL, sleeper, NULL);
#define FN(f) printf("fn " #f " %p %ld\n", (void *)f, (long)(f##_end - (const char *)f))
	FN(uh_add);
	FN(uh_call);
	FN(uh_one);
	FN(uh_small);
	FN(uh_tail);
	FN(uh_endbr);
	FN(uh_loop);
	FN(uh_args6);
	FN(uh_sleep);
	FN(uh_switch);
	FN(uh_swbad);
	FN(uh_swend);
	FN(uh_swsplit);
	FN(uh_fa);
	FN(uh_fb);
	if (map && map_file(map))
		return 1;
	if (split && mlock(uh_split_page, 4096))	/* uh_swsplit's cases: a mapping of their own */
		printf("mlock: %s\n", strerror(errno));
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (!atomic_load(&go))
		if (!sigwait(&set, &sig) && sig == SIGHUP)
			atomic_store(&go, true);
	/* -g -n ROUNDS: report when the rounds are done, then wait for signals. */
	if (rounds && !hold)
		return finish(tid, threads);
	if (rounds && finish(tid, threads))
		return 1;
	for (;;) {
		if (sigwait(&set, &sig))
			continue;
		if (sig == SIGTERM)
			break;
		if (sig == SIGUSR2 && !rounds) {
			char self[64];

			snprintf(self, sizeof(self), "/proc/%d/exe", (int)getpid());
			atomic_store(&stop, true);
			for (i = 0; i < threads; i++)
				pthread_join(tid[i], NULL);
			sigprocmask(SIG_UNBLOCK, &set, NULL);
			execv(self, argv);
			printf("BAD exec: %s\n", strerror(errno));
			return 1;
		}
		if (sig == SIGUSR1) {
			pid_t p = fork();
			int st;

			unsigned char *rec;
			size_t nrec;

			if (!p) {
				int seen = child_records();

				_exit(child_run() | seen);
			}
			waitpid(p, &st, 0);
			nrec = records_map(&rec);
			printf(WIFEXITED(st) && !(WEXITSTATUS(st) & 1) ? "child ok %d" : "child bad %d", p);
			printf(" parent_records %s child_mark %s\n",
			       !nrec ? "-" : WIFEXITED(st) && (WEXITSTATUS(st) & 2) ? "seen" : "unseen",
			       !nrec ? "-" : *(volatile unsigned long long *)(rec + nrec - 8) == CHILD_MARK ?
			       "seen" : "unseen");
			fflush(stdout);
			if (vfk) {
				vfork_child();
				clone_vm_child();
				tls_child();
			}
		}
	}
	if (rounds)
		return 0;
	atomic_store(&stop, true);
	if (zzz) {
		pthread_join(ztid, NULL);
		printf("naps %ld\n", atomic_load(&naps));
	}
	return finish(tid, threads);
}
