// SPDX-License-Identifier: GPL-2.0
/* xprobectl status: is the module loaded, and what does it hold. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <netlink/attr.h>
#include "json.h"
#include "nl.h"
#include "util.h"
#include "xprobectl.h"

struct status {
	char version[64];
	uint32_t abi;		/* which uapi/xprobes.h both were built from */
	uint32_t mode, views, hooks;
	uint64_t mem, mismatches, audits, conflicts, mirrored, backups_fixed, kprobes_refused;
	uint64_t tp_yields, tp_settles;
	uint64_t mod_syncs, mod_late, mod_unfinished, mod_ended;
	uint64_t forks, execs, follow_failed;
	char mod_off[200];	/* why module text cannot be hooked, or "" */
	uint32_t sys_threads, threads;
	char reason[512];	/* every reason views are off (module/kernel.c) */
};

static const char *mode_name(uint32_t mode)
{
	switch (mode) {
	case XPROBES_MODE_VIEWS:	return "views";
	case XPROBES_MODE_UNSUPPORTED:	return "unsupported";
	default:			return "unknown";
	}
}

static int parse_status(struct nlattr **tb, void *arg)
{
	struct status *s = arg;

	if (tb[XPROBES_A_VERSION])
		snprintf(s->version, sizeof(s->version), "%s", nla_get_string(tb[XPROBES_A_VERSION]));
	if (tb[XPROBES_A_MODE])
		s->mode = nla_get_u32(tb[XPROBES_A_MODE]);
	if (tb[XPROBES_A_NR_VIEWS])
		s->views = nla_get_u32(tb[XPROBES_A_NR_VIEWS]);
	if (tb[XPROBES_A_NR_HOOKS])
		s->hooks = nla_get_u32(tb[XPROBES_A_NR_HOOKS]);
	if (tb[XPROBES_A_MEM_BYTES])
		s->mem = nla_get_u64(tb[XPROBES_A_MEM_BYTES]);
	if (tb[XPROBES_A_MISMATCH])
		s->mismatches = nla_get_u64(tb[XPROBES_A_MISMATCH]);
	if (tb[XPROBES_A_AUDITS])
		s->audits = nla_get_u64(tb[XPROBES_A_AUDITS]);
	if (tb[XPROBES_A_CONFLICTS])
		s->conflicts = nla_get_u64(tb[XPROBES_A_CONFLICTS]);
	if (tb[XPROBES_A_MIRRORED])
		s->mirrored = nla_get_u64(tb[XPROBES_A_MIRRORED]);
	if (tb[XPROBES_A_BACKUPS_FIXED])
		s->backups_fixed = nla_get_u64(tb[XPROBES_A_BACKUPS_FIXED]);
	if (tb[XPROBES_A_KPROBES_REFUSED])
		s->kprobes_refused = nla_get_u64(tb[XPROBES_A_KPROBES_REFUSED]);
	if (tb[XPROBES_A_TP_YIELDS])
		s->tp_yields = nla_get_u64(tb[XPROBES_A_TP_YIELDS]);
	if (tb[XPROBES_A_TP_SETTLES])
		s->tp_settles = nla_get_u64(tb[XPROBES_A_TP_SETTLES]);
	if (tb[XPROBES_A_SYS_THREADS])
		s->sys_threads = nla_get_u32(tb[XPROBES_A_SYS_THREADS]);
	if (tb[XPROBES_A_THREADS])
		s->threads = nla_get_u32(tb[XPROBES_A_THREADS]);
	if (tb[XPROBES_A_MOD_SYNCS])
		s->mod_syncs = nla_get_u64(tb[XPROBES_A_MOD_SYNCS]);
	if (tb[XPROBES_A_MOD_LATE])
		s->mod_late = nla_get_u64(tb[XPROBES_A_MOD_LATE]);
	if (tb[XPROBES_A_MOD_UNFINISHED])
		s->mod_unfinished = nla_get_u64(tb[XPROBES_A_MOD_UNFINISHED]);
	if (tb[XPROBES_A_MOD_ENDED])
		s->mod_ended = nla_get_u64(tb[XPROBES_A_MOD_ENDED]);
	if (tb[XPROBES_A_FORKS_FOLLOWED])
		s->forks = nla_get_u64(tb[XPROBES_A_FORKS_FOLLOWED]);
	if (tb[XPROBES_A_EXECS_FOLLOWED])
		s->execs = nla_get_u64(tb[XPROBES_A_EXECS_FOLLOWED]);
	if (tb[XPROBES_A_FOLLOWS_FAILED])
		s->follow_failed = nla_get_u64(tb[XPROBES_A_FOLLOWS_FAILED]);
	if (tb[XPROBES_A_MOD_OFF])
		snprintf(s->mod_off, sizeof(s->mod_off), "%s", nla_get_string(tb[XPROBES_A_MOD_OFF]));
	if (tb[XPROBES_A_REASON])
		snprintf(s->reason, sizeof(s->reason), "%s", nla_get_string(tb[XPROBES_A_REASON]));
	return 0;
}

