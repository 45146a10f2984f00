// SPDX-License-Identifier: GPL-2.0
/* xp_modfn under a third name, with /proc/xp_modfn3: see xp_modfn.c. */
#define XP_MODFN "xp_modfn3"
#include "xp_modfn.c"
