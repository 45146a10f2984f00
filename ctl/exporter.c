// SPDX-License-Identifier: GPL-2.0
/*
 * Serving figures to Prometheus: `--listen ADDR:PORT` runs libmicrohttpd
 * (Debian's libmicrohttpd, its own polling thread) with one page, /metrics,
 * in the Prometheus text exposition format (version 0.0.4), rendered on each
 * scrape by the command's callback; `--textfile DIR` writes the same text
 * for node_exporter's textfile collector, atomically (a temporary file
 * renamed over the old one).
 */
#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <microhttpd.h>
#include "exporter.h"

struct exporter {
	struct MHD_Daemon *d;
	exporter_render_fn render;
	void *arg;
};

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload, size_t *upload_len, void **state)
{
	struct exporter *e = cls;
	struct MHD_Response *r;
	struct xbuf b = { 0 };
	unsigned int code = MHD_HTTP_OK;
	enum MHD_Result ret;

	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		xbuf_printf(&b, "only GET\n");
		code = MHD_HTTP_METHOD_NOT_ALLOWED;
	} else if (strcmp(url, "/metrics")) {
		xbuf_printf(&b, "xprobectl: the figures are at /metrics\n");
		code = MHD_HTTP_NOT_FOUND;
	} else if (e->render(e->arg, &b) || b.failed) {
		free(b.s);
		b = (struct xbuf){ 0 };
		xbuf_printf(&b, "xprobectl: cannot read the figures\n");
		code = MHD_HTTP_INTERNAL_SERVER_ERROR;
	}
	r = MHD_create_response_from_buffer(b.len, b.s ? b.s : (char *)"", b.s ?
					    MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	if (!r) {
		free(b.s);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				code == MHD_HTTP_OK ? "text/plain; version=0.0.4; charset=utf-8" :
						      "text/plain; charset=utf-8");
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

/* "ADDR:PORT", "[ADDR6]:PORT" or ":PORT" (every address) into a socket address. */
static int parse_listen(const char *spec, struct sockaddr_storage *sa, socklen_t *len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *res;
	char host[256];
	const char *colon = strrchr(spec, ':'), *h = host;
	size_t n;

	if (!colon || !colon[1] || colon - spec >= (long)sizeof(host))
		return -EINVAL;
	n = colon - spec;
	memcpy(host, spec, n);
	host[n] = 0;
	if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
		host[n - 1] = 0;
		h = host + 1;
	}
	if (getaddrinfo(*h ? h : NULL, colon + 1, &hints, &res))
		return -EINVAL;
	memcpy(sa, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

struct exporter *exporter_start(const char *listen, exporter_render_fn render, void *arg)
{
	struct sockaddr_storage sa;
	struct exporter *e;
	socklen_t len;
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;

	if (parse_listen(listen, &sa, &len)) {
		fprintf(stderr, "xprobectl: bad --listen '%s': give ADDR:PORT, [ADDR6]:PORT or "
			":PORT\n", listen);
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->render = render;
	e->arg = arg;
	if (sa.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	e->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, e,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)10,
				MHD_OPTION_END);
	if (!e->d) {
		fprintf(stderr, "xprobectl: cannot listen on %s (in use, or not an address of "
			"this machine?)\n", listen);
		free(e);
		return NULL;
	}
	return e;
}

void exporter_stop(struct exporter *e)
{
	if (!e)
		return;
	MHD_stop_daemon(e->d);
	free(e);
}

int textfile_write(const char *dir, const char *name, exporter_render_fn render, void *arg)
{
	char path[4096], tmp[4096];
	struct xbuf b = { 0 };
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "%s/%s.prom", dir, name);
	snprintf(tmp, sizeof(tmp), "%s/.%s.prom.%d", dir, name, (int)getpid());
	if (render(arg, &b) || b.failed) {
		free(b.s);
		return -EIO;
	}
	f = fopen(tmp, "w");
	if (!f) {
		err = -errno;
	} else {
		if (b.len && fwrite(b.s, 1, b.len, f) != b.len)
			err = -EIO;
		if (fclose(f) && !err)
			err = -errno;
		if (!err && rename(tmp, path))
			err = -errno;
		if (err)
			unlink(tmp);
	}
	free(b.s);
	return err;
}

void xbuf_printf(struct xbuf *b, const char *fmt, ...)
{
	va_list ap;
	size_t need;
	int n;

	if (b->failed)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->failed = true;
			return;
		}
		need = b->len + n + 1;
		if (b->s && need <= b->cap) {
			b->len += n;
			return;
		}
		b->cap = need > 2 * b->cap ? need + 256 : 2 * b->cap;
		b->s = realloc(b->s, b->cap);
		if (!b->s) {
			b->failed = true;
			return;
		}
	}
}

/* A label value: backslash, double quote and newline escaped. */
void xbuf_label(struct xbuf *b, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			xbuf_printf(b, "\\%c", *v);
		else if (*v == '\n')
			xbuf_printf(b, "\\n");
		else
			xbuf_printf(b, "%c", *v);
	}
}

int exporter_open(const char *listen, const char *textdir, const char *name,
		  exporter_render_fn render, void *arg, struct exporter **ex)
{
	int err;

	*ex = NULL;
	if (textdir && (err = textfile_write(textdir, name, render, arg))) {
		fprintf(stderr, "xprobectl: cannot write %s/%s.prom: %s\n", textdir, name,
			strerror(-err));
		return -1;
	}
	if (!listen)
		return 0;
	*ex = exporter_start(listen, render, arg);
	if (!*ex)
		return -1;
	fprintf(stderr, "xprobectl: serving http://%s/metrics\n", listen);
	return 0;
}
