// SPDX-License-Identifier: GPL-2.0
/*
 * The direct branches of an ELF file's executable text, for uhook add.
 *
 * A user hook's jump may cover several instructions of a function's entry;
 * the module checks the branches inside the function, but another function
 * may jump into it too: hand-written assembly with shared labels (glibc's
 * memmove family), or a GCC cold part jumping back into its function's
 * body. Such a branch would land inside the jump's displacement. So the
 * file's executable text is decoded with Zydis (linear sweep; a byte that
 * does not decode is skipped, as data) and each relative branch landing in
 * a hooked function's first bytes is handed to the module. Zydis decodes
 * without formatting text: Capstone, used until 2026-12-02 and still the
 * reference of selftests/host/branches-check.c, spent 0.64 of traceall's
 * 2.3 s of attach in the bench's VM printing instructions no one read.
 *
 * Only what can matter is disassembled. Every relative branch names its
 * target in its last bytes, after an opcode from a short list (rel8 after
 * 70-7f, e0-e3, eb; rel32, or rel16 behind an operand-size prefix, after
 * e8, e9 and 0f 80-8f: every form Capstone reports as a relative branch,
 * selftests/host/branches-check.c, and the forms sweep() keeps), so one pass over the bytes finds each
 * place where a branch to a given window could be: the candidates, sorted
 * by the target each would have. A window's candidates are then decoded,
 * each in its region: the text from the last function symbol (or segment
 * start) before it to the next, swept from its start, once a run and
 * kept. Regions resynchronise the sweep at every symbol, which a sweep of
 * the whole segment does too wherever the code before a symbol decodes
 * whole (branches-check compares the two on real programs and libraries).
 * A trace of one function of redis-server (2 MB of text) decodes a few
 * regions instead of all of it (1.1 s in the bench's VM); of all of them,
 * about all of it once.
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
#include <Zydis/Decoder.h>
#include "branches.h"
#include "dso.h"
#include "elfsym.h"

/* Zydis, loaded when the first file is scanned (dso.h). */
#define ZYDIS_FNS(X) X(zy, Zydis, DecoderInit) X(zy, Zydis, DecoderEnableMode) \
	X(zy, Zydis, DecoderDecodeInstruction)
static struct { ZYDIS_FNS(DSO_PTR) } zy;
static const struct dso_fn zy_fns[] = { ZYDIS_FNS(DSO_FN) { NULL } };
static struct dso zydis = {
	.soname = "libZydis.so.4.0", .package = "libzydis4.0",
	.fns = zy_fns,
};

struct branch {
	uint64_t to, from;	/* file offsets */
};

/* Text between two sync points (file offsets), swept once when first needed. */
struct region {
	const struct elf_seg *sg;	/* the segment it is in */
	uint64_t start, end;
	struct branch *b;
	size_t n;
	bool swept;
};

/* A place a relative branch could start (its opcode), and where it would land. */
struct cand {
	uint64_t to, at;	/* file offsets */
};

struct file_branches {
	char *path;
	int fd;
	Elf *e;
	const uint8_t *raw;
	size_t got;
	struct elf_seg segs[16];
	size_t nsegs;
	ZydisDecoder dec;
	struct region *r;	/* by start */
	size_t nr;
	struct cand *c;		/* by target's bucket: BUCKET bytes each from clo */
	size_t nc, ccap;
	uint64_t clo;
	uint32_t *cb;		/* bucket i's candidates: c[cb[i]] to c[cb[i + 1]] */
	size_t ncb;
	struct file_branches *next;
};

static struct file_branches *cache;

