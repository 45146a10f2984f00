// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xprobectl trace: per-function wall time split into ON-CPU and OFF-CPU by
 * cause, for one process.
 *
 * Every traced thread has a shadow stack of traced user functions, pushed
 * by the uprobe on entry and popped by the uretprobe. Independently, the
 * thread's own clock is kept from scheduler events: on_acc accumulates the
 * time it ran, off_acc[cause] the time it waited. A frame snapshots those
 * clocks on entry; on return the differences are the function's inclusive
 * ON and OFF times, so ON + OFF == wall holds only if no switch was missed.
 *
 * Scheduler events come either from xprobes hooks in the process's kernel
 * view (raw_tp/xprobes_hook: only the traced process ever traps there), or,
 * in fallback mode, from the global sched_switch tracepoint with a PID test.
 *
 * A thread's state is only touched by events of that thread (its uprobes,
 * its own switch-out/in), which are serialized by the scheduler, so no
 * locking is needed on it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "trace.h"
#include "xprobes.h"	/* module/uapi: struct xprobes_urec */

const volatile __u32 target_tgid;	/* the traced process; 0 with --cgroup (all in procs) */
const volatile bool children;		/* --children: and the processes it forks */
const volatile __u32 nfuncs;		/* --children: pstats' row length */
const volatile bool per_thread;		/* fill tstats */
const volatile bool folded;		/* fill the folded map */
const volatile bool wakers_on;		/* -W: fill the wakers table */
const volatile bool views_mode;		/* scheduler events from the view's hooks */
const volatile bool unwind_fix;		/* bpf_probe_write_user() allowed: uret_slots() */
/* Kernel lock functions, [lo, hi) sorted and disjoint (ctl/klocks.c) */
const volatile __u64 klock_lo[TRACE_KLOCKS], klock_hi[TRACE_KLOCKS];
const volatile __u32 klock_n;

/*
 * How the traced process ended, as its parent's wait() reads it (status
 * << 8, or the signal, | 0x80 with a core dump); -1 until its last thread
 * exits. Seen here because a target xprobectl did not start is not its
 * child: only its parent could wait for it.
 */
int target_status = -1;
/*
 * Set by xprobectl once every probe and hook of the session is in: until
 * then a process's calls may be seen returning and not entering (the
 * uretprobe link of a file goes in before its uprobe link), which is not
 * a lost call (CNT_EARLY, not CNT_UNMATCHED).
 */
__u32 live;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TRACE_MAX_THREADS);
	__type(key, __u32);			/* tid */
	__type(value, struct thread_state);
} threads SEC(".maps");

/*
 * Threads that have been followed (past fresh: thread_start()), by tid
 * modulo FOLLOWED. A switch of a thread whose byte is 0 has nothing to
 * update, and returns before the threads map's lookup (a hash of the tid
 * and a compare, most of a switch program's cost): most switches on the
 * view's hooks are of threads never followed (idle, kernel threads, and
 * every thread of a trace whose records are all whole calls). Never
 * cleared: a byte that two tids share only costs the lookup.
 */
#define FOLLOWED (1 << 16)
__u8 followed[FOLLOWED];

static __always_inline bool maybe_followed(__u32 tid)
{
	return followed[tid & (FOLLOWED - 1)];
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct thread_state);
} zero_state SEC(".maps");		/* never written: the template of a new thread */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TRACE_MAX_THREADS);
	__type(key, __u32);			/* tid */
	__type(value, char[16]);
} comms SEC(".maps");

/*
 * Per function, in 1 << stat_shard_bits shards (a CPU adds to shard cpu %
 * shards, atomically: a program in the hand-over's NMI-like context may
 * nest in another on the same CPU), at func << stat_shard_bits | shard.
 * Shards, not per-CPU slots: those were 1 KB a function on every CPU the
 * machine may have (Redis's 3253 functions took 212 MB on 64 CPUs); at
 * most TRACE_STAT_SHARDS of them keep what CPUs share of one function's
 * counters to a few. Mapped by xprobectl, which reads them without a
 * system call per function.
 */
const volatile __u32 stat_shard_bits;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, TRACE_MAX_FUNCS);	/* nfuncs << stat_shard_bits */
	__type(key, __u32);
	__type(value, struct func_stats);
} stats SEC(".maps");

/*
 * FUNC's shard of this CPU, or NULL past the functions. A call, not
 * inlined: its key and the helper's clobbers stay in its own frame
 * (inlined at each use, they took rec_one() past BPF's 512-byte stack).
 */
static __noinline struct func_stats *stats_of(__u32 func)
{
	__u32 k = func << stat_shard_bits |
		  (bpf_get_smp_processor_id() & ((1u << stat_shard_bits) - 1));

	return bpf_map_lookup_elem(&stats, &k);
}

/* One more call in bucket B of a shard's histogram H (B past the last: none). */
static __always_inline void shard_hist_add(__u64 *h, __u32 b)
{
	if (b < TRACE_HIST)
		__sync_fetch_and_add(&h[b], 1);
}

/* Per function, all CPUs: OFF-CPU times and their histograms (atomic adds). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TRACE_MAX_FUNCS);
	__type(key, __u32);			/* function index = attach cookie */
	__type(value, struct func_off);
} offstats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TRACE_TSTATS);	/* 1 without -T */
	__type(key, struct thread_func_key);
	__type(value, struct thread_func_stats);
} tstats SEC(".maps");

/*
 * --children: per (report slot, function), slot * nfuncs + func. An array
 * with atomic adds: no insert, so the hand-over of records (NMI-like
 * context) can add to it too.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);			/* TRACE_PROC_SLOTS * nfuncs with --children */
	__type(key, __u32);
	__type(value, struct thread_func_stats);
} pstats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TRACE_FOLDS);	/* 1 without --folded, --pprof */
	__type(key, struct fold_key);
	__type(value, __u64);			/* ns */
} fold SEC(".maps");

/*
 * -W: open addressing on a per-CPU array, filled at switch-in, which may
 * run in the hook's int3 handler (NMI context: no hash map insert there).
 * Only the scheduler's switch path of this CPU writes its slots, and it
 * does not nest, so plain stores are enough; userspace sums by key.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TRACE_WAKER_SLOTS);	/* 1 without -W */
	__type(key, __u32);
	__type(value, struct waker_slot);
} wakers SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TRACE_WAKER_COMMS);	/* 1 but for -W in fallback mode */
	__type(key, __u32);			/* pid */
	__type(value, char[16]);
} waker_comms SEC(".maps");		/* fallback: names of wakers not ours */

/*
 * -W in fallback mode: how deep this CPU is in timer expiries, interrupt
 * handlers and softirqs (their entry/exit tracepoints), so that a wakeup
 * there is not charged to whatever task they interrupted. A count that
 * would go below zero (an exit whose entry came before the attach) stays 0;
 * the exits' programs are attached before the entries'.
 */
enum { IN_TIMER, IN_HARDIRQ, IN_SOFTIRQ, NR_IN };

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NR_IN);
	__type(key, __u32);
	__type(value, __s32);
} in_irq SEC(".maps");

/* A blocked thread's kernel stack, looked at for lock functions (in_kernel_lock()) */
struct kstack {
	__u64 ip[TRACE_KSCAN];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kstack);
} kstacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);		/* --cgroup: five per view */
	__type(key, __u32);			/* xprobes hook id */
	__type(value, __u32);			/* enum trace_hook_kind */
} hooks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NR_COUNTERS);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct trace_rec_counts);
} rec_counts SEC(".maps");

#define DEPTH_MASK (TRACE_MAX_DEPTH - 1)

static __always_inline void count_n(__u32 which, __u64 n)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &which);

	if (c)
		*c += n;
}

/* --children: the processes of the session but the target (struct trace_proc) */
struct trace_proc procs[TRACE_MAX_PROCS];
__u64 nprocs;				/* processes followed so far */

#define PROC_PROBES 8

static __always_inline __u32 proc_hash(__u32 tgid)
{
	return (tgid * 2654435761u) >> 22;	/* 10 bits: TRACE_MAX_PROCS */
}

/* TGID's entry, live or exited, NULL if none. */
static __always_inline struct trace_proc *proc_find(__u32 tgid)
{
	__u32 h = proc_hash(tgid), i;
	struct trace_proc *p;

	if (!tgid)			/* the idle task; and 0 marks a free entry */
		return NULL;
	for (i = 0; i < PROC_PROBES; i++) {
		p = &procs[(h + i) & (TRACE_MAX_PROCS - 1)];
		if (p->tgid == tgid)
			return p;
		if (!p->tgid)
			break;
	}
	return NULL;
}

/* Is TGID a process of the session (the target, or one it forked, not exited)? */
static __always_inline bool ours(__u32 tgid)
{
	struct trace_proc *p;

	if (target_tgid && tgid == target_tgid)
		return true;
	if (!children)
		return false;
	p = proc_find(tgid);
	return p && !p->exited;
}

/* Its report slot: 0 for the target. */
static __always_inline __u32 proc_slot(__u32 tgid)
{
	struct trace_proc *p;

	if (!children || tgid == target_tgid)
		return 0;
	p = proc_find(tgid);
	return p ? p->slot : 0;
}

static __always_inline void count(__u32 which)
{
	count_n(which, 1);
}

/*
 * --children: PARENT started CHILD. A new process forked by one of ours
 * joins the session (a new thread needs nothing: its tgid is ours). Before
 * the child first runs: sched_process_fork (fallback) or wake_up_new_task
 * in the view. Lock-free, for the views hook's NMI-like context; a tgid
 * that comes back (an exited child's, reused by a new child) takes its old
 * entry again, with a new slot.
 */
static __always_inline void proc_fork(struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), tgid = BPF_CORE_READ(child, tgid);
	__u32 h = proc_hash(tgid), i;
	struct trace_proc *p;
	__u64 old, n, g;

	if (!children || BPF_CORE_READ(child, pid) != tgid || !ours(ptgid))
		return;
	for (i = 0; i < PROC_PROBES; i++) {
		p = &procs[(h + i) & (TRACE_MAX_PROCS - 1)];
		old = __sync_val_compare_and_swap(&p->tgid, 0, tgid);
		if (old && old != tgid)
			continue;
		/*
		 * Taken for writing by moving gen from even to odd, as
		 * xprobectl does (--cgroup enters processes too, and may meet
		 * this child in its cgroup before this hook runs): one writer
		 * fills an entry, and a live entry is left as it is.
		 */
		g = p->gen;
		if ((g & 1) || (old == tgid && !p->exited) ||
		    __sync_val_compare_and_swap(&p->gen, g, g + 1) != g)
			return;
		n = __sync_fetch_and_add(&nprocs, 1) + 1;
		p->parent = ptgid;
		p->born_ns = bpf_ktime_get_ns();
		p->slot = n < TRACE_PROC_SLOTS ? n : TRACE_PROC_SLOTS - 1;
		p->exited = 0;
		__sync_fetch_and_add(&p->gen, 1);	/* whole again: xprobectl reads it in place */
		count(CNT_FORKS);
		return;
	}
	count(CNT_FORKS_LOST);
}

