/* SPDX-License-Identifier: GPL-2.0 */
/* User hooks: trap-free probes on user functions (uhook.c, uarea.c, uslot.c). */
#ifndef _XPROBES_UHOOK_H
#define _XPROBES_UHOOK_H

#include <linux/workqueue.h>
#include "uslot.h"
#include "urec.h"

/* uarea.c: trampoline areas mapped into traced processes */
#define XP_UAREA_SIZE	(512 * PAGE_SIZE)	/* 2 MiB: trampolines, then returns */
#define XP_URET_N	2048		/* return thunks of an area (uevent.c) */
#define XP_URET_SIZE	32		/* bytes of one */
#define XP_URET_TABLE	(XP_URET_N * XP_URET_SIZE)	/* offset of their targets */
#define XP_URET_BLOCK	(XP_URET_TABLE + XP_URET_N * 8)	/* 80 KiB at the area's end */
/*
 * An area, from its start: trampolines up to XP_UAREA_TRAMP, the records
 * block (urec.h) at XP_UREC_AREA_OFF, the event-return block at
 * XP_URET_AREA_OFF, to the end. One process may have hooks of both kinds
 * in one area: the two blocks never meet (they shared an offset once:
 * a records hook and an events hook with returns killed their process).
 */
#define XP_URET_AREA_OFF (XP_UAREA_SIZE - XP_URET_BLOCK)
#define XP_UREC_AREA_OFF (XP_URET_AREA_OFF - XP_UREC_BLOCK)
#define XP_UAREA_TRAMP	XP_UREC_AREA_OFF	/* 808 KiB: about 7400 trampolines */
#define XP_URETIRED_MAX	64			/* slots kept for a hook added again */

struct xp_uretired {
	unsigned long site;		/* the site it was built for */
	unsigned long va;		/* the slot */
	u8 len;
	u8 code[XP_USLOT_MAX];
};

struct xp_uret;

struct xp_uarea {
	struct list_head node;		/* in xp_uareas, under xp_views_lock */
	struct xp_uret *uret;		/* its return thunks, once a hook needs them (uevent.c) */
	struct xp_urecblk *urec;	/* its records routines, once a hook needs them (urec.c) */
	struct mm_struct *mm;		/* mmgrab()ed: never another mm at this address */
	struct file *file;		/* the read-only shmem file the process maps */
	unsigned long va;		/* where, in mm */
	unsigned int used;		/* bytes handed out from va */
	unsigned int users;		/* hooks with a slot here */
	unsigned int nr_retired;
	bool detached;			/* its process's hooks went (xp_uareas_detach()) */
	bool muted;			/* its code makes no syscall (xp_uareas_mute()) */
	struct xp_uretired retired[XP_URETIRED_MAX];
};

struct xp_uarea *xp_uarea_map(struct mm_struct *mm, unsigned long near,
			      struct netlink_ext_ack *extack);
void xp_uarea_adopt(struct xp_uarea *a);
bool xp_uarea_room(struct mm_struct *mm, unsigned long site, unsigned int len);
extern struct workqueue_struct *xp_uwq;
unsigned long xp_uarea_alloc(struct mm_struct *mm, unsigned long site, unsigned int len,
			     struct xp_uarea **ap, struct netlink_ext_ack *extack);
int xp_uarea_write(struct xp_uarea *a, unsigned long va, const u8 *buf, unsigned int len);
void xp_uareas_release_unused(void);
void xp_uareas_detach(struct mm_struct *mm);
struct xp_unwind_map *xp_uareas_seal(struct mm_struct *mm);
int xp_uareas_mute(struct mm_struct *mm);
void xp_uareas_init(void);
bool xp_uareas_mapped(struct mm_struct *mm);
int xp_uareas_unshare(void);
void xp_uarea_retire(struct xp_uarea *a, unsigned long site, unsigned long va,
		     const u8 *code, unsigned int len);
bool xp_uarea_reuse(struct mm_struct *mm, unsigned long site,
		    int (*build)(void *arg, struct xp_uarea *a, unsigned long va, u8 *code), void *arg,
		    struct xp_uarea **ap, unsigned long *vap);
unsigned long xp_umap(struct mm_struct *mm, struct file *file, unsigned long addr,
		      unsigned long size, unsigned long prot, unsigned long flags);
