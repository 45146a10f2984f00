// SPDX-License-Identifier: GPL-2.0
/*
 * xpowner: create a view on PID owned by this process's netlink socket (not
 * persistent, unless -p), add hooks on SYMBOLs, print "ready", then sleep
 * until killed: the view must go when this process does.
 *   xpowner [-p] PID [SYMBOL[+OFFSET]...]
 */
#include <signal.h>
#include "genl.h"
#include "../../module/uapi/xprobes.h"

int main(int argc, char **argv)
{
	static struct genl_req r;
	struct genl_reply rep = { 0 };
	int fd, i = 1, persist = 0;
	uint16_t fam;
	uint32_t pid;

	if (argc > 1 && !strcmp(argv[1], "-p")) {
		persist = 1;
		i++;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: xpowner [-p] PID [SYMBOL[+OFFSET]...]\n");
		return 2;
	}
	pid = atoi(argv[i++]);
	fd = genl_socket();
	fam = fd < 0 ? 0 : genl_family(fd, XPROBES_GENL_NAME);
	if (!fam)
		return 1;
	genl_begin(&r, fam, XPROBES_CMD_VIEW_NEW, 0);
	genl_put_u32(&r, XPROBES_A_PID, pid);
	if (persist)
		genl_put_u32(&r, XPROBES_A_FLAGS, XPROBES_F_PERSIST);
	if (genl_call(fd, &r, &rep)) {
		printf("error %d: %s\n", rep.error, rep.msg);
		return 1;
	}
	for (; i < argc; i++) {
		genl_begin(&r, fam, XPROBES_CMD_HOOK_ADD, 0);
		genl_put_u32(&r, XPROBES_A_PID, pid);
		char *plus = strchr(argv[i], '+');

		if (plus)
			*plus++ = 0;
		genl_put_str(&r, XPROBES_A_SYMBOL, argv[i]);
		if (plus)
			genl_put_u32(&r, XPROBES_A_OFFSET, strtoul(plus, NULL, 0));
		if (genl_call(fd, &r, &rep)) {
			printf("error %d: %s\n", rep.error, rep.msg);
			return 1;
		}
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
