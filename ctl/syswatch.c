// SPDX-License-Identifier: GPL-2.0
/* See syswatch.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "events.h"
#include "nl.h"
#include "sysev.h"
#include "syswatch.h"
#include "target.h"
#include "util.h"
#include "xprobectl.h"

static const struct hook_want sys_hooks[] = {
	{ { "x64_sys_call" }, SYSEV_ENTER, 0 },
	{ { "x64_sys_call" }, SYSEV_EXIT, XPROBES_F_RETURN },
};

int syswatch_begin(struct syswatch *w, pid_t pid, bool no_views)
{
	bool missing;

	memset(w, 0, sizeof(*w));
	w->pid = pid;
	if (no_views) {
		snprintf(w->note, sizeof(w->note), "--no-views");
		return 0;
	}
	w->nl = xp_nl_try_open(&missing);
	if (!w->nl) {
		if (!missing)
			return -1;
		snprintf(w->note, sizeof(w->note),
			 "xprobes module not loaded (insmod xprobes.ko for per-process hooks)");
		return 0;
	}
	if (view_hooks_setup(w->nl, pid, 0, sys_hooks, 2, w->ids, w->note, sizeof(w->note))) {
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
	if (hooks_add(nl, pid, sys_hooks, 2, w->ids, w->note, sizeof(w->note))) {
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
	read_comm(pid, comm, comm_len);
	return syswatch_begin(w, pid, no_views) ? EXIT_RUNTIME : EXIT_OK;
}

static struct bpf_program *prog(struct bpf_object *obj, const char *name)
{
	return bpf_object__find_program_by_name(obj, name);
}

void syswatch_prepare(struct syswatch *w, struct bpf_object *obj)
{
	bpf_program__set_autoload(prog(obj, "sysev_on_hook"), w->views);
	bpf_program__set_autoload(prog(obj, "sysev_on_enter"), w->views);
	bpf_program__set_autoload(prog(obj, "sysev_on_exit"), w->views);
	bpf_program__set_autoload(prog(obj, "sysev_fb_enter"), !w->views);
	bpf_program__set_autoload(prog(obj, "sysev_fb_exit"), !w->views);
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

int syswatch_attach(struct syswatch *w, struct bpf_object *obj)
{
	int fd = bpf_map__fd(bpf_object__find_map_by_name(obj, "sysev_hooks")), i;

	if (w->views) {
		for (i = 0; i < 2; i++) {
			uint32_t kind = sys_hooks[i].kind;

			if (bpf_map_update_elem(fd, &w->ids[i], &kind, BPF_ANY)) {
				fprintf(stderr, "xprobectl: cannot fill the hooks map: %s\n",
					strerror(errno));
				return -1;
			}
		}
		struct bpf_program *own[2] = {	/* in sys_hooks[]' order */
			prog(obj, "sysev_on_enter"), prog(obj, "sysev_on_exit"),
		};

		return attach_hook_progs(w->hooks_nl, w->ids, own, 2,
					 prog(obj, "sysev_on_hook"), &w->links[0]);
	}
	w->links[0] = attach(obj, "sysev_fb_enter");
	w->links[1] = w->links[0] ? attach(obj, "sysev_fb_exit") : NULL;
	return w->links[1] ? 0 : -1;
}

void syswatch_end(struct syswatch *w)
{
	int i;

	for (i = 0; i < 2; i++) {
		bpf_link__destroy(w->links[i]);
		w->links[i] = NULL;
	}
	if (w->nl) {
		view_del(w->nl, w->pid);
		xp_nl_close(w->nl);
		w->nl = NULL;
	}
	xp_events_close(w->ev);
	w->ev = NULL;
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
