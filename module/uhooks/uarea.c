// SPDX-License-Identifier: GPL-2.0
/*
 * Trampoline areas: code the module maps into a traced process for its user
 * hooks (uhook.c).
 *
 * An area is a shmem file mapped read and execute, shared, from a file
 * opened read-only: the vma has neither VM_WRITE nor VM_MAYWRITE, so
 * mprotect() cannot make it writable and /proc/PID/mem cannot write it (a
 * forced write needs a copy-on-write mapping). The module writes the
 * trampolines through the file's page cache, which every mapping of it
 * sees. Nothing about the vma is the module's: its operations are shmem's,
 * so a process keeps its trampolines (and a child of fork inherits them,
 * with the patched text that jumps there) after the module is gone.
 *
 * vm_mmap() maps into current->mm only; _install_special_mapping() is not
 * exported. So the area is mapped by a worker that borrows the process's mm
 * (kthread_use_mm()), at an address chosen here within reach of a rel32
 * jump from the hooked function, with MAP_FIXED_NOREPLACE so that nothing
 * of the process is ever replaced (but for an area itself: a child of fork
 * gets its own copy of its parent's, mapped over it, xp_uareas_unshare()). A slot, once written, is never reused
 * for other code: a thread may be inside it at any time.
 *
 * Locking: areas are listed, taken and freed under xp_views_lock; they are
 * mapped without it (xp_uarea_map(), then xp_uarea_adopt()), since the
 * mapping waits for the process's mmap lock, which the process can hold
 * for as long as it likes: that wait ends on a fatal signal to the caller.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/file.h>
#include <linux/fs.h>
#include <linux/highmem.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/mman.h>
#include <linux/pagemap.h>
#include <linux/refcount.h>
#include <linux/sched/mm.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include "xprobes.h"
#include "uhook.h"
#include "uslot.h"	/* get_unaligned_le32() on 6.1 and 6.12 */
#include "urec.h"

static LIST_HEAD(xp_uareas);	/* under xp_views_lock */

#define AREA_NAME	"[xprobes-uhooks]"
/* The kernel's internal shmem mount's, where every area file is (xp_uareas_init()) */
static struct super_block *area_sb;

/* A rel32 reaches +-2 GiB; keep a margin for the function's own length. */
#define REACH	(SZ_2G - SZ_16M)

/*
 * A mapping for the worker to make. The add that asked may stop waiting (a
 * fatal signal: the process may hold its mmap lock for as long as it
 * likes); the worker then finishes alone, and what it mapped stays in the
 * process, unused. Whoever puts the last reference frees it.
 */
struct map_work {
	struct work_struct work;
	refcount_t ref;			/* the waiter's and the worker's */
	struct mm_struct *mm;		/* mmget()'s reference, the worker's */
	struct file *file;		/* get_file()'s, the worker's */
	unsigned long addr, size, prot, flags;
	vm_flags_t vm_flags;		/* set on the new vma too */
	unsigned long ret;
	struct completion done;
};

static void map_work_put(struct map_work *w)
{
	if (refcount_dec_and_test(&w->ref))
		kfree(w);
}

static void map_in_mm(struct work_struct *work)
{
	struct map_work *w = container_of(work, struct map_work, work);
	struct vm_area_struct *vma;

	kthread_use_mm(w->mm);
	w->ret = vm_mmap(w->file, w->addr, w->size, w->prot, w->flags, 0);
	if (!IS_ERR_VALUE(w->ret) && w->vm_flags) {
		/*
		 * A second hold of the lock: the process may have changed the
		 * range in between; then the flags go nowhere, and the caller
		 * finds out (urecbuf_pin() checks the vma it pins).
		 */
		mmap_write_lock(w->mm);
		vma = find_vma(w->mm, w->ret);
		if (vma && vma->vm_start == w->ret && vma->vm_file == w->file)
			xp_vm_flags_set(vma, w->vm_flags);
		mmap_write_unlock(w->mm);
	}
	kthread_unuse_mm(w->mm);
	mmput(w->mm);
	fput(w->file);
	complete(&w->done);
	map_work_put(w);
}

