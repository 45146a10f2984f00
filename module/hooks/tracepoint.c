// SPDX-License-Identifier: GPL-2.0
/*
 * Tracepoint hooks: one of the kernel's own tracepoints, on in one
 * process's view only (hook add PID tracepoint:CATEGORY:NAME).
 *
 * A tracepoint is a static key and, at each place the kernel calls
 * trace_NAME(), a jump-label site: a NOP that becomes a jump to an
 * out-of-line block while the key is on. The block loads the tracepoint's
 * probe array (->funcs), skips everything if it is empty, and otherwise
 * makes an inline static call: to the one probe there is, or to
 * __traceiter_NAME, which calls each in turn.
 *
 * Mechanism: the module registers a probe of its own (xp_tp_probe1..12, one
 * per argument count), so that ->funcs holds it and the static call targets
 * it, then turns the key off again, so that the shared text is NOPs once
 * more; and it writes, in each hooking view's private copies only, the jump
 * each site would have (the kernel's own encoding: JMP8 for a 2-byte site,
 * JMP32 for a 5-byte one). The view's tasks take the jump and reach the
 * probe through the kernel's own block; everyone else runs the NOP and pays
 * nothing. The probe counts a hit for the view's own tasks (task context on
 * their own mm, as jump hooks decide) and runs the hook's program with the
 * tracepoint's own arguments: through the kernel's __bpf_trace_NAME, which
 * widens each argument as its type says and calls bpf_trace_runN(), so a
 * raw_tp or tp_btf program written for the tracepoint runs unchanged.
 * "Private" below: the key is off, only copies jump. "Shared": someone else
 * has a probe too, the key is on everywhere, the probe filters by view.
 *
 * The one invariant everything below keeps: the key changes state only
 * while every view's copy holds the shared text's bytes at the key's sites.
 * The kernel checks a site's old bytes through the current CR3 before it
 * rewrites it (__jump_label_patch(), BUG on a mismatch), and a traced task
 * may be the one that registers a probe; the copy must then agree.
 * - We turn the key off only in the shared state, where copies hold the
 *   shared bytes (coherence.c mirrors every kernel write into them).
 * - Another probe registered while we are private would find the key off,
 *   and tracepoint_add_func() leaves it off on 1 -> 2: the other tool
 *   would hear nothing. The tracepoint's regfunc is the gate: unused by
 *   the tracepoints we take (we refuse those that have one, but for
 *   raw_syscalls, whose own the gate calls: "system calls" below), called
 *   by tracepoint_add_func() under tracepoints_mutex before any probe is
 *   added while the key is off. Ours (xp_tp_gate0..) puts the shared bytes
 *   back in every copy, then turns the key on, as the kernel would have:
 *   shared.
 * - Back to private when we are alone again (the sweeper, lifecycle.c,
 *   every 200 ms: xp_tps_settle()): key off in the shared state, then jumps.
 *   The traced process misses the tracepoint for the microseconds between.
 * A tracepoint a module defines (ext4:*, xfs:*) is found in the live
 * modules' tables when the core kernel has none of the name; its sites are
 * in that module's text (its own jump table), written in the view's copies
 * of the module's pages (views/modspace.c), and the module is held while
 * the tracepoint is hooked, as perf and BPF hold it (the kernel warns of a
 * probe left on a going module's tracepoint); a forced unload (rmmod -f)
 * ends the hook from the going notifier (views/modspace.c) first. Every
 * read of a site's bytes is page by page (xp_text_read()): a module's text
 * is contiguous only within a page. Sites in other modules' text
 * (the key is linked to them: a core tracepoint a module calls) follow the
 * key: in the private state the view does not see events from them
 * (HOOK_GET says so); sites in init text are gone after boot. sched_process_fork and
 * sched_process_exec stay global while any view exists: the module's own
 * probes follow processes there (lifecycle.c). Someone who opens and
 * closes a probe on a hooked tracepoint over and over makes it go global
 * and private again at most five times a second (the sweeper's pace):
 * each is a key update and three IPIs per hooking view, no more.
 *
 * Refused: tracepoints with a regfunc of their own (but raw_syscalls'),
 * and those with a site where our int3 would trap again before the handler
 * can answer (see site_refused()). A hit's stack: one frame more than the kernel's own
 * raw_tp path (the probe, which calls __bpf_trace_NAME with the arguments
 * it was given); the raw_tp link that bpf_trace_runN() takes on 6.10+ is
 * the hook's own (struct xp_tplink).
 *
 * Writing a site in a copy: the int3 protocol text_poke_bp() follows, on
 * every site of the hook at once: int3 on each first byte, serialise every
 * CPU, the rest of the bytes, serialise, the first bytes, serialise. A CPU
 * that meets one of these int3s (dispatch.c asks xp_tp_int3()) is sent
 * where the jump goes: the block tests ->funcs itself, so running it is
 * right whichever way the site is going.
 *
 * Locking, outermost first: xp_views_lock (adding, removing, teardown, the
 * sweeper), then the kernel's tracepoints_mutex, which tracepoint_add_func()
 * holds around our gate and which we take to change a tracepoint's state
 * or its list of hooks, then text_mutex for every write to a copy. A
 * tracepoint's hooks (->hooks) and a view's (->tp_hooks) are RCU lists:
 * the probe walks the first with preemption off, the int3 handler the
 * second with interrupts off; both are freed after a grace period.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bpf.h>
#include <linux/jump_label.h>
#include <linux/kprobes.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/trace_events.h>
#include <linux/tracepoint.h>
#include <asm/text-patching.h>
#include <asm/tlbflush.h>
#include "xprobes.h"
#include "fire.h"

#define XP_TP_MAX	16	/* tracepoints hooked at once, machine-wide: one gate each */
#define XP_TP_ARGS	12	/* as bpf_trace_run12() */

struct xp_tp_site {
	unsigned long addr;	/* the NOP in the shared text */
	unsigned long target;	/* where the jump goes: the out-of-line block */
	u8 len;			/* 2 or 5 */
};

/* One hooked tracepoint, for every view that hooks it. */
struct xp_tp {
	struct list_head node;		/* in xp_tps, under xp_views_lock */
	struct tracepoint *tp;
	struct module *mod;		/* the module defining it, referenced, or NULL */
	const char *system;		/* its category (TRACE_SYSTEM), or NULL */
	struct bpf_raw_event_map *btp;	/* its BPF entry: __bpf_trace_NAME, its arity */
	void *probe;			/* xp_tp_probeN, N = btp->num_args */
	struct xp_tp_site *sites;	/* in its defining text (the kernel's, ->mod's), by address */
	unsigned int nr_sites;
	int gate;			/* its index in xp_tp_gated[] */
	bool private;			/* under tracepoints_mutex: key off, copies jump */
	bool sys;			/* raw_syscalls:sys_enter or sys_exit (see "System calls") */
	struct xp_tphook __rcu *solo;	/* a sys one's only hook while private: no view test */
	u64 solo_at;			/* xp_solo_seq when it last could have one (solo_update()) */
	struct list_head hooks;		/* struct xp_tphook, RCU, under tracepoints_mutex */
	unsigned int users;		/* hooks, under xp_views_lock */
};

struct xp_tplink;

/* What a tracepoint hook adds to its struct xp_hook (h->tph). */
struct xp_tphook {
	struct list_head node;		/* in xp_tp->hooks */
	struct xp_hook *h;
	struct xp_tp *xtp;
	bool linked;			/* in xtp->hooks */
	struct xp_tplink __rcu *link;	/* its program's, or NULL (xp_tphook_set_prog()) */
	/* per site, the copies of the pages its bytes are on (the second if it crosses) */
	struct xp_tpage *pages[][2];
};

