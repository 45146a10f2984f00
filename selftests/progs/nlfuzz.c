// SPDX-License-Identifier: GPL-2.0
/*
 * nlfuzz: a seeded fuzzer for the "xprobes" generic netlink family. The point
 * is that the kernel survives whatever it is sent: any errno is a fine answer,
 * a splat, a hang or a malformed reply is not.
 *
 * usage: nlfuzz [-s SEED] [-n MESSAGES] [-p PID]... [-x INDEX]... [-q]
 *   -s  seed (default: from the time and the pid); printed first as "seed S"
 *   -n  number of messages (default 100000)
 *   -p  a live process the fuzzer may give views and hooks (repeatable)
 *   -x  print the hexdump of message INDEX as it is sent, and its outcome
 *   -q  no progress lines
 *
 * Every message is drawn from its own PRNG stream (splitmix64 of the seed and
 * the message index), so the same seed and arguments give the same messages;
 * the only input from the kernel is the pool of hook ids it returned (later
 * messages use and delete them; at most 16 are kept, then the oldest is
 * deleted), so a replay matches as long as the kernel answers alike.
 *
 * Two generators, mixed:
 *   random    random command, version, flags and 0..8 attributes of random
 *             type, length and payload, with framing lies (truncated last
 *             attribute, nla_len beyond the message, nested/byte-order bits,
 *             a genl header cut short);
 *   mutation  a well-formed request for one command, built from interesting
 *             values (live pids, real and bogus symbols, addresses around the
 *             kernel text, boundary lengths, pooled hook ids), sent as is or
 *             after 1..3 mutations (bit flips, attribute type or length
 *             changes, duplicated or dropped attributes, u32/u64 swaps, ...).
 *
 * Each request goes out in one send() followed by a NLMSG_NOOP with NLM_F_ACK
 * (the "sentinel"): whatever the request's flags, the sentinel's ACK tells
 * when the kernel is done with it. Every reply is checked for sane framing.
 * A dump longer than DUMP_LIMIT messages (a WALK of many pages) is abandoned
 * by closing the socket under it, and the fuzzer goes on with a new one.
 * Requests the kernel can only answer slowly (a real symbol, which the module
 * resolves by registering a kprobe, one RCU grace period; a view; a hook) are
 * kept rare so that 100000 messages take well under a minute in an emulated VM.
 *
 * At the end every view the fuzzer may have made is deleted (VIEW_DEL on each
 * pid it used or saw created), which takes their hooks with them.
 * The summary counts outcomes: "ok" (an ACK, a reply or a dump's end),
 * "no reply" (no NLM_F_ACK and nothing to say), one line per errno, and how
 * many replies carried an extack message.
 * Exit: 0 the run completed, 1 a local failure (socket, family, a malformed
 * reply, no answer within 10 s), 2 usage.
 */
#include <getopt.h>
#include <time.h>
#include <sys/time.h>
#include "genl.h"
#include "../../module/uapi/xprobes.h"

#ifndef NLM_F_ACK_TLVS
#define NLM_F_ACK_TLVS 0x200
#endif
#ifndef NLM_F_CAPPED
#define NLM_F_CAPPED 0x100
#endif

/* ---- PRNG: splitmix64, one stream per message ------------------------------ */

struct rng {
	uint64_t s;
};

static uint64_t rnext(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* uniform in [0, n) */
static uint32_t below(struct rng *r, uint32_t n)
{
	return n ? (uint32_t)(((rnext(r) >> 32) * n) >> 32) : 0;
}

static int chance(struct rng *r, unsigned int permille)
{
	return below(r, 1000) < permille;
}

static void rbytes(struct rng *r, unsigned char *p, size_t n)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!(i & 7))
			v = rnext(r);
		p[i] = v;
		v >>= 8;
	}
}

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))
#define PICK(r, a) ((a)[below(r, N_OF(a))])

/* ---- the message model --------------------------------------------------- */

#define MAX_ATTRS	16
#define MAX_MSG		65536

struct fattr {
	uint16_t type;
	int32_t nla_len;	/* declared nla_len; -1: the true one */
	uint32_t len;		/* payload bytes */
	unsigned char *data;
};

enum { GEN_RANDOM, GEN_MUTATED, GEN_WELLFORMED, NGEN };
static const char *const gen_names[NGEN] = { "random", "mutated", "well-formed" };

struct fmsg {
	int gen;
	int tmpl;		/* template command (stats) */
	uint8_t cmd, version;
	uint16_t reserved, flags;
	uint32_t nlpid;
	int nattr;
	struct fattr a[MAX_ATTRS];
	int cut;		/* >= 0: cut the serialized message at this fraction/1000 */
	int cut_hdr;		/* > 0: nlmsg_len = 16 + cut_hdr - 1 (genl header cut short) */
	int flips;		/* random bit flips after the headers */
	int nodel;		/* 1 when this is the pure HOOK_DEL of a pooled hook */
	int forced;		/* a HOOK_DEL to keep the pool small: never mutated */
	uint32_t del_id;
};

static unsigned char arena[1 << 18];
static size_t arena_used;

static unsigned char *alloc_bytes(size_t n)
{
	unsigned char *p;

	if (arena_used + n > sizeof(arena))
		return NULL;
	p = arena + arena_used;
	arena_used += (n + 7) & ~7UL;
	return p;
}

static struct fattr *add_attr(struct fmsg *m, uint16_t type, const void *data, uint32_t len)
{
	struct fattr *a;
	unsigned char *p = alloc_bytes(len ? len : 1);

	if (m->nattr >= MAX_ATTRS || !p)
		return NULL;
	a = &m->a[m->nattr++];
	a->type = type;
	a->nla_len = -1;
	a->len = len;
	a->data = p;
	if (data && len)
		memcpy(p, data, len);
	return a;
}

static void add_u32(struct fmsg *m, uint16_t type, uint32_t v) { add_attr(m, type, &v, 4); }
static void add_u64(struct fmsg *m, uint16_t type, uint64_t v) { add_attr(m, type, &v, 8); }

static void begin(struct fmsg *m, int gen, uint8_t cmd, uint16_t flags)
{
	memset(m, 0, sizeof(*m));
	arena_used = 0;
	m->gen = gen;
	m->tmpl = cmd;
	m->cmd = cmd;
	m->version = XPROBES_GENL_VERSION;
	m->flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	m->cut = -1;
}

/* ---- interesting values ---------------------------------------------------- */

static uint32_t live[16];	/* -p */
static int nlive;
static uint32_t self;

/* Pids that may hold a view of ours: cleaned up at the end. */
static uint32_t used_pids[256];
static int nused;

