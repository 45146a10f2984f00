// SPDX-License-Identifier: GPL-2.0
/*
 * User hooks that write records instead of entering the kernel: design (b)
 * of docs/userhooks.md. A hook with records (XPROBES_F_RECORDS) has, in
 * front of its trampoline's instructions, a stub that calls the records
 * block of its area (urec_tmpl.S):
 *
 *	mov %rax, -16(%rsp); mov $cookie, %eax; call xp_urec_entry; mov -16(%rsp), %rax
 *
 * which appends {tsc, entry sp | cookie} to the record buffer of the CPU
 * the thread runs on, under rseq, and (with returns) makes the return
 * address a return thunk's, one thunk per return address, which appends a
 * return record and jumps back. No kernel entry per call.
 *
 * Whose records are they? Every record in a CPU's buffer was written by the
 * thread running there, between its switch-in and its switch-out: the rseq
 * critical section ends with the count's store, and a thread preempted,
 * migrated or signalled inside it starts over. So the view's scheduler
 * hooks hand them over: the hook on switch_mm_irqs_off (the leaving thread
 * is current, its view's text runs; a task without an mm taking over has
 * the view's guard switch to init_mm there first, guard.c) and the one on
 * finish_task_switch (the idle task, or in a view without a guard a kernel
 * thread, that took over lazily: prev is ours), and the one on
 * do_exit (a thread's last slice, which no switch of it may follow while
 * its mm is still there to read) fire the
 * xprobes_urecs tracepoint with the leaving thread's records, their times
 * turned into bpf_ktime_get_ns() nanoseconds, before the hook's own
 * program runs; finish_task_switch empties the buffer for a thread of ours
 * coming in (records of an untraced child of fork, which shares the
 * buffers, are dropped there). A full buffer, a return address new to the
 * block, or an rseq area not stamped yet (urec_tmpl.S: "Whose rseq
 * area?") enters the kernel (XPROBES_UREC_NR, seen by the view's hook on
 * the unimplemented-syscall handler: uevent.c), which hands over, makes
 * the thunk, or stamps the area where it is the thread's own
 * (urec_stamp()), and the stub goes on.
 *
 * Functions without a user hook get uprobes, whose programs see each call
 * at once. Optional hooks on try_to_wake_up (trace -W), on
 * uprobe_notify_resume (a uprobe's handlers, and before 6.11 a
 * uretprobe's) and on uprobe_handle_trampoline (6.11 on: a uretprobe's,
 * by system call) hand the thread's records over first, in its own
 * context, so that the programs meet entries and returns in the order
 * the thread made them (until 2026-11-30 a uprobe'd caller's frame could
 * land above its user-hooked callees' and both calls were lost).
 *
 * With XPROBES_F_SUMS on the hand-over hooks, the process folds most calls
 * itself: a return whose entry is the newest record and its caller's the
 * one before takes the entry out and adds the call to its function's sums
 * (urec_tmpl.S), which UREC_SUMS reads (xp_urec_sums_read()); an entry
 * handed over with callees summed so is followed by their time, a charge
 * (urec_fold.c). A return whose entry is the only record is summed too, and
 * the hand-over starts with those calls' time, a bottom charge at the sp
 * of the first (the header's bsp), the state (the count, and A, the
 * cycles summed: urec.h) and bsp cleared (urec_empty()); a thread that
 * switches out with nothing else in its buffer keeps that time instead,
 * where its drop would drop nothing (urec_carry_put(), "Carries" below),
 * and takes it into the buffer it comes in on, so such a switch hands
 * nothing over. The sums are in
 * TSC cycles, converted when they are read; each buffer's header carries
 * the histogram tables of the cycles-to-ns ratio (urec_hdr_ratio()),
 * written when the buffers are made and at a hand-over that finds the
 * ratio changed. When the view ends with its process while its owner
 * listens, the buffers are kept for the owner's socket.
 *
 * The buffers are a writable mapping of their own (records only: the code
 * stays in the read-only area), the process's own anonymous pages, pinned
 * and mapped in the kernel with vmap(), wiped for a child of fork
 * (urecbuf_create()). What the process writes there is data to the
 * kernel: counts are clamped, nothing else is trusted.
 *
 * Locking: buffers and blocks are created and freed under xp_views_lock.
 * The hit paths (flush at a switch, the slow path) run with preemption off,
 * an RCU read-side section: a view's buffers go after a grace period (view
 * teardown), a block after synchronize_rcu() (xp_urec_block_free()). A
 * block's thunks are added under its raw spinlock, on the slow path.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/hash.h>
#include <linux/math64.h>
#include <linux/mman.h>
#include <linux/pagemap.h>
#include <linux/rculist.h>
#include <linux/sched/signal.h>
#if __has_include(<linux/rseq.h>)
#include <linux/rseq.h>	/* rseq_set_notify_resume(); in sched.h before 6.7 */
#endif
#include <linux/sched/task_stack.h>
#include <linux/shmem_fs.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <net/sock.h>
#include <uapi/linux/rseq.h>
#include <asm/tsc.h>
#include "xprobes.h"
#include "uhook.h"
#include "urec.h"
#include "trace.h"
#include "urec_fold.h"

/* urec_tmpl.S: the routines and where to patch them */
extern const u8 xp_urec_tmpl[], xp_urec_tmpl_end[], xp_urec_entry[], xp_urec_entry_noret[];
extern const u8 xp_urec_ret[], xp_urec_p_cs[], xp_urec_p_cpu[], xp_urec_p_nbufs[];
extern const u8 xp_urec_p_base[], xp_urec_p_sig[], xp_urec_start[], xp_urec_post[];
extern const u8 xp_urec_abort[], xp_urec_desc[];
extern const u8 xp_urec_p_cs2[], xp_urec_p_cpu2[], xp_urec_p_nbufs2[], xp_urec_p_base2[];
extern const u8 xp_urec_p_sig2[], xp_urec_p_sums[], xp_urec_fstart[], xp_urec_fpost[];
extern const u8 xp_urec_fabort[], xp_urec_desc2[];
extern const u8 xp_urec_p_stamp[], xp_urec_p_stamp_nr[], xp_urec_p_stamp_ret[];
extern const u8 xp_urec_p_tcache[], xp_urec_p_tcache2[], xp_urec_p_cs3[];
extern const u8 xp_urec_sums_gate[], xp_urec_plain[];

#define TMPL_OFF(sym)	((unsigned int)((sym) - xp_urec_tmpl))
#define BLK_PAGES	((XP_UREC_BLOCK - XP_URT_TGT) / PAGE_SIZE)	/* targets and hash */

/*
 * What a thread keeps across a switch (below, "Carries"): its buffer's
 * state (A, the count 0), bsp, and how far its consumer's frames are known
 * dropped. A slot is free when t is NULL.
 */
struct urec_carry {
	struct task_struct *t;		/* a key only */
	u64 state;
	u64 bsp;
	u64 dropped;			/* xp_urecbuf.dropped, the thread's */
};

#define UREC_CARRY_BITS		6
#define UREC_CARRY_SLOTS	(1U << UREC_CARRY_BITS)
#define UREC_CARRY_PROBES	8
#define UREC_CARRY_MARKS	4	/* a mark alone: the window's first slots only */
#define UREC_CARRY_MAX_A	(1ULL << 36)	/* cycles (about 20 s): more is handed over */

/* The per-CPU buffers of the process a view's records hooks are in. */
struct xp_urecbuf {
	struct mm_struct *mm;		/* mmgrab()ed */
	struct file *file;
	unsigned long va;		/* the mapping, in mm */
	unsigned int nbufs;		/* one per possible CPU id */
	unsigned int npages;
	struct page **pages;		/* the process's, pinned (urecbuf_pin()) */
	unsigned int npinned;
	void *kaddr;			/* vmap() of them */
	struct task_struct **owner;	/* by CPU: the thread of ours that came last (a key only) */
	struct task_struct **forced;	/* by CPU: whose buffer looks full (a key only) */
	struct urec_carry *carry;	/* UREC_CARRY_SLOTS: what threads out keep */
	u64 *dropped;			/* by CPU: its thread has no frame at or below (Carries) */
	long rseq_off;			/* the rseq area, from the thread pointer */
	u32 rseq_sig;
	u32 stamp;			/* in the areas the kernel vouched for (urec_stamp()) */
};

struct xp_urec_hdr {
	u64 state;			/* the count (the commit), A above it: urec.h */
	u64 reserved[2];
	u64 mult;			/* XP_UREC_MULT: the ratio th[] and bk[] are for */
	u64 bsp;			/* XP_UREC_BSP: the bottom's sp, 0: none */
	u64 reserved2[3];
	u64 th[XP_USUM_NHIST];		/* XP_UREC_TH: the mult's histogram tables */
	u8 bk[XP_USUM_NHIST];		/* XP_UREC_BK */
	u8 reserved3[XP_UREC_BELOW - XP_UREC_BK - XP_USUM_NHIST];
	u64 below;			/* XP_UREC_BELOW: XPROBES_UREC_RET */
};

#define UREC_COUNT_MASK		((1U << XP_UREC_COUNT_BITS) - 1)
#define UREC_COUNT(state)	((u32)((state) & UREC_COUNT_MASK) / XP_UREC_COUNT_UNIT)

/* @cpu's buffer in the kernel's view of @rb's mapping. */
static inline struct xp_urec_hdr *urec_hdr(const struct xp_urecbuf *rb, unsigned int cpu)
{
	return rb->kaddr + ((unsigned long)cpu << XP_UREC_BUF_SHIFT);
}

/* Where in the mapping the sums are, and how big it is. */
#define URECBUF_SUMS(rb)	((unsigned long)(rb)->nbufs << XP_UREC_BUF_SHIFT)
#define URECBUF_TCACHE(rb)	(URECBUF_SUMS(rb) + (unsigned long)XP_USUM_FUNCS * XP_USUM_SIZE)
#define URECBUF_SIZE(rb)	(URECBUF_TCACHE(rb) + XP_UREC_TCACHE_SIZE)

/*
 * A hand-over with sums puts a charge after each entry whose callees the
 * process summed, and the bottom's before them all (urec_fold.c): up to
 * twice the records and one, written apart from the buffer, into this
 * CPU's. Flushes do not nest (they run with
 * preemption off, from hooks that do not fire in one another); urec_out_busy
 * makes sure.
 */
#define UREC_OUT_RECS	(2 * XP_UREC_CAP + 1)
static DEFINE_PER_CPU(struct xprobes_urec *, urec_out);
static DEFINE_PER_CPU(bool, urec_out_busy);
static bool urec_out_made;		/* under xp_views_lock */

/* A trampoline area's records block: the routines, the return thunks. */
struct xp_urecblk {
	struct list_head node;		/* in xp_urecblks (RCU), under xp_views_lock */
	struct mm_struct *mm;		/* the area's: a key only */
	unsigned long va;		/* the block, in the process */
	raw_spinlock_t lock;		/* adds a thunk */
	unsigned int used;		/* thunks given out */
	bool detached;			/* no more (xp_urec_detach()), under the lock */
	struct page *pages[BLK_PAGES];	/* targets and hash, held */
	void *kaddr;			/* vmap() of them */
};

