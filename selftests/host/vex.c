// SPDX-License-Identifier: GPL-2.0
/*
 * vex: calls the functions of vex.S the CPU can run, checks each result,
 * and prints "vex ok N" or "vex bad FUNCTION GOT" (selftests/host/vex-check.sh).
 */
#include <immintrin.h>
#include <stdio.h>
#include <unistd.h>

int vx_avx2(__m128i x);
int vx_evex(int c);

int main(void)
{
	int i, n = 0, got;

	usleep(200000);		/* trace attaches meanwhile */
	for (i = 0; i < 100; i++) {
		if (__builtin_cpu_supports("avx2")) {
			got = vx_avx2(_mm_cvtsi32_si128(0x41));
			if (got != 0x41414141) {
				printf("vex bad vx_avx2 %#x\n", got);
				return 1;
			}
			n++;
		}
		if (__builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")) {
			got = vx_evex(0x42);
			if (got != 0x42424242) {
				printf("vex bad vx_evex %#x\n", got);
				return 1;
			}
			n++;
		}
	}
	printf("vex ok %d\n", n);
	return 0;
}
