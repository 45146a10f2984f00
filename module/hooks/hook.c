// SPDX-License-Identifier: GPL-2.0
/*
 * Hookpoints: an int3 in a view's private copy of a kernel text page (which
 * jump.c may then turn into a jump: a call hook over one instruction, a jump
 * hook over several).
 *
 * A hook may only sit where kprobes itself would put a probe (an instruction
 * boundary outside the kprobe blacklist, off jump-label, static-call,
 * alternatives and BUG sites), never on an ftrace fentry site (ftrace patches
 * it at run time), never on ENDBR, and only on an instruction xprobes can run
 * out of line or emulate. kprobes is asked by registering a disabled probe at
 * the address and removing it again: it answers with the kernel's own rules
 * and its own instruction decoder, whose length must agree with ours.
 *
 * Locking: everything here runs under xp_views_lock; the trap handler finds
 * hooks through view->hooks under RCU, and a hook is freed only after its int3
 * is gone from the copy, every CPU has serialised, and an RCU grace period.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/extable.h>
#include <linux/idr.h>
#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <asm/ibt.h>
#include <asm/text-patching.h>
#include <net/netlink.h>
#include "xprobes.h"
#include "cover.h"

static DEFINE_IDR(xp_hook_ids);		/* under xp_views_lock */
unsigned int xp_nr_hooks;		/* under xp_views_lock */

#ifdef XPROBES_KUNIT
/* KUnit only: runs between taking the copy and arming the hook (views/view_kunit.c). */
void (*xp_test_before_arm)(struct xp_hook *h);
#endif