static int add(struct branch **b, size_t *n, size_t *cap, uint64_t to, uint64_t from)
{
	if (*n == *cap) {
		struct branch *p;

		*cap = *cap ? *cap * 2 : 16;
		p = realloc(*b, *cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		*b = p;
	}
	(*b)[(*n)++] = (struct branch){ to, from };
	return 0;
}

/*
 * Is @i a relative branch of a form the candidates' scan looks for: rel8
 * after 70-7f, e0-e3, eb; rel32 (or rel16) after e8, e9, 0f 80-8f?
 */
static bool rel_branch(const ZydisDecodedInstruction *i)
{
	if (i->encoding != ZYDIS_INSTRUCTION_ENCODING_LEGACY ||
	    !(i->attributes & ZYDIS_ATTRIB_IS_RELATIVE) || !i->raw.imm[0].is_relative)
		return false;
	if (i->opcode_map == ZYDIS_OPCODE_MAP_0F)
		return i->opcode >= 0x80 && i->opcode <= 0x8f;
	return i->opcode_map == ZYDIS_OPCODE_MAP_DEFAULT &&
	       ((i->opcode >= 0x70 && i->opcode <= 0x7f) || (i->opcode >= 0xe0 && i->opcode <= 0xe3) ||
		i->opcode == 0xe8 || i->opcode == 0xe9 || i->opcode == 0xeb);
}

/*
 * Sweep region @r: instructions from its start until one
 * starts at or past its end (the last may run past it), keeping their
 * relative branches into the file's text.
 */
static int sweep(struct file_branches *fb, struct region *r)
{
	const struct elf_seg *sg = r->sg;
	const uint8_t *code = fb->raw + r->start;
	size_t len = sg->offset + sg->filesz - r->start, cap = 0;
	uint64_t at = sg->vaddr + (r->start - sg->offset), end = at + (r->end - r->start);
	ZydisDecoderContext ctx;
	ZydisDecodedInstruction i;
	uint64_t from, to;

	r->swept = true;
	while (len && at < end) {
		size_t n = 1;	/* what does not decode is skipped a byte at a time */

		if (ZYAN_SUCCESS(zy.DecoderDecodeInstruction(&fb->dec, &ctx, code, len, &i))) {
			n = i.length;
			if (rel_branch(&i) &&
			    elf_va_off(fb->segs, fb->nsegs, at + i.length + i.raw.imm[0].value.s, &to) &&
			    elf_va_off(fb->segs, fb->nsegs, at, &from) &&	/* else lands on no function */
			    add(&r->b, &r->n, &cap, to, from))
				return -ENOMEM;
		}
		code += n;
		len -= n;
		at += n;
	}
	return 0;
}

static int cand_add(struct file_branches *fb, uint64_t va, uint64_t at)
{
	uint64_t to;

	if (!elf_va_off(fb->segs, fb->nsegs, va, &to))
		return 0;	/* lands on no function of the file */
	if (fb->nc == fb->ccap) {
		struct cand *p;

		fb->ccap = fb->ccap ? fb->ccap * 2 : 65536;
		p = realloc(fb->c, fb->ccap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		fb->c = p;
	}
	fb->c[fb->nc++] = (struct cand){ to, at };
	return 0;
}

static int32_t rel32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			 (uint32_t)p[3] << 24);
}

static int16_t rel16(const uint8_t *p)
{
	return (int16_t)((uint16_t)p[0] | (uint16_t)p[1] << 8);
}

size_t branches_targets(const uint8_t *code, size_t len, size_t p, uint64_t va,
			uint64_t t[BRANCH_TARGETS_MAX])
{
	uint8_t b = code[p];
	size_t n = 0, i, m;

	if ((b & 0xf0) == 0x70 || (b >= 0xe0 && b <= 0xe3) || b == 0xeb) {
		if (p + 1 < len)
			t[n++] = va + 2 + (int8_t)code[p + 1];
	} else if (b == 0xe8 || b == 0xe9) {
		if (p + 4 < len)
			t[n++] = va + 5 + rel32(code + p + 1);
		if (p + 2 < len)
			t[n++] = va + 3 + rel16(code + p + 1);
	} else if (b == 0x0f && p + 1 < len && (code[p + 1] & 0xf0) == 0x80) {
		if (p + 5 < len)
			t[n++] = va + 6 + rel32(code + p + 2);
		if (p + 3 < len)
			t[n++] = va + 4 + rel16(code + p + 2);
	}
	/* and cut to 16 bits, as an operand-size prefix may have it */
	for (i = 0, m = n; i < m; i++)
		if (t[i] > 0xffff)
			t[n++] = t[i] & 0xffff;
	return n;
}