/*
 * --children: the last thread of process TGID exits (LIVE: the threads of
 * its group not yet past the exit's count, signal->live); the process is
 * not ours any more, its tgid free for another.
 */
static __always_inline void proc_exit(__u32 tgid, int live)
{
	struct trace_proc *p;

	if (!children || live > 0 || tgid == target_tgid)
		return;
	p = proc_find(tgid);
	if (p)
		p->exited = 1;
}

/* --children: a call of FUNC by a thread of the process in report slot SLOT (OFF: NULL for none). */
static __always_inline void pstat_add(__u32 slot, __u32 func, __u64 wall, __u64 on,
				      const __u64 *off)
{
	__u32 k = slot * nfuncs + func, i;
	struct thread_func_stats *ps;

	if (!children)
		return;
	ps = bpf_map_lookup_elem(&pstats, &k);
	if (!ps)
		return;
	__sync_fetch_and_add(&ps->calls, 1);
	__sync_fetch_and_add(&ps->wall, wall);
	__sync_fetch_and_add(&ps->on_incl, on);
	if (!off)
		return;
	_Pragma("unroll")
	for (i = 0; i < NR_CAUSES; i++)
		if (off[i])
			__sync_fetch_and_add(&ps->off_incl[i], off[i]);
}

/*
 * A global function: the verifier checks it once, on its own, and the caller
 * sees one unknown result. Inlined, its six branches multiplied fn_return's
 * states past 6.1's million-instruction budget.
 */
__noinline __u32 log2_bucket(__u64 v)
{
	__u32 r = 0;

	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) { r += 1; }
	return r < TRACE_HIST ? r : TRACE_HIST - 1;
}

static __always_inline __u64 cur_on(struct thread_state *st, __u64 now)
{
	return st->on_acc + (st->running ? now - st->last_ts : 0);
}

/* The thread's clocks at one instant: when, ON-CPU so far, OFF-CPU by cause. */
struct clocks {
	__u64 now, on, off[NR_CAUSES];
};

/*
 * Read them consistently. A uprobe program runs with migration, not
 * preemption, disabled: on a fully preemptible kernel (PREEMPT_RT) the
 * thread's own switch-out and switch-in can run in the middle of it, and
 * they move last_ts, on_acc and off_acc together. A reading that straddles
 * them mixes before and after and loses a whole time slice. The events run
 * on this CPU and cannot be interrupted by this program, so a bump of seq
 * around the reading is enough to see one; three tries, then the last.
 */
static __always_inline bool read_clocks_once(struct thread_state *st, struct clocks *c)
{
	volatile __u32 *seqp = &st->seq;
	__u32 seq = *seqp, i;

	barrier();
	c->now = bpf_ktime_get_ns();
	c->on = cur_on(st, c->now);
	_Pragma("unroll")
	for (i = 0; i < NR_CAUSES; i++)
		c->off[i] = st->off_acc[i];
	barrier();
	return *seqp == seq;
}

static __always_inline void read_clocks(struct thread_state *st, struct clocks *c)
{
	if (!read_clocks_once(st, c) && !read_clocks_once(st, c))
		read_clocks_once(st, c);
}

/*
 * Charge the time since the last event to the thread's current stack. Only
 * adds to st->pend: scheduler events run in the hook's int3 handler, an
 * NMI-like context, where inserting into the fold map would take a bucket
 * lock the uprobe programs also take (lockdep: inconsistent IN-NMI usage).
 * The user side, whose events are the only ones that change the stack,
 * moves pend into the map with fold_flush() first.
 */
static __always_inline void charge_fold(struct thread_state *st, __u64 now, __u32 kind)
{
	__u64 delta = now - st->last_ev;

	st->last_ev = now;
	if (folded && st->depth && kind <= NR_CAUSES)
		st->pend[kind] += delta;
}

/*
 * -W: the off-CPU part of a wait ending at @now goes to st->wpend with its
 * waker, so that the folded stack can name who ended it.
 */
static __always_inline void charge_fold_waker(struct thread_state *st, __u64 now, __u32 kind)
{
	__u64 delta = now - st->last_ev;
	__u32 n = st->nwpend;

	if (!folded || !st->depth || !st->waker || n >= TRACE_WPEND) {
		charge_fold(st, now, kind);
		return;
	}
	st->last_ev = now;
	st->wpend[n].waker = st->waker;
	st->wpend[n].ns = delta;
	st->wpend[n].kind = kind;
	st->nwpend = n + 1;
}

static __always_inline void fold_add(struct fold_key *key, __u64 delta)
{
	__u64 *v = bpf_map_lookup_elem(&fold, key);

	if (v)
		__sync_fetch_and_add(v, delta);
	else
		bpf_map_update_elem(&fold, key, &delta, BPF_NOEXIST);
}

static __always_inline void fold_flush(struct thread_state *st)
{
	struct fold_key key = {};
	__u32 i, depth = st->depth, n;
	__u64 delta;

	if (!folded || !depth)
		return;
	for (i = 0; i < TRACE_FOLD_DEPTH; i++) {
		if (i >= depth || i >= TRACE_MAX_DEPTH)
			break;
		key.funcs[i] = st->frames[i & DEPTH_MASK].func;
	}
	key.depth = i;
	for (i = 0; i <= NR_CAUSES; i++) {
		delta = st->pend[i];
		if (!delta)
			continue;
		st->pend[i] = 0;
		key.kind = i;
		fold_add(&key, delta);
	}
	n = st->nwpend;
	for (i = 0; i < TRACE_WPEND; i++) {
		if (i >= n)
			break;
		key.kind = st->wpend[i].kind;
		key.waker = st->wpend[i].waker;
		fold_add(&key, st->wpend[i].ns);
	}
	st->nwpend = 0;
}

/* ---- the scheduler side ---------------------------------------------------- */

/*
 * A task's fields are read one of two ways. A task the verifier knows
 * (current from bpf_get_current_task_btf(), a tp_btf argument) is read with
 * plain loads, which the verifier makes fault-safe: a few instructions
 * each. A task that is only an address (from a hook's registers: the
 * previous task at finish_task_switch()) costs a bpf_probe_read_kernel()
 * call per field, about 100 instructions on 6.12 under icount. FAR says
 * which; it is a constant at every call site, so only one branch is
 * compiled.
 */
#define TASK_RD(far, t, f) ((far) ? BPF_CORE_READ(t, f) : (t)->f)

/* Runnable, not blocked: what task_is_runnable() says in 6.12 (delayed dequeue). */
static __always_inline bool runnable(struct task_struct *t, bool far)
{
	if (!TASK_RD(far, t, on_rq))
		return false;
	if (bpf_core_field_exists(t->se.sched_delayed) && TASK_RD(far, t, se.sched_delayed))
		return false;
	return true;
}

/*
 * The time T has waited runnable on a runqueue, all its life: the scheduler
 * adds each wait to sched_info.run_delay when the task arrives on a CPU
 * (sched_info_arrive(), from prepare_task_switch(): before the view's
 * switch hooks, after the sched_switch tracepoint). CONFIG_SCHED_INFO is on
 * in every kernel we run on (Debian's 6.1 and 6.12), with no run-time knob.
 */
static __always_inline __u64 run_delay(struct task_struct *t, bool far)
{
	return TASK_RD(far, t, sched_info.run_delay);
}

/*
 * Runnable T left because its CPU cgroup (or one above it) ran out of
 * quota: throttle_cfs_rq() marks the cfs_rq and bumps throttle_count of
 * every cfs_rq below before it reschedules (6.1 and 6.12; later kernels
 * throttle per task at return to user, to check then).
 */
static __always_inline bool throttled(struct task_struct *t, bool far)
{
	struct cfs_rq *cfs;

	if (!bpf_core_field_exists(t->se.cfs_rq))
		return false;
	switch (TASK_RD(far, t, policy)) {
	case 0: case 3: case 5:		/* SCHED_NORMAL, BATCH, IDLE: the fair class */
		break;
	default:
		return false;
	}
	cfs = TASK_RD(far, t, se.cfs_rq);
	return cfs && BPF_CORE_READ(cfs, throttle_count) > 0;
}

/* From here to blocked_cause(): only of a task the verifier knows (see TASK_RD()). */
static __always_inline bool in_iowait(struct task_struct *t)
{
	return BPF_CORE_READ_BITFIELD(t, in_iowait);
}

/*
 * Stalled on memory, as the kernel's pressure stall information counts it:
 * psi_memstall_enter() sets it around direct and memcg reclaim, compaction,
 * memory.high's throttling sleep and the wait for a refault of a page
 * evicted while in use (6.1 and 6.12; unset with psi=0 on the command line).
 */
static __always_inline bool in_memstall(struct task_struct *t)
{
	if (!bpf_core_field_exists(t->in_memstall))
		return false;
	return BPF_CORE_READ_BITFIELD(t, in_memstall);
}

