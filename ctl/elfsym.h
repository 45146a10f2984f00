/* SPDX-License-Identifier: GPL-2.0 */
/* Function symbols of an ELF file, as uprobe file offsets; and finding libraries. */
#ifndef XPROBECTL_ELFSYM_H
#define XPROBECTL_ELFSYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <libelf.h>

/* An executable PT_LOAD segment: where it is loaded and where in the file. */
struct elf_seg {
	uint64_t vaddr, memsz, filesz, offset;
};

/* The executable PT_LOAD segments of E into SEGS, at most MAX: how many. */
size_t elf_exec_segs(Elf *e, struct elf_seg *segs, size_t max);

/* The file offset of address VA, if one of the N segments SEGS has it there. */
bool elf_va_off(const struct elf_seg *segs, size_t n, uint64_t va, uint64_t *off);

/* The bytes of PATH's executable PT_LOAD segments; UINT64_MAX if it is no ELF file. */
uint64_t elf_exec_bytes(const char *path);

/* Called once per distinct function (aliases at one offset are reported once, by one name). */
typedef int (*elf_func_cb)(const char *name, uint64_t offset, uint64_t size, void *arg);

/*
 * Walk the defined STT_FUNC symbols of PATH (.symtab, then .dynsym), turning
 * each address into a file offset through the executable PT_LOAD segments.
 * Returns 0, a callback's nonzero value, or -errno with *why set.
 */
int elf_funcs(const char *path, elf_func_cb cb, void *arg, const char **why);

/*
 * The same, with every name of the function: NAMES[0] is the one
 * elf_funcs() gives (the first in the symbol tables), then its aliases
 * (glibc's write, __write and __libc_write share one address). Called in
 * the order of the offsets.
 */
typedef int (*elf_alias_cb)(const char *const *names, size_t n, uint64_t offset,
			    uint64_t size, void *arg);
int elf_funcs_aliases(const char *path, elf_alias_cb cb, void *arg, const char **why);

/*
 * The file offset of PATH's ELF entry point (e_entry): where the kernel or
 * the dynamic loader jumps, with no return address on the stack. 0 or
 * -errno (-ENOENT: it has none in its executable segments).
 */
int elf_entry_offset(const char *path, uint64_t *off);

/* Does PATH name a library starting with PREFIX among its DT_NEEDED? */
bool elf_needs(const char *path, const char *prefix);

/* Does the ELF file at PATH take one of the N functions NAMES from a library? */
bool elf_imports(const char *path, const char *const *names, size_t n);

/* Has the ELF file at PATH a section NAME (".go.buildinfo": a Go program)? */
bool elf_has_section(const char *path, const char *name);

/*
 * The file of library LIB ("c", "libc", "libc.so.6" or a path) as mapped by
 * PID, else as found in the usual library directories (a command that has
 * not run its loader yet). OUT holds PATH_MAX bytes. Returns 0, or -ENOENT.
 */
int find_library(pid_t pid, const char *lib, char *out, size_t len);

/* The same, as mapped by PID only. */
int find_mapped_library(pid_t pid, const char *lib, char *out, size_t len);

/* The executable of PID (/proc/PID/exe) into EXE (PATH_MAX bytes): 0 or -errno. */
int pid_exe(pid_t pid, char *exe);

/*
 * Where PID maps byte OFFSET of the file PATH executable: 0 and *ADDR, or
 * -ENOENT (not mapped there, or not executable) or -errno.
 */
int pid_file_addr(pid_t pid, const char *path, uint64_t offset, uint64_t *addr);

/*
 * PID's executable file mappings as /proc/PID/maps shows them now, read
 * once for many lookups (pid_file_addr() reads it at each): NULL and
 * *ERRP = -errno if it cannot be read. pid_maps_addr() is pid_file_addr()
 * on that snapshot.
 */
struct pid_maps;
struct pid_maps *pid_maps_read(pid_t pid, int *errp);
int pid_maps_addr(const struct pid_maps *pm, const char *path, uint64_t offset, uint64_t *addr);
void pid_maps_free(struct pid_maps *pm);

#endif
