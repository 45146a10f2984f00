// SPDX-License-Identifier: GPL-2.0
/*
 * urec-lookup: the records block's entry routine (module/uhooks/urec_tmpl.S),
 * its own bytes as the module copies them, run on the host against hash
 * entries set up by hand: the return thunk it stores in the slot and the
 * flags of the record it appends, for a thunk found through the hook's
 * cache or the hash, a tail call's, a return address the block has none
 * for (XP_URT_NEGBIT), a miss with room (the system call: ENOSYS here,
 * no module; a tail call's, which the kernel marks as such, NORET alone),
 * and a run of the hash full (no system call). The routine
 * runs single-stepped (EFLAGS.TF) up to its append, before its rseq
 * section: each step tells whether a system call ran, and lets the test
 * put the key into the hash between two instructions, as another
 * thread's ask would: between an entry's key read for the compare and
 * read again for the empty test (the race the second look over a full
 * run is for). The block is patched as urec.c's build_code() does for
 * the entry routine: the thread's rseq area (glibc's) stamped by hand.
 *
 * urec-lookup [-q]: every case, "ok" or what went wrong (exit 1). Built
 * against a copy of the template with a rule left out, it must fail
 * (selftests/check.sh, host-urec-lookup).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/rseq.h>
#include <ucontext.h>
#include <unistd.h>
#include "urec.h"
#include "urec-host.h"

/*
 * unsigned long tcall(entry, cookie, ret, tf): the slot as the routine
 * left it; every register but rax (the stub's to keep) and rsp loaded
 * before the call and stored after it (urec-host.h), which the routine must
 * give back as it found them.
 */
uint64_t tc_target;
unsigned long tcall(const void *entry, unsigned int cookie, unsigned long ret, int tf);
__asm__(
	".text\n"
	".globl tcall\n"
	"tcall:\n"
	UREG_PUSH_KEPT
	"	pushq	%rdx\n"		/* the slot: the hooked function's return address */
	"	movq	%rdi, tc_target(%rip)\n"
	"	movl	%esi, %eax\n"	/* the stub's cookie */
	"	testl	%ecx, %ecx\n"
	"	jz	1f\n"
	"	pushfq\n"
	"	orq	$0x100, (%rsp)\n"
	"	popfq\n"		/* TF: a trap after each instruction past the call */
	"1:\n"
	UREG_EACH(UREG_LOAD)
	"	call	*tc_target(%rip)\n"
	UREG_EACH(UREG_STORE)
	"	popq	%rax\n"
	UREG_POP_KEPT
	"	ret\n");


#define GOLDEN		0x61C8864680B583EBull
#define B61		(1ull << 61)
#define B62		(1ull << 62)
#define B63		(1ull << 63)

static unsigned char *blk, *bufs;
static uint32_t *tcache;
static long nbufs;
static uint64_t *hash;

/* what the single steps saw */
static volatile int syscalls, race_k = -1, raced, tail_ask;
static volatile uint64_t race_key, race_val;
static unsigned char *stop_at, *last_ip;

static unsigned int pos_of(uint64_t key)
{
	return (unsigned int)((key * GOLDEN) >> (64 - XP_URT_HASH_BITS));
}

static void on_trap(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	unsigned char *ip = (unsigned char *)uc->uc_mcontext.gregs[REG_RIP];
	/* cmpq $0x0, (%r11,%rcx,1): an entry's empty test */
	static const unsigned char empty_test[] = { 0x49, 0x83, 0x3c, 0x0b, 0x00 };

	(void)sig;
	(void)si;
	/* past the system call: as the kernel's slow path says a tail call's */
	if (tail_ask && last_ip && last_ip[0] == 0x0f && last_ip[1] == 0x05)
		uc->uc_mcontext.gregs[REG_RSI] |= B62;
	last_ip = ip;
	if (ip == stop_at) {	/* its append: the rseq section runs untrapped */
		uc->uc_mcontext.gregs[REG_EFL] &= ~0x100;
		return;
	}
	if (ip >= blk && ip < blk + XP_URT_OFF && ip[0] == 0x0f && ip[1] == 0x05)
		syscalls++;
	if (race_k >= 0 && !raced && !memcmp(ip, empty_test, sizeof(empty_test)) &&
	    (uint64_t)uc->uc_mcontext.gregs[REG_RCX] ==
	    (uint64_t)(pos_of(race_key) + race_k) * 16) {
		uint64_t *e = hash + 2 * (pos_of(race_key) + race_k);

		e[1] = race_val;	/* as thunk_get(): the thunk, then the key */
		__atomic_store_n(&e[0], race_key, __ATOMIC_RELEASE);
		raced = 1;
	}
}

