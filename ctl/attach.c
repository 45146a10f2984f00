// SPDX-License-Identifier: GPL-2.0
/*
 * xprobectl attach PID OBJ.bpf.o: someone's BPF object, written for global
 * attach, run for one process only, through its kernel view.
 *
 * Each program is classified by its section name before anything is
 * loaded: kprobe/FUNC[+OFF] and ksyscall/NAME (on __x64_sys_NAME, as
 * libbpf attaches it) become a hook in PID's view that runs the program
 * itself on every hit (XPROBES_CMD_HOOK_PROG), with the hook's registers as
 * its context, as a kprobe at that instruction gives them. raw_tp/NAME and
 * tp_btf/NAME become a tracepoint hook (hook add PID tracepoint:NAME) that
 * runs the program on PID's events with the tracepoint's own arguments, as
 * the tracepoint would have run it everywhere. uprobe/,
 * uretprobe/ and usdt/ programs with a place in their section name are
 * attached by libbpf bound to PID: the kernel's uprobes are per process
 * already (breakpoints only in that mm). Every other kind is refused with
 * the reason, and then the whole object is: a program that cannot run per
 * process is never attached globally instead, and half an object is not
 * what its author measured with.
 *
 * Per process means that process: the view attach makes follows no fork,
 * and a view PID has already (another tool's) is used only if PID is its
 * root and alone on it. The object is loaded once the module answered,
 * and the maps pinned once everything is in, so a session that fails
 * leaves nothing behind; Ctrl-C during the setup ends it once the probes
 * are in, and takes them out.
 *
 * The object is loaded by libbpf as written (CO-RE, its maps, its global
 * data); --pin DIR pins its maps for the user's own tools (they stay
 * after the end). The session lasts until -d, Ctrl-C or the process's
 * exit; then each hook is removed (the module gives the program back) and
 * the view too, if this command made it. Each hook's hits are printed at
 * the end: what the program saw.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "events.h"
#include "nl.h"
#include "target.h"
#include "util.h"
#include "xprobectl.h"

static void attach_usage(FILE *f)
{
	fprintf(f,
"usage: xprobectl attach PID OBJ.bpf.o [--pin DIR] [-d SECONDS] [-v]\n"
"Runs the BPF programs of OBJ, written for global attach, for process PID only: each\n"
"kprobe/FUNC[+OFF] or ksyscall/NAME program becomes a hook in PID's kernel view that\n"
"runs it on every hit, with the registers a kprobe there would give it; each\n"
"raw_tp/NAME or tp_btf/NAME program turns that kernel tracepoint on in PID's view\n"
"only and runs on PID's events with the tracepoint's arguments; other processes\n"
"run the kernel's own text and never reach them. uprobe/PATH:FUNC[+OFF],\n"
"uretprobe/... and usdt/PATH:PROVIDER:NAME programs are attached bound to PID (the\n"
"kernel's uprobes are per process already). A program of any other kind (kretprobe,\n"
"classic tp/ tracepoints, fentry, ...) is refused with the reason, and then the whole\n"
"object: nothing is ever attached globally instead. Until -d, Ctrl-C or PID's exit;\n"
"then the probes (and the view, if attach made it) go, and each hook's hits are\n"
"printed.\n"
"  -p, --pin DIR            pin the object's maps under DIR (in bpffs) for your own\n"
"                           tools, e.g. bpftool map dump pinned DIR/NAME; they stay\n"
"  -d, --duration SECONDS   stop after SECONDS\n"
"  -v, --verbose            libbpf's messages\n");
}

/* One program of the object, and the hook (or the uprobe) it runs from. */
struct aprog {
	struct bpf_program *prog;
	struct target at;	/* a hook's place: symbol, offset */
	uint32_t hook;		/* 0 until added */
	uint64_t hits;
	/* a user-space probe instead, bound to PID: uprobe, uretprobe, usdt */
	enum { AP_HOOK, AP_UPROBE, AP_USDT } kind;
	bool ret;
	char path[512], name[256], provider[256];
	unsigned long off;	/* uprobe: bytes past FUNCTION */
	struct bpf_link *link;
};