unsigned long xp_umap_flags(struct mm_struct *mm, struct file *file, unsigned long addr,
			    unsigned long size, unsigned long prot, unsigned long flags,
			    vm_flags_t vm_flags);

/* uhook.c */
#define XP_UFUNC_MAX	(1U << 20)	/* longest function decoded */

struct xp_uhits {
	u64 calls, rets;
};

struct xp_uhook {
	struct hlist_node enode;	/* in the event hash by slot (uevent.c, RCU) */
	struct hlist_node cnode;	/* in the live covers by mm and address (ucover.c, RCU) */
	struct hlist_node fnode;	/* ... by file and offset */
	struct hlist_node mnode;	/* ... by mm alone */
	struct file *afile;		/* its area's file, compared only (ucover.c) */
	struct xp_view *view;
	u32 id;
	u32 pid;			/* the process, as its creator named it */
	struct mm_struct *mm;		/* mmgrab()ed */
	unsigned long func, addr;	/* the function; the site patched (past ENDBR) */
	unsigned long slot;		/* its trampoline */
	struct xp_uarea *area;
	u8 orig[XP_COVER_MAX];		/* the text's bytes at addr before */
	u8 tramp[XP_USLOT_MAX];		/* the trampoline's bytes */
	u8 tramp_len;
	u8 cover, ninsn;
	u8 istart[XP_COVER_INSNS];	/* each covered instruction's offset from addr */
	u8 tstart[XP_COVER_INSNS];	/* ... and from slot, where it runs instead */
	struct xp_uprobe up;		/* holds the site's int3 (inode igrab()bed) */
	struct uprobe_consumer uc;
	bool live;			/* the jump is in the process's text */
	u8 state;			/* XP_UH_*, under xp_views_lock */
	bool orphan;			/* its view went while it was busy */
	bool registered;		/* its uprobe is */
	bool up_busy;			/* a worker (un)registers it (uhook.c: upop()) */
	int up_err;			/* ... and this is what registering said */
	struct work_struct upwork;	/* ... the worker's */
	struct list_head gnode;		/* on the reaper's list (XP_UH_REAPING) */
	struct xp_urecbuf *new_rb;	/* during UHOOK_ADD: buffers made for the view */
	atomic64_t trapped;		/* entries through the int3 instead of the jump */
	bool events;			/* its trampoline starts with the event stub */
	bool returns;			/* each call's return fires too (uevent.c) */
	bool records;			/* writes records instead (urec.c) */
	bool unwinder;			/* an unwinder's entry (uunwind.c) */
	bool trap;			/* stays the uprobe's int3: no jump (XPROBES_F_TRAP) */
	bool rets_gone;			/* no thunk may name it any more (uevent.c) */
	bool out;			/* its text is back: the reaper frees it (uhook.c) */
	atomic64_t ret_missed;		/* calls whose return could not be taken */
	atomic64_t calls_missed;	/* entries whose event could not fire (ulate.c) */
	u64 cookie;			/* passed with each event */
	struct xp_uhits __percpu *hits;	/* events fired (uevent.c), NULL without events */
	struct task_struct *add_task;	/* during UHOOK_ADD only: the process */
	bool add_mm;			/* ... and a user reference on mm */
	bool text_differs;		/* ... and its text was not the file's */
	struct rcu_head rcu;
};

/*
 * A listed hook's state (uhook.c): only a LIVE one is anyone's to take; the
 * others belong to the add, the del or the reaper that works on them
 * without xp_views_lock.
 */
enum {
	XP_UH_ADDING,	/* claimed: its bytes are taken, the patch goes in */
	XP_UH_LIVE,
	XP_UH_DELETING,	/* UHOOK_DEL restores the text */
	XP_UH_REAPING,	/* the reaper restores the text (its view went, its
			 * del was killed) or, ->out, only frees it */
};

extern unsigned int xp_nr_uhooks;

