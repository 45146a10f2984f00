// SPDX-License-Identifier: GPL-2.0
/*
 * ppidcount: call getppid() and count how many calls returned VALUE (default
 * 4242, what the selftest livepatch makes it return).
 *   ppidcount [-d SECONDS] [-v VALUE]   for SECONDS, then "total N value M"
 *   ppidcount -p [-v VALUE] [-s USEC]   in phases: each SIGUSR1 ends one and
 *                                       prints "phase K total N value M",
 *                                       SIGTERM ends the last one and exits
 * Phases let a test count what a process saw between two events of its own
 * choosing, however slowly the machine runs, instead of guessing a duration.
 * With -s it sleeps USEC after every 1000 calls, leaving its CPU idle.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

/* Signals counted in the handler; the loop ends one phase per signal seen. */
static volatile sig_atomic_t asked, last;

static void on_signal(int sig)
{
	asked++;
	if (sig == SIGTERM)
		last = 1;
}

int main(int argc, char **argv)
{
	unsigned long total = 0, hits = 0, phase = 0;
	sig_atomic_t seen = 0;
	struct sigaction sa;
	long value = 4242;
	int opt, i, phases = 0;
	double secs = 5;
	long pause = 0;
	time_t end;

	while ((opt = getopt(argc, argv, "d:ps:v:")) != -1) {
		if (opt == 'd') secs = atof(optarg);
		if (opt == 'p') phases = 1;
		if (opt == 's') pause = atol(optarg);
		if (opt == 'v') value = atol(optarg);
	}
	if (phases) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigaction(SIGUSR1, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		setvbuf(stdout, NULL, _IOLBF, 0);
	}
	end = time(NULL) + (time_t)secs;
	while (phases || time(NULL) < end) {
		for (i = 0; i < 1000; i++, total++)
			if (syscall(SYS_getppid) == value)
				hits++;
		if (pause)
			usleep(pause);
		if (!phases || seen == asked)
			continue;
		seen++;
		printf("phase %lu total %lu value %lu\n", phase++, total, hits);
		total = hits = 0;
		if (last && seen == asked)
			return 0;
	}
	printf("total %lu value %lu\n", total, hits);
	return 0;
}
