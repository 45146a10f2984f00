/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Slow syscalls against a learned normal (bpf/latency.bpf.c): used alone by
 * 'xprobectl latency' and beside 'xprobectl trace --latency', which shares
 * its shadow stacks so each slow call names the traced function it was
 * made from.
 */
#ifndef XPROBECTL_LATENCY_API_H
#define XPROBECTL_LATENCY_API_H

#include <stdbool.h>
#include <stdint.h>
#include "syswatch.h"

struct latency;

struct latency_opts {
	double k;		/* sigmas above the mean that make a call slow */
	double min_us;		/* and never shorter than this */
	bool json;		/* slow calls and the summary as JSON lines */
	bool quiet;		/* slow calls counted, not printed */
	int threads_fd;		/* trace's shadow stacks (threads map), or -1 */
	/* the name of traced function IDX, with trace --latency */
	const char *(*func_name)(int idx, void *arg);
	void *func_arg;
};

/* Load and attach for the syscalls w watches (w: begun, mode chosen). NULL: printed. */
struct latency *latency_start(struct syswatch *w, const struct latency_opts *o);
/* Print the slow calls that arrived, waiting up to MS for the first. */
void latency_poll(struct latency *l, int ms);
/* The per-syscall table: calls, learned normal, slow calls. */
void latency_summary(struct latency *l, int top);
void latency_stop(struct latency *l);

#endif