/*
 * vm_mmap() into @mm, not current's: by a worker that borrows it; with
 * @vm_flags (ones no mmap() flag gives: VM_WIPEONFORK) set on the new vma.
 * The process's mmap lock may be held for as long as it likes: a fatal
 * signal ends the wait (-EINTR), and the worker maps on its own.
 */
unsigned long xp_umap_flags(struct mm_struct *mm, struct file *file, unsigned long addr,
			    unsigned long size, unsigned long prot, unsigned long flags,
			    vm_flags_t vm_flags)
{
	struct map_work *w = kzalloc(sizeof(*w), GFP_KERNEL);
	unsigned long ret;

	if (!w)
		return -ENOMEM;
	if (!mmget_not_zero(mm)) {
		kfree(w);
		return -ESRCH;
	}
	refcount_set(&w->ref, 2);
	w->mm = mm;
	w->file = get_file(file);
	w->addr = addr;
	w->size = size;
	w->prot = prot;
	w->flags = flags;
	w->vm_flags = vm_flags;
	INIT_WORK(&w->work, map_in_mm);
	init_completion(&w->done);
	queue_work(xp_uwq, &w->work);	/* the module's: rmmod drains it */
	ret = wait_for_completion_killable(&w->done) ? -EINTR : w->ret;
	map_work_put(w);
	return ret;
}

unsigned long xp_umap(struct mm_struct *mm, struct file *file, unsigned long addr,
		      unsigned long size, unsigned long prot, unsigned long flags)
{
	return xp_umap_flags(mm, file, addr, size, prot, flags, 0);
}

/*
 * Where a gap below @near may start for an area in it to reach @near: the
 * area lies at least a page above the gap's start, and every slot of it
 * must be within a rel32 of @near (reaches()), its last one too. Until
 * 2026-12-06 the bound was @near - REACH: an area at the bottom of the
 * range was mapped, never used, and the add failed after three of them.
 */
static unsigned long gap_floor(unsigned long near)
{
	const unsigned long span = REACH - XP_UAREA_SIZE;

	return near > span ? near - span : 0;
}

/*
 * A free range of XP_UAREA_SIZE, with a guard page each side, within reach
 * of @near: the closest one below it, else the closest above but not in
 * the @room bytes above the heap's start, where it grows. 0 if there is
 * none, -EINTR on a fatal signal.
 */
static unsigned long gap_near(struct mm_struct *mm, unsigned long near, unsigned long room)
{
	unsigned long lo = gap_floor(near), hi = near + REACH;
	unsigned long need = XP_UAREA_SIZE + 2 * PAGE_SIZE, below = 0, above = 0, start;
	unsigned long prev = max(lo, (unsigned long)SZ_16M);	/* far above mmap_min_addr */
	unsigned long heap_lo = mm->start_brk, heap_hi = mm->start_brk + room;
	struct vm_area_struct *vma;

	hi = min(hi, TASK_SIZE_MAX - PAGE_SIZE);
	prev = PAGE_ALIGN(prev);
	if (mmap_read_lock_killable(mm))
		return -EINTR;
	for (vma = find_vma(mm, prev); ; vma = find_vma(mm, prev)) {
		unsigned long end = vma ? min(vma->vm_start, hi) : hi;

		if (end > prev && end - prev >= need && end <= near)
			below = end - PAGE_SIZE - XP_UAREA_SIZE;	/* the top of a gap below */
		/*
		 * Above: the first gap, past the heap's room if it reaches
		 * into it (a static program's heap is just above its text).
		 */
		start = prev + need > heap_lo && prev < heap_hi ? heap_hi : prev;
		if (!above && prev >= near && end > start && end - start >= need)
			above = start + PAGE_SIZE;
		if (!vma || vma->vm_start >= hi)
			break;
		prev = max(prev, vma->vm_end);
	}
	mmap_read_unlock(mm);
	return below ?: above;
}

/* A gap, clear of 1 GiB of heap growth if there is one, else of 64 MiB. */
static unsigned long find_gap(struct mm_struct *mm, unsigned long near)
{
	return gap_near(mm, near, SZ_1G) ?: gap_near(mm, near, SZ_64M);
}

/* A new area's file, opened read-only: a mapping of it can never be made writable. */
static struct file *area_file(void)
{
	struct file *rw, *ro;

