// SPDX-License-Identifier: GPL-2.0
/*
 * kstacks: the kernel stacks BPF programs take at hooks, against real
 * kprobes' at the same addresses (selftest 26-view-stacks).
 *   kstacks -P PATH [-p TGID] [-k SYMBOL+OFF:COOKIE]...
 * Pins at PATH a kprobe program for "xprobectl hook prog ID PATH": it keeps
 * the first kernel stack it sees under the hook's cookie. Attaches a raw
 * program to the xprobes_hook tracepoint, which keeps the first stack of
 * each hook under cookie + 32. Attaches a real kprobe at each SYMBOL+OFF,
 * for process TGID only, which keeps its first stack under COOKIE. Prints
 * "attached", and on SIGUSR1 or SIGTERM one line per stack taken,
 * "COOKIE: SYMBOL+OFF SYMBOL+OFF ..." (outermost last), then exits.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "kstacks.h"
#include "kstacks.skel.h"

static volatile sig_atomic_t stop;
static void on_sig(int s) { (void)s; stop = 1; }

struct ksym {
	uint64_t addr;
	char name[256];
};
static struct ksym *syms;
static size_t nsyms;

static int by_addr(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void load_kallsyms(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	size_t cap = 0;
	char type, name[256], line[512];
	uint64_t a;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNx64 " %c %255s", &a, &type, name) != 3 ||
		    (type != 't' && type != 'T'))
			continue;
		if (nsyms == cap) {
			cap = cap ? 2 * cap : 65536;
			syms = realloc(syms, cap * sizeof(*syms));
			if (!syms)
				exit(1);
		}
		syms[nsyms].addr = a;
		snprintf(syms[nsyms].name, sizeof(syms[nsyms].name), "%s", name);
		nsyms++;
	}
	fclose(f);
	qsort(syms, nsyms, sizeof(*syms), by_addr);
}

static void print_ip(uint64_t ip)
{
	size_t lo = 0, hi = nsyms;

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (syms[mid].addr <= ip)
			lo = mid;
		else
			hi = mid;
	}
	if (nsyms && syms[lo].addr <= ip)
		printf(" %s+0x%" PRIx64, syms[lo].name, ip - syms[lo].addr);
	else
		printf(" 0x%" PRIx64, ip);
}

int main(int argc, char **argv)
{
	struct bpf_link *links[KSTACKS_SLOTS];
	struct kstacks_slot s;
	struct kstacks_bpf *skel;
	const char *pin = NULL;
	int opt, nlinks = 0, fd, i;
	__u32 k;
	unsigned int tgid = 0;

	while ((opt = getopt(argc, argv, "P:p:k:")) != -1) {
		if (opt == 'P')
			pin = optarg;
		else if (opt == 'p')
			tgid = strtoul(optarg, NULL, 0);
		else if (opt != 'k')
			return 2;
	}
	if (!pin)
		return 2;
	signal(SIGTERM, on_sig);
	signal(SIGUSR1, on_sig);
	load_kallsyms();
	skel = kstacks_bpf__open();
	if (!skel)
		return 1;
	skel->rodata->kprobe_tgid = tgid;
	bpf_program__set_autoattach(skel->progs.stack_hook, false);
	bpf_program__set_autoattach(skel->progs.stack_kprobe, false);
	if (kstacks_bpf__load(skel) || kstacks_bpf__attach(skel)) {
		fprintf(stderr, "kstacks: cannot load or attach (is xprobes.ko loaded?): %s\n",
			strerror(errno));
		return 1;
	}
	if (bpf_program__pin(skel->progs.stack_hook, pin)) {
		fprintf(stderr, "kstacks: cannot pin at %s\n", pin);
		return 1;
	}
	optind = 1;
	while ((opt = getopt(argc, argv, "P:p:k:")) != -1) {
		LIBBPF_OPTS(bpf_kprobe_opts, ko);
		char sym[128];
		unsigned long off, cookie;

		if (opt != 'k')
			continue;
		if (sscanf(optarg, "%127[^+]+%li:%lu", sym, &off, &cookie) != 3 ||
		    cookie >= KSTACKS_TP || nlinks == KSTACKS_SLOTS) {
			fprintf(stderr, "kstacks: bad -k %s\n", optarg);
			return 2;
		}
		ko.offset = off;
		ko.bpf_cookie = cookie;
		links[nlinks] = bpf_program__attach_kprobe_opts(skel->progs.stack_kprobe, sym, &ko);
		if (!links[nlinks]) {
			fprintf(stderr, "kstacks: cannot attach a kprobe at %s+%#lx: %s\n", sym, off,
				strerror(errno));
			return 1;
		}
		nlinks++;
	}
	printf("attached\n");
	fflush(stdout);
	while (!stop)
		pause();
	fd = bpf_map__fd(skel->maps.stacks);
	for (k = 0; k < KSTACKS_SLOTS; k++) {
		if (bpf_map_lookup_elem(fd, &k, &s) || !s.n)
			continue;
		printf("%u:", k);
		for (i = 0; i < (int)s.n && i < KSTACKS_DEPTH; i++)
			print_ip(s.ip[i]);
		printf("\n");
	}
	for (i = 0; i < 64; i++) if (skel->bss->errs[i]) printf("err %d: %ld\n", i, skel->bss->errs[i]);
	for (i = 0; i < nlinks; i++)
		bpf_link__destroy(links[i]);
	unlink(pin);
	kstacks_bpf__destroy(skel);
	return 0;
}
