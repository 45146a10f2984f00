/* SPDX-License-Identifier: GPL-2.0 */
/* xprobectl trace -W: the waker breakdown (wakers.c). */
#ifndef XPROBECTL_WAKERS_H
#define XPROBECTL_WAKERS_H

#include <stdbool.h>
#include "tracer.h"

/*
 * The (function, waker) rows since the previous call (all of them when
 * FINAL), biggest first within each function; returns how many, -1 on error.
 */
int wakers_collect(struct tsession *s, bool final, struct waker_slot **out);

/* The human table's section, and one function's "wakers" array in --json. */
void wakers_print(struct tsession *s, const struct waker_slot *w, int n,
		  const struct func_fig *v);
void wakers_json(struct tsession *s, const struct waker_slot *w, int n, uint32_t func);

/* A waker key (WKEY) as a folded stack's frame: "xw_hold (tid 12)", "(a timer)". */
const char *wakers_frame(struct tsession *s, uint64_t key, char *buf, size_t len);

#endif
