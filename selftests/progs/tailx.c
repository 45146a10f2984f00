// SPDX-License-Identifier: GPL-2.0
/*
 * tailx: N rounds of calls that end in a tail call across two trampoline
 * areas, the program's and its library's (libtailx.so, found beside it),
 * then exit (selftest 40). A round is
 *
 *	tx_outer() -> tx_hop() (the library) -jmp-> tx_leaf() (the program)
 *	tx_outer() -> tx_mid() -jmp-> tx_libleaf() (the library)
 *	tx_outer() -> tx_ind() -jmp *tx_indptr(%rip)-> tx_indleaf()
 *
 * Under trace, each tail-called function's entry finds its caller's
 * return thunk, of the other area's block, as its return address: a tail
 * call, whose caller's frame stays open until both return. tx_ind() is
 * nothing but a jump through a pointer, as Redis's RM_MonotonicMicroseconds()
 * is: its user hook's trampoline runs that jump. Prints "ok
 * rounds=N sum=S" to stderr at the end.
 *
 *   tailx N
 */
#include <stdio.h>
#include <stdlib.h>

unsigned long tx_hop(unsigned long (*f)(unsigned long), unsigned long i);
unsigned long tx_libleaf(unsigned long i);

static volatile unsigned long sink;

__attribute__((noinline)) unsigned long tx_leaf(unsigned long i)
{
	unsigned long k, s = i;

	for (k = 0; k < 32; k++)
		s = s * 31 + k;
	return s;
}

__attribute__((noinline)) unsigned long tx_mid(unsigned long i)
{
	return tx_libleaf(i + 3);
}

__attribute__((noinline)) unsigned long tx_indleaf(unsigned long i)
{
	unsigned long k, s = i;

	for (k = 0; k < 16; k++)
		s = s * 17 + k;
	return s;
}

/* read by tx_ind's jump, RIP-relative */
__attribute__((used)) unsigned long (*tx_indptr)(unsigned long) = tx_indleaf;
unsigned long tx_ind(unsigned long i);
__asm__(".text\n"
	".globl tx_ind\n"
	".type tx_ind, @function\n"
	"tx_ind:\n"
	"\tjmp *tx_indptr(%rip)\n"
	".size tx_ind, . - tx_ind\n");

__attribute__((noinline)) unsigned long tx_outer(unsigned long i)
{
	unsigned long k, s = 0;

	for (k = 0; k < 32; k++)
		s += k * i;
	return s + tx_hop(tx_leaf, i) + tx_mid(i) + tx_ind(i);
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000, i;

	for (i = 0; i < n; i++)
		sink += tx_outer(i);
	fprintf(stderr, "ok rounds=%lu sum=%lu\n", n, (unsigned long)sink);
	return 0;
}
