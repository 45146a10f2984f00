// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's BTF cut down for one BPF object's CO-RE relocations.
 *
 * Why: libbpf (1.1, Debian 12's) finds the candidates of each local type a
 * program relocates against by a linear scan of every type of the kernel's
 * BTF (about 130 000 on 6.12), once per type: trace's 13 kernel structs
 * cost 78 M guest instructions of its set-up in the emulator, 7% of
 * attaching every function of Redis (docs/experiments.md, 2026-12-05).
 * Given a BTF of its own (bpf_object_open_opts.btf_custom_path), libbpf
 * scans that one instead, and does not read the kernel's at all unless a
 * program needs it for its attach point (tp_btf, fentry: fallback mode).
 *
 * What the cut keeps: every named struct, union, enum and typedef of the
 * kernel whose name (less a "___flavour" suffix) names a type of the
 * object's own BTF (the relocations' roots are among those: a local type
 * and its kernel candidates share that name), and what CO-RE reads of
 * them: their members' types through typedefs, modifiers and arrays, and
 * structs and unions they embed, whole. A pointer keeps its kind and size
 * but points to void: CO-RE never follows one (each step of a
 * BPF_CORE_READ() chain is a relocation of its own, rooted at the
 * pointee's type by name), and a pointer field matches a pointer field
 * whatever they point to. Relocations against the cut give the same
 * instructions as against the whole (selftests/host/corebtf-check.c
 * compares every program of trace's object both ways).
 *
 * The cut is written into a memfd that the open option names by
 * /proc/self/fd/N; the name goes to the open, the content comes after it
 * (the object's BTF is needed for the cut) and before the load, where
 * libbpf reads the file. The memfd lives as long as the objects may load.
 * A cut that cannot be made (a kind of type this file does not know how to
 * copy, no memory) leaves the whole BTF in the file: slower, as before.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "corebtf.h"

#ifndef COREBTF_SKEW		/* bits taken off members' offsets: the host check's negative control */
#define COREBTF_SKEW 0
#endif

const char *core_btf_prepare(struct core_btf *c)
{
	if (c->path[0])
		return c->path;
	c->filled = false;
	c->fd = memfd_create("xprobectl-btf", MFD_CLOEXEC);
	if (c->fd < 0)
		return NULL;
	snprintf(c->path, sizeof(c->path), "/proc/self/fd/%d", c->fd);
	return c->path;
}

void core_btf_release(struct core_btf *c)
{
	if (c->path[0])
		close(c->fd);
	memset(c, 0, sizeof(*c));
}

/* ---- the local names: a small open-addressing set --------------------------- */

struct names {
	const char **s;		/* essential names (not NUL-ended: see len) */
	uint32_t *len;
	uint32_t mask;
};

/* A type name up to its "___" flavour suffix, as libbpf matches them. */
static size_t essential_len(const char *name)
{
	const char *f = strstr(name, "___");

	return f ? (size_t)(f - name) : strlen(name);
}

static uint32_t name_hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;

	while (n--)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static bool names_has(const struct names *ns, const char *s, size_t n)
{
	uint32_t i = name_hash(s, n) & ns->mask;

	for (; ns->s[i]; i = (i + 1) & ns->mask)
		if (ns->len[i] == n && !memcmp(ns->s[i], s, n))
			return true;
	return false;
}

static void names_add(struct names *ns, const char *s, size_t n)
{
	uint32_t i = name_hash(s, n) & ns->mask;

	for (; ns->s[i]; i = (i + 1) & ns->mask)
		if (ns->len[i] == n && !memcmp(ns->s[i], s, n))
			return;
	ns->s[i] = s;
	ns->len[i] = n;
}

/* The kinds a relocation's root, or its candidate, can be. */
static bool root_kind(const struct btf_type *t)
{
	switch (btf_kind(t)) {
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
	case BTF_KIND_TYPEDEF:
		return true;
	default:
		return false;
	}
}

static int local_names(struct names *ns, const struct btf *local)
{
	uint32_t i, n = btf__type_cnt(local), size = 64;

	while (size < 2 * n)
		size <<= 1;
	ns->s = calloc(size, sizeof(*ns->s));
	ns->len = calloc(size, sizeof(*ns->len));
	if (!ns->s || !ns->len)
		return -ENOMEM;
	ns->mask = size - 1;
	for (i = 1; i < n; i++) {
		const struct btf_type *t = btf__type_by_id(local, i);
		const char *name = btf__name_by_offset(local, t->name_off);

		if (root_kind(t) && name && *name)
			names_add(ns, name, essential_len(name));
	}
	return 0;
}

/* ---- the copy ------------------------------------------------------------------ */

struct cut {
	const struct btf *src;
	struct btf *dst;
	uint32_t *map;		/* source id -> its copy's id + 1; 0: not copied yet */
};

static int copy_type(struct cut *c, uint32_t id);

static int copy_members(struct cut *c, const struct btf_type *t, const char *name)
{
	const struct btf_member *m = btf_members(t);
	uint16_t i, n = btf_vlen(t);
	int *ids = NULL, err = 0, nid;

	if (n) {
		ids = malloc(n * sizeof(*ids));
		if (!ids)
			return -ENOMEM;
	}
	/* the members' types first: a struct's fields follow it directly */
	for (i = 0; i < n && err >= 0; i++)
		err = ids[i] = copy_type(c, m[i].type);
	if (err < 0)
		goto out;
	nid = btf_is_struct(t) ? btf__add_struct(c->dst, name, t->size) :
				 btf__add_union(c->dst, name, t->size);
	err = nid;
	for (i = 0; i < n && err >= 0; i++) {
		uint32_t off = btf_member_bit_offset(t, i);

#if COREBTF_SKEW
		if (off >= COREBTF_SKEW)
			off -= COREBTF_SKEW;
#endif
		err = btf__add_field(c->dst, btf__name_by_offset(c->src, m[i].name_off), ids[i],
				     off, btf_member_bitfield_size(t, i));
	}
	if (err >= 0)
		err = nid;
out:
	free(ids);
	return err;
}

/* @id's copy in the cut (copied now if it is not yet); negative on error. */
static int copy_type(struct cut *c, uint32_t id)
{
	const struct btf_type *t;
	const char *name;
	int r, nid;

	if (!id)
		return 0;
	if (c->map[id])
		return c->map[id] - 1;
	t = btf__type_by_id(c->src, id);
	if (!t)
		return -EINVAL;
	name = btf__name_by_offset(c->src, t->name_off);
	switch (btf_kind(t)) {
	case BTF_KIND_INT:
	case BTF_KIND_FLOAT:
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
	case BTF_KIND_FWD:
		nid = btf__add_type(c->dst, c->src, t);
		break;
	case BTF_KIND_PTR:		/* never followed by CO-RE: see the top */
		nid = btf__add_ptr(c->dst, 0);
		break;
	case BTF_KIND_ARRAY: {
		const struct btf_array *a = btf_array(t);
		int ix, el;

		el = copy_type(c, a->type);
		ix = el < 0 ? el : copy_type(c, a->index_type);
		nid = ix < 0 ? ix : btf__add_array(c->dst, ix, el, a->nelems);
		break;
	}
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPE_TAG:
		r = copy_type(c, t->type);
		if (r < 0)
			return r;
		switch (btf_kind(t)) {
		case BTF_KIND_TYPEDEF:
			nid = btf__add_typedef(c->dst, name, r);
			break;
		case BTF_KIND_VOLATILE:
			nid = btf__add_volatile(c->dst, r);
			break;
		case BTF_KIND_CONST:
			nid = btf__add_const(c->dst, r);
			break;
		case BTF_KIND_RESTRICT:
			nid = btf__add_restrict(c->dst, r);
			break;
		default:
			nid = btf__add_type_tag(c->dst, name, r);
			break;
		}
		break;
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		nid = copy_members(c, t, name);
		break;
	default:			/* a function's type: only ever behind a pointer */
		nid = 0;
		break;
	}
	if (nid < 0)
		return nid;
	c->map[id] = nid + 1;
	return nid;
}

static int write_all(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p = (const char *)p + w;
		n -= w;
	}
	return 0;
}

int core_btf_fill(struct core_btf *c, const struct bpf_object *obj)
{
	struct btf *local = bpf_object__btf(obj), *vmlinux;
	struct names ns = { 0 };
	struct cut cut = { 0 };
	const void *raw = NULL;
	uint32_t i, n, sz;
	int err;

	if (!c->path[0] || c->filled)
		return 0;
	vmlinux = btf__load_vmlinux_btf();
	err = libbpf_get_error(vmlinux);
	if (err) {
		fprintf(stderr, "xprobectl: cannot read the kernel's BTF (%s): this kernel needs "
			"CONFIG_DEBUG_INFO_BTF\n", strerror(-err));
		return err;
	}
	err = -ENOMEM;
	n = btf__type_cnt(vmlinux);
	cut.src = vmlinux;
	cut.dst = btf__new_empty();
	cut.map = calloc(n, sizeof(*cut.map));
	if (!local || libbpf_get_error(cut.dst) || !cut.map || local_names(&ns, local))
		goto out;
	err = 0;
	for (i = 1; i < n; i++) {
		const struct btf_type *t = btf__type_by_id(vmlinux, i);
		const char *name;

		if (!t->name_off || !root_kind(t))
			continue;
		name = btf__name_by_offset(vmlinux, t->name_off);
		if (!names_has(&ns, name, essential_len(name)))
			continue;
		err = copy_type(&cut, i);
		if (err < 0)
			goto out;
	}
	raw = btf__raw_data(cut.dst, &sz);
	err = raw ? 0 : -ENOMEM;
out:
	/* a cut that failed: the whole, as libbpf would have read it */
	if (err < 0)
		raw = btf__raw_data(vmlinux, &sz);
	err = raw ? write_all(c->fd, raw, sz) : -ENOMEM;
	if (err < 0)
		fprintf(stderr, "xprobectl: cannot write the kernel's BTF for the BPF object: %s\n",
			strerror(-err));
	else
		c->filled = true;
	free(ns.s);
	free(ns.len);
	free(cut.map);
	if (!libbpf_get_error(cut.dst))
		btf__free(cut.dst);
	btf__free(vmlinux);
	return err < 0 ? err : 0;
}
