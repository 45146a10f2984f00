// SPDX-License-Identifier: GPL-2.0
/*
 * The direct branches of an ELF file's executable text, for uhook add.
 *
 * A user hook's jump may cover several instructions of a function's entry;
 * the module checks the branches inside the function, but another function
 * may jump into it too: hand-written assembly with shared labels (glibc's
 * memmove family), or a GCC cold part jumping back into its function's
 * body. Such a branch would land inside the jump's displacement. So every
 * executable PT_LOAD segment of the file is disassembled with Capstone
 * (linear sweep; bytes that do not decode are skipped, as data) and each
 * relative branch kept as (target, source) in file offsets, sorted by
 * target. One file is disassembled once per xprobectl run (trace hooks
 * thousands of functions of one file).
 *
 * Only the file's own text is looked at: between ELF objects a branch goes
 * through the PLT or a pointer, to a function's start. Code generated at
 * run time (a JIT) that jumps into a function's middle is not seen.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <capstone/capstone.h>
#include "branches.h"
#include "elfsym.h"

struct branch {
	uint64_t to, from;	/* file offsets */
};

struct file_branches {
	char *path;
	struct branch *b;	/* by target */
	size_t n;
	struct file_branches *next;
};

static struct file_branches *cache;

static int by_target(const void *a, const void *b)
{
	const struct branch *x = a, *y = b;

	return x->to < y->to ? -1 : x->to > y->to;
}

/* The file offset of address @va, if an executable segment has it. */
static bool va_off(const struct elf_seg *s, size_t ns, uint64_t va, uint64_t *off)
{
	size_t i;

	for (i = 0; i < ns; i++)
		if (va >= s[i].vaddr && va < s[i].vaddr + s[i].filesz) {
			*off = va - s[i].vaddr + s[i].offset;
			return true;
		}
	return false;
}

static int add(struct file_branches *fb, size_t *cap, uint64_t to, uint64_t from)
{
	if (fb->n == *cap) {
		struct branch *p;

		*cap = *cap ? *cap * 2 : 4096;
		p = realloc(fb->b, *cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		fb->b = p;
	}
	fb->b[fb->n++] = (struct branch){ to, from };
	return 0;
}

/* Disassemble @len bytes at @va (@code) and keep their relative branches. */
static int sweep(csh cs, cs_insn *insn, const uint8_t *code, size_t len, uint64_t va,
		 const struct elf_seg *segs, size_t nsegs, struct file_branches *fb, size_t *cap)
{
	uint64_t at = va, from, to;
	int err;

	while (len) {
		const cs_x86 *x;

		if (!cs_disasm_iter(cs, &code, &len, &at, insn))
			break;	/* cannot happen with SKIPDATA but at the end */
		if (!insn->id || !cs_insn_group(cs, insn, CS_GRP_BRANCH_RELATIVE))
			continue;
		x = &insn->detail->x86;
		if (x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
			continue;
		if (!va_off(segs, nsegs, (uint64_t)x->operands[0].imm, &to) ||
		    !va_off(segs, nsegs, insn->address, &from))
			continue;	/* out of the file's text: lands on no function */
		err = add(fb, cap, to, from);
		if (err)
			return err;
	}
	return 0;
}

static struct file_branches *load(const char *path, const char **why)
{
	struct elf_seg segs[16];
	size_t nsegs, phnum, i, cap = 0, got = 0;
	struct file_branches *fb;
	char *raw;
	cs_insn *insn = NULL;
	csh cs = 0;
	Elf *e = NULL;
	int fd, err = 0;

	fb = calloc(1, sizeof(*fb));
	if (!fb || !(fb->path = strdup(path))) {
		free(fb);
		*why = "out of memory";
		return NULL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*why = strerror(errno);
		goto fail;
	}
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || elf_getphdrnum(e, &phnum)) {
		*why = "not an ELF file";
		goto fail;
	}
	nsegs = elf_exec_segs(e, segs, 16);
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK ||
	    cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON) != CS_ERR_OK ||
	    cs_option(cs, CS_OPT_SKIPDATA, CS_OPT_ON) != CS_ERR_OK || !(insn = cs_malloc(cs))) {
		*why = "Capstone cannot disassemble x86-64";
		goto fail;
	}
	raw = elf_rawfile(e, &got);
	for (i = 0; i < nsegs && !err; i++) {
		if (!raw || segs[i].offset + segs[i].filesz > got) {
			*why = "a segment lies past the file's end";
			goto fail;
		}
		err = sweep(cs, insn, (const uint8_t *)raw + segs[i].offset, segs[i].filesz,
			    segs[i].vaddr, segs, nsegs, fb, &cap);
	}
	if (err) {
		*why = "out of memory";
		goto fail;
	}
	qsort(fb->b, fb->n, sizeof(*fb->b), by_target);
	cs_free(insn, 1);
	cs_close(&cs);
	elf_end(e);
	close(fd);
	return fb;