	rw = shmem_file_setup(AREA_NAME, XP_UAREA_SIZE, VM_NORESERVE);
	if (IS_ERR(rw))
		return rw;
	ro = dentry_open(&rw->f_path, O_RDONLY, current_cred());
	fput(rw);
	return ro;
}

/*
 * A new area mapped into @mm near @near, not yet listed (xp_uarea_adopt()).
 * Without xp_views_lock: the mapping waits for the process's mmap lock.
 */
struct xp_uarea *xp_uarea_map(struct mm_struct *mm, unsigned long near,
			      struct netlink_ext_ack *extack)
{
	unsigned long addr = 0, ret = 0;
	struct file *ro;
	struct xp_uarea *a;
	int tries, err;

	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return ERR_PTR(-ENOMEM);
	ro = area_file();
	if (IS_ERR(ro)) {
		kfree(a);
		return ERR_CAST(ro);
	}

	for (tries = 0; tries < 3; tries++) {
		addr = find_gap(mm, near);
		if (!addr) {
			NL_SET_ERR_MSG(extack, "no free address range within 2 GiB of the function "
				       "for its trampoline");
			err = -ENOSPC;
			goto fail;
		}
		ret = IS_ERR_VALUE(addr) ? addr :
		      xp_umap(mm, ro, addr, XP_UAREA_SIZE, PROT_READ | PROT_EXEC,
			      MAP_SHARED | MAP_FIXED_NOREPLACE);
		if (ret != (unsigned long)-EEXIST)
			break;
		/* The process mapped something there meanwhile: look again. */
	}
	if (ret == (unsigned long)-EINTR)
		NL_SET_ERR_MSG(extack, "interrupted while the process held its mmap lock");
	else if (IS_ERR_VALUE(ret) || ret != addr)	/* MAP_FIXED_NOREPLACE: that address or none */
		NL_SET_ERR_MSG(extack, "could not map the trampoline area into the process");
	if (IS_ERR_VALUE(ret) || ret != addr) {
		err = IS_ERR_VALUE(ret) ? (long)ret : -EFAULT;
		goto fail;
	}
	mmgrab(mm);
	a->mm = mm;
	a->file = ro;
	a->va = ret;
	return a;
fail:
	fput(ro);
	kfree(a);
	return ERR_PTR(err);
}

/* @a (xp_uarea_map()'s) joins the list, unused: a later add takes slots in it. */
void xp_uarea_adopt(struct xp_uarea *a)
{
	lockdep_assert_held(&xp_views_lock);
	list_add(&a->node, &xp_uareas);
}

/* Does every slot of @a lie within a rel32's reach of @site? */
static bool reaches(struct xp_uarea *a, unsigned long site)
{
	unsigned long d = site > a->va ? site - a->va : a->va - site;

	return d + XP_UAREA_SIZE < REACH;
}

static struct xp_uarea *with_room(struct mm_struct *mm, unsigned long site, unsigned int len)
{
	struct xp_uarea *a;

	list_for_each_entry(a, &xp_uareas, node)
		if (a->mm == mm && !a->detached && reaches(a, site) &&
		    a->used + len <= XP_UAREA_TRAMP)
			return a;
	return NULL;
}

/* Has @mm an area with room for @len bytes within reach of @site? */
bool xp_uarea_room(struct mm_struct *mm, unsigned long site, unsigned int len)
{
	lockdep_assert_held(&xp_views_lock);
	return with_room(mm, site, ALIGN(len, 16));
}

/*
 * @len bytes for a trampoline in an area of @mm within reach of @site. The
 * areas are mapped beforehand, without the lock (xp_uarea_map()); if none
 * has room now (others took it meanwhile), the caller maps another.
 */
unsigned long xp_uarea_alloc(struct mm_struct *mm, unsigned long site, unsigned int len,
			     struct xp_uarea **ap, struct netlink_ext_ack *extack)
{
	struct xp_uarea *a;
	unsigned long va;

