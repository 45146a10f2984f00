/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a detach sends a thread stopped in an entry routine (urec_tmpl.S;
 * uunwind.c's detach_window()). The window runs from the routine's start
 * to its thunk's store: a thread in it read a key of the hash before the
 * detach cleared it, and would store the thunk after its stack was read.
 * It goes to the routine's end instead, which puts its registers back and
 * returns (no record, no thunk): to the end that first takes rdi back from
 * -0x30(%rsp) when it is inside one of the spans where the routine keeps
 * rdi there (around its system calls), and with the registers the save has
 * not stored yet stored for it when it is inside the save.
 *
 * Plain C on the template's labels, with no kernel header: the host
 * harness (selftests/host/urec-preempt.c) runs this same code at every
 * instruction of the routines, so a wrong label or rule here fails there.
 */
#ifndef _XPROBES_UREC_WIN_H
#define _XPROBES_UREC_WIN_H

extern const unsigned char xp_urec_tmpl[], xp_urec_entry[], xp_urec_saved[], xp_urec_stored[];
extern const unsigned char xp_urec_done[], xp_urec_done_di[];
extern const unsigned char xp_urec_di_ask[], xp_urec_di_ask_end[];
extern const unsigned char xp_urec_di_miss[], xp_urec_di_miss_end[];

/* The window of the routines copied to @routine (a records block's start). */
struct xp_urec_win {
	unsigned long start, saved, stored, done, done_di;
	unsigned long di[2][2];		/* [from, to) where rdi is at -0x30(%rsp) */
};

#define XP_UREC_WIN_AT(routine, sym)	((routine) + (unsigned long)((sym) - xp_urec_tmpl))

/*
 * A tail call's thunk is stored out of line, inside the window (.Lflagged):
 * a thread stopped past that store but before the window's end has the
 * thunk in its slot already, which the stack's scan gives its target back;
 * the thread is sent to the end all the same.
 */
static inline void xp_urec_window(unsigned long routine, struct xp_urec_win *w)
{
	w->start = XP_UREC_WIN_AT(routine, xp_urec_entry);
	w->saved = XP_UREC_WIN_AT(routine, xp_urec_saved);
	w->stored = XP_UREC_WIN_AT(routine, xp_urec_stored);
	w->done = XP_UREC_WIN_AT(routine, xp_urec_done);
	w->done_di = XP_UREC_WIN_AT(routine, xp_urec_done_di);
	w->di[0][0] = XP_UREC_WIN_AT(routine, xp_urec_di_ask);
	w->di[0][1] = XP_UREC_WIN_AT(routine, xp_urec_di_ask_end);
	w->di[1][0] = XP_UREC_WIN_AT(routine, xp_urec_di_miss);
	w->di[1][1] = XP_UREC_WIN_AT(routine, xp_urec_di_miss_end);
}

/*
 * Where a thread at @ip goes, 0 if it is not in @w's window (it stays).
 * @save: set when the registers the save has not stored yet (rdx, rcx,
 * r11, rsi at -0x10, -0x18, -0x20, -0x28 from its sp: the save only
 * stores them, their values are the thread's) must be stored for it.
 */
static inline unsigned long xp_urec_win_resume(const struct xp_urec_win *w, unsigned long ip,
					       int *save)
{
	unsigned int i;

	if (ip < w->start || ip >= w->stored)
		return 0;
	*save = ip < w->saved;
	for (i = 0; i < 2; i++)
		if (ip >= w->di[i][0] && ip < w->di[i][1])
			return w->done_di;
	return w->done;
}

#endif /* _XPROBES_UREC_WIN_H */
