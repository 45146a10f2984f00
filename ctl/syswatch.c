// SPDX-License-Identifier: GPL-2.0
/* See syswatch.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cgroup.h"
#include "events.h"
#include "exporter.h"
#include "nl.h"
#include "sysev.h"
#include "syswatch.h"
#include "target.h"
#include "util.h"
#include "xprobectl.h"

/*
 * Two ways to see a view's system calls, each two hooks with a program
 * each (docs/metrics.md): the raw_syscalls tracepoints hooked in the view
 * (only its threads take the system call path that reaches them), about 20
 * instructions a call cheaper in make bench; or x64_sys_call and its
 * return, for a module that refuses the first. A cgroup's views take the
 * second: a tracepoint hook's probe tests the hooking views one by one.
 */
static const struct sys_way {
	struct hook_want hooks[2];
	const char *enter, *exit;	/* their programs */
} sys_ways[] = {
	[SYSWATCH_TP] = {
		{ { { "tracepoint:raw_syscalls:sys_enter" }, SYSEV_ENTER, 0 },
		  { { "tracepoint:raw_syscalls:sys_exit" }, SYSEV_EXIT, 0 } },
		"sysev_tp_enter", "sysev_tp_exit",
	},
	[SYSWATCH_CALL] = {
		{ { { "x64_sys_call" }, SYSEV_ENTER, 0 },
		  { { "x64_sys_call" }, SYSEV_EXIT, XPROBES_F_RETURN } },
		"sysev_on_enter", "sysev_on_exit",
	},
};

/*
 * PID's view (OWN_VIEW: made here, with the hooks; else PID's existing view
 * gets them) the first way the module takes; the ids in w->ids and the way
 * in w->way. As view_hooks_setup()/hooks_add().
 */
static int hooks_setup(struct syswatch *w, struct xp_nl *nl, pid_t pid, bool own_view)
{
	int err = -1, way;

	for (way = SYSWATCH_TP; way <= SYSWATCH_CALL; way++) {
		const struct hook_want *h = sys_ways[way].hooks;

		err = own_view ? view_hooks_setup(nl, pid, 0, h, 2, w->ids, w->note, sizeof(w->note))
			       : hooks_add(nl, pid, h, 2, w->ids, w->note, sizeof(w->note));
		w->way = way;
		if (!err || target_gone(pid, false, NULL))
			break;
	}
	return err;
}

/*
 * The module's socket in w->nl, or why fallback mode in w->note: --no-views,
 * no module, or one built from another interface than ours (an upgrade not
 * yet followed by a reload), which is said in one line on stderr too: the
 * daemon runs on without it (the metrics service would otherwise restart
 * in a loop until the reload). -1 on any other failure, said.
 */
static int module_open(struct syswatch *w, bool no_views)
{
	bool missing, other;

	if (no_views) {
		snprintf(w->note, sizeof(w->note), "--no-views");
		return 0;
	}
	w->nl = xp_nl_try_open(&missing, &other);
	if (w->nl)
		return 0;
	if (!missing && !other)
		return -1;
	snprintf(w->note, sizeof(w->note), "%s", other ?
		 "xprobes module built from other sources (reload it for per-process hooks)" :
		 "xprobes module not loaded (insmod xprobes.ko for per-process hooks)");
	return 0;
}

int syswatch_begin(struct syswatch *w, pid_t pid, bool no_views)
{
	memset(w, 0, sizeof(*w));
	w->pid = pid;
	if (module_open(w, no_views))
		return -1;
	if (!w->nl)
		return 0;
	if (hooks_setup(w, w->nl, pid, true)) {
		if (target_gone(pid, false, NULL)) {
			fprintf(stderr, "xprobectl: pid %d: no such process\n", (int)pid);
			return -1;
		}
		fprintf(stderr, "xprobectl: %s; using fallback mode\n", w->note);
		xp_nl_close(w->nl);
		w->nl = NULL;
		return 0;
	}
	w->views = true;
	w->hooks_nl = w->nl;
	w->ev = xp_events_open(pid);
	return 0;
}

void syswatch_join(struct syswatch *w, struct xp_nl *nl, pid_t pid, const char *why)
{
	memset(w, 0, sizeof(*w));
	w->pid = pid;
	if (!nl) {
		snprintf(w->note, sizeof(w->note), "%s", why);
		return;
	}
	if (hooks_setup(w, nl, pid, false)) {
		fprintf(stderr, "xprobectl: %s; syscalls in fallback mode\n", w->note);
		return;
	}
	w->views = true;
	w->hooks_nl = nl;
}