	lockdep_assert_held(&xp_views_lock);
	len = ALIGN(len, 16);
	a = with_room(mm, site, len);
	if (!a) {
		NL_SET_ERR_MSG(extack, "other adds took the trampoline area's room meanwhile: "
			       "try again");
		return -EAGAIN;
	}
	va = a->va + a->used;
	a->used += len;
	a->users++;
	*ap = a;
	return va;
}

/*
 * seccomp (useccomp.c): every system call an area's code makes, "mov
 * $420..422, %eax; syscall" (an event stub's, an event thunk's, the records
 * routines': a full buffer, a miss, three stamp asks), becomes "mov ...;
 * cmp $5, %al" (3c 05): its first byte, one store, so that a thread
 * running it meanwhile runs one whole instruction or the other, and the
 * caller serialises every CPU after. Nothing after those syscalls needs
 * what the kernel would have left: the stubs and thunks pop rax, rcx and
 * r11 back, the records routines' slow paths read none of them, and flags
 * are not kept across a call or a return. What runs is each one's "no one
 * listens" path: no event, no new thunk, a record dropped when the buffer
 * is full, no record where the rseq area is not stamped.
 */
#define MUTE_OP		0x3c	/* cmp $imm8, %al */
#define SITE_LEN	7	/* b8 imm32 0f 05 */

static bool syscall_site(const u8 *p)
{
	return p[0] == 0xb8 && p[5] == 0x0f && p[6] == 0x05 &&
	       get_unaligned_le32(p + 1) - XPROBES_UHOOK_NR <= 2;
}

/* The syscalls in @len bytes of code about to be written; how many. */
static unsigned int mute_code(u8 *b, unsigned int len)
{
	unsigned int i, n = 0;

	for (i = 0; i + SITE_LEN <= len; i++)
		if (syscall_site(b + i)) {
			b[i + 5] = MUTE_OP;
			i += SITE_LEN - 1;
			n++;
		}
	return n;
}

/* @len bytes at @off in an area's @file, read into @buf or written from it. */
static int file_rw(struct file *file, unsigned long off, u8 *buf, unsigned int len, bool write)
{
	struct address_space *mapping = file->f_mapping;

	while (len) {
		unsigned int n = min_t(unsigned int, len, PAGE_SIZE - offset_in_page(off));
		struct page *page;
		u8 *p;

		page = shmem_read_mapping_page_gfp(mapping, off >> PAGE_SHIFT,
						   mapping_gfp_mask(mapping));
		if (IS_ERR(page))
			return PTR_ERR(page);
		p = kmap_local_page(page);
		if (write)
			memcpy(p + offset_in_page(off), buf, n);
		else
			memcpy(buf, p + offset_in_page(off), n);
		kunmap_local(p);
		if (write)
			set_page_dirty_lock(page);
		put_page(page);
		off += n;
		buf += n;
		len -= n;
	}
	return 0;
}

static int area_rw(struct xp_uarea *a, unsigned long off, u8 *buf, unsigned int len, bool write)
{
	return file_rw(a->file, off, buf, len, write);
}

/*
 * The parts of an area that hold code (its tables of addresses do not):
 * what xp_uareas_mute() mutes in place, and a child's copy
 * (xp_uareas_unshare()) in full.
 */
enum { PART_SLOTS, PART_UREC, PART_URET };
static const struct {
	unsigned int off, len;
} area_code[] = {
	[PART_SLOTS] = { 0, XP_UREC_AREA_OFF },			/* trampolines */
	[PART_UREC] = { XP_UREC_AREA_OFF, XP_URT_TGT },		/* records routines */
	[PART_URET] = { XP_URET_AREA_OFF, XP_URET_TABLE },	/* return thunks */
};

/* How much of part @i of @a holds code so far: slots handed out, blocks made. */
static unsigned int part_written(const struct xp_uarea *a, unsigned int i)
{
	switch (i) {
	case PART_SLOTS:
		return a->used;
	case PART_UREC:
		return a->urec ? area_code[i].len : 0;
	default:
		return a->uret ? area_code[i].len : 0;
	}
}

