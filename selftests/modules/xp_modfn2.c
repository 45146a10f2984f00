// SPDX-License-Identifier: GPL-2.0
/* xp_modfn under another name, with /proc/xp_modfn2: see xp_modfn.c. */
#define XP_MODFN "xp_modfn2"
#include "xp_modfn.c"
