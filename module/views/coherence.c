// SPDX-License-Identifier: GPL-2.0
/*
 * Keeping private copies coherent with the kernel's own text patching.
 *
 * Every runtime write to kernel text (static keys and tracepoints, static
 * calls, ftrace and BPF trampolines, kprobes, livepatch, alternatives) ends in
 * the static __text_poke(func, addr, src, len), under text_mutex. It writes
 * the original frame only, so copies would go stale: a stale static call can
 * jump into freed code, and patching code that verifies its work through the
 * traced CR3 (__text_poke's own memcmp, jump labels, ftrace_verify_code) would
 * read the copy and BUG or kill ftrace.
 *
 * A kprobe on __text_poke (on its first instruction after the fentry site, so
 * it does not depend on ftrace) applies the same write to every copy of the
 * page *before* the kernel writes the original, so any verification read
 * through a traced CR3 already sees the new bytes, and the int3 protocol of
 * text_poke_bp() runs in the copy step by step as in the original.
 *
 * A write that overlaps a hooked instruction (someone else's kprobe at the
 * same address, for instance) wins: the copy gets the kernel's bytes, the
 * hook is marked broken and stops firing in that view.
 *
 * The audit compares every copy with its original, outside the bytes of armed
 * hooks (an int3, or a call's five bytes), periodically (lifecycle.c) and on
 * demand; a view whose copy differs is ended (never patched byte by byte
 * under CPUs that may be executing it).
 *
 * Locking: the kprobe handler runs with text_mutex held by the patcher and
 * walks views and their pages under RCU. Copies are made (pgtable.c), and
 * hooks armed and disarmed (hook.c), under text_mutex too, so no write to a
 * copy races with another. The audit runs under xp_views_lock and text_mutex.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/rculist.h>
#include "xprobes.h"

static unsigned long poke_memset;	/* text_poke_memset(): writes *(int *)src */
static bool poke_probe_on;

atomic64_t xp_mirrored;			/* writes applied to copies */
atomic64_t xp_conflicts;		/* hooks broken by kernel patching */
atomic64_t xp_mismatches;		/* copy pages the audit found different */
atomic64_t xp_audits;			/* audit passes */

/*
 * The kernel is about to write [lo, hi) over a call hook's instruction: give
 * the copy back the bytes the kernel expects there first. Each runtime patcher
 * first writes an int3 at the start of the instruction it patches and
 * serialises every CPU before it writes the rest (jump.c), so:
 * - a live call whose first byte is written: that is the int3; put ours there
 *   first and leave the displacement behind it, which no CPU may be fetching
 *   yet; it goes at the next write here or at the next audit;
 * - a live call covered from an earlier address: the patcher keeps every CPU
 *   out of what it covers, so the whole call can go at once;
 * - a displacement left behind earlier: the patcher has serialised since.
 */
static void displace_call(struct xp_hook *h, unsigned long lo, u8 first)
{
	u8 *c = xp_hook_copy(h);

	if (READ_ONCE(h->mode) == XP_HOOK_CALL && c[0] == JMP32_INSN_OPCODE) {
		if (lo >= h->addr) {
			WRITE_ONCE(c[0], INT3_INSN_OPCODE);
			if (lo > h->addr)	/* not a patcher's protocol: say so */
				pr_warn_once("kernel write inside a call hook at %pS\n", (void *)h->addr);
		} else {
			WRITE_ONCE(c[0], *(u8 *)xp_text(h->addr));
		}
		WRITE_ONCE(h->mode, XP_HOOK_TRAP);
		/*
		 * Only a patcher's int3 may leave our displacement behind it. A
		 * plain write of another first byte (text_poke() of a lock prefix
		 * by the UP/SMP switch, say) makes the instruction whole at once:
		 * such writes come when no CPU can be executing it.
		 */
		if (lo == h->addr && first == INT3_INSN_OPCODE)
			return;
	}
	xp_call_restore_tail(h);
}
NOKPROBE_SYMBOL(displace_call);

