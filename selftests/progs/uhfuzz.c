// SPDX-License-Identifier: GPL-2.0
/*
 * uhfuzz: a hostile process for user hooks (issue 36). While the test adds
 * and deletes user hooks with records and events on its functions, it
 * attacks everything the module put into it, seeded and replayable:
 *
 *   uhfuzz -s SEED -n ROUNDS [-t THREADS] [-w [-f ENTRIES]]
 *
 * prints "fn NAME ADDR SIZE" per function and "ready PID", waits for SIGHUP,
 * then runs ROUNDS rounds and prints "done ROUNDS" (or "BAD ..." and exits
 * 1). THREADS threads (default 2) call the functions all along and check
 * every result: whatever the process does to the module's areas may cost
 * it its own records, never a wrong result. The main thread, each round:
 *  - in itself (never fatal): writes random bytes over its records buffers,
 *    MADV_DONTNEEDs them, tries mprotect(PROT_WRITE) on the trampolines;
 *  - in a child of fork (traced too, with the parent's jumps and areas),
 *    which then runs a few of: system calls 420-422 with random registers
 *    and stack pointers, mprotect/mremap/munmap/madvise of the areas,
 *    vfork + exec, calls from two threads
 *    while the child exits under them; the child is killed if it runs more
 *    than a second.
 * With -w (wild) the process attacks its own hooked address space, and its
 * results are not checked (it may well corrupt itself): threads jump to the
 * trampolines' entries and to their stubs' return from system call 420
 * (ENTRIES, read at SIGHUP: one hex address per line, uhook list's) with
 * random registers and stack pointers (a fault ends only that thread: the
 * handler runs on an alternate stack and exits the thread), system calls
 * 420-422 come from there and from anywhere, and the main thread mprotects, mremaps, munmaps
 * and madvises the module's areas under its callers, which are started
 * again as they die.
 * Jumps land on instruction boundaries only: QEMU's TCG (7.2) turns a far
 * return to a 32-bit code segment in user mode (bytes "ca imm16", which a
 * jump into a call's displacement can run) into a page fault without the
 * user bit, and the guest kernel oopses for it, module or not.
 * The kernel must take all of it: the test checks for splats, leaks, the
 * module's state and that it unloads.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

long uf_add(long a, long b), uf_call(long x), uf_one(long x), uf_endbr(long x);

asm(".text\n"
    /* a jump over three instructions */
    ".globl uf_add\n.type uf_add,@function\n"
    "uf_add:\n"
    "	push %rbx\n"
    "	mov %rdi, %rbx\n"
    "	lea (%rbx,%rsi), %rax\n"
    "	pop %rbx\n"
    "	ret\n"
    ".size uf_add, .-uf_add\n"
    /* a call covered: returns through the caller's frame */
    ".globl uf_call\n.type uf_call,@function\n"
    "uf_call:\n"
    "	sub $8, %rsp\n"
    "	call uf_leaf\n"
    "	add $8, %rsp\n"
    "	add $1, %rax\n"
    "	ret\n"
    ".size uf_call, .-uf_call\n"
    ".type uf_leaf,@function\n"
    "uf_leaf:\n"
    "	lea (%rdi,%rdi), %rax\n"
    "	ret\n"
    ".size uf_leaf, .-uf_leaf\n"
    /* one instruction of ten bytes */
    ".globl uf_one\n.type uf_one,@function\n"
    "uf_one:\n"
    "	movabs $0x5a5a5a5a5a5a5a5a, %rax\n"
    "	xor %rdi, %rax\n"
    "	ret\n"
    ".size uf_one, .-uf_one\n"
    ".globl uf_endbr\n.type uf_endbr,@function\n"
    "uf_endbr:\n"
    "	endbr64\n"
    "	push %rbp\n"
    "	mov %rsp, %rbp\n"
    "	lea 3(%rdi), %rax\n"
    "	pop %rbp\n"
    "	ret\n"
    ".size uf_endbr, .-uf_endbr\n");

#define ONE_KEY 0x5a5a5a5a5a5a5a5aL

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

static atomic_bool stop;

static bool wild;

static void bad(const char *what, long got, long want)
{
	if (wild)
		return;
	printf("BAD %s: %ld, not %ld (pid %d)\n", what, got, want, (int)getpid());
	fflush(stdout);
	_exit(1);
}

static void call_all(long k)
{
	long r;

	if ((r = uf_add(k, 5)) != k + 5)
		bad("uf_add", r, k + 5);
	if ((r = uf_call(k)) != 2 * k + 1)
		bad("uf_call", r, 2 * k + 1);
	if ((r = uf_one(k)) != (k ^ ONE_KEY))
		bad("uf_one", r, k ^ ONE_KEY);
	if ((r = uf_endbr(k)) != k + 3)
		bad("uf_endbr", r, k + 3);
}

