// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xprobectl metrics: requests/s, saturation and slack of one server process
 * from its socket and wait syscalls (see metrics.h for what is summed).
 * Needs -mcpu=v3 (atomic exchange).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "metrics.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct metrics_acc);
} acc SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct metrics_last);
} last SEC(".maps");

#define S_IFMT		00170000
#define S_IFSOCK	0140000

/* Is fd a socket of the current process? */
static __always_inline bool fd_is_socket(__s64 fd)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct file **fds;
	struct file *f = NULL;
	unsigned int max;
	umode_t mode;

	if (fd < 0)
		return false;
	fds = BPF_CORE_READ(t, files, fdt, fd);
	max = BPF_CORE_READ(t, files, fdt, max_fds);
	if (fd >= max || bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) || !f)
		return false;
	mode = BPF_CORE_READ(f, f_inode, i_mode);
	return (mode & S_IFMT) == S_IFSOCK;
}

static __always_inline __u8 sysev_classify(__u32 nr, __u64 arg0)
{
	switch (nr) {
	case 44: case 46: case 307:		/* sendto sendmsg sendmmsg */
		return MC_SEND;
	case 45: case 47: case 299:		/* recvfrom recvmsg recvmmsg */
		return MC_RECV;
	case 1: case 20: case 40:		/* write writev sendfile(out_fd) */
		return fd_is_socket(arg0) ? MC_SEND : 0;
	case 0: case 19:			/* read readv */
		return fd_is_socket(arg0) ? MC_RECV : 0;
	case 232: case 281: case 441:		/* epoll_wait epoll_pwait epoll_pwait2 */
	case 7: case 271: case 23: case 270:	/* poll ppoll select pselect6 */
		return MC_WAIT;
	}
	return 0;
}

#include "sysev.bpf.h"

/* Time since the process's previous event of this kind (0: none); now is the last. */
static __always_inline __u64 gap_since(__u64 *last, __u64 now)
{
	__u64 prev = __sync_lock_test_and_set(last, now);

	return prev && now > prev ? now - prev : 0;
}

static __always_inline void sysev_done(void *ctx, struct sysev_slot *s, long ret, __u64 now)
{
	__u32 zero = 0;
	struct metrics_acc *a = bpf_map_lookup_elem(&acc, &zero);
	struct metrics_last *l = bpf_map_lookup_elem(&last, &zero);
	__u64 gap, g;
	bool fresh;

	if (!a || !l)
		return;
	if (s->cls == MC_WAIT) {
		a->waits++;
		a->wait_ns += now - s->ts;
		s->last_dir = 0;	/* what follows a wait is new work */
		return;
	}
	if (ret <= 0) {
		a->errors++;
		return;
	}
	fresh = s->last_dir != s->cls || s->last_fd != (__s32)s->arg0;
	s->last_dir = s->cls;
	s->last_fd = (__s32)s->arg0;
	if (s->cls == MC_SEND) {
		a->send_calls++;
		if (!fresh)
			return;
		a->sends++;
		gap = gap_since(&l->send_ts, now);
		if (gap) {
			a->send_gaps++;
			a->send_gap_ns += gap;
		}
		return;
	}
	a->recv_calls++;
	if (!fresh)
		return;
	a->recvs++;
	gap = gap_since(&l->recv_ts, now);
	if (gap) {
		g = gap >> METRICS_SQ_SHIFT;
		a->recv_gaps++;
		a->recv_gap_ns += gap;
		a->recv_gap_sq += g * g;
	}
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
