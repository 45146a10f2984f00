// SPDX-License-Identifier: GPL-2.0
/*
 * A hardened server in small (issue 39): it starts, calls work() for a
 * while, then filters its own system calls, as servers do once set up,
 * and calls work() on. The filter kills the process for system calls
 * 420-422, standing for "not on its allow-list" (what a default-deny
 * filter does to any number it does not know).
 *
 *	seccompw [MODE [MS [GO]]] OUT
 *
 * MODE: seccomp (seccomp(2), the calling thread), prctl
 * (prctl(PR_SET_SECCOMP)), tsync (seccomp(2) with
 * SECCOMP_FILTER_FLAG_TSYNC while a second thread calls work() too),
 * int80 (seccomp through int $0x80, the i386 entry, which a 64-bit
 * process may use: its sock_fprog in the 32-bit layout, below 4 GiB in
 * the static program), sud (no filter: syscall user dispatch, as
 * emulators and sandboxes turn it on, blocking every system call made
 * while work() runs, the way they block all but their own code's:
 * one from a trampoline, or from uprobes' return trampoline, would be a
 * SIGSYS, which kills it), sud-early (the same, dispatch on from the
 * start: a tracer attaches by pid to a process under dispatch already),
 * fork (the process forks a child that installs the filter, as seccomp(2),
 * and calls work() AFTER times, while the parent waits; then the parent
 * calls work() AFTER times: OUT says how the child ended, OUT.c what the
 * child found in the trampolines' mappings right after its filter, OUT.a
 * what the parent found there once the child ended).
 * late (seccomp(2) whose sock_fprog lies in a page userfaultfd holds
 * until GO exists: the call is inside the kernel, past its entry, while a
 * tracer attaches by pid; the first hook's race, made as wide as the test
 * wants; exits 4 where the kernel has no userfaultfd).
 * going (seccomp(2) MS milliseconds after the file GO reads "going": with
 * GO /sys/module/xprobes/initstate, while rmmod of xprobes is under way
 * and its hooks may still be in).
 * It filters once MS milliseconds (300) have passed since its start and,
 * with GO, once the file GO exists (a tracer attached by pid first).
 * After the filter it calls work() AFTER (400) times, 1 ms apart. A process
 * that had user hooks (xprobes' trampolines mapped) first waits, up to
 * 60 s, for a uprobe's int3 at work()'s entry: the tracer's takeover,
 * which on a slow kernel (6.1-rt in the emulator) once took longer than
 * those 400 calls, and the calls after the filter then went uncounted
 * (the process had exited: the attach failed with ESRCH); not in mode
 * going, nor with SECCOMPW_NO_TAKEOVER in the environment (hooks added by
 * hand, no tracer to take over). The int3 comes with the first of the
 * function's probes (on 6.1, without uprobe_multi, its uretprobe; the
 * entry probe's attach follows, and on 6.1-rt in the emulator once came
 * after the process had made its 400 calls and exited: ESRCH, CI of
 * 2026-12-04): with SECCOMPW_GO set to a path, it then also waits, up to
 * 60 s, for that file, which the test makes once trace says how the
 * takeover went. OUT.w: how long it waited in all, in ms ("-"
 * when it did not). OUT gets what does not
 * depend on timing (those calls, their sum); OUT.n the calls of work() in
 * all, for a tracer's count, and OUT.b those made before the filter.
 * OUT.a: what it finds in the mappings of xprobes' trampolines right after
 * the filter went in: "syscalls N muted M", N its system calls 420-422
 * still there (mov $nr, %eax; syscall), M those the module made harmless
 * (mov $nr, %eax; cmp $5, %al); 0 0 untraced or in fallback mode.
 * Built static too (seccompw_static).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define AFTER	400	/* calls after the filter, per thread */

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH	59
#define PR_SYS_DISPATCH_ON		1
#endif
#ifndef SYSCALL_DISPATCH_FILTER_ALLOW
#define SYSCALL_DISPATCH_FILTER_ALLOW	0
#define SYSCALL_DISPATCH_FILTER_BLOCK	1
#endif

