// SPDX-License-Identifier: GPL-2.0
/*
 * workload SCENARIO [-n CALLS] [-t MS] [-d DEVICE] [-c CGROUP] [-s MS] [-g]: ground truth for
 * xprobectl trace. Each call of xw_request() runs xw_prepare() (MS/4 of CPU)
 * and xw_delay(), where the scenario injects about MS milliseconds of one
 * kind of time:
 *
 *   baseline  MS of CPU               work   2*MS of CPU
 *   cpu       MS of CPU, with a busy process pinned to the same CPU (runq)
 *   lock      waits MS on a mutex another thread holds in xw_hold  (lock)
 *   io        O_DIRECT|O_DSYNC 4 KiB writes to DEVICE for MS        (io)
 *   disk      io, with a second process writing the same disk       (io)
 *   sleep     nanosleep MS                                          (sleep)
 *   wakeup    nanosleep MS, pinned with a thread that spins from the
 *             start of the sleep to 3*MS/2 into it, both SCHED_FIFO at
 *             priority 1 (neither preempts the other): woken, the thread
 *             waits about MS/2 for the CPU             (sleep, then wakeup)
 *             (real-time, so that its timer expires in hard interrupt
 *             context on PREEMPT_RT too; there, a normal task's sleep ends
 *             in the ktimers thread, itself FIFO 1, which the spinner holds
 *             off: the sleep gets longer and nothing waits after the wakeup)
 *   net       a request on a socket answered after MS by xw_reply  (net)
 *   pipe      a request on a pipe answered after MS by another process (net)
 *   quota     2*MS of CPU in the CPU cgroup -c DIR (its cpu.max set by the
 *             caller): runnable, throttled for the rest     (throttled)
 *   fault     major page faults for MS: reads of pages of DEVICE (or a
 *             file) mapped read-only, each touched once, its page cache
 *             dropped first, no readahead                    (io)
 *   klock     a write of one byte to a file whose inode lock (an rwsem)
 *             another thread holds in xw_khold, through a write from
 *             fresh pages of the DEVICE mapping: each a major fault (lock)
 *   mem       anonymous memory touched for MS and until 768 KiB over the
 *             memory.high of the memory cgroup -c DIR (set by the caller),
 *             on CPU 0: the kernel throttles the thread over it
 *             (memory.high's penalty sleep)                   (mem)
 *   longjmp   xw_jump() longjmps out of xw_deep(); xw_delay sleeps MS
 *   recurse   xw_recurse() 40 deep, then sleeps MS
 *   threads   every call runs on a new thread (created, joined); MS of CPU
 *   fork      a server and 2 worker processes it forks: after 300 ms (a
 *             tracer following forks attaches to them meanwhile), or with
 *             -w FILE once FILE exists (the caller makes it when the
 *             tracer says their probes are in; at most 120 s), each
 *             runs the CALLS, xw_delay sleeping MS          (sleep)
 *
 * Prints what it injected ("truth ...", with its pid; fork: one line per
 * process, the workers' first) on stderr when done: the wall time
 * around the xw_delay() calls (delay_wall_ns, taken by the caller), the wall
 * time inside them (delay_in_ns, taken by xw_delay itself), the CPU time the
 * threads spent in them, and how many disk writes they made. A tracer's
 * entry and return probes fire between the two clocks, so what it measures
 * must lie between delay_in_ns and delay_wall_ns, however slow the probes.
 * In quota, delay_throttled_ns is what the cgroup's throttled_usec (its
 * cpu.stat) grew by inside the calls, and delay_throttled_wall_ns what it
 * grew by around them (read by the caller): with one runnable thread in
 * the cgroup, the time that thread waited for quota. A throttle that
 * starts after the call's entry probe but ends before xw_delay's first
 * reading counts in the second only, as the delay_in/delay_wall pair.
 * In wakeup, delay_rundelay_ns is what the kernel's own count of the time
 * the thread waited runnable (sched_info.run_delay, the second field of
 * /proc/thread-self/schedstat) grew by across the sleeps.
 * In fault and klock, faults is the major faults xw_delay (fault) or
 * xw_khold (klock) took (getrusage RUSAGE_THREAD), and pages the pages fault
 * touched (each once: one major fault each, however slow the disk). In mem, delay_memstall_ns
 * is what the cgroup's memory.pressure "some" total grew by across the
 * calls: with one thread in the cgroup, on one CPU, the time it was stalled
 * on memory (reclaim on the CPU included). delay_rundelay_wall_ns is the
 * kernel's run delay of the calling thread around the calls (main thread
 * only: not in threads).
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define NOINLINE __attribute__((noinline, used))

static const char *scenario = "baseline", *device = "/dev/vda", *cgroup;
static long ms = 20, start_ms;	/* -s: wait that long first (in its cgroup) */
static int go_signal;		/* -g: then print "ready" and wait for SIGUSR1 */
static const char *go_file;	/* -w: fork's workers wait for it */
static int calls = 10;
static volatile unsigned long sink;

