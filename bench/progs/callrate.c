// SPDX-License-Identifier: GPL-2.0
/*
 * callrate: how many times per second this process can make one system call.
 *   callrate [-g] [-d SECONDS] SYSCALL   (getppid, getpid, getuid, close)
 * Prints the rate as an integer. -g: print "ready" and wait for SIGUSR1 first
 * (so the process can be made a tracing target before it measures).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = 1, start, t;
	long nr = SYS_getppid, arg = 0;
	unsigned long n = 0;
	int opt, i, go = 0, sig;
	sigset_t set;

	while ((opt = getopt(argc, argv, "gd:")) != -1) {
		if (opt == 'd')
			secs = atof(optarg);
		else if (opt == 'g')
			go = 1;
	}
	if (optind < argc) {
		if (!strcmp(argv[optind], "getpid")) nr = SYS_getpid;
		else if (!strcmp(argv[optind], "getuid")) nr = SYS_getuid;
		else if (!strcmp(argv[optind], "close")) { nr = SYS_close; arg = -1; }
		else if (strcmp(argv[optind], "getppid")) return 2;
	}
	if (go) {
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		printf("ready\n");
		fflush(stdout);
		sigwait(&set, &sig);
	}
	start = now();
	do {
		for (i = 0; i < 256; i++)
			syscall(nr, arg);
		n += 256;
		t = now() - start;
	} while (t < secs);
	printf("%.0f\n", n / t);
	return 0;
}
