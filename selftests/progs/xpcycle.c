// SPDX-License-Identifier: GPL-2.0
/*
 * xpcycle: add and delete views or hooks many times from one process, so a
 * thousand cycles cost the module's work rather than a thousand execs.
 *   xpcycle view PID N            N x (VIEW_NEW, VIEW_DEL)
 *   xpcycle hook PID SYMBOL N     N x (HOOK_ADD, HOOK_DEL) on an existing view
 *   xpcycle uhook PID ADDR SIZE N N x (UHOOK_ADD, UHOOK_DEL) of the user function
 *                                 [ADDR, ADDR + SIZE) of PID, which has a view;
 *                                 every other one with events; it says no
 *                                 branch from elsewhere lands in the function
 *                                 (true of uhtarget's uh_add, uh_call, uh_small)
 * Stops at the first error and prints it; prints "ok N" at the end.
 */
#include "genl.h"
#include "../../module/uapi/xprobes.h"

static struct genl_req req;

static void get_id(const struct nlattr *a, int len, void *arg)
{
	const struct nlattr *id = genl_attr(a, len, XPROBES_A_HOOK_ID);

	if (id)
		*(uint32_t *)arg = *(const uint32_t *)((const char *)id + NLA_HDRLEN);
}

int main(int argc, char **argv)
{
	struct genl_reply rep = { 0 };
	int fd, hook, uhook, i, n;
	uint32_t pid, id;
	uint16_t fam;

	hook = argc == 5 && !strcmp(argv[1], "hook");
	uhook = argc == 6 && !strcmp(argv[1], "uhook");
	if (!hook && !uhook && !(argc == 4 && !strcmp(argv[1], "view"))) {
		fprintf(stderr, "usage: xpcycle view PID N | xpcycle hook PID SYMBOL N | "
			"xpcycle uhook PID ADDR SIZE N\n");
		return 2;
	}
	pid = atoi(argv[2]);
	n = atoi(argv[argc - 1]);
	fd = genl_socket();
	fam = fd < 0 ? 0 : genl_family(fd, XPROBES_GENL_NAME);
	if (!fam) {
		fprintf(stderr, "xpcycle: xprobes family not found\n");
		return 1;
	}
	for (i = 0; i < n; i++) {
		id = 0;
		genl_begin(&req, fam, uhook ? XPROBES_CMD_UHOOK_ADD :
			   hook ? XPROBES_CMD_HOOK_ADD : XPROBES_CMD_VIEW_NEW, 0);
		genl_put_u32(&req, XPROBES_A_PID, pid);
		if (hook)
			genl_put_str(&req, XPROBES_A_SYMBOL, argv[3]);
		if (uhook) {
			genl_put_u64(&req, XPROBES_A_ADDR, strtoull(argv[3], NULL, 0));
			genl_put_u32(&req, XPROBES_A_SIZE, strtoul(argv[4], NULL, 0));
			genl_put(&req, XPROBES_A_UH_BRANCHES, NULL, 0);
			/* every other hook with events: both trampoline shapes */
			if (i & 1)
				genl_put_u32(&req, XPROBES_A_FLAGS, XPROBES_F_EVENTS);
		}
		rep.on_msg = get_id;
		rep.arg = &id;
		if (genl_call(fd, &req, &rep))
			goto fail;
		if (uhook) {
			genl_begin(&req, fam, XPROBES_CMD_UHOOK_DEL, 0);
			genl_put_u32(&req, XPROBES_A_HOOK_ID, id);
		} else if (hook) {
			genl_begin(&req, fam, XPROBES_CMD_HOOK_DEL, 0);
			genl_put_u32(&req, XPROBES_A_HOOK_ID, id);
		} else {
			genl_begin(&req, fam, XPROBES_CMD_VIEW_DEL, 0);
			genl_put_u32(&req, XPROBES_A_PID, pid);
		}
		rep.on_msg = NULL;
		if (genl_call(fd, &req, &rep))
			goto fail;
	}
	printf("ok %d\n", n);
	return 0;
fail:
	printf("error in cycle %d: %d (%s): %s\n", i, rep.error, strerror(rep.error), rep.msg);
	return 1;
}
