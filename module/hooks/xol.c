// SPDX-License-Identifier: GPL-2.0
/*
 * Out-of-line execution of displaced instructions.
 *
 * Modules cannot get executable memory on this kernel (execmem and
 * set_memory_x are not exported), but a view owns its page tables: it maps a
 * few pages of its own, read-only and executable, non-global, in an empty 2 MiB
 * slot of the kernel-image PUD. Only CPUs running on the view's CR3 can reach
 * them, and those are exactly the CPUs that can hit the view's int3s.
 *
 * Each hook gets two slot copies of its instruction (of every instruction a
 * jump hook covers), each followed by a jump back to the instruction after:
 * one for a trap taken with interrupts off, one, with an sti before the
 * jump, for a trap taken with them on. The trap
 * handler enters a slot with interrupts off, so nothing can preempt or migrate
 * the CPU while it runs code that exists only in this view (a kernel thread
 * resumed elsewhere may run on another mm's tables); sti's one-instruction
 * shadow keeps interrupts off until the jump has left the slot. No second trap
 * and no per-CPU state: nested traps (NMI, recursion through BPF) need no
 * bookkeeping. The decoder refuses instructions that read or write IF.
 *
 * Locking: slots are handed out and written under xp_views_lock, and released
 * under it or, for a jump hook's, from the RCU callback that retires it
 * (hook.c), hence the atomic bit operations; a slot is released only once
 * no CPU can be in it (hook.c, view.c).
 */
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <net/netlink.h>
#include <asm/text-patching.h>
#include "xprobes.h"

static u8 *slot_ptr(struct xp_view *v, int slot, int variant)
{
	unsigned long off = (unsigned long)slot * 2 * XP_SLOT_SIZE + variant * XP_SLOT_SIZE;

	return (u8 *)page_address(v->xol.pages[off / PAGE_SIZE]) + off % PAGE_SIZE;
}

static int xol_map_area(struct xp_view *v, struct netlink_ext_ack *extack)
{
	unsigned long va = xp_view_free_pmd_slot(v);

	if (!va) {
		NL_SET_ERR_MSG(extack, "no free 2 MiB slot in the kernel image area for the xol pages");
		return -ENOSPC;
	}
	v->xol.ptes = xp_alloc_table();
	if (!v->xol.ptes)
		return -ENOMEM;
	if (xp_view_map_table(v, va, v->xol.ptes)) {
		xp_free_table(v->xol.ptes);
		v->xol.ptes = NULL;
		return -EBUSY;
	}
	v->xol.va = va;
	return 0;
}

static int xol_map_page(struct xp_view *v, int i)
{
	pgprot_t rox = __pgprot((__PAGE_KERNEL_ROX | _PAGE_ENC) & ~_PAGE_GLOBAL);
	struct page *p = alloc_page(GFP_KERNEL_ACCOUNT);

	if (!p)
		return -ENOMEM;
	atomic64_add(PAGE_SIZE, &xp_mem_bytes);
	/* Anything that is not a slot traps. */
	memset(page_address(p), INT3_INSN_OPCODE, PAGE_SIZE);
	v->xol.pages[i] = p;
	set_pte(&v->xol.ptes[pte_index(v->xol.va) + i], pfn_pte(page_to_pfn(p), rox));
	return 0;
}

/* Slots and text lie in the kernel-image PUD (1 GiB): every rel32 fits. */
static void put_rel32(u8 *dst, unsigned long from_end, unsigned long to)
{
	s32 rel = (s32)(to - from_end);

	memcpy(dst, &rel, sizeof(rel));
}

/* [sti,] jmp @to, at @dst (address @va); returns the bytes written. */
static unsigned int put_exit(u8 *dst, unsigned long va, unsigned long to, bool irq_on)
{
	unsigned int n = 0;

	if (irq_on)
		dst[n++] = 0xfb;			/* sti */
	dst[n++] = JMP32_INSN_OPCODE;
	put_rel32(dst + n, va + n + 4, to);
	return n + 4;
}

/*
 * A direct branch @insn (at @from in the kernel text) rebuilt at @dst
 * (address @va) with rel32 targets: returns the bytes written. Interrupts go back on, with
 * @irq_on, on the way out.
 */
