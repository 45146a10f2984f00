// SPDX-License-Identifier: GPL-2.0
/*
 * Call and jump hooks: a hook whose copy carries "jmp <its entry>" instead
 * of an int3, so a hit costs two jumps and a register save instead of an
 * exception, and finds its hook by the entry it came through.
 *
 * Two kinds, by what the jump's 5 bytes displace:
 * - call: one instruction of 5 bytes or more (the name is from when such a
 *   hook was a call into the module). No instruction boundary lies inside
 *   the 5 bytes, so nothing can land or be preempted inside them, and the
 *   kernel never writes inside them without first writing an int3 on their
 *   first byte and serialising every CPU (every runtime patcher follows that
 *   protocol at instruction starts). The int3 protocol alone places and
 *   removes such a hook.
 * - jump: several whole instructions (a function body's 1-byte push and
 *   what follows), allowed by cover.c: no branch lands inside them. A task
 *   may still be preempted, or an interrupt taken, between two of them, and
 *   would resume in the middle of the jump. As optimized kprobes do, the
 *   hook is first armed as an int3 whose handler runs all the covered
 *   instructions out of line (so nobody enters them any more), then an
 *   RCU-tasks grace period lets every task preempted inside leave, and
 *   only then the jump goes in (optimize_jumps(), in the background).
 * The jump's bytes may cross into the next page (the hook then holds that
 * page's copy too, hook.c): its tail is written in both copies, as
 * text_poke_bp() writes an instruction across a page boundary.
 * Both go in as text_poke_bp() writes an instruction: with the int3 in place,
 * the displacement behind it, every CPU serialises, then the opcode replaces
 * the int3. Going back is the reverse, and needs no wait: while the jump was
 * there, nobody executed the bytes behind it.
 *
 * A hit (jump_entry.S, xp_jump_handler()):
 * - a task running on its own mm (current->mm set, and the mm the CPU has
 *   loaded): its CR3 is that mm's and stays so whatever happens to the
 *   task, preemption and migration included; the handler fires with
 *   interrupts as they were and sends it to the slot (view-private code)
 *   with interrupts still as they were.
 * - anything else (a lazy-TLB kernel thread or the idle task on the view's
 *   CR3, an exiting task, a task in exec between exec_mmap() setting its
 *   new mm and loading it): a TLB-flush IPI may switch its CR3 to init_mm at
 *   any instruction, and a preempted kernel thread resumes on whatever mm is
 *   loaded, where the view's slots do not exist. The handler turns
 *   interrupts off first and checks the CR3 it finds: still the view's, it
 *   goes to the slot with interrupts off until the slot's sti; otherwise
 *   nothing of the hooked instructions has run, and it goes back to the
 *   hook's address to run what those tables have there.
 * So only the traced process's own tasks may be anywhere in our code with
 * interrupts on; taking a hook away waits for them (retire_hook_tasks() in hook.c,
 * xp_calls_quiesce() at view teardown).
 *
 * Locking: placing and removing run under xp_views_lock, every write to a
 * copy under text_mutex (coherence.c applies kernel writes under it too);
 * xp_jhooks[] is written under xp_views_lock and read by the handler with
 * preemption or interrupts off; an entry is reused only after every task
 * and CPU that could be on its way through it has passed (RCU-tasks + RCU).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/idr.h>
#include <linux/jump_label.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/rcupdate_wait.h>
#include <linux/irqflags.h>
#include <linux/sched.h>
#include <linux/workqueue.h>
#include <asm/text-patching.h>
#include <asm/tlbflush.h>
#include "xprobes.h"
#include "cover.h"
#include "jump_entry.h"
#include "fire.h"

extern const u8 xp_jentries[];

/*
 * Jump hooks over several instructions can be turned off at load
 * (jump_hooks=0): every hook on an instruction shorter than the jump is then
 * an int3, as before this kind existed.
 */
bool xp_jump_hooks = true;
module_param_named(jump_hooks, xp_jump_hooks, bool, 0444);
MODULE_PARM_DESC(jump_hooks, "0: hooks on instructions shorter than 5 bytes stay int3s instead of jumps over several instructions");

/*
 * And every hook can stay an int3 (call_hooks=0), as kprobes' can with
 * debug.kprobes-optimization=0: to compare the costs, as a way out should
 * a jump misbehave, and to run every handler on the trap path, which a
 * view otherwise only takes while a jump goes in or out (selftest 28).
 */
