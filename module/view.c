// SPDX-License-Identifier: GPL-2.0
/*
 * Per-process kernel views.
 *
 * Locking: xp_views_lock (a mutex) serialises every change to any view and to
 * the kernel half of any traced mm's page tables, and every reader that walks
 * them from process context (peek, dumps).
 */
#include <linux/mutex.h>
#include "xprobes.h"

DEFINE_MUTEX(xp_views_lock);
