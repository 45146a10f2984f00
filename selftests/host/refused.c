// SPDX-License-Identifier: GPL-2.0
/*
 * Functions the kernel's uprobes refuse (selftests/host/refused-check.sh):
 * rf_lock starts with a lock prefix (as glibc's pthread_spin_lock), which
 * trace sees from its bytes; rf_cli with cli, which only the kernel's
 * table of instructions it can step knows (it is never called). rf_work
 * is called CALLS times, half of them after a pause of PAUSE ms (the
 * checker looks at trace's descriptors then).
 *	refused [CALLS [PAUSE]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__asm__(".text\n"
	".globl rf_lock\n.type rf_lock, @function\n"
	"rf_lock:\n\tlock incl (%rdi)\n\tret\n.size rf_lock, .-rf_lock\n"
	".globl rf_cli\n.type rf_cli, @function\n"
	"rf_cli:\n\tcli\n\tret\n.size rf_cli, .-rf_cli\n");

void rf_lock(int *p);
void rf_cli(void);

static volatile long sink;

__attribute__((noinline)) long rf_work(long i)
{
	sink += i;
	return sink;
}

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 1000, i;
	const char *go = argc > 2 ? argv[2] : NULL;
	int n = 0, w;

	for (i = 0; i < calls; i++) {
		for (w = 0; i == calls / 2 && go && access(go, F_OK) && w < 6000; w++)
			usleep(10000);
		rf_work(i);
		rf_lock(&n);
	}
	if (argc > 3)	/* never: the linker keeps it, the loop never runs it */
		rf_cli();
	printf("refused ok %d %ld\n", n, sink);
	return 0;
}
