/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * xprobes generic netlink API. Shared by the module and xprobectl, which
 * talk only when both were built from the same version of this file and of
 * the module's trace.h (XPROBES_A_ABI). docs/netlink.md describes every command and attribute.
 */
#ifndef _UAPI_XPROBES_H
#define _UAPI_XPROBES_H

#ifndef __VMLINUX_H__		/* BPF programs have the types from vmlinux.h */
#include <linux/types.h>
#endif

#define XPROBES_GENL_NAME	"xprobes"
#define XPROBES_GENL_VERSION	1
#define XPROBES_MCGRP_EVENTS	"events"

/* Longest symbol name accepted (KSYM_NAME_LEN in the kernel). */
#define XPROBES_SYM_MAX		512
/* Largest peek, in bytes. */
#define XPROBES_PEEK_MAX	4096

enum xprobes_cmd {
	XPROBES_CMD_UNSPEC,
	XPROBES_CMD_STATUS,	/* do: module status */
	XPROBES_CMD_VIEW_NEW,	/* do: PID [FLAGS] -> view */
	XPROBES_CMD_VIEW_DEL,	/* do: PID */
	XPROBES_CMD_VIEW_GET,	/* dump: one message per view; do: PID -> the view it runs on */
	XPROBES_CMD_HOOK_ADD,	/* do: PID SYMBOL [OFFSET] [COOKIE] [FLAGS] -> HOOK_ID ADDR */
	XPROBES_CMD_HOOK_DEL,	/* do: HOOK_ID */
	XPROBES_CMD_HOOK_GET,	/* dump: one message per hook */
	XPROBES_CMD_PEEK,	/* do: PID (ADDR | SYMBOL [OFFSET]) [LEN] -> BYTES */
	XPROBES_CMD_VIEW_ENDED,	/* multicast on "events": PID REASON */
	XPROBES_CMD_AUDIT,	/* do: compare every copy with the shared text now -> MISMATCH */
	XPROBES_CMD_WALK,	/* dump: PID ADDR [COUNT] -> page-table entries per 4 KiB page */
	XPROBES_CMD_TABLES,	/* do: check the page-table invariants of every view now
				 * -> VIOLATIONS VIOLATIONS_TOTAL NR_VIEWS NR_REGIONS
				 *    NR_PROCS [REASON: the first violation] */
	XPROBES_CMD_HOOK_PROG,	/* do: HOOK_ID [PROG_FD]: run that BPF raw tracepoint
				 * program on every hit of the hook, directly (the
				 * tracepoint still fires); without PROG_FD, stop */
	XPROBES_CMD_UHOOK_ADD,	/* do: PID ADDR SIZE [FLAGS: F_EVENTS] [COOKIE]:
				 * a jump at the user function [ADDR, ADDR + SIZE)
				 * of PID (which has a view); with F_EVENTS each
				 * call fires xprobes_uhook
				 * -> HOOK_ID ADDR (the site) XOL (its trampoline)
				 *    COVER NR_INSNS */
	XPROBES_CMD_UHOOK_DEL,	/* do: HOOK_ID: the function's own bytes back */
	XPROBES_CMD_UHOOK_GET,	/* dump [PID]: one message per user hook */
	XPROBES_CMD_UHOOKS_GONE,	/* multicast on "events": PID REASON
					 * [FLAGS: XPROBES_GONE_*]: the module
					 * took every user hook of the process
					 * out (it installs a seccomp filter, or
					 * turns on syscall user dispatch):
					 * trace goes on with uprobes */
	XPROBES_CMD_HOOK_ENDED,	/* multicast on "events": PID HOOK_ID SYMBOL
				 * REASON: the kernel took a hook away (its
				 * module was unloaded) */
	XPROBES_CMD_UREC_SUMS,	/* do: PID [COOKIE]: the calls PID's process summed
				 * itself (XPROBES_F_SUMS), for the hook cookies
				 * from COOKIE (default 0) on, as many as fit
				 * -> USUMS (struct xprobes_usum[], functions
				 *    with calls only) COOKIE (where to go on;
				 *    absent: done) */
	__XPROBES_CMD_MAX,
};
#define XPROBES_CMD_MAX (__XPROBES_CMD_MAX - 1)

