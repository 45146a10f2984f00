// SPDX-License-Identifier: GPL-2.0
/*
 * slowcalls: ordinary syscalls with a known few made slow, the ground truth
 * for xprobectl latency.
 *
 *   slowcalls [-n ROUNDS] [-e EVERY] [-s MS] [-d BLOCKDEV] [-g]
 *
 * Each round makes ordinary calls: a write to /dev/null, a byte through a
 * pipe and back (write, read), and with -d an fsync of the block device with
 * nothing dirty. Every EVERY-th round (after the first 200) is slow: a read
 * of a pipe whose writer, a helper thread, waits MS after the reader is
 * asleep in it, so the read lasts at least MS (a slow pipe reader) and, with -d, an fsync that has a dirty 4 KiB page to write to a
 * device that takes MS per request (null_blk with completion_nsec).
 * -g: print "ready" and wait for SIGUSR1 before starting.
 * Prints "truth slow_reads R slow_fsyncs F rounds N" when done, then
 * "jitter J of C ordinary calls", the ordinary calls that this machine made
 * slow by itself: C calls timed here (the TSC around each), J of them at
 * least 4 times the median of their kind. A tracer that reports ordinary
 * calls 2^3 times above their normal should report about that many, and a
 * busy host (a vCPU descheduled mid-call) raises both counts together.
 * ordinary_round(), slow_read() and slow_fsync() make the calls their names
 * say, for 'xprobectl trace --latency' to name.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

static int late[2];		/* the helper writes here after a delay */
static int go_fd[2];		/* and is told when through this one */
static int slow_ms = 30;
static char main_syscall[64];	/* /proc/self/task/MAIN/syscall */

/*
 * The ordinary calls' own durations, in TSC ticks (not clock_gettime: on a
 * guest whose TSC the kernel distrusts that is a syscall, one more for the
 * tracer to see). Only their ratios to the median matter.
 */
enum { K_NULL, K_PIPE_W, K_PIPE_R, K_FSYNC, K_KINDS };
static unsigned long long *took[K_KINDS];
static int ntook;			/* rounds timed */

static void die(const char *what)
{
	fprintf(stderr, "slowcalls: %s: %s\n", what, strerror(errno));
	exit(1);
}

/*
 * Is the main thread asleep in read(2)? /proc/.../syscall shows the number
 * of the syscall a task is blocked in ("running" while it runs).
 */
