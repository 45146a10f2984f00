// SPDX-License-Identifier: GPL-2.0
/*
 * xprobectl trace: per-function wall time of one process, split into ON-CPU
 * and OFF-CPU by cause. User functions through xprobes user hooks where the
 * module allows one (tuhook.c), else uprobes; the scheduler side
 * through hooks in the process's kernel view (xprobes.ko), or through the
 * global sched_switch tracepoint with a PID test when the module is not
 * there (fallback mode). The BPF side is bpf/trace.bpf.c.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <netlink/attr.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cgroup.h"
#include "elfsym.h"
#include "events.h"
#include "klocks.h"
#include "latency_api.h"
#include "nl.h"
#include "target.h"
#include "tracer.h"
#include "util.h"
#include "xprobectl.h"
#include "trace.skel.h"

static void trace_usage(FILE *f)
{
	fprintf(f,
"usage: xprobectl trace [OPTIONS] PID\n"
"       xprobectl trace [OPTIONS] -- COMMAND [ARGS...]\n"
"       xprobectl trace [OPTIONS] --cgroup PATH\n"
"Measures, per function of one process: calls, wall time, and that time split into\n"
"ON-CPU and OFF-CPU by cause (runq, wakeup, throttled, lock, mem, io, net, sleep,\n"
"other; wakeup is the time from being woken to running, the tail of every wait but\n"
"a preemption; throttled: out of CPU cgroup quota; lock: futex or a kernel mutex,\n"
"rwsem or semaphore; mem: reclaim, compaction, memory.high; io: block I/O and major\n"
"page faults).\n"
"  -f, --function GLOB       trace functions of the main binary matching GLOB\n"
"  -f LIB:GLOB               ... of a shared library (\"c:malloc\", \"libz:*\"); repeatable;\n"
"                            default: every function of the main binary\n"
"      --list-functions      print the functions -f selects and exit\n"
"  -d, --duration SECONDS    stop after SECONDS (default: Ctrl-C or the target's exit)\n"
"  -i, --interval SECONDS    print what changed every SECONDS (0.01 at least), totals\n"
"                            at the end\n"
"  -s, --sort KEY            wall (default), self, on, off, calls\n"
"  -n, --top N               print the N first functions only\n"
"  -H, --histogram           log2 histograms per function (wall, on-CPU, each cause)\n"
"  -T, --per-thread          add a per-thread breakdown\n"
"  -W, --wakers              who woke each function's waits: a thread of the process\n"
"                            and the traced function it was in; in views mode every\n"
"                            other waker is \"outside\" (only the process's own threads\n"
"                            reach its view's hook), in fallback mode it is named\n"
"  -C, --children            also the processes it forks from now on, and theirs (a\n"
"                            server started under trace, and its workers):\n"
"                            the table sums them, a per-process table follows; their\n"
"                            user functions through uprobes, attached when xprobectl\n"
"                            sees the fork (a 20 ms poll, then 50 ms or more on 6.1):\n"
"                            calls before that are not counted, the report says how\n"
"                            late each process's came (probes_after_ms)\n"
"      --cgroup PATH         every process of the cgroup v2 PATH (a container, a unit:\n"
"                            /system.slice/redis-server.service) and what they fork, as\n"
"                            with -C, those that join later or a server restarted into\n"
"                            it included (found within 100 ms); the functions are\n"
"                            those of its lowest pid's program; until Ctrl-C or -d\n"
"      --json                machine-readable report (docs/trace.md)\n"
"      --folded              folded stacks for flamegraph.pl/speedscope (microseconds)\n"
"      --pprof FILE          also write the stacks as a pprof profile (gzip-compressed\n"
"                            profile.proto: go tool pprof, Pyroscope, Parca), one sample\n"
"                            type per figure (wall, on_cpu, off_cpu, off_cpu_CAUSE; ns),\n"
"                            the cause as the leaf frame, the waker (-W) as a label\n"
"      --latency[=K]         also report slow syscalls as they happen, each with the\n"
"                            traced function that made it (xprobectl latency; K sigmas, 3)\n"
"      --latency-min-us US   and only those longer than US microseconds\n"
"      --no-views            fallback mode: global sched_switch with a PID test\n"
"      --uprobes             user functions through uprobes only, not xprobes user hooks\n"
"                            (the default where the module is loaded: a jump into a\n"
"                            trampoline per function, no trap per call; a function that\n"
"                            allows none keeps a uprobe; the report's PROBE column)\n"
"      --events              user hooks enter the kernel at every call and return (a\n"
"                            system call each), instead of writing records in the\n"
"                            process's memory that its view reads at each context\n"
"                            switch (the default, no kernel entry per call; -T,\n"
"                            --folded, --latency, and a process without rseq, use\n"
"                            events)\n"
"  -v, --verbose             libbpf's messages; how long each step of the set-up\n"
"                            took; with --children or --cgroup, each process\n"
"                            added, once its probes are attached\n");
}

static bool verbose;

/* ---- choosing functions ----------------------------------------------------- */

struct spec {
	char *lib;		/* NULL: the main binary */
	char *glob;
};

struct pick {
	struct tsession *s;
	const char *path;
	const char *lib;	/* the -f library being read, NULL: the main binary */
	bool main_bin;		/* path is the program's (a -f LIB naming it too) */
	bool again;		/* a file an earlier pass read: its functions picked once */
	bool has_entry;		/* path's ELF entry point, as a file offset: */
	uint64_t entry;
	int fd;			/* path, read for each function's first bytes */
	bool go;		/* path is a Go program: entries only (go_runtime()) */
	int go_left;		/* ... runtime functions a pattern matched, left out */
	const struct spec *specs;
	int nspecs;
	size_t cap;
	bool list;
};

/*
 * The unwinder's entry points: where a thread starts to read its return
 * addresses (trace.bpf.c, unwind_start), in libgcc_s or linked into the
 * program. They take no return probe themselves (attach_unwinders()): it
 * would put a trampoline in the unwinder's own frame after unwind_start
 * ran. And glibc's way to them: backtrace(), pthread_cancel() and
 * pthread_exit() get libgcc_s's functions from __libc_unwind_link_get(),
 * which loads it the first time (so a C program maps it only then, after
 * trace attached).
 */
static const char *const unwinders[] = {
	"_Unwind_RaiseException", "_Unwind_Resume", "_Unwind_Resume_or_Rethrow",
	"_Unwind_ForcedUnwind", "_Unwind_Backtrace", "__libc_unwind_link_get",
};

bool unwinder_name(const char *name)
{
	unsigned int i;

	for (i = 0; i < sizeof(unwinders) / sizeof(unwinders[0]); i++)
		if (!strcmp(name, unwinders[i]))
			return true;
	return false;
}

/*
 * libgcc's unwinder inside: uw_init_context_1() reads its own return
 * address to start from its own frame, and the other uw_ and _Unwind_
 * functions run within an unwinding after its entry point gave the slots
 * back. Linked into a program (static, or -static-libgcc) and traced with
 * every function, they take no return probe: a thunk there would be the
 * first address the unwinder cannot read.
 */
static bool unwinder_inside(const char *name)
{
	return !strncmp(name, "uw_", 3) || !strncmp(name, "_Unwind_", 8);
}

static int is_unwinder(const char *name, uint64_t off, uint64_t size, void *arg)
{
	if (!unwinder_name(name))
		return 0;
	*(bool *)arg = true;
	return 1;
}

/*
 * What the first instruction at file offset OFF is to the kernel's uprobes,
 * from its prefixes: ENTRY_VEX if it is VEX- or EVEX-encoded (AVX, AVX-512:
 * in 64-bit mode C4, C5 and 62 after the legacy prefixes are always these
 * prefixes, as LES, LDS and BOUND do not exist there and a REX before them
 * is #UD); ENTRY_PREFIX if it has a LOCK or an ES, CS, SS or DS prefix
 * (DS is also CET's NOTRACK), which uprobes refuse to step (error 524,
 * ENOTSUPP: pthread_spin_lock's lock decl); else ENTRY_OK.
 */
enum { ENTRY_OK, ENTRY_VEX, ENTRY_PREFIX };

static int entry_class(int fd, uint64_t off)
{
	static const unsigned char legacy[] = { 0x26, 0x2e, 0x36, 0x3e, 0x64, 0x65, 0x66, 0x67,
						0xf0, 0xf2, 0xf3 };
	static const unsigned char refused[] = { 0x26, 0x2e, 0x36, 0x3e, 0xf0 };
	unsigned char b[15];
	ssize_t n = fd < 0 ? -1 : pread(fd, b, sizeof(b), off);
	bool bad = false;
	ssize_t i;

	for (i = 0; i < n && memchr(legacy, b[i], sizeof(legacy)); i++)
		bad |= !!memchr(refused, b[i], sizeof(refused));
	if (i < n && (b[i] == 0xc4 || b[i] == 0xc5 || b[i] == 0x62))
		return ENTRY_VEX;
	return bad ? ENTRY_PREFIX : ENTRY_OK;
}

/*
 * Go's runtime and its internal packages: code that switches stacks, runs
 * on the signal stack or before a goroutine exists (runtime.rt0_go,
 * runtime.mcall, runtime.sigtramp, ...), where even an entry probe's
 * pushes below the stack pointer are not known to be safe. A pattern
 * (-f 'runtime.*', or every function by default) leaves them out; a
 * function named exactly is traced.
 */
static bool go_runtime(const char *name)
{
	return !strncmp(name, "runtime.", 8) || !strncmp(name, "runtime/", 8) ||
	       !strncmp(name, "internal/", 9) || !strncmp(name, "sync/atomic.", 12) ||
	       !strncmp(name, "aeshash", 7) || !strchr(name, '.');
}

/*
 * The length of a Go function's stack check at file offset OFF, 0 if it
 * starts otherwise: "cmp 0x10(%r14),%rsp" (or, for a larger frame, "lea
 * -N(%rsp),%r12; cmp 0x10(%r14),%r12"), then "jbe" to its call of
 * runtime.morestack, which grows the stack and starts the function again.
 * Probed past it, a call is counted once, not once more per growth.
 */
static unsigned int go_stack_check(int fd, uint64_t off)
{
	static const unsigned char cmp_rsp[] = { 0x49, 0x3b, 0x66, 0x10 };
	static const unsigned char cmp_r12[] = { 0x4d, 0x3b, 0x66, 0x10 };
	unsigned char b[18];
	unsigned int n = 0;

	if (fd < 0 || pread(fd, b, sizeof(b), off) != (ssize_t)sizeof(b))
		return 0;
	if (!memcmp(b, cmp_rsp, 4)) {
		n = 4;
	} else if (b[0] == 0x4c && b[1] == 0x8d && b[3] == 0x24 && (b[2] == 0x64 || b[2] == 0xa4)) {
		n = b[2] == 0x64 ? 5 : 8;	/* lea disp8 or disp32(%rsp), %r12 */
		if (memcmp(b + n, cmp_r12, 4))
			return 0;
		n += 4;
	} else {
		return 0;
	}
	if (b[n] == 0x76)
		return n + 2;			/* jbe rel8 */
	if (b[n] == 0x0f && b[n + 1] == 0x86)
		return n + 6;			/* jbe rel32 */
	return 0;
}

/* Is the function at @off of @p's file picked already (by an earlier -f's pass)? */
static bool picked(const struct pick *p, uint64_t off)
{
	int i;

	for (i = 0; i < p->s->nfuncs; i++)
		if (p->s->funcs[i].offset == off && !strcmp(p->s->funcs[i].path, p->path))
			return true;
	return false;
}

/*
 * A function of the file, by all its NAMES (aliases share an address:
 * glibc's write and __write): picked if a -f matches any of them, and
 * named by the first that matched.
 */
