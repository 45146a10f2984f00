// SPDX-License-Identifier: GPL-2.0
/* The watched process: its view and hooks, its liveness. See target.h. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <netlink/attr.h>
#include <bpf/libbpf.h>
#include "nl.h"
#include "target.h"

static int got_pid(struct nlattr **tb, void *arg)
{
	if (tb[XPROBES_A_PID])
		*(pid_t *)arg = (pid_t)nla_get_u32(tb[XPROBES_A_PID]);
	return 0;
}

pid_t view_root(struct xp_nl *nl, pid_t pid)
{
	struct nl_msg *msg = xp_nl_msg(nl, XPROBES_CMD_VIEW_GET, 0);
	pid_t root = 0;
	int err;

	if (!msg || nla_put_u32(msg, XPROBES_A_PID, pid))
		return -ENOMEM;
	err = xp_nl_call(nl, msg, got_pid, &root);
	return err ? err : root;
}

bool nl_again(int err, int *tries)
{
	if (err != -EAGAIN || ++*tries >= 40 || stop_req)
		return false;
	if (*tries == 1 && getenv("XPROBECTL_SAY_AGAIN"))	/* selftest 21 */
		fprintf(stderr, "xprobectl: the module says try again: asking every 50 ms\n");
	usleep(50000);
	return true;
}

int view_del(struct xp_nl *nl, pid_t pid)
{
	struct nl_msg *msg;
	int err, tries = 0;

	do {
		msg = xp_nl_msg(nl, XPROBES_CMD_VIEW_DEL, 0);
		if (!msg || nla_put_u32(msg, XPROBES_A_PID, pid))
			return -ENOMEM;
		err = xp_nl_call(nl, msg, NULL, NULL);
	} while (nl_again(err, &tries));
	return err;
}

int view_new(struct xp_nl *nl, pid_t pid, uint32_t flags, int (*cb)(struct nlattr **, void *),
	     void *arg)
{
	struct nl_msg *msg;
	int err, tries = 0;

	do {
		msg = xp_nl_msg(nl, XPROBES_CMD_VIEW_NEW, 0);
		if (!msg || nla_put_u32(msg, XPROBES_A_PID, pid) ||
		    nla_put_u32(msg, XPROBES_A_FLAGS, flags))
			return -ENOMEM;
		err = xp_nl_call(nl, msg, cb, arg);
	} while (nl_again(err, &tries));
	return err;
}

int hooks_add(struct xp_nl *nl, pid_t pid, const struct hook_want *want, int n,
	      uint32_t *ids, char *note, size_t note_len)
{
	struct nl_msg *msg;
	int i, j, err = 0, tries;

	for (i = 0; i < n; i++) {
		const struct hook_want *w = &want[i];
		uint32_t id = 0;

		for (j = 0; j < 2 && w->syms[j]; j++) {
			tries = 0;
			do {
				msg = xp_nl_msg(nl, XPROBES_CMD_HOOK_ADD, 0);
				if (!msg || nla_put_u32(msg, XPROBES_A_PID, pid) ||
				    nla_put_string(msg, XPROBES_A_SYMBOL, w->syms[j]) ||
				    nla_put_u64(msg, XPROBES_A_COOKIE, w->kind) ||
				    nla_put_u32(msg, XPROBES_A_FLAGS, w->flags)) {
					snprintf(note, note_len, "out of memory");
					return -ENOMEM;
				}
				err = xp_nl_call(nl, msg, xp_nl_got_hook_id, &id);
			} while (nl_again(err, &tries));
			if (!err || err == -EAGAIN)	/* in execve still: no other symbol either */
				break;
		}
		if (err) {
			snprintf(note, note_len, "cannot hook %s%s: %s", w->syms[0],
				 w->flags & XPROBES_F_RETURN ? " (return)" : "",
				 nl->ext_msg[0] ? nl->ext_msg : strerror(-err));
			return err;
		}
		ids[i] = id;
	}
	return 0;
}

int hooks_run_prog(struct xp_nl *nl, const uint32_t *ids, int n, int prog_fd)
{
	struct nl_msg *msg;
	int i, err;

	for (i = 0; i < n; i++) {
		msg = xp_nl_msg(nl, XPROBES_CMD_HOOK_PROG, 0);
		if (!msg || nla_put_u32(msg, XPROBES_A_HOOK_ID, ids[i]) ||
		    (prog_fd >= 0 && nla_put_s32(msg, XPROBES_A_PROG_FD, prog_fd)))
			return -ENOMEM;
		err = xp_nl_call(nl, msg, NULL, NULL);
		if (err)
			return err;
	}
	return 0;
}

int attach_hook_prog(struct xp_nl *nl, const uint32_t *ids, int n, struct bpf_program *prog,
		     struct bpf_link **link)
{
	const char *name = bpf_program__name(prog);
	int err;

	*link = NULL;
	err = hooks_run_prog(nl, ids, n, bpf_program__fd(prog));
	if (!err)
		return 0;
	if (err != -EOPNOTSUPP) {
		fprintf(stderr, "xprobectl: cannot give the hooks BPF program %s: %s\n", name,
			nl->ext_msg[0] ? nl->ext_msg : strerror(-err));
		return -1;
	}
	/* A module without HOOK_PROG: the tracepoint reaches the program too. */
	return attach_hook_tp(prog, link);
}