static bool xp_call_hooks = true;
module_param_named(call_hooks, xp_call_hooks, bool, 0444);
MODULE_PARM_DESC(call_hooks, "0: every kernel hook stays an int3 (no call or jump hooks)");

/*
 * kprobes' table, under its mutex (kernel/kprobes.c). A kprobe on an
 * instruction a jump covers would take its int3 there, run that one
 * instruction out of line and resume behind it, inside our jump's bytes
 * (and one just before it, optimized: xp_kprobe_reaches()): a jump goes
 * live only where no kprobe is registered that would reach it
 * (optimize_jumps(), xp_call_arm()), and a kprobe registered later takes
 * the jump apart before it enters kprobes' table and again before it
 * writes its int3 (xp_jumps_yield(), readers.c).
 */
static struct mutex *xp_kprobe_mutex;
static struct kprobe *(*xp_get_kprobe)(void *addr);

/* The jump-label table (branches that are NOPs now and jumps later). */
static const struct jump_entry *xp_jt_start, *xp_jt_stop;

static struct xp_hook *xp_jhooks[XP_NR_JENTRIES];	/* the hook each entry serves */
static DEFINE_IDA(xp_jentry_ids);
static bool xp_jentries_ok;

unsigned long xp_jentry_addr(int n)
{
	return (unsigned long)xp_jentries + (unsigned long)n * XP_JENTRY_SIZE;
}

/* rel32 of a jmp at @addr to the entry of @h (or to where a guard's jump goes) */
static s64 entry_rel(struct xp_hook *h)
{
	unsigned long to = h->redirect ?: xp_jentry_addr(h->jentry);

	return (s64)to - (s64)(h->addr + XP_JUMP_SIZE);
}

/* The jump-label table, or NULLs (tracepoint hooks find their sites in it). */
void xp_jump_table(const struct jump_entry **start, const struct jump_entry **stop)
{
	*start = xp_jt_start;
	*stop = xp_jt_stop;
}

/* Every entry is "push $n; jmp": check the pool once, at load. */
void xp_jump_init(void)
{
	int n;

	for (n = 0; n < XP_NR_JENTRIES; n++) {
		const u8 *p = (const u8 *)xp_jentry_addr(n);
		u32 imm;
		bool ok;

		memcpy(&imm, p + 1, sizeof(imm));
		ok = n < 128 ? p[0] == 0x6a && p[1] == n : p[0] == 0x68 && imm == n;

		if (!ok) {
			pr_warn("the jump-hook entry pool is not laid out as expected: every hook stays an int3\n");
			return;
		}
	}
	xp_jentries_ok = true;
	xp_kprobe_mutex = (struct mutex *)xp_sym_lookup("kprobe_mutex", NULL);
	xp_get_kprobe = (void *)xp_sym_lookup("get_kprobe", NULL);
	if (!xp_kprobe_mutex || !xp_get_kprobe)
		pr_warn("cannot find kprobes' table: hooks stay int3s\n");
	xp_jt_start = (const struct jump_entry *)xp_sym_lookup("__start___jump_table", NULL);
	xp_jt_stop = (const struct jump_entry *)xp_sym_lookup("__stop___jump_table", NULL);
	if (!xp_jt_start || xp_jt_stop <= xp_jt_start) {
		pr_warn("cannot find the jump-label table: hooks on short instructions stay int3s\n");
		xp_jt_start = xp_jt_stop = NULL;
	}
}

/*
 * A copy of [@start, @start + @size) as the kernel was built: the shared
 * text with the bytes other kprobes replaced put back (an armed probe's
 * int3: its saved opcode; an optimized probe's jump: the four bytes its
 * backup holds), as kprobes' recover_probed_instruction() does before it
 * decodes (it is not exported). Decoded as it is, someone's int3 or jump
 * misaligns what follows: branches that are not there, and missed ones
 * that are. Read under kprobe_mutex (no probe comes, goes or is optimized)
 * and text_mutex (no text_poke_bp() is half done). Returns a buffer to
 * kvfree(), or NULL.
 */