static int pick_func(const char *const *names, size_t nnames, uint64_t off, uint64_t size,
		     void *arg)
{
	struct pick *p = arg;
	const char *name = NULL;
	struct tfunc *f;
	size_t k;
	int i;

	for (i = 0; i < p->nspecs && !name; i++) {
		const char *lib = p->specs[i].lib;

		if (p->lib ? !lib || strcmp(lib, p->lib) : lib != NULL)
			continue;
		for (k = 0; k < nnames && !name; k++)
			if (!fnmatch(p->specs[i].glob, names[k], 0))
				name = names[k];
	}
	if (!name)
		return 0;
	i--;
	if (p->again && picked(p, off))
		return 0;
	if (p->go && p->main_bin && strpbrk(p->specs[i].glob, "*?[") && go_runtime(name)) {
		p->go_left++;
		return 0;
	}
	if (p->list) {
		printf("%s %s 0x%lx\n", p->path, name, (unsigned long)off);
		return 0;
	}
	if ((size_t)p->s->nfuncs == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 256;
		f = realloc(p->s->funcs, p->cap * sizeof(*f));
		if (!f)
			return -ENOMEM;
		p->s->funcs = f;
	}
	f = &p->s->funcs[p->s->nfuncs++];
	f->name = strdup(name);
	f->path = strdup(p->path);
	f->main_bin = p->main_bin;
	f->offset = off;
	f->size = size;
	f->uhook = 0;
	f->uhook_trap = false;
	/*
	 * Entered by a jump, not a call: the ELF entry point. Or in a Go
	 * program, whose runtime copies goroutine stacks and walks them by
	 * their return addresses (a trampoline's or a thunk's is "unknown pc",
	 * fatal), and unwinds panics its own way.
	 */
	f->no_return = (p->has_entry && off == p->entry) || (p->go && p->main_bin) ||
		       unwinder_inside(name);
	if (p->go && p->main_bin) {
		unsigned int skip = go_stack_check(p->fd, off);

		if (skip < size) {
			f->offset += skip;
			f->size -= skip;
		}
	}
	f->entry = entry_class(p->fd, f->offset);
	f->unprobed = false;
	return f->name && f->path ? 0 : -ENOMEM;
}

/* The executable the command will run, for --list-functions before it runs. */
static int which(const char *cmd, char *out)
{
	char *path = getenv("PATH"), *dup, *dir, *save = NULL;

	if (strchr(cmd, '/'))
		return realpath(cmd, out) ? 0 : -ENOENT;
	dup = strdup(path ? path : "/usr/local/bin:/usr/bin:/bin");
	for (dir = strtok_r(dup, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		char cand[PATH_MAX];

		snprintf(cand, sizeof(cand), "%s/%s", dir, cmd);
		if (!access(cand, X_OK) && realpath(cand, out)) {
			free(dup);
			return 0;
		}
	}
	free(dup);
	return -ENOENT;
}

/* The files pick_functions() read: a file named again is read once more, its functions picked once. */
struct picked_file {
	dev_t dev;
	ino_t ino;
	char *path;		/* as the first -f found it: the functions' path */
	bool main_bin;
};

/*
 * The pass of @p over @path, @n files read before it in @files. A file
 * read already (the program itself, "-f prog:main.*": a Go program's
 * functions then entries only, as the program's; or a library under two
 * names, "c:" and "libc:") has its functions picked once: until
 * 2026-12-04 each took a probe of both kinds and came twice in the report.
 */
static int pick_file(struct pick *p, const char *path, struct picked_file *files, int *n)
{
	struct stat st;
	const char *why;
	int k, err;

	p->again = false;
	p->path = path;
	if (!stat(path, &st)) {
		for (k = 0; k < *n && !p->again; k++)
			if (files[k].dev == st.st_dev && files[k].ino == st.st_ino) {
				p->again = true;
				p->path = files[k].path;
				p->main_bin = files[k].main_bin;
			}
		if (!p->again) {
			files[*n].path = strdup(path);
			if (!files[*n].path) {
				fprintf(stderr, "xprobectl: out of memory\n");
				return -ENOMEM;
			}
			files[*n].dev = st.st_dev;
			files[*n].ino = st.st_ino;
			files[*n].main_bin = p->main_bin;
			p->path = files[(*n)++].path;
		}
	}
	if (p->main_bin && !p->lib)
		p->go = elf_has_section(path, ".go.buildinfo");
	p->has_entry = !elf_entry_offset(path, &p->entry);	/* a library's: ld.so's _start */
	p->fd = open(path, O_RDONLY | O_CLOEXEC);
	err = elf_funcs_aliases(path, pick_func, p, &why);
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
	if (err)
		fprintf(stderr, "xprobectl: cannot read the symbols of %s: %s\n", path,
			err == -ENOMEM ? "out of memory" : why);
	return err;
}

/* Resolve every -f into s->funcs (or print them with LIST). */
static int pick_functions(struct tsession *s, const char *exe, const struct spec *specs,
			  int nspecs, bool list)
{
	struct pick p = { .s = s, .specs = specs, .nspecs = nspecs, .list = list, .fd = -1 };
	struct picked_file *files = calloc(nspecs + 1, sizeof(*files));
	char searched[2 * PATH_MAX] = "";
	int i, j, nfiles = 0, err;

	if (!files) {
		fprintf(stderr, "xprobectl: out of memory\n");
		return -1;
	}
	p.main_bin = true;
	err = pick_file(&p, exe, files, &nfiles);
	if (err)
		goto out;
	if (p.go && !list)
		fprintf(stderr, "xprobectl: %s is a Go program: its functions are traced at their "
			"entries only (calls, no times: Go moves and walks its stacks by their return "
			"addresses, which a return probe rewrites)%s\n", exe,
			p.go_left ? "; the runtime's functions are left out of patterns (name one "
			"exactly to trace it)" : "");
	for (i = 0; i < nspecs && specs[i].lib; i++)
		;
	if (i < nspecs)		/* a -f without a library: the program's own */
		snprintf(searched, sizeof(searched), "%s", exe);
	for (i = 0; i < nspecs; i++) {
		char lib[PATH_MAX];
		size_t n;

		if (!specs[i].lib)
			continue;
		for (j = 0; j < i; j++)		/* each library once */
			if (specs[j].lib && !strcmp(specs[j].lib, specs[i].lib))
				break;
		if (j < i)
			continue;
		if (find_library(s->pid, specs[i].lib, lib, sizeof(lib))) {
			fprintf(stderr, "xprobectl: library '%s' is not mapped by pid %d nor found "
				"in the library directories: give its path (-f /path/lib.so:GLOB)\n",
				specs[i].lib, s->pid);
			err = -ENOENT;
			goto out;
		}
		n = strlen(searched);
		snprintf(searched + n, sizeof(searched) - n, "%s%s", n ? ", " : "", lib);
		p.lib = specs[i].lib;
		p.main_bin = false;
		err = pick_file(&p, lib, files, &nfiles);
		if (err)
			goto out;
	}
	err = 0;
	if (!list && !s->nfuncs) {
		fprintf(stderr, "xprobectl: no function matches -f in %s (see --list-functions)\n",
			searched);
		err = -ENOENT;
	}
out:
	for (i = 0; i < nfiles; i++)
		free(files[i].path);
	free(files);
	return err ? -1 : 0;
}

/* ---- the kernel side: a view with three hooks ----------------------------- */

/* Slow syscalls (--latency) name the traced function on top of the thread's stack. */
static const char *func_name(int idx, void *arg)
{
	struct tsession *s = arg;

	return idx < s->nfuncs ? s->funcs[idx].name : NULL;
}

static const struct hook_want hook_wants[] = {
	/*
	 * With XPROBES_F_RECORDS they hand the user hooks' records over first
	 * (fn_records), a call within one hand-over as one record (XPROBES_F_CALLS).
	 */
	{ { "switch_mm_irqs_off" }, HOOK_SWITCH_OUT, XPROBES_F_RECORDS | XPROBES_F_CALLS },
	{ { "finish_task_switch.isra.0", "finish_task_switch" }, HOOK_SWITCH_IN,
	  XPROBES_F_ANY_CONTEXT | XPROBES_F_RECORDS | XPROBES_F_CALLS },
	{ { "do_exit" }, HOOK_EXIT, XPROBES_F_RECORDS | XPROBES_F_CALLS },	/* and a thread's last ones */
	/* -W: a wakeup by one of ours, after its records (its current function) */
	{ { "try_to_wake_up" }, HOOK_WAKE, XPROBES_F_RECORDS | XPROBES_F_CALLS },
	/* --children: a new task of ours, a new process among them, before it runs */
	{ { "wake_up_new_task" }, HOOK_FORK, 0 },
};

/*
 * Give PID a kernel view hooked on the scheduler paths; -1: fall back
 * (s->mode_note says why). With --children the view follows its forks
 * (lifecycle.c): a child runs the same hooks.
 */
static int views_setup(struct tsession *s, struct xp_nl *nl)
{
	struct hook_want want[sizeof(hook_wants) / sizeof(hook_wants[0])];
	int i, n = 0;

	/*
	 * The process sums its calls itself where it can (XPROBES_F_SUMS):
	 * XPROBECTL_NO_SUMS=1 hands every call over as before (make bench
	 * compares the two).
	 */
	s->sums = !getenv("XPROBECTL_NO_SUMS");
	for (i = 0; i < (int)(sizeof(hook_wants) / sizeof(hook_wants[0])); i++)
		if ((hook_wants[i].kind != HOOK_WAKE || s->wakers) &&
		    (hook_wants[i].kind != HOOK_FORK || s->children)) {
			want[n] = hook_wants[i];
			if (s->sums && (want[n].flags & XPROBES_F_CALLS))
				want[n].flags |= XPROBES_F_SUMS;
			n++;
		}
	if (view_hooks_setup(nl, s->pid, s->children ? 0 : XPROBES_F_NO_FOLLOW_FORK, want, n,
			     s->hook_ids, s->mode_note, sizeof(s->mode_note)))
		return -1;
	for (i = 0; i < n; i++) {
		s->hook_kinds[i] = want[i].kind;
		s->hook_want[i] = want[i];
	}
	s->nhooks = n;
	s->nl = nl;
	return 0;
}

/*
 * Records mode with uprobes beside the user hooks (functions without one,
 * unwinders): a uprobe's and a uretprobe's programs see a call at once,
 * while the user hooks' records wait for the thread's next switch, and
 * the two streams would nest wrongly (a uprobe'd caller's frame above its
 * user-hooked callees': both calls lost). The module hands the thread's
 * records over first where the uprobe handlers run, in the view only:
 * uprobe_notify_resume (a uprobe, and before 6.11 a uretprobe) and
 * uprobe_handle_trampoline (6.11 on: a uretprobe, by system call). The
 * hooks run no program, and their ids stay out of hook_ids/hook_kinds
 * (trace_hook_prog() would give them one). Without them the figures may
 * lose calls, said.
 */
static const struct hook_want flush_wants[] = {
	{ { "uprobe_notify_resume" }, HOOK_UPROBE, XPROBES_F_RECORDS | XPROBES_F_CALLS },
	/* 6.11 on (before, uretprobes go through the first) */
	{ { "uprobe_handle_trampoline" }, HOOK_UPROBE, XPROBES_F_RECORDS | XPROBES_F_CALLS },
};

static void uprobe_flush_setup(struct tsession *s)
{
	int i, n = kernel_at_least(6, 11) ? 2 : 1;
	char note[256];
	uint32_t id;

	for (i = 0; i < n; i++) {
		struct hook_want w = flush_wants[i];

		if (s->sums)
			w.flags |= XPROBES_F_SUMS;	/* as the view's other hand-over hooks */
		if (hooks_add(s->nl, s->pid, &w, 1, &id, note, sizeof(note)))
			fprintf(stderr, "xprobectl: %s; calls through uprobes may be lost where "
				"they nest with user-hooked ones (--events does not need it)\n",
				note);
	}
}

/* ---- the user side: a uprobe and a uretprobe per function ------------------ */

static void raise_nofile(int want)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_NOFILE, &r))
		return;
	if (r.rlim_cur >= (rlim_t)want)
		return;
	r.rlim_cur = r.rlim_max;
	if (r.rlim_max < (rlim_t)want && geteuid() == 0)
		r.rlim_cur = r.rlim_max = want;
	setrlimit(RLIMIT_NOFILE, &r);
}

/*
 * One uprobe_multi link per file and direction (kernel 6.6+): two file
 * descriptors in all, and one RCU grace period on detach instead of one per
 * probe. libbpf 1.1 predates it, hence the raw BPF_LINK_CREATE; the layout
 * is union bpf_attr's link_create.uprobe_multi.
 */
struct link_create_umulti {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, umulti_flags, pid, pad;
	uint8_t zero[64];	/* the rest of union bpf_attr: must be 0 */
};
#define XP_BPF_LINK_CREATE		28
#define XP_BPF_TRACE_UPROBE_MULTI	48
#define XP_BPF_F_UPROBE_MULTI_RETURN	1

