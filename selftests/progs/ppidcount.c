// SPDX-License-Identifier: GPL-2.0
/*
 * ppidcount: call getppid() for SECONDS and report how many calls returned
 * VALUE (default 4242, what the selftest livepatch makes it return).
 *   ppidcount [-d SECONDS] [-v VALUE]      prints "total N value M"
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

int main(int argc, char **argv)
{
	unsigned long total = 0, hits = 0;
	long value = 4242;
	double secs = 5;
	time_t end;
	int opt, i;

	while ((opt = getopt(argc, argv, "d:v:")) != -1) {
		if (opt == 'd') secs = atof(optarg);
		if (opt == 'v') value = atol(optarg);
	}
	end = time(NULL) + (time_t)secs;
	while (time(NULL) < end) {
		for (i = 0; i < 1000; i++, total++)
			if (syscall(SYS_getppid) == value)
				hits++;
	}
	printf("total %lu value %lu\n", total, hits);
	return 0;
}