static LIST_HEAD(xp_urecblks);

/*
 * Cycles to nanoseconds of the monotonic clock, which bpf_ktime_get_ns()
 * and the traced program read. The boot's TSC calibration (tsc_khz) is
 * that clock's rate only where the clocksource is the TSC. Where it is not
 * (a VM whose TSCs look unsynchronized runs on the HPET: Debian's 6.1 under
 * QEMU), the calibration's error, 0.5% seen there, would stretch or shrink
 * every call timed within one slice. So the module measures the ratio
 * itself: each CPU keeps the (TSC, clock) pair it took when records were
 * first prepared, and a hand-over at least UREC_CLOCK_EVERY after its
 * last measure divides the two spans since then, a baseline that grows
 * and so gets more exact. Pairs are per CPU because unsynchronized TSCs
 * differ in offset; the rate is one for all, urec_mult. The first prepare
 * waits until the baseline is UREC_CLOCK_MIN long, so that no record is
 * converted with tsc_khz's ratio alone. A per-CPU pair is touched only by
 * its CPU, with interrupts off (or before any records exist).
 */
struct urec_clock {
	u64 tsc0, ns0;		/* the baseline's start; ns0 0: none yet */
	u64 next;		/* clock time of the next measure */
};
static DEFINE_PER_CPU(struct urec_clock, urec_clock);
static u64 tsc_mult;		/* tsc_khz's ratio, 32.32 fixed point */
static u64 urec_mult;		/* the measured one, 32.32; WRITE_ONCE */

#define UREC_CLOCK_MIN	(20 * NSEC_PER_MSEC)
#define UREC_CLOCK_EVERY (10 * NSEC_PER_MSEC)

/*
 * The TSC and the clock at one instant: the clock read between two TSC
 * reads, the TSC taken as their midpoint. Reading the clock can take long
 * (the HPET is a device access; a VM's vCPU may be descheduled between
 * two instructions, an SMI may land there): a pair split by more than
 * UREC_PAIR_US is taken again, up to UREC_PAIR_TRIES times, and the
 * tightest kept. Every record a hand-over converts is off by that split
 * (6.1's 41-trace-causes saw a call 0.2 ms longer than the workload's own
 * clock around it once, 2026-11-28). With interrupts off.
 */
#define UREC_PAIR_US	20
#define UREC_PAIR_TRIES	4

static u64 urec_clock_pair(u64 *tsc)
{
	u64 t1, t2, ns, best_ns = 0, best = U64_MAX, tight;
	unsigned int i;

	tight = (u64)tsc_khz * UREC_PAIR_US / USEC_PER_MSEC;
	for (i = 0; i < UREC_PAIR_TRIES; i++) {
		t1 = rdtsc_ordered();
		ns = ktime_get_mono_fast_ns();
		t2 = rdtsc_ordered();
		if (t2 < t1)
			continue;	/* moved to a TSC behind: cannot, with irqs off */
		if (t2 - t1 < best) {
			best = t2 - t1;
			*tsc = t1 + best / 2;
			best_ns = ns;
		}
		if (best <= tight)
			break;
	}
	if (!best_ns) {		/* never ordered: as before */
		*tsc = rdtsc_ordered();
		best_ns = ktime_get_mono_fast_ns();
	}
	return best_ns;
}

/* A baseline starts on this CPU at (@tsc, @ns). */
static void urec_clock_base(struct urec_clock *c, u64 tsc, u64 ns)
{
	c->tsc0 = tsc;
	c->ns0 = ns;
	c->next = ns + UREC_CLOCK_MIN;
}

static void urec_clock_start(void *unused)
{
	unsigned long flags;
	u64 tsc, ns;

	local_irq_save(flags);
	ns = urec_clock_pair(&tsc);
	urec_clock_base(this_cpu_ptr(&urec_clock), tsc, ns);
	local_irq_restore(flags);
}

/* The clock and the TSC now; measures the ratio when it is time. */
static u64 urec_clock_now(u64 *tsc)
{
	struct urec_clock *c = this_cpu_ptr(&urec_clock);
	unsigned long flags;
	u64 ns, m;

	local_irq_save(flags);
	ns = urec_clock_pair(tsc);
	if (!c->ns0 || *tsc <= c->tsc0 || ns <= c->ns0) {
		/* a CPU that came online later, or a TSC reset: start over */
		urec_clock_base(c, *tsc, ns);
	} else if (ns >= c->next) {
		/*
		 * Nothing real is off by half: a clock was stepped, or the
		 * TSC stood still (the first test keeps the quotient, at most
		 * 256 << 32, clear of divq's overflow).
		 */
		m = 0;
		if (*tsc - c->tsc0 > (ns - c->ns0) >> 8)
			m = mul_u64_u64_div_u64(ns - c->ns0, 1ULL << 32, *tsc - c->tsc0);
		if (m > tsc_mult / 2 && m < tsc_mult * 2) {
			WRITE_ONCE(urec_mult, m);
			c->next = ns + UREC_CLOCK_EVERY;
		} else {
			c->ns0 = 0;
		}
	}
	local_irq_restore(flags);
	return ns;
}

/* Before the first records: baselines on every CPU, and a first measure. */
static void urec_clock_init(void)
{
	u64 tsc;

	if (READ_ONCE(urec_mult))
		return;
	tsc_mult = div_u64((u64)NSEC_PER_MSEC << 32, tsc_khz);
	on_each_cpu(urec_clock_start, NULL, 1);
	msleep(UREC_CLOCK_MIN / NSEC_PER_MSEC + 1);
	preempt_disable();
	urec_clock_now(&tsc);
	preempt_enable();
	if (!READ_ONCE(urec_mult))
		WRITE_ONCE(urec_mult, tsc_mult);	/* the clock stepped meanwhile */
}

/* ---- the buffers ------------------------------------------------------------ */

/*
 * The process's rseq area, as every thread of it registered it (glibc 2.35+
 * registers one per thread, at the same offset from the thread pointer):
 * the stub finds its CPU there.
 */
static int rseq_layout(struct task_struct *task, long *off, u32 *sig,
		       struct netlink_ext_ack *extack)
{
#ifdef CONFIG_RSEQ
	struct task_struct *t;
	bool first = true, ok = true;

	rcu_read_lock();
	for_each_thread(task, t) {
		long o = (long)(unsigned long)t->rseq - (long)t->thread.fsbase;

		if (!t->rseq || (!first && (o != *off || t->rseq_sig != *sig))) {
			ok = false;
			break;
		}
		*off = o;
		*sig = t->rseq_sig;
		first = false;
	}
	rcu_read_unlock();
	if (ok && *off >= S32_MIN && *off <= S32_MAX - XP_RSEQ_STAMP - 4)
		return 0;
#endif
	NL_SET_ERR_MSG(extack, "records need rseq registered by every thread at one offset from "
		       "the thread pointer (glibc 2.35 or later): use events instead");
	return -EOPNOTSUPP;
}

static void urecbuf_free(struct xp_urecbuf *rb)
{
	if (rb->kaddr)
		vunmap(rb->kaddr);
	if (rb->pages && rb->npinned)
		unpin_user_pages_dirty_lock(rb->pages, rb->npinned, true);
	kvfree(rb->pages);
	kfree(rb->owner);
	kfree(rb->forced);
	kfree(rb->carry);
	kfree(rb->dropped);
	if (rb->file)
		fput(rb->file);
	if (rb->mm)
		mmdrop(rb->mm);
	kfree(rb);
}

/*
 * The process's own pages of the mapping at @rb->va, pinned: written once
 * by the pin (FOLL_WRITE), which copies each out of the file, so they are
 * anonymous pages of this mm alone. Only if the mapping there is still the
 * one made for it (the process may have replaced it meanwhile).
 */
static int urecbuf_pin(struct xp_urecbuf *rb, unsigned long size)
{
	struct vm_area_struct *vma;
	long n = -EFAULT;

	if (mmap_read_lock_killable(rb->mm))
		return -EINTR;
	vma = find_vma(rb->mm, rb->va);
	if (vma && vma->vm_start == rb->va && vma->vm_end == rb->va + size &&
	    vma->vm_file == rb->file && (vma->vm_flags & VM_WIPEONFORK))
		n = xp_pin_remote(rb->mm, rb->va, rb->npages, FOLL_WRITE | FOLL_LONGTERM,
				  rb->pages);
	mmap_read_unlock(rb->mm);
	if (n > 0)
		rb->npinned = n;
	return n == rb->npages ? 0 : n < 0 ? n : -EFAULT;
}

/*
 * The buffers: a private, writable mapping of a shmem file (which gives it
 * its name in maps, "[xprobes-records]", and nothing else: the file is
 * never written), whose pages the module pins once it has written them,
 * so that they are this process's anonymous pages, shared with the kernel
 * only. VM_WIPEONFORK: a child of fork finds a fresh mapping of the file
 * there, zeros, and its records (its trampolines write them as the
 * parent's do) go to pages of its own; it never sees its parent's nor
 * feeds them. A process that clears the flag (MADV_KEEPONFORK) gives its
 * children a copy of its own records, its choice. Whatever it does to the
 * mapping (munmap, mremap, MADV_DONTNEED) the kernel's pages stay pinned,
 * and what it writes there is data: counts are clamped, nothing else is
 * trusted.
 */
static struct xp_urecbuf *urecbuf_create(struct mm_struct *mm, long off, u32 sig,
					 struct netlink_ext_ack *extack)
{
	struct xp_urecbuf *rb;
	unsigned long size;
	long va;
	int err;

