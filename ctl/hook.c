// SPDX-License-Identifier: GPL-2.0
/* xprobectl hook add|del|list: hookpoints in a process's kernel view. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <netlink/attr.h>
#include <bpf/bpf.h>
#include "json.h"
#include "nl.h"
#include "target.h"
#include "util.h"
#include "xprobectl.h"

static void hook_usage(FILE *f)
{
	fprintf(f, "usage: xprobectl hook add PID [MODULE:]SYMBOL[+OFFSET] [--cookie N] [--return] [--trap]\n"
		   "                        [--records [--calls [--sums]]] [--json]\n"
		   "       xprobectl hook add PID tracepoint:CATEGORY:NAME [--cookie N] [--json]\n"
		   "       xprobectl hook del ID\n"
		   "       xprobectl hook prog ID (PINNED | --detach)\n"
		   "       xprobectl hook list [PID] [--json]\n"
		   "Places a hook in a process's kernel view (BPF sees each hit as raw_tp/xprobes_hook),\n"
		   "removes one, or lists them: HITS (the view's own tasks), DROPPED (interrupts and\n"
		   "kernel threads on its page tables), NESTED (hits inside another hit's dispatch:\n"
		   "counted, not fired), KIND and BYTES/INSNS (what the hook displaces, below).\n"
		   "  --cookie N  a value BPF gets with every hit\n"
		   "  -j, --json  JSON output\n"
		   "SYMBOL alone hooks the first instruction after ENDBR and the fentry site.\n"
		   "A function of a loaded module is hooked in the view's copy of the module's page;\n"
		   "MODULE:SYMBOL names it where several modules have one of that name, and the list\n"
		   "names it so. Unloading the module ends the hook: the list keeps it, 'ended' and\n"
		   "why (a view's last 8). Init text cannot be hooked.\n"
		   "--return hooks where SYMBOL has returned to its caller (x64_sys_call: syscall exit,\n"
		   "on do_syscall_64's call to syscall_exit_to_user_mode; rdi->ax is the result).\n"
		   "KIND: a hook becomes a 5-byte jump into its own trampoline where it can (no trap\n"
		   "per hit): 'call' when one instruction of 5 bytes or more is replaced, 'jump' when\n"
		   "several whole instructions are (no branch may land inside them, no kprobe on them;\n"
		   "it is an int3 until preempted tasks are out, a fraction of a second; module\n"
		   "parameter jump_hooks=0 turns jumps off). Elsewhere it is an 'int3' (--json says why);\n"
		   "a kprobe registered on its instructions later makes it an int3 again (displaced).\n"
		   "--trap keeps it an int3.\n"
		   "--records, on switch_mm_irqs_off, finish_task_switch or do_exit (at the entry):\n"
		   "the hook first hands the records of PID's user hooks with --records over\n"
		   "(xprobes_urecs), those of the thread leaving the CPU or exiting; a view needs all\n"
		   "three for such user hooks. On try_to_wake_up, optional: those of a thread of PID\n"
		   "that wakes a task (its program then sees where the waker is now). On\n"
		   "uprobe_notify_resume and (6.11+) uprobe_handle_trampoline, optional: those of a\n"
		   "thread of PID about to run a uprobe's or a uretprobe's handlers (their programs\n"
		   "then meet the calls in the order the thread made them).\n"
		   "--calls with it: a call that enters and returns within\n"
		   "one hand-over comes as one record with its duration (XPROBES_UREC_CALL); the\n"
		   "view's three hooks that hand records over are all added with it or all without.\n"
		   "--sums with --calls: the process itself sums a call that returns while its\n"
		   "caller's entry is still in its buffer (calls, time, own time, histogram), read\n"
		   "with XPROBES_CMD_UREC_SUMS; an entry handed over with such callees is followed\n"
		   "by their time (XPROBES_UREC_CHARGE). All of the view's such hooks or none.\n"
		   "hook prog makes hook ID run the BPF program pinned at PINNED (in bpffs) itself on\n"
		   "every hit, cheaper than through the tracepoint (which still fires): a raw_tp\n"
		   "program gets the tracepoint's arguments (id, cookie, regs), a kprobe program the\n"
		   "hook's registers as its context, as a kprobe there would (PT_REGS_PARM1(ctx),\n"
		   "bpf_get_attach_cookie() gives --cookie). --detach stops it. xprobectl's own\n"
		   "commands attach their programs this way. PROG in the list: that program's id.\n"
		   "tracepoint:CATEGORY:NAME (or tp:...; bpftrace's spelling) turns that kernel\n"
		   "tracepoint on in PID's view only: its call sites jump in the view's copies, other\n"
		   "processes keep the NOPs and pay nothing. KIND 'tp', SITES its call sites in the\n"
		   "kernel image, or in the text of the module that defines it (ext4:..., hooked in\n"
		   "the view's copies of its pages; the module cannot be unloaded meanwhile).\n"
		   "hook prog gives it a raw_tp program (args[] = the tracepoint's\n"
		   "arguments) or a tp_btf one for that tracepoint, as written for the tracepoint\n"
		   "itself. While another tool has the tracepoint on everywhere, every process runs\n"
		   "it and the hook counts PID's events only (the list says 'global').\n"
		   "raw_syscalls:sys_enter and sys_exit: only the threads of PID's view take the\n"
		   "kernel's system call path that reaches them. Not for other tracepoints with a\n"
		   "function of their own (exceptions:page_fault_user); events from call sites in\n"
		   "modules other than the defining one are not seen while the hook is private.\n");
}

struct hook_row {
	uint32_t id, pid, off, flags, cover, ninsn, prog, sites;
	char why[256];
	uint64_t addr, cookie, hits, dropped, nested;
	char sym[512];
};

static void get_row(struct nlattr **tb, struct hook_row *r)
{
	memset(r, 0, sizeof(*r));
	if (tb[XPROBES_A_HOOK_ID]) r->id = nla_get_u32(tb[XPROBES_A_HOOK_ID]);
	if (tb[XPROBES_A_PID]) r->pid = nla_get_u32(tb[XPROBES_A_PID]);
	if (tb[XPROBES_A_OFFSET]) r->off = nla_get_u32(tb[XPROBES_A_OFFSET]);
	if (tb[XPROBES_A_FLAGS]) r->flags = nla_get_u32(tb[XPROBES_A_FLAGS]);
	if (tb[XPROBES_A_ADDR]) r->addr = nla_get_u64(tb[XPROBES_A_ADDR]);
	if (tb[XPROBES_A_COOKIE]) r->cookie = nla_get_u64(tb[XPROBES_A_COOKIE]);
	if (tb[XPROBES_A_HITS]) r->hits = nla_get_u64(tb[XPROBES_A_HITS]);
	if (tb[XPROBES_A_DROPPED]) r->dropped = nla_get_u64(tb[XPROBES_A_DROPPED]);
	if (tb[XPROBES_A_NESTED]) r->nested = nla_get_u64(tb[XPROBES_A_NESTED]);
	if (tb[XPROBES_A_COVER]) r->cover = nla_get_u32(tb[XPROBES_A_COVER]);
	if (tb[XPROBES_A_NR_INSNS]) r->ninsn = nla_get_u32(tb[XPROBES_A_NR_INSNS]);
	if (tb[XPROBES_A_PROG_ID]) r->prog = nla_get_u32(tb[XPROBES_A_PROG_ID]);
	if (tb[XPROBES_A_NR_SITES]) r->sites = nla_get_u32(tb[XPROBES_A_NR_SITES]);
	if (tb[XPROBES_A_REASON])
		snprintf(r->why, sizeof(r->why), "%s", nla_get_string(tb[XPROBES_A_REASON]));
	if (tb[XPROBES_A_SYMBOL])
		snprintf(r->sym, sizeof(r->sym), "%s", nla_get_string(tb[XPROBES_A_SYMBOL]));
}

/*
 * How a hit reaches the module: an int3 trap, or a jump in the copy into the
 * hook's own entry that replaces one instruction ("call", 5 bytes or more)
 * or several whole ones ("jump").
 */