enum xprobes_attr {
	XPROBES_A_UNSPEC,
	XPROBES_A_PAD,
	XPROBES_A_VERSION,	/* string: module version */
	XPROBES_A_MODE,		/* u32: enum xprobes_mode */
	XPROBES_A_NR_VIEWS,	/* u32 */
	XPROBES_A_NR_HOOKS,	/* u32 */
	XPROBES_A_MEM_BYTES,	/* u64: memory the module holds for views */
	XPROBES_A_PID,		/* u32: a thread-group id in the caller's pid namespace */
	XPROBES_A_FLAGS,	/* u32: XPROBES_F_* */
	XPROBES_A_SYMBOL,	/* string: kernel function name */
	XPROBES_A_OFFSET,	/* u32: byte offset into SYMBOL */
	XPROBES_A_ADDR,		/* u64: kernel virtual address */
	XPROBES_A_LEN,		/* u32: number of bytes */
	XPROBES_A_BYTES,	/* binary */
	XPROBES_A_HOOK_ID,	/* u32 */
	XPROBES_A_COOKIE,	/* u64: opaque, passed to BPF with every hit */
	XPROBES_A_HITS,		/* u64 */
	XPROBES_A_DROPPED,	/* u64: traps in the view not taken by the view's tasks */
	XPROBES_A_NR_PAGES,	/* u32: private text pages */
	XPROBES_A_NR_TABLES,	/* u32: private page-table pages */
	XPROBES_A_MISMATCH,	/* u64: audit mismatches seen so far */
	XPROBES_A_REASON,	/* string: why a view ended or why the mode is off */
	XPROBES_A_AUDITS,	/* u64: audit passes run so far */
	XPROBES_A_COUNT,	/* u32: number of 4 KiB pages */
	XPROBES_A_PHYS,		/* u64: physical address a walk ends at */
	XPROBES_A_LEVEL,	/* u32: leaf level of a walk: 1 = PTE, 2 = PMD, 3 = PUD */
	XPROBES_A_PGD_E,	/* u64: raw page-table entries met by a walk */
	XPROBES_A_P4D_E,
	XPROBES_A_PUD_E,
	XPROBES_A_PMD_E,
	XPROBES_A_PTE_E,
	XPROBES_A_XOL,		/* u64: address of a view's out-of-line area, 0 if none */
	XPROBES_A_NR_PROCS,	/* u32: address spaces running on a view (process, children, execs) */
	XPROBES_A_CONFLICTS,	/* u64: hooks displaced by kernel text patching so far */
	XPROBES_A_MIRRORED,	/* u64: kernel text writes applied to copies so far */
	XPROBES_A_BACKUPS_FIXED,	/* u64: kprobe optimizer backups read through a view, corrected */
	XPROBES_A_KPROBES_REFUSED,	/* u64: kprobe registrations refused on a traced CR3 */
	XPROBES_A_VIOLATIONS,		/* u64: page-table invariant violations found now */
	XPROBES_A_VIOLATIONS_TOTAL,	/* u64: ... by every check since the module loaded */
	XPROBES_A_NR_REGIONS,		/* u32: hooked 2 MiB regions, summed over views */
	XPROBES_A_TABLE_CHECKS,		/* u64: page-table checks run since the module loaded */
	XPROBES_A_NESTED,		/* u64: hits of a hook while this CPU was already
					 * dispatching one (dropped, not fired) */
	XPROBES_A_COVER,		/* u32: bytes of text a hook displaces */
	XPROBES_A_NR_INSNS,		/* u32: whole instructions among them */
	XPROBES_A_PROG_FD,		/* s32: a BPF raw tracepoint program (HOOK_PROG) */
	XPROBES_A_PROG_ID,		/* u32: the BPF program a hook runs directly, 0 if none */
	XPROBES_A_SIZE,			/* u32: bytes of a user function (UHOOK_ADD) */
	XPROBES_A_TRAPPED,		/* u64: entries of a user hook through its int3 */
	XPROBES_A_RET_MISSED,		/* u64: calls of a user hook whose return fires nothing */
	XPROBES_A_RET_HITS,		/* u64: return events of a user hook */
	XPROBES_A_UH_BRANCHES,		/* binary: struct xprobes_uh_branch[] (UHOOK_ADD) */
	XPROBES_A_NR_SITES,		/* u32: a tracepoint hook's call sites in the core
					 * kernel text (HOOK_GET) */
	XPROBES_A_TP_YIELDS,		/* u64: tracepoint hooks' copies given the shared
					 * bytes back because another probe came */
	XPROBES_A_TP_SETTLES,		/* u64: ... and taken back when it went */
	XPROBES_A_SYS_THREADS,		/* u32: threads flagged to reach the raw_syscalls
					 * tracepoints now (SYSCALL_WORK_SYSCALL_TRACEPOINT) */
	XPROBES_A_THREADS,		/* u32: ... of all the threads there are */
	XPROBES_A_MOD_SYNCS,		/* u64: times a view's module-space tables followed
					 * the kernel's at its own change */
	XPROBES_A_MOD_LATE,		/* u64: ... only when the sweeper looked (missed) */
	XPROBES_A_MOD_ENDED,		/* u64: hooks taken out with their module */
	XPROBES_A_MOD_OFF,		/* string: why module text cannot be hooked */
	XPROBES_A_USUMS,		/* binary: struct xprobes_usum[] (UREC_SUMS) */
	XPROBES_A_CALLS_MISSED,		/* u64: calls of a user hook whose entry fires nothing */
	XPROBES_A_UH_BRANCH_SPAN,	/* u32: how far past the function's start
					 * the branches were listed (UHOOK_ADD) */
	XPROBES_A_FORKS_FOLLOWED,	/* u64: children of views' members made members */
	XPROBES_A_EXECS_FOLLOWED,	/* u64: members' execs whose new mm joined */
	XPROBES_A_FOLLOWS_FAILED,	/* u64: forks and execs a view failed to follow
					 * (no member at hand: they ran untraced) */
	XPROBES_A_MOD_UNFINISHED,	/* u64: times the sweeper found a change of module
					 * space the kernel was still finishing */
	__XPROBES_A_MAX,
};
#define XPROBES_A_MAX (__XPROBES_A_MAX - 1)