/* The syscalls of @a's code so far, in the part at @off of @len bytes; then all it gets. */
static int mute_range(struct xp_uarea *a, u8 *buf, unsigned long off, unsigned int len)
{
	static const u8 op = MUTE_OP;
	unsigned int i;
	int err;

	if (!len)
		return 0;
	err = area_rw(a, off, buf, len, false);
	for (i = 0; !err && i + SITE_LEN <= len; i++)
		if (syscall_site(buf + i)) {
			err = area_rw(a, off + i + 5, (u8 *)&op, 1, true);
			i += SITE_LEN - 1;
		}
	return err;
}

/* @a's syscalls, in the blocks' code (not their tables of addresses); @buf: XP_UAREA_SIZE */
static int area_mute(struct xp_uarea *a, u8 *buf)
{
	unsigned int i;
	int err = 0;

	a->muted = true;
	for (i = 0; !err && i < ARRAY_SIZE(area_code); i++)
		err = mute_range(a, buf, area_code[i].off, part_written(a, i));
	return err;
}

/*
 * Every area of @mm: its syscalls now, and in any code written into it
 * later (an add that was under way). Under xp_views_lock, which every
 * writer of an area's code holds. The caller serialises the CPUs.
 */
int xp_uareas_mute(struct mm_struct *mm)
{
	struct xp_uarea *a;
	int err = 0;
	u8 *buf;

	lockdep_assert_held(&xp_views_lock);
	buf = vmalloc(XP_UAREA_SIZE);
	if (!buf)
		return -ENOMEM;
	list_for_each_entry(a, &xp_uareas, node) {
		if (a->mm != mm)
			continue;
		err = area_mute(a, buf);
		if (err)
			break;
	}
	vfree(buf);
	return err;
}

int xp_uarea_write(struct xp_uarea *a, unsigned long va, const u8 *buf, unsigned int len)
{
	u8 *muted;
	int err;

	if (!a->muted)
		return area_rw(a, va - a->va, (u8 *)buf, len, true);
	muted = kvmalloc(len, GFP_KERNEL);
	if (!muted)
		return -ENOMEM;
	memcpy(muted, buf, len);
	mute_code(muted, len);
	err = area_rw(a, va - a->va, muted, len, true);
	kvfree(muted);
	return err;
}

/*
 * A child of fork (and its own children) maps its parent's areas: the same
 * file, shared, where its copy of the patched text jumps. Muting them for
 * the child's own seccomp filter or syscall user dispatch would mute the
 * parent's hooks too, and leaving them would kill the child (SIGSYS) at
 * its first hooked call. So the child gets an area of its own in their
 * place: a new file, the old one's bytes with every syscall of its code
 * muted (the same fixed parts xp_uareas_mute() covers: trampolines, the
 * records routines, the return thunks; not their tables), mapped over the
 * old one at the same address (MAP_FIXED: one mmap lock hold, so a thread
 * of the child running there meanwhile finds the same code, a syscall
 * excepted, when it faults back in). Nothing of the module follows that
 * file: the child has no hook of its own there.
 *
 * Areas are told by their file: on the kernel's internal shmem mount (not
 * a tmpfs a process could make files on) and named AREA_NAME (memfds and
 * SysV segments there have other names). A process's own areas (listed
 * with its mm) are left to xp_uareas_mute().
 */
void xp_uareas_init(void)
{
	struct file *f = shmem_file_setup("xprobes-probe", 0, VM_NORESERVE);

	if (!IS_ERR(f)) {
		area_sb = file_inode(f)->i_sb;	/* shm_mnt's: it lives as long as the kernel */
		fput(f);
	}
}

static bool is_area(struct vm_area_struct *vma)
{
	struct file *f = vma->vm_file;

	return f && area_sb && file_inode(f)->i_sb == area_sb &&
	       vma->vm_end - vma->vm_start == XP_UAREA_SIZE && !vma->vm_pgoff &&
	       !strcmp(f->f_path.dentry->d_name.name, AREA_NAME);
}

/*
 * Does @mm map an area (its own or inherited)? In atomic context (the
 * seccomp kprobes): true when its mmap lock is taken, or when it has more
 * than MAPPED_WALK mappings, to look again where one may sleep (the
 * caller's own time: preemption stays off for a bounded walk).
 */
#define MAPPED_WALK	1024	/* vmas looked at with preemption off, at most */