static int umulti_link(int prog_fd, const char *path, const uint64_t *offs,
		       const uint64_t *cookies, uint32_t cnt, bool ret, pid_t pid)
{
	struct link_create_umulti a;

	memset(&a, 0, sizeof(a));
	a.prog_fd = prog_fd;
	a.attach_type = XP_BPF_TRACE_UPROBE_MULTI;
	a.path = (uintptr_t)path;
	a.offsets = (uintptr_t)offs;
	a.cookies = (uintptr_t)cookies;
	a.cnt = cnt;
	a.umulti_flags = ret ? XP_BPF_F_UPROBE_MULTI_RETURN : 0;
	a.pid = pid;
	return syscall(__NR_bpf, XP_BPF_LINK_CREATE, &a, sizeof(a));
}

/*
 * Does this kernel have uprobe_multi links? Asked with a count over its
 * limit, which it refuses with E2BIG before looking at anything (6.6+);
 * a kernel without them (6.1) answers EINVAL, and nothing was attached.
 * Knowing it before the first probe spares detaching the unwinder's
 * probes to try again (a grace period each on 6.1).
 */
static bool umulti_works(int prog_fd)
{
	uint64_t off = 0;

	return umulti_link(prog_fd, "/", &off, NULL, 1u << 30, false, 0) < 0 && errno == E2BIG;
}

/*
 * The uprobe programs, ENTRY among them, were loaded for uprobe_multi: if
 * this kernel has no such links, they take single probes as loaded.
 */
static void umulti_check(struct tsession *s, struct bpf_program *entry)
{
	if (!s->multi || umulti_works(bpf_program__fd(entry)))
		return;
	if (s->verbose)
		fprintf(stderr, "xprobectl: uprobe_multi: this kernel has no such links; one probe "
			"per function instead\n");
	s->multi = false;
}

/* The uprobe programs, by uprog(): loaded when first asked for in views mode. */
enum uprog { UPROG_ENTRY, UPROG_RETURN, UPROG_UNWIND };
static struct bpf_program *uprog(struct tsession *s, enum uprog which);

/* Does a function take uprobes (no user hook, not left out)? */
static bool uprobes_wanted(const struct tsession *s)
{
	int i;

	for (i = 0; i < s->nfuncs; i++)
		if (!s->funcs[i].uhook && !s->funcs[i].unprobed)
			return true;
	return false;
}

static int linkset_add_fd(struct linkset *ls, int fd)
{
	int *n;

	if (ls->nfds == ls->capfds) {
		n = realloc(ls->fds, (ls->capfds ? 2 * ls->capfds : 8) * sizeof(*n));
		if (!n) {
			close(fd);
			return -ENOMEM;
		}
		ls->fds = n;
		ls->capfds = ls->capfds ? 2 * ls->capfds : 8;
	}
	ls->fds[ls->nfds++] = fd;
	return 0;
}

/*
 * From the end: a file's unwinder probes went in before its return probes
 * and leave after them (unwinder_files()). Each detach waits for grace
 * periods (about 0.1 s on the host), hence uprobe_multi links: a few per
 * file, never one per probe where the kernel has them.
 */
/* Back to NLINKS links and NFDS link fds: the newer ones detached. */
static void linkset_trim(struct linkset *ls, int nlinks, int nfds)
{
	while (ls->nfds > nfds)
		close(ls->fds[--ls->nfds]);
	while (ls->nlinks > nlinks)
		bpf_link__destroy(ls->links[--ls->nlinks]);
}

void linkset_free(struct linkset *ls)
{
	linkset_trim(ls, 0, 0);
	free(ls->fds);
	free(ls->links);
	memset(ls, 0, sizeof(*ls));
}

/* One file's functions on their way into uprobe_multi links. */
struct mfile {
	struct tsession *s;
	struct linkset *ls;
	const char *path;
	pid_t pid;
	uint64_t *offs, *cookies;
	int *fidx;		/* s->funcs index of each offset */
	bool quiet;
	int shown;		/* functions refused, said */
	int refusals;		/* links refused: each registered and unregistered probes */
};

/* Past this many refused links in one file, halving costs more than it finds. */
#define MULTI_REFUSALS_MAX	256

/* An error that is about the whole link (the process, a limit), not one function. */
static bool link_wide(int err)
{
	return err == -ESRCH || err == -ENOMEM || err == -EMFILE || err == -ENFILE ||
	       err == -EPERM || err == -EACCES || err == -E2BIG || err == -EBADF ||
	       err == -ENOENT;
}

/* F refused by the kernel (ERR): left out, and said while SHOWN is under 10. */
static void probe_refused(struct tsession *s, struct tfunc *f, int err, int *shown, bool quiet)
{
	f->unprobed = true;
	s->nfailed++;
	if (quiet || (*shown)++ >= 10)
		return;
	if (err == -524)	/* ENOTSUPP, the kernel's own */
		fprintf(stderr, "xprobectl: cannot probe %s in %s: the kernel's uprobes cannot "
			"step its first instruction (error 524); left out\n", f->name, f->path);
	else
		fprintf(stderr, "xprobectl: cannot probe %s in %s: %s; left out\n", f->name,
			f->path, strerror(-err));
}

/*
 * Offsets [LO, HI) of M as one link (RET: the return link). Where the
 * kernel refuses it for one function (an instruction uprobes cannot step,
 * a byte another hook covers), the range is halved until each refused
 * function is alone: it is left out, saying why, and the others keep a
 * few links (about log2 of the count per refused function), never one
 * probe each, whose detach costs a grace period apiece.
 */
static int multi_range(struct mfile *m, int lo, int hi, bool ret)
{
	struct bpf_program *prog;
	int fd, err, mid;

	if (lo >= hi || stop_req)	/* Ctrl-C: the report of what is in */
		return 0;
	prog = uprog(m->s, ret ? UPROG_RETURN : UPROG_ENTRY);	/* loaded: attach_probes() */
	fd = umulti_link(bpf_program__fd(prog), m->path, m->offs + lo, m->cookies + lo, hi - lo,
			 ret, m->pid);
	if (fd >= 0)
		return linkset_add_fd(m->ls, fd);
	err = -errno;
	if (link_wide(err) || ++m->refusals > MULTI_REFUSALS_MAX)
		return err;
	if (hi - lo == 1) {
		probe_refused(m->s, &m->s->funcs[m->fidx[lo]], err, &m->shown, m->quiet);
		return 0;
	}
	mid = lo + (hi - lo) / 2;
	return multi_range(m, lo, mid, ret) ?: multi_range(m, mid, hi, ret);
}

/*
 * 0 (functions refused are left out, named); -EAGAIN: the caller tries one
 * probe per function (a kernel without uprobe_multi, or a refusal of a
 * whole file's link).
 */
static int attach_multi(struct tsession *s, pid_t pid, struct linkset *ls, bool quiet)
{
	struct mfile m = { .s = s, .ls = ls, .pid = pid, .quiet = quiet };
	int i = 0, j, k, n, nret, end, err = 0;

	m.offs = calloc(s->nfuncs, sizeof(*m.offs));
	m.cookies = calloc(s->nfuncs, sizeof(*m.cookies));
	m.fidx = calloc(s->nfuncs, sizeof(*m.fidx));
	if (!m.offs || !m.cookies || !m.fidx) {
		err = -EAGAIN;
		goto out;
	}
	while (i < s->nfuncs && !err) {
		/*
		 * The functions of one file that have no user hook, those that
		 * take a return probe first (the uretprobe link takes the first
		 * nret, the uprobe link all n that it did not refuse).
		 */
		n = 0;
		nret = 0;
		for (k = 0; k < 2; k++) {
			if (k)
				nret = n;
			for (j = i; j < s->nfuncs && !strcmp(s->funcs[j].path, s->funcs[i].path);
			     j++) {
				if (s->funcs[j].uhook || s->funcs[j].unprobed ||
				    s->funcs[j].no_return != k)
					continue;
				m.offs[n] = s->funcs[j].offset;
				m.fidx[n] = j;
				m.cookies[n++] = j | (uint64_t)pid << 32 |	/* cookie_ours() */
						 (k ? TRACE_ENTRY_ONLY : 0);
			}
			end = j;
		}
		m.path = s->funcs[i].path;
		m.refusals = 0;
		if (n >= 100 && !quiet)
			fprintf(stderr, "xprobectl: attaching %d functions in %s\n", n, m.path);
		/*
		 * The return link first: a call whose entry a probe sees has
		 * its return caught too, however the process's calls and the
		 * attach interleave (entries first left the calls between
		 * the two links abandoned: 53-cgroup's joiner on 6.1).
		 */
		err = multi_range(&m, 0, nret, true);
		/* the entry link: those of the first nret the return link took, and the rest */
		for (j = k = 0; !err && j < n; j++) {
			if (s->funcs[m.fidx[j]].unprobed)
				continue;
			m.offs[k] = m.offs[j];
			m.cookies[k] = m.cookies[j];
			m.fidx[k++] = m.fidx[j];
		}
		if (!err)
			err = multi_range(&m, 0, k, false);
		if (err) {
			if (verbose)
				fprintf(stderr, "xprobectl: uprobe_multi on %s: %s; one probe per "
					"function instead\n", m.path, strerror(-err));
			err = -EAGAIN;
		}
		i = end;
	}
	if (!err && m.shown > 10)
		fprintf(stderr, "xprobectl: ... %d more could not be probed\n", m.shown - 10);
out:
	free(m.offs);
	free(m.cookies);
	free(m.fidx);
	return err;
}

static int attach_probes(struct tsession *s, pid_t pid, struct linkset *ls, bool quiet)
{
	int i, ok = 0, shown = 0, step = s->nfuncs / 20 + 1, first = 0;
	struct bpf_link **links;
	bool progress = s->nfuncs >= 100 && !quiet;

	/* the programs first: their load says whether uprobe_multi links work */
	if (uprobes_wanted(s) && !uprog(s, UPROG_ENTRY))
		return -1;	/* said */
	if (s->multi)
		return attach_multi(s, pid, ls, quiet);
	/* libbpf holds a perf event and a BPF link fd per probe: 4 per function */
	raise_nofile(4 * s->nfuncs + 256);
	links = realloc(ls->links, (ls->nlinks + 2 * s->nfuncs) * sizeof(*links));
	if (!links)
		return -ENOMEM;
	ls->links = links;
	for (i = 0; i < s->nfuncs; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = i | (uint64_t)pid << 32 |
			    (s->funcs[i].no_return ? TRACE_ENTRY_ONLY : 0));
		struct tfunc *f = &s->funcs[i];
		struct bpf_link *in = NULL, *out = NULL;
		int err = 0;

		if (f->uhook) {
			ok++;
			continue;
		}
		if (f->unprobed)
			continue;
		if (stop_req)	/* Ctrl-C while attaching: the report of what is in */
			break;
		/* the return first, as in attach_multi() */
		if (!f->no_return) {
			o.retprobe = true;
			out = bpf_program__attach_uprobe_opts(uprog(s, UPROG_RETURN), pid,
							      f->path, f->offset, &o);
			err = libbpf_get_error(out);
			o.retprobe = false;
		}
		if (!err) {
			in = bpf_program__attach_uprobe_opts(uprog(s, UPROG_ENTRY), pid, f->path,
							     f->offset, &o);
			err = libbpf_get_error(in);
			if (err)
				bpf_link__destroy(out);
		}
		if (err) {
			if (quiet) {
				if (err == -EMFILE || err == -ENFILE)
					return -EMFILE;
				if (!first)
					first = err;	/* what the caller says if none goes in */
				continue;
			}
			if (err == -EMFILE || err == -ENFILE) {
				s->nfailed++;
				fprintf(stderr, "xprobectl: out of file descriptors after %d "
					"functions: trace fewer (-f)\n", ok);
				return -1;
			}
			probe_refused(s, f, err, &shown, false);
			continue;
		}
		ls->links[ls->nlinks++] = in;
		if (out)
			ls->links[ls->nlinks++] = out;
		ok++;
		if (progress && (i % step == 0 || i + 1 == s->nfuncs))
			fprintf(stderr, "\rxprobectl: attaching %d/%d functions", i + 1, s->nfuncs);
	}
	if (progress)
		fprintf(stderr, "\n");
	if (shown > 10)
		fprintf(stderr, "xprobectl: ... %d more could not be probed\n", shown - 10);
	if (!ok) {
		if (!quiet)
			fprintf(stderr, "xprobectl: no function could be probed\n");
		return quiet && first < 0 ? first : -1;
	}
	return 0;
}

