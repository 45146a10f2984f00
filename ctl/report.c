// SPDX-License-Identifier: GPL-2.0
/*
 * xprobectl trace reports: the human table, --json (schema in
 * docs/trace.md), --folded, histograms and the per-thread breakdown.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "json.h"
#include "nl.h"
#include "tracer.h"
#include "wakers.h"
#include "trace.skel.h"

static const char *const cause_names[NR_CAUSES] = {
	"runq", "wakeup", "throttled", "lock", "mem", "io", "net", "sleep", "other",
};

static const char *const counter_names[NR_COUNTERS] = {
	"entries", "returns", "unmatched", "abandoned", "depth_overflow",
	"switch_out", "switch_in", "no_thread", "fixups", "exits",
	"record_batches", "records", "records_no_thread", "record_calls", "wakers_lost",
	"forks", "forks_lost", "unwinds", "early", "calls_summed",
	"calls_lost", "returns_lost",
};

const char *trace_cause_name(int i)
{
	return i >= 0 && i < NR_CAUSES ? cause_names[i] : "?";
}

/*
 * How a function is probed: a user hook's jump ("uhook"), a user hook
 * whose int3 stays ("trap": no jump possible there, docs/userhooks.md), or
 * a uprobe and a uretprobe.
 */
static const char *probe_kind(const struct tfunc *f)
{
	return !f->uhook ? "uprobe" : f->uhook_trap ? "trap" : "uhook";
}

/* The cause columns of a table's header, and of one of its rows: "name%" wide, 6 at least. */
static int cause_width(int i)
{
	int w = strlen(cause_names[i]) + 1;

	return w < 6 ? 6 : w;
}

static void cause_header(void)
{
	char nb[16];
	int i;

	for (i = 0; i < NR_CAUSES; i++) {
		snprintf(nb, sizeof(nb), "%s%%", cause_names[i]);
		printf(" %*s", cause_width(i), nb);
	}
}

static void cause_row(const __u64 *off, uint64_t wall)
{
	double pw = wall ? 100.0 / wall : 0;
	int i;

	for (i = 0; i < NR_CAUSES; i++)
		printf(" %*.1f", cause_width(i), off[i] * pw);
}

/* One CPU's slot @s of a function into its sum @d. */
static void add_stats(struct func_fig *d, const struct func_stats *s)
{
	int i;

	d->calls += s->calls;
	d->wall += s->wall;
	d->on_incl += s->on_incl;
	d->on_excl += s->on_excl;
	d->allon += s->allon;
	d->calls_lost += s->calls_lost;
	d->returns_lost += s->returns_lost;
	for (i = 0; i < TRACE_HIST; i++) {
		d->hist_wall[i] += s->hist_wall[i];
		d->hist_on[i] += s->hist_on[i];
		d->hist_allon[i] += s->hist_allon[i];
	}
}

/* A function's OFF-CPU figures @o (all CPUs) into its sum @d. */
static void add_off(struct func_fig *d, const struct func_off *o)
{
	int c, i;

	for (c = 0; c < NR_CAUSES; c++) {
		d->off_incl[c] += o->off_incl[c];
		d->off_excl[c] += o->off_excl[c];
		for (i = 0; i < TRACE_HIST; i++)
			d->hist_off[c][i] += o->hist_off[c][i];
	}
}

/* @d less @s, every figure: an interval's change. */
static void sub_figs(struct func_fig *d, const struct func_fig *s)
{
	const uint64_t *a = (const uint64_t *)s;
	uint64_t *b = (uint64_t *)d;
	size_t i;

	for (i = 0; i < sizeof(*d) / 8; i++)
		b[i] -= a[i];
}

/* Calls all ON-CPU, kept apart by BPF (struct func_stats): into wall and ON-CPU. */
static void allon_in(struct func_fig *f)
{
	int i;

	f->wall += f->allon;
	f->on_incl += f->allon;
	f->allon = 0;
	for (i = 0; i < TRACE_HIST; i++) {
		f->hist_wall[i] += f->hist_allon[i];
		f->hist_on[i] += f->hist_allon[i];
		f->hist_allon[i] = 0;
	}
}

/* One UREC_SUMS reply: its functions into the session's figures. */
struct usums_walk {
	struct tsession *s;
	struct func_fig *sum;
	uint64_t calls;
	uint32_t next;			/* XPROBES_USUM_FUNCS: done */
};

