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
 * NESTLOOP_PLANT=1: before the rounds, every histogram bucket of the sums
 * the process keeps itself (module/uhooks/urec.h: after the records buffers in
 * "[xprobes-records]", per cookie) is set to 2^32 - 1, as if that many
 * calls had been summed there: the next call in a bucket carries past 32
 * bits (selftest 40; 2^32 real calls would take hours in the VM). Waits
 * up to 10 s for the mapping; exits 3 without it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../../module/uhooks/urec.h"
#include "maps.h"

static volatile unsigned long sink;
static unsigned int sleep_us;

__attribute__((noinline)) unsigned long nl_leaf(unsigned long i)
{
	unsigned long k, s = i;

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
	return s + nl_mid(i);
}

/* The process's sums: the end of its "[xprobes-records]" mapping. */
static unsigned char *sums_map(void)
{
	unsigned char *at;
	size_t len;
	int tries;

	for (tries = 0; tries < 1000; tries++, usleep(10000)) {
		len = named_map("xprobes-records", NULL, &at);
		if (len)
			return at + len - (unsigned long)XP_USUM_FUNCS * XP_USUM_SIZE;
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
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000, i;
	const char *us = getenv("NESTLOOP_SLEEP_US");

	if (us)
		sleep_us = strtoul(us, NULL, 0);
	while (argc > 2 && access(argv[2], F_OK))
		usleep(10000);
	if (getenv("NESTLOOP_PLANT") && plant()) {
		fprintf(stderr, "nestloop: no records mapping to plant sums in\n");
		return 3;
	}
	for (i = 0; i < n; i++)
		sink += nl_outer(i);
	fprintf(stderr, "ok rounds=%lu sum=%lu\n", n, (unsigned long)sink);
	return 0;
}