/* "N" or "0xN" whole, nothing else (no sign, no blanks): *V, or false. */
static bool parse_off(const char *s, unsigned long *v)
{
	char *end;

	if (!*s || !(s[0] >= '0' && s[0] <= '9'))
		return false;
	errno = 0;
	*v = strtoul(s, &end, 0);
	return !errno && !*end && *v < (1ul << 20);
}

/* "SYM[+OFF]" into AT, quietly; false if it is not one. */
static bool parse_sym(const char *s, struct target *at)
{
	const char *plus = strchr(s, '+');
	size_t n = plus ? (size_t)(plus - s) : strlen(s);
	unsigned long off = 0;

	memset(at, 0, sizeof(*at));
	if (!n || n >= sizeof(at->sym) || (plus && !parse_off(plus + 1, &off)))
		return false;
	memcpy(at->sym, s, n);
	at->sym[n] = 0;
	at->has_off = plus != NULL;
	at->off = (uint32_t)off;
	return true;
}

/*
 * "PATH:FUNC[+OFF]" (uprobe; a uretprobe takes no offset: away from the
 * entry the word at the stack pointer is not the return address, and the
 * kernel would overwrite the process's data with its trampoline's
 * address) or "PATH:PROVIDER:NAME" (usdt), as libbpf spells them after the
 * section's kind; false if it is not one.
 */
static bool parse_user_target(const char *t, struct aprog *p)
{
	const char *c = strchr(t, ':'), *plus;
	size_t n;

	if (!c || c == t || !c[1] || (size_t)(c - t) >= sizeof(p->path))
		return false;
	snprintf(p->path, sizeof(p->path), "%.*s", (int)(c - t), t);
	c++;
	if (p->kind == AP_USDT) {
		const char *d = strchr(c, ':');

		if (!d || d == c || !d[1] || strchr(d + 1, ':') ||
		    (size_t)(d - c) >= sizeof(p->provider) || strlen(d + 1) >= sizeof(p->name))
			return false;
		snprintf(p->provider, sizeof(p->provider), "%.*s", (int)(d - c), c);
		snprintf(p->name, sizeof(p->name), "%s", d + 1);
		return true;
	}
	plus = strchr(c, '+');
	n = plus ? (size_t)(plus - c) : strlen(c);
	if (!n || n >= sizeof(p->name) || (plus && (p->ret || !parse_off(plus + 1, &p->off))))
		return false;
	snprintf(p->name, sizeof(p->name), "%.*s", (int)n, c);
	return true;
}

/*
 * Where P's program can run per process: fills P and returns NULL, or the
 * reason it cannot (WHY holds the text when it needs the section).
 */