static void note_pid(uint32_t pid)
{
	int i;

	if (!pid)
		return;
	for (i = 0; i < nused; i++)
		if (used_pids[i] == pid)
			return;
	if (nused < (int)N_OF(used_pids))
		used_pids[nused++] = pid;
}

/* Hook ids the kernel returned, oldest first. */
#define HOOK_POOL 16
static uint32_t hooks[64];
static int nhooks;

static void hook_push(uint32_t id)
{
	int i;

	for (i = 0; i < nhooks; i++)
		if (hooks[i] == id)
			return;
	if (nhooks < (int)N_OF(hooks))
		hooks[nhooks++] = id;
}

static void hook_drop(uint32_t id)
{
	int i;

	for (i = 0; i < nhooks; i++)
		if (hooks[i] == id) {
			memmove(&hooks[i], &hooks[i + 1], (nhooks - i - 1) * sizeof(hooks[0]));
			nhooks--;
			return;
		}
}

static uint32_t pick_pid(struct rng *r, unsigned int live_permille, unsigned int self_permille)
{
	static const uint32_t huge[] = { 0x7fffffff, 0x80000000, 0xffffffff, 4194304, 4194305,
					 32768, 65536, 1u << 22 };

	if (nlive && chance(r, live_permille))
		return live[below(r, nlive)];
	if (chance(r, self_permille))
		return self;
	switch (below(r, 6)) {
	case 0: return 1;
	case 1: return 2;
	case 2: return 0;
	case 3: return PICK(r, huge);
	case 4: return 5000000 + below(r, 100000000);	/* beyond any pid_max */
	default: return below(r, 3) ? 1 : 0xffffffff;
	}
}

/* Real functions: resolving one registers a kprobe (an RCU grace period). */
static const char *const real_syms[] = {
	"schedule", "__x64_sys_getppid", "__x64_sys_getpid", "do_nanosleep", "vfs_read",
};

/* Also slow to resolve, but not hookable: module text, a real name before a NUL. */
static const struct { const char *s; unsigned int len; } slow_bogus[] = {
	{ "xp_cmd_status", 14 },
	{ "schedule\0garbage", 17 },
	{ "vfs_read\0", 10 },
};

/* Cheap: unknown, data, policy-refused or oddly encoded names. */
static const struct { const char *s; unsigned int len; } cheap_bogus[] = {
	{ "", 1 },
	{ "", 0 },				/* no NUL at all */
	{ "no_such_function_xyz", 21 },
	{ "jiffies", 8 },
	{ "init_task", 10 },
	{ "loops_per_jiffy", 16 },
	{ "xp_policy", 10 },			/* module data */
	{ "_etext", 7 },
	{ "schedule", 8 },			/* no NUL: policy refuses */
	{ "no\0schedule", 12 },
	{ "SCHEDULE", 9 },
	{ " schedule", 10 },
	{ "schedule+4", 11 },
	{ "schedule\n", 10 },
	{ "\xff\xfe\x80", 4 },
};

/* A symbol attribute. cls 0: cheap, 1: slow bogus, 2: real function. */
static void add_symbol(struct fmsg *m, struct rng *r, int cls)
{
	unsigned char *p;
	uint32_t n;

	if (cls == 2) {
		const char *s = PICK(r, real_syms);

		add_attr(m, XPROBES_A_SYMBOL, s, strlen(s) + 1);
		return;
	}
	if (cls == 1) {
		int i = below(r, N_OF(slow_bogus));

		add_attr(m, XPROBES_A_SYMBOL, slow_bogus[i].s, slow_bogus[i].len);
		return;
	}
	if (chance(r, 250)) {
		/* long names around the policy limit (511 + NUL) */
		static const uint32_t lens[] = { 64, 510, 511, 512, 513, 600, 4000 };

		n = PICK(r, lens);
		if (!(p = alloc_bytes(n + 1)))
			return;
		memset(p, 'a' + below(r, 26), n);
		p[n] = 0;
		add_attr(m, XPROBES_A_SYMBOL, p, n + (chance(r, 900) ? 1 : 0));
		return;
	}
	n = below(r, N_OF(cheap_bogus));
	add_attr(m, XPROBES_A_SYMBOL, cheap_bogus[n].s, cheap_bogus[n].len);
}

/* Addresses: filled from /proc/kallsyms (fallbacks for a non-KASLR kernel). */
static uint64_t stext = 0xffffffff81000000ULL, etext = 0xffffffff82000000ULL;
static uint64_t addrs[64];
static int naddrs;

static const char *const want_syms[] = {
	"schedule", "vfs_read", "__x64_sys_getppid", "do_nanosleep", "jiffies", "init_task",
};

static void read_kallsyms(void)
{
	static const uint64_t fixed[] = {
		0, ~0ULL, 1, 0x1000, 0x400000, 0x7ffffffff000ULL, 0x0000800000000000ULL,
		0xffff800000000000ULL, 0xffff888000000000ULL, 0xffffc90000000000ULL,
		0xffffea0000000000ULL, 0xfffffe0000000000ULL, 0xffffffff80000000ULL,
		0xffffffff7ffff000ULL, 0xffffffffa0000000ULL, 0xffffffffff600000ULL,
		0xfffffffffffff000ULL,
	};
	uint64_t found[N_OF(want_syms)] = { 0 }, mod = 0, a;
	char line[512], type, name[256], modname[64];
	FILE *f = fopen("/proc/kallsyms", "r");
	unsigned int i;

	while (f && fgets(line, sizeof(line), f)) {
		int n = sscanf(line, "%lx %c %255s %63s", &a, &type, name, modname);

		if (n < 3 || !a)
			continue;
		if (!strcmp(name, "_stext"))
			stext = a;
		else if (!strcmp(name, "_etext"))
			etext = a;
		else if (n == 4 && !mod && (type == 't' || type == 'T'))
			mod = a;
		else if (n == 3)
			for (i = 0; i < N_OF(want_syms); i++)
				if (!found[i] && !strcmp(name, want_syms[i]))
					found[i] = a;
	}
	if (f)
		fclose(f);
	for (i = 0; i < N_OF(fixed); i++)
		addrs[naddrs++] = fixed[i];
	for (i = 0; i < N_OF(found); i++)
		if (found[i]) {
			addrs[naddrs++] = found[i];
			addrs[naddrs++] = found[i] + 1 + i;
		}
	if (mod) {
		addrs[naddrs++] = mod;
		addrs[naddrs++] = mod & ~0xfffULL;
	}
	addrs[naddrs++] = stext;
	addrs[naddrs++] = stext - 1;
	addrs[naddrs++] = stext + 4095;
	addrs[naddrs++] = stext + 4096;
	addrs[naddrs++] = etext;
	addrs[naddrs++] = etext - 1;
	addrs[naddrs++] = etext - 8;
	addrs[naddrs++] = etext - 16;
	addrs[naddrs++] = etext - 4096;
	addrs[naddrs++] = etext - 4097;
}