int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct status s = { 0 };
	bool json = false;
	struct xp_nl *nl;
	char abi[16];
	int c;

	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			printf("usage: xprobectl status [--json]\n"
			       "Says whether xprobes.ko is loaded, its version and interface (the uapi header it\n"
			       "was built from: xprobectl talks only to a module built from its own), in which\n"
			       "mode (views or why not), and what it holds: views, hooks, memory, the forks\n"
			       "and execs views followed since it loaded and those they failed to follow (their\n"
			       "processes ran untraced: a defect, the tests expect none), kernel text\n"
			       "writes mirrored, audits, kprobes guarded, tracepoint hooks that gave way to\n"
			       "another tool's probe and took the jumps back, and how many threads take the\n"
			       "system call path that reaches the raw_syscalls tracepoints (all while a tool has\n"
			       "them on everywhere; a hooking view's otherwise), and for hooks in module text:\n"
			       "how often views' tables followed the kernel's changes of module space at once,\n"
			       "how often only late (a defect: the tests expect none), and hooks ended because\n"
			       "their module was unloaded.\n"
			       "  -j, --json  one JSON object\n");
			return EXIT_OK;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind != argc)
		return usage_error("status takes no arguments");

	nl = xp_nl_open_status(parse_status, &s);
	if (!nl)
		return EXIT_RUNTIME;
	if (nl->err) {
		xp_nl_perror(nl, "status");
		xp_nl_close(nl);
		return EXIT_RUNTIME;
	}
	s.abi = nl->abi;
	xp_nl_close(nl);

	if (json) {
		json_obj_begin(NULL);
		json_bool("loaded", true);
		json_str("version", s.version);
		snprintf(abi, sizeof(abi), "%08" PRIx32, s.abi);
		json_str("interface", abi);
		json_str("mode", mode_name(s.mode));
		if (s.reason[0])
			json_str("reason", s.reason);
		json_u64("views", s.views);
		json_u64("hooks", s.hooks);
		json_u64("memory_bytes", s.mem);
		json_u64("forks_followed", s.forks);
		json_u64("execs_followed", s.execs);
		json_u64("follows_failed", s.follow_failed);
		json_u64("text_writes_mirrored", s.mirrored);
		json_u64("hooks_displaced", s.conflicts);
		json_u64("kprobe_backups_fixed", s.backups_fixed);
		json_u64("kprobes_refused", s.kprobes_refused);
		json_u64("audits", s.audits);
		json_u64("audit_mismatches", s.mismatches);
		json_u64("tp_yields", s.tp_yields);
		json_u64("tp_settles", s.tp_settles);
		json_u64("syscall_tp_threads", s.sys_threads);
		json_u64("threads", s.threads);
		json_u64("module_space_syncs", s.mod_syncs);
		json_u64("module_space_late", s.mod_late);
		json_u64("module_space_unfinished", s.mod_unfinished);
		json_u64("module_hooks_ended", s.mod_ended);
		if (s.mod_off[0])
			json_str("module_text_off", s.mod_off);
		json_obj_end();
		json_done();
	} else {
		printf("module:   loaded, version %s, interface %08" PRIx32 "\n", s.version, s.abi);
		printf("mode:     %s%s%s\n", mode_name(s.mode), s.reason[0] ? " - " : "", s.reason);
		printf("views:    %" PRIu32 "\n", s.views);
		printf("hooks:    %" PRIu32 "\n", s.hooks);
		printf("memory:   %" PRIu64 " bytes\n", s.mem);
		printf("follows:  %" PRIu64 " forks and %" PRIu64 " execs of views' processes followed,"
		       " %" PRIu64 " not (those ran untraced)\n", s.forks, s.execs, s.follow_failed);
		printf("coherence: %" PRIu64 " kernel text writes mirrored, %" PRIu64
		       " hooks displaced, %" PRIu64 " audits, %" PRIu64 " mismatches\n",
		       s.mirrored, s.conflicts, s.audits, s.mismatches);
		printf("kprobes:  %" PRIu64 " optimizer backups corrected, %" PRIu64
		       " registrations refused to traced processes\n", s.backups_fixed, s.kprobes_refused);
		printf("tracepoint hooks: %" PRIu64 " times another probe came (copies gave the jumps"
		       " back), %" PRIu64 " times it went\n", s.tp_yields, s.tp_settles);
		printf("raw_syscalls: %" PRIu32 " of %" PRIu32 " threads take the system call path"
		       " that reaches them\n", s.sys_threads, s.threads);
		if (s.mod_off[0])
			printf("module text: cannot be hooked - %s\n", s.mod_off);
		else
			printf("module text: %" PRIu64 " kernel changes of module space followed at once,"
			       " %" PRIu64 " late (%" PRIu64 " seen before the kernel had finished them);"
			       " %" PRIu64 " hooks ended with their module\n",
			       s.mod_syncs, s.mod_late, s.mod_unfinished, s.mod_ended);
	}
	return EXIT_OK;
}

static int parse_audit(struct nlattr **tb, void *arg)
{
	uint64_t *bad = arg;

	if (tb[XPROBES_A_MISMATCH])
		*bad = nla_get_u64(tb[XPROBES_A_MISMATCH]);
	return 0;
}