static const char *hook_kind(const struct hook_row *r)
{
	if (r->flags & XPROBES_HOOK_ENDED)
		return "-";
	if (r->flags & XPROBES_HOOK_TP)
		return "tp";
	if (r->flags & XPROBES_HOOK_JUMP)
		return "jump";
	return r->flags & XPROBES_HOOK_CALL ? "call" : "int3";
}

/* Where the hook is: SYMBOL+OFFSET, or tracepoint:CATEGORY:NAME. */
static void hook_where(const struct hook_row *r, char *buf, size_t len)
{
	if (r->flags & XPROBES_HOOK_TP)
		snprintf(buf, len, "tracepoint:%s", r->sym);
	else
		snprintf(buf, len, "%s+0x%" PRIx32, r->sym, r->off);
}

static void json_hook(const struct hook_row *r)
{
	char where[600];

	hook_where(r, where, sizeof(where));
	json_obj_begin(NULL);
	json_u64("id", r->id);
	json_u64("pid", r->pid);
	json_str("symbol", r->sym);
	json_u64("offset", r->off);
	json_str("location", where);
	json_hex("address", r->addr);
	json_u64("cookie", r->cookie);
	json_u64("hits", r->hits);
	json_u64("dropped", r->dropped);
	json_u64("nested", r->nested);
	json_str("state", r->flags & XPROBES_HOOK_ENDED ? "ended" :
			  r->flags & XPROBES_HOOK_BROKEN ? "displaced" : "armed");
	if (r->flags & XPROBES_HOOK_ENDED) {
		json_str("reason", r->why);
		json_obj_end();
		return;
	}
	json_str("kind", hook_kind(r));
	if (r->flags & XPROBES_HOOK_TP) {
		json_u64("sites", r->sites);
		json_bool("global", r->flags & XPROBES_HOOK_TP_GLOBAL);
		json_bool("module_sites", r->flags & XPROBES_HOOK_TP_MODULES);
	} else {
		json_u64("bytes", r->cover);
		json_u64("instructions", r->ninsn);
	}
	json_u64("prog", r->prog);
	if (r->why[0])
		json_str("why_int3", r->why);
	if (r->flags & XPROBES_HOOK_PENDING)
		json_str("pending", "jump");
	json_bool("internal", r->flags & XPROBES_HOOK_INTERNAL);
	json_bool("guard", r->flags & XPROBES_HOOK_GUARD);
	json_bool("sigreturn", r->flags & XPROBES_HOOK_SIGRET);
	json_obj_end();
}

