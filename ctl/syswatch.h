/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One process's syscall entries and exits for metrics and latency: two
 * xprobes hooks in the process's view (the raw_syscalls tracepoints hooked
 * there, or x64_sys_call and its return), or the raw_syscalls tracepoints
 * with a PID test everywhere (fallback). The BPF side is
 * bpf/sysev.bpf.h; its programs and maps have the same names in every object
 * that includes it.
 */
#ifndef XPROBECTL_SYSWATCH_H
#define XPROBECTL_SYSWATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct xp_events;
struct cgtarget;

struct bpf_object;
struct bpf_link;
struct xp_nl;

/* A process of a cgroup target, once looked at (views mode). */
struct sw_proc {
	pid_t pid;
	bool own;		/* the root of a view of ours (made by us, ours to end) */
	bool gone;		/* a root that exited (its view may live on) */
};

enum { SYSWATCH_TP, SYSWATCH_CALL };	/* the hooks of views mode (syswatch.c) */

struct syswatch {
	pid_t pid;		/* a PID target; 0 with a cgroup */
	struct cgtarget *cg;	/* a cgroup target (--cgroup), else NULL */
	bool views;		/* hooks in the view, else fallback */
	char note[320];		/* why fallback mode */
	uint32_t ids[2];	/* views mode: entry and exit hook ids */
	int way;		/* views mode, a PID target: which hooks (SYSWATCH_*) */
	struct bpf_link *links[2];
	struct xp_nl *nl;	/* the view's, when it is ours to end */
	struct xp_nl *hooks_nl;	/* views mode: the socket that added our hooks */
	struct xp_events *ev;	/* the end of our own view, when it is ours */
	/*
	 * A cgroup target in views mode: one view per process that is not
	 * already on one of ours (forks follow their parent's view); the
	 * processes met so far, and the loaded object whose programs every
	 * new view's hooks get.
	 */
	struct bpf_object *obj;
	struct sw_proc *procs;
	size_t nprocs, procs_cap;
	pid_t *scan;		/* cgroup_procs()' buffer */
	size_t scan_cap;
	uint64_t next_scan;	/* mono_ns() */
};

/*
 * Choose the mode for PID: a view that follows forks, with the two hooks,
 * unless NO_VIEWS or the module is missing or refuses (then w->note says
 * why and fallback mode is used). -1 only on an error that ends the command
 * (already printed).
 */
int syswatch_begin(struct syswatch *w, pid_t pid, bool no_views);
/*
 * Beside another command's view of PID (NL: its socket, NULL when that
 * command is in fallback mode, for the reason WHY): the two hooks go into
 * that view, which stays the other command's to end. Fallback mode when
 * they cannot.
 */
void syswatch_join(struct syswatch *w, struct xp_nl *nl, pid_t pid, const char *why);
/*
 * How metrics and latency start: PID_ARG parsed, the process there, its
 * name in COMM, then syswatch_begin(). Returns an exit code: EXIT_OK to go
 * on, anything else already printed.
 */
int syswatch_open(struct syswatch *w, const char *pid_arg, bool no_views, char *comm,
		  size_t comm_len);
/*
 * The same for a cgroup target: CG_ARG parsed into *CG (which must outlive
 * W), its name in LABEL. Processes are picked up by syswatch_poll().
 */
int syswatch_open_cgroup(struct syswatch *w, struct cgtarget *cg, const char *cg_arg,
			 bool no_views);
/*
 * A cgroup target, every 100 ms at most: its id looked up again (a unit
 * restarted gets a new cgroup) and, in views mode, a view with the hooks
 * for each process that has joined and runs on none of ours.
 */
void syswatch_poll(struct syswatch *w);
/*
 * The target's names: WHAT for messages ("pid 12 (redis-server)", "cgroup
 * /system.slice/x.service"), FILE for a textfile (PREFIX, then the pid or
 * the cgroup's path made fit for a file name).
 */
void syswatch_names(const struct syswatch *w, const char *comm, const char *prefix,
		    char *what, size_t what_len, char *file, size_t file_len);
/*
 * Its Prometheus labels into B: pid, comm (COMM) and mode, or cgroup and
 * mode (views or fallback, as it is now: a cgroup's may fall back).
 */
struct xbuf;
void syswatch_labels(const struct syswatch *w, const char *comm, struct xbuf *b);
/* A PID target still running; a cgroup target always is (it may refill). */
bool syswatch_alive(struct syswatch *w);
/* Before loading OBJ: load only the programs of the chosen mode. */
void syswatch_prepare(struct syswatch *w, struct bpf_object *obj);
/* After loading: tell the BPF side the hook ids, attach. -1: printed. */
int syswatch_attach(struct syswatch *w, struct bpf_object *obj);
/* Detach, end the view. */
void syswatch_end(struct syswatch *w);
/* "views mode" or "fallback mode (why)", for headers. */
/* Whether the kernel ended our own view (said once on stderr): see events.h. */
bool syswatch_view_ended(struct syswatch *w);
const char *syswatch_mode(const struct syswatch *w);

#endif