/* Is IP in one of the kernel's lock functions? A binary search of klock_lo/hi. */
static __always_inline bool in_klock(__u64 ip)
{
	__u32 lo = 0, hi = klock_n, mid, i;

	for (i = 0; i < 8 && lo < hi; i++) {	/* 2^7 > TRACE_KLOCKS */
		mid = ((lo + hi) / 2) & (TRACE_KLOCKS - 1);
		if (ip < klock_lo[mid])
			hi = mid;
		else if (ip >= klock_hi[mid])
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

/*
 * The current thread T, blocking: is it in a kernel mutex, rwsem, semaphore
 * or (PREEMPT_RT) rtmutex-based lock? Its kernel stack says: schedule()
 * comes a few frames above the lock's slow path. Only for blocking waits
 * that the system call alone does not explain.
 *
 * Fallback mode unwinds from its tracepoint (bpf_get_stack()). In views
 * mode the context is a hook's registers, whose ip is the int3
 * convention's (the hook's address + 1): where the hooked instruction is
 * a push (finish_task_switch()'s first one), the unwinder reads that ip's
 * unwind data against the stack from before the push and stops at once.
 * So views mode scans the stack instead, from the hook's sp up 1 KiB
 * (within T's stack), for a word in a lock function: a return address.
 */
struct kscan {
	struct kstack *ks;
	__u32 n;		/* words (or frames) in ks */
	bool found;
};

/* bpf_loop() callback: is word I of the stack in a lock function? */
static long kscan_one(__u32 i, struct kscan *k)
{
	__u64 w;

	if (i >= k->n)
		return 1;
	barrier_var(i);		/* the mask below stays, for the verifier */
	w = k->ks->ip[i & (TRACE_KSCAN - 1)];
	if (w < klock_lo[0] || w >= klock_hi[(klock_n - 1) & (TRACE_KLOCKS - 1)])
		return 0;	/* most words: not near the lock functions */
	if (!in_klock(w))
		return 0;
	k->found = true;
	return 1;
}

static __always_inline bool in_kernel_lock(void *ctx, struct task_struct *t, __u64 sp)
{
	struct kscan k = {};
	__u32 zero = 0;
	__u64 top, len;
	long n;

	if (!klock_n)
		return false;
	k.ks = bpf_map_lookup_elem(&kstacks, &zero);
	if (!k.ks)
		return false;
	if (!sp) {
		n = bpf_get_stack(ctx, k.ks->ip, TRACE_KSTACK * sizeof(k.ks->ip[0]), 0);
		if (n <= 0)
			return false;
		k.n = n / sizeof(k.ks->ip[0]);
	} else {
		top = (__u64)BPF_CORE_READ(t, stack) + 16384;	/* THREAD_SIZE, or less with KASAN */
		len = top > sp ? (top - sp) & ~7ULL : 0;
		if (len > sizeof(k.ks->ip))
			len = sizeof(k.ks->ip);
		barrier_var(len);
		if (len < 64 || bpf_probe_read_kernel(k.ks->ip, len, (void *)sp))
			return false;
		k.n = len / 8;
	}
	bpf_loop(TRACE_KSCAN, kscan_one, &k, 0);
	return k.found;
}

/* File type of fd in task T's table: S_IFSOCK etc., 0 if unknown. */
static __always_inline __u32 fd_type(struct task_struct *t, __u64 fd)
{
	struct fdtable *fdt = BPF_CORE_READ(t, files, fdt);
	struct file **fds, *f = NULL;

	if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return 0;
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) || !f)
		return 0;
	return BPF_CORE_READ(f, f_inode, i_mode) & 0170000;
}

#define S_IFSOCK_ 0140000
#define S_IFREG_  0100000
#define S_IFBLK_  0060000
#define S_IFIFO_  0010000

#define ENOSYS_ 38

/*
 * Why is T, blocked and not in iowait, waiting? The system call it is in
 * says (x86_64 numbers); *sure is set where the number alone says it (the
 * wait is that call's own). Outside a system call (a page fault, or the
 * work on the way back to user space: a signal stop, the freezer), "other".
 * During a system call the entry code's -ENOSYS is in regs->ax; in an
 * exception it holds the user's rax, and orig_ax the error code.
 */
static __always_inline __u32 classify(struct task_struct *t, bool *sure)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	long nr;
	__u32 type;

	*sure = false;
	if (!regs || regs->ax != -ENOSYS_)
		return CAUSE_OTHER;
	nr = regs->orig_ax;
	*sure = true;
	switch (nr) {
	case 202: case 449: case 454: case 455: case 456:	/* futex* */
	case 73:						/* flock */
		return CAUSE_LOCK;
	case 35: case 230:		/* nanosleep, clock_nanosleep */
	case 34: case 130: case 128:	/* pause, rt_sigsuspend, rt_sigtimedwait */
		return CAUSE_SLEEP;
	case 7: case 23: case 270: case 271:		/* poll, select, pselect6, ppoll */
	case 232: case 281: case 441:			/* epoll_wait, epoll_pwait(2) */
	case 42: case 43: case 288:			/* connect, accept(4) */
	case 44: case 45: case 46: case 47: case 299: case 307: /* send/recv */
		return CAUSE_NET;
	case 74: case 75: case 162: case 306: case 277:	/* fsync, fdatasync, sync*, sync_file_range */
	case 26: case 208: case 333: case 426:		/* msync, io_getevents, io_pgetevents, io_uring_enter */
		return CAUSE_IO;
	case 0: case 1: case 17: case 18: case 19: case 20:	/* read, write, pread, pwrite, readv, writev */
	case 295: case 296: case 327: case 328: case 40: case 275: /* p{read,write}v(2), sendfile, splice */
		*sure = false;		/* the file's lock, or its data */
		type = fd_type(t, regs->di);
		if (type == S_IFSOCK_ || type == S_IFIFO_)	/* a peer: socket or pipe */
			return CAUSE_NET;
		if (type == S_IFREG_ || type == S_IFBLK_)
			return CAUSE_IO;
		return CAUSE_OTHER;
	}
	*sure = false;
	return CAUSE_OTHER;
}

/*
 * T (current, with CTX its program's context and SP the hook's stack
 * pointer in views mode, 0 in fallback mode; or CTX NULL: no stack to look
 * at) blocked: why? In this order: stalled on memory, in iowait, then what
 * its stack and system call say. A kernel lock wins over what the system
 * call would say, except where the call's number names the wait itself
 * (futex, nanosleep, epoll_wait...). T's flags do not change while it is
 * off its CPU, so this answers the same at its switch-in.
 */
static __always_inline __u32 blocked_cause(struct task_struct *t, void *ctx, __u64 sp)
{
	bool sure;
	__u32 cause;

	if (in_memstall(t))
		return CAUSE_MEM;
	if (in_iowait(t))
		return CAUSE_IO;
	cause = classify(t, &sure);
	if (!sure && ctx && in_kernel_lock(ctx, t, sp))
		return CAUSE_LOCK;
	return cause;
}

/*
 * T leaves its CPU, if it is a thread of ours that ran. PREEMPT: the caller
 * knows it was preempted (sched_switch's argument). CTX: the program's
 * context if T is current, else NULL: T seen from outside, FAR then if T
 * is only an address (TASK_RD()). Nothing of T is read before its entry is
 * found: most tasks a hook sees are not ours, and a thread of ours is not
 * followed until its first record or event (fresh). NOW: 0 to read the
 * clock only then.
 */
static __always_inline void switch_out(struct task_struct *t, __u64 now, bool preempt,
				       void *ctx, __u64 sp, bool far)
{
	__u32 tid = TASK_RD(far, t, pid), cause;
	struct thread_state *st;

	if (!maybe_followed(tid))
		return;
	st = bpf_map_lookup_elem(&threads, &tid);
	if (!st || !st->running || st->exited || st->fresh)
		return;
	if (!now)
		now = bpf_ktime_get_ns();
	if (preempt || runnable(t, far))
		cause = throttled(t, far) ? CAUSE_THROTTLED : CAUSE_RUNQ;
	else if (ctx && !far)
		cause = blocked_cause(t, ctx, sp);
	else
		cause = CAUSE_PENDING;	/* seen from outside T: its switch-in decides */
	charge_fold(st, now, 0);
	st->on_acc += now - st->last_ts;
	st->last_ts = now;
	st->running = 0;
	st->rd_out = run_delay(t, far);
	st->waker = 0;
	st->seq++;
	st->out_cause = cause;
	count(CNT_SWITCH_OUT);
}

/* -W: the traced function on top of ST's stack, WAKER_NO_FUNC if none. */
static __always_inline __u32 top_func(const struct thread_state *st)
{
	__u32 d = st->depth;

	if (!d || d > TRACE_MAX_DEPTH)
		return WAKER_NO_FUNC;
	return st->frames[(d - 1) & DEPTH_MASK].func & WAKER_NO_FUNC;
}

/* -W: add @ns of waiting in the function on top of ST's stack to its waker. */
static __always_inline void waker_add(struct thread_state *st, __u64 ns)
{
	__u32 func = top_func(st), idx, i;
	struct waker_slot *w;
	__u64 key;

	key = st->waker ? st->waker | ((__u64)func << WKEY_FUNC_SHIFT) :
			  WKEY(func, WAKER_OUTSIDE, WAKER_NO_FUNC, 0);
	idx = (__u32)((key * 0x61C8864680B583EBull) >> 52);
	for (i = 0; i < 8; i++) {
		__u32 k = (idx + i) & (TRACE_WAKER_SLOTS - 1);

		w = bpf_map_lookup_elem(&wakers, &k);
		if (!w)
			break;
		if (!w->key)
			w->key = key;
		if (w->key == key) {
			w->ns += ns;
			w->waits++;
			return;
		}
	}
	count(CNT_WAKERS_LOST);
}

static __always_inline bool in_irq_at(__u32 which)
{
	__s32 *d = bpf_map_lookup_elem(&in_irq, &which);

	return d && *d > 0;
}

/* Fallback: the waker kind if this CPU is in a timer, an interrupt or a softirq, else 0. */
static __always_inline __u32 in_irq_kind(void)
{
	if (in_irq_at(IN_TIMER))
		return WAKER_TIMER;
	if (in_irq_at(IN_HARDIRQ))
		return WAKER_HARDIRQ;
	if (in_irq_at(IN_SOFTIRQ))
		return WAKER_SOFTIRQ;
	return 0;
}

/*
 * A wakeup of T, a task of the target, by CUR (current). Views mode: from
 * the hook on try_to_wake_up, which only the target's own threads reach
 * (interrupts and other processes run elsewhere, or are not the hook's
 * context). Fallback: from sched_waking, for any waker. The first wakeup
 * after a switch-out is the one that ends the wait.
 */
static __always_inline void note_waker(struct task_struct *t, struct task_struct *cur)
{
	__u32 tid = BPF_CORE_READ(t, pid), wtid, kind;
	struct thread_state *st = bpf_map_lookup_elem(&threads, &tid), *ws;
	char comm[16];

	if (!st || st->running || st->exited || st->fresh || st->waker)
		return;
	wtid = BPF_CORE_READ(cur, pid);
	if (!views_mode) {
		kind = in_irq_kind();
		if (kind) {
			st->waker = WKEY(0, kind, WAKER_NO_FUNC, 0);
			return;
		}
	}
	/*
	 * Views mode: the waker runs on the view, so it is a task of ours,
	 * named as a thread (also a process just marked exited, a vfork
	 * child): no map insert in the hook's NMI-like context.
	 */
	if (!views_mode && !ours(BPF_CORE_READ(cur, tgid))) {
		st->waker = WKEY(0, WAKER_TASK, WAKER_NO_FUNC, wtid);
		if (!bpf_map_lookup_elem(&waker_comms, &wtid)) {
			bpf_get_current_comm(comm, sizeof(comm));
			bpf_map_update_elem(&waker_comms, &wtid, comm, BPF_ANY);
		}
		return;
	}
	ws = bpf_map_lookup_elem(&threads, &wtid);
	st->waker = WKEY(0, WAKER_THREAD, ws ? top_func(ws) : WAKER_NO_FUNC, wtid);
}

