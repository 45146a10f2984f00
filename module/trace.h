/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints fired for every hit of a hook by the traced process: BPF attaches
 * to them as raw tracepoints (args: u32 id, u64 cookie, struct pt_regs *regs).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM xprobes

#if !defined(_XPROBES_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _XPROBES_TRACE_H

#include <linux/tracepoint.h>
#include <asm/ptrace.h>

struct xprobes_urec;

TRACE_EVENT(xprobes_hook,
	TP_PROTO(u32 id, u64 cookie, struct pt_regs *regs),
	TP_ARGS(id, cookie, regs),
	TP_STRUCT__entry(
		__field(u32, id)
		__field(u64, cookie)
		__field(unsigned long, ip)
	),
	TP_fast_assign(
		__entry->id = id;
		__entry->cookie = cookie;
		__entry->ip = regs->ip - 1;
	),
	TP_printk("id=%u cookie=%llu ip=%pS", __entry->id,
		  (unsigned long long)__entry->cookie, (void *)__entry->ip)
);

/*
 * Fired for every call of a user hook's function with events (uevent.c):
 * args u32 id, u64 cookie, struct pt_regs *regs, the process's registers
 * as the function's first instruction sees them (ip at the function, sp
 * at the return address), as a uprobe's program gets them.
 */
TRACE_EVENT(xprobes_uhook,
	TP_PROTO(u32 id, u64 cookie, struct pt_regs *regs),
	TP_ARGS(id, cookie, regs),
	TP_STRUCT__entry(
		__field(u32, id)
		__field(u64, cookie)
		__field(unsigned long, ip)
	),
	TP_fast_assign(
		__entry->id = id;
		__entry->cookie = cookie;
		__entry->ip = regs->ip;
	),
	TP_printk("id=%u cookie=%llu ip=%#lx", __entry->id,
		  (unsigned long long)__entry->cookie, __entry->ip)
);

/*
 * Fired for every return of a call that fired xprobes_uhook, when the hook
 * has returns (uevent.c): regs as the caller sees them after the return (ip
 * the return address, sp above it, ax the result), as a uretprobe's
 * program gets them.
 */
TRACE_EVENT(xprobes_uhook_ret,
	TP_PROTO(u32 id, u64 cookie, struct pt_regs *regs),
	TP_ARGS(id, cookie, regs),
	TP_STRUCT__entry(
		__field(u32, id)
		__field(u64, cookie)
		__field(unsigned long, ip)
		__field(unsigned long, ax)
	),
	TP_fast_assign(
		__entry->id = id;
		__entry->cookie = cookie;
		__entry->ip = regs->ip;
		__entry->ax = regs->ax;
	),
	TP_printk("id=%u cookie=%llu ip=%#lx ax=%#lx", __entry->id,
		  (unsigned long long)__entry->cookie, __entry->ip, __entry->ax)
);

/*
 * An event of user hook @id that will not fire (uevent.c, ulate.c): @what
 * XPROBES_LOST_CALL, a call of which neither the entry nor the return
 * fires, or XPROBES_LOST_RETURN, a return whose entry fired. Fired in the
 * thread that made the call, at the moment the event is given up.
 */
TRACE_EVENT(xprobes_uhook_lost,
	TP_PROTO(u32 id, u64 cookie, u32 what),
	TP_ARGS(id, cookie, what),
	TP_STRUCT__entry(
		__field(u32, id)
		__field(u64, cookie)
		__field(u32, what)
	),
	TP_fast_assign(
		__entry->id = id;
		__entry->cookie = cookie;
		__entry->what = what;
	),
	TP_printk("id=%u cookie=%llu %s", __entry->id, (unsigned long long)__entry->cookie,
		  __entry->what ? "return" : "call")
);

/*
 * The records of user hooks with XPROBES_F_RECORDS that thread @tid (of
 * process @tgid) wrote since it came on this CPU (urec.c): handed over when
 * it leaves or exits, or when its CPU's buffer is full; in order, times in
 * bpf_ktime_get_ns() nanoseconds. @recs is kernel memory, valid during the
 * event only.
 *
 * The first XPROBES_UREC_INLINE of them come by value too (@i: time, what,
 * time, what...; zeros past @n). A BPF program reads its arguments with
 * plain loads, where @recs takes bpf_probe_read_kernel(): about 150
 * instructions, more than replaying a short batch costs, and most batches
 * are short (a thread that blocks after one request).
 */
TRACE_EVENT(xprobes_urecs,
	TP_PROTO(u32 tid, const struct xprobes_urec *recs, u32 n, u32 tgid,
		 u64 i0, u64 i1, u64 i2, u64 i3, u64 i4, u64 i5, u64 i6, u64 i7),
	TP_ARGS(tid, recs, n, tgid, i0, i1, i2, i3, i4, i5, i6, i7),
	TP_STRUCT__entry(
		__field(u32, tid)
		__field(u32, n)
		__field(u32, tgid)
	),
	TP_fast_assign(
		__entry->tid = tid;
		__entry->n = n;
		__entry->tgid = tgid;
	),
	TP_printk("tgid=%u tid=%u n=%u", __entry->tgid, __entry->tid, __entry->n)
);

#endif /* _XPROBES_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