static uint64_t pick_addr(struct rng *r)
{
	if (chance(r, 250))	/* anywhere in the core text */
		return stext + rnext(r) % (etext > stext ? etext - stext : 1);
	if (chance(r, 30))
		return rnext(r);
	return addrs[below(r, naddrs)];
}

static const uint32_t u32_vals[] = {
	0, 1, 2, 3, 4, 7, 8, 15, 16, 17, 31, 32, 63, 64, 127, 128, 255, 256, 511, 512,
	4095, 4096, 4097, 65535, 65536, (1 << 20) - 1, 1 << 20, (1 << 20) + 1,
	0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff,
};

static uint32_t pick_len(struct rng *r)
{
	static const uint32_t v[] = { 0, 1, 2, 15, 16, 17, 64, 4095, 4096, 4097,
				      1 << 20, (1 << 20) + 1, 0xffffffff };

	return chance(r, 300) ? 1 + below(r, 64) : PICK(r, v);
}

/* Page counts for WALK: mostly small; a valid walk of N pages answers N messages. */
static uint32_t pick_count(struct rng *r)
{
	static const uint32_t small[] = { 0, 1, 2, 3, 8, 16, 17, 64 };
	static const uint32_t big[] = { 512, 4096, 4097, 65536, 1 << 19, 1 << 20,
					(1 << 20) + 1, 0x7fffffff, 0xffffffff };

	return chance(r, 60) ? PICK(r, big) : PICK(r, small);
}

static uint32_t pick_offset(struct rng *r)
{
	static const uint32_t v[] = { 4095, 4096, 1 << 20, (1 << 20) + 1, 0x80000000, 0xffffffff };

	return chance(r, 800) ? below(r, 65) : PICK(r, v);
}

static uint32_t pick_flags(struct rng *r)
{
	static const uint32_t v[] = { 0, XPROBES_F_NO_FOLLOW_FORK, XPROBES_F_PERSIST,
				      XPROBES_F_ANY_CONTEXT, XPROBES_F_ALL, 1u << 3,
				      XPROBES_HOOK_BROKEN, 0xffffffff };

	return chance(r, 80) ? (uint32_t)rnext(r) : PICK(r, v);
}

static uint64_t pick_u64(struct rng *r)
{
	static const uint64_t v[] = { 0, 1, ~0ULL, 1ULL << 63, 0xdeadbeefcafef00dULL };

	return chance(r, 500) ? rnext(r) : PICK(r, v);
}

/* ---- generators ------------------------------------------------------------ */

/*
 * Rates, in permille of the messages of the template concerned. Every slow
 * request costs at least one RCU grace period in the kernel.
 */
#define P_HOOK_REAL	60	/* HOOK_ADD: a real symbol on a live pid */
#define P_PEEK_REAL	20	/* PEEK: a real symbol */
#define P_SLOW_BOGUS	10	/* a module function or a real name before a NUL */

static void gen_random(struct fmsg *m, struct rng *r)
{
	int n, i;

	begin(m, GEN_RANDOM, 0, 0);
	m->cmd = chance(r, 20) ? (uint8_t)rnext(r) : below(r, XPROBES_CMD_MAX + 4);
	m->tmpl = m->cmd <= XPROBES_CMD_MAX ? m->cmd : XPROBES_CMD_MAX + 1;
	m->version = chance(r, 700) ? XPROBES_GENL_VERSION : (uint8_t)rnext(r);
	if (chance(r, 50))
		m->reserved = rnext(r);
	if (chance(r, 500))
		m->flags = NLM_F_REQUEST | NLM_F_ACK;
	else
		m->flags = (uint16_t)rnext(r) | (chance(r, 900) ? NLM_F_REQUEST : 0);
	if (chance(r, 300))
		m->flags |= NLM_F_DUMP;
	if (chance(r, 50))
		m->nlpid = rnext(r);
	n = below(r, 9);
	for (i = 0; i < n; i++) {
		uint16_t type;
		uint32_t len;
		struct fattr *a;

		if (chance(r, 900))
			type = below(r, XPROBES_A_MAX + 4);
		else
			type = rnext(r);
		if (chance(r, 60))
			type |= chance(r, 500) ? NLA_F_NESTED : NLA_F_NET_BYTEORDER;
		switch (below(r, 20)) {
		case 0 ... 4: len = PICK(r, ((const uint32_t[]){ 1, 2, 4, 8 })); break;
		case 5 ... 15: len = below(r, 65); break;
		case 16 ... 18: len = below(r, 601); break;
		default: len = chance(r, 300) ? 3900 + below(r, 300) : below(r, 601); break;
		}
		a = add_attr(m, type, NULL, len);
		if (!a)
			break;
		rbytes(r, a->data, len);
		if (len == 4 && chance(r, 300))
			memcpy(a->data, &u32_vals[below(r, N_OF(u32_vals))], 4);
		if (chance(r, 30))
			a->nla_len = below(r, 4);			/* shorter than a header */
		else if (chance(r, 30))
			a->nla_len = NLA_HDRLEN + len + 1 + below(r, 5000); /* beyond the end */
	}
	if (m->nattr && chance(r, 60))
		m->cut = below(r, 1000);	/* truncate inside the message */
	if (chance(r, 30))
		m->cut_hdr = 1 + below(r, 4);
}