static LIST_HEAD(xp_tps);			/* under xp_views_lock */
static struct xp_tp *xp_tp_gated[XP_TP_MAX];	/* the tracepoint each gate serves */
static struct mutex *xp_tps_mutex;		/* the kernel's tracepoints_mutex */
static struct bpf_raw_event_map *xp_btp_start, *xp_btp_stop;
static struct list_head *xp_ftrace_events;	/* the kernel's trace events ... */
static struct mutex *xp_event_mutex;		/* ... and their mutex */
static const struct jump_entry *xp_jt_start, *xp_jt_stop;
static const char *xp_tp_missing;		/* why tracepoint hooks cannot work here */
static unsigned long xp_noinstr[2], xp_entry[2], xp_irqentry[2];	/* [start, end) */
static const u8 xp_nop2[] = { 0x66, 0x90 }, xp_nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
atomic64_t xp_tp_yields;			/* private -> shared: another probe came */
atomic64_t xp_tp_settles;			/* shared -> private: alone again */

/* raw_syscalls: the two tracepoints, the kernel's functions and state for them */
static struct tracepoint *xp_sys_tps[2];	/* sys_enter, sys_exit */
static int (*xp_sys_reg)(void);			/* syscall_regfunc */
static void (*xp_sys_unreg)(void);		/* syscall_unregfunc */
static int *xp_sys_refcount;			/* its sys_tracepoint_refcount */
static rwlock_t *xp_tasklist_lock;
static const char *xp_sys_missing;		/* why they cannot be hooked, once looked up */
static unsigned int xp_sys_users;		/* sys xp_tps, under tracepoints_mutex */
static struct xp_tp *xp_sys_xtp[2];		/* ours on each, under tracepoints_mutex */

/* ---- the hit ---------------------------------------------------------------- */

/*
 * What bpf_trace_runN() is handed as the probe's data: the program's raw_tp
 * link from 6.10 on (it reads the program and the cookie there), the
 * program itself before. A hook keeps one per program it is given
 * (xp_tphook_set_prog()), replaced and freed under RCU: a hit does not
 * build one on its stack.
 */
#if XP_TP_LINKS
struct xp_tplink {
	struct bpf_raw_tp_link link;
	struct rcu_head rcu;
};
#define XP_TPLINK_DATA(l)	(&(l)->link)
#else
struct xp_tplink {
	struct bpf_prog *prog;
	struct rcu_head rcu;
};
#define XP_TPLINK_DATA(l)	((l)->prog)
#endif

/*
 * The tracepoint fired where the probe can see it: in a view's copy (the
 * private state), or anywhere (shared). Preemption is off (__DO_TRACE).
 * A task on its own mm in a view is that view's (jump.c decides so too); a
 * hit in task context, a drop in an interrupt on it. A kernel thread with
 * no mm is a drop if the CPU is on a view's tables. Returns what the
 * hook's program is to be run with (then xp_tp_hit_end() follows), or NULL.
 */
/*
 * The hook of @x whose view @pgd's tables are (RCU, or under
 * tracepoints_mutex), or NULL.
 */
static __always_inline struct xp_tphook *hook_of_pgd(struct xp_tp *x, pgd_t *pgd)
{
	struct xp_tphook *th;

	list_for_each_entry_rcu(th, &x->hooks, node, lockdep_is_held(xp_tps_mutex))
		if (xp_pgd_in_view(pgd, th->h->view))
			return th;
	return NULL;
}

static __always_inline void *xp_tp_hit(struct xp_tp *x)
{
	struct mm_struct *mm = current->mm;
	struct xp_tphook *hit;
	struct xp_hook *h = NULL;
	struct xp_tplink *l;
	bool own = false;

	if (mm) {
		hit = hook_of_pgd(x, mm->pgd);
		own = hit && xp_pc_in_task(preempt_count());
	} else {
		hit = hook_of_pgd(x, __va(read_cr3_pa()));
	}
	if (!hit)
		return NULL;
	h = hit->h;
	if (__this_cpu_read(xp_dispatching)) {
		this_cpu_inc(h->stats->nested);
		return NULL;
	}
	if (own)
		this_cpu_inc(h->stats->hits);
	else
		this_cpu_inc(h->stats->dropped);
	if (!own && !h->any_context)
		return NULL;
	l = rcu_dereference_sched(hit->link);
	if (!l)
		return NULL;
	__this_cpu_write(xp_dispatching, 1);
	return XP_TPLINK_DATA(l);
}

static __always_inline void xp_tp_hit_end(void)
{
	__this_cpu_write(xp_dispatching, 0);
}

/*
 * A raw_syscalls tracepoint, private, hooked by one view (x->solo, see
 * solo_update()): only that view's threads reach the probe (the others are
 * not flagged for the path, or run the shared NOP), in task context, never
 * inside a hook's dispatch (no system call is made there); solo_update()
 * says since when. No view test and no nesting flag: the hit is counted and
 * the program entered by a tail call, as the global raw tracepoint enters
 * it; a hook of the view on code the program runs then fires as a hit of
 * its own, as it would under a global raw tracepoint's program (the
 * program itself cannot come back in: bpf_trace_run*()'s guard). Returns
 * what to run it with, or NULL.
 */
static __always_inline void *xp_tp_solo_hit(struct xp_tphook *th)
{
	struct xp_tplink *l = rcu_dereference_sched(th->link);

	this_cpu_inc(th->h->stats->hits);
	return l ? XP_TPLINK_DATA(l) : NULL;
}

/*
 * One probe per arity: the tracepoint calls it with its own prototype, and
 * it runs the hook's program as the kernel runs a raw_tp program on this
 * tracepoint, with the same arguments: the tracepoint's own
 * __bpf_trace_NAME widens them (an int argument's upper half is not
 * defined in its register), bpf_trace_runN() guards recursion and sets the
 * run context (the hook's cookie, 6.10 on). No array of the arguments and
 * no call with twelve of them: 223 instructions a hit were 98 more than a
 * global raw tracepoint's (bench part 2, hit-cost-tp, 2026-11-30).
 */
#define XP_TP_PROBE(n, params, ...)						\
static noinline void xp_tp_probe##n(void *__data, params)			\
{										\
	struct xp_tp *x = __data;						\
	void *data = xp_tp_hit(x);						\
										\
	if (data) {								\
		((void (*)(void *, params))x->btp->bpf_func)(data, __VA_ARGS__);\
		xp_tp_hit_end();						\
	}									\
}
#define P1 u64 a1
#define P2 P1, u64 a2
#define P3 P2, u64 a3
#define P4 P3, u64 a4
#define P5 P4, u64 a5
#define P6 P5, u64 a6
#define P7 P6, u64 a7
#define P8 P7, u64 a8
#define P9 P8, u64 a9
#define P10 P9, u64 a10
#define P11 P10, u64 a11
#define P12 P11, u64 a12
XP_TP_PROBE(1, P1, a1)
XP_TP_PROBE(2, P2, a1, a2)
XP_TP_PROBE(3, P3, a1, a2, a3)
XP_TP_PROBE(4, P4, a1, a2, a3, a4)
XP_TP_PROBE(5, P5, a1, a2, a3, a4, a5)
XP_TP_PROBE(6, P6, a1, a2, a3, a4, a5, a6)
XP_TP_PROBE(7, P7, a1, a2, a3, a4, a5, a6, a7)
XP_TP_PROBE(8, P8, a1, a2, a3, a4, a5, a6, a7, a8)
XP_TP_PROBE(9, P9, a1, a2, a3, a4, a5, a6, a7, a8, a9)
XP_TP_PROBE(10, P10, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10)
XP_TP_PROBE(11, P11, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11)
XP_TP_PROBE(12, P12, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12)

/*
 * raw_syscalls:sys_enter and sys_exit's probe, (struct pt_regs *, long):
 * the solo path first, else xp_tp_probe2() (noinline: the solo path keeps
 * no registers for it).
 */
static void xp_tp_sys_probe(void *__data, u64 a1, u64 a2)
{
	struct xp_tp *x = __data;
	struct xp_tphook *solo = rcu_dereference_sched(x->solo);
	void *data;

	if (!solo) {
		xp_tp_probe2(__data, a1, a2);
		return;
	}
	data = xp_tp_solo_hit(solo);
	if (data)
		((void (*)(void *, u64, u64))x->btp->bpf_func)(data, a1, a2);
}

