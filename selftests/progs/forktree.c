// SPDX-License-Identifier: GPL-2.0
/*
 * forktree: a tree of processes that each make N getppid() calls.
 *   forktree [-g] [-e] [-n N] [-f FANOUT,FANOUT,...] [-r PRIO]
 *   -g  print "ready" and wait for SIGUSR1 before forking
 *   -e  print "done P" (P processes in all) and wait for SIGUSR1 before exiting
 *   -f  children per level, root first (default 7,2,2: 1+7+14+28 = 50
 *       processes, depth 3)
 * Every process makes its calls after forking its own children and waits for
 * them before exiting.
 */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static int fanout[8], levels;
static unsigned long calls = 100;

static int node(int depth)
{
	int i, total = 1, status;
	unsigned long c;

	for (i = 0; depth < levels && i < fanout[depth]; i++) {
		if (fork() == 0)
			_exit(node(depth + 1));
	}
	for (c = 0; c < calls; c++)
		syscall(SYS_getppid);
	while (wait(&status) > 0)
		if (WIFEXITED(status))
			total += WEXITSTATUS(status);
	return total;
}

int main(int argc, char **argv)
{
	int opt, go = 0, end = 0, sig, total, prio = 0;
	char spec[64] = "7,2,2", *tok;
	sigset_t set;

	while ((opt = getopt(argc, argv, "gen:f:r:")) != -1) {
		switch (opt) {
		case 'g': go = 1; break;
		case 'e': end = 1; break;
		case 'n': calls = strtoul(optarg, NULL, 0); break;
		case 'f': snprintf(spec, sizeof(spec), "%s", optarg); break;
		case 'r': prio = atoi(optarg); break;
		default: return 2;
		}
	}
	for (tok = strtok(spec, ","); tok && levels < 8; tok = strtok(NULL, ","))
		fanout[levels++] = atoi(tok);
	if (prio) {
		struct sched_param sp = { .sched_priority = prio };
		cpu_set_t cpus;

		CPU_ZERO(&cpus);
		CPU_SET(0, &cpus);
		if (sched_setaffinity(0, sizeof(cpus), &cpus) ||
		    sched_setscheduler(0, SCHED_FIFO, &sp)) {
			perror("forktree: SCHED_FIFO on CPU 0");
			return 1;
		}
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (go) {
		printf("ready %d\n", getpid());
		fflush(stdout);
		sigwait(&set, &sig);
	}
	total = node(0);	/* exit codes carry subtree sizes (< 256) */
	if (end) {
		printf("done %d\n", total);
		fflush(stdout);
		sigwait(&set, &sig);
	}
	return 0;
}