/*
 * At sched_switch, for NEXT (which this CPU's runqueue is about to run):
 * what sched_info_arrive() will add to its run_delay, its wait since it
 * was queued, in the runqueue's clock, which __schedule() has just
 * updated. In our clock instead, a wake-up dated by a clock the guest
 * clamps (an unstable TSC: sched_clock_local() keeps within a tick of
 * the last one) came out up to a vCPU stall later than the kernel dated
 * it: 10 ms of one call's wake-up wait counted as sleep on 6.1 in the
 * emulator (selftest 42, 2026-11-29). The runqueue is found through the
 * task's group's fair queue on its CPU, which set_task_rq() keeps for a
 * task of any class (CONFIG_FAIR_GROUP_SCHED; the per-CPU runqueues
 * variable needs a kallsyms entry some kernels lack), and must be this
 * CPU's. 0: not known.
 */
static __always_inline __u64 pending_run_delay(struct task_struct *t)
{
	struct cfs_rq *cfs;
	struct rq *rq;
	__u64 queued, clock;

	if (!bpf_core_field_exists(cfs->rq) || !bpf_core_field_exists(rq->cpu))
		return 0;
	cfs = BPF_CORE_READ(t, se.cfs_rq);
	rq = cfs ? BPF_CORE_READ(cfs, rq) : NULL;
	if (!rq || BPF_CORE_READ(rq, cpu) != (int)bpf_get_smp_processor_id())
		return 0;
	queued = BPF_CORE_READ(t, sched_info.last_queued);
	clock = BPF_CORE_READ(rq, clock);
	return queued && clock > queued ? clock - queued : 0;
}

/*
 * T is the thread coming back; it is still inside the call that blocked.
 * A thread that blocked waited for its cause, then, once woken, for a CPU
 * (wakeup); one that was preempted waited for a CPU all along (runq). The
 * wakeup part: in views mode, what run_delay grew by since the switch-out
 * (in the runqueue's clock, not ours: bounded by the interval); in
 * fallback mode, where the sched_switch tracepoint comes before the
 * arrival that adds to run_delay, what that arrival is about to add
 * (pending_run_delay(): the same clock); where it cannot be read, the
 * time since the first sched_wakeup.
 * CTX is the program's context if T is current (views mode), else NULL:
 * a switch-out seen from outside T (views mode, when a kernel thread or
 * the idle task took the CPU without a switch_mm) is decided here, where
 * T is back in the place it blocked. T is a task the verifier knows
 * (TASK_RD()); NOW, as for switch_out().
 */
static __always_inline void switch_in(struct task_struct *t, __u64 now, bool views, void *ctx,
				      __u64 sp)
{
	__u32 tid = t->pid;
	struct thread_state *st;
	__u64 off, wake = 0;
	__u32 cause;
	bool waited;		/* not runnable all along: a waker, a wake-up tail */

	if (!maybe_followed(tid))
		return;
	st = bpf_map_lookup_elem(&threads, &tid);
	if (!st || st->running || st->exited || st->fresh)
		return;
	if (!now)
		now = bpf_ktime_get_ns();
	cause = st->out_cause;
	if (cause >= NR_CAUSES)		/* a switch-out seen from outside T */
		cause = blocked_cause(t, ctx, sp);
	if (cause >= NR_CAUSES)
		cause = CAUSE_OTHER;
	off = now - st->last_ts;
	waited = cause != CAUSE_RUNQ && cause != CAUSE_THROTTLED;
	if (waited) {
		if (views)
			wake = run_delay(t, false) - st->rd_out;
		else if (st->woken_at > st->last_ts) {
			wake = pending_run_delay(t);
			if (!wake)
				wake = now - st->woken_at;
		}
		if ((__s64)wake < 0)
			wake = 0;
		if (wake > off)
			wake = off;
	}
	st->off_acc[cause] += off - wake;
	if (wakers_on && waited) {
		charge_fold_waker(st, now - wake, 1 + cause);
		waker_add(st, off - wake);
	} else {
		charge_fold(st, now - wake, 1 + cause);
	}
	if (wake) {
		st->off_acc[CAUSE_WAKEUP] += wake;
		charge_fold(st, now, 1 + CAUSE_WAKEUP);
	}
	st->last_ts = now;
	st->running = 1;
	st->seq++;
	count(CNT_SWITCH_IN);
}

/*
 * The thread is gone. Its entry is marked, not deleted: a delete takes the
 * map's bucket lock, which the hook's NMI-like context must not (see
 * charge_fold()); userspace folds what it left pending and deletes it
 * (threads_sweep()), thread_get() reuses it if the tid comes back first.
 * A thread of process TGID, if ours, counts as an exit even without a
 * live entry: one whose records were whole calls (rec_calls()) needs
 * none, or finds the exited one of an earlier thread with its tid; and
 * one that never ran a traced function has none either.
 */
#define SIGNAL_GROUP_EXIT	0x00000004	/* include/linux/sched/signal.h, 6.1 and 6.12 */

/*
 * @t, the last thread of the traced process, exits with @code (do_exit()'s):
 * its wait status is the group's exit code after exit_group() or a fatal
 * signal, else the leader's own (wait_task_zombie()).
 */
static __always_inline void target_exit(struct task_struct *t, long code)
{
	struct signal_struct *sig = BPF_CORE_READ(t, signal);
	struct task_struct *leader = BPF_CORE_READ(t, group_leader);

	if (BPF_CORE_READ(sig, flags) & SIGNAL_GROUP_EXIT)
		target_status = BPF_CORE_READ(sig, group_exit_code);
	else if (leader == t)
		target_status = code;
	else
		target_status = BPF_CORE_READ(leader, exit_code);
}

static __always_inline void thread_exit(__u32 tid, __u32 tgid)
{
	struct thread_state *st = bpf_map_lookup_elem(&threads, &tid);

	if (!st || st->exited) {
		if (ours(tgid))
			count(CNT_EXITS);
		return;
	}
	count_n(CNT_ABANDONED, st->depth);
	st->exited = 1;
	st->seq++;
	count(CNT_EXITS);
}

/*
 * View mode: our hooks in the traced process's kernel view. Each hook runs
 * the kprobe program of its kind itself, with its registers as the context
 * (plain loads, no lookup by hook id); on_hook serves them all through the
 * xprobes_hook tracepoint where the module cannot give a hook a program.
 */

/*
 * init_mm's address, from xprobectl's reading of /proc/kallsyms
 * (ctl/klocks.c; an extern would have libbpf read it all again): 0 on a
 * kernel without its data symbols there (KALLSYMS_ALL=n), and in fallback
 * mode, which needs none; the module, which views mode needs, resolves
 * init_mm itself at load.
 */
const volatile __u64 init_mm_addr;

/*
 * switch_mm_irqs_off(prev_mm, next_mm, next): current is leaving, for a task
 * with an mm of its own (context_switch() calls it for no other), or, with
 * no next task and init_mm next, for one without: the module's guard
 * (module/views/guard.c) takes the CPU off the view's page tables in
 * enter_lazy_tlb() before such a task runs. Not for exec (next is current)
 * nor text_poke()'s temporary mm (no next task, poking_mm). The module runs
 * this program only for a task on its own mm (own_task in module/hooks/fire.h);
 * the test of cur->mm is there should that change.
 */
static __always_inline void hook_switch_out(struct task_struct *next, const void *next_mm,
					    void *ctx, __u64 sp)
{
	struct task_struct *cur = bpf_get_current_task_btf();

	if (next == cur || !cur->mm || (!next && (__u64)next_mm != init_mm_addr))
		return;
	switch_out(cur, 0, false, ctx, sp, false);
}

/*
 * finish_task_switch(prev) on our page tables: either a thread of ours is
 * starting (then PREV, if ours, has been seen leaving at switch_mm_irqs_off(),
 * which context_switch() calls when the next task has an mm), or a task
 * without an mm took over lazily from one of ours (no switch_mm happened, so
 * this is our only sight of PREV leaving): the idle task, or a kernel thread
 * in a view without the guard that would have taken the CPU off the view's
 * tables first (module/views/guard.c).
 */
static __always_inline void hook_switch_in(struct task_struct *prev, void *ctx, __u64 sp)
{
	struct task_struct *cur = bpf_get_current_task_btf();

	if (cur->mm)
		switch_in(cur, 0, true, ctx, sp);
	else if (prev && prev != cur)
		switch_out(prev, 0, false, NULL, 0, true);
}

SEC("kprobe")
int on_switch_out(struct pt_regs *ctx)
{
	hook_switch_out((struct task_struct *)PT_REGS_PARM3(ctx), (void *)PT_REGS_PARM2(ctx), ctx,
			PT_REGS_SP(ctx));
	return 0;
}

SEC("kprobe")
int on_switch_in(struct pt_regs *ctx)
{
	hook_switch_in((struct task_struct *)PT_REGS_PARM1(ctx), ctx, PT_REGS_SP(ctx));
	return 0;
}

/* try_to_wake_up(p, state, wake_flags) by one of ours (-W) */
static __always_inline void hook_wake(struct task_struct *p)
{
	if (p && ours(BPF_CORE_READ(p, tgid)))
		note_waker(p, bpf_get_current_task_btf());
}

SEC("kprobe")
int on_wake(struct pt_regs *ctx)
{
	hook_wake((struct task_struct *)PT_REGS_PARM1(ctx));
	return 0;
}

/* do_exit by a thread of ours */
static __always_inline void hook_exit(long code)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 id = bpf_get_current_pid_tgid();
	/* at do_exit's entry: its own count is not off yet */
	int live = BPF_CORE_READ(t, signal, live.counter) - 1;

	thread_exit((__u32)id, id >> 32);
	if (children)
		proc_exit(id >> 32, live);
	if (target_tgid && (id >> 32) == target_tgid && live == 0)
		target_exit(t, code);
}

/* do_exit(code) */
SEC("kprobe")
int on_exit_hook(struct pt_regs *ctx)
{
	hook_exit(PT_REGS_PARM1(ctx));
	return 0;
}

/* wake_up_new_task(p) by one of ours (--children): a thread, or a new process */
SEC("kprobe")
int on_fork(struct pt_regs *ctx)
{
	struct task_struct *p = (struct task_struct *)PT_REGS_PARM1(ctx);

	if (p)
		proc_fork(bpf_get_current_task_btf(), p);
	return 0;
}