static int print_added(struct nlattr **tb, void *arg)
{
	struct hook_row r;

	get_row(tb, &r);
	if (*(bool *)arg) {
		json_hook(&r);
		json_done();
	} else {
		printf("%" PRIu32 "\n", r.id);
	}
	return 0;
}

static int print_hook(struct nlattr **tb, void *arg)
{
	struct hook_row r;
	char where[600], size[32];

	get_row(tb, &r);
	if (*(bool *)arg) {
		json_hook(&r);
		return 0;
	}
	hook_where(&r, where, sizeof(where));
	if (r.flags & XPROBES_HOOK_ENDED) {
		printf("%-6" PRIu32 " %-8" PRIu32 " 0x%016" PRIx64 "  %-36s %12" PRIu64
		       "  (ended: %s)\n", r.id, r.pid, r.addr, where, r.hits, r.why);
		return 0;
	}
	if (r.flags & XPROBES_HOOK_TP)
		snprintf(size, sizeof(size), "%5" PRIu32 " site%s", r.sites, r.sites == 1 ? " " : "s");
	else
		snprintf(size, sizeof(size), "%5" PRIu32 "/%-5" PRIu32, r.cover, r.ninsn);
	printf("%-6" PRIu32 " %-8" PRIu32 " 0x%016" PRIx64 "  %-36s %12" PRIu64 " %10" PRIu64
	       " %8" PRIu64 "  %-4s %s %5" PRIu32 "%s\n",
	       r.id, r.pid, r.addr, where, r.hits, r.dropped, r.nested, hook_kind(&r),
	       size, r.prog,
	       r.flags & XPROBES_HOOK_TP_GLOBAL ? "  (global: another tool has it on everywhere)" :
	       r.flags & XPROBES_HOOK_BROKEN ? "  (displaced by kernel patching)" :
	       r.flags & XPROBES_HOOK_PENDING ? "  (a jump once preempted tasks are out)" :
	       r.flags & XPROBES_HOOK_GUARD ? "  (the module's: keeps kernel threads off the view's tables)" :
	       r.flags & XPROBES_HOOK_SIGRET ? "  (the module's: sigreturns into user hooks' jumps)" :
	       r.flags & XPROBES_HOOK_INTERNAL ? "  (the module's: user-hook events)" : "");
	return 0;
}

/*
 * Is @arg a tracepoint (tracepoint:CATEGORY:NAME, or tp:...)? Then @out
 * gets what the module takes ("tracepoint:CATEGORY:NAME"), or "" if the
 * rest is not CATEGORY:NAME.
 */