u8 *xp_text_recovered(unsigned long start, unsigned long size)
{
	unsigned long i;
	u8 *buf;

	if (!xp_get_kprobe || !size)
		return NULL;
	buf = kvmalloc(size, GFP_KERNEL);
	if (!buf)
		return NULL;
	mutex_lock(xp_kprobe_mutex);
	mutex_lock(xp_k.text_mutex);
	xp_text_read(buf, start, size);	/* a module's text is contiguous only per page */
	for (i = 0; i < size; i++) {
		u8 now = *(u8 *)xp_text(start + i);
		struct kprobe *p;

		if (now != INT3_INSN_OPCODE && now != JMP32_INSN_OPCODE)
			continue;
		p = xp_get_kprobe((void *)(start + i));
		if (!p || (p->flags & KPROBE_FLAG_FTRACE))
			continue;
		buf[i] = p->opcode;
#ifdef CONFIG_OPTPROBES
		if ((p->flags & KPROBE_FLAG_OPTIMIZED) && now == JMP32_INSN_OPCODE &&
		    p->opcode != JMP32_INSN_OPCODE) {
			struct optimized_kprobe *op = container_of(p, struct optimized_kprobe, kp);

			memcpy(buf + i + 1, op->optinsn.copied_insn,
			       min_t(unsigned long, DISP32_SIZE, size - i - 1));
		}
#endif
	}
	mutex_unlock(xp_k.text_mutex);
	mutex_unlock(xp_kprobe_mutex);
	return buf;
}

/*
 * Branches from outside a function into (@lo, @hi) of it: the decoder sees
 * the function's own only. Two more kinds exist. A jump label's site is a
 * NOP until its key flips, then "jmp target": its entry in __jump_table
 * names the target, which may be anywhere.
 */
static const char *label_into(unsigned long lo, unsigned long hi)
{
	const struct jump_entry *e;

	if (!xp_jt_start)
		return "the jump-label table was not found";
	for (e = xp_jt_start; e < xp_jt_stop; e++) {
		unsigned long t = jump_entry_target(e);

		if (t > lo && t < hi)
			return "a jump label's target lands inside the covered bytes";
	}
	/* In a module's text, its own table (views/modspace.c). */
	if (xp_in_modspace(lo) && xp_module_label_into(lo, hi))
		return "a jump label's target lands inside the covered bytes";
	return NULL;
}

/*
 * And GCC moves a function's unlikely code into a function of its own,
 * NAME.cold, which jumps back into NAME's body (a jump in NAME.cold has
 * NAME's jumps to fear as well). @name is the function's, [@fstart,
 * @fstart + @fsize) its text. kprobes finds the first symbol of a name:
 * two static functions may share one, and with it the name of their cold
 * parts. The one found must branch into the function to be its own; if it
 * does not, whose it is cannot be told, and the jump is refused.
 */
static const char *cold_into(const char *name, unsigned long fstart, unsigned long fsize,
			     unsigned long lo, unsigned long hi)
{
	unsigned long start, size;
	const char *why = NULL;
	size_t n = strlen(name);
	char *other;
	u8 *buf;
	int at;

	other = kmalloc(n + sizeof(".cold"), GFP_KERNEL);
	if (!other)
		return "out of memory";
	if (n > 5 && !strcmp(name + n - 5, ".cold"))
		strscpy(other, name, n - 4);
	else
		sprintf(other, "%s.cold", name);
	if (xp_sym_resolve(other, &start, &size) || !size ||
	    (!xp_is_core_text(start, size) && !xp_is_module_text(start, size)))
		goto out;	/* no cold part */
	buf = xp_text_recovered(start, size);
	if (!buf) {
		why = "the function's cold part could not be read";
		goto out;
	}
	at = xp_branch_into(buf, start, size, lo, hi);
	if (at == -2)
		why = "the function's cold part does not decode: its branch targets are unknown";
	else if (at >= 0)
		why = "a branch in the function's cold part lands inside the covered bytes";
	else if (xp_branch_into(buf, start, size, fstart - 1, fstart + fsize) < 0)
		why = "a cold part of the function's name does not branch into it: "
		      "another function's of the same name, or a branch unseen";
	kvfree(buf);
out:
	kfree(other);
	return why;
}

/* The ways into (@lo, @hi) of @h's function, [@start, @start + @size), from outside it. */
static const char *branch_from_outside(struct xp_hook *h, unsigned long start, unsigned long size,
				       unsigned long lo, unsigned long hi)
{
	const char *why = label_into(lo, hi) ?: cold_into(h->sym, start, size, lo, hi);
	unsigned long off;
	char *name;

	if (why)
		return why;
	name = kmalloc(KSYM_NAME_LEN, GFP_KERNEL);
	if (!name)
		return "out of memory";
	/* Under the name kallsyms gives it, if @h was placed by an alias's. */
	if (!xp_sym_name(start, name, KSYM_NAME_LEN, &off)) {
		if (h->mod)	/* the module's own alias, not another's */
			why = xp_module_qualify(name, KSYM_NAME_LEN, start);
		if (!why && strcmp(name, h->sym))
			why = cold_into(name, start, size, lo, hi);
	}
	kfree(name);
	return why;
}