/* What UHOOK_ADD asks for (netlink.c checked each field's form). */
struct xp_uhook_req {
	u32 pid;
	unsigned long func;
	u32 size;
	u32 flags;			/* XPROBES_F_EVENTS, _RETURNS, _RECORDS */
	u64 cookie;
	const struct xprobes_uh_branch *branches;	/* into the function's first bytes */
	unsigned int nbranches;
	unsigned int branch_span;	/* ... those landing before this byte: all */
};
struct xp_uhook *xp_uhook_prepare(const struct xp_uhook_req *req, struct netlink_ext_ack *extack);
int xp_uhook_install(struct xp_uhook *h, struct netlink_ext_ack *extack);
void xp_uhook_abandon(struct xp_uhook *h);
bool xp_uprobes_skip_on_ip_change(unsigned int version);
int xp_uhook_del(u32 id, struct netlink_ext_ack *extack);
struct xp_uhook *xp_uhook_next(unsigned long *id);
bool xp_uhook_gone(struct xp_uhook *h);
void xp_uhooks_view_gone(struct xp_view *v);
void xp_uhooks_seal_views(struct mm_struct *mm, bool dispatch);
int xp_uhooks_seal(struct mm_struct *mm, u32 *pid);
bool xp_ucover_mm_live(struct mm_struct *mm);
bool xp_ucover_overlaps(struct mm_struct *mm, unsigned long lo, unsigned long hi);
u64 xp_uhooks_handed(void);
void xp_uhooks_settle(u64 handed);
int xp_uhooks_init(void);
void xp_uhooks_drain(void);
void xp_uhooks_exit(void);

/* ucover.c: what must not land inside a cover */
void xp_ucover_publish(struct xp_uhook *h);
void xp_ucover_unpublish(struct xp_uhook *h);
int xp_usigret_get(struct xp_view *v, struct netlink_ext_ack *extack);
bool xp_ucover_unguarded(void);
void xp_ucover_init(void);
void xp_ucover_exit(void);

/* uevent.c: the events of user hooks */
#define XP_USTUB_LEN	15	/* push rax, rcx, r11; mov $NR, eax; syscall; pop x3 */
#define XP_USTUB_RET	11	/* the stub's ip after its syscall */
void xp_ustub(u8 *out);
int xp_urets_init(struct xp_uarea *a, struct netlink_ext_ack *extack);
void xp_urets_free(struct xp_uarea *a);
void xp_urets_forget(struct xp_uhook *h);
int xp_uevents_get(struct xp_view *v, struct mm_struct *mm, struct netlink_ext_ack *extack);
void xp_uevent_publish(struct xp_uhook *h);
void xp_uevent_unpublish(struct xp_uhook *h);
u64 xp_uevent_hits(struct xp_uhook *h, bool rets);
unsigned long xp_uret_thunk_target(struct mm_struct *mm, unsigned long w);
unsigned int xp_uret_thunk_ranges(struct mm_struct *mm, unsigned long *lo, unsigned long *hi,
				  unsigned int max);
unsigned int xp_urets_detach(struct xp_uarea *a, u64 *tgt, unsigned long *base);

/* urec.c: records instead of events */
int xp_urec_prepare(struct xp_view *v, struct xp_uarea *a, struct task_struct *task,
		    struct mm_struct *mm, struct xp_urecbuf **made, struct netlink_ext_ack *extack);
int xp_urec_check(struct xp_view *v, struct mm_struct *mm, struct netlink_ext_ack *extack);
struct xp_urecbuf *xp_urecbuf_make(struct task_struct *task, struct mm_struct *mm,
				   struct netlink_ext_ack *extack);
void xp_urecbuf_drop(struct xp_urecbuf *rb);
void xp_urec_stub(u8 *out, struct xp_uarea *a, unsigned long at, u64 cookie, bool returns);
struct xp_ulate;
void xp_urec_slow(struct xp_view *v, struct pt_regs *u, struct xp_ulate *l);
void xp_urec_block_free(struct xp_uarea *a);
void xp_urecbuf_free(struct xp_view *v);
void xp_urec_sums_release(u32 portid, bool any);
struct sock;
int xp_urec_sums_read(u32 nr, const struct sock *sk, u32 *from, struct xprobes_usum *out, u32 max);
void xp_urec_exit(void);
void xp_urec_force(struct xp_view *v);
unsigned long xp_urec_thunk_target(struct mm_struct *mm, unsigned long w);
unsigned long xp_unwind_thunk_target(struct mm_struct *mm, unsigned long w);
unsigned int xp_urec_thunk_ranges(struct mm_struct *mm, unsigned long *lo, unsigned long *hi,
				  unsigned int max);
unsigned int xp_urec_detach(struct xp_uarea *a, u64 *tgt, unsigned long *base,
			    unsigned long *routine, bool mapped);
