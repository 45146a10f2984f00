/* SPDX-License-Identifier: GPL-2.0 */
/* Folding a hand-over's records into calls (urec_fold.c); host-testable. */
#ifndef _XPROBES_UREC_FOLD_H
#define _XPROBES_UREC_FOLD_H

#include <linux/types.h>
#include "uapi/xprobes.h"

u32 xp_urec_fold(struct xprobes_urec *r, u32 n);

#endif /* _XPROBES_UREC_FOLD_H */