static void *const xp_tp_probes[XP_TP_ARGS + 1] = {
	NULL, xp_tp_probe1, xp_tp_probe2, xp_tp_probe3, xp_tp_probe4, xp_tp_probe5,
	xp_tp_probe6, xp_tp_probe7, xp_tp_probe8, xp_tp_probe9, xp_tp_probe10,
	xp_tp_probe11, xp_tp_probe12,
};

/* ---- writing sites in copies ----------------------------------------------- */

static u8 *site_byte(struct xp_tphook *th, unsigned int i, unsigned int k)
{
	unsigned long off = offset_in_page(th->xtp->sites[i].addr) + k;

	if (off >= PAGE_SIZE)
		return (u8 *)page_address(th->pages[i][1]->copy) + off - PAGE_SIZE;
	return (u8 *)page_address(th->pages[i][0]->copy) + off;
}

/*
 * The bytes of site @s: its jump, or what the shared text holds there now
 * (page by page: a module's text is contiguous only within a page).
 */
static void site_bytes(const struct xp_tp_site *s, bool jump, u8 *out)
{
	s32 rel = s->target - (s->addr + s->len);

	if (!jump) {
		xp_text_read(out, s->addr, s->len);
	} else if (s->len == 2) {
		out[0] = JMP8_INSN_OPCODE;
		out[1] = (s8)rel;
	} else {
		out[0] = JMP32_INSN_OPCODE;
		memcpy(out + 1, &rel, sizeof(rel));
	}
}

static bool site_is(struct xp_tphook *th, unsigned int i, const u8 *want)
{
	unsigned int k;

	for (k = 0; k < th->xtp->sites[i].len; k++)
		if (*site_byte(th, i, k) != want[k])
			return false;
	return true;
}

/*
 * Make every site of @th's view's copies jump (@jump) or hold the shared
 * text's bytes again, by the int3 protocol. A site whose shared bytes are
 * not the NOP its length calls for is left alone (nothing else writes
 * them while the key is off; the audit would say). Under tracepoints_mutex.
 */
static void write_sites(struct xp_tphook *th, bool jump)
{
	struct xp_tp *x = th->xtp;
	unsigned int i, k, n = 0;
	u8 want[JMP32_INSN_SIZE], now[JMP32_INSN_SIZE];

	lockdep_assert_held(xp_tps_mutex);
	mutex_lock(xp_k.text_mutex);
	for (i = 0; i < x->nr_sites; i++) {
		const struct xp_tp_site *s = &x->sites[i];

		if (jump) {
			xp_text_read(now, s->addr, s->len);
			if (memcmp(now, s->len == 2 ? xp_nop2 : xp_nop5, s->len))
				continue;
		}
		site_bytes(s, jump, want);
		if (site_is(th, i, want))
			continue;
		WRITE_ONCE(*site_byte(th, i, 0), INT3_INSN_OPCODE);
		n++;
	}
	if (!n)
		goto out;
	xp_sync_cores();
	for (i = 0; i < x->nr_sites; i++) {
		if (*site_byte(th, i, 0) != INT3_INSN_OPCODE)
			continue;
		site_bytes(&x->sites[i], jump, want);
		for (k = 1; k < x->sites[i].len; k++)
			WRITE_ONCE(*site_byte(th, i, k), want[k]);
	}
	xp_sync_cores();
	for (i = 0; i < x->nr_sites; i++) {
		if (*site_byte(th, i, 0) != INT3_INSN_OPCODE)
			continue;
		site_bytes(&x->sites[i], jump, want);
		WRITE_ONCE(*site_byte(th, i, 0), want[0]);
	}
	xp_sync_cores();
out:
	mutex_unlock(xp_k.text_mutex);
}

/* ---- system calls: raw_syscalls:sys_enter and sys_exit ------------------- */

/*
 * The kernel reaches these two tracepoints only in tasks flagged
 * SYSCALL_WORK_SYSCALL_TRACEPOINT (syscall_trace_enter() and
 * syscall_exit_work() test the flag before the site). Their regfunc,
 * syscall_regfunc(), flags every thread of the system when the first of
 * the two is enabled, syscall_unregfunc() clears them all when the last
 * goes (sys_tracepoint_refcount counts the two, under tracepoints_mutex),
 * and copy_process() gives a child its parent's flag.
 *
 * Per view: while private, only the threads of the hooking views'
 * processes carry the flag (sys_flags_sync()), so every other task keeps
 * the fast system call path, and only their copies' sites jump; children
 * inherit it. The kernel's own rule is kept: one syscall_regfunc()
 * outstanding for a tracepoint while its key is on, none while it is off.
 * Where we turn the key on (the gate, stop_tp()) we call syscall_regfunc()
 * first, where we turn it off (settle()) syscall_unregfunc() after. When
 * the count falls to 0, syscall_unregfunc() clears every thread, members
 * too, whichever tracepoint's probe went: both tracepoints' unregfunc is
 * xp_sys_unregfunc() while either is hooked, which flags the members
 * again. A member's system calls miss the tracepoint for the microseconds
 * between.
 */

/* Does @t belong to a view that hooks a raw_syscalls tracepoint privately? */
static bool sys_task_wanted(struct task_struct *t)
{
	bool want = false;
	int i;

	task_lock(t);	/* t->mm and its pgd stay */
	for (i = 0; t->mm && i < ARRAY_SIZE(xp_sys_xtp) && !want; i++) {
		struct xp_tp *x = xp_sys_xtp[i];

		want = x && x->private && hook_of_pgd(x, t->mm->pgd);
	}
	task_unlock(t);
	return want;
}

/*
 * Every thread's flag as the state says: all of them while the kernel's
 * count is up (someone has a raw_syscalls tracepoint on everywhere), else
 * those of private hooks' views only. Under tracepoints_mutex; the
 * tasklist lock keeps copy_process() from copying a flag half-way, as in
 * syscall_regfunc().
 */
static void sys_flags_sync(void)
{
	struct task_struct *p, *t;
	bool all;

	lockdep_assert_held(xp_tps_mutex);
	all = READ_ONCE(*xp_sys_refcount) > 0;
	read_lock(xp_tasklist_lock);
	for_each_process_thread(p, t) {
		if (all || sys_task_wanted(t)) {
			set_task_syscall_work(t, SYSCALL_TRACEPOINT);
			continue;
		}
		clear_task_syscall_work(t, SYSCALL_TRACEPOINT);
		/*
		 * A process joining a view meanwhile (a fork, an exec) sets its
		 * flag after it has the view's entry (xp_tp_sys_join()): look
		 * again, or the clearing could come after that and stay.
		 */
		smp_mb__after_atomic();
		if (sys_task_wanted(t))
			set_task_syscall_work(t, SYSCALL_TRACEPOINT);
	}
	read_unlock(xp_tasklist_lock);
}

/*
 * @t (a child, or a task after exec) has just joined @v (lifecycle.c,
 * after xp_member_add() gave its mm the view's entry): if @v hooks a
 * raw_syscalls tracepoint, @t needs the flag, whatever it inherited or a
 * concurrent sys_flags_sync() decided before the entry was there. Set when
 * not needed (the hook shared, going away), it costs @t the slower system
 * call path until the next sync. RCU read side (the fork and exec probes).
 */
void xp_tp_sys_join(struct xp_view *v, struct task_struct *t)
{
	struct xp_hook *h;

	list_for_each_entry_rcu(h, &v->tp_hooks, vnode)
		if (h->tph && h->tph->xtp->sys) {
			set_task_syscall_work(t, SYSCALL_TRACEPOINT);
			return;
		}
}