/*
 * Can @h become a call or a jump hook, and over how many bytes? Decided
 * once, when it is added: sets ->cover and ->ninsn (1 and the instruction's
 * length when it stays an int3). @func is the function as built
 * (xp_text_recovered(): @size bytes at @start); @why says why a jump is
 * not possible.
 */
bool xp_call_possible(struct xp_hook *h, u32 flags, const u8 *func, unsigned long start,
		      unsigned long size, const char **why)
{
	struct xp_cover c;

	h->cover = h->insn.len;
	h->ninsn = 1;
	*why = NULL;
	if (flags & XPROBES_F_TRAP || !xp_jentries_ok)
		return false;
	if (!xp_call_hooks) {
		*why = "every hook is an int3 (module parameter call_hooks)";
		return false;
	}
	if (h->insn.kind == XP_INSN_RET || h->insn.kind == XP_INSN_REFUSE)
		return false;
	if (!xp_get_kprobe || !xp_kprobes_guarded()) {
		*why = "kprobes' table was not found, so kprobes could not be kept off a jump";
		return false;
	}
	if (h->insn.len >= XP_JUMP_SIZE)
		return true;
	if (!xp_jump_hooks) {
		*why = "jump hooks over several instructions are off (module parameter jump_hooks)";
		return false;
	}
	if (!func) {
		*why = "the function's text could not be read";
		return false;
	}
	if (xp_cover_decide(func, start, size, h->addr - start, &xp_k.thunks, &c)) {
		*why = c.why;
		return false;
	}
	if (memcmp(h->orig, func + (h->addr - start), c.bytes)) {
		*why = "a kprobe is on an instruction the jump would cover";
		return false;
	}
	*why = branch_from_outside(h, start, size, h->addr, h->addr + c.bytes);
	if (*why)
		return false;
	h->cover = c.bytes;
	h->ninsn = c.ninsn;
	return true;
}

/* Take an entry for @h (under xp_views_lock); false if all are in use. */
bool xp_jentry_get(struct xp_hook *h)
{
	int n = ida_alloc_max(&xp_jentry_ids, XP_NR_JENTRIES - 1, GFP_KERNEL);

	if (n < 0)
		return false;
	h->jentry = n;
	h->view_pgd = h->view->new_pgd.pgd;	/* raw, as xp_pgd_slot_is() compares it */
	h->hit_ip = h->addr + INT3_INSN_SIZE;
	WRITE_ONCE(xp_jhooks[n], h);
	return true;
}

/*
 * Write the 4 bytes behind the hook's first byte in the copies, from @src:
 * where the jump crosses a page boundary, its last bytes are in the copy of
 * the next page (xp_hook_byte()). Under text_mutex; a CPU may fetch them
 * only once every CPU has serialised after the write.
 */
static void write_tail(struct xp_hook *h, const u8 *src)
{
	unsigned int i;

	lockdep_assert_held(xp_k.text_mutex);
	for (i = 1; i < XP_JUMP_SIZE; i++)
		*xp_hook_byte(h, i) = src[i - 1];
}

/*
 * The hook is armed as a trap (whose handler runs everything the jump will
 * cover) and has its slot and entry: make it a jump. Under xp_views_lock.
 * A jump hook (several instructions) only once an RCU-tasks grace period has
 * passed since its int3 went in (optimize_jumps()). If kernel patching
 * displaces the instruction meanwhile, it stays what the kernel made of it
 * (coherence.c).
 */