/* A well-formed request for command @cmd. */
static void gen_template(struct fmsg *m, struct rng *r, int cmd)
{
	uint32_t pid;
	int slow;

	switch (cmd) {
	case XPROBES_CMD_STATUS:
	case XPROBES_CMD_AUDIT:
		begin(m, GEN_WELLFORMED, cmd, 0);
		if (chance(r, 100))
			add_u32(m, XPROBES_A_PID, pick_pid(r, 500, 100));
		break;
	case XPROBES_CMD_VIEW_NEW:
		begin(m, GEN_WELLFORMED, cmd, 0);
		pid = pick_pid(r, 400, 30);
		add_u32(m, XPROBES_A_PID, pid);
		if (chance(r, 600))
			add_u32(m, XPROBES_A_FLAGS, chance(r, 700) ?
				(XPROBES_F_PERSIST | (chance(r, 300) ? XPROBES_F_NO_FOLLOW_FORK : 0)) :
				pick_flags(r));
		break;
	case XPROBES_CMD_VIEW_DEL:
		begin(m, GEN_WELLFORMED, cmd, 0);
		add_u32(m, XPROBES_A_PID, pick_pid(r, 150, 300));
		break;
	case XPROBES_CMD_VIEW_GET:
		begin(m, GEN_WELLFORMED, cmd, NLM_F_DUMP);
		if (chance(r, 100))
			add_u32(m, XPROBES_A_PID, pick_pid(r, 500, 100));
		break;
	case XPROBES_CMD_HOOK_ADD:
		if (nhooks >= HOOK_POOL) {	/* keep few live hooks: delete the oldest */
			begin(m, GEN_WELLFORMED, XPROBES_CMD_HOOK_DEL, 0);
			add_u32(m, XPROBES_A_HOOK_ID, hooks[0]);
			m->nodel = m->forced = 1;
			m->del_id = hooks[0];
			return;
		}
		begin(m, GEN_WELLFORMED, cmd, 0);
		if (nlive && chance(r, P_HOOK_REAL)) {
			add_u32(m, XPROBES_A_PID, live[below(r, nlive)]);
			add_symbol(m, r, 2);
		} else if (chance(r, 500)) {
			/* no view there (or the caller's own): refused before any lookup */
			add_u32(m, XPROBES_A_PID, pick_pid(r, 0, 200));
			add_symbol(m, r, chance(r, 500) ? 2 : 0);
		} else {
			add_u32(m, XPROBES_A_PID, pick_pid(r, 700, 50));
			add_symbol(m, r, chance(r, P_SLOW_BOGUS) ? 1 : 0);
		}
		if (chance(r, 400))
			add_u32(m, XPROBES_A_OFFSET, pick_offset(r));
		if (chance(r, 300))
			add_u64(m, XPROBES_A_COOKIE, pick_u64(r));
		if (chance(r, 300))
			add_u32(m, XPROBES_A_FLAGS, chance(r, 600) ?
				(chance(r, 500) ? XPROBES_F_ANY_CONTEXT : 0) : pick_flags(r));
		break;
	case XPROBES_CMD_HOOK_DEL:
		begin(m, GEN_WELLFORMED, cmd, 0);
		if (nhooks && chance(r, 600)) {
			uint32_t id = hooks[below(r, nhooks)];

			add_u32(m, XPROBES_A_HOOK_ID, id);
			m->nodel = 1;
			m->del_id = id;
		} else {
			static const uint32_t v[] = { 0, 1, 2, 3, 0x7fffffff, 0x80000000, 0xffffffff };

			add_u32(m, XPROBES_A_HOOK_ID, chance(r, 300) ? (uint32_t)rnext(r) : PICK(r, v));
		}
		break;
	case XPROBES_CMD_HOOK_GET:
		begin(m, GEN_WELLFORMED, cmd, NLM_F_DUMP);
		if (chance(r, 500))
			add_u32(m, XPROBES_A_PID, pick_pid(r, 500, 100));
		break;
	case XPROBES_CMD_PEEK:
		begin(m, GEN_WELLFORMED, cmd, 0);
		add_u32(m, XPROBES_A_PID, pick_pid(r, 500, 200));
		slow = chance(r, P_PEEK_REAL) ? 2 : chance(r, P_SLOW_BOGUS) ? 1 : 0;
		switch (below(r, 20)) {
		case 0 ... 12:
			add_u64(m, XPROBES_A_ADDR, pick_addr(r));
			if (chance(r, 50))
				add_u32(m, XPROBES_A_OFFSET, pick_offset(r));
			break;
		case 13 ... 17:
			add_symbol(m, r, slow);
			if (chance(r, 400))
				add_u32(m, XPROBES_A_OFFSET, pick_offset(r));
			break;
		case 18:
			add_u64(m, XPROBES_A_ADDR, pick_addr(r));
			add_symbol(m, r, slow);
			break;
		default:
			break;	/* neither */
		}
		if (chance(r, 600))
			add_u32(m, XPROBES_A_LEN, pick_len(r));
		break;
	case XPROBES_CMD_WALK:
		begin(m, GEN_WELLFORMED, cmd, NLM_F_DUMP);
		if (chance(r, 950))
			add_u32(m, XPROBES_A_PID, pick_pid(r, 500, 200));
		if (chance(r, 950))
			add_u64(m, XPROBES_A_ADDR, pick_addr(r));
		if (chance(r, 700))
			add_u32(m, XPROBES_A_COUNT, pick_count(r));
		break;
	default:	/* commands without an operation */
		begin(m, GEN_WELLFORMED, cmd, chance(r, 300) ? NLM_F_DUMP : 0);
		m->tmpl = XPROBES_CMD_MAX + 1;
		if (chance(r, 500))
			add_u32(m, XPROBES_A_PID, pick_pid(r, 500, 100));
		break;
	}
}