SEC("raw_tp/xprobes_hook")
int on_hook(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 id = (__u32)ctx->args[0], *kind;
	struct pt_regs *regs = (struct pt_regs *)ctx->args[2];

	kind = bpf_map_lookup_elem(&hooks, &id);
	if (!kind)
		return 0;
	switch (*kind) {
	case HOOK_SWITCH_OUT:
		hook_switch_out((struct task_struct *)PT_REGS_PARM3_CORE(regs),
				(void *)PT_REGS_PARM2_CORE(regs), ctx, PT_REGS_SP_CORE(regs));
		break;
	case HOOK_SWITCH_IN:
		hook_switch_in((struct task_struct *)PT_REGS_PARM1_CORE(regs), ctx, PT_REGS_SP_CORE(regs));
		break;
	case HOOK_EXIT:
		hook_exit(PT_REGS_PARM1_CORE(regs));
		break;
	case HOOK_FORK:
		if (PT_REGS_PARM1_CORE(regs))
			proc_fork(bpf_get_current_task_btf(),
				  (struct task_struct *)PT_REGS_PARM1_CORE(regs));
		break;
	case HOOK_WAKE:
		hook_wake((struct task_struct *)PT_REGS_PARM1_CORE(regs));
		break;
	}
	return 0;
}

/* Fallback mode: the global tracepoint, with a PID test. */
SEC("tp_btf/sched_switch")
int BPF_PROG(fb_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	bool out = ours(prev->tgid), in = ours(next->tgid);
	__u64 now;

	if (!out && !in)
		return 0;
	now = bpf_ktime_get_ns();
	if (out)
		switch_out(prev, now, preempt, ctx, 0, false);
	if (in)
		switch_in(next, now, false, NULL, 0);
	return 0;
}

/* -W in fallback mode: who wakes a thread of ours, in the waker's context. */
SEC("tp_btf/sched_waking")
int BPF_PROG(fb_waking, struct task_struct *p)
{
	if (ours(p->tgid))
		note_waker(p, bpf_get_current_task_btf());
	return 0;
}

static __always_inline void in_move(__u32 which, bool in)
{
	__s32 *d = bpf_map_lookup_elem(&in_irq, &which);

	if (!d)
		return;
	if (in)
		(*d)++;
	else if (*d > 0)
		(*d)--;
}

SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(fb_hrtimer_in) { in_move(IN_TIMER, true); return 0; }
SEC("tp_btf/hrtimer_expire_exit")
int BPF_PROG(fb_hrtimer_out) { in_move(IN_TIMER, false); return 0; }
SEC("tp_btf/timer_expire_entry")
int BPF_PROG(fb_timer_in) { in_move(IN_TIMER, true); return 0; }
SEC("tp_btf/timer_expire_exit")
int BPF_PROG(fb_timer_out) { in_move(IN_TIMER, false); return 0; }
SEC("tp_btf/irq_handler_entry")
int BPF_PROG(fb_hardirq_in) { in_move(IN_HARDIRQ, true); return 0; }
SEC("tp_btf/irq_handler_exit")
int BPF_PROG(fb_hardirq_out) { in_move(IN_HARDIRQ, false); return 0; }
SEC("tp_btf/softirq_entry")
int BPF_PROG(fb_softirq_in) { in_move(IN_SOFTIRQ, true); return 0; }
SEC("tp_btf/softirq_exit")
int BPF_PROG(fb_softirq_out) { in_move(IN_SOFTIRQ, false); return 0; }

/* The first wakeup of a blocked thread of ours: its wakeup wait starts. */
SEC("tp_btf/sched_wakeup")
int BPF_PROG(fb_wakeup, struct task_struct *p)
{
	__u32 tid;
	struct thread_state *st;

	if (!ours(p->tgid))
		return 0;
	tid = p->pid;
	st = bpf_map_lookup_elem(&threads, &tid);
	if (st && !st->running && st->woken_at <= st->last_ts)
		st->woken_at = bpf_ktime_get_ns();
	return 0;
}

/* --children in fallback mode: every fork of the machine, ours kept */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(fb_fork, struct task_struct *parent, struct task_struct *child)
{
	proc_fork(parent, child);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(fb_exit, struct task_struct *p)
{
	/*
	 * Any thread's: a thread of a process already marked exited (its
	 * other threads) still has its entry. A lookup first: ours() is
	 * tested only where there is no entry.
	 */
	int live = BPF_CORE_READ(p, signal, live.counter);

	thread_exit(p->pid, p->tgid);
	if (children)	/* signal->live is counted down before the tracepoint */
		proc_exit(p->tgid, live);
	if (target_tgid && p->tgid == target_tgid && live == 0)
		target_exit(p, p->exit_code);	/* set before the tracepoint */
	return 0;
}

/* ---- the user side ----------------------------------------------------------- */

/*
 * A user event of a thread whose switch-in was not seen (st->running still
 * clear): the thread runs, so it came back at the latest @now. The gap is
 * OFF-CPU for an unknown cause, in the per-function clocks and in the
 * folded stacks alike, so that both say the same of the calls it falls in.
 * Both the entry and the return side do this: a return that read the
 * clocks of a thread still marked off its CPU would leave the gap out of
 * that call's ON and OFF-CPU figures while the stacks counted it ON.
 */
static __always_inline void resume_unseen(struct thread_state *st, __u64 now)
{
	if (st->running)
		return;
	count(CNT_FIXUP);
	if (now < st->last_ts)
		now = st->last_ts;
	charge_fold(st, now, 1 + CAUSE_OTHER);
	st->off_acc[CAUSE_OTHER] += now - st->last_ts;
	st->last_ts = now;
	st->running = 1;
	st->seq++;
}

/* A thread's state from its first event on: clocks at zero, running since @now. */
static __always_inline void thread_start(struct thread_state *st, __u32 tid, __u64 now)
{
	__u32 i;

	followed[tid & (FOLLOWED - 1)] = 1;	/* its switches look it up from now on */
	st->depth = 0;
	st->on_acc = 0;
	for (i = 0; i < NR_CAUSES; i++)
		st->off_acc[i] = 0;
	for (i = 0; i <= NR_CAUSES; i++)
		st->pend[i] = 0;
	st->nwpend = 0;
	st->hi_sp = 0;
	st->running = 1;
	st->last_ts = now;
	st->last_ev = now;
	st->exited = 0;
	st->fresh = 0;
}

static __always_inline struct thread_state *thread_get(__u32 tid, __u64 now)
{
	struct thread_state *st = bpf_map_lookup_elem(&threads, &tid);
	__u32 zero = 0;
	char comm[16];

	if (st && !st->exited && !st->fresh)
		return st;
	if (!st) {
		st = bpf_map_lookup_elem(&zero_state, &zero);
		if (!st || bpf_map_update_elem(&threads, &tid, st, BPF_NOEXIST)) {
			count(CNT_NO_THREAD);
			return NULL;
		}
		st = bpf_map_lookup_elem(&threads, &tid);
		if (!st)
			return NULL;
	}
	/* New, or an exited thread's entry that its tid, reused, takes over. */
	thread_start(st, tid, now);
	st->pslot = proc_slot(bpf_get_current_pid_tgid() >> 32);
	bpf_get_current_comm(comm, sizeof(comm));
	bpf_map_update_elem(&comms, &tid, comm, BPF_ANY);
	return st;
}

/*
 * The target's user-hook trampoline areas (xprobectl fills them in after
 * adding its user hooks): a return address in one is a return thunk's.
 */
#define UAREAS 4
__u64 uarea_lo[UAREAS], uarea_hi[UAREAS];

/*
 * Does the return address at SP still hold what a probe of the caller put
 * there: the uretprobe trampoline, or a user hook's return thunk? Either,
 * whichever probe the callee has: in views mode a function on a uprobe
 * (one a user hook refused) tail-calls functions on user hooks and the
 * other way round. Asking for the callee's own kind only took the
 * caller's frame at this sp for an abandoned sibling: dropped, its return
 * then unmatched, its call lost (trace of all of redis-server: as many
 * abandoned frames as unmatched returns, in every session).
 */
static __always_inline bool tail_call(__u64 sp)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 ret = 0;
	int i;

	bpf_probe_read_user(&ret, sizeof(ret), (void *)sp);
	if (ret && ret == BPF_CORE_READ(task, mm, uprobes_state.xol_area, vaddr))
		return true;
	for (i = 0; i < UAREAS; i++)
		if (ret >= uarea_lo[i] && ret < uarea_hi[i])
			return true;
	return false;
}

/*
 * Is the frame at this very sp the caller of a tail call? TAIL_ASK: read
 * the slot. TAIL_REC: a record's entry whose routine saw no return thunk in
 * the slot: a tail call if that frame is a uprobe's, whose slot held the
 * uretprobe trampoline, which the routine does not know (the records come
 * in order with the uprobes' events: the module hands them over where the
 * uprobe handlers run, trace.c uprobe_flush_setup()).
 */
enum { TAIL_NO, TAIL_YES, TAIL_ASK, TAIL_REC, TAIL_POP };

/*
 * A call is made with SP at its return address: frames deeper than this
 * call site never returned (longjmp, C++ exceptions), drop them. A frame at
 * this very sp is either the caller of a tail call (keep it) or a sibling
 * abandoned the same way: in a tail call the return address slot still
 * holds the uretprobe trampoline (or the return thunk) that the caller's
 * probe put there. TAIL_POP: a return with SP at its return address; a
 * frame at SP is the one returning (frame_at()).
 */
static __always_inline bool top_abandoned(struct thread_state *st, __u64 sp, int tail)
{
	__u32 d = st->depth;
	struct frame *f;

	if (!d || d > TRACE_MAX_DEPTH)
		return false;
	f = &st->frames[(d - 1) & DEPTH_MASK];
	if (f->entry_sp > sp)
		return false;
	return f->entry_sp != sp ||
	       !(tail == TAIL_POP || tail == TAIL_YES || (tail == TAIL_REC && f->uprobe) ||
		 (tail == TAIL_ASK && tail_call(sp)));
}

struct drop_walk {
	struct thread_state *st;
	__u64 sp;
	int tail;
};

/* Drop the top frame if it is abandoned; 1 if it stays (the walk ends there). */
static __always_inline long drop_top(struct thread_state *st, __u64 sp, int tail)
{
	if (!top_abandoned(st, sp, tail))
		return 1;
	st->depth--;
	count(CNT_ABANDONED);
	return 0;
}

static long drop_one(__u32 i, struct drop_walk *w)
{
	return drop_top(w->st, w->sp, w->tail);
}

/*
 * The usual case (nothing abandoned) inline; the rest in bpf_loop(), not a
 * bounded loop: the verifier walks a bounded loop once per iteration, for
 * every state that reaches it, and fn_records() reaches this in four places
 * of a callback it walks until its states repeat: 76000 instructions to
 * verify there, 4 s of a session's start in the emulator on 6.12.
 */
static __always_inline void drop_abandoned(struct thread_state *st, __u64 sp, int tail)
{
	struct drop_walk w = { .st = st, .sp = sp, .tail = tail };

	if (!drop_top(st, sp, tail))
		bpf_loop(TRACE_MAX_DEPTH - 1, drop_one, &w, 0);
}