static void arm_jump(struct xp_hook *h)
{
	s32 rel = (s32)entry_rel(h);
	u8 *c = xp_hook_copy(h);

	lockdep_assert_held(&xp_views_lock);
	mutex_lock(xp_k.text_mutex);
	if (READ_ONCE(h->broken)) {
		mutex_unlock(xp_k.text_mutex);
		return;
	}
	/* Behind the int3: nothing executes these bytes. */
	write_tail(h, (const u8 *)&rel);
	h->tail_ours = true;
	mutex_unlock(xp_k.text_mutex);
	xp_sync_cores();

	mutex_lock(xp_k.text_mutex);
	if (!READ_ONCE(h->broken) && c[0] == INT3_INSN_OPCODE) {
		WRITE_ONCE(h->mode, XP_HOOK_CALL);	/* before any CPU can take the jump */
		h->view->jumped = true;
		h->went_live = true;
		smp_wmb();
		WRITE_ONCE(c[0], JMP32_INSN_OPCODE);
	}
	mutex_unlock(xp_k.text_mutex);
	xp_sync_cores();
}

/*
 * Jump hooks wait, as armed traps, for the optimizer: tasks preempted
 * between two covered instructions before the int3 went in must be out
 * before the jump's bytes land on them, and nobody new comes in (the trap
 * runs the covered bytes out of line). One RCU-tasks grace period serves
 * every hook armed before it began (xp_opt_seq), as kprobes' optimizer
 * batches its probes; HOOK_ADD does not wait for it.
 */
static u64 xp_opt_seq;		/* under xp_views_lock */
static void optimize_jumps(struct work_struct *work);
static DECLARE_WORK(xp_optimizer, optimize_jumps);

/*
 * The addresses of the instructions @h covers, decoded from ->orig (they
 * decoded when it was placed): returns how many, at most XP_COVER_INSNS, or
 * -EINVAL if one does not decode or there are more.
 */
int xp_cover_starts(const struct xp_hook *h, unsigned long *starts)
{
	unsigned int pos = 0;
	int n = 0;

	while (pos < h->cover && n < XP_COVER_INSNS) {
		struct xp_insn insn;

		if (xp_insn_decode(&insn, h->orig + pos, XP_INSN_MAX))
			return -EINVAL;
		starts[n++] = h->addr + pos;
		pos += insn.len;
	}
	return pos < h->cover ? -EINVAL : n;	/* cover.c allows no more */
}

/*
 * Would a kprobe at @addr run into @h's live jump? Its int3 on the jump's
 * first byte would be followed by our displacement (kprobes resumes behind
 * the one instruction it copied, which for a call hook is ours, and the
 * int3 protocol would leave our tail behind it: coherence.c); its int3 on a
 * covered instruction would resume inside the jump. And kprobes marks a
 * probe optimized as soon as it queues it, before its own jump is written:
 * from then on an int3 hit there runs the instructions that start in
 * [@addr, @addr + 5) from a detour buffer and comes back behind the last of
 * them, which, for a probe up to 4 bytes before a jump over several
 * instructions, can be inside the covered bytes.
 */
bool xp_kprobe_reaches(const struct xp_hook *h, unsigned long addr)
{
	if (h->ninsn == 1)	/* a call hook: only its instruction's start is a boundary */
		return addr == h->addr;
	return addr + XP_JUMP_SIZE > h->addr && addr < h->addr + h->cover;
}
NOKPROBE_SYMBOL(xp_kprobe_reaches);

/* Is a kprobe registered where it would reach @h (xp_kprobe_reaches())? Under kprobe_mutex. */
static bool kprobe_near(struct xp_hook *h)
{
	unsigned long a;

	lockdep_assert_held(xp_kprobe_mutex);
	for (a = h->addr - (h->ninsn > 1 ? XP_JUMP_SIZE - 1 : 0); a < h->addr + h->cover; a++)
		if (xp_kprobe_reaches(h, a) && xp_get_kprobe((void *)a))
			return true;
	return false;
}

static void optimize_jumps(struct work_struct *work)
{
	bool again = false;
	struct xp_view *v;
	struct xp_hook *h;
	u64 seq;

	mutex_lock(&xp_views_lock);
	seq = xp_opt_seq++;
	mutex_unlock(&xp_views_lock);
	synchronize_rcu_tasks();
	mutex_lock(&xp_views_lock);
	/*
	 * kprobes registers and arms under its mutex, and takes our jumps
	 * apart (xp_jumps_yield()) as it prepares and as it arms: a kprobe is
	 * either in its table here, or registered after the jump, which it
	 * then takes apart.
	 */
	mutex_lock(xp_kprobe_mutex);
	xp_for_each_open_view(v) {	/* a closing one is disarmed for good */
		list_for_each_entry(h, &v->hook_list, vnode) {
			if (!h->jump_pending)
				continue;
			if (h->pending_seq > seq) {
				again = true;
				continue;
			}
			h->jump_pending = false;
			if (kprobe_near(h)) {
				WRITE_ONCE(h->why_int3,
					   "a kprobe is registered on or just before the instructions the jump would cover");
				continue;
			}
			if (!xp_guard_live(v)) {
				WRITE_ONCE(h->why_int3,
					   "the view's guard against kernel threads on its page tables was displaced");
				continue;
			}
			arm_jump(h);
		}
	}
	mutex_unlock(xp_kprobe_mutex);
	mutex_unlock(&xp_views_lock);
	if (again)
		schedule_work(&xp_optimizer);
}