/* Both tracepoints' unregfunc while either is hooked. Under tracepoints_mutex. */
static void xp_sys_unregfunc(void)
{
	xp_sys_unreg();
	if (!READ_ONCE(*xp_sys_refcount))	/* it cleared every thread */
		sys_flags_sync();
}

/* How many threads reach the raw_syscalls tracepoints now, of how many (status). */
void xp_sys_threads(u32 *flagged, u32 *all)
{
	struct task_struct *p, *t;

	*flagged = *all = 0;
	rcu_read_lock();
	for_each_process_thread(p, t) {
		(*all)++;
		if (test_bit(SYSCALL_WORK_BIT_SYSCALL_TRACEPOINT, &task_thread_info(t)->syscall_work))
			(*flagged)++;
	}
	rcu_read_unlock();
}

static void match_sys(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sys_enter"))
		xp_sys_tps[0] = tp;
	else if (!strcmp(tp->name, "sys_exit"))
		xp_sys_tps[1] = tp;
}

/*
 * What hooking raw_syscalls needs of the kernel, looked up at the first
 * such hook. Returns why it cannot be had, or NULL. Under xp_views_lock.
 */
static const char *sys_lookup(void)
{
	unsigned long reg, unreg;
	int i;

	if (xp_sys_reg || xp_sys_missing)
		return xp_sys_missing;
	for_each_kernel_tracepoint(match_sys, NULL);
	reg = xp_sym_lookup("syscall_regfunc", NULL);
	unreg = xp_sym_lookup("syscall_unregfunc", NULL);
	xp_sys_refcount = (int *)xp_sym_lookup("sys_tracepoint_refcount", NULL);
	xp_tasklist_lock = (rwlock_t *)xp_sym_lookup("tasklist_lock", NULL);
	xp_sys_missing = "raw_syscalls cannot be hooked per process here: the kernel's "
			 "syscall_regfunc, its count or tasklist_lock were not found";
	if (!reg || !unreg || !xp_sys_refcount || !xp_tasklist_lock)
		return xp_sys_missing;
	mutex_lock(xp_tps_mutex);
	for (i = 0; i < ARRAY_SIZE(xp_sys_tps); i++)
		if (!xp_sys_tps[i] || (unsigned long)xp_sys_tps[i]->regfunc != reg ||
		    (unsigned long)xp_sys_tps[i]->unregfunc != unreg)
			break;
	mutex_unlock(xp_tps_mutex);
	if (i < ARRAY_SIZE(xp_sys_tps))
		return xp_sys_missing = "raw_syscalls cannot be hooked per process here: "
					"sys_enter and sys_exit are not the kernel's usual pair";
	xp_sys_unreg = (void (*)(void))unreg;
	xp_sys_missing = NULL;
	WRITE_ONCE(xp_sys_reg, (int (*)(void))reg);
	return NULL;
}

/* @x, a sys tracepoint, gets its probe (start) or loses it. Under tracepoints_mutex. */
static void sys_use(struct xp_tp *x, bool start)
{
	int i = x->tp == xp_sys_tps[1];

	xp_sys_xtp[i] = start ? x : NULL;
	if (start ? xp_sys_users++ : --xp_sys_users)
		return;
	for (i = 0; i < ARRAY_SIZE(xp_sys_tps); i++)
		xp_sys_tps[i]->unregfunc = start ? xp_sys_unregfunc : xp_sys_unreg;
}

/*
 * x->solo: the only hook of a raw_syscalls tracepoint while it is private,
 * else NULL (the probe then tests the view).
 *
 * A task that took a site's jump can be preempted before the block turns
 * preemption off, and reach the probe much later: a task of another view
 * whose hook has gone since, or any task, from before the tracepoint went
 * private. So solo_update() only takes x->solo away (under
 * tracepoints_mutex, after every change of the state or the hooks; before
 * the key goes on, whose text update orders it for every CPU that reaches
 * the probe after), and notes when x could have one again; solo_publish()
 * gives it one only after an RCU-tasks grace period has passed since then
 * (every task has left the sites and blocks it was in), as jump hooks wait
 * for their optimizer (jump.c). Hooks unlinked here are freed after a
 * grace period, which a probe holding one (preemption off) delays.
 */
static u64 xp_solo_seq;		/* under xp_views_lock */
static void solo_publish(struct work_struct *work);
static DECLARE_WORK(xp_solo_work, solo_publish);

static bool solo_fits(struct xp_tp *x)
{
	return x->sys && x->private && list_is_singular(&x->hooks);
}

static void solo_update(struct xp_tp *x)
{
	lockdep_assert_held(xp_tps_mutex);
	rcu_assign_pointer(x->solo, NULL);
	if (solo_fits(x)) {	/* only under xp_views_lock (the gate never makes it fit) */
		x->solo_at = READ_ONCE(xp_solo_seq);
		schedule_work(&xp_solo_work);
	}
}

static void solo_publish(struct work_struct *work)
{
	bool again = false;
	struct xp_tp *x;
	u64 seq;

	mutex_lock(&xp_views_lock);
	seq = xp_solo_seq++;
	mutex_unlock(&xp_views_lock);
	synchronize_rcu_tasks();
	mutex_lock(&xp_views_lock);
	list_for_each_entry(x, &xp_tps, node) {
		if (!x->sys)
			continue;
		mutex_lock(xp_tps_mutex);
		if (solo_fits(x) && !rcu_access_pointer(x->solo)) {
			if (x->solo_at <= seq)
				rcu_assign_pointer(x->solo, list_first_entry(&x->hooks,
									 struct xp_tphook, node));
			else
				again = true;
		}
		mutex_unlock(xp_tps_mutex);
	}
	mutex_unlock(&xp_views_lock);
	if (again)
		schedule_work(&xp_solo_work);
}

/* ---- states: private, shared, and the gate between ---------------------- */

/* Is our probe the tracepoint's only one? Under tracepoints_mutex. */
static bool alone(struct xp_tp *x)
{
	struct tracepoint_func *f = rcu_dereference_protected(x->tp->funcs,
							      lockdep_is_held(xp_tps_mutex));

	return f && f[0].func == x->probe && f[0].data == x && !f[1].func;
}

/* Shared -> private if we are alone. Under tracepoints_mutex. */
static void settle(struct xp_tp *x)
{
	struct xp_tphook *th;

	lockdep_assert_held(xp_tps_mutex);
	if (x->private || !alone(x))
		return;
	/* Copies hold the shared bytes here: the key may change (see the top). */
	static_key_disable(&x->tp->key);
	if (static_key_enabled(&x->tp->key))	/* not ours to turn off: stay shared */
		return;
	x->private = true;
	if (x->sys)	/* the key is off: the kernel's count goes down, members keep the flag */
		xp_sys_unregfunc();
	solo_update(x);
	list_for_each_entry(th, &x->hooks, node)
		write_sites(th, true);
	atomic64_inc(&xp_tp_settles);
}

/*
 * The gate: tracepoint_add_func() is about to add someone's probe while
 * the key is off, under tracepoints_mutex. If that is our private state,
 * give the shared bytes back to every copy, then turn the key on, as the
 * kernel would have for the first probe; it then adds the probe (1 -> 2)
 * and retargets the static call to the iterator. Our own registration
 * (start_tp()) passes through the gate too, before there is a private
 * state: it does nothing then.
 */
static int xp_tp_gate(int n)
{
	struct xp_tp *x = READ_ONCE(xp_tp_gated[n]);
	struct xp_tphook *th;

	if (!x)
		return 0;
	if (x->sys) {	/* the key goes on either way: what the kernel would have called */
		int err = xp_sys_reg();

		if (err)
			return err;
	}
	if (!x->private)
		return 0;
	list_for_each_entry(th, &x->hooks, node)
		write_sites(th, false);
	x->private = false;
	solo_update(x);
	static_key_enable(&x->tp->key);
	atomic64_inc(&xp_tp_yields);
	return 0;
}

