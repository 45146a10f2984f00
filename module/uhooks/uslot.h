/* SPDX-License-Identifier: GPL-2.0 */
/* The trampoline of a user hook (uslot.c). */
#ifndef _XPROBES_USLOT_H
#define _XPROBES_USLOT_H

#include <linux/version.h>
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/*
 * Room for the longest trampoline: the event stub (uevent.c), five copied
 * instructions, a rebuilt call, the jump back.
 */
#define XP_USLOT_MAX	112

/*
 * Build at @out (@max bytes) the trampoline for the @cover bytes at @code,
 * which sit at @site in the process, to run at @slot: the covered
 * instructions rebuilt for @slot, then a jmp to @site + @cover. @starts
 * gets each instruction's offset in the trampoline (a thread stopped at the
 * i-th covered instruction resumes at @slot + @starts[i]). Returns the
 * trampoline's length, or a negative errno with *@why saying why.
 */
int xp_uslot_build(const u8 *code, unsigned int cover, unsigned long site, unsigned long slot,
		   u8 *out, unsigned int max, u8 *starts, const char **why);

#endif /* _XPROBES_USLOT_H */
