// SPDX-License-Identifier: GPL-2.0
/*
 * A bounded, local slowloris against xprobectl's exporter
 * (selftests/host/exporter-check.sh): N connections from address SRC (a
 * loopback address of its own, 127.0.0.2) to 127.0.0.1:PORT, each sending
 * a request's first line, then one header line every 2 s, never the end;
 * meanwhile a scrape of /metrics from 127.0.0.1 every 100 ms, for SECS
 * seconds. Prints
 *	slowloris: opened O of N, held H at the end, scrapes A of S answered
 * (held: those the server still kept open; answered: "200" with a body).
 *	slowloris PORT N SECS SRC
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct sockaddr_in addr(const char *ip, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };

	inet_pton(AF_INET, ip, &a.sin_addr);
	return a;
}

/* One scrape, 5 s at most: 1 if it was answered with 200 and a body. */
static int scrape(int port)
{
	static const char req[] = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
	struct sockaddr_in a = addr("127.0.0.1", port);
	struct timeval tv = { .tv_sec = 5 };
	char buf[65536];
	size_t got = 0;
	ssize_t n;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return 0;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) || send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) < 0) {
		close(fd);
		return 0;
	}
	while (got < sizeof(buf) - 1 && (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += n;
	close(fd);
	buf[got] = 0;
	return !strncmp(buf, "HTTP/1.1 200", 12) && strstr(buf, "\r\n\r\n#");
}

int main(int argc, char **argv)
{
	int port, n, secs, i, opened = 0, held = 0, asked = 0, answered = 0;
	struct rlimit rl;
	struct sockaddr_in src, dst;
	double end, next_line, next_scrape;
	int *fds;

	if (argc != 5) {
		fprintf(stderr, "usage: slowloris PORT N SECS SRC\n");
		return 2;
	}
	port = atoi(argv[1]);
	n = atoi(argv[2]);
	secs = atoi(argv[3]);
	src = addr(argv[4], 0);
	dst = addr("127.0.0.1", port);
	rl.rlim_cur = rl.rlim_max = n + 64;
	if (setrlimit(RLIMIT_NOFILE, &rl)) {
		perror("slowloris: setrlimit");
		return 1;
	}
	fds = calloc(n, sizeof(*fds));
	if (!fds)
		return 1;
	for (i = 0; i < n; i++) {
		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		if (fds[i] < 0 || bind(fds[i], (struct sockaddr *)&src, sizeof(src)) ||
		    (connect(fds[i], (struct sockaddr *)&dst, sizeof(dst)) && errno != EINPROGRESS)) {
			if (fds[i] >= 0)
				close(fds[i]);
			fds[i] = -1;
			continue;
		}
		opened++;
	}
	/*
	 * Once connected, a request's first line (sent before, it would be
	 * lost on a connect still in progress); the connects settled (taken,
	 * or refused by the server) before the scrapes.
	 */
	end = now() + 5;
	for (i = 0; i < n && now() < end; i++) {
		static const char first[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n";
		struct pollfd p = { .fd = fds[i], .events = POLLOUT };

		if (fds[i] >= 0 && poll(&p, 1, 100) == 1 && (p.revents & POLLOUT))
			(void)!send(fds[i], first, sizeof(first) - 1, MSG_NOSIGNAL);
	}
	end = now() + secs;
	next_line = now() + 2;
	next_scrape = now();
	while (now() < end) {
		if (now() >= next_scrape) {
			asked++;
			answered += scrape(port);
			next_scrape += 0.1;
		}
		if (now() >= next_line) {
			for (i = 0; i < n; i++)
				if (fds[i] >= 0)
					(void)!send(fds[i], "X-Slow: 1\r\n", 11, MSG_NOSIGNAL);
			next_line += 2;
		}
		usleep(10000);
	}
	for (i = 0; i < n; i++) {
		struct pollfd p = { .fd = fds[i], .events = POLLIN | POLLRDHUP };
		char c;

		if (fds[i] < 0)
			continue;
		/* still open: nothing to read, no end from the server */
		if (!poll(&p, 1, 0) || (recv(fds[i], &c, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN))
			held++;
		close(fds[i]);
	}
	printf("slowloris: opened %d of %d, held %d at the end, scrapes %d of %d answered\n",
	       opened, n, held, answered, asked);
	return 0;
}
