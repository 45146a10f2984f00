// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel symbol resolution without calling non-exported code.
 *
 * kallsyms_lookup_name() is not exported, and calling it through a pointer is
 * unsafe under IBT when its ENDBR has been sealed. Instead we let
 * register_kprobe() resolve the name: it stores the address in kp->addr before
 * its safety checks (kernel/kprobes.c register_kprobe), so this works for data
 * symbols too, for which registration itself fails. kprobes moves an entry
 * probe past ENDBR, so the exact start is confirmed with sprint_symbol()
 * (exported), which also yields the symbol's size.
 *
 * Every question to kprobes (a name, or whether it would probe an address)
 * costs a registration and, to take the probe out again, an RCU grace
 * period: three per HOOK_ADD, most of its time. The answers about core
 * kernel text never change while the kernel runs (where a symbol is, its
 * size; kprobes' blacklist, jump-label, static-call, BUG and ftrace sites
 * and instruction boundaries are fixed at boot), so they are kept: a name's
 * start and size, and kprobes' answer about an address when it is a yes or
 * a refusal for good (-EILSEQ, -EINVAL), not "busy" nor out of memory.
 * Nothing else is (a name not found may be a module's yet to come).
 * Locking: xp_answers_lock, a mutex (all callers may sleep).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hash.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/log2.h>
#include <linux/slab.h>
#include <linux/stringhash.h>
#include <asm/ibt.h>
#include <asm/ftrace.h>
#include "xprobes.h"

/* Parse "name+0xOFF/0xSIZE [mod]" from sprint_symbol(). */
static bool parse_sprint(const char *buf, const char *want, unsigned long *off,
			 unsigned long *size)
{
	const char *plus = strrchr(buf, '+');
	size_t n;

	if (!plus || sscanf(plus, "+%lx/%lx", off, size) != 2)
		return false;
	n = plus - buf;		/* a module's symbol ends in " [MODULE]" */
	return !want || (strlen(want) == n && !strncmp(buf, want, n));
}

#define XP_NAMES	256		/* kept names, hashed */
#define XP_ANSWERS	1024		/* kept answers about addresses, hashed */
static DEFINE_MUTEX(xp_answers_lock);
static struct {
	char name[64];			/* "" if free */
	unsigned long addr, size;
} xp_names[XP_NAMES];
static struct {
	unsigned long addr;		/* 0 if free */
	struct xp_kp_answer ans;
} xp_answers[XP_ANSWERS];

static bool name_kept(const char *name, unsigned long *addrp, unsigned long *size)
{
	unsigned int i = full_name_hash(NULL, name, strlen(name)) % XP_NAMES;
	bool hit;

	mutex_lock(&xp_answers_lock);
	hit = !strcmp(xp_names[i].name, name);
	if (hit) {
		*addrp = xp_names[i].addr;
		if (size)
			*size = xp_names[i].size;
	}
	mutex_unlock(&xp_answers_lock);
	return hit;
}

static void keep_name(const char *name, unsigned long addr, unsigned long size)
{
	unsigned int i = full_name_hash(NULL, name, strlen(name)) % XP_NAMES;

	if (strlen(name) >= sizeof(xp_names[0].name) || !xp_is_core_text(addr, 1))
		return;
	mutex_lock(&xp_answers_lock);
	strscpy(xp_names[i].name, name, sizeof(xp_names[i].name));
	xp_names[i].addr = addr;
	xp_names[i].size = size;
	mutex_unlock(&xp_answers_lock);
}

static bool answer_kept(unsigned long addr, struct xp_kp_answer *ans)
{
	unsigned int i = hash_long(addr, ilog2(XP_ANSWERS));
	bool hit;

	mutex_lock(&xp_answers_lock);
	hit = xp_answers[i].addr == addr;
	if (hit)
		*ans = xp_answers[i].ans;
	mutex_unlock(&xp_answers_lock);
	return hit;
}

static void keep_answer(unsigned long addr, const struct xp_kp_answer *ans)
{
	unsigned int i = hash_long(addr, ilog2(XP_ANSWERS));

	if ((ans->err && ans->err != -EILSEQ && ans->err != -EINVAL) || !xp_is_core_text(addr, 1))
		return;
	mutex_lock(&xp_answers_lock);
	xp_answers[i].addr = addr;
	xp_answers[i].ans = *ans;
	mutex_unlock(&xp_answers_lock);
}

bool xp_sym_at(unsigned long addr, const char *want, unsigned long *off,
	       unsigned long *size)
{
	char *buf = kmalloc(KSYM_SYMBOL_LEN, GFP_KERNEL);
	bool ok;

	if (!buf)
		return false;
	sprint_symbol(buf, addr);
	ok = parse_sprint(buf, want, off, size);
	kfree(buf);
	return ok;
}

int xp_sym_name(unsigned long addr, char *buf, size_t len, unsigned long *off)
{
	char *tmp = kmalloc(KSYM_SYMBOL_LEN, GFP_KERNEL);
	unsigned long size;
	char *plus;

	if (!tmp)
		return -ENOMEM;
	sprint_symbol(tmp, addr);
	plus = strrchr(tmp, '+');
	if (!plus || sscanf(plus, "+%lx/%lx", off, &size) != 2) {
		kfree(tmp);
		return -ENOENT;
	}
	*plus = 0;
	strscpy(buf, tmp, len);
	kfree(tmp);
	return 0;
}

/*
 * Resolve @name to its start and size. -ENOENT: no such symbol; -EINVAL: the
 * symbol exists but its first bytes cannot be read (kprobes reads them to
 * find an ENDBR): freed init text, which PTI kernels unmap
 * (arch/x86/mm/init.c free_kernel_image_pages).
 */
/* What registering @kp (with @err) said about its name: see xp_sym_resolve(). */
static int resolved(const char *name, struct kprobe *kp, int err, unsigned long *addrp,
		    unsigned long *size)
{
	unsigned long addr = (unsigned long)kp->addr, off, sz;
	u32 insn;

	if (!addr)
		return err == -EINVAL ? -EINVAL : -ENOENT;
	if (!xp_sym_at(addr, NULL, &off, &sz))
		return -ENOENT;
	/* Undo kprobes' move of an entry probe past the ENDBR. */
	if (off == 4 && !copy_from_kernel_nofault(&insn, (void *)(addr - 4), sizeof(insn)) &&
	    is_endbr(insn)) {
		addr -= 4;
		off = 0;
	}
	*addrp = addr;
	if (size)
		*size = off ? 0 : sz;
	keep_name(name, addr, off ? 0 : sz);
	return 0;
}

int xp_sym_resolve(const char *name, unsigned long *addrp, unsigned long *size)
{
	struct kprobe kp = { .symbol_name = name, .flags = KPROBE_FLAG_DISABLED };
	int err;

	if (name_kept(name, addrp, size))
		return 0;
	err = register_kprobe(&kp);
	if (!err)
		unregister_kprobe(&kp);
	return resolved(name, &kp, err, addrp, size);
}

/*
 * The kernel's own symbol @name (text or data), never a module's: a module
 * defining a name this kernel lacks must not stand in for it.
 */
unsigned long xp_sym_lookup(const char *name, unsigned long *size)
{
	unsigned long addr;

	if (xp_sym_resolve(name, &addr, size) || (addr >= MODULES_VADDR && addr < MODULES_END))
		return 0;
	return addr;
}

/*
 * xp_sym_lookup() for @n names at once (0s where not found): the probes
 * kprobes accepts are taken out together, one RCU grace period for all
 * instead of one each (most of the module's load time otherwise).
 */
void xp_sym_lookup_many(const char *const *names, int n, unsigned long *addrs,
			unsigned long *sizes)
{
	struct kprobe *kps = kcalloc(n, sizeof(*kps), GFP_KERNEL), **reg;
	int i, nreg = 0, *err;

	reg = kcalloc(n, sizeof(*reg), GFP_KERNEL);
	err = kcalloc(n, sizeof(*err), GFP_KERNEL);
	for (i = 0; i < n; i++) {
		addrs[i] = sizes[i] = 0;
		if (!kps || !reg || !err) {
			addrs[i] = xp_sym_lookup(names[i], &sizes[i]);
			continue;
		}
		kps[i].symbol_name = names[i];
		kps[i].flags = KPROBE_FLAG_DISABLED;
		err[i] = register_kprobe(&kps[i]);
		if (!err[i])
			reg[nreg++] = &kps[i];
	}
	if (nreg)
		unregister_kprobes(reg, nreg);
	for (i = 0; kps && reg && err && i < n; i++)
		if (resolved(names[i], &kps[i], err[i], &addrs[i], &sizes[i]) ||
		    (addrs[i] >= MODULES_VADDR && addrs[i] < MODULES_END))
			addrs[i] = sizes[i] = 0;	/* the kernel's own, as xp_sym_lookup() */
	kfree(kps);
	kfree(reg);
	kfree(err);
}

/*
 * Ask kprobes whether it would probe each of @n (at most XP_KP_ASK_MAX)
 * addresses, by registering a disabled probe at each and removing them
 * together (one RCU grace period). kprobes applies the kernel's own rules
 * (blacklist, instruction boundary, jump-label, static-call and BUG sites)
 * and decodes the instruction with the kernel's decoder.
 */

/*
 * The questions' handler: they are never armed, so it never runs; it tells
 * the registration probe (readers.c) that a probe is only a question.
 */
int xp_kprobe_question(struct kprobe *p, struct pt_regs *regs)
{
	return 0;
}
NOKPROBE_SYMBOL(xp_kprobe_question);

void xp_kprobe_ask(const unsigned long *addrs, struct xp_kp_answer *ans, int n)
{
	struct kprobe *kps, *reg[XP_KP_ASK_MAX];
	int i, nreg = 0;

	n = min(n, XP_KP_ASK_MAX);
	kps = kcalloc(n, sizeof(*kps), GFP_KERNEL);
	for (i = 0; i < n; i++) {
		memset(&ans[i], 0, sizeof(ans[i]));
		if (answer_kept(addrs[i], &ans[i]) || xp_hook_answer(addrs[i], &ans[i]))
			continue;
		if (!kps) {
			ans[i].err = -ENOMEM;
			continue;
		}
		kps[i].addr = (kprobe_opcode_t *)addrs[i];
		kps[i].flags = KPROBE_FLAG_DISABLED;
		kps[i].pre_handler = xp_kprobe_question;
		/* Never armed: it writes nothing (readers.c). */
		ans[i].err = register_kprobe(&kps[i]);
		if (ans[i].err) {
			keep_answer(addrs[i], &ans[i]);
			continue;
		}
		ans[i].flags = kps[i].flags;
		ans[i].size = kps[i].ainsn.size;
		keep_answer(addrs[i], &ans[i]);
		reg[nreg++] = &kps[i];
	}
	if (nreg)
		unregister_kprobes(reg, nreg);
	kfree(kps);
}

/*
 * The first instruction of the function at @start after its ENDBR and its
 * fentry call, with what kprobes says about it. kprobes is asked about the
 * candidate and the address 5 bytes later at once; KPROBE_FLAG_FTRACE tells
 * which of the two the function body starts at.
 */
unsigned long xp_func_body_ask(unsigned long start, struct xp_kp_answer *ans)
{
	struct xp_kp_answer two[2];
	unsigned long addrs[2];
	u32 first;

	xp_text_read(&first, start, sizeof(first));
	addrs[0] = start + (is_endbr(first) ? ENDBR_INSN_SIZE : 0);
	addrs[1] = addrs[0] + MCOUNT_INSN_SIZE;
	xp_kprobe_ask(addrs, two, 2);
	if (!two[0].err && (two[0].flags & KPROBE_FLAG_FTRACE)) {
		*ans = two[1];
		return addrs[1];
	}
	*ans = two[0];
	return addrs[0];
}

unsigned long xp_func_body(unsigned long start)
{
	struct xp_kp_answer ans;

	return xp_func_body_ask(start, &ans);
}