/*
 * Push a call of FUNC, SP at its return address, at NOW with the thread's
 * ON clock at ON, once drop_abandoned(); the new frame, NULL past the
 * maximum depth.
 */
static __always_inline struct frame *push_slot(struct thread_state *st, __u64 now, __u64 on,
					       __u64 sp, __u32 func, int tail)
{
	struct frame *f;
	__u32 d;

	drop_abandoned(st, sp, tail);
	d = st->depth;
	/*
	 * A fresh read the compiler may not merge with the loop's: it would
	 * drop the mask below, and 6.1's verifier then walks the impossible
	 * path with d > TRACE_MAX_DEPTH and rejects the program.
	 */
	barrier_var(d);
	if (d >= TRACE_MAX_DEPTH) {
		count(CNT_DEPTH_OVERFLOW);
		return NULL;
	}
	f = &st->frames[d & DEPTH_MASK];
	f->func = func;
	f->entry_ts = now;
	f->entry_sp = sp;
	if (sp > st->hi_sp)
		st->hi_sp = sp;
	f->on_at = on;
	f->child_wall = 0;
	f->child_on = 0;
	f->uprobe = 0;
	st->depth = d + 1;
	return f;
}

/* push_slot() with the off-CPU snapshot (events and uprobes: UPROBE). */
static __always_inline void push_frame(struct thread_state *st, const struct clocks *c,
				       __u64 sp, __u32 func, int tail, bool uprobe)
{
	struct frame *f = push_slot(st, c->now, c->on, sp, func, tail);
	__u32 i;

	if (!f)
		return;
	f->uprobe = uprobe;
	for (i = 0; i < NR_CAUSES; i++) {
		f->off_at[i] = c->off[i];
		f->child_off[i] = 0;
	}
}

/*
 * C++ exceptions, Rust panics, pthread_cancel()'s forced unwinding and
 * backtrace() read the return addresses on the thread's stack, and a
 * uretprobe's trampoline there has no unwind information: the unwinder
 * stops (std::terminate()). So at the unwinder's entry points
 * (unwind_start) every pending uretprobe return of the thread gets its
 * original address back in its slot. The kernel keeps its return
 * instances, and drops those the unwinding went past at the next return
 * or call, as after a longjmp. At the thread's next traced call made above
 * the unwinder's frame (not one the unwinder itself makes: a personality
 * routine, a backtrace callback), the slots of the frames still live
 * (above its sp) that still hold their original address get the
 * trampoline again (REARM), and their returns are seen.
 * The thread may only mislead its own figures: it writes its own stack,
 * and the slots and addresses come from the kernel's instances. A kernel
 * locked down (Secure Boot) forbids bpf_probe_write_user(): no unwind_fix,
 * and xprobectl says so.
 */
#define UNWIND_MAX	64	/* pending returns looked at, the newest first */

static __always_inline void uret_slots(__u64 sp, bool rearm)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	struct return_instance *ri = BPF_CORE_READ(t, utask, return_instances);
	__u64 tramp = BPF_CORE_READ(t, mm, uprobes_state.xol_area, vaddr);
	__u64 slot, orig, cur;
	__u32 i;

	if (!tramp)
		return;		/* no uretprobe ever in this process */
	for (i = 0; i < UNWIND_MAX && ri; i++) {
		slot = BPF_CORE_READ(ri, stack);
		orig = BPF_CORE_READ(ri, orig_ret_vaddr);
		ri = BPF_CORE_READ(ri, next);
		if (bpf_probe_read_user(&cur, sizeof(cur), (void *)slot))
			continue;
		if (!rearm && cur == tramp)
			bpf_probe_write_user((void *)slot, &orig, sizeof(orig));
		else if (rearm && slot > sp && cur == orig)
			bpf_probe_write_user((void *)slot, &tramp, sizeof(tramp));
	}
}

/* The unwinder is entered at SP by the current thread, one of ours. */
static __always_inline void unwind_begin(__u64 sp)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct thread_state *st;

	count(CNT_UNWINDS);
	if (!unwind_fix)
		return;
	uret_slots(0, false);
	st = bpf_map_lookup_elem(&threads, &tid);
	if (st) {
		st->unwound = 1;
		st->unwind_sp = sp;
	}
}

/* _Unwind_RaiseException() and the other entries of the unwinder (trace.c). */
SEC("uprobe")
int unwind_start(struct pt_regs *ctx)
{
	if (unwind_fix && ours(bpf_get_current_pid_tgid() >> 32))
		unwind_begin(PT_REGS_SP(ctx));
	return 0;
}

static __always_inline void tstat_add(__u32 tid, __u32 func, __u64 wall, __u64 on,
				      const __u64 *off);

/* A call of FUNC that takes no return probe: counted, no frame, no times. */
static __always_inline void entry_only(__u32 func)
{
	struct func_stats *s = stats_of(func);

	if (s)
		__sync_fetch_and_add(&s->calls, 1);
	if (per_thread)
		tstat_add((__u32)bpf_get_current_pid_tgid(), func, 0, 0, NULL);
}

/* A call (or with @ret its return) of FUNC the module gave up: counted, per function too. */
static __always_inline void lost(__u32 func, bool ret)
{
	struct func_stats *f;

	count(ret ? CNT_RETURNS_LOST : CNT_CALLS_LOST);
	f = stats_of(func);
	if (!f)
		return;
	if (ret)
		__sync_fetch_and_add(&f->returns_lost, 1);
	else
		__sync_fetch_and_add(&f->calls_lost, 1);
}

/*
 * Functions on records hooks without returns, by index (set by xprobectl
 * before the programs load, load_bpf() in trace.c: no program takes a
 * record before then).
 */
__u8 rec_entry_only[TRACE_MAX_FUNCS];

/*
 * A records entry whose return writes nothing (XPROBES_UREC_NORET), of
 * COOKIE: a function without returns (rec_entry_only[]), whose entry
 * counts its call; or a call of one with returns that got no return thunk
 * (the block had none left for its return address, or its stack slot
 * could not be written): its return is lost, counted as the events' are
 * (uh_lost()), not as a call with no time.
 */
static __always_inline void rec_noret(__u32 cookie)
{
	if (cookie < TRACE_MAX_FUNCS && rec_entry_only[cookie])
		entry_only(cookie);
	else
		lost(cookie, true);
}

/* A call of traced function FUNC, SP at its return address (UPROBE, or a user hook's event). */
static __always_inline int entry(__u64 sp, __u32 func, bool uprobe)
{
	__u64 now = bpf_ktime_get_ns();
	struct thread_state *st;
	struct clocks c;

	count(CNT_ENTRIES);
	if (func & TRACE_ENTRY_ONLY) {
		entry_only(func & ~TRACE_ENTRY_ONLY);
		return 0;
	}
	st = thread_get((__u32)bpf_get_current_pid_tgid(), now);
	if (!st)
		return 0;
	if (unwind_fix && st->unwound && sp > st->unwind_sp) {
		st->unwound = 0;
		uret_slots(sp, true);
	}
	resume_unseen(st, now);
	read_clocks(st, &c);
	charge_fold(st, c.now, 0);
	fold_flush(st);
	push_frame(st, &c, sp, func, TAIL_ASK, uprobe);
	return 0;
}

/*
 * A uprobe's cookie: the function's index, and in the high half the pid
 * of the process it was attached for. A uretprobe is not filtered by
 * process (perf-based ones: every consumer of the probed address runs on
 * every return), so with uprobes in several processes (--children, or
 * another session) each return would run every process's program: the
 * others' would count it as unmatched.
 */
static __always_inline bool cookie_ours(__u64 ck)
{
	__u32 owner = ck >> 32;

	return !owner || owner == bpf_get_current_pid_tgid() >> 32;
}

SEC("uprobe")
int fn_entry(struct pt_regs *ctx)
{
	__u64 ck = bpf_get_attach_cookie(ctx);

	if (!cookie_ours(ck))
		return 0;
	return entry(PT_REGS_SP(ctx), (__u32)ck, true);
}

/*
 * The events of xprobes user hooks (the default where the module is there
 * and a function allows one): args id, cookie (the function), the
 * registers at the entry. The tracepoint is every hooked process's. An
 * unwinder hook's (with records, the only events): the module gives the
 * thunks' slots back, and uretprobes' (functions without a user hook)
 * are given back here, as unwind_start does.
 */
SEC("raw_tp/xprobes_uhook")
int fn_entry_uh(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx->args[2];

	if (!ours(bpf_get_current_pid_tgid() >> 32))
		return 0;
	if ((__u32)ctx->args[1] == TRACE_UNWINDER_COOKIE) {
		unwind_begin(BPF_CORE_READ(regs, sp));
		return 0;
	}
	return entry(BPF_CORE_READ(regs, sp), (__u32)ctx->args[1], false);
}

/*
 * With records the user hooks' only events are the unwinder hooks'
 * (trace.c, attach_uh()): they take this, not fn_entry_uh, whose entry()
 * 6.12's verifier walks for 22 676 instructions (a trace's set-up spent
 * 1.4 to 2.2 s of the debug kernel's on it, 2026-12-02).
 */
SEC("raw_tp/xprobes_uhook")
int unwind_uh(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx->args[2];

	if ((__u32)ctx->args[1] == TRACE_UNWINDER_COOKIE && ours(bpf_get_current_pid_tgid() >> 32))
		unwind_begin(BPF_CORE_READ(regs, sp));
	return 0;
}

/* -T: a call of FUNC by thread TID (OFF: by cause, NULL for none). */
static __always_inline void tstat_add(__u32 tid, __u32 func, __u64 wall, __u64 on,
				      const __u64 *off)
{
	struct thread_func_key tk = { .func = func, .tid = tid };
	struct thread_func_stats *ts, tzero = {};
	__u32 i;

	ts = bpf_map_lookup_elem(&tstats, &tk);
	if (!ts) {
		bpf_map_update_elem(&tstats, &tk, &tzero, BPF_NOEXIST);
		ts = bpf_map_lookup_elem(&tstats, &tk);
		if (!ts)
			return;
	}
	ts->calls++;
	ts->wall += wall;
	ts->on_incl += on;
	if (!off)
		return;
	_Pragma("unroll")
	for (i = 0; i < NR_CAUSES; i++)
		ts->off_incl[i] += off[i];
}

/*
 * The loops over causes are unrolled: kept as loops (log2_bucket() is a call
 * now), 6.1's verifier rejects the body's fall-through back-edge.
 */