/*
 * u32 in every STATUS reply: which version of this file and of the module's
 * tracepoint arguments (trace.h, which xprobectl's BPF programs read) the
 * module was built from (XPROBES_ABI, the first 32 bits of the SHA-256 of
 * the two, which module/Kbuild and the Makefile compute). Its number lies
 * outside the enum and never changes, nor does XPROBES_CMD_STATUS's, so that
 * any xprobectl finds it in any module's reply (one built before it has
 * none) and refuses to talk to a module whose commands, structs and
 * tracepoints may mean something else.
 */
#define XPROBES_A_ABI		0x3ff0

enum xprobes_mode {
	XPROBES_MODE_VIEWS = 1,		/* per-process kernel views available */
	XPROBES_MODE_UNSUPPORTED = 2,	/* loaded, but views cannot work here (see REASON) */
};

/* XPROBES_A_FLAGS for VIEW_NEW and HOOK_ADD */
#define XPROBES_F_NO_FOLLOW_FORK	(1U << 0)	/* view: children of fork are not traced */
#define XPROBES_F_PERSIST		(1U << 1)	/* view: survives the creating socket */
#define XPROBES_F_ANY_CONTEXT		(1U << 2)	/* hook: fire the tracepoint in every
							 * context that traps on the view's CR3
							 * (kernel threads, interrupts), not only
							 * in the view's own tasks */
