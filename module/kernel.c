// SPDX-License-Identifier: GPL-2.0
/*
 * What the module learns about the running kernel at load time: the core text
 * range, the text mutex, the exception table, and whether views can work here.
 * Written once in xp_kernel_init(), read-only afterwards.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <linux/moduleparam.h>
#include <linux/version.h>
#include <linux/mutex.h>
#include <linux/pgtable.h>
#include <linux/sched.h>
#include <asm/processor.h>
#include <asm/cpufeature.h>
#include <xen/xen.h>
#include "xprobes.h"

struct xp_kernel xp_k __ro_after_init;

/*
 * The kernel series whose facts the views rely on were verified on, in the
 * VM (docs/views.md, "Kernel facts, per kernel"). Built for any other, the
 * module loads and its checks run, but views stay off unless asked for: a
 * fact that silently changed (a text_poke path, a page-table rule) would
 * not fail a check, it would crash.
 */
static bool unverified;
module_param(unverified, bool, 0444);
MODULE_PARM_DESC(unverified, "allow kernel views on a kernel series xprobes was not verified on (verified: 6.1, 6.12)");

/* An administrator's switch; also how the tests reach the unsupported path. */
static bool views = true;
module_param(views, bool, 0444);
MODULE_PARM_DESC(views, "0: load with kernel views off (trace, metrics and latency then run in fallback mode)");

static bool __init xp_series_verified(void)
{
	/* vermagic makes the running kernel the one built against */
	switch (LINUX_VERSION_CODE >> 8) {
	case KERNEL_VERSION(6, 1, 0) >> 8:
	case KERNEL_VERSION(6, 12, 0) >> 8:
		return true;
	}
	return false;
}

/*
 * Record one reason views cannot work here. Every check runs, so status and
 * the log list all that is missing, not only the first.
 */
void xp_unsupported(const char *why)
{
	static char buf[512];
	size_t n = strlen(buf);

	scnprintf(buf + n, sizeof(buf) - n, "%s%s",
		  n ? "; " : "kernel views do not work here: ", why);
	xp_k.unsupported = buf;
}

static unsigned long __init need(const char *name)
{
	unsigned long a = xp_sym_lookup(name, NULL);

	if (!a)
		pr_err("cannot resolve kernel symbol %s\n", name);
	return a;
}

/*
 * The retpoline thunks: a jump to one is an indirect jump (cover.c), and
 * a hook on one would be hit by the dispatch path's own indirect calls
 * (dispatch.c). One array per kind with a symbol per register in it (the
 * array's own symbol is only as long as its first one: kallsyms sizes a
 * symbol up to the next), r15's last; one range per array, since on 6.12
 * the return thunks lie between the retpoline arrays and the ITS one (a
 * function's ret, patched into a jump to a return thunk, is no indirect
 * jump). None without retpolines.
 */
static void __init find_thunks(void)
{
	static const char *const kinds[] = {
		"__x86_indirect_thunk_", "__x86_indirect_call_thunk_",
		"__x86_indirect_jump_thunk_", "__x86_indirect_its_thunk_",
	};
	char name[48];
	unsigned long a, last, size;
	int i;

	for (i = 0; i < ARRAY_SIZE(kinds); i++) {
		snprintf(name, sizeof(name), "%sarray", kinds[i]);
		a = xp_sym_lookup(name, NULL);
		snprintf(name, sizeof(name), "%sr15", kinds[i]);
		last = xp_sym_lookup(name, &size);
		if (!a || !last || !size || last < a)
			continue;
		xp_k.thunks.r[xp_k.thunks.n].lo = a;
		xp_k.thunks.r[xp_k.thunks.n++].hi = last + size;
	}
}

