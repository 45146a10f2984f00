/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The BPF half of sysev.h: the programs that see one process's syscall
 * entries and exits, through xprobes hooks or the fallback tracepoints. The
 * including object defines what an entry and an exit mean to it:
 *
 *   static __always_inline __u8 sysev_classify(__u32 nr, __u64 arg0);
 *	0: not interesting (no record kept, the exit is ignored); else a class
 *   static __always_inline void sysev_done(void *ctx, struct sysev_slot *s, long ret, __u64 now);
 *	the call in s returned ret (ctx: the program's, for helpers that want it)
 */
#ifndef XPROBES_SYSEV_BPF_H
#define XPROBES_SYSEV_BPF_H

#include "sysev.h"
#include "xprobes.h"	/* module/uapi: the user-hook event numbers */

const volatile __s32 target_tgid;	/* the fallback programs' PID test */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SYSEV_SLOTS);
	__type(key, __u32);
	__type(value, struct sysev_slot);
} sysev_slots SEC(".maps");

/* xprobes hook id -> enum sysev_hook_kind, filled by xprobectl. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);	/* --cgroup: two per view */
	__type(key, __u32);
	__type(value, __u32);
} sysev_hooks SEC(".maps");

/* One element each: the cgroup target, when there is one (sysev.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sysev_target);
} sysev_target SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} sysev_cgroup SEC(".maps");

static __always_inline __u8 sysev_classify(__u32 nr, __u64 arg0);
static __always_inline void sysev_done(void *ctx, struct sysev_slot *s, long ret, __u64 now);

static __always_inline struct sysev_slot *sysev_slot(__u32 tid)
{
	__u32 i = tid & (SYSEV_SLOTS - 1);

	return bpf_map_lookup_elem(&sysev_slots, &i);
}

static __always_inline void sysev_enter(__u32 nr, __u64 arg0)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct sysev_slot *s = sysev_slot(tid);
	__u8 cls;

	if (!s)
		return;
	/*
	 * The system calls of xprobes user hooks' events (trace's own probes
	 * on the process's functions) are the tracer's, not the process's.
	 */
	cls = nr == XPROBES_UHOOK_NR || nr == XPROBES_UHOOK_RET_NR ? 0 : sysev_classify(nr, arg0);
	if (!cls) {
		if (s->tid == tid)
			s->busy = 0;
		return;
	}
	if (s->tid != tid) {		/* a new thread in this slot */
		s->tid = tid;
		s->last_dir = 0;
		s->last_fd = -1;
	}
	s->nr = nr;
	s->arg0 = arg0;
	s->cls = cls;
	s->ts = bpf_ktime_get_ns();
	s->busy = 1;
}

static __always_inline void sysev_exit(void *ctx, long ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct sysev_slot *s = sysev_slot(tid);

	if (!s || s->tid != tid || !s->busy)
		return;
	s->busy = 0;
	sysev_done(ctx, s, ret, bpf_ktime_get_ns());
}

/*
 * Views mode through the xprobes_hook tracepoint (a module that cannot give
 * a hook its own program): the two hooks in the process's kernel view.
 */
SEC("raw_tp/xprobes_hook")
int sysev_on_hook(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 id = (__u32)ctx->args[0], *kind;
	struct pt_regs *regs = (struct pt_regs *)ctx->args[2];
	struct pt_regs *uregs;

	kind = bpf_map_lookup_elem(&sysev_hooks, &id);
	if (!kind)
		return 0;
	if (*kind == SYSEV_ENTER) {
		/* x64_sys_call(const struct pt_regs *regs, unsigned int nr) */
		uregs = (struct pt_regs *)PT_REGS_PARM1_CORE(regs);
		sysev_enter((__u32)PT_REGS_PARM2_CORE(regs), BPF_CORE_READ(uregs, di));
	} else if (*kind == SYSEV_EXIT) {
		/*
		 * The return hook sits on syscall_exit_to_user_mode(regs):
		 * the result is in the syscall's pt_regs on every path.
		 */
		uregs = (struct pt_regs *)PT_REGS_PARM1_CORE(regs);
		sysev_exit(ctx, (long)BPF_CORE_READ(uregs, ax));
	}
	return 0;
}

/*
 * Views mode, one program per hook, run by the hook itself with its
 * registers as the context (a kprobe program, module/hooks/prog.c): no lookup by
 * hook id and no helper call to read a register, only one to read the
 * syscall's pt_regs.
 */
SEC("kprobe")
int sysev_on_enter(struct pt_regs *ctx)
{
	/* x64_sys_call(const struct pt_regs *regs, unsigned int nr) */
	struct pt_regs *uregs = (struct pt_regs *)PT_REGS_PARM1(ctx);

	sysev_enter((__u32)PT_REGS_PARM2(ctx), BPF_CORE_READ(uregs, di));
	return 0;
}

SEC("kprobe")
int sysev_on_exit(struct pt_regs *ctx)
{
	/* syscall_exit_to_user_mode(regs), as in sysev_on_hook */
	struct pt_regs *uregs = (struct pt_regs *)PT_REGS_PARM1(ctx);

	sysev_exit(ctx, (long)BPF_CORE_READ(uregs, ax));
	return 0;
}

/* Views mode on the raw_syscalls tracepoint hooks: the view is the test. */
SEC("tp_btf/sys_enter")
int BPF_PROG(sysev_tp_enter, struct pt_regs *regs, long id)
{
	sysev_enter((__u32)id, BPF_CORE_READ(regs, di));
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sysev_tp_exit, struct pt_regs *regs, long ret)
{
	sysev_exit(ctx, ret);
	return 0;
}

/* The target or one of its children (a server's forked workers). */
static __always_inline bool sysev_is_target(void)
{
	struct task_struct *t = bpf_get_current_task_btf();

	/* target_tgid 0 would take init, a child of the idle task */
	return target_tgid && (t->tgid == target_tgid ||
			       BPF_CORE_READ(t, real_parent, tgid) == target_tgid);
}

/* Any process in the cgroup target or below it, while it is there (sysev.h). */
static __always_inline bool sysev_in_cgroup(void)
{
	struct sysev_target *tg;
	__u32 zero = 0;

	tg = bpf_map_lookup_elem(&sysev_target, &zero);
	return tg && tg->present && bpf_current_task_under_cgroup(&sysev_cgroup, 0) == 1;
}

/*
 * Fallback mode: every process's syscalls, tested against the target. The
 * cgroup target's programs are apart: only they use the CGROUP_ARRAY, which
 * a kernel without CONFIG_CGROUPS cannot make (xprobectl makes it only for
 * --cgroup).
 */
SEC("tp_btf/sys_enter")
int BPF_PROG(sysev_fb_enter, struct pt_regs *regs, long id)
{
	if (!sysev_is_target())
		return 0;
	sysev_enter((__u32)id, BPF_CORE_READ(regs, di));
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sysev_fb_exit, struct pt_regs *regs, long ret)
{
	if (!sysev_is_target())
		return 0;
	sysev_exit(ctx, ret);
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(sysev_fb_cg_enter, struct pt_regs *regs, long id)
{
	if (!sysev_in_cgroup())
		return 0;
	sysev_enter((__u32)id, BPF_CORE_READ(regs, di));
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sysev_fb_cg_exit, struct pt_regs *regs, long ret)
{
	if (!sysev_in_cgroup())
		return 0;
	sysev_exit(ctx, ret);
	return 0;
}

#endif
