// SPDX-License-Identifier: GPL-2.0
/*
 * branches-check FILE...: xprobectl's branches into a function's first
 * bytes (ctl/branches.c: candidates from a byte scan, each decoded in its
 * region between two symbols) against a linear sweep of every executable
 * segment whole with Capstone, as branches.c did until 2026-12-01, for
 * every function symbol of each FILE. branches.c decodes with Zydis since
 * 2026-12-02: two decoders must agree as well. They may differ only where
 * code before a symbol does not decode whole (the whole sweep then enters
 * the function out of step). Prints the functions, the branches found, any
 * difference (exit 1), and the time of each way.
 *
 * For each function also the span its branches are listed to
 * (branches_span(): Zydis measures the bytes a jump would cover) against
 * the module's own decoder, and the list to that span against the whole
 * window's.
 *
 * Also checks the scan itself (branches_targets()): every relative branch
 * Capstone decodes from a one- or two-byte opcode (behind no prefix or one
 * that changes a branch's size) must get its target from the scan.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <capstone/capstone.h>
#include "../../ctl/branches.h"
#include "../../ctl/elfsym.h"
#include "../../module/insn.h"

struct br {
	uint64_t to, from;
};

static struct br *all;
static size_t nall, capall;

static int by_to(const void *a, const void *b)
{
	const struct br *x = a, *y = b;

	if (x->to != y->to)
		return x->to < y->to ? -1 : 1;
	return x->from < y->from ? -1 : x->from > y->from;
}

/* The reference: each executable segment swept whole. */
static int sweep_whole(const char *path)
{
	struct elf_seg segs[16];
	size_t nsegs, i, got;
	cs_insn *insn;
	const char *raw;
	csh cs;
	Elf *e;
	int fd;

	nall = 0;
	fd = open(path, O_RDONLY);
	elf_version(EV_CURRENT);
	e = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e)
		return -1;
	nsegs = elf_exec_segs(e, segs, 16);
	raw = elf_rawfile(e, &got);
	cs_open(CS_ARCH_X86, CS_MODE_64, &cs);
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	cs_option(cs, CS_OPT_SKIPDATA, CS_OPT_ON);
	insn = cs_malloc(cs);
	for (i = 0; i < nsegs; i++) {
		const uint8_t *code = (const uint8_t *)raw + segs[i].offset;
		size_t len = segs[i].filesz;
		uint64_t at = segs[i].vaddr, to, from;

		while (len && cs_disasm_iter(cs, &code, &len, &at, insn)) {
			const cs_x86 *x = &insn->detail->x86;

			if (!insn->id || !cs_insn_group(cs, insn, CS_GRP_BRANCH_RELATIVE) ||
			    x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
				continue;
			if (!elf_va_off(segs, nsegs, (uint64_t)x->operands[0].imm, &to) ||
			    !elf_va_off(segs, nsegs, insn->address, &from))
				continue;
			if (nall == capall) {
				capall = capall ? capall * 2 : 65536;
				all = realloc(all, capall * sizeof(*all));
			}
			all[nall++] = (struct br){ to, from };
		}
	}
	cs_free(insn, 1);
	cs_close(&cs);
	elf_end(e);
	close(fd);
	qsort(all, nall, sizeof(*all), by_to);
	return 0;
}

struct run {
	const char *path;
	size_t funcs, branches, diffs, spans, span_diffs;
	double t_new;
	int fd;
};

/*
 * The span as the module's decoder (module/insn.c) measures the cover:
 * ENDBR64, then whole instructions to 5 bytes; 0 where it cannot.
 */
static unsigned int module_span(int fd, uint64_t off)
{
	uint8_t b[XPROBES_UH_BRANCH_WINDOW + 16];
	unsigned int end = 0, site = 0;
	struct xp_insn insn;
	ssize_t got = pread(fd, b, sizeof(b), off);

	if (got < 4)
		return 0;
	if (!memcmp(b, "\xf3\x0f\x1e\xfa", 4))
		site = end = 4;
	while (end < site + 5) {
		if (xp_insn_decode(&insn, b + end, got - end))
			return 0;
		end += insn.len;
	}
	return end;
}

