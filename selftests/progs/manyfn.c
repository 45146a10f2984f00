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

/* R1000(M, p): M(p000) to M(p999), by digits pasted onto p */
#define R10(M, p)	M(p##0) M(p##1) M(p##2) M(p##3) M(p##4) \
			M(p##5) M(p##6) M(p##7) M(p##8) M(p##9)
#define R100(M, p)	R10(M, p##0) R10(M, p##1) R10(M, p##2) R10(M, p##3) R10(M, p##4) \
			R10(M, p##5) R10(M, p##6) R10(M, p##7) R10(M, p##8) R10(M, p##9)
#define R1000(M, p)	R100(M, p##0) R100(M, p##1) R100(M, p##2) R100(M, p##3) R100(M, p##4) \
			R100(M, p##5) R100(M, p##6) R100(M, p##7) R100(M, p##8) R100(M, p##9)
#define ALL(M)		R1000(M, 1) R1000(M, 2) R1000(M, 3) R1000(M, 4) R1000(M, 5) \
			R1000(M, 6) R1000(M, 7) R1000(M, 8) R1000(M, 9) R1000(M, 10)

#define FN(n)		__attribute__((noinline, used)) void mf_##n(void) { sink = n; }
#define AT(n)		mf_##n,
ALL(FN)
static void (*const table[])(void) = { ALL(AT) };

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
