// SPDX-License-Identifier: GPL-2.0
/*
 * Host-side check of module/insn.c: decode every instruction objdump found in
 * a kernel's text (objdump -d -w output on stdin) and compare lengths.
 * Prints the disagreements (up to 20) and a summary; exits 1 on any.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../module/insn.h"

int main(void)
{
	char line[4096];
	long total = 0, bad = 0, skipped = 0, kinds[6] = { 0 };

	while (fgets(line, sizeof(line), stdin)) {
		unsigned char buf[32];
		struct xp_insn insn;
		char *p = strchr(line, ':'), *mn;
		int n = 0;

		/* instruction lines look like " ffffffff81000000:\t48 8d ...\tlea ..." */
		if (!p || p[1] != '\t' || p - line > 20)
			continue;
		p += 2;
		mn = strchr(p, '\t');
		if (!mn)
			continue;
		while (p < mn && n < 32) {
			unsigned int v;

			if (!isxdigit((unsigned char)p[0]) || !isxdigit((unsigned char)p[1]) ||
			    sscanf(p, "%2x", &v) != 1)
				break;
			buf[n++] = v;
			p += 3;
		}
		if (strstr(mn, "(bad)") || n == 0 || n > 15) {
			skipped++;
			continue;
		}
		total++;
		if (xp_insn_decode(&insn, buf, n) || insn.len != n) {
			if (++bad <= 20)
				printf("mismatch: objdump %d bytes, decoder %d: %s", n,
				       insn.len, line);
			continue;
		}
		kinds[insn.kind]++;
	}
	printf("insn-check: %ld instructions, %ld disagree, %ld skipped; slot %ld call %ld jmp %ld jcc %ld ret %ld refused %ld\n",
	       total, bad, skipped, kinds[XP_INSN_SLOT], kinds[XP_INSN_CALL],
	       kinds[XP_INSN_JMP], kinds[XP_INSN_JCC], kinds[XP_INSN_RET], kinds[XP_INSN_REFUSE]);
	return bad ? 1 : 0;
}
