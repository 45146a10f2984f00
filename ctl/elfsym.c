// SPDX-License-Identifier: GPL-2.0
/* Function symbols of an ELF file, as uprobe file offsets; and finding libraries. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <glob.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "elfsym.h"

/*
 * GCC's cold part of a function (foo.cold, foo.cold.3) is typed as a
 * function but entered by a jump from the function's body: the word at the
 * stack pointer there is the function's data, not a return address, and a
 * return probe of either kind would overwrite it. Not a function to trace.
 */
static bool cold_part(const char *name)
{
	const char *c = strstr(name, ".cold");

	return c && (c[5] == '\0' || c[5] == '.');
}

size_t elf_exec_segs(Elf *e, struct elf_seg *segs, size_t max)
{
	size_t phnum, i, n = 0;

	if (elf_getphdrnum(e, &phnum))
		return 0;
	for (i = 0; i < phnum && n < max; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
			segs[n++] = (struct elf_seg){ ph.p_vaddr, ph.p_memsz, ph.p_filesz, ph.p_offset };
	}
	return n;
}

bool elf_va_off(const struct elf_seg *segs, size_t n, uint64_t va, uint64_t *off)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (va >= segs[i].vaddr && va < segs[i].vaddr + segs[i].filesz) {
			*off = va - segs[i].vaddr + segs[i].offset;
			return true;
		}
	return false;
}

int elf_entry_offset(const char *path, uint64_t *off)
{
	struct elf_seg segs[16];
	size_t nsegs;
	GElf_Ehdr eh;
	int fd, ret = -ENOENT;
	Elf *e;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e && elf_kind(e) == ELF_K_ELF && gelf_getehdr(e, &eh) && eh.e_entry) {
		nsegs = elf_exec_segs(e, segs, 16);
		if (elf_va_off(segs, nsegs, eh.e_entry, off))
			ret = 0;
	}
	if (e)
		elf_end(e);
	close(fd);
	return ret;
}

/* PATH's ELF, to read; NULL if it cannot be. Let go with elf_done(). */
static Elf *elf_read(const char *path, int *fd)
{
	Elf *e;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return NULL;
	e = elf_begin(*fd, ELF_C_READ, NULL);
	if (!e)
		close(*fd);
	return e;
}

static void elf_done(Elf *e, int fd)
{
	elf_end(e);
	close(fd);
}

uint64_t elf_exec_bytes(const char *path)
{
	struct elf_seg segs[16];
	uint64_t bytes = UINT64_MAX;
	size_t i, n;
	int fd;
	Elf *e = elf_read(path, &fd);

	if (!e)
		return bytes;
	if (elf_kind(e) == ELF_K_ELF) {
		n = elf_exec_segs(e, segs, sizeof(segs) / sizeof(segs[0]));
		for (bytes = 0, i = 0; i < n; i++)
			bytes += segs[i].filesz;
	}
	elf_done(e, fd);
	return bytes;
}

bool elf_has_section(const char *path, const char *name)
{
	bool found = false;
	Elf_Scn *scn = NULL;
	const char *n;
	GElf_Shdr sh;
	size_t shstr;
	int fd;
	Elf *e = elf_read(path, &fd);

	if (!e)
		return false;
	if (!elf_getshdrstrndx(e, &shstr))
		while (!found && (scn = elf_nextscn(e, scn)))
			found = gelf_getshdr(scn, &sh) && (n = elf_strptr(e, shstr, sh.sh_name)) &&
				!strcmp(n, name);
	elf_done(e, fd);
	return found;
}

bool elf_needs(const char *path, const char *prefix)
{
	bool found = false;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Dyn dyn;
	Elf_Data *d;
	size_t i;
	int fd;
	Elf *e = elf_read(path, &fd);

	if (!e)
		return false;
	while (!found && (scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && !found && i < sh.sh_size / sh.sh_entsize; i++) {
			const char *name;

			if (!gelf_getdyn(d, i, &dyn) || dyn.d_tag != DT_NEEDED)
				continue;
			name = elf_strptr(e, sh.sh_link, dyn.d_un.d_val);
			found = name && !strncmp(name, prefix, strlen(prefix));
		}
	}
	elf_done(e, fd);
	return found;
}

bool elf_imports(const char *path, const char *const *names, size_t n)
{
	bool found = false;
	Elf_Scn *scn = NULL;
	const char *name;
	GElf_Shdr sh;
	GElf_Sym sym;
	Elf_Data *d;
	size_t i, j;
	int fd;
	Elf *e = elf_read(path, &fd);

	if (!e)
		return false;
	while (!found && (scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && !found && i < sh.sh_size / sh.sh_entsize; i++) {
			if (!gelf_getsym(d, i, &sym) || sym.st_shndx != SHN_UNDEF ||
			    !(name = elf_strptr(e, sh.sh_link, sym.st_name)))
				continue;
			for (j = 0; j < n && !found; j++)
				found = !strcmp(name, names[j]);
		}
	}
	elf_done(e, fd);
	return found;
}

