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
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netlink/attr.h>
#include <bpf/bpf.h>
#include "branches.h"
#include "elfsym.h"
#include "nl.h"
#include "tracer.h"
#include "util.h"
#include "trace.skel.h"

/* A records cookie: a function's index, in the 14 bits records carry. */
_Static_assert(TRACE_MAX_FUNCS - 1 <= XPROBES_UREC_COOKIE(~0ULL),
	       "a records cookie must fit the 14 bits records carry");

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
 * The process filters its system calls (seccomp, syscall user dispatch),
 * or is about to: functions from FROM on get no user hook, and uprobes
 * take them. Under dispatch on 6.11+, a uretprobe returns through a
 * system call from uprobes' page, which dispatch does not exempt: a
 * SIGSYS for the process. Those functions are traced at their entries.
 */
static void filtered_to_uprobes(struct tsession *s, int from)
{
	bool entries = strstr(s->nl->ext_msg, "syscall user dispatch") && kernel_at_least(6, 11);
	int i;

	fprintf(stderr, "xprobectl: %s: uprobes for %s function%s%s\n", s->nl->ext_msg,
		from ? "the other" : "every", s->nfuncs - from == 1 ? "" : "s",
		entries ? TRACE_CALLS_ONLY_WHY : "");
	for (i = from; entries && i < s->nfuncs; i++)
		s->funcs[i].no_return = true;
}

/* What one UHOOK_ADD asks for. */
struct uhook_ask {
	const char *path;
	uint64_t offset, addr, size, cookie;
	uint32_t flags;
};

/*
 * UHOOK_ADD for @a, its id in *@id. The branches are listed only as far as
 * the jump's cover reaches (branches_span()): the rest of the window holds
 * nothing that matters and is most of what listing costs (traceall on
 * redis-server disassembled 2413 of the file's regions for a window of 32
 * bytes, 424 for the covers). Should the module's cover reach further (its
 * decoder and Zydis disagreeing on a length), it refuses with EMSGSIZE and
 * the whole window is sent. 0, the netlink error (-errno, the module's
 * message in s->nl->ext_msg), or 1 when the branches could not be listed
 * (*@why says why).
 */
static int uhook_ask(struct tsession *s, const struct uhook_ask *a, uint32_t *id,
		     const char **why)
{
	struct xprobes_uh_branch br[XPROBES_UH_BRANCHES_MAX];
	bool trap = a->flags & XPROBES_F_TRAP;
	unsigned int span = trap ? 0 : branches_span(a->path, a->offset);
	struct nl_msg *msg;
	int nbr = 0, err;

	for (;;) {
		/* a trap changes one byte: no branch can land inside it */
		if (!trap) {
			nbr = branches_into(a->path, a->offset, span, br, XPROBES_UH_BRANCHES_MAX,
					    why);
			if (nbr < 0)
				return 1;
		}
		msg = xp_nl_msg(s->nl, XPROBES_CMD_UHOOK_ADD, 0);
		nla_put_u32(msg, XPROBES_A_PID, s->pid);
		nla_put_u64(msg, XPROBES_A_ADDR, a->addr);
		nla_put_u32(msg, XPROBES_A_SIZE, a->size > UINT32_MAX ? UINT32_MAX : a->size);
		nla_put_u32(msg, XPROBES_A_FLAGS, a->flags);
		nla_put_u64(msg, XPROBES_A_COOKIE, a->cookie);
		nla_put(msg, XPROBES_A_UH_BRANCHES, nbr * sizeof(*br), br);
		if (!trap)
			nla_put_u32(msg, XPROBES_A_UH_BRANCH_SPAN, span);
		*id = 0;
		err = xp_nl_call(s->nl, msg, xp_nl_got_hook_id, id);
		/* (a reply too long for its buffer would be EMSGSIZE too, hook added) */
		if (err != -EMSGSIZE || trap || span >= XPROBES_UH_BRANCH_WINDOW ||
		    !strstr(s->nl->ext_msg, "branches were listed to"))
			return err;
		span = XPROBES_UH_BRANCH_WINDOW;
	}
}

