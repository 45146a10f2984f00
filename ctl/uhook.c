// SPDX-License-Identifier: GPL-2.0
/* xprobectl uhook add|del|list: trap-free hooks on a process's user functions. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <netlink/attr.h>
#include "branches.h"
#include "elfsym.h"
#include "json.h"
#include "nl.h"
#include "uhook.h"
#include "util.h"
#include "xprobectl.h"

static void uhook_usage(FILE *f)
{
	fprintf(f, "usage: xprobectl uhook add PID [LIB:]FUNCTION [--cookie N] [--returns]\n"
		   "                         [--no-events | --records] [--trap] [--json]\n"
		   "       xprobectl uhook del ID\n"
		   "       xprobectl uhook list [PID] [--json]\n"
		   "Replaces the first instructions of FUNCTION (past an ENDBR64) in process PID, and\n"
		   "only there, with a 5-byte jmp into a trampoline the module maps into PID\n"
		   "(\"[xprobes-uhooks]\" in its maps, never writable), which runs the replaced\n"
		   "instructions and jumps back: no trap per call. Other processes running the same\n"
		   "file keep its bytes. PID needs a kernel view (xprobectl view add PID). The\n"
		   "function is decoded whole, and its file's executable text is disassembled\n"
		   "(Zydis) for branches from other functions: no jump where a branch or a jump\n"
		   "table entry lands inside the replaced bytes (the error says why and names the\n"
		   "branch; a uprobe still works there). A uprobe holds the entry while the jump goes\n"
		   "in and out. A thread returning from a signal handler into the replaced bytes\n"
		   "resumes in the trampoline; another tool's uprobe inside them is refused while\n"
		   "the hook lives (the kernel log names the hook).\n"
		   "FUNCTION is looked up in the executable of PID, or in library LIB as PID maps it\n"
		   "(\"c\", \"libc\", \"libc.so.6\" or a path).\n"
		   "Each call fires the xprobes_uhook tracepoint (args: id, cookie, the registers\n"
		   "at the function's entry, as a uprobe's program sees them): the trampoline enters\n"
		   "the kernel with a system call only PID's kernel view intercepts (number 420,\n"
		   "ENOSYS everywhere else). A process under seccomp gets no events (its filter\n"
		   "could kill it for that call): use --no-events there, or a uprobe.\n"
		   "With --returns each return fires xprobes_uhook_ret too (the registers after the\n"
		   "return: ip where it returned, ax the result, as a uretprobe's program sees them):\n"
		   "the return address becomes a return thunk's, which makes system call 421 and goes\n"
		   "back to the caller with or without the module.\n"
		   "With --records there is no kernel entry per call: the trampoline appends a record\n"
		   "(time, stack pointer, cookie below 8192; with --returns, one per return too) to a\n"
		   "per-CPU buffer mapped into PID (\"[xprobes-records]\"), under rseq, and PID's view\n"
		   "hands a thread's records to the xprobes_urecs tracepoint when the thread leaves\n"
		   "its CPU or exits: the view needs hooks with --records on switch_mm_irqs_off,\n"
		   "finish_task_switch and do_exit (xprobectl hook add --help), and PID's threads\n"
		   "rseq (glibc 2.35 or later). A full buffer, or a return address met for the first\n"
		   "time, enters the kernel (system call 422).\n"
		   "With --trap no jump is written: the uprobe's int3 stays on the site and sends\n"
		   "every call to the trampoline (a trap per call, one byte changed), which runs the\n"
		   "instructions a jump would replace; the file is not disassembled, and a branch into\n"
		   "them does not refuse it (for rare calls, or where a jump cannot go).\n"
		   "uhook del puts the function's own bytes back; the trampoline stays mapped.\n"
		   "uhook list: ID, PID, ADDRESS (the site), TRAMPOLINE, KIND (call: one instruction\n"
		   "of 5 bytes or more replaced; jump: several; trap: --trap), BYTES/INSNS, TRAPPED\n"
		   "(calls that met the int3: while patching, through another tool's uprobe on the\n"
		   "site, or every call of a trap), EVENTS (fired, rec with records, or - without\n"
		   "either), RETURNS (return events fired, rec, or -; a + and the number of calls\n"
		   "whose return could not be taken, when there are any), STATE (live, or gone: the\n"
		   "process exited or exec'd).\n"
		   "  --cookie N    a value BPF gets with every event\n"
		   "  --returns     fire each return too (xprobes_uhook_ret)\n"
		   "  --no-events   only the jump and the trampoline: no kernel entry per call\n"
		   "  --records     records in PID's memory instead of events\n"
		   "  --trap        keep the int3: a trap per call, no jump, no disassembly\n"
		   "  -j, --json    JSON output\n");
}

struct uhook_row {
	uint32_t id, pid, off, flags, cover, ninsn;
	uint64_t addr, slot, trapped, hits, cookie, rets, ret_missed, calls_missed;
};

static void get_row(struct nlattr **tb, struct uhook_row *r)
{
	memset(r, 0, sizeof(*r));
	if (tb[XPROBES_A_HOOK_ID]) r->id = nla_get_u32(tb[XPROBES_A_HOOK_ID]);
	if (tb[XPROBES_A_PID]) r->pid = nla_get_u32(tb[XPROBES_A_PID]);
	if (tb[XPROBES_A_OFFSET]) r->off = nla_get_u32(tb[XPROBES_A_OFFSET]);
	if (tb[XPROBES_A_FLAGS]) r->flags = nla_get_u32(tb[XPROBES_A_FLAGS]);
	if (tb[XPROBES_A_COVER]) r->cover = nla_get_u32(tb[XPROBES_A_COVER]);
	if (tb[XPROBES_A_NR_INSNS]) r->ninsn = nla_get_u32(tb[XPROBES_A_NR_INSNS]);
	if (tb[XPROBES_A_ADDR]) r->addr = nla_get_u64(tb[XPROBES_A_ADDR]);
	if (tb[XPROBES_A_XOL]) r->slot = nla_get_u64(tb[XPROBES_A_XOL]);
	if (tb[XPROBES_A_TRAPPED]) r->trapped = nla_get_u64(tb[XPROBES_A_TRAPPED]);
	if (tb[XPROBES_A_HITS]) r->hits = nla_get_u64(tb[XPROBES_A_HITS]);
	if (tb[XPROBES_A_COOKIE]) r->cookie = nla_get_u64(tb[XPROBES_A_COOKIE]);
	if (tb[XPROBES_A_RET_HITS]) r->rets = nla_get_u64(tb[XPROBES_A_RET_HITS]);
	if (tb[XPROBES_A_RET_MISSED]) r->ret_missed = nla_get_u64(tb[XPROBES_A_RET_MISSED]);
	if (tb[XPROBES_A_CALLS_MISSED]) r->calls_missed = nla_get_u64(tb[XPROBES_A_CALLS_MISSED]);
}

static const char *row_kind(const struct uhook_row *r)
{
	if (r->flags & XPROBES_F_TRAP)
		return "trap";
	return r->flags & XPROBES_HOOK_JUMP ? "jump" : "call";
}

static const char *row_state(const struct uhook_row *r)
{
	return r->flags & XPROBES_UHOOK_GONE ? "gone" : "live";
}

static void json_row(const struct uhook_row *r)
{
	json_obj_begin(NULL);
	json_u64("id", r->id);
	json_u64("pid", r->pid);
	json_hex("address", r->addr);
	json_u64("offset", r->off);
	json_hex("trampoline", r->slot);
	json_str("kind", row_kind(r));
	json_u64("bytes", r->cover);
	json_u64("instructions", r->ninsn);
	json_u64("trapped", r->trapped);
	json_bool("events", r->flags & XPROBES_UHOOK_EVENTS);
	json_u64("hits", r->hits);
	json_u64("hits_missed", r->calls_missed);
	json_bool("returns", r->flags & XPROBES_UHOOK_RETURNS);
	json_bool("records", r->flags & XPROBES_UHOOK_RECORDS);
	json_u64("return_hits", r->rets);
	json_u64("returns_missed", r->ret_missed);
	json_u64("cookie", r->cookie);
	json_str("state", row_state(r));
	json_obj_end();
}

struct find_func {
	const char *name;
	uint64_t offset, size;
	bool found;
};

/* By any of its names: write and __write share one address. */
static int match_func(const char *const *names, size_t n, uint64_t offset, uint64_t size,
		      void *arg)
{
	struct find_func *f = arg;
	size_t i;

	for (i = 0; i < n && strcmp(names[i], f->name); i++)
		;
	if (i == n)
		return 0;
	f->offset = offset;
	f->size = size;
	f->found = true;
	return 1;
}

