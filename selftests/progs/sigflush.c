// SPDX-License-Identifier: GPL-2.0
/*
 * sigflush: a signal handler that runs right where a records routine has
 * just had its full buffer flushed, and fills the buffer again before the
 * routine appends the record it came with.
 *   sigflush ROUNDS [MAIN_CALLS [HANDLER_CALLS]]
 * The process (traced: trace -f sf_leaf) forks a tracer that seizes it and
 * stops it at every system call. At the exit of the first flush of a round
 * (system call 422 with rdi 0, the routine's request when its CPU's buffer
 * is full) the tracer has SIGUSR1 delivered there; the handler calls
 * sf_leaf() HANDLER_CALLS times, two records a call (traced without sums:
 * with them, the process would sum each call at its buffer's bottom), which
 * fills the buffer the stops emptied (default 332:
 * XP_UREC_CAP / 2, module/uhooks/urec.h). The rest of the round runs without
 * stops (PTRACE_CONT), so that nothing empties the buffer before the
 * routine goes on. Each round the process makes MAIN_CALLS calls of its own
 * (default 1000: 2000 records, three flushes, so that a switch in the
 * round, which hands the buffer over, still leaves one). It prints
 * "calls N" (all of sf_leaf's, the handler's included) and "signals N"; a
 * flush that lost the record it was asked for shows as a call trace counts
 * less.
 *   sigflush ROUNDS MAIN_CALLS HANDLER_CALLS rise [SWITCH_AT]
 * The same with sums (docs/userhooks.md, "The bottom of the buffer"):
 * every run of calls (the round's, the handler's) is made on the way back
 * up a recursion, each call from a frame above the last, so that after a
 * hand-over, wherever it falls, only the first call is summed at the
 * bottom (its sp becomes the bottom's, bsp); every later one is above it
 * and at another sp than the return before it, and appends its records.
 * 333 handler calls then leave the buffer full (one summed, 332 of two
 * records). With SWITCH_AT, each round's run makes a system call (getppid,
 * a tracer stop: a switch, so a hand-over) after its SWITCH_AT-th call:
 * wherever it falls, the next call is above every call before it, and
 * only it is summed (or none: with no record in the buffer, the module
 * carries the bottom's sp over the switch).
 * (Until 2026-12-06 the calls alternated between two depths, the deeper
 * first: a hand-over after a deeper call, a preemption on 6.1-rt, made the
 * shallow one first, every call after it was at or below bsp and summed,
 * and the round never flushed.)
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define XPROBES_UREC_NR	422

static volatile unsigned long calls, signals;
static unsigned long handler_calls = 332;

__attribute__((noinline)) void sf_leaf(void)
{
	calls++;
	__asm__ volatile("" ::: "memory");
}

static int rising;
static unsigned long switch_at;

/*
 * Calls N down to 1 of a run of sf_leaf() calls, made on the way back up:
 * call 1, the deepest, first, each later one from the frame above; after
 * call SWITCH_AT, a tracer stop. N >= 1. The test after sf_leaf() keeps
 * it from being a tail call, the barrier the system call.
 */
__attribute__((noinline)) void sf_rise(unsigned long n)
{
	if (n > 1)
		sf_rise(n - 1);
	sf_leaf();
	if (n == switch_at)
		syscall(SYS_getppid);
	__asm__ volatile("" ::: "memory");
}

/* N calls of sf_leaf(), from one place, or rising. */
static void sf_calls(unsigned long n)
{
	unsigned long i;

	if (rising) {
		if (n)
			sf_rise(n);
		return;
	}
	for (i = 0; i < n; i++)
		sf_leaf();
}

static void on_usr1(int sig)
{
	unsigned long at = switch_at;

	(void)sig;
	signals++;
	switch_at = 0;	/* the handler's calls run without stops */
	sf_calls(handler_calls);
	switch_at = at;
}

static void die(const char *what)
{
	fprintf(stderr, "sigflush: %s: %s\n", what, strerror(errno));
	_exit(1);
}

