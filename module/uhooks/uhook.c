// SPDX-License-Identifier: GPL-2.0
/*
 * User hooks: a traced process's function entry becomes a 5-byte jmp into a
 * trampoline the module mapped into that process (uarea.c), which runs the
 * instructions the jump covers (uslot.c) and jumps back. No trap per call.
 * Only that process's copy of the text page changes: a forced write breaks
 * copy-on-write, as ptrace's POKETEXT does, and every other process running
 * the file keeps the page cache's bytes.
 *
 * Patching live text that other threads run (docs/userhooks.md):
 *  1. A real uprobe, whose filter accepts this mm only, puts an int3 on the
 *     site's first byte. Its handler sends a thread that hits it to the
 *     trampoline (uprobes then skips the original instruction, since the
 *     handler moved the ip), so the function stays correct throughout. Its
 *     page replacement flushes the TLB of every CPU running the mm, an IPI,
 *     which serialises them (SDM: cross-modifying code).
 *  2. When the jump covers several instructions, no thread may be stopped
 *     between two of them: it would resume inside the new jmp. No thread can
 *     enter the range now but through the int3, so the set of threads inside
 *     only shrinks; each thread is looked at until it is seen outside once
 *     (wait_outside()).
 *  3. Under the mm's mmap lock (so that no fork copies the page half
 *     written): the tail, serialise, the jmp opcode over the int3, serialise.
 * The uprobe stays registered while the hook is live: another tool's uprobe
 * on the same site then puts its int3 over our jmp, and our handler keeps
 * sending that process's threads to the trampoline (without it uprobes would
 * step the file's first instruction and run on into our jmp's tail).
 * Removal: int3, serialise, the file's tail, serialise, the file's first
 * byte, serialise; then the uprobe goes (it finds no int3 and writes
 * nothing). The trampoline stays mapped: threads may still be in it.
 *
 * A hook with XPROBES_F_TRAP stops at step 1: the uprobe's int3 stays, and
 * each entry takes the trap to reach the trampoline, which covers what a
 * jump would (cover.c: a thread left in it jumps back where a later jump's
 * would). Nothing but the first byte changes, so no branch can land inside
 * a jump and none is looked for: xprobectl places such a hook without
 * disassembling the file (an unwinder's entry point in libc, met once per
 * exception or per process, is not worth a scan of it). The cover is
 * published all the same (ucover.c): the seccomp seal finds the process's
 * hooks by it.
 *
 * A forked child inherits the patched text and the mapping, so it runs the
 * trampolines, which only run the function's own instructions: correct
 * whether the child is traced or not, and with the module gone.
 *
 * Nothing that waits for the traced process holds xp_views_lock: the
 * process can stretch such a wait for as long as it likes (a FUSE server
 * that never answers a read of its file; its mmap lock held by a fault on
 * such a file, which the mapping of an area, uprobes' registration and
 * every text write wait for). Each such wait ends on a fatal signal to the
 * caller, but for the reaper's, which is a worker's. Where the kernel's
 * own wait does not (vm_mmap(), uprobes), a worker waits, and the command
 * waits killably for the worker (uarea.c, upop()).
 *  - xp_uhook_prepare(), with no lock: reads the function from its file,
 *    the process's text and jump tables, on a hook no one else sees yet.
 *  - xp_uhook_install(), under xp_views_lock, which it lets go twice: to
 *    map a trampoline area or the records buffers when the process has
 *    none (uhook_premake()), and, once the hook is claimed (listed, its
 *    bytes taken, XP_UH_ADDING), for steps 1-3 (uhook_patch()).
 *  - UHOOK_DEL marks the hook XP_UH_DELETING and restores the text without
 *    the lock (uhook_takedown()); the reaper frees it once no uprobe
 *    handler of it can run (one wait for many), the command does not wait.
 *  - A view that goes hands its live hooks to the reaper (a worker,
 *    XP_UH_REAPING); one an add or a del is working on is theirs to finish
 *    (->orphan tells them). VIEW_DEL and the owner's close wait for the
 *    reaper after letting the lock go (xp_uhooks_settle()), rmmod too.
 *
 * Locking: uhook_ids and every listed hook's fields are under xp_views_lock,
 * except what the uprobe handler reads (mm, addr, slot: fixed while the
 * uprobe is registered), ->trapped (atomic), and what the add, the del or
 * the reaper that owns a hook (->state not XP_UH_LIVE) writes while it
 * works without the lock (->live, ->registered, the uprobe; ->up_busy says
 * when upop()'s worker has them instead).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/elf.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <linux/uprobes.h>
#include <linux/version.h>
#include <asm/prctl.h>
#include "xprobes.h"
#include "uhook.h"

unsigned int xp_nr_uhooks;	/* under xp_views_lock */
/*
 * Every listed (claimed) hook by its id, for UHOOK_DEL, the dump and every
 * walk of the hooks: ids go round from 1 to U32_MAX (xa_alloc_cyclic())
 * and skip those still taken, so a hook added after four billion others
 * is never given a live one's id. Written under xp_views_lock (and the
 * array's own lock).
 */
static DEFINE_XARRAY_ALLOC1(uhook_ids);
static u32 next_id;	/* where the next search for a free id starts */

/* How long a thread may stay inside the covered bytes before the add gives up. */
#define INSIDE_WAIT_MS	1000

/*
 * uh_handler() moves the ip and relies on uprobes then leaving the original
 * instruction alone. Before "uprobe: Do not emulate/sstep original
 * instruction when ip is changed" (Debian 6.1.159, 6.12.58; stable
 * backports elsewhere), uprobes emulated or single-stepped it all the same,
 * at the new ip: a thread meeting the int3 while a hook goes in or out would
 * run the function's first instruction twice, or lose the redirect. Does
 * kernel @version (KERNEL_VERSION()) have the fix? Only the two series this
 * module is built for are known; any other is taken not to.
 */
bool xp_uprobes_skip_on_ip_change(unsigned int version)
{
	unsigned int major_minor = version >> 8, sub = version & 0xff;

	if (major_minor == KERNEL_VERSION(6, 1, 0) >> 8)
		return sub >= 159;
	if (major_minor == KERNEL_VERSION(6, 12, 0) >> 8)
		return sub >= 58;
	return false;
}

static int uh_handler(struct uprobe_consumer *uc, struct pt_regs *regs)
{
	struct xp_uhook *h = container_of(uc, struct xp_uhook, uc);

	if (current->mm != h->mm || instruction_pointer(regs) != h->addr)
		return 0;	/* a child forked mid-patch: uprobes steps the file's insn */
	instruction_pointer_set(regs, h->slot);
	atomic64_inc(&h->trapped);
	return 0;
}

static XP_UPROBE_FILTER(uh_filter, uc, mm)
{
	return mm == container_of(uc, struct xp_uhook, uc)->mm;
}

/* After this, every CPU that runs @mm fetches what was written before it. */
static void sync_nop(void *unused)
{
}

static void serialise(struct mm_struct *mm)
{
	on_each_cpu_mask(mm_cpumask(mm), sync_nop, NULL, true);
}

/*
 * Read or write @len bytes of @mm's text at @addr, forcing past the
 * mapping's protection (a write breaks copy-on-write: this mm's copy of the
 * page only). The caller holds the mmap lock for reading.
 */
static int text_rw(struct mm_struct *mm, unsigned long addr, u8 *buf, unsigned int len,
		   unsigned int gup)
{
	bool write = gup & FOLL_WRITE;

	mmap_assert_locked(mm);
	while (len) {
		unsigned int off = offset_in_page(addr), n = min_t(unsigned int, len, PAGE_SIZE - off);
		struct page *page;
		u8 *p;

		if (xp_gup_one(mm, addr, FOLL_FORCE | gup, &page) != 1)
			return -EFAULT;
		p = kmap_local_page(page);
		if (write)
			memcpy(p + off, buf, n);
		else
			memcpy(buf, p + off, n);
		kunmap_local(p);
		if (write)
			set_page_dirty_lock(page);
		put_page(page);
		addr += n;
		buf += n;
		len -= n;
	}
	return 0;
}

