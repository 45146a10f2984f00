/*
 * tbprof: a QEMU TCG plugin that counts the guest instructions executed per
 * translation block, by the block's start address: under -icount that is
 * where the guest's time goes (bench/tbprof/README.md). The guest drives it
 * through a host file (ctl=PATH): a line "SEQ reset" zeroes the counts,
 * "SEQ dump FILE" writes "vaddr instructions" lines to FILE; each new SEQ
 * is answered by creating ack.SEQ beside PATH.
 *
 * QEMU installs no plugin header; the few declarations of its plugin API
 * (version 1, as in QEMU 7.2) this uses are below.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
typedef struct qemu_info_t qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*tb_trans_cb)(qemu_plugin_id_t, struct qemu_plugin_tb *);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, tb_trans_cb cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op,
					      void *ptr, uint64_t imm);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

#define SLOTS (1u << 22)
struct slot { uint64_t vaddr, n, count; };
static struct slot *tab;
static const char *ctl;

/*
 * Translation runs on one thread with thread=single (the bench's); under
 * MTTCG two blocks could claim one slot at once, which skews a profile
 * and nothing else.
 */
static struct slot *slot_of(uint64_t vaddr, uint64_t n)
{
	uint64_t h = (vaddr * 0x9E3779B97F4A7C15ull ^ n) >> 42;
	unsigned int i;

	for (i = 0; i < SLOTS; i++) {
		struct slot *s = &tab[(h + i) & (SLOTS - 1)];

		if (s->n == n && s->vaddr == vaddr)
			return s;
		if (!s->n) {
			s->vaddr = vaddr;
			s->n = n;
			return s;
		}
	}
	return NULL;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	struct slot *s = slot_of(qemu_plugin_tb_vaddr(tb), n);

	if (s && n)
		qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &s->count, n);
}

/*
 * The guest writes "SEQ reset" or "SEQ dump FILE" into the control file;
 * each new SEQ is done once, then answered by creating "ack.SEQ" beside it
 * (a new name: nothing the guest's 9p client cached can stand for it).
 */
static void *poll_ctl(void *unused)
{
	char buf[512], ack[600], *cmd, *slash;
	long seq, last = 0;

	for (;;) {
		FILE *f = fopen(ctl, "r");
		size_t len = 0;

		usleep(20000);
		if (!f)
			continue;
		len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[len] = 0;
		if (!len || buf[len - 1] != '\n')
			continue;
		buf[len - 1] = 0;
		seq = strtol(buf, &cmd, 10);
		if (seq <= last || *cmd != ' ')
			continue;
		last = seq;
		cmd++;
		if (!strcmp(cmd, "reset")) {
			for (unsigned int i = 0; i < SLOTS; i++)
				tab[i].count = 0;
		} else if (!strncmp(cmd, "dump ", 5)) {
			FILE *o = fopen(cmd + 5, "w");

			for (unsigned int i = 0; o && i < SLOTS; i++)
				if (tab[i].count)
					fprintf(o, "%lx %lu\n", (unsigned long)tab[i].vaddr,
						(unsigned long)tab[i].count);
			if (o)
				fclose(o);
		}
		snprintf(ack, sizeof(ack), "%s", ctl);
		slash = strrchr(ack, '/');
		snprintf(slash ? slash + 1 : ack, sizeof(ack) - (slash ? slash + 1 - ack : 0),
			 "ack.%ld", seq);
		f = fopen(ack, "w");
		if (f)
			fclose(f);
	}
	return NULL;
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	pthread_t t;
	int i;

	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "ctl=", 4))
			ctl = argv[i] + 4;
	if (!ctl)
		return -1;
	tab = calloc(SLOTS, sizeof(*tab));
	if (!tab)
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	pthread_create(&t, NULL, poll_ctl, NULL);
	return 0;
}
