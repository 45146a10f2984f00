// SPDX-License-Identifier: GPL-2.0
/*
 * stackzap: a thread's stack pages taken away and given back under it
 * while it calls traced functions, as khugepaged does to any process:
 * the thread runs on a stack inside one 2 MiB region, and another thread
 * collapses that region into a huge page again and again (MADV_COLLAPSE,
 * 6.1 and later: the page table entries are cleared while the pages are
 * copied; the stack's contents stay), splitting it in between (a
 * MADV_DONTNEED of the region's lowest page, which the stack never
 * reaches). A tracer that reads the stack without faulting (a user hook's
 * pushed registers, its return address) finds the page missing now and
 * then; the thread itself only waits in its page faults. zs_outer() calls
 * zs_leaf() once per round; both are counted by the tracer.
 *
 *   stackzap N OUT     N rounds; writes "stackzap rounds=N sum=S" to OUT,
 *                      and the collapses done to stderr
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

#define REGION (2UL << 20)

static volatile int done;

__attribute__((noinline)) unsigned long zs_leaf(unsigned long i)
{
	return i * 2654435761UL ^ (i >> 7);
}

__attribute__((noinline)) unsigned long zs_outer(unsigned long i)
{
	return zs_leaf(i) + i;
}

struct job {
	unsigned long rounds, sum;
};

static void *caller(void *arg)
{
	struct job *j = arg;
	unsigned long i;

	for (i = 0; i < j->rounds; i++)
		j->sum += zs_outer(i);
	done = 1;
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long collapses = 0, tries = 0;
	struct job j = { 0, 0 };
	pthread_attr_t attr;
	pthread_t t;
	char *raw, *region;
	FILE *out;

	if (argc != 3) {
		fprintf(stderr, "usage: stackzap N OUT\n");
		return 2;
	}
	j.rounds = strtoul(argv[1], NULL, 0);
	raw = mmap(NULL, 2 * REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED) {
		perror("stackzap: mmap");
		return 1;
	}
	region = (char *)(((unsigned long)raw + REGION - 1) & ~(REGION - 1));
	madvise(region, REGION, MADV_HUGEPAGE);
	memset(region + REGION - (64 << 10), 0, 64 << 10);	/* the stack's top in */
	pthread_attr_init(&attr);
	if (pthread_attr_setstack(&attr, region + 4096, REGION - 4096) ||
	    pthread_create(&t, &attr, caller, &j)) {
		fprintf(stderr, "stackzap: no thread\n");
		return 1;
	}
	while (!done) {
		tries++;
		if (!madvise(region, REGION, MADV_COLLAPSE))
			collapses++;
		else if (errno == EINVAL)
			break;		/* a kernel without it: the thread runs alone */
		madvise(region, 4096, MADV_DONTNEED);	/* split it again */
	}
	pthread_join(t, NULL);
	out = fopen(argv[2], "w");
	if (!out)
		return 1;
	fprintf(out, "stackzap rounds=%lu sum=%lu\n", j.rounds, j.sum);
	fclose(out);
	fprintf(stderr, "stackzap: %lu collapses of %lu tries\n", collapses, tries);
	return 0;
}