bool xp_uareas_mapped(struct mm_struct *mm)
{
	struct vm_area_struct *vma;
	unsigned int n = 0;
	bool found = false;
	VMA_ITERATOR(vmi, mm, 0);

	if (!area_sb)
		return false;
	/*
	 * With interrupts on only (the kprobes are ftrace's, in a system
	 * call): an unlock that wakes a writer turns them on, on PREEMPT_RT.
	 */
	if (irqs_disabled() || !mmap_read_trylock(mm))
		return true;
	for_each_vma(vmi, vma)
		if (is_area(vma) || ++n > MAPPED_WALK) {
			found = true;	/* or more to look at than is fit here */
			break;
		}
	mmap_read_unlock(mm);
	return found;
}
NOKPROBE_SYMBOL(xp_uareas_mapped);

/* Every syscall in the code of an area's image @buf; how many. */
static unsigned int mute_area(u8 *buf)
{
	unsigned int i, n = 0;

	for (i = 0; i < ARRAY_SIZE(area_code); i++)
		n += mute_code(buf + area_code[i].off, area_code[i].len);
	return n;
}

/* @len bytes at @off of an area's @file into @buf: a hole reads as zeros, not filled. */
static int area_read(struct file *file, unsigned long off, u8 *buf, unsigned int len)
{
	loff_t pos = off;
	ssize_t n = kernel_read(file, buf + off, len, &pos);

	return n == len ? 0 : n < 0 ? n : -EIO;
}

/*
 * @old (an area's file) into @buf (zeroed). A listed area's parts as
 * written, under xp_views_lock, which its writers hold, but for the
 * records block's hash, which its process's threads fill under the
 * block's lock (urec.c, thunk_get(): the target, then the key): the hash
 * first, then the targets, so that no key in the copy lacks its target.
 * An area no longer listed has no writer. Returns 1 if it is @mm's own
 * area (nothing read), 0, or an error.
 */
static int read_area(struct mm_struct *mm, struct file *old, u8 *buf)
{
	struct xp_uarea *a;
	int err = 0;

	memset(buf, 0, XP_UAREA_SIZE);
	mutex_lock(&xp_views_lock);
	list_for_each_entry(a, &xp_uareas, node)
		if (a->file == old)
			break;
	if (list_entry_is_head(a, &xp_uareas, node)) {
		mutex_unlock(&xp_views_lock);
		return area_read(old, 0, buf, XP_UAREA_SIZE);	/* its area went */
	}
	if (a->mm == mm) {
		mutex_unlock(&xp_views_lock);
		return 1;	/* the module writes it: xp_uareas_mute()'s */
	}
	err = area_read(old, 0, buf, a->used);
	if (!err && a->urec) {
		err = area_read(old, XP_UREC_AREA_OFF + XP_URT_HASH, buf,
				XP_UREC_BLOCK - XP_URT_HASH);
		smp_rmb();	/* the keys, then their targets */
		if (!err)
			err = area_read(old, XP_UREC_AREA_OFF, buf, XP_URT_HASH);
	}
	if (!err && a->uret)
		err = area_read(old, XP_URET_AREA_OFF, buf, XP_URET_BLOCK);
	mutex_unlock(&xp_views_lock);
	return err;
}

/* @buf into @f, but for its pages of zeros (a hole reads as zeros). */
static int write_area(struct file *f, u8 *buf)
{
	unsigned long off;
	int err = 0;

	for (off = 0; !err && off < XP_UAREA_SIZE; off += PAGE_SIZE)
		if (memchr_inv(buf + off, 0, PAGE_SIZE))
			err = file_rw(f, off, buf + off, PAGE_SIZE, true);
	return err;
}

static bool still_mapped(struct mm_struct *mm, unsigned long va, struct file *file)
{
	struct vm_area_struct *vma;
	bool there;

	if (mmap_read_lock_killable(mm))
		return false;
	vma = vma_lookup(mm, va);
	there = vma && vma->vm_start == va && vma->vm_file == file && is_area(vma);
	mmap_read_unlock(mm);
	return there;
}

/*
 * One area of @mm at @va, @old: unless it is its own, its own copy, muted.
 * Returns 1 if it mapped one.
 */