	rb = kzalloc(sizeof(*rb), GFP_KERNEL_ACCOUNT);
	if (!rb)
		return ERR_PTR(-ENOMEM);
	rb->rseq_off = off;
	rb->rseq_sig = sig;
	rb->stamp = get_random_u32() | 1;	/* never the padding's 0 */
	rb->nbufs = nr_cpu_ids;
	size = URECBUF_SIZE(rb);
	rb->npages = size >> PAGE_SHIFT;
	rb->pages = kvcalloc(rb->npages, sizeof(*rb->pages), GFP_KERNEL_ACCOUNT);
	rb->owner = kcalloc(rb->nbufs, sizeof(*rb->owner), GFP_KERNEL_ACCOUNT);
	rb->forced = kcalloc(rb->nbufs, sizeof(*rb->forced), GFP_KERNEL_ACCOUNT);
	rb->carry = kcalloc(UREC_CARRY_SLOTS, sizeof(*rb->carry), GFP_KERNEL_ACCOUNT);
	rb->dropped = kcalloc(rb->nbufs, sizeof(*rb->dropped), GFP_KERNEL_ACCOUNT);
	if (!rb->pages || !rb->owner || !rb->forced || !rb->carry || !rb->dropped)
		goto nomem;
	rb->file = shmem_file_setup("[xprobes-records]", size, VM_NORESERVE);
	if (IS_ERR(rb->file)) {
		rb->file = NULL;
		goto nomem;
	}
	mmgrab(mm);
	rb->mm = mm;
	va = xp_umap_flags(mm, rb->file, 0, size, PROT_READ | PROT_WRITE, MAP_PRIVATE,
			   VM_WIPEONFORK | VM_DONTEXPAND);
	if (IS_ERR_VALUE(va)) {
		if (va == -EINTR)
			NL_SET_ERR_MSG(extack, "interrupted while the process held its mmap lock");
		else
			NL_SET_ERR_MSG(extack, "could not map the record buffers into the process");
		urecbuf_free(rb);
		return ERR_PTR(va);
	}
	rb->va = va;
	err = urecbuf_pin(rb, size);
	if (err) {
		if (err == -EINTR)
			NL_SET_ERR_MSG(extack, "interrupted while the process held its mmap lock");
		else
			NL_SET_ERR_MSG(extack, "could not pin the record buffers (the process "
				       "changed their mapping)");
		urecbuf_free(rb);
		return ERR_PTR(err);
	}
	rb->kaddr = vmap(rb->pages, rb->npages, VM_MAP, PAGE_KERNEL);
	if (!rb->kaddr)
		goto nomem;
	return rb;
nomem:
	urecbuf_free(rb);
	return ERR_PTR(-ENOMEM);
}

/*
 * Buffers for @task's process, made without xp_views_lock (the mapping and
 * the pin wait for the process's mmap lock); a view adopts them at
 * xp_urec_prepare(), or xp_urecbuf_drop() lets them go (the process keeps
 * the mapping).
 */
struct xp_urecbuf *xp_urecbuf_make(struct task_struct *task, struct mm_struct *mm,
				   struct netlink_ext_ack *extack)
{
	long off = 0;
	u32 sig = 0;
	int err;

	err = rseq_layout(task, &off, &sig, extack);
	if (err)
		return ERR_PTR(err);
	return urecbuf_create(mm, off, sig, extack);
}

void xp_urecbuf_drop(struct xp_urecbuf *rb)
{
	urecbuf_free(rb);
}

/*
 * The sums of a process whose view ended while its owner still listens
 * (the process exited: the sweeper ends its view within XP_SWEEP_MS, and
 * trace reads the sums only after it saw the exit): its buffers, kept for
 * UREC_SUMS until the owner's socket goes (xp_urec_sums_release()), at
 * most URECSUMS_KEPT of them, the oldest let go first. Under xp_views_lock.
 */
struct urecsums_kept {
	struct list_head node;
	struct xp_urecbuf *rb;
	struct pid *root;		/* the view's process, held */
	u32 owner;			/* netlink port id */
	struct sock *owner_sk;		/* held */
};
#define URECSUMS_KEPT	16
static LIST_HEAD(urecsums_kept);
static unsigned int urecsums_nkept;

static void kept_free(struct urecsums_kept *k)
{
	list_del(&k->node);
	urecsums_nkept--;
	urecbuf_free(k->rb);
	put_pid(k->root);
	sock_put(k->owner_sk);
	kfree(k);
}

/* The view goes: its buffers too (the process keeps its mapping). After a grace period. */
void xp_urecbuf_free(struct xp_view *v)
{
	struct urecsums_kept *k;

	lockdep_assert_held(&xp_views_lock);
	if (!v->urec)
		return;
	k = NULL;
	if (v->urec_sums && v->owner && v->owner_sk && !sock_flag(v->owner_sk, SOCK_DEAD))
		k = kzalloc(sizeof(*k), GFP_KERNEL);
	if (k) {
		if (urecsums_nkept == URECSUMS_KEPT)
			kept_free(list_first_entry(&urecsums_kept, struct urecsums_kept, node));
		k->rb = v->urec;
		k->root = get_pid(v->root);
		k->owner = v->owner;
		sock_hold(v->owner_sk);
		k->owner_sk = v->owner_sk;
		list_add_tail(&k->node, &urecsums_kept);
		urecsums_nkept++;
	} else {
		urecbuf_free(v->urec);
	}
	v->urec = NULL;
}

/* Port @portid's socket goes (as xp_views_release_owner()), or the module: the kept sums too. */
void xp_urec_sums_release(u32 portid, bool any)
{
	struct urecsums_kept *k, *n;

	lockdep_assert_held(&xp_views_lock);
	list_for_each_entry_safe(k, n, &urecsums_kept, node)
		if (!portid || (k->owner == portid && (any || sock_flag(k->owner_sk, SOCK_DEAD))))
			kept_free(k);
}

/* Are @v's sums those of process @nr that socket @sk may read? */
static bool sums_of(const struct xp_view *v, u32 nr, const struct sock *sk)
{
	return v->urec && v->urec_sums && pid_vnr(v->root) == nr &&
	       (!v->owner || v->owner_sk == sk);
}

/*
 * UREC_SUMS: the sums of process @nr (the caller's pid namespace) as they
 * were kept for socket @sk (the view's owner; a port id may be another
 * socket's by then) when its view ended, or as its view has them (a view
 * @sk owns, or a persistent one),
 * for the cookies from *@from on: up to @max functions with calls into
 * @out; *@from becomes where to go on (XP_USUM_FUNCS: done). Returns how
 * many, or -ENOENT. The process may write there at any time: a snapshot
 * of numbers, nothing in them is used as an index. Times are kept in TSC
 * cycles (urec_tmpl.S), turned into ns here by the ratio as measured now.
 */
int xp_urec_sums_read(u32 nr, const struct sock *sk, u32 *from, struct xprobes_usum *out, u32 max)
{
	struct xp_urecbuf *rb = NULL;
	struct urecsums_kept *k;
	struct xp_view *v;
	u32 c, n = 0;
	u64 mult;

	lockdep_assert_held(&xp_views_lock);
	/* ours, kept, first: the number may be another process's by now */
	list_for_each_entry(k, &urecsums_kept, node)
		if (k->owner_sk == sk && pid_vnr(k->root) == nr)
			rb = k->rb;
	if (!rb)
		list_for_each_entry(v, &xp_views, node)
			if (sums_of(v, nr, sk)) {
				rb = v->urec;
				break;
			}
	if (!rb)	/* a view between its teardown's detach and free */
		list_for_each_entry(v, &xp_views_torn, close_node)
			if (sums_of(v, nr, sk)) {
				rb = v->urec;
				break;
			}
	if (!rb)
		return -ENOENT;
	mult = READ_ONCE(urec_mult) ?: tsc_mult;
	for (c = *from; c < XP_USUM_FUNCS && n < max; c++) {
		const void *p = rb->kaddr + URECBUF_SUMS(rb) + (unsigned long)c * XP_USUM_SIZE;
		u64 calls = 0;
		unsigned int b;

		/* a call is counted once, in its bucket: the calls are their sum */
		for (b = 0; b < XP_USUM_NHIST; b++) {
			out[n].hist[b] = READ_ONCE(((const u64 *)(p + XP_USUM_HIST))[b]);
			calls += out[n].hist[b];
		}
		if (!calls)
			continue;
		out[n].cookie = c;
		out[n].reserved = 0;
		out[n].calls = calls;
		out[n].wall = mul_u64_u64_shr(READ_ONCE(*(const u64 *)(p + XP_USUM_WALL)), mult, 32);
		out[n].own = mul_u64_u64_shr(READ_ONCE(*(const u64 *)(p + XP_USUM_OWN)), mult, 32);
		n++;
	}
	*from = c;
	return n;
}

/* The hand-overs' scratch for charges (urec_out), made with the first view that sums. */
static int urec_out_make(void)
{
	unsigned int cpu;

	lockdep_assert_held(&xp_views_lock);
	if (urec_out_made)
		return 0;
	for_each_possible_cpu(cpu) {
		void *p;

		if (per_cpu(urec_out, cpu))
			continue;	/* made by a try that failed further on */
		p = kvmalloc_node(UREC_OUT_RECS * sizeof(struct xprobes_urec), GFP_KERNEL,
				  cpu_to_node(cpu));
		if (!p)
			return -ENOMEM;	/* those made stay for the next try */
		per_cpu(urec_out, cpu) = p;
	}
	urec_out_made = true;
	return 0;
}

/* Module exit, every view gone: no hand-over runs. */
void xp_urec_exit(void)
{
	unsigned int cpu;

	mutex_lock(&xp_views_lock);
	xp_urec_sums_release(0, true);
	mutex_unlock(&xp_views_lock);
	for_each_possible_cpu(cpu) {
		kvfree(per_cpu(urec_out, cpu));
		per_cpu(urec_out, cpu) = NULL;
	}
	urec_out_made = false;
}

/*
 * Set @hdr's count, with nothing summed since (urec_tmpl.S: the slots and
 * the bottom's sp): at a hand-over, and for a thread coming in, whose
 * buffer the last one on this CPU may have left otherwise (a hand-over
 * skipped, a lie). Only with the thread out of the routine, or about to
 * restart it (a switch-in).
 */
static void urec_empty(struct xp_urec_hdr *hdr, u32 count)
{
	WRITE_ONCE(hdr->bsp, 0);
	WRITE_ONCE(hdr->state, count * XP_UREC_COUNT_UNIT);
}

/*
 * The histogram tables of a ratio near the one the last hand-over on this
 * CPU had (xp_urec_hist_tables()). The measured ratio moves in its low
 * bits at every measure (UREC_CLOCK_EVERY) while its baseline grows, far
 * below what it is sure of: the tables are made again only when it has
 * moved by more than 2^-UREC_HIST_DRIFT of theirs (15 ppm; they then put a
 * call one bucket off only within 15 ppm of a power of two ns). With
 * preemption off.
 */
struct urec_hist {
	u64 mult;		/* the tables' ratio; 0: none yet */
	u64 th[XP_USUM_NHIST];
	u8 bk[XP_USUM_NHIST];
};
static DEFINE_PER_CPU(struct urec_hist, urec_hist);

#define UREC_HIST_DRIFT	16

/*
 * @hdr gets this CPU's tables for @mult, and their ratio. The routine
 * reads only the tables, never the ratio: they are in every header before
 * a hook with sums can run (urecbuf_sums_on()), and are rewritten in place
 * when they change; a thread reading them meanwhile (or another CPU's,
 * moved on since its commit) puts a call one bucket off, within the
 * histogram's padding at most. The ratio says which tables the header has
 * (the process may write it: then it only gets the tables again).
 */
static void urec_hdr_ratio(struct xp_urec_hdr *hdr, u64 mult)
{
	struct urec_hist *h = this_cpu_ptr(&urec_hist);
	u64 d = h->mult > mult ? h->mult - mult : mult - h->mult;

	if (d > h->mult >> UREC_HIST_DRIFT) {
		xp_urec_hist_tables(mult, h->th, h->bk, XP_USUM_NHIST);
		h->mult = mult;
	}
	if (READ_ONCE(hdr->mult) == h->mult)
		return;
	memcpy(hdr->th, h->th, sizeof(hdr->th));
	memcpy(hdr->bk, h->bk, sizeof(hdr->bk));
	smp_wmb();	/* a ratio read equal to h->mult above: its tables are in */
	WRITE_ONCE(hdr->mult, h->mult);
}