/*
 * Is [lo, hi) a write at an instruction boundary behind the first byte of a
 * live jump hook's jump (someone's kprobe on the second covered instruction)?
 * The jump may be executing on any CPU, and only an IPI could make it safe
 * to change its displacement, which cannot be sent from here: the write is
 * kept out of those bytes (xp_mirror_write()) and the hook is taken apart
 * from process context (fix_tail_conflicts()).
 */
static bool tail_conflict(struct xp_hook *h, unsigned long lo)
{
	u8 *c = xp_hook_copy(h);

	return h->ninsn > 1 && lo > h->addr && lo < h->addr + XP_JUMP_SIZE &&
	       READ_ONCE(h->mode) == XP_HOOK_CALL && c[0] == JMP32_INSN_OPCODE;
}

static void fix_tail_conflicts(struct work_struct *work);
static DECLARE_WORK(conflict_work, fix_tail_conflicts);

/*
 * A hook of @v whose instruction overlaps [lo, hi) is displaced by the kernel;
 * @src holds the bytes written from @lo on, or with @set the byte repeated.
 * Returns true if some bytes must not be written now (tail_conflict()).
 */
static bool break_overlapping_hooks(struct xp_view *v, unsigned long lo, unsigned long hi,
				    const u8 *src, bool set)
{
	bool keep_out = false;
	struct xp_hook *h;
	int bkt;

	hash_for_each_rcu(v->hooks, bkt, h, hnode) {
		if (h->addr >= hi || h->addr + h->cover <= lo)
			continue;
		if (h->ninsn > 1 && lo > h->addr) {
			/*
			 * At a covered instruction behind the first: the hook's
			 * slot would run it without the kernel's change. Live,
			 * its jump's bytes are kept out too (tail_conflict()).
			 */
			if (tail_conflict(h, lo))
				keep_out = true;
			h->tail_conflict = true;
			schedule_work(&conflict_work);
		} else if (h->call_ok) {
			displace_call(h, lo, h->addr < lo ? 0 :
				      set ? (u8)*(const int *)src : src[h->addr - lo]);
		}
		if (!READ_ONCE(h->broken)) {
			WRITE_ONCE(h->broken, true);
			atomic64_inc(&xp_conflicts);
		}
		/*
		 * The view's guard displaced (guard.c): its jumps over several
		 * instructions may not stay live without it. A kprobe's arming
		 * took them apart already (xp_jumps_yield()); any other writer
		 * gets them taken apart now, from process context.
		 */
		if (h == v->guard)
			schedule_work(&conflict_work);
	}
	return keep_out;
}
NOKPROBE_SYMBOL(break_overlapping_hooks);

/* Is @addr behind the first byte of a jump whose tail the kernel may not write yet? */
static bool kept_out(struct xp_view *v, unsigned long addr)
{
	unsigned int back;

	for (back = 1; back < XP_JUMP_SIZE; back++) {
		struct xp_hook *h = xp_hook_at(v, addr - back);

		if (h && h->tail_conflict && READ_ONCE(h->mode) == XP_HOOK_CALL)
			return true;
	}
	return false;
}
NOKPROBE_SYMBOL(kept_out);

/*
 * Apply a kernel write of @len bytes at @addr to every copy, before the
 * kernel writes the original. @src is the bytes, or with @set the byte to
 * repeat (text_poke_memset). The caller holds text_mutex and RCU.
 */
void xp_mirror_write(unsigned long addr, const u8 *src, size_t len, bool set)
{
	struct xp_view *v;
	struct xp_tpage *t;

	list_for_each_entry_rcu(v, &xp_views, node) {
		/*
		 * The whole write at once, not page by page: a hook's bytes
		 * may cross into the next page, and what the write does to it
		 * depends on where the write begins (displace_call()).
		 */
		bool keep = break_overlapping_hooks(v, addr, addr + len, src, set);

		list_for_each_entry_rcu(t, &v->tpages, node) {
			unsigned long lo = max(addr, t->va);
			unsigned long hi = min(addr + len, t->va + PAGE_SIZE);
			u8 *dst;

			if (lo >= hi)
				continue;
			dst = (u8 *)page_address(t->copy) + (lo - t->va);
			if (keep) {
				unsigned long a;

				for (a = lo; a < hi; a++)
					if (!kept_out(v, a))
						dst[a - lo] = set ? (u8)*(const int *)src : src[a - addr];
			} else if (set) {
				memset(dst, *(const int *)src, hi - lo);
			} else {
				memcpy(dst, src + (lo - addr), hi - lo);
			}
			atomic64_inc(&xp_mirrored);
		}
	}
}
NOKPROBE_SYMBOL(xp_mirror_write);