/* A function symbol: its file offset, size and name (in the ELF's string table). */
struct fsym {
	uint64_t off, size;
	size_t order;		/* .symtab first, then .dynsym, each in its order */
	const char *name;
};

static int cmp_fsym(const void *a, const void *b)
{
	const struct fsym *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Every defined function symbol of E with a file offset, into *OUT (*N of them). */
static int collect_funcs(Elf *e, struct fsym **out, size_t *n, const char **why)
{
	struct elf_seg segs[16];
	size_t nsegs = elf_exec_segs(e, segs, 16), cap = 0;
	struct fsym *v = NULL, *nv;
	Elf_Scn *scn;
	int pass;

	*n = 0;
	/* .symtab has everything when present; .dynsym adds its duplicates, grouped later */
	for (pass = 0; pass < 2; pass++) {
		for (scn = NULL; (scn = elf_nextscn(e, scn)) != NULL;) {
			GElf_Shdr sh;
			Elf_Data *data;
			size_t cnt, k, s;

			if (!gelf_getshdr(scn, &sh) ||
			    sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB) || !sh.sh_entsize)
				continue;
			data = elf_getdata(scn, NULL);
			cnt = sh.sh_size / sh.sh_entsize;
			for (k = 0; data && k < cnt; k++) {
				GElf_Sym sym;
				const char *name;

				if (!gelf_getsym(data, k, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
				    sym.st_shndx == SHN_UNDEF || !sym.st_value)
					continue;
				name = elf_strptr(e, sh.sh_link, sym.st_name);
				if (!name || !*name || cold_part(name))
					continue;
				for (s = 0; s < nsegs; s++)
					if (sym.st_value >= segs[s].vaddr &&
					    sym.st_value < segs[s].vaddr + segs[s].memsz)
						break;
				if (s == nsegs)
					continue;
				if (*n == cap) {
					cap = cap ? cap * 2 : 1024;
					nv = realloc(v, cap * sizeof(*v));
					if (!nv) {
						free(v);
						*why = "out of memory";
						return -ENOMEM;
					}
					v = nv;
				}
				v[*n] = (struct fsym){
					.off = sym.st_value - segs[s].vaddr + segs[s].offset,
					.size = sym.st_size, .order = *n, .name = name,
				};
				(*n)++;
			}
		}
	}
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_fsym);
	*out = v;
	return 0;
}

int elf_funcs_aliases(const char *path, elf_alias_cb cb, void *arg, const char **why)
{
	const char *names[64];
	struct fsym *v = NULL;
	size_t n = 0, i, j, k, nn, phnum;
	int fd, ret;
	Elf *e;

	*why = "";
	if (elf_version(EV_CURRENT) == EV_NONE) {
		*why = "libelf is too old";
		return -EINVAL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*why = strerror(errno);
		return -errno;
	}
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || elf_getphdrnum(e, &phnum)) {
		*why = "not an ELF file";
		ret = -ENOEXEC;
		goto out;
	}
	ret = collect_funcs(e, &v, &n, why);
	/* one call per offset, with each distinct name there (the first one first) */
	for (i = 0; !ret && i < n; i = j) {
		nn = 0;
		for (j = i; j < n && v[j].off == v[i].off; j++) {
			for (k = 0; k < nn && strcmp(names[k], v[j].name); k++)
				;
			if (k == nn && nn < sizeof(names) / sizeof(names[0]))
				names[nn++] = v[j].name;
		}
		ret = cb(names, nn, v[i].off, v[i].size, arg);
	}
out:
	free(v);
	if (e)
		elf_end(e);
	close(fd);
	return ret;
}

struct first_name {
	elf_func_cb cb;
	void *arg;
};

static int call_first(const char *const *names, size_t n, uint64_t off, uint64_t size, void *arg)
{
	struct first_name *f = arg;

	return f->cb(names[0], off, size, f->arg);
}

int elf_funcs(const char *path, elf_func_cb cb, void *arg, const char **why)
{
	struct first_name f = { .cb = cb, .arg = arg };

	return elf_funcs_aliases(path, call_first, &f, why);
}

/* "c" matches libc.so.6, "libc" and "libc.so.6" too; "pthread" libpthread.so.0. */
static int lib_matches(const char *base, const char *lib)
{
	size_t n = strlen(lib);

	if (!strcmp(base, lib))
		return 1;
	if (!strncmp(base, lib, n) && (!strncmp(base + n, ".so", 3) || base[n] == '-'))
		return 1;
	if (!strncmp(base, "lib", 3) && !strncmp(base + 3, lib, n) &&
	    (!strncmp(base + 3 + n, ".so", 3) || base[3 + n] == '-'))
		return 1;
	return 0;
}