/* Does the kernel expect a fault at @addr (exception table entry)? */
static bool in_extable(unsigned long addr)
{
	const struct exception_table_entry *lo = xp_k.ex_start, *hi = xp_k.ex_stop;

	while (lo < hi) {
		const struct exception_table_entry *mid = lo + (hi - lo) / 2;
		unsigned long insn = (unsigned long)&mid->insn + mid->insn;

		if (insn == addr)
			return true;
		if (insn < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static const char *kprobe_refusal(int err)
{
	switch (err) {
	case -EILSEQ:
		return "not an instruction boundary";
	case -EINVAL:
		return "kprobes refuses this address (blacklisted, noinstr or entry code, a jump label, static call or BUG site)";
	case -ENOENT:
		return "not a kernel function address";
	case -EBUSY:
		return "kprobes is busy with this address";
	default:
		return "kprobes refuses this address";
	}
}

#define DISPATCH_PATH_MSG "xprobes' own dispatch path runs this function: a hook here would trap again before it could be handled"

/*
 * Every extack message with a format must fit NETLINK_MAX_FMTMSG_LEN (80);
 * longer ones are static strings. xprobectl names the target itself.
 *
 * Check @addr and decode the instruction there into @h (insn, orig bytes).
 * Reads the shared text through the direct map, whatever the caller's view;
 * @func is the function as built (xp_text_recovered(): NULL for a return
 * hook's, in noinstr code no kprobe reaches), whose bytes the instruction
 * must still have in the shared text: not someone's int3 or jump.
 */
static int validate(struct xp_hook *h, const u8 *func, unsigned long start, unsigned long addr,
		    const struct xp_kp_answer *kp, struct netlink_ext_ack *extack)
{
	u32 first;

	if (!xp_is_core_text(addr, 1) && !h->mod) {
		NL_SET_ERR_MSG(extack, "not in the text of the kernel or of a loaded module");
		return -ERANGE;
	}
	xp_text_read(&first, start, sizeof(first));
	if (addr < start + (is_endbr(first) ? ENDBR_INSN_SIZE : 0)) {
		NL_SET_ERR_MSG(extack, "would overwrite the function's ENDBR");
		return -EINVAL;
	}
	if (kp->err) {
		xp_set_msg(extack, kprobe_refusal(kp->err));
		return kp->err == -EILSEQ ? -EINVAL : kp->err;
	}
	if (xp_on_dispatch_path(addr)) {
		NL_SET_ERR_MSG(extack, DISPATCH_PATH_MSG);
		return -EINVAL;
	}
	if (kp->flags & KPROBE_FLAG_FTRACE) {
		NL_SET_ERR_MSG(extack, "an ftrace (fentry) site: the kernel patches it at run time");
		return -EINVAL;
	}
	xp_text_read(h->orig, addr, sizeof(h->orig));
	if (func && memcmp(h->orig, func + (addr - start), kp->size)) {
		NL_SET_ERR_MSG(extack, "another kprobe's int3 or jump is on this instruction");
		return -EBUSY;
	}
	if (xp_insn_decode(&h->insn, h->orig, XP_INSN_MAX)) {
		NL_SET_ERR_MSG(extack, "cannot decode the instruction");
		return -EINVAL;
	}
	if (h->insn.len != kp->size) {
		NL_SET_ERR_MSG_FMT(extack, "instruction length mismatch (xprobes %u, kernel %u)",
				   h->insn.len, kp->size);
		return -EINVAL;
	}
	if (h->insn.kind == XP_INSN_REFUSE) {
		xp_set_msg(extack, h->insn.why);
		return -EINVAL;
	}
	if (h->mod ? xp_module_extable(addr) : in_extable(addr)) {
		NL_SET_ERR_MSG(extack, "the instruction may fault on purpose (exception table entry)");
		return -EINVAL;
	}
	return 0;
}

/* A hook of @v at an address in [@lo, @hi), if any. */
static struct xp_hook *hook_inside(struct xp_view *v, unsigned long lo, unsigned long hi)
{
	struct xp_hook *h;

	list_for_each_entry(h, &v->hook_list, vnode)
		if (h->addr >= lo && h->addr < hi)
			return h;
	return NULL;
}

/* A hook of @v whose jump covers @addr behind its first byte, if any. */
static struct xp_hook *covering_hook(struct xp_view *v, unsigned long addr)
{
	struct xp_hook *h;

	list_for_each_entry(h, &v->hook_list, vnode)
		if (addr > h->addr && addr < h->addr + h->cover)
			return h;
	return NULL;
}

/* Does an exception fixup land inside (@lo, @hi)? */
static bool fixup_inside(unsigned long lo, unsigned long hi)
{
	const struct exception_table_entry *e;

	for (e = xp_k.ex_start; e < xp_k.ex_stop; e++) {
		unsigned long fixup = (unsigned long)&e->fixup + e->fixup;

		if (fixup > lo && fixup < hi)
			return true;
	}
	return false;
}

/*
 * A jump over several instructions (cover.c decided from the decoded
 * function): each covered instruction must also be one kprobes would probe
 * (no jump-label, static-call, ftrace or BUG site among them: the kernel
 * patches those) and none may fault on purpose, nor any fixup land inside.
 * Returns why not, or NULL.
 */
static const char *jump_allowed(struct xp_hook *h)
{
	unsigned long starts[XP_COVER_INSNS];
	struct xp_kp_answer ans[XP_COVER_INSNS];
	int i, n = xp_cover_starts(h, starts);

	if (n < 0)
		return "a covered instruction does not decode";
	for (i = 0; i < n; i++)
		if (h->mod ? xp_module_extable(starts[i]) : in_extable(starts[i]))
			return "a covered instruction may fault on purpose (exception table entry)";
	if (fixup_inside(h->addr, h->addr + h->cover) ||
	    (h->mod && xp_module_fixup_inside(h->addr, h->addr + h->cover)))
		return "an exception fixup lands inside the covered bytes";
	/* The first one was asked already, when the hook was placed. */
	xp_kprobe_ask(starts + 1, ans, n - 1);
	for (i = 0; i < n - 1; i++) {
		if (ans[i].err)
			return "kprobes refuses a covered instruction (a jump-label, static-call or BUG site, or blacklisted)";
		if (ans[i].flags & KPROBE_FLAG_FTRACE)
			return "a covered instruction is an ftrace site";
	}
	return NULL;
}

/*
 * Another way into the bytes a jump at @h would write or cover than through
 * @h, which kallsyms knows and the decoder cannot see: a symbol that starts
 * inside them (srso_untrain_ret's movabs holds srso_safe_ret, reached by
 * calls of its own), or an instruction that runs past the end of its
 * symbol. Returns why not, or NULL.
 */
const char *xp_entry_inside(struct xp_hook *h)
{
	unsigned int n = max_t(unsigned int, h->cover, XP_JUMP_SIZE), i;
	unsigned long off, size;

	if (!xp_sym_at(h->addr, NULL, &off, &size))
		return "the instruction's symbol is not known";
	if (off + h->cover > size)
		return "the instruction runs past the end of its symbol";
	for (i = 1; i < n; i++)
		if (xp_sym_at(h->addr + i, NULL, &off, &size) && !off)
			return "a symbol starts inside the bytes the jump would replace";
	return NULL;
}

/*
 * Decide whether @h becomes a call or jump hook (->call_ok, ->cover,
 * ->ninsn) and take its entry. Anything that rules a jump out leaves an int3
 * hook, which works everywhere.
 */
static void choose_kind(struct xp_view *v, struct xp_hook *h, u32 flags, const u8 *func,
			unsigned long start, unsigned long size)
{
	const char *why;

	if (h->redirect) {	/* the guard: a jump over its one instruction, or nothing */
		h->cover = h->insn.len;
		h->ninsn = 1;
		h->call_ok = h->insn.len >= XP_JUMP_SIZE && h->insn.kind != XP_INSN_RET;
		h->why_int3 = h->call_ok ? NULL : "the guard's instruction is too short for a jump";
		return;
	}
	h->call_ok = xp_call_possible(h, flags, func, start, size, &why);
	if (h->call_ok && h->ninsn > 1) {
		why = jump_allowed(h);
		h->call_ok = !why;
	}
	if (h->call_ok) {
		why = xp_entry_inside(h);
		h->call_ok = !why;
	}
	if (h->call_ok && h->ninsn > 1 && hook_inside(v, h->addr + 1, h->addr + h->cover)) {
		why = "another hook of this view is on an instruction the jump would cover";
		h->call_ok = false;
	}
	/* Before the first jump over several instructions: the view's guard. */
	if (h->call_ok && h->ninsn > 1) {
		why = xp_guard_get(v);
		h->call_ok = !why;
	}
	if (h->call_ok && h->ninsn > 1 &&
	    (xp_hook_at(v, h->addr) || hook_inside(v, h->addr + 1, h->addr + h->cover))) {
		why = "the view's guard is on an instruction the jump would cover";
		h->call_ok = false;
	}
	if (h->call_ok && !xp_jentry_get(h)) {
		why = "all jump-hook entries are in use";
		h->call_ok = false;
	}
	if (!h->call_ok) {
		h->cover = h->insn.len;
		h->ninsn = 1;
	}
	h->why_int3 = why;
}

/* The hook of @v at @addr, if any. Under xp_views_lock or RCU. */
struct xp_hook *xp_hook_at(struct xp_view *v, unsigned long addr)
{
	struct xp_hook *h;

	hash_for_each_possible_rcu(v->hooks, h, hnode, addr)
		if (h->addr == addr)
			return h;
	return NULL;
}

/*
 * What kprobes said about @addr when a hook was placed there, in any view.
 * xp_kprobe_ask() takes it instead of asking again: a question is a
 * registered probe, and kprobes claims every int3 at a registered probe's
 * address before our handler sees it, and runs the instruction out of line
 * there; at the first byte of a jump being taken apart (an int3 over the
 * jump's old bytes) that would land inside them (readers.c). Under
 * xp_views_lock (which every question and every jump but a kprobe's yield
 * goes in and out under) or RCU.
 */
bool xp_hook_answer(unsigned long addr, struct xp_kp_answer *ans)
{
	struct xp_view *v;
	struct xp_hook *h;
	bool found = false;

	rcu_read_lock();
	list_for_each_entry_rcu(v, &xp_views, node) {
		h = xp_hook_at(v, addr);
		if (h && h->kp_asked) {
			ans->err = 0;
			ans->flags = 0;		/* not an ftrace site: it would have been refused */
			ans->size = h->insn.len;
			found = true;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}

/*
 * Does the view's copy still hold the shared text's bytes where the hook
 * goes? Every covered byte for a jump (in both pages where it crosses),
 * the bytes on the hook's page for an int3. Under text_mutex.
 */
static bool copy_is_orig(struct xp_hook *h)
{
	unsigned int i, n = h->cover;

	if (!h->tpage2)
		n = min_t(unsigned long, n, PAGE_SIZE - offset_in_page(h->addr));
	for (i = 0; i < n; i++)
		if (*xp_hook_byte(h, i) != h->orig[i])
			return false;
	return true;
}

/* Give back the copies the hook held (under xp_views_lock). */
static void put_pages(struct xp_hook *h)
{
	if (h->tpage2)
		xp_view_put_page(h->view, h->tpage2);
	xp_view_put_page(h->view, h->tpage);
}

/* Memory is accounted to hooks from allocation until unlink_hook(). */
static void free_hook(struct xp_hook *h)
{
	free_percpu(h->stats);
	kfree(h);
}

static void free_hook_rcu(struct rcu_head *rcu)
{
	free_hook(container_of(rcu, struct xp_hook, rcu));
}

/*
 * Which scheduler hook hands the view's user-hook records over (urec.c):
 * the one where the leaving thread is current and its view's text runs,
 * the first thing after the switch, or an exiting thread's last chance
 * (do_exit, before exit_mm lets the process's memory go); and, optional,
 * a wakeup by one of the process's threads (try_to_wake_up), so that a
 * program there sees the waker's current function. At the functions'
 * entries only: switch_mm_irqs_off must hand them over before it loads
 * the next CR3.
 */
static u8 urec_role(const char *sym, const u32 *offp, u32 flags, struct netlink_ext_ack *extack)
{
	if (offp || (flags & XPROBES_F_RETURN)) {
		NL_SET_ERR_MSG(extack, "a hook that hands records over sits at its function's entry");
		return 0;
	}
	if (!strcmp(sym, "switch_mm_irqs_off"))
		return XP_UREC_OUT;
	/* Its clones that keep prev as the first argument (the IN role reads it) */
	if (!strcmp(sym, "finish_task_switch") || !strcmp(sym, "finish_task_switch.isra.0"))
		return XP_UREC_IN;
	if (!strcmp(sym, "do_exit"))
		return XP_UREC_EXIT;
	if (!strcmp(sym, "try_to_wake_up"))
		return XP_UREC_WAKE;
	/* Where a uprobe's and (6.11 on, by system call) a uretprobe's handlers run */
	if (!strcmp(sym, "uprobe_notify_resume") || !strcmp(sym, "uprobe_handle_trampoline"))
		return XP_UREC_UPROBE;
	NL_SET_ERR_MSG(extack, "records are handed over only at switch_mm_irqs_off, "
		       "finish_task_switch, do_exit, try_to_wake_up, uprobe_notify_resume "
		       "and uprobe_handle_trampoline");
	return 0;
}

/*
 * Retiring a hook that was a live jump: the view's tasks may still be
 * preempted in its entry, handler or slot (RCU-tasks waits for them), and
 * idle tasks and interrupts may be there with preemption off (RCU waits for
 * those). Its entry and slot are given back, and it is freed, after both;
 * the view outlives the callbacks (view.c waits for them at teardown).
 */
static void retire_hook_rcu(struct rcu_head *rcu)
{
	struct xp_hook *h = container_of(rcu, struct xp_hook, rcu);

	xp_jentry_put(h);
	xp_xol_release(h->view, h);
	free_hook(h);
}

static void retire_hook_tasks(struct rcu_head *rcu)
{
	call_rcu(rcu, retire_hook_rcu);
}

/*
 * The pieces every hook is made of, at one instruction (below) or a
 * tracepoint's (hooks/tracepoint.c): a new one, accounted (xp_hook_free()
 * gives it back); its id and the counts (xp_hook_unpublish() takes them
 * back).
 */
struct xp_hook *xp_hook_new(struct xp_view *v, u64 cookie, u32 flags)
{
	struct xp_hook *h = kzalloc(sizeof(*h), GFP_KERNEL_ACCOUNT);

	if (!h)
		return NULL;
	h->stats = alloc_percpu(struct xp_hook_stats);
	if (!h->stats) {
		kfree(h);
		return NULL;
	}
	atomic64_add(sizeof(*h), &xp_mem_bytes);
	h->view = v;
	h->cookie = cookie;
	h->any_context = flags & XPROBES_F_ANY_CONTEXT;
	h->slot = -1;
	h->jentry = -1;
	return h;
}

void xp_hook_free(struct xp_hook *h)
{
	atomic64_sub(sizeof(*h), &xp_mem_bytes);
	free_hook(h);
}

int xp_hook_publish(struct xp_hook *h)
{
	int id = idr_alloc_cyclic(&xp_hook_ids, h, 1, INT_MAX, GFP_KERNEL);

	if (id < 0)
		return id;
	h->id = id;
	h->view->nr_hooks++;
	xp_nr_hooks++;
	return 0;
}

void xp_hook_unpublish(struct xp_hook *h)
{
	idr_remove(&xp_hook_ids, h->id);
	h->view->nr_hooks--;
	xp_nr_hooks--;
}

/* A hook of @v whose bytes overlap [@lo, @hi), if any. */
struct xp_hook *xp_hook_overlapping(struct xp_view *v, unsigned long lo, unsigned long hi)
{
	struct xp_hook *h;

	list_for_each_entry(h, &v->hook_list, vnode)
		if (h->addr < hi && h->addr + max_t(unsigned int, h->cover, h->insn.len) > lo)
			return h;
	return NULL;
}

/*
 * A records hook's flags against the view's: one consumer reads the view's
 * records, in one layout (calls folded or not, sums or not) for as long
 * as the process has its buffers (their routines were written for it),
 * not only while hooks hand them over. Its role (XP_UREC_*), 0 if refused.
 */
static u8 records_role(struct xp_view *v, const char *sym, const u32 *offp, u32 flags,
		       struct netlink_ext_ack *extack)
{
	bool set = v->urec_roles || v->urec;
	u8 role = urec_role(sym, offp, flags, extack);

	if (!role)
		return 0;
	if (set && v->urec_calls != !!(flags & XPROBES_F_CALLS)) {
		if (v->urec_calls)
			NL_SET_ERR_MSG(extack, "this view's records are handed over with calls "
				       "folded: add all its hooks that hand them over with "
				       "the calls flag");
		else
			NL_SET_ERR_MSG(extack, "this view's records are handed over as entries "
				       "and returns: add all its hooks that hand them over "
				       "without the calls flag");
		return 0;
	}
	if ((flags & XPROBES_F_SUMS) && !(flags & XPROBES_F_CALLS)) {
		NL_SET_ERR_MSG(extack, "sums in the process need the calls flag too");
		return 0;
	}
	if (set && v->urec_sums != !!(flags & XPROBES_F_SUMS)) {
		if (v->urec_sums)
			NL_SET_ERR_MSG(extack, "this view's process sums calls itself: add "
				       "all its hooks that hand records over with the "
				       "sums flag");
		else
			NL_SET_ERR_MSG(extack, "this view's records come without sums: add "
				       "all its hooks that hand them over without the "
				       "sums flag");
		return 0;
	}
	return role;
}

/* Where a hook goes: found from its name (and offset) by hook_site(). */
struct hook_site {
	const char *sym;		/* as hook list names it */
	char full[64];			/* MODULE:SYMBOL, for a module's */
	char modname[MODULE_NAME_LEN];	/* "" in the kernel's own text */
	unsigned long start, size;	/* the function (size 0: a return site's) */
	unsigned long addr;		/* the instruction hooked */
	u32 off;			/* ... from start */
	struct xp_kp_answer kp;		/* what kprobes said of it */
};

/* A return hook: the function's return site (retsite.c). */
static int return_site(struct hook_site *st, const u32 *offp, struct netlink_ext_ack *extack)
{
	struct xp_insn insn;

	if (offp) {
		NL_SET_ERR_MSG(extack, "a return hook takes no offset");
		return -EINVAL;
	}
	st->addr = xp_retsite_find(st->sym, &st->sym, &st->off, extack);
	if (!st->addr)
		return -EINVAL;
	st->start = st->addr - st->off;
	/* kprobes refuses all of noinstr: the decoder vouches alone (retsite.c). */
	memset(&st->kp, 0, sizeof(st->kp));
	if (!xp_insn_decode(&insn, xp_text(st->addr), XP_INSN_MAX))
		st->kp.size = insn.len;
	return 0;
}

/* A function's instruction (its body's first, or at *@offp): kprobes asked. */
static int function_site(struct hook_site *st, const u32 *offp, struct netlink_ext_ack *extack)
{
	int err = xp_sym_resolve(st->sym, &st->start, &st->size);

	if (err == -ENOENT || (!err && !st->size)) {
		NL_SET_ERR_MSG(extack, "unknown kernel function");
		return -ENOENT;
	}
	/* Init text is freed after boot and data is not code: read neither. */
	if (err || (!xp_is_core_text(st->start, st->size) &&
		    (!xp_in_modspace(st->start) ||
		     !xp_module_of(st->start, st->size, st->modname, extack)))) {
		if (err || !xp_in_modspace(st->start))
			NL_SET_ERR_MSG(extack, "not a function in the text of the kernel or of a loaded module (init code and data cannot be hooked)");
		return -EINVAL;
	}
	if (st->modname[0] && !strchr(st->sym, ':')) {
		/* A plain name kprobes resolved to the first of several modules'. */
		if (xp_modules_with(st->sym) > 1) {
			NL_SET_ERR_MSG_FMT(extack, "in several modules: name one, as %.16s:%.24s",
					   st->modname, st->sym);
			return -EINVAL;
		}
		/* A module's: named MODULE:SYMBOL in hook list. */
		snprintf(st->full, sizeof(st->full), "%s:%s", st->modname, st->sym);
		st->sym = st->full;
	}
	if (offp && *offp >= st->size) {
		NL_SET_ERR_MSG_FMT(extack, "offset %#x is beyond the end of the function (size %#lx)",
				   *offp, st->size);
		return -ERANGE;
	}
	/*
	 * Before kprobes is asked: a probe registered there, even a
	 * disabled one, has kprobes decode up to the next symbol to see
	 * whether it could optimize it (dispatch.c), and the return
	 * thunks lie far from theirs (a megabyte of int3 padding after
	 * srso_alias_return_thunk on 6.12): the first add there took 20 s
	 * on the debug kernel, 0.6 s once the answer was kept.
	 */
	if (xp_on_dispatch_path(st->start)) {
		NL_SET_ERR_MSG(extack, DISPATCH_PATH_MSG);
		return -EINVAL;
	}
	if (offp) {
		st->off = *offp;
		st->addr = st->start + st->off;
		xp_kprobe_ask(&st->addr, &st->kp, 1);
	} else {
		st->addr = xp_func_body_ask(st->start, &st->kp);
		st->off = st->addr - st->start;
	}
	return 0;
}

/* A new hook of @v at @st, not yet checked, published or placed. */
static struct xp_hook *hook_make(struct xp_view *v, const struct hook_site *st, u64 cookie,
				 u32 flags, u8 role)
{
	struct xp_hook *h = xp_hook_new(v, cookie, flags);

	if (!h)
		return NULL;
	h->addr = st->addr;
	h->urec_role = role;
	if (flags & XP_F_UEVENTS)
		h->internal = xp_uevent_fire;	/* before it is armed */
	if (flags & XP_F_USIGRET)
		h->internal = xp_usigret_fire;
	if (flags & XP_F_GUARD)
		xp_guard_setup(h);
	h->special = h->urec_role || h->internal;
	h->mod = !!st->modname[0];
	strscpy(h->sym, st->sym, sizeof(h->sym));
	h->sym_off = st->off;
	return h;
}

/*
 * May @h go at its address in @v: no hook of the view there or covering it,
 * the instruction one xprobes can run (validate(), against @func, the
 * function as built), no call site of a tracepoint hook of the view
 * under it, kprobes not broken?
 */
static int hook_check(struct xp_view *v, struct xp_hook *h, const u8 *func,
		      struct hook_site *st, u32 flags, struct netlink_ext_ack *extack)
{
	struct xp_hook *dup = xp_hook_at(v, st->addr);
	const char *why;
	int err;

	if (dup) {
		NL_SET_ERR_MSG_FMT(extack, "this view already has hook %u at this address", dup->id);
		return -EEXIST;
	}
	err = validate(h, func, st->start, st->addr, &st->kp, extack);
	if (err)
		return err;
	h->kp_asked = !(flags & XPROBES_F_RETURN);
	/* Its copy jumps there for a tracepoint hook of the view (hooks/tracepoint.c). */
	if (xp_tp_sites_inside(v, st->addr,
			       st->addr + max_t(unsigned int, h->insn.len, XP_JUMP_SIZE))) {
		NL_SET_ERR_MSG(extack, "a tracepoint hook of this view has a call site here");
		return -EBUSY;
	}
	/* An instruction boundary, but its int3 would land inside that hook's jump. */
	dup = covering_hook(v, st->addr);
	if (dup) {
		NL_SET_ERR_MSG_FMT(extack, "hook %u's jump covers this instruction (place that one with --trap)",
				   dup->id);
		return -EBUSY;
	}
	/* After kprobes was asked (under kprobe_mutex): sees a disarm before it. */
	why = xp_kprobes_broken();
	if (why) {
		xp_set_msg(extack, why);
		return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * The published @h's place in @v's copy: its page (and the next one's,
 * for a call whose jump crosses into it), its kind (choose_kind(), which
 * may take a jump entry) and out-of-line slot. On error the caller gives
 * back what was taken: all of it once h->tpage is set.
 */
static int hook_place(struct xp_view *v, struct xp_hook *h, u32 flags, const u8 *func,
		      const struct hook_site *st, struct netlink_ext_ack *extack)
{
	struct xp_tpage *t = xp_view_get_page(v, st->addr & PAGE_MASK, extack);
	int err;

	if (IS_ERR(t))
		return PTR_ERR(t);
	h->tpage = t;
	choose_kind(v, h, flags, func, st->start, st->size);
	if (h->insn.kind == XP_INSN_SLOT || h->call_ok) {
		err = xp_xol_alloc(v, h, extack);
		if (err)
			return err;
	}
	if (h->call_ok && xp_jump_crosses(st->addr)) {
		/* The jump's last bytes go in the next page's copy. */
		t = xp_view_get_page(v, (st->addr & PAGE_MASK) + PAGE_SIZE, extack);
		if (IS_ERR(t))
			return PTR_ERR(t);
		h->tpage2 = t;
	}
	return 0;
}

/*
 * Check the copy, list, then arm (the handler must exist before the int3
 * does), all in one hold of text_mutex: a kernel write to these bytes
 * (someone's kprobe) comes either before, and the check sees it, or
 * after, and finds the hook published and displaces it (coherence.c).
 * Between two holds it would be overwritten by our int3, and later by our
 * call.
 */
static int hook_arm(struct xp_view *v, struct xp_hook *h, u32 flags,
		    struct netlink_ext_ack *extack)
{
	u8 *copy = xp_hook_copy(h);

	mutex_lock(xp_k.text_mutex);
	if (!copy_is_orig(h)) {
		mutex_unlock(xp_k.text_mutex);
		/* Another hook's int3 cannot be here (no duplicates), so the text moved. */
		NL_SET_ERR_MSG(extack, "kernel text changed while the hook was being placed: try again");
		return -EAGAIN;
	}
	hash_add_rcu(v->hooks, &h->hnode, h->addr);
	list_add_tail(&h->vnode, &v->hook_list);
	if (h->urec_role && !v->urec_roles && !v->urec) {
		WRITE_ONCE(v->urec_calls, !!(flags & XPROBES_F_CALLS));
		WRITE_ONCE(v->urec_sums, !!(flags & XPROBES_F_SUMS));
	}
	v->urec_roles |= h->urec_role;
	WRITE_ONCE(copy[0], INT3_INSN_OPCODE);
	mutex_unlock(xp_k.text_mutex);
	xp_sync_cores();
	if (h->call_ok)
		xp_call_arm(h);
	return 0;
}

/*
 * A hook of @v on @sym (at *@offp from its start, else its body's first
 * instruction; "tracepoint:NAME" a tracepoint's, hooks/tracepoint.c):
 * flags and site checked, the hook made, checked, published, placed in
 * the view's copy and armed. Under xp_views_lock.
 */
struct xp_hook *xp_hook_add(struct xp_view *v, const char *sym, const u32 *offp,
			    u64 cookie, u32 flags, struct netlink_ext_ack *extack)
{
	struct hook_site st = { .sym = sym };
	struct xp_hook *h;
	u8 *func, role = 0;
	int err;

	lockdep_assert_held(&xp_views_lock);
	if (!strncmp(sym, XP_TP_PREFIX, strlen(XP_TP_PREFIX)))
		return xp_tphook_add(v, sym + strlen(XP_TP_PREFIX), offp, cookie, flags, extack);
	if (flags & XPROBES_F_RECORDS) {
		role = records_role(v, sym, offp, flags, extack);
		if (!role)
			return ERR_PTR(-EINVAL);
	} else if (flags & (XPROBES_F_CALLS | XPROBES_F_SUMS)) {
		NL_SET_ERR_MSG(extack, "folding calls and sums are for the hooks that hand records "
			       "over (the records flag)");
		return ERR_PTR(-EINVAL);
	}
	err = flags & XPROBES_F_RETURN ? return_site(&st, offp, extack) :
					function_site(&st, offp, extack);
	if (err)
		return ERR_PTR(err);

	h = hook_make(v, &st, cookie, flags, role);
	if (!h)
		return ERR_PTR(-ENOMEM);
	/* The function as built (decoded for a jump's cover too, jump.c). */
	func = xp_text_recovered(st.start, st.size);
	err = hook_check(v, h, func, &st, flags, extack);
	if (err)
		goto fail;
	err = xp_hook_publish(h);
	if (err)
		goto fail;
	err = hook_place(v, h, flags, func, &st, extack);
	if (!err) {
#ifdef XPROBES_KUNIT
		if (xp_test_before_arm)
			xp_test_before_arm(h);
#endif
		err = hook_arm(v, h, flags, extack);
	}
	if (err)
		goto fail_placed;
	xp_tables_check(NULL);
	kvfree(func);
	return h;

fail_placed:
	if (h->tpage) {
		xp_xol_release(v, h);
		xp_jentry_put(h);	/* never a jump: nobody can be in the entry */
		put_pages(h);
	}
	xp_hook_unpublish(h);
fail:
	kvfree(func);
	xp_hook_free(h);
	return ERR_PTR(err);
}

/*
 * A disarmed hook's first byte in the copy (its tail is the kernel's
 * already, xp_calls_disarm()): the shared text's byte. A broken hook's is
 * whatever the kernel's is now: the kernel's own, mirrored there, or still
 * the int3 of a jump that a kprobe behind its first byte took apart
 * (xp_jumps_yield()), which fix_tail_conflicts() would have replaced; once
 * the hook is gone, no handler is left for that int3. Under text_mutex.
 */
static void put_first_byte(struct xp_hook *h)
{
	lockdep_assert_held(xp_k.text_mutex);
	WRITE_ONCE(*xp_hook_copy(h), h->broken ? *(u8 *)xp_text(h->addr) : h->orig[0]);
}

static void unlink_hook(struct xp_hook *h)
{
	struct xp_view *v = h->view;

	xp_hook_unpublish(h);
	list_del(&h->vnode);
	if (h->urec_role) {	/* another hook may hold the same role */
		struct xp_hook *o;

		v->urec_roles = 0;
		list_for_each_entry(o, &v->hook_list, vnode)
			v->urec_roles |= o->urec_role;
	}
	atomic64_sub(sizeof(*h), &xp_mem_bytes);
}

int xp_hook_del(u32 id, struct netlink_ext_ack *extack)
{
	struct xp_hook *h;

	h = xp_hook_find(id, extack);
	if (!h)
		return -ENOENT;
	if (h->internal) {
		if (h->redirect)
			NL_SET_ERR_MSG_FMT(extack, "hook %u keeps kernel threads off the view's "
					   "tables: it goes with the view", id);
		else if (h->internal == xp_usigret_fire)
			NL_SET_ERR_MSG_FMT(extack, "hook %u keeps sigreturns out of the view's user "
					   "hooks' jumps: it goes with the view", id);
		else
			NL_SET_ERR_MSG_FMT(extack, "hook %u carries the view's user-hook events: "
					   "it goes with the view", id);
		return -EBUSY;
	}
	/* Without it, records would be lost or handed over as another thread's. */
	if (h->urec_role && READ_ONCE(h->view->urec)) {
		NL_SET_ERR_MSG_FMT(extack, "hook %u hands the view's user-hook records over: "
				   "it goes with the view", id);
		return -EBUSY;
	}
	xp_hook_remove(h);
	return 0;
}

/* Take @h out of its view (the hook's id may be reused at once). */
void xp_hook_remove(struct xp_hook *h)
{
	struct xp_view *v = h->view;
	u8 *copy;

	if (h->tph) {
		xp_tphook_remove(h);
		return;
	}
	copy = xp_hook_copy(h);
	if (h->call_ok)		/* a call first becomes a trap again */
		xp_calls_disarm(v, h);

	/*
	 * Disarm and let every CPU see it; only then stop handling the address.
	 * After the sync no CPU is in the hook's trap or its xol slot (both run
	 * with interrupts off and the sync is an IPI), so the slot may be reused
	 * at once; trap handlers may still be walking the hash, hence call_rcu.
	 */
	mutex_lock(xp_k.text_mutex);
	put_first_byte(h);
	mutex_unlock(xp_k.text_mutex);
	xp_sync_cores();
	hash_del_rcu(&h->hnode);
	unlink_hook(h);
	xp_hook_set_prog(h, NULL);	/* hits under way still hold it: see prog.c */
	put_pages(h);	/* its bytes are the kernel's: the shared pages will do */
	if (h->went_live) {
		/* Tasks may still be on their way through its entry or slot. */
		call_rcu_tasks(&h->rcu, retire_hook_tasks);
	} else {
		xp_jentry_put(h);	/* never a jump: nobody is in its entry */
		xp_xol_release(v, h);
		call_rcu(&h->rcu, free_hook_rcu);
	}
	xp_tables_check(NULL);
}

/* Put back the displaced bytes of every hook of @v (callers sync the CPUs). */
void xp_hooks_disarm_all(struct xp_view *v)
{
	struct xp_hook *h;

	lockdep_assert_held(&xp_views_lock);
	xp_calls_disarm(v, NULL);
	mutex_lock(xp_k.text_mutex);
	list_for_each_entry(h, &v->hook_list, vnode)
		put_first_byte(h);
	mutex_unlock(xp_k.text_mutex);
	xp_tphooks_disarm(v);
}

/* The view is unreachable (pgd restored, flushed, grace period over): free its hooks. */
void xp_hooks_free_all(struct xp_view *v)
{
	struct xp_hook *h, *n;

	lockdep_assert_held(&xp_views_lock);
	list_for_each_entry_safe(h, n, &v->hook_list, vnode) {
		unlink_hook(h);
		xp_hook_set_prog(h, NULL);
		xp_jentry_put(h);	/* the view's teardown quiesced (view.c) */
		free_hook(h);
	}
	xp_tphooks_free(v);
}

/* The hook with id @id, or NULL with @extack set. Under xp_views_lock. */
struct xp_hook *xp_hook_find(u32 id, struct netlink_ext_ack *extack)
{
	struct xp_hook *h;

	lockdep_assert_held(&xp_views_lock);
	h = idr_find(&xp_hook_ids, id);
	if (!h) {
		NL_SET_ERR_MSG_FMT(extack, "no hook with id %u", id);
		return NULL;
	}
	if (h->view->closing) {
		NL_SET_ERR_MSG_FMT(extack, "hook %u goes with its view, which is being torn down", id);
		return NULL;
	}
	return h;
}

/*
 * Iterate hooks in id order: the first with id >= *id, and advance *id.
 * A closing view's hooks are left out. Under xp_views_lock.
 */
struct xp_hook *xp_hook_next(u32 *id)
{
	struct xp_hook *h;
	int next = *id;

	lockdep_assert_held(&xp_views_lock);
	do {
		h = idr_get_next(&xp_hook_ids, &next);
		if (h)
			*id = ++next;
	} while (h && h->view->closing);
	return h;
}

void xp_hook_stats(struct xp_hook *h, struct xp_hook_stats *sum)
{
	int cpu;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		struct xp_hook_stats *s = per_cpu_ptr(h->stats, cpu);

		sum->hits += READ_ONCE(s->hits);
		sum->dropped += READ_ONCE(s->dropped);
		sum->nested += READ_ONCE(s->nested);
	}
}