static int text_access(struct mm_struct *mm, unsigned long addr, u8 *buf, unsigned int len,
		       bool write)
{
	return text_rw(mm, addr, buf, len, write ? FOLL_WRITE : 0);
}

/*
 * Threads that may be stopped between two covered instructions. Once the
 * int3 is in and every CPU has serialised, no thread enters the range but
 * through the int3, so a thread seen outside it once stays outside: each
 * thread needs one sighting, not all of them at the same moment.
 */
struct inside_scan {
	struct mm_struct *mm;
	unsigned long lo, hi;		/* the site and the end of the covered bytes */
	unsigned int n, left;
	struct task_struct **t;		/* referenced; NULL once seen outside */
	bool *on_cpu_out;		/* seen outside by the IPI (one writer per task) */
};

/*
 * May @ip still lead into the covered bytes? Strictly inside, obviously.
 * The site itself counts too, and so does site + 1 (where a thread that met
 * the int3 sits until uprobes moves it): a thread in uprobes' path may have
 * taken an int3 of an earlier hook on this site and find that uprobe with no
 * consumer left, and then uprobes runs the first instruction itself and
 * resumes it one instruction in. For the same reason a thread being
 * single-stepped (TF: in uprobes' out-of-line slot, or under a debugger) is
 * not counted as outside: its next ip is uprobes' to choose. Such threads
 * are looked at again a moment later.
 */
static bool ip_inside(struct inside_scan *s, struct pt_regs *regs)
{
	return (regs->ip >= s->lo && regs->ip < s->hi) || (regs->flags & X86_EFLAGS_TF);
}

static void seen_outside(struct inside_scan *s, unsigned int i)
{
	if (!s->t[i])
		return;
	put_task_struct(s->t[i]);
	s->t[i] = NULL;
	s->left--;
}

/* On each CPU running the mm: the live user ip (or the one returned to) of current. */
static void scan_cpu(void *arg)
{
	struct inside_scan *s = arg;
	unsigned int i;

	if (current->mm != s->mm || (current->flags & PF_KTHREAD) ||
	    ip_inside(s, task_pt_regs(current)))
		return;
	for (i = 0; i < s->n; i++)
		if (s->t[i] == current)
			WRITE_ONCE(s->on_cpu_out[i], true);
}

/*
 * One round. A thread on a CPU is sampled there by an IPI. A thread off every
 * CPU is in the kernel, and resumes at the ip in its saved registers; those
 * are read under task_lock(), which keeps it from leaving the mm (exit_mm())
 * and so its stack from going away.
 */
static void scan_round(struct inside_scan *s)
{
	unsigned int i;

	on_each_cpu_mask(mm_cpumask(s->mm), scan_cpu, s, true);
	for (i = 0; i < s->n; i++) {
		struct task_struct *t = s->t[i];
		bool out;

		if (READ_ONCE(s->on_cpu_out[i])) {
			seen_outside(s, i);
			continue;
		}
		if (!t || READ_ONCE(t->on_cpu))
			continue;
		task_lock(t);
		out = t->mm != s->mm || !ip_inside(s, task_pt_regs(t));
		task_unlock(t);
		if (out)
			seen_outside(s, i);
	}
}

static int say_interrupted(struct netlink_ext_ack *extack)
{
	NL_SET_ERR_MSG(extack, "interrupted while waiting for the process (it, or another "
		       "process mapping the file, holds its mmap lock, or a thread stays in the "
		       "covered bytes)");
	return -EINTR;
}

static int wait_outside(struct xp_uhook *h, struct netlink_ext_ack *extack)
{
	struct inside_scan s = { .mm = h->mm, .lo = h->addr, .hi = h->addr + h->cover };
	struct task_struct *g, *t;
	unsigned int waited = 0, i, max = 0;
	int err = 0;

	rcu_read_lock();
	for_each_process_thread(g, t)
		max += READ_ONCE(t->mm) == s.mm;
	rcu_read_unlock();
	max += 16;	/* threads created meanwhile start outside, but leave room */
	s.t = kvcalloc(max, sizeof(*s.t), GFP_KERNEL);
	s.on_cpu_out = kvcalloc(max, sizeof(*s.on_cpu_out), GFP_KERNEL);
	if (!s.t || !s.on_cpu_out) {
		kvfree(s.t);
		kvfree(s.on_cpu_out);
		return -ENOMEM;
	}
	rcu_read_lock();
	for_each_process_thread(g, t)
		if (s.n < max && READ_ONCE(t->mm) == s.mm && !(t->flags & PF_KTHREAD))
			s.t[s.n++] = get_task_struct(t);
	rcu_read_unlock();
	s.left = s.n;

	for (;;) {
		scan_round(&s);
		if (!s.left)
			break;
		if (fatal_signal_pending(current)) {
			err = say_interrupted(extack);
			break;
		}
		if (waited >= INSIDE_WAIT_MS) {
			NL_SET_ERR_MSG(extack, "a thread stays stopped inside the instructions the jump "
				       "would cover (blocked or traced there): try again, or use a uprobe");
			err = -EBUSY;
			break;
		}
		usleep_range(1000, 2000);
		waited++;
	}
	for (i = 0; i < s.n; i++)
		if (s.t[i])
			put_task_struct(s.t[i]);
	kvfree(s.t);
	kvfree(s.on_cpu_out);
	return err;
}

static void build_jmp(const struct xp_uhook *h, u8 *jmp)
{
	jmp[0] = 0xe9;
	put_unaligned_le32((u32)(s32)(h->slot - (h->addr + XP_JUMP_SIZE)), jmp + 1);
}

/*
 * Steps 3: the jump goes in over the uprobe's int3. The cover is published
 * (ucover.c: no other uprobe writes inside it from then on), and every byte
 * is read again under the mmap lock, which uprobes' writes take for
 * writing: none came in before.
 */
static int arm(struct xp_uhook *h, struct netlink_ext_ack *extack)
{
	u8 jmp[XP_JUMP_SIZE], now[XP_COVER_MAX];
	int err;

	build_jmp(h, jmp);
	if (mmap_read_lock_killable(h->mm))
		return say_interrupted(extack);
	err = text_access(h->mm, h->addr, now, h->cover, false);
	if (!err && (now[0] != 0xcc || memcmp(now + 1, h->orig + 1, h->cover - 1))) {
		NL_SET_ERR_MSG(extack, "the text changed under the add (another uprobe or a "
			       "debugger wrote there): try again");
		err = -EAGAIN;
	}
	if (!err) {
		err = text_access(h->mm, h->addr + 1, jmp + 1, XP_JUMP_SIZE - 1, true);
		if (err)	/* a tail across two pages, half written: the file's back */
			text_access(h->mm, h->addr + 1, h->orig + 1, XP_JUMP_SIZE - 1, true);
	}
	if (!err) {
		h->live = true;	/* our tail behind the int3: disarm() takes it out */
		serialise(h->mm);
		err = text_access(h->mm, h->addr, jmp, 1, true);
		serialise(h->mm);
	}
	mmap_read_unlock(h->mm);
	if (err && extack && !extack->_msg)
		NL_SET_ERR_MSG(extack, "could not write the process's text");
	return err;
}

/*
 * The file's bytes back, through an int3 of ours (the uprobe is still
 * registered, so a thread that meets it is sent to the trampoline). Leaves
 * the text alone if it no longer holds our jump (the process remapped it).
 * disarm() takes the mmap lock as @wait says, and writes nothing if it
 * does not get it (-EINTR).
 *
 * With FOLL_NOFAULT in @gup (under xp_views_lock, where no fault may wait
 * for a file system), a page that is not there leaves the rest for later:
 * -EAGAIN, the hook still live. Each step leaves the text safe to run,
 * and to take up again: our int3 (the uprobe sends threads to the
 * trampoline) before either tail, and the file's first byte last.
 */
