// SPDX-License-Identifier: GPL-2.0
/*
 * xprobectl latency: the syscalls of one process that took longer than
 * their own normal (mean + k sigma, learned in BPF per syscall), as they
 * happen, then a table of every syscall seen. See bpf/latency.h.
 */
#include <errno.h>
#include <math.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cgroup.h"
#include "corebtf.h"
#include "exporter.h"
#include "json.h"
#include "latency.h"		/* bpf/: shared with the BPF side */
#include "latency_api.h"
#include "target.h"
#include "util.h"
#include "xprobectl.h"
#include "latency.skel.h"

static const char *const sysnames[SYSEV_NR_MAX] = {
#include "sysnames.h"
};

struct latency {
	struct latency_bpf *skel;
	struct perf_buffer *pb;
	struct latency_opts o;
	uint64_t t0_ns;		/* bpf_ktime_get_ns() at the start */
	uint64_t shown, lost;
	bool header;
};

/* Syscalls newer than the libc headers sysnames.h comes from (Debian 12's stop at 450). */
static const char *newer_sysname(uint32_t nr)
{
	static const char *const names[] = {
		"cachestat", "fchmodat2", "map_shadow_stack", "futex_wake", "futex_wait",
		"futex_requeue", "statmount", "listmount", "lsm_get_self_attr",
		"lsm_set_self_attr", "lsm_list_modules", "mseal",
	};

	if (nr == 335)
		return "uretprobe";
	if (nr >= 451 && nr < 451 + sizeof(names) / sizeof(names[0]))
		return names[nr - 451];
	return NULL;
}

static const char *sysname(uint32_t nr, char *buf, size_t len)
{
	if (nr < SYSEV_NR_MAX && sysnames[nr])
		return sysnames[nr];
	if (newer_sysname(nr))
		return newer_sysname(nr);
	snprintf(buf, len, "syscall_%u", nr);
	return buf;
}

/* A log2 latency in LAT_FP units, as microseconds. */
static double l_us(double l)
{
	return exp2(l / LAT_FP) / 1e3;
}

static void on_slow(void *ctx, int cpu, void *data, __u32 size)
{
	struct latency *l = ctx;
	const struct lat_event *e = data;
	const char *fn = NULL;
	char nb[32];

	(void)cpu;
	if (size < sizeof(*e))
		return;
	if (e->func >= 0 && l->o.func_name)
		fn = l->o.func_name(e->func, l->o.func_arg);
	l->shown++;
	if (l->o.quiet)
		return;
	if (l->o.json) {
		json_obj_begin(NULL);
		json_str("type", "slow");
		json_double("t", (e->ts - l->t0_ns) / 1e9);
		json_u64("tid", e->tid);
		json_str("syscall", sysname(e->nr, nb, sizeof(nb)));
		json_u64("nr", e->nr);
		json_double("duration_us", e->dur_ns / 1e3);
		json_double("normal_us", l_us(e->mean_l));
		json_double("threshold_us", l_us(e->mean_l + l->o.k * e->sigma_l));
		json_i64("ret", e->ret);
		if (fn)
			json_str("function", fn);
		json_obj_end();
		json_done();
	} else {
		if (!l->header) {
			printf("%9s %7s %-16s %12s %11s %11s %8s %s\n", "TIME(s)", "TID", "SYSCALL",
			       "LATENCY(us)", "NORMAL(us)", "ABOVE(us)", "RET", "FUNCTION");
			l->header = true;
		}
		printf("%9.3f %7u %-16s %12.1f %11.1f %11.1f %8lld %s\n",
		       (e->ts - l->t0_ns) / 1e9, e->tid, sysname(e->nr, nb, sizeof(nb)),
		       e->dur_ns / 1e3, l_us(e->mean_l), l_us(e->mean_l + l->o.k * e->sigma_l),
		       (long long)e->ret,
		       fn ? fn : "-");
	}
	fflush(stdout);
}

static void on_lost(void *ctx, int cpu, __u64 n)
{
	(void)cpu;
	((struct latency *)ctx)->lost += n;
}