static int usums_got(struct nlattr **tb, void *arg)
{
	struct usums_walk *w = arg;
	const struct xprobes_usum *u;
	size_t n, i;
	int b;

	w->next = tb[XPROBES_A_COOKIE] ? (uint32_t)nla_get_u64(tb[XPROBES_A_COOKIE]) :
		  XPROBES_USUM_FUNCS;
	if (!tb[XPROBES_A_USUMS])
		return 0;
	u = nla_data(tb[XPROBES_A_USUMS]);
	n = nla_len(tb[XPROBES_A_USUMS]) / sizeof(*u);
	for (i = 0; i < n; i++) {
		struct func_fig *f;

		if (u[i].cookie >= (uint32_t)w->s->nfuncs)
			continue;
		w->calls += u[i].calls;
		f = &w->sum[u[i].cookie];
		f->calls += u[i].calls;
		f->allon += u[i].wall;
		f->on_excl += u[i].own;
		for (b = 0; b < TRACE_HIST && b < XPROBES_USUM_HIST; b++)
			f->hist_allon[b] += u[i].hist[b];
	}
	return 0;
}

/*
 * The calls the traced processes summed themselves (XPROBES_F_SUMS: user
 * hooks with records, views mode), added to SUM (all ON-CPU: to the
 * all-ON figures, which allon_in() moves into wall and ON-CPU). Returns
 * how many calls that was. A process whose view ended gave its sums to
 * the module, which keeps them for our socket.
 */
static uint64_t usums_collect(struct tsession *s, struct func_fig *sum)
{
	struct usums_walk w = { .s = s, .sum = sum };
	int i;

	if (!s->views || !s->sums || !s->records || !s->nuhooks || !s->nl)
		return 0;
	for (i = -1; i < s->ncg_roots; i++) {
		pid_t pid = i < 0 ? s->pid : s->cg_roots[i];

		if (i >= 0 && pid == s->pid)
			continue;	/* --cgroup lists the target among its roots */
		w.next = 0;
		while (w.next < XPROBES_USUM_FUNCS) {
			struct nl_msg *msg = xp_nl_msg(s->nl, XPROBES_CMD_UREC_SUMS, 0);
			uint32_t from = w.next;

			nla_put_u32(msg, XPROBES_A_PID, pid);
			nla_put_u64(msg, XPROBES_A_COOKIE, w.next);
			if (xp_nl_call(s->nl, msg, usums_got, &w) || w.next <= from)
				break;	/* none for it (its view made none, or went) */
		}
	}
	return w.calls;
}

/*
 * The stats map as read-only memory (BPF_F_MMAPABLE), mapped at the first
 * report: every shard of every function without a system call each. NULL
 * if it cannot be mapped.
 */
static size_t stats_len(const struct tsession *s)
{
	_Static_assert(sizeof(struct func_stats) % 8 == 0, "array values are 8-aligned apart");
	return ((size_t)s->nfuncs << s->shard_bits) * sizeof(struct func_stats);
}

static const struct func_stats *stats_mapped(struct tsession *s)
{
	void *p;

	if (!s->stats_mem) {
		p = mmap(NULL, stats_len(s), PROT_READ, MAP_SHARED,
			 bpf_map__fd(s->skel->maps.stats), 0);
		s->stats_mem = p == MAP_FAILED ? NULL : p;
	}
	return s->stats_mem;
}

/* Unmap what stats_mapped() mapped, before the map goes. */
void report_unmap(struct tsession *s)
{
	if (s->stats_mem)
		munmap(s->stats_mem, stats_len(s));
	s->stats_mem = NULL;
}

/*
 * Sum the shards and the OFF-CPU figures of every traced function; *SUMMED: the calls the
 * processes summed themselves, among them (read once per report).
 */
static int collect(struct tsession *s, struct func_fig *sum, uint64_t *summed)
{
	int fd = bpf_map__fd(s->skel->maps.stats), ofd = bpf_map__fd(s->skel->maps.offstats);
	const struct func_stats *mem = stats_mapped(s);
	uint32_t k, i, n = 1u << s->shard_bits;
	struct func_stats one;
	struct func_off off;

	*summed = 0;
	memset(sum, 0, sizeof(*sum) * s->nfuncs);
	for (k = 0; k < (uint32_t)s->nfuncs; k++) {
		if (!bpf_map_lookup_elem(ofd, &k, &off))
			add_off(&sum[k], &off);
		for (i = 0; i < n; i++) {
			uint32_t key = k << s->shard_bits | i;

			if (mem)
				add_stats(&sum[k], &mem[key]);
			else if (!bpf_map_lookup_elem(fd, &key, &one))
				add_stats(&sum[k], &one);
		}
	}
	*summed = usums_collect(s, sum);
	for (k = 0; k < (uint32_t)s->nfuncs; k++)
		allon_in(&sum[k]);
	return 0;
}

