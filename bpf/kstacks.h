/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef XPROBES_KSTACKS_H
#define XPROBES_KSTACKS_H

/*
 * One kernel stack per slot, the first a program took there. Slots: a
 * hook's kprobe program (hook prog) and kstacks' own kprobes record under
 * their attach cookie; the xprobes_hook tracepoint's program under the
 * hook's cookie plus KSTACKS_TP.
 */
#define KSTACKS_SLOTS	64
#define KSTACKS_TP	32
#define KSTACKS_DEPTH	32

struct kstacks_slot {
	__u64 n;			/* frames, 0 until taken */
	__u64 ip[KSTACKS_DEPTH];
};

#endif
