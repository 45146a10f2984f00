// SPDX-License-Identifier: GPL-2.0
/*
 * Software walk of the kernel half of a page-table tree: what a CPU loaded
 * with this pgd would translate a kernel address to. Used by peek (the test
 * oracle) and by the structural checks.
 */
#include <linux/mm.h>
#include <linux/pgtable.h>
#include "xprobes.h"

int xp_walk(pgd_t *pgd_base, unsigned long addr, struct xp_walk_result *res)
{
	pgd_t *pgd = pgd_offset_pgd(pgd_base, addr);
	p4d_t *p4d;
	pud_t *pud;
	pmd_t *pmd;
	pte_t *pte;

	memset(res, 0, sizeof(*res));
	res->pgd_e = pgd_val(*pgd);
	if (pgd_none(*pgd) || !pgd_present(*pgd))
		return -EFAULT;
	p4d = p4d_offset(pgd, addr);
	res->p4d_e = p4d_val(*p4d);
	if (p4d_none(*p4d) || !p4d_present(*p4d))
		return -EFAULT;
	pud = pud_offset(p4d, addr);
	res->pud = pud;
	res->pud_e = pud_val(*pud);
	if (pud_none(*pud) || !pud_present(*pud))
		return -EFAULT;
	if (pud_leaf(*pud)) {
		res->level = 3;
		res->flags = pud_flags(*pud);
		res->phys = (pud_pfn(*pud) << PAGE_SHIFT) + (addr & ~PUD_MASK);
		return 0;
	}
	pmd = pmd_offset(pud, addr);
	res->pmd = pmd;
	res->pmd_e = pmd_val(*pmd);
	if (pmd_none(*pmd) || !pmd_present(*pmd))
		return -EFAULT;
	if (pmd_leaf(*pmd)) {
		res->level = 2;
		res->flags = pmd_flags(*pmd);
		res->phys = (pmd_pfn(*pmd) << PAGE_SHIFT) + (addr & ~PMD_MASK);
		return 0;
	}
	pte = pte_offset_kernel(pmd, addr);
	res->pte = pte;
	res->pte_e = pte_val(*pte);
	if (!pte_present(*pte))
		return -EFAULT;
	res->level = 1;
	res->flags = pte_flags(*pte);
	res->phys = (pte_pfn(*pte) << PAGE_SHIFT) + (addr & ~PAGE_MASK);
	return 0;
}