static bool main_in_read(void)
{
	char buf[32] = "";
	int fd = open(main_syscall, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		die("open syscall");
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 2 && !strncmp(buf, "0 ", 2);
}

/*
 * The delay starts once the main thread sleeps in its read, not when it asks
 * for it: a main thread preempted between the two (a busy machine) would
 * otherwise make the read shorter than MS, and the ground truth wrong.
 */
static void *late_writer(void *arg)
{
	struct timespec d = { slow_ms / 1000, (slow_ms % 1000) * 1000000L };
	struct timespec poll = { 0, 100000 };
	char c;

	(void)arg;
	while (read(go_fd[0], &c, 1) == 1) {
		while (!main_in_read())
			nanosleep(&poll, NULL);
		nanosleep(&d, NULL);
		if (write(late[1], "x", 1) != 1)
			die("write late");
	}
	return NULL;
}

/* Global and noinline: each keeps its own symbol for uprobes. */
__attribute__((noinline)) void ordinary_round(int nul, int pip[2], int dev, const char *page)
{
	unsigned long long t[5];
	int i = ntook++;
	char b;

	t[0] = __rdtsc();
	if (write(nul, page, 64) != 64)
		die("write /dev/null");
	t[1] = __rdtsc();
	if (write(pip[1], "y", 1) != 1)
		die("write pipe");
	t[2] = __rdtsc();
	if (read(pip[0], &b, 1) != 1)
		die("read pipe");
	t[3] = __rdtsc();
	if (dev >= 0 && fsync(dev))
		die("fsync");
	t[4] = __rdtsc();
	took[K_NULL][i] = t[1] - t[0];
	took[K_PIPE_W][i] = t[2] - t[1];
	took[K_PIPE_R][i] = t[3] - t[2];
	took[K_FSYNC][i] = t[4] - t[3];
}

static int cmp_ull(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

/* Ordinary calls of kinds 0..kinds-1 at least 4 times their kind's median. */
static int jitter(int kinds)
{
	int k, i, n = 0;

	for (k = 0; k < kinds; k++) {
		unsigned long long med;

		qsort(took[k], ntook, sizeof(took[k][0]), cmp_ull);
		med = took[k][ntook / 2];
		for (i = 0; i < ntook; i++)
			n += took[k][i] >= 4 * med;
	}
	return n;
}

__attribute__((noinline)) void slow_read(void)
{
	char b;

	if (write(go_fd[1], "g", 1) != 1 || read(late[0], &b, 1) != 1)
		die("slow read");
}

__attribute__((noinline)) void slow_fsync(int dev, const char *page)
{
	if (pwrite(dev, page, 4096, 0) != 4096 || fsync(dev))
		die("slow fsync");
}

static void on_usr1(int sig)
{
	(void)sig;
}

int main(int argc, char **argv)
{
	int rounds = 2000, every = 250, c, i, nul, dev = -1, pip[2];
	int slow_reads = 0, slow_fsyncs = 0;
	const char *devpath = NULL;
	bool gate = false;
	static char page[4096] __attribute__((aligned(4096)));
	pthread_t th;

	while ((c = getopt(argc, argv, "n:e:s:d:g")) != -1) {
		switch (c) {
		case 'n': rounds = atoi(optarg); break;
		case 'e': every = atoi(optarg); break;
		case 's': slow_ms = atoi(optarg); break;
		case 'd': devpath = optarg; break;
		case 'g': gate = true; break;
		default:
			fprintf(stderr, "usage: slowcalls [-n ROUNDS] [-e EVERY] [-s MS] [-d BLOCKDEV] [-g]\n");
			return 2;
		}
	}
	if (rounds < 1 || every < 1 || slow_ms < 1)
		return 2;
	for (i = 0; i < K_KINDS; i++)
		if (!(took[i] = calloc(rounds, sizeof(took[i][0]))))
			die("calloc");
	nul = open("/dev/null", O_WRONLY);
	if (nul < 0 || pipe(pip) || pipe(late) || pipe(go_fd))
		die("setup");
	if (devpath && (dev = open(devpath, O_RDWR)) < 0)
		die(devpath);
	snprintf(main_syscall, sizeof(main_syscall), "/proc/self/task/%d/syscall", (int)gettid());
	if (pthread_create(&th, NULL, late_writer, NULL))
		die("pthread_create");
	memset(page, 'x', sizeof(page));
	if (gate) {
		sigset_t s, old;

		signal(SIGUSR1, on_usr1);
		sigemptyset(&s);
		sigaddset(&s, SIGUSR1);
		sigprocmask(SIG_BLOCK, &s, &old);
		printf("ready\n");
		fflush(stdout);
		sigsuspend(&old);
	}
	for (i = 0; i < rounds; i++) {
		ordinary_round(nul, pip, dev, page);
		if (i < 200 || i % every)
			continue;
		/* The slow ones. */
		slow_read();
		slow_reads++;
		if (dev >= 0) {
			slow_fsync(dev, page);
			slow_fsyncs++;
		}
	}
	printf("truth slow_reads %d slow_fsyncs %d rounds %d\n", slow_reads, slow_fsyncs, rounds);
	i = dev >= 0 ? K_KINDS : K_FSYNC;
	printf("jitter %d of %d ordinary calls\n", jitter(i), i * ntook);
	fflush(stdout);
	if (gate) {	/* stay until told, so the tracer can read the summary */
		sigset_t s;

		sigemptyset(&s);
		sigsuspend(&s);
	}
	return 0;
}
