// SPDX-License-Identifier: GPL-2.0
/*
 * The bytes a user hook's jump covers, guarded from what the add protocol
 * (uhook.c) cannot see: two ways into the middle of them that do not go
 * through the function's entry.
 *
 * 1. A saved signal context. A thread that took a signal (a fault, a kill)
 *    while it ran the covered instructions has their address in the frame
 *    its handler returns through; the add waits for live registers only, so
 *    rt_sigreturn would put the thread inside the jump's displacement. The
 *    traced process's view gets a hook on fpu__restore_sig(), which
 *    restore_sigcontext() calls last, once it has loaded the saved registers
 *    (rt_sigreturn calls restore_altstack() before it on 6.12 and after it
 *    on 6.1): an ip strictly inside a live cover, on one of its
 *    instruction boundaries, is moved to the trampoline's copy of that
 *    instruction, which runs on and jumps back behind the cover, as if the
 *    thread had never left the function's own bytes. Other processes run
 *    the shared fpu__restore_sig() and pay nothing. A frame forged to land
 *    between two instruction boundaries is left alone: the process can only
 *    hurt itself that way.
 *
 * 2. Another tool's uprobe inside a cover ("p /bin:0xOFF+3" in
 *    uprobe_events). uprobes writes its int3 into the process's copy of the
 *    page with uprobe_write_opcode(), without knowing our jump is there, and
 *    later restores the byte it read from the file: either write would
 *    change the displacement. A kprobe on uprobe_write_opcode() refuses
 *    (-EBUSY, a warning naming the hook) any write strictly inside a live
 *    cover, in the hooked process and in any child of fork that inherited
 *    the jump (its mm maps the same trampoline area at the same address):
 *    the other registration fails for this process (or goes on without it
 *    when other processes map the file), and the process keeps its jump.
 *    Every other process of the file takes the uprobe. A uprobe on the site
 *    itself shares our uprobe (uhook.c) and is let through. The kprobe costs
 *    one hit per uprobe install or removal, machine-wide, nothing per call.
 *
 * A cover is published before the jump's tail is written (arm() re-reads
 * every covered byte after publication, under the mmap lock that uprobes'
 * installs take for writing, so none slipped in before) and unpublished
 * after the file's bytes are back (disarm()).
 *
 * Locking: the hashes change under xp_views_lock; both readers run in atomic
 * context under RCU, and a hook is freed after a grace period (the area's
 * file pointer is compared, never followed). uprobe_write_opcode() runs with
 * the mm's mmap lock held (by uprobes or by the mmap caller), so its vmas can
 * be looked up there.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hashtable.h>
#include <linux/kprobes.h>
#include <linux/sched/task_stack.h>
#include <linux/uprobes.h>
#include "xprobes.h"
#include "uhook.h"

/*
 * A process may have thousands of hooks in one file (every function of a
 * server traced), so the covers are hashed by where they start, not only
 * by whose they are: by the mm and the granule of the site's address, and
 * by the inode and the granule of its file offset. A granule holds more
 * than twice the longest cover, so the covers that may hold a byte, or
 * meet a range of a cover's length, start in at most two granules.
 */
#define COVER_GRANULE_SHIFT	6
static_assert(2 * XP_COVER_MAX <= 1 << COVER_GRANULE_SHIFT);

static DEFINE_HASHTABLE(xp_ucovers, 10);	/* live covers by mm and address */
static DEFINE_HASHTABLE(xp_ucovers_file, 10);	/* ... by inode and file offset */
static DEFINE_HASHTABLE(xp_ucovers_mm, 6);	/* ... by mm alone */
static bool write_guard_on;

static unsigned long cover_key(const void *owner, u64 at)
{
	return (unsigned long)owner ^ (unsigned long)(at >> COVER_GRANULE_SHIFT);
}