int __init xp_kernel_init(void)
{
	struct xp_walk_result w;

	xp_k.stext = need("_stext");
	xp_k.etext = need("_etext");
	xp_k.text_mutex = (struct mutex *)need("text_mutex");
	xp_k.ex_start = (void *)need("__start___ex_table");
	xp_k.ex_stop = (void *)need("__stop___ex_table");
	xp_k.init_mm = (struct mm_struct *)need("init_mm");
	if (!xp_k.stext || !xp_k.etext || !xp_k.text_mutex || !xp_k.ex_start || !xp_k.ex_stop ||
	    !xp_k.init_mm)
		return -ENOENT;
	if (xp_k.stext >= xp_k.etext) {
		pr_err("unexpected kernel image layout\n");
		return -EINVAL;
	}
	find_thunks();
	/*
	 * The shared kernel half, from the loading process (nothing is traced
	 * yet): its pgd entry for the image and the image's PMD page. Both are
	 * static after boot (docs/views.md).
	 */
	if (!xp_walk(current->active_mm->pgd, xp_k.stext, &w) && w.pud) {
		xp_k.image_pgd = *pgd_offset_pgd(current->active_mm->pgd, xp_k.stext);
		xp_k.image_pmds = pud_pgtable(*w.pud);
	}
#if defined(CONFIG_MITIGATION_PAGE_TABLE_ISOLATION) || defined(CONFIG_PAGE_TABLE_ISOLATION)
	/*
	 * With PTI, every mm's user pgd shares the kernel's user-mode chain,
	 * where pti_clone_kernel_text() may have put global copies of the
	 * image's entries (pgd_ctor() copies the kernel half of both pgds).
	 */
	if (boot_cpu_has(X86_FEATURE_PTI)) {
		xp_walk(kernel_to_user_pgdp(current->active_mm->pgd), xp_k.stext, &w);
		if (w.pud && pud_present(*w.pud) && !pud_leaf(*w.pud))
			xp_k.user_pmds = pud_pgtable(*w.pud);
	}
#endif
	/* The page-attribute locks (arch/x86/mm/pat/set_memory.c): data symbols. */
	xp_k.pgd_lock = (spinlock_t *)xp_sym_lookup("pgd_lock", NULL);
	xp_k.cpa_lock = (spinlock_t *)xp_sym_lookup("cpa_lock", NULL);

	/* Views need page tables the module may build itself. */
	if (xen_pv_domain())
		xp_unsupported("a Xen PV guest's page tables belong to the hypervisor");
	if (!xp_k.image_pmds)
		xp_unsupported("cannot find the kernel image's page tables");
	if (!xp_k.pgd_lock)
		xp_unsupported("cannot find symbol pgd_lock");
	if (!xp_k.cpa_lock)
		xp_unsupported("cannot find symbol cpa_lock");
	if (pgd_index(xp_k.stext) != PTRS_PER_PGD - 1 ||
	    pud_index(xp_k.stext) != pud_index(xp_k.etext - 1))
		xp_unsupported("unexpected kernel image placement");
	if (!views)
		xp_unsupported("turned off at load (views=0)");
	if (!xp_series_verified() && !unverified) {
		static char msg[128];

		snprintf(msg, sizeof(msg),
			 "not verified on Linux %u.%u (6.1 and 6.12 are); load with unverified=1 to try",
			 LINUX_VERSION_CODE >> 16, (LINUX_VERSION_CODE >> 8) & 0xff);
		xp_unsupported(msg);
	}
	xp_k.l5 = pgtable_l5_enabled();
	/* Sizes only: the log may be readable by users who must not learn the KASLR base. */
	pr_info("kernel text %lu KiB, %d-level paging%s%s\n", (xp_k.etext - xp_k.stext) >> 10,
		xp_k.l5 ? 5 : 4, xp_k.unsupported ? ", views unsupported: " : "",
		xp_k.unsupported ?: "");
	return 0;
}

bool xp_is_core_text(unsigned long addr, size_t len)
{
	return addr >= xp_k.stext && addr < xp_k.etext && len <= xp_k.etext - addr;
}

/*
 * The shared bytes of kernel text at @addr, read through the direct map:
 * what untraced processes execute, whatever the caller's own view shows.
 * The image is physically contiguous; a module's text is contiguous only
 * within a page (its frame is the kernel's own mapping's, not the caller's
 * view's): xp_text_read() for more.
 */
void *xp_text(unsigned long addr)
{
	if (xp_in_modspace(addr)) {
		struct page *p = vmalloc_to_page((void *)addr);

		/* Callers read live module text only: zeros if not (never seen). */
		if (WARN_ON_ONCE(!p))
			p = ZERO_PAGE(0);
		return (u8 *)page_address(p) + offset_in_page(addr);
	}
	return __va(__pa_symbol(addr));
}
NOKPROBE_SYMBOL(xp_text);

void xp_text_read(void *dst, unsigned long addr, size_t len)
{
	while (len) {
		size_t n = min_t(size_t, len, PAGE_SIZE - offset_in_page(addr));

		if (!xp_in_modspace(addr))
			n = len;
		memcpy(dst, xp_text(addr), n);
		dst += n;
		addr += n;
		len -= n;
	}
}
NOKPROBE_SYMBOL(xp_text_read);
