// SPDX-License-Identifier: GPL-2.0
/*
 * manysites [ROUNDS [big [hold]]]: calls ms_leaf() from 4096 distinct call
 * sites (with "big", 20480), once each per round, so that its returns go to more
 * distinct addresses than a process's return thunks can stand for: with
 * events, XP_URET_N (2048, module/uhooks/uhook.h); with records,
 * XP_URT_N (16384, module/uhooks/urec.h), which 4096 must stay under and
 * 20480 goes past. Past them the module gives those calls' returns up, and
 * trace must say how many (returns_lost), never drop them silently nor
 * count a call it has no time for. Says on stderr how many calls it made.
 * With "hold" it stops itself (SIGSTOP) after its first round and again
 * after its last, so that a test can read the view's counters in between:
 * what the later rounds cost, once every return address has been seen.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;

NOINLINE void ms_leaf(void)
{
	sink++;
	__asm__ volatile("");
}

#define C1	ms_leaf();
#define C4	C1 C1 C1 C1
#define C16	C4 C4 C4 C4
#define C64	C16 C16 C16 C16
#define C256	C64 C64 C64 C64
#define C1024	C256 C256 C256 C256
#define C4096	C1024 C1024 C1024 C1024

NOINLINE void ms_all(void)
{
	C4096
}

NOINLINE void ms_big(void)
{
	C4096 C4096 C4096 C4096 C4096
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 1, i;
	int big = argc > 2 && !strcmp(argv[2], "big");
	int hold = argc > 3 && !strcmp(argv[3], "hold");
	int sites = big ? 5 * 4096 : 4096;

	for (i = 0; i < rounds; i++) {
		if (big)
			ms_big();
		else
			ms_all();
		if (hold && (i == 0 || i == rounds - 1)) {
			fprintf(stderr, "manysites: pid %d held after round %d\n", (int)getpid(), i + 1);
			raise(SIGSTOP);
		}
	}
	fprintf(stderr, "manysites: %d calls of ms_leaf\n", sites * rounds);
	return sink == (unsigned long)sites * rounds ? 0 : 1;
}