static int linkset_add_link(struct linkset *ls, struct bpf_link *l)
{
	struct bpf_link **n = realloc(ls->links, (ls->nlinks + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	ls->links = n;
	ls->links[ls->nlinks++] = l;
	return 0;
}

/*
 * Does the program at PATH unwind: the unwinder linked in, libgcc_s or
 * libstdc++ (C++, Rust) needed or mapped, or glibc's backtrace(),
 * pthread_cancel() or pthread_exit() called (which load libgcc_s then)?
 */
bool unwinds(const char *path, pid_t pid)
{
	char lib[PATH_MAX];
	const char *why;
	bool yes = false;

	static const char *const glibc_unwinds[] = { "backtrace", "pthread_cancel", "pthread_exit" };

	if (!find_mapped_library(pid, "libgcc_s", lib, sizeof(lib)) ||
	    elf_needs(path, "libgcc_s.") || elf_needs(path, "libstdc++.") ||
	    elf_imports(path, glibc_unwinds, sizeof(glibc_unwinds) / sizeof(glibc_unwinds[0])))
		return true;
	elf_funcs(path, is_unwinder, &yes, &why);
	return yes;
}

/*
 * May a uprobe program call bpf_probe_write_user()? Not on a kernel locked
 * down (integrity, as under Secure Boot), whose verifier says "cannot use
 * helper", which libbpf_probe_bpf_helper() takes for yes. So load one:
 *	*(u64 *)(r10 - 8) = 0; r1 = 0; r2 = r10 - 8; r3 = 8;
 *	call bpf_probe_write_user; r0 = 0; exit
 */
static bool probe_write_user_ok(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ST | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_10, .off = -8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_2, .imm = -8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_3, .imm = 8 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_probe_write_user },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), NULL);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* Add PATH to PATHS (N of them, at most MAX) unless it is there. */
static void path_add(const char **paths, unsigned int *n, unsigned int max, const char *path)
{
	unsigned int i;

	for (i = 0; i < *n; i++)
		if (!strcmp(paths[i], path))
			return;
	if (*n < max)
		paths[(*n)++] = path;
}

/*
 * Return probes rewrite return addresses, which an unwinder reads: when
 * any function takes a uretprobe, the unwinder's entry points take
 * unwind_start (trace.bpf.c) in the program, in the files of the traced
 * functions and in libgcc_s. Before the return probes, so that they are
 * detached after them (linkset_free() goes from the end).
 */
/*
 * The files whose unwinder entry points take a probe (or, with UHOOKS, a
 * user hook): those of the functions traced with their return through
 * user hooks (UHOOKS) or uprobes, the program, libgcc_s (only as PID maps
 * it, for a hook) and libc. False when no such function is traced.
 */
bool unwinder_files(struct tsession *s, pid_t pid, bool uhooks, struct unwinder_files *u)
{
	unsigned int i;
	bool any = false;

	u->n = 0;
	for (i = 0; i < (unsigned int)s->nfuncs; i++) {
		struct tfunc *f = &s->funcs[i];

		if (f->no_return || (uhooks ? !f->uhook : f->uhook || f->unprobed))
			continue;
		any = true;
		path_add(u->path, &u->n, 6, f->path);
	}
	if (!any || pid_exe(pid, u->exe))
		return false;
	path_add(u->path, &u->n, 9, u->exe);
	if (!(uhooks ? find_mapped_library(pid, "libgcc_s", u->lib, sizeof(u->lib)) :
		       find_library(pid, "libgcc_s", u->lib, sizeof(u->lib))))
		path_add(u->path, &u->n, 9, u->lib);
	/* glibc's backtrace() and cancellation: libgcc_s may come later */
	if (!find_mapped_library(pid, "libc", u->libc, sizeof(u->libc)))
		path_add(u->path, &u->n, 9, u->libc);
	return true;
}

struct unw_offs {
	uint64_t off[sizeof(unwinders) / sizeof(unwinders[0])];
	uint32_t n;
};

static int unwinder_off(const char *const *names, size_t n, uint64_t off, uint64_t size,
			void *arg)
{
	struct unw_offs *u = arg;
	size_t k;

	for (k = 0; k < n; k++)
		if (unwinder_name(names[k]) && u->n < sizeof(u->off) / sizeof(u->off[0])) {
			u->off[u->n++] = off;
			break;
		}
	return 0;
}

/*
 * The unwinder's entry points in PATH as one uprobe_multi link (a probe
 * each costs a grace period to detach, one after another), else one link
 * each (the programs, loaded for uprobe_multi, take no perf-event probe on
 * 6.6+): how many are in.
 */
static int unwinders_multi(struct tsession *s, pid_t pid, const char *path, struct linkset *ls)
{
	struct unw_offs u = { .n = 0 };
	int prog, fd, n = 0;
	const char *why;
	uint32_t i;

	if (elf_funcs_aliases(path, unwinder_off, &u, &why) < 0 || !u.n)
		return 0;
	prog = bpf_program__fd(uprog(s, UPROG_UNWIND));	/* loaded: attach_unwinders() */
	fd = umulti_link(prog, path, u.off, NULL, u.n, false, pid);
	if (fd >= 0)
		return linkset_add_fd(ls, fd) ? 0 : (int)u.n;
	for (i = 0; i < u.n; i++) {
		fd = umulti_link(prog, path, &u.off[i], NULL, 1, false, pid);
		if (fd >= 0 && !linkset_add_fd(ls, fd))
			n++;
	}
	return n;
}

static void attach_unwinders(struct tsession *s, pid_t pid, struct linkset *ls)
{
	struct unwinder_files u;
	unsigned int i, j, attached = 0;

	for (i = 0; i < (unsigned int)s->nfuncs; i++)
		if (!s->funcs[i].uhook && unwinder_name(s->funcs[i].name))
			s->funcs[i].no_return = true;
	if (!unwinder_files(s, pid, false, &u))
		return;
	if (s->nunwinders) {
		/*
		 * The module's unwinder hooks are on the entry points (tuhook.c),
		 * and fn_entry_uh (with records, unwind_uh) gives these
		 * uretprobes' slots back.
		 */
		if (!s->unwind_fix && !s->unwind_said && unwinds(u.exe, pid))
			fprintf(stderr, "xprobectl: this kernel does not let BPF write a process's "
				"memory (locked down, as under Secure Boot): a C++ exception, Rust "
				"panic or backtrace() through a function traced by uprobes (no user "
				"hook) may end the program; name functions no exception crosses (-f)\n");
		s->unwind_said = true;
		return;
	}
	if (!s->unwind_fix) {
		if (!s->unwind_said && unwinds(u.exe, pid))
			fprintf(stderr, "xprobectl: this kernel does not let BPF write a process's "
				"memory (bpf_probe_write_user: locked down, as under Secure Boot, or "
				"no CAP_SYS_ADMIN): a C++ exception, Rust panic or thread cancellation "
				"through a function traced with its return may end the program, and a "
				"backtrace() stop there; trace with views (the module), or name "
				"functions no exception crosses (-f)\n");
		s->unwind_said = true;
		return;
	}
	/* the program first: its load says whether uprobe_multi links work */
	if (u.n && !uprog(s, UPROG_UNWIND))
		return;
	for (j = 0; j < u.n; j++) {
		if (s->multi) {
			attached += unwinders_multi(s, pid, u.path[j], ls);
			continue;
		}
		for (i = 0; i < sizeof(unwinders) / sizeof(unwinders[0]); i++) {
			LIBBPF_OPTS(bpf_uprobe_opts, o, .func_name = unwinders[i]);
			struct bpf_link *l;

			l = bpf_program__attach_uprobe_opts(uprog(s, UPROG_UNWIND), pid,
							    u.path[j], 0, &o);
			if (libbpf_get_error(l))
				continue;
			if (linkset_add_link(ls, l))
				bpf_link__destroy(l);
			else
				attached++;
		}
	}
	if (!attached && !s->unwind_said && unwinds(u.exe, pid))
		fprintf(stderr, "xprobectl: found no unwinder entry point to watch in %s or "
			"libgcc_s (stripped, or another unwinder): a C++ exception, Rust panic or "
			"backtrace() through a function traced with its return may end it\n", u.exe);
	s->unwind_said = true;
}

/*
 * The unwinder's entry points first (a uretprobe must never be live
 * without them), then the functions. -EAGAIN: no uprobe_multi here.
 */
static int attach_uprobes(struct tsession *s, pid_t pid, struct linkset *ls, bool quiet)
{
	int links = ls->nlinks, fds = ls->nfds, err;

	attach_unwinders(s, pid, ls);
	err = attach_probes(s, pid, ls, quiet);
	if (err)
		linkset_trim(ls, links, fds);
	return err;
}

/*
 * Functions a uprobe would run wrongly, or that uprobes refuse, are left
 * out, saying which. The kernel's uprobes decode a VEX- or EVEX-encoded
 * instruction's opcode as if it were a one-byte one: 62 e2 7d 28 7a ce
 * (vpbroadcastb %esi,%ymm17, glibc's __strchrnul_evex) is taken for jp and
 * emulated as a branch, and the function computes a wrong result (others
 * are refused). One refused (error 524) would fail the whole uprobe_multi
 * link of its file, and one probe per function then costs a grace period
 * each to detach (issue 40: 26 s to end a trace of _IO_* and
 * pthread_spin_lock). Functions with user hooks run their instructions in
 * the trampoline.
 */
static void leave_out_unsafe(struct tsession *s)
{
	static const char *const why[] = {
		[ENTRY_VEX] = "is VEX- or EVEX-encoded (AVX): the kernel's uprobes can mistake "
			      "it for a branch and run it wrongly",
		[ENTRY_PREFIX] = "has a lock or segment prefix, which the kernel's uprobes "
				 "cannot step",
	};
	const char *first[3] = { NULL };
	int i, c, n[3] = { 0 };

	for (i = 0; i < s->nfuncs; i++) {
		struct tfunc *f = &s->funcs[i];

		if (f->uhook || f->entry == ENTRY_OK)
			continue;
		f->unprobed = true;
		s->nfailed++;
		if (!n[f->entry]++)
			first[f->entry] = f->name;
	}
	for (c = ENTRY_VEX; c <= ENTRY_PREFIX; c++)
		if (n[c])
			fprintf(stderr, "xprobectl: not probing %d function%s whose first "
				"instruction %s (%s%s)\n", n[c], n[c] == 1 ? "" : "s", why[c],
				first[c], n[c] > 1 ? ", ..." : "");
}

/*
 * The module took every user hook of the target out (WHY: it installs a
 * seccomp filter, which may kill it for the hooks' system calls): the
 * functions they traced go on with uprobes and uretprobes, which enter
 * the kernel by a trap (and on 6.11+ by the uretprobe system call, which
 * seccomp lets through). Calls in flight then, and those made until the
 * probes are in, are not seen.
 */
static void uhooks_to_uprobes(struct tsession *s, const char *why, uint32_t flags)
{
	uint32_t *had = calloc(s->nfuncs, sizeof(*had));
	bool entries = flags & XPROBES_GONE_NO_URETPROBES;
	int i, n = 0, err, links, fds;

	if (!had)
		return;
	for (i = 0; i < s->nfuncs; i++) {
		had[i] = s->funcs[i].uhook;
		n += !!had[i];
		/* only those: the others have their uprobes already */
		s->funcs[i].uhook = !had[i];
		/* a uretprobe's system call would be a SIGSYS: their calls only */
		if (had[i] && entries)
			s->funcs[i].no_return = true;
	}
	s->nunwinders = 0;	/* gone too: uprobes on the unwinder's entry points instead */
	leave_out_unsafe(s);	/* their instructions ran in trampolines until now */
	links = s->ls.nlinks;
	fds = s->ls.nfds;
	/*
	 * The programs were loaded for uprobe_multi where the kernel has it
	 * (and 6.1, which has not, was known at the start, or at their load
	 * if that is now: uprog()): no falling back
	 * to one perf-event probe per function here, which 6.6+ refuses for
	 * such programs. (Once this tried the multi link on 6.1 first, then
	 * detached the unwinder's probes to attach them again, a grace period
	 * each: selftest 49's process had exited by then, and every attach
	 * failed with ESRCH.)
	 */
	if (n)
		attach_unwinders(s, s->pid, &s->ls);
	err = n ? attach_probes(s, s->pid, &s->ls, false) : 0;
	if (err)
		linkset_trim(&s->ls, links, fds);
	for (i = 0; i < s->nfuncs; i++) {
		s->funcs[i].uhook = 0;
		s->funcs[i].uhook_trap = false;
	}
	if (err)
		fprintf(stderr, "xprobectl: pid %d: %s, and the module took out its %d user "
			"hook%s; uprobes could not take over (%s): those functions' figures stop "
			"here\n", (int)s->pid, why, n, n == 1 ? "" : "s",
			err == -EAGAIN ? "the kernel refused their uprobe_multi link; -v says why" :
			err < -1 ? strerror(-err) : "the line above says why");
	else
		fprintf(stderr, "xprobectl: pid %d: %s, and the module took out its %d user "
			"hook%s (their system calls would have killed it): those functions go on "
			"with uprobes%s; calls in between are not counted\n", (int)s->pid, why, n,
			n == 1 ? "" : "s", entries ? TRACE_CALLS_ONLY_WHY : "");
	free(had);
}