static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static volatile int lock_held, lock_want, holds_done;
static int sock[2], rsock[2], disk_fd = -1, preq[2], presp[2];
static volatile int waker_tid;		/* who wakes xw_delay: lock, net, pipe */
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

/*
 * lock: the holder thread; its unlock (the waker of xw_delay) is in xw_hold.
 * It holds the mutex until xw_delay waits on it (glibc's lock word is 2
 * once a locker sleeps in the futex), then MS more: however late the main
 * thread gets to its lock (a busy machine preempted it for longer than MS
 * on its way, and found the mutex free: no lock wait at all, 2026-12-06),
 * it waits MS for it. At most 10 s: then it goes on as before.
 */
static void wait_for_waiter(void)
{
	long long end = now_ns(CLOCK_MONOTONIC) + 10000000000LL;

	while (__atomic_load_n(&mtx.__data.__lock, __ATOMIC_RELAXED) < 2 &&
	       now_ns(CLOCK_MONOTONIC) < end)
		sched_yield();
}

NOINLINE void xw_hold(void)
{
	pthread_mutex_lock(&mtx);
	lock_want = 0;
	lock_held = 1;
	wait_for_waiter();
	sleep_ns(ms * 1000000LL);	/* hold it without using the CPU */
	lock_held = 0;
	pthread_mutex_unlock(&mtx);
}

static void *lock_holder(void *arg)
{
	(void)arg;
	waker_tid = gettid();
	for (;;) {
		while (!lock_want)
			sched_yield();
		xw_hold();
		holds_done++;
	}
	return NULL;
}

/*
 * net: the server thread answers in xw_reply (the waker of xw_delay). It
 * sleeps before the call, so that with records its last hand-over (at the
 * sleep) is before it enters xw_reply: only the hand-over at the wakeup
 * itself (trace -W's hook on try_to_wake_up) shows it in xw_reply.
 * Requests and replies go on two socket pairs: on one, the server's read
 * of the request would also wake the client waiting for the reply (AF_UNIX
 * stream sockets wake their writer's waiters when the peer frees what it
 * sent, unix_write_space(), and a reader's wait takes any wakeup), a real
 * wakeup by the server outside xw_reply that this scenario does not count
 * on: seen as 12% of the waits on the debug kernel, where the server is
 * slow to read.
 */
NOINLINE int xw_reply(char c)
{
	return write(rsock[1], &c, 1) == 1;
}