/* The tracer: child of the traced process, it seizes its parent. */
static void tracer(pid_t p, int go_w, int done_r, int done_w, unsigned long rounds)
{
	struct __ptrace_syscall_info si;
	unsigned long r, flushes = 0, missed = 0;
	int st, armed, flush_in = 0;
	char c;

	if (ptrace(PTRACE_SEIZE, p, 0, PTRACE_O_TRACESYSGOOD))
		die("PTRACE_SEIZE");
	for (r = 0; r < rounds; r++) {
		if (ptrace(PTRACE_INTERRUPT, p, 0, 0))
			die("PTRACE_INTERRUPT");
		for (;;) {	/* until the interrupt's stop (a pending signal's may come first) */
			if (waitpid(p, &st, __WALL) < 0)
				die("waitpid");
			if (!WIFSTOPPED(st))
				_exit(1);
			if (st >> 16 == PTRACE_EVENT_STOP)
				break;
			if (ptrace(PTRACE_CONT, p, 0, WSTOPSIG(st) == SIGTRAP ? 0 : WSTOPSIG(st)))
				die("PTRACE_CONT");
		}
		armed = 1;
		if (ptrace(PTRACE_SYSCALL, p, 0, 0))
			die("PTRACE_SYSCALL");
		if (write(go_w, "g", 1) != 1)
			die("write");
		while (armed) {
			int sig = 0;

			if (waitpid(p, &st, __WALL) < 0)
				die("waitpid");
			if (!WIFSTOPPED(st))
				_exit(0);
			if (WSTOPSIG(st) == (SIGTRAP | 0x80)) {
				if (ptrace(PTRACE_GET_SYSCALL_INFO, p, sizeof(si), &si) < 0)
					die("PTRACE_GET_SYSCALL_INFO");
				if (si.op == PTRACE_SYSCALL_INFO_ENTRY &&
				    si.entry.nr == SYS_write && si.entry.args[0] == (unsigned long)done_w) {
					missed++;	/* the round ends without a flush */
					armed = 0;
					if (ptrace(PTRACE_CONT, p, 0, 0))
						die("PTRACE_CONT");
					continue;
				}
				if (si.op == PTRACE_SYSCALL_INFO_ENTRY) {
					flush_in = si.entry.nr == XPROBES_UREC_NR && si.entry.args[0] == 0;
				} else if (si.op == PTRACE_SYSCALL_INFO_EXIT && flush_in) {
					/* a signal for delivery at this system call's exit */
					flush_in = 0;
					flushes++;
					if (ptrace(PTRACE_CONT, p, 0, SIGUSR1))
						die("PTRACE_CONT");
					continue;
				}
			} else if (WSTOPSIG(st) == SIGUSR1) {
				sig = SIGUSR1;	/* delivered: the round runs on without stops */
				armed = 0;
				if (ptrace(PTRACE_CONT, p, 0, sig))
					die("PTRACE_CONT");
				continue;
			} else if (WSTOPSIG(st) != SIGTRAP) {
				sig = WSTOPSIG(st);
			}
			if (ptrace(PTRACE_SYSCALL, p, 0, sig))
				die("PTRACE_SYSCALL");
		}
		if (read(done_r, &c, 1) != 1)
			die("read");
	}
	fprintf(stderr, "sigflush: tracer: a signal at %lu flushes, %lu rounds without one\n",
		flushes, missed);
	_exit(0);
}

int main(int argc, char **argv)
{
	unsigned long rounds, main_calls = 1000, r;
	int go[2], done[2];
	pid_t me = getpid(), t;
	char c;

	if (argc < 2) {
		fprintf(stderr, "usage: sigflush ROUNDS [MAIN_CALLS [HANDLER_CALLS [rise [SWITCH_AT]]]]\n");
		return 2;
	}
	rounds = strtoul(argv[1], NULL, 0);
	if (argc > 2)
		main_calls = strtoul(argv[2], NULL, 0);
	if (argc > 3)
		handler_calls = strtoul(argv[3], NULL, 0);
	rising = argc > 4 && !strcmp(argv[4], "rise");
	if (argc > 5)
		switch_at = strtoul(argv[5], NULL, 0);
	if (signal(SIGUSR1, on_usr1) == SIG_ERR)
		die("signal");
	if (pipe(go) || pipe(done))
		die("pipe");
	t = fork();
	if (t < 0)
		die("fork");
	if (!t)
		tracer(me, go[1], done[0], done[1], rounds);
	for (r = 0; r < rounds; r++) {
		if (read(go[0], &c, 1) != 1)
			die("read");
		sf_calls(main_calls);
		if (write(done[1], "d", 1) != 1)
			die("write");
	}
	if (waitpid(t, NULL, 0) < 0)
		die("waitpid");
	printf("calls %lu\nsignals %lu\n", calls, signals);
	return 0;
}
