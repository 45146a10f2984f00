/* SPDX-License-Identifier: GPL-2.0 */
/* xprobectl trace: the session shared by trace.c (setup, loop) and report.c (output). */
#ifndef XPROBECTL_TRACER_H
#define XPROBECTL_TRACER_H

#include <linux/types.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <limits.h>
#include "trace.h"
#include "target.h"
#include "corebtf.h"

struct trace_bpf;
struct cgtarget;

struct tfunc {
	char *name;		/* symbol */
	char *path;		/* the ELF file it lives in */
	bool main_bin;		/* in the main binary, not a library */
	uint64_t offset;	/* file offset of its first instruction */
	uint64_t size;		/* bytes, from its symbol */
	uint32_t uhook;		/* its user hook's id, 0: a uprobe and a uretprobe */
	bool uhook_trap;	/* ... an int3 the module keeps (no jump possible) */
	bool no_return;		/* entered by a jump (its file's ELF entry point): the
				 * word at its stack pointer is not a return address
				 * (argc, for a program's _start), so no return probe;
				 * nor a uretprobe on the unwinder's entry points */
	uint8_t entry;		/* its first instruction to uprobes: ENTRY_* (trace.c) */
	bool unprobed;		/* left out: a uprobe there is not safe (trace.c) */
};

enum sort_key { SORT_WALL, SORT_SELF, SORT_ON, SORT_OFF, SORT_CALLS };

/* The uprobes of one process: uprobe_multi link fds, or libbpf links (one per probe). */
struct linkset {
	int *fds;
	int nfds, capfds;
	struct bpf_link **links;
	int nlinks;
};

/* --children: a process the target (or one of them) forked (tprocs.c) */
struct tproc {
	pid_t pid, parent;
	uint32_t slot;		/* its report slot (pstats), from the BPF side */
	char comm[16];
	uint64_t gen;		/* its entry's generation: a tgid reused is another process */
	struct linkset ls;	/* its uprobes, detached at the end */
	bool gone;
	bool unprobed;		/* its uprobes could not be attached */
	int64_t probes_ms;	/* from its fork to its uprobes in (its calls before are
				 * not counted); -1 if it has none */
};

/* "SIGSYS" for SIG into BUF (report.c); returns BUF. */
const char *trace_signame(int sig, char *buf, size_t len);

/* How the traced process ended, for the final report. */
enum target_end {
	TEND_RUNNING,		/* it had not when the trace ended */
	TEND_EXITED,		/* end_code: its exit status */
	TEND_KILLED,		/* end_code: the signal */
	TEND_GONE,		/* not xprobectl's child, and its last exit not seen */
};

/*
 * A function's figures summed over the CPUs (and the processes' own
 * sums): struct func_stats's and struct func_off's, its histograms in
 * 64-bit buckets, as BPF's and the processes' own are (all in 32 bits
 * until 2026-12-04, when a bucket wrapped at 2^32 calls).
 */
struct func_fig {
	__u64 calls, wall, on_incl, on_excl, allon, calls_lost, returns_lost;
	__u64 off_incl[NR_CAUSES], off_excl[NR_CAUSES];
	__u64 hist_wall[TRACE_HIST], hist_on[TRACE_HIST];
	__u64 hist_off[NR_CAUSES][TRACE_HIST], hist_allon[TRACE_HIST];
};

struct tsession {
	pid_t pid;
	char comm[32];
	bool views;		/* kernel side through xprobes views, else fallback */
	char mode_note[320];	/* why fallback mode, for the report header */
	enum target_end end;	/* how the process (not --cgroup) ended */
	int end_code;
	struct tfunc *funcs;	/* index = attach cookie = stats key */
	int nfuncs;
	int nfailed;		/* functions that could not be probed */
	int nuhooks;		/* functions through user hooks (tuhook.c) */
	uint64_t held_pc;	/* -- COMMAND: where it waits, stopped, until we start */
	bool spawned;		/* -- COMMAND: we started the process */
	int nunwinders;		/* unwinder hooks placed (tuhook.c) */
	bool uprobes_only;	/* --uprobes */
	bool records;		/* user hooks write records (else they fire events) */
	bool sums;		/* ... and the process sums its calls (XPROBES_F_SUMS) */
	int ncpus;
	int shard_bits;		/* the stats map's shards: 1 << shard_bits (trace.bpf.c) */
	void *stats_mem;	/* that map, mapped (report.c) */
	struct trace_bpf *skel;
	/*
	 * The uprobe programs (fn_entry, fn_return, unwind_start): in skel
	 * when a function needed them at the start, for a command we started
	 * (it may seal itself at once: see uprobes_now() in trace.c), and in
	 * fallback mode; else in uskel, a second object sharing skel's maps,
	 * loaded once tracing is under way or at their first use (uprog()):
	 * their verification is a quarter of the BPF load.
	 */
	bool uprogs_in_skel;
	struct trace_bpf *uskel;
	struct core_btf cbtf;	/* the kernel's BTF cut for the object's CO-RE (corebtf.c) */
	bool uskel_failed;	/* its load failed, said once */
	/* on_hook, for a module that runs no program per hook (hook_tp_prog()) */
	struct trace_bpf *hskel;
	bool multi;		/* uprobes through uprobe_multi links (kernel 6.6+) */
	struct linkset ls;	/* the target's uprobes */
	bool unwind_fix;	/* unwinders give uretprobe slots back (trace.bpf.c) */
	bool unwind_said;	/* ... or we said they cannot */
	bool children;		/* --children */
	bool verbose;		/* -v */
	struct tproc *procs;	/* --children: every process the target forked */
	int nprocs, capprocs;
	bool told_unprobed;	/* --children: a child's attach failed, said once */
	struct xp_nl *nl;	/* views mode: the view's socket */
	uint32_t hook_ids[5], hook_kinds[5];	/* views mode: our hooks, by id */
	struct hook_want hook_want[5];		/* and what they are, for more views */
	int nhooks;