#define XP_TP_GATE(n) static int xp_tp_gate##n(void) { return xp_tp_gate(n); }
XP_TP_GATE(0) XP_TP_GATE(1) XP_TP_GATE(2) XP_TP_GATE(3)
XP_TP_GATE(4) XP_TP_GATE(5) XP_TP_GATE(6) XP_TP_GATE(7)
XP_TP_GATE(8) XP_TP_GATE(9) XP_TP_GATE(10) XP_TP_GATE(11)
XP_TP_GATE(12) XP_TP_GATE(13) XP_TP_GATE(14) XP_TP_GATE(15)
static int (*const xp_tp_gates[XP_TP_MAX])(void) = {
	xp_tp_gate0, xp_tp_gate1, xp_tp_gate2, xp_tp_gate3,
	xp_tp_gate4, xp_tp_gate5, xp_tp_gate6, xp_tp_gate7,
	xp_tp_gate8, xp_tp_gate9, xp_tp_gate10, xp_tp_gate11,
	xp_tp_gate12, xp_tp_gate13, xp_tp_gate14, xp_tp_gate15,
};

/* The sweeper (lifecycle.c), under xp_views_lock: back to private where alone. */
void xp_tps_settle(void)
{
	struct xp_tp *x;

	lockdep_assert_held(&xp_views_lock);
	list_for_each_entry(x, &xp_tps, node) {
		if (READ_ONCE(x->private))
			continue;
		mutex_lock(xp_tps_mutex);
		settle(x);
		mutex_unlock(xp_tps_mutex);
	}
}

/* ---- finding a tracepoint and its sites ----------------------------------- */

struct tp_lookup {
	const char *name;
	struct tracepoint *tp;
};

static void match_tp(struct tracepoint *tp, void *priv)
{
	struct tp_lookup *l = priv;

	if (!strcmp(tp->name, l->name))
		l->tp = tp;
}

/*
 * The category (TRACE_SYSTEM) of the trace event on @tp, or NULL if none:
 * from the kernel's list of trace events (the section the boot filled it
 * from is init data, gone), under its mutex. The name is the event
 * class's, built in: it stays.
 */
static const char *tp_system(struct tracepoint *tp)
{
	struct trace_event_call *c;
	const char *sys = NULL;

	mutex_lock(xp_event_mutex);
	list_for_each_entry(c, xp_ftrace_events, list)
		if ((c->flags & TRACE_EVENT_FL_TRACEPOINT) && c->tp == tp) {
			sys = c->class ? c->class->system : NULL;
			break;
		}
	mutex_unlock(xp_event_mutex);
	return sys;
}

/*
 * May a site at @addr be written by the int3 protocol in a copy? Not where
 * the trap itself would run it again before our handler answers: the
 * handler comes late (exc_int3, irqentry_nmi_enter, do_int3, the die
 * notifier chain, whose functions dispatch.c lists with RCU's and
 * lockdep's), unlike the kernel's own poke_int3_handler, so a traced CPU
 * trapping there would trap again at the same site, without end
 * (notifier:notifier_run, lock:lock_acquire on a lockdep kernel). Nor in
 * noinstr or entry code, where kprobes never goes either.
 */
static const char *site_refused(unsigned long addr)
{
	if (xp_on_dispatch_path(addr))
		return "a call site of this tracepoint is on the path our trap handler runs "
		       "(the die notifier chain, RCU, lockdep): it cannot be on per process";
	if ((addr >= xp_noinstr[0] && addr < xp_noinstr[1]) ||
	    (addr >= xp_entry[0] && addr < xp_entry[1]) ||
	    (addr >= xp_irqentry[0] && addr < xp_irqentry[1]))
		return "a call site of this tracepoint is in noinstr or entry code: it cannot "
		       "be on per process";
	return NULL;
}