int uhook_resolve(uint32_t pid, const char *spec, uint64_t *addr, uint32_t *size, char *path,
		  uint64_t *offset)
{
	char lib[PATH_MAX];
	const char *colon = strchr(spec, ':'), *why = NULL;
	struct find_func f = { .name = colon ? colon + 1 : spec };
	int err;

	if (colon) {
		snprintf(lib, sizeof(lib), "%.*s", (int)(colon - spec), spec);
		err = find_library(pid, lib, path, PATH_MAX);
	} else {
		err = pid_exe(pid, path);
	}
	if (err) {
		fprintf(stderr, "xprobectl: uhook: cannot find %s of pid %u: %s\n",
			colon ? "the library" : "the executable", pid, strerror(-err));
		return err;
	}
	err = elf_funcs_aliases(path, match_func, &f, &why);
	if (err < 0) {
		fprintf(stderr, "xprobectl: uhook: cannot read the functions of %s: %s\n", path,
			why ?: strerror(-err));
		return err;
	}
	if (!f.found || !f.size) {
		fprintf(stderr, "xprobectl: uhook: no function '%s' with a size in %s "
			"(xprobectl trace --list-functions lists them)\n", f.name, path);
		return -ENOENT;
	}
	err = pid_file_addr(pid, path, f.offset, addr);
	if (err) {
		fprintf(stderr, "xprobectl: uhook: pid %u does not map %s's code at offset 0x%" PRIx64
			" (not loaded yet?)\n", pid, path, f.offset);
		return err;
	}
	*size = f.size > UINT32_MAX ? UINT32_MAX : (uint32_t)f.size;
	*offset = f.offset;
	return 0;
}

