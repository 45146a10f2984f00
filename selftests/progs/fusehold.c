// SPDX-License-Identifier: GPL-2.0
/*
 * fusehold: a FUSE file system that can stop answering, for tests of what
 * waits on a traced process's files (issue 36: a FUSE mount that never
 * answers must not hang every xprobes operation).
 *
 *   fusehold [-p] DIR FILE
 *
 * mounts at DIR a read-only directory holding one file, "prog", whose bytes
 * are FILE's (executable), opened with FOPEN_DIRECT_IO so that every read(),
 * kernel_read() included, reaches this process (a private mmap still goes
 * through the page cache). Prints "mounted" once it answers. SIGUSR1: stop
 * reading requests (they wait in the kernel): prints "stopped N" (N counts
 * the stops), then "waits N" once a request waits unread; SIGUSR2: answer
 * again; SIGTERM: unmount and exit. -p: hold only the page-cache reads (a
 * page or more at a page's start: a fault on the file's mapping), reading
 * every other request, from the start until SIGUSR2: prints "page N" when
 * it holds the Nth (an execve of prog waits between exec_mmap() and its
 * end, in the fault that zeroes its data segment's tail). Speaks the
 * kernel's protocol on /dev/fuse directly: no libfuse in the guest.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/fuse.h>

#define ROOT_ID	1
#define PROG_ID	2

static volatile sig_atomic_t held, quit, pages;
static int fuse_fd, file_fd;
static struct stat file_st;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		held = 1;
	else if (sig == SIGUSR2)
		held = pages = 0;
	else
		quit = 1;
}

/* -p: the page reads held, answered at SIGUSR2 */
static struct {
	uint64_t unique;
	struct fuse_read_in in;
} held_reads[64];
static unsigned int nheld;

static void reply(uint64_t unique, int error, const void *data, size_t len)
{
	struct fuse_out_header h = { .len = sizeof(h) + (error ? 0 : len), .error = error,
				     .unique = unique };
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)data, error ? 0 : len } };

	if (writev(fuse_fd, iov, 2) < 0 && errno != ENOENT)	/* ENOENT: interrupted */
		perror("fusehold: writev");
}

static void attr_of(uint64_t id, struct fuse_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = id;
	a->nlink = 1;
	if (id == ROOT_ID) {
		a->mode = S_IFDIR | 0755;
		a->nlink = 2;
	} else {
		a->mode = S_IFREG | 0755;
		a->size = file_st.st_size;
		a->blocks = (file_st.st_size + 511) / 512;
	}
	a->blksize = 4096;
}

static void handle(const struct fuse_in_header *in, const void *arg)
{
	switch (in->opcode) {
	case FUSE_INIT: {
		const struct fuse_init_in *ii = arg;
		struct fuse_init_out o = { .major = FUSE_KERNEL_VERSION,
					   .minor = FUSE_KERNEL_MINOR_VERSION,
					   .max_readahead = ii->max_readahead,
					   .max_write = 4096, .max_pages = 32 };

		reply(in->unique, 0, &o, sizeof(o));
		break;
	}
	case FUSE_LOOKUP: {
		struct fuse_entry_out o = { .nodeid = PROG_ID, .attr_valid = 3600,
					    .entry_valid = 3600 };

		if (in->nodeid != ROOT_ID || strcmp(arg, "prog")) {
			reply(in->unique, -ENOENT, NULL, 0);
			break;
		}
		attr_of(PROG_ID, &o.attr);
		reply(in->unique, 0, &o, sizeof(o));
		break;
	}
	case FUSE_GETATTR: {
		struct fuse_attr_out o = { .attr_valid = 3600 };

		attr_of(in->nodeid, &o.attr);
		reply(in->unique, 0, &o, sizeof(o));
		break;
	}
	case FUSE_OPEN:
	case FUSE_OPENDIR: {
		struct fuse_open_out o = { .fh = 1,
					   .open_flags = in->opcode == FUSE_OPEN ? FOPEN_DIRECT_IO : 0 };

		reply(in->unique, 0, &o, sizeof(o));
		break;
	}
	case FUSE_READ: {
		const struct fuse_read_in *ri = arg;
		static char buf[1 << 17];
		size_t n = ri->size < sizeof(buf) ? ri->size : sizeof(buf);
		ssize_t got;

		if (pages && ri->size >= 4096 && !(ri->offset & 4095) &&
		    nheld < sizeof(held_reads) / sizeof(held_reads[0])) {
			held_reads[nheld].unique = in->unique;
			held_reads[nheld++].in = *ri;
			printf("page %u\n", nheld);
			fflush(stdout);
			break;
		}
		got = pread(file_fd, buf, n, ri->offset);

		if (got < 0)
			reply(in->unique, -EIO, NULL, 0);
		else
			reply(in->unique, 0, buf, got);
		break;
	}
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
	case FUSE_INTERRUPT:
		break;	/* no reply */
	case FUSE_RELEASE:
	case FUSE_RELEASEDIR:
	case FUSE_FLUSH:
		reply(in->unique, 0, NULL, 0);
		break;
	default:
		reply(in->unique, -ENOSYS, NULL, 0);
		break;
	}
}