static __always_inline void account(struct thread_state *st, struct frame *f,
				    const struct clocks *c, __u32 tid)
{
	__u64 wall = c->now - f->entry_ts, on = c->on - f->on_at, off[NR_CAUSES], waited = 0;
	struct func_stats *s;
	struct func_off *o;
	__u32 i, d = st->depth;

	_Pragma("unroll")
	for (i = 0; i < NR_CAUSES; i++) {
		off[i] = c->off[i] - f->off_at[i];
		waited |= off[i];
	}

	s = stats_of(f->func);
	if (s) {
		__sync_fetch_and_add(&s->calls, 1);
		__sync_fetch_and_add(&s->wall, wall);
		__sync_fetch_and_add(&s->on_incl, on);
		if (on > f->child_on)
			__sync_fetch_and_add(&s->on_excl, on - f->child_on);
		shard_hist_add(s->hist_wall, log2_bucket(wall));
		shard_hist_add(s->hist_on, log2_bucket(on));
	}
	o = waited ? bpf_map_lookup_elem(&offstats, &f->func) : NULL;
	if (o) {
		_Pragma("unroll")
		for (i = 0; i < NR_CAUSES; i++) {
			__u32 b;

			if (!off[i])
				continue;
			__sync_fetch_and_add(&o->off_incl[i], off[i]);
			if (off[i] > f->child_off[i])
				__sync_fetch_and_add(&o->off_excl[i], off[i] - f->child_off[i]);
			b = log2_bucket(off[i]);
			if (b < TRACE_HIST)
				__sync_fetch_and_add(&o->hist_off[i][b], 1);
		}
	}
	if (d >= 2 && d <= TRACE_MAX_DEPTH) {
		struct frame *parent = &st->frames[(d - 2) & DEPTH_MASK];

		parent->child_wall += wall;
		parent->child_on += on;
		_Pragma("unroll")
		for (i = 0; i < NR_CAUSES; i++)
			parent->child_off[i] += off[i];
	}
	if (per_thread)
		tstat_add(tid, f->func, wall, on, off);
	pstat_add(st->pslot, f->func, wall, on, off);
}

/*
 * The frame of the call whose return address was at ESP, on top once the
 * deeper frames that never returned (their uretprobes were dropped, a
 * longjmp) are dropped; NULL if there is none (counted). *DP: the depth.
 */
static __always_inline struct frame *frame_at(struct thread_state *st, __u64 esp, __u32 *dp)
{
	struct frame *f;
	__u32 d;

	drop_abandoned(st, esp, TAIL_POP);
	d = st->depth;
	barrier_var(d);		/* as in push_frame: keep the mask for 6.1's verifier */
	if (!d || d > TRACE_MAX_DEPTH) {
		/*
		 * Every call the session saw this thread make nests inside the
		 * calls it was already in when the probes went in: one of
		 * those returns with no frame open, above every frame pushed.
		 */
		count(!live || esp > st->hi_sp ? CNT_EARLY : CNT_UNMATCHED);
		return NULL;
	}
	f = &st->frames[(d - 1) & DEPTH_MASK];
	if (f->entry_sp != esp) {
		/* past max depth, a frame lost; or entered while the probes went in */
		count(live ? CNT_UNMATCHED : CNT_EARLY);
		return NULL;
	}
	*dp = d;
	return f;
}

/* Pop the call whose return address was at ESP (of FUNC), at the thread clocks C. */
static __always_inline void pop_frame(struct thread_state *st, const struct clocks *c,
				      __u64 esp, __u32 func, __u32 tid)
{
	struct frame *f;
	__u32 d = 0;

	f = frame_at(st, esp, &d);
	if (!f)
		return;
	if (f->func != func) {
		count(CNT_UNMATCHED);
		return;
	}
	account(st, f, c, tid);
	st->depth = d - 1;
	count(CNT_RETURNS);
}

/* A return of FUNC, whose entry had its return address at ESP. */
static __always_inline int ret_common(__u64 esp, __u32 func)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct thread_state *st = bpf_map_lookup_elem(&threads, &tid);
	struct clocks c;

	if (!st || st->fresh) {		/* its first event: a call made before */
		count(CNT_EARLY);
		return 0;
	}
	if (st->exited) {
		count(CNT_UNMATCHED);
		return 0;
	}
	if (!st->running)
		resume_unseen(st, bpf_ktime_get_ns());
	read_clocks(st, &c);
	charge_fold(st, c.now, 0);
	fold_flush(st);
	pop_frame(st, &c, esp, func, tid);
	return 0;
}

SEC("uretprobe")
int fn_return(struct pt_regs *ctx)
{
	__u64 ck = bpf_get_attach_cookie(ctx);

	if (!cookie_ours(ck))
		return 0;
	return ret_common(PT_REGS_SP(ctx) - 8, (__u32)ck);
}

SEC("raw_tp/xprobes_uhook_ret")
int fn_return_uh(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx->args[2];

	if (!ours(bpf_get_current_pid_tgid() >> 32))
		return 0;
	return ret_common(BPF_CORE_READ(regs, sp) - 8, (__u32)ctx->args[1]);
}

/*
 * An event of a user hook the module gave up (a stack page that would not
 * come in, the return thunks' table full): a call neither of whose events
 * fires, or a return whose entry's did (its frame is then abandoned at the
 * next return below it). Counted per function, so the report says what
 * its figures miss.
 */
SEC("raw_tp/xprobes_uhook_lost")
int uh_lost(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 func = (__u32)ctx->args[1], ret = (__u32)ctx->args[2] != 0;

	if (func == TRACE_UNWINDER_COOKIE || !ours(bpf_get_current_pid_tgid() >> 32))
		return 0;
	lost(func & ~TRACE_ENTRY_ONLY, ret);
	return 0;
}

/*
 * Records (user hooks with XPROBES_F_RECORDS, the default in views mode):
 * no kernel entry per call. The module hands a thread's records over when
 * it leaves its CPU (or fills its buffer), before the hook that accounts
 * the switch: in order, every one from while the thread ran, so the
 * thread's off-CPU clocks are those of now and its ON clock runs from its
 * last switch-in. They replay through the same push and pop as events do.
 * The hand-over may run in the hooks' int3 handler (NMI context): a new
 * thread's entry is made there all the same, where it needs one (not for
 * a short batch of whole calls, rec_calls()) (the map is preallocated; a
 * busy bucket fails the insert, counted as records_no_thread), and records
 * need neither -T nor --folded (xprobectl uses events for those), which
 * want the thread's name and more maps.
 */
#define REC_CHUNK 8		/* records read at a time: the read costs more than a record's replay */

_Static_assert(XPROBES_UREC_INLINE == 4 && XPROBES_UREC_INLINE <= REC_CHUNK,
	       "fn_records() takes four records from the tracepoint's arguments");

struct rwalk {
	const struct xprobes_urec *recs;
	__u32 n;
	struct xprobes_urec buf[REC_CHUNK];	/* the tracepoint's records (rec_calls(),
						 * rec_one_inline()), or those from index
						 * i & ~(REC_CHUNK - 1) (rec_one()) */
	struct thread_state *st;	/* NULL in rec_calls() */
	__u64 lo, hi;		/* the times records may have: ran since lo, handed over
				 * before hi (0 until a record needs it) */
	__u64 entries, returns, calls;	/* counted once per batch */
	__u32 tid;
	__u32 low;		/* frames from this index up were pushed in this batch */
};

/*
 * The replay's fast path. A batch is one stretch of the thread on its CPU:
 * its off-CPU clocks are the same for every record in it (the first record
 * settles them: a fresh thread's start, a switch-in we did not see), and
 * its ON clock runs with the wall clock. A frame pushed in this batch
 * therefore needs no off-CPU snapshot while the batch lasts, and when it is
 * popped in the same batch (most calls) its ON time is its wall time and
 * its off-CPU times are zero, for it and for its parent. Its snapshot is
 * written at the end of the batch, if it is still open then (rec_settle()).
 * Frames older than the batch take the full account().
 */
static __always_inline void rec_low(struct rwalk *w)
{
	if (w->st->depth < w->low)
		w->low = w->st->depth;
}

/* push_slot() without the snapshot; the new frame is this batch's. */
static __always_inline void rec_push(struct rwalk *w, __u64 now, __u64 on, __u64 sp,
				     __u32 func, bool tail)
{
	struct frame *f = push_slot(w->st, now, on, sp, func, tail ? TAIL_YES : TAIL_REC);

	if (!f) {
		rec_low(w);	/* abandoned frames may have gone below it */
		return;
	}
	if (w->st->depth - 1 < w->low)
		w->low = w->st->depth - 1;
}

/* A call of FUNC that was all ON-CPU: WALL, of which EXCL its own; B: WALL's bucket. */
static __always_inline void rec_stats(__u32 func, __u64 wall, __u64 excl, __u32 b)
{
	struct func_stats *s = stats_of(func);

	if (!s)
		return;
	__sync_fetch_and_add(&s->calls, 1);
	__sync_fetch_and_add(&s->allon, wall);
	__sync_fetch_and_add(&s->on_excl, excl);
	shard_hist_add(s->hist_allon, b);
}

/* Frame D - 1 (from 1), a caller: charge it a callee's all-ON WALL time. */
static __always_inline void rec_charge(struct thread_state *st, __u32 d, __u64 wall)
{
	struct frame *parent;

	if (d < 1 || d > TRACE_MAX_DEPTH)
		return;
	parent = &st->frames[(d - 1) & DEPTH_MASK];
	parent->child_wall += wall;
	parent->child_on += wall;
}

/* A call pushed and popped in one batch: ON is wall, nothing off-CPU. */
static __always_inline void rec_account(struct thread_state *st, struct frame *f,
					__u64 now, __u32 d)
{
	__u64 wall = now - f->entry_ts;

	rec_stats(f->func, wall, wall > f->child_on ? wall - f->child_on : 0, log2_bucket(wall));
	pstat_add(st->pslot, f->func, wall, wall, NULL);
	rec_charge(st, d - 1, wall);
}

static __always_inline void rec_pop(struct rwalk *w, __u64 now, __u64 on, __u64 esp)
{
	struct thread_state *st = w->st;
	struct clocks c;
	struct frame *f;
	__u32 i, d = 0;

	f = frame_at(st, esp, &d);
	rec_low(w);
	if (!f)
		return;
	if (d - 1 >= w->low && !per_thread) {
		rec_account(st, f, now, d);
	} else {
		c.now = now;
		c.on = on;
		_Pragma("unroll")
		for (i = 0; i < NR_CAUSES; i++)
			c.off[i] = st->off_acc[i];
		account(st, f, &c, w->tid);
	}
	st->depth = d - 1;
	rec_low(w);
	w->returns++;
}

