// SPDX-License-Identifier: GPL-2.0
/*
 * dropcaps: run a command with less privilege than root.
 *   dropcaps -u UID CMD...      become UID (all capabilities gone)
 *   dropcaps -c CMD...          stay uid 0 but drop every capability, with the
 *                               securebits that keep exec from granting them back
 *   dropcaps -k CAP CMD...      stay uid 0, drop only capability number CAP
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <linux/securebits.h>

static int set_caps(unsigned long long keep)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];
	int c;

	memset(data, 0, sizeof(data));
	for (c = 0; c < 64; c++) {
		if (!(keep & (1ULL << c)))
			continue;
		data[c / 32].effective |= 1U << (c % 32);
		data[c / 32].permitted |= 1U << (c % 32);
		data[c / 32].inheritable |= 1U << (c % 32);
	}
	return syscall(SYS_capset, &hdr, data);
}

int main(int argc, char **argv)
{
	unsigned long long keep = ~0ULL;
	int c;

	if (argc < 3) {
		fprintf(stderr, "usage: dropcaps -u UID | -c | -k CAP  CMD...\n");
		return 2;
	}
	if (!strcmp(argv[1], "-u")) {
		uid_t uid = atoi(argv[2]);

		if (setgroups(0, NULL) || setresgid(uid, uid, uid) || setresuid(uid, uid, uid)) {
			perror("dropcaps: setresuid");
			return 2;
		}
		argv += 3;
	} else {
		if (!strcmp(argv[1], "-c")) {
			keep = 0;
			argv += 2;
		} else if (!strcmp(argv[1], "-k")) {
			keep &= ~(1ULL << atoi(argv[2]));
			argv += 3;
		} else {
			fprintf(stderr, "dropcaps: unknown mode %s\n", argv[1]);
			return 2;
		}
		if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
			  SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED)) {
			perror("dropcaps: securebits");
			return 2;
		}
		for (c = 0; c <= CAP_LAST_CAP; c++)
			if (!(keep & (1ULL << c)))
				prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
		prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
		if (set_caps(keep & ((1ULL << (CAP_LAST_CAP + 1)) - 1))) {
			perror("dropcaps: capset");
			return 2;
		}
		if (keep)	/* keep what is left effective across exec */
			for (c = 0; c <= CAP_LAST_CAP; c++)
				if (keep & (1ULL << c))
					prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c, 0, 0);
	}
	if (!*argv) {
		fprintf(stderr, "dropcaps: no command\n");
		return 2;
	}
	execvp(argv[0], argv);
	fprintf(stderr, "dropcaps: exec %s: %s\n", argv[0], strerror(errno));
	return 127;
}