static int unshare_one(struct mm_struct *mm, unsigned long va, struct file *old, u8 *buf)
{
	struct file *f;
	unsigned long ret;
	int err;

	err = read_area(mm, old, buf);
	if (err)
		return err == 1 ? 0 : err;
	if (!mute_area(buf))
		return 0;	/* muted already (its parent sealed), or never made one */
	f = area_file();
	if (IS_ERR(f))
		return PTR_ERR(f);
	err = write_area(f, buf);
	/*
	 * Still there? (A thread that maps over it between this look and
	 * the mmap loses what it mapped: only its own process.)
	 */
	if (!err && !still_mapped(mm, va, old))
		err = -EAGAIN;
	ret = err ? 0 : vm_mmap(f, va, XP_UAREA_SIZE, PROT_READ | PROT_EXEC,
				MAP_SHARED | MAP_FIXED, 0);
	fput(f);	/* the mapping holds it */
	if (err)
		return err == -EAGAIN ? 0 : err;
	return IS_ERR_VALUE(ret) ? (long)ret : ret == va ? 1 : -EFAULT;
}

/*
 * Every area current's process maps and did not make: its own copy. In a
 * thread of the process (the seal's task work), without xp_views_lock.
 * Returns how many it mapped, or an error.
 * A thread that maps or unmaps there meanwhile can only hurt itself; so
 * can a process with more than UNSHARE_MAX areas (each one is 2 MiB
 * within 2 GiB of hooked code: a parent hooked across more than 64 GiB
 * of text), whose child keeps the rest shared.
 */
#define UNSHARE_MAX	32
int xp_uareas_unshare(void)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	unsigned int n = 0, i, done = 0;
	struct {
		unsigned long va;
		struct file *file;
	} *found;
	int err = 0;
	u8 *buf;
	VMA_ITERATOR(vmi, mm, 0);

	if (!mm || !area_sb)
		return 0;
	found = kcalloc(UNSHARE_MAX, sizeof(*found), GFP_KERNEL);
	if (!found)
		return -ENOMEM;
	if (mmap_read_lock_killable(mm)) {
		kfree(found);
		return -EINTR;
	}
	for_each_vma(vmi, vma)
		if (is_area(vma) && n < UNSHARE_MAX) {
			found[n].va = vma->vm_start;
			found[n++].file = get_file(vma->vm_file);
		}
	mmap_read_unlock(mm);
	buf = n ? vmalloc(XP_UAREA_SIZE) : NULL;
	if (n && !buf)
		err = -ENOMEM;
	for (i = 0; i < n; i++) {
		int r = err ? 0 : unshare_one(mm, found[i].va, found[i].file, buf);

		if (r < 0)
			err = r;
		else
			done += r;
		fput(found[i].file);
	}
	vfree(buf);
	kfree(found);
	return err ? err : done;
}

/*
 * The hooks of @mm go (all of them, or @only's when it goes alone): its
 * areas make no more return thunks, and every thread of the process gives
 * the thunks on its stack their return addresses back before it runs on
 * in user mode (uunwind.c), so that an unwinder never meets one once no
 * unwinder hook is there to help it. Once per area.
 */
static void areas_detach(struct mm_struct *mm, struct xp_uarea *only)
{
	struct xp_unwind_map *m;
	struct xp_uarea *a;
	unsigned int n = 0;

	lockdep_assert_held(&xp_views_lock);
	list_for_each_entry(a, &xp_uareas, node)
		if (a->mm == mm && !a->detached && (!only || a == only))
			n++;
	if (!n)
		return;
	m = xp_unwind_map_new(mm, n);
	list_for_each_entry(a, &xp_uareas, node) {
		if (a->mm != mm || a->detached || (only && a != only))
			continue;
		a->detached = true;
		xp_unwind_map_add(m, a);
	}
	xp_unwind_map_done(m);
	xp_unwind_detach_queue(m);
}

void xp_uareas_detach(struct mm_struct *mm)
{
	areas_detach(mm, NULL);
}

/*
 * seccomp (useccomp.c): as xp_uareas_detach() (no more thunks), and a map
 * of every area of @mm, those detached before too, whose detach works
 * (xp_unwind_detach_queue()) also step each thread over an area's system
 * call it was about to make. Made before the hooks go, since their areas
 * may go with them (the mappings stay). Returns the map, or NULL.
 */