struct latency *latency_start(struct syswatch *w, const struct latency_opts *o)
{
	struct latency *l = calloc(1, sizeof(*l));
	LIBBPF_OPTS(bpf_object_open_opts, oo);
	struct core_btf cbtf = { 0 };
	int err;

	if (!l)
		return NULL;
	l->o = *o;
	oo.btf_custom_path = core_btf_prepare(&cbtf);
	l->skel = latency_bpf__open_opts(&oo);
	if (!l->skel) {
		fprintf(stderr, "xprobectl: cannot open the BPF object: %s\n", strerror(errno));
		goto fail;
	}
	l->skel->rodata->target_tgid = w->pid;
	l->skel->rodata->k_x100 = (uint64_t)(o->k * 100 + 0.5);
	l->skel->rodata->min_ns = (uint64_t)(o->min_us * 1e3);
	if (o->threads_fd >= 0) {
		if (bpf_map__reuse_fd(l->skel->maps.threads, o->threads_fd)) {
			fprintf(stderr, "xprobectl: cannot share trace's thread map: %s\n",
				strerror(errno));
			goto fail;
		}
	} else {
		bpf_map__set_max_entries(l->skel->maps.threads, 1);
	}
	syswatch_prepare(w, l->skel->obj);
	err = core_btf_fill(&cbtf, l->skel->obj);	/* says why itself */
	if (!err && latency_bpf__load(l->skel)) {
		err = -errno;
		fprintf(stderr, "xprobectl: cannot load the BPF programs (%s): run as root on a "
			"kernel with BTF; -v shows the verifier's log\n", strerror(-err));
	}
	core_btf_release(&cbtf);	/* the load has read it */
	if (err)
		goto fail;
	l->pb = perf_buffer__new(bpf_map__fd(l->skel->maps.slow_events), 16, on_slow, on_lost,
				 l, NULL);
	if (!l->pb) {
		fprintf(stderr, "xprobectl: cannot open the perf buffer: %s\n", strerror(errno));
		goto fail;
	}
	l->t0_ns = mono_ns();	/* bpf_ktime_get_ns()'s clock */
	if (syswatch_attach(w, l->skel->obj))
		goto fail;
	return l;
fail:
	core_btf_release(&cbtf);
	latency_stop(l);
	return NULL;
}

void latency_poll(struct latency *l, int ms)
{
	perf_buffer__poll(l->pb, ms);
}

struct row {
	uint32_t nr;
	struct lat_stats st;
};

static int by_slow(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->st.slow != y->st.slow)
		return x->st.slow < y->st.slow ? 1 : -1;
	return x->st.calls < y->st.calls ? 1 : x->st.calls > y->st.calls ? -1 : 0;
}

void latency_summary(struct latency *l, int top)
{
	int fd = bpf_map__fd(l->skel->maps.lstats), n = 0, i;
	struct row *rows = calloc(SYSEV_NR_MAX, sizeof(*rows));	/* 200 KiB: not the stack */
	uint64_t calls = 0, slow = 0;
	char nb[32];
	uint32_t nr;

	if (!rows)
		return;
	perf_buffer__consume(l->pb);
	for (nr = 0; nr < SYSEV_NR_MAX; nr++) {
		rows[n].nr = nr;
		if (!bpf_map_lookup_elem(fd, &nr, &rows[n].st) && rows[n].st.calls) {
			calls += rows[n].st.calls;
			slow += rows[n].st.slow;
			n++;
		}
	}
	qsort(rows, n, sizeof(rows[0]), by_slow);
	if (top > 0 && n > top)
		n = top;
	if (l->o.json) {
		json_obj_begin(NULL);
		json_str("type", "summary");
		json_double("k", l->o.k);
		json_u64("calls", calls);
		json_u64("slow", slow);
		json_u64("lost", l->lost);
		json_arr_begin("syscalls");
		for (i = 0; i < n; i++) {
			const struct lat_stats *s = &rows[i].st;

			json_obj_begin(NULL);
			json_str("syscall", sysname(rows[i].nr, nb, sizeof(nb)));
			json_u64("nr", rows[i].nr);
			json_u64("calls", s->calls);
			json_u64("slow", s->slow);
			json_double("normal_us", l_us(s->mean_l));
			json_double("sigma_log2", (double)s->sigma_l / LAT_FP);
			json_double("avg_us", s->total_ns / 1e3 / s->calls);
			json_double("max_us", s->max_ns / 1e3);
			json_obj_end();
		}
		json_arr_end();
		json_obj_end();
		json_done();
		free(rows);
		return;
	}
	printf("\n%llu syscalls, %llu slow (log2 latency > mean + %.2g sigma)%s\n",
	       (unsigned long long)calls, (unsigned long long)slow, l->o.k,
	       l->lost ? "; some slow calls were lost" : "");
	printf("%-16s %10s %8s %11s %9s %11s %12s\n", "SYSCALL", "CALLS", "SLOW", "NORMAL(us)",
	       "SIGMA(x)", "AVG(us)", "MAX(us)");
	for (i = 0; i < n; i++) {
		const struct lat_stats *s = &rows[i].st;

		printf("%-16s %10llu %8llu %11.1f %9.2f %11.1f %12.1f\n",
		       sysname(rows[i].nr, nb, sizeof(nb)), (unsigned long long)s->calls,
		       (unsigned long long)s->slow, l_us(s->mean_l), exp2((double)s->sigma_l / LAT_FP),
		       s->total_ns / 1e3 / s->calls, s->max_ns / 1e3);
	}
	free(rows);
}