static void mutate_one(struct fmsg *m, struct rng *r)
{
	struct fattr *a = m->nattr ? &m->a[below(r, m->nattr)] : NULL;
	unsigned char *p;
	uint32_t n;

	switch (below(r, 15)) {
	case 0:
		m->flips += 1 + below(r, 4);
		break;
	case 1:
		if (a)
			a->type = chance(r, 900) ? below(r, XPROBES_A_MAX + 4) : (uint16_t)rnext(r);
		break;
	case 2:		/* a new payload length: truncated or extended */
		if (!a)
			break;
		n = chance(r, 500) ? below(r, a->len + 1) : a->len + 1 + below(r, chance(r, 100) ? 4000 : 16);
		if (!(p = alloc_bytes(n ? n : 1)))
			break;
		memcpy(p, a->data, n < a->len ? n : a->len);
		if (n > a->len)
			rbytes(r, p + a->len, n - a->len);
		a->data = p;
		a->len = n;
		break;
	case 3:		/* lie in nla_len */
		if (!a)
			break;
		switch (below(r, 4)) {
		case 0: a->nla_len = below(r, 4); break;
		case 1: a->nla_len = NLA_HDRLEN + a->len + 1 + below(r, 8); break;
		case 2: a->nla_len = NLA_HDRLEN + (a->len ? below(r, a->len) : 0); break;
		default: a->nla_len = 0xffff; break;
		}
		break;
	case 4:		/* duplicate */
		if (a && m->nattr < MAX_ATTRS) {
			struct fattr copy = *a;
			int at = below(r, m->nattr + 1);

			memmove(&m->a[at + 1], &m->a[at], (m->nattr - at) * sizeof(*a));
			m->nattr++;
			m->a[at] = copy;
		}
		break;
	case 5:		/* drop */
		if (a) {
			memmove(a, a + 1, (&m->a[m->nattr] - a - 1) * sizeof(*a));
			m->nattr--;
		}
		break;
	case 6:		/* u32 <-> u64, or u8/u16 */
		if (!a)
			break;
		n = a->len == 4 ? PICK(r, ((const uint32_t[]){ 8, 2, 1, 0 })) :
		    a->len == 8 ? PICK(r, ((const uint32_t[]){ 4, 16 })) : 4;
		if (!(p = alloc_bytes(n ? n : 1)))
			break;
		memset(p, 0, n);
		memcpy(p, a->data, n < a->len ? n : a->len);
		a->data = p;
		a->len = n;
		break;
	case 7:
		m->cmd = chance(r, 950) ? below(r, XPROBES_CMD_MAX + 4) : (uint8_t)rnext(r);
		break;
	case 8:
		switch (below(r, 5)) {
		case 0: m->flags ^= NLM_F_DUMP; break;
		case 1: m->flags ^= NLM_F_ACK; break;
		case 2: m->flags ^= NLM_F_REQUEST; break;
		case 3: m->flags ^= 1u << below(r, 16); break;
		default: m->flags = rnext(r); break;
		}
		break;
	case 9:
		m->version = chance(r, 500) ? 0 : (uint8_t)rnext(r);
		break;
	case 10:
		if (chance(r, 200))
			m->cut_hdr = 1 + below(r, 4);
		else
			m->cut = below(r, 1000);
		break;
	case 11:	/* an interesting value */
		if (a && a->len >= 4) {
			uint32_t v = PICK(r, u32_vals);

			memcpy(a->data + (a->len >= 8 && chance(r, 500) ? 4 : 0), &v, 4);
		}
		break;
	case 12:	/* string surgery */
		if (a && a->len) {
			if (!(p = alloc_bytes(a->len + 8)))
				break;
			memcpy(p, a->data, a->len);
			a->data = p;
			switch (below(r, 3)) {
			case 0: if (p[a->len - 1] == 0) a->len--; break;	/* drop the NUL */
			case 1: p[below(r, a->len)] = 0; break;		/* a NUL inside */
			default: n = 1 + below(r, 8); rbytes(r, p + a->len, n); a->len += n; break;
			}
		}
		break;
	case 13: {	/* an extra attribute */
		struct fattr *x = add_attr(m, below(r, XPROBES_A_MAX + 4), NULL, below(r, 17));

		if (x) {
			rbytes(r, x->data, x->len);
			if (x->len >= 4 && chance(r, 500)) {
				uint32_t v = PICK(r, u32_vals);

				memcpy(x->data, &v, 4);
			}
		}
		break;
	}
	default:
		if (a)
			a->type |= chance(r, 500) ? NLA_F_NESTED : NLA_F_NET_BYTEORDER;
		break;
	}
}

static void gen_mutation(struct fmsg *m, struct rng *r)
{
	/* template weights, per mille */
	static const struct { int cmd, w; } t[] = {
		{ XPROBES_CMD_STATUS, 60 }, { XPROBES_CMD_VIEW_NEW, 80 },
		{ XPROBES_CMD_VIEW_DEL, 40 }, { XPROBES_CMD_VIEW_GET, 60 },
		{ XPROBES_CMD_HOOK_ADD, 150 }, { XPROBES_CMD_HOOK_DEL, 90 },
		{ XPROBES_CMD_HOOK_GET, 70 }, { XPROBES_CMD_PEEK, 220 },
		{ XPROBES_CMD_AUDIT, 40 }, { XPROBES_CMD_WALK, 150 },
		{ XPROBES_CMD_UNSPEC, 10 }, { XPROBES_CMD_VIEW_ENDED, 10 },
		{ XPROBES_CMD_MAX + 1, 10 }, { 255, 0 },
	};
	int w = below(r, 1000), i, k;

	for (i = 0; i < (int)N_OF(t) - 1 && w >= t[i].w; i++)
		w -= t[i].w;
	gen_template(m, r, t[i].cmd);
	if (m->forced || chance(r, 300))
		return;		/* sent well-formed */
	m->gen = GEN_MUTATED;
	m->nodel = 0;		/* a pooled hook id stays pooled until a pure delete */
	k = 1 + below(r, 3);
	while (k--)
		mutate_one(m, r);
}

/* ---- wire format ------------------------------------------------------------ */

static void put16(unsigned char *p, uint16_t v) { memcpy(p, &v, 2); }

/* Serialize @m into @buf; returns the message length (== its nlmsg_len). */
static int serialize(struct fmsg *m, struct rng *r, unsigned char *buf, uint16_t family,
		     uint32_t seq)
{
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	struct genlmsghdr *g = (struct genlmsghdr *)(buf + NLMSG_HDRLEN);
	size_t len = NLMSG_HDRLEN + GENL_HDRLEN;
	int i;

	memset(buf, 0, len);
	g->cmd = m->cmd;
	g->version = m->version;
	g->reserved = m->reserved;
	for (i = 0; i < m->nattr; i++) {
		struct fattr *a = &m->a[i];
		size_t need = NLA_HDRLEN + a->len;

		if (len + NLA_ALIGN(need) > MAX_MSG)
			break;
		put16(buf + len, a->nla_len >= 0 ? (uint16_t)a->nla_len : (uint16_t)need);
		put16(buf + len + 2, a->type);
		memcpy(buf + len + NLA_HDRLEN, a->data, a->len);
		memset(buf + len + need, 0, NLA_ALIGN(need) - need);
		len += NLA_ALIGN(need);
	}
	if (m->cut >= 0 && len > NLMSG_HDRLEN + GENL_HDRLEN)
		len = NLMSG_HDRLEN + GENL_HDRLEN + (len - NLMSG_HDRLEN - GENL_HDRLEN) * m->cut / 1000;
	if (m->cut_hdr)
		len = NLMSG_HDRLEN + m->cut_hdr - 1;
	for (i = 0; i < m->flips && len > NLMSG_HDRLEN; i++) {
		size_t at = NLMSG_HDRLEN + below(r, len - NLMSG_HDRLEN);

		buf[at] ^= 1u << below(r, 8);
	}
	h->nlmsg_len = len;
	h->nlmsg_type = family;
	h->nlmsg_flags = m->flags;
	h->nlmsg_seq = seq;
	h->nlmsg_pid = m->nlpid;
	return len;
}

/* ---- the exchange ------------------------------------------------------------ */

static int fd = -1;
static uint16_t family;
static uint32_t portid;
static unsigned char sbuf[MAX_MSG + 64] __attribute__((aligned(8)));
static unsigned char rbuf[1 << 17] __attribute__((aligned(8)));