/* Counter K, summed over the CPUs (0 if it cannot be read). */
static uint64_t counter(struct tsession *s, uint32_t k)
{
	uint64_t *v = calloc(s->ncpus, sizeof(*v)), sum = 0;
	int c;

	if (v && !bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.counters), &k, v))
		for (c = 0; c < s->ncpus; c++)
			sum += v[c];
	free(v);
	return sum;
}

/* The report's counters; SUMMED: collect()'s. */
static void counters(struct tsession *s, uint64_t *out, uint64_t summed)
{
	struct trace_rec_counts *rc = calloc(s->ncpus, sizeof(*rc));
	uint32_t k;
	int c;

	for (k = 0; k < NR_COUNTERS; k++)
		out[k] = counter(s, k);
	k = 0;
	if (rc && !bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.rec_counts), &k, rc)) {
		for (c = 0; c < s->ncpus; c++) {
			out[CNT_REC_BATCHES] += rc[c].batches;
			out[CNT_REC_RECORDS] += rc[c].records;
			out[CNT_REC_CALLS] += rc[c].calls;
			out[CNT_ENTRIES] += rc[c].entries + rc[c].calls;	/* a whole call: both */
			out[CNT_RETURNS] += rc[c].returns + rc[c].calls;
		}
	}
	free(rc);
	/* the calls the processes summed themselves: whole calls too */
	out[CNT_SUMMED] = summed;
	out[CNT_ENTRIES] += summed;
	out[CNT_RETURNS] += summed;
}

static uint64_t off_sum(const __u64 *off)
{
	uint64_t t = 0;
	int i;

	for (i = 0; i < NR_CAUSES; i++)
		t += off[i];
	return t;
}

static const char *fname(const struct tsession *s, int i, char *buf, size_t len)
{
	const struct tfunc *f = &s->funcs[i];
	const char *base;

	if (f->main_bin)
		return f->name;
	base = strrchr(f->path, '/');
	snprintf(buf, len, "%s:%s", base ? base + 1 : f->path, f->name);
	return buf;
}

/* "12.3ms": 4 significant digits at most, fits in 8 columns. */
const char *trace_dur(uint64_t ns, char *buf)
{
	if (ns < 10000)
		sprintf(buf, "%" PRIu64 "ns", ns);
	else if (ns < 10000000)
		sprintf(buf, "%.1fus", ns / 1e3);
	else if (ns < 10000000000ull)
		sprintf(buf, "%.1fms", ns / 1e6);
	else
		sprintf(buf, "%.2fs", ns / 1e9);
	return buf;
}

static const struct tsession *sort_s;
static const struct func_fig *sort_v;

static uint64_t sort_val(int i)
{
	const struct func_fig *f = &sort_v[i];

	switch (sort_s->sort) {
	case SORT_CALLS: return f->calls;
	case SORT_ON: return f->on_incl;
	case SORT_OFF: return off_sum(f->off_incl);
	case SORT_SELF: return f->on_excl + off_sum(f->off_excl);
	default: return f->wall;
	}
}

static int cmp_rows(const void *a, const void *b)
{
	uint64_t x = sort_val(*(const int *)a), y = sort_val(*(const int *)b);

	return x < y ? 1 : x > y ? -1 : *(const int *)a - *(const int *)b;
}

/* Indices of functions called at least once, sorted. */
static int rows(const struct tsession *s, const struct func_fig *v, int *idx)
{
	int i, n = 0;

	for (i = 0; i < s->nfuncs; i++)
		if (v[i].calls)
			idx[n++] = i;
	sort_s = s;
	sort_v = v;
	qsort(idx, n, sizeof(*idx), cmp_rows);
	return n;
}

static void print_hist(const char *what, const __u64 *h)
{
	uint64_t max = 0;
	int i, lo = -1, hi = -1, j, w;

	for (i = 0; i < TRACE_HIST; i++) {
		if (!h[i])
			continue;
		if (lo < 0)
			lo = i;
		hi = i;
		if (h[i] > max)
			max = h[i];
	}
	if (lo < 0)
		return;
	printf("    %s, ns per call:\n", what);
	for (i = lo; i <= hi; i++) {
		uint64_t a = i ? 1ull << i : 0, b = (1ull << (i + 1)) - 1;

		w = (int)((double)h[i] * 40 / max);
		printf("    %12" PRIu64 " -> %-12" PRIu64 " : %-8" PRIu64 " |", a, b, (uint64_t)h[i]);
		for (j = 0; j < 40; j++)
			putchar(j < w ? '*' : ' ');
		printf("|\n");
	}
}
const char *trace_signame(int sig, char *buf, size_t len)
{
	snprintf(buf, len, "SIG%s", sigabbrev_np(sig) ?: "?");
	return buf;
}

