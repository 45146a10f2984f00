/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Libraries xprobectl loads when a command first needs them, not at every
 * start: Zydis (the branch scan of trace's user hooks) and
 * libmicrohttpd (--listen, which brings gnutls and eight more libraries).
 * Linked in, they cost every run of xprobectl about 45 ms of its 90 in the
 * test VM (their relocations and constructors), the commands that never
 * use them too: hook list, view add, peek. See dso.c.
 */
#ifndef XPROBECTL_DSO_H
#define XPROBECTL_DSO_H

#include <stdbool.h>

/* One function of the library: its name, and where its address goes. */
struct dso_fn {
	const char *name;
	void **slot;
};

struct dso {
	const char *soname;		/* "libZydis.so.4.0" */
	const char *package;		/* Debian's, for the error */
	const struct dso_fn *fns;	/* ending with { NULL } */
	int state;			/* 0 not tried, 1 loaded, -1 failed */
	char why[256];
};

/*
 * A user lists the library's functions once, as LIST(X) expanding to
 * X(VAR, PREFIX, NAME) for each, and gets from it both the struct of
 * pointers (struct { LIST(DSO_PTR) } VAR;), each of the type of the
 * header's PREFIX##NAME, and the table of their names for dso_load()
 * ({ LIST(DSO_FN) { NULL } }).
 */
#define DSO_PTR(var, pfx, f) __typeof__(&pfx##f) f;
#define DSO_FN(var, pfx, f) { #pfx #f, (void **)&var.f },

/*
 * Load @d's library and every function it lists, once (later calls answer
 * as the first did; callable from any thread). False, with *why a line
 * saying what is missing and which package has it, if one is.
 */
bool dso_load(struct dso *d, const char **why);

#endif