	/* --cgroup (tcgroup.c): its other processes join as --children's do */
	struct cgtarget *cg;
	pid_t *cg_scan;		/* cgroup_procs()' buffer */
	size_t cg_cap;
	uint64_t cg_next;	/* next poll, mono_ns() */
	pid_t *cg_roots;	/* processes given a view of their own (views mode) */
	int ncg_roots, capcg_roots;
	pid_t *cg_skip;		/* processes not traced (said once), until gone */
	int ncg_skip, capcg_skip;
	pid_t *cg_wait;		/* in the table, their view to make at the next poll */
	int ncg_wait, capcg_wait;

	/* output options */
	bool json, folded, per_thread, hist, wakers;
	const char *pprof;	/* --pprof FILE */
	bool fold;		/* fill the fold map: --folded or --pprof */
	enum sort_key sort;
	int top;		/* rows in the table, 0: all */

	/* time base (CLOCK_MONOTONIC ns) and the previous interval's totals */
	uint64_t start_ns, prev_ns;
	struct func_fig *prev;
	struct waker_slot *wprev;	/* -W: the waker table at the previous interval */
	int nwprev;
	uint64_t swept_exits;	/* exits counted at the last threads_sweep() */
	uint64_t swept_ns;	/* and when it ran */
	uint64_t seen_exits;	/* exits counted at the last threads_sweep() call */
};


/* tuhook.c: user hooks for the functions that allow one (views mode). */
int tuhooks_add(struct tsession *s, bool verbose);
/*
 * Said of functions that go on with entry probes only because the process
 * blocks system calls by syscall user dispatch (tuhook.c, trace.c).
 */
#define TRACE_CALLS_ONLY_WHY \
	", their calls only (a return probe enters the kernel by a system call on this kernel)"
void tuhooks_unwinders(struct tsession *s);

/* trace.c: the unwinder's entry points by name; does the program at PATH unwind? */
bool unwinder_name(const char *name);
bool unwinds(const char *path, pid_t pid);

/* trace.c: where a process's unwinder entry points are (unwinder_files()) */
struct unwinder_files {
	char exe[PATH_MAX], lib[PATH_MAX], libc[PATH_MAX];
	const char *path[9];	/* 6 traced files, the program, libgcc_s, libc */
	unsigned int n;
};
bool unwinder_files(struct tsession *s, pid_t pid, bool uhooks, struct unwinder_files *u);
void tuhooks_areas(struct tsession *s);

/* "12.3ms": 4 significant digits at most, fits in 8 columns. */
const char *trace_dur(uint64_t ns, char *buf);

/* trace.c: uprobes for PID (the target's or a child's), into LS; QUIET: no messages. */
int trace_attach_pid(struct tsession *s, pid_t pid, struct linkset *ls, bool quiet);
void linkset_free(struct linkset *ls);

/* tprocs.c: --children */
void tprocs_poll(struct tsession *s, bool attach);
bool tprocs_alive(struct tsession *s);
void tprocs_end(struct tsession *s);

/* tcgroup.c: --cgroup */
void tcgroup_poll(struct tsession *s);
pid_t tcgroup_first(struct cgtarget *cg);	/* the lowest pid in it, 0: none */
int tcgroup_enter_target(struct tsession *s);	/* after the load: -1 if the table is full */
void tcgroup_end(struct tsession *s);

/* trace.c: the program a view hook of KIND runs */
struct bpf_program *trace_hook_prog(struct trace_bpf *skel, uint32_t kind);

/* report.c: a cause's name */
const char *trace_cause_name(int i);

/* pprof.c: the fold map as a gzip-compressed pprof profile; 0 or -errno. */
int pprof_write(struct tsession *s, const char *path, uint64_t start_realtime_ns,
		uint64_t duration_ns);

/* Print a report: an interval (difference from the last one) or the final totals. */
int report_print(struct tsession *s, bool final);
void report_unmap(struct tsession *s);

/* Delete exited threads' entries, folding their pending time; at the end, fold every thread's. */
bool threads_sweep(struct tsession *s, bool final);

#endif