/* ", the process exited with status N" and the like, for the final header. */
static const char *end_text(const struct tsession *s, char *buf, size_t len)
{
	char name[16];

	switch (s->end) {
	case TEND_EXITED:
		snprintf(buf, len, "; it exited with status %d", s->end_code);
		return buf;
	case TEND_KILLED:
		snprintf(buf, len, "; it was killed by %s",
			 trace_signame(s->end_code, name, sizeof(name)));
		return buf;
	case TEND_GONE:
		return "; it ended";
	default:
		return "";
	}
}


static void print_table(struct tsession *s, const struct func_fig *v, uint64_t elapsed,
			bool final, const uint64_t *cnt)
{
	int *idx = malloc(sizeof(int) * (s->nfuncs + 1)), n, r, i, w = 8;
	char nb[600], b1[32], b2[32], b3[32], b4[32], b5[32], eb[48];

	if (!idx)
		return;
	n = rows(s, v, idx);
	if (s->top && n > s->top)
		n = s->top;
	for (r = 0; r < n; r++) {
		int l = (int)strlen(fname(s, idx[r], nb, sizeof(nb)));

		if (l > w)
			w = l < 48 ? l : 48;
	}
	if (s->children)
		snprintf(nb, sizeof(nb), " and the %d process%s it forked", s->nprocs,
			 s->nprocs == 1 ? "" : "es");
	printf("%s pid %d (%s)%s, %s mode%s%s, %.2f s, %d function%s traced%s%s\n",
	       final ? "Total for" : "Interval for", s->pid, s->comm, s->children ? nb : "",
	       s->views ? "views" : "fallback",
	       s->mode_note[0] ? ": " : "", s->mode_note, elapsed / 1e9,
	       s->nfuncs, s->nfuncs == 1 ? "" : "s", s->nfailed ? " (some could not be probed)" : "",
	       final ? end_text(s, eb, sizeof(eb)) : "");
	printf("%-*s %8s %9s %9s %9s %9s %9s ", w, "FUNCTION",
	       "CALLS", "TOTAL", "AVG", "SELF", "ON-CPU", "OFF-CPU");
	cause_header();
	printf("  PROBE\n");
	for (r = 0; r < n; r++) {
		const struct func_fig *f = &v[idx[r]];
		uint64_t off = off_sum(f->off_incl);

		printf("%-*.*s %8" PRIu64 " %9s %9s %9s %9s %9s ", w, w, fname(s, idx[r], nb, sizeof(nb)),
		       (uint64_t)f->calls, trace_dur(f->wall, b1), trace_dur(f->wall / f->calls, b2),
		       trace_dur(f->on_excl + off_sum(f->off_excl), b3), trace_dur(f->on_incl, b4), trace_dur(off, b5));
		cause_row(f->off_incl, f->wall);
		printf("  %s\n", probe_kind(&s->funcs[idx[r]]));
		if (!s->hist)
			continue;
		print_hist("wall", f->hist_wall);
		print_hist("on-CPU", f->hist_on);
		for (i = 0; i < NR_CAUSES; i++) {
			snprintf(nb, sizeof(nb), "off-CPU %s", cause_names[i]);
			print_hist(nb, f->hist_off[i]);
		}
	}
	if (!n)
		printf("(no traced function returned yet)\n");
	if (final) {
		printf("# TOTAL is inclusive wall time, SELF excludes traced callees; causes are %% of TOTAL.\n");
		printf("# events:");
		for (i = 0; i < NR_COUNTERS; i++)
			printf(" %s=%" PRIu64, counter_names[i], cnt[i]);
		printf("\n");
	}
	free(idx);
}

static void json_causes(const char *key, const __u64 *off)
{
	int i;

	json_obj_begin(key);
	for (i = 0; i < NR_CAUSES; i++)
		json_u64(cause_names[i], off[i]);
	json_obj_end();
}

static void json_hist(const char *key, const __u64 *h)
{
	int i;

	json_arr_begin(key);
	for (i = 0; i < TRACE_HIST; i++) {
		if (!h[i])
			continue;
		json_obj_begin(NULL);
		json_u64("lo_ns", i ? 1ull << i : 0);
		json_u64("count", h[i]);
		json_obj_end();
	}
	json_arr_end();
}

/*
 * The next per-thread row of FUNC with its thread's name (NONE if unknown).
 * *STARTED is false on the first call. Returns false at the end.
 */
static bool next_thread(struct tsession *s, uint32_t func, bool *started,
			struct thread_func_key *k, struct thread_func_stats *ts,
			char comm[16], const char *none)
{
	int fd = bpf_map__fd(s->skel->maps.tstats);

	while (!bpf_map_get_next_key(fd, *started ? k : NULL, k)) {
		*started = true;
		if (k->func != func || bpf_map_lookup_elem(fd, k, ts) || !ts->calls)
			continue;
		snprintf(comm, 16, "%s", none);
		bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.comms), &k->tid, comm);
		comm[15] = 0;
		return true;
	}
	return false;
}

