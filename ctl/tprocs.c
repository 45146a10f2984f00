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
 * calls before that are not seen, its waits and wakeups are. How long that
 * took, from the fork on, is in the report (probes_after_ms): on 6.1, one
 * perf event per function, 50-70 ms in the QEMU guest, 0.6 s behind another
 * session's uprobes going away.
 *
 * The table is read in place while BPF writes it: an entry's generation is
 * odd while a fork fills it and grows by 2 with each fork that takes it, so
 * a copy between two equal even readings is whole, and a tgid that came
 * back (reused by a new child) is told from the process that had it.
 * Exited processes keep their uprobes until the end: a detach waits for a
 * grace period per probe, which would hold up the next forks' attaches.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "tracer.h"
#include "trace.skel.h"

/* The newest process we know under PID, NULL if none. */
static struct tproc *tproc_find(struct tsession *s, pid_t pid)
{
	int i;

	for (i = s->nprocs - 1; i >= 0; i--)
		if (s->procs[i].pid == pid)
			return &s->procs[i];
	return NULL;
}

static void tproc_add(struct tsession *s, const struct trace_proc *p, bool attach)
{
	struct tproc *t;
	int err;

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
	t->gen = p->gen;
	t->probes_ms = -1;
	read_comm(t->pid, t->comm, sizeof(t->comm));
	if (!t->comm[0])
		snprintf(t->comm, sizeof(t->comm), "?");
	/*
	 * The uprobes of the target's files, bound to this process: a fork
	 * without exec runs them. (One that has exec'd something else gets
	 * probes that never fire; one that exited already, none.)
	 */
	err = attach ? trace_attach_pid(s, t->pid, &t->ls, true) : 0;
	if (!attach || err) {
		linkset_free(&t->ls);
		t->unprobed = attach;
		/*
		 * Said once a session: a child that ended before its probes
		 * were in (on 6.1 each is a grace period, behind anyone else's
		 * uprobes coming or going) made calls nobody counted.
		 */
		if (err && !s->told_unprobed) {
			char why[160];

			if (err == -ESRCH)
				snprintf(why, sizeof(why), "ended before its uprobes were in");
			else
				snprintf(why, sizeof(why), "its uprobes could not be attached (%s)",
					 err == -EAGAIN ? "the kernel refused them; -v says why" :
					 err < -1 ? strerror(-err) : "none was taken");
			fprintf(stderr, "xprobectl: pid %d (%s): %s: its calls are not counted (the "
				"report counts such processes; --json: processes_unprobed)\n",
				(int)t->pid, t->comm, why);
			s->told_unprobed = true;
		}
	} else {
		/* Its calls are seen from now on: the report says how late that was. */
		uint64_t now = mono_ns();

		t->probes_ms = now > p->born_ns ? (now - p->born_ns) / 1000000 : 0;
		if (s->verbose)
			fprintf(stderr, "xprobectl: pid %d (%s): probes attached %llu ms after it "
				"joined\n", (int)t->pid, t->comm, (unsigned long long)t->probes_ms);
	}
}

/* A whole copy of entry I, false if BPF is writing it (or never wrote it). */
static bool proc_read(struct tsession *s, int i, struct trace_proc *out)
{
	struct trace_proc *p = &s->skel->bss->procs[i];
	uint64_t g = __atomic_load_n(&p->gen, __ATOMIC_ACQUIRE);

	if (!g || (g & 1))
		return false;
	out->tgid = __atomic_load_n(&p->tgid, __ATOMIC_RELAXED);
	out->parent = __atomic_load_n(&p->parent, __ATOMIC_RELAXED);
	out->slot = __atomic_load_n(&p->slot, __ATOMIC_RELAXED);
	out->exited = __atomic_load_n(&p->exited, __ATOMIC_RELAXED);
	out->born_ns = __atomic_load_n(&p->born_ns, __ATOMIC_RELAXED);
	out->gen = g;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&p->gen, __ATOMIC_RELAXED) == g;
}

/* New processes of the session get their uprobes (ATTACH) and names; gone ones are marked. */
void tprocs_poll(struct tsession *s, bool attach)
{
	struct trace_proc p;
	struct tproc *t;
	int i;

	for (i = 0; i < TRACE_MAX_PROCS; i++) {
		if (!proc_read(s, i, &p))
			continue;	/* free, or being written: the next poll */
		if (!p.slot && p.tgid == (uint64_t)s->pid)
			continue;	/* --cgroup's target: the session's own, not a child */
		t = tproc_find(s, (pid_t)p.tgid);
		if (t && t->gen != p.gen)
			t->gone = true;	/* its tgid is another process's now */
		if (!t || t->gen != p.gen) {
			/* one that exited before we saw it still has its figures */
			tproc_add(s, &p, attach && !p.exited);
			t = tproc_find(s, (pid_t)p.tgid);
		}
		if (t && t->gen == p.gen && p.exited)
			t->gone = true;
	}
}

/* Is a process of the session (not the target) still running? */
bool tprocs_alive(struct tsession *s)
{
	int i;

	tprocs_poll(s, true);
	for (i = 0; i < s->nprocs; i++) {
		struct tproc *t = &s->procs[i];

		if (t->gone)
			continue;
		if (kill(t->pid, 0) && errno == ESRCH)
			t->gone = true;
		else
			return true;
	}
	return false;
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