/* __text_poke(text_poke_f func, void *addr, const void *src, size_t len) */
static int on_text_poke(struct kprobe *p, struct pt_regs *regs)
{
	unsigned long addr = regs->si;
	size_t len = regs->cx;

	/* Core text, or module space (a copy of a module page: views/modspace.c). */
	if ((addr >= xp_k.etext || addr + len <= xp_k.stext) &&
	    (addr >= xp_k.mod_hi || addr + len <= xp_k.mod_lo))
		return 0;
	if (regs->di != poke_memset)
		xp_readers_poke(addr, (const u8 *)regs->dx, len);
	rcu_read_lock();
	xp_mirror_write(addr, (const u8 *)regs->dx, len, regs->di == poke_memset);
	rcu_read_unlock();
	return 0;
}
NOKPROBE_SYMBOL(on_text_poke);

static struct kprobe poke_kp = {
	.pre_handler = on_text_poke,
};

/* Is @addr one of the five bytes of a live jump of @v? */
static bool in_live_call(struct xp_view *v, unsigned long addr)
{
	unsigned int back;

	for (back = 0; back < XP_JUMP_SIZE; back++) {
		struct xp_hook *h = xp_hook_at(v, addr - back);

		if (h && READ_ONCE(h->mode) == XP_HOOK_CALL && h->tail_ours)
			return true;
	}
	return false;
}

/*
 * Compare every copy of @v with its original, outside the bytes of armed
 * hooks; returns how many pages differ. A copy is live code that CPUs may be
 * executing: nothing here writes it but the displacement a displaced call
 * left behind its int3 (the patcher has serialised every CPU since, see
 * displace_call()). Any other difference is not repaired byte by byte, which
 * could tear an instruction under a running CPU: the caller ends the view.
 */
static unsigned int audit_view(struct xp_view *v)
{
	unsigned int bad_pages = 0;
	struct xp_tpage *t;
	struct xp_hook *h;

	list_for_each_entry(h, &v->hook_list, vnode)
		if (READ_ONCE(h->mode) != XP_HOOK_CALL)
			xp_call_restore_tail(h);

	list_for_each_entry(t, &v->tpages, node) {
		const u8 *orig = pfn_to_kaddr(t->orig_pfn);
		u8 *copy = page_address(t->copy);
		int i;

		for (i = 0; i < PAGE_SIZE; i++) {
			if (copy[i] == orig[i])
				continue;
			h = xp_hook_at(v, t->va + i);
			/*
			 * An armed hook's int3; or a jump that a kprobe on a
			 * covered instruction took apart (xp_jumps_yield())
			 * and broke: its int3 still has a handler until
			 * fix_tail_conflicts() puts the kernel's byte there.
			 */
			if (h && copy[i] == INT3_INSN_OPCODE && (!h->broken || h->tail_conflict))
				continue;
			if (in_live_call(v, t->va + i))
				continue;
			/* A call site a tracepoint hook makes jump in this view */
			if (xp_tp_site_in(v, t->va + i))
				continue;
			pr_notice("copy of %pS differs from the kernel text: ending its view\n",
				  (void *)(t->va + i));
			bad_pages++;
			break;
		}
	}
	return bad_pages;
}

/*
 * One audit pass over every view. Under xp_views_lock. Returns the pages that
 * differed; their views are ended (VIEW_ENDED "audit: ...").
 */