static const char *classify(struct aprog *p, char *why, size_t len)
{
	const char *sec = bpf_program__section_name(p->prog);
	static const struct {
		const char *prefix;
		int kind;
		bool ret;
	} user[] = {
		{ "uprobe/", AP_UPROBE, false }, { "uprobe.s/", AP_UPROBE, false },
		{ "uretprobe/", AP_UPROBE, true }, { "uretprobe.s/", AP_UPROBE, true },
		{ "usdt/", AP_USDT, false },
	};
	static const char *const tps[] = { "raw_tp/", "raw_tracepoint/", "tp_btf/" };
	char sym[600];
	size_t i;

	/* A uprobe bound to one process is the kernel's own per-process probe. */
	for (i = 0; i < sizeof(user) / sizeof(user[0]); i++) {
		size_t n = strlen(user[i].prefix);

		if (strncmp(sec, user[i].prefix, n))
			continue;
		p->kind = user[i].kind;
		p->ret = user[i].ret;
		if (!parse_user_target(sec + n, p)) {
			snprintf(why, len, "'%s' is not %s", sec + n, p->kind == AP_USDT ?
				 "PATH:PROVIDER:NAME" : p->ret ? "PATH:FUNCTION (a return probe "
				 "takes no offset)" : "PATH:FUNCTION[+OFFSET]");
			return why;
		}
		return NULL;
	}
	p->kind = AP_HOOK;
	if (!strcmp(sec, "kprobe") || !strcmp(sec, "ksyscall"))
		return "no function in its section name: a hook needs SEC(\"kprobe/FUNC\")";
	if (!strncmp(sec, "kprobe/", 7) || !strncmp(sec, "ksyscall/", 9)) {
		bool sys = sec[1] == 's';
		const char *fn = sec + (sys ? 9 : 7);

		if (!*fn || strpbrk(fn, "*?"))
			return "no single function in its section name (a hook needs one)";
		if (sys && strchr(fn, '+'))
			return "ksyscall/NAME takes no offset (libbpf's neither)";
		snprintf(sym, sizeof(sym), "%s%s", sys ? "__x64_sys_" : "", fn);
		if (!parse_sym(sym, &p->at)) {
			snprintf(why, len, "'%s' is not FUNCTION[+OFFSET]", fn);
			return why;
		}
		return NULL;
	}
	if (!strncmp(sec, "kretprobe", 9) || !strncmp(sec, "kretsyscall", 11) ||
	    !strncmp(sec, "fexit", 5))
		return "a return probe: views have return hooks only at the syscall exit "
		       "(xprobectl hook add PID x64_sys_call --return)";
	if (!strncmp(sec, "kprobe.", 7) || !strncmp(sec, "ksyscall.", 9))
		return "a kind of kprobe a hook does not run (multi, session or sleepable): "
		       "give each function a kprobe/FUNC program";
	/* raw_tp/NAME, raw_tracepoint/NAME, tp_btf/NAME: the tracepoint, on in PID's view */
	for (i = 0; i < sizeof(tps) / sizeof(tps[0]); i++) {
		size_t n = strlen(tps[i]);
		const char *name = sec + n;

		if (strncmp(sec, tps[i], n))
			continue;
		if (!*name || strpbrk(name, "*?:/+"))
			return "no single tracepoint in its section name: a tracepoint hook needs "
			       "SEC(\"raw_tp/NAME\") or SEC(\"tp_btf/NAME\")";
		memset(&p->at, 0, sizeof(p->at));
		snprintf(p->at.sym, sizeof(p->at.sym), "tracepoint:%s", name);
		return NULL;
	}
	if (!strncmp(sec, "raw_tp", 6) || !strncmp(sec, "raw_tracepoint", 14) ||
	    !strncmp(sec, "tp_btf", 6))
		return "a kind of tracepoint program a hook does not run (writable, or no "
		       "tracepoint named): SEC(\"raw_tp/NAME\") or SEC(\"tp_btf/NAME\")";
	if (!strcmp(sec, "tp") || !strncmp(sec, "tp/", 3) || !strncmp(sec, "tracepoint", 10))
		return "a classic tracepoint program reads the trace event's record, which a "
		       "tracepoint hook does not build: write it as raw_tp/NAME or tp_btf/NAME";
	if (!strncmp(sec, "uprobe.multi", 12) || !strncmp(sec, "uretprobe.multi", 15))
		return "a multi-function uprobe: give each function a uprobe/PATH:FUNCTION program";
	if (!strncmp(sec, "uprobe", 6) || !strncmp(sec, "uretprobe", 9) || !strncmp(sec, "usdt", 4))
		return "a user-space probe without a place in its section name: "
		       "SEC(\"uprobe/PATH:FUNCTION\") or SEC(\"usdt/PATH:PROVIDER:NAME\")";
	if (!strncmp(sec, "fentry", 6) || !strncmp(sec, "fmod_ret", 8))
		return "an fentry program goes through the kernel's shared trampoline: use "
		       "kprobe/FUNC";
	snprintf(why, len, "'%s' is not a kernel or user-space probe", sec);
	return why;
}