#define DUMP_LIMIT 10000	/* reply messages to one dump before the socket is dropped */

/* outcomes */
#define O_OK		0
#define O_NOREPLY	(-1)
#define O_ABANDONED	(-2)
static unsigned long hist_errno[4096], n_ok, n_noreply, n_abandoned, n_extack;
static unsigned long n_notreq, n_notreq_err;
static unsigned long n_dump_msgs, n_views_made, n_hooks_made, n_hooks_deleted;
static unsigned long n_gen[NGEN];
static struct { unsigned long n, ok; double secs; } tstat[NGEN][XPROBES_CMD_MAX + 2];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void hexdump(const char *what, const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i, j;

	printf("%s (%zu bytes):\n", what, n);
	for (i = 0; i < n; i += 16) {
		printf("  %04zx:", i);
		for (j = i; j < i + 16 && j < n; j++)
			printf(" %02x", b[j]);
		printf("\n");
	}
}

static int open_socket(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_sec = 10 };
	socklen_t sl = sizeof(sa);
	int one = 1, rcv = 4 << 20;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0) {
		perror("nlfuzz: socket");
		return -1;
	}
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl)) {
		perror("nlfuzz: bind");
		return -1;
	}
	portid = sa.nl_pid;
	return 0;
}

struct xfer {
	long idx;
	const unsigned char *req;
	int reqlen;
	uint32_t seq;
	int outcome;		/* O_* or a positive errno */
	int decided, extack, sentinel, dumping, dump_msgs;
	uint8_t sent_cmd;
};

static int malformed(struct xfer *x, const char *why, const unsigned char *rep, long n)
{
	printf("FAIL: message %ld: %s\n", x->idx, why);
	hexdump("request", x->req, x->reqlen);
	if (rep)
		hexdump("reply", rep, n > 4096 ? 4096 : n);
	fflush(stdout);
	return -1;
}

/* Walk an attribute area that must be exactly filled by valid attributes. */
static int attrs_ok(const unsigned char *p, int len)
{
	while (len >= NLA_HDRLEN) {
		const struct nlattr *a = (const struct nlattr *)p;

		if (a->nla_len < NLA_HDRLEN || a->nla_len > len)
			return 0;
		if (NLA_ALIGN(a->nla_len) >= len)
			return 1;
		len -= NLA_ALIGN(a->nla_len);
		p += NLA_ALIGN(a->nla_len);
	}
	return len == 0;
}

static uint32_t last_views = ~0u, last_hooks = ~0u;	/* from the last STATUS reply */

static void learn(struct xfer *x, const struct genlmsghdr *g, const struct nlattr *attrs, int len)
{
	const struct nlattr *a;

	if (g->cmd == XPROBES_CMD_STATUS) {
		a = genl_attr(attrs, len, XPROBES_A_NR_VIEWS);
		if (a && a->nla_len >= NLA_HDRLEN + 4)
			last_views = *(const uint32_t *)((const char *)a + NLA_HDRLEN);
		a = genl_attr(attrs, len, XPROBES_A_NR_HOOKS);
		if (a && a->nla_len >= NLA_HDRLEN + 4)
			last_hooks = *(const uint32_t *)((const char *)a + NLA_HDRLEN);
	} else if (g->cmd == XPROBES_CMD_VIEW_NEW) {
		a = genl_attr(attrs, len, XPROBES_A_PID);
		if (a && a->nla_len >= NLA_HDRLEN + 4) {
			note_pid(*(const uint32_t *)((const char *)a + NLA_HDRLEN));
			n_views_made++;
		}
	} else if (g->cmd == XPROBES_CMD_HOOK_ADD) {
		a = genl_attr(attrs, len, XPROBES_A_HOOK_ID);
		if (a && a->nla_len >= NLA_HDRLEN + 4) {
			hook_push(*(const uint32_t *)((const char *)a + NLA_HDRLEN));
			n_hooks_made++;
		}
	}
}

/* The error/done payload's extack TLVs: -1 malformed, else 1 if a message is there. */
static int ext_tlvs(const unsigned char *p, int len)
{
	int msg = 0;

	while (len >= NLA_HDRLEN) {
		const struct nlattr *a = (const struct nlattr *)p;

		if (a->nla_len < NLA_HDRLEN || a->nla_len > len)
			return -1;
		if ((a->nla_type & NLA_TYPE_MASK) == NLMSGERR_ATTR_MSG) {
			if (a->nla_len == NLA_HDRLEN || p[a->nla_len - 1] != 0)
				return -1;	/* not a NUL-terminated string */
			msg = 1;
		}
		len -= NLA_ALIGN(a->nla_len);
		p += NLA_ALIGN(a->nla_len);
	}
	return len <= 0 ? msg : -1;
}

static void decide(struct xfer *x, int outcome)
{
	if (!x->decided) {
		x->decided = 1;
		x->outcome = outcome;
	}
}

