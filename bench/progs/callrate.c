// SPDX-License-Identifier: GPL-2.0
/*
 * callrate: how many times per second this process can make one system call.
 *   callrate [-g] [-d SECONDS] SYSCALL   (getppid, getpid, getuid, close)
 *   callrate [-g] [-d SECONDS] kill      kill(itself, SIGWINCH), ignored: each
 *                                        call passes signal:signal_generate
 *   callrate [-g] [-d SECONDS] fn        calls of cr_fn, a user function
 *                                        with a frame-pointer prologue, 256
 *                                        a call of cr_batch
 *   callrate [-g] [-d SECONDS] pread FILE  pread(2) of one byte at offset 0
 *                                        (/proc/xp_modfn: one call of a
 *                                        function in module text each)
 * Prints the rate as an integer. -g: print "ready" and wait for SIGUSR1 first
 * (so the process can be made a tracing target before it measures).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/syscall.h>

long cr_fn(long x);

asm(".text\n"
    ".globl cr_fn\n.type cr_fn,@function\n"
    "cr_fn:\n"
    "	push %rbp\n"
    "	mov %rsp, %rbp\n"
    "	lea 1(%rdi), %rax\n"
    "	pop %rbp\n"
    "	ret\n"
    ".size cr_fn, .-cr_fn\n");

/*
 * 256 calls of cr_fn: a caller of its own, so that trace -f 'cr_*' sees
 * cr_fn's calls nested in a traced function (sums in the process: one
 * record a batch instead of a call).
 */
__attribute__((noinline)) long cr_batch(long x)
{
	long i, sum = 0;

	for (i = 0; i < 256; i++)
		sum += cr_fn(i) + x * 0;
	return sum;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = 1, start, t;
	long nr = SYS_getppid, arg = 0, arg2 = 0, arg3 = 0, arg4 = 0;
	char byte;
	unsigned long n = 0;
	int opt, i, go = 0, sig, fn = 0;
	long sum = 0;
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
		else if (!strcmp(argv[optind], "kill")) {
			/* SIGWINCH's default is to ignore it, yet it is generated */
			signal(SIGWINCH, SIG_DFL);
			nr = SYS_kill;
			arg = getpid();
			arg2 = SIGWINCH;
		}
		else if (!strcmp(argv[optind], "fn")) fn = 1;
		else if (!strcmp(argv[optind], "pread") && optind + 1 < argc) {
			nr = SYS_pread64;
			arg = open(argv[optind + 1], O_RDONLY);
			if (arg < 0) {
				perror(argv[optind + 1]);
				return 1;
			}
			arg2 = (long)&byte;
			arg3 = 1;
		}
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
		if (fn)
			sum += cr_batch(n);
		else
			for (i = 0; i < 256; i++)
				syscall(nr, arg, arg2, arg3, arg4);
		n += 256;
		t = now() - start;
	} while (t < secs);
	if (fn && sum != (long)(n / 256) * (256 * 257 / 2))
		fprintf(stderr, "callrate: cr_fn's results are wrong\n");
	printf("%.0f\n", n / t);
	return 0;
}
