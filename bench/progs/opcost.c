// SPDX-License-Identifier: GPL-2.0
/*
 * opcost: what the control operations cost, timed from user space, each
 * repeated N times; prints the median in microseconds per operation.
 *   opcost PID SYMBOL N
 *     view_new, view_del   VIEW_NEW / VIEW_DEL on PID (no hooks)
 *     hook_add, hook_del   HOOK_ADD / HOOK_DEL of SYMBOL on a view of PID
 *     kprobe_open, kprobe_close
 *                          perf_event_open() of a kprobe on SYMBOL through
 *                          the kprobe PMU (register_kprobe() and a trace
 *                          event) and its close (unregister_kprobe())
 * The view and hook operations include the netlink round trip; so does
 * perf_event_open include its syscall.
 */
#include <time.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include "../../selftests/progs/genl.h"
#include "../../module/uapi/xprobes.h"

static struct genl_req req;
static uint16_t fam;
static int fd;

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void report(const char *what, double *t, int n)
{
	qsort(t, n, sizeof(*t), cmp);
	printf("%s %.1f %.1f %.1f\n", what, t[n / 2], t[0], t[n - 1]);
}

static void get_id(const struct nlattr *a, int len, void *arg)
{
	const struct nlattr *id = genl_attr(a, len, XPROBES_A_HOOK_ID);

	if (id)
		*(uint32_t *)arg = *(const uint32_t *)((const char *)id + NLA_HDRLEN);
}

/* One request; exits with the module's message on error. */
static void call(uint8_t cmd, uint32_t pid, const char *sym, uint32_t id, uint32_t *out)
{
	struct genl_reply rep = { 0 };

	genl_begin(&req, fam, cmd, 0);
	if (pid)
		genl_put_u32(&req, XPROBES_A_PID, pid);
	if (sym)
		genl_put_str(&req, XPROBES_A_SYMBOL, sym);
	if (id)
		genl_put_u32(&req, XPROBES_A_HOOK_ID, id);
	rep.on_msg = out ? get_id : NULL;
	rep.arg = out;
	if (genl_call(fd, &req, &rep)) {
		fprintf(stderr, "opcost: command %u: %s: %s\n", cmd, strerror(rep.error), rep.msg);
		exit(1);
	}
}

static int kprobe_type(void)
{
	FILE *f = fopen("/sys/bus/event_source/devices/kprobe/type", "r");
	int t = -1;

	if (f) {
		if (fscanf(f, "%d", &t) != 1)
			t = -1;
		fclose(f);
	}
	return t;
}

int main(int argc, char **argv)
{
	double *a, *b, t0, t1;
	struct perf_event_attr pa;
	uint32_t pid, id = 0;
	const char *sym;
	int i, n, kfd, kt;

	if (argc != 4) {
		fprintf(stderr, "usage: opcost PID SYMBOL N\n");
		return 2;
	}
	pid = atoi(argv[1]);
	sym = argv[2];
	n = atoi(argv[3]);
	if (n < 1)
		return 2;
	a = calloc(n, sizeof(*a));
	b = calloc(n, sizeof(*b));
	fd = genl_socket();
	fam = fd < 0 ? 0 : genl_family(fd, XPROBES_GENL_NAME);
	if (!a || !b || !fam) {
		fprintf(stderr, "opcost: xprobes family not found\n");
		return 1;
	}

	for (i = 0; i < n; i++) {
		t0 = now_us();
		call(XPROBES_CMD_VIEW_NEW, pid, NULL, 0, NULL);
		t1 = now_us();
		call(XPROBES_CMD_VIEW_DEL, pid, NULL, 0, NULL);
		a[i] = t1 - t0;
		b[i] = now_us() - t1;
	}
	report("view_new", a, n);
	report("view_del", b, n);

	call(XPROBES_CMD_VIEW_NEW, pid, NULL, 0, NULL);
	for (i = 0; i < n; i++) {
		t0 = now_us();
		call(XPROBES_CMD_HOOK_ADD, pid, sym, 0, &id);
		t1 = now_us();
		call(XPROBES_CMD_HOOK_DEL, 0, NULL, id, NULL);
		a[i] = t1 - t0;
		b[i] = now_us() - t1;
	}
	call(XPROBES_CMD_VIEW_DEL, pid, NULL, 0, NULL);
	report("hook_add", a, n);
	report("hook_del", b, n);

	kt = kprobe_type();
	if (kt < 0) {
		fprintf(stderr, "opcost: no kprobe PMU\n");
		return 1;
	}
	memset(&pa, 0, sizeof(pa));
	pa.size = sizeof(pa);
	pa.type = kt;
	pa.config1 = (uint64_t)(unsigned long)sym;	/* kprobe_func */
	pa.sample_period = 1;
	for (i = 0; i < n; i++) {
		t0 = now_us();
		kfd = syscall(SYS_perf_event_open, &pa, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
		t1 = now_us();
		if (kfd < 0) {
			fprintf(stderr, "opcost: perf_event_open(kprobe %s): %s\n", sym, strerror(errno));
			return 1;
		}
		close(kfd);
		a[i] = t1 - t0;
		b[i] = now_us() - t1;
	}
	report("kprobe_open", a, n);
	report("kprobe_close", b, n);
	return 0;
}
