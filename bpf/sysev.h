/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Syscall entry and exit of one process, shared by xprobectl metrics and
 * latency (their BPF objects and their userspace).
 *
 * With xprobes, two hooks in the process's kernel view: x64_sys_call (every
 * syscall's entry: the user registers in rdi, the number in esi) and its
 * return hook (XPROBES_F_RETURN: on the call to syscall_exit_to_user_mode
 * that follows it in do_syscall_64, rdi the user registers whose ax holds
 * the result). Only the traced process runs them, as jumps. Without the
 * module (fallback mode): the raw_syscalls tracepoints with a PID test, which
 * every process on the machine pays for.
 */
#ifndef XPROBES_SYSEV_H
#define XPROBES_SYSEV_H

#define SYSEV_SLOTS	8192	/* per-thread entry records, by tid (power of 2) */
#define SYSEV_NR_MAX	512	/* syscall numbers kept apart; higher ones are not tracked */

/* The hooks map's values: which of the two hooks an xprobes hook id is. */
enum sysev_hook_kind {
	SYSEV_ENTER = 1,
	SYSEV_EXIT = 2,
};

/*
 * A thread's syscall in flight, in an array indexed by tid: lookups take no
 * lock (hook programs run in the int3 handler's NMI-like context). Two live
 * threads of one process whose tids share the low bits overwrite each
 * other's record; the tid tag makes the loser's exit be ignored.
 */
struct sysev_slot {
	__u64 ts;		/* entry time, bpf_ktime_get_ns() */
	__u64 arg0;		/* the first argument (fd, for the metrics) */
	__u32 tid;		/* owner of the record */
	__u32 nr;		/* syscall number */
	__u8 busy;		/* entered, not yet returned */
	__u8 cls;		/* the user's classification of nr, made at entry */
	__u8 last_dir;		/* metrics: direction of the thread's last transfer */
	__u8 pad;
	__s32 last_fd;		/* metrics: and its fd */
};

/*
 * A cgroup target (--cgroup), for the fallback programs' test: the cgroup
 * itself is in the one-element CGROUP_ARRAY sysev_cgroup (a directory fd
 * given by xprobectl), which bpf_current_task_under_cgroup() tests against
 * the current task's cgroup and its ancestors, whatever the cgroup
 * namespace. cgroup 0: a PID target. present 0: the cgroup is gone for now
 * (a stopped unit): nothing is counted until xprobectl puts the new one in.
 */
struct sysev_target {
	__u32 cgroup;
	__u32 present;
};

#endif
