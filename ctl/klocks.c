// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel functions a thread blocked in a sleeping lock has on its stack,
 * for trace's "lock" cause beyond futex (bpf/trace.bpf.c, in_kernel_lock()):
 * the mutex, rwsem and semaphore entry points and slow paths of 6.1 and
 * 6.12, and on PREEMPT_RT the rtmutex-based locks that replace them and
 * spinlocks. Names are matched with the compiler's suffixes (.constprop.0,
 * .isra.0, .part.0); a function ends where the next symbol begins
 * (/proc/kallsyms lists the kernel's own symbols in address order), and the
 * reading stops at _etext (with CONFIG_KALLSYMS_ALL the kernel's data comes
 * next, then modules), or at init_mm when that is asked for too.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
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

static int klocks_read(uint64_t *lo, uint64_t *hi, int max, uint64_t *init_mm)
{
	bool text_done = false;
	struct range r[256];
	char line[512], sym[256], type;
	int n = 0, open = -1, i, out = 0;
	regex_t re;
	uint64_t a;
	FILE *f;

	if (init_mm)
		*init_mm = 0;
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
		if (len == 7 && init_mm && !memcmp(name, "init_mm", 7) && (type == 'D' || type == 'd'))
			*init_mm = a;
		if (len == 6 && !memcmp(name, "_etext", 6))
			text_done = true;	/* the kernel's data next, then modules */
		if (text_done) {
			if (!init_mm || *init_mm)
				break;
			continue;
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

/*
 * What one reading found, kept for the rest of the boot: /proc/kallsyms
 * takes the kernel most of a second to print in the test VM (tens of ms on
 * a real CPU), at every trace's start. The kernel's own symbols do not
 * move until the next boot (a livepatch leaves the old functions where they
 * are), so the ranges and init_mm are written once per boot id, root's
 * only, to tmpfs (/run, gone at the next boot). A file that is not exactly
 * what this writes, or not root's alone, is not read: kallsyms is.
 */
#define CACHE_DIR	"/run/xprobectl"
#define CACHE_FILE	CACHE_DIR "/klocks"
#define CACHE_MAX	256

struct klocks_cache {
	char magic[8];		/* "xpklock1" */
	char boot_id[40];
	uint64_t init_mm;
	uint32_t n, pad;
	uint64_t lo[CACHE_MAX], hi[CACHE_MAX];
};

static bool boot_id(char *out, size_t len)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
	bool ok;

	memset(out, 0, len);
	if (!f)
		return false;
	ok = fgets(out, len, f) && strlen(out) > 30;
	fclose(f);
	return ok;
}

static bool cache_read(struct klocks_cache *c, const char *id)
{
	struct stat st;
	bool ok = false;
	int fd;

	fd = open(CACHE_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == 0 && !(st.st_mode & 077) &&
	    st.st_size == sizeof(*c) && read(fd, c, sizeof(*c)) == sizeof(*c))
		ok = !memcmp(c->magic, "xpklock1", 8) && !memcmp(c->boot_id, id, sizeof(c->boot_id)) &&
		     c->n && c->n <= CACHE_MAX;
	close(fd);
	return ok;
}

static void cache_write(const struct klocks_cache *c)
{
	char tmp[] = CACHE_DIR "/klocks.XXXXXX";
	struct stat st;
	int fd;

	if (mkdir(CACHE_DIR, 0700) && errno != EEXIST)
		return;
	if (lstat(CACHE_DIR, &st) || !S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 077))
		return;
	fd = mkstemp(tmp);
	if (fd < 0)
		return;
	if (write(fd, c, sizeof(*c)) != sizeof(*c) || fsync(fd) || rename(tmp, CACHE_FILE))
		unlink(tmp);
	close(fd);
}

int klocks_load(uint64_t *lo, uint64_t *hi, int max, uint64_t *init_mm)
{
	struct klocks_cache c;
	char id[sizeof(c.boot_id)];
	int n;

	if (geteuid() || !boot_id(id, sizeof(id)))
		return klocks_read(lo, hi, max, init_mm);
	if (!cache_read(&c, id)) {
		memset(&c, 0, sizeof(c));
		c.n = klocks_read(c.lo, c.hi, CACHE_MAX, &c.init_mm);
		if (!c.n)
			return 0;	/* no addresses shown: nothing worth keeping */
		memcpy(c.magic, "xpklock1", 8);
		memcpy(c.boot_id, id, sizeof(c.boot_id));
		cache_write(&c);
	}
	n = (int)c.n < max ? (int)c.n : max;
	memcpy(lo, c.lo, n * sizeof(*lo));
	memcpy(hi, c.hi, n * sizeof(*hi));
	if (init_mm)
		*init_mm = c.init_mm;
	return n;
}