static int handle(struct xfer *x, const unsigned char *buf, long n)
{
	long off = 0;

	while (off < n) {
		const struct nlmsghdr *h = (const struct nlmsghdr *)(buf + off);
		long rem = n - off;
		const unsigned char *pl = (const unsigned char *)NLMSG_DATA(h);
		int plen;

		if (rem < NLMSG_HDRLEN)
			return malformed(x, "reply shorter than a netlink header", buf, n);
		if (h->nlmsg_len < NLMSG_HDRLEN || h->nlmsg_len > rem)
			return malformed(x, "reply nlmsg_len out of bounds", buf, n);
		if (h->nlmsg_pid != portid)
			return malformed(x, "reply addressed to another port id", buf, n);
		plen = h->nlmsg_len - NLMSG_HDRLEN;

		if (h->nlmsg_seq == x->seq + 1) {	/* the sentinel's ACK */
			const struct nlmsgerr *e = (const struct nlmsgerr *)pl;

			if (h->nlmsg_type != NLMSG_ERROR || plen < (int)sizeof(*e) || e->error ||
			    e->msg.nlmsg_seq != x->seq + 1 || x->sentinel)
				return malformed(x, "bad answer to the sentinel", buf, n);
			x->sentinel = 1;
		} else if (h->nlmsg_seq != x->seq) {
			return malformed(x, "reply with an unexpected sequence number", buf, n);
		} else if (h->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = (const struct nlmsgerr *)pl;
			int hl, t;

			if (plen < (int)sizeof(*e))
				return malformed(x, "NLMSG_ERROR too short", buf, n);
			if (e->error > 0 || e->error < -4095)
				return malformed(x, "NLMSG_ERROR with an impossible error code", buf, n);
			if (e->msg.nlmsg_seq != x->seq || e->msg.nlmsg_len != (uint32_t)x->reqlen)
				return malformed(x, "NLMSG_ERROR quotes another request", buf, n);
			hl = sizeof(*e);
			if (!(h->nlmsg_flags & NLM_F_CAPPED) && e->error)
				hl += NLMSG_ALIGN(e->msg.nlmsg_len) - NLMSG_HDRLEN;
			if (hl > plen)
				return malformed(x, "NLMSG_ERROR shorter than the request it quotes", buf, n);
			t = (h->nlmsg_flags & NLM_F_ACK_TLVS) ? ext_tlvs(pl + hl, plen - hl) : 0;
			if (t < 0)
				return malformed(x, "malformed extack attributes", buf, n);
			if (x->decided && x->outcome != O_OK)
				return malformed(x, "a second error for one request", buf, n);
			x->extack += t;
			decide(x, -e->error);
			if (x->dumping && e->error)
				x->dumping = 0;
			if (!e->error && x->dumping)
				return malformed(x, "an ACK in the middle of a dump", buf, n);
		} else if (h->nlmsg_type == NLMSG_DONE) {
			int err = 0, t = 0;

			if (plen >= 4) {
				memcpy(&err, pl, 4);
				if (err > 0 || err < -4095)
					return malformed(x, "NLMSG_DONE with an impossible error code", buf, n);
				if (h->nlmsg_flags & NLM_F_ACK_TLVS)
					t = ext_tlvs(pl + 4, plen - 4);
			}
			if (t < 0)
				return malformed(x, "malformed extack attributes in NLMSG_DONE", buf, n);
			x->extack += t;
			x->dumping = 0;
			decide(x, -err);
		} else if (h->nlmsg_type == family) {
			const struct genlmsghdr *g = (const struct genlmsghdr *)pl;

			if (plen < (int)GENL_HDRLEN)
				return malformed(x, "reply without a genl header", buf, n);
			if (g->version != XPROBES_GENL_VERSION || g->cmd != x->sent_cmd)
				return malformed(x, "reply for another command or version", buf, n);
			if (!attrs_ok(pl + GENL_HDRLEN, plen - GENL_HDRLEN))
				return malformed(x, "reply attributes malformed", buf, n);
			if (x->decided && x->dumping == 0 && (h->nlmsg_flags & NLM_F_MULTI))
				return malformed(x, "dump data after the dump ended", buf, n);
			if (h->nlmsg_flags & NLM_F_MULTI) {
				x->dumping = 1;
				x->dump_msgs++;
				n_dump_msgs++;
			} else {
				decide(x, O_OK);
			}
			learn(x, g, (const struct nlattr *)(pl + GENL_HDRLEN), plen - GENL_HDRLEN);
		} else {
			return malformed(x, "reply of an unexpected type", buf, n);
		}
		off += NLMSG_ALIGN(h->nlmsg_len);
	}
	return 0;
}

/*
 * Send one request (plus the sentinel) and read everything it causes.
 * Returns 0 (x->outcome set) or -1 on a local failure.
 */
static int exchange(struct xfer *x)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	struct nlmsghdr *s;
	size_t total = NLMSG_ALIGN(x->reqlen);

	if (x->req != sbuf)
		memcpy(sbuf, x->req, x->reqlen);
	memset(sbuf + x->reqlen, 0, total - x->reqlen);
	s = (struct nlmsghdr *)(sbuf + total);
	memset(s, 0, sizeof(*s));
	s->nlmsg_len = NLMSG_HDRLEN;
	s->nlmsg_type = NLMSG_NOOP;
	s->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	s->nlmsg_seq = x->seq + 1;
	total += NLMSG_HDRLEN;

	x->outcome = O_NOREPLY;
	if (sendto(fd, sbuf, total, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0) {
		printf("FAIL: message %ld: send: %s\n", x->idx, strerror(errno));
		hexdump("request", x->req, x->reqlen);
		return -1;
	}
	while (!x->sentinel || x->dumping) {
		ssize_t n = recv(fd, rbuf, sizeof(rbuf), MSG_TRUNC);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			printf("FAIL: message %ld: %s\n", x->idx, errno == EAGAIN ?
			       "the kernel did not answer within 10 s" : strerror(errno));
			hexdump("request", x->req, x->reqlen);
			fflush(stdout);
			return -1;
		}
		if (n == 0 || n > (ssize_t)sizeof(rbuf))
			return malformed(x, n ? "reply larger than 128 KiB" : "empty reply", rbuf,
					 n ? (long)sizeof(rbuf) : 0);
		if (handle(x, rbuf, n))
			return -1;
		if (x->dumping && x->dump_msgs > DUMP_LIMIT) {
			/* Too long a dump to read out: drop the socket under it. */
			close(fd);
			if (open_socket())
				return -1;
			x->outcome = O_ABANDONED;
			x->decided = 1;
			return 0;
		}
	}
	if (x->dumping)
		return malformed(x, "dump without an end", NULL, 0);
	return 0;
}

static void account(struct xfer *x, struct fmsg *m, double secs)
{
	int t = m->tmpl <= XPROBES_CMD_MAX ? m->tmpl : XPROBES_CMD_MAX + 1;

	if (!(m->flags & NLM_F_REQUEST)) {
		/* Not a request: the kernel only ACKs it if asked to. */
		n_notreq++;
		n_notreq_err += x->outcome > 0;
	}
	if (x->outcome == O_OK)
		n_ok++;
	else if (x->outcome == O_NOREPLY)
		n_noreply++;
	else if (x->outcome == O_ABANDONED)
		n_abandoned++;
	else
		hist_errno[x->outcome < 4096 ? x->outcome : 4095]++;
	n_extack += x->extack > 0;
	n_gen[m->gen]++;
	tstat[m->gen][t].n++;
	tstat[m->gen][t].ok += x->outcome == O_OK;
	tstat[m->gen][t].secs += secs;
	if (m->nodel) {
		hook_drop(m->del_id);
		if (x->outcome == O_OK)
			n_hooks_deleted++;
	}
}

/* A plain request built with genl.h, for the clean-up. */
static int simple(long idx, struct genl_req *req, struct xfer *x)
{
	memset(x, 0, sizeof(*x));
	x->idx = idx;
	x->req = (const unsigned char *)req->h;
	x->reqlen = req->h->nlmsg_len;
	x->seq = req->h->nlmsg_seq = 0x40000000 + 2 * (uint32_t)idx;
	x->sent_cmd = ((struct genlmsghdr *)NLMSG_DATA(req->h))->cmd;
	return exchange(x);
}