static int disarm_locked(struct xp_uhook *h, unsigned int gup)
{
	u8 jmp[XP_JUMP_SIZE], now[XP_JUMP_SIZE], int3 = 0xcc;
	bool later = gup & FOLL_NOFAULT;

	mmap_assert_locked(h->mm);
	build_jmp(h, jmp);
	if (text_rw(h->mm, h->addr, now, XP_JUMP_SIZE, gup)) {
		if (later)
			return -EAGAIN;
		goto gone;
	}
	if ((now[0] != 0xe9 && now[0] != 0xcc) || memcmp(now + 1, jmp + 1, XP_JUMP_SIZE - 1))
		goto gone;
	if (now[0] == 0xe9) {
		if (text_rw(h->mm, h->addr, &int3, 1, gup | FOLL_WRITE) && later)
			return -EAGAIN;
		serialise(h->mm);
	}
	if (text_rw(h->mm, h->addr + 1, h->orig + 1, XP_JUMP_SIZE - 1, gup | FOLL_WRITE) && later)
		return -EAGAIN;
	serialise(h->mm);
	if (text_rw(h->mm, h->addr, h->orig, 1, gup | FOLL_WRITE) && later)
		return -EAGAIN;
	serialise(h->mm);
	h->live = false;
	return 0;
gone:
	pr_warn("uhook %u: pid %u's text at 0x%lx is no longer our jump; left alone\n",
		h->id, h->pid, h->addr);
	h->live = false;
	return 0;
}

/*
 * How a take-down waits: killably (a command, whose caller may give up),
 * or not at all (the reaper, which tries again later), or not at all and
 * without faulting a page in (a view going away, under xp_views_lock).
 */
enum { XP_WAIT_KILLABLE, XP_WAIT_TRY, XP_WAIT_NOFAULT };

static int disarm(struct xp_uhook *h, int wait)
{
	int err;

	if (wait != XP_WAIT_KILLABLE ? !mmap_read_trylock(h->mm) : mmap_read_lock_killable(h->mm))
		return -EINTR;
	err = disarm_locked(h, wait == XP_WAIT_NOFAULT ? FOLL_NOFAULT : 0);
	mmap_read_unlock(h->mm);
	return err;
}

/*
 * The hook's trampoline as it would be at @va: the event stub if it has
 * events (uevent.c), then the covered instructions; *@why says why not, if not.
 */
static int build_tramp_why(struct xp_uhook *h, struct xp_uarea *a, unsigned long va, u8 *code,
			   u8 *starts, const char **why)
{
	unsigned int stub = h->events ? XP_USTUB_LEN : h->records ? XP_URSTUB_LEN : 0;
	int i, len;

	if (h->events)
		xp_ustub(code);
	else if (h->records)
		xp_urec_stub(code, a, va, h->cookie, h->returns);
	len = xp_uslot_build(h->orig, h->cover, h->addr, va + stub, code + stub,
			     XP_USLOT_MAX - stub, starts, why);
	for (i = 0; len >= 0 && i < h->ninsn; i++)
		starts[i] += stub;
	return len < 0 ? len : len + stub;
}

static int build_tramp(void *arg, struct xp_uarea *a, unsigned long va, u8 *code)
{
	u8 starts[XP_COVER_INSNS];	/* where each instruction lands: unused here */
	const char *why;

	return build_tramp_why(arg, a, va, code, starts, &why);
}

/*
 * Is @task's code not what user hooks are made for? They are for x86-64
 * code, which the decoder reads, the stubs are written in and the return
 * thunks keep the stack of. A 32-bit process (i386, where 0x40-0x4f are
 * instructions, not REX prefixes; or x32, whose pointers are 32 bits) has
 * TIF_ADDR32 on every thread from its exec on; a thread with a user shadow
 * stack would take a return thunk's address for a forged return. Says
 * why in @extack.
 */
static bool not_x86_64(struct task_struct *task, struct netlink_ext_ack *extack)
{
	struct task_struct *t;
	bool no = false;

	rcu_read_lock();
	for_each_thread(task, t) {
		if (test_ti_thread_flag(task_thread_info(t), TIF_ADDR32)) {
			NL_SET_ERR_MSG(extack, "the process is a 32-bit one (i386 or x32): user hooks "
				       "patch x86-64 code only; use a uprobe");
			no = true;
			break;
		}
#ifdef CONFIG_X86_USER_SHADOW_STACK
		if (READ_ONCE(t->thread.features) & ARCH_SHSTK_SHSTK) {
			NL_SET_ERR_MSG(extack, "a thread of the process runs with a user shadow "
				       "stack, which the trampolines do not keep; use a uprobe");
			no = true;
			break;
		}
#endif
	}
	rcu_read_unlock();
	return no;
}

/* Is @hdr the start of an x86-64 ELF object? */
static bool elf_x86_64(const u8 *hdr)
{
	const Elf64_Ehdr *e = (const Elf64_Ehdr *)hdr;

	return !memcmp(e->e_ident, ELFMAG, SELFMAG) && e->e_ident[EI_CLASS] == ELFCLASS64 &&
	       e->e_ident[EI_DATA] == ELFDATA2LSB && le16_to_cpu(e->e_machine) == EM_X86_64;
}

/* The function's bytes as its file has them, and where the file is. */
static u8 *read_func(struct xp_uhook *h, struct mm_struct *mm, u32 size, struct file **filep,
		     loff_t *offp, struct netlink_ext_ack *extack)
{
	struct vm_area_struct *vma;
	struct file *file = NULL;
	u8 ehdr[sizeof(Elf64_Ehdr)];
	loff_t off = 0, pos;
	u8 *buf;

	if (mmap_read_lock_killable(mm))
		return ERR_PTR(say_interrupted(extack));
	vma = find_vma(mm, h->func);
	if (!vma || vma->vm_start > h->func || h->func + size > vma->vm_end)
		NL_SET_ERR_MSG(extack, "the function is not inside one mapping of the process");
	else if (!vma->vm_file || !(vma->vm_flags & VM_EXEC) ||
		 (vma->vm_flags & (VM_WRITE | VM_MAYSHARE)))
		NL_SET_ERR_MSG(extack, "the function is not in a private, read-only, executable "
				   "file mapping (program or library text)");
	else {
		file = get_file(vma->vm_file);
		off = h->func - vma->vm_start + ((loff_t)vma->vm_pgoff << PAGE_SHIFT);
	}
	mmap_read_unlock(mm);
	if (!file)
		return ERR_PTR(-EINVAL);
	buf = kvmalloc(size, GFP_KERNEL);
	if (!buf) {
		fput(file);
		return ERR_PTR(-ENOMEM);
	}
	pos = 0;
	if (kernel_read(file, ehdr, sizeof(ehdr), &pos) != sizeof(ehdr) || !elf_x86_64(ehdr)) {
		NL_SET_ERR_MSG(extack, "the function's file is not an x86-64 ELF object");
		kvfree(buf);
		fput(file);
		return ERR_PTR(-ENOEXEC);
	}
	pos = off;
	if (kernel_read(file, buf, size, &pos) != size) {
		NL_SET_ERR_MSG(extack, "could not read the function from its file");
		kvfree(buf);
		fput(file);
		return ERR_PTR(-EIO);
	}
	*filep = file;
	*offp = off;
	return buf;
}

/*
 * Does one of the covered instructions enter the kernel: syscall, sysenter,
 * int n? On the way, where each starts (@starts, from @code).
 */
static bool covers_syscall(const u8 *code, unsigned int cover, u8 *starts)
{
	unsigned int pos, n = 0;
	struct xp_insn insn;

	for (pos = 0; pos < cover; pos += insn.len) {
		/* cannot be: the cover decision counted and decoded them */
		if (n == XP_COVER_INSNS || xp_insn_decode(&insn, code + pos, cover - pos))
			return true;
		starts[n++] = pos;
		if ((insn.map == 1 && (insn.opcode == 0x05 || insn.opcode == 0x34)) ||
		    (insn.map == 0 && (insn.opcode == 0xcd || insn.opcode == 0xcc || insn.opcode == 0xce)))
			return true;
	}
	return false;
}