#define XPROBES_F_RETURN		(1U << 3)	/* hook: fire where SYMBOL returns to
							 * its caller; only x64_sys_call (every
							 * syscall's exit, rax = its result) */
#define XPROBES_F_TRAP			(1U << 4)	/* hook: always an int3, never
							 * turned into a call or jump hook;
							 * user hook: the uprobe's int3
							 * stays, no jump is written, no
							 * branches are needed (and in
							 * UHOOK_GET's flags: such a hook) */
#define XPROBES_F_USER_TABLES		(1U << 5)	/* walk: the PTI user-mode tables
							 * (what the CPU uses in user mode) */
#define XPROBES_F_EVENTS		(1U << 6)	/* user hook: every call enters the
							 * kernel (XPROBES_UHOOK_NR) and fires
							 * the xprobes_uhook tracepoint */
#define XPROBES_F_RETURNS		(1U << 7)	/* user hook with events: each return
							 * of the function fires
							 * xprobes_uhook_ret too */
#define XPROBES_F_RECORDS		(1U << 8)	/* user hook: each call (and with
							 * XPROBES_F_RETURNS, each return)
							 * appends a record in user memory,
							 * no kernel entry; hook on
							 * switch_mm_irqs_off,
							 * finish_task_switch, do_exit
							 * or try_to_wake_up: hand the
							 * view's records over there
							 * (xprobes_urecs) */
#define XPROBES_F_CALLS			(1U << 9)	/* hook with XPROBES_F_RECORDS: hand
							 * a call that enters and returns
							 * within one hand-over over as one
							 * record (XPROBES_UREC_CALL); the
							 * view's three such hooks agree */
#define XPROBES_F_UNWINDER		(1U << 10)	/* user hook with events, no
							 * returns: an unwinder's entry
							 * point (_Unwind_RaiseException,
							 * ...): before each of its calls
							 * runs, the return thunks on the
							 * thread's stack become their
							 * return addresses again, and
							 * those of frames it does not
							 * unwind are thunks again after */
#define XPROBES_F_SUMS			(1U << 11)	/* hook with XPROBES_F_CALLS: a call
							 * whose caller's entry is still
							 * in its CPU's buffer when it
							 * returns is summed by the process
							 * itself, per function
							 * (XPROBES_CMD_UREC_SUMS), and
							 * its callers' own time comes as
							 * XPROBES_UREC_CHARGE records;
							 * the view's hooks agree */
#define XPROBES_F_ALL			(XPROBES_F_NO_FOLLOW_FORK | XPROBES_F_PERSIST | \
					 XPROBES_F_ANY_CONTEXT | XPROBES_F_RETURN | \
					 XPROBES_F_TRAP | XPROBES_F_USER_TABLES | \
					 XPROBES_F_EVENTS | XPROBES_F_RETURNS | \
					 XPROBES_F_RECORDS | XPROBES_F_CALLS | \
					 XPROBES_F_UNWINDER | XPROBES_F_SUMS)

/*
 * XPROBES_A_FLAGS of UHOOKS_GONE: return probes must not be used for this
 * process any more. It blocks system calls made outside its own code
 * (syscall user dispatch), and this kernel's uretprobes return through a
 * system call from their trampoline (6.11 on): each would be a SIGSYS.
 */
#define XPROBES_GONE_NO_URETPROBES	(1U << 0)

/* XPROBES_A_FLAGS of a hook in HOOK_GET */
#define XPROBES_HOOK_BROKEN		(1U << 16)	/* kernel patching displaced it */
#define XPROBES_HOOK_CALL		(1U << 17)	/* taken through a jump in the copy
							 * that replaces one instruction */
#define XPROBES_HOOK_JUMP		(1U << 18)	/* taken through a jump in the copy
							 * that covers several instructions */
#define XPROBES_HOOK_PENDING		(1U << 19)	/* an int3 that becomes a jump once
							 * preempted tasks are out (soon) */
#define XPROBES_UHOOK_GONE		(1U << 20)	/* user hook: its address space
							 * exited or exec'd; nothing to restore */
#define XPROBES_UHOOK_EVENTS		(1U << 21)	/* user hook: fires events */
#define XPROBES_UHOOK_RETURNS		(1U << 23)	/* user hook: fires return events */
#define XPROBES_UHOOK_RECORDS		(1U << 24)	/* user hook: writes records */
#define XPROBES_HOOK_INTERNAL		(1U << 22)	/* kernel hook the module placed for
							 * its view's user-hook events, or
							 * (with XPROBES_HOOK_GUARD) ... */
#define XPROBES_HOOK_GUARD		(1U << 25)	/* ... to keep tasks without an mm
							 * off its view's page tables (on
							 * enter_lazy_tlb; its hits: tasks
							 * kept off, dropped: idle switches
							 * that stayed) */
#define XPROBES_HOOK_SIGRET		(1U << 26)	/* ... to move a sigreturn into a user
							 * hook's covered bytes to its
							 * trampoline (on fpu__restore_sig) */
#define XPROBES_HOOK_TP			(1U << 27)	/* a kernel tracepoint, on in this
							 * view only (SYMBOL
							 * "tracepoint:CATEGORY:NAME") */
#define XPROBES_HOOK_TP_GLOBAL		(1U << 28)	/* ... which another probe has on
							 * everywhere now: every process runs
							 * it, ours filters by view */
#define XPROBES_HOOK_TP_MODULES		(1U << 29)	/* ... which modules call too: in
							 * this view only from the core text
							 * unless it is on everywhere */
#define XPROBES_HOOK_ENDED		(1U << 30)	/* the kernel took it away (its module
							 * was unloaded): REASON says why; the
							 * view keeps the last 8 such rows */