void latency_stop(struct latency *l)
{
	if (!l)
		return;
	perf_buffer__free(l->pb);
	latency_bpf__destroy(l->skel);
	free(l);
}

/* ---- /metrics ---------------------------------------------------------------- */

/* What /metrics serves: the target, its mode, and the per-syscall statistics. */
struct latency_export {
	struct latency *l;
	const char *comm;
	const struct syswatch *w;	/* the target (its mode now: a cgroup's may fall back) */
};

/* The histogram's bounds: 2^LE_FIRST ns (1 us) to 2^LE_LAST ns (17 s), then +Inf. */
#define LE_FIRST	10
#define LE_LAST		34

static void labels(struct xbuf *b, const struct latency_export *x, const char *sys)
{
	xbuf_printf(b, "syscall=\"%s\",", sys);
	syswatch_labels(x->w, x->comm, b);
}

/*
 * One histogram per syscall seen (_bucket, _sum, _count in seconds), the
 * slow calls as a counter and the learned normal as a gauge. _count is
 * the buckets' sum, so it always equals the +Inf bucket.
 */
static int latency_render(void *arg, struct xbuf *b)
{
	const struct latency_export *x = arg;
	int fd = bpf_map__fd(x->l->skel->maps.lstats), n = 0, i, k;
	/* the exporter's thread and the textfile's, at once: one each */
	struct row *rows = malloc(SYSEV_NR_MAX * sizeof(*rows));
	char nb[32];
	uint32_t nr;

	if (!rows)
		return -1;
	for (nr = 0; nr < SYSEV_NR_MAX; nr++) {
		rows[n].nr = nr;
		if (bpf_map_lookup_elem(fd, &nr, &rows[n].st)) {
			free(rows);
			return -1;
		}
		if (rows[n].st.calls)
			n++;
	}
	xbuf_printf(b, "# HELP xprobes_syscall_duration_seconds Time from a system call's entry "
		    "to its return.\n# TYPE xprobes_syscall_duration_seconds histogram\n");
	for (i = 0; i < n; i++) {
		const char *sys = sysname(rows[i].nr, nb, sizeof(nb));
		const __u64 *h = rows[i].st.hist;
		__u64 cum = 0;

		for (k = 0; k < LE_FIRST - 1; k++)
			cum += h[k];
		for (k = LE_FIRST; k <= LE_LAST; k++) {
			cum += h[k - 1];	/* it ends at 2^k ns */
			xbuf_printf(b, "xprobes_syscall_duration_seconds_bucket{");
			labels(b, x, sys);
			xbuf_printf(b, ",le=\"%.9g\"} %llu\n", ldexp(1, k) / 1e9,
				    (unsigned long long)cum);
		}
		for (k = LE_LAST; k < LAT_BUCKETS; k++)
			cum += h[k];
		xbuf_printf(b, "xprobes_syscall_duration_seconds_bucket{");
		labels(b, x, sys);
		xbuf_printf(b, ",le=\"+Inf\"} %llu\nxprobes_syscall_duration_seconds_sum{",
			    (unsigned long long)cum);
		labels(b, x, sys);
		xbuf_printf(b, "} %.17g\nxprobes_syscall_duration_seconds_count{",
			    rows[i].st.total_ns / 1e9);
		labels(b, x, sys);
		xbuf_printf(b, "} %llu\n", (unsigned long long)cum);
	}
	xbuf_printf(b, "# HELP xprobes_syscall_slow_total System calls slower than their normal "
		    "(mean + k sigma of log2 latency).\n# TYPE xprobes_syscall_slow_total counter\n");
	for (i = 0; i < n; i++) {
		xbuf_printf(b, "xprobes_syscall_slow_total{");
		labels(b, x, sysname(rows[i].nr, nb, sizeof(nb)));
		xbuf_printf(b, "} %llu\n", (unsigned long long)rows[i].st.slow);
	}
	xbuf_printf(b, "# HELP xprobes_syscall_normal_seconds The latency learned as normal for "
		    "the system call (2^mean of log2 latency).\n"
		    "# TYPE xprobes_syscall_normal_seconds gauge\n");
	for (i = 0; i < n; i++) {
		xbuf_printf(b, "xprobes_syscall_normal_seconds{");
		labels(b, x, sysname(rows[i].nr, nb, sizeof(nb)));
		xbuf_printf(b, "} %.9g\n", l_us(rows[i].st.mean_l) / 1e6);
	}
	free(rows);
	return 0;
}

