// SPDX-License-Identifier: GPL-2.0
/*
 * xprobectl trace's user hooks: in views mode each traced function gets an
 * xprobes user hook with returns (docs/userhooks.md): no trap per call. By
 * default the hooks write records in the process's memory, which the view
 * hands to fn_records at each switch (no kernel entry per call); with -T or
 * --folded, or where the process has no rseq, they fire events instead,
 * which fn_entry_uh and fn_return_uh take. Each request lists the branches
 * from anywhere in the file into the function's first bytes (branches.c). A
 * function the module refuses a hook (a branch into its first bytes, a jump
 * table, ...) keeps a uprobe
 * and a uretprobe. The hooks go with the view when trace ends.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netlink/attr.h>
#include <bpf/bpf.h>
#include "branches.h"
#include "elfsym.h"
#include "nl.h"
#include "tracer.h"
#include "trace.skel.h"

static int got_id(struct nlattr **tb, void *arg)
{
	if (tb[XPROBES_A_HOOK_ID])
		*(uint32_t *)arg = nla_get_u32(tb[XPROBES_A_HOOK_ID]);
	return 0;
}

/* The [xprobes-uhooks] areas of the target, for fn_entry_uh's tail-call test. */
void tuhooks_areas(struct tsession *s)
{
	unsigned long lo, hi;
	char path[64], line[512];
	size_t n = 0, max = sizeof(s->skel->bss->uarea_lo) / sizeof(s->skel->bss->uarea_lo[0]);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)s->pid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (n < max && fgets(line, sizeof(line), f))
		if (strstr(line, "[xprobes-uhooks]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2) {
			s->skel->bss->uarea_lo[n] = lo;
			s->skel->bss->uarea_hi[n++] = hi;
		}
	fclose(f);
}

/*
 * Add a user hook for every traced function that allows one; the others
 * stay for uprobes. Returns 0, or -1 when the module failed in a way that
 * is no function's fault (the caller then falls back to uprobes for all).
 */
int tuhooks_add(struct tsession *s, bool verbose)
{
	int i, refused = 0, shown = 0, step = s->nfuncs / 20 + 1;
	bool progress = s->nfuncs >= 100;
	char first[300] = "";

	for (i = 0; i < s->nfuncs; i++) {
		struct tfunc *f = &s->funcs[i];
		struct xprobes_uh_branch br[XPROBES_UH_BRANCHES_MAX];
		struct nl_msg *msg;
		const char *why;
		uint64_t addr;
		uint32_t id = 0;
		int err, nbr;

		if (!f->size || pid_file_addr(s->pid, f->path, f->offset, &addr)) {
			refused++;
			continue;
		}
		nbr = branches_into(f->path, f->offset, br, XPROBES_UH_BRANCHES_MAX, &why);
		if (nbr < 0) {
			refused++;
			if (!first[0])
				snprintf(first, sizeof(first), "%s: %s", f->name, why);
			continue;
		}
		msg = xp_nl_msg(s->nl, XPROBES_CMD_UHOOK_ADD, 0);
		nla_put_u32(msg, XPROBES_A_PID, s->pid);
		nla_put_u64(msg, XPROBES_A_ADDR, addr);
		nla_put_u32(msg, XPROBES_A_SIZE, f->size > UINT32_MAX ? UINT32_MAX : f->size);
		nla_put_u32(msg, XPROBES_A_FLAGS, (f->no_return ? 0 : XPROBES_F_RETURNS) |
			    (s->records ? XPROBES_F_RECORDS : XPROBES_F_EVENTS));
		nla_put_u64(msg, XPROBES_A_COOKIE, i);
		nla_put(msg, XPROBES_A_UH_BRANCHES, nbr * sizeof(*br), br);
		err = xp_nl_call(s->nl, msg, got_id, &id);
		if (s->records && err == -EOPNOTSUPP && strstr(s->nl->ext_msg, "rseq")) {
			fprintf(stderr, "xprobectl: %s: user hooks with events\n", s->nl->ext_msg);
			s->records = false;
			i--;
			continue;
		}
		if (err == -EPERM && strstr(s->nl->ext_msg, "seccomp")) {
			fprintf(stderr, "xprobectl: %s: uprobes for every function\n", s->nl->ext_msg);
			return -1;
		}
		if (err || !id) {
			refused++;
			if (!first[0])
				snprintf(first, sizeof(first), "%s: %s", f->name,
					 s->nl->ext_msg[0] ? s->nl->ext_msg : strerror(-err));
			if (verbose && shown++ < 20)
				fprintf(stderr, "xprobectl: no user hook on %s: %s\n", f->name,
					s->nl->ext_msg[0] ? s->nl->ext_msg : strerror(-err));
			continue;
		}
		f->uhook = id;
		s->nuhooks++;
		if (progress && (i % step == 0 || i + 1 == s->nfuncs))
			fprintf(stderr, "\rxprobectl: user hooks on %d/%d functions", i + 1, s->nfuncs);
	}
	if (progress)
		fprintf(stderr, "\n");
	if (refused)
		fprintf(stderr, "xprobectl: %d function%s through uprobes: no user hook possible "
			"(first: %s)\n", refused, refused == 1 ? "" : "s", first[0] ? first : "?");
	return 0;
}