/*
 * Without calls folded: @n records of the buffer @r as they are, their
 * times in ns, but that a word with the return bit is a return and
 * nothing else: the routines write no folded call, no charge, which only
 * the fold makes (until 2026-12-04 a process could hand its consumer
 * forged ones here; the fold and the slow path's record already refused).
 */
static void urec_plain(struct xprobes_urec *r, u32 n, const struct xp_urec_clock *c)
{
	u32 i;

	for (i = 0; i < n; i++) {
		u64 w = READ_ONCE(r[i].what);

		r[i].time = xp_urec_ns(c, READ_ONCE(r[i].time));
		if (w & XPROBES_UREC_RET)
			r[i].what = XPROBES_UREC_RET | XPROBES_UREC_SP(w);
	}
}

/*
 * The dropped mark (Carries, below) once the consumer has taken @out[0..n),
 * from @mark before: the highest sp at which a bottom charge would drop
 * none of the thread's frames, as bpf/trace.bpf.c's drop_abandoned() walks
 * them from the top (the frames' sps never fall towards the bottom: each
 * push drops what lies at or below it first). An entry pushed makes its
 * frame the top, which such a charge at its very sp drops: the mark is
 * just below it, whatever it was. After it, a bottom charge drops every
 * frame at or below its sp but a uprobe's at that sp (which a charge there
 * keeps too): the mark rises to it. A return pops or drops every frame
 * below its sp and one at it, but a tail call's caller may be left at that
 * very sp (its return still to come, in a later hand-over): the mark rises
 * to just below. A folded call at the top of its tree drops as its entry
 * would (a tail call's keeps a record's frame at its sp: the mark stays
 * below it); one inside a tree drops nothing, and lies above the tree's
 * top, after it. Other charges and entries without returns move no
 * frame. From the last entry on: the records before it are under it.
 */
static u64 urec_mark(const struct xprobes_urec *out, u32 n, u64 mark)
{
	u32 i;
	u64 w;

	for (i = n; i; i--) {
		w = out[i - 1].what;
		if (!(w & (XPROBES_UREC_RET | XPROBES_UREC_NORET))) {
			mark = XPROBES_UREC_SP(w) ? XPROBES_UREC_SP(w) - 1 : 0;
			break;
		}
	}
	for (; i < n; i++) {
		w = out[i].what;
		if (XPROBES_UREC_IS_CALL(w)) {
			u64 sp = XPROBES_UREC_SP(w);

			if (out[i].time & XPROBES_UREC_CALL_TAIL)
				mark = min(mark, sp ? sp - 1 : 0);
			else
				mark = max(mark, sp);
		} else if (XPROBES_UREC_IS_BOTTOM(w)) {
			mark = max(mark, XPROBES_UREC_SP(w));
		} else if ((w & XPROBES_UREC_RET) && !XPROBES_UREC_IS_CHARGE(w) &&
			   XPROBES_UREC_SP(w)) {
			mark = max(mark, XPROBES_UREC_SP(w) - 1);
		}
	}
	return mark;
}

/*
 * Hand @owner's records in @cpu's buffer to the xprobes_urecs tracepoint,
 * their times turned from TSC cycles into bpf_ktime_get_ns() time (and
 * with @v's calls flag, calls folded: urec_fold.c; with its sums flag, the
 * process's own sums charged to their callers), and empty the buffer. Only
 * the thread running on @cpu writes it, and it is in the kernel now
 * (switching out, or asking), on this CPU.
 */
static bool urec_flush(struct xp_urecbuf *rb, unsigned int cpu, struct task_struct *owner,
		       const struct xp_view *v)
{
	struct xp_urec_hdr *hdr = urec_hdr(rb, cpu);
	struct xprobes_urec *r = (void *)hdr + XP_UREC_HDR, *out = r;
	bool calls = READ_ONCE(v->urec_calls), sums = calls && READ_ONCE(v->urec_sums);
	u64 state = READ_ONCE(hdr->state), bsp = sums ? READ_ONCE(hdr->bsp) : 0;
	u64 v8[2 * XPROBES_UREC_INLINE] = {};
	u32 i, n = UREC_COUNT(state);
	struct xp_urec_clock c;
	bool *busy = NULL;

	if ((!n && !bsp) || rb->forced[cpu] == owner)
		return false;	/* none, or full only to look so (xp_urec_force()) */
	n = min_t(u32, n, XP_UREC_CAP);
	if (sums) {
		busy = this_cpu_ptr(&urec_out_busy);
		out = this_cpu_read(urec_out);
		if (*busy || !out)
			return false;	/* cannot be: they stay for the next hand-over */
		*busy = true;
	}
	c.ns = urec_clock_now(&c.tsc);
	c.mult = READ_ONCE(urec_mult) ?: tsc_mult;
	if (sums)
		n = xp_urec_fold_sums(r, n, (void *)hdr + XP_UREC_ACC, state, bsp, out, &c);
	else if (calls)
		n = xp_urec_fold(r, n, NULL, 0, r, &c);	/* converts as it reads */
	else
		urec_plain(r, n, &c);
	for (i = 0; i < n && i < XPROBES_UREC_INLINE; i++) {
		v8[2 * i] = out[i].time;
		v8[2 * i + 1] = out[i].what;
	}
	trace_xprobes_urecs(task_pid_nr(owner), out, n, task_tgid_nr(owner),
			    v8[0], v8[1], v8[2], v8[3], v8[4], v8[5], v8[6], v8[7]);
	urec_empty(hdr, 0);
	rb->dropped[cpu] = sums ? urec_mark(out, n, rb->dropped[cpu]) : 0;
	if (sums) {
		urec_hdr_ratio(hdr, c.mult);	/* the process may sum from now on */
		*busy = false;
	}
	return true;
}

/*
 * Carries. A thread that leaves its CPU with no record in its buffer, only
 * calls it summed at the bottom (A in the state, the first one's sp in
 * bsp), would hand over a lone bottom charge: their time, for the frame
 * below them, and a drop of the consumer's frames at or below bsp, which
 * can only be frames left behind (a longjmp, an exception: a live frame's
 * return address lies above every call it makes). The time the consumer
 * needs only before the thread's next record (it goes into the frame's
 * callees' time, read at its return); the drop it needs at once if there
 * is something to drop, since it reads the stack at switches (trace -W
 * gives a wait to the frame on top). So the time stays with the thread
 * (a slot here, keyed by its task_struct) and goes back into whichever
 * CPU's buffer it comes in on (urec_carry_take()), as if it had not left,
 * but only where the drop would drop nothing: bsp at or below the thread's
 * dropped mark, a sp at or below which the consumer is known to hold no
 * frame of it. Each hand-over sets the mark from what it sent
 * (urec_mark(): just below the last entry's frame, raised by the returns
 * and bottom charges after it), the thread's slot keeps it across its
 * switches, and what may push a frame unseen clears it: a uprobe's
 * handlers about to run, a forced buffer's records handed over one by
 * one. So a thread that sums at the bottom under its open frames, or
 * under none, carries once a hand-over has shown them to be above.
 * trace -f of a leaf whose callers are not traced (siphash in Redis) had
 * a hand-over at nearly every switch for that alone (docs/experiments.md,
 * section 7). Frames the consumer pushes without the module (uprobes) are
 * seen by the view's hooks on their handlers, which trace puts in with
 * them (XP_UREC_UPROBE); without those, nothing carries once the process
 * has hit a uprobe (urec_uprobes_seen()).
 *
 * Only at a switch of a thread of the process that will run again (not
 * its exit, not an exec: its mm is the buffers'), with sums, not forced
 * full, and with A under UREC_CARRY_MAX_A (a frame open for long under
 * many such calls has its charge sent before it nears the consumer's
 * clamp). Every other hand-over (a wakeup, a uprobe's, an unwinder's, a
 * full buffer, the exit) sends what the buffer has then, carried time
 * included, in its order. A thread taken over lazily by a kernel thread
 * (finish_task_switch's prev) carries the same way.
 *
 * Who touches a slot: the thread's own switch-out puts it, its switch-in
 * takes it, and the scheduler orders the two (the switch-out is done
 * before the thread can run anywhere: its on_cpu). Threads switching out
 * on other CPUs at once claim free slots by cmpxchg; a take reads the
 * slot, then frees it with a release. A put takes the first slot of its
 * window that is free or the thread's: one slot a thread, but where a
 * second put in one switch (the IN hook's prev after the OUT hook, for a
 * process that rewrote its header in between) finds a hole before the
 * first; a take looks at the whole window. A thread that finds no slot
 * hands over as before; a mark alone takes one of the window's first four
 * only, so that threads asleep for long with their marks leave room for
 * time to carry (losing a mark costs a lone charge later, a carry refused
 * one at every switch). What the state and bsp say is the process's own
 * data, as in its buffer: a lie there only misplaces its own time; the
 * mark is the kernel's.
 */
static bool urec_carry_put(struct xp_urecbuf *rb, struct task_struct *t, u64 state, u64 bsp,
			   u64 dropped)
{
	u32 h = hash_ptr(t, UREC_CARRY_BITS), i, end = bsp ? UREC_CARRY_PROBES : UREC_CARRY_MARKS;
	struct task_struct *o;
	struct urec_carry *c;

	for (i = 0; i < end; i++) {
		c = &rb->carry[(h + i) & (UREC_CARRY_SLOTS - 1)];
		o = READ_ONCE(c->t);
		if (o == t || (!o && !cmpxchg(&c->t, NULL, t)))
			goto fill;
	}
	return false;
fill:
	WRITE_ONCE(c->state, state & ~(u64)UREC_COUNT_MASK);	/* A, the count 0 */
	WRITE_ONCE(c->bsp, bsp);
	WRITE_ONCE(c->dropped, dropped);
	return true;
}

/*
 * @t comes in on @cpu: what it kept, if anything, into its buffer there
 * (emptied) and the CPU's mark. True if it had something to send.
 */
static bool urec_carry_take(struct xp_urecbuf *rb, unsigned int cpu, struct task_struct *t)
{
	struct xp_urec_hdr *hdr = urec_hdr(rb, cpu);
	u32 h, i;

	rb->dropped[cpu] = 0;
	h = hash_ptr(t, UREC_CARRY_BITS);
	for (i = 0; i < UREC_CARRY_PROBES; i++) {
		struct urec_carry *c = &rb->carry[(h + i) & (UREC_CARRY_SLOTS - 1)];
		u64 bsp;

		if (READ_ONCE(c->t) != t)
			continue;
		bsp = READ_ONCE(c->bsp);
		WRITE_ONCE(hdr->bsp, bsp);
		WRITE_ONCE(hdr->state, READ_ONCE(c->state));
		rb->dropped[cpu] = READ_ONCE(c->dropped);
		smp_store_release(&c->t, NULL);	/* read before another thread's put */
		return bsp;
	}
	return false;
}

