# SPDX-License-Identifier: GPL-2.0
# xprobes: one entry point. See README.md.
#
#   make deps     install Debian packages, fetch the target kernel (image + headers)
#   make          module (against KDIR), xprobectl, BPF objects, selftest programs
#   make check    everything: build, boot the VM, run all selftests, summary line
#   make demo     boot the VM, load the module, show what xprobes does
#   make kunit    build the debug kernel (cached), run the module's KUnit suites in it
#   make check-debug   KUnit, selftests, stress and fuzz tests on the debug
#                 kernel (KASAN, lockdep, kmemleak), then a kmemleak scan
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
LDLIBS_CTL := -lnl-genl-3 -lnl-3 -lbpf -lelf -lz -lm

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
MOD_SRCS  := $(filter-out %.mod.c,$(wildcard module/*.c module/*.S module/*.h module/uapi/*.h)) module/Kbuild Kbuild
MODULE_KO := module/xprobes.ko
TEST_KO   := selftests/modules/xp_klp.ko

.PHONY: all deps kernel module test-modules ctl bpf progs initramfs check demo vm bench clean help \
	deps-debug debug-kernel debug-initramfs kunit check-debug

all: module test-modules bpf ctl progs

help:
	@sed -n '3,14p' Makefile

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

# Objects that use atomic exchange need BPF ISA v3 (kernel 5.12+).
BPF_CPU_metrics := -mcpu=v3
BPF_CPU_hookcount := -mcpu=v3
$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) $(BUILD)/bpf/vmlinux.h
	$(CLANG) -g -O2 -target bpf $(BPF_CPU_$*) -D__TARGET_ARCH_x86 -I$(BUILD)/bpf -Ibpf -Imodule/uapi \
		-c $< -o $@
	llvm-strip -g $@ 2>/dev/null || true

$(BUILD)/bpf/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

bpf: $(BPF_OBJS) $(BPF_SKELS)

# --- xprobectl ----------------------------------------------------------------
ctl: $(BUILD)/ctl/xprobectl
$(BUILD)/ctl/%.o: ctl/%.c $(wildcard ctl/*.h) module/uapi/xprobes.h $(BPF_SKELS) $(BUILD)/ctl/sysnames.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XCFLAGS) -I$(BUILD)/bpf -I$(BUILD)/ctl -Ibpf -c $< -o $@
# Syscall names by number, for xprobectl latency, from the libc's kernel headers.
SYSCALL_HDR ?= /usr/include/x86_64-linux-gnu/asm/unistd_64.h
$(BUILD)/ctl/sysnames.h: $(SYSCALL_HDR)
	@mkdir -p $(@D)
	awk '$$1 == "#define" && $$2 ~ /^__NR_/ { printf "\t[%d] = \"%s\",\n", $$3, substr($$2, 6) }' $< > $@.tmp && mv $@.tmp $@
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
# What both initramfs images carry besides the modules.
INITRD_FILES = $(BUILD)/ctl/xprobectl=xp/bin/xprobectl \
	$(foreach p,$(PROGS),$(p)=xp/bin/$(notdir $(p))) \
	$(foreach o,$(BPF_OBJS),$(o)=xp/bpf/$(notdir $(o))) \
	selftests=xp/selftests bench=xp/bench \
	$(BUILD)/vm/ids.sh=xp/selftests/ids.sh
INITRD_DEPS = all $(BUILD)/vm/ids.sh $(VM)/init $(wildcard bench/*.sh) $(VM)/mkinitramfs.sh \
	$(BUILD)/vm/guest-bins.present $(wildcard selftests/*.sh selftests/tests/* selftests/debug/*.sh selftests/debug/tests/*)

$(INITRD): $(INITRD_DEPS)
	@mkdir -p $(@D)
	@echo "  INITRAMFS $@"
	@bash $(VM)/mkinitramfs.sh $@ $(KMODDIR) \
		$(MODULE_KO)=xp/xprobes.ko $(TEST_KO)=xp/xp_klp.ko $(INITRD_FILES)

# Which of guest-bins this host has: rewritten only when that changes (make
# bench installs the servers), so the images follow without a rebuild each time.
$(BUILD)/vm/guest-bins.present: $(VM)/guest-bins FORCE
	@mkdir -p $(@D)
	@for b in $$(grep -v '^#' $<); do [ -x "$$b" ] && echo "$$b"; done > $@.tmp; \
	 cmp -s $@.tmp $@ || mv $@.tmp $@; rm -f $@.tmp
FORCE:

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
# BENCH_ONLY="hit-cost op-cost" runs only those parts (bench/run.sh names them),
# each part in a VM of its own (bench/vm.sh).
bench: deps
	@bash $(VM)/deps.sh bench
	@$(MAKE) --no-print-directory initramfs
	@BENCH_ONLY='$(BENCH_ONLY)' METRICS_PARTS='$(METRICS_PARTS)' bash bench/vm.sh $(BUILD)/bench

# --- debug kernel: KUnit, KASAN, lockdep, kmemleak (selftests/debug) ---------
# The module is built twice against it, plain and with its KUnit suites, each
# from a copy of the sources (Kbuild builds external modules in place).
DBG      := $(BUILD)/debug
DKDIR    := $(DBG)/obj
DKIMAGE  := $(DKDIR)/arch/x86/boot/bzImage
DINITRD  := $(DBG)/vm/base.cpio.gz
DMODS    := $(DBG)/mod/plain/module/xprobes.ko $(DBG)/mod/kunit/module/xprobes.ko
DTEST_KO := $(DBG)/mod/klp/xp_klp.ko

deps-debug:
	@bash $(VM)/deps.sh debug
debug-kernel: deps-debug
	@bash selftests/debug/build-kernel.sh $(BUILD)

$(DBG)/mod/%/module/xprobes.ko: $(MOD_SRCS) $(DBG)/.stamp
	@rm -rf $(DBG)/mod/$* && mkdir -p $(DBG)/mod/$*/module/uapi
	@cp Kbuild $(DBG)/mod/$*/
	@cp $(filter-out %.mod.c,$(wildcard module/*.c module/*.S module/*.h)) module/Kbuild $(DBG)/mod/$*/module/
	@cp module/uapi/*.h $(DBG)/mod/$*/module/uapi/
	$(MAKE) -C $(DKDIR) M=$(DBG)/mod/$* $(if $(filter kunit,$*),XPROBES_KUNIT=1) modules
$(DTEST_KO): $(wildcard selftests/modules/*.c) selftests/modules/Kbuild $(DBG)/.stamp
	@rm -rf $(@D) && mkdir -p $(@D)
	@cp selftests/modules/*.c selftests/modules/Kbuild $(@D)/
	$(MAKE) -C $(DKDIR) M=$(@D) modules

debug-initramfs: $(DINITRD)
$(DINITRD): $(INITRD_DEPS) $(DMODS) $(DTEST_KO)
	@mkdir -p $(@D)
	@echo "  INITRAMFS $@"
	@bash $(VM)/mkinitramfs.sh $@ $(DBG)/no-kmods \
		$(DBG)/mod/plain/module/xprobes.ko=xp/xprobes.ko \
		$(DBG)/mod/kunit/module/xprobes.ko=xp/xprobes-kunit.ko \
		$(DTEST_KO)=xp/xp_klp.ko $(INITRD_FILES)

kunit: deps debug-kernel
	@$(MAKE) --no-print-directory debug-initramfs
	@bash selftests/check.sh --debug kunit

check-debug: deps debug-kernel
	@$(MAKE) --no-print-directory debug-initramfs
	@bash selftests/check.sh --debug

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null
	-$(MAKE) -C $(KDIR) M=$(CURDIR)/selftests/modules clean 2>/dev/null
	rm -rf $(BUILD)/ctl $(BUILD)/bpf $(BUILD)/progs $(BUILD)/vm $(BUILD)/check $(DBG)/mod $(DBG)/vm
