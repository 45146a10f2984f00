// SPDX-License-Identifier: GPL-2.0
/*
 * kread ADDRESS [LEN]: print LEN bytes (default 16) of kernel memory at
 * ADDRESS, read through /proc/kcore, as hex. /proc/kcore reads kernel text
 * through the kernel's own mappings, not the caller's page tables, so this is
 * what the shared text holds whatever view the caller has.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	unsigned long long addr;
	size_t len = 16, i;
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	unsigned char buf[4096];
	int fd, n;

	if (argc < 2)
		return 2;
	addr = strtoull(argv[1], NULL, 16);
	if (argc > 2)
		len = strtoul(argv[2], NULL, 0);
	if (len > sizeof(buf))
		return 2;
	fd = open("/proc/kcore", O_RDONLY);
	if (fd < 0 || pread(fd, &eh, sizeof(eh), 0) != sizeof(eh)) {
		perror("kread: /proc/kcore");
		return 1;
	}
	for (n = 0; n < eh.e_phnum; n++) {
		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + (off_t)n * eh.e_phentsize) != sizeof(ph))
			break;
		if (ph.p_type != PT_LOAD || addr < ph.p_vaddr || addr + len > ph.p_vaddr + ph.p_memsz)
			continue;
		if (pread(fd, buf, len, ph.p_offset + (addr - ph.p_vaddr)) != (ssize_t)len) {
			perror("kread: read");
			return 1;
		}
		for (i = 0; i < len; i++)
			printf("%02x%s", buf[i], i + 1 < len ? " " : "\n");
		return 0;
	}
	fprintf(stderr, "kread: %llx is not in /proc/kcore\n", addr);
	return 1;
}