/*
 * Does the view see every frame a uprobe's program may push for @mm's
 * threads? Only with its hooks on the uprobe handlers (XP_UREC_UPROBE),
 * which clear the mark; or while the process has had no uprobe hit at
 * all (no XOL area: a uprobe's first hit makes it). Without them (trace
 * could not put them in, and said so) nothing carries.
 */
static bool urec_uprobes_seen(const struct xp_view *v, struct mm_struct *mm)
{
#ifdef CONFIG_UPROBES
	return (READ_ONCE(v->urec_roles) & XP_UREC_UPROBE) ||
	       !READ_ONCE(mm->uprobes_state.xol_area);
#else
	return true;
#endif
}

/*
 * @t, a thread of @rb's process that will run again, leaves @cpu: its
 * bottom sums are carried if that is all its buffer has and their drop
 * would drop nothing, else handed over; its mark goes with it.
 */
static void urec_switch_out(struct xp_urecbuf *rb, unsigned int cpu, struct task_struct *t,
			    const struct xp_view *v)
{
	struct xp_urec_hdr *hdr = urec_hdr(rb, cpu);
	u64 state = READ_ONCE(hdr->state), bsp = READ_ONCE(hdr->bsp);

	if (READ_ONCE(v->urec_calls) && READ_ONCE(v->urec_sums) && rb->forced[cpu] != t &&
	    urec_uprobes_seen(v, t->mm)) {
		if (!UREC_COUNT(state) && bsp && bsp <= rb->dropped[cpu] &&
		    (state >> XP_UREC_COUNT_BITS) < UREC_CARRY_MAX_A &&
		    urec_carry_put(rb, t, state, bsp, rb->dropped[cpu])) {
			urec_empty(hdr, 0);
		} else {
			urec_flush(rb, cpu, t, v);	/* sets the mark */
			if (rb->dropped[cpu] && !UREC_COUNT(READ_ONCE(hdr->state)) &&
			    !READ_ONCE(hdr->bsp))
				urec_carry_put(rb, t, 0, 0, rb->dropped[cpu]);
		}
	} else {
		urec_flush(rb, cpu, t, v);
	}
	rb->dropped[cpu] = 0;	/* the next thread's, from its switch-in */
}

/*
 * The record the routine was about to append (@what, its second word, in
 * rsi), handed over alone with the time now: the routine will not append
 * it (xp_urec_slow(), a forced buffer).
 */
static void urec_hand_one(struct task_struct *t, u64 what)
{
	struct xprobes_urec r;
	u64 tsc;

	r.time = urec_clock_now(&tsc);
	/* the process's rsi: a return is a return and nothing else (no call, no charge) */
	r.what = what & XPROBES_UREC_RET ? XPROBES_UREC_RET | XPROBES_UREC_SP(what) : what;
	trace_xprobes_urecs(task_pid_nr(t), &r, 1, task_tgid_nr(t), r.time, r.what, 0, 0, 0, 0,
			    0, 0);
}

/*
 * Append @what (the record the routine came with, its rsi) to @cpu's
 * buffer, as the routine does (urec_tmpl.S, from xp_urec_append): the
 * state beside it, the TSC now, the commit. Only for the thread whose buffer it is, on its
 * CPU, from its system call (past the routine's commit: it is in no
 * critical section). False where there is no room (the flush could not
 * empty it): the record is then given up (until 2026-12-07 the routine
 * tried once more itself, to find the buffer as full).
 */
static bool urec_append_one(struct xp_urecbuf *rb, unsigned int cpu, u64 what)
{
	struct xp_urec_hdr *hdr = urec_hdr(rb, cpu);
	struct xprobes_urec *r = (void *)hdr + XP_UREC_HDR;
	u64 *acc = (void *)hdr + XP_UREC_ACC;
	u64 state = READ_ONCE(hdr->state);
	u32 n = UREC_COUNT(state);

	if (n >= XP_UREC_CAP)
		return false;
	WRITE_ONCE(acc[n], state);
	WRITE_ONCE(r[n].time, rdtsc_ordered());
	WRITE_ONCE(r[n].what, what);
	WRITE_ONCE(hdr->state, state + XP_UREC_COUNT_UNIT);
	return true;
}

/*
 * The routine found no stamp where the thread's rseq area would be, at the
 * process's offset from its thread pointer (urec_tmpl.S). If the thread
 * registered its area there, with the process's signature, the stamp goes
 * into the area's padding (XP_RSEQ_STAMP: no field of the kernel's) and
 * rdi 0 tells the routine to go on; otherwise rdi stays 1, and the routine
 * writes nothing, not even rseq_cs: that memory is not an rseq area, or
 * not one the kernel knows as this thread's (a TLS of its own, made by
 * clone(CLONE_SETTLS) or arch_prctl(); a thread that has not registered
 * yet). The live fs base, not thread.fsbase: the thread may have written
 * it with wrfsbase since it last left a CPU. The check is what vouches,
 * the stamp only remembers it: where the page cannot be written now (a
 * fork's copy-on-write: nothing wrote the TLS between the fork and here),
 * the routine goes on all the same, its own store of rseq_cs (in the same
 * 32 bytes) breaks the copy-on-write, and its next call's ask stamps.
 * (The first version gave up there, and a thread's first traced call
 * after a fork went unrecorded: selftest 41, disk and pipe.)
 */
static void urec_stamp(const struct xp_urecbuf *rb, struct pt_regs *u)
{
#ifdef CONFIG_RSEQ
	struct rseq __user *rs = current->rseq;
	unsigned long fs;

	if (!rs || current->rseq_sig != rb->rseq_sig)
		return;
	rdmsrl(MSR_FS_BASE, fs);
	if ((unsigned long)rs != fs + rb->rseq_off)
		return;
	/* a page that cannot be written now is stamped at a later ask */
	copy_to_user_nofault((u8 __user *)rs + XP_RSEQ_STAMP, &rb->stamp, sizeof(rb->stamp));
	u->di = 0;
#endif
}

/* The word at @tls + the rseq offset, in current's mm, loses the stamp if it is the stamp. */
static void urec_clear_stamp(const struct xp_urecbuf *rb, unsigned long tls)
{
	u8 __user *at = (u8 __user *)(tls + rb->rseq_off + XP_RSEQ_STAMP);
	u32 s, none = 0;

	if (!copy_from_user_nofault(&s, at, sizeof(s)) && s == rb->stamp)
		copy_to_user_nofault(at, &none, sizeof(none));
}

/*
 * An exiting thread's registered area loses the stamp, where it has it:
 * glibc gives the thread's TLS to a later thread, which runs some code
 * (its start, maybe hooked) before it registers the area, and must find
 * it unstamped until then.
 */
static void urec_unstamp(const struct xp_urecbuf *rb)
{
#ifdef CONFIG_RSEQ
	if (current->rseq)
		urec_clear_stamp(rb, (unsigned long)current->rseq - rb->rseq_off);
#endif
}

/* Was T in a records routine (between its rseq start and commit) when it entered the kernel? */
static bool urec_in_routine(struct task_struct *t)
{
	unsigned long ip = task_pt_regs(t)->ip;
	struct xp_urecblk *b;

	list_for_each_entry_rcu(b, &xp_urecblks, node)
		if (b->mm == t->mm && ip - b->va < XP_URT_OFF)
			return true;
	return false;
}

/*
 * A hit of one of the view's hooks that hand records over
 * (XPROBES_F_RECORDS on switch_mm_irqs_off, finish_task_switch, do_exit,
 * try_to_wake_up, uprobe_notify_resume or uprobe_handle_trampoline),
 * before its program runs: see the top of the file.
 */
static void urec_switch(struct xp_hook *h, struct pt_regs *regs, bool own_task)
{
	struct xp_urecbuf *rb = READ_ONCE(h->view->urec);
	struct task_struct *t = current, *prev;
	unsigned int cpu;

	if (!rb)
		return;
	cpu = smp_processor_id();
	if (cpu >= rb->nbufs)
		return;
	if (h->urec_role & (XP_UREC_WAKE | XP_UREC_UPROBE)) {
		/*
		 * One of ours wakes a task, or is about to run a uprobe's or a
		 * uretprobe's handlers, whose programs see the call at once
		 * while its user hooks' records would wait for its switch-out:
		 * its records first, so that one stream of entries and returns
		 * reaches the programs in the order the thread made them. Only in the
		 * task's own context (@own_task: not an interrupt; the int3
		 * path runs in NMI context, so in_task() cannot say), entered
		 * from its own code, not from inside the records routine: a
		 * fault or an interrupt in the routine's rseq section does not
		 * abort it, and it would then commit a record into the buffer
		 * emptied under it.
		 */
		if (own_task && t->mm == rb->mm && !(t->flags & PF_KTHREAD) &&
		    !urec_in_routine(t))
			urec_flush(rb, cpu, t, h->view);
		if ((h->urec_role & XP_UREC_UPROBE) && t->mm == rb->mm)
			rb->dropped[cpu] = 0;	/* its program may push a frame */
		return;
	}
	if (h->urec_role == XP_UREC_EXIT) {
		/*
		 * Its last slice: nothing of it runs in user mode again, and no
		 * later switch may take it for the buffer's writer (its
		 * task_struct may be another task's by then).
		 */
		if (t->mm == rb->mm) {
			urec_flush(rb, cpu, t, h->view);
			/* a slot here would be a switch-in the hooks missed: sent */
			if (urec_carry_take(rb, cpu, t))
				urec_flush(rb, cpu, t, h->view);
			rb->dropped[cpu] = 0;
			urec_unstamp(rb);
			if (rb->owner[cpu] == t)
				rb->owner[cpu] = NULL;
			if (rb->forced[cpu] == t) {
				struct xp_urec_hdr *hdr;

				/* a later switch would take its count for records */
				hdr = urec_hdr(rb, cpu);
				urec_empty(hdr, 0);
				rb->forced[cpu] = NULL;
			}
			xp_unwind_exit_task(h->view);
		}
		return;
	}
	if (h->urec_role == XP_UREC_OUT) {
		struct mm_struct *from = (void *)regs->di, *to = (void *)regs->si;

		/*
		 * The mm it leaves, switch_mm_irqs_off()'s first argument: an
		 * exiting thread has let go of its mm, not yet of its tables,
		 * and exec has set the new mm already. The view's guard leaves
		 * for init_mm with leave_mm(), which names none: then current,
		 * still ours, is the one leaving (text_poke()'s temporary mm
		 * names none either, and is not init_mm).
		 */
		if (!(t->flags & PF_KTHREAD) &&
		    (from == rb->mm || (!from && to == xp_k.init_mm && t->mm == rb->mm))) {
			if (t->mm == rb->mm)
				urec_switch_out(rb, cpu, t, h->view);
			else	/* exiting, or exec: it will not run in this mm again */
				urec_flush(rb, cpu, t, h->view);
		}
		return;
	}
	/*
	 * A kernel thread took over lazily from one of ours, which may have
	 * exited: it has no mm then, but it is the one that came here last.
	 */
	prev = (struct task_struct *)regs->di;
	if (prev && prev != t) {
		bool user = !(prev->flags & PF_KTHREAD);

		if (prev->mm == rb->mm && user)
			urec_switch_out(rb, cpu, prev, h->view);
		else if (prev->mm ? prev->mm == rb->mm : user && rb->owner[cpu] == prev) {
			urec_flush(rb, cpu, prev, h->view);	/* it exited, or borrowed the mm */
			rb->dropped[cpu] = 0;
		}
	}
	if (t->mm == rb->mm) {
		struct xp_urec_hdr *hdr = urec_hdr(rb, cpu);

		rb->owner[cpu] = t;
		rb->forced[cpu] = NULL;
		urec_empty(hdr, 0);
		if (READ_ONCE(h->view->urec_sums))	/* without sums, nothing is carried */
			urec_carry_take(rb, cpu, t);
		else
			rb->dropped[cpu] = 0;
		if (unlikely(xp_unwind_pending(h->view, t))) {
			/* its carried time goes first; its next record enters the kernel */
			urec_flush(rb, cpu, t, h->view);
			urec_empty(hdr, XP_UREC_CAP);
			rb->forced[cpu] = t;
			rb->dropped[cpu] = 0;	/* records handed over one by one */
		}
	}
}