/*
 * Add a user hook for every traced function that allows one; the others
 * stay for uprobes. Returns 0, or -1 when the module failed in a way that
 * is no function's fault (the caller then falls back to uprobes for all).
 */
int tuhooks_add(struct tsession *s, bool verbose)
{
	int i, refused = 0, traps = 0, shown = 0, step = s->nfuncs / 20 + 1;
	bool progress = s->nfuncs >= 100;
	char first[300] = "", first_trap[300] = "";
	struct pid_maps *pm;
	int err;

	/* one reading of the maps for all (3253 readings took 0.1 s of the VM's) */
	pm = pid_maps_read(s->pid, &err);
	for (i = 0; i < s->nfuncs; i++) {
		struct tfunc *f = &s->funcs[i];
		struct uhook_ask a;
		const char *why;
		uint64_t addr;
		uint32_t id = 0;

		if (!f->size || !pm || pid_maps_addr(pm, f->path, f->offset, &addr)) {
			refused++;
			if (!first[0])
				snprintf(first, sizeof(first), "%s: %s", f->name, !f->size ?
					 "its symbol has no size" : "not mapped in the process");
			continue;
		}
		if (addr == s->held_pc) {
			/*
			 * The command waits here, stopped, until tracing
			 * starts: the module would wait for its thread to
			 * leave the bytes a jump covers, then refuse (2 s).
			 */
			refused++;
			if (!first[0])
				snprintf(first, sizeof(first), "%s: the command is stopped at its "
					 "first instruction until tracing starts", f->name);
			continue;
		}
		if (unwinder_name(f->name)) {
			/* its entry takes the unwinder hook (tuhooks_unwinders()) */
			f->no_return = true;
			continue;
		}
		a = (struct uhook_ask){
			.path = f->path, .offset = f->offset, .addr = addr, .size = f->size,
			.flags = (f->no_return ? 0 : XPROBES_F_RETURNS) |
				 (s->records ? XPROBES_F_RECORDS : XPROBES_F_EVENTS),
			/* records carry 14 bits of it (XPROBES_UREC_COOKIE); see load_bpf() */
			.cookie = i | (f->no_return && !s->records ? TRACE_ENTRY_ONLY : 0),
		};
		err = uhook_ask(s, &a, &id, &why);
		if ((err == -EINVAL || err == -E2BIG) && !strncmp(s->nl->ext_msg, "no jump here", 12)) {
			/*
			 * The module's int3 stays and sends each call to the
			 * trampoline (XPROBES_F_TRAP): a trap per call, but
			 * the records, sums and return thunks of any user
			 * hook, where a uprobe and a uretprobe would take two
			 * traps and run their programs at each.
			 */
			char no_jump[sizeof(s->nl->ext_msg)];

			snprintf(no_jump, sizeof(no_jump), "%s", s->nl->ext_msg);
			a.flags |= XPROBES_F_TRAP;
			err = uhook_ask(s, &a, &id, &why);
			f->uhook_trap = !err && id;
			traps += f->uhook_trap;
			if (f->uhook_trap && !first_trap[0])
				snprintf(first_trap, sizeof(first_trap), "%s: %s", f->name, no_jump);
		}
		if (err == 1) {
			refused++;
			if (!first[0])
				snprintf(first, sizeof(first), "%s: %s", f->name, why);
			continue;
		}
		if (s->records && err == -EOPNOTSUPP && strstr(s->nl->ext_msg, "rseq")) {
			fprintf(stderr, "xprobectl: %s: user hooks with events\n", s->nl->ext_msg);
			s->records = false;
			i--;
			continue;
		}
		if (err == -EPERM && (strstr(s->nl->ext_msg, "seccomp") ||
				      strstr(s->nl->ext_msg, "syscall user dispatch"))) {
			filtered_to_uprobes(s, i);
			break;
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
	pid_maps_free(pm);
	if (progress)
		fprintf(stderr, "\n");
	if (traps)
		fprintf(stderr, "xprobectl: %d function%s on user hooks that trap at each call: no "
			"jump possible (first: %s)\n", traps, traps == 1 ? "" : "s", first_trap);
	if (refused)
		fprintf(stderr, "xprobectl: %d function%s through uprobes: no user hook possible "
			"(first: %s)\n", refused, refused == 1 ? "" : "s", first[0] ? first : "?");
	return 0;
}

/* An unwinder's entry point found in a file (elf_funcs()' callback). */
struct unwinder_sym {
	char name[32];
	uint64_t offset, size;
};

struct unwinder_syms {
	struct unwinder_sym sym[8];
	unsigned int n;
};

static int unwinder_found(const char *name, uint64_t off, uint64_t size, void *arg)
{
	struct unwinder_syms *u = arg;

	if (!unwinder_name(name) || !size || u->n == sizeof(u->sym) / sizeof(u->sym[0]))
		return 0;
	snprintf(u->sym[u->n].name, sizeof(u->sym[u->n].name), "%s", name);
	u->sym[u->n].offset = off;
	u->sym[u->n++].size = size;
	return 0;
}

/*
 * An unwinder's entry point is a jump where its file's branches cost little
 * to find (disassembled already for the traced functions, or a small file:
 * libgcc_s), and a trap elsewhere: libc's __libc_unwind_link_get(), met once
 * per process, is not worth disassembling libc at every start (about 0.1 s
 * of a real CPU, 3 s of the test VM's).
 */
#define UNWINDER_JUMP_TEXT	(1u << 20)

/* An unwinder hook on the function at OFF (SIZE bytes) of PATH; its id, 0 if refused. */
static uint32_t unwinder_hook(struct tsession *s, const char *path, uint64_t off, uint64_t size,
			      const char **why)
{
	struct uhook_ask a = {
		.path = path, .offset = off, .size = size, .cookie = TRACE_UNWINDER_COOKIE,
		.flags = XPROBES_F_EVENTS | XPROBES_F_UNWINDER,
	};
	uint32_t id = 0;
	int err;

	if (pid_file_addr(s->pid, path, off, &a.addr)) {
		*why = "not mapped";
		return 0;
	}
	if (!branches_cheap(path, UNWINDER_JUMP_TEXT))
		a.flags |= XPROBES_F_TRAP;
	err = uhook_ask(s, &a, &id, why);
	if (err == 1)
		return 0;
	if (err || !id) {
		*why = s->nl->ext_msg[0] ? s->nl->ext_msg : strerror(-err);
		return 0;
	}
	return id;
}

/*
 * Return thunks stand in return slots, which an unwinder reads (C++
 * exceptions, Rust panics, backtrace(), pthread_cancel()): when a user
 * hook has returns, the unwinder's entry points in the program, in the
 * traced functions' files, in libgcc_s and in libc (its way to libgcc_s)
 * take unwinder hooks, which give the unwinder the return addresses
 * (module/uhooks/uunwind.c). Said once where
 * none could be placed and the program unwinds.
 */
void tuhooks_unwinders(struct tsession *s)
{
	struct unwinder_files uf;
	char first[300] = "";
	const char *why;
	unsigned int i, j;

	if (!unwinder_files(s, s->pid, true, &uf))
		return;
	for (j = 0; j < uf.n; j++) {
		struct unwinder_syms u = { .n = 0 };

		elf_funcs(uf.path[j], unwinder_found, &u, &why);
		for (i = 0; i < u.n; i++) {
			if (unwinder_hook(s, uf.path[j], u.sym[i].offset, u.sym[i].size, &why))
				s->nunwinders++;
			else if (!first[0])
				snprintf(first, sizeof(first), "%s: %s", u.sym[i].name, why);
		}
	}
	if (first[0])
		fprintf(stderr, "xprobectl: an unwinder entry point has no hook (%s): a C++ "
			"exception, Rust panic or backtrace() through a traced function may end "
			"the program\n", first);
	else if (!s->nunwinders && unwinds(uf.exe, s->pid))
		fprintf(stderr, "xprobectl: found no unwinder entry point to hook in %s or "
			"libgcc_s (stripped, or another unwinder): a C++ exception, Rust panic or "
			"backtrace() through a traced function may end it\n", uf.exe);
}
