// SPDX-License-Identifier: GPL-2.0
/*
 * A BPF program run directly by one hook (XPROBES_CMD_HOOK_PROG).
 *
 * Every hit fires the xprobes_hook tracepoint, which reaches any program
 * attached to it (raw_tp/xprobes_hook, bpftrace): that stays the interface.
 * A hook may also run one program itself (fire.h): the same context the
 * tracepoint gives a raw tracepoint program (u64 args[] = id, cookie, regs),
 * with what bpf_trace_run3() does around it, but none of the tracepoint's
 * dispatch (preemption guard, static call, the probe stub, bpf_trace_run3()'s
 * own frame). A hook with neither a program nor a tracepoint user runs no
 * BPF at all. docs/experiments.md measures both paths.
 *
 * Two kinds of program, by the context they take:
 * - BPF_PROG_TYPE_RAW_TRACEPOINT (not the writable kind): the tracepoint's
 *   u64 args[] = id, cookie, regs; the verifier bounded their context
 *   reads by max_ctx_offset, checked here against the three arguments, as
 *   bpf_probe_register() checks it for a tracepoint. A program written for
 *   the tracepoint runs unchanged here.
 * - BPF_PROG_TYPE_KPROBE: the hook's struct pt_regs itself, as a kprobe at
 *   the hook's address would give it (ip = hook + 1), so the program reads
 *   registers with plain loads (PT_REGS_PARM1(ctx)) where a raw tracepoint
 *   program needs a helper call for each. Only the classic kind (attached
 *   through a perf event: its attach cookie is read from the same run
 *   context as a tracepoint program's); not the multi-kprobe or session
 *   kinds (another run context), and not one allowed to override a
 *   function's return (bpf_override_return() is for error injection sites,
 *   checked when such a program is attached to one).
 * Never a sleepable one (SEC("uprobe.s") loads as a kprobe program): a hit
 * runs it with preemption off, on the trap path with interrupts off too,
 * where sleeping is a bug.
 *
 * Lifetime: ->prog holds a reference, written under xp_views_lock. Hits
 * read it with preemption or interrupts off, an RCU read-side section, and a
 * program whose last reference is put is freed only after an RCU grace
 * period (bpf_prog_put()), as when a tracepoint drops it: replacing or
 * dropping the pointer needs no wait of its own.
 */
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/kprobes.h>
#include "xprobes.h"
#include "trace.h"

/* A hit's program, when BPF statistics are on: bpf_prog_run() counts it. */
noinline void xp_prog_run_counted(struct bpf_prog *prog, const void *ctx)
{
	bpf_prog_run(prog, ctx);
}

/*
 * A hit whose program was already running on this CPU (fire.h's guard) is
 * counted where the kernel counts a tracepoint's or a kprobe's skipped run:
 * the program's own recursion misses (bpftool prog show: recursion_misses),
 * as bpf_prog_inc_misses_counter() does, which is not exported. Out of
 * line: the hit path pays nothing for it.
 */
noinline notrace void xp_prog_missed(struct bpf_prog *prog)
{
	struct bpf_prog_stats *stats = this_cpu_ptr(prog->stats);
	unsigned long flags;

	flags = u64_stats_update_begin_irqsave(&stats->syncp);
	u64_stats_inc(&stats->misses);
	u64_stats_update_end_irqrestore(&stats->syncp, flags);
}
NOKPROBE_SYMBOL(xp_prog_missed);

/*
 * A hit's xprobes_hook tracepoint, out of line, called only while someone
 * is attached to it: inline, the compiler loaded its arguments ahead of the
 * tracepoint's static branch, on every hit (two instructions of the jump
 * path's ~100, docs/experiments.md). Returns @regs, which the caller
 * then need not keep. Called directly, by the hit paths only: no ENDBR
 * (__noendbr, an indirect call here would be a #CP under IBT) and no
 * ftrace entry (notrace): two instructions a hit the tracepoint is on.
 */
__noendbr notrace noinline struct pt_regs *xp_hook_tp(struct xp_hook *h, struct pt_regs *regs)
{
	trace_xprobes_hook(h->id, h->cookie, regs);
	return regs;
}
NOKPROBE_SYMBOL(xp_hook_tp);

/* The program behind @fd, with a reference, or an ERR_PTR and @extack set. */
struct bpf_prog *xp_prog_get(int fd, struct netlink_ext_ack *extack)
{
	struct bpf_prog *prog = bpf_prog_get_type_dev(fd, BPF_PROG_TYPE_RAW_TRACEPOINT, false);

	/* bpf_prog_get() is not exported: ask for each type in turn. */
	if (PTR_ERR_OR_ZERO(prog) == -EINVAL)
		prog = bpf_prog_get_type_dev(fd, BPF_PROG_TYPE_KPROBE, false);
	if (IS_ERR(prog)) {
		NL_SET_ERR_MSG(extack,
			       "not a BPF raw tracepoint or kprobe program (load one with SEC(\"raw_tp\") or SEC(\"kprobe\"))");
		return prog;
	}
	if (xp_prog_sleepable(prog)) {
		NL_SET_ERR_MSG(extack,
			       "a sleepable program cannot run at a hook: hits run with preemption off (load one without \".s\")");
		bpf_prog_put(prog);
		return ERR_PTR(-EINVAL);
	}
	switch (prog->type) {
	case BPF_PROG_TYPE_RAW_TRACEPOINT:
		if (prog->aux->max_ctx_offset <= XP_PROG_ARGS * sizeof(u64))
			return prog;
		NL_SET_ERR_MSG_FMT(extack,
				   "the program reads %u bytes of context; a hook gives %zu (id, cookie, regs)",
				   prog->aux->max_ctx_offset, XP_PROG_ARGS * sizeof(u64));
		break;
	case BPF_PROG_TYPE_KPROBE:
		if (!prog->expected_attach_type && !prog->kprobe_override)
			return prog;
		NL_SET_ERR_MSG(extack,
			       "a multi-kprobe, session or return-overriding kprobe program cannot run at a hook (load a plain SEC(\"kprobe\") one)");
		break;
	default:
		break;	/* cannot happen: asked for those two types */
	}
	bpf_prog_put(prog);
	return ERR_PTR(-EINVAL);
}

/* Make @h run @prog (its reference moves to @h), or nothing if NULL. */
void xp_hook_set_prog(struct xp_hook *h, struct bpf_prog *prog)
{
	struct bpf_prog *old;

	lockdep_assert_held(&xp_views_lock);
	old = rcu_replace_pointer(h->prog, prog, lockdep_is_held(&xp_views_lock));
	if (old)
		bpf_prog_put(old);
}

/* The id of the program @h runs, 0 if none (under xp_views_lock). */
u32 xp_hook_prog_id(struct xp_hook *h)
{
	struct bpf_prog *prog = rcu_dereference_protected(h->prog,
							  lockdep_is_held(&xp_views_lock));

	return prog ? prog->aux->id : 0;
}
