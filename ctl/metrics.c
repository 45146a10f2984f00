// SPDX-License-Identifier: GPL-2.0
/*
 * xprobectl metrics: what a server is doing, from its syscalls alone.
 *
 *   requests/s  1 / mean time between responses (inter-send time)
 *   saturation  variance of the time between requests read (inter-receive)
 *   slack       mean time the server waits in epoll_wait, poll or select
 *
 * The sums behind them are kept in BPF (bpf/metrics.bpf.c); every interval
 * this reads them and prints the difference.
 */
#include <errno.h>
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
#include "metrics.h"
#include "syswatch.h"
#include "target.h"
#include "util.h"
#include "xprobectl.h"
#include "metrics.skel.h"

static void metrics_usage(FILE *f)
{
	fprintf(f,
"usage: xprobectl metrics [OPTIONS] PID\n"
"       xprobectl metrics [OPTIONS] --cgroup PATH\n"
"Measures a server from its syscalls, per interval: requests/s (1 / mean time between\n"
"responses), saturation (variance of the time between requests, and that over the\n"
"squared mean) and slack (mean time waiting in epoll_wait/poll/select).\n"
"  -i, --interval SECONDS   print every SECONDS (default 1; 0.01 at least)\n"
"  -d, --duration SECONDS   stop after SECONDS (default: Ctrl-C or the target's exit)\n"
"      --json               one JSON object per line: each interval, then the total\n"
"      --no-views           fallback mode: the global raw_syscalls tracepoints\n"
"      --listen ADDR:PORT   also serve the sums behind the figures at /metrics, in the\n"
"                           Prometheus text format (counters; rates are Prometheus's);\n"
"                           [ADDR6]:PORT for IPv6, :PORT for every IPv4 address, port 0\n"
"                           for a free one (the address served on is printed)\n"
"      --textfile DIR       also write them to DIR/xprobes_metrics_PID.prom every\n"
"                           interval, for node_exporter's textfile collector\n"
"  -q, --quiet              print nothing per interval (with --listen or --textfile)\n"
"      --cgroup PATH        every process in the cgroup v2 PATH and below it (a\n"
"                           container, or a unit: /system.slice/redis-server.service),\n"
"                           those that join later and a restarted server included;\n"
"                           PATH may also be a directory in the cgroup2 mount\n"
"  -v, --verbose            libbpf's messages\n"
"PID and the processes it forks (a server's workers) are measured together, as are\n"
"the processes of a cgroup: the figures are the target's, not each process's.\n");
}

/* The sums of every CPU. */
static int read_acc(struct metrics_bpf *skel, int ncpus, struct metrics_acc *out)
{
	struct metrics_acc per[ncpus];
	uint64_t *o = (uint64_t *)out;
	uint32_t zero = 0;
	size_t i, w, nw = sizeof(*out) / sizeof(uint64_t);

	memset(out, 0, sizeof(*out));
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.acc), &zero, per))
		return -1;
	for (i = 0; i < (size_t)ncpus; i++)
		for (w = 0; w < nw; w++)
			o[w] += ((uint64_t *)&per[i])[w];
	return 0;
}

struct figures {
	double secs;
	double rps;		/* 1 / mean inter-send time */
	double sends, recvs;	/* responses and requests per second, counted */
	double gap_var_us2;	/* saturation: variance of inter-receive time */
	double gap_cv2;		/* the same over the squared mean: burstiness without units */
	double slack_us;	/* mean wait */
	double waits;		/* waits per second */
};

static void figures(const struct metrics_acc *now, const struct metrics_acc *then,
		    double secs, struct figures *f)
{
	struct metrics_acc d;
	const uint64_t *a = (const uint64_t *)now, *b = (const uint64_t *)then;
	uint64_t *o = (uint64_t *)&d;
	size_t w;

	for (w = 0; w < sizeof(d) / sizeof(uint64_t); w++)
		o[w] = a[w] - b[w];
	memset(f, 0, sizeof(*f));
	f->secs = secs;
	if (d.send_gap_ns)
		f->rps = 1e9 * d.send_gaps / d.send_gap_ns;
	f->sends = d.sends / secs;
	f->recvs = d.recvs / secs;
	if (d.recv_gaps >= 2) {
		double mean = (double)d.recv_gap_ns / d.recv_gaps;
		double sq = (double)d.recv_gap_sq * (1u << (2 * METRICS_SQ_SHIFT)) / d.recv_gaps;
		double var = sq > mean * mean ? sq - mean * mean : 0;

		f->gap_var_us2 = var / 1e6;
		f->gap_cv2 = mean > 0 ? var / (mean * mean) : 0;
	}
	if (d.waits)
		f->slack_us = d.wait_ns / 1e3 / d.waits;
	f->waits = d.waits / secs;
}

static void print_header(void)
{
	printf("%8s %10s %9s %9s %12s %7s %10s %8s\n", "TIME(s)", "REQ/S", "RESP/S", "RECV/S",
	       "SAT(us^2)", "CV2", "SLACK(us)", "WAITS/S");
}