int syswatch_open(struct syswatch *w, const char *pid_arg, bool no_views, char *comm,
		  size_t comm_len)
{
	uint32_t pid;

	if (!parse_pid(pid_arg, &pid))
		return EXIT_USAGE;
	if (target_gone(pid, false, NULL)) {
		fprintf(stderr, "xprobectl: pid %u: no such process\n", pid);
		return EXIT_RUNTIME;
	}
	if (is_kthread(pid)) {
		fprintf(stderr, "xprobectl: pid %u is a kernel thread: it makes no system calls "
			"to measure; give a process's pid\n", pid);
		return EXIT_RUNTIME;
	}
	read_comm(pid, comm, comm_len);
	return syswatch_begin(w, pid, no_views) ? EXIT_RUNTIME : EXIT_OK;
}

int syswatch_open_cgroup(struct syswatch *w, struct cgtarget *cg, const char *cg_arg,
			 bool no_views)
{
	memset(w, 0, sizeof(*w));
	if (cgroup_parse(cg_arg, cg))
		return EXIT_USAGE;
	w->cg = cg;
	if (!cg->id)
		fprintf(stderr, "xprobectl: cgroup %s does not exist (yet): waiting for it\n",
			cg->name);
	if (module_open(w, no_views))
		return EXIT_RUNTIME;
	if (!w->nl)
		return EXIT_OK;
	w->views = true;
	w->hooks_nl = w->nl;
	return EXIT_OK;
}

static struct bpf_program *prog(struct bpf_object *obj, const char *name)
{
	return bpf_object__find_program_by_name(obj, name);
}

/* The fallback programs of this target: by PID, or by cgroup. */
static const char *fb_prog(const struct syswatch *w, bool exit)
{
	if (w->cg)
		return exit ? "sysev_fb_cg_exit" : "sysev_fb_cg_enter";
	return exit ? "sysev_fb_exit" : "sysev_fb_enter";
}

void syswatch_prepare(struct syswatch *w, struct bpf_object *obj)
{
	/* a cgroup in views mode may have to fall back later (fall_back()) */
	bool fb = !w->views || w->cg;
	bool call = w->views && (w->cg || w->way == SYSWATCH_CALL);

	bpf_program__set_autoload(prog(obj, "sysev_on_hook"), call);
	bpf_program__set_autoload(prog(obj, "sysev_on_enter"), call);
	bpf_program__set_autoload(prog(obj, "sysev_on_exit"), call);
	bpf_program__set_autoload(prog(obj, "sysev_tp_enter"), w->views && !call);
	bpf_program__set_autoload(prog(obj, "sysev_tp_exit"), w->views && !call);
	bpf_program__set_autoload(prog(obj, "sysev_fb_enter"), fb && !w->cg);
	bpf_program__set_autoload(prog(obj, "sysev_fb_exit"), fb && !w->cg);
	bpf_program__set_autoload(prog(obj, "sysev_fb_cg_enter"), fb && w->cg);
	bpf_program__set_autoload(prog(obj, "sysev_fb_cg_exit"), fb && w->cg);
	/* only --cgroup needs it; a kernel without CONFIG_CGROUPS refuses the type */
	bpf_map__set_autocreate(bpf_object__find_map_by_name(obj, "sysev_cgroup"), w->cg);
}

static struct bpf_link *attach(struct bpf_object *obj, const char *name)
{
	struct bpf_link *l = bpf_program__attach(prog(obj, name));

	if (libbpf_get_error(l)) {
		fprintf(stderr, "xprobectl: cannot attach %s: %s\n", name, strerror(errno));
		return NULL;
	}
	return l;
}

static int fill_hooks_map(struct bpf_object *obj, const uint32_t *ids, int way)
{
	int fd = bpf_map__fd(bpf_object__find_map_by_name(obj, "sysev_hooks")), i;

	for (i = 0; i < 2; i++) {
		uint32_t kind = sys_ways[way].hooks[i].kind;

		if (bpf_map_update_elem(fd, &ids[i], &kind, BPF_ANY))
			return -1;
	}
	return 0;
}

/*
 * Hooks IDS (one view's two) run the object's programs: each its own, as
 * the module runs them. A module without HOOK_PROG reaches sysev_on_hook
 * through the xprobes_hook tracepoint instead, which tells the hooks apart
 * by the sysev_hooks map: one link serves every view (a second would count
 * each call twice), and only then must the map have room for the ids.
 */
static int hooks_get_progs(struct syswatch *w, const uint32_t *ids)
{
	const struct sys_way *c = &sys_ways[SYSWATCH_CALL];
	struct bpf_program *own[2] = { prog(w->obj, c->enter), prog(w->obj, c->exit) };
	int err = fill_hooks_map(w->obj, ids, SYSWATCH_CALL);

	if (w->links[0])
		return err;
	if (attach_hook_progs(w->hooks_nl, ids, own, 2, prog(w->obj, "sysev_on_hook"),
			      &w->links[0]))
		return -1;
	return w->links[0] ? err : 0;
}

