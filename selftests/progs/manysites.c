// SPDX-License-Identifier: GPL-2.0
/*
 * manysites [ROUNDS]: calls ms_leaf() from 4096 distinct call sites, once
 * each per round, so that its returns go to more distinct addresses than a
 * process's return thunks can stand for (XP_URET_N, 2048, module/uhooks/uhook.h):
 * under trace with events the module gives the others' return events up,
 * and trace must say how many (calls_lost, returns_lost), never drop them
 * silently. Says on stderr how many calls it made.
 */
#include <stdio.h>
#include <stdlib.h>

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
#define SITES	4096

NOINLINE void ms_all(void)
{
	C1024 C1024 C1024 C1024
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 1, i;

	for (i = 0; i < rounds; i++)
		ms_all();
	fprintf(stderr, "manysites: %d calls of ms_leaf\n", SITES * rounds);
	return sink == (unsigned long)SITES * rounds ? 0 : 1;
}
