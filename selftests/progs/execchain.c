// SPDX-License-Identifier: GPL-2.0
/*
 * execchain: make N getppid() calls, then exec the next program of a chain.
 *   execchain [-g] -n N -k K [-s]
 *   -g  print "ready" and wait for SIGUSR1 first (first program only)
 *   -k  programs left after this one: exec execchain -k K-1; the last one
 *       execs "sysloop -n N getppid" (a different binary) when -s is given
 *   -s  start that last program with posix_spawn (vfork + exec) from a
 *       child of this process instead of exec'ing into it
 * The last sysloop prints "done N" and waits for SIGUSR1 (sysloop -e); with
 * -s the spawning process prints "done" after its child and waits likewise.
 * So -k 1 runs execchain, execchain, sysloop in one process: 3N calls.
 */
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

extern char **environ;

int main(int argc, char **argv)
{
	int opt, go = 0, k = 0, spawn = 0, sig;
	unsigned long n = 100, i;
	char nbuf[32], kbuf[32];
	sigset_t set;

	while ((opt = getopt(argc, argv, "gn:k:s")) != -1) {
		switch (opt) {
		case 'g': go = 1; break;
		case 'n': n = strtoul(optarg, NULL, 0); break;
		case 'k': k = atoi(optarg); break;
		case 's': spawn = 1; break;
		default: return 2;
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
	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
	snprintf(nbuf, sizeof(nbuf), "%lu", n);
	if (k > 0) {
		snprintf(kbuf, sizeof(kbuf), "%d", k - 1);
		execl("/proc/self/exe", "execchain", "-n", nbuf, "-k", kbuf, spawn ? "-s" : NULL,
		      (char *)NULL);
		perror("execchain: exec");
		return 1;
	}
	if (spawn) {
		char *args[] = { "sysloop", "-n", nbuf, "getppid", NULL };
		pid_t pid;
		int status;

		if (posix_spawnp(&pid, "sysloop", NULL, NULL, args, environ)) {
			perror("execchain: posix_spawn");
			return 1;
		}
		waitpid(pid, &status, 0);
	}
	if (!spawn) {
		/* the last program: sysloop in this very process */
		execlp("sysloop", "sysloop", "-e", "-n", nbuf, "getppid", (char *)NULL);
		perror("execchain: exec sysloop");
		return 1;
	}
	printf("done\n");
	fflush(stdout);
	sigwait(&set, &sig);
	return 0;
}
