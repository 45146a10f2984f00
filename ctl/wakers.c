// SPDX-License-Identifier: GPL-2.0
/*
 * xprobectl trace -W: who woke each function's waits. The BPF side keeps
 * a per-CPU open-addressed table of (function that waited, waker) slots
 * (bpf/trace.h: struct waker_slot, WKEY); here the CPUs are summed by key,
 * an interval is the difference from the previous reading, and the rows
 * are named: a thread of the process by its traced function and tid,
 * another task (fallback mode) by its pid and name, and in views mode
 * everything else as "outside".
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "json.h"
#include "tracer.h"
#include "wakers.h"
#include "trace.skel.h"

static int by_key(const void *a, const void *b)
{
	const struct waker_slot *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/* Rows with the biggest waits first, per function in key order otherwise. */
static int by_ns(const void *a, const void *b)
{
	const struct waker_slot *x = a, *y = b;

	if (WKEY_FUNC(x->key) != WKEY_FUNC(y->key))
		return WKEY_FUNC(x->key) < WKEY_FUNC(y->key) ? -1 : 1;
	return x->ns > y->ns ? -1 : x->ns < y->ns;
}

/* The table now, summed over the CPUs, one row per key, sorted by key. */
static int read_table(struct tsession *s, struct waker_slot **out)
{
	int fd = bpf_map__fd(s->skel->maps.wakers), c, n = 0;
	struct waker_slot *v = calloc(s->ncpus, sizeof(*v)), *rows = NULL, *r;
	uint32_t k;

	if (!v)
		return -1;
	for (k = 0; k < TRACE_WAKER_SLOTS; k++) {
		if (bpf_map_lookup_elem(fd, &k, v))
			continue;
		for (c = 0; c < s->ncpus; c++) {
			if (!v[c].key)
				continue;
			r = realloc(rows, (n + 1) * sizeof(*rows));
			if (!r) {
				free(rows);
				free(v);
				return -1;
			}
			rows = r;
			rows[n++] = v[c];
		}
	}
	free(v);
	qsort(rows, n, sizeof(*rows), by_key);
	for (c = 0, k = 0; (int)k < n; k++) {	/* merge the CPUs' copies of a key */
		if (c && rows[c - 1].key == rows[k].key) {
			rows[c - 1].ns += rows[k].ns;
			rows[c - 1].waits += rows[k].waits;
		} else {
			rows[c++] = rows[k];
		}
	}
	*out = rows;
	return c;
}

int wakers_collect(struct tsession *s, bool final, struct waker_slot **out)
{
	struct waker_slot *cur, *show, *p;
	int n = read_table(s, &cur), i, m = 0;

	if (n < 0)
		return -1;
	show = malloc((n ? n : 1) * sizeof(*show));
	if (!show) {
		free(cur);
		return -1;
	}
	for (i = 0; i < n; i++) {
		show[m] = cur[i];
		p = final || !s->wprev ? NULL :
			bsearch(&cur[i], s->wprev, s->nwprev, sizeof(*cur), by_key);
		if (p) {
			show[m].ns -= p->ns;
			show[m].waits -= p->waits;
		}
		if (show[m].waits)
			m++;
	}
	free(s->wprev);
	s->wprev = cur;
	s->nwprev = n;
	qsort(show, m, sizeof(*show), by_ns);
	*out = show;
	return m;
}

static const char *kind_name(uint32_t kind)
{
	switch (kind) {
	case WAKER_THREAD: return "thread";
	case WAKER_TASK: return "task";
	case WAKER_TIMER: return "timer";
	case WAKER_HARDIRQ: return "hardirq";
	case WAKER_SOFTIRQ: return "softirq";
	default: return "outside";
	}
}

/* A waker's name (its function, or its command) and its tid/pid, 0 if none. */
static const char *waker_name(struct tsession *s, uint64_t key, char *buf, size_t len,
			      uint32_t *tid)
{
	uint32_t kind = WKEY_KIND(key), wf = WKEY_WFUNC(key);
	char comm[16] = "";

	*tid = WKEY_WTID(key);
	switch (kind) {
	case WAKER_THREAD:
		snprintf(buf, len, "%s", wf < (uint32_t)s->nfuncs ? s->funcs[wf].name :
			 "(no traced function)");
		break;
	case WAKER_TASK:
		bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.waker_comms), tid, comm);
		comm[15] = 0;
		snprintf(buf, len, "%s", *tid ? comm : "(the idle task)");
		break;
	case WAKER_TIMER:
		snprintf(buf, len, "(a timer)");
		break;
	case WAKER_HARDIRQ:
		snprintf(buf, len, "(an interrupt)");
		break;
	case WAKER_SOFTIRQ:
		snprintf(buf, len, "(a softirq)");
		break;
	default:
		snprintf(buf, len, "(outside the process)");
		*tid = 0;
	}
	return buf;
}

void wakers_print(struct tsession *s, const struct waker_slot *w, int n,
		  const struct func_fig *v)
{
	char who[96], b[32];
	uint64_t off;
	uint32_t f;
	int i, j;

	printf("\nWakers: a function's waits (off CPU in it, not in a traced callee; the\n"
	       "wake-up wait and preemptions excluded), by who woke the thread:\n");
	printf("%-24s %-40s %8s %9s %6s\n", "FUNCTION", "WOKEN BY", "WAITS", "TOTAL", "%SELF");
	for (i = 0; i < n; i++) {
		f = WKEY_FUNC(w[i].key);
		if (f >= (uint32_t)s->nfuncs)
			continue;	/* waits outside any traced function */
		off = 0;
		for (j = 0; j < NR_CAUSES; j++)
			off += v[f].off_excl[j];
		wakers_frame(s, w[i].key, who, sizeof(who));
		printf("%-24.24s %-40.40s %8" PRIu64 " %9s %6.1f\n", s->funcs[f].name, who,
		       (uint64_t)w[i].waits, trace_dur(w[i].ns, b), off ? 100.0 * w[i].ns / off : 0);
	}
	if (!n)
		printf("(no wait ended yet)\n");
}

const char *wakers_frame(struct tsession *s, uint64_t key, char *buf, size_t len)
{
	char name[64];
	uint32_t tid;

	waker_name(s, key, name, sizeof(name), &tid);
	if (tid)
		snprintf(buf, len, "%s (%s %u)", name,
			 WKEY_KIND(key) == WAKER_THREAD ? "tid" : "pid", tid);
	else
		snprintf(buf, len, "%s", name);
	return buf;
}

void wakers_json(struct tsession *s, const struct waker_slot *w, int n, uint32_t func)
{
	char name[64];
	uint32_t tid, kind;
	int i;

	json_arr_begin("wakers");
	for (i = 0; i < n; i++) {
		if (WKEY_FUNC(w[i].key) != func)
			continue;
		kind = WKEY_KIND(w[i].key);
		waker_name(s, w[i].key, name, sizeof(name), &tid);
		json_obj_begin(NULL);
		json_str("kind", kind_name(kind));
		if (kind == WAKER_THREAD && WKEY_WFUNC(w[i].key) < (uint32_t)s->nfuncs)
			json_str("function", name);
		else if (kind == WAKER_TASK)
			json_str("comm", name);
		if (tid)
			json_u64("tid", tid);
		json_u64("waits", w[i].waits);
		json_u64("off_cpu_ns", w[i].ns);
		json_obj_end();
	}
	json_arr_end();
}