static int cmp_site(const void *a, const void *b)
{
	const struct xp_tp_site *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * The key's sites in the text that defines the tracepoint (the core
 * kernel's, or its module's own: the module's jump table, which holds its
 * own keys' entries): 2- or 5-byte NOPs now (the key is off) or the jumps
 * they become. Returns why not, or NULL.
 */
static const char *find_sites(struct xp_tp *x)
{
	const struct jump_entry *e, *start = xp_jt_start, *stop = xp_jt_stop;
	const char *why;
	unsigned int n = 0;

	lockdep_assert_held(xp_tps_mutex);	/* no key change under us: no int3 read */

	if (x->mod) {
		start = x->mod->jump_entries;
		stop = start + x->mod->num_jump_entries;
	}
	for (e = start; e < stop; e++)
		if (jump_entry_key(e) == &x->tp->key)
			n++;
	if (!n)
		return x->mod ? "this tracepoint has no call site in its module's text" :
				"this tracepoint has no call site in the core kernel text";
	x->sites = kcalloc(n, sizeof(*x->sites), GFP_KERNEL_ACCOUNT);
	if (!x->sites)
		return "out of memory";
	for (e = start; e < stop; e++) {
		unsigned long code = jump_entry_code(e);
		struct xp_tp_site *s = &x->sites[x->nr_sites];
		u8 p[JMP32_INSN_SIZE];

		if (jump_entry_key(e) != &x->tp->key || jump_entry_is_init(e))
			continue;
		/* A site in the last bytes of a module's text: told, not skipped */
		if (x->mod && !xp_is_module_text(code, 2))
			continue;
		if (x->mod && !xp_is_module_text(code, JMP32_INSN_SIZE))
			return "a call site of this tracepoint ends its module's text";
		if (!x->mod && !xp_is_core_text(code, JMP32_INSN_SIZE))
			continue;
		if (jump_entry_is_branch(e))
			return "a call site of this tracepoint is a likely branch (not a tracepoint's kind)";
		why = site_refused(code);
		if (why)
			return why;
		xp_text_read(p, code, sizeof(p));	/* page by page, in a module */
		s->addr = code;
		s->target = jump_entry_target(e);
		if (!memcmp(p, xp_nop2, 2) || p[0] == JMP8_INSN_OPCODE)
			s->len = 2;
		else if (!memcmp(p, xp_nop5, 5) || p[0] == JMP32_INSN_OPCODE)
			s->len = 5;
		else
			return "a call site of this tracepoint is neither a NOP nor a jump";
		x->nr_sites++;
	}
	if (!x->nr_sites)
		return x->mod ? "this tracepoint has no call site in its module's text after its init" :
				"this tracepoint has no call site in the core kernel text after boot";
	sort(x->sites, x->nr_sites, sizeof(*x->sites), cmp_site, NULL);
	return NULL;
}

/* What a tracepoint's and a hook's own parts count in xp_mem_bytes. */
static size_t tp_bytes(const struct xp_tp *x)
{
	return sizeof(*x) + x->nr_sites * sizeof(*x->sites);
}

static size_t th_bytes(const struct xp_tp *x)
{
	return struct_size_t(struct xp_tphook, pages, x->nr_sites);
}

static void free_tp(struct xp_tp *x)
{
	atomic64_sub(tp_bytes(x), &xp_mem_bytes);
	module_put(x->mod);
	kfree(x->sites);
	kfree(x);
}

/*
 * Where @tp's BPF entry (__bpf_trace_NAME and its arity) is: the kernel's
 * table, or the table of @mod, which defines @tp.
 */
static struct bpf_raw_event_map *find_btp(struct tracepoint *tp, struct module *mod)
{
	struct bpf_raw_event_map *btp = xp_btp_start, *stop = xp_btp_stop;

	if (mod) {
		btp = mod->bpf_raw_events;
		stop = btp + mod->num_bpf_raw_events;
	}
	for (; btp < stop; btp++)
		if (btp->tp == tp)
			return btp;
	return NULL;
}

/*
 * A new xp_tp for @tp, checked, with its sites; not registered yet. @mod,
 * the module defining @tp or NULL, comes with a reference, which the new
 * xp_tp keeps or this drops. Under xp_views_lock.
 */
static struct xp_tp *new_tp(struct tracepoint *tp, struct module *mod, const char *sys,
			    struct netlink_ext_ack *extack)
{
	struct bpf_raw_event_map *btp;
	char name[MODULE_NAME_LEN];
	const char *why;
	struct xp_tp *x;
	bool syscalls = false;
	int gate;

	x = ERR_PTR(-EOPNOTSUPP);
	/* Module text: module space followed in views first (views/modspace.c) */
	btp = find_btp(tp, mod);
	if (mod && btp && !xp_module_of((unsigned long)btp->bpf_func, 1, name, extack))
		goto fail_mod;

	if (!mod && (!strcmp(tp->name, "sys_enter") || !strcmp(tp->name, "sys_exit"))) {
		why = sys_lookup();
		if (why) {
			xp_set_msg(extack, why);
			goto fail_mod;
		}
		syscalls = tp == xp_sys_tps[0] || tp == xp_sys_tps[1];
	}
	if (!syscalls && (tp->regfunc || tp->unregfunc)) {
		NL_SET_ERR_MSG(extack, "this tracepoint runs a function of its own when enabled "
			       "(as exceptions:page_fault_user does): it cannot be on in one view only");
		goto fail_mod;
	}
	if (!btp || !btp->num_args || btp->num_args > XP_TP_ARGS ||
	    (syscalls && btp->num_args != 2)) {
		NL_SET_ERR_MSG(extack, "this tracepoint has no BPF entry (__bpf_trace_*) to run programs with");
		goto fail_mod;
	}
	for (gate = 0; gate < XP_TP_MAX; gate++)
		if (!xp_tp_gated[gate])
			break;
	if (gate == XP_TP_MAX) {
		NL_SET_ERR_MSG_FMT(extack, "%d tracepoints are hooked already, the most there can be",
				   XP_TP_MAX);
		x = ERR_PTR(-ENOSPC);
		goto fail_mod;
	}
	x = kzalloc(sizeof(*x), GFP_KERNEL_ACCOUNT);
	if (!x) {
		x = ERR_PTR(-ENOMEM);
		goto fail_mod;
	}
	x->tp = tp;
	x->mod = mod;
	x->system = sys;
	x->btp = btp;
	x->probe = syscalls ? xp_tp_sys_probe : xp_tp_probes[btp->num_args];
	x->gate = gate;
	x->sys = syscalls;
	INIT_LIST_HEAD(&x->hooks);
	mutex_lock(xp_tps_mutex);
	why = find_sites(x);
	mutex_unlock(xp_tps_mutex);
	atomic64_add(tp_bytes(x), &xp_mem_bytes);
	if (why) {
		xp_set_msg(extack, why);
		free_tp(x);
		return ERR_PTR(-EOPNOTSUPP);
	}
	return x;

fail_mod:
	module_put(mod);
	return x;
}

/*
 * Set the gate of a new tracepoint, then register our probe: our own 0 -> 1
 * passes through the gate, which does nothing while we are not private.
 * The key goes on for the first probe (everyone runs the probe, which finds
 * no view of theirs) until the first hook settles it. Under xp_views_lock.
 */
static int start_tp(struct xp_tp *x, struct netlink_ext_ack *extack)
{
	int err;

	mutex_lock(xp_tps_mutex);
	/* it had no other a moment ago: nobody sets one at run time */
	if (x->tp->regfunc != (x->sys ? xp_sys_reg : NULL)) {
		mutex_unlock(xp_tps_mutex);
		NL_SET_ERR_MSG(extack, "the tracepoint got a function of its own meanwhile");
		return -EBUSY;
	}
	WRITE_ONCE(xp_tp_gated[x->gate], x);
	x->tp->regfunc = xp_tp_gates[x->gate];
	if (x->sys)
		sys_use(x, true);
	mutex_unlock(xp_tps_mutex);
	err = tracepoint_probe_register(x->tp, x->probe, x);
	if (err) {
		mutex_lock(xp_tps_mutex);
		x->tp->regfunc = x->sys ? xp_sys_reg : NULL;
		if (x->sys)
			sys_use(x, false);
		WRITE_ONCE(xp_tp_gated[x->gate], NULL);
		mutex_unlock(xp_tps_mutex);
		NL_SET_ERR_MSG_FMT(extack, "the kernel refused our probe on the tracepoint (%d)", err);
		return err;
	}
	list_add(&x->node, &xp_tps);
	return 0;
}

/*
 * The last hook is gone: the gate goes, then our probe (1 -> 0 turns an
 * off key off: nothing is written; N -> N-1 leaves others as they were).
 * Probes under way finish before the memory goes. Under xp_views_lock.
 */
static void stop_tp(struct xp_tp *x)
{
	mutex_lock(xp_tps_mutex);
	WARN_ON_ONCE(!list_empty(&x->hooks));
	/*
	 * Private, the key is off under our registered probe: turn it on
	 * (copies hold the shared bytes since detach()) before the gate goes,
	 * or a probe registered before our unregister would go 1 -> 2 with the
	 * key off, and hear nothing. Our 1 -> 0 then turns it off.
	 */
	if (x->private) {
		if (x->sys)	/* as the gate: one outstanding while the key is on */
			WARN_ON_ONCE(xp_sys_reg());
		x->private = false;
		solo_update(x);
		static_key_enable(&x->tp->key);
	}
	x->tp->regfunc = x->sys ? xp_sys_reg : NULL;
	if (x->sys)	/* our 1 -> 0 below calls the unregfunc this leaves */
		sys_use(x, false);
	WRITE_ONCE(xp_tp_gated[x->gate], NULL);
	mutex_unlock(xp_tps_mutex);
	tracepoint_probe_unregister(x->tp, x->probe, x);
	list_del(&x->node);
	tracepoint_synchronize_unregister();
	free_tp(x);
}

/* ---- hooks ------------------------------------------------------------------ */

static struct xp_tp *tp_find(struct tracepoint *tp)
{
	struct xp_tp *x;

	list_for_each_entry(x, &xp_tps, node)
		if (x->tp == tp)
			return x;
	return NULL;
}

static void put_pages(struct xp_hook *h)
{
	struct xp_tphook *th = h->tph;
	unsigned int i;

	for (i = 0; i < th->xtp->nr_sites; i++) {
		if (th->pages[i][1])
			xp_view_put_page(h->view, th->pages[i][1]);
		if (th->pages[i][0])
			xp_view_put_page(h->view, th->pages[i][0]);
	}
}

/* The copies of every page a site's bytes are on; and no other hook there. */
static int get_pages(struct xp_hook *h, struct netlink_ext_ack *extack)
{
	struct xp_tphook *th = h->tph;
	unsigned int i;

	for (i = 0; i < th->xtp->nr_sites; i++) {
		const struct xp_tp_site *s = &th->xtp->sites[i];
		struct xp_hook *o = xp_hook_overlapping(h->view, s->addr, s->addr + s->len);
		struct xp_tpage *t;

		if (o) {
			NL_SET_ERR_MSG_FMT(extack, "hook %u is on a call site of this tracepoint", o->id);
			return -EBUSY;
		}
		t = xp_view_get_page(h->view, s->addr & PAGE_MASK, extack);
		if (IS_ERR(t))
			return PTR_ERR(t);
		th->pages[i][0] = t;
		if ((s->addr & PAGE_MASK) != ((s->addr + s->len - 1) & PAGE_MASK)) {
			t = xp_view_get_page(h->view, (s->addr & PAGE_MASK) + PAGE_SIZE, extack);
			if (IS_ERR(t))
				return PTR_ERR(t);
			th->pages[i][1] = t;
		}
	}
	return 0;
}

/*
 * The tracepoint of @spec ("CATEGORY:NAME" or "NAME"), whether a view hooks
 * it already or not (*@fresh: not yet).
 */
static struct xp_tp *tp_get(const char *spec, bool *fresh, struct netlink_ext_ack *extack)
{
	const char *colon = strchr(spec, ':'), *sys;
	struct tp_lookup l = { .name = colon ? colon + 1 : spec };
	struct module *mod = NULL;
	struct xp_tp *x;

	for_each_kernel_tracepoint(match_tp, &l);
	if (!l.tp) {	/* a module's, with a reference on the module */
		l.tp = xp_module_tracepoint(l.name, &mod, extack);
		if (IS_ERR(l.tp))
			return ERR_CAST(l.tp);
	}
	if (!l.tp) {
		NL_SET_ERR_MSG_FMT(extack, "no tracepoint '%s' in the kernel or a loaded module",
				   l.name);
		return ERR_PTR(-ENOENT);
	}
	x = tp_find(l.tp);
	sys = x ? x->system : tp_system(l.tp);
	if (colon && (!sys || strlen(sys) != colon - spec || strncmp(sys, spec, colon - spec))) {
		NL_SET_ERR_MSG_FMT(extack, "tracepoint '%s' is in category '%s', not '%.*s'",
				   l.name, sys ?: "(none)", (int)(colon - spec), spec);
		module_put(mod);
		return ERR_PTR(-ENOENT);
	}
	*fresh = !x;
	if (x) {
		module_put(mod);	/* x holds one */
		return x;
	}
	return new_tp(l.tp, mod, sys, extack);
}

/*
 * hook add PID tracepoint:[CATEGORY:]NAME. Under xp_views_lock, from an
 * untraced caller (netlink.c): its CR3 reads the shared text, which is
 * what the key's update checks.
 */
struct xp_hook *xp_tphook_add(struct xp_view *v, const char *spec, const u32 *offp,
			      u64 cookie, u32 flags, struct netlink_ext_ack *extack)
{
	struct xp_tphook *th;
	struct xp_hook *h, *o;
	const char *why;
	struct xp_tp *x;
	bool fresh;
	int err;

	lockdep_assert_held(&xp_views_lock);
	if (xp_tp_missing) {
		xp_set_msg(extack, xp_tp_missing);
		return ERR_PTR(-EOPNOTSUPP);
	}
	if (offp || (flags & ~XPROBES_F_ANY_CONTEXT)) {
		NL_SET_ERR_MSG(extack, "a tracepoint hook takes no offset, --return, --trap or --records");
		return ERR_PTR(-EINVAL);
	}
	/* The invariant leans on the mirror (coherence.c's kprobe on __text_poke) */
	why = xp_kprobes_broken();
	if (why) {
		xp_set_msg(extack, why);
		return ERR_PTR(-EOPNOTSUPP);
	}
	x = tp_get(spec, &fresh, extack);
	if (IS_ERR(x))
		return ERR_CAST(x);
	list_for_each_entry(o, &v->tp_hooks, vnode)
		if (o->tph->xtp == x) {
			NL_SET_ERR_MSG_FMT(extack, "this view already has hook %u on this tracepoint", o->id);
			err = -EEXIST;
			goto fail_tp;
		}

	h = xp_hook_new(v, cookie, flags);
	if (!h) {
		err = -ENOMEM;
		goto fail_tp;
	}
	th = kzalloc(th_bytes(x), GFP_KERNEL_ACCOUNT);
	if (!th) {
		err = -ENOMEM;
		goto fail_hook;
	}
	atomic64_add(th_bytes(x), &xp_mem_bytes);
	h->tph = th;
	th->h = h;
	th->xtp = x;
	h->addr = x->sites[0].addr;
	snprintf(h->sym, sizeof(h->sym), "%s:%s", x->system ?: "", x->tp->name);
	err = get_pages(h, extack);
	if (err)
		goto fail_pages;
	err = xp_hook_publish(h);
	if (err)
		goto fail_pages;
	if (fresh) {
		err = start_tp(x, extack);
		if (err)
			goto fail_id;
	}
	x->users++;
	list_add_tail_rcu(&h->vnode, &v->tp_hooks);
	mutex_lock(xp_tps_mutex);
	list_add_tail_rcu(&th->node, &x->hooks);
	th->linked = true;
	if (x->private) {
		if (x->sys)
			sys_flags_sync();	/* the view's threads: flagged */
		solo_update(x);
		write_sites(th, true);
	} else {
		settle(x);
	}
	mutex_unlock(xp_tps_mutex);
	xp_tables_check(NULL);
	return h;

fail_id:
	xp_hook_unpublish(h);
fail_pages:
	put_pages(h);
	atomic64_sub(th_bytes(x), &xp_mem_bytes);
	kfree(th);
fail_hook:
	xp_hook_free(h);
fail_tp:
	if (fresh)
		free_tp(x);
	return ERR_PTR(err);
}

/*
 * Take @h's sites out of its view's copies and @h out of its tracepoint's
 * hooks (the probe may still see it until a grace period has passed). The
 * view's own list keeps it, for the int3 handler, until it is freed.
 * Under xp_views_lock.
 */
static void detach(struct xp_hook *h)
{
	struct xp_tphook *th = h->tph;
	struct xp_tp *x = th->xtp;

	if (!th->linked)
		return;
	mutex_lock(xp_tps_mutex);
	if (x->private)
		write_sites(th, false);
	list_del_rcu(&th->node);
	th->linked = false;
	solo_update(x);
	if (x->private && x->sys)
		sys_flags_sync();	/* the view's threads: no longer, unless another hook wants them */
	mutex_unlock(xp_tps_mutex);
}

/* After detach() and a grace period: the tracepoint's probe goes with its last hook. */
static void release(struct xp_hook *h)
{
	struct xp_tp *x = h->tph->xtp;

	xp_tphook_set_prog(h, NULL);
	atomic64_sub(th_bytes(x), &xp_mem_bytes);
	kfree(h->tph);
	h->tph = NULL;
	if (!--x->users)
		stop_tp(x);
}

/* hook del of a tracepoint hook. Under xp_views_lock. */
void xp_tphook_remove(struct xp_hook *h)
{
	detach(h);
	list_del_rcu(&h->vnode);
	xp_hook_unpublish(h);
	put_pages(h);
	/* The probe and the int3 handler may still hold it. */
	synchronize_rcu();
	release(h);
	xp_hook_free(h);
	xp_tables_check(NULL);
}

/* View teardown, before its tables go: every site back to the shared bytes. */
void xp_tphooks_disarm(struct xp_view *v)
{
	struct xp_hook *h;

	lockdep_assert_held(&xp_views_lock);
	list_for_each_entry(h, &v->tp_hooks, vnode)
		detach(h);
}

/* View teardown, after the grace period: its tracepoint hooks go. */
void xp_tphooks_free(struct xp_view *v)
{
	struct xp_hook *h, *n;

	lockdep_assert_held(&xp_views_lock);
	list_for_each_entry_safe(h, n, &v->tp_hooks, vnode) {
		list_del(&h->vnode);
		xp_hook_unpublish(h);
		release(h);
		xp_hook_free(h);
	}
}

/* What HOOK_GET says of a tracepoint hook: XPROBES_HOOK_TP* flags. */
u32 xp_tphook_flags(struct xp_hook *h)
{
	struct xp_tp *x = h->tph->xtp;

	/* A module that calls it, loaded later, links the key (jump_label_add_module()) */
	return XPROBES_HOOK_TP | (READ_ONCE(x->private) ? 0 : XPROBES_HOOK_TP_GLOBAL) |
	       (READ_ONCE(x->tp->key.type) & JUMP_TYPE_LINKED ? XPROBES_HOOK_TP_MODULES : 0);
}

/* The module that defines @h's tracepoint, or NULL (the core kernel's). */
struct module *xp_tphook_module(struct xp_hook *h)
{
	return h->tph->xtp->mod;
}

/* The tracepoint's sites in its defining text (HOOK_GET). */
u32 xp_tphook_sites(struct xp_hook *h)
{
	return h->tph->xtp->nr_sites;
}

/*
 * The program behind @fd for tracepoint hook @h, with a reference, or an
 * ERR_PTR and @extack set: what bpf_raw_tp_link_attach() and
 * bpf_probe_register() accept on this tracepoint. A raw_tp program whose
 * context reads stay within the tracepoint's arguments, or a tp_btf one
 * loaded for this very tracepoint (its BTF types are the arguments'); not
 * the writable kind (no tracepoint we take has a writable buffer), never a
 * sleepable one (the probe runs with preemption off).
 */
struct bpf_prog *xp_tphook_prog_get(struct xp_hook *h, int fd, struct netlink_ext_ack *extack)
{
	struct xp_tp *x = h->tph->xtp;
	struct bpf_prog *prog = bpf_prog_get_type_dev(fd, BPF_PROG_TYPE_RAW_TRACEPOINT, false);

	if (PTR_ERR_OR_ZERO(prog) == -EINVAL)
		prog = bpf_prog_get_type_dev(fd, BPF_PROG_TYPE_TRACING, false);
	if (IS_ERR(prog)) {
		NL_SET_ERR_MSG(extack, "not a raw_tp or tp_btf BPF program (load one with "
			       "SEC(\"raw_tp\") or SEC(\"tp_btf/NAME\"))");
		return prog;
	}
	if (xp_prog_sleepable(prog)) {
		NL_SET_ERR_MSG(extack, "a sleepable program cannot run at a tracepoint hook: "
			       "the probe runs with preemption off");
		goto refuse;
	}
	if (prog->type == BPF_PROG_TYPE_TRACING &&
	    (prog->expected_attach_type != BPF_TRACE_RAW_TP || !prog->aux->attach_func_name ||
	     strcmp(prog->aux->attach_func_name, x->tp->name))) {
		NL_SET_ERR_MSG_FMT(extack, "this tracing program is not a tp_btf one for '%s' "
				   "(load it with SEC(\"tp_btf/%s\"))", x->tp->name, x->tp->name);
		goto refuse;
	}
	if (prog->aux->max_ctx_offset > x->btp->num_args * sizeof(u64)) {
		NL_SET_ERR_MSG_FMT(extack, "the program reads %u bytes of context; the tracepoint "
				   "has %u arguments (%zu bytes)", prog->aux->max_ctx_offset,
				   x->btp->num_args, x->btp->num_args * sizeof(u64));
		goto refuse;
	}
	return prog;
refuse:
	bpf_prog_put(prog);
	return ERR_PTR(-EINVAL);
}

/*
 * Make tracepoint hook @h run @prog (from xp_tphook_prog_get(), its
 * reference moves to the hook), or nothing. Under xp_views_lock.
 */
int xp_tphook_set_prog(struct xp_hook *h, struct bpf_prog *prog)
{
	struct xp_tplink *l = NULL, *old;

	lockdep_assert_held(&xp_views_lock);
	if (prog) {
		l = kzalloc(sizeof(*l), GFP_KERNEL_ACCOUNT);
		if (!l)
			return -ENOMEM;
#if XP_TP_LINKS
		l->link.link.prog = prog;
		l->link.cookie = h->cookie;
#else
		l->prog = prog;
#endif
	}
	old = rcu_replace_pointer(h->tph->link, l, lockdep_is_held(&xp_views_lock));
	xp_hook_set_prog(h, prog);	/* puts the old one: freed after a grace period */
	if (old)
		kfree_rcu(old, rcu);
	return 0;
}

/* ---- what other parts ask ---------------------------------------------------- */

static const struct xp_tp_site *site_at(struct xp_tp *x, unsigned long addr)
{
	unsigned int lo = 0, hi = x->nr_sites;

	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;
		const struct xp_tp_site *s = &x->sites[mid];

		if (addr < s->addr)
			hi = mid;
		else if (addr >= s->addr + s->len)
			lo = mid + 1;
		else
			return s;
	}
	return NULL;
}

