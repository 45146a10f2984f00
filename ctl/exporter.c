// SPDX-License-Identifier: GPL-2.0
/*
 * Serving figures to Prometheus: `--listen ADDR:PORT` runs libmicrohttpd
 * (Debian's libmicrohttpd: its own thread, epoll, on a socket bound here,
 * with limits on connections in all and per client address, an idle
 * timeout and its messages rate-limited) with one page, /metrics,
 * in the Prometheus text exposition format (version 0.0.4), rendered on each
 * scrape by the command's callback; `--textfile DIR` writes the same text
 * for node_exporter's textfile collector, atomically (a temporary file
 * renamed over the old one).
 */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <microhttpd.h>
#include "dso.h"
#include "exporter.h"

/* libmicrohttpd, loaded by the first --listen (dso.h). */
#define MHD_FNS(X) X(mhd, MHD_, start_daemon) X(mhd, MHD_, stop_daemon) \
	X(mhd, MHD_, create_response_from_buffer) X(mhd, MHD_, add_response_header) \
	X(mhd, MHD_, queue_response) X(mhd, MHD_, destroy_response)
static struct { MHD_FNS(DSO_PTR) } mhd;
static const struct dso_fn mhd_fns[] = { MHD_FNS(DSO_FN) { NULL } };
/* (Debian's soname for the 0.9 API this is written against) */
static struct dso microhttpd = {
	.soname = "libmicrohttpd.so.12", .package = "libmicrohttpd12", .fns = mhd_fns,
};

struct exporter {
	struct MHD_Daemon *d;
	exporter_render_fn render;
	void *arg;
	char bound[INET6_ADDRSTRLEN + 16];	/* the address bound, port and all */
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
	r = mhd.create_response_from_buffer(b.len, b.s ? b.s : (char *)"", b.s ?
					    MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	if (!r) {
		free(b.s);
		return MHD_NO;
	}
	mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				code == MHD_HTTP_OK ? "text/plain; version=0.0.4; charset=utf-8" :
						      "text/plain; charset=utf-8");
	ret = mhd.queue_response(c, code, r);
	mhd.destroy_response(r);
	return ret;
}

/*
 * "ADDR:PORT", "[ADDR6]:PORT" or ":PORT" (every address) into a socket
 * address; PORT is 1-65535, or 0 for one the kernel picks. 0, or -EINVAL
 * with *WHY set.
 */
static int parse_listen(const char *spec, struct sockaddr_storage *sa, socklen_t *len,
			const char **why)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV }, *res;
	const char *colon = strrchr(spec, ':'), *h;
	char host[256], *end;
	unsigned long port;
	size_t n;

	*why = "give ADDR:PORT, [ADDR6]:PORT or :PORT";
	if (!colon || !colon[1] || colon - spec >= (long)sizeof(host))
		return -EINVAL;
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (*end || errno || colon[1] == '-' || colon[1] == '+' || port > 65535) {
		*why = "the port is a number from 1 to 65535, or 0 for any free one";
		return -EINVAL;
	}
	n = colon - spec;
	memcpy(host, spec, n);
	host[n] = 0;
	h = host;
	if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
		host[n - 1] = 0;
		h = host + 1;
	}
	if (getaddrinfo(*h ? h : NULL, colon + 1, &hints, &res)) {
		*why = "not an address (or a name that resolves to none)";
		return -EINVAL;
	}
	memcpy(sa, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

bool exporter_listen_ok(const char *spec, const char **why)
{
	struct sockaddr_storage sa;
	socklen_t len;

	return !parse_listen(spec, &sa, &len, why);
}

/* SA as ADDR:PORT or [ADDR6]:PORT into OUT. */
static void addr_str(const struct sockaddr_storage *sa, socklen_t len, char *out, size_t n)
{
	char host[INET6_ADDRSTRLEN], port[8];

	if (getnameinfo((const struct sockaddr *)sa, len, host, sizeof(host), port, sizeof(port),
			NI_NUMERICHOST | NI_NUMERICSERV)) {
		snprintf(out, n, "?");
		return;
	}
	snprintf(out, n, sa->ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, port);
}

/*
 * libmicrohttpd's own messages (a connection it refused, one that timed
 * out, a client that sent garbage): one line in 10 s at most, with how many
 * were held back, so that a flood of bad clients is not a flood of the
 * journal.
 */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static time_t last;
	static unsigned long held;
	time_t now = time(NULL);
	char line[256];
	size_t n;

	(void)cls;
	pthread_mutex_lock(&lock);
	if (last && now - last < 10) {
		held++;
		pthread_mutex_unlock(&lock);
		return;
	}
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strcspn(line, "\n");
	line[n] = 0;
	if (held)
		fprintf(stderr, "xprobectl: http: %s (and %lu more since the last line)\n", line,
			held);
	else
		fprintf(stderr, "xprobectl: http: %s\n", line);
	last = now;
	held = 0;
	pthread_mutex_unlock(&lock);
}

