// SPDX-License-Identifier: GPL-2.0
/*
 * nestloop: N rounds of three nested calls, then exit (selftest 40's sums
 * case). Each round is nl_outer() -> nl_mid() -> nl_leaf(), all short, so
 * that under trace most of nl_mid's and nl_leaf's calls return while
 * their caller's entry is still in the CPU's records buffer: the process
 * sums them itself (XPROBES_F_SUMS), and nl_outer's own time is what is
 * left once theirs is taken off. Prints "ok rounds=N sum=S" to stderr at
 * the end (stdout is the tracer's, under trace -- COMMAND).
 *
 *   nestloop N [GO]     with GO, the rounds start once the file GO exists
 *
 * NESTLOOP_SLEEP_US=U: nl_outer() sleeps U us before it calls nl_mid(), so
 * that its entry is handed over at the switch and nl_mid()'s calls have
 * no caller's entry in the buffer when they return (the bottom's sums).
 *
 * NESTLOOP_CARRY_US=U: nl_outer() also sleeps U us after nl_mid() has
 * returned: at that switch its thread's buffer holds no record, only
 * nl_mid()'s call summed at the bottom, which the module keeps for the
 * thread across the switch instead of handing it over (module/uhooks/
 * urec.c, "Carries"); nl_outer()'s return, appended after it, takes it to
 * the consumer at the next round's switch.
 *
 * NESTLOOP_JUMP_US=U: nl_leaf() sleeps 100 us (its entry, and nl_mid()'s,
 * handed over at the switch) and longjmp()s back into nl_outer(), leaving
 * both frames; nl_outer() then calls nl_leaf() again, at the sp nl_mid()
 * had (summed at the bottom: its hand-over drops the two frames left), and
 * sleeps U us, a wait that is nl_outer()'s own: trace -W must give it to
 * nl_outer(), not to the frames left behind (module/uhooks/urec.c,
 * "Carries": no carry while the consumer may hold frames at that sp).
 *
 * NESTLOOP_PLANT=1: before the rounds, every histogram bucket of the sums
 * the process keeps itself (module/uhooks/urec.h: after the records buffers in
 * "[xprobes-records]", per cookie) is set to 2^32 - 1, as if that many
 * calls had been summed there: the next call in a bucket carries past 32
 * bits (selftest 40; 2^32 real calls would take hours in the VM). Waits
 * up to 10 s for the mapping; exits 3 without it.
 *
 * NESTLOOP_FORK=K: every K-th round forks inside nl_leaf(), with the three
 * frames open (under trace, each return address replaced by its thunk).
 * The child returns through all three, hands its round's value to its
 * parent through a pipe and _exits; the parent compares it with its own
 * and exits 4 on a difference or a child that did not end well. The
 * summary line then says forks=F, and thunked=T: at how many of the forks
 * nl_leaf()'s return address lay in a mapping of the module's (its thunk),
 * not in nl_mid().
 *
 * NESTLOOP_RSEQ=1: after each round, the thread's rseq_cs (its rseq area,
 * glibc's, at __rseq_offset from the thread pointer) is read, and the
 * thread's context switches (getrusage()) before the round and after that
 * read compared. The summary line then says rseq_left=L switched=S: L
 * rounds found rseq_cs set with no switch in the round (under trace, a
 * round whose three calls the process summed itself ends in a fold that
 * leaves its section, and the kernel clears rseq_cs only at a return to
 * user mode after a switch), S rounds had a switch.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/rseq.h>
#include <sys/wait.h>
#include "../../module/uhooks/urec.h"
#include "maps.h"

static volatile unsigned long sink;
static unsigned int sleep_us, carry_us, jump_us;
static jmp_buf jump_back;
static volatile int jump_armed;
static unsigned long fork_every;
static pid_t kid = -1;		/* 0 in a child forked by fork_here() */
static int kid_pipe[2];
static unsigned long thunked;
static int rseq_check;
static unsigned long rseq_left, rseq_switched;

