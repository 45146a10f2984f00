/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xp_modfn's own tracepoint, xp_modfn:xp_modfn_read: each read of
 * /proc/xp_modfn fires it once, with the reader's tgid and the module's
 * count of calls. A tracepoint a module defines, whose only call site is
 * in the module's own text: what selftest 55 hooks in one process's view.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM xp_modfn

#if !defined(_XP_MODFN_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _XP_MODFN_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(xp_modfn_read,
	TP_PROTO(int tgid, long calls),
	TP_ARGS(tgid, calls),
	TP_STRUCT__entry(
		__field(int, tgid)
		__field(long, calls)
	),
	TP_fast_assign(
		__entry->tgid = tgid;
		__entry->calls = calls;
	),
	TP_printk("tgid=%d calls=%ld", __entry->tgid, __entry->calls)
);

#endif

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE xp_modfn_trace
#include <trace/define_trace.h>
