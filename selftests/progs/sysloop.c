// SPDX-License-Identifier: GPL-2.0
/*
 * sysloop: make one system call a known number of times, on cue.
 *   sysloop [-g] [-e] [-n N] [-t THREADS] [-i USEC] [-s USEC] [-p NICE] [-f PRIO] [-c CPU] SYSCALL
 *   -g  print "ready" and wait for SIGUSR1 before the loop
 *   -e  after the loop print "done N" and wait for SIGUSR1 before exiting
 *   -n  number of calls per thread (0: until SIGTERM)           default 1000
 *   -t  run the loop in THREADS threads (they share the mm)     default 1
 *   -i  sleep USEC microseconds after every 100 calls (a paced loop)
 *   -s  nanosleep's length, USEC microseconds                  default 1
 *   -p  run at nice level PRIO (-20: first on a busy CPU)
 *   -f  run as SCHED_FIFO at PRIO, then (-c) on CPU: a loop that takes the
 *       CPU from any task there at once, and keeps it from them
 *   -c  run on CPU only (after -f's policy is set)
 *   -d  the block device dread reads                  default /dev/nullb0
 * SYSCALL: getppid, getpid, getuid, getgid, close (close(-1)), spin (no
 * system call at all: a busy loop in user space), selfsig (kill() of
 * itself with SIGUSR2, which it ignores: the signal-generation path),
 * nanosleep (1 us, or -s's: the thread sleeps, one switch away from it at least),
 * or dread (pread() of 4 KiB from the device opened O_DIRECT: one block
 * request a call, its offset the next 4 KiB of the first MiB)
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

static long nr = SYS_getppid, arg = 0;
static int spin, dread_fd = -1;
static const char *dev = "/dev/nullb0";
static char dread_buf[4096] __attribute__((aligned(4096)));
static unsigned int pace_us;
static unsigned long sleep_us = 1;
static unsigned long count = 1000;
static volatile sig_atomic_t stop;

static void on_term(int sig) { (void)sig; stop = 1; }

static void wait_usr1(sigset_t *set)
{
	int sig;

	sigwait(set, &sig);
}

static void *loop(void *unused)
{
	unsigned long i;

	(void)unused;
	for (i = 0; (count == 0 || i < count) && !stop; i++) {
		if (spin) {
			__asm__ volatile("" ::: "memory");
		} else if (nr == SYS_nanosleep) {
			struct timespec ts = { sleep_us / 1000000, sleep_us % 1000000 * 1000 };

			syscall(nr, &ts, NULL);
		} else if (nr == SYS_pread64) {
			if (pread(dread_fd, dread_buf, sizeof(dread_buf),
				  (off_t)(i % 256) * sizeof(dread_buf)) != sizeof(dread_buf)) {
				perror("sysloop: pread");
				exit(1);
			}
		} else if (nr == SYS_kill)
			syscall(nr, getpid(), arg);
		else
			syscall(nr, arg);
		if (pace_us && i % 100 == 99)
			usleep(pace_us);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int opt, go = 0, end = 0, threads = 1, i, fifo = 0, cpu = -1;
	pthread_t tids[64];
	sigset_t set;

	while ((opt = getopt(argc, argv, "gen:t:i:s:p:d:f:c:")) != -1) {
		switch (opt) {
		case 'g': go = 1; break;
		case 'e': end = 1; break;
		case 'n': count = strtoul(optarg, NULL, 0); break;
		case 't': threads = atoi(optarg); break;
		case 'i': pace_us = strtoul(optarg, NULL, 0); break;
		case 's': sleep_us = strtoul(optarg, NULL, 0); break;
		case 'd': dev = optarg; break;
		case 'f': fifo = atoi(optarg); break;
		case 'c': cpu = atoi(optarg); break;
		case 'p':
			if (setpriority(PRIO_PROCESS, 0, atoi(optarg))) {
				perror("sysloop: setpriority");
				return 1;
			}
			break;
		default: return 2;
		}
	}
	if (fifo) {
		struct sched_param sp = { .sched_priority = fifo };

		if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
			perror("sysloop: sched_setscheduler");
			return 1;
		}
	}
	if (cpu >= 0) {
		cpu_set_t cs;

		CPU_ZERO(&cs);
		CPU_SET(cpu, &cs);
		if (sched_setaffinity(0, sizeof(cs), &cs)) {
			perror("sysloop: sched_setaffinity");
			return 1;
		}
	}
	if (optind < argc) {
		const char *s = argv[optind];

		if (!strcmp(s, "getppid")) nr = SYS_getppid;
		else if (!strcmp(s, "getpid")) nr = SYS_getpid;
		else if (!strcmp(s, "getuid")) nr = SYS_getuid;
		else if (!strcmp(s, "getgid")) nr = SYS_getgid;
		else if (!strcmp(s, "close")) { nr = SYS_close; arg = -1; }
		else if (!strcmp(s, "spin")) spin = 1;
		else if (!strcmp(s, "selfsig")) { nr = SYS_kill; arg = SIGUSR2; }
		else if (!strcmp(s, "nanosleep")) nr = SYS_nanosleep;
		else if (!strcmp(s, "dread")) nr = SYS_pread64;
		else { fprintf(stderr, "sysloop: unknown syscall %s\n", s); return 2; }
	}
	if (threads < 1 || threads > 64)
		return 2;
	if (nr == SYS_pread64) {
		dread_fd = open(dev, O_RDONLY | O_DIRECT);
		if (dread_fd < 0) {
			fprintf(stderr, "sysloop: cannot open %s with O_DIRECT: %m\n", dev);
			return 1;
		}
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGTERM, on_term);
	signal(SIGUSR2, SIG_IGN);
	if (go) {
		printf("ready %d\n", getpid());
		fflush(stdout);
		wait_usr1(&set);
	}
	if (threads == 1) {
		loop(NULL);	/* in the main thread: its tid is the pid */
	} else {
		for (i = 0; i < threads; i++)
			pthread_create(&tids[i], NULL, loop, NULL);
		for (i = 0; i < threads; i++)
			pthread_join(tids[i], NULL);
	}
	if (end) {
		printf("done %lu\n", count * threads);
		fflush(stdout);
		wait_usr1(&set);
	}
	return 0;
}
