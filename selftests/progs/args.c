// SPDX-License-Identifier: GPL-2.0
/*
 * args: writes what it was given, "argc=N [ARG]... env=XP_ARGS_ENV", to
 * the file $XP_ARGS_OUT (else stdout), and exits with status argc + 10,
 * or, with XP_ARGS_SIG=N, kills itself with signal N.
 * Selftest 48 runs it untraced and under trace, dynamic and static
 * (args_static): a traced program must see exactly what it was given.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static int report(FILE *f, int argc, char **argv)
{
	const char *env = getenv("XP_ARGS_ENV");
	int i;

	fprintf(f, "argc=%d", argc);
	for (i = 1; i < argc; i++)
		fprintf(f, " [%s]", argv[i]);
	fprintf(f, " env=%s\n", env ? env : "-");
	return argc + 10;
}

int main(int argc, char **argv)
{
	const char *out = getenv("XP_ARGS_OUT");
	FILE *f = out ? fopen(out, "w") : stdout;
	int status;

	if (!f)
		return 1;
	status = report(f, argc, argv);
	fclose(f);
	if (getenv("XP_ARGS_SIG"))
		raise(atoi(getenv("XP_ARGS_SIG")));
	return status;
}
