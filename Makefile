# SPDX-License-Identifier: GPL-2.0
# xprobes: one entry point. See README.md.
#
#   make deps     install Debian packages, fetch the target kernel (image + headers)
#   make          module (against KDIR), xprobectl, BPF objects, selftest programs
#   make check    everything: build, boot the VM, run all selftests, summary line
#   make demo     boot the VM, load the module, show what xprobes does
#   make vm CMD='...' [VM_SHARE=dir]   run CMD as root in the test VM
#   make clean

BUILD    ?= $(CURDIR)/build
KSERIES  ?= 6.12
KTREE    := $(BUILD)/kernel/current
KDIR     ?= $(KTREE)/headers
KIMAGE   ?= $(KTREE)/vmlinuz
KMODDIR  ?= $(KTREE)/modules
VMLINUX_BTF ?= $(KDIR)/vmlinux

CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
CFLAGS   ?= -O2 -g
XCFLAGS  := -Wall -Wextra -Wno-unused-parameter -std=gnu11 -D_GNU_SOURCE \
	    $(shell pkg-config --cflags libnl-genl-3.0 2>/dev/null || echo -I/usr/include/libnl3)
LDLIBS_CTL := -lnl-genl-3 -lnl-3 -lbpf -lelf -lz

VM       := selftests/vm
RUNVM    := $(VM)/run-vm.sh
INITRD   := $(BUILD)/vm/base.cpio.gz
VM_TIMEOUT ?= 600

CTL_SRCS  := $(wildcard ctl/*.c)
CTL_OBJS  := $(CTL_SRCS:ctl/%.c=$(BUILD)/ctl/%.o)
BPF_SRCS  := $(wildcard bpf/*.bpf.c)
BPF_OBJS  := $(BPF_SRCS:bpf/%.bpf.c=$(BUILD)/bpf/%.bpf.o)
BPF_SKELS := $(BPF_SRCS:bpf/%.bpf.c=$(BUILD)/bpf/%.skel.h)
PROG_SRCS := $(wildcard selftests/progs/*.c bench/progs/*.c)
PROGS     := $(addprefix $(BUILD)/progs/,$(notdir $(PROG_SRCS:.c=)))
MOD_SRCS  := $(wildcard module/*.c module/*.h module/uapi/*.h) module/Kbuild Kbuild
MODULE_KO := module/xprobes.ko
TEST_KO   := selftests/modules/xp_klp.ko

.PHONY: all deps kernel module test-modules ctl bpf progs initramfs check demo vm bench clean help

all: module test-modules bpf ctl progs

help:
	@sed -n '3,11p' Makefile

deps:
	@bash $(VM)/deps.sh
	@bash $(VM)/fetch-kernel.sh $(BUILD) $(KSERIES)

# The target kernel is fetched on first use if 'make deps' was not run.
$(KTREE)/.complete:
	@bash $(VM)/fetch-kernel.sh $(BUILD) $(KSERIES)
kernel: $(KTREE)/.complete

# --- module -----------------------------------------------------------------
module: $(MODULE_KO)
$(MODULE_KO): $(MOD_SRCS) | $(KTREE)/.complete
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

# Test-only modules (a livepatch), built the same way.
test-modules: $(TEST_KO)
$(TEST_KO): $(wildcard selftests/modules/*.c) selftests/modules/Kbuild | $(KTREE)/.complete
	$(MAKE) -C $(KDIR) M=$(CURDIR)/selftests/modules modules

# --- BPF (CO-RE, vmlinux.h from the target kernel's BTF) --------------------
$(BUILD)/bpf/vmlinux.h: | $(KTREE)/.complete
	@mkdir -p $(@D)
	$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@.tmp && mv $@.tmp $@

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) $(BUILD)/bpf/vmlinux.h
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_x86 -I$(BUILD)/bpf -Ibpf -Imodule/uapi \
		-c $< -o $@
	llvm-strip -g $@ 2>/dev/null || true

$(BUILD)/bpf/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

bpf: $(BPF_OBJS) $(BPF_SKELS)

# --- xprobectl ----------------------------------------------------------------
ctl: $(BUILD)/ctl/xprobectl
$(BUILD)/ctl/%.o: ctl/%.c $(wildcard ctl/*.h) module/uapi/xprobes.h $(BPF_SKELS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XCFLAGS) -I$(BUILD)/bpf -Ibpf -c $< -o $@
$(BUILD)/ctl/xprobectl: $(CTL_OBJS)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS_CTL)

# --- selftest helper programs -----------------------------------------------
progs: $(PROGS)
PROG_DEPS := $(wildcard selftests/progs/*.h) module/uapi/xprobes.h $(BPF_SKELS)
$(BUILD)/progs/%: selftests/progs/%.c $(PROG_DEPS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XCFLAGS) -I$(BUILD)/bpf -Ibpf -o $@ $< -lpthread -lbpf -lelf -lz
$(BUILD)/progs/%: bench/progs/%.c $(PROG_DEPS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XCFLAGS) -I$(BUILD)/bpf -Ibpf -o $@ $< -lpthread -lbpf -lelf -lz -lm

# --- VM -----------------------------------------------------------------------
initramfs: $(INITRD)
$(INITRD): all $(BUILD)/vm/ids.sh $(VM)/init $(wildcard bench/*.sh) $(VM)/mkinitramfs.sh $(VM)/guest-bins $(wildcard selftests/*.sh selftests/tests/*)
	@mkdir -p $(@D)
	@echo "  INITRAMFS $@"
	@bash $(VM)/mkinitramfs.sh $@ $(KMODDIR) \
		$(MODULE_KO)=xp/xprobes.ko $(TEST_KO)=xp/xp_klp.ko \
		$(BUILD)/ctl/xprobectl=xp/bin/xprobectl \
		$(foreach p,$(PROGS),$(p)=xp/bin/$(notdir $(p))) \
		$(foreach o,$(BPF_OBJS),$(o)=xp/bpf/$(notdir $(o))) \
		selftests=xp/selftests bench=xp/bench \
		$(BUILD)/vm/ids.sh=xp/selftests/ids.sh

$(BUILD)/vm/ids.sh: module/uapi/xprobes.h selftests/gen-ids.sh
	@mkdir -p $(@D)
	@sh selftests/gen-ids.sh $< > $@

vm: initramfs
	@bash $(RUNVM) --timeout $(VM_TIMEOUT) $(if $(VM_SHARE),--share $(VM_SHARE)) -- '$(CMD)'

check: deps
	@$(MAKE) --no-print-directory initramfs
	@bash selftests/check.sh

demo: deps
	@$(MAKE) --no-print-directory initramfs
	@bash $(RUNVM) --timeout $(VM_TIMEOUT) --script selftests/demo.sh

# Overhead experiments, in the VM; results land in build/bench (docs/experiments.md).
# XP_ICOUNT=0 (default) runs the guest on instruction-count time; XP_ICOUNT= for wall time.
bench: deps
	@$(MAKE) --no-print-directory initramfs
	@mkdir -p $(BUILD)/bench
	@XP_ICOUNT=$${XP_ICOUNT-0} bash $(RUNVM) --timeout 3000 --share $(BUILD)/bench --script bench/run.sh

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null
	-$(MAKE) -C $(KDIR) M=$(CURDIR)/selftests/modules clean 2>/dev/null
	rm -rf $(BUILD)/ctl $(BUILD)/bpf $(BUILD)/progs $(BUILD)/vm $(BUILD)/check