fail:
	if (insn)
		cs_free(insn, 1);
	if (cs)
		cs_close(&cs);
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	free(fb->b);
	free(fb->path);
	free(fb);
	return NULL;
}

static struct file_branches *branches_of(const char *path, const char **why)
{
	struct file_branches *fb;

	for (fb = cache; fb; fb = fb->next)
		if (!strcmp(fb->path, path))
			return fb;
	fb = load(path, why);
	if (fb) {
		fb->next = cache;
		cache = fb;
	}
	return fb;
}

bool branches_cheap(const char *path, uint64_t max_text)
{
	struct file_branches *fb;

	for (fb = cache; fb; fb = fb->next)
		if (!strcmp(fb->path, path))
			return true;
	return elf_exec_bytes(path) <= max_text;
}

int branches_into(const char *path, uint64_t offset, struct xprobes_uh_branch *out, size_t max,
		  const char **why)
{
	struct file_branches *fb = branches_of(path, why);
	size_t lo = 0, hi, n = 0;

	if (!fb)
		return -EINVAL;
	/* the first branch landing past OFFSET */
	hi = fb->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (fb->b[mid].to <= offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < fb->n && fb->b[lo].to < offset + XPROBES_UH_BRANCH_WINDOW; lo++) {
		if (n == max) {
			*why = "too many branches land in the function's first bytes";
			return -E2BIG;
		}
		out[n++] = (struct xprobes_uh_branch){ .from = fb->b[lo].from,
						       .to = (uint32_t)(fb->b[lo].to - offset) };
	}
	return (int)n;
}

struct name_at {
	uint64_t off;
	const char *best;
	uint64_t best_off;
	char name[256];
};

static int find_container(const char *name, uint64_t offset, uint64_t size, void *arg)
{
	struct name_at *a = arg;

	/* the innermost: the last to start at or before it (calls come in offset order) */
	if (a->off >= offset && a->off < offset + (size ?: 1)) {
		snprintf(a->name, sizeof(a->name), "%s", name);
		a->best_off = offset;
		a->best = a->name;
	}
	return offset > a->off;	/* past it: done */
}

const char *branches_explain(const char *msg, const char *path, const char *func,
			     char *out, size_t len)
{
	struct name_at a = { 0 };
	const char *why, *tail;
	unsigned long long from;
	unsigned int to;
	int n = 0;

	if (sscanf(msg, "no jump here: branch at file offset 0x%llx lands at +%u%n",
		   &from, &to, &n) != 2 || !n)
		return msg;
	tail = ", inside the bytes the jump would cover (a uprobe works there)";
	a.off = from;
	if (elf_funcs(path, find_container, &a, &why) < 0 || !a.best)
		snprintf(out, len, "no jump here: a branch at file offset 0x%llx lands at %s+0x%x%s",
			 from, func, to, tail);
	else
		snprintf(out, len, "no jump here: a branch at %s+0x%" PRIx64 " (file offset 0x%llx) "
			 "lands at %s+0x%x%s", a.best, (uint64_t)from - a.best_off, from, func, to,
			 tail);
	return out;
}