/* Wait for the optimizer pass under way or queued (KUnit). */
void xp_jumps_flush(void)
{
	flush_work(&xp_optimizer);
}

/* Module exit, before the views go: no optimizer pass runs any more. */
void xp_jumps_stop(void)
{
	cancel_work_sync(&xp_optimizer);
}

/*
 * @h is armed as a trap: make it a call hook now, or a jump hook soon. A
 * call hook goes in under kprobe_mutex, as the optimizer's jumps do: a
 * kprobe on its instruction is either in kprobes' table already (it stays
 * an int3), or comes later and takes the jump apart (xp_jumps_yield()).
 */
void xp_call_arm(struct xp_hook *h)
{
	lockdep_assert_held(&xp_views_lock);
	if (h->ninsn == 1) {
		mutex_lock(xp_kprobe_mutex);
		if (kprobe_near(h))
			WRITE_ONCE(h->why_int3, "a kprobe is registered on the instruction");
		else
			arm_jump(h);
		mutex_unlock(xp_kprobe_mutex);
		return;
	}
	h->jump_pending = true;
	h->pending_seq = xp_opt_seq;
	schedule_work(&xp_optimizer);
}

/* Put the kernel's bytes back behind the hook's first byte. Under text_mutex. */
void xp_call_restore_tail(struct xp_hook *h)
{
	u8 tail[XP_JUMP_SIZE - 1];

	if (!h->tail_ours)
		return;
	xp_text_read(tail, h->addr + 1, sizeof(tail));	/* may cross into a module's next page */
	write_tail(h, tail);
	h->tail_ours = false;
}

/*
 * Which hooks of @v a disarm takes: @only, or every one but @skip (a guard
 * goes after the jumps it protects).
 */
static bool disarm_takes(struct xp_hook *h, struct xp_hook *only, struct xp_hook *skip)
{
	return only ? h == only : h != skip;
}

/* First half of making jumps traps again: int3 over every live jump of @v. */
static bool calls_to_int3(struct xp_view *v, struct xp_hook *only, struct xp_hook *skip)
{
	struct xp_hook *h;
	bool any = false;

	mutex_lock(xp_k.text_mutex);
	list_for_each_entry(h, &v->hook_list, vnode) {
		u8 *c;

		if (!disarm_takes(h, only, skip))
			continue;
		c = xp_hook_copy(h);
		if (READ_ONCE(h->mode) == XP_HOOK_CALL && c[0] == JMP32_INSN_OPCODE) {
			WRITE_ONCE(c[0], INT3_INSN_OPCODE);
			any = true;
		}
	}
	mutex_unlock(xp_k.text_mutex);
	return any;
}

static void calls_disarm(struct xp_view *v, struct xp_hook *only, struct xp_hook *skip)
{
	struct xp_hook *h;

	if (calls_to_int3(v, only, skip))
		xp_sync_cores();
	mutex_lock(xp_k.text_mutex);
	list_for_each_entry(h, &v->hook_list, vnode) {
		if (!disarm_takes(h, only, skip))
			continue;
		WRITE_ONCE(h->mode, XP_HOOK_TRAP);
		h->jump_pending = false;
		xp_call_restore_tail(h);
	}
	mutex_unlock(xp_k.text_mutex);
	xp_sync_cores();
}

/*
 * Turn the call and jump hooks of @v (or only @only) back into armed traps.
 * Under xp_views_lock. When it returns, no CPU enters their jumps; tasks
 * already on their way through an entry or a slot finish as before (their
 * slot and entry stay until the hook is retired, hook.c). The view's guard
 * goes last, once no jump over several instructions is left (guard.c).
 */
void xp_calls_disarm(struct xp_view *v, struct xp_hook *only)
{
	lockdep_assert_held(&xp_views_lock);
	calls_disarm(v, only, v->guard);
	if (!only && v->guard)
		calls_disarm(v, v->guard, NULL);
}