struct xp_unwind_map *xp_uareas_seal(struct mm_struct *mm)
{
	struct xp_unwind_map *m;
	struct xp_uarea *a;
	unsigned int n = 0;

	lockdep_assert_held(&xp_views_lock);
	list_for_each_entry(a, &xp_uareas, node)
		if (a->mm == mm)
			n++;
	if (!n)
		return NULL;
	m = xp_unwind_map_new(mm, n);
	list_for_each_entry(a, &xp_uareas, node) {
		if (a->mm != mm)
			continue;
		xp_unwind_map_syscalls(m, a->va);
		if (a->detached)
			continue;
		a->detached = true;
		xp_unwind_map_add(m, a);
	}
	xp_unwind_map_done(m);
	return m;
}

/*
 * The module lets go of @a (no hook uses it; at rmmod, every area): its
 * code is muted first, as the seccomp seal mutes it. Processes keep the
 * mapping, and may still run it: a child of fork whose text jumps there,
 * a thread that returns through a thunk later. Nothing listens any more,
 * and a filter the process installs later (with no module to seal it)
 * must find no system call there. A store of one byte each: a CPU runs
 * the one instruction or the other, and either is right now. Without
 * memory for the image the area is left as it is, as before 2026-12-01.
 */
static void area_free(struct xp_uarea *a)
{
	u8 *buf = a->muted ? NULL : vmalloc(XP_UAREA_SIZE);
	int err;

	if (buf) {
		err = area_mute(a, buf);
		if (err)
			pr_warn_ratelimited("a trampoline area let go keeps its system calls (%d)\n",
					    err);
		vfree(buf);
	}
	areas_detach(a->mm, a);
	xp_urets_free(a);
	xp_urec_block_free(a);
	list_del(&a->node);
	fput(a->file);		/* the process's mapping keeps the pages */
	mmdrop(a->mm);
	kfree(a);
}

/* Let go of every area no hook uses; the processes keep their mappings. */
void xp_uareas_release_unused(void)
{
	struct xp_uarea *a, *n;

	lockdep_assert_held(&xp_views_lock);
	list_for_each_entry_safe(a, n, &xp_uareas, node)
		if (!a->users)
			area_free(a);
}

/*
 * A deleted hook's slot, kept so that the same site hooked again reuses it
 * instead of taking a new one: its bytes are the same, so a thread still
 * inside it is not disturbed. Past XP_URETIRED_MAX, the slot is left unused.
 */
void xp_uarea_retire(struct xp_uarea *a, unsigned long site, unsigned long va,
		     const u8 *code, unsigned int len)
{
	struct xp_uretired *r;

	a->users--;
	if (a->nr_retired == XP_URETIRED_MAX || !len || len > XP_USLOT_MAX)
		return;
	r = &a->retired[a->nr_retired++];
	r->site = site;
	r->va = va;
	r->len = len;
	memcpy(r->code, code, len);
}

/* A retired slot of @mm for @site holding exactly @code (built for its va), taken. */
bool xp_uarea_reuse(struct mm_struct *mm, unsigned long site,
		    int (*build)(void *arg, struct xp_uarea *a, unsigned long va, u8 *code), void *arg,
		    struct xp_uarea **ap, unsigned long *vap)
{
	u8 code[XP_USLOT_MAX];
	struct xp_uarea *a;
	unsigned int i;
	int len;

	lockdep_assert_held(&xp_views_lock);
	list_for_each_entry(a, &xp_uareas, node) {
		if (a->mm != mm || a->detached)
			continue;
		for (i = 0; i < a->nr_retired; i++) {
			struct xp_uretired *r = &a->retired[i];

			if (r->site != site)
				continue;
			len = build(arg, a, r->va, code);
			if (len != r->len || memcmp(code, r->code, len))
				continue;
			*ap = a;
			*vap = r->va;
			a->users++;
			a->retired[i] = a->retired[--a->nr_retired];
			return true;
		}
	}
	return false;
}

#ifdef XPROBES_KUNIT
#include "uarea_kunit.c"
#endif
