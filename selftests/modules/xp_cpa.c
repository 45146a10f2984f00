// SPDX-License-Identifier: GPL-2.0
/*
 * xp_cpa: changes the kernel's own mapping of its image, as a set_memory_*()
 * on any page of the image's physical range does (a BPF JIT, kprobe or
 * module page whose frame was freed init memory, say): selftest
 * 19-view-tables. While loaded, the text page at addr= is uncached, through
 * its direct-map address (set_memory_uc()); CPA changes its alias in the
 * image mapping too (cpa_process_alias()), splitting the 2 MiB leaf that
 * maps it there (__split_large_page()). Unloading makes it write-back again
 * (set_memory_wb()); the split stays, as the kernel leaves it.
 */
#include <linux/mm.h>
#include <linux/module.h>
#include <asm/set_memory.h>

static unsigned long addr;
module_param(addr, ulong, 0444);
MODULE_PARM_DESC(addr, "a kernel text address: its page goes uncached while loaded");

static unsigned long lowmem(void)
{
	return (unsigned long)__va(__pa_symbol(addr & PAGE_MASK));
}

static int __init xp_cpa_init(void)
{
	if (!addr)
		return -EINVAL;
	return set_memory_uc(lowmem(), 1);
}

static void __exit xp_cpa_exit(void)
{
	set_memory_wb(lowmem(), 1);
}

module_init(xp_cpa_init);
module_exit(xp_cpa_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("xprobes selftest: a CPA change of the kernel image's mapping");