struct tables {
	uint64_t bad, total, checks;
	uint32_t views, regions, members;
	char first[256];
};

static int parse_tables(struct nlattr **tb, void *arg)
{
	struct tables *t = arg;

	if (tb[XPROBES_A_VIOLATIONS])
		t->bad = nla_get_u64(tb[XPROBES_A_VIOLATIONS]);
	if (tb[XPROBES_A_VIOLATIONS_TOTAL])
		t->total = nla_get_u64(tb[XPROBES_A_VIOLATIONS_TOTAL]);
	if (tb[XPROBES_A_TABLE_CHECKS])
		t->checks = nla_get_u64(tb[XPROBES_A_TABLE_CHECKS]);
	if (tb[XPROBES_A_NR_VIEWS])
		t->views = nla_get_u32(tb[XPROBES_A_NR_VIEWS]);
	if (tb[XPROBES_A_NR_REGIONS])
		t->regions = nla_get_u32(tb[XPROBES_A_NR_REGIONS]);
	if (tb[XPROBES_A_NR_PROCS])
		t->members = nla_get_u32(tb[XPROBES_A_NR_PROCS]);
	if (tb[XPROBES_A_REASON])
		snprintf(t->first, sizeof(t->first), "%s", nla_get_string(tb[XPROBES_A_REASON]));
	return 0;
}

/* audit --tables: the page-table invariants of every view (module/views/tables.c). */
static int audit_tables(struct xp_nl *nl, bool json)
{
	struct tables t = { 0 };
	struct nl_msg *msg = xp_nl_msg(nl, XPROBES_CMD_TABLES, 0);
	int err = xp_nl_call(nl, msg, parse_tables, &t);

	if (err) {
		xp_nl_perror(nl, "audit --tables");
		return EXIT_RUNTIME;
	}
	if (json) {
		json_obj_begin(NULL);
		json_u64("views", t.views);
		json_u64("hooked_regions", t.regions);
		json_u64("members", t.members);
		json_u64("violations", t.bad);
		json_u64("violations_since_load", t.total);
		json_u64("checks_since_load", t.checks);
		if (t.first[0])
			json_str("first_violation", t.first);
		json_obj_end();
		json_done();
	} else {
		printf("page tables: %" PRIu32 " view(s), %" PRIu32 " hooked region(s), %" PRIu32
		       " address space(s) checked: %" PRIu64 " violation(s) now, %" PRIu64
		       " in %" PRIu64 " checks since the module loaded\n",
		       t.views, t.regions, t.members, t.bad, t.total, t.checks);
	}
	if (t.bad || t.total) {
		fprintf(stderr, "xprobectl: audit --tables: page-table invariants violated%s%s"
			" (the kernel log has each one; report it as a bug)\n",
			t.first[0] ? ": " : "", t.first);
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

static const char audit_help[] =
	"usage: xprobectl audit [--tables] [--json]\n"
	"Checks that traced processes run what they should.\n"
	"  (default)   compare every private copy of kernel text with the kernel's own\n"
	"              text now, outside armed hooks; prints the pages that differed\n"
	"  --tables    check the page-table invariants of every view: hooked regions\n"
	"              mapped non-global in every table a CPU can load (shared, each\n"
	"              view's, PTI user), private leaves non-global, private tables\n"
	"              equal to the shared ones but for the view's own regions, members\n"
	"              on the view's tables with their TLB generation moved; exits 1 if\n"
	"              any was ever violated since the module loaded\n"
	"  -j, --json  one JSON object\n"
	"  -h, --help  this text\n";

/* xprobectl audit: compare every private copy with the kernel text now. */
int cmd_audit(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tables", no_argument, NULL, 't' }, COMMON_OPTS, { 0 }
	};
	bool json = false, tables = false;
	uint64_t bad = 0;
	struct xp_nl *nl;
	struct nl_msg *msg;
	int c, err;

	while ((c = getopt_long(argc, argv, "tjh", opts, NULL)) != -1) {
		switch (c) {
		case 't': tables = true; break;
		case 'j': json = true; break;
		case 'h': fputs(audit_help, stdout); return EXIT_OK;
		default: return EXIT_USAGE;
		}
	}
	if (optind != argc)
		return usage_error("audit takes no arguments");
	nl = xp_nl_open();
	if (!nl)
		return EXIT_RUNTIME;
	if (tables) {
		err = audit_tables(nl, json);
		xp_nl_close(nl);
		return err;
	}
	msg = xp_nl_msg(nl, XPROBES_CMD_AUDIT, 0);
	err = xp_nl_call(nl, msg, parse_audit, &bad);
	if (err) {
		xp_nl_perror(nl, "audit");
		xp_nl_close(nl);
		return EXIT_RUNTIME;
	}
	xp_nl_close(nl);
	if (json) {
		json_obj_begin(NULL);
		json_u64("mismatched_pages", bad);
		json_obj_end();
		json_done();
	} else {
		printf("%" PRIu64 " private page(s) differed from the kernel text%s\n", bad,
		       bad ? " (their views were ended)" : "");
	}
	return EXIT_OK;
}