static void print_row(const char *label, const struct figures *f, double t, bool json)
{
	if (json) {
		json_obj_begin(NULL);
		json_str("type", label);
		json_double("t", t);
		json_double("seconds", f->secs);
		json_double("rps", f->rps);
		json_double("responses_per_s", f->sends);
		json_double("requests_per_s", f->recvs);
		json_double("saturation_us2", f->gap_var_us2);
		json_double("saturation_cv2", f->gap_cv2);
		json_double("slack_us", f->slack_us);
		json_double("waits_per_s", f->waits);
		json_obj_end();
		json_done();
	} else {
		char when[16];

		if (!strcmp(label, "total"))
			snprintf(when, sizeof(when), "total");
		else
			snprintf(when, sizeof(when), "%.1f", t);
		printf("%8s %10.1f %9.1f %9.1f %12.4g %7.3f %10.1f %8.1f\n", when, f->rps, f->sends,
		       f->recvs, f->gap_var_us2, f->gap_cv2, f->slack_us, f->waits);
	}
	fflush(stdout);
}

/* What /metrics serves: the target, its mode, and the sums of every CPU. */
struct metrics_export {
	struct metrics_bpf *skel;
	int ncpus;
	const char *comm;
	const struct syswatch *w;	/* the target (its mode now: a cgroup's may fall back) */
};

/* One sample of a counter, with HELP and TYPE; V in the metric's base unit. */
static void counter(struct xbuf *b, const struct metrics_export *x, const char *name,
		    const char *help, double v)
{
	xbuf_printf(b, "# HELP %s %s\n# TYPE %s counter\n%s{", name, help, name, name);
	syswatch_labels(x->w, x->comm, b);
	xbuf_printf(b, "} %.17g\n", v);
}

/*
 * Counters only, as Prometheus wants them: requests/s is
 * rate(xprobes_responses_total[..]), or the mean time between responses,
 * rate(xprobes_response_gap_seconds_total) / rate(xprobes_response_gaps_total),
 * inverted (what the table's REQ/S is); saturation and slack likewise from
 * their sums (docs/metrics.md).
 */
static int metrics_render(void *arg, struct xbuf *b)
{
	const struct metrics_export *x = arg;
	struct metrics_acc a;

	if (read_acc(x->skel, x->ncpus, &a))
		return -1;
	counter(b, x, "xprobes_responses_total", "Responses sent (a run of sends to a socket).",
		a.sends);
	counter(b, x, "xprobes_requests_total", "Requests read (a run of receives from a socket).",
		a.recvs);
	counter(b, x, "xprobes_response_gaps_total", "Gaps between consecutive responses.",
		a.send_gaps);
	counter(b, x, "xprobes_response_gap_seconds_total",
		"Sum of the gaps between consecutive responses.", a.send_gap_ns / 1e9);
	counter(b, x, "xprobes_request_gaps_total", "Gaps between consecutive requests.",
		a.recv_gaps);
	counter(b, x, "xprobes_request_gap_seconds_total",
		"Sum of the gaps between consecutive requests.", a.recv_gap_ns / 1e9);
	counter(b, x, "xprobes_request_gap_seconds_squared_total",
		"Sum of the squared gaps between consecutive requests (saturation's variance).",
		(double)a.recv_gap_sq * (1u << (2 * METRICS_SQ_SHIFT)) / 1e18);
	counter(b, x, "xprobes_waits_total", "Calls of epoll_wait, poll and select.", a.waits);
	counter(b, x, "xprobes_wait_seconds_total",
		"Time in epoll_wait, poll and select (slack).", a.wait_ns / 1e9);
	counter(b, x, "xprobes_send_calls_total", "Successful send-like system calls on sockets.",
		a.send_calls);
	counter(b, x, "xprobes_receive_calls_total",
		"Successful receive-like system calls on sockets.", a.recv_calls);
	counter(b, x, "xprobes_socket_errors_total", "Failed sends and receives (EAGAIN included).",
		a.errors);
	return 0;
}