/* The members of a per-thread (-T) or per-process (--children) row. */
static void json_tstats(const struct thread_func_stats *ts)
{
	json_u64("calls", ts->calls);
	json_u64("wall_ns", ts->wall);
	json_u64("on_cpu_ns", ts->on_incl);
	json_u64("off_cpu_ns", off_sum(ts->off_incl));
	json_causes("off_cpu_ns_by_cause", ts->off_incl);
}

static void json_threads(struct tsession *s, uint32_t func)
{
	struct thread_func_key k;
	struct thread_func_stats ts;
	bool started = false;
	char comm[16];

	json_arr_begin("threads");
	while (next_thread(s, func, &started, &k, &ts, comm, "")) {
		json_obj_begin(NULL);
		json_u64("tid", k.tid);
		json_str("comm", comm);
		json_tstats(&ts);
		json_obj_end();
	}
	json_arr_end();
}

static void json_procs(struct tsession *s, const struct func_fig *v);
static int unprobed(const struct tsession *s);

static void print_json(struct tsession *s, const struct func_fig *v, uint64_t elapsed,
		       bool final, const uint64_t *cnt, const struct waker_slot *w, int nw)
{
	int *idx = malloc(sizeof(int) * (s->nfuncs + 1)), n, r, i;
	char off_hex[32];

	if (!idx)
		return;
	n = rows(s, v, idx);
	json_obj_begin(NULL);
	json_str("schema", "xprobes-trace/1");
	json_u64("pid", s->pid);
	json_str("comm", s->comm);
	json_str("mode", s->views ? "views" : "fallback");
	json_str("mode_note", s->mode_note);
	json_str("user_hooks", !s->nuhooks ? "none" : s->records ? "records" : "events");
	json_bool("final", final);
	json_u64("elapsed_ns", elapsed);
	json_u64("functions_traced", s->nfuncs);
	json_u64("functions_failed", s->nfailed);
	if (final) {
		static const char *const ends[] = { "running", "exited", "killed", "ended" };

		json_obj_begin("target");
		json_str("end", ends[s->end]);
		if (s->end == TEND_EXITED)
			json_u64("status", s->end_code);
		if (s->end == TEND_KILLED) {
			char name[16];

			json_u64("signal", s->end_code);
			json_str("signal_name", trace_signame(s->end_code, name, sizeof(name)));
		}
		json_obj_end();
	}
	json_arr_begin("causes");
	for (i = 0; i < NR_CAUSES; i++)
		json_str(NULL, cause_names[i]);
	json_arr_end();
	json_obj_begin("counters");
	for (i = 0; i < NR_COUNTERS; i++)
		json_u64(counter_names[i], cnt[i]);
	json_obj_end();
	json_arr_begin("functions");
	for (r = 0; r < n; r++) {
		const struct func_fig *f = &v[idx[r]];
		const struct tfunc *t = &s->funcs[idx[r]];

		json_obj_begin(NULL);
		json_str("name", t->name);
		json_str("module", t->path);
		snprintf(off_hex, sizeof(off_hex), "0x%" PRIx64, t->offset);
		json_str("offset", off_hex);
		json_str("probe", probe_kind(t));
		json_u64("calls", f->calls);
		json_u64("calls_lost", f->calls_lost);
		json_u64("returns_lost", f->returns_lost);
		json_u64("wall_ns", f->wall);
		json_u64("on_cpu_ns", f->on_incl);
		json_u64("off_cpu_ns", off_sum(f->off_incl));
		json_causes("off_cpu_ns_by_cause", f->off_incl);
		json_obj_begin("self");
		json_u64("wall_ns", f->on_excl + off_sum(f->off_excl));
		json_u64("on_cpu_ns", f->on_excl);
		json_u64("off_cpu_ns", off_sum(f->off_excl));
		json_causes("off_cpu_ns_by_cause", f->off_excl);
		json_obj_end();
		json_obj_begin("histograms");
		json_hist("wall", f->hist_wall);
		json_hist("on_cpu", f->hist_on);
		json_obj_begin("off_cpu");
		for (i = 0; i < NR_CAUSES; i++)
			json_hist(cause_names[i], f->hist_off[i]);
		json_obj_end();
		json_obj_end();
		if (s->per_thread && final)
			json_threads(s, idx[r]);
		if (s->wakers)
			wakers_json(s, w, nw, idx[r]);
		json_obj_end();
	}
	json_arr_end();
	if (s->children && final) {
		json_procs(s, v);
		/* processes followed, and those whose calls went uncounted */
		json_u64("processes_followed", s->nprocs);
		json_u64("processes_unprobed", unprobed(s));
	}
	json_obj_end();
	json_done();
	free(idx);
}