/* urec_switch(), handing @regs back: the jump path then keeps no register for it (hooks/fire.h). */
struct pt_regs *xp_urec_switch(struct xp_hook *h, struct pt_regs *regs, bool own_task)
{
	urec_switch(h, regs, own_task);
	return regs;
}

/*
 * An unwinder starts in current (uunwind.c): its records so far go, and
 * its CPU's buffer then looks full, so that its next record enters the
 * kernel (xp_urec_slow()), which tells where the thread runs then. Each
 * switch-in of the thread makes it look full again while it is pending.
 * On the unwinder hook's hit path, preemption off, out of the routine.
 */
void xp_urec_force(struct xp_view *v)
{
	struct xp_urecbuf *rb = READ_ONCE(v->urec);
	struct xp_urec_hdr *hdr;
	unsigned int cpu;

	if (!rb || rb->mm != current->mm)
		return;
	cpu = smp_processor_id();
	if (cpu >= rb->nbufs)
		return;
	urec_flush(rb, cpu, current, v);
	hdr = urec_hdr(rb, cpu);
	urec_empty(hdr, XP_UREC_CAP);
	rb->forced[cpu] = current;
	rb->dropped[cpu] = 0;	/* records handed over one by one */
}

/*
 * A child of clone(CLONE_VM) of current's, before it first runs. With a
 * TLS of its own (CLONE_SETTLS: a thread, mostly), the word where its rseq
 * area's stamp would be must not be the stamp, since it runs code before
 * it registers an area there, if it ever does: glibc gives a new thread
 * the TLS of one that exited, whose stamp the exit may have failed to
 * clear (urec_unstamp(): a page out of reach then); a runtime may make a
 * TLS by copying a stamped one (a TLS of another kind that holds the
 * stamp's 32 random bits there by chance loses them). A child of vfork
 * (CLONE_VM, not a thread) runs on its parent's mm and TLS, so it finds
 * its parent's rseq area (stamped, maybe), but it is not registered for
 * rseq: nothing aborts its appends, and the cpu_id it reads is its
 * parent's. Its records would race with the thread of ours that owns that
 * CPU's buffer. So its parent's cpu_id says "not registered" (the routine
 * then writes nothing) until the parent returns to user mode, where the
 * kernel rewrites it (rseq_set_notify_resume()).
 */
void xp_urec_clone(struct xp_view *v, struct task_struct *parent, struct task_struct *child)
{
	struct xp_urecbuf *rb = READ_ONCE(v->urec);
	u32 none = (u32)RSEQ_CPU_ID_UNINITIALIZED;

#ifdef CONFIG_RSEQ
	if (!rb || rb->mm != parent->mm || parent != current)
		return;
	if (child->thread.fsbase != parent->thread.fsbase) {
		urec_clear_stamp(rb, child->thread.fsbase);
		return;		/* a TLS of its own */
	}
	if (!parent->rseq || same_thread_group(parent, child))
		return;		/* no area, or a thread sharing its TLS: its own figures */
	if (copy_to_user_nofault(&parent->rseq->cpu_id, &none, sizeof(none)))
		pr_warn_ratelimited("pid %d: records of its vfork child may mix with its threads'\n",
				    task_tgid_nr(parent));
	/*
	 * The kernel writes the parent's cpu_id again before it returns to
	 * user mode: after a vfork that is once the child is done; a parent of
	 * clone(CLONE_VM) without CLONE_VFORK returns at once and runs on
	 * beside the child (whose records, unprotected, then land with its
	 * parent's: one address space, its own figures). Without this, that
	 * parent's records were dropped until its next switch.
	 */
	rseq_set_notify_resume(parent);
#endif
}

/* ---- the blocks ---------------------------------------------------------------- */

static void block_release(struct xp_urecblk *b)
{
	unsigned int i;

	if (b->kaddr)
		vunmap(b->kaddr);
	for (i = 0; i < BLK_PAGES && b->pages[i]; i++)
		put_page(b->pages[i]);
	kfree(b);
}

/* A stamp check, cmpl $stamp, %fs:rseq_off + XP_RSEQ_STAMP, ending at @end. */
static void build_stamp(u8 *code, unsigned int end, const struct xp_urecbuf *rb)
{
	put_unaligned_le32(rb->rseq_off + XP_RSEQ_STAMP, code + end - 8);
	put_unaligned_le32(rb->stamp, code + end - 4);
}

/*
 * The routines for @rb's process, as they are at @base; without @sums (the
 * view's hooks hand records over without XPROBES_F_SUMS), the return
 * routine's gate jumps over its fold. Patched before the process can run
 * them.
 */
static void build_code(u8 *code, unsigned long base, const struct xp_urecbuf *rb, bool sums)
{
	unsigned int len = xp_urec_tmpl_end - xp_urec_tmpl;
	u8 *desc = code + TMPL_OFF(xp_urec_desc);

	memcpy(code, xp_urec_tmpl, len);
	build_stamp(code, TMPL_OFF(xp_urec_p_stamp), rb);
	build_stamp(code, TMPL_OFF(xp_urec_p_stamp_nr), rb);
	build_stamp(code, TMPL_OFF(xp_urec_p_stamp_ret), rb);
	put_unaligned_le32(rb->rseq_off + 8, code + TMPL_OFF(xp_urec_p_cs) - 4);
	put_unaligned_le32(rb->rseq_off + 4, code + TMPL_OFF(xp_urec_p_cpu) - 4);
	put_unaligned_le32(rb->nbufs, code + TMPL_OFF(xp_urec_p_nbufs) - 4);
	put_unaligned_le64(rb->va, code + TMPL_OFF(xp_urec_p_base) - 8);
	put_unaligned_le32(rb->rseq_sig, code + TMPL_OFF(xp_urec_p_sig) - 4);
	/* struct rseq_cs: version 0, flags 0, start_ip, post_commit_offset, abort_ip */
	put_unaligned_le64(base + TMPL_OFF(xp_urec_start), desc + 8);
	put_unaligned_le64(xp_urec_post - xp_urec_start, desc + 16);
	put_unaligned_le64(base + TMPL_OFF(xp_urec_abort), desc + 24);
	/* the sums' critical section, in the return routine */
	desc = code + TMPL_OFF(xp_urec_desc2);
	put_unaligned_le32(rb->rseq_off + 8, code + TMPL_OFF(xp_urec_p_cs2) - 4);
	put_unaligned_le32(rb->rseq_off + 8, code + TMPL_OFF(xp_urec_p_cs3) - 4);
	put_unaligned_le32(rb->rseq_off + 4, code + TMPL_OFF(xp_urec_p_cpu2) - 4);
	put_unaligned_le32(rb->nbufs, code + TMPL_OFF(xp_urec_p_nbufs2) - 4);
	put_unaligned_le64(rb->va, code + TMPL_OFF(xp_urec_p_base2) - 8);
	put_unaligned_le64(rb->va + URECBUF_SUMS(rb), code + TMPL_OFF(xp_urec_p_sums) - 8);
	put_unaligned_le64(rb->va + URECBUF_TCACHE(rb), code + TMPL_OFF(xp_urec_p_tcache) - 8);
	put_unaligned_le64(rb->va + URECBUF_TCACHE(rb), code + TMPL_OFF(xp_urec_p_tcache2) - 8);
	put_unaligned_le32(rb->rseq_sig, code + TMPL_OFF(xp_urec_p_sig2) - 4);
	put_unaligned_le64(base + TMPL_OFF(xp_urec_fstart), desc + 8);
	put_unaligned_le64(xp_urec_fpost - xp_urec_fstart, desc + 16);
	put_unaligned_le64(base + TMPL_OFF(xp_urec_fabort), desc + 24);
	if (!sums) {	/* over the gate's lea (urec_tmpl.S): 7 bytes */
		u8 *g = code + TMPL_OFF(xp_urec_sums_gate);

		g[0] = 0xe9;	/* jmp rel32 */
		put_unaligned_le32(xp_urec_plain - (xp_urec_sums_gate + 5), g + 1);
		g[5] = 0xcc;
		g[6] = 0xcc;
	}
}

/* Return thunk @i at @at: keep rax, call xp_urec_ret, jump to its target. */
static void build_thunk(u8 *p, unsigned long at, unsigned long base, unsigned int i)
{
	static const u8 save[] = { 0x48, 0x89, 0x44, 0x24, 0xf0 };	/* mov %rax,-16(%rsp) */
	static const u8 load[] = { 0x48, 0x8b, 0x44, 0x24, 0xf0 };	/* mov -16(%rsp),%rax */
	unsigned long target = base + XP_URT_TGT + i * 8;

	memset(p, 0xcc, XP_URT_SIZE);
	memcpy(p, save, 5);
	p[5] = 0xe8;
	put_unaligned_le32(base + TMPL_OFF(xp_urec_ret) - (at + 10), p + 6);
	memcpy(p + 10, load, 5);
	p[15] = 0xff;		/* jmp *rel32(%rip) */
	p[16] = 0x25;
	put_unaligned_le32(target - (at + 21), p + 17);
}

/* @a's records block, written for @rb's process, once. */
static int block_init(struct xp_uarea *a, const struct xp_urecbuf *rb, bool sums,
		      struct netlink_ext_ack *extack)
{
	unsigned long base = a->va + XP_UREC_AREA_OFF;
	struct address_space *mapping = a->file->f_mapping;
	struct xp_urecblk *b;
	unsigned int i;
	u8 *buf;
	int err = -ENOMEM;