/* Two programs on one place: a view has one hook per address. */
static const char *same_place(const struct aprog *p, int n, char *why, size_t len)
{
	int i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < i; j++)
			if (p[i].kind == AP_HOOK && p[j].kind == AP_HOOK &&
			    !strcmp(p[i].at.sym, p[j].at.sym) && p[i].at.off == p[j].at.off) {
				snprintf(why, len, "programs %s and %s both at %s+%u: a view has one hook "
					 "per address or tracepoint; make them one program",
					 bpf_program__name(p[j].prog), bpf_program__name(p[i].prog),
					 p[i].at.sym, p[i].at.off);
				return why;
			}
	return NULL;
}

struct hits_arg {
	struct aprog *p;
	int n;
};

static int got_hits(struct nlattr **tb, void *arg)
{
	struct hits_arg *h = arg;
	uint32_t id;
	int i;

	if (!tb[XPROBES_A_HOOK_ID] || !tb[XPROBES_A_HITS])
		return 0;
	id = nla_get_u32(tb[XPROBES_A_HOOK_ID]);
	for (i = 0; i < h->n; i++)
		if (h->p[i].hook == id)
			h->p[i].hits = nla_get_u64(tb[XPROBES_A_HITS]);
	return 0;
}

/* P's uprobe or USDT probe, bound to PID: 0, or -1 (printed). */
static int user_probe_add(uint32_t pid, struct aprog *p)
{
	char msg[128], path[600];
	long err;

	/* PID's file, if it lives in another mount namespace (a container) */
	if (p->path[0] == '/')
		snprintf(path, sizeof(path), "/proc/%u/root%s", pid, p->path);
	else
		snprintf(path, sizeof(path), "%s", p->path);	/* libbpf looks it up */
	if (p->kind == AP_USDT) {
		p->link = bpf_program__attach_usdt(p->prog, (pid_t)pid, path, p->provider,
						   p->name, NULL);
	} else {
		LIBBPF_OPTS(bpf_uprobe_opts, o, .retprobe = p->ret,
			    .func_name = p->name[0] ? p->name : NULL);

		p->link = bpf_program__attach_uprobe_opts(p->prog, (pid_t)pid, path, p->off, &o);
	}
	err = libbpf_get_error(p->link);
	if (!err)
		return 0;
	p->link = NULL;
	libbpf_strerror((int)err, msg, sizeof(msg));
	fprintf(stderr, "xprobectl: attach: program %s (%s): cannot place it in pid %u: %s "
		"(-v says why)\n", bpf_program__name(p->prog), bpf_program__section_name(p->prog),
		pid, msg);
	return -1;
}

/* Add P's hook to PID's view and give it the program: 0, or -1 (printed). */
static int hook_prog_add(struct xp_nl *nl, uint32_t pid, struct aprog *p)
{
	const char *name = bpf_program__name(p->prog);
	struct nl_msg *msg = xp_nl_msg(nl, XPROBES_CMD_HOOK_ADD, 0);
	int err;

	if (!msg || nla_put_u32(msg, XPROBES_A_PID, pid) ||
	    nla_put_string(msg, XPROBES_A_SYMBOL, p->at.sym) ||
	    (p->at.has_off && nla_put_u32(msg, XPROBES_A_OFFSET, p->at.off)) ||
	    nla_put_u64(msg, XPROBES_A_COOKIE, 0)) {
		fprintf(stderr, "xprobectl: attach: out of memory\n");
		return -1;
	}
	err = xp_nl_call(nl, msg, xp_nl_got_hook_id, &p->hook);
	if (err) {
		fprintf(stderr, "xprobectl: attach: program %s (%s): cannot hook %s in pid %u: %s\n",
			name, bpf_program__section_name(p->prog), p->at.sym, pid,
			nl->ext_msg[0] ? nl->ext_msg : strerror(-err));
		p->hook = 0;
		return -1;
	}
	err = hooks_run_prog(nl, &p->hook, 1, bpf_program__fd(p->prog));
	if (err) {
		fprintf(stderr, "xprobectl: attach: program %s (%s): the hook would not run it: %s\n",
			name, bpf_program__section_name(p->prog),
			nl->ext_msg[0] ? nl->ext_msg : strerror(-err));
		return -1;
	}
	return 0;
}