/*
 * The function jumps through a register: if that is a jump table's
 * dispatch, its entries (32-bit offsets from the table, what compilers emit
 * for position-independent code) must not land inside the covered bytes
 * [@site, @site + @cover). Every RIP-relative lea target outside the
 * function might be a table: each is read as one, from its first entry to
 * the first that lands outside the span @text of the file's executable
 * mappings (a table's entries are all code of the function, its cold part
 * included, so that one is past the table's end: the next table's, or
 * other data; the span runs from the lowest to the highest, since the
 * text may be split: a range mlock()ed or made huge, BOLT's hot and cold
 * segments), TABLE_ENTRIES entries at most, or up to what the process
 * maps. Reading past a real
 * table (into the next one) can only add targets, so at worst a function
 * is refused that would have been safe. A jump through a register that is
 * no table's (a function pointer) targets a function's start.
 *
 * Until 2026-12-03 every base was read for TABLE_ENTRIES entries: 69 M of
 * the bench VM's 1.47 G instructions of attaching traceall, where most
 * bases are strings and other data whose first word already lands
 * nowhere near the text.
 */
#define TABLE_ENTRIES	4096
#define TABLE_FIRST	64	/* entries read first: most tables are shorter */

struct text_range {
	unsigned long lo, hi;
};

/*
 * From the lowest to the highest executable mapping of @mm of the file
 * whose text holds @site; all of memory if the site is no such text.
 */
static int text_range(struct mm_struct *mm, unsigned long site, struct text_range *text)
{
	struct vm_area_struct *vma;
	struct inode *inode = NULL;

	text->lo = 0;
	text->hi = ULONG_MAX;
	if (mmap_read_lock_killable(mm))
		return -EINTR;
	vma = vma_lookup(mm, site);
	if (vma && (vma->vm_flags & VM_EXEC) && vma->vm_file)
		inode = file_inode(vma->vm_file);
	if (inode) {
		VMA_ITERATOR(vmi, mm, 0);

		text->lo = ULONG_MAX;
		text->hi = 0;
		for_each_vma(vmi, vma) {
			if (!vma->vm_file || file_inode(vma->vm_file) != inode ||
			    !(vma->vm_flags & VM_EXEC))
				continue;
			text->lo = min(text->lo, vma->vm_start);
			text->hi = max(text->hi, vma->vm_end);
		}
	}
	mmap_read_unlock(mm);
	return 0;
}

/* One table at @tb: 1 if an entry lands inside the cover, 0 if none, -errno. */
static int check_table(struct task_struct *task, unsigned long tb, const struct text_range *text,
		       unsigned long site, unsigned int cover, s32 *e)
{
	unsigned int j, k, want = TABLE_FIRST;
	int n;

	for (j = 0; j < TABLE_ENTRIES; j += n / sizeof(*e), want = PAGE_SIZE / sizeof(*e)) {
		want = min(want, TABLE_ENTRIES - j);
		n = access_process_vm(task, tb + j * sizeof(*e), e, want * sizeof(*e), FOLL_FORCE);
		if (n < (int)sizeof(*e))	/* the mapping ends, or we are being killed */
			return fatal_signal_pending(current) ? -EINTR : 0;
		for (k = 0; k < n / sizeof(*e); k++) {
			unsigned long target = tb + (long)e[k];

			if (target < text->lo || target >= text->hi)
				return 0;	/* past the table */
			if (target > site && target < site + cover)
				return 1;
		}
	}
	return 0;
}

static int check_tables(struct task_struct *task, struct mm_struct *mm,
			const struct xp_cover_tables *t, unsigned long site, unsigned int cover,
			const char **why)
{
	struct text_range text;
	unsigned int i;
	int err;
	s32 *e;

	*why = "interrupted";
	err = text_range(mm, site, &text);
	if (err)
		return err;
	*why = "out of memory";
	e = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	for (i = 0; i < t->n && !err; i++)
		err = check_table(task, t->base[i], &text, site, cover, e);
	kfree(e);
	if (err > 0) {
		*why = "a jump table entry lands inside the covered bytes";
		return -EINVAL;
	}
	if (err)
		*why = "interrupted";
	return err;
}

static void uhook_free_rcu(struct rcu_head *rcu)
{
	struct xp_uhook *h = container_of(rcu, struct xp_uhook, rcu);

	free_percpu(h->hits);
	kfree(h);
}

/*
 * An event handler may still be reading the hook (uevent.c): its memory
 * goes after a grace period. It reads the mm pointer only as a key.
 */
static void uhook_free(struct xp_uhook *h)
{
	iput(h->up.inode);
	mmdrop(h->mm);
	call_rcu(&h->rcu, uhook_free_rcu);
}

/*
 * Does a branch from elsewhere in the file (@r's list: the module decodes
 * the function only) land between two of the instructions a jump at @site_off
 * would cover? Its target would then be a byte of the jump's displacement.
 * The list holds the branches landing before its span only: a cover past
 * it is refused (EMSGSIZE: the caller asks again with the whole window).
 */
static int branch_from_outside(const struct xp_uhook_req *r, unsigned int site_off,
			       unsigned int cover, struct netlink_ext_ack *extack)
{
	unsigned int i;

	BUILD_BUG_ON(4 + XP_COVER_MAX > XPROBES_UH_BRANCH_WINDOW);	/* ENDBR64, then the cover */
	if (site_off + cover > r->branch_span) {
		NL_SET_ERR_MSG_FMT(extack, "no jump here: the branches were listed to +%u, the "
				   "jump covers to +%u", r->branch_span, site_off + cover);
		return -EMSGSIZE;
	}
	for (i = 0; i < r->nbranches; i++) {
		const struct xprobes_uh_branch *b = &r->branches[i];

		if (b->to > site_off && b->to < site_off + cover) {
			/* extack holds 80 bytes: xprobectl names the branch */
			NL_SET_ERR_MSG_FMT(extack, "no jump here: branch at file offset 0x%llx lands "
					   "at +%u", (unsigned long long)b->from, b->to);
			return -EINVAL;
		}
	}
	return 0;
}

/* The add is over, either way: its references on the process go. */
static void uhook_add_done(struct xp_uhook *h)
{
	if (h->new_rb)		/* another add gave the view its buffers first */
		xp_urecbuf_drop(h->new_rb);
	h->new_rb = NULL;
	if (h->add_mm)
		mmput(h->mm);
	h->add_mm = false;
	if (h->add_task)
		put_task_struct(h->add_task);
	h->add_task = NULL;
}

void xp_uhook_abandon(struct xp_uhook *h)
{
	uhook_add_done(h);
	uhook_free(h);
}

/*
 * The hook as asked for, of the process @task: its own fields only. Takes
 * over the references on @task and @mm (get_task_mm()'s), whatever happens.
 */
static struct xp_uhook *uhook_new(const struct xp_uhook_req *req, struct task_struct *task,
				  struct mm_struct *mm, struct netlink_ext_ack *extack)
{
	struct xp_uhook *h = kzalloc(sizeof(*h), GFP_KERNEL);

	if (!h) {
		mmput(mm);
		put_task_struct(task);
		return ERR_PTR(-ENOMEM);
	}
	h->func = req->func;
	h->pid = req->pid;
	h->mm = mm;
	mmgrab(mm);
	h->add_mm = true;		/* get_task_mm()'s reference, until the add is over */
	h->add_task = task;
	h->cookie = req->cookie;
	INIT_HLIST_NODE(&h->enode);
	INIT_HLIST_NODE(&h->cnode);
	INIT_HLIST_NODE(&h->mnode);
	INIT_HLIST_NODE(&h->fnode);
	if (req->flags & XPROBES_F_EVENTS) {
		h->hits = alloc_percpu(struct xp_uhits);
		if (!h->hits) {
			xp_uhook_abandon(h);
			return ERR_PTR(-ENOMEM);
		}
		h->events = true;
	}
	if (req->flags & XPROBES_F_RECORDS) {
		if (req->cookie > XP_UREC_COOKIE_MASK) {
			NL_SET_ERR_MSG_FMT(extack, "a records hook's cookie is below %u: records carry "
					   "14 bits of it", XP_UREC_COOKIE_MASK + 1);
			xp_uhook_abandon(h);
			return ERR_PTR(-ERANGE);
		}
		h->records = true;
	}
	h->returns = (h->events || h->records) && (req->flags & XPROBES_F_RETURNS);
	h->unwinder = h->events && (req->flags & XPROBES_F_UNWINDER);
	h->trap = req->flags & XPROBES_F_TRAP;
	return h;
}

/*
 * The process of @req's pid, if user hooks can patch it; with its mm
 * (get_task_mm()'s reference) in *@mmp.
 */