/*
 * The cgroup target as the fallback programs test it (sysev.h): the
 * directory in the CGROUP_ARRAY, or "not there" while it is gone.
 */
static void push_target(struct syswatch *w, struct bpf_object *obj)
{
	struct sysev_target t = { .cgroup = 1 };
	uint32_t zero = 0;
	int fd = w->cg->id ? cgroup_open(w->cg) : -1;

	if (fd >= 0) {
		t.present = !bpf_map_update_elem(
			bpf_map__fd(bpf_object__find_map_by_name(obj, "sysev_cgroup")), &zero, &fd,
			BPF_ANY);
		close(fd);
	}
	bpf_map_update_elem(bpf_map__fd(bpf_object__find_map_by_name(obj, "sysev_target")),
			    &zero, &t, BPF_ANY);
}

int syswatch_attach(struct syswatch *w, struct bpf_object *obj)
{
	w->obj = obj;
	if (w->cg) {
		push_target(w, obj);
		if (w->views) {
			w->next_scan = 0;
			syswatch_poll(w);
			return 0;
		}
	} else if (w->views) {
		const struct sys_way *c = &sys_ways[w->way];
		struct bpf_program *own[2] = { prog(obj, c->enter), prog(obj, c->exit) };

		if (fill_hooks_map(obj, w->ids, w->way)) {
			fprintf(stderr, "xprobectl: cannot fill the hooks map: %s\n", strerror(errno));
			return -1;
		}
		/* (sysev_on_hook serves the call hooks only) */
		return attach_hook_progs(w->hooks_nl, w->ids, own, 2,
					 w->way == SYSWATCH_CALL ? prog(obj, "sysev_on_hook") : NULL,
					 &w->links[0]);
	}
	w->links[0] = attach(obj, fb_prog(w, false));
	w->links[1] = w->links[0] ? attach(obj, fb_prog(w, true)) : NULL;
	return w->links[1] ? 0 : -1;
}

/* The live process PID, if met before. */
static struct sw_proc *proc_find(struct syswatch *w, pid_t pid)
{
	size_t i;

	for (i = 0; i < w->nprocs; i++)
		if (w->procs[i].pid == pid && !w->procs[i].gone)
			return &w->procs[i];
	return NULL;
}

static void proc_add(struct syswatch *w, pid_t pid, bool own)
{
	if (w->nprocs == w->procs_cap) {
		size_t c = w->procs_cap ? w->procs_cap * 2 : 64;
		struct sw_proc *p = realloc(w->procs, c * sizeof(*p));

		if (!p)
			return;		/* looked at again next time */
		w->procs = p;
		w->procs_cap = c;
	}
	w->procs[w->nprocs++] = (struct sw_proc){ .pid = pid, .own = own };
}

/* Is ROOT the root of one of our views (gone or not)? */
static bool ours(struct syswatch *w, pid_t root)
{
	size_t i;

	for (i = 0; i < w->nprocs; i++)
		if (w->procs[i].pid == root && w->procs[i].own)
			return true;
	return false;
}

/*
 * A cgroup in views mode whose processes cannot have views after all (a
 * module that cannot make them here, or one older than VIEW_GET for a
 * PID): the views made so far end, and the raw_syscalls programs, loaded
 * for this, take over.
 */
static void fall_back(struct syswatch *w, const char *why)
{
	snprintf(w->note, sizeof(w->note), "%s", why);
	fprintf(stderr, "xprobectl: %s; using fallback mode\n", w->note);
	bpf_link__destroy(w->links[0]);
	w->links[0] = NULL;
	xp_nl_close(w->nl);	/* our views end with the socket that owns them */
	w->nl = w->hooks_nl = NULL;
	w->nprocs = 0;
	w->views = false;
	w->links[0] = attach(w->obj, fb_prog(w, false));
	w->links[1] = w->links[0] ? attach(w->obj, fb_prog(w, true)) : NULL;
}

