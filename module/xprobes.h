/* SPDX-License-Identifier: GPL-2.0 */
/* Internal interfaces between the files of xprobes.ko. */
#ifndef _XPROBES_INTERNAL_H
#define _XPROBES_INTERNAL_H

#include <linux/types.h>
#include <linux/mutex.h>
#include <linux/pgtable.h>
#include "uapi/xprobes.h"

#define XPROBES_VERSION "0.1.0"

struct netlink_ext_ack;
struct mm_struct;
struct task_struct;
struct exception_table_entry;

/* kernel.c: facts about the running kernel, fixed at load */
struct xp_kernel {
	unsigned long stext, etext;		/* _stext, _etext */
	struct mutex *text_mutex;		/* serialises every kernel text write */
	const struct exception_table_entry *ex_start, *ex_stop;
	bool l5;				/* 5-level paging */
	const char *unsupported;		/* why views cannot work here, or NULL */
};
extern struct xp_kernel xp_k;
int xp_kernel_init(void);
bool xp_is_core_text(unsigned long addr, size_t len);

/* symbols.c */
unsigned long xp_sym_lookup(const char *name, unsigned long *size);
bool xp_sym_at(unsigned long addr, const char *want, unsigned long *off, unsigned long *size);
int xp_sym_name(unsigned long addr, char *buf, size_t len, unsigned long *off);

/* walk.c */
struct xp_walk_result {
	phys_addr_t phys;	/* physical address the walk ends at */
	unsigned long flags;	/* flags of the leaf entry */
	int level;		/* 1 = 4K PTE, 2 = 2M PMD, 3 = 1G PUD */
	pud_t *pud;
	pmd_t *pmd;
	pte_t *pte;
};
int xp_walk(pgd_t *pgd, unsigned long addr, struct xp_walk_result *res);

/* proc.c */
struct task_struct *xp_get_task(u32 pid, struct netlink_ext_ack *extack);
struct mm_struct *xp_get_mm(u32 pid, struct netlink_ext_ack *extack);

/* peek.c */
int xp_peek(u32 pid, unsigned long addr, u8 *buf, size_t len, struct netlink_ext_ack *extack);

/* view.c */
extern struct mutex xp_views_lock;

/* netlink.c */
int xp_netlink_init(void);
void xp_netlink_exit(void);

#endif /* _XPROBES_INTERNAL_H */