unsigned int xp_audit_all(void)
{
	struct xp_view *v, *n;
	unsigned int bad = 0;
	LIST_HEAD(diverged);

	lockdep_assert_held(&xp_views_lock);
	mutex_lock(xp_k.text_mutex);
	list_for_each_entry(v, &xp_views, node) {
		unsigned int b = v->closing ? 0 : audit_view(v);

		bad += b;
		v->diverged = b;
	}
	mutex_unlock(xp_k.text_mutex);
	list_for_each_entry_safe(v, n, &xp_views, node)
		if (v->diverged)
			xp_view_close(v, "audit: its copy of kernel text differed from the kernel's");
	atomic64_add(bad, &xp_mismatches);
	atomic64_inc(&xp_audits);
	return bad;
}

/*
 * Take apart the jump hooks whose tail the kernel wrote into while they were
 * live (tail_conflict()), and those of a view whose guard the kernel
 * displaced: the int3 protocol, in process context. The jump
 * becomes an int3 (which runs the covered bytes out of line, as before),
 * every CPU serialises, the kernel's bytes go behind it, every CPU
 * serialises, and the kernel's own first byte replaces the int3. The hook
 * is broken: it stays, and fires no more, like any hook the kernel displaced.
 */
static void fix_tail_conflicts(struct work_struct *work)
{
	struct xp_view *v;
	struct xp_hook *h;

	mutex_lock(&xp_views_lock);
	xp_for_each_open_view(v) {
		/* A displaced guard: no jump over several instructions stays live. */
		if (v->guard && READ_ONCE(v->guard->broken)) {
			list_for_each_entry(h, &v->hook_list, vnode) {
				if (h->ninsn < 2 || READ_ONCE(h->mode) != XP_HOOK_CALL)
					continue;
				xp_calls_disarm(v, h);
				WRITE_ONCE(h->why_int3, "the view's guard against kernel threads on "
					   "its page tables was displaced");
			}
		}
		list_for_each_entry(h, &v->hook_list, vnode) {
			u8 *c = xp_hook_copy(h);

			if (!h->tail_conflict)
				continue;
			xp_calls_disarm(v, h);	/* an int3 again, the kernel's bytes behind it */
			mutex_lock(xp_k.text_mutex);
			h->tail_conflict = false;
			if (c[0] == INT3_INSN_OPCODE)
				WRITE_ONCE(c[0], *(u8 *)xp_text(h->addr));
			mutex_unlock(xp_k.text_mutex);
			xp_sync_cores();
			pr_notice("kernel text patching inside the jump hook at %pS: hook displaced\n",
				  (void *)h->addr);
		}
	}
	mutex_unlock(&xp_views_lock);
}

/* Wait for fix_tail_conflicts() (KUnit). */
void xp_conflicts_flush(void)
{
	flush_work(&conflict_work);
}

/* Is the __text_poke probe in the kernel text (an int3, or an optimized jump)? */
bool xp_poke_probe_armed(void)
{
	u8 b;

	if (!poke_probe_on)
		return false;
	b = READ_ONCE(*(u8 *)xp_text((unsigned long)poke_kp.addr));
	return b == INT3_INSN_OPCODE || b == JMP32_INSN_OPCODE;
}

int xp_coherence_init(void)
{
	unsigned long start = xp_sym_lookup("__text_poke", NULL);
	const char *why;
	int err;

	poke_memset = xp_sym_lookup("text_poke_memset", NULL);
	if (!start || !poke_memset) {
		xp_unsupported("cannot find __text_poke or text_poke_memset to follow kernel text patching");
		return 0;
	}
	poke_kp.addr = (kprobe_opcode_t *)xp_func_body(start);
	err = register_kprobe(&poke_kp);
	if (err) {
		pr_err("cannot probe __text_poke (%d): views disabled\n", err);
		xp_unsupported("cannot probe __text_poke to follow kernel text patching");
		return 0;
	}
	poke_probe_on = true;
	why = xp_readers_init();
	if (why)
		xp_unsupported(why);
	return 0;
}

void xp_coherence_exit(void)
{
	flush_work(&conflict_work);
	xp_readers_exit();
	if (poke_probe_on)
		unregister_kprobe(&poke_kp);
}