static void *net_server(void *arg)
{
	char c;

	(void)arg;
	waker_tid = gettid();
	while (read(sock[1], &c, 1) == 1) {
		sleep_ns(ms * 1000000LL);
		if (!xw_reply(c))
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

/* wakeup: the hog, a real-time thread on our CPU, and the thread's run_delay. */
static sem_t hog_go;
static int schedstat_fd = -1;

static void *wake_hog(void *arg)
{
	struct sched_param sp = { .sched_priority = 1 };
	long long t0;
	int err;

	(void)arg;
	pin_cpu0();
	err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (err) {
		fprintf(stderr, "workload: SCHED_FIFO: %s\n", strerror(err));
		exit(1);
	}
	for (;;) {
		while (sem_wait(&hog_go))
			;
		/*
		 * It runs once the thread blocks in its sleep, and spins on
		 * past the sleep's end: no timer of its own, whose expiry a
		 * busy host could put after the thread's (a run of 41 in
		 * the 4level-pti suite, two guests on two host CPUs, saw
		 * 1.2 ms of wake-up wait for the 30 it expects).
		 */
		t0 = now_ns(CLOCK_MONOTONIC);
		while (now_ns(CLOCK_MONOTONIC) - t0 < ms * 1500000LL)
			sink++;
	}
	return NULL;
}

static long long run_delay_self(void)
{
	char buf[128];
	ssize_t n = pread(schedstat_fd, buf, sizeof(buf) - 1, 0);
	long long on, wait;

	if (n <= 0)
		exit(1);
	buf[n] = 0;
	if (sscanf(buf, "%lld %lld", &on, &wait) != 2)
		exit(1);
	return wait;
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

/* fault, klock: DEVICE mapped read-only; each page is read once, from the disk. */
static char *devmap;
static size_t devmap_len, devmap_next;
static long majflts;		/* major faults in xw_delay (fault), xw_khold (klock) */
static long fault_pages;	/* pages fault_for_ms touched: each one a major fault */

static void devmap_open(void)
{
	int fd = open(device, O_RDONLY);
	off_t size = fd < 0 ? -1 : lseek(fd, 0, SEEK_END);

	if (size < (off_t)(1 << 20)) {
		fprintf(stderr, "workload: %s: %s\n", device, fd < 0 ? strerror(errno) : "under 1 MiB");
		exit(1);
	}
	devmap_len = size > (1LL << 30) ? 1UL << 30 : (size_t)size;
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);	/* nothing of it cached */
	devmap = mmap(NULL, devmap_len, PROT_READ, MAP_SHARED, fd, 0);
	if (devmap == MAP_FAILED || madvise(devmap, devmap_len, MADV_RANDOM)) {
		perror("workload: mmap");	/* MADV_RANDOM: one page a fault, no readahead */
		exit(1);
	}
	close(fd);
}

/* The next page never touched before. */
static char *devmap_page(void)
{
	char *p = devmap + devmap_next;

	devmap_next += 4096;
	if (devmap_next >= devmap_len) {
		fprintf(stderr, "workload: %s is used up\n", device);
		exit(1);
	}
	return p;
}

static long thread_majflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_majflt;
}

/* fault: a major fault on each new page until MS have passed. */
static void fault_for_ms(void)
{
	long long end = now_ns(CLOCK_MONOTONIC) + ms * 1000000LL;
	long f0 = thread_majflt();

	do {
		sink += *(volatile char *)devmap_page();
		fault_pages++;
	} while (now_ns(CLOCK_MONOTONIC) < end);
	majflts += thread_majflt() - f0;
}

/*
 * klock: the holder writes MS/2 fresh pages of the device mapping (2 ms of
 * the test's disk each) to the file: the write holds the file's inode lock
 * while each page faults in from the disk (the holder is in D then).
 */
static int kfd = -1;
static sem_t kgo;
static volatile int kholding, kdone;

NOINLINE void xw_khold(void)
{
	long n = ms / 2 > 0 ? ms / 2 : 1, f0 = thread_majflt();
	char *p = devmap_page();

	for (long i = 1; i < n; i++)
		devmap_page();		/* the pages after p: they are contiguous */
	kholding = 1;
	if (pwrite(kfd, p, n * 4096, 0) != n * 4096) {
		perror("workload: pwrite");
		exit(1);
	}
	kholding = 0;
	kdone++;
	majflts += thread_majflt() - f0;
}

static void *klock_holder(void *arg)
{
	(void)arg;
	waker_tid = gettid();
	for (;;) {
		while (sem_wait(&kgo))
			;
		xw_khold();
	}
	return NULL;
}

/* klock: is the holder blocked (D) in its write, the inode lock held? */
static int holder_blocked(void)
{
	char path[64], buf[256], *p;
	int fd, n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", waker_tid);
	fd = open(path, O_RDONLY);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		exit(1);
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'D';
}

static void klock_wait(void)
{
	int d0 = kdone;

	sem_post(&kgo);
	while (!kholding || !holder_blocked()) {
		if (kdone != d0) {	/* it was through before we saw it blocked */
			d0 = kdone;
			sem_post(&kgo);
		}
		sched_yield();		/* on the CPU: the only wait is the lock's */
	}
	if (pwrite(kfd, "x", 1, 0) != 1)	/* waits for the inode lock */
		exit(1);
}

/* mem: anonymous memory, 256 KiB (a memcg charge batch) at a time, for MS. */
/* The cgroup's file NAME, open for reading; exits if it cannot be. */
static FILE *cg_open(const char *name)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", cgroup, name);
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "workload: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	return f;
}

