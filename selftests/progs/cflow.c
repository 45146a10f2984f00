// SPDX-License-Identifier: GPL-2.0
/*
 * cflow: C control flow that leaves frames without returning, under a
 * tracer that probes functions with their returns (issue 39). Traced or
 * not, it must write the same lines to OUT and end the same way.
 *
 *   cflow MODE OUT
 *
 * MODE: backtrace  backtrace() from 6 traced frames deep; glibc loads
 *                  libgcc_s for it only then (after the tracer attached)
 *       longjmp    jumper() -> deepj() longjmp()s to main() one call in three
 *       siglongjmp spin() raises SIGUSR1, whose handler siglongjmp()s out
 *       swapcontext two coroutines switch stacks inside traced functions
 *       cancel     a thread cancelled inside traced worker() -> waiter(),
 *                  its cleanup handler run on the way (forced unwinding)
 *       exit       pthread_exit() from inside traced frames (the same)
 *       suite      all of them, one after the other
 */
#include <execinfo.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

static FILE *out;
static volatile int zero;

__attribute__((noinline)) int frames(int n)
{
	void *pcs[64];

	if (n)
		return frames(n - 1) + zero;	/* a real call, not a loop */
	return backtrace(pcs, 64);
}

static jmp_buf jb;

__attribute__((noinline)) int deepj(int i)
{
	if (i % 3 == 0)
		longjmp(jb, i + 1);
	return i + zero;
}

__attribute__((noinline)) int jumper(int i)
{
	return deepj(i) + 1;
}

static sigjmp_buf sjb;

static void on_usr1(int sig)
{
	siglongjmp(sjb, sig);
}

__attribute__((noinline)) int spin(int i)
{
	if (i % 2 == 0)
		raise(SIGUSR1);
	return i + zero;
}

static ucontext_t main_ctx, co_ctx[2];
static int co_log[64], co_n;

__attribute__((noinline)) void co_step(int id, int k)
{
	co_log[co_n++] = id * 100 + k;
	swapcontext(&co_ctx[id], id ? &co_ctx[0] : &co_ctx[1]);
}

__attribute__((noinline)) void co_body(int id)
{
	int k;

	for (k = 0; k < 5; k++)
		co_step(id, k);
	co_log[co_n++] = id * 100 + 99;
	setcontext(&main_ctx);
}

static int cleaned;

static void cleanup(void *arg)
{
	cleaned += *(int *)arg;
}

__attribute__((noinline)) int waiter(int how)
{
	if (how)
		pthread_exit(NULL);
	for (;;)
		pause();	/* a cancellation point */
	return zero;
}

__attribute__((noinline)) int worker(int how)
{
	int one = 1, r;

	pthread_cleanup_push(cleanup, &one);
	r = waiter(how) + zero;
	pthread_cleanup_pop(0);
	return r;
}

static void *thread_main(void *arg)
{
	worker((int)(long)arg);
	return NULL;
}

static int run(const char *mode)
{
	volatile long sum = 0;
	int i, r;

	if (!strcmp(mode, "backtrace")) {
		fprintf(out, "frames %d\n", frames(5));
		fprintf(out, "frames %d\n", frames(10));
	} else if (!strcmp(mode, "longjmp")) {
		for (i = 0; i < 30; i++) {
			r = setjmp(jb);
			if (r)
				sum += 1000 * r;
			else
				sum += jumper(i);
		}
		fprintf(out, "longjmp sum=%ld\n", sum);
	} else if (!strcmp(mode, "siglongjmp")) {
		signal(SIGUSR1, on_usr1);
		for (i = 0; i < 30; i++) {
			r = sigsetjmp(sjb, 1);
			if (r)
				sum += 1000;
			else
				sum += spin(i);
		}
		fprintf(out, "siglongjmp sum=%ld\n", sum);
	} else if (!strcmp(mode, "swapcontext")) {
		static char stacks[2][65536];

		for (i = 0; i < 2; i++) {
			getcontext(&co_ctx[i]);
			co_ctx[i].uc_stack.ss_sp = stacks[i];
			co_ctx[i].uc_stack.ss_size = sizeof(stacks[i]);
			co_ctx[i].uc_link = &main_ctx;
			makecontext(&co_ctx[i], (void (*)(void))co_body, 1, i);
		}
		swapcontext(&main_ctx, &co_ctx[0]);
		for (i = 0; i < co_n; i++)
			fprintf(out, "%d%c", co_log[i], i + 1 < co_n ? ' ' : '\n');
	} else if (!strcmp(mode, "cancel") || !strcmp(mode, "exit")) {
		int how = !strcmp(mode, "exit");
		pthread_t t;
		void *res;

		for (i = 0; i < 10; i++) {
			pthread_create(&t, NULL, thread_main, (void *)(long)how);
			if (!how) {
				usleep(20000);
				pthread_cancel(t);
			}
			pthread_join(t, &res);
			sum += res == PTHREAD_CANCELED ? 10 : 1;
		}
		fprintf(out, "%s sum=%ld cleaned=%d\n", mode, sum, cleaned);
	} else {
		fprintf(stderr, "cflow: no mode %s\n", mode);
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const suite[] = {
		"backtrace", "longjmp", "siglongjmp", "swapcontext", "cancel", "exit",
	};
	unsigned int i;

	if (argc != 3 || !(out = fopen(argv[2], "w"))) {
		fprintf(stderr, "usage: cflow MODE OUT\n");
		return 2;
	}
	setvbuf(out, NULL, _IOLBF, 0);
	if (strcmp(argv[1], "suite"))
		return run(argv[1]);
	for (i = 0; i < sizeof(suite) / sizeof(suite[0]); i++)
		if (run(suite[i]))
			return 2;
	return 0;
}
