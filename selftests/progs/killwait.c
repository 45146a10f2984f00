// SPDX-License-Identifier: GPL-2.0
/*
 * killwait: is a command that waits killable, without the shell forking?
 *
 *   killwait MS CMD [ARG...]
 *
 * runs CMD, and MS milliseconds later checks that it is still running,
 * sends it SIGKILL and waits up to 5 s for it to end. Prints one line:
 * "killed" (exit 0), "ended first: STATUS" (exit 1: it did not wait) or
 * "not killed in 5 s" (exit 1; the command is left running). For tests
 * of waits during which no process can fork: a uprobe registration that
 * waits for a process's mmap lock holds dup_mmap_sem, which every fork
 * takes, so the shell could not even start sleep(1).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void nap_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	int status, i;
	pid_t pid;

	if (argc < 3) {
		fprintf(stderr, "usage: killwait MS CMD [ARG...]\n");
		return 2;
	}
	pid = fork();
	if (pid < 0) {
		perror("killwait: fork");
		return 2;
	}
	if (!pid) {
		execvp(argv[2], argv + 2);
		perror(argv[2]);
		_exit(127);
	}
	nap_ms(atol(argv[1]));
	if (waitpid(pid, &status, WNOHANG) == pid) {
		printf("ended first: %s %d\n", WIFEXITED(status) ? "exit" : "signal",
		       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		return 1;
	}
	kill(pid, SIGKILL);
	for (i = 0; i < 100; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			printf("killed\n");
			return 0;
		}
		nap_ms(50);
	}
	printf("not killed in 5 s\n");
	return 1;
}