int attach_hook_tp(struct bpf_program *prog, struct bpf_link **link)
{
	*link = bpf_program__attach(prog);
	if (libbpf_get_error(*link)) {
		*link = NULL;
		fprintf(stderr, "xprobectl: cannot attach %s to the xprobes_hook tracepoint: %s\n",
			bpf_program__name(prog), strerror(errno));
		return -1;
	}
	return 0;
}

int hooks_give_progs(struct xp_nl *nl, const uint32_t *ids, struct bpf_program *const *progs,
		     int n, int *at)
{
	int i, err;

	for (i = 0; i < n; i++) {
		err = hooks_run_prog(nl, &ids[i], 1, bpf_program__fd(progs[i]));
		if (err) {
			*at = i;
			return err;
		}
	}
	return 0;
}

int attach_hook_progs(struct xp_nl *nl, const uint32_t *ids, struct bpf_program *const *progs,
		      int n, struct bpf_program *fallback, struct bpf_link **link)
{
	int i, err;

	*link = NULL;
	err = hooks_give_progs(nl, ids, progs, n, &i);
	if (!err)
		return 0;
	if (fallback)
		return attach_hook_prog(nl, ids, n, fallback, link);
	fprintf(stderr, "xprobectl: cannot give the hooks BPF program %s: %s\n",
		bpf_program__name(progs[i]), nl->ext_msg[0] ? nl->ext_msg : strerror(-err));
	return -1;
}

int view_hooks_setup(struct xp_nl *nl, pid_t pid, uint32_t view_flags,
		     const struct hook_want *want, int n, uint32_t *ids,
		     char *note, size_t note_len)
{
	struct nl_msg *msg;
	int err;

	note[0] = 0;
	msg = xp_nl_msg(nl, XPROBES_CMD_VIEW_NEW, 0);
	if (!msg || nla_put_u32(msg, XPROBES_A_PID, pid) ||
	    nla_put_u32(msg, XPROBES_A_FLAGS, view_flags)) {
		snprintf(note, note_len, "out of memory");
		return -1;
	}
	err = xp_nl_call(nl, msg, NULL, NULL);
	if (err) {
		snprintf(note, note_len, "cannot create a view: %s",
			 nl->ext_msg[0] ? nl->ext_msg : strerror(-err));
		return err;
	}
	err = hooks_add(nl, pid, want, n, ids, note, note_len);
	if (err) {
		view_del(nl, pid);
		return err == -EAGAIN ? err : -1;
	}
	return 0;
}

int target_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	return -1;
#endif
}

bool target_wait(int pidfd, int evfd, int ms)
{
	/* poll() skips a negative fd */
	struct pollfd p[2] = { { .fd = pidfd, .events = POLLIN }, { .fd = evfd, .events = POLLIN } };

	return poll(p, 2, ms) > 0 && (p[0].revents & POLLIN);
}

/* /proc/PID/stat into BUF: its ')' after the comm, NULL if there is none (gone). */
static char *stat_after_comm(pid_t pid, char *buf, size_t len)
{
	char path[64], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	p = fgets(buf, len, f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	return p;
}

bool is_kthread(pid_t pid)
{
	char buf[512], *p = stat_after_comm(pid, buf, sizeof(buf));
	unsigned long flags = 0;
	int i;

	/* after the comm: state, ppid, pgrp, session, tty_nr, tpgid, then flags */
	for (i = 0; p && i < 7; i++)
		p = strchr(p + 1, ' ');
	if (p)
		flags = strtoul(p + 1, NULL, 10);
	return flags & 0x00200000;	/* PF_KTHREAD */
}

bool target_gone(pid_t pid, bool child, int *status)
{
	char buf[512], *p;

	if (child)
		return waitpid(pid, status, WNOHANG) == pid;
	p = stat_after_comm(pid, buf, sizeof(buf));
	return !p || p[2] == 'Z' || p[2] == 'X';
}

void read_comm(pid_t pid, char *out, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "re");
	if (!f || !fgets(out, len, f))
		snprintf(out, len, "?");
	else
		out[strcspn(out, "\n")] = 0;
	if (f)
		fclose(f);
}

volatile sig_atomic_t stop_req;

/* The first asks for a clean end (the report, probes detached); a second one ends it now. */
static void on_signal(int sig)
{
	if (stop_req) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	stop_req = 1;
}

void stop_on_signals(void)
{
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
}

static bool lb_verbose, lb_warnings;

static int libbpf_log(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	if (lb_verbose || (lb_warnings && lvl == LIBBPF_WARN))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

void libbpf_messages(bool verbose, bool warnings)
{
	lb_verbose = verbose;
	lb_warnings = warnings;
	libbpf_set_print(libbpf_log);
}

bool parse_interval(const char *s, double *v)
{
	return parse_secs(s, v) && *v >= MIN_INTERVAL;
}

bool parse_secs(const char *s, double *v)
{
	char *end;

	*v = strtod(s, &end);
	return *s && !*end && *v > 0 && *v < 1e7;
}

uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}
