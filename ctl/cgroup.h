/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A cgroup v2 target (--cgroup): a container's or a systemd unit's cgroup,
 * named by its path. The directory may come and go (systemd removes a
 * unit's cgroup when it stops and makes a new one, with a new id, when it
 * starts again), so the id is looked up again on every refresh.
 */
#ifndef XPROBECTL_CGROUP_H
#define XPROBECTL_CGROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cgtarget {
	char dir[PATH_MAX];	/* the directory in the cgroup2 mount */
	char name[PATH_MAX];	/* the path from the hierarchy's root: "/system.slice/x.service" */
	uint64_t id;		/* the kernel's cgroup id (its directory's inode); 0: gone */
};

/*
 * ARG: a path from the cgroup2 hierarchy's root ("/system.slice/redis.service")
 * or a directory in its mount ("/sys/fs/cgroup/system.slice/redis.service").
 * -1 with a message when there is no cgroup2 mount, or ARG is its root; a
 * cgroup that does not exist yet is not an error (id 0).
 */
int cgroup_parse(const char *arg, struct cgtarget *cg);
/* Look the id up again; true when it changed (made, removed, made again). */
bool cgroup_refresh(struct cgtarget *cg);
/* Its directory, opened (a CGROUP_ARRAY's value); -1 with errno. */
int cgroup_open(const struct cgtarget *cg);
/*
 * The processes in the cgroup and every cgroup below it, into *PIDS (grown
 * with realloc; *CAP its size): their number, 0 when the cgroup is gone.
 */
size_t cgroup_procs(const struct cgtarget *cg, pid_t **pids, size_t *cap);
/* NAME made fit for a file name (textfile collector): '/' and the like as '_'. */
void cgroup_file_name(const struct cgtarget *cg, char *out, size_t len);

#endif
