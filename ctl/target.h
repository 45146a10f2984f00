/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The process a sampling command (trace, metrics, latency) watches: its
 * kernel view and hooks, or the reason it runs in fallback mode, and whether
 * it is still there.
 */
#ifndef XPROBECTL_TARGET_H
#define XPROBECTL_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

struct xp_nl;
struct nlattr;

/* A hook a command wants: the first of syms the kernel accepts wins. */
struct hook_want {
	const char *syms[2];
	uint32_t kind;		/* the command's own tag for it, kept beside the id */
	uint32_t flags;		/* XPROBES_F_* for HOOK_ADD */
};

/*
 * Give PID a kernel view (VIEW_FLAGS: XPROBES_F_NO_FOLLOW_FORK or 0) with
 * the N hooks of WANT; their ids go to IDS. On failure writes the reason to
 * NOTE, removes the view and returns -1, or the view's -errno when the module
 * would not make it, or -EAGAIN: the process is in execve (at the view's
 * making, or still after 2 s at its hooks'), ask again; the caller falls back.
 */
int view_hooks_setup(struct xp_nl *nl, pid_t pid, uint32_t view_flags,
		     const struct hook_want *want, int n, uint32_t *ids,
		     char *note, size_t note_len);
/*
 * Add the N hooks of WANT to PID's existing view; the module's -errno with
 * NOTE as above (the view stays).
 */
int hooks_add(struct xp_nl *nl, pid_t pid, const struct hook_want *want, int n,
	      uint32_t *ids, char *note, size_t note_len);
/* End PID's view; the module's -errno, or 0. */
int view_del(struct xp_nl *nl, pid_t pid);
/*
 * After a request the module answered ERR: true (having waited 50 ms) when
 * it should be asked again. It answers -EAGAIN for a moment where a process
 * is in execve: a new view waits for its end, and a view made for it before
 * is on none of its mms between exec_mmap() and sched_process_exec, where
 * the new mm joins (a hook added or a view ended by pid meanwhile); 2 s at
 * most (*TRIES counts), and not once stop_req is set. XPROBECTL_SAY_AGAIN
 * in the environment: says so on stderr at the first wait (selftest 21).
 */
bool nl_again(int err, int *tries);
/*
 * XPROBES_CMD_VIEW_NEW for PID with FLAGS, CB on its reply; asked again
 * while the module answers -EAGAIN (the process is in execve or being
 * forked: a shell's "cmd &" a moment ago), two seconds at most. 0 or
 * -errno, NL's ext_msg saying why.
 */
int view_new(struct xp_nl *nl, pid_t pid, uint32_t flags, int (*cb)(struct nlattr **, void *),
	     void *arg);
/*
 * The root process of the view PID runs on (PID's own, or the process it
 * was forked from); -ENOENT when it runs on none, -ESRCH when PID is gone,
 * -EAGAIN when it is in execve and its view is about to follow it, another
 * -errno on error. Asked once (callers that poll ask at the next poll).
 */
pid_t view_root(struct xp_nl *nl, pid_t pid);
/*
 * Make the N hooks IDS run the BPF program PROG_FD (raw_tp or kprobe) on every
 * hit, directly (XPROBES_CMD_HOOK_PROG; PROG_FD < 0: stop). 0 or -errno,
 * NL's ext_msg saying why.
 */
int hooks_run_prog(struct xp_nl *nl, const uint32_t *ids, int n, int prog_fd);
/*
 * Give the N hooks IDS the loaded PROG: directly, or, from a module that
 * cannot (no HOOK_PROG), through the xprobes_hook tracepoint (*LINK set).
 * -1: printed.
 */
struct bpf_program;
struct bpf_link;
int attach_hook_prog(struct xp_nl *nl, const uint32_t *ids, int n, struct bpf_program *prog,
		     struct bpf_link **link);
/* PROG (a raw_tp program) on the xprobes_hook tracepoint itself, *LINK; -1: printed. */
int attach_hook_tp(struct bpf_program *prog, struct bpf_link **link);
/*
 * Give hook IDS[i] a program of its own, PROGS[i], for each of the N: 0, or
 * the module's refusal of the first it refused (*AT), not said.
 */
int hooks_give_progs(struct xp_nl *nl, const uint32_t *ids, struct bpf_program *const *progs,
		     int n, int *at);
/*
 * The same (each a kprobe program: the cheapest path), and a module that
 * refuses one gets FALLBACK, which tells the hooks apart by id, on all N as
 * attach_hook_prog() gives it, if there is one (NULL: the refusal is the
 * answer). -1: printed.
 */
int attach_hook_progs(struct xp_nl *nl, const uint32_t *ids, struct bpf_program *const *progs,
		      int n, struct bpf_program *fallback, struct bpf_link **link);

/* Gone, or a zombie (CHILD: our own child, reaped here into *status). */
bool target_gone(pid_t pid, bool child, int *status);
/*
 * A pidfd of PID (-1 where the kernel has none), and a wait of MS
 * milliseconds that ends early, true, when that process has exited: a
 * tracer that learns of the exit at once need not look at /proc 50 times
 * a second. It also ends early, false, when EVFD (-1: none; the module's
 * events socket) has something to read.
 */
int target_pidfd(pid_t pid);
bool target_wait(int pidfd, int evfd, int ms);
void read_comm(pid_t pid, char *out, size_t len);

/* Set by SIGINT and SIGTERM once stop_on_signals() ran: loops end, then report. */
extern volatile sig_atomic_t stop_req;
void stop_on_signals(void);

/* libbpf's messages: all of them with VERBOSE, else its warnings if WARNINGS. */
void libbpf_messages(bool verbose, bool warnings);

/* "0.5" -> 0.5 seconds, positive and sane. */
/* Is PID a kernel thread (PF_KTHREAD)? It has no user space to trace. */
bool is_kthread(pid_t pid);

bool parse_secs(const char *s, double *v);

/*
 * An interval between reports (-i): 10 ms at least, since every one is a
 * line or a table (-i 1e-9 printed 134 000 lines in 2 s).
 */
#define MIN_INTERVAL	0.01
bool parse_interval(const char *s, double *v);
/* CLOCK_MONOTONIC in ns. */
uint64_t mono_ns(void);

#endif