	b = kzalloc(sizeof(*b), GFP_KERNEL_ACCOUNT);
	buf = vzalloc(XP_URT_TGT);
	if (!b || !buf)
		goto fail;
	raw_spin_lock_init(&b->lock);
	b->mm = a->mm;
	b->va = base;
	build_code(buf, base, rb, sums);
	for (i = 0; i < XP_URT_N; i++)
		build_thunk(buf + XP_URT_OFF + i * XP_URT_SIZE, base + XP_URT_OFF + i * XP_URT_SIZE,
			    base, i);
	err = xp_uarea_write(a, base, buf, XP_URT_TGT);
	if (err)
		goto fail;
	for (i = 0; i < BLK_PAGES; i++) {
		struct page *page = shmem_read_mapping_page_gfp(mapping,
				(XP_UREC_AREA_OFF + XP_URT_TGT) / PAGE_SIZE + i,
				mapping_gfp_mask(mapping));

		if (IS_ERR(page)) {
			err = PTR_ERR(page);
			goto fail;
		}
		set_page_dirty_lock(page);
		b->pages[i] = page;
	}
	b->kaddr = vmap(b->pages, BLK_PAGES, VM_MAP, PAGE_KERNEL);
	if (!b->kaddr) {
		err = -ENOMEM;
		goto fail;
	}
	vfree(buf);
	list_add_rcu(&b->node, &xp_urecblks);
	a->urec = b;
	return 0;
fail:
	vfree(buf);
	if (b)
		block_release(b);
	NL_SET_ERR_MSG(extack, "could not write the records block");
	return err;
}

void xp_urec_block_free(struct xp_uarea *a)
{
	struct xp_urecblk *b = a->urec;

	lockdep_assert_held(&xp_views_lock);
	if (!b)
		return;
	list_del_rcu(&b->node);
	synchronize_rcu();	/* the slow path is done with it */
	block_release(b);
	a->urec = NULL;
}

/*
 * The hooks of @a's process go (uunwind.c): no call takes a record thunk
 * from now on (the routine finds no key in the hash, the slow path makes
 * none), and the targets of those given out go to @tgt (XP_URT_N of
 * them), the first thunk's address to @base, the routines' to @routine.
 * Returns how many. A thread already past the hash's key writes its thunk
 * still: xp_urec_window() says where.
 */
unsigned int xp_urec_detach(struct xp_uarea *a, u64 *tgt, unsigned long *base,
			    unsigned long *routine, bool mapped)
{
	struct xp_urecblk *b = a->urec;
	u64 *hash, *t;
	unsigned long flags;
	unsigned int i, n;

	lockdep_assert_held(&xp_views_lock);
	if (!b)
		return 0;
	t = b->kaddr;
	hash = b->kaddr + (XP_URT_HASH - XP_URT_TGT);
	raw_spin_lock_irqsave(&b->lock, flags);
	b->detached = true;
	n = b->used;
	raw_spin_unlock_irqrestore(&b->lock, flags);
	/*
	 * No thunk_get() writes the hash now. An entry's thunk becomes its
	 * return address first: a thread that read the key before it goes
	 * (one stopped by a signal there, whose registers detach_window()
	 * does not see) stores the return address. A tail call's key is a
	 * thunk (its caller's), which that thread would store after its stack
	 * was read: the return address it stands for goes there instead, the
	 * tail bit kept (until 2026-12-04 the key itself, the review's finding
	 * 1). @mapped: in a detach map, which xp_urec_detach_tails() reads
	 * once it has every area that goes, before any stack is read: the
	 * key stays meanwhile. Without, now, through every block of the
	 * process. Out of the lock, the chains walked under RCU a few at a
	 * time: a process may have made every entry a tail call's.
	 */
	for (i = 0; i < XP_URT_HASH_SIZE / 16; i++) {
		u64 key = READ_ONCE(hash[2 * i]), tail = hash[2 * i + 1] & BIT_ULL(XP_URT_TAILBIT);

		if (hash[2 * i + 1] & BIT_ULL(XP_URT_NEGBIT))
			key = 0;	/* no thunk: the routine stores nothing for it */
		if (key && tail && !mapped) {	/* uunwind.c's chain: the scan's own */
			rcu_read_lock();
			key = xp_unwind_thunk_target(b->mm, key) ?: key;
			rcu_read_unlock();
		}
		if (key)
			WRITE_ONCE(hash[2 * i + 1], key | tail);
		WRITE_ONCE(hash[2 * i], 0);
		if (!(i % 256))
			cond_resched();
	}
	for (i = 0; i < n; i++)
		tgt[i] = READ_ONCE(t[i]);
	*base = b->va + XP_URT_OFF;
	*routine = b->va;
	return n;
}

/*
 * After xp_urec_detach(@a, ..., true), once @m has every area that goes
 * with @a: a tail call's entry gets the return address its key stands for
 * through the thunks of those areas alone, as the stack scan reads a word
 * (uunwind.c, detach_word()). A thunk of an area that stays is kept: it
 * still records its caller's return (until 2026-12-04 the walk went
 * through every block of the process, and an area freed alone took that
 * return record from the other's function). Under xp_views_lock, before
 * the detach works are queued.
 */
void xp_urec_detach_tails(struct xp_uarea *a, const struct xp_unwind_map *m)
{
	struct xp_urecblk *b = a->urec;
	u64 *hash, tail = BIT_ULL(XP_URT_TAILBIT);
	unsigned long t;
	unsigned int i;

	lockdep_assert_held(&xp_views_lock);
	if (!b)
		return;
	hash = b->kaddr + (XP_URT_HASH - XP_URT_TGT);
	for (i = 0; i < XP_URT_HASH_SIZE / 16; i++) {
		u64 w = READ_ONCE(hash[2 * i + 1]);

		if (!(w & tail) || (w & BIT_ULL(XP_URT_NEGBIT)))
			continue;	/* not a tail call's (no thunk: nothing to map) */
		t = xp_unwind_map_target(m, w & ~tail);
		if (t)
			WRITE_ONCE(hash[2 * i + 1], t | tail);
		if (!(i % 256))
			cond_resched();
	}
}

/*
 * Is @w a record thunk of @b's process, @b's own or another block's (a
 * tail call's return address: a function of one area, a library's, that
 * jumps to one of another, the program's)? Under rcu_read_lock(), or
 * with preemption off. Until 2026-12-04 only @b's own thunks counted:
 * such a call was taken for an entry at its caller's sp, whose frame the
 * fold and trace's programs then closed as one that never returned.
 */
static bool thunk_is_tail(const struct xp_urecblk *b, unsigned long w)
{
	const struct xp_urecblk *o;

	if (w - (b->va + XP_URT_OFF) < XP_URT_N * XP_URT_SIZE)
		return true;
	list_for_each_entry_rcu(o, &xp_urecblks, node)
		if (o->mm == b->mm && w - (o->va + XP_URT_OFF) < XP_URT_N * XP_URT_SIZE)
			return true;
	return false;
}

/*
 * The thunk that returns to @ret, made if new. The hash is the process's
 * (read-only to it): the target goes in first, then the entry's thunk, then
 * its key, which the routine compares first (x86 keeps stores in order).
 * The entry's thunk has XP_URT_TAILBIT where @ret is a thunk itself: the
 * routine's hit sees a tail call without testing the address's range.
 * With no thunk left, @ret gets an entry all the same, one that says so
 * (XP_URT_NEGBIT: the routine then gives the call's return up without
 * asking), where its run has room; a full run the routine sees itself.
 * Either way there is no thunk: 0.
 */
static unsigned long thunk_get(struct xp_urecblk *b, unsigned long ret)
{
	u64 *tgt = b->kaddr, *hash = b->kaddr + (XP_URT_HASH - XP_URT_TGT);
	u32 pos = hash_64(ret, XP_URT_HASH_BITS), i;
	unsigned long flags, thunk = 0;
	bool tail;

	/* every block on the system walked: before the lock, interrupts on */
	rcu_read_lock();
	tail = thunk_is_tail(b, ret);
	rcu_read_unlock();
	raw_spin_lock_irqsave(&b->lock, flags);
	for (i = 0; i < XP_URT_PROBES && !b->detached; i++) {
		u64 *e = hash + (pos + i) * 2;

		if (e[0] == ret) {
			if (!(e[1] & BIT_ULL(XP_URT_NEGBIT)))
				thunk = e[1] & ~BIT_ULL(XP_URT_TAILBIT);
			break;
		}
		if (e[0])
			continue;
		BUILD_BUG_ON(XP_URT_NEGBIT < 57 || XP_URT_NEGBIT == XP_URT_TAILBIT);
		if (b->used == XP_URT_N) {
			WRITE_ONCE(e[1], ret | BIT_ULL(XP_URT_TAILBIT) | BIT_ULL(XP_URT_NEGBIT));
			smp_wmb();	/* as below */
			WRITE_ONCE(e[0], ret);
			break;
		}
		tgt[b->used] = ret;
		thunk = b->va + XP_URT_OFF + b->used * XP_URT_SIZE;
		b->used++;
		BUILD_BUG_ON(XP_URT_TAILBIT < 57);	/* above any user address, 5-level too */
		WRITE_ONCE(e[1], thunk | (tail ? BIT_ULL(XP_URT_TAILBIT) : 0));
		smp_wmb();	/* the routine's probe: a key it matches has its thunk */
		WRITE_ONCE(e[0], ret);
		break;
	}
	raw_spin_unlock_irqrestore(&b->lock, flags);
	return thunk;
}

/*
 * The routine's system call (from the view's hook on the unimplemented-
 * syscall handler, uevent.c): rdi 0, this CPU's buffer is full (and the
 * record the routine is about to append in rsi: set to 1, rdi tells it
 * that the kernel took that record itself, handing it over or appending
 * it, which it does unless the buffers are not the thread's: a child of
 * fork); rdi 1, the thread's rseq area has no stamp (urec_stamp()); else
 * rdi is a hooked call's entry sp, whose return address needs a thunk.
 */
