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
	uint32_t mode, views, hooks;
	uint64_t mem, mismatches, audits, conflicts, mirrored, backups_fixed, kprobes_refused;
	char reason[256];
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
	struct nl_msg *msg;
	int c, err;

	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			printf("usage: xprobectl status [--json]\n");
			return EXIT_OK;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind != argc)
		return usage_error("status takes no arguments");

	nl = xp_nl_open();
	if (!nl)
		return EXIT_RUNTIME;
	msg = xp_nl_msg(nl, XPROBES_CMD_STATUS, 0);
	err = msg ? xp_nl_call(nl, msg, parse_status, &s) : -ENOMEM;
	if (err) {
		xp_nl_perror(nl, "status");
		xp_nl_close(nl);
		return EXIT_RUNTIME;
	}
	xp_nl_close(nl);

	if (json) {
		json_obj_begin(NULL);
		json_bool("loaded", true);
		json_str("version", s.version);
		json_str("mode", mode_name(s.mode));
		if (s.reason[0])
			json_str("reason", s.reason);
		json_u64("views", s.views);
		json_u64("hooks", s.hooks);
		json_u64("memory_bytes", s.mem);
		json_u64("text_writes_mirrored", s.mirrored);
		json_u64("hooks_displaced", s.conflicts);
		json_u64("kprobe_backups_fixed", s.backups_fixed);
		json_u64("kprobes_refused", s.kprobes_refused);
		json_u64("audits", s.audits);
		json_u64("audit_mismatches", s.mismatches);
		json_obj_end();
		json_done();
	} else {
		printf("module:   loaded, version %s\n", s.version);
		printf("mode:     %s%s%s\n", mode_name(s.mode), s.reason[0] ? " - " : "", s.reason);
		printf("views:    %" PRIu32 "\n", s.views);
		printf("hooks:    %" PRIu32 "\n", s.hooks);
		printf("memory:   %" PRIu64 " bytes\n", s.mem);
		printf("coherence: %" PRIu64 " kernel text writes mirrored, %" PRIu64
		       " hooks displaced, %" PRIu64 " audits, %" PRIu64 " mismatches\n",
		       s.mirrored, s.conflicts, s.audits, s.mismatches);
		printf("kprobes:  %" PRIu64 " optimizer backups corrected, %" PRIu64
		       " registrations refused to traced processes\n", s.backups_fixed, s.kprobes_refused);
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

/* xprobectl audit: compare every private copy with the kernel text now. */
int cmd_audit(int argc, char **argv)
{
	static const struct option opts[] = { COMMON_OPTS, { 0 } };
	uint64_t bad = 0;
	bool json = false;
	struct xp_nl *nl;
	struct nl_msg *msg;
	int c, err;

	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'h': printf("usage: xprobectl audit [--json]\n"); return EXIT_OK;
		default: return EXIT_USAGE;
		}
	}
	if (optind != argc)
		return usage_error("audit takes no arguments");
	nl = xp_nl_open();
	if (!nl)
		return EXIT_RUNTIME;
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
		       bad ? " (repaired)" : "");
	}
	return EXIT_OK;
}