/*
 * The listening socket, ours rather than libmicrohttpd's: a port in use, an
 * address not of this machine or a port below 1024 without the right are
 * each one clear line, and :0's port is known. -1 with a message.
 */
static int listen_on(const char *spec, const struct sockaddr_storage *sa, socklen_t len)
{
	int fd = socket(sa->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1, err;

	if (fd < 0) {
		fprintf(stderr, "xprobectl: --listen %s: %s\n", spec, strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (sa->ss_family == AF_INET6)	/* [::]:PORT means IPv6 only, as written */
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (!bind(fd, (const struct sockaddr *)sa, len) && !listen(fd, SOMAXCONN))
		return fd;
	err = errno;
	close(fd);
	if (err == EADDRINUSE)
		fprintf(stderr, "xprobectl: --listen %s: the port is in use: pick another "
			"(ss -ltnp shows who has it)\n", spec);
	else if (err == EADDRNOTAVAIL)
		fprintf(stderr, "xprobectl: --listen %s: not an address of this machine: use one "
			"of ip -brief address, or :PORT for all\n", spec);
	else if (err == EACCES)
		fprintf(stderr, "xprobectl: --listen %s: ports below 1024 need "
			"CAP_NET_BIND_SERVICE: use a higher one\n", spec);
	else
		fprintf(stderr, "xprobectl: --listen %s: %s\n", spec, strerror(err));
	return -1;
}

/*
 * Connections the server keeps at once, in all and from one client
 * address: a client (or a slowloris) that opens more is refused at accept,
 * and Prometheus, which scrapes over one connection, always finds room.
 * One that sends nothing for IDLE seconds is closed.
 */
#define HTTP_CONNS	512
#define HTTP_CONNS_PER_IP 16
#define HTTP_IDLE	10

struct exporter *exporter_start(const char *listen, exporter_render_fn render, void *arg)
{
	struct sockaddr_storage sa;
	struct exporter *e;
	const char *why;
	socklen_t len;
	int fd;

	if (parse_listen(listen, &sa, &len, &why)) {
		fprintf(stderr, "xprobectl: bad --listen '%s': %s\n", listen, why);
		return NULL;
	}
	if (!dso_load(&microhttpd, &why)) {
		fprintf(stderr, "xprobectl: cannot serve --listen %s: %s\n", listen, why);
		return NULL;
	}
	fd = listen_on(listen, &sa, len);
	if (fd < 0)
		return NULL;
	len = sizeof(sa);
	getsockname(fd, (struct sockaddr *)&sa, &len);
	e = calloc(1, sizeof(*e));
	if (!e) {
		close(fd);
		return NULL;
	}
	e->render = render;
	e->arg = arg;
	addr_str(&sa, len, e->bound, sizeof(e->bound));
	/* epoll: no FD_SETSIZE (select() failed every scrape past fd 1023) */
	e->d = mhd.start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG |
				(sa.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0), 0, NULL, NULL,
				on_request, e,
				MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,	/* first */
				MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)HTTP_CONNS,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)HTTP_CONNS_PER_IP,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)HTTP_IDLE,
				MHD_OPTION_END);
	if (!e->d) {
		fprintf(stderr, "xprobectl: cannot serve on %s: libmicrohttpd would not start "
			"(out of memory or threads?)\n", e->bound);
		/* the socket: closed by libmicrohttpd on some of its failures, not others */
		free(e);
		return NULL;
	}
	return e;
}

const char *exporter_addr(const struct exporter *e)
{
	return e->bound;
}

void exporter_stop(struct exporter *e)
{
	if (!e)
		return;
	mhd.stop_daemon(e->d);
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
	fprintf(stderr, "xprobectl: serving http://%s/metrics\n", exporter_addr(*ex));
	return 0;
}