/*
 * A call the module folded (XPROBES_F_CALLS: it entered and returned in
 * this batch), in its entry's place: ON is its wall time, nothing is
 * off-CPU, and it has no frame. Its callees come after it and take their
 * time off its exclusive time (their caller's cookie is in their record);
 * a TOP call's caller has a frame, on top of the stack once frames
 * abandoned below this call site are dropped, and is charged as
 * rec_account() charges a parent.
 */
static __always_inline void rec_call(struct rwalk *w, __u64 t, __u64 what)
{
	struct thread_state *st = w->st;	/* NULL: fresh (rec_calls()) */
	__u64 wall = XPROBES_UREC_WALL(t);
	__u32 func = XPROBES_UREC_COOKIE(what), b = XPROBES_UREC_LOG2(t);
	struct func_stats *s;

	w->calls++;	/* an entry and a return too: xprobectl adds them */
	rec_stats(func, wall, wall, b < TRACE_HIST ? b : TRACE_HIST - 1);
	if (per_thread)
		tstat_add(w->tid, func, wall, wall, NULL);
	pstat_add(st ? st->pslot : 0, func, wall, wall, NULL);
	if (!(what & XPROBES_UREC_TOP)) {
		func = XPROBES_UREC_CALLER(t);
		s = stats_of(func);
		if (s)	/* its own less this callee's: modulo 2^64, as xprobectl sums */
			__sync_fetch_and_add(&s->on_excl, -wall);
		return;
	}
	if (!st || st->fresh)	/* no frames yet: its first entry or return starts them */
		return;
	drop_abandoned(st, XPROBES_UREC_SP(what), t & XPROBES_UREC_CALL_TAIL ? TAIL_YES : TAIL_REC);
	rec_low(w);
	rec_charge(st, st->depth, wall);
}

/*
 * A charge (XPROBES_F_SUMS): callees of the entry just before it that the
 * process summed itself, all ON-CPU, NS in all; they are not the entry's
 * own time. Its frame is the top one, unless it could not be pushed.
 */
static __always_inline void rec_charge_top(struct rwalk *w, __u64 sp, __u64 ns)
{
	struct thread_state *st = w->st;
	struct frame *f;
	__u32 d;

	if (!st || st->fresh)
		return;
	d = st->depth;
	if (d < 1 || d > TRACE_MAX_DEPTH)
		return;
	f = &st->frames[(d - 1) & DEPTH_MASK];
	if (f->entry_sp != sp)
		return;
	f->child_wall += ns;
	f->child_on += ns;
}

/*
 * A bottom charge (XPROBES_F_SUMS): calls the process summed whose
 * callers' entries are in no record of this batch, the first of them at
 * SP, NS in all. As that call's entry would (a record's entry: a uprobe's
 * frame at SP is the caller of a tail call), frames at or below SP are
 * dropped; then they are the callees of the frame on top.
 */
static __always_inline void rec_bottom(struct rwalk *w, __u64 sp, __u64 ns)
{
	struct thread_state *st = w->st;

	if (!st || st->fresh)
		return;		/* no frames: nobody to charge */
	drop_abandoned(st, sp, TAIL_REC);
	rec_low(w);
	rec_charge(st, st->depth, ns);
}

/* The end of a batch: the off-CPU snapshot of its frames still open. */
static __always_inline void rec_settle(struct rwalk *w)
{
	struct thread_state *st = w->st;
	struct frame *f;
	__u32 i, k, d;

	if (!st)
		return;
	for (i = 0; i < TRACE_MAX_DEPTH; i++) {
		d = w->low + i;
		if (d >= st->depth || d >= TRACE_MAX_DEPTH)
			break;
		barrier_var(d);	/* the compiler keeps the mask the verifier needs */
		f = &st->frames[d & DEPTH_MASK];
		_Pragma("unroll")
		for (k = 0; k < NR_CAUSES; k++) {
			f->off_at[k] = st->off_acc[k];
			f->child_off[k] = 0;
		}
	}
}

/*
 * Record I. READ: from recs, REC_CHUNK at a time; else all the records are
 * in buf already, the tracepoint's (XPROBES_UREC_INLINE at most). Two
 * callbacks, not one testing I against a bound: the verifier would tell
 * apart the state of each iteration (it explores a bpf_loop() callback
 * until its states repeat), and it took 20 times the instructions.
 */
static __always_inline long rec_step(__u32 i, struct rwalk *w, bool read)
{
	struct thread_state *st = w->st;
	struct xprobes_urec r;
	__u32 k = i & (REC_CHUNK - 1);
	__u64 now, on, m;

	if (read && !k) {
		m = (__u64)(w->n - i) * sizeof(r);
		barrier_var(m);	/* the bound below must stay on the value read */
		if (m > sizeof(w->buf))
			m = sizeof(w->buf);
		if (bpf_probe_read_kernel(w->buf, m, &w->recs[i]))
			return 1;
	}
	r = w->buf[k];
	if (XPROBES_UREC_IS_CALL(r.what)) {
		rec_call(w, r.time, r.what);
		return 0;
	}
	if (XPROBES_UREC_IS_BOTTOM(r.what)) {
		rec_bottom(w, XPROBES_UREC_SP(r.what), r.time);
		return 0;
	}
	if (XPROBES_UREC_IS_CHARGE(r.what)) {
		rec_charge_top(w, XPROBES_UREC_SP(r.what), r.time);
		return 0;
	}
	if (!w->hi)	/* read once a record needs it: a batch of calls does not */
		w->hi = bpf_ktime_get_ns();
	now = r.time < w->lo ? w->lo : r.time > w->hi ? w->hi : r.time;
	w->lo = now;
	if (st->fresh) {
		thread_start(st, w->tid, now);
	} else {
		resume_unseen(st, now);
	}
	on = st->on_acc + (now > st->last_ts ? now - st->last_ts : 0);
	if (r.what & XPROBES_UREC_RET) {
		rec_pop(w, now, on, XPROBES_UREC_SP(r.what));
		return 0;
	}
	w->entries++;
	if (r.what & XPROBES_UREC_NORET)
		rec_noret(XPROBES_UREC_COOKIE(r.what));
	else
		rec_push(w, now, on, XPROBES_UREC_SP(r.what), XPROBES_UREC_COOKIE(r.what),
			 r.what & XPROBES_UREC_TAIL);
	return 0;
}

/*
 * The entry of a thread first seen in its records, or whose tid an exited
 * thread left: fresh, its first record starts its clocks (its records are
 * older than now).
 */
static __always_inline struct thread_state *rec_thread(__u32 tid, __u32 tgid)
{
	struct thread_state *st = bpf_map_lookup_elem(&threads, &tid);
	__u32 zero = 0;

	if (st && !st->exited)
		return st;
	if (!st) {
		st = bpf_map_lookup_elem(&zero_state, &zero);
		if (!st || bpf_map_update_elem(&threads, &tid, st, BPF_NOEXIST))
			return NULL;
		st = bpf_map_lookup_elem(&threads, &tid);
		if (!st)
			return NULL;
	}
	st->exited = 0;
	st->fresh = 1;
	st->pslot = proc_slot(tgid);
	return st;
}

static long rec_one(__u32 i, struct rwalk *w)
{
	return rec_step(i, w, true);
}

static long rec_one_inline(__u32 i, struct rwalk *w)
{
	return rec_step(i, w, false);
}

/*
 * Whole calls only, all in the tracepoint's arguments, of a thread never
 * followed, with maybe a bottom charge first, for no frame of it.
 */
static long rec_calls(__u32 i, struct rwalk *w)
{
	struct xprobes_urec r = w->buf[i & (REC_CHUNK - 1)];

	if (!XPROBES_UREC_IS_BOTTOM(r.what))
		rec_call(w, r.time, r.what);
	return 0;
}

/*
 * A thread never followed (maybe_followed()) is fresh if it has an entry at
 * all, and whole calls need nothing of its entry, nor a bottom charge
 * (first if at all): a short batch of them (the tracepoint's arguments hold
 * them all) skips the lookup.
 * --children wants the entry's report slot for every call.
 */
static __always_inline bool inline_calls(struct bpf_raw_tracepoint_args *ctx, __u32 n)
{
	return n <= XPROBES_UREC_INLINE &&
	       (n < 1 || XPROBES_UREC_IS_CALL(ctx->args[5]) || XPROBES_UREC_IS_BOTTOM(ctx->args[5])) &&
	       (n < 2 || XPROBES_UREC_IS_CALL(ctx->args[7])) &&
	       (n < 3 || XPROBES_UREC_IS_CALL(ctx->args[9])) &&
	       (n < 4 || XPROBES_UREC_IS_CALL(ctx->args[11]));
}

SEC("raw_tp/xprobes_urecs")
int fn_records(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 tid = (__u32)ctx->args[0], n = (__u32)ctx->args[2], tgid = (__u32)ctx->args[3];
	struct rwalk w;		/* no initializer: clearing buf costs more than its use */
	struct trace_rec_counts *rc;
	__u32 zero = 0;

	if (!ours(tgid))
		return 0;		/* another traced process's */
	w.recs = (const void *)ctx->args[1];
	w.n = n;
	w.tid = tid;
	w.hi = 0;
	w.entries = w.returns = w.calls = 0;
	/* the first records, in the tracepoint's arguments */
	w.buf[0].time = ctx->args[4];
	w.buf[0].what = ctx->args[5];
	w.buf[1].time = ctx->args[6];
	w.buf[1].what = ctx->args[7];
	w.buf[2].time = ctx->args[8];
	w.buf[2].what = ctx->args[9];
	w.buf[3].time = ctx->args[10];
	w.buf[3].what = ctx->args[11];
	if (!children && !maybe_followed(tid) && inline_calls(ctx, n)) {
		w.st = NULL;
		bpf_loop(n, rec_calls, &w, 0);
	} else {
		w.st = rec_thread(tid, tgid);
		if (!w.st) {
			count_n(CNT_REC_NO_THREAD, n);
			return 0;
		}
		w.lo = w.st->running && !w.st->fresh ? w.st->last_ts : 0;
		w.low = w.st->fresh ? 0 : w.st->depth;
		/*
		 * Two calls the compiler must not merge into one of a chosen
		 * callback: the verifier inlines bpf_loop() only where the
		 * callback is one constant (else the helper, a retpoline a
		 * record).
		 */
		if (n <= XPROBES_UREC_INLINE) {
			bpf_loop(n, rec_one_inline, &w, 0);
			asm volatile("" ::: "memory");
		} else {
			bpf_loop(n, rec_one, &w, 0);
		}
		rec_settle(&w);
	}
	rc = bpf_map_lookup_elem(&rec_counts, &zero);
	if (rc) {	/* no branch on a count: the verifier would track each value */
		rc->batches++;
		rc->records += n;
		rc->calls += w.calls;
		rc->entries += w.entries;
		rc->returns += w.returns;
	}
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