/* The hooks of P go (their programs with them), and the view if it is ours. */
static void detach_all(struct xp_nl *nl, uint32_t pid, struct aprog *p, int n, bool own_view)
{
	struct nl_msg *msg;
	int i;

	for (i = 0; i < n; i++) {
		bpf_link__destroy(p[i].link);	/* NULL: nothing */
		p[i].link = NULL;
		if (!p[i].hook)	/* none without nl: user-space probes only */
			continue;
		msg = xp_nl_msg(nl, XPROBES_CMD_HOOK_DEL, 0);
		if (msg && !nla_put_u32(msg, XPROBES_A_HOOK_ID, p[i].hook))
			xp_nl_call(nl, msg, NULL, NULL);	/* gone with the view: nothing to do */
		p[i].hook = 0;
	}
	if (own_view)
		view_del(nl, pid);
}

/* Each hook's hits, read before the hooks go. */
static void read_hits(struct xp_nl *nl, uint32_t pid, struct aprog *p, int n)
{
	struct hits_arg h = { p, n };
	struct nl_msg *msg;

	if (!nl)
		return;
	msg = xp_nl_msg(nl, XPROBES_CMD_HOOK_GET, 1);
	if (msg && !nla_put_u32(msg, XPROBES_A_PID, pid))
		xp_nl_call(nl, msg, got_hits, &h);
}

/* Open OBJ and sort its programs: the count, or -1 (each refusal printed). */
static int open_object(const char *path, struct bpf_object **objp, struct aprog **out)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct bpf_program *prog;
	struct aprog *p = NULL;
	int n = 0, bad = 0;
	long err = libbpf_get_error(obj);

	if (err) {
		char msg[128];

		libbpf_strerror((int)err, msg, sizeof(msg));
		fprintf(stderr, "xprobectl: attach: cannot open %s: %s (a BPF object built with "
			"clang -target bpf)\n", path, msg);
		return -1;
	}
	bpf_object__for_each_program(prog, obj) {
		char why[700];
		const char *no;
		struct aprog *q;

		if (!bpf_program__autoload(prog))
			continue;
		q = realloc(p, (n + 1) * sizeof(*p));
		if (!q) {
			free(p);
			bpf_object__close(obj);
			return -1;
		}
		p = q;
		memset(&p[n], 0, sizeof(p[n]));
		p[n].prog = prog;
		no = classify(&p[n], why, sizeof(why));
		if (no) {
			fprintf(stderr, "xprobectl: attach: program %s (%s): refused: %s\n",
				bpf_program__name(prog), bpf_program__section_name(prog), no);
			bad++;
		}
		n++;
	}
	if (!bad && n) {
		char why[700];
		const char *no = same_place(p, n, why, sizeof(why));

		if (no) {
			fprintf(stderr, "xprobectl: attach: %s\n", no);
			bad++;
		}
	}
	if (!bad && !n)
		fprintf(stderr, "xprobectl: attach: %s has no program to attach\n", path);
	if (bad || !n) {
		if (bad)
			fprintf(stderr, "xprobectl: attach: nothing attached: %d of the %d programs of %s "
				"cannot run per process\n", bad, n, path);
		free(p);
		bpf_object__close(obj);
		return -1;
	}
	*objp = obj;
	*out = p;
	return n;
}

/* How a session ended. */
enum aend { AEND_STOP, AEND_DURATION, AEND_EXIT, AEND_VIEW };

/*
 * Until -d, Ctrl-C, the process's exit or the end of its view, the hits
 * read every 200 ms: an exit takes the view and its hooks, and their last
 * figures are the ones read before.
 */