static struct task_struct *uhook_target(const struct xp_uhook_req *req, struct mm_struct **mmp,
					struct netlink_ext_ack *extack)
{
	struct task_struct *task;
	int err = -EOPNOTSUPP;

	if (!req->size || req->size > XP_UFUNC_MAX) {
		NL_SET_ERR_MSG(extack, "the function's size must be 1 byte to 1 MiB");
		return ERR_PTR(-EINVAL);
	}
	task = xp_get_task(req->pid, extack);
	if (!task)
		return ERR_PTR(-ESRCH);
	*mmp = get_task_mm(task);
	if (!*mmp) {
		put_task_struct(task);
		NL_SET_ERR_MSG(extack, "the process has no address space (exiting)");
		return ERR_PTR(-ESRCH);
	}
	if (not_x86_64(task, extack))
		goto fail;
	if (!xp_uprobes_skip_on_ip_change(LINUX_VERSION_CODE)) {
		NL_SET_ERR_MSG(extack, "this kernel's uprobes run the original instruction after a "
			       "handler moved the ip (fixed in 6.1.159, 6.12.58): no user hooks");
		goto fail;
	}
	if (xp_ucover_unguarded()) {
		NL_SET_ERR_MSG(extack, "the module could not place its kprobe on "
			       "uprobe_write_opcode, which keeps other uprobes out of a jump "
			       "(see the kernel log): no user hooks");
		goto fail;
	}
	return task;
fail:
	mmput(*mmp);
	put_task_struct(task);
	return ERR_PTR(err);
}

/*
 * Which instructions the jump covers, from the function's bytes in its file:
 * h->addr, cover, ninsn, orig, istart, and the uprobe's inode and offset.
 */
static int uhook_decide(struct xp_uhook *h, const struct xp_uhook_req *req,
			struct netlink_ext_ack *extack)
{
	struct xp_cover_tables tables;
	unsigned int site_off = 0;
	struct xp_cover c;
	struct file *file;
	loff_t off;
	u8 *buf;
	int err;

	buf = read_func(h, h->mm, req->size, &file, &off, extack);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	/* Where: past ENDBR64, which indirect calls need to find at the entry. */
	if (req->size >= 4 && !memcmp(buf, "\xf3\x0f\x1e\xfa", 4))
		site_off = 4;
	if (h->trap) {
		tables.reg_jumps = 0;
		err = xp_cover_decide_trap(buf, req->size, site_off, &c);
	} else {
		err = xp_cover_decide_user(buf, h->func, req->size, site_off, &c, &tables);
	}
	if (!err && tables.reg_jumps)
		err = check_tables(h->add_task, h->mm, &tables, h->func + site_off, c.bytes,
				   &c.why);
	if (err) {
		NL_SET_ERR_MSG_FMT(extack, "no jump here: %s", c.why);
		goto out;
	}
	h->addr = h->func + site_off;
	h->cover = c.bytes;
	h->ninsn = c.ninsn;
	/* A trap leaves the covered bytes but the first as the file has them. */
	err = h->trap ? 0 : branch_from_outside(req, site_off, c.bytes, extack);
	if (err)
		goto out;
	if (covers_syscall(buf + site_off, c.bytes, h->istart)) {
		/* A thread in it resumes past it, and a restarted syscall goes back 2 bytes. */
		NL_SET_ERR_MSG(extack, "no jump here: a covered instruction enters the kernel (syscall, int)");
		err = -EINVAL;
		goto out;
	}
	memcpy(h->orig, buf + site_off, c.bytes);
	h->up.inode = igrab(file_inode(file));
	h->up.offset = off + site_off;
out:
	kvfree(buf);
	fput(file);
	return err;
}

/* The process's own bytes must be the file's: no one else's probe or patch there. */
static int uhook_text_is_file(struct xp_uhook *h, struct netlink_ext_ack *extack)
{
	u8 now[XP_COVER_MAX];
	int err;

	if (mmap_read_lock_killable(h->mm))
		return -EINTR;
	err = text_access(h->mm, h->addr, now, h->cover, false);
	mmap_read_unlock(h->mm);
	if (err) {
		NL_SET_ERR_MSG(extack, "could not read the process's text");
		return err;
	}
	/* said at install: an earlier hook of ours there is what it would be */
	h->text_differs = memcmp(now, h->orig, h->cover);
	return 0;
}

/*
 * Step one of UHOOK_ADD, without xp_views_lock: everything that waits on the
 * process or its file (the file's bytes through kernel_read(), which a FUSE
 * server may never answer; jump tables and text read from the process).
 * Such waits end on a fatal signal to the caller. Nothing shared is touched:
 * the hook is the caller's until xp_uhook_install() or xp_uhook_abandon().
 */
struct xp_uhook *xp_uhook_prepare(const struct xp_uhook_req *req, struct netlink_ext_ack *extack)
{
	struct task_struct *task;
	struct mm_struct *mm;
	struct xp_uhook *h;
	int err;

	task = uhook_target(req, &mm, extack);
	if (IS_ERR(task))
		return ERR_CAST(task);
	h = uhook_new(req, task, mm, extack);
	if (IS_ERR(h))
		return h;
	err = uhook_decide(h, req, extack);
	if (!err)
		err = uhook_text_is_file(h, extack);
	if (err) {
		xp_uhook_abandon(h);
		return ERR_PTR(err);
	}
	return h;
}

/*
 * The view @h's process runs on, found again, and whether @h may go there:
 * what the lock protects, checked before anything is made for the add and
 * again after every time the add let the lock go.
 */
static int uhook_check(struct xp_uhook *h, struct xp_view **vp, struct netlink_ext_ack *extack)
{
	struct xp_view *v;
	int err;

	v = xp_view_find_pid(h->pid, extack);
	if (PTR_ERR_OR_ZERO(v) == -EAGAIN) {
		/*
		 * Not the same message again: its addresses may be the old
		 * image's. (Until 2026-12-04 ESRCH came under a "try again".)
		 */
		NL_SET_ERR_MSG(extack, "in exec: add the hook again once the new program runs");
		return -ESRCH;
	}
	if (IS_ERR(v))
		return -ESRCH;
	if (h->events || h->records) {
		err = xp_uevents_get(v, h->mm, extack);	/* records: the slow path's call */
		if (err)
			return err;
	}
	if (h->unwinder) {
		err = xp_unwinds_get(v, extack);
		if (err)
			return err;
	}
	if (xp_ucover_overlaps(h->mm, h->addr, h->addr + h->cover)) {
		NL_SET_ERR_MSG(extack, "the process has a user hook on these instructions already");
		return -EEXIST;
	}
	if (h->text_differs) {
		NL_SET_ERR_MSG(extack, "the process's text there differs from its file (a "
			       "uprobe, a debugger's breakpoint or another patch is there)");
		return -EBUSY;
	}
	if (h->records) {
		err = xp_urec_check(v, h->mm, extack);
		if (err)
			return err;
	}
	*vp = v;
	return 0;
}

/*
 * What the add needs that waits for the process, made without xp_views_lock
 * (held by the caller: this lets it go and takes it again): a trampoline
 * area within reach of the site, the records buffers of a view that has
 * none. Both wait for the process's mmap lock; a fatal signal ends the wait.
 */
static int uhook_premake(struct xp_uhook *h, bool area, bool bufs,
			 struct netlink_ext_ack *extack)
{
	struct xp_urecbuf *rb = NULL;
	struct xp_uarea *a = NULL;
	int err = 0;

	lockdep_assert_held(&xp_views_lock);
	mutex_unlock(&xp_views_lock);
	if (area) {
		a = xp_uarea_map(h->mm, h->addr, extack);
		if (IS_ERR(a)) {
			err = PTR_ERR(a);
			a = NULL;
		}
	}
	if (!err && bufs) {
		rb = xp_urecbuf_make(h->add_task, h->mm, extack);
		if (IS_ERR(rb)) {
			err = PTR_ERR(rb);
			rb = NULL;
		}
	}
	mutex_lock(&xp_views_lock);
	if (a)
		xp_uarea_adopt(a);	/* listed even if the add fails: the next one uses it */
	if (rb)
		h->new_rb = rb;
	return err;
}