struct xp_unwind_map;
void xp_urec_detach_tails(struct xp_uarea *a, const struct xp_unwind_map *m);
/*
 * Where a thread is in a block's entry routine (its window: from its start
 * to its thunk's store), for a detach: the save's end, where a thread
 * stopped in the window goes (done; done_di, which first takes rdi back
 * from -0x30(%rsp), from the spans of the window where the routine keeps
 * it there itself around its system calls: each [start, end)).
 */
#include "urec_win.h"	/* xp_urec_window(), xp_urec_win_resume() */

/* uunwind.c: unwinders read return addresses, not thunks */
#define XP_UFAULT_TRIES	256	/* pages brought in by one task work at most */
#define XP_UFAULT_WAITS	HZ	/* jiffies it waits for the mmap lock at most */
/* What one task work may still spend in xp_ufault(): pages, and jiffies of waits */
struct xp_ubudget {
	unsigned int tries;	/* pages brought in (or given up on) */
	unsigned int waits;	/* jiffies slept for the mmap lock */
};
bool xp_ufault(unsigned long addr, size_t len, bool write, struct xp_ubudget *b);
bool xp_task_work_cancel(struct task_struct *t, struct callback_head *cb);
bool xp_task_work_can_cancel(void);

/* ulate.c: what a hook's system call could not do on the hit path, done again */
enum { XP_ULATE_ENTRY = 1, XP_ULATE_HIJACK, XP_ULATE_RET, XP_ULATE_THUNK };
struct xp_ulate {
	u8 kind;		/* XP_ULATE_*: what is left to do; 0 done */
	u8 len;			/* the access that failed: @len bytes at @addr */
	bool write;
	bool late;		/* from the task work: the caller tries again */
	bool last;		/* its last try: a failure counts the event lost */
	unsigned long addr;
};
void xp_ulate_exit(void);
bool xp_ulate_ask(struct xp_ulate *l, u8 kind, unsigned long addr, u8 len, bool write);
void xp_uevent_do(struct xp_view *v, struct pt_regs *u, struct xp_ulate *l);
void xp_uevent_task(struct pt_regs *u, struct xp_ulate *l);
long xp_uevent_trapped(const struct pt_regs *regs);
int xp_unwinds_get(struct xp_view *v, struct netlink_ext_ack *extack);
void xp_unwinds_free(struct xp_view *v);
void xp_unwind_start(struct xp_view *v, unsigned long sp);
bool xp_unwind_landed(struct xp_view *v, unsigned long sp);
bool xp_unwind_pending(struct xp_view *v, struct task_struct *t);
void xp_unwind_exit_task(struct xp_view *v);
void xp_unwind_init(void);
void xp_unwind_exit(void);
struct xp_unwind_map *xp_unwind_map_new(struct mm_struct *mm, unsigned int nareas);
void xp_unwind_map_add(struct xp_unwind_map *m, struct xp_uarea *a);
void xp_unwind_map_done(struct xp_unwind_map *m);
unsigned long xp_unwind_map_target(const struct xp_unwind_map *m, unsigned long w);
void xp_unwind_detach_queue(struct xp_unwind_map *m);
void xp_unwinds_detach(struct xp_view *v);
void xp_unwind_map_syscalls(struct xp_unwind_map *m, unsigned long va);
struct xp_unwind_map *xp_unwind_map_get(struct xp_unwind_map *m);
void xp_unwind_map_put(struct xp_unwind_map *m);
void xp_unwind_detach_wait(struct xp_unwind_map *m, unsigned int ms);

/* useccomp.c: a process that filters its system calls keeps running */
void xp_useccomp_init(void);
void xp_useccomp_exit(void);
bool xp_useccomp_unguarded(void);
/* A process's threads: none filters its system calls, one does, or one is on its way to */
enum xp_filtered {
	XP_UNFILTERED, XP_SECCOMP, XP_DISPATCH, XP_INSTALLING_SECCOMP, XP_INSTALLING_DISPATCH
};
enum xp_filtered xp_useccomp_state(struct mm_struct *mm);
bool xp_useccomp_refuse(enum xp_filtered how, struct netlink_ext_ack *extack);
int xp_useccomp_claimed(struct xp_uhook *h, struct netlink_ext_ack *extack);

#endif /* _XPROBES_UHOOK_H */