/* ---- xprobectl latency PID ----------------------------------------------- */

static void latency_usage(FILE *f)
{
	fprintf(f,
"usage: xprobectl latency [OPTIONS] PID\n"
"       xprobectl latency [OPTIONS] --cgroup PATH\n"
"Reports the syscalls of PID that took far longer than that syscall's normal, which it\n"
"learns as it runs (mean and variance of log2 latency), as they happen.\n"
"  -k, --sigma K            a call is slow when log2 of its latency is above mean + K sigma\n"
"                           of its syscall's (default 3; sigma at least one doubling)\n"
"  -m, --min-us US          and never when shorter than US microseconds (default 0)\n"
"  -d, --duration SECONDS   stop after SECONDS (default: Ctrl-C or the target's exit)\n"
"  -n, --top N              rows in the final table (default 20, 0: all)\n"
"      --json               JSON lines: each slow call, then the summary\n"
"      --no-views           fallback mode: the global raw_syscalls tracepoints\n"
"      --cgroup PATH        every process in the cgroup v2 PATH and below it, those\n"
"                           that join later included (one normal per syscall for all)\n"
"  -q, --quiet              print neither slow calls nor the table (with --listen or\n"
"                           --textfile)\n"
"      --listen ADDR:PORT   also serve per-syscall latency histograms at /metrics, in the\n"
"                           Prometheus text format (seconds; buckets 1 us to 17 s);\n"
"                           [ADDR6]:PORT for IPv6, :PORT for every IPv4 address, port 0\n"
"                           for a free one (the address served on is printed)\n"
"      --textfile DIR       also write them to DIR/xprobes_latency_TARGET.prom every\n"
"                           second, for node_exporter's textfile collector\n"
"  -v, --verbose            libbpf's messages\n"
"Each syscall's normal is learned as the process runs: the first %d calls of a\n"
"syscall are not judged. With 'xprobectl trace --latency', slow calls name the\n"
"traced function they were made from.\n", LAT_WARMUP);
}

