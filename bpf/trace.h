/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared between bpf/trace.bpf.c and xprobectl trace: per-function ON/OFF-CPU
 * attribution. Times are nanoseconds of bpf_ktime_get_ns().
 */
#ifndef XPROBES_TRACE_H
#define XPROBES_TRACE_H

#define TRACE_MAX_DEPTH		32	/* shadow stack frames per thread (power of 2) */
#define TRACE_MAX_FUNCS		16384	/* traced functions per session: records carry 14 bits */
#define TRACE_STAT_SHARDS	8	/* at most: struct func_stats per function (power of 2) */
#define TRACE_HIST		40	/* log2 buckets: [2^i, 2^(i+1)) ns, last is open */
#define TRACE_MAX_THREADS	4096
#define TRACE_FOLD_DEPTH	16	/* outermost frames kept in folded stacks */
#define TRACE_FOLDS		16384	/* --folded, --pprof: distinct stacks and causes */
#define TRACE_TSTATS		16384	/* -T: distinct (thread, function) */
#define TRACE_WPEND		4	/* waits with wakers pending a fold (-W --folded) */
#define TRACE_KLOCKS		64	/* kernel lock functions told apart (klocks.c) */
#define TRACE_KSTACK		12	/* kernel frames looked at for them (fallback mode) */
#define TRACE_KSCAN		128	/* stack words scanned for them (views mode) */
#define TRACE_MAX_PROCS		1024	/* --children: processes followed (power of 2) */
#define TRACE_PROC_SLOTS	32	/* --children: processes reported one by one;
					 * the last slot takes every later one */

/* Why a thread was off-CPU. */
enum trace_cause {
	CAUSE_RUNQ,	/* preempted while runnable: waiting for a CPU */
	CAUSE_WAKEUP,	/* woken (or made runnable) after a wait, not yet running:
			 * the wait's tail, from its sched_info.run_delay */
	CAUSE_THROTTLED,	/* runnable, its CPU cgroup out of quota (cpu.max) */
	CAUSE_LOCK,	/* futex, flock; a kernel mutex, rwsem or semaphore */
	CAUSE_MEM,	/* stalled on memory (the kernel's PSI memstall): direct
			 * or memcg reclaim, compaction, memory.high throttling,
			 * refaults of pages evicted while in use */
	CAUSE_IO,	/* block I/O (iowait), major page faults included */
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
	HOOK_WAKE = 4,		/* try_to_wake_up: a thread of ours wakes a task (-W) */
	HOOK_FORK = 5,		/* wake_up_new_task: one of ours starts a task (--children) */
	HOOK_UPROBE = 6,	/* uprobe_notify_resume, uprobe_handle_trampoline: the module
				 * hands the thread's records over first; no program */
};

/*
 * --children: a process of the session (the target, or a process one of
 * them forked), in an open-addressed table in .bss that the fork path fills
 * with compare-and-swap (no map lock: the views hooks may run in NMI-like
 * context) and xprobectl reads in place. slot is its report slot, pstats'
 * row group.
 */
struct trace_proc {
	__u64 tgid;			/* 0: free (64 bits: BPF's compare-and-swap) */
	__u64 gen;			/* odd while the fields below are written; each
					 * fork that takes the entry adds 2 */
	__u32 parent;			/* the tgid that forked it */
	__u32 slot;			/* 1 + its order of arrival, at most TRACE_PROC_SLOTS - 1 */
	__u32 exited;			/* its last thread exited: not ours any more */
	__u32 pad;
	__u64 born_ns;			/* when it joined: bpf_ktime_get_ns() at its fork
					 * (CLOCK_MONOTONIC), or when --cgroup found it */
};

/*
 * Who woke a thread (-W). A waker slot's key packs the function the thread
 * waited in (the top of its shadow stack), the kind of waker, the waker's
 * top traced function and its tid; bit 63 is set (0 marks a free slot).
 */
enum trace_waker_kind {
	WAKER_OUTSIDE,		/* views mode: no thread of ours woke it (not seen) */
	WAKER_THREAD,		/* a thread of the traced process */
	WAKER_TASK,		/* fallback: the task current at the wakeup, not ours */
	WAKER_TIMER,		/* fallback: a timer expiring (hrtimer or timer list) */
	WAKER_HARDIRQ,		/* fallback: an interrupt handler */
	WAKER_SOFTIRQ,		/* fallback: a softirq (network receive, block completion) */
};