static void *caller(void *arg)
{
	long k = (long)arg;

	while (!atomic_load(&stop))
		call_all(k++);
	return NULL;
}

struct area {
	unsigned long lo, hi;
};

/* The module's mappings in this process: trampolines, records. */
static int areas(struct area *tramp, struct area *rec, int max)
{
	char line[512];
	int nt = 0, nr = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		if (strstr(line, "xprobes-uhooks") && nt < max)
			tramp[nt++] = (struct area){ lo, hi };
		else if (strstr(line, "xprobes-records") && nr < max)
			rec[nr++] = (struct area){ lo, hi };
	}
	if (f)
		fclose(f);
	return nt | nr << 8;
}

static void scribble(struct area *a)
{
	size_t len = a->hi - a->lo, n = rnd() % 64 + 1, i;

	for (i = 0; i < n; i++) {
		size_t off = rnd() % len, cnt = rnd() % 64 + 1;

		if (off + cnt > len)
			cnt = len - off;
		if (rnd() & 1)
			memset((void *)(a->lo + off), (int)rnd(), cnt);
		else
			*(volatile uint64_t *)(a->lo + (off & ~7UL)) = rnd();
	}
}

/* A system call 420-422 with random registers, sometimes a random stack. */
static void wild_syscall(void)
{
	long nr = 420 + rnd() % 3;
	unsigned long a1 = rnd(), a2 = rnd(), a3 = rnd(), sp = rnd();
	register unsigned long r10 asm("r10") = rnd();
	register unsigned long r8 asm("r8") = rnd();
	register unsigned long r9 asm("r9") = rnd();

	if (rnd() & 1) {	/* the stack as it is: only the registers are wild */
		asm volatile("syscall" : "+a"(nr) : "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8),
			     "r"(r9) : "rcx", "r11", "memory");
		return;
	}
	/* a wild stack pointer, put back after: the kernel may read at it */
	if (rnd() & 1)
		sp = (unsigned long)&a1 - (rnd() % 4096);
	asm volatile("mov %%rsp, %%rbx\n\t"
		     "mov %[sp], %%rsp\n\t"
		     "syscall\n\t"
		     "mov %%rbx, %%rsp"
		     : "+a"(nr) : [sp] "r"(sp), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
		     : "rbx", "rcx", "r11", "memory");
}

static void wild_vm(struct area *t, int nt, struct area *r, int nr)
{
	struct area *a = (rnd() & 1) && nt ? &t[rnd() % nt] : nr ? &r[rnd() % nr] : NULL;
	size_t len;

	if (!a)
		return;
	len = a->hi - a->lo;
	switch (rnd() % 5) {
	case 0:
		mprotect((void *)a->lo, len, (int)(rnd() % 8));
		break;
	case 1:
		mremap((void *)a->lo, len, len, MREMAP_MAYMOVE);
		break;
	case 2:
		munmap((void *)(a->lo + (rnd() % len & ~4095UL)), 4096);
		break;
	case 3:
		madvise((void *)a->lo, len, (rnd() & 1) ? MADV_DONTNEED : MADV_REMOVE);
		break;
	default:
		madvise((void *)a->lo, len, (rnd() & 1) ? MADV_DONTFORK : MADV_WIPEONFORK);
		break;
	}
}