static bool tracepoint_spec(const char *arg, char *out, size_t len)
{
	const char *rest, *colon;

	if (!strncmp(arg, "tracepoint:", 11))
		rest = arg + 11;
	else if (!strncmp(arg, "tp:", 3))
		rest = arg + 3;
	else
		return false;
	colon = strchr(rest, ':');
	out[0] = 0;
	if (colon && colon > rest && colon[1] && !strchr(colon + 1, ':'))
		snprintf(out, len, "tracepoint:%s", rest);
	return true;
}

static int hook_add(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cookie", required_argument, NULL, 'c' },
		{ "return", no_argument, NULL, 'r' },
		{ "trap", no_argument, NULL, 't' },
		{ "records", no_argument, NULL, 'R' },
		{ "calls", no_argument, NULL, 'C' },
		{ "sums", no_argument, NULL, 'S' },
		COMMON_OPTS,
		{ 0 }
	};
	uint64_t cookie = 0;
	bool json = false, ret = false, trap = false, rec = false, calls = false, sums = false;
	char tp[600];
	struct target t;
	struct xp_nl *nl;
	struct nl_msg *msg;
	uint32_t pid;
	int c, err, tries = 0;

	while ((c = getopt_long(argc, argv, "c:rthj", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (!parse_u64(optarg, &cookie))
				return usage_error("bad cookie '%s'", optarg);
			break;
		case 'r': ret = true; break;
		case 't': trap = true; break;
		case 'R': rec = true; break;
		case 'C': calls = true; break;
		case 'S': sums = true; break;
		case 'j': json = true; break;
		case 'h': hook_usage(stdout); return EXIT_OK;
		default: return EXIT_USAGE;
		}
	}
	if (optind + 2 != argc)
		return usage_error("hook add takes PID and [MODULE:]SYMBOL[+OFFSET]");
	if (!parse_pid(argv[optind], &pid))
		return EXIT_USAGE;
	if (tracepoint_spec(argv[optind + 1], tp, sizeof(tp))) {
		if (!tp[0])
			return usage_error("'%s': say tracepoint:CATEGORY:NAME", argv[optind + 1]);
		if (ret || trap || rec)
			return usage_error("a tracepoint hook takes no --return, --trap or --records");
		memset(&t, 0, sizeof(t));
		snprintf(t.sym, sizeof(t.sym), "%s", tp);
	} else if (!parse_target(argv[optind + 1], &t)) {
		return EXIT_USAGE;
	}
	if (t.is_addr)
		return usage_error("hook add takes a symbol (SYMBOL[+OFFSET]), not an address");
	if (calls && !rec)
		return usage_error("--calls folds the records a hook hands over: it needs --records");
	if (sums && !calls)
		return usage_error("--sums has the process fold calls itself: it needs --records --calls");

	nl = xp_nl_open();
	if (!nl)
		return EXIT_RUNTIME;
	do {	/* a process in execve: its view follows it in a moment */
		msg = xp_nl_msg(nl, XPROBES_CMD_HOOK_ADD, 0);
		nla_put_u32(msg, XPROBES_A_PID, pid);
		nla_put_string(msg, XPROBES_A_SYMBOL, t.sym);
		if (t.has_off)
			nla_put_u32(msg, XPROBES_A_OFFSET, t.off);
		nla_put_u64(msg, XPROBES_A_COOKIE, cookie);
		if (ret || trap || rec)
			nla_put_u32(msg, XPROBES_A_FLAGS, (ret ? XPROBES_F_RETURN : 0) |
				    (trap ? XPROBES_F_TRAP : 0) | (rec ? XPROBES_F_RECORDS : 0) |
				    (calls ? XPROBES_F_CALLS : 0) | (sums ? XPROBES_F_SUMS : 0));
		err = xp_nl_call(nl, msg, print_added, &json);
	} while (nl_again(err, &tries));
	if (err) {
		char what[600];

		snprintf(what, sizeof(what), "hook add %s", argv[optind + 1]);
		xp_nl_perror(nl, what);
	}
	xp_nl_close(nl);
	return err ? EXIT_RUNTIME : EXIT_OK;
}