static int by_from(const void *a, const void *b)
{
	const struct xprobes_uh_branch *x = a, *y = b;

	return x->from < y->from ? -1 : x->from > y->from;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int one(const char *name, uint64_t off, uint64_t size, void *arg)
{
	struct xprobes_uh_branch got[XPROBES_UH_BRANCHES_MAX], want[XPROBES_UH_BRANCHES_MAX];
	struct run *r = arg;
	const char *why = NULL;
	size_t lo = 0, hi = nall, nw = 0;
	double t0 = now();
	int n, i;

	(void)size;
	n = branches_into(r->path, off, XPROBES_UH_BRANCH_WINDOW, got, XPROBES_UH_BRANCHES_MAX, &why);
	r->t_new += now() - t0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (all[mid].to <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < nall && all[lo].to < off + XPROBES_UH_BRANCH_WINDOW; lo++)
		if (nw < XPROBES_UH_BRANCHES_MAX)
			want[nw++] = (struct xprobes_uh_branch){ .from = all[lo].from,
								 .to = (uint32_t)(all[lo].to - off) };
		else
			nw++;
	r->funcs++;
	if (n < 0 && nw > XPROBES_UH_BRANCHES_MAX && n == -E2BIG)
		return 0;	/* both: too many */
	if (n < 0 || (size_t)n != nw) {
		if (r->diffs++ < 20)
			printf("%s: %s at 0x%" PRIx64 ": %d branches (%s), the whole sweep %zu\n",
			       r->path, name, off, n, n < 0 ? why : "ok", nw);
		return 0;
	}
	qsort(got, n, sizeof(*got), by_from);
	qsort(want, nw, sizeof(*want), by_from);
	for (i = 0; i < n; i++)
		if (got[i].from != want[i].from || got[i].to != want[i].to) {
			if (r->diffs++ < 20)
				printf("%s: %s: branch from 0x%" PRIx64 " to +%u, the whole sweep's from 0x%"
				       PRIx64 " to +%u\n", r->path, name, (uint64_t)got[i].from, got[i].to,
				       (uint64_t)want[i].from, want[i].to);
			return 0;
		}
	r->branches += n;
	/*
	 * The span xprobectl lists the branches to (XPROBES_A_UH_BRANCH_SPAN)
	 * is the module's cover: else every add there is asked twice. And
	 * the list to it is the whole window's cut there.
	 */
	{
		unsigned int span = branches_span(r->path, off), ms = module_span(r->fd, off);
		int k, m = 0;

		r->spans++;
		if (ms && span != ms && r->span_diffs++ < 20)
			printf("%s: %s at 0x%" PRIx64 ": Zydis covers to +%u, the module's decoder "
			       "to +%u\n", r->path, name, off, span, ms);
		n = branches_into(r->path, off, span, got, XPROBES_UH_BRANCHES_MAX, &why);
		for (k = 0; k < (int)nw; k++)
			m += want[k].to < span;
		if (n != m && r->diffs++ < 20)
			printf("%s: %s: %d branches to +%u, %d of the whole window's land there\n",
			       r->path, name, n, span, m);
	}
	return 0;
}

/*
 * Every relative branch Capstone decodes, behind no prefix or one that
 * changes its size, has its opcode where the scan looks and a target the
 * scan computes from there.
 */
static int opcodes(void)
{
	static const unsigned int pre[] = { 0x100, 0x66, 0x67, 0x48, 0xf2, 0x3e };
	static const uint8_t disp[][4] = { { 0x11, 0x22, 0x33, 0x44 }, { 0xf0, 0xff, 0xff, 0xff },
					   { 0x80, 0x7f, 0x00, 0x80 } };
	unsigned int p, a, b, d, bad = 0, seen = 0;
	cs_insn *in;
	csh cs;

	cs_open(CS_ARCH_X86, CS_MODE_64, &cs);
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	in = cs_malloc(cs);
	for (p = 0; p < sizeof(pre) / sizeof(pre[0]); p++)
		for (a = 0; a < 256; a++)
			for (b = 0; b < 256; b++)
				for (d = 0; d < 3; d++) {
					uint8_t buf[16] = { 0 };
					const uint8_t *c = buf;
					uint64_t at = 0x1000, t[BRANCH_TARGETS_MAX];
					size_t len = sizeof(buf), k = 0, op, n, i;
					bool known = false;

					if (a != 0x0f && b)
						continue;	/* a one-byte opcode: once */
					if (pre[p] != 0x100)
						buf[k++] = pre[p];
					op = k;
					buf[k++] = a;
					if (a == 0x0f)
						buf[k++] = b;
					memcpy(buf + k, disp[d], 4);
					if (!cs_disasm_iter(cs, &c, &len, &at, in) ||
					    !cs_insn_group(cs, in, CS_GRP_BRANCH_RELATIVE) ||
					    in->detail->x86.op_count != 1 ||
					    in->detail->x86.operands[0].type != X86_OP_IMM)
						continue;
					seen++;
					n = branches_targets(buf, sizeof(buf), op, 0x1000 + op, t);
					for (i = 0; i < n; i++)
						known |= t[i] == (uint64_t)in->detail->x86.operands[0].imm;
					if (!known && bad++ < 10)
						printf("a relative branch the scan misses: %s %s (%02x %02x ...)\n",
						       in->mnemonic, in->op_str, buf[op], buf[op + 1]);
				}
	cs_free(in, 1);
	cs_close(&cs);
	printf("opcodes: %u relative branches decoded, %u the scan would miss\n", seen, bad);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	int i, bad = opcodes();

	for (i = 1; i < argc; i++) {
		struct run r = { .path = argv[i], .fd = open(argv[i], O_RDONLY) };
		const char *why;
		double t0 = now(), t_whole;

		if (sweep_whole(argv[i])) {
			printf("%s: cannot read\n", argv[i]);
			return 2;
		}
		t_whole = now() - t0;
		if (elf_funcs(argv[i], one, &r, &why) < 0) {
			printf("%s: %s\n", argv[i], why);
			return 2;
		}
		printf("%s: %zu functions, %zu branches into their first bytes, %zu differences; "
		       "whole sweep %.0f ms, by candidates %.0f ms; %zu spans, %zu the module's "
		       "decoder measures otherwise\n", argv[i], r.funcs, r.branches, r.diffs,
		       t_whole * 1e3, r.t_new * 1e3, r.spans, r.span_diffs);
		bad |= r.diffs != 0 || r.span_diffs != 0;
		close(r.fd);
	}
	return bad;
}
