// SPDX-License-Identifier: GPL-2.0
/*
 * cxxthrow: C++ exceptions and stack readers through functions that a
 * tracer probes with their returns (issue 39). Traced or not, it must
 * print the same lines and end the same way.
 *
 *   cxxthrow MODE OUT     (writes its lines to the file OUT)
 *
 * MODE: one    thrower() throws one call in three, through middle(), to a
 *              catch in main()
 *       deep   the same through 20 frames of deep()
 *       rethrow  a catch in middle_rethrow() rethrows to main()
 *       nested   nested try blocks, the inner one catching another type
 *       cleanup  with_cleanup()'s local object calls helper() from its
 *                destructor while the exception goes through (a landing pad,
 *                then _Unwind_Resume())
 *       tail   tailer() tail-calls middle(), which throws: the return slot
 *              holds a thunk that returns into the caller's thunk
 *       tailmix  utail() tail-calls middle(): utail() has no symbol size,
 *              so a tracer gives it a uprobe, not a user hook, and
 *              middle()'s return thunk returns into the uretprobe
 *              trampoline, which has no unwind data either
 *       catcher  catcher() catches what middle() throws and goes on to call
 *                middle() again before it returns: its own return comes
 *                after an exception crossed the frames below it
 *       signal spinner() raises SIGUSR1 one call in three; the handler's
 *              sigthrower() throws, through the signal frame and spinner(),
 *              to main()
 *       backtrace  backtrace() from inside traced frames: how many frames
 *       terminate  an exception no one catches (std::terminate, SIGABRT,
 *                  traced or not)
 *       suite  every mode above but terminate, one after the other
 *       late   waits for OUT.go1, enters slow(), says "entered", waits for
 *              OUT.go2, and throws through slow() to main(): a tracer that
 *              detaches in between must leave no return slot rewritten
 * The functions are extern "C", so that -f names them plainly.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <csignal>
#include <execinfo.h>
#include <stdexcept>
#include <unistd.h>

static FILE *out;

extern "C" {
__attribute__((noinline)) int thrower(int i)
{
	if (i % 3 == 0)
		throw std::runtime_error("three");
	return i;
}

__attribute__((noinline)) int middle(int i)
{
	return thrower(i) + 1;
}

__attribute__((noinline)) int deep(int n, int i)
{
	if (!n)
		return middle(i);
	return deep(n - 1, i) + 1;
}

__attribute__((noinline)) int middle_rethrow(int i)
{
	try {
		return middle(i);
	} catch (const std::runtime_error &) {
		fprintf(out, "rethrow %d\n", i);
		throw;
	}
}

__attribute__((noinline)) int inner(int i)
{
	try {
		if (i % 2)
			throw std::logic_error("odd");
		return middle(i);
	} catch (const std::logic_error &) {
		return -1;
	}
}

__attribute__((noinline)) int helper(int i)
{
	return i + 1;
}

__attribute__((noinline)) int sigthrower(int sig)
{
	throw std::runtime_error("signal");
	return sig;
}

/*
 * raise() is declared noexcept (glibc's __THROW), and a throw through a
 * call the compiler was told cannot throw ends in std::terminate(): called
 * through a pointer of a type that may throw, its call site unwinds.
 */
static int (*volatile raise_p)(int) = raise;

__attribute__((noinline)) int spinner(int i)
{
	if (i % 3 == 0)
		raise_p(SIGUSR1);
	return i;
}

/* No .size: a tracer cannot tell its extent, so it probes it with a uprobe. */
int utail(int i);
asm(".text\n\t.globl utail\n\t.type utail, @function\nutail:\n\tjmp middle\n");

__attribute__((noinline)) int tailer(int i)
{
	return middle(i + 3);	/* a jmp at -O2: middle() returns for it */
}
}

static void on_usr1(int sig)
{
	sigthrower(sig);
}

static long cleaned;

struct guard {
	~guard() { cleaned += helper(1); }
};

extern "C" {
__attribute__((noinline)) int with_cleanup(int i)
{
	guard g;

	return middle(i) + 1;
}

__attribute__((noinline)) int catcher(int i)
{
	int r = 0;

	try {
		r = middle(i);
	} catch (const std::runtime_error &) {
		r = -100;
	}
	return r + middle(1);
}

static volatile int zero;

static void wait_file(const char *path)
{
	while (access(path, F_OK))
		usleep(10000);
}

__attribute__((noinline)) int slow(const char *go)
{
	fprintf(out, "entered\n");
	wait_file(go);
	return middle(0);
}

__attribute__((noinline)) int frames(int n)
{
	void *pcs[64];

	if (n)
		return frames(n - 1) + zero;	/* a real call, not a loop */
	return backtrace(pcs, 64);
}
}

/* One of the modes that return; 2 for an unknown one. */
static int run(const char *mode)
{
	long sum = 0, caught = 0;
	int i;

	if (!strcmp(mode, "backtrace")) {
		fprintf(out, "frames %d\n", frames(5));
		fprintf(out, "frames %d\n", frames(10));
		return 0;
	}
	if (!strcmp(mode, "signal")) {
		struct sigaction sa = {};

		sa.sa_handler = on_usr1;
		sa.sa_flags = SA_NODEFER;	/* the handler is left by a throw, not a return */
		sigaction(SIGUSR1, &sa, NULL);
	}
	for (i = 0; i < 30; i++) {
		try {
			if (!strcmp(mode, "one"))
				sum += middle(i);
			else if (!strcmp(mode, "deep"))
				sum += deep(20, i);
			else if (!strcmp(mode, "rethrow"))
				sum += middle_rethrow(i);
			else if (!strcmp(mode, "nested"))
				sum += inner(i);
			else if (!strcmp(mode, "signal"))
				sum += spinner(i);
			else if (!strcmp(mode, "tail"))
				sum += tailer(i);
			else if (!strcmp(mode, "tailmix"))
				sum += utail(i);
			else if (!strcmp(mode, "cleanup"))
				sum += with_cleanup(i);
			else if (!strcmp(mode, "catcher"))
				sum += catcher(i);
			else
				return 2;
		} catch (const std::exception &e) {
			caught++;
		}
	}
	fprintf(out, "%s sum=%ld caught=%ld cleaned=%ld\n", mode, sum, caught, cleaned);
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const suite[] = {
		"one", "deep", "rethrow", "nested", "tail", "tailmix", "signal", "cleanup", "catcher",
		"backtrace",
	};
	long caught = 0;
	const char *mode;
	unsigned int i;

	if (argc != 3 || !(out = fopen(argv[2], "w"))) {
		fprintf(stderr, "usage: cxxthrow MODE OUT\n");
		return 2;
	}
	setvbuf(out, NULL, _IOLBF, 0);
	mode = argv[1];
	if (!strcmp(mode, "terminate")) {
		fprintf(out, "terminate\n");
		return middle(3);
	}
	if (!strcmp(mode, "late")) {
		char go1[4096], go2[4096];

		snprintf(go1, sizeof(go1), "%s.go1", argv[2]);
		snprintf(go2, sizeof(go2), "%s.go2", argv[2]);
		wait_file(go1);
		try {
			slow(go2);
		} catch (const std::runtime_error &) {
			caught++;
		}
		fprintf(out, "late caught=%ld\n", caught);
		return 0;
	}
	if (strcmp(mode, "suite"))
		return run(mode);
	for (i = 0; i < sizeof(suite) / sizeof(suite[0]); i++)
		if (run(suite[i]))
			return 2;
	return 0;
}