/* sud: the selector the kernel reads at each system call */
static volatile char selector = SYSCALL_DISPATCH_FILTER_ALLOW;

static volatile long sink;
static long calls[2];	/* by thread: the main one, the second (tsync) */

/* No lock or segment prefix at its entry: a uprobe takes it (fallback). */
__attribute__((noinline)) long work(long i, long *count)
{
	++*count;
	sink += i;
	return i * 3 + 1;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* struct compat_sock_fprog, for int $0x80 */
struct fprog32 {
	unsigned short len;
	unsigned int filter;
};	/* len at 0, filter at 4, as in the kernel */

static struct sock_filter filter32[8];
static struct fprog32 prog32;

static long seccomp_int80(struct sock_filter *f, unsigned short len)
{
	long r;

	memcpy(filter32, f, len * sizeof(*f));
	prog32.len = len;
	prog32.filter = (unsigned int)(unsigned long)filter32;
	if ((unsigned long)&prog32 >> 32 || (unsigned long)filter32 >> 32) {
		errno = EFAULT;		/* not the static, non-PIE program */
		return -1;
	}
	__asm__ volatile("int $0x80" : "=a"(r)
			 : "0"(354L), "b"(SECCOMP_SET_MODE_FILTER), "c"(0L),
			   "d"((unsigned long)&prog32) : "memory");
	if (r < 0) {
		errno = -r;
		return -1;
	}
	return r;
}

/* going: does @path read "going"? */
static int says_going(const char *path)
{
	char buf[16] = "";
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return !strncmp(buf, "going", 5);
}

/* late: the page the filter's sock_fprog lies in, filled once GO exists */
static struct {
	int uffd;
	char *page;
	long size;
	const char *go;
	char *fill;
} late;

static void *late_fill(void *arg)
{
	struct uffdio_copy c = { .len = late.size };
	struct uffd_msg m;

	if (read(late.uffd, &m, sizeof(m)) != sizeof(m))	/* the kernel's read of the page */
		return NULL;
	while (access(late.go, F_OK))
		usleep(1000);
	c.dst = (unsigned long)late.page;
	c.src = (unsigned long)late.fill;
	if (ioctl(late.uffd, UFFDIO_COPY, &c))
		perror("seccompw: UFFDIO_COPY");
	return NULL;
}

/* A sock_fprog for @f at late.page, which faults until GO exists. */
static struct sock_fprog *late_prog(const struct sock_filter *f, unsigned short len)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	struct sock_fprog *prog;
	pthread_t th;

	late.size = sysconf(_SC_PAGESIZE);
	late.uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
	if (late.uffd < 0 || ioctl(late.uffd, UFFDIO_API, &api)) {
		fprintf(stderr, "seccompw: userfaultfd: %s\n", strerror(errno));
		exit(4);
	}
	late.page = mmap(NULL, late.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	late.fill = calloc(1, late.size);
	if (late.page == MAP_FAILED || !late.fill)
		exit(1);
	reg.range.start = (unsigned long)late.page;
	reg.range.len = late.size;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(late.uffd, UFFDIO_REGISTER, &reg)) {
		fprintf(stderr, "seccompw: UFFDIO_REGISTER: %s\n", strerror(errno));
		exit(4);
	}
	prog = (struct sock_fprog *)late.fill;
	prog->len = len;
	prog->filter = (struct sock_filter *)(late.page + 64);
	memcpy(late.fill + 64, f, len * sizeof(*f));
	if (pthread_create(&th, NULL, late_fill, NULL))
		exit(1);
	return (struct sock_fprog *)late.page;
}