#define TRACE_WAKER_SLOTS	4096	/* distinct (function, waker) per CPU */
#define TRACE_WAKER_COMMS	1024	/* fallback -W: wakers outside the process named */
/*
 * Functions in 15 bits (13 until 2026-12-07, when trace took more than
 * 8191 functions): the tid in bits 0-21, the waker's function 22-36, the
 * kind 37-39, the function 40-54.
 */
#define WAKER_NO_FUNC		0x7fff	/* no traced function on the stack */
#define WKEY_FUNC_SHIFT		40
#define WKEY(func, kind, wfunc, wtid) \
	((1ULL << 63) | ((__u64)(func) << WKEY_FUNC_SHIFT) | ((__u64)(kind) << 37) | \
	 ((__u64)(wfunc) << 22) | ((__u64)(wtid) & 0x3fffff))
#define WKEY_FUNC(k)		((__u32)((k) >> WKEY_FUNC_SHIFT) & 0x7fff)
#define WKEY_KIND(k)		((__u32)((k) >> 37) & 7)
#define WKEY_WFUNC(k)		((__u32)((k) >> 22) & 0x7fff)
#define WKEY_WTID(k)		((__u32)(k) & 0x3fffff)
_Static_assert(TRACE_MAX_FUNCS <= WAKER_NO_FUNC, "a function's index would read as none");

/* Off-CPU time of one (function, waker), the wake-up wait excluded. */
struct waker_slot {
	__u64 key;
	__u64 ns;
	__u64 waits;
};

/* One call on a thread's shadow stack of traced functions. */
struct frame {
	__u64 entry_ts;
	__u64 entry_sp;			/* sp at the first instruction: points at the return address */
	__u64 on_at, off_at[NR_CAUSES];	/* thread clocks at entry */
	__u64 child_wall, child_on, child_off[NR_CAUSES];
	__u32 func;
	__u32 uprobe;			/* pushed by a uprobe (drop_abandoned(): TAIL_REC) */
};

/* A traced thread: its clocks and its shadow stack (the threads map). */
struct thread_state {
	__u64 last_ts;			/* last switch-in or switch-out */
	__u64 last_ev;			/* time charged to folded stacks up to here */
	__u64 on_acc, off_acc[NR_CAUSES];
	__u64 rd_out;			/* views: task's sched_info.run_delay at switch-out */
	__u64 woken_at;			/* fallback: first sched_wakeup since switch-out */
	__u64 waker;			/* -W: WKEY(0, ...) of the first wakeup since
					 * switch-out, 0 if none was seen */
	__u32 depth;
	/*
	 * The highest sp a frame of this session was pushed at: a return with
	 * no open frame above it is of a call made before the session saw the
	 * thread's calls (in flight when the probes went in): CNT_EARLY.
	 */
	__u64 hi_sp;
	__u8 running;
	__u8 out_cause;			/* set at switch-out, CAUSE_PENDING: classify at switch-in */
	__u8 exited;			/* the thread is gone; userspace deletes the entry */
	__u8 fresh;			/* made for a thread first seen in its records
					 * (fn_records): its first record starts it */
	__u32 seq;			/* bumped by every scheduler event: see read_clocks() */
	__u8 unwound;			/* an unwinder ran: rearm its uretprobes (uret_slots()) */
	__u64 unwind_sp;		/* ... entered with this sp: rearm only above it */
	/*
	 * Time charged to the current stack by scheduler events, not yet in the
	 * fold map (index: 0 on-CPU, 1 + cause off-CPU); see charge_fold().
	 */
	__u64 pend[1 + NR_CAUSES];
	/*
	 * With -W, the off-CPU part of those waits with their wakers instead
	 * (kind, waker key, ns), up to TRACE_WPEND of them between two events
	 * of the user side; more go to pend[] without their waker.
	 */
	struct {
		__u64 waker;
		__u64 ns;
		__u32 kind;
		__u32 pad;
	} wpend[TRACE_WPEND];
	__u32 nwpend;
	__u32 pslot;			/* --children: the report slot of its process */
	struct frame frames[TRACE_MAX_DEPTH];
};

/*
 * Per function, per shard (a few CPUs each: the stats map; userspace sums
 * the shards): what every call adds to. What only a call that waited adds
 * to is in struct func_off, one for all CPUs. Both were per-CPU slots
 * once, sized by the CPUs the machine may have: Redis's 3253 functions
 * took 441 MB on 64 CPUs until 2026-12-04 (the nine causes' histograms
 * were three quarters of it), 212 MB until 2026-12-07, 26 MB in eight
 * shards.
 */
