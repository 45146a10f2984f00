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
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000, i;
	const char *us = getenv("NESTLOOP_SLEEP_US");

	if (us)
		sleep_us = strtoul(us, NULL, 0);
	while (argc > 2 && access(argv[2], F_OK))
		usleep(10000);
	for (i = 0; i < n; i++)
		sink += nl_outer(i);
	fprintf(stderr, "ok rounds=%lu sum=%lu\n", n, (unsigned long)sink);
	return 0;
}
