// SPDX-License-Identifier: GPL-2.0
/*
 * pidfilter: trace one process the ways other tools do, on kernel functions
 * every process may pass, until SIGTERM/SIGINT.
 *   pidfilter -p PID -m MODE -f FUNC [-f FUNC...]    (at most 8 functions)
 * MODE:
 *   kprobe  global kprobes, PID test inside BPF (bpftrace -p, bcc: "in-eBPF");
 *           with -P PATH, the kprobe program pinned at PATH instead, for
 *           hooks to run directly with their registers (xprobectl hook prog)
 *   fentry  the same with fentry (built for __do_sys_getppid only)
 *   hook    the same program body on raw_tp/xprobes_hook: the hooks of an
 *           xprobes view (-f is ignored; make the view and hooks first);
 *           with -P PATH, pinned at PATH instead, for hooks to run directly
 *           (xprobectl hook prog ID PATH); unpinned at exit
 *   tp      the same program body on the kernel tracepoint CATEGORY:NAME
 *           given with -f, global (a raw tracepoint, as bpftrace -p
 *           attaches one); an xprobes tracepoint hook runs the hook
 *           mode's pinned program (-m hook -P PATH), the same body again
 *   post    global kprobes whose BPF program sends every event to a ring
 *           buffer; the PID test is made here, in user space ("post-eBPF")
 *   pre     per-task kprobe perf events (perf stat -p): the kprobes are
 *           global, but the event only counts while PID runs, and no BPF
 *           program runs at all ("pre-eBPF" filtering, as the kernel allows)
 * Prints "attached", and at exit "hits H seen S" (S: events from every
 * process, where the mode can tell).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>
#include "pidfilter.skel.h"

#define MAX_FUNCS 8

static volatile sig_atomic_t stop;
static void on_sig(int s) { (void)s; stop = 1; }

static unsigned long long post_hits;
static int target;

static int on_event(void *ctx, void *data, size_t len)
{
	if (*(const __u32 *)data == (__u32)target)
		post_hits++;
	return 0;
}

static int kprobe_pmu_type(void)
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

/* Per-task counting kprobe events, one per function; no BPF. */
static int run_pre(const char **funcs, int n)
{
	struct perf_event_attr a;
	unsigned long long total = 0, v;
	int fds[MAX_FUNCS], i, type = kprobe_pmu_type();

	if (type < 0) {
		fprintf(stderr, "pidfilter: no kprobe PMU in /sys/bus/event_source/devices\n");
		return 1;
	}
	for (i = 0; i < n; i++) {
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = type;
		a.config1 = (unsigned long)funcs[i];
		a.inherit = 1;
		fds[i] = syscall(SYS_perf_event_open, &a, target, -1, -1, PERF_FLAG_FD_CLOEXEC);
		if (fds[i] < 0) {
			fprintf(stderr, "pidfilter: perf kprobe %s on pid %d: %s\n", funcs[i], target,
				strerror(errno));
			return 1;
		}
	}
	printf("attached\n");
	fflush(stdout);
	while (!stop)
		pause();
	for (i = 0; i < n; i++) {
		if (read(fds[i], &v, sizeof(v)) == sizeof(v))
			total += v;
		close(fds[i]);
	}
	printf("hits %llu seen ?\n", total);
	return 0;
}

/*
 * MODE's link for FUNC: a kprobe on it (in, post, with PROG); the fentry or
 * hook program once, whatever it is; tp: the raw tracepoint FUNC names
 * (CATEGORY:NAME, the raw tracepoint is NAME).
 */
static struct bpf_link *attach_one(struct pidfilter_bpf *skel, const char *mode,
				   const char *func, struct bpf_program *prog)
{
	if (!strcmp(mode, "tp"))
		return bpf_program__attach_raw_tracepoint(skel->progs.on_hook,
							  strchr(func, ':') ? strchr(func, ':') + 1 :
							  func);
	if (!strcmp(mode, "hook"))
		return bpf_program__attach(skel->progs.on_hook);
	if (!strcmp(mode, "fentry"))
		return bpf_program__attach(skel->progs.on_fentry);
	return bpf_program__attach_kprobe(prog, false, func);
}