static void install(const char *mode)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 420, 0, 2),
		BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, 422, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	long r;

	if (!strcmp(mode, "sud")) {
		/* no region of its own: the selector alone says (offset 0, length 0) */
		if (prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, 0, 0, &selector)) {
			fprintf(stderr, "seccompw: syscall user dispatch: %s\n", strerror(errno));
			exit(1);
		}
		return;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		perror("seccompw: no_new_privs");
		exit(1);
	}
	if (!strcmp(mode, "prctl"))
		r = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
	else if (!strcmp(mode, "late"))
		r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, late_prog(f, prog.len));
	else if (!strcmp(mode, "int80"))
		r = seccomp_int80(f, prog.len);
	else
		r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			    !strcmp(mode, "tsync") ? SECCOMP_FILTER_FLAG_TSYNC : 0, &prog);
	if (r) {
		fprintf(stderr, "seccompw: filter (%s): %s\n", mode, strerror(errno));
		exit(1);
	}
}

/*
 * The trampolines' mappings ("[xprobes-uhooks]" in maps), read in place.
 * Returns how many there are.
 */
static int scan_areas(long *live, long *muted)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int areas = 0;

	*live = *muted = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, nr;
		const unsigned char *p;

		if (!strstr(line, "xprobes-uhooks") || sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		areas++;
		for (p = (const unsigned char *)lo; p + 7 <= (const unsigned char *)hi; p++) {
			if (p[0] != 0xb8 || p[6] != 0x05)
				continue;
			nr = p[1] | p[2] << 8 | (unsigned long)p[3] << 16 | (unsigned long)p[4] << 24;
			if (nr - 420 > 2)
				continue;
			if (p[5] == 0x0f)
				++*live;
			else if (p[5] == 0x3c)
				++*muted;
		}
	}
	fclose(f);
	return areas;
}

/*
 * The tracer's uprobe on work(), as this process runs it: its int3 in
 * the process's copy of the page; then the file $SECCOMPW_GO, if set
 * (the whole takeover in). Returns the ms waited, -1 past 60 s.
 */
static long long await_uprobe(void)
{
	const char *go = getenv("SECCOMPW_GO");
	long long t0 = now_ms();

	while (*(volatile unsigned char *)(void *)work != 0xcc ||
	       (go && access(go, F_OK))) {
		if (now_ms() - t0 > 60000)
			return -1;
		usleep(1000);
	}
	return now_ms() - t0;
}

/* OUT plus @suffix, written as printf() would. */
static int putf(const char *outp, const char *suffix, const char *fmt, ...)
{
	char path[4096];
	va_list ap;
	FILE *out;

	snprintf(path, sizeof(path), "%s%s", outp, suffix);
	out = fopen(path, "w");
	if (!out)
		return -1;
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	return fclose(out);
}

#define WAITED_NOT	-2	/* no trampolines: it did not wait */

/* OUT.n, .b, .a and .w (the header says what each holds). */
static int put_figures(const char *outp, long n, long before, long live, long muted,
		       long long waited)
{
	if (putf(outp, ".n", "%ld\n", n) || putf(outp, ".b", "%ld\n", before) ||
	    putf(outp, ".a", "syscalls %ld muted %ld\n", live, muted))
		return -1;
	if (waited == WAITED_NOT)
		return putf(outp, ".w", "-\n");
	if (waited < 0)
		return putf(outp, ".w", "no uprobe in 60 s\n");
	return putf(outp, ".w", "%lld\n", waited);
}