/*
 * The view, checked, with what the add needs made: on success the lock has
 * been held since the last check.
 */
static int uhook_ready(struct xp_uhook *h, struct xp_view **vp, struct netlink_ext_ack *extack)
{
	unsigned int tries;
	bool area, bufs;
	int err;

	for (tries = 0; ; tries++) {
		err = uhook_check(h, vp, extack);
		if (err)
			return err;
		area = !xp_uarea_room(h->mm, h->addr, XP_USLOT_MAX);
		bufs = h->records && !(*vp)->urec && !h->new_rb;
		if (!area && !bufs)
			return 0;
		if (tries == 3) {
			NL_SET_ERR_MSG(extack, "the process's areas or view kept changing during the "
				       "add: try again");
			return -EAGAIN;
		}
		err = uhook_premake(h, area, bufs, extack);
		if (err)
			return err;
	}
}

/* The trampoline: a retired one of this site if its bytes are the same, else a new slot. */
static int uhook_tramp(struct xp_uhook *h, struct task_struct *task,
		       struct netlink_ext_ack *extack)
{
	const char *why;
	int err, len;

	if (!xp_uarea_reuse(h->mm, h->addr, build_tramp, h, &h->area, &h->slot)) {
		long va = xp_uarea_alloc(h->mm, h->addr, XP_USLOT_MAX, &h->area, extack);

		if (IS_ERR_VALUE(va))
			return va;
		h->slot = va;
	}
	if (h->returns && h->events) {
		err = xp_urets_init(h->area, extack);
		if (err)
			return err;
	}
	if (h->records) {
		err = xp_urec_prepare(h->view, h->area, task, h->mm, &h->new_rb, extack);
		if (err)
			return err;
	}
	len = build_tramp_why(h, h->area, h->slot, h->tramp, h->tstart, &why);
	if (len < 0) {
		NL_SET_ERR_MSG_FMT(extack, "no trampoline: %s", why);
		return len;
	}
	err = xp_uarea_write(h->area, h->slot, h->tramp, len);
	if (err)
		return err;
	h->tramp_len = len;	/* only now may the slot be reused for these bytes */
	return 0;
}

/*
 * uprobes' registration and unregistration take the mmap lock of every
 * process that maps the file, for writing, and their wait does not end on
 * a signal. A command has a worker do them (upop()) and waits killably;
 * killed, it leaves the worker at it (->up_busy), and whoever takes the
 * hook out next leaves it alone until the worker is done (uhook_unpatch():
 * the reaper looks again 50 ms later). The reaper, a worker itself, calls
 * uprobes directly, once the process's own lock is free (docs/userhooks.md:
 * another process mapping the file can still hold it up).
 */
static DECLARE_WAIT_QUEUE_HEAD(upop_wq);

/* Its handlers may still run until xp_uprobe_unregister_sync(). */
static void uprobe_drop(struct xp_uhook *h)
{
	xp_uprobe_unregister_nosync(&h->up, &h->uc);
	h->registered = false;
}

static void uhook_upop(struct work_struct *work)
{
	struct xp_uhook *h = container_of(work, struct xp_uhook, upwork);

	if (h->registered) {
		uprobe_drop(h);
		h->up_err = 0;
	} else {
		h->up_err = xp_uprobe_register(&h->up, &h->uc);
		h->registered = !h->up_err;
	}
	/* Not @h's after this: its owner may free it. */
	smp_store_release(&h->up_busy, false);
	wake_up_all(&upop_wq);
}

/*
 * While uprobes waits for a process's mmap lock it holds dup_mmap_sem, which
 * every fork in the system takes: a command first waits for the hooked
 * process's lock itself, killably and without it, and takes it and lets it
 * go. (Another process mapping the file, or this one again a moment later,
 * can still hold uprobes up: then only the worker waits.)
 */
static int mmap_write_wait(struct mm_struct *mm)
{
	if (mmap_write_lock_killable(mm))
		return -EINTR;
	mmap_write_unlock(mm);
	return 0;
}

/* Waits killably for the worker's op in progress on @h, if any. */
static int upop_wait(struct xp_uhook *h)
{
	/* acquire: pairs with uhook_upop()'s release (->registered, ->up_err) */
	return wait_event_killable(upop_wq, !smp_load_acquire(&h->up_busy)) ? -EINTR : 0;
}

/*
 * Register @h's uprobe, or unregister it, in the module's worker (its
 * queue is unbound, and rmmod drains it). -EINTR: the caller was killed,
 * the worker goes on.
 */
static int upop(struct xp_uhook *h)
{
	WRITE_ONCE(h->up_busy, true);
	INIT_WORK(&h->upwork, uhook_upop);
	queue_work(xp_uwq, &h->upwork);
	return upop_wait(h) ?: h->up_err;
}

/*
 * Steps 1-3 of the patch protocol (the file's header comment), without
 * xp_views_lock: each waits for the process's mmap lock, which it may hold
 * for as long as it likes, and each wait ends on a fatal signal (upop()
 * for uprobes'). The caller undoes what was done.
 */
static int uhook_patch(struct xp_uhook *h, struct netlink_ext_ack *extack)
{
	int err;

	h->uc.handler = uh_handler;
	h->uc.filter = uh_filter;
	if (h->events || h->records) {	/* its trampoline makes system calls */
		err = xp_useccomp_claimed(h, extack);
		if (err)
			return err;
	}
	err = mmap_write_wait(h->mm) ?: upop(h);
	if (err == -EINTR)
		return say_interrupted(extack);
	if (err) {
		NL_SET_ERR_MSG(extack, "uprobes refused the site (its first instruction)");
		return err;
	}
	if (h->trap)
		return 0;	/* the int3 stays: step 1 is the whole protocol */
	err = h->ninsn > 1 ? wait_outside(h, extack) : 0;
	if (!err && READ_ONCE(h->orphan))
		err = -ESRCH;	/* its view, and the sigreturn fixup, went: no jump */
	if (!err)
		err = arm(h, extack);
	return err;
}

/*
 * Taken out of the process: the site's own bytes back, the uprobe's
 * registration dropped (its handlers may still run until
 * xp_uprobe_unregister_sync()). Without xp_views_lock. Waits for the mmap
 * lock as @wait says: an error if it did not get it (-EINTR: killed, or a
 * trylock failed; -EBUSY: held up), and whatever is left is still to do.
 */
static int uhook_unpatch(struct xp_uhook *h, int wait)
{
	int err = 0;

	/* A killed command's upop(); acquire: as in upop_wait() */
	if (smp_load_acquire(&h->up_busy)) {
		if (wait != XP_WAIT_KILLABLE)
			return -EBUSY;
		err = upop_wait(h);
		if (err)
			return err;
	}
	if (!mmget_not_zero(h->mm)) {
		h->live = false;	/* no one runs that text any more */
	} else {
		if (h->live)
			err = disarm(h, wait);
		if (!err && h->registered) {
			if (wait == XP_WAIT_KILLABLE)
				err = mmap_write_wait(h->mm);
			else if (!xp_mmap_write_free(h->mm))
				err = -EBUSY;	/* the reaper: again later */
		}
		mmput(h->mm);
		if (err)
			return err;
	}
	if (!h->registered)
		return 0;
	if (wait == XP_WAIT_KILLABLE)
		return upop(h);
	uprobe_drop(h);
	return 0;
}

/* Once no uprobe handler of @h runs any more (xp_uprobe_unregister_sync()). */
static void uhook_release(struct xp_uhook *h)
{
	xp_ucover_unpublish(h);	/* the file's bytes are back */
	xp_uarea_retire(h->area, h->addr, h->slot, h->tramp, h->tramp_len);
	xa_erase(&uhook_ids, h->id);
	xp_nr_uhooks--;
	if (h->events)
		xp_uevent_unpublish(h);
	xp_urets_forget(h);
	uhook_free(h);
}