/* The calling thread's voluntary and involuntary context switches so far. */
static long switches(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return -1;
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

/* The rseq_cs word of the calling thread's rseq area (0: none registered). */
static uint64_t rseq_cs_now(void)
{
	if (__rseq_size < offsetof(struct rseq, rseq_cs) + sizeof(uint64_t))
		return 0;	/* (glibc's __rseq_size is 20: the original ABI's fields) */
	return *(volatile uint64_t *)((char *)__builtin_thread_pointer() + __rseq_offset +
				      offsetof(struct rseq, rseq_cs));
}

/* NESTLOOP_FORK: fork with nl_outer(), nl_mid() and nl_leaf() open. */
static void fork_here(void *leaf_ret)
{
	unsigned char *at;

	/* in one of the module's mappings ("[xprobes-...]"): a thunk */
	thunked += named_map_at("[xprobes-", NULL, (unsigned long)leaf_ret, &at) != 0;
	if (pipe(kid_pipe)) {
		perror("nestloop: pipe");
		exit(1);
	}
	kid = fork();
	if (kid < 0) {
		perror("nestloop: fork");
		exit(1);
	}
}

__attribute__((noinline)) unsigned long nl_leaf(unsigned long i)
{
	unsigned long k, s = i;

	if (fork_every && i % fork_every == fork_every - 1)
		fork_here(__builtin_return_address(0));
	if (jump_armed) {
		jump_armed = 0;
		usleep(100);
		longjmp(jump_back, 1);
	}
	for (k = 0; k < 64; k++)
		s = s * 31 + k;
	return s;
}

__attribute__((noinline)) unsigned long nl_mid(unsigned long i)
{
	return nl_leaf(i) ^ (i << 3);
}

__attribute__((noinline)) unsigned long nl_outer(unsigned long i)
{
	unsigned long k, s = 0;

	for (k = 0; k < 32; k++)	/* its own time: more than its callees' */
		s += k * i;
	if (sleep_us)
		usleep(sleep_us);
	if (jump_us) {
		jump_armed = 1;
		if (!setjmp(jump_back))
			s += nl_mid(i);		/* does not return */
		s += nl_leaf(i);
		usleep(jump_us);
		return s;
	}
	s += nl_mid(i);
	if (carry_us)
		usleep(carry_us);
	return s;
}

/* The process's sums: the end of its "[xprobes-records]" mapping, but for the thunk cache. */
static unsigned char *sums_map(void)
{
	unsigned char *at;
	size_t len;
	int tries;

	for (tries = 0; tries < 1000; tries++, usleep(10000)) {
		len = named_map("xprobes-records", NULL, &at);
		if (len)
			return at + len - XP_UREC_TCACHE_SIZE -
			       (unsigned long)XP_USUM_FUNCS * XP_USUM_SIZE;
	}
	return NULL;
}

static int plant(void)
{
	unsigned char *s = sums_map();
	unsigned long c, b;

	if (!s)
		return -1;
	_Static_assert(XP_USUM_BUCKET == sizeof(uint64_t), "the sums' buckets are u64");
	for (c = 0; c < XP_USUM_FUNCS; c++)
		for (b = 0; b < XP_USUM_NHIST; b++)
			*(volatile uint64_t *)(s + c * XP_USUM_SIZE + XP_USUM_HIST +
					       b * XP_USUM_BUCKET) = UINT32_MAX;
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000, i, forks = 0;
	const char *us = getenv("NESTLOOP_SLEEP_US");

	if (us)
		sleep_us = strtoul(us, NULL, 0);
	us = getenv("NESTLOOP_CARRY_US");
	if (us)
		carry_us = strtoul(us, NULL, 0);
	us = getenv("NESTLOOP_JUMP_US");
	if (us)
		jump_us = strtoul(us, NULL, 0);
	while (argc > 2 && access(argv[2], F_OK))
		usleep(10000);
	if (getenv("NESTLOOP_PLANT") && plant()) {
		fprintf(stderr, "nestloop: no records mapping to plant sums in\n");
		return 3;
	}
	if (getenv("NESTLOOP_FORK"))
		fork_every = strtoul(getenv("NESTLOOP_FORK"), NULL, 0);
	rseq_check = getenv("NESTLOOP_RSEQ") != NULL;
	for (i = 0; i < n; i++) {
		long sw = rseq_check ? switches() : 0;
		unsigned long v = nl_outer(i), theirs = ~v;
		int st = 0;

		if (rseq_check) {
			uint64_t cs = rseq_cs_now();

			if (switches() != sw)
				rseq_switched++;
			else if (cs)
				rseq_left++;
		}

		if (!kid) {		/* back through the three frames */
			_exit(write(kid_pipe[1], &v, sizeof(v)) != sizeof(v));
		} else if (kid > 0) {
			close(kid_pipe[1]);
			if (read(kid_pipe[0], &theirs, sizeof(theirs)) != sizeof(theirs))
				theirs = ~v;
			close(kid_pipe[0]);
			if (waitpid(kid, &st, 0) != kid || !WIFEXITED(st) || WEXITSTATUS(st) ||
			    theirs != v) {
				fprintf(stderr, "nestloop: the child forked in round %lu ended with "
					"status %#x, its value %#lx, its parent's %#lx\n", i, st,
					theirs, v);
				return 4;
			}
			forks++;
			kid = -1;
		}
		sink += v;
	}
	fprintf(stderr, "ok rounds=%lu sum=%lu forks=%lu thunked=%lu", n, (unsigned long)sink,
		forks, thunked);
	if (rseq_check)
		fprintf(stderr, " rseq_left=%lu switched=%lu", rseq_left, rseq_switched);
	fputc('\n', stderr);
	return 0;
}