int main(int argc, char **argv)
{
	const char *mode = "kprobe", *funcs[MAX_FUNCS] = { "__x64_sys_getppid" }, *pin = NULL;
	struct bpf_link *links[MAX_FUNCS] = { 0 };
	struct ring_buffer *rb = NULL;
	struct pidfilter_bpf *skel;
	struct bpf_program *prog;
	bool pinned;
	int opt, i, nf = 0;

	while ((opt = getopt(argc, argv, "p:m:f:P:")) != -1) {
		switch (opt) {
		case 'P': pin = optarg; break;
		case 'p': target = atoi(optarg); break;
		case 'm': mode = optarg; break;
		case 'f':
			if (nf == MAX_FUNCS)
				return 2;
			funcs[nf++] = optarg;
			break;
		default: return 2;
		}
	}
	if (!nf)
		nf = 1;
	signal(SIGINT, on_sig);
	signal(SIGTERM, on_sig);
	if (!strcmp(mode, "pre"))
		return run_pre(funcs, nf);

	skel = pidfilter_bpf__open();
	if (!skel)
		return 1;
	skel->rodata->target_tgid = target;
	bpf_program__set_autoload(skel->progs.on_fentry, !strcmp(mode, "fentry"));
	bpf_program__set_autoload(skel->progs.on_hook, !strcmp(mode, "hook") || !strcmp(mode, "tp"));
	bpf_program__set_autoload(skel->progs.on_kprobe, !strcmp(mode, "kprobe"));
	bpf_program__set_autoload(skel->progs.on_kprobe_post, !strcmp(mode, "post"));
	if (pidfilter_bpf__load(skel)) {
		fprintf(stderr, "pidfilter: load failed: %s\n", strerror(errno));
		return 1;
	}
	prog = !strcmp(mode, "post") ? skel->progs.on_kprobe_post : skel->progs.on_kprobe;
	pinned = pin && (!strcmp(mode, "hook") || !strcmp(mode, "kprobe"));
	if (pinned) {
		if (bpf_program__pin(!strcmp(mode, "hook") ? skel->progs.on_hook : prog, pin)) {
			fprintf(stderr, "pidfilter: cannot pin at %s: %s\n", pin, strerror(errno));
			return 1;
		}
		nf = 0;		/* nothing to attach */
	}
	for (i = 0; i < nf; i++) {
		bool once = !strcmp(mode, "fentry") || !strcmp(mode, "hook");

		links[i] = attach_one(skel, mode, funcs[i], prog);
		if (!links[i]) {
			fprintf(stderr, "pidfilter: attach %s %s failed: %s\n", mode, funcs[i],
				strerror(errno));
			return 1;
		}
		if (once || !strcmp(mode, "tp"))
			break;
	}
	if (!strcmp(mode, "post")) {
		rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_event, NULL, NULL);
		if (!rb) {
			fprintf(stderr, "pidfilter: ring buffer: %s\n", strerror(errno));
			return 1;
		}
	}
	printf("attached\n");
	fflush(stdout);
	while (!stop) {
		if (rb)
			ring_buffer__poll(rb, 100);
		else
			pause();
	}
	if (rb)
		ring_buffer__consume(rb);
	printf("hits %llu seen %llu\n",
	       rb ? post_hits : (unsigned long long)skel->bss->hits,
	       (unsigned long long)skel->bss->seen);
	ring_buffer__free(rb);
	if (pinned)
		unlink(pin);
	for (i = 0; i < nf; i++)
		bpf_link__destroy(links[i]);
	pidfilter_bpf__destroy(skel);
	return 0;
}