static long long cg_memstall(void)
{
	FILE *f = cg_open("memory.pressure");
	long long v = -1;
	char key[16];

	if (fscanf(f, "%15s avg10=%*f avg60=%*f avg300=%*f total=%lld", key, &v) != 2 ||
	    strcmp(key, "some")) {
		fprintf(stderr, "workload: %s/memory.pressure: no 'some' total\n", cgroup);
		exit(1);
	}
	fclose(f);
	return v * 1000;
}

/* A number from the cgroup's file NAME (memory.high, memory.current). */
static long long cg_number(const char *name)
{
	FILE *f = cg_open(name);
	long long v = -1;

	if (fscanf(f, "%lld", &v) != 1) {
		fprintf(stderr, "workload: %s/%s: no number\n", cgroup, name);
		exit(1);
	}
	fclose(f);
	return v;
}

/*
 * Until MS have passed and the cgroup is 768 KiB over memory.high: the
 * kernel throttles the thread on its way back from the faults over it,
 * longer the further over (about 4 jiffies at 512 KiB over 32 MiB, 9 at
 * 768). By amount, not by time alone: a slower machine touches fewer
 * pages in MS and would not get there.
 */
static void mem_for_ms(void)
{
	long long end = now_ns(CLOCK_MONOTONIC) + ms * 1000000LL;
	long long over = cg_number("memory.high") + (768 << 10);
	size_t chunk = 256 << 10, n = 0;
	char *c[4096];

	do {
		c[n] = mmap(NULL, chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (c[n] == MAP_FAILED)
			exit(1);
		for (size_t o = 0; o < chunk; o += 4096)
			c[n][o] = 1;
		n++;
	} while ((now_ns(CLOCK_MONOTONIC) < end || cg_number("memory.current") < over) && n < 4096);
	while (n--)
		munmap(c[n], chunk);
}

/* mem: memory.high less 512 KiB, touched once: each call starts just under it. */
static void mem_ballast(void)
{
	long long high = cg_number("memory.high"), len;
	char *b;

	if (high < (4 << 20)) {
		fprintf(stderr, "workload: mem needs a memory.high of 4 MiB or more in %s\n", cgroup);
		exit(1);
	}
	len = high - cg_number("memory.current") - (512 << 10);
	if (len <= 0)
		return;
	b = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b == MAP_FAILED)
		exit(1);
	for (long long o = 0; o < len; o += 4096)
		b[o] = 1;
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

/* Wall time inside xw_delay(), by its own clock; wakeup: its run_delay; quota: throttled; mem: memstall. */
static long long delay_in, delay_rundelay, delay_throttled, delay_memstall;

/*
 * io, disk: io_for_ms() alone, read inside xw_delay(): its wall, and the
 * thread's CPU time and run delay (schedstat) across it, so that their
 * difference is the time the writes kept the thread off the CPU. The reads
 * go wall, run delay, CPU time before it and CPU time, wall, run delay
 * after: a thread preempted as one of the system calls among them returns
 * waits inside both the wall's and the run delay's span, or inside
 * neither. Until 2026-12-07 selftest 41 took the run delay around the
 * xw_delay() calls, where such a wait after the reads before the call
 * counted as run delay and not as the call's wall: the writes' waits came
 * out short, twice by 20 – 25% in loaded runs.
 */
static long long io_in, io_cpu, io_rundelay;

/* quota: the cgroup's throttled time so far (cpu.stat throttled_usec), in ns. */
static long long cg_throttled(void)
{
	FILE *f = cg_open("cpu.stat");
	long long v, r = -1;
	char key[64];

	while (fscanf(f, "%63s %lld", key, &v) == 2)
		if (!strcmp(key, "throttled_usec"))
			r = v * 1000;
	fclose(f);
	if (r < 0)
		exit(1);
	return r;
}

/* The wall of the calling thread's last xw_delay() or xw_prepare(), by their own clocks. */
static __thread long long kid_in;

NOINLINE void xw_delay(void)
{
	long long t0 = now_ns(CLOCK_MONOTONIC);
	char c = 'x';

	if (!strcmp(scenario, "baseline") || !strcmp(scenario, "cpu") ||
	    !strcmp(scenario, "threads")) {
		spin_cpu(ms * 1000000LL);
	} else if (!strcmp(scenario, "work")) {
		spin_cpu(2 * ms * 1000000LL);
	} else if (!strcmp(scenario, "quota")) {
		long long q0 = cg_throttled();

		spin_cpu(2 * ms * 1000000LL);
		delay_throttled += cg_throttled() - q0;
	} else if (!strcmp(scenario, "lock")) {
		pthread_mutex_lock(&mtx);
		pthread_mutex_unlock(&mtx);
	} else if (!strcmp(scenario, "io") || !strcmp(scenario, "disk")) {
		long long w0 = now_ns(CLOCK_MONOTONIC), r0 = run_delay_self();
		long long c0 = now_ns(CLOCK_THREAD_CPUTIME_ID), c1, w1;

		io_for_ms();
		c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
		w1 = now_ns(CLOCK_MONOTONIC);
		io_rundelay += run_delay_self() - r0;
		io_in += w1 - w0;
		io_cpu += c1 - c0;
	} else if (!strcmp(scenario, "net")) {
		if (write(sock[0], &c, 1) != 1 || read(rsock[0], &c, 1) != 1)
			exit(1);
	} else if (!strcmp(scenario, "pipe")) {
		if (write(preq[1], &c, 1) != 1 || read(presp[0], &c, 1) != 1)
			exit(1);
	} else if (!strcmp(scenario, "wakeup")) {
		long long r0;

		sem_post(&hog_go);	/* it runs when we sleep, and spins past it */
		r0 = run_delay_self();
		sleep_ns(ms * 1000000LL);
		delay_rundelay += run_delay_self() - r0;
	} else if (!strcmp(scenario, "fault")) {
		fault_for_ms();
	} else if (!strcmp(scenario, "klock")) {
		klock_wait();
	} else if (!strcmp(scenario, "mem")) {
		long long m0 = cg_memstall();

		mem_for_ms();
		delay_memstall += cg_memstall() - m0;
	} else if (!strcmp(scenario, "recurse")) {
		xw_recurse(40);
	} else {	/* sleep, longjmp */
		sleep_ns(ms * 1000000LL);
	}
	kid_in = now_ns(CLOCK_MONOTONIC) - t0;
	__atomic_add_fetch(&delay_in, kid_in, __ATOMIC_RELAXED);
}

NOINLINE void xw_prepare(void)
{
	long long t0 = now_ns(CLOCK_MONOTONIC);

	spin_cpu(ms * 250000LL);
	kid_in = now_ns(CLOCK_MONOTONIC) - t0;
	__asm__ volatile("");
}

/* CPU time of the calling threads inside xw_delay(), by their own clocks. */
static long long delay_cpu;

/*
 * quota: the cgroup's throttled time across the calls, read by the caller
 * (outside any probe). The thread runs at both readings, so no throttle
 * of it is in progress then: this bounds what a tracer can see inside.
 */
static long long delay_throttled_wall;
/*
 * The kernel's run delay (schedstat: runnable, not running) of the main
 * thread around its xw_delay() calls: how long a busy machine kept a woken
 * thread off the CPU, which a tracer rightly calls runq or wakeup.
 */
static long long delay_rundelay_wall;
static pthread_t main_thread;
/*
 * xw_request()'s own wall time by the workload's clocks: each call's wall,
 * measured by its caller, less the walls of xw_prepare() and xw_delay()
 * measured around their calls inside it (a tracer's self time for
 * xw_request can exceed this only by its own hooks' cost). An emulator's
 * first pass through a code path, or time stolen from the guest, lands in
 * it as in the tracer's figure, unless it falls between a clock read
 * around a call and the callee's first instruction (or its last and the
 * read after): the tracer gives that to xw_request, the measure around the
 * call to the callee. So request_kids_in takes the callees' walls from
 * inside them: a tracer's self time for xw_request cannot exceed
 * request_wall - request_kids_in but by the two clocks' disagreement
 * (request_self_in_ns).
 */
static long long request_wall, request_kids, request_kids_in;

NOINLINE long long xw_request(void)
{
	long long t0, t1, c0, c1, p0, p1;
	volatile long long q0 = 0, r0 = 0;	/* across the setjmp below */
	int quota = !strcmp(scenario, "quota");
	int rd = pthread_equal(pthread_self(), main_thread);

	p0 = now_ns(CLOCK_MONOTONIC);
	xw_prepare();
	p1 = now_ns(CLOCK_MONOTONIC);
	__atomic_add_fetch(&request_kids_in, kid_in, __ATOMIC_RELAXED);
	if (!strcmp(scenario, "longjmp") && !setjmp(jb))
		xw_deep();
	if (quota)
		q0 = cg_throttled();
	if (rd)
		r0 = run_delay_self();
	c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	t0 = now_ns(CLOCK_MONOTONIC);
	xw_delay();
	t1 = now_ns(CLOCK_MONOTONIC);
	c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	__atomic_add_fetch(&request_kids_in, kid_in, __ATOMIC_RELAXED);
	if (rd)
		delay_rundelay_wall += run_delay_self() - r0;
	if (quota)
		delay_throttled_wall += cg_throttled() - q0;
	__atomic_add_fetch(&delay_cpu, c1 - c0, __ATOMIC_RELAXED);
	__atomic_add_fetch(&request_kids, (p1 - p0) + (t1 - t0), __ATOMIC_RELAXED);
	sink++;
	return t1 - t0;
}

/* xw_request(), its wall added to request_wall */
static long long timed_request(void)
{
	long long t = now_ns(CLOCK_MONOTONIC), d = xw_request();

	__atomic_add_fetch(&request_wall, now_ns(CLOCK_MONOTONIC) - t, __ATOMIC_RELAXED);
	return d;
}

static void *request_thread(void *arg)
{
	*(long long *)arg = timed_request();
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
	pid_t helper = 0, workers[2] = { 0, 0 };
	int c, i;

	while ((c = getopt(argc, argv, "n:t:d:c:s:gw:")) != -1) {
		switch (c) {
		case 's': start_ms = atol(optarg); break;
		case 'g': go_signal = 1; break;
		case 'w': go_file = optarg; break;
		case 'n': calls = atoi(optarg); break;
		case 't': ms = atol(optarg); break;
		case 'd': device = optarg; break;
		case 'c': cgroup = optarg; break;
		default:
			fprintf(stderr, "usage: workload SCENARIO [-n CALLS] [-t MS] [-d DEVICE] [-c CGROUP] "
				"[-s MS] [-g] [-w FILE]\n");
			return 2;
		}
	}
	if (optind < argc)
		scenario = argv[optind];

	if (cgroup) {		/* the whole process, before any thread */
		char path[512];
		FILE *f;

		snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
		f = fopen(path, "w");
		if (!f || fprintf(f, "0\n") < 0 || fclose(f)) {
			fprintf(stderr, "workload: %s: %s\n", path, strerror(errno));
			return 1;
		}
	} else if (!strcmp(scenario, "quota") || !strcmp(scenario, "mem")) {
		fprintf(stderr, "workload: %s needs -c CGROUP\n", scenario);
		return 2;
	}
	if (start_ms)		/* in its cgroup, before anything else: a tracer finds it */
		sleep_ns(start_ms * 1000000LL);
	if (go_signal) {	/* or until told, however long a tracer takes to start */
		sigset_t set;
		int sig;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		fprintf(stderr, "ready\n");
		sigwait(&set, &sig);
	}
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
	} else if (!strcmp(scenario, "wakeup")) {
		struct sched_param sp = { .sched_priority = 1 };

		pin_cpu0();
		if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
			perror("workload: SCHED_FIFO");
			return 1;
		}
		schedstat_fd = open("/proc/thread-self/schedstat", O_RDONLY);
		if (schedstat_fd < 0 || sem_init(&hog_go, 0, 0)) {
			perror("workload: /proc/thread-self/schedstat");
			return 1;
		}
		pthread_create(&th, NULL, wake_hog, NULL);
	} else if (!strcmp(scenario, "net")) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sock) ||
		    socketpair(AF_UNIX, SOCK_STREAM, 0, rsock))
			return 1;
		pthread_create(&th, NULL, net_server, NULL);
	} else if (!strcmp(scenario, "pipe")) {
		/* another process, which calls no traced function */
		if (pipe(preq) || pipe(presp))
			return 1;
		helper = fork();
		if (!helper) {
			char b;

			while (read(preq[0], &b, 1) == 1) {
				sleep_ns(ms * 1000000LL);
				if (write(presp[1], &b, 1) != 1)
					break;
			}
			_exit(0);
		}
		waker_tid = helper;
	} else if (!strcmp(scenario, "fault")) {
		devmap_open();
	} else if (!strcmp(scenario, "klock")) {
		devmap_open();
		kfd = open("/tmp/xw-klock", O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (kfd < 0 || sem_init(&kgo, 0, 0)) {
			perror("workload: /tmp/xw-klock");
			return 1;
		}
		unlink("/tmp/xw-klock");
		pthread_create(&th, NULL, klock_holder, NULL);
		while (!waker_tid)
			sched_yield();
	} else if (!strcmp(scenario, "fork")) {
		for (i = 0; i < 2; i++) {
			workers[i] = fork();
			if (workers[i] < 0)
				return 1;
			if (!workers[i]) {
				workers[0] = workers[1] = 0;	/* a worker has none */
				break;
			}
		}
		sleep_ns(300000000);
		for (i = 0; go_file && !workers[0] && i < 12000 && access(go_file, F_OK); i++)
			sleep_ns(10000000);
	} else if (!strcmp(scenario, "mem")) {
		/*
		 * On one CPU: PSI weighs each CPU's stall by how long that
		 * CPU was busy with the cgroup, so a thread that moves
		 * between CPUs shows less "some" than it stalled.
		 */
		pin_cpu0();
		mem_ballast();
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

	/* here, after the fork scenario's fork: each process its own */
	main_thread = pthread_self();
	if (schedstat_fd < 0)
		schedstat_fd = open("/proc/thread-self/schedstat", O_RDONLY);
	if (schedstat_fd < 0) {
		perror("workload: /proc/thread-self/schedstat");
		return 1;
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
		delay_wall += timed_request();
	}
	for (i = 0; i < 2; i++)		/* fork: the workers' lines first */
		if (workers[i] > 0)
			waitpid(workers[i], NULL, 0);
	fprintf(stderr, "truth pid=%d scenario=%s calls=%d ms=%ld delay_wall_ns=%lld delay_in_ns=%lld total_ns=%lld delay_cpu_ns=%lld writes=%ld delay_rundelay_ns=%lld waker_tid=%d delay_throttled_ns=%lld delay_throttled_wall_ns=%lld faults=%ld delay_memstall_ns=%lld pages=%ld delay_rundelay_wall_ns=%lld request_wall_ns=%lld request_self_ns=%lld request_self_in_ns=%lld io_in_ns=%lld io_cpu_ns=%lld io_rundelay_ns=%lld\n",
		(int)getpid(), scenario, calls, ms, delay_wall, delay_in, now_ns(CLOCK_MONOTONIC) - total0, delay_cpu,
		disk_writes, delay_rundelay, waker_tid, delay_throttled, delay_throttled_wall, majflts,
		delay_memstall, fault_pages, delay_rundelay_wall, request_wall, request_wall - request_kids,
		request_wall - request_kids_in, io_in, io_cpu, io_rundelay);
	/*
	 * lock: the holder may still be between its unlock and its return
	 * from the last xw_hold; exit now and that call never returns. A
	 * tracer has then seen a call that did not end, which is not what
	 * the scenario's truth says.
	 */
	while (!strcmp(scenario, "lock") && holds_done < calls)
		sched_yield();
	if (helper > 0) {
		kill(helper, SIGKILL);
		waitpid(helper, NULL, 0);
	}
	return 0;
}