static int fork_mode(const char *outp, long long start, long long ms)
{
	long i, sum = 0, live, muted, before;
	char ended[64];
	int status;
	pid_t pid;

	while (now_ms() - start < ms) {
		work(0, &calls[0]);
		usleep(1000);
	}
	before = calls[0];
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		install("seccomp");
		scan_areas(&live, &muted);
		if (putf(outp, ".c", "syscalls %ld muted %ld\n", live, muted))
			_exit(1);
		for (i = 0; i < AFTER; i++) {
			sum += work(i, &calls[0]);
			usleep(1000);
		}
		_exit(sum == 3L * AFTER * (AFTER - 1) / 2 + AFTER ? 0 : 3);
	}
	if (waitpid(pid, &status, 0) != pid)
		return 1;
	if (WIFEXITED(status))
		snprintf(ended, sizeof(ended), "exit %d", WEXITSTATUS(status));
	else
		snprintf(ended, sizeof(ended), "signal %d", WTERMSIG(status));
	scan_areas(&live, &muted);
	for (i = 0; i < AFTER; i++) {
		sum += work(i, &calls[0]);
		usleep(1000);
	}
	if (putf(outp, "", "fork: the filtered child ended: %s; then %d calls: sum %ld\n",
		 ended, AFTER, sum) ||
	    put_figures(outp, calls[0], before, live, muted, WAITED_NOT))
		return 1;
	return 0;
}

static volatile int phase;	/* tsync: 1 filtered, 2 done */

/* work(); sud: with every system call blocked meanwhile */
static long work_blocked(long i, long *count, int sud)
{
	long r;

	if (sud)
		selector = SYSCALL_DISPATCH_FILTER_BLOCK;
	r = work(i, count);
	if (sud)
		selector = SYSCALL_DISPATCH_FILTER_ALLOW;
	return r;
}

static void *second(void *arg)
{
	long i, sum = 0;

	while (!phase)
		work(1, &calls[1]);
	for (i = 0; i < AFTER; i++)
		sum += work(i, &calls[1]);
	*(long *)arg = sum;
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 2 ? argv[1] : "seccomp";
	long long start = now_ms(), ms = argc > 3 ? atoll(argv[2]) : 300;
	const char *go = argc > 4 ? argv[3] : NULL;
	int is_late = !strcmp(mode, "late"), going = !strcmp(mode, "going");
	const char *outp = argv[argc - 1];
	int early = !strcmp(mode, "sud-early");
	long i, sum = 0, sum2 = 0, before, live, muted;
	long long waited = WAITED_NOT;
	int hooked;
	pthread_t th;

	if (argc < 2) {
		fprintf(stderr, "usage: seccompw [seccomp|prctl|tsync|int80|late|going|sud|sud-early|fork "
			"[MS [GO]]] OUT\n");
		return 2;
	}
	if (!strcmp(mode, "fork"))
		return fork_mode(outp, start, ms);
	if (!strcmp(mode, "tsync") && pthread_create(&th, NULL, second, &sum2))
		return 1;
	if (early)
		install("sud");
	if (is_late) {
		late.go = go ? go : "/";
		go = NULL;
	}
	while (going ? !says_going(go) : now_ms() - start < ms || (go && access(go, F_OK))) {
		work_blocked(0, &calls[0], early);
		usleep(1000);
		if (going && now_ms() - start > 60000) {
			fprintf(stderr, "seccompw: %s never read \"going\" in 60 s\n", go);
			return 5;
		}
	}
	for (start = now_ms(); going && now_ms() - start < ms; usleep(1000))
		work(0, &calls[0]);	/* going: MS after the word */
	before = calls[0] + __atomic_load_n(&calls[1], __ATOMIC_RELAXED);
	hooked = !early && scan_areas(&live, &muted);
	if (!early)
		install(mode);
	scan_areas(&live, &muted);
	/* (going, or SECCOMPW_NO_TAKEOVER set: hooks but no tracer to take over) */
	if (hooked && !going && !getenv("SECCOMPW_NO_TAKEOVER"))
		waited = await_uprobe();
	phase = 1;
	for (i = 0; i < AFTER; i++) {
		sum += work_blocked(i, &calls[0], early || !strcmp(mode, "sud"));
		usleep(1000);
	}
	if (!strcmp(mode, "tsync") && pthread_join(th, NULL))
		return 1;
	if (putf(outp, "", "filtered (%s), then %d calls: sum %ld\n", mode, AFTER, sum + sum2) ||
	    put_figures(outp, calls[0] + calls[1], before, live, muted, waited))
		return 1;
	return 0;
}