static enum aend wait_session(struct xp_nl *nl, uint32_t pid, int pidfd, struct xp_events *ev,
			      double duration, struct aprog *p, int n)
{
	uint64_t end = duration > 0 ? mono_ns() + (uint64_t)(duration * 1e9) : 0;

	for (;;) {
		uint64_t now = mono_ns();
		int ms = 200;

		read_hits(nl, pid, p, n);
		if (stop_req)
			return AEND_STOP;
		if (end && now >= end)
			return AEND_DURATION;
		if (end && (end - now) / 1000000 < (uint64_t)ms)
			ms = (int)((end - now) / 1000000) + 1;
		if (pidfd >= 0) {
			if (target_wait(pidfd, xp_events_fd(ev), ms))
				return AEND_EXIT;
		} else {
			usleep(ms * 1000);
			if (target_gone(pid, false, NULL))
				return AEND_EXIT;
		}
		if (xp_events_view_ended(ev))	/* it said why */
			return AEND_VIEW;
	}
}

/* The view PID runs on, asked for: what it is, through VIEW_GET. */
struct view_info {
	pid_t root;
	uint32_t flags, procs;
};

static int got_view(struct nlattr **tb, void *arg)
{
	struct view_info *v = arg;

	if (tb[XPROBES_A_PID])
		v->root = (pid_t)nla_get_u32(tb[XPROBES_A_PID]);
	if (tb[XPROBES_A_FLAGS])
		v->flags = nla_get_u32(tb[XPROBES_A_FLAGS]);
	if (tb[XPROBES_A_NR_PROCS])
		v->procs = nla_get_u32(tb[XPROBES_A_NR_PROCS]);
	return 0;
}

/*
 * A view for PID alone: a new one that does not follow forks (*OWN), or
 * one PID already has if nothing else runs on it. 0, or -1 (printed).
 */
static int view_for(struct xp_nl *nl, uint32_t pid, bool *own)
{
	struct view_info v = { 0 };
	struct nl_msg *msg;
	int err = view_new(nl, pid, XPROBES_F_NO_FOLLOW_FORK, NULL, NULL);

	*own = !err;
	if (!err)
		return 0;
	if (err != -EEXIST) {
		xp_nl_perror(nl, "attach: view add");
		return -1;
	}
	msg = xp_nl_msg(nl, XPROBES_CMD_VIEW_GET, 0);
	if (!msg || nla_put_u32(msg, XPROBES_A_PID, pid) || xp_nl_call(nl, msg, got_view, &v)) {
		xp_nl_perror(nl, "attach: view list");
		return -1;
	}
	if (v.root != (pid_t)pid || v.procs > 1) {
		fprintf(stderr, "xprobectl: attach: pid %u runs on the kernel view of pid %d with %u "
			"process(es): hooks there would run for all of them (attach to a process "
			"on a view of its own, or end that view: xprobectl view del %d)\n",
			pid, (int)v.root, v.procs, (int)v.root);
		return -1;
	}
	if (!(v.flags & XPROBES_F_NO_FOLLOW_FORK))
		fprintf(stderr, "xprobectl: attach: pid %u's view follows its forks: what it forks "
			"from now on runs these programs too\n", pid);
	return 0;
}