struct workqueue_struct *xp_uwq;	/* the reaper and the mapping workers (uarea.c) */
static LIST_HEAD(xp_uhooks_going);	/* XP_UH_REAPING, for the reaper; under xp_views_lock */
static u64 handed, reaped;		/* hooks ever handed to the reaper, and taken out */
static unsigned long reap_steps;	/* the reaper's progress, hook by hook (settle) */
static DECLARE_WAIT_QUEUE_HEAD(reaped_wq);
static void uhooks_reap(struct work_struct *work);
static DECLARE_DELAYED_WORK(xp_uhooks_reaper, uhooks_reap);

/* Under xp_views_lock; the caller starts the reaper (reaper_kick()). */
static void uhook_to_reaper(struct xp_uhook *h)
{
	h->state = XP_UH_REAPING;
	list_add_tail(&h->gnode, &xp_uhooks_going);
	handed++;
}

static void reaper_kick(void)
{
	mod_delayed_work(xp_uwq, &xp_uhooks_reaper, 0);
}

/*
 * Take @h (listed, and the caller's: not XP_UH_LIVE) out of the process.
 * Lets xp_views_lock go while it waits for the process, and takes it
 * again. A fatal signal to the caller ends the wait (-EINTR): the reaper
 * then finishes, and no command finds the hook meanwhile.
 *
 * Once the file's bytes are back (->out), an add on the same bytes may go
 * in (overlaps()), a signal frame inside them is left alone (ucover.c),
 * its events stop (a thread still in its trampoline fires nothing), and
 * so do its return thunks. What its uprobe handler may still do, send a
 * thread that met the int3 to its slot, has to be waited for (6.12:
 * RCU-tasks-trace and SRCU grace periods, a quarter of a second in the
 * test VM): the slot stays, and so does the cover in the process's hash,
 * which makes a seccomp filter wait for the seal (useccomp.c) while such
 * a thread may still run into the stub's system call. The reaper retires
 * both and frees the hook after one such wait for all the hooks it has
 * (uhooks_reap()); the command does not wait for it.
 */
static int uhook_takedown(struct xp_uhook *h)
{
	int err;

	lockdep_assert_held(&xp_views_lock);
	mutex_unlock(&xp_views_lock);
	err = uhook_unpatch(h, XP_WAIT_KILLABLE);
	mutex_lock(&xp_views_lock);
	if (!err) {
		WRITE_ONCE(h->out, true);	/* read under RCU by ucover.c */
		if (h->events)
			xp_uevent_unpublish(h);
		xp_urets_forget(h);
	}
	uhook_to_reaper(h);
	reaper_kick();
	return err;
}

/*
 * The reaper: the hooks of views that went (xp_uhooks_view_gone()), and
 * those whose del or add was killed, leave their processes here, in a
 * worker, without xp_views_lock. It does not wait for a process's mmap
 * lock: one that holds it has its hooks looked at again a moment later.
 * (It can still wait in a fault of the text page, and in uprobes for the
 * lock of another process mapping the same file: docs/userhooks.md.) One
 * wait for the uprobe handlers of all it took out, not one each: trace of
 * every function of a program leaves thousands.
 */
static void uhooks_reap(struct work_struct *work)
{
	struct xp_uhook *h, *n;
	LIST_HEAD(mine);
	LIST_HEAD(done);
	u64 nr = 0;

	mutex_lock(&xp_views_lock);
	list_splice_init(&xp_uhooks_going, &mine);
	mutex_unlock(&xp_views_lock);
	list_for_each_entry_safe(h, n, &mine, gnode)
		if (h->out || !uhook_unpatch(h, XP_WAIT_TRY)) {
			list_move_tail(&h->gnode, &done);
			WRITE_ONCE(reap_steps, reap_steps + 1);
		}
	if (!list_empty(&done))
		xp_uprobe_unregister_sync();
	mutex_lock(&xp_views_lock);
	list_for_each_entry_safe(h, n, &done, gnode) {
		uhook_release(h);
		nr++;
	}
	list_splice(&mine, &xp_uhooks_going);	/* held up: again in a moment */
	if (!list_empty(&xp_uhooks_going))
		queue_delayed_work(xp_uwq, &xp_uhooks_reaper, HZ / 20);
	if (nr)
		xp_uareas_release_unused();
	WRITE_ONCE(reaped, reaped + nr);
	mutex_unlock(&xp_views_lock);
	if (nr)
		wake_up_all(&reaped_wq);
}

/* An id no other listed hook has, for @h (the dump and UHOOK_DEL find it by it). */
static int uhook_id_take(struct xp_uhook *h)
{
	int err = xa_alloc_cyclic(&uhook_ids, &h->id, h, XA_LIMIT(1, U32_MAX), &next_id,
				  GFP_KERNEL);

	return err < 0 ? err : 0;	/* 1: the ids went round */
}

/*
 * Claimed: listed, so that no other add takes these bytes and a view going
 * away finds it, but no command's to take; its cover is published (ucover.c:
 * from now on no other uprobe writes inside it).
 */
static int uhook_claim(struct xp_uhook *h, struct netlink_ext_ack *extack)
{
	int err = uhook_id_take(h);

	if (err == -EBUSY)
		NL_SET_ERR_MSG(extack, "no user hook id left (every one of 2^32 is taken)");
	if (err)
		return err;
	h->state = XP_UH_ADDING;
	xp_nr_uhooks++;
	xp_ucover_publish(h);
	return 0;
}

/*
 * Step two of UHOOK_ADD, under xp_views_lock, which it lets go while it
 * waits for the process (uhook_premake(), uhook_patch()): the view, the
 * trampoline, the claim, the patch. On failure @h is freed, or once
 * claimed the reaper's to free; on success the lock is held and @h is live.
 */
int xp_uhook_install(struct xp_uhook *h, struct netlink_ext_ack *extack)
{
	struct task_struct *task = h->add_task;
	struct xp_view *v;
	int err;

	lockdep_assert_held(&xp_views_lock);
	err = uhook_ready(h, &v, extack);
	if (err)
		goto out_free;
	h->view = v;
	err = uhook_tramp(h, task, extack);
	if (err)
		goto out_slot;
	/* A signal frame saved inside the cover returns to the trampoline (ucover.c). */
	if (h->ninsn > 1 && !h->trap) {	/* a trap leaves the file's bytes there */
		err = xp_usigret_get(v, extack);
		if (err)
			goto out_slot;
	}
	err = uhook_claim(h, extack);
	if (err)
		goto out_slot;
	mutex_unlock(&xp_views_lock);
	err = uhook_patch(h, extack);
	mutex_lock(&xp_views_lock);
	uhook_add_done(h);
	if (h->orphan && (!err || err == -ESRCH)) {
		NL_SET_ERR_MSG(extack, "the view ended during the add");
		err = -ESRCH;
	}
	if (err) {
		uhook_takedown(h);
		return err;
	}
	h->state = XP_UH_LIVE;
	if (h->events)
		xp_uevent_publish(h);
	return 0;

out_slot:
	if (h->area)
		xp_uarea_retire(h->area, h->addr, h->slot, h->tramp, h->tramp_len);
out_free:
	xp_uhook_abandon(h);
	return err;
}

int xp_uhook_del(u32 id, struct netlink_ext_ack *extack)
{
	struct xp_uhook *h;

	lockdep_assert_held(&xp_views_lock);
	h = xa_load(&uhook_ids, id);
	if (!h || h->state != XP_UH_LIVE) {
		NL_SET_ERR_MSG_FMT(extack, "no user hook %u", id);
		return -ENOENT;
	}
	/*
	 * Threads still in the trampoline run on (its slot is never rebuilt
	 * for other bytes); an event they raise finds no hook and fires
	 * nothing.
	 */
	h->state = XP_UH_DELETING;
	if (uhook_takedown(h)) {
		NL_SET_ERR_MSG(extack, "interrupted while the process (or another mapping the "
			       "file) held its mmap lock: the hook goes once it lets go");
		return -EINTR;
	}
	return 0;
}

/*
 * The live hook with the smallest id >= *@id, for dumps; *@id is set past it
 * (to 2^32 past the last id: unsigned long, so that the dump ends there).
 */
struct xp_uhook *xp_uhook_next(unsigned long *id)
{
	struct xp_uhook *h;
	unsigned long i;

