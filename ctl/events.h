/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The module's "view ended" announcements (and "user hooks gone"), for a
 * command whose hooks live in the view of one process: the kernel may end that view under it (rmmod, an
 * audit or coherence verdict, kprobes disarmed), and the command's counts
 * stop there. The target's own exit is not reported: every command already
 * watches for it.
 */
#ifndef XPROBECTL_EVENTS_H
#define XPROBECTL_EVENTS_H

#include <stdbool.h>
#include <sys/types.h>

struct xp_events;

/* Listen for the end of PID's view; NULL (after one line) if that cannot be. */
struct xp_events *xp_events_open(pid_t pid);
/*
 * Whether the view ended for another reason than the target's exit; the
 * first time, prints one line saying why. Never blocks. EV may be NULL.
 */
bool xp_events_view_ended(struct xp_events *ev);
/*
 * Why the module took every user hook of PID out, once (it announces it
 * when the process installs a seccomp filter or turns on syscall user
 * dispatch), as seen by the last xp_events_view_ended(); NULL if it did
 * not. *FLAGS: XPROBES_GONE_* (NO_URETPROBES: trace entries only).
 */
const char *xp_events_uhooks_gone(struct xp_events *ev, uint32_t *flags);
/* The socket, to wait on with poll() (-1 for a NULL EV). */
int xp_events_fd(struct xp_events *ev);
void xp_events_close(struct xp_events *ev);

#endif