int trace_attach_pid(struct tsession *s, pid_t pid, struct linkset *ls, bool quiet)
{
	return attach_uprobes(s, pid, ls, quiet);
}

/* ---- the target ----------------------------------------------------------- */

/*
 * The process is gone: how, from STATUS (waitpid) if it was xprobectl's
 * child, else from what the BPF side saw its last thread exit with.
 */
static void target_ended(struct tsession *s, bool child, int status)
{
	if (s->cg) {
		s->end = TEND_RUNNING;	/* a cgroup's processes come and go */
		return;
	}
	if (!child) {
		status = s->skel ? s->skel->data->target_status : -1;
		if (status < 0) {
			s->end = TEND_GONE;	/* its exit was not seen */
			return;
		}
	}
	if (WIFSIGNALED(status)) {
		s->end = TEND_KILLED;
		s->end_code = WTERMSIG(status);
	} else {
		s->end = TEND_EXITED;
		s->end_code = WEXITSTATUS(status);
	}
}

/*
 * Many probes one per function (a kernel without uprobe_multi: 2 grace
 * periods a function, one after another under the kernel's event_mutex:
 * 8.7 s for 39 functions on the host, minutes for thousands): the report
 * is out and the view gone, so their detach goes on in a child of ours,
 * away from the terminal, and xprobectl ends now. The probes stay until it
 * has done; their programs still run meanwhile, on the target's hits
 * only. True in the caller, which exits; false to detach here (few
 * probes, or no fork).
 */
static bool detach_in_background(struct tsession *s)
{
	int i, n = s->ls.nlinks + s->ls.nfds, fd;
	pid_t pid;

	for (i = 0; i < s->nprocs; i++)
		n += s->procs[i].ls.nlinks + s->procs[i].ls.nfds;
	if (n < 16)
		return false;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return false;
	if (pid) {
		fprintf(stderr, "xprobectl: detaching %d probe links in the background (pid %d): "
			"each takes a grace period\n", n, (int)pid);
		return true;
	}
	setsid();
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (i = 0; fd >= 0 && i < 3; i++)
		dup2(fd, i);	/* nothing holds the caller's pipe or terminal */
	if (fd > 2)
		close(fd);
	return false;
}

/* Fork COMMAND stopped at its exec: nothing of it has run yet. */
static pid_t spawn_stopped(char **argv)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (!pid) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execvp(argv[0], argv);
		fprintf(stderr, "xprobectl: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st)) {
		if (!(WIFEXITED(st) && WEXITSTATUS(st) == 127))
			fprintf(stderr, "xprobectl: '%s' did not start\n", argv[0]);
		return -1;
	}
	return pid;
}

/* The program's entry point and whether an interpreter (ld.so) runs first. */
static int auxv_entry(pid_t pid, unsigned long *entry, bool *interp)
{
	char path[64];
	unsigned long av[2];
	FILE *f;

	*entry = 0;
	*interp = false;
	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fread(av, sizeof(av), 1, f) == 1 && av[0] != AT_NULL) {
		if (av[0] == AT_ENTRY)
			*entry = av[1];
		else if (av[0] == AT_BASE)
			*interp = av[1] != 0;
	}
	fclose(f);
	return *entry ? 0 : -ENOENT;
}

/*
 * Let the dynamic loader of a command stopped at its exec run up to the
 * program's entry point, through a breakpoint there that is taken out again
 * before anything is hooked: by then its libraries are mapped and its main
 * thread has registered its rseq area (glibc 2.35+; user-hook records need
 * it), and still nothing of the program itself has run. A static program
 * registers rseq after its entry: it stays at its exec, and its user hooks
 * fire events.
 */
static int run_to_entry(pid_t pid, const char *cmd)
{
	struct user_regs_struct regs;
	unsigned long entry;
	long word;
	bool interp;
	int st, sig = 0;

	if (auxv_entry(pid, &entry, &interp) || !interp)
		return 0;
	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, pid, (void *)entry, NULL);
	if (errno || ptrace(PTRACE_POKETEXT, pid, (void *)entry, (void *)((word & ~0xffL) | 0xcc)))
		goto fail;
	for (;;) {
		if (ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig) || waitpid(pid, &st, 0) != pid)
			goto fail;
		if (!WIFSTOPPED(st)) {
			fprintf(stderr, "xprobectl: '%s' ended before reaching its entry point\n", cmd);
			return -1;
		}
		sig = WSTOPSIG(st);
		if (sig != SIGTRAP)
			continue;		/* the loader's own signal: deliver it */
		if (ptrace(PTRACE_GETREGS, pid, NULL, &regs))
			goto fail;
		if (regs.rip == entry + 1)
			break;
		sig = 0;
	}
	regs.rip = entry;
	if (ptrace(PTRACE_POKETEXT, pid, (void *)entry, (void *)word) ||
	    ptrace(PTRACE_SETREGS, pid, NULL, &regs))
		goto fail;
	return 0;
fail:
	fprintf(stderr, "xprobectl: cannot run '%s' to its entry point: %s\n", cmd, strerror(errno));
	return -1;
}

/* Where the stopped child PID is (its entry point), 0 if unknown. */
static uint64_t stopped_pc(pid_t pid)
{
	struct user_regs_struct regs;

	return ptrace(PTRACE_GETREGS, pid, NULL, &regs) ? 0 : regs.rip;
}

/* Open, load and attach the scheduler side; the uprobes come after. */
/* The program a hook of @kind runs itself (bpf/trace.bpf.c). */
struct bpf_program *trace_hook_prog(struct trace_bpf *skel, uint32_t kind)
{
	switch (kind) {
	case HOOK_SWITCH_OUT:
		return skel->progs.on_switch_out;
	case HOOK_SWITCH_IN:
		return skel->progs.on_switch_in;
	case HOOK_WAKE:
		return skel->progs.on_wake;
	case HOOK_FORK:
		return skel->progs.on_fork;
	default:
		return skel->progs.on_exit_hook;
	}
}

/* The programs on the user hooks' events, or on their records. */
static int attach_uh(struct tsession *s)
{
	struct bpf_link *in, *out = NULL;

	if (s->records) {
		in = bpf_program__attach(s->skel->progs.fn_records);
		if (libbpf_get_error(in)) {
			fprintf(stderr, "xprobectl: cannot attach to the user hooks' records: %s "
				"(--uprobes traces without them)\n", strerror(errno));
			return -1;
		}
		s->skel->links.fn_records = in;
		if (!s->nunwinders)
			return 0;
		/* the unwinder hooks' events */
		in = bpf_program__attach(s->skel->progs.unwind_uh);
		if (libbpf_get_error(in)) {
			fprintf(stderr, "xprobectl: cannot attach to the unwinder hooks' events: %s "
				"(--uprobes traces without them)\n", strerror(errno));
			return -1;
		}
		s->skel->links.unwind_uh = in;
		return 0;
	}

	in = bpf_program__attach(s->skel->progs.fn_entry_uh);
	if (!libbpf_get_error(in))
		out = bpf_program__attach(s->skel->progs.fn_return_uh);
	if (libbpf_get_error(in) || libbpf_get_error(out)) {
		fprintf(stderr, "xprobectl: cannot attach to the user hooks' events: %s "
			"(an older xprobes.ko? --uprobes traces without them)\n", strerror(errno));
		if (!libbpf_get_error(in))
			bpf_link__destroy(in);
		return -1;
	}
	s->skel->links.fn_entry_uh = in;
	s->skel->links.fn_return_uh = out;
	/* the events the module gives up, counted (a module without the tracepoint: not) */
	in = bpf_program__attach(s->skel->progs.uh_lost);
	if (libbpf_get_error(in))
		fprintf(stderr, "xprobectl: the user hooks' lost events will not be counted: %s "
			"(an older xprobes.ko?)\n", strerror(errno));
	else
		s->skel->links.uh_lost = in;
	return 0;
}

/*
 * -W in fallback mode: the timer, interrupt and softirq entries and exits,
 * program I and where its link goes. Exits first: an entry seen before its
 * exit's program is in would count forever.
 */
#define FB_IN_PROGS 8

static struct bpf_program *fb_in(struct trace_bpf *k, int i, struct bpf_link ***link)
{
	const struct { struct bpf_program *p; struct bpf_link **l; } t[FB_IN_PROGS] = {
		{ k->progs.fb_hrtimer_out, &k->links.fb_hrtimer_out },
		{ k->progs.fb_timer_out, &k->links.fb_timer_out },
		{ k->progs.fb_hardirq_out, &k->links.fb_hardirq_out },
		{ k->progs.fb_softirq_out, &k->links.fb_softirq_out },
		{ k->progs.fb_hrtimer_in, &k->links.fb_hrtimer_in },
		{ k->progs.fb_timer_in, &k->links.fb_timer_in },
		{ k->progs.fb_hardirq_in, &k->links.fb_hardirq_in },
		{ k->progs.fb_softirq_in, &k->links.fb_softirq_in },
	};

	if (link)
		*link = t[i].l;
	return t[i].p;
}

/*
 * XPROBECTL_VERIFIER_STATS=1: each loaded program's verifier statistics
 * (instructions processed, states, time) on stderr after the load, to
 * see where a trace's start goes (docs/experiments.md).
 */
#define VSTATS_BUF	4096

static void verifier_stats_on(struct bpf_object *obj)
{
	struct bpf_program *prog;

	if (!getenv("XPROBECTL_VERIFIER_STATS"))
		return;
	bpf_object__for_each_program(prog, obj) {
		char *buf;

		if (!bpf_program__autoload(prog))
			continue;
		buf = calloc(1, VSTATS_BUF);
		if (!buf)
			continue;
		bpf_program__set_log_level(prog, 4);	/* statistics only */
		bpf_program__set_log_buf(prog, buf, VSTATS_BUF);
	}
}

static void verifier_stats_print(struct bpf_object *obj)
{
	struct bpf_program *prog;
	size_t size;

	if (!getenv("XPROBECTL_VERIFIER_STATS"))
		return;
	bpf_object__for_each_program(prog, obj) {
		const char *buf = bpf_program__log_buf(prog, &size), *p;

		if (!buf || !bpf_program__autoload(prog))
			continue;
		fprintf(stderr, "xprobectl: verifier: %s:", bpf_program__name(prog));
		for (p = buf; *p; p++)
			fputc(*p == '\n' ? ' ' : *p, stderr);
		fputc('\n', stderr);
		free((void *)buf);	/* libbpf reads a program's log only at its load */
	}
}

static struct bpf_program *uprog_of(struct trace_bpf *k, enum uprog which)
{
	return which == UPROG_ENTRY ? k->progs.fn_entry :
	       which == UPROG_RETURN ? k->progs.fn_return : k->progs.unwind_start;
}

/* Which programs of K are the uprobe ones, loaded for uprobe_multi links. */
static void uprogs_multi(struct trace_bpf *k)
{
	bpf_program__set_expected_attach_type(k->progs.fn_entry, XP_BPF_TRACE_UPROBE_MULTI);
	bpf_program__set_expected_attach_type(k->progs.fn_return, XP_BPF_TRACE_UPROBE_MULTI);
	bpf_program__set_expected_attach_type(k->progs.unwind_start, XP_BPF_TRACE_UPROBE_MULTI);
}

/*
 * The object opened with its CO-RE relocations to be done against the
 * kernel's BTF cut to its types (corebtf.c: libbpf's scan of the whole, per
 * relocated struct, was 7% of attaching every function of Redis); the cut
 * is made once, at the first load, for every instance.
 */
static struct trace_bpf *open_skel(struct tsession *s)
{
	LIBBPF_OPTS(bpf_object_open_opts, o);

	o.btf_custom_path = core_btf_prepare(&s->cbtf);
	return trace_bpf__open_opts(&o);
}

/*
 * A second instance of the object, every program off and every map (the
 * .rodata, .bss and .data ones too) the session's own, so that what the
 * caller turns on in it counts into the same figures as if loaded with
 * the rest. WHAT names those programs in errors, said here. NULL if not.
 */
static struct trace_bpf *open_late(struct tsession *s, const char *what)
{
	struct bpf_program *p;
	struct trace_bpf *u;
	struct bpf_map *m;
	int err;

