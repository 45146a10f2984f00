// SPDX-License-Identifier: GPL-2.0
/*
 * loadgen: requests at a known rate, the ground truth for xprobectl metrics.
 *
 *   loadgen -p redis|memcache|http -P PORT [-r RATE] [-c CONNS] [-d SECS]
 *
 * Request k is due at start + k/RATE (RATE 0: as fast as the server
 * answers). A due request goes out on an idle connection (one request in
 * flight per connection); when all CONNS are busy it waits, so past the
 * server's capacity the rate achieved is what the server sustains. The
 * requests are PING (redis), "get" of a missing key (memcached) and GET /
 * (http, keep-alive). Prints one line:
 *
 *   loadgen proto P target R conns C secs S done N rate A span_rate B late L p50_us X p99_us Y
 *
 * rate is completed responses per second over the run: the actual rate.
 * span_rate is the same between the first and the last response, (N - 1)
 * over that time: what 'xprobectl metrics' estimates on the server's side
 * (1 / mean time between responses), here on the client's clock. The two
 * differ when loadgen itself stalls near the end of the run.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#define MAX_CONNS	256
#define MAX_SAMPLES	(1 << 20)

struct conn {
	int fd;
	int busy;		/* a request in flight */
	uint64_t sent_ns;
	char buf[8192];
	size_t len;
};

