// SPDX-License-Identifier: GPL-2.0
/* Instantiates the xprobes_hook and xprobes_uhook tracepoints (trace.h). */
#define CREATE_TRACE_POINTS
#include "trace.h"