int main(int argc, char **argv)
{
	static char req[1 << 18];
	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART: read() returns */
	char opts[128];
	sigset_t mask, open_mask;
	bool said = false, stopped = false, told = false;
	unsigned int stops = 0;

	if (argc == 4 && !strcmp(argv[1], "-p")) {
		pages = 1;
		argv++;
		argc--;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: fusehold [-p] DIR FILE\n");
		return 2;
	}
	file_fd = open(argv[2], O_RDONLY);
	if (file_fd < 0 || fstat(file_fd, &file_st)) {
		perror(argv[2]);
		return 1;
	}
	fuse_fd = open("/dev/fuse", O_RDWR);
	if (fuse_fd < 0) {
		perror("/dev/fuse");
		return 1;
	}
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other",
		 fuse_fd);
	if (mount("fusehold", argv[1], "fuse", MS_NOSUID | MS_NODEV, opts)) {
		perror("mount");
		return 1;
	}
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* The signals arrive only inside ppoll(): none is missed between a look at held and a wait. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	sigaddset(&mask, SIGUSR2);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, &open_mask);
	while (!quit) {
		struct pollfd p = { .fd = fuse_fd, .events = POLLIN };
		ssize_t n;

		if (!pages && nheld) {	/* SIGUSR2 after -p: answer what waits */
			unsigned int i;

			for (i = 0; i < nheld; i++) {
				struct fuse_in_header h = { .opcode = FUSE_READ,
							    .unique = held_reads[i].unique };

				handle(&h, &held_reads[i].in);
			}
			nheld = 0;
			printf("released\n");
			fflush(stdout);
		}
		if (!held) {
			stopped = told = false;
		} else if (!stopped) {
			printf("stopped %u\n", ++stops);
			fflush(stdout);
			stopped = true;
		}
		if (held && told) {
			ppoll(NULL, 0, NULL, &open_mask);
			continue;
		}
		if (ppoll(&p, 1, NULL, &open_mask) != 1)
			continue;	/* a signal */
		if (held) {
			/* A request waits unread: whoever sent it is stuck in it now. */
			printf("waits %u\n", stops);
			fflush(stdout);
			told = true;
			continue;
		}
		n = read(fuse_fd, req, sizeof(req));
		if (n < 0) {
			if (errno == EINTR || errno == ENOENT || errno == EAGAIN)
				continue;
			if (errno != ENODEV)
				perror("fusehold: read");
			break;
		}
		if ((size_t)n < sizeof(struct fuse_in_header))
			continue;
		handle((const struct fuse_in_header *)req, req + sizeof(struct fuse_in_header));
		if (!said && ((const struct fuse_in_header *)req)->opcode == FUSE_INIT) {
			printf("mounted\n");
			fflush(stdout);
			said = true;
		}
	}
	umount2(argv[1], MNT_DETACH);
	return 0;
}