	BUILD_BUG_ON(sizeof(*id) <= sizeof(u32));	/* room for the end */
	lockdep_assert_held(&xp_views_lock);
	xa_for_each_start(&uhook_ids, i, h, *id)
		if (h->state == XP_UH_LIVE) {
			*id = i + 1;
			return h;
		}
	*id = (unsigned long)U32_MAX + 1;
	return NULL;
}

/* Has the hooked address space exited or exec'd away? */
bool xp_uhook_gone(struct xp_uhook *h)
{
	return !atomic_read(&h->mm->mm_users);
}

/*
 * The view goes (its process exited, its owner left, or the module
 * unloads), and with it its hook on fpu__restore_sig() (ucover.c): each
 * live hook's jump leaves the text now if the process's mmap lock is free
 * (it is, but for a process that holds it on purpose), and the rest of
 * the work, which waits, goes to the reaper. A hook an add or a del is
 * working on is theirs to finish. The view's pointer goes from each. Then
 * the areas no hook uses any more are let go (the mappings stay in the
 * processes). xp_uhooks_settle() waits for the reaper.
 */
void xp_uhooks_view_gone(struct xp_view *v)
{
	u64 before = handed;
	struct xp_uhook *h;
	unsigned long i;

	lockdep_assert_held(&xp_views_lock);
	/*
	 * First, while its unwinder hooks still help: no more return thunks,
	 * and every thread gives back those on its stack (uunwind.c).
	 */
	xp_unwinds_detach(v);
	xa_for_each(&uhook_ids, i, h)
		if (h->view == v)
			xp_uareas_detach(h->mm);
	xa_for_each(&uhook_ids, i, h) {
		if (h->view != v)
			continue;
		h->view = NULL;
		WRITE_ONCE(h->orphan, true);
		if (h->state != XP_UH_LIVE)
			continue;
		if (h->live && mmget_not_zero(h->mm)) {	/* a trap has no jump */
			disarm(h, XP_WAIT_NOFAULT);	/* else the reaper does */
			mmput_async(h->mm);	/* the last one may wait for aio */
		}
		uhook_to_reaper(h);
	}
	if (handed != before)
		reaper_kick();
	/*
	 * Every area no hook uses any more goes, whether its hooks went now or
	 * by earlier deletes (rmmod destroys every view, and the reaper, once
	 * done, lets go of the last).
	 */
	xp_uareas_release_unused();
}

/*
 * seccomp (useccomp.c), first, in the section that detaches the areas:
 * the views of @mm's hooks take no new hook that enters the kernel, and
 * their threads' rearms are given up (the unwinder hooks go too).
 * @dispatch: for syscall user dispatch, which a refused add names (trace
 * then takes no return probes where they enter by a system call).
 */
void xp_uhooks_seal_views(struct mm_struct *mm, bool dispatch)
{
	struct xp_uhook *h;
	unsigned long i;

	lockdep_assert_held(&xp_views_lock);
	xa_for_each(&uhook_ids, i, h) {
		if (h->mm != mm || !h->view)
			continue;
		h->view->dispatch |= dispatch;
		if (!h->view->seccomp) {
			h->view->seccomp = true;
			xp_unwinds_detach(h->view);
		}
	}
}

/*
 * Then (after xp_uhooks_seal_views(), which an add that claims meanwhile
 * finds) every live hook of @mm leaves the text, as a del would, in one
 * batch (one wait for the uprobe handlers). Runs in a thread of @mm (task
 * work), without xp_views_lock, which it takes. A hook an add or a del
 * works on is theirs: the caller looks again until no cover of @mm is
 * left. *@pid: the process the hooks that went were added for (0: none
 * went; a vfork child seals its parent's). Returns -EINTR on a fatal
 * signal (the rest go to the reaper).
 */
int xp_uhooks_seal(struct mm_struct *mm, u32 *pid)
{
	struct xp_uhook *h, *n;
	unsigned long i;
	LIST_HEAD(mine);
	LIST_HEAD(done);
	int err = 0;

	mutex_lock(&xp_views_lock);
	xa_for_each(&uhook_ids, i, h) {
		if (h->mm != mm || h->state != XP_UH_LIVE)
			continue;
		h->state = XP_UH_DELETING;
		list_add_tail(&h->gnode, &mine);
	}
	mutex_unlock(&xp_views_lock);
	list_for_each_entry_safe(h, n, &mine, gnode) {
		/* the mmap lock is likely free: no wait, else a killable one */
		err = uhook_unpatch(h, XP_WAIT_TRY);
		if (err)
			err = uhook_unpatch(h, XP_WAIT_KILLABLE);
		if (err)
			break;
		list_move_tail(&h->gnode, &done);
	}
	if (!list_empty(&done))
		xp_uprobe_unregister_sync();
	mutex_lock(&xp_views_lock);
	list_for_each_entry_safe(h, n, &done, gnode) {
		list_del(&h->gnode);
		*pid = h->pid;
		uhook_release(h);
	}
	list_for_each_entry_safe(h, n, &mine, gnode) {
		list_del(&h->gnode);
		uhook_to_reaper(h);
	}
	if (err)
		reaper_kick();
	if (*pid)
		xp_uareas_release_unused();
	mutex_unlock(&xp_views_lock);
	return err;
}

/* How many hooks ever went to the reaper: for xp_uhooks_settle(). Under xp_views_lock. */
u64 xp_uhooks_handed(void)
{
	lockdep_assert_held(&xp_views_lock);
	return handed;
}

/*
 * After a view's deletion, so that its processes have their text back when
 * the command returns (or the owner's socket is closed): wait, without
 * xp_views_lock, until the reaper has taken out @target hooks in all, for
 * as long as it gets on (thousands of hooks take seconds), but killably,
 * and not past 5 s without progress: a process that holds its mmap lock
 * gets its text back later.
 */
void xp_uhooks_settle(u64 target)
{
	unsigned long seen = READ_ONCE(reap_steps);

	for (;;) {
		if (wait_event_killable_timeout(reaped_wq, READ_ONCE(reaped) >= target, 5 * HZ))
			return;		/* done, or a fatal signal */
		if (READ_ONCE(reap_steps) == seen)
			return;		/* stuck: 5 s without a hook taken out */
		seen = READ_ONCE(reap_steps);
	}
}

int xp_uhooks_init(void)
{
	/*
	 * High priority: a command waits for these workers, behind the traced
	 * process's busy threads otherwise (27-uhook, a thousand add/del
	 * cycles under four threads: 301 s calling uprobes directly, 370 s
	 * through a normal worker, 296 s through a high-priority one).
	 */
	xp_uwq = alloc_workqueue("xprobes_uhooks", WQ_UNBOUND | WQ_HIGHPRI, 0);
	return xp_uwq ? 0 : -ENOMEM;
}

/*
 * Module exit: every hook out of every process (xp_views_destroy_all()
 * handed them to the reaper), before the seccomp watch goes (useccomp.c).
 */
void xp_uhooks_drain(void)
{
	for (;;) {
		bool left;

		flush_delayed_work(&xp_uhooks_reaper);
		mutex_lock(&xp_views_lock);
		left = !list_empty(&xp_uhooks_going);
		mutex_unlock(&xp_views_lock);
		if (!left)
			break;
		msleep(50);
	}
}

/*
 * Module exit, every view gone: the reaper takes out the last hooks (for
 * as long as a process holds its mmap lock: their uprobes must go before
 * the module's code does), and the mapping and uprobes workers whose
 * commands stopped waiting are done (destroy_workqueue() drains).
 */
void xp_uhooks_exit(void)
{
	/*
	 * Again: a seal work that was killed after xprobes_exit()'s drain
	 * handed the hooks it held to the reaper (xp_uhooks_seal()); the
	 * init's error path has none.
	 */
	xp_uhooks_drain();
	cancel_delayed_work_sync(&xp_uhooks_reaper);
	destroy_workqueue(xp_uwq);
	xp_urec_exit();
	mutex_lock(&xp_views_lock);
	xp_uareas_release_unused();	/* one an add mapped, then did not use */
	WARN_ON(!xa_empty(&uhook_ids));	/* the reaper released every hook */
	xa_destroy(&uhook_ids);
	mutex_unlock(&xp_views_lock);
}

#ifdef XPROBES_KUNIT
#include "uhook_kunit.c"
#endif
