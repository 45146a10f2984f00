// SPDX-License-Identifier: GPL-2.0
/*
 * manyfn GO: 10000 functions, mf_1000 to mf_10999 (more than the 4096
 * trace took until 2026-12-07, and past the 8192 a 13-bit records cookie
 * holds), each a store of its own number: 7 bytes, room for a user hook's
 * jump. Once the file GO exists, function mf_N is called
 * N % 3 + 1 times (through a table, from one call site), then it exits.
 * Selftest 54 traces every function and checks each one's count.
 */
#include <stdio.h>
#include <unistd.h>

static volatile int sink;

#define FN(n)		__attribute__((noinline, used)) void mf_##n(void) { sink = n; }
#define FN10(p)		FN(p##0) FN(p##1) FN(p##2) FN(p##3) FN(p##4) \
			FN(p##5) FN(p##6) FN(p##7) FN(p##8) FN(p##9)
#define FN100(p)	FN10(p##0) FN10(p##1) FN10(p##2) FN10(p##3) FN10(p##4) \
			FN10(p##5) FN10(p##6) FN10(p##7) FN10(p##8) FN10(p##9)
#define FN1000(p)	FN100(p##0) FN100(p##1) FN100(p##2) FN100(p##3) FN100(p##4) \
			FN100(p##5) FN100(p##6) FN100(p##7) FN100(p##8) FN100(p##9)
FN1000(1) FN1000(2) FN1000(3) FN1000(4) FN1000(5) FN1000(6) FN1000(7) FN1000(8) FN1000(9)
FN1000(10)

#define AT(n)		mf_##n,
#define AT10(p)		AT(p##0) AT(p##1) AT(p##2) AT(p##3) AT(p##4) \
			AT(p##5) AT(p##6) AT(p##7) AT(p##8) AT(p##9)
#define AT100(p)	AT10(p##0) AT10(p##1) AT10(p##2) AT10(p##3) AT10(p##4) \
			AT10(p##5) AT10(p##6) AT10(p##7) AT10(p##8) AT10(p##9)
#define AT1000(p)	AT100(p##0) AT100(p##1) AT100(p##2) AT100(p##3) AT100(p##4) \
			AT100(p##5) AT100(p##6) AT100(p##7) AT100(p##8) AT100(p##9)
static void (*const table[])(void) = { AT1000(1) AT1000(2) AT1000(3) AT1000(4) AT1000(5)
				       AT1000(6) AT1000(7) AT1000(8) AT1000(9) AT1000(10) };

int main(int argc, char **argv)
{
	unsigned int i, k;

	if (argc != 2) {
		fprintf(stderr, "usage: manyfn GO\n");
		return 2;
	}
	while (access(argv[1], F_OK))
		usleep(10000);
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		for (k = 0; k <= (1000 + i) % 3; k++)
			table[i]();
	fprintf(stderr, "manyfn: %u functions called\n", i);
	return 0;
}