	u = open_skel(s);
	if (!u) {
		fprintf(stderr, "xprobectl: cannot open the BPF object: %s\n", strerror(errno));
		return NULL;
	}
	bpf_object__for_each_program(p, u->obj)
		bpf_program__set_autoload(p, false);
	bpf_object__for_each_map(m, u->obj) {
		struct bpf_map *ours = bpf_object__find_map_by_name(s->skel->obj,
								     bpf_map__name(m));

		err = ours ? bpf_map__reuse_fd(m, bpf_map__fd(ours)) : -ENOENT;
		if (err) {
			fprintf(stderr, "xprobectl: cannot share the map %s with %s: %s\n",
				bpf_map__name(m), what, strerror(-err));
			trace_bpf__destroy(u);
			errno = -err;
			return NULL;
		}
	}
	return u;
}

/* Load U, from open_late() with its programs chosen: 0 or -errno, not said. */
static int load_late(struct tsession *s, struct trace_bpf *u)
{
	int err;

	err = core_btf_fill(&s->cbtf, u->obj);
	if (err)
		return err;
	verifier_stats_on(u->obj);
	err = trace_bpf__load(u) ? -errno : 0;
	verifier_stats_print(u->obj);
	return err;
}

/*
 * Views mode: the uprobe programs in a second instance of the object
 * (open_late()), when a function first needs them.
 */
static int load_uprogs(struct tsession *s)
{
	struct trace_bpf *u;
	int err;

again:
	u = open_late(s, "the uprobe programs");
	if (!u)
		return -errno;
	bpf_program__set_autoload(u->progs.fn_entry, true);
	bpf_program__set_autoload(u->progs.fn_return, true);
	bpf_program__set_autoload(u->progs.unwind_start, s->unwind_fix);
	if (s->multi)
		uprogs_multi(u);
	err = load_late(s, u);
	if (err) {
		trace_bpf__destroy(u);
		if (s->multi && err == -EINVAL) {	/* the attach type refused, as in load_bpf() */
			s->multi = false;
			goto again;
		}
		fprintf(stderr, "xprobectl: cannot load the uprobe programs (%s): -v shows the "
			"verifier's log\n", strerror(-err));
		return err;
	}
	if (s->verbose)
		fprintf(stderr, "xprobectl: the uprobe programs loaded now (no function needed them "
			"at the start)\n");
	umulti_check(s, u->progs.fn_entry);
	s->uskel = u;
	return 0;
}

/*
 * Views mode: on_hook, which the xprobes_hook tracepoint runs for every
 * hook of the session, for a module that will not give each hook its own
 * program (one without XPROBES_CMD_HOOK_PROG). Loaded only then, in a
 * second instance (open_late()): it holds every hook's code, and its
 * verification was a third of the programs' in the set-up of a trace of
 * every function of Redis. NULL if it cannot be (said).
 */
static struct bpf_program *hook_tp_prog(struct tsession *s)
{
	struct trace_bpf *h;
	int err;

	if (s->hskel)
		return s->hskel->progs.on_hook;
	h = open_late(s, "the hooks' tracepoint program");
	if (!h)
		return NULL;
	bpf_program__set_autoload(h->progs.on_hook, true);
	err = load_late(s, h);
	if (err) {
		trace_bpf__destroy(h);
		fprintf(stderr, "xprobectl: cannot load the hooks' tracepoint program (%s): -v shows "
			"the verifier's log\n", strerror(-err));
		return NULL;
	}
	s->hskel = h;
	return h->progs.on_hook;
}

/* The late instances (open_late()) and the object, in that order: they share its maps. */
static void skels_destroy(struct tsession *s)
{
	trace_bpf__destroy(s->hskel);
	s->hskel = NULL;
	trace_bpf__destroy(s->uskel);
	s->uskel = NULL;
	s->uskel_failed = false;
	report_unmap(s);
	trace_bpf__destroy(s->skel);
	s->skel = NULL;
}

/* The uprobe program WHICH, loaded now if it was not; NULL if it cannot be (said). */
static struct bpf_program *uprog(struct tsession *s, enum uprog which)
{
	if (s->uprogs_in_skel)
		return uprog_of(s->skel, which);
	if (!s->uskel && (s->uskel_failed || (s->uskel_failed = load_uprogs(s) != 0)))
		return NULL;
	return uprog_of(s->uskel, which);
}

/*
 * Are the uprobe programs loaded with the rest? In fallback mode, and when
 * a function has no user hook. And for a command we started: a program
 * that seals itself (a seccomp filter, syscall user dispatch: sshd's and
 * browsers' sandboxes) does so early, and its functions go on uprobes
 * then (uhooks_to_uprobes()), the calls until they are in not seen; a
 * load of the programs at that point would make that wait 0.4 - 1.8 s in
 * the emulator instead of 50 - 100 ms (selftest 49). A running process
 * has sealed already (its hooks are refused: uprobes from the start) or
 * seldom will: there they wait until tracing is under way (trace_loop()).
 */
static bool uprobes_now(const struct tsession *s)
{
	return !s->views || s->uprobes_only || s->spawned || uprobes_wanted(s);
}

/*
 * Each map as large as this session's options need it, and the tables of
 * options it was not asked for one entry long: every entry is allocated
 * and zeroed when the map is made (the hashes are preallocated, the per-CPU
 * array's entries are one per-CPU allocation each), which the set-up pays
 * for. The programs only reach those tables under the same options, which
 * they see as constants, so their code for them is dead and goes.
 */
static void size_maps(struct tsession *s)
{
	struct trace_bpf *k = s->skel;

	bpf_map__set_max_entries(k->maps.stats, s->nfuncs << s->shard_bits);
	bpf_map__set_max_entries(k->maps.offstats, s->nfuncs);
	bpf_map__set_max_entries(k->maps.pstats, s->children ? TRACE_PROC_SLOTS * s->nfuncs : 1);
	bpf_map__set_max_entries(k->maps.tstats, s->per_thread ? TRACE_TSTATS : 1);
	bpf_map__set_max_entries(k->maps.fold, s->fold ? TRACE_FOLDS : 1);
	bpf_map__set_max_entries(k->maps.wakers, s->wakers ? TRACE_WAKER_SLOTS : 1);
	bpf_map__set_max_entries(k->maps.waker_comms, s->wakers && !s->views ? TRACE_WAKER_COMMS : 1);
}

/*
 * Views mode: each hook runs the kprobe program of its kind itself
 * (cheapest); a module that refuses one runs on_hook instead, or has the
 * xprobes_hook tracepoint run it (one without HOOK_PROG, which
 * XPROBECTL_HOOK_TP stands for: the hooks are given no program then).
 */
static int give_hook_progs(struct tsession *s)
{
	struct bpf_program *own[sizeof(s->hook_ids) / sizeof(s->hook_ids[0])], *tp;
	bool forced = getenv("XPROBECTL_HOOK_TP");
	int i, err;

	for (i = 0; i < s->nhooks; i++)
		own[i] = trace_hook_prog(s->skel, s->hook_kinds[i]);
	if (!forced) {
		err = hooks_give_progs(s->nl, s->hook_ids, own, s->nhooks, &i);
		if (!err)
			return 0;
		if (s->verbose)
			fprintf(stderr, "xprobectl: hook %u refused a program of its own (%s): "
				"trying on_hook, which tells the hooks apart\n", s->hook_ids[i],
				s->nl->ext_msg[0] ? s->nl->ext_msg : strerror(-err));
	}
	tp = hook_tp_prog(s);
	if (!tp)
		return -1;
	if (forced)
		return attach_hook_tp(tp, &s->hskel->links.on_hook);
	return attach_hook_prog(s->nl, s->hook_ids, s->nhooks, tp, &s->hskel->links.on_hook);
}

static int load_bpf(struct tsession *s)
{
	struct bpf_link *l;
	int i;

	s->skel = open_skel(s);
	if (!s->skel) {
		fprintf(stderr, "xprobectl: cannot open the BPF object: %s\n", strerror(errno));
		return -1;
	}
	/* --cgroup: the target is in the table like the rest, and leaves it at its exit */
	s->skel->rodata->target_tgid = s->cg ? 0 : s->pid;
	s->skel->rodata->children = s->children;
	s->skel->rodata->nfuncs = s->nfuncs;
	s->skel->rodata->stat_shard_bits = s->shard_bits;
	/*
	 * A records hook's cookie is its function's index alone (tuhook.c):
	 * which ones have no returns, for their records (uprobes and event
	 * hooks carry TRACE_ENTRY_ONLY in theirs).
	 */
	for (i = 0; i < s->nfuncs; i++)
		s->skel->bss->rec_entry_only[i] = s->records && s->funcs[i].no_return;
	s->skel->rodata->per_thread = s->per_thread;
	s->skel->rodata->folded = s->fold;
	s->skel->rodata->wakers_on = s->wakers;
	s->skel->rodata->views_mode = s->views;
	s->unwind_fix = probe_write_user_ok();
	s->skel->rodata->unwind_fix = s->unwind_fix;
	s->uprogs_in_skel = uprobes_now(s);
	bpf_program__set_autoload(s->skel->progs.fn_entry, s->uprogs_in_skel);
	bpf_program__set_autoload(s->skel->progs.fn_return, s->uprogs_in_skel);
	bpf_program__set_autoload(s->skel->progs.unwind_start, s->uprogs_in_skel && s->unwind_fix);
	s->skel->rodata->klock_n = klocks_load((uint64_t *)s->skel->rodata->klock_lo,
					       (uint64_t *)s->skel->rodata->klock_hi, TRACE_KLOCKS,
					       s->views ? (uint64_t *)&s->skel->rodata->init_mm_addr :
					       NULL);
	size_maps(s);
	bpf_program__set_autoload(s->skel->progs.on_hook, false);	/* hook_tp_prog() */
	bpf_program__set_autoload(s->skel->progs.on_switch_out, s->views);
	bpf_program__set_autoload(s->skel->progs.on_switch_in, s->views);
	bpf_program__set_autoload(s->skel->progs.on_exit_hook, s->views);
	bpf_program__set_autoload(s->skel->progs.on_wake, s->views && s->wakers);
	bpf_program__set_autoload(s->skel->progs.on_fork, s->views && s->children);
	bpf_program__set_autoload(s->skel->progs.fb_fork, !s->views && s->children);
	bpf_program__set_autoload(s->skel->progs.fb_switch, !s->views);
	bpf_program__set_autoload(s->skel->progs.fb_exit, !s->views);
	bpf_program__set_autoload(s->skel->progs.fb_wakeup, !s->views);
	bpf_program__set_autoload(s->skel->progs.fb_waking, !s->views && s->wakers);
	for (i = 0; i < FB_IN_PROGS; i++)
		bpf_program__set_autoload(fb_in(s->skel, i, NULL), !s->views && s->wakers);
	bpf_program__set_autoload(s->skel->progs.fn_entry_uh, s->nuhooks > 0 && !s->records);
	bpf_program__set_autoload(s->skel->progs.unwind_uh,
				  s->nuhooks > 0 && s->records && s->nunwinders > 0);
	bpf_program__set_autoload(s->skel->progs.fn_return_uh, s->nuhooks > 0 && !s->records);
	bpf_program__set_autoload(s->skel->progs.uh_lost, s->nuhooks > 0 && !s->records);
	bpf_program__set_autoload(s->skel->progs.fn_records, s->nuhooks > 0 && s->records);
	if (s->multi)
		uprogs_multi(s->skel);
	verifier_stats_on(s->skel->obj);
	if (core_btf_fill(&s->cbtf, s->skel->obj))
		return -1;
	if (trace_bpf__load(s->skel)) {
		if (s->multi) {		/* a kernel without uprobe_multi may refuse the type */
			trace_bpf__destroy(s->skel);
			s->multi = false;
			return load_bpf(s);
		}
		fprintf(stderr, "xprobectl: cannot load the BPF programs (%s): run as root on a "
			"kernel with BTF; -v shows the verifier's log\n", strerror(errno));
		return -1;
	}
	verifier_stats_print(s->skel->obj);
	if (s->cg && tcgroup_enter_target(s))
		return -1;
	for (i = 0; i < s->nhooks; i++)
		bpf_map_update_elem(bpf_map__fd(s->skel->maps.hooks), &s->hook_ids[i],
				    &s->hook_kinds[i], BPF_ANY);
	if (s->nuhooks) {
		tuhooks_areas(s);
		if (attach_uh(s))
			return -1;
	}
	if (s->views)
		return give_hook_progs(s);
	l = bpf_program__attach(s->skel->progs.fb_switch);
	s->skel->links.fb_switch = libbpf_get_error(l) ? NULL : l;
	if (s->skel->links.fb_switch) {
		l = bpf_program__attach(s->skel->progs.fb_exit);
		s->skel->links.fb_exit = libbpf_get_error(l) ? NULL : l;
	}
	if (s->skel->links.fb_exit && s->children) {
		l = bpf_program__attach(s->skel->progs.fb_fork);
		s->skel->links.fb_fork = libbpf_get_error(l) ? NULL : l;
	}
	if (s->skel->links.fb_exit && (s->skel->links.fb_fork || !s->children)) {
		l = bpf_program__attach(s->skel->progs.fb_wakeup);
		s->skel->links.fb_wakeup = libbpf_get_error(l) ? NULL : l;
	}
	if (s->skel->links.fb_wakeup && s->wakers) {
		l = bpf_program__attach(s->skel->progs.fb_waking);
		s->skel->links.fb_waking = libbpf_get_error(l) ? NULL : l;
		for (i = 0; s->skel->links.fb_waking && i < FB_IN_PROGS; i++) {
			struct bpf_link **slot;	/* the skeleton's: destroyed with it */

			l = bpf_program__attach(fb_in(s->skel, i, &slot));
			if (libbpf_get_error(l)) {
				bpf_link__destroy(s->skel->links.fb_waking);
				s->skel->links.fb_waking = NULL;
				break;
			}
			*slot = l;
		}
	}
	if (!s->skel->links.fb_wakeup || (s->wakers && !s->skel->links.fb_waking)) {
		fprintf(stderr, "xprobectl: cannot attach to the scheduler events: %s\n",
			strerror(errno));
		return -1;
	}
	return 0;
}