static void print_threads(struct tsession *s, const struct func_fig *v)
{
	int *idx = malloc(sizeof(int) * (s->nfuncs + 1)), n, r;
	char nb[600], b1[32], b2[32], b3[32];

	if (!idx)
		return;
	n = rows(s, v, idx);
	printf("\nPer thread:\n%-32s %8s %-16s %8s %9s %9s %9s ",
	       "FUNCTION", "TID", "COMM", "CALLS", "TOTAL", "ON-CPU", "OFF-CPU");
	cause_header();
	printf("\n");
	for (r = 0; r < n; r++) {
		struct thread_func_key k;
		struct thread_func_stats ts;
		bool started = false;
		char comm[16];

		while (next_thread(s, idx[r], &started, &k, &ts, comm, "?")) {

			printf("%-32.32s %8u %-16s %8" PRIu64 " %9s %9s %9s ",
			       fname(s, idx[r], nb, sizeof(nb)), k.tid, comm, (uint64_t)ts.calls,
			       trace_dur(ts.wall, b1), trace_dur(ts.on_incl, b2), trace_dur(off_sum(ts.off_incl), b3));
			cause_row(ts.off_incl, ts.wall);
			printf("\n");
		}
	}
	free(idx);
}

/* --children: the first of the processes in report slot SLOT (not 0); N: how many. */
static const struct tproc *slot_first(const struct tsession *s, uint32_t slot, int *n)
{
	const struct tproc *first = NULL;
	int i;

	*n = 0;
	for (i = 0; i < s->nprocs; i++) {
		if (s->procs[i].slot != slot)
			continue;
		if (!(*n)++)
			first = &s->procs[i];
	}
	return first;
}

/*
 * --children: report slot SLOT's process (the target for 0): pid, parent,
 * name, and how many processes share it (the last slot takes all the
 * processes that came after the others were given out).
 */
static int slot_proc(const struct tsession *s, uint32_t slot, pid_t *pid, pid_t *parent,
		     const char **comm)
{
	const struct tproc *p;
	int n;

	if (!slot) {
		*pid = s->pid;
		*parent = 0;
		*comm = s->comm;
		return 1;
	}
	p = slot_first(s, slot, &n);
	if (p) {
		*pid = p->pid;
		*parent = p->parent;
		*comm = p->comm;
	}
	return n;
}

/* --children: the calls of FUNC in SLOT's processes; false if none. */
static bool slot_stats(const struct tsession *s, uint32_t slot, int func,
		       struct thread_func_stats *ps)
{
	uint32_t k = slot * s->nfuncs + func;

	return !bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.pstats), &k, ps) && ps->calls;
}

/*
 * --children: FN once per report slot in use, with its process (NP: how
 * many share it) and the functions in the table's order (IDX, N of them).
 */
typedef void (*slot_fn)(struct tsession *s, uint32_t slot, int np, pid_t pid, pid_t parent,
			const char *comm, const int *idx, int n);

static void each_slot(struct tsession *s, const struct func_fig *v, slot_fn fn)
{
	int *idx = malloc(sizeof(int) * (s->nfuncs + 1)), n, np;
	const char *comm;
	pid_t pid, parent;
	uint32_t slot;

	if (!idx)
		return;
	n = rows(s, v, idx);
	for (slot = 0; slot < TRACE_PROC_SLOTS; slot++) {
		np = slot_proc(s, slot, &pid, &parent, &comm);
		if (np)
			fn(s, slot, np, pid, parent, comm, idx, n);
	}
	free(idx);
}

static void print_slot(struct tsession *s, uint32_t slot, int np, pid_t pid, pid_t parent,
		       const char *comm, const int *idx, int n)
{
	char nb[600], b1[32], b2[32], b3[32], who[48], pb[16];
	struct thread_func_stats ps;
	int r;

	if (np > 1)
		snprintf(who, sizeof(who), "%.15s +%d more", comm, np - 1);
	else
		snprintf(who, sizeof(who), "%s", comm);
	snprintf(pb, sizeof(pb), "%d", (int)parent);
	for (r = 0; r < n; r++) {
		if (!slot_stats(s, slot, idx[r], &ps))
			continue;
		printf("%-8d %-8s %-20.20s %-32.32s %8" PRIu64 " %9s %9s %9s ", (int)pid,
		       parent ? pb : "-", who, fname(s, idx[r], nb, sizeof(nb)), (uint64_t)ps.calls,
		       trace_dur(ps.wall, b1), trace_dur(ps.on_incl, b2),
		       trace_dur(off_sum(ps.off_incl), b3));
		cause_row(ps.off_incl, ps.wall);
		printf("\n");
	}
}

