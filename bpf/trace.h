/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared between bpf/trace.bpf.c and xprobectl trace: per-function ON/OFF-CPU
 * attribution. Times are nanoseconds of bpf_ktime_get_ns().
 */
#ifndef XPROBES_TRACE_H
#define XPROBES_TRACE_H

#define TRACE_MAX_DEPTH		32	/* shadow stack frames per thread (power of 2) */
#define TRACE_MAX_FUNCS		4096	/* traced functions per session */
#define TRACE_HIST		40	/* log2 buckets: [2^i, 2^(i+1)) ns, last is open */
#define TRACE_MAX_THREADS	4096
#define TRACE_FOLD_DEPTH	16	/* outermost frames kept in folded stacks */

/* Why a thread was off-CPU. */
enum trace_cause {
	CAUSE_RUNQ,	/* preempted while runnable: waiting for a CPU */
	CAUSE_LOCK,	/* futex */
	CAUSE_IO,	/* block I/O (iowait) */
	CAUSE_NET,	/* socket, poll, epoll, select */
	CAUSE_SLEEP,	/* nanosleep, timers */
	CAUSE_OTHER,
	NR_CAUSES,
	CAUSE_PENDING = NR_CAUSES,	/* decided when the thread comes back */
};

/* xprobes hooks a session asks for; the value of the hooks map, by hook id. */
enum trace_hook_kind {
	HOOK_SWITCH_OUT = 1,	/* switch_mm_irqs_off: the traced thread leaves */
	HOOK_SWITCH_IN = 2,	/* finish_task_switch: a thread starts on our CR3 */
	HOOK_EXIT = 3,		/* do_exit: a traced thread ends */
};

/* One call on a thread's shadow stack of traced functions. */
struct frame {
	__u64 entry_ts;
	__u64 entry_sp;			/* sp at the first instruction: points at the return address */
	__u64 on_at, off_at[NR_CAUSES];	/* thread clocks at entry */
	__u64 child_wall, child_on, child_off[NR_CAUSES];
	__u32 func;
	__u32 pad;
};

/* A traced thread: its clocks and its shadow stack (the threads map). */
struct thread_state {
	__u64 last_ts;			/* last switch-in or switch-out */
	__u64 last_ev;			/* time charged to folded stacks up to here */
	__u64 on_acc, off_acc[NR_CAUSES];
	__u32 depth;
	__u8 running;
	__u8 out_cause;			/* set at switch-out, CAUSE_PENDING: classify at switch-in */
	__u8 exited;			/* the thread is gone; userspace deletes the entry */
	__u8 fresh;			/* made for a thread first seen in its records
					 * (fn_records): its first record starts it */
	__u32 seq;			/* bumped by every scheduler event: see read_clocks() */
	/*
	 * Time charged to the current stack by scheduler events, not yet in the
	 * fold map (index: 0 on-CPU, 1 + cause off-CPU); see charge_fold().
	 */
	__u64 pend[1 + NR_CAUSES];
	struct frame frames[TRACE_MAX_DEPTH];
};

/* Per function, per CPU (userspace sums the CPUs). */
struct func_stats {
	__u64 calls;
	__u64 wall;			/* inclusive */
	__u64 on_incl, on_excl;
	__u64 off_incl[NR_CAUSES], off_excl[NR_CAUSES];
	__u32 hist_wall[TRACE_HIST];	/* per call, inclusive */
	__u32 hist_on[TRACE_HIST];
	__u32 hist_off[NR_CAUSES][TRACE_HIST];
};

/* Per (function, thread) when per-thread output is asked for. */
struct thread_func_key {
	__u32 func;
	__u32 tid;
};

struct thread_func_stats {
	__u64 calls;
	__u64 wall;
	__u64 on_incl;
	__u64 off_incl[NR_CAUSES];
};

/* Folded stacks: time per (stack of traced functions, on-CPU or a cause). */
struct fold_key {
	__u32 funcs[TRACE_FOLD_DEPTH];	/* outermost first */
	__u32 depth;
	__u32 kind;			/* 0: on-CPU, 1 + cause: off-CPU */
};

/* Session counters (array map, one slot each). */
enum trace_counter {
	CNT_ENTRIES,		/* uprobe hits */
	CNT_RETURNS,		/* uretprobe hits that closed a frame */
	CNT_UNMATCHED,		/* returns with no matching frame (started mid-call) */
	CNT_ABANDONED,		/* frames left by longjmp, exceptions, exits */
	CNT_DEPTH_OVERFLOW,	/* calls deeper than TRACE_MAX_DEPTH */
	CNT_SWITCH_OUT,
	CNT_SWITCH_IN,
	CNT_NO_THREAD,		/* thread table full */
	CNT_FIXUP,		/* a function entered while we thought the thread was off-CPU */
	CNT_EXITS,		/* traced threads that exited */
	CNT_REC_BATCHES,	/* records handed over (xprobes_urecs) */
	CNT_REC_RECORDS,	/* records in them */
	CNT_REC_NO_THREAD,	/* records of a thread userspace had not seen yet */
	CNT_REC_CALLS,		/* records that were a whole call (XPROBES_F_CALLS) */
	NR_COUNTERS,
};

#endif
