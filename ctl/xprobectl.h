/* SPDX-License-Identifier: GPL-2.0 */
/* Shared declarations of xprobectl's subcommands. */
#ifndef XPROBECTL_H
#define XPROBECTL_H

#include <stdbool.h>

#define XPROBECTL_VERSION "0.1.0"

/* Exit codes (documented in xprobectl.8). */
#define EXIT_OK		0
#define EXIT_RUNTIME	1
#define EXIT_USAGE	2

/* Each subcommand gets argv starting at its own name. */
int cmd_status(int argc, char **argv);
int cmd_view(int argc, char **argv);
int cmd_hook(int argc, char **argv);
int cmd_uhook(int argc, char **argv);
int cmd_peek(int argc, char **argv);
int cmd_walk(int argc, char **argv);
int cmd_audit(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_metrics(int argc, char **argv);
int cmd_latency(int argc, char **argv);
int cmd_attach(int argc, char **argv);

/* Print "xprobectl: MSG" and return EXIT_USAGE. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