void xp_urec_slow(struct xp_view *v, struct pt_regs *u, struct xp_ulate *l)
{
	struct xp_urecbuf *rb = READ_ONCE(v->urec);
	unsigned long ret, thunk;
	struct xp_urecblk *b;
	unsigned int cpu;

	l->kind = 0;
	if (!rb || rb->mm != current->mm)
		return;		/* a child of fork: it goes on without */
	if (u->di == 1) {
		urec_stamp(rb, u);
		return;
	}
	if (!u->di) {
		cpu = smp_processor_id();
		if (cpu >= rb->nbufs)
			return;
		if (rb->forced[cpu] == current) {
			struct xp_urec_hdr *hdr;

			/*
			 * Full only to look so (emptied when it was made so):
			 * this record is handed over from here, in its order,
			 * and the routine, told so by its rdi, writes nothing
			 * and does not try again. Where does the thread run
			 * now? Inside the unwinder (a personality routine, a
			 * callback) the buffer stays full; out of it, records
			 * go on as before. Until 2026-12-02 the routine retried
			 * the record after a landing and dropped it when the
			 * buffer looked full again: forced anew by a switch-in
			 * before the rearm's task work, or by an unwinder that
			 * a signal handler called in that window.
			 */
			urec_hand_one(current, u->si);
			u->di = 1;
			if (!xp_unwind_landed(v, u->sp))
				return;
			hdr = urec_hdr(rb, cpu);
			rb->forced[cpu] = NULL;
			urec_empty(hdr, 0);
			return;
		}
		/*
		 * The buffer goes, and this record goes in, as the routine would
		 * append it: the routine appends nothing after this call (rdi
		 * 1 says so, which it no longer reads). Until 2026-12-02
		 * the routine appended it after this call, and a signal handler
		 * that ran at the call's exit and filled the buffer again left
		 * it no room (selftest 49-trace-sigflush).
		 */
		urec_flush(rb, cpu, current, v);
		if (urec_append_one(rb, cpu, u->si))
			u->di = 1;
		return;
	}
	if (u->di != u->sp + 8 || (u->di & 7))
		return;		/* not the routine's call, or not the ABI's stack (a torn write) */
	list_for_each_entry_rcu(b, &xp_urecblks, node)
		if (b->mm == current->mm && u->ip - b->va < XP_URT_OFF)
			goto found;
	return;
found:
	/*
	 * A tail call: the routine's hit takes it from the hash entry, a
	 * miss from here (the return address the routine read is in rdx).
	 */
	if (thunk_is_tail(b, u->dx))
		u->si |= XPROBES_UREC_TAIL;
	/*
	 * A slot out of reach now is done again by the late work (ulate.c);
	 * given up, the call's return writes nothing, as the routine sees.
	 */
	if (copy_from_user_nofault(&ret, (const void __user *)u->di, sizeof(ret))) {
		xp_ulate_ask(l, XP_ULATE_THUNK, u->di, sizeof(ret), true);
		return;
	}
	if (!ret || ret >= TASK_SIZE_MAX)
		return;
	thunk = thunk_get(b, ret);
	if (thunk && copy_to_user_nofault((void __user *)u->di, &thunk, sizeof(thunk)))
		xp_ulate_ask(l, XP_ULATE_THUNK, u->di, sizeof(thunk), true);
}

/* Where @mm's record thunks are: up to @max ranges [lo, hi). Under rcu_read_lock(). */
unsigned int xp_urec_thunk_ranges(struct mm_struct *mm, unsigned long *lo, unsigned long *hi,
				  unsigned int max)
{
	struct xp_urecblk *b;
	unsigned int n = 0;

	list_for_each_entry_rcu(b, &xp_urecblks, node)
		if (b->mm == mm && n < max) {
			lo[n] = b->va + XP_URT_OFF;
			hi[n++] = b->va + XP_URT_OFF + XP_URT_N * XP_URT_SIZE;
		}
	return n;
}

/*
 * The return address record thunk @w of @mm stands for, or 0 if @w is
 * none (uunwind.c). Under rcu_read_lock(); from the block's own table.
 */
unsigned long xp_urec_thunk_target(struct mm_struct *mm, unsigned long w)
{
	struct xp_urecblk *b;

	list_for_each_entry_rcu(b, &xp_urecblks, node) {
		unsigned long off = w - (b->va + XP_URT_OFF);
		const u64 *tgt = b->kaddr;

		if (b->mm != mm || off >= XP_URT_N * XP_URT_SIZE || off % XP_URT_SIZE)
			continue;
		/*
		 * Given out: thunk_get() stores its target before the count (x86
		 * keeps stores in order); the count is read first.
		 */
		if (off / XP_URT_SIZE >= READ_ONCE(b->used))
			return 0;
		smp_rmb();	/* the count, then the target */
		return READ_ONCE(tgt[off / XP_URT_SIZE]);
	}
	return 0;
}

/* ---- adding a hook ------------------------------------------------------------- */

/* The process may sum calls on every CPU: the ratio in each buffer's header. */
static void urecbuf_sums_on(struct xp_urecbuf *rb)
{
	u64 mult = READ_ONCE(urec_mult) ?: tsc_mult;
	unsigned int cpu;

	preempt_disable();	/* urec_hdr_ratio()'s tables are this CPU's */
	for (cpu = 0; cpu < rb->nbufs; cpu++) {
		struct xp_urec_hdr *hdr = urec_hdr(rb, cpu);

		WRITE_ONCE(hdr->below, XPROBES_UREC_RET);	/* urec_tmpl.S: the bottom */
		urec_hdr_ratio(hdr, mult);
	}
	preempt_enable();
}

/* May @v take a records hook in @mm? Before anything is made for it. */
int xp_urec_check(struct xp_view *v, struct mm_struct *mm, struct netlink_ext_ack *extack)
{
	lockdep_assert_held(&xp_views_lock);
	if ((v->urec_roles & XP_UREC_ALL) != XP_UREC_ALL) {
		NL_SET_ERR_MSG(extack, "records need the view's hooks on switch_mm_irqs_off, "
			       "finish_task_switch and do_exit with the records flag "
			       "(xprobectl hook add --records)");
		return -ENOTCONN;
	}
	if (!tsc_khz) {
		NL_SET_ERR_MSG(extack, "records need a TSC");
		return -EOPNOTSUPP;
	}
	if (v->urec && v->urec->mm != mm) {
		NL_SET_ERR_MSG(extack, "records serve one process per view, and this view's are "
			       "another's");
		return -EBUSY;
	}
	return 0;
}

/*
 * A records hook in @task's process, with its slot in @a: the view must
 * hand records over at its switches (both scheduler hooks); the process
 * gets its buffers and the area its block, once.
 */
int xp_urec_prepare(struct xp_view *v, struct xp_uarea *a, struct task_struct *task,
		    struct mm_struct *mm, struct xp_urecbuf **made, struct netlink_ext_ack *extack)
{
	struct xp_urecbuf *rb = v->urec;
	long off = 0;
	u32 sig = 0;
	int err;

	lockdep_assert_held(&xp_views_lock);
	err = xp_urec_check(v, mm, extack);
	if (err)
		return err;
	BUILD_BUG_ON(XP_UREC_MULT + 8 > XP_UREC_HDR);
	BUILD_BUG_ON(XP_UREC_ACC + XP_UREC_CAP * 8 > 1 << XP_UREC_BUF_SHIFT);
	BUILD_BUG_ON(XP_USUM_HIST + XP_USUM_BUCKET * XP_USUM_NHIST > XP_USUM_SIZE);
	BUILD_BUG_ON(sizeof_field(struct xprobes_usum, hist[0]) != XP_USUM_BUCKET);
	BUILD_BUG_ON(XP_USUM_NHIST != XPROBES_USUM_HIST || XP_USUM_FUNCS != XPROBES_USUM_FUNCS);
	BUILD_BUG_ON(XP_UREC_COOKIE_MASK != XPROBES_UREC_COOKIE_MAX ||
		     XP_UREC_SP_BITS != XPROBES_UREC_SP_BITS);
	BUILD_BUG_ON(offsetof(struct xp_urec_hdr, mult) != XP_UREC_MULT ||
		     offsetof(struct xp_urec_hdr, bsp) != XP_UREC_BSP ||
		     offsetof(struct xp_urec_hdr, th) != XP_UREC_TH ||
		     offsetof(struct xp_urec_hdr, bk) != XP_UREC_BK ||
		     offsetof(struct xp_urec_hdr, below) != XP_UREC_BELOW);
	BUILD_BUG_ON(XP_UREC_CAP * XP_UREC_COUNT_UNIT >= 1 << XP_UREC_COUNT_BITS);
	/* the block's parts the module pins and maps, and its offset in the area, in whole pages */
	BUILD_BUG_ON(XP_URT_TGT % PAGE_SIZE || XP_URT_HASH % PAGE_SIZE ||
		     XP_UREC_BLOCK % PAGE_SIZE || XP_UREC_AREA_OFF % PAGE_SIZE);
	/* thunks' entries fill at most half the hash (addresses with none: the rest) */
	BUILD_BUG_ON(XP_URT_N * 2 > 1 << XP_URT_HASH_BITS);
	BUILD_BUG_ON(XP_URT_TCACHE_MASK > S32_MAX);		/* urec_tmpl.S: andl $imm32 */
	/* the stamp: in the 32 bytes of every registration, in no field of the kernel's */
	BUILD_BUG_ON(XP_RSEQ_STAMP + 4 > 32 || sizeof(struct rseq) != 32);
	BUILD_BUG_ON(XP_RSEQ_KERNEL_END > XP_RSEQ_STAMP);
	BUILD_BUG_ON(sizeof(struct xp_urec_hdr) != XP_UREC_HDR);
	if (v->urec_sums && urec_out_make()) {
		NL_SET_ERR_MSG(extack, "no memory for the hand-overs of sums");
		return -ENOMEM;
	}
	urec_clock_init();
	err = rseq_layout(task, &off, &sig, extack);
	if (err)
		return err;
	if (!rb) {
		rb = *made;	/* made before, without the lock (uhook.c) */
		if (!rb || rb->mm != mm)
			return -EAGAIN;	/* the caller makes them first */
		*made = NULL;
		if (rb->rseq_off != off || rb->rseq_sig != sig) {
			xp_urecbuf_drop(rb);
			NL_SET_ERR_MSG(extack, "the process's rseq areas moved during the add");
			return -EBUSY;
		}
		/*
		 * Sums from the first call: each buffer's ratio now, not at
		 * its first hand-over (a short program may be done by then).
		 */
		if (v->urec_sums)
			urecbuf_sums_on(rb);
		/* Complete before the hooks' hit paths may see it. */
		smp_store_release(&v->urec, rb);
	}
	if (rb->rseq_off != off || rb->rseq_sig != sig) {
		NL_SET_ERR_MSG(extack, "the process's rseq areas moved since its first records hook");
		return -EBUSY;
	}
	if (!a->urec)
		return block_init(a, rb, v->urec_sums, extack);
	return 0;
}

/*
 * The stub of a records hook whose trampoline is at @at in @a: the cookie
 * goes in eax, the routine keeps everything else.
 */
void xp_urec_stub(u8 *out, struct xp_uarea *a, unsigned long at, u64 cookie, bool returns)
{
	unsigned long base = a->va + XP_UREC_AREA_OFF;
	const u8 *entry = returns ? xp_urec_entry : xp_urec_entry_noret;

	out[0] = 0x48; out[1] = 0x89; out[2] = 0x44; out[3] = 0x24; out[4] = 0xf0;
	out[5] = 0xb8;
	put_unaligned_le32(cookie & XP_UREC_COOKIE_MASK, out + 6);
	out[10] = 0xe8;
	put_unaligned_le32(base + TMPL_OFF(entry) - (at + 15), out + 11);
	out[15] = 0x48; out[16] = 0x8b; out[17] = 0x44; out[18] = 0x24; out[19] = 0xf0;
}

#ifdef XPROBES_KUNIT
#include "urec_kunit.c"
#endif