/* The first granule that may hold the start of a cover reaching @at. */
static u64 cover_first(u64 at)
{
	return at >= XP_COVER_MAX ? at - (XP_COVER_MAX - 1) : 0;
}

/* Each granule key from the one of @lo to the one of @hi (2 at most). */
#define for_each_cover_key(key, owner, lo, hi, g)				\
	for (g = (lo) >> COVER_GRANULE_SHIFT,					\
	     key = cover_key(owner, g << COVER_GRANULE_SHIFT);			\
	     g <= (hi) >> COVER_GRANULE_SHIFT;					\
	     g++, key = cover_key(owner, g << COVER_GRANULE_SHIFT))

void xp_ucover_publish(struct xp_uhook *h)
{
	lockdep_assert_held(&xp_views_lock);
	h->afile = h->area->file;
	hash_add_rcu(xp_ucovers, &h->cnode, cover_key(h->mm, h->addr));
	hash_add_rcu(xp_ucovers_file, &h->fnode, cover_key(h->up.inode, h->up.offset));
	hash_add_rcu(xp_ucovers_mm, &h->mnode, (unsigned long)h->mm);
}

void xp_ucover_unpublish(struct xp_uhook *h)
{
	lockdep_assert_held(&xp_views_lock);
	if (!hash_hashed(&h->cnode))
		return;
	/*
	 * ->next stays: a reader standing on this cover goes on to those
	 * behind it (ucover_kunit.c). ->pprev is cleared: not hashed now.
	 */
	hash_del_rcu(&h->cnode);
	hash_del_rcu(&h->fnode);
	hash_del_rcu(&h->mnode);
}

/*
 * A cover of @mm, its file's bytes not back yet, that meets [@lo, @hi)
 * (@strict: that holds @lo strictly inside, @hi = @lo + 1). Under RCU or
 * xp_views_lock.
 */
static struct xp_uhook *cover_meeting(struct mm_struct *mm, unsigned long lo, unsigned long hi,
				      bool strict)
{
	unsigned long key;
	struct xp_uhook *h;
	u64 g;

	for_each_cover_key(key, mm, cover_first(lo), hi - 1, g)
		hash_for_each_possible_rcu(xp_ucovers, h, cnode, key)
			if (h->mm == mm && (strict ? h->addr < lo : h->addr < hi) &&
			    lo < h->addr + h->cover &&
			    !READ_ONCE(h->out))	/* the file's bytes are back there */
				return h;
	return NULL;
}

/* The live cover of @mm with @addr strictly inside it. Under RCU. */
static struct xp_uhook *inside(struct mm_struct *mm, unsigned long addr)
{
	return cover_meeting(mm, addr, addr + 1, true);
}

/* Does a cover of @mm (claimed or live) meet [@lo, @hi)? Under xp_views_lock. */
bool xp_ucover_overlaps(struct mm_struct *mm, unsigned long lo, unsigned long hi)
{
	lockdep_assert_held(&xp_views_lock);
	return cover_meeting(mm, lo, hi, false);
}

/* Has @mm a user hook with a published cover (claimed, live or going)? Under RCU. */
bool xp_ucover_mm_live(struct mm_struct *mm)
{
	struct xp_uhook *h;

	hash_for_each_possible_rcu(xp_ucovers_mm, h, mnode, (unsigned long)mm)
		if (h->mm == mm)
			return true;
	return false;
}

/* 1: the view's hook on fpu__restore_sig() (XP_F_USIGRET): the saved ip is in place. */
void xp_usigret_fire(struct xp_hook *kh, struct pt_regs *kregs)
{
	struct pt_regs *u = task_pt_regs(current);
	struct xp_uhook *h;
	unsigned int i;

	rcu_read_lock();
	h = current->mm ? inside(current->mm, u->ip) : NULL;
	for (i = 1; h && i < h->ninsn; i++)
		if (u->ip == h->addr + h->istart[i]) {
			u->ip = h->slot + h->tstart[i];
			break;
		}
	rcu_read_unlock();
}