/* What one run of trace shares between its steps (cmd_trace()). */
struct trace_run {
	struct tsession s;
	/* the command line */
	struct spec specs[64];
	int nspecs;
	double duration, interval;	/* -d, -i: 0 when not given */
	bool list, no_views, latency, events;
	const char *cg_arg;
	char **cmd;			/* -- COMMAND, or NULL */
	struct latency_opts lo;
	/* the target and what traces it */
	struct cgtarget cg;
	char exe[PATH_MAX];
	struct xp_nl *nl;		/* views mode's socket, else NULL */
	struct xp_events *ev;
	struct syswatch sw;
	struct latency *lat;
	uint64_t t_set[6];		/* -v: when each step of the set-up ended */
	uint64_t start_real;		/* the trace's start, wall clock (pprof) */
	int pidfd, status;
	bool child;			/* ours to reap: started with -- COMMAND */
	bool started, cut, root_gone;
};

/* Step 1: the options into @r. -1 to go on, else the exit code. */
static int trace_options(struct trace_run *r, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "function", required_argument, NULL, 'f' },
		{ "list-functions", no_argument, NULL, 'L' },
		{ "duration", required_argument, NULL, 'd' },
		{ "interval", required_argument, NULL, 'i' },
		{ "sort", required_argument, NULL, 's' },
		{ "top", required_argument, NULL, 'n' },
		{ "histogram", no_argument, NULL, 'H' },
		{ "per-thread", no_argument, NULL, 'T' },
		{ "wakers", no_argument, NULL, 'W' },
		{ "children", no_argument, NULL, 'C' },
		{ "cgroup", required_argument, NULL, 'G' },
		{ "json", no_argument, NULL, 'j' },
		{ "folded", no_argument, NULL, 'F' },
		{ "pprof", required_argument, NULL, 'P' },
		{ "no-views", no_argument, NULL, 'N' },
		{ "uprobes", no_argument, NULL, 'U' },
		{ "events", no_argument, NULL, 'E' },
		{ "latency", optional_argument, NULL, 'S' },
		{ "latency-min-us", required_argument, NULL, 'M' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct tsession *s = &r->s;
	char *e;
	int c;

	while ((c = getopt_long(argc, argv, "+f:d:i:s:n:HTWCvh", opts, NULL)) != -1) {
		switch (c) {
		case 'f': {
			char *colon = strrchr(optarg, ':');
			struct spec *sp;

			if (r->nspecs == 64)
				return usage_error("at most 64 -f options");
			sp = &r->specs[r->nspecs];
			sp->lib = colon ? strndup(optarg, colon - optarg) : NULL;
			sp->glob = colon ? colon + 1 : optarg;
			if (!*sp->glob || (colon && colon == optarg))
				return usage_error("bad -f '%s': GLOB or LIB:GLOB", optarg);
			r->nspecs++;
			break;
		}
		case 'L': r->list = true; break;
		case 'd':
			if (!parse_secs(optarg, &r->duration))
				return usage_error("bad duration '%s' (seconds)", optarg);
			break;
		case 'i':
			if (!parse_interval(optarg, &r->interval))
				return usage_error("bad interval '%s' (seconds, 0.01 at least)", optarg);
			break;
		case 's':
			if (!strcmp(optarg, "wall")) s->sort = SORT_WALL;
			else if (!strcmp(optarg, "self")) s->sort = SORT_SELF;
			else if (!strcmp(optarg, "on")) s->sort = SORT_ON;
			else if (!strcmp(optarg, "off")) s->sort = SORT_OFF;
			else if (!strcmp(optarg, "calls")) s->sort = SORT_CALLS;
			else return usage_error("bad sort key '%s': wall, self, on, off or calls", optarg);
			break;
		case 'n':
			s->top = atoi(optarg);
			if (s->top <= 0)
				return usage_error("bad --top '%s'", optarg);
			break;
		case 'H': s->hist = true; break;
		case 'T': s->per_thread = true; break;
		case 'W': s->wakers = true; break;
		case 'C': s->children = true; break;
		case 'G': r->cg_arg = optarg; break;
		case 'j': s->json = true; break;
		case 'F': s->folded = true; break;
		case 'P':
			if (!strcmp(optarg, "-"))	/* stdout has the report */
				return usage_error("--pprof writes a file, not stdout (the report "
						   "is there): give a path, e.g. --pprof out.pb.gz");
			s->pprof = optarg;
			break;
		case 'N': r->no_views = true; break;
		case 'U': s->uprobes_only = true; break;
		case 'E': r->events = true; break;
		case 'S':
			r->latency = true;
			if (!optarg)
				break;
			r->lo.k = strtod(optarg, &e);
			if (*e || !(r->lo.k > 0 && r->lo.k <= 20))
				return usage_error("bad --latency sigma '%s' (0 < K <= 20)", optarg);
			break;
		case 'M':
			r->latency = true;
			r->lo.min_us = strtod(optarg, &e);
			if (*e || !(r->lo.min_us >= 0 && r->lo.min_us < 1e9))
				return usage_error("bad --latency-min-us '%s'", optarg);
			break;
		case 'v': verbose = s->verbose = true; break;
		case 'h': trace_usage(stdout); return EXIT_OK;
		default: return EXIT_USAGE;
		}
	}
	return -1;
}

/*
 * Step 2: the options that exclude each other, the --pprof file, the
 * target (a cgroup, -- COMMAND or a PID), and -f '*' when no -f is given.
 * -1 to go on, else the exit code.
 */
static int trace_target(struct trace_run *r, int argc, char **argv)
{
	struct tsession *s = &r->s;
	int fd;

	if (s->json && s->folded)
		return usage_error("--json and --folded exclude each other");
	if (r->latency && s->folded)
		return usage_error("--latency and --folded exclude each other");
	if (r->latency && (s->children || r->cg_arg))
		return usage_error("--latency watches one process: not with --children or --cgroup");
	if (s->pprof) {	/* say it now, not after the trace */
		fd = open(s->pprof, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0) {
			fprintf(stderr, "xprobectl: cannot write the profile %s: %s\n", s->pprof,
				strerror(errno));
			return EXIT_RUNTIME;
		}
		close(fd);
	}
	if (r->cg_arg) {
		if (optind != argc)
			return usage_error("trace takes a PID, -- COMMAND, or --cgroup PATH: one of them");
		if (cgroup_parse(r->cg_arg, &r->cg))
			return EXIT_USAGE;
		s->pid = tcgroup_first(&r->cg);
		if (!s->pid) {
			fprintf(stderr, "xprobectl: cgroup %s has no process: trace needs one running "
				"to read its program's functions\n", r->cg.name);
			return EXIT_RUNTIME;
		}
		s->cg = &r->cg;
		s->children = true;
	} else if (optind < argc && !strcmp(argv[optind - 1], "--")) {
		r->cmd = argv + optind;
	} else if (optind + 1 == argc) {
		uint32_t pid;

		if (!parse_pid(argv[optind], &pid))
			return EXIT_USAGE;
		s->pid = pid;
	} else {
		return usage_error("trace takes a PID, or -- COMMAND [ARGS]");
	}
	if (!r->nspecs) {
		r->specs[0].lib = NULL;
		r->specs[0].glob = "*";
		r->nspecs = 1;
	}
	return -1;
}

/* --list-functions: what -f matches in the target's program, nothing traced. */
static int trace_list(struct trace_run *r)
{
	int c;

	if (r->cmd && which(r->cmd[0], r->exe)) {
		fprintf(stderr, "xprobectl: '%s' not found in PATH\n", r->cmd[0]);
		return EXIT_RUNTIME;
	}
	if (!r->cmd && (c = pid_exe(r->s.pid, r->exe))) {
		fprintf(stderr, "xprobectl: no executable for pid %d: %s\n", (int)r->s.pid,
			strerror(-c));
		return EXIT_RUNTIME;
	}
	return pick_functions(&r->s, r->exe, r->specs, r->nspecs, true) ? EXIT_RUNTIME : EXIT_OK;
}

/*
 * Step 3: the module's socket (views mode) or why not, the command
 * started and held at its entry, its program and the functions -f picks.
 * Steps 3 to 5: 0 to go on, -1 (said) to end with EXIT_RUNTIME.
 */
static int trace_open(struct trace_run *r)
{
	struct tsession *s = &r->s;
	bool missing;
	int c;

	if (r->no_views) {
		snprintf(s->mode_note, sizeof(s->mode_note), "--no-views");
	} else {
		r->nl = xp_nl_try_open(&missing, NULL);
		if (!r->nl && !missing)
			return -1;
		if (!r->nl)
			snprintf(s->mode_note, sizeof(s->mode_note),
				 "xprobes module not loaded (insmod xprobes.ko for per-process hooks)");
	}
	if (r->cmd) {
		s->pid = spawn_stopped(r->cmd);
		if (s->pid < 0)
			return -1;
		r->child = true;
		s->spawned = true;
		if (run_to_entry(s->pid, r->cmd[0]))
			return -1;
		s->held_pc = stopped_pc(s->pid);
	}
	r->t_set[0] = mono_ns();
	c = pid_exe(s->pid, r->exe);
	if (c) {
		fprintf(stderr, "xprobectl: pid %d: %s\n", (int)s->pid,
			c == -ENOENT ? "no such process (or a kernel thread)" : strerror(-c));
		return -1;
	}
	read_comm(s->pid, s->comm, sizeof(s->comm));
	if (pick_functions(s, r->exe, r->specs, r->nspecs, false))	/* says when none matches */
		return -1;
	if (s->nfuncs > TRACE_MAX_FUNCS) {
		fprintf(stderr, "xprobectl: %d functions match, at most %d can be traced: narrow -f\n",
			s->nfuncs, TRACE_MAX_FUNCS);
		return -1;
	}
	s->ncpus = libbpf_num_possible_cpus();
	/* the stats map's shards: one per CPU up to TRACE_STAT_SHARDS (a power of 2) */
	while ((1 << s->shard_bits) < s->ncpus && (1 << s->shard_bits) < TRACE_STAT_SHARDS)
		s->shard_bits++;
	r->t_set[1] = mono_ns();
	return 0;
}

/*
 * Step 4: the view (or fallback mode, saying why), the user hooks where
 * the module allows them, the BPF programs and the uprobes for the rest,
 * and --latency's hooks.
 */