static const char *proto;
static const char *req;
static size_t req_len;
static struct sockaddr_in addr;
static uint32_t lat_us[MAX_SAMPLES];
static size_t nlat;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "loadgen: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* A blocking connect (retried while the server starts), then non-blocking. */
static int dial(void)
{
	int fd, one = 1, i;

	for (i = 0;; i++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			die("socket");
		if (!connect(fd, (struct sockaddr *)&addr, sizeof(addr)))
			break;
		if (i == 100)
			die("connect");
		close(fd);
		usleep(50000);
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return fd;
}

/* Length of the complete response at the head of b, 0 if not all there yet. */
static size_t complete(const char *b, size_t n)
{
	const char *end, *cl;
	size_t head, body;

	if (!strcmp(proto, "redis")) {		/* +PONG\r\n */
		end = memmem(b, n, "\r\n", 2);
		return end ? (size_t)(end - b) + 2 : 0;
	}
	if (!strcmp(proto, "memcache")) {	/* END\r\n */
		end = memmem(b, n, "END\r\n", 5);
		return end ? (size_t)(end - b) + 5 : 0;
	}
	end = memmem(b, n, "\r\n\r\n", 4);	/* headers, then Content-Length bytes */
	if (!end)
		return 0;
	head = end - b + 4;
	cl = memmem(b, head, "Content-Length:", 15);
	if (!cl)
		cl = memmem(b, head, "content-length:", 15);
	body = cl ? strtoul(cl + 15, NULL, 10) : 0;
	return n >= head + body ? head + body : 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	double rate = 0, secs = 3;
	int nconns = 8, port = 0, c, ep, i, n, rr = 0;
	uint64_t start, end, due, t, wait, done = 0, issued = 0, late = 0;
	uint64_t first_done = 0, last_done = 0;
	struct conn *conns;
	struct epoll_event ev, evs[MAX_CONNS];

	while ((c = getopt(argc, argv, "p:P:r:c:d:")) != -1) {
		switch (c) {
		case 'p': proto = optarg; break;
		case 'P': port = atoi(optarg); break;
		case 'r': rate = atof(optarg); break;
		case 'c': nconns = atoi(optarg); break;
		case 'd': secs = atof(optarg); break;
		default: goto usage;
		}
	}
	if (!proto || port <= 0 || nconns < 1 || nconns > MAX_CONNS || secs <= 0 || rate < 0)
		goto usage;
	if (!strcmp(proto, "redis"))
		req = "*1\r\n$4\r\nPING\r\n";
	else if (!strcmp(proto, "memcache"))
		req = "get xprobes-loadgen\r\n";
	else if (!strcmp(proto, "http"))
		req = "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";
	else
		goto usage;
	req_len = strlen(req);
	addr.sin_family = AF_INET;
	addr.sin_port = htons(port);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);

	ep = epoll_create1(0);
	conns = calloc(nconns, sizeof(*conns));
	if (ep < 0 || !conns)
		die("setup");
	for (i = 0; i < nconns; i++) {
		conns[i].fd = dial();
		ev.events = EPOLLIN;
		ev.data.u32 = i;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, conns[i].fd, &ev))
			die("epoll_ctl");
	}

	start = now_ns();
	end = start + (uint64_t)(secs * 1e9);
	for (;;) {
		struct timespec to = { 0, 0 };

		t = now_ns();
		if (t >= end)
			break;
		/* Send what is due, on idle connections. */
		for (;;) {
			due = rate > 0 ? start + (uint64_t)(issued * 1e9 / rate) : t;
			if (due > t)
				break;
			for (i = 0; i < nconns && conns[(rr + i) % nconns].busy; i++)
				;
			if (i == nconns)
				break;
			i = (rr + i) % nconns;
			rr = i + 1;
			if (t - due > 1000000)	/* more than 1 ms behind schedule */
				late++;
			if (write(conns[i].fd, req, req_len) != (ssize_t)req_len)
				die("write");
			conns[i].busy = 1;
			conns[i].sent_ns = t;
			issued++;
		}
		/*
		 * Sleep until the next request is due, or, when one is due but
		 * every connection is busy, until a reply frees one.
		 */
		due = rate > 0 ? start + (uint64_t)(issued * 1e9 / rate) : t;
		wait = (due > t ? due : end) - t;
		if (wait > end - t)
			wait = end - t;
		to.tv_sec = wait / 1000000000;
		to.tv_nsec = wait % 1000000000;
		n = epoll_pwait2(ep, evs, MAX_CONNS, &to, NULL);
		if (n < 0 && errno != EINTR)
			die("epoll_pwait2");
		t = now_ns();
		for (c = 0; c < n; c++) {
			struct conn *k = &conns[evs[c].data.u32];
			ssize_t got = read(k->fd, k->buf + k->len, sizeof(k->buf) - k->len);
			size_t len;

			if (got <= 0) {
				if (got < 0 && errno == EAGAIN)
					continue;
				/* The server closed it (keep-alive limit): dial again. */
				epoll_ctl(ep, EPOLL_CTL_DEL, k->fd, NULL);
				close(k->fd);
				k->fd = dial();
				k->len = 0;
				if (k->busy) {
					k->busy = 0;
					issued--;	/* that request is sent again */
				}
				ev.events = EPOLLIN;
				ev.data.u32 = evs[c].data.u32;
				epoll_ctl(ep, EPOLL_CTL_ADD, k->fd, &ev);
				continue;
			}
			k->len += got;
			while (k->busy && (len = complete(k->buf, k->len))) {
				memmove(k->buf, k->buf + len, k->len - len);
				k->len -= len;
				k->busy = 0;
				if (!done++)
					first_done = t;
				last_done = t;
				if (nlat < MAX_SAMPLES)
					lat_us[nlat++] = (t - k->sent_ns) / 1000;
			}
		}
	}
	secs = (now_ns() - start) / 1e9;
	qsort(lat_us, nlat, sizeof(lat_us[0]), cmp_u32);
	printf("loadgen proto %s target %.0f conns %d secs %.3f done %llu rate %.1f span_rate %.1f "
	       "late %llu p50_us %u p99_us %u\n", proto, rate, nconns, secs, (unsigned long long)done,
	       done / secs, last_done > first_done ? (done - 1) / ((last_done - first_done) / 1e9) : 0,
	       (unsigned long long)late, nlat ? lat_us[nlat / 2] : 0,
	       nlat ? lat_us[nlat * 99 / 100] : 0);
	return done ? 0 : 1;
usage:
	fprintf(stderr, "usage: loadgen -p redis|memcache|http -P PORT [-r RATE] [-c CONNS] [-d SECS]\n");
	return 2;
}
