/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's BTF cut down to what one BPF object's CO-RE relocations can
 * match, for libbpf's btf_custom_path. See corebtf.c.
 */
#ifndef XPROBECTL_COREBTF_H
#define XPROBECTL_COREBTF_H

#include <stdbool.h>

struct bpf_object;

struct core_btf {			/* all zero: not in use */
	int fd;			/* a memfd, where path is set */
	bool filled;
	char path[32];		/* /proc/self/fd/N: the open option's value */
};

/*
 * Before the object is opened: make @c's (empty) file, once, and say where
 * it is for bpf_object_open_opts.btf_custom_path; NULL if none could be
 * made (then libbpf reads the kernel's BTF itself, as without this).
 */
const char *core_btf_prepare(struct core_btf *c);

/*
 * After the open, before the load: write the kernel's types that @obj's
 * relocations can touch into @c's file. Once per file: a second object of
 * the same ELF (trace's uprobe programs) reuses it. On error the message
 * is printed and -errno returned; the load must not go on.
 */
int core_btf_fill(struct core_btf *c, const struct bpf_object *obj);

void core_btf_release(struct core_btf *c);

#endif
