// SPDX-License-Identifier: GPL-2.0
/* See cgroup.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cgroup.h"

/* Where the cgroup2 hierarchy is mounted (the first such mount), into MP. */
static int cgroup2_mount(char *mp, size_t len)
{
	char line[4096], *sep, *f[5], *save, *p;
	FILE *m = fopen("/proc/self/mountinfo", "re");
	int i, found = -1;

	if (!m)
		return -1;
	while (found && fgets(line, sizeof(line), m)) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT ... - FSTYPE SOURCE OPTIONS */
		sep = strstr(line, " - ");
		if (!sep || strncmp(sep + 3, "cgroup2 ", 8))
			continue;
		p = line;
		for (i = 0; i < 5; i++, p = NULL)
			f[i] = strtok_r(p, " ", &save);
		if (!f[4] || strchr(f[4], '\\'))	/* a mount point with escapes: not ours */
			continue;
		snprintf(mp, len, "%s", f[4]);
		found = 0;
	}
	fclose(m);
	return found;
}

int cgroup_parse(const char *arg, struct cgtarget *cg)
{
	char mp[PATH_MAX], rel[PATH_MAX], *p, *tok, *save;
	size_t n = strlen(arg);
	struct stat st;
	int level = 0;

	memset(cg, 0, sizeof(*cg));
	if (cgroup2_mount(mp, sizeof(mp))) {
		fprintf(stderr, "xprobectl: no cgroup2 hierarchy is mounted (mount -t cgroup2 none "
			"/sys/fs/cgroup); --cgroup needs cgroup v2\n");
		return -1;
	}
	n = strlen(mp);
	if (!strncmp(arg, mp, n) && (arg[n] == '/' || !arg[n])) {
		arg += n;		/* a directory in the mount */
	} else if (arg[0] == '/' && arg[strspn(arg, "/")] && !stat(arg, &st)) {
		/* /etc, /etc/passwd: a cgroup that does not exist yet would be waited for */
		fprintf(stderr, "xprobectl: --cgroup %s: a path outside the cgroup2 mount (%s): "
			"give the cgroup's path from its root (e.g. /system.slice/redis-server"
			".service) or its directory under %s\n", arg, mp, mp);
		return -1;
	}
	snprintf(rel, sizeof(rel), "%s", arg);
	/* the components, checked, and the name rebuilt from them */
	cg->name[0] = 0;
	for (tok = strtok_r(rel, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		if (!strcmp(tok, ".") || !strcmp(tok, "..")) {
			fprintf(stderr, "xprobectl: cgroup '%s': '.' and '..' are not allowed; give the path from "
				"the cgroup2 root, e.g. /system.slice/redis-server.service\n",
				arg);
			return -1;
		}
		p = cg->name + strlen(cg->name);
		if (snprintf(p, sizeof(cg->name) - (p - cg->name), "/%s", tok) >=
		    (int)(sizeof(cg->name) - (p - cg->name))) {
			fprintf(stderr, "xprobectl: cgroup path too long\n");
			return -1;
		}
		level++;
	}
	if (!level) {
		fprintf(stderr, "xprobectl: the root cgroup is the whole machine: give a PID or a "
			"cgroup below the root\n");
		return -1;
	}
	if (snprintf(cg->dir, sizeof(cg->dir), "%s%s", mp, cg->name) >=
	    (int)sizeof(cg->dir)) {
		fprintf(stderr, "xprobectl: cgroup path too long\n");
		return -1;
	}
	if (!stat(cg->dir, &st) && !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "xprobectl: --cgroup %s: a file, not a cgroup (cgroups are "
			"directories)\n", cg->dir);
		return -1;
	}
	cgroup_refresh(cg);
	return 0;
}

bool cgroup_refresh(struct cgtarget *cg)
{
	struct stat st;
	uint64_t id = 0;

	/* cgroupfs numbers a cgroup's directory by its id (kernfs, 64-bit) */
	if (!stat(cg->dir, &st) && S_ISDIR(st.st_mode))
		id = st.st_ino;
	if (id == cg->id)
		return false;
	cg->id = id;
	return true;
}

int cgroup_open(const struct cgtarget *cg)
{
	return open(cg->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static void add_procs(const char *dir, pid_t **pids, size_t *n, size_t *cap, int depth)
{
	char path[PATH_MAX];
	struct dirent *e;
	long v;
	FILE *f;
	DIR *d;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (f) {
		while (fscanf(f, "%ld", &v) == 1) {
			if (*n == *cap) {
				size_t c = *cap ? *cap * 2 : 64;
				pid_t *p = realloc(*pids, c * sizeof(*p));

				if (!p)
					break;
				*pids = p;
				*cap = c;
			}
			(*pids)[(*n)++] = (pid_t)v;
		}
		fclose(f);
	}
	if (depth > 32)		/* the kernel's own limit is far above real trees */
		return;
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < (int)sizeof(path))
			add_procs(path, pids, n, cap, depth + 1);
	}
	closedir(d);
}

size_t cgroup_procs(const struct cgtarget *cg, pid_t **pids, size_t *cap)
{
	size_t n = 0;

	add_procs(cg->dir, pids, &n, cap, 0);
	return n;
}

void cgroup_file_name(const struct cgtarget *cg, char *out, size_t len)
{
	const char *s = cg->name[1] ? cg->name + 1 : "root";
	size_t i;

	for (i = 0; s[i] && i + 1 < len; i++)
		out[i] = (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
			 (s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '.' ? s[i] : '_';
	if (len)
		out[i < len ? i : len - 1] = 0;
}
