/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The direct branches of an ELF file's executable text (branches.c), for
 * uhook add: the module decodes only the hooked function, so a jump at its
 * entry could cover bytes that another function's branch lands on.
 */
#ifndef XPROBECTL_BRANCHES_H
#define XPROBECTL_BRANCHES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "../module/uapi/xprobes.h"

/*
 * Every direct branch (jmp, jcc, call, loop, jrcxz) that lands in
 * [OFFSET + 1, OFFSET + SPAN) of the file PATH (SPAN at most
 * XPROBES_UH_BRANCH_WINDOW), in file offsets, as UHOOK_ADD's
 * XPROBES_A_UH_BRANCHES takes them (to: from OFFSET). The file's bytes are
 * scanned once per run for the opcodes of relative branches; only the
 * regions (between function symbols) holding one that would land there are
 * decoded (Zydis, linear sweep), each once a run. Returns how many, at most
 * MAX, or -errno with *WHY set.
 */
int branches_into(const char *path, uint64_t offset, unsigned int span,
		  struct xprobes_uh_branch *out, size_t max, const char **why);

/*
 * The bytes from the start of the function at file offset OFFSET of PATH
 * that a user hook's jump would cover, as Zydis decodes them: ENDBR64 if it
 * starts with one, then whole instructions to 5 bytes. The span to list
 * branches to (XPROBES_A_UH_BRANCH_SPAN): the module refuses a cover past
 * it with EMSGSIZE, and the caller then asks with XPROBES_UH_BRANCH_WINDOW,
 * which is also what this returns where it cannot tell.
 */
unsigned int branches_span(const char *path, uint64_t offset);

/*
 * The targets a relative branch would have if its opcode were at byte P of
 * CODE (LEN bytes, at address VA): rel8 after 70-7f, e0-e3, eb; rel32, or
 * rel16 behind an operand-size prefix, after e8, e9, 0f 80-8f; each also
 * cut to 16 bits, as that prefix may have it. Into T; how many (0: no
 * such opcode there). What branches_into() scans the text with.
 */
#define BRANCH_TARGETS_MAX	4
size_t branches_targets(const uint8_t *code, size_t len, size_t p, uint64_t va,
			uint64_t t[BRANCH_TARGETS_MAX]);

/*
 * Would branches_into() on PATH cost little: the file read already
 * (this run scanned it), or at most MAX_TEXT bytes of executable text?
 */
bool branches_cheap(const char *path, uint64_t max_text);

/*
 * The module's refusal MSG for a branch into the covered bytes of FUNC
 * (at file offset OFFSET of PATH), rewritten with the branch's function and
 * the target named ("a branch at fb+0x3 (file offset ...) lands at fa+0x3,
 * ..."), into OUT. Returns MSG itself when it is another refusal.
 */
const char *branches_explain(const char *msg, const char *path, const char *func,
			     char *out, size_t len);

#endif