/*
 * An int3 at @addr in @v's copy: one of ours, on a site being written?
 * Send the CPU where the jump goes (see the top). Interrupts are off.
 */
bool xp_tp_int3(struct xp_view *v, struct pt_regs *regs, unsigned long addr)
{
	struct xp_hook *h;

	list_for_each_entry_rcu(h, &v->tp_hooks, vnode) {
		const struct xp_tp_site *s = site_at(h->tph->xtp, addr);

		if (s && s->addr == addr) {
			int3_emulate_jmp(regs, s->target);
			return true;
		}
	}
	return false;
}
NOKPROBE_SYMBOL(xp_tp_int3);

/* The audit (coherence.c): is @addr on a site of @v's tracepoint hooks? */
bool xp_tp_site_in(struct xp_view *v, unsigned long addr)
{
	struct xp_hook *h;

	list_for_each_entry(h, &v->tp_hooks, vnode)
		if (site_at(h->tph->xtp, addr))
			return true;
	return false;
}

/* A new hook of @v on bytes [@lo, @hi): is one of its tracepoints' sites there? */
bool xp_tp_sites_inside(struct xp_view *v, unsigned long lo, unsigned long hi)
{
	unsigned long a;

	for (a = lo; a < hi; a++)
		if (xp_tp_site_in(v, a))
			return true;
	return false;
}