int xp_usigret_get(struct xp_view *v, struct netlink_ext_ack *extack)
{
	struct xp_hook *kh;

	lockdep_assert_held(&xp_views_lock);
	if (v->usigret_hook)
		return 0;
	kh = xp_hook_add(v, "fpu__restore_sig", NULL, 0, XP_F_USIGRET, extack);
	if (IS_ERR(kh))
		return PTR_ERR(kh);
	v->usigret_hook = kh;
	return 0;
}

/*
 * The live cover strictly around byte @vaddr of @mm's mapping of a file, in
 * @mm or in an ancestor it inherited the jump from. Under RCU and the mmap
 * lock.
 */
static struct xp_uhook *inside_file(struct mm_struct *mm, unsigned long vaddr)
{
	struct vm_area_struct *vma = find_vma(mm, vaddr), *area;
	struct xp_uhook *h;
	struct inode *inode;
	unsigned long key;
	loff_t off;
	u64 g;

	if (!vma || vma->vm_start > vaddr || !vma->vm_file)
		return NULL;
	inode = file_inode(vma->vm_file);
	off = vaddr - vma->vm_start + ((loff_t)vma->vm_pgoff << PAGE_SHIFT);
	for_each_cover_key(key, inode, cover_first(off), off, g) {
		hash_for_each_possible_rcu(xp_ucovers_file, h, fnode, key) {
			if (h->up.inode != inode || off <= h->up.offset ||
			    off >= h->up.offset + h->cover)
				continue;
			if (h->mm == mm)
				return h;
			area = find_vma(mm, h->slot);
			if (area && area->vm_start <= h->slot && area->vm_file == h->afile &&
			    vaddr - h->addr == off - h->up.offset)
				return h;	/* a child of fork, with the jump at the same address */
		}
	}
	return NULL;
}

/*
 * 2: uprobe_write_opcode(auprobe, mm, vaddr, opcode), 6.1 and 6.12 alike.
 * An int3 is refused. A write of the original byte is uprobes taking back
 * an int3 that never went in (the registration fails and rolls back): it
 * returns 0 and writes nothing, else uprobes would leak the uprobe.
 */
static int on_uprobe_write(struct kprobe *p, struct pt_regs *regs)
{
	struct mm_struct *mm = (struct mm_struct *)regs->si;
	unsigned long vaddr = regs->dx;
	bool swbp = (u8)regs->cx == UPROBE_SWBP_INSN;
	struct xp_uhook *h;
	u32 id = 0, pid = 0;

	rcu_read_lock();
	h = inside_file(mm, vaddr);
	if (h) {
		id = h->id;
		pid = h->pid;
	}
	rcu_read_unlock();
	if (!h)
		return 0;
	if (swbp)
		pr_warn_ratelimited("refused a uprobe at 0x%lx: inside the jump of user hook %u "
				    "(pid %u or a child; xprobectl uhook del %u first)\n", vaddr, id,
				    pid, id);
	return xp_probe_return(regs, swbp ? (unsigned long)-EBUSY : 0);
}
NOKPROBE_SYMBOL(on_uprobe_write);

static struct kprobe write_kp = {
	.symbol_name = "uprobe_write_opcode",
	.pre_handler = on_uprobe_write,
};

/* Can no jump be guarded from other uprobes now? */
bool xp_ucover_unguarded(void)
{
	return !write_guard_on;
}

void xp_ucover_init(void)
{
	int err = register_kprobe(&write_kp);

	if (err)
		pr_warn("no kprobe on uprobe_write_opcode (%d): user hooks are refused\n", err);
	write_guard_on = !err;
}

/* After every user hook is gone (rmmod). */
void xp_ucover_exit(void)
{
	if (write_guard_on)
		unregister_kprobe(&write_kp);
	write_guard_on = false;
}

#ifdef XPROBES_KUNIT
#include "ucover_kunit.c"
#endif