/*
 * The system call a user hook's trampoline makes to fire its event. On
 * x86_64, 335-423 are never given out (the time64 calls of 32-bit ABIs that
 * 64-bit does not need; 335 and 336 went to uretprobe and uprobe): a kernel
 * answers ENOSYS, and only a traced process's view intercepts it.
 */
#define XPROBES_UHOOK_NR		420
#define XPROBES_UHOOK_RET_NR		421	/* the same, from a return thunk */
#define XPROBES_UREC_NR			422	/* a records hook's slow path */

/*
 * UHOOK_ADD's XPROBES_A_UH_BRANCHES, required: every direct branch (jmp,
 * jcc, call, loop, jrcxz) anywhere in the executable text of the function's
 * file that lands in its first XPROBES_UH_BRANCH_WINDOW bytes past its start,
 * found by disassembling that text (xprobectl does, with Zydis). The module
 * decodes only the function itself; a jump over several instructions is
 * refused where one of these lands between two of them. Empty when there are
 * none. @from is the branch's offset in the file (named in the refusal); @to
 * where it lands, in bytes from the function's start.
 */
struct xprobes_uh_branch {
	__u64 from;
	__u32 to;
	__u32 reserved;		/* 0 */
};
#define XPROBES_UH_BRANCH_WINDOW	32	/* ENDBR64 + the most a jump covers */
/*
 * UHOOK_ADD's XPROBES_A_UH_BRANCH_SPAN, optional: the list holds every
 * branch landing in the function's bytes 1 to SPAN - 1 only (1 <= SPAN <=
 * XPROBES_UH_BRANCH_WINDOW, which is what its absence means). A caller that
 * decoded the function's first instructions sends the bytes a jump would
 * cover (ENDBR64, then whole instructions to 5 bytes): the branches into
 * the rest of the window cannot matter, and finding them is most of what
 * listing costs (every region of the file the window's candidates fall in
 * disassembled). A jump whose cover reaches past SPAN is refused with
 * EMSGSIZE: the caller asks again with the whole window.
 */

/*
 * What the xprobes_uhook_lost tracepoint says was lost (args: hook id,
 * cookie, what): a call of a user hook with events whose entry event could
 * not fire, so neither will its return's; or a return that will fire no
 * event though its entry's did (the return slot could not take a thunk,
 * or the thunk's own event could not fire). Each is counted on the hook
 * too (UHOOK_GET: XPROBES_A_CALLS_MISSED, XPROBES_A_RET_MISSED), but
 * those counts go with the hook; a tracer counts the tracepoint.
 */
#define XPROBES_LOST_CALL		0
#define XPROBES_LOST_RETURN		1
#define XPROBES_UH_BRANCHES_MAX		256	/* entries in one request */

/*
 * A record of a user hook with XPROBES_F_RECORDS, as the xprobes_urecs
 * tracepoint hands it over (args: tid, the records, how many, tgid, then
 * the first XPROBES_UREC_INLINE records by value, time and what of each):
 * @time in bpf_ktime_get_ns() nanoseconds; @what the sp at the function's
 * entry (where its return address is) and what happened.
 */
struct xprobes_urec {
	__u64 time;
	__u64 what;
};
#define XPROBES_UREC_INLINE		4	/* records in the tracepoint's args */
/*
 * @what: the sp in bits 0-46 (a user stack is below 2^47 but where a
 * process asks for more with 5-level paging; one above reads wrong, in its
 * own figures), the hook's cookie in 47-60 (48-60 until 2026-12-07: 13
 * bits), then the flags.
 */
#define XPROBES_UREC_SP_BITS		47
#define XPROBES_UREC_COOKIE_MAX		0x3fff
#define XPROBES_UREC_SP(w)		((w) & ((1ULL << XPROBES_UREC_SP_BITS) - 1))
/* an entry's hook cookie */
#define XPROBES_UREC_COOKIE(w)		(((w) >> XPROBES_UREC_SP_BITS) & XPROBES_UREC_COOKIE_MAX)
#define XPROBES_UREC_NORET		(1ULL << 61)	/* an entry whose return writes nothing */
/* an entry whose return address was a thunk already: a tail call (never with NORET) */
#define XPROBES_UREC_TAIL		(1ULL << 62)
#define XPROBES_UREC_RET		(1ULL << 63)	/* a return, not an entry */