int cmd_attach(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pin", required_argument, NULL, 'p' },
		{ "duration", required_argument, NULL, 'd' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *pin = NULL, *obj_path;
	struct bpf_object *obj = NULL;
	struct xp_events *ev = NULL;
	struct aprog *p = NULL;
	struct xp_nl *nl = NULL;
	bool verbose = false, own_view = false, pinned = false, hooks = false;
	double duration = 0;
	enum aend how;
	uint32_t pid;
	int c, n, i, err, pidfd = -1, rc = EXIT_RUNTIME;

	while ((c = getopt_long(argc, argv, "p:d:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'p': pin = optarg; break;
		case 'd':
			if (!parse_secs(optarg, &duration))
				return usage_error("bad duration '%s'", optarg);
			break;
		case 'v': verbose = true; break;
		case 'h': attach_usage(stdout); return EXIT_OK;
		default: return EXIT_USAGE;
		}
	}
	if (optind + 2 != argc)
		return usage_error("attach takes PID and a BPF object (OBJ.bpf.o)");
	if (!parse_pid(argv[optind], &pid))
		return EXIT_USAGE;
	obj_path = argv[optind + 1];
	/* the process, held from now on: a pid reused meanwhile is not it */
	pidfd = target_pidfd(pid);
	if ((pidfd < 0 && errno == ESRCH) || (kill((pid_t)pid, 0) && errno == ESRCH)) {
		fprintf(stderr, "xprobectl: attach: no process %u\n", pid);
		goto out;
	}
	libbpf_messages(verbose, false);
	/* Ctrl-C from here on ends the session, with its probes taken out */
	stop_on_signals();
	n = open_object(obj_path, &obj, &p);
	if (n < 0)
		goto out;
	for (i = 0; i < n; i++)
		hooks |= p[i].kind == AP_HOOK;
	if (hooks) {	/* kernel probes: the module, before the object is loaded */
		nl = xp_nl_open();
		if (!nl)
			goto out;
	}
	err = bpf_object__load(obj);
	if (err) {
		char msg[128];

		libbpf_strerror(err, msg, sizeof(msg));
		fprintf(stderr, "xprobectl: attach: %s would not load: %s (-v shows libbpf's "
			"messages and the verifier's log)\n", obj_path, msg);
		goto out;
	}
	if (stop_req || (pidfd >= 0 && target_wait(pidfd, -1, 0))) {
		fprintf(stderr, stop_req ? "xprobectl: attach: stopped before anything was attached\n" :
			"xprobectl: attach: pid %u exited before anything was attached\n", pid);
		goto out;
	}
	if (hooks) {
		if (view_for(nl, pid, &own_view))
			goto out;
		ev = xp_events_open(pid);
	}
	for (i = 0; i < n && !stop_req; i++)
		if (p[i].kind == AP_HOOK ? hook_prog_add(nl, pid, &p[i]) : user_probe_add(pid, &p[i]))
			goto undo;
	if (stop_req)
		goto undo;
	if (pin) {
		err = bpf_object__pin_maps(obj, pin);
		if (err) {
			fprintf(stderr, "xprobectl: attach: cannot pin the maps under %s: %s (%s)\n",
				pin, strerror(-err), err == -EEXIST ? "pinned there already: rm -r it "
				"or pick another --pin" : "a directory in bpffs, e.g. /sys/fs/bpf/NAME");
			goto undo;
		}
		pinned = true;
	}
	for (i = 0; i < n; i++) {
		if (p[i].kind == AP_HOOK)
			printf("%s (%s): hook %u in pid %u's view\n", bpf_program__name(p[i].prog),
			       bpf_program__section_name(p[i].prog), p[i].hook, pid);
		else
			printf("%s (%s): a %s bound to pid %u\n", bpf_program__name(p[i].prog),
			       bpf_program__section_name(p[i].prog), p[i].kind == AP_USDT ?
			       "USDT probe" : p[i].ret ? "uretprobe" : "uprobe", pid);
	}
	if (pin)
		printf("maps pinned under %s\n", pin);
	fflush(stdout);
	how = wait_session(nl, pid, pidfd, ev, duration, p, n);
	printf("%-24s %12s  %s\n", "PROGRAM", "HITS", "SECTION");
	for (i = 0; i < n; i++) {
		char hits[24] = "-";	/* a uprobe's hits are not counted for it */

		if (p[i].kind == AP_HOOK)
			snprintf(hits, sizeof(hits), "%llu", (unsigned long long)p[i].hits);
		printf("%-24s %12s  %s\n", bpf_program__name(p[i].prog), hits,
		       bpf_program__section_name(p[i].prog));
	}
	if (hooks && (how == AEND_EXIT || how == AEND_VIEW))
		printf("(hits as last read, at most 200 ms before the view ended%s)\n",
		       how == AEND_EXIT ? " with the process" : "");
	rc = EXIT_OK;
undo:
	detach_all(nl, pid, p, n, own_view);
	if (rc != EXIT_OK && pinned)
		bpf_object__unpin_maps(obj, pin);	/* the maps of a session that never ran */
out:
	xp_events_close(ev);
	if (nl)
		xp_nl_close(nl);
	if (pidfd >= 0)
		close(pidfd);
	bpf_object__close(obj);
	free(p);
	return rc;
}