/*
 * Must @h go back to an int3 before a kprobe at @addr is prepared or armed? A live
 * jump the kprobe would reach (xp_kprobe_reaches()); and where the kprobe would
 * displace its view's guard, every jump of the view over several
 * instructions (@guard_hit), which may not stay live without it (guard.c).
 */
static bool must_yield(struct xp_hook *h, unsigned long addr, bool guard_hit)
{
	if (READ_ONCE(h->mode) != XP_HOOK_CALL)
		return false;
	return xp_kprobe_reaches(h, addr) || (guard_hit && h->ninsn > 1);
}
NOKPROBE_SYMBOL(must_yield);

/*
 * The int3 protocol backwards over the hooks of every view that must yield
 * (must_yield()): the guards in a second round (@guards), once the jumps
 * they protect are gone. Returns whether any went.
 */
static bool yield_round(unsigned long addr, bool guards)
{
	struct xp_view *v;
	struct xp_hook *h;
	bool any = false;
	int bkt;

	list_for_each_entry_rcu(v, &xp_views, node) {
		bool hit = xp_guard_live(v) && xp_kprobe_reaches(v->guard, addr);

		hash_for_each_rcu(v->hooks, bkt, h, hnode) {
			if ((h == v->guard) != guards || !must_yield(h, addr, hit))
				continue;
			/* An int3 already there may be HOOK_DEL's, not yet serialised. */
			if (xp_hook_copy(h)[0] == JMP32_INSN_OPCODE)
				WRITE_ONCE(xp_hook_copy(h)[0], INT3_INSN_OPCODE);
			any = true;
		}
	}
	if (!any)
		return false;
	xp_sync_cores();
	list_for_each_entry_rcu(v, &xp_views, node) {
		bool hit = xp_guard_live(v) && xp_kprobe_reaches(v->guard, addr);

		hash_for_each_rcu(v->hooks, bkt, h, hnode) {
			if ((h == v->guard) != guards || !must_yield(h, addr, hit))
				continue;
			WRITE_ONCE(h->mode, XP_HOOK_TRAP);
			xp_call_restore_tail(h);
			WRITE_ONCE(h->why_int3, xp_kprobe_reaches(h, addr) ?
				   "a kprobe was registered where it would run into the jump" :
				   "a kprobe was registered on the view's guard against kernel threads");
			pr_notice("a kprobe at %pS: the hook at %pS is an int3 again\n",
				  (void *)addr, (void *)h->addr);
		}
	}
	xp_sync_cores();
	return true;
}
NOKPROBE_SYMBOL(yield_round);

/*
 * kprobes is about to prepare or arm a kprobe at @addr (from the probes on
 * arch_prepare_kprobe() and arch_arm_kprobe(), readers.c: ftrace-based,
 * preemption off, text_mutex held, CPU hotplug off), before it enters
 * kprobes' table and again before its int3 is written: in every view, take
 * apart the live jumps the kprobe would run into (xp_kprobe_reaches()), as
 * xp_calls_disarm() does. Each becomes an int3 whose slot runs every covered instruction,
 * the kernel's bytes behind it; the kprobe's own int3, if it lands on one,
 * then displaces it (coherence.c). A kprobe that would displace a view's
 * guard first takes apart every jump of that view over several
 * instructions, then the guard. Cannot take xp_views_lock (HOOK_ADD takes
 * kprobe_mutex under it): the views and hooks are walked under RCU, and the
 * copies written under text_mutex, as every write to them is.
 */
void xp_jumps_yield(unsigned long addr)
{
	lockdep_assert_held(xp_k.text_mutex);
	if (!READ_ONCE(xp_nr_views))
		return;
	rcu_read_lock();
	yield_round(addr, false);
	yield_round(addr, true);
	rcu_read_unlock();
}
NOKPROBE_SYMBOL(xp_jumps_yield);

/*
 * After xp_calls_disarm() and the removal of the int3s: wait until nothing
 * can be in the view's entries, handler or slots any more, so that they may
 * be reused or unmapped. Tasks of the view may have been preempted anywhere
 * in them with interrupts on (RCU-tasks waits for them); idle tasks and
 * interrupts are only ever there with preemption off (RCU waits for those).
 */
void xp_calls_quiesce(void)
{
	synchronize_rcu_tasks();
	synchronize_rcu();
}