/*
 * With XPROBES_F_CALLS, a call whose entry and return are in one hand-over
 * comes as one record, in its entry's place (so before the records of the
 * calls it made):
 *   @what: XPROBES_UREC_CALL, the cookie (XPROBES_UREC_COOKIE) and the
 *          entry sp (XPROBES_UREC_SP), and XPROBES_UREC_TOP when its
 *          caller's entry is not folded into a record of its own (an
 *          entry record, or a call of an earlier hand-over);
 *   @time: its duration (XPROBES_UREC_WALL, under 2^38 ns: a longer call
 *          is not folded), the duration's log2 rounded down (0 for 0:
 *          XPROBES_UREC_LOG2, a histogram's bucket the consumer need not
 *          compute), without TOP the cookie of its caller, whose own record
 *          comes first (XPROBES_UREC_CALLER), and XPROBES_UREC_CALL_TAIL for
 *          a tail call (its caller's frame is at the same sp).
 * Its time less its callees' is the caller's own. Bits 44-47 of @time are
 * the module's.
 */
#define XPROBES_UREC_CALL		(XPROBES_UREC_RET | XPROBES_UREC_NORET)
#define XPROBES_UREC_TOP		XPROBES_UREC_TAIL
#define XPROBES_UREC_IS_CALL(w)		(((w) & XPROBES_UREC_CALL) == XPROBES_UREC_CALL)
#define XPROBES_UREC_WALL(t)		((t) & ((1ULL << 38) - 1))	/* ns */
#define XPROBES_UREC_LOG2(t)		(((t) >> 38) & 0x3f)
#define XPROBES_UREC_CALLER(t)		(((t) >> 48) & XPROBES_UREC_COOKIE_MAX)
#define XPROBES_UREC_CALL_TAIL		(1ULL << 62)	/* in @time (bit 61 until 2026-12-07) */

/*
 * With XPROBES_F_SUMS, an entry record whose callees the process summed
 * itself is followed by one more record:
 *   @what: XPROBES_UREC_CHARGE and the entry's sp (XPROBES_UREC_SP);
 *   @time: those callees' time in nanoseconds, which is not the entry's own
 *          (the consumer charges it to the frame the entry opened, as if
 *          they had returned).
 * A call summed by the process is in no record: its function's calls, time
 * (all ON-CPU), own time and histogram bucket are added to the sums
 * XPROBES_CMD_UREC_SUMS reads, and its time is its caller's callees' time.
 */
#define XPROBES_UREC_CHARGE		(XPROBES_UREC_RET | XPROBES_UREC_TAIL)
#define XPROBES_UREC_IS_CHARGE(w)	(((w) & (XPROBES_UREC_CALL | XPROBES_UREC_TAIL)) == \
					 XPROBES_UREC_CHARGE)

/*
 * A hand-over with XPROBES_F_SUMS may start with a bottom charge: calls the
 * process summed whose callers' entries are in no record of it (handed over
 * earlier, or of no traced function), all made at or below one sp; and a
 * return record may be followed by one: calls the process summed after
 * that return, at its sp:
 *   @what: XPROBES_UREC_CHARGE | XPROBES_UREC_BOTTOM and that sp (the
 *          first such call's, or the return's: XPROBES_UREC_SP);
 *   @time: their time in nanoseconds.
 * The consumer takes it as an entry at that sp would take the stack
 * (frames at or below it never returned: dropped) and charges the time to
 * the frame then on top, as its callees'.
 */
#define XPROBES_UREC_BOTTOM		(1ULL << 48)
#define XPROBES_UREC_IS_BOTTOM(w)	(XPROBES_UREC_IS_CHARGE(w) && ((w) & XPROBES_UREC_BOTTOM))

/* XPROBES_CMD_UREC_SUMS: one function's calls summed by the process. */
#define XPROBES_USUM_HIST		40	/* log2 buckets of ns, [2^i, 2^(i+1)), last open */
struct xprobes_usum {
	__u32 cookie;			/* the hook's, under XPROBES_USUM_FUNCS */
	__u32 reserved;
	__u64 calls;
	__u64 wall;			/* ns, all ON-CPU */
	__u64 own;			/* ns, less the callees' (a lie can make it wrap) */
	__u64 hist[XPROBES_USUM_HIST];	/* calls by log2 of wall */
};
#define XPROBES_USUM_FUNCS		4096	/* cookies a process sums */

#endif /* _UAPI_XPROBES_H */