static int cleanup(void)
{
	static struct genl_req req;
	struct xfer x;
	unsigned long deleted = 0;
	int i;

	note_pid(self);
	for (i = 0; i < nlive; i++)
		note_pid(live[i]);
	for (i = 0; i < nused; i++) {
		genl_begin(&req, family, XPROBES_CMD_VIEW_DEL, 0);
		genl_put_u32(&req, XPROBES_A_PID, used_pids[i]);
		if (simple(i, &req, &x))
			return -1;
		if (x.outcome == O_OK)
			deleted++;
		else if (x.outcome != ENOENT && x.outcome != ESRCH)
			printf("cleanup: VIEW_DEL %u: errno %d (%s)\n", used_pids[i], x.outcome,
			       x.outcome > 0 ? strerror(x.outcome) : "?");
	}
	/* What is left, from a STATUS reply. */
	genl_begin(&req, family, XPROBES_CMD_STATUS, 0);
	last_views = last_hooks = ~0u;
	if (simple(nused, &req, &x))
		return -1;
	printf("cleanup: %lu views deleted (%d pids tried); module now has %d views, %d hooks\n",
	       deleted, nused, (int)last_views, (int)last_hooks);
	if (last_views || last_hooks)
		printf("WARNING: views or hooks left after the clean-up\n");
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: nlfuzz [-s SEED] [-n MESSAGES] [-p PID]... [-x INDEX]... [-q]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const char *const cmd_names[XPROBES_CMD_MAX + 2] = {
		"UNSPEC", "STATUS", "VIEW_NEW", "VIEW_DEL", "VIEW_GET", "HOOK_ADD", "HOOK_DEL",
		"HOOK_GET", "PEEK", "VIEW_ENDED", "AUDIT", "WALK", "(none)",
	};
	static struct fmsg m;
	uint64_t seed = 0;
	long n = 100000, xs[16], i;
	int have_seed = 0, nx = 0, quiet = 0, opt, j, k;
	double t0, t1;

	while ((opt = getopt(argc, argv, "s:n:p:x:q")) != -1) {
		switch (opt) {
		case 's': seed = strtoull(optarg, NULL, 0); have_seed = 1; break;
		case 'n': n = strtol(optarg, NULL, 0); break;
		case 'p':
			if (nlive < (int)N_OF(live))
				live[nlive++] = strtoul(optarg, NULL, 0);
			break;
		case 'x':
			if (nx < (int)N_OF(xs))
				xs[nx++] = strtol(optarg, NULL, 0);
			break;
		case 'q': quiet = 1; break;
		default: usage();
		}
	}
	if (optind != argc || n < 0)
		usage();
	if (!have_seed) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		seed = (uint64_t)ts.tv_sec * 1000003u ^ ts.tv_nsec ^ ((uint64_t)getpid() << 32);
	}
	printf("seed %llu\n", (unsigned long long)seed);
	fflush(stdout);
	self = getpid();
	setvbuf(stdout, NULL, _IOLBF, 0);

	read_kallsyms();
	if (open_socket())
		return 1;
	family = genl_family(fd, XPROBES_GENL_NAME);
	if (!family) {
		printf("FAIL: generic netlink family %s not found\n", XPROBES_GENL_NAME);
		return 1;
	}
	printf("family %u, port %u, text %#llx-%#llx, live pids:", family, portid,
	       (unsigned long long)stext, (unsigned long long)etext);
	for (j = 0; j < nlive; j++)
		printf(" %u", live[j]);
	printf(" (self %u)\n", self);

	t0 = now();
	for (i = 0; i < n; i++) {
		struct rng r = { .s = seed ^ (0xd1b54a32d192ed03ULL * (uint64_t)(i + 1)) };
		struct xfer x = { .idx = i, .req = sbuf, .seq = 2 * (uint32_t)i + 1 };
		int show = 0;
		double ts;

		rnext(&r);
		if (chance(&r, 350))
			gen_random(&m, &r);
		else
			gen_mutation(&m, &r);
		x.reqlen = serialize(&m, &r, sbuf, family, x.seq);
		x.sent_cmd = x.reqlen >= NLMSG_HDRLEN + 1 ? sbuf[NLMSG_HDRLEN] : 0;
		for (j = 0; j < nx; j++)
			show |= xs[j] == i;
		if (show) {
			char what[64];

			snprintf(what, sizeof(what), "message %ld (%s, template %s)", i,
				 gen_names[m.gen],
				 cmd_names[m.tmpl <= XPROBES_CMD_MAX ? m.tmpl : XPROBES_CMD_MAX + 1]);
			hexdump(what, sbuf, x.reqlen);
		}
		ts = now();
		if (exchange(&x))
			return 1;
		account(&x, &m, now() - ts);
		if (show)
			printf("message %ld: outcome %d%s\n", i, x.outcome, x.extack ? " (extack)" : "");
		if (!quiet && n >= 10 && (i + 1) % (n / 10) == 0)
			printf("progress %ld/%ld %.1fs\n", i + 1, n, now() - t0);
	}
	t1 = now();

	printf("messages %ld in %.1f s (%.0f/s): random %lu, mutated %lu, well-formed %lu\n",
	       n, t1 - t0, n / (t1 - t0 > 0 ? t1 - t0 : 1), n_gen[GEN_RANDOM],
	       n_gen[GEN_MUTATED], n_gen[GEN_WELLFORMED]);
	printf("ok: %lu\n", n_ok);
	if (n_noreply)
		printf("no reply (no ACK asked for): %lu\n", n_noreply);
	if (n_notreq)
		printf("(of all outcomes: %lu not requests (no NLM_F_REQUEST), %lu of them refused)\n",
		       n_notreq, n_notreq_err);
	if (n_abandoned)
		printf("dumps abandoned after %d messages: %lu\n", DUMP_LIMIT, n_abandoned);
	for (k = 1; k < 4096; k++)
		if (hist_errno[k])
			printf("errno %d (%s): %lu\n", k, strerror(k), hist_errno[k]);
	printf("extack messages: %lu\n", n_extack);
	printf("dump messages read: %lu; views made %lu, hooks made %lu, hooks deleted %lu\n",
	       n_dump_msgs, n_views_made, n_hooks_made, n_hooks_deleted);
	printf("time by template (generator command: messages, ok, total ms):\n");
	for (j = 0; j < NGEN; j++)
		for (k = 0; k <= XPROBES_CMD_MAX + 1; k++)
			if (tstat[j][k].n)
				printf("  %-11s %-10s %7lu %7lu %9.1f\n", gen_names[j], cmd_names[k],
				       tstat[j][k].n, tstat[j][k].ok, tstat[j][k].secs * 1000);
	if (cleanup())
		return 1;
	return 0;
}