int cmd_latency(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sigma", required_argument, NULL, 'k' },
		{ "min-us", required_argument, NULL, 'm' },
		{ "duration", required_argument, NULL, 'd' },
		{ "top", required_argument, NULL, 'n' },
		{ "no-views", no_argument, NULL, 'N' },
		{ "cgroup", required_argument, NULL, 'G' },
		{ "listen", required_argument, NULL, 'l' },
		{ "textfile", required_argument, NULL, 'x' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		COMMON_OPTS,
		{ 0 }
	};
	struct latency_opts o = { .k = 3, .threads_fd = -1 };
	const char *cg_arg = NULL, *listen = NULL, *textfile = NULL;
	char what[PATH_MAX + 64], tname[PATH_MAX + 32];
	struct latency_export lx;
	struct exporter *ex = NULL;
	uint64_t next_text = 0;
	int ret = EXIT_RUNTIME;
	struct cgtarget cg;
	double duration = 0;
	bool no_views = false, verbose = false, cut = false, quiet = false;
	const char *why;
	struct syswatch w = { 0 };
	struct latency *l;
	uint64_t end;
	int c, top = 20;
	char comm[32], *e;

	while ((c = getopt_long(argc, argv, "k:m:d:n:qvhj", opts, NULL)) != -1) {
		switch (c) {
		case 'k':
			o.k = strtod(optarg, &e);
			if (*e || !(o.k > 0 && o.k <= 20))
				return usage_error("bad sigma '%s' (0 < K <= 20)", optarg);
			break;
		case 'm':
			o.min_us = strtod(optarg, &e);
			if (*e || !(o.min_us >= 0 && o.min_us < 1e9))
				return usage_error("bad --min-us '%s'", optarg);
			break;
		case 'd':
			if (!parse_secs(optarg, &duration))
				return usage_error("bad duration '%s' (seconds)", optarg);
			break;
		case 'n':
			top = strtol(optarg, &e, 10);
			if (*e || top < 0)
				return usage_error("bad --top '%s'", optarg);
			break;
		case 'N': no_views = true; break;
		case 'G': cg_arg = optarg; break;
		case 'l':
			listen = optarg;
			if (!exporter_listen_ok(listen, &why))
				return usage_error("bad --listen '%s': %s", listen, why);
			break;
		case 'x': textfile = optarg; break;
		case 'q': quiet = o.quiet = true; break;
		case 'v': verbose = true; break;
		case 'j': o.json = true; break;
		case 'h': latency_usage(stdout); return EXIT_OK;
		default: return EXIT_USAGE;
		}
	}
	if (optind + !cg_arg != argc)
		return usage_error(cg_arg ? "latency takes a PID or --cgroup, not both"
				   : "latency takes one PID (or --cgroup PATH)");
	libbpf_messages(verbose, true);
	if (cg_arg)
		c = syswatch_open_cgroup(&w, &cg, cg_arg, no_views);
	else
		c = syswatch_open(&w, argv[optind], no_views, comm, sizeof(comm));
	if (c != EXIT_OK)
		return c;
	syswatch_names(&w, comm, "xprobes_latency_", what, sizeof(what), tname, sizeof(tname));
	l = latency_start(&w, &o);
	if (!l) {
		syswatch_end(&w);
		return EXIT_RUNTIME;
	}
	lx = (struct latency_export){ .l = l, .comm = comm, .w = &w };
	if (exporter_open(listen, textfile, tname, latency_render, &lx, &ex))
		goto out;
	stop_on_signals();
	fprintf(stderr, "xprobectl: syscall latency of %s, slow above mean + %.2g sigma, "
		"%s%s\n", what, o.k, syswatch_mode(&w), duration ? "" : "; Ctrl-C ends");
	end = duration ? mono_ns() + (uint64_t)(duration * 1e9) : 0;
	while (!stop_req && syswatch_alive(&w) && !(end && mono_ns() >= end) &&
	       !(cut = syswatch_view_ended(&w))) {
		syswatch_poll(&w);
		latency_poll(l, 50);
		if (textfile && mono_ns() >= next_text) {
			textfile_write(textfile, tname, latency_render, &lx);
			next_text = mono_ns() + 1000000000ull;
		}
	}
	if (!quiet)
		latency_summary(l, top);
	ret = cut ? EXIT_RUNTIME : EXIT_OK;
out:
	exporter_stop(ex);	/* before the maps it reads */
	syswatch_end(&w);
	latency_stop(l);
	return ret;
}