int cmd_metrics(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "duration", required_argument, NULL, 'd' },
		{ "no-views", no_argument, NULL, 'N' },
		{ "listen", required_argument, NULL, 'l' },
		{ "textfile", required_argument, NULL, 'x' },
		{ "cgroup", required_argument, NULL, 'G' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		COMMON_OPTS,
		{ 0 }
	};
	double interval = 1, duration = 0;
	bool json = false, no_views = false, verbose = false, cut = false, quiet = false;
	const char *why;
	struct metrics_acc first, prev, now;
	struct metrics_bpf *skel = NULL;
	LIBBPF_OPTS(bpf_object_open_opts, oo);
	struct core_btf cbtf = { 0 };
	struct syswatch w = { 0 };
	struct metrics_export mx = { 0 };
	struct exporter *ex = NULL;
	const char *listen = NULL, *textfile = NULL, *cg_arg = NULL;
	struct cgtarget cg;
	char tname[PATH_MAX + 32], what[PATH_MAX + 64];
	struct figures f;
	uint64_t start, prev_ns, next, end, t;
	int c, ncpus, ret = EXIT_RUNTIME;
	char comm[32];
	uint32_t pid;

	while ((c = getopt_long(argc, argv, "i:d:qvhj", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (!parse_interval(optarg, &interval))
				return usage_error("bad interval '%s' (seconds, 0.01 at least)", optarg);
			break;
		case 'd':
			if (!parse_secs(optarg, &duration))
				return usage_error("bad duration '%s' (seconds)", optarg);
			break;
		case 'N': no_views = true; break;
		case 'l':
			listen = optarg;
			if (!exporter_listen_ok(listen, &why))
				return usage_error("bad --listen '%s': %s", listen, why);
			break;
		case 'x': textfile = optarg; break;
		case 'G': cg_arg = optarg; break;
		case 'q': quiet = true; break;
		case 'v': verbose = true; break;
		case 'j': json = true; break;
		case 'h': metrics_usage(stdout); return EXIT_OK;
		default: return EXIT_USAGE;
		}
	}
	if (optind + !cg_arg != argc)
		return usage_error(cg_arg ? "metrics takes a PID or --cgroup, not both"
				   : "metrics takes one PID (or --cgroup PATH)");
	libbpf_messages(verbose, true);
	if (cg_arg)
		c = syswatch_open_cgroup(&w, &cg, cg_arg, no_views);
	else
		c = syswatch_open(&w, argv[optind], no_views, comm, sizeof(comm));
	if (c != EXIT_OK)
		return c;
	pid = w.pid;
	ncpus = libbpf_num_possible_cpus();
	oo.btf_custom_path = core_btf_prepare(&cbtf);
	skel = metrics_bpf__open_opts(&oo);
	if (!skel) {
		fprintf(stderr, "xprobectl: cannot open the BPF object: %s\n", strerror(errno));
		goto out;
	}
	skel->rodata->target_tgid = pid;
	syswatch_prepare(&w, skel->obj);
	if (core_btf_fill(&cbtf, skel->obj))
		goto out;
	if (metrics_bpf__load(skel)) {
		fprintf(stderr, "xprobectl: cannot load the BPF programs (%s): run as root on a "
			"kernel with BTF (5.12 or later); -v shows the verifier's log\n",
			strerror(errno));
		goto out;
	}
	if (syswatch_attach(&w, skel->obj) || read_acc(skel, ncpus, &first))
		goto out;
	mx = (struct metrics_export){ .skel = skel, .ncpus = ncpus, .comm = comm, .w = &w };
	syswatch_names(&w, comm, "xprobes_metrics_", what, sizeof(what), tname, sizeof(tname));
	if (exporter_open(listen, textfile, tname, metrics_render, &mx, &ex))
		goto out;

	stop_on_signals();
	fprintf(stderr, "xprobectl: metrics of %s, %s%s\n", what, syswatch_mode(&w),
		duration ? "" : "; Ctrl-C ends");
	if (!json && !quiet)
		print_header();
	prev = first;
	start = prev_ns = mono_ns();
	next = start + (uint64_t)(interval * 1e9);
	end = duration ? start + (uint64_t)(duration * 1e9) : 0;
	while (!stop_req) {
		/*
		 * Until the next interval, waking at least every 100 ms to see
		 * the target gone: in a busy guest, polling at 100 Hz was a
		 * measurable share of everyone's CPU (bench/metrics.sh).
		 */
		t = mono_ns();
		if (t < next)
			usleep(next - t < 100000000 ? (next - t) / 1000 + 1 : 100000);
		t = mono_ns();
		if (!syswatch_alive(&w) || (end && t >= end))
			break;
		syswatch_poll(&w);
		if (syswatch_view_ended(&w)) {
			cut = true;
			break;
		}
		if (t < next)
			continue;
		if (read_acc(skel, ncpus, &now))
			break;
		figures(&now, &prev, (t - prev_ns) / 1e9, &f);
		if (!quiet)
			print_row("interval", &f, (t - start) / 1e9, json);
		if (textfile)
			textfile_write(textfile, tname, metrics_render, &mx);
		prev = now;
		prev_ns = t;
		next += (uint64_t)(interval * 1e9);
	}
	t = mono_ns();
	if (!quiet && !read_acc(skel, ncpus, &now)) {
		figures(&now, &first, (t - start) / 1e9, &f);
		print_row("total", &f, (t - start) / 1e9, json);
	}
	ret = cut ? EXIT_RUNTIME : EXIT_OK;
out:
	exporter_stop(ex);	/* before the maps it reads */
	syswatch_end(&w);
	metrics_bpf__destroy(skel);
	core_btf_release(&cbtf);
	return ret;
}
