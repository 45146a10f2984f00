// SPDX-License-Identifier: GPL-2.0
/*
 * peek: the bytes at a kernel text address as one process's page tables
 * translate it. Reads the physical page the process would execute, through
 * the direct map, so it shows a private copy where the process has one.
 */
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <net/netlink.h>
#include "xprobes.h"

int xp_peek(u32 pid, unsigned long addr, u8 *buf, size_t len, struct netlink_ext_ack *extack)
{
	struct xp_walk_result w;
	struct mm_struct *mm;
	size_t done = 0;
	int err = 0;

	mm = xp_get_mm(pid, extack);
	if (!mm)
		return -ESRCH;

	/*
	 * The kernel half only changes under the view lock, and a module's
	 * text is not freed while it is held (its going notifier takes it).
	 */
	mutex_lock(&xp_views_lock);
	if (!xp_is_core_text(addr, len) && !xp_is_module_text(addr, len)) {
		NL_SET_ERR_MSG_FMT(extack, "%#lx+%zu is not inside kernel or module text", addr, len);
		err = -ERANGE;
		goto out;
	}
	while (done < len) {
		unsigned long a = addr + done;
		size_t n = min_t(size_t, len - done, PAGE_SIZE - (a & ~PAGE_MASK));

		err = xp_walk(mm->pgd, a, &w);
		if (err) {
			NL_SET_ERR_MSG_FMT(extack, "%#lx is not mapped in pid %u", a, pid);
			break;
		}
		memcpy(buf + done, __va(w.phys), n);
		done += n;
	}
out:
	mutex_unlock(&xp_views_lock);
	mmput(mm);
	return err;
}
