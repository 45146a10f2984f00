// SPDX-License-Identifier: GPL-2.0
/*
 * workload SCENARIO [-n CALLS] [-t MS] [-d DEVICE]: ground truth for
 * xprobectl trace. Each call of xw_request() runs xw_prepare() (MS/4 of CPU)
 * and xw_delay(), where the scenario injects about MS milliseconds of one
 * kind of time:
 *
 *   baseline  MS of CPU               work   2*MS of CPU
 *   cpu       MS of CPU, with a busy process pinned to the same CPU (runq)
 *   lock      waits MS on a mutex another thread holds             (lock)
 *   io        O_DIRECT|O_DSYNC 4 KiB writes to DEVICE for MS        (io)
 *   disk      io, with a second process writing the same disk       (io)
 *   sleep     nanosleep MS                                          (sleep)
 *   net       a request on a socket answered after MS               (net)
 *   longjmp   xw_jump() longjmps out of xw_deep(); xw_delay sleeps MS
 *   recurse   xw_recurse() 40 deep, then sleeps MS
 *   threads   every call runs on a new thread (created, joined); MS of CPU
 *
 * Prints what it injected ("truth ...") on stderr when done: the wall time
 * around the xw_delay() calls (delay_wall_ns, taken by the caller), the wall
 * time inside them (delay_in_ns, taken by xw_delay itself), the CPU time the
 * threads spent in them, and how many disk writes they made. A tracer's
 * entry and return probes fire between the two clocks, so what it measures
 * must lie between delay_in_ns and delay_wall_ns, however slow the probes.
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/wait.h>

#define NOINLINE __attribute__((noinline, used))

static const char *scenario = "baseline", *device = "/dev/vda";
static long ms = 20;
static int calls = 10;
static volatile unsigned long sink;

static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static volatile int lock_held, lock_want;
static int sock[2], disk_fd = -1;
static void *iobuf;
static jmp_buf jb;

static long long now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Burn N ns of this thread's CPU time, however long that takes in wall time. */
static NOINLINE void spin_cpu(long long n)
{
	long long end = now_ns(CLOCK_THREAD_CPUTIME_ID) + n;

	while (now_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 1000; i++)
			sink += i;
}