struct func_stats {
	__u64 calls;
	__u64 wall;			/* inclusive */
	__u64 on_incl, on_excl;
	/*
	 * Calls all ON-CPU (a record's call, replayed in one batch): their
	 * time goes here once, not to wall and on_incl, and their bucket to
	 * hist_allon, not to both hist_wall and hist_on; fewer writes on the
	 * path of most calls. xprobectl adds them to those (collect()).
	 */
	__u64 allon;
	/*
	 * Calls and returns whose user hook's event the module gave up
	 * (xprobes_uhook_lost): not in calls, nor their time anywhere.
	 */
	__u64 calls_lost, returns_lost;
	/*
	 * 64-bit buckets (32-bit until 2026-12-04: they wrapped at 2^32 calls
	 * of a CPU; a carry map tried that day could not be read at one
	 * instant with the slots, nor inserted into from the NMI-like
	 * hand-over).
	 */
	__u64 hist_wall[TRACE_HIST];	/* per call, inclusive */
	__u64 hist_on[TRACE_HIST];
	__u64 hist_allon[TRACE_HIST];
};

/*
 * Per function, all CPUs: the OFF-CPU times by cause and their histograms,
 * added to atomically by a call that waited (a context switch or more:
 * far rarer than calls), in 64 bits.
 */
struct func_off {
	__u64 off_incl[NR_CAUSES], off_excl[NR_CAUSES];
	__u64 hist_off[NR_CAUSES][TRACE_HIST];
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
	__u64 waker;			/* -W, off-CPU: WKEY(0, ...) of who ended it, 0: none */
};

/*
 * The cookie of views mode's unwinder hooks (XPROBES_F_UNWINDER, tuhook.c):
 * their events count CNT_UNWINDS, they are no traced function's.
 */
#define TRACE_UNWINDER_COOKIE	0xffffffffu

/*
 * In a function's uprobe or event cookie: it has no return probe (the ELF
 * entry point, a Go program's functions), and its entry counts its call:
 * no frame, no times.
 */
#define TRACE_ENTRY_ONLY	0x80000000u
/*
 * A records hook's cookie is the function's index alone (records carry 14
 * bits of it, 13 until 2026-12-07): whether it has returns is in
 * trace.bpf.c's rec_entry_only[] (a bit of the cookie until 2026-12-07,
 * which kept trace to 4096 functions). A records entry without return
 * (XPROBES_UREC_NORET) of a function that has returns is a call whose
 * return the module gave up (no thunk for its return address), not a call.
 */

/* Session counters (array map, one slot each). */
enum trace_counter {
	CNT_ENTRIES,		/* uprobe hits */
	CNT_RETURNS,		/* uretprobe hits that closed a frame */
	CNT_UNMATCHED,		/* returns with no matching frame, not CNT_EARLY ones */
	CNT_ABANDONED,		/* frames left by longjmp, exceptions, exits */
	CNT_DEPTH_OVERFLOW,	/* calls deeper than TRACE_MAX_DEPTH */
	CNT_SWITCH_OUT,
	CNT_SWITCH_IN,
	CNT_NO_THREAD,		/* thread table full */
	CNT_FIXUP,		/* a function entered while we thought the thread was off-CPU */
	CNT_EXITS,		/* threads of the traced processes that exited */
	CNT_REC_BATCHES,	/* records handed over (xprobes_urecs) */
	CNT_REC_RECORDS,	/* records in them */
	CNT_REC_NO_THREAD,	/* records of a thread userspace had not seen yet */
	CNT_REC_CALLS,		/* records that were a whole call (XPROBES_F_CALLS) */
	CNT_WAKERS_LOST,	/* -W: waits not counted, the waker table was full */
	CNT_FORKS,		/* --children: processes followed */
	CNT_FORKS_LOST,		/* --children: forks not followed, the table was full */
	CNT_UNWINDS,		/* unwinders entered: return slots given back (unwind_start,
				 * or the module's unwinder hooks) */
	CNT_EARLY,		/* returns of calls in flight when the probes went in (no
				 * frame, and above every frame the thread pushed) */
	CNT_SUMMED,		/* whole calls the traced processes summed themselves
				 * (XPROBES_F_SUMS): xprobectl reads them from the module */
	CNT_CALLS_LOST,		/* user hooks' calls whose events the module gave up */
	CNT_RETURNS_LOST,	/* ... returns whose entry's event fired */
	NR_COUNTERS,
};

/*
 * Per CPU, what each hand-over of records counts (one lookup, where the
 * counters map would take five): xprobectl adds them to CNT_REC_BATCHES,
 * CNT_REC_RECORDS, CNT_REC_CALLS, CNT_ENTRIES and CNT_RETURNS, and a whole
 * call to the last two as well.
 */
struct trace_rec_counts {
	__u64 batches, records, calls, entries, returns;
};

#endif
