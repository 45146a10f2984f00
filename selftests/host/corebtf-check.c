// SPDX-License-Identifier: GPL-2.0
/*
 * corebtf-check OBJ...: the instructions libbpf makes of each program of
 * each BPF object are the same whether its CO-RE relocations are done
 * against the kernel's whole BTF or against xprobectl's cut of it
 * (ctl/corebtf.c). Each object is loaded into this host's kernel both
 * ways, every program at once (or one at a time where the kernel refuses
 * some: those are compared where they load), and the programs' final
 * instructions compared, map descriptors aside. Fails if any program
 * differs, or if no relocated program could be compared at all.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "../../ctl/corebtf.h"

static int quiet(enum libbpf_print_level l, const char *f, va_list ap)
{
	return 0;
}

/* @path opened (with the cut when @cut), only program @only autoloaded if >= 0, loaded. */
static struct bpf_object *load(const char *path, struct core_btf *cut, int only, int *err)
{
	LIBBPF_OPTS(bpf_object_open_opts, o);
	struct bpf_object *obj;
	struct bpf_program *p;
	int i = 0;

	if (cut)
		o.btf_custom_path = core_btf_prepare(cut);
	obj = bpf_object__open_file(path, &o);
	if (!obj) {
		*err = -errno;
		return NULL;
	}
	if (only >= 0)
		bpf_object__for_each_program(p, obj)
			bpf_program__set_autoload(p, i++ == only);
	*err = cut ? core_btf_fill(cut, obj) : 0;
	if (!*err)
		*err = bpf_object__load(obj);
	if (*err) {
		bpf_object__close(obj);
		return NULL;
	}
	return obj;
}

static bool is_map_ref(const struct bpf_insn *in)
{
	return in->code == (BPF_LD | BPF_IMM | BPF_DW) && in->src_reg != 0;
}

/* 1 same, 0 not loaded by both, -1 different */
static int compare(struct bpf_program *a, struct bpf_program *b)
{
	const struct bpf_insn *x = bpf_program__insns(a), *y = bpf_program__insns(b);
	size_t i, n = bpf_program__insn_cnt(a);

	if (!bpf_program__autoload(a) || bpf_program__fd(a) < 0 || bpf_program__fd(b) < 0)
		return 0;
	if (n != bpf_program__insn_cnt(b)) {
		printf("%s: %zu instructions, %zu with the cut\n", bpf_program__name(a), n,
		       bpf_program__insn_cnt(b));
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (x[i].code == y[i].code && x[i].dst_reg == y[i].dst_reg &&
		    x[i].src_reg == y[i].src_reg && x[i].off == y[i].off &&
		    (x[i].imm == y[i].imm || (is_map_ref(&x[i]) && i + 1 < n)))
			continue;
		printf("%s: instruction %zu differs (code %02x off %d imm %d; with the cut "
		       "code %02x off %d imm %d)\n", bpf_program__name(a), i, x[i].code, x[i].off,
		       x[i].imm, y[i].code, y[i].off, y[i].imm);
		return -1;
	}
	return 1;
}

/* Every program of @a against its twin in @b, then both closed: the programs that differ. */
static int compare_objects(struct bpf_object *a, struct bpf_object *b, int *same)
{
	struct bpf_program *p, *q = bpf_object__next_program(b, NULL);
	int r, bad = 0;

	bpf_object__for_each_program(p, a) {
		r = compare(p, q);
		if (r < 0)
			bad++;
		else
			*same += r;
		q = bpf_object__next_program(b, q);
	}
	bpf_object__close(a);
	bpf_object__close(b);
	return bad;
}

static int check(const char *path, int *same)
{
	struct bpf_object *a, *b;
	struct bpf_program *p;
	struct core_btf cut = { 0 };
	int err, only, nprogs = 0, bad = 0;

	a = load(path, NULL, -1, &err);
	if (a) {
		b = load(path, &cut, -1, &err);
		core_btf_release(&cut);
		if (b)
			return compare_objects(a, b, same) ? -1 : 0;
		printf("%s: loads against the whole BTF, not against the cut: %s\n", path,
		       strerror(-err));
		bpf_object__close(a);
		bad++;		/* then which programs, and how */
	}
	/* the kernel refuses some program: one at a time */
	a = bpf_object__open_file(path, NULL);
	if (!a) {
		printf("%s: cannot open: %s\n", path, strerror(errno));
		return -1;
	}
	bpf_object__for_each_program(p, a)
		nprogs++;
	bpf_object__close(a);
	for (only = 0; only < nprogs; only++) {
		a = load(path, NULL, only, &err);
		if (!a)
			continue;	/* refused here as it is */
		b = load(path, &cut, only, &err);
		core_btf_release(&cut);
		if (!b) {
			printf("%s: program %d loads against the whole BTF, not the cut: %s\n",
			       path, only, strerror(-err));
			bpf_object__close(a);
			bad++;
			continue;
		}
		bad += compare_objects(a, b, same);
	}
	return bad ? -1 : 0;
}

int main(int argc, char **argv)
{
	int i, same = 0, bad = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: corebtf-check OBJ...\n");
		return 2;
	}
	libbpf_set_print(quiet);
	for (i = 1; i < argc; i++)
		if (check(argv[i], &same))
			bad++;
	printf("%d programs the same against the cut BTF as against the kernel's", same);
	if (bad || !same) {
		printf(" (%d objects differ)\n", bad);
		return 1;
	}
	printf("\n");
	return 0;
}
