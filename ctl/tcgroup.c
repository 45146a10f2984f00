// SPDX-License-Identifier: GPL-2.0
/*
 * xprobectl trace --cgroup: the processes of a cgroup v2 join the session
 * as --children's do, whenever they appear. The first process found is the
 * target (its program's functions are traced, its view made as for a PID;
 * it is in the table too, slot 0, so that its pid stops being ours when it
 * exits);
 * every other one, there at the start or arriving later (moved in, or
 * started by a supervisor after a restart), is entered here in the BPF
 * side's procs table, from where tprocs.c gives it uprobes and a report
 * slot, and the fork hooks follow what it forks. In views mode one that
 * runs on none of our views gets a view of its own with the same kernel
 * hooks; one forked by a process of ours runs on that process's view.
 *
 * The table is written here in place, with the compare-and-swap protocol
 * proc_fork() uses in BPF (bpf/trace.bpf.c), so both can insert at once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cgroup.h"
#include "nl.h"
#include "tracer.h"
#include "trace.skel.h"

#define PROC_PROBES 8		/* as in bpf/trace.bpf.c */

static uint32_t proc_hash(uint32_t tgid)
{
	return (tgid * 2654435761u) >> 22;
}

/* Is PID in the table, and not exited? */
static bool in_table(struct tsession *s, pid_t pid)
{
	struct trace_proc *procs = s->skel->bss->procs, *p;
	uint32_t h = proc_hash(pid), i;
	uint64_t t;

	for (i = 0; i < PROC_PROBES; i++) {
		p = &procs[(h + i) & (TRACE_MAX_PROCS - 1)];
		t = __atomic_load_n(&p->tgid, __ATOMIC_ACQUIRE);
		if (t == (uint64_t)pid)
			return !__atomic_load_n(&p->exited, __ATOMIC_RELAXED);
		if (!t)
			break;
	}
	return false;
}

/*
 * Enter PID as proc_fork() enters a child, with no parent, in report slot
 * SLOT (-1: the next): the same claim, gen from even to odd, so that one
 * writer fills an entry. 0 entered; 1 there already (live, or being
 * entered by a fork hook); -ENOSPC when its probes are full.
 */
static int table_add(struct tsession *s, pid_t pid, int slot)
{
	struct trace_proc *procs = s->skel->bss->procs, *p;
	uint32_t h = proc_hash(pid), i;
	uint64_t old, n, g;

	for (i = 0; i < PROC_PROBES; i++) {
		p = &procs[(h + i) & (TRACE_MAX_PROCS - 1)];
		old = 0;
		if (!__atomic_compare_exchange_n(&p->tgid, &old, (uint64_t)pid, false,
						 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST) &&
		    old != (uint64_t)pid)
			continue;
		g = __atomic_load_n(&p->gen, __ATOMIC_SEQ_CST);
		if ((g & 1) || (old == (uint64_t)pid && !__atomic_load_n(&p->exited, __ATOMIC_SEQ_CST)) ||
		    !__atomic_compare_exchange_n(&p->gen, &g, g + 1, false, __ATOMIC_SEQ_CST,
						 __ATOMIC_SEQ_CST))
			return 1;
		if (slot < 0) {
			n = __atomic_add_fetch(&s->skel->bss->nprocs, 1, __ATOMIC_SEQ_CST);
			slot = n < TRACE_PROC_SLOTS ? n : TRACE_PROC_SLOTS - 1;
		}
		p->parent = 0;
		p->born_ns = mono_ns();
		p->slot = slot;
		__atomic_store_n(&p->exited, 0, __ATOMIC_RELEASE);
		__atomic_fetch_add(&p->gen, 1, __ATOMIC_SEQ_CST);
		return 0;
	}
	return -ENOSPC;
}

/* PID is not ours after all (no view could be made): its entry marked exited. */
static void table_drop(struct tsession *s, pid_t pid)
{
	struct trace_proc *procs = s->skel->bss->procs, *p;
	uint32_t h = proc_hash(pid), i;

	for (i = 0; i < PROC_PROBES; i++) {
		p = &procs[(h + i) & (TRACE_MAX_PROCS - 1)];
		if (__atomic_load_n(&p->tgid, __ATOMIC_ACQUIRE) == (uint64_t)pid) {
			__atomic_store_n(&p->exited, 1, __ATOMIC_RELEASE);
			return;
		}
	}
}

static bool listed(const pid_t *v, int n, pid_t pid)
{
	int i;

	for (i = 0; i < n; i++)
		if (v[i] == pid)
			return true;
	return false;
}

static void list_add(pid_t **v, int *n, int *cap, pid_t pid)
{
	if (*n == *cap) {
		int c = *cap ? 2 * *cap : 16;
		pid_t *p = realloc(*v, c * sizeof(*p));

		if (!p)
			return;
		*v = p;
		*cap = c;
	}
	(*v)[(*n)++] = pid;
}

/*
 * Views mode: PID's own view with the session's kernel hooks, running their
 * programs. 0, -EAGAIN (in execve, or being forked: ask again), or another
 * error, said.
 */
