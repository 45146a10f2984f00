/* SPDX-License-Identifier: GPL-2.0 */
/* The entry pool of call and jump hooks (jump_entry.S), shared with C. */
#ifndef _XPROBES_JUMP_ENTRY_H
#define _XPROBES_JUMP_ENTRY_H

#define XP_NR_JENTRIES	1024	/* call and jump hooks at once, all views */
#define XP_JENTRY_SIZE	16	/* push $n (5 bytes at most), jmp rel32 */

#endif /* _XPROBES_JUMP_ENTRY_H */