static __attribute__((noinline)) void vfork_exec(void)
{
	pid_t p = vfork();

	if (p == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (p > 0)
		waitpid(p, NULL, 0);
}

/* A child: a few hostile acts while two threads call the functions. */
static void child(void)
{
	struct area t[8], r[8];
	pthread_t th[2];
	int n, nt, nr, i, acts = (int)(rnd() % 6) + 1;

	atomic_store(&stop, false);
	for (i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, caller, (void *)(long)(i * 1000));
	n = areas(t, r, 8);
	nt = n & 0xff;
	nr = n >> 8;
	for (i = 0; i < acts; i++) {
		switch (rnd() % 6) {
		case 0:
		case 1:
			wild_syscall();
			break;
		case 2:
		case 3:
			wild_vm(t, nt, r, nr);
			break;
		case 4:
			vfork_exec();
			break;
		default:
			if (nr)
				scribble(&r[rnd() % nr]);
			break;
		}
	}
	/* exit under the callers, mid-call as likely as not */
	_exit(0);
}

/* -w: a fault ends the thread that took it, not the process. */
static void on_fault(int sig)
{
	syscall(SYS_exit, 0);
}

static unsigned long entries[256];
static int nentries;

static void read_entries(const char *path)
{
	FILE *f = fopen(path, "r");
	unsigned long a;

	while (f && nentries < 254 && fscanf(f, "%lx", &a) == 1) {
		entries[nentries++] = a;
		entries[nentries++] = a + 11;	/* an event stub's ip after its syscall */
	}
	if (f)
		fclose(f);
}

static void *wild_thread(void *arg)
{
	static __thread char altstack[65536];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	uint64_t seed = (uint64_t)(uintptr_t)arg;
	struct area t[8], r[8];
	int nr, i;

	sigaltstack(&ss, NULL);
	rng_state = seed | 1;
	nr = areas(t, r, 8) >> 8;
	for (i = 0; i < 8; i++) {
		switch (rnd() % 4) {
		case 0:
			wild_syscall();
			break;
		case 1:
			if (nr)
				scribble(&r[rnd() % nr]);
			break;
		case 2:
			call_all((long)rnd());	/* results unchecked: bad() is off */
			break;
		default:
			if (nentries) {	/* no way back: the thread ends there */
				unsigned long target = entries[rnd() % nentries];

				asm volatile("mov %0, %%rsp\n\t"
					     "jmp *%1"
					     :: "r"((rnd() & 1) ? rnd() :
						    (unsigned long)altstack + 4096 + rnd() % 32768),
						"r"(target), "a"(rnd()), "b"(rnd()), "c"(rnd()),
						"d"(rnd()), "S"(rnd()), "D"(rnd()) : "memory");
			}
			break;
		}
	}
	return NULL;
}

static int wild_run(long rounds)
{
	struct sigaction sa = { .sa_handler = on_fault, .sa_flags = SA_ONSTACK | SA_NODEFER };
	int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE, SIGSYS };
	long done;
	unsigned int i;

	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	for (done = 0; done < rounds; done++) {
		struct area t[8], r[8];
		int n = areas(t, r, 8), nt = n & 0xff, nr = n >> 8;
		pthread_t th[4];

		for (i = 0; i < 4; i++)
			pthread_create(&th[i], NULL, wild_thread, (void *)(uintptr_t)rnd());
		if (rnd() % 8 == 0)
			wild_vm(t, nt, r, nr);	/* under its own threads */
		if (rnd() % 16 == 0)
			vfork_exec();
		for (i = 0; i < 4; i++) {
			struct timespec until;

			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_sec += 2;
			if (pthread_timedjoin_np(th[i], NULL, &until))
				pthread_detach(th[i]);	/* spinning somewhere: left to exit */
		}
	}
	printf("done %ld\n", done);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	const char *entries_path = NULL;
	long rounds = 100, threads = 2, i, done = 0;
	uint64_t seed = 1;
	pthread_t th[16];
	sigset_t set;
	int c, sig;

	while ((c = getopt(argc, argv, "s:n:t:wf:")) != -1) {
		switch (c) {
		case 'w': wild = true; break;
		case 'f': entries_path = optarg; break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'n': rounds = atol(optarg); break;
		case 't': threads = atol(optarg); break;
		default: return 2;
		}
	}
	if (threads < 1 || threads > 16)
		return 2;
	rng_state = seed * 0x9e3779b97f4a7c15ULL | 1;
	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
#define FN(f) printf("fn " #f " %p\n", (void *)f)
	FN(uf_add);
	FN(uf_call);
	FN(uf_one);
	FN(uf_endbr);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (sigwait(&set, &sig) || sig != SIGHUP)
		;
	if (wild && entries_path)
		read_entries(entries_path);
	if (wild)
		return wild_run(rounds);
	for (i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, caller, (void *)(i * 100000));
	for (; done < rounds; done++) {
		struct area t[8], r[8];
		int n = areas(t, r, 8), nt = n & 0xff, nr = n >> 8, st;
		uint64_t child_seed = rnd();
		pid_t p;

		switch (rnd() % 4) {
		case 0:
			if (nr)
				scribble(&r[rnd() % nr]);
			break;
		case 1:
			if (nr)
				madvise((void *)r[0].lo, r[0].hi - r[0].lo, MADV_DONTNEED);
			break;
		case 2:
			if (nt)
				mprotect((void *)t[0].lo, t[0].hi - t[0].lo, PROT_READ | PROT_WRITE);
			break;
		default:
			break;
		}
		fflush(stdout);
		p = fork();
		if (p == 0) {
			rng_state = child_seed | 1;
			child();
		}
		if (p < 0)
			continue;
		for (n = 0; n < 100 && waitpid(p, &st, WNOHANG) == 0; n++)
			usleep(10000);
		if (n == 100) {
			kill(p, SIGKILL);
			waitpid(p, &st, 0);
		}
	}
	atomic_store(&stop, true);
	for (i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	printf("done %ld\n", done);
	fflush(stdout);
	return 0;
}
