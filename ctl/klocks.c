// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel functions a thread blocked in a sleeping lock has on its stack,
 * for trace's "lock" cause beyond futex (bpf/trace.bpf.c, in_kernel_lock()):
 * the mutex, rwsem and semaphore entry points and slow paths of 6.1 and
 * 6.12, and on PREEMPT_RT the rtmutex-based locks that replace them and
 * spinlocks. Names are matched with the compiler's suffixes (.constprop.0,
 * .isra.0, .part.0); a function ends where the next symbol begins
 * (/proc/kallsyms lists the kernel's own symbols in address order).
 */
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "klocks.h"

static const char lock_names[] =
	"^(__)?(mutex_lock|mutex_lock_(interruptible|killable|io|nested)"
	"|(__)?ww_mutex_lock[a-z_]*|__mutex_lock[a-z_]*"
	"|rwsem_down_(read|write)_slowpath"
	"|down_(read|write)(_killable|_interruptible|_nested)?"
	"|down|down_(interruptible|killable|timeout)|__down[a-z_]*"
	"|percpu_down_(read|write)|__percpu_down_read|percpu_rwsem_wait"
	"|rt_mutex_slowlock[a-z_]*|__rt_mutex_slowlock[a-z_]*|rt_mutex_lock[a-z_]*"
	"|rtlock_slowlock[a-z_]*|rwbase_(read|write)_lock|__rwbase_read_lock"
	"|rt_spin_lock|rt_read_lock|rt_write_lock)(\\..*)?$";

struct range {
	uint64_t lo, hi;
};

static int by_lo(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

int klocks_load(uint64_t *lo, uint64_t *hi, int max)
{
	struct range r[256];
	char line[512], sym[256], type;
	int n = 0, open = -1, i, out = 0;
	regex_t re;
	uint64_t a;
	FILE *f;

	if (regcomp(&re, lock_names, REG_EXTENDED | REG_NOSUB))
		return 0;
	f = fopen("/proc/kallsyms", "r");
	if (!f) {
		regfree(&re);
		return 0;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 18);	/* fewer reads of the kernel's generator */
	/*
	 * About 150 000 lines: parsed by hand, and the regex only on text
	 * symbols that name a lock, a down or an rwsem, as every one of
	 * lock_names does (sscanf() and regexec() on every
	 * line took 11 s of a trace's start in the TCG guest).
	 */
	while (fgets(line, sizeof(line), f)) {
		char *p, *name;
		size_t len;

		a = strtoull(line, &p, 16);
		if (*p != ' ' || !p[1] || p[2] != ' ' || !a)
			continue;
		type = p[1];
		name = p + 3;
		len = strcspn(name, " \t\n");
		if (name[len] && name[len] != '\n')
			break;		/* "[module]": modules come after the kernel's own */
		if (open >= 0 && a > r[open].lo) {
			r[open].hi = a;
			open = -1;
		}
		if ((type != 't' && type != 'T') || len >= sizeof(sym) ||
		    (!memmem(name, len, "lock", 4) && !memmem(name, len, "down", 4) &&
		     !memmem(name, len, "rwsem", 5)))
			continue;
		memcpy(sym, name, len);
		sym[len] = 0;
		if (open < 0 && n < (int)(sizeof(r) / sizeof(r[0])) && !regexec(&re, sym, 0, NULL, 0)) {
			r[n].lo = a;
			r[n].hi = 0;
			open = n++;
		}
	}
	fclose(f);
	regfree(&re);
	if (open >= 0)
		n--;		/* the last symbol: no end known */
	qsort(r, n, sizeof(r[0]), by_lo);
	for (i = 0; i < n && out < max; i++) {
		if (!r[i].hi)
			continue;
		if (out && r[i].lo <= hi[out - 1]) {	/* adjacent or aliased: one range */
			if (r[i].hi > hi[out - 1])
				hi[out - 1] = r[i].hi;
			continue;
		}
		lo[out] = r[i].lo;
		hi[out] = r[i].hi;
		out++;
	}
	return out;
}