static int give_view(struct tsession *s, pid_t pid)
{
	uint32_t ids[sizeof(s->hook_ids) / sizeof(s->hook_ids[0])];
	char note[320];
	int i, err, fd = bpf_map__fd(s->skel->maps.hooks);

	err = view_hooks_setup(s->nl, pid, 0, s->hook_want, s->nhooks, ids, note, sizeof(note));
	if (err == -EAGAIN)
		return err;
	if (err) {
		if (!target_gone(pid, false, NULL))
			fprintf(stderr, "xprobectl: pid %d joined the cgroup: %s; not traced\n",
				(int)pid, note);
		return -1;
	}
	for (i = 0; i < s->nhooks; i++) {
		/* only the tracepoint's on_hook reads it: a full map matters to no one else */
		bpf_map_update_elem(fd, &ids[i], &s->hook_kinds[i], BPF_ANY);
		/* A module without HOOK_PROG has the tracepoint run on_hook for every view. */
		if (!(s->hskel && s->hskel->links.on_hook) &&
		    hooks_run_prog(s->nl, &ids[i], 1,
				   bpf_program__fd(trace_hook_prog(s->skel, s->hook_kinds[i])))) {
			fprintf(stderr, "xprobectl: pid %d: its hooks have no program: %s\n",
				(int)pid, s->nl->ext_msg[0] ? s->nl->ext_msg : "refused");
			view_del(s->nl, pid);
			return -1;
		}
	}
	list_add(&s->cg_roots, &s->ncg_roots, &s->capcg_roots, pid);
	return 0;
}

/* Its view, now or at a later poll; not ours if it can have none. */
static void view_or_wait(struct tsession *s, pid_t pid)
{
	int err = give_view(s, pid);

	if (err == -EAGAIN) {
		list_add(&s->cg_wait, &s->ncg_wait, &s->capcg_wait, pid);
	} else if (err) {
		table_drop(s, pid);
		list_add(&s->cg_skip, &s->ncg_skip, &s->capcg_skip, pid);
	}
}

/* A process of the cgroup the session does not have yet. */
static void adopt(struct tsession *s, pid_t pid)
{
	pid_t root = 0;
	int err;

	if (s->views) {
		root = view_root(s->nl, pid);
		if (root > 0 && !listed(s->cg_roots, s->ncg_roots, root)) {
			fprintf(stderr, "xprobectl: pid %d runs on another tool's kernel view; not "
				"traced (end that view, or use --no-views)\n", (int)pid);
			list_add(&s->cg_skip, &s->ncg_skip, &s->capcg_skip, pid);
			return;
		}
		/*
		 * -ENOENT: on no view (a process in execve is refused one:
		 * VIEW_NEW says so, and the next poll asks again). A process
		 * on a view of ours that is not in the table yet (forked
		 * before the fork hook's program was in) only needs the
		 * table. Any other error: gone (-ESRCH), between exec_mmap()
		 * and its view's join (-EAGAIN), or the next poll.
		 */
		if (root < 0 && root != -ENOENT)
			return;
	}
	/* ours first: the hooks of its new view count it from their first hit */
	err = table_add(s, pid, -1);
	if (err < 0) {
		fprintf(stderr, "xprobectl: pid %d joined the cgroup: the process table is full; "
			"not traced\n", (int)pid);
		list_add(&s->cg_skip, &s->ncg_skip, &s->capcg_skip, pid);
		return;
	}
	if (err > 0)		/* a fork hook has it */
		return;
	if (s->views && root == -ENOENT)
		view_or_wait(s, pid);
}

/* Those whose view must wait (in execve, being forked): again, or forgotten once gone. */
static void retry_views(struct tsession *s)
{
	pid_t *v = s->cg_wait;
	int i, n = s->ncg_wait;

	s->cg_wait = NULL;
	s->ncg_wait = s->capcg_wait = 0;
	for (i = 0; i < n; i++)
		if (!target_gone(v[i], false, NULL))
			view_or_wait(s, v[i]);
	free(v);
}

void tcgroup_poll(struct tsession *s)
{
	uint64_t now = mono_ns();
	size_t i, n;
	int j, k;

	if (!s->cg || now < s->cg_next)
		return;
	s->cg_next = now + 100000000;
	cgroup_refresh(s->cg);
	/* those we gave up on: forgotten once gone (their pid may come back) */
	for (j = k = 0; j < s->ncg_skip; j++)
		if (!target_gone(s->cg_skip[j], false, NULL))
			s->cg_skip[k++] = s->cg_skip[j];
	s->ncg_skip = k;
	retry_views(s);
	n = cgroup_procs(s->cg, &s->cg_scan, &s->cg_cap);
	for (i = 0; i < n; i++) {
		pid_t pid = s->cg_scan[i];

		if (in_table(s, pid) || listed(s->cg_skip, s->ncg_skip, pid))
			continue;
		adopt(s, pid);
	}
}

int tcgroup_enter_target(struct tsession *s)
{
	if (s->views)		/* its view is ours */
		list_add(&s->cg_roots, &s->ncg_roots, &s->capcg_roots, s->pid);
	/* slot 0, the report's target; then its exit is seen like any other's */
	return table_add(s, s->pid, 0) < 0 ? -1 : 0;
}

pid_t tcgroup_first(struct cgtarget *cg)
{
	pid_t *v = NULL, first = 0;
	size_t cap = 0, n, i;

	n = cgroup_procs(cg, &v, &cap);
	for (i = 0; i < n; i++)
		if (!first || v[i] < first)
			first = v[i];
	free(v);
	return first;
}

void tcgroup_end(struct tsession *s)
{
	free(s->cg_scan);
	free(s->cg_roots);
	free(s->cg_skip);
	free(s->cg_wait);
	s->cg_scan = NULL;
	s->cg_roots = s->cg_skip = s->cg_wait = NULL;
}