static void sleep_ns(long long n)
{
	struct timespec ts = { n / 1000000000LL, n % 1000000000LL };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void *lock_holder(void *arg)
{
	(void)arg;
	for (;;) {
		while (!lock_want)
			sched_yield();
		pthread_mutex_lock(&mtx);
		lock_want = 0;
		lock_held = 1;
		sleep_ns(ms * 1000000LL);	/* hold it without using the CPU */
		lock_held = 0;
		pthread_mutex_unlock(&mtx);
	}
	return NULL;
}

static void *net_server(void *arg)
{
	char c;

	(void)arg;
	while (read(sock[1], &c, 1) == 1) {
		sleep_ns(ms * 1000000LL);
		if (write(sock[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

static void pin_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void disk_write(long long off)
{
	if (pwrite(disk_fd, iobuf, 4096, off) != 4096) {
		perror("workload: pwrite");
		exit(1);
	}
}

/* Writes xw_delay() made (io, disk): to compare the wait per request. */
static long disk_writes;

/* I/O until MS have passed: each write waits for the (throttled) device. */
static void io_for_ms(void)
{
	long long end = now_ns(CLOCK_MONOTONIC) + ms * 1000000LL;
	static long long off;

	do {
		disk_write(off);
		disk_writes++;
		off = (off + 4096) % (8 << 20);
	} while (now_ns(CLOCK_MONOTONIC) < end);
}

static NOINLINE void xw_jump(int depth)
{
	if (depth)
		xw_jump(depth - 1);
	if (sink != 1)		/* always: keeps the compiler from seeing a loop */
		longjmp(jb, 1);
}

static NOINLINE void xw_deep(void)
{
	xw_jump(3);
	__asm__ volatile("");
}

static NOINLINE int xw_recurse(int n)
{
	volatile char pad[32];	/* a real frame: no tail-recursion elimination */
	int r;

	pad[0] = (char)n;
	if (!n) {
		sleep_ns(ms * 1000000LL);
		return 0;
	}
	r = xw_recurse(n - 1);
	sink += pad[0];
	return r + 1;
}

/* Wall time inside xw_delay(), by its own clock. */
static long long delay_in;

NOINLINE void xw_delay(void)
{
	long long t0 = now_ns(CLOCK_MONOTONIC);
	char c = 'x';

	if (!strcmp(scenario, "baseline") || !strcmp(scenario, "cpu") ||
	    !strcmp(scenario, "threads")) {
		spin_cpu(ms * 1000000LL);
	} else if (!strcmp(scenario, "work")) {
		spin_cpu(2 * ms * 1000000LL);
	} else if (!strcmp(scenario, "lock")) {
		pthread_mutex_lock(&mtx);
		pthread_mutex_unlock(&mtx);
	} else if (!strcmp(scenario, "io") || !strcmp(scenario, "disk")) {
		io_for_ms();
	} else if (!strcmp(scenario, "net")) {
		if (write(sock[0], &c, 1) != 1 || read(sock[0], &c, 1) != 1)
			exit(1);
	} else if (!strcmp(scenario, "recurse")) {
		xw_recurse(40);
	} else {	/* sleep, longjmp */
		sleep_ns(ms * 1000000LL);
	}
	__atomic_add_fetch(&delay_in, now_ns(CLOCK_MONOTONIC) - t0, __ATOMIC_RELAXED);
}

NOINLINE void xw_prepare(void)
{
	spin_cpu(ms * 250000LL);
	__asm__ volatile("");
}

/* CPU time of the calling threads inside xw_delay(), by their own clocks. */
static long long delay_cpu;

NOINLINE long long xw_request(void)
{
	long long t0, t1, c0, c1;

	xw_prepare();
	if (!strcmp(scenario, "longjmp") && !setjmp(jb))
		xw_deep();
	c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	t0 = now_ns(CLOCK_MONOTONIC);
	xw_delay();
	t1 = now_ns(CLOCK_MONOTONIC);
	c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	__atomic_add_fetch(&delay_cpu, c1 - c0, __ATOMIC_RELAXED);
	sink++;
	return t1 - t0;
}

static void *request_thread(void *arg)
{
	*(long long *)arg = xw_request();
	return NULL;
}

/* Never called: must not appear in a report. */
NOINLINE void xw_unused(void)
{
	spin_cpu(1000);
}

int main(int argc, char **argv)
{
	long long delay_wall = 0, total0;
	pthread_t th;
	pid_t helper = 0;
	int c, i;

	while ((c = getopt(argc, argv, "n:t:d:")) != -1) {
		switch (c) {
		case 'n': calls = atoi(optarg); break;
		case 't': ms = atol(optarg); break;
		case 'd': device = optarg; break;
		default:
			fprintf(stderr, "usage: workload SCENARIO [-n CALLS] [-t MS] [-d DEVICE]\n");
			return 2;
		}
	}
	if (optind < argc)
		scenario = argv[optind];

	if (!strcmp(scenario, "cpu")) {
		pin_cpu0();
		helper = fork();
		if (!helper) {
			for (;;)
				sink++;
		}
		sleep_ns(50000000);	/* let the hog get going */
	} else if (!strcmp(scenario, "lock")) {
		pthread_create(&th, NULL, lock_holder, NULL);
	} else if (!strcmp(scenario, "net")) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sock))
			return 1;
		pthread_create(&th, NULL, net_server, NULL);
	} else if (!strcmp(scenario, "io") || !strcmp(scenario, "disk")) {
		disk_fd = open(device, O_WRONLY | O_DIRECT | O_DSYNC);
		if (disk_fd < 0 || posix_memalign(&iobuf, 4096, 4096)) {
			fprintf(stderr, "workload: %s: %s\n", device, strerror(errno));
			return 1;
		}
		memset(iobuf, 0x5a, 4096);
		if (!strcmp(scenario, "disk")) {
			helper = fork();
			if (!helper) {
				for (long long off = 16 << 20;; off = (off + 4096) % (32 << 20))
					disk_write((16 << 20) + off % (16 << 20));
			}
		}
	}

	total0 = now_ns(CLOCK_MONOTONIC);
	for (i = 0; i < calls; i++) {
		if (!strcmp(scenario, "lock")) {
			lock_want = 1;		/* hand the lock over, then contend */
			while (!lock_held)
				sched_yield();
		}
		if (!strcmp(scenario, "threads")) {
			long long d = 0;

			if (pthread_create(&th, NULL, request_thread, &d) || pthread_join(th, NULL))
				return 1;
			delay_wall += d;
			continue;
		}
		delay_wall += xw_request();
	}
	fprintf(stderr, "truth scenario=%s calls=%d ms=%ld delay_wall_ns=%lld delay_in_ns=%lld total_ns=%lld delay_cpu_ns=%lld writes=%ld\n",
		scenario, calls, ms, delay_wall, delay_in, now_ns(CLOCK_MONOTONIC) - total0, delay_cpu,
		disk_writes);
	if (helper > 0) {
		kill(helper, SIGKILL);
		waitpid(helper, NULL, 0);
	}
	return 0;
}