/*
 * Module exit, after every view is gone: their hooks took our probes and
 * gates with them. A gate left behind would be called in freed text at the
 * next registration on its tracepoint: say so and take it out.
 */
void xp_tp_exit(void)
{
	int i;

	cancel_work_sync(&xp_solo_work);
	if (!xp_tps_mutex)
		return;
	mutex_lock(xp_tps_mutex);
	for (i = 0; i < XP_TP_MAX; i++)
		if (WARN_ON_ONCE(xp_tp_gated[i]))
			xp_tp_gated[i]->tp->regfunc = xp_tp_gated[i]->sys ? xp_sys_reg : NULL;
	if (WARN_ON_ONCE(xp_sys_users))
		for (i = 0; i < ARRAY_SIZE(xp_sys_tps); i++)
			xp_sys_tps[i]->unregfunc = xp_sys_unreg;
	mutex_unlock(xp_tps_mutex);
}

void xp_tp_init(void)
{
	xp_tps_mutex = (struct mutex *)xp_sym_lookup("tracepoints_mutex", NULL);
	xp_btp_start = (void *)xp_sym_lookup("__start__bpf_raw_tp", NULL);
	xp_btp_stop = (void *)xp_sym_lookup("__stop__bpf_raw_tp", NULL);
	xp_ftrace_events = (void *)xp_sym_lookup("ftrace_events", NULL);
	xp_event_mutex = (void *)xp_sym_lookup("event_mutex", NULL);
	xp_jump_table(&xp_jt_start, &xp_jt_stop);
	xp_noinstr[0] = xp_sym_lookup("__noinstr_text_start", NULL);
	xp_noinstr[1] = xp_sym_lookup("__noinstr_text_end", NULL);
	xp_entry[0] = xp_sym_lookup("__entry_text_start", NULL);
	xp_entry[1] = xp_sym_lookup("__entry_text_end", NULL);
	xp_irqentry[0] = xp_sym_lookup("__irqentry_text_start", NULL);
	xp_irqentry[1] = xp_sym_lookup("__irqentry_text_end", NULL);
	if (!xp_tps_mutex)
		xp_tp_missing = "tracepoints_mutex not found: tracepoint hooks are off";
	else if (!xp_btp_start || xp_btp_stop <= xp_btp_start)
		xp_tp_missing = "the BPF raw tracepoint table not found: tracepoint hooks are off";
	else if (!xp_ftrace_events || !xp_event_mutex)
		xp_tp_missing = "the trace event list not found: tracepoint hooks are off";
	else if (!xp_jt_start)
		xp_tp_missing = "the jump-label table not found: tracepoint hooks are off";
	else if (!xp_noinstr[0] || !xp_entry[0] || !xp_irqentry[0])
		xp_tp_missing = "the kernel's noinstr or entry text not found: tracepoint hooks are off";
}

#ifdef XPROBES_KUNIT
#include "tracepoint_kunit.c"
#endif
