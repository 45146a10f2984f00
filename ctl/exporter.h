/* SPDX-License-Identifier: GPL-2.0 */
/* Prometheus text exposition over HTTP (libmicrohttpd) and to textfiles. */
#ifndef XPROBECTL_EXPORTER_H
#define XPROBECTL_EXPORTER_H

#include <stdbool.h>
#include <stddef.h>

/* A growing text buffer; failed: out of memory (the text is then dropped). */
struct xbuf {
	char *s;
	size_t len, cap;
	bool failed;
};

void xbuf_printf(struct xbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void xbuf_label(struct xbuf *b, const char *v);

/* Render the figures now into B; 0, or -1 if they cannot be read. Called from any thread. */
typedef int (*exporter_render_fn)(void *arg, struct xbuf *b);

struct exporter;

/* Serve /metrics on LISTEN ("ADDR:PORT", "[ADDR6]:PORT", ":PORT"); NULL with a message. */
struct exporter *exporter_start(const char *listen, exporter_render_fn render, void *arg);
void exporter_stop(struct exporter *e);

/* Is SPEC a --listen address? If not, *WHY says what is wrong. */
bool exporter_listen_ok(const char *spec, const char **why);

/* The address it serves on, as bound (":0" becomes the port the kernel picked). */
const char *exporter_addr(const struct exporter *e);

/* DIR/NAME.prom, for node_exporter's textfile collector: 0 or -errno. */
int textfile_write(const char *dir, const char *name, exporter_render_fn render, void *arg);

/*
 * What --listen and --textfile ask for (either may be NULL): the textfile
 * written once, the server started into *EX. 0, or -1 with a message.
 */
int exporter_open(const char *listen, const char *textdir, const char *name,
		  exporter_render_fn render, void *arg, struct exporter **ex);

#endif