static unsigned int put_branch(const struct xp_insn *insn, unsigned long from, u8 *dst,
			       unsigned long va, bool irq_on)
{
	unsigned long next = from + insn->len, target = next + insn->rel;
	unsigned int n = 0;
	s32 imm;

	switch (insn->kind) {
	case XP_INSN_CALL:
		/* push $next (sign-extended imm32: kernel text is in the top 2 GiB) */
		dst[n++] = 0x68;
		imm = (s32)next;
		memcpy(dst + n, &imm, sizeof(imm));
		n += sizeof(imm);
		return n + put_exit(dst + n, va + n, target, irq_on);
	case XP_INSN_JMP:
		return put_exit(dst, va, target, irq_on);
	default:	/* XP_INSN_JCC */
		/* jcc taken; not taken: exit to next; taken: exit to target */
		dst[n++] = 0x0f;
		dst[n++] = 0x80 | insn->cc;
		n += 4;
		n += put_exit(dst + n, va + n, next, irq_on);
		put_rel32(dst + 2, va + 6, va + n);
		return n + put_exit(dst + n, va + n, target, irq_on);
	}
}

/*
 * What the hook's instructions do (every one a jump hook covers), then back,
 * with interrupts turned on again on the way out when @irq_on. Instructions
 * that are not branches are copied (RIP-relative displacement fixed up); a
 * direct branch, only ever the last one (cover.c), is rebuilt with a rel32
 * target (the trap emulates a lone one instead).
 */
static void write_slot(struct xp_hook *h, u8 *dst, unsigned long va, bool irq_on)
{
	unsigned int n = 0;

	while (n < h->cover) {
		struct xp_insn insn;

		xp_insn_decode(&insn, h->orig + n, XP_INSN_MAX);
		if (insn.kind != XP_INSN_SLOT) {
			put_branch(&insn, h->addr + n, dst + n, va + n, irq_on);
			return;
		}
		memcpy(dst + n, h->orig + n, insn.len);
		if (insn.rip_rel) {
			s32 disp;

			memcpy(&disp, h->orig + n + insn.disp_off, sizeof(disp));
			disp += (s32)(h->addr - va);
			memcpy(dst + n + insn.disp_off, &disp, sizeof(disp));
		}
		n += insn.len;
	}
	put_exit(dst + n, va + n, h->addr + h->cover, irq_on);
}

int xp_xol_alloc(struct xp_view *v, struct xp_hook *h, struct netlink_ext_ack *extack)
{
	int slot, err, page;
	s64 delta;

	lockdep_assert_held(&xp_views_lock);
	if (!v->xol.va) {
		err = xol_map_area(v, extack);
		if (err)
			return err;
	}
	slot = find_first_zero_bit(v->xol.used, XP_XOL_SLOTS);
	if (slot >= XP_XOL_SLOTS) {
		NL_SET_ERR_MSG_FMT(extack, "too many hooks in one view (at most %lu)", (unsigned long)XP_XOL_SLOTS);
		return -ENOSPC;
	}
	page = slot * 2 * XP_SLOT_SIZE / PAGE_SIZE;
	if (!v->xol.pages[page]) {
		err = xol_map_page(v, page);
		if (err)
			return err;
	}
	h->slot_va = v->xol.va + (unsigned long)slot * 2 * XP_SLOT_SIZE;
	/* Every displacement moves by the same delta (cover.c vetted the rest). */
	delta = (s64)h->addr - (s64)h->slot_va;
	if (delta > S32_MAX / 2 || delta < S32_MIN / 2) {
		NL_SET_ERR_MSG(extack, "RIP-relative instruction too far from the xol area");
		return -ERANGE;
	}
	/* Module text lies farther off: its one instruction's new displacement must fit. */
	if (h->mod && h->insn.rip_rel) {
		s32 disp;

		memcpy(&disp, h->orig + h->insn.disp_off, sizeof(disp));
		if ((s64)disp + delta > S32_MAX - 2 * XP_SLOT_SIZE ||
		    (s64)disp + delta < S32_MIN + 2 * XP_SLOT_SIZE) {
			NL_SET_ERR_MSG(extack, "RIP-relative instruction too far from the xol area");
			return -ERANGE;
		}
	}
	write_slot(h, slot_ptr(v, slot, 0), h->slot_va, false);
	write_slot(h, slot_ptr(v, slot, 1), h->slot_va + XP_SLOT_SIZE, true);
	set_bit(slot, v->xol.used);	/* atomic: retired slots are cleared from RCU callbacks */
	h->slot = slot;
	return 0;
}

/* Call only once no CPU can enter the slot (the hook's int3 is gone and synced). */
void xp_xol_release(struct xp_view *v, struct xp_hook *h)
{
	if (h->slot < 0)
		return;
	clear_bit(h->slot, v->xol.used);
	h->slot = -1;
}

void xp_xol_free(struct xp_view *v)
{
	int i;

	for (i = 0; i < XP_XOL_PAGES; i++) {
		if (v->xol.pages[i]) {
			__free_page(v->xol.pages[i]);
			atomic64_sub(PAGE_SIZE, &xp_mem_bytes);
		}
	}
	xp_free_table(v->xol.ptes);
}