static void setup(void)
{
	long off = __rseq_offset;

	nbufs = sysconf(_SC_NPROCESSORS_CONF);
	blk = mmap(NULL, XP_UREC_BLOCK, PROT_READ | PROT_WRITE | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	bufs = mmap(NULL, (size_t)nbufs << XP_UREC_BUF_SHIFT, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	tcache = mmap(NULL, XP_UREC_TCACHE_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (blk == MAP_FAILED || bufs == MAP_FAILED || tcache == MAP_FAILED) {
		perror("urec-lookup: mmap");
		exit(1);
	}
	hash = (uint64_t *)(blk + XP_URT_HASH);
	urec_host_patch(blk, off, bufs, nbufs, NULL, tcache);	/* no return routine runs */
	stop_at = blk + OFF(xp_urec_stored);
	/* the stamp the kernel would write, in the padding of glibc's rseq area */
	*(uint32_t *)((char *)__builtin_thread_pointer() + off + XP_RSEQ_STAMP) = STAMP;
}

struct result {
	uint64_t slot, flags;
	int records, syscalls;
	const char *lost;	/* a register not given back */
};

/* One call of the entry routine, hooked with @cookie, returning to @ret. */
static struct result call(unsigned int cookie, uint64_t ret, int tf)
{
	struct result r = { 0 };
	long c;

	for (c = 0; c < nbufs; c++)
		*(uint64_t *)(bufs + (c << XP_UREC_BUF_SHIFT)) = 0;
	syscalls = raced = 0;
	last_ip = NULL;
	for (c = 0; c < UREG_N; c++)
		ureg_in[c] = 0x5ca1ab1e00000000ull ^ ((uint64_t)random() << 16) ^ c;
	r.slot = tcall(blk + OFF(xp_urec_entry), cookie, ret, tf);
	r.syscalls = syscalls;
	r.lost = ureg_lost();
	for (c = 0; c < nbufs; c++) {
		unsigned char *b = bufs + (c << XP_UREC_BUF_SHIFT);
		unsigned int n = urec_host_count(*(uint64_t *)b);

		if (!n)
			continue;
		r.records += n;
		r.flags = ((uint64_t *)(b + XP_UREC_HDR))[2 * (n - 1) + 1] & (B61 | B62 | B63);
	}
	return r;
}

static int bad;

static void expect(const char *what, struct result r, uint64_t slot, uint64_t flags,
		   int syscalls)
{
	if (r.lost) {
		printf("urec-lookup: %s: %s not given back\n", what, r.lost);
		bad = 1;
		return;
	}
	if (r.records == 1 && r.slot == slot && r.flags == flags && r.syscalls == syscalls)
		return;
	printf("urec-lookup: %s: slot %#lx, %d record(s), flags %#lx, %d system call(s);"
	       " expected slot %#lx, flags %#lx, %d system call(s)\n", what,
	       (unsigned long)r.slot, r.records, (unsigned long)r.flags, r.syscalls,
	       (unsigned long)slot, (unsigned long)flags, syscalls);
	bad = 1;
}

/* Entries [pos, pos + 8) of @key's run: other keys, but where @holes has a bit. */
static void fill_run(uint64_t key, unsigned int holes)
{
	unsigned int p = pos_of(key), i;

	memset(hash, 0, XP_URT_HASH_SIZE);
	for (i = 0; i < XP_URT_PROBES; i++) {
		if (holes & (1u << i))
			continue;
		hash[2 * (p + i)] = 0x400000 + 0x1000 * i + 5;	/* not @key */
		hash[2 * (p + i) + 1] = (uint64_t)blk + XP_URT_OFF + XP_URT_SIZE * (100 + i);
	}
}

static void put_entry(uint64_t key, unsigned int i, uint64_t val)
{
	hash[2 * (pos_of(key) + i) + 1] = val;
	hash[2 * (pos_of(key) + i)] = key;
}

int main(int argc, char **argv)
{
	const uint64_t ret = 0x401234, thunk = 0x7f0000001000ull;	/* any address */
	const unsigned int cookie = 7;
	struct sigaction sa = { 0 };
	struct result r;
	char what[80];
	int k;

	if (__rseq_size < 20) {
		printf("urec-lookup: glibc registered no rseq area: nothing to run the routine on\n");
		return 1;
	}
	setup();
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGTRAP, &sa, NULL);

	/* a thunk in the hash's third probe; then the hook's cache has it */
	fill_run(ret, 1u << 2);
	put_entry(ret, 2, thunk);
	memset(tcache, 0, XP_UREC_TCACHE_SIZE);
	r = call(cookie, ret, 1);
	expect("a thunk in the hash", r, thunk, 0, 0);
	if (tcache[cookie] != (pos_of(ret) + 2) * 16) {
		printf("urec-lookup: the hook's cache has %#x, not its entry's offset\n",
		       tcache[cookie]);
		bad = 1;
	}
	expect("a thunk through the hook's cache", call(cookie, ret, 1), thunk, 0, 0);
	/* a tail call's: the thunk, the record TAIL */
	fill_run(ret, 1u << 0);
	put_entry(ret, 0, thunk | B63);
	expect("a tail call's thunk", call(cookie, ret, 1), thunk, B62, 0);
	/* none for it: the return address stays, the record NORET, no system call */
	fill_run(ret, 1u << 5);
	put_entry(ret, 5, ret | B63 | B62);
	expect("an address with no thunk", call(cookie, ret, 1), ret, B61, 0);
	/* a miss with room: the kernel asked (none here: ENOSYS), NORET */
	fill_run(ret, 0xf0);
	expect("a miss, the run with room", call(cookie, ret, 1), ret, B61, 1);
	/* a tail call's miss that the kernel gave no thunk: NORET alone */
	tail_ask = 1;
	expect("a tail call's miss, no thunk", call(cookie, ret, 1), ret, B61, 1);
	tail_ask = 0;
	/* the run full: given up without asking */
	fill_run(ret, 0);
	expect("a miss, the run full", call(cookie, ret, 1), ret, B61, 0);
	/*
	 * The run full but for entry k, where another thread's ask puts this
	 * address between the routine's compare of that entry and its empty
	 * test: the thunk all the same, without asking.
	 */
	for (k = 0; k < XP_URT_PROBES; k++) {
		fill_run(ret, 1u << k);
		race_key = ret;
		race_val = thunk;
		race_k = k;
		r = call(cookie, ret, 1);
		race_k = -1;
		snprintf(what, sizeof(what), "entry %d filled between its two reads%s", k,
			 raced ? "" : " (never reached)");
		expect(what, r, raced ? thunk : 0, 0, 0);
	}
	if (!bad && !(argc > 1 && !strcmp(argv[1], "-q")))
		printf("urec-lookup: the entry routine's thunk lookup: 14 cases ok\n");
	return bad;
}
