// SPDX-License-Identifier: GPL-2.0
/*
 * xprobectl trace --children: the processes the target forks, and theirs,
 * join the session. The BPF side enters each new process of ours in its
 * procs table before the child first runs (tp_btf/sched_process_fork in
 * fallback mode; in views mode the view follows the fork and its hook on
 * wake_up_new_task, in the parent, sees it), and from then on counts the
 * child's scheduler events, its wakeups and, by its report slot, its calls.
 * Here, at every poll of the main loop, a new one gets uprobes of its own
 * (a uprobe link is bound to one process) and a name for the report; its
 * calls before that are not seen, its waits and wakeups are. An exited one
 * has its uprobes detached.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "tracer.h"
#include "trace.skel.h"

static struct tproc *tproc_find(struct tsession *s, pid_t pid, uint32_t slot)
{
	int i;

	for (i = s->nprocs - 1; i >= 0; i--)	/* the newest first: a reused pid */
		if (s->procs[i].pid == pid && s->procs[i].slot == slot)
			return &s->procs[i];
	return NULL;
}

static void tproc_add(struct tsession *s, const struct trace_proc *p)
{
	struct tproc *t;

	if (s->nprocs == s->capprocs) {
		int cap = s->capprocs ? 2 * s->capprocs : 16;

		t = realloc(s->procs, cap * sizeof(*t));
		if (!t)
			return;
		s->procs = t;
		s->capprocs = cap;
	}
	t = &s->procs[s->nprocs++];
	memset(t, 0, sizeof(*t));
	t->pid = (pid_t)p->tgid;
	t->parent = (pid_t)p->parent;
	t->slot = p->slot;
	read_comm(t->pid, t->comm, sizeof(t->comm));
	/*
	 * A fork without exec runs the same files: the same functions. One
	 * that has exec'd something else, or exited already, takes no probe.
	 */
	if (trace_attach_pid(s, t->pid, &t->ls, true)) {
		linkset_free(&t->ls);
		t->unprobed = true;
	}
}

void tprocs_poll(struct tsession *s)
{
	const struct trace_proc *procs = s->skel->bss->procs;
	struct tproc *t;
	int i;

	for (i = 0; i < TRACE_MAX_PROCS; i++) {
		struct trace_proc p = procs[i];	/* a copy: the BPF side writes it */

		if (!p.tgid || !p.slot)		/* free, or its slot not written yet */
			continue;
		t = tproc_find(s, (pid_t)p.tgid, p.slot);
		if (!p.exited && (!t || t->gone))	/* new, or a tgid back in the last slot */
			tproc_add(s, &p);
		else if (t && p.exited && !t->gone) {
			t->gone = true;
			linkset_free(&t->ls);
		}
	}
}

void tprocs_end(struct tsession *s)
{
	int i;

	for (i = 0; i < s->nprocs; i++)
		linkset_free(&s->procs[i].ls);
	free(s->procs);
	s->procs = NULL;
	s->nprocs = s->capprocs = 0;
}