/* Give @h's entry back; only once xp_calls_quiesce() has run since it was disarmed. */
void xp_jentry_put(struct xp_hook *h)
{
	if (h->jentry < 0)
		return;
	WRITE_ONCE(xp_jhooks[h->jentry], NULL);
	ida_free(&xp_jentry_ids, h->jentry);
	h->jentry = -1;
}

/*
 * Called from xp_jump_common with @regs as an int3 at the hook would have
 * left them (but ip) and the number of the entry it came through. Returns
 * where to go on (see the top of the file).
 *
 * No rcu_read_lock(): it is a function a hook may be on (dispatch.c); the
 * hook is read with preemption or interrupts off, and its entry is not
 * reused before both RCU and RCU-tasks have passed. Lockdep is told about
 * the cli of the slow path and about interrupts coming back on (at the
 * slot's sti, or popfq), as the kernel's entry code does.
 */
static noinline notrace unsigned long jump_borrowed(struct pt_regs *regs, unsigned long n)
{
	bool irq_on = regs->flags & X86_EFLAGS_IF;
	unsigned long to;
	struct xp_hook *h;

	h = READ_ONCE(xp_jhooks[n]);
	regs->ip = h->addr + INT3_INSN_SIZE;
	*(unsigned long *)(regs + 1) = regs->ip;	/* the return address unwinders read */
	if (irq_on) {
		raw_local_irq_disable();
		trace_hardirqs_off();
	}
	to = h->addr;
	if (xp_pgd_in_view(__va(read_cr3_pa()), h->view)) {
		xp_hook_fire(h, regs, false);
		to = h->slot_va + (irq_on ? XP_SLOT_SIZE : 0);
		regs->flags &= ~X86_EFLAGS_IF;
	}
	if (irq_on)
		trace_hardirqs_on();
	return to;
}
NOKPROBE_SYMBOL(jump_borrowed);

/*
 * The traced process's own tasks take the fast path; the rest jump_borrowed().
 * Its own: current->mm is set and belongs to the view whose copy is running
 * (the hook's view: each entry serves one hook of one view), so wherever the
 * task is preempted or migrated to, it resumes on tables of that view, where
 * the slot exists. Not current->mm alone: exec_mmap() sets the new mm, turns
 * interrupts on, then loads it, and on PREEMPT_RT the task may be preempted
 * there, still on the old mm's tables; the new mm joins a view only later
 * (its exec tracepoint), so its image entry is not the view's yet.
 *
 * What it reads of the hook beyond xp_hook_fire()'s is kept for it when the
 * hook takes its entry (xp_jentry_get()): the view's image entry and ip.
 *
 * Only xp_jump_common calls it, directly: no ENDBR (__noendbr), one
 * instruction less a hit. An indirect call here would be a #CP under IBT.
 */
__noendbr notrace unsigned long xp_jump_handler(struct pt_regs *regs, unsigned long n)
{
	struct xp_hook *h = READ_ONCE(xp_jhooks[n]);
	struct mm_struct *mm = current->mm;
	unsigned long to;

	/* xp_pgd_in_view() with the kept value: two loads and a compare past "mm set" */
	if (unlikely(!mm || !xp_pgd_slot_is(mm->pgd, h->view_pgd)))
		return jump_borrowed(regs, n);
	/* On its own view's tables, wherever it may resume: interrupts stay as they are. */
	preempt_disable_notrace();
	regs->ip = h->hit_ip;
	*(unsigned long *)(regs + 1) = regs->ip;	/* the return address unwinders read */
	xp_hook_fire(h, regs, xp_in_task_now());
	to = h->slot_va;
	preempt_enable_notrace();
	return to;
}
NOKPROBE_SYMBOL(xp_jump_handler);

/*
 * Module exit, after every view is gone: a task may still be preempted in
 * module text it was sent to, in an entry or at xp_just_return (readers.c),
 * whatever this load did, or in the last instructions of a task work of
 * ours after it said it was done (useccomp.c's seal_work(), uunwind.c's
 * detach works: the exits' polls end on their counts). Wait for every
 * task to pass a voluntary context switch, out of all of them.
 */
void xp_calls_exit(void)
{
	cancel_work_sync(&xp_optimizer);
	synchronize_rcu_tasks();
	rcu_barrier_tasks();	/* retired hooks (hook.c) */
	rcu_barrier();
	ida_destroy(&xp_jentry_ids);
}