static int trace_attach(struct trace_run *r)
{
	struct tsession *s = &r->s;
	int c;

	s->views = r->nl != NULL;
	if (s->views && views_setup(s, r->nl)) {
		if (target_gone(s->pid, false, &r->status)) {
			fprintf(stderr, "xprobectl: pid %d exited before tracing began\n", (int)s->pid);
			return -1;
		}
		/* The view could not be made: say why, carry on in fallback mode. */
		fprintf(stderr, "xprobectl: %s; using fallback mode\n", s->mode_note);
		xp_nl_close(r->nl);
		r->nl = NULL;
		s->views = false;
	}
	if (s->views && !s->cg)	/* a cgroup's first process may go: its view with it */
		r->ev = xp_events_open(s->pid);
	r->t_set[2] = mono_ns();
	s->multi = !getenv("XPROBECTL_NO_UPROBE_MULTI");
	/*
	 * User hooks first, where the module allows: uprobes for the rest.
	 * Records, unless what is asked for needs a map to grow per call
	 * (-T, --folded), or the function running at each system call
	 * (--latency reads the shadow stacks there; records reach them only
	 * at the thread's next switch).
	 */
	s->fold = s->folded || s->pprof;
	s->records = !s->per_thread && !s->fold && !r->latency && !r->events;
	if (s->children && s->views && !s->uprobes_only) {
		/* A child's records and return thunks are not handed over yet (docs/wakers.md). */
		fprintf(stderr, "xprobectl: --children: user functions through uprobes (user hooks "
			"do not follow forks yet)\n");
		s->uprobes_only = true;
	}
	if (s->views && !s->uprobes_only && tuhooks_add(s, verbose)) {
		fprintf(stderr, "xprobectl: user hooks failed; --uprobes traces without them\n");
		return -1;
	}
	if (s->views && !s->uprobes_only)
		tuhooks_unwinders(s);
	if (s->views && s->records && s->nuhooks)
		uprobe_flush_setup(s);
	leave_out_unsafe(s);
	r->t_set[3] = mono_ns();
	for (;;) {
		if (load_bpf(s))
			return -1;
		r->t_set[4] = mono_ns();
		if (s->uprogs_in_skel)	/* else at their load: load_uprogs() */
			umulti_check(s, s->skel->progs.fn_entry);
		c = attach_uprobes(s, s->pid, &s->ls, false);
		if (c == -EAGAIN) {	/* a file's multi link refused whole: one probe per function */
			linkset_free(&s->ls);
			skels_destroy(s);
			s->multi = false;
			continue;
		}
		if (c)
			return -1;
		break;
	}
	r->t_set[5] = mono_ns();
	tcgroup_poll(s);	/* the cgroup's other processes */
	if (r->latency) {
		/* Its hooks join our view; it reads our shadow stacks. */
		syswatch_join(&r->sw, r->nl, s->pid, s->mode_note);
		r->lo.json = s->json;
		r->lo.threads_fd = bpf_map__fd(s->skel->maps.threads);
		r->lo.func_arg = s;
		r->lat = latency_start(&r->sw, &r->lo);
		if (!r->lat)
			return -1;
	}
	return 0;
}

/*
 * Step 5: every probe is in: the command (held at its entry) runs, and
 * trace says what it traces.
 */
static int trace_start(struct trace_run *r)
{
	struct tsession *s = &r->s;
	struct timespec ts;

	/* A return with no entry from now on is a lost call. */
	s->skel->bss->live = 1;
	stop_on_signals();
	if (r->child && ptrace(PTRACE_DETACH, s->pid, NULL, NULL)) {
		fprintf(stderr, "xprobectl: cannot start the command: %s\n", strerror(errno));
		return -1;
	}
	r->started = true;
	fprintf(stderr, "xprobectl: tracing %d function%s in %s%s%spid %d (%s), %s mode, %d "
		"through user hooks%s%s\n",
		s->nfuncs - s->nfailed, s->nfuncs - s->nfailed == 1 ? "" : "s",
		s->cg ? "cgroup " : "", s->cg ? s->cg->name : "", s->cg ? " from " : "", s->pid,
		s->comm, s->views ? "views" : "fallback", s->nuhooks,
		!s->nuhooks ? "" : s->records ? " (records)" : " (events)",
		r->child || r->duration ? "" : "; Ctrl-C ends");
	if (r->lat)
		fprintf(stderr, "xprobectl: and slow syscalls (above mean + %.2g sigma), %s\n",
			r->lo.k, syswatch_mode(&r->sw));
	s->start_ns = s->prev_ns = mono_ns();
	if (verbose)
		fprintf(stderr, "xprobectl: set up in %llu ms: functions %llu, view %llu, user hooks "
			"%llu, BPF load %llu, probes %llu, the rest %llu\n",
			(unsigned long long)(s->start_ns - r->t_set[0]) / 1000000,
			(unsigned long long)(r->t_set[1] - r->t_set[0]) / 1000000,
			(unsigned long long)(r->t_set[2] - r->t_set[1]) / 1000000,
			(unsigned long long)(r->t_set[3] - r->t_set[2]) / 1000000,
			(unsigned long long)(r->t_set[4] - r->t_set[3]) / 1000000,
			(unsigned long long)(r->t_set[5] - r->t_set[4]) / 1000000,
			(unsigned long long)(s->start_ns - r->t_set[5]) / 1000000);
	clock_gettime(CLOCK_REALTIME, &ts);
	r->start_real = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
	return 0;
}

/*
 * Step 6: until the target ends (with --children its last process; a
 * cgroup's until Ctrl-C or -d), -d, Ctrl-C or the view's end (r->cut),
 * with a report every -i. The loop's pace: 20 ms where something must be
 * looked for (a cgroup's or the children's new processes, --latency's
 * events, threads exiting, whose entries the sweep frees for new ones; a
 * kernel without pidfds), else 200 ms, cut short by the target's exit or
 * the next deadline. Each round reads /proc and a map or two, and what the
 * tracer spends, the traced machine does not have.
 */
static void trace_loop(struct trace_run *r)
{
	struct tsession *s = &r->s;
	uint64_t end_ns, next_ns;
	bool churn = false;

	end_ns = r->duration ? s->start_ns + (uint64_t)(r->duration * 1e9) : 0;
	next_ns = r->interval ? s->start_ns + (uint64_t)(r->interval * 1e9) : 0;
	r->pidfd = s->cg || r->lat ? -1 : target_pidfd(s->pid);
	while (!stop_req) {
		uint64_t now = mono_ns(), wake = now + 200000000ull;
		bool woke = false;
		const char *gone;
		uint32_t gone_flags;
		int ms;

		if (end_ns && end_ns < wake)
			wake = end_ns;
		if (next_ns && next_ns < wake)
			wake = next_ns;
		ms = wake > now ? (int)((wake - now + 999999) / 1000000) : 0;
		if (r->pidfd < 0 || s->children || churn)
			ms = ms < 20 ? ms : 20;
		if (r->lat)
			latency_poll(r->lat, 20);
		else
			woke = target_wait(r->pidfd, xp_events_fd(r->ev), ms);
		/*
		 * The pidfd knows best: a pid reused, a leader gone before its
		 * threads (/proc says zombie, the process runs on).
		 */
		if (!r->root_gone &&
		    (r->pidfd >= 0 ? woke : target_gone(s->pid, r->child, &r->status))) {
			if (r->pidfd >= 0 && r->child)
				waitpid(s->pid, &r->status, 0);	/* it has exited: reap it */
			target_ended(s, r->child, r->status);
			r->child = false;	/* reaped */
			r->root_gone = true;
			if (r->pidfd >= 0)
				close(r->pidfd);	/* it would wake every wait now */
			r->pidfd = -1;
		}
		/*
		 * --children: until the last of them (a server that daemonizes);
		 * a cgroup until Ctrl-C or -d (a restarted server joins again).
		 */
		if (r->root_gone && !s->cg && !(s->children && tprocs_alive(s)))
			break;
		if (xp_events_view_ended(r->ev)) {
			r->cut = true;
			break;
		}
		gone = xp_events_uhooks_gone(r->ev, &gone_flags);
		if (gone)
			uhooks_to_uprobes(s, gone, gone_flags);
		/*
		 * Tracing is under way: now the uprobe programs that views mode
		 * left out of the start (uprobes_now()), so that a seal's
		 * fall-back (above) does not wait for their load. This once
		 * holds the loop up for that load (0.1 G instructions: reports,
		 * -d and Ctrl-C that much later) and takes that CPU beside the
		 * traced process, as a load before the start took it before.
		 */
		if (!s->uprogs_in_skel)
			uprog(s, UPROG_ENTRY);	/* once: loaded, or failed and said */
		now = mono_ns();
		if (end_ns && now >= end_ns)
			break;
		churn = threads_sweep(s, false);
		tcgroup_poll(s);
		if (s->children && (!r->root_gone || s->cg))	/* else tprocs_alive() just did */
			tprocs_poll(s, true);
		if (next_ns && now >= next_ns) {
			report_print(s, false);
			next_ns += (uint64_t)(r->interval * 1e9);
			if (next_ns <= now)	/* a report longer than -i: no catching up */
				next_ns = now + (uint64_t)(r->interval * 1e9);
		}
	}
}

/* Step 7: the report, the profile, --latency's summary, how the target ended. */
static int trace_finish(struct trace_run *r)
{
	struct tsession *s = &r->s;
	const char *what = r->cmd ? r->cmd[0] : "the target", *q = r->cmd ? "'" : "";
	char signame[16];
	int c;

	if (s->children)
		tprocs_poll(s, false);	/* names for the last ones */
	report_print(s, true);
	if (s->pprof) {
		if (!s->folded)
			threads_sweep(s, true);	/* the stacks' pending time */
		c = pprof_write(s, s->pprof, r->start_real, mono_ns() - s->start_ns);
		if (c) {
			fprintf(stderr, "xprobectl: cannot write the profile %s: %s\n", s->pprof,
				strerror(-c));
			r->cut = true;
		} else {
			fprintf(stderr, "xprobectl: wrote %s (go tool pprof -top %s)\n", s->pprof,
				s->pprof);
		}
	}
	if (r->lat)
		latency_summary(r->lat, s->top ? s->top : 20);
	if (s->end == TEND_EXITED && s->end_code)
		fprintf(stderr, "xprobectl: %s%s%s (pid %d) exited with status %d\n", q, what, q,
			s->pid, s->end_code);
	else if (s->end == TEND_KILLED)
		fprintf(stderr, "xprobectl: %s%s%s (pid %d) was killed by %s%s\n", q, what, q,
			s->pid, trace_signame(s->end_code, signame, sizeof(signame)),
			/*
			 * Fallback's uretprobes: on 6.11+ each returns through a
			 * system call, which syscall user dispatch does not exempt.
			 */
			s->end_code == SIGSYS && !s->views ? " (if it blocks system calls by "
			"syscall user dispatch, uprobes' return probes did it on 6.11+: trace it "
			"in views mode, which takes them off first)" : "");
	return r->cut ? EXIT_RUNTIME : EXIT_OK;
}

/*
 * Last, once step 3 has begun: whatever the steps made goes. Returns
 * @ret, or exits with it in a child that detaches the probes
 * (detach_in_background()).
 */
static int trace_end(struct trace_run *r, int ret)
{
	struct tsession *s = &r->s;

	if (r->pidfd >= 0)
		close(r->pidfd);
	if (r->child && !r->started && s->pid > 0) {	/* it never ran: do not leave it stopped */
		kill(s->pid, SIGKILL);
		waitpid(s->pid, NULL, 0);
	}
	syswatch_end(&r->sw);	/* a zeroed one when --latency is off */
	latency_stop(r->lat);
	skels_destroy(s);
	core_btf_release(&s->cbtf);
	xp_events_close(r->ev);
	if (r->nl) {
		/*
		 * Gone, its pid may be another's now, on another tool's view:
		 * closing the socket ends every view of ours.
		 */
		if (!r->root_gone && !s->cg)
			view_del(r->nl, s->pid);
		xp_nl_close(r->nl);
	}
	/* Last: each probe's detach waits for a grace period (the links hold the programs). */
	if (detach_in_background(s))
		_exit(ret);
	tprocs_end(s);
	tcgroup_end(s);
	linkset_free(&s->ls);
	return ret;
}

int cmd_trace(int argc, char **argv)
{
	struct trace_run run = { 0 }, *r = &run;
	int ret;

	r->lo = (struct latency_opts){ .k = 3, .threads_fd = -1, .func_name = func_name };
	r->pidfd = -1;
	ret = trace_options(r, argc, argv);
	if (ret < 0)
		ret = trace_target(r, argc, argv);
	if (ret >= 0)
		return ret;
	/* per-function attach failures are reported by us, once: no libbpf warnings */
	libbpf_messages(verbose, false);
	if (r->list)
		return trace_list(r);
	ret = EXIT_RUNTIME;
	if (!trace_open(r) && !trace_attach(r) && !trace_start(r)) {
		trace_loop(r);
		ret = trace_finish(r);
	}
	return trace_end(r, ret);
}