int find_mapped_library(pid_t pid, const char *lib, char *out, size_t len)
{
	char line[PATH_MAX + 128], path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/'), *base;

		if (!p)
			continue;
		p[strcspn(p, "\n")] = 0;
		base = strrchr(p, '/') + 1;
		if (lib_matches(base, lib)) {
			snprintf(out, len, "%s", p);
			fclose(f);
			return 0;
		}
	}
	if (f)
		fclose(f);
	return -ENOENT;
}

static bool is_elf(const char *path)
{
	int fd;
	Elf *e = elf_read(path, &fd);
	bool elf = e && elf_kind(e) == ELF_K_ELF;

	if (e)
		elf_done(e, fd);
	return elf;
}

int find_library(pid_t pid, const char *lib, char *out, size_t len)
{
	static const char *const dirs[] = {
		"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64",
		"/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib",
	};
	char path[PATH_MAX];
	size_t i;

	if (strchr(lib, '/')) {
		if (access(lib, R_OK))
			return -ENOENT;
		snprintf(out, len, "%s", lib);
		return 0;
	}
	if (!find_mapped_library(pid, lib, out, len))
		return 0;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		glob_t g;
		size_t k;

		snprintf(path, sizeof(path), "%s/*%s*", dirs[i], lib);
		if (glob(path, 0, NULL, &g))
			continue;
		for (k = 0; k < g.gl_pathc; k++) {
			/* libc.so is a linker script: the loader maps libc.so.6 */
			if (lib_matches(strrchr(g.gl_pathv[k], '/') + 1, lib) &&
			    is_elf(g.gl_pathv[k]) && realpath(g.gl_pathv[k], out)) {
				globfree(&g);
				return 0;
			}
		}
		globfree(&g);
	}
	return -ENOENT;
}

int pid_exe(pid_t pid, char *exe)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, exe, PATH_MAX - 1);
	if (n < 0)
		return -errno;
	exe[n] = 0;
	return 0;
}

/* One executable file mapping of a process (pid_maps_read()). */
struct pid_map {
	uint64_t lo, hi, off;
	char *path;
};

struct pid_maps {
	struct pid_map *m;
	size_t n;
};

void pid_maps_free(struct pid_maps *pm)
{
	size_t i;

	if (!pm)
		return;
	for (i = 0; i < pm->n; i++)
		free(pm->m[i].path);
	free(pm->m);
	free(pm);
}

struct pid_maps *pid_maps_read(pid_t pid, int *errp)
{
	char line[PATH_MAX + 128], maps[64], perms[8];
	unsigned long long lo, hi, off;
	struct pid_maps *pm;
	size_t cap = 0;
	int n;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	f = fopen(maps, "re");
	if (!f) {
		*errp = -errno;
		return NULL;
	}
	pm = calloc(1, sizeof(*pm));
	if (!pm)
		goto nomem;
	while (fgets(line, sizeof(line), f)) {
		char *p;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &lo, &hi, perms, &off, &n) < 4 ||
		    perms[2] != 'x')
			continue;
		p = line + n;
		p[strcspn(p, "\n")] = 0;
		if (pm->n == cap) {
			struct pid_map *m = realloc(pm->m, (cap = cap ? 2 * cap : 32) * sizeof(*m));

			if (!m)
				goto nomem;
			pm->m = m;
		}
		pm->m[pm->n] = (struct pid_map){ lo, hi, off, strdup(p) };
		if (!pm->m[pm->n++].path)
			goto nomem;
	}
	fclose(f);
	return pm;
nomem:
	fclose(f);
	pid_maps_free(pm);
	*errp = -ENOMEM;
	return NULL;
}

int pid_maps_addr(const struct pid_maps *pm, const char *path, uint64_t offset, uint64_t *addr)
{
	size_t i;

	for (i = 0; i < pm->n; i++) {
		const struct pid_map *m = &pm->m[i];

		if (offset < m->off || offset >= m->off + (m->hi - m->lo) || strcmp(m->path, path))
			continue;
		*addr = m->lo + (offset - m->off);
		return 0;
	}
	return -ENOENT;
}

int pid_file_addr(pid_t pid, const char *path, uint64_t offset, uint64_t *addr)
{
	struct pid_maps *pm;
	int err;

	pm = pid_maps_read(pid, &err);
	if (!pm)
		return err;
	err = pid_maps_addr(pm, path, offset, addr);
	pid_maps_free(pm);
	return err;
}