/* A process of the cgroup not met before: on one of our views, or given one. */
static void adopt(struct syswatch *w, pid_t pid)
{
	char why[400];
	uint32_t ids[2];
	pid_t root = view_root(w->nl, pid);
	int err;

	if (root == -EOPNOTSUPP) {
		fall_back(w, "the xprobes module cannot name a process's view (an older one?)");
		return;
	}
	if (root == -EAGAIN)	/* in execve, its view to follow: the next poll */
		return;
	if (root > 0) {
		if (ours(w, root)) {
			proc_add(w, pid, false);
			return;
		}
		fprintf(stderr, "xprobectl: pid %d runs on another tool's kernel view; its syscalls "
			"are not counted (end that view, or use --no-views)\n", (int)pid);
		proc_add(w, pid, false);
		return;
	}
	if (root != -ENOENT) {
		if (!target_gone(pid, false, NULL) && root != -ESRCH) {
			fprintf(stderr, "xprobectl: cannot ask the module about pid %d: %s\n", (int)pid,
				w->nl->ext_msg[0] ? w->nl->ext_msg : strerror(-root));
			proc_add(w, pid, false);
		}
		return;
	}
	err = view_hooks_setup(w->nl, pid, 0, sys_ways[SYSWATCH_CALL].hooks, 2, ids, w->note,
			       sizeof(w->note));
	if (err == -EAGAIN)	/* in execve: the next poll */
		return;
	if (err == -EOPNOTSUPP) {
		snprintf(why, sizeof(why), "%s", w->note);
		fall_back(w, why);
		return;
	}
	if (err) {
		if (!target_gone(pid, false, NULL)) {
			fprintf(stderr, "xprobectl: pid %d: %s; its syscalls are not counted\n",
				(int)pid, w->note);
			proc_add(w, pid, false);
		}
		w->note[0] = 0;
		return;
	}
	if (hooks_get_progs(w, ids)) {
		fprintf(stderr, "xprobectl: pid %d: its hooks have no program; its syscalls are "
			"not counted\n", (int)pid);
		view_del(w->nl, pid);
		proc_add(w, pid, false);
		return;
	}
	proc_add(w, pid, true);
}

/*
 * Forget the processes that are gone, but not the roots of our views: a
 * view outlives its root while processes forked from it still run, and
 * view_root() names it by that root.
 */
static void prune(struct syswatch *w)
{
	size_t i, j;

	for (i = j = 0; i < w->nprocs; i++) {
		struct sw_proc p = w->procs[i];

		if (!p.gone && target_gone(p.pid, false, NULL)) {
			if (!p.own)
				continue;
			p.gone = true;
		}
		w->procs[j++] = p;
	}
	w->nprocs = j;
}

void syswatch_poll(struct syswatch *w)
{
	uint64_t now = mono_ns();
	size_t i, n;

	if (!w->cg || !w->obj || now < w->next_scan)
		return;
	w->next_scan = now + 100000000;
	if (cgroup_refresh(w->cg))
		push_target(w, w->obj);
	if (!w->views)
		return;
	prune(w);
	n = cgroup_procs(w->cg, &w->scan, &w->scan_cap);
	for (i = 0; i < n && w->views; i++)
		if (!proc_find(w, w->scan[i]))
			adopt(w, w->scan[i]);
}

void syswatch_names(const struct syswatch *w, const char *comm, const char *prefix,
		    char *what, size_t what_len, char *file, size_t file_len)
{
	size_t n;

	if (!w->cg) {
		snprintf(what, what_len, "pid %d (%s)", (int)w->pid, comm);
		snprintf(file, file_len, "%s%d", prefix, (int)w->pid);
		return;
	}
	snprintf(what, what_len, "cgroup %s", w->cg->name);
	n = snprintf(file, file_len, "%s", prefix);
	if (n < file_len)
		cgroup_file_name(w->cg, file + n, file_len - n);
}

void syswatch_labels(const struct syswatch *w, const char *comm, struct xbuf *b)
{
	if (w->cg) {
		xbuf_printf(b, "cgroup=\"");
		xbuf_label(b, w->cg->name);
	} else {
		xbuf_printf(b, "pid=\"%d\",comm=\"", (int)w->pid);
		xbuf_label(b, comm);
	}
	xbuf_printf(b, "\",mode=\"%s\"", w->views ? "views" : "fallback");
}

bool syswatch_alive(struct syswatch *w)
{
	return w->cg || !target_gone(w->pid, false, NULL);
}

void syswatch_end(struct syswatch *w)
{
	int i;

	for (i = 0; i < 2; i++) {
		bpf_link__destroy(w->links[i]);
		w->links[i] = NULL;
	}
	if (w->nl) {
		/*
		 * A cgroup's views end with the socket that owns them: a view_del
		 * by pid could hit another tool's view if a pid of ours was reused.
		 */
		if (!w->cg)
			view_del(w->nl, w->pid);
		xp_nl_close(w->nl);
		w->nl = NULL;
	}
	xp_events_close(w->ev);
	w->ev = NULL;
	free(w->procs);
	free(w->scan);
	w->procs = NULL;
	w->scan = NULL;
	w->nprocs = w->procs_cap = w->scan_cap = 0;
}

bool syswatch_view_ended(struct syswatch *w)
{
	return xp_events_view_ended(w->ev);
}

const char *syswatch_mode(const struct syswatch *w)
{
	static char buf[400];

	if (w->views)
		return "views mode";
	snprintf(buf, sizeof(buf), "fallback mode: %s", w->note);
	return buf;
}