/* --children: how long after its fork SLOT's one process got its uprobes; -1 if unknown. */
static int64_t slot_probes_ms(const struct tsession *s, uint32_t slot)
{
	const struct tproc *p;
	int n;

	if (!slot)
		return -1;
	p = slot_first(s, slot, &n);
	return n == 1 ? p->probes_ms : -1;
}

/* --children: processes whose uprobes could not be attached (file descriptors, exec) */
static int unprobed(const struct tsession *s)
{
	int i, n = 0;

	for (i = 0; i < s->nprocs; i++)
		n += s->procs[i].unprobed;
	return n;
}

static void print_procs(struct tsession *s, const struct func_fig *v)
{
	int64_t lo = -1, hi = -1;
	char late[128] = "";
	int i;

	for (i = 0; i < s->nprocs; i++) {
		int64_t ms = s->procs[i].probes_ms;

		if (ms < 0)
			continue;
		lo = lo < 0 || ms < lo ? ms : lo;
		hi = ms > hi ? ms : hi;
	}
	if (hi >= 0)
		snprintf(late, sizeof(late), "; uprobes in %lld-%lld ms after the fork, calls before "
			 "not counted", (long long)lo, (long long)hi);
	printf("\nPer process (--children; %d followed, %d without uprobes%s):\n"
	       "%-8s %-8s %-20s %-32s %8s %9s %9s %9s ", s->nprocs, unprobed(s), late,
	       "PID", "PARENT", "COMM", "FUNCTION", "CALLS", "TOTAL", "ON-CPU", "OFF-CPU");
	cause_header();
	printf("\n");
	each_slot(s, v, print_slot);
}

static void json_slot(struct tsession *s, uint32_t slot, int np, pid_t pid, pid_t parent,
		      const char *comm, const int *idx, int n)
{
	int64_t late = slot_probes_ms(s, slot);
	struct thread_func_stats ps;
	int r;

	json_obj_begin(NULL);
	json_u64("pid", pid);
	json_u64("parent", parent);
	json_str("comm", comm);
	json_u64("processes", np);	/* > 1: the last slot, shared */
	if (late >= 0)	/* a child: its calls before that are not counted */
		json_u64("probes_after_ms", late);
	json_arr_begin("functions");
	for (r = 0; r < n; r++) {
		if (!slot_stats(s, slot, idx[r], &ps))
			continue;
		json_obj_begin(NULL);
		json_str("name", s->funcs[idx[r]].name);
		json_tstats(&ps);
		json_obj_end();
	}
	json_arr_end();
	json_obj_end();
}

static void json_procs(struct tsession *s, const struct func_fig *v)
{
	json_arr_begin("processes");
	each_slot(s, v, json_slot);
	json_arr_end();
}

/* Add a thread's pending stack time (see charge_fold() in trace.bpf.c) to the fold map. */
static void fold_pending(int fd, const struct thread_state *st)
{
	struct fold_key k = {};
	uint64_t ns;
	uint32_t i;

	for (i = 0; i < st->depth && i < TRACE_FOLD_DEPTH && i < TRACE_MAX_DEPTH; i++)
		k.funcs[i] = st->frames[i].func;
	k.depth = i;
	if (!k.depth)
		return;
	for (i = 0; i <= NR_CAUSES + TRACE_WPEND; i++) {
		uint64_t add = i <= NR_CAUSES ? st->pend[i] : 0;

		k.kind = i;
		k.waker = 0;
		if (i > NR_CAUSES && i - NR_CAUSES - 1 < st->nwpend) {	/* -W */
			k.kind = st->wpend[i - NR_CAUSES - 1].kind;
			k.waker = st->wpend[i - NR_CAUSES - 1].waker;
			add = st->wpend[i - NR_CAUSES - 1].ns;
		}
		if (!add)
			continue;
		if (bpf_map_lookup_elem(fd, &k, &ns))
			ns = 0;
		ns += add;
		bpf_map_update_elem(fd, &k, &ns, BPF_ANY);
	}
}

/*
 * The BPF side marks exited threads instead of deleting them (its exit hook
 * runs where map locks are off limits): fold what they left pending, delete
 * them. At the end, live threads' pending time is folded too (read only: a
 * thread still running can flush the same time once more, at most one
 * scheduling slice). True if threads exited since the last call: the
 * caller comes back sooner then, before the table fills.
 */