static int print_added(struct nlattr **tb, void *arg)
{
	struct uhook_row r;

	get_row(tb, &r);
	if (*(bool *)arg) {
		json_row(&r);
		json_done();
	} else {
		printf("%" PRIu32 "\n", r.id);
	}
	return 0;
}

static int uhook_add(int argc, char **argv)
{
	static const struct option opts[] = {
		COMMON_OPTS,
		{ "cookie", required_argument, NULL, 'c' },
		{ "no-events", no_argument, NULL, 'n' },
		{ "returns", no_argument, NULL, 'r' },
		{ "records", no_argument, NULL, 'R' },
		{ "trap", no_argument, NULL, 't' },
		{ 0 }
	};
	struct xprobes_uh_branch br[XPROBES_UH_BRANCHES_MAX];
	char path[PATH_MAX], explained[1024];
	uint32_t flags = XPROBES_F_EVENTS;
	bool noev = false, rec = false, trap = false;
	uint64_t addr, offset, cookie = 0;
	const char *why;
	int nbr;
	bool json = false;
	struct xp_nl *nl;
	struct nl_msg *msg;
	uint32_t pid, size;
	int c, err;

	while ((c = getopt_long(argc, argv, "hj", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'c':
			if (!parse_u64(optarg, &cookie))
				return usage_error("bad cookie '%s'", optarg);
			break;
		case 'n': noev = true; break;
		case 'r': flags |= XPROBES_F_RETURNS; break;
		case 'R': rec = true; break;
		case 't': trap = true; break;
		case 'h': uhook_usage(stdout); return EXIT_OK;
		default: return EXIT_USAGE;
		}
	}
	if (optind + 2 != argc)
		return usage_error("uhook add takes PID and [LIB:]FUNCTION");
	if (noev && (flags & XPROBES_F_RETURNS))
		return usage_error("--returns needs events: drop --no-events");
	if (noev && rec)
		return usage_error("--records and --no-events exclude each other");
	if (noev)
		flags = 0;
	if (rec)
		flags = XPROBES_F_RECORDS | (flags & XPROBES_F_RETURNS);
	if (!parse_pid(argv[optind], &pid))
		return EXIT_USAGE;
	if (uhook_resolve(pid, argv[optind + 1], &addr, &size, path, &offset))
		return EXIT_RUNTIME;
	if (trap)
		flags |= XPROBES_F_TRAP;
	/* a trap changes one byte: no branch can land inside it */
	nbr = trap ? 0 : branches_into(path, offset, XPROBES_UH_BRANCH_WINDOW, br,
						   XPROBES_UH_BRANCHES_MAX, &why);
	if (nbr < 0) {
		fprintf(stderr, "xprobectl: uhook add: cannot find the branches into %s in %s: %s\n",
			argv[optind + 1], path, why);
		return EXIT_RUNTIME;
	}
	nl = xp_nl_open();
	if (!nl)
		return EXIT_RUNTIME;
	msg = xp_nl_msg(nl, XPROBES_CMD_UHOOK_ADD, 0);
	nla_put_u32(msg, XPROBES_A_PID, pid);
	nla_put_u64(msg, XPROBES_A_ADDR, addr);
	nla_put_u32(msg, XPROBES_A_SIZE, size);
	nla_put_u32(msg, XPROBES_A_FLAGS, flags);
	nla_put_u64(msg, XPROBES_A_COOKIE, cookie);
	nla_put(msg, XPROBES_A_UH_BRANCHES, nbr * sizeof(*br), br);
	err = xp_nl_call(nl, msg, print_added, &json);
	if (err) {
		const char *fn = strchr(argv[optind + 1], ':');
		char what[600];

		fn = fn ? fn + 1 : argv[optind + 1];
		snprintf(what, sizeof(what), "uhook add %s", argv[optind + 1]);
		if (nl->ext_msg[0])
			fprintf(stderr, "xprobectl: %s: %s\n", what,
				branches_explain(nl->ext_msg, path, fn, explained, sizeof(explained)));
		else
			xp_nl_perror(nl, what);
	}
	xp_nl_close(nl);
	return err ? EXIT_RUNTIME : EXIT_OK;
}

static int uhook_del(int argc, char **argv)
{
	struct xp_nl *nl;
	struct nl_msg *msg;
	uint64_t id;
	int err;

	if (argc != 2)
		return usage_error("uhook del takes one user hook ID");
	if (!parse_u64(argv[1], &id) || !id || id > UINT32_MAX)
		return usage_error("'%s' is not a user hook id", argv[1]);
	nl = xp_nl_open();
	if (!nl)
		return EXIT_RUNTIME;
	msg = xp_nl_msg(nl, XPROBES_CMD_UHOOK_DEL, 0);
	nla_put_u32(msg, XPROBES_A_HOOK_ID, (uint32_t)id);
	err = xp_nl_call(nl, msg, NULL, NULL);
	if (err)
		xp_nl_perror(nl, "uhook del");
	xp_nl_close(nl);
	return err ? EXIT_RUNTIME : EXIT_OK;
}

/* A count for the table: N, or N+M when M were missed. */
static const char *with_missed(char *buf, size_t len, uint64_t n, uint64_t missed)
{
	if (missed)
		snprintf(buf, len, "%" PRIu64 "+%" PRIu64, n, missed);
	else
		snprintf(buf, len, "%" PRIu64, n);
	return buf;
}

static int print_row(struct nlattr **tb, void *arg)
{
	struct uhook_row r;
	char n[48];

	get_row(tb, &r);
	if (*(bool *)arg) {
		json_row(&r);
		return 0;
	}
	printf("%-6" PRIu32 " %-8" PRIu32 " 0x%016" PRIx64 "  0x%016" PRIx64 "  %-4s %5" PRIu32
	       "/%-5" PRIu32 " %10" PRIu64 " ", r.id, r.pid, r.addr, r.slot, row_kind(&r),
	       r.cover, r.ninsn, r.trapped);
	if (r.flags & XPROBES_UHOOK_EVENTS)
		printf("%12s", with_missed(n, sizeof(n), r.hits, r.calls_missed));
	else
		printf("%12s", r.flags & XPROBES_UHOOK_RECORDS ? "rec" : "-");
	if ((r.flags & XPROBES_UHOOK_RETURNS) && (r.flags & XPROBES_UHOOK_RECORDS))
		printf(" %12s", "rec");
	else if (r.flags & XPROBES_UHOOK_RETURNS)
		printf(" %12s", with_missed(n, sizeof(n), r.rets, r.ret_missed));
	else
		printf(" %12s", "-");
	printf("  %s\n", row_state(&r));
	return 0;
}

static int uhook_list(int argc, char **argv)
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
		case 'h': uhook_usage(stdout); return EXIT_OK;
		default: return EXIT_USAGE;
		}
	}
	if (optind + 1 < argc)
		return usage_error("uhook list takes at most one PID");
	if (optind < argc && !parse_pid(argv[optind], &pid))
		return EXIT_USAGE;
	nl = xp_nl_open();
	if (!nl)
		return EXIT_RUNTIME;
	if (json)
		json_arr_begin(NULL);
	else
		printf("%-6s %-8s %-18s  %-18s  %-4s %11s %10s %12s %12s  %s\n", "ID", "PID",
		       "ADDRESS", "TRAMPOLINE", "KIND", "BYTES/INSNS", "TRAPPED", "EVENTS", "RETURNS",
		       "STATE");
	msg = xp_nl_msg(nl, XPROBES_CMD_UHOOK_GET, 1);
	if (pid)
		nla_put_u32(msg, XPROBES_A_PID, pid);
	err = xp_nl_call(nl, msg, print_row, &json);
	if (json) {
		json_arr_end();
		json_done();
	}
	if (err)
		xp_nl_perror(nl, "uhook list");
	xp_nl_close(nl);
	return err ? EXIT_RUNTIME : EXIT_OK;
}

int cmd_uhook(int argc, char **argv)
{
	if (argc < 2) {
		uhook_usage(stderr);
		return EXIT_USAGE;
	}
	optind = 1;
	if (!strcmp(argv[1], "add"))
		return uhook_add(argc - 1, argv + 1);
	if (!strcmp(argv[1], "del"))
		return uhook_del(argc - 1, argv + 1);
	if (!strcmp(argv[1], "list"))
		return uhook_list(argc - 1, argv + 1);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		uhook_usage(stdout);
		return EXIT_OK;
	}
	return usage_error("unknown uhook command '%s'", argv[1]);
}