/* A hook ID argument into *ID: EXIT_OK, or the usage error (printed). */
static int hook_id_arg(const char *s, uint32_t *id)
{
	uint64_t v;

	if (!parse_u64(s, &v) || !v || v > 0xffffffffu)
		return usage_error("'%s' is not a hook id", s);
	*id = v;
	return EXIT_OK;
}

static int hook_del(int argc, char **argv)
{
	struct xp_nl *nl;
	struct nl_msg *msg;
	uint32_t id = 0;
	int err;

	if (argc != 2)
		return usage_error("hook del takes one hook ID");
	err = hook_id_arg(argv[1], &id);
	if (err)
		return err;
	nl = xp_nl_open();
	if (!nl)
		return EXIT_RUNTIME;
	msg = xp_nl_msg(nl, XPROBES_CMD_HOOK_DEL, 0);
	nla_put_u32(msg, XPROBES_A_HOOK_ID, id);
	err = xp_nl_call(nl, msg, NULL, NULL);
	if (err)
		xp_nl_perror(nl, "hook del");
	xp_nl_close(nl);
	return err ? EXIT_RUNTIME : EXIT_OK;
}

static int hook_prog(int argc, char **argv)
{
	struct xp_nl *nl;
	uint32_t id = 0;
	int fd = -1, err;

	if (argc != 3)
		return usage_error("hook prog takes a hook ID and a pinned program path or --detach");
	err = hook_id_arg(argv[1], &id);
	if (err)
		return err;
	if (strcmp(argv[2], "--detach")) {
		fd = bpf_obj_get(argv[2]);
		if (fd < 0) {
			fprintf(stderr, "xprobectl: hook prog: cannot open the pinned program %s: %s "
				"(pin a raw_tp or kprobe program in bpffs, e.g. bpftool prog load ... pinned)\n",
				argv[2], strerror(errno));
			return EXIT_RUNTIME;
		}
	}
	nl = xp_nl_open();
	if (!nl) {
		if (fd >= 0)
			close(fd);
		return EXIT_RUNTIME;
	}
	err = hooks_run_prog(nl, &id, 1, fd);
	if (err)
		xp_nl_perror(nl, "hook prog");
	xp_nl_close(nl);
	if (fd >= 0)
		close(fd);
	return err ? EXIT_RUNTIME : EXIT_OK;
}

static int hook_list(int argc, char **argv)
{
	static const struct option opts[] = { COMMON_OPTS, { 0 } };
	bool json = false;
	uint32_t pid = 0;
	struct xp_nl *nl;
	struct nl_msg *msg;
	int c, err;

	while ((c = getopt_long(argc, argv, "hj", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'h': hook_usage(stdout); return EXIT_OK;
		default: return EXIT_USAGE;
		}
	}
	if (optind + 1 < argc)
		return usage_error("hook list takes at most one PID");
	if (optind < argc && !parse_pid(argv[optind], &pid))
		return EXIT_USAGE;
	nl = xp_nl_open();
	if (!nl)
		return EXIT_RUNTIME;
	if (json)
		json_arr_begin(NULL);
	else
		printf("%-6s %-8s %-18s  %-36s %12s %10s %8s  %-4s %11s %5s\n", "ID", "PID", "ADDRESS",
		       "LOCATION", "HITS", "DROPPED", "NESTED", "KIND", "BYTES/INSNS", "PROG");
	msg = xp_nl_msg(nl, XPROBES_CMD_HOOK_GET, 1);
	if (pid)
		nla_put_u32(msg, XPROBES_A_PID, pid);
	err = xp_nl_call(nl, msg, print_hook, &json);
	if (json) {
		json_arr_end();
		json_done();
	}
	if (err)
		xp_nl_perror(nl, "hook list");
	xp_nl_close(nl);
	return err ? EXIT_RUNTIME : EXIT_OK;
}

int cmd_hook(int argc, char **argv)
{
	if (argc < 2) {
		hook_usage(stderr);
		return EXIT_USAGE;
	}
	optind = 1;
	if (!strcmp(argv[1], "add"))
		return hook_add(argc - 1, argv + 1);
	if (!strcmp(argv[1], "del"))
		return hook_del(argc - 1, argv + 1);
	if (!strcmp(argv[1], "list"))
		return hook_list(argc - 1, argv + 1);
	if (!strcmp(argv[1], "prog"))
		return hook_prog(argc - 1, argv + 1);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		hook_usage(stdout);
		return EXIT_OK;
	}
	return usage_error("unknown hook command '%s'", argv[1]);
}