/*
 * Every place in segment @sg where a relative branch could start, by its
 * opcode. Seven bytes in eight are none of those opcodes: a table says so
 * before branches_targets() looks (traceall's scan of redis-server's 2 MB
 * was 40 M guest instructions of its attach), made by asking
 * branches_targets() of each byte once (0x80 behind it: a jcc after 0f).
 */
static int candidates(struct file_branches *fb, const struct elf_seg *sg)
{
	const uint8_t *code = fb->raw + sg->offset;
	uint64_t t[BRANCH_TARGETS_MAX];
	size_t p, i, n;
	bool op[256];
	int err = 0;

	for (i = 0; i < 256; i++) {
		const uint8_t one[6] = { (uint8_t)i, 0x80 };

		op[i] = branches_targets(one, sizeof(one), 0, 0, t) > 0;
	}
	for (p = 0; p < sg->filesz && !err; p++) {
		if (!op[code[p]])
			continue;
		n = branches_targets(code, sg->filesz, p, sg->vaddr + p, t);
		for (i = 0; i < n && !err; i++)
			err = cand_add(fb, t[i], sg->offset + p);
	}
	return err;
}

#define BUCKET_SHIFT	5	/* as wide as a window: one or two buckets a query */

/* Candidates by target, to the bucket (a counting sort: there are many). */
static int bucket_sort(struct file_branches *fb)
{
	uint64_t hi = 0;
	struct cand *out;
	size_t i;

	fb->clo = UINT64_MAX;
	for (i = 0; i < fb->nsegs; i++) {
		if (fb->segs[i].offset < fb->clo)
			fb->clo = fb->segs[i].offset;
		if (fb->segs[i].offset + fb->segs[i].filesz > hi)
			hi = fb->segs[i].offset + fb->segs[i].filesz;
	}
	if (!fb->nsegs)
		fb->clo = 0;
	fb->ncb = ((hi - fb->clo) >> BUCKET_SHIFT) + 1;
	fb->cb = calloc(fb->ncb + 1, sizeof(*fb->cb));
	out = malloc((fb->nc ?: 1) * sizeof(*out));
	if (!fb->cb || !out || fb->nc > UINT32_MAX) {
		free(out);
		return -ENOMEM;
	}
	for (i = 0; i < fb->nc; i++)
		fb->cb[((fb->c[i].to - fb->clo) >> BUCKET_SHIFT) + 1]++;
	for (i = 0; i < fb->ncb; i++)
		fb->cb[i + 1] += fb->cb[i];
	for (i = 0; i < fb->nc; i++)
		out[fb->cb[(fb->c[i].to - fb->clo) >> BUCKET_SHIFT]++] = fb->c[i];
	/* each bucket's count moved its start to the next's: back by one */
	memmove(fb->cb + 1, fb->cb, fb->ncb * sizeof(*fb->cb));
	fb->cb[0] = 0;
	free(fb->c);
	fb->c = out;
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

struct syncs {
	uint64_t *off;
	size_t n, cap;
};

static int sync_add(const char *name, uint64_t offset, uint64_t size, void *arg)
{
	struct syncs *s = arg;

	(void)name;
	(void)size;
	if (s->n == s->cap) {
		uint64_t *p;

		s->cap = s->cap ? s->cap * 2 : 1024;
		p = realloc(s->off, s->cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		s->off = p;
	}
	s->off[s->n++] = offset;
	return 0;
}

/* The regions: each segment cut at its function symbols. */
static int regions(struct file_branches *fb, const char *path, const char **why)
{
	struct syncs s = { 0 };
	size_t i, j, k;
	int err;

	for (i = 0; i < fb->nsegs; i++)
		if (sync_add(NULL, fb->segs[i].offset, 0, &s))
			goto oom;
	err = elf_funcs(path, sync_add, &s, why);
	if (err == -ENOMEM)
		goto oom;
	if (err < 0)
		s.n = fb->nsegs;	/* no symbols: whole segments */
	qsort(s.off, s.n, sizeof(*s.off), by_start);
	fb->r = calloc(s.n, sizeof(*fb->r));
	if (!fb->r)
		goto oom;
	for (i = 0; i < fb->nsegs; i++) {
		const struct elf_seg *sg = &fb->segs[i];
		uint64_t lo = sg->offset, hi = sg->offset + sg->filesz;

		for (j = 0; j < s.n; j = k) {
			for (k = j + 1; k < s.n && s.off[k] == s.off[j]; k++)
				;
			if (s.off[j] < lo || s.off[j] >= hi)
				continue;
			fb->r[fb->nr++] = (struct region){
				.sg = sg, .start = s.off[j], .end = k < s.n && s.off[k] < hi ? s.off[k] : hi };
		}
	}
	free(s.off);
	return 0;
oom:
	free(s.off);
	*why = "out of memory";
	return -ENOMEM;
}

static void file_free(struct file_branches *fb)
{
	size_t i;

	for (i = 0; fb->r && i < fb->nr; i++)
		free(fb->r[i].b);
	free(fb->r);
	free(fb->c);
	free(fb->cb);
	if (fb->e)
		elf_end(fb->e);
	if (fb->fd >= 0)
		close(fb->fd);
	free(fb->path);
	free(fb);
}

static struct file_branches *load(const char *path, const char **why)
{
	struct file_branches *fb;
	size_t phnum, i;

	fb = calloc(1, sizeof(*fb));
	if (!fb || !(fb->path = strdup(path))) {
		free(fb);
		*why = "out of memory";
		return NULL;
	}
	fb->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fb->fd < 0) {
		*why = strerror(errno);
		goto fail;
	}
	elf_version(EV_CURRENT);
	fb->e = elf_begin(fb->fd, ELF_C_READ_MMAP, NULL);
	if (!fb->e || elf_kind(fb->e) != ELF_K_ELF || elf_getphdrnum(fb->e, &phnum)) {
		*why = "not an ELF file";
		goto fail;
	}
	fb->nsegs = elf_exec_segs(fb->e, fb->segs, 16);
	if (!dso_load(&zydis, why))
		goto fail;
	if (!ZYAN_SUCCESS(zy.DecoderInit(&fb->dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)) ||
	    !ZYAN_SUCCESS(zy.DecoderEnableMode(&fb->dec, ZYDIS_DECODER_MODE_MINIMAL, ZYAN_TRUE))) {
		*why = "Zydis cannot decode x86-64";
		goto fail;
	}
	fb->raw = (const uint8_t *)elf_rawfile(fb->e, &fb->got);
	for (i = 0; i < fb->nsegs; i++)
		if (!fb->raw || fb->segs[i].offset + fb->segs[i].filesz > fb->got) {
			*why = "a segment lies past the file's end";
			goto fail;
		}
	if (regions(fb, path, why))
		goto fail;
	for (i = 0; i < fb->nsegs; i++)
		fb->ccap += fb->segs[i].filesz / 8;	/* about what code has */
	fb->c = malloc((fb->ccap ?: 1) * sizeof(*fb->c));
	if (!fb->c) {
		*why = "out of memory";
		goto fail;
	}
	for (i = 0; i < fb->nsegs; i++)
		if (candidates(fb, &fb->segs[i])) {
			*why = "out of memory";
			goto fail;
		}
	if (bucket_sort(fb)) {
		*why = "out of memory";
		goto fail;
	}
	return fb;
fail:
	file_free(fb);
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

/* The region holding file offset @off, or NULL. */
static struct region *region_at(struct file_branches *fb, uint64_t off)
{
	size_t lo = 0, hi = fb->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (fb->r[mid].start <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && off < fb->r[lo - 1].end ? &fb->r[lo - 1] : NULL;
}

bool branches_cheap(const char *path, uint64_t max_text)
{
	struct file_branches *fb;

	for (fb = cache; fb; fb = fb->next)
		if (!strcmp(fb->path, path))
			return true;
	return elf_exec_bytes(path) <= max_text;
}

/*
 * The candidate whose opcode is at @at: the regions its instruction may
 * start in (at the opcode, or up to 14 prefixes before) swept, and their
 * branches into the window past @offset added to the @n in @out (once
 * each). The new count, or -errno with *@why set.
 */
static int decode_at(struct file_branches *fb, uint64_t at, uint64_t offset, uint64_t hiw,
		     struct xprobes_uh_branch *out, size_t n, size_t max, const char **why)
{
	uint64_t first = at > 14 ? at - 14 : 0;
	struct region *r;
	size_t i, k;

	for (r = region_at(fb, at); r && r->end > first; r = r > fb->r ? r - 1 : NULL) {
		if (!r->swept && sweep(fb, r)) {
			*why = "out of memory";
			return -ENOMEM;
		}
		for (i = 0; i < r->n; i++) {
			const struct branch *b = &r->b[i];

			if (b->to <= offset || b->to >= hiw)
				continue;
			for (k = 0; k < n && out[k].from != b->from; k++)
				;
			if (k < n)
				continue;	/* the same branch, by another candidate */
			if (n == max) {
				*why = "too many branches land in the function's first bytes";
				return -E2BIG;
			}
			out[n++] = (struct xprobes_uh_branch){ .from = b->from,
							       .to = (uint32_t)(b->to - offset) };
		}
	}
	return (int)n;
}

int branches_into(const char *path, uint64_t offset, unsigned int span,
		  struct xprobes_uh_branch *out, size_t max, const char **why)
{
	struct file_branches *fb = branches_of(path, why);
	uint64_t hiw, bk;
	size_t j;
	int n = 0;

	if (!fb)
		return -EINVAL;
	if (span > XPROBES_UH_BRANCH_WINDOW)
		span = XPROBES_UH_BRANCH_WINDOW;
	hiw = offset + span;
	for (bk = offset + 1; bk < hiw; bk = ((bk >> BUCKET_SHIFT) + 1) << BUCKET_SHIFT) {
		if (bk < fb->clo || (bk - fb->clo) >> BUCKET_SHIFT >= fb->ncb)
			continue;
		for (j = fb->cb[(bk - fb->clo) >> BUCKET_SHIFT];
		     j < fb->cb[((bk - fb->clo) >> BUCKET_SHIFT) + 1]; j++) {
			if (fb->c[j].to <= offset || fb->c[j].to >= hiw)
				continue;
			n = decode_at(fb, fb->c[j].at, offset, hiw, out, n, max, why);
			if (n < 0)
				return n;
		}
	}
	return n;
}

unsigned int branches_span(const char *path, uint64_t offset)
{
	static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	struct file_branches *fb;
	ZydisDecoderContext ctx;
	ZydisDecodedInstruction i;
	unsigned int site = 0, end;
	const char *why;
	size_t k, len;

	fb = branches_of(path, &why);
	if (!fb)
		return XPROBES_UH_BRANCH_WINDOW;
	for (k = 0; k < fb->nsegs; k++)
		if (offset >= fb->segs[k].offset && offset < fb->segs[k].offset + fb->segs[k].filesz)
			break;
	if (k == fb->nsegs)
		return XPROBES_UH_BRANCH_WINDOW;
	len = fb->segs[k].offset + fb->segs[k].filesz - offset;
	if (len >= sizeof(endbr64) && !memcmp(fb->raw + offset, endbr64, sizeof(endbr64)))
		site = sizeof(endbr64);
	for (end = site; end < site + 5; end += i.length)
		if (end >= len || !ZYAN_SUCCESS(zy.DecoderDecodeInstruction(&fb->dec, &ctx,
				fb->raw + offset + end, len - end, &i)))
			return XPROBES_UH_BRANCH_WINDOW;
	return end < XPROBES_UH_BRANCH_WINDOW ? end : XPROBES_UH_BRANCH_WINDOW;
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