bool threads_sweep(struct tsession *s, bool final)
{
	int fd = bpf_map__fd(s->skel->maps.threads), ffd = bpf_map__fd(s->skel->maps.fold);
	uint64_t exits = counter(s, CNT_EXITS), now = mono_ns();
	bool churn = exits != s->seen_exits;
	struct thread_state *st;
	uint32_t k, *prev = NULL, *dead;
	int n = 0, i;

	s->seen_exits = exits;
	/* Not when nothing exited; under thread churn, once a second or per 1/4 table. */
	if (!final && (exits == s->swept_exits ||
		       (now < s->swept_ns + 1000000000ull &&
			exits < s->swept_exits + TRACE_MAX_THREADS / 4)))
		return churn;
	s->swept_ns = now;
	s->swept_exits = exits;
	st = malloc(sizeof(*st));
	dead = calloc(TRACE_MAX_THREADS, sizeof(*dead));
	/* Deleting while walking would restart the walk: collect, then delete. */
	while (st && dead && n < TRACE_MAX_THREADS && !bpf_map_get_next_key(fd, prev, &k)) {
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, st) || (!st->exited && !final))
			continue;
		if (s->fold)
			fold_pending(ffd, st);
		if (st->exited)
			dead[n++] = k;
	}
	for (i = 0; i < n; i++)
		bpf_map_delete_elem(fd, &dead[i]);
	free(dead);
	free(st);
	return churn;
}

/* Folded stacks: "comm;outer;inner[;cause] microseconds", flamegraph.pl input. */
static void print_folded(struct tsession *s)
{
	int fd = bpf_map__fd(s->skel->maps.fold);
	struct fold_key k, *prev = NULL;
	char nb[600];
	uint64_t ns;
	uint32_t i;

	while (!bpf_map_get_next_key(fd, prev, &k)) {
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, &ns) || ns < 500)
			continue;
		printf("%s", s->comm);
		for (i = 0; i < k.depth && i < TRACE_FOLD_DEPTH; i++)
			printf(";%s", k.funcs[i] < (uint32_t)s->nfuncs ?
			       fname(s, k.funcs[i], nb, sizeof(nb)) : "?");
		if (k.kind && k.kind <= NR_CAUSES)
			printf(";[%s]", cause_names[k.kind - 1]);
		if (k.waker)
			printf(";[woken by %s]", wakers_frame(s, k.waker, nb, sizeof(nb)));
		printf(" %" PRIu64 "\n", (ns + 500) / 1000);
	}
}

int report_print(struct tsession *s, bool final)
{
	struct func_fig *cur = calloc(s->nfuncs ? s->nfuncs : 1, sizeof(*cur));
	struct func_fig *show = cur;
	uint64_t now = mono_ns(), cnt[NR_COUNTERS], elapsed, summed;
	struct waker_slot *w = NULL;
	int i, nw = 0;

	if (!cur)
		return -ENOMEM;
	collect(s, cur, &summed);
	counters(s, cnt, summed);
	if (s->wakers && !s->folded)
		nw = wakers_collect(s, final, &w);
	if (nw < 0)
		nw = 0;
	if (final) {
		elapsed = now - s->start_ns;
	} else {
		/* An interval shows what changed since the previous one. */
		show = calloc(s->nfuncs ? s->nfuncs : 1, sizeof(*show));
		if (!show) {
			free(cur);
			return -ENOMEM;
		}
		memcpy(show, cur, sizeof(*cur) * s->nfuncs);
		for (i = 0; s->prev && i < s->nfuncs; i++)
			sub_figs(&show[i], &s->prev[i]);
		elapsed = now - s->prev_ns;
		free(s->prev);
		s->prev = cur;
		s->prev_ns = now;
	}
	if (final && (cnt[CNT_CALLS_LOST] || cnt[CNT_RETURNS_LOST]))
		fprintf(stderr, "xprobectl: %" PRIu64 " call%s and %" PRIu64 " return%s of traced "
			"functions went uncounted: the module gave their user hooks' events or "
			"return thunks up (calls_lost, returns_lost in --json)\n", cnt[CNT_CALLS_LOST], cnt[CNT_CALLS_LOST] == 1 ? "" : "s",
			cnt[CNT_RETURNS_LOST], cnt[CNT_RETURNS_LOST] == 1 ? "" : "s");
	if (s->folded) {
		if (final) {
			threads_sweep(s, true);
			print_folded(s);
		}
	} else if (s->json) {
		print_json(s, show, elapsed, final, cnt, w, nw);
	} else {
		print_table(s, show, elapsed, final, cnt);
		if (s->wakers)
			wakers_print(s, w, nw, show);
		if (final && s->per_thread)
			print_threads(s, show);
		if (final && s->children)
			print_procs(s, show);
		if (!final)
			printf("\n");
	}
	fflush(stdout);
	free(w);
	if (show != cur)
		free(show);
	if (final)
		free(cur);
	return 0;
}
